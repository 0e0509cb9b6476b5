"""What each column of a tournament report means, per rating system, with the rule it comes from.

FIDE: Rating Regulations B.02 (2024 text; older lists follow the version in force, see
`elopipe.rating.fide.b02`): 8.1.1 (dp table), 8.1.2 (PD table), 8.3 (the change), 7.1.4 and 8.2
(initial ratings). FFE: the classic national Elo and the E02 rapid rating, as specified in
`ffe-rating-rules.md` Part A (sections A.2-A.6) and Part B.2 (`elopipe.rating.ffe.classic`,
`elopipe.rating.ffe.rapid`); the thresholds shown are the system's own parameters.
"""

from __future__ import annotations

from elopipe.publish.ro_marks import MARK, mark_meaning
from elopipe.publish.rules_legend import AppliedRules, d_used_text, k_text, reason_legend, ru_text

#: the FIDE-style performance table and the game-by-game table (B.02)
FIDE_LEGEND: list[tuple[str, str]] = [
    ("SNo", "start rank in the tournament file (PGN: a number given by rating, then name)"),
    ("Fed / Title", "federation and FIDE title as the file gives them"),
    (
        "Ro",
        "the player's rating in force: the list published before the event's start (B.02 7.1.3), as the store "
        "knows it (src); also in the crosstable, beside Rtg",
    ),
    (
        "src",
        "where Ro came from: official, an imported official list (elopipe lists import); computed, the store's "
        "own list, computed from the games it holds (it drifts from FIDE's when the store lacks the player's other "
        "games); file, the rating the organiser's file gives (a player the store never rated, or rated with "
        "--ro-from file; on the list that closes the period, a player the store never rated before has his first "
        "row marked source 'bootstrap', rating_lists.source); standard, rapid and blitz: an unrated player's "
        "standard rating (R&B 7.2.1); blank beside a "
        "Ro: no list in force nor this event's file rates the player, who plays at the rating another event's file "
        "of the same period gave him (B.02 8.2.4)",
    ),
    (MARK, mark_meaning()),
    (
        "Rtg",
        "the rating the organiser's file gives the player (TRF 001; PGN WhiteElo / BlackElo), as in the crosstable",
    ),
    ("N", "games rated in this event for the player"),
    ("W", "points scored in those games"),
    ("Ra", "average rating of the rated opponents, rounded (B.02 8.1)"),
    ("We", "expected score: the sum of PD over the games (B.02 8.3.1)"),
    ("W−We", "score above (+) or below (−) expectation"),
    ("K", k_text(None)),
    (
        "K×(W−We)",
        "rating change earned here, unrounded; the period's sum is rounded once, halves away from zero (B.02 8.3.4)",
    ),
    (
        "Change",
        "that change rounded; the list adds up all the player's events of the period and rounds once "
        "(B.02 8.3.4), so with two events in one period its change is not the sum of these",
    ),
    ("Rp", "performance rating: Ra + dp(p), p = W / N, dp from table 8.1.1 (B.02 8.1.1)"),
    ("Ru / note", ru_text(None)),
    ("Rc", "per game: the opponent's rating in force"),
    ("D used", d_used_text(None)),
    (
        "PD",
        "per game: expected score for D used, from table 8.1.2 (B.02 8.1.2); empty on a row that does not count "
        "in the rating change (see counted)",
    ),
    (
        "W−PD",
        "per game: score minus PD; K × the sum of W−PD is the change (B.02 8.3.4); empty where PD is, so the "
        "column adds up to the change's sum",
    ),
    (
        "counted",
        "per game (games.csv): true when the game counts in the rating change (K × Σ(W−PD)); false otherwise, "
        "with the reason: a game pooled toward an unrated player's first rating (reason pooled_unrated) counts "
        "toward that rating instead, not toward a change",
    ),
    ("reason", reason_legend(None)),
    (
        "used_for",
        "per game (games.csv): what the game was used for: rating_change (counted in the change), first_rating "
        "(pooled toward an unrated player's initial rating Ru, B.02 8.2), not_rated (see reason)",
    ),
    (
        "Source / line",
        "per game: the file and line of the player's own record: in a TRF his 001 line (the line of every "
        "round of his, byes and forfeits too); in a PGN the game",
    ),
]
# the terms whose meaning depends on the rules version the event was rated under
_BY_RULES = {"K": k_text, "D used": d_used_text, "Ru / note": ru_text, "reason": reason_legend}


