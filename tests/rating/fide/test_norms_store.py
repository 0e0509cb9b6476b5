"""Title norms from a store (`elopipe.rating.fide.norms_store`, the `v_norms` view), on hand-made TRF
round robins: each clause that reads the store (games that do not count, 1.4.1c, eras, the
rating floor, titles and federations from the file) worked by hand.

The event: a 10-player round robin of 9 rounds (circle pairing). Players 1-9 are GMs rated
2500, one per federation (USA, GER, ESP, ITA, NED, POL, AZE, IND, CHN); player 10, the
applicant, an IM of FRA rated 2400. Every game between 1-9 is drawn; the applicant beats 1-5 and
draws 6-9: 7/9 = 77.8 % → 78, dp 220; Ra 2500; Rp 2720: a GM norm (and an IM one, but he holds
IM).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest

from elopipe.ingest.driver import ingest_paths
from elopipe.official.list_import import import_list
from elopipe.rating.run import rate
from elopipe.store.connect import open_writer
from tests.helpers.official_lists import STD, fixed
from tests.helpers.trf_build import block, row

FEDS = ["USA", "GER", "ESP", "ITA", "NED", "POL", "AZE", "IND", "CHN", "FRA"]
N = 10


def schedule() -> list[list[tuple[int, int]]]:
    """Circle-method rounds of 10 players: 9 rounds of 5 pairs (white, black), ranks 1-10."""
    rot = list(range(2, N + 1))
    rounds = []
    for r in range(N - 1):
        ring = [1, *rot]
        pairs = [(ring[i], ring[N - 1 - i]) if (r + i) % 2 == 0 else (ring[N - 1 - i], ring[i]) for i in range(N // 2)]
        rounds.append(pairs)
        rot = rot[-1:] + rot[:-1]
    return rounds


def rr_trf(
    *,
    start: str = "2024/03/01",
    end: str = "2024/03/09",
    results: dict[tuple[int, int], str] | None = None,
    rating: dict[int, str] | None = None,
    title: dict[int, str] | None = None,
    fed: dict[int, str] | None = None,
    swiss: bool = False,
) -> str:
    """The event of the module docstring; `results` {(a, b): code for a} overrides ('1', '0', '=',
    '+', '-'); `rating`, `title`, `fed` override a player's. `swiss`: the last round's first two
    pairs without players 9 and 10 swap opponents, so two players meet twice and two never: the
    event is no round robin."""
    res = {(10, k): "1" for k in range(1, 6)} | {(10, k): "=" for k in range(6, 10)}
    res |= results or {}
    blocks: dict[int, list[str]] = {p: [] for p in range(1, N + 1)}
    opposite = {"1": "0", "0": "1", "=": "=", "+": "-", "-": "+"}
    rounds = schedule()
    if swiss:
        last = rounds[-1]
        i, j = [k for k, (w, b) in enumerate(last) if not {w, b} & {9, 10}][:2]
        (a, b), (c, d) = last[i], last[j]
        last[i], last[j] = (a, d), (c, b)
    for pairs in rounds:
        for w, b in pairs:
            code = res.get((w, b)) or opposite.get(res.get((b, w), ""), "=")
            blocks[w].append(block(b, "w", code))
            blocks[b].append(block(w, "b", opposite[code]))
    rows = []
    for p in range(1, N + 1):
        pts = sum({"1": 2, "+": 2, "=": 1}.get(bl[-1], 0) for bl in blocks[p])
        rows.append(
            row(
                p,
                f"Player{p:02d}, Test",
                blocks[p],
                title=(title or {}).get(p, "GM" if p < 10 else "IM"),
                rating=(rating or {}).get(p, "2500" if p < 10 else "2400"),
                fed=(fed or {}).get(p, FEDS[p - 1]),
                fide_id=str(9000000 + p),
                points=f"{pts // 2}.{5 if pts % 2 else 0}",
            )
        )
    head = ["012 Norm Round Robin", "022 Paris", "032 FRA", f"042 {start}", f"052 {end}", "062 10", "092 Round Robin"]
    return "\n".join([*head, *rows]) + "\n"


def norms_of(tmp_path: Path, text: str, player: int = 10) -> dict[str, tuple]:
    f = tmp_path / "event.trf"
    f.write_text(text, encoding="utf-8")
    db = tmp_path / "s.duckdb"
    ingest_paths([f], db)
    with open_writer(db) as con:
        rate(con, "fide")
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(
            "SELECT norm, decision, clause, reason, hint, games, points, ra, p, dp, rp, raised_from, era, dropped,"
            " holds_title FROM v_norms WHERE name = ? ORDER BY norm",
            [f"Player{player:02d}, Test"],
        ).fetchall()
    finally:
        con.close()
    return {r[0]: r[1:] for r in rows}


def test_the_applicant_makes_a_gm_norm(tmp_path: Path) -> None:
    got = norms_of(tmp_path, rr_trf())
    decision, clause, reason, hint, games, points, ra, p, dp, rp, raised, era, dropped, holds = got["GM"]
    assert (decision, games, float(points), ra, p, dp, rp, era, holds) == (
        "norm",
        9,
        7.0,
        2500,
        78,
        220,
        2720,
        "2024",
        False,
    )
    assert reason == "GM norm: Rp 2720 ≥ 2600, Ra 2500 ≥ 2380"
    assert got["IM"][0] == "norm" and got["IM"][-1] is True  # he holds IM
    assert got["WGM"][0] == "not_eligible"  # the file writes him 'm'


def test_opponent_outside_fide_federations_is_unknown(tmp_path: Path) -> None:
    # 1.4.2a: a code that is no FIDE federation (NON, a club code) is stored as no federation: the
    # game may not count, so the decision waits on that fact rather than guessing
    got = norms_of(tmp_path, rr_trf(fed={9: "NON"}))
    assert got["GM"][:3] == ("unknown", None, "unknown: the federation of 1 opponent(s) (1.4.3, 1.4.4)")


def test_a_forfeit_win_makes_eight_games_count_as_nine(tmp_path: Path) -> None:
    # 1.4.2c / 1.4.1c: the win against player 5 is a forfeit: 8 games over the board, 6/8 = 75 %,
    # dp 193; Ra (4·2500 + 4·2500) / 8 = 2500; Rp 2693; the forfeit round makes 8 games count as 9
    got = norms_of(tmp_path, rr_trf(results={(10, 5): "+"}))
    decision, clause, _, _, games, points, ra, p, dp, rp, *_ = got["GM"]
    assert (decision, clause, games, float(points), ra, p, dp, rp) == ("norm", "1.4.1c", 8, 6.0, 2500, 75, 193, 2693)


def test_unrated_loser_in_a_round_robin_does_not_count(tmp_path: Path) -> None:
    # 1.4.2b: player 9 unrated, untitled and losing every game: his game leaves the applicant's
    # set (the applicant's win against him included), 8 games, 1.4.1 fails
    losses = {(9, k): "0" for k in range(1, 11) if k != 9}
    got = norms_of(tmp_path, rr_trf(results={**losses, (10, 9): "1"}, rating={9: ""}, title={9: ""}))
    assert got["GM"][1] == "1.4.1" and got["GM"][4] == 8


def test_unrated_loser_counts_in_a_swiss(tmp_path: Path) -> None:
    # peer: TestRule_1_4_2b_RR_unrated_zero.test_unrated_opponent_zero_NOT_excluded_in_swiss: the same
    # unrated loser, in an event that is no round robin, stays: 9 games, the applicant 7½ (he
    # beats player 9); player 9 counts 1400, raised to 2200: Ra (8·2500 + 2200) / 9 = 2467;
    # 7½/9 = 83.3 % → 83, dp 273; Rp 2740
    losses = {(9, k): "0" for k in range(1, 11) if k != 9}
    got = norms_of(tmp_path, rr_trf(results={**losses, (10, 9): "1"}, rating={9: ""}, title={9: ""}, swiss=True))
    assert got["GM"][0] == "norm" and got["GM"][4:10] == (9, pytest.approx(7.5), 2467, 83, 273, 2740)


def test_one_unrated_opponent_is_raised_to_the_floor(tmp_path: Path) -> None:
    # player 9 unrated but drawing: not 1.4.2b; counts 1400 (2024), raised to the GM floor 2200:
    # (8·2500 + 2200) / 9 = 2466.7 → 2467; Rp 2467 + 220 = 2687. IM floor 2050: (20000 + 2050)/9
    # = 2450
    got = norms_of(tmp_path, rr_trf(rating={9: ""}, title={9: ""}))
    assert got["GM"][6:11] == (2467, 78, 220, 2687, None)
    assert got["IM"][6] == 2450


def test_too_few_gms_names_the_clause_and_the_remedy(tmp_path: Path) -> None:
    # only players 1 and 2 keep their GM title (the others IM): 1.4.5 needs max(ceil(9/3), 3) = 3
    got = norms_of(tmp_path, rr_trf(title={k: "IM" for k in range(3, 10)}))
    assert got["GM"][:4] == ("missed", "1.4.5", "1.4.5: 2 GMs among the opponents, 3 needed", "1 more GM")


def test_half_a_point_short(tmp_path: Path) -> None:
    # the applicant loses to player 1 instead of winning: 6/9 = 66.7 % → 67, dp 125, Rp 2625 still;
    # with two losses (players 1 and 2): 5/9 = 55.6 % → 56, dp 43, Rp 2543: 5.5/9 = 61.1 % → 61,
    # dp 80, Rp 2580; 6/9 → 2625: one point more
    got = norms_of(tmp_path, rr_trf(results={(10, 1): "0", (10, 2): "0"}))
    assert got["GM"][:4] == ("missed", "1.4.8", "1.4.8: Rp 2543 (Ra 2500 + dp 43 at 56 %), 2600 needed", "1 point more")


def test_federations_from_one_country(tmp_path: Path) -> None:
    # six opponents from FRA (players 1-6): 6 > floor(27/5) = 5 (1.4.4); the event is not all-FRA,
    # so no national championship can be assumed
    got = norms_of(tmp_path, rr_trf(fed={k: "FRA" for k in range(1, 7)}))
    assert got["GM"][:4] == (
        "missed",
        "1.4.4",
        "1.4.4: 6 opponents from the applicant's federation, at most 5 (3/5 of 9)",
        "1 more foreign opponent in place of FRA ones",
    )


def test_all_from_the_host_federation_is_unknown(tmp_path: Path) -> None:
    # every player of FRA, the host: the event may be the national championship's final (1.4.3a)
    got = norms_of(tmp_path, rr_trf(fed={k: "FRA" for k in range(1, 10)}))
    assert got["GM"][0] == "unknown" and "1.4.3a" in got["GM"][2]


@pytest.mark.parametrize(
    ("start", "end", "decision", "era"),
    [
        ("2017/06/20", "2017/06/28", "refused", None),
        ("2019/03/01", "2019/03/09", "norm", "2017"),
        ("2022/03/01", "2022/03/09", "norm", "2022"),
    ],
)
def test_eras(tmp_path: Path, start: str, end: str, decision: str, era: str | None) -> None:
    got = norms_of(tmp_path, rr_trf(start=start, end=end))
    assert (got["GM"][0], got["GM"][11]) == (decision, era)
    if decision == "refused":
        assert got["GM"][2] == "refused: the Title Regulations before 1 July 2017 are not implemented"


def _fide_list(path: Path, ratings: dict[int, int], titles: dict[int, str]) -> Path:
    rows = [
        [
            str(9000000 + p),
            f"Player{p:02d}, Test",
            FEDS[p - 1],
            "M",
            titles.get(p, ""),
            "",
            "",
            "",
            str(r),
            "9",
            "10",
            "1990",
            "",
        ]
        for p, r in ratings.items()
    ]
    path.write_text(fixed(STD, rows), encoding="utf-8")
    return path


def test_long_event_uses_the_list_of_each_games_day(tmp_path: Path) -> None:
    # 1.1.4: an event over 30 days (1 March - 5 May 2024, rounds 1-4 in March, 5-9 in May) takes
    # the opponents' ratings and titles of the list in force when each game was played. March
    # list: every opponent 2500; May list: 2600, and player 9 (an IM on the March list) a GM.
    rounds = {
        i + 1: d
        for i, d in enumerate(["24/03/01", "24/03/02", "24/03/03", "24/03/04"] + [f"24/05/0{k}" for k in range(1, 6)])
    }
    dates = "".join(f"{rounds[r]:<10}" for r in range(1, 10))
    text = rr_trf(start="2024/03/01", end="2024/05/05", title={9: "IM"}).replace(
        "092 Round Robin", "092 Round Robin\n132" + " " * 88 + dates
    )
    f = tmp_path / "event.trf"
    f.write_text(text, encoding="utf-8")
    db = tmp_path / "s.duckdb"
    ingest_paths([f], db)
    with open_writer(db) as con:
        base = {p: 2500 for p in range(1, 10)} | {10: 2400}
        import_list(
            con, _fide_list(tmp_path / "mar24.txt", base, {p: "GM" for p in range(1, 9)} | {9: "IM", 10: "IM"}), "fide"
        )
        may = {p: 2600 for p in range(1, 10)} | {10: 2400}
        import_list(con, _fide_list(tmp_path / "may24.txt", may, {p: "GM" for p in range(1, 10)} | {10: "IM"}), "fide")
        rate(con, "fide")
    con = duckdb.connect(str(db), read_only=True)
    try:
        got = con.execute(
            "SELECT ra, rp, norm_titles FROM v_norms WHERE name = 'Player10, Test' AND norm = 'GM'"
        ).fetchall()
    finally:
        con.close()
    # the applicant's round against player 9 and the rounds in May, from the circle schedule
    meets = {
        next(r for r, pairs in enumerate(schedule(), start=1) if (10, k) in pairs or (k, 10) in pairs): k
        for k in range(1, 10)
    }
    in_may = [k for r, k in meets.items() if r >= 5]
    # Ra = (4·2500 + 5·2600) / 9 = 23000 / 9 = 2555.6 → 2556; 7/9 → dp 220; Rp 2776. Player 9's
    # title: GM when met in May, IM when met in March
    assert len(in_may) == 5 and got[0][:2] == (2556, 2776)
    assert got[0][2] == (9 if 9 in in_may else 8)


def _swiss(n_foreign: int, *, feds: int = 3, masters: int = 10, absent: dict[int, list[int]] | None = None):
    """Frames for `_swiss_exemption`: a 9-round Swiss hosted by FRA, 4 FRA players and
    `n_foreign` rated foreigners over `feds` federations, the first `masters` of them GMs; `absent`
    {player: rounds without a game}."""
    import polars as pl

    players = list(range(1, 5 + n_foreign))
    fed = {p: "FRA" if p <= 4 else ["GER", "ESP", "ITA", "NED"][(p - 5) % feds] for p in players}
    title = {p: "GM" if 5 <= p < 5 + masters else "" for p in players}
    games = [(1, p, r, 2500) for p in players for r in range(1, 10) if r not in (absent or {}).get(p, [])]
    ev = pl.DataFrame({"tournament_id": [1], "host": ["FRA"], "rounds": [9], "round_robin": [False]})
    entries = pl.DataFrame(
        {"tournament_id": [1] * len(players), "player_id": players, "federation": [fed[p] for p in players],
         "title": [title[p] for p in players]}
    )  # fmt: skip
    g = pl.DataFrame(games, schema=["tournament_id", "player_id", "round", "ro"], orient="row")
    unplayed = pl.DataFrame(
        [(1, p, r, "U") for p, rs in (absent or {}).items() for r in rs if p == 5],
        schema=["tournament_id", "player_id", "round", "code"],
        orient="row",
    )
    return ev, entries, g, unplayed


def test_swiss_exemption_counts_every_round() -> None:
    # peer: TestRule_1_4_3d_eligibility (a missed round, two missed rounds, a PAB is no miss)
    from elopipe.rating.fide.norm_inputs import _swiss_exemption

    def ok(*args, **kw) -> bool:
        return bool(_swiss_exemption(*_swiss(*args, **kw))["swiss_143d"][0])

    assert ok(20)  # 20 foreign rated players of 3 federations, 10 GMs, every round
    assert not ok(19)  # 19
    assert not ok(20, feds=2)  # 2 federations
    assert not ok(20, masters=9)  # 9 GMs
    # player 20 (no GM) misses one round: still counted, but that round has 19 present
    assert not ok(20, absent={20: [3]})
    assert ok(21, absent={20: [3]})
    # player 20 misses two rounds: not counted at all (21 - 1 = 20 every round)
    assert ok(21, absent={20: [3, 4]})
    assert not ok(20, absent={20: [3, 4]})
    # player 5's missing rounds are pairing-allocated byes: present
    assert ok(20, absent={5: [3, 4]})


def test_round_robin_shape_counts_a_forfeit_as_a_meeting() -> None:
    import polars as pl

    from elopipe.rating.fide.norm_inputs import _shape

    # 4 players, 3 rounds, all pairs met once; the pair (1, 2) by forfeit only
    played = [(1, 3, 1), (2, 4, 1), (1, 4, 2), (2, 3, 2), (3, 4, 3)]
    games = pl.DataFrame(
        [(1, a, b, r) for a, b, r in played] + [(1, b, a, r) for a, b, r in played],
        schema={"tournament_id": pl.Int32, "player_id": pl.Int32, "opponent_id": pl.Int32, "round": pl.Int32},
        orient="row",
    )
    forfeit = pl.DataFrame(
        [(1, 1, 3, "+", 2), (1, 2, 3, "-", 1)],
        schema=["tournament_id", "player_id", "round", "code", "opponent_id"],
        orient="row",
    )
    assert _shape(games, forfeit.clear()).row(0) == (1, False, False)
    assert _shape(games, forfeit).row(0) == (1, True, False)


def test_pgn_titles_known_only_for_players_on_the_official_list(tmp_path: Path) -> None:
    # the event as a PGN results export with federations and FIDE IDs but no titles; the March
    # 2024 FIDE list names players 1-5 (GMs): their titles are known, the four others' are not,
    # so 1.4.5 waits on them (a blank is no title only where the file gives titles)
    names = {p: f"Player{p:02d}, Test" for p in range(1, N + 1)}
    games = []
    for rnd, pairs in enumerate(schedule(), start=1):
        for w, b in pairs:
            res = (
                "1-0"
                if (w, b) in {(10, k) for k in range(1, 6)}
                else "0-1"
                if (b, w) in {(10, k) for k in range(1, 6)}
                else "1/2-1/2"
            )
            tags = {
                "Event": "PGN Norm RR", "Site": "Paris FRA", "Date": f"2024.03.0{rnd}", "Round": str(rnd),
                "White": names[w], "Black": names[b], "Result": res,
                "WhiteElo": "2400" if w == 10 else "2500", "BlackElo": "2400" if b == 10 else "2500",
                "WhiteFideId": str(9000000 + w), "BlackFideId": str(9000000 + b),
                "WhiteFed": FEDS[w - 1], "BlackFed": FEDS[b - 1], "EventDate": "2024.03.01",
            }  # fmt: skip
            games.append("\n".join(f'[{k} "{v}"]' for k, v in tags.items()) + f"\n\n{res}\n")
    f = tmp_path / "rr.pgn"
    f.write_text("\n".join(games), encoding="utf-8")
    db = tmp_path / "s.duckdb"
    ingest_paths([f], db)
    with open_writer(db) as con:
        import_list(
            con,
            _fide_list(tmp_path / "feb24.txt", {p: 2500 for p in range(1, 6)}, {p: "GM" for p in range(1, 6)}),
            "fide",
        )
        rate(con, "fide")
    con = duckdb.connect(str(db), read_only=True)
    try:
        got = con.execute(
            "SELECT decision, reason FROM v_norms WHERE name = 'Player10, Test' AND norm = 'GM'"
        ).fetchall()
    finally:
        con.close()
    assert got == [("unknown", "unknown: the title of 4 opponent(s) (1.4.5)")]


def _rated_round_robin(tmp_path: Path) -> Path:
    """The store of the round robin `rr_trf()`, rated under FIDE rules."""
    f = tmp_path / "event.trf"
    f.write_text(rr_trf(), encoding="utf-8")
    db = tmp_path / "s.duckdb"
    ingest_paths([f], db)
    with open_writer(db) as con:
        rate(con, "fide")
    return db


def test_an_older_store_gets_its_norms_once_then_only_what_changes(tmp_path: Path) -> None:
    from elopipe.rating.fide import norms_store

    with open_writer(_rated_round_robin(tmp_path)) as con:
        rows = con.execute("SELECT count(*) FROM title_norms").fetchall()[0][0]
        assert rows == 40  # 10 players x 4 norms
        con.execute("DELETE FROM title_norms").fetchall()  # a store rated before norms were kept
        rate(con, "fide")  # nothing new to rate: the norms are decided once
        assert con.execute("SELECT count(*) FROM title_norms").fetchall()[0][0] == 40
        assert norms_store.refresh(con, "fide", []) == 0  # and not again


def test_rows_of_other_norm_code_are_decided_again(tmp_path: Path) -> None:
    from elopipe.rating.fide import norms_store

    with open_writer(_rated_round_robin(tmp_path)) as con:
        con.execute("UPDATE title_norms SET code = 'older rules', rp = 0").fetchall()
        assert norms_store.refresh(con, "fide", []) == 40
        assert con.execute("SELECT DISTINCT code, min(rp) > 0 FROM title_norms GROUP BY 1").fetchall() == [
            (norms_store.code_fingerprint(), True)
        ]


def test_norms_decided_in_batches_are_those_of_all_events_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`refresh` decides the events in batches of a bounded number of entries (issue 27: memory
    bounded by a batch, not by the history); every row is the one an evaluation of all the
    events at once gives."""
    from elopipe.rating.fide import norms_store
    from elopipe.store.frames import registered
    from tests.helpers.paths import SHARED_DATA

    db = tmp_path / "s.duckdb"
    ingest_paths([SHARED_DATA / "trf"], db)
    batches: list[int] = []
    evaluate = norms_store.evaluate_events

    def spy(
        con: duckdb.DuckDBPyConnection, tids: list[int], system: str, **kw: Any
    ) -> tuple[pl.DataFrame, pl.DataFrame]:
        batches.append(len(tids))
        return evaluate(con, tids, system, **kw)

    monkeypatch.setattr(norms_store, "BATCH_ENTRIES", 150)
    monkeypatch.setattr(norms_store, "evaluate_events", spy)
    with open_writer(db) as con:
        rate(con, "fide")
        cols = ", ".join(norms_store.NORM_SCHEMA)
        stored = sorted(con.execute(f"SELECT {cols} FROM title_norms").fetchall(), key=repr)
        sizes = con.execute(
            "SELECT max(n) FROM (SELECT count(*) AS n FROM tournament_ratings GROUP BY tournament_id)"
        ).fetchall()[0][0]
        tids = [r[0] for r in con.execute("SELECT DISTINCT tournament_id FROM tournament_ratings").fetchall()]
        at_once = evaluate(con, tids, "fide")[0]
        with registered(con, "_at_once", at_once):
            expected = sorted(con.execute(f"SELECT {cols} FROM _at_once").fetchall(), key=repr)
    # several batches, of several events where they fit, and one event alone when it is larger
    assert len(batches) > 1 and sum(batches) == len(tids) and max(batches) > 1 and sizes > 150
    assert stored == expected


