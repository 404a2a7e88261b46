"""The experiments of examples/gradient_flow.py: what the literature reports about residual
paths and LayerNorm placement, each reproduced on a CPU-sized model with only the variable
under study differing between its arms, and judged against an expectation fixed in advance.

    E1  Xiong et al. 2020: the expected gradient of W2 grows towards the output in a post-LN
        decoder, not in a pre-LN one; Liu et al. 2020: no vanishing in the post-LN encoder
    E2  Xiong et al. 2020: the last layer's expected gradient is independent of depth
        post-LN, falls as 1/√L pre-LN
    E3  Xiong et al. 2020, lemmas: a post-LN LayerNorm's input is (1 + c)·d after the FFN;
        the pre-LN stream grows by at least c·d per layer (c from the initialisation)
    E4  He et al. 2016, Dong et al. 2021: without a skip a normalised stack keeps its
        gradient, a plain one loses it; without a skip the tokens collapse to one vector
    E5  Xiong et al. 2020: without warmup post-LN trains far worse than pre-LN at a large
        learning rate; pre-LN does not need warmup (toy translation)
    E6  the same on the copy task, 6+6 layers, the copy task's full budget
    E7  Xiong et al. 2020 (the pre-LN argument): the branch's share of ∂L/∂x falls as the
        stream grows, ∝ 1/‖x_l‖
    E8  Bachlechner et al. 2020: a ReZero stack is the identity at init
    E9  Liu et al. 2020: a random parameter change moves a post-LN output O(N), pre-LN
        O(log N)

A check is judged on the mean over seeds of a figure measured once per seed; the outcome says
"NOT held" when it does not hold, never a tuned bound. Scale.quick's verdicts come from
smaller models and fewer steps: a smoke run, not the study.
"""

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import minigrad as mg
from minigrad.optim import LambdaLR

from ..builders import build_vocab
from ..config import TransformerConfig
from ..data import Vocab, load_task
from ..data.batching import BatchIterator, encode_pairs, make_batch
from ..evaluation import evaluate
from ..model import Transformer
from ..training import NonFiniteLossError, Trainer, TrainingConfig, paper_optimizer
from .jacobian import isometry_defects
from .noise import gradient_statistics, probe_loss
from .plots import plot_curves, plot_depth_profiles, plot_verdicts
from .recorder import GradientFlowRecorder, select, write_csv
from .streams import layer_streams, lengths_of, token_share

VALID_EXAMPLES = 200  # E5's final loss: teacher-forced, on this many validation examples
SOLVED = 0.95  # E6: a run solves the copy task at this exact match on the test split
COPY_MODEL = dict(d_model=64, n_heads=4, d_ff=128)  # examples/copy_task.py's model
REZERO_LR = 1e-3  # E8: the constant rate of the training after which ReZero is measured again
PERTURBATION = 0.01  # E9: each weight matrix moves by this fraction of its own rms
STACK_NAMES = {"encoder": "enc", "decoder": "dec"}

VARIANTS: dict[str, dict[str, Any]] = {
    "post-LN": dict(norm_first=False, residual="standard"),
    "pre-LN": dict(norm_first=True, residual="standard"),
    "post-LN, no skip": dict(norm_first=False, residual="none"),
    "pre-LN, no skip": dict(norm_first=True, residual="none"),
    "plain": dict(residual="plain"),
    "rezero": dict(residual="rezero"),
}


@dataclass(frozen=True)
class Scale:
    """Model sizes, seeds and budgets of a run, set per experiment."""

    seeds: int = 3
    d_model: int = 32
    n_heads: int = 4
    d_ff: int = 128
    probe_batches: int = 4  # E1-E4, E7: the expected gradient over these validation batches
    probe_batch_size: int = 32
    depth: int = 6  # E1, E3, E7, E8
    deep: int = 12  # E4
    depths: tuple = (2, 4, 6, 8, 12)  # E2, E9
    batch_size: int = 32  # training batches of E5 and E8
    rezero_steps: int = 100  # E8's measurement after training
    translation_lr: float = 1e-2  # E5's peak rate: where the sweep shows post-LN's failure
    translation_steps: int = 300
    translation_warmup: int = 100
    copy_seeds: int = 2  # E6: its runs are the study's longest
    copy_depth: int = 6
    copy_steps: int = 1200  # examples/copy_task.py's budget, batch and warmup
    copy_batch_size: int = 64
    copy_warmup: int = 200
    perturbation_seeds: int = 5  # E9: its slope varies most from seed to seed; at init, cheap
    quick: bool = False  # a smoke run: its verdicts are not the study's

    @property
    def model_sizes(self):
        return dict(d_model=self.d_model, n_heads=self.n_heads, d_ff=self.d_ff)


DEFAULT = Scale()
QUICK = Scale(seeds=1, d_model=16, n_heads=2, d_ff=64, probe_batches=2, probe_batch_size=16,
              depth=3, deep=6, depths=(2, 4, 6), rezero_steps=20, translation_steps=60,
              translation_warmup=20, copy_seeds=1, copy_depth=2, copy_steps=150,
              copy_batch_size=32, copy_warmup=50, perturbation_seeds=1, quick=True)


# ----- models, data, training -----------------------------------------------------------------
@dataclass
class TaskData:
    """A task's joint vocabulary (from its training split, as the pipeline builds it), its
    training pairs as ids, and its held-out examples."""

    vocab: Vocab
    train: list
    valid: list
    test: list

    @classmethod
    def load(cls, task, seed=0):
        splits = load_task(task, seed=seed)
        vocab = build_vocab(splits)
        return cls(vocab, encode_pairs(splits["train"], vocab), splits["valid"], splits["test"])


