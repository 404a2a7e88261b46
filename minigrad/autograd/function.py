"""`Function`, one differentiable op: `apply` runs forward and records the graph; the checks
of what a user's op returns; `BuiltinFunction`, the base of minigrad's own ops."""

from __future__ import annotations

import functools
import inspect
import itertools
import operator
import traceback
import weakref
from collections.abc import Callable
from types import MethodType
from typing import Any

from ..backend import backend_of_array
from ..errors import AnomalyError, DeviceError, DTypeError, OpDefinitionError
from ..tensor import Tensor, ensure_tensor
from .grad_mode import switches

_sequence = itertools.count()  # creation numbers of recorded ops: a topological order
_data = operator.attrgetter("data")
_new = object.__new__  # bound once, as the names below: the hot path reads them per op


def _where_created() -> str:
    """The innermost stack frame outside minigrad: where the user called the op."""
    for frame in reversed(traceback.extract_stack()[:-2]):
        if "minigrad/" not in frame.filename.replace("\\", "/"):
            return f"{frame.filename}:{frame.lineno} ({frame.line})"
    return "unknown location"


def _all_finite(xp, array):
    return array.dtype.kind != "f" or bool(xp.isfinite(array).all())


class Function:
    """One differentiable op.

    Subclasses define:
      forward(self, *arrays, **params) -> array   computes with `self.xp`; keeps on `self`
                                                   only what backward needs (and sets
                                                   `self.backend` to the backend of the array
                                                   it returns if that is not its inputs',
                                                   as `to_device` does)
      backward(self, grad) -> tuple               one Tensor (or None) per input, of its
                                                   input's shape or one it broadcasts to,
                                                   written in Tensor ops (differentiable
                                                   again); inputs are `self.inputs`, and
                                                   `self.needs_input_grad` says which need one
    and may define:
      backward_arrays(self, grad) -> tuple        the same gradients on arrays (`grad` an
                                                   array; one array or None per input): the
                                                   engine calls it instead of `backward` when
                                                   the backward pass is not recorded (the
                                                   default calls `backward` on a Tensor)
      recompute(self)                             forward's values that `backward` reads, again
                                                   in Tensor ops from `self.inputs` (forward's
                                                   own arrays are not in the graph)
    Class attributes: `name` (shown in errors, the op table and graphs), `float_only`
    (inputs must be floating point), `needs_output` (backward reads `self.output()`),
    `creates_nonfinite` (a NaN/Inf in the output can be intended: anomaly mode lets it pass),
    `numbers_as_inputs` (Python numbers and arrays among the positional inputs become
    constants beside the first Tensor, NumPy's `x * 2`; off: such an argument is refused,
    pass it by keyword), `checked` (the class's forward and backward are wrapped so that what
    they return is checked on every call, and a mistake gets an error that says what to do).
    A Function is checked and takes no numbers as inputs; a `BuiltinFunction` the opposite.
    A one-input op's backward may return a bare Tensor instead of a 1-tuple.
    """

    # set on each instance by apply (and, for inputs and what follows, only when recorded)
    backend: Any
    xp: Any  # the backend's array namespace: NumPy or CuPy
    inputs: tuple[Tensor, ...]
    sequence: int
    created_at: str  # under detect_anomaly: the line of user code that made it
    output: Callable[[], Any]  # a weak reference to the output (needs_output)

    name = "function"
    float_only = False
    needs_output = False
    creates_nonfinite = False
    numbers_as_inputs = False
    checked = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:
            raise OpDefinitionError(
                f"{cls.__name__}: a Function defines no __init__ (apply makes one object per "
                "call without running it); take parameters as keyword arguments of forward "
                "and keep what backward needs on self there")
        if "apply" in cls.__dict__:
            raise OpDefinitionError(
                f"{cls.__name__}: a Function defines no apply (the engine's, bound to each op "
                "class); do the op's work in forward, or wrap MyOp.apply in a function")
        if "name" not in cls.__dict__:
            cls.name = cls.__name__  # shown in errors, graphs and the op table
        # `apply` bound to this class once, here: through the classmethod, every call would
        # first make a bound method, and every op of every pass is such a call
        cls.apply = MethodType(_apply, cls)  # type: ignore[method-assign]
        if cls.checked:
            for name, checking in (("forward", _checking_forward),
                                   ("backward", _checking_backward),
                                   ("backward_arrays", _checking_backward_arrays)):
                method = cls.__dict__.get(name)
                if inspect.isfunction(method):
                    setattr(cls, name, checking(method))

    @classmethod
    def apply(cls, *inputs, **params) -> Tensor:
        """Run forward on the inputs' arrays and, when grad mode needs it, record the graph.

        This is the hot path of the engine: every op of every forward and backward pass runs
        through it, so it is kept flat (the checks are attribute reads; forward is called
        without unpacking for one or two inputs)."""
        backend = None
        requires_grad = False
        float_only = cls.float_only
        try:
            for tensor in inputs:
                if tensor.backend is not backend:
                    if backend is not None:
                        raise _device_error(cls, inputs)
                    backend = tensor.backend
                if tensor.requires_grad:
                    requires_grad = True
                if float_only and tensor.data.dtype.kind != "f":
                    raise _not_floating(cls, tensor)
        except AttributeError:  # a number or an array, not a Tensor (no isinstance per input)
            return cls.apply(*_tensor_inputs(cls, inputs), **params)
        if backend is None:
            raise OpDefinitionError(f"{cls.name}: apply was called without a Tensor input; "
                                    "pass the tensors positionally, parameters by keyword")
        fn = _new(cls)
        fn.backend = backend
        fn.xp = backend.xp
        if backend.activate is not None:  # a GPU: make it CuPy's current device
            backend.activate()
        try:  # unpacking (* of a map, ** even of an empty dict) costs more than a small ufunc
            if len(inputs) == 2 and not params:
                data = fn.forward(inputs[0].data, inputs[1].data)
            elif len(inputs) == 1:
                data = fn.forward(inputs[0].data, **params) if params else fn.forward(
                    inputs[0].data)
            else:
                data = fn.forward(*map(_data, inputs), **params)
        except ValueError:
            fn.explain_failure(*map(_data, inputs))
            raise
        if switches.anomaly:
            _check_forward_finite(fn, data, inputs)
        out = _new(Tensor)  # Tensor._make, written out
        out.data = data
        out.backend = fn.backend  # the inputs', unless forward moved it (`to_device`)
        out.grad = None
        out._retains_grad = False
        out._hooks = None
        if requires_grad and switches.enabled:
            fn.inputs = inputs
            fn.sequence = next(_sequence)
            out.requires_grad = True
            out.grad_fn = fn
            if cls.needs_output:
                fn.output = weakref.ref(out)
        else:
            out.requires_grad = False
            out.grad_fn = None
        return out

    def forward(self, *arrays: Any, **params: Any) -> Any:
        raise NotImplementedError

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...] | Tensor:
        raise NotImplementedError

    @property
    def needs_input_grad(self) -> tuple[bool, ...]:
        """One bool per input: whether it requires a gradient (backward may return None for
        the others)."""
        return tuple(tensor.requires_grad for tensor in self.inputs)

    def explain_failure(self, *arrays) -> None:
        """Called when forward raised a ValueError: raise a clearer error naming this op and
        the shapes, where the op can tell what was wrong (else the original error stands)."""

    def backward_arrays(self, grad: Any) -> tuple[Any, ...]:
        """`backward` on `grad` made a Tensor, its gradients taken back as arrays: for an op
        that does not write its gradients on arrays (a gradient is made on its output's
        device, which `to_device`'s input is not on)."""
        grads = self.backward(Tensor._make(grad, backend_of_array(grad)))
        if isinstance(grads, Tensor):
            return (grads.data,)
        return tuple(None if grad is None else grad.data for grad in grads)

    def recompute(self) -> Any:
        raise NotImplementedError

    def constant(self, array) -> Tensor:
        """An array as a Tensor outside the graph (masks, counts)."""
        return Tensor._make(array, self.backend)


