"""Benchmark: what the title norms (`elopipe.rating.norms_store.refresh`) add to a FIDE rating run.

Ingests the files named on the command line into a store in a temporary directory, then, from
the same ingested store each time, runs `rate(con, "fide")` from scratch twice with the norms
refresh replaced by a no-op (the baseline) and twice as shipped, and each time a second run with
nothing new. CPU seconds (the machine may be shared) and the ratio against the baseline of the
same run are printed, with the number of `title_norms` rows written.

Usage: ``.venv/bin/python bench/norms.py ../shared/data/pgn/olym22.pgn
../shared/data/pgn/fide_grand_swiss_2021_riga.pgn ../shared/data/pgn/tata2018.pgn
../shared/data/trf/``.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

from elopipe.ingest.driver import ingest_paths
from elopipe.rating import norms_store
from elopipe.rating.run import rate
from elopipe.store.connect import open_writer


def _run(src: Path, dst: Path, with_norms: bool) -> tuple[float, float, int]:
    shutil.copy(src, dst)
    real = norms_store.refresh
    if not with_norms:
        norms_store.refresh = lambda *a, **k: 0  # type: ignore[assignment]
    try:
        with open_writer(dst) as con:
            t = time.process_time()
            rate(con, "fide")
            full = time.process_time() - t
            rows = con.execute("SELECT count(*) FROM title_norms").fetchall()[0][0]
            t = time.process_time()
            rate(con, "fide")
            again = time.process_time() - t
    finally:
        norms_store.refresh = real  # type: ignore[method-assign]
    return full, again, int(rows)


def main(paths: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "ingested.duckdb"
        ingest_paths(paths, base)
        results: dict[bool, list[tuple[float, float, int]]] = {False: [], True: []}
        for i in range(2):
            for with_norms in (False, True):
                results[with_norms].append(_run(base, Path(tmp) / f"r{i}{with_norms}.duckdb", with_norms))
        for with_norms, runs in results.items():
            label = "with norms" if with_norms else "baseline  "
            full = min(r[0] for r in runs)
            again = min(r[1] for r in runs)
            ratio = full / min(r[0] for r in results[False])
            print(f"{label}: full rate {full:.2f} s CPU ({ratio:.2f}x), second run {again:.2f} s, rows {runs[0][2]}")


if __name__ == "__main__":
    main(sys.argv[1:])
