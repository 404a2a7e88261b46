"""NumPy broadcasting for forward (shape check with a clear error) and backward (unbroadcast)."""

from ..errors import ShapeError


def broadcast_shape(name, *shapes):
    """The broadcast result of `shapes`, or a ShapeError naming the op and every shape."""
    ndim = max(len(s) for s in shapes)
    result = []
    for axis in range(-ndim, 0):
        sizes = {s[axis] for s in shapes if len(s) >= -axis} - {1}
        if len(sizes) > 1:
            raise ShapeError(
                f"{name}: shapes {' and '.join(str(tuple(s)) for s in shapes)} cannot be "
                f"broadcast together (axis {axis} has sizes {sorted(sizes)}); reshape or "
                "expand_dims one of them so that each axis matches or is 1") from None
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def unbroadcast(grad, shape, name):
    """Sum `grad` over the axes that broadcasting added or stretched, back to `shape` (a tuple):
    the engine's step for an input of op `name` whose backward gave a gradient of the
    broadcast shape. A gradient no broadcasting of `shape` explains is a ShapeError.

    Written in Tensor ops, so it is recorded under create_graph."""
    extra = grad.ndim - len(shape)
    if extra < 0 or any(size not in (1, wanted) for size, wanted in zip(shape, grad.shape[extra:])):
        raise ShapeError(
            f"{name}: backward gave a gradient of shape {grad.shape} for an input of shape "
            f"{shape} (a bug in this op's backward)")
    axes = tuple(range(extra)) + tuple(
        extra + i for i, size in enumerate(shape) if size == 1 and grad.shape[extra + i] != 1)
    summed = grad.sum(axis=axes, keepdims=True) if axes else grad
    return summed.reshape(shape)
