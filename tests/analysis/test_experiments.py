"""The experiments' judging logic: each experiment fed synthetic rows (or synthetic training
results) built to satisfy, or to break, the paper's claim, and its checks' verdicts read back;
and E8 on a real ReZero model at init, where the claim holds exactly."""

import math

import numpy as np
import pytest

from transformer.analysis import experiments
from transformer.analysis.experiments import Check, Scale, Study, TaskData, ffn_gain, ffn_w2
from transformer.data import Example, Vocab, tokenize
from transformer.data.batching import encode_pairs

SENTENCES = ["a b c", "b c d", "c d a", "d a b", "a c d", "b d a", "c a b d", "d b c a"]
SCALE = Scale(seeds=2, d_model=8, n_heads=2, d_ff=16, probe_batches=2, probe_batch_size=4,
              depth=3, deep=4, depths=(2, 4, 8), rezero_steps=2, translation_steps=2,
              translation_warmup=1, copy_seeds=2, copy_depth=1, copy_steps=2,
              copy_batch_size=4, copy_warmup=1)


@pytest.fixture(scope="module")
def data():
    examples = [Example(s, s, "copy") for s in SENTENCES]
    vocab = Vocab.build([tokenize(s) for s in SENTENCES])
    return TaskData(vocab, encode_pairs(examples, vocab), examples, examples)


def row(variant, value, quantity, stack=None, layer=None, sublayer=None, param=None, step=1):
    return {"step": step, "config": variant, "stack": stack, "layer": layer,
            "sublayer": sublayer, "param": param, "quantity": quantity, "value": value}


class SyntheticStudy(Study):
    """A Study whose rows come from `make(variant, depth, seed)` instead of a model."""

    def __init__(self, data, make, scale=SCALE):
        super().__init__(scale, data)
        self.make = make

    def rows(self, variant, depth, seed):
        return self.make(variant, depth, seed)


def verdicts(outcome):
    return {check.label: check.verdict for check in outcome.checks}


def w2_rows(growth):
    """W2's expected gradient growing by `growth[(variant, stack)]` per layer."""
    def make(variant, depth, seed):
        return [row(variant, (1 + 0.01 * seed) * growth[variant, stack] ** (layer - 1),
                    "grad_mean_norm", stack, layer, "ffn", ffn_w2(stack, layer), step=0)
                for stack in ("encoder", "decoder") for layer in range(1, depth + 1)]
    return make


@pytest.mark.parametrize("post_decoder_growth, held", [(2.0, "held"), (1.0, "NOT held")])
def test_e1_judges_the_post_ln_decoder_growing_towards_the_output(data, post_decoder_growth,
                                                                   held):
    growth = {("post-LN", "decoder"): post_decoder_growth, ("post-LN", "encoder"): 1.1,
              ("pre-LN", "decoder"): 0.9, ("pre-LN", "encoder"): 0.8}
    outcome = experiments.e1_expected_gradient_by_layer(SyntheticStudy(data, w2_rows(growth)))
    assert verdicts(outcome) == {"post-LN dec": held, "pre-LN dec": "held",
                                 "post-LN enc": "held", "pre-LN enc": "reported"}
    assert outcome.checks[0].mean == pytest.approx(post_decoder_growth ** 2)  # layer 3 / 1


@pytest.mark.parametrize("pre_ln_slope, held", [(-0.5, "held"), (0.0, "NOT held")])
def test_e2_judges_the_log_log_slope_against_depth(data, pre_ln_slope, held):
    def make(variant, depth, seed):
        power = 0.0 if variant == "post-LN" else pre_ln_slope
        return [row(variant, 3.0 * depth ** power, "grad_mean_norm", stack, depth, "ffn",
                    ffn_w2(stack, depth), step=0) for stack in ("encoder", "decoder")]

    outcome = experiments.e2_last_layer_gradient_by_depth(SyntheticStudy(data, make))
    assert verdicts(outcome) == {"post-LN enc": "held", "pre-LN enc": held,
                                 "post-LN dec": "held", "pre-LN dec": held}
    assert outcome.checks[1].mean == pytest.approx(pre_ln_slope)


@pytest.mark.parametrize("post_ln_input, growth, held", [
    (1.0, 1.0, "held"), (1.5, 1.0, "NOT held"), (1.0, 0.2, "NOT held")])
def test_e3_judges_the_layernorm_input_against_one_plus_c(data, post_ln_input, growth, held):
    """post_ln_input, growth: the post-LN LN input and pre-LN growth per layer in units of
    the theory's 1 + c and c."""
    c = ffn_gain(SCALE.d_model, SCALE.d_ff)

    def make(variant, depth, seed):
        rows = []
        for stack in ("encoder", "decoder"):
            rows.append(row(variant, 0.6, "ln_input_sq_norm_per_dim", stack, 1, "self_attn"))
            for layer in range(1, depth + 1):
                rows.append(row(variant, post_ln_input * (1 + c), "ln_input_sq_norm_per_dim",
                                stack, layer, "ffn"))
                rows.append(row(variant, 0.6 + growth * 1.5 * c * layer,
                                "stream_sq_norm_per_dim", stack, layer))
        return rows

    outcome = experiments.e3_layernorm_input_and_stream(SyntheticStudy(data, make))
    judged = [check.held for check in outcome.checks[:3]]
    assert all(judged) == (held == "held")
    assert outcome.checks[1].mean == pytest.approx(growth * 1.5 * c)


