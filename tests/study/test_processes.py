"""The study's runs spread over processes: the same results in the same order as in one
process, each child forked with one BLAS thread, and a warmup ladder that does not depend on
how many processes ran it."""

import math
import os

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from transformer.data import Example, Vocab, tokenize
from transformer.data.batching import encode_pairs
from transformer.study.experiments.e5_e6_warmup import ladder
from transformer.study.processes import map_runs
from transformer.study.toolkit import ModelSizes, TaskData


def where_and_how(item):
    blas = [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]
    return item, os.getpid(), blas


def test_runs_in_forked_processes_come_back_in_order_with_one_blas_thread_each():
    offset = np.arange(3)  # a closure's data, inherited by the fork, never pickled
    results = list(map_runs(lambda item: (item + offset).tolist(), range(7), processes=2))
    assert results == [[item, item + 1, item + 2] for item in range(7)]
    found = list(map_runs(where_and_how, range(4), processes=2))
    assert [item for item, _, _ in found] == list(range(4))
    assert os.getpid() not in {pid for _, pid, _ in found}
    assert all(blas == [1] * len(blas) for _, _, blas in found)


def test_one_process_runs_in_this_one():
    assert {pid for _, pid, _ in map_runs(where_and_how, range(3), processes=1)} == {os.getpid()}


def test_an_error_in_a_run_reaches_the_caller():
    def fails(item):
        raise ValueError(f"run {item} failed")

    with pytest.raises(ValueError, match="run 0 failed"):
        list(map_runs(fails, range(2), processes=2))


def test_a_ladder_gives_the_same_figures_in_one_process_or_two():
    sentences = ["a b c", "b c d", "c d a", "d a b", "a c d", "b d a", "c a", "d b"]
    examples = [Example(s, s, "copy") for s in sentences]
    vocab = Vocab.build([tokenize(s) for s in sentences])
    data = TaskData(vocab, encode_pairs(examples, vocab), examples, examples)

    def last_loss(model, losses):
        return losses[-1]

    arms = {"post-LN, warmup 0": ("post-LN", 1e-2, 0), "post-LN, warmup 3": ("post-LN", 1e-2, 3),
            "pre-LN, no warmup": ("pre-LN", 1e-2, 0)}
    figures = [ladder(data, 2, ModelSizes(d_model=8, n_heads=2, d_ff=16), arms, (0, 1), 6, 4,
                      last_loss, 3, processes) for processes in (1, 2)]
    (rows_one, _, final_one), (rows_two, _, final_two) = figures
    assert [(row["config"], row["seed"], row["step"]) for row in rows_one] == \
        [(row["config"], row["seed"], row["step"]) for row in rows_two]
    assert final_one.keys() == final_two.keys() == {"post-LN, warmup 0", "post-LN, warmup 3",
                                                    "pre-LN, no warmup"}
    for label in final_one:
        assert not any(math.isnan(value) for value in final_one[label])
        np.testing.assert_allclose(final_two[label], final_one[label], rtol=1e-5)
