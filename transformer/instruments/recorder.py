"""GradientFlowRecorder: the gradient-flow records of docs/conventions.md, taken with tensor
hooks that every ResidualBlock's observer registers while recording, and the rows' exports."""

import csv
import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ..training import Callback

ROW_FIELDS = ("step", "config", "stack", "layer", "sublayer", "param", "quantity", "value")
STACKS = ("encoder", "decoder")
SUBLAYERS = ("self_attn", "cross_attn", "ffn")


def residual_blocks(model: Any) -> Iterator[tuple[str, int, str, Any]]:
    """(stack, layer, sublayer, block) for every ResidualBlock of a Transformer, layers from 1."""
    for stack in STACKS:
        for number, layer in enumerate(getattr(model, stack).layers, start=1):
            for sublayer in SUBLAYERS:
                if hasattr(layer, sublayer):
                    yield stack, number, sublayer, getattr(layer, sublayer)


def parameter_place(name: str) -> tuple[str | None, int | None, str | None]:
    """(stack, layer, sublayer) of a dotted parameter name, None where the name does not say:
    "encoder.layers.0.ffn.sublayer.linear2.weight" -> ("encoder", 1, "ffn")."""
    parts = name.split(".")
    if parts[0] not in STACKS:
        return None, None, None
    if len(parts) > 3 and parts[1] == "layers":
        return parts[0], int(parts[2]) + 1, parts[3] if parts[3] in SUBLAYERS else None
    return parts[0], None, None


def frobenius(tensor: Any) -> float:
    """‖tensor‖ over all its elements, as a Python float."""
    return float(tensor.backend.xp.linalg.norm(tensor.data))


def mean_square(tensor: Any) -> float:
    """The mean of the squared elements: for a (batch, len, d_model) stream, the squared norm
    of each token's vector / d_model, averaged over the tokens."""
    xp = tensor.backend.xp
    return float(xp.mean(xp.square(tensor.data)))


def select(rows: Iterable[dict], **fields: Any) -> list[dict[str, Any]]:
    """The rows whose fields have the given values: select(rows, quantity="grad_in")."""
    return [row for row in rows if all(row.get(k) == v for k, v in fields.items())]


