"""Publishing: rating lists, performance reports, crosstables, player histories, SQL, export.

Library entry point for flows (issue 5)::

    publish_outputs(con, system, out_dir, list_dates=None, on_list=None) -> list[Path]

- `con`: a DuckDB connection to the store (read-only is enough);
- `system`: a rating system id as in `rating_lists.system` ('fide', 'ffe', ...);
- `out_dir`: folder to write into (created);
- `list_dates`: list dates (datetime.date) to publish; None = the latest list of `system`;
- `on_list`: called with each list date once its files are written (see `outputs`).

It writes each list as CSV, Parquet, FIDE-style fixed-width TXT and standalone HTML, a
report (players CSV, games CSV, crosstable CSV, HTML) for every tournament rated on those
lists, and a history page with a PNG chart for the top players; returns every path written.
Raises LookupError when the system has no list. Every number is read from the store (views
`v_rating_lists`, `v_tournament_performance`, `v_change_explained`, `v_player_history`).
Every file is written atomically (`atomic`): a kill or a full disk never leaves a half-written
file under its final name. `elopipe.publish.plan.publish_recorded` adds the output folder's
ledger, so that an interrupted publish is finished by the next one.

Modules: `lists` (list frames), `list_html` (the list page), `index` (the index page), `fidetxt`
(TXT layout), `html` (templates), `reports`,
`crosstable`, `history` + `charts`, `diff`, `export` (Parquet), `sqlcli`, `outputs`, `atomic`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from elopipe.publish.outputs import LIST_FORMATS, publish_outputs, write_list

__all__ = ["LIST_FORMATS", "publish_outputs", "write_list"]


def __getattr__(name: str) -> Any:
    # the writers (templates, charts) load on first use: `plan`'s constants, which every rate and
    # ingest request reads (`elopipe.jobs.requests`), must not cost their import
    if name in __all__:
        from elopipe.publish import outputs

        return getattr(outputs, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