_apply = vars(Function)["apply"].__func__  # the function that Function's classmethod wraps


class BuiltinFunction(Function):
    """A Function of minigrad's op set: Python numbers and arrays among its positional
    inputs become constants (NumPy's `x * 2`), and what forward and backward return is not
    checked on every call (the generated tests check every op; the engine pays nothing)."""

    numbers_as_inputs = True
    checked = False


def _checking_forward(forward):
    """`forward` with an OpDefinitionError for a Tensor returned where an array goes."""

    @functools.wraps(forward)
    def checked_forward(self, *arrays, **params):
        data = forward(self, *arrays, **params)
        if isinstance(data, Tensor):
            raise OpDefinitionError(
                f"{type(self).__name__}: forward returned a Tensor; forward computes on "
                "arrays (its arguments are arrays, use self.xp) and returns an array")
        return data

    return checked_forward


def _checking_backward(backward):
    """`backward` with its result checked: one gradient per input (see `_checked_gradients`)."""

    @functools.wraps(backward)
    def checked_backward(self, grad):
        return _checked_gradients(self, backward(self, grad))

    return checked_backward


def _checking_backward_arrays(backward_arrays):
    """`backward_arrays` with its result checked: one array (or None) per input."""

    @functools.wraps(backward_arrays)
    def checked_backward_arrays(self, grad):
        grads = backward_arrays(self, grad)
        count = len(self.inputs)
        if not isinstance(grads, tuple) or len(grads) != count:
            raise OpDefinitionError(
                f"{type(self).__name__}: backward_arrays returned "
                f"{len(grads) if isinstance(grads, tuple) else 'a ' + type(grads).__name__}"
                f"{' gradients' if isinstance(grads, tuple) else ''} for {count} inputs; "
                "return a tuple of one array per input (None for an input that needs none)")
        for value in grads:
            if isinstance(value, Tensor):
                raise OpDefinitionError(
                    f"{type(self).__name__}: backward_arrays returned a Tensor; it computes on "
                    "arrays (grad is an array, use self.xp) and returns arrays")
        return grads

    return checked_backward_arrays


