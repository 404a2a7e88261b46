"""The executable Illustrated Transformer (transformer/illustrated/, examples/illustrated.py)
on a tiny model: every section and figure is produced, the page's image and contents links
resolve, the template names exactly the values the code computes, and the step-by-step
attention of section 3 is asserted equal to MultiHeadAttention's."""

import re
from pathlib import Path
from string import Template

import numpy as np
import pytest

import minigrad as mg
from transformer import MultiHeadAttention, builders, illustrated
from transformer.data import Example
from transformer.data.parse import parse
from transformer.data.syntax import spanish
from transformer.illustrated import page
from transformer.run_folder import RunFolder

TINY = {"d_model": 16, "n_heads": 2, "d_ff": 32, "n_encoder_layers": 1, "n_decoder_layers": 2,
        "dropout": 0.1}
TITLES = ("The black box and the stacks", "From words to vectors",
          "Self-attention in six steps", "The same thing as matrices", "Many heads",
          "The factor matrix: dot products as similarity", "Positional encoding",
          "Residual connections and LayerNorm", "The decoder, one step at a time")
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)]+)\)")


def article_task(name, data=None, seed=0, skip_bad_lines=False):
    """A stand-in for load_task("toy-en-es") (whose 50,000 sentences take seconds to make): the
    articles' sentences with the toy grammar's translations."""
    assert name == "toy-en-es"
    pairs = [Example(s, " ".join(spanish(parse(s))), "article")
             for s in (illustrated.BALL, illustrated.CAT, illustrated.ANIMAL)]
    return {"train": pairs, "valid": pairs[:1], "test": pairs[:1]}


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """The no-checkpoint path (vocabulary built as the pipeline builds it, a seeded tiny model)
    and its page."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(builders, "load_task", article_task)
        subject = illustrated.load_subject(None, out=tmp_path_factory.mktemp("fresh"),
                                           model_options=TINY, seed=3, dpi=30)
    path, sections = illustrated.write_walkthrough(subject)
    return subject, path, sections


def check_page(path, sections):
    """Every heading 1-9 in order, every figure written and linked, every link resolving."""
    text = path.read_text(encoding="utf-8")
    headings = re.findall(r"^## (\d+)\. (.+)$", text, flags=re.MULTILINE)
    assert headings == [(str(n), title) for n, title in enumerate(TITLES, start=1)]
    links = IMAGE.findall(text)
    assert links, "the page has no images"
    for link in links:
        assert not Path(link).is_absolute() and "/" not in link, f"not a relative link: {link}"
        assert (path.parent / link).is_file(), f"image link {link} does not resolve"
    figures = [name for section in sections for name in section.figures]
    assert len(figures) == len(set(figures)) >= 9
    assert set(figures) == set(links)
    assert sorted(p.name for p in path.parent.glob("*.png")) == sorted(figures)
    for name in figures:
        assert (path.parent / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for number in (2, 4, 5, 6, 7, 8, 9):  # sections with a figure
        assert sections[number - 1].figures, f"section {number} has no figure"
    contents = re.findall(r"^\d+\. \[(.+)\]\(#(.+)\)$", text, flags=re.MULTILINE)
    assert [title for title, _ in contents] == list(TITLES)
    assert [target for _, target in contents] == [
        page.anchor(f"{n}. {title}") for n, title in headings]
    assert "${" not in text
    assert "nan" not in text.lower().split()
    return text


def test_fresh_model_walkthrough(fresh):
    _, path, sections = fresh
    text = check_page(path, sections)
    assert "No checkpoint was given" in text and "freshly initialized" in text
    assert text.index("No checkpoint was given") < text.index("## 1.")
    assert "d_model = 16, 2 heads of d_k = 8" in text
    assert "drank > cat > black" in text and "untrained model the ordering" in text
    assert re.search(r"largest differences \S+ for the attention\s+weights", text)


def test_checkpoint_walkthrough_from_the_script(fresh, tmp_path, example_script):
    """A run folder (config, vocabulary, best.npz) saved from a tiny model, read back by
    examples/illustrated.py: the page says where the model came from and uses its weights."""
    subject = fresh[0]
    run = tmp_path / "run"
    folder = RunFolder(run)
    folder.write_json("config.json", {"task": {"name": "toy-en-es", "data": None},
                                      "model": subject.model.config.to_dict(), "training": {}})
    subject.vocab.save(folder.file("vocab.json"))
    mg.save({"model": subject.model.state_dict()}, folder.file("best.npz"))
    out = tmp_path / "page"
    out.mkdir()
    (out / "s9_left_over.png").write_bytes(b"old")  # a figure name no section makes any more
    example_script("illustrated").main(["--checkpoint", str(run), "--out", str(out), "--dpi", "30"])
    loaded = illustrated.load_subject(run, out=tmp_path / "unused")
    np.testing.assert_array_equal(loaded.model.encoder.embedding.weight.numpy(),
                                  subject.model.encoder.embedding.weight.numpy())
    text = (out / "walkthrough.md").read_text(encoding="utf-8")
    assert f"run folder `{run}`" in text and "No checkpoint" not in text
    assert not (out / "s9_left_over.png").exists()
    figures = sorted(p.name for p in out.glob("*.png"))
    assert figures == sorted(p.name for p in fresh[1].parent.glob("*.png"))
    for link in IMAGE.findall(text):
        assert (out / link).is_file()


def test_a_run_with_a_moving_average_is_walked_through_with_the_average(fresh, tmp_path):
    subject = fresh[0]
    run = RunFolder(tmp_path / "run")
    run.write_json("config.json", {"task": {"name": "toy-en-es", "data": None},
                                   "model": subject.model.config.to_dict(), "training": {}})
    subject.vocab.save(run.file("vocab.json"))
    averages = {name: p.numpy() * 0.5 for name, p in subject.model.named_parameters()}
    mg.save({"model": subject.model.state_dict(), "step": 7,
             "average": {"decay": 0.9, "updates": 7, "averages": averages}},
            run.file("best.npz"))
    loaded = illustrated.load_subject(run.path, out=tmp_path / "unused")
    np.testing.assert_array_equal(loaded.model.encoder.embedding.weight.numpy(),
                                  averages["encoder.embedding.weight"])
    assert "(its `best.npz` checkpoint, saved at training step 7: the moving average of its " \
           "weights)" in loaded.origin


def fields_named(text):
    """The names of the ${name} fields of a template text."""
    return {match["named"] or match["braced"] for match in Template.pattern.finditer(text)
            if match["named"] or match["braced"]}


def test_the_template_names_exactly_what_each_section_computes(fresh):
    """No field without a value (filling would fail) and no value without a field (it would be
    computed for nothing)."""
    _, _, sections = fresh
    header, parts = page.split_template(page.TEMPLATE.read_text(encoding="utf-8"))
    assert fields_named(header) == {"origin", "command", "contents"}
    assert len(parts) == len(sections) == len(TITLES)
    for number, (part, section) in enumerate(zip(parts, sections), start=1):
        assert fields_named(part) == set(section.fields), f"section {number}"


def test_a_template_mistake_is_named(fresh, tmp_path):
    with pytest.raises(KeyError, match=r"section 2 of the template names \$\{nope\}.*d_model"):
        page.fill("## 2. Title\n\n${nope}", {"d_model": 16}, "section 2")
    shorter = tmp_path / "eight_sections.md"
    header, parts = page.split_template(page.TEMPLATE.read_text(encoding="utf-8"))
    shorter.write_text(header + "".join(parts[:-1]), encoding="utf-8")
    with pytest.raises(ValueError, match="has 8 sections.*computes 9"):
        illustrated.write_walkthrough(fresh[0], template=shorter)


@pytest.mark.parametrize("length", [2, 5])
def test_step_by_step_equals_the_module(length):
    mg.manual_seed(length)
    attention = MultiHeadAttention(12, 3).eval()
    attention.record_key = ("encoder", 1, "self_attn")
    x = np.random.default_rng(length).normal(size=(length, 12))
    steps = illustrated.attention_step_by_step(attention, x)
    batched = illustrated.attention_batched(attention, x)
    differences = illustrated.check_step_by_step(steps, batched)
    assert set(differences) == {"weights", "z", "output"}
    assert max(differences.values()) < 1e-5
    np.testing.assert_allclose(steps["weights"].sum(axis=-1), 1.0)
    assert steps["q"].shape == (3, length, 4) and steps["weighted"].shape == (3, length,
                                                                             length, 4)


@pytest.mark.parametrize("name, where, message", [
    ("weights", (0, 1, 0), "attention weights"),
    ("z", (1, 0, 2), "z vectors"),
    ("output", (1, 5), "output"),
])
def test_a_wrong_value_is_caught(name, where, message):
    mg.manual_seed(0)
    attention = MultiHeadAttention(12, 3).eval()
    attention.record_key = ("encoder", 1, "self_attn")
    x = np.random.default_rng(0).normal(size=(2, 12))
    steps = illustrated.attention_step_by_step(attention, x)
    batched = illustrated.attention_batched(attention, x)
    steps[name][where] += 1e-3
    with pytest.raises(AssertionError, match=message):
        illustrated.check_step_by_step(steps, batched)
    steps[name] = steps[name][..., :-1]  # a shape mismatch is an error too
    with pytest.raises(AssertionError, match="shape"):
        illustrated.check_step_by_step(steps, batched)


def test_the_walkthrough_asserts_the_check(fresh, monkeypatch):
    """Section 3 fails, naming the z vectors, when the module's batched z disagrees."""
    subject = fresh[0]
    real = illustrated.attention_batched

    def tampered(attention, x, mask=None):
        result = real(attention, x, mask)
        result["z"] = result["z"] + 1e-2
        return result

    monkeypatch.setattr(illustrated.sections, "attention_batched", tampered)
    with pytest.raises(AssertionError, match="z vectors"):
        illustrated.section_3_six_steps(subject)


def test_two_word_input_comes_from_the_vocabulary(fresh):
    vocab = fresh[0].vocab
    words = illustrated.two_word_input(vocab)
    assert len(words) == 2 and not vocab.unknown(words)


@pytest.mark.acceptance
def test_default_page_from_the_script(tmp_path, example_script):
    """No checkpoint, nothing patched: the real toy-en-es vocabulary and the main job's model,
    as the README's command runs it."""
    example_script("illustrated").main(["--out", str(tmp_path)])
    path = tmp_path / "walkthrough.md"
    text = path.read_text(encoding="utf-8")
    headings = re.findall(r"^## (\d+)\. (.+)$", text, flags=re.MULTILINE)
    assert headings == [(str(n), title) for n, title in enumerate(TITLES, start=1)]
    links = IMAGE.findall(text)
    assert sorted(links) == sorted(p.name for p in tmp_path.glob("*.png"))
    assert "d_model = 64, 4 heads of d_k = 16" in text and "freshly initialized" in text
