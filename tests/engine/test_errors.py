"""Each error minigrad raises on purpose: its class, and a message naming the op, the shapes /
dtypes / devices involved, and what to do."""


import pytest

import minigrad as mg
from minigrad.autograd import Function
from minigrad.errors import (
    DeviceError,
    DTypeError,
    GradcheckError,
    GraphError,
    MinigradError,
    OpDefinitionError,
    ShapeError,
)
from minigrad.nn import functional as F


def test_error_classes_are_minigrad_errors_and_builtin_errors():
    assert issubclass(ShapeError, MinigradError) and issubclass(ShapeError, ValueError)
    assert issubclass(DTypeError, TypeError)
    assert issubclass(DeviceError, RuntimeError) and issubclass(GraphError, RuntimeError)
    assert issubclass(GradcheckError, AssertionError)
    assert issubclass(OpDefinitionError, MinigradError) and issubclass(OpDefinitionError,
                                                                       TypeError)


def _float(*shape):
    return mg.ones(*shape)


def _ids(*values):
    return mg.tensor(list(values))


ERRORS = {
    "matmul shapes": (lambda: _float(2, 3) @ _float(4, 5),
                      ShapeError, ["matmul", r"\(2, 3\)", r"\(4, 5\)"]),
    "broadcast": (lambda: _float(2, 3) + _float(4), ShapeError, ["add", r"\(2, 3\)", r"\(4,\)"]),
    "where broadcast": (lambda: mg.where(mg.ones(2, dtype=bool), _float(3), 0.0),
                        ShapeError, ["where", r"\(2,\)", r"\(3,\)"]),
    "reshape": (lambda: _float(2, 3).reshape(4), ShapeError, ["reshape", r"\(2, 3\)", r"\(4,\)"]),
    "transpose": (lambda: _float(2, 3).transpose(0, 0), ShapeError, ["transpose", r"\(2, 3\)"]),
    "concatenate": (lambda: mg.concatenate([_float(2, 3), _float(2, 4)], axis=0),
                    ShapeError, ["concatenate", r"\(2, 3\)", r"\(2, 4\)"]),
    "axis": (lambda: _float(2, 3).sum(axis=2), ShapeError, ["sum", "axis 2"]),
    "linear": (lambda: F.linear(_float(2, 3), _float(4, 5)),
               ShapeError, ["linear", r"\(2, 3\)", r"\(4, 5\)"]),
    "float op on ints": (lambda: mg.exp(_ids(1, 2)), DTypeError, ["exp", "int64"]),
    "requires_grad on ints": (lambda: mg.tensor([1, 2], requires_grad=True),
                              DTypeError, ["requires_grad", "int64"]),
    "embedding ids float": (lambda: F.embedding(_float(2), _float(3, 2)),
                            DTypeError, ["embedding", "float32"]),
    "embedding ids range": (lambda: F.embedding(_ids(0, 5), _float(3, 2)),
                            IndexError, ["embedding", r"\[0, 3\)", r"\[0, 5\]"]),
    "cross_entropy target shape": (lambda: F.cross_entropy(_float(2, 3, 4), _ids(0, 1)),
                                   ShapeError, ["cross_entropy", r"\(2, 3, 4\)", r"\(2, 3\)"]),
    "cross_entropy target range": (lambda: F.cross_entropy(_float(2, 4), _ids(0, 4)),
                                   IndexError, ["cross_entropy", r"\[0, 4\)"]),
    "softmax mask dtype": (lambda: F.softmax(_float(2, 3), mask=_ids(0, 1, 1)),
                           DTypeError, ["softmax", "boolean", "int64"]),
    "masked_fill mask dtype": (lambda: _float(3).masked_fill(_float(3), 0.0),
                               DTypeError, ["masked_fill", "boolean", "float32"]),
    "attention mask shape": (
        lambda: F.scaled_dot_product_attention(_float(1, 2, 4), _float(1, 3, 4), _float(1, 3, 4),
                                               mask=mg.ones(5, dtype=bool)),
        ShapeError, ["scaled_dot_product_attention", r"\(5,\)", r"\(1, 2, 3\)"]),
    "unknown device": (lambda: mg.tensor([1.0], device="tpu"), DeviceError, ["'tpu'", "cuda"]),
    "non-scalar backward": (lambda: (mg.tensor([1.0, 2.0], requires_grad=True) * 2).backward(),
                            GraphError, ["backward", r"\(2,\)", "gradient"]),
}


