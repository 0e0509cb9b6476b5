"""The title-norm rules of `elopipe.rating.fide.norms` clause by clause (FIDE B.01), on hand-made game
sets, every figure worked by hand in the comments.

Scenarios re-expressed from Sharly-Chess's `tests/unit/norms/test_rules.py` and
`test_spec_scenarios.py` (in our own words and code) are marked "peer:" with the name of the
peer's test; the others are elopipe's own.
"""

from __future__ import annotations

import datetime as dt

import pytest

from elopipe.rating.fide import norms
from elopipe.rating.fide.norms import Applicant, Event, Game, evaluate, rating_average

E2024 = norms.ERAS[0]
E2022 = norms.ERAS[1]
FEDS = ["USA", "GER", "ESP", "ITA", "NED", "POL", "AZE", "IND", "CHN", "BRA", "NOR", "SWE", "HUN"]
W, D, L = 2, 1, 0  # points in half points


def g(rnd: int, pts: int = D, rating: int | None = 2500, title: str | None = "GM", fed: str | None = None) -> Game:
    return Game(
        round=rnd, opponent_id=100 + rnd, points_x2=pts, rating=rating, title=title, federation=fed or FEDS[rnd - 1]
    )


def field(results: list[int], rating: int = 2500, title: str = "GM") -> list[Game]:
    return [g(i + 1, r, rating, title) for i, r in enumerate(results)]


ME = Applicant(player_id=1, federation="FRA", sex="m")
HER = Applicant(player_id=1, federation="FRA", sex="w")


# ---- eras (0.2, 1.5.4) -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "era"),
    [
        (dt.date(2017, 7, 1), "2017"),
        (dt.date(2021, 12, 31), "2017"),
        (dt.date(2022, 1, 1), "2022"),
        (dt.date(2023, 12, 31), "2022"),
        (dt.date(2024, 1, 1), "2024"),
    ],
)
def test_era_by_start_date(start: dt.date, era: str) -> None:
    got = norms.era_for(start)
    assert isinstance(got, norms.Era) and got.name == era
    assert got.unrated == (1400 if era == "2024" else 1000)


def test_before_july_2017_is_refused_with_a_reason() -> None:
    assert (
        norms.era_for(dt.date(2017, 6, 30)) == "refused: the Title Regulations before 1 July 2017 are not implemented"
    )
    assert norms.era_for(None) == "unknown: the event's start date"


# ---- constants (peer: test_rules.py, test_minimum_rating_floor … test_required_titles) ----


def test_values_per_norm() -> None:
    assert norms.FLOOR == {"GM": 2200, "IM": 2050, "WGM": 2000, "WIM": 1850}
    assert norms.MIN_RA == {"GM": 2380, "IM": 2230, "WGM": 2180, "WIM": 2030}
    assert norms.MIN_RP == {"GM": 2600, "IM": 2450, "WGM": 2400, "WIM": 2250}
    assert norms.NORM_TITLES["WGM"] == {"GM", "IM", "WGM"}
    assert "CM" not in norms.TITLE_HOLDERS and "WCM" not in norms.TITLE_HOLDERS
    assert norms.MASTER_TITLES == {"GM", "IM", "WGM", "WIM"}


@pytest.mark.parametrize(
    ("n", "holders", "own_cap", "one_cap"), [(9, 5, 5, 6), (10, 5, 6, 6), (11, 6, 6, 7), (13, 7, 7, 8)]
)
def test_thresholds_round_as_the_rules_say(n: int, holders: int, own_cap: int, one_cap: int) -> None:
    # peer: test_minimum_title_holders, test_maximum_of_own_federation, test_maximum_of_one_federation
    assert norms.ceil_div(n, 2) == holders  # minimum counts round up
    assert 3 * n // 5 == own_cap and 2 * n // 3 == one_cap  # maximum counts round down


# ---- 0.31: women's titles (peer: test_satisfies_gender_requirement; test_wim_norm_fails_for_male_applicant)


