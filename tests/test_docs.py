"""The documents say what is: every Python block of the README and docs/ runs, every command
line they show (`python examples/X.py --flags`, `python scripts/...`, `python benchmarks/...`)
is accepted by that script's parser, docs/architecture.md's file tables name exactly the files
there are, and no code comment or docstring carries a benchmark figure (those live beside the
commands that give them, in benchmarks/README.md).

A Python block is run with the blocks before it in its document, as one session, in a fresh
folder, after the lines PRELUDES gives for its document (the names its text assumes: a model,
batches). A block that cannot run here says why on the line before it:
`<!-- not run: the reason -->` (a trained run folder it reads, say)."""

import argparse
import importlib.util
import inspect
import io
import re
import shlex
import subprocess
import sys
import tokenize
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]

TINY_MODEL = """
import numpy as np
import minigrad as mg
from minigrad import nn
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
batches = [mg.randn(5, 3) for _ in range(2)]
def loss_fn(model, batch):
    return (model(batch) ** 2).mean()
"""
PRELUDES = {
    "docs/gradient_flow.md": """
import minigrad as mg
from minigrad.nn import functional as F
from transformer import Transformer, TransformerConfig
from transformer.data import Example, Vocab, tokenize
from transformer.data.batching import BatchIterator, encode_pairs, make_batch
from transformer.training import Trainer
from transformer.training_config import TrainingConfig
sentences = ["a b c", "b c d", "c d a", "d a b", "a c", "b d"]
valid = [Example(s, s, "copy") for s in sentences]
vocab = Vocab.build([tokenize(s) for s in sentences])
pad_id = vocab.pad_id
mg.manual_seed(0)
model = Transformer(TransformerConfig(
    len(vocab), len(vocab), d_model=8, n_heads=2, n_encoder_layers=2, n_decoder_layers=2,
    d_ff=16, dropout=0.0, max_len=16, share_embeddings=True, pad_id=pad_id))
pairs = encode_pairs(valid, vocab)
batch = make_batch(pairs, range(3), vocab)
batches = BatchIterator(pairs, vocab, batch_size=3)
config = TrainingConfig(steps=2, batch_size=3, warmup_steps=1, eval_every=2, eval_examples=2,
                        progress=False)
""",
    "docs/distributed.md": TINY_MODEL + """
optimizer = mg.optim.SGD(model.parameters(), lr=0.1)
steps = 2
global_batches = batches
def shard(batch, rank, world_size):
    return batch[rank::world_size]
def summed_loss(model, batch):
    return (model(batch) ** 2).sum()
def global_token_count(batch):
    return batch.shape[0]
""",
    "docs/optim.md": TINY_MODEL + """
import os
from minigrad.testing import fake_cupy
fake_cupy.install()  # device="cuda" on the CuPy stand-in where there is no GPU
os.makedirs("run")
step = 0
""",
    "docs/extending.md": """
import numpy as np
import minigrad as mg
from minigrad import Function, InputSpec, op
from minigrad.autograd import BuiltinFunction
class MyOp(mg.Function):
    def forward(self, a, b):
        return a * b
    def backward(self, grad):
        a, b = self.inputs
        return grad * b, grad * a
my_reference = np.multiply
""",
}
MARKER = re.compile(r"<!-- not run: (?P<reason>[^>]*\w[^>]*) -->\s*$")


def _relative(path):
    return path.relative_to(ROOT).as_posix()


def python_blocks(path):
    """[(line, code, reason not run or None)] of the ```python blocks of a document."""
    lines = path.read_text(encoding="utf-8").split("\n")
    blocks, start = [], None
    for number, line in enumerate(lines):
        if start is None and line.strip() == "```python":
            start = number
        elif start is not None and line.strip() == "```":
            marker = MARKER.search(lines[start - 1]) if start else None
            blocks.append((start + 1, "\n".join(lines[start + 1:number]),
                           marker["reason"] if marker else None))
            start = None
    return blocks


# docs/data.md's block builds the toy grammar's splits: about half a minute on two cores
ACCEPTANCE_DOCUMENTS = {"docs/data.md"}


