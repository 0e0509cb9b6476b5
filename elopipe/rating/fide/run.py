"""Run the FIDE engine ('fide', 'fide-rapid', 'fide-blitz') over the store, incrementally.

Reads the store (`elopipe.rating.store_io`), computes every list in memory with
`elopipe.rating.fide.engine`, and writes only what changed:

* For every list date a digest of that period's inputs is computed: its player-sides (game,
  players, scores, exclusion reason, event dates, rules version, rate class), the ratings
  written in the files of its events, the birth years of its players, the official list of
  that date, the run's parameters and a fingerprint of the rules' code and tables.
* The earliest list whose digest differs from the one stored in ``rating_period_digests``
  (or that is new, or that disappeared) is the first affected list: that list and every later
  one are recomputed; earlier lists are kept.  A late file for an old period therefore
  re-rates that period and all later ones.
* Of the recomputed lists, only those whose rows (``rating_lists``, ``rating_changes``,
  ``tournament_ratings``) differ from the stored ones are rewritten
  (``write_results(lists=...)``); the others keep their rows, and their digests are
  updated.  An event whose games are all between unrated players changes its own list only;
  a game pooled by an unrated player changes every later list while the pool (26 months)
  is shown on them.
* When no digest differs, nothing is written (re-running with nothing new changes nothing).
* A preview (``through``) computes and compares the lists up to it only and keeps the later
  ones; when it rewrote a list, the later lists' digests are deleted (their rows kept), so the
  next full run finds them changed and recomputes them.
* A scenario ('fide@x', `elopipe.rating.scenarios`) runs the same way under its own key: its
  digests, lists and Ro are its own.

Because the engine is deterministic and every list depends only on the stored games, lists
and files (never on ingestion order or on player/tournament ids), the in-memory recomputation
of the unchanged earlier lists reproduces what is stored.

A run without ``through`` does not recompute them when it can help it: it resumes from the
engine's state kept after the list before the first period whose events changed
(`elopipe.rating.fide.checkpoint`, `elopipe.rating.fide.resume`) and reads only the games of
that period onward; the digests above then decide, from that period on, what it rewrites.
Every run that computes from the first period (none kept yet, or one not to be trusted:
``RateSummary.full_reason``) keeps the checkpoints of every period; a preview, or a run that
left events out, removes them.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from elopipe.rating import faults, result_rows, result_tables, scenarios, store_io
from elopipe.rating.fide import b02, checkpoint, norms_store, resume
from elopipe.rating.fide.engine import run_periods, to_contract
from elopipe.rating.fide.list_digests import RESULT_KEYS
from elopipe.rating.fide.params import EngineInputs, EngineResult, FideParams
from elopipe.rating.fide.prepare import prepare, prepare_without
from elopipe.rating.periods import get_scheme
from elopipe.rating.summary import RateSummary, assumed_events, ro_far
from elopipe.store import write


def load_inputs(
    con: duckdb.DuckDBPyConnection,
    system: str,
    no_moves: str = "played",
    *,
    events: Collection[int] | None = None,
    tournaments: pl.DataFrame | None = None,
    players: pl.DataFrame | None = None,
) -> EngineInputs:
    """Read everything the FIDE engine needs from the store (`no_moves`: `store_io.load_games`);
    `events`: only the games and entries of these events (None: all); `tournaments`, `players`:
    the events as `store_io.load_tournaments` read them, the players as `store_io.load_players`
    (None: read here).

    `system`: the store key ('fide-rapid', or a scenario 'fide-rapid@x'). The official lists
    are the base system's; a rapid or blitz scenario seeds unrated players from the standard
    lists of the same scenario ('fide@x'), never from the plain computed ones
    (`elopipe.rating.scenarios`)."""
    base, _ = scenarios.split_system(system)
    std = None
    if base != "fide":
        computed = store_io.load_lists(con, scenarios.companion(system, "fide")).select(
            "player_id", "list_date", "rating"
        )
        official = store_io.load_official_lists(con, "fide").select("player_id", "list_date", "rating")
        std = (
            pl.concat([official, computed.cast(official.schema)])
            .unique(["player_id", "list_date"], keep="first")
            .filter(pl.col("rating").is_not_null())
        )
    return EngineInputs(
        games=store_io.load_games(con, no_moves, events),
        tournaments=store_io.load_tournaments(con) if tournaments is None else tournaments,
        tournament_players=store_io.load_tournament_players(con, events),
        players=store_io.load_players(con) if players is None else players,
        official=store_io.load_official_lists(con, base),
        standard_lists=std,
    )


def code_fingerprint() -> str:
    """SHA-1 of the rule and engine sources and table data: a new version of the rules
    re-rates everything on the next run. The sources are found by module, so a module that
    moves keeps its place in the fingerprint."""
    import elopipe.rating as pkg
    from elopipe.rating import lookup, periods, result_tables, rounding, store_io, tables
    from elopipe.rating.fide import (
        b02,
        changes,
        close,
        engine,
        frames,
        in_force,
        initial,
        k,
        params,
        period,
        prepare,
        ro,
    )
    from elopipe.read import rate_evidence, rate_of_play

    h = hashlib.sha1()
    modules = (params, prepare, frames, period, in_force, k, changes, close, initial, ro, engine)
    shared = (periods, tables, rounding, rate_of_play, rate_evidence, lookup, store_io, result_tables)
    for module in (b02, *modules, *shared):
        h.update(Path(module.__file__ or "").read_bytes())
    data = Path(pkg.__file__ or "").parent / "data"
    for name in ("table_8_1_1.csv", "table_8_1_2.csv"):
        h.update((data / name).read_bytes())
    return h.hexdigest()


def period_digests(prep: Any, params: FideParams, list_dates: list[dt.date]) -> dict[dt.date, str]:
    """Digest of each period's inputs (see the module docstring)."""
    sides = prep.sides.join(
        prep.file_ratings.select("tournament_id", "player_id", "file_rating"),
        on=["tournament_id", "player_id"],
        how="left",
    ).join(prep.birth_years, on="player_id", how="left")
    if prep.fide_ids is not None:
        # the 'file' Ro policy concerns the players with a FIDE ID: an ID found later re-rates
        sides = sides.with_columns(pl.col("player_id").is_in(prep.fide_ids.implode()).alias("__fide_id"))
    # ids are store-internal; the digest must not depend on them only through order, and it
    # does not: rows are hashed independently and sorted by hash.
    per_sides = store_io.period_digests(sides.drop("tc_minutes"), by="list_date")
    # imported official lists (a base list dated before the first period included) and, for
    # rapid/blitz, the standard lists that seed unrated players
    per_off = _digests_by_first_list(prep.official, list_dates)
    per_std = _digests_by_first_list(prep.standard_lists, list_dates)
    p = repr(sorted(params.as_dict().items())) + code_fingerprint()
    out: dict[dt.date, str] = {}
    for d in list_dates:
        h = hashlib.sha1()
        h.update(p.encode())
        h.update(per_sides.get(d, "-").encode())
        h.update(per_off.get(d, "-").encode())
        h.update(per_std.get(d, "-").encode())
        out[d] = h.hexdigest()
    return out


