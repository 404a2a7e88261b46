"""The live Illustrated Transformer as one offline HTML file: the app's page for given
sentences, its numbers in one JSON block (`explain_page`), opening with no network request.

    export_page(translator, ["the black cat drank the milk"], "explained.html",
                origin="runs/toy-en-es (best)")
"""

from __future__ import annotations

import os
from pathlib import Path
from textwrap import shorten

from ..translator import Translator
from .explain_page import page_html
from .explanation import explain


def export_page(translator: Translator, sentences: list[str], path: str | os.PathLike,
                origin: str, beam: int = 1, length_penalty: float = 0.6,
                overwrite: bool = False) -> Path:
    """Write the page explaining `sentences` (decoded with `beam` and `length_penalty`) to
    `path`, naming the model `origin`; returns the path. An existing file is kept
    (FileExistsError) unless `overwrite`; ValueError names each sentence the model cannot
    read (blank, or longer than its max_len)."""
    if not sentences:
        raise ValueError("export: no sentences given; give at least one to explain")
    problems = [f"sentence {i} ({shorten(s, 50)!r}): {translator.problem(s)}"
                for i, s in enumerate(sentences, start=1) if translator.problem(s)]
    if problems:
        raise ValueError("export: " + "; ".join(problems))
    path = Path(path)
    if path.exists() and not overwrite:
        raise FileExistsError(f"{path} exists; the export keeps it (overwrite it on purpose, "
                              "or write elsewhere)")
    explanations = [explain(translator, s.strip(), beam=beam, length_penalty=length_penalty)
                    for s in sentences]
    page = page_html(origin, beam, length_penalty, explanations)
    with open(path, "w" if overwrite else "x", encoding="utf-8") as file:
        file.write(page)
    return path
