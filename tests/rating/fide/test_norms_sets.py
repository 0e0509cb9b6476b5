"""The set-based norm rows (`elopipe.rating.fide.norms_sets`) equal the per-applicant rules' rows.

Each store is decided twice: every row per applicant (`set_based=False`, the reference) and
the mixed path as shipped; the frames must be equal, row for row and column for column. The
stores: the real files of ../shared/data that the norms tests use, the TRF events moved into the
Title Regulations' eras (their own start is before 2017), the Olympiad and the Candidates with
federations, and generated Swiss events with many weak players, titles, unrated players, byes
and forfeits.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import duckdb
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from elopipe.ingest.driver import ingest_paths
from elopipe.rating.fide import norm_inputs, norms_sets, norms_store
from elopipe.rating.run import rate
from elopipe.store.connect import open_writer
from tests.helpers.paths import SHARED_DATA
from tests.helpers.trf_build import block, row
from tests.rating.fide.test_norms_real import CANDIDATES_FEDS, NORWAY_FEDS, olympiad_with_feds, with_tags

PGN = SHARED_DATA / "pgn"
TRF = SHARED_DATA / "trf"
pytestmark = pytest.mark.skipif(not PGN.exists(), reason="../shared/data is not available")

TRF_EVENTS = [
    "irl_kilkenny_masters_2011_gms_national_ids.trf",
    "esp_torneo_san_viator_2018_vega_137players.trf",
    "ger_karl_mala_gedenkturnier_2005_fide_example1_284players.trf",
    "irl_bunratty_masters_2011_crlf.trf",
    "fra_sharly_trf26_individual_nrs_240_byes.trf",
]


def _rated(tmp_path: Path, files: list[Path]) -> duckdb.DuckDBPyConnection:
    db = tmp_path / "s.duckdb"
    ingest_paths(files, db)
    with open_writer(db) as con:
        rate(con, "fide")
    return duckdb.connect(str(db), read_only=True)


def _assert_same(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    tids = [r[0] for r in con.execute("SELECT DISTINCT tournament_id FROM tournament_ratings").fetchall()]
    mixed = norms_store.evaluate_events(con, tids)[0]
    reference = norms_store.evaluate_events(con, tids, set_based=False)[0]
    assert mixed.height > 0
    assert_frame_equal(mixed, reference)
    return mixed


def _moved(src: Path, dst: Path, year: int) -> Path:
    """`src` with its start and end dates (TRF 042/052) moved to `year`."""
    text = src.read_bytes().decode("latin-1")
    text = re.sub(r"^(0[45]2 +)\d{4}", lambda m: f"{m.group(1)}{year}", text, flags=re.M)
    dst.write_bytes(text.encode("latin-1"))
    return dst


def test_real_pgn_files(tmp_path: Path) -> None:
    files = [
        with_tags(PGN / "wchcand22.pgn", tmp_path / "cand.pgn", CANDIDATES_FEDS),
        with_tags(PGN / "norway_chess_2022_classical.pgn", tmp_path / "norway.pgn", NORWAY_FEDS, title="GM"),
        olympiad_with_feds(PGN / "olym22.pgn", tmp_path / "olym.pgn"),
        PGN / "fide_candidates_2022_madrid_spain.pgn",
        PGN / "fide_grand_swiss_2021_riga.pgn",
        PGN / "tata2018.pgn",
    ]
    _assert_same(_rated(tmp_path, [f for f in files if f.exists()]))


@pytest.mark.parametrize("year", [2011, 2019, 2024])
def test_real_trf_events_in_each_era(tmp_path: Path, year: int) -> None:
    files = [_moved(TRF / name, tmp_path / name, year) for name in TRF_EVENTS if (TRF / name).exists()]
    out = _assert_same(_rated(tmp_path, files))
    if year > 2017:
        assert out.filter(pl.col("era").is_not_null()).height > 0


def weak_swiss(seed: int, players: int = 80, rounds: int = 11, start: str = "2024/05/01") -> str:
    """A Swiss-like event: random pairings, ratings from 1100 to 2650 (a few unrated), a few
    titled players, ten federations with the host's the largest, pairing-allocated byes,
    half-point byes, forfeits, and players who withdraw (every 9th after round 6)."""
    rng = random.Random(seed)
    feds = ["FRA"] * 4 + ["GER", "ESP", "ITA", "NED", "POL", "IND", "USA", "FID"]
    titles = ["GM", "IM", "FM", "WGM", "WIM", "WFM", "CM"]
    rating = {p: rng.choice([0, *range(1100, 2650, 10)]) for p in range(1, players + 1)}
    blocks: dict[int, list[str]] = {p: [] for p in rating}
    pts = dict.fromkeys(rating, 0)
    for rnd in range(1, rounds + 1):
        order = [p for p in rating if rnd <= 6 or p % 9]
        for p in set(rating) - set(order):
            blocks[p].append(block(0, "-", "Z"))
        rng.shuffle(order)
        if rng.random() < 0.5:
            half = order.pop()
            blocks[half].append(block(0, "-", "H"))
            pts[half] += 1
        if len(order) % 2:
            bye = order.pop()
            blocks[bye].append(block(0, "-", "U"))
            pts[bye] += 2
        for w, b in zip(order[::2], order[1::2], strict=True):
            code = rng.choice("10=10=+-" if rng.random() < 0.05 else "10=")
            opposite = {"1": "0", "0": "1", "=": "=", "+": "-", "-": "+"}[code]
            blocks[w].append(block(b, "w", code))
            blocks[b].append(block(w, "b", opposite))
            pts[w] += {"1": 2, "+": 2, "=": 1}.get(code, 0)
            pts[b] += {"1": 2, "+": 2, "=": 1}.get(opposite, 0)
    lines = [f"012 Weak Open {seed}", "022 Paris", "032 FRA", f"042 {start}", f"052 {start[:8]}{11:02d}"]
    for p in rating:
        strong = rating[p] >= 2300
        lines.append(
            row(
                p,
                f"Player{p:03d}, Weak",
                blocks[p],
                sex=rng.choice("mmw"),
                title=rng.choice(titles) if strong or rng.random() < 0.1 else "",
                rating=rating[p] or "",
                fed=rng.choice(feds),
                fide_id=str(8000000 + seed * 1000 + p),
                points=f"{pts[p] // 2}.{5 if pts[p] % 2 else 0}",
            )
        )
    return "\n".join(lines) + "\n"


def test_generated_swiss_with_many_weak_players(tmp_path: Path) -> None:
    files = []
    # seed 7's 160 players give every round 20 foreign rated players, 10 of them masters (1.4.3d)
    for seed, start, players in [
        (1, "2024/05/01", 80),
        (2, "2023/05/01", 80),
        (3, "2018/05/01", 80),
        (7, "2024/05/01", 160),
    ]:
        f = tmp_path / f"weak{seed}.trf"
        f.write_text(weak_swiss(seed, players=players, start=start), encoding="utf-8")
        files.append(f)
    con = _rated(tmp_path, files)
    out = _assert_same(con)
    # the per-applicant rules are left the few who could make a norm (a tenth at most here)
    tids = out["tournament_id"].unique().to_list()
    ev, games, applicants = norm_inputs.prepare(norm_inputs.load(con, tids))
    rest = norms_sets.decide("fide", ev, games, applicants)[1]
    assert 0 < rest.height <= out.select("tournament_id", "player_id").n_unique() // 10
    assert set(out["decision"]) >= {"missed", "not_eligible", "norm"}
    assert "1.4.3d" in set(out["exemption"])
    assert {"1.4.1", "1.4.5a", "1.4.8a"} <= set(out["clause"])
