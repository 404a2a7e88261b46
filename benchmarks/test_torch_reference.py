"""The PyTorch reference of the benchmarks computes what `transformer.Transformer` computes:
the same parameter count for every benchmark shape, and with our weights copied in (dropout
off), the same positions, logits and loss (float32), gradients (float64) and greedy decodings.

It lives beside the benchmarks, outside the test suite (PyTorch is never a test dependency):
run it with the `bench` extra installed, `python -m pytest benchmarks`."""

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg
from minigrad.nn import functional as F
from transformer import Transformer, greedy_decode
from transformer.positional import sinusoidal_encoding

torch = pytest.importorskip("torch")

BENCHMARKS = Path(__file__).resolve().parent


def _load(name):
    """A module of benchmarks/ (not a package), registered so that it loads once."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


configs = _load("configs")
reference = _load("torch_reference")


def _twin_models(config, **changes):
    """Our model and the PyTorch reference with our weights copied in, both in eval mode."""
    kwargs = {**config.model_kwargs(), **changes}
    mg.manual_seed(0)
    ours = Transformer(kwargs).eval()
    theirs = reference.Transformer(**kwargs).eval()
    reference.load_minigrad_weights(theirs, ours.state_dict())
    return ours, theirs


@pytest.mark.parametrize("name", sorted(configs.CONFIGS))
def test_the_same_parameter_count_for_every_benchmark_config(name):
    kwargs = configs.CONFIGS[name].model_kwargs()
    mg.manual_seed(0)
    ours = Transformer(kwargs).num_parameters()
    with torch.device("meta"):  # shapes only: no memory, no initialization work
        theirs = reference.parameter_count(reference.Transformer(**kwargs))
    assert ours == theirs


def test_the_same_sinusoidal_positions():
    np.testing.assert_allclose(reference.sinusoidal_encoding(64, 32).numpy(),
                               sinusoidal_encoding(64, 32), rtol=0, atol=1e-6)


def test_the_same_initialization_scheme():
    """Xavier-uniform bounds sqrt(6 / (fan_in + fan_out)), zero biases, LayerNorm ones/zeros."""
    torch.manual_seed(0)
    model = reference.Transformer(**configs.CONFIGS["tiny"].model_kwargs())
    for name, parameter in model.named_parameters():
        values = parameter.detach().numpy()
        if name.endswith("norm.weight"):
            assert (values == 1).all(), name
        elif parameter.ndim == 1:
            assert (values == 0).all(), name
        else:
            fan_out, fan_in = values.shape
            bound = np.sqrt(6 / (fan_in + fan_out))
            assert np.abs(values).max() <= bound and np.abs(values).max() > 0.9 * bound, name


def _loss(logits, tgt_out):
    return F.cross_entropy(logits, mg.tensor(tgt_out), ignore_index=configs.PAD_ID,
                           label_smoothing=configs.LABEL_SMOOTHING)


def _torch_loss(logits, tgt_out):
    return torch.nn.functional.cross_entropy(
        logits.flatten(0, 1), torch.from_numpy(tgt_out).flatten(),
        ignore_index=configs.PAD_ID, label_smoothing=configs.LABEL_SMOOTHING)


@pytest.mark.parametrize("share_embeddings", [True, False])
def test_identical_weights_give_the_same_logits_and_loss_in_float32(share_embeddings):
    config = configs.CONFIGS["tiny"]
    ours, theirs = _twin_models(config, share_embeddings=share_embeddings)
    src, tgt_in, tgt_out = configs.random_batch(config)
    assert (src == configs.PAD_ID).any() and (tgt_out == configs.PAD_ID).any()

    with mg.no_grad():
        logits = ours(mg.tensor(src), mg.tensor(tgt_in))
    with torch.no_grad():
        torch_logits = theirs(torch.from_numpy(src), torch.from_numpy(tgt_in))

    assert logits.dtype == np.float32 and torch_logits.dtype == torch.float32
    np.testing.assert_allclose(logits.numpy(), torch_logits.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(_loss(logits, tgt_out).item(),
                               _torch_loss(torch_logits, tgt_out).item(), rtol=1e-5)


@pytest.mark.parametrize("share_embeddings", [True, False])
def test_identical_weights_give_the_same_gradients_in_float64(share_embeddings):
    """In float64, because in float32 a ReLU input within rounding of 0 can fall on either
    side of the kink in either framework, and its unit's gradient then differs by far more
    than rounding (seen here: 1e-2 relative in one layer, 1e-3 below it)."""
    config = configs.CONFIGS["tiny"]
    ours, theirs = _twin_models(config, share_embeddings=share_embeddings)
    ours.to(dtype="float64")
    theirs.double()
    src, tgt_in, tgt_out = configs.random_batch(config)

    _loss(ours(mg.tensor(src), mg.tensor(tgt_in)), tgt_out).backward()
    _torch_loss(theirs(torch.from_numpy(src), torch.from_numpy(tgt_in)), tgt_out).backward()

    torch_parameters = dict(theirs.named_parameters())
    for name, parameter in ours.named_parameters():
        expected = torch_parameters[reference.torch_name(name)].grad.numpy()
        # relative to the largest gradient of the matrix (the keys' bias has a zero
        # gradient, softmax being blind to a constant added to every score: rounding only)
        tolerance = 1e-9 * max(np.abs(expected).max(), 1e-6)
        np.testing.assert_allclose(parameter.grad.numpy(), expected, rtol=0, atol=tolerance,
                                   err_msg=name)


def test_greedy_decoding_gives_the_same_tokens_with_and_without_the_cache():
    """Exact equality of argmaxes over random weights: a near-tie closer than float32 noise
    would break it, which the fixed seeds make a fixed outcome (it holds for these)."""
    config = configs.CONFIGS["tiny"]
    ours, theirs = _twin_models(config)
    src, _, _ = configs.random_batch(config, batch=configs.DECODE_BATCH)
    decodings = []
    for use_cache in (True, False):
        decodings.append(greedy_decode(
            ours, mg.tensor(src), configs.DECODE_STEPS, configs.BOS_ID, configs.EOS_ID,
            use_cache=use_cache, stop_at_eos=False).numpy())
        decodings.append(reference.greedy_decode(
            theirs, torch.from_numpy(src), configs.DECODE_STEPS, configs.BOS_ID,
            configs.EOS_ID, use_cache=use_cache, stop_at_eos=False).numpy())
    assert decodings[0].shape == (configs.DECODE_BATCH, configs.DECODE_STEPS)
    for decoding in decodings[1:]:
        np.testing.assert_array_equal(decoding, decodings[0])


@pytest.mark.parametrize("name", ["tiny", "small"])
def test_the_counted_matmul_flops_are_what_torch_counts(name):
    """train_step's matmul floor rests on this count: forward and backward products of one
    training step, counted by torch's FlopCounterMode on the reference model."""
    from torch.utils.flop_counter import FlopCounterMode

    train_step = _load("train_step")
    config = configs.CONFIGS[name]
    model = reference.Transformer(**config.model_kwargs())
    src, tgt_in, tgt_out = (torch.from_numpy(ids) for ids in configs.random_batch(config))
    with FlopCounterMode(display=False) as counter:
        _torch_loss(model(src, tgt_in), tgt_out.numpy()).backward()
    assert train_step.matmul_flops(config) == counter.get_total_flops()