def build_model(vocab, seed, depth, d_model, n_heads, d_ff, norm_first=False,
                residual="standard"):
    """A Transformer with `depth` layers per stack on a joint vocabulary, initialized from
    `seed`, without dropout (so that measurements are deterministic)."""
    mg.manual_seed(seed)
    return Transformer(TransformerConfig(
        len(vocab), len(vocab), d_model=d_model, n_heads=n_heads, n_encoder_layers=depth,
        n_decoder_layers=depth, d_ff=d_ff, dropout=0.0, max_len=64, share_embeddings=True,
        norm_first=norm_first, residual=residual, pad_id=vocab.pad_id))


def warmup_schedule(peak_lr, warmup_steps, decay_from):
    """lr(s) for update s = 1, 2, ...: `peak_lr` × min(1, s / warmup_steps) (no warmup when 0)
    × min(1, √(decay_from / s)). With warmup_steps = decay_from it is the paper's Noam
    schedule; with 0 the same rates from step `decay_from` on, the peak before it: the two
    differ in the warmup alone."""
    def lr(step):
        ramp = min(1.0, step / warmup_steps) if warmup_steps else 1.0
        return peak_lr * ramp * min(1.0, math.sqrt(decay_from / step))
    return lr


def make_trainer(model, data, batch_size, seed, schedule):
    """The project's Trainer (Adam β = (0.9, 0.98), label smoothing 0.1, clipping at 1) on
    `data`, its rate lr(step) = `schedule(step)`, step counted from 1."""
    config = TrainingConfig(batch_size=batch_size, seed=seed, progress=False)
    batches = BatchIterator(data.train, data.vocab, batch_size, seed=seed)
    optimizer = paper_optimizer(model, config)  # lr 1, which the schedule scales
    scheduler = LambdaLR(optimizer, lambda count: schedule(count + 1))  # counts from 0
    return Trainer(model, batches, data.valid, data.vocab, config, optimizer=optimizer,
                   scheduler=scheduler)


def train(trainer, steps):
    """`steps` of `trainer.train_step` (the Trainer's step, without its logging, validation
    and checkpoints), each read. Returns each step's loss, NaN from a step where the loss
    diverged."""
    losses: list[float] = []
    try:
        while len(losses) < steps:
            trainer.train_step(trainer.data.next_batch())
            losses.append(trainer.read()["loss"])
    except NonFiniteLossError:
        losses += [math.nan] * (steps - len(losses))
    return losses


class Study:
    """The models measured at init (E1-E4, E7-E9), each built and measured once: per probe
    batch the recorder's rows (step = the batch's number, from 1), and over all of them the
    gradient statistics (step 0)."""

    def __init__(self, scale, data) -> None:
        self.scale, self.data = scale, data
        size = scale.probe_batch_size
        pairs = encode_pairs(data.valid[:scale.probe_batches * size], data.vocab)
        self.probes = [make_batch(pairs, range(start, min(start + size, len(pairs))), data.vocab)
                       for start in range(0, len(pairs), size)]
        self._models: dict = {}
        self._rows: dict = {}

    def model(self, variant, depth, seed):
        key = (variant, depth, seed)
        if key not in self._models:
            self._models[key] = build_model(self.data.vocab, seed, depth,
                                            **self.scale.model_sizes, **VARIANTS[variant])
        return self._models[key]

    def rows(self, variant, depth, seed):
        """The rows of VARIANTS[variant] with `depth` layers per stack, `depth` and `seed`
        added."""
        key = (variant, depth, seed)
        if key not in self._rows:
            model, pad = self.model(variant, depth, seed), self.data.vocab.pad_id
            model.zero_grad()
            with GradientFlowRecorder(model, variant) as recorder:
                for number, batch in enumerate(self.probes, start=1):
                    probe_loss(model, batch, pad).backward()
                    recorder.end_pass(number)
                    model.zero_grad()
            rows = recorder.rows + gradient_statistics(model, self.probes, pad, variant)
            self._rows[key] = [dict(row, depth=depth, seed=seed) for row in rows]
        return self._rows[key]

    def values(self, variant, depth, pick):
        """(n_seeds, n): `pick(rows)` (n values) for each seed's model."""
        return np.array([pick(self.rows(variant, depth, seed))
                         for seed in range(self.scale.seeds)], dtype=float)

    def all_rows(self, variants, depths):
        return [row for variant in variants for depth in depths
                for seed in range(self.scale.seeds) for row in self.rows(variant, depth, seed)]


def mean_value(rows, **fields):
    """The mean value of the rows with these fields (one per probe batch, or the one row of a
    statistic over them)."""
    found = select(rows, **fields)
    if not found:
        raise LookupError(f"no row matches {fields}")
    return float(np.mean([row["value"] for row in found]))


def ffn_w2(stack, layer) -> str:
    """The name of the second FFN weight of a layer (numbered from 1)."""
    return f"{stack}.layers.{layer - 1}.ffn.sublayer.linear2.weight"


def slope(xs, ys):
    """The least-squares slope of log y against log x."""
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])


