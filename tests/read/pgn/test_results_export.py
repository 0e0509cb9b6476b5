"""Results exports (PGN files in which no game shows a move) are played games, rated under the
`--no-moves` policy (issue 15, item 1); forfeit marks keep a moveless game unplayed.

The exports are made from real files by keeping each game's tags and result only, as event
sites publish them: wchcand22.pgn (FIDE Candidates 2022, a double round robin) and the FIDE
Grand Swiss 2021, each with the Event tag on its first game only."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import chess.pgn
import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.ingest.driver import ingest_paths
from elopipe.rating.run import rate
from elopipe.read.pgn.reader import read_pgn
from elopipe.store.connect import open_writer
from tests.helpers.paths import REPO
from tests.helpers.store_rows import db_rows

SAMPLE = REPO / "sample_pgn"
ROUND_ROBIN = SAMPLE / "wchcand22.pgn"
SWISS = SAMPLE / "fide_grand_swiss_2021_riga.pgn"


def headers_only(path: Path, out: Path) -> Path:
    """`path` as a results export: each game's tags and result, no move; Event on the first game only."""
    games = []
    with open(path, encoding="utf-8") as fh:
        while (h := chess.pgn.read_headers(fh)) is not None:
            tags = [(k, v) for k, v in h.items() if not (games and k == "Event")]
            games.append("".join(f'[{k} "{v}"]\n' for k, v in tags) + "\n" + h.get("Result", "*") + "\n\n")
    out.write_text("".join(games), encoding="utf-8")
    return out


def rated_store(db: Path, source: Path, no_moves: str = "played") -> Path:
    assert ingest_paths([source], db).exit_code == 0
    with open_writer(db) as con:
        rate(con, "fide", no_moves=no_moves)
    return db


def lists(db: Path) -> list[tuple]:
    return db_rows(
        db,
        "SELECT p.fide_id, rl.list_date, rl.rating, rl.games, rl.change FROM rating_lists rl"
        " JOIN players p USING (player_id) WHERE rl.system = 'fide' AND rl.games > 0 ORDER BY 1, 2",
    )


@pytest.mark.parametrize("real", [ROUND_ROBIN, SWISS], ids=["round_robin", "swiss"])
def test_a_results_export_rates_as_the_file_with_its_moves(tmp_path: Path, real: Path) -> None:
    export = headers_only(real, tmp_path / "export.pgn")
    full = rated_store(tmp_path / "full.duckdb", real)
    results = rated_store(tmp_path / "results.duckdb", export)
    assert db_rows(results, "SELECT results_only FROM source_files") == [(True,)]
    assert db_rows(full, "SELECT results_only FROM source_files") == [(False,)]
    # one event, though only the first game names it
    assert db_rows(results, "SELECT count(*), min(name) FROM tournaments") == db_rows(
        full, "SELECT count(*), min(name) FROM tournaments"
    )
    n = db_rows(full, "SELECT count(*) FROM games")[0][0]
    unknown = "SELECT count(*) FILTER (WHERE played), count(*) FILTER (WHERE ply_count IS NULL) FROM games"
    assert db_rows(results, unknown + " WHERE list_contains(flags, 'moves_unknown')") == [(n, n)]
    got = lists(results)
    assert got and got == lists(full)
    assert sum(r[3] for r in got) == 2 * n  # every game counted, for both players