@pytest.mark.parametrize("document", [
    pytest.param(d, marks=pytest.mark.acceptance) if _relative(d) in ACCEPTANCE_DOCUMENTS else d
    for d in DOCUMENTS if any(reason is None for _, _, reason in python_blocks(d))],
    ids=_relative)
def test_the_python_blocks_run(document, tmp_path):
    name = _relative(document)
    parts = [PRELUDES.get(name, "")]
    for line, code, reason in python_blocks(document):
        if reason is None:
            parts.append(f"# ----- {name}, line {line}\n{code}")
    result = subprocess.run([sys.executable, "-c", "\n".join(parts)], cwd=tmp_path,
                            capture_output=True, text=True, timeout=300, check=False,
                            env=_environment())
    assert result.returncode == 0, f"{name}: a block failed\n{result.stderr[-3000:]}"


def _environment():
    import os

    return {**os.environ, "PYTHONPATH": str(ROOT), "MINIGRAD_DEVICE": "cpu"}


def test_every_skipped_block_says_why():
    for document in DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        for line in text.split("\n"):
            if "<!-- not run" in line:
                assert MARKER.search(line), f"{_relative(document)}: {line!r} gives no reason"


# ----- command lines -------------------------------------------------------------------------

COMMAND = re.compile(r"python(?:3)?(?: -m mpi4py)? (?P<script>(?:examples|scripts|benchmarks)/"
                     r"\w+\.py)(?P<args>[^`|;&#]*)")
PLACEHOLDER = re.compile(r"^[A-Z][A-Z_]*$")  # TASK, N, DIR: a value the reader chooses


def _code(text):
    """The command-line code of a document: each line of its shell blocks (a line ending in
    a backslash joined to the next), then its prose, where a command ends with its code span."""
    shell, prose, fence = [], [], None
    for line in text.split("\n"):
        if line.startswith("```"):
            fence = line[3:].strip() if fence is None else None
        elif fence in ("bash", "sh", "console", ""):
            shell.append(line)
        elif fence is None:
            prose.append(line)
    return "\n".join(shell).replace("\\\n", " ").split("\n") + ["\n".join(prose)]


def command_lines():
    """(document, script, [arguments]) of each command line the documents show."""
    found = []
    for document in DOCUMENTS:
        for piece in _code(document.read_text(encoding="utf-8")):
            for match in COMMAND.finditer(piece):
                arguments = re.sub(r"<\([^)]*\)", "FILE", match["args"])  # <(cut ...): a file
                found.append((_relative(document), match["script"],
                              shlex.split(arguments.replace("\n", " "))))
    return found


def _synopsis(arguments):
    """Whether the line shows a form (`[--seeds N]`, `--task TASK`, `...`), not a command."""
    return any(a.startswith("[") or a.endswith("]") or a == "..." or PLACEHOLDER.match(a)
               for a in arguments)


class _Parsed(Exception):
    """Raised instead of running the script, once its parser accepted the arguments."""


@pytest.mark.parametrize("document, script, arguments", command_lines(),
                         ids=lambda value: value if isinstance(value, str) else " ".join(value))
def test_a_command_line_in_the_docs_is_accepted_by_its_script(document, script, arguments,
                                                              monkeypatch):
    """The script's own parser reads the line's arguments (the script is not run); a form
    with placeholders has each of its flags checked to be one of the parser's."""
    path = ROOT / script
    assert path.exists(), f"{document}: {script} does not exist"
    if not arguments:
        return  # the script named in the text
    spec = importlib.util.spec_from_file_location(f"_doc_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.syspath_prepend(str(path.parent))
    spec.loader.exec_module(module)
    original = argparse.ArgumentParser.parse_args

    def parse_only(parser, args=None, namespace=None):
        if _synopsis(arguments):
            flags = [a.strip("[]").split("=")[0] for a in arguments if a.strip("[").startswith("-")]
            unknown = [flag for flag in flags if flag not in parser._option_string_actions]
            raise _Parsed(unknown)
        raise _Parsed(original(parser, args, namespace))

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_only)
    monkeypatch.setattr(sys, "argv", [str(path), *arguments])
    takes_argv = bool(inspect.signature(module.main).parameters)
    try:
        module.main(arguments) if takes_argv else module.main()
    except _Parsed as parsed:
        unknown = parsed.args[0]
        assert not isinstance(unknown, list) or not unknown, \
            f"{document}: {script}: no such flags: {unknown}"
        return
    except SystemExit as exit:
        raise AssertionError(f"{document}: {script} {shlex.join(arguments)}: its parser refused "
                             f"the arguments (exit {exit.code})") from None
    except Exception as error:
        raise AssertionError(f"{document}: {script} {shlex.join(arguments)}: "
                             f"{type(error).__name__}: {error}") from None
    raise AssertionError(f"{document}: {script}: main() returned without parsing arguments")


