"""A daemon thread that calls a function every few seconds while a block runs: the one mechanism
behind the progress lines of long commands (`ingest` off a terminal, `publish`'s progress)."""

from __future__ import annotations

import threading
from collections.abc import Callable


class Heartbeat:
    """Call `beat()` every `every` seconds (monotonic waits, not the wall clock) from a daemon
    thread while the `with` block runs; `enabled=False` starts no thread. The first call comes
    after `every` seconds, so a short block makes none. Leaving the block stops the thread and
    waits for it: no call comes after the block."""

    def __init__(self, every: float, beat: Callable[[], None], enabled: bool = True) -> None:
        self.every = every
        self._beat = beat
        self._enabled = enabled
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Heartbeat:
        if self._enabled:
            self._thread = threading.Thread(target=self._run, name="elopipe-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self._beat()
