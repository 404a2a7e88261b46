"""Hypothesis strategies made from the ops' declarative input specs (imports hypothesis: a
test dependency, the `test` extra; `import minigrad` never imports this module).

`cases(op)` draws one call of the op's function (`op_checks.public_function`): a `Case` of
positional and keyword arguments. A shape rule (one function per key of
`registry.SHAPE_RULES`) draws the shapes, axes, indices and integer arguments, leaving a
`Slot` where a tensor goes; the slots are then filled together with values in the spec's
range, a margin away from its kinks (pairwise apart when the spec
asks for distinct values). Arrays are NumPy float64 / bool / int64; the checks
(`op_checks.py`) turn them into tensors of the dtype and device they check.

A new shape rule is one strategy `rule(draw, spec) -> (args, kwargs)` with a `Slot` where each
tensor goes: inside minigrad, added to RULES here and described in
`minigrad/ops/registry.py`'s SHAPE_RULES; in user code, passed as `InputSpec(rule=...)`.
"""

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import strategies as st

from minigrad.ops.registry import SHAPE_RULES

MAX_SIDE = 4  # every axis has 1-4 elements ...
MAX_ELEMENTS = 32  # ... and a tensor at most 32: finite differences stay fast
MARGIN = 0.1  # distance kept from an op's kinks
INT_RANGE = 20  # integer tensors hold values in [-INT_RANGE, INT_RANGE]
Drawn = tuple[tuple, dict[str, Any]]  # what a shape rule draws: (args, kwargs), Slots in them


@dataclass(frozen=True)
class Slot:
    """A tensor to be filled: its shape and kind ("float", "bool" or "int")."""

    shape: tuple
    kind: str = "float"


@dataclass
class Case:
    """One call of the op's function, `(*args, **kwargs)`; arrays may sit inside tuples,
    lists and dicts."""

    args: tuple
    kwargs: dict

    def arrays(self) -> list[Any]:
        """Every array (or Slot) of the call, in the order `map_arrays` visits them."""
        found: list = []

        def visit(array):
            found.append(array)
            return array

        self.map_arrays(visit)
        return found

    def map_arrays(self, fn) -> tuple[Any, Any]:
        """(args, kwargs) with every array (or Slot) `a` replaced by `fn(a)`."""
        return _map(self.args, fn), _map(self.kwargs, fn)


def _map(value, fn):
    if isinstance(value, (np.ndarray, Slot)):
        return fn(value)
    if isinstance(value, tuple):
        return tuple(_map(v, fn) for v in value)
    if isinstance(value, list):
        return [_map(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: _map(v, fn) for k, v in value.items()}
    return value


# ----- shapes and axes -----------------------------------------------------------------------

@st.composite
def shapes(draw, min_ndim=0, max_ndim=4, max_elements=MAX_ELEMENTS) -> tuple[int, ...]:
    """0-4 axes of 1-4 elements, at most `max_elements` in all."""
    ndim = draw(st.integers(min_ndim, max_ndim))
    shape, budget = [], max_elements
    for _ in range(ndim):
        side = draw(st.integers(1, max(1, min(MAX_SIDE, budget))))
        shape.append(side)
        budget //= side
    return tuple(shape)


@st.composite
def broadcastable_to(draw, shape) -> tuple[int, ...]:
    """A shape that broadcasts to `shape`: some leading axes dropped, some axes set to 1."""
    kept = shape[draw(st.integers(0, len(shape))):]
    return tuple(1 if draw(st.booleans()) else n for n in kept)


@st.composite
def broadcasting_shapes(draw, count, max_ndim=4,
                        max_elements=MAX_ELEMENTS) -> list[tuple[int, ...]]:
    base = draw(shapes(max_ndim=max_ndim, max_elements=max_elements))
    return [draw(broadcastable_to(base)) for _ in range(count)]


def axis(ndim) -> st.SearchStrategy[int]:
    """One axis of `ndim` dimensions, negative or not."""
    return st.integers(-ndim, ndim - 1)


@st.composite
def axes(draw, ndim) -> int | tuple[int, ...] | None:
    """None, one axis, or a tuple of distinct axes (each maybe negative)."""
    if ndim == 0:
        return draw(st.sampled_from([None, ()]))
    kind = draw(st.sampled_from(["none", "int", "tuple"]))
    if kind == "none":
        return None
    if kind == "int":
        return draw(axis(ndim))
    chosen = draw(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim))
    return tuple(a - ndim if draw(st.booleans()) else a for a in chosen)


