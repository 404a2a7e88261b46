"""The report page of a run: one HTML file that works offline (Plotly's JavaScript inlined, no
CDN, no server) with the run's held-out results (every split, every construction), every
curve it logged (`curves.PANELS`), its sample translations over training, its gradient flow
when recorded, an attention view of chosen sentences (layer and head choosers, the head
average, the source and target tokens; pointing at a token shows what it attends to, with
the weights; every head of the layer in a grid) and its whole configuration.

Plotly (the `examples` extra) draws the curves and heat maps: zoom, hover values and
resizing come with it; the page's own script only wires the choosers and the tokens to the
attention heat map."""

import html
import json
from pathlib import Path
from string import Template
from typing import Any

import numpy as np

from .attention import KINDS
from .curves import LOG_PANELS, run_panels
from .flow import FLOW_FILE, flow_table, update_ratio_table
from .samples import read_samples

REPORT_FILE = "report.html"
TEMPLATE = Path(__file__).with_name("report.template.html")
KIND_NAMES = {"cross_attention": "cross-attention (decoder -> source)",
              "encoder_attention": "encoder self-attention",
              "decoder_attention": "decoder self-attention"}


def plotly() -> Any:
    """The plotly package; ImportError naming the extra without it."""
    try:
        import plotly
        import plotly.graph_objects  # noqa: F401
        import plotly.offline  # noqa: F401
        import plotly.subplots  # noqa: F401
    except ImportError as error:
        raise ImportError("the report page needs plotly: pip install -e '.[examples]'"
                          ) from error
    return plotly


def write_report(folder, views, path=None) -> Path:
    """Write the report page of RunFolder `folder` to `path` (default: its report.html), the
    attention view showing `views` (`attention.attention_views`); returns the path."""
    plotly_module = plotly()
    path = Path(path) if path is not None else folder.file(REPORT_FILE)
    body = "\n".join([summary_section(folder), results_section(folder),
                      curves_section(folder, plotly_module), samples_section(folder),
                      flow_section(folder, plotly_module), attention_section(views),
                      configuration_section(folder)])
    page = Template(TEMPLATE.read_text(encoding="utf-8")).substitute(
        title=html.escape(f"Training run {folder.path.resolve().name}"), body=body,
        plotly=plotly_module.offline.get_plotlyjs(),
        attention=json.dumps([page_view(view) for view in views]).replace("</", "<\\/"))
    path.write_text(page, encoding="utf-8")
    return path


def page_view(view) -> dict[str, Any]:
    """A view as the page's script reads it: nested lists of the weights as float32 stores
    them (every digit kept, so the page shows the model's numbers)."""
    return {**{key: view[key] for key in ("sentence", "translation", "encoder_tokens",
                                          "decoder_tokens")},
            **{kind: [layer.astype(float).tolist() for layer in view[kind]] for kind in KINDS}}


HELD_OUT = ("test", "compositional", "cross_construction", "long")
SCORES = {"exact_match": "exact match", "bleu": "BLEU", "chrf": "chrF",
          "token_accuracy": "token accuracy", "max_length_ratio": "longest output / reference",
          "unknown_rate": "unknown tokens"}


def summary_section(folder) -> str:
    config = folder.read_json("config.json")
    model, training = config.get("model", {}), config.get("training", {})
    metrics = final_metrics(folder)
    facts = [f"task {config.get('task', {}).get('name')}",
             f"d_model {model.get('d_model')}, {model.get('n_heads')} heads, "
             f"{model.get('n_encoder_layers')}+{model.get('n_decoder_layers')} layers",
             f"{training.get('steps')} steps"]
    if "test_exact_match" in metrics:
        facts.append(f"test exact match {metrics['test_exact_match']:.4f}, BLEU "
                     f"{metrics['test_bleu']:.2f} (best checkpoint, step "
                     f"{metrics.get('best_step')})")
    return f"<p>{html.escape('; '.join(facts))}</p>"


def final_metrics(folder) -> dict[str, Any]:
    return folder.read_json("metrics.json") if folder.file("metrics.json").exists() else {}


