"""The live Illustrated Transformer in a real browser (Debian's headless Chromium driven by
selenium through Debian's chromedriver, as tests/monitoring's report test): examples/explain.py
started as a process on a free port, a sentence typed, its translation equal to translate.py's
(greedy, and beam 3 with a length penalty), every section present with its panels, one head's
z vector equal to a direct computation with the model's weights, a word picked by clicking
it, an unknown word named (and a word training saw only in translations), an error in one
line, and no request to any address but 127.0.0.1; the exported page opens with no network
request at all. Screenshots go to $EXPLAIN_SCREENSHOTS (default: the test's temporary
folder)."""

import math
import os
import subprocess
import sys
from pathlib import Path
from queue import Empty, Queue
from threading import Thread
from urllib.parse import urlsplit

import numpy as np
import pytest
from chromium import chromium, requested

from transformer.illustrated.explanation import section_titles
from transformer.run_folder import RunFolder

REPO = Path(__file__).resolve().parents[2]
SENTENCE = "the ball is blue"  # one of the trained run's training sentences
WAIT_S = 30  # for the app to start, or to answer: a hang fails its test

pytestmark = pytest.mark.acceptance


def console_errors(driver):
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def screenshot(driver, tmp_path, name):
    folder = Path(os.environ.get("EXPLAIN_SCREENSHOTS", tmp_path))
    folder.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(folder / name))


def script(name, *arguments, **options):
    return subprocess.run([sys.executable, str(REPO / "examples" / name), *map(str, arguments)],
                          capture_output=True, text=True, timeout=120, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, **options)


def translated(run, sentence, *options):
    """translate.py's translation of `sentence` with `options`."""
    result = script("translate.py", "--checkpoint", run, *options, sentence)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