def _optional(strategy):
    return st.one_of(st.none(), strategy)


# ----- one strategy per shape rule: (args, kwargs) with Slots where tensors go ----------------

@st.composite
def unary(draw, spec) -> Drawn:
    return (Slot(draw(shapes(min_ndim=spec.min_ndim)), spec.dtype),), {}


@st.composite
def elementwise(draw, spec) -> Drawn:
    return tuple(Slot(s, spec.dtype) for s in draw(broadcasting_shapes(2))), {}


@st.composite
def shift(draw, spec) -> Drawn:
    values, amounts = draw(broadcasting_shapes(2))
    return (Slot(values, "int"), _ints(draw, amounts, 0, 7)), {}


@st.composite
def ternary(draw, spec) -> Drawn:
    return tuple(Slot(s, spec.dtype) for s in draw(broadcasting_shapes(3))), {}


@st.composite
def where(draw, spec) -> Drawn:
    condition, a, b = draw(broadcasting_shapes(3))
    return (Slot(condition, "bool"), Slot(a), Slot(b)), {}


@st.composite
def masked_fill(draw, spec) -> Drawn:
    shape = draw(shapes())
    return (Slot(shape), Slot(draw(broadcastable_to(shape)), "bool")), {}


@st.composite
def reduce(draw, spec) -> Drawn:
    shape = draw(shapes())
    return (Slot(shape, spec.dtype),), {"axis": draw(axes(len(shape))),
                                        "keepdims": draw(st.booleans())}


@st.composite
def axes_rule(draw, spec) -> Drawn:
    shape = draw(shapes())
    return (Slot(shape, spec.dtype),), {"axis": draw(axes(len(shape)))}


@st.composite
def arg_reduce(draw, spec) -> Drawn:
    shape = draw(shapes())
    chosen = draw(_optional(axis(len(shape)))) if shape else None
    return (Slot(shape),), {"axis": chosen, "keepdims": draw(st.booleans())}


@st.composite
def softmax_like(draw, spec) -> Drawn:
    shape = draw(shapes(min_ndim=1))
    kwargs = {"axis": draw(axis(len(shape)))}
    if spec.mask:
        kwargs["mask"] = draw(_optional(broadcastable_to(shape).map(lambda s: Slot(s, "bool"))))
    return (Slot(shape),), kwargs


@st.composite
def matmul(draw, spec) -> Drawn:
    batch_a, batch_b = draw(broadcasting_shapes(2, max_ndim=2, max_elements=4))
    m, n, p = (draw(st.integers(1, MAX_SIDE)) for _ in range(3))
    a = (n,) if draw(st.booleans()) else batch_a + (m, n)
    b = (n,) if draw(st.booleans()) else batch_b + (n, p)
    return (Slot(a), Slot(b)), {}


def _divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


@st.composite
def reshape(draw, spec) -> Drawn:
    shape = draw(shapes())
    remaining, target = math.prod(shape), []
    for _ in range(draw(st.integers(0, 3))):
        side = draw(st.sampled_from(_divisors(remaining)))
        target.append(side)
        remaining //= side
    target.append(remaining)
    if draw(st.booleans()):
        target[draw(st.integers(0, len(target) - 1))] = -1
    return (Slot(shape), tuple(target)), {}


@st.composite
def transpose(draw, spec) -> Drawn:
    shape = draw(shapes())
    ndim = len(shape)
    permutation = draw(st.permutations(range(ndim)))
    order = tuple(a - ndim if draw(st.booleans()) else a for a in permutation)
    return (Slot(shape), draw(st.sampled_from([None, order]))), {}


@st.composite
def swapaxes(draw, spec) -> Drawn:
    shape = draw(shapes(min_ndim=1))
    return (Slot(shape), draw(axis(len(shape))), draw(axis(len(shape)))), {}


@st.composite
def expand_dims(draw, spec) -> Drawn:
    shape = draw(shapes(max_ndim=3))
    return (Slot(shape), draw(axis(len(shape) + 1))), {}


