"""What a rating officer reads in a FIDE report and list without a manual (the analyst's defects
of the hand recomputation): the rules version named, and each legend line that depends on it
worded for that version; a published first rating said so; PD and W − PD only on rows that count
in the change, and what a row was used for; K used and K next apart; 'bootstrap' explained; each
game row pointing to the player's own record.

Real files: San Viator 2018 (V2017), Grandmommy's Cup 2024 (V2022: one upgrade per event) and
Sharly 2025 (V2024, on the 2025-10-01 list), ingested and rated with `--system fide`.
"""

from __future__ import annotations

import csv
import datetime as dt
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.publish.legend import legend
from elopipe.publish.lists import rating_list
from elopipe.publish.outputs import write_list
from elopipe.publish.reports import write_report
from elopipe.publish.rules_legend import AppliedRules, applied_rules_of, rules_title
from elopipe.rating import scenarios
from elopipe.rating.fide import b02
from elopipe.store import schema_docs
from elopipe.store.connect import open_writer
from tests.helpers.paths import SHARED_DATA

TRF = SHARED_DATA / "trf"
SAN_VIATOR = "esp_torneo_san_viator_2018_vega_137players.trf"
GRANDMOMMY = "fide_trf26_grandmommys_cup_team_sample_249players.trf"
SHARLY = "fra_sharly_trf26_individual_nrs_240_byes.trf"


@pytest.fixture(scope="module")
def rated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (TRF / GRANDMOMMY).exists():
        pytest.skip(f"shared TRF corpus not found at {TRF}")
    from elopipe.ingest.driver import ingest_paths

    db = tmp_path_factory.mktemp("officer") / "store.duckdb"
    ingest_paths([TRF / SAN_VIATOR, TRF / GRANDMOMMY, TRF / SHARLY], db)
    res = CliRunner().invoke(app, ["rate", "--system", "fide", "--db", str(db)])
    assert res.exit_code == 0, res.output
    return db


def _tid(con: duckdb.DuckDBPyConnection, file_name: str) -> int:
    return int(
        con.execute(
            "SELECT tournament_id FROM tournaments JOIN source_files USING (file_id) WHERE path LIKE ?",
            [f"%{file_name}"],
        ).fetchall()[0][0]
    )


@pytest.fixture(scope="module")
def reports(rated: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Path]]:
    out = tmp_path_factory.mktemp("reports")
    con = duckdb.connect(str(rated), read_only=True)
    try:
        return {f: write_report(con, _tid(con, f), "fide", out) for f in (SAN_VIATOR, GRANDMOMMY, SHARLY)}
    finally:
        con.close()


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


# ---- 1. the rules version, named, and the legend lines that depend on it ----------------------


def test_a_v2022_report_names_its_rules_and_states_their_400_point_rule(
    reports: dict[str, list[Path]], rated: Path, tmp_path: Path
) -> None:
    html = reports[GRANDMOMMY][-1].read_text(encoding="utf-8")
    assert "<dt>Rating rules</dt><dd>FIDE Rating Regulations (B.02) effective 1 January 2022 (V2022)</dd>" in html
    assert "once per event" in html and "a difference over 400 counts as 400, and below" not in html
    # the rows the legend explains: Test0042 round 14 uses D 416 as it is (his one upgrade was
    # another game), Test0237 round 7 the lower side's −426
    games = _rows(reports[GRANDMOMMY][1])
    used = {(r["player"], r["round"]): (r["d_raw"], r["d_used"]) for r in games}
    assert used["Test0042 Player0042", "14"] == ("416", "416")
    assert used["Test0237 Player0237", "7"] == ("-426", "-426")
    res = CliRunner().invoke(
        app, ["report", "-t", "Grandmommy", "--db", str(rated), "--out", str(tmp_path / "o")], terminal_width=400
    )
    assert res.exit_code == 0, res.output
    flat = " ".join(res.output.split())
    assert "Rating rules: FIDE Rating Regulations (B.02) effective 1 January 2022 (V2022)" in flat
    assert "D used: per game: Ro − Rc as the rating used it under V2022: a player benefits" in flat
    assert "counts as 400 (B.02 8.3.1)" not in flat


def test_each_report_names_the_version_of_its_own_event(reports: dict[str, list[Path]]) -> None:
    san = reports[SAN_VIATOR][-1].read_text(encoding="utf-8")
    assert "effective 1 July 2017 (V2017)</dd>" in san
    assert "in every game, both players (B.02 8.3.1)" in san and "once per event" not in san
    assert "until his 18th birthday" in san  # V2017's junior K
    sharly = reports[SHARLY][-1].read_text(encoding="utf-8")
    # started 13 September 2025, rated on the 2025-10-01 list: V2024's cap (no 2650 exemption
    # yet), and its list rules are V2024's too, so one version is named
    assert "effective 1 March 2024 (V2024)</dd>" in sharly and "V2024A" not in sharly
    assert "at most 2200" in sharly and "floor 1400" in sharly


