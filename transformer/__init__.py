"""transformer: the encoder-decoder of "Attention Is All You Need", built on minigrad."""

from .attention import AttentionRecorder, MultiHeadAttention  # noqa: F401
from .config import TransformerConfig  # noqa: F401
from .decoding import Hypothesis, beam_search, beam_search_n_best, greedy_decode  # noqa: F401
from .model import Transformer  # noqa: F401
from .translator import Translator  # noqa: F401
