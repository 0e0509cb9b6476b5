"""The rate of play from all the evidence (`elopipe.read.rate_evidence`): names in the files'
languages, words that must not misfire, online sites, the kinds never rated, rounds per day."""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest

from elopipe.read.rate_evidence import classify_games, name_never_rated, name_rate, online_platform_expr

# names of real events of ../shared/data (Carlsen.pgn, the lichess TRFs, chess960rwch.pgn) and
# the same events as the files of other federations would name them
SAYS = [
    ("World Blitz 2019", "blitz"),
    ("10th Norway Armageddon", "blitz"),
    ("Juni Blitzschach 5 Plus 0", "blitz"),
    ("Katara Bullet Final 2020", "bullet"),
    ("chess.com Speed 1m+1spm 2017", "bullet"),
    ("chess.com SpeedChess 2022", "blitz"),
    ("Carlsen-Ding Showdown G5", "blitz"),
    ("Carlsen-Ding Showdown G30", "rapid"),
    ("World Rapid 2019", "rapid"),
    ("Championnat de France rapide 2019", "rapid"),
    ("Campeonato de España de partidas rápidas", "rapid"),
    ("Deutsche Schnellschach-Meisterschaft 2019", "rapid"),
    ("NK Snelschaak 2019", "rapid"),
    ("Mistrzostwa Polski w Szachach Szybkich", "rapid"),
    ("Szachy szybkie - Memoriał", "rapid"),
    ("Lightning Open 2019", "blitz"),
    ("Torneo lampo di Roma", "blitz"),
    ("Mistrzostwa Polski w Szachach Błyskawicznych", "blitz"),
    ("Torneio relâmpago", "blitz"),
    # German compounds and a year run into the word (a hostile tester: all were standard, assumed)
    ("Vereinsblitzturnier 2023", "blitz"),
    ("Deutsche Blitzmeisterschaften 2023", "blitz"),
    ("Blitzschachmeisterschaft", "blitz"),
    ("Kadettenblitz", "blitz"),
    ("Blitz2023", "blitz"),
    ("Schnellschachturnier Bonn", "rapid"),
    ("Correspondence Cup", "correspondence"),
    ("Fernschach Open", "correspondence"),
    ("Norway Chess 2022 classical", "standard"),
    # a tie-break, or both rates named: faster than standard, which one not known
    ("Qatar Masters TB 2015", "fast"),
    ("Croatia GCT Rapid & Blitz 2019", "fast"),
    # a tie-break named with its rate is of that rate
    ("World Blitz TB 2019", "blitz"),
    # a play-off is a tie-break (Carlsen.pgn: "4th Final Master Playoff 2011", two games the day
    # after the last round)
    ("4th Final Master Playoff 2011", "fast"),
    ("US Championship Play-off", "fast"),
    ("GCT Rapid TB Paris 2017", "rapid"),
    ("5th Final Masters Blitz Tie-Break", "blitz"),
]


@pytest.mark.parametrize(("name", "cls"), SAYS)
def test_the_name_says_the_rate_in_the_languages_of_the_files(name, cls):
    said = name_rate(name)
    assert said is not None and said[0] == cls, said


# a rate word inside another word, a city, a sponsor, a time control written h:mm: no rate
SAYS_NOTHING = [
    "Blitzstein Memorial",
    "Rapid City Open 2019",
    "SK Rapid Wien Vereinsmeisterschaft",
    "Speedway Open",
    "Villamayor Open",
    "Bunratty 1:30 + 10",
    "2nd Norway Chess 2014",
    "44th Olympiad 2022",
    "World Senior Teams +50",
    "IBCA Blind Chess Olympiad",  # blind players: rated chess, not blindfold
    "Against All Odds Open",
    "Chess 9600 Open",  # no Chess960
]


@pytest.mark.parametrize("name", SAYS_NOTHING)
def test_words_inside_other_words_or_places_do_not_misfire(name):
    assert name_rate(name) is None
    assert name_never_rated(name) is None


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("14-board simul", "simul"),
        ("Magnus Inv Simul 2017", "simul"),
        ("Uhrensimultan", "simul"),  # a clock simul
        ("Blindsimultan", "simul"),
        ("Bughouse Open", "variant"),
        ("Crazyhouse Open", "variant"),
        ("Simultanvorstellung Carlsen", "simul"),
        ("19th Amber Blindfold", "blindfold"),
        ("Biel Exhibition Blitz", "exhibition"),
        ("Kasparov vs the World", "exhibition"),
        ("Knight odds match", "odds"),
        ("World Fischer Random 2019", "chess960"),
        ("CCM9 - Chess960 Rapid WCh", "chess960"),
        ("Freestyle Chess GOAT Challenge", "chess960"),
        ("FIDE Online Olympiad 2020", "online"),
        ("VII Dos Hermanas Internet", "online"),
    ],
)
def test_the_kinds_never_rated_are_read_in_the_name(name, kind):
    said = name_never_rated(name)
    assert said is not None and said[0] == kind


