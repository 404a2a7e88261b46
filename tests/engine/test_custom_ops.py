"""Ops defined in user code: `mg.Function` and `mg.op`, keyword parameters, needs_input_grad,
`mg.testing.check_op` (the built-in ops' property checks on a user's op), and the core
package importing no test library."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import BuiltinFunction
from minigrad.errors import GradcheckError, OpDefinitionError

ROOT = Path(__file__).resolve().parents[2]


class Scale(mg.Function):
    """x · factor, the factor a keyword parameter."""

    def forward(self, x, factor=1.0):
        self.factor = factor
        return x * factor

    def backward(self, grad):
        return grad * self.factor  # a bare Tensor: accepted for a one-input op


class WeightedSum(mg.Function):
    """a · w + b, counting which gradients backward was asked for."""

    asked = []

    def forward(self, a, b, w=2.0):
        self.w = w
        return a * w + b

    def backward(self, grad):
        WeightedSum.asked.append(self.needs_input_grad)
        need_a, need_b = self.needs_input_grad
        return (grad * self.w if need_a else None, grad if need_b else None)


def test_keyword_parameters_reach_forward_and_the_class_name_is_the_default_name():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = Scale.apply(x, factor=3.0)
    y.sum().backward()
    np.testing.assert_array_equal(y.numpy(), [3.0, 6.0])
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])
    assert y.grad_fn.name == "Scale"


def test_a_positional_number_for_a_user_op_says_to_pass_it_by_keyword():
    x = mg.tensor([1.0, 2.0])
    with pytest.raises(OpDefinitionError, match=r"Scale: positional argument 1 is a float.*"
                                                r"keyword"):
        Scale.apply(x, 3.0)


def test_builtin_ops_keep_numpy_semantics_for_numbers():
    x = mg.tensor([1.0, 2.0])
    np.testing.assert_array_equal((x * 2).numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(mg.add(x, 2.0).numpy(), [3.0, 4.0])
    np.testing.assert_array_equal((1 - x).numpy(), [0.0, -1.0])


def test_needs_input_grad_lets_backward_skip_gradients():
    WeightedSum.asked.clear()
    a, b = mg.tensor([1.0], requires_grad=True), mg.tensor([5.0])
    WeightedSum.apply(a, b, w=4.0).sum().backward()
    assert WeightedSum.asked == [(True, False)]
    np.testing.assert_array_equal(a.grad.numpy(), [4.0])


def test_a_declared_user_op_gets_a_function_and_no_place_in_minigrad():
    @mg.op(reference=lambda x, factor=1.0: x * factor, spec=mg.InputSpec("unary"))
    class Twice(mg.Function):
        def forward(self, x, factor=2.0):
            self.factor = factor
            return x * factor

        def backward(self, grad):
            return (grad * self.factor,)

    assert Twice.op.call(mg.tensor([1.5])).item() == 3.0
    assert Twice.op.namespace is None and not hasattr(mg, "Twice")
    assert Twice.op not in mg.ops.registry.ops()


def test_the_softplus_example_runs_and_passes_check_op(example_script, capsys):
    example = example_script("custom_op")
    example.main(["--examples", "10"])  # prints its values, then runs check_op
    assert "check_op: values, gradients" in capsys.readouterr().out
    mg.testing.check_op(example.Softplus, max_examples=15)  # as a user's own test would
    x = mg.tensor([0.0, 1.0], requires_grad=True)
    example.softplus(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 1 / (1 + np.exp(-x.numpy())), rtol=1e-6)


class WrongSquare(mg.Function):
    def forward(self, x):
        return x * x

    def backward(self, grad):
        return (grad * 3 * self.inputs[0],)  # 3x instead of 2x


def test_check_op_finds_a_wrong_backward_of_an_undeclared_op():
    with pytest.raises(GradcheckError, match="gradient of input 0"):
        mg.testing.check_op(WrongSquare, mg.InputSpec("unary"), lambda x: x * x,
                            max_examples=10)


def test_check_op_finds_a_forward_that_disagrees_with_its_reference():
    with pytest.raises(AssertionError, match="WrongSquare"):
        mg.testing.check_op(WrongSquare, mg.InputSpec("unary"), lambda x: x * x + 1,
                            max_examples=10)


def test_importing_minigrad_imports_no_test_library():
    code = ("import sys, minigrad; "
            "print(sorted(m for m in ('hypothesis', 'pytest') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.stdout.strip() == "[]"


class RowDot(mg.Function):
    """Row-wise dot products of two (n, 3) tensors: no built-in shape rule draws these."""

    def forward(self, a, b):
        return (a * b).sum(axis=-1)

    def backward(self, grad):
        a, b = self.inputs
        column = grad.reshape(grad.shape + (1,))
        return column * b, column * a


def test_check_op_takes_a_shape_rule_of_its_own():
    from hypothesis import strategies as st

    from minigrad.testing.strategies import Slot

    @st.composite
    def pair_of_rows(draw, spec):
        n = draw(st.integers(1, 4))
        return (Slot((n, 3)), Slot((n, 3))), {}

    mg.testing.check_op(RowDot, mg.InputSpec(pair_of_rows),
                        reference=lambda a, b: (a * b).sum(axis=-1), max_examples=10)


def test_check_op_without_hypothesis_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "hypothesis", None)  # import hypothesis raises ImportError
    with pytest.raises(ImportError, match=r"check_op needs hypothesis.*'testing' extra"):
        mg.testing.check_op(WrongSquare, mg.InputSpec("unary"), lambda x: x * x)


def test_the_generated_function_has_forwards_parameters():
    import inspect

    @mg.op(reference=None, random=True, spec=mg.InputSpec("unary"))
    class Many(mg.Function):
        def forward(self, x, *rest, scale, shift=0.0):
            return x * scale + shift

        def backward(self, grad):
            return (grad * self.scale,) + (None,) * (len(self.inputs) - 1)

    call = Many.op.call
    assert str(inspect.signature(call)) == "(x, *rest, scale, shift=0.0)"
    x = mg.tensor([1.0, 2.0])
    assert call(x, x, scale=2.0, shift=1.0).tolist() == [3.0, 5.0]


def test_a_user_op_taking_a_tensor_method_name_is_refused_unless_it_overrides():
    spec = mg.InputSpec("unary")
    with pytest.raises(OpDefinitionError, match=r"op 'total': Tensor already has 'sum'.*"
                                                r"overrides=True"):
        @mg.op(name="total", method="sum", reference=np.sum, spec=spec)
        class Total(mg.Function):
            def forward(self, x):
                return x.sum() * 0

            def backward(self, grad):
                return grad

    with pytest.raises(OpDefinitionError, match=r"Tensor already has '__add__'"):
        @mg.op(reference=np.negative, spec=spec, operators=("__add__",))
        class Plus(mg.Function):
            def forward(self, x):
                return x

            def backward(self, grad):
                return grad

    assert mg.tensor([1.0, 2.0]).sum().item() == 3.0  # the engine's own sum is untouched


def test_a_user_op_may_override_a_method_when_it_says_so(monkeypatch):
    monkeypatch.setattr(mg.Tensor, "cube", None, raising=False)
    monkeypatch.delattr(mg.Tensor, "cube")  # restored (absent) after the test

    @mg.op(method="cube", reference=lambda x: x ** 3, spec=mg.InputSpec("unary"))
    class Cube(mg.Function):
        def forward(self, x):
            return x ** 3

        def backward(self, grad):
            return grad * 3 * self.inputs[0] ** 2

    assert mg.tensor([2.0]).cube().item() == 8.0
    with pytest.raises(OpDefinitionError, match="'cube'"):
        @mg.op(name="cube2", method="cube", reference=lambda x: x ** 3,
               spec=mg.InputSpec("unary"))
        class Cube2(Cube):
            pass

    @mg.op(name="cube3", method="cube", reference=lambda x: x ** 3, spec=mg.InputSpec("unary"),
           overrides=True)
    class Cube3(Cube):
        def forward(self, x):
            return x ** 3 + 1

    assert mg.tensor([2.0]).cube().item() == 9.0


def test_a_function_defining_init_is_refused_where_it_is_defined():
    with pytest.raises(OpDefinitionError, match=r"Scaled: a Function defines no __init__.*"
                                                r"keyword arguments of forward"):
        class Scaled(mg.Function):
            def __init__(self, factor):
                self.factor = factor


def test_a_function_defining_apply_is_refused_and_each_op_class_has_its_own():
    with pytest.raises(OpDefinitionError, match=r"^Doubled: a Function defines no apply .*"
                                                r"wrap MyOp.apply in a function$"):
        class Doubled(mg.Function):
            @classmethod
            def apply(cls, x):
                return super().apply(x * 2)

    class Twice(mg.Function):
        def forward(self, x):
            return 2 * x

        def backward(self, grad):
            return (2 * grad,)

    class Thrice(Twice):  # a subclass runs its own forward, as it would with a classmethod
        def forward(self, x):
            return 3 * x

    x = mg.tensor([1.0, 2.0], requires_grad=True)
    assert Twice.apply(x).tolist() == [2.0, 4.0] and Thrice.apply(x).tolist() == [3.0, 6.0]
    assert type(Thrice.apply(x).grad_fn) is Thrice


class Cube(mg.Function):
    """x³, with both backwards: each call noted, so a test sees which one the engine chose."""

    called: list[str] = []

    def forward(self, x):
        return x ** 3

    def backward_arrays(self, grad):
        Cube.called.append("backward_arrays")
        return (grad * 3 * self.inputs[0].data ** 2,)

    def backward(self, grad):
        Cube.called.append("backward")
        x = self.inputs[0]
        return grad * 3 * x * x


def test_the_engine_calls_backward_arrays_when_not_recorded_and_backward_when_recorded():
    x = mg.tensor([1.0, -2.0, 0.5], requires_grad=True)
    Cube.called.clear()
    (first,) = mg.grad(Cube.apply(x).sum(), [x])
    assert Cube.called == ["backward_arrays"]
    np.testing.assert_allclose(first.numpy(), [3.0, 12.0, 0.75])
    Cube.called.clear()
    (recorded,) = mg.grad(Cube.apply(x).sum(), [x], create_graph=True)
    assert Cube.called == ["backward"]
    (second,) = mg.grad(recorded.sum(), [x])  # d²/dx² x³ = 6x, through the recorded backward
    np.testing.assert_allclose(second.numpy(), [6.0, -12.0, 3.0])


def test_a_backward_arrays_returning_tensors_or_too_few_gradients_is_refused():
    class Twice(mg.Function):
        def forward(self, a, b):
            return 2 * a + b

        def backward_arrays(self, grad):
            return (grad * 2,)  # one gradient for two inputs

        def backward(self, grad):
            return grad * 2, grad

    class Half(mg.Function):
        def forward(self, x):
            return x / 2

        def backward_arrays(self, grad):
            return (mg.tensor(grad / 2),)

        def backward(self, grad):
            return grad / 2

    a, b = mg.tensor([1.0], requires_grad=True), mg.tensor([2.0], requires_grad=True)
    with pytest.raises(OpDefinitionError, match="Twice: backward_arrays returned 1 gradients "
                                                "for 2 inputs"):
        Twice.apply(a, b).sum().backward()
    with pytest.raises(OpDefinitionError, match="Half: backward_arrays returned a Tensor"):
        Half.apply(a).sum().backward()


class CopiedRelu(BuiltinFunction):
    """minigrad/ops/elementwise.py's Relu, copied into this (user) module."""

    name = "relu"

    def forward(self, x):
        return self.backend.kernels.relu(x)

    def backward_arrays(self, grad):
        return (self.backend.kernels.relu_backward(grad, self.inputs[0].data),)

    def backward(self, grad):
        return (grad * self.constant(self.inputs[0].data > 0),)


