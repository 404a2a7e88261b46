"""Shape ops: reshape, transpose, broadcast, concatenate, stack, split; views where NumPy allows."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd import BuiltinFunction
from ..backend import get_backend
from ..errors import ShapeError
from ..tensor import Tensor
from .indexing import GetItem
from .reduce import normalize_axes
from .registry import InputSpec, op


class Reshape(BuiltinFunction):
    name = "reshape"

    def forward(self, x, shape=None) -> Any:
        try:
            return x.reshape(shape)
        except ValueError:
            raise ShapeError(f"reshape: cannot reshape a tensor of shape {x.shape} "
                             f"({x.size} elements) into {shape}") from None

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        return (grad.reshape(self.inputs[0].shape),)

    backward_arrays = backward  # the same method on arrays


class Transpose(BuiltinFunction):
    """A permutation of the axes (NumPy's transpose: no axes = reverse them)."""

    name = "transpose"

    def forward(self, x, axes=None) -> Any:
        if axes is not None and sorted(a % max(x.ndim, 1) for a in axes) != list(range(x.ndim)):
            raise ShapeError(f"transpose: axes {tuple(axes)} are not a permutation of the "
                             f"{x.ndim} axes of a tensor of shape {x.shape}")
        self.axes = axes
        return x.transpose(axes)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        if self.axes is None:
            return (grad.transpose(),)
        ndim = len(self.axes)
        inverse = [0] * ndim
        for position, axis in enumerate(self.axes):
            inverse[axis % ndim] = position
        return (grad.transpose(tuple(inverse)),)

    backward_arrays = backward  # the same method on arrays


class BroadcastTo(BuiltinFunction):
    name = "broadcast_to"

    def forward(self, x, shape=None) -> Any:
        try:
            return self.xp.broadcast_to(x, shape)
        except ValueError:
            raise ShapeError(f"broadcast_to: a tensor of shape {x.shape} cannot be broadcast "
                             f"to {tuple(shape)}") from None

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        return (grad,)  # the engine sums it back to the input's shape

    backward_arrays = backward


@op(reference=lambda x, axis=None: np.flip(x, axis), spec=InputSpec("axes"), method=True,
    summary="the order of elements reversed along axes (all: None)",
    pytorch="`torch.flip` (`dims` required there)")
class Flip(BuiltinFunction):
    name = "flip"

    def forward(self, x, axis=None) -> Any:
        self.axes = normalize_axes(self.name, axis, x.ndim)
        return self.xp.flip(x, self.axes) if self.axes else x.copy()

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        return (Flip.apply(grad, axis=self.axes),)


class Concatenate(BuiltinFunction):
    name = "concatenate"

    def forward(self, *arrays, axis=0) -> Any:
        first = arrays[0]
        if first.ndim == 0:
            raise ShapeError("concatenate: zero-dimensional tensors cannot be concatenated; "
                             "use stack")
        self.axis = normalize_axes(self.name, axis, first.ndim)[0]
        for a in arrays[1:]:
            if a.ndim != first.ndim or any(
                    n != m for i, (n, m) in enumerate(zip(a.shape, first.shape)) if i != self.axis):
                raise ShapeError(
                    f"concatenate: shapes {[tuple(x.shape) for x in arrays]} differ outside "
                    f"axis {axis}; every other axis must match")
        return self.xp.concatenate(arrays, axis=self.axis)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        bounds, start = [], 0
        for x in self.inputs:
            bounds.append(start + x.shape[self.axis])
            start = bounds[-1]
        return tuple(split(grad, bounds[:-1], axis=self.axis))


@op(reference=lambda x, device: x, spec=InputSpec("unary", options={"device": ("cpu",)}),
    namespace=None, method=True, summary="a copy on another device",
    pytorch="`Tensor.to(device)`")
class ToDevice(BuiltinFunction):
    """A copy to another device: the one op whose output lives elsewhere than its input."""

    name = "to_device"

    def forward(self, x, device=None) -> Any:
        source, self.backend = self.backend, get_backend(device)  # the output's backend
        return self.backend.from_host(source.to_host(x))

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        return (grad.to(self.inputs[0].device),)


def reshape_method(self, *shape) -> Tensor:
    """`x.reshape(2, 3)` or `x.reshape((2, 3))`."""
    return reshape(self, shape[0] if len(shape) == 1 else shape)


@op(functions=(Reshape,), reference=np.reshape, spec=InputSpec("reshape"), method="reshape",
    method_function=reshape_method, summary="the same elements in another shape")
def reshape(x, shape) -> Tensor:
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if shape == x.shape:
        return x
    return Reshape.apply(x, shape=shape)


def transpose_method(self, *axes) -> Tensor:
    """`x.transpose()`, `x.transpose(1, 0)` or `x.transpose((1, 0))`."""
    return transpose(self, axes[0] if len(axes) == 1 else (axes or None))


@op(functions=(Transpose,), reference=np.transpose, spec=InputSpec("transpose"),
    method="transpose", method_function=transpose_method,
    summary="a permutation of the axes (none given: reversed)",
    pytorch="`torch.permute` (NumPy's transpose; `x.T` reverses the axes)")
def transpose(x, axes=None) -> Tensor:
    return Transpose.apply(x, axes=None if axes is None else tuple(axes))


@op(functions=(Transpose,), reference=np.swapaxes, spec=InputSpec("swapaxes"), method=True,
    summary="two axes exchanged")
def swapaxes(x, axis1, axis2) -> Tensor:
    axes = list(range(x.ndim))
    try:
        axes[axis1], axes[axis2] = axes[axis2], axes[axis1]
    except IndexError:
        raise ShapeError(f"swapaxes: axes ({axis1}, {axis2}) out of range for a tensor of "
                         f"shape {x.shape}") from None
    return Transpose.apply(x, axes=tuple(axes))


@op(functions=(Reshape,), reference=np.expand_dims, spec=InputSpec("expand_dims"), method=True,
    summary="a new axis of size 1", pytorch="`torch.unsqueeze`")
def expand_dims(x, axis) -> Tensor:
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    ndim = x.ndim + len(axes)
    axes = normalize_axes("expand_dims", axes, ndim)
    shape = iter(x.shape)
    return reshape(x, tuple(1 if i in axes else next(shape) for i in range(ndim)))


@op(functions=(Reshape,), reference=np.squeeze, spec=InputSpec("squeeze"), method=True,
    summary="axes of size 1 removed")
def squeeze(x, axis=None) -> Tensor:
    if axis is None:
        axes = tuple(i for i, n in enumerate(x.shape) if n == 1)
    else:
        axes = normalize_axes("squeeze", axis, x.ndim)
        for a in axes:
            if x.shape[a] != 1:
                raise ShapeError(f"squeeze: axis {a} of a tensor of shape {x.shape} has size "
                                 f"{x.shape[a]}, not 1")
    return reshape(x, tuple(n for i, n in enumerate(x.shape) if i not in axes))


@op(functions=(BroadcastTo,), reference=np.broadcast_to, spec=InputSpec("broadcast_to"),
    method=True, summary="x repeated along new or size-1 axes")
def broadcast_to(x, shape) -> Tensor:
    shape = tuple(shape)
    if shape == x.shape:
        return x
    return BroadcastTo.apply(x, shape=shape)


@op(functions=(Concatenate,), reference=np.concatenate, spec=InputSpec("concatenate"),
    summary="tensors joined along an axis", pytorch="`torch.cat`")
def concatenate(tensors, axis=0) -> Tensor:
    tensors = list(tensors)
    if not tensors:
        raise ShapeError("concatenate: needs at least one tensor")
    if len(tensors) == 1:
        return tensors[0]
    return Concatenate.apply(*tensors, axis=axis)


@op(functions=(Concatenate, Reshape), reference=np.stack, spec=InputSpec("stack"),
    summary="tensors joined along a new axis")
def stack(tensors, axis=0) -> Tensor:
    tensors = list(tensors)
    if not tensors:
        raise ShapeError("stack: needs at least one tensor")
    shapes = {t.shape for t in tensors}
    if len(shapes) > 1:
        raise ShapeError(f"stack: all tensors need the same shape, got {sorted(shapes)}")
    return concatenate([expand_dims(t, axis) for t in tensors], axis=axis)


@op(functions=(GetItem,), reference=np.split, spec=InputSpec("split"),
    summary="pieces along an axis (equal sections or split points)",
    pytorch="`torch.tensor_split` (NumPy's split; torch.split takes sizes)")
def split(x, indices_or_sections, axis=0) -> list[Tensor]:
    """NumPy's split: N equal sections, or the indices where each new piece starts."""
    axis = normalize_axes("split", axis, x.ndim)[0]
    length = x.shape[axis]
    if isinstance(indices_or_sections, int):
        sections = indices_or_sections
        if sections <= 0 or length % sections:
            raise ShapeError(f"split: axis {axis} of length {length} cannot be split into "
                             f"{sections} equal sections; pass split indices instead")
        bounds = [length // sections * i for i in range(1, sections)]
    else:
        bounds = list(indices_or_sections)
    edges = [0] + bounds + [length]
    prefix = (slice(None),) * axis
    return [x[prefix + (slice(start, stop),)] for start, stop in zip(edges[:-1], edges[1:])]


@op(functions=(Reshape,), reference=lambda x, start_dim=0, end_dim=-1: np.reshape(
    x, x.shape[:start_dim % max(x.ndim, 1)] + (-1,) + x.shape[end_dim % max(x.ndim, 1) + 1:]),
    spec=InputSpec("flatten"), method=True, summary="axes start_dim..end_dim merged into one")
def flatten(x, start_dim=0, end_dim=-1) -> Tensor:
    """PyTorch's flatten: the axes from start_dim to end_dim (both included) as one; a 0-d
    tensor becomes 1-d."""
    if x.ndim == 0:
        return reshape(x, (1,))
    start, end = (normalize_axes("flatten", a, x.ndim)[0] for a in (start_dim, end_dim))
    if start > end:
        raise ShapeError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim} for a "
                         f"tensor of shape {x.shape}")
    return reshape(x, x.shape[:start] + (-1,) + x.shape[end + 1:])


