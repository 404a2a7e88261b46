"""Trainer: the training loop of the toy translation models, with logging, validation,
checkpoints that survive crashes and Ctrl-C, and exact resumption.

One step, top to bottom: batch -> model.forward -> loss -> backward -> clip ->
optimizer.step -> scheduler.step -> log."""

import math
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass

import minigrad as mg
from minigrad.nn import functional as F
from minigrad.optim import Adam, NoamSchedule, clip_grad_norm_

from .evaluation import evaluate
from .run_folder import RunFolder


@dataclass
class TrainingConfig:
    """Adam(0.9, 0.98, 1e-9) with the Noam schedule, label smoothing 0.1 (paper §5.3-5.4)."""

    steps: int = 5000
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

    @classmethod
    def from_dict(cls, values):
        return cls(**values)


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
    """Trains `model` on batches from `data` (a BatchIterator), validating on `valid` examples,
    writing the run folder `out` (optional)."""

    def __init__(self, model, data, valid, vocab, config, out=None, callbacks=()):
        self.model, self.data, self.valid, self.vocab = model, data, valid, vocab
        self.config = config
        self.folder = RunFolder(out) if out is not None else None
        if self.folder is not None:
            self.folder.path.mkdir(parents=True, exist_ok=True)
        self.callbacks = list(callbacks)
        self.parameters = list(model.parameters())
        self.optimizer = Adam(self.parameters, lr=1.0, betas=(0.9, 0.98), eps=1e-9)
        self.scheduler = NoamSchedule(self.optimizer, model.config.d_model,
                                      config.warmup_steps, factor=config.lr_factor)
        self.step = 0
        self.best = None  # (exact_match, -loss) of the best validation so far
        self.train_seconds = 0.0

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
        progress = self._progress_bar()
        try:
            with self._interruptible() as interrupted:
                while self.step < self.config.steps and not self._out_of_time():
                    self._one_step(progress)
                    if interrupted():
                        if self.folder is not None:
                            self.save("last")
                            print(f"\ninterrupted at step {self.step}: saved "
                                  f"{self.folder.checkpoint('last')}; continue with --resume")
                        return False
        finally:
            if progress is not None:
                progress.close()
        if self.step % self.config.eval_every:
            self.validate()
        if self.folder is not None:
            self.save("last")
        return True

    def _one_step(self, progress):
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
        if progress is not None:
            progress.update(1)
            progress.set_postfix(loss=f"{record['loss']:.3f}", lr=f"{record['lr']:.2e}",
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
                          device=self.model.device)
        record.update(step=self.step, epoch=self.data.epoch, split="valid",
                      time_s=round(self.train_seconds, 3))
        self._log(record)
        score = (record["exact_match"], -record["loss"])
        if self.best is None or score > tuple(self.best):
            self.best = score
            if self.folder is not None:
                self.save("best")
        for callback in self.callbacks:
            callback.on_validation(self, self.step, record)
        return record

    def _log(self, record):
        if self.folder is not None:
            self.folder.append_metrics(record)
        if not self.config.progress:
            shown = {k: round(v, 4) if isinstance(v, float) else v for k, v in record.items()
                     if k not in ("phenomena",)}
            print(shown, flush=True)

    # ----- checkpoints ------------------------------------------------------------------------
    def state_dict(self):
        return {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                "scheduler": self.scheduler.state_dict(), "rng": mg.get_rng_state(),
                "data": self.data.state_dict(), "step": self.step,
                "best": None if self.best is None else list(self.best),
                "train_seconds": self.train_seconds}

    def load_state_dict(self, state):
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        mg.set_rng_state(state["rng"])
        self.data.load_state_dict(state["data"])
        self.step, self.best = int(state["step"]), state["best"]
        self.train_seconds = float(state["train_seconds"])

    def save(self, which):
        """Write `last.npz` or `best.npz` atomically (a crash mid-write keeps the old file)."""
        mg.save(self.state_dict(), self.folder.checkpoint(which))

    def resume(self):
        """Continue from the run folder's `last.npz`: same weights, optimizer, schedule, data
        position and random state, so the run goes on exactly as if never stopped."""
        self.load_state_dict(mg.load(self.folder.checkpoint("last"), device=self.model.device))
        return self.step
