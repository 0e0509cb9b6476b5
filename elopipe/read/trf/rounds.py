"""TRF round blocks -> games and unplayed rounds (trf-format.md §5 and §8).

A game written on both players' `001` rows becomes ONE `GameRec`. Only a pairing whose two
blocks agree (opponents name each other, colours `w`/`b`, mirrored results among `1 = 0`)
is stored with `played=True`: the games FIDE rates (C.04 Annex 2, TRF16 result codes).
Forfeits (`+`/`-`), unrated results (`W`/`D`/`L`), scheduled rounds (opponent and colour,
blank result) and pairings whose sides disagree get a `GameRec` with `played=False` and
`unplayed_code` (the code on White's row) AND one `UnplayedRec` per side; byes and absences
(`H F U Z`, blank) are `UnplayedRec`s only. Every block of every row thus lands in exactly
one place: a played game, or an unplayed round. Scores are Decimal on the 1/½/0 scale.

The blocks are read per row by `elopipe.read.trf.blocks`; the checks of the paired rounds against
240 records, declared points and the one-PAB rule are in `elopipe.read.trf.round_checks`.
"""

from __future__ import annotations

import datetime as dt
import functools
from decimal import Decimal

from elopipe.read.records import TournamentRec, UnplayedRec
from elopipe.read.trf import game_rows as G
from elopipe.read.trf.blocks import Block, TrfRow
from elopipe.read.trf.codes import (
    CODE_SCORE,
    FORFEIT_CODES,
    MIRROR,
    NO_OPPONENT_CODE,
    NO_OPPONENT_EXPECTED,
    RATED_CODES,
    UNRATED_GAME_CODES,
    result_from_scores,
)
from elopipe.read.trf.fields import TOURNAMENT_REF, decimal_or_none
from elopipe.read.trf.issues import IssueLog, shown
from elopipe.read.trf.round_checks import check_240, check_one_pab_per_round, check_points