def test_womens_norms_need_a_woman_and_a_known_sex() -> None:
    games = field([W] * 9)
    assert evaluate(games, Event(rounds=9), ME, "WIM", E2024).decision == "not_eligible"
    assert evaluate(games, Event(rounds=9), HER, "WIM", E2024).decision == "norm"
    unknown = evaluate(games, Event(rounds=9), Applicant(1, "FRA", None), "WGM", E2024)
    assert unknown.decision == "unknown" and "sex" in unknown.reason


# ---- 1.4.1 games ----------------------------------------------------------------------------


def test_nine_games_needed() -> None:
    out = evaluate(field([W] * 8), Event(rounds=8), ME, "GM", E2024)
    assert (out.decision, out.clause, out.reason, out.hint) == (
        "missed",
        "1.4.1",
        "1.4.1: 8 games counted, 9 needed",
        "1 more game",
    )


def test_eight_games_count_as_nine_after_a_bye_in_a_nine_round_event() -> None:
    # peer: TestRule_1_4_1c.test_title_holders_threshold_uses_played_games_not_rounds: 8 played + a
    # pairing-allocated bye; 4 GMs and 4 untitled 2300s, 8 wins. 1.4.5a needs ceil(8/2) = 4, not 5.
    games = [g(r, W) for r in range(1, 5)] + [g(r, W, 2300, "") for r in range(5, 9)]
    out = evaluate(games, Event(rounds=9), Applicant(1, "FRA", "m", byes=1), "GM", E2024)
    assert out.title_holders == 4 and "1.4.5a" not in out.failed
    # 1.4.5b: max(ceil(8/3), 3) = 3 GMs needed, 4 held; Ra (4·2500 + 4·2300)/8 = 2400; 100 % → dp 800
    assert (out.decision, out.clause, out.ra, out.rp) == ("norm", "1.4.1c", 2400, 3200)
    # without the bye the same 8 games are one short
    assert evaluate(games, Event(rounds=9), ME, "GM", E2024).clause == "1.4.1"


def test_seven_games_in_a_team_event_are_unknown_not_guessed() -> None:
    # 1.4.1b: 7 games suffice in World/Continental team or club championships: the files cannot say
    out = evaluate(field([W] * 7), Event(rounds=7, maybe_team=True), ME, "GM", E2024)
    assert out.decision == "unknown" and "1.4.1b" in out.reason


# ---- 1.4.2a FID and NON (peer: TestRule_1_4_2a_NON_excluded, TestRule_1_4_2a_FID_nuance) -----


def test_excluded_games_do_not_count() -> None:
    games = field([D] * 9) + [Game(10, 110, W, 2600, "GM", "NON", excluded="1.4.2a")]
    out = evaluate(games, Event(rounds=10), ME, "GM", E2024)
    assert out.games == 9 and out.points_x2 == 9


def test_fid_is_no_federation_for_1_4_3_nor_for_the_two_thirds_cap() -> None:
    # one USA opponent and eight FID: FID does not count as a federation besides FRA (1.4.3 fails
    # with 1), and eight FID opponents do not breach 1.4.4's 2/3 cap
    games = [g(1, W, fed="USA")] + [g(r, W, fed="FID") for r in range(2, 10)]
    out = evaluate(games, Event(rounds=9), ME, "GM", E2024)
    assert out.feds == 1 and out.top_fed == "USA" and out.failed == ["1.4.3"]
    assert out.reason == "1.4.3: 1 federation besides the applicant's among the opponents, 2 needed"
    assert out.hint == "one more opponent from another federation"


# ---- 1.4.3 / 1.4.4 federations --------------------------------------------------------------


def test_own_federation_cap_scales_with_games() -> None:
    # peer: TestRule_1_4_1c.test_own_federation_cap_scales_with_played_games: 8 games, floor(24/5) = 4
    four = [g(r, D, fed="FRA") for r in range(1, 5)] + [g(r, D, fed="USA") for r in range(5, 9)]
    five = [g(r, D, fed="FRA") for r in range(1, 6)] + [g(r, D, fed="USA") for r in range(6, 9)]
    a = Applicant(1, "FRA", "m", byes=1)
    assert "1.4.4" not in evaluate(four, Event(rounds=9), a, "GM", E2024).failed
    out = evaluate(five, Event(rounds=9), a, "GM", E2024)
    assert "1.4.4" in out.failed


