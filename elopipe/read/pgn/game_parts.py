"""The parts of one PGN game that the game builder (`elopipe.read.pgn.builder.GameBuilder`) reads
with rules of their own: players and byes, result, set-up position, tag values repaired (mojibake,
control characters), and the replay of its moves when moves are validated (`validate_moves`).

Functions, not state: each reports what it finds through `issue` (`GameBuilder.issue`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from elopipe.read.control_chars import CONTROL_RE, strip_controls
from elopipe.read.pgn.movetext import san_offsets, san_words
from elopipe.read.pgn.results import SCORES, ResultForm, normalise_result
from elopipe.read.pgn.split import RawGame
from elopipe.read.pgn.values import clean, is_bye_name
from elopipe.read.records import GameRec

# issue(code, message, line, game index, severity="warning", raw=None)
Issue = Callable[..., None]

# UTF-8 read as CP1252/Latin-1 (fault 4: one stray byte made the whole file single-byte):
# a lead byte Â-ô followed by what a continuation byte 0x80-0xBF becomes.
_MOJIBAKE = re.compile(
    "[\u00c2-\u00f4][\u0080-\u00bf\u0152\u0153\u0160\u0161\u0178\u017d\u017e\u0192\u02c6\u02dc"
    "\u2013\u2014\u2018-\u201e\u2020-\u2022\u2026\u2030\u2039\u203a\u20ac\u2122]"
)

_STANDARD_START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"


STANDARD_FORMS = {r: ResultForm(r, True) for r in ("1-0", "0-1", "1/2-1/2", "*")}


_RESULT_CACHE: dict[str, ResultForm | None] = {}


def _normalise_cached(raw: str | None) -> ResultForm | None:
    if raw is None:
        return None
    hit = _RESULT_CACHE.get(raw, _RESULT_CACHE)
    if hit is _RESULT_CACHE:
        hit = _RESULT_CACHE[raw] = normalise_result(raw)
    return hit  # type: ignore[return-value]


def odd_players(
    issue: Issue,
    tags: dict[str, str],
    white: str | None,
    black: str | None,
    term_l: str,
    flags: list[str],
    played: bool,
    unplayed_code: str | None,
    line: int,
    gi: int,
) -> tuple[str | None, str | None, bool, str | None, str | None]:
    """Names cleaned of placeholders, byes detected (fault 14), unknown players flagged (37, 40)."""
    white, black = clean(white), clean(black)
    bye_side = None
    if tags and (term_l == "bye" or (white is None) != (black is None) or is_bye_name(white) or is_bye_name(black)):
        if white is None or is_bye_name(white):
            bye_side = "b"
        elif black is None or is_bye_name(black) or term_l == "bye":
            bye_side = "w"
    if tags and white is None and black is None:
        flags.append("players_unknown")
    if bye_side:
        played, unplayed_code = False, "bye"
        flags.append("bye")
        if "forfeit" in flags:
            flags.remove("forfeit")
        issue("bye", "bye written as a game: stored as unplayed", line, gi, "info")
    if is_bye_name(white):
        white = None
    if is_bye_name(black):
        black = None
    return white, black, played, unplayed_code, bye_side


def result_of(
    issue: Issue, tag_raw: str | None, marker: str | None, tokens: list[bytes], flags: list[str], line: int, gi: int
) -> tuple[ResultForm, str | None, Decimal | None, Decimal | None, str | None, list[bytes]]:
    """Result from the Result tag and the movetext marker, with flags and issues (faults 8-12, 41)."""
    tag_form = _normalise_cached(tag_raw)
    if marker == "0-0?":
        if (tag_form is not None and tag_form.result == "0-0") or len(tokens) == 1:
            tokens = tokens[:-1]
            marker = "0-0"
        else:
            marker = None
    marker_form = _normalise_cached(marker)
    result_raw = tag_raw
    if tag_form is not None:
        form = tag_form
        if marker_form is not None and marker_form.result != tag_form.result:
            flags.append("result_conflict")
            issue(
                "result_conflict",
                f"Result tag {tag_raw!r} disagrees with movetext marker {marker!r}",
                line,
                gi,
                "error",
            )
        elif marker_form is None and tag_form.result != "*":
            issue("no_result_marker", "movetext has no result marker; result taken from the Result tag", line, gi)
    elif marker_form is not None:
        form = marker_form
        result_raw = marker
        issue("result_from_marker", "no usable Result tag; result taken from the movetext marker", line, gi)
    else:
        form = STANDARD_FORMS["*"]
        flags.append("result_unknown")
        issue("result_missing", "neither a Result tag nor a movetext marker", line, gi, "warning")
    if not form.known:
        flags.append("result_unknown")
        issue("result_unknown", f"unknown result notation {result_raw!r}, stored as '*'", line, gi)
    elif not form.standard:
        flags.append("result_nonstandard")
        issue("result_nonstandard", f"result {result_raw!r} normalised to {form.result!r}", line, gi)
    if marker_form is not None and not marker_form.standard and tag_form is not None and tag_form.standard:
        issue("marker_nonstandard", f"movetext marker {marker!r} is not standard PGN", line, gi, "info")
    wscore, bscore = SCORES[form.result]
    return form, result_raw, wscore, bscore, marker, tokens


def setup_of(
    issue: Issue, tags: dict[str, str], fen: str | None, flags: list[str], line: int, gi: int
) -> tuple[str | None, str | None]:
    """(FEN, variant) with flags: SetUp/FEN honoured in any spelling, Chess960 detected (faults 20, 21)."""
    fen = clean(fen)
    variant_raw = clean(tags.get("Variant"))
    variant = None
    if variant_raw:
        v = variant_raw.lower()
        if "960" in v or "fischer" in v or "freestyle" in v:
            variant = "chess960"
        elif v not in ("standard", "chess", "normal", "classical", "from position", "fromposition"):
            variant = v
    if fen:
        parts = fen.split()
        castling = parts[2] if len(parts) > 2 else "-"
        if variant is None and castling != "-" and not set(castling) <= set("KQkq"):
            variant = "chess960"
            issue("chess960_detected", "file-letter castling rights in FEN: Chess960", line, gi, "info")
        if fen != _STANDARD_START:
            flags.append("non_standard_start")
    if variant == "chess960":
        flags.append("chess960")
    elif variant is not None:
        flags.append("variant")
    return fen, variant


def repair_mojibake(issue: Issue, tags: dict[str, str], line: int, gi: int) -> None:
    """Undo UTF-8 read as CP1252/Latin-1 in tag values (fault 4: mixed encodings in one file)."""
    for k, v in tags.items():
        if not v.isascii() and _MOJIBAKE.search(v):
            for enc in ("cp1252", "latin-1"):
                try:
                    fixed = v.encode(enc).decode("utf-8")
                except UnicodeError:
                    continue
                tags[k] = fixed
                issue("mixed_encoding", f"tag {k}: UTF-8 text in a single-byte file repaired", line, gi, "warning", v)
                break


def strip_tag_controls(issue: Issue, tags: dict[str, str], line: int, gi: int) -> None:
    """Remove ANSI escape sequences and control characters from tag values (a tab becomes a
    space): names, event and site are stored as columns and matched by name key."""
    for k, v in tags.items():
        if CONTROL_RE.search(v):
            tags[k] = strip_controls(v)
            issue("control_chars", f"tag {k}: control characters removed from the value", line, gi, "warning", repr(v))


def validate(
    issue: Issue,
    text: bytes,
    movetext: bytes,
    n_tokens: int,
    fen: str | None,
    chess960: bool,
    line: int,
    gi: int,
    game: GameRec,
    rg: RawGame,
) -> None:
    """Replay the game's first `n_tokens` SAN moves; an illegal or ambiguous move is an error
    on the game, reported at the line of the move itself."""
    import chess  # only when validating: the import costs ~0.4 s

    tokens = san_words(movetext)[:n_tokens]

    try:
        board = chess.Board(fen, chess960=chess960) if fen else chess.Board(chess960=chess960)
    except ValueError as exc:
        game.flags.append("moves_invalid")
        issue("fen_invalid", f"FEN cannot be set up: {exc}", line, gi, "error", fen)
        return
    for ply, san in enumerate(t.decode() for t in tokens):
        ply += 1
        try:
            move = board.parse_san(san)
        except chess.AmbiguousMoveError:
            at = _move_line(text, movetext, tokens, ply, line, rg)
            _bad_move(issue, game, "ambiguous_move", f"ambiguous move {san!r} at ply {ply}", board, at, gi)
            return
        except ValueError:
            at = _move_line(text, movetext, tokens, ply, line, rg)
            _bad_move(issue, game, "illegal_move", f"illegal move {san!r} at ply {ply}", board, at, gi)
            return
        board.push(move)
    if tokens:
        check_result(issue, board, game, line, gi)


def check_result(issue: Issue, board: Any, game: GameRec, line: int, gi: int) -> None:
    """The stored result against the final position of a replayed game (issue 15, item 2).
    The result is kept as written; a contradiction is an error on the game for the officer:
    checkmate of the side the result declares the winner, or a decisive result after
    stalemate or in a dead position (no side can mate: FIDE Laws of Chess 5.2.1, 5.2.2,
    the game is drawn at once). Checkmate with the result `*` is a warning."""
    import chess

    result = game.result
    decisive = result in ("1-0", "0-1")
    why = None
    if board.is_checkmate():
        mated = "White" if board.turn == chess.WHITE else "Black"
        if result == "*":
            issue("result_after_checkmate_unknown", f"{mated} is checkmated but the result is '*'", line, gi)
        elif result in ("1-0", "0-1", "1/2-1/2") and result != ("0-1" if mated == "White" else "1-0"):
            why = f"but the moves end with {mated} checkmated"
    elif decisive and board.is_stalemate():
        why = "after stalemate (a draw)"
    elif decisive and board.is_insufficient_material():
        why = "in a position where neither side can checkmate (a draw)"
    if why is not None:
        msg = f"result {result} {why}; stored as written"
        issue("result_contradicts_position", msg, line, gi, "error")
        game.flags.append("result_contradicts_position")  # queryable on the game itself


def _move_line(text: bytes, movetext: bytes, tokens: list[bytes], ply: int, line: int, rg: RawGame) -> int:
    """The file line of the `ply`-th SAN move (1-based) of the game whose first line is `line`;
    `line` itself if the move cannot be placed."""
    placed = san_offsets(movetext)
    if [w for w, _ in placed[: len(tokens)]] != tokens or ply > len(placed):
        return line
    return line + text.count(b"\n", rg.header_start, rg.mt_start + placed[ply - 1][1])


def _bad_move(issue: Issue, game: GameRec, code: str, msg: str, board: Any, line: int, gi: int) -> None:
    game.flags.append("moves_invalid")
    issue(code, f"{msg} (FEN {board.fen()})", line, gi, "error", board.fen())
