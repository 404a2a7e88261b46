"""Reverse-mode automatic differentiation.

One differentiable op is one `Function` subclass: `forward` computes on backend arrays,
`backward` returns one gradient per input, written with minigrad Tensor ops (a gradient of a
broadcast shape is summed back to its input's shape by the engine). The backward pass runs
under `no_grad` (nothing is recorded, each op is a thin wrapper) unless `create_graph=True`,
in which case it is recorded like any forward pass and can itself be differentiated
(gradients of gradients). An op that also defines `backward_arrays` (the same gradients on
arrays: the fused ops) has it called instead when the pass is not recorded; the engine makes
that choice, never the op. How an op is declared and checked: docs/extending.md.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import operator
import traceback
import weakref
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from .errors import (
    AnomalyError,
    DeviceError,
    DTypeError,
    GraphError,
    OpDefinitionError,
    ShapeError,
)
from .tensor import Tensor, ensure_tensor

_sequence = itertools.count()  # creation numbers of recorded ops: a topological order
_data = operator.attrgetter("data")
_P = ParamSpec("_P")  # a function decorated with no_grad / enable_grad: its parameters
_R = TypeVar("_R")  # and its result


class _GradMode:
    """Global switches read on every op (a class attribute lookup is the cheapest read)."""

    enabled = True
    anomaly = False


def is_grad_enabled() -> bool:
    return _GradMode.enabled


def is_anomaly_enabled() -> bool:
    """Whether `detect_anomaly` is on: also the mode in which checks that would make a GPU
    wait (ids in range) run on the GPU."""
    return _GradMode.anomaly


class _GradModeContext:
    """Base of `no_grad` / `enable_grad`: a context manager that is also a decorator."""

    mode = True

    def __enter__(self) -> None:
        self.previous = _GradMode.enabled
        _GradMode.enabled = self.mode

    def __exit__(self, *exc) -> None:
        _GradMode.enabled = self.previous

    def __call__(self, function: Callable[_P, _R]) -> Callable[_P, _R]:
        def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            with type(self)():
                return function(*args, **kwargs)

        wrapper.__name__ = function.__name__
        wrapper.__doc__ = function.__doc__
        return wrapper


class no_grad(_GradModeContext):
    """Record nothing inside this block: no graph, no saved arrays (inference, updates)."""

    mode = False


class enable_grad(_GradModeContext):
    """Record the graph inside this block even within `no_grad`."""

    mode = True


class detect_anomaly:
    """Inside this block, the first op whose forward or backward makes a NaN/Inf raises
    `AnomalyError`, naming the op and the line of user code that created it; and on a GPU,
    ids of embeddings and targets of cross-entropy are checked to be in range (a read by the
    host each, which a GPU step otherwise never makes)."""

    def __enter__(self) -> None:
        self.previous = _GradMode.anomaly
        _GradMode.anomaly = True

    def __exit__(self, *exc) -> None:
        _GradMode.anomaly = self.previous


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
                                                   only what backward needs
      backward(self, grad) -> tuple               one Tensor (or None) per input, of its
                                                   input's shape or one it broadcasts to,
                                                   written in Tensor ops (differentiable
                                                   again); inputs are `self.inputs`, and
                                                   `self.needs_input_grad` says which need one
    and may define:
      backward_arrays(self, grad) -> tuple        the same gradients on arrays (`grad` an
                                                   array; one array or None per input): the
                                                   engine calls it instead of `backward` when
                                                   the backward pass is not recorded
      recompute(self)                             forward's values that `backward` reads, again
                                                   in Tensor ops from `self.inputs` (forward's
                                                   own arrays are not in the graph)
    Class attributes: `name` (shown in errors, the op table and graphs), `float_only`
    (inputs must be floating point), `needs_output` (backward reads `self.output()`),
    `creates_nonfinite` (a NaN/Inf in the output can be intended: anomaly mode lets it pass),
    `numbers_as_inputs` (Python numbers and arrays among the positional inputs become
    constants beside the first Tensor, NumPy's `x * 2`: on for minigrad's own ops; off for
    Functions defined elsewhere, where such an argument is refused: pass it by keyword),
    `checked` (the class's forward and backward are wrapped so that what they return is
    checked on every call, and a mistake gets an error that says what to do: on for
    Functions defined outside minigrad; minigrad's own are checked by its tests, and cost the
    engine nothing). A one-input op's backward may return a bare Tensor instead of a 1-tuple.
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
    numbers_as_inputs = True
    checked = False
    released = False
    has_backward_arrays = False  # set for each class: whether it defines backward_arrays

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:
            raise OpDefinitionError(
                f"{cls.__name__}: a Function defines no __init__ (apply makes one object per "
                "call without running it); take parameters as keyword arguments of forward "
                "and keep what backward needs on self there")
        if "name" not in cls.__dict__:
            cls.name = cls.__name__  # shown in errors, graphs and the op table
        builtin = cls.__module__.split(".")[0] == "minigrad"
        for flag, value in (("numbers_as_inputs", builtin), ("checked", not builtin)):
            if flag not in cls.__dict__:
                setattr(cls, flag, value)
        cls.has_backward_arrays = cls.backward_arrays is not Function.backward_arrays
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
        for tensor in inputs:
            if type(tensor) is not Tensor and not isinstance(tensor, Tensor):
                return cls.apply(*_tensor_inputs(cls, inputs), **params)
            if tensor.backend is not backend:
                if backend is not None:
                    raise _device_error(cls, inputs)
                backend = tensor.backend
            if tensor.requires_grad:
                requires_grad = True
        if backend is None:
            raise OpDefinitionError(f"{cls.name}: apply was called without a Tensor input; "
                                    "pass the tensors positionally, parameters by keyword")
        if cls.float_only:
            _check_floating(cls, inputs)
        fn = object.__new__(cls)
        fn.backend = backend
        fn.xp = backend.xp
        if backend.activate is not None:  # a GPU: make it CuPy's current device
            backend.activate()
        try:  # unpacking (* of a map, ** even of an empty dict) costs more than a small ufunc
            if len(inputs) == 1:
                x = inputs[0].data
                data = fn.forward(x, **params) if params else fn.forward(x)
            elif len(inputs) == 2 and not params:
                data = fn.forward(inputs[0].data, inputs[1].data)
            else:
                data = fn.forward(*map(_data, inputs), **params)
        except ValueError:
            fn.explain_failure(*map(_data, inputs))
            raise
        if requires_grad and _GradMode.enabled:
            fn.inputs = inputs
            fn.sequence = next(_sequence)
            out = _make_tensor(data, backend, True, fn)
            if cls.needs_output:
                fn.output = weakref.ref(out)
        else:
            out = _make_tensor(data, backend)
        if _GradMode.anomaly:
            _check_forward_finite(fn, data, inputs)
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
        raise NotImplementedError

    def recompute(self) -> Any:
        raise NotImplementedError

    def constant(self, array) -> Tensor:
        """An array as a Tensor outside the graph (masks, counts)."""
        return Tensor._make(array, self.backend)


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


def _check_floating(cls, inputs):
    for tensor in inputs:
        if tensor.data.dtype.kind != "f":
            raise DTypeError(f"{cls.name}: needs floating-point inputs, got {tensor.dtype} "
                             f"with shape {tensor.shape}; convert with .astype('float32')")


def _check_forward_finite(fn, data, inputs):
    """Anomaly mode: where the op was created, and an AnomalyError for a NaN/Inf it made
    from finite inputs."""
    fn.created_at = _where_created()
    if not fn.creates_nonfinite and not _all_finite(fn.xp, data) and all(
            _all_finite(fn.xp, t.data) for t in inputs):
        raise AnomalyError(f"{fn.name}: forward produced NaN/Inf from finite inputs of shapes "
                           f"{[t.shape for t in inputs]}; op created at {fn.created_at}")


# ----- the backward pass ------------------------------------------------------------------------

def run_backward(roots, gradients, retain_graph=False, create_graph=False,
                 inputs=None) -> dict | None:
    """The backward pass from `roots` (seeded with `gradients`).

    With `inputs=None`, gradients accumulate into the `.grad` of every leaf (and of tensors
    that `retain_grad()`); otherwise they are returned, one per input, and `.grad` is untouched.
    Steps: seed the roots, order the graph (newest op first), prune it to what reaches
    `inputs`, then visit it (`_visit`) with recording switched to `create_graph`."""
    seeds = [_seed(root, gradient) for root, gradient in zip(roots, gradients)]
    order = _backward_order(roots)
    wanted = None
    if inputs is not None:
        wanted = set(inputs)
        order = _leading_to(order, wanted)
    pending = _PendingGradients(create_graph)
    for root, seed in zip(roots, seeds):
        pending.add(root, seed)
    previous_mode, anomaly = _GradMode.enabled, _GradMode.anomaly
    _GradMode.enabled = create_graph
    _GradMode.anomaly = False  # the ops inside a backward are checked as that op's backward
    try:
        return _visit(order, pending, wanted, retain_graph, anomaly)
    finally:
        _GradMode.enabled, _GradMode.anomaly = previous_mode, anomaly


def _visit(order, pending, wanted, retain_graph, anomaly):
    """Each tensor in backward order: its summed gradient through its hooks, delivered (to
    `.grad`, or to the result when `wanted`), then through its op's backward to the op's
    inputs, each gradient summed back to its input's shape; then the op's saved arrays are
    released. The hot loop of the engine: the common steps are written out, the others are
    calls."""
    found: dict = {}
    handed_out: set[Tensor] = set()
    sums, on_arrays = pending.sums, not pending.create_graph
    for tensor in order:
        grad = pending.pop(tensor, None)
        if grad is None:
            continue
        if sums:
            sums.discard(grad)  # from here on it may be shared: backward can pass it on
        if grad.backend.activate is not None:  # the gradient's GPU, for the work below
            grad.backend.activate()
        if tensor._hooks:
            grad = _run_hooks(tensor, grad)
        fn = tensor.grad_fn
        if wanted is not None:
            if tensor in wanted:
                found[tensor] = grad
        elif fn is None or tensor._retains_grad:
            _deliver(tensor, grad, pending.create_graph, handed_out)
        if fn is None:
            continue
        if on_arrays and fn.has_backward_arrays:
            grads = _as_tensors(fn.backward_arrays(grad.data), fn.backend)
        else:
            grads = fn.backward(grad)
        for parent, parent_grad in zip(fn.inputs, grads):
            if parent_grad is None or not parent.requires_grad:
                continue
            if parent_grad.data.shape != parent.data.shape:
                parent_grad = unbroadcast(parent_grad, parent.data.shape, fn.name)
            if anomaly:
                _check_backward_finite(fn, parent, parent_grad)
            if parent in pending:
                pending.add(parent, parent_grad)
            else:  # the first gradient for this input, stored as it is
                pending[parent] = parent_grad
        if not retain_graph:  # free what backward needed: the graph above is gone
            fn.__dict__.clear()
            fn.released = True
    return found


def _as_tensors(arrays, backend):
    """What a backward_arrays returned, as Tensors outside the graph (None stays None)."""
    return [None if array is None else _make_tensor(array, backend) for array in arrays]


def _seed(root, gradient):
    """The gradient a root starts with: ones for a single value, else the one given."""
    if not root.requires_grad:
        raise GraphError(
            f"backward: this tensor (shape {root.shape}) does not require grad; "
            "it was computed from tensors without requires_grad=True, or under no_grad()"
        )
    if gradient is None:
        if root.size != 1:
            raise GraphError(
                f"backward: the output has shape {root.shape}, not a single value; pass the "
                "gradient of the loss with respect to it (backward(gradient)), or reduce it "
                "first (e.g. .sum() or .mean())"
            )
        if root.backend.activate is not None:
            root.backend.activate()
        return Tensor._make(root.backend.xp.ones(root.shape, dtype=root.dtype), root.backend)
    if not isinstance(gradient, Tensor):
        gradient = Tensor(gradient, dtype=root.dtype, device=root.device)
    if gradient.shape != root.shape:
        raise ShapeError(
            f"backward: gradient of shape {gradient.shape} for an output of shape {root.shape}"
        )
    return gradient


def _creation_order(tensor):
    """Ops are numbered as they are created, so an op's inputs always have smaller numbers;
    leaves come last of all in the backward order."""
    fn = tensor.grad_fn
    return -1 if fn is None else fn.sequence


def _backward_order(roots):
    """Tensors reachable from the roots through grad_fn, every tensor before the inputs of the
    op that made it: collected by an iterative walk (a chain of 100,000 ops needs no
    recursion), then sorted by op creation number, newest first."""
    reached, seen, stack = [], set(), list(roots)
    while stack:
        tensor = stack.pop()
        if tensor in seen:
            continue
        seen.add(tensor)
        reached.append(tensor)
        fn = tensor.grad_fn
        if fn is not None:
            if fn.released:
                raise GraphError(
                    f"backward through a graph that was already freed (at op '{fn.name}'): "
                    "call backward(retain_graph=True) the first time if you need to go "
                    "backward through the same graph again"
                )
            for parent in fn.inputs:
                if parent.requires_grad and parent not in seen:
                    stack.append(parent)
    reached.sort(key=_creation_order, reverse=True)
    return reached


def _leading_to(order, targets):
    """The tensors of `order` (a backward order) through which a gradient can reach one of
    `targets`, in the same order."""
    useful = set(targets)
    for tensor in reversed(order):
        fn = tensor.grad_fn
        if fn is not None and any(parent in useful for parent in fn.inputs):
            useful.add(tensor)
    return [tensor for tensor in order if tensor in useful]


def _run_hooks(tensor, grad):
    """The tensor's hooks in order, each seeing the gradient the one before returned."""
    for hook in list(tensor._hooks.values()):
        replaced = hook(grad)
        if replaced is not None:
            grad = replaced
    return grad


