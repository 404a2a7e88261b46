"""The gradient-flow study's framework: every expectation's rule flips on crafted data, the
attention-only stack's rate, train() firing the Trainer's callbacks, each residual scheme's
identity or scaling at init, and the default model unchanged by the registries."""

import math

import numpy as np
import pytest

import minigrad as mg
import transformer.study.experiments  # noqa: F401  (registers E1-E9)
from transformer.data import Example, Vocab, tokenize
from transformer.data.batching import encode_pairs
from transformer.instruments import GradientFlowRecorder
from transformer.instruments.streams import layer_streams
from transformer.residual import deepnorm_constants, stack_blocks
from transformer.study.expectations import EXPECTATIONS, expectation
from transformer.study.experiments.e4_rank_collapse import (
    EXACT_FLOOR,
    FLOOR,
    attention_stack,
    identity_path_share,
    layer_excesses,
    linear_excess,
    median_rate,
    pure_attention_exact,
    too_few_ratios,
)
from transformer.study.experiments.e8_rezero import steps_to
from transformer.study.toolkit import (
    EXPERIMENTS,
    Check,
    Outcome,
    TaskData,
    build_model,
    make_trainer,
    train,
    warmup_schedule,
)

SIZES = dict(d_model=8, n_heads=2, d_ff=16)


@pytest.fixture(scope="module")
def data():
    sentences = ["a b c", "b c d", "c d a", "d a b", "a c d", "b d a", "c a", "d b"]
    examples = [Example(s, s, "copy") for s in sentences]
    vocab = Vocab.build([tokenize(s) for s in sentences])
    return TaskData(vocab, encode_pairs(examples, vocab), examples, examples)


@pytest.mark.parametrize("key", sorted(EXPECTATIONS))
def test_each_rule_flips_on_crafted_data(key):
    found = expectation(key)
    assert found.quote and found.source and found.conditions and found.threshold_from
    assert found.basis in ("paper", "derivation", "extension", "mechanism")
    inside = found.low if found.low is not None else found.high
    assert Check(key, [inside, inside], expect=key).verdict == "held"
    if found.low is not None:
        assert Check(key, [found.low - abs(found.low) * 0.1 - 1e-9] * 2, expect=key).verdict == \
            "NOT held"
    if found.high is not None:
        assert Check(key, [found.high + abs(found.high) * 0.1 + 1e-9] * 2, expect=key).verdict == \
            "NOT held"


def test_the_rezero_rules_steps_to_a_loss_and_the_deep_stack():
    assert {"E8.faster", "E8.deep_without_warmup"} <= set(EXPECTATIONS)
    assert expectation("E8.deep_without_warmup").basis == "extension"
    assert "choice" in expectation("E8.deep_without_warmup").threshold_from
    losses = [5.0] * 10 + [4.0] * 20
    assert steps_to(losses, 4.5) == 15  # the 10-step mean reaches 4.5 at step 15
    assert steps_to([5.0] * 30, 4.5) == 31  # never: one past the budget
    first, fell, stalled = 3.0, 1.5, 2.5  # a deep stack's first and final training losses
    assert Check("deep", [fell - first] * 2, expect="E8.deep_without_warmup").verdict == "held"
    assert Check("deep", [stalled - first] * 2, expect="E8.deep_without_warmup").verdict == \
        "NOT held"
    assert Check("deep", [fell - first, math.nan - first],
                 expect="E8.deep_without_warmup").verdict == "not testable"  # a seed diverged


def test_a_missing_bound_is_one_error_naming_the_expectation():
    assert expectation("E6.comparable").bound("low") == expectation("E6.comparable").low
    with pytest.raises(ValueError, match="'E6.comparable' has no high bound"):
        expectation("E6.comparable").bound("high")


def test_verdicts_not_testable_and_reported():
    untestable = Check("x", [1.0], expect="E4.pure_rate", untestable="floor at layer 2")
    assert untestable.verdict == "not testable" and "not testable" in str(untestable)
    assert Check("y", [1.0]).verdict == "reported"
    outcome = Outcome("X", "x", "c", "h", [untestable, Check("y", [1.0])], [])
    assert outcome.verdict == "not testable"
    outcome.checks.append(Check("z", [0.0, 0.1], low=1.0))
    assert outcome.verdict == "NOT held" and outcome.record()["outcome"] == "NOT held"
    with pytest.raises(KeyError, match="expectations.py"):
        Check("w", [1.0], expect="E0.none")


def test_the_rate_rules_on_crafted_shares():
    doubly = [1.0] + [math.exp(-(3.0 ** layer)) for layer in range(1, 4)]
    linear = [1.0] + [math.exp(-0.5 * layer) for layer in range(1, 8)]
    assert median_rate(doubly) == pytest.approx(3.0)
    assert median_rate(linear) < expectation("E4.pure_rate").low
    assert linear_excess(linear) == pytest.approx(1.0)
    assert linear_excess(doubly) > 1.25


