"""NumPy broadcasting in forward: the broadcast shape, or an error that names every shape
(the backward side, `unbroadcast`, is the engine's: minigrad/autograd/backward_pass.py)."""

from ..errors import ShapeError


def broadcast_shape(name: str, *shapes: tuple[int, ...]) -> tuple[int, ...]:
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
