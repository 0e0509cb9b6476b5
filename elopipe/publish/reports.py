"""Performance reports of one tournament under one rating system (FIDE style).

Every number comes from the store through two views: `v_tournament_performance` (one row per
player: Ro, n, W, Ra, We, W−We, K, K×(W−We), the rounded change, Rp; FIDE B.02 (2024)
8.3 and 8.1.1 for Rp = Ra + dp(p)) and `v_change_explained` (one row per game or unplayed
round: Rc, the difference used after the 400-point rule of 8.3.1, PD from table 8.1.2,
W − PD, and why a game did not count). Nothing is recomputed here.

`performance_frame` columns (Polars), one row per participant: list_date Date (null: no rated
game), start_rank Int64, player_id Int32, name String, fide_id Int64, federation String,
title String, ro Int32, ro_source String (where Ro came from: 'official', 'computed', 'file',
'standard'; `elopipe.publish.ro_marks`), file_rating Int32 (the rating the file gives), ro_mark
Boolean (Ro 50 or more points from file_rating, B.02 7.1.3), n Int32, score Decimal(18,1), ra Int32, we Decimal(18,2),
w_we Decimal(18,2), k Int32, k_w_we Decimal(14,2) (K × (W − We), rating points),
change_rounded Int32 (half away from zero), rp Int32, unrated Boolean, pooled_games Int32
(unrated: rated games pooled so far), ru_provisional Int32, first_rating Int32 (unrated: the
first rating the list published for the player, null while still pooling), no_rating_reason String (why a
participant has no rated game, `elopipe.publish.participants`; null when rated), note String
(the Ru column in words, `participants.ru_note`).

`games_frame` columns: player_id, player, start_rank, kind ('game' | 'unplayed'), round,
colour, opponent_id, opponent, opponent_start_rank, rc, d_raw, d_used, capped, pd,
score, w_minus_pd, k_w_minus_pd (PD, W−PD and K × (W−PD) null on a row not counted in the change),
counted (counted in the rating change), used_for ('rating_change' | 'first_rating': pooled toward
an unrated player's Ru | 'not_rated'), reason, unplayed_code, file_name, line (the player's own
record: his TRF 001 line, or the PGN game).
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import duckdb
import polars as pl

from elopipe.identity.events import PARTS, event_of
from elopipe.publish.atomic import write_text
from elopipe.publish.crosstable import CrossRows, crosstable, start_numbers, with_ro
from elopipe.publish.csvsafe import write_csv
from elopipe.publish.html import render, system_label
from elopipe.publish.legend import report_legend
from elopipe.publish.norms_report import section_frame
from elopipe.publish.participants import ru_note, skip_reason
from elopipe.publish.report_header import HEADER_FIELDS
from elopipe.publish.report_rows import GAME_TIES, ReportRows, fetch_report_rows
from elopipe.publish.ro_marks import MARK, mark_meaning, ro_mark_expr
from elopipe.runtime.errors import ElopipeError
from elopipe.runtime.hints import command_hint
from elopipe.store.frames import to_polars

PERFORMANCE_COLUMNS = [
    "list_date",
    "start_rank",
    "player_id",
    "name",
    "fide_id",
    "federation",
    "title",
    "ro",
    "ro_source",
    "file_rating",
    "ro_mark",
    "n",
    "score",
    "ra",
    "we",
    "w_we",
    "k",
    "k_w_we",
    "change_rounded",
    "rp",
    "unrated",
    "pooled_games",
    "ru_provisional",
    "first_rating",
    "no_rating_reason",
    "note",
]


def slug(text: str | None, fallback: str = "x") -> str:
    """A file-name-safe form of `text`: ASCII letters, digits and '-', at most 60 chars.

    Other scripts are transliterated (python-slugify, which Prefect already brings): a Greek or
    Cyrillic event name keeps a readable file name instead of losing every letter."""
    from slugify import slugify

    s = slugify(text or "", max_length=60, word_boundary=False, separator="-", lowercase=True)
    s = re.sub(r"[^a-z0-9-]+", "-", s).strip("-")
    return s or fallback


def find_tournament(con: duckdb.DuckDBPyConnection, ref: str) -> int:
    """The event `ref` names (see `match_tournament`); when that tournament is a duplicate
    export whose games are all another tournament's, that other one (`canonical_event`); when it
    is a part of an event held in several files, that event (`elopipe.identity.events.event_of`).

    Raises LookupError as `match_tournament`.
    """
    tid = match_tournament(con, ref)
    return event_of(con, canonical_event(con, tid) or tid)


def _loose(sql: str) -> str:
    """SQL: the text `sql` lower-case, without accents, its hyphens and runs of spaces one space."""
    return f"regexp_replace(strip_accents(lower({sql})), '[\\s\\x{{2010}}-\\x{{2015}}-]+', ' ', 'g')"


def match_tournament(con: duckdb.DuckDBPyConnection, ref: str, on_note: Callable[[str], None] | None = None) -> int:
    """The tournament_id for `ref`: an id, else a name (exact, then case-, accent- and
    hyphen-insensitive literal substring: `%` and `_` match only themselves).

    When a name matches several tournaments of which only one holds canonical games (the others
    are duplicate exports of the same event), that one is taken; so is the event when they are
    its parts held in several files. Either way `on_note` hears the candidates (ids, days, files):
    a name two tournaments share is answered for one only when the user is told which.

    Raises LookupError (with the candidates) when `ref` is blank, or when nothing or more than
    one tournament matches.
    """
    if not ref.strip():
        raise LookupError("give a tournament id or name")
    if ref.strip().isdecimal():
        row = con.execute("SELECT tournament_id FROM tournaments WHERE tournament_id = ?", [int(ref)]).fetchall()
        if row:
            return int(row[0][0])
    exact = con.execute("SELECT tournament_id FROM tournaments WHERE lower(name) = lower(?)", [ref]).fetchall()
    if len(exact) == 1:
        return int(exact[0][0])
    rows = (
        exact
        or con.execute(
            # a literal substring: '%' and '_' in `ref` are characters, not LIKE wildcards; accents
            # aside ('Las Vegas' finds 'Läs Végas National Opeñ'), and a hyphen is a space ('Karl
            # Mala' finds '9. Karl-Mala-Gedenkturnier')
            f"SELECT tournament_id, name FROM tournaments WHERE contains({_loose('name')}, {_loose('?')})"
            " ORDER BY tournament_id",
            [ref],
        ).fetchall()
    )
    if len(rows) == 1:
        return int(rows[0][0])
    if not rows:
        raise LookupError(f"no tournament matches {ref!r}")
    # the parts of one event held in several files (elopipe.identity.events) are that event
    ids = [int(r[0]) for r in rows]
    events = {event_of(con, tid) for tid in ids}
    if len(events) == 1:
        event = events.pop()
        _note_taken(con, ref, ids, event, "the event they are parts of", on_note)
        return event
    # two exports of one event: the one holding canonical games is the event (the other's games are
    # all duplicates, see game_sources), so the name is not ambiguous
    with_games = con.execute(
        "SELECT DISTINCT tournament_id FROM canonical_games WHERE tournament_id IN (SELECT UNNEST(?))",
        [[int(r[0]) for r in rows]],
    ).fetchall()
    if len(with_games) == 1:
        taken = int(with_games[0][0])
        why = "the one holding the games (the others are other exports of the same event)"
        _note_taken(con, ref, ids, taken, why, on_note)
        return taken
    raise LookupError(f"{len(rows)} tournaments match {ref!r}, give the id: {_choices(con, [int(r[0]) for r in rows])}")


_CHOICES_SHOWN = 20


def _note_taken(
    con: duckdb.DuckDBPyConnection,
    ref: str,
    ids: list[int],
    taken: int,
    why: str,
    on_note: Callable[[str], None] | None,
) -> None:
    """Tell `on_note` that `ref` matched the tournaments `ids` and `taken` answers for them."""
    if on_note is not None:
        on_note(f"{len(ids)} tournaments match {ref!r}: {_choices(con, ids)}; taking {taken}, {why}")


def _choices(con: duckdb.DuckDBPyConnection, tids: list[int]) -> str:
    """The tournaments `tids` to choose between, each with what tells two namesakes apart: its
    days of play and its file ('554: FIDE Candidates 2022, 2022-06-17 .. 2022-07-04, file
    fide_candidates_2022_madrid_spain.pgn'); the first `_CHOICES_SHOWN`, then how many more."""
    rows = con.execute(
        """
        SELECT t.tournament_id, t.name, t.first_day, t.last_day,
               regexp_replace(f.path, '.*/', '') || COALESCE('!' || f.member, '')
        FROM tournaments t LEFT JOIN source_files f USING (file_id)
        WHERE t.tournament_id IN (SELECT UNNEST(?)) ORDER BY 1 LIMIT ?
        """,
        [tids, _CHOICES_SHOWN],
    ).fetchall()
    parts = []
    for tid, name, first, last, path in rows:
        days = "dates unknown" if first is None else str(first) if last in (None, first) else f"{first} .. {last}"
        parts.append(f"{tid}: {name or 'no name'}, {days}" + (f", file {path}" if path else ""))
    more = len(tids) - len(rows)
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def canonical_event(con: duckdb.DuckDBPyConnection, tournament_id: int) -> int | None:
    """The tournament holding the canonical games when every game of `tournament_id` is a
    duplicate export of games of one other tournament (see `game_sources`); else None."""
    rows = con.execute(
        """
        SELECT DISTINCT c.tournament_id
        FROM games g
        JOIN game_sources s ON s.source_game_id = g.game_id AND s.game_id <> g.game_id
        JOIN games c ON c.game_id = s.game_id
        WHERE g.tournament_id = ?
        """,
        [tournament_id],
    ).fetchall()
    own = con.execute("SELECT count(*) FROM canonical_games WHERE tournament_id = ?", [tournament_id]).fetchall()
    if len(rows) == 1 and own[0][0] == 0 and rows[0][0] != tournament_id:
        return int(rows[0][0])
    return None


def row_by_id(con: duckdb.DuckDBPyConnection, table: str, key: str, value: int) -> dict[str, object]:
    """The row of `table` whose `key` column equals `value`, as a dict; LookupError if absent.
    `table` and `key` are this module's callers' constants, never user text."""
    cur = con.execute(f"SELECT * FROM {table} WHERE {key} = ?", [value])
    rows = cur.fetchall()
    if not rows:
        raise LookupError(f"no {table.rstrip('s')} with id {value}")
    return dict(zip([d[0] for d in cur.description], rows[0], strict=True))


def tournament_info(con: duckdb.DuckDBPyConnection, tournament_id: int) -> dict[str, object]:
    """The `tournaments` row of `tournament_id` as a dict; raises LookupError if absent."""
    return row_by_id(con, "tournaments", "tournament_id", tournament_id)


def rated_tournaments(con: duckdb.DuckDBPyConnection, system: str) -> list[int]:
    """Tournaments rated under `system` on any list, ascending."""
    rows = con.execute(
        "SELECT DISTINCT tournament_id FROM tournament_ratings WHERE system = ? ORDER BY 1", [system]
    ).fetchall()
    return [int(r[0]) for r in rows]


def tournaments_by_list(
    con: duckdb.DuckDBPyConnection, system: str, list_dates: list[dt.date]
) -> dict[dt.date, list[int]]:
    """{list_date: tournament ids rated under `system` on that list, ascending} for `list_dates`
    (one query); a list with no tournament is absent."""
    if not list_dates:
        return {}
    rows = con.execute(
        "SELECT list_date, list(DISTINCT tournament_id ORDER BY tournament_id) FROM tournament_ratings"
        " WHERE system = ? AND list_date IN (SELECT unnest(?::DATE[])) GROUP BY list_date",
        [system, sorted(set(list_dates))],
    ).fetchall()
    return {d: [int(t) for t in tids] for d, tids in rows}


def performance_frame(
    con: duckdb.DuckDBPyConnection, tournament_id: int, system: str, rows: ReportRows | None = None
) -> pl.DataFrame:
    """One row per participant of the event (every `tournament_players` entry of its parts),
    by start rank then name (columns: module docstring). A player without a stored start rank
    (PGN) gets the crosstable's start number. A participant the rating wrote no row for has
    null rating columns, n 0 and `no_rating_reason` (`elopipe.publish.participants`); `note`
    is the Ru column in words (`participants.ru_note`). A store rated before Ro had its source
    (its view has no ``ro_source``) reports none, and marks nothing, until it is rated again.
    `rows`: the rows of a set of reports holding this one (`report_rows`; None: read them)."""
    rows = rows or fetch_report_rows(con, system, [tournament_id])
    df = rows.performance_of(tournament_id)
    skipped = skip_reason(con, tournament_id, system)
    df = df.join(rows.reasons_of(tournament_id), on="player_id", how="left").with_columns(
        pl.when(pl.col("no_row"))
        .then(
            pl.lit(f"event not rated: {skipped}")
            if skipped
            else pl.col("no_rating_reason").fill_null("no rated game: no round recorded")
        )
        .alias("no_rating_reason")
    )
    df = df.with_columns(ru_note().alias("note"), ro_mark_expr().alias("ro_mark")).select(PERFORMANCE_COLUMNS)
    return _fill_start_numbers(df, rows.start_numbers.get(tournament_id, {}), {"start_rank": "player_id"}).sort(
        ["start_rank", "name", "player_id", "list_date"], nulls_last=True, maintain_order=True
    )


def _fill_start_numbers(df: pl.DataFrame, sno: dict[int, int], columns: dict[str, str]) -> pl.DataFrame:
    """`df` with null start-rank columns (keys of `columns`) filled from `sno` by the player
    column named in `columns`."""
    if not sno:
        return df
    keys = pl.Series(list(sno), dtype=pl.Int64)
    values = pl.Series(list(sno.values()), dtype=pl.Int64)
    return df.with_columns(
        pl.coalesce(
            pl.col(rank).cast(pl.Int64),
            pl.col(pid).cast(pl.Int64).replace_strict(keys, values, default=None, return_dtype=pl.Int64),
        ).alias(rank)
        for rank, pid in columns.items()
    )


def games_frame(
    con: duckdb.DuckDBPyConnection, tournament_id: int, system: str, rows: ReportRows | None = None
) -> pl.DataFrame:
    """Per-game rows of every rated player (columns: module docstring), by player and round.
    Start ranks missing in the store (PGN) are the crosstable's start numbers. `rows` as in
    `performance_frame`."""
    rows = rows or fetch_report_rows(con, system, [tournament_id])
    df = rows.games_of(tournament_id)
    if df.height == 0:
        return df
    return _fill_start_numbers(
        df,
        rows.start_numbers.get(tournament_id, {}),
        {"start_rank": "player_id", "opponent_start_rank": "opponent_id"},
    ).sort(["start_rank", "player", "player_id", "round", "kind", *GAME_TIES], nulls_last=True, maintain_order=True)


def ffe_frame(
    con: duckdb.DuckDBPyConnection, tournament_id: int, system: str, rows: ReportRows | None = None
) -> pl.DataFrame:
    """FFE period working (`ffe_details`) of the tournament's rated players, for the list the
    tournament was rated on: r_old, r_source ('F'/'N'/'E'), compatible and incompatible game
    counts, X (mean rating of compatible opponents), p, Z (dp, clamped to ±470), P = X + Z,
    method, r_new (FFE rules, see `elopipe.rating.ffe.classic`). Empty for other systems.
    `rows`: as in `performance_frame`, for the start numbers (None: read them).
    """
    df: pl.DataFrame = to_polars(
        con.sql(
            """
        SELECT d.list_date, tp.start_rank, d.player_id,
               COALESCE(tp.name_as_written, p.name) AS name, d.r_old, d.r_source,
               d.n_compatible, d.n_incompatible, d.x, d.p, d.z, d.perf, d.young, d.method,
               d.r_new
        FROM ffe_details d
        JOIN tournament_ratings tr
          ON tr.system = d.system AND tr.list_date = d.list_date AND tr.player_id = d.player_id
        JOIN players p ON p.player_id = d.player_id
        LEFT JOIN tournament_players tp
               ON tp.tournament_id = tr.tournament_id AND tp.player_id = tr.player_id
        WHERE tr.tournament_id = ? AND d.system = ?
        ORDER BY tp.start_rank NULLS LAST, name
        """,
            params=[tournament_id, system],
        )
    )
    if df.height == 0:
        return df
    sno = rows.start_numbers.get(tournament_id, {}) if rows is not None else start_numbers(con, tournament_id)
    return _fill_start_numbers(df, sno, {"start_rank": "player_id"}).sort(
        ["start_rank", "name"], nulls_last=True, maintain_order=True
    )


def report_stem(con: duckdb.DuckDBPyConnection, tournament_id: int) -> str:
    """File-name stem of a tournament's report: '<id>_<slug of the name>'."""
    info = tournament_info(con, tournament_id)
    return f"{tournament_id}_{slug(str(info.get('name') or ''), 'tournament')}"


class NothingToReport(ElopipeError, LookupError):
    """A tournament has no rated player under the system: no report is written (the message
    says why, as `nothing_rated_reason`)."""


class Unreported(NamedTuple):
    """Why a tournament has no report: `text`, one sentence; `participants`: True when the event
    was rated, so its participants and their reasons are worth showing."""

    text: str
    participants: bool = False


def nothing_rated_reason(
    con: duckdb.DuckDBPyConnection, tournament_id: int, system: str, db: str | os.PathLike[str] | None = None
) -> Unreported | None:
    """Why `tournament_id` has no report under `system`, or None when the rating wrote at least
    one `tournament_ratings` row for it: the system was never rated; the rating left the event
    out (`rating_skips`); the event is later than the last list rated; or it was rated but none of
    its players had a rated game. The `rate` it suggests names `--db` for a store `db` that is
    not the default (`command_hint`)."""
    name = tournament_info(con, tournament_id).get("name") or f"Tournament {tournament_id}"
    ((rows, last_list, runs),) = con.execute(
        "SELECT (SELECT count(*) FROM tournament_ratings WHERE system = $s AND tournament_id = $t),"
        " (SELECT max(list_date) FROM rating_lists WHERE system = $s),"
        " (SELECT count(*) FROM rating_runs WHERE system = $s)",
        {"s": system, "t": tournament_id},
    ).fetchall()
    if rows:
        return None
    # a run that rated no one (a store of unrated players only) stores no list, and was a run all the same
    if last_list is None and not runs:
        rate = command_hint(f"rate --system {system}", db)
        return Unreported(f"nothing is rated under {system!r} yet: run `{rate}` first")
    skipped = skip_reason(con, tournament_id, system)
    if skipped:
        return Unreported(f"{name}: not rated under {system!r}: {skipped}")
    ((last_day, n_players),) = con.execute(
        f"SELECT (SELECT max(last_day) FROM tournaments WHERE tournament_id IN {PARTS}),"
        f" (SELECT count(DISTINCT player_id) FROM tournament_players WHERE tournament_id IN {PARTS})",
        [tournament_id, tournament_id],
    ).fetchall()
    if last_day is not None and last_list is not None and last_day >= last_list:
        return Unreported(
            f"{name}: not rated under {system!r} yet (it ends {last_day}, the last list rated is {last_list}):"
            f" run `{command_hint('rate', db)}` first"
        )
    return Unreported(
        f"{name}: rated under {system!r}, but none of its {n_players} players had a rated game: nothing to report",
        participants=n_players > 0,
    )


def write_report(
    con: duckdb.DuckDBPyConnection, tournament_id: int, system: str, out_dir: Path, rows: ReportRows | None = None
) -> list[Path]:
    """Write the report of `tournament_id` under `system` into `out_dir`.

    Files: `<stem>.players.csv` (a row per participant, columns `PERFORMANCE_COLUMNS`),
    `<stem>.games.csv` (game by game), `<stem>.crosstable.csv`, for FFE systems `<stem>.ffe.csv`
    (period working), when a player made or nearly made a title norm `<stem>.norms.csv`
    (`elopipe.publish.norms_report`), and `<stem>.html` (all of them, standalone, with the event's header and
    the legend of the system's columns, worded for the rules the event was rated under, and the
    crosstable's, `legend.report_legend`). Returns the
    paths, the HTML last.
    `rows`: the stored rows of a set of reports holding this one (`report_rows.fetch_report_rows`,
    read set-wise by a publish; None: read them for this report alone).
    Raises LookupError if the tournament does not exist, `NothingToReport` (nothing written)
    when no player of it is rated under `system`.
    """
    info = tournament_info(con, tournament_id)
    why = nothing_rated_reason(con, tournament_id, system)
    if why is not None:
        raise NothingToReport(why.text)
    stem = report_stem(con, tournament_id)
    rows = rows or fetch_report_rows(con, system, [tournament_id])
    perf = performance_frame(con, tournament_id, system, rows)
    games = games_frame(con, tournament_id, system, rows)
    labels, cross = crosstable(con, tournament_id, rows.cross.get(tournament_id, CrossRows([], [], [])))
    cross = with_ro(cross, perf)
    ffe = ffe_frame(con, tournament_id, system, rows)
    out_dir.mkdir(parents=True, exist_ok=True)

    paths = [
        out_dir / f"{stem}.players.csv",
        out_dir / f"{stem}.games.csv",
        out_dir / f"{stem}.crosstable.csv",
        out_dir / f"{stem}.html",
    ]
    if ffe.height:
        paths.insert(3, out_dir / f"{stem}.ffe.csv")
        write_csv(ffe, paths[3])
    norm_rows = rows.norms.get(tournament_id, [])
    if norm_rows:
        paths.insert(-1, out_dir / f"{stem}.norms.csv")
        write_csv(section_frame(norm_rows), paths[-2])
    write_csv(perf, paths[0])
    write_csv(games, paths[1])
    write_csv(cross, paths[2])

    games_by_player: dict[int, list[dict[str, object]]] = {}
    for g in games.iter_rows(named=True):
        games_by_player.setdefault(g["player_id"], []).append(g)
    header = rows.headers.get(tournament_id, {})
    html = render(
        "report.html.j2",
        title=f"{info.get('name') or tournament_id} – {system_label(system)} rating report",
        system=system_label(system),
        tournament=info,
        header=[(label, header[key]) for key, label in HEADER_FIELDS if key in header],
        legend=report_legend(system, rows.rules.get(tournament_id)),
        ro_mark=MARK,
        ro_mark_title=mark_meaning(),
        list_dates=sorted({str(d) for d in perf["list_date"] if d is not None}),
        players=list(perf.iter_rows(named=True)),
        n_rated=perf.filter(pl.col("no_rating_reason").is_null()).height,
        games_by_player=games_by_player,
        rounds=labels,
        crosstable=list(cross.iter_rows(named=True)),
        ffe=list(ffe.iter_rows(named=True)),
        norms=norm_rows,
    )
    write_text(paths[-1], html)
    return paths