def _tensor_inputs(cls, inputs):
    """The inputs with every non-Tensor made a constant beside the first Tensor (minigrad's
    ops), or an OpDefinitionError naming the argument (other Functions)."""
    like = next((t for t in inputs if isinstance(t, Tensor)), None)
    if not cls.numbers_as_inputs:
        position, value = next((i, v) for i, v in enumerate(inputs) if not isinstance(v, Tensor))
        raise OpDefinitionError(
            f"{cls.__name__}: positional argument {position} is a {type(value).__name__}, not a "
            "Tensor; pass parameters by keyword (apply(x, scale=2.0) reaches "
            "forward(self, x, scale))")
    if like is None:
        raise OpDefinitionError(f"{cls.name}: needs at least one Tensor input, got "
                                f"{', '.join(type(v).__name__ for v in inputs) or 'none'}")
    return tuple(ensure_tensor(value, like) for value in inputs)


def _device_error(cls, inputs):
    return DeviceError(f"{cls.name}: inputs are on different devices "
                       f"({', '.join(t.device for t in inputs)}); move them with .to(device) "
                       "first")


def _not_floating(cls, tensor):
    return DTypeError(f"{cls.name}: needs floating-point inputs, got {tensor.dtype} with "
                      f"shape {tensor.shape}; convert with .astype('float32')")


def _check_forward_finite(fn, data, inputs):
    """Anomaly mode: where the op was created, and an AnomalyError for a NaN/Inf it made
    from finite inputs."""
    fn.created_at = _where_created()
    if not fn.creates_nonfinite and not _all_finite(fn.xp, data) and all(
            _all_finite(fn.xp, t.data) for t in inputs):
        raise AnomalyError(f"{fn.name}: forward produced NaN/Inf from finite inputs of shapes "
                           f"{[t.shape for t in inputs]}; op created at {fn.created_at}")


def _checked_gradients(fn, grads):
    """What a user-defined op's backward returned, as one gradient (a Tensor or None) per
    input, or an OpDefinitionError that says what is wrong. A bare Tensor is accepted as the
    gradient of a one-input op."""
    count = len(fn.inputs)
    if isinstance(grads, Tensor):
        if count == 1:
            return (grads,)
        raise OpDefinitionError(
            f"{type(fn).__name__}: backward returned one Tensor for an op of {count} inputs; "
            f"return a tuple of {count} gradients (None for an input that needs none)")
    if not isinstance(grads, (tuple, list)):
        raise _not_a_tensor(fn, grads)
    if len(grads) != count:
        raise OpDefinitionError(
            f"{type(fn).__name__}: backward returned {len(grads)} gradients for {count} "
            "inputs; return one per input, None for an input that needs none")
    for value in grads:
        if value is not None and not isinstance(value, Tensor):
            raise _not_a_tensor(fn, value)
    return grads


def _not_a_tensor(fn, value):
    return OpDefinitionError(
        f"{type(fn).__name__}: backward returned a {type(value).__module__}."
        f"{type(value).__name__} where a gradient goes; return Tensors, computed with minigrad "
        "ops from grad and self.inputs (or self.constant(array) for an array)")


_make_tensor = Tensor._make  # bound once: the hot path makes a tensor per op
