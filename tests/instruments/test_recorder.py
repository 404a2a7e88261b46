"""GradientFlowRecorder: its numbers against gradients taken by hand with mg.grad on a tiny
float64 model (every residual mode, both norm placements), its rows and exports, its hooks'
lifetime, and its use as a Trainer callback, every step or every n-th."""

import csv
import json

import numpy as np
import pytest

import minigrad as mg
from minigrad.nn import functional as F
from minigrad.optim import SGD
from transformer import Transformer, TransformerConfig
from transformer.data import Example, Vocab, tokenize
from transformer.data.batching import BatchIterator, encode_pairs
from transformer.instruments import ROW_FIELDS, GradientFlowRecorder, residual_blocks, select
from transformer.training import Trainer
from transformer.training_config import TrainingConfig

PAD, VOCAB = 0, 11
SRC = np.array([[3, 4, 5, 6, PAD], [7, 3, 8, 9, 10]])
TGT_IN = np.array([[1, 4, 5, 6], [1, 9, 8, PAD]])
TGT_OUT = np.array([[4, 5, 6, 2], [9, 8, 2, PAD]])
BLOCK_QUANTITIES = ("grad_in", "grad_out", "grad_skip", "grad_branch", "attenuation",
                    "branch_sq_norm_per_dim")
FORWARD_QUANTITIES = {"stream_sq_norm_per_dim", "branch_sq_norm_per_dim",
                      "ln_input_sq_norm_per_dim"}
MODES = [pytest.param(residual, norm_first, id=f"{residual}-{'pre' if norm_first else 'post'}LN")
         for residual in ("standard", "none", "plain", "rezero") for norm_first in (False, True)]


def tiny_model(residual="standard", norm_first=False):
    mg.manual_seed(0)
    model = Transformer(TransformerConfig(
        src_vocab_size=VOCAB, tgt_vocab_size=VOCAB, d_model=8, n_heads=2, n_encoder_layers=2,
        n_decoder_layers=2, d_ff=16, dropout=0.0, max_len=16, residual=residual,
        norm_first=norm_first)).to(dtype="float64")
    for number, (*_, block) in enumerate(residual_blocks(model)):
        if residual == "rezero":  # α starts at 0, where every branch gradient is 0
            block.alpha.data[...] = 0.3 + 0.1 * number
    return model


def loss_of(model):
    logits = model(mg.tensor(SRC), mg.tensor(TGT_IN))
    return F.cross_entropy(logits, mg.tensor(TGT_OUT), ignore_index=PAD)


def norm(tensor):
    return float(np.linalg.norm(tensor.numpy()))


def by_hand(model):
    """Every block's quantities from explicit mg.grad calls on the tensors the block saw."""
    seen = {}
    for stack, layer, sublayer, block in residual_blocks(model):
        block.observer = lambda block, x, branch, s, out, key=(stack, layer, sublayer): \
            seen.__setitem__(key, (x, branch, s, out))
    loss = loss_of(model)
    for *_, block in residual_blocks(model):
        block.observer = None
    expected = {}
    for (stack, layer, sublayer), (x, branch, s, out) in seen.items():
        grad_x, grad_s, grad_out = mg.grad(loss, [x, s, out], retain_graph=True)
        through_branch, = mg.grad(branch, x, grad_outputs=grad_s, retain_graph=True)
        skip = norm(grad_s) if model.config.residual in ("standard", "rezero") else 0.0
        expected.update({
            (stack, layer, sublayer, "grad_in"): norm(grad_x),
            (stack, layer, sublayer, "grad_out"): norm(grad_out),
            (stack, layer, sublayer, "grad_skip"): skip,
            (stack, layer, sublayer, "grad_branch"): norm(through_branch),
            (stack, layer, sublayer, "attenuation"): norm(grad_x) / norm(grad_out),
            (stack, layer, sublayer, "branch_sq_norm_per_dim"):
                float(np.mean(branch.numpy() ** 2))})
        if model.config.residual in ("standard", "none"):  # the LayerNorm's input
            ln_input = x if model.config.norm_first else s
            expected[(stack, layer, sublayer, "ln_input_sq_norm_per_dim")] = \
                float(np.mean(ln_input.numpy() ** 2))
        if sublayer == "ffn":
            expected[(stack, layer, None, "stream_sq_norm_per_dim")] = \
                float(np.mean(out.numpy() ** 2))
    names, params = zip(*model.named_parameters())
    for name, grad in zip(names, mg.grad(loss, list(params))):
        expected[(name, "param_grad_norm")] = norm(grad)
    return expected


