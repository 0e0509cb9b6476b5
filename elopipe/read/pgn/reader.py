"""Reading a PGN file into a `ParsedFile` (tournaments, players, games, issues).

The reader splits games itself before anything is parsed, because python-chess alone
merges games when blank lines are missing, drops malformed tag lines and accepts HTML as
one empty game (shared/specs/pgn-faults.md, "Notes for the ingester design", 2). The split
runs on compiled regexes over the whole text:

- a *tag block* is a run of lines that start with `[Name ` (tolerant: tabs, no quotes, spaces
  before `]`, several tags on one line); the movetext of a game is what lies between its tag
  block and the next one;
- a tag block followed only by blank lines and then another tag block is one tag section
  (ChessBase writes a blank line inside it, fault 25) unless a tag name repeats, which starts
  a new game (headers-only games, fault 29);
- a tag block inside an unterminated `{` comment is movetext (fault 22);
- a result marker followed by a blank line and more movetext starts a new game without tags
  (fault 37); a marker glued to the next `[Event` on one line is split (lichess exports);
- `%` escape lines are blanked (fault 24) and U+FEFF is removed (fault 3), keeping line numbers.

Default mode skims movetext (as UTF-8 bytes) without replaying it: comments, `;` comments,
variations, NAGs and move numbers are dropped and the SAN words are counted (ply count) and
hashed: `movetext_hash` = sha1 of the words joined by one space, each in its `_hash_form`
(check and annotation suffixes dropped, a piece move reduced to piece + destination so 'Ngf3'
and 'Nf3' agree, `0-0` written `O-O`, `Z0` written `--`, promotions written `e8=Q`). Exports of
one game with different annotations or disambiguation therefore hash the same (fault 36).
`validate_moves=True` replays the words with python-chess (`chess.Board.parse_san`, honouring
FEN and Chess960) and records illegal or ambiguous moves as errors on the game ('illegal_move',
'ambiguous_move', flag 'moves_invalid'); the game and its result still land (fault 30).

Hostile input (tests/read/pgn/test_reader_hardening.py): an unclosed `{` ends at the next tag section
that follows a blank line or starts with `[Event` plus another tag line; Round/Board outside
1..9999, more than 10,000 plies and ratings outside 100..3500 are NULL with a warning
(`field_bounds`); control characters and ANSI escape codes are removed from tag values; tag
values longer than 10,000 characters are cut with an error; a file whose games name no player
gets a 'no_players' error.

Issue codes (IngestIssue.code) and GameRec.flags used here: see the tests in
tests/read/pgn/test_pgn_faults.py, one per fault of the log.

Two paths, one result: the games `pgn_columns.analyse` vouches for (nothing odd in them: no
issue, no flag) are read as columns with Polars, in background threads; the others are read one
by one by `_Reader._game`. Refs (tournaments, players) are assigned in file order for both, so the
result is the same as reading every game one by one (tests/read/pgn/test_pgn_columns.py checks this on
every real file and on fuzzed games; `USE_COLUMNS = False` gives the one-by-one reader). Large
files come back as a `GameTable` (one frame). For speed the text is split in parts, each analysed
as soon as it is split; the whole-text searches for the rare fixes above (U+FEFF, `%` lines,
indented and glued tags) are replaced by a check of the raw games, and only a text that needs one
is prepared again with them.

Results are data (pgn_results): the Result tag and the movetext marker are both normalised;
a disagreement is flagged `result_conflict`; forfeits (`+:-`, `1-0 (forfeit)`, `0-0`, a
Termination that says the game was not played, `pgn_results.unplayed_termination`; a decisive
result with no moves in a file that shows moves, `_Reader._settle_moveless`) get
`played=False, unplayed_code='forfeit'`; a results export's moveless games are played, moves
unknown (flag 'moves_unknown'); byes (one player empty or '?', or Termination 'bye') get
`unplayed_code='bye'` plus an `UnplayedRec`. Which games the rating leaves out is decided from
the store's columns (played, unplayed_code, scores, ply count, variant), not from flags: see
`elopipe.rating.fide.prepare._unrated_reason`.
"""

from __future__ import annotations

import datetime as dt
import gc
import hashlib
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields, replace
from decimal import Decimal
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from elopipe.read.control_chars import CONTROL_RE, has_controls_utf8, strip_controls
from elopipe.read.execution import Executor, Pending, Spread, submit
from elopipe.read.field_bounds import (
    GAMES_PER_PLAYER_PLAUSIBLE,
    PLY_MAX,
)
from elopipe.read.pgn import split
from elopipe.read.pgn.game_parts import STANDARD_FORMS, GameParts
from elopipe.read.pgn.movetext import HASH_FORM, san_words, skim
from elopipe.read.pgn.results import (
    HALF,
    ONE,
    SCORES,
    ZERO,
    ResultForm,
    unplayed_termination,
)
from elopipe.read.pgn.split import (
    RawGame,
    split_games,
    split_movetexts,
    split_parts,
)
from elopipe.read.pgn.tags import parse_header
from elopipe.read.pgn.text_prep import line_at, needs_fixes, prepare, text_columns
from elopipe.read.pgn.values import (
    ODD_NAMES,
    PLACEHOLDERS,
    VALUE_RULES,
    clean,
    date_message,
    date_unreadable,
)
from elopipe.read.records import GameRec, GameTable, IngestIssue, ParsedFile, PlayerRec, TournamentRec, UnplayedRec
from elopipe.runtime.errors import ElopipeError, first_line

if TYPE_CHECKING:  # Polars is imported where the column path runs: `import elopipe` stays quick
    import polars as pl

__all__ = ["NotUtf8", "looks_like_pgn", "read_pgn", "movetext_tokens", "movetext_hash"]


# UTF-8 read as CP1252/Latin-1 (fault 4: one stray byte made the whole file single-byte):
# a lead byte Â-ô followed by what a continuation byte 0x80-0xBF becomes.
_MOJIBAKE = re.compile(
    "[\u00c2-\u00f4][\u0080-\u00bf\u0152\u0153\u0160\u0161\u0178\u017d\u017e\u0192\u02c6\u02dc"
    "\u2013\u2014\u2018-\u201e\u2020-\u2022\u2026\u2030\u2039\u203a\u20ac\u2122]"
)


def looks_like_pgn(text: str) -> bool:
    """True when the first few KB look like PGN: a tag pair line, or numbered SAN movetext."""
    head = text[:8192].lstrip("\ufeff")
    if re.search(r'(?m)^[ \t]*\[[ \t]*[A-Za-z][A-Za-z0-9_]*[ \t]*"[^"\n]*"[ \t]*\]', head):
        return True
    return bool(re.search(r"(?:^|\s)1\.\s*(?:[a-h][34]|N[a-h]3|[a-h]x?[a-h]?[1-8])\b", head)) and bool(
        re.search(r"(?:^|\s)2\.\s*\S", head)
    )


def movetext_tokens(movetext: str) -> list[str]:
    """The main-line SAN tokens of a movetext (comments, variations, NAGs, numbers dropped)."""
    return [t.decode() for t in san_words(movetext.encode("utf-8", "surrogatepass"))]


def movetext_hash(tokens: list[str]) -> str | None:
    """sha1 hex of the normalised SAN tokens (see `_hash_form`); None when there are no moves.
    Tokens that are not SAN moves are ignored."""
    return _hash_forms([HASH_FORM[w] for w in (t.encode() for t in tokens) if w in HASH_FORM])


def _hash_forms(forms: list[bytes]) -> str | None:
    return hashlib.sha1(b" ".join(forms)).hexdigest() if forms else None


class NotUtf8(ElopipeError, ValueError):
    """`read_pgn(None, utf8=...)` was given bytes that are not UTF-8: decode them and call again."""


