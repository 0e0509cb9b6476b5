"""The loader's ledger: idempotence, corrections, rejections, one transaction per file."""

import datetime as dt
from decimal import Decimal

import pytest

from elopipe.ingest.loader import load_parsed_source
from elopipe.read.parse import ParsedSource
from elopipe.read.records import GameRec, IngestIssue, ParsedFile, PlayerRec, TournamentRec, UnplayedRec
from elopipe.read.sources import Source
from elopipe.store.connect import open_writer


def _parsed(result: str = "1-0") -> ParsedFile:
    ws, bs = {"1-0": (1, 0), "0-1": (0, 1)}[result]
    return ParsedFile(
        "trf",
        tournaments=[TournamentRec(1, name="Open", start_date=dt.date(2024, 1, 5), end_date=dt.date(2024, 1, 7))],
        players=[
            PlayerRec(1, 1, "Carlsen, Magnus", fide_id=1503014, rating=2830, start_rank=1),
            PlayerRec(2, 1, "Duda, Jan-Krzysztof", fide_id=1170546, rating=2750, start_rank=2),
            PlayerRec(3, 1, "Bye, Taker", start_rank=3),
        ],
        games=[GameRec(1, 1, 2, result, white_score=Decimal(ws), black_score=Decimal(bs), round=1)],
        unplayed=[UnplayedRec(1, 3, 1, "H", Decimal("0.5"))],
    )


def _src(tmp_path, sha: str, parsed=None, reason=None, name: str = "t.trf") -> ParsedSource:
    return ParsedSource(Source(str(tmp_path / name)), sha, 100, "trf", "utf-8", "LF", parsed, reason)


@pytest.fixture
def con(tmp_path):
    with open_writer(tmp_path / "s.duckdb") as c:
        yield c


def test_same_bytes_load_once(con, tmp_path):
    first = load_parsed_source(con, _src(tmp_path, "aa", _parsed()))
    again = load_parsed_source(con, _src(tmp_path, "aa", _parsed()))
    assert (first.status, again.status) == ("loaded", "skipped")
    assert con.execute("SELECT count(*) FROM games").fetchone()[0] == 1
    assert con.execute("SELECT count(*) FROM unplayed_rounds").fetchone()[0] == 1
    assert con.execute("SELECT count(*) FROM players").fetchone()[0] == 3


def test_changed_file_at_same_path_replaces_old_rows(con, tmp_path):
    load_parsed_source(con, _src(tmp_path, "aa", _parsed("1-0")))
    res = load_parsed_source(con, _src(tmp_path, "bb", _parsed("0-1")))
    assert res.replaced_file_ids == [1]
    assert con.execute("SELECT result FROM games").fetchall() == [("0-1",)]
    statuses = con.execute("SELECT status, replaced_by FROM source_files ORDER BY file_id").fetchall()
    assert statuses == [("replaced", res.file_id), ("loaded", None)]
    assert con.execute("SELECT count(*) FROM players").fetchone()[0] == 3  # same people, not new ones


def test_rejected_file_is_recorded_with_its_reason_and_none_of_its_bytes(con, tmp_path):
    # issue 12: ingest_errors.raw is readable through `elopipe sql`; a rejected file's bytes
    # (whatever its name) never enter the store
    (tmp_path / "t.trf").write_text("<html><body>not chess</body></html>")
    res = load_parsed_source(con, _src(tmp_path, "cc", None, "neither PGN nor TRF content"))
    assert res.status == "rejected"
    row = con.execute("SELECT status, reason FROM source_files").fetchone()
    assert row == ("rejected", "neither PGN nor TRF content")
    err = con.execute("SELECT code, raw FROM ingest_errors").fetchone()
    assert err == ("rejected", None)


def test_partial_file_keeps_readable_rows_and_errors(con, tmp_path):
    p = _parsed()
    p.issues.append(IngestIssue("bad_line", "cannot read round block", line=7, raw="001 garbage"))
    res = load_parsed_source(con, _src(tmp_path, "dd", p))
    assert res.status == "partial" and res.n_games == 1
    assert con.execute("SELECT line, code, raw FROM ingest_errors").fetchone() == (7, "bad_line", "001 garbage")


def test_failure_while_writing_rolls_back_and_records_the_file(con, tmp_path):
    p = _parsed()
    p.games[0].white_ref = 99  # unknown player ref: loads with NULL id, still fine
    p.tournaments[0].extra = {"x": object()}  # serialisable via default=str
    res = load_parsed_source(con, _src(tmp_path, "ee", p))
    assert res.status == "loaded"
    bad = _parsed()
    bad.players[0].rating = "not a number"  # a reader bug: wrong type reaches the loader
    res2 = load_parsed_source(con, _src(tmp_path, "ff", bad, name="other.trf"))
    assert res2.status == "rejected" and "could not be stored" in res2.reason
    # the failed attempt left no partial rows: still only the first file's game
    assert con.execute("SELECT count(*) FROM games").fetchone()[0] == 1
