"""The Trainer, checkpoints and decoding on 'cuda' (real CuPy on a GPU, the CuPy stand-in
elsewhere), against the CPU; a training step that never makes the host wait between reads;
a NaN that stops training at the first read after it, with no bad update applied."""

import math

import numpy as np
import pytest

import minigrad as mg
from transformer import Transformer, greedy_decode
from transformer.builders import build_model_config, build_vocab
from transformer.data import load_task
from transformer.data.batching import BatchIterator, encode_pairs
from transformer.decoding import beam_search
from transformer.training import Callback, NonFiniteLossError, Trainer
from transformer.training_config import TrainingConfig

pytestmark = pytest.mark.gpu  # the cuda suite (`pytest -m gpu`): real CuPy on a GPU

MODEL = {"d_model": 16, "n_heads": 2, "n_encoder_layers": 1, "n_decoder_layers": 1,
         "d_ff": 32, "dropout": 0.1}


def build_trainer(device, out=None, callbacks=(), model=None, **training):
    options = {"steps": 8, "batch_size": 16, "warmup_steps": 4, "eval_every": 4,
               "checkpoint_every": 4, "log_every": 4, "eval_examples": 16, "progress": False,
               **training}
    config = TrainingConfig(**options)
    mg.manual_seed(config.seed)
    splits = load_task("copy")
    vocab = build_vocab(splits)
    net = Transformer(build_model_config(vocab, splits, {**MODEL, **(model or {})}))
    batches = BatchIterator(encode_pairs(splits["train"], vocab), vocab, config.batch_size,
                            seed=config.seed, device=device)
    return Trainer(net.to(device), batches, splits["valid"], vocab, config, out=out,
                   callbacks=callbacks)


class Losses(Callback):
    def __init__(self):
        self.records = []

    def on_step_end(self, trainer, step, record):
        self.records.append(dict(record))


def test_a_cuda_run_follows_the_cpu_run():
    """Without dropout (the devices draw different random numbers) the losses agree."""
    runs = {}
    for device in ("cpu", "cuda"):
        losses = Losses()
        trainer = build_trainer(device, callbacks=[losses], model={"dropout": 0.0},
                                log_every=1)
        assert trainer.train() is True
        runs[device] = [record["loss"].item() for record in losses.records]
        assert all(p.device == mg.backend.normalize_device(device)
                   for p in trainer.model.parameters())
    np.testing.assert_allclose(runs["cuda"], runs["cpu"], rtol=2e-4)


def test_callbacks_get_device_tensors_at_every_step():
    losses = Losses()
    trainer = build_trainer("cuda", callbacks=[losses], sync_every=2, log_every=4)
    trainer.train()
    assert [trainer.reads_at(step) for step in range(1, 9)] == [False, True] * 4
    for record in losses.records:
        for name in ("loss", "grad_norm"):
            assert isinstance(record[name], mg.Tensor) and record[name].shape == ()
            assert record[name].device == trainer.model.device


@pytest.mark.parametrize("ema_decay", [0.0, 0.9], ids=["weights", "moving-average"])
def test_a_cuda_step_never_waits_between_reads(stand_in, ema_decay):
    """train_step with clipping (and the weights' moving average) makes no device-to-host
    read (the stand-in raises on one)."""
    trainer = build_trainer("cuda", ema_decay=ema_decay)
    batches = [trainer.data.next_batch() for _ in range(3)]
    trainer.train_step(batches[0])  # the first step builds the optimizer's flat arrays
    trainer.read()
    stand_in.reset()
    with stand_in.forbid_synchronize():
        for batch in batches[1:]:
            trainer.train_step(batch)
    assert stand_in.sync_count == 0
    numbers = trainer.read()
    assert stand_in.sync_count == 1  # one transfer for the steps since the last read
    assert math.isfinite(numbers["loss"]) and math.isfinite(numbers["grad_norm"])