def test_the_skip_rule_is_the_median_over_layers_not_the_largest_layer():
    """A skip stack whose first layer barely moves the share, then -log share linear (as a
    float64 run at d_model 16 gave: -log s 0.024, 0.33, 0.62, 1.0, ...): the largest layer's
    excess (the rule judged before) calls it faster than linear, the median does not; a
    stack whose -log share grows faster than linearly at most layers fails either way."""
    logs = [0.02] + [0.3 * layer for layer in range(1, 12)]
    slow_start = [1.0] + [math.exp(-v) for v in logs]
    assert max(layer_excesses(slow_start)) > 5 * 1.25  # the largest layer's excess
    assert linear_excess(slow_start) == pytest.approx(1.0, abs=0.1)
    assert linear_excess(slow_start) < 1.25
    faster = [1.0] + [math.exp(-(1.6 ** layer)) for layer in range(1, 10)]
    faster[3] = math.exp(-(1.6 ** 2) * 1.01)  # one layer that does not grow: the median holds
    assert linear_excess(faster) > 1.25


def test_a_rate_on_fewer_than_three_ratios_above_the_floor_is_not_testable():
    four = [1.0] + [math.exp(-(2.0 ** layer)) for layer in range(1, 5)] + [FLOOR / 10]
    two = four[:3] + [FLOOR / 10] * 3
    assert too_few_ratios([four, four]) is None
    reason = too_few_ratios([four, two])
    assert reason == f"1 layer-to-layer ratio(s) above the float64 floor {FLOOR:g}, 3 needed"
    assert Check("rate", [3.0], expect="E4.pure_rate", untestable=reason).verdict == \
        "not testable"


def test_the_identity_path_prediction_from_layernorm_input_and_branch_sizes():
    def rows(ln_input, branch):
        return [{"quantity": quantity, "stack": "encoder", "layer": layer, "sublayer": sublayer,
                 "step": 1, "value": value}
                for layer in (1, 2) for sublayer in ("self_attn", "ffn")
                for quantity, value in (("ln_input_sq_norm_per_dim", ln_input),
                                        ("branch_sq_norm_per_dim", branch))]
    # post-LN: the sum (LN input 4) holds x (3) and the branch (1): x keeps 3/4 per block
    assert identity_path_share(rows(4.0, 1.0), "post-LN", 2) == pytest.approx(0.75 ** 4)
    # pre-LN: the stream x (LN input 3) plus the branch (1): 3/4 per block
    assert identity_path_share(rows(3.0, 1.0), "pre-LN", 2) == pytest.approx(0.75 ** 4)


def test_the_attention_only_stack_collapses_doubly_exponentially_without_a_skip():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 6, 16))
    lengths = [6, 6, 5, 4]
    pure = pure_attention_exact(x, 6, 2, 0, lengths)
    skip = attention_stack(x, 8, 2, 0, "skip", lengths)
    assert pure[3] < 1e-6 < skip[-1]
    assert too_few_ratios([pure], EXACT_FLOOR) is None
    assert median_rate(pure, EXACT_FLOOR) >= expectation("E4.pure_rate").low
    assert skip[-1] / skip[0] >= expectation("E4.skip_floor").low  # float64 at d_model 16


