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


def unbroadcast(grad, shape):
    """Sum `grad` over the axes that broadcasting added or stretched, back to `shape` (a tuple).

    The one helper every broadcasting op's backward uses (written in Tensor ops, so it is
    recorded under create_graph)."""
    if grad.data.shape == shape:  # the common case: nothing was broadcast
        return grad
    extra = grad.ndim - len(shape)
    axes = tuple(range(extra)) + tuple(
        extra + i for i, size in enumerate(shape) if size == 1 and grad.shape[extra + i] != 1)
    summed = grad.sum(axis=axes, keepdims=True) if axes else grad
    return summed.reshape(shape)