def test_refresh_rewrites_only_the_events_whose_rows_differ(tmp_path: Path) -> None:
    """An event's norm rows are written again only when they differ from the stored ones (issue
    27: DuckDB's checkpoint rewrote every row of a list's events), and decided again only when
    its inputs or its stored rows changed; the rows are those a full rewrite leaves."""
    from elopipe.rating.fide import norms_store

    with open_writer(_rated_round_robin(tmp_path)) as con:
        cols = ", ".join(norms_store.NORM_SCHEMA)
        stored = con.execute(f"SELECT rowid, {cols} FROM title_norms ORDER BY ALL").fetchall()
        dates = sorted({r[0] for r in con.execute("SELECT list_date FROM title_norms").fetchall()})
        assert norms_store.refresh(con, "fide", dates) == 0  # nothing changed: nothing decided
        assert con.execute(f"SELECT rowid, {cols} FROM title_norms ORDER BY ALL").fetchall() == stored
        con.execute("UPDATE title_norms SET rp = 0 WHERE player_id = (SELECT max(player_id) FROM title_norms)")
        con.execute("INSERT INTO title_norms SELECT * REPLACE (tournament_id + 1000 AS tournament_id) FROM title_norms")
        assert norms_store.refresh(con, "fide", dates) == 40
        again = con.execute(f"SELECT {cols} FROM title_norms ORDER BY ALL").fetchall()
        assert again == [r[1:] for r in sorted(stored, key=lambda r: r[1:])]


