"""Benchmark: one month of TRF files ingested into a copy of a grown store, two builds interleaved.

Issue 27, item 5: a FIDE month of TRF (750 files, 125k games, 30k players) ingested into a store
that already holds earlier months, for two checkouts of elopipe, one after the other in each
round (the machine's load then weighs on both alike). Each round copies `--store` afresh for
each build (the original is never opened), ingests `--month` with that build's CLI, and
measures the CPU seconds of the ingest (children included, `federation.measure`) and its peak
RSS. After the last round the two stores are compared table by table, row for row, ids
included (`compare_stores.compare`): a faster ingest must store exactly what the other stored.

Not a timed test: nothing is asserted; it prints one line a run, the medians and the verdict
of the comparison (exit 1 when the stores differ).

Usage: ``.venv/bin/python bench/trf_month.py --store STORE.duckdb --month DIR --work DIR
--python before=/old/.venv/bin/python --python after=.venv/bin/python [--rounds 3]``. With the
federation data of ``bench/federation.py``: STORE is a store of its months 1-3 (``--keep``),
DIR its month 4 (``bench/_data/federation/scale1_seed1_v3/m04``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import compare_stores  # noqa: E402
import federation  # noqa: E402

MB = 1_000_000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", type=Path, required=True, help="the grown store (copied, never opened)")
    ap.add_argument("--month", type=Path, required=True, help="the folder of the month's TRF files")
    ap.add_argument("--work", type=Path, required=True, help="folder for the copies")
    ap.add_argument("--python", action="append", required=True, help="NAME=INTERPRETER, twice")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    # the runs start in --work: relative paths are taken from here (the interpreter's as written)
    builds = {name: os.path.abspath(py) for name, py in (p.split("=", 1) for p in args.python)}
    args.month, args.store = args.month.absolute(), args.store.absolute()
    if len(builds) != 2:
        ap.error("give --python twice, NAME=INTERPRETER")
    args.work.mkdir(parents=True, exist_ok=True)
    cpu: dict[str, list[float]] = {name: [] for name in builds}
    rss: dict[str, list[int]] = {name: [] for name in builds}
    for r in range(args.rounds):
        for name, python in builds.items():
            db = args.work / f"{name}.duckdb"
            db.unlink(missing_ok=True)
            shutil.copy(args.store, db)
            cmd = [python, "-c", federation.fd.CLI, "ingest", "-q", str(args.month), "--db", str(db)]
            run = federation.measure(name, cmd, args.work)
            cpu[name].append(run.cpu)
            rss[name].append(run.maxrss)
            line = f"round {r + 1} {name}: {run.cpu:.2f} CPU-s, {run.maxrss / MB:.0f} MB, exit {run.rc}"
            print(f"{line}: {run.last_line}", flush=True)
    for name in builds:
        print(f"{name}: median {statistics.median(cpu[name]):.2f} CPU-s, {max(rss[name]) / MB:.0f} MB at most")
    a, b = builds
    print(f"{b} / {a} (median CPU-s): {statistics.median(cpu[b]) / statistics.median(cpu[a]):.2f}")
    differ = compare_stores.compare(str(args.work / f"{a}.duckdb"), str(args.work / f"{b}.duckdb"))
    print("stores: the same, table by table" if not differ else f"stores: {differ} tables differ")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
