"""Many small files whose players recur (issue 26, item 5): a live-board export of one game a
file, made from a real tournament file. One batch gives the store the same files give one by
one (every table, ids included) and runs the identity steps once, not once a file; the store
does not depend on the order of the files."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import elopipe.identity.consolidate as consolidate
import elopipe.ingest.parse_pool as pp
from elopipe.ingest.driver import ingest_paths
from elopipe.read.textio import decode_bytes
from tests.helpers.paths import SHARED_DATA
from tests.helpers.store_rows import db_rows, store_tables

TATA = SHARED_DATA / "pgn" / "tata2018.pgn"  # Tata Steel A of several years, players by name only
N_GAMES = 40


def split_games(src: Path, out: Path, n: int, rename: dict[int, tuple[str, str]] | None = None) -> list[Path]:
    """The first `n` games of `src`, one file each (`g0001.pgn`, ...), as a live board writes
    them; `rename` {game number: (written name, replacement)} spells a player otherwise in a game."""
    text = decode_bytes(src.read_bytes()).text.lstrip("\ufeff")
    games = [g.strip("\n") + "\n" for g in re.split(r"\n(?=\[Event )", text) if g.strip()][:n]
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for k, game in enumerate(games, 1):
        if rename and k in rename:
            old, new = rename[k]
            assert f'"{old}"' in game
            game = game.replace(f'"{old}"', f'"{new}"')
        path = out / f"g{k:04d}.pgn"
        path.write_text(game, encoding="utf-8")
        paths.append(path)
    return paths


def _count_consolidations(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = consolidate.consolidate

    def counted(con, file_ids, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(len(file_ids))
        return real(con, file_ids, *args, **kwargs)

    monkeypatch.setattr(consolidate, "consolidate", counted)
    return calls


def _batch_and_one_by_one(tmp_path: Path, paths: list[Path], monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Ingest `paths` as one batch and one by one; assert the stores are equal; the files of each
    consolidation of the batch."""
    calls = _count_consolidations(monkeypatch)
    batch = ingest_paths([p.parent for p in paths[:1]], tmp_path / "batch.duckdb")
    assert batch.count("loaded") == len(paths)
    in_batch = list(calls)
    monkeypatch.setattr(pp, "BATCH_FILES", 1)
    single = ingest_paths([p.parent for p in paths[:1]], tmp_path / "single.duckdb")
    assert [(f.name, f.status, f.n_games, f.n_players) for f in single.files] == [
        (f.name, f.status, f.n_games, f.n_players) for f in batch.files
    ]
    a, b = store_tables(tmp_path / "batch.duckdb"), store_tables(tmp_path / "single.duckdb")
    assert a.keys() == b.keys()
    for table in a:
        assert a[table] == b[table], table
    return in_batch


@pytest.mark.slow
def test_one_game_files_of_recurring_players_are_consolidated_once_and_equal_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = split_games(TATA, tmp_path / "live", N_GAMES)
    calls = _batch_and_one_by_one(tmp_path, paths, monkeypatch)
    # one segment: the identity steps ran once for the 40 files (once a file before)
    assert calls == [N_GAMES]
    players = db_rows(tmp_path / "batch.duckdb", "SELECT count(*) FROM players WHERE merged_into IS NULL")[0][0]
    written = {n for p in paths for n in re.findall(r'\[(?:White|Black) "([^"]+)"\]', p.read_text())}
    assert players == len(written)


@pytest.mark.slow
def test_an_abbreviated_name_among_them_is_merged_as_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # game 29 writes 'Carlsen, M': consolidation links it to 'Carlsen, Magnus' within the event,
    # so the files after it are resolved once that is done, as one by one
    paths = split_games(TATA, tmp_path / "live", N_GAMES, rename={29: ("Carlsen, Magnus", "Carlsen, M")})
    calls = _batch_and_one_by_one(tmp_path, paths, monkeypatch)
    assert sum(calls) == N_GAMES and 1 < len(calls) < N_GAMES
    carlsen = db_rows(
        tmp_path / "batch.duckdb",
        "SELECT count(DISTINCT coalesce(p.merged_into, p.player_id)) FROM player_aliases a JOIN players p"
        " USING (player_id) WHERE a.name_key IN ('carlsen m', 'carlsen magnus')",
    )[0][0]
    assert carlsen == 1


# what a store says, without its ids: who played whom, in which event and round, and the players
_CONTENT = {
    "players": "SELECT name, name_key, fide_id, federation, birth_year, title, sex FROM players"
    " WHERE merged_into IS NULL",
    "games": "SELECT t.name, g.round, w.name, b.name, g.result FROM games g JOIN tournaments t USING (tournament_id)"
    " JOIN players w ON w.player_id = g.white_id JOIN players b ON b.player_id = g.black_id",
    "canonical": "SELECT count(*) FROM canonical_games",
    "merges": "SELECT count(*) FROM player_merges",
}


@pytest.mark.parametrize("rename", [None, {29: ("Carlsen, Magnus", "Carlsen, M")}], ids=["as-written", "abbreviated"])
def test_the_store_does_not_depend_on_the_order_of_the_small_files(
    tmp_path: Path, rename: dict[int, tuple[str, str]] | None
) -> None:
    paths = split_games(TATA, tmp_path / "live", N_GAMES, rename=rename)
    backwards = tmp_path / "backwards"
    backwards.mkdir()
    for k, p in enumerate(reversed(paths), 1):  # the last game first
        (backwards / f"g{k:04d}.pgn").write_bytes(p.read_bytes())
    ingest_paths([tmp_path / "live"], tmp_path / "forward.duckdb")
    ingest_paths([backwards], tmp_path / "backward.duckdb")
    for name, sql in _CONTENT.items():
        forward = sorted(db_rows(tmp_path / "forward.duckdb", sql), key=repr)
        assert forward == sorted(db_rows(tmp_path / "backward.duckdb", sql), key=repr), name
