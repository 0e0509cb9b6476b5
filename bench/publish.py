"""Benchmark: publishing a store's lists, reports and player pages, whole and again.

In one run, on a copy of a store (default: one built from ../shared/data, every file, rated
under fide, fide-rapid, fide-blitz and ffe), each step in a fresh process:

- **full**: every list of every system into an empty folder (as the first `elopipe run` on the
  data publishes them): the baseline;
- **full, serial** (`--serial`): the same with one worker, to show what the threads give;
- **again**: the same publish into the same folder with nothing changed: every page is made
  again, no file is written (`elopipe.publish.manifest`);
- **new TRF**: a TRF (`--trf`), made a new event (renamed, `--months` later), ingested and rated,
  then its changed lists published into that folder as `run` does (`plan.publish_changed`);
  only this publish is measured;
- **charts**: the top players' rating charts drawn by matplotlib as PNG and as SVG from the
  template a publish uses (`elopipe.publish.chart_svg`), CPU-ms each (alone, on any store:
  `bench/publish_chart.py`).

For each step: files published and files written, wall seconds, CPU seconds of the step's
process and its children (DuckDB's threads count: they are the process's), and files per
second. With `--baseline DIR` (another checkout, e.g. `git worktree add` or `git archive` of an older
commit) the same steps are first measured with that checkout's elopipe, on their own copy of
the store. Ratios are against the first full publish of this run: on a shared machine the wall time says
more about the other processes than about elopipe, the CPU seconds less so.

Usage: ``.venv/bin/python bench/publish.py [--db STORE] [--work DIR] [--systems fide,ffe] [--serial]
[--baseline DIR] [--trf FILE] [--months N] [--charts N]``. On a federation store
(`bench/federation.py --keep DIR`): `--systems fide --trf bench/_data/federation/<workload>/extra_m01/*.trf
--months 1`, a new 100-player event in the month after the store's last.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from shared_data import shared_data  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SYSTEMS = ("fide", "fide-rapid", "fide-blitz", "ffe")
NEW_TRF = ("trf", "irl_bunratty_minor_2011_crlf_103players.trf")  # under the shared data

BUILD = """
import sys
from elopipe.ingest.driver import ingest_paths
from elopipe.rating.run import rate
from elopipe.store.connect import open_writer
db, systems, paths = sys.argv[1], sys.argv[2].split(","), sys.argv[3:]
ingest_paths(paths, db)
with open_writer(db) as con:
    for system in systems:
        rate(con, system)
"""

FULL = """
import json, sys
from pathlib import Path
import duckdb
import contextlib
from elopipe.publish.lists import list_dates
from elopipe.publish.plan import publish_recorded
from elopipe.publish import outputs
try:
    from elopipe.publish.manifest import recording
except ImportError:  # an elopipe before manifests (--baseline): every file is written
    recording = None
db, out, systems, workers = sys.argv[1], Path(sys.argv[2]), sys.argv[3].split(","), int(sys.argv[4])
if workers:  # the step's worker count, whatever the machine
    real = outputs.publish_outputs
    outputs.publish_outputs = lambda *a, **k: real(*a, **{**k, "workers": workers})
con = duckdb.connect(db, read_only=True)
published = written = 0
for system in systems:
    dates = list_dates(con, system)
    if not dates:
        continue
    with recording(out) if recording else contextlib.nullcontext() as m:
        paths, _ = publish_recorded(con, db, system, out, dates)
        published += len(set(paths))
        written += m.written if m else len(set(paths))
print(json.dumps({"published": published, "written": written}))
"""

NEW = """
import json, sys
from pathlib import Path
from elopipe.ingest.driver import ingest_paths
from elopipe.rating.run import rate
from elopipe.rating.result_tables import changed_list_dates
from elopipe.store.connect import open_writer
db, out, systems, trf = sys.argv[1], Path(sys.argv[2]), sys.argv[3].split(","), sys.argv[4]
ingest_paths([trf], db)
changed = {}
with open_writer(db) as con:
    for system in systems:
        summary = rate(con, system)
        changed[system] = changed_list_dates(con, system, summary.first_changed)
