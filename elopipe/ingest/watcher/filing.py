"""Filing a dropped file away: to `INBOX/processed/` or `INBOX/quarantine/` (with its reason
file), under a name nothing there uses, never replacing or writing through a file or symbolic
link of the user's."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from elopipe.ingest.watcher.outcomes import QUARANTINE, FileOutcome
from elopipe.read.control_chars import escape_controls
from elopipe.read.sources import text_path
from elopipe.runtime.errors import ElopipeError

REASON_SUFFIX = ".reason.txt"

# A file name's limit on Linux and macOS file systems, in bytes
NAME_MAX = 255


def shown(name: str) -> str:
    """A file name for a one-line message: bytes that are not UTF-8 and control characters (a
    newline in a name would start a forged line) written \\xNN."""
    return escape_controls(text_path(name))


def _taken(path: Path) -> bool:
    """Whether a name is in use by anything, a symbolic link included, also one to nothing
    (`Path.exists` follows a link: a dangling one would be reused, and written through)."""
    return os.path.lexists(path) or os.path.lexists(str(path) + REASON_SUFFIX)


def unique_destination(folder: Path, name: str) -> Path:
    """`folder/name`, or `folder/<stem>.<UTC timestamp>[-n]<suffix>` if that name or its
    `.reason.txt` is in use already, by a file or a symbolic link even to nothing (the same name
    dropped twice with different contents must not overwrite the first; a user's link is never
    replaced nor written through), the stem shortened when the name and its `.reason.txt` would
    pass the file system's `NAME_MAX` bytes (a 246-byte name stopped `watch`)."""
    if len(os.fsencode(name + REASON_SUFFIX)) <= NAME_MAX:
        target = folder / name
        if not _taken(target):
            return target
    stem, suffix = os.path.splitext(name)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    n = 0
    while True:
        tail = f".{stamp}{'-' + str(n) if n else ''}{suffix}"
        room = NAME_MAX - len(os.fsencode(tail + REASON_SUFFIX))
        cut = stem
        while len(os.fsencode(cut)) > room:
            cut = cut[:-1]
        candidate = folder / f"{cut}{tail}"
        if not _taken(candidate):
            return candidate
        n += 1


class InboxError(ElopipeError, RuntimeError):
    """The inbox's processed/ or quarantine/ is not a real folder (a symbolic link, a file)."""

    exit_code = 2


def inbox_folder(inbox: Path, name: str) -> Path:
    """`inbox/name` (processed/ or quarantine/), created if missing. Raises InboxError if it is a
    symbolic link or not a folder: whoever can write to the inbox could otherwise have dropped
    files moved into any folder the watcher may write to."""
    folder = Path(inbox) / name
    if not folder.is_symlink():
        folder.mkdir(parents=True, exist_ok=True)
    if folder.is_symlink() or not folder.is_dir():
        raise InboxError(f"{folder} is a symbolic link or not a folder; remove it (elopipe makes a real folder there)")
    return folder


def file_away(inbox: Path, path: Path, outcome: FileOutcome) -> Path:
    """Move `path` to processed/ or quarantine/ (writing the reason file for the latter) under a
    name nothing uses (`unique_destination`): no file or symbolic link of the user's there is
    replaced or written through, also one made meanwhile (the reason file is created only when
    its name is free, never through a link; the file is moved by a hard link that fails on a
    name in use). Returns the new path. Raises InboxError (see `inbox_folder`)."""
    folder = inbox_folder(inbox, outcome.goes_to)
    while True:
        target = unique_destination(folder, path.name)
        reason_file = Path(str(target) + REASON_SUFFIX)
        if outcome.goes_to == QUARANTINE:
            reason = outcome.reason or "rejected (no reason given)"
            text = f"{shown(path.name)}: {reason}\nquarantined at {datetime.now(UTC).isoformat(timespec='seconds')}\n"
            try:
                _create(reason_file, text.encode("utf-8"))
            except FileExistsError:  # taken since it was looked at: another name
                continue
        if move_to_free_name(path, target):
            return target
        if outcome.goes_to == QUARANTINE:
            reason_file.unlink(missing_ok=True)  # ours: made above with O_EXCL


def _create(path: Path, data: bytes) -> None:
    """Write `data` to a new file `path`; FileExistsError when the name is in use by anything,
    a symbolic link included (O_EXCL never follows one, O_NOFOLLOW says so twice)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def move_to_free_name(path: Path, target: Path) -> bool:
    """Move `path` to `target` unless that name is in use; False when it is. A hard link then an
    unlink: `os.replace` would replace what took the name since `unique_destination` looked. A
    file system without hard links gets `os.replace` after one more look."""
    try:
        os.link(path, target, follow_symlinks=False)
    except FileExistsError:
        return False
    except OSError:  # no hard links here (some network or FAT file systems)
        if os.path.lexists(target):
            return False
        os.replace(path, target)
        return True
    os.unlink(path)
    return True