def test_an_op_class_copied_into_user_code_behaves_as_the_builtin():
    """Its base class, not the module it is defined in, decides its treatment: numbers as
    inputs, no per-call checks, the same values and gradients as minigrad's own."""
    assert CopiedRelu.numbers_as_inputs and not CopiedRelu.checked
    assert CopiedRelu.forward is vars(CopiedRelu)["forward"]  # not wrapped by a check
    from minigrad.ops.elementwise import Relu

    assert (CopiedRelu.numbers_as_inputs, CopiedRelu.checked) == \
        (Relu.numbers_as_inputs, Relu.checked)

    class CopiedMultiply(BuiltinFunction):  # minigrad's Multiply, copied
        name = "multiply"

        def forward(self, a, b):
            return a * b

        def backward(self, grad):
            a, b = self.inputs
            return grad * b, grad * a

    # a number among the inputs becomes a constant, as for `x * 2`
    np.testing.assert_array_equal(CopiedMultiply.apply(mg.tensor([1.0, -2.0]), 2).numpy(),
                                  [2.0, -4.0])
    values = np.array([-1.0, 0.5, 2.0])
    x, y = mg.tensor(values, requires_grad=True), mg.tensor(values, requires_grad=True)
    CopiedRelu.apply(x).sum().backward()
    Relu.apply(y).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.grad.numpy())
    (twice,) = mg.grad(CopiedRelu.apply(x).sum(), [x], create_graph=True)
    np.testing.assert_array_equal(twice.numpy(), [0.0, 1.0, 1.0])
