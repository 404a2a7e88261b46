"""The report page in a real browser: Debian's headless Chromium driven by selenium through
Debian's chromedriver (never a browser download). No JavaScript error; the page's own
controls switch layer and head and point at a word; the weights shown are the model's to 4
decimals. Screenshots go to $REPORT_SCREENSHOTS (default: the test's temporary folder)."""

import os
from pathlib import Path

import numpy as np
import pytest
from chromium import chromium

from transformer.monitoring import attention_views, write_report
from transformer.run_folder import RunFolder

SENTENCES = ["1 2 3", "4 5 6 7 8"]

pytestmark = pytest.mark.acceptance


def shown_weights(driver):
    from selenium.webdriver.common.by import By

    return [float(e.text) for e in driver.find_elements(By.CSS_SELECTOR, "#keys .weight")]


def test_the_page_in_chromium_shows_the_models_weights(monitored_run, tmp_path):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    folder = RunFolder(monitored_run.path)
    views = attention_views(folder.load_model("best"), folder.vocab(), folder.tokenizer(),
                            SENTENCES)
    page = write_report(folder, views, tmp_path / "report.html")
    screenshots = Path(os.environ.get("REPORT_SCREENSHOTS", tmp_path))
    screenshots.mkdir(parents=True, exist_ok=True)
    driver = chromium(tmp_path)
    try:
        driver.get(page.as_uri())
        driver.find_element(By.CSS_SELECTOR, "#attention-heatmap .main-svg")  # Plotly drew
        driver.save_screenshot(str(screenshots / "report-top.png"))
        view = views[1]
        Select(driver.find_element(By.ID, "sentence")).select_by_index(1)
        Select(driver.find_element(By.ID, "kind")).select_by_value("encoder_attention")
        Select(driver.find_element(By.ID, "layer")).select_by_index(0)
        Select(driver.find_element(By.ID, "head")).select_by_index(1)
        word = driver.find_elements(By.CSS_SELECTOR, "#queries .query-token")[2]
        assert word.text == view["encoder_tokens"][2]
        ActionChains(driver).move_to_element(word).click().perform()
        assert driver.find_element(By.ID, "pointed").text == view["encoder_tokens"][2]
        assert np.allclose(shown_weights(driver), view["encoder_attention"][0][0, 1, 2],
                           atol=0.5e-4 + 1e-7)
        Select(driver.find_element(By.ID, "kind")).select_by_value("cross_attention")
        Select(driver.find_element(By.ID, "head")).select_by_index(0)
        last = driver.find_elements(By.CSS_SELECTOR, "#queries .query-token")[-1]
        ActionChains(driver).move_to_element(last).perform()
        rows = len(view["decoder_tokens"])
        assert np.allclose(shown_weights(driver), view["cross_attention"][0][0, 0, rows - 1],
                           atol=0.5e-4 + 1e-7)
        element = driver.find_element(By.ID, "attention-heatmap")
        driver.execute_script("arguments[0].scrollIntoView();", element)
        driver.save_screenshot(str(screenshots / "report-attention.png"))
        errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
        assert not errors, errors
    finally:
        driver.quit()


AXIS_TITLES = """return [...document.querySelectorAll('.js-plotly-plot')].map(plot => {
  const name = (id) => id[0] + "axis" + id.slice(1);  // "y2" -> "yaxis2"
  const used = new Set(plot._fullData.flatMap(t => [t.xaxis, t.yaxis])
    .filter(id => plot._fullLayout[name(id)].showticklabels));  // a shared axis: once
  const titles = [...plot.querySelectorAll('text')].filter(t =>
    /^[xy][0-9]*title$/.test(t.getAttribute('class') || '') && t.textContent.trim());
  return [plot.id, used.size, titles.length];
});"""
CURVES = ["loss", "perplexity", "validation token accuracy and exact match",
          "validation BLEU and chrF", "learning rate", "gradient norm before clipping",
          "throughput"]


def test_the_page_shows_every_curve_the_results_and_every_head_offline(monitored_run,
                                                                        tmp_path):
    """Every logged curve under its panel title, an axis title on every plot, the held-out
    table, the configuration, the all-heads grid (heads + their average) and the average in
    the head chooser; the page loads nothing from anywhere and stays within 6 MB."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    folder = RunFolder(monitored_run.path)
    views = attention_views(folder.load_model("best"), folder.vocab(), folder.tokenizer(),
                            SENTENCES)
    page = write_report(folder, views, tmp_path / "report.html")
    assert page.stat().st_size <= 6 * 2**20
    driver = chromium(tmp_path)
    try:
        driver.get(page.as_uri())
        grid = driver.find_element(By.CSS_SELECTOR, "#attention-grid .main-svg")
        driver.execute_script("arguments[0].scrollIntoView();", grid)
        driver.save_screenshot(str(Path(os.environ.get("REPORT_SCREENSHOTS", tmp_path))
                                   / "report-grid.png"))
        titles = [e.text for e in driver.find_elements(By.CSS_SELECTOR,
                                                        "#curves .annotation-text")]
        assert titles == CURVES
        legend = set(driver.execute_script(  # each panel has its own legend: legendNtext
            "return [...document.querySelectorAll('#curves text')].filter(t => "
            "/^legend[0-9]*text$/.test(t.getAttribute('class'))).map(t => t.textContent)"))
        assert {"training loss (label-smoothed, dropout on)",
                "training cross-entropy (plain, dropout on)",
                "validation cross-entropy (plain, no dropout)",
                "training perplexity (plain, dropout on)", "validation perplexity",
                "validation chrF", "gradient norm"} <= legend
        assert driver.execute_script(
            "return new Set([...document.querySelectorAll('#curves g')].map(g => "
            "g.getAttribute('class')).filter(c => /^legend[0-9]*$/.test(c))).size") == \
            len(CURVES)  # one legend a panel
        drawn = driver.execute_script(AXIS_TITLES)
        assert [plot for plot, _, _ in drawn] == ["curves", "flow", "attention-heatmap",
                                                  "attention-grid"]
        for plot, axes, titles in drawn:
            assert titles == axes, plot  # every axis that labels data has its title
        heads = len(views[0]["cross_attention"][0][0])
        assert driver.execute_script(
            "return document.getElementById('attention-grid').data.map(t => t.type)") == \
            ["heatmap"] * (heads + 1)
        grid_titles = driver.execute_script(
            "return [...document.querySelectorAll('#attention-grid text')].filter(t => "
            "/^x[0-9]*title$/.test(t.getAttribute('class'))).map(t => t.textContent)")
        assert grid_titles == [f"head {h}: attended to" for h in range(1, heads + 1)] + \
            ["average of the heads: attended to"]
        chooser = Select(driver.find_element(By.ID, "head"))
        assert chooser.options[-1].text == "average of the heads"
        chooser.select_by_index(heads)
        expected = views[0]["cross_attention"][0][0].mean(axis=0)[0]
        assert np.allclose(shown_weights(driver), expected, atol=0.5e-4 + 1e-6)
        splits = driver.find_elements(By.CSS_SELECTOR, "#held-out tr td:first-child")
        assert [e.text for e in splits][:1] == ["test"]
        names = driver.execute_script(
            "return [...document.querySelectorAll('#configuration td:first-child')]"
            ".map(e => e.textContent)")
        assert {"model.d_model", "training.steps", "task.name"} <= set(names)
        assert driver.execute_script(
            "return performance.getEntriesByType('resource').map(e => e.name)") == []
        errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
        assert not errors, errors
    finally:
        driver.quit()
