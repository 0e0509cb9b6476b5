"""Finding the files to ingest: folders (recursive), single files, and .gz/.bz2/.zip archives.

A `Source` is one stream of bytes with a stable name: a plain file, or one member of an archive
(`member` set). Reading the bytes is deferred so discovery stays cheap for large folders.
"""

from __future__ import annotations

import bz2
import gzip
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

CHESS_SUFFIXES = {".pgn", ".trf", ".txt"}
ARCHIVE_SUFFIXES = {".gz", ".bz2", ".zip"}


@dataclass(frozen=True)
class Source:
    """One file, or one member of an archive. `path` is absolute."""

    path: str
    member: str | None = None

    @property
    def display(self) -> str:
        return f"{self.path}!{self.member}" if self.member else self.path

    @property
    def suffix(self) -> str:
        """The suffix that decides the format: of the member, or of the path without .gz/.bz2."""
        name = self.member or self.path
        p = Path(name)
        if not self.member and p.suffix.lower() in {".gz", ".bz2"}:
            p = p.with_suffix("")
        return p.suffix.lower()

    def read_bytes(self) -> bytes:
        """The decompressed bytes. Raises OSError, zipfile.BadZipFile, EOFError or gzip.BadGzipFile
        for unreadable files; the caller records those as rejected."""
        lower = self.path.lower()
        if self.member is not None:
            with zipfile.ZipFile(self.path) as zf:
                return zf.read(self.member)
        if lower.endswith(".gz"):
            with gzip.open(self.path, "rb") as fh:
                return fh.read()
        if lower.endswith(".bz2"):
            with bz2.open(self.path, "rb") as fh:
                return fh.read()
        return Path(self.path).read_bytes()


@dataclass
class Discovery:
    sources: list[Source]
    skipped: list[tuple[str, str]]  # (path, why) files seen in folders but not chess files
    missing: list[str]  # paths given that do not exist


def discover(paths: list[str | os.PathLike[str]]) -> Discovery:
    """Expand `paths` into sources, in a stable (sorted) order.

    Folders are walked recursively; inside them only chess suffixes (.pgn .trf .txt) and archives
    (.gz .bz2 .zip) are taken, other files are listed in `skipped` with the reason. A file named
    explicitly is always taken (its format is then detected by content). Zip members are expanded
    here (a corrupt zip becomes one source that fails when read).
    """
    out: list[Source] = []
    skipped: list[tuple[str, str]] = []
    missing: list[str] = []
    for raw in paths:
        p = Path(raw).expanduser()
        if not p.exists():
            missing.append(str(raw))
            continue
        if p.is_dir():
            for f in sorted(q for q in p.rglob("*") if q.is_file()):
                if f.name.startswith("."):
                    continue
                suf = f.suffix.lower()
                if suf in CHESS_SUFFIXES or suf in ARCHIVE_SUFFIXES:
                    out.extend(_expand(f))
                else:
                    skipped.append((str(f.resolve()), f"not a chess file suffix ({suf or 'none'})"))
        else:
            out.extend(_expand(p))
    return Discovery(out, skipped, missing)


def _expand(p: Path) -> list[Source]:
    path = str(p.resolve())
    if p.suffix.lower() == ".zip":
        try:
            with zipfile.ZipFile(path) as zf:
                members = sorted(i.filename for i in zf.infolist() if not i.is_dir())
        except (zipfile.BadZipFile, OSError):
            return [Source(path)]  # fails on read and is recorded as rejected
        return [Source(path, m) for m in members if not Path(m).name.startswith(".")]
    return [Source(path)]
