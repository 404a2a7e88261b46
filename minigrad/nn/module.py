"""Module: the base class of layers and models (parameters, buffers, children, state_dict),
with the names PyTorch users already know."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

import numpy as np

from ..errors import CheckpointError
from ..hooks import HookHandle
from ..tensor import Tensor

ModuleT = TypeVar("ModuleT", bound="Module")  # train() and eval() return the module's own class


class Parameter(Tensor):
    """A Tensor that is a module's learnable weight (it requires grad)."""

    __slots__ = ()

    def __init__(self, data, requires_grad=True, dtype=None, device=None) -> None:
        super().__init__(data, requires_grad=requires_grad, dtype=dtype, device=device)

    def __repr__(self) -> str:
        return "Parameter(" + super().__repr__() + ")"


class Module:
    """Base class: assign Parameters, buffers and Modules as attributes; define `forward`.

    Attributes live in the instance's __dict__ (plain, fast access); the module also keeps the
    ordered names of its parameters, buffers and children, which is what `state_dict`,
    `parameters()` and `to()` walk."""

    training: bool
    _parameter_names: list[str]
    _buffer_names: dict[str, bool]  # name -> persistent
    _module_names: list[str]
    _forward_hooks: dict

    def __init__(self) -> None:
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameter_names", [])
        object.__setattr__(self, "_buffer_names", {})  # name -> persistent
        object.__setattr__(self, "_module_names", [])
        object.__setattr__(self, "_forward_hooks", {})  # HookHandle key -> hook

    def __setattr__(self, name, value) -> None:
        if "_parameter_names" not in self.__dict__:
            raise AttributeError(f"{type(self).__name__}: call super().__init__() in __init__ "
                                 f"before assigning {name!r}")
        for names in (self._parameter_names, self._module_names):
            if name in names:
                names.remove(name)
        if isinstance(value, Parameter):
            self._parameter_names.append(name)
        elif isinstance(value, Module):
            self._module_names.append(name)
        elif name in self._buffer_names and value is not None and not isinstance(value, Tensor):
            raise TypeError(f"buffer {name!r} must be a Tensor or None")
        object.__setattr__(self, name, value)

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """A tensor that belongs to the module but is not learned (moved by `.to`, saved in the
        state dict when persistent)."""
        self._buffer_names[name] = persistent
        object.__setattr__(self, name, tensor)

    # ----- calling --------------------------------------------------------------------------
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *args, **kwargs) -> Any:
        output = self.forward(*args, **kwargs)
        for hook in tuple(self._forward_hooks.values()):  # a hook may remove itself
            replaced = hook(self, args, output)
            if replaced is not None:
                output = replaced
        return output

    def register_forward_hook(self, hook: Callable[[Module, tuple, Any], Any]) -> HookHandle:
        """hook(module, inputs, output) runs after every forward; it may return a replacement."""
        return HookHandle(self._forward_hooks, hook)

    # ----- walking the tree -------------------------------------------------------------------
    def named_children(self) -> Iterator[tuple[str, Module]]:
        for name in self._module_names:
            yield name, self.__dict__[name]

    def children(self) -> Iterator[Module]:
        for _, module in self.named_children():
            yield module

    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, Module]]:
        seen = set()
        stack = [(prefix, self)]
        while stack:
            name, module = stack.pop()
            if id(module) in seen:
                continue
            seen.add(id(module))
            yield name, module
            children = list(module.named_children())
            for child_name, child in reversed(children):
                stack.append((f"{name}.{child_name}" if name else child_name, child))

    def modules(self) -> Iterator[Module]:
        for _, module in self.named_modules():
            yield module

    def named_parameters(self, prefix: str = "") -> Iterator[tuple[str, Parameter]]:
        """(dotted name, Parameter) for every parameter, each shared one once."""
        seen = set()
        for module_name, module in self.named_modules(prefix):
            for name in module._parameter_names:
                parameter = module.__dict__[name]
                if id(parameter) not in seen:
                    seen.add(id(parameter))
                    yield (f"{module_name}.{name}" if module_name else name), parameter

    def parameters(self) -> Iterator[Parameter]:
        for _, parameter in self.named_parameters():
            yield parameter

    def named_buffers(self, prefix: str = "", persistent_only: bool = False
                      ) -> Iterator[tuple[str, Tensor]]:
        for module_name, module in self.named_modules(prefix):
            for name, persistent in module._buffer_names.items():
                buffer = module.__dict__[name]
                if buffer is not None and (persistent or not persistent_only):
                    yield (f"{module_name}.{name}" if module_name else name), buffer

    def buffers(self) -> Iterator[Tensor]:
        for _, buffer in self.named_buffers():
            yield buffer

    def apply(self, fn: Callable[[Module], object]) -> Module:
        """fn(module) for every module of the tree, children first (as PyTorch)."""
        for module in reversed(list(self.modules())):
            fn(module)
        return self

    def num_parameters(self) -> int:
        return sum(p.size for p in self.parameters())

    # ----- modes --------------------------------------------------------------------------------
    def train(self: ModuleT, mode: bool = True) -> ModuleT:
        for module in self.modules():
            object.__setattr__(module, "training", mode)
        return self

    def eval(self: ModuleT) -> ModuleT:
        return self.train(False)

    def zero_grad(self) -> None:
        for parameter in self.parameters():
            parameter.grad = None

    def requires_grad_(self, flag: bool = True) -> Module:
        for parameter in self.parameters():
            parameter.requires_grad = flag
        return self

    def to(self, device=None, dtype=None) -> Module:
        """Move/cast floating parameters and buffers. New Parameter objects replace the old ones
        (shared parameters stay shared): build optimizers after `.to(...)`."""
        replaced = {}
        for module in self.modules():
            for name in module._parameter_names:
                old = module.__dict__[name]
                if id(old) not in replaced:
                    new_dtype = dtype if old.dtype.kind == "f" else None
                    replaced[id(old)] = Parameter(old.detach().to(device, new_dtype),
                                                  requires_grad=old.requires_grad)
                object.__setattr__(module, name, replaced[id(old)])
            for name in module._buffer_names:
                buffer = module.__dict__[name]
                if buffer is not None:
                    new_dtype = dtype if buffer.dtype.kind == "f" else None
                    object.__setattr__(module, name, buffer.to(device, new_dtype))
        return self

    # ----- state ------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Tensor]:
        """Parameters and persistent buffers by dotted name (sharing storage with the module)."""
        state = OrderedDict()
        for name, parameter in self.named_parameters():
            state[name] = parameter.detach()
        for name, buffer in self.named_buffers(persistent_only=True):
            state[name] = buffer.detach()
        return state

    def load_state_dict(self, state: Mapping[str, Any], strict: bool = True) -> Module:
        """Copy the values of `state` into the existing parameter and buffer arrays.

        With strict=True, missing and unexpected keys are an error; a shape mismatch always
        is. The error names the first few problems of each kind and counts the rest."""
        own = self.state_dict()
        missing = [k for k in own if k not in state]
        unexpected = [k for k in state if k not in own]
        mismatched = [f"{k}: checkpoint {tuple(_shape(state[k]))}, model {own[k].shape}"
                      for k in own if k in state and tuple(_shape(state[k])) != own[k].shape]
        problems = []
        if strict and missing:
            problems.append(f"{len(missing)} missing keys: " + _first(missing, ", "))
        if strict and unexpected:
            problems.append(f"{len(unexpected)} unexpected keys: " + _first(unexpected, ", "))
        if mismatched:
            problems.append(f"{len(mismatched)} shape mismatches: " + _first(mismatched, "; "))
        if problems:
            raise CheckpointError(f"load_state_dict into {type(self).__name__}: "
                                  + " | ".join(problems))
        for name, target in own.items():
            if name in state:
                value = state[name]
                array = value.data if isinstance(value, Tensor) else value
                if target.device != "cpu" or not isinstance(array, np.ndarray):
                    array = target.backend.from_host(
                        value.numpy() if isinstance(value, Tensor) else np.asarray(array))
                target.data[...] = array
        return self

    # ----- printing -------------------------------------------------------------------------
    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__}({self.extra_repr()}"]
        children = list(self.named_children())
        if not children:
            return lines[0] + ")"
        lines[0] = lines[0] + ("" if not self.extra_repr() else ",")
        for name, child in children:
            body = repr(child).replace("\n", "\n  ")
            lines.append(f"  ({name}): {body}")
        return "\n".join(lines) + "\n)"


def _shape(value):
    return value.shape if hasattr(value, "shape") else np.shape(value)


class ModuleList(Module):
    """A list of modules whose parameters belong to the parent."""

    def __init__(self, modules=()) -> None:
        super().__init__()
        for module in modules:
            self.append(module)

    def append(self, module: Module) -> ModuleList:
        setattr(self, str(len(self._module_names)), module)
        return self

    def __getitem__(self, index) -> Any:
        return list(self.children())[index]

    def __len__(self) -> int:
        return len(self._module_names)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.children())


