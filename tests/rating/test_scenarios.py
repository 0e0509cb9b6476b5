"""What-if scenarios (`elopipe.rating.scenarios`) and the `--through` preview, over a real store:
a scenario never changes the plain lists, dropping one removes only its rows, a preview keeps
the later lists and the next full run brings them up to date."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import duckdb
import pytest

from elopipe.ingest.driver import ingest_paths
from elopipe.rating import param_checks, scenarios
from elopipe.rating.fide.run import load_inputs
from elopipe.rating.result_tables import STALE_DIGEST
from elopipe.rating.run import rate
from elopipe.store.connect import open_writer
from tests.helpers.paths import REPO

DATA = REPO.parent / "shared" / "data" / "trf"
MASTERS = DATA / "irl_bunratty_masters_2011_crlf.trf"  # rated on the 2011-05 list
KILKENNY = DATA / "irl_kilkenny_masters_2011_gms_national_ids.trf"  # rated on the 2012-01 list
GALWAY = DATA / "irl_galway_major_2011_partial_birthdates.trf"  # the 2011-11 list; changes 2012-01

pytestmark = pytest.mark.skipif(not DATA.exists(), reason="../shared/data is not available")


def _store(path: Path, files: list[Path]) -> Path:
    for f in files:
        ingest_paths([f], path)
    return path


def _digest(con: duckdb.DuckDBPyConnection, table: str, system: str) -> tuple[int, str]:
    """(rows, md5 of every column of every row) of `table` for `system`, in a fixed order."""
    n, h = con.execute(
        f"SELECT count(*), md5(coalesce(string_agg(t::VARCHAR, ';' ORDER BY t::VARCHAR), '')) FROM {table} t"
        " WHERE system = ?",
        [system],
    ).fetchall()[0]
    return int(n), str(h)


def _every_table(con: duckdb.DuckDBPyConnection, system: str) -> dict[str, tuple[int, str]]:
    return {t: _digest(con, t, system) for t in scenarios.system_tables(con)}


def _lists_by_identity(con: duckdb.DuckDBPyConnection, system: str, after: dt.date | None = None) -> list[tuple]:
    """rating_lists of `system` keyed by player identity (ids depend on the ingestion order)."""
    return con.execute(
        """
        SELECT l.list_date, coalesce(p.fide_id::VARCHAR, p.name_key) AS who, l.rating, l.games,
               l.total_games, l.k, l.change, l.flags
        FROM rating_lists l JOIN players p USING (player_id)
        WHERE l.system = ? AND l.list_date > ? ORDER BY ALL
        """,
        [system, after or dt.date.min],
    ).fetchall()


def test_a_scenario_leaves_the_plain_lists_byte_identical(tmp_path: Path) -> None:
    db = _store(tmp_path / "s.duckdb", [MASTERS, KILKENNY])
    with open_writer(db) as con:
        rate(con, "fide")
        before = _every_table(con, "fide")
        s = rate(con, "fide@V2017", rules="V2017", check_time_minimum=False)
        after = _every_table(con, "fide")
        assert after == before
        assert before["rating_lists"][0] > 0
        # the scenario has its own rows, under its folded key, and they differ from the plain ones
        assert s.system == "fide@v2017" and s.lists == 5
        assert _digest(con, "rating_lists", "fide@v2017")[0] > 0
        assert _lists_by_identity(con, "fide@v2017") != _lists_by_identity(con, "fide")
        row = con.execute("SELECT name, base_system, rules, params, through FROM scenarios").fetchall()
        assert row == [("v2017", "fide", "V2017", json.dumps({"check_time_minimum": False}), None)]
        # a plain run after it still finds nothing to do: the scenario did not touch its digests
        assert rate(con, "fide").first_changed is None


def test_dropping_a_scenario_removes_only_its_rows(tmp_path: Path) -> None:
    db = _store(tmp_path / "s.duckdb", [MASTERS, KILKENNY])
    with open_writer(db) as con:
        rate(con, "fide")
        rate(con, "fide@a", rules="V2017")
        rate(con, "fide@b", rules="V2022")
        rate(con, "fide-rapid@a", rules="V2017")
        kept = {s: _every_table(con, s) for s in ("fide", "fide@b")}
        assert all(n for n, _ in (kept["fide@b"][t] for t in ("rating_lists", "rating_runs", "scenarios")))
        deleted = scenarios.drop(con, "A")
        assert deleted["scenarios"] == 2 and deleted["rating_lists"] == _lists_count(kept, "fide@b")
        assert {s: _every_table(con, s) for s in ("fide", "fide@b")} == kept
        for system in ("fide@a", "fide-rapid@a"):
            assert all(n == 0 for n, _ in _every_table(con, system).values())
        # one system of a scenario only
        scenarios.drop(con, "fide@b")
        assert _every_table(con, "fide") == kept["fide"]
        assert con.execute("SELECT count(*) FROM rating_lists WHERE contains(system, '@')").fetchall() == [(0,)]
        with pytest.raises(scenarios.NoSuchScenario, match="no scenario 'a'"):
            scenarios.drop(con, "a")


def _lists_count(kept: dict[str, dict[str, tuple[int, str]]], system: str) -> int:
    # fide@a and fide@b rate the same games on the same calendar: as many list rows
    return kept[system]["rating_lists"][0]


def test_through_keeps_the_later_lists_and_the_next_full_run_brings_them_up_to_date(tmp_path: Path) -> None:
    db = _store(tmp_path / "s.duckdb", [MASTERS, KILKENNY])
    with open_writer(db) as con:
        rate(con, "fide")
        later = _lists_by_identity(con, "fide", after=dt.date(2011, 11, 1))
        assert later  # the 2012-01 list
    _store(db, [GALWAY])  # a late file for the 2011-11 period
    with open_writer(db) as con:
        preview = rate(con, "fide", through="2011-11")
        assert preview.first_changed == dt.date(2011, 11, 1) and preview.changed_lists == [dt.date(2011, 11, 1)]
        assert preview.kept_lists == [dt.date(2012, 1, 1)]
        assert _lists_by_identity(con, "fide", after=dt.date(2011, 11, 1)) == later
        # the kept list was computed from the old 2011-11 list: its digest marks it stale
        stale = con.execute(
            "SELECT list_date, digest FROM rating_period_digests"
            " WHERE system = 'fide' AND list_date > DATE '2011-11-01'"
        ).fetchall()
        assert stale == [(dt.date(2012, 1, 1), STALE_DIGEST)]
        full = rate(con, "fide")
        assert full.changed_lists == [dt.date(2012, 1, 1)] and full.kept_lists == []
        got = _lists_by_identity(con, "fide")
        assert _lists_by_identity(con, "fide", after=dt.date(2011, 11, 1)) != later
    fresh = _store(tmp_path / "fresh.duckdb", [MASTERS, KILKENNY, GALWAY])
    with open_writer(fresh) as con:
        rate(con, "fide")
        assert _lists_by_identity(con, "fide") == got


def test_a_kept_list_no_game_is_rated_on_any_more_goes_at_the_next_full_run(tmp_path: Path) -> None:
    """A September event corrected to April: the preview to May keeps the lists of June to
    October, computed from September's games; the full run after it removes the four that no
    game is rated on any more (they stayed, and were published: a hostile tester's store) and
    equals a fresh store of the corrected files."""
    from tests.helpers.trf_build import round_robin

    may, event = tmp_path / "may.trf", tmp_path / "autumn.trf"
    may.write_text(round_robin("2023/05/02", "2023/05/06", name="May Open"), encoding="utf-8")
    event.write_text(round_robin("2023/09/04", "2023/09/08", "=", name="Autumn Cup"), encoding="utf-8")
    db = _store(tmp_path / "s.duckdb", [may, event])
    with open_writer(db) as con:
        rate(con, "fide")
    event.write_text(round_robin("2023/04/03", "2023/04/07", "=", name="Autumn Cup"), encoding="utf-8")
    _store(db, [event])  # the same file corrected: its games move to April
    with open_writer(db) as con:
        preview = rate(con, "fide", through="2023-05")
        assert preview.kept_lists == [dt.date(2023, m, 1) for m in range(6, 11)]
        full = rate(con, "fide")
        assert full.removed_lists == [dt.date(2023, m, 1) for m in range(7, 11)]
        got = _lists_by_identity(con, "fide")
        dates = con.execute("SELECT DISTINCT list_date FROM rating_lists WHERE system = 'fide' ORDER BY 1").fetchall()
        assert dates == [(dt.date(2023, 5, 1),), (dt.date(2023, 6, 1),)]
    fresh = _store(tmp_path / "fresh.duckdb", [may, event])
    with open_writer(fresh) as con:
        rate(con, "fide")
        assert _lists_by_identity(con, "fide") == got


def test_a_scenario_preview_then_its_full_run_equals_a_fresh_scenario(tmp_path: Path) -> None:
    db = _store(tmp_path / "s.duckdb", [MASTERS, KILKENNY])
    with open_writer(db) as con:
        rate(con, "fide@x", rules="V2022")
        old_later = _lists_by_identity(con, "fide@x", after=dt.date(2011, 5, 1))
    _store(db, [GALWAY])  # a late file for the 2011-11 period: the later lists are stale
    with open_writer(db) as con:
        rate(con, "fide@x", through=dt.date(2011, 5, 1))  # rated under its definition: V2022
        assert _lists_by_identity(con, "fide@x", after=dt.date(2011, 5, 1)) == old_later
        assert con.execute("SELECT rules, through FROM scenarios WHERE system = 'fide@x'").fetchall() == [
            ("V2022", dt.date(2011, 5, 1))
        ]
        rate(con, "fide@x")
        rate(con, "fide@y", rules="V2022")
        assert _lists_by_identity(con, "fide@x") == _lists_by_identity(con, "fide@y") != old_later


def test_a_scenario_keeps_its_definition(tmp_path: Path) -> None:
    db = _store(tmp_path / "s.duckdb", [MASTERS, KILKENNY])
    with open_writer(db) as con:
        rate(con, "fide@x", rules="v2017", check_time_minimum=False, defaults={"no_moves": "played"})
        defined = con.execute("SELECT rules, params FROM scenarios WHERE system = 'fide@x'").fetchall()
        assert defined == [("V2017", '{"check_time_minimum": false, "no_moves": "played"}')]
        first = _lists_by_identity(con, "fide@x")
        # run again with no options, or with the same ones: its definition, whatever the defaults say
        rate(con, "fide@x", defaults={"no_moves": "unrated"})
        rate(con, "FIDE@X", rules="V2017", check_time_minimum=False)
        assert con.execute("SELECT rules, params FROM scenarios WHERE system = 'fide@x'").fetchall() == defined
        runs = con.execute("SELECT DISTINCT rules_forced, params FROM rating_runs WHERE system = 'fide@x'").fetchall()
        assert [r[0] for r in runs] == ["V2017"] and all('"unrated"' not in r[1] for r in runs)
        assert _lists_by_identity(con, "fide@x") == first
        for rules, params, says in (
            ("V2022", {}, "defined with --rules V2017;"),
            (None, {"check_time_minimum": True}, "defined with --param check_time_minimum=false;"),
            (None, {"rating_from": "2010-01-01"}, "defined with no --param rating_from;"),
            (None, {"no_moves": "forfeit"}, "defined with --no-moves played;"),
            (None, {"v2022_cap_lower": True}, "defined with no --v2022-cap-lower;"),
        ):
            with pytest.raises(scenarios.ScenarioConflict, match=f"^scenario x is {says}") as caught:
                rate(con, "fide@x", rules=rules, **params)
            assert str(caught.value).endswith("drop it first (elopipe scenarios drop fide@x) or choose another name")
            assert caught.value.exit_code == 2
        assert con.execute("SELECT rules, params FROM scenarios WHERE system = 'fide@x'").fetchall() == defined
        assert _lists_by_identity(con, "fide@x") == first
        # a scenario by date refuses forced rules the same way
        rate(con, "fide@bydate")
        with pytest.raises(scenarios.ScenarioConflict, match="defined with the rules by date"):
            rate(con, "fide@bydate", rules="V2024")


def test_rules_names_fold_and_a_bad_one_is_a_usage_error(tmp_path: Path) -> None:
    db = _store(tmp_path / "s.duckdb", [MASTERS])
    with open_writer(db) as con:
        for bad, says in (("V1999", "unknown FIDE rules version V1999"), ("x", "unknown FIDE rules version x")):
            with pytest.raises(param_checks.ParamError, match=says) as caught:
                rate(con, "fide@x", rules=bad)
            assert caught.value.exit_code == 2
        with pytest.raises(param_checks.ParamError, match="glicko2: --rules does not apply"):
            rate(con, "glicko2@x", rules="V2017")
        assert con.execute("SELECT count(*) FROM scenarios").fetchall() == [(0,)]
        rate(con, "ffe@z", rules="LOGISTIC")
        assert con.execute("SELECT rules FROM scenarios WHERE system = 'ffe@z'").fetchall() == [("logistic",)]


def test_the_national_engines_keep_the_later_lists_on_a_preview(tmp_path: Path) -> None:
    db = _store(tmp_path / "s.duckdb", [MASTERS, KILKENNY])
    with open_writer(db) as con:
        for system in ("elo", "ffe@x", "glicko2"):
            rate(con, system)
            before = _lists_by_identity(con, system, after=dt.date(2011, 5, 1))
            assert before
            s = rate(con, system, through="2011-05")
            assert s.kept_lists and _lists_by_identity(con, system, after=dt.date(2011, 5, 1)) == before


def test_a_rapid_scenario_reads_the_standard_lists_of_its_own_scenario(tmp_path: Path) -> None:
    db = _store(tmp_path / "s.duckdb", [MASTERS, KILKENNY])
    with open_writer(db) as con:
        rate(con, "fide")
        plain = load_inputs(con, "fide-rapid").standard_lists
        alone = load_inputs(con, "fide-rapid@x").standard_lists
        assert plain is not None and plain.height > 0
        assert alone is not None and alone.height == 0  # no fide@x yet, no official list
        assert scenarios.missing_standard(con, "fide-rapid@x") == ["fide@x"]
        assert scenarios.missing_standard(con, "ffe-rapid@x") == ["ffe@x", "fide@x"]
        assert scenarios.missing_standard(con, "fide-rapid") == scenarios.missing_standard(con, "fide@x") == []
        rate(con, "fide@x", rules="V2017")
        assert scenarios.missing_standard(con, "fide-rapid@x") == scenarios.missing_standard(con, "ffe-rapid@x") == []
        own = load_inputs(con, "fide-rapid@x").standard_lists
        x = con.execute("SELECT count(*) FROM rating_lists WHERE system = 'fide@x' AND rating IS NOT NULL")
        assert own is not None and own.height == x.fetchall()[0][0]


@pytest.mark.parametrize(("text", "name"), [("V2017", "v2017"), (" test_1 ", "test_1"), ("a-b", "a-b")])
def test_scenario_names_are_folded(text: str, name: str) -> None:
    assert scenarios.fold_name(text) == name
    assert scenarios.split_system(f"fide@{text}") == ("fide", name)
    assert scenarios.companion(f"fide-rapid@{text}", "fide") == f"fide@{name}"


@pytest.mark.parametrize("text", ["", "-x", "a b", "é", "x" * 33, "a@b", "a.b"])
def test_bad_scenario_names_are_refused(text: str) -> None:
    with pytest.raises(scenarios.ScenarioError, match="is not valid"):
        scenarios.fold_name(text)


def test_the_system_part_folds_and_is_needed() -> None:
    assert scenarios.split_system(" FIDE@V2017 ") == ("fide", "v2017")
    assert scenarios.split_system("Fide-Rapid") == ("fide-rapid", None)
    for text in ("@fide", " @x"):
        with pytest.raises(scenarios.ScenarioError, match="names no system: expected SYSTEM@NAME") as caught:
            scenarios.split_system(text)
        assert caught.value.exit_code == 2


@pytest.mark.parametrize("name", ["fide", "FFE", "fide-rapid", "glicko2", "elo"])
def test_a_new_scenario_may_not_take_a_system_name(name: str) -> None:
    with pytest.raises(scenarios.ScenarioError, match=f"scenario name '{name.lower()}' is the name of a rating system"):
        scenarios.scenario_system("fide", name)
    assert scenarios.scenario_system("FIDE", "fide2") == "fide@fide2"
