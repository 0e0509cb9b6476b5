"""FIDE title norms (GM, IM, WGM, WIM): the rules of one game set, FIDE B.01 (Title Regulations).

Sources: `shared/specs/fide-title-norms.md`. The 2024 text (handbook chapter B012024) is quoted
there for 0.5, 1.1.4, 1.4.6-1.4.9; the other articles (1.4.1-1.4.5) are taken from the
restatement with article numbers it gathers. Article numbers below are the 2024 ones; the 2017
text numbers the same rules 1.41-1.49 (1.46b is 1.4.6b).

Eras (0.2 / 1.5.4: the regulations in force when the event started):

* ``2024`` — events starting on or after 1 January 2024: an unrated opponent counts as 1400
  (1.4.6d, quoted verbatim).
* ``2022`` — 1 January 2022 to 31 December 2023, and ``2017`` — 1 July 2017 to 31 December
  2021: an unrated opponent counts as 1000 (1.46d of 2017; two secondary sources agree, the 2022
  text itself was not recovered). Every other value used here is the same in the three eras.
* Before 1 July 2017: not decided (`era_for` gives the reason); those rules had other limits
  (20 % unrated at most, unrated as 2000 before 2009) that are not implemented.

Arithmetic is exact: points in half points (``points_x2``), percentages in whole percent,
ratings in integers; Ra is rounded half up on integers (1.4.7b), p to the whole percent half
up (1.4.9), so Rp = Ra + dp(p) is an integer and "Rp ≥ 2600 after rounding" is the same test as
"≥ 2599.5 before rounding" (1.4.8).

`evaluate` decides one norm type for one applicant on one set of counted games, clause by
clause; the search over dropped rounds (1.4.1e/f) is `elopipe.rating.fide.norm_search`.

Readings that differ from Sharly-Chess's (`src/data/norms/`), whose scenario tests this module's
tests re-express:

* unrated opponents count 1000 before 2024 (the peer counts 1400 in every era);
* a fact the files do not give (a federation, a title, the player's sex, whether the event is a
  national championship or a team championship for 1.4.1b/1.4.3a-b) makes the decision
  'unknown: <what>' (the peer takes an arbiter's option or treats a blank as none);
* a double round robin needs 9 games like any event (the peer asks 10); 1.4.5f's half of the
  norm titles, rounded up, is counted over the games, as the peer does;
* in a round robin, games may be dropped (1.4.1f) only when the full event's opponent mix allows
  a norm (the peer searches regardless);
* the 1.4.2c "last-round forfeit counted as a loss" reading is not applied: a forfeit never
  counts as a game (it can make 8 games count as 9 under 1.4.1c).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections import Counter
from collections.abc import Sequence

from elopipe.rating.rounding import div_round
from elopipe.rating.tables import dp

NORM_TYPES = ("GM", "IM", "WGM", "WIM")

#: 1.4.6b: the adjusted rating floor of each norm.
FLOOR = {"GM": 2200, "IM": 2050, "WGM": 2000, "WIM": 1850}
#: 1.4.8a: the minimum rating average Ra of the opponents.
MIN_RA = {"GM": 2380, "IM": 2230, "WGM": 2180, "WIM": 2030}
#: 1.4.8 (and 0.5): the minimum performance Rp after rounding (2599.5 … before rounding).
MIN_RP = {"GM": 2600, "IM": 2450, "WGM": 2400, "WIM": 2250}
#: 1.4.5b-e: the titles that count for each norm ("the norm's title or higher").
NORM_TITLES = {
    "GM": frozenset({"GM"}),
    "IM": frozenset({"GM", "IM"}),
    "WGM": frozenset({"GM", "IM", "WGM"}),
    "WIM": frozenset({"GM", "IM", "WGM", "WIM"}),
}
#: The words of 1.4.5b-e's titles, one and several.
TITLE_WORDS = {
    "GM": ("GM", "GMs"),
    "IM": ("IM or GM", "IMs or GMs"),
    "WGM": ("WGM, IM or GM", "WGMs, IMs or GMs"),
    "WIM": ("WIM, WGM, IM or GM", "WIMs, WGMs, IMs or GMs"),
}
#: 1.4.5a: title-holders (CM and WCM excluded).
TITLE_HOLDERS = frozenset({"GM", "IM", "FM", "WGM", "WIM", "WFM"})
#: 1.4.3d: the titles that count in the Swiss exemption (GM, IM, WGM, WIM).
MASTER_TITLES = frozenset({"GM", "IM", "WGM", "WIM"})
#: A title holder needs no norm of his title or a lower one (a GM no IM norm; a WGM no WIM norm).
HOLDS = {
    "GM": frozenset({"GM"}),
    "IM": frozenset({"GM", "IM"}),
    "WGM": frozenset({"GM", "WGM"}),
    "WIM": frozenset({"GM", "IM", "WGM", "WIM"}),
}
#: 1.4.2a: 'FID' players count (but are no federation); 'NON' is no FIDE federation.
NO_FEDERATION = "FID"
NOT_FIDE = "NON"


@dataclasses.dataclass(frozen=True)
class Era:
    """The Title Regulations in force: `name` ('2017', '2022', '2024'), `unrated` (the rating an
    unrated opponent counts as, 1.4.6d), `since` (first start date ruled by them)."""

    name: str
    unrated: int
    since: dt.date


ERAS = (
    Era("2024", 1400, dt.date(2024, 1, 1)),
    Era("2022", 1000, dt.date(2022, 1, 1)),
    Era("2017", 1000, dt.date(2017, 7, 1)),
)


def era_for(start: dt.date | None) -> Era | str:
    """The `Era` of an event starting on `start`, or the reason none applies (a sentence):
    no start date, or a start before 1 July 2017 (not implemented)."""
    if start is None:
        return "unknown: the event's start date"
    for era in ERAS:
        if start >= era.since:
            return era
    return "refused: the Title Regulations before 1 July 2017 are not implemented"


@dataclasses.dataclass(frozen=True)
class Game:
    """One game the applicant played over the board (forfeits and byes never reach here).

    `points_x2` 0/1/2; `rating` the opponent's rating in force (1.4.6a, 1.1.4), None unrated;
    `title` '' when none, None when unknown; `federation` None when unknown; `excluded` the
    clause that leaves the game out ('1.4.2a', '1.4.2b') or None."""

    round: int
    opponent_id: int
    points_x2: int
    rating: int | None
    title: str | None
    federation: str | None
    excluded: str | None = None


@dataclasses.dataclass(frozen=True)
class Event:
    """What the rules need of the event: `rounds` scheduled; `round_robin` (pre-determined
    pairings, 1.4.1e, 1.4.2b) and `double_rr` (1.4.5f); `exemption`: the 1.4.3 exemption that
    holds for the whole event ('1.4.3d'), or None. What the files cannot name is never guessed:
    `maybe_national` (every participant of known federation is of the host federation: the
    event could be the national championship's final or team championship, 1.4.3a/b) and
    `maybe_team` (a team event: it could be a World or Continental team or club championship,
    1.4.1b) make a rule that needs that fact 'unknown'."""

    rounds: int
    round_robin: bool = False
    double_rr: bool = False
    exemption: str | None = None
    maybe_national: bool = False
    maybe_team: bool = False


@dataclasses.dataclass(frozen=True)
class Applicant:
    """The applicant: `federation` (None: unknown), `sex` ('m', 'w', None), `title` ('' none),
    `exemption`: an exemption that holds for him alone ('1.4.3b' in his federation's team
    championship) or None; `byes`: rounds without a game he did not lose: forfeit wins and
    pairing-allocated byes (1.4.1c)."""

    player_id: int
    federation: str | None
    sex: str | None
    title: str = ""
    exemption: str | None = None
    byes: int = 0


@dataclasses.dataclass
class Outcome:
    """The decision of one norm type on one game set.

    `decision`: 'norm', 'missed', 'unknown' (a fact is missing: `reason` says which),
    'not_eligible' (a women's norm for a man). `clause` the first clause that fails (or decides),
    `reason` in words, `hint` what would have made it. `failed`: every failing clause in order.
    Figures: games, points_x2, ra, p_x100, dp, rp, raised_id (the opponent raised to the floor),
    raised_from (his rating before; None: unrated), title_holders, norm_titles, feds (other than
    the applicant's), own, top_fed, top_count, dropped (rounds left out by 1.4.1e/f), exemption."""

    norm: str
    decision: str = "missed"
    clause: str | None = None
    reason: str = ""
    hint: str = ""
    failed: list[str] = dataclasses.field(default_factory=list)
    games: int = 0
    points_x2: int = 0
    ra: int | None = None
    p_x100: int | None = None
    dp: int | None = None
    rp: int | None = None
    raised_id: int | None = None
    raised_from: int | None = None
    title_holders: int = 0
    norm_titles: int = 0
    feds: int = 0
    own: int = 0
    top_fed: str | None = None
    top_count: int = 0
    dropped: tuple[int, ...] = ()
    exemption: str | None = None
    unknown: list[str] = dataclasses.field(default_factory=list)


def ceil_div(a: int, b: int) -> int:
    """a / b rounded up (b > 0): "minimum counts round up" (1.4.4, 1.4.5)."""
    return -(-a // b)


def rating_average(games: Sequence[Game], norm: str, era: Era) -> tuple[int | None, int | None, int | None]:
    """1.4.6b-d and 1.4.7: (Ra, raised opponent_id, his rating before the raise) of `games`.

    Unrated opponents count as `era.unrated`; the lowest opponent below the norm's floor, and
    only he, is raised to it (1.4.6c: on a tie the earlier round); Ra is the mean rounded half
    up (1.4.7b). (None, None, None) when there is no game."""
    if not games:
        return None, None, None
    values = [(g.rating if g.rating is not None else era.unrated, g.round, g) for g in games]
    low_value, _, low = min(values, key=lambda v: (v[0], v[1]))
    total = sum(v[0] for v in values)
    raised_id = raised_from = None
    if low_value < FLOOR[norm]:
        total += FLOOR[norm] - low_value
        raised_id, raised_from = low.opponent_id, low.rating
    return div_round(total, len(values)), raised_id, raised_from


def performance(ra: int, points_x2: int, games: int) -> tuple[int, int, int]:
    """1.4.8-1.4.9: (p in whole percent, dp, Rp = Ra + dp); p = points / games rounded half up
    ("0.5 % is rounded up")."""
    p = div_round(points_x2 * 100, 2 * games)
    d = dp(p)
    return p, d, ra + d


def min_games(event: Event, applicant: Applicant, played: int) -> tuple[int, bool]:
    """1.4.1a-c: (games needed, True when 8 games count as 9 under 1.4.1c: a 9-round event, 8
    played and the ninth round a forfeit win or a pairing-allocated bye)."""
    eight_for_nine = event.rounds == 9 and played == 8 and applicant.byes >= 1
    return 9, eight_for_nine


def _fmt_points(points_x2: int) -> str:
    whole, half = divmod(points_x2, 2)
    if whole == 0 and half:
        return "half a point"
    text = f"{whole}{'½' if half else ''}"
    return f"{text} point{'s' if points_x2 > 2 else ''}"


def points_needed(ra: int, points_x2: int, games: int, target: int) -> int | None:
    """Half points more the applicant needed for Ra + dp ≥ `target` on the same games (None:
    not even with every game won)."""
    for extra in range(0, 2 * games - points_x2 + 1):
        if performance(ra, points_x2 + extra, games)[2] >= target:
            return extra
    return None


Fail = tuple[str, str, str]  # (clause, why, hint)


def evaluate(games: Sequence[Game], event: Event, applicant: Applicant, norm: str, era: Era) -> Outcome:
    """Decide `norm` for `applicant` on `games` (the games of the set, excluded ones included with
    their clause). Clauses in order: 0.31 (women's titles), 1.4.1, 1.4.3, 1.4.4, 1.4.5a,
    1.4.5b-e, 1.4.8a, 1.4.8b, 1.4.8. Raises KeyError for an unknown norm type."""
    out = Outcome(norm=norm)
    if norm in ("WGM", "WIM") and applicant.sex != "w":
        if applicant.sex is None:
            out.unknown.append("the applicant's sex (0.31: women's title)")
        else:
            out.decision, out.clause, out.reason = "not_eligible", "0.31", "a women's title"
            return out
    counted = [g for g in games if g.excluded is None]
    n = len(counted)
    out.games = n
    out.points_x2 = sum(g.points_x2 for g in counted)
    fails: list[Fail] = []
    eight_for_nine = _games_clause(out, event, applicant, n, fails)
    _federations_clause(out, event, applicant, counted, fails)
    _titles_clause(out, event, norm, counted, fails)
    ra = _performance_clause(out, norm, era, counted, fails)
    out.failed = [c for c, _, _ in fails]
    if fails:
        out.decision = "missed"
        out.clause, why, out.hint = fails[0]
        out.reason = f"{out.clause}: {why}"
    elif out.unknown:
        out.decision = "unknown"
        out.reason = "unknown: " + "; ".join(out.unknown)
    else:
        out.decision = "norm"
        out.clause = "1.4.1c" if eight_for_nine and n < 9 else None
        out.reason = f"{norm} norm: Rp {out.rp} ≥ {MIN_RP[norm]}, Ra {ra} ≥ {MIN_RA[norm]}"
    return out


def _games_clause(out: Outcome, event: Event, applicant: Applicant, n: int, fails: list[Fail]) -> bool:
    """B.01 1.4.1: the number of games counted. Whether 8 games count for 9 (1.4.1c)."""
    need, eight_for_nine = min_games(event, applicant, n)
    if n < need and not eight_for_nine:
        if n >= 7 and event.maybe_team and event.rounds <= 9:  # 1.4.1b: team events of 7 to 9 rounds
            out.unknown.append(
                f"whether the event is a World or Continental team or club championship or the World Cup "
                f"(1.4.1b: {n} games)"
            )
        else:
            more = need - n
            fails.append(
                (
                    "1.4.1",
                    f"{n} game{'s' if n != 1 else ''} counted, {need} needed",
                    f"{more} more game{'s' if more > 1 else ''}",
                )
            )
    return eight_for_nine


def _federations_clause(
    out: Outcome, event: Event, applicant: Applicant, counted: list[Game], fails: list[Fail]
) -> None:
    """B.01 1.4.3 / 1.4.4: the opponents' federations (1.4.2a: FID counts as no federation)."""
    n = len(counted)
    exemption = event.exemption or applicant.exemption
    out.exemption = exemption
    feds = [g.federation for g in counted]
    if applicant.federation is None or any(f is None for f in feds):
        if exemption is None:
            missing = sum(f is None for f in feds)
            what = (
                "the applicant's federation"
                if applicant.federation is None
                else f"the federation of {missing} opponent(s)"
            )
            out.unknown.append(f"{what} (1.4.3, 1.4.4)")
        return
    counter = Counter(f for f in feds if f not in (None, NO_FEDERATION))
    own = counter.get(applicant.federation, 0)
    others = len([f for f in counter if f != applicant.federation])
    out.feds, out.own = others, own
    if counter:
        out.top_fed, out.top_count = max(sorted(counter.items()), key=lambda kv: kv[1])
    fed_fails = []
    if others < 2:
        k = 2 - others
        fed_fails.append(
            (
                "1.4.3",
                f"{others} federation{'s' if others != 1 else ''} besides the applicant's"
                " among the opponents, 2 needed",
                f"{'one more opponent' if k == 1 else 'two more opponents'} from another federation",
            )
        )
    cap_own = 3 * n // 5
    if own > cap_own:
        k = own - cap_own
        fed_fails.append(
            (
                "1.4.4",
                f"{own} opponents from the applicant's federation, at most {cap_own} (3/5 of {n})",
                f"{k} more foreign opponent{'s' if k > 1 else ''} in place of {applicant.federation} ones",
            )
        )
    cap_one = 2 * n // 3
    if out.top_count > cap_one:
        k = out.top_count - cap_one
        fed_fails.append(
            (
                "1.4.4",
                f"{out.top_count} opponents from {out.top_fed}, at most {cap_one} (2/3 of {n})",
                f"{k} opponent{'s' if k > 1 else ''} from another federation in place of {out.top_fed} ones",
            )
        )
    if fed_fails and exemption is None:
        if event.maybe_national and applicant.federation is not None:
            what = "team championship (1.4.3b)" if event.maybe_team else "championship's final (1.4.3a)"
            out.unknown.append(f"whether the event is the national {what}")
        else:
            fails.extend(fed_fails)


def _titles_clause(out: Outcome, event: Event, norm: str, counted: list[Game], fails: list[Fail]) -> None:
    """B.01 1.4.5: the opponents' titles (1.4.5a title-holders, 1.4.5b-e the norm's titles)."""
    n = len(counted)
    titles = [g.title for g in counted]
    if any(t is None for t in titles):
        out.unknown.append(f"the title of {sum(t is None for t in titles)} opponent(s) (1.4.5)")
        return
    out.title_holders = sum(t in TITLE_HOLDERS for t in titles)
    out.norm_titles = sum(t in NORM_TITLES[norm] for t in titles)
    half = ceil_div(n, 2)
    if out.title_holders < half:
        k = half - out.title_holders
        fails.append(
            (
                "1.4.5a",
                f"{out.title_holders} title-holders among the opponents, {half} needed",
                f"{k} more titled opponent{'s' if k > 1 else ''}",
            )
        )
    need_t = ceil_div(n, 2) if event.double_rr else max(ceil_div(n, 3), 3)
    if out.norm_titles < need_t:
        k = need_t - out.norm_titles
        one, many = TITLE_WORDS[norm]
        fails.append(
            (
                "1.4.5",
                f"{out.norm_titles} {many} among the opponents, {need_t} needed",
                f"{k} more {one if k == 1 else many}",
            )
        )


def _performance_clause(out: Outcome, norm: str, era: Era, counted: list[Game], fails: list[Fail]) -> int | None:
    """B.01 1.4.6-1.4.9: Ra (1.4.8a), the score (1.4.8b) and Rp (1.4.8). Ra, None when unknown."""
    n = len(counted)
    ra, out.raised_id, out.raised_from = rating_average(counted, norm, era)
    out.ra = ra
    if ra is not None and n:
        out.p_x100, out.dp, out.rp = performance(ra, out.points_x2, n)
        if ra < MIN_RA[norm]:
            fails.append(
                (
                    "1.4.8a",
                    f"Ra {ra}, {MIN_RA[norm]} needed",
                    f"opponents {MIN_RA[norm] - ra} points stronger on average",
                )
            )
        if 10 * out.points_x2 < 7 * n:  # points < 0.35 n, exactly: 100 points < 35 n, points_x2 = 2 points
            short = ceil_div(7 * n, 10) - out.points_x2
            fails.append(
                ("1.4.8b", f"{_fmt_points(out.points_x2)} of {n} is under 35 %", f"{_fmt_points(max(short, 1))} more")
            )
        if out.rp < MIN_RP[norm]:
            extra = points_needed(ra, out.points_x2, n, MIN_RP[norm])
            hint = f"{_fmt_points(extra)} more" if extra is not None else "not reachable on these games"
            fails.append(
                ("1.4.8", f"Rp {out.rp} (Ra {ra} + dp {out.dp} at {out.p_x100} %), {MIN_RP[norm]} needed", hint)
            )
    elif not fails:
        fails.append(("1.4.1", "no game counted", "9 games"))
    return ra


def half_point_short(out: Outcome, norm: str) -> bool:
    """True when `out` missed only on the score (1.4.8, 1.4.8b) and half a point more on the
    same games would have made the norm."""
    if out.decision != "missed" or not set(out.failed) <= {"1.4.8", "1.4.8b"} or out.ra is None or not out.games:
        return False
    more = out.points_x2 + 1
    return 10 * more >= 7 * out.games and performance(out.ra, more, out.games)[2] >= MIN_RP[norm]


def holds_title(title: str | None, norm: str) -> bool:
    """True when a player with `title` needs no `norm` (he holds it or a higher title)."""
    return (title or "") in HOLDS[norm]
