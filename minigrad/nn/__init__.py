"""minigrad.nn: modules, layers, initializers and the functional API."""

from . import functional  # noqa: F401
