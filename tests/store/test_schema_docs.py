"""docs/schema.md is generated from elopipe/store/schema.py and must stay current."""

import duckdb

from elopipe.store.schema import TABLES, ensure_schema
from elopipe.store.schema_docs import render_markdown
from tests.helpers.paths import REPO

DOC = REPO / "docs" / "schema.md"


def test_schema_doc_is_current():
    assert DOC.read_text(encoding="utf-8") == render_markdown(), (
        "docs/schema.md is stale: run `python -m elopipe.store.schema_docs > docs/schema.md`"
    )


def test_every_table_and_column_is_documented():
    doc = render_markdown()
    for table in TABLES:
        assert f"### `{table}`" in doc
    undocumented = [line for line in doc.splitlines() if line.startswith("| `") and line.endswith("|  |")]
    assert undocumented == []


def test_schema_is_idempotent_and_every_view_compiles():
    con = duckdb.connect()
    ensure_schema(con)
    ensure_schema(con)
    views = [r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()]
    for v in views:
        con.execute(f"SELECT * FROM {v} LIMIT 0")
    assert "canonical_games" in views


def test_a_store_made_before_a_column_existed_gets_it_null():
    """`source_files.results_only` came with issue 15: an older store gains it, NULL in its rows."""
    con = duckdb.connect()
    ensure_schema(con)
    con.execute(
        "INSERT INTO source_files (file_id, sha256, path, format, bytes, ingested_at, status)"
        " VALUES (1, 'x', 'a.pgn', 'pgn', 1, now(), 'loaded')"
    )
    con.execute("ALTER TABLE source_files DROP COLUMN results_only")
    con.execute("DROP TABLE store_schema")  # as an older store has none
    ensure_schema(con)
    assert con.execute("SELECT file_id, results_only FROM source_files").fetchall() == [(1, None)]


def test_a_store_that_records_this_schema_is_not_checked_again_and_another_is():
    """`store_schema` holds the fingerprint of the schema its last writer made sure of: the next
    open of the same code skips the checks (about 0.3 CPU-s an open); a store made by other code
    (another fingerprint, or none: an older store) gets every check and the current fingerprint."""
    from elopipe.store.schema import fingerprint

    con = duckdb.connect()
    ensure_schema(con)
    assert con.execute("SELECT fingerprint FROM store_schema").fetchall() == [(fingerprint(),)]
    con.execute("DROP VIEW canonical_games")
    ensure_schema(con)  # current: nothing checked, so the view stays dropped
    assert not con.execute("SELECT 1 FROM duckdb_views() WHERE view_name = 'canonical_games'").fetchall()
    con.execute("UPDATE store_schema SET fingerprint = 'made by another version'")
    ensure_schema(con)
    assert con.execute("SELECT 1 FROM duckdb_views() WHERE view_name = 'canonical_games'").fetchall()
    assert con.execute("SELECT fingerprint FROM store_schema").fetchall() == [(fingerprint(),)]


if __name__ == "__main__":
    print(render_markdown(), end="")