def test_armageddon_is_blitz_never_rated_and_not_an_odds_game():
    # FIDE B.02 (2024) R&B: games where the players have different times are not rated
    assert name_never_rated("Armageddon (draw odds)") == ("armageddon", "armageddon")
    assert name_never_rated("10th Norway Armageddon") == ("armageddon", "armageddon")
    assert name_rate("Armageddon (draw odds)") == ("blitz", "armageddon")
    # draw odds are the armageddon rule, whatever the name calls it; misspelt, still armageddon
    assert name_never_rated("Blitz playoff with draw odds") == ("armageddon", "draw odds")
    assert name_never_rated("Rapid - draw-odds for Black") == ("armageddon", "draw-odds")
    assert name_never_rated("Armageddons") == ("armageddon", "armageddons")
    assert name_never_rated("Norway Armagedon") == ("armageddon", "armagedon")
    assert name_never_rated("Odds game") == ("odds", "odds")


@pytest.mark.parametrize(
    ("site", "platform"),
    [
        ("chess.com INT", "chess.com"),
        ("Chess.com", "chess.com"),
        ("lichess.org", "lichess.org"),
        ("lichess.org INT", "lichess.org"),
        ("chess24.com INT", "chess24.com"),
        ("ICC INT", "icc"),
        ("ICC", "icc"),
        ("playchess", "playchess"),
        ("playchess.com", "playchess.com"),
        ("https://lichess.org/swiss/QLMFFLBq", "lichess.org"),
        ("Nettavisen INT", "INT"),
        ("Stavanger NOR", None),
        ("Saint Louis USA", None),
        ("Dublin", None),
    ],
)
def test_online_platforms_however_the_site_tag_writes_them(site, platform):
    df = pl.DataFrame({"site": [site], "platform": [None]}, schema={"site": pl.Utf8, "platform": pl.Utf8})
    assert df.select(online_platform_expr()).item() == platform


def _frames(
    games: list[tuple[int, int, str | None, dt.date | None, int, int]],
    events: list[tuple[int, str, str | None, str]],
) -> tuple[pl.DataFrame, pl.DataFrame]:
    g = pl.DataFrame(
        games,
        schema={
            "game_id": pl.Int64,
            "tournament_id": pl.Int64,
            "time_control": pl.Utf8,
            "game_day": pl.Date,
            "white_id": pl.Int64,
            "black_id": pl.Int64,
        },
        orient="row",
    ).with_columns(pl.lit(True).alias("played"))
    t = pl.DataFrame(
        events,
        schema={"tournament_id": pl.Int64, "name": pl.Utf8, "site": pl.Utf8, "source_format": pl.Utf8},
        orient="row",
    ).with_columns(
        pl.lit(None, pl.Utf8).alias("time_control"),
        pl.lit(None, pl.Utf8).alias("rate_class"),
        pl.lit(None, pl.Utf8).alias("platform"),
    )
    return g, t


def _by_game(out: pl.DataFrame) -> dict[int, tuple[str, str]]:
    return {r["game_id"]: (r["rate_class"], r["rate_source"]) for r in out.iter_rows(named=True)}


def test_a_time_control_wins_over_the_name_and_a_plain_name_is_assumed():
    day = dt.date(2019, 12, 26)
    g, t = _frames(
        [(1, 1, "5400+30", day, 1, 2), (2, 1, None, day, 3, 4), (3, 2, None, day, 1, 2)],
        [(1, "World Blitz 2019", "Moscow RUS", "pgn"), (2, "2nd Norway Chess 2014", "Stavanger NOR", "pgn")],
    )
    out = classify_games(g, t)
    assert _by_game(out) == {
        1: ("standard", "time_control"),
        2: ("blitz", "name"),
        3: ("standard", "assumed"),
    }
    assumed = out.filter(pl.col("game_id") == 3).row(0, named=True)
    assert assumed["tc_assumed"] and "standard assumed" in assumed["rate_evidence"]
    assert not out.filter(pl.col("game_id") == 2).get_column("tc_assumed").item()
    assert out.filter(pl.col("game_id") == 2).get_column("rate_evidence").item() == 'name "World Blitz 2019": blitz'


