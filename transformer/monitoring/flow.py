"""Gradient flow over a run: the GradientFlowRecorder sampling every N-th training step, its
rows (docs/conventions.md, "Gradient-flow records", update-to-weight ratios included)
appended to the run folder's flow.jsonl as each sampled step ends, and the table of one
quantity per residual block and step that flow.png and the report draw."""

from __future__ import annotations

import numpy as np

from ..instruments.recorder import STACKS, SUBLAYERS, GradientFlowRecorder
from ..training import Callback

FLOW_FILE = "flow.jsonl"


class FlowRecording(Callback):
    """A Trainer callback around a GradientFlowRecorder of `trainer.model` that samples every
    `every`-th step (labelled `label`): each sampled step's rows go to flow.jsonl once its
    update ratios are known, and are not kept in memory. `attach()` before training and
    `detach()` after (or use it as a context manager), as for the recorder itself."""

    def __init__(self, model, every, label=""):
        self.recorder = GradientFlowRecorder(model, label, every=every)
        self.latest_rows: list = []  # those of the last sampled step, for TensorBoard

    def attach(self) -> FlowRecording:
        self.recorder.attach()
        return self

    def detach(self) -> None:
        self.recorder.detach()

    def __enter__(self):
        return self.attach()

    def __exit__(self, *exc):
        self.detach()
        return False

    def on_backward_end(self, trainer, step, batch) -> None:
        self.recorder.on_backward_end(trainer, step, batch)

    def on_step_end(self, trainer, step, record) -> None:
        self.recorder.on_step_end(trainer, step, record)
        if step % self.recorder.every == 0:
            rows = self.recorder.take_rows()
            self.latest_rows = rows
            if trainer.folder is not None:
                for row in rows:
                    trainer.folder.append_record(FLOW_FILE, row)


def flow_table(rows, quantity="grad_in"):
    """(block labels "encoder 1 self_attn" ..., steps, values (blocks, steps)) of one per-block
    quantity of flow rows, NaN where a block has no row at a step; blocks in model order."""
    chosen = [row for row in rows if row["quantity"] == quantity and row["param"] is None]
    order = {(stack, sublayer): (STACKS.index(stack), SUBLAYERS.index(sublayer))
             for stack in STACKS for sublayer in SUBLAYERS}
    blocks = sorted({(row["stack"], row["layer"], row["sublayer"]) for row in chosen},
                    key=lambda b: (order[b[0], b[2]][0], b[1], order[b[0], b[2]][1]))
    steps = sorted({row["step"] for row in chosen})
    values = np.full((len(blocks), len(steps)), np.nan)
    where = {block: i for i, block in enumerate(blocks)}
    column = {step: j for j, step in enumerate(steps)}
    for row in chosen:
        values[where[row["stack"], row["layer"], row["sublayer"]], column[row["step"]]] = \
            row["value"]
    return [f"{stack} {layer} {sublayer}" for stack, layer, sublayer in blocks], steps, values


def update_ratio_table(rows):
    """(block labels, steps, values): per block and step, the median update-to-weight ratio
    (‖Δw‖/‖w‖) of the block's parameters."""
    chosen = [row for row in rows if row["quantity"] == "update_ratio"
              and row["sublayer"] is not None]
    grouped: dict = {}
    for row in chosen:
        grouped.setdefault((row["stack"], row["layer"], row["sublayer"], row["step"]),
                           []).append(row["value"])
    return flow_table([{"stack": s, "layer": layer, "sublayer": sub, "step": step,
                        "param": None, "quantity": "median", "value": float(np.median(v))}
                       for (s, layer, sub, step), v in grouped.items()], "median")


def write_flow_figure(folder, path=None):
    """flow.png of RunFolder `folder` (or `path`): ‖∂L/∂x‖ at each block's input and the
    median update-to-weight ratio of its parameters, blocks against recorded steps; returns
    the path, None when no flow was recorded."""
    from ..instruments.plots import plot_flow_over_training

    rows = folder.records(FLOW_FILE)
    if not rows:
        return None
    path = folder.file(FLOW_FILE.replace(".jsonl", ".png")) if path is None else path
    plot_flow_over_training({"gradient norm at the block's input ‖∂L/∂x‖": flow_table(rows),
                             "update-to-weight ratio ‖Δw‖/‖w‖ (median)":
                             update_ratio_table(rows)},
                            f"gradient flow over training, {folder.path.name}", path=path)
    return path