print(json.dumps({s: [d.isoformat() for d in v] for s, v in changed.items()}))
"""

PUBLISH_CHANGED = """
import datetime as dt, json, sys
from pathlib import Path
from elopipe.publish.plan import publish_changed
from elopipe.store.connect import open_writer
db, out, changed = sys.argv[1], Path(sys.argv[2]), json.loads(sys.argv[3])
published = written = 0
with open_writer(db) as con:
    for system, dates in changed.items():
        try:
            result = publish_changed(con, db, system, out, [dt.date.fromisoformat(d) for d in dates])
        except LookupError:  # a system with no list
            continue
        published += len(result.paths)
        written += len(result.paths) - getattr(result, "kept", 0)
print(json.dumps({"published": published, "written": written}))
"""


CHARTS = """
import json, sys, time
import duckdb
from elopipe.publish.charts import render_series
from elopipe.publish.history import player_series
from elopipe.publish.lists import list_dates
from elopipe.publish.outputs import top_players
db, n = sys.argv[1], int(sys.argv[2])
con = duckdb.connect(db, read_only=True)
series = []
for pid in top_players(con, "fide", list_dates(con, "fide")):
    s = player_series(con, pid, "fide")
    if s is not None:
        series.append(s)
series = series[:n]
render_series(series[:1], "warm-up", "png")  # matplotlib's import and fonts, paid once
cost = {}
for fmt in ("png", "svg"):
    start, size = time.process_time(), 0
    for s in series:
        size += len(render_series([s], "chart", fmt).data)
    cost[fmt] = [(time.process_time() - start) / len(series), size / len(series)]
