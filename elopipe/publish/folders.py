"""The folders inside an output folder that elopipe writes into, checked before a publish.

A publish writes `lists/`, `reports/<system>/` and `players/<system>/` under its `--out`, moves
a file of the user's found under a name it publishes to `.elopipe-kept/`, and removes the files
of pages the store no longer holds. Were one of those folders a symbolic link (`out/reports/fide
-> /home/me/victim`), every one of these would happen wherever the link leads: files written
outside `--out`, the user's files there moved out of their folder or removed. A file where a
folder is expected (`out/players` a regular file) would fail the publish half way, after the
ledger was written. Both are refused before anything is read or written (`check_folders`, exit 2
as a usage error, as `watch` refuses a `processed/` that is a link). `--out` itself may be a link
(`out -> /srv/www/ratings`): the user named it. This module imports nothing heavy: the CLI asks
it before a command starts.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from elopipe.runtime.errors import ElopipeError


class OutFolderError(ElopipeError, OSError):
    """A folder inside the output folder that elopipe writes into is a symbolic link, or is not a
    folder; `str()` is one line naming it. A usage error (exit 2): nothing was read or written."""

    exit_code = 2

    def __init__(self, message: str) -> None:
        super().__init__(None, message)

    def __str__(self) -> str:
        return str(self.strerror)


def publish_folders(*systems: str) -> list[str]:
    """The folders (relative to the output folder, '/' separators) a publish of `systems` writes
    into or removes files from: the lists, each system's reports and players' pages, with the
    folders that hold them (`elopipe.publish.outputs.publish_outputs`' layout)."""
    return ["lists", "reports", *(f"reports/{s}" for s in systems), "players", *(f"players/{s}" for s in systems)]


def folder_problem(out: Path, folders: Iterable[str]) -> str | None:
    """Why elopipe may not write into one of `folders` (relative to `out`), in words naming it, or
    None: it, or a folder on the way to it from `out`, is a symbolic link (it may lead anywhere,
    out of `out` included), or exists and is not a folder. A folder that does not exist yet is
    fine: elopipe makes it. One `lstat` per folder named."""
    for rel in folders:
        where = out
        for part in rel.split("/"):
            where = where / part
            try:
                st = where.lstat()
            except FileNotFoundError:
                break  # made by the publish, as a real folder
            except OSError as exc:
                return f"{where} cannot be read ({(exc.strerror or 'refused').lower()})"
            if stat.S_ISLNK(st.st_mode):
                target = os.readlink(where)
                return (
                    f"{where} is a symbolic link (to {target}); elopipe writes only into real folders"
                    f" inside {out}: make {where} a folder"
                )
            if not stat.S_ISDIR(st.st_mode):
                return f"{where} is a file, not a folder" if stat.S_ISREG(st.st_mode) else f"{where} is not a folder"
    return None


def check_folders(out: Path, folders: Iterable[str], doing: str = "publish to") -> None:
    """Raise OutFolderError, 'cannot {doing} {out}: {why}', when `folder_problem` finds one of
    `folders` (relative to `out`) elopipe may not write into."""
    problem = folder_problem(out, folders)
    if problem:
        raise OutFolderError(f"cannot {doing} {out}: {problem}")


def link_between(root: Path, folder: str) -> str | None:
    """The first folder from `root` (excluded) down to `folder` (an absolute path, included) that
    is a symbolic link, or None (also when `folder` is not under `root`, or does not exist):
    what `elopipe.publish.manifest` asks before it writes, keeps or removes a file in `folder`."""
    rel = os.path.relpath(folder, root)
    if rel == "." or rel == ".." or rel.startswith(".." + os.sep):
        return None
    where = str(root)
    for part in rel.split(os.sep):
        where = os.path.join(where, part)
        if os.path.islink(where):
            return where
    return None
