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
every real file and on fuzzed games; `read_loop.USE_COLUMNS = False` gives the one-by-one reader).
The loop itself is `read_loop.ReadLoop`; this module holds its entry points. Large files come
back as a `GameTable` (one frame). For speed the text is split in parts, each analysed as soon as
it is split; the whole-text searches for the rare fixes above (U+FEFF, `%` lines,
indented and glued tags) are replaced by a check of the raw games, and only a text that needs one
is prepared again with them.

Results are data (pgn_results): the Result tag and the movetext marker are both normalised;
a disagreement is flagged `result_conflict`; forfeits (`+:-`, `1-0 (forfeit)`, `0-0`, a
Termination that says the game was not played, `pgn_results.unplayed_termination`; a decisive
result with no moves in a file that shows moves, `finish.settle_moveless`) get
`played=False, unplayed_code='forfeit'`; a results export's moveless games are played, moves
unknown (flag 'moves_unknown'); byes (one player empty or '?', or Termination 'bye') get
`unplayed_code='bye'` plus an `UnplayedRec`. Which games the rating leaves out is decided from
the store's columns (played, unplayed_code, scores, ply count, variant), not from flags: see
`elopipe.rating.fide.prepare._unrated_reason`.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Iterable, Sequence

from elopipe.read.execution import Executor, Spread
from elopipe.read.pgn.movetext import HASH_FORM, hash_forms, san_words
from elopipe.read.pgn.pieces import PieceState, merge_piece, piece_state
from elopipe.read.pgn.read_loop import NotUtf8, ReadLoop
from elopipe.read.records import GameTable, IngestIssue, ParsedFile
from elopipe.runtime.errors import first_line

__all__ = ["NotUtf8", "looks_like_pgn", "read_pgn", "movetext_tokens", "movetext_hash"]

# A whole text smaller than this is read one by one: the column path's Polars frames and threads
# cost about 12 ms a file whatever its size (0.07 ms for a one-game file one by one; the two are
# even near 400 KB of games with moves), which a live board's thousand one-game files pay a
# thousand times.
COLUMNS_MIN_BYTES = 256 * 1024


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
        reader = ReadLoop(text, validate_moves, source_name, workers, utf8, columns=size >= COLUMNS_MIN_BYTES,
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
        reader = ReadLoop(None, validate_moves, source_name, workers, executor=executor, spread=spread)
        return reader.run_chunks(chunks, maybe_mojibake)
    except Exception as exc:  # a reader bug: the file is reported, never a crash of the ingest
        return _reader_failed(exc)
    finally:
        if was_enabled:
            gc.enable()


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
        reader = ReadLoop(None, validate_moves, source_name, executor=executor)
        reader.line_base = line_base
        used = reader._read_piece(text, utf8, maybe_mojibake, last)
        return piece_state(reader.b, used)
    except Exception as exc:  # a reader bug: the file is reported (`merge_pieces`), never a crash
        return PieceState(
            0, None, False, [], [], [], [], [], [], {}, {}, {}, {}, [], failure=first_line(exc, "internal error")
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
        reader = ReadLoop(None, False, source_name)
        frames = []
        for st in states:
            frames.append(merge_piece(reader.b, st, reader.gi_base))
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