def _digests_by_first_list(df: pl.DataFrame | None, list_dates: list[dt.date]) -> dict[dt.date, str]:
    """Digest of `df`'s rows (a ``list_date`` column) grouped under the first computed list
    dated on or after their own date: a list dated x feeds every period from the first one
    computed after x, so a change to it must make that period stale (the later ones are
    recomputed with it).  Rows dated after the last list feed nothing."""
    if df is None or df.height == 0 or not list_dates:
        return {}
    targets = pl.Series("t", sorted(list_dates), dtype=pl.Date)
    idx = targets.search_sorted(df.get_column("list_date"), side="left")
    keep = idx < targets.len()
    rows = df.filter(keep).with_columns(targets.gather(idx.filter(keep)).alias("__first_list"))
    return store_io.period_digests(rows, by="__first_list")


def _first_changed(new: dict[dt.date, str], old: dict[dt.date, str]) -> dt.date | None:
    changed = [d for d, h in new.items() if old.get(d) != h]
    changed += [d for d in old if d not in new]
    return min(changed) if changed else None


def rate_fide(
    con: duckdb.DuckDBPyConnection,
    *,
    system: str = "fide",
    through: dt.date | None = None,
    rules: str | None = None,
    **params: Any,
) -> RateSummary:
    """Compute the FIDE lists of `system` and store what changed.

    `system`: 'fide', 'fide-rapid', 'fide-blitz', or a scenario of one ('fide@v2017': the
    base's rules, rows stored under the scenario's key, `elopipe.rating.scenarios`).
    `through`: last list to compute (None: up to the last period with games). A preview:
    the stored lists after it are kept; when a list up to it was rewritten, their period
    digests are deleted (they may be stale), so the next run without `through` recomputes them.
    `rules`: force 'V2017' | 'V2022' | 'V2024' (what-if runs).  Other keyword parameters go
    to `FideParams` (v2022_cap_lower, unknown_tc, check_time_minimum, rating_from, no_moves).
    A run without `through` first tries to resume from the checkpoint before the first period
    its new data touches (`elopipe.rating.fide.resume`); else it computes every period, and
    says why in ``RateSummary.full_reason``.
    Raises ValueError for an unknown system, version or parameter.
    """
    t0 = time.perf_counter()
    base, _ = scenarios.split_system(system)
    if base not in ("fide", "fide-rapid", "fide-blitz"):
        raise ValueError(f"not a FIDE system: {system!r}")
    if unknown := sorted(set(params) - set(param_keys(base))):
        raise ValueError(f"unknown FIDE parameter {', '.join(unknown)}; known: {', '.join(param_keys(base))}")
    fp = FideParams(system=base, rules=None if rules is None else b02.version_name(rules), **params)
    if fp.unknown_tc not in ("standard", "rapid", "blitz"):
        raise ValueError(f"unknown_tc must be standard, rapid or blitz, not {fp.unknown_tc!r}")
    plan = None
    why = "a preview (--through) computes every period up to it"
    if through is None:
        plan = resume.plan(con, system, fp)
        resumed = _resumed(con, system, fp, rules, plan) if plan.start is not None else None
        if resumed is not None:
            resumed.seconds = time.perf_counter() - t0
            return resumed
        why = plan.reason
        # a history larger than a window is computed window by window, in bounded memory (imported
        # here: a resumed run, the common one, does not compile it)
        from elopipe.rating.fide import windows

        windowed = windows.rate_in_windows(con, system, fp, rules, plan, load_inputs, period_digests)
        if windowed is not None:
            windowed.full_reason = why
            windowed.seconds = time.perf_counter() - t0
            return windowed
    inputs = load_inputs(
        con,
        system,
        fp.no_moves,
        tournaments=None if plan is None else plan.tournaments,
        players=None if plan is None else plan.players,
    )
    if plan is not None:
        plan.players = None  # the engine's now: freed with its inputs
    (prep, result, recorder), failed = faults.isolate(
        lambda excluded, _write: _compute(inputs, fp, through, excluded), lambda: faults.tournament_order(con)
    )
    digests = period_digests(prep, fp, result.list_dates)
    stored = store_io.load_digests(con, system)
    summary = _summarise(system, result)
    summary.full_reason = why
    ro_far(summary, result.tournament_ratings, inputs.players, inputs.tournaments)
    summary.ro_from = fp.ro_from
    summary.assumed_events = assumed_events(result.rating_changes, inputs.tournaments)
    summary.failed_events = faults.failed_lines(con, system, failed)
    games_hash = hashlib.sha1("".join(digests.values()).encode()).hexdigest()
    # the lists, the checkpoint and the title norms commit together (a run stopped between them
    # would leave lists whose norms are never decided)
    with write.transaction(con):
        edited = None if plan is None else plan.compare_from(stored)
        done = store_changes(
            con, system, fp, rules, prep, result, digests, stored, through, games_hash=games_hash, compare_from=edited
        )
        summary.run_id = done.run_id
        summary.changed_lists = done.written
        summary.lists_written = len(done.written)
        summary.first_changed = done.first_changed
        summary.removed_lists = done.gone
        summary.keep_listed(set(result.rating_lists.get_column("list_date").unique().to_list()))
        lists, list_dates = result.rating_lists, result.list_dates
        # the engine's frames are written: free them before the checkpoint and the norms read the store (issue 27)
        inputs = dataclasses.replace(
            inputs, games=inputs.games.clear(), tournament_players=inputs.tournament_players.clear()
        )
        del prep, result
        if plan is not None and not failed:
            by_period, empty = plan.digest(con, system, fp)
            checkpoint.save(con, system, None, recorder, by_period, empty, lists, list_dates, done.run_id, plan.shared)
        else:
            checkpoint.drop(con, system)
        del recorder, lists
        # title norms (B.01) of the events on those lists (and, once, of a store rated before norms were kept)
        norms_store.refresh(con, system, sorted(done.touched), through)
    summary.seconds = time.perf_counter() - t0
    return summary


