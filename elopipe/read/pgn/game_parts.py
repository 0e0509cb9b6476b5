"""The parts of one PGN game the reader turns into records: players and byes, round and board,
result, set-up position, dates, ratings and FIDE IDs, the game's tournament and players, and the
replay of its moves when moves are validated (`validate_moves`).

`GameParts` is the part of the reader (`elopipe.read.pgn.reader._Reader`) that reads these fields;
the state it works on is declared here and set up by the reader.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from elopipe.read.dates import parse_game_date, parse_pgn_date
from elopipe.read.field_bounds import (
    BIRTH_YEAR_MAX,
    BIRTH_YEAR_MIN,
    BOARD_MAX,
    PLY_MAX,
    ROUND_MAX,
)
from elopipe.read.ids import is_placeholder_id, is_too_long_id, too_long_id_message
from elopipe.read.pgn.movetext import san_offsets, san_words
from elopipe.read.pgn.results import (
    SCORES,
    ResultForm,
    normalise_result,
    rate_class,
)
from elopipe.read.pgn.split import (
    RawGame,
)
from elopipe.read.pgn.values import (
    BYE_NAMES,
    PLACEHOLDERS,
    board_rule,
    clean,
    elo_rule,
    fide_id_rule,
    parse_round,
)
from elopipe.read.records import GameRec, IngestIssue, ParsedFile, PlayerRec, TournamentRec
from elopipe.read.trf.codes import TITLES

_FED_AT_END = re.compile(r"\s([A-Z]{3})$")


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


def _title(raw: str | None) -> str | None:
    """A WhiteTitle/BlackTitle as GM IM FM CM WGM WIM WFM WCM where it is one of their forms
    (any case; FIDE's XML two-letter `WG WM WF WC`: trf_codes.TITLES); anything else upper-cased
    as written (`BOT`, `LM`). The one-letter TRF forms (`g`, `m`) are not read as titles here: a
    PGN `M` is as likely a national master."""
    if not raw:
        return None
    upper = raw.upper()
    return TITLES.get(upper, upper) if len(upper) > 1 else upper


def _same_year(a: Any, b: Any) -> bool:
    """Two tournament keys' dates (an EventDate, a year, or None) do not contradict one year."""
    if a is None or b is None:
        return True
    return (a if isinstance(a, int) else a.year) == (b if isinstance(b, int) else b.year)


class GameParts:
    """The fields of a game as records, and the issues they raise (a mixin of the PGN reader)."""

    out: ParsedFile
    text: bytes
    t_refs: dict[tuple[Any, ...], int]
    t_dates: dict[int, list[dt.date]]
    t_tc: dict[int, set[str]]
    t_rounds: dict[int, int]
    p_refs: dict[tuple[Any, ...], int]
    _players: dict[int, PlayerRec]
    _elo_cache: dict[str, int | None]
    _date_cache: dict[str, tuple[dt.date | None, str, str | None]]
    _prev_tref: int | None
    _t_keys: dict[int, tuple[Any, ...]]
    _p_cache: dict[tuple[Any, ...], int]
    _round_cache: dict[str, tuple[int | None, int | None, str | None]]

    def issue(
        self, code: str, msg: str, line: int | None, gi: int | None, sev: str = "warning", raw: str | None = None
    ) -> None:
        self.out.issues.append(IngestIssue(code, msg, line, gi, sev, raw[:500] if raw else None))

    # -- helpers --
    def _odd_players(
        self,
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
        if tags and (term_l == "bye" or (white is None) != (black is None) or white in BYE_NAMES or black in BYE_NAMES):
            if white is None or white in BYE_NAMES:
                bye_side = "b"
            elif black is None or black in BYE_NAMES or term_l == "bye":
                bye_side = "w"
        if tags and white is None and black is None:
            flags.append("players_unknown")
        if bye_side:
            played, unplayed_code = False, "bye"
            flags.append("bye")
            if "forfeit" in flags:
                flags.remove("forfeit")
            self.issue("bye", "bye written as a game: stored as unplayed", line, gi, "info")
        if white in BYE_NAMES:
            white = None
        if black in BYE_NAMES:
            black = None
        return white, black, played, unplayed_code, bye_side

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

    def _result(
        self, tag_raw: str | None, marker: str | None, tokens: list[bytes], flags: list[str], line: int, gi: int
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
                self.issue(
                    "result_conflict",
                    f"Result tag {tag_raw!r} disagrees with movetext marker {marker!r}",
                    line,
                    gi,
                    "error",
                )
            elif marker_form is None and tag_form.result != "*":
                self.issue(
                    "no_result_marker", "movetext has no result marker; result taken from the Result tag", line, gi
                )
        elif marker_form is not None:
            form = marker_form
            result_raw = marker
            self.issue("result_from_marker", "no usable Result tag; result taken from the movetext marker", line, gi)
        else:
            form = STANDARD_FORMS["*"]
            flags.append("result_unknown")
            self.issue("result_missing", "neither a Result tag nor a movetext marker", line, gi, "warning")
        if not form.known:
            flags.append("result_unknown")
            self.issue("result_unknown", f"unknown result notation {result_raw!r}, stored as '*'", line, gi)
        elif not form.standard:
            flags.append("result_nonstandard")
            self.issue("result_nonstandard", f"result {result_raw!r} normalised to {form.result!r}", line, gi)
        if marker_form is not None and not marker_form.standard and tag_form is not None and tag_form.standard:
            self.issue("marker_nonstandard", f"movetext marker {marker!r} is not standard PGN", line, gi, "info")
        wscore, bscore = SCORES[form.result]
        return form, result_raw, wscore, bscore, marker, tokens

    def _setup(
        self, tags: dict[str, str], fen: str | None, flags: list[str], line: int, gi: int
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
                self.issue("chess960_detected", "file-letter castling rights in FEN: Chess960", line, gi, "info")
            if fen != _STANDARD_START:
                flags.append("non_standard_start")
        if variant == "chess960":
            flags.append("chess960")
        elif variant is not None:
            flags.append("variant")
        return fen, variant

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

    def _elo(self, raw: str | None, line: int, gi: int, tag: str, report: bool = True) -> int | None:
        """A WhiteElo/BlackElo value in RATING_MIN..RATING_MAX (field_bounds), else None with a
        'rating_invalid' warning when `report` (the game reports it once; its players do not)."""
        if raw is None:
            return None
        hit = self._elo_cache.get(raw, -1)
        if hit != -1:
            return hit
        val, warns = elo_rule(raw)
        if warns:
            # not cached: every game that writes it reports it
            if report:
                self.issue("rating_invalid", f"{tag} {raw!r} is not a rating: stored as unrated", line, gi)
            return val
        self._elo_cache[raw] = val
        return val

    def _too_many_plies(self, ply: int, line: int, gi: int) -> None:
        self.issue("ply_count_invalid", f"{ply} plies (more than {PLY_MAX}): ply count stored as NULL", line, gi)

    def _board(self, raw: str, line: int, gi: int) -> int | None:
        board, warns = board_rule(raw)
        if warns:
            self.issue("board_invalid", f"Board {raw!r} is not a board number 1..{BOARD_MAX}: stored as NULL", line, gi)
        return board

    def _fide_id(self, raw: str | None, line: int, gi: int, tag: str) -> int | None:
        if raw is None:
            return None
        fid, warns = fide_id_rule(raw)
        if warns and is_placeholder_id(raw):
            why = f"{tag} {raw.strip()} is a placeholder, not a FIDE ID: the player has no FIDE ID"
            self.issue("fide_id_placeholder", why, line, gi, raw=raw)
        elif warns and is_too_long_id(raw):
            self.issue("fide_id_too_long", f"{tag} {too_long_id_message(raw)}", line, gi, raw=raw)
        elif warns:
            self.issue("fide_id_invalid", f"{tag} {raw!r} is not a FIDE ID: ignored", line, gi)
        return fid

    def _tournament(self, tags: dict[str, str], gdate: dt.date | None, edate: dt.date | None, eprec: str) -> int:
        """The ref of the game's tournament, made on first sight. A game without an Event tag at all
        (not `?`: absent), at the site and in the year of the game before it, is of that game's
        event: results exports write the tag on an event's first game only."""
        event = clean(tags.get("Event"))
        site = clean(tags.get("Site"))
        # Site used as a game number ("01", "02": kasparov-deep-blue-1997.pgn) is not a place
        site_key = None if site is not None and site.isdigit() else site
        when: Any = edate if edate is not None else (gdate.year if gdate is not None else None)
        key = (event, site_key, when)
        prev = self._prev_tref
        prev_key = self._t_keys.get(prev) if prev is not None and "Event" not in tags else None
        if prev_key is not None and prev_key[1] == site_key and _same_year(prev_key[2], when):
            return prev  # type: ignore[return-value]
        ref = self.t_refs.get(key)
        if ref is not None:
            return ref
        ref = len(self.t_refs)
        self.t_refs[key] = ref
        self._t_keys[ref] = key
        fed = None
        country = clean(tags.get("EventCountry"))
        if country and len(country) == 3 and country.isalpha():
            fed = country.upper()
        elif site_key:
            m = _FED_AT_END.search(site_key)
            if m and m.group(1) not in ("INT", "UTC"):
                fed = m.group(1)
        etype = clean(tags.get("EventType"))
        if event and "armageddon" in event.lower():
            etype = "armageddon"
        rounds = clean(tags.get("EventRounds"))
        extra: dict[str, Any] = {}
        for k in ("EventType", "EventCategory", "EventRounds", "EventCountry", "Site", "EventDate"):
            if k in tags:
                extra[k] = tags[k]
        t = TournamentRec(
            ref=ref,
            name=event,
            city=site_key,
            federation=fed,
            start_date=edate if edate is not None and eprec == "day" else None,
            rounds=int(rounds)
            if rounds and rounds.isascii() and rounds.isdigit() and 0 < int(rounds) <= ROUND_MAX
            else None,
            tournament_type=etype,
            extra=extra,
        )
        self.out.tournaments.append(t)
        return ref

    def _player(
        self,
        tref: int,
        side: str,
        name: str,
        fid_raw: str | None,
        elo_raw: str | None,
        tags_of: Callable[[], dict[str, str]],
        line: int,
        gi: int,
    ) -> int:
        """The ref of the player `name` (with these FideId and Elo values as written) of tournament
        `tref`: a player met before gets a rating a later game writes if it had none; a new one is
        made from the game's tags (`tags_of()`, built only then)."""
        ckey = (tref, name, fid_raw)
        ref = self._p_cache.get(ckey)
        if ref is not None:
            p = self._players[ref]
            if p.rating is None and elo_raw:
                p.rating = self._elo(elo_raw, line, gi, side + "Elo", report=False)
            if fid_raw is not None and p.fide_id is None and fid_raw.strip() not in PLACEHOLDERS:
                self._fide_id(fid_raw, line, gi, side + "FideId")  # report every invalid FIDE ID
            return ref
        ref = self._p_cache[ckey] = self._new_player(tref, side, name, fid_raw, tags_of(), line, gi)
        return ref

    def _new_player(
        self, tref: int, side: str, name: str, fid_raw: str | None, tags: dict[str, str], line: int, gi: int
    ) -> int:
        name = name.strip()
        fid = self._fide_id(fid_raw, line, gi, side + "FideId")
        key = (tref, fid) if fid is not None else (tref, name)
        ref = self.p_refs.get(key)
        if ref is not None:
            p = self._players[ref]
            if p.rating is None:
                p.rating = self._elo(tags.get(side + "Elo"), line, gi, side + "Elo", report=False)
            return ref
        ref = len(self.p_refs)
        self.p_refs[key] = ref
        title = clean(tags.get(side + "Title"))
        fed = clean(tags.get(side + "Fed") or tags.get(side + "Federation") or tags.get(side + "Country"))
        birth_date, birth_year = None, None
        braw = clean(tags.get(side + "BirthDate") or tags.get(side + "Birthday") or tags.get(side + "BirthYear"))
        if braw:
            d, prec = parse_pgn_date(braw)
            if d is not None and BIRTH_YEAR_MIN <= d.year <= BIRTH_YEAR_MAX:
                birth_year = d.year
                birth_date = d if prec == "day" else None
        sex = clean(tags.get(side + "Sex") or tags.get(side + "Gender"))
        sex = {"m": "m", "f": "w", "w": "w"}.get(sex[0].lower()) if sex else None
        self._players[ref] = PlayerRec(
            ref=ref,
            tournament_ref=tref,
            name=name,
            fide_id=fid,
            federation=fed.upper() if fed and len(fed) == 3 else fed,
            sex=sex,
            birth_date=birth_date,
            birth_year=birth_year,
            title=_title(title),
            rating=self._elo(tags.get(side + "Elo"), line, gi, side + "Elo", report=False)
            if tags.get(side + "Elo")
            else None,
            team=clean(tags.get(side + "Team")),
            line=line,
        )
        return ref

    def _finish_tournaments(self) -> None:
        for t in self.out.tournaments:
            dates = self.t_dates.get(t.ref)
            if dates:
                t.end_date = max(dates)
                if t.start_date is None:
                    t.start_date = min(dates)
            tcs = self.t_tc.get(t.ref)
            if tcs and len(tcs) == 1:
                t.time_control = next(iter(tcs))
            if tcs:
                classes = {rate_class(tc) for tc in tcs}
                if len(classes) == 1:
                    t.rate_class = classes.pop()
            if t.rounds is None and t.ref in self.t_rounds:
                t.rounds = self.t_rounds[t.ref]

    def _validate(
        self,
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
            self.issue("fen_invalid", f"FEN cannot be set up: {exc}", line, gi, "error", fen)
            return
        for ply, san in enumerate(t.decode() for t in tokens):
            ply += 1
            try:
                move = board.parse_san(san)
            except chess.AmbiguousMoveError:
                at = self._move_line(movetext, tokens, ply, line, rg)
                self._bad_move(game, "ambiguous_move", f"ambiguous move {san!r} at ply {ply}", board, at, gi)
                return
            except ValueError:
                at = self._move_line(movetext, tokens, ply, line, rg)
                self._bad_move(game, "illegal_move", f"illegal move {san!r} at ply {ply}", board, at, gi)
                return
            board.push(move)
        if tokens:
            self._check_result(board, game, line, gi)

    def _check_result(self, board: Any, game: GameRec, line: int, gi: int) -> None:
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
                self.issue("result_after_checkmate_unknown", f"{mated} is checkmated but the result is '*'", line, gi)
            elif result in ("1-0", "0-1", "1/2-1/2") and result != ("0-1" if mated == "White" else "1-0"):
                why = f"but the moves end with {mated} checkmated"
        elif decisive and board.is_stalemate():
            why = "after stalemate (a draw)"
        elif decisive and board.is_insufficient_material():
            why = "in a position where neither side can checkmate (a draw)"
        if why is not None:
            msg = f"result {result} {why}; stored as written"
            self.issue("result_contradicts_position", msg, line, gi, "error")
            game.flags.append("result_contradicts_position")  # queryable on the game itself

    def _move_line(self, movetext: bytes, tokens: list[bytes], ply: int, line: int, rg: RawGame) -> int:
        """The file line of the `ply`-th SAN move (1-based) of the game whose first line is `line`;
        `line` itself if the move cannot be placed."""
        placed = san_offsets(movetext)
        if [w for w, _ in placed[: len(tokens)]] != tokens or ply > len(placed):
            return line
        return line + self.text.count(b"\n", rg.header_start, rg.mt_start + placed[ply - 1][1])

    def _bad_move(self, game: GameRec, code: str, msg: str, board: Any, line: int, gi: int) -> None:
        game.flags.append("moves_invalid")
        self.issue(code, f"{msg} (FEN {board.fen()})", line, gi, "error", board.fen())