@st.composite
def squeeze(draw, spec) -> Drawn:
    shape = list(draw(shapes(min_ndim=1)))
    ones = draw(st.lists(st.integers(0, len(shape) - 1), unique=True, min_size=1))
    for a in ones:
        shape[a] = 1
    chosen = draw(st.sampled_from([None, ones[0], ones[0] - len(shape), tuple(ones)]))
    return (Slot(tuple(shape)),), {"axis": chosen}


@st.composite
def broadcast_to(draw, spec) -> Drawn:
    target = draw(shapes())
    return (Slot(draw(broadcastable_to(target))), target), {}


@st.composite
def flatten(draw, spec) -> Drawn:
    shape = draw(shapes())
    if not shape:
        return (Slot(shape),), {}
    start = draw(st.integers(0, len(shape) - 1))
    end = draw(st.integers(start, len(shape) - 1))
    return (Slot(shape),), {"start_dim": start - len(shape) * draw(st.booleans()),
                            "end_dim": end - len(shape) * draw(st.booleans())}


@st.composite
def unflatten(draw, spec) -> Drawn:
    shape = draw(shapes(min_ndim=1))
    chosen = draw(axis(len(shape)))
    length, sizes = shape[chosen], list[int]()
    while length > 1 and len(sizes) < 2:
        side = draw(st.sampled_from(_divisors(length)))
        sizes.append(side)
        length //= side
    sizes.append(length)
    if draw(st.booleans()):
        sizes[draw(st.integers(0, len(sizes) - 1))] = -1
    return (Slot(shape), chosen, tuple(sizes)), {}


@st.composite
def repeat(draw, spec) -> Drawn:
    shape = draw(shapes(max_ndim=3, max_elements=8))
    counts = draw(st.lists(st.integers(0, 3), min_size=len(shape), max_size=len(shape) + 1))
    return (Slot(shape), tuple(counts)), {}


@st.composite
def repeat_interleave(draw, spec) -> Drawn:
    shape = draw(shapes(min_ndim=1, max_elements=12))
    chosen = draw(_optional(axis(len(shape))))
    length = math.prod(shape) if chosen is None else shape[chosen]
    repeats = draw(st.one_of(st.integers(0, 3), st.lists(
        st.integers(0, 3), min_size=length, max_size=length).map(np.array)))
    return (Slot(shape), repeats), {"axis": chosen}


@st.composite
def roll(draw, spec) -> Drawn:
    shape = draw(shapes(min_ndim=1))
    if draw(st.booleans()):
        return (Slot(shape), draw(st.integers(-5, 5))), {"axis": None}
    chosen = draw(st.lists(st.integers(0, len(shape) - 1), min_size=1, max_size=len(shape),
                           unique=True))
    shifts = tuple(draw(st.integers(-5, 5)) for _ in chosen)
    if len(chosen) == 1 and draw(st.booleans()):
        return (Slot(shape), shifts[0]), {"axis": chosen[0]}
    return (Slot(shape), shifts), {"axis": tuple(chosen)}


@st.composite
def meshgrid(draw, spec) -> Drawn:
    count = draw(st.integers(1, 3))
    pieces = [Slot((draw(st.integers(1, 3)),)) for _ in range(count)]
    return (pieces,), {"indexing": draw(st.sampled_from(["ij", "xy"]))}


@st.composite
def unfold(draw, spec) -> Drawn:
    shape = draw(shapes(min_ndim=1))
    chosen = draw(axis(len(shape)))
    size = draw(st.integers(1, shape[chosen]))
    return (Slot(shape), chosen, size, draw(st.integers(1, 3))), {}


@st.composite
def concatenate(draw, spec) -> Drawn:
    shape = list(draw(shapes(min_ndim=1, max_elements=12)))
    chosen = draw(axis(len(shape)))
    pieces = []
    for _ in range(draw(st.integers(1, 3))):
        shape[chosen] = draw(st.integers(1, 3))
        pieces.append(Slot(tuple(shape)))
    return (pieces,), {"axis": chosen}


@st.composite
def stack(draw, spec) -> Drawn:
    shape = draw(shapes(max_ndim=3, max_elements=12))
    pieces = [Slot(shape) for _ in range(draw(st.integers(1, 3)))]
    return (pieces,), {"axis": draw(axis(len(shape) + 1))}