def test_the_no_moves_policy_decides_what_an_export_counts_for(tmp_path: Path) -> None:
    export = headers_only(ROUND_ROBIN, tmp_path / "export.pgn")
    db = rated_store(tmp_path / "s.duckdb", export, no_moves="unrated")
    reasons = "SELECT reason, count(*) FROM rating_changes WHERE system = 'fide' AND NOT counted GROUP BY 1 ORDER BY 1"
    assert db_rows(db, reasons) == [("no_moves", 112)]
    assert lists(db) == []
    with open_writer(db) as con:
        rate(con, "fide", no_moves="forfeit")
    decisive = db_rows(db, "SELECT count(*) FROM games WHERE result IN ('1-0', '0-1')")[0][0]
    assert db_rows(db, reasons) == sorted([("forfeit", 2 * decisive), ("no_moves", 112 - 2 * decisive)])
    with open_writer(db) as con:  # the policy is an input of the lists: back to 'played', all count
        summary = rate(con, "fide", no_moves="played")
    assert summary.changed_lists and db_rows(db, reasons) == []
    with open_writer(db) as con, pytest.raises(ValueError, match="no_moves must be played, forfeit or unrated"):
        rate(con, "fide", no_moves="maybe")


def test_ingest_says_a_file_is_a_results_export(tmp_path: Path) -> None:
    export = headers_only(ROUND_ROBIN, tmp_path / "export.pgn")
    out = CliRunner().invoke(app, ["ingest", str(export), "--db", str(tmp_path / "s.duckdb")])
    assert out.exit_code == 0, out.output
    assert "1 results export (no game shows a move: see --no-moves)" in out.output
    again = CliRunner().invoke(app, ["rate", "--no-moves", "never", "--db", str(tmp_path / "s.duckdb")])
    assert again.exit_code == 2 and "--no-moves: must be played, forfeit or unrated, not 'never'" in again.output


def _export_game(result: str, *tags: tuple[str, str], white: str = "Alpha, A", black: str = "Beta, B") -> str:
    head = {"Event": "Results", "Site": "Paris FRA", "Date": "2023.05.06", "Round": "1", "White": white,
            "Black": black, "Result": result}  # fmt: skip
    head.update(dict(tags))
    return "".join(f'[{k} "{v}"]\n' for k, v in head.items()) + "\n" + result + "\n\n"


FORFEIT_FORMS = [
    ("termination forfeit", _export_game("1-0", ("Termination", "forfeit"))),
    ("termination unplayed", _export_game("0-1", ("Termination", "unplayed"))),
    ("termination abandoned", _export_game("1-0", ("Termination", "abandoned"))),
    ("+/-", _export_game("+/-")),
    ("-/+", _export_game("-/+")),
    ("+:-", _export_game("+:-")),
    ("1-0 (forfeit)", _export_game("1-0 (forfeit)")),
    ("0-1 forfeit", _export_game("0-1 forfeit")),
    ("0-0", _export_game("0-0")),
    ("-:-", _export_game("-:-")),
]


@pytest.mark.parametrize("form", [f[1] for f in FORFEIT_FORMS], ids=[f[0] for f in FORFEIT_FORMS])
def test_every_forfeit_form_keeps_a_moveless_game_unplayed_in_a_results_export(form: str) -> None:
    played = _export_game("1/2-1/2", white="Gamma, C", black="Delta, D")
    pf = read_pgn(played + form)
    assert pf.results_only
    kept, marked = pf.games
    assert kept.played and kept.flags == ["moves_unknown"] and kept.ply_count is None
    assert not marked.played and marked.unplayed_code == "forfeit"


def test_a_bye_and_a_time_forfeit_in_a_results_export() -> None:
    pf = read_pgn(
        _export_game("1-0", ("Termination", "bye"), black="?")
        + _export_game("1-0", ("Termination", "Time forfeit"), white="Gamma, C", black="Delta, D")
    )
    bye, on_time = pf.games
    assert bye.unplayed_code == "bye" and not bye.played
    assert on_time.played and on_time.flags == ["moves_unknown"]  # lost on time: a played game


def test_moveless_games_in_a_file_that_shows_moves() -> None:
    pf = read_pgn(
        _export_game("1-0")
        + _export_game("1/2-1/2", white="Gamma, C", black="Delta, D")
        + _export_game("0-1", white="Eta, E", black="Theta, T").replace("\n0-1\n", "\n1. e4 e5 2. Nf3 0-1\n")
    )
    assert not pf.results_only
    forfeit, short_draw, real = pf.games
    assert (forfeit.played, forfeit.unplayed_code, forfeit.flags) == (False, "forfeit", ["forfeit", "no_moves"])
    assert short_draw.played and short_draw.flags == ["fewer_than_two_plies", "no_moves"]
    assert real.played and real.ply_count == 3
    assert Counter(i.code for i in pf.issues) >= Counter({"forfeit_no_moves": 1, "fewer_than_two_plies": 1})


