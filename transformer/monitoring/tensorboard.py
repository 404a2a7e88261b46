"""TensorBoard logging of a run (`--tensorboard DIR`): the training and validation scalars,
the sample translations as text and histograms of the weights and their gradients at each
validation, written with tensorboardX (the `tensorboard` extra; `tensorboard --logdir DIR`
shows them)."""

import os
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..training import Callback

TRAIN_SCALARS = ("loss", "lr", "grad_norm", "tokens_per_s")
VALID_SCALARS = ("loss", "exact_match", "bleu", "token_accuracy")


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
    """A Trainer callback writing to a SummaryWriter: `train/<name>` (TRAIN_SCALARS) at each
    logged step, `valid/<name>` (VALID_SCALARS) at each validation, the samples' latest
    records (a SampleTranslations, if given) as text `samples`, and histograms
    `weights/<name>` and `gradients/<name>` (the last step's) of every parameter at each
    validation. `close()` flushes the files."""

    def __init__(self, writer, samples=None):
        self.writer, self.samples = writer, samples

    def on_step_end(self, trainer, step, record) -> None:
        if step % trainer.config.log_every:
            return  # the loss is read at logging steps anyway: no extra wait for a GPU
        for name in TRAIN_SCALARS:
            value = record.get(name)
            if value is not None:
                self.writer.add_scalar(f"train/{name}", float(value.item() if hasattr(
                    value, "item") else value), step)

    def on_validation(self, trainer, step, record) -> None:
        for name in VALID_SCALARS:
            if record.get(name) is not None:
                self.writer.add_scalar(f"valid/{name}", float(record[name]), step)
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
