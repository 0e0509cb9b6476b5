"""Benchmark: a TRF dropped into `elopipe watch`, from landing to `processed/` (issue 27 item 3,
goal: ≤ 10 s on the 3-month federation store with its output folder already published).

Set-up, not measured as the goal (each step in a fresh process, with the elopipe measured):
a copy of the store (`--db`: an ingested store, e.g. the `ingested_s1_m3.duckdb` that
`bench/federation.py --keep DIR` leaves, or one already rated), rated under `--systems` when it
holds no list yet, then every list published into an empty folder as `elopipe run` publishes
them (`plan.publish_changed`, the run's rating run taken): wall and CPU seconds are printed.

Measured: `elopipe watch INBOX --db STORE --out OUT --system ...` runs as a child, its output a
pipe; once it says `ready`, the TRF (`--trf`, default the 100-player event dated after month 3
of `bench/_data/federation/`) lands in the inbox (written beside it, then renamed in: a landing
is one instant), and the inbox's `processed/` is polled until the file is there. Reported: the
wall seconds from landing to `processed/`; their split read from the watch's own lines as they
come (`N new file` -> `ingest:` -> `rate:` -> `publish:` -> the publish's summary line -> the
file in `processed/`: the first part is the watch's two looks `--interval` apart, the last the
flow's end and the move); the CPU seconds of the watch and every process under it (its
temporary Prefect server included) over the same span, and of those under it alone (`others`:
the server's share); the files the publish wrote.

With `--baseline DIR` (another checkout, e.g. `git archive` of an older commit unpacked in DIR) the
same is measured first with that checkout's elopipe, on its own copy; ratios are against it. CPU
seconds say more than wall seconds on a shared machine. `--rounds N` measures N drops, the two
builds interleaved (before, after, before, ...), and prints the medians.

The set-up (a rate and a publish of some 9,000 files) costs minutes: with `--prepared DIR` each
build's set-up is made once into `DIR/before` and `DIR/after` (kept), and every round drops into a
copy of it (the store, and the output folder with its files' times, as the manifest trusts them).
A build whose publish code changed (`elopipe.publish.inputs.code_fingerprint`) is prepared again.

Usage: ``.venv/bin/python bench/publish_watch.py --db STORE [--systems fide] [--trf FILE]
[--work DIR] [--baseline DIR] [--interval 1] [--rounds N] [--prepared DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FEDERATION = ROOT / "bench" / "_data" / "federation"
CLOCK = os.sysconf("SC_CLK_TCK")

PREPARE = """
import json, sys, time
from pathlib import Path
from elopipe.publish.lists import list_dates
from elopipe.publish.plan import last_run, publish_changed
from elopipe.rating.run import rate
from elopipe.store.connect import open_writer
db, out, systems = sys.argv[1], Path(sys.argv[2]), sys.argv[3].split(",")
start, cpu = time.perf_counter(), time.process_time()
with open_writer(db) as con:
    for system in systems:
        if not list_dates(con, system):
            rate(con, system)
rated = [time.perf_counter() - start, time.process_time() - cpu]
files = 0
with open_writer(db) as con:
    for system in systems:
        result = publish_changed(con, db, system, out, list_dates(con, system), own_run=last_run(con, system))
        files += len(result.paths)
print(json.dumps({"rated": rated, "files": files}))
"""


@dataclass
class Drop:
    label: str
    wall: float
    cpu: float
    marks: dict[str, float] = field(default_factory=dict)  # seconds after landing
    published: str = ""
    others: float = float("nan")  # CPU seconds of the processes under the watch (Prefect's server)

    def split(self) -> str:
        order = ["new file", "ingest", "rate", "publish", "published", "processed"]
        at = [0.0] + [self.marks.get(k, float("nan")) for k in order]
        names = ["looks", "start", "ingest", "rate", "publish", "move"]
        return ", ".join(f"{n} {b - a:.1f}" for n, a, b in zip(names, at, at[1:], strict=False))

    def row(self, base: Drop | None) -> str:
        ratio = f"  {self.cpu / base.cpu:6.3f} {self.wall / base.wall:6.3f}" if base else ""
        return f"{self.label:<8} {self.wall:>8.1f} {self.cpu:>8.1f} {self.others:>7.1f}  {self.split()}{ratio}"


def _tree(pid: int) -> list[int]:
    """`pid` and every process under it."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for task in Path(f"/proc/{p}/task").glob("*/children"):
            try:
                todo += [int(c) for c in task.read_text().split()]
            except OSError:
                continue
    return out


