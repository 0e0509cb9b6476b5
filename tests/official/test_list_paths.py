"""A list file's name is a name, never a pattern (issue 26, item 4): DuckDB's and Polars' readers
expand `*`, `?`, `[...]` and `{a,b}` in a path, so `lists import 'standard_aug22frl?.xml'` stored
the players of every file the pattern matched. Each list format, and `lists compare`
(the same reader) read exactly the file named."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.official.list_import import import_list, read_list
from tests.helpers.official_lists import STD, fixed, memory_store

# (the name given, a file the name matches as a pattern); the quote tests the SQL quoting
NAMES = [
    ("standard_aug22frl?.xml", "standard_aug22frl1.xml"),
    ("standard_aug22frl*.xml", "standard_aug22frl_other.xml"),
    ("standard_aug22frl[1].xml", "standard_aug22frl1.xml"),
    ("standard_aug22frl{1,2}.xml", "standard_aug22frl2.xml"),
    ("standard_aug22frl'1.xml", "standard_aug22frl1.xml"),
]
IDS = ["question-mark", "star", "brackets", "braces", "quote"]


def _xml(fide_id: int, name: str, rating: int) -> str:
    return (
        f'<?xml version="1.0"?>\n<playerslist>\n<player>\n<fideid>{fide_id}</fideid>\n<name>{name}</name>\n'
        f"<country>ESP</country>\n<rating>{rating}</rating>\n</player>\n</playerslist>\n"
    )


def _txt(fide_id: int, name: str, rating: int) -> str:
    return fixed(STD, [[str(fide_id), name, "ESP", "M", "", "", "", "", str(rating), "0", "20", "1990", ""]])


def _csv(licence: str, name: str, rating: int) -> str:
    return f"Licence,Nom,Cat,Elo\n{licence},{name},SenM,{rating} F\n"


FORMATS = {
    "xml": (_xml(2500001, "Named, File", 1700), _xml(99999001, "Other, File", 2900), "fide"),
    "txt": (_txt(2500001, "Named, File", 1700), _txt(99999001, "Other, File", 2900), "fide"),
    "csv": (_csv("A00001", "NAMED File", 1700), _csv("Z99999", "OTHER File", 2900), "ffe"),
}


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize(("name", "decoy"), NAMES, ids=IDS)
def test_a_list_is_read_from_the_path_named_and_no_other(tmp_path: Path, fmt: str, name: str, decoy: str) -> None:
    named, other, system = FORMATS[fmt]
    f = tmp_path / name.replace(".xml", f".{fmt}")
    f.write_text(named, encoding="utf-8")
    (tmp_path / decoy.replace(".xml", f".{fmt}")).write_text(other, encoding="utf-8")
    con = memory_store()
    import_list(con, f, system, dt.date(2022, 8, 1))
    assert con.execute("SELECT DISTINCT rating FROM official_lists").fetchall() == [(1700,)]
    assert read_list(con, f, system, dt.date(2022, 8, 1)).rel.count("*").fetchall() == [(1,)]


@pytest.mark.parametrize(("name", "decoy"), NAMES, ids=IDS)
def test_lists_import_on_the_command_line_reads_the_file_named(tmp_path: Path, name: str, decoy: str) -> None:
    f = tmp_path / name
    f.write_text(_xml(2500001, "Named, File", 1700), encoding="utf-8")
    (tmp_path / decoy).write_text(_xml(99999001, "Other, File", 2900), encoding="utf-8")
    db = tmp_path / "g.duckdb"
    res = CliRunner().invoke(app, ["lists", "import", str(f), "--system", "fide", "--db", str(db)])
    assert res.exit_code == 0, res.output
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT fide_id, rating FROM official_lists").fetchall() == [(2500001, 1700)]
    finally:
        con.close()


def test_a_list_imported_again_for_its_date_says_what_it_replaced(tmp_path: Path) -> None:
    """A second file for a date already stored replaces that list (the official record of that
    date is one list), and says so: 6 stored rows became 2 without a word (a hostile tester)."""
    full, partial = tmp_path / "standard_may23frl.xml", tmp_path / "partial.xml"
    full.write_text(
        _xml(2500001, "One, A", 1700).replace(
            "</playerslist>",
            "".join(_xml(2500002 + i, f"Two{i}, B", 1800).split("<playerslist>\n")[1] for i in range(2)),
        ),
        encoding="utf-8",
    )
    partial.write_text(_xml(2500001, "One, A", 1710), encoding="utf-8")
    db = tmp_path / "g.duckdb"
    base = ["lists", "import", "--system", "fide", "--list-date", "2023-05-01", "--db", str(db)]
    first = CliRunner().invoke(app, [*base[:2], str(full), *base[2:]])
    assert first.exit_code == 0, first.output
    assert "replaced" not in first.output
    again = CliRunner().invoke(app, [*base[:2], str(partial), *base[2:]])
    assert again.exit_code == 0, again.output
    assert f"replaced the fide list of 2023-05-01 imported before: 3 rows from {full}; now 1" in again.output
