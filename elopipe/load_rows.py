"""The rows one parsed file gives each store table, as Polars frames (no database).

The loader (elopipe.loader) draws the ids, calls these per file of a batch, concatenates the
frames and inserts each table's rows in one statement. Column names and dtypes are those of the
tables in elopipe.schema; ids are Int32/Int64 as there.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import polars as pl

from elopipe import identity
from elopipe.identity import Resolution
from elopipe.model import IngestIssue, ParsedFile

RAW_LIMIT = 65536  # characters of raw text kept per error row

_TOURNAMENT_SCHEMA = {
    "tournament_id": pl.Int32,
    "file_id": pl.Int32,
    "source_format": pl.Utf8,
    "name": pl.Utf8,
    "city": pl.Utf8,
    "federation": pl.Utf8,
    "start_date": pl.Date,
    "end_date": pl.Date,
    "rounds": pl.Int32,
    "time_control": pl.Utf8,
    "rate_class": pl.Utf8,
    "tournament_type": pl.Utf8,
    "chief_arbiter": pl.Utf8,
    "is_team": pl.Boolean,
    "extra": pl.Utf8,
    "event_key": pl.Utf8,
}


def tournament_frame(parsed: ParsedFile, file_id: int, t_ids: Mapping[int, int], games: pl.DataFrame) -> pl.DataFrame:
    """`tournaments` rows of the file (`t_ids`: {tournament ref: tournament_id}, in file order).
    `games`: the file's games frame, whose day-precise dates give the days of play of a
    tournament without dates (`first_day`, `last_day`)."""
    ts = parsed.tournaments
    df = pl.DataFrame(
        {
            "tournament_id": [t_ids[t.ref] for t in ts],
            "file_id": [file_id] * len(ts),
            "source_format": [parsed.format] * len(ts),
            "name": [t.name for t in ts],
            "city": [t.city for t in ts],
            "federation": [t.federation for t in ts],
            "start_date": [t.start_date for t in ts],
            "end_date": [t.end_date for t in ts],
            "rounds": [t.rounds for t in ts],
            "time_control": [t.time_control for t in ts],
            "rate_class": [t.rate_class for t in ts],
            "tournament_type": [t.tournament_type for t in ts],
            "chief_arbiter": [t.chief_arbiter for t in ts],
            "is_team": [t.is_team for t in ts],
            "extra": [json.dumps(t.extra, default=str, ensure_ascii=False) if t.extra else None for t in ts],
            "event_key": [identity.event_key(t.name) for t in ts],
            "tournament_ref": [t.ref for t in ts],
        },
        schema=_TOURNAMENT_SCHEMA | {"tournament_ref": pl.Int32},
    )
    days = (
        games.lazy()
        .filter(pl.col.game_date.is_not_null() & (pl.col.date_precision == "day"))
        .group_by("tournament_ref")
        .agg(pl.col.game_date.min().alias("d0"), pl.col.game_date.max().alias("d1"))
        .collect()
    )
    return (
        df.join(days, on="tournament_ref", how="left", maintain_order="left")
        .with_columns(
            first_day=pl.coalesce("start_date", "d0", "end_date"),
            last_day=pl.coalesce("end_date", "d1", "start_date"),
        )
        .drop("tournament_ref", "d0", "d1")
    )


_ENTRY_SCHEMA = {
    "tournament_id": pl.Int32,
    "player_id": pl.Int32,
    "start_rank": pl.Int32,
    "name_as_written": pl.Utf8,
    "fide_id_in_file": pl.Int64,
    "rating_in_file": pl.Int32,
    "national_rating": pl.Int32,
    "national_rating_flag": pl.Utf8,
    "federation": pl.Utf8,
    "title": pl.Utf8,
    "sex": pl.Utf8,
    "birth_date": pl.Date,
    "birth_year": pl.Int32,
    "points_in_file": pl.Float64,
    "final_rank": pl.Int32,
    "team": pl.Utf8,
    "file_id": pl.Int32,
    "line": pl.Int32,
}


def entry_frames(
    parsed: ParsedFile, file_id: int, t_ids: Mapping[int, int], links: Mapping[tuple[int, int], Resolution]
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(`tournament_players` rows, `player_aliases` rows) of the file. `links`: the players'
    resolutions (identity.resolve_batch). Two entries of one tournament resolved to one player
    (a PGN spelling twice) give one `tournament_players` row, the first; every entry is an alias."""
    entries: dict[tuple[int, int], tuple] = {}
    aliases = []
    for p in parsed.players:
        if p.tournament_ref not in t_ids:
            continue
        link = links[(p.tournament_ref, p.ref)]
        tid = t_ids[p.tournament_ref]
        by = p.birth_year or (p.birth_date.year if p.birth_date else None)
        aliases.append(
            (link.player_id, p.name or "?", identity.name_key(p.name or ""), p.fide_id, p.national_id,
             p.federation, by, file_id, tid, link.rule, link.confidence)
        )  # fmt: skip
        if (tid, link.player_id) in entries:
            continue
        entries[(tid, link.player_id)] = (
            tid, link.player_id, p.start_rank, p.name, p.fide_id, p.rating, p.national_rating,
            p.national_rating_flag, p.federation, p.title, p.sex, p.birth_date, by,
            float(p.points) if p.points is not None else None, p.final_rank, p.team, file_id, p.line,
        )  # fmt: skip
    return (
        pl.DataFrame(list(entries.values()), schema=_ENTRY_SCHEMA, orient="row"),
        pl.DataFrame(aliases, schema=_ALIAS_SCHEMA, orient="row"),
    )