class Sequential(ModuleList):
    """Modules applied one after another."""

    def __init__(self, *modules) -> None:
        super().__init__(modules)

    def forward(self, x: Any) -> Any:
        for module in self.children():
            x = module(x)
        return x


class ModuleDict(Module):
    """A dict of modules whose parameters belong to the parent."""

    def __init__(self, modules=None) -> None:
        super().__init__()
        for name, module in (modules or {}).items():
            self[name] = module

    def __setitem__(self, name, module) -> None:
        setattr(self, name, module)

    def __getitem__(self, name) -> Any:
        if name not in self._module_names:
            raise KeyError(name)
        return self.__dict__[name]

    def __contains__(self, name) -> bool:
        return name in self._module_names

    def __len__(self) -> int:
        return len(self._module_names)

    def __iter__(self) -> Iterator[str]:
        return iter(self._module_names)

    def keys(self) -> list[str]:
        return list(self._module_names)

    def values(self) -> list[Module]:
        return list(self.children())

    def items(self) -> list[tuple[str, Module]]:
        return list(self.named_children())


def _first(items, separator, shown=3):
    """The first `shown` of `items` joined, and how many more there are."""
    more = f"{separator}... ({len(items) - shown} more)" if len(items) > shown else ""
    return separator.join(items[:shown]) + more
