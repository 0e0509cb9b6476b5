"""The Norms section of the tournament report (`elopipe.publish.norms_report`): the IT1 data of
the players who made a norm or missed one by a single clause or half a point, in the terminal,
the HTML and `<stem>.norms.csv`.

The event is the hand-made round robin of `tests/rating/fide/test_norms_store.py`: the applicant
(player 10, IM, FRA) scores 7/9 against eight GMs rated 2500 and player 9, unrated and untitled,
who counts 1400 in 2024 and is raised to the GM floor 2200: Ra (8·2500 + 2200) / 9 = 2466.7 →
2467; 78 % → dp 220; Rp 2687: a GM norm.
"""

from __future__ import annotations

import csv
from pathlib import Path

import duckdb
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.ingest.driver import ingest_paths
from elopipe.publish.norms_report import norm_section, section_lines
from elopipe.publish.reports import write_report
from elopipe.rating.run import rate
from elopipe.store.connect import open_writer
from tests.rating.fide.test_norms_store import rr_trf


def _rated(folder: Path, text: str) -> Path:
    """The TRF `text` ingested into a new store in `folder` and rated under fide: the store."""
    f = folder / "rr.trf"
    f.write_text(text, encoding="utf-8")
    db = folder / "s.duckdb"
    ingest_paths([f], db)
    with open_writer(db) as con:
        rate(con, "fide")
    return db


def _store(tmp_path: Path) -> Path:
    return _rated(tmp_path, rr_trf(rating={9: ""}, title={9: ""}))


def test_section_prints_the_it1_data(tmp_path: Path) -> None:
    db = _store(tmp_path)
    con = duckdb.connect(str(db), read_only=True)
    try:
        section = norm_section(con, 1, "fide")
        gm = next(s for s in section if s["name"] == "Player10, Test" and s["norm"] == "GM")
        assert (gm["decision"], gm["games"], float(gm["points"]), gm["ra"], gm["p"], gm["dp"], gm["rp"]) == (
            "norm",
            9,
            7.0,
            2467,
            78,
            220,
            2687,
        )
        assert [o["round"] for o in gm["opponents"]] == list(range(1, 10))
        raised = [o for o in gm["opponents"] if o["note"]]
        assert [(o["name"], o["rating"], o["note"]) for o in raised] == [
            ("Player09, Test", None, "raised to 2200 from unrated = 1400 (1.4.6c)")
        ]
        # he holds IM: his IM norm is not listed; the women's norms do not apply to him
        assert {(s["name"], s["norm"]) for s in section if s["name"] == "Player10, Test"} == {("Player10, Test", "GM")}
        lines = section_lines(section)
        assert "Player10, Test (IM, FRA) – GM norm: made" in lines
        assert "  games 9, points 7.0, Ra 2467, p 78 %, dp 220, Rp 2687" in lines
    finally:
        con.close()


def test_report_files_and_cli(tmp_path: Path) -> None:
    db = _store(tmp_path)
    con = duckdb.connect(str(db), read_only=True)
    try:
        paths = write_report(con, 1, "fide", tmp_path / "out")
    finally:
        con.close()
    norms_csv = next(p for p in paths if p.name.endswith(".norms.csv"))
    rows = list(csv.DictReader(norms_csv.open(encoding="utf-8")))
    mine = next(r for r in rows if r["name"] == "Player10, Test" and r["norm"] == "GM")
    assert (mine["decision"], mine["ra"], mine["rp"], mine["points"]) == ("norm", "2467", "2687", "7.0")
    html = next(p for p in paths if p.suffix == ".html").read_text(encoding="utf-8")
    assert '<h2 id="norms">Norms</h2>' in html and "raised to 2200 from unrated = 1400 (1.4.6c)" in html
    result = CliRunner().invoke(app, ["report", "--tournament", "1", "--db", str(db), "--out", str(tmp_path / "cli")])
    assert result.exit_code == 0, result.output
    assert "Player10, Test (IM, FRA) – GM norm: made" in result.output


def test_near_miss_is_listed_with_its_remedy(tmp_path: Path) -> None:
    # two losses (players 1 and 2) and a draw with player 3: 4.5/9 = 50 %, dp 0, Ra 2500, Rp 2500;
    # 6/9 = 66.7 % → 67, dp 125, Rp 2625 would do, 5.5/9 → 61 %, dp 80, 2580 not: 1½ points more
    db = _rated(tmp_path, rr_trf(results={(10, 1): "0", (10, 2): "0", (10, 3): "="}))
    con = duckdb.connect(str(db), read_only=True)
    try:
        lines = section_lines(norm_section(con, 1, "fide"))
    finally:
        con.close()
    assert (
        "Player10, Test (IM, FRA) – GM norm: missed, 1.4.8: Rp 2500 (Ra 2500 + dp 0 at 50 %), 2600 needed;"
        " 1½ points more" in lines
    )


def test_undecided_is_listed_with_the_missing_fact(tmp_path: Path) -> None:
    # player 9 written without a federation: the applicant's 7/9 meets every clause the file can
    # decide, and 1.4.3/1.4.4 wait on that federation
    db = _rated(tmp_path, rr_trf(fed={9: ""}))
    con = duckdb.connect(str(db), read_only=True)
    try:
        lines = section_lines(norm_section(con, 1, "fide"))
    finally:
        con.close()
    assert (
        "Player10, Test (IM, FRA) – GM norm: undecided, unknown: the federation of 1 opponent(s) (1.4.3, 1.4.4)"
        in lines
    )
    assert any(line.startswith("  R") and "Player09, Test  GM  ?  2500" in line for line in lines)


def test_a_womens_norm_missed_is_listed_only_for_a_woman(tmp_path: Path) -> None:
    """Four losses, 3/9: the WGM and WIM norms missed by half a point (1.4.8b, 35 %), with the
    applicant's sex not given (PGN files give none) or given as a woman: they are listed for a
    woman only. An Olympiad's open section listed 131 of them for players whose sex no file
    gives, most of them men (a fresh user)."""
    text = rr_trf(results={(10, k): "0" for k in range(1, 5)})

    def lines_for(sex: str) -> list[str]:
        d = tmp_path / (sex.strip() or "unknown")
        d.mkdir()
        db = _rated(d, text.replace("001   10 m IM Player10", f"001   10 {sex} IM Player10"))
        con = duckdb.connect(str(db), read_only=True)
        try:
            missed = con.execute("SELECT count(*) FROM v_norms WHERE norm IN ('WGM', 'WIM') AND decision = 'missed'")
            assert missed.fetchall()[0][0] > 0  # the rule decided them: only the report leaves them out
            return section_lines(norm_section(con, 1, "fide"))
        finally:
            con.close()

    def womens(lines: list[str]) -> list[str]:
        return [line for line in lines if " – WGM norm" in line or " – WIM norm" in line]

    assert womens(lines_for(" ")) == []
    # (an IM holds the WIM title's worth: only the WGM norm is news for her)
    assert [line.split(" – ")[1][:16] for line in womens(lines_for("w"))] == ["WGM norm: missed"]
