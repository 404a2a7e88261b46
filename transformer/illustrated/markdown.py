"""The Markdown pieces the walkthrough's values are made of: numbers, vectors, tables, code
spans, image links and word labels."""

import numpy as np

SHOWN_DIMS = 8  # columns of a vector printed in a table


def number(value, digits=3) -> str:
    return f"{value:.{digits}f}"


def vector(values, limit=SHOWN_DIMS, digits=3) -> str:
    """The first `limit` values of a vector, as text."""
    values = np.asarray(values).ravel()
    shown = ", ".join(number(v, digits) for v in values[:limit])
    return f"[{shown}{', …' if len(values) > limit else ''}]"


def probability(value) -> str:
    """An attention weight or probability: 3 decimals, or 2 significant digits when tiny."""
    return f"{value:.3f}" if value >= 0.001 or value == 0 else f"{value:.1e}"


def table(header, rows) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def code(token) -> str:
    return "`" + token.replace("`", "'") + "`"


def image(name, alt) -> str:
    return f"![{alt}]({name})"


def word_labels(tokens) -> list[str]:
    """Tokens as labels, a word that occurs more than once numbered by its position (the_1,
    the_5), so that tables and maps say which one is meant."""
    return [f"{t}_{i + 1}" if tokens.count(t) > 1 else t for i, t in enumerate(tokens)]
