"""Rows of an official list the import must not store as written (`elopipe.official.list_faults`):
placeholder IDs, impossible ratings, fields that spill over their column, IDs given twice; and
files with a BOM, cut short or not CSV at all (a hostile tester's findings H1, M4, M5)."""

from __future__ import annotations

import codecs
import datetime as dt
from pathlib import Path
from typing import Any

import duckdb
import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.official.list_faults import overflow_pattern
from elopipe.official.list_fide_txt import txt_columns
from elopipe.official.list_import import ListFormatError, import_list
from tests.helpers.official_lists import FOA, STD, fixed, memory_store
from tests.helpers.store_build import add_rows

HEADER = fixed(STD, []).rstrip("\n")


def _line(values: list[str], layout: list[tuple[str, int]] = STD) -> str:
    """A list line as a careless writer makes it: values padded to their column, never cut, so a
    value longer than its column pushes the rest of the line to the right."""
    return "".join(v.ljust(w) for v, (_, w) in zip(values, layout, strict=True)).rstrip()


def _std(fide_id: str, name: str, rating: str, k: str = "", games: str = "") -> str:
    return _line([fide_id, name, "ESP", "M", "", "", "", "", rating, games, k, "1990", ""])


def _txt(tmp_path: Path, name: str, lines: list[str]) -> Path:
    f = tmp_path / name
    f.write_text("\n".join([HEADER, *lines]) + "\n", encoding="utf-8")
    return f


