"""The walkthrough's figures: each function draws one from numbers a section computed, saves it
into the subject's output folder and returns its file name.

matplotlib (the `examples` extra) is imported when a figure is drawn, on the Agg canvas."""

import math

import numpy as np

from ..instruments.plots import (
    new_figure,
    plot_attention,
    plot_curves,
    plot_depth_profiles,
    plot_positional_encoding,
)
from .markdown import word_labels


def save(subject, figure, name) -> str:
    """Save a figure as `out/name` at the subject's resolution, as a 256-colour PNG (a third
    of the size of a full-colour one, no visible change for these plots); returns the name."""
    path = subject.out / name
    figure.savefig(path, dpi=subject.dpi)
    try:
        from PIL import Image  # Pillow: a dependency of matplotlib
    except ImportError:
        return name
    with Image.open(path) as image:
        palette = image.convert("RGB").quantize(colors=256)
    palette.save(path, optimize=True)
    return name


def outline_row(ax, row, columns, color="red") -> None:
    """A rectangle around row `row` of a heat map of `columns` columns."""
    from matplotlib.patches import Rectangle

    ax.add_patch(Rectangle((-0.5, row - 0.5), columns, 1, fill=False, edgecolor=color,
                           linewidth=2))


def matrices(subject, arrays, titles, name, suptitle, row_labels=None, col_labels=None,
             highlight_row=None, columns=None) -> str:
    """Heat maps of several matrices (one panel each, numbers in the cells when small) on a
    signed colour scale centred on 0. Saves `name`; returns it."""
    count = len(arrays)
    columns = columns or min(count, 4)
    figure, axes = new_figure(math.ceil(count / columns), columns, (3.0, 2.7))
    for ax in axes.flat[count:]:
        ax.set_axis_off()
    for ax, matrix, title in zip(axes.flat, arrays, titles):
        matrix = np.atleast_2d(np.asarray(matrix, dtype=float))
        limit = float(np.abs(matrix).max()) or 1.0
        image = ax.imshow(matrix, cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="auto",
                          interpolation="nearest")
        if matrix.shape[1] <= 8 and matrix.size <= 64:  # small enough to print the numbers
            for (i, j), value in np.ndenumerate(matrix):
                ax.text(j, i, f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}",
                        ha="center", va="center", fontsize=6.5,
                        color="white" if abs(value) > 0.6 * limit else "black")
        ax.set_title(title, fontsize=9)
        if row_labels is not None and len(row_labels) == matrix.shape[0]:
            ax.set_yticks(range(matrix.shape[0]), row_labels, fontsize=8)
        else:
            ax.set_yticks([])
        if col_labels is not None and len(col_labels) == matrix.shape[1]:
            ax.set_xticks(range(matrix.shape[1]), col_labels, rotation=90, fontsize=8)
        elif matrix.shape[1] > 16:
            ax.tick_params(labelsize=7)
        else:
            ax.set_xticks([])
        if highlight_row is not None:
            outline_row(ax, highlight_row, matrix.shape[1])
        figure.colorbar(image, ax=ax, shrink=0.8)
    figure.suptitle(suptitle)
    return save(subject, figure, name)


def word_vectors(subject, tokens, scaled, positions, summed) -> str:
    """Section 2: the scaled embeddings, the position vectors and their sum, one row a word."""
    figure, axes = new_figure(3, 1, (7.0, 1.1 + 0.28 * len(tokens)))
    for ax, (matrix, title) in zip(axes[:, 0], (
            (scaled, "embedding × √d_model"), (positions, "positional encoding"),
            (summed, "sum: what the first encoder layer receives"))):
        limit = float(np.abs(matrix).max()) or 1.0
        image = ax.imshow(matrix, cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="auto",
                          interpolation="nearest")
        ax.set_yticks(range(len(tokens)), tokens, fontsize=8)
        ax.set_title(title, fontsize=9)
        figure.colorbar(image, ax=ax)
    axes[-1, 0].set_xlabel("dimension")
    return save(subject, figure, "s2_word_vectors.png")


def attention_of_one_word(subject, maps, tokens, word, panel_titles) -> str:
    """Section 5: every encoder head's attention map (heads, len, len) over `tokens`, the row
    of word number `word` outlined."""
    labels = word_labels(tokens)
    figure = plot_attention(maps, labels, labels, "encoder self-attention, every layer and head "
                            f"(the row of '{tokens[word]}' outlined)", panel_titles=panel_titles)
    for ax in figure.axes[:len(maps)]:
        outline_row(ax, word, len(tokens))
    return save(subject, figure, "s5_attention_of_it.png")


def positional_tables(subject, tables, rows, d_model):
    """Section 7: heat maps of the first `rows` positions of each {layout: table}."""
    names = []
    for layout, table in tables.items():
        figure = plot_positional_encoding(
            table[:rows], f"first {rows} positions, {layout} sin/cos (d_model {d_model})")
        names.append(save(subject, figure, f"s7_positions_{layout}.png"))
    return names


def position_dot_products(subject, offsets, dots) -> str:
    """Section 7: PE[pos]·PE[pos+k] against k, one curve per {pos: values}."""
    figure = plot_curves({f"pos = {s}": (offsets, v) for s, v in dots.items()},
                         "PE[pos]·PE[pos+k] depends on the offset k only", "offset k",
                         "PE[pos]·PE[pos+k]")
    return save(subject, figure, "s7_position_dot_products.png")


def residual_vectors(subject, vectors, names, word) -> str:
    """Section 8: bar charts of the block's {key: vector} of `word`, titled by `names`."""
    figure, axes = new_figure(len(vectors), 1, (7.0, 1.3))
    limit = max(float(np.abs(v).max()) for v in vectors.values())
    for ax, (key, v) in zip(axes[:, 0], vectors.items()):
        ax.bar(np.arange(len(v)), v, width=0.8, color=np.where(v >= 0, "tab:red", "tab:blue"))
        ax.set_ylim(-1.05 * limit, 1.05 * limit)
        ax.set_title(f"{names[key]}: mean {v.mean():.2f}, std {v.std():.2f}", fontsize=9)
        ax.tick_params(labelsize=7)
    axes[-1, 0].set_xlabel("dimension")
    figure.suptitle(f"encoder layer 1, self-attention block: the vectors of '{word}'",
                    fontsize=10)
    return save(subject, figure, "s8_residual_vectors.png")


def gradient_paths(subject, panels, layers) -> str:
    """Section 8: the gradient norms through skip and branch, {stack: {line: (layers,
    norms)}}, per layer 1..`layers` (a log scale when every norm is positive)."""
    positive = all(v > 0 for lines in panels.values() for _, ys in lines.values() for v in ys)
    figure = plot_depth_profiles(panels, "gradient norm through the skip path and the branch",
                                 log_y=positive)
    for ax in figure.axes:
        if ax.get_xlabel() == "layer":
            ax.set_xticks(list(range(1, layers + 1)))
    return save(subject, figure, "s8_gradient_paths.png")


def cross_attention(subject, maps, produced, source, panel_titles) -> str:
    """Section 9: cross-attention (panels, steps, src_len) at each decoding step."""
    figure = plot_attention(maps, produced, source, "cross-attention at each decoding step",
                            panel_titles=panel_titles, xlabel="source word",
                            ylabel="word produced at that step")
    return save(subject, figure, "s9_cross_attention.png")
