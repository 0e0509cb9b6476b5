"""flows.prefect_migrations: a temporary server skips the migrations only on the database a
migrated start of the same Prefect left, unchanged since."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from flows import prefect_migrations


def _database(path: Path, *revisions: str) -> Path:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE IF NOT EXISTS alembic_version (version_num TEXT)")
    con.execute("DELETE FROM alembic_version")
    con.executemany("INSERT INTO alembic_version VALUES (?)", [(r,) for r in revisions])
    con.commit()
    con.close()
    return path


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    """A Prefect home whose server database is `prefect.db` in it (not created)."""
    from prefect.settings import PREFECT_API_DATABASE_CONNECTION_URL, PREFECT_HOME, temporary_settings

    url = f"sqlite+aiosqlite:///{tmp_path / 'prefect.db'}"
    with temporary_settings(updates={PREFECT_HOME: str(tmp_path), PREFECT_API_DATABASE_CONNECTION_URL: url}):
        yield tmp_path


def test_a_database_is_at_head_once_a_migrated_start_recorded_it_and_until_it_changes(home: Path) -> None:
    assert not prefect_migrations.at_head()  # a fresh home: no database yet
    prefect_migrations.record_at_head()
    assert not (home / prefect_migrations.MARKER).exists()

    db = _database(home / "prefect.db", "27d8f4e1a6c9")
    assert not prefect_migrations.at_head(), "never migrated by elopipe: migrate"
    prefect_migrations.record_at_head()
    assert prefect_migrations.at_head()
    assert sorted(p.name for p in home.iterdir()) == sorted(["prefect.db", prefect_migrations.MARKER])

    _database(db, "8f5eda7c1dd7")  # downgraded (or upgraded) by something else
    assert not prefect_migrations.at_head()
    _database(db)  # no revision at all
    assert not prefect_migrations.at_head()
    _database(db, "27d8f4e1a6c9")
    assert prefect_migrations.at_head()


def test_another_prefect_version_migrates(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import prefect

    _database(home / "prefect.db", "27d8f4e1a6c9")
    prefect_migrations.record_at_head()
    monkeypatch.setattr(prefect, "__version__", prefect.__version__ + ".post1")
    assert not prefect_migrations.at_head()


def test_a_database_that_is_not_a_sqlite_file_is_always_migrated(home: Path) -> None:
    from prefect.settings import PREFECT_API_DATABASE_CONNECTION_URL, temporary_settings

    _database(home / "prefect.db", "27d8f4e1a6c9")
    prefect_migrations.record_at_head()
    with temporary_settings(updates={PREFECT_API_DATABASE_CONNECTION_URL: "postgresql+asyncpg://u:p@db/prefect"}):
        assert not prefect_migrations.at_head()
        (home / prefect_migrations.MARKER).unlink()
        prefect_migrations.record_at_head()
    assert not (home / prefect_migrations.MARKER).exists()