@op(functions=(Reshape,), reference=lambda x, axis, sizes: np.reshape(
    x, x.shape[:axis % x.ndim] + tuple(sizes) + x.shape[axis % x.ndim + 1:]),
    spec=InputSpec("unflatten"), method=True, summary="one axis split into several")
def unflatten(x, axis, sizes) -> Tensor:
    """PyTorch's unflatten (`dim`): axis `axis` reshaped to `sizes` (one may be -1)."""
    axis = normalize_axes("unflatten", axis, x.ndim)[0]
    return reshape(x, x.shape[:axis] + tuple(sizes) + x.shape[axis + 1:])


def repeat_method(self, *sizes) -> Tensor:
    """`x.repeat(2, 3)` or `x.repeat((2, 3))`."""
    return repeat(self, sizes[0] if len(sizes) == 1 and not isinstance(sizes[0], int) else sizes)


@op(functions=(Reshape, BroadcastTo), reference=np.tile, spec=InputSpec("repeat"),
    method="repeat", method_function=repeat_method,
    summary="x tiled: repeated whole along each axis",
    pytorch="`Tensor.repeat` (NumPy's tile; `x.repeat(2, 3)` as in PyTorch)")
def repeat(x, repeats) -> Tensor:
    repeats = (repeats,) if isinstance(repeats, int) else tuple(repeats)
    if len(repeats) < x.ndim:
        raise ShapeError(f"repeat: {len(repeats)} repeats for a tensor of {x.ndim} axes; give "
                         "one per axis (PyTorch's rule)")
    shape = (1,) * (len(repeats) - x.ndim) + x.shape
    spread = reshape(x, tuple(n for side in shape for n in (1, side)))
    tiled = broadcast_to(spread, tuple(n for r, side in zip(repeats, shape) for n in (r, side)))
    return reshape(tiled, tuple(r * side for r, side in zip(repeats, shape)))