def recorded(model):
    model.zero_grad()
    with GradientFlowRecorder(model, "tiny") as recorder:
        loss_of(model).backward()
        recorder.end_pass()
    found = {}
    for row in recorder.rows:
        key = (row["param"], row["quantity"]) if row["param"] else \
            (row["stack"], row["layer"], row["sublayer"], row["quantity"])
        assert key not in found, f"two rows for {key}"
        found[key] = row["value"]
    return found


@pytest.mark.parametrize("residual, norm_first", MODES)
def test_recorded_norms_equal_gradients_taken_by_hand(residual, norm_first):
    model = tiny_model(residual, norm_first)
    expected, found = by_hand(model), recorded(model)
    assert found.keys() == expected.keys()
    for key, value in expected.items():
        assert found[key] == pytest.approx(value, rel=1e-9, abs=1e-12), key
    if residual in ("standard", "rezero"):  # the branch part is a part of grad_in, not all
        assert any(0 < found[k[:3] + ("grad_branch",)] < found[k[:3] + ("grad_in",)]
                   for k in found if k[-1] == "grad_in")


def test_rows_follow_the_conventions():
    model = tiny_model()
    with GradientFlowRecorder(model, "post-LN") as recorder:
        loss_of(model).backward()
        recorder.end_pass(step=7)
    assert recorder.rows
    for row in recorder.rows:
        assert tuple(row) == ROW_FIELDS
        assert row["step"] == 7 and row["config"] == "post-LN"
        assert (row["param"] is None) == (row["quantity"] != "param_grad_norm")
    blocks = [(stack, layer, sublayer) for stack, layer, sublayer, _ in residual_blocks(model)]
    assert len(blocks) == 2 * 2 + 2 * 3
    for stack, layer, sublayer in blocks:
        for quantity in BLOCK_QUANTITIES:
            assert len(select(recorder.rows, stack=stack, layer=layer, sublayer=sublayer,
                              quantity=quantity)) == 1
    streams = select(recorder.rows, quantity="stream_sq_norm_per_dim")
    assert {(r["stack"], r["layer"], r["sublayer"]) for r in streams} == \
        {(s, n, None) for s in ("encoder", "decoder") for n in (1, 2)}
    w2 = select(recorder.rows, param="decoder.layers.1.ffn.sublayer.linear2.weight")[0]
    assert (w2["stack"], w2["layer"], w2["sublayer"]) == ("decoder", 2, "ffn")
    generator = select(recorder.rows, param="generator.weight")[0]
    assert (generator["stack"], generator["layer"]) == (None, None)


