"""The live Illustrated Transformer without a browser (the fast tier): the app's page loads
nothing from anywhere; a question the app cannot answer gets 400 and one line, a good one
explain()'s JSON; the exported page carries its explanations in its JSON block, keeps an
existing file, and one sentence of the main job's model stays within 5 MB; examples/explain.py
answers a wrong command line with one line and exit status 2. The browser tests are in
test_explain_app_browser.py."""

import json
import re
import socket
import sys
import threading
import urllib.error
import urllib.request
from argparse import Namespace
from html.parser import HTMLParser

import pytest
from explained import ARTICLE, LONGEST_ARTICLE, TINY_MAX_LEN

from transformer import cli
from transformer.illustrated.app import ExplainServer
from transformer.illustrated.explain_page import STATIC, read_explanations, script_json
from transformer.illustrated.explanation import explain
from transformer.illustrated.export import export_page

DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # no proxy for 127.0.0.1


@pytest.fixture(scope="module")
def app(tiny_translator):
    server = ExplainServer(tiny_translator, "a tiny fresh model", port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def ask(server, body, path="/explain", method="POST", headers=None):
    """(status, JSON answer) of one request to the app."""
    data = None if method == "GET" else (body if isinstance(body, bytes)
                                         else json.dumps(body).encode("utf-8"))
    request = urllib.request.Request(server.address.rstrip("/") + path, data=data,
                                     method=method, headers={"Content-Type": "application/json",
                                                             **(headers or {})})
    try:
        with DIRECT.open(request, timeout=60) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def as_json(value):
    """`value` as the page reads it (JSON round trip)."""
    return json.loads(script_json(value))


class Fetches(HTMLParser):
    """Every tag of a page that would load something: src, href, <link>, <iframe>, ..."""

    def __init__(self) -> None:
        super().__init__()
        self.found = []

    def handle_starttag(self, tag, attrs):
        loading = [(name, value) for name, value in attrs if name in ("src", "href", "srcset",
                                                                      "data", "poster")]
        if loading or tag in ("link", "iframe", "img", "object", "embed", "base"):
            self.found.append((tag, loading))


def check_loads_nothing(page):
    """The page's HTML names nothing to load; its style has no url() or @import; its script
    asks only the app's own /explain, by a relative address."""
    parser = Fetches()
    parser.feed(page)
    assert parser.found == []
    assert not re.search(r"url\(|@import", (STATIC / "explain.css").read_text(encoding="utf-8"))
    script = (STATIC / "explain.js").read_text(encoding="utf-8")
    assert re.findall(r"fetch\(([^,)]*)", script) == ['"explain"']
    assert script in page and not re.search(r"XMLHttpRequest|WebSocket|import\(|\.src\s*=",
                                            script)


def test_the_apps_page_loads_nothing_from_anywhere(app):
    status, page = ask(app, None, "/", method="GET")
    assert status == 200
    check_loads_nothing(page.decode("utf-8"))
    assert ask(app, None, "/favicon.ico", method="GET")[0] == 204


@pytest.mark.parametrize("body, words", [
    (b"the cat", "the request is not JSON"),
    ([ARTICLE], "the request is not a JSON object"),
    ({"sentence": ARTICLE, "colour": "red"}, "unknown field(s) colour"),
    ({}, "sentence is missing or blank"),
    ({"sentence": "   "}, "sentence is missing or blank"),
    ({"sentence": ARTICLE, "beam": 0}, "beam 0 is not a positive integer"),
    ({"sentence": ARTICLE, "beam": "2"}, "beam '2' is not a positive integer"),
    ({"sentence": ARTICLE, "beam": True}, "beam True is not a positive integer"),
    ({"sentence": ARTICLE, "length_penalty": -1}, "length_penalty -1 is not a number >= 0"),
    ({"sentence": " ".join(["the"] * (TINY_MAX_LEN + 1))},
     f"the sentence has {TINY_MAX_LEN + 1} tokens; this model reads at most {TINY_MAX_LEN}"),
])
def test_a_question_the_app_cannot_answer_gets_400_and_one_line(app, body, words):
    status, answer = ask(app, body)
    assert status == 400
    error = json.loads(answer)["error"]
    assert words in error and "\n" not in error


def test_the_app_answers_nothing_else(app):
    """Nothing but its page and /explain, nothing but JSON, and nothing to a request naming
    another host."""
    status, answer = ask(app, None, "/secret", method="GET")
    assert (status, json.loads(answer)) == (404, {"error": "/secret is not here; the page is /"})
    status, answer = ask(app, {"sentence": ARTICLE}, "/translate")
    assert (status, json.loads(answer)) == (404, {"error": "/translate is not here; POST to "
                                                           "/explain"})
    status, answer = ask(app, b"{}", headers={"Content-Length": str(2**20)})
    assert status == 413 and "reads at most" in json.loads(answer)["error"]
    status, answer = ask(app, b"sentence=the+cat",
                         headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 415 and json.loads(answer)["error"] == (
        "the request is application/x-www-form-urlencoded; send JSON (Content-Type: "
        "application/json)")
    for method in ("GET", "POST"):  # a page elsewhere reaching the app by DNS rebinding
        status, answer = ask(app, {"sentence": ARTICLE}, "/" if method == "GET" else "/explain",
                             method=method, headers={"Host": "attacker.example:8048"})
        assert status == 403 and json.loads(answer)["error"] == (
            "the app answers requests to 127.0.0.1 or localhost, not to attacker.example")


@pytest.mark.parametrize("beam, length_penalty", [(1, 0.6), (2, 1.0)])
def test_a_good_question_gets_explains_json(app, tiny_translator, beam, length_penalty):
    sentence = "the zebra drank the milk"
    status, answer = ask(app, {"sentence": sentence, "beam": beam,
                               "length_penalty": length_penalty})
    assert status == 200
    answer = json.loads(answer)
    assert answer == as_json(explain(tiny_translator, sentence, beam, length_penalty))
    assert answer["unknown"] == ["zebra"]
    assert answer["translation"]["text"] == tiny_translator.translate(
        sentence, beam_size=beam, length_penalty=length_penalty)


def test_the_exported_page_carries_its_explanations(tiny_translator, tmp_path):
    sentences = [ARTICLE, "the milk"]
    path = export_page(tiny_translator, sentences, tmp_path / "page.html", "a tiny model",
                       beam=2, length_penalty=1.0)
    page = path.read_text(encoding="utf-8")
    check_loads_nothing(page)
    assert page.count('<script type="application/json" id="explain-data">') == 1
    assert read_explanations(page) == {"schema": 1, "explanations": [
        as_json(explain(tiny_translator, s, 2, 1.0)) for s in sentences]}


def test_the_export_keeps_an_existing_file_and_refuses_what_the_model_cannot_read(
        tiny_translator, tmp_path):
    mine = tmp_path / "mine.html"
    mine.write_text("mine", encoding="utf-8")
    with pytest.raises(FileExistsError, match="mine.html exists; the export keeps it"):
        export_page(tiny_translator, [ARTICLE], mine, "a tiny model")
    assert mine.read_text(encoding="utf-8") == "mine"
    export_page(tiny_translator, [ARTICLE], mine, "a tiny model", overwrite=True)
    assert read_explanations(mine.read_text(encoding="utf-8"))["explanations"]
    too_long = " ".join(["the"] * (TINY_MAX_LEN + 1))
    with pytest.raises(ValueError, match=r"export: sentence 2 \('the the .*this model reads at "
                                         f"most {TINY_MAX_LEN}"):
        export_page(tiny_translator, [ARTICLE, too_long], tmp_path / "new.html", "a tiny model")
    assert not (tmp_path / "new.html").exists()


def test_one_sentence_of_the_main_job_model_is_an_exported_page_within_5_MB(
        main_job_translator, tmp_path):
    """The untrained model decodes to its longest output (twice the sentence's tokens plus
    10): the largest page the longest article sentence gives."""
    path = export_page(main_job_translator, [LONGEST_ARTICLE], tmp_path / "page.html",
                       "the main job's model, freshly initialized")
    explanation = read_explanations(path.read_text(encoding="utf-8"))["explanations"][0]
    assert explanation["unknown"] == []
    tokens = len(explanation["source_tokens"])
    assert len(explanation["translation"]["tokens"]) == 2 * tokens + 10
    assert path.stat().st_size <= 5 * 2**20


# ----- examples/explain.py -----------------------------------------------------------------

def run_script(example_script, capsys, monkeypatch, *arguments):
    """examples/explain.py's exit status and the lines it printed on stderr."""
    script = example_script("explain")
    monkeypatch.setattr(sys, "argv", ["explain.py", *map(str, arguments)])
    with pytest.raises(SystemExit) as exit:
        cli.run(script.main)
    return exit.value.code, capsys.readouterr().err.splitlines()


@pytest.mark.parametrize("arguments, words", [
    (["--sentence", ARTICLE], "--sentence gives the sentences of an exported page; add "
                              "--export FILE"),
    (["--overwrite"], "--overwrite lets --export replace its FILE; add --export FILE"),
    (["--export", "{tmp}/page.html"], "--export {tmp}/page.html needs the sentences to "
                                      "explain: add --sentence"),
    (["--export", "{tmp}/page.html", "--sentence", " "], "--sentence number 1 is blank"),
    (["--export", "{tmp}/mine.html", "--sentence", ARTICLE],
     "--export {tmp}/mine.html exists; add --overwrite to replace it"),
    (["--export", "{tmp}/nowhere/page.html", "--sentence", ARTICLE],
     "the folder {tmp}/nowhere does not exist; make it first"),
    (["--export", "{tmp}", "--sentence", ARTICLE], "--export {tmp} is a folder"),
    (["--export", "{tmp}/page.html", "--sentence", ARTICLE, "--port", "0"],
     "--port 0 is the app's; --export {tmp}/page.html writes a file instead of serving"),
    (["--port", "70000"], "'70000' is not a port number (0 to 65535; 0 takes a free one)"),
    (["--beam", "0"], "'0' is not a positive integer"),
    (["--length-penalty", "-1"], "'-1' is not a number >= 0"),
    ([], "--checkpoint {tmp}/no-run does not exist"),
])
def test_a_wrong_command_line_gets_one_line_and_exit_status_2(
        example_script, capsys, monkeypatch, tmp_path, arguments, words):
    (tmp_path / "mine.html").write_text("mine", encoding="utf-8")
    arguments = [a.format(tmp=tmp_path) for a in arguments]
    status, lines = run_script(example_script, capsys, monkeypatch, "--checkpoint",
                               tmp_path / "no-run", *arguments)
    assert status == 2 and len(lines) == 1 and lines[0].startswith("error: ")
    assert words.format(tmp=tmp_path) in lines[0]
    assert (tmp_path / "mine.html").read_text(encoding="utf-8") == "mine"


def test_a_port_in_use_is_named(example_script, tiny_translator):
    script = example_script("explain")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        args = Namespace(port=port, beam=1, length_penalty=0.6)
        with pytest.raises(cli.UsageError, match=f"--port {port} is in use; give another "
                                                 "--port, or --port 0 for a free one"):
            script.serve(tiny_translator, "a tiny model", args)
