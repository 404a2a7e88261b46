"""Figures of the study tools. matplotlib (the `examples` extra) is imported when a figure is
made; figures are drawn on the Agg canvas without pyplot, so no display is needed.

Every function returns the matplotlib Figure, with a title (the figure's, over several
panels), labelled axes and a legend where a panel has more than one line, and saves it to
`path` when given one."""

import math

import numpy as np

LINE_STYLES = ("-", "--", ":", "-.")  # curves that coincide stay visible


def new_figure(rows=1, columns=1, panel_size=(5.0, 4.0)):
    """A Figure on the Agg canvas and its grid of axes (rows, columns)."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as error:
        raise ImportError("plots need matplotlib: pip install -e '.[examples]'") from error
    figure = Figure(figsize=(panel_size[0] * columns, panel_size[1] * rows),
                    layout="constrained")
    FigureCanvasAgg(figure)
    return figure, figure.subplots(rows, columns, squeeze=False)


def _finish(figure, path, suptitle=None):
    """Title a figure of several panels, and save it where asked."""
    if suptitle is not None:
        figure.suptitle(suptitle)
    if path is not None:
        figure.savefig(path, dpi=120)
    return figure


def _mean_std(values):
    """Mean and standard deviation over seeds of (n_seeds, n) or (n,) values."""
    values = np.atleast_2d(np.asarray(values, dtype=float))
    return values.mean(axis=0), values.std(axis=0)


def plot_depth_profiles(panels, title, xlabel="layer", ylabel="gradient norm", log_x=False,
                        log_y=True, path=None):
    """A quantity against layer (or depth), one line per configuration, mean with error bars
    of ± one standard deviation over seeds. `panels` = {panel title: {line label: (xs,
    values)}}, values (n_seeds, len(xs)); one panel each (e.g. encoder and decoder)."""
    figure, axes = new_figure(1, len(panels))
    for ax, (panel_title, lines) in zip(axes[0], panels.items()):
        for label, (xs, values) in lines.items():
            mean, std = _mean_std(values)
            ax.errorbar(xs, mean, yerr=std, marker="o", capsize=3, label=label)
        ax.set(title=panel_title, xlabel=xlabel, ylabel=ylabel,
               xscale="log" if log_x else "linear", yscale="log" if log_y else "linear")
        if log_x:  # the measured x values as ticks, not powers of ten
            ticks = sorted({x for xs, _ in lines.values() for x in xs})
            ax.set_xticks(ticks, [str(x) for x in ticks])
            ax.minorticks_off()
        if len(lines) > 1:
            ax.legend()
    return _finish(figure, path, suptitle=title)


def plot_curves(curves, title, xlabel, ylabel, log_y=False, path=None):
    """Curves y(x), one per entry of `curves` = {label: (xs, ys)}, ys (len(xs),) or (n_seeds,
    len(xs)): the mean, in a band of ± one standard deviation over seeds."""
    figure, axes = new_figure()
    ax = axes[0, 0]
    for number, (label, (xs, ys)) in enumerate(curves.items()):
        mean, std = _mean_std(ys)
        line, = ax.plot(xs, mean, label=label, linestyle=LINE_STYLES[number % len(LINE_STYLES)])
        ax.fill_between(xs, mean - std, mean + std, color=line.get_color(), alpha=0.2)
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel, yscale="log" if log_y else "linear")
    if len(curves) > 1:
        ax.legend()
    return _finish(figure, path)


def plot_training_curves(curves, title, ylabel="training loss", path=None):
    """Loss against step, one curve per configuration (see plot_curves)."""
    return plot_curves(curves, title, "step", ylabel, path=path)


def plot_attention(weights, query_tokens, key_tokens, title, panel_titles=None,
                   xlabel="attended to", ylabel="attending", path=None):
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


def plot_positional_encoding(table, title, path=None):
    """A positional-encoding table (positions, d_model) as a heat map."""
    figure, axes = new_figure(panel_size=(8.0, 4.0))
    ax = axes[0, 0]
    image = ax.imshow(table, cmap="RdBu", vmin=-1.0, vmax=1.0, aspect="auto",
                      interpolation="nearest")
    ax.set(title=title, xlabel="dimension", ylabel="position")
    ax.yaxis.get_major_locator().set_params(integer=True)
    figure.colorbar(image, ax=ax, label="value")
    return _finish(figure, path)
