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
by one by `builder.GameBuilder._game`. Refs (tournaments, players) are assigned in file order for both, so the
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
`elopipe.rating.fide_prepare._unrated_reason`.
"""

from __future__ import annotations

import datetime as dt
import gc
import re
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields, replace
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from elopipe.read.control_chars import has_controls_utf8
from elopipe.read.execution import Executor, Pending, Spread, submit
from elopipe.read.field_bounds import (
    GAMES_PER_PLAYER_PLAUSIBLE,
)
from elopipe.read.pgn import split
from elopipe.read.pgn.builder import GameBuilder
from elopipe.read.pgn.movetext import HASH_FORM, hash_forms, san_words
from elopipe.read.pgn.results import (
    SCORES,
)
from elopipe.read.pgn.split import (
    RawGame,
    split_games,
    split_movetexts,
    split_parts,
)
from elopipe.read.pgn.text_prep import line_at, needs_fixes, prepare, text_columns
from elopipe.read.pgn.values import (
    VALUE_RULES,
)
from elopipe.read.records import GameRec, GameTable, IngestIssue, ParsedFile, PlayerRec, TournamentRec, UnplayedRec
from elopipe.runtime.errors import ElopipeError, first_line

if TYPE_CHECKING:  # Polars is imported where the column path runs: `import elopipe` stays quick
    import polars as pl

__all__ = ["NotUtf8", "looks_like_pgn", "read_pgn", "movetext_tokens", "movetext_hash"]


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
    return hash_forms([HASH_FORM[w] for w in (t.encode() for t in tokens) if w in HASH_FORM])


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

            reader.b.out.games = GameTable(pl.concat(frames, rechunk=False), n_games)
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
    reader = _Reader(None, parent.b.validate, parent.source)
    reader.b.text, reader.ins_lines, reader.b.maybe_mojibake = parent.b.text, parent.ins_lines, parent.b.maybe_mojibake
    reader.b.has_controls, reader.line_base, reader.b.last_piece = (
        parent.b.has_controls,
        parent.line_base,
        parent.b.last_piece,
    )
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


class _Reader:
    """The reading loop of one PGN file (or of one piece of it): prepares the text, splits it in
    games and hands each to its `GameBuilder` (`b`), as python-chess's `read_game` hands a game to
    its visitor; the games the column path vouches for are read as columns."""

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
        self.b = GameBuilder(validate_moves)
        self.executor = executor
        self.spread = spread
        self.source = source_name
        self.workers = workers
        self.ins_lines: list[int] = []
        self.newlines: Pending[Any] | None = None  # `_newline_offsets(text)`, on the executor
        self.known_mojibake: bool | None = None  # given for the whole file (`run_chunks`)
        self.line_base = 0  # lines and game indexes of the pieces read before (`run_chunks`)
        self.gi_base = 0
        # the column path (not when validating moves) checks the raw games for the rare fixes
        self.quick = USE_COLUMNS and columns and not validate_moves
        self._source = (text, utf8)
        self.unchecked_utf8 = text is None  # the bytes were not decoded by the caller
        self.b.text = self._prepare(text, utf8, quick=self.quick) if text is not None or utf8 is not None else b""
        # the column path's refs and its games read one by one (`_implausible_games`)
        self._fast_refs: dict[str, list[int]] | None = None
        self._slow_games: list[GameRec] = []

    def _prepare(self, text: str | None, utf8: bytes | None = None, quick: bool = False) -> bytes:
        """The text as bytes, with the fixes that keep line numbers (elopipe.read.pgn.text_prep);
        sets `maybe_mojibake` and `ins_lines`. `quick`: without the rare fixes (`needs_fixes`
        then looks for them in the raw games and, if needed, `run` prepares the text again)."""
        prep = prepare(text, utf8, quick, self.known_mojibake)
        self.b.maybe_mojibake, self.ins_lines = prep.maybe_mojibake, prep.ins_lines
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
            lagging = self.b.out.games or None
            n_games += len(self.b.out.games)
            self.b.out.games = []
            self.gi_base += used
            self.line_base += utf8.count(b"\n") if text is None else text.count("\n")  # type: ignore[union-attr]
        self.b.text = b""
        self._fast_refs = None  # of the last piece: `_implausible_games` counts the games of all
        if lagging is not None:
            frames.append(games_frame(lagging))
        if frames:
            import polars as pl

            self.b.out.games = GameTable(pl.concat(frames, rechunk=False), n_games)
        return self._finish()

    def _read_piece(self, text: str | None, utf8: bytes | None, maybe_mojibake: bool, last: bool) -> int:
        """Read one piece of a file (see `read_pgn_chunks`) with line numbers from `line_base` and
        game indexes from `gi_base`; returns how many game indexes it used. `last`: the piece
        ends where the file ends."""
        self.b.last_piece = last
        self._source = (text, utf8)
        self.unchecked_utf8 = text is None
        self.ins_lines = []
        self.newlines = None
        self.known_mojibake = maybe_mojibake
        self.b.text = self._prepare(text, utf8, quick=self.quick)
        return self._read_text()

    def _read_text(self) -> int:
        """Read the games of `self.b.text`; returns how many game indexes they used."""
        started = self._start_columns() if self.quick else None
        if not isinstance(started, tuple) and self.unchecked_utf8:
            # Only columns built from every part check the bytes: a part that needs the text fixes
            # stops the building early, and the fixes may drop bytes (a `%` line) that decide it.
            try:
                self._source[1].decode("utf-8")  # type: ignore[union-attr]
            except UnicodeDecodeError:
                raise NotUtf8("the bytes are not UTF-8") from None
        if isinstance(started, str):  # the text needs the fixes the quick preparation left out
            self.b.text = self._prepare(*self._source)
            self.newlines = None  # of the text before the fixes
            raw_games, movetexts = split_movetexts(self.b.text)
            columns = text_columns(raw_games, movetexts)
            started = (raw_games, self._analyse_parts(columns, 0)) if columns is not None else None
        raw_games = split_games(self.b.text) if started is None else started[0]
        self._source = (None, None)
        if started is not None and raw_games:
            # The column path reads few games one by one: it checks each of their tags for control
            # characters rather than scan the whole text for them first.
            self.b.has_controls = True
            return self._run_columns(raw_games, started[1])
        self.b.has_controls = has_controls_utf8(self.b.text)
        chunks = _chunks(len(raw_games), self.workers)
        if len(chunks) > 1:
            return self._run_parallel(raw_games, chunks)
        return self._process(raw_games)

    def _finish(self) -> ParsedFile:
        """The whole-file checks and the tournaments' and players' final form, once every game
        is read."""
        if not self.b.any_tags and not self.b.out.games:
            self.b.out.rejected_reason = "not PGN: no tag pairs and no moves"
        elif not self.b.any_tags and not self.b._headerless_has_legal_moves():
            self.b.out.rejected_reason = "not PGN: no tag pairs and no legal moves"
            self.b.out.games = []
            self.b.refs._players.clear()
            self.b.out.unplayed.clear()
            self.b.out.tournaments.clear()
        if self.b.out.games and not self.b.refs._players and self.b.out.rejected_reason is None:
            self.b.issue(
                "no_players",
                f"{len(self.b.out.games)} game(s) but no White or Black player in the whole file: nothing to rate",
                None,
                None,
                "error",
            )
        self.b.refs._finish_tournaments()
        self._implausible_games()
        self.b.out.results_only = bool(self.b.out.games) and not self.b.shows_moves
        if self.b.moveless:
            self._settle_moveless()
        self.b.out.players = sorted(self.b.refs._players.values(), key=lambda p: p.ref)
        return self.b.out

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

        frame = games_frame(self.b.out.games)
        # a bye (`_odd_players`) is no game whatever the file shows
        moveless = frame.get_column("flags").list.contains("no_moves").fill_null(False) & frame.get_column("played")
        decisive = pl.col("result").is_in(["1-0", "0-1"])
        if self.b.out.results_only:
            self.b.issue(
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
                    self.b.issue("fewer_than_two_plies", "no move shown in a file that shows moves: not rated", line,
                               gi, "info")  # fmt: skip
                else:
                    self.b.issue("forfeit_no_moves", "decisive result with no moves: stored as a forfeit", line, gi,
                               "info")  # fmt: skip
            tag = pl.when(decisive).then(pl.lit("forfeit")).otherwise(pl.lit("fewer_than_two_plies"))
            settled = frame.with_columns(
                pl.when(moveless & decisive).then(False).otherwise(pl.col("played")).alias("played"),
                pl.when(moveless & decisive).then(pl.lit("forfeit")).otherwise(pl.col("unplayed_code"))
                .alias("unplayed_code"),
                pl.when(moveless).then(pl.concat_list(tag, pl.lit("no_moves"))).otherwise(pl.col("flags"))
                .alias("flags"),
            )  # fmt: skip
        self.b.out.games = GameTable(settled, settled.height)

    def _implausible_games(self) -> None:
        """Warn (games kept) about a player with more games in one event than any real event
        gives (`field_bounds.GAMES_PER_PLAYER_PLAUSIBLE`), at the first game beyond it."""
        fast = self._fast_refs
        slow: list[GameRec] = self._slow_games if fast is not None else self.b.out.games  # type: ignore[assignment]
        frame = None
        if isinstance(self.b.out.games, GameTable) and fast is None:  # read in pieces: every piece's games
            frame = self.b.out.games.frame
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
            player = self.b.refs._players[ref]
            event = next((t.name for t in self.b.out.tournaments if t.ref == player.tournament_ref), None)
            self.b.issue(
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
        text = self.b.text
        last_pos = raw_games[0].header_start if raw_games else 0
        # newlines before a position in the "\n"-prefixed text = its 1-based line
        line = text.count(b"\n", 0, last_pos)
        gi = start = self.gi_base
        for rg in raw_games:
            line += text.count(b"\n", last_pos, rg.header_start)
            last_pos = rg.header_start
            gi += self.b._raw_game(rg, self._line_at(line) + self.line_base, gi)
        return gi - start

    # -- column-wise reading (elopipe.read.pgn.columns) --
    def _start_columns(self) -> tuple[list[RawGame], list[tuple[int, int, Pending[Any]]]] | str:
        """Split the text in parts and have each part analysed (`pgn_columns.analyse`, in a
        background thread) as soon as it is split: the raw games and the analysis jobs
        (first game, end, future). 'fixes' when a part holds what the quick preparation left out,
        'not utf-8' when its bytes are not UTF-8 (nothing is read then)."""
        # numpy works without the GIL: the newline offsets (for line numbers) are found while the
        # text is split
        self.newlines = submit(self.executor, _newline_offsets, self.b.text)
        raw_games: list[RawGame] = []
        jobs: list[tuple[int, int, Pending[Any]]] = []
        for part_raw, part_movetexts in split_parts(self.b.text, None):
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
        analyse = partial(pgn_columns.analyse, ascii_headers=self.b.maybe_mojibake, executor=self.executor)
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
        self._fast_refs, self._slow_games = refs, self.b._games
        gi = self.gi_base
        for a, b, job in jobs:
            res = job.result()
            if res is None:
                for rg, ln in zip(raw_games[a:b], lines[a:b], strict=True):
                    gi += self.b._raw_game(rg, ln, gi)
                continue
            gi, fast = self._columns_chunk(res, raw_games[a:b], lines[a:b], gi, refs)
            if fast is not None:
                fast_parts.append((fast, res))
        if fast_parts:
            self.b.any_tags = True
            slow = self.b._games

            def frame() -> pl.DataFrame:  # the hashes may still be computed in the background
                parts = [f.join(r.hashes(), on="g", how="left", maintain_order="left") for f, r in fast_parts]
                return _fast_frame(pl.concat(parts), refs, slow)

            self.b.out.games = GameTable(frame, len(refs["game_index"]) + len(slow))
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
            nxt = chunk_refs.assign(self.b.refs, self.b._raw_game, res, fast, raw_games, lines, gi, refs)
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
        t_cache, t_dates, t_tc, t_rounds = (
            self.b.refs._t_cache,
            self.b.refs.t_dates,
            self.b.refs.t_tc,
            self.b.refs.t_rounds,
        )
        p_cache, players, player = self.b.refs._p_cache, self.b.refs._players, self.b.refs._player

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
                gi += self.b._raw_game(rg, ln, gi)
                continue
            g, event, site, edate_raw, year, white, black, wfid, bfid, welo, belo, gdate, edate, eprec, tc, rnd = next(
                rows
            )
            tkey = (event, site, edate_raw, year, None if event is not None else self.b.refs._prev_tref)
            tref = t_cache.get(tkey)
            if tref is None:
                tref = t_cache[tkey] = self.b.refs._tournament(tags_of(g), gdate, edate, eprec)
            self.b.refs._prev_tref = tref
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
        self.b.shows_moves = self.b.shows_moves or bool(fast.get_column("two_moves").any())
        return gi, fast

    def _start_lines(self, raw_games: list[RawGame]) -> list[int]:
        """The line (1-based, in the caller's text) where each raw game starts."""
        newlines = self.newlines.result() if self.newlines is not None else _newline_offsets(self.b.text)
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
            self.b.any_tags,
            self.b.out.games,
            self.b.out.issues,
            self.b.out.unplayed,
            self.b.out.tournaments,
            self.b.refs.t_refs,
            self.b.refs._players,
            self.b.refs.p_refs,
            dict(self.b.refs.t_dates),
            self.b.refs.t_tc,
            self.b.refs.t_rounds,
            self.b._headerless_tokens,
            self.b.moveless,
            self.b.shows_moves,
        )

    def _merge(self, res: tuple[Any, ...], gi_shift: int) -> int:
        used: int
        used, any_tags, cols, issues, unplayed, tournaments, t_refs, players, p_refs, t_dates, t_tc, t_rounds = res[:12]
        hl, moveless, shows_moves = res[12:]
        games = _unpack_games(cols)
        self.b.any_tags = self.b.any_tags or any_tags
        self.b.moveless += moveless
        self.b.shows_moves = self.b.shows_moves or shows_moves
        t_map: dict[int, int] = {}
        for key, ref in t_refs.items():
            new = self.b.refs.t_refs.get(key)
            if new is None:
                new = self.b.refs.t_refs[key] = len(self.b.refs.t_refs)
                t = tournaments[ref]
                t.ref = new
                self.b.out.tournaments.append(t)
            t_map[ref] = new
        p_map: dict[int, int] = {}
        for (tref, who), ref in p_refs.items():
            key = (t_map[tref], who)
            new = self.b.refs.p_refs.get(key)
            p = players[ref]
            if new is None:
                new = self.b.refs.p_refs[key] = len(self.b.refs.p_refs)
                p.ref, p.tournament_ref = new, key[0]
                self.b.refs._players[new] = p
            elif self.b.refs._players[new].rating is None and p.rating is not None:
                self.b.refs._players[new].rating = p.rating
            p_map[ref] = new
        for g in games:
            g.tournament_ref = t_map[g.tournament_ref]
            if g.white_ref is not None:
                g.white_ref = p_map[g.white_ref]
            if g.black_ref is not None:
                g.black_ref = p_map[g.black_ref]
            assert g.game_index is not None  # the reader numbers every game it reads
            g.game_index += gi_shift
        self.b._games.extend(games)
        for u in unplayed:
            u.tournament_ref = t_map[u.tournament_ref]
            u.player_ref = p_map[u.player_ref]
            if u.opponent_ref is not None:
                u.opponent_ref = p_map[u.opponent_ref]
        self.b.out.unplayed.extend(unplayed)
        for i in issues:
            if i.game_index is not None:
                i.game_index += gi_shift
        self.b.out.issues.extend(issues)
        for ref, dates in t_dates.items():
            self.b.refs.t_dates[t_map[ref]].extend(dates)
        for ref, tcs in t_tc.items():
            self.b.refs.t_tc.setdefault(t_map[ref], set()).update(tcs)
        for ref, rnd in t_rounds.items():
            if rnd > self.b.refs.t_rounds.get(t_map[ref], 0):
                self.b.refs.t_rounds[t_map[ref]] = rnd
        self.b._headerless_tokens.extend(hl)
        self.b.refs._prev_tref = None  # the chunk's last game is not this reader's: no event to continue
        return used

    def _piece_state(self, used: int) -> PieceState:
        """This reader's state once it read one piece (`read_pgn_piece`)."""
        from elopipe.read.game_frame import games_frame

        return PieceState(
            used=used,
            games=games_frame(self.b.out.games),
            any_tags=self.b.any_tags,
            issues=self.b.out.issues,
            unplayed=self.b.out.unplayed,
            tournaments=self.b.out.tournaments,
            t_keys=list(self.b.refs.t_refs),
            players=[self.b.refs._players[ref] for ref in range(len(self.b.refs.p_refs))],
            p_keys=list(self.b.refs.p_refs),
            # all that `_finish_tournaments` takes of the dates: not one date per game
            t_dates={ref: [min(ds), max(ds)] for ref, ds in self.b.refs.t_dates.items() if ds},
            t_tc=self.b.refs.t_tc,
            t_rounds=self.b.refs.t_rounds,
            headerless=self.b._headerless_tokens[:3],  # `_headerless_has_legal_moves` looks at no more
            moveless=self.b.moveless,
            shows_moves=self.b.shows_moves,
        )

    def _merge_piece(self, st: PieceState) -> Any:
        """Add the state of the next piece (`read_pgn_piece`; game indexes start at `gi_base`) as if
        this reader had read it: tournaments and players first met there get the next refs, a player
        met before gets the rating the piece found if it had none (as `_player` does). Returns the
        piece's games frame remapped. The piece's objects are copied where changed, never changed."""
        self.b.any_tags = self.b.any_tags or st.any_tags
        self.b.moveless += st.moveless
        self.b.shows_moves = self.b.shows_moves or st.shows_moves
        t_map: list[int] = []
        for key, t in zip(st.t_keys, st.tournaments, strict=True):
            new = self.b.refs.t_refs.get(key)
            if new is None:
                new = self.b.refs.t_refs[key] = len(self.b.refs.t_refs)
                # a copy even when its ref stays: `_finish_tournaments` fills in its dates
                self.b.out.tournaments.append(replace(t, ref=new))
            t_map.append(new)
        p_map: list[int] = []
        for (tref, who), p in zip(st.p_keys, st.players, strict=True):
            key = (t_map[tref], who)
            new = self.b.refs.p_refs.get(key)
            if new is None:
                new = self.b.refs.p_refs[key] = len(self.b.refs.p_refs)
                same = p.ref == new and p.tournament_ref == key[0]
                self.b.refs._players[new] = p if same else replace(p, ref=new, tournament_ref=key[0])
            elif self.b.refs._players[new].rating is None and p.rating is not None:
                self.b.refs._players[new] = replace(self.b.refs._players[new], rating=p.rating)
            p_map.append(new)
        shift = self.gi_base
        self.b.out.issues.extend(
            i if not shift or i.game_index is None else replace(i, game_index=i.game_index + shift) for i in st.issues
        )
        for u in st.unplayed:
            opp = p_map[u.opponent_ref] if u.opponent_ref is not None else None
            self.b.out.unplayed.append(
                replace(u, tournament_ref=t_map[u.tournament_ref], player_ref=p_map[u.player_ref], opponent_ref=opp)
            )
        for ref, dates in st.t_dates.items():
            self.b.refs.t_dates[t_map[ref]].extend(dates)
        for ref, tcs in st.t_tc.items():
            self.b.refs.t_tc.setdefault(t_map[ref], set()).update(tcs)
        for ref, rnd in st.t_rounds.items():
            if rnd > self.b.refs.t_rounds.get(t_map[ref], 0):
                self.b.refs.t_rounds[t_map[ref]] = rnd
        self.b._headerless_tokens.extend(st.headerless)
        self.b.refs._prev_tref = None
        return _remap(st.games, t_map, p_map, shift)
