"""The exceptions minigrad raises; each message names the op, the shapes/dtypes/devices, a hint."""


class MinigradError(Exception):
    """Base class of every error minigrad raises on purpose."""


class ShapeError(MinigradError, ValueError):
    """Shapes that do not fit the op (matmul, broadcasting, reshape, ...)."""


class DTypeError(MinigradError, TypeError):
    """A dtype the op does not support, e.g. a float op on integer ids."""


class DeviceError(MinigradError, RuntimeError):
    """Tensors on different devices, or a device that is not available."""


class GraphError(MinigradError, RuntimeError):
    """Misuse of the autograd graph: a freed graph, a non-scalar backward without a gradient."""


class AnomalyError(MinigradError, FloatingPointError):
    """Raised by `detect_anomaly()` when an op's forward or backward first produces NaN/Inf."""


class CheckpointError(MinigradError, ValueError):
    """A checkpoint that is truncated, corrupt, of an unknown version, or does not fit the model."""


class GradcheckError(MinigradError, AssertionError):
    """An analytical gradient that disagrees with finite differences."""


class ConfigError(MinigradError, ValueError):
    """An invalid configuration value."""


class OpDefinitionError(MinigradError, TypeError):
    """A Function that breaks the op contract: what `forward` or `backward` returned, or how
    `apply` was called."""