def read_pgn(
    text: str | None,
    *,
    validate_moves: bool = False,
    source_name: str = "",
    workers: int = 1,
    utf8: bytes | None = None,
    executor: Executor | None = None,
    spread: Spread | None = None,
) -> ParsedFile:
    """Read every game of a decoded PGN text (LF line ends) into a `ParsedFile` (format 'pgn').

    Never raises on content: what cannot be read becomes an `IngestIssue` (line 1-based,
    game_index 0-based). `rejected_reason` is set when there are neither tag pairs nor moves.
    With `validate_moves`, each game is replayed with python-chess and illegal or ambiguous
    moves are recorded as 'illegal_move' errors (the game is kept).

    Without `validate_moves` the plain games of a text of `COLUMNS_MIN_BYTES` or more are read as
    columns (see the module docstring), their analysis and hashes on `executor` when one is
    given (elopipe.read.execution: threads overlap Polars with the reader's Python), and
    `workers` is not used. With it, a large text (at least 5,000 games per worker) is read in
    `workers` ranges of games: the first here, the others by `spread` (other processes: see
    elopipe.ingest.execution), or here too without one. The result is the same whatever the
    executor, workers and spread.

    `utf8`, when given, must be `text` encoded as UTF-8 (the file's own bytes when they were
    UTF-8 with LF line ends): it saves encoding the text again. `text` may then be None (the
    file's bytes, not decoded yet: UTF-8 without BOM and CR, as far as the caller knows); raises
    `NotUtf8` when they are not UTF-8, the only error this function raises.
    """
    if text is None and utf8 is None:
        raise ValueError("read_pgn needs the text or its UTF-8 bytes")
    # The reader makes millions of small objects and no reference cycles: generational GC passes
    # over them cost about 10 % of the run on 100k games, for nothing to collect.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        size = len(utf8) if utf8 is not None else len(text or "")
        reader = _Reader(text, validate_moves, source_name, workers, utf8, columns=size >= COLUMNS_MIN_BYTES,
                         executor=executor, spread=spread)  # fmt: skip
        return reader.run()
    except NotUtf8:
        raise
    except Exception as exc:  # a reader bug: the file is reported, never a crash of the ingest
        return _reader_failed(exc)
    finally:
        if was_enabled:
            gc.enable()


def _reader_failed(exc: Exception | str) -> ParsedFile:
    """A rejected file that says the reader failed, and on what (one line, no class name; or
    that line as a worker reported it)."""
    why = exc if isinstance(exc, str) else first_line(exc, "internal error")
    out = ParsedFile(format="pgn", rejected_reason=f"PGN reader failed: {why}")
    out.issues.append(IngestIssue("reader_error", f"PGN reader failed: {why}", severity="error"))
    return out


def read_pgn_chunks(
    chunks: Iterable[tuple[str | None, bytes | None]],
    *,
    maybe_mojibake: bool,
    validate_moves: bool = False,
    source_name: str = "",
    workers: int = 1,
    executor: Executor | None = None,
    spread: Spread | None = None,
) -> ParsedFile:
    """`read_pgn` of a large file given in consecutive pieces, so that only one piece's text is
    held at a time: the same `ParsedFile` as `read_pgn` of the whole text (lines, game indexes,
    refs, issues), its games as one `GameTable`.

    Each piece is a (text, utf8) pair as `read_pgn` takes them (text None: UTF-8 bytes already
    checked), ends with a newline and, but for the first, starts with a game's first tag line
    after a blank line (see `ingest`: such a line starts a new game whatever comes before it).
    `maybe_mojibake`: whether the whole file's text, as the reader sees it, shows signs of UTF-8
    read as a single-byte encoding (`text_prep.mojibake_hint`), which decides how every game is read.
    Never raises on content (a reader bug is reported as `read_pgn` reports it).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        reader = _Reader(None, validate_moves, source_name, workers, executor=executor, spread=spread)
        return reader.run_chunks(chunks, maybe_mojibake)
    except Exception as exc:  # a reader bug: the file is reported, never a crash of the ingest
        return _reader_failed(exc)
    finally:
        if was_enabled:
            gc.enable()


@dataclass
class PieceState:
    """What a reader of one piece of a file (`read_pgn_piece`) leaves for `merge_pieces`:
    picklable, refs its own (0-based, in the order the piece met them), game indexes from 0,
    line numbers the file's."""

    used: int  # game indexes used
    games: Any  # pl.DataFrame with `game_frame.GAME_FRAME_SCHEMA`
    any_tags: bool
    issues: list[IngestIssue]
    unplayed: list[UnplayedRec]
    tournaments: list[TournamentRec]  # by ref
    t_keys: list[tuple[Any, ...]]  # each tournament's identity (`_Reader.t_refs`), by ref
    players: list[PlayerRec]  # by ref
    p_keys: list[tuple[Any, ...]]  # each player's identity (`_Reader.p_refs`), by ref
    t_dates: dict[int, list[dt.date]]  # by tournament ref: the earliest and the latest game date
    t_tc: dict[int, set[str]]
    t_rounds: dict[int, int]
    headerless: list[list[bytes]]  # the moves of the first games without tags
    moveless: int = 0  # games flagged 'no_moves' (`_Reader._settle_moveless`)
    shows_moves: bool = False  # a game of the piece shows a move
    failure: str | None = None  # the reader failed: on what (see `_reader_failed`)


