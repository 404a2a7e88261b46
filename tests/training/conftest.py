"""A trained run folder shared by the Translator and command-line tests.

A small model memorizes 16 short toy-en-es pairs (the `pairs` task, from a TSV file) in a few
seconds, so the translations of its training sentences are known exactly: tests can check
what is printed, and in which order, not only that something is printed.
"""

from dataclasses import dataclass
from pathlib import Path

import pytest

from transformer.data import Example, load_task
from transformer.data.grammar import toy_en_es
from transformer.pipeline import start_run
from transformer.run_spec import RunSpec, TaskSpec
from transformer.training_config import TrainingConfig

MEMORIZING_MODEL = {"d_model": 32, "n_heads": 2, "n_encoder_layers": 1, "n_decoder_layers": 1,
                    "d_ff": 64, "dropout": 0.0}
MEMORIZING_TRAINING = {"steps": 500, "batch_size": 16, "warmup_steps": 20, "lr_factor": 2.0,
                       "eval_every": 100, "checkpoint_every": 100, "log_every": 50,
                       "progress": False, "seed": 1}  # its split trains on both article sentences


@dataclass
class MemorizedRun:
    """A run folder and the training pairs its model reproduces."""

    path: Path
    train: list[Example]

    def target(self, source):
        return next(e.tgt for e in self.train if e.src == source)


@pytest.fixture(scope="session")
def memorized_run(made_once):
    """Train on the 16 shortest sentences of a small toy-en-es draw (the article sentences
    "the ball is blue" and "the black cat drank the milk" among them); the pairs task keeps
    14 of them for training. Trained once per test session."""
    root = made_once("memorized", train_memorizing_run)
    train = load_task("pairs", data=root / "pairs.tsv", seed=MEMORIZING_TRAINING["seed"])["train"]
    return MemorizedRun(root / "run", list(train))


def train_memorizing_run(root):
    drawn = toy_en_es(0, n_train=20, n_valid=0, n_test=0, n_compositional=0,
                      n_cross=0, n_long=0, long_share=0)["train"]
    shortest = sorted(drawn, key=lambda e: (len(e.src), e.src))[:16]
    tsv = root / "pairs.tsv"
    tsv.write_text("".join(f"{e.src}\t{e.tgt}\n" for e in shortest), encoding="utf-8")
    start_run(RunSpec(TaskSpec("pairs", tsv), model=MEMORIZING_MODEL,
                      training=TrainingConfig(**MEMORIZING_TRAINING)), root / "run", showcase=())
