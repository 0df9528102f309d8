"""Headless Chromium for the browser tests: Debian's ``chromium`` and ``chromedriver`` driven by
Selenium (no browser or driver is downloaded); a test module is skipped cleanly where any is
missing."""

from __future__ import annotations

import contextlib
import shutil
from typing import Iterator

import pytest

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
CHROMIUM = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
CHROMEDRIVER = shutil.which("chromedriver")
if CHROMIUM is None or CHROMEDRIVER is None:
    pytest.skip("headless Chromium and chromedriver are not installed (apt-get install chromium chromium-driver)",
                allow_module_level=True)


@contextlib.contextmanager
def headless_chromium(width: int, height: int) -> Iterator["webdriver.Chrome"]:
    """A headless Chromium window of ``width`` x ``height`` that keeps the browser's console log,
    quit however the block ends."""
    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--window-size={width},{height}", "--no-first-run", "--disable-extensions"):
        options.add_argument(arg)
    options.binary_location = CHROMIUM
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path=CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
