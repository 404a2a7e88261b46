"""The page: the template's prose with the values of each section filled in, written as
`walkthrough.md` next to its figures.

The template (`walkthrough.template.md` beside this module) is plain Markdown. A line
`## N. Title` starts section N, whose `${name}` fields are filled by the N-th function of
`SECTIONS`; the text before the first section is filled with `origin` (where the model came
from), `command` (how to regenerate the page) and `contents` (the list of sections, made from
their headings). A literal dollar sign is written `$$`."""

import re
from pathlib import Path
from string import Template

from .sections import SECTIONS

TEMPLATE = Path(__file__).with_name("walkthrough.template.md")
SECTION_HEADING = re.compile(r"^## (\d+)\. (.+)$", flags=re.MULTILINE)


def write_walkthrough(subject, template=TEMPLATE):
    """Run every section and write `subject.out/walkthrough.md` from `template`; returns
    (path, sections). Figures no section wrote this time are removed from the folder."""
    header, parts = split_template(Path(template).read_text(encoding="utf-8"))
    if len(parts) != len(SECTIONS):
        raise ValueError(f"{Path(template).name} has {len(parts)} sections (lines '## N. "
                         f"Title'), but the code computes {len(SECTIONS)}")
    sections = [make(subject) for make in SECTIONS]
    contents = "\n".join(f"{number}. [{title}](#{anchor(f'{number}. {title}')})"
                         for number, title in SECTION_HEADING.findall("".join(parts)))
    texts = [fill(header, {"origin": subject.origin, "command": subject.command,
                           "contents": contents}, "the header")]
    texts += [fill(part, section.fields, f"section {number}")
              for number, (part, section) in enumerate(zip(parts, sections), start=1)]
    path = subject.out / "walkthrough.md"
    path.write_text("\n\n".join(texts) + "\n", encoding="utf-8")
    produced = {name for section in sections for name in section.figures}
    for stale in subject.out.glob("s[1-9]_*.png"):  # figures of an older version of this page
        if stale.name not in produced:
            stale.unlink()
    return path, sections


def split_template(text) -> tuple[str, list[str]]:
    """The text before the first section heading, and each section from its heading to the
    next."""
    starts = [match.start() for match in SECTION_HEADING.finditer(text)]
    return text[:starts[0]], [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]


def fill(part, fields, where) -> str:
    """`part` with its `${name}` fields replaced by `fields`, surrounding blank lines removed;
    a field the code does not compute is an error naming it and those it does."""
    try:
        return Template(part).substitute(fields).strip()
    except KeyError as error:
        raise KeyError(f"{where} of the template names ${{{error.args[0]}}}, which the code "
                       f"does not compute; it computes {', '.join(sorted(fields))}") from None


def anchor(heading) -> str:
    """GitHub's anchor of a heading."""
    return "".join(c for c in heading.lower() if c.isalnum() or c in " -_").replace(" ", "-")
