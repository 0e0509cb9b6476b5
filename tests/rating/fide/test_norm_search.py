"""Dropping rounds to meet a norm (FIDE B.01 1.4.1e/f, `elopipe.rating.fide.norm_search`), on
hand-made game sets worked by hand.

Scenarios re-expressed from Sharly-Chess's `tests/unit/norms/test_searcher.py` and
`test_spec_scenarios.py` (TestProportionalThresholdsAllowRescue) are marked "peer:".
"""

from __future__ import annotations

from elopipe.rating.fide import norms
from elopipe.rating.fide.norm_search import best_outcome, drop_candidates
from elopipe.rating.fide.norms import Applicant, Event, Game, evaluate

E2024 = norms.ERAS[0]
FEDS = ["USA", "GER", "ESP", "ITA", "NED", "POL", "AZE", "IND", "CHN", "BRA", "NOR", "SWE", "HUN"]
W, D, L = 2, 1, 0
ME = Applicant(player_id=1, federation="FRA", sex="m")


def g(rnd: int, pts: int, rating: int = 2500, title: str = "GM", fed: str | None = None) -> Game:
    return Game(rnd, 100 + rnd, pts, rating, title, fed or FEDS[rnd - 1])


def test_round_robin_drops_only_won_games() -> None:
    # peer: TestCandidateShape.test_only_won_subsets_in_round_robin: 11 games, wins in rounds 2, 5, 7
    games = [g(r, W if r in (2, 5, 7) else D) for r in range(1, 12)]
    sets = list(drop_candidates(games, Event(rounds=11, round_robin=True), E2024))
    assert sets and all(s <= {2, 5, 7} for s in sets) and max(len(s) for s in sets) == 2


def test_swiss_tail_takes_every_later_round() -> None:
    # peer: TestCandidateShape.test_tail_loss_only_dropped_with_the_rounds_after_it: a loss in round
    # 10 of 11 is dropped only with round 11 (1.4.1e), never alone
    games = [g(r, D) for r in range(1, 10)] + [g(10, L), g(11, D)]
    sets = list(drop_candidates(games, Event(rounds=11), E2024))
    assert frozenset({11}) in sets and frozenset({10, 11}) in sets and frozenset({10}) not in sets


def test_nine_round_swiss_has_nothing_to_drop() -> None:
    # peer: TestCandidateShape.test_no_ignores_available_in_9_round_swiss
    assert list(drop_candidates([g(r, W) for r in range(1, 10)], Event(rounds=9), E2024)) == []


def test_fewest_rounds_first_then_weakest_opponents() -> None:
    # peer: TestCandidateOrdering.test_smaller_subsets_yielded_first / test_within_size_class_lowest_rating_sum_first
    games = [g(r, W, 2500 - 10 * r) for r in range(1, 12)]  # round 11 the weakest (2390)
    sets = list(drop_candidates(games, Event(rounds=11, round_robin=True), E2024))
    assert [len(s) for s in sets] == sorted(len(s) for s in sets)
    assert sets[0] == frozenset({11}) and sets[1] == frozenset({10})


def test_rescue_by_leaving_out_a_win_against_the_weakest() -> None:
    # 11-round Swiss. Rounds 1-9 GMs at 2400 (6 W, 2 D, 1 L); round 10 a win against 1800,
    # round 11 a win against 1900. Full set: 1800 raised to 2200; 9·2400 + 2200 + 1900 = 25700 / 11
    # = 2336.4 → 2336 < 2380 (1.4.8a). Leave out round 10 (1.4.1f, a defeated opponent): 1900 is
    # now raised: 9·2400 + 2200 = 23800 / 10 = 2380; 8/10 = 80 % → dp 240; Rp 2620 ≥ 2600.
    gm = [W] * 6 + [D] * 2 + [L]
    games = [g(r, p, 2400) for r, p in enumerate(gm, start=1)] + [g(10, W, 1800, ""), g(11, W, 1900, "")]
    full = evaluate(games, Event(rounds=11), ME, "GM", E2024)
    assert (full.ra, full.clause) == (2336, "1.4.8a")
    out = best_outcome(games, Event(rounds=11), ME, "GM", E2024)
    assert (out.decision, out.dropped, out.ra, out.p_x100, out.rp) == ("norm", (10,), 2380, 80, 2620)
    assert (out.raised_id, out.raised_from) == (111, 1900)
    assert out.reason.endswith("(rounds 10 left out, 1.4.1e/f)")


