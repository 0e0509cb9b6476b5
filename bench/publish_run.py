"""Benchmark: the publish phase of a real `elopipe run` (issue 27 item 3, goal: ≤ 60 s on 2 cores).

Runs `elopipe run PATH... --db <fresh> --out <fresh> --system <systems>` as a child process,
its output a pipe (as in a log or CI), and reads its lines as they come: the publish phase
starts with the first line `publish: ...` and ends with the process. At that first line the
child's CPU time so far (its own and its finished children's, /proc/<pid>/stat) is read, so
the publish phase's CPU seconds are the process's total (its rusage once reaped) minus that.
Also reported: the longest gap between two output lines during the publish phase (goal: a line
at least every 5 s off a terminal), and the files the output folder holds.

With `--baseline DIR` (another checkout, e.g. `git worktree add /tmp/base <commit>`) the same run
is first made with that checkout's elopipe (its package first on PYTHONPATH), on its own fresh
store and folder; the ratios are against it. On a shared machine the wall time says more about
the other processes than about elopipe, the CPU seconds less so.

Usage: ``.venv/bin/python bench/publish_run.py [--work DIR] [--systems ...] [--baseline DIR]
[--keep] [PATH...]`` (default paths: ../shared/data/pgn and ../shared/data/trf).
"""

from __future__ import annotations

import argparse
import os
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
SYSTEMS = "fide,fide-rapid,fide-blitz,ffe"
CLOCK = os.sysconf("SC_CLK_TCK")


@dataclass
class Phase:
    label: str
    total_wall: float
    publish_wall: float
    publish_cpu: float
    total_cpu: float
    longest_gap: float
    files: int
    exit_code: int

    def row(self, base: Phase | None) -> str:
        ratio = ""
        if base:
            ratio = f"{self.publish_cpu / base.publish_cpu:6.3f} {self.publish_wall / base.publish_wall:6.3f}"
        return (
            f"{self.label:<10} {self.total_wall:>8.1f} {self.total_cpu:>8.1f} {self.publish_wall:>9.1f}"
            f" {self.publish_cpu:>9.1f} {self.longest_gap:>8.1f} {self.files:>7,} {self.exit_code:>4}  {ratio}"
        )


def _cpu_so_far(pid: int) -> float:
    """CPU seconds of `pid` and its reaped children (utime, stime, cutime, cstime)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) / CLOCK


def measure(label: str, src: Path | None, paths: list[str], work: Path, systems: str, log: Path) -> Phase:
    """One `elopipe run` (module docstring) with the elopipe of `src` (None: this checkout)."""
    db, out = work / "store.duckdb", work / "out"
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    if src is not None:
        env["PYTHONPATH"] = str(src)
    cmd = [sys.executable, "-m", "elopipe.cli.main", "run", *paths, "--db", str(db), "--out", str(out)]
    cmd += ["--system", systems]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=src or ROOT, env=env)
    assert proc.stdout is not None
    publish_at = cpu_at = None
    last = start
    gap = 0.0
    with log.open("w") as f:
        for line in proc.stdout:
            now = time.perf_counter()
            f.write(f"{now - start:8.2f} {line}")
            f.flush()  # the log shows the run as it goes
            if publish_at is None and "publish:" in line:
                publish_at, cpu_at = now, _cpu_so_far(proc.pid)
            elif publish_at is not None:
                gap = max(gap, now - last)
            last = now
    code = proc.wait()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if publish_at is None or cpu_at is None:
        sys.exit(f"{label}: no publish line; see {log}")
    files = sum(1 for p in out.rglob("*") if p.is_file())
    return Phase(label, wall, wall - (publish_at - start), cpu - cpu_at, cpu, gap, files, code)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*", help="files and folders to run on (default: ../shared/data/pgn and trf)")
    ap.add_argument("--work", type=Path, help="scratch folder (default: a temporary one, removed unless --keep)")
    ap.add_argument("--systems", default=SYSTEMS)
    ap.add_argument("--baseline", type=Path, help="first measure the elopipe of this checkout's folder")
    ap.add_argument("--keep", action="store_true", help="keep the stores, output folders and logs")
    args = ap.parse_args()
    args.paths = args.paths or [str(shared_data("pgn")), str(shared_data("trf"))]
    if args.work is not None and args.work.exists() and any(args.work.iterdir()):
        ap.error(f"--work {args.work}: give a new or empty folder")
    work = args.work or Path(tempfile.mkdtemp(prefix="elopipe-bench-publish-run-"))
    phases: list[Phase] = []
    try:
        for label, src in ([("before", args.baseline)] if args.baseline else []) + [("after", None)]:
            folder = work / label
            folder.mkdir(parents=True)
            phase = measure(label, src, args.paths, folder, args.systems, folder / "run.log")
            phases.append(phase)
            print(f"  {phase.row(None)}", flush=True)
        print(f"cores {os.cpu_count()}, load {os.getloadavg()[0]:.1f}; logs in {work}/<label>/run.log")
        print(
            f"{'run':<10} {'wall s':>8} {'CPU-s':>8} {'publish s':>9} {'pub CPU-s':>9} {'max gap':>8}"
            f" {'files':>7} {'exit':>4}  publish CPU and wall / first"
        )
        for p in phases:
            print(p.row(None if p is phases[0] else phases[0]))
    finally:
        if args.work is None and not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
