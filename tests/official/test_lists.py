"""Official lists (issue 7): FIDE TXT/XML and FFE CSV import, and the reconciliation report."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.official.list_compare import compare_lists
from elopipe.official.list_import import ListFormatError, import_list
from elopipe.publish.compare import compare
from elopipe.store.schema import ensure_schema
from tests.helpers.official_lists import FOA, STD, fixed, memory_store
from tests.helpers.paths import REPO
from tests.helpers.store_build import add_rows

# FIDE's standard-list layout (label, width); the header labels start the columns
STD_ROWS = [
    ["1503014", "Carlsen, Magnus", "NOR", "M", "GM", "", "", "", "2830", "2", "10", "1990", ""],
    ["25000000", "Müller, Jörg", "GER", "M", "", "", "", "", "2100", "9", "0", "0000", "i"],
    ["25000001", "Doe, Jane", "USA", "F", "", "WFM", "", "", "2150", "", "", "2001", "w"],
    ["25000002", "Young, Kid", "FRA", "M", "", "", "", "", "1650", "4", "40", "2013", ""],
    ["25000003", "Former, Star", "ENG", "M", "IM", "", "", "", "2390", "0", "10", "1960", "i"],
    ["25000004", "Unrated, Ulla", "SWE", "F", "", "", "", "", "", "", "", "1999", "w"],
]


def _rows(con, system: str = "fide") -> dict[int, tuple]:
    return {
        r[0]: r[1:]
        for r in con.execute(
            "SELECT fide_id, name, federation, sex, title, w_title, rating, games, k, birth_year, flag, ever_2400,"
            " player_id IS NOT NULL FROM official_lists WHERE system = ? ORDER BY fide_id",
            [system],
        ).fetchall()
    }


def test_fide_standard_txt(tmp_path: Path) -> None:
    f = tmp_path / "standard_mar24frl.txt"
    f.write_text(fixed(STD, STD_ROWS), encoding="utf-8")
    con = memory_store()
    # a player already in the store (from a tournament file) is linked, not duplicated
    add_rows(con, players=[{"player_id": 900, "fide_id": 1503014, "name": "Carlsen,M", "name_key": "carlsen m"}])
    res = import_list(con, f, "fide")
    assert res.list_date == dt.date(2024, 3, 1)  # from the file name
    assert res.rows == {"fide": 5} and res.players_linked == 1 and res.players_created == 4
    rows = _rows(con)
    assert rows[1503014] == ("Carlsen, Magnus", "NOR", "m", "GM", None, 2830, 2, 10, 1990, None, True, True)
    assert rows[25000000] == (
        "Müller, Jörg",
        "GER",
        "m",
        None,
        None,
        2100,
        9,
        None,
        None,
        "i",
        None,
        True,
    )  # K 0, B-day 0000
    assert rows[25000001][4:9] == ("WFM", 2150, None, None, 2001)  # blank games and K: unknown
    assert rows[25000002][-2] is False  # K 40: never 2400
    assert rows[25000003][-2] is True  # K 10 below 2400: reached 2400 once
    assert 25000004 not in rows  # no rating: not on the list
    assert con.execute("SELECT player_id FROM official_lists WHERE fide_id = 1503014").fetchone()[0] == 900
    assert con.execute("SELECT birth_year, federation FROM players WHERE player_id = 900").fetchone() == (1990, "NOR")
    # the official spelling is the name the store shows from now on
    assert con.execute("SELECT name FROM players WHERE player_id = 900").fetchone() == ("Carlsen, Magnus",)
    # re-importing the same date replaces, never duplicates
    import_list(con, f, "fide")
    assert con.execute("SELECT count(*) FROM official_lists").fetchone()[0] == 5
    assert con.execute("SELECT count(*) FROM players").fetchone()[0] == 5


def test_fide_latin1_txt_and_month_code_header(tmp_path: Path) -> None:
    layout = [(lab if lab != "SRtng" else "SEP15", w) for lab, w in STD]
    f = tmp_path / "standard_list.txt"
    f.write_bytes(fixed(layout, STD_ROWS[:2]).encode("latin-1"))
    con = memory_store()
    res = import_list(con, f, "fide")
    assert res.list_date == dt.date(2015, 9, 1)
    assert _rows(con)[25000000][:2] == ("Müller, Jörg", "GER")


def test_a_list_of_another_month_than_list_date_is_refused_by_compare_and_warned_by_import(tmp_path: Path) -> None:
    """A JUN22 file (name and header) given with --list-date 2022-07-01: `lists compare` refuses
    (every player would differ by a month's games: a wrong report), `lists import` stores it as
    asked (--list-date is its override) and says the months differ; a name that gives the
    --list-date month, or a file that names none, passes silently."""
    layout = [(lab if lab != "SRtng" else "JUN22", w) for lab, w in STD]
    june = tmp_path / "standard_jun22frl.txt"
    june.write_text(fixed(layout, STD_ROWS[:2]), encoding="utf-8")
    july = dt.date(2022, 7, 1)
    with pytest.raises(ListFormatError, match=r"name and header say a list of 2022-06, not of --list-date 2022-07-01"):
        compare_lists(memory_store(), "fide", july, june)
    res = import_list(memory_store(), june, "fide", list_date=july)
    assert res.list_date == july and res.rows == {"fide": 2}
    assert res.warnings == [f"{june}: the file's name and header say a list of 2022-06, not of --list-date 2022-07-01"]
    renamed = tmp_path / "standard_jul22frl.txt"  # the name says July, the header June: --list-date chose
    renamed.write_bytes(june.read_bytes())
    assert import_list(memory_store(), renamed, "fide", list_date=july).warnings == []
    plain = tmp_path / "official.txt"
    plain.write_text(fixed(STD, STD_ROWS[:2]), encoding="utf-8")
    assert import_list(memory_store(), plain, "fide", list_date=july).warnings == []


def test_a_file_whose_name_and_header_name_other_months_asks_for_the_list_date(tmp_path: Path) -> None:
    """A FIDE TXT named for August 2022 whose header says MAR22 (a renamed or mislabelled file):
    neither month is taken silently (the name's moved the list by five months), the import asks
    for --list-date; a name and a header of the same month import as before."""
    layout = [(lab if lab != "SRtng" else "MAR22", w) for lab, w in STD]
    f = tmp_path / "standard_aug22frl.txt"
    f.write_text(fixed(layout, STD_ROWS[:2]), encoding="utf-8")
    with pytest.raises(
        ListFormatError, match=r"name says a list of 2022-08 and its header one of 2022-03; pass --list-date"
    ):
        import_list(memory_store(), f, "fide")
    assert import_list(memory_store(), f, "fide", dt.date(2022, 3, 1)).list_date == dt.date(2022, 3, 1)
    same = tmp_path / "standard_mar22frl.txt"
    same.write_text(fixed(layout, STD_ROWS[:2]), encoding="utf-8")
    assert import_list(memory_store(), same, "fide").list_date == dt.date(2022, 3, 1)


def test_fide_monthly_file_headers_gms_and_k(tmp_path: Path) -> None:
    layout = [{"SRtng": "JAN23", "SGm": "Gms", "SK": "K"}.get(lab, lab) for lab, _ in STD]
    f = tmp_path / "standard_jan23frl.txt"
    f.write_text(fixed(list(zip(layout, [w for _, w in STD], strict=True)), STD_ROWS), encoding="utf-8")
    con = memory_store()
    res = import_list(con, f, "fide")
    assert res.list_date == dt.date(2023, 1, 1) and res.rows == {"fide": 5}
    assert _rows(con)[1503014][5:9] == (2830, 2, 10, 1990)


def test_fide_combined_txt_gives_three_systems(tmp_path: Path) -> None:
    rows = [
        ["1503014", "Carlsen, Magnus", "NOR", "M", "GM", "", "", "", "2830", "0", "10", "2820", "0", "20", "2880", "0",
         "20", "1990", ""],
        ["25000010", "Rapid, Only", "ITA", "M", "", "", "", "", "", "", "", "1800", "7", "20", "", "", "", "1985", ""],
    ]  # fmt: skip
    f = tmp_path / "players_list_foa.txt"
    f.write_text(fixed(FOA, rows), encoding="utf-8")
    con = memory_store()
    res = import_list(con, f, "fide", dt.date(2026, 11, 1))
    assert res.rows == {"fide": 1, "fide-blitz": 1, "fide-rapid": 2}
    assert _rows(con, "fide-rapid")[25000010][5:8] == (1800, 7, 20)
    assert con.execute("SELECT count(DISTINCT player_id) FROM official_lists").fetchone()[0] == 2


XML_MULTI = """<?xml version="1.0" encoding="utf-8"?>
<playerslist>
<player>
<fideid>1503014</fideid>
<name>Carlsen, Magnus</name>
<country>NOR</country>
<sex>M</sex>
<title>GM</title>
<w_title></w_title>
<o_title></o_title>
<foa_title></foa_title>
<rating>2830</rating>
<games>0</games>
<k>10</k>
<birthday>1990</birthday>
<flag></flag>
</player>
<player>
<fideid>25000000</fideid>
<name>O&apos;Brien &amp; Co, Seán</name>
<country>IRL</country>
<sex>F</sex>
<title></title>
<w_title>WIM</w_title>
<o_title></o_title>
<foa_title></foa_title>
<rating>2210</rating>
<games>3</games>
<k>0</k>
<birthday></birthday>
<flag>wi</flag>
</player>
</playerslist>
"""


@pytest.mark.parametrize("one_line", [False, True])
def test_fide_xml(tmp_path: Path, one_line: bool) -> None:
    f = tmp_path / "standard_xml_2024-03.xml"
    f.write_text(XML_MULTI.replace("\n", "") if one_line else XML_MULTI, encoding="utf-8")
    con = memory_store()
    res = import_list(con, f, "fide")
    assert res.file_format == "fide-xml" and res.list_date == dt.date(2024, 3, 1)
    rows = _rows(con)
    assert rows[1503014][:3] == ("Carlsen, Magnus", "NOR", "m") and rows[1503014][5:9] == (2830, 0, 10, 1990)
    assert rows[25000000] == ("O'Brien & Co, Seán", "IRL", "w", None, "WIM", 2210, 3, None, None, "wi", None, True)


def test_fide_xml_character_references(tmp_path: Path) -> None:
    """Names written with XML character references (decimal or hex) are stored as their
    characters, decoded in one pass with the named entities: `&amp;#252;` is the text `&#252;`.
    A reference to no XML character stays as written; one to a control character is removed with
    the list's other escape codes."""
    names = {
        25000000: ("M&#252;ller, J&#xFC;rgen", "Müller, Jürgen"),
        25000001: ("Lit&amp;#252;ral, Ann", "Lit&#252;ral, Ann"),
        25000002: ("Nul&#0;l, Bo", "Nul&#0;l, Bo"),
        25000003: ("Esc&#27;[31mape, Cy", "Escape, Cy"),
    }
    players = "".join(
        f"<player><fideid>{i}</fideid><name>{raw}</name><country>GER</country><sex>M</sex>"
        f"<rating>2000</rating><games>0</games><k>20</k></player>\n"
        for i, (raw, _) in names.items()
    )
    f = tmp_path / "standard_xml_2024-03.xml"
    f.write_text(f"<playerslist>\n{players}</playerslist>\n", encoding="utf-8")
    con = memory_store()
    assert import_list(con, f, "fide").rows == {"fide": 4}
    assert {i: r[0] for i, r in _rows(con).items()} == {i: want for i, (_, want) in names.items()}


FFE_CSV = """NrFFE;Nom;Prenom;Cat;Sexe;NeLe;Federation;FideCode;Elo;Fide;Rapide;RapideFide;Blitz;BlitzFide
K59857;DUPONT;Jean;SenM;M;04/05/1990;FRA;;1530;N;1499;E;;
A01450;MARTIN;Claire;VetF;F;12/11/1960;FRA;20600000;1875;F;1800;F;1790;F
Z06739;PETIT;Léo;PupM;M;2014-03-01;FRA;;999;E;;;;
"""


def test_ffe_csv_with_flags(tmp_path: Path) -> None:
    f = tmp_path / "ffe_joueurs.csv"
    f.write_text(FFE_CSV, encoding="utf-8")
    con = memory_store()
    res = import_list(con, f, "ffe", dt.date(2025, 9, 1))
    assert res.rows == {"ffe": 3, "ffe-blitz": 1, "ffe-rapid": 2}
    got = con.execute(
        "SELECT system, national_id, name, category, fide_id, rating, rating_flag, birth_year, sex FROM official_lists"
        " ORDER BY system, national_id"
    ).fetchall()
    assert got[:3] == [
        ("ffe", "A01450", "MARTIN Claire", "VetF", 20600000, 1875, "F", 1960, "w"),
        ("ffe", "K59857", "DUPONT Jean", "SenM", None, 1530, "N", 1990, "m"),
        ("ffe", "Z06739", "PETIT Léo", "PupM", None, 999, "E", 2014, "m"),
    ]
    assert con.execute("SELECT count(*) FROM players WHERE national_id IS NOT NULL").fetchone()[0] == 3


def test_ffe_csv_rating_and_flag_in_one_cell(tmp_path: Path) -> None:
    f = tmp_path / "ffe.csv"
    f.write_text("Licence,Nom,Cat,Elo,Rapide\nK59857,DUPONT Jean,SenM,1530 N,1499E\n", encoding="utf-8")
    con = memory_store()
    import_list(con, f, "ffe", dt.date(2025, 9, 1))
    got = con.execute("SELECT system, rating, rating_flag FROM official_lists ORDER BY 1").fetchall()
    assert got == [("ffe", 1530, "N"), ("ffe-rapid", 1499, "E")]


def test_unreadable_lists_are_refused(tmp_path: Path) -> None:
    con = memory_store()
    nodate = tmp_path / "list.txt"
    nodate.write_text(fixed(STD, STD_ROWS[:1]), encoding="utf-8")
    with pytest.raises(ListFormatError, match="list-date"):
        import_list(con, nodate, "fide")
    junk = tmp_path / "junk_2024-01.txt"
    junk.write_text("hello world\n", encoding="utf-8")
    with pytest.raises(ListFormatError, match="not a FIDE list"):
        import_list(con, junk, "fide")
    with pytest.raises(ListFormatError, match="unknown list system"):
        import_list(con, junk, "uscf")
    assert con.execute("SELECT count(*) FROM official_lists").fetchone()[0] == 0


def _computed(con, rows: list[tuple]) -> None:
    """rating_lists rows (fide_id, name, rating, games, k) for fide 2024-04-01; players created as needed."""
    for fid, name, rating, games, k in rows:
        pid = con.execute("SELECT player_id FROM players WHERE fide_id = ?", [fid]).fetchone()
        if pid is None:
            pid = con.execute("SELECT nextval('player_id_seq')").fetchone()
            add_rows(con, players=[{"player_id": pid[0], "fide_id": fid, "name": name, "name_key": name.lower()}])
        add_rows(
            con,
            rating_lists=[{"system": "fide", "list_date": dt.date(2024, 4, 1), "player_id": pid[0], "rating": rating,
                           "games": games, "k": k, "source": "computed"}],
        )  # fmt: skip


OFFICIAL_APR = [
    ["1", "Same, Sam", "NOR", "M", "", "", "", "", "2000", "0", "20", "1990", ""],
    ["2", "Missing, Tournament", "NOR", "M", "", "", "", "", "2010", "9", "20", "1990", ""],
    ["3", "Kay, Mismatch", "NOR", "M", "", "", "", "", "1890", "5", "40", "2010", ""],
    ["4", "Corrected, Base", "NOR", "M", "", "", "", "", "1750", "0", "20", "1990", ""],
    ["5", "Official, Only", "NOR", "M", "", "", "", "", "1600", "0", "20", "1990", ""],
]


def test_compare_reports_matches_differences_and_one_sided_players(tmp_path: Path) -> None:
    con = memory_store()
    _computed(con, [(1, "Same, Sam", 2000, 0, 20), (2, "Missing, Tournament", 1995, 4, 20),
                    (3, "Kay, Mismatch", 1870, 5, 20), (4, "Corrected, Base", 1700, 0, 20),
                    (6, "Computed, Only", 1500, 3, 40)])  # fmt: skip
    f = tmp_path / "standard_apr24frl.txt"
    f.write_text(fixed(STD, OFFICIAL_APR), encoding="utf-8")
    cmp = compare_lists(con, "fide", dt.date(2024, 4, 1), f)
    by_id = {r["fide_id"]: r for r in cmp.report.iter_rows(named=True)}
    assert {k: (v["status"], v["cause"]) for k, v in by_id.items()} == {
        1: ("match", None),
        2: ("differs", "missing_tournament"),
        3: ("differs", "k_mismatch"),
        4: ("differs", "base_correction"),
        5: ("official_only", None),
        6: ("computed_only", None),
    }
    # official − computed: the sign of `elopipe compare fide official` (B − A)
    assert by_id[2]["official_minus_computed"] == 15 and by_id[4]["official_minus_computed"] == 50
    assert by_id[3]["official_k"] == 40 and by_id[3]["computed_k"] == 20
    assert cmp.counts() == {"differs": 3, "official_only": 1, "computed_only": 1, "match": 1}
    # each differing player once, by its cause: the causes add up to 'differs'
    assert cmp.cause_counts() == {"base_correction": 1, "k_mismatch": 1, "missing_tournament": 1}
    # real differences first, largest first; then one side only; matches last
    assert [(r["fide_id"], r["status"]) for r in cmp.report.iter_rows(named=True)] == [
        (4, "differs"), (3, "differs"), (2, "differs"), (5, "official_only"), (6, "computed_only"), (1, "match")
    ]  # fmt: skip
    # comparing reads the file only: the official list is not stored
    assert con.execute("SELECT count(*) FROM official_lists").fetchone()[0] == 0
    # once imported, `elopipe compare fide official` gives the same numbers with the same sign
    import_list(con, f, "fide", dt.date(2024, 4, 1))
    rows = compare(con, "fide", "official", dt.date(2024, 4, 1)).rows
    b_minus_a = dict(zip(rows["fide_id"], rows["diff"], strict=True))
    assert {k: b_minus_a[k] for k in (1, 2, 3, 4)} == {k: by_id[k]["official_minus_computed"] for k in (1, 2, 3, 4)}


def test_compare_needs_a_computed_list(tmp_path: Path) -> None:
    f = tmp_path / "standard_apr24frl.txt"
    f.write_text(fixed(STD, OFFICIAL_APR), encoding="utf-8")
    with pytest.raises(ValueError, match="no computed fide list"):
        compare_lists(memory_store(), "fide", dt.date(2024, 4, 1), f)


def test_lists_and_players_commands(tmp_path: Path) -> None:
    db = tmp_path / "cli.duckdb"
    f = tmp_path / "standard_mar24frl.txt"
    f.write_text(fixed(STD, STD_ROWS), encoding="utf-8")
    runner = CliRunner()
    res = runner.invoke(app, ["lists", "import", str(f), "--system", "fide", "--db", str(db)])
    assert res.exit_code == 0, res.output
    assert "fide: 5" in res.output and "2024-03-01" in res.output
    con = duckdb.connect(str(db))
    _computed(con, [(1503014, "Carlsen, Magnus", 2830, 2, 10), (25000000, "Müller, Jörg", 2090, 9, 20)])
    ids = dict(con.execute("SELECT fide_id, player_id FROM players").fetchall())
    con.close()
    out = tmp_path / "report.csv"
    april = tmp_path / "standard_apr24frl.txt"  # the list of the computed list's month: the March
    april.write_bytes(f.read_bytes())  # file is refused for it (its name says another month)
    res = runner.invoke(
        app,
        [
            "lists",
            "compare",
            str(april),
            "--system",
            "fide",
            "--list-date",
            "2024-04-01",
            "--db",
            str(db),
            "--out",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    assert "match 1" in res.output and "official_only 3" in res.output
    assert out.read_text().count("\n") == 6  # header + 5 players
    # an existing file is never overwritten: the store, the list compared, a user's file (the
    # store became a CSV report: hostile tester); refused before anything is read, exit 2
    (tmp_path / "mine.csv").write_text("MY PRECIOUS\n", encoding="utf-8")
    for taken in (db, april, tmp_path / "mine.csv", out):
        before = taken.read_bytes()
        args = ["lists", "compare", str(april), "--system", "fide", "--list-date", "2024-04-01", "--db", str(db)]
        res = runner.invoke(app, [*args, "--out", str(taken)])
        assert res.exit_code == 2 and "exists: give a new file for the report" in res.output, res.output
        assert taken.read_bytes() == before
    # a folder that is not there is said before the comparison, not after it
    res = runner.invoke(app, [*args, "--out", str(tmp_path / "nope" / "x.csv")])
    assert res.exit_code == 2 and "does not exist" in res.output and "fide 2024-04-01" not in res.output, res.output
    # officer decisions: a merge of two different FIDE IDs is refused with the reason
    res = runner.invoke(
        app, ["players", "merge", str(ids[1503014]), str(ids[25000000]), "--reason", "test", "--db", str(db)]
    )
    assert res.exit_code == 1 and "never merged" in " ".join(res.output.split())
    res = runner.invoke(app, ["players", "suspects", "--db", str(db)])
    assert res.exit_code == 0, res.output


SAN_VIATOR = REPO.parent / "shared" / "data" / "trf" / "esp_torneo_san_viator_2018_vega_137players.trf"


@pytest.mark.skipif(not SAN_VIATOR.exists(), reason="shared data not present")
def test_an_imported_list_is_the_base_of_the_next_rating(tmp_path: Path) -> None:
    from elopipe.ingest.driver import ingest_paths
    from elopipe.rating.run import rate

    db = tmp_path / "s.duckdb"
    ingest_paths([SAN_VIATOR], db)
    con = duckdb.connect(str(db))
    fid, name, in_file = con.execute(
        "SELECT p.fide_id, p.name, tp.rating_in_file FROM tournament_players tp JOIN players p USING (player_id)"
        " WHERE tp.rating_in_file > 1500 AND p.fide_id IS NOT NULL ORDER BY p.fide_id LIMIT 1"
    ).fetchone()
    official = in_file + 37
    f = tmp_path / "standard_apr18frl.txt"  # the list in force when the event started (8 April 2018)
    f.write_text(fixed(STD, [[str(fid), name, "ESP", "M", "", "", "", "", str(official), "0", "20", "1980", ""]]))
    import_list(con, f, "fide")
    rate(con, "fide")
    ro = con.execute(
        "SELECT DISTINCT tr.ro FROM tournament_ratings tr JOIN players p USING (player_id)"
        " WHERE tr.system = 'fide' AND p.fide_id = ?",
        [fid],
    ).fetchall()
    assert ro == [(official,)]
    con.close()


def test_an_imported_k10_below_2400_keeps_k10(tmp_path: Path) -> None:
    """FIDE B.02 8.3.3: once 2400 was reached, K stays 10. A list that shows K 10 at 2350 says so."""
    from elopipe.ingest.driver import ingest_paths
    from elopipe.rating.run import rate

    db = tmp_path / "s.duckdb"
    ingest_paths([SAN_VIATOR], db)
    con = duckdb.connect(str(db))
    fid, name = con.execute(
        "SELECT p.fide_id, p.name FROM tournament_players tp JOIN players p USING (player_id)"
        " JOIN canonical_games g ON g.white_id = tp.player_id AND g.played"
        " WHERE tp.rating_in_file > 1500 AND p.fide_id IS NOT NULL ORDER BY p.fide_id LIMIT 1"
    ).fetchone()
    f = tmp_path / "standard_apr18frl.txt"
    f.write_text(fixed(STD, [[str(fid), name, "ESP", "M", "", "", "", "", "2350", "0", "10", "1970", ""]]))
    import_list(con, f, "fide")
    rate(con, "fide")
    ks = con.execute(
        "SELECT DISTINCT tr.k FROM tournament_ratings tr JOIN players p USING (player_id)"
        " WHERE tr.system = 'fide' AND p.fide_id = ?",
        [fid],
    ).fetchall()
    assert ks == [(10,)]
    con.close()


def test_a_name_only_a_replaced_list_gave_is_no_longer_shown(tmp_path: Path) -> None:
    con = memory_store()
    add_rows(
        con,
        players=[{"player_id": 900, "fide_id": 1503014, "name": "Carlsen,M", "name_key": "carlsen m"}],
        tournament_players=[{"tournament_id": 1, "player_id": 900, "name_as_written": "Carlsen,M", "file_id": 1}],
    )
    f = tmp_path / "standard_mar24frl.txt"
    f.write_text(fixed(STD, STD_ROWS), encoding="utf-8")
    import_list(con, f, "fide")
    assert con.execute("SELECT name FROM players WHERE player_id = 900").fetchone() == ("Carlsen, Magnus",)
    # the same date imported again from a corrected file that no longer lists him
    f.write_text(fixed(STD, STD_ROWS[1:]), encoding="utf-8")
    import_list(con, f, "fide")
    assert con.execute("SELECT name FROM players WHERE player_id = 900").fetchone() == ("Carlsen,M",)


def test_the_latest_official_list_gives_the_name_after_a_name_change(tmp_path: Path) -> None:
    con = memory_store()
    jan, feb = tmp_path / "standard_jan24frl.txt", tmp_path / "standard_feb24frl.txt"
    row = ["25000001", "Doe, Jane Elizabeth", "USA", "F", "", "WFM", "", "", "2150", "", "", "2001", "w"]
    jan.write_text(fixed(STD, [row]), encoding="utf-8")
    feb.write_text(fixed(STD, [[row[0], "Smith, Jane", *row[2:]]]), encoding="utf-8")
    shown = "SELECT name FROM players WHERE fide_id = 25000001"
    for order in ((jan, feb), (feb, jan)):
        con = memory_store()
        for f in order:
            import_list(con, f, "fide")
        # a tournament entry with the old spelling does not bring it back
        pid = con.execute("SELECT player_id FROM players WHERE fide_id = 25000001").fetchall()[0][0]
        add_rows(
            con,
            tournament_players=[{"tournament_id": 1, "player_id": pid, "name_as_written": "Doe, Jane Elizabeth",
                                 "file_id": 1}],
        )  # fmt: skip
        from elopipe.identity.decisions import refresh_display_names

        refresh_display_names(con, [pid])
        assert con.execute(shown).fetchall() == [("Smith, Jane",)]


def test_a_file_name_with_an_impossible_date_asks_for_the_list_date(tmp_path: Path) -> None:
    """'players_list_2023-02-30.txt' names no real day: the import asks for --list-date (one line
    through the CLI), it does not fail on Python's date check."""
    f = tmp_path / "players_list_2023-02-30.txt"
    f.write_text(fixed(STD, STD_ROWS), encoding="utf-8")
    with pytest.raises(ListFormatError, match="pass --list-date"):
        import_list(memory_store(), f, "fide")
    res = import_list(memory_store(), f, "fide", dt.date(2023, 3, 1))
    assert res.list_date == dt.date(2023, 3, 1)


def test_compare_command_shows_differences_first_and_says_what_it_cut(tmp_path: Path) -> None:
    db = tmp_path / "cmp.duckdb"
    con = duckdb.connect(str(db))
    ensure_schema(con)
    # 40 players only the store rates (by FIDE ID 100..139) and the three that differ (ids 2-4)
    _computed(con, [(1, "Same, Sam", 2000, 0, 20), (2, "Missing, Tournament", 1995, 4, 20),
                    (3, "Kay, Mismatch", 1870, 5, 20), (4, "Corrected, Base", 1700, 0, 20)]
              + [(100 + i, f"Computed, Only{i}", 1500 + i, 3, 40) for i in range(40)])  # fmt: skip
    con.close()
    f = tmp_path / "standard_apr24frl.txt"
    f.write_text(fixed(STD, OFFICIAL_APR), encoding="utf-8")
    args = ["lists", "compare", str(f), "--system", "fide", "--list-date", "2024-04-01", "--db", str(db)]
    res = CliRunner().invoke(app, [*args, "--limit", "5"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0] == (
        "fide 2024-04-01: differs 3 (base_correction 1, k_mismatch 1, missing_tournament 1), official_only 1, "
        "computed_only 40, match 1"
    )
    shown = [line.split("│")[1].strip() for line in lines if line.startswith("│")]
    assert shown == ["4", "3", "2", "5", "100"]  # the three that differ come first, whatever their FIDE ID
    assert "official_minus_computed" in res.output
    assert lines[-1] == "… 39 more rows (--limit 44 shows all; --out FILE writes every row)"
    every = CliRunner().invoke(app, [*args, "--limit", "44"])
    assert "more row" not in every.output
    one = CliRunner().invoke(app, [*args, "--limit", "43"])
    assert one.output.splitlines()[-1] == "… 1 more row (--limit 44 shows all; --out FILE writes every row)"


def test_a_title_won_since_the_players_events_comes_from_the_imported_list(tmp_path: Path) -> None:
    """The entries give no title; the February list gives IM: the player shows IM after that
    import (identity.facts: a fact no entry gives comes from the latest list)."""
    con = memory_store()
    jan, feb = tmp_path / "standard_jan24frl.txt", tmp_path / "standard_feb24frl.txt"
    row = ["25000007", "Riser, Rita", "ESP", "F", "", "", "", "", "2350", "9", "20", "2000", "w"]
    jan.write_text(fixed(STD, [row]), encoding="utf-8")
    import_list(con, jan, "fide")
    pid = con.execute("SELECT player_id FROM players WHERE fide_id = 25000007").fetchone()[0]
    add_rows(con, tournament_players=[{"tournament_id": 1, "player_id": pid, "name_as_written": "Riser, Rita",
                                       "file_id": 1}])  # fmt: skip
    feb.write_text(fixed(STD, [[*row[:4], "IM", *row[5:]]]), encoding="utf-8")
    import_list(con, feb, "fide")
    assert con.execute("SELECT title FROM players WHERE player_id = ?", [pid]).fetchall() == [("IM",)]