def test_an_event_whose_facts_changed_is_decided_again(tmp_path: Path) -> None:
    """An event's rows are kept only while what they were decided from is unchanged (the digest in
    ``inputs``): a title changed in its file (ratings and lists unchanged) decides it again, and its
    rows are those an evaluation of the store as it now is gives."""
    from elopipe.rating.fide import norms_store
    from elopipe.store.frames import registered

    with open_writer(_rated_round_robin(tmp_path)) as con:
        cols = ", ".join(norms_store.NORM_SCHEMA)
        before = con.execute(f"SELECT {cols} FROM title_norms ORDER BY ALL").fetchall()
        dates = sorted({r[0] for r in con.execute("SELECT list_date FROM title_norms").fetchall()})
        assert norms_store.refresh(con, "fide", dates) == 0
        assert con.execute(
            "UPDATE tournament_players SET title = 'IM' WHERE start_rank = 2 AND title = 'GM'"
        ).fetchall() == [(1,)]
        assert norms_store.refresh(con, "fide", dates) == 40
        after = con.execute(f"SELECT {cols} FROM title_norms ORDER BY ALL").fetchall()
        tids = [r[0] for r in con.execute("SELECT DISTINCT tournament_id FROM tournament_ratings").fetchall()]
        with registered(con, "_now", norms_store.evaluate_events(con, tids, "fide")[0]):
            expected = con.execute(f"SELECT {cols} FROM _now ORDER BY ALL").fetchall()
    assert after == expected != before