class PoisonGradient(Callback):
    def __init__(self, step):
        self.step = step

    def on_backward_end(self, trainer, step, batch):
        if step == self.step:
            parameter = trainer.parameters[0]
            parameter.grad = parameter.grad * math.nan


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_a_nan_stops_at_the_first_read_after_it_with_no_bad_update(device, tmp_path):
    poison = PoisonGradient(step=5)
    trainer = build_trainer(device, tmp_path, callbacks=[poison])
    with pytest.raises(NonFiniteLossError, match=r"^step 5: the gradient norm is nan") as raised:
        trainer.train()
    assert f"the last good checkpoint ({tmp_path / 'last.npz'}) was kept" in str(raised.value)
    assert trainer.step == 8  # steps 6-8 ran, the stop came at the read after step 8
    assert all(np.isfinite(p.numpy()).all() for p in trainer.model.parameters())
    assert mg.load(tmp_path / "last.npz")["step"] == 4


def test_a_cuda_run_resumes_bitwise(tmp_path):
    """Checkpoints of a cuda run hold the GPU's random state and the weights' moving average:
    4 steps, save, resume for 4 more ends where 8 straight steps end."""
    straight = build_trainer("cuda", tmp_path / "straight", ema_decay=0.9)
    straight.train()
    first = build_trainer("cuda", tmp_path / "resumed", steps=4, ema_decay=0.9)
    first.train()
    resumed = build_trainer("cuda", tmp_path / "resumed", ema_decay=0.9)
    assert resumed.resume() == 4
    resumed.train()
    for ours, theirs in zip(resumed.model.parameters(), straight.model.parameters()):
        assert ours.device == "cuda:0"
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    for name, average in straight.average.averages.items():
        assert type(resumed.average.averages[name]) is type(average)  # on the device
        np.testing.assert_array_equal(mg.tensor(resumed.average.averages[name]).numpy(),
                                      mg.tensor(average).numpy())
    loaded = mg.load(tmp_path / "straight" / "last.npz", device="cuda")
    assert all(t.device == "cuda:0" for t in loaded["model"].values())


# logits whose top two differ by less than this may swap on a GPU (float32 summed in another
# order: differences of about 1e-5 here); tokens are compared only before such a near-tie
TIE_MARGIN = 1e-3


def _decided_steps(logits):
    """For each row of the CPU's greedy logits (batch, steps, vocab): how many of its first
    steps have a top two further apart than TIE_MARGIN."""
    top = np.sort(logits, axis=-1)[..., -2:]
    tied = (top[..., 1] - top[..., 0]) <= TIE_MARGIN  # (batch, steps)
    return np.where(tied.any(axis=1), tied.argmax(axis=1), tied.shape[1])


def test_decoding_on_cuda_gives_the_cpus_tokens():
    """Greedy tokens agree up to each row's first near-tie of the CPU's top two logits; beam
    search's agree on most rows, and where they do not, the GPU's output scores as the CPU's
    to TIE_MARGIN: a near-tie of cumulative scores, which may swap on a GPU (not a defect)."""
    trainer = build_trainer("cpu", model={"dropout": 0.0}, steps=4)
    trainer.train()
    model, vocab = trainer.model.eval(), trainer.vocab
    src = trainer.data.next_batch().src
    found = {}
    for device in ("cpu", "cuda"):
        on_device = model.to(device)
        ids = src.to(device)
        greedy, logits = greedy_decode(on_device, ids, 6, vocab.bos_id, vocab.eos_id,
                                       return_logits=True)
        beams, scores = beam_search(on_device, ids, 3, 6, vocab.bos_id, vocab.eos_id,
                                    return_scores=True)
        assert greedy.device == beams.device == mg.backend.normalize_device(device)
        found[device] = (greedy.numpy(), logits.numpy(), beams.numpy(), scores.numpy())
    cpu_greedy, cpu_logits, cpu_beams, cpu_scores = found["cpu"]
    decided = _decided_steps(cpu_logits)
    for row, steps in enumerate(decided):
        np.testing.assert_array_equal(found["cuda"][0][row, :steps], cpu_greedy[row, :steps])
    clear = decided == cpu_logits.shape[1]
    assert clear.sum() >= len(clear) // 2  # most rows are compared whole
    cuda_beams, cuda_scores = found["cuda"][2:]
    width = max(cpu_beams.shape[1], cuda_beams.shape[1])
    cpu_beams, cuda_beams = (np.pad(b, ((0, 0), (0, width - b.shape[1])), constant_values=-1)
                             for b in (cpu_beams, cuda_beams))
    same = (cuda_beams == cpu_beams).all(axis=1)
    assert same.sum() >= len(same) // 2
    np.testing.assert_allclose(cuda_scores[~same], cpu_scores[~same], rtol=0, atol=TIE_MARGIN)