def test_rescue_by_leaving_out_the_last_rounds_after_a_title_result() -> None:
    # peer: TestSearcherWithRealEvaluator.test_gm_norm_rescued_by_dropping_tail_loss: 11-round Swiss,
    # 8 W and 1 D against 2500 GMs, then two losses. Full: 8.5/11 = 77.3 % → 77, dp 211, Rp 2711:
    # already a norm; make it a miss with a weaker field: 2380 GMs: Rp 2591 < 2600. Leaving out a
    # win lowers p (7.5/10 = 75 %, dp 193, 2573); leaving out round 11 (a tail, 1.4.1e):
    # 8.5/10 = 85 % → dp 296, Rp 2676.
    games = [g(r, W, 2380) for r in range(1, 9)] + [g(9, D, 2380), g(10, L, 2380), g(11, L, 2380)]
    assert evaluate(games, Event(rounds=11), ME, "GM", E2024).rp == 2591
    out = best_outcome(games, Event(rounds=11), ME, "GM", E2024)
    assert (out.decision, out.dropped, out.rp) == ("norm", (11,), 2676)
    # a round robin must use every round (1.4.1e) and may drop only wins: no rescue there
    rr = best_outcome(games, Event(rounds=11, round_robin=True), ME, "GM", E2024)
    assert (rr.decision, rr.dropped, rr.clause) == ("missed", (), "1.4.8")


def test_round_robin_mix_must_allow_a_norm_for_the_whole_event() -> None:
    # 1.4.1f (round robins): with 3 GMs of 11 games the full event fails 1.4.5 (4 needed), so no
    # dropped set is tried, though leaving out two wins against IMs would meet max(ceil(9/3), 3) = 3
    games = [g(r, D) for r in range(1, 4)] + [g(r, W, 2500, "IM") for r in range(4, 12)]
    out = best_outcome(games, Event(rounds=11, round_robin=True), ME, "GM", E2024)
    assert (out.clause, out.dropped) == ("1.4.5", ())
    swiss = best_outcome(games, Event(rounds=11), ME, "GM", E2024)
    assert swiss.decision == "norm" and len(swiss.dropped) == 2


def test_proportional_clauses_can_be_met_by_dropping() -> None:
    # peer: TestProportionalThresholdsAllowRescue (each clause alone, as the peer checks it)
    a = ME
    # 1.4.4 own: 6 FRA + 3 USA (6 > 5); without two FRA games: 4 of 7, floor(21/5) = 4
    own = [g(r, D, fed="FRA") for r in range(1, 7)] + [g(r, D, fed="USA") for r in range(7, 10)]
    assert "1.4.4" in evaluate(own, Event(rounds=9), a, "GM", E2024).failed
    assert "1.4.4" not in evaluate(own[2:], Event(rounds=9), a, "GM", E2024).failed
    # 1.4.4 one federation: 7 USA + 2 FRA (7 > 6); without three USA: 4 of 6, floor(12/3) = 4
    one = [g(r, D, fed="USA") for r in range(1, 8)] + [g(8, D, fed="FRA"), g(9, D, fed="FRA")]
    assert "1.4.4" in evaluate(one, Event(rounds=9), a, "GM", E2024).failed
    assert "1.4.4" not in evaluate(one[3:], Event(rounds=9), a, "GM", E2024).failed
    # 1.4.5: 3 GMs + 7 IMs (10 games: max(ceil(10/3), 3) = 4); without two IMs: 3 of 8 suffice
    titles = [g(r, D) for r in range(1, 4)] + [g(r, D, 2350, "IM") for r in range(4, 11)]
    assert "1.4.5" in evaluate(titles, Event(rounds=11), a, "GM", E2024).failed
    assert "1.4.5" not in evaluate(titles[:8], Event(rounds=11), a, "GM", E2024).failed
    # 1.4.1 is fixed: 8 games never become enough (peer: test_not_enough_games_cannot_be_rescued_by_dropping)
    assert evaluate([g(r, W) for r in range(1, 9)], Event(rounds=11), a, "GM", E2024).clause == "1.4.1"