def results_section(folder) -> str:
    """metrics.json: every held-out split's scores, then each construction's exact match."""
    metrics = final_metrics(folder)
    splits = [split for split in HELD_OUT if f"{split}_exact_match" in metrics]
    if not splits:
        return ("<h2>Held-out results</h2><p class='missing'>metrics.json is not written yet: "
                "the run writes it when training ends (best.npz on every held-out split).</p>")
    head = "<tr><th>split</th>" + "".join(f"<th>{html.escape(n)}</th>"
                                          for n in SCORES.values()) + "</tr>"
    rows = "".join(f"<tr><td>{split.replace('_', ' ')}</td>" + "".join(
        f"<td>{_number(metrics.get(f'{split}_{key}'))}</td>" for key in SCORES) + "</tr>"
        for split in splits)
    constructions = {**metrics.get("phenomena", {}),
                     **metrics.get("cross_construction_pairs", {})}
    per_construction = "".join(f"<tr><td>{html.escape(name)}</td><td>{_number(value)}</td>"
                               "</tr>" for name, value in constructions.items())
    long_errors = "".join(
        f"<li>{label}: {metrics[key]}</li>" for key, label in (
            ("long_agreement_errors", "long sentences wrong by an agreement error only"),
            ("long_repeated_clauses", "long sentences with a repeated clause"))
        if key in metrics)
    return ("<h2>Held-out results</h2><p>The best checkpoint (step "
            f"{metrics.get('best_step')}) on every held-out split.</p>"
            f"<table class='results' id='held-out'>{head}{rows}</table>"
            + (f"<ul>{long_errors}</ul>" if long_errors else "")
            + ("<h3>Per construction (exact match)</h3><table class='results' "
               f"id='per-construction'><tr><th>construction</th><th>exact match</th></tr>"
               f"{per_construction}</table>" if per_construction else ""))


def _number(value) -> str:
    if value is None:
        return "&ndash;"
    return f"{value:.4f}" if isinstance(value, float) else html.escape(str(value))


def configuration_section(folder) -> str:
    """config.json whole: one row per setting, dotted by section."""
    rows = "".join(f"<tr><td>{html.escape(name)}</td><td>{html.escape(json.dumps(value))}</td>"
                   f"</tr>" for name, value in _flattened(folder.read_json("config.json")))
    return ("<h2>Configuration</h2><details><summary>config.json, every setting</summary>"
            f"<table class='results' id='configuration'>{rows}</table></details>")


def _flattened(value, prefix="") -> list[tuple[str, Any]]:
    if isinstance(value, dict) and value:
        return [pair for key, item in value.items()
                for pair in _flattened(item, f"{prefix}{key}.")]
    return [(prefix.rstrip("."), value)]


def figure_html(figure, div_id) -> str:
    return figure.to_html(full_html=False, include_plotlyjs=False, div_id=div_id,
                          config={"displaylogo": False})


def curves_section(folder, plotly_module) -> str:
    panels = run_panels(folder.metrics_records())
    if not panels:
        return "<h2>Curves</h2><p class='missing'>metrics.jsonl holds no record yet.</p>"
    go, subplots = plotly_module.graph_objects, plotly_module.subplots
    rows = (len(panels) + 1) // 2
    figure = subplots.make_subplots(rows=rows, cols=2, subplot_titles=list(panels),
                                    vertical_spacing=0.3 / rows)
    for number, (title, (lines, ylabel)) in enumerate(panels.items()):
        row, col = number // 2 + 1, number % 2 + 1
        legend = "legend" if number == 0 else f"legend{number + 1}"  # each panel its own
        for label, (steps, values) in lines.items():
            figure.add_trace(go.Scatter(x=steps, y=values, name=label, mode="lines+markers",
                                        marker={"size": 4}, legend=legend), row=row, col=col)
        figure.update_xaxes(title_text="step", row=row, col=col)
        figure.update_yaxes(title_text=ylabel, row=row, col=col,
                            type="log" if title in LOG_PANELS else "linear")
        x_axis, y_axis = figure.get_subplot(row, col).xaxis, figure.get_subplot(row, col).yaxis
        figure.update_layout({legend: {  # in the panel's upper right corner
            "x": x_axis.domain[1], "y": y_axis.domain[1], "xanchor": "right",
            "yanchor": "top", "bgcolor": "rgba(255, 255, 255, 0.7)", "font": {"size": 10}}})
    figure.update_layout(height=380 * rows, margin={"t": 40})
    return "<h2>Curves</h2>" + figure_html(figure, "curves")


