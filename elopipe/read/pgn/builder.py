"""One PGN game into records (`GameBuilder`): what the reading loop
(`elopipe.read.pgn.reader`) hands over game by game, as python-chess's `read_game` hands its
moves and tags to a visitor.

The builder owns what the records of one file share: the `ParsedFile` it fills (games, issues,
unplayed rounds, tournaments), the tournaments' and players' refs (`FileRefs`), the caches of
tag values, and what the whole-file checks need (any tag, moveless games, games that show moves,
the first moves of games without tags). The reader owns the text and how it is walked: it sets
`text`, `maybe_mojibake`, `has_controls` and `last_piece` for the text it is reading.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from decimal import Decimal

from elopipe.read.dates import parse_game_date
from elopipe.read.field_bounds import BOARD_MAX, PLY_MAX
from elopipe.read.pgn.file_refs import FileRefs
from elopipe.read.pgn.game_parts import (
    STANDARD_FORMS,
    odd_players,
    repair_mojibake,
    result_of,
    setup_of,
    strip_tag_controls,
    validate,
)
from elopipe.read.pgn.movetext import hash_forms, san_words, skim
from elopipe.read.pgn.results import HALF, ONE, SCORES, ZERO, ResultForm, unplayed_termination
from elopipe.read.pgn.split import RawGame
from elopipe.read.pgn.tags import parse_header
from elopipe.read.pgn.values import (
    PLACEHOLDERS,
    board_rule,
    clean,
    date_message,
    date_unreadable,
    is_odd_name,
    parse_round,
)
from elopipe.read.records import GameRec, IngestIssue, ParsedFile, UnplayedRec


class GameBuilder:
    """Records of the games of one file, one game at a time (`_raw_game`)."""

    def __init__(self, validate_moves: bool) -> None:
        self.validate = validate_moves
        self.out = ParsedFile(format="pgn")
        self.refs = FileRefs(self.out)
        # the text being read and what the reader found in it (`elopipe.read.pgn.reader`)
        self.text = b""
        self.maybe_mojibake = False
        self.has_controls = False
        self.last_piece = True  # the text ends where the file ends
        self.any_tags = False
        self._headerless_tokens: list[list[bytes]] = []
        # moveless games (flag 'no_moves', settled by `finish.settle_moveless`) and whether any game shows a move
        self.moveless = 0
        self.shows_moves = False
        self._date_cache: dict[str, tuple[dt.date | None, str, str | None]] = {}
        self._round_cache: dict[str, tuple[int | None, int | None, str | None]] = {}

    @property
    def _games(self) -> list[GameRec]:
        """The games read so far: `out.games` is a list while the reader reads (a `GameTable` only
        once it is done, `_finish` and `run_chunks`)."""
        games = self.out.games
        assert isinstance(games, list)
        return games

    def issue(
        self, code: str, msg: str, line: int | None, gi: int | None, sev: str = "warning", raw: str | None = None
    ) -> None:
        self.out.issues.append(IngestIssue(code, msg, line, gi, sev, raw[:500] if raw else None))

    # -- helpers --

    def _round(self, label: str | None, line: int, gi: int) -> tuple[int | None, int | None]:
        """(round, board) from a Round label such as '3' or '3.12'; a label that is not a number,
        or a number outside 1..ROUND_MAX / 1..BOARD_MAX (field_bounds), gives NULL and a warning."""
        if label is None:
            return None, None
        hit = self._round_cache.get(label)
        if hit is None:
            hit = self._round_cache[label] = parse_round(label)
        if hit[2] is not None:
            self.issue("round_invalid", hit[2], line, gi, "warning", label)
        return hit[0], hit[1]

    def _date(self, raw: str | None) -> tuple[dt.date | None, str, str | None]:
        """(date, precision, why it was refused) of a Date/EventDate value (`parse_game_date`),
        parsed once per distinct value."""
        if not raw:
            return None, "none", None
        hit = self._date_cache.get(raw)
        if hit is None:
            hit = parse_game_date(raw.strip())
            self._date_cache[raw] = hit
        return hit

    def _too_many_plies(self, ply: int, line: int, gi: int) -> None:
        self.issue("ply_count_invalid", f"{ply} plies (more than {PLY_MAX}): ply count stored as NULL", line, gi)

    def _board(self, raw: str, line: int, gi: int) -> int | None:
        board, warns = board_rule(raw)
        if warns:
            self.issue("board_invalid", f"Board {raw!r} is not a board number 1..{BOARD_MAX}: stored as NULL", line, gi)
        return board

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
                    repair_mojibake(self.issue, tags, start_line + offset, gi + idx)
                if self.has_controls or b"\t" in rg.header:
                    strip_tag_controls(self.issue, tags, start_line + offset, gi + idx)
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
            form, result_raw, wscore, bscore, marker, tokens = result_of(
                self.issue, tag_raw, marker, tokens, flags, line, gi
            )
            result = form.result

        # set-up position and variant
        fen = get("FEN")
        variant = None
        if fen is not None or "Variant" in tags:
            fen, variant = setup_of(self.issue, tags, fen, flags, line, gi)

        # moves
        ply = len(tokens)
        if (b"--" in movetext or b"Z0" in movetext) and b"--" in tokens:
            flags.append("null_move")
            self.issue("null_move", "null move in the main line", line, gi)
        mhash = hash_forms(tokens)
        termination = get("Termination")
        term_l = termination.lower() if termination else ""
        played, unplayed_code = self._played(form, result, term_l, ply, n_bad, fen, flags, line, gi)
        if ply:
            self.shows_moves = True
        # players
        white = get("White")
        black = get("Black")
        bye_side = None
        if white is None or black is None or is_odd_name(white) or is_odd_name(black) or term_l == "bye":
            white, black, played, unplayed_code, bye_side = odd_players(
                self.issue, tags, white, black, term_l, flags, played, unplayed_code, line, gi
            )

        # tournament
        gdate, prec, edate, eprec, edate_raw = self._game_dates(get, flags, line, gi)
        tref, tc = self.refs._game_tournament(tags, gdate, prec, edate, eprec, edate_raw)

        wref = (
            self.refs._player(tref, "White", white, get("WhiteFideId"), get("WhiteElo"), lambda: tags, line, gi)
            if white
            else None
        )
        bref = (
            self.refs._player(tref, "Black", black, get("BlackFideId"), get("BlackElo"), lambda: tags, line, gi)
            if black
            else None
        )

        round_label = get("Round")
        rnd, board = self._game_round(round_label, get("Board"), tref, line, gi)

        wr = self.refs._elo(get("WhiteElo"), line, gi, "WhiteElo")
        br = self.refs._elo(get("BlackElo"), line, gi, "BlackElo")
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
            validate(self.issue, self.text, movetext, len(tokens), fen, variant == "chess960", line, gi, game, rg)

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
        the whole file, `finish.settle_moveless`)."""
        if form.forfeit or unplayed_termination(term_l):
            flags.append("double_forfeit" if result == "0-0" else "forfeit")
            return False, "forfeit"
        if ply < 2 and result in ("1-0", "0-1", "1/2-1/2") and not fen:
            if ply == 0 and not n_bad:
                flags.append("no_moves")  # played or not: the whole file decides (`finish.settle_moveless`)
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

    def _game_round(
        self, round_label: str | None, b_tag: str | None, tref: int, line: int, gi: int
    ) -> tuple[int | None, int | None]:
        """(round, board) from the Round tag ('5', '5.3') and the Board tag, which wins; the
        event's number of rounds grows with the highest round seen."""
        rnd, board = self._round(round_label, line, gi)
        if b_tag is not None and clean(b_tag) is not None:
            board = self._board(b_tag, line, gi)
        if rnd is not None and rnd > self.refs.t_rounds.get(tref, 0):
            self.refs.t_rounds[tref] = rnd
        return rnd, board

    def _bye(self, tref: int, pref: int | None, rnd: int, score: Decimal | None, line: int) -> None:
        """A bye (one player only) as an `UnplayedRec`: TRF code U, H or Z by the score."""
        if pref is not None:
            code = {ONE: "U", HALF: "H", ZERO: "Z"}.get(score, "U") if score is not None else "U"
            self.out.unplayed.append(UnplayedRec(tref, pref, rnd, code, score, None, line))
