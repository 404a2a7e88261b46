"""The backward pass: seed the roots, then visit the graph newest op first (a heap of the
tensors that have a gradient waiting, keyed by their op's creation number), each op's
gradients summed back to its inputs' shapes and summed over their consumers
(`_visit`'s `pending`); with `inputs`, only what reaches them. `Tensor.backward` and `grad`
run it.

A pass that is recorded (`create_graph`) carries its gradients as Tensors and calls each
op's `backward`, so that it can be differentiated again. A pass that is not (the training
step's) carries them as arrays and calls `backward_arrays` where the op defines it (its
`backward` on a Tensor made for the call otherwise): no graph, and no Tensor for a gradient
until one is handed to a hook, a `.grad` or the caller."""

from __future__ import annotations

from heapq import heappop, heappush
from typing import Any

from ..errors import AnomalyError, GraphError, ShapeError
from ..tensor import Tensor
from .function import _all_finite, _make_tensor
from .grad_mode import switches


def run_backward(roots, gradients, retain_graph=False, create_graph=False,
                 inputs=None) -> dict | None:
    """The backward pass from `roots` (seeded with `gradients`).

    With `inputs=None`, gradients accumulate into the `.grad` of every leaf (and of tensors
    that `retain_grad()`); otherwise they are returned, one per input, and `.grad` is untouched.
    Steps: seed the roots, find what reaches `inputs` (when given), then visit the graph
    (`_visit`) with recording switched to `create_graph`."""
    seeds = [_seed(root, gradient) for root, gradient in zip(roots, gradients)]
    if not create_graph:
        seeds = [seed.data for seed in seeds]
    wanted = useful = None
    if inputs is not None:
        wanted = set(inputs)
        useful = _leading_to(_backward_order(roots), wanted)
    previous_mode, anomaly = switches.enabled, switches.anomaly
    switches.enabled = create_graph
    switches.anomaly = False  # the ops inside a backward are checked as that op's backward
    try:
        found = _visit(roots, seeds, create_graph, wanted, useful, retain_graph, anomaly)
    finally:
        switches.enabled, switches.anomaly = previous_mode, anomaly
    if create_graph:
        return found
    return {tensor: _make_tensor(grad, tensor.backend) for tensor, grad in found.items()}


