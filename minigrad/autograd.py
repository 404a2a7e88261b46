"""Reverse-mode automatic differentiation.

One differentiable op is one `Function` subclass: `forward` computes on backend arrays,
`backward` returns one gradient per input, written with minigrad Tensor ops (a gradient of a
broadcast shape is summed back to its input's shape by the engine). The backward pass runs
under `no_grad` (nothing is recorded, each op is a thin wrapper) unless `create_graph=True`,
in which case it is recorded like any forward pass and can itself be differentiated
(gradients of gradients).
"""

import itertools
import operator
import traceback
import weakref

from .errors import AnomalyError, DeviceError, DTypeError, GraphError, ShapeError

_sequence = itertools.count()  # creation numbers of recorded ops: a topological order
_data = operator.attrgetter("data")


class _GradMode:
    """Global switches read on every op (a class attribute lookup is the cheapest read)."""

    enabled = True
    anomaly = False


def is_grad_enabled():
    return _GradMode.enabled


def is_anomaly_enabled():
    """Whether `detect_anomaly` is on: also the mode in which checks that would make a GPU
    wait (ids in range) run on the GPU."""
    return _GradMode.anomaly


class _GradModeContext:
    """Base of `no_grad` / `enable_grad`: a context manager that is also a decorator."""

    mode = True

    def __enter__(self):
        self.previous = _GradMode.enabled
        _GradMode.enabled = self.mode

    def __exit__(self, *exc):
        _GradMode.enabled = self.previous
        return False

    def __call__(self, function):
        def wrapper(*args, **kwargs):
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

    def __enter__(self):
        self.previous = _GradMode.anomaly
        _GradMode.anomaly = True

    def __exit__(self, *exc):
        _GradMode.anomaly = self.previous
        return False


