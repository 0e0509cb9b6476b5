"""Plain records that readers produce and the store loads.

Readers (`read.pgn.reader`, `read.trf.reader`) turn one decoded file into a `ParsedFile`.
They never touch the database and never raise on bad content: what they cannot
read becomes an `IngestIssue`. The loader (`ingest.loader.load_batch`) writes a batch of
files and resolves identities in one transaction.

Players inside a ParsedFile are referred to by a file-local integer `ref`
(TRF: the start rank; PGN: an index assigned by the reader). Tournaments are
referred to by a file-local `ref` too.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, fields
from decimal import Decimal
from typing import TYPE_CHECKING, Any, overload

if TYPE_CHECKING:
    import polars as pl


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


# The columns of a games frame (`GameTable.frame`), as Polars dtype names: one per `GameRec`
# field, except that scores are Float64 (0, 0.5 or 1) and `headers` is the JSON text of the tags.
GAME_FRAME_COLUMNS = {
    "tournament_ref": "Int32", "white_ref": "Int32", "black_ref": "Int32", "result": "String",
    "result_raw": "String", "result_marker": "String", "white_score": "Float64", "black_score": "Float64",
    "played": "Boolean", "unplayed_code": "String", "round": "Int32", "round_label": "String",
    "board": "Int32", "game_date": "Date", "date_precision": "String", "white_rating": "Int32",
    "black_rating": "Int32", "movetext_hash": "String", "ply_count": "Int32", "eco": "String",
    "time_control": "String", "variant": "String", "fen": "String", "termination": "String",
    "flags": "List(String)", "headers": "String", "line": "Int32", "game_index": "Int32",
}  # fmt: skip


class GameTable(Sequence[GameRec]):
    """The games of a file as one Polars frame (columns: `GAME_FRAME_COLUMNS`), in file order.

    The PGN reader returns large files this way so that the loader inserts the frame as it is.
    The frame may be given as a function that builds it on first use (with the number of games):
    the reader's last columns (movetext hashes) are then still computed in a background thread
    while the loader resolves players. It is also a read-only sequence of `GameRec`, built from
    the frame on first use, for callers that want records (tests, small tools). A table made
    from a reader's `records` (with the function that transposes them) keeps them: its frame is
    built on first use, or with those of a whole batch (`read.game_frame.build_frames`).
    """

    def __init__(
        self,
        frame: pl.DataFrame | Callable[[], pl.DataFrame],
        n_games: int | None = None,
        records: list[GameRec] | None = None,
        rows: tuple[tuple[str, ...], list[list[object]]] | None = None,
    ) -> None:
        self._frame = frame
        self._n = n_games if records is None else len(records)
        self._records: list[GameRec] | None = records
        self._rows = rows

    @property
    def rows(self) -> tuple[tuple[str, ...], list[list[object]]] | None:
        """(columns, rows) of a table made from rows (`read.game_frame.rows_table`) whose frame is
        still to be built; None otherwise."""
        return self._rows if self.frame_pending else None

    @property
    def frame(self) -> pl.DataFrame:
        if callable(self._frame):
            self._frame = self._frame()
        return self._frame

    @property
    def frame_pending(self) -> bool:
        """Whether the frame is still to be built (a function, not a frame yet)."""
        return callable(self._frame)

    def set_frame(self, frame: pl.DataFrame) -> None:
        """Give the table its frame, built elsewhere from the same games in the same order."""
        self._frame = frame

    def __getstate__(self) -> dict[str, Any]:  # pickled with its frame built
        return {"_frame": self.frame, "_n": self._n, "_records": None, "_rows": None}

    def records(self) -> list[GameRec]:
        if self._records is None:
            self._records = [_game_from_row(row) for row in self.frame.iter_rows(named=True)]
        return self._records

    def __len__(self) -> int:
        return self._n if self._n is not None else self.frame.height

    @overload
    def __getitem__(self, i: int) -> GameRec: ...
    @overload
    def __getitem__(self, i: slice) -> list[GameRec]: ...
    def __getitem__(self, i: int | slice) -> GameRec | list[GameRec]:
        return self.records()[i]

    def __iter__(self) -> Iterator[GameRec]:
        return iter(self.records())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, GameTable | list):
            return self.records() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"GameTable({len(self)} games)"


_SCORE = {1.0: Decimal(1), 0.5: Decimal("0.5"), 0.0: Decimal(0)}
_GAME_FIELD_NAMES = frozenset(f.name for f in fields(GameRec))


def _game_from_row(row: dict[str, Any]) -> GameRec:
    rec = {k: v for k, v in row.items() if k in _GAME_FIELD_NAMES}
    rec["white_score"] = _SCORE.get(rec["white_score"]) if rec["white_score"] is not None else None
    rec["black_score"] = _SCORE.get(rec["black_score"]) if rec["black_score"] is not None else None
    rec["flags"] = list(rec["flags"] or [])
    rec["headers"] = json.loads(rec["headers"]) if rec["headers"] is not None else None
    return GameRec(**rec)


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
    games: list[GameRec] | GameTable = field(default_factory=list)
    unplayed: list[UnplayedRec] = field(default_factory=list)
    teams: list[TeamRec] = field(default_factory=list)
    issues: list[IngestIssue] = field(default_factory=list)
    rejected_reason: str | None = None  # set when nothing chess-like could be read
    results_only: bool = False  # a PGN results export: games, none of them showing a move
    # a copy or download cut short: a compressed stream without its end marker, or a PGN whose last
    # game has no result marker; such a version never replaces one it lacks games of (`corrections`)
    cut_short: bool = False

    @property
    def n_errors(self) -> int:
        return sum(1 for i in self.issues if i.severity == "error")
