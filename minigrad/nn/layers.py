"""The standard layers: Linear, Embedding, LayerNorm, Dropout, ReLU, GELU."""

from ..creation import ones, zeros
from ..errors import ConfigError, ShapeError
from ..tensor import Tensor
from . import functional as F
from . import init
from .module import Module, Parameter


class Linear(Module):
    """y = x @ weight.T + bias, weight (out_features, in_features); Xavier-uniform weight and
    zero bias (the project's initialization; PyTorch's default is Kaiming-uniform). `weight`,
    an existing Parameter of that shape, is used instead of a new one (a tied weight)."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None,
                 weight=None) -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = _given(weight, (out_features, in_features), "Linear") if weight is not None \
            else init.xavier_uniform_(Parameter(zeros(out_features, in_features, device=device,
                                                      dtype=dtype)))
        self.bias = Parameter(zeros(out_features, device=device, dtype=dtype)) if bias else None

    def forward(self, x: Tensor) -> Tensor:
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, " \
               f"bias={self.bias is not None}"


class Embedding(Module):
    """A table of `num_embeddings` vectors of size `embedding_dim`, looked up by integer ids;
    N(0, 1) initialization as PyTorch, with the padding row zeroed. `weight`, an existing
    Parameter of that shape, is used as it is instead (a tied or otherwise initialized
    table)."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, device=None,
                 dtype=None, weight=None) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = padding_idx
        if weight is not None:
            self.weight = _given(weight, (num_embeddings, embedding_dim), "Embedding")
            return
        self.weight = init.normal_(Parameter(zeros(num_embeddings, embedding_dim, device=device,
                                                   dtype=dtype)))
        if padding_idx is not None:
            self.weight.data[padding_idx] = 0

    def forward(self, ids: Tensor) -> Tensor:
        return F.embedding(ids, self.weight, self.padding_idx)

    def extra_repr(self) -> str:
        padding = f", padding_idx={self.padding_idx}" if self.padding_idx is not None else ""
        return f"{self.num_embeddings}, {self.embedding_dim}{padding}"


class LayerNorm(Module):
    """Normalization over the trailing `normalized_shape` axes, with a learned scale and shift."""

    def __init__(self, normalized_shape, eps=1e-5, device=None, dtype=None) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) \
            else tuple(normalized_shape)
        self.normalized_shape, self.eps = shape, eps
        self.weight = Parameter(ones(shape, device=device, dtype=dtype))
        self.bias = Parameter(zeros(shape, device=device, dtype=dtype))

    def forward(self, x: Tensor) -> Tensor:
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}"


class Dropout(Module):
    """Zeroes elements with probability p while training; the identity in eval mode."""

    def __init__(self, p=0.5) -> None:
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"Dropout: p must be in [0, 1], got {p}")
        self.p = p

    def forward(self, x: Tensor) -> Tensor:
        return F.dropout(x, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}"


class ReLU(Module):
    def forward(self, x: Tensor) -> Tensor:
        return F.relu(x)


class GELU(Module):
    def __init__(self, approximate="none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, x: Tensor) -> Tensor:
        return F.gelu(x, self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


def _given(weight, shape, layer):
    """`weight` if it is a Parameter of `shape`, else a ConfigError or ShapeError naming
    `layer`."""
    if not isinstance(weight, Parameter):
        raise ConfigError(f"{layer}(weight=...) takes a Parameter, got {type(weight).__name__}; "
                        "wrap a tensor in nn.Parameter")
    if tuple(weight.shape) != shape:
        raise ShapeError(f"{layer}(weight=...) needs shape {shape}, got {tuple(weight.shape)}")
    return weight