@op(functions=(GetItem, Reshape), reference=lambda x, repeats, axis=None: np.repeat(
    x, repeats, axis=axis), spec=InputSpec("repeat_interleave"), method=True,
    summary="each element repeated `repeats` times along an axis (None: flattened)")
def repeat_interleave(x, repeats, axis=None) -> Tensor:
    """PyTorch's repeat_interleave (`dim`): `repeats` an int or one count per element."""
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    axis = normalize_axes("repeat_interleave", axis, x.ndim)[0]
    counts = repeats.data if isinstance(repeats, Tensor) else np.asarray(repeats)
    positions = np.repeat(np.arange(x.shape[axis]), np.asarray(x.backend.to_host(counts)))
    return GetItem.apply(x, index=(slice(None),) * axis + (x.backend.from_host(positions),))


@op(functions=(GetItem, Reshape), reference=lambda x, shifts, axis=None: np.roll(x, shifts, axis),
    spec=InputSpec("roll"), method=True,
    summary="elements shifted along axes, those past the end coming back at the start")
def roll(x, shifts, axis=None) -> Tensor:
    """PyTorch's roll (`dims`): `shifts` and `axis` ints or tuples of one length; axis None
    rolls the flattened tensor."""
    if axis is None:
        return reshape(roll(reshape(x, (-1,)), shifts, 0), x.shape)
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    if len(shifts) != len(axes):
        raise ShapeError(f"roll: {len(shifts)} shifts for {len(axes)} axes; give one each")
    out = x  # one gather per axis (integer arrays on several axes would pair up)
    for shift, a in zip(shifts, axes):
        a = (normalize_axes("roll", a, x.ndim) or (0,))[0]
        if x.ndim:
            positions = (np.arange(x.shape[a]) - shift) % x.shape[a]
            out = GetItem.apply(out, index=(slice(None),) * a + (x.backend.from_host(positions),))
    return out if out is not x else GetItem.apply(x, index=())