def test_e4_judges_gradients_without_skips(data):
    def make(variant, depth, seed):  # grad_in at layer l: decay ** (depth - l)
        decay = 0.5 if variant == "plain" else 1.05
        return [row(variant, decay ** (depth - layer), "grad_in", "encoder", layer,
                    "self_attn") for layer in range(1, depth + 1)]

    outcome = experiments.e4_without_skips(SyntheticStudy(data, make))
    gradient = {c.label.split(":")[0]: c.verdict for c in outcome.checks if "grad" in c.label}
    assert gradient == {"post-LN": "held", "pre-LN": "held", "post-LN, no skip": "held",
                        "pre-LN, no skip": "held", "plain": "NOT held"}  # 0.5³ > 0.01
    plain = next(c for c in outcome.checks if c.label.startswith("plain: grad"))
    assert plain.mean == pytest.approx(0.5 ** 3)


def test_e7_judges_the_branch_share_against_one_over_the_stream(data):
    def make(variant, depth, seed):
        rows = []
        for stack, sublayer in experiments.BLOCK_TYPES:
            for layer in range(1, depth + 1):
                size = 1.0 + layer  # ‖x_l‖²/d
                share = 0.8 / math.sqrt(size) if variant == "pre-LN" else 0.6
                rows += [row(variant, 2.0, "grad_skip", stack, layer, sublayer),
                         row(variant, 2.0 * share, "grad_branch", stack, layer, sublayer),
                         row(variant, size, "ln_input_sq_norm_per_dim", stack, layer, sublayer)]
        return rows

    outcome = experiments.e7_skip_versus_branch(SyntheticStudy(data, make))
    assert [c.verdict for c in outcome.checks] == ["held", "held", "reported"]
    assert outcome.checks[0].mean == pytest.approx(math.sqrt(2 / 4))
    assert outcome.checks[1].mean == pytest.approx(1.0)
    assert outcome.checks[2].mean == pytest.approx(0.6)


@pytest.mark.parametrize("post_ln_gap, held", [(1.0, "held"), (0.1, "NOT held")])
def test_e5_judges_the_post_ln_minus_pre_ln_gap(data, monkeypatch, post_ln_gap, held):
    def fake_runs(data, configs, seeds, steps, batch_size, depth, sizes, finish):
        final = {"pre-LN, no warmup": [3.0, 3.1], "pre-LN, warmup 1": [3.0, 3.0],
                 "post-LN, warmup 1": [3.5, 3.5],
                 "post-LN, no warmup": [3.0 + post_ln_gap, 3.1 + post_ln_gap]}
        assert set(configs) == set(final)
        return [], {label: ([1], np.ones((seeds, 1))) for label in configs}, final

    monkeypatch.setattr(experiments, "training_runs", fake_runs)
    found = verdicts(experiments.e5_warmup_translation(data, SCALE))
    assert found["post-LN minus pre-LN, no warmup"] == held
    assert found["pre-LN no warmup minus warmup"] == "held"


def test_e6_judges_solve_rates(data, monkeypatch):
    def fake_runs(data, configs, seeds, steps, batch_size, depth, sizes, finish):
        final = {"post-LN, warmup 1": [1.0, 0.97], "post-LN, no warmup": [0.1, 0.6],
                 "pre-LN, no warmup": [0.99, 0.8]}
        return [], {label: ([1], np.ones((seeds, 1))) for label in configs}, final

    monkeypatch.setattr(experiments, "training_runs", fake_runs)
    outcome = experiments.e6_warmup_copy(data, SCALE)
    assert [c.verdict for c in outcome.checks] == ["held", "held", "NOT held"]
    assert outcome.checks[2].label == "pre-LN, no warmup (solved 1/2)"


def test_e8_on_a_real_rezero_model_at_init(data):
    outcome = experiments.e8_rezero_identity(Study(SCALE, data), data)
    assert [c.verdict for c in outcome.checks] == ["held"] * 4 + ["reported"]
    assert outcome.checks[0].mean == 0.0 and outcome.checks[1].mean == 0.0


@pytest.mark.parametrize("pre_ln_shape, held", [("harmonic", "held"), ("square", "NOT held")])
def test_e9_judges_the_output_change_against_depth(data, monkeypatch, pre_ln_shape, held):
    def fake_change(model, batch, seed):
        depth = len(model.encoder.layers)
        if model.config.norm_first:
            return 1e-4 * (sum(1 / i for i in range(1, 5 * depth + 1)) if
                           pre_ln_shape == "harmonic" else depth ** 2)
        return 1e-4 * depth

    monkeypatch.setattr(experiments, "output_change", fake_change)
    outcome = experiments.e9_output_change_by_depth(Study(SCALE, data))
    assert [c.verdict for c in outcome.checks] == ["held", held]
    assert outcome.checks[0].mean == pytest.approx(1.0)


def test_a_check_is_judged_on_the_mean_over_seeds():
    assert Check("x", [1.0, 3.0], 2.0).held and not Check("x", [1.0, 2.9], 2.0).held
    assert str(Check("x", [1.0, 3.0], None, 1.0)) == "x 2±1 (<= 1: NOT held)"
    assert Check("x", [5.0]).verdict == "reported"