def ffn_gain(d_model, d_ff):
    """c = E‖FFN(x)‖² / ‖x‖² at init for this project's initialisation (Xavier-uniform
    weights of variance 2/(fan_in + fan_out), zero biases, ReLU keeping half the power):
    d_ff·2/(d+f)·½ through W1 and ReLU, d·2/(d+f) through W2: 2·d·f/(d+f)². Xiong et al.'s
    weights of variance 1/d with d_ff = d give their ½."""
    return 2 * d_model * d_ff / (d_model + d_ff) ** 2


# ----- outcomes -------------------------------------------------------------------------------
@dataclass
class Check:
    """A figure measured once per seed, judged on its mean against [low, high] (either bound
    may be None); with no bound at all it is only reported."""

    label: str
    values: list
    low: float | None = None
    high: float | None = None

    @property
    def judged(self) -> bool:
        return self.low is not None or self.high is not None

    @property
    def mean(self):
        return float(np.mean(self.values))

    @property
    def held(self):
        return (self.low is None or self.mean >= self.low) and \
            (self.high is None or self.mean <= self.high)

    @property
    def verdict(self):
        return ("held" if self.held else "NOT held") if self.judged else "reported"

    def __str__(self) -> str:
        text = f"{self.label} {self.mean:.3g}±{np.std(self.values):.2g}"
        if not self.judged:
            return text
        if self.low is not None and self.high is not None:
            wanted = f"in [{self.low:g}, {self.high:g}]"
        else:
            wanted = f">= {self.low:g}" if self.low is not None else f"<= {self.high:g}"
        return f"{text} ({wanted}: {self.verdict})"


@dataclass
class Outcome:
    """One experiment's result: the claim it tests, its checks, its measurements (CSV rows)
    and its figure."""

    id: str
    name: str
    claim: str
    headline: str
    checks: list
    rows: list
    figure: Any  # a matplotlib Figure
    notes: list = field(default_factory=list)

    @property
    def verdict(self):
        judged = [check.held for check in self.checks if check.judged]
        if not judged:
            return "reported"
        return "held" if all(judged) else "NOT held"

    def summary(self) -> str:
        """The printed line: `E1: what: figures (expectations) -> held | NOT held`."""
        checks = "; ".join(str(check) for check in self.checks)
        return f"{self.id}: {self.headline}: {checks} -> {self.verdict}"

    def save(self, folder):
        """Write `<id>_<name>.csv` and `.png` into `folder`; returns their paths."""
        stem = Path(folder) / f"{self.id}_{self.name}"
        csv_path, png_path = stem.with_suffix(".csv"), stem.with_suffix(".png")
        write_csv(self.rows, csv_path)
        self.figure.savefig(png_path, dpi=120)
        return csv_path, png_path


def summary_figure(outcomes, quick=False):
    """Every judged check of `outcomes` against its bounds, one row each."""
    rows = [(outcome.id, check.label, check.mean, float(np.std(check.values)), check.low,
             check.high, check.verdict)
            for outcome in outcomes for check in outcome.checks if check.judged]
    title = "verdicts (mean ± std over seeds; grey: the expected interval)"
    return plot_verdicts(rows, ("smoke run, not the study: " if quick else "") + title)


# ----- E1-E4: gradients and streams at init ---------------------------------------------------
def e1_expected_gradient_by_layer(study):
    """Xiong et al. 2020 (§3, Fig. 3; Theorem 1): at init the expected gradient of the FFN's
    W2 is large near the output of a post-LN Transformer and about the same in every layer of
    a pre-LN one. The theory covers the stack whose output feeds the loss: the decoder. Liu
    et al. 2020 (§3, Fig. 3) report no gradient vanishing in the post-LN encoder. NormFormer
    (Shleifer et al. 2021) reports larger gradients in a pre-LN model's lower layers, so the
    pre-LN bound is one-sided."""
    depth, layers = study.scale.depth, list(range(1, study.scale.depth + 1))
    panels: dict = {}
    ratios: dict = {}
    for stack in ("encoder", "decoder"):
        panels[stack] = {}
        for variant in ("post-LN", "pre-LN"):
            norms = study.values(variant, depth, lambda rows, stack=stack: [
                mean_value(rows, quantity="grad_mean_norm", param=ffn_w2(stack, layer))
                for layer in layers])
            relative = norms / norms[:, :1]
            panels[stack][variant] = (layers, relative)
            ratios[variant, stack] = relative[:, -1]
    checks = [Check("post-LN dec", ratios["post-LN", "decoder"], 2.0),
              Check("pre-LN dec", ratios["pre-LN", "decoder"], None, 1.25),
              Check("post-LN enc", ratios["post-LN", "encoder"], 0.5, 2.0),
              Check("pre-LN enc", ratios["pre-LN", "encoder"])]
    bounds = {"decoder": {f"post-LN: layer {depth} >= 2": 2.0,
                          f"pre-LN: layer {depth} <= 1.25": 1.25},
              "encoder": {f"post-LN: layer {depth} in [0.5, 2]": 0.5, "_upper": 2.0}}
    figure = plot_depth_profiles(
        panels, f"E1: expected ‖∂L/∂W2‖ by layer, over layer 1's ({depth}+{depth} layers, "
                f"init)", ylabel="‖mean over batches of ∂L/∂W2‖ / layer 1's", bounds=bounds)
    return Outcome("E1", "expected_gradient_by_layer",
                   "Xiong et al. 2020 Fig. 3 / Thm. 1; Liu et al. 2020 Fig. 3",
                   f"expected ‖∂L/∂W2‖ layer {depth} / layer 1 at init ({study.scale.probe_batches}"
                   f" batches)", checks, study.all_rows(("post-LN", "pre-LN"), [depth]), figure)


