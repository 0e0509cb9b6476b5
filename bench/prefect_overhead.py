"""Benchmark: what running the main job through Prefect costs, and how soon elopipe answers.

In one run, each command in a fresh process and a fresh store:

- **baseline**: the library alone, no Prefect: `ingest_paths`, `rate` and `publish_changed` for
  the same systems and lists `elopipe run` rates and publishes (process start to end), on the
  paths and on one small file;
- **run (fresh home)**: `elopipe run` with an empty PREFECT_HOME, as on a new machine: Prefect
  creates its database (migrations) before the first flow run;
- **run (warm home)**: `elopipe run` again with that home, `--repeat` times;
- **run (server running)**: `elopipe run` with PREFECT_API_URL pointing at a `prefect server
  start` already up (started before, not timed), as a user with Prefect's UI works; its CPU
  seconds include what the server spent during the run;
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
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
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
from pathlib import Path
from elopipe.ingest.driver import ingest_paths
from elopipe.publish import plan
from elopipe.publish.list_suspects import lists_suspects
from elopipe.rating.fide.params import SYSTEM_CLASS, ro_from_policy
from elopipe.rating.run import rate
from elopipe.rating.result_tables import changed_list_dates
from elopipe.rating.store_io import no_moves_policy
from elopipe.rating.systems import DEFAULT_SYSTEMS
from elopipe.store.connect import open_writer

# What `elopipe run` asks of the library (flows/rate_lists.py, flows/publish.py): every default
# system rated, then each one's changed lists published.
db, out, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
ingest_paths(paths, db)
with open_writer(db) as con:
    runs = {}
    for system in DEFAULT_SYSTEMS:
        fide = {"ro_from": ro_from_policy(None)} if system in SYSTEM_CLASS else {}
        summary = rate(con, system, no_moves=no_moves_policy(None), **fide)
        exact = getattr(summary, "changed_lists", None)
        changed = sorted(exact) if exact is not None else changed_list_dates(con, system, summary.first_changed)
        runs[system] = (changed, getattr(summary, "run_id", None))
    latest = {}
    for system, (changed, run_id) in runs.items():
        try:
            result = plan.publish_changed(con, db, system, Path(out), changed, plan.DEFAULT_MAX_LISTS, run_id)
        except LookupError:  # no list of this system (e.g. no blitz event): as the flow, skipped
            continue
        if not result.unchanged and result.latest is not None:
            latest[system] = result.latest
    # the publish flow then says the pairs suspected to be one person on each latest list
    lists_suspects(con, latest)
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


def _tree_cpu(pid: int) -> float:
    """CPU seconds a running process and its children have used so far."""
    import psutil

    procs = [psutil.Process(pid)]
    procs += procs[0].children(recursive=True)
    total = 0.0
    for proc in procs:
        try:
            times = proc.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


def _health(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/health", timeout=2) as resp:  # noqa: S310 - our loopback server
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _report_run(label: str, elapsed: float, cpu: float, out: Lines, base: float, base_cpu: float) -> None:
    first = out.first() or elapsed
    m = PREFECT_LINE.search(out.text())
    share = f"Prefect start {m[1]} s, finish {m[2]} s, job {m[3]} s" if m else "(no timing line)"
    print(
        f"{label:22} first line {first:5.2f} s, done {elapsed:6.1f} s, {cpu:5.1f} CPU s, "
        f"ratio to baseline {elapsed / base:4.2f} wall, {cpu / base_cpu:4.2f} CPU; {share}"
    )


def server_runs(work: Path, env: dict[str, str], paths: list[str], repeat: int) -> list[tuple[float, float, Lines]]:
    """`elopipe run` against a `prefect server start` already up (its start is not counted): per run,
    (wall seconds, CPU seconds of the command plus the server's during it, output). Empty when
    psutil (for the server's CPU) is missing."""
    try:
        import psutil  # noqa: F401
    except ImportError:
        print("run (server running): skipped, psutil is not installed")
        return []
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/api"
    prefect = str(Path(sys.executable).with_name("prefect"))
    cmd = [prefect, "server", "start", "--host", "127.0.0.1", "--port", str(port), "--analytics-off"]
    log = (work / "server.log").open("wb")
    server = subprocess.Popen(cmd, env=env, cwd=work, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    results = []
    try:
        deadline = time.perf_counter() + 300
        while not _health(url):
            if server.poll() is not None or time.perf_counter() > deadline:
                sys.exit(f"prefect server start did not come up: see {work / 'server.log'}")
            time.sleep(0.2)
        time.sleep(5)  # its services' first loops, before anything is measured
        for i in range(repeat):
            cmd = [ELOPIPE, "run", *paths, "--db", str(work / f"u{i}.duckdb"), "--out", str(work / f"uout{i}")]
            before = _tree_cpu(server.pid)
            elapsed, cpu, out = _timed(cmd, {**env, "PREFECT_API_URL": url}, work)
            results.append((elapsed, cpu + _tree_cpu(server.pid) - before, out))
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(60)
        log.close()
    return results


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

        runs: list[tuple[float, float]] = []
        firsts: list[float] = []
        for i in range(1 + args.repeat):
            label = "run (fresh home)" if i == 0 else f"run (warm home) #{i}"
            cmd = [ELOPIPE, "run", *paths, "--db", str(work / f"r{i}.duckdb"), "--out", str(work / f"out{i}")]
            elapsed, cpu, out = _timed(cmd, env, work)
            firsts.append(out.first() or elapsed)
            if i:
                runs.append((elapsed, cpu))
            _report_run(label, elapsed, cpu, out, base, base_cpu)
        served = server_runs(work, env, paths, args.repeat)
        for i, (elapsed, cpu, out) in enumerate(served, 1):
            _report_run(f"run (server running) #{i}", elapsed, cpu, out, base, base_cpu)

        out, ready, latencies, cpu = watch_latency(work, env)
        first = out.first() or ready
        firsts.append(first)
        moved = ", ".join(f"{s.name} {t:.1f} s" for s, t in zip(SMALL_FILES, latencies, strict=True))
        print(f"watch                  first line {first:5.2f} s, ready {ready:5.1f} s; dropped to processed: {moved}")
        print(f"                       {cpu:5.1f} CPU s for the whole watch (start, two batches, stop)")

        median = statistics.median(r[0] for r in runs) if runs else 0.0
        print(
            f"median warm run: {median:.1f} s (goal <= {GOAL_SECONDS:g} s); slowest first line {max(firsts):.2f} s "
            f"(goal <= {FIRST_LINE_GOAL:g} s); slowest watched file {max(latencies):.1f} s (goal <= "
            f"{WATCH_GOAL_SECONDS:g} s); load average now {os.getloadavg()[0]:.1f}"
        )
        for label, rows in (("warm home", runs), ("server running", [(e, c) for e, c, _ in served])):
            if rows:
                print(
                    f"Prefect's share, {label}: median {statistics.median(e for e, _ in rows) / base:.2f}x the "
                    f"baseline's wall, {statistics.median(c for _, c in rows) / base_cpu:.2f}x its CPU seconds"
                )
    missed = median > GOAL_SECONDS or max(latencies) > WATCH_GOAL_SECONDS or max(firsts) > FIRST_LINE_GOAL
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    sys.exit(main())
