"""`--system ffe` / `ffe-rapid` over a store built by direct inserts: lists, details, reasons."""

from __future__ import annotations

import polars as pl
import pytest

from elopipe.rating import store_io
from elopipe.rating.ffe.rapid import RAPID
from elopipe.rating.ffe.run import run_ffe
from elopipe.store.connect import open_writer
from tests.helpers.ffe_store import build_store, d


def q(con, sql: str) -> pl.DataFrame:
    return store_io._pl(con, sql)


@pytest.fixture
def v1_store(tmp_path):
    """Seed 000 example: a national 1600 (flag N) meets five FIDE-rated opponents; one
    forfeit against a player whose national value is only an estimate (E)."""
    opp = {2: 1790, 3: 1900, 4: 2000, 5: 1450, 6: 1860}
    entries = {1: (None, 1600, "N"), 7: (None, 1499, "E"), **{k: (v, None, None) for k, v in opp.items()}}
    games = [
        (1, 1, 2, "1-0", d("2023-10-01"), True),
        (2, 3, 1, "1-0", d("2023-10-02"), True),
        (3, 1, 4, "0-1", d("2023-10-03"), True),
        (4, 5, 1, "0-1", d("2023-10-04"), True),
        (5, 1, 6, "1/2-1/2", d("2023-10-05"), True),
        (6, 1, 7, "1-0", d("2023-10-06"), False),
    ]  # fmt: skip
    ev = dict(tournament_id=1, name="Open", start=d("2023-10-01"), end=d("2023-10-06"),
              time_control="90 min + 30 sec", entries=entries, games=games)  # fmt: skip
    blitz = dict(tournament_id=2, name="Blitz", start=d("2023-10-07"), end=d("2023-10-07"),
                 time_control="3 min + 2 sec", entries={1: (None, 1600, "N"), 2: (1790, None, None)},
                 games=[(7, 1, 2, "1-0", d("2023-10-07"), True)])  # fmt: skip
    return build_store(tmp_path / "s.duckdb", [(i, f"P{i}", 1980) for i in range(1, 8)], [ev, blitz])


def test_seed_example_through_the_store(v1_store):
    with open_writer(v1_store) as con:
        summary, _ = run_ffe(con)
        det = q(con, "SELECT * FROM ffe_details WHERE system = 'ffe' AND player_id = 1").row(0, named=True)
        lst = q(con, "SELECT * FROM rating_lists WHERE system = 'ffe' AND player_id = 1")
        why = q(con, "SELECT game_id, counted, reason, ro, rc, d_raw FROM rating_changes "
                     "WHERE system = 'ffe' AND player_id = 1 ORDER BY game_id")  # fmt: skip
        skips = q(con, "SELECT * FROM rating_skips WHERE system = 'ffe'")
    assert str(det["list_date"]) == "2024-01-01"  # Sep-Dec games -> January list
    assert (det["r_old"], det["r_source"], det["n_compatible"], det["n_incompatible"]) == (
        1600, "N-file", 4, 1)  # fmt: skip
    assert (float(det["x"]), float(det["p"]), float(det["z"]), float(det["perf"])) == (
        1750.0, 0.625, 91.0, 1841.0)  # fmt: skip
    assert (det["method"], det["r_new"], det["young"]) == ("up_brake", 1660, False)
    assert lst["rating"].to_list() == [1660] and lst["change"].to_list() == [60]
    reasons = dict(zip(why["game_id"], why["reason"], strict=True))
    assert reasons == {1: None, 2: None, 3: "incompatible", 4: None, 5: None, 6: "forfeit"}
    inc = why.filter(pl.col("game_id") == 3).row(0, named=True)
    assert (inc["ro"], inc["rc"], inc["d_raw"], inc["counted"]) == (1600, 2000, -400, False)
    assert skips.select("tournament_id", "reason").rows() == [(2, "not_this_rate_class")]
    assert summary.not_counted["incompatible"] == 2  # both sides of 1 vs 2000
    # the estimated 1499E is never a rating: player 7 does not appear on the list
    with open_writer(v1_store) as con:
        assert q(con, "SELECT * FROM rating_lists WHERE player_id = 7").height == 0


