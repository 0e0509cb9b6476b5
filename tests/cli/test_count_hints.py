"""`ingest` and `rate` count in words and name the `elopipe sql` command that lists the rows behind
each count: '47 warnings (v_ingest_errors)', 'not counted: both_unrated 332' and 'events skipped:
before_rating_from 1' showed a view's name and raw codes. Each printed command is run here as
printed (copied and pasted) on a real store, and what it gives is what the line said."""

from __future__ import annotations

import csv
import io
import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.publish.reason_words import SHORT_WORDS, short_words
from elopipe.rating.faults import REASON_PREFIX
from tests.helpers.paths import SHARED_DATA

FILES = [
    SHARED_DATA / "trf" / "fra_sharly_trf26_team_310_in_progress.trf",  # in progress
    SHARED_DATA / "trf" / "lichess_swiss_2020_05_mai_5plus0_13players.trf",  # online
    SHARED_DATA / "trf" / "irl_bunratty_major_2011_crlf.trf",  # warnings; unrated players
    SHARED_DATA / "trf" / "irl_bunratty_masters_2011_crlf.trf",  # FIDE-rated: under the minimum time
    SHARED_DATA / "pgn" / "chess960rwch.pgn",  # never rated: Chess960
    SHARED_DATA / "pgn" / "candidates_zurich_1953.PGN",  # before FIDE's rating from 2009
]
pytestmark = pytest.mark.skipif(not all(f.is_file() for f in FILES), reason="../shared/data is not available")
runner = CliRunner()


def _invoke(*args: str) -> str:
    res = runner.invoke(app, list(args))
    assert res.exit_code == 0, res.output
    return res.output


def _run_printed(command: str) -> list[dict[str, str]]:
    """The rows of a printed `elopipe sql ...` command, run as a shell would split it."""
    words = shlex.split(command)
    assert words[:2] == ["elopipe", "sql"], command
    return list(csv.DictReader(io.StringIO(_invoke(*words[1:], "--format", "csv"))))


def _fold(code: str) -> str:
    """As `rate` counts them: one count for the events whose rating failed and for those in progress."""
    return next((head for head in ("rating_failed", "in_progress") if code.startswith(head + ":")), code)


def test_the_printed_queries_run_and_give_the_counts_said(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    out = _invoke("ingest", *map(str, FILES), "--db", str(db))
    summary = out.splitlines()[-1]
    m = re.search(r" (\d+) errors?, (\d+) warnings \(`(elopipe sql .*)` lists them\) -> ", summary)
    assert m and "(v_ingest_errors)" not in out, out
    assert m.group(3).endswith(f" --db {db}")  # copied and pasted, it reads this store
    listed = _run_printed(m.group(3))
    # the rows said: the errors and warnings counted, not the info notes beside them
    assert len(listed) == int(m.group(1)) + int(m.group(2)) > 0, (summary, listed)
    assert set(listed[0]) == {"path", "line", "game_index", "message"}
    assert any("lichess export" in r["message"] for r in listed)
    assert _run_printed(f"elopipe sql \"SELECT * FROM v_ingest_errors WHERE severity = 'info'\" --db {db}")

    for system in ("fide", "ffe"):
        said = _invoke("rate", "--system", system, "--db", str(db)).splitlines()
        checked = 0
        for label, column in (("game sides not counted", "sides"), ("events skipped", "events")):
            (line,) = [x for x in said if x.startswith(f"{label}: ")]
            m = re.fullmatch(rf"{label}: (.*) \(`(elopipe sql .*)` counts them by code\)", line)
            assert m, line
            counts: dict[str, int] = {}
            for row in _run_printed(m.group(2)):
                assert row["reason"].split(":")[0] in SHORT_WORDS, row  # no code left without words
                counts[_fold(row["reason"])] = counts.get(_fold(row["reason"]), 0) + int(row[column])
            ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
            assert m.group(1) == ", ".join(f"{n} {short_words(code)}" for code, n in ordered), (line, counts)
            assert not any(code in m.group(1) for code in counts if "_" in code)  # words, not codes
            checked += len(counts)
        assert checked >= 3, said
    fide = _invoke("rate", "--system", "fide", "--db", str(db))  # nothing new: the last run's counts, same words
    assert "nothing changed since the last run" in fide
    # the first ratings are the lists' all told: "new ratings: 7" after "nothing written" read as a change
    assert "first ratings on all the lists: " in fide and "new ratings" not in fide
    assert "game sides not counted: 316 with both players unrated, 110 under FIDE's minimum time (`elopipe sql " in fide
    skipped = (
        "1 before the system's first list, 1 still in progress, 1 of a kind never rated (chess960), 1 played online"
    )
    assert f"events skipped: {skipped} (lichess) (`elopipe sql " in fide, fide
    # a later ingest's command lists its own problems, none of the earlier ingest's
    later = _invoke("ingest", str(SHARED_DATA / "trf" / "irl_bunratty_challengers_2011_crlf.trf"), "--db", str(db))
    m = re.search(r" (\d+) errors?, (\d+) warnings \(`(elopipe sql .*)` lists them\) -> ", later)
    assert m, later
    again = _run_printed(m.group(3))
    assert len(again) == int(m.group(1)) + int(m.group(2)) > 0, (later, again)
    assert {r["path"] for r in again} == {str(SHARED_DATA / "trf" / "irl_bunratty_challengers_2011_crlf.trf")}


def test_every_code_has_a_few_words_and_an_unknown_one_reads_as_it_is() -> None:
    from elopipe.publish.reason_words import REASON_WORDS
    from elopipe.rating.game_rows import SCOPE_REASONS

    # a game side's codes (the legend's), an event's, and the heads of those carrying a detail
    heads = {*REASON_WORDS, *SCOPE_REASONS, "online", "not_rated", "rate_class", REASON_PREFIX.split(":")[0]}
    assert heads <= set(SHORT_WORDS), heads - set(SHORT_WORDS)
    assert all(len(words) <= 50 for words in SHORT_WORDS.values())  # short: the long words are REASON_WORDS
    assert short_words("online:lichess.org") == "played online (lichess.org)"
    assert short_words("rate_class:rapid") == "of another rate of play (rapid)"
    assert short_words("both_unrated") == "with both players unrated"
    assert short_words("a_new_code") == "a new code" and short_words("new_code:x_y") == "new code:x y"