def _deliver(tensor, grad, create_graph, handed_out) -> None:
    """Add `grad` to `tensor.grad` (a leaf, or a tensor that retains its gradient)."""
    if tensor.grad is not None:
        tensor.grad = _added(tensor.grad, grad, create_graph)
    else:
        tensor.grad = grad if create_graph else _owned(grad, handed_out)


def _check_backward_finite(fn, parent, parent_grad):
    if not _all_finite(fn.xp, parent_grad.data):
        raise AnomalyError(
            f"{fn.name}: backward produced NaN/Inf in the gradient of an input of shape "
            f"{parent.shape}; op created at "
            f"{getattr(fn, 'created_at', 'unknown (enable anomaly mode earlier)')}")


def unbroadcast(grad, shape, name) -> Tensor:
    """Sum `grad` over the axes that broadcasting added or stretched, back to `shape` (a tuple):
    the step for an input of op `name` whose backward gave a gradient of the
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


class _PendingGradients(dict):
    """tensor -> the gradient flowing into it, summed over its consumers, until it is visited.

    When the pass is recorded (`create_graph`), sums are `add` ops. Otherwise they are array
    sums, and from the third consumer on the gradient is added in place into the sum made for
    the second: `sums` holds the gradients made here and referenced nowhere else, the only ones
    that may be written to (a gradient an op's backward gave may be shared: `add` passes one
    gradient to both its inputs); the engine takes a gradient out of `sums` when it visits its
    tensor, as backward may then pass it on. A dict itself, so that the common steps (the
    first gradient for a tensor, taking it) are plain dict operations."""

    __slots__ = ("sums", "create_graph")

    def __init__(self, create_graph) -> None:
        super().__init__()
        self.sums: set = set()
        self.create_graph = create_graph

    def add(self, tensor, grad) -> None:
        accumulated = self.get(tensor)
        if accumulated is None:
            self[tensor] = grad
        elif accumulated in self.sums:
            accumulated.data += grad.data
        else:
            total = self[tensor] = _added(accumulated, grad, self.create_graph)
            if not self.create_graph:
                self.sums.add(total)



def _added(accumulated, grad, create_graph):
    """accumulated + grad as a new tensor: recorded when the pass is, else plain arrays."""
    if create_graph:
        return accumulated + grad
    return Tensor._make(accumulated.data + grad.data, grad.backend)


def _owned(grad, handed_out):
    """A gradient a tensor's `.grad` can own: not a view, writable, not given to another
    tensor in this pass (so editing one `.grad` in place, as optimizers and the distributed
    reducer do, never changes another's)."""
    data = grad.data
    if grad in handed_out or not grad.backend.owns(data):
        grad = Tensor._make(data.copy(), grad.backend)
    handed_out.add(grad)
    return grad


def backward(self, gradient=None, retain_graph=False, create_graph=False) -> None:
    """Accumulate d(self)/d(leaf) into every leaf's `.grad`."""
    run_backward([self], [gradient], retain_graph, create_graph)


Tensor.backward = backward  # the engine completes the Tensor: tensor.py knows nothing of it


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=False) -> tuple[Tensor, ...]:
    """Gradients of `outputs` with respect to `inputs`, returned as a tuple (`.grad` untouched).

    As `torch.autograd.grad`: `grad_outputs` seeds non-scalar outputs; `create_graph=True`
    records the backward pass so the result can be differentiated again."""
    single_output = isinstance(outputs, Tensor)
    outputs = [outputs] if single_output else list(outputs)
    inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    elif isinstance(grad_outputs, Tensor):
        grad_outputs = [grad_outputs]
    if retain_graph is None:
        retain_graph = create_graph
    for tensor in inputs:
        if not tensor.requires_grad:
            raise GraphError(f"grad: an input of shape {tensor.shape} does not require grad")
    found: Any = run_backward(outputs, grad_outputs, retain_graph, create_graph, inputs)
    result = []
    for tensor in inputs:
        g = found.get(tensor)
        if g is None:
            if not allow_unused:
                raise GraphError(
                    f"grad: an input of shape {tensor.shape} is not used to compute the "
                    "outputs; pass allow_unused=True to get None for it"
                )
        result.append(g)
    return tuple(result)


_make_tensor = Tensor._make  # bound once: the hot path makes a tensor per op
