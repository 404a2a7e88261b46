"""TransformerConfig: every size and switch of the model, validated, JSON round-trippable."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Annotated

from . import rules
from .rules import BOOLEAN, at_least, one_of, rate

POSITIONAL_KINDS = ("sinusoidal", "sinusoidal-concat", "learned")
RESIDUAL_MODES = ("standard", "none", "plain", "rezero", "skip")
ACTIVATIONS = ("relu", "gelu")


@dataclass
class TransformerConfig:
    """The paper's base model by default (§3, Table 3): d_model 512, 8 heads, 6+6 layers."""

    src_vocab_size: Annotated[int, at_least(1)]
    tgt_vocab_size: Annotated[int, at_least(1)]
    d_model: Annotated[int, at_least(1)] = 512
    n_heads: Annotated[int, at_least(1)] = 8
    n_encoder_layers: Annotated[int, at_least(1)] = 6
    n_decoder_layers: Annotated[int, at_least(1)] = 6
    d_ff: Annotated[int, at_least(1)] = 2048
    dropout: Annotated[float, rate()] = 0.1
    max_len: Annotated[int, at_least(1)] = 512
    positional: Annotated[str, one_of(*POSITIONAL_KINDS)] = "sinusoidal"
    attention_dropout: Annotated[float, rate()] = 0.0
    norm_first: Annotated[bool, BOOLEAN] = False
    residual: Annotated[str, one_of(*RESIDUAL_MODES)] = "standard"
    share_embeddings: Annotated[bool, BOOLEAN] = False
    pad_id: Annotated[int, at_least(0)] = 0
    activation: Annotated[str, one_of(*ACTIVATIONS)] = "relu"

    def __post_init__(self):
        rules.check(self, self._across_fields)

    def _across_fields(self) -> list[str]:
        problems = []
        if self.d_model % self.n_heads:
            problems.append(f"d_model ({self.d_model}) must be divisible by n_heads "
                            f"({self.n_heads}): each head gets d_model / n_heads dimensions")
        if self.positional in ("sinusoidal", "sinusoidal-concat") and self.d_model % 2:
            problems.append(f"sinusoidal positions need an even d_model (a sine paired with a "
                            f"cosine), got {self.d_model}")
        if self.share_embeddings and self.src_vocab_size != self.tgt_vocab_size:
            problems.append(f"share_embeddings needs one joint vocabulary, but "
                            f"src_vocab_size={self.src_vocab_size} and "
                            f"tgt_vocab_size={self.tgt_vocab_size}")
        if self.pad_id >= min(self.src_vocab_size, self.tgt_vocab_size):
            problems.append(f"pad_id must be a token id of both vocabularies, got "
                            f"{self.pad_id!r}")
        return problems

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values) -> TransformerConfig:
        return rules.from_dict(cls, values)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def from_json(cls, text) -> TransformerConfig:
        return cls.from_dict(json.loads(text))
