"""The errors transformer raises on purpose. Each is the engine's error of the same kind
(minigrad.errors) narrowed to the transformer's own objects, so that `except
minigrad.errors.CheckpointError` around a load still catches a damaged run folder; the engine
keeps raising its own for what is its own (an optimizer's settings, a checkpoint file's
format, a state dict that does not fit a module)."""

from __future__ import annotations

from minigrad import errors as engine


class ConfigError(engine.ConfigError):
    """A run that cannot be as asked: a value of its configuration (a flag, a field of a
    RunSpec, TrainingConfig or TransformerConfig), its data, or a run folder it may not
    write (at the command line: exit status 2)."""


class CheckpointError(engine.CheckpointError):
    """A run folder whose files are damaged or do not belong together."""


class ResumeConflict(ConfigError):
    """Changes asked of a resumed run that it may not make (`run_spec.RESUMABLE`): `conflicts`
    holds (flag or field, given, the run's) for each."""

    def __init__(self, folder, conflicts, resumable) -> None:
        self.conflicts = conflicts
        listed = "; ".join(dict.fromkeys(f"{name} {given!r} (the run has {saved!r})"
                                         for name, given, saved in conflicts))
        super().__init__(f"{folder} was started with other options than these: {listed}; a "
                         f"resumed run may change only {resumable} (drop the others, or start "
                         "a new run with --overwrite or another --out)")