def _visit(roots, seeds, create_graph, wanted, useful, retain_graph, anomaly):
    """Each tensor with a gradient waiting, newest op first (so every consumer of a tensor is
    visited before it: ops are numbered as they are created), the leaves last: its summed
    gradient through its hooks, delivered (to `.grad`, or to the result when `wanted`), then
    through its op's backward to the op's inputs, each gradient summed back to its input's
    shape; then, unless `retain_graph`, the op lets go of its inputs, so that the graph above
    it, and what its ops saved, is freed once nothing else holds it (the roots' ops drop what
    they saved at the end). The hot loop of the engine: the common steps are written out, the
    others are calls.

    `pending` maps a tensor to the gradient flowing into it (an array, or a Tensor when the
    pass is recorded), summed over its consumers, until it is visited. When the pass is
    recorded, sums are `add` ops. Otherwise they are array sums, and from the third consumer on
    the gradient is added in place into the sum made for the second, which is kept in a
    `_Sum` to tell it from a gradient an op's backward gave: that one may be shared (`add`
    passes one gradient to both its inputs) and is never written to."""
    found: dict = {}
    pending: dict = {}
    on_arrays = not create_graph
    handed_out: set[int] = set()  # the ids of the arrays given to a `.grad` in this pass
    # heap of (-op number, tensor) for the tensors ops made; an op makes one tensor, so no two
    # entries have the same number (the tensors themselves are never compared)
    waiting: list = []
    leaves: list = []  # the leaves with a gradient, in the order reached
    for root, seed in zip(roots, seeds):
        if useful is not None and root not in useful:
            continue
        if root in pending:  # a root given twice
            pending[root] = pending[root] + seed
        else:
            pending[root] = seed
            _wait(root, waiting, leaves)
    while waiting:
        tensor = heappop(waiting)[1]
        grad = pending.pop(tensor)
        if type(grad) is _Sum:
            grad = grad.array  # from here on it may be shared: backward passes it on
        fn = tensor.grad_fn
        if fn.inputs is None:
            raise _freed(fn)
        backend = tensor.backend  # the gradient's (an op's output may be on another device)
        if backend.activate is not None:  # its GPU, for the work below
            backend.activate()
        if tensor._hooks:
            grad = _run_hooks(tensor, grad, on_arrays)
        if wanted is not None:
            if tensor in wanted:
                found[tensor] = grad
        elif tensor._retains_grad:
            _deliver(tensor, grad, on_arrays, handed_out)
        grads = fn.backward_arrays(grad) if on_arrays else fn.backward(grad)
        for parent, parent_grad in zip(fn.inputs, grads):
            if parent_grad is None or not parent.requires_grad:
                continue
            if parent_grad.shape != parent.data.shape:
                parent_grad = unbroadcast(parent_grad, parent.data.shape, fn.name)
            if anomaly:
                _check_backward_finite(fn, parent, parent_grad)
            accumulated = pending.get(parent)
            if accumulated is not None:  # a later consumer's: summed
                if type(accumulated) is _Sum:
                    accumulated.array += parent_grad
                elif on_arrays:
                    pending[parent] = _Sum(accumulated + parent_grad)
                else:
                    pending[parent] = accumulated + parent_grad
            elif useful is None or parent in useful:  # the first gradient, stored as it is
                pending[parent] = parent_grad
                parent_fn = parent.grad_fn
                if parent_fn is None:
                    leaves.append(parent)
                else:
                    heappush(waiting, (-parent_fn.sequence, parent))
        if not retain_graph:
            fn.inputs = None
    if not retain_graph:
        _release_roots(roots)
    for leaf in leaves:
        grad = pending.pop(leaf)
        if type(grad) is _Sum:
            grad = grad.array
        if leaf.backend.activate is not None:
            leaf.backend.activate()
        if leaf._hooks:
            grad = _run_hooks(leaf, grad, on_arrays)
        if wanted is not None:
            if leaf in wanted:
                found[leaf] = grad
        else:
            _deliver(leaf, grad, on_arrays, handed_out)
    return found


def _release_roots(roots) -> None:
    """The visited roots' ops drop all they saved: the caller holds their outputs (the loss),
    which would keep it until the next step otherwise."""
    for root in roots:
        fn = root.grad_fn
        if fn is not None and fn.inputs is None:
            sequence = fn.sequence
            fn.__dict__.clear()
            fn.inputs, fn.sequence = None, sequence  # what a later pass reads: freed


def _wait(tensor, waiting, leaves) -> None:
    """Put a tensor that just got its first gradient in line to be visited."""
    fn = tensor.grad_fn
    if fn is None:
        leaves.append(tensor)
    else:
        heappush(waiting, (-fn.sequence, tensor))


def _freed(fn):
    return GraphError(
        f"backward through a graph that was already freed (at op '{fn.name}'): call "
        "backward(retain_graph=True) the first time if you need to go backward through the "
        "same graph again")


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


def _backward_order(roots):
    """Tensors reachable from the roots through grad_fn, every tensor before the inputs of the
    op that made it: collected by an iterative walk (a chain of 100,000 ops needs no
    recursion); ops are numbered as they are created, so an op's inputs always have smaller
    numbers: the tensors ops made, newest op first, then the leaves, in the order reached."""
    made: dict = {}  # op creation number -> the tensor it made
    leaves, seen, stack = [], set(), list(roots)
    while stack:
        tensor = stack.pop()
        if tensor in seen:
            continue
        seen.add(tensor)
        fn = tensor.grad_fn
        if fn is None:
            leaves.append(tensor)
            continue
        if fn.inputs is None:
            raise _freed(fn)
        made[fn.sequence] = tensor
        for parent in fn.inputs:
            if parent.requires_grad and parent not in seen:
                stack.append(parent)
    order = [made[number] for number in sorted(made, reverse=True)]
    order += leaves
    return order


