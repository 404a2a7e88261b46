"""Figures of the study tools. matplotlib (the `examples` extra) is imported when a figure is
made; figures are drawn on the Agg canvas without pyplot, so no display is needed.

Every function returns the matplotlib Figure, with a title (the figure's, over several
panels), labelled axes and a legend where a panel has more than one line, and saves it to
`path` when given one."""

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from matplotlib.figure import Figure

Series = tuple[Sequence[float], Sequence[float] | np.ndarray]  # (xs, values), values per seed
Panels = dict[str, dict[str, Series]]  # {panel title: {line label: Series}}
LINE_STYLES = ("-", "--", ":", "-.")  # curves that coincide stay visible


def new_figure(rows: int = 1, columns: int = 1, panel_size: tuple[float, float] = (5.0, 4.0),
               sharey: bool = False) -> tuple["Figure", Any]:
    """A Figure on the Agg canvas and its grid of axes (rows, columns)."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as error:
        raise ImportError("plots need matplotlib: pip install -e '.[examples]'") from error
    figure = Figure(figsize=(panel_size[0] * columns, panel_size[1] * rows),
                    layout="constrained")
    FigureCanvasAgg(figure)
    return figure, figure.subplots(rows, columns, squeeze=False, sharey=sharey)


def _finish(figure, path, suptitle=None):
    """Title a figure of several panels, and save it where asked."""
    if suptitle is not None:
        figure.suptitle(suptitle)
    if path is not None:
        figure.savefig(path, dpi=120)
    return figure


def _mean_std(values):
    """Mean and sample standard deviation (0 for one seed) over seeds of (n_seeds, n) or (n,)
    values."""
    values = np.atleast_2d(np.asarray(values, dtype=float))
    return values.mean(axis=0), values.std(axis=0, ddof=1 if len(values) > 1 else 0)


def _draw_guides(ax, bounds, theory) -> None:
    """The judged bounds as horizontal lines {label: y} and the theory's curves {label: (xs,
    ys)}, drawn in grey so that the measured lines stand out."""
    for number, (label, y) in enumerate(bounds.items()):
        ax.axhline(y, color="0.45", linewidth=1, linestyle=LINE_STYLES[1 + number % 3],
                   label=label)
    for number, (label, (xs, ys)) in enumerate(theory.items()):
        ax.plot(xs, ys, color="0.2", linewidth=1.5, alpha=0.6,
                linestyle=(":", "-.")[number % 2], label=label)


def plot_depth_profiles(panels: Panels, title: str, xlabel: str = "layer",
                        ylabel: str = "gradient norm", log_x: bool = False, log_y: bool = True,
                        bounds: dict[str, dict[str, float]] | None = None,
                        theory: Panels | None = None, sharey: bool = True,
                        columns: int | None = None, path: str | Path | None = None) -> "Figure":
    """A quantity against layer (or depth), one line per configuration, mean with error bars
    of ± one sample standard deviation over seeds. `panels` = {panel title: {line label: (xs,
    values)}}, values (n_seeds, len(xs)); one panel each (e.g. encoder and decoder), on one
    y axis unless `sharey` is False. `bounds` = {panel title: {label: y}} draws the judged
    bounds, `theory` = {panel title: {label: (xs, ys)}} the theory's lines. The panels fill
    rows of `columns` (default: all in one row)."""
    columns = columns or len(panels)
    figure, axes = new_figure(math.ceil(len(panels) / columns), columns, sharey=sharey)
    for ax in axes.flat[len(panels):]:
        ax.set_axis_off()
    bounds, theory = bounds or {}, theory or {}
    for ax, (panel_title, lines) in zip(axes.flat, panels.items()):
        for label, (xs, values) in lines.items():
            mean, std = _mean_std(values)
            ax.errorbar(xs, mean, yerr=std, marker="o", capsize=3, label=label)
        _draw_guides(ax, bounds.get(panel_title, {}), theory.get(panel_title, {}))
        ax.set(title=panel_title, xlabel=xlabel, ylabel=ylabel,
               xscale="log" if log_x else "linear", yscale="log" if log_y else "linear")
        if log_x:  # the measured x values as ticks, not powers of ten
            ticks = sorted({x for xs, _ in lines.values() for x in xs})
            ax.set_xticks(ticks, [str(x) for x in ticks])
            ax.minorticks_off()
        if len(ax.get_legend_handles_labels()[1]) > 1:
            ax.legend(fontsize="small")
    return _finish(figure, path, suptitle=title)


def _draw_curves(ax, curves):
    """Curves {label: (xs, ys)} on `ax`: the mean over seeds in a band of ± one standard
    deviation."""
    for number, (label, (xs, ys)) in enumerate(curves.items()):
        mean, std = _mean_std(ys)
        line, = ax.plot(xs, mean, label=label, linestyle=LINE_STYLES[number % len(LINE_STYLES)])
        ax.fill_between(xs, mean - std, mean + std, color=line.get_color(), alpha=0.2)


def plot_curves(curves: dict[str, Series], title: str, xlabel: str, ylabel: str,
                log_y: bool = False, bounds: dict[str, float] | None = None,
                path: str | Path | None = None) -> "Figure":
    """Curves y(x), one per entry of `curves` = {label: (xs, ys)}, ys (len(xs),) or (n_seeds,
    len(xs)): the mean, in a band of ± one standard deviation over seeds; `bounds` = {label:
    y} draws horizontal lines."""
    figure, axes = new_figure(panel_size=(6.0, 4.0))
    ax = axes[0, 0]
    _draw_curves(ax, curves)
    _draw_guides(ax, bounds or {}, {})
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel, yscale="log" if log_y else "linear")
    if len(ax.get_legend_handles_labels()[1]) > 1:
        ax.legend(fontsize="small")
    return _finish(figure, path)


def plot_training_curves(curves: dict[str, Series] | None, title: str,
                         ylabel: str = "training loss", path: str | Path | None = None,
                         panels: Any = None,
                         log_y: Sequence[str] = ()) -> "Figure":
    """Loss against step, one curve per configuration (see plot_curves). With `panels` =
    {panel title: ({label: (xs, ys)}, ylabel)} instead, one panel each (two columns) against
    step, a run's figure (`curves` then unused); the panels named in `log_y` on a log
    scale."""
    if panels is None:
        if curves is None:
            raise ValueError("plot_training_curves: give the curves, or the panels")
        return plot_curves(curves, title, "step", ylabel, path=path)
    columns = min(len(panels), 2)
    figure, axes = new_figure(math.ceil(len(panels) / columns), columns, (5.0, 3.2))
    for ax in axes.flat[len(panels):]:
        ax.set_axis_off()
    for ax, (panel_title, (lines, panel_ylabel)) in zip(axes.flat, panels.items()):
        _draw_curves(ax, lines)
        ax.set(title=panel_title, xlabel="step", ylabel=panel_ylabel,
               yscale="log" if panel_title in log_y else "linear")
        if len(ax.get_legend_handles_labels()[1]) > 1:
            ax.legend(fontsize="small")
    return _finish(figure, path, suptitle=title)


def plot_flow_over_training(tables: Any, title: str, path: str | Path | None = None) -> "Figure":
    """Heat maps of residual blocks (rows) against recorded steps (columns), one panel per
    entry of `tables` = {panel title: (block labels, steps, values (blocks, steps))}, on a
    log colour scale (`monitoring.flow.flow_table` makes the tables)."""
    from matplotlib.colors import LogNorm

    figure, axes = new_figure(1, len(tables), (6.0, 1.2 + 0.3 * max(
        len(labels) for labels, _, _ in tables.values())))
    for ax, (panel_title, (labels, steps, values)) in zip(axes[0], tables.items()):
        finite = values[np.isfinite(values) & (values > 0)]
        norm = LogNorm(finite.min(), finite.max()) if finite.size and \
            finite.min() < finite.max() else None
        image = ax.imshow(np.where(values > 0, values, np.nan), aspect="auto", cmap="magma",
                          norm=norm, interpolation="nearest")
        ticks = np.unique(np.linspace(0, len(steps) - 1, min(len(steps), 8)).astype(int))
        ax.set_xticks(ticks, [str(steps[i]) for i in ticks])
        ax.set_yticks(range(len(labels)), labels, fontsize="small")
        ax.set(title=panel_title, xlabel="step")
        figure.colorbar(image, ax=ax, shrink=0.8)
    return _finish(figure, path, suptitle=title)


VERDICT_COLOURS = {"held": "tab:green", "NOT held": "tab:red", "inconclusive": "tab:orange",
                   "not testable": "0.5", "reported": "0.5"}


def plot_verdicts(checks: Sequence[tuple], title: str, path: str | Path | None = None
                  ) -> "Figure":
    """One summary of judged figures: `checks` = [(experiment id, label, mean, (interval low,
    interval high), low, high, verdict)], one row each, the measured mean as a dot (coloured by
    verdict) with its interval as the bar, beside the claimed range [low, high] as a grey band,
    every row on its own scale (each row's axis runs over its bounds and its interval)."""
    figure, axes = new_figure(max(1, len(checks)), 1, panel_size=(8.0, 0.42))
    if not checks:
        axes[0, 0].set_axis_off()
        axes[0, 0].text(0.5, 0.5, "no judged check", ha="center", va="center")
    for ax, (experiment, label, mean, (lower, upper), low, high, verdict) in zip(axes[:, 0],
                                                                                  checks):
        finite = [v for v in (lower, upper, low, high) if v is not None]
        left, right = min(finite), max(finite)
        margin = 0.15 * (right - left) or 0.5 * (abs(right) or 1.0)
        left, right = left - margin, right + margin
        ax.axvspan(left if low is None else low, right if high is None else high,
                   color="0.88")
        ax.errorbar([mean], [0], xerr=[[mean - lower], [upper - mean]], marker="o",
                    color=VERDICT_COLOURS[verdict])
        ax.set_xlim(left, right)
        ax.set_yticks([])
        ax.tick_params(axis="x", labelsize="x-small", pad=1)
        ax.set_ylabel(f"{experiment} {label}: {verdict}", rotation=0, ha="right",
                      va="center", fontsize="small", color=VERDICT_COLOURS[verdict])
    return _finish(figure, path, suptitle=title)


def plot_grid(rows: Sequence[dict], title: str, path: str | Path | None = None) -> "Figure":
    """The grid runner's figure: final validation loss against the learning rate (log x), one
    panel per (depth, warmup), one line per norm placement (and init, where not the default),
    all panels on one y axis, a diverged run marked x; `rows` the grid's CSV rows (dicts with
    depth, warmup, lr, norm, seed, valid_loss, optionally init and diverged)."""
    panel_keys = sorted({(row["depth"], row["warmup"]) for row in rows})
    figure, axes = new_figure(1, len(panel_keys), panel_size=(4.5, 4.0), sharey=True)
    for ax, (depth, warmup) in zip(axes[0], panel_keys):
        inside = [row for row in rows if (row["depth"], row["warmup"]) == (depth, warmup)]
        def arm(row):
            init = row.get("init", "xavier")
            return row["norm"] if init == "xavier" else f"{row['norm']}, {init}"

        for number, label in enumerate(dict.fromkeys(arm(row) for row in inside)):
            mine = [row for row in inside if arm(row) == label]
            lrs = sorted({row["lr"] for row in mine})
            values = [[row["valid_loss"] for row in mine if row["lr"] == lr] for lr in lrs]
            mean = [np.mean(v) for v in values]
            std = [np.std(v) for v in values]
            ax.errorbar(lrs, mean, yerr=std, marker="o", capsize=3, label=label,
                        linestyle=LINE_STYLES[number % len(LINE_STYLES)])
            bad = [row for row in mine if row.get("diverged")]
            if bad:
                ax.scatter([row["lr"] for row in bad], [row["valid_loss"] for row in bad],
                           marker="x", color="black", zorder=5)
        ax.set(title=f"{depth}+{depth} layers, warmup {warmup}", xlabel="peak learning rate",
               ylabel="validation loss", xscale="log")
        if len(ax.get_legend_handles_labels()[1]) > 1:
            ax.legend(fontsize="small")
    return _finish(figure, path, suptitle=title)


def plot_attention(weights: Any, query_tokens: Sequence[str], key_tokens: Sequence[str],
                   title: str, panel_titles: Sequence[str] | None = None,
                   xlabel: str = "attended to", ylabel: str = "attending",
                   path: str | Path | None = None) -> "Figure":
    """Heat maps of attention weights (n_panels, q_len, k_len), one panel per head by default,
    the query tokens labelling the rows and the key tokens the columns; one colour scale, from
    0 to the largest weight, for all panels."""
    weights = np.asarray(weights)
    panel_titles = panel_titles or [f"head {i + 1}" for i in range(len(weights))]
    columns = min(len(weights), 4)
    rows = math.ceil(len(weights) / columns)
    size = (1.5 + 0.35 * len(key_tokens), 1.5 + 0.35 * len(query_tokens))
    figure, axes = new_figure(rows, columns, size)
    for ax in axes.flat[len(weights):]:
        ax.set_axis_off()
    for ax, panel, panel_title in zip(axes.flat, weights, panel_titles):
        image = ax.imshow(panel, cmap="viridis", vmin=0.0, vmax=weights.max(), aspect="auto")
        ax.set_xticks(range(len(key_tokens)), key_tokens, rotation=90)
        ax.set_yticks(range(len(query_tokens)), query_tokens)
        ax.set(title=panel_title, xlabel=xlabel, ylabel=ylabel)
    figure.colorbar(image, ax=axes, label="attention weight", shrink=0.8)
    return _finish(figure, path, suptitle=title)


def plot_positional_encoding(table: Any, title: str, path: str | Path | None = None
                             ) -> "Figure":
    """A positional-encoding table (positions, d_model) as a heat map."""
    figure, axes = new_figure(panel_size=(8.0, 4.0))
    ax = axes[0, 0]
    image = ax.imshow(table, cmap="RdBu", vmin=-1.0, vmax=1.0, aspect="auto",
                      interpolation="nearest")
    ax.set(title=title, xlabel="dimension", ylabel="position")
    ax.yaxis.get_major_locator().set_params(integer=True)
    figure.colorbar(image, ax=ax, label="value")
    return _finish(figure, path)