def _v20_store(path, second_date):
    p1 = [(1700, "1-0"), (1750, "1/2-1/2"), (1800, "0-1"), (1650, "1-0"), (2300, "0-1"),
          (1850, "1/2-1/2"), (1600, "1-0"), (1900, "0-1")]  # fmt: skip
    p2 = [(1750, "1-0"), (1800, "1/2-1/2")]
    players = [(100, "New", 1990)] + [(200 + i, f"O{i}", 1970) for i in range(10)]
    ev1 = dict(tournament_id=1, name="Autumn", start=d("2023-10-01"), end=d("2023-10-08"),
               time_control="5400+30",
               entries={100: (None, None, None), **{200 + i: (r, None, None) for i, (r, _) in enumerate(p1)}},
               games=[(i + 1, 100, 200 + i, res, d("2023-10-01"), True) for i, (_r, res) in enumerate(p1)])  # fmt: skip
    ev2 = dict(tournament_id=2, name="Later", start=second_date, end=second_date,
               time_control="5400+30",
               entries={100: (None, None, None), 208: (1750, None, None), 209: (1800, None, None)},
               games=[(20 + i, 100, 208 + i, res, second_date, True)
                      for i, (_r, res) in enumerate(p2)])  # fmt: skip
    return build_store(path, players, [ev1, ev2])


def test_first_rating_from_archive_across_periods(tmp_path):
    """V20 in the store: 7 compatible games in autumn (archived), 2 in winter -> 1840."""
    db = _v20_store(tmp_path / "v20.duckdb", d("2024-02-01"))
    with open_writer(db) as con:
        run_ffe(con)
        det = q(con, "SELECT list_date, method, n_compatible, n_incompatible, perf, archive_n, "
                     "archive_perf, r_new, passes FROM ffe_details WHERE player_id = 100 ORDER BY 1")  # fmt: skip
        lists = q(con, "SELECT list_date, rating, flags FROM rating_lists "
                       "WHERE system = 'ffe' AND player_id = 100 ORDER BY 1")  # fmt: skip
        out = q(con, "SELECT reason FROM rating_changes WHERE player_id = 100 AND NOT counted")
    first, second = det.rows(named=True)
    assert (first["method"], first["n_compatible"], first["n_incompatible"]) == ("archived", 7, 1)
    assert (float(first["perf"]), first["archive_n"], float(first["archive_perf"])) == (1801.0, 7, 1801.0)
    assert first["passes"] >= 2
    assert (second["method"], float(second["perf"]), second["r_new"]) == ("first_combined", 1968.0, 1840)
    assert lists.rows() == [(d("2024-01-01"), None, "archived"), (d("2024-05-01"), 1840, "N new")]
    assert out["reason"].to_list() == ["incompatible"]  # the loss to 2300


def test_fide_rating_has_priority_over_national(tmp_path):
    entries = {1: (1700, 1600, "N"), 2: (1700, None, None)}
    ev = dict(tournament_id=1, name="E", start=d("2024-01-10"), end=d("2024-01-10"),
              time_control="5400", entries=entries, games=[(1, 1, 2, "1/2-1/2", d("2024-01-10"), True)])  # fmt: skip
    db = build_store(tmp_path / "f.duckdb", [(1, "A", 1980), (2, "B", 1980)], [ev])
    with open_writer(db) as con:
        run_ffe(con)
        src = q(con, "SELECT r_old, r_source FROM ffe_details WHERE player_id = 1").row(0)
        no_prio, _ = run_ffe(con, fide_priority=False, write=False)
    assert src == (1700, "F")
    assert no_prio.players_rated == 2


