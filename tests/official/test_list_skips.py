"""Rows of an official list that are not stored: counted, kept in `list_import_skips` with their
line, reason and text, and reported by `elopipe lists import` (issue 17)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.official.list_import import ListFormatError, import_list
from elopipe.read.dates import ListDateError
from tests.helpers.official_lists import STD, fixed, memory_store

ROWS = [
    ["1503014", "Carlsen, Magnus", "NOR", "M", "GM", "", "", "", "2830", "2", "10", "1990", ""],
    ["", "Noid, Nora", "FRA", "F", "", "", "", "", "1800", "", "", "1999", "w"],
    ["25000002", "Young, Kid", "FRA", "M", "", "", "", "", "1650", "4", "40", "2013", ""],
    ["25000003", "Bad, Rating", "FRA", "M", "", "", "", "", "2l00", "4", "40", "2013", ""],
    ["25000004", "Nobody, Unrated", "FRA", "M", "", "", "", "", "", "", "", "2013", ""],
    ["25000005", "Zero, Rated", "FRA", "M", "", "", "", "", "0", "", "", "2013", ""],  # 0: unrated, no fault
]
# a line shifted three columns right: its ID cell reads '25000009  Sh'
SHIFTED = "   25000009  Shifted, Sam" + " " * 60 + "FRA M  x     2100 0  20  1990"


def _fide_file(tmp_path: Path) -> Path:
    lines = fixed(STD, ROWS).split("\n")
    lines[3:3] = [SHIFTED, ""]  # lines 4 and 5 of the file: the shifted line, a blank one
    f = tmp_path / "standard_mar24frl.txt"
    f.write_text("\n".join(lines), encoding="utf-8")
    return f


def test_fide_txt_skipped_rows_are_counted_with_line_reason_and_text(tmp_path: Path) -> None:
    con = memory_store()
    f = _fide_file(tmp_path)
    res = import_list(con, f, "fide")
    assert res.rows == {"fide": 2} and res.unrated == 2
    assert res.skip_counts() == {"bad_id": 1, "bad_rating": 1, "no_id": 1}
    stored = con.execute(
        "SELECT source_file, list_date, line, reason, detail, raw FROM list_import_skips ORDER BY line"
    ).fetchall()
    assert [r[2:5] for r in stored] == [
        (3, "no_id", None),
        (4, "bad_id", "ID 25000009  Sh"),
        (7, "bad_rating", "standard rating 2l00"),
    ]
    assert {r[0] for r in stored} == {str(f)} and {r[1] for r in stored} == {dt.date(2024, 3, 1)}
    assert stored[0][5].startswith("               Noid, Nora") and stored[1][5] == SHIFTED
    # a re-import replaces the file's skips, never adds to them
    import_list(con, f, "fide")
    assert con.execute("SELECT count(*) FROM list_import_skips").fetchone()[0] == 3


def test_fide_xml_player_without_fide_id_is_reported(tmp_path: Path) -> None:
    f = tmp_path / "standard_2024-03.xml"
    f.write_text(
        "<playerslist>\n<player><fideid>1503014</fideid><name>Carlsen, Magnus</name><rating>2830</rating></player>\n"
        "<player><fideid></fideid><name>Noid, Nora</name><rating>1800</rating></player>\n"
        "<player><fideid>12x</fideid><name>Typo, Tom</name><rating>1900</rating></player>\n</playerslist>\n",
        encoding="utf-8",
    )
    con = memory_store()
    res = import_list(con, f, "fide")
    assert res.rows == {"fide": 1}
    got = res.skips.select("line", "reason", "detail").rows()
    assert got == [(3, "no_id", None), (4, "bad_id", "ID 12x")]
    assert "Noid, Nora" in res.skips["raw"][0]


def test_ffe_csv_misaligned_and_id_less_rows_are_reported(tmp_path: Path) -> None:
    f = tmp_path / "ffe_2025-09.csv"
    f.write_text(
        "NrFFE;Nom;Prenom;Cat;Elo;Fide\nK1;DUPONT;Jean;SenM;1530;N\n;NOLIC;Ann;SenF;1400;N\n"
        "K3;TOO;Many;SenM;1500;N;extra\nK4;BAD;Rating;SenM;15;N\n\nK5;OK;Unrated;SenM;NC;\n"
        '"K6";"QUOTED; NAME";Zoe;SenF;1600;F\n',
        encoding="utf-8",
    )
    con = memory_store()
    res = import_list(con, f, "ffe")
    assert res.rows == {"ffe": 2} and res.unrated == 1  # K1 and K6; K5 has no rating, which is no fault
    got = con.execute("SELECT line, reason, detail, raw FROM list_import_skips ORDER BY line").fetchall()
    assert got == [
        (3, "no_id", None, ";NOLIC;Ann;SenF;1400;N"),
        (4, "misaligned", "7 fields, the header has 6", "K3;TOO;Many;SenM;1500;N;extra"),
        (5, "bad_rating", "elo 15", "K4;BAD;Rating;SenM;15;N"),
    ]
    # the misaligned row is not stored cut to the header's width
    assert con.execute("SELECT count(*) FROM official_lists WHERE national_id = 'K3'").fetchone()[0] == 0


def test_list_dates_before_the_first_fide_list_are_refused(tmp_path: Path) -> None:
    f = _fide_file(tmp_path)
    con = memory_store()
    with pytest.raises(ListDateError, match="1971-01-01"):
        import_list(con, f, "fide", dt.date(1900, 1, 1))
    old = tmp_path / "standard_1900-01.txt"
    old.write_text(f.read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(ListFormatError, match="standard_1900-01.txt.*--list-date"):
        import_list(con, old, "fide")
    res = CliRunner().invoke(
        app, ["lists", "import", str(f), "--system", "fide", "--list-date", "1900-01-01", "--db", str(tmp_path / "x")]
    )
    assert res.exit_code == 2
    assert res.output.strip().splitlines() == [
        "elopipe lists import: error: --list-date: list date 1900-01-01 is out of range: give a date from 1971-01-01"
        " to 2100-12-31 (FIDE's first list is of 1971)"
    ]


def test_lists_import_prints_the_count_by_reason_and_the_first_lines(tmp_path: Path) -> None:
    f = _fide_file(tmp_path)
    db = tmp_path / "s.duckdb"
    res = CliRunner().invoke(app, ["lists", "import", str(f), "--system", "fide", "--db", str(db)])
    assert res.exit_code == 0, res.output
    out = res.output
    counts = "1 FIDE ID not a number; 1 rating not a number from 0 to 3500; 1 no FIDE ID nor"
    assert f"3 rows skipped, not stored: {counts}" in out
    assert "line 4: FIDE ID not a number (ID 25000009  Sh): 25000009  Shifted, Sam" in out
    assert "line 7: rating not a number from 0 to 3500 (standard rating 2l00)" in out
    assert "2 lines with no rating of any kind: not on a rating list" in out
    # the command that lists them all reads this store, as every other command's hint does
    line = next(ln for ln in out.splitlines() if "list_import_skips" in ln)
    assert line.strip().startswith("all: elopipe sql ") and line.endswith(f" --db {db}"), line


def test_an_unreadable_xml_list_names_its_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad_2024-03.xml"
    bad.write_text("<playerslist><player><name>x</name></player></playerslist>", encoding="utf-8")
    res = CliRunner().invoke(app, ["lists", "import", str(bad), "--system", "fide", "--db", str(tmp_path / "s")])
    assert res.exit_code == 1
    assert (
        res.output.startswith(f"elopipe lists import: error: {bad}: ")
        and "Error" not in res.output
        and "[" not in res.output
    )


def test_a_cut_xml_player_is_reported_not_lost(tmp_path: Path) -> None:
    f = tmp_path / "standard_2024-03.xml"
    f.write_text(
        "<playerslist>\n<player><fideid>1503014</fideid><name>Carlsen, Magnus</name><rating>2830</rating></player>\n"
        "<player><fideid>2",
        encoding="utf-8",
    )
    res = import_list(memory_store(), f, "fide")
    assert res.rows == {"fide": 1}
    assert res.skips.rows() == [(3, "no_id", None, "<player><fideid>2")]


def test_an_ffe_list_without_its_columns_names_the_file_and_its_columns(tmp_path: Path) -> None:
    f = tmp_path / "ffe_2024-01.csv"
    f.write_text("a;b\n1;2\n", encoding="utf-8")
    with pytest.raises(ListFormatError) as err:
        import_list(memory_store(), f, "ffe")
    assert str(err.value) == f"{f}: an FFE list needs a licence and a name column; its columns: a, b"


def test_a_line_with_no_rating_and_no_fide_id_number_is_reported_not_counted_as_unrated(tmp_path: Path) -> None:
    f = tmp_path / "standard_mar24frl.txt"
    f.write_text(fixed(STD, ROWS[:1]) + "end of list: 1 player\n", encoding="utf-8")
    res = import_list(memory_store(), f, "fide")
    assert res.rows == {"fide": 1} and res.unrated == 0
    assert res.skips.rows() == [(3, "bad_id", "ID end of list: 1", "end of list: 1 player")]


def test_a_skipped_line_is_shown_with_its_control_bytes_escaped(tmp_path: Path) -> None:
    f = tmp_path / "ffe_2025-09.csv"
    f.write_text("NrFFE;Nom;Prenom;Cat;Elo\n;MÜLLER\x1b[31m;Jörg;SenM;1500\n", encoding="utf-8")
    res = CliRunner().invoke(app, ["lists", "import", str(f), "--system", "ffe", "--db", str(tmp_path / "s.duckdb")])
    assert res.exit_code == 0, res.output
    assert "line 2: no FIDE ID nor national ID: ;MÜLLER\\x1b[31m;Jörg;SenM;1500" in res.output
    assert "\x1b" not in res.output


def test_names_lose_their_escape_codes_as_a_trf_names_do(tmp_path: Path) -> None:
    """A stored name kept its escape codes ('Evil\\x1b[31mRed'): `lists compare` and `sql` then
    changed the terminal of whoever listed it. They are removed at import, as the TRF and PGN
    readers remove them, and a warning counts the names cleaned; `sql` shows any stored control
    character as \\xNN."""
    f = tmp_path / "ffe_2025-07.csv"
    f.write_text(
        "NrFFE;Nom;Prenom;Elo\nK1;Evil\x1b[31mRed\x1b[0m;Name;1500\nK2;Plain;Name;1600\nK3;\x1b[31m;\x1b[0m;1700\n",
        encoding="utf-8",
    )
    db = tmp_path / "s.duckdb"
    res = CliRunner().invoke(app, ["lists", "import", str(f), "--system", "ffe", "--db", str(db)])
    assert res.exit_code == 0, res.output
    assert "control characters or escape codes removed from 2 names" in res.output and "\x1b" not in res.output
    # a name of escape codes only is no name: its player is '?', as for an empty name
    named = CliRunner().invoke(app, ["sql", "SELECT name FROM players WHERE national_id = 'K3'", "--db", str(db)])
    assert "│ ?" in named.output, named.output
    shown = CliRunner().invoke(app, ["sql", "SELECT name, chr(27) || '[2J' AS x FROM official_lists", "--db", str(db)])
    assert shown.exit_code == 0 and "EvilRed Name" in shown.output and "\\x1b[2J" in shown.output, shown.output
    assert "\x1b" not in shown.output
