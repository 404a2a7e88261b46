"""Hook registries: the handle `register_hook` and `register_forward_hook` return."""

import itertools

_keys = itertools.count()


class HookHandle:
    """A hook put into `hooks` (a dict, called in insertion order); `.remove()` takes it out
    again (twice is harmless)."""

    def __init__(self, hooks, hook) -> None:
        self.hooks, self.key = hooks, next(_keys)
        hooks[self.key] = hook

    def remove(self) -> None:
        self.hooks.pop(self.key, None)
