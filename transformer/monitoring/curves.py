"""The figure of a run: its metrics.jsonl as curves against step (every curve it logged:
`PANELS`), curves.png in the run folder, drawn by
`transformer.instruments.plot_training_curves` (matplotlib, the `examples` extra)."""

import math
from collections.abc import Callable
from pathlib import Path

CURVES_FILE = "curves.png"


def series(records, split, key) -> tuple[list[int], list[float]]:
    """(steps, values) of `key` in the records of `split` that hold it."""
    chosen = [r for r in records if r.get("split") == split and r.get(key) is not None]
    return [r["step"] for r in chosen], [float(r[key]) for r in chosen]


LOSS_UNIT = "nats per target token"
# {panel title: ({curve label: (split, key, transform)}, y label)}: every curve a run logs.
# Training's `loss` is what it minimizes (label-smoothed, under dropout); its `cross_entropy`
# the plain cross-entropy of the same batches (still under dropout); validation's `loss` the
# plain cross-entropy without dropout, with the weights validation judges. Perplexity is exp
# of a plain cross-entropy, never of the smoothed loss.
Curve = tuple[str, str, Callable[[float], float] | None]
PANELS: dict[str, tuple[dict[str, Curve], str]] = {
    "loss": ({"training loss (label-smoothed, dropout on)": ("train", "loss", None),
              "training cross-entropy (plain, dropout on)": ("train", "cross_entropy", None),
              "validation cross-entropy (plain, no dropout)": ("valid", "loss", None)},
             f"cross-entropy ({LOSS_UNIT})"),
    "perplexity": ({"training perplexity (plain, dropout on)": ("train", "cross_entropy",
                                                                math.exp),
                    "validation perplexity": ("valid", "loss", math.exp)},
                   "exp(plain cross-entropy)"),
    "validation token accuracy and exact match": (
        {"validation token accuracy": ("valid", "token_accuracy", None),
         "validation exact match": ("valid", "exact_match", None)},
        "share of tokens / sentences"),
    "validation BLEU and chrF": ({"validation BLEU": ("valid", "bleu", None),
                                  "validation chrF": ("valid", "chrf", None)}, "score (0-100)"),
    "learning rate": ({"learning rate": ("train", "lr", None)}, "learning rate"),
    "gradient norm before clipping": ({"gradient norm": ("train", "grad_norm", None)},
                                      "norm of the whole gradient"),
    "throughput": ({"tokens/s": ("train", "tokens_per_s", None)}, "target tokens per second"),
}
LOG_PANELS = ("loss", "perplexity", "gradient norm before clipping")


def run_panels(records):
    """{panel title: ({label: (steps, values)}, y label)} of a run's metrics records
    (`PANELS`); panels and curves without any value are left out."""
    panels = {}
    for title, (curves, ylabel) in PANELS.items():
        lines = {}
        for label, (split, key, transform) in curves.items():
            steps, values = series(records, split, key)
            if transform is not None:
                values = [transform(value) for value in values]
            if steps:
                lines[label] = (steps, values)
        if lines:
            panels[title] = (lines, ylabel)
    return panels


def write_curves(folder, path=None) -> Path | None:
    """Draw the run in RunFolder `folder` into `path` (default: its curves.png); returns the
    path, or None when metrics.jsonl holds no record yet."""
    from ..instruments.plots import plot_training_curves

    panels = run_panels(folder.metrics_records())
    if not panels:
        return None
    path = Path(path) if path is not None else folder.file(CURVES_FILE)
    plot_training_curves(None, f"training run {folder.path.name}", panels=panels,
                         log_y=LOG_PANELS, path=path)
    return path