def samples_section(folder) -> str:
    samples = read_samples(folder)
    if not samples:
        return ("<h2>Sample translations</h2><p class='missing'>This run recorded no sample "
                "translations: train with <code>--samples N</code> (N validation sentences "
                "translated at each validation).</p>")
    first = next(iter(samples.values()))
    head = "".join(f"<th>{html.escape(s['source'])}<br><small>reference: "
                   f"{html.escape(s['reference'])}</small></th>" for s in first)
    rows = []
    for step, records in samples.items():
        cells = "".join(
            f"<td class='{'right' if s['output'] == s['reference'] else 'wrong'}'>"
            f"{html.escape(s['output']) or '<i>(empty)</i>'}</td>" for s in records)
        rows.append(f"<tr><td>{step}</td>{cells}</tr>")
    return ("<h2>Sample translations</h2><p>At each validation, with the weights validation "
            "judges (green: equal to the reference).</p><table class='samples'><tr><th>step"
            f"</th>{head}</tr>{''.join(rows)}</table>")


def flow_section(folder, plotly_module) -> str:
    rows = folder.records(FLOW_FILE)
    if not rows:
        return ("<h2>Gradient flow</h2><p class='missing'>This run recorded no gradient flow: "
                "train it with <code>--record-flow N</code> (the recorder every N steps; "
                "<code>--resume --record-flow N</code> starts recording in a run under "
                "way).</p>")
    go, subplots = plotly_module.graph_objects, plotly_module.subplots
    tables = {"gradient norm at the block's input ‖∂L/∂x‖ (log10)": flow_table(rows),
              "update-to-weight ratio ‖Δw‖/‖w‖, median (log10)": update_ratio_table(rows)}
    figure = subplots.make_subplots(rows=1, cols=2, subplot_titles=list(tables),
                                    shared_yaxes=True, horizontal_spacing=0.12)
    for col, (labels, steps, values) in enumerate(tables.values(), start=1):
        logged = np.where(values > 0, np.log10(np.where(values > 0, values, 1.0)), np.nan)
        figure.add_trace(go.Heatmap(z=logged.tolist(), x=steps, y=labels, colorscale="Magma",
                                    colorbar={"x": 0.44 if col == 1 else 1.0, "len": 0.9},
                                    hovertemplate="%{y}, step %{x}: 10^%{z:.3f}"
                                                  "<extra></extra>"), row=1, col=col)
        figure.update_xaxes(title_text="step", row=1, col=col)
    figure.update_yaxes(autorange="reversed")
    figure.update_yaxes(title_text="residual block", row=1, col=1)
    figure.update_layout(height=160 + 28 * len(tables[next(iter(tables))][0]),
                         margin={"t": 40, "l": 160})
    return ("<h2>Gradient flow</h2><p>Per residual block (docs/conventions.md, "
            "\"Gradient-flow records\"), at every recorded step.</p>"
            + figure_html(figure, "flow"))


def attention_section(views) -> str:
    if not views:
        return "<h2>Attention</h2><p class='missing'>No sentence was given.</p>"
    kinds = "".join(f"<option value='{kind}'>{name}</option>"
                    for kind, name in KIND_NAMES.items())
    return ("<h2>Attention</h2><p>Each sentence translated greedily by the best checkpoint, "
            "then read once more with every attention weight recorded. Point at a token of "
            "the attending side (or click a row of the heat map) to see its weights; the "
            "head chooser also offers the average of the layer's heads.</p>"
            "<div class='controls'><label>sentence <select id='sentence'></select></label>"
            f"<label>attention <select id='kind'>{kinds}</select></label>"
            "<label><select id='layer'></select></label>"
            "<label><select id='head'></select></label></div>"
            "<div>attending: <span id='queries' class='tokens'></span></div>"
            "<div>what <b id='pointed'></b> attends to: <span id='keys' class='tokens'>"
            "</span></div><div id='attention-heatmap'></div>"
            "<h3>Every head of the layer, and their average</h3><div id='attention-grid'>"
            "</div>")