@pytest.mark.parametrize("version", sorted(b02.RULES))
def test_the_legend_of_each_standard_version_states_its_own_parameters(version: str) -> None:
    rs = b02.RULES[version]
    text = dict(legend("fide", AppliedRules((rs,), (rs,))))
    k, d, ru = text["K"], text["D used"], text["Ru / note"]
    assert f"else {rs.k_new} with fewer than 30 rated games; else {rs.k_low}" in k
    assert ("K × N ≤ 700" in k) == rs.cap_700
    assert ("junior" in k) == rs.k_junior
    assert f"floor {rs.floor}" in ru
    assert ("no initial rating is computed" in ru) == (rs.initial_rule == "unconfirmed")
    assert ("two draws against 1800" in ru) == (rs.initial_rule == "v2024")
    assert ("once per event" in d) == (rs.cap_mode == "one_upgrade")
    assert ("2650" in d) == (rs.cap_mode == "all_below_2650")
    assert ("in every game, both players" in d) == (rs.cap_mode == "all")
    assert f"({version})" in rules_title(AppliedRules((rs,), (rs,)))


@pytest.mark.parametrize("version", sorted(b02.RB_RULES))
def test_the_legend_of_each_rapid_and_blitz_version(version: str) -> None:
    rs = b02.RB_RULES[version]
    rules = AppliedRules((rs,), (rs,), rapid_blitz=True)
    text = dict(legend("fide-rapid", rules))
    if rs.k_fixed is not None:
        assert "20 for every player" in text["K"] and "no 400-point rule" in text["D used"]
        assert "less than one point" in text["Ru / note"]
        assert "2018-2021" in rules_title(rules)
    else:
        assert "no 2650 exemption" in text["D used"] or rs.cap_mode == "one_upgrade"
        assert "rapid and blitz" in rules_title(rules)


def test_the_legend_follows_a_scenario_that_caps_the_lower_side(tmp_path: Path) -> None:
    with open_writer(tmp_path / "s.duckdb") as con:
        con.execute(
            "INSERT INTO tournaments (tournament_id, file_id, source_format, name, start_date) VALUES (7, 1, 'trf',"
            " 'X', DATE '2019-05-01')"
        )
        con.execute(
            "INSERT INTO tournament_ratings (system, list_date, tournament_id, player_id, rules_version, n)"
            " VALUES ('fide@cap', DATE '2019-06-01', 7, 1, 'V2022', 1)"
        )
        scenarios.record(con, "fide@cap", rules="V2022", params={"v2022_cap_lower": True}, through=None)
        rules = applied_rules_of(con, [7], "fide@cap")[7]
    assert rules.forced == "V2022" and [rs.name for rs in rules.event] == ["V2022"]
    title = rules_title(rules)
    assert "(V2022), the lower-rated side capped in every game (--v2022-cap-lower)" in title
    assert "forced by the scenario (--rules V2022)" in title
    assert "counts as −400 in every game (--v2022-cap-lower)" in dict(legend("fide@cap", rules))["D used"]


def test_an_event_and_a_list_under_two_versions_name_both() -> None:
    # an event that started on 25 February 2024 (V2022's 400-point rule), on the 1 March 2024 list
    rules = AppliedRules((b02.RULES["V2022"],), (b02.RULES["V2024"],))
    title = rules_title(rules)
    assert "(V2022) for the 400-point rule" in title and "(V2024) for K, the floor and the initial rating" in title
    text = dict(legend("fide", rules))
    assert "once per event" in text["D used"] and "floor 1400" in text["Ru / note"]


# ---- 2. a published first rating ---------------------------------------------------------------


def test_a_first_rating_the_list_published_is_not_called_so_far(reports: dict[str, list[Path]]) -> None:
    llanas = next(r for r in _rows(reports[SAN_VIATOR][0]) if r["name"].startswith("Llanas"))
    assert llanas["first_rating"] == "1435"
    assert llanas["note"] == "first rating 1435, published on the 2018-07-01 list (6 games pooled)"
    assert "so far" not in reports[SAN_VIATOR][-1].read_text(encoding="utf-8").split("Llanas", 1)[1][:400]


# ---- 3. PD and W − PD only where they count; what a row was used for ---------------------------


