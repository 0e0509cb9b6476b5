"""Benchmark: what running the main job through Prefect costs (issue 6).

In one run, on `sample_pgn/` (or the paths given), each in a fresh process and a fresh store:

- **baseline**: the library alone, no Prefect: `ingest_paths`, `rate`, `publish_outputs` for the
  same lists `elopipe run` publishes (process start to end);
- **run (fresh home)**: `elopipe run` with an empty PREFECT_HOME, as on a new machine: Prefect
  creates its database (migrations) before the first flow run;
- **run (warm home)**: `elopipe run` again with that home, `--repeat` times.

It prints wall times, Prefect's share of each run (as `elopipe run` reports it: start-up =
process start to the first line of the flow body, shutdown = after its last line) and the ratio
run / baseline. The issue's goal is that the whole `elopipe run sample_pgn` takes at most 30 s
on the project's 2-core machine; `--check` exits 1 when the median warm run takes longer.
The machine's load average is printed too, since other work on a 2-core machine skews every time.

Usage: ``.venv/bin/python bench/prefect_overhead.py [PATH...] [--repeat N] [--check]``.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ELOPIPE = str(Path(sys.executable).with_name("elopipe"))
GOAL_SECONDS = 30.0

BASELINE = """
import sys
from elopipe.ingest.driver import ingest_paths
from elopipe.publish.outputs import publish_outputs
from elopipe.rating.run import rate
from elopipe.store.connect import open_writer
from elopipe.publish.plan import DEFAULT_MAX_LISTS, select_dates
from elopipe.rating.store_io import changed_list_dates

db, out, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
ingest_paths(paths, db)
with open_writer(db) as con:
    summary = rate(con, "fide")
    changed = changed_list_dates(con, "fide", summary.first_changed)
    dates, _ = select_dates(changed, set(), DEFAULT_MAX_LISTS)
    publish_outputs(con, "fide", out, list_dates=dates or None)
"""

PREFECT_LINE = re.compile(
    r"of which Prefect: ([\d.]+) s to start \(import ([\d.]+) s, API server and flow run ([\d.]+) s\), "
    r"([\d.]+) s to finish; the job itself ([\d.]+) s"
)


def _timed(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, str]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        sys.exit(f"{cmd[:2]} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return elapsed, proc.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*", default=[str(ROOT / "sample_pgn")])
    ap.add_argument("--repeat", type=int, default=3, help="warm runs (default 3)")
    ap.add_argument("--check", action="store_true", help=f"exit 1 if the median warm run exceeds {GOAL_SECONDS:g} s")
    args = ap.parse_args()
    paths = [str(Path(p).resolve()) for p in args.paths]

    with tempfile.TemporaryDirectory(prefix="elopipe-bench-prefect-") as tmp:
        work = Path(tmp)
        env = {k: v for k, v in os.environ.items() if k not in ("PREFECT_API_URL", "PREFECT_PROFILE")}
        env["PREFECT_HOME"] = str(work / "prefect-home")

        base, _ = _timed(
            [sys.executable, "-c", BASELINE, str(work / "base.duckdb"), str(work / "base-out"), *paths], env, ROOT
        )
        print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        print(f"baseline (library, no Prefect): {base:6.1f} s")

        runs: list[tuple[str, float, str]] = []
        for i in range(1 + args.repeat):
            label = "run (fresh home)" if i == 0 else f"run (warm home) #{i}"
            cmd = [ELOPIPE, "run", *paths, "--db", str(work / f"r{i}.duckdb"), "--out", str(work / f"out{i}")]
            elapsed, out = _timed(cmd, env, work)
            runs.append((label, elapsed, out))
            m = PREFECT_LINE.search(out)
            share = (
                f"Prefect start {float(m[1]):5.1f} s (import {float(m[2]):.1f}, server+flow run {float(m[3]):.1f}), "
                f"finish {float(m[4]):.1f} s, job {float(m[5]):5.1f} s"
                if m
                else "(no timing line)"
            )
            print(f"{label:24} {elapsed:6.1f} s  ratio to baseline {elapsed / base:4.2f}  {share}")
        warm = [e for _, e, _ in runs[1:]]
        median = statistics.median(warm) if warm else runs[0][1]
        load = os.getloadavg()[0]
        print(f"median warm run: {median:.1f} s (goal <= {GOAL_SECONDS:g} s); load average now {load:.1f}")
    return 1 if args.check and median > GOAL_SECONDS else 0


if __name__ == "__main__":
    sys.exit(main())
