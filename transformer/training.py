"""Trainer: the training loop of the toy translation models, with logging, validation,
checkpoints that survive crashes and Ctrl-C, and exact resumption.

One step, top to bottom: batch -> model.forward -> loss -> backward -> clip ->
optimizer.step -> scheduler.step -> log."""

import dataclasses
import math
import signal
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass

import minigrad as mg
from minigrad.errors import ConfigError
from minigrad.nn import functional as F
from minigrad.optim import Adam, NoamSchedule, clip_grad_norm_

from .data.tokenizer import WORDS
from .evaluation import evaluate
from .run_folder import RunFolder


@dataclass
class TrainingConfig:
    """Adam(0.9, 0.98, 1e-9) with the Noam schedule, label smoothing 0.1 (paper §5.3-5.4)."""

    steps: int = 3000
    batch_size: int = 64
    lr_factor: float = 1.0
    warmup_steps: int = 400
    label_smoothing: float = 0.1
    clip_norm: float = 1.0
    log_every: int = 50
    eval_every: int = 500
    eval_examples: int = 400
    checkpoint_every: int = 500
    seed: int = 0
    time_limit_s: float = 0.0  # stop early after this many seconds of training (0: no limit)
    progress: bool = True

    def __post_init__(self):
        problems = [f"{name} must be an integer >= {least}, got {getattr(self, name)!r}"
                    for name, least in _COUNTS.items() if not _is_int(getattr(self, name), least)]
        for name, (allowed, text) in _REALS.items():
            value = getattr(self, name)
            if not _is_real(value) or not allowed(value):
                problems.append(f"{name} must be a number {text}, got {value!r}")
        if not isinstance(self.progress, bool):
            problems.append(f"progress must be true or false, got {self.progress!r}")
        if problems:
            raise ConfigError("TrainingConfig: " + "; ".join(problems))

    @classmethod
    def from_dict(cls, values):
        known = {field.name for field in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ConfigError(f"TrainingConfig: unknown keys {unknown}; known: {sorted(known)}")
        return cls(**values)


# What TrainingConfig allows: its integer fields and their least values, its real ones.
_COUNTS = {"steps": 1, "batch_size": 1, "warmup_steps": 1, "log_every": 1, "eval_every": 1,
           "eval_examples": 1, "checkpoint_every": 1, "seed": 0}
_REALS = {"lr_factor": (lambda v: v > 0, "> 0"), "clip_norm": (lambda v: v > 0, "> 0"),
          "label_smoothing": (lambda v: 0 <= v < 1, "in [0, 1)"),
          "time_limit_s": (lambda v: v >= 0, ">= 0 (0: no limit)")}


def _is_int(value, least):
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


def _is_real(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


class Callback:
    """Hooks into the loop; subclass and override what you need."""

    def on_backward_end(self, trainer, step, batch):
        pass

    def on_step_end(self, trainer, step, record):
        pass

    def on_validation(self, trainer, step, record):
        pass


class NonFiniteLossError(FloatingPointError):
    """The loss (or the gradient norm) became NaN or Inf; the last good checkpoint is left as
    it was."""


class Trainer:
    """Trains `model` on batches from `data` (a BatchIterator), validating on `valid` examples
    (split into tokens by `tokenizer`), writing the run folder `out` (optional)."""

    def __init__(self, model, data, valid, vocab, config, out=None, callbacks=(),
                 tokenizer=WORDS):
        self.model, self.data, self.valid, self.vocab = model, data, valid, vocab
        self.tokenizer = tokenizer
        self.config = config
        self.folder = RunFolder(out) if out is not None else None  # made at the first write
        self.callbacks = list(callbacks)
        self.parameters = list(model.parameters())
        self.optimizer = Adam(self.parameters, lr=1.0, betas=(0.9, 0.98), eps=1e-9)
        self.scheduler = NoamSchedule(self.optimizer, model.config.d_model,
                                      config.warmup_steps, factor=config.lr_factor)
        self.step = 0
        self.best = None  # (exact_match, -loss) of the best validation so far
        self.best_step = None  # the step of best.npz
        self.train_seconds = 0.0  # in train_step and batching, over the whole run
        self.wall_seconds = 0.0  # in train() (validation and checkpoints too), whole run
        self._progress = None  # the tqdm bar while train() runs

    # ----- one step ---------------------------------------------------------------------------
    def train_step(self, batch):
        self.model.train()
        self.optimizer.zero_grad()
        logits = self.model(batch.src, batch.tgt_in, batch.src_mask, batch.tgt_mask)
        loss = F.cross_entropy(logits, batch.tgt_out, ignore_index=self.vocab.pad_id,
                               label_smoothing=self.config.label_smoothing)
        loss_value = loss.item()
        self._stop_if_not_finite("loss", loss_value)
        loss.backward()
        for callback in self.callbacks:
            callback.on_backward_end(self, self.step + 1, batch)
        grad_norm = clip_grad_norm_(self.parameters, self.config.clip_norm)
        self._stop_if_not_finite("gradient norm", grad_norm)  # before it reaches the weights
        lr = self.optimizer.param_groups[0]["lr"]
        self.optimizer.step()
        self.scheduler.step()
        return {"loss": loss_value, "lr": lr, "grad_norm": grad_norm}

    def _stop_if_not_finite(self, name, value):
        """Raise NonFiniteLossError for a NaN/Inf `value`, before the optimizer step, so that
        neither the weights nor any checkpoint see it."""
        if math.isfinite(value):
            return
        last = self.folder.checkpoint("last") if self.folder is not None else None
        kept = (f"the last good checkpoint ({last}) was kept" if last is not None and last.exists()
                else "no checkpoint had been saved yet")
        raise NonFiniteLossError(
            f"step {self.step + 1}: the {name} is {value}; training stopped and {kept}. Lower "
            "the learning rate (lr_factor) or clip gradients harder (clip_norm)")

    # ----- the loop ---------------------------------------------------------------------------
    def train(self):
        """Run until `config.steps` (or the time limit). Ctrl-C finishes the current step, saves
        `last.npz` and returns False (a second Ctrl-C stops at once)."""
        self._progress = self._progress_bar()
        started = time.perf_counter()
        try:
            with self._interruptible() as interrupted:
                while self.step < self.config.steps and not self._out_of_time():
                    self._one_step()
                    if interrupted():
                        self.wall_seconds += time.perf_counter() - started
                        if self.folder is not None:
                            self.save("last")
                            self._print(f"interrupted at step {self.step}: saved "
                                        f"{self.folder.checkpoint('last')}; continue with "
                                        "--resume")
                        return False
            if self.step % self.config.eval_every:
                self.validate()
            self.wall_seconds += time.perf_counter() - started
        finally:
            if self._progress is not None:
                self._progress.close()
            self._progress = None
        if self.folder is not None:
            self.save("last")
        return True

    def _one_step(self):
        started = time.perf_counter()
        batch = self.data.next_batch()
        record = self.train_step(batch)
        self.step += 1
        elapsed = time.perf_counter() - started
        self.train_seconds += elapsed
        record.update(step=self.step, epoch=self.data.epoch, split="train",
                      time_s=round(self.train_seconds, 3), tokens_per_s=batch.n_tokens / elapsed)
        for callback in self.callbacks:
            callback.on_step_end(self, self.step, record)
        if self.step % self.config.log_every == 0:
            self._log(record)
        if self._progress is not None:
            self._progress.update(1)
            self._progress.set_postfix(loss=f"{record['loss']:.3f}", lr=f"{record['lr']:.2e}",
                                       tok_s=f"{record['tokens_per_s']:.0f}")
        if self.step % self.config.eval_every == 0:
            self.validate()
        if self.folder is not None and self.step % self.config.checkpoint_every == 0:
            self.save("last")

    @contextmanager
    def _interruptible(self):
        """While training, the first Ctrl-C only asks the loop to stop after this step."""
        requested = []
        if threading.current_thread() is not threading.main_thread():
            yield lambda: False
            return

        def handler(signum, frame):
            if requested:
                raise KeyboardInterrupt
            requested.append(True)

        previous = signal.signal(signal.SIGINT, handler)
        try:
            yield lambda: bool(requested)
        finally:
            signal.signal(signal.SIGINT, previous)

    def _out_of_time(self):
        return self.config.time_limit_s and self.train_seconds >= self.config.time_limit_s

    def _progress_bar(self):
        if not self.config.progress:
            return None
        try:
            from tqdm import tqdm
        except ImportError as error:
            raise ImportError("the progress bar needs tqdm: pip install -e '.[examples]', "
                              "or pass progress=False") from error

        class Bar(tqdm):
            # no monitor thread: with another Python thread alive minigrad keeps OpenBLAS's
            # spinning threads (minigrad/backend/blas_threads.py)
            monitor_interval = 0

        return Bar(total=self.config.steps, initial=self.step, desc="training", unit="step",
                   dynamic_ncols=True)

    def validate(self):
        """Validation metrics on (the first `eval_examples` of) the valid split; keeps best.npz."""
        record = evaluate(self.model, self.valid[:self.config.eval_examples], self.vocab,
                          device=self.model.device, tokenizer=self.tokenizer)
        record.update(step=self.step, epoch=self.data.epoch, split="valid",
                      time_s=round(self.train_seconds, 3))
        score = (record["exact_match"], -record["loss"])
        improved = self.best is None or score > tuple(self.best)
        if improved:
            self.best, self.best_step = score, self.step
            if self.folder is not None:
                self.save("best")
        self._log(record)
        self._print(describe(record) + ("  (best so far)" if improved else ""))
        for callback in self.callbacks:
            callback.on_validation(self, self.step, record)
        return record

    def _log(self, record):
        """Append `record` to metrics.jsonl; without a progress bar, print training records
        too (validation records are always printed)."""
        if self.folder is not None:
            self.folder.append_metrics(record)
        if not self.config.progress and record["split"] == "train":
            self._print(describe(record))

    def _print(self, line):
        """A line above the progress bar (tqdm.write), or a plain line without one."""
        if self._progress is not None:
            self._progress.write(line, file=sys.stdout)
        else:
            print(line, flush=True)

    # ----- checkpoints ------------------------------------------------------------------------
    def state_dict(self):
        return {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                "scheduler": self.scheduler.state_dict(), "rng": mg.get_rng_state(),
                "data": self.data.state_dict(), "step": self.step,
                "best": None if self.best is None else list(self.best),
                "best_step": self.best_step, "train_seconds": self.train_seconds,
                "wall_seconds": self.wall_seconds, "model_config": self.model.config.to_dict(),
                "vocab_digest": self.vocab.digest()}

    def load_state_dict(self, state):
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        mg.set_rng_state(state["rng"])
        self.data.load_state_dict(state["data"])
        self.step, self.best = int(state["step"]), state["best"]
        self.best_step = state.get("best_step")  # absent from older checkpoints
        self.train_seconds = float(state["train_seconds"])
        self.wall_seconds = float(state.get("wall_seconds", self.train_seconds))

    def save(self, which):
        """Write `last.npz` or `best.npz` atomically (a crash mid-write keeps the old file)."""
        self.folder.path.mkdir(parents=True, exist_ok=True)
        mg.save(self.state_dict(), self.folder.checkpoint(which))

    def resume(self, state=None):
        """Continue from the run folder's `last.npz` (or from `state`, read from it): same
        weights, optimizer, schedule, data position and random state, so the run goes on
        exactly as if never stopped. Returns the step it continues from."""
        if state is None:
            state = mg.load(self.folder.checkpoint("last"), device=self.model.device)
        self.load_state_dict(state)
        return self.step


def describe(record):
    """One line for a metrics record: `step 500  valid  loss 1.234  exact match 0.9500 ...`."""
    parts = [f"step {record['step']:>5}", f"{record['split']:<5}", f"loss {record['loss']:.4f}"]
    if record["split"] == "train":
        parts += [f"lr {record['lr']:.2e}", f"grad norm {record['grad_norm']:.3f}",
                  f"{record['tokens_per_s']:.0f} tok/s"]
    else:
        parts += [f"exact match {record['exact_match']:.4f}", f"BLEU {record['bleu']:.2f}",
                  f"token accuracy {record['token_accuracy']:.4f}"]
    return "  ".join(parts)
