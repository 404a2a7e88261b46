"""Elementwise updates in blocks over threads (`run_blockwise`): the same result as one pass
over the whole arrays, whatever the block size and thread count; errors reach the caller."""

import numpy as np
import pytest

import minigrad as mg
from minigrad.backend import blockwise
from minigrad.backend.blockwise import BlockRunner
from minigrad.optim import Adam, AdamW


def scale_and_add(out, source):
    out *= 0.5
    out += source


def arrays(seed, shapes):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(np.float32) for shape in shapes]


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("block_size", [1, 7, 64, 1 << 20])
def test_blocks_over_threads_give_the_whole_array_result(monkeypatch, threads, block_size):
    monkeypatch.setattr(blockwise, "BLOCK_SIZE", block_size)
    monkeypatch.setattr(blockwise, "_PARALLEL_FROM", 0)
    shapes = [(5, 13), (0,), (3,), (2, 3, 4)]
    outs, sources = arrays(0, shapes), arrays(1, shapes)
    expected = [out * np.float32(0.5) + source for out, source in zip(outs, sources)]
    BlockRunner(threads).run([(scale_and_add, (out, source))
                              for out, source in zip(outs, sources)])
    for out, want in zip(outs, expected):
        assert out.tobytes() == want.tobytes()


def test_an_array_that_is_not_contiguous_is_updated_whole(monkeypatch):
    monkeypatch.setattr(blockwise, "BLOCK_SIZE", 4)
    seen = []
    out, source = np.zeros((6, 6), np.float32)[:, ::2], np.ones((6, 3), np.float32)

    def record(out_block, source_block):
        seen.append(out_block.shape)
        scale_and_add(out_block, source_block)

    BlockRunner(2).run([(record, (out, source))])
    assert seen == [(6, 3)]
    assert (out == 1).all()


@pytest.mark.parametrize("threads", [1, 2])
def test_an_error_in_a_block_reaches_the_caller_and_stops_the_rest(monkeypatch, threads):
    monkeypatch.setattr(blockwise, "BLOCK_SIZE", 1)
    monkeypatch.setattr(blockwise, "_PARALLEL_FROM", 0)
    done = []

    def fail_on_third(block):
        if len(done) == 2:
            raise FloatingPointError("block 3 failed")
        done.append(block.copy())

    with pytest.raises(FloatingPointError, match="block 3 failed"):
        BlockRunner(threads).run([(fail_on_third, (np.zeros(1000, np.float32),))])
    assert len(done) < 1000


@pytest.mark.parametrize("optimizer", [Adam, AdamW])
def test_adam_in_blocks_over_threads_is_bitwise_adam_in_one_pass(monkeypatch, optimizer):
    """The threaded optimizer step computes every element with the same ops as one pass."""
    def trained(block_size, threads):
        monkeypatch.setattr(blockwise, "BLOCK_SIZE", block_size)
        monkeypatch.setattr(blockwise, "_PARALLEL_FROM", 0)
        monkeypatch.setattr(mg.backend.get_backend("cpu")._blocks, "threads", threads)
        params = [mg.tensor(a, requires_grad=True) for a in arrays(2, [(37, 11), (5,)])]
        adam = optimizer(params, lr=0.01, weight_decay=0.1)
        for step in range(3):
            for param, grad in zip(params, arrays(10 + step, [(37, 11), (5,)])):
                param.grad = mg.tensor(grad)
            adam.step()
        return [p.numpy().tobytes() for p in params]

    assert trained(1 << 20, 1) == trained(16, 2) == trained(5, 3)


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_a_forked_child_runs_blocks_with_threads_of_its_own(monkeypatch):
    import os
    import signal

    monkeypatch.setattr(blockwise, "BLOCK_SIZE", 8)
    monkeypatch.setattr(blockwise, "_PARALLEL_FROM", 0)
    runner = BlockRunner(2)
    out = np.zeros(64, np.float32)
    runner.run([(scale_and_add, (out, np.ones(64, np.float32)))])  # starts the helper thread
    child = os.fork()
    if child == 0:  # the child: run again, exit 0 if all blocks were done (killed if stuck)
        signal.alarm(30)
        runner.run([(scale_and_add, (out, np.ones(64, np.float32)))])
        os._exit(0 if (out == 1.5).all() else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
