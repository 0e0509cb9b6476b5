"""One large PGN file read as pieces on many workers, merged into one result (issue 14).

`streaming` reads a large file in pieces one after the other with one reader. Here the pieces are
independent, so that workers (other processes, other machines that see the same path) may read
them in any order:

1. `plan_pieces` (where the file is): one scan of the file (`streaming.scan`: sha256, encoding,
   line ends, the mojibake hint) that also finds where to cut it, at game starts;
2. `parse_piece` (on a worker): reads its byte range, decodes it as the whole file would be, and
   reads it with a reader of its own (`pgn_reader.read_pgn_piece`);
3. `assemble` (in the writer): merges the pieces in file order (`pgn_reader.merge_pieces`) into
   the `ParsedSource` that `ingest.parse_source` gives for the file.

tests/ingest/test_pgn_pieces.py compares the result with `parse_source` of the whole file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from elopipe.ingest.execution import threads
from elopipe.read.parse import ParsedSource, too_many_controls, unreadable
from elopipe.read.pgn import streaming
from elopipe.read.pgn.pieces import PieceState
from elopipe.read.pgn.reader import merge_pieces, read_pgn_piece
from elopipe.read.records import GameTable
from elopipe.read.sources import Source

__all__ = ["Piece", "PiecePlan", "PgnPiece", "assemble", "parse_piece", "plan_pieces"]


@dataclass(frozen=True)
class Piece:
    """One piece of a file: bytes [start, end) of its decompressed stream."""

    index: int  # 0-based
    start: int  # byte offset in the decompressed stream (inclusive)
    end: int  # byte offset (exclusive)
    line_base: int  # newlines in the stream before `start`
    last: bool


@dataclass(frozen=True)
class PiecePlan:
    """How a file is read in pieces: picklable and small (no bytes of the file)."""

    source: Source
    scan: streaming.Scan
    pieces: tuple[Piece, ...]


@dataclass
class PgnPiece:
    """One piece as a worker read it (`parse_piece`): picklable. `state` is None, and `error` says
    why, when the piece could not be read (the file changed since the plan, an I/O error)."""

    index: int
    start: int
    end: int
    validate_moves: bool
    state: PieceState | None
    error: str | None = None

    @property
    def n_games(self) -> int:
        """Game indexes the piece used (0 when it could not be read)."""
        return self.state.used if self.state is not None else 0


def plan_pieces(source: Source, chunk_bytes: int) -> PiecePlan | None:
    """Scan `source` once (`streaming.scan`) and cut it where a game starts into pieces of about
    `chunk_bytes` (decompressed bytes; a piece grows until a game starts). None when the source
    is not to be split: not a .pgn suffix, no more than one piece, an encoding pieces cannot be
    read in (`streaming.Scan.encoding` None: UTF-16/32, lone CR), NUL bytes, empty or binary, or
    any error reading it (over the size cap, changed while read, ...): `ingest.parse_source` of
    the whole file then records those as usual. Never raises on the file's content or I/O."""
    if source.suffix != ".pgn":
        return None
    try:
        sc = streaming.scan(source, cut_bytes=chunk_bytes, executor=threads())
    except Exception:  # noqa: BLE001 - the whole read reports it
        return None
    if not sc.cuts or sc.blank or sc.n_nul or sc.encoding is None or too_many_controls(sc.n_control, sc.size):
        return None
    starts = [(0, 0), *sc.cuts]
    ends = [offset for offset, _ in sc.cuts] + [sc.size]
    pieces = tuple(
        Piece(k, start, end, lines, k == len(starts) - 1)
        for k, ((start, lines), end) in enumerate(zip(starts, ends, strict=True))
    )
    return PiecePlan(source, replace(sc, cuts=[]), pieces)


def parse_piece(plan: PiecePlan, index: int, validate_moves: bool = False) -> PgnPiece:
    """Read piece `index` of `plan` on its own (on a worker that sees `plan.source.path`): its
    bytes (`streaming.read_range`), decoded as the whole file would be (`streaming._decode`:
    the scan's encoding, a BOM only in piece 0, CRLF as LF), read with a reader of its own (line
    numbers from the piece's `line_base`, game indexes from 0, the whole file's mojibake hint).
    An error reading the bytes (the file changed since the plan: size or mtime differ, an
    OSError, ...) is returned in `error`, never raised; so is a reader bug (in `state`). Raises
    IndexError only for an `index` not in the plan."""
    if not 0 <= index < len(plan.pieces):
        raise IndexError(f"piece {index} of a plan of {len(plan.pieces)}")
    piece, sc = plan.pieces[index], plan.scan
    out = PgnPiece(index, piece.start, piece.end, validate_moves, None)
    try:
        raw = streaming.read_range(plan.source, piece.start, piece.end, sc.stat)
        text, utf8 = streaming._decode(raw, sc.encoding, sc, first=index == 0)
    except Exception as exc:  # noqa: BLE001 - reported by `assemble` as a file that cannot be read
        out.error = str(exc)
        return out
    del raw
    out.state = read_pgn_piece(
        text,
        utf8,
        maybe_mojibake=sc.hint,
        line_base=piece.line_base,
        last=piece.last,
        validate_moves=validate_moves,
        source_name=plan.source.display,
        executor=threads(),
    )
    return out


def assemble(plan: PiecePlan, parts: Sequence[PgnPiece]) -> ParsedSource:
    """The `ParsedSource` that `ingest.parse_source(plan.source)` gives, from every piece of the
    plan (`parse_piece`), given in piece order: refs numbered as one reader numbers them, game
    indexes of the whole file, the whole-file checks, sha256/size/encoding/newline of the scan.
    A piece that could not be read gives the rejected result ("cannot read file: ...") of a file
    that cannot be read. Raises ValueError when `parts` are not the plan's pieces in order, or
    were read with different `validate_moves`."""
    if len(parts) != len(plan.pieces):
        raise ValueError(f"{len(parts)} parts for a plan of {len(plan.pieces)} pieces")
    for piece, part in zip(plan.pieces, parts, strict=True):
        if (part.index, part.start, part.end) != (piece.index, piece.start, piece.end):
            raise ValueError(f"part {part.index} [{part.start}, {part.end}) is not piece {piece.index} of the plan")
    if len({p.validate_moves for p in parts}) > 1:
        raise ValueError("parts read with and without validate_moves")
    source, sc = plan.source, plan.scan
    error = next((p.error for p in parts if p.error is not None), None)
    if error is not None:
        return unreadable(source, error)
    parsed = merge_pieces([p.state for p in parts], source_name=source.display)  # type: ignore[misc]
    if not isinstance(parsed.games, GameTable):  # as `ingest` gives a whole file's games
        from elopipe.read.game_frame import records_frame

        parsed.games = GameTable(records_frame(list(parsed.games)), len(parsed.games))
    # a plan is never made of a file with NUL bytes: the size read is the file's
    return ParsedSource(source, sc.sha256, sc.size, "pgn", sc.encoding, sc.newline, parsed, parsed.rejected_reason)
