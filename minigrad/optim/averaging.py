"""An exponential moving average of the parameters (Polyak averaging), to evaluate with.

The weights at the end of training move with every batch; an average over the last
steps sits nearer the middle of the valley they move around in, and usually translates
better, in distribution and out of it. The Transformer paper averaged its last checkpoints
for the same reason (§6.1); an exponential average needs one copy of the weights and no
choice of which checkpoints, and it does not depend on how long the run will be:

    average = decay_t * average + (1 - decay_t) * parameter,
    decay_t = min(decay, (1 + t) / (10 + t))      after the t-th update

(the second term, TensorFlow's `num_updates` rule, lets the first steps' weights, far from
the final ones, fade quickly).

    average = ExponentialMovingAverage(model.named_parameters(), decay=0.999)
    for batch in batches:
        ...; optimizer.step()
        average.update()
    with average.applied():   # the parameters hold the averages inside the block
        evaluate(model)

On a GPU, where the optimizer keeps its parameters in flat arrays (`flat.py`), the averages
of those parameters are one flat array in the same layout (each name's average a view of
it), moved by one update of the whole array (`Backend.kernels.moving_average`: one fused
kernel with the fused kernels on, three launches without) instead of one per parameter. It
computes what the CPU's per-parameter update does, in the same order (value - average, times
the weight, added), so the averages are the CPU's bit for bit (checked on the CuPy stand-in;
a GPU compiler may contract the fused kernel's multiply and add into one).
"""

from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

from ..errors import CheckpointError, ConfigError
from ..tensor import as_array
from .flat import flat_parameters


class _FlatAverage:
    """The averages of an optimizer's flat group of parameters: one array in its layout."""

    def __init__(self, source, params, names, averages):
        xp = params[0].backend.xp
        self.source, self.params, self.names = source, params, names
        self.data = xp.concatenate([averages[name].reshape(-1) for name in names])
        offset = 0
        for name, param in zip(names, params):
            averages[name] = self.data[offset:offset + param.size].reshape(param.shape)
            offset += param.size
        self.views = [averages[name] for name in names]

    def holds(self, source, averages) -> bool:
        return source is self.source and all(
            averages[name] is view for name, view in zip(self.names, self.views))

    def update(self, weight) -> None:
        backend = self.params[0].backend
        weight = self.data.dtype.type(weight)
        backend.activate()
        backend.kernels.moving_average(self.data, self.source, weight)


class ExponentialMovingAverage:
    """The moving averages of named parameters (`module.named_parameters()`), arrays on each
    parameter's device, starting at the parameters' values."""

    def __init__(self, named_parameters, decay=0.999) -> None:
        if not 0 < decay < 1:
            raise ConfigError(f"ExponentialMovingAverage: decay must be in (0, 1), got {decay}")
        self.decay = float(decay)
        self.parameters = dict(named_parameters)
        self.averages = {name: param.data.copy() for name, param in self.parameters.items()}
        self.updates = 0
        self._flat: list[_FlatAverage] = []  # of the optimizer's flat groups (on a GPU)

    def current_decay(self) -> float:
        """The decay of the next update."""
        t = self.updates + 1
        return min(self.decay, (1 + t) / (10 + t))

    def update(self) -> None:
        """Move every average towards its parameter's current value (after optimizer.step())."""
        weight = 1.0 - self.current_decay()
        self.updates += 1
        flat = self._flat_averages()
        for average in flat:
            average.update(weight)
        covered = {id(param) for average in flat for param in average.params}
        tasks: dict = {}  # backend -> its parameters' updates, run together
        for name, param in self.parameters.items():
            if id(param) not in covered:
                tasks.setdefault(param.backend, []).append(
                    (partial(param.backend.kernels.moving_average, weight=weight),
                     (self.averages[name], param.data)))
        for backend, updates in tasks.items():
            backend.run_blockwise(updates)

    def _flat_averages(self):
        """The flat averages of the optimizer's flat groups among these parameters, made anew
        where a group or an average array changed since (a new group, a loaded state)."""
        names = {id(param): name for name, param in self.parameters.items()}
        runs = flat_parameters(list(self.parameters.values()))
        if len(runs) == len(self._flat) and all(
                average.holds(source, self.averages)
                for average, (source, _) in zip(self._flat, runs)):
            return self._flat
        self._flat = [_FlatAverage(source, params, [names[id(p)] for p in params],
                                   self.averages) for source, params in runs]
        return self._flat

    @contextmanager
    def applied(self) -> Iterator["ExponentialMovingAverage"]:
        """Inside the block the parameters hold the averages; their own values come back
        after it (also on an exception)."""
        kept = {name: param.data.copy() for name, param in self.parameters.items()}
        try:
            for name, param in self.parameters.items():
                param.data[...] = self.averages[name]
            yield self
        finally:
            for name, param in self.parameters.items():
                param.data[...] = kept[name]

    def state_dict(self) -> dict[str, Any]:
        """{"decay", "updates", "averages": {name: array}}; the arrays are shared (save it
        right away)."""
        return {"decay": self.decay, "updates": self.updates, "averages": dict(self.averages)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue from `state_dict()` of an average of the same parameters: names and shapes
        are checked first (CheckpointError naming the differences; nothing changes then)."""
        if not isinstance(state, dict) or not {"decay", "updates", "averages"} <= state.keys() \
                or not isinstance(state["averages"], dict):
            raise CheckpointError("ExponentialMovingAverage.load_state_dict: expected a dict "
                                  "with 'decay', 'updates' and 'averages' (a dict of arrays), "
                                  f"got {sorted(state) if isinstance(state, dict) else state!r}")
        saved = state["averages"]
        missing = sorted(set(self.parameters) - set(saved))
        unexpected = sorted(set(saved) - set(self.parameters))
        mismatched = [f"{name}: checkpoint {tuple(saved[name].shape)}, model "
                      f"{tuple(param.shape)}" for name, param in self.parameters.items()
                      if name in saved and tuple(saved[name].shape) != tuple(param.shape)]
        problems = ([f"missing {', '.join(missing)}"] if missing else []) + \
            ([f"unexpected {', '.join(unexpected)}"] if unexpected else []) + mismatched
        if problems:
            raise CheckpointError("ExponentialMovingAverage.load_state_dict: the checkpoint's "
                                  f"averages do not fit these parameters: {'; '.join(problems)}")
        self.decay, self.updates = float(state["decay"]), int(state["updates"])
        self.averages = {name: as_array(saved[name], param.dtype, param.backend)
                         for name, param in self.parameters.items()}
