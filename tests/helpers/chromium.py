"""Headless Chromium for the HTML tests: the DOM a page has once its scripts ran."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SKIP_REASON = "chromium is not installed (Debian: apt-get install -y chromium); browser test skipped"


def run(profile: Path, url: str, *extra: str) -> subprocess.CompletedProcess[str]:
    """Headless chromium on `url` with the flags `extra` (`--dump-dom`, `--screenshot=...`,
    `--print-to-pdf=...`) and a throw-away profile under `profile`; never raises on its exit."""
    assert CHROMIUM is not None
    cmd = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={profile / 'chromium-profile'}",
        *extra,
        url,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)


def dump_dom(profile: Path, url: str) -> str:
    """The DOM of `url` after load (`--dump-dom`), with a throw-away profile under `profile`.
    Fails the test when chromium exits with an error."""
    res = run(profile, url, "--dump-dom")
    assert res.returncode == 0, res.stderr[-2000:]
    assert 'data-ready="1"' in res.stdout, "the page's script did not run"
    return res.stdout


def table_rows(dom: str, table_id: str) -> list[list[str]]:
    """The visible rows of the table `table_id`, as lists of cell texts (a section heading row
    is one cell)."""
    body = dom.split(f'id="{table_id}"', 1)[1].split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    rows = []
    for attrs, inner in re.findall(r"<tr([^>]*)>(.*?)</tr>", body, flags=re.S):
        if "display: none" in attrs:
            continue
        cells = re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", inner, flags=re.S)
        rows.append([re.sub(r"<[^>]+>", "", c).strip() for c in cells])
    return rows
