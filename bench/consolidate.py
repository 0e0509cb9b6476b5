"""Benchmark: the store-side identity work of one batch (`consolidate.consolidate`, its pair
finders, `apply_manual_decisions`, `refresh_display_names`) on a store with generic event names.

Builds a store (in a temporary directory) of ``--files`` generated Swiss TRF tournaments
(players from a pool of ``--pool`` people, most with FIDE IDs, some written with an initial and
no FIDE ID), of which ``--generic`` are all named "Weekend Open 2024" with overlapping dates
(starting within ``--spread`` days); then loads ``--batch`` more files (``--batch-generic`` of
them "Weekend Open" too) without consolidating them, and times, each from the same state
(rolled back in between):

- **per file**: `consolidate` called once per file of the batch, as the loader did per file;
- **batch**: one `consolidate` call over the batch's files (skipped when the code under test
  takes one file id only);
- the pair finders `_same_name_groups` and `_initials_pairs` over the batch's players, with the
  number of `names_compatible` calls they make;
- `apply_manual_decisions` over the batch and `refresh_display_names` of every player.

CPU seconds are quoted (the machine may be shared). It runs against whatever `elopipe` is on the
path, so the same script measures two versions of the code.

With ``--cache``, the store before the batch is kept in ``bench/_data/`` (git-ignored) and
reused by the next run with the same arguments: only for runs of one version of the code.
``--profile`` prints the top of a cProfile of the batch's `consolidate`.

Usage: ``.venv/bin/python bench/consolidate.py [--files 100] [--generic 20] [--batch 6]
[--batch-generic 3] [--spread 10] [--pool 5000] [--cache] [--profile]``. A month-sized batch:
``--files 100 --generic 20 --batch 750 --batch-generic 150 --spread 28 --pool 30000``.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import hashlib
import inspect
import pstats
import random
import shutil
import tempfile
import time
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path

import duckdb

from elopipe.identity import consolidate, decisions
from elopipe.ingest.loader import load_parsed_source
from elopipe.read import names
from elopipe.read.parse import ParsedSource
from elopipe.read.records import GameRec, ParsedFile, PlayerRec, TournamentRec
from elopipe.read.sources import Source
from elopipe.store.schema import ensure_schema

GENERIC = "Weekend Open 2024"
CACHE = Path(__file__).resolve().parent / "_data"


def _pool(rng: random.Random, n: int) -> list[tuple[str, str, int | None, int]]:
    """People: (surname, given name, FIDE ID or None, birth year); names drawn with Zipf-like
    weights, so common given names and surnames repeat as they do in a federation."""
    surnames = [f"Sur{chr(97 + i % 26)}{chr(97 + i // 26 % 26)}{i}" for i in range(max(50, n // 6))]
    given = [f"{chr(65 + i % 26)}iv{chr(97 + i // 26 % 26)}{i}" for i in range(150)]
    ws = [1 / (i + 1) ** 0.8 for i in range(len(surnames))]
    wg = [1 / (i + 1) ** 0.8 for i in range(len(given))]
    out = []
    for i in range(n):
        s = rng.choices(surnames, ws)[0]
        g = rng.choices(given, wg)[0]
        fid = 10_000_000 + i if rng.random() < 0.85 else None
        out.append((s, g, fid, rng.randint(1950, 2015)))
    return out


def _file(rng: random.Random, pool, name: str, start: dt.date) -> ParsedFile:
    k = rng.randint(30, 150)
    people = rng.sample(pool, k)
    players = []
    for i, (s, g, fid, by) in enumerate(people, start=1):
        if fid is None and rng.random() < 0.3:
            written = f"{s}, {g[0]}"  # a sloppy entry: initial only, no FIDE ID
        else:
            written = f"{s}, {g}"
        players.append(PlayerRec(i, 1, written, fide_id=fid, birth_year=by, start_rank=i, federation="FRA"))
    rounds = rng.randint(5, 7)
    games = []
    for r in range(1, rounds + 1):
        order = list(range(1, k + 1))
        rng.shuffle(order)
        for a, b in zip(order[::2], order[1::2], strict=False):
            res = rng.choice(["1-0", "0-1", "1/2-1/2"])
            ws = {"1-0": 1, "0-1": 0}.get(res, Decimal("0.5"))
            games.append(
                GameRec(1, a, b, res, white_score=Decimal(ws), black_score=1 - Decimal(ws), round=r,
                        game_date=start + dt.timedelta(days=min(r - 1, 2)), date_precision="day")
            )  # fmt: skip
    t = TournamentRec(1, name=name, start_date=start, end_date=start + dt.timedelta(days=2), rounds=rounds)
    return ParsedFile("trf", tournaments=[t], players=players, games=games)


def _files(rng: random.Random, pool, n: int, n_generic: int, tag: str, spread: int) -> list[ParsedFile]:
    """`n` files, `n_generic` of them named `GENERIC` and starting within `spread` days of 1 March."""
    out = []
    for i in range(n):
        if i % max(1, n // max(1, n_generic)) == 0 and sum(f.tournaments[0].name == GENERIC for f in out) < n_generic:
            name, start = GENERIC, dt.date(2024, 3, 1) + dt.timedelta(days=rng.randint(0, spread))
        else:
            name, start = (
                f"Town{tag}{i} Championship 2024",
                dt.date(2024, 1, 1) + dt.timedelta(days=rng.randint(0, 300)),
            )
        out.append(_file(rng, pool, name, start))
    return out


def _load(con, parsed: ParsedFile, path: str) -> int:
    sha = hashlib.sha256(f"{path}{len(parsed.players)}{len(parsed.games)}".encode()).hexdigest()
    res = load_parsed_source(con, ParsedSource(Source(path), sha, 100, "trf", "utf-8", "LF", parsed))
    assert res.status == "loaded", res.reason
    return res.file_id


def _batch_api() -> bool:
    """True when `consolidate` takes a list of file ids (the batch API)."""
    return "file_ids" in inspect.signature(consolidate.consolidate).parameters


@contextmanager
def _cpu(label: str, out: dict):
    t0, c0 = time.perf_counter(), time.process_time()
    yield
    out[label] = (time.perf_counter() - t0, time.process_time() - c0)


@contextmanager
def _rolled_back(con):
    con.execute("BEGIN TRANSACTION")
    try:
        yield
    finally:
        con.execute("ROLLBACK")


@contextmanager
def _counting_compatible(counter: list[int]):
    real = names.names_compatible

    def counted(a: str, b: str) -> bool:
        counter[0] += 1
        return real(a, b)

    names.names_compatible = counted
    try:
        yield
    finally:
        names.names_compatible = real


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=100)
    ap.add_argument("--generic", type=int, default=20)
    ap.add_argument("--batch", type=int, default=6)
    ap.add_argument("--batch-generic", type=int, default=3, help="files of the batch named like the generic ones")
    ap.add_argument("--spread", type=int, default=10, help="days over which the generic events start")
    ap.add_argument("--pool", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--cache", action="store_true")
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    pool = _pool(rng, args.pool)
    files = _files(rng, pool, args.files, args.generic, "a", args.spread)
    cached = CACHE / f"consolidate_{args.files}_{args.generic}_{args.spread}_{args.pool}_{args.seed}.duckdb"
    work = Path(tempfile.mkdtemp()) / "store.duckdb"
    if args.cache and cached.exists():
        shutil.copy(cached, work)
    con = duckdb.connect(str(work))
    ensure_schema(con)
    t0 = time.process_time()
    if not (args.cache and cached.exists()):
        for i, f in enumerate(files):
            _load(con, f, f"/bench/a{i}.trf")
        if args.cache:
            con.execute("CHECKPOINT")
            CACHE.mkdir(exist_ok=True)
            shutil.copy(work, cached)
    n_players = con.execute("SELECT count(*) FROM players WHERE merged_into IS NULL").fetchone()[0]
    print(f"store: {args.files} files ({args.generic} '{GENERIC}'), {n_players} players,"
          f" built in {time.process_time() - t0:.1f} CPU-s")  # fmt: skip
    # the batch: loaded without the store-side identity steps, which are then timed
    real_cons, real_apply = consolidate.consolidate, decisions.apply_manual_decisions
    consolidate.consolidate = lambda *a, **k: []
    decisions.apply_manual_decisions = lambda *a, **k: 0
    try:
        batch = [
            _load(con, f, f"/bench/b{i}.trf")
            for i, f in enumerate(_files(rng, pool, args.batch, args.batch_generic, "b", args.spread))
        ]
    finally:
        consolidate.consolidate, decisions.apply_manual_decisions = real_cons, real_apply
    new_api = _batch_api()
    times: dict[str, tuple[float, float]] = {}
    counts: dict[str, int] = {}
    merged: dict[str, int] = {}
    with _rolled_back(con):
        n = [0]
        with _counting_compatible(n), _cpu("consolidate, per file", times):
            merged["consolidate, per file"] = sum(
                len(consolidate.consolidate(con, [f] if new_api else f)) for f in batch
            )
        counts["consolidate, per file"] = n[0]
    if new_api:
        with _rolled_back(con):
            n = [0]
            prof = cProfile.Profile() if args.profile else None
            with _counting_compatible(n), _cpu("consolidate, one batch", times):
                if prof:
                    prof.enable()
                merged["consolidate, one batch"] = len(consolidate.consolidate(con, batch))
                if prof:
                    prof.disable()
            if prof:
                pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
            counts["consolidate, one batch"] = n[0]
    touched = {
        r[0]
        for r in con.execute(
            "SELECT DISTINCT player_id FROM tournament_players WHERE file_id IN (SELECT UNNEST(?))", [batch]
        ).fetchall()
    }
    anchors = {
        r[0]
        for r in con.execute(
            "SELECT tournament_id FROM tournaments WHERE file_id IN (SELECT UNNEST(?))", [batch]
        ).fetchall()
    }
    finders = (
        ("_same_name_groups", lambda: consolidate._same_name_groups(con, touched)),
        (
            "_initials_pairs",
            lambda: (
                consolidate._initials_pairs(con, touched, anchors)
                if new_api
                else consolidate._initials_pairs(con, touched)
            ),
        ),
    )
    for label, fn in finders:
        n = [0]
        with _counting_compatible(n), _cpu(label, times):
            pairs = fn()
        counts[label] = n[0]
        merged[label] = len(pairs)
    with _rolled_back(con), _cpu("apply_manual_decisions", times):
        if new_api:
            decisions.apply_manual_decisions(con, batch)
        else:
            for f in batch:
                decisions.apply_manual_decisions(con, f)
    all_ids = [r[0] for r in con.execute("SELECT player_id FROM players").fetchall()]
    with _rolled_back(con), _cpu(f"refresh_display_names ({len(all_ids)} ids)", times):
        decisions.refresh_display_names(con, all_ids)
    print(f"batch: {len(batch)} files, {len(touched)} players; batch API: {new_api}")
    print(f"{'step':<40} {'wall s':>8} {'CPU s':>8} {'compat calls':>13} {'pairs/merges':>13}")
    for label, (wall, cpu) in times.items():
        print(f"{label:<40} {wall:>8.3f} {cpu:>8.3f} {counts.get(label, ''):>13} {merged.get(label, ''):>13}")
    con.close()
    shutil.rmtree(work.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
