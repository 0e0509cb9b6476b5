"""Title norms of rated events, from the store (FIDE B.01; the rules: `elopipe.rating.fide.norms`).

What a norm needs, read in sets (`norm_inputs`: one query per kind, for every event asked):

* the games: `rating_changes` of the FIDE standard system (the games the rating considered,
  played over the board: forfeits and byes never count, 1.4.2c) with the round and the score;
  the opponent's rating is `rc`, the rating in force at the event's start (1.4.6a), NULL for an
  unrated opponent; in an event over 30 days the rating of the list in force on the game's day
  (1.1.4), from the imported official list, else the computed one;
* titles, federations and sex: the imported official FIDE list in force (the later source
  overrides), else the tournament entry (TRF 001, PGN WhiteTitle/WhiteFed tags); a federation or
  sex, else the player's (`players`). A title is only the list's or the event's own: it is known
  when the player is on an official list, the event is a TRF (its 001 rows always carry the
  title field, blank for none) or the event's file gives titles to anyone; a title another
  event gave the player may be later than this one, so it is not used;
* per event: the rounds, the round-robin shape (every pair of players met once: RR; twice:
  DRR), 1.4.2b (an unrated player who scored nothing against rated ones, round robins only),
  the 1.4.3d counts, and whether the event could be a national championship (every participant
  of known federation from the host federation: 1.4.3a/b, 'unknown' rather than a guess).

`evaluate_events` returns one row per (event, player, norm type) with the decision and the
figures; `games_frame` the counted games of each applicant (the report's IT1 lines);
`refresh` rewrites the `title_norms` rows of the lists a rating run rewrote.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import itertools
import sys
from collections.abc import Collection
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from elopipe.rating import result_rows, tables
from elopipe.rating.fide import norm_clauses, norm_inputs, norm_search, norms, norms_sets
from elopipe.rating.fide.norm_inputs import STANDARD, load, prepare
from elopipe.rating.fide.norm_search import best_outcome
from elopipe.store import write
from elopipe.store.frames import to_polars

NORM_SCHEMA: dict[str, Any] = {
    "system": pl.Utf8,
    "list_date": pl.Date,
    "tournament_id": pl.Int32,
    "player_id": pl.Int32,
    "norm": pl.Utf8,
    "era": pl.Utf8,
    "decision": pl.Utf8,
    "clause": pl.Utf8,
    "reason": pl.Utf8,
    "hint": pl.Utf8,
    "failed": pl.List(pl.Utf8),
    "single_miss": pl.Boolean,
    "half_point": pl.Boolean,
    "holds_title": pl.Boolean,
    "games": pl.Int32,
    "points_x2": pl.Int32,
    "ra": pl.Int32,
    "p": pl.Int32,
    "dp": pl.Int32,
    "rp": pl.Int32,
    "raised_id": pl.Int32,
    "raised_from": pl.Int32,
    "title_holders": pl.Int32,
    "norm_titles": pl.Int32,
    "feds": pl.Int32,
    "own_fed": pl.Int32,
    "top_fed": pl.Utf8,
    "top_count": pl.Int32,
    "dropped": pl.List(pl.Int32),
    "exemption": pl.Utf8,
    "code": pl.Utf8,
}

BATCH_ENTRIES = 20_000
"""The most event entries (`tournament_ratings` rows) whose norms `refresh` decides at once."""

SET_BASED_MIN = 200
"""The fewest entries of a batch whose norms `refresh` decides in sets (`norms_sets`): the set-based
pass has a fixed cost of about 0.06 CPU-s, the per-applicant rules about 0.25 ms an applicant, and
both give the same rows (`tests/rating/fide/test_norms_sets.py`): below this, as one new event of
100 players (issue 27), the per-applicant rules cost less."""


def evaluate_events(
    con: duckdb.DuckDBPyConnection,
    tournament_ids: Collection[int],
    system: str = STANDARD,
    *,
    set_based: bool = True,
    frames: dict[str, pl.DataFrame] | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Every norm type for every rated player of `tournament_ids` under `system`.

    Returns (norms, games): `norms` with the columns of `NORM_SCHEMA` (one row per event,
    player with a rated game and norm type; `points_x2` in half points, `p` whole percent);
    `games` the applicant's games (tournament_id, player_id, round, opponent_id, points_x2,
    rating, opp_title, opp_fed, excluded). The rows whose decision needs no search are decided
    in sets (`elopipe.rating.fide.norms_sets`), the others per applicant; `set_based=False` decides
    every row per applicant (the reference the set-based rows are tested against). `frames`:
    what `load` read of these events (None: read here)."""
    frames = load(con, tournament_ids, system) if frames is None else frames
    ev, games, applicants = prepare(frames)
    schema = {k: v for k, v in NORM_SCHEMA.items() if k != "code"}
    parts = []
    rest = games
    if set_based:
        decided, keys = norms_sets.decide(system, ev, games, applicants)
        parts.append(decided.select(list(schema)).cast(schema))  # type: ignore[arg-type]
        rest = games.join(keys, on=["tournament_id", "player_id"], how="semi")
    parts.append(_decide_each(system, ev, rest, applicants, schema))
    out = pl.concat(parts).with_columns(pl.lit(code_fingerprint()).alias("code"))
    return out.sort("tournament_id", "player_id", "norm"), games


