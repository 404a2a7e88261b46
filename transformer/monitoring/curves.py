"""The figure of a run: its metrics.jsonl as curves against step (training and validation
loss, exact match and BLEU, learning rate, tokens/s), curves.png in the run folder, drawn by
`transformer.instruments.plot_training_curves` (matplotlib, the `examples` extra)."""

from pathlib import Path

CURVES_FILE = "curves.png"


def series(records, split, key) -> tuple[list[int], list[float]]:
    """(steps, values) of `key` in the records of `split` that hold it."""
    chosen = [r for r in records if r.get("split") == split and r.get(key) is not None]
    return [r["step"] for r in chosen], [float(r[key]) for r in chosen]


def run_panels(records):
    """{panel title: ({label: (steps, values)}, y label)} of a run's metrics records; panels
    and curves without any value are left out."""
    wanted = {
        "loss": ({"training": ("train", "loss"), "validation": ("valid", "loss")}, "loss"),
        "validation exact match and BLEU / 100": (
            {"exact match": ("valid", "exact_match"), "BLEU / 100": ("valid", "bleu")},
            "score"),
        "learning rate": ({"learning rate": ("train", "lr")}, "learning rate"),
        "throughput": ({"tokens/s": ("train", "tokens_per_s")}, "target tokens per second"),
    }
    panels = {}
    for title, (curves, ylabel) in wanted.items():
        lines = {}
        for label, (split, key) in curves.items():
            steps, values = series(records, split, key)
            if key == "bleu":
                values = [value / 100 for value in values]
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
                         log_y=("loss",), path=path)
    return path
