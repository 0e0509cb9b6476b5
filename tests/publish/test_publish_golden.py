"""Golden tests: real TRF files, ingested and rated with `--system fide`, then published.

The expected rows in `tests/golden/` were worked out BY HAND from the TRF files and the
tables of the FIDE spec (table 8.1.2: rating difference D -> PD; table 8.1.1: p -> dp), not
copied from program output. `*` in a golden cell = not checked; empty = expected NULL.
See tests/golden/README.md for the assumptions (bootstrap ratings from the file, K 20 / 10
from July 2014, 15 / 10 before; 400-point rule on every game; old initial-rating rule, none
before July 2014).

Working, San Viator 2018 (rated on the 2018-07-01 list):
- #5 Baltasar Garza 1683: R1 '+' vs #68 (forfeit, not rated); R2/R5 'H', R7 'Z' byes;
  R3 vs #43 1530 lost: D 153 -> .70; R4 vs #62 1457 won: D 226 -> .79; R6 vs #39 1540 won:
  D 143 -> .69. n 3, W 2, We 2.18, W-We -0.18, K 20 -> -3.60 -> -4 (list 1679).
  Ra 4527/3 = 1509; p .67 -> dp +125; Rp 1634.
- #8 Arias Cusio 1661: vs 1415 ½ (D 246 -> .81), 1375 1 (286 -> .84), 1494 1 (167 -> .72),
  1547 1 (114 -> .66), 1543 1 (118 -> .66), 1670 1 (-9 -> .49), 1516 1 (145 -> .69).
  We 4.87, W 6.5, W-We 1.63, x20 = 32.60 -> +33 (list 1694). Ra 10560/7 = 1508.57 -> 1509;
  p 6.5/7 = .93 -> +422; Rp 1931.
- #17 Iriarte Gomez 1638: 1377 0 (261 -> .82), 1277 1 (361 -> .90), 1396 0 (242 -> .80),
  R4 '+' forfeit, 1347 1 (291 -> .85), 1505 1 (133 -> .68), 1530 ½ (108 -> .65).
  We 4.70, W 3.5, -1.20 x 20 = -24.00 -> -24 (list 1614). Ra 8432/6 = 1405.33 -> 1405;
  p .58 -> +57; Rp 1462.
- #3 Llanas Del Hoyo, unrated: 6 games vs rated 1447, 1350, 1414, 1379, 1426, 1476, W 3.5.
  Ra 8492/6 = 1415.33; old rule W > N/2: Ru = Ra + 40 x (3.5 - 3) = 1435.33 -> 1435, 6 games
  >= 5 and >= 1000: published 1435, flag 'new'.

Working, Open de Gros 2010 (4 rounds played; rated on the 2010-11-01 list; V2009 rules: K 15
below 2400, 10 from 2400; no initial rating computed):
- #1 Mirzoev 2527 (K 10, >= 2400): vs 1743 (D 784 capped 400 -> .92), 1973 (554 -> 400,
  .92), 2087 (440 -> 400, .92), 2222 (305 -> .86), all won: We 3.62, +0.38 x 10 = 3.80 -> +4.
  Ra 8025/4 = 2006.25 -> 2006; p 1.00 -> +800; Rp 2806.
- #8 Ladron De Guevara 2087: 1619 1 (468 -> 400, .92), 1790 1 (297 -> .85), 2527 0
  (-440 -> -400, .08), R4 '-' forfeit loss. We 1.85, W 2, +0.15 x 15 = 2.25 -> +2.
  Ra 5936/3 = 1978.67 -> 1979; p .67 -> +125; Rp 2104.
- #13 Rodriguez Cabrera 1973: R1 '+' forfeit; 2527 0 (-554 -> -400, .08), 1747 1 (226 ->
  .79), 2010 1 (-37 -> .45). We 1.32, W 2, +0.68 x 15 = 10.20 -> +10. Ra 6284/3 = 2094.67
  -> 2095; p .67 -> +125; Rp 2220.
- #14 Riesco Lecuona 1931: R1 vs #40 unrated (not rated); 2282 0 (-351 -> .11); R3 'H';
  1743 ½ (188 -> .74). We 0.85, W 0.5, -0.35 x 15 = -5.25 -> -5. Ra 4025/2 = 2012.5 -> 2013;
  p .25 -> -193; Rp 1820.
- #6 Gorrochategui, unrated: 1638 1, 1807 1, 1990 1, 2282 ½: Ra 7717/4 = 1929.25 -> 1929;
  no provisional Ru: the 2009-2014 initial-rating rule (9 games; 12.5 a half point above 50 %
  in 2009) cannot be confirmed, so none is computed; not published.

Working, Sharly's TRF-2026 sample (13-14 Sep 2025: V2024 before the 2650 amendment of
1 Oct 2025, so the 400-point rule applies to the 2840 player too; list 2025-10-01):
- #1 Carlsen 2840 (K 10): 1800 1, 1600 ½, 2150 ½, 1500 1, 2050 ½; every D > 400 -> 400 ->
  .92. We 4.60, W 3.5, -1.10 x 10 = -11.00 -> -11 (list 2829). Ra 9100/5 = 1820;
  p .70 -> +149; Rp 1969.
- #9 JESSICA 1800: vs 2840 0 (-1040 -> -400, .08), vs 1750 0 (50 -> .57); R3 'H',
  R4 '-' forfeit, R5 'U' (PAB). We .65, -0.65 x 20 = -13.00 -> -13. Ra 2295, Rp 1495.
- #12 NICK 1650: vs 2050 0 (-400, exactly 400 so nothing to cap -> .08); R2 'U', R3 '+',
  R4/R5 'Z'. -0.08 x 20 = -1.60 -> -2. Ra 2050, Rp 1250.
"""