# the frames of `load`, in the order their digests are joined
_FRAMES = ("events", "games", "entries", "unplayed")


def _group_digests(df: pl.DataFrame, by: list[str], seed: int) -> pl.DataFrame:
    """Per group of `by`: 'rows:sum:xor' of its rows' hashes (Polars `hash_rows`, `seed`, the other
    columns in name order): order-independent, and two equal rows do not cancel."""
    cols = sorted(c for c in df.columns if c not in by)
    h = df.select(cols).hash_rows(seed=seed).alias("__h")
    return (
        df.select(by)
        .with_columns(h)
        .group_by(by)
        .agg(pl.len().alias("n"), pl.col("__h").sum().alias("s"), pl.col("__h").bitwise_xor().alias("x"))
        .select(*by, pl.format("{}:{}:{}", "n", "s", "x").alias("digest"))
    )


def input_digests(frames: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """Per event of `frames` (`load`'s): tournament_id (Int32), inputs (Utf8), a digest of
    everything its norms are decided from (its rows in every frame, the norm rules' code): an
    event's rows are a function of these alone (they are decided event by event, whatever the
    batch), so the same digest gives the same rows."""
    ids = frames["events"].select(pl.col("tournament_id").cast(pl.Int32))
    for i, name in enumerate(_FRAMES):
        f = frames[name].with_columns(pl.col("tournament_id").cast(pl.Int32))
        part = _group_digests(f, ["tournament_id"], seed=i + 1).rename({"digest": name})
        ids = ids.join(part, on="tournament_id", how="left")
    return ids.select(
        "tournament_id",
        pl.concat_str([pl.lit(code_fingerprint()), *(pl.col(n).fill_null("-") for n in _FRAMES)], separator="|")
        .map_batches(_sha1, return_dtype=pl.Utf8)
        .alias("inputs"),
    )


def _sha1(texts: pl.Series) -> pl.Series:
    return pl.Series([hashlib.sha1(t.encode()).hexdigest() for t in texts.to_list()], dtype=pl.Utf8)


def _marks(rows: pl.DataFrame, inputs: pl.DataFrame, pairs: pl.DataFrame) -> pl.DataFrame:
    """The ``title_norm_inputs`` rows of the events of `pairs` (list_date, tournament_id: where each is
    rated): the event's input digest (`input_digests`), '/', and the digest of its `rows`
    (`NORM_SCHEMA`) on that list, empty for none (`_group_digests`)."""
    out = _group_digests(rows.select(list(NORM_SCHEMA)).cast(NORM_SCHEMA), list(_NORM_GROUP), seed=len(_FRAMES) + 1)  # type: ignore[arg-type]
    return (
        pairs.join(out, on=list(_NORM_GROUP), how="left")
        .join(inputs, on="tournament_id", how="left")
        .select(
            *_NORM_GROUP,
            pl.concat_str([pl.col("inputs").fill_null("-"), pl.col("digest").fill_null("")], separator="/").alias(
                "inputs"
            ),
        )
    )


def _unchanged(
    con: duckdb.DuckDBPyConnection, system: str, dates: list[dt.date], inputs: pl.DataFrame, pairs: pl.DataFrame
) -> set[int]:
    """The events of `pairs` (list_date, tournament_id: where each is rated) whose stored rows are
    those deciding them again would write: the ``title_norm_inputs`` row of each of its pairs is
    the `_marks` of its inputs now (`input_digests`) and of its rows as stored, and it has no row
    on another of `dates`. A hand edit or a removal of its rows, or of its mark, decides it again."""
    ids = sorted(set(pairs.get_column("tournament_id").to_list()))
    where = (
        "WHERE system = ? AND list_date IN (SELECT unnest(?::DATE[]))"
        " AND tournament_id IN (SELECT unnest(?::INTEGER[]))"
    )
    cols = ", ".join(NORM_SCHEMA)
    stored = to_polars(con.sql(f"SELECT {cols} FROM title_norms {where}", params=[system, dates, ids]))
    kept = to_polars(con.sql(f"SELECT list_date, tournament_id, inputs AS kept FROM title_norm_inputs {where}",
                             params=[system, dates, ids]))  # fmt: skip
    now = _marks(stored, inputs, pairs).join(kept, on=list(_NORM_GROUP), how="left")
    same = now.group_by("tournament_id").agg((pl.col("inputs") == pl.col("kept")).fill_null(False).all().alias("ok"))
    elsewhere = stored.select(_NORM_GROUP).unique().join(pairs, on=list(_NORM_GROUP), how="anti")
    ok = same.filter("ok").join(elsewhere, on="tournament_id", how="anti")
    return set(ok.get_column("tournament_id").to_list())


def _decide_each(
    system: str, ev: pl.DataFrame, games: pl.DataFrame, applicants: pl.DataFrame, schema: dict[str, Any]
) -> pl.DataFrame:
    """The rows of the applicants of `games`, decided one by one (`_decide`)."""
    rows: list[dict[str, Any]] = []
    if games.height:
        ev_by_id = {r["tournament_id"]: r for r in ev.iter_rows(named=True)}
        keys = games.select("tournament_id", "player_id").unique()
        facts = {
            (r["tournament_id"], r["player_id"]): r
            for r in applicants.join(keys, on=["tournament_id", "player_id"], how="semi").iter_rows(named=True)
        }
        # the rules run per applicant, on his handful of games: one pass over the sorted rows
        cols = ["tournament_id", "player_id", "list_date", "round", "opponent_id", "points_x2", "rating"]
        cols += ["opp_title", "opp_fed", "excluded"]
        ordered = games.select(cols).sort("tournament_id", "player_id", "round").iter_rows(named=True)
        for (tid, pid), part in itertools.groupby(ordered, key=lambda r: (r["tournament_id"], r["player_id"])):
            rows.extend(_decide(system, ev_by_id[tid], facts.get((tid, pid), {}), int(pid), list(part)))
    return pl.DataFrame(rows, schema=schema, orient="row")


def _decide(
    system: str, e: dict[str, Any], f: dict[str, Any], pid: int, part: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    era = norms.era_for(e["first_day"])
    list_date = part[0]["list_date"]
    title = f.get("title") or ""
    base: dict[str, Any] = {
        "system": system,
        "list_date": list_date,
        "tournament_id": e["tournament_id"],
        "player_id": pid,
    }
    if isinstance(era, str):
        return [
            {**base, "norm": n, "era": None, "decision": era.split(":")[0], "reason": era, "failed": [], "dropped": [],
             "holds_title": norms.holds_title(title, n), "games": len(part),
             "points_x2": sum(int(r["points_x2"]) for r in part)}
            for n in norms.NORM_TYPES
        ]  # fmt: skip
    national = bool(e["maybe_national"]) and f.get("federation") == e["host"]
    event = norms.Event(
        rounds=int(e["rounds"] or 0),
        round_robin=bool(e["round_robin"]),
        double_rr=bool(e["double_rr"]),
        exemption="1.4.3d" if e["swiss_143d"] else None,
        maybe_national=national,
        maybe_team=bool(e["is_team"]),
    )
    applicant = norms.Applicant(
        player_id=pid, federation=f.get("federation"), sex=f.get("sex"), title=title, byes=int(f.get("byes") or 0)
    )
    games = [
        norms.Game(
            round=int(r["round"] or 0),
            opponent_id=int(r["opponent_id"]),
            points_x2=int(r["points_x2"]),
            rating=r["rating"],
            title=r["opp_title"],
            federation=r["opp_fed"],
            excluded=r["excluded"],
        )
        for r in part
    ]
    out = []
    for n in norms.NORM_TYPES:
        o = best_outcome(games, event, applicant, n, era)
        out.append(
            {
                **base,
                "norm": n,
                "era": era.name,
                "decision": o.decision,
                "clause": o.clause,
                "reason": o.reason,
                "hint": o.hint or None,
                "failed": o.failed,
                "single_miss": o.decision == "missed" and len(o.failed) == 1,
                "half_point": norms.half_point_short(o, n),
                "holds_title": norms.holds_title(title, n),
                "games": o.games,
                "points_x2": o.points_x2,
                "ra": o.ra,
                "p": o.p_x100,
                "dp": o.dp,
                "rp": o.rp,
                "raised_id": o.raised_id,
                "raised_from": o.raised_from,
                "title_holders": o.title_holders,
                "norm_titles": o.norm_titles,
                "feds": o.feds,
                "own_fed": o.own,
                "top_fed": o.top_fed,
                "top_count": o.top_count,
                "dropped": list(o.dropped),
                "exemption": o.exemption,
            }
        )
    return out


@functools.cache
def code_fingerprint() -> str:
    """SHA-1 of the norm rules' sources (`norms`, `norm_search`, `norms_sets`, `norm_clauses`, `norm_inputs`,
    this module) and the dp table: rows decided by other code are decided again on the next run."""
    h = hashlib.sha1()
    for module in (norms, norm_search, norms_sets, norm_clauses, norm_inputs, sys.modules[__name__]):
        h.update(Path(module.__file__ or "").read_bytes())
    h.update(repr(tables.dp_table().rows()).encode())
    return h.hexdigest()


# the rows of title_norms replaced together: an event's, on its list
_NORM_GROUP = ("list_date", "tournament_id")


def refresh(
    con: duckdb.DuckDBPyConnection, system: str, lists: Collection[dt.date], through: dt.date | None = None
) -> int:
    """Rewrite the `title_norms` rows of `system` dated one of `lists` (the lists a rating run
    rewrote) from the events rated on them; when `system` has no norm row decided by this code
    (`code_fingerprint`: a store rated before norms were kept, or by other norm rules), every rated
    list up to `through`. An event is decided again only when what it is decided from or its stored
    rows changed (``title_norm_inputs``, `_unchanged`), and its rows are written only when they
    differ from the stored ones (`result_rows.replace_changed`); the table then holds what a delete
    of those lists and an insert of every row decided would leave. A batch of fewer than
    `SET_BASED_MIN` entries is decided by the per-applicant rules alone (the same rows).
    Only the FIDE standard system has norms. Returns the rows decided."""
    if system != STANDARD:
        return 0
    # a store rated before norms were kept, or by other norm rules, has no row of this code: its
    # first run decides every rated list once (a probe that stops at the first row)
    none_yet = not con.execute(
        "SELECT 1 FROM title_norms WHERE system = ? AND code = ? LIMIT 1", [system, code_fingerprint()]
    ).fetchall()
    missing = (
        con.execute(
            "SELECT DISTINCT list_date FROM tournament_ratings WHERE system = ? AND list_date <= ?",
            [system, through or dt.date.max],
        ).fetchall()
        if none_yet
        else []
    )
    dates = sorted(set(lists) | {r[0] for r in missing})
    if not dates:
        return 0
    # an event's norms read its own rows only: deciding them in batches of whole events, each
    # of at most BATCH_ENTRIES entries (or one larger event), bounds the memory by the batch,
    # not by the history (issue 27), while a history of small lists is not decided list by list
    batches: list[list[int]] = [[]]
    size = 0
    where: list[tuple[dt.date, int]] = []
    for day, tid, entries in con.execute(
        "SELECT list_date, tournament_id, count(*) FROM tournament_ratings"
        " WHERE system = ? AND list_date IN (SELECT unnest(?::DATE[])) GROUP BY list_date, tournament_id"
        " ORDER BY list_date, tournament_id",
        [system, dates],
    ).fetchall():
        if batches[-1] and size + entries > BATCH_ENTRIES:
            batches.append([])
            size = 0
        batches[-1].append(int(tid))
        where.append((day, int(tid)))
        size += entries
    rated = pl.DataFrame(where, schema={"list_date": pl.Date, "tournament_id": pl.Int32}, orient="row")
    decided = 0
    stored = "WHERE system = ? AND list_date IN (SELECT unnest(?::DATE[]))"
    with write.transaction(con):
        # an event's rows are replaced only when they differ: rewriting a list's unchanged rows made
        # DuckDB's checkpoint at close rewrite their row groups (0.18 CPU-s for a new TRF on 3 months);
        # lists without a stored row (a first run) take the rows as they come
        compare = bool(con.execute(f"SELECT 1 FROM title_norms {stored} LIMIT 1", [system, dates]).fetchall())
        for table in ("title_norms", "title_norm_inputs"):
            con.execute(
                f"DELETE FROM {table} {stored} AND tournament_id NOT IN (SELECT unnest(?::INTEGER[]))",
                [system, dates, [t for tids in batches for t in tids]],
            )
        for tids in filter(None, batches):
            frames = load(con, tids, system)
            inputs = input_digests(frames)
            pairs = rated.filter(pl.col("tournament_id").is_in(tids))
            if compare:
                # an event whose inputs and rows did not change keeps them: a new event on a list of
                # 70 decides one event, not 70 (issue 27)
                same = _unchanged(con, system, dates, inputs, pairs)
                if same:
                    tids = [t for t in tids if t not in same]
                    frames = {k: f.filter(~pl.col("tournament_id").is_in(sorted(same))) for k, f in frames.items()}
                    pairs = pairs.filter(pl.col("tournament_id").is_in(tids))
                if not tids:
                    continue
            set_based = frames["entries"].height >= SET_BASED_MIN
            rows = evaluate_events(con, tids, system, frames=frames, set_based=set_based)[0].select(list(NORM_SCHEMA))
            if compare:
                result_rows.replace_changed(con, system, "title_norms", rows, dates, key=_NORM_GROUP, events=tids)
            else:
                write.insert(con, "title_norms", rows)
            con.execute(
                f"DELETE FROM title_norm_inputs {stored} AND tournament_id IN (SELECT unnest(?::INTEGER[]))",
                [system, dates, tids],
            )
            write.insert(con, "title_norm_inputs", _marks(rows, inputs, pairs), constants={"system": system})
            decided += rows.height
    return decided