class RoundResolver:
    """Pairs the round blocks of all rows of one file (see the module docstring)."""

    def __init__(
        self,
        rows: dict[int, TrfRow],
        tour: TournamentRec,
        issues: IssueLog,
        round_dates: dict[int, dt.date],
        rounds_in_blocks: int,
        byes_240: list[tuple[int, str]],
    ) -> None:
        self.rows = rows
        self.tour = tour
        self.issues = issues
        self.round_dates = round_dates
        self.rounds_in_blocks = rounds_in_blocks
        self.byes_240 = byes_240
        self.is_team = tour.is_team
        self.pab_score = _pab_score(tour.extra.get("scoring", {}))
        # round -> (date, precision, label) of its games
        self._dates: dict[int, tuple[dt.date | None, str, str]] = {}
        # start rank -> the rating its row writes (a game's two ratings: looked up once a game)
        self._ratings: dict[int | None, int | None] = {rank: row.player.rating for rank, row in rows.items()}

    def bye_score(self, code: str) -> Decimal | None:
        """Value of a bye code on the 1/½/0 scale; 'U' follows 162 P / XXS PAB when they say otherwise (§5)."""
        if code == "U" and self.pab_score is not None:
            return self.pab_score
        return CODE_SCORE.get(code)

    def resolve(self) -> tuple[list[list[object]], list[UnplayedRec]]:
        """Games (rows of `game_rows.COLUMNS`, in round and board order) and unplayed rounds of the
        whole file, checked against 240 records and declared points."""
        games, unplayed = self._pairings()
        if not self.is_team:  # in team files the 240 numbers are team pairing numbers; kept raw in extra
            check_240(unplayed, self.byes_240, self.rows, self.issues, self.bye_score)
        check_points(unplayed, games, self.rows, self.tour, self.issues)
        if not self.is_team:  # team files give one PAB per board
            check_one_pab_per_round(unplayed, self.rows, self.issues)
        return games, unplayed

    def _pairings(self) -> tuple[list[list[object]], list[UnplayedRec]]:
        n_rounds = self.rounds_in_blocks
        unplayed: list[UnplayedRec] = []
        # per round, {rank: block with an opponent}, ranks in increasing order (rows are read so)
        sides: list[dict[int, Block]] = [{} for _ in range(n_rounds + 1)]
        rows = self.rows
        for rank in sorted(rows):
            row = rows[rank]
            # a row's blocks are rounds 1, 2, ... in order (`parse_blocks`); past its last, none
            for b in row.blocks[:n_rounds]:
                opp = b.opponent
                if opp is not None and opp != rank and b.code not in _NOT_PAIRED and opp in rows:
                    sides[b.round][rank] = b  # most blocks: a pairing, as the checks below find it
                    continue
                r = b.round
                if b.empty:
                    # a round the player was not in (§5: positional; blank = not paired)
                    unplayed.append(UnplayedRec(TOURNAMENT_REF, rank, r, " ", None, None, row.line))
                    continue
                if b.code == "?":
                    unplayed.append(UnplayedRec(TOURNAMENT_REF, rank, r, "?", None, None, b.line))
                    continue
                if b.opponent is None:
                    unplayed.append(self._no_opponent(b))
                    continue
                if b.opponent == rank:
                    self.issues.add(
                        "trf_self_pairing", f"round {r}: player {rank} paired with himself", b.line, "error", row.raw
                    )
                    unplayed.append(UnplayedRec(TOURNAMENT_REF, rank, r, b.code, CODE_SCORE.get(b.code), None, b.line))
                    continue
                if b.opponent not in self.rows:
                    self.issues.add(
                        "trf_unknown_opponent",
                        f"round {r}: opponent {b.opponent} of player {rank} has no 001 row",
                        b.line,
                        "error",
                        row.raw,
                    )
                    code = b.code if b.code != " " else "*"
                    unplayed.append(UnplayedRec(TOURNAMENT_REF, rank, r, code, CODE_SCORE.get(code), None, b.line))
                    continue
                if b.code in ("H", "F", "U", "Z"):
                    self.issues.quirk(
                        "trf_bye_with_opponent",
                        "bye/absence code with an opponent (e.g. '62 b Z'); stored as unplayed, not a game",
                        b.line,
                        row.raw,
                    )
                    unplayed.append(
                        UnplayedRec(TOURNAMENT_REF, rank, r, b.code, CODE_SCORE[b.code], b.opponent, b.line)
                    )
                    continue
                sides[r][rank] = b
            for r in range(len(row.blocks) + 1, n_rounds + 1):
                unplayed.append(UnplayedRec(TOURNAMENT_REF, rank, r, " ", None, None, row.line))
        games: list[list[object]] = []
        # each game's place (round, then the lower start rank of its two players), made with it:
        # a sort by a Python key function cost a twentieth of the reading
        order: list[tuple[int, int]] = []
        # the games come by round, then by the rank of the side met first (the lower one of a
        # pairing both rows write): in place order, but for a one-sided pairing written by the
        # higher rank only, which may come after a game of a lower place
        in_order = True
        two_sided = self._two_sided
        for r, in_round in enumerate(sides):  # by round, then rank
            done: set[int] = set()
            for rank, a in in_round.items():
                if rank in done:
                    continue
                opp = a.opponent
                assert opp is not None
                other = in_round.get(opp)
                if other is not None and other.opponent == rank:
                    done.add(opp)
                    games.append(two_sided(a, other, unplayed))
                    order.append((r, rank if rank < opp else opp))
                else:
                    game = self._one_sided(a, unplayed)
                    if game is not None:
                        games.append(game)
                        order.append((r, rank if rank < opp else opp))
                        in_order = in_order and rank < opp
        if not in_order:  # stable, as a sort of the games by their places is
            games = [games[i] for i in sorted(range(len(games)), key=order.__getitem__)]
        for i, g in enumerate(games):
            g.append(i)  # game_index
        unplayed.sort(key=lambda u: (u.round, u.player_ref))
        return games, unplayed

    def _no_opponent(self, b: Block) -> UnplayedRec:
        raw_code = b.code
        if raw_code == " ":
            # blank result: 'Z' by the spec, but writers leave bye points only in the total (§9),
            # so the value is unknown
            return UnplayedRec(TOURNAMENT_REF, b.rank, b.round, "Z", None, None, b.line)
        code = NO_OPPONENT_CODE[raw_code]
        if self.is_team and raw_code == "+":
            # team events have no individual byes: the board was won by forfeit (opponent not fielded)
            code = "+"
        if raw_code not in NO_OPPONENT_EXPECTED:
            self.issues.quirk(
                "trf_result_without_opponent",
                "game result code without an opponent; stored as the bye of the same value",
                b.line,
                b.raw,
            )
        if b.colour is not None:
            self.issues.quirk(
                "trf_colour_without_opponent", "colour w/b with opponent 0000; stored as a bye", b.line, b.raw
            )
        return UnplayedRec(TOURNAMENT_REF, b.rank, b.round, code, self.bye_score(code), None, b.line)

    def _game(
        self,
        white: Block,
        black: Block | None,
        white_code: str,
        black_code: str,
        played: bool,
        flags: list[str],
    ) -> list[object]:
        """The game's row (`game_rows.COLUMNS` but its game_index)."""
        r = white.round
        ws, bs, result, result_raw = _scores(white_code, black_code)
        white_ref = white.rank
        black_ref = black.rank if black is not None else white.opponent
        when = self._dates.get(r)
        if when is None:
            when = self._dates[r] = (*self._date_of(r), str(r))
        ratings = self._ratings
        return [TOURNAMENT_REF, white_ref, black_ref, result, result_raw, ws, bs, played,
                None if played else white_code, r, when[2], when[0], when[1], ratings[white_ref],
                ratings.get(black_ref), flags, white.line]  # fmt: skip

    def _date_of(self, r: int) -> tuple[dt.date | None, str]:
        """(date, precision) of the games of round `r`."""
        date = self.round_dates.get(r)
        precision = "day" if date else "none"
        if date is None and self.tour.start_date and self.tour.start_date == self.tour.end_date:
            date, precision = self.tour.start_date, "day"  # one-day event
        return date, precision

    def _orient(self, a: Block, b: Block) -> tuple[Block, Block, list[str]]:
        """(white, black, flags) from the colours of the two sides."""
        if a.colour == "w" and b.colour in ("b", None) or a.colour is None and b.colour == "b":
            return a, b, []
        if a.colour == "b" and b.colour in ("w", None) or a.colour is None and b.colour == "w":
            return b, a, []
        if a.colour is None and b.colour is None:
            first, second = (a, b) if a.rank < b.rank else (b, a)
            return first, second, ["trf_colour_unknown"]
        first, second = (a, b) if a.rank < b.rank else (b, a)  # both w or both b
        return first, second, ["trf_colour_disagree"]

    def _side_unplayed(self, blk: Block, unplayed: list[UnplayedRec]) -> None:
        code = blk.code if blk.code != " " else "*"
        unplayed.append(
            UnplayedRec(TOURNAMENT_REF, blk.rank, blk.round, code, CODE_SCORE.get(code), blk.opponent, blk.line)
        )

    def _two_sided(self, a: Block, b: Block, unplayed: list[UnplayedRec]) -> list[object]:
        # most pairings: one side 'w', the other 'b', mirrored results among 1 = 0 (a rated game),
        # as the general path below decides it, without its flags and checks
        if a.colour == "w" and b.colour == "b" or a.colour == "b" and b.colour == "w":
            white, black = (a, b) if a.colour == "w" else (b, a)
            if white.code in RATED_CODES and MIRROR[white.code] == black.code:
                return self._game(white, black, white.code, black.code, True, [])
        white, black, flags = self._orient(a, b)
        wc = white.code if white.code != " " else "*"
        bc = black.code if black.code != " " else "*"
        mirrored = MIRROR.get(wc) == bc
        colours_ok = (white.colour, black.colour) in _WHITE_BLACK
        if mirrored and wc in RATED_CODES and colours_ok:
            return self._game(white, black, wc, bc, True, [])
        # not a rated game: both sides keep their own unplayed round
        self._side_unplayed(white, unplayed)
        self._side_unplayed(black, unplayed)
        colour_disagree = "trf_colour_disagree" in flags
        if mirrored and wc in RATED_CODES and not colour_disagree:
            flags.append("trf_colour_missing")
            self.issues.add(
                "trf_colour_missing",
                f"round {a.round}: {white.rank}-{black.rank} result {wc}/{bc} without w/b colours; stored as not rated",
                white.line,
            )
        elif mirrored and wc in FORFEIT_CODES:
            flags.append("trf_forfeit")
        elif wc == "-" and bc == "-":
            flags.append("trf_double_forfeit")
        elif mirrored and wc in UNRATED_GAME_CODES:
            flags.append("trf_not_rated")
        elif wc == "*" and bc == "*":
            flags.append("trf_scheduled")
        if colour_disagree or not mirrored and not (wc == "-" and bc == "-"):
            flags.append("trf_sides_disagree")
            self.issues.add(
                "trf_sides_disagree",
                f"round {a.round}: player {white.rank} wrote {shown(white.raw.strip())}, player {black.rank} wrote "
                f"{shown(black.raw.strip())}; stored as not played",
                white.line,
                "warning",
            )
        if wc == "-" and bc == "-":
            return self._game(white, black, "-", "-", False, flags)
        if "trf_sides_disagree" in flags:
            # result only if the two scores still add up to one game (e.g. '+' against '0')
            ws, bs = CODE_SCORE.get(wc), CODE_SCORE.get(bc)
            if ws is None or bs is None or ws + bs != 1:
                game = self._game(white, black, wc, bc, False, flags)
                game[G.RESULT], game[G.WHITE_SCORE], game[G.BLACK_SCORE] = "*", None, None
                return game
        return self._game(white, black, wc, bc, False, flags)

    def _one_sided(self, a: Block, unplayed: list[UnplayedRec]) -> list[object] | None:
        """A names B in round r but B's block does not name A (§8.2: flag, do not invent)."""
        self._side_unplayed(a, unplayed)
        opp = a.opponent
        assert opp is not None
        opp_row = self.rows[opp]
        opp_block = next((x for x in opp_row.blocks if x.round == a.round), None)
        other = opp_block.opponent if opp_block is not None else None
        if other is not None and other != a.rank:
            self.issues.add(
                "trf_pairing_conflict",
                f"round {a.round}: player {a.rank} names {opp} as opponent, but {opp} names {other}",
                a.line,
                "warning",
                self.rows[a.rank].raw,
            )
            return None
        code = a.code if a.code != " " else "*"
        mirror = MIRROR.get(code, "*")
        if code in FORFEIT_CODES:
            self.issues.quirk(
                "trf_one_sided_forfeit",
                "forfeit entered on one side only (the opponent's row does not show it); pairing kept as a forfeit",
                a.line,
                self.rows[a.rank].raw,
            )
        else:
            self.issues.add(
                "trf_one_sided",
                f"round {a.round}: player {a.rank} wrote {shown(a.raw.strip())} against {opp}, whose row does not "
                "show this pairing; stored as not played",
                a.line,
                "warning",
                self.rows[a.rank].raw,
            )
        flags = ["trf_one_sided"] + (["trf_forfeit"] if code in FORFEIT_CODES else [])
        fake = Block(opp, a.round, a.rank, None, mirror, "", opp_row.line, True)
        if a.colour == "b":
            game = self._game(fake, a, mirror, code, False, flags)
            game[G.UNPLAYED_CODE] = mirror
        else:
            if a.colour is None:
                flags.append("trf_colour_unknown")
            game = self._game(a, fake, code, mirror, False, flags)
        game[G.RESULT_RAW] = f"{code}/?" if a.colour != "b" else f"?/{code}"
        return game


