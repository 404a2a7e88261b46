// The live Illustrated Transformer's page: draws what `explain()` computed (its JSON,
// docs/illustrated/data.md) as the nine sections of the walkthrough, vectors as rows of
// coloured cells. One renderer for both pages: the app's page asks the server (POST
// /explain), the exported page reads its numbers from <script id="explain-data">.
// Plain DOM and SVG: no library, nothing fetched but /explain.
"use strict";

(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const MAX_CELL = 40;        // widest cell, px
  const MIN_CELL = 3;         // narrowest cell, px (a 512-wide vector still fits)
  const NUMBERS_FROM = 34;    // cells at least this wide carry their number
  const ROW_LABEL_CAP = 150;  // px for the labels left of a grid, at most

  // ----- small helpers ------------------------------------------------------------------

  function element(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (name === "text") node.textContent = value;
      else if (name === "className") node.className = value;
      else node.setAttribute(name, value === true ? "" : value);
    }
    for (const child of children) {
      if (child !== null && child !== undefined) {
        node.append(child);
      }
    }
    return node;
  }

  function svgElement(tag, attributes) {
    const node = document.createElementNS(SVG, tag);
    for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, value);
    return node;
  }

  // A number as the JSON holds it (4 significant digits), or "hidden" for a masked cell.
  function full(value) {
    if (value === null) return "hidden (masked)";
    return typeof value === "number" ? String(value) : value;
  }

  // A number short enough for a cell.
  function short(value) {
    if (value === null) return "";
    const size = Math.abs(value);
    if (size !== 0 && (size < 0.005 || size >= 1000)) return value.toExponential(0);
    return size >= 10 ? value.toFixed(0) : value.toFixed(2);
  }

  // The entry of `nested` at `indices`, each clamped to what is there.
  function pick(nested, indices) {
    let value = nested;
    for (const index of indices) value = value[Math.min(index, value.length - 1)];
    return value;
  }

  // The numbers of nested lists (with `hidden`, the hidden cells too).
  function flatten(values, out, hidden) {
    if (Array.isArray(values)) values.forEach((v) => flatten(v, out, hidden));
    else if (typeof values === "number" || hidden) out.push(values);
    return out;
  }

  // ----- colours ------------------------------------------------------------------------

  const NEGATIVE = [49, 99, 166];   // blue
  const POSITIVE = [196, 78, 52];   // brick red
  const PROBABLE = [46, 118, 84];   // green

  function mix(to, t) {
    const c = to.map((channel) => Math.round(255 + (channel - 255) * t));
    return `rgb(${c[0]},${c[1]},${c[2]})`;
  }

  // value -> [fill, whether its text should be light]; `range` the largest magnitude drawn.
  function colour(value, scale, range) {
    if (scale === "probability") {
      const t = Math.max(0, Math.min(1, value));
      return [mix(PROBABLE, t), t > 0.55];
    }
    const t = range > 0 ? Math.max(-1, Math.min(1, value / range)) : 0;
    return [mix(t < 0 ? NEGATIVE : POSITIVE, Math.abs(t)), Math.abs(t) > 0.55];
  }

  function legend(scale, range, hidden, layout) {
    const stops = scale === "probability" ? [0, 0.5, 1] : [-range, 0, range];
    const box = element("span", {className: "legend"});
    if (layout) box.append(element("span", {className: "layout", text: layout}));
    box.append(scale === "probability" ? "probability " : "value ");
    for (const stop of stops) {
      const [fill, light] = colour(stop, scale, range);
      const swatch = element("span", {className: "swatch" + (light ? " light" : ""),
                                      text: short(stop)});
      swatch.style.background = fill;
      box.append(swatch);
    }
    if (hidden) box.append(element("span", {className: "swatch hidden-swatch", text: "hidden"}));
    return box;
  }

  // ----- cells: vectors and grids ----------------------------------------------------------

  // What the reader is looking at: "layer 2, head 1, word cat"; `labels` the section's.
  function chosenText(panel, state, labels) {
    return panel.choose.map((axis) => {
      const label = String(labels[axis][state[axis]] ?? state[axis] + 1);
      return label.includes(axis) ? label : `${axis} ${label}`;
    }).join(", ");
  }

  // The part of a cells panel the section's choices pick.
  function shownPart(panel, state) {
    return pick(panel.values, (panel.choose || []).map((axis) => state[axis] || 0));
  }

  // The largest magnitude a panel's colours reach: its drawn part's, or, for panels sharing a
  // `range` (data.md), the largest of what all of them draw now, so they compare.
  function colourRange(panel, panels, state) {
    const sharing = panel.range ? panels.filter((p) => p.kind === "cells" && p.range &&
      p.range.join() === panel.range.join()) : [panel];
    return Math.max(0, ...sharing.flatMap((p) => flatten(shownPart(p, state), []))
      .map(Math.abs));
  }

  function drawCells(panel, state, range, width, readout, choosers) {
    const shown = shownPart(panel, state);
    const rest = panel.axes.slice((panel.choose || []).length);
    const numbers = flatten(shown, []);
    const holder = element("div", {className: "cells"});
    if (rest.length > 2) {  // the schema draws one axis (a vector) or two (a grid)
      holder.append(element("p", {className: "error", text: `${panel.id}: ${rest.length} axes ` +
        `left to draw (${rest.join(", ")}); a panel leaves one or two`}));
      return holder;
    }
    holder.append(grid(panel, rest, shown, range, width, readout, choosers));
    const layout = rest.length === 2 ? `rows: ${rest[0]}, columns: ${rest[1]}`
      : rest.length === 1 ? `cells: ${rest[0]}` : "";
    holder.append(legend(panel.scale, range, numbers.length < flatten(shown, [], true).length,
                         layout));
    return holder;
  }

  // One SVG: a single cell (no axis left), a row of cells (one axis: a vector), or a grid
  // (two: rows by columns).
  // A label of an axis the section has a chooser for picks its index there when clicked.
  function choosing(text, axis, index, choosers) {
    if (!(axis in choosers)) return text;
    text.classList.add("choosable");
    text.dataset.axis = axis;
    text.dataset.index = index;
    return text;
  }

  function grid(panel, rest, shown, range, width, readout, choosers) {
    const rows = rest.length === 2 ? shown : [rest.length === 1 ? shown : [shown]];
    const rowAxis = rest.length === 2 ? rest[0] : null;
    const columnAxis = rest.length ? rest[rest.length - 1] : null;
    const rowLabels = rowAxis ? (panel.labels[rowAxis] || rows.map((_, i) => String(i))) : [];
    const columnLabels = columnAxis ? (panel.labels[columnAxis] || []) : [];
    const columns = rows[0] ? rows[0].length : 0;
    const labelWidth = rowAxis ? Math.min(ROW_LABEL_CAP,
      8 + 7 * Math.max(...rowLabels.map((l) => String(l).length))) : 10;
    const cell = Math.max(MIN_CELL, Math.min(MAX_CELL, Math.floor((width - labelWidth) / columns)));
    const height = Math.max(rows.length === 1 ? 22 : 18, Math.min(cell, 32));
    const words = columnLabels.some((l) => !/^-?\d+$/.test(String(l)));
    const tall = words && cell >= 12 ? Math.min(90, 6 + 6 * Math.max(...columnLabels.map(
      (l) => String(l).length))) : (columnAxis ? 14 : 0);
    const svg = svgElement("svg", {width: labelWidth + cell * columns + 2 + (words ? tall : 0),
                                   height: tall + height * rows.length + 2,
                                   role: "img", class: "grid", "aria-label": panel.title});
    const widest = Math.max(1, ...columnLabels.map((l) => String(l).length));
    const every = Math.max(1, Math.ceil((7 * widest + 8) / cell));  // numbers that fit
    columnLabels.forEach((label, c) => {
      if (!words && c % every !== 0) return;
      const x = labelWidth + c * cell + cell / 2;
      const text = svgElement("text", words
        ? {x, y: tall - 4, transform: `rotate(-40 ${x} ${tall - 4})`, class: "column-label"}
        : {x, y: tall - 3, "text-anchor": "middle", class: "column-label"});
      text.textContent = label;
      svg.append(choosing(text, columnAxis, c, choosers));
    });
    rows.forEach((row, r) => {
      const y = tall + r * height;
      if (rowAxis) {
        const text = svgElement("text", {x: labelWidth - 6, y: y + height / 2 + 4,
                                         "text-anchor": "end", class: "row-label"});
        text.textContent = rowLabels[r];
        svg.append(choosing(text, rowAxis, r, choosers));
      }
      row.forEach((value, c) => {
        const x = labelWidth + c * cell;
        const rect = svgElement("rect", {x, y, width: cell, height, "data-v": full(value),
                                         "data-row": r, "data-column": c});
        if (value === null) {
          rect.setAttribute("class", "hidden-cell");
        } else {
          const [fill, light] = colour(value, panel.scale, range);
          rect.setAttribute("fill", fill);
          if (cell >= NUMBERS_FROM) {
            const text = svgElement("text", {x: x + cell / 2, y: y + height / 2 + 3,
                                             "text-anchor": "middle",
                                             class: "cell-number" + (light ? " light" : "")});
            text.textContent = short(value);
            svg.append(rect, text);
            return;
          }
        }
        svg.append(rect);
      });
    });
    svg.addEventListener("mouseover", (event) => {
      const rect = event.target.closest ? event.target.closest("rect") : null;
      if (!rect) return;
      const r = Number(rect.dataset.row), c = Number(rect.dataset.column);
      const where = [rowAxis ? `${rowAxis} ${rowLabels[r]}` : null,
                     columnAxis ? `${columnAxis} ${columnLabels[c] ?? c}` : null]
        .filter(Boolean).join(", ");
      readout.textContent = `${where}: ${rect.dataset.v}`;
    });
    return svg;
  }

  // ----- tables, texts, code -------------------------------------------------------------

  // A table; with `choose`, `rows` and `highlight` nested by the chosen indices.
  function drawTable(panel, state) {
    const indices = (panel.choose || []).map((axis) => state[axis] || 0);
    const rows = pick(panel.rows, indices);
    const highlight = new Set(pick(panel.highlight || [], indices));
    const head = element("tr", {}, ...panel.columns.map((c) => element("th", {text: c})));
    const body = rows.map((row, r) => element("tr", {className: highlight.has(r) ? "chosen" : ""},
      ...row.map((value) => element("td", {text: full(value),
                                           className: typeof value === "number" ? "number" : ""}))));
    return element("table", {className: "values"}, element("thead", {}, head),
                   element("tbody", {}, ...body));
  }

  function codeView(code) {
    if (!code) return null;
    const lines = code.source.replace(/\n$/, "").split("\n");
    const pre = element("pre", {className: "source"});
    lines.forEach((text, i) => {
      const number = code.first_line + i;
      pre.append(element("span", {className: "line" + (number === code.line ? " hit" : ""),
                                  "data-line": number},
                         element("span", {className: "line-number", text: String(number)}),
                         text + "\n"));
    });
    const details = element("details", {className: "code"},
      element("summary", {}, "computed by ", element("code", {text: code.function}),
              `, ${code.file}:${code.line}`),
      pre);
    details.addEventListener("toggle", () => {
      const hit = pre.querySelector(".hit");
      if (details.open && hit) pre.scrollTop = hit.offsetTop - pre.clientHeight / 3;
    });
    return details;
  }

  // ----- panels and sections ----------------------------------------------------------------

  function drawPanel(figure, panel, state, labels, panels) {
    const body = figure.querySelector(".drawing");
    const readout = figure.querySelector(".readout");
    const chosen = figure.querySelector(".chosen-now");
    body.replaceChildren();
    chosen.textContent = (panel.choose || []).length ? chosenText(panel, state, labels) : "";
    if (panel.kind === "cells") {
      const width = Math.max(240, Math.min(body.clientWidth || 900, 960));
      readout.textContent = "point at a cell to read its number";
      body.append(drawCells(panel, state, colourRange(panel, panels, state), width, readout,
                            labels));
    } else if (panel.kind === "table") {
      body.append(drawTable(panel, state));
    } else if (panel.kind === "text") {
      body.append(element("p", {className: "panel-text", text: panel.text}));
    } else {
      body.append(element("p", {className: "error", text: `unknown panel kind ${panel.kind}`}));
    }
  }

  function makeSection(section, explanation) {
    const state = {};
    const labels = {};  // the section's choosers: every chosen axis once, in order, labelled
    for (const panel of section.panels) {  // by the first panel that labels it
      for (const axis of panel.choose || []) {
        if (!(axis in labels) || (!labels[axis] && panel.labels)) {
          labels[axis] = panel.labels ? panel.labels[axis] : null;
        }
      }
    }
    const box = element("section", {id: `section-${section.number}`, className: "section"},
                        element("h2", {text: `${section.number}. ${section.title}`}));
    const figures = section.panels.map((panel) => {
      const figure = element("figure", {className: "panel", "data-panel": panel.id,
                                        "data-kind": panel.kind},
        element("figcaption", {},
                element("h3", {}, panel.title, " ", element("span", {className: "chosen-now"})),
                panel.caption ? element("p", {className: "caption", text: panel.caption}) : null),
        element("div", {className: "drawing"}),
        element("div", {className: "readout", "aria-live": "polite"}),
        codeView(explanation.code[panel.code]));
      return [figure, panel];
    });
    const draw = () => figures.forEach(([figure, panel]) =>
      drawPanel(figure, panel, state, labels, section.panels));
    if (Object.keys(labels).length) {
      const bar = element("div", {className: "choosers"});
      for (const [axis, names] of Object.entries(labels)) {
        state[axis] = 0;
        const select = element("select", {"data-axis": axis, "aria-label": axis},
          ...(names || []).map((label, i) => element("option", {value: i, text: String(label)})));
        select.addEventListener("change", () => {
          state[axis] = Number(select.value);
          draw();
        });
        bar.append(element("label", {}, axis, " ", select));
      }
      box.append(bar);
      box.addEventListener("click", (event) => {  // a word clicked in a drawing picks it
        const label = event.target.closest ? event.target.closest(".choosable") : null;
        if (!label) return;
        const select = bar.querySelector(`select[data-axis="${label.dataset.axis}"]`);
        select.value = label.dataset.index;
        select.dispatchEvent(new Event("change"));
      });
    }
    figures.forEach(([figure]) => box.append(figure));
    return [box, draw];
  }

  function decodingText(decoding) {
    return decoding.beam === 1 ? "greedy decoding (beam 1)"
      : `beam search, beam ${decoding.beam}, length penalty ${decoding.length_penalty}`;
  }

  function summary(explanation) {
    const t = explanation.translation;
    const box = element("div", {id: "summary"},
      element("p", {className: "pair"},
              element("span", {id: "source-text", text: explanation.sentence}), " → ",
              element("strong", {id: "translation", text: t.text})),
      element("p", {className: "facts",
                    text: `${decodingText(explanation.decoding)}; log-probability ` +
                          `${t.log_prob.toFixed(4)}, score ${t.score.toFixed(4)}; ` +
                          `source tokens: ${explanation.source_tokens.join(" ")}`}));
    if (explanation.unknown.length) {
      box.append(element("p", {id: "unknown", className: "warning",
        text: `Not in the model's vocabulary: ${explanation.unknown.join(", ")}. ` +
              "The model reads each as <unk>, as translate.py does."}));
    }
    if (explanation.unseen.length) {
      box.append(element("p", {id: "unseen", className: "warning",
        text: `Seen in training only in translations, never in a source sentence: ` +
              `${explanation.unseen.join(", ")}. The model has not learnt to read them.`}));
    }
    return box;
  }

  function render(root, explanation) {
    root.replaceChildren();
    root.append(summary(explanation));
    const contents = element("nav", {className: "contents"}, element("ol", {},
      ...explanation.sections.map((s) => element("li", {},
        element("a", {href: `#section-${s.number}`, text: s.title})))));
    root.append(contents);
    const drawers = explanation.sections.map((section) => {
      const [box, draw] = makeSection(section, explanation);
      root.append(box);
      return draw;
    });
    drawers.forEach((draw) => draw());  // once in the page: the panels know their width
    document.body.dataset.state = "shown";
  }

  // ----- the two pages ------------------------------------------------------------------

  function showError(text) {
    const line = document.getElementById("error");
    line.textContent = text || "";
    line.hidden = !text;
    if (text) document.body.dataset.state = "error";
  }

  function jsonBlock(id) {
    const block = document.getElementById(id);
    return block ? JSON.parse(block.textContent) : null;
  }

  function live(root, options) {
    const form = document.getElementById("ask");
    const button = form.querySelector("button");
    const field = (id) => document.getElementById(id);
    field("beam").value = options.beam;
    field("length-penalty").value = options.length_penalty;
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      showError("");
      button.disabled = true;
      document.body.dataset.state = "asking";
      let answer, body;
      try {
        answer = await fetch("explain", {
          method: "POST", headers: {"Content-Type": "application/json"},
          body: JSON.stringify({sentence: field("sentence").value,
                                beam: Number(field("beam").value),
                                length_penalty: Number(field("length-penalty").value)})});
        body = await answer.json();
      } catch (error) {
        showError(`error: no answer from the app (${error.message}); is it still running?`);
        return;
      } finally {
        button.disabled = false;
      }
      if (!answer.ok) showError(`error: ${body.error}`);
      else render(root, body);
    });
  }

  function offline(root, data) {
    document.getElementById("ask").hidden = true;
    const choice = document.getElementById("sentence-choice");
    const select = choice.querySelector("select");
    data.explanations.forEach((explanation, i) =>
      select.append(element("option", {value: i, text: explanation.sentence})));
    select.addEventListener("change", () => render(root, data.explanations[Number(select.value)]));
    choice.hidden = false;
    if (data.explanations.length) render(root, data.explanations[0]);
  }

  document.addEventListener("DOMContentLoaded", () => {
    const root = document.getElementById("explanation");
    const data = jsonBlock("explain-data");
    if (data) offline(root, data);
    else live(root, jsonBlock("explain-options"));
  });
})();