class App:
    """examples/explain.py serving `run` on a free port: its address, read from its first line
    within WAIT_S seconds."""

    def __init__(self, run) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(REPO / "examples" / "explain.py"), "--checkpoint", str(run),
             "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
        lines = Queue()
        Thread(target=lambda: lines.put(self.process.stdout.readline()), daemon=True).start()
        try:
            line = lines.get(timeout=WAIT_S)
        except Empty:
            self.stop()
            pytest.fail(f"examples/explain.py printed no address within {WAIT_S} s")
        assert line.startswith("explaining ") and "http://127.0.0.1:" in line, \
            (line, self.process.stderr.read() if self.process.poll() is not None else "")
        self.address = line.split(" at ")[1].split()[0]

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def shown(driver):
    """Wait until the page has drawn an explanation or an error; which one."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    body = driver.find_element(By.TAG_NAME, "body")
    return WebDriverWait(driver, WAIT_S).until(
        lambda _: body.get_attribute("data-state") in ("shown", "error")
        and body.get_attribute("data-state"))


def ask(driver, sentence, beam=1, length_penalty=0.6):
    from selenium.webdriver.common.by import By

    for field, value in (("sentence", sentence), ("beam", beam),
                         ("length-penalty", length_penalty)):
        box = driver.find_element(By.ID, field)
        box.clear()
        box.send_keys(str(value))
    driver.find_element(By.CSS_SELECTOR, "#ask button").click()
    return shown(driver)


def check_sections(driver):
    """The nine sections in order under the template's headings, each with its panels
    drawn, each panel naming the code that computed it."""
    from selenium.webdriver.common.by import By

    sections = driver.find_elements(By.CSS_SELECTOR, "section.section")
    assert [s.find_element(By.TAG_NAME, "h2").text for s in sections] == \
        [f"{n}. {title}" for n, title in enumerate(section_titles(), start=1)]
    for section in sections:
        panels = section.find_elements(By.CSS_SELECTOR, "figure.panel")
        assert panels, section.text[:40]
        for panel in panels:
            assert panel.find_elements(By.CSS_SELECTOR, ".drawing > *"), \
                panel.get_attribute("data-panel")
            assert "computed by" in panel.find_element(By.CSS_SELECTOR, "details.code").text


def direct_z(run, sentence, head, word):
    """Encoder layer 1's self-attention for one head and one word, computed in NumPy (float64)
    from the model's weights: the embedding scaled plus the positions, (LayerNorm before the
    sublayer where the run puts it there), q, k, v of the head, softmax(q kᵀ / √d_k), z."""
    folder = RunFolder(run)
    model, vocab, tokenizer = folder.load_model("best"), folder.vocab(), folder.tokenizer()
    ids = vocab.encode(tokenizer.source(sentence))
    encoder = model.encoder
    table = encoder.embedding.weight.numpy().astype(np.float64)
    x = table[ids] * encoder.scale + encoder.positional.table.numpy()[:len(ids)]
    block = encoder.layers[0].self_attn
    if block.has_norm and block.norm_first:
        mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        x = (x - mean) / np.sqrt(var + block.norm.eps) * block.norm.weight.numpy() \
            + block.norm.bias.numpy()
    attention = block.sublayer
    d_k = attention.d_head
    columns = slice(head * d_k, (head + 1) * d_k)

    def project(linear):
        return (x @ linear.weight.numpy().astype(np.float64).T + linear.bias.numpy())[:, columns]

    q, k, v = (project(p) for p in (attention.q_proj, attention.k_proj, attention.v_proj))
    scores = q[word] @ k.T / math.sqrt(d_k)
    weights = np.exp(scores - scores.max())
    return (weights / weights.sum()) @ v


def test_the_app_explains_a_typed_sentence_in_chromium(trained_run, tmp_path):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    app = App(trained_run)
    driver = chromium(tmp_path, height=1400, network_log=True)
    try:
        driver.get(app.address)
        assert ask(driver, SENTENCE) == "shown"
        assert driver.find_element(By.ID, "translation").text == translated(trained_run, SENTENCE)
        assert not driver.find_elements(By.ID, "unknown")
        check_sections(driver)
        screenshot(driver, tmp_path, "explain-top.png")

        section = driver.find_element(By.ID, "section-3")
        head, word = 1, 2
        Select(section.find_element(By.CSS_SELECTOR, "select[data-axis='head']")) \
            .select_by_index(head)
        Select(section.find_element(By.CSS_SELECTOR, "select[data-axis='word']")) \
            .select_by_index(word)
        panel = section.find_element(By.CSS_SELECTOR, "figure[data-panel='s3.z']")
        assert panel.find_element(By.CLASS_NAME, "chosen-now").text.endswith(
            f"head {head + 1}, word {SENTENCE.split()[word]}")
        z = [float(cell.get_attribute("data-v"))
             for cell in panel.find_elements(By.CSS_SELECTOR, "svg rect")]
        direct = direct_z(trained_run, SENTENCE, head, word)
        # equal to 1e-5 beyond the page's rounding to 4 significant digits
        rounding = 0.5 * 10.0 ** (np.floor(np.log10(np.abs(direct))) - 3)
        assert np.all(np.abs(np.array(z) - direct) <= rounding + 1e-5), (z, direct)
        driver.execute_script("arguments[0].scrollIntoView();", panel)
        first = panel.find_element(By.CSS_SELECTOR, "svg rect")
        ActionChains(driver).move_to_element(first).perform()
        assert panel.find_element(By.CLASS_NAME, "readout").text == f"dim 0: {z[0]:g}"
        code = panel.find_element(By.CSS_SELECTOR, "details.code")
        code.find_element(By.TAG_NAME, "summary").click()
        marked = code.find_element(By.CSS_SELECTOR, "pre .hit")
        assert code.find_element(By.TAG_NAME, "summary").text.endswith(
            f":{marked.get_attribute('data-line')}")
        assert "self.seen(\"z\"" in marked.text
        screenshot(driver, tmp_path, "explain-six-steps.png")
        factor = driver.find_element(By.CSS_SELECTOR, "figure[data-panel='s6.factor']")
        driver.execute_script("arguments[0].scrollIntoView();", factor)
        factor.find_elements(By.CSS_SELECTOR, ".row-label.choosable")[2].click()  # a word
        assert driver.find_element(By.CSS_SELECTOR, "#section-6 select[data-axis='word']") \
            .get_attribute("value") == "2"
        products = driver.find_element(By.CSS_SELECTOR, "figure[data-panel='s6.products']")
        assert f"word {SENTENCE.split()[2]}" in products.find_element(
            By.CLASS_NAME, "chosen-now").text

        assert ask(driver, SENTENCE, beam=3, length_penalty=1.0) == "shown"
        assert driver.find_element(By.ID, "translation").text == translated(
            trained_run, SENTENCE, "--beam", 3, "--length-penalty", 1.0)
        assert driver.find_element(By.CSS_SELECTOR, "figure[data-panel='s9.beam'] table")

        assert ask(driver, "the zebra is blue") == "shown"
        assert driver.find_element(By.ID, "unknown").text.startswith(
            "Not in the model's vocabulary: zebra.")
        assert ask(driver, "the bola is blue") == "shown"  # a word of the translations only
        assert driver.find_element(By.ID, "unseen").text.startswith(
            "Seen in training only in translations, never in a source sentence: bola.")
        assert not console_errors(driver)
        assert ask(driver, "   ") == "error"
        assert driver.find_element(By.ID, "error").text == \
            "error: sentence is missing or blank; type a sentence to explain"
        assert [e["message"].split(" - ")[0] for e in console_errors(driver)] == \
            [f"{app.address}explain"]  # that answer's 400, nothing else

        urls = requested(driver)
        assert {urlsplit(url).hostname for url in urls} == {"127.0.0.1"}, urls
    finally:
        driver.quit()
        app.stop()


def test_the_exported_page_opens_with_no_network_request(trained_run, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    page = tmp_path / "explained.html"
    result = script("explain.py", "--checkpoint", trained_run, "--export", page,
                    "--sentence", SENTENCE, "--sentence", "the zebra is blue")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"wrote {page} (")
    driver = chromium(tmp_path, height=1400, network_log=True)
    try:
        driver.get(page.as_uri())
        assert shown(driver) == "shown"
        assert driver.find_element(By.ID, "translation").text == translated(trained_run, SENTENCE)
        check_sections(driver)
        Select(driver.find_element(By.CSS_SELECTOR, "#sentence-choice select")).select_by_index(1)
        assert driver.find_element(By.ID, "unknown").text.startswith(
            "Not in the model's vocabulary: zebra.")
        screenshot(driver, tmp_path, "explain-exported.png")
        assert requested(driver) == [page.as_uri()]  # the file itself, nothing else
        assert driver.execute_script(
            "return performance.getEntriesByType('resource').length") == 0
        assert not console_errors(driver)
    finally:
        driver.quit()