def e2_last_layer_gradient_by_depth(study):
    """Xiong et al. 2020 (Theorem 1): the last layer's expected ‖∂L/∂W2‖ is O(d√(ln d)) for
    post-LN, independent of the depth L, and O(d√(ln d / L)) for pre-LN: log-log slope 0
    and -1/2 against L."""
    depths = list(study.scale.depths)
    bounds = {"post-LN": (-0.25, 0.25), "pre-LN": (-0.8, -0.2)}
    panels: dict = {}
    theory: dict = {}
    checks: list = []
    for stack in ("encoder", "decoder"):
        panels[stack], theory[stack] = {}, {}
        for variant, expected in (("post-LN", 0.0), ("pre-LN", -0.5)):
            norms = np.array([[mean_value(study.rows(variant, depth, seed),
                                          quantity="grad_mean_norm", param=ffn_w2(stack, depth))
                               for depth in depths] for seed in range(study.scale.seeds)])
            panels[stack][variant] = (depths, norms)
            start = norms[:, 0].mean()
            theory[stack][f"theory: slope {expected:g}"] = \
                (depths, [start * (d / depths[0]) ** expected for d in depths])
            checks.append(Check(f"{variant} {STACK_NAMES[stack]}",
                                [slope(depths, row) for row in norms], *bounds[variant]))
    figure = plot_depth_profiles(panels, "E2: the last layer's expected ‖∂L/∂W2‖ by depth "
                                         "(init)", xlabel="layers per stack",
                                 ylabel="‖mean over batches of ∂L/∂W2‖", log_x=True,
                                 theory=theory)
    return Outcome("E2", "last_layer_gradient_by_depth", "Xiong et al. 2020 Thm. 1",
                   f"log-log slope of the last layer's expected ‖∂L/∂W2‖ against depth "
                   f"{depths}", checks, study.all_rows(("post-LN", "pre-LN"), depths), figure)


def embedding_powers(model, batch, pad_id):
    """(positions, tokens): ‖·‖²/d_model of the encoder's positional vectors and of its token
    embeddings × √d_model, over the batch's tokens that are not padding."""
    stack = model.encoder
    with mg.no_grad():
        tokens = (stack.embedding(batch.src) * stack.scale).numpy()
        positions = stack.embed(batch.src).numpy() - tokens
    real = batch.src.numpy() != pad_id
    return float(np.mean(positions[real] ** 2)), float(np.mean(tokens[real] ** 2))


def e3_layernorm_input_and_stream(study):
    """Xiong et al. 2020 (§3.2, the lemmas behind Theorem 1; paraphrase): at init the input of
    a post-LN LayerNorm after the FFN has E‖x + FFN(x)‖² = (3/2)·d, and the pre-LN stream
    grows with the layer, E‖x_l‖² >= (1 + l/2)·d. The ½ is E‖FFN(x)‖²/‖x‖² under their
    initialisation; this project's gives c = 2·d·d_ff/(d + d_ff)² (`ffn_gain`), so the
    expectations are (1 + c)·d and a growth of at least c·d per layer. Also reported: the
    power of the positions over the tokens' in the embedding (sinusoids ½ per dimension,
    Xavier-uniform rows × √d: 2d/(V + d))."""
    scale, depth = study.scale, study.scale.depth
    c = ffn_gain(scale.d_model, scale.d_ff)
    layers, with_input = list(range(1, depth + 1)), list(range(0, depth + 1))
    post, pre, growth = {}, {}, {}
    for stack in ("encoder", "decoder"):
        post[stack] = study.values("post-LN", depth, lambda rows, stack=stack: [
            mean_value(rows, quantity="ln_input_sq_norm_per_dim", stack=stack, layer=layer,
                       sublayer="ffn") for layer in layers])
        pre[stack] = study.values("pre-LN", depth, lambda rows, stack=stack: [
            mean_value(rows, quantity="ln_input_sq_norm_per_dim", stack=stack, layer=1,
                       sublayer="self_attn")] + [
            mean_value(rows, quantity="stream_sq_norm_per_dim", stack=stack, layer=layer)
            for layer in layers])
        growth[stack] = [float(np.polyfit(with_input, row, 1)[0]) for row in pre[stack]]
    post_mean = np.mean([post["encoder"], post["decoder"]], axis=(0, 2))  # per seed
    vocab, d = len(study.data.vocab), scale.d_model
    predicted = (vocab + d) / (4 * d)
    powers = [embedding_powers(study.model("post-LN", depth, seed), study.probes[0],
                               study.data.vocab.pad_id) for seed in range(scale.seeds)]
    checks = [Check(f"post-LN FFN LN input / d (theory 1+c = {1 + c:.3g})", post_mean,
                    0.9 * (1 + c), 1.1 * (1 + c)),
              Check("pre-LN growth per layer, enc", growth["encoder"], c),
              Check("pre-LN growth per layer, dec", growth["decoder"], c),
              Check(f"positions / tokens power (theory (V+d)/4d = {predicted:.3g})",
                    [pos / tok for pos, tok in powers], 0.8 * predicted, 1.25 * predicted)]
    start = np.mean([pre[s][:, 0].mean() for s in pre])
    figure = plot_depth_profiles(
        {"post-LN: LayerNorm input after the FFN": {s: (layers, post[s]) for s in post},
         "pre-LN: the stream x_l (l = 0: embedding)": {s: (with_input, pre[s])
                                                      for s in pre}},
        "E3: ‖x‖²/d_model at init: a LayerNorm's input (post-LN), the stream (pre-LN)",
        ylabel="‖x‖² / d_model (mean over tokens)", log_y=False,
        bounds={"post-LN: LayerNorm input after the FFN": {
            "bounds (1 + c) × [0.9, 1.1]": 0.9 * (1 + c), "_upper": 1.1 * (1 + c)}},
        theory={"post-LN: LayerNorm input after the FFN": {"theory 1 + c": (
                    layers, [1 + c] * depth)},
                "pre-LN: the stream x_l (l = 0: embedding)": {"theory: >= x_0 + c·l": (
                    with_input, [start + c * layer for layer in with_input])}})
    rows = study.all_rows(("post-LN", "pre-LN"), [depth]) + [
        {"config": "post-LN", "seed": seed, "quantity": quantity, "value": value}
        for seed, (pos, tok) in enumerate(powers)
        for quantity, value in (("position_sq_norm_per_dim", pos),
                                ("token_sq_norm_per_dim", tok))]
    notes = [f"c = {c:.3g} for d_model {d}, d_ff {scale.d_ff}; the vocabulary has V = {vocab}"]
    return Outcome("E3", "layernorm_input_and_stream", "Xiong et al. 2020 §3.2 lemmas",
                   "‖x‖²/d at init: post-LN LayerNorm input, pre-LN stream growth", checks,
                   rows, figure, notes)