def test_the_site_makes_an_event_never_rated_whatever_its_rate():
    g, t = _frames([(1, 1, "5400+30", None, 1, 2)], [(1, "Titled Tue 5th Dec Late", "chess.com INT", "pgn")])
    row = classify_games(g, t).row(0, named=True)
    assert row["never_rated"] == "online:chess.com"
    assert (row["rate_source"], row["rate_evidence"]) == ("site", 'site "chess.com INT"')


def _knockout(tid: int, days: list[dt.date], per_day: list[int]) -> list[tuple[int, int, None, dt.date, int, int]]:
    """Games between players 1 and 2 of event `tid`: per_day[i] of them on days[i]."""
    out = []
    for d, n in zip(days, per_day, strict=True):
        for _ in range(n):
            out.append((tid * 100 + len(out), tid, None, d, 1, 2))
    return out


def _knockout_days(out: pl.DataFrame, days: list[dt.date], last: int) -> list[str]:
    """Check a knockout round of `classify_games`' `out`: one standard game on each of the first
    two `days`, `last` fast games on the third; the third day's evidence."""
    got = out.group_by("game_day", "rate_class", "rate_source").len().sort("game_day")
    assert got.rows() == [
        (days[0], "standard", "assumed", 1),
        (days[1], "standard", "assumed", 1),
        (days[2], "fast", "rounds_per_day", last),
    ]
    return out.filter(pl.col("game_day") == days[2]).get_column("rate_evidence").unique().to_list()


def test_a_tie_break_day_is_fast_and_the_classical_days_stay_standard():
    # as the FIDE World Cup 2021 in Carlsen.pgn: one game a day, then 6 on the tie-break day
    days = [dt.date(2021, 7, 25), dt.date(2021, 7, 26), dt.date(2021, 7, 27)]
    g, t = _frames(_knockout(1, days, [1, 1, 6]), [(1, "FIDE World Cup 2021", "Krasnaya Polyana RUS", "pgn")])
    assert _knockout_days(classify_games(g, t), days, 6) == ["6 games by one player on 2021-07-27"]


def test_a_two_game_tie_break_after_the_rounds_classical_days_is_fast():
    # the FIDE World Cup 2023 final in Carlsen.pgn: 8.1 and 8.2 on two days, the rapid 8.3 and 8.4
    # on the third (two games: under the three of a rapid match), then nothing more
    days = [dt.date(2023, 8, 22), dt.date(2023, 8, 23), dt.date(2023, 8, 24)]
    g, t = _frames(_knockout(1, days, [1, 1, 2]), [(1, "FIDE World Cup 2023", "Baku AZE", "pgn")])
    g = g.with_columns(pl.lit(8, pl.Int64).alias("round"))
    assert _knockout_days(classify_games(g, t), days, 2) == [
        "2 games between the same two players on 2023-08-24, after their games of round 8 on 2023-08-22: a tie-break"
    ]


def test_two_games_of_one_pair_on_one_day_in_two_rounds_or_on_the_rounds_first_day_stay_standard():
    # a double round-robin's two meetings are two rounds; a round's first day is no tie-break
    day = dt.date(2011, 10, 1)
    g, t = _frames(_knockout(1, [day], [2]), [(1, "Club Double Round Robin", "Galway", "trf")])
    drr = g.with_columns(pl.Series("round", [3, 4], dtype=pl.Int64))
    assert set(_by_game(classify_games(drr, t)).values()) == {("standard", "assumed")}
    first = g.with_columns(pl.lit(1, pl.Int64).alias("round"))
    assert set(_by_game(classify_games(first, t)).values()) == {("standard", "assumed")}
    # without a round nothing is said
    later = _frames(_knockout(1, [day, day + dt.timedelta(days=1)], [1, 2]), [(1, "Match", "Cork", "pgn")])
    assert set(_by_game(classify_games(*later)).values()) == {("standard", "assumed")}


def test_three_games_of_one_pair_in_a_day_are_a_rapid_match():
    # as the Oslo Esports Cup 2022 in Carlsen.pgn: three or four games a day against one opponent
    days = [dt.date(2022, 4, 22), dt.date(2022, 4, 23)]
    g, t = _frames(_knockout(1, days, [3, 4]), [(1, "Oslo Esports Cup 2022", "Oslo NOR", "pgn")])
    out = classify_games(g, t)
    assert set(out.get_column("rate_class")) == {"fast"}
    assert set(out.get_column("rate_source")) == {"rounds_per_day"}


