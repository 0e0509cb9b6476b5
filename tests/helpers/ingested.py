"""A store that ingested given real files (and was rated), made once per test process and copied
for each test.

    inc = ingested(tmp_path / "inc.duckdb", FIRST)              # ingest_paths(FIRST, inc)
    full = ingested(tmp_path / "full.duckdb", FIRST, LATER)     # ingest_paths(FIRST, full); ingest_paths(LATER, full)
    first = rated(inc, [FIRST], "fide")                         # the same, then rate(con, "fide") on it

Ingesting the same files in the same order gives the same store, ids included (the tests that
compare an incremental store with a from-scratch one already rely on it), so a test that needs the
store of `batches` gets a copy of the one built the first time any test of its process asked for
it: `ingest_paths` runs once per batch, in order, on the first copy, exactly as the test would
have run it. The copy is the test's own; the kept original is never opened again. Only files
nobody changes may be named (`../shared/data`): a file's size and modification time are part of
the key, so a file changed between two calls is ingested again. `rated` does the same for a store
then rated once (`elopipe.rating.run.rate`), and returns that run's summary.
"""

from __future__ import annotations

import atexit
import copy
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from elopipe.ingest.driver import ingest_paths
from elopipe.rating.run import rate
from elopipe.rating.summary import RateSummary
from elopipe.store.connect import open_writer

Key = tuple[tuple[tuple[str, int, int], ...], ...]
_KEPT: dict[Key, Path] = {}
_RATED: dict[tuple[Key, str, tuple[tuple[str, object], ...]], tuple[Path, RateSummary]] = {}
_DIR: Path | None = None


def _key(batches: Sequence[Sequence[Path]]) -> Key:
    def one(p: Path) -> tuple[str, int, int]:
        st = os.stat(p)
        return (str(p), st.st_size, st.st_mtime_ns)

    return tuple(tuple(one(Path(p)) for p in batch) for batch in batches)


def _folder() -> Path:
    global _DIR
    if _DIR is None:
        _DIR = Path(tempfile.mkdtemp(prefix="elopipe-test-ingested-"))
        atexit.register(shutil.rmtree, _DIR, True)
    return _DIR


def ingested(db: Path, *batches: Sequence[Path]) -> Path:
    """`db`: a new store holding what `ingest_paths(batch, db)` for each of `batches`, in order,
    leaves in a new store; returns `db`."""
    key = _key(batches)
    kept = _KEPT.get(key)
    if kept is None:
        kept = _folder() / f"ingested{len(_KEPT)}.duckdb"
        for batch in batches:
            ingest_paths(list(batch), kept)
        # a closed store is one file: its write-ahead log was checkpointed at the close
        assert not kept.with_name(kept.name + ".wal").exists(), "the store was left with a WAL"
        _KEPT[key] = kept
    shutil.copyfile(kept, db)
    return db


def rated(db: Path, batches: Sequence[Sequence[Path]], system: str, **params: object) -> RateSummary:
    """`db`: a new store holding what `ingested(db, *batches)` then `rate(con, system, **params)`
    leave; returns the summary of that rate (the one run that made the kept store)."""
    key = (_key(batches), system, tuple(sorted(params.items())))
    kept = _RATED.get(key)
    if kept is None:
        path = ingested(_folder() / f"rated{len(_RATED)}.duckdb", *batches)
        with open_writer(path) as con:
            summary = rate(con, system, **params)
        assert not path.with_name(path.name + ".wal").exists(), "the store was left with a WAL"
        kept = _RATED[key] = (path, summary)
    shutil.copyfile(kept[0], db)
    return copy.deepcopy(kept[1])
