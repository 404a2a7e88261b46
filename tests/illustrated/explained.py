"""What the explain app's tests build on: the sentences they explain and a freshly
initialized Translator (tests/illustrated/conftest.py makes its fixtures from these)."""

import minigrad as mg
from transformer import Transformer, TransformerConfig, Translator
from transformer.data import Vocab

ARTICLE = "the black cat drank the milk"
LONGEST_ARTICLE = "the animal didn't cross the street because it was too tired"
TINY = {"d_model": 16, "n_heads": 2, "n_encoder_layers": 1, "n_decoder_layers": 1,
        "d_ff": 32, "dropout": 0.0}
TINY_MAX_LEN = 12  # tokens: a longer sentence is refused


def fresh_translator(model, words, max_len, seed=0) -> Translator:
    """A Translator of a freshly initialized model of options `model` reading `words`."""
    vocab = Vocab.build([words])
    mg.manual_seed(seed)
    config = TransformerConfig(len(vocab), len(vocab), max_len=max_len, share_embeddings=True,
                               pad_id=vocab.pad_id, **model)
    return Translator(Transformer(config), vocab)
