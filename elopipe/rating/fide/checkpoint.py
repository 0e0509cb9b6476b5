"""What the FIDE engine carries from one rating period to the next, kept per period in the store
(``rating_checkpoints``, ``rating_checkpoint_rows``), so that a run after new data starts from
the first period the data touches (`elopipe.rating.fide.resume`, issue 27).

The engine's loop (`engine.run_periods`) carries, from list t − 1 to list t:

* the state of every player (`frames.STATE_SCHEMA`: rating, games, the 2400 and 2300 marks of
  B.02 8.3.3, birth year, last active list of 7.2.2, start of pooling after a fall below the floor
  of 7.2.1, an official list's K, first list with a rating): kept as the rows that changed in each
  period ('state'), so the state before t is each player's latest row dated before t;
* the games unrated players pooled (B.02 7.1.4, 'pool'), and the players started from the rating
  their file gives ('boot', `frames.Lists`): the rows each period added;
* every list computed or imported so far: the stored lists themselves (``rating_lists``,
  ``official_lists``), whose rows each checkpoint digests (``list_hash``) so that a list edited by
  hand is never read as the engine's.

``rating_checkpoints.inputs`` digests, per period, what its events give the engine
(`inputs_by_period`): each event's games (the stored columns `store_io` reads, and what hides one
from ``canonical_games``), its stored rows and entries and the facts of its players, together with
what every period reads (the options, the code, the imported official lists, for rapid and blitz
the standard lists, the events no period holds). A period whose digest is the stored one gives the
engine what it gave the run that kept its checkpoint.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

import duckdb
import polars as pl

from elopipe.rating import event_inputs, inputs, scenarios, store_io
from elopipe.rating.fide.frames import POOL_SCHEMA, STATE_SCHEMA, Lists, by_player
from elopipe.store import write
from elopipe.store.frames import registered

_BOOT_COLUMNS = ("player_id", "boot_date", "boot_rating", "boot_period")


@dataclass
class Resume:
    """Where a run resumes: the engine's state before list `start` (after `prev_list`), the pooled
    games and the lists in force known then (`frames.Lists`, boots included)."""

    start: dt.date
    prev_list: dt.date
    state: pl.DataFrame
    pool: pl.DataFrame
    lists: Lists


@dataclass
class Recorder:
    """Collects, period by period, what `save` keeps: the state rows that changed (by a row hash
    against the previous period's), the pooled games and the boots each period added."""

    state: list[pl.DataFrame] = field(default_factory=list)
    pool: list[pl.DataFrame] = field(default_factory=list)
    boots: list[pl.DataFrame] = field(default_factory=list)
    _hashes: pl.DataFrame | None = None

    def begin(self, state: pl.DataFrame) -> None:
        """The state the recorded periods start from (a resumed run's)."""
        self._hashes = _row_hashes(state)

    def period(self, t: dt.date, state: pl.DataFrame, pool_added: pl.DataFrame, boots_added: pl.DataFrame) -> None:
        """Record period `t`: `state` after it, the pooled games and the boots it added."""
        hashes = _row_hashes(state)
        if self._hashes is None:
            delta = state
        else:
            changed = hashes.join(self._hashes, on="player_id", how="left", suffix="_old").filter(
                pl.col("h_old").is_null() | (pl.col("h") != pl.col("h_old"))
            )
            delta = state.join(changed.select("player_id"), on="player_id", how="semi")
        self._hashes = hashes
        self.state.append(delta.with_columns(pl.lit(t).alias("list_date")))
        if pool_added.height:
            self.pool.append(pool_added)
        if boots_added.height:
            self.boots.append(boots_added)

    def after(self, state: pl.DataFrame, pool: pl.DataFrame, lists: Lists) -> None:
        """The engine's state after its last period: kept by nothing here; a run in windows of
        periods carries it to the next window (`elopipe.rating.fide.windows`)."""


def _row_hashes(state: pl.DataFrame) -> pl.DataFrame:
    return state.select("player_id", state.select(list(STATE_SCHEMA)).hash_rows(seed=7).alias("h"))


def _agg(alias: str) -> str:
    """SQL: an order-free digest of the rows of `alias` (count, sum and XOR of their hashes)."""
    return (
        f"count(*)::VARCHAR || ':' || coalesce(sum(hash({alias})::HUGEINT), 0)::VARCHAR || ':' || "
        f"coalesce(bit_xor(hash({alias})), 0)::VARCHAR"
    )


def shared_parts(con: duckdb.DuckDBPyConnection, system: str, params: Mapping[str, Any]) -> dict[str, str]:
    """{part: sha1} of what every period reads, part by part (`SHARED_PARTS` names them), so that a
    run from the first period can say which changed: 'options' (the system and the run's options),
    'code' (`inputs.code_digest`), 'lists' (the imported official lists and, for rapid or blitz, the
    standard lists: the companion's), 'dates' (the stored dates the machine's date leaves out:
    `store_io.implausible_dates_digest`).
    The events no period holds are added by `inputs_by_period` ('undated')."""
    base, _ = scenarios.split_system(system)
    off = f"SELECT {_agg('o')} FROM ({store_io.OFFICIAL_LISTS_SQL}) o"
    rows = [con.execute(off, [base]).fetchall()]
    if base != "fide":
        key = scenarios.companion(system, "fide")
        rows.append(con.execute(off, ["fide"]).fetchall())
        rows.append(con.execute(f"SELECT {_agg('s')} FROM rating_lists s WHERE system = ?", [key]).fetchall())
    return {
        "options": _sha1(json.dumps({"system": system, **params}, default=str, sort_keys=True)),
        "dates": store_io.implausible_dates_digest(con),
        "code": inputs.code_digest(),
        "lists": _sha1(repr(rows)),
    }


def _sha1(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def event_digests(con: duckdb.DuckDBPyConnection, no_moves: str, players: pl.DataFrame | None = None) -> pl.DataFrame:
    """Per event (tournament_id Int64, digest Utf8): its rows (`event_inputs.digests`: the frame a
    `elopipe.rating.run.rate` of this connection read already when it lends one,
    `event_inputs.reused`, else read now) and the facts of its players (`event_inputs.facts`;
    `players`: as it takes them). `no_moves` goes into every period's digest with the options
    (`inputs_by_period`); it is checked here (ValueError)."""
    no_moves = store_io.check_no_moves(no_moves)
    rows = event_inputs.reused(con)
    if rows is None:
        rows = event_inputs.digests(con)
    # an event without a game or an entry has no facts: "-" stands for a side missing
    return (
        rows.select("tournament_id", "digest")
        .join(event_inputs.facts(con, players), on="tournament_id", how="full", coalesce=True)
        .select(
            "tournament_id",
            pl.concat_str(pl.col("digest").fill_null("-"), pl.col("facts").fill_null("-"), separator="/").alias(
                "digest"
            ),
        )
    )


def inputs_by_period(
    con: duckdb.DuckDBPyConnection,
    system: str,
    params: Mapping[str, Any],
    periods: pl.DataFrame,
    players: pl.DataFrame | None = None,
) -> tuple[dict[dt.date, str], str, str]:
    """({period: digest} of the periods that hold an event, the digest of a period without one,
    what every period reads: the JSON of `shared_parts` and 'undated', digested into each).

    `periods`: every event's period (tournament_id, list_date; null: no period, its digest goes
    into every period's). `params`: the run's options (`FideParams.as_dict`). `players`: as
    `event_digests` takes them."""
    parts = shared_parts(con, system, params)
    no_moves = str(params.get("no_moves", "played"))
    ev = event_digests(con, no_moves, players).join(periods, on="tournament_id", how="left")
    # the events no period holds (no dates): every period reads their rows (skips, rate of play)
    parts["undated"] = _sha1(",".join(sorted(ev.filter(pl.col("list_date").is_null()).get_column("digest"))))
    shared = json.dumps(parts, sort_keys=True)
    glob = _sha1(shared)
    per = (
        ev.filter(pl.col("list_date").is_not_null())
        .sort("digest")
        .group_by("list_date", maintain_order=True)
        .agg(pl.col("digest").str.join(","))
    )
    out = {d: _sha1(f"{glob}|{joined}") for d, joined in per.iter_rows()}
    return out, _sha1(f"{glob}|"), shared


def stored(con: duckdb.DuckDBPyConnection, system: str) -> dict[dt.date, tuple[str, str | None]]:
    """{period: (inputs, list_hash)} kept for `system`."""
    rows = con.execute(
        "SELECT list_date, inputs, list_hash FROM rating_checkpoints WHERE system = ?", [system]
    ).fetchall()
    return {d: (i, h) for d, i, h in rows}


def stored_shared(con: duckdb.DuckDBPyConnection, system: str) -> dict[str, str] | None:
    """{part: sha1} of what every period read when `system`'s checkpoints were kept (`inputs_by_period`'s
    shared JSON); None when unknown (kept by an older version, or not one value for all)."""
    rows = con.execute("SELECT DISTINCT shared_inputs FROM rating_checkpoints WHERE system = ?", [system]).fetchall()
    if len(rows) != 1 or rows[0][0] is None:
        return None
    parts: dict[str, str] = json.loads(rows[0][0])
    return parts


def listed(con: duckdb.DuckDBPyConnection, system: str) -> set[dt.date]:
    """The dates of `system`'s lists that list a player, as kept with the checkpoints (a list hash
    of no row is '0:0:0'; a period without a list has none): one row a period, not the lists' rows;
    without a checkpoint (a run that left events out drops them), the stored lists' dates."""
    rows = con.execute(
        "SELECT list_date, list_hash FROM rating_checkpoints WHERE system = ? AND list_hash IS NOT NULL", [system]
    ).fetchall()
    if not rows:
        rows = con.execute("SELECT DISTINCT list_date, '' FROM rating_lists WHERE system = ?", [system]).fetchall()
    return {d for d, h in rows if not h.startswith("0:")}


_LIST_HASH = f"list_date, {_agg('(player_id::BIGINT, rating::BIGINT)')}"


def list_hashes(con: duckdb.DuckDBPyConnection, system: str, dates: Collection[dt.date]) -> dict[dt.date, str]:
    """{list date: digest of its stored (player_id, rating) rows} for `dates` (a list without a row
    digests as '0:0:0')."""
    rows = con.execute(
        f"SELECT {_LIST_HASH} FROM rating_lists WHERE system = ? AND list_date IN (SELECT unnest(?::DATE[]))"
        " GROUP BY 1",
        [system, sorted(dates)],
    ).fetchall()
    found = {d: h for d, h in rows}
    return {d: found.get(d, "0:0:0") for d in dates}


def engine_list_hashes(
    con: duckdb.DuckDBPyConnection, lists: pl.DataFrame, dates: Collection[dt.date]
) -> dict[dt.date, str]:
    """`list_hashes` of the engine's own lists (`lists`: list_date, player_id, rating), not of the
    stored rows: a list kept in the store because its inputs did not change may have been edited."""
    frame = lists.select("list_date", "player_id", "rating")
    with registered(con, "_engine_lists", frame):
        rows = con.execute(f"SELECT {_LIST_HASH} FROM _engine_lists GROUP BY 1").fetchall()
    found = {d: h for d, h in rows}
    return {d: found.get(d, "0:0:0") for d in dates}


def drop(con: duckdb.DuckDBPyConnection, system: str) -> None:
    """Remove `system`'s checkpoints: its next run computes every period."""
    for table in ("rating_checkpoints", "rating_checkpoint_rows"):
        con.execute(f"DELETE FROM {table} WHERE system = ?", [system])


def save(
    con: duckdb.DuckDBPyConnection,
    system: str,
    start: dt.date | None,
    recorder: Recorder,
    periods: Mapping[dt.date, str],
    empty: str,
    lists: pl.DataFrame,
    list_dates: Collection[dt.date],
    run_id: int | None,
    shared: str | None = None,
) -> None:
    """Keep `system`'s checkpoints from period `start` on (None: all of them), in one transaction:
    the `recorder`'s rows, the inputs digest of each period (`periods`, `empty` for a list date
    without event), what every period read (`shared`: `inputs_by_period`'s JSON) and the digest
    of each list of `list_dates` as the engine computed it (`lists`: its ``rating_lists`` rows)."""
    lo = start or dt.date.min
    keys = sorted({d for d in periods if d >= lo} | {d for d in list_dates if d >= lo})
    hashes = engine_list_hashes(con, lists, [d for d in list_dates if d >= lo])
    meta = pl.DataFrame(
        {
            "list_date": keys,
            "inputs": [periods.get(d, empty) for d in keys],
            "list_hash": [hashes.get(d) for d in keys],
            "shared_inputs": [shared] * len(keys),
        },
        schema={"list_date": pl.Date, "inputs": pl.Utf8, "list_hash": pl.Utf8, "shared_inputs": pl.Utf8},
    )
    rows = []
    if recorder.state:
        rows.append(pl.concat(recorder.state).with_columns(pl.lit("state").alias("part")))
    if recorder.pool:
        rows.append(pl.concat(recorder.pool).with_columns(pl.lit("pool").alias("part")))
    if recorder.boots:
        boots = pl.concat(recorder.boots).rename({"boot_period": "list_date"})
        rows.append(boots.with_columns(pl.lit("boot").alias("part")))
    with write.transaction(con):
        for table in ("rating_checkpoints", "rating_checkpoint_rows"):
            con.execute(f"DELETE FROM {table} WHERE system = ? AND list_date >= ?", [system, lo])
        write.insert(con, "rating_checkpoints", meta, constants={"system": system, "run_id": run_id})
        for frame in rows:
            write.insert(con, "rating_checkpoint_rows", frame, constants={"system": system})


def load(
    con: duckdb.DuckDBPyConnection,
    system: str,
    start: dt.date,
    prev_list: dt.date,
    list_dates: list[dt.date],
    official: pl.DataFrame,
    min_in_force: dt.date,
) -> Resume:
    """The engine as it stood before list `start`: the state (each player's latest 'state' row
    dated before `start`), the pooled games and boots of the earlier periods, and the lists in
    force from the latest one on or before `min_in_force` (the earliest list in force at a start
    of the events to rate) to `prev_list`: the computed ones (`list_dates`, those before `start`)
    from ``rating_lists``, the imported ones before the first list from `official`."""
    cols = ", ".join(STATE_SCHEMA)
    state = by_player(
        store_io.query(
            con,
            f"SELECT {cols} FROM rating_checkpoint_rows WHERE system = ? AND part = 'state' AND list_date < ?"
            " QUALIFY row_number() OVER (PARTITION BY player_id ORDER BY list_date DESC) = 1 ORDER BY player_id",
            [system, start],
        ).cast(STATE_SCHEMA)  # type: ignore[arg-type]
    )
    pool = store_io.query(
        con,
        f"SELECT {', '.join(POOL_SCHEMA)} FROM rating_checkpoint_rows WHERE system = ? AND part = 'pool'"
        " AND list_date < ? ORDER BY list_date, player_id, tournament_id",
        [system, start],
    ).cast(POOL_SCHEMA)  # type: ignore[arg-type]
    boots = store_io.query(
        con,
        "SELECT player_id, boot_date, boot_rating, list_date AS boot_period FROM rating_checkpoint_rows"
        " WHERE system = ? AND part = 'boot' AND list_date < ? ORDER BY list_date, player_id",
        [system, start],
    )
    lists = Lists()
    first = list_dates[0]
    off_dates = set(official.get_column("list_date").unique().to_list()) if official.height else set()
    before = sorted({d for d in off_dates if d < first} | {d for d in list_dates if d < start})
    eligible = [d for d in before if d <= min_in_force]
    lo = eligible[-1] if eligible else before[0]
    wanted = [d for d in before if d >= lo]
    computed = [d for d in wanted if d >= first]
    rows = store_io.query(
        con,
        "SELECT list_date, player_id::BIGINT AS player_id, rating::BIGINT AS rating FROM rating_lists"
        " WHERE system = ? AND list_date IN (SELECT unnest(?::DATE[])) ORDER BY list_date, player_id",
        [system, computed],
    )
    by_date = {k[0]: v for k, v in rows.partition_by("list_date", as_dict=True).items()} if rows.height else {}
    for d in wanted:
        off_d = official.filter(pl.col("list_date") == d) if d in off_dates else None
        if d < first:
            assert off_d is not None  # `before` holds only imported lists before the first one
            lists.put(d, off_d)
        else:
            lists.put(d, by_date.get(d, rows.clear()))
        if off_d is not None:
            lists.mark_official(d, off_d)
    if boots.height:
        lists.boots = boots.select(_BOOT_COLUMNS).cast(lists.boots.schema)
    return Resume(start=start, prev_list=prev_list, state=state, pool=pool, lists=lists)