def e4_without_skips(study):
    """He et al. 2016 (§4.1): a deep plain network trained with normalisation keeps "healthy"
    gradient norms (their words: the difficulty "is unlikely to be caused by vanishing
    gradients"); without normalisation nothing keeps them. Dong et al. 2021 (abstract):
    "without skip connections or multi-layer perceptrons (MLPs), the output converges doubly
    exponentially to a rank-1 matrix", and "skip connections and MLPs stop the output from
    degeneration"; they find skips the decisive part. Collapse is judged as the stream
    keeping at most 1/1000 of the between-token share it had at the embedding, its absence as
    keeping at least 1/100. Arms at 12+12 layers, differing in the skip and the LayerNorm
    only."""
    depth, layers = study.scale.deep, list(range(1, study.scale.deep + 1))
    arms = {"post-LN": "skip", "pre-LN": "skip", "post-LN, no skip": "normalised",
            "pre-LN, no skip": "normalised", "plain": "plain"}
    gradient_bounds = {"skip": (0.1, None), "normalised": (0.1, None), "plain": (None, 0.01)}
    share_bounds = {"skip": (0.01, None), "normalised": (None, 1e-3), "plain": (None, 1e-3)}
    gradients, shares, checks, share_rows = {}, {}, [], []
    pad = study.data.vocab.pad_id
    lengths = lengths_of(study.probes[0].src, pad)
    for variant, kind in arms.items():
        grad_in = study.values(variant, depth, lambda rows: [
            mean_value(rows, quantity="grad_in", stack="encoder", layer=layer,
                       sublayer="self_attn") for layer in layers])
        gradients[variant] = (layers, grad_in / grad_in[:, -1:])
        checks.append(Check(f"{variant}: grad layer 1/{depth}", grad_in[:, 0] / grad_in[:, -1],
                            *gradient_bounds[kind]))
        per_seed: Any = []
        for seed in range(study.scale.seeds):
            streams = layer_streams(study.model(variant, depth, seed), study.probes[0])
            per_seed.append([token_share(x, lengths) for x in streams["encoder"]])
            share_rows += [{"config": variant, "seed": seed, "stack": "encoder", "layer": layer,
                            "quantity": "token_share", "value": value}
                           for layer, value in enumerate(per_seed[-1])]
        per_seed = np.array(per_seed)
        shares[variant] = (list(range(depth + 1)), per_seed / per_seed[:, :1])
        checks.append(Check(f"{variant}: token share layer {depth}/0",
                            per_seed[:, -1] / per_seed[:, 0], *share_bounds[kind]))
    gradient_panel = f"‖∂L/∂x_l‖ over layer {depth}'s"
    share_panel = "token share of the stream over the embedding's"
    figure = plot_depth_profiles(
        {gradient_panel: gradients, share_panel: shares},
        f"E4: encoder without skips ({depth}+{depth} layers, init)",
        ylabel="relative to the reference layer", sharey=False,
        bounds={gradient_panel: {"with LayerNorm: layer 1 >= 0.1": 0.1,
                                 "plain: layer 1 <= 0.01": 0.01},
                share_panel: {"skip: last >= 0.01": 0.01, "no skip: last <= 0.001": 1e-3}})
    return Outcome("E4", "without_skips", "He et al. 2016 §4.1; Dong et al. 2021",
                   f"encoder at depth {depth}: gradient layer 1 / layer {depth}, token share "
                   f"layer {depth} / embedding", checks,
                   study.all_rows(tuple(arms), [depth]) + share_rows, figure)


# ----- E5-E6: training with and without warmup -----------------------------------------------
def training_runs(data, configs, seeds, steps, batch_size, depth, sizes, finish):
    """Train every config {label: (variant, schedule)} for `seeds` seeds. Returns CSV rows,
    {label: (steps, losses (n_seeds, steps))} and {label: [finish(model, losses) per seed]}."""
    rows: list = []
    curves: dict = {}
    results: dict = {}
    for label, (variant, schedule) in configs.items():
        losses, results[label] = [], []
        for seed in range(seeds):
            model = build_model(data.vocab, seed, depth, **sizes, **VARIANTS[variant])
            run = train(make_trainer(model, data, batch_size, seed, schedule), steps)
            losses.append(run)
            results[label].append(finish(model, run))
            rows += [{"config": label, "seed": seed, "step": step, "quantity": "train_loss",
                      "value": loss} for step, loss in enumerate(run, start=1)]
        curves[label] = (list(range(1, steps + 1)), np.array(losses))
    return rows, curves, results