def test_two_thirds_from_one_federation() -> None:
    # 7 USA + 2 GER for a FRA applicant: 7 > floor(18/3) = 6
    games = [g(r, D, fed="USA") for r in range(1, 8)] + [g(8, D, fed="GER"), g(9, D, fed="GER")]
    out = evaluate(games, Event(rounds=9), ME, "GM", E2024)
    assert out.reason == "1.4.4: 7 opponents from USA, at most 6 (2/3 of 9)"
    assert out.hint == "1 opponent from another federation in place of USA ones"


def test_three_fifths_from_the_applicants_federation_names_one_more_foreign_opponent() -> None:
    # 6 FRA + 3 others for a FRA applicant: 6 > floor(27/5) = 5
    games = [g(r, D, fed="FRA") for r in range(1, 7)] + [g(7, D), g(8, D), g(9, D)]
    out = evaluate(games, Event(rounds=9), ME, "GM", E2024)
    assert out.reason == "1.4.4: 6 opponents from the applicant's federation, at most 5 (3/5 of 9)"
    assert out.hint == "1 more foreign opponent in place of FRA ones"


@pytest.mark.parametrize("games_fed", [["FRA"] * 9, ["USA"] * 7 + ["FRA"] * 2])
def test_swiss_exemption_waives_1_4_3_and_1_4_4_only(games_fed: list[str]) -> None:
    # peer: TestRule_1_4_3d.test_143d_met_clears_is_met_for_143_violation / _144_one_fed_cap_violation,
    # test_143d_not_met_lets_144_violation_block, test_143d_does_not_clear_other_violations
    games = [g(r, W, fed=f) for r, f in enumerate(games_fed, start=1)]
    assert evaluate(games, Event(rounds=9), ME, "GM", E2024).decision == "missed"
    out = evaluate(games, Event(rounds=9, exemption="1.4.3d"), ME, "GM", E2024)
    assert (out.decision, out.exemption) == ("norm", "1.4.3d")
    weak = [Game(x.round, x.opponent_id, L, x.rating, x.title, x.federation) for x in games]
    assert evaluate(weak, Event(rounds=9, exemption="1.4.3d"), ME, "GM", E2024).clause == "1.4.8b"


def test_a_possible_national_championship_is_unknown_not_missed() -> None:
    games = [g(r, W, fed="FRA") for r in range(1, 10)]
    out = evaluate(games, Event(rounds=9, maybe_national=True), ME, "GM", E2024)
    assert out.decision == "unknown" and "1.4.3a" in out.reason


def test_an_unknown_federation_is_unknown() -> None:
    games = [*field([W] * 8), Game(9, 109, W, 2500, "GM", None)]
    out = evaluate(games, Event(rounds=9), ME, "GM", E2024)
    assert out.decision == "unknown" and out.reason == "unknown: the federation of 1 opponent(s) (1.4.3, 1.4.4)"
    # a clause that fails on what is known still decides
    losses = [Game(x.round, x.opponent_id, L, x.rating, x.title, x.federation) for x in games]
    assert evaluate(losses, Event(rounds=9), ME, "GM", E2024).decision == "missed"


# ---- 1.4.5 titles ---------------------------------------------------------------------------


def test_required_titles_keep_the_minimum_of_three() -> None:
    # peer: TestRule_1_4_1c.test_required_titles_floor_keeps_min_3: 3 GMs + 5 IMs of 8, max(ceil(8/3), 3) = 3
    games = [g(r, D) for r in range(1, 4)] + [g(r, D, title="IM") for r in range(4, 9)]
    out = evaluate(games, Event(rounds=9), Applicant(1, "FRA", "m", byes=1), "GM", E2024)
    assert out.norm_titles == 3 and "1.4.5" not in out.failed


