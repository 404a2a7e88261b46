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


def test_blocks_are_whole_rows_of_every_array_even_views(monkeypatch):
    """Arrays of different widths (and strided views) are cut at the same rows."""
    monkeypatch.setattr(blockwise, "_PARALLEL_FROM", 0)
    seen = []
    out = np.zeros((6, 10), np.float32)[:, ::2]  # not contiguous: (6, 5)
    row_scale = np.arange(6, dtype=np.float32)[:, None]  # (6, 1)

    def record(out_block, scale_block):
        seen.append((out_block.shape, scale_block.shape))
        out_block += scale_block

    monkeypatch.setattr(blockwise, "BLOCK_SIZE", 10)
    BlockRunner(2).run([(record, (out, row_scale))])
    assert sorted(seen) == [((2, 5), (2, 1))] * 3
    assert (out == row_scale).all()


def test_a_0d_array_is_updated_in_place():
    out = np.array(2.0, np.float32)
    BlockRunner(2).run([(scale_and_add, (out, np.array(1.0, np.float32)))])
    assert out == 2.0


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


def _in_small_blocks(monkeypatch, threads):
    monkeypatch.setattr(blockwise, "BLOCK_SIZE", 7)
    monkeypatch.setattr(blockwise, "_PARALLEL_FROM", 0)
    monkeypatch.setattr(mg.backend.get_backend("cpu")._blocks, "threads", threads)


@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_softmax_and_cross_entropy_in_blocks_are_bitwise_one_pass(monkeypatch, threads,
                                                                  smoothing):
    """The fused ops that cut their rows into blocks give exactly the one-block result."""
    logits_array = arrays(4, [(3, 5, 11)])[0]
    logits_array[0, 0, 2] = -np.inf  # a class that can never be picked
    mask = np.zeros((3, 1, 11), bool)
    mask[1, :, 3:] = True
    target = np.random.default_rng(5).integers(0, 11, (3, 5))

    def run():
        logits = mg.tensor(logits_array, requires_grad=True)
        loss = mg.nn.functional.cross_entropy(logits, mg.tensor(target),
                                              label_smoothing=smoothing)
        loss.backward()
        probabilities = mg.nn.functional.softmax(mg.tensor(logits_array), axis=-1,
                                                 mask=mg.tensor(mask))
        return [array.tobytes() for array in (loss.numpy(), logits.grad.numpy(),
                                               probabilities.numpy())]

    whole = run()
    _in_small_blocks(monkeypatch, threads)
    assert run() == whole