@op(functions=(Reshape, BroadcastTo), reference=lambda tensors, indexing="ij": np.meshgrid(
    *tensors, indexing=indexing), spec=InputSpec("meshgrid"),
    summary="1-D tensors spread over a grid, one output per input",
    pytorch="`torch.meshgrid` (indexing 'ij' by default, PyTorch's; NumPy's default is 'xy')")
def meshgrid(tensors, indexing="ij") -> list[Tensor]:
    tensors = list(tensors)
    if indexing not in ("ij", "xy"):
        raise ValueError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    sizes = [t.size for t in tensors]
    if indexing == "xy" and len(tensors) >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    grids = []
    for i, t in enumerate(tensors):
        position = {0: 1, 1: 0}.get(i, i) if indexing == "xy" and len(tensors) >= 2 else i
        shape = [1] * len(tensors)
        shape[position] = t.size
        grids.append(broadcast_to(reshape(t, tuple(shape)), tuple(sizes)))
    return grids


@op(functions=(GetItem, Transpose), reference=lambda x, axis, size, step: np.moveaxis(
    np.lib.stride_tricks.sliding_window_view(x, size, axis=axis)[
        (slice(None),) * (axis % x.ndim) + (slice(None, None, step),)], -1, -1),
    spec=InputSpec("unfold"), method=True,
    summary="windows of `size` every `step` along an axis, the window last",
    pytorch="`Tensor.unfold(dimension, size, step)`")
def unfold(x, axis, size, step) -> Tensor:
    axis = normalize_axes("unfold", axis, x.ndim)[0]
    length = x.shape[axis]
    if not 1 <= size <= length or step < 1:
        raise ShapeError(f"unfold: windows of size {size} and step {step} do not fit an axis "
                         f"of length {length} (shape {x.shape})")
    starts = np.arange(0, length - size + 1, step)
    windows = x.backend.from_host(starts[:, None] + np.arange(size))  # (count, size)
    gathered = GetItem.apply(x, index=(slice(None),) * axis + (windows,))  # axis -> count, size
    order = list(range(gathered.ndim))
    order.append(order.pop(axis + 1))  # the window's axis last
    return Transpose.apply(gathered, axes=tuple(order))
