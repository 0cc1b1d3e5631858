"""The report card of the README's DP-SGD in a real browser: headless Chromium (Debian's
``chromium`` package; CI installs it with ``apt-get install -y chromium``) opens the file,
logs no console message (the page has no script, so any message is an error or a blocked
load: its Content-Security-Policy reports every attempt to fetch something), and its
screenshot is not blank. Skipped, with the reason, where no Chromium is installed.

``DPACCOUNT_SCREENSHOT=path`` keeps the screenshot (docs/report_dpsgd.png is one)."""
import os
import shutil
import subprocess

import numpy as np
import pytest

import dpaccount as dp

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
BROWSER = next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)
pytestmark = pytest.mark.skipif(BROWSER is None, reason="no Chromium installed (Debian: apt-get install -y chromium)")


def _open(page, tmp_path, size=(1200, 3000)):
    """(console lines, screenshot as an RGB array) of ``page`` in headless Chromium."""
    Image = pytest.importorskip("PIL.Image")
    shot = tmp_path / "shot.png"
    run = subprocess.run([BROWSER, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                          "--no-first-run", "--enable-logging=stderr", "--v=0",
                          f"--user-data-dir={tmp_path / 'profile'}", f"--window-size={size[0]},{size[1]}",
                          f"--screenshot={shot}", f"file://{page}"],
                         capture_output=True, text=True, timeout=120)
    assert shot.exists(), f"Chromium wrote no screenshot (exit {run.returncode}): {run.stderr[-2000:]}"
    console = [line for line in run.stderr.splitlines() if ":CONSOLE" in line]
    return console, np.asarray(Image.open(shot).convert("RGB"))


def _not_blank(pixels):
    ink = np.any(pixels < 200, axis=2)  # darker than light grey: text, lines, borders
    colours = np.unique(pixels.reshape(-1, 3)[::97], axis=0)
    return ink.mean() > 0.01 and len(colours) > 20


def test_the_check_sees_console_errors_and_blocked_loads(tmp_path):
    """The test of the test: a page with a script error and an external image is caught."""
    page = tmp_path / "bad.html"
    page.write_text('<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" '
                    'content="img-src data:"></head><body><p>x</p><img src="https://example.com/a.png">'
                    "<script>undefinedFunction()</script></body></html>")
    console, pixels = _open(page, tmp_path, (400, 300))
    assert any("undefinedFunction" in line for line in console)
    assert any("Content Security Policy" in line for line in console)
    assert not _not_blank(pixels)


def test_the_readme_dpsgd_report_renders_in_chromium(tmp_path):
    pytest.importorskip("matplotlib")
    sgd = dp.Composition()([dp.PoissonSampling()(dp.GaussianMechanism(sigma=1.1), 256 / 60000)], [14063])
    page = dp.report(sgd).to_html(str(tmp_path / "report.html"))
    console, pixels = _open(page, tmp_path)
    assert console == [], console
    assert _not_blank(pixels)
    keep = os.environ.get("DPACCOUNT_SCREENSHOT")
    if keep:
        shutil.copyfile(tmp_path / "shot.png", keep)