def _cpu(pid: int, alone: bool = False) -> float:
    """CPU seconds of `pid`'s process tree (each process's own and its reaped children's); with
    `alone`, of `pid` itself (its own threads and its reaped children)."""
    total = 0
    for p in [pid] if alone else _tree(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(f) for f in fields[11:15])
    return total / CLOCK


def _env(src: Path | None) -> dict[str, str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    if src is not None:
        env["PYTHONPATH"] = str(src)
    return env


def prepare(label: str, src: Path | None, store: Path, work: Path, systems: str) -> None:
    """Copy, rate and publish the store (module docstring); print what it cost."""
    shutil.copyfile(store, work / "store.duckdb")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", PREPARE, str(work / "store.duckdb"), str(work / "out"), systems],
        capture_output=True, text=True, cwd=src or ROOT, env=_env(src), check=False,
    )  # fmt: skip
    if proc.returncode:
        sys.exit(f"{label}: set-up failed:\n{proc.stderr[-3000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    print(
        f"{label}: set-up {time.perf_counter() - start:.1f} s, {cpu:.1f} CPU-s (rating {info['rated'][0]:.1f} s);"
        f" {info['files']:,} files published",
        flush=True,
    )


def _fingerprint(src: Path | None) -> str:
    """The publish code's fingerprint of a build (`elopipe.publish.inputs.code_fingerprint`): a
    folder published by another makes every page again."""
    code = "from elopipe.publish.inputs import code_fingerprint; print(code_fingerprint())"
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=src or ROOT, env=_env(src), check=False
    )
    return proc.stdout.strip()


def prepared_copy(label: str, src: Path | None, store: Path, keep: Path, work: Path, systems: str) -> None:
    """`work` as `prepare` leaves it, copied from `keep/label` (made there first when missing or
    made by other publish code)."""
    made, code = keep / label, _fingerprint(src)
    stamp = made / "fingerprint"
    if not (made / "store.duckdb").is_file() or not stamp.is_file() or stamp.read_text() != code:
        if made.is_symlink() or (made.exists() and not stamp.is_file() and any(made.iterdir())):
            # only a set-up this bench made (its stamp) is made again: never a folder of the user's
            raise SystemExit(f"{made} exists and is not a set-up of this bench: give another --prepared")
        shutil.rmtree(made, ignore_errors=True)
        made.mkdir(parents=True)
        prepare(label, src, store, made, systems)
        stamp.write_text(code)
    shutil.copyfile(made / "store.duckdb", work / "store.duckdb")
    shutil.copytree(made / "out", work / "out", symlinks=True)  # copy2: the times the manifest records


def drop(label: str, src: Path | None, work: Path, systems: str, trf: Path, interval: float) -> Drop:
    """One watch and one dropped file (module docstring)."""
    inbox, log = work / "inbox", work / "watch.log"
    inbox.mkdir()
    cmd = [sys.executable, "-m", "elopipe.cli.main", "watch", str(inbox), "--db", str(work / "store.duckdb")]
    cmd += ["--out", str(work / "out"), "--system", systems, "--interval", f"{interval:g}"]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=src or ROOT, env=_env(src)
    )
    assert proc.stdout is not None
    ready = threading.Event()
    landed: list[float] = []
    marks: dict[str, float] = {}
    lines: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        with log.open("w") as f:
            for line in proc.stdout:
                now = time.perf_counter()
                f.write(line)
                f.flush()
                lines.append(line)
                text = line.split(" | ", 1)[-1]
                if text.startswith("ready:"):
                    ready.set()
                if not landed:
                    continue
                for key, prefix in (("new file", "1 new file"), ("ingest", "ingest:"), ("rate", "rate:")):
                    if text.startswith(prefix):
                        marks.setdefault(key, now - landed[0])
                if text.startswith("publish:"):
                    marks.setdefault("publish", now - landed[0])
                    if " files" in text or "unchanged" in text:
                        marks["published"] = now - landed[0]

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    if not ready.wait(300):
        proc.kill()
        sys.exit(f"{label}: the watch never said ready; see {log}")
    time.sleep(2 * interval)  # a first look at the empty inbox
    part = inbox / f".{trf.name}.part"
    shutil.copyfile(trf, part)
    cpu0, own0 = _cpu(proc.pid), _cpu(proc.pid, alone=True)
    landed.append(time.perf_counter())
    part.rename(inbox / trf.name)
    done = inbox / "processed" / trf.name
    while not done.exists() and proc.poll() is None:
        time.sleep(0.05)
    wall = time.perf_counter() - landed[0]
    cpu = _cpu(proc.pid) - cpu0
    others = cpu - (_cpu(proc.pid, alone=True) - own0)
    marks["processed"] = wall
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(120)
    except subprocess.TimeoutExpired:
        proc.kill()
    reader.join(10)
    if not done.exists():
        sys.exit(f"{label}: {trf.name} never reached processed/; see {log}")
    summary = next((ln.split(" | ", 1)[-1].strip() for ln in lines if "publish:" in ln and " files" in ln), "")
    return Drop(label, wall, cpu, marks, summary, others)