def test_rows_not_counted_carry_no_pd_and_w_minus_pd_adds_up(reports: dict[str, list[Path]], rated: Path) -> None:
    games = _rows(reports[SAN_VIATOR][1])
    munoz = next(r for r in games if r["player"].startswith("Munoz Lopez") and r["round"] == "1")
    assert (munoz["d_raw"], munoz["pd"], munoz["w_minus_pd"], munoz["counted"]) == ("-244", "", "", "false")
    assert (munoz["used_for"], munoz["reason"]) == ("not_rated", "forfeit")
    pooled = [r for r in games if r["reason"] == "pooled_unrated"]
    assert pooled and {r["used_for"] for r in pooled} == {"first_rating"}
    assert {r["used_for"] for r in games if r["counted"] == "true"} == {"rating_change"}
    for stem in (SAN_VIATOR, GRANDMOMMY, SHARLY):
        perf = {r["player_id"]: r for r in _rows(reports[stem][0]) if r["w_we"]}
        sums: dict[str, Decimal] = {}
        for r in _rows(reports[stem][1]):  # summed with no filter, as a spreadsheet would
            sums[r["player_id"]] = sums.get(r["player_id"], Decimal(0)) + Decimal(r["w_minus_pd"] or 0)
        assert {p: sums.get(p, Decimal(0)) for p in perf} == {p: Decimal(r["w_we"]) for p, r in perf.items()}
    con = duckdb.connect(str(rated), read_only=True)
    try:
        bad = con.execute(
            "SELECT count(*) FROM v_change_explained WHERE NOT counted AND (pd IS NOT NULL OR w_minus_pd IS NOT NULL)"
        ).fetchall()
    finally:
        con.close()
    assert bad == [(0,)]


def test_the_schema_says_what_counted_means() -> None:
    docs = schema_docs.render_markdown()
    assert "TRUE: counted in the rating change" in docs
    assert "'first_rating' (reason 'pooled_unrated'" in docs


# ---- 4. K used and K next ----------------------------------------------------------------------


def test_the_list_csv_gives_k_used_and_k_next_and_the_txt_stays_fides(rated: Path, tmp_path: Path) -> None:
    con = duckdb.connect(str(rated), read_only=True)
    try:
        day = dt.date(2018, 7, 1)
        paths = write_list(con, "fide", day, tmp_path)
        df = rating_list(con, "fide", day)
    finally:
        con.close()
    rows = _rows(paths[0])
    assert list(rows[0])[11:13] == ["k", "k_next"]
    llanas = next(r for r in rows if r["name"].startswith("Llanas"))
    assert (llanas["k"], llanas["k_next"]) == ("", "40")  # a new player: no K used, K 40 next
    txt = paths[2].read_text(encoding="utf-8").splitlines()
    assert txt[0].split()[-4:] == ["Gms", "K", "B-day", "Flag"]
    k_txt = {int(line[0:15]): line[123:126].strip() for line in txt[1:]}
    k_csv = {int(r["fide_id"]): r["k_next"] for r in rows if r["fide_id"]}
    assert k_txt == {i: k for i, k in k_csv.items() if i in k_txt} and len(k_txt) == df["fide_id"].count()
    html = paths[3].read_text(encoding="utf-8")
    assert ">K used<" in html and ">K next<" in html and 'id="k-legend"' in html


# ---- 5. 'bootstrap' ----------------------------------------------------------------------------


def test_bootstrap_is_explained_where_the_sources_are() -> None:
    assert "'bootstrap' (computed, on the first list of a player the store had never rated" in (
        schema_docs.render_markdown()
    )
    assert "source 'bootstrap'" in dict(legend("fide"))["src"]


# ---- 6. each row's line is the player's own record -----------------------------------------------


def test_every_trf_row_points_to_the_players_own_record(reports: dict[str, list[Path]]) -> None:
    games = _rows(reports[SAN_VIATOR][1])
    amador = next(r for r in games if r["player"].startswith("Amador Andujar") and r["round"] == "1")
    assert (amador["colour"], amador["line"]) == ("b", "39")
    for stem in (SAN_VIATOR, GRANDMOMMY, SHARLY):
        lines = (TRF / stem).read_text(encoding="utf-8").splitlines()
        for r in _rows(reports[stem][1]):
            record = lines[int(r["line"]) - 1]
            assert record.startswith("001") and record[4:8].strip() == r["start_rank"], (stem, r)


def test_a_store_whose_views_predate_the_columns_reports_the_same(
    rated: Path, reports: dict[str, list[Path]], tmp_path: Path
) -> None:
    import shutil

    from elopipe.store.views import VIEWS

    old = tmp_path / "old.duckdb"
    shutil.copy(rated, old)
    con = duckdb.connect(str(old))
    try:  # the views as a store rated before first_rating and used_for had them (opened read-only since)
        con.execute(
            "CREATE OR REPLACE VIEW v_tournament_performance AS SELECT * EXCLUDE (first_rating)"
            f" FROM ({VIEWS['v_tournament_performance']})"
        )
        explained = VIEWS["v_change_explained"]
        con.execute(f"CREATE OR REPLACE VIEW v_change_explained AS SELECT * EXCLUDE (used_for) FROM ({explained})")
    finally:
        con.close()
    con = duckdb.connect(str(old), read_only=True)
    try:
        paths = write_report(con, _tid(con, SAN_VIATOR), "fide", tmp_path / "out")
    finally:
        con.close()
    for mine, fresh in zip(paths, reports[SAN_VIATOR], strict=True):
        assert mine.read_bytes() == fresh.read_bytes(), mine.name