def e5_warmup_translation(data, scale):
    """Xiong et al. 2020 (§3.1, Fig. 2; abstract: for post-LN "the expected gradients of the
    parameters near the output layer are large. Therefore, using a large learning rate on
    those gradients makes the training unstable"; pre-LN "without the warm-up stage can reach
    comparable results"). Toy translation, 6+6 layers, at the peak rate where the grid shows
    post-LN failing; warmup isolated: both schedules give the same rates from the end of
    warmup on."""
    depth, w, peak = 6, scale.translation_warmup, scale.translation_lr
    schedules = {f"warmup {w}": warmup_schedule(peak, w, w), "no warmup":
                 warmup_schedule(peak, 0, w)}
    configs = {f"{variant}, {name}": (variant, schedule) for variant in ("post-LN", "pre-LN")
               for name, schedule in schedules.items()}
    learned_nothing = math.log(len(data.vocab))

    def final_loss(model, losses):
        if math.isnan(losses[-1]):
            return learned_nothing  # diverged: counted as a uniform guess
        return evaluate(model, data.valid[:VALID_EXAMPLES], data.vocab, decode=False)["loss"]

    rows, curves, final = training_runs(data, configs, scale.seeds, scale.translation_steps,
                                        scale.batch_size, depth, scale.model_sizes, final_loss)
    rows += [{"config": label, "seed": seed, "step": scale.translation_steps,
              "quantity": "valid_loss", "value": loss}
             for label, losses in final.items() for seed, loss in enumerate(losses)]
    final = {label: np.array(losses) for label, losses in final.items()}
    checks = [Check(label, losses) for label, losses in final.items()]
    checks += [
        Check("post-LN minus pre-LN, no warmup",
              final["post-LN, no warmup"] - final["pre-LN, no warmup"], 0.5),
        Check("pre-LN no warmup minus warmup",
              final["pre-LN, no warmup"] - final[f"pre-LN, warmup {w}"], None, 0.25),
        Check(f"post-LN minus pre-LN, warmup {w}",
              final[f"post-LN, warmup {w}"] - final[f"pre-LN, warmup {w}"])]
    figure = plot_curves(curves, f"E5: toy translation, {depth}+{depth} layers, peak lr "
                                 f"{peak:g}", "step", "training loss")
    return Outcome("E5", "warmup_translation", "Xiong et al. 2020 §3.1 Fig. 2",
                   f"validation loss after {scale.translation_steps} steps at peak lr {peak:g}",
                   checks, rows, figure)


def e6_warmup_copy(data, scale):
    """Xiong et al. 2020 (§3.1, §4): post-LN needs the warmup stage; pre-LN trains without
    it. The copy task with examples/copy_task.py's model widened to 6+6 layers, its schedule
    (Noam, factor 1, peak d^-½·warmup^-½) and its full budget; the arms: post-LN with and
    without warmup, pre-LN without, at the same peak rate."""
    depth, w = scale.copy_depth, scale.copy_warmup
    peak = COPY_MODEL["d_model"] ** -0.5 * w ** -0.5
    configs = {f"post-LN, warmup {w}": ("post-LN", warmup_schedule(peak, w, w)),
               "post-LN, no warmup": ("post-LN", warmup_schedule(peak, 0, w)),
               "pre-LN, no warmup": ("pre-LN", warmup_schedule(peak, 0, w))}

    def exact_match(model, losses):
        return evaluate(model, data.test, data.vocab)["exact_match"]

    rows, curves, matches = training_runs(data, configs, scale.copy_seeds, scale.copy_steps,
                                          scale.copy_batch_size, depth, COPY_MODEL,
                                          exact_match)
    rows += [{"config": label, "seed": seed, "step": scale.copy_steps,
              "quantity": "exact_match", "value": match}
             for label, values in matches.items() for seed, match in enumerate(values)]
    bounds = {f"post-LN, warmup {w}": (SOLVED, None), "post-LN, no warmup": (None, 0.5),
              "pre-LN, no warmup": (SOLVED, None)}
    checks = [Check(f"{label} (solved {sum(m >= SOLVED for m in values)}/{len(values)})",
                    values, *bounds[label]) for label, values in matches.items()]
    figure = plot_curves(curves, f"E6: copy task, {depth}+{depth} layers, peak lr {peak:.2g}",
                         "step", "training loss")
    return Outcome("E6", "warmup_copy_task", "Xiong et al. 2020 §3.1, §4",
                   f"copy task test exact match after {scale.copy_steps} steps", checks, rows,
                   figure)


# ----- E7-E9: the skip against the branch ----------------------------------------------------
BLOCK_TYPES = (("encoder", "self_attn"), ("encoder", "ffn"), ("decoder", "self_attn"),
               ("decoder", "cross_attn"), ("decoder", "ffn"))


