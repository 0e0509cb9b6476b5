"""Benchmark: one large PGN archive parsed locally, then on a Dask cluster of 1 and of 2 workers
(issue 14), and the single writer's load rate, which is the ceiling of the design.

Input: at least 1,000,000 games (default), the real files of ``../shared/data/pgn``
concatenated as many times as needed, in one file (built by bench/ingest.py's `build_input`,
cached in ``bench/_data/pgn/``, about 1 GB). Every figure is a whole process, driven through
the CLI into a fresh store, in the same run:

- **local**: ``elopipe ingest ARCHIVE`` (the default path: one process reads the file in pieces);
- **dask-1**, **dask-2**: a real cluster started here (``dask scheduler`` and ``dask worker
  --nworkers N --nthreads 1``), then ``elopipe ingest ARCHIVE --dask ADDRESS``: the archive is
  cut into pieces of ``ELOPIPE_PIECE_BYTES`` (64 MiB), parsed by the workers, merged and written
  by the one writer;
- **writer**: the load alone, in this process: the archive parsed once, then
  `elopipe.ingest.loader.load_batch` timed into a fresh store (games/s into DuckDB).

It prints games/s for each, the speed-up of 2 workers over 1, and CPU seconds (the elopipe
process, its children, and the Dask workers' processes, sampled from /proc). On a 2-core
machine the writer, the scheduler and the workers share the cores: the speed-up per worker is
the figure to read, not the absolute rate. Usage:
``.venv/bin/python bench/scaleout.py [--games N] [--skip-local]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
os.environ.update(
    {
        # the archive is one file of about 1 GB: over the default cap of 512 MiB per stream
        "ELOPIPE_MAX_FILE_BYTES": str(8 * 1024**3),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "DO_NOT_TRACK": "1",
    }
)


def _bench_module(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


federation = _bench_module("federation")  # measure(): wall, CPU of the process tree, peak RSS


class Cluster:
    """`dask scheduler` and one `dask worker` process tree of `n` worker processes, on this machine."""

    def __init__(self, n: int, tmp: Path) -> None:
        self.file = tmp / f"scheduler-{n}.json"
        common = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        self.scheduler = subprocess.Popen(
            [str(BIN / "dask"), "scheduler", "--port", "0", "--no-dashboard", "--scheduler-file", str(self.file)],
            **common,
        )
        deadline = time.monotonic() + 60
        while not self.file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        self.workers = subprocess.Popen(
            [str(BIN / "dask"), "worker", "--scheduler-file", str(self.file), "--nworkers", str(n),
             "--nthreads", "1", "--no-dashboard"],
            **common,
        )  # fmt: skip
        import json

        self.address = json.loads(self.file.read_text())["address"]
        from distributed import Client

        with Client(self.address, timeout="30s") as client:
            client.wait_for_workers(n, timeout=120)
        self.cpu: dict[int, float] = {}
        self._done = threading.Event()
        self._sampler = threading.Thread(target=self._sample, daemon=True)
        self._sampler.start()

    def _sample(self) -> None:
        while not self._done.wait(0.2):
            self._read_cpu()

    def _read_cpu(self) -> None:
        """CPU seconds of every process below `dask worker` (its worker processes are started
        from another thread than the main one, so /proc's per-thread children lists miss them)."""
        children, todo = federation._ppids(), [self.workers.pid]
        while todo:
            pid = todo.pop()
            used = federation.cpu_of(pid)
            if used is not None:
                self.cpu[pid] = used
                todo.extend(children.get(pid, []))

    def cpu_seconds(self) -> float:
        self._read_cpu()
        return sum(self.cpu.values())

    def close(self) -> None:
        self._done.set()
        for proc in (self.workers, self.scheduler):
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            proc.wait(timeout=30)


def ingest(label: str, archive: Path, db: Path, extra: list[str]):
    run = federation.measure(label, [str(BIN / "elopipe"), "ingest", str(archive), "--db", str(db), "-q", *extra], ROOT)
    if run.rc != 0:
        sys.exit(f"{label} failed ({run.rc}):\n{run.out[-2000:]}")
    return run


def parse_phase(address: str, archive: Path) -> tuple[int, float, float]:
    """Games, wall seconds and writer-side seconds of the parse phase alone: the archive's
    pieces planned here (the writer's one scan, timed apart), parsed by the cluster's workers
    (`elopipe.ingest.units.run_unit` through plain Dask, without Prefect or the store), results
    gathered here."""
    from distributed import Client

    from elopipe.ingest.pieces import plan_pieces
    from elopipe.ingest.scaleout import piece_bytes
    from elopipe.ingest.units import Unit, run_unit
    from elopipe.read.sources import Source

    t0 = time.perf_counter()
    plan = plan_pieces(Source(str(archive)), piece_bytes())
    t_plan = time.perf_counter() - t0
    assert plan is not None
    units = [Unit(plan=plan, piece=k) for k in range(len(plan.pieces))]
    with Client(address, timeout="30s") as client:
        t0 = time.perf_counter()
        results = client.gather(client.map(run_unit, units, pure=False))
        wall = time.perf_counter() - t0
    return sum(r.piece.n_games for r in results), wall, t_plan


def writer_rate(archive: Path, tmp: Path) -> tuple[int, float]:
    """Games and seconds of `load_batch` alone, for the archive parsed once in this process."""
    from elopipe.ingest.loader import load_batch
    from elopipe.read.parse import parse_source
    from elopipe.read.sources import Source
    from elopipe.store.connect import open_writer

    parsed = parse_source(Source(str(archive)))
    assert parsed.parsed is not None, parsed.rejected_reason
    _ = parsed.parsed.games.frame  # type: ignore[union-attr]  # built before the clock starts
    with open_writer(tmp / "writer.duckdb") as con:
        t0 = time.perf_counter()
        results = load_batch(con, [parsed])
        elapsed = time.perf_counter() - t0
    return results[0].n_games, elapsed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=1_000_000, help="minimum games in the archive (default 1000000)")
    ap.add_argument("--skip-local", action="store_true", help="leave out the local run")
    args = ap.parse_args()
    archive, games = _bench_module("ingest").build_input(args.games)
    size = archive.stat().st_size
    print(f"input: {archive.relative_to(ROOT)} ({size / 1e6:,.0f} MB, {games:,} games); load {_load()}", flush=True)
    rows = []
    tmp = Path(tempfile.mkdtemp(prefix="elopipe-scaleout-"))
    try:
        if not args.skip_local:
            run = ingest("local", archive, tmp / "local.duckdb", [])
            rows.append(("local (process pool)", run.wall, run.cpu, run))
            print(f"  local done in {run.wall:.1f} s", flush=True)
        phases = []
        for n in (1, 2):
            cluster = Cluster(n, tmp)
            try:
                cpu0 = cluster.cpu_seconds()
                n_parsed, t_parse, t_plan = parse_phase(cluster.address, archive)
                phases.append((n, n_parsed, t_parse, cluster.cpu_seconds() - cpu0, t_plan))
                print(f"  dask-{n} parse phase {t_parse:.1f} s", flush=True)
                cpu0 = cluster.cpu_seconds()
                run = ingest(f"dask-{n}", archive, tmp / f"dask{n}.duckdb", ["--dask", cluster.address])
                worker_cpu = cluster.cpu_seconds() - cpu0
            finally:
                cluster.close()
            rows.append((f"--dask, {n} worker{'s' if n > 1 else ''}", run.wall, run.cpu + worker_cpu, run))
            print(f"  dask-{n} done in {run.wall:.1f} s", flush=True)
        n_loaded, t_load = writer_rate(archive, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"\n{'run':<24}{'wall s':>9}{'CPU s':>9}{'games/s':>12}{'peak RSS':>11}")
    for label, wall, cpu, run in rows:
        print(f"{label:<24}{wall:>9.1f}{cpu:>9.1f}{games / wall:>12,.0f}{run.tree_rss / 1e9:>9.2f} GB")
    print(f"{'writer: load_batch only':<24}{t_load:>9.1f}{'':>9}{n_loaded / t_load:>12,.0f}")
    print("\nparse phase alone (pieces of the one scan parsed on the workers, results gathered; no Prefect, no store):")
    print(f"{'workers':<10}{'wall s':>9}{'worker CPU s':>14}{'games/s':>12}{'writer scan s':>15}")
    for n, n_parsed, t_parse, cpu, t_plan in phases:
        print(f"{n:<10}{t_parse:>9.1f}{cpu:>14.1f}{n_parsed / t_parse:>12,.0f}{t_plan:>15.1f}")
    (_, g1, w1, c1, _), (_, g2, w2, c2, _) = phases
    print(f"parse speed-up of 2 workers over 1: {w1 / w2:.2f}x")
    print(f"games per worker CPU-second: {g1 / c1:,.0f} (1 worker), {g2 / c2:,.0f} (2 workers)")
    walls = {label: wall for label, wall, _, _ in rows}
    one, two = walls["--dask, 1 worker"], walls["--dask, 2 workers"]
    print(f"\nspeed-up of 2 workers over 1: {one / two:.2f}x (wall); per worker {one / two / 2:.2f}")
    if "local (process pool)" in walls:
        print(f"--dask 2 workers / local: {walls['local (process pool)'] / two:.2f}x")
    print(f"ceiling (the one writer): {n_loaded / t_load:,.0f} games/s into DuckDB; load {_load()}")
    return 0


def _load() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


if __name__ == "__main__":
    sys.exit(main())
