"""The tiny monitored run the monitoring tests share: the copy task from a pairs file, a
16-wide model, 4 steps validated every 2, samples, the gradient flow every 2 steps and
TensorBoard; and how to run an example script from the checkout."""

import io
import os
import subprocess
import sys
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path

from transformer.data import load_task
from transformer.pipeline import start_run
from transformer.run_spec import MonitorSpec, RunSpec
from transformer.training_config import TrainingConfig

REPO = Path(__file__).resolve().parents[2]

MODEL = {"d_model": 16, "n_heads": 2, "n_encoder_layers": 1, "n_decoder_layers": 1,
         "d_ff": 32, "dropout": 0.1}
TRAINING = {"steps": 4, "batch_size": 8, "warmup_steps": 4, "eval_every": 2,
            "checkpoint_every": 2, "log_every": 1, "eval_examples": 8, "progress": False}
SPEC = RunSpec(model=MODEL, training=TrainingConfig(**TRAINING),
               monitors=MonitorSpec(samples=2, record_flow_every=2))


def on_pairs(pairs, spec=SPEC):
    """`spec` trained on the pairs file `pairs`."""
    return spec.with_changes({"task.name": "pairs", "task.data": pairs})


@dataclass
class MonitoredRun:
    path: Path
    pairs: Path
    tensorboard: Path
    printed: str


def write_pairs(root):
    pairs = root / "pairs.tsv"
    pairs.write_text("".join(f"{e.src}\t{e.tgt}\n" for e in load_task("copy")["train"][:40]),
                     encoding="utf-8")
    return pairs


def start_monitored_run(root):
    """The shared run, in `root`/run, what it printed in `root`/printed.txt."""
    pairs = write_pairs(root)
    with redirect_stdout(io.StringIO()) as printed:
        start_run(on_pairs(pairs).with_changes({"monitors.tensorboard": root / "tensorboard"}),
                  root / "run", showcase=())
    (root / "printed.txt").write_text(printed.getvalue(), encoding="utf-8")


def monitored_run_in(root):
    """The run start_monitored_run(`root`) made."""
    return MonitoredRun(root / "run", root / "pairs.tsv", root / "tensorboard",
                        (root / "printed.txt").read_text(encoding="utf-8"))


def run_example(script, *args, timeout=120):
    """examples/`script` run from the checkout: the CompletedProcess (its status is read)."""
    return subprocess.run([sys.executable, str(REPO / "examples" / script), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, check=False,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