def read_pgn_piece(
    text: str | None,
    utf8: bytes | None,
    *,
    maybe_mojibake: bool,
    line_base: int,
    last: bool,
    validate_moves: bool = False,
    source_name: str = "",
    executor: Executor | None = None,
) -> PieceState:
    """Read one piece of a file, as `read_pgn_chunks` reads it, with a reader of its own (on a
    worker: the pieces before it need not be read). `text`/`utf8` as `read_pgn_chunks` takes a
    piece; `line_base`: newlines in the file before the piece; `last`: the piece ends where the
    file ends; `maybe_mojibake`: the whole file's hint; `executor`: as `read_pgn` takes it. Never
    raises on content: a reader bug is returned as `failure`."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        reader = _Reader(None, validate_moves, source_name, executor=executor)
        reader.line_base = line_base
        used = reader._read_piece(text, utf8, maybe_mojibake, last)
        return reader._piece_state(used)
    except Exception as exc:  # a reader bug: the file is reported (`merge_pieces`), never a crash
        return PieceState(
            0, None, False, [], [], [], [], [], [], {}, {}, {}, [], failure=first_line(exc, "internal error")
        )
    finally:
        if was_enabled:
            gc.enable()


def merge_pieces(states: Sequence[PieceState], source_name: str = "") -> ParsedFile:
    """The `ParsedFile` that `read_pgn_chunks` gives for the whole file, from the states of its
    pieces in file order (`read_pgn_piece`, each read on its own): refs numbered as one reader
    numbers them, game indexes of the whole file, then the whole-file checks. The games frame
    is remapped with Polars expressions (no Python loop per game). Never raises on content: the
    first piece whose reader failed gives the file `read_pgn_chunks` gives for a reader bug."""
    failed = next((s.failure for s in states if s.failure is not None), None)
    if failed is not None:
        return _reader_failed(failed)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        reader = _Reader(None, False, source_name)
        frames = []
        for st in states:
            frames.append(reader._merge_piece(st))
            reader.gi_base += st.used
        n_games = sum(f.height for f in frames)
        if n_games:
            import polars as pl

            reader.out.games = GameTable(pl.concat(frames, rechunk=False), n_games)
        return reader._finish()
    except Exception as exc:  # a reader bug, as `read_pgn_chunks` reports it
        return _reader_failed(exc)
    finally:
        if was_enabled:
            gc.enable()


def _remap(frame: Any, t_map: list[int], p_map: list[int], gi_shift: int) -> Any:
    """`frame` (a piece's games) with its refs mapped (old ref i -> map[i]) and game indexes shifted."""
    import polars as pl

    c = pl.col
    exprs = []
    if t_map != list(range(len(t_map))):
        exprs.append(c.tournament_ref.replace_strict(range(len(t_map)), t_map, return_dtype=pl.Int32))
    if p_map != list(range(len(p_map))):
        for col in ("white_ref", "black_ref"):  # a null ref (no player) stays null
            exprs.append(c(col).replace_strict(range(len(p_map)), p_map, return_dtype=pl.Int32))
    if gi_shift:
        exprs.append((c.game_index + gi_shift).cast(pl.Int32))
    return frame.with_columns(exprs) if exprs and frame.height else frame


_MIN_CHUNK_GAMES = 5000  # below this many games per worker, forking costs more than it saves


def _chunks(n_games: int, workers: int) -> list[tuple[int, int]]:
    """Contiguous [start, end) ranges of raw games, one per worker (one range when not parallel)."""
    k = max(1, min(workers, n_games // _MIN_CHUNK_GAMES))
    bounds = [n_games * i // k for i in range(k + 1)]
    return [(bounds[i], bounds[i + 1]) for i in range(k)]


def _read_chunk(parent: Any, raw_games: list[RawGame], start: int, end: int) -> tuple[Any, ...]:
    """Read raw games [start, end) of the parent's text with a fresh reader; return its state
    (in a process `read_pgn`'s `spread` forked: the parent's text is inherited, not sent)."""
    reader = _Reader(None, parent.validate, parent.source)
    reader.text, reader.ins_lines, reader.maybe_mojibake = parent.text, parent.ins_lines, parent.maybe_mojibake
    reader.has_controls, reader.line_base, reader.last_piece = parent.has_controls, parent.line_base, parent.last_piece
    used = reader._process(raw_games[start:end])
    res = reader._export(used)
    return (*res[:2], _pack_games(res[2]), *res[3:])


_GAME_FIELDS = tuple(f.name for f in fields(GameRec))


def _pack_games(games: list[GameRec]) -> tuple[list[Any], ...]:
    """Games as one list per field: a worker's games cross the process boundary as columns,
    which pickle and unpickle several times faster than as objects. Header names are interned so
    that pickle writes each once."""
    intern = sys.intern
    for g in games:
        if g.headers:
            g.headers = {intern(k): v for k, v in g.headers.items()}
    return tuple([getattr(g, name) for g in games] for name in _GAME_FIELDS)


def _unpack_games(cols: tuple[list[Any], ...]) -> list[GameRec]:
    return [GameRec(*values) for values in zip(*cols, strict=True)]


_REF_COLUMNS = ("white_ref", "black_ref", "line", "game_index")


def _records_columns(games: list[GameRec]) -> dict[str, list[Any]]:
    return {c: [getattr(g, c) for g in games] for c in _REF_COLUMNS}


def _ref_columns(cols: dict[str, list[Any]]) -> Any:
    """White and black refs, line and game index of games given as lists, as a Polars frame."""
    import polars as pl

    schema = dict.fromkeys(_REF_COLUMNS, pl.Int64)
    if not cols or "line" not in cols:
        return pl.DataFrame(schema=schema)
    return pl.DataFrame({c: cols[c] for c in _REF_COLUMNS}, schema=schema)


def _game_beyond(games: Any, refs: set[int]) -> dict[int, tuple[int | None, int | None]]:
    """For each player ref in `refs`: (line, game index) of its game number
    `GAMES_PER_PLAYER_PLAUSIBLE` + 1, the games taken by game index (a game without one counts as
    0) and then in the order given. One pass over the games, whatever the number of refs."""
    import polars as pl

    rows = games.cast(dict.fromkeys(_REF_COLUMNS, pl.Int64)).with_row_index("pos")
    sides = [rows.select("pos", "line", "game_index", ref=pl.col(side)) for side in ("white_ref", "black_ref")]
    hits = (
        pl.concat(sides)
        .filter(pl.col("ref").is_in(sorted(refs)))
        .unique(["pos", "ref"])  # a player on both sides of one game: one game
        .sort(pl.col("game_index").fill_null(0), "pos")
        .group_by("ref")
        .agg(pl.col("line").get(GAMES_PER_PLAYER_PLAUSIBLE), pl.col("game_index").get(GAMES_PER_PLAYER_PLAUSIBLE))
    )
    return {ref: (line, gi) for ref, line, gi in hits.iter_rows()}


# False: every game is read one by one, as before the column path existed (tests compare both)
USE_COLUMNS = True
# A whole text smaller than this is read one by one: the column path's Polars frames and threads
# cost about 12 ms a file whatever its size (0.07 ms for a one-game file one by one; the two are
# even near 400 KB of games with moves), which a live board's thousand one-game files pay a
# thousand times.
COLUMNS_MIN_BYTES = 256 * 1024


# False: the fast games' refs are assigned by a loop over every game (tests compare both)
USE_CHUNK_REFS = True


def _fast_frame(fast: pl.DataFrame, refs: dict[str, list[int]], slow: list[GameRec]) -> pl.DataFrame:
    """The games frame: the column-wise games (`fast`, with their refs) and the games read one by
    one (`slow`), in game order."""
    import polars as pl

    from elopipe.read.game_frame import GAME_FRAME_SCHEMA, records_frame

    score = {k: (float(w), float(b)) for k, (w, b) in SCORES.items() if w is not None and b is not None}
    c = pl.col
    frame = fast.select(
        *(pl.Series(k, refs[k], dtype=pl.Int32) for k in ("tournament_ref", "white_ref", "black_ref")),
        c.marker.alias("result"),
        c.Result.alias("result_raw"),
        c.marker.alias("result_marker"),
        c.marker.replace_strict({k: v[0] for k, v in score.items()}, default=None, return_dtype=pl.Float64).alias(
            "white_score"
        ),
        c.marker.replace_strict({k: v[1] for k, v in score.items()}, default=None, return_dtype=pl.Float64).alias(
            "black_score"
        ),
        pl.lit(True).alias("played"),
        pl.lit(None, dtype=pl.String).alias("unplayed_code"),
        "round",
        c.Round.alias("round_label"),
        "board",
        "game_date",
        "date_precision",
        "white_rating",
        "black_rating",
        "movetext_hash",
        "ply_count",
        "eco",
        "time_control",
        pl.lit(None, dtype=pl.String).alias("variant"),
        pl.lit(None, dtype=pl.String).alias("fen"),
        c.Termination.alias("termination"),
        pl.lit(None, dtype=pl.List(pl.String)).alias("flags"),
        c.json.alias("headers"),
        pl.Series("line", refs["line"], dtype=pl.Int32),
        pl.Series("game_index", refs["game_index"], dtype=pl.Int32),
    ).cast(GAME_FRAME_SCHEMA)
    if slow:
        frame = pl.concat([frame, records_frame(slow)]).sort("game_index")
    return frame


def _newline_offsets(data: bytes) -> Any:
    """The offsets of the newlines of `data` (numpy int64 array)."""
    return np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)


class _Reader(GameParts):
    def __init__(
        self,
        text: str | None,
        validate_moves: bool,
        source_name: str,
        workers: int = 1,
        utf8: bytes | None = None,
        columns: bool = True,
        executor: Executor | None = None,
        spread: Spread | None = None,
    ) -> None:
        self.validate = validate_moves
        self.executor = executor
        self.spread = spread
        self.source = source_name
        self.workers = workers
        self.out = ParsedFile(format="pgn")
        self.ins_lines: list[int] = []
        self.newlines: Pending[Any] | None = None  # `_newline_offsets(text)`, on the executor
        self.maybe_mojibake = False
        self.known_mojibake: bool | None = None  # given for the whole file (`run_chunks`)
        self.has_controls = False
        self.line_base = 0  # lines and game indexes of the pieces read before (`run_chunks`)
        self.gi_base = 0
        self.last_piece = True  # the text ends where the file ends
        # the column path (not when validating moves) checks the raw games for the rare fixes
        self.quick = USE_COLUMNS and columns and not validate_moves
        self._source = (text, utf8)
        self.unchecked_utf8 = text is None  # the bytes were not decoded by the caller
        self.text = self._prepare(text, utf8, quick=self.quick) if text is not None or utf8 is not None else b""
        self.any_tags = False
        self.t_refs: dict[tuple[Any, ...], int] = {}
        self.t_dates: dict[int, list[dt.date]] = defaultdict(list)
        self.t_tc: dict[int, set[str]] = {}
        self.t_rounds: dict[int, int] = {}
        self.p_refs: dict[tuple[Any, ...], int] = {}
        self._players: dict[int, PlayerRec] = {}
        self._elo_cache: dict[str, int | None] = {}
        self._date_cache: dict[str, tuple[dt.date | None, str, str | None]] = {}
        # the column path's refs and its games read one by one (`_implausible_games`)
        self._fast_refs: dict[str, list[int]] | None = None
        self._slow_games: list[GameRec] = []
        self._headerless_tokens: list[list[bytes]] = []
        # moveless games (flag 'no_moves', settled by `_settle_moveless`) and whether any game shows a move
        self.moveless = 0
        self.shows_moves = False
        self._prev_tref: int | None = None  # the tournament of the game before (`_tournament`)
        self._t_keys: dict[int, tuple[Any, ...]] = {}  # ref -> its key in `t_refs`
        self._t_cache: dict[tuple[Any, ...], int] = {}
        self._p_cache: dict[tuple[Any, ...], int] = {}
        self._round_cache: dict[str, tuple[int | None, int | None, str | None]] = {}

    @property
    def _games(self) -> list[GameRec]:
        """The games read so far: `out.games` is a list while the reader reads (a `GameTable` only
        once it is done, `_finish` and `run_chunks`)."""
        games = self.out.games
        assert isinstance(games, list)
        return games

    def _prepare(self, text: str | None, utf8: bytes | None = None, quick: bool = False) -> bytes:
        """The text as bytes, with the fixes that keep line numbers (elopipe.read.pgn.text_prep);
        sets `maybe_mojibake` and `ins_lines`. `quick`: without the rare fixes (`needs_fixes`
        then looks for them in the raw games and, if needed, `run` prepares the text again)."""
        prep = prepare(text, utf8, quick, self.known_mojibake)
        self.maybe_mojibake, self.ins_lines = prep.maybe_mojibake, prep.ins_lines
        return prep.data

    def _line_at(self, new_line: int) -> int:
        """Line number in the caller's text (undoing inserted newlines)."""
        return line_at(self.ins_lines, new_line)

    def run(self) -> ParsedFile:
        self._read_text()
        return self._finish()

    def run_chunks(self, chunks: Iterable[tuple[str | None, bytes | None]], maybe_mojibake: bool) -> ParsedFile:
        """`run` over consecutive pieces of one file, each cut where a game starts (see
        `read_pgn_chunks`): each piece is prepared, split and read as `run` reads a whole text,
        with line numbers and game indexes going on from the pieces before, and refs, caches and
        issues shared. Only the games frames of the pieces read so far are kept."""
        from elopipe.read.game_frame import games_frame

        frames = []
        n_games = 0
        lagging: Any = None  # a piece's games, built once the next piece is read (hashes meanwhile)
        pending = iter(chunks)
        nxt = next(pending, None)
        while nxt is not None:
            text, utf8 = nxt
            nxt = next(pending, None)  # the next piece is read before this one (its end is not the file's)
            used = self._read_piece(text, utf8, maybe_mojibake, last=nxt is None)
            if lagging is not None:
                frames.append(games_frame(lagging))
            lagging = self.out.games or None
            n_games += len(self.out.games)
            self.out.games = []
            self.gi_base += used
            self.line_base += utf8.count(b"\n") if text is None else text.count("\n")  # type: ignore[union-attr]
        self.text = b""
        self._fast_refs = None  # of the last piece: `_implausible_games` counts the games of all
        if lagging is not None:
            frames.append(games_frame(lagging))
        if frames:
            import polars as pl

            self.out.games = GameTable(pl.concat(frames, rechunk=False), n_games)
        return self._finish()

    def _read_piece(self, text: str | None, utf8: bytes | None, maybe_mojibake: bool, last: bool) -> int:
        """Read one piece of a file (see `read_pgn_chunks`) with line numbers from `line_base` and
        game indexes from `gi_base`; returns how many game indexes it used. `last`: the piece
        ends where the file ends."""
        self.last_piece = last
        self._source = (text, utf8)
        self.unchecked_utf8 = text is None
        self.ins_lines = []
        self.newlines = None
        self.known_mojibake = maybe_mojibake
        self.text = self._prepare(text, utf8, quick=self.quick)
        return self._read_text()

    def _read_text(self) -> int:
        """Read the games of `self.text`; returns how many game indexes they used."""
        started = self._start_columns() if self.quick else None
        if not isinstance(started, tuple) and self.unchecked_utf8:
            # Only columns built from every part check the bytes: a part that needs the text fixes
            # stops the building early, and the fixes may drop bytes (a `%` line) that decide it.
            try:
                self._source[1].decode("utf-8")  # type: ignore[union-attr]
            except UnicodeDecodeError:
                raise NotUtf8("the bytes are not UTF-8") from None
        if isinstance(started, str):  # the text needs the fixes the quick preparation left out
            self.text = self._prepare(*self._source)
            self.newlines = None  # of the text before the fixes
            raw_games, movetexts = split_movetexts(self.text)
            columns = text_columns(raw_games, movetexts)
            started = (raw_games, self._analyse_parts(columns, 0)) if columns is not None else None
        raw_games = split_games(self.text) if started is None else started[0]
        self._source = (None, None)
        if started is not None and raw_games:
            # The column path reads few games one by one: it checks each of their tags for control
            # characters rather than scan the whole text for them first.
            self.has_controls = True
            return self._run_columns(raw_games, started[1])
        self.has_controls = has_controls_utf8(self.text)
        chunks = _chunks(len(raw_games), self.workers)
        if len(chunks) > 1:
            return self._run_parallel(raw_games, chunks)
        return self._process(raw_games)

    def _finish(self) -> ParsedFile:
        """The whole-file checks and the tournaments' and players' final form, once every game
        is read."""
        if not self.any_tags and not self.out.games:
            self.out.rejected_reason = "not PGN: no tag pairs and no moves"
        elif not self.any_tags and not self._headerless_has_legal_moves():
            self.out.rejected_reason = "not PGN: no tag pairs and no legal moves"
            self.out.games = []
            self._players.clear()
            self.out.unplayed.clear()
            self.out.tournaments.clear()
        if self.out.games and not self._players and self.out.rejected_reason is None:
            self.issue(
                "no_players",
                f"{len(self.out.games)} game(s) but no White or Black player in the whole file: nothing to rate",
                None,
                None,
                "error",
            )
        self._finish_tournaments()
        self._implausible_games()
        self.out.results_only = bool(self.out.games) and not self.shows_moves
        if self.moveless:
            self._settle_moveless()
        self.out.players = sorted(self._players.values(), key=lambda p: p.ref)
        return self.out

    def _settle_moveless(self) -> None:
        """The file decides what its moveless games are (a result, no move, nothing marking them
        unplayed: flag 'no_moves').

        In a results export (no game of the file shows a move: `ParsedFile.results_only`) the
        moves are unknown, not absent: the games are played, flag 'moves_unknown', ply count NULL;
        whether they are rated is the rating's policy (`--no-moves`). In a file that shows moves
        elsewhere, the moves shown are the moves played: a decisive game is a forfeit
        (pgn-faults.md 12), a draw has fewer than two plies and is not rated (pgn-faults.md 13)."""
        import polars as pl

        from elopipe.read.game_frame import games_frame

        frame = games_frame(self.out.games)
        # a bye (`_odd_players`) is no game whatever the file shows
        moveless = frame.get_column("flags").list.contains("no_moves").fill_null(False) & frame.get_column("played")
        decisive = pl.col("result").is_in(["1-0", "0-1"])
        if self.out.results_only:
            self.issue(
                "results_export",
                f"no game of the file shows a move: a results export; its {moveless.sum()} games with a result"
                " are stored as played, moves unknown (rated unless the rating's --no-moves policy says otherwise)",
                None,
                None,
                "info",
            )
            settled = frame.with_columns(
                pl.when(moveless).then(pl.lit(None, pl.Int32)).otherwise(pl.col("ply_count")).alias("ply_count"),
                pl.when(moveless).then(pl.lit(["moves_unknown"])).otherwise(pl.col("flags")).alias("flags"),
            )
        else:
            for line, gi, result in frame.filter(moveless).select("line", "game_index", "result").iter_rows():
                if result == "1/2-1/2":
                    self.issue("fewer_than_two_plies", "no move shown in a file that shows moves: not rated", line,
                               gi, "info")  # fmt: skip
                else:
                    self.issue("forfeit_no_moves", "decisive result with no moves: stored as a forfeit", line, gi,
                               "info")  # fmt: skip
            tag = pl.when(decisive).then(pl.lit("forfeit")).otherwise(pl.lit("fewer_than_two_plies"))
            settled = frame.with_columns(
                pl.when(moveless & decisive).then(False).otherwise(pl.col("played")).alias("played"),
                pl.when(moveless & decisive).then(pl.lit("forfeit")).otherwise(pl.col("unplayed_code"))
                .alias("unplayed_code"),
                pl.when(moveless).then(pl.concat_list(tag, pl.lit("no_moves"))).otherwise(pl.col("flags"))
                .alias("flags"),
            )  # fmt: skip
        self.out.games = GameTable(settled, settled.height)

    def _implausible_games(self) -> None:
        """Warn (games kept) about a player with more games in one event than any real event
        gives (`field_bounds.GAMES_PER_PLAYER_PLAUSIBLE`), at the first game beyond it."""
        fast = self._fast_refs
        slow: list[GameRec] = self._slow_games if fast is not None else self.out.games  # type: ignore[assignment]
        frame = None
        if isinstance(self.out.games, GameTable) and fast is None:  # read in pieces: every piece's games
            frame = self.out.games.frame
            fast = {c: frame.get_column(c).to_list() for c in ("white_ref", "black_ref")}
            slow = []
        counts: Counter[int | None] = Counter()
        if fast is not None:
            counts.update(fast["white_ref"])
            counts.update(fast["black_ref"])
        counts.update(g.white_ref for g in slow)
        counts.update(g.black_ref for g in slow)
        many = {ref for ref, n in counts.items() if ref is not None and n > GAMES_PER_PLAYER_PLAUSIBLE}
        if not many:
            return
        import polars as pl

        if frame is not None:
            columns = frame.select(_REF_COLUMNS).cast(dict.fromkeys(_REF_COLUMNS, pl.Int64))
        else:
            columns = _ref_columns(fast or {})
        beyond = _game_beyond(pl.concat([_ref_columns(_records_columns(slow)), columns]), many)
        for ref in sorted(many):
            line, gi = beyond[ref]
            player = self._players[ref]
            event = next((t.name for t in self.out.tournaments if t.ref == player.tournament_ref), None)
            self.issue(
                "implausible_games",
                f"{player.name!r} has {counts[ref]} games in event {event!r}: more than "
                f"{GAMES_PER_PLAYER_PLAUSIBLE}, which no real event gives (a merged or generated file?); "
                "loaded as written",
                line,
                gi,
            )

    def _process(self, raw_games: list[RawGame]) -> int:
        """Read `raw_games` (a run of consecutive games); game indexes start at `gi_base`. Returns
        how many game indexes were used."""
        text = self.text
        last_pos = raw_games[0].header_start if raw_games else 0
        # newlines before a position in the "\n"-prefixed text = its 1-based line
        line = text.count(b"\n", 0, last_pos)
        gi = start = self.gi_base
        for rg in raw_games:
            line += text.count(b"\n", last_pos, rg.header_start)
            last_pos = rg.header_start
            gi += self._raw_game(rg, self._line_at(line) + self.line_base, gi)
        return gi - start

    def _raw_game(self, rg: RawGame, start_line: int, gi: int) -> int:
        """Read one raw game (several when a tag name repeats in its header) starting at game
        index `gi`; returns how many game indexes it used."""
        headers_list, tprobs = parse_header(rg.header.decode("utf-8", "surrogatepass"))
        movetext = self.text[rg.mt_start : rg.mt_end]
        if tprobs.leftover:
            movetext = tprobs.leftover.encode("utf-8", "surrogatepass") + movetext
        for k, code, msg, rawl in tprobs.issues:
            self.issue(code, msg, start_line + k, gi, "error" if code == "tag_too_long" else "warning", rawl)
        for idx, (tags, offset) in enumerate(headers_list):
            last = idx == len(headers_list) - 1
            if tags:
                self.any_tags = True
                if self.maybe_mojibake:
                    self._repair(tags, start_line + offset, gi + idx)
                if self.has_controls or b"\t" in rg.header:
                    self._strip_controls(tags, start_line + offset, gi + idx)
            try:
                self._game(tags, movetext if last else b"", start_line + offset, gi + idx, rg)
            except Exception as exc:  # a reader bug must not lose the other games
                self.issue(
                    "reader_error",
                    f"game could not be read: {exc!r}",
                    start_line + offset,
                    gi + idx,
                    "error",
                    self.text[rg.header_start : rg.mt_end].decode("utf-8", "replace"),
                )
        return len(headers_list)

    # -- column-wise reading (elopipe.read.pgn.columns) --
    def _start_columns(self) -> tuple[list[RawGame], list[tuple[int, int, Pending[Any]]]] | str:
        """Split the text in parts and have each part analysed (`pgn_columns.analyse`, in a
        background thread) as soon as it is split: the raw games and the analysis jobs
        (first game, end, future). 'fixes' when a part holds what the quick preparation left out,
        'not utf-8' when its bytes are not UTF-8 (nothing is read then)."""
        # numpy works without the GIL: the newline offsets (for line numbers) are found while the
        # text is split
        self.newlines = submit(self.executor, _newline_offsets, self.text)
        raw_games: list[RawGame] = []
        jobs: list[tuple[int, int, Pending[Any]]] = []
        for part_raw, part_movetexts in split_parts(self.text, None):
            columns = text_columns(part_raw, part_movetexts)
            if columns is None:
                return "not utf-8"
            if needs_fixes(columns):
                return "fixes"
            jobs += self._analyse_parts(columns, len(raw_games))
            raw_games += part_raw
        return raw_games, jobs

    def _analyse_parts(self, columns: tuple[Any, Any], offset: int) -> list[tuple[int, int, Pending[Any]]]:
        """Analysis jobs for the raw games whose columns are given (they start at game `offset`),
        in pieces of at least `split.COLUMN_CHUNK_GAMES` (see `_run_columns`)."""
        from elopipe.read.pgn import columns as pgn_columns

        headers, movetexts = columns
        n = len(headers)
        k = max(1, min(split.COLUMN_CHUNKS, n // split.COLUMN_CHUNK_GAMES))
        bounds = [n * i // k for i in range(k + 1)]
        analyse = partial(pgn_columns.analyse, ascii_headers=self.maybe_mojibake, executor=self.executor)
        return [
            (
                offset + a,
                offset + b,
                submit(self.executor, analyse, headers.slice(a, b - a), movetexts.slice(a, b - a), VALUE_RULES),
            )
            for a, b in zip(bounds, bounds[1:], strict=False)
            if b > a
        ]

    def _run_columns(self, raw_games: list[RawGame], jobs: list[tuple[int, int, Pending[Any]]]) -> int:
        """Read the raw games in file order: the ones `pgn_columns.analyse` vouches for as columns,
        the others one by one (`_raw_game`). Refs, caches and issues are shared, so the result is
        the one `_process` gives. `jobs`: the analyses of consecutive raw games (`_start_columns`);
        refs are assigned to one while the next is analysed. Returns how many game indexes were
        used."""
        import polars as pl

        from elopipe.read.pgn import columns as pgn_columns

        lines = self._start_lines(raw_games)
        refs: dict[str, list[int]] = {c: [] for c in ("tournament_ref", "white_ref", "black_ref", "line", "game_index")}
        fast_parts: list[tuple[pl.DataFrame, pgn_columns.Analysis]] = []
        self._fast_refs, self._slow_games = refs, self._games
        gi = self.gi_base
        for a, b, job in jobs:
            res = job.result()
            if res is None:
                for rg, ln in zip(raw_games[a:b], lines[a:b], strict=True):
                    gi += self._raw_game(rg, ln, gi)
                continue
            gi, fast = self._columns_chunk(res, raw_games[a:b], lines[a:b], gi, refs)
            if fast is not None:
                fast_parts.append((fast, res))
        if fast_parts:
            self.any_tags = True
            slow = self._games

            def frame() -> pl.DataFrame:  # the hashes may still be computed in the background
                parts = [f.join(r.hashes(), on="g", how="left", maintain_order="left") for f, r in fast_parts]
                return _fast_frame(pl.concat(parts), refs, slow)

            self.out.games = GameTable(frame, len(refs["game_index"]) + len(slow))
        return gi - self.gi_base

    def _columns_chunk(
        self,
        res: Any,
        raw_games: list[RawGame],
        lines: list[int],
        gi: int,
        refs: dict[str, list[int]],
    ) -> tuple[int, Any]:
        """Refs of one analysed chunk, in order, with its other games read one by one. Returns the
        next game index and the chunk's fast games (their hashes come from `res`), or None."""
        import polars as pl

        from elopipe.read.pgn import chunk_refs

        games = res.games
        fast = games.filter("fast").with_columns(pl.col.game_date.dt.year().alias("year"))
        if USE_CHUNK_REFS:
            nxt = chunk_refs.assign(self, res, fast, raw_games, lines, gi, refs)
            if nxt is not None:
                return self._chunk_done(res, fast, nxt)
        fast_mask = games.get_column("fast").to_list()
        t_cols = ["Event", "Site", "EventDate", "year"]
        need = set()
        for cols in (t_cols, [*t_cols, "White", "WhiteFideId"], [*t_cols, "Black", "BlackFideId"]):
            # hashed keys: a collision only means a dict is built later, on demand (tags_of)
            need.update(fast.filter(pl.struct(cols).hash().is_first_distinct()).get_column("g").to_list())
        dicts: dict[int, dict[str, str]] = res.tag_dicts(sorted(need))
        names = (
            "g", "Event", "Site", "EventDate", "year", "White", "Black", "WhiteFideId", "BlackFideId", "WhiteElo",
            "BlackElo", "game_date", "event_date", "event_precision", "time_control", "round",
        )  # fmt: skip
        rows = zip(*(fast.get_column(c).to_list() for c in names), strict=True)
        t_cache, t_dates, t_tc, t_rounds = self._t_cache, self.t_dates, self.t_tc, self.t_rounds
        p_cache, players, player = self._p_cache, self._players, self._player

        def tags_of(g: int) -> dict[str, str]:
            # a hash collision in `need` only means this game's dict is built now
            tags = dicts.get(g)
            if tags is None:
                tags = dicts[g] = res.tag_dicts([g])[g]
            return tags

        trefs, wrefs, brefs = refs["tournament_ref"], refs["white_ref"], refs["black_ref"]
        fast_lines, gis = refs["line"], refs["game_index"]
        for rg, is_fast, ln in zip(raw_games, fast_mask, lines, strict=True):
            if not is_fast:
                gi += self._raw_game(rg, ln, gi)
                continue
            g, event, site, edate_raw, year, white, black, wfid, bfid, welo, belo, gdate, edate, eprec, tc, rnd = next(
                rows
            )
            tkey = (event, site, edate_raw, year, None if event is not None else self._prev_tref)
            tref = t_cache.get(tkey)
            if tref is None:
                tref = t_cache[tkey] = self._tournament(tags_of(g), gdate, edate, eprec)
            self._prev_tref = tref
            if gdate is not None:
                t_dates[tref].append(gdate)
            if tc:
                t_tc.setdefault(tref, set()).add(tc)
            # `_player`, with its usual case (a player met before, rating known; a fast game's FIDE ID
            # is valid or a placeholder) inline
            wref = p_cache.get((tref, white, wfid))
            if wref is None or (welo and players[wref].rating is None):
                wref = player(tref, "White", white, wfid, welo, partial(tags_of, g), ln, gi)
            bref = p_cache.get((tref, black, bfid))
            if bref is None or (belo and players[bref].rating is None):
                bref = player(tref, "Black", black, bfid, belo, partial(tags_of, g), ln, gi)
            if rnd is not None and rnd > t_rounds.get(tref, 0):
                t_rounds[tref] = rnd
            trefs.append(tref)
            wrefs.append(wref)
            brefs.append(bref)
            fast_lines.append(ln)
            gis.append(gi)
            gi += 1
        return self._chunk_done(res, fast, gi)

    def _chunk_done(self, res: Any, fast: Any, gi: int) -> tuple[int, Any]:
        """What `_columns_chunk` returns once the chunk is read."""
        if fast.is_empty():
            res.hashes()  # nothing to wait for later
            return gi, None
        self.shows_moves = self.shows_moves or bool(fast.get_column("two_moves").any())
        return gi, fast

    def _start_lines(self, raw_games: list[RawGame]) -> list[int]:
        """The line (1-based, in the caller's text) where each raw game starts."""
        newlines = self.newlines.result() if self.newlines is not None else _newline_offsets(self.text)
        # newlines before a position in the "\n"-prefixed text = its 1-based line
        counts = np.searchsorted(newlines, np.fromiter((rg.header_start for rg in raw_games), np.int64, len(raw_games)))
        if not self.ins_lines:
            lines: list[int] = (counts + self.line_base).tolist()
            return lines
        return [self._line_at(n) + self.line_base for n in counts.tolist()]

    # -- reading in ranges (read_pgn(workers=N), the others by `spread`) --
    def _run_parallel(self, raw_games: list[RawGame], chunks: list[tuple[int, int]]) -> int:
        """Chunk 0 read here, chunks 1.. by `spread` (forked processes) meanwhile; results are
        merged in file order. A chunk `spread` did not read (or no `spread`) is read here."""
        first = raw_games[chunks[0][0] : chunks[0][1]]
        job = partial(_read_chunk, self, raw_games)
        results: list[tuple[Any, ...] | None]
        if self.spread is None:
            used, results = self._process(first), [None] * (len(chunks) - 1)
        else:
            used, results = self.spread(job, chunks[1:], partial(self._process, first))
        gi_next = self.gi_base + used
        for chunk, res in zip(chunks[1:], results, strict=True):
            if res is None:
                res = job(*chunk)
            gi_next += self._merge(res, gi_next)
        return gi_next - self.gi_base

    def _export(self, used: int) -> tuple[Any, ...]:
        return (
            used,
            self.any_tags,
            self.out.games,
            self.out.issues,
            self.out.unplayed,
            self.out.tournaments,
            self.t_refs,
            self._players,
            self.p_refs,
            dict(self.t_dates),
            self.t_tc,
            self.t_rounds,
            self._headerless_tokens,
            self.moveless,
            self.shows_moves,
        )

    def _merge(self, res: tuple[Any, ...], gi_shift: int) -> int:
        used: int
        used, any_tags, cols, issues, unplayed, tournaments, t_refs, players, p_refs, t_dates, t_tc, t_rounds = res[:12]
        hl, moveless, shows_moves = res[12:]
        games = _unpack_games(cols)
        self.any_tags = self.any_tags or any_tags
        self.moveless += moveless
        self.shows_moves = self.shows_moves or shows_moves
        t_map: dict[int, int] = {}
        for key, ref in t_refs.items():
            new = self.t_refs.get(key)
            if new is None:
                new = self.t_refs[key] = len(self.t_refs)
                t = tournaments[ref]
                t.ref = new
                self.out.tournaments.append(t)
            t_map[ref] = new
        p_map: dict[int, int] = {}
        for (tref, who), ref in p_refs.items():
            key = (t_map[tref], who)
            new = self.p_refs.get(key)
            p = players[ref]
            if new is None:
                new = self.p_refs[key] = len(self.p_refs)
                p.ref, p.tournament_ref = new, key[0]
                self._players[new] = p
            elif self._players[new].rating is None and p.rating is not None:
                self._players[new].rating = p.rating
            p_map[ref] = new
        for g in games:
            g.tournament_ref = t_map[g.tournament_ref]
            if g.white_ref is not None:
                g.white_ref = p_map[g.white_ref]
            if g.black_ref is not None:
                g.black_ref = p_map[g.black_ref]
            assert g.game_index is not None  # the reader numbers every game it reads
            g.game_index += gi_shift
        self._games.extend(games)
        for u in unplayed:
            u.tournament_ref = t_map[u.tournament_ref]
            u.player_ref = p_map[u.player_ref]
            if u.opponent_ref is not None:
                u.opponent_ref = p_map[u.opponent_ref]
        self.out.unplayed.extend(unplayed)
        for i in issues:
            if i.game_index is not None:
                i.game_index += gi_shift
        self.out.issues.extend(issues)
        for ref, dates in t_dates.items():
            self.t_dates[t_map[ref]].extend(dates)
        for ref, tcs in t_tc.items():
            self.t_tc.setdefault(t_map[ref], set()).update(tcs)
        for ref, rnd in t_rounds.items():
            if rnd > self.t_rounds.get(t_map[ref], 0):
                self.t_rounds[t_map[ref]] = rnd
        self._headerless_tokens.extend(hl)
        self._prev_tref = None  # the chunk's last game is not this reader's: no event to continue
        return used

    def _piece_state(self, used: int) -> PieceState:
        """This reader's state once it read one piece (`read_pgn_piece`)."""
        from elopipe.read.game_frame import games_frame

        return PieceState(
            used=used,
            games=games_frame(self.out.games),
            any_tags=self.any_tags,
            issues=self.out.issues,
            unplayed=self.out.unplayed,
            tournaments=self.out.tournaments,
            t_keys=list(self.t_refs),
            players=[self._players[ref] for ref in range(len(self.p_refs))],
            p_keys=list(self.p_refs),
            # all that `_finish_tournaments` takes of the dates: not one date per game
            t_dates={ref: [min(ds), max(ds)] for ref, ds in self.t_dates.items() if ds},
            t_tc=self.t_tc,
            t_rounds=self.t_rounds,
            headerless=self._headerless_tokens[:3],  # `_headerless_has_legal_moves` looks at no more
            moveless=self.moveless,
            shows_moves=self.shows_moves,
        )

    def _merge_piece(self, st: PieceState) -> Any:
        """Add the state of the next piece (`read_pgn_piece`; game indexes start at `gi_base`) as if
        this reader had read it: tournaments and players first met there get the next refs, a player
        met before gets the rating the piece found if it had none (as `_player` does). Returns the
        piece's games frame remapped. The piece's objects are copied where changed, never changed."""
        self.any_tags = self.any_tags or st.any_tags
        self.moveless += st.moveless
        self.shows_moves = self.shows_moves or st.shows_moves
        t_map: list[int] = []
        for key, t in zip(st.t_keys, st.tournaments, strict=True):
            new = self.t_refs.get(key)
            if new is None:
                new = self.t_refs[key] = len(self.t_refs)
                # a copy even when its ref stays: `_finish_tournaments` fills in its dates
                self.out.tournaments.append(replace(t, ref=new))
            t_map.append(new)
        p_map: list[int] = []
        for (tref, who), p in zip(st.p_keys, st.players, strict=True):
            key = (t_map[tref], who)
            new = self.p_refs.get(key)
            if new is None:
                new = self.p_refs[key] = len(self.p_refs)
                same = p.ref == new and p.tournament_ref == key[0]
                self._players[new] = p if same else replace(p, ref=new, tournament_ref=key[0])
            elif self._players[new].rating is None and p.rating is not None:
                self._players[new] = replace(self._players[new], rating=p.rating)
            p_map.append(new)
        shift = self.gi_base
        self.out.issues.extend(
            i if not shift or i.game_index is None else replace(i, game_index=i.game_index + shift) for i in st.issues
        )
        for u in st.unplayed:
            opp = p_map[u.opponent_ref] if u.opponent_ref is not None else None
            self.out.unplayed.append(
                replace(u, tournament_ref=t_map[u.tournament_ref], player_ref=p_map[u.player_ref], opponent_ref=opp)
            )
        for ref, dates in st.t_dates.items():
            self.t_dates[t_map[ref]].extend(dates)
        for ref, tcs in st.t_tc.items():
            self.t_tc.setdefault(t_map[ref], set()).update(tcs)
        for ref, rnd in st.t_rounds.items():
            if rnd > self.t_rounds.get(t_map[ref], 0):
                self.t_rounds[t_map[ref]] = rnd
        self._headerless_tokens.extend(st.headerless)
        self._prev_tref = None
        return _remap(st.games, t_map, p_map, shift)

    def _repair(self, tags: dict[str, str], line: int, gi: int) -> None:
        """Undo UTF-8 read as CP1252/Latin-1 in tag values (fault 4: mixed encodings in one file)."""
        for k, v in tags.items():
            if not v.isascii() and _MOJIBAKE.search(v):
                for enc in ("cp1252", "latin-1"):
                    try:
                        fixed = v.encode(enc).decode("utf-8")
                    except UnicodeError:
                        continue
                    tags[k] = fixed
                    self.issue(
                        "mixed_encoding", f"tag {k}: UTF-8 text in a single-byte file repaired", line, gi, "warning", v
                    )
                    break

    def _strip_controls(self, tags: dict[str, str], line: int, gi: int) -> None:
        """Remove ANSI escape sequences and control characters from tag values (a tab becomes a
        space): names, event and site are stored as columns and matched by name key."""
        for k, v in tags.items():
            if CONTROL_RE.search(v):
                tags[k] = strip_controls(v)
                self.issue(
                    "control_chars", f"tag {k}: control characters removed from the value", line, gi, "warning", repr(v)
                )

    def _headerless_has_legal_moves(self) -> bool:
        """A file without any tag (fault 39: HTML, error pages): keep it only if the first moves
        of its first game with moves are legal chess."""
        import chess

        for raw_tokens in self._headerless_tokens[:3]:
            board = chess.Board()
            try:
                for san in raw_tokens[:4]:
                    board.push(board.parse_san(san.decode()))
            except ValueError:
                return False
            return True
        return False

    # -- one game --
    def _game(self, tags: dict[str, str], movetext: bytes, line: int, gi: int, rg: RawGame) -> None:
        flags: list[str] = []
        get = tags.get
        tokens, marker, mprobs, n_bad = skim(movetext) if movetext else ([], None, [], 0)
        for code, sev, msg in mprobs:
            if code in ("unterminated_comment", "unterminated_variation"):
                if self.last_piece and not self.text[rg.mt_end :].strip():
                    flags.append("truncated")
                    msg += " (file truncated)"
            self.issue(code, msg, line, gi, sev)
        if not tags:
            if tokens:
                self._headerless_tokens.append(san_words(movetext))
            flags.append("players_unknown")
            self.issue("no_tags", "movetext without a tag section: players unknown, not rated", line, gi)

        # result
        tag_raw = get("Result")
        result_raw: str | None
        if marker is not None and tag_raw == marker and marker in SCORES:  # the usual case: nothing odd
            result = marker
            wscore, bscore = SCORES[result]
            form = STANDARD_FORMS[result]
            result_raw = tag_raw
        else:
            form, result_raw, wscore, bscore, marker, tokens = self._result(tag_raw, marker, tokens, flags, line, gi)
            result = form.result

        # set-up position and variant
        fen = get("FEN")
        variant = None
        if fen is not None or "Variant" in tags:
            fen, variant = self._setup(tags, fen, flags, line, gi)

        # moves
        ply = len(tokens)
        if (b"--" in movetext or b"Z0" in movetext) and b"--" in tokens:
            flags.append("null_move")
            self.issue("null_move", "null move in the main line", line, gi)
        mhash = _hash_forms(tokens)
        termination = get("Termination")
        term_l = termination.lower() if termination else ""
        played, unplayed_code = self._played(form, result, term_l, ply, n_bad, fen, flags, line, gi)
        if ply:
            self.shows_moves = True
        # players
        white = get("White")
        black = get("Black")
        bye_side = None
        if white is None or black is None or white in ODD_NAMES or black in ODD_NAMES or term_l == "bye":
            white, black, played, unplayed_code, bye_side = self._odd_players(
                tags, white, black, term_l, flags, played, unplayed_code, line, gi
            )

        # tournament
        gdate, prec, edate, eprec, edate_raw = self._game_dates(get, flags, line, gi)
        tref, tc = self._game_tournament(tags, gdate, edate, eprec, edate_raw)

        wref = (
            self._player(tref, "White", white, get("WhiteFideId"), get("WhiteElo"), lambda: tags, line, gi)
            if white
            else None
        )
        bref = (
            self._player(tref, "Black", black, get("BlackFideId"), get("BlackElo"), lambda: tags, line, gi)
            if black
            else None
        )

        round_label = get("Round")
        rnd, board = self._game_round(round_label, get("Board"), tref, line, gi)

        wr = self._elo(get("WhiteElo"), line, gi, "WhiteElo")
        br = self._elo(get("BlackElo"), line, gi, "BlackElo")
        eco = get("ECO")
        if eco is not None and eco in PLACEHOLDERS:
            eco = None

        if ply > PLY_MAX:
            self._too_many_plies(ply, line, gi)
        game = GameRec(
            tournament_ref=tref,
            white_ref=wref,
            black_ref=bref,
            result=result,
            result_raw=result_raw,
            result_marker=marker,
            white_score=wscore,
            black_score=bscore,
            played=played,
            unplayed_code=unplayed_code,
            round=rnd,
            round_label=round_label,
            board=board,
            game_date=gdate,
            date_precision=prec,
            white_rating=wr,
            black_rating=br,
            movetext_hash=mhash,
            ply_count=ply if ply <= PLY_MAX else None,
            eco=eco,
            time_control=tc,
            variant=variant,
            fen=fen,
            termination=termination,
            flags=flags,
            headers=tags,
            line=line,
            game_index=gi,
        )
        self._games.append(game)
        if bye_side and rnd is not None:
            self._bye(tref, wref if bye_side == "w" else bref, rnd, wscore if bye_side == "w" else bscore, line)
        if self.validate and tokens:
            self._validate(movetext, len(tokens), fen, variant == "chess960", line, gi, game, rg)

    def _played(
        self,
        form: ResultForm,
        result: str | None,
        term_l: str,
        ply: int,
        n_bad: int,
        fen: str | None,
        flags: list[str],
        line: int,
        gi: int,
    ) -> tuple[bool, str | None]:
        """(played, unplayed_code) of a game: a forfeit by its result form or its Termination; a
        decisive or drawn game with fewer than two plies is flagged (a moveless one is settled by
        the whole file, `_settle_moveless`)."""
        if form.forfeit or unplayed_termination(term_l):
            flags.append("double_forfeit" if result == "0-0" else "forfeit")
            return False, "forfeit"
        if ply < 2 and result in ("1-0", "0-1", "1/2-1/2") and not fen:
            if ply == 0 and not n_bad:
                flags.append("no_moves")  # played or not: the whole file decides (`_settle_moveless`)
                self.moveless += 1
            elif ply == 0 and result != "1/2-1/2":
                self.issue("movetext_unreadable", "movetext present but no SAN move recognised", line, gi)
            else:
                flags.append("fewer_than_two_plies")
                self.issue("fewer_than_two_plies", f"only {ply} ply played: not rated", line, gi, "info")
        return True, None

    def _game_dates(
        self, get: Callable[[str], str | None], flags: list[str], line: int, gi: int
    ) -> tuple[dt.date | None, str, dt.date | None, str, str | None]:
        """(game date, its precision, event date, its precision, EventDate as written): the Date
        tag, else the EventDate (flag 'date_from_event'); an unreadable one is reported."""
        date_raw = get("Date")
        gdate, prec, gwhy = self._date(date_raw)
        edate_raw = get("EventDate")
        if gdate is None or edate_raw is not None:
            edate, eprec, ewhy = self._date(edate_raw)
            if edate is None and edate_raw is not None and ewhy is not None:
                self.issue(*date_message("EventDate", edate_raw, ewhy), line, gi)
            if gdate is None:
                if date_unreadable(date_raw):
                    self.issue(*date_message("Date", date_raw, gwhy), line, gi)
                if edate is not None:
                    gdate, prec = edate, eprec
                    flags.append("date_from_event")
        else:
            edate, eprec = None, "none"
        return gdate, prec, edate, eprec, edate_raw

    def _game_tournament(
        self, tags: dict[str, str], gdate: dt.date | None, edate: dt.date | None, eprec: str, edate_raw: str | None
    ) -> tuple[int, str | None]:
        """(the game's tournament ref, its TimeControl cleaned): games of one Event, Site,
        EventDate and year share a tournament; the event's dates and time controls grow."""
        get = tags.get
        year = gdate.year if gdate is not None else None
        # a game without an Event tag may continue the event of the game before it (`_tournament`)
        tkey = (get("Event"), get("Site"), edate_raw, year, None if "Event" in tags else self._prev_tref)
        tref = self._t_cache.get(tkey)
        if tref is None:
            tref = self._t_cache[tkey] = self._tournament(tags, gdate, edate, eprec)
        self._prev_tref = tref
        if gdate is not None:
            self.t_dates[tref].append(gdate)
        tc = get("TimeControl")
        if tc is not None:
            tc = clean(tc)
            if tc:
                self.t_tc.setdefault(tref, set()).add(tc)
        return tref, tc

    def _game_round(
        self, round_label: str | None, b_tag: str | None, tref: int, line: int, gi: int
    ) -> tuple[int | None, int | None]:
        """(round, board) from the Round tag ('5', '5.3') and the Board tag, which wins; the
        event's number of rounds grows with the highest round seen."""
        rnd, board = self._round(round_label, line, gi)
        if b_tag is not None and clean(b_tag) is not None:
            board = self._board(b_tag, line, gi)
        if rnd is not None and rnd > self.t_rounds.get(tref, 0):
            self.t_rounds[tref] = rnd
        return rnd, board

    def _bye(self, tref: int, pref: int | None, rnd: int, score: Decimal | None, line: int) -> None:
        """A bye (one player only) as an `UnplayedRec`: TRF code U, H or Z by the score."""
        if pref is not None:
            code = {ONE: "U", HALF: "H", ZERO: "Z"}.get(score, "U") if score is not None else "U"
            self.out.unplayed.append(UnplayedRec(tref, pref, rnd, code, score, None, line))
