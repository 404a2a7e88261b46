"""Debian's headless Chromium driven by selenium through Debian's chromedriver (never a
browser download), for the tests of the project's pages: the report and the live Illustrated
Transformer. Under CI=true a missing Chromium, chromedriver or selenium fails the test;
elsewhere it is skipped with one line naming them."""

import json
import os
import shutil

import pytest

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--disable-default-apps", "--disable-extensions"]


def chromium(tmp_path, height=1600, network_log=False):
    """A new headless Chromium, 1200 x `height` pixels, its profile in `tmp_path`; with
    `network_log`, Chrome's DevTools network events are kept for `requested`, and it starts on
    a blank page whose own requests are already read."""
    missing = [path for path in (CHROMIUM, CHROMEDRIVER) if not shutil.which(path)]
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        missing.append("selenium (pip install selenium)")
    if missing:
        message = (f"the browser test needs {', '.join(missing)}: apt-get install chromium "
                   "chromium-driver; pip install -e '.[test]'")
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in [*FLAGS, f"--user-data-dir={tmp_path / 'profile'}", f"--window-size=1200,{height}"]:
        options.add_argument(flag)
    logs = {"browser": "ALL", **({"performance": "ALL"} if network_log else {})}
    options.set_capability("goog:loggingPrefs", logs)
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    if network_log:
        driver.get("about:blank")
        requested(driver)  # what the browser's own new-tab page loaded before the test's page
    return driver


def requested(driver) -> list[str]:
    """Every address the page asked for since the last call (Chrome's DevTools network
    events; the driver made with `network_log`)."""
    return [message["params"]["request"]["url"] for message in
            (json.loads(entry["message"])["message"] for entry in driver.get_log("performance"))
            if message["method"] == "Network.requestWillBeSent"]
