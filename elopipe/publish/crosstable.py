"""Crosstable of one tournament, from the games and unplayed rounds of the store.

One row per player of `tournament_players`, one column per round. A cell reads like
chess-results': opponent's start number, colour ('w'/'b') and result ('1', '½', '0'), e.g.
'12w1'. Unplayed games show their TRF code: '+' forfeit win, '-' forfeit loss, and byes
'H' (half), 'F' (full), 'U' (pairing-allocated), 'Z' (zero). Games with no known round
(PGN without Round tags) go to columns '?1', '?2', ... in file order.

Columns of `crosstable()`: start_rank Int64 (the TRF start rank; for PGN, a number given
here by rating then name), name String, rating_in_file Int32, one String column per round
named 'r<round>', points Decimal (points_in_file, else the sum of the stored scores),
final_rank Int64 (TRF rank, else by points). A report adds, after rating_in_file, the Ro the rating
used and its mark (`with_ro`).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, NamedTuple

import duckdb
import polars as pl

_RESULT = {Decimal("1"): "1", Decimal("0.5"): "½", Decimal("0"): "0"}


def _score_text(score: Decimal | None, played: bool, code: str | None) -> str:
    if not played:
        if code and code.strip():
            return code.strip()
        return {Decimal("1"): "+", Decimal("0"): "-"}.get(score, "=") if score is not None else "-"
    if score is None:
        return "*"
    return _RESULT.get(Decimal(score), str(score))


# each report's (`rid`: the event asked for, its parts elopipe.identity.events.PARTS) players,
# games and unplayed rounds, for many reports in one query each (`$tids`)
_EVENTS = """ev AS (
    SELECT coalesce(event_id, tournament_id) AS rid, tournament_id FROM tournaments
    WHERE coalesce(event_id, tournament_id) IN (SELECT unnest($tids::INTEGER[]))
)"""

_PLAYERS_SQL = f"""
        WITH {_EVENTS}
        SELECT ev.rid, tp.player_id, tp.start_rank, COALESCE(tp.name_as_written, p.name) AS name,
               tp.rating_in_file, tp.points_in_file, tp.final_rank
        FROM tournament_players tp JOIN ev USING (tournament_id) JOIN players p USING (player_id)
        -- a player of several parts of one event (elopipe.identity.events): the first part's entry
        QUALIFY row_number() OVER (PARTITION BY ev.rid, tp.player_id ORDER BY tp.tournament_id) = 1
        ORDER BY ev.rid, tp.start_rank NULLS LAST, tp.rating_in_file DESC NULLS LAST, name
        """

_GAMES_SQL = f"""
        WITH {_EVENTS}
        SELECT ev.rid, round, white_id, black_id, white_score, black_score, played, unplayed_code
        FROM canonical_games JOIN ev USING (tournament_id)
        ORDER BY ev.rid, round NULLS LAST, game_index, game_id
        """

_UNPLAYED_SQL = f"""
        WITH {_EVENTS}
        SELECT ev.rid, player_id, round, code, score, opponent_id
        FROM unplayed_rounds JOIN ev USING (tournament_id)
        ORDER BY ev.rid, round
        """


def numbered_starts(players: list[tuple[int, int | None]]) -> dict[int, int]:
    """player_id -> start number: the stored start rank, else the next free number in the
    order of `players` (rating then name)."""
    sno: dict[int, int] = {}
    used = {r for _, r in players if r is not None}
    nxt = 1
    for pid, start_rank in players:
        if start_rank is not None:
            sno[pid] = start_rank
            continue
        while nxt in used:
            nxt += 1
        sno[pid] = nxt
        used.add(nxt)
    return sno


def start_numbers(con: duckdb.DuckDBPyConnection, tournament_id: int) -> dict[int, int]:
    """player_id -> start number of every player of `tournament_id`, as in `crosstable()`:
    the TRF start rank, else (PGN) a number by rating then name. The report's players, games
    and FFE files use these numbers too, so all of them agree with the crosstable."""
    return numbered_starts([(r[0], r[1]) for r in cross_rows(con, tournament_id).players])


class CrossRows(NamedTuple):
    """The stored rows a crosstable is drawn from: its players (player_id, start_rank, name,
    rating_in_file, points_in_file, final_rank, in `_PLAYERS_SQL`'s order), games (round,
    white_id, black_id, white_score, black_score, played, unplayed_code, by round, game_index,
    game_id) and unplayed rounds (player_id, round, code, score, opponent_id, by round)."""

    players: list[tuple[Any, ...]]
    games: list[tuple[Any, ...]]
    unplayed: list[tuple[Any, ...]]


def cross_rows(con: duckdb.DuckDBPyConnection, tournament_id: int) -> CrossRows:
    """The `CrossRows` of `tournament_id` (an event and its parts)."""
    return cross_rows_of(con, [tournament_id]).get(tournament_id, CrossRows([], [], []))


def cross_rows_of(con: duckdb.DuckDBPyConnection, tournament_ids: list[int]) -> dict[int, CrossRows]:
    """{tournament_id: its `CrossRows`} of `tournament_ids`, in three queries whatever their
    number; an event with no player is absent."""
    params = {"tids": sorted(set(tournament_ids))}
    found: list[dict[int, list[tuple[Any, ...]]]] = []
    for sql in (_PLAYERS_SQL, _GAMES_SQL, _UNPLAYED_SQL):
        by_event: dict[int, list[tuple[Any, ...]]] = {}
        for rid, *row in con.execute(sql, params).fetchall():
            by_event.setdefault(int(rid), []).append(tuple(row))
        found.append(by_event)
    players, games, unplayed = found
    return {
        rid: CrossRows(players.get(rid, []), games.get(rid, []), unplayed.get(rid, []))
        for rid in sorted(set(players) | set(games) | set(unplayed))
    }


def crosstable(
    con: duckdb.DuckDBPyConnection, tournament_id: int, source: CrossRows | None = None
) -> tuple[list[str], pl.DataFrame]:
    """Round labels and the crosstable of `tournament_id` (columns: see the module docstring),
    from `source` when given (read set-wise for many reports: `elopipe.publish.report_rows`)."""
    players, games, unplayed = source or cross_rows(con, tournament_id)
    sno = numbered_starts([(r[0], r[1]) for r in players])

    cells: dict[int, dict[str, str]] = {pid: {} for pid in sno}
    scores: dict[int, Decimal] = {pid: Decimal(0) for pid in sno}
    unknown_round_count: dict[int, int] = {}
    for rnd, white, black, wsc, bsc, played, code in games:
        for me, opp, colour, my_score in ((white, black, "w", wsc), (black, white, "b", bsc)):
            if me is None or me not in cells:
                continue
            if rnd is None:
                unknown_round_count[me] = unknown_round_count.get(me, 0) + 1
                label = f"?{unknown_round_count[me]}"
            else:
                label = str(rnd)
            opp_no = str(sno.get(opp, "")) if opp is not None else ""
            my_code = code
            if not played and code and code.strip() in {"+", "-"} and my_score is not None:
                my_code = "+" if Decimal(my_score) > 0 else "-"
            cells[me][label] = f"{opp_no}{colour}{_score_text(my_score, played, my_code)}"
            if my_score is not None:
                scores[me] += Decimal(my_score)
    for pid, rnd, code, score, opp in unplayed:
        if pid not in cells or str(rnd) in cells[pid]:
            continue
        opp_no = str(sno.get(opp, "")) if opp is not None else ""
        cells[pid][str(rnd)] = f"{opp_no}{(code or '').strip() or '-'}"
        if score is not None:
            scores[pid] += Decimal(score)

    known = sorted({int(k) for c in cells.values() for k in c if not k.startswith("?")})
    extra = sorted({k for c in cells.values() for k in c if k.startswith("?")}, key=lambda k: int(k[1:]))
    labels = [str(r) for r in known] + extra

    rows = []
    for pid, _start_rank, name, rating, points, final_rank in players:
        row: dict[str, object] = {
            "start_rank": sno[pid],
            "name": name,
            "rating_in_file": rating,
        }
        for lab in labels:
            row[f"r{lab}"] = cells[pid].get(lab, "")
        row["points"] = Decimal(points) if points is not None else scores[pid]
        row["final_rank"] = final_rank
        rows.append(row)
    schema: dict[str, pl.DataType] = {
        "start_rank": pl.Int64(),
        "name": pl.String(),
        "rating_in_file": pl.Int32(),
        **{f"r{lab}": pl.String() for lab in labels},
        "points": pl.Decimal(6, 1),
        "final_rank": pl.Int64(),
    }
    df = pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)
    if df.height and df["final_rank"].null_count() == df.height:
        ranks = df["points"].cast(pl.Float64).rank(method="min", descending=True).cast(pl.Int64)
        df = df.with_columns(ranks.alias("final_rank"))
    # ties kept in the players' order: an unstable sort made a report's bytes vary between publishes
    return labels, df.sort(["final_rank", "start_rank"], nulls_last=True, maintain_order=True)


def with_ro(cross: pl.DataFrame, perf: pl.DataFrame) -> pl.DataFrame:
    """The crosstable `cross` with, after rating_in_file (the Rtg column), ro Int32 (the Ro the
    rating used, from the report's `perf` rows: `elopipe.publish.reports.performance_frame`),
    ro_source String and ro_mark Boolean (Ro 50 or more points from the file's rating,
    `elopipe.publish.ro_marks`), matched by start number; a player rated on two lists shows
    the first."""
    ro = (
        perf.filter(pl.col("ro").is_not_null())
        .sort("list_date")
        .unique("start_rank", keep="first", maintain_order=True)
        .select(pl.col("start_rank").cast(pl.Int64), "ro", "ro_source", "ro_mark")
    )
    cols = list(cross.columns)
    at = cols.index("rating_in_file") + 1
    order = [*cols[:at], "ro", "ro_source", "ro_mark", *cols[at:]]
    joined = cross.join(ro, on="start_rank", how="left", maintain_order="left")
    return joined.with_columns(pl.col("ro_mark").fill_null(False)).select(order)
