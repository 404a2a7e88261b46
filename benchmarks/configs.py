"""The model shapes and training settings every benchmark uses, in one place, so that
minigrad and PyTorch always run the same model on the same data.

    tiny:  d_model 64,  4 heads, 2+2 layers, d_ff 256,  vocab 1000,  batch 32, length 16
    small: d_model 256, 8 heads, 3+3 layers, d_ff 1024, vocab 8000,  batch 32, length 32
    base:  d_model 512, 8 heads, 6+6 layers, d_ff 2048, vocab 10000, batch 8,  length 32

Every model is the paper's encoder-decoder (post-LN, sinusoidal positions, one embedding
matrix shared by source, target and output), float32, with the project's initialization.
"""

from dataclasses import dataclass

import numpy as np

PAD_ID, BOS_ID, EOS_ID = 0, 1, 2  # special token ids; ordinary tokens are 3 .. vocab-1
MAX_LEN = 128  # rows of the position table: enough for every benchmark sequence

# Training step settings (the paper's, §5.3-5.4).
DROPOUT = 0.1
LABEL_SMOOTHING = 0.1
LEARNING_RATE = 1e-4
ADAM_BETAS = (0.9, 0.98)
ADAM_EPS = 1e-9

# Decoding benchmark: greedy decoding of this many tokens for this many sentences.
DECODE_BATCH = 8
DECODE_STEPS = 32

SEED = 0


@dataclass(frozen=True)
class BenchConfig:
    name: str
    d_model: int
    n_heads: int
    n_layers: int  # in the encoder, and again in the decoder
    d_ff: int
    vocab: int
    batch: int
    length: int  # of every source and target sequence (padding included)

    def model_kwargs(self):
        """The keyword arguments of `transformer.TransformerConfig` (and of the PyTorch
        reference model) for this shape."""
        return {
            "src_vocab_size": self.vocab, "tgt_vocab_size": self.vocab,
            "d_model": self.d_model, "n_heads": self.n_heads,
            "n_encoder_layers": self.n_layers, "n_decoder_layers": self.n_layers,
            "d_ff": self.d_ff, "dropout": DROPOUT, "max_len": MAX_LEN,
            "share_embeddings": True, "pad_id": PAD_ID,
        }


CONFIGS = {
    "tiny": BenchConfig("tiny", d_model=64, n_heads=4, n_layers=2, d_ff=256, vocab=1000,
                        batch=32, length=16),
    "small": BenchConfig("small", d_model=256, n_heads=8, n_layers=3, d_ff=1024, vocab=8000,
                         batch=32, length=32),
    "base": BenchConfig("base", d_model=512, n_heads=8, n_layers=6, d_ff=2048, vocab=10000,
                        batch=8, length=32),
}


def random_batch(config, batch=None, seed=SEED):
    """A reproducible batch of random token ids (NumPy int64), as a translation batch looks:

    src     (batch, length)  ordinary tokens, then padding
    tgt_in  (batch, length)  BOS, ordinary tokens, then padding
    tgt_out (batch, length)  tgt_in shifted left by one (the next token), then padding

    Each sentence has its own random length between half the length and the full length,
    so that every batch has some padding (the loss ignores it, attention masks it)."""
    rng = np.random.default_rng(seed)
    batch = config.batch if batch is None else batch
    length = config.length
    first_token = max(PAD_ID, BOS_ID, EOS_ID) + 1

    def sentences(width):
        ids = rng.integers(first_token, config.vocab, size=(batch, width), dtype=np.int64)
        lengths = rng.integers(length // 2, width + 1, size=batch)
        ids[np.arange(width) >= lengths[:, None]] = PAD_ID
        return ids

    src = sentences(length)
    target = sentences(length + 1)  # BOS + length tokens: tgt_in and tgt_out are its windows
    target[:, 0] = BOS_ID
    return src, target[:, :-1].copy(), target[:, 1:].copy()
