"""What a type checker sees of the op surface: `tests/engine/test_typing.py` runs mypy on this
file, which is only checked, never run."""

from typing_extensions import assert_type

import minigrad as mg
from minigrad import Tensor
from minigrad.nn import Linear
from minigrad.nn import functional as F

x = mg.randn(2, 3)
assert_type(x, Tensor)
assert_type(x.sum(), Tensor)
assert_type(x.sum(axis=0, keepdims=True), Tensor)
assert_type(mg.exp(x), Tensor)
assert_type(F.softmax(x, -1), Tensor)
assert_type(x @ x.T, Tensor)
assert_type(x * 2 + 1, Tensor)
assert_type(2 - x, Tensor)
assert_type(x[0], Tensor)
assert_type(x.reshape(3, 2), Tensor)
assert_type(mg.where(x > 0, x, 0.0), Tensor)
assert_type(F.cross_entropy(x, mg.tensor([0, 1])), Tensor)
assert_type(mg.topk(x, 2), tuple[Tensor, Tensor])
assert_type(Linear(3, 2).eval(), Linear)  # a module's own class, for chaining
