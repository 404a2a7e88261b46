"""2-D convolution and pooling (`F.conv2d`, `F.conv_transpose2d`, `F.max_pool2d`,
`F.avg_pool2d`), images (N, C, H, W) as PyTorch's.

A convolution is one matrix product over im2col columns: the input's windows laid out as rows
(one strided slice per kernel position), times the weight as a matrix. Its two gradients are
ops of their own, and the three are closed under differentiation (gradients of gradients):
the gradient for the input is the transposed convolution (`Conv2dInputGradient`: the columns'
gradient added back window by window, one pass per kernel position), the one for the weight
the columns times the incoming gradient (`Conv2dWeightGradient`). No loop runs over output
positions."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd import BuiltinFunction
from ..errors import ShapeError
from ..tensor import Tensor
from .elementwise import Add, Multiply
from .indexing import GetItem, IndexAdd
from .padding import Pad
from .reduce import Sum
from .registry import InputSpec, op
from .shape import Reshape


def _pair(name, value, what) -> tuple[int, int]:
    pair = (value, value) if isinstance(value, int) else tuple(value)
    if len(pair) != 2 or not all(isinstance(v, int) for v in pair):
        raise ValueError(f"{name}: {what} must be an int or a pair of ints, got {value!r}")
    return pair


def _output_size(size, kernel, stride, padding, dilation) -> int:
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def _columns(xp, x, kernel, stride, padding, dilation, out_size) -> Any:
    """im2col: x (N, C, H, W) -> its windows as rows (N·OH·OW, C·KH·KW), gathered with one
    strided slice per kernel position."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw), (oh, ow) = kernel, stride, padding, dilation, out_size
    if ph or pw:
        x = xp.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    n, c = x.shape[:2]
    columns = xp.empty((n, oh, ow, c, kh, kw), dtype=x.dtype)
    for i in range(kh):
        for j in range(kw):
            columns[..., i, j] = x[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh,
                                   j * dw:j * dw + sw * (ow - 1) + 1:sw].transpose(0, 2, 3, 1)
    return columns.reshape(n * oh * ow, c * kh * kw)


class _Convolution(BuiltinFunction):
    """The geometry shared by the three ops: stride, padding, dilation (pairs) and groups
    (channels split into `groups` convolutions side by side: one pass each, joined)."""

    channels: tuple[int, int]  # the axes of the two inputs that `groups` cuts

    def geometry(self, stride, padding, dilation, groups) -> None:
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups

    @property
    def settings(self) -> dict:
        return {"stride": self.stride, "padding": self.padding, "dilation": self.dilation,
                "groups": self.groups}

    def by_group(self, compute, first, second, axis) -> Any:
        """compute(first's group, second's group) for each group, joined along `axis`: both
        arrays cut into `groups` equal parts along their channel axis (1 for images and
        gradients, 0 for a weight's output channels)."""
        if self.groups == 1:
            return compute(first, second)
        parts = []
        for g in range(self.groups):
            parts.append(compute(*(_group(array, g, self.groups, channels)
                                   for array, channels in ((first, self.channels[0]),
                                                           (second, self.channels[1])))))
        return self.xp.concatenate(parts, axis=axis)


def _group(array, g, groups, axis) -> Any:
    size = array.shape[axis] // groups
    return array[(slice(None),) * axis + (slice(g * size, (g + 1) * size),)]


class Conv2d(_Convolution):
    """x (N, C, H, W) convolved with weight (O, C / groups, KH, KW) -> (N, O, OH, OW) (no
    bias)."""

    name = "conv2d"
    float_only = True
    channels = (1, 0)  # the axes cut into groups: x's channels, the weight's outputs

    def forward(self, x, weight, stride=(1, 1), padding=(0, 0), dilation=(1, 1),
                groups=1) -> Any:
        self.geometry(stride, padding, dilation, groups)
        return self.by_group(self._convolve, x, weight, axis=1)

    def _convolve(self, x, weight) -> Any:
        n, _, h, w = x.shape
        o, _, kh, kw = weight.shape
        (sh, sw), (ph, pw), (dh, dw) = self.stride, self.padding, self.dilation
        out_size = (_output_size(h, kh, sh, ph, dh), _output_size(w, kw, sw, pw, dw))
        columns = _columns(self.xp, x, (kh, kw), self.stride, self.padding, self.dilation,
                           out_size)
        out = columns @ weight.reshape(o, -1).T  # (N·OH·OW, O)
        return self.xp.ascontiguousarray(out.reshape(n, *out_size, o).transpose(0, 3, 1, 2))

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x, weight = self.inputs
        return (Conv2dInputGradient.apply(grad, weight, input_shape=x.shape, **self.settings)
                if x.requires_grad else None,
                Conv2dWeightGradient.apply(x, grad, weight_shape=weight.shape, **self.settings)
                if weight.requires_grad else None)