def test_ffe_rapid_monthly_with_standard_credit(tmp_path):
    """E02: rapid games only, monthly lists; a player without a rapid rating is credited with
    the standard rating of the 'ffe' list (R5's opponent at 1600)."""
    standard = dict(tournament_id=1, name="Std", start=d("2023-10-01"), end=d("2023-10-01"),
                    time_control="5400+30", entries={2: (None, 1600, "N"), 9: (None, 1600, "N")},
                    games=[(1, 2, 9, "1/2-1/2", d("2023-10-01"), True)])  # fmt: skip
    rapid = dict(tournament_id=2, name="Rapide", start=d("2024-03-02"), end=d("2024-03-02"),
                 time_control="15 min + 5 sec",
                 entries={1: (None, 1300, "N"), 2: (None, None, None), 3: (None, 1350, "N")},
                 games=[(2, 1, 2, "1/2-1/2", d("2024-03-02"), True),
                        (3, 1, 3, "1-0", d("2024-03-02"), True)])  # fmt: skip
    db = build_store(tmp_path / "r.duckdb", [(1, "A", 1980), (2, "B", 1980), (3, "C", 1980), (9, "D", 1980)],
                     [standard, rapid])  # fmt: skip
    with open_writer(db) as con:
        run_ffe(con)  # the standard list first: player 2 -> 1600
        summary, _ = run_ffe(con, RAPID)
        det = q(con, "SELECT * FROM ffe_details WHERE system = 'ffe-rapid' ORDER BY player_id")
        skips = q(con, "SELECT tournament_id, reason FROM rating_skips WHERE system = 'ffe-rapid'")
        both = q(con, "SELECT system, count(*) AS n FROM rating_lists GROUP BY 1 ORDER BY 1")
    p1 = det.filter(pl.col("player_id") == 1).row(0, named=True)
    assert str(p1["list_date"]) == "2024-04-01"  # March games -> the April monthly list
    assert (float(p1["x"]), float(p1["perf"]), p1["r_new"]) == (1475.0, 1668.0, 1410)  # R5
    p2 = det.filter(pl.col("player_id") == 2).row(0, named=True)
    assert (p2["r_old"], p2["r_source"]) == (1600, "standard")
    assert skips.rows() == [(1, "not_this_rate_class")]
    assert both["system"].to_list() == ["ffe", "ffe-rapid"]  # side by side
    assert summary.lists == 1


def test_unknown_time_control_policy(tmp_path):
    ev = dict(tournament_id=1, name="?", start=d("2024-03-02"), end=d("2024-03-02"),
              time_control=None, entries={1: (1500, None, None), 2: (1500, None, None)},
              games=[(1, 1, 2, "1-0", d("2024-03-02"), True)])  # fmt: skip
    db = build_store(tmp_path / "u.duckdb", [(1, "A", 1980), (2, "B", 1980)], [ev])
    with open_writer(db) as con:
        excluded, _ = run_ffe(con, RAPID, write=False)
        included, frames = run_ffe(con, RAPID, unknown_tc="rapid", write=False)
        classic, cframes = run_ffe(con, write=False)
    assert excluded.lists == 0 and excluded.events_skipped == {"not_this_rate_class": 1}
    assert included.lists == 1
    assert frames["rating_changes"]["tc_assumed"].to_list() == [True, True]
    assert classic.lists == 1 and cframes["rating_changes"]["tc_assumed"].all()


def test_registry_options_through_and_errors(v1_store):
    from elopipe.rating.run import rate

    with open_writer(v1_store) as con:
        s = rate(con, "ffe", rules="logistic", strict_boundary=True)
        assert s.lists == 1 and s.first_list == d("2024-01-01")
        det = q(con, "SELECT r_new, z FROM ffe_details WHERE system = 'ffe' AND player_id = 1").row(0)
        assert det[0] == 1660 and float(det[1]) == pytest.approx(88.74, abs=0.01)  # V1 logistic
        params = store_io._pl(con, "SELECT params FROM rating_runs WHERE run_id = ?", [s.run_id])
        assert '"z_mode": "logistic"' in params.item()
        none = rate(con, "ffe", through=d("2023-12-01"))
        assert none.lists == 0
        with pytest.raises(ValueError):
            rate(con, "ffe", rules="V2024")
        with pytest.raises(ValueError):
            rate(con, "ffe", colour="white")
        with pytest.raises(ValueError):
            rate(con, "ffe", unrated_opponents="guess")


def test_cli_rate_ffe_with_param(v1_store):
    from typer.testing import CliRunner

    from elopipe.cli.main import app

    args = ["rate", "--system", "ffe", "--scenario", "strict", "--db", str(v1_store)]
    out = CliRunner().invoke(app, [*args, "--param", "strict_boundary=true"])
    assert out.exit_code == 0, out.output
    query = (
        "SELECT reason, count(*) AS sides FROM rating_changes WHERE system = 'ffe@strict' AND NOT counted"
        " GROUP BY 1 ORDER BY 2 DESC"
    )
    said = [x for x in out.output.splitlines() if x.startswith("game sides not counted: ")]
    assert said == [
        "game sides not counted: 2 forfeit or not played, 2 incompatible: an expected result, too far apart"
        f' (`elopipe sql "{query}" --db {v1_store}` counts them by code)'
    ], out.output
    bad = CliRunner().invoke(app, [*args, "--param", "x"])
    assert bad.exit_code == 2