@pytest.mark.parametrize("make, error, fragments", ERRORS.values(), ids=ERRORS.keys())
def test_error_message(make, error, fragments):
    with pytest.raises(error) as caught:
        make()
    for fragment in fragments:
        assert caught.match(fragment)


def _tensor_on_a_second_device():
    return mg.ones(3, device="cuda")


@pytest.mark.gpu
def test_mixing_devices_names_the_op_and_both_devices():
    with pytest.raises(DeviceError, match=r"add.*cuda:0.*cpu"):
        _tensor_on_a_second_device() + mg.ones(3)
    with pytest.raises(DeviceError, match=r"matmul.*cpu.*cuda:0"):
        mg.ones(3) @ _tensor_on_a_second_device()


class WrongSquare(Function):
    """x², with a backward that is deliberately wrong (3x instead of 2x)."""

    name = "wrong_square"

    def forward(self, x):
        return x * x

    def backward(self, grad):
        return (grad * 3 * self.inputs[0],)


class WrongShape(Function):
    """A backward that gives a gradient no broadcasting can sum back to its input."""

    name = "wrong_shape"

    def forward(self, x):
        return x * 2

    def backward(self, grad):
        return (grad.reshape(-1)[:1],)


def test_a_backward_gradient_that_does_not_fit_its_input_names_the_op():
    x = mg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    with pytest.raises(ShapeError, match=r"wrong_shape.*\(1,\).*\(2, 2\).*bug"):
        WrongShape.apply(x).sum().backward()


def test_gradcheck_names_the_input_and_the_element():
    good = mg.tensor([1.0, 2.0], requires_grad=True)
    wrong = mg.tensor([[0.5, 1.5], [-1.0, 2.0]], requires_grad=True)
    message = r"input 1 .* element \(\d, \d\).*analytical.*numerical"
    with pytest.raises(GradcheckError, match=message):
        mg.gradcheck(lambda a, b: a * 2 + WrongSquare.apply(b).sum(), [good, wrong])


# ----- the mistakes likely in a user-defined op: each an OpDefinitionError naming the class ----

class _Op(Function):
    """x · y (or x² for one input), whose backward returns whatever `returns` gives."""

    def forward(self, *arrays):
        return arrays[0] * arrays[-1]

    def backward(self, grad):
        return self.returns(self, grad)


def _op(name, returns, forward=None):
    body = {"returns": staticmethod(returns)}
    if forward is not None:
        body["forward"] = forward
    return type(name, (_Op,), body)


def _run(cls, *values):
    inputs = [mg.tensor(v, requires_grad=True) for v in values]
    cls.apply(*inputs).sum().backward()


def _wrapped(self, *arrays):
    return mg.tensor(arrays[0])


CUSTOM_OP_ERRORS = {
    "backward returns an array": (
        lambda: _run(_op("ArrayBack", lambda fn, grad: (grad.data,)), [1.0]),
        ["ArrayBack", "backward returned a numpy.ndarray", "Tensors", "self.constant"]),
    "backward returns a bare array": (
        lambda: _run(_op("BareArrayBack", lambda fn, grad: grad.data), [1.0]),
        ["BareArrayBack", "numpy.ndarray"]),
    "backward returns a bare tensor for two inputs": (
        lambda: _run(_op("BareBack", lambda fn, grad: grad), [1.0], [2.0]),
        ["BareBack", "one Tensor for an op of 2 inputs", "tuple of 2"]),
    "backward returns too few gradients": (
        lambda: _run(_op("ShortBack", lambda fn, grad: (grad,)), [1.0], [2.0]),
        ["ShortBack", "1 gradients for 2 inputs", "None"]),
    "forward returns a tensor": (
        lambda: _run(_op("TensorForward", lambda fn, grad: grad, forward=_wrapped), [1.0]),
        ["TensorForward", "forward returned a Tensor", "self.xp", "array"]),
    "no tensor input": (lambda: mg.add(2.0, 3.0), ["add", "at least one Tensor input"]),
}


@pytest.mark.parametrize("make, fragments", CUSTOM_OP_ERRORS.values(),
                         ids=CUSTOM_OP_ERRORS.keys())
def test_custom_op_mistake_message(make, fragments):
    with pytest.raises(OpDefinitionError) as caught:
        make()
    message = str(caught.value)
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message, message


def test_a_one_input_op_may_return_a_bare_tensor():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    _op("BareOne", lambda fn, grad: grad * 2 * fn.inputs[0]).apply(x).sum().backward()
    assert x.grad.numpy().tolist() == [2.0, 4.0]