def _players(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    return con.execute("SELECT fide_id, national_id, name FROM players ORDER BY name").fetchall()


def _skips(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    return con.execute("SELECT line, reason, detail FROM list_import_skips ORDER BY list_date, line").fetchall()


# ---- H1: placeholder IDs -----------------------------------------------------------------------


def test_fide_txt_placeholder_ids_are_no_id_and_never_make_one_player(tmp_path: Path) -> None:
    con = memory_store()
    mar = _txt(
        tmp_path,
        "std_mar24.txt",
        [_std("24532312", "Reyero Castro, Jorge", "1900"), _std("0", "Zero Id", "1600"),
         _std("00000000", "Zeros Id", "1600"), _std("99999999", "Nines", "1600"), _std("-5", "Neg", "1600"),
         _std("-", "Dash", "1600"), _std("?", "Query", "1600")],
    )  # fmt: skip
    res = import_list(con, mar, "fide")
    assert res.rows == {"fide": 1} and res.players_created == 1
    assert _skips(con) == [
        (3, "no_id", "ID 0: a placeholder"),
        (4, "no_id", "ID 00000000: a placeholder"),
        (5, "no_id", "ID 99999999: a placeholder"),
        (6, "no_id", "ID -5: a placeholder"),
        (7, "no_id", "ID -: a placeholder"),
        (8, "no_id", "ID ?: a placeholder"),
    ]
    # a later list with another person on ID 0 neither joins nor renames anyone
    apr = _txt(tmp_path, "std_apr24.txt", [_std("0", "Other Zero", "1600"), _std("99999999", "Other Nines", "1600")])
    res = import_list(con, apr, "fide")
    assert res.rows == {} and res.players_linked == 0 and res.players_created == 0
    assert _players(con) == [(24532312, None, "Reyero Castro, Jorge")]


def test_fide_xml_placeholder_ids_are_no_id(tmp_path: Path) -> None:
    f = tmp_path / "standard_2024-07.xml"
    f.write_text(
        "<playerslist>\n<player><fideid>0</fideid><name>Xml Zero</name><rating>1500</rating></player>\n"
        "<player><fideid>0</fideid><name>Xml Zero2</name><rating>1600</rating></player>\n"
        "<player><fideid>1503014</fideid><name>Carlsen, Magnus</name><rating>2830</rating></player>\n</playerslist>\n",
        encoding="utf-8",
    )
    con = memory_store()
    res = import_list(con, f, "fide")
    assert res.rows == {"fide": 1} and not res.warnings
    # one skip per <player>, even when two are alike
    assert res.skips.select("line", "reason", "detail").rows() == [
        (2, "no_id", "ID 0: a placeholder"),
        (3, "no_id", "ID 0: a placeholder"),
    ]
    assert "Xml Zero2" in res.skips["raw"][1] and "Xml Zero<" in res.skips["raw"][0]
    assert _players(con) == [(1503014, None, "Carlsen, Magnus")]


def test_ffe_placeholder_fide_codes_leave_players_apart_by_licence(tmp_path: Path) -> None:
    f = tmp_path / "ffe_2024-03.csv"
    f.write_text(
        "NrFFE;Nom;Prenom;FideCode;Elo;Fide\nA12345;Dupont;Jean;0;1650;F\nF66666;Dup;Fide;99999999;1800;F\n"
        "G77777;Dup2;Fide;99999999;1800;F\nH88888;Neg;Code;-5;1700;F\nJ99999;Real;Code;1 503 014;2830;F\n",
        encoding="utf-8",
    )
    con = memory_store()
    res = import_list(con, f, "ffe")
    assert res.rows == {"ffe": 5} and res.players_created == 5 and res.skips.height == 0
    assert _players(con) == [
        (None, "F66666", "Dup Fide"),
        (None, "G77777", "Dup2 Fide"),
        (None, "A12345", "Dupont Jean"),
        (None, "H88888", "Neg Code"),
        (1503014, "J99999", "Real Code"),
    ]


def test_an_ffe_row_with_a_placeholder_fide_code_and_no_licence_is_skipped(tmp_path: Path) -> None:
    f = tmp_path / "ffe_2024-03.csv"
    f.write_text("NrFFE;Nom;FideCode;Elo\n;Nolic;99999999;1800\n", encoding="utf-8")
    res = import_list(memory_store(), f, "ffe")
    assert res.rows == {} and res.skips.select("line", "reason").rows() == [(2, "no_id")]


# ---- M4: a UTF-8 BOM ---------------------------------------------------------------------------


def test_a_fide_txt_list_with_a_bom_is_read_in_both_encodings(tmp_path: Path) -> None:
    body = f"{HEADER}\n{_std('24532312', 'Reyero Castro, Jorge', '1900', '20')}\n"
    utf8 = tmp_path / "bom_jun24.txt"
    utf8.write_bytes(codecs.BOM_UTF8 + body.encode("utf-8"))
    latin = tmp_path / "bom_jul24.txt"  # not UTF-8 past the BOM: read as Latin-1
    latin.write_bytes(codecs.BOM_UTF8 + (body + _std("24532313", "Müller, Jörg", "2000") + "\n").encode("latin-1"))
    con = memory_store()
    assert import_list(con, utf8, "fide").rows == {"fide": 1}
    assert import_list(con, latin, "fide").rows == {"fide": 2}
    got = con.execute("SELECT list_date, fide_id, name, rating, k FROM official_lists ORDER BY 1, 2").fetchall()
    assert got == [
        (dt.date(2024, 6, 1), 24532312, "Reyero Castro, Jorge", 1900, 20),
        (dt.date(2024, 7, 1), 24532312, "Reyero Castro, Jorge", 1900, 20),
        (dt.date(2024, 7, 1), 24532313, "Müller, Jörg", 2000, None),
    ]


def test_a_utf8_fide_txt_list_with_one_stray_byte_loses_only_that_line_s_accents(tmp_path: Path) -> None:
    """A UTF-8 list with one Latin-1 byte (or one invalid UTF-8 sequence) on one line: each line
    is decoded by itself, so the UTF-8 lines keep their names and columns (the whole file read as
    Latin-1 pushed every accented row out of its columns), the bad line is read as CP1252 and
    named in a warning."""
    good = _std("13300474", "Aronián, Levón", "2775").encode("utf-8")
    for stray in (b"T\xe4ri, Aryan", b"T\xc3(ri, Aryan"):
        bad = _std("24532313", "Xari, Aryan", "2640").encode("ascii").replace(b"Xari, Aryan", stray)
        f = tmp_path / "standard_jul22frl.txt"
        f.write_bytes(
            HEADER.encode()
            + b"\n"
            + good
            + b"\n\n"
            + bad
            + b"\n"
            + _std("1503014", "Carlsen, Magnus", "2864").encode()
            + b"\n"
        )
        con = memory_store()
        res = import_list(con, f, "fide")
        assert res.warnings == ["standard_jul22frl.txt: line 4 is not valid UTF-8, read as CP1252"]
        assert res.rows == {"fide": 3} and res.skips.height == 0
        got = con.execute("SELECT fide_id, name, rating FROM official_lists ORDER BY fide_id").fetchall()
        assert got == [
            (1503014, "Carlsen, Magnus", 2864),
            (13300474, "Aronián, Levón", 2775),
            (24532313, stray.decode("cp1252"), 2640),
        ]


def test_a_fide_xml_list_with_a_bom_is_read(tmp_path: Path) -> None:
    f = tmp_path / "standard_2024-03.xml"
    text = '<?xml version="1.0"?>\n<playerslist><player><fideid>1503014</fideid><rating>2830</rating></player>'
    text += "</playerslist>\n"
    f.write_bytes(codecs.BOM_UTF8 + text.encode("utf-8"))
    assert import_list(memory_store(), f, "fide").rows == {"fide": 1}


def test_an_ffe_csv_with_a_bom_and_a_cp1252_line_keeps_its_licence_column(tmp_path: Path) -> None:
    f = tmp_path / "ffe_2024-03.csv"
    f.write_bytes(codecs.BOM_UTF8 + "NrFFE;Nom;Prenom;Elo\nA12345;Dupont;Léon;1650\n".encode("cp1252"))
    con = memory_store()
    assert import_list(con, f, "ffe").rows == {"ffe": 1}
    assert _players(con) == [(None, "A12345", "Dupont Léon")]


# ---- M5: impossible values, spilling fields, repeated IDs --------------------------------------


def test_fide_ratings_outside_0_to_3500_are_bad_ratings(tmp_path: Path) -> None:
    f = tmp_path / "std_mar24.txt"
    f.write_text(
        fixed(FOA, [["2345678", "Neg, Rating", "ESP", "M", "", "", "", "", "1800", "", "", "-100", "", "", "", "",
                     "", "1990", ""],
                    ["3456789", "High, Rating", "ESP", "M", "", "", "", "", "3501", "", "", "", "", "", "2000", "",
                     "", "1990", ""]]),
        encoding="utf-8",
    )  # fmt: skip
    con = memory_store()
    res = import_list(con, f, "fide", dt.date(2024, 3, 1))
    # a bad rating loses that rating only
    assert res.rows == {"fide": 1, "fide-blitz": 1}
    assert res.skips.select("line", "reason", "detail").rows() == [
        (2, "bad_rating", "rapid rating -100"),
        (3, "bad_rating", "standard rating 3501"),
    ]
    assert con.execute("SELECT min(rating), max(rating) FROM official_lists").fetchone() == (1800, 2000)


def test_a_fide_txt_field_longer_than_its_column_is_misaligned_not_spilled(tmp_path: Path) -> None:
    f = _txt(
        tmp_path,
        "std_mar24.txt",
        [_std("3456789", "Huge, Rating", "99999999999"), _std("12345678901234567890123", "Long, Id", "1600"),
         _std("4567890", "Long Games, Count", "1700", "20", "12345"), _std("5678901", "Fine, Row", "1800", "20", "9")],
    )  # fmt: skip
    con = memory_store()
    res = import_list(con, f, "fide")
    assert res.rows == {"fide": 1}
    assert res.skips.select("line", "reason").rows() == [(2, "misaligned"), (3, "misaligned"), (4, "misaligned")]
    assert con.execute("SELECT fide_id, rating, games, k FROM official_lists").fetchall() == [(5678901, 1800, 9, 20)]


def test_a_name_filling_its_whole_column_is_not_misaligned(tmp_path: Path) -> None:
    name = "Abcdefghij Klmnopqrst, Uvwxyzabcd Efghijklmn Opqrstuvwx Yzabc"  # 61 characters: the whole column
    f = _txt(tmp_path, "std_mar24.txt", [_std("5678901", name, "1800", "20")])
    res = import_list(memory_store(), f, "fide")
    assert res.rows == {"fide": 1} and res.skips.height == 0


def test_overflow_pattern_checks_every_column_end_but_the_free_text_ones() -> None:
    cols = txt_columns(HEADER)
    pattern = overflow_pattern(cols)
    assert pattern is not None
    ends = {start - 1 + width for name, start, width in cols if width is not None and name not in ("name", "otit")}
    assert pattern.count("\\S\\S") == len(ends) == 10
    assert overflow_pattern([("name", 1, 10), ("flag", 11, None)]) is None


def test_a_fide_id_given_twice_keeps_the_first_row(tmp_path: Path) -> None:
    f = _txt(
        tmp_path,
        "std_mar24.txt",
        [_std("24532312", "Reyero Castro, Jorge", "1900"), _std("1503014", "Carlsen, Magnus", "2830"),
         _std("24532312", "Duplicate Id", "2000"), _std("0024532312", "Padded Duplicate", "2100")],
    )  # fmt: skip
    con = memory_store()
    res = import_list(con, f, "fide")
    assert res.rows == {"fide": 2}
    assert _skips(con) == [
        (4, "duplicate_id", "FIDE ID 24532312 as on line 2"),
        (5, "duplicate_id", "FIDE ID 24532312 as on line 2"),
    ]
    got = con.execute("SELECT fide_id, name, rating FROM official_lists ORDER BY 1").fetchall()
    assert got == [(1503014, "Carlsen, Magnus", 2830), (24532312, "Reyero Castro, Jorge", 1900)]


def test_a_repeated_id_keeps_its_first_row_with_a_valid_rating(tmp_path: Path) -> None:
    # the valid row was skipped as a repeat of an earlier row whose rating could not be read: the
    # ID's rating was lost
    f = _txt(
        tmp_path,
        "std_mar24.txt",
        [_std("24532312", "Reyero Castro, Jorge", "xyz"), _std("1503014", "Carlsen, Magnus", "2830"),
         _std("24532312", "Reyero Castro, Jorge", "1900")],
    )  # fmt: skip
    con = memory_store()
    import_list(con, f, "fide")
    assert _skips(con) == [(2, "duplicate_id", "FIDE ID 24532312 as on line 4")]
    got = con.execute("SELECT fide_id, rating FROM official_lists ORDER BY 1").fetchall()
    assert got == [(1503014, 2830), (24532312, 1900)]


def test_a_fide_xml_id_given_twice_keeps_the_first_player(tmp_path: Path) -> None:
    f = tmp_path / "standard_2024-03.xml"
    f.write_text(
        "<playerslist>\n<player><fideid>1503014</fideid><name>First</name><rating>2830</rating></player>\n"
        "<player><fideid>1503014</fideid><name>Second</name><rating>2000</rating></player>\n</playerslist>\n",
        encoding="utf-8",
    )
    con = memory_store()
    res = import_list(con, f, "fide")
    assert res.skips.select("line", "reason", "detail").rows() == [(3, "duplicate_id", "FIDE ID 1503014 as on line 2")]
    assert con.execute("SELECT name, rating FROM official_lists").fetchall() == [("First", 2830)]


def test_ffe_impossible_ratings_and_repeated_ids_are_skipped(tmp_path: Path) -> None:
    f = tmp_path / "ffe_2024-03.csv"
    f.write_text(
        "NrFFE;Nom;Prenom;FideCode;Elo;Rapide\nA12345;Dupont;Jean;;1650;1500\nB1;Neg;Elo;;-50;\n"
        "B2;High;Elo;;99999;1400\nA12345;Dupont;Jean2;;1660;\nC1;Fide;One;20600000;1700;\nC2;Fide;Two;20600000;1710;\n",
        encoding="utf-8",
    )
    con = memory_store()
    res = import_list(con, f, "ffe")
    assert res.skips.select("line", "reason", "detail").rows() == [
        (3, "bad_rating", "elo -50"),
        (4, "bad_rating", "elo 99999"),
        (5, "duplicate_id", "licence A12345 as on line 2"),
        (7, "duplicate_id", "FIDE ID 20600000 as on line 6"),
    ]
    got = con.execute("SELECT system, national_id, rating FROM official_lists ORDER BY 1, 2").fetchall()
    assert got == [
        ("ffe", "A12345", 1650),
        ("ffe", "C1", 1700),
        ("ffe-rapid", "A12345", 1500),
        ("ffe-rapid", "B2", 1400),
    ]


def test_ffe_placeholder_licences_are_no_id(tmp_path: Path) -> None:
    """Licences '0', '-', '?', '00000000', '-3' and a word were stored as national IDs: every row
    writing '0' was one person (the second skipped as 'ID already given'). They are no ID, as in an
    ID column of a TRF or PGN: a row with a FIDE ID is stored under it, the others are 'no_id'."""
    f = tmp_path / "ffe_2024-03.csv"
    rows = ["0;Zero;A;;1500", "0;Zero;B;;1510", "-;Dash;C;;1520", "?;Ask;D;;1530", "00000000;Zeros;E;;1540",
            "-3;Neg;F;;1550", "none;Word;G;;1560", "n/a;Na;H;20600000;1570", "k59857;Real;I;;1580",
            "\x1b[31m\x1b[0m;Esc;J;;1590", "B 22222;Spaced;K;;1600", "B22222;Spaced;K;;1610"]  # fmt: skip
    f.write_text("NrFFE;Nom;Prenom;FideCode;Elo\n" + "\n".join(rows) + "\n", encoding="utf-8")
    con = memory_store()
    res = import_list(con, f, "ffe")
    # a licence of escape codes only is none too; blanks are no part of one ('B 22222' is B22222)
    no_ids = [(n, "no_id") for n in (*range(2, 9), 11)]
    assert res.skips.select("line", "reason").rows() == [*no_ids, (13, "duplicate_id")]
    got = con.execute("SELECT fide_id, national_id, name, rating FROM official_lists ORDER BY rating").fetchall()
    assert got == [(20600000, None, "Na H", 1570), (None, "K59857", "Real I", 1580), (None, "B22222", "Spaced K", 1600)]


def test_ffe_repeated_licence_keeps_the_row_with_a_good_rating(tmp_path: Path) -> None:
    """Of two rows of one licence, the first with a rating and no bad rating is kept ("the first
    row with no bad rating"): a bad or missing rating on the first row lost the player's rating."""
    f = tmp_path / "ffe_2024-03.csv"
    rows = ["X1;Bad;First;9999", "X1;Good;Second;1800", "C3;Word;First;abc", "C3;Rated;Second;1600"]
    f.write_text("NrFFE;Nom;Prenom;Elo\n" + "\n".join(rows) + "\n", encoding="utf-8")
    con = memory_store()
    res = import_list(con, f, "ffe")
    assert res.skips.select("line", "reason", "detail").rows() == [
        (2, "duplicate_id", "licence X1 as on line 3"),
        (4, "duplicate_id", "licence C3 as on line 5"),
    ]
    got = con.execute("SELECT national_id, name, rating FROM official_lists ORDER BY 1").fetchall()
    assert got == [("C3", "Rated Second", 1600), ("X1", "Good Second", 1800)]


def _compared_with_carlsen(tmp_path: Path, second: str) -> Any:
    """`lists compare` of a March 2024 TXT holding Carlsen and `second` (a `_std` line) with a store
    whose computed list of that date holds Carlsen alone."""
    from elopipe.official.list_compare import compare_lists

    f = _txt(tmp_path, "std_mar24.txt", [_std("1503014", "Carlsen, Magnus", "2830"), second])
    con = memory_store()
    add_rows(
        con,
        players=[{"player_id": 1, "fide_id": 1503014, "name": "Carlsen, Magnus", "name_key": "carlsen magnus"}],
        rating_lists=[{"system": "fide", "list_date": dt.date(2024, 3, 1), "player_id": 1, "rating": 2830, "games": 0}],
    )
    return compare_lists(con, "fide", dt.date(2024, 3, 1), f)


def test_a_repeated_row_is_not_compared_and_is_counted(tmp_path: Path) -> None:
    """`lists compare` reads the file as the import does: the second row of an ID is left out."""
    cmp = _compared_with_carlsen(tmp_path, _std("1503014", "Again", "2000"))
    assert cmp.skips.select("line", "reason").rows() == [(3, "duplicate_id")]
    assert cmp.report.height == 1 and cmp.report["official_rating"].to_list() == [2830]


def test_a_row_whose_id_is_no_number_is_counted_when_no_player_takes_it(tmp_path: Path) -> None:
    """A row with the ID 'abc' fell out of both the report and the rows counted as not compared
    (the import counted it: 'FIDE ID not a number'); it is counted now, as a row without any ID is."""
    cmp = _compared_with_carlsen(tmp_path, _std("abc", "Bad, Id", "1600"))
    assert cmp.skips.select("line", "reason").rows() == [(3, "bad_id")]
    assert cmp.report["name"].to_list() == ["Carlsen, Magnus"]


# ---- files as a whole ------------------------------------------------------------------------


def test_a_cut_xml_list_warns(tmp_path: Path) -> None:
    f = tmp_path / "trunc_jul24.xml"
    f.write_text(
        '<?xml version="1.0"?><playerslist><player><fideid>1503014</fideid><rating>2830</rating></player>',
        encoding="utf-8",
    )
    res = import_list(memory_store(), f, "fide")
    assert res.rows == {"fide": 1}
    assert res.warnings == ["trunc_jul24.xml ends before </playerslist>: the file is cut short, players may be lost"]
    out = CliRunner().invoke(app, ["lists", "import", str(f), "--system", "fide", "--db", str(tmp_path / "s.duckdb")])
    assert out.exit_code == 0 and "ends before </playerslist>: the file is cut short" in out.output
    # `lists compare` reads the same file: it says so too (it compared the cut list in silence)
    from elopipe.official.list_compare import compare_lists

    con = memory_store()
    add_rows(
        con,
        players=[{"player_id": 1, "fide_id": 1503014, "name": "Carlsen, Magnus", "name_key": "carlsen magnus"}],
        rating_lists=[{"system": "fide", "list_date": dt.date(2024, 7, 1), "player_id": 1, "rating": 2830, "games": 0}],
    )
    assert compare_lists(con, "fide", dt.date(2024, 7, 1), f).warnings == res.warnings


def test_blank_lines_of_a_txt_list_are_neither_rows_nor_skips(tmp_path: Path) -> None:
    unrated = _std("25000004", "Unrated, Ulla", "")
    f = _txt(tmp_path, "std_mar24.txt", ["", _std("1503014", "Carlsen, Magnus", "2830"), "   ", "\r", unrated, "", ""])
    res = import_list(memory_store(), f, "fide")
    assert res.rows == {"fide": 1} and res.unrated == 1 and res.skips.height == 0


def test_a_csv_no_reader_can_split_is_refused_in_one_line_naming_file_and_line(tmp_path: Path) -> None:
    f = tmp_path / "ffe_junk_2024-03.csv"
    f.write_bytes(b'NrFFE;Nom;Elo\nA1;X;1500\n\x94\xef"\xb5]\xfd;"U0\x01;\x02\n"a;b;c\n"\xff\n;;"\n')
    with pytest.raises(ListFormatError) as err:
        import_list(memory_store(), f, "ffe")
    assert str(err.value) == (
        f"{f}: not an FFE list: line 4 opens a quote it does not close, so its fields cannot be told apart"
    )
    out = CliRunner().invoke(app, ["lists", "import", str(f), "--system", "ffe", "--db", str(tmp_path / "s.duckdb")])
    assert out.exit_code == 1 and out.output.splitlines() == [f"elopipe lists import: error: {err.value}"]


def test_the_columns_of_a_list_it_cannot_read_are_named_without_raw_control_bytes(tmp_path: Path) -> None:
    """A UTF-16 FFE CSV put NUL bytes into the one-line error that names its columns."""
    f = tmp_path / "ffe_2024-03.csv"
    f.write_bytes("NrFFE;Nom;Elo\nK1;A;1500\n".encode("utf-16"))
    with pytest.raises(ListFormatError, match="needs a licence and a name column") as refused:
        import_list(memory_store(), f, "ffe")
    assert "\x00" not in str(refused.value) and "\\x00" in str(refused.value)