def test_csv_and_jsonl_exports(tmp_path):
    model = tiny_model()
    with GradientFlowRecorder(model, "post-LN") as recorder:
        loss_of(model).backward()
        recorder.end_pass()
    recorder.to_csv(tmp_path / "flow.csv")
    recorder.to_jsonl(tmp_path / "flow.jsonl")
    with open(tmp_path / "flow.csv", newline="") as file:
        table = list(csv.DictReader(file))
    assert tuple(table[0]) == ROW_FIELDS
    assert len(table) == len(recorder.rows)
    for line, row in zip(table, recorder.rows):
        assert float(line["value"]) == pytest.approx(row["value"])
        assert line["sublayer"] == (row["sublayer"] or "")
    lines = (tmp_path / "flow.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == recorder.rows


def test_nothing_is_hooked_outside_the_context():
    model = tiny_model()
    recorder = GradientFlowRecorder(model)
    loss_of(model).backward()  # not attached yet
    assert recorder.rows == []
    with recorder:
        loss = loss_of(model)  # built inside, differentiated outside
    assert all(block.observer is None for *_, block in residual_blocks(model))
    rows_at_exit = len(recorder.rows)  # the forward's stream rows, as pass 1
    loss.backward()
    loss_of(model).backward()
    assert len(recorder.rows) == rows_at_exit
    assert {r["quantity"] for r in recorder.rows} <= FORWARD_QUANTITIES


def test_forward_passes_without_a_graph_are_not_recorded():
    model = tiny_model()
    with GradientFlowRecorder(model) as recorder, mg.no_grad():
        loss_of(model)
    assert recorder.rows == []


def test_each_forward_and_backward_is_a_pass():
    model = tiny_model()
    with GradientFlowRecorder(model) as recorder:
        for _ in range(3):
            loss_of(model).backward()
    assert recorder.passes == 3
    per_step = [select(recorder.rows, step=step, quantity="grad_in") for step in (1, 2, 3)]
    assert [len(rows) for rows in per_step] == [10, 10, 10]
    assert [r["value"] for r in per_step[0]] == [r["value"] for r in per_step[2]]


def test_update_ratio_of_an_sgd_step():
    """SGD moves w by lr·g, so ‖Δw‖/‖w‖ = lr·‖g‖/‖w‖."""
    model = tiny_model()
    optimizer = SGD(model.parameters(), lr=0.1)
    before = {name: norm(p) for name, p in model.named_parameters()}
    with GradientFlowRecorder(model) as recorder:
        loss_of(model).backward()
        recorder.end_pass()
        optimizer.step()
        recorder.after_update()
    grads = {r["param"]: r["value"] for r in select(recorder.rows, quantity="param_grad_norm")}
    ratios = {r["param"]: r["value"] for r in select(recorder.rows, quantity="update_ratio")}
    assert ratios.keys() == {name for name, size in before.items() if size > 0}
    for name, ratio in ratios.items():
        assert ratio == pytest.approx(0.1 * grads[name] / before[name], rel=1e-9)


def train_with_recorder(steps, every=1, accumulate=1):
    """A tiny model trained `steps` Trainer steps with a recorder sampling every `every`-th."""
    sentences = ["a b c", "b c d", "c d a", "d a b", "a c", "b d"]
    examples = [Example(s, s, "copy") for s in sentences]
    vocab = Vocab.build([tokenize(s) for s in sentences])
    mg.manual_seed(0)
    model = Transformer(TransformerConfig(
        len(vocab), len(vocab), d_model=8, n_heads=2, n_encoder_layers=2, n_decoder_layers=2,
        d_ff=16, dropout=0.0, max_len=16, share_embeddings=True))
    batches = BatchIterator(encode_pairs(examples, vocab), vocab, batch_size=3)
    config = TrainingConfig(steps=steps, batch_size=3, warmup_steps=2, eval_every=3,
                            eval_examples=2, progress=False, accumulate=accumulate)
    with GradientFlowRecorder(model, "callback", every=every) as recorder:
        Trainer(model, batches, examples, vocab, config, callbacks=[recorder]).train()
    assert all(block.observer is None for *_, block in residual_blocks(model))
    return model, recorder


def test_as_a_trainer_callback():
    model, recorder = train_with_recorder(3)
    assert {row["step"] for row in recorder.rows} == {1, 2, 3}  # validation added nothing
    n_params = len(list(model.named_parameters()))
    for step in (1, 2, 3):
        rows = select(recorder.rows, step=step)
        for quantity in BLOCK_QUANTITIES:
            assert len(select(rows, quantity=quantity)) == 10
        assert len(select(rows, quantity="param_grad_norm")) == n_params
        ratios = select(rows, quantity="update_ratio")
        assert ratios and all(r["value"] > 0 for r in ratios)


def test_a_sampling_interval_records_every_nth_step_only():
    model, every_step = train_with_recorder(6)
    _, sampled = train_with_recorder(6, every=3)
    assert {row["step"] for row in sampled.rows} == {3, 6}
    assert sampled.rows == [row for row in every_step.rows if row["step"] in (3, 6)]


@pytest.mark.parametrize("every", [0, -1, 1.5, True])
def test_a_bad_sampling_interval_is_refused_in_one_line(every):
    with pytest.raises(ValueError, match=r"GradientFlowRecorder: every must be a positive "
                                         r"integer .*got"):
        GradientFlowRecorder(tiny_model(), every=every)


def test_the_micro_batches_of_a_step_are_numbered_with_it():
    model, recorder = train_with_recorder(3, accumulate=3)
    assert {row["step"] for row in recorder.rows} == {1, 2, 3}
    for step in (1, 2, 3):
        rows = select(recorder.rows, step=step)
        assert len(select(rows, quantity="grad_in")) == 3 * 10  # one pass per micro-batch
        assert len(select(rows, quantity="param_grad_norm")) == \
            len(list(model.named_parameters()))  # the step's accumulated gradient, once
    _, sampled = train_with_recorder(4, every=2, accumulate=3)
    assert {row["step"] for row in sampled.rows} == {2, 4}
    assert len(select(sampled.rows, step=2, quantity="grad_in")) == 3 * 10