# result codes of a block with an opponent that is no pairing: unreadable ('?'), a bye or an absence
_NOT_PAIRED = frozenset("?HFUZ")
# the colours of a pairing's two sides that tell White from Black (one 'w', one 'b')
_WHITE_BLACK = frozenset({("w", "b"), ("b", "w")})


@functools.lru_cache(maxsize=256)
def _scores(white_code: str, black_code: str) -> tuple[Decimal | None, Decimal | None, str, str]:
    """(white score, black score, result, result_raw) of a game written with these codes (scores
    None when the result is '*')."""
    ws = CODE_SCORE.get(white_code)
    bs = CODE_SCORE.get(black_code)
    result = result_from_scores(ws, bs)
    if result == "*":
        ws = bs = None
    return ws, bs, result, f"{white_code}/{black_code}"


def _pab_score(scoring: dict[str, str]) -> Decimal | None:
    """PAB value relative to a win: TRF26 162 'P' over 'W', or XXS 'PAB' over 'WW'/'W' (JaVaFo).

    Only 1, ½ or 0 of a win are accepted (a game-scale value); anything else keeps the default.
    """
    for pab_key, win_keys in (("P", ("W",)), ("PAB", ("WW", "W"))):
        pab = decimal_or_none(scoring.get(pab_key, ""))
        win = next((decimal_or_none(scoring[k]) for k in win_keys if k in scoring), None) or Decimal("1")
        if pab is not None and win:
            ratio = pab / win
            if ratio in (Decimal(0), Decimal("0.5"), Decimal(1)):
                return ratio
    return None
