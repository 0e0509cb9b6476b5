"""Plain records that readers produce and the store loads.

Readers (`pgn_reader`, `trf_reader`) turn one decoded file into a `ParsedFile`.
They never touch the database and never raise on bad content: what they cannot
read becomes an `IngestIssue`. `store.load_parsed` resolves identities and writes
everything in one transaction.

Players inside a ParsedFile are referred to by a file-local integer `ref`
(TRF: the start rank; PGN: an index assigned by the reader). Tournaments are
referred to by a file-local `ref` too.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any


@dataclass
class IngestIssue:
    """One problem found while reading. `severity` is 'error', 'warning' or 'info'."""

    code: str
    message: str
    line: int | None = None
    game_index: int | None = None
    severity: str = "error"
    raw: str | None = None


@dataclass
class TournamentRec:
    ref: int
    name: str | None = None
    city: str | None = None
    federation: str | None = None
    start_date: dt.date | None = None
    end_date: dt.date | None = None
    rounds: int | None = None
    time_control: str | None = None
    rate_class: str | None = None  # 'standard' | 'rapid' | 'blitz' | None
    tournament_type: str | None = None
    chief_arbiter: str | None = None
    is_team: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class PlayerRec:
    """A player as written in one tournament of one file."""

    ref: int
    tournament_ref: int
    name: str
    fide_id: int | None = None  # 0/blank -> None
    national_id: str | None = None
    federation: str | None = None
    sex: str | None = None  # 'm' | 'w'
    birth_date: dt.date | None = None
    birth_year: int | None = None
    title: str | None = None
    rating: int | None = None  # FIDE rating written in the file; 0/blank -> None
    national_rating: int | None = None
    national_rating_flag: str | None = None
    start_rank: int | None = None
    points: Decimal | None = None
    final_rank: int | None = None
    team: str | None = None
    line: int | None = None


@dataclass
class GameRec:
    tournament_ref: int
    white_ref: int | None
    black_ref: int | None
    result: str  # normalised: '1-0' | '0-1' | '1/2-1/2' | '*' | '0-0'
    result_raw: str | None = None
    result_marker: str | None = None  # PGN: the marker that ends the movetext, as written
    white_score: Decimal | None = None
    black_score: Decimal | None = None
    played: bool = True
    unplayed_code: str | None = None
    round: int | None = None
    round_label: str | None = None
    board: int | None = None
    game_date: dt.date | None = None
    date_precision: str = "none"  # 'day' | 'month' | 'year' | 'none'
    white_rating: int | None = None
    black_rating: int | None = None
    movetext_hash: str | None = None
    ply_count: int | None = None
    eco: str | None = None
    time_control: str | None = None
    variant: str | None = None
    fen: str | None = None
    termination: str | None = None
    flags: list[str] = field(default_factory=list)
    headers: dict[str, str] | None = None
    line: int | None = None
    game_index: int | None = None


@dataclass
class UnplayedRec:
    tournament_ref: int
    player_ref: int
    round: int
    code: str
    score: Decimal | None = None
    opponent_ref: int | None = None
    line: int | None = None


@dataclass
class TeamRec:
    tournament_ref: int
    team_no: int | None
    name: str | None
    record: str  # '013' | '310'
    member_ranks: list[int] = field(default_factory=list)
    points: Decimal | None = None
    line: int | None = None


@dataclass
class ParsedFile:
    """Everything one reader got out of one file."""

    format: str  # 'pgn' | 'trf'
    tournaments: list[TournamentRec] = field(default_factory=list)
    players: list[PlayerRec] = field(default_factory=list)
    games: list[GameRec] = field(default_factory=list)
    unplayed: list[UnplayedRec] = field(default_factory=list)
    teams: list[TeamRec] = field(default_factory=list)
    issues: list[IngestIssue] = field(default_factory=list)
    rejected_reason: str | None = None  # set when nothing chess-like could be read

    @property
    def n_errors(self) -> int:
        return sum(1 for i in self.issues if i.severity == "error")
