"""minigrad.nn: modules, layers, initializers and the functional API."""

from . import functional, init  # noqa: F401
from .layers import GELU, Dropout, Embedding, LayerNorm, Linear, ReLU  # noqa: F401
from .module import Module, ModuleDict, ModuleList, Parameter, Sequential  # noqa: F401
