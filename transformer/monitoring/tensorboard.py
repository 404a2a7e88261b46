"""TensorBoard logging of a run (`--tensorboard DIR`), into DIR/<the run folder's name> so
that TensorBoard names the run: the training and validation scalars (perplexity included),
the gradient flow per residual block when recorded, the sample translations as text and
histograms of the weights and their gradients at each validation, and at the end the final
held-out scores and the configuration through the hparams plugin; written with tensorboardX
(the `tensorboard` extra; `tensorboard --logdir DIR` shows them)."""

import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigError
from ..training import Callback
from .flow import flow_table, update_ratio_table

TRAIN_SCALARS = ("loss", "cross_entropy", "lr", "grad_norm", "tokens_per_s")
VALID_SCALARS = ("loss", "exact_match", "bleu", "chrf", "token_accuracy")
# perplexity: exp of a plain cross-entropy (never of training's label-smoothed loss)
PERPLEXITY_OF = {"train": "cross_entropy", "valid": "loss"}


def run_logdir(logdir, folder) -> Path:
    """Where the run in RunFolder `folder` (None: "run") logs: DIR/<its folder's name>."""
    return Path(logdir) / (folder.path.resolve().name if folder is not None else "run")


def summary_writer(logdir) -> Any:
    """A tensorboardX SummaryWriter into `logdir` (`check_logdir` first)."""
    check_logdir(logdir)
    from tensorboardX import SummaryWriter

    return SummaryWriter(str(logdir))


def check_logdir(logdir) -> None:
    """Nothing when TensorBoard logs can be written into the folder `logdir`: tensorboardX is
    installed (else ImportError naming the extra) and `logdir` is a folder that can be
    written, or can be made where its nearest existing parent is one (else ConfigError)."""
    try:
        import tensorboardX  # noqa: F401
    except ImportError as error:
        raise ImportError("--tensorboard needs tensorboardX: pip install -e '.[tensorboard]'"
                          ) from error
    path = Path(logdir)
    existing = next(p for p in (path, *path.absolute().parents) if p.exists())
    if not existing.is_dir():
        raise ConfigError(f"--tensorboard {logdir}: {existing} is a file; give a folder to "
                          "write the logs into")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ConfigError(f"--tensorboard {logdir}: {existing} cannot be written (permission "
                          "denied); give a folder of yours")


class TensorBoardLogger(Callback):
    """A Trainer callback writing to a SummaryWriter: `train/<name>` (TRAIN_SCALARS, and
    `train/perplexity`) at each logged step, `valid/<name>` (VALID_SCALARS, and
    `valid/perplexity`) at each validation, the gradient flow of a FlowRecording (if given)
    as `flow/grad_in/<block>` (‖∂L/∂x‖ at the block's input) and `flow/update_ratio/<block>`
    (the median ‖Δw‖/‖w‖ of its parameters) at each recorded step, the samples' latest
    records (a SampleTranslations, if given) as text `samples`, and histograms
    `weights/<name>` and `gradients/<name>` (the last step's) of every parameter at each
    validation. `close()` flushes the files."""

    def __init__(self, writer, samples=None, flow=None):
        self.writer, self.samples, self.flow = writer, samples, flow

    def on_step_end(self, trainer, step, record) -> None:
        if self.flow is not None and self.flow.latest_rows:
            self._write_flow(self.flow.latest_rows)
            self.flow.latest_rows = []
        if step % trainer.config.log_every:
            return  # the loss is read at logging steps anyway: no extra wait for a GPU
        self._write_scalars("train", TRAIN_SCALARS, {
            name: float(value.item() if hasattr(value, "item") else value)
            for name, value in record.items() if name in TRAIN_SCALARS and value is not None},
            step)

    def _write_scalars(self, split, names, values, step) -> None:
        for name in names:
            if values.get(name) is not None:
                self.writer.add_scalar(f"{split}/{name}", float(values[name]), step)
        plain = values.get(PERPLEXITY_OF[split])
        if plain is not None and math.isfinite(plain):
            self.writer.add_scalar(f"{split}/perplexity", math.exp(plain), step)

    def _write_flow(self, rows) -> None:
        for name, (labels, steps, values) in (("grad_in", flow_table(rows)),
                                              ("update_ratio", update_ratio_table(rows))):
            for label, row in zip(labels, values):
                for step, value in zip(steps, row):
                    if not np.isnan(value):
                        self.writer.add_scalar(f"flow/{name}/{label.replace(' ', '_')}",
                                               float(value), step)

    def on_validation(self, trainer, step, record) -> None:
        self._write_scalars("valid", VALID_SCALARS, record, step)
        if self.samples is not None and self.samples.latest:
            text = "\n\n".join(f"source: {s['source']}  \nreference: {s['reference']}  \n"
                               f"output: {s['output']}" for s in self.samples.latest)
            self.writer.add_text("samples", text, step)
        for name, param in trainer.model.named_parameters():  # the weights as trained
            self.writer.add_histogram(f"weights/{name}", param.numpy(), step)
            if param.grad is not None:
                self.writer.add_histogram(f"gradients/{name}", param.grad.numpy(), step)
        self.writer.flush()

    def close(self) -> None:
        self.writer.close()


def log_final(logdir, folder, metrics, step) -> None:
    """The end of the run in RunFolder `folder` into its TensorBoard run (`run_logdir`):
    every number of `metrics` (metrics.json) as `final/<name>` (a construction's as
    `final/<group>/<construction>`) at `step`, and the configuration (config.json, dotted
    names) with those scores through the hparams plugin."""
    from tensorboardX.summary import hparams

    scores: dict[str, float] = {}
    for name, value in metrics.items():
        for key, number in (value.items() if isinstance(value, dict) else [(None, value)]):
            if isinstance(number, (int, float)) and not isinstance(number, bool):
                scores[f"final/{name}" + (f"/{key}" if key is not None else "")] = float(number)
    config = {name: value if isinstance(value, (bool, int, float, str)) else str(value)
              for name, value in _dotted(folder.read_json("config.json"))}
    writer = summary_writer(run_logdir(logdir, folder))
    try:
        for summary in hparams(config, scores):
            writer.file_writer.add_summary(summary)
        for tag, value in scores.items():
            writer.add_scalar(tag, value, step)
    finally:
        writer.close()


def _dotted(value, prefix=""):
    if isinstance(value, dict) and value:
        return [pair for key, item in value.items() for pair in _dotted(item, f"{prefix}{key}.")]
    return [(prefix.rstrip("."), value)]
