"""A FIDE run from the first period, in windows of periods: memory bounded by the largest window and
the state carried from one list to the next, not by the history (issue 27, item 2).

A run that computes every period (`run.rate_fide` when it cannot resume from a checkpoint: none kept,
a change reaching the first period, a stored list edited) read every game of the store, computed
every list in memory and wrote them at the end: about 1.3 KB per stored game, 33 GB for a
federation's 25 million games. Here the periods with events are cut, in date order, into windows of
whole periods of at most `window_games()` games each (a larger period is a window by itself; the
events no period holds go with the first window), and the windows are rated one after the other:

1. the window's events, games and entries are read (`store_io.load_games` and
   `store_io.load_tournament_players` select them in SQL by event); the players, the imported
   official lists and, for rapid and blitz, the standard lists are read once for every window;
2. the engine (`engine.run_periods`) computes the window's lists from the state the previous window
   left, as it carries that state from one list to the next in a single run: each player's state,
   the games unrated players pooled (B.02 7.1.4), the players started from their file's rating, and
   the lists in force (B.02 7.1.3) that the events of this window and the later ones can still start
   in (`_Carry.prune`: an older list is dropped once no later event starts before the next one);
3. the lists of the window that changed are written as `run.store_changes` writes those of a single
   run (the first list whose period digest differs starts the rewriting; from it on, a list is
   rewritten when its rows differ; the rows compared are read for the window's dates only), the
   window's checkpoints are kept (`checkpoint.save`), the window is freed, and the title norms
   (B.01) of its rewritten lists are decided (`norms_store.refresh`, one transaction a window: an
   event's norms read its own rows and the lists up to it, all stored by then).

Every stored row is the one a single run stores: the same lists, changes, tournament rows,
discrepancies, events left out, rates of play, period digests and checkpoints, under one
``rating_runs`` row, and the same summary (`resume.summary_from_store`, counted from the store as a
resumed run counts it; tests/rating/fide/test_fide_windows.py). A store that fits in one window is
rated in one piece, as before (`rate_in_windows` returns None). An event the engine fails on is left
out by `faults.isolate` within its window, and the checkpoints are then removed, as a single run
does. DuckDB's allocator gives back the memory its queries freed (background threads, during the
run): a query over the whole store (the tournaments, the period digests) leaves no peak behind.

Before the first window and after each, what the window committed is checkpointed and DuckDB's cache
of the store's blocks is dropped (`cache.released`: no block is read twice, and without it the
cache kept every block the run read, 72 MB after the first window of a 12-month federation store,
166 MB after the last, beside up to 90 MB of changes committed but not yet checkpointed).

What still grows with the history: the per-event frames (the events, their period digests, rates of
play and skips), the players' state and the lists in force (the players ever rated), and the pooled
games of unrated players (kept for ever: 7.1.4's first event may be older than 26 months).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import duckdb
import polars as pl

from elopipe.rating import faults, result_tables, store_io
from elopipe.rating.fide import checkpoint, norms_store, resume
from elopipe.rating.fide.engine import run_periods, to_contract
from elopipe.rating.fide.frames import LIST_SCHEMA, POOL_SCHEMA, Lists, empty
from elopipe.rating.fide.list_digests import RESULT_KEYS, list_hashes
from elopipe.rating.fide.params import EngineInputs, EngineResult, FideParams, Prepared
from elopipe.rating.fide.prepare import prepare_without
from elopipe.rating.periods import get_scheme
from elopipe.rating.summary import RateSummary
from elopipe.runtime.settings import env_count
from elopipe.store import cache, write

#: games of one window by default: two FIDE-sized months of a large federation (125k games each),
#: about 500 MB at the peak of a run; ELOPIPE_RATE_WINDOW_GAMES sets another bound
WINDOW_GAMES = 250_000
WINDOW_SETTING = "ELOPIPE_RATE_WINDOW_GAMES"

#: the digest of each period's inputs (`run.period_digests`)
DigestFn = Callable[[Prepared, FideParams, list[dt.date]], dict[dt.date, str]]


# each event's range of game ids (`store_io.EVENT_GAMES`: the games of its parts; the raw table,
# a superset of the canonical games)
_GAME_IDS = """
    SELECT coalesce(t.event_id, g.tournament_id)::BIGINT AS tournament_id, min(g.game_id)::BIGINT AS lo,
           max(g.game_id)::BIGINT AS hi
    FROM games g LEFT JOIN tournaments t USING (tournament_id) GROUP BY 1
