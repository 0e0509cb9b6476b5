"""Counts in the user's words (`elopipe.runtime.words.plural`) and the ingest summary that uses it."""

from __future__ import annotations

from elopipe.ingest.driver import IngestSummary
from elopipe.ingest.ledger import FileResult
from elopipe.runtime.words import plural


def test_plural_says_one_without_s_and_every_other_count_with() -> None:
    assert [plural(n, "list") for n in (0, 1, 2)] == ["0 lists", "1 list", "2 lists"]
    assert plural(1, "match", "matches") == "1 match" and plural(3, "match", "matches") == "3 matches"
    assert plural(1234, "row", thousands=True) == "1,234 rows" and plural(1, "row", thousands=True) == "1 row"


# the errors and warnings of every file (a FileResult without a file id: none narrows it)
PROBLEMS = "SELECT path, line, game_index, message FROM v_ingest_errors WHERE severity IN ('error', 'warning')"


def test_ingest_summary_line_counts_in_the_singular() -> None:
    one = FileResult("a.pgn", "partial", n_games=1, n_errors=1, n_warnings=1, player_ids={7})
    line = IngestSummary(files=[one]).line()
    assert line.startswith("1 file: 0 loaded, 1 partial")
    # the view's name alone said nothing to an officer: the command that lists them
    query = f'elopipe sql "{PROBLEMS}"'
    assert f"1 game, 1 player, 1 error, 1 warning (`{query}` lists them)" in line
    assert "(v_ingest_errors)" not in line
    two = FileResult("b.pgn", "loaded", n_games=2, n_errors=1, n_warnings=2, player_ids={8})
    both = IngestSummary(files=[one, two])
    assert f"3 games, 2 players, 2 errors, 3 warnings (`{query}` lists them)" in both.line()
    # on a store that is not the default one, the command names it; once printed, not repeated
    assert f"3 warnings (`{query} --db o.duckdb` lists them)" in both.line("o.duckdb")
    assert "3 warnings" in both.line(hint=False) and "elopipe sql" not in both.line(hint=False)


def test_ingest_summary_line_names_the_query_only_when_a_file_had_problems() -> None:
    clean = IngestSummary(files=[FileResult("a.pgn", "loaded", n_games=1, player_ids={7})])
    assert clean.line().endswith("1 game, 1 player, 0 errors") and "elopipe sql" not in clean.line()
    errors = IngestSummary(files=[FileResult("a.pgn", "partial", n_games=1, n_errors=2, player_ids={7})])
    query = f'elopipe sql "{PROBLEMS}"'
    assert errors.line().endswith(f"2 errors (`{query}` lists them)")
