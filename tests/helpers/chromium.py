"""Headless Chromium for the HTML tests: the DOM a page has once its scripts ran.

Starting Chromium costs about 1.5 s of wall time; a test process that renders dozens of pages
starts ONE browser (the first time a test asks for a page's DOM) and opens each page in a new
browser context of it (its own cookies and storage, as a fresh profile has), through the DevTools
protocol. Screenshots and PDF prints still run a browser of their own (`run` with other flags).
"""

from __future__ import annotations

import atexit
import itertools
import json
import re
import shutil
import subprocess
import tempfile
import threading
from collections import deque
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SKIP_REASON = "chromium is not installed (Debian: apt-get install -y chromium); browser test skipped"
# the most a browser may take to answer one request (a safety cap, as `run`'s own timeout)
_TIMEOUT = 120
_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def run(profile: Path, url: str, *extra: str) -> subprocess.CompletedProcess[str]:
    """Headless chromium on `url` with the flags `extra` (`--dump-dom`, `--screenshot=...`,
    `--print-to-pdf=...`) and a throw-away profile under `profile`; never raises on its exit.
    `--dump-dom` alone is answered by the process's shared browser (`page_dom`), with the same
    stdout (the DOM after the load event), return code 0, or 1 and the error in stderr."""
    assert CHROMIUM is not None
    if extra == ("--dump-dom",):
        try:
            return subprocess.CompletedProcess([CHROMIUM, url, *extra], 0, page_dom(url), "")
        except BrowserError as e:
            return subprocess.CompletedProcess([CHROMIUM, url, *extra], 1, "", str(e))
    cmd = [CHROMIUM, *_FLAGS, f"--user-data-dir={profile / 'chromium-profile'}", *extra, url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=_TIMEOUT, check=False)


def dump_dom(profile: Path, url: str) -> str:
    """The DOM of `url` after load (as `--dump-dom` gives it). Fails the test when chromium
    reports an error. `profile`: kept for the callers; the shared browser has its own."""
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


class BrowserError(RuntimeError):
    """The shared browser failed to start, to load a page or to answer; the message says why."""


class _Browser:
    """One headless Chromium driven over its DevTools websocket (flattened target sessions)."""

    def __init__(self) -> None:
        from websockets.sync.client import connect

        assert CHROMIUM is not None
        self.folder = Path(tempfile.mkdtemp(prefix="elopipe-test-chromium-"))
        self.proc = subprocess.Popen(
            [CHROMIUM, *_FLAGS, "--remote-debugging-port=0", f"--user-data-dir={self.folder}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.stderr: deque[str] = deque(maxlen=50)
        found = threading.Event()
        self.ws_url = ""

        def drain() -> None:  # reads stderr to its end, so that the browser never blocks on it
            assert self.proc.stderr is not None
            for line in self.proc.stderr:
                self.stderr.append(line)
                m = re.search(r"DevTools listening on (ws://\S+)", line)
                if m and not found.is_set():
                    self.ws_url = m.group(1)
                    found.set()
            found.set()  # the browser ended before it listened: the caller reports stderr

        threading.Thread(target=drain, daemon=True).start()
        if not found.wait(_TIMEOUT) or not self.ws_url:
            self.close()
            raise BrowserError("chromium did not start its DevTools endpoint:\n" + "".join(self.stderr))
        self.ws = connect(self.ws_url, max_size=None, open_timeout=_TIMEOUT)
        self.ids = itertools.count(1)
        self.events: list[dict[str, Any]] = []

    def alive(self) -> bool:
        return self.proc.poll() is None

    def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        """Send one command; the events received before its answer go to `self.events`."""
        msg_id = next(self.ids)
        msg: dict[str, Any] = {"id": msg_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        self.ws.send(json.dumps(msg))
        while True:
            reply = json.loads(self.ws.recv(timeout=_TIMEOUT))
            if reply.get("id") == msg_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return dict(reply.get("result", {}))
            self.events.append(reply)

    def wait_event(self, method: str, session: str) -> dict[str, Any]:
        """The next event `method` of `session` (events already received first)."""
        for i, ev in enumerate(self.events):
            if ev.get("method") == method and ev.get("sessionId") == session:
                del self.events[i]
                return ev
        while True:
            ev = json.loads(self.ws.recv(timeout=_TIMEOUT))
            if ev.get("method") == method and ev.get("sessionId") == session:
                return dict(ev)

    def dom(self, url: str) -> str:
        """`document.documentElement.outerHTML` of `url` once its load event fired, in a new
        browser context closed afterwards."""
        self.events = []
        context = self.call("Target.createBrowserContext")["browserContextId"]
        try:
            target = self.call("Target.createTarget", {"url": "about:blank", "browserContextId": context})["targetId"]
            session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            self.call("Page.enable", session=session)
            nav = self.call("Page.navigate", {"url": url}, session=session)
            if nav.get("errorText"):
                raise BrowserError(f"{url}: {nav['errorText']}")
            self.wait_event("Page.loadEventFired", session)
            res = self.call(
                "Runtime.evaluate",
                {"expression": "document.documentElement.outerHTML", "returnByValue": True},
                session=session,
            )
            if "exceptionDetails" in res:
                raise BrowserError(f"{url}: {res['exceptionDetails']}")
            return str(res["result"]["value"])
        finally:
            self.call("Target.disposeBrowserContext", {"browserContextId": context})

    def close(self) -> None:
        if getattr(self, "ws", None) is not None:
            self.ws.close()
        self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


_SHARED: _Browser | None = None


def page_dom(url: str) -> str:
    """The DOM of `url` after its load event, from the test process's shared browser (started
    the first time, started again if it ended). Raises BrowserError when the page cannot load."""
    global _SHARED
    if _SHARED is None or not _SHARED.alive():
        _SHARED = _Browser()
        atexit.register(_SHARED.close)
    try:
        return _SHARED.dom(url)
    except BrowserError as e:
        raise BrowserError(f"{e}\n{''.join(_SHARED.stderr)}") from e
