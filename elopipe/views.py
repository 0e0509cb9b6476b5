"""SQL views over the store (documented in docs/schema.md).

Each view is a name and a SELECT; `ensure_views` (re)creates them all.
"""

from __future__ import annotations

import duckdb

VIEWS: dict[str, str] = {
    # The games the rating engines read: every game that game_sources does not mark as
    # another source row of a canonical game (cross-source deduplication, issue 7).
    "canonical_games": """
        SELECT g.* FROM games g
        WHERE NOT EXISTS (
            SELECT 1 FROM game_sources s
            WHERE s.source_game_id = g.game_id AND s.game_id <> g.game_id
        )
    """,
}


def ensure_views(con: duckdb.DuckDBPyConnection) -> None:
    """Create or replace every view in `VIEWS`."""
    for name, sql in VIEWS.items():
        con.execute(f"CREATE OR REPLACE VIEW {name} AS {sql}")