def _where_created():
    """The innermost stack frame outside minigrad: where the user called the op."""
    for frame in reversed(traceback.extract_stack()[:-2]):
        if "/minigrad/" not in frame.filename.replace("\\", "/"):
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
                                                   input's shape or one it broadcasts to;
                                                   inputs are `self.inputs`
    Class attributes: `name` (shown in errors, the registry and graphs), `float_only`
    (inputs must be floating point), `needs_output` (backward reads `self.output()`).
    """

    name = "function"
    float_only = False
    needs_output = False
    creates_nonfinite = False  # True where a NaN/Inf in the output can be intended (masked_fill)
    released = False

    @classmethod
    def apply(cls, *inputs, **params):
        """Run forward on the inputs' arrays and, when grad mode needs it, record the graph.

        Inputs that are not Tensors (Python numbers, arrays) become constants beside the
        first Tensor input (`2 * x`, `x + 1.0`). This is the hot path of the engine: every op
        of every forward and backward pass runs through it, so it is kept flat."""
        try:
            backend = inputs[0].backend
            requires_grad = False
            for tensor in inputs:
                if tensor.backend is not backend:
                    raise DeviceError(
                        f"{cls.name}: inputs are on different devices "
                        f"({', '.join(t.device for t in inputs)}); move them with .to(device) "
                        "first")
                if tensor.requires_grad:
                    requires_grad = True
        except AttributeError:  # a number or an array among the inputs
            return cls.apply(*_constants_beside(inputs), **params)
        if cls.float_only:
            for tensor in inputs:
                if tensor.data.dtype.kind != "f":
                    raise DTypeError(
                        f"{cls.name}: needs floating-point inputs, got {tensor.dtype} "
                        f"with shape {tensor.shape}; convert with .astype('float32')"
                    )
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
            fn.created_at = _where_created()
            if not cls.creates_nonfinite and not _all_finite(fn.xp, data) and all(
                _all_finite(fn.xp, t.data) for t in inputs
            ):
                raise AnomalyError(
                    f"{cls.name}: forward produced NaN/Inf from finite inputs of shapes "
                    f"{[t.shape for t in inputs]}; op created at {fn.created_at}"
                )
        return out

    def forward(self, *arrays, **params):
        raise NotImplementedError

    def backward(self, grad):
        raise NotImplementedError

    def explain_failure(self, *arrays):
        """Called when forward raised a ValueError: raise a clearer error naming this op and
        the shapes, where the op can tell what was wrong (else the original error stands)."""

    def saved(self, arrays, recompute):
        """Values forward kept (an array or a tuple of arrays), as Tensors for backward: the kept
        arrays when backward is not recorded (fast), recomputed from the inputs with minigrad
        ops when it is (so they are connected to the graph and can be differentiated again)."""
        if _GradMode.enabled:
            return recompute()
        if isinstance(arrays, tuple):
            return tuple(Tensor._make(a, self.backend) for a in arrays)
        return Tensor._make(arrays, self.backend)

    def constant(self, array):
        """An array as a Tensor outside the graph (masks, counts)."""
        return Tensor._make(array, self.backend)



def _constants_beside(inputs):
    """The inputs of an op with every non-Tensor made a constant beside the first Tensor."""
    like = next((t for t in inputs if isinstance(t, Tensor)), None)
    if like is None:
        raise TypeError(f"an op needs at least one Tensor input, got {inputs!r}")
    return tuple(ensure_tensor(value, like) for value in inputs)


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
    """The tensors in `order` (a backward order) through which a gradient can reach one of
    `targets`."""
    useful = set(targets)
    for tensor in reversed(order):
        fn = tensor.grad_fn
        if fn is not None and any(parent in useful for parent in fn.inputs):
            useful.add(tensor)
    return useful


def _check_root(root, gradient):
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


def run_backward(roots, gradients, retain_graph=False, create_graph=False, inputs=None):
    """The backward pass from `roots` (seeded with `gradients`).

    With `inputs=None`, gradients accumulate into the `.grad` of every leaf (and of tensors
    that `retain_grad()`); otherwise they are returned, one per input, and `.grad` is untouched.
    """
    seeds = [_check_root(root, g) for root, g in zip(roots, gradients)]
    order = _backward_order(roots)
    wanted = None if inputs is None else set(inputs)
    useful = None if wanted is None else _leading_to(order, wanted)
    grads = {}  # tensor -> the gradient flowing into it, summed over its consumers
    sums = set()  # gradients in `grads` that are sums made here, referenced nowhere else
    found, handed_out = {}, set()
    for root, seed in zip(roots, seeds):
        _accumulate(grads, sums, root, seed, create_graph)

    previous_mode, anomaly = _GradMode.enabled, _GradMode.anomaly
    _GradMode.enabled = create_graph
    _GradMode.anomaly = False  # the ops inside a backward are checked as that op's backward
    try:
        for tensor in order:
            grad = grads.pop(tensor, None)
            if grad is None or (useful is not None and tensor not in useful):
                continue
            if grad.backend.activate is not None:  # the gradient's GPU, for the array work below
                grad.backend.activate()
            if sums:
                sums.discard(grad)  # from here on it may be shared (backward can pass it on)
            if tensor._hooks:
                for hook in list(tensor._hooks.values()):
                    replaced = hook(grad)
                    if replaced is not None:
                        grad = replaced
            if wanted is not None and tensor in wanted:
                found[tensor] = grad
            fn = tensor.grad_fn
            if wanted is None and (fn is None or tensor._retains_grad):
                if tensor.grad is not None:
                    tensor.grad = _added(tensor.grad, grad, create_graph)
                else:
                    tensor.grad = grad if create_graph else _owned(grad, handed_out)
            if fn is None:
                continue
            for parent, parent_grad in zip(fn.inputs, fn.backward(grad)):
                if parent_grad is None or not parent.requires_grad:
                    continue
                if parent_grad.data.shape != parent.data.shape:
                    parent_grad = unbroadcast(parent_grad, parent.data.shape, fn.name)
                if anomaly and not _all_finite(fn.xp, parent_grad.data):
                    raise AnomalyError(
                        f"{fn.name}: backward produced NaN/Inf in the gradient of an input of "
                        f"shape {parent.shape}; op created at "
                        f"{getattr(fn, 'created_at', 'unknown (enable anomaly mode earlier)')}"
                    )
                if parent in grads:
                    _accumulate(grads, sums, parent, parent_grad, create_graph)
                else:
                    grads[parent] = parent_grad
            if not retain_graph:  # free what backward needed: the graph above is gone
                fn.__dict__.clear()
                fn.released = True
    finally:
        _GradMode.enabled, _GradMode.anomaly = previous_mode, anomaly
    return found


def _accumulate(grads, sums, key, grad, create_graph):
    """grads[key] += grad. Gradients reaching one tensor from several consumers are summed:
    recorded (an `add` op) when the backward pass is; else as arrays, the third consumer's
    on into the sum made for the second in place (no new array per consumer)."""
    accumulated = grads.get(key)
    if accumulated is None:
        grads[key] = grad
    elif accumulated in sums:  # only ever filled when the pass is not recorded
        accumulated.data += grad.data
    else:
        total = grads[key] = _added(accumulated, grad, create_graph)
        if not create_graph:
            sums.add(total)


def _added(accumulated, grad, create_graph):
    """accumulated + grad as a new tensor: recorded when the pass is, else plain arrays."""
    if create_graph:
        return accumulated + grad
    return Tensor._make(accumulated.data + grad.data, grad.backend)


def _owned(grad, handed_out):
    """A gradient a tensor's `.grad` can own: not a view, writable, not given to another
    tensor in this pass (so editing one `.grad` in place never changes another's)."""
    data = grad.data
    if grad in handed_out or not grad.backend.owns(data):
        grad = Tensor._make(data.copy(), grad.backend)
    handed_out.add(grad)
    return grad


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=False):
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
    found = run_backward(outputs, grad_outputs, retain_graph, create_graph, inputs)
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


from .ops.broadcasting import unbroadcast  # noqa: E402
from .tensor import Tensor, ensure_tensor  # noqa: E402  (Tensor's methods call in here)

_make_tensor = Tensor._make  # bound once: the hot path makes a tensor per op
