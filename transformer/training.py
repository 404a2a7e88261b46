"""Trainer: the training loop of the toy translation models, with logging, validation,
checkpoints that survive crashes and Ctrl-C, and exact resumption.

One step, top to bottom: batch -> model.forward -> loss -> backward -> clip ->
optimizer.step -> scheduler.step -> (the weights' moving average) -> log.

The optimizer, the schedule and the loss are the Trainer's arguments; by default the paper's
(§5.3-5.4): `paper_optimizer`, `paper_schedule`, `smoothed_cross_entropy`."""

from __future__ import annotations

import math
import signal
import sys
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

import numpy as np

import minigrad as mg
from minigrad.distributed import GradientReducer, SingleProcess
from minigrad.nn import functional as F
from minigrad.optim import (
    Adam,
    ExponentialMovingAverage,
    LRScheduler,
    NoamSchedule,
    Optimizer,
    WarmupCosine,
    clip_grad_norm_,
)

from .data.batching import Batch
from .data.tokenizer import WORDS
from .errors import CheckpointError, ConfigError
from .evaluation import evaluate
from .run_folder import RunFolder
from .training_config import TrainingConfig

# A loss: (logits (B, T, V), targets (B, T) token ids, reduction "mean" or "sum") -> a 0-d
# tensor, padding ignored: the mean over the batch's target tokens, or their sum.
Loss = Callable[[mg.Tensor, mg.Tensor, str], mg.Tensor]


def paper_optimizer(model, config: TrainingConfig) -> Optimizer:
    """Adam with beta = (0.9, 0.98), eps = 1e-9 (paper §5.3) over the model's parameters, at
    lr 1: the schedule sets the rate."""
    return Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)


def paper_schedule(optimizer: Optimizer, model, config: TrainingConfig) -> LRScheduler:
    """The Noam schedule (paper §5.3) of the model's d_model, `config.warmup_steps` and
    `config.lr_factor`; with `config.schedule` "cosine", the same warmup to the same peak,
    factor / sqrt(d_model x warmup_steps), then a half cosine down to 0 at `config.steps`
    (a resumed run given more steps stretches the decay: its rate rises again; a run of at
    most `config.warmup_steps` steps only warms up, as Noam's does)."""
    if config.schedule == "noam":
        return NoamSchedule(optimizer, model.config.d_model, config.warmup_steps,
                            factor=config.lr_factor)
    return WarmupCosine(optimizer, config.warmup_steps, config.steps,
                        factor=NoamSchedule.peak(model.config.d_model, config.warmup_steps,
                                                 config.lr_factor))


def smoothed_cross_entropy(model, config: TrainingConfig) -> Loss:
    """Cross-entropy with label smoothing `config.label_smoothing` (paper §5.4), ignoring the
    model's padding id."""
    def loss(logits, targets, reduction):
        return F.cross_entropy(logits, targets, ignore_index=model.config.pad_id,
                               label_smoothing=config.label_smoothing, reduction=reduction)
    return loss


class Callback:
    """Hooks into the loop; subclass and override what you need.

    `batch` is the step's batch (its last micro-batch when a step has several).
    `on_step_end`'s record holds `loss` and `grad_norm` as 0-d tensors on the model's device
    at every step: `.item()` reads one (at a step where `trainer.reads_at(step)` is false that
    makes the host wait for the GPU); on several ranks its loss is this rank's share. The
    other entries (`lr`, `step`, `epoch`, `time_s`, `tokens_per_s`) are numbers. Validation
    runs on rank 0 only, and its record holds numbers."""

    def on_backward_end(self, trainer, step, batch) -> None:
        pass

    def on_step_end(self, trainer, step, record) -> None:
        pass

    def on_validation(self, trainer, step, record) -> None:
        pass


class NonFiniteLossError(FloatingPointError):
    """The loss (or the gradient norm) became NaN or Inf; the last good checkpoint is left as
    it was."""


