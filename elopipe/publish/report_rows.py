"""The stored rows of many tournament reports, read in a few queries for all of them.

A report (`reports.write_report`) reads its performance rows, its game rows, its players' rounds
(`participants.round_reasons`), its header (`report_header`) and its start numbers. Read report
by report, that is some fifteen queries each, and a publish of a federation's month makes
hundreds of reports; read here, it is one query per kind for the whole set, each report's rows
then taken from the set as the query of that report alone would give them (the same SQL, with
the report's id, `rid`, as a column). A report of an event held in several files reads its
parts (`elopipe.identity.events.PARTS`): `rid` is the event asked for.

`ReportRows` holds, per tournament_id: `performance` (the columns of
`reports.performance_frame` before the reasons, notes and start numbers are added), `games`
(`reports.GAME_COLUMNS`, before the start numbers), `reasons` (`participants.round_reasons`),
`headers` (`report_header.report_header`), `start_numbers` (`crosstable.start_numbers`), `cross`
(the rows of `crosstable.crosstable`), `norms` (`norms_report.norm_section`) and `rules` (the FIDE
rules each event was rated under, `rules_legend.applied_rules_of`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import duckdb
import polars as pl

from elopipe.publish.crosstable import CrossRows, cross_rows_of, numbered_starts
from elopipe.publish.norms_report import norm_sections
from elopipe.publish.participants import NO_REASONS, round_reasons_of
from elopipe.publish.report_header import report_headers
from elopipe.publish.rules_legend import AppliedRules, applied_rules_of
from elopipe.store.frames import to_polars

GAME_COLUMNS = [
    "list_date",
    "player_id",
    "player",
    "start_rank",
    "kind",
    "round",
    "colour",
    "opponent_id",
    "opponent",
    "opponent_start_rank",
    "rc",
    "d_raw",
    "d_used",
    "capped",
    "pd",
    "score",
    "w_minus_pd",
    "k_w_minus_pd",
    "counted",
    "used_for",
    "reason",
    "unplayed_code",
    "file_name",
    "line",
]

# the games of one player and round in the order of their file (a knockout's rapid and blitz
# games share the round's number), then by list (an event rated over two lists) and score (a
# game a player is recorded on both sides of): without them their order, and a report's bytes,
# would vary from one publish to the next
GAME_TIES = ("file_name", "line", "opponent_id", "colour", "list_date", "score")

# A view (v_tournament_performance, v_change_explained, v_norms) is filtered with `list_contains`,
# not `IN (SELECT unnest(...))`: DuckDB pushes a plain filter into the view's branches, where a
# semi-join runs the whole view first (one report's games: 0.08 against 0.6 CPU-s on a
# 375k-game store)
_EVENTS = """ev AS (
    SELECT coalesce(event_id, tournament_id) AS rid, tournament_id FROM tournaments
    WHERE coalesce(event_id, tournament_id) IN (SELECT unnest($tids::INTEGER[]))
)"""


def _performance_sql(con: duckdb.DuckDBPyConnection) -> str:
    # A store rated before Ro had its source (its view has no ro_source) reports none
    have = {d[0] for d in con.execute("SELECT * FROM v_tournament_performance LIMIT 0").description}
    src, file_rating = ("perf.ro_source", "perf.file_rating") if "ro_source" in have else ("NULL", "NULL::INTEGER")
    rules = "perf.rules_version" if "rules_version" in have else "NULL"
    # a view older than first_rating (a store opened read-only since): the list's row says it
    first, first_from = (
        ("perf.first_rating", "")
        if "first_rating" in have
        else (
            "CASE WHEN perf.unrated THEN fr.rating END",
            "LEFT JOIN rating_lists fr"
            " ON fr.system = perf.system AND fr.list_date = perf.list_date AND fr.player_id = perf.player_id",
        )
    )
    return f"""
        WITH {_EVENTS},
        entries AS (
            SELECT ev.rid, tp.player_id, tp.start_rank, COALESCE(tp.name_as_written, p.name) AS name, p.fide_id,
                   COALESCE(tp.federation, p.federation) AS federation, COALESCE(tp.title, p.title) AS title,
                   tp.rating_in_file
            FROM tournament_players tp JOIN ev USING (tournament_id) JOIN players p USING (player_id)
            QUALIFY row_number() OVER (PARTITION BY ev.rid, tp.player_id ORDER BY tp.tournament_id) = 1
        ),
        perf AS (
            SELECT * FROM v_tournament_performance
            WHERE list_contains($tids::INTEGER[], tournament_id) AND system = $system
        )
        SELECT COALESCE(e.rid, perf.tournament_id) AS rid,
               perf.list_date, COALESCE(perf.start_rank, e.start_rank) AS start_rank,
               COALESCE(perf.player_id, e.player_id) AS player_id, COALESCE(e.name, perf.name) AS name,
               COALESCE(perf.fide_id, e.fide_id) AS fide_id, e.federation, e.title,
               perf.ro, {src}::VARCHAR AS ro_source, COALESCE({file_rating}, e.rating_in_file) AS file_rating,
               COALESCE(perf.n, 0) AS n, perf.score, perf.ra, perf.we, perf.w_we, perf.k,
               perf.k_w_we, perf.change_rounded, perf.rp, perf.unrated, perf.pooled_games,
               perf.ru_provisional, {first}::INTEGER AS first_rating, {rules}::VARCHAR AS rules_version,
               perf.player_id IS NULL AS no_row
        FROM entries e FULL JOIN perf ON perf.tournament_id = e.rid AND perf.player_id = e.player_id {first_from}
        """


# A store whose views predate `used_for` (opened read-only since) gets its words, no PD or W - PD
# where the row did not count, and a TRF game row the player's own 001 line, as the view now gives them
_OLD_VIEW = """(
    SELECT x.* REPLACE (
               CASE WHEN x.counted THEN x.pd END AS pd, CASE WHEN x.counted THEN x.w_minus_pd END AS w_minus_pd,
               COALESCE(CASE WHEN f.format = 'trf' AND x.kind = 'game' THEN own.line END, x.line) AS line),
           CASE WHEN x.counted THEN 'rating_change' WHEN x.reason = 'pooled_unrated' THEN 'first_rating'
                ELSE 'not_rated' END AS used_for
    FROM v_change_explained x
    LEFT JOIN source_files f ON f.file_id = x.file_id
    LEFT JOIN games g ON g.game_id = x.game_id
    LEFT JOIN tournament_players own
           ON own.tournament_id = g.tournament_id AND own.player_id = x.player_id AND own.file_id = x.file_id
)"""


def _games_sql(con: duckdb.DuckDBPyConnection) -> str:
    have = {d[0] for d in con.execute("SELECT * FROM v_change_explained LIMIT 0").description}
    explained = "v_change_explained" if "used_for" in have else _OLD_VIEW
    return f"""
    SELECT tournament_id AS rid, {", ".join(GAME_COLUMNS)} FROM (
        SELECT e.*, tp.start_rank, op.start_rank AS opponent_start_rank,
               regexp_extract(e.file_path, '[^/\\\\]+$') AS file_name
        FROM {explained} e
        LEFT JOIN tournament_players tp
               ON tp.tournament_id = e.tournament_id AND tp.player_id = e.player_id
        LEFT JOIN tournament_players op
               ON op.tournament_id = e.tournament_id AND op.player_id = e.opponent_id
        WHERE list_contains($tids::INTEGER[], e.tournament_id) AND e.system = $system
    )
    ORDER BY rid, start_rank NULLS LAST, player, player_id, round NULLS LAST, kind, {", ".join(GAME_TIES)}
    """


def _split(frame: pl.DataFrame) -> dict[int, pl.DataFrame]:
    """{rid: its rows, in order, without the rid column}."""
    if frame.height == 0:
        return {}
    return {int(k[0]): v.drop("rid") for k, v in frame.partition_by("rid", as_dict=True, maintain_order=True).items()}


@dataclass(frozen=True)
class ReportRows:
    """The stored rows of the reports of some tournaments under `system` (module docstring);
    a tournament with no row of a kind is absent from that kind's dict (use the getters)."""

    system: str
    performance: dict[int, pl.DataFrame]
    games: dict[int, pl.DataFrame]
    reasons: dict[int, pl.DataFrame]
    headers: dict[int, dict[str, str]]
    start_numbers: dict[int, dict[int, int]]
    cross: dict[int, CrossRows]
    norms: dict[int, list[dict[str, Any]]]
    rules: dict[int, AppliedRules]
    _perf_schema: pl.Schema
    _games_schema: pl.Schema

    def performance_of(self, tournament_id: int) -> pl.DataFrame:
        return self.performance.get(tournament_id, pl.DataFrame(schema=self._perf_schema))

    def games_of(self, tournament_id: int) -> pl.DataFrame:
        return self.games.get(tournament_id, pl.DataFrame(schema=self._games_schema))

    def reasons_of(self, tournament_id: int) -> pl.DataFrame:
        return self.reasons.get(tournament_id, pl.DataFrame(schema=NO_REASONS))


def fetch_report_rows(con: duckdb.DuckDBPyConnection, system: str, tournament_ids: list[int]) -> ReportRows:
    """The rows of the reports of `tournament_ids` under `system` (module docstring), one query
    per kind whatever their number."""
    tids = sorted(set(tournament_ids))
    params: dict[str, object] = {"tids": tids, "system": system}
    perf = to_polars(con.sql(_performance_sql(con), params=params))
    games = to_polars(con.sql(_games_sql(con), params=params))
    cross = cross_rows_of(con, tids)
    rules = applied_rules_of(con, tids, system)
    return ReportRows(
        system,
        _split(perf),
        _split(games),
        round_reasons_of(con, tids, system),
        report_headers(con, tids, system, rules),
        {rid: numbered_starts([(r[0], r[1]) for r in c.players]) for rid, c in cross.items()},
        cross,
        norm_sections(con, tids, system),
        rules,
        perf.drop("rid").schema,
        games.drop("rid").schema,
    )
