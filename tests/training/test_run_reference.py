"""A short run, started, resumed and resumed once more when finished, leaves the reference
run folder and prints the reference lines (tests/fixtures/short_run.json): the same files,
config.json and vocab.json, metrics records, checkpoint contents and final metrics, timings
aside. Numbers agree within 1e-4 (another CPU takes another float path), the rest exactly;
the key projections' biases by shape and dtype only: their gradient is 0 but for round-off
(a bias added to every key shifts a query's scores alike, which the softmax ignores), and
Adam turns that round-off into whole steps, so another CPU moves them elsewhere.

    python tests/training/test_run_reference.py    # rewrite the reference (a change made on
                                                   # purpose to what a run writes or prints)
"""

import hashlib
import io
import json
import math
import re
import sys
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np

import minigrad as mg
from transformer.data import load_task
from transformer.pipeline import resume_run, start_run
from transformer.run_spec import RunSpec, TaskSpec
from transformer.training_config import TrainingConfig

REFERENCE = Path(__file__).resolve().parents[1] / "fixtures" / "short_run.json"
MODEL = {"d_model": 16, "n_heads": 2, "n_encoder_layers": 1, "n_decoder_layers": 1,
         "d_ff": 32, "dropout": 0.1}
TRAINING = {"steps": 4, "batch_size": 16, "warmup_steps": 4, "eval_every": 3,
            "checkpoint_every": 3, "log_every": 1, "eval_examples": 16, "progress": False,
            "target_dropout": 0.1, "ema_decay": 0.9}
TIMING = {"time_s", "tokens_per_s", "train_seconds", "wall_seconds"}
ROUND_OFF_ONLY = ".k_proj.bias"  # parameters whose gradient is round-off (the docstring)


def short_run(root):
    """Start a 4-step run in `root`/run on 60 pairs of the copy task (a pairs file), resume
    it to 7 steps, resume the finished run: what the folder holds and what was printed, as
    `summary` gives them, read back as JSON, `root` written ROOT."""
    pairs = root / "pairs.tsv"
    pairs.write_text("".join(f"{e.src}\t{e.tgt}\n" for e in load_task("copy")["train"][:60]),
                     encoding="utf-8")
    out = root / "run"
    with redirect_stdout(io.StringIO()) as printed:
        start_run(RunSpec(TaskSpec("pairs", pairs), model=MODEL,
                          training=TrainingConfig(**TRAINING)), out, showcase=())
        resume_run(out, {"training.steps": 7}, showcase=())
        resume_run(out, showcase=())
    return json.loads(json.dumps(summary(out, printed.getvalue())).replace(str(root), "ROOT"))


def summary(out, printed):
    """The run folder `out` and the `printed` lines, timings left out: JSON files as they
    are, checkpoints as each entry's value (an array: its shape, dtype and, for floats, its
    norm and sum; for integers, a digest of its bytes)."""
    def read_json(name):
        return json.loads((out / name).read_text(encoding="utf-8"))

    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    return {"files": sorted(path.name for path in out.iterdir()),
            "config": read_json("config.json"), "vocab": read_json("vocab.json"),
            "metrics": [untimed(record) for record in records],
            "final": untimed(read_json("metrics.json")),
            **{which: flattened(untimed(mg.load(out / f"{which}.npz")))
               for which in ("last", "best")},
            "printed": [re.sub(r"\d+ tok/s|in \d+ s \(wall \d+ s\)", "TIME", line)
                        for line in printed.splitlines()]}


def untimed(record):
    return {key: value for key, value in record.items() if key not in TIMING}


def flattened(value, path=""):
    """{"a/b/0": summary of the leaf}, for nested dicts and lists of arrays and scalars."""
    if isinstance(value, dict):
        return {key: leaf for name, item in value.items()
                for key, leaf in flattened(item, f"{path}/{name}").items()}
    if isinstance(value, (list, tuple)):
        return {key: leaf for index, item in enumerate(value)
                for key, leaf in flattened(item, f"{path}/{index}").items()}
    if isinstance(value, (mg.Tensor, np.ndarray)):
        array = value.numpy() if isinstance(value, mg.Tensor) else value
        described = {"shape": list(array.shape), "dtype": str(array.dtype)}
        if array.dtype.kind == "f":
            wide = array.astype(np.float64)
            described.update(norm=float(np.linalg.norm(wide)), sum=float(wide.sum()))
        else:
            described["digest"] = hashlib.sha256(np.ascontiguousarray(array).tobytes()
                                                  ).hexdigest()[:16]
        return {path: described}
    return {path: value.item() if isinstance(value, np.generic) else value}


def differences(actual, expected, where=""):
    """Where `actual` differs from `expected`: numbers by more than 1e-4 (relative, or
    absolute near 0), anything else at all; a printed line's numbers so, its words exactly."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        if actual.keys() != expected.keys():
            return [f"{where}: keys {sorted(actual.keys() ^ expected.keys())} differ"]
        return [d for key in expected for d in differences(actual[key], expected[key],
                                                           f"{where}/{key}")]
    if isinstance(expected, list) and isinstance(actual, list):
        if len(actual) != len(expected):
            return [f"{where}: {len(actual)} items, the reference {len(expected)}"]
        return [d for index, (a, e) in enumerate(zip(actual, expected))
                for d in differences(a, e, f"{where}/{index}")]
    if isinstance(expected, str) and isinstance(actual, str) and where.startswith("/printed"):
        number = r"-?\d+\.?\d*(?:e[-+]\d+)?"
        if re.split(number, actual) != re.split(number, expected):
            return [f"{where}: {actual!r}, the reference {expected!r}"]
        return differences([float(x) for x in re.findall(number, actual)],
                           [float(x) for x in re.findall(number, expected)], where + ":")
    if isinstance(expected, float) and isinstance(actual, (int, float)) and \
            not isinstance(actual, bool):
        same = math.isclose(actual, expected, rel_tol=1e-4, abs_tol=1e-4)
        return [] if same else [f"{where}: {actual!r}, the reference {expected!r}"]
    return [] if actual == expected else [f"{where}: {actual!r}, the reference {expected!r}"]


def without_round_off(run):
    """`run` (a short run's summary) with the values of ROUND_OFF_ONLY's arrays left out."""
    for which in ("last", "best"):
        for path, described in run[which].items():
            if ROUND_OFF_ONLY in path:
                described.pop("norm"), described.pop("sum")
    return run


def test_a_short_run_started_and_resumed_leaves_the_reference_folder(tmp_path):
    expected = json.loads(REFERENCE.read_text(encoding="utf-8"))
    assert differences(without_round_off(short_run(tmp_path)),
                       without_round_off(expected)) == []


def test_a_changed_number_or_word_differs_from_the_reference():
    expected = {"last": {"/step": 7, "/model/w": {"norm": 1.0}},
                "printed": ["step     7  valid  loss 2.5000"]}
    assert differences(json.loads(json.dumps(expected)), expected) == []
    changed = {"last": {"/step": 8, "/model/w": {"norm": 1.00001}},
               "printed": ["step     7  valid  loss 2.5004"]}
    assert differences(changed, expected) == ["/last//step: 8, the reference 7",
                                              "/printed/0:/1: 2.5004, the reference 2.5"]
    changed = {"last": expected["last"], "printed": ["step     7  train  loss 2.5000"]}
    assert len(differences(changed, expected)) == 1


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        REFERENCE.write_text(json.dumps(short_run(Path(scratch)), indent=1) + "\n",
                             encoding="utf-8")
    print(f"wrote {REFERENCE}", file=sys.stderr)