class Trainer:
    """Trains `model` on batches from `data` (a BatchIterator), validating on `valid` examples
    (split into tokens by `tokenizer`), writing the run folder `out` (optional).

    With a `communicator` of several ranks (minigrad.distributed) every rank trains a replica:
    it takes its shards of each global batch, the gradients are summed over the ranks, and at
    each read step (`reads_at`) one small collective agrees on the loss and on stopping
    (Ctrl-C on any rank, the time limit), so that every rank stops after the same step. Rank 0
    alone logs, validates, shows progress and writes the run folder (docs/distributed.md).

    `optimizer` (over the model's parameters), `scheduler` (of that optimizer) and `loss` (a
    `Loss`) default to the paper's: `paper_optimizer`, `paper_schedule` and
    `smoothed_cross_entropy` of the model and `config`. A checkpoint keeps the optimizer's and
    the schedule's state, and is resumed only by an optimizer of the same class."""

    def __init__(self, model, data, valid, vocab, config, out=None, callbacks=(),
                 tokenizer=WORDS, communicator=None, optimizer: Optimizer | None = None,
                 scheduler: LRScheduler | None = None, loss: Loss | None = None) -> None:
        self.model, self.data, self.valid, self.vocab = model, data, valid, vocab
        self.tokenizer = tokenizer
        self.config = config
        self.communicator = communicator if communicator is not None else SingleProcess()
        self.chief = self.communicator.rank == 0  # the rank that logs, validates and saves
        self.folder: Any = RunFolder(out) if out is not None and self.chief else None  # made at
        # the first write
        self.reducer = GradientReducer(model.named_parameters(), self.communicator,
                                       named_buffers=model.named_buffers())
        if self.communicator.world_size > 1:
            self.reducer.check_same_parameters()
            self.reducer.broadcast_parameters()
        if self.communicator.rank > 0:  # dropout masks of its own; rank 0 keeps the stream
            mg.manual_seed(rank_seed(config.seed, self.communicator.rank, 0))  # of one process
        self.callbacks = list(callbacks)
        self.parameters = list(model.parameters())
        self.optimizer = optimizer if optimizer is not None else paper_optimizer(model, config)
        if scheduler is not None and scheduler.optimizer is not self.optimizer:
            raise ConfigError(f"Trainer: the {type(scheduler).__name__} schedules another "
                              "optimizer than the Trainer's; pass the optimizer it was built "
                              "on as optimizer=")
        self.scheduler = scheduler if scheduler is not None else \
            paper_schedule(self.optimizer, model, config)
        self.loss = loss if loss is not None else smoothed_cross_entropy(model, config)
        self.average = ExponentialMovingAverage(model.named_parameters(), config.ema_decay) \
            if config.ema_decay else None  # what validation and best.npz use, if any
        self.step = 0
        self._unread: list = []  # (step, loss, gradient norm) of the steps since the last read
        self.best: tuple | None = None  # (exact_match, bleu, step) of the best validation so far
        self.best_step: int | None = None  # the step of best.npz
        self.train_seconds = 0.0  # in train_step and batching, over the whole run
        self.wall_seconds = 0.0  # in train() (validation and checkpoints too), whole run
        self._progress = None  # the tqdm bar while train() runs
        self._stop_requested = lambda: False  # this rank's Ctrl-C, while train() runs
        # what every rank agreed at the last step: "interrupt", "time"
        self._stopping: str | None = None

    # ----- one step ---------------------------------------------------------------------------
    def train_step(self, batch, global_tokens=None) -> dict[str, Any]:
        """One step, entirely on the model's device: nothing is read back (a GPU never
        waits). `batch` is a Batch (the loss is its mean), or a list of this rank's
        micro-batches of one global batch of `global_tokens` target tokens (each loss summed,
        then divided by that count, so that the gradients summed over micro-batches and
        ranks are the gradient of the global batch's mean loss). Returns the step's record,
        its loss and gradient norm as 0-d tensors, and at a logging step `cross_entropy`: the
        plain cross-entropy of this rank's batch per target token (no label smoothing; read
        from the logits, nothing learnt from it: the training arithmetic is the same), what
        training perplexity is computed from. A non-finite loss or gradient makes the
        optimizer skip the update on the device (on every rank: one rank's non-finite loss
        makes every rank's summed gradient non-finite); the next read (`read`) raises
        NonFiniteLossError for it."""
        batches = [batch] if isinstance(batch, Batch) else batch
        self.model.train()
        self.optimizer.zero_grad()
        total: Any = None
        plain: Any = None
        logging = (self.step + 1) % self.config.log_every == 0
        with self.reducer.no_sync():
            for micro in batches:
                logits = self.model(micro.src, micro.tgt_in, micro.src_mask, micro.tgt_mask)
                loss = self.loss(logits, micro.tgt_out,
                                 "mean" if global_tokens is None else "sum")
                if global_tokens is not None:
                    loss = loss / global_tokens
                loss.backward()
                total = loss.detach() if total is None else total + loss.detach()
                if logging:
                    summed = F.cross_entropy(logits.detach(), micro.tgt_out,
                                             ignore_index=self.model.config.pad_id,
                                             reduction="sum")
                    plain = summed if plain is None else plain + summed
        self.reducer.reduce()
        for callback in self.callbacks:
            callback.on_backward_end(self, self.step + 1, batches[-1])
        grad_norm = clip_grad_norm_(self.parameters, self.config.clip_norm)
        finite = total.isfinite() & grad_norm.isfinite()
        lr = self.optimizer.param_groups[0]["lr"]
        self.optimizer.step(skip=~finite)  # before a bad value reaches the weights
        self.scheduler.step()
        if self.average is not None:
            self.average.update()
        self._unread.append((self.step + 1, total, grad_norm))
        record = {"loss": total, "lr": lr, "grad_norm": grad_norm}
        if plain is not None:
            record["cross_entropy"] = plain / sum(micro.n_tokens for micro in batches)
        return record

    # ----- the read cadence: the one place where the host waits for the device -------------------
    def reads_at(self, step) -> bool:
        """Whether the host reads the device after `step`: every `sync_every` steps (the
        logging interval by default), and wherever the loop needs the values (a log line,
        validation, a checkpoint, the last step). The same on every rank."""
        config = self.config
        return any(step % every == 0 for every in (config.sync_every or config.log_every,
                                                   config.log_every, config.eval_every,
                                                   config.checkpoint_every)) \
            or step >= config.steps

    def read(self) -> dict[str, float]:
        """Read the losses and gradient norms of the steps since the last read, in one
        transfer; raise NonFiniteLossError for the first non-finite one (its update, and
        those of the steps after it that were not finite, were skipped on the device).
        Returns the latest step's {"loss": ..., "grad_norm": ...} as numbers (empty when
        every step was read already)."""
        self.communicator.synchronize("the steps since the last read")  # NCCL: a deadline
        unread, self._unread = self._unread, []
        if not unread:
            return {}
        values = mg.stack([value.astype("float64") for _, loss, norm in unread
                           for value in (loss, norm)]).numpy()
        for (step, _, _), (loss, norm) in zip(unread, values.reshape(-1, 2)):
            for name, value in (("loss", loss), ("gradient norm", norm)):
                if not math.isfinite(value):
                    self._stop_not_finite(step, name, float(value))
        return {"loss": float(values[-2]), "grad_norm": float(values[-1])}

    def _agree(self, record, read) -> None:
        """Whether to stop, and (at read steps) the global loss. One process decides alone
        after every step: Ctrl-C, or its time is up. Several ranks agree at read steps, in the
        step's one small collective: the sum of their loss shares (the global batch's loss,
        into `record`), Ctrl-C on any rank, rank 0's time. What was decided is
        `self._stopping` ("interrupt", "time" or None)."""
        if self.communicator.world_size == 1:
            self._stopping = "interrupt" if self._stop_requested() else \
                "time" if self._out_of_time() else None
            return
        if not read:
            return
        values = np.array([record["loss"], self._stop_requested(),
                           self.chief and self._out_of_time()], np.float64)
        self.communicator.allreduce_sum_(values, "the agreement on the loss and on stopping")
        record["loss"] = float(values[0])
        self._stopping = "interrupt" if values[1] else "time" if values[2] else None

    def _stop_not_finite(self, step, name, value):
        """Raise NonFiniteLossError for a NaN/Inf `value`: the optimizer skipped that step, so
        neither the weights nor any checkpoint saw it."""
        last = self.folder.checkpoint("last") if self.folder is not None else None
        kept = (f"the last good checkpoint ({last}) was kept" if last is not None and last.exists()
                else "no checkpoint had been saved yet")
        raise NonFiniteLossError(
            f"step {step}: the {name} is {value}; training stopped and {kept}. Lower "
            "the learning rate (lr_factor) or clip gradients harder (clip_norm)")

    # ----- the loop ---------------------------------------------------------------------------
    def train(self) -> bool:
        """Run until `config.steps` (or the time limit). Ctrl-C finishes the current step, saves
        `last.npz` and returns False (a second Ctrl-C stops at once)."""
        self._progress = self._progress_bar() if self.chief else None
        self._stopping = None
        started = time.perf_counter()
        try:
            with self._interruptible() as interrupted:
                self._stop_requested = interrupted
                while self.step < self.config.steps and self._stopping != "time":
                    self._one_step()
                    if self._stopping == "interrupt":
                        self.wall_seconds += time.perf_counter() - started
                        self.save("last")
                        if self.folder is not None:
                            self.write(f"interrupted at step {self.step}: saved "
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
        self.save("last")
        return True

    def _one_step(self) -> None:
        started = time.perf_counter()
        batches, global_tokens = self._next_shards()
        record = self.train_step(batches, global_tokens)
        self.step += 1
        one_process = self.communicator.world_size == 1
        read = self.reads_at(self.step) or (one_process and self._out_of_time())
        numbers = self.read() if read else {}
        elapsed = time.perf_counter() - started
        self.train_seconds += elapsed
        tokens = batches.n_tokens if global_tokens is None else global_tokens
        record.update(step=self.step, epoch=self.data.epoch, split="train",
                      time_s=round(self.train_seconds, 3), tokens_per_s=tokens / elapsed)
        for callback in self.callbacks:
            callback.on_step_end(self, self.step, record)  # the loss of this rank's shards
        if "cross_entropy" in record:  # a logging step, read with the others
            numbers["cross_entropy"] = float(record["cross_entropy"].astype("float64").numpy())
        record = {**record, **numbers}  # what is logged: numbers at read steps
        self._agree(record, read)  # from here on, the loss of the global batch
        if self.step % self.config.log_every == 0:
            self._log(record)
        if self._progress is not None:
            self._progress.update(1)
            if read:
                self._progress.set_postfix(loss=f"{record['loss']:.3f}",
                                           lr=f"{record['lr']:.2e}",
                                           tok_s=f"{record['tokens_per_s']:.0f}")
        if self.step % self.config.eval_every == 0:
            self.validate()
        if self.step % self.config.checkpoint_every == 0:
            self.save("last")

    def _next_shards(self):
        """(this rank's micro-batches, the global batch's token count), or (the whole batch,
        None) for one process without accumulation (the loss is then the batch's mean)."""
        world, micro = self.communicator.world_size, self.config.accumulate
        if world * micro == 1:
            return self.data.next_batch(), None
        first = self.communicator.rank * micro
        return self.data.next_shards(world * micro, range(first, first + micro))

    @contextmanager
    def _interruptible(self):
        """While training, the first Ctrl-C only asks the loop to stop after this step."""
        requested: list = []
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

    def validate(self) -> dict[str, Any] | None:
        """Validation metrics on (the first `eval_examples` of) the valid split; keeps best.npz:
        the highest exact match, then BLEU, then the later step (not the lower loss, which
        goes up as the model grows surer of itself, long before new combinations stop
        improving). Rank 0 alone validates (the others return None)."""
        if not self.chief:
            return None
        with self.evaluated_weights():
            record = evaluate(self.model, self.valid[:self.config.eval_examples], self.vocab,
                              device=self.model.device, tokenizer=self.tokenizer)
        record.update(step=self.step, epoch=self.data.epoch, split="valid",
                      time_s=round(self.train_seconds, 3))
        score = (record["exact_match"], record["bleu"], self.step)  # ties: the later step
        improved = self.best is None or score > tuple(self.best)
        if improved:
            self.best, self.best_step = score, self.step
            if self.folder is not None:
                self.save("best")
        self._log(record)
        self.write(describe(record) + ("  (best so far)" if improved else ""))
        for callback in self.callbacks:
            callback.on_validation(self, self.step, record)
        return record

    def evaluated_weights(self) -> AbstractContextManager[object]:
        """A context in which the model holds the weights the run is judged by: the moving
        average if the run keeps one, else its own."""
        return nullcontext() if self.average is None else self.average.applied()

    def _log(self, record) -> None:
        """Append `record` to metrics.jsonl; without a progress bar, print training records
        too (validation records are always printed)."""
        if self.folder is not None:
            self.folder.append_metrics(record)
        if not self.config.progress and record["split"] == "train":
            self.write(describe(record))

    def write(self, line) -> None:
        """A line above the progress bar (tqdm.write), or a plain line without one."""
        if self._progress is not None:
            self._progress.write(line, file=sys.stdout)
        else:
            print(line, flush=True)

    # ----- checkpoints ------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                "optimizer_class": type(self.optimizer).__name__,
                "scheduler": self.scheduler.state_dict(), "rng": self._rng_state(),
                "data": self.data.state_dict(), "step": self.step,
                "best": None if self.best is None else list(self.best),
                "best_step": self.best_step, "train_seconds": self.train_seconds,
                "wall_seconds": self.wall_seconds, "model_config": self.model.config.to_dict(),
                "vocab_digest": self.vocab.digest(),
                **({} if self.average is None else {"average": self.average.state_dict()})}

    def load_state_dict(self, state) -> None:
        """Continue from `state_dict()`; CheckpointError, with nothing changed, when it was
        trained with another optimizer class."""
        saved, own = state.get("optimizer_class"), type(self.optimizer).__name__
        if saved is not None and saved != own:
            raise CheckpointError(f"the checkpoint was trained with the {saved} optimizer, this "
                                  f"Trainer has {own}: resume with {saved} (optimizer=), or "
                                  "start a new run")
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        if self.average is not None:
            if "average" not in state:
                raise CheckpointError("the checkpoint holds no moving average of the weights, "
                                      f"but this run keeps one (ema_decay {self.average.decay})")
            self.average.load_state_dict(state["average"])
        self._set_rng_state(state)
        self.data.load_state_dict(state["data"])
        self.step, self.best = int(state["step"]), state["best"]
        self.best_step = state.get("best_step")  # absent from older checkpoints
        self.train_seconds = float(state["train_seconds"])
        self.wall_seconds = float(state.get("wall_seconds", self.train_seconds))

    def _rng_state(self):
        """The random state of the run's own generators: the CPU's and the model's device's
        (not those another run in this process may have loaded)."""
        return mg.get_rng_state(devices=dict.fromkeys(["cpu", str(self.model.device)]))

    def _set_rng_state(self, state) -> None:
        """This rank's random state: its own if the checkpoint has one (saved at this world
        size), rank 0's for rank 0, else a seed of its rank and step."""
        rank, world = self.communicator.rank, self.communicator.world_size
        per_rank = state.get("rng_ranks")
        if per_rank is not None and len(per_rank) == world:
            mg.set_rng_state(per_rank[rank])
        elif rank == 0:
            mg.set_rng_state(state["rng"])
        else:
            mg.manual_seed(rank_seed(self.config.seed, rank, int(state["step"])))

    def save(self, which) -> None:
        """Write `last.npz` or `best.npz` atomically (a crash mid-write keeps the old file).
        With several ranks, every rank saves "last" at the same step (their random states are
        gathered into it) and rank 0 writes; "best" is rank 0's alone."""
        state = self.state_dict()
        if which == "last" and self.communicator.world_size > 1:
            state["rng_ranks"] = self.communicator.allgather_object(
                state["rng"], "the gather of the ranks' random states")
        if self.folder is None:
            return
        self.folder.path.mkdir(parents=True, exist_ok=True)
        mg.save(state, self.folder.checkpoint(which))

    def resume(self, state=None) -> int:
        """Continue from the run folder's `last.npz` (or from `state`, read from it): same
        weights, optimizer, schedule, data position and random state, so the run goes on
        exactly as if never stopped. Returns the step it continues from."""
        if state is None:
            state = mg.load(self.folder.checkpoint("last"), device=self.model.device)
        self.load_state_dict(state)
        return self.step


def rank_seed(seed, rank, step) -> int:
    """The seed of rank `rank`'s generator from step `step` on (ranks > 0 draw their own
    dropout masks)."""
    return (seed * 1_000_003 + rank * 7919 + step) % 2**32


def describe(record) -> str:
    """One line for a metrics record: `step 500  valid  loss 1.234  exact match 0.9500 ...`."""
    parts = [f"step {record['step']:>5}", f"{record['split']:<5}", f"loss {record['loss']:.4f}"]
    if record["split"] == "train":
        parts += [f"lr {record['lr']:.2e}", f"grad norm {record['grad_norm']:.3f}",
                  f"{record['tokens_per_s']:.0f} tok/s"]
    else:
        parts += [f"exact match {record['exact_match']:.4f}", f"BLEU {record['bleu']:.2f}",
                  f"token accuracy {record['token_accuracy']:.4f}"]
    return "  ".join(parts)