def _ffe_legend(
    compat: int, threshold: int, floor: int, young: int, adult: int, down: int, clamp: int
) -> list[tuple[str, str]]:
    return [
        ("SNo", "start rank in the tournament file"),
        ("List", "the list the period closes"),
        ("Ro (R old)", "rating in force at the period's start"),
        (
            "src",
            "where Ro comes from: F the FIDE rating written in the file (FIDE before national), N this system's "
            "previous list, N-file the national rating written in the file, standard the standard rating "
            "credited for rapid (E02), below_floor unrated: the file's value is under the floor "
            f"{floor}, no rating; an estimated value (E) is never a rating",
        ),
        (
            "N",
            f"compatible games: draws always; a win against an opponent at most {compat} below R, a loss "
            f"against one at most {compat} above; upsets always",
        ),
        (
            "N inc.",
            f"incompatible games: an expected result against an opponent more than {compat} points away; "
            "they are left out of X, p and P",
        ),
        ("W", "points scored in the compatible games"),
        ("Ra", "mean rating of the compatible opponents, rounded half up (X as a whole number)"),
        ("X", "mean rating of the compatible opponents, full precision"),
        ("p", "score fraction over the compatible games: points / N"),
        (
            "Z",
            f"bonus dp(p) from FIDE table 8.1.1, interpolated between whole percentages, clamped to ±{clamp}",
        ),
        ("P", f"performance P = X + Z, raised to {floor} when lower"),
        (
            "method",
            f"down: P < R, new = ({down}·R + N·P) / ({down} + N); up_full: P > R with enough games (young "
            f"{young}, adult {adult}), new = P; up_brake: P > R with fewer games, new = (N·P + (B − N)·R) / B, "
            f"B = {young} (young) or {adult} (adult); equal: P = R; none: no compatible game, R kept; "
            f"first: first rating from {threshold} compatible games; first_combined: with the archived "
            f"performance; archived: fewer than {threshold} games, kept for later",
        ),
        ("New", "new rating, rounded to the nearest 10, halves up"),
    ]


#: the crosstable of an HTML report (`crosstable.crosstable`), the same in every system
CROSSTABLE_LEGEND: list[tuple[str, str]] = [
    ("Rtg", "crosstable: the rating the file wrote for the player (TRF 001; PGN WhiteElo / BlackElo)"),
    ("Ro", f"crosstable: the Ro the rating used (a report's Ro column); {MARK} when 50 or more points from Rtg"),
    (
        "1, 2, …",
        "crosstable, per round: the opponent's SNo, colour (w / b) and result (1, ½, 0), e.g. 12w1; a round not "
        "played shows its TRF code: + forfeit win, - forfeit loss, H half-point bye, F full-point bye, "
        "U pairing-allocated bye, Z zero-point bye; ?1, ?2, … games without a round (PGN without Round tags), "
        "in file order",
    ),
    ("Pts", "crosstable: points, the total the file declares (TRF 001), else the sum of the games and byes"),
    ("Rank", "crosstable: the final rank the file gives (TRF 001), else by points, equal points sharing a rank"),
]


def report_legend(system: str, rules: AppliedRules | None = None) -> list[tuple[str, str]]:
    """The legend of an HTML report of `system`: `legend(system, rules)`, then `CROSSTABLE_LEGEND`
    less the terms the system's legend explains already (the terminal shows no crosstable, so
    `elopipe report` prints `legend` alone)."""
    own = [*legend(system, rules)]
    terms = {term for term, _ in own}
    return [*own, *(entry for entry in CROSSTABLE_LEGEND if entry[0] not in terms)]


def legend(system: str, rules: AppliedRules | None = None) -> list[tuple[str, str]]:
    """(column, meaning) pairs explaining the report columns of `system`: FFE's period working
    for 'ffe' and 'ffe-rapid' (thresholds from that system's `FfeRules`), FIDE's terms for
    every other system (their performance table has the same columns). `rules`: the FIDE rules
    the event was rated under (`rules_legend.applied_rules_of`): K, D used and Ru state that
    version's rule alone; None: every version's, by era."""
    if system in ("ffe", "ffe-rapid"):
        from elopipe.rating.ffe.params import CLASSIC
        from elopipe.rating.ffe.rapid import RAPID

        r = RAPID if system == "ffe-rapid" else CLASSIC
        return _ffe_legend(
            r.compat_limit, r.threshold, r.floor, r.brake_up_young, r.brake_up_adult, r.brake_down, r.clamp
        )
    if rules is None:
        return FIDE_LEGEND
    return [(term, _BY_RULES[term](rules) if term in _BY_RULES else meaning) for term, meaning in FIDE_LEGEND]