@dataclass
class Stored:
    """What `store_changes` wrote: its run (None: none), the lists rewritten, the first list
    rewritten or removed (None: none), the lists whose title norms are decided again, the lists
    removed (stored, no longer computed: no game is rated on them any more)."""

    run_id: int | None
    written: list[dt.date]
    first_changed: dt.date | None
    touched: set[dt.date]
    gone: list[dt.date] = dataclasses.field(default_factory=list)


def store_changes(
    con: duckdb.DuckDBPyConnection,
    system: str,
    fp: FideParams,
    rules: str | None,
    prep: Any,
    result: EngineResult,
    digests: dict[dt.date, str],
    stored: dict[dt.date, str],
    through: dt.date | None,
    *,
    games_hash: str,
    keep: Collection[int] | None = None,
    compare_from: dt.date | None = None,
) -> Stored:
    """Write the lists of `result` whose period digests (`digests`) differ from the `stored`
    ones, or whose rows differ from the stored rows (see the module docstring), with the run's
    events left out and rates of play. `keep`: a resumed run's (`elopipe.rating.fide.resume`):
    the events of the periods before it, whose rows of ``rating_discrepancies``, ``rating_skips``
    and ``rate_of_play`` stay; `stored` then holds the digests from its first period on.
    `compare_from`: the rows of every list from it on are compared whatever the digests say
    (`resume.Plan.compare_from`: the stored results were edited)."""
    # a preview (`through`) neither compares nor rewrites the lists after it
    stored_cmp = stored if through is None else {d: h for d, h in stored.items() if d <= through}
    first = _first_changed(digests, stored_cmp)
    if compare_from is not None:
        first = compare_from if first is None else min(first, compare_from)
    if first is None:
        run_id = None
        if result_tables.event_rows_changed(con, system, result.skips, prep.rate_of_play, keep):
            # no list changed, but why events are left out or their rate of play did (e.g. an event
            # none of whose games is on this list any more): record it
            run_id = result_tables.start_run(con, system, rules_forced=rules, params=fp.as_dict())
            result_tables.save_skips(con, system, result.skips, run_id, keep)
            result_tables.save_rate_of_play(con, system, prep.rate_of_play, run_id, keep)
            result_tables.finish_run(con, run_id, first_list=None, last_list=None)
        return Stored(run_id, [], None, set())
    new_frames = {k: getattr(result, k).filter(pl.col("list_date") >= first) for k in RESULT_KEYS}
    # lists no longer computed go (their rows too: compared with no row, every group differs); a
    # preview keeps those after `through`
    gone = {d for d in stored_cmp if d >= first and d not in digests}
    rewrite, staged = _lists_that_differ(con, system, first, new_frames, stored, gone)
    rewrite |= gone
    # the kept later lists were computed from the lists rewritten now: the next full run redoes them
    stale = sorted(d for d in stored if through is not None and d > through) if rewrite else []
    new_digests = {d: h for d, h in digests.items() if d >= first and (stored.get(d) != h or d in rewrite)}
    run_id = result_tables.start_run(con, system, rules_forced=rules, params=fp.as_dict())
    frames = {k: f.filter(pl.col("list_date").is_in(sorted(rewrite))) for k, f in new_frames.items()}
    if keep is None:
        frames["rating_discrepancies"] = result.rating_discrepancies.filter(
            pl.col("list_date") <= (through or dt.date.max)
        )
    result_tables.write_results(
        con,
        system,
        first,
        frames,
        digests=new_digests,
        run_id=run_id,
        replace_all=("rating_discrepancies",) if keep is None else (),
        lists=rewrite,
        through=through,
        stale=stale,
        staged=staged,
    )
    if keep is not None:
        result_tables.replace_discrepancies(con, system, result.rating_discrepancies, keep)
    result_tables.save_skips(con, system, result.skips, run_id, keep)
    result_tables.save_rate_of_play(con, system, prep.rate_of_play, run_id, keep)
    written = sorted(d for d in rewrite if d in digests)
    result_tables.finish_run(
        con,
        run_id,
        first_list=written[0] if written else None,
        last_list=result.list_dates[-1] if result.list_dates else None,
        games_hash=games_hash,
    )
    first_changed = written[0] if written else (min(gone) if gone else None)
    return Stored(run_id, written, first_changed, set(new_digests) | rewrite, sorted(gone))