def _median(label: str, drops: list[Drop]) -> Drop:
    """Each figure's median over `drops` (the split's parts each on its own)."""
    keys = {k for d in drops for k in d.marks}
    return Drop(
        label,
        statistics.median(d.wall for d in drops),
        statistics.median(d.cpu for d in drops),
        {k: statistics.median(d.marks.get(k, float("nan")) for d in drops) for k in keys},
        others=statistics.median(d.others for d in drops),
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", type=Path, required=True, help="the store to copy (ingested, or rated)")
    ap.add_argument("--systems", default="fide")
    default_trf = sorted(FEDERATION.glob("*/extra_m03/*.trf"))
    ap.add_argument("--trf", type=Path, default=default_trf[0] if default_trf else None)
    ap.add_argument("--work", type=Path, help="scratch folder (default: a temporary one, removed)")
    ap.add_argument("--baseline", type=Path, help="first measure the elopipe of this checkout's folder")
    ap.add_argument("--interval", type=float, default=1.0, help="the watch's --interval (default 1 s)")
    ap.add_argument("--rounds", type=int, default=1, help="drops per build, interleaved (default 1)")
    ap.add_argument("--prepared", type=Path, help="make each build's set-up once in this folder, then copy it")
    args = ap.parse_args()
    if args.trf is None or not args.trf.is_file():
        ap.error("--trf: give the TRF to drop (none found under bench/_data/federation/*/extra_m03/)")
    if args.work is not None and args.work.exists() and any(args.work.iterdir()):
        ap.error(f"--work {args.work}: give a new or empty folder")
    work = args.work or Path(tempfile.mkdtemp(prefix="elopipe-bench-watch-"))
    drops: list[Drop] = []
    builds = ([("before", args.baseline)] if args.baseline else []) + [("after", None)]
    try:
        for n in range(args.rounds):
            for label, src in builds:
                folder = work / (label if args.rounds == 1 else f"{label}{n + 1}")
                folder.mkdir(parents=True)
                if args.prepared is None:
                    prepare(label, src, args.db, folder, args.systems)
                else:
                    prepared_copy(label, src, args.db, args.prepared, folder, args.systems)
                drops.append(drop(label, src, folder, args.systems, args.trf, args.interval))
                print(f"  {drops[-1].row(None)}; {drops[-1].published}", flush=True)
        load = os.getloadavg()[0]
        print(f"cores {os.cpu_count()}, load {load:.1f}; {args.trf.name} dropped; logs {work}/*/watch.log")
        print(f"{'watch':<8} {'wall s':>8} {'CPU-s':>8} {'others':>7}  split (s)  [CPU and wall / first]")
        for d in drops:
            print(d.row(None if d is drops[0] else drops[0]))
        if args.rounds > 1:
            medians = [_median(label, [d for d in drops if d.label == label]) for label, _ in builds]
            print("medians:")
            for d in medians:
                print(d.row(None if d is medians[0] else medians[0]))
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
