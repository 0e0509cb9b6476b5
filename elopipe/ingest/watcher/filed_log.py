"""What the drop folder keeps between runs about the files it filed away: `INBOX/.elopipe/filed-away.jsonl`.

A watch keeps an eye on each file it moved to processed/ or quarantine/ for an hour (see
`recheck`). That knowledge lived in memory: a restarted watch forgot it, and a stalled copy that
finished in processed/ after the restart was never loaded whole. It is kept here, in elopipe's own
folder of the inbox (a dot name: the watch never takes it as a dropped file), one JSON line per
event, appended as it happens (a file filed away; a file no longer watched), and rewritten whole
(a new file renamed over it) only once most of its lines are stale, so each file costs a few
appended bytes, however many are watched.

A line names files relative to the inbox (`processed/<name>` or `quarantine/<name>`, and the
file's inbox name), so a moved inbox keeps its memory; a line naming anything else (`../x`, a
sub-folder, a name no file system can hold) is left out with a warning: whoever can write to the
inbox must not make the watch move a file from elsewhere into it. A line also holds the filed
file's inode number, and that of the reason file elopipe wrote beside it (with its size and
mtime): a forged line naming a file or folder elopipe did not file moves nothing (`recheck`
moves back only the regular file of that inode), and a reason file the user dropped is never
removed.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import stat
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from elopipe.ingest.watcher.arrival import Signature
from elopipe.ingest.watcher.filing import InboxError, inbox_folder
from elopipe.ingest.watcher.outcomes import PROCESSED, QUARANTINE

ELOPIPE_FOLDER = ".elopipe"  # elopipe's own folder in the inbox
FILED_AWAY = "filed-away.jsonl"
# stale lines tolerated before a rewrite, beyond one per watched file: the rewrite's cost is
# then paid back by the appends it saved
SLACK_LINES = 64

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Filed:
    """One file filed away and watched: `target` (in processed/ or quarantine/) was `origin` in
    the inbox, read with signature `sig` (size in bytes, mtime in ns), filed at `at_ns`
    (`time.time_ns()`: a wall clock, as it outlives the process and is compared with mtimes);
    `ino` and `reason` tell the files elopipe wrote from any a user put under their names."""

    target: Path
    origin: Path
    sig: Signature
    at_ns: int
    ino: int  # the filed file's inode number: a move (link or rename) and an append keep it
    reason: ReasonId | None = None  # the reason file elopipe wrote beside it (quarantine/ only)


ReasonId = tuple[int, int, int]  # a reason file's (inode number, size in bytes, mtime in ns)


class FiledLog:
    """The file `INBOX/.elopipe/filed-away.jsonl`: `read()` once, then `filed()` and `forgotten()`
    as files are filed and dropped from the watch. Raises InboxError when `.elopipe` or the
    file is not a real folder or file (a symbolic link: elopipe never writes through one). A
    file system that refuses the write (full, read-only) is said once in a warning: the watch
    goes on, remembering in memory only."""

    def __init__(self, inbox: Path) -> None:
        self.inbox = Path(inbox)
        self.path = self.inbox / ELOPIPE_FOLDER / FILED_AWAY
        self._lines = 0  # lines in the file, stale ones included
        self._failed = False

    def read(self) -> dict[Path, Filed]:
        """The files still watched, by target, as the lines leave them (later lines win)."""
        folder = self.path.parent
        if not os.path.lexists(folder):
            return {}
        if folder.is_symlink() or not folder.is_dir():
            raise InboxError(
                f"{folder} is a symbolic link or not a folder; remove it (elopipe makes a real folder there)"
            )
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except FileNotFoundError:
            return {}
        except OSError as exc:  # a symbolic link (ELOOP), no permission
            raise InboxError(
                f"{self.path}: {exc.strerror}; remove it (elopipe writes a file of its own there)"
            ) from None
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise InboxError(
                    f"{self.path} is not a regular file; remove it (elopipe writes a file of its own there)"
                )
            lines = fh.read().splitlines()
        files: dict[Path, Filed] = {}
        bad = [n for n, line in enumerate(lines, 1) if not self._apply(line, files)]
        if len(bad) == 1:
            log.warning("%s: line %d not understood, left out", self.path, bad[0])
        elif bad:
            which = ", ".join(map(str, bad[:5])) + (", ..." if len(bad) > 5 else "")
            log.warning("%s: %d lines not understood, left out (lines %s)", self.path, len(bad), which)
        self._lines = len(lines)
        return files

    def _apply(self, line: bytes, files: dict[Path, Filed]) -> bool:
        """Apply one line to `files`; False when it is not one elopipe writes."""
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: a forged line of nested lists
            return False
        if not isinstance(entry, dict):
            return False
        if set(entry) == {"forget"}:
            target = self._target(entry["forget"])
            if target is None:
                return False
            files.pop(target, None)
            return True
        target = self._target(entry.get("filed"))
        origin = self._name(entry.get("from"))
        size, mtime_ns, at_ns, ino = (_count(entry.get(k)) for k in ("size", "mtime_ns", "at_ns", "ino"))
        if target is None or origin is None or size is None or mtime_ns is None or at_ns is None or ino is None:
            return False
        reason: ReasonId | None = None
        raw = entry.get("reason")
        if raw is not None:
            numbers = [n for n in map(_count, raw) if n is not None] if isinstance(raw, list) else []
            if len(numbers) != 3 or len(raw) != 3 or target.parent.name != QUARANTINE:  # none in processed/
                return False
            reason = (numbers[0], numbers[1], numbers[2])
        files[target] = Filed(target, self.inbox / origin, (size, mtime_ns), at_ns, ino, reason)
        return True

    def _target(self, text: object) -> Path | None:
        folder, _, name = text.partition("/") if isinstance(text, str) else ("", "", "")
        if folder not in (PROCESSED, QUARANTINE) or self._name(name) is None:
            return None
        return self.inbox / folder / name

    @staticmethod
    def _name(text: object) -> str | None:
        """`text` when it is one plain file name (no folder, not `.` or `..`, one the file system
        can hold: a lone surrogate such as \\ud800 has no bytes, surrogate escapes have)."""
        if not isinstance(text, str) or text in ("", ".", "..") or "/" in text or "\0" in text:
            return None
        try:
            os.fsencode(text)
        except UnicodeError:
            return None
        return text

    def filed(self, filed: Filed) -> None:
        """Append that `filed.target` is watched."""
        self._append([self._line(filed)])

    def forgotten(self, targets: Iterable[Path], watched: Iterable[Filed]) -> None:
        """Append that `targets` are no longer watched; rewrite the file with `watched` alone
        once its stale lines outnumber them (plus `SLACK_LINES`)."""
        self._append([{"forget": self._relative(t)} for t in targets])
        kept = list(watched)
        if self._lines > 2 * len(kept) + SLACK_LINES:
            self._rewrite(kept)

    @staticmethod
    def _relative(target: Path) -> str:
        return f"{target.parent.name}/{target.name}"

    def _line(self, filed: Filed) -> dict[str, object]:
        size, mtime_ns = filed.sig
        line: dict[str, object] = {"filed": self._relative(filed.target), "from": filed.origin.name, "size": size,
                                   "mtime_ns": mtime_ns, "at_ns": filed.at_ns, "ino": filed.ino}  # fmt: skip
        if filed.reason is not None:
            line["reason"] = list(filed.reason)
        return line

    @staticmethod
    def _text(lines: list[dict[str, object]]) -> bytes:
        # ASCII JSON: a name that is not UTF-8 (surrogate escapes) or holds a newline stays on its line
        return "".join(json.dumps(line, ensure_ascii=True) + "\n" for line in lines).encode("ascii")

    def _append(self, lines: list[dict[str, object]]) -> None:
        if not lines:
            return
        try:
            inbox_folder(self.inbox, ELOPIPE_FOLDER)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o666)
            try:
                os.write(fd, self._text(lines))
            finally:
                os.close(fd)
        except InboxError:
            raise
        except OSError as exc:
            self._say_failed(exc)
            return
        self._lines += len(lines)

    def _rewrite(self, kept: list[Filed]) -> None:
        """Replace the file by one holding `kept` alone: written under a free name in the same
        folder, then renamed over it (a stop in between leaves the old file whole)."""
        if os.path.islink(self.path):  # not elopipe's: never replaced (read() refuses it on the next start)
            self._say_failed(OSError(0, "a symbolic link took its name"))
            return
        lines = [self._line(f) for f in kept]
        try:
            fd, tmp = tempfile.mkstemp(
                prefix=f".{FILED_AWAY}.", suffix=".tmp", dir=inbox_folder(self.inbox, ELOPIPE_FOLDER)
            )
            try:
                with contextlib.suppress(FileNotFoundError):  # the mode the file had, not mkstemp's 0600
                    os.fchmod(fd, stat.S_IMODE(os.lstat(self.path).st_mode))
                with os.fdopen(fd, "wb") as fh:
                    fh.write(self._text(lines))
                os.replace(tmp, self.path)
            except BaseException:
                os.unlink(tmp)  # ours: mkstemp made it
                raise
        except OSError as exc:
            self._say_failed(exc)
            return
        self._lines = len(lines)

    def _say_failed(self, exc: OSError) -> None:
        if not self._failed:
            self._failed = True
            log.warning(
                "cannot write %s (%s): a restarted watch will not recheck the files filed away since",
                self.path,
                exc.strerror or exc,
            )


def _count(value: object) -> int | None:
    """`value` when it is a whole number of at least 0 (not a bool: JSON's true is no size)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