@st.composite
def split(draw, spec) -> Drawn:
    shape = draw(shapes(min_ndim=1))
    chosen = draw(axis(len(shape)))
    length = shape[chosen]
    sections = st.sampled_from(_divisors(length))
    points = st.lists(st.integers(0, length), max_size=3).map(sorted)
    return (Slot(shape), draw(st.one_of(sections, points))), {"axis": chosen}


@st.composite
def _slice(draw, size):
    bound = st.one_of(st.none(), st.integers(-size - 1, size + 1))
    return slice(draw(bound), draw(bound), draw(st.sampled_from([None, 1, 2, -1, -2])))


@st.composite
def index_for(draw, shape) -> tuple[Any, ...]:
    """An index into an array of `shape`: ints, slices, None and Ellipsis, with integer arrays
    (of one shape, so they broadcast; repeats likely) or one boolean array over 1-2 axes."""
    advanced = draw(st.sampled_from(["basic", "integer", "boolean"]))
    array_shape = draw(shapes(min_ndim=1, max_ndim=2, max_elements=6))
    covered = draw(st.integers(0, len(shape)))
    parts, position = [], 0
    while position < covered:
        size = shape[position]
        kinds = ["int", "slice", "array"] if advanced == "integer" else ["int", "slice"]
        if advanced == "boolean":
            kinds.append("boolean")
        kind = draw(st.sampled_from(kinds))
        if kind == "int":
            parts.append(draw(st.integers(-size, size - 1)))
        elif kind == "slice":
            parts.append(draw(_slice(size)))
        elif kind == "array":
            values = draw(st.lists(st.integers(-size, size - 1), min_size=math.prod(array_shape),
                                   max_size=math.prod(array_shape)))
            parts.append(np.array(values, dtype=np.int64).reshape(array_shape))
        else:
            width = draw(st.integers(1, min(2, covered - position)))
            mask_shape = shape[position:position + width]
            values = draw(st.lists(st.booleans(), min_size=math.prod(mask_shape),
                                   max_size=math.prod(mask_shape)))
            parts.append(np.array(values, dtype=bool).reshape(mask_shape))
            advanced = "basic"  # one boolean array at most
            position += width - 1
        position += 1
    if draw(st.booleans()):
        parts.append(Ellipsis)  # the axes left over (after the covered ones)
    for _ in range(draw(st.integers(0, 2))):
        parts.insert(draw(st.integers(0, len(parts))), None)
    return tuple(parts)


@st.composite
def index(draw, spec) -> Drawn:
    shape = draw(shapes())
    return (Slot(shape), draw(index_for(shape))), {}


@st.composite
def index_add(draw, spec) -> Drawn:
    shape = draw(shapes())
    chosen = draw(index_for(shape))
    return (Slot(np.empty(shape)[chosen].shape), chosen, shape), {}


@st.composite
def topk(draw, spec) -> Drawn:
    shape = draw(shapes(min_ndim=1))
    chosen = draw(axis(len(shape)))
    return (Slot(shape), draw(st.integers(1, shape[chosen]))), {"axis": chosen}


def _ints(draw, shape, low, high):
    values = draw(st.lists(st.integers(low, high), min_size=math.prod(shape),
                           max_size=math.prod(shape)))
    return np.array(values, dtype=np.int64).reshape(shape)


@st.composite
def gather(draw, spec) -> Drawn:
    shape = draw(shapes(min_ndim=1))
    chosen = draw(axis(len(shape)))
    index_shape = tuple(draw(st.integers(1, MAX_SIDE)) if a == chosen % len(shape) else
                        draw(st.integers(1, n)) for a, n in enumerate(shape))
    return (Slot(shape), chosen, _ints(draw, index_shape, 0, shape[chosen] - 1)), {}


@st.composite
def scatter(draw, spec) -> Drawn:
    shape = draw(shapes(min_ndim=1))
    chosen = draw(axis(len(shape))) % len(shape)
    index_shape = tuple(draw(st.integers(1, n)) for n in shape)
    rows = np.moveaxis(np.empty(index_shape, np.int64), chosen, -1)
    flat = rows.reshape(-1, rows.shape[-1])
    for row in flat:  # each position written once: distinct targets along the axis
        row[:] = draw(st.permutations(range(shape[chosen])))[:len(row)]
    index = np.moveaxis(flat.reshape(rows.shape), -1, chosen)
    return (Slot(shape), chosen, index, Slot(index_shape)), {}


