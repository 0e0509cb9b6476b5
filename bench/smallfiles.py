"""Benchmark: many small files with recurring players against one file of the same games (issue 26, item 5).

Club weekly events and live-board exports come as many small files whose players recur from
file to file. The inputs, generated in ``bench/_data/smallfiles/`` (git-ignored, cached):

- ``club``: N files of 8 games (2 rounds of 4 boards) between the same 8 players, each with a
  FIDE ID, ``Event 1`` ... ``Event N`` a week apart (the issue's ``mkpgn``; a week apart, the
  events are not taken as sources of one event, whose equal pairings would count once);
- ``club-noid``: the same files without the ``WhiteFideId``/``BlackFideId`` tags: the players
  are found by name only;
- ``live``: one game per file of one event between 200 players found by name only (a
  live-board export: 100 boards a round, as many rounds as N needs).

Each is ingested, by an ``elopipe ingest`` subprocess into a fresh store, as the folder of N
files, as one zip of the N files, and, the baseline of the same run, as one PGN file holding
the same games (the N files' bytes concatenated). For each ingest: CPU seconds (user + system
of the process and of its children, the parser processes included; see
``bench/federation.py``), the peak RSS (the larger of the process's own peak and the sampled
sum over its process tree), wall seconds, and the CPU ratio to the one-file baseline. Ratios are
measured in one run on one machine; CPU seconds depend less on the machine's load than wall
seconds. Not a timed test: nothing is asserted. ``--timeout`` ends an ingest that runs longer
(reported as killed, with its CPU and peak so far).

Usage: ``.venv/bin/python bench/smallfiles.py [--files 1000,3000] [--shapes club,club-noid,live]
[--forms folder,zip] [--timeout 900] [--data DIR] [--python PATH]``. To measure another checkout with the
same environment: ``PYTHONPATH=/path/to/checkout .venv/bin/python bench/smallfiles.py``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from federation import descendants_cpu, tree_rss  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "_data" / "smallfiles"
CLI = "from elopipe.cli.main import main; main()"
MB = 1_000_000
FIRST_DAY = dt.date(1960, 1, 4)  # 3,000 weekly events end in 2017


def _game(
    event: str, site: str, days: tuple[dt.date, dt.date], rnd: int, white: str, black: str, ids: tuple[int, int] | None
) -> str:
    """One game's PGN; `days`: (the event's first day, the game's)."""
    first, d = (x.strftime("%Y.%m.%d") for x in days)
    tags = [
        ("Event", event), ("Site", site), ("Date", d), ("EventDate", first), ("Round", str(rnd)),
        ("White", white), ("Black", black), ("Result", "1-0"),
    ]  # fmt: skip
    if ids is not None:
        tags += [("WhiteFideId", str(ids[0])), ("BlackFideId", str(ids[1]))]
    tags.append(("TimeControl", "5400+30"))
    return "".join(f'[{k} "{v}"]\n' for k, v in tags) + "\n1. d4 d5 1-0\n"


def club_file(k: int, with_ids: bool) -> str:
    """Event k: 8 games of 2 rounds between the players P0..P7 (the issue's `mkpgn`)."""
    day = FIRST_DAY + dt.timedelta(weeks=k)
    games = []
    for r in (1, 2):
        for b in range(4):
            w, bl = (b + r) % 8, (7 - b + r) % 8
            ids = (2500000 + w, 2500000 + bl) if with_ids else None
            games.append(_game(f"Event {k}", "Dublin IRL", (day, day), r, f"P{w}, X", f"P{bl}, X", ids))
    return "\n".join(games)


LIVE_PLAYERS = 200


