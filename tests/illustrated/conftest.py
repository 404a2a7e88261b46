"""What the tests of the live Illustrated Transformer share: a tiny freshly initialized
Translator (the fast tier), the main job's model freshly initialized (the exported page's
size), and the trained run that tests/training shares (the browser tests: made once per test
session for both folders)."""

import pytest
from explained import ARTICLE, LONGEST_ARTICLE, TINY, TINY_MAX_LEN, fresh_translator
from training.conftest import train_memorizing_run

from transformer.data import tokenize
from transformer.main_job import MAIN_JOB


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