def _leading_to(order, targets):
    """The tensors of `order` (a backward order) through which a gradient can reach one of
    `targets`, as a set (the targets included)."""
    useful = set(targets)
    for tensor in reversed(order):
        fn = tensor.grad_fn
        if fn is not None and any(parent in useful for parent in fn.inputs):
            useful.add(tensor)
    return useful


def _run_hooks(tensor, grad, on_arrays):
    """The tensor's hooks in order, each seeing (as a Tensor) the gradient the one before
    returned."""
    if on_arrays:
        grad = _make_tensor(grad, tensor.backend)
    for hook in list(tensor._hooks.values()):
        replaced = hook(grad)
        if replaced is not None:
            grad = replaced
    return grad.data if on_arrays else grad


def _deliver(tensor, grad, on_arrays, handed_out) -> None:
    """Add `grad` to `tensor.grad` (a leaf, or a tensor that retains its gradient): a new
    Tensor, never the one `.grad` held, which the caller may still use."""
    if not on_arrays:
        tensor.grad = grad if tensor.grad is None else tensor.grad + grad
    elif tensor.grad is not None:
        tensor.grad = _make_tensor(tensor.grad.data + grad, tensor.backend)
    else:
        tensor.grad = _make_tensor(_owned(grad, tensor.backend, handed_out), tensor.backend)


def _check_backward_finite(fn, parent, parent_grad):
    if not _all_finite(fn.xp, parent_grad.data if isinstance(parent_grad, Tensor) else
                       parent_grad):
        raise AnomalyError(
            f"{fn.name}: backward produced NaN/Inf in the gradient of an input of shape "
            f"{parent.shape}; op created at "
            f"{getattr(fn, 'created_at', 'unknown (enable anomaly mode earlier)')}")


def unbroadcast(grad, shape, name) -> Tensor:
    """Sum `grad` over the axes that broadcasting added or stretched, back to `shape` (a tuple):
    the step for an input of op `name` whose backward gave a gradient of the
    broadcast shape. A gradient no broadcasting of `shape` explains is a ShapeError.

    `grad` is an array or a Tensor: the calls are the same, and recorded on a Tensor under
    create_graph."""
    extra = grad.ndim - len(shape)
    if extra < 0 or any(size not in (1, wanted) for size, wanted in zip(shape, grad.shape[extra:])):
        raise ShapeError(
            f"{name}: backward gave a gradient of shape {grad.shape} for an input of shape "
            f"{shape} (a bug in this op's backward)")
    axes = tuple(range(extra)) + tuple(
        extra + i for i, size in enumerate(shape) if size == 1 and grad.shape[extra + i] != 1)
    summed = grad.sum(axis=axes, keepdims=True) if axes else grad
    return summed.reshape(shape)


class _Sum:
    """A sum of gradients that a backward pass made and that nothing else holds: the pass adds
    later gradients into it in place (NumPy gives a new scalar for a 0-d array: `+=` on the
    attribute stores it)."""

    __slots__ = ("array",)

    def __init__(self, array) -> None:
        self.array = array


def _owned(grad, backend, handed_out):
    """A gradient array a tensor's `.grad` can own: not a view, writable, not given to
    another tensor in this pass (so editing one `.grad` in place, as optimizers and the
    distributed reducer do, never changes another's): a copy where it is not, which also
    makes a NumPy scalar (what NumPy's arithmetic gives on 0-d arrays) a 0-d array."""
    if id(grad) in handed_out or not backend.owns(grad):
        grad = backend.xp.array(grad)
    handed_out.add(id(grad))
    return grad


def backward(self, gradient=None, retain_graph=False, create_graph=False) -> None:
    """Accumulate d(self)/d(leaf) into every leaf's `.grad`."""
    run_backward([self], [gradient], retain_graph, create_graph)


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