def e7_skip_versus_branch(study):
    """Xiong et al. 2020 (§3.2, the pre-LN half of Theorem 1; paraphrase): in a pre-LN block
    the branch sees LN(x), whose Jacobian scales as 1/‖x_l‖, so the branch's part of ∂L/∂x
    shrinks against the skip's as the stream grows: share_l = ‖branch part‖ / ‖∂L/∂s‖ ∝
    1/‖x_l‖. The post-LN shares are reported beside them."""
    depth, layers = study.scale.depth, list(range(1, study.scale.depth + 1))
    panels: dict = {}
    theory: dict = {}
    fits: list = []
    post_last: list = []
    for stack, sublayer in BLOCK_TYPES:
        title = f"{STACK_NAMES[stack]} {sublayer}"
        panels[title] = {}
        for variant in ("post-LN", "pre-LN"):
            shares = study.values(variant, depth, lambda rows, stack=stack, sublayer=sublayer: [
                mean_value(rows, quantity="grad_branch", stack=stack, layer=layer,
                           sublayer=sublayer) /
                mean_value(rows, quantity="grad_skip", stack=stack, layer=layer,
                           sublayer=sublayer) for layer in layers])
            panels[title][variant] = (layers, shares)
            if variant == "post-LN":
                post_last.append(shares[:, -1])
                continue
            size = study.values(variant, depth, lambda rows, stack=stack, sublayer=sublayer: [
                mean_value(rows, quantity="ln_input_sq_norm_per_dim", stack=stack,
                           layer=layer, sublayer=sublayer) for layer in layers])
            predicted = shares[:, :1] * np.sqrt(size[:, :1] / size)  # ∝ 1/‖x_l‖
            fits.append(shares[:, -1] / predicted[:, -1])
            theory[title] = {"pre-LN theory ∝ 1/‖x_l‖": (layers, predicted.mean(axis=0))}
    fits, post_last = np.mean(fits, axis=0), np.mean(post_last, axis=0)
    pre_fall = np.mean([panels[f"{STACK_NAMES[s]} {b}"]["pre-LN"][1][:, -1] /
                        panels[f"{STACK_NAMES[s]} {b}"]["pre-LN"][1][:, 0]
                        for s, b in BLOCK_TYPES], axis=0)
    checks = [Check(f"pre-LN share layer {depth}/1", pre_fall, None, 0.8),
              Check(f"pre-LN share layer {depth} / theory", fits, 0.67, 1.5),
              Check(f"post-LN share layer {depth}", post_last)]
    figure = plot_depth_profiles(panels, f"E7: ‖branch part of ∂L/∂x‖ / ‖∂L/∂s‖ per block "
                                         f"type ({depth}+{depth} layers, init)",
                                 ylabel="branch / skip", theory=theory, columns=3)
    return Outcome("E7", "skip_versus_branch", "Xiong et al. 2020 §3.2",
                   "the branch's share of ∂L/∂x against the skip's, means over block types",
                   checks, study.all_rows(("post-LN", "pre-LN"), [depth]), figure)


def stack_deviation(model, batch):
    """{stack: [‖x_l − x_0‖ / ‖x_0‖ for l = 1..L]}: how far each layer's output is from the
    stack's embedding."""
    streams = layer_streams(model, batch)
    return {stack: [float(np.linalg.norm(x - xs[0]) / np.linalg.norm(xs[0])) for x in xs[1:]]
            for stack, xs in streams.items()}


def e8_rezero_identity(study, data):
    """Bachlechner et al. 2020 (§3): "ReZero initializes each layer to perform the identity
    operation"; the input-output Jacobian is then the identity (dynamical isometry), and at
    init "the gradients for all parameters defining [the branches] vanish" while the α's do
    not. Measured at init, and again after training (where it stops being the identity)."""
    scale, depth = study.scale, study.scale.depth
    layers, batch = list(range(1, depth + 1)), study.probes[0]
    deviation, defects, branch_grads, decoder_alpha, trained, alphas = [], [], [], [], [], []
    for seed in range(scale.seeds):
        model = study.model("rezero", depth, seed)
        found = stack_deviation(model, batch)
        deviation.append(max(max(values) for values in found.values()))
        defects.append(max(max(values) for values in isometry_defects(model, batch).values()))
        statistics = {row["param"]: row["value"] for row in study.rows("rezero", depth, seed)
                      if row["quantity"] == "grad_mean_norm"}
        branch_grads.append(max(value for name, value in statistics.items()
                                if ".sublayer." in name))
        decoder_alpha.append(np.mean([statistics[name] > 0 for name in statistics
                                      if name.startswith("decoder") and
                                      name.endswith("alpha")]))
        copy = build_model(data.vocab, seed, depth, **scale.model_sizes, **VARIANTS["rezero"])
        train(make_trainer(copy, data, scale.batch_size, seed, lambda step: REZERO_LR),
              scale.rezero_steps)
        trained.append(stack_deviation(copy, batch))
        alphas.append(np.mean([abs(p.item()) for name, p in copy.named_parameters()
                               if name.endswith("alpha")]))
    checks = [Check("max ‖x_l − x_0‖/‖x_0‖ at init", deviation, None, 1e-6),
              Check("max ‖vᵀJ − v‖/‖v‖ at init", defects, None, 1e-6),
              Check("max branch ‖∂L/∂w‖ at init", branch_grads, None, 0.0),
              Check("share of decoder α with a gradient", decoder_alpha, 1.0),
              Check(f"mean |α| after {scale.rezero_steps} steps", alphas)]
    panels = {stack: {"init": (layers, np.zeros((scale.seeds, depth))),
                      f"after {scale.rezero_steps} steps": (
                          layers, np.array([t[stack] for t in trained]))}
              for stack in ("encoder", "decoder")}
    figure = plot_depth_profiles(panels, f"E8: ReZero, ‖x_l − x_0‖ / ‖x_0‖ ({depth}+{depth} "
                                         f"layers)", ylabel="distance from the embedding",
                                 log_y=False)
    rows = study.all_rows(("rezero",), [depth]) + [
        {"config": f"rezero after {scale.rezero_steps} steps", "seed": seed, "stack": stack,
         "layer": layer, "quantity": "relative_distance_from_embedding", "value": value}
        for seed, found in enumerate(trained) for stack, values in found.items()
        for layer, value in enumerate(values, start=1)]
    return Outcome("E8", "rezero_identity", "Bachlechner et al. 2020 §3",
                   "ReZero at init: the identity, and only the α's get a gradient", checks,
                   rows, figure)


