"""The page of the live Illustrated Transformer, as the app serves it and as `export` writes
it: `explain.template.html` with `static/explain.css` and `static/explain.js` inlined, so that
the page loads nothing from anywhere. The app's page asks the app for each sentence (POST
/explain); an exported page carries its numbers in one
`<script type="application/json" id="explain-data">` block, {"schema": 1, "explanations":
[explain()'s dict per sentence]} (docs/illustrated/data.md), which the same script draws."""

from __future__ import annotations

import html
import json
from pathlib import Path
from string import Template
from typing import Any

HERE = Path(__file__).parent
TEMPLATE = HERE / "explain.template.html"
STATIC = HERE / "static"
SCHEMA = 1


def page_html(origin: str, beam: int = 1, length_penalty: float = 0.6,
              explanations: list[dict[str, Any]] | None = None) -> str:
    """The page for the model of `origin` (its run folder and checkpoint, as the reader should
    see it named): with `explanations` the exported page of those sentences, without them the
    app's page, its decoding options set to `beam` and `length_penalty`."""
    options = {"beam": beam, "length_penalty": length_penalty}
    data = "" if explanations is None else (
        '<script type="application/json" id="explain-data">'
        f'{script_json({"schema": SCHEMA, "explanations": explanations})}</script>')
    return Template(TEMPLATE.read_text(encoding="utf-8")).substitute(
        origin=html.escape(origin), options=script_json(options), data=data,
        style=(STATIC / "explain.css").read_text(encoding="utf-8"),
        script=(STATIC / "explain.js").read_text(encoding="utf-8"))


def script_json(value: Any) -> str:
    """`value` as JSON that can stand inside a <script> element: every "<" written \\u003c
    (a token "</script>" cannot end the block), no NaN or infinity (JSON has none)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False).replace("<", "\\u003c")


def read_explanations(page: str) -> dict[str, Any]:
    """The JSON block of an exported page (`page`: its HTML)."""
    start_tag = '<script type="application/json" id="explain-data">'
    start = page.find(start_tag)
    if start < 0:
        raise ValueError("the page has no <script type=\"application/json\" "
                         "id=\"explain-data\"> block: it is not an exported explanation page")
    start += len(start_tag)
    return json.loads(page[start:page.index("</script>", start)])