def test_the_docs_show_command_lines_of_the_examples_and_scripts():
    scripts = {script for _, script, _ in command_lines()}
    assert {"examples/train_translation.py", "examples/translate.py",
            "scripts/make_ops_doc.py"} <= scripts


# ----- the docs site ----------------------------------------------------------------------------

def test_the_site_navigation_names_every_page_and_only_pages_there_are():
    """mkdocs.yml's nav lists each page under docs/ once (a page left out of it would be built
    but reached by no menu)."""
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    named = re.findall(r"^\s*- (?:[^:\n]+: )?([\w./-]+\.md)\s*(?:#.*)?$",
                       text.split("\nnav:", 1)[1], re.M)
    pages = [path.relative_to(ROOT / "docs").as_posix() for path in (ROOT / "docs").rglob("*.md")]
    assert sorted(named) == sorted(pages)


# ----- docs/architecture.md's layout -----------------------------------------------------------

def _table_names(section):
    """The files and folders docs/architecture.md's table under `## <section>` names."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    return {match for match in re.findall(r"^\| `([\w./]+)` \|", body, re.M)}


@pytest.mark.parametrize("package", ["minigrad", "transformer"])
def test_the_architecture_tables_name_every_file_and_only_files_that_exist(package):
    named = _table_names(package)
    folder = ROOT / package
    there = {path.name + ("/" if path.is_dir() else "") for path in folder.iterdir()
             if (path.suffix == ".py" or (path.is_dir() and (path / "__init__.py").exists()))}
    assert not named - there, f"docs/architecture.md names what {package}/ lacks: " \
                              f"{sorted(named - there)}"
    assert not there - named, f"{package}/ has what docs/architecture.md does not name: " \
                              f"{sorted(there - named)}"


def test_the_tests_folder_is_described_as_it_is():
    """architecture.md says which test folder holds which package's tests: each it names
    exists."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    for folder in re.findall(r"`tests/(\w+)/`", text):
        assert (ROOT / "tests" / folder).is_dir(), folder


def test_every_test_module_has_a_name_of_its_own():
    """The test folders are no packages: pytest imports each module by its file name, and a
    second module of the same name fails the whole run's collection."""
    names = Counter(path.name for path in (ROOT / "tests").rglob("test_*.py"))
    assert {name: count for name, count in names.items() if count > 1} == {}


# ----- no benchmark figures in code --------------------------------------------------------------

FIGURE = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|µs|us|ns)\b|\b\d+(?:\.\d+)?x (?:faster|slower)\b"
                    r"|\b\d+(?:\.\d+)?-\d+(?:\.\d+)?x\b|\bsteps?/s\b")


def _comments_and_docstrings(path):
    for token in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8"))
                                          .readline):
        if token.type == tokenize.COMMENT or (
                token.type == tokenize.STRING and token.string.lstrip("rbuRBU")[:3] in
                ('"""', "'''")):
            yield token.start[0], token.string


def test_no_benchmark_figure_in_code_comments():
    found = []
    for folder in ("minigrad", "transformer", "examples", "scripts", "benchmarks"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for line, text in _comments_and_docstrings(path):
                for match in FIGURE.finditer(text):
                    found.append(f"{_relative(path)}:{line}: {match.group()}")
    assert not found, "benchmark figures belong in benchmarks/README.md, beside the command " \
                      "that gives them: " + "; ".join(found)