def test_four_rounds_in_a_day_of_different_pairs_stay_standard():
    # irl_galway_major_2011: rounds 2-5 on one day at 90 minutes + 10 s, a real standard event
    day = dt.date(2011, 10, 1)
    games = [(r, 1, None, day, 1, 10 + r) for r in range(4)]
    g, t = _frames(games, [(1, "Galway Major 2011", "Salthill, Galway", "trf")])
    assert set(_by_game(classify_games(g, t)).values()) == {("standard", "assumed")}


def test_one_date_on_every_game_of_a_pgn_event_says_nothing_but_a_trf_round_date_does():
    # a PGN export that writes the event's date on every game: its days are unknown
    day = dt.date(2014, 4, 21)
    pgn_games = [(r, 1, None, day, 1, 10 + r) for r in range(9)]
    g, t = _frames(pgn_games, [(1, "2nd Norway Chess 2014", "Stavanger NOR", "pgn")])
    assert set(classify_games(g, t).get_column("rate_source")) == {"assumed"}
    # TRF line 132 gives each round its own date: nine rounds on one day are not standard
    g, t = _frames(pgn_games, [(1, "XXX Torneo San Viator", "Madrid", "trf")])
    assert set(classify_games(g, t).get_column("rate_class")) == {"fast"}


def test_one_player_against_many_opponents_in_one_round_is_a_simul_never_rated():
    # the Play Live Challenge 2016 of Carlsen.pgn: Carlsen (1) against 11 players in round 3, each
    # of whom plays only that game of the round; no time control, no word in the name
    day = dt.date(2016, 9, 22)
    games = [(g, 1, None, day, 1, 10 + g) for g in range(11)]
    g, t = _frames(games, [(1, "Play Live Challenge 2016", "Oslo NOR", "pgn")])
    out = classify_games(g.with_columns(pl.lit(3, pl.Int64).alias("round")), t)
    assert set(out.get_column("never_rated")) == {"not_rated:simul"}
    assert set(out.get_column("rate_source")) == {"rounds_per_day"}
    assert set(out.get_column("rate_evidence")) == {
        "one player against 11 opponents in round 3 on 2016-09-22, each of whom plays no other game of that round:"
        " a simultaneous exhibition"
    }


def test_one_round_on_every_game_of_a_round_robin_is_no_simul():
    # a source that writes round 1 on every game: every player plays many games of that "round"
    day = dt.date(2014, 3, 6)
    players = [1, 2, 3, 4]
    games = [(10 * a + b, 1, None, day, a, b) for a in players for b in players if a < b]
    g, t = _frames(games, [(1, "Four Player Festa", "Caxias do Sul BRA", "pgn")])
    out = classify_games(g.with_columns(pl.lit(1, pl.Int64).alias("round")), t)
    assert out.get_column("never_rated").null_count() == out.height
    # a Swiss round pairs each player once; two opponents, or games on two days, are no simul
    two = [(1, 1, None, day, 1, 10), (2, 1, None, day, 1, 11), (3, 1, None, day, 2, 12)]
    g, t = _frames(two, [(1, "Open", "Cork", "pgn")])
    assert (
        classify_games(g.with_columns(pl.lit(1, pl.Int64).alias("round")), t).get_column("never_rated").null_count()
        == 3
    )
    apart = [(g, 1, None, day + dt.timedelta(days=g), 1, 10 + g) for g in range(3)]
    g, t = _frames(apart, [(1, "Open", "Cork", "pgn")])
    assert (
        classify_games(g.with_columns(pl.lit(1, pl.Int64).alias("round")), t).get_column("never_rated").null_count()
        == 3
    )


def test_a_simul_whose_name_or_time_control_says_the_rate_keeps_it():
    day = dt.date(2016, 9, 22)
    games = [(g, 1, None, day, 1, 10 + g) for g in range(4)]
    g, t = _frames(games, [(1, "Clock Blitz Challenge", "Oslo NOR", "pgn")])
    out = classify_games(g.with_columns(pl.lit(2, pl.Int64).alias("round")), t)
    assert out.get_column("never_rated").null_count() == 4
    assert set(out.get_column("rate_class")) == {"blitz"}