_ALIAS_SCHEMA = {
    "player_id": pl.Int32,
    "name_as_written": pl.Utf8,
    "name_key": pl.Utf8,
    "fide_id": pl.Int64,
    "national_id": pl.Utf8,
    "federation": pl.Utf8,
    "birth_year": pl.Int32,
    "file_id": pl.Int32,
    "tournament_id": pl.Int32,
    "match_rule": pl.Utf8,
    "confidence": pl.Float64,
}


def games_rows(
    frame: pl.DataFrame, file_id: int, t_ids: Mapping[int, int], pid: Mapping[tuple[int, int], int]
) -> pl.DataFrame:
    """`games` rows of the file but `game_id` (`frame`: its games frame; games of a tournament
    that was not stored are left out). File-local refs become ids through small mapping frames
    (joins), so a large file costs no Python loop."""
    if frame.is_empty() or not t_ids:
        return frame.clear()
    tmap = pl.DataFrame(
        {"tournament_ref": list(t_ids), "tournament_id": list(t_ids.values())},
        schema={"tournament_ref": pl.Int32, "tournament_id": pl.Int32},
    )
    pmap = pl.DataFrame(
        {"tournament_ref": [k[0] for k in pid], "ref": [k[1] for k in pid], "player_id": list(pid.values())},
        schema={"tournament_ref": pl.Int32, "ref": pl.Int32, "player_id": pl.Int32},
    )
    # ids from the three ref columns only: joins on the whole frame would copy every column
    ids = (
        frame.lazy()
        .select("tournament_ref", "white_ref", "black_ref")
        .join(tmap.lazy(), on="tournament_ref", how="left", maintain_order="left")
        .join(pmap.lazy().rename({"ref": "white_ref", "player_id": "white_id"}), on=["tournament_ref", "white_ref"],
              how="left", maintain_order="left")
        .join(pmap.lazy().rename({"ref": "black_ref", "player_id": "black_id"}), on=["tournament_ref", "black_ref"],
              how="left", maintain_order="left")
        .select("tournament_id", "white_id", "black_id")
        .collect()
    )  # fmt: skip
    df = (
        frame.drop("tournament_ref", "white_ref", "black_ref")
        .rename({"white_rating": "white_rating_in_file", "black_rating": "black_rating_in_file"})
        .hstack(ids)
        .with_columns(file_id=pl.lit(file_id, dtype=pl.Int32))
    )
    if ids.get_column("tournament_id").null_count():  # games of a tournament that was not stored
        df = df.filter(pl.col.tournament_id.is_not_null())
    return df


def unplayed_frame(
    parsed: ParsedFile, file_id: int, t_ids: Mapping[int, int], pid: Mapping[tuple[int, int], int]
) -> pl.DataFrame:
    """`unplayed_rounds` rows of the file (byes, forfeits and absences of its stored players)."""
    rows = [
        (
            t_ids[u.tournament_ref],
            pid.get((u.tournament_ref, u.player_ref)),
            u.round,
            u.code,
            float(u.score) if u.score is not None else None,
            pid.get((u.tournament_ref, u.opponent_ref)) if u.opponent_ref is not None else None,
            file_id,
            u.line,
        )
        for u in parsed.unplayed
        if u.tournament_ref in t_ids and (u.tournament_ref, u.player_ref) in pid
    ]
    return pl.DataFrame(rows, schema=_UNPLAYED_SCHEMA, orient="row")


def teams_frame(parsed: ParsedFile, file_id: int, t_ids: Mapping[int, int]) -> pl.DataFrame:
    """`teams` rows of the file."""
    rows = [
        (t_ids[t.tournament_ref], t.team_no, t.name, t.record, t.member_ranks,
         float(t.points) if t.points is not None else None, file_id, t.line)
        for t in parsed.teams
        if t.tournament_ref in t_ids
    ]  # fmt: skip
    return pl.DataFrame(rows, schema=_TEAM_SCHEMA, orient="row")


_ISSUE_SCHEMA = {
    "file_id": pl.Int32,
    "line": pl.Int32,
    "game_index": pl.Int32,
    "severity": pl.Utf8,
    "code": pl.Utf8,
    "message": pl.Utf8,
    "raw": pl.Utf8,
}


def issues_frame(file_id: int, issues: list[IngestIssue]) -> pl.DataFrame:
    """`ingest_errors` rows of the file but `error_id` (raw text cut at `RAW_LIMIT` characters)."""
    return pl.DataFrame(
        {
            "file_id": [file_id] * len(issues),
            "line": [i.line for i in issues],
            "game_index": [i.game_index for i in issues],
            "severity": [i.severity for i in issues],
            "code": [i.code for i in issues],
            "message": [i.message for i in issues],
            "raw": [i.raw[:RAW_LIMIT] if i.raw else None for i in issues],
        },
        schema=_ISSUE_SCHEMA,
    )


_UNPLAYED_SCHEMA = {
    "tournament_id": pl.Int32,
    "player_id": pl.Int32,
    "round": pl.Int32,
    "code": pl.Utf8,
    "score": pl.Float64,
    "opponent_id": pl.Int32,
    "file_id": pl.Int32,
    "line": pl.Int32,
}
_TEAM_SCHEMA = {
    "tournament_id": pl.Int32,
    "team_no": pl.Int32,
    "name": pl.Utf8,
    "record": pl.Utf8,
    "member_ranks": pl.List(pl.Int32),
    "points": pl.Float64,
    "file_id": pl.Int32,
    "line": pl.Int32,
}