@st.composite
def scatter_add(draw, spec) -> Drawn:
    shape = draw(shapes(min_ndim=1))
    chosen = draw(axis(len(shape)))
    index_shape = tuple(draw(st.integers(1, n)) for n in shape)
    index = _ints(draw, index_shape, 0, shape[chosen] - 1)
    return (Slot(shape), chosen, index, Slot(index_shape)), {}


@st.composite
def diagonal(draw, spec) -> Drawn:
    shape = draw(shapes(min_ndim=2))
    first, second = draw(st.lists(st.integers(0, len(shape) - 1), min_size=2, max_size=2,
                                  unique=True))
    return (Slot(shape),), {"offset": draw(st.integers(-2, 2)),
                            "axis1": first - len(shape) * draw(st.booleans()),
                            "axis2": second}


@st.composite
def diag(draw, spec) -> Drawn:
    shape = draw(shapes(min_ndim=1, max_ndim=2))
    return (Slot(shape),), {"diagonal": draw(st.integers(-2, 2))}


@st.composite
def one_hot(draw, spec) -> Drawn:
    ids = _ints(draw, draw(shapes(min_ndim=1, max_ndim=2, max_elements=8)), 0, 3)
    return (ids,), {"num_classes": draw(st.sampled_from([-1, 4, 6]))}


@st.composite
def pad(draw, spec) -> Drawn:
    shape = draw(shapes(min_ndim=1, max_elements=12))
    mode = draw(st.sampled_from(["constant", "reflect", "replicate", "circular"]))
    widths = []
    for n in shape[::-1][:draw(st.integers(1, min(len(shape), 3)))]:
        top = n - 1 if mode == "reflect" else 2
        widths += [draw(st.integers(0, top)), draw(st.integers(0, top))]
    kwargs = {"mode": mode}
    if mode == "constant":
        kwargs["value"] = draw(st.sampled_from([0.0, -1.5]))
    return (Slot(shape), tuple(widths)), kwargs


EINSUM_EQUATIONS = ("ij,jk->ik", "bij,bjk->bik", "i,j->ij", "i,i->", "ij->i", "ij->ji",
                    "bi,ij,bj->b", "ij,ij->ij", "ijk->kj", "ij,j")


@st.composite
def einsum(draw, spec) -> Drawn:
    equation = draw(st.sampled_from(EINSUM_EQUATIONS))
    sizes = {letter: draw(st.integers(1, 3)) for letter in "bijk"}
    operands = equation.split("->")[0].split(",")
    return (equation, *(Slot(tuple(sizes[c] for c in term)) for term in operands)), {}


@st.composite
def _convolution_geometry(draw):
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = draw(st.sampled_from([1, 2, (1, 2)]))
    padding = draw(st.sampled_from([0, 1, (0, 1)]))
    dilation = draw(st.sampled_from([1, 2]))
    return kernel, stride, padding, dilation


def _pairs(value):
    return (value, value) if isinstance(value, (int, float)) else value


@st.composite
def conv2d(draw, spec) -> Drawn:
    kernel, stride, padding, dilation = draw(_convolution_geometry())
    groups = draw(st.sampled_from([1, 2]))
    n, c, o = draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 2))
    needed = [max(1, dilation * (k - 1) + 1 - 2 * p) for k, p in zip(kernel, _pairs(padding))]
    size = tuple(draw(st.integers(n, max(n, 4))) for n in needed)
    bias = draw(_optional(st.just(Slot((o * groups,)))))
    return ((Slot((n, c * groups) + size), Slot((o * groups, c) + kernel)),
            {"bias": bias, "stride": stride, "padding": padding, "dilation": dilation,
             "groups": groups})


@st.composite
def conv_transpose2d(draw, spec) -> Drawn:
    kernel, stride, padding, dilation = draw(_convolution_geometry())
    n, c, o = draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 2))
    size = (draw(st.integers(2, 3)), draw(st.integers(2, 3)))
    extra = tuple(draw(st.integers(0, s - 1)) for s in _pairs(stride))
    fits = all((n - 1) * s - 2 * p + dilation * (k - 1) + 1 >= 1 for n, s, p, k in zip(
        size, _pairs(stride), _pairs(padding), kernel))
    padding = padding if fits else 0
    groups = draw(st.sampled_from([1, 2]))
    bias = draw(_optional(st.just(Slot((o * groups,)))))
    return ((Slot((n, c * groups) + size), Slot((c * groups, o) + kernel)),
            {"bias": bias, "stride": stride, "padding": padding, "output_padding": extra,
             "dilation": dilation, "groups": groups})


