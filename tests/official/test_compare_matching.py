"""`lists compare` finds the player of an official row without a FIDE ID by national ID, then by
name key and birth year, and says which key matched (issue 17)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.official.list_compare import compare_lists
from elopipe.read.names import name_key
from elopipe.store.schema import ensure_schema
from tests.helpers.official_lists import STD, fixed, memory_store
from tests.helpers.store_build import add_rows

APR = dt.date(2024, 4, 1)


def _player(con, name: str, fide_id: int | None, national_id: str | None, born: int | None, rating: int):
    pid = con.execute("SELECT nextval('player_id_seq')").fetchone()[0]
    add_rows(
        con,
        players=[{"player_id": pid, "fide_id": fide_id, "national_id": national_id, "name": name,
                  "name_key": name_key(name), "birth_year": born}],
        rating_lists=[{"system": "ffe", "list_date": APR, "player_id": pid, "rating": rating, "games": 0, "k": 20,
                       "source": "computed"}],
    )  # fmt: skip
    return pid


def _store(con) -> dict[str, int]:
    return {
        "fide": _player(con, "MARTIN Claire", 20600000, "A01450", 1960, 1875),
        "licence": _player(con, "DUPONT Jean", None, "K59857", 1990, 1530),
        "name": _player(con, "Pétit, Léo", None, None, 2014, 1000),
        # two namesakes born the same year: a name cannot tell them apart
        "twin1": _player(con, "Twin, Tom", None, None, 2000, 1400),
        "twin2": _player(con, "Twin, Tom", None, None, 2000, 1410),
        # same name and year but another FIDE ID: another person
        "other": _player(con, "Other, Olga", 999, None, 1980, 1700),
    }


OFFICIAL = """NrFFE;Nom;Prenom;NeLe;FideCode;Elo;Fide
A01450;MARTIN;Claire;12/11/1960;20600000;1875;F
K59857;DUPONT;Jean;04/05/1990;;1530;N
Z06739;PETIT;Léo;2014-03-01;;999;E
T1;TWIN;Tom;2000-01-01;;1400;N
O1;OTHER;Olga;1980-01-01;1234;1700;F
"""


def test_players_without_a_fide_id_are_matched_by_national_id_then_name_and_birth_year(tmp_path: Path) -> None:
    con = memory_store()
    ids = _store(con)
    f = tmp_path / "ffe_apr24.csv"
    f.write_text(OFFICIAL, encoding="utf-8")
    report = compare_lists(con, "ffe", APR, f).report
    by_pid = {r["player_id"]: r for r in report.iter_rows(named=True) if r["player_id"] is not None}
    assert (by_pid[ids["fide"]]["status"], by_pid[ids["fide"]]["matched_by"]) == ("match", "fide_id")
    assert (by_pid[ids["licence"]]["status"], by_pid[ids["licence"]]["matched_by"]) == ("match", "national_id")
    leo = by_pid[ids["name"]]
    # official 999, computed 1000: official − computed
    assert (leo["status"], leo["matched_by"], leo["official_minus_computed"]) == ("differs", "name_birth_year", -1)
    # no player is listed twice: Léo is one row, not an official-only and a computed-only one
    assert report.filter(report["name"].str.contains("(?i)p[eé]tit")).height == 1
    # ambiguous namesakes and a different FIDE ID stay unmatched, on each side
    assert by_pid[ids["twin1"]]["status"] == by_pid[ids["twin2"]]["status"] == "computed_only"
    assert by_pid[ids["other"]]["status"] == "computed_only"
    one_sided = report.filter(report["status"] == "official_only")["national_id"].sort().to_list()
    assert one_sided == ["O1", "T1"]


def test_compare_command_says_which_key_matched(tmp_path: Path) -> None:
    import duckdb

    db = tmp_path / "s.duckdb"
    con = duckdb.connect(str(db))
    ensure_schema(con)
    _store(con)
    con.close()
    f = tmp_path / "ffe_apr24.csv"
    f.write_text(OFFICIAL, encoding="utf-8")
    res = CliRunner().invoke(
        app, ["lists", "compare", str(f), "--system", "ffe", "--list-date", "2024-04-01", "--db", str(db)]
    )
    assert res.exit_code == 0, res.output
    assert "matched without a FIDE ID: 1 by name birth year, 1 by national id (column matched_by)" in res.output
    assert "name_birth_year" in res.output  # Léo's row in the differences


def test_fide_list_row_without_an_id_is_matched_by_name_and_birth_year(tmp_path: Path) -> None:
    con = memory_store()
    pid = con.execute("SELECT nextval('player_id_seq')").fetchone()[0]
    add_rows(
        con,
        players=[{"player_id": pid, "fide_id": 42, "name": "Noid, Nora", "name_key": name_key("Noid, Nora"),
                  "birth_year": 1999}],
        rating_lists=[{"system": "fide", "list_date": APR, "player_id": pid, "rating": 1800, "games": 0, "k": 20,
                       "source": "computed"}],
    )  # fmt: skip
    f = tmp_path / "standard_apr24frl.txt"
    f.write_text(fixed(STD, [["", "Noid, Nora", "FRA", "F", "", "", "", "", "1800", "", "", "1999", "w"]]))
    report = compare_lists(con, "fide", APR, f).report
    assert report.select("player_id", "status", "matched_by").rows() == [(pid, "match", "name_birth_year")]


def test_rows_left_out_of_a_comparison_are_counted(tmp_path: Path) -> None:
    import duckdb

    db = tmp_path / "s.duckdb"
    con = duckdb.connect(str(db))
    ensure_schema(con)
    _store(con)
    con.close()
    f = tmp_path / "ffe_apr24.csv"
    f.write_text(OFFICIAL + "B1;BAD;Row;2000-01-01;;15;N\nM1;MIS;Aligned;2000-01-01;;1500;N;x\n", encoding="utf-8")
    con = duckdb.connect(str(db), read_only=True)
    cmp = compare_lists(con, "ffe", APR, f)
    con.close()
    assert cmp.skips.select("line", "reason").rows() == [(7, "bad_rating"), (8, "misaligned")]
    res = CliRunner().invoke(
        app, ["lists", "compare", str(f), "--system", "ffe", "--list-date", "2024-04-01", "--db", str(db)]
    )
    assert res.exit_code == 0, res.output
    assert (
        "2 rows of ffe_apr24.csv not compared: 1 rating not a number from 0 to 3500;"
        " 1 not aligned with the header (lines 7, 8)" in res.output
    )
    f.write_text(OFFICIAL + "B1;BAD;Row;2000-01-01;;15;N\n", encoding="utf-8")
    res = CliRunner().invoke(
        app, ["lists", "compare", str(f), "--system", "ffe", "--list-date", "2024-04-01", "--db", str(db)]
    )
    assert "\n1 row of ffe_apr24.csv not compared: 1 rating not a number from 0 to 3500 (line 7)" in "\n" + res.output


def test_a_row_with_a_placeholder_id_is_no_player_to_compare(tmp_path: Path) -> None:
    """A FIDE row whose ID is a placeholder (`0`, `00000000`) is a row `lists import` refuses
    (`no_id`): paired by name and birth year with a computed player who has no FIDE ID either, it
    was shown as compared (`match`, an official rating no list gives); it is left out, counted among
    the rows not compared, and the computed player stays on the computed side only. A row without
    an ID still names a player the store knows by FIDE ID."""
    con = memory_store()

    def player(name: str, fide_id: int | None, born: int, rating: int) -> int:
        pid = con.execute("SELECT nextval('player_id_seq')").fetchone()[0]
        add_rows(
            con,
            players=[{"player_id": pid, "fide_id": fide_id, "name": name, "name_key": name_key(name),
                      "birth_year": born}],
            rating_lists=[{"system": "fide", "list_date": APR, "player_id": pid, "rating": rating, "games": 0,
                           "k": 20, "source": "computed"}],
        )  # fmt: skip
        return int(pid)

    local = player("Test0001 Player0001", None, 1987, 2558)
    known = player("Noid, Nora", 42, 1999, 1800)
    f = tmp_path / "standard_apr24frl.txt"
    rows = [
        ["0", "Test0001 Player0001", "IRL", "M", "", "", "", "", "2558", "", "", "1987", ""],
        ["", "Noid, Nora", "FRA", "F", "", "", "", "", "1800", "", "", "1999", "w"],
        ["00000000", "Nobody, Ned", "IRL", "M", "", "", "", "", "2000", "", "", "1970", ""],
    ]
    f.write_text(fixed(STD, rows))
    cmp = compare_lists(con, "fide", APR, f)
    got = cmp.report.select("player_id", "status", "matched_by", "official_rating").rows()
    assert sorted(got, key=str) == sorted(
        [(known, "match", "name_birth_year", 1800), (local, "computed_only", None, None)], key=str
    )
    assert cmp.skips.select("line", "reason").rows() == [(2, "no_id"), (4, "no_id")]
    assert cmp.counts() == {"computed_only": 1, "match": 1}
