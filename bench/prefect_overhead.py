"""Benchmark: what running the main job through Prefect costs, and how soon elopipe answers.

In one run, each command in a fresh process and a fresh store:

- **baseline**: the library alone, no Prefect: `ingest_paths`, `rate`, `publish_outputs` for the
  same lists `elopipe run` publishes (process start to end), on the paths and on one small file;
- **run (fresh home)**: `elopipe run` with an empty PREFECT_HOME, as on a new machine: Prefect
  creates its database (migrations) before the first flow run;
- **run (warm home)**: `elopipe run` again with that home, `--repeat` times;
- **watch**: `elopipe watch` on an empty inbox and store; once it says it is ready, one small
  file is dropped, then a second: the time from each drop to the file in processed/.

For each command: the time to its first line of output (the issue's goal: within 1 s), to the end,
and the CPU seconds it used with its children (the Prefect server, parse workers): on a loaded
machine the wall time says more about the other processes than about elopipe. Prefect's share of
a run is as `elopipe run` reports it (start-up = process start to the first line of the flow body,
shutdown = after its last line). The goals: the whole `elopipe run sample_pgn` within 30 s on the
project's 2-core machine (`--check` exits 1 when the median warm run takes longer, or a watched
file takes more than 10 s); a small watched file moved within 10 s of landing.

Usage: ``.venv/bin/python bench/prefect_overhead.py [PATH...] [--repeat N] [--check]``.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ELOPIPE = str(Path(sys.executable).with_name("elopipe"))
GOAL_SECONDS = 30.0
WATCH_GOAL_SECONDS = 10.0
FIRST_LINE_GOAL = 1.0
SMALL_FILES = [ROOT / "sample_pgn" / "wchcand22.pgn", ROOT / "sample_pgn" / "fide_candidates_2022_madrid_spain.pgn"]

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

PREFECT_LINE = re.compile(r"of which Prefect: ([\d.]+) s to start .*?([\d.]+) s to finish; the job itself ([\d.]+) s")


@dataclass
class Lines:
    """A child's output lines (stdout and stderr together), each with its time since the start."""

    start: float
    lines: list[tuple[float, str]] = field(default_factory=list)

    def first(self) -> float | None:
        return self.lines[0][0] if self.lines else None

    def when(self, pattern: str) -> float | None:
        return next((t for t, line in self.lines if pattern in line), None)

    def text(self) -> str:
        return "\n".join(line for _, line in self.lines)


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _start(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[subprocess.Popen[str], Lines, threading.Thread]:
    out = Lines(time.perf_counter())
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            out.lines.append((time.perf_counter() - out.start, line.rstrip("\n")))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return proc, out, reader


def _timed(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, Lines]:
    """(wall seconds, CPU seconds of the command and its children, its output)."""
    cpu = _cpu()
    proc, out, reader = _start(cmd, env, cwd)
    proc.wait()
    reader.join()
    elapsed = time.perf_counter() - out.start
    if proc.returncode not in (0, 1):
        sys.exit(f"{cmd[:2]} failed ({proc.returncode}):\n{out.text()[-3000:]}")
    return elapsed, _cpu() - cpu, out


def _wait(predicate: object, timeout: float, proc: subprocess.Popen[str], out: Lines) -> float:
    deadline = time.perf_counter() + timeout
    while not predicate():  # type: ignore[operator]
        if proc.poll() is not None or time.perf_counter() > deadline:
            proc.kill()
            sys.exit(f"watch ended or stalled:\n{out.text()[-3000:]}")
        time.sleep(0.02)
    return time.perf_counter()


def watch_latency(work: Path, env: dict[str, str]) -> tuple[Lines, float, list[float], float]:
    """Run `elopipe watch`, drop SMALL_FILES one after the other. Returns its output, the time
    it was ready, each file's drop-to-processed seconds, and its CPU seconds."""
    inbox = work / "inbox"
    cpu = _cpu()
    cmd = [ELOPIPE, "watch", str(inbox), "--db", str(work / "watch.duckdb"), "--out", str(work / "watch-out")]
    proc, out, reader = _start(cmd, env, work)
    ready = _wait(lambda: out.when("ready:") is not None, 300, proc, out) - out.start
    latencies = []
    for small in SMALL_FILES:
        tmp = inbox / (small.name + ".part")  # the way a download lands: written, then renamed
        shutil.copy(small, tmp)
        dropped = time.perf_counter()
        tmp.rename(inbox / small.name)
        moved = _wait(lambda s=small: (inbox / "processed" / s.name).exists(), 300, proc, out)
        latencies.append(moved - dropped)
    proc.send_signal(2)  # Ctrl-C
    proc.wait(120)
    reader.join()
    return out, ready, latencies, _cpu() - cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*", default=[str(ROOT / "sample_pgn")])
    ap.add_argument("--repeat", type=int, default=3, help="warm runs (default 3)")
    ap.add_argument("--check", action="store_true", help="exit 1 if a goal is missed")
    args = ap.parse_args()
    paths = [str(Path(p).resolve()) for p in args.paths]

    with tempfile.TemporaryDirectory(prefix="elopipe-bench-prefect-") as tmp:
        work = Path(tmp)
        env = {k: v for k, v in os.environ.items() if k not in ("PREFECT_API_URL", "PREFECT_PROFILE")}
        env["PREFECT_HOME"] = str(work / "prefect-home")
        print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")

        base_cmd = [sys.executable, "-c", BASELINE]
        base, base_cpu, _ = _timed([*base_cmd, str(work / "b.duckdb"), str(work / "b-out"), *paths], env, ROOT)
        one = [*base_cmd, str(work / "s.duckdb"), str(work / "s-out"), str(SMALL_FILES[0])]
        small, small_cpu, _ = _timed(one, env, ROOT)
        print(f"baseline (library, no Prefect):      {base:6.1f} s, {base_cpu:5.1f} CPU s")
        print(f"baseline, one small file ({SMALL_FILES[0].name}): {small:6.1f} s, {small_cpu:5.1f} CPU s")

        runs: list[float] = []
        firsts: list[float] = []
        for i in range(1 + args.repeat):
            label = "run (fresh home)" if i == 0 else f"run (warm home) #{i}"
            cmd = [ELOPIPE, "run", *paths, "--db", str(work / f"r{i}.duckdb"), "--out", str(work / f"out{i}")]
            elapsed, cpu, out = _timed(cmd, env, work)
            first = out.first() or elapsed
            firsts.append(first)
            if i:
                runs.append(elapsed)
            m = PREFECT_LINE.search(out.text())
            share = f"Prefect start {m[1]} s, finish {m[2]} s, job {m[3]} s" if m else "(no timing line)"
            print(
                f"{label:22} first line {first:5.2f} s, done {elapsed:6.1f} s, {cpu:5.1f} CPU s, "
                f"ratio to baseline {elapsed / base:4.2f}; {share}"
            )

        out, ready, latencies, cpu = watch_latency(work, env)
        first = out.first() or ready
        firsts.append(first)
        moved = ", ".join(f"{s.name} {t:.1f} s" for s, t in zip(SMALL_FILES, latencies, strict=True))
        print(f"watch                  first line {first:5.2f} s, ready {ready:5.1f} s; dropped to processed: {moved}")
        print(f"                       {cpu:5.1f} CPU s for the whole watch (start, two batches, stop)")

        median = statistics.median(runs) if runs else 0.0
        print(
            f"median warm run: {median:.1f} s (goal <= {GOAL_SECONDS:g} s); slowest first line {max(firsts):.2f} s "
            f"(goal <= {FIRST_LINE_GOAL:g} s); slowest watched file {max(latencies):.1f} s (goal <= "
            f"{WATCH_GOAL_SECONDS:g} s); load average now {os.getloadavg()[0]:.1f}"
        )
    missed = median > GOAL_SECONDS or max(latencies) > WATCH_GOAL_SECONDS or max(firsts) > FIRST_LINE_GOAL
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    sys.exit(main())
