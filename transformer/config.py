"""TransformerConfig: every size and switch of the model, validated, JSON round-trippable."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

from minigrad.errors import ConfigError

POSITIONAL_KINDS = ("sinusoidal", "sinusoidal-concat", "learned")
RESIDUAL_MODES = ("standard", "none", "plain", "rezero", "skip")
ACTIVATIONS = ("relu", "gelu")


@dataclass
class TransformerConfig:
    """The paper's base model by default (§3, Table 3): d_model 512, 8 heads, 6+6 layers."""

    src_vocab_size: int
    tgt_vocab_size: int
    d_model: int = 512
    n_heads: int = 8
    n_encoder_layers: int = 6
    n_decoder_layers: int = 6
    d_ff: int = 2048
    dropout: float = 0.1
    max_len: int = 512
    positional: str = "sinusoidal"
    attention_dropout: float = 0.0
    norm_first: bool = False
    residual: str = "standard"
    share_embeddings: bool = False
    pad_id: int = 0
    activation: str = "relu"

    def __post_init__(self):
        problems = []
        for name in ("src_vocab_size", "tgt_vocab_size", "d_model", "n_heads", "d_ff",
                     "max_len"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                problems.append(f"{name} must be a positive integer, got {value!r}")
        for name in ("n_encoder_layers", "n_decoder_layers"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                problems.append(f"{name} must be an integer >= 1, got {value!r}")
        if not problems and self.d_model % self.n_heads:
            problems.append(f"d_model ({self.d_model}) must be divisible by n_heads "
                            f"({self.n_heads}): each head gets d_model / n_heads dimensions")
        if self.positional not in POSITIONAL_KINDS:
            problems.append(f"positional must be one of {POSITIONAL_KINDS}, got "
                            f"{self.positional!r}")
        if self.positional in ("sinusoidal", "sinusoidal-concat") and \
                isinstance(self.d_model, int) and self.d_model % 2:
            problems.append(f"sinusoidal positions need an even d_model, got {self.d_model}")
        if self.residual not in RESIDUAL_MODES:
            problems.append(f"residual must be one of {RESIDUAL_MODES}, got {self.residual!r}")
        if self.activation not in ACTIVATIONS:
            problems.append(f"activation must be one of {ACTIVATIONS}, got "
                            f"{self.activation!r}")
        for name in ("dropout", "attention_dropout"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not 0 <= value < 1:
                problems.append(f"{name} must be in [0, 1), got {value!r}")
        if self.share_embeddings and self.src_vocab_size != self.tgt_vocab_size:
            problems.append(f"share_embeddings needs one joint vocabulary, but "
                            f"src_vocab_size={self.src_vocab_size} and "
                            f"tgt_vocab_size={self.tgt_vocab_size}")
        if not problems and (not isinstance(self.pad_id, int) or isinstance(self.pad_id, bool)
                             or not 0 <= self.pad_id < min(self.src_vocab_size,
                                                           self.tgt_vocab_size)):
            problems.append(f"pad_id must be a token id of both vocabularies, got "
                            f"{self.pad_id!r}")
        if problems:
            raise ConfigError("TransformerConfig: " + "; ".join(problems))

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values) -> TransformerConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ConfigError(f"TransformerConfig: unknown keys {unknown}")
        return cls(**values)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def from_json(cls, text) -> TransformerConfig:
        return cls.from_dict(json.loads(text))