def test_two_gms_of_three_needed_reads_as_the_issue_says() -> None:
    games = [g(1, W), g(2, W)] + [g(r, W, title="IM") for r in range(3, 10)]
    out = evaluate(games, Event(rounds=9), ME, "GM", E2024)
    assert out.reason == "1.4.5: 2 GMs among the opponents, 3 needed" and out.hint == "1 more GM"
    assert out.failed == ["1.4.5"]  # IM titles count as title-holders (1.4.5a holds)


def test_cm_and_wcm_are_no_title_holders() -> None:
    games = [g(r, W) for r in range(1, 4)] + [g(r, W, title="CM" if r % 2 else "WCM") for r in range(4, 10)]
    out = evaluate(games, Event(rounds=9), ME, "GM", E2024)
    assert out.title_holders == 3 and out.clause == "1.4.5a"
    assert (
        out.reason == "1.4.5a: 3 title-holders among the opponents, 5 needed" and out.hint == "2 more titled opponents"
    )


def test_double_round_robin_needs_half_of_the_norm_titles() -> None:
    # 1.4.5f: 10 games, ceil(10/2) = 5 GM games needed; 4 fail, 5 pass
    four = [g(r, W) for r in range(1, 5)] + [g(r, W, title="IM") for r in range(5, 11)]
    out = evaluate(four, Event(rounds=10, round_robin=True, double_rr=True), ME, "GM", E2024)
    assert out.reason == "1.4.5: 4 GMs among the opponents, 5 needed"
    assert evaluate(four, Event(rounds=10), ME, "GM", E2024).decision == "norm"  # single: max(ceil(10/3), 3) = 4


def test_an_unknown_title_is_unknown() -> None:
    games = [*field([W] * 8), Game(9, 109, W, 2500, None, "SWE")]
    out = evaluate(games, Event(rounds=9), ME, "GM", E2024)
    assert out.reason == "unknown: the title of 1 opponent(s) (1.4.5)"


# ---- 1.4.6-1.4.7 ratings ----------------------------------------------------------------------


def test_only_the_lowest_opponent_is_raised_to_the_floor() -> None:
    # peer: TestRule_1_4_6.test_only_lowest_below_floor_is_adjusted: 7·2400 + 2100 + 2000→2200
    # = 21100 / 9 = 2344.4 → 2344
    games = [g(r, D, 2400) for r in range(1, 8)] + [g(8, D, 2100, "IM"), g(9, D, 2000, "IM")]
    assert rating_average(games, "GM", E2024) == (2344, 109, 2000)


def test_unrated_counts_as_1400_in_2024_and_1000_before() -> None:
    # peer: TestRule_1_4_6.test_unrated_opponent_treated_as_1400_then_floored: 8·2400 + unrated → 2200
    # = 21400 / 9 = 2377.8 → 2378 in either era (the raise hides the value)
    one = [g(r, D, 2400) for r in range(1, 9)] + [g(9, D, None, "")]
    assert rating_average(one, "GM", E2024) == (2378, 109, None)
    assert rating_average(one, "GM", E2022) == (2378, 109, None)
    # two unrated: the first (earlier round) is raised, the other counts as the era's value
    # 2024: 7·2400 + 2200 + 1400 = 20400 / 9 = 2266.7 → 2267; 2022: + 1000 → 20000 / 9 = 2222.2 → 2222
    two = [g(r, D, 2400) for r in range(1, 8)] + [g(8, D, None, ""), g(9, D, None, "")]
    assert rating_average(two, "GM", E2024) == (2267, 108, None)
    assert rating_average(two, "GM", E2022) == (2222, 108, None)


def test_ra_rounds_half_up() -> None:
    # peer: test_round_ranking_half_up: 2380.5 → 2381, 2380.49 → 2380 (here as sums over 2 opponents)
    assert rating_average([g(1, D, 2380), g(2, D, 2381)], "GM", E2024)[0] == 2381
    assert rating_average([g(1, D, 2380), g(2, D, 2380)], "GM", E2024)[0] == 2380


# ---- 1.4.8-1.4.9 performance --------------------------------------------------------------------