def _resumed(
    con: duckdb.DuckDBPyConnection, system: str, fp: FideParams, rules: str | None, p: resume.Plan
) -> RateSummary | None:
    """Rate `system` from `p.start` on (`elopipe.rating.fide.resume`); None when it cannot
    (`p.reason` then says why: the caller computes every period)."""
    assert p.start is not None
    start, scheme = p.start, get_scheme("fide")
    prev = scheme.previous_list(start)
    at = pl.col("list_date")
    events = p.periods.filter(at.is_null() | (at >= start)).get_column("tournament_id").to_list()
    keep = p.periods.filter(at < start).get_column("tournament_id").to_list()
    # the earlier events are no part of the run (their rate of play, skips and rows stay)
    tours = p.tournaments.filter(pl.col("tournament_id").is_in(events))
    inputs = load_inputs(con, system, fp.no_moves, events=events, tournaments=tours, players=p.players)
    p.players = None  # the engine's now: freed with its inputs
    prep = prepare(inputs, fp, scheme)
    periods = prep.sides.get_column("list_date").drop_nulls()
    if periods.is_empty() or periods.max() is None:
        p.reason = f"no rated game from {start:%Y-%m} on"
        return None
    last: dt.date = periods.max()  # type: ignore[assignment]
    prep.list_dates = scheme.lists_between(start, last)
    in_force = prep.sides.get_column("in_force").drop_nulls()
    earliest: dt.date = in_force.min() if in_force.len() else start  # type: ignore[assignment]
    kept = checkpoint.load(con, system, start, prev, p.lists, prep.official, earliest)
    recorder = checkpoint.Recorder()
    try:
        result = to_contract(run_periods(prep, fp, resume=kept, recorder=recorder))
    except Exception as exc:  # noqa: BLE001 - the run from the first period isolates the culprit
        p.reason = f"the run from {start:%Y-%m} failed ({type(exc).__name__}); computing every period"
        return None
    # the official lists dated up to the previous list are digested into the earlier periods
    official = prep.official.filter(at > prev)
    std = prep.standard_lists.filter(at > prev) if prep.standard_lists is not None else None
    digests = period_digests(
        dataclasses.replace(prep, official=official, standard_lists=std),
        fp,
        result.list_dates,
    )
    stored = store_io.load_digests(con, system)
    every = {d: h for d, h in stored.items() if d < start} | digests
    games_hash = hashlib.sha1("".join(every[d] for d in sorted(every)).encode()).hexdigest()
    after = {d: h for d, h in stored.items() if d >= start}
    # the lists, the checkpoint and the title norms commit together (`rate` above)
    with write.transaction(con):
        done = store_changes(
            con, system, fp, rules, prep, result, digests, after, None, games_hash=games_hash, keep=keep
        )
        by_period, empty = p.digest(con, system, fp)
        checkpoint.save(
            con,
            system,
            start,
            recorder,
            by_period,
            empty,
            result.rating_lists,
            result.list_dates,
            done.run_id,
            p.shared,
        )
        dates = [d for d in p.lists if d < start] + result.list_dates
        summary = resume.summary_from_store(con, system, dates, inputs.players, p.tournaments)
        summary.run_id = done.run_id
        summary.changed_lists = done.written
        summary.lists_written = len(done.written)
        summary.first_changed = done.first_changed
        summary.removed_lists = done.gone
        summary.keep_listed(checkpoint.listed(con, system))
        summary.resumed_from = start
        summary.ro_from = fp.ro_from
        del prep, result, recorder, inputs
        norms_store.refresh(con, system, sorted(done.touched), None)
    return summary