@pytest.mark.parametrize("share_embeddings", [True, False])
def test_the_reference_loads_our_safetensors_export_and_gives_the_same_logits(
        tmp_path, share_embeddings):
    """A file of `transformer.weights.export_weights`, read by safetensors' PyTorch loader
    with no minigrad code, is the reference model's weights under `torch_name`."""
    safetensors_torch = pytest.importorskip("safetensors.torch")
    from transformer.weights import export_weights

    config = configs.CONFIGS["tiny"]
    kwargs = {**config.model_kwargs(), "share_embeddings": share_embeddings}
    mg.manual_seed(0)
    ours = Transformer(kwargs).eval()
    path = tmp_path / "model.safetensors"
    export_weights(ours, path)
    theirs = reference.Transformer(**kwargs).eval()
    reference.load_minigrad_weights(theirs, safetensors_torch.load_file(str(path)))

    src, tgt_in, _ = configs.random_batch(config)
    with mg.no_grad():
        logits = ours(mg.tensor(src), mg.tensor(tgt_in)).numpy()
    with torch.no_grad():
        torch_logits = theirs(torch.from_numpy(src), torch.from_numpy(tgt_in)).numpy()
    np.testing.assert_allclose(logits, torch_logits, rtol=1e-4, atol=1e-4)