@st.composite
def pool2d(draw, spec) -> Drawn:
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    padding = tuple(draw(st.integers(0, k // 2)) for k in kernel)
    size = tuple(draw(st.integers(max(1, k - 2 * p), 4)) for k, p in zip(kernel, padding))
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 2))) + size
    stride = draw(st.sampled_from([None, 1, 2]))
    return (Slot(shape), kernel), {"stride": stride, "padding": padding}


@st.composite
def interpolate(draw, spec) -> Drawn:
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 4)),
             draw(st.integers(1, 4)))
    resize: dict
    if draw(st.booleans()):
        resize = {"size": (draw(st.integers(1, 5)), draw(st.integers(1, 5)))}
    else:
        resize = {"scale_factor": draw(st.sampled_from([2, 1.5, (2.0, 3.0), 0.5]))}
        if min(int(n * f) for n, f in zip(shape[2:], _pairs(resize["scale_factor"]))) < 1:
            resize = {"scale_factor": 2}
    return (Slot(shape),), {**resize, "mode": draw(st.sampled_from(["nearest", "bilinear"]))}


@st.composite
def layer_norm(draw, spec) -> Drawn:
    shape = draw(shapes(min_ndim=1))
    normalized = shape[len(shape) - draw(st.integers(1, min(2, len(shape)))):]
    affine = _optional(st.just(Slot(normalized)))
    return (Slot(shape), normalized), {"weight": draw(affine), "bias": draw(affine)}


@st.composite
def cross_entropy(draw, spec) -> Drawn:
    batch = draw(shapes(max_ndim=2, max_elements=8))
    classes = draw(st.integers(1, MAX_SIDE))
    ignore_index = draw(st.sampled_from([None, 0, -100]))
    choices = list(range(classes)) + ([] if ignore_index is None else [ignore_index])
    target = draw(st.lists(st.sampled_from(choices), min_size=math.prod(batch),
                           max_size=math.prod(batch)))
    return ((Slot(batch + (classes,)), np.array(target, dtype=np.int64).reshape(batch)),
            {"ignore_index": ignore_index})


@st.composite
def attention(draw, spec) -> Drawn:
    batch_q, batch_k, batch_v = draw(broadcasting_shapes(3, max_ndim=2, max_elements=4))
    q_len, k_len, d, d_v = (draw(st.integers(1, 3)) for _ in range(4))
    kwargs = {}
    if spec.mask:
        scores = np.broadcast_shapes(batch_q, batch_k) + (q_len, k_len)
        kwargs["mask"] = draw(_optional(broadcastable_to(scores).map(lambda s: Slot(s, "bool"))))
    return (Slot(batch_q + (q_len, d)), Slot(batch_k + (k_len, d)),
            Slot(batch_v + (k_len, d_v))), kwargs


@st.composite
def embedding(draw, spec) -> Drawn:
    rows, dim = draw(st.integers(1, 5)), draw(st.integers(1, MAX_SIDE))
    ids_shape = draw(shapes(max_ndim=2, max_elements=8))
    ids = draw(st.lists(st.integers(0, rows - 1), min_size=math.prod(ids_shape),
                        max_size=math.prod(ids_shape)))
    return (np.array(ids, dtype=np.int64).reshape(ids_shape), Slot((rows, dim))), {}


@st.composite
def linear(draw, spec) -> Drawn:
    batch = draw(shapes(max_ndim=2, max_elements=8))
    n_in, n_out = draw(st.integers(1, MAX_SIDE)), draw(st.integers(1, MAX_SIDE))
    bias = draw(_optional(st.just(Slot((n_out,)))))
    return (Slot(batch + (n_in,)), Slot((n_out, n_in))), {"bias": bias}