def write_csv(rows: Sequence[dict], path: str | Path,
              fields: Sequence[str] | None = None) -> None:
    """Rows (dicts) as a CSV file, columns `fields` (default: every key, in order of first
    appearance); None is written as an empty cell."""
    fields = fields or list(dict.fromkeys(key for row in rows for key in row))
    with open(path, "w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)


def write_jsonl(rows: Iterable[dict], path: str | Path) -> None:
    """Rows as JSON Lines: one object per line."""
    with open(path, "w") as file:
        file.writelines(json.dumps(row) + "\n" for row in rows)


class GradientFlowRecorder(Callback):
    """Records how the gradient flows through every ResidualBlock, pass by pass.

    Per block (stack, layer, sublayer), with x its input, s its residual sum and out its
    output (docs/conventions.md): `grad_in` = ‖∂L/∂x‖, `grad_out` = ‖∂L/∂out‖, `grad_skip`
    = ‖∂L/∂s‖ (0 without a skip), `grad_branch` = the part of ∂L/∂x that comes through the
    branch, `attenuation` = grad_in / grad_out; `branch_sq_norm_per_dim` and (blocks with a
    LayerNorm) `ln_input_sq_norm_per_dim`, ‖·‖²/d_model of the branch and of the LayerNorm's
    input. Per layer: `stream_sq_norm_per_dim`, the residual stream at the layer's output. Per
    parameter: `param_grad_norm` (by `end_pass`) and `update_ratio` ‖Δw‖/‖w‖ (by
    `after_update`; skipped where ‖w‖ = 0).

        with GradientFlowRecorder(model, "post-LN") as recorder:
            loss_of(model(src, tgt_in)).backward()
            recorder.end_pass()
        recorder.to_csv("flow.csv")

    As a Trainer callback (`callbacks=[recorder]`, the training inside the with block) it
    records the steps whose number is a multiple of `every` (1: every step; a step holds 7
    rows per block, 1 per layer and up to 2 per parameter): `end_pass(step)` after the
    backward, `after_update()` after the optimizer step; other steps are not observed; a step
    of several micro-batches gives one pass per micro-batch, all numbered with the step. A pass
    is one forward that builds a graph and its backward; it ends with `end_pass`, when a block
    runs again, or when the block exits. Forward passes without a graph (no_grad, evaluation)
    are not recorded; outside the with block nothing is hooked. Closed passes' rows are in
    `rows` (dicts with ROW_FIELDS)."""

    def __init__(self, model: Any, config_label: str = "", every: int = 1) -> None:
        if not isinstance(every, int) or isinstance(every, bool) or every < 1:
            raise ValueError(f"GradientFlowRecorder: every must be a positive integer (record "
                             f"every n-th training step), got {every!r}")
        self.model, self.config_label, self.every = model, config_label, every
        self.blocks = {id(block): (block, (stack, layer, sublayer))
                       for stack, layer, sublayer, block in residual_blocks(model)}
        self.rows: list[dict] = []
        self.passes = 0  # the step number of the last closed pass
        self._pass_rows: list[dict] = []
        self._ran: set = set()
        self._handles: list = []
        self._weights: Any = None  # copies taken by end_pass, for update_ratio
        self._observing = True  # False while the Trainer runs a step that is not sampled
        self._step_start = 0  # where the rows of the Trainer's step under way begin

    # ----- attaching ------------------------------------------------------------------------
    def attach(self) -> "GradientFlowRecorder":
        """Start observing every ResidualBlock (what entering the with block does)."""
        for block, _ in self.blocks.values():
            block.observer = self._observe
        return self

    def detach(self) -> None:
        """Close the pass in progress and stop observing; every hook is removed."""
        self._close_pass()
        for block, _ in self.blocks.values():
            block.observer = None

    def __enter__(self) -> "GradientFlowRecorder":
        return self.attach()

    def __exit__(self, *exc) -> None:
        self.detach()

    # ----- Trainer callback -----------------------------------------------------------------
    def on_backward_end(self, trainer: Any, step: int, batch: Any) -> None:
        if step % self.every == 0:  # the step's earlier micro-batches, closed as they ended
            for row in self.rows[self._step_start:]:
                row["step"] = step
            self.end_pass(step)
        else:  # the first step of a run, observed before its number was known
            del self.rows[self._step_start:]
            self._drop_pass()

    def on_step_end(self, trainer: Any, step: int, record: dict) -> None:
        if self._weights is not None:
            self.after_update()
        self._step_start = len(self.rows)
        self._observing = (step + 1) % self.every == 0

    def take_rows(self) -> list[dict]:
        """The closed passes' rows, removed from `rows` (for a caller that writes them out as
        the run goes)."""
        rows, self.rows, self._step_start = self.rows, [], 0
        return rows

    # ----- passes ---------------------------------------------------------------------------
    def end_pass(self, step: int | None = None) -> None:
        """After a backward: add each parameter's gradient norm (from `.grad`), keep a copy of
        the weights for `after_update`, and close the pass as `step` (default: the next)."""
        for name, param in self.model.named_parameters():
            if param.grad is not None:
                self._pass_rows.append(self._row(*parameter_place(name), name,
                                                 "param_grad_norm", frobenius(param.grad)))
        self._weights = {name: param.data.copy()
                         for name, param in self.model.named_parameters()}
        self._close_pass(step)

    def after_update(self) -> None:
        """After the optimizer step: each parameter's ‖w_now − w_before‖ / ‖w_before‖, with
        w_before the copy of `end_pass`, as rows of that pass."""
        for name, param in self.model.named_parameters():
            xp = param.backend.xp
            size = float(xp.linalg.norm(self._weights[name]))
            if size > 0:
                change = float(xp.linalg.norm(param.data - self._weights[name]))
                row = self._row(*parameter_place(name), name, "update_ratio", change / size)
                self.rows.append(dict(row, step=self.passes))
        self._weights = None

    def _close_pass(self, step=None) -> None:
        """Number the rows of the pass in progress (default: the next number) and drop its
        hooks."""
        if self._pass_rows:
            self.passes = self.passes + 1 if step is None else step
            self.rows += [dict(row, step=self.passes) for row in self._pass_rows]
        self._drop_pass()

    def _drop_pass(self) -> None:
        """Forget the pass in progress and remove its hooks."""
        for handle in self._handles:
            handle.remove()
        self._pass_rows, self._ran, self._handles = [], set(), []

    def _row(self, stack, layer, sublayer, param, quantity, value):
        return {"step": None, "config": self.config_label, "stack": stack, "layer": layer,
                "sublayer": sublayer, "param": param, "quantity": quantity, "value": value}

    # ----- what each block reports ----------------------------------------------------------
    def _observe(self, block, x, branch, s, out) -> None:
        """ResidualBlock's observer: sizes now, and hooks on x, s and out that report their
        gradients."""
        if not out.requires_grad or not self._observing:
            return  # no graph (no gradient will flow back), or a step that is not sampled
        stack, layer, sublayer = place = self.blocks[id(block)][1]
        if place in self._ran:
            self._close_pass()  # this block runs again: a new pass has begun
        self._ran.add(place)

        def report(quantity, value, sublayer=sublayer) -> None:
            self._pass_rows.append(self._row(stack, layer, sublayer, None, quantity, value))

        report("branch_sq_norm_per_dim", mean_square(branch))
        if block.has_norm:
            report("ln_input_sq_norm_per_dim", mean_square(x if block.norm_first else s))
        if sublayer == "ffn":  # the last block of the layer: its output is the layer's
            report("stream_sq_norm_per_dim", mean_square(out), sublayer=None)
        grad_s, grad_out = [], []

        def on_out(grad) -> None:
            grad_out.append(frobenius(grad))
            report("grad_out", grad_out[-1])

        def on_s(grad) -> None:
            grad_s.append(grad)
            report("grad_skip", frobenius(grad) if block.has_skip else 0.0)

        def on_x(grad) -> None:
            # ∂L/∂x = ∂L/∂s through the identity + (∂branch/∂x)ᵀ·∂L/∂s through the branch
            through_branch = grad - grad_s.pop() if block.has_skip else grad
            report("grad_in", frobenius(grad))
            report("grad_branch", frobenius(through_branch))
            if grad_out and grad_out[-1] > 0:
                report("attenuation", frobenius(grad) / grad_out[-1])

        for tensor, hook in ((out, on_out), (s, on_s), (x, on_x)):
            if tensor.requires_grad:
                self._handles.append(tensor.register_hook(hook))

    # ----- exports --------------------------------------------------------------------------
    def to_csv(self, path: str | Path) -> None:
        write_csv(self.rows, path, ROW_FIELDS)

    def to_jsonl(self, path: str | Path) -> None:
        write_jsonl(self.rows, path)