class Conv2dInputGradient(_Convolution):
    """The transposed convolution: g (N, O, OH, OW) and weight (O, C / groups, KH, KW) ->
    (N, C, H, W) of `input_shape`, each output position's columns added back into the window
    it read."""

    name = "conv2d_input_gradient"
    float_only = True
    channels = (1, 0)  # the gradient's channels, the weight's outputs

    def forward(self, grad, weight, input_shape=(), stride=(1, 1), padding=(0, 0),
                dilation=(1, 1), groups=1) -> Any:
        self.geometry(stride, padding, dilation, groups)
        n, c, h, w = input_shape
        self.group_shape = (n, c // groups, h, w)
        return self.by_group(self._spread, grad, weight, axis=1)

    def _spread(self, grad, weight) -> Any:
        xp = self.xp
        n, c, h, w = self.group_shape
        o, _, kh, kw = weight.shape
        oh, ow = grad.shape[2:]
        rows = grad.transpose(0, 2, 3, 1).reshape(-1, o)  # (N·OH·OW, O)
        columns = (rows @ weight.reshape(o, -1)).reshape(n, oh, ow, c, kh, kw)
        (sh, sw), (ph, pw), (dh, dw) = self.stride, self.padding, self.dilation
        padded = xp.zeros((n, c, h + 2 * ph, w + 2 * pw), dtype=columns.dtype)
        for i in range(kh):  # one pass per kernel position, each over every window
            for j in range(kw):
                padded[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh,
                       j * dw:j * dw + sw * (ow - 1) + 1:sw] += \
                    columns[:, :, :, :, i, j].transpose(0, 3, 1, 2)
        return xp.ascontiguousarray(padded[:, :, ph:ph + h, pw:pw + w])

    def backward(self, grad_of_grad: Tensor) -> tuple[Tensor | None, ...]:
        grad, weight = self.inputs
        return (Conv2d.apply(grad_of_grad, weight, **self.settings),
                Conv2dWeightGradient.apply(grad_of_grad, grad, weight_shape=weight.shape,
                                           **self.settings))


class Conv2dWeightGradient(_Convolution):
    """x (N, C, H, W) and g (N, O, OH, OW) -> the weight's gradient (O, C / groups, KH, KW):
    the incoming gradient times the im2col columns."""

    name = "conv2d_weight_gradient"
    float_only = True
    channels = (1, 1)  # x's channels, the gradient's

    def forward(self, x, grad, weight_shape=(), stride=(1, 1), padding=(0, 0),
                dilation=(1, 1), groups=1) -> Any:
        self.geometry(stride, padding, dilation, groups)
        o, c, kh, kw = weight_shape
        self.group_shape = (o // groups, c, kh, kw)
        return self.by_group(self._correlate, x, grad, axis=0)

    def _correlate(self, x, grad) -> Any:
        o, _, kh, kw = self.group_shape
        columns = _columns(self.xp, x, (kh, kw), self.stride, self.padding, self.dilation,
                           grad.shape[2:])
        rows = grad.transpose(0, 2, 3, 1).reshape(-1, o)
        return (rows.T @ columns).reshape(self.group_shape)

    def backward(self, grad_of_grad: Tensor) -> tuple[Tensor | None, ...]:
        x, grad = self.inputs
        return (Conv2dInputGradient.apply(grad, grad_of_grad, input_shape=x.shape,
                                          **self.settings),
                Conv2d.apply(x, grad_of_grad, **self.settings))


def _image(name, x) -> None:
    if x.ndim != 4:
        raise ShapeError(f"{name}: needs images (N, C, H, W), got shape {x.shape}; add the "
                         "batch axis with x.expand_dims(0)")


def _with_bias(out: Tensor, bias) -> Tensor:
    return out if bias is None else out + bias.reshape(1, -1, 1, 1)


def _block_diagonal(weight, groups, rows, columns) -> np.ndarray:
    """A grouped weight as the ungrouped one it equals: its groups on the diagonal of a
    (rows, columns, KH, KW) weight, zeros elsewhere."""
    full = np.zeros((rows, columns) + weight.shape[2:], dtype=weight.dtype)
    r, c = rows // groups, columns // groups
    for g in range(groups):
        full[g * r:(g + 1) * r, g * c:(g + 1) * c] = weight[g * r:(g + 1) * r]
    return full


def conv2d_reference(x, weight, bias=None, stride=1, padding=0, dilation=1,
                     groups=1) -> np.ndarray:
    """A direct sum over kernel positions (float64); groups as a block-diagonal weight."""
    stride, padding, dilation = (_pair("conv2d", v, "") for v in (stride, padding, dilation))
    weight = _block_diagonal(weight, groups, weight.shape[0], x.shape[1])
    kh, kw = weight.shape[2:]
    padded = np.pad(x, ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    oh = _output_size(x.shape[2], kh, stride[0], padding[0], dilation[0])
    ow = _output_size(x.shape[3], kw, stride[1], padding[1], dilation[1])
    out = np.zeros((x.shape[0], weight.shape[0], oh, ow))
    for i in range(kh):
        for j in range(kw):
            window = padded[:, :, i * dilation[0]::stride[0], j * dilation[1]::stride[1]]
            out += np.einsum("nchw,oc->nohw", window[:, :, :oh, :ow], weight[:, :, i, j])
    return out if bias is None else out + bias.reshape(1, -1, 1, 1)


@op(functions=(Conv2d, Conv2dInputGradient, Conv2dWeightGradient, Add), namespace="F",
    reference=conv2d_reference, spec=InputSpec("conv2d"),
    summary="2-D convolution (cross-correlation) of images, im2col",
    pytorch="`F.conv2d` (padding a number or a pair, not 'same')")
def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """x (N, C, H, W), weight (O, C, KH, KW), bias (O,) -> (N, O, OH, OW)."""
    _image("conv2d", x)
    _check_groups("conv2d", x.shape[1], weight.shape[0], groups)
    if weight.ndim != 4 or weight.shape[1] * groups != x.shape[1]:
        raise ShapeError(f"conv2d: a weight of shape {weight.shape} does not fit images of "
                         f"shape {x.shape} in {groups} group(s): it must be (out_channels, "
                         f"{x.shape[1] // groups}, KH, KW)")
    stride, padding, dilation = (_pair("conv2d", v, what) for v, what in (
        (stride, "stride"), (padding, "padding"), (dilation, "dilation")))
    for axis in (0, 1):
        if _output_size(x.shape[2 + axis], weight.shape[2 + axis], stride[axis], padding[axis],
                        dilation[axis]) < 1:
            raise ShapeError(f"conv2d: a kernel of shape {weight.shape[2:]} (dilation "
                             f"{dilation}) does not fit images of shape {x.shape[2:]} padded "
                             f"by {padding}")
    out = Conv2d.apply(x, weight, stride=stride, padding=padding, dilation=dilation,
                       groups=groups)
    return _with_bias(out, bias)


def _check_groups(name, in_channels, out_channels, groups) -> None:
    if not isinstance(groups, int) or groups < 1 or in_channels % groups or \
            out_channels % groups:
        raise ValueError(f"{name}: groups={groups} must divide the input channels "
                         f"({in_channels}) and the output channels ({out_channels})")


def conv_transpose2d_reference(x, weight, bias=None, stride=1, padding=0, output_padding=0,
                               dilation=1, groups=1) -> np.ndarray:
    """Each input pixel spreads weight · value over its window (float64); groups as a
    block-diagonal weight."""
    stride, padding, output_padding, dilation = (
        _pair("conv_transpose2d", v, "") for v in (stride, padding, output_padding, dilation))
    weight = _block_diagonal(weight, groups, weight.shape[0], weight.shape[1] * groups)
    n, _, h, w = x.shape
    _, c_out, kh, kw = weight.shape
    size = [(s - 1) * st - 2 * p + d * (k - 1) + op_ + 1 for s, st, p, d, k, op_ in zip(
        (h, w), stride, padding, dilation, (kh, kw), output_padding)]
    full = np.zeros((n, c_out, size[0] + 2 * padding[0], size[1] + 2 * padding[1]))
    for i in range(kh):
        for j in range(kw):
            spread = np.einsum("nchw,co->nohw", x, weight[:, :, i, j])
            full[:, :, i * dilation[0]:i * dilation[0] + stride[0] * (h - 1) + 1:stride[0],
                 j * dilation[1]:j * dilation[1] + stride[1] * (w - 1) + 1:stride[1]] += spread
    out = full[:, :, padding[0]:padding[0] + size[0], padding[1]:padding[1] + size[1]]
    return out if bias is None else out + bias.reshape(1, -1, 1, 1)


@op(functions=(Conv2dInputGradient, Conv2d, Conv2dWeightGradient, Add), namespace="F",
    reference=conv_transpose2d_reference, spec=InputSpec("conv_transpose2d"),
    summary="2-D transposed convolution: conv2d's gradient for its input, as a layer",
    pytorch="`F.conv_transpose2d` (output_padding below the stride)")
def conv_transpose2d(x, weight, bias=None, stride=1, padding=0, output_padding=0,
                     dilation=1, groups=1) -> Tensor:
    """x (N, C_in, H, W), weight (C_in, C_out, KH, KW), bias (C_out,) -> (N, C_out, H', W'),
    H' = (H - 1)·stride - 2·padding + dilation·(KH - 1) + output_padding + 1."""
    _image("conv_transpose2d", x)
    if weight.ndim != 4 or weight.shape[0] != x.shape[1]:
        raise ShapeError(f"conv_transpose2d: a weight of shape {weight.shape} does not fit "
                         f"images of shape {x.shape}: it must be ({x.shape[1]}, "
                         "out_channels / groups, KH, KW)")
    _check_groups("conv_transpose2d", x.shape[1], weight.shape[1] * groups, groups)
    stride, padding, output_padding, dilation = (
        _pair("conv_transpose2d", v, what) for v, what in (
            (stride, "stride"), (padding, "padding"), (output_padding, "output_padding"),
            (dilation, "dilation")))
    size = tuple((s - 1) * st - 2 * p + d * (k - 1) + extra + 1 for s, st, p, d, k, extra in zip(
        x.shape[2:], stride, padding, dilation, weight.shape[2:], output_padding))
    if min(size) < 1 or any(extra >= st for extra, st in zip(output_padding, stride)):
        raise ShapeError(f"conv_transpose2d: output size {size} from images {x.shape[2:]}, "
                         f"output_padding {output_padding}: the size must be positive and "
                         f"output_padding smaller than the stride {stride}")
    out = Conv2dInputGradient.apply(
        x, weight, input_shape=(x.shape[0], weight.shape[1] * groups) + size, stride=stride,
        padding=padding, dilation=dilation, groups=groups)
    return _with_bias(out, bias)


def _pool_geometry(name, x, kernel_size, stride, padding) -> tuple:
    _image(name, x)
    kernel = _pair(name, kernel_size, "kernel_size")
    stride = kernel if stride is None else _pair(name, stride, "stride")
    padding = _pair(name, padding, "padding")
    if any(2 * p > k for p, k in zip(padding, kernel)):
        raise ShapeError(f"{name}: padding {padding} is more than half the kernel {kernel} "
                         "(PyTorch's rule)")
    out = tuple(_output_size(s, k, st, p, 1) for s, k, st, p in zip(x.shape[2:], kernel,
                                                                   stride, padding))
    if min(out) < 1:
        raise ShapeError(f"{name}: a kernel {kernel} does not fit images of shape "
                         f"{x.shape[2:]} padded by {padding}")
    return kernel, stride, padding, out


def _lowest(dtype) -> Any:
    """What max pooling pads with: -inf, or an integer dtype's smallest value."""
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _pool_reference(x, kernel_size, stride, padding, reduce, fill):
    kernel = _pair("pool", kernel_size, "")
    stride = kernel if stride is None else _pair("pool", stride, "")
    padding = _pair("pool", padding, "")
    padded = np.pad(x, ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2),
                    constant_values=fill)
    oh, ow = (_output_size(s, k, st, p, 1) for s, k, st, p in zip(x.shape[2:], kernel, stride,
                                                                 padding))
    out = np.empty(x.shape[:2] + (oh, ow), dtype=x.dtype if reduce is np.max else np.float64)
    for r in range(oh):
        for c in range(ow):
            window = padded[:, :, r * stride[0]:r * stride[0] + kernel[0],
                            c * stride[1]:c * stride[1] + kernel[1]]
            out[:, :, r, c] = reduce(window, axis=(2, 3))
    return out


@op(functions=(GetItem, IndexAdd, Pad), namespace="F", spec=InputSpec("pool2d", distinct=True),
    reference=lambda x, kernel_size, stride=None, padding=0: _pool_reference(
        x, kernel_size, stride, padding, np.max, _lowest(x.dtype)),
    summary="the largest value of each window (its gradient to that element)",
    pytorch="`F.max_pool2d` (no dilation, ceil_mode or return_indices)")
def max_pool2d(x, kernel_size, stride=None, padding=0) -> Tensor:
    """The largest value of each window (padding counts as -inf): a gather of x at each
    window's first largest element, so the gradient goes there."""
    kernel, stride, padding, (oh, ow) = _pool_geometry("max_pool2d", x, kernel_size, stride,
                                                       padding)
    xp = x.backend.xp
    widths = ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2)
    padded = Pad.apply(x, widths=widths, value=_lowest(x.dtype)) if any(padding) else x
    columns = _columns(xp, padded.data, kernel, stride, (0, 0), (1, 1), (oh, ow))
    n, c = x.shape[:2]
    best = columns.reshape(n, oh, ow, c, kernel[0] * kernel[1]).argmax(axis=-1)
    best = best.transpose(0, 3, 1, 2)  # (N, C, OH, OW): the window's first largest element
    rows = xp.arange(oh).reshape(1, 1, oh, 1) * stride[0] + best // kernel[1]
    cols = xp.arange(ow).reshape(1, 1, 1, ow) * stride[1] + best % kernel[1]
    index = (xp.arange(n).reshape(n, 1, 1, 1), xp.arange(c).reshape(1, c, 1, 1), rows, cols)
    return GetItem.apply(padded, index=index)


@op(functions=(Conv2d, Conv2dInputGradient, Conv2dWeightGradient, Reshape, Multiply, Sum),
    namespace="F", spec=InputSpec("pool2d"),
    reference=lambda x, kernel_size, stride=None, padding=0: _pool_reference(
        x, kernel_size, stride, padding, np.mean, 0.0),
    summary="the mean of each window (padding counted as zeros)",
    pytorch="`F.avg_pool2d` (count_include_pad=True, no ceil_mode or divisor_override)")
def avg_pool2d(x, kernel_size, stride=None, padding=0) -> Tensor:
    """The mean of each window: a convolution of each channel on its own with a kernel of
    1/(KH·KW), the padding counted as zeros (PyTorch's count_include_pad=True)."""
    kernel, stride, padding, _ = _pool_geometry("avg_pool2d", x, kernel_size, stride, padding)
    n, c, h, w = x.shape
    ones = x.backend.xp.full((1, 1) + kernel, 1 / (kernel[0] * kernel[1]), dtype=x.dtype)
    weight = Tensor._make(ones, x.backend)
    out = Conv2d.apply(x.reshape(n * c, 1, h, w), weight, stride=stride, padding=padding,
                       dilation=(1, 1), groups=1)
    return out.reshape(n, c, *out.shape[2:])