def test_archive_expires_after_the_next_season(tmp_path):
    """Spec A.6.4: archived in season 2023-24, usable through 2024-25, lost in 2025-26."""
    kept = _v20_store(tmp_path / "kept.duckdb", d("2025-08-01"))  # season 2024-25
    lost = _v20_store(tmp_path / "lost.duckdb", d("2025-09-02"))  # season 2025-26
    with open_writer(kept) as con:
        run_ffe(con)
        k = q(con, "SELECT method, r_new FROM ffe_details WHERE player_id = 100 ORDER BY list_date")
    with open_writer(lost) as con:
        run_ffe(con)
        lo = q(con, "SELECT method, archive_n FROM ffe_details WHERE player_id = 100 ORDER BY list_date")
    assert k.rows() == [("archived", None), ("first_combined", 1840)]
    assert lo.rows() == [("archived", 7), ("archived", 2)]


def test_a_file_value_under_the_floor_is_no_rating(tmp_path):
    """Spec A.4: no published classic rating falls below 1000, so a file's national 630 (an
    Irish '0630') or FIDE 980 is no FFE rating: the player is unrated (r_source 'below_floor')
    and no list shows a rating under 1000."""
    entries = {1: (None, 630, None), 2: (980, None, None), 3: (1500, None, None), 4: (1600, None, None)}
    games = [(1, 1, 3, "1/2-1/2", d("2024-01-10"), True), (2, 2, 4, "1/2-1/2", d("2024-01-10"), True),
             (3, 3, 4, "1/2-1/2", d("2024-01-11"), True)]  # fmt: skip
    ev = dict(tournament_id=1, name="E", start=d("2024-01-10"), end=d("2024-01-11"),
              time_control="5400", entries=entries, games=games)  # fmt: skip
    db = build_store(tmp_path / "f.duckdb", [(i, f"P{i}", 1980) for i in range(1, 5)], [ev])
    with open_writer(db) as con:
        run_ffe(con)
        det = q(con, "SELECT player_id, r_old, r_source, method FROM ffe_details ORDER BY player_id")
        low = q(con, "SELECT * FROM rating_lists WHERE system = 'ffe' AND rating < 1000")
    assert det.rows()[:2] == [(1, None, "below_floor", "archived"), (2, None, "below_floor", "archived")]
    assert det.rows()[2][1:3] == (1500, "F")
    assert low.height == 0


def test_a_cycling_first_rating_loop_is_flagged_and_counted(tmp_path):
    """Spec A.6's loop cycles for player 1 (L2346 D2107 D2153 L2147, Karl-Mala 2005): the row of
    ffe_details says so (cycled, passes 2) and the run counts the player (one line of `rate`)."""
    opp = {2: 2346, 3: 2107, 4: 2153, 5: 2147}
    res = {2: "0-1", 3: "1/2-1/2", 4: "1/2-1/2", 5: "0-1"}
    ev = dict(tournament_id=1, name="E", start=d("2005-07-23"), end=d("2005-07-29"), time_control="5400",
              entries={1: (None, None, None), **{k: (v, None, None) for k, v in opp.items()}},
              games=[(k, 1, k, res[k], d("2005-07-23"), True) for k in opp])  # fmt: skip
    db = build_store(tmp_path / "c.duckdb", [(i, f"P{i}", 1980) for i in range(1, 6)], [ev])
    with open_writer(db) as con:
        summary, _ = run_ffe(con)
        row = q(con, "SELECT n_compatible, n_incompatible, archive_n, archive_perf, passes, cycled "
                     "FROM ffe_details WHERE player_id = 1").row(0)  # fmt: skip
        others = q(con, "SELECT DISTINCT cycled FROM ffe_details WHERE player_id <> 1")
    assert row[:3] == (3, 1, 3) and float(row[3]) == 2013.33 and row[4:] == (2, True)
    assert others["cycled"].to_list() == [None]  # rated players: no loop
    assert summary.loop_cycles == 1