def param_keys(system: str) -> list[str]:
    """The engine options of `rate_fide` (`FideParams` fields but the system and its rules), sorted."""
    return sorted({f.name for f in dataclasses.fields(FideParams)} - {"system", "rules"})


def _compute(
    inputs: EngineInputs, fp: FideParams, through: dt.date | None, excluded: Mapping[int, str]
) -> tuple[Any, EngineResult, checkpoint.Recorder]:
    """prepare + run_periods + to_contract without the tournaments of `excluded`
    ({tournament_id: reason}), which are added to the skips (`faults.isolate`); the recorder holds
    what each period carried to the next (`checkpoint.Recorder`)."""
    recorder = checkpoint.Recorder()
    prep = prepare_without(inputs, fp, excluded, get_scheme("fide"))
    return prep, to_contract(run_periods(prep, fp, through=through, recorder=recorder)), recorder


def _lists_that_differ(
    con: duckdb.DuckDBPyConnection,
    system: str,
    first: dt.date,
    new_frames: dict[str, pl.DataFrame],
    stored_digests: dict[dt.date, str],
    gone: Collection[dt.date] = (),
) -> tuple[set[dt.date], dict[str, result_rows.Staged] | None]:
    """The computed lists from `first` on whose rows differ from the stored ones (or that
    are not stored), and the comparison of each table's rows with the stored ones, staged for
    `result_tables.write_results` (None: nothing stored from `first` on, every list is written).
    `gone`: stored lists no longer computed, compared with no row: their stored rows are deleted.
    A change of inputs does not always change later lists: e.g. an event whose games are all
    between unrated players adds rows to its own list only. The rows are compared once, group
    by group, in DuckDB (`result_rows.stage`): a list differs when one of its groups does."""
    dates: set[dt.date] = set()
    for f in new_frames.values():
        dates |= set(f.get_column("list_date").unique().to_list())
    if not any(d >= first for d in stored_digests):
        return dates, None
    # a list no longer computed is compared too, or its stored rows would stay (a correction that
    # moved an event's games to another period would leave them counted on the old list as well)
    staged = {k: result_rows.stage(con, system, k, f, dates | set(gone)) for k, f in new_frames.items()}
    return {d for s in staged.values() for d in s.dates}, staged


def _summarise(system: str, result: EngineResult) -> RateSummary:
    s = RateSummary(system=system)
    s.lists = len(result.list_dates)
    if result.list_dates:
        s.first_list, s.last_list = result.list_dates[0], result.list_dates[-1]
        last = result.rating_lists.filter(pl.col("list_date") == s.last_list)
        s.players_rated = last.filter(pl.col("rating").is_not_null()).height
    rl = result.rating_lists
    s.new_ratings = rl.filter(pl.col("flags").fill_null("").str.contains(r"\bnew\b")).height
    ch = result.rating_changes
    s.games_counted = ch.filter(pl.col("counted")).height
    s.not_counted = dict(ch.filter(~pl.col("counted")).group_by("reason").len().sort("reason").iter_rows())
    s.events_skipped = dict(
        result.skips.group_by("reason").agg(pl.col("tournament_id").n_unique()).sort("reason").iter_rows()
    )
    s.unknown_tc_games = ch.filter(pl.col("tc_assumed")).select(pl.col("game_id").n_unique()).item()
    s.discrepancies = result.rating_discrepancies.height
    return s
