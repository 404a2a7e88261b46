"""What the tests of the live Illustrated Transformer share: a tiny freshly initialized
Translator (the fast tier), the main job's model freshly initialized (the exported page's
size), and the trained run that tests/training shares (the browser tests: made once per test
session for both folders)."""

import pytest
from training.conftest import train_memorizing_run

import minigrad as mg
from transformer import Transformer, TransformerConfig, Translator
from transformer.data import Vocab, tokenize
from transformer.main_job import MAIN_JOB

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


@pytest.fixture(scope="session")
def tiny_translator():
    return fresh_translator(TINY, tokenize(f"{ARTICLE} el gato negro bebió la leche"),
                            TINY_MAX_LEN)


@pytest.fixture(scope="session")
def main_job_translator():
    """The main job's model (its configuration, the toy grammar's vocabulary size and
    max_len), freshly initialized: untrained, it decodes to its longest output, the largest
    page a sentence gives."""
    words = tokenize(f"{ARTICLE} {LONGEST_ARTICLE}") + [f"word{i}" for i in range(950)]
    return fresh_translator(MAIN_JOB.model, words, max_len=146)


@pytest.fixture(scope="session")
def trained_run(made_once):
    """The run folder of tests/training's `memorized_run`: a small model that translates its
    16 training sentences ("the ball is blue" among them) as the toy grammar does."""
    return made_once("memorized", train_memorizing_run) / "run"
