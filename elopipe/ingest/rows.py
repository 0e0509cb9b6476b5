"""The rows one parsed file gives each store table, as Polars frames (no database).

The loader (elopipe.ingest.loader) draws the ids, calls these per file of a batch, concatenates the
frames and inserts each table's rows in one statement. Column names and dtypes are those of the
tables in elopipe.store.schema; ids are Int32/Int64 as there.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import polars as pl

from elopipe.identity.resolve import Resolution
from elopipe.read import names
from elopipe.read.records import IngestIssue, ParsedFile

if TYPE_CHECKING:
    from polars._typing import PolarsDataType

RAW_LIMIT = 65536  # characters of raw text kept per error row

_TOURNAMENT_SCHEMA: dict[str, PolarsDataType] = {
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


@dataclass
class FileRows:
    """One readable file of a batch: its file_id, parsed content, games frame and
    {tournament ref: tournament_id} (and, once resolved, {(tournament ref, ref): player_id})."""

    file_id: int
    parsed: ParsedFile
    games: pl.DataFrame
    t_ids: dict[int, int]
    pid: dict[tuple[int, int], int] = field(default_factory=dict)


def tournaments_frame(files: list[FileRows]) -> pl.DataFrame:
    """`tournaments` rows of the batch, in file order. The day-precise game dates of a file give
    the days of play of its tournaments without dates (`first_day`, `last_day`)."""
    rows = []
    days = []
    for pos, f in enumerate(files):
        ts = f.parsed.tournaments
        for t in ts:
            rows.append((
                f.t_ids[t.ref], f.file_id, f.parsed.format, t.name, t.city, t.federation, t.start_date, t.end_date,
                t.rounds, t.time_control, t.rate_class, t.tournament_type, t.chief_arbiter, t.is_team,
                json.dumps(t.extra, default=str, ensure_ascii=False) if t.extra else None, names.event_key(t.name),
                pos, t.ref,
            ))  # fmt: skip
        if any(t.start_date is None or t.end_date is None for t in ts):
            days.append(
                f.games.lazy()
                .filter(pl.col.game_date.is_not_null() & (pl.col.date_precision == "day"))
                .group_by("tournament_ref")
                .agg(pl.col.game_date.min().alias("d0"), pl.col.game_date.max().alias("d1"))
                .with_columns(pos=pl.lit(pos, dtype=pl.Int32))
            )
    df = pl.DataFrame(rows, schema=_TOURNAMENT_SCHEMA | _REFS, orient="row")
    if days:
        df = df.join(pl.concat(pl.collect_all(days)), on=["pos", "tournament_ref"], how="left", maintain_order="left")
    else:
        df = df.with_columns(d0=pl.lit(None, dtype=pl.Date), d1=pl.lit(None, dtype=pl.Date))
    return df.with_columns(
        first_day=pl.coalesce("start_date", "d0", "end_date"), last_day=pl.coalesce("end_date", "d1", "start_date")
    ).drop("pos", "tournament_ref", "d0", "d1")


_REFS: dict[str, PolarsDataType] = {"pos": pl.Int32, "tournament_ref": pl.Int32}


_ENTRY_SCHEMA: dict[str, PolarsDataType] = {
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


Row = tuple[object, ...]


def table_frame(table: str, rows: list[Row]) -> pl.DataFrame:
    """`rows` (of `entry_rows`, `unplayed_rows` or `team_rows`, one file's or a whole batch's) as
    the frame of `table`: 'tournament_players', 'player_aliases', 'unplayed_rounds' or 'teams'.
    One frame for a batch: a frame costs about as much to make for ten rows as for ten thousand.
    Built from its columns (transposed in C): a third cheaper than from its rows."""
    schema = _ROW_SCHEMAS[table]
    if not rows:
        return pl.DataFrame(schema=schema)
    return pl.DataFrame(dict(zip(schema, zip(*rows, strict=True), strict=True)), schema=schema)


def entry_rows(
    parsed: ParsedFile, file_id: int, t_ids: Mapping[int, int], links: Mapping[tuple[int, int], Resolution]
) -> tuple[list[Row], list[Row]]:
    """(`tournament_players` rows, `player_aliases` rows) of the file. `links`: the players'
    resolutions (resolve.resolve_batch). Two entries of one tournament resolved to one player
    (a PGN spelling twice) give one `tournament_players` row, the first; every entry is an alias."""
    entries: dict[tuple[int, int], Row] = {}
    aliases: list[Row] = []
    for p in parsed.players:
        if p.tournament_ref not in t_ids:
            continue
        link = links[(p.tournament_ref, p.ref)]
        tid = t_ids[p.tournament_ref]
        by = p.birth_year or (p.birth_date.year if p.birth_date else None)
        aliases.append(
            (link.player_id, p.name or "?", names.name_key(p.name or ""), p.fide_id, p.national_id,
             p.federation, by, file_id, tid, link.rule, link.confidence)
        )  # fmt: skip
        if (tid, link.player_id) in entries:
            continue
        entries[(tid, link.player_id)] = (
            tid, link.player_id, p.start_rank, p.name, p.fide_id, p.rating, p.national_rating,
            p.national_rating_flag, p.federation, p.title, p.sex, p.birth_date, by,
            float(p.points) if p.points is not None else None, p.final_rank, p.team, file_id, p.line,
        )  # fmt: skip
    return list(entries.values()), aliases


_ALIAS_SCHEMA: dict[str, PolarsDataType] = {
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


def games_rows(files: list[FileRows]) -> tuple[pl.DataFrame, list[int]]:
    """(`games` rows of the batch but `game_id`, in file order; the number of games of each
    file). Games of a tournament that was not stored are left out. File-local refs become ids
    through mapping frames (joins), so a large batch costs no Python loop over its games."""
    # each game's file, as a position and an id, made once for the batch (not a frame per file:
    # a month of TRF is 750 files)
    heights = [f.games.height for f in files]
    frame = pl.concat([f.games for f in files], how="vertical_relaxed") if len(files) > 1 else files[0].games
    # repeated in Polars, not as Python lists of one int per game (a 112k-game file: 0.02 CPU-s)
    per_file = pl.DataFrame(
        {"pos": range(len(files)), "file_id": [f.file_id for f in files], "h": heights},
        schema={"pos": pl.Int32, "file_id": pl.Int32, "h": pl.Int64},
    ).filter(pl.col("h") > 0)
    frame = frame.with_columns(per_file.select(pl.col("pos", "file_id").repeat_by("h").explode()).get_columns())
    tmap = pl.DataFrame(
        [(pos, ref, tid) for pos, f in enumerate(files) for ref, tid in f.t_ids.items()],
        schema={"pos": pl.Int32, "tournament_ref": pl.Int32, "tournament_id": pl.Int32},
        orient="row",
    )
    pmap = pl.DataFrame(
        [(pos, tref, ref, pid) for pos, f in enumerate(files) for (tref, ref), pid in f.pid.items()],
        schema={"pos": pl.Int32, "tournament_ref": pl.Int32, "ref": pl.Int32, "player_id": pl.Int32},
        orient="row",
    )
    # ids from the ref columns only: joins on the whole frame would copy every column
    ids = (
        frame.lazy()
        .select("pos", "tournament_ref", "white_ref", "black_ref")
        .join(tmap.lazy(), on=["pos", "tournament_ref"], how="left", maintain_order="left")
        .join(pmap.lazy().rename({"ref": "white_ref", "player_id": "white_id"}),
              on=["pos", "tournament_ref", "white_ref"], how="left", maintain_order="left")
        .join(pmap.lazy().rename({"ref": "black_ref", "player_id": "black_id"}),
              on=["pos", "tournament_ref", "black_ref"], how="left", maintain_order="left")
        .select("tournament_id", "white_id", "black_id")
        .collect()
    )  # fmt: skip
    df = (
        frame.drop("tournament_ref", "white_ref", "black_ref")
        .rename({"white_rating": "white_rating_in_file", "black_rating": "black_rating_in_file"})
        .hstack(ids)
    )
    if ids.get_column("tournament_id").null_count():  # games of a tournament that was not stored
        df = df.filter(pl.col.tournament_id.is_not_null())
    counts = dict(df.group_by("pos").len().iter_rows())
    return df.drop("pos"), [counts.get(pos, 0) for pos in range(len(files))]


def unplayed_rows(
    parsed: ParsedFile, file_id: int, t_ids: Mapping[int, int], pid: Mapping[tuple[int, int], int]
) -> list[Row]:
    """`unplayed_rounds` rows of the file (byes, forfeits and absences of its stored players)."""
    return [
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


def team_rows(parsed: ParsedFile, file_id: int, t_ids: Mapping[int, int]) -> list[Row]:
    """`teams` rows of the file."""
    return [
        (t_ids[t.tournament_ref], t.team_no, t.name, t.record, t.member_ranks,
         float(t.points) if t.points is not None else None, file_id, t.line)
        for t in parsed.teams
        if t.tournament_ref in t_ids
    ]  # fmt: skip


_ISSUE_SCHEMA: dict[str, PolarsDataType] = {
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


_UNPLAYED_SCHEMA: dict[str, PolarsDataType] = {
    "tournament_id": pl.Int32,
    "player_id": pl.Int32,
    "round": pl.Int32,
    "code": pl.Utf8,
    "score": pl.Float64,
    "opponent_id": pl.Int32,
    "file_id": pl.Int32,
    "line": pl.Int32,
}
_TEAM_SCHEMA: dict[str, PolarsDataType] = {
    "tournament_id": pl.Int32,
    "team_no": pl.Int32,
    "name": pl.Utf8,
    "record": pl.Utf8,
    "member_ranks": pl.List(pl.Int32),
    "points": pl.Float64,
    "file_id": pl.Int32,
    "line": pl.Int32,
}
_ROW_SCHEMAS: dict[str, dict[str, PolarsDataType]] = {
    "tournament_players": _ENTRY_SCHEMA,
    "player_aliases": _ALIAS_SCHEMA,
    "unplayed_rounds": _UNPLAYED_SCHEMA,
    "teams": _TEAM_SCHEMA,
}
