"""`result_rows.replace_changed` leaves exactly the rows a delete of the lists and an insert of the
new rows leave, and rewrites only the groups that differ; on the results of a real Irish TRF
(Bunratty Masters 2011) rated, then variants of its stored rows."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from elopipe.rating import result_rows
from elopipe.store import write
from elopipe.store.connect import open_writer
from tests.helpers.ingested import rated as rated_store
from tests.helpers.paths import SHARED_DATA

BUNRATTY = SHARED_DATA / "trf" / "irl_bunratty_masters_2011_crlf.trf"

pytestmark = pytest.mark.skipif(not BUNRATTY.exists(), reason="../shared/data is not available")


def _rows(con, table: str) -> list[tuple]:
    return con.execute(f"SELECT * FROM {table} WHERE system = 'fide' ORDER BY ALL").fetchall()


@pytest.fixture(scope="module")
def rated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("rows") / "s.duckdb"
    rated_store(db, [[BUNRATTY]], "fide")
    return db


@pytest.mark.parametrize("table", sorted(result_rows.KEYS))
def test_only_differing_groups_are_rewritten_and_the_rows_are_those_of_a_full_rewrite(
    rated: Path, tmp_path: Path, table: str
) -> None:
    db = tmp_path / "s.duckdb"
    db.write_bytes(rated.read_bytes())
    with open_writer(db) as con:
        stored = con.sql(f"SELECT * EXCLUDE (system) FROM {table} WHERE system = 'fide'").pl()
        dates = stored.get_column("list_date").unique().to_list()
        keys = list(result_rows.KEYS[table])
        groups = stored.select(keys).unique().sort(keys)
        assert groups.height >= 4, "too few rows to vary"
        changed, dropped, doubled = groups.slice(0, 1), groups.slice(1, 1), groups.slice(2, 1)
        num = {"rating_lists": "games", "rating_changes": "game_id", "tournament_ratings": "n"}[table]  # never NULL
        new = pl.concat(
            [
                stored.join(changed, on=keys, how="semi").with_columns(pl.col(num) + 1),
                stored.join(pl.concat([changed, dropped]), on=keys, how="anti"),
                # a group that holds its rows twice differs from the stored one (multisets, not sets)
                stored.join(doubled, on=keys, how="semi"),
            ]
        )
        if table == "rating_lists":  # its primary key allows one row per player and list
            new = new.unique(keys, keep="first")
            expected_groups = 2
        else:
            expected_groups = 3
        # what a delete of the lists and an insert of `new` leave, then undone
        con.execute("BEGIN TRANSACTION")
        con.execute(f"DELETE FROM {table} WHERE system = 'fide'")
        write.insert(con, table, new, constants={"system": "fide"})
        expected = _rows(con, table)
        con.execute("ROLLBACK")
        assert _rows(con, table) != expected
        with write.transaction(con):
            rewritten = result_rows.replace_changed(con, "fide", table, new, dates)
        assert _rows(con, table) == expected
        assert rewritten == expected_groups
        with write.transaction(con):
            assert result_rows.replace_changed(con, "fide", table, new, dates) == 0
        assert _rows(con, table) == expected
        assert not con.execute("SELECT * FROM duckdb_tables() WHERE temporary").fetchall()


@pytest.mark.parametrize("table", sorted(result_rows.KEYS))
def test_lists_with_nothing_stored_get_the_rows_and_count_of_the_comparison(
    rated: Path, tmp_path: Path, table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run from scratch (no row stored on its lists) inserts the rows without the comparison's
    temporary tables: the same rows, and the same number of groups, as the comparison leaves."""
    db = tmp_path / "s.duckdb"
    db.write_bytes(rated.read_bytes())
    with open_writer(db) as con:
        stored = con.sql(f"SELECT * EXCLUDE (system) FROM {table} WHERE system = 'fide'").pl()
        dates = stored.get_column("list_date").unique().to_list()
        groups = stored.select(result_rows.KEYS[table]).n_unique()
        leave: dict[bool, tuple[list[tuple], int]] = {}
        for compared in (False, True):
            monkeypatch.setattr(result_rows, "_stored_any", lambda *_a, compared=compared: compared)
            con.execute("BEGIN TRANSACTION")
            con.execute(f"DELETE FROM {table} WHERE system = 'fide'")
            rewritten = result_rows.replace_changed(con, "fide", table, stored, dates)
            leave[compared] = (_rows(con, table), rewritten)
            assert not con.execute("SELECT * FROM duckdb_tables() WHERE temporary").fetchall()
            con.execute("ROLLBACK")
        assert leave[False] == leave[True]
        assert leave[False][1] == groups > 0
        assert len(leave[False][0]) == stored.height
        monkeypatch.undo()
        # and the probe sees the stored rows, of these lists only
        assert result_rows._stored_any(con, "fide", table, dates)
        assert not result_rows._stored_any(con, "fide", table, [min(dates).replace(year=1990)])


def test_a_staged_comparison_names_the_lists_that_differ_before_writing(rated: Path, tmp_path: Path) -> None:
    """`stage` compares without writing (a run learns which lists differ, issue 27): the lists of
    the changed groups, none when the rows are the stored ones; `apply` then leaves what
    `replace_changed` leaves, and no temporary table."""
    db = tmp_path / "s.duckdb"
    db.write_bytes(rated.read_bytes())
    table = "tournament_ratings"
    with open_writer(db) as con:
        stored = con.sql(f"SELECT * EXCLUDE (system) FROM {table} WHERE system = 'fide'").pl()
        dates = stored.get_column("list_date").unique().to_list()
        before = _rows(con, table)
        with write.transaction(con):
            same = result_rows.stage(con, "fide", table, stored, dates)
            assert (same.dates, same.groups) == (set(), 0)
            assert _rows(con, table) == before  # nothing written yet
            assert same.apply() == 0
        assert _rows(con, table) == before
        one = stored.sort("player_id").head(1).get_column("player_id")
        new = stored.with_columns(
            pl.when(pl.col("player_id").is_in(one)).then(pl.col("n") + 1).otherwise("n").alias("n")
        )
        with write.transaction(con):
            staged = result_rows.stage(con, "fide", table, new, dates)
            assert staged.dates == set(new.filter(pl.col("player_id").is_in(one)).get_column("list_date").to_list())
            assert _rows(con, table) == before
            assert staged.apply() == staged.groups > 0
        after = _rows(con, table)
        with write.transaction(con):
            assert result_rows.replace_changed(con, "fide", table, new, dates) == 0
        assert _rows(con, table) == after != before
        assert not con.execute("SELECT * FROM duckdb_tables() WHERE temporary").fetchall()