"""


def window_games() -> int:
    """The games of one window: ELOPIPE_RATE_WINDOW_GAMES, else `WINDOW_GAMES`. Raises
    `SettingError` for a value that is not a whole number of 1 or more."""
    return env_count(WINDOW_SETTING, WINDOW_GAMES)


@dataclass
class Window:
    """The events of whole periods rated together (tournament ids, the store's events), and the
    earliest list in force at the start of an event of this window or a later one (None: none)."""

    events: list[int]
    in_force_from: dt.date | None


def plan_windows(tournaments: pl.DataFrame, budget: int) -> list[Window]:
    """Cut the periods of `tournaments` (`store_io.load_tournaments`) into windows of at most
    `budget` games (``n_games``; a larger period alone), in date order; the events without a
    period go with the first window."""
    events = get_scheme("fide").assign(
        tournaments.select("tournament_id", "eff_start", "eff_end", "n_games"), end_col="eff_end", start_col="eff_start"
    )
    periods = (
        events.group_by("list_date")
        .agg(pl.col("tournament_id").sort(), pl.col("n_games").sum(), pl.col("in_force").min())
        .sort("list_date", nulls_last=False)
    )
    cuts: list[tuple[list[int], dt.date | None]] = []
    games = 0
    for list_date, ids, n, in_force in periods.iter_rows():
        if cuts and list_date is not None and games + n > budget and games > 0:
            cuts.append(([], None))
            games = 0
        if not cuts:
            cuts.append(([], None))
        cuts[-1][0].extend(ids)
        games += n if list_date is not None else 0
        if in_force is not None and (cuts[-1][1] is None or in_force < cuts[-1][1]):
            cuts[-1] = (cuts[-1][0], in_force)
    windows: list[Window] = []
    earliest: dt.date | None = None
    for ids, in_force in reversed(cuts):
        if in_force is not None and (earliest is None or in_force < earliest):
            earliest = in_force
        windows.append(Window(ids, earliest))
    return windows[::-1]


@dataclass
class _Carry(checkpoint.Recorder):
    """What the engine carries from the last list of a window to the first of the next (`Recorder`:
    and what each period of the window carried, for its checkpoints)."""

    held_state: pl.DataFrame | None = None
    held_pool: pl.DataFrame = field(default_factory=lambda: empty(POOL_SCHEMA))
    lists: Lists = field(default_factory=Lists)
    last: dt.date | None = None

    def after(self, state: pl.DataFrame, pool: pl.DataFrame, lists: Lists) -> None:
        self.held_state, self.held_pool, self.lists = state, pool, lists

    def next_window(self) -> _Carry:
        """A recorder for the next window, from this one's state (its own copy of the lists, which the
        engine fills in place: a probe of `faults.isolate` must not change them)."""
        lists = Lists()
        lists.by_date, lists.dates = dict(self.lists.by_date), list(self.lists.dates)
        lists.boots, lists.official = self.lists.boots, dict(self.lists.official)
        return _Carry(held_state=self.held_state, held_pool=self.held_pool, lists=lists, last=self.last)

    def prune(self, in_force_from: dt.date | None) -> None:
        """Drop the lists no event from `in_force_from` on can start in (the list in force at a start
        is the latest one dated on or before it, B.02 7.1.3), and the bootstrapped ratings dated
        before the first list kept (`in_force._ratings_in_force` reads those after the list in force)."""
        lists = self.lists
        keep = [d for d in lists.dates if in_force_from is not None and d <= in_force_from]
        if not keep:
            return
        lo = keep[-1]
        lists.dates = [d for d in lists.dates if d >= lo]
        lists.by_date = {d: f for d, f in lists.by_date.items() if d >= lo}
        lists.official = {d: s for d, s in lists.official.items() if d >= lo}
        lists.boots = lists.boots.filter(pl.col("boot_period") > lo)


@dataclass
class _Window:
    """One window computed: its inputs prepared, the engine's result (None: no rated game), its list
    dates and the recorder holding the state after it."""

    prep: Prepared
    result: EngineResult | None
    list_dates: list[dt.date]
    carry: _Carry


def _compute(inputs: EngineInputs, fp: FideParams, carry: _Carry, excluded: Mapping[int, str]) -> _Window:
    """The window of `inputs` without the events of `excluded` (`faults.isolate`: recorded as left
    out), from the state of `carry` (the previous window's; `carry.last` None: the first)."""
    scheme = get_scheme("fide")
    prep = prepare_without(inputs, fp, excluded, scheme)
    nxt = carry.next_window()
    if not prep.list_dates:  # no rated game: the lists of its periods are computed with the next window's
        return _Window(prep, None, [], nxt)
    if carry.last is not None:
        prep.list_dates = scheme.lists_between(scheme.next_list(carry.last + dt.timedelta(days=1)), prep.list_dates[-1])
    if carry.last is None:
        result = run_periods(prep, fp, recorder=nxt)
    else:
        assert carry.held_state is not None  # a window computed before
        kept = checkpoint.Resume(prep.list_dates[0], carry.last, carry.held_state, carry.held_pool, nxt.lists)
        result = run_periods(prep, fp, resume=kept, recorder=nxt)
    nxt.last = prep.list_dates[-1]
    return _Window(prep, to_contract(result), prep.list_dates, nxt)


@dataclass
class _Writer:
    """Writes the windows' results as `run.store_changes` writes a single run's (see the module
    docstring): `stored`, the period digests kept before the run; `first`, the first list whose
    digest changed (None: none yet); the run's ``rating_runs`` row, started at the first write."""

    con: duckdb.DuckDBPyConnection
    system: str
    fp: FideParams
    rules: str | None
    stored: dict[dt.date, str]
    first: dt.date | None = None
    run_id: int | None = None
    written: list[dt.date] = field(default_factory=list)
    gone: set[dt.date] = field(default_factory=set)
    digests: list[str] = field(default_factory=list)

    def start(self) -> int:
        if self.run_id is None:
            params = self.fp.as_dict()
            self.run_id = result_tables.start_run(self.con, self.system, rules_forced=self.rules, params=params)
        return self.run_id

    def window(
        self, w: _Window, digests: dict[dt.date, str], span: tuple[dt.date, dt.date], keep: list[int]
    ) -> set[dt.date]:
        """Store window `w` (`digests`: its periods'), whose lists and stored digests fall in `span`
        (from, to, inclusive); `keep`: the events of the earlier windows, whose discrepancies stay.
        Returns the lists whose title norms are to be decided again (`run.Stored.touched`)."""
        assert w.result is not None
        self.digests += [digests[d] for d in w.list_dates]
        stored = {d: h for d, h in self.stored.items() if span[0] <= d <= span[1]}
        if self.first is None:
            changed = [d for d, h in digests.items() if stored.get(d) != h] + [d for d in stored if d not in digests]
            self.first = min(changed) if changed else None
        if self.first is None:
            return set()
        first = self.first
        frames = {k: getattr(w.result, k).filter(pl.col("list_date") >= first) for k in RESULT_KEYS}
        gone = {d for d in stored if d >= first and d not in digests}
        rewrite = self._differ(frames, max(first, span[0]), span[1]) | gone
        new_digests = {d: h for d, h in digests.items() if d >= first and (stored.get(d) != h or d in rewrite)}
        run_id = self.start()
        frames = {k: f.filter(pl.col("list_date").is_in(sorted(rewrite))) for k, f in frames.items()}
        result_tables.write_results(
            self.con, self.system, first, frames, digests=new_digests, run_id=run_id, lists=rewrite
        )
        result_tables.replace_discrepancies(self.con, self.system, w.result.rating_discrepancies, keep)
        self.written += sorted(d for d in rewrite if d in digests)
        self.gone |= gone
        return set(new_digests) | rewrite

    def _differ(self, frames: dict[str, pl.DataFrame], lo: dt.date, hi: dt.date) -> set[dt.date]:
        """The dates of `frames` whose rows differ from the stored rows (`run._lists_that_differ`,
        the stored rows read from `lo` to `hi` only); every date when no digest from the first
        changed list on is stored."""
        dates: set[dt.date] = set()
        for f in frames.values():
            dates |= set(f.get_column("list_date").unique().to_list())
        assert self.first is not None
        if not any(d >= self.first for d in self.stored):
            return dates
        old = {}
        for k, f in frames.items():
            sql = f"SELECT {', '.join(f.columns)} FROM {k} WHERE system = ? AND list_date BETWEEN ? AND ?"
            rows = store_io.query(self.con, sql, [self.system, lo, hi])
            old[k] = rows.select([pl.col(c).cast(t) for c, t in f.schema.items()])
        a, b = list_hashes(frames), list_hashes(old)
        return {d for d in dates if a.get(d) != b.get(d)}

    def rest(self, last: dt.date | None, keep: list[int]) -> set[dt.date]:
        """The stored lists after the last list computed (`last`; None: none computed) are gone, as
        in a single run (their rows and digests removed); when they are the first change, the
        discrepancies of the events no longer stored go too (`keep`: every event). Returns them."""
        gone = {d for d in self.stored if last is None or d > last}
        if not gone:
            return gone
        found = self.first is None
        self.first = min(gone) if found else self.first
        result_tables.write_results(self.con, self.system, self.first, {}, run_id=self.start(), lists=gone)
        if found:
            frame = pl.DataFrame(schema={"tournament_id": pl.Int64, "player_id": pl.Int64})
            result_tables.replace_discrepancies(self.con, self.system, frame, keep)
        self.gone |= gone
        return gone

    def finish(self, skips: pl.DataFrame, rate_of_play: pl.DataFrame, last_list: dt.date | None) -> None:
        """The events left out and the rates of play of every window (replaced as a single run
        replaces them), and the run's row."""
        con, system = self.con, self.system
        if self.first is None:
            if result_tables.event_rows_changed(con, system, skips, rate_of_play):
                run_id = self.start()
                result_tables.save_skips(con, system, skips, run_id)
                result_tables.save_rate_of_play(con, system, rate_of_play, run_id)
                result_tables.finish_run(con, run_id, first_list=None, last_list=None)
            return
        run_id = self.start()
        result_tables.save_skips(con, system, skips, run_id)
        result_tables.save_rate_of_play(con, system, rate_of_play, run_id)
        games_hash = hashlib.sha1("".join(self.digests).encode()).hexdigest()
        first = self.written[0] if self.written else None
        result_tables.finish_run(con, run_id, first_list=first, last_list=last_list, games_hash=games_hash)

    @property
    def first_changed(self) -> dt.date | None:
        return self.written[0] if self.written else (min(self.gone) if self.gone else None)


def rate_in_windows(
    con: duckdb.DuckDBPyConnection,
    system: str,
    fp: FideParams,
    rules: str | None,
    plan: resume.Plan,
    load: Callable[..., EngineInputs],
    digest: DigestFn,
) -> RateSummary | None:
    """Compute every period of `system` window by window and store what changed (the module
    docstring); None when the store fits in one window (the caller rates it in one piece).

    `plan`: the run's (`resume.plan`: the events and their periods); `load`: `run.load_inputs`
    (called once without games: the players, official and standard lists every window reads);
    `digest`: `run.period_digests`. The summary counts the stored results
    (`resume.summary_from_store`); its `full_reason` is left to the caller. Raises what the engine
    raises when no event is to blame (`faults.isolate`); the lists stored until then stay, with
    their digests and checkpoints, and the run's row says which."""
    windows = plan_windows(plan.tournaments, window_games())
    if len(windows) < 2:
        return None
    # DuckDB keeps the memory its queries freed (its allocator's dirty pages) until a background
    # thread purges it: without it, every query over the whole store would leave its peak behind
    background = con.execute("SELECT current_setting('allocator_background_threads')").fetchall()[0][0]
    con.execute("SET allocator_background_threads = true")
    try:
        # the store's blocks a window read are not read again: dropped after each (about 100 MB
        # at the end of a 12-month federation store, which the cache would otherwise keep)
        with cache.released(con) as release:
            return _rate(con, system, fp, rules, plan, windows, load, digest, release)
    finally:
        con.execute(f"SET allocator_background_threads = {bool(background)}")


def _rate(
    con: duckdb.DuckDBPyConnection,
    system: str,
    fp: FideParams,
    rules: str | None,
    plan: resume.Plan,
    windows: list[Window],
    load: Callable[..., EngineInputs],
    digest: DigestFn,
    release: Callable[[], None],
) -> RateSummary:
    """`rate_in_windows` of `windows` (two or more); `release` after each window (`cache.released`)."""
    base = load(con, system, fp.no_moves, events=[], tournaments=plan.tournaments.clear(), players=plan.players)
    plan.players = base.players  # the digests read the players the windows' engine reads
    by_period, empty_digest = plan.digest(con, system, fp)
    plan.players = None
    stored = store_io.load_digests(con, system)
    # stored results edited: every list is compared from the first stored on (`resume.Plan.compare_from`)
    run = _Run(con, system, fp, plan, base, _Writer(con, system, fp, rules, stored, plan.compare_from(stored)))
    try:
        release()  # the blocks of the store-wide queries before (the events, the period digests)
        for win in windows:
            run.window(win, digest, by_period, empty_digest)
            release()
        # title norms (B.01) of the lists gone: their rows go
        norms_store.refresh(con, system, sorted(run.writer.rest(run.carry.last, run.done)), None)
        if run.carry.last is None:  # no rated game: the periods' inputs are kept all the same
            no_list = empty(LIST_SCHEMA)
            checkpoint.save(
                con, system, None, checkpoint.Recorder(), by_period, empty_digest, no_list, [], None, plan.shared
            )
        run.writer.finish(_concat(run.skips), _concat(run.rates), run.carry.last)
    except BaseException:
        writer = run.writer
        if writer.run_id is not None:  # the publishing that follows learns what was written
            first, last = min(writer.written, default=None), max(writer.written, default=None)
            result_tables.finish_run(con, writer.run_id, first_list=first, last_list=last)
        raise
    writer = run.writer
    if run.failed:
        checkpoint.drop(con, system)
    elif writer.run_id is not None:
        con.execute("UPDATE rating_checkpoints SET run_id = ? WHERE system = ?", [writer.run_id, system])
    summary = resume.summary_from_store(con, system, run.list_dates, base.players, plan.tournaments)
    summary.run_id = writer.run_id
    summary.changed_lists = writer.written
    summary.lists_written = len(writer.written)
    summary.first_changed = writer.first_changed
    summary.removed_lists = sorted(writer.gone)
    summary.keep_listed(checkpoint.listed(con, system))
    summary.ro_from = fp.ro_from
    summary.failed_events = faults.failed_lines(con, system, run.failed)
    return summary


@dataclass
class _Run:
    """A run in windows under way: what it carries from one window to the next and what it keeps
    for the end (the events left out and why, the rates of play, the events stored, the lists)."""

    con: duckdb.DuckDBPyConnection
    system: str
    fp: FideParams
    plan: resume.Plan
    base: EngineInputs
    writer: _Writer
    carry: _Carry = field(default_factory=_Carry)
    failed: dict[int, str] = field(default_factory=dict)
    skips: list[pl.DataFrame] = field(default_factory=list)
    rates: list[pl.DataFrame] = field(default_factory=list)
    done: list[int] = field(default_factory=list)
    list_dates: list[dt.date] = field(default_factory=list)
    game_ids: pl.DataFrame | None = None

    def window(self, win: Window, digest: DigestFn, by_period: dict[dt.date, str], empty_digest: str) -> None:
        """Read, compute and store window `win` (`by_period`, `empty_digest`: the inputs digests of
        the checkpoints, `checkpoint.inputs_by_period`)."""
        self.carry.prune(win.in_force_from)
        w = self._compute(win)
        self.skips.append(w.prep.skips)
        if w.prep.rate_of_play is not None:
            self.rates.append(w.prep.rate_of_play)
        if w.result is not None:
            held = [w]  # `_store` frees the window's frames before the norms read the store
            del w
            # the window's lists, its checkpoint and its title norms commit together: a run stopped
            # between them would resume after lists whose norms were never decided
            with write.transaction(self.con):
                self._store(held, digest, by_period, empty_digest)
        self.done += win.events

    def _store(self, held: list[_Window], digest: DigestFn, by_period: dict[dt.date, str], empty_digest: str) -> None:
        """Write the window in `held` (taken from it): its lists, checkpoint and title norms, in the
        caller's transaction."""
        con, fp = self.con, self.fp
        w = held.pop()
        assert w.result is not None
        prev = self.carry.last
        lo = dt.date.min if prev is None else prev + dt.timedelta(days=1)
        digests = digest(_digested(w.prep, prev), fp, w.list_dates)
        touched = self.writer.window(w, digests, (lo, w.list_dates[-1]), self.done)
        start = None if prev is None else w.list_dates[0]
        checkpoint.save(con, self.system, start, w.carry, by_period, empty_digest,
                        w.result.rating_lists, w.list_dates, None, self.plan.shared)  # fmt: skip
        self.list_dates += w.list_dates
        # the recorded rows are kept: the next window needs the state after this one only
        w.carry.state, w.carry.pool, w.carry.boots = [], [], []
        self.carry = w.carry
        del w
        # title norms (B.01) of the window's rewritten lists: an event's norms read its own rows
        # and the lists up to it, all written now; one transaction a window bounds its memory
        norms_store.refresh(con, self.system, sorted(touched), None)

    def _games(self, events: list[int]) -> pl.DataFrame:
        """`store_io.load_games` of `events`, the scan narrowed to their range of game ids (a store
        loaded month after month holds a window's games in a few of its row groups)."""
        if self.game_ids is None:
            self.game_ids = store_io.query(self.con, _GAME_IDS)
        ids = self.game_ids.filter(pl.col("tournament_id").is_in(events))
        lo, hi = ids.get_column("lo").min(), ids.get_column("hi").max()
        sql = f"""SELECT * FROM ({store_io.games_sql(self.fp.no_moves)}) WHERE game_id BETWEEN ? AND ?
                  AND tournament_id IN (SELECT unnest(?::BIGINT[])) ORDER BY game_id"""
        return store_io.query(self.con, sql, [lo if lo is not None else 0, hi if hi is not None else -1, events])

    def _compute(self, win: Window) -> _Window:
        """Window `win` read and computed; the events the engine fails on left out (`faults.isolate`)."""
        con, fp, carry = self.con, self.fp, self.carry
        inputs = dataclasses.replace(
            self.base,
            games=self._games(win.events),
            tournaments=self.plan.tournaments.filter(pl.col("tournament_id").is_in(win.events)),
            tournament_players=store_io.load_tournament_players(con, win.events),
        )
        here = set(win.events)
        w, failed = faults.isolate(
            lambda excluded, _write: _compute(inputs, fp, carry, excluded),
            lambda: [t for t in faults.tournament_order(con) if t in here],
        )
        self.failed |= failed
        return w


def _digested(prep: Prepared, prev: dt.date | None) -> Prepared:
    """`prep` as its periods' digests read it: the official (and standard) lists dated after the
    previous window's last list `prev` (the earlier ones are digested into the earlier periods)."""
    if prev is None:
        return prep
    at = pl.col("list_date")
    std = prep.standard_lists.filter(at > prev) if prep.standard_lists is not None else None
    return dataclasses.replace(prep, official=prep.official.filter(at > prev), standard_lists=std)


def _concat(frames: list[pl.DataFrame]) -> pl.DataFrame:
    return pl.concat(frames, how="vertical_relaxed") if len(frames) > 1 else frames[0]
