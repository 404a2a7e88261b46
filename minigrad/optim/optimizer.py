"""Optimizer: the base class of SGD, Adam and AdamW (parameter groups, state, checkpoints)."""

from typing import Any

from ..errors import CheckpointError, ConfigError
from ..tensor import Tensor, as_array
from .flat import flat_group


class Optimizer:
    """Updates parameters from their gradients, as PyTorch's optimizers do.

    `param_groups` is a list of dicts: "params" (the tensors) plus the hyperparameters of that
    group, so that e.g. biases can have their own learning rate. `state[param]` holds what a
    method keeps between steps ("step", the number of updates that parameter received, and the
    arrays named by `_buffer_names`). Subclasses define `_update(param, state, group)`, the
    elementwise update of `param.data` in place: a parameter's values are never replaced, so
    anything holding the parameter (a module) stays valid. (On a GPU its array becomes a view
    of its group's flat array at the first step, `flat.py`.)
    """

    def __init__(self, params, defaults) -> None:
        self.defaults = dict(defaults)
        self.param_groups: list[dict] = []
        self.state: dict = {}
        self._flat: dict = {}  # group index -> its FlatGroup (parameters on a GPU)
        groups: list[Any] = [params] if isinstance(params, Tensor) else list(params)
        if not groups:
            raise ConfigError(f"{type(self).__name__}: got an empty list of parameters; pass "
                              "model.parameters() after the model is built")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, group: dict[str, Any]) -> None:
        """Add a group of parameters; hyperparameters it does not set take the defaults."""
        params = group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        taken = {id(p) for existing in self.param_groups for p in existing["params"]}
        for param in params:
            if not isinstance(param, Tensor):
                raise TypeError(f"{type(self).__name__}: parameters must be Tensors, got "
                                f"{type(param).__name__}")
            if id(param) in taken:
                raise ConfigError(f"{type(self).__name__}: a parameter of shape {param.shape} "
                                  "appears twice in the parameter groups")
            taken.add(id(param))
        self.param_groups.append({**self.defaults, **group, "params": params})

    def zero_grad(self) -> None:
        """Forget every gradient (set to None), before the next backward pass."""
        for group in self.param_groups:
            for param in group["params"]:
                param.grad = None

    def step(self, skip=None) -> None:
        """One update of every parameter that has a gradient; the others are skipped.

        `skip`: None, or a 0-d boolean tensor (a non-finite loss or gradient, say): where it
        is True, no parameter and no state changes. On the CPU it is read (free there) and a
        skipped step is not counted. On a GPU it is applied on the device and never read, and
        the step counts still advance (the host cannot know). A group whose parameters sit
        on one GPU with one dtype is updated at once (`flat.py`); other parameters one by
        one, reading `skip`."""
        tasks: dict = {}  # backend -> the updates of its parameters, run together
        skipped = None
        for index, group in enumerate(self.param_groups):
            params = [param for param in group["params"] if param.grad is not None]
            if not params:
                continue
            states = [self._state(param, group) for param in params]
            flat = flat_group(self._flat.get(index), params, states, self._buffer_names(group))
            if flat is not None:
                self._flat[index] = flat
                for state in states:
                    state["step"] += 1
                flat.update(self, group, None if skip is None else skip.data)
                continue
            if skipped is None:
                skipped = skip is not None and bool(skip.item())
            if skipped:
                continue
            for param, state in zip(params, states):
                state["step"] += 1
                tasks.setdefault(param.backend, []).append(self._update(param, state, group))
        for backend, updates in tasks.items():
            backend.run_blockwise(updates)

    def _state(self, param, group):
        state = self.state.get(param)
        if state is None:
            state = self.state[param] = self._new_state(param, group)
        return state

    def _update(self, param, state, group):
        """The update of one parameter as `(function, arrays)`, arrays starting with
        `param.data` and `param.grad.data`: `function(*blocks)` changes blocks of the
        parameter (and of its state arrays) in place with elementwise array ops, and never
        modifies the gradient. The backend runs it on the whole arrays or blocks of them
        (`Backend.run_blockwise`), so it reads no other element than the block's."""
        raise NotImplementedError

    def _buffer_names(self, group):
        """The names of the arrays this method keeps per parameter (each starts at zeros)."""
        return ()

    def _new_state(self, param, group):
        xp = param.backend.xp
        state = {"step": 0}
        for name in self._buffer_names(group):
            state[name] = xp.zeros_like(param.data)
        return state

    # ----- checkpoints -------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """The hyperparameters of each group and the state of each parameter, by the
        parameter's position (counting through the groups in order). Arrays are shared with the
        optimizer, as PyTorch's; `mg.save` stores the whole dict."""
        groups: list = []
        states: list = []
        position = 0
        for group in self.param_groups:
            params = group["params"]
            groups.append({**group, "params": list(range(position, position + len(params)))})
            states.extend(dict(self.state.get(param, {})) for param in params)
            position += len(params)
        return {"state": states, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Continue from `state_dict()` of an optimizer of the same kind over the same
        parameters: hyperparameters and per-parameter state are copied in (nothing changes if
        the checkpoint does not fit)."""
        saved_groups, saved_states = state_dict["param_groups"], state_dict["state"]
        sizes = [len(group["params"]) for group in self.param_groups]
        saved_sizes = [len(group["params"]) for group in saved_groups]
        if sizes != saved_sizes or len(saved_states) != sum(sizes):
            raise CheckpointError(
                f"{type(self).__name__}.load_state_dict: the checkpoint has parameter groups of "
                f"sizes {saved_sizes} and {len(saved_states)} parameter states, this optimizer "
                f"has groups of sizes {sizes}")
        hyperparameters = [{key: value for key, value in saved.items() if key != "params"}
                           for saved in saved_groups]
        restored = {}
        position = 0
        for group, saved_group in zip(self.param_groups, hyperparameters):
            for param in group["params"]:
                saved = saved_states[position]
                if saved:
                    restored[param] = self._restored_state(
                        position, param, saved, {**group, **saved_group})
                position += 1
        for group, saved_group in zip(self.param_groups, hyperparameters):
            group.update(saved_group)
        self.state = restored

    def _restored_state(self, position, param, saved, group):
        """A parameter's saved state, checked against this optimizer, copied to the parameter's
        device and dtype."""
        prefix = f"{type(self).__name__}.load_state_dict: parameter {position}"
        expected = {"step", *self._buffer_names(group)}
        if set(saved) != expected:
            raise CheckpointError(f"{prefix}: the checkpoint holds {sorted(saved)}, this "
                                  f"optimizer needs {sorted(expected)} (another optimizer kind?)")
        state = {"step": int(saved["step"])}
        for name in self._buffer_names(group):
            shape = tuple(saved[name].shape)
            if shape != param.shape:
                raise CheckpointError(f"{prefix}: '{name}' has shape {shape}, the parameter "
                                      f"{param.shape}")
            state[name] = as_array(saved[name], param.dtype, param.backend)
        return state