def test_rp_boundary_on_eleven_games() -> None:
    # peer: TestRule_1_4_8_Rp_boundary: Ra 2400; 7.5/11 = 68.2 % → 68, dp 133, Rp 2533 < 2600;
    # 9/11 = 81.8 % → 82, dp 262, Rp 2662
    out = evaluate(field([W] * 6 + [D] * 3 + [L] * 2, 2400), Event(rounds=11), ME, "GM", E2024)
    assert (out.ra, out.p_x100, out.dp, out.rp, out.clause) == (2400, 68, 133, 2533, "1.4.8")
    # 8/11 = 72.7 % → 73, dp 175, 2575; 8.5/11 = 77.3 % → 77, dp 211, 2611: one point more
    assert out.hint == "1 point more"
    ok = evaluate(field([W] * 9 + [L] * 2, 2400), Event(rounds=11), ME, "GM", E2024)
    assert (ok.p_x100, ok.dp, ok.rp, ok.decision) == (82, 262, 2662, "norm")


def test_threshold_before_rounding_is_2599_5() -> None:
    # Ra of 2379 and 2380 is 2379.5, rounded to 2380; p 78 % → dp 220: Rp 2600, the same test as
    # 2379.5 + 220 = 2599.5 before rounding
    ra, _, _ = rating_average([g(1, D, 2379), g(2, D, 2380)], "GM", E2024)
    assert ra == 2380 and norms.performance(ra, 14, 9) == (78, 220, 2600)
    ra2, _, _ = rating_average([g(1, D, 2379), g(2, D, 2379)], "GM", E2024)
    assert norms.performance(ra2, 14, 9)[2] == 2599  # 2379 + 220 = 2599 < 2599.5


def test_p_rounds_to_whole_percent_half_up() -> None:
    # 6.5/8 = 81.25 % → 81 (dp 251); 2.5/4 = 62.5 % → 63 (dp 95)
    assert norms.performance(2400, 13, 8) == (81, 251, 2651)
    assert norms.performance(2400, 5, 4) == (63, 95, 2495)


def test_minimum_ra_blocks_whatever_the_score() -> None:
    # peer: test_average_too_low_blocks_independently_of_performance: Ra 2300, 11/11 → Rp 3100
    out = evaluate(field([W] * 11, 2300), Event(rounds=11), ME, "GM", E2024)
    assert out.rp == 3100 and out.reason == "1.4.8a: Ra 2300, 2380 needed" and out.decision == "missed"
    assert evaluate(field([W] * 11, 2300), Event(rounds=11), ME, "IM", E2024).decision == "norm"


def test_thirty_five_percent() -> None:
    # peer: TestRule_1_4_1c.test_score_threshold_scales_with_played_games: 3/8 = 37.5 % passes
    # (35 % of 8 = 2.8), 3/9 = 33.3 % fails (35 % of 9 = 3.15): half a point more
    eight = evaluate(
        field([W] * 2 + [D] * 2 + [L] * 4, 2800), Event(rounds=9), Applicant(1, "FRA", "m", byes=1), "GM", E2024
    )
    assert "1.4.8b" not in eight.failed
    nine = evaluate(field([W] * 2 + [D] * 2 + [L] * 5, 2800), Event(rounds=9), ME, "GM", E2024)
    assert nine.reason == "1.4.8b: 3 points of 9 is under 35 %" and nine.hint == "half a point more"


def test_half_a_point_short() -> None:
    # Ra 2400, 6.5/9 = 72.2 % → 72, dp 166, Rp 2566; 7/9 = 77.8 % → 78, dp 220, Rp 2620
    out = evaluate(field([W] * 5 + [D] * 3 + [L], 2400), Event(rounds=9), ME, "GM", E2024)
    assert (out.rp, out.hint, out.failed) == (2566, "half a point more", ["1.4.8"])
    assert norms.half_point_short(out, "GM")


def test_seven_games_of_an_eleven_round_team_event_are_too_few() -> None:
    # 1.4.1b's seven games are for team championships of 7 to 9 rounds; an 11-round Olympiad needs 9
    out = evaluate(field([W] * 7), Event(rounds=11, maybe_team=True), ME, "GM", E2024)
    assert (out.decision, out.clause) == ("missed", "1.4.1")
