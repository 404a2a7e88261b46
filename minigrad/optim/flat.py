"""The optimizers' multi-tensor path for a GPU: a group's parameters in one flat array.

Updating parameter by parameter costs a dozen kernel launches per parameter tensor (Adam
over base's 190 tensors: about 2,300 launches, each a fixed cost of a GPU's time whatever
its size). On a GPU the parameters of a group (one device, one dtype, each with a gradient and
the same step count) are kept in one flat array, each parameter's `.data` a view of its
part (the state buffers likewise), so one update on the flat arrays, the same update
function the CPU runs per parameter, updates them all: about fifteen launches in all.

The parameters' arrays are replaced by views once, at the first step (and again if a
parameter's or a state's array was replaced since, as loading a checkpoint may do); the
values are never changed by it. The CPU keeps its per-parameter updates, which measured
faster there (each block fits in cache, `backend/blockwise.py`).
"""

import weakref
from typing import Any

from ..tensor import Tensor

# the FlatGroups alive (ExponentialMovingAverage follows them)
_groups: "weakref.WeakSet[FlatGroup]" = weakref.WeakSet()


def _views(flat, arrays):
    """Views of `flat` with the shapes of `arrays`, back to back."""
    views, offset = [], 0
    for array in arrays:
        views.append(flat[offset:offset + array.size].reshape(array.shape))
        offset += array.size
    return views


class FlatGroup:
    """One parameter group's parameters and state buffers as flat arrays (their views)."""

    def __init__(self, params, states, buffer_names) -> None:
        xp = params[0].backend.xp
        self.params, self.states, self.buffer_names = params, states, buffer_names
        self.data = xp.concatenate([param.data.reshape(-1) for param in params])
        for param, view in zip(params, _views(self.data, [p.data for p in params])):
            param.data = view
        self.buffers = {}
        for name in buffer_names:
            self.buffers[name] = xp.concatenate([state[name].reshape(-1) for state in states])
            for state, view in zip(states, _views(self.buffers[name],
                                                   [state[name] for state in states])):
                state[name] = view
        self._arrays = [(param, param.data) for param in params]
        _groups.add(self)
        self._state_arrays = [(state, name, state[name]) for state in states
                              for name in buffer_names]

    def holds(self, params, states) -> bool:
        """Whether these are still the parameters and states whose arrays are its views."""
        return (len(params) == len(self.params)
                and all(p is mine and p.data is view
                        for p, mine, (_, view) in zip(params, self.params, self._arrays))
                and all(s is mine for s, mine in zip(states, self.states))
                and all(state[name] is view for state, name, view in self._state_arrays))

    def update(self, optimizer, group, skip) -> None:
        """The optimizer's update of the whole group at once; where `skip` (a 0-d boolean
        array on the device) is True, every array it wrote gets its old values back."""
        backend = self.params[0].backend
        xp = backend.xp
        flat = Tensor._make(self.data, backend)
        flat.grad = Tensor._make(xp.concatenate([p.grad.data.reshape(-1)
                                                 for p in self.params]), backend)
        state = {"step": self.states[0]["step"], **self.buffers}
        function, arrays = optimizer._update(flat, state, group)
        written = (arrays[0],) + tuple(arrays[2:])  # never the gradient (the update's contract)
        saved = None if skip is None else [array.copy() for array in written]
        function(*arrays)
        if saved is not None:
            for array, old in zip(written, saved):
                xp.copyto(array, old, where=skip)


def flat_parameters(params) -> list[tuple[Any, list[Tensor]]]:
    """[(flat array, its parameters)] for the FlatGroups whose parameters, all among
    `params`, are still views of their flat array; in the order of `params`."""
    position = {id(param): i for i, param in enumerate(params)}
    runs = [(group.data, group.params) for group in list(_groups)
            if all(id(p) in position for p in group.params)
            and all(p.data is view for p, view in group._arrays)]
    return sorted(runs, key=lambda run: position[id(run[1][0])])


def flat_group(cached, params, states, buffer_names) -> FlatGroup | None:
    """A FlatGroup for these parameters: `cached` when it still holds them, else a new one;
    None where the group cannot be flat (not all on one GPU with one dtype and one step)."""
    first = params[0]
    if (first.backend.activate is None
            or any(p.backend is not first.backend or p.dtype != first.dtype for p in params)
            or any(state["step"] != states[0]["step"] for state in states)):
        return None
    if cached is not None and cached.holds(params, states):
        return cached
    return FlatGroup(params, states, buffer_names)
