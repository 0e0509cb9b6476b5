"""The manifest file of an output folder (`.elopipe-manifest.json`, `elopipe.publish.manifest`):
reading it, and telling one of elopipe's from a file of the user's under its name. An entry
that names a path outside the folder, or of another form (an edited manifest), is dropped: an
edited manifest never makes elopipe touch another file."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

VERSION = 1

Files = dict[str, tuple[str, int, int]]


def foreign_manifest(path: Path) -> bool:
    """Whether what is at `path`, the manifest's name, is no manifest of any elopipe version: a
    link, a FIFO, a file that is not a JSON object with a "files" section. Not a folder (the save
    then fails in one line), nor nothing."""
    try:
        st = path.lstat()
    except OSError:
        return False
    if stat.S_ISDIR(st.st_mode):
        return False
    if not stat.S_ISREG(st.st_mode):
        return True
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return True
    return not (isinstance(data, dict) and "files" in data)


def load_manifest(path: Path) -> tuple[Files, Files, dict[str, tuple[str, list[str]]], str | None]:
    """The file entries (`files`, `found`), the page inputs of the manifest at `path` and its
    text as read (None: no manifest); empty when it is missing, unreadable or not ours."""
    if not path.is_file():  # a FIFO or folder under our name would hang or fail the read
        return {}, {}, {}, None
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text)
    except (OSError, ValueError):
        return {}, {}, {}, None
    files = data.get("files") if isinstance(data, dict) and data.get("version") == VERSION else None
    if not isinstance(files, dict):
        return {}, {}, {}, None
    inputs: dict[str, tuple[str, list[str]]] = {}
    raw = data.get("inputs")
    for key, entry in (raw if isinstance(raw, dict) else {}).items():
        if isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str) and isinstance(entry[1], list):
            inputs[str(key)] = (entry[0], [str(r) for r in entry[1] if inside(str(r))])
    return _files(files), _files(data.get("found")), inputs, text


def _files(raw: object) -> Files:
    """The well-formed entries of a manifest section (`files`, `found`): rel -> (digest, size,
    mtime_ns); an entry out of the folder or of another form (an edited manifest) is dropped."""
    out: Files = {}
    for rel, entry in (raw if isinstance(raw, dict) else {}).items():
        if not inside(str(rel)):  # an edited manifest never makes elopipe touch another file
            continue
        if isinstance(entry, list) and len(entry) == 3 and isinstance(entry[0], str):
            if isinstance(entry[1], int) and isinstance(entry[2], int):
                out[str(rel)] = (entry[0], entry[1], entry[2])
    return out


def inside(rel: str) -> bool:
    """Whether `rel` names a file under the folder: relative, with no `..` part, not under
    `KEPT` nor one of elopipe's own `.elopipe-` files (what `relative` records; anything else was
    written by hand)."""
    parts = rel.split("/")
    return (
        bool(rel)
        and not os.path.isabs(rel)
        and ".." not in parts
        and "" not in parts
        and not any(part.startswith(".elopipe-") for part in parts)
    )