from __future__ import annotations

import csv
from decimal import Decimal, InvalidOperation
from pathlib import Path

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.publish.lists import rating_list
from elopipe.publish.reports import write_report
from tests.helpers.paths import GOLDEN, REPO
from tests.helpers.trf_build import GROS, gros_played_rounds

ROOT = REPO
TRF = ROOT.parent / "shared" / "data" / "trf"
GOLDEN = GOLDEN

CASES = [
    ("fide_san_viator_2018", "esp_torneo_san_viator_2018_vega_137players.trf", "San Viator"),
    ("fide_gros_2010", GROS, "Gros"),
    # a constructed TRF-2026 sample (not a real event): V2024 rules, U/H/Z byes, forfeits
    ("fide_sharly_trf26_2025", "fra_sharly_trf26_individual_nrs_240_byes.trf", "Sharly"),
]


def _rate_available() -> bool:
    import typer.main

    names = {c.name for c in typer.main.get_command(app).commands.values()}  # type: ignore[attr-defined]
    return "rate" in names


@pytest.fixture(scope="module")
def rated_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not TRF.exists():
        pytest.skip(f"shared TRF corpus not found at {TRF}")
    if not _rate_available():
        pytest.skip("FIDE engine not available yet (no `elopipe rate` command registered)")
    from elopipe.ingest.driver import ingest_paths

    folder = tmp_path_factory.mktemp("golden")
    db = folder / "golden.duckdb"
    # Gros 2010 is in progress as the file stands (round-5 byes entered ahead): its 4 rounds as a
    # complete event
    ingest_paths([gros_played_rounds(folder) if f == GROS else TRF / f for _, f, _ in CASES], db)
    res = CliRunner().invoke(app, ["rate", "--system", "fide", "--db", str(db)])
    assert res.exit_code == 0, res.output
    return db


def _norm(value: str) -> str:
    """Compare numbers by value ('2.0' == '2', '-0.70' == '-0.7'), words as lower-case."""
    v = value.strip()
    try:
        return str(Decimal(v).normalize()) if v else ""
    except InvalidOperation:
        return v.lower()


def _reason(value: str) -> str:
    """Engines name reasons in their own words; map them onto the golden vocabulary."""
    v = value.strip().lower()
    if "forfeit" in v:
        return "forfeit"
    if "unrated" in v:
        return "unrated_opponent"
    if "bye" in v:
        return "bye"
    return v


def _check(expected: list[dict[str, str]], actual: dict[tuple, dict[str, str]], key: tuple) -> None:
    problems = []
    for exp in expected:
        k = tuple(_norm(exp[c]) for c in key)
        got = actual.get(k)
        if got is None:
            problems.append(f"{k}: no such row in the output")
            continue
        for col, want in exp.items():
            if want == "*" or col in key:
                continue
            have = got.get(col, "")
            if col == "reason":
                ok = _reason(have) == _reason(want)
            else:
                ok = _norm(have) == _norm(want)
            if not ok:
                problems.append(f"{k} {col}: expected {want!r}, got {have!r}")
    assert not problems, "\n".join(problems)


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.parametrize(("stem", "trf", "name"), CASES)
def test_report_csv_matches_hand_worked_values(
    rated_store: Path, tmp_path: Path, stem: str, trf: str, name: str
) -> None:
    con = duckdb.connect(str(rated_store), read_only=True)
    try:
        tid = con.execute(
            "SELECT tournament_id FROM tournaments t JOIN source_files f USING (file_id) WHERE f.path LIKE ?",
            [f"%{trf}"],
        ).fetchall()[0][0]
        paths = write_report(con, tid, "fide", tmp_path)
    finally:
        con.close()
    players = {(_norm(r["start_rank"]),): r for r in _read(paths[0])}
    _check(_read(GOLDEN / f"{stem}.players.csv"), players, ("start_rank",))
    games = {(_norm(r["start_rank"]), _norm(r["round"])): r for r in _read(paths[1])}
    _check(_read(GOLDEN / f"{stem}.games.csv"), games, ("start_rank", "round"))


@pytest.mark.parametrize(("stem", "trf", "name"), CASES)
def test_list_rows_match_hand_worked_values(rated_store: Path, stem: str, trf: str, name: str) -> None:
    expected = _read(GOLDEN / f"{stem}.list.csv")
    con = duckdb.connect(str(rated_store), read_only=True)
    try:
        import datetime as dt

        df = rating_list(con, "fide", dt.date.fromisoformat(expected[0]["list_date"]))
    finally:
        con.close()
    rows = {
        (r["name"].lower(),): {k: "" if v is None else str(v) for k, v in r.items()} for r in df.iter_rows(named=True)
    }
    for exp in expected:
        exp["name"] = exp["name"].lower()
    _check([{k: v for k, v in e.items() if k != "list_date"} for e in expected], rows, ("name",))
    assert isinstance(df, pl.DataFrame)