def test_the_pure_stack_as_mean_and_residual_is_the_same_stack_below_the_floor():
    """Carried as mean and residual apart, the pure stack gives the one-array stack's shares
    where those lie above the floor, and keeps falling where the one array stops at its
    rounding (about 1e-32): at least 3 ratios above the floor where one array has fewer."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 8, 16)) + rng.standard_normal((1, 1, 16))
    lengths = [8, 7, 1]  # a one-token sequence is left out, as token_share leaves it
    plain = attention_stack(x, 6, 2, 3, "pure", lengths)
    exact = pure_attention_exact(x, 6, 2, 3, lengths)
    above = [layer for layer, share in enumerate(plain) if share > FLOOR]
    np.testing.assert_allclose([exact[layer] for layer in above],
                               [plain[layer] for layer in above], rtol=1e-6)
    assert too_few_ratios([plain]) is not None and too_few_ratios([exact], EXACT_FLOOR) is None
    assert min(exact[:5]) > EXACT_FLOOR and exact[4] < FLOOR


def test_train_advances_the_step_and_fires_a_recorder(data):
    model = build_model(data, 0, 1, **SIZES)
    recorder = GradientFlowRecorder(model, "post-LN", every=2)
    trainer = make_trainer(model, data, 4, 0, warmup_schedule(1e-3, 2, 2), [recorder])
    with recorder:
        losses = train(trainer, 4)
    assert trainer.step == 4 and len(losses) == 4 and all(math.isfinite(v) for v in losses)
    assert {row["step"] for row in recorder.rows} == {2, 4}


def test_rezero_and_t_fixup_at_init(data):
    batch = data.batch(4)
    rezero = build_model(data, 0, 2, **SIZES, scheme_name="rezero")
    streams = layer_streams(rezero, batch)
    for xs in streams.values():
        assert all(np.array_equal(x, xs[0]) for x in xs[1:])
    wide = dict(d_model=64, n_heads=2, d_ff=16)
    plain = build_model(data, 0, 2, **wide, scheme_name="post-LN")
    fixup = build_model(data, 0, 2, **wide, scheme_name="t-fixup")
    assert not any(hasattr(b, "norm") for b in stack_blocks(fixup.encoder))
    table = fixup.encoder.embedding.weight.numpy()
    assert np.std(table) == pytest.approx(64 ** -0.5 * (9 * 2) ** -0.25, rel=0.15)
    name = "decoder.layers.0.ffn.sublayer.linear2.weight"
    ratio = dict(fixup.named_parameters())[name].numpy() / \
        dict(plain.named_parameters())[name].numpy()
    assert np.allclose(ratio, (9 * 2) ** -0.25, rtol=1e-5)


def test_deepnorm_and_admin_scale_the_skip(data):
    plain = build_model(data, 0, 2, **SIZES, scheme_name="post-LN")
    deep = build_model(data, 0, 2, **SIZES, scheme_name="deepnorm")
    constants = deepnorm_constants(2, 2)
    for stack in ("encoder", "decoder"):
        alpha, beta = constants[stack]
        assert all(b.skip_scale == alpha for b in stack_blocks(getattr(deep, stack)))
        name = f"{stack}.layers.1.self_attn.sublayer.v_proj.weight"
        assert np.allclose(dict(deep.named_parameters())[name].numpy(),
                           beta * dict(plain.named_parameters())[name].numpy(), rtol=1e-5)
        query = f"{stack}.layers.1.self_attn.sublayer.q_proj.weight"
        assert np.array_equal(dict(deep.named_parameters())[query].numpy(),
                              dict(plain.named_parameters())[query].numpy())
    admin = build_model(data, 0, 2, **SIZES, scheme_name="admin")
    scales = [b.skip_scale for b in stack_blocks(admin.encoder)]
    assert scales[0] == 1.0 and all(b > a for a, b in zip(scales, scales[1:]))


def test_admin_omega_is_its_formula_over_the_profiled_branch_variances(data):
    """ω_i² = 1 + Σ_{j<i} Var[F_j] per stack, Var[F_j] of each branch on the profiling batch
    of the model with every ω = 1 (post-LN, the same seed's weights)."""
    plain = build_model(data, 0, 3, **SIZES, scheme_name="post-LN")
    admin = build_model(data, 0, 3, **SIZES, scheme_name="admin")
    variances = {}

    def observe(block, x, branch, s, out):
        variances[id(block)] = float(np.var(branch.numpy()))

    for stack in (plain.encoder, plain.decoder):
        for block in stack_blocks(stack):
            block.observer = observe
    batch = data.batch()
    with mg.no_grad():
        plain(batch.src, batch.tgt_in, batch.src_mask, batch.tgt_mask)
    for stack in ("encoder", "decoder"):
        var = [variances[id(b)] for b in stack_blocks(getattr(plain, stack))]
        expected = np.sqrt(1.0 + np.concatenate([[0.0], np.cumsum(var)[:-1]]))
        omegas = [b.skip_scale for b in stack_blocks(getattr(admin, stack))]
        assert len(omegas) == (6 if stack == "encoder" else 9)
        np.testing.assert_allclose(omegas, expected, rtol=1e-6)


def test_the_scaled_embedding_init_gives_unit_power_per_dimension(data):
    model = build_model(data, 0, 1, d_model=64, n_heads=2, d_ff=16, init="scaled-embedding")
    rows = model.encoder.embedding.weight.numpy() * model.encoder.scale
    assert np.mean(rows ** 2) == pytest.approx(1.0, rel=0.1)


def test_every_experiment_is_registered_with_its_claim():
    assert [f"E{n}" for n in range(0, 10)] == [n for n in EXPERIMENTS if n.startswith("E")]
    assert "F3" in EXPERIMENTS and not EXPERIMENTS["pilot"].default
    assert all(found.claim for found in EXPERIMENTS.values())


def test_toy_sizes_draw_a_smaller_toy_en_es_and_refuse_another_task():
    small = TaskData.load("toy-en-es", toy_sizes=dict(n_train=50, n_valid=20, n_test=10,
                                                      n_compositional=0, n_cross=0,
                                                      n_long=0))
    assert (len(small.train), len(small.valid), len(small.test)) == (50, 20, 10)
    with pytest.raises(ValueError, match="toy_sizes .* are for the toy-en-es task, not 'copy'"):
        TaskData.load("copy", toy_sizes=dict(n_train=50))