print(json.dumps({"charts": len(series), **cost}))
"""


@dataclass
class Step:
    name: str
    wall: float
    cpu: float
    published: int
    written: int

    def row(self, base: Step | None) -> str:
        per_s = self.written / self.wall if self.wall else 0.0
        ratio = f"{self.cpu / base.cpu:6.3f} {self.wall / base.wall:6.3f}" if base else f"{'1':>6} {'1':>6}"
        return (
            f"{self.name:<14} {self.published:>9,} {self.written:>8,} {self.wall:>8.1f} {self.cpu:>8.1f}"
            f" {per_s:>8.1f} {self.written / self.cpu if self.cpu else 0:>8.1f}  {ratio}"
        )


def run(code: str, *args: str, src: Path | None = None) -> tuple[float, float, str]:
    """Run `code` in a fresh interpreter, with the elopipe of `src` (a checkout's folder; None:
    this one): (wall s, CPU s of it and its children, its last line of output)."""
    env = {**os.environ, "PYTHONPATH": str(src)} if src else None
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=src or ROOT, check=False, env=env
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        sys.exit(f"step failed:\n{proc.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, (proc.stdout.strip().splitlines() or [""])[-1]  # the build prints nothing


def new_event(src: Path, dest: Path, months: int = 12) -> Path:
    """`src` as another event: '(bench)' added to its name, every date `months` later (dates as
    TRF files write them: 2025/02/03, 2011-02-25, 25.02.2011, 25/02/2011, 25/02/11)."""

    def later(year: int, month: int) -> tuple[int, int]:
        n = year * 12 + month - 1 + months
        return n // 12, n % 12 + 1

    def ymd(m: re.Match[str]) -> str:
        y, mo = later(int(m["y"]), int(m["m"]))
        return f"{y:04d}{m['s']}{mo:02d}{m['s']}{m['d']}"

    def dmy(m: re.Match[str]) -> str:
        short = len(m["y"]) == 2
        y, mo = later(int(m["y"]) + (2000 if short else 0), int(m["m"]))
        return f"{m['d']}{m['s']}{mo:02d}{m['s']}{y % 100 if short else y:0{2 if short else 4}d}"

    text = src.read_bytes().decode("latin-1")
    text = re.sub(r"^(012 .*?)(\r?)$", r"\1 (bench)\2", text, count=1, flags=re.M)
    text = re.sub(r"\b(?P<y>(?:19|20)\d\d)(?P<s>[./-])(?P<m>\d\d)(?P=s)(?P<d>\d\d)\b", ymd, text)
    text = re.sub(r"\b(?P<d>\d\d)(?P<s>[./-])(?P<m>\d\d)(?P=s)(?P<y>(?:19|20)\d\d|\d\d)\b", dmy, text)
    dest.write_bytes(text.encode("latin-1"))
    return dest


def _steps(label: str, src: Path | None, store: Path, work: Path, args: argparse.Namespace) -> list[Step]:
    """The publishing steps (module docstring) with the elopipe of `src`, on a copy of `store`."""
    work.mkdir(parents=True, exist_ok=True)
    db, out, systems = work / "store.duckdb", work / "out", args.systems
    shutil.copyfile(store, db)
    shutil.rmtree(out, ignore_errors=True)
    steps: list[Step] = []
    prefix = f"{label} " if label else ""

    def step(name: str, code: str, *a: str) -> None:
        wall, cpu, line = run(code, *a, src=src)
        counts = json.loads(line)
        steps.append(Step(prefix + name, wall, cpu, counts["published"], counts["written"]))
        print(f"  {steps[-1].row(None)}", flush=True)  # as it comes: a long run shows its steps

    step("full", FULL, str(db), str(out), systems, "0")
    if args.serial and src is None:
        step("full, serial", FULL, str(db), str(work / "out-serial"), systems, "1")
    if not args.skip_again:
        step("again", FULL, str(db), str(out), systems, "0")
    trf = new_event(args.trf, work / "new-event.trf", args.months)
    wall, cpu, changed = run(NEW, str(db), str(out), systems, str(trf), src=src)
    lists = sum(len(v) for v in json.loads(changed).values())
    print(
        f"{prefix}new TRF ingested and rated: {lists} lists changed ({wall:.1f} s, {cpu:.1f} CPU-s, not counted below)",
        flush=True,
    )
    step("new TRF", PUBLISH_CHANGED, str(db), str(out), changed)
    print(f"{prefix}new TRF from landing to published: {wall + steps[-1].wall:.1f} s, {cpu + steps[-1].cpu:.1f} CPU-s")
    return steps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", type=Path, help="a store to copy (default: build one from ../shared/data)")
    ap.add_argument("--work", type=Path, help="scratch folder (default: a temporary one, removed)")
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--serial", action="store_true", help="also publish everything with one worker")
    ap.add_argument("--trf", type=Path, help="the TRF made a new event for the last step (default: a shared one)")
    ap.add_argument("--months", type=int, default=12, help="how much later the new event is (default 12)")
    ap.add_argument("--skip-again", action="store_true", help="leave out the step 'again'")
    ap.add_argument("--baseline", type=Path, help="also measure the elopipe of this checkout's folder, first")
    ap.add_argument("--charts", type=int, default=20, help="player charts drawn as PNG and as SVG (0: none)")
    args = ap.parse_args()
    args.trf = args.trf or shared_data(*NEW_TRF)
    if args.work is not None and args.work.exists() and (not args.work.is_dir() or any(args.work.iterdir())):
        # the bench writes and clears its scratch folder: never one holding what it did not write
        ap.error(f"--work {args.work}: give a new or empty folder")
    work = args.work or Path(tempfile.mkdtemp(prefix="elopipe-bench-publish-"))
    work.mkdir(parents=True, exist_ok=True)
    db = work / "source.duckdb"
    try:
        if args.db:
            shutil.copyfile(args.db, db)
        else:
            data = shared_data()
            wall, cpu, _ = run(BUILD, str(db), args.systems, str(data / "pgn"), str(data / "trf"))
            print(f"store built from {data} in {wall:.1f} s ({cpu:.1f} CPU-s)")
        steps: list[Step] = []
        for label, src in ([("before", args.baseline)] if args.baseline else []) + [("", None)]:
            steps += _steps(label, src, db, work / (label or "after"), args)

        if args.charts:
            _, _, line = run(CHARTS, str(db), str(args.charts))
            c = json.loads(line)
            png, svg = (f"{1000 * c[f][0]:.1f} CPU-ms, {c[f][1] / 1024:.0f} KB" for f in ("png", "svg"))
            print(f"{c['charts']} player charts, each: matplotlib PNG {png}; template SVG {svg}")
        print(f"cores {os.cpu_count()}, load {os.getloadavg()[0]:.1f}; store {db}")
        print(
            f"{'step':<14} {'published':>9} {'written':>8} {'wall s':>8} {'CPU-s':>8} {'files/s':>8} {'f/CPU-s':>8}"
            "  CPU and wall / full"
        )
        base = steps[0]
        for s in steps:
            print(s.row(None if s is base else base))
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