def live_file(k: int) -> str:
    """Game k of a live-board export: round k // 100 + 1, board k % 100, 200 players by name."""
    rnd, board = divmod(k, LIVE_PLAYERS // 2)
    w = (2 * board + rnd) % LIVE_PLAYERS
    b = (2 * board + 1 + 3 * rnd) % LIVE_PLAYERS
    if b == w:
        b = (b + 1) % LIVE_PLAYERS
    day = FIRST_DAY + dt.timedelta(days=rnd)
    first = f"Player{w:03d}, Anna"
    second = f"Player{b:03d}, Anna"
    return _game("Live Open", "Dublin IRL", (FIRST_DAY, day), rnd + 1, first, second, None)


def build(shape: str, n: int, data: Path = DATA) -> Path:
    """The folder of `n` files of `shape` (cached in `data`), with `all.pgn` (the same games in
    one file) and `all.zip` (the `n` files as members) beside it."""
    root = data / f"{shape}_{n}"
    if (root / "done").exists():
        return root
    if root.exists():
        # a build this bench began and did not finish is ours to clear; anything else is not
        if not (root / "building").exists():
            raise SystemExit(f"{root} exists and was not made by this bench: give another --data")
        shutil.rmtree(root)
    files = root / "files"
    files.mkdir(parents=True)
    (root / "building").write_text("")
    texts = []
    for k in range(1, n + 1):
        text = live_file(k - 1) if shape == "live" else club_file(k, with_ids=shape == "club")
        (files / f"f{k:05d}.pgn").write_text(text, encoding="utf-8")
        texts.append(text.strip("\n") + "\n")
    (root / "all.pgn").write_text("\n".join(texts), encoding="utf-8")
    with zipfile.ZipFile(root / "all.zip", "w", zipfile.ZIP_DEFLATED) as z:
        for k in range(1, n + 1):
            z.write(files / f"f{k:05d}.pgn", f"f{k:05d}.pgn")
    (root / "done").write_text("")
    return root


@dataclass
class Run:
    rc: int | None  # None: killed after the timeout
    wall: float
    cpu: float
    peak: int  # bytes
    out: str

    @property
    def last_line(self) -> str:
        lines = self.out.strip().splitlines()
        return lines[-1] if lines else ""

    @property
    def lines(self) -> int:
        return len(self.out.strip().splitlines())


def measure(cmd: list[str], cwd: Path, timeout: float) -> Run:
    """Run `cmd` with its output piped (not a terminal), sampling its tree's RSS and CPU; kill
    it (its process group) after `timeout` seconds."""
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        peak = [0]
        done = threading.Event()
        others: dict[int, float] = {}
        killed = [False]

        def sample() -> None:
            while not done.wait(0.2):
                peak[0] = max(peak[0], tree_rss(proc.pid))
                descendants_cpu(proc.pid, others)
                if time.perf_counter() - t0 > timeout and not killed[0]:
                    killed[0] = True
                    os.killpg(proc.pid, 9)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        done.set()
        sampler.join()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    cpu = usage.ru_utime + usage.ru_stime + sum(others.values())
    rc = None if killed[0] else proc.returncode
    return Run(rc, wall, cpu, max(usage.ru_maxrss * 1024, peak[0]), text)


def ingest(python: str, path: Path, timeout: float) -> Run:
    with tempfile.TemporaryDirectory(prefix="elopipe-small-") as tmp:
        cmd = [python, "-c", CLI, "ingest", str(path), "--db", str(Path(tmp) / "s.duckdb")]
        return measure(cmd, Path(tmp), timeout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", default="1000,3000", help="comma-separated file counts (default 1000,3000)")
    ap.add_argument("--shapes", default="club,club-noid,live", help="comma-separated: club, club-noid, live")
    ap.add_argument("--forms", default="folder,zip", help="comma-separated: folder, zip (the one file always runs)")
    ap.add_argument("--timeout", type=float, default=900, help="seconds before an ingest is killed (default 900)")
    ap.add_argument("--data", type=Path, default=DATA, help=f"folder of the generated inputs (default {DATA})")
    ap.add_argument("--python", default=sys.executable, help="interpreter whose elopipe is measured")
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} CPUs; load average {'/'.join(f'{x:.2f}' for x in os.getloadavg())}")
    head = f"{'input':28} {'games':>6} {'CPU s':>8} {'x 1 file':>8} {'peak MB':>8} {'wall s':>8} {'lines':>5}  result"
    print(head, flush=True)
    for shape in args.shapes.split(","):
        for n in (int(x) for x in args.files.split(",")):
            root = build(shape, n, args.data)
            games = n if shape == "live" else 8 * n
            base = ingest(args.python, root / "all.pgn", args.timeout)
            targets = {"folder": root / "files", "zip": root / "all.zip"}
            rows = [("one file", base)] + [
                (form, ingest(args.python, targets[form], args.timeout)) for form in args.forms.split(",")
            ]
            for form, run in rows:
                ratio = run.cpu / base.cpu if base.cpu else float("inf")
                result = run.last_line if run.rc is not None else f"killed after {args.timeout:.0f} s"
                print(
                    f"{f'{shape} {n} {form}':28} {games:6} {run.cpu:8.1f} {ratio:8.1f} {run.peak / MB:8.0f} "
                    f"{run.wall:8.1f} {run.lines:5}  {result}",
                    flush=True,
                )
    print(f"load average at end {'/'.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
