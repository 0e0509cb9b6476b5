"""The journal of a publish: each file elopipe writes into an output folder, as it writes it.

The manifest (`elopipe.publish.manifest`) is saved at the end of a publish and every few seconds
during it. A publish killed in between (kill -9, a SIGTERM, a power cut) left files that no saved
manifest recorded; the next publish found them holding what it was about to write and took them
for the user's (`found`), so that a later publish never removed them and kept copies of them
under `.elopipe-kept/` before writing over them. `.elopipe-journal` closes that window: one line
per file written, appended (not flushed to disk: a killed process's writes reach the file) right
after the file, with what the manifest records of it, and one per page made (its key, the digest
of its inputs and its files). The next publish adopts each file that is still as the line says
(same size and modification time) as elopipe's, and each page (so that it is retired when its
event goes, or skipped when its inputs did not change), then clears the journal once its
manifest is saved. A file of the user's under the journal's name is not one: it is kept
(as any file of the user's under a name elopipe writes) before a journal is written there.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

JOURNAL = ".elopipe-journal"

Entry = tuple[str, str, int, int]  # rel, digest, size in bytes, modification time in ns
Page = tuple[str, str, list[str]]  # page key, digest of its inputs, its files (rels)


class Journal:
    """The journal of the output folder `root`. Never raises: a journal that cannot be written
    only leaves the window it closes open."""

    def __init__(self, root: Path) -> None:
        self.path = root / JOURNAL
        self._fd: int | None = None
        self._dirty = False  # lines appended since the last `clear`
        self._left = False  # `read` found the lines a publish that did not finish left

    def read(self) -> tuple[list[Entry], list[Page]] | None:
        """The files and pages (`Manifest.made`) a publish that did not finish recorded (nothing
        when there is no journal); None when the file under the journal's name is not one (a link,
        a folder, a file of other text). The last line may be cut (the kill came while it was
        written): it is left out."""
        try:
            st = self.path.lstat()
        except OSError:
            return [], []
        if not stat.S_ISREG(st.st_mode):
            return None
        try:
            lines = self.path.read_text(encoding="utf-8").split("\n")
        except (OSError, ValueError):
            return None
        files: list[Entry] = []
        pages: list[Page] = []
        for n, line in enumerate(lines):
            entry = _entry(line)
            if entry is None:
                if line and n < len(lines) - 1:  # not the last, cut line: not a journal
                    return None
                continue
            if len(entry) == 3:
                pages.append(entry)
            else:
                files.append(entry)
        self._left = bool(files or pages)
        return files, pages

    def append(self, entry: Entry | Page) -> None:
        """Record a file just written, or a page just made (the caller holds its manifest's lock)."""
        try:
            if self._fd is None:
                flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
                self._fd = os.open(self.path, flags, 0o644)
            os.write(self._fd, (json.dumps(list(entry), separators=(",", ":")) + "\n").encode("utf-8"))
            self._dirty = True
        except OSError:
            return

    def clear(self) -> None:
        """Empty the journal: the manifest that records its files is saved."""
        try:
            if self._fd is not None:
                os.ftruncate(self._fd, 0)
            elif self._left:  # the journal a killed publish left, now in the saved manifest
                self.path.unlink()
                self._left = False
            self._dirty = False
        except OSError:
            return

    def close(self) -> None:
        """Close it; an empty journal goes (a non-empty one stays: its manifest was not saved)."""
        if self._fd is None:
            return
        try:
            os.close(self._fd)
            if not self._dirty:
                self.path.unlink()
        except OSError:
            pass
        self._fd = None


def _entry(line: str) -> Entry | Page | None:
    try:
        raw = json.loads(line)
    except ValueError:
        return None
    if isinstance(raw, list) and len(raw) == 3:  # a page: key, digest, files
        key, digest, rels = raw
        if isinstance(key, str) and isinstance(digest, str) and isinstance(rels, list):
            if all(isinstance(r, str) for r in rels):
                return key, digest, rels
        return None
    if not (isinstance(raw, list) and len(raw) == 4):
        return None
    rel, key, size, mtime = raw
    if isinstance(rel, str) and isinstance(key, str) and isinstance(size, int) and isinstance(mtime, int):
        return rel, key, size, mtime
    return None