@pytest.mark.parametrize("cut_at", ['[WhiteElo "2', '[Result "1-0"]\n'])  # in a tag, after one
def test_a_file_cut_short_in_its_last_games_tags_makes_no_forfeit(cut_at: str) -> None:
    """A copy that stopped in the tags of its last game: the game has a result and no move, in a
    file that shows moves, so it was stored as a forfeit win. Its moves are unknown, not absent:
    played, moves unknown, with a warning that the file is cut short; the file says so too
    (`cut_short`). The games before it are as in the complete file."""
    text = ROUND_ROBIN.read_text(encoding="utf-8")
    last = text.rindex('[Result "1-0"]')  # the last decisive game's
    cut = text[: text.index(cut_at, last) + len(cut_at)]
    pf, whole = read_pgn(cut), read_pgn(text)
    assert pf.cut_short and not whole.cut_short
    *before, game = pf.games
    assert (game.played, game.unplayed_code, game.flags, game.ply_count) == (True, None, ["moves_unknown"], None)
    assert game.result == "1-0"
    assert "cut_short_game" in {i.code for i in pf.issues} and "forfeit_no_moves" not in {i.code for i in pf.issues}
    assert [(g.white_ref, g.result, g.ply_count) for g in before] == [
        (g.white_ref, g.result, g.ply_count) for g in whole.games[: len(before)]
    ]


def test_olympiad_forfeits_stay_forfeits() -> None:
    """olym22.pgn shows moves for most games; its 33 decisive games without a move are forfeits."""
    olym = REPO.parent / "shared" / "data" / "pgn" / "olym22.pgn"
    pf = read_pgn(olym.read_text(encoding="utf-8"))
    assert not pf.results_only
    assert sum(1 for g in pf.games if g.unplayed_code == "forfeit" and g.ply_count == 0) == 33


def test_elopipe_no_moves_in_the_environment_is_a_federation_s_standing_choice(tmp_path: Path) -> None:
    export = headers_only(ROUND_ROBIN, tmp_path / "export.pgn")
    db = tmp_path / "s.duckdb"
    assert ingest_paths([export], db).exit_code == 0
    out = CliRunner().invoke(app, ["rate", "--db", str(db)], env={"ELOPIPE_NO_MOVES": "unrated"})
    assert out.exit_code == 0, out.output
    assert db_rows(db, "SELECT DISTINCT reason FROM rating_changes WHERE system = 'fide'") == [("no_moves",)]
    unknown = CliRunner().invoke(app, ["rate", "--db", str(db), "--param", "foo=1"])
    assert unknown.exit_code == 2 and "unknown FIDE parameter foo; known: check_time_minimum" in unknown.output
    assert "__init__" not in unknown.output


def test_more_unplayed_terminations_and_an_event_named_once_with_its_date() -> None:
    pf = read_pgn(
        _export_game("1-0", ("Termination", "Forfeit: Black did not arrive in time"))
        + _export_game("0-1", ("Termination", "Game not played"), white="Gamma, C", black="Delta, D")
        + _export_game("1-0", ("Termination", "Black forfeits on time"), white="Eta, E", black="Theta, T")
    )
    assert [g.played for g in pf.games] == [False, False, True]
    dated = _export_game("1-0", ("EventDate", "2023.05.06"))
    undated = _export_game("0-1", white="Gamma, C", black="Delta, D").replace('[Event "Results"]\n', "")
    pf = read_pgn(dated + undated)
    assert len(pf.tournaments) == 1 and [g.tournament_ref for g in pf.games] == [0, 0]