@st.composite
def layer_norm_input_gradient(draw, spec) -> Drawn:
    shape = draw(shapes(min_ndim=1))
    n_axes = draw(st.integers(1, len(shape)))
    rstd = shape[:-n_axes] + (1,) * n_axes
    return (Slot(shape), Slot(shape), Slot(rstd)), {"n_axes": n_axes}


@st.composite
def cross_entropy_backward(draw, spec) -> Drawn:
    batch = draw(shapes(max_ndim=2, max_elements=8))
    classes = draw(st.integers(1, MAX_SIDE))
    target = draw(st.lists(st.integers(0, classes - 1), min_size=math.prod(batch),
                           max_size=math.prod(batch)))
    return ((Slot(batch + (classes,)), Slot(batch + (1,)),
             np.array(target, dtype=np.int64).reshape(batch)), {})


RULES = {
    "unary": unary, "elementwise": elementwise, "ternary": ternary, "shift": shift, "where": where,
    "masked_fill": masked_fill,
    "reduce": reduce, "axes": axes_rule, "arg-reduce": arg_reduce, "softmax-like": softmax_like,
    "matmul": matmul,
    "reshape": reshape, "transpose": transpose, "swapaxes": swapaxes,
    "expand_dims": expand_dims, "squeeze": squeeze, "broadcast_to": broadcast_to,
    "flatten": flatten, "unflatten": unflatten, "repeat": repeat,
    "repeat_interleave": repeat_interleave, "roll": roll, "meshgrid": meshgrid, "unfold": unfold,
    "concatenate": concatenate, "stack": stack, "split": split, "index": index,
    "index_add": index_add, "topk": topk, "gather": gather, "scatter": scatter,
    "scatter_add": scatter_add, "diagonal": diagonal, "diag": diag, "one_hot": one_hot,
    "pad": pad, "einsum": einsum, "conv2d": conv2d, "conv_transpose2d": conv_transpose2d,
    "pool2d": pool2d, "interpolate": interpolate, "layer_norm": layer_norm,
    "cross_entropy": cross_entropy, "attention": attention, "embedding": embedding,
    "linear": linear, "layer_norm_input_gradient": layer_norm_input_gradient,
    "cross_entropy_backward": cross_entropy_backward,
}
assert RULES.keys() == SHAPE_RULES.keys(), "every shape rule needs a strategy, and no more"


# ----- values ---------------------------------------------------------------------------------

def float_values(spec, count, rng) -> np.ndarray:
    """`count` floats in [low, high], at least MARGIN from every kink; with `distinct`, also
    pairwise apart (a shuffled grid with jitter): no ties for max, min or sorting."""
    if spec.distinct:
        cells = rng.permutation(count) + rng.uniform(0.25, 0.75, count)
        values = spec.low + (spec.high - spec.low) * cells / max(count, 1)
    else:
        values = rng.uniform(spec.low, spec.high, count)
    for kink in spec.kinks:
        near = np.abs(values - kink) < MARGIN
        values[near] = kink + np.where(values[near] >= kink, MARGIN, -MARGIN)
    return values


def _fill(args, kwargs, spec, seed):
    """Slots -> arrays: floats drawn together (distinct across every input), bools at random."""
    rng = np.random.default_rng(seed)
    drawn = Case(args, kwargs)
    floats = [s for s in drawn.arrays() if isinstance(s, Slot) and s.kind == "float"]
    sizes = [math.prod(s.shape) for s in floats]
    values = iter(np.split(float_values(spec, sum(sizes), rng), np.cumsum(sizes)[:-1]))

    def fill(slot):
        if not isinstance(slot, Slot):
            return slot
        if slot.kind == "bool":
            return np.asarray(rng.random(slot.shape) < 0.5)
        if slot.kind == "int":
            return np.asarray(rng.integers(-INT_RANGE, INT_RANGE + 1, slot.shape))
        return next(values).reshape(slot.shape)

    return Case(*drawn.map_arrays(fill))


@st.composite
def cases(draw, op) -> Case:
    """One call of `op`, drawn from its spec (see the module docstring)."""
    spec = op.spec
    rule = RULES[spec.rule] if isinstance(spec.rule, str) else spec.rule
    args, kwargs = draw(rule(spec))
    for name, choices in spec.options.items():
        kwargs[name] = draw(st.sampled_from(choices))
    return _fill(args, kwargs, spec, draw(st.integers(0, 2**32 - 1)))
