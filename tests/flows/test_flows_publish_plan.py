"""Which changed lists the publish flow writes (elopipe.publish.plan); no Prefect needed."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from elopipe.publish.plan import has_published, published_dates, remember, select_dates


def _months(year: int, n: int) -> list[dt.date]:
    return [dt.date(year + (m // 12), m % 12 + 1, 1) for m in range(n)]


def test_recent_changed_lists_are_written_and_older_ones_only_if_already_published() -> None:
    changed = _months(2020, 30)  # Jan 2020 .. Jun 2022
    keep, left_out = select_dates(changed, set(), 12)
    assert keep == changed[-12:] and left_out == 18
    # A list published by an earlier run changed again: rewrite it, or the folder keeps a stale file.
    keep, left_out = select_dates(changed, {dt.date(2020, 3, 1), dt.date(2019, 1, 1)}, 12)
    assert keep == [dt.date(2020, 3, 1), *changed[-12:]] and left_out == 17
    assert select_dates(changed, set(), None) == (changed, 0)
    assert select_dates(changed[:5], set(), 12) == (changed[:5], 0)


def test_the_folder_ledger_belongs_to_one_store(tmp_path: Path) -> None:
    out, db_a, db_b = tmp_path / "out", tmp_path / "a.duckdb", tmp_path / "b.duckdb"
    assert not has_published(out, db_a, "fide")
    remember(out, db_a, "fide", [dt.date(2024, 1, 1)])
    remember(out, db_a, "fide", [dt.date(2024, 2, 1)])
    remember(out, db_a, "ffe", [])
    assert published_dates(out, db_a, "fide") == {dt.date(2024, 1, 1), dt.date(2024, 2, 1)}
    assert has_published(out, db_a, "ffe") and not has_published(out, db_a, "elo")
    # Another store writing into the same folder starts a new ledger.
    assert published_dates(out, db_b, "fide") == set()
    remember(out, db_b, "fide", [dt.date(2023, 5, 1)])
    assert published_dates(out, db_b, "fide") == {dt.date(2023, 5, 1)}
    assert not has_published(out, db_a, "fide")
