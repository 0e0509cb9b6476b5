"""Benchmark: what the title norms (`elopipe.rating.fide.norms_store.refresh`) add to a FIDE rating run.

Ingests the files named on the command line into a store in a temporary directory, then, from
the same ingested store each time, runs `rate(con, "fide")` from scratch twice with the norms
refresh replaced by a no-op (the baseline), twice with every norm row decided per applicant
(`evaluate_events(..., set_based=False)`, the rules before the set-based pass) and twice as
shipped, and each time a second run with nothing new. CPU seconds (the machine may be shared)
and the ratio against the baseline of the same run are printed, with the number of
`title_norms` rows written; then the CPU seconds of `refresh` alone on the rated store, best of
three, per applicant and as shipped.

Usage: ``.venv/bin/python bench/norms.py ../shared/data/pgn/olym22.pgn
../shared/data/pgn/fide_grand_swiss_2021_riga.pgn ../shared/data/pgn/tata2018.pgn
../shared/data/trf/``.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from elopipe.ingest.driver import ingest_paths
from elopipe.rating.fide import norms_store
from elopipe.rating.run import rate
from elopipe.store.connect import open_writer

VARIANTS = {"baseline": "baseline      ", "each": "per applicant ", "shipped": "with norms    "}


def _per_applicant(evaluate: Callable[..., Any]) -> Callable[..., Any]:
    """`evaluate` deciding every batch per applicant, whatever its size (`refresh` chooses by size)."""
    return lambda *a, **k: evaluate(*a, **{**k, "set_based": False})


def _run(src: Path, dst: Path, variant: str) -> tuple[float, float, int]:
    shutil.copy(src, dst)
    real, evaluate = norms_store.refresh, norms_store.evaluate_events
    if variant == "baseline":
        norms_store.refresh = lambda *a, **k: 0  # type: ignore[assignment]
    if variant == "each":
        norms_store.evaluate_events = _per_applicant(evaluate)  # type: ignore[assignment]
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
        norms_store.evaluate_events = evaluate  # type: ignore[method-assign]
    return full, again, int(rows)


def _refresh_alone(db: Path) -> dict[bool, float]:
    """CPU seconds of `refresh` over every rated list of `db`, best of three, per applicant
    (False) and as shipped (True)."""
    evaluate = norms_store.evaluate_events
    best: dict[bool, float] = {}
    with open_writer(db) as con:
        lists = [r[0] for r in con.execute("SELECT DISTINCT list_date FROM tournament_ratings").fetchall()]
        for set_based in (False, True) * 3:
            if not set_based:
                norms_store.evaluate_events = _per_applicant(evaluate)  # type: ignore[assignment]
            try:
                t = time.process_time()
                norms_store.refresh(con, "fide", lists)
                best[set_based] = min(best.get(set_based, float("inf")), time.process_time() - t)
            finally:
                norms_store.evaluate_events = evaluate  # type: ignore[method-assign]
    return best


def main(paths: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "ingested.duckdb"
        ingest_paths(paths, base)
        results: dict[str, list[tuple[float, float, int]]] = {v: [] for v in VARIANTS}
        for i in range(2):
            for variant in VARIANTS:
                results[variant].append(_run(base, Path(tmp) / f"r{i}{variant}.duckdb", variant))
        for variant, runs in results.items():
            full = min(r[0] for r in runs)
            again = min(r[1] for r in runs)
            ratio = full / min(r[0] for r in results["baseline"])
            print(
                f"{VARIANTS[variant]}: full rate {full:.2f} s CPU ({ratio:.2f}x), second run {again:.2f} s,"
                f" rows {runs[0][2]}"
            )
        alone = _refresh_alone(Path(tmp) / "r1shipped.duckdb")
        print(
            f"refresh alone: per applicant {alone[False]:.2f} s CPU, shipped {alone[True]:.2f} s"
            f" ({alone[True] / alone[False]:.2f}x)"
        )


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", help="PGN or TRF files and folders to ingest (see the module docstring)")
    main(ap.parse_args().paths)
