"""The report page and the bertviz export of a run: the page's attention numbers are the
model's, a run without samples or flow gets a line saying how to record them, the export has
bertviz's keys and shapes."""

import json

import numpy as np
import pytest
from monitored import run_example

from transformer.monitoring import attention_views, write_attention_npz, write_report
from transformer.run_folder import RunFolder

SENTENCES = ["1 2 3", "4 5 6 7 8"]


def page_attention(page):
    start = page.index("const ATTENTION = ") + len("const ATTENTION = ")
    return json.loads(page[start:page.index(";\nconst AXES")])


@pytest.fixture(scope="module")
def views(monitored_run):
    folder = RunFolder(monitored_run.path)
    return attention_views(folder.load_model("best"), folder.vocab(), folder.tokenizer(),
                           SENTENCES)


def test_the_page_holds_the_models_attention_and_works_offline(monitored_run, views, tmp_path):
    page = write_report(RunFolder(monitored_run.path), views, tmp_path / "report.html") \
        .read_text(encoding="utf-8")
    assert "cdn" not in page.lower().split("<script>", 2)[0]  # nothing fetched before plotly
    assert "<script src=" not in page
    shown = page_attention(page)
    assert [v["sentence"] for v in shown] == SENTENCES
    for view, drawn in zip(views, shown):
        assert drawn["encoder_tokens"] == view["encoder_tokens"]
        for kind in ("encoder_attention", "decoder_attention", "cross_attention"):
            assert len(drawn[kind]) == len(view[kind])
            for drawn_layer, weights in zip(drawn[kind], view[kind]):
                assert np.array_equal(np.asarray(drawn_layer, np.float32), weights)
    for section in ("Curves", "Sample translations", "Gradient flow", "Attention"):
        assert f"<h2>{section}</h2>" in page
    assert "class='missing'" not in page


def test_a_run_without_samples_or_flow_gets_a_line_saying_how_to_record_them(
        monitored_run, views, tmp_path):
    bare = tmp_path / "bare"
    bare.mkdir()
    for name in ("config.json", "vocab.json", "metrics.jsonl", "best.npz", "last.npz"):
        (bare / name).write_bytes((monitored_run.path / name).read_bytes())
    page = write_report(RunFolder(bare), views[:1]).read_text(encoding="utf-8")
    assert "recorded no sample translations: train with <code>--samples N</code>" in page
    assert "recorded no gradient flow: train it with <code>--record-flow N</code>" in page


def test_the_bertviz_export_has_its_keys_and_shapes(views, tmp_path):
    write_attention_npz(views[1], tmp_path / "attention.npz")
    saved = np.load(tmp_path / "attention.npz")
    source, decoder = len(saved["encoder_tokens"]), len(saved["decoder_tokens"])
    assert list(saved["encoder_tokens"]) == "4 5 6 7 8".split()
    assert saved["decoder_tokens"][0] == "<bos>"
    shapes = {"encoder_attention": (source, source), "decoder_attention": (decoder, decoder),
              "cross_attention": (decoder, source)}
    for key, (queries, keys) in shapes.items():
        layers = list(saved[key])  # what bertviz.model_view takes, per layer
        assert [layer.shape for layer in layers] == [(1, 2, queries, keys)]
        assert np.allclose(saved[key].sum(axis=-1), 1.0, atol=1e-5)


def test_report_py_writes_the_page_and_the_export_and_refuses_a_folder_without_a_run(
        monitored_run, tmp_path):
    result = run_example("report.py", "--checkpoint", monitored_run.path, "--out",
                         tmp_path / "out", "--sentence", "1 2 3")
    assert result.returncode == 0, result.stderr
    assert {p.name for p in (tmp_path / "out").iterdir()} == {"report.html", "attention.npz"}
    result = run_example("report.py", "--checkpoint", tmp_path / "nothing")
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "--checkpoint" in result.stderr


def test_without_plotly_the_page_names_the_extra(monitored_run, views, monkeypatch, tmp_path):
    import sys

    monkeypatch.setitem(sys.modules, "plotly", None)
    with pytest.raises(ImportError, match=r"pip install -e '\.\[examples\]'"):
        write_report(RunFolder(monitored_run.path), views, tmp_path / "report.html")