def output_change(model, batch, seed, trials=4):
    """Liu et al. 2020's measure of the amplification effect: ‖f(W*) − f(W)‖² / ‖f(W)‖², f
    the decoder's output on `batch`, W* = W with every weight matrix of the layers moved by
    PERTURBATION × its own rms × standard normal noise; the mean over `trials` draws. The
    weights are put back."""
    rng = np.random.default_rng(seed)
    matrices = [p for name, p in model.named_parameters()
                if ".layers." in name and p.ndim == 2]

    def output():
        with mg.no_grad():
            memory = model.encode(batch.src, batch.src_mask)
            return model.decode(batch.tgt_in, memory, batch.src_mask, batch.tgt_mask).numpy()

    model.eval()
    base, changes = output(), []
    originals = [p.data.copy() for p in matrices]
    try:
        for _ in range(trials):
            for p, original in zip(matrices, originals):
                rms = float(np.sqrt(np.mean(original ** 2)))
                noise = rng.standard_normal(original.shape).astype(original.dtype)
                p.data[...] = original + PERTURBATION * rms * noise
            changes.append(float(np.sum((output() - base) ** 2) / np.sum(base ** 2)))
    finally:
        for p, original in zip(matrices, originals):
            p.data[...] = original
    return float(np.mean(changes))


def e9_output_change_by_depth(study):
    """Liu et al. 2020 (§4.2, Theorem 2; abstract: "heavy dependency on its residual branch
    makes training unstable, since it amplifies small parameter perturbations"): a random
    change of the parameters moves the output of an N-layer post-LN model by O(N), of a
    pre-LN one by O(log N) (Σ 1/i over its sublayers). Against the depths here that is a
    log-log slope of 1 for post-LN and, for H(n) = Σ_{i<=n} 1/i over the 5 sublayers per
    layer pair, about 0.3 for pre-LN."""
    depths, seeds = list(study.scale.depths), study.scale.perturbation_seeds
    bounds = {"post-LN": (0.6, 1.4), "pre-LN": (None, 0.6)}
    lines, checks, rows, theory = {}, [], [], {}
    for variant in ("post-LN", "pre-LN"):
        changes = np.array([[output_change(study.model(variant, depth, seed), study.probes[0],
                                           seed) for depth in depths] for seed in range(seeds)])
        lines[variant] = (depths, changes)
        checks.append(Check(f"{variant} slope", [slope(depths, row) for row in changes],
                            *bounds[variant]))
        rows += [{"config": variant, "seed": seed, "depth": depth, "quantity": "output_change",
                  "value": value} for seed, row in enumerate(changes)
                 for depth, value in zip(depths, row)]
        start = changes[:, 0].mean()
        harmonic = [sum(1 / i for i in range(1, 5 * d + 1)) for d in depths]
        shape = [d / depths[0] for d in depths] if variant == "post-LN" else \
            [h / harmonic[0] for h in harmonic]
        theory[f"{variant} theory: {'O(N)' if variant == 'post-LN' else 'O(log N)'}"] = \
            (depths, [start * s for s in shape])
    panel = f"decoder output, W* = W + {PERTURBATION:g}·rms·noise"
    figure = plot_depth_profiles({panel: lines}, "E9: output change, weights perturbed (init)",
                                 xlabel="layers per stack",
                                 ylabel="‖f(W*) − f(W)‖² / ‖f(W)‖²", log_x=True,
                                 theory={panel: theory})
    return Outcome("E9", "output_change_by_depth", "Liu et al. 2020 §4.2 Thm. 2",
                   f"log-log slope of the output change against depth {depths}", checks,
                   rows, figure)


EXPERIMENTS = ("E1", "E2", "E3", "E4", "E5", "E6", "E7", "E8", "E9")


def run_experiments(scale=DEFAULT, only=EXPERIMENTS):
    """The Outcome of each experiment in `only`, in order, yielded as each finishes."""
    translation = TaskData.load("toy-en-es")
    study = Study(scale, translation)
    experiments = {
        "E1": lambda: e1_expected_gradient_by_layer(study),
        "E2": lambda: e2_last_layer_gradient_by_depth(study),
        "E3": lambda: e3_layernorm_input_and_stream(study),
        "E4": lambda: e4_without_skips(study),
        "E5": lambda: e5_warmup_translation(translation, scale),
        "E6": lambda: e6_warmup_copy(TaskData.load("copy"), scale),
        "E7": lambda: e7_skip_versus_branch(study),
        "E8": lambda: e8_rezero_identity(study, translation),
        "E9": lambda: e9_output_change_by_depth(study),
    }
    for experiment in only:
        yield experiments[experiment]()
