"""The rate of play from all the evidence, over a real store: real events of Carlsen.pgn and the
San Viator TRF, and variants of them as other federations' files name them (no TimeControl),
on online sites, a simul, rounds per day; where each event's rate came from (``rate_of_play``),
the report's header and the assumed events `rate` lists."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from elopipe.cli.main import app
from elopipe.ingest.driver import ingest_paths
from elopipe.publish.report_header import report_header
from elopipe.rating.run import rate
from tests.helpers.paths import SHARED_DATA

CARLSEN = SHARED_DATA / "pgn" / "Carlsen.pgn"
SAN_VIATOR = SHARED_DATA / "trf" / "esp_torneo_san_viator_2018_vega_137players.trf"

pytestmark = pytest.mark.skipif(not CARLSEN.exists(), reason="../shared/data is not available")

# real standard events of Carlsen.pgn, renamed as a file of another federation would name them
RENAMED = {
    "2nd Norway Chess 2014": ("Mistrzostwa Polski w Szachach Szybkich", "rapid"),
    "3rd Norway Chess 2015": ("Deutsche Schnellschach-Meisterschaft", "rapid"),
    "4th Norway Chess 2016": ("NK Snelschaak", "rapid"),
    "5th Norway Chess 2017": ("Campeonato de partidas rápidas", "rapid"),
    "Vugar Gashimov Mem 2014": ("Championnat rapide de Paris", "rapid"),
    "Vugar Gashimov Mem 2015": ("Lightning Open", "blitz"),
    # words that must not misfire: these stay standard, assumed, and are rated
    "2nd Sinquefield Cup 2014": ("Blitzstein Memorial", None),
    "3rd Sinquefield Cup 2015": ("Rapid City Open", None),
}
SITES = ["chess.com INT", "lichess.org", "chess24.com INT", "ICC", "playchess"]


def _games(text: str, event: str) -> list[str]:
    """The games of `event` in a PGN text, each as written."""
    starts = [m.start() for m in re.finditer(r'(?m)^\[Event "', text)] + [len(text)]
    blocks = [text[a:b] for a, b in zip(starts, starts[1:], strict=False)]
    return [b for b in blocks if b.startswith(f'[Event "{event}"]')]


def _set_tag(game: str, tag: str, value: str) -> str:
    if re.search(rf'(?m)^\[{tag} "', game):
        return re.sub(rf'(?m)^\[{tag} "[^"]*"\]', f'[{tag} "{value}"]', game, count=1)
    return game.replace("\n\n", f'\n[{tag} "{value}"]\n\n', 1)


def _variant_pgn(path: Path) -> None:
    text = CARLSEN.read_text(encoding="utf-8")
    out: list[str] = []
    for event, (name, _) in RENAMED.items():
        out += [_set_tag(g, "Event", name) for g in _games(text, event)]
    # the same events played online: the Site tag as each platform writes it
    for i, (site, game) in enumerate(zip(SITES, _games(text, "Vugar Gashimov Mem 2018"), strict=False)):
        out.append(_set_tag(_set_tag(game, "Event", f"Site test {i}"), "Site", site))
    # a name that says blitz, but the time control says standard: the time control wins
    out += [
        _set_tag(_set_tag(g, "Event", "Blitz Memorial"), "TimeControl", "40/5400+30:1800+30")
        for g in _games(text, "Vugar Gashimov Mem 2019")
    ]
    for event in ("14-board simul", "FTX Crypto Cup 2022", "6th Norway Chess 2018"):
        out += _games(text, event)
    path.write_text("".join(out), encoding="utf-8")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("rate_of_play")
    pgn = tmp / "variants.pgn"
    _variant_pgn(pgn)
    db = tmp / "s.duckdb"
    ingest_paths([pgn], db)
    con = duckdb.connect(str(db))
    try:
        rate(con, "fide")
    finally:
        con.close()
    return db


def _query(db: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _by_name(db: Path, table: str, cols: str) -> dict[str, tuple]:
    rows = _query(
        db,
        f"SELECT t.name, {cols} FROM {table} x JOIN tournaments t USING (tournament_id)"
        " WHERE x.system = 'fide' ORDER BY 1",
    )
    return {r[0]: tuple(r[1:]) for r in rows}


def test_event_names_in_several_languages_without_time_control_leave_the_standard_list(store):
    evidence = _by_name(store, "rate_of_play", "x.rate_class, x.source")
    skips = _by_name(store, "rating_skips", "reason")
    for name, cls in RENAMED.values():
        if cls is None:
            assert evidence[name] == ("standard", "assumed"), name
            assert name not in skips
        else:
            assert evidence[name] == (cls, "name"), name
            assert skips[name] == (f"rate_class:{cls}",), name


def test_online_sites_a_simul_and_rounds_per_day_are_read(store):
    evidence = _by_name(store, "rate_of_play", "x.rate_class, x.source, x.evidence")
    skips = _by_name(store, "rating_skips", "reason")
    platforms = ["chess.com", "lichess.org", "chess24.com", "icc", "playchess"]
    for i, (site, platform) in enumerate(zip(SITES, platforms, strict=True)):
        assert evidence[f"Site test {i}"] == (None, "site", f'site "{site}"')
        assert skips[f"Site test {i}"] == (f"online:{platform}",)
    assert evidence["14-board simul"] == (None, "name", 'name "14-board simul": simul')
    assert skips["14-board simul"] == ("not_rated:simul",)
    # four rapid games a day against one opponent in Miami: not standard, rapid or blitz unknown
    cls, source, said = evidence["FTX Crypto Cup 2022"]
    assert (cls, source) == ("fast", "rounds_per_day") and "on 2022-08-15" in said
    assert skips["FTX Crypto Cup 2022"] == ("rate_class:fast",)
    assert evidence["Blitz Memorial"] == ("standard", "time_control", 'TimeControl "40/5400+30:1800+30"')


def test_only_the_standard_events_are_rated_and_the_plain_ones_say_assumed(store):
    rated = dict(
        _query(
            store,
            "SELECT t.name, bool_and(c.tc_assumed) FROM rating_changes c JOIN tournaments t USING (tournament_id)"
            " WHERE c.system = 'fide' GROUP BY 1",
        )
    )
    assert rated == {
        "6th Norway Chess 2018": True,
        "Blitzstein Memorial": True,
        "Rapid City Open": True,
        "Blitz Memorial": False,
    }
    con = duckdb.connect(str(store), read_only=True)
    try:
        (tid,) = con.execute("SELECT tournament_id FROM tournaments WHERE name = '6th Norway Chess 2018'").fetchone()
        plain = report_header(con, tid, "fide")["rate_class"]
        (tid,) = con.execute("SELECT tournament_id FROM tournaments WHERE name = 'Blitz Memorial'").fetchone()
        timed = report_header(con, tid, "fide")["rate_class"]
    finally:
        con.close()
    assert plain.startswith("standard, assumed") and "no time control" in plain
    assert timed == 'standard, from the time control (TimeControl "40/5400+30:1800+30")'


def test_rate_prints_the_assumed_events_by_name_the_largest_first(store, tmp_path):
    db = tmp_path / "copy.duckdb"
    db.write_bytes(store.read_bytes())
    con = duckdb.connect(str(db))
    try:
        # a new time-control policy makes the run recompute and report everything
        con.execute("DELETE FROM rating_period_digests")
    finally:
        con.close()
    result = CliRunner().invoke(app, ["rate", "--system", "fide", "--db", str(db)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("games with unknown rate of play"))
    text = CARLSEN.read_text(encoding="utf-8")
    sizes = {
        "Blitzstein Memorial": len(_games(text, "2nd Sinquefield Cup 2014")),
        "Rapid City Open": len(_games(text, "3rd Sinquefield Cup 2015")),
        "6th Norway Chess 2018": len(_games(text, "6th Norway Chess 2018")),
    }
    assert lines[head].endswith(f": {sum(sizes.values())}")
    assert lines[head + 1].strip() == "in 3 events whose rate of play was assumed, the largest first:"
    shown = [line.split(maxsplit=1) for line in lines[head + 2 : head + 5]]
    assert {name: int(n) for n, name in shown} == sizes
    assert [int(n) for n, _ in shown] == sorted(sizes.values(), reverse=True)


def _san_viator(path: Path, *, one_day: bool) -> None:
    """San Viator 2018 without its time control (122); `one_day`: every round dated 8 April."""
    lines = SAN_VIATOR.read_text(encoding="utf-8").splitlines(keepends=True)
    out = []
    for line in lines:
        if line.startswith("122"):
            continue
        if one_day and line.startswith("132"):
            line = re.sub(r"\d\d/\d\d/\d\d", "18/04/08", line)
        out.append(line)
    path.write_text("".join(out), encoding="utf-8")


@pytest.mark.parametrize(
    ("one_day", "expected"), [(False, ("standard", "assumed")), (True, ("fast", "rounds_per_day"))]
)
def test_a_trf_without_time_control_is_read_from_its_round_dates(tmp_path, one_day, expected):
    trf = tmp_path / "san_viator.trf"
    _san_viator(trf, one_day=one_day)
    db = tmp_path / "t.duckdb"
    ingest_paths([trf], db)
    con = duckdb.connect(str(db))
    try:
        rate(con, "fide")
        rows = con.execute("SELECT DISTINCT rate_class, source FROM rate_of_play WHERE system = 'fide'").fetchall()
        rated = con.execute("SELECT count(*) FROM rating_changes WHERE system = 'fide' AND counted").fetchone()
    finally:
        con.close()
    assert rows == [expected]
    assert (rated is not None and rated[0] > 0) == (not one_day)
