"""`rate` says how a FIDE run computed its lists (issue 27): from the first period and why, or
resumed from the state kept before the first period new data touched."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.ingest.driver import ingest_paths
from tests.helpers.paths import SHARED_DATA

TRF = SHARED_DATA / "trf"

pytestmark = pytest.mark.skipif(not TRF.exists(), reason="../shared/data is not available")


def _rate(db: Path) -> str:
    res = CliRunner().invoke(app, ["rate", "--system", "fide", "--db", str(db)])
    assert res.exit_code == 0, res.output
    return res.output


def test_rate_says_whether_it_resumed(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    ingest_paths([TRF / "irl_bunratty_masters_2011_crlf.trf", TRF / "irl_galway_major_2011_partial_birthdates.trf"], db)
    assert "computed from the first period: no checkpoint" in _rate(db)
    ingest_paths([TRF / "irl_kilkenny_masters_2011_gms_national_ids.trf"], db)
    out = _rate(db)
    assert "computed from 2012-01 on, from the state kept after the list before it" in out
    assert "computed from the first period" not in out
    # nothing new: the engine does not run, and says neither
    again = _rate(db)
    assert "nothing changed since the last run" in again and "computed from" not in again


def test_a_first_rate_with_no_list_does_not_speak_of_a_last_run(tmp_path: Path) -> None:
    """A store with no rapid game: `rate --system fide-rapid` said "nothing changed since the
    last run" on its first run (a fresh user)."""
    db = tmp_path / "s.duckdb"
    ingest_paths([TRF / "irl_bunratty_masters_2011_crlf.trf"], db)
    res = CliRunner().invoke(app, ["rate", "--system", "fide-rapid", "--db", str(db)])
    assert res.exit_code == 0, res.output
    assert "no list" in res.output and "nothing written" in res.output
    assert "since the last run" not in res.output


PGN = SHARED_DATA / "pgn"


def test_a_run_that_computed_and_changed_nothing_says_so_in_one_voice(tmp_path: Path) -> None:
    """A file whose only event is skipped (Kasparov - Deep Blue 1997: before FIDE's rating from
    2009) makes the engine run from the first period, and no list changes: `rate` said "nothing
    changed since the last run; nothing written", then "computed from the first period: the inputs
    of a period before the first list ...". It says that no list changed, beside how it computed."""
    db = tmp_path / "s.duckdb"
    ingest_paths([PGN / "wchcand22.pgn"], db)
    _rate(db)
    ingest_paths([PGN / "kasparov-deep-blue-1997.pgn"], db)
    out = _rate(db)
    assert "computed from the first period: the inputs of a period before the first list" in out
    assert "since the last run" not in out
    assert "no list changed: every list computed is the one stored; nothing written" in out
    query = (
        "SELECT reason, count(DISTINCT tournament_id) AS events FROM rating_skips WHERE system = 'fide'"
        " GROUP BY 1 ORDER BY 2 DESC"
    )
    skipped = (
        f'events skipped: 1 before the system\'s first list (`elopipe sql "{query}" --db {db}` counts them by code)'
    )
    assert skipped in out.splitlines(), out


def test_a_file_that_adds_no_event_does_not_run_the_engine(tmp_path: Path) -> None:
    """The same bytes under another name (a 'duplicate' ledger row) and a rejected file add no
    game: the next `rate` computed every period again ('no period's inputs changed, but the stored
    results did') and wrote nothing; the ledger rows a rating never reads are no input now."""
    db = tmp_path / "s.duckdb"
    ingest_paths([PGN / "wchcand22.pgn"], db)
    _rate(db)
    copy = tmp_path / "copy.pgn"
    copy.write_bytes((PGN / "wchcand22.pgn").read_bytes())
    junk = tmp_path / "junk.pgn"
    junk.write_text("not a game\n")
    for path, status in ((copy, "skipped"), (junk, "rejected")):
        assert [r.status for r in ingest_paths([path], db).files] == [status]
        out = _rate(db)
        assert "nothing changed since the last run; nothing written" in out and "computed from" not in out


def test_a_corrected_file_of_the_only_list_names_its_period(tmp_path: Path) -> None:
    """README worked question 3: San Viator 2018 rated (one list, 2018-07-01), then a corrected
    copy of the file re-ingested at the same path (one round-1 result turned around). `rate` said
    "every period's inputs changed (the options, an imported official list, the players' facts or
    elopipe's rating code)": none of them had, the correction touched the first (and only) period."""
    from tests.helpers.paths import SAMPLE_PGN

    db = tmp_path / "q3.duckdb"
    trf = tmp_path / "viator.trf"
    text = (SAMPLE_PGN / "esp_torneo_san_viator_2018_vega_137players.trf").read_text(encoding="utf-8")
    trf.write_text(text, encoding="utf-8")
    ingest_paths([trf], db)
    _rate(db)
    lines = text.split("\n")
    # start ranks 2 (San Felipe Gonzalez) and 65 (Martinez Munoz) met in round 1: 1-0 -> 0-1
    for i, line in enumerate(lines):
        if line.startswith("001    2 "):
            lines[i] = line.replace("    65 w 1  ", "    65 w 0  ", 1)
        elif line.startswith("001   65 "):
            lines[i] = line.replace("     2 b 0  ", "     2 b 1  ", 1)
    assert lines != text.split("\n")
    trf.write_text("\n".join(lines), encoding="utf-8")
    assert [r.status for r in ingest_paths([trf], db).files] == ["loaded"]
    out = _rate(db)
    assert "every period" not in out
    assert (
        "computed from the first period: the inputs of the first period (2018-07) changed: its games, events,"
        " players or identity decisions"
    ) in " ".join(out.split())


def test_another_code_version_is_named_as_the_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same store rated again by another version of elopipe's rating code (its digest stands
    for it): every period is computed again, and `rate` names the code, not a list of guesses."""
    from elopipe.rating import inputs
    from tests.helpers.paths import SAMPLE_PGN

    db = tmp_path / "s.duckdb"
    ingest_paths([SAMPLE_PGN / "esp_torneo_san_viator_2018_vega_137players.trf"], db)
    _rate(db)
    monkeypatch.setattr(inputs, "code_digest", lambda: "another version")
    out = " ".join(_rate(db).split())
    assert "computed from the first period: every period's inputs changed: elopipe's rating code (another version)" in (
        out
    )
