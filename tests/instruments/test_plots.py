"""Plot helpers: each returns a Figure whose panels have titles and labelled axes (and a legend
where there is more than one line), saves a PNG when given a path, and names the `examples`
extra when matplotlib is missing."""

import sys

import numpy as np
import pytest

from transformer.instruments import (
    plot_attention,
    plot_curves,
    plot_depth_profiles,
    plot_positional_encoding,
    plot_training_curves,
)
from transformer.positional import sinusoidal_encoding

PNG_MAGIC = b"\x89PNG"


def panels_of(figure):
    """The axes that hold data (not colorbars, not switched-off grid cells)."""
    return [ax for ax in figure.axes if ax.axison and (ax.lines or ax.images or ax.collections)
            and ax.get_label() != "<colorbar>"]


def assert_labelled(figure, legends=True):
    panels = panels_of(figure)
    assert panels
    for ax in panels:
        assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel()
        if legends and len(ax.get_legend_handles_labels()[1]) > 1:
            assert ax.get_legend() is not None
    return panels


def test_depth_profiles(tmp_path):
    layers = [1, 2, 3]
    seeds = np.array([[1.0, 2.0, 3.0], [1.5, 2.5, 3.5]])
    figure = plot_depth_profiles(
        {"encoder": {"post-LN": (layers, seeds), "pre-LN": (layers, seeds / 2)},
         "decoder": {"post-LN": (layers, seeds)}},
        "gradient norm by layer", path=tmp_path / "depth.png")
    panels = assert_labelled(figure)
    assert [ax.get_title() for ax in panels] == ["encoder", "decoder"]
    assert figure.get_suptitle() == "gradient norm by layer"
    assert panels[0].get_legend() is not None and panels[1].get_legend() is None
    assert panels[0].get_xlabel() == "layer" and panels[0].get_yscale() == "log"
    assert (tmp_path / "depth.png").read_bytes()[:4] == PNG_MAGIC


def test_log_log_profiles_keep_the_depths_as_ticks():
    figure = plot_depth_profiles({"encoder": {"a": ([2, 4, 8], [1.0, 0.7, 0.5])}}, "slope",
                                 xlabel="depth", log_x=True)
    ax = assert_labelled(figure)[0]
    assert ax.get_xscale() == "log"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["2", "4", "8"]


def test_curves_draw_the_mean_over_seeds(tmp_path):
    steps = [1, 2, 3, 4]
    figure = plot_curves({"pre-LN": (steps, [[4.0, 3.0, 2.0, 1.0], [6.0, 5.0, 4.0, 3.0]]),
                          "post-LN": (steps, [5.0, 4.0, 3.0, 2.0])},
                         "loss", "step", "training loss", path=tmp_path / "curves.png")
    ax = assert_labelled(figure)[0]
    assert ax.get_title() == "loss" and ax.get_legend() is not None
    np.testing.assert_allclose(ax.lines[0].get_ydata(), [5.0, 4.0, 3.0, 2.0])
    assert (tmp_path / "curves.png").read_bytes()[:4] == PNG_MAGIC


def test_training_curves_are_loss_against_step():
    ax = assert_labelled(plot_training_curves({"run": ([1, 2], [3.0, 2.0])}, "training"))[0]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("step", "training loss")
    assert ax.get_legend() is None


def test_attention_maps_label_rows_and_columns_with_tokens(tmp_path):
    weights = np.random.default_rng(0).dirichlet(np.ones(4), size=(3, 2))  # (heads, q, k)
    figure = plot_attention(weights, ["el", "gato"], ["the", "cat", "sat", "."],
                            "cross-attention", path=tmp_path / "attention.png")
    panels = assert_labelled(figure)
    assert [ax.get_title() for ax in panels] == ["head 1", "head 2", "head 3"]
    assert figure.get_suptitle() == "cross-attention"
    assert [t.get_text() for t in panels[0].get_xticklabels()] == ["the", "cat", "sat", "."]
    assert [t.get_text() for t in panels[0].get_yticklabels()] == ["el", "gato"]
    assert (tmp_path / "attention.png").read_bytes()[:4] == PNG_MAGIC


def test_positional_encoding_heat_map(tmp_path):
    figure = plot_positional_encoding(sinusoidal_encoding(20, 16), "positions",
                                      path=tmp_path / "pe.png")
    ax = assert_labelled(figure)[0]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("dimension", "position")
    assert ax.images[0].get_array().shape == (20, 16)
    assert (tmp_path / "pe.png").read_bytes()[:4] == PNG_MAGIC


def test_missing_matplotlib_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r"\.\[examples\]"):
        plot_curves({"a": ([1], [1.0])}, "t", "x", "y")


def test_depth_profiles_draw_bounds_and_theory_on_one_y_axis():
    layers = [1, 2, 3]
    figure = plot_depth_profiles(
        {"encoder": {"post-LN": (layers, [1.0, 2.0, 3.0])},
         "decoder": {"post-LN": (layers, [1.0, 4.0, 9.0])}}, "bounded",
        bounds={"decoder": {"bound": 2.0, "_second": 5.0}},
        theory={"encoder": {"theory": (layers, [1.0, 1.5, 2.0])}})
    encoder, decoder = assert_labelled(figure)
    assert encoder.get_ylim() == decoder.get_ylim()  # shared
    assert [line.get_label() for line in decoder.get_lines() if line.get_label() == "bound"]
    assert sorted(t.get_text() for t in decoder.get_legend().get_texts()) == ["bound", "post-LN"]
    assert "theory" in [t.get_text() for t in encoder.get_legend().get_texts()]


def test_verdicts_one_row_per_check(tmp_path):
    from transformer.instruments.plots import plot_verdicts

    checks = [("E1", "post-LN dec", 3.0, (2.5, 3.5), 2.0, None, "held"),
              ("E2", "pre-LN enc", 0.1, (0.05, 0.15), -0.8, -0.2, "NOT held"),
              ("E9", "slope", 1.0, (1.0, 1.0), None, 0.6, "NOT held")]
    figure = plot_verdicts(checks, "all verdicts", path=tmp_path / "summary.png")
    assert len(figure.axes) == 3 and figure.get_suptitle() == "all verdicts"
    assert [ax.get_ylabel() for ax in figure.axes] == [
        "E1 post-LN dec: held", "E2 pre-LN enc: NOT held", "E9 slope: NOT held"]
    for ax, (*_, mean, (lower, upper), low, high, _) in zip(figure.axes, checks):
        left, right = ax.get_xlim()
        assert left < lower <= mean <= upper < right
        assert all(left < b < right for b in (low, high) if b is not None)
    assert (tmp_path / "summary.png").read_bytes()[:4] == PNG_MAGIC


def test_grid_figure_one_panel_per_depth_and_warmup():
    from transformer.instruments.plots import plot_grid

    rows = [{"depth": 6, "warmup": warmup, "lr": lr, "norm": norm, "seed": 0,
             "valid_loss": 3.0 + lr * 10 + (norm == "post-LN")}
            for warmup in (0, 100) for lr in (1e-3, 1e-2) for norm in ("post-LN", "pre-LN")]
    figure = plot_grid(rows, "grid")
    panels = assert_labelled(figure)
    assert [ax.get_title() for ax in panels] == ["6+6 layers, warmup 0",
                                                 "6+6 layers, warmup 100"]
    assert panels[0].get_xscale() == "log" and panels[0].get_ylim() == panels[1].get_ylim()
