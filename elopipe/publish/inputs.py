"""What a published page is made of: a digest of the stored rows it reads, taken before it is made.

A report, a player page or a list's files are a function of some rows of the store and of the
code that renders them. `report_digests`, `player_digests` and `list_digests` hash those rows,
for a whole set of pages in one query each, so that a publish can tell, before running a page's
queries, that it would come out as the files already in the folder (`manifest.Manifest.fresh`):
such a page is not made at all. Each digest is a hex text; it covers:

- a report of tournament T under system S (`reports.write_report`): the rows of `tournaments`,
  `tournament_players`, `canonical_games` and `unplayed_rounds` of T's parts
  (`elopipe.identity.events.PARTS`) and of T; T's `tournament_ratings`, `rating_changes` (with
  their `games` rows), `title_norms`, `rating_skips` and `rate_of_play` (its parts') under S; the
  `rating_lists` and `ffe_details` rows of its rated players on the list it was rated on; the
  `players` row of everyone the report names (participants, opponents, the opponent a norm
  raised); whether each of them was rated under S before T's first day (the
  `participants.round_reasons` test); the paths of the files its rows came from; and, for a
  scenario, its definition (forced rules and options, named in the report's header and legend);
- a player page of P under S (`history.write_player_page`): P's `players` row, `rating_lists`,
  `tournament_ratings` under S, `tournament_players` rows, games (with their `game_sources`
  rows) and unplayed rounds; the `tournaments` rows of every tournament these name and of the
  events they are parts of; the `game_sources` rows of those tournaments' games (which export
  of an event is the canonical one);
- a list of S at date D (`outputs.write_list`): its `rating_lists` rows with each player's
  `players` row, and the player-page links the list page carries.

Every digest also covers `code_fingerprint`: the publish package's sources and templates and the
versions of the libraries that format the files, so a new elopipe makes every page again. A
digest that differs only costs the page's queries; one that failed to change when a page's
content did would leave a stale page, so each lists more than a page reads rather than less.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import importlib.metadata
import json
from pathlib import Path
from typing import TypeVar

import duckdb

from elopipe.rating import scenarios

K = TypeVar("K")

# the libraries whose output is in the published bytes (CSV/Parquet, HTML, PNG, file names)
_LIBRARIES = ("duckdb", "polars", "jinja2", "matplotlib", "python-slugify", "pyarrow")
# modules outside `elopipe.publish` whose SQL a page runs, or whose rules a report's legend words
# (`rules_legend`: the FIDE versions' parameters, a scenario's definition)
_ALSO = ("store/views.py", "identity/events.py", "read/names.py", "rating/fide/b02.py", "rating/scenarios.py")


@functools.cache
def code_fingerprint() -> str:
    """A digest of the code that makes a page: every file of `elopipe/publish` (modules and
    templates), the views and event parts it queries, and the versions of `_LIBRARIES`."""
    package = Path(__file__).resolve().parent
    h = hashlib.blake2b(digest_size=16)
    files = sorted(p for p in package.rglob("*") if p.is_file() and p.suffix in {".py", ".j2", ".html", ".css", ".js"})
    for path in [*files, *(package.parent / rel for rel in _ALSO)]:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    for lib in _LIBRARIES:
        try:
            h.update(f"{lib}={importlib.metadata.version(lib)}".encode())
        except importlib.metadata.PackageNotFoundError:
            h.update(f"{lib}=none".encode())
    return h.hexdigest()


def _finish(kind: str, rows: list[tuple[K, str, int]]) -> dict[K, str]:
    """{key: hex digest} from (key, sum of row hashes, row count) rows, with the code's
    fingerprint and `kind` (the page kind and system)."""
    out: dict[K, str] = {}
    for key, total, count in rows:
        h = hashlib.blake2b(digest_size=16)
        h.update(f"{code_fingerprint()}|{kind}|{key}|{total}|{count}".encode())
        out[key] = h.hexdigest()
    return out


# Each row a report reads, hashed with the name of its table: `sum` of 64-bit hashes as HUGEINT
# (order-free, and a row counted twice counts twice), with the count of rows.
_REPORT_SQL = """
WITH ev AS (SELECT DISTINCT unnest($tids::INTEGER[]) AS tid),
parts AS (
    SELECT ev.tid, t.tournament_id AS part FROM ev JOIN tournaments t ON coalesce(t.event_id, t.tournament_id) = ev.tid
    UNION SELECT tid, tid FROM ev
),
tr AS (SELECT ev.tid, r.* FROM ev JOIN tournament_ratings r ON r.tournament_id = ev.tid AND r.system = $system),
rc AS (SELECT ev.tid, c.* FROM ev JOIN rating_changes c ON c.tournament_id = ev.tid AND c.system = $system),
cg AS (SELECT p.tid, g.* FROM parts p JOIN canonical_games g ON g.tournament_id = p.part),
un AS (SELECT p.tid, u.* FROM parts p JOIN unplayed_rounds u ON u.tournament_id = p.part),
tp AS (SELECT p.tid, x.* FROM parts p JOIN tournament_players x ON x.tournament_id = p.part),
tn AS (SELECT ev.tid, n.* FROM ev JOIN title_norms n ON n.tournament_id = ev.tid AND n.system = $system),
tt AS (SELECT p.tid, t.* FROM parts p JOIN tournaments t ON t.tournament_id = p.part),
who AS (
    SELECT tid, player_id FROM tp UNION SELECT tid, player_id FROM tr UNION SELECT tid, opponent_id FROM rc
    UNION SELECT tid, white_id FROM cg UNION SELECT tid, black_id FROM cg UNION SELECT tid, player_id FROM un
    UNION SELECT tid, opponent_id FROM un UNION SELECT tid, player_id FROM tn UNION SELECT tid, raised_id FROM tn
),
first_day AS (SELECT tid, min(first_day) AS day FROM tt GROUP BY tid),
rated AS (
    SELECT player_id, min(list_date) AS since FROM rating_lists
    WHERE system = $system AND rating IS NOT NULL AND player_id IN (SELECT player_id FROM who) GROUP BY player_id
),
files AS (
    SELECT tid, file_id FROM cg UNION SELECT tid, file_id FROM un UNION SELECT tid, file_id FROM tt
    UNION SELECT rc.tid, g.file_id FROM rc JOIN games g USING (game_id)
),
h AS (
    SELECT tid, hash('t', tt) AS h FROM tt
    UNION ALL SELECT tid, hash('tp', tp) FROM tp
    UNION ALL SELECT tid, hash('cg', cg) FROM cg
    UNION ALL SELECT tid, hash('un', un) FROM un
    UNION ALL SELECT tid, hash('tr', tr) FROM tr
    UNION ALL SELECT tid, hash('rc', rc) FROM rc
    UNION ALL SELECT rc.tid, hash('g', g) FROM rc JOIN games g USING (game_id)
    UNION ALL SELECT tid, hash('tn', tn) FROM tn
    -- rating_skips and rate_of_play carry the run that wrote them: only what a report shows is hashed
    UNION ALL SELECT ev.tid, hash('skip', s.reason, s.n_games) FROM ev JOIN rating_skips s
        ON s.tournament_id = ev.tid AND s.system = $system
    UNION ALL SELECT p.tid, hash('rop', r.rate_class, r.source, r.evidence, r.n_games) FROM parts p JOIN rate_of_play r
        ON r.tournament_id = p.part AND r.system = $system
    UNION ALL SELECT tr.tid, hash('rl', rl) FROM tr JOIN rating_lists rl
        ON rl.system = tr.system AND rl.list_date = tr.list_date AND rl.player_id = tr.player_id
    UNION ALL SELECT tr.tid, hash('ffe', d) FROM tr JOIN ffe_details d
        ON d.system = tr.system AND d.list_date = tr.list_date AND d.player_id = tr.player_id
    -- rated before the first day or not: a player first rated on a later list is as one never rated
    UNION ALL SELECT w.tid, hash('p', p, coalesce(r.since <= f.day, false)) FROM who w
        JOIN players p ON p.player_id = w.player_id
        LEFT JOIN rated r ON r.player_id = w.player_id LEFT JOIN first_day f ON f.tid = w.tid
    UNION ALL SELECT fl.tid, hash('f', f.file_id, f.path, f.member) FROM files fl JOIN source_files f USING (file_id)
)
SELECT tid, sum(h::HUGEINT)::VARCHAR, count(*) FROM h GROUP BY tid
"""


def report_digests(con: duckdb.DuckDBPyConnection, system: str, tournament_ids: list[int]) -> dict[int, str]:
    """{tournament_id: digest of the rows its report under `system` reads} (module docstring),
    for all of `tournament_ids` in one query."""
    if not tournament_ids:
        return {}
    rows = con.execute(_REPORT_SQL, {"tids": sorted(set(tournament_ids)), "system": system}).fetchall()
    # a scenario's forced rules and options are named in its reports' header and legend
    defined = scenarios.definition(con, system) if scenarios.split_system(system)[1] else None
    kind = f"report:{system}" if defined is None else f"report:{system}:{json.dumps(defined, sort_keys=True)}"
    return _finish(kind, [(int(r[0]), str(r[1]), int(r[2])) for r in rows])


_PLAYER_SQL = """
WITH me AS (SELECT DISTINCT unnest($pids::INTEGER[]) AS pid),
mine AS (SELECT me.pid, tp.* FROM me JOIN tournament_players tp ON tp.player_id = me.pid),
trs AS (SELECT me.pid, tr.* FROM me JOIN tournament_ratings tr ON tr.player_id = me.pid AND tr.system = $system),
rl AS (SELECT me.pid, r.* FROM me JOIN rating_lists r ON r.player_id = me.pid AND r.system = $system),
gs AS (SELECT me.pid, g.* FROM me JOIN games g ON me.pid IN (g.white_id, g.black_id)),
un AS (SELECT me.pid, u.* FROM me JOIN unplayed_rounds u ON u.player_id = me.pid),
tids AS (
    SELECT pid, tournament_id FROM mine UNION SELECT pid, tournament_id FROM trs
    UNION SELECT pid, tournament_id FROM gs UNION SELECT pid, tournament_id FROM un
),
-- the games of those tournaments with another source row: which export is the event's
src AS (
    SELECT t.pid, s.*, c.tournament_id AS canon FROM tids t JOIN games g ON g.tournament_id = t.tournament_id
    JOIN game_sources s ON s.source_game_id = g.game_id JOIN games c ON c.game_id = s.game_id
),
named AS (
    SELECT pid, tournament_id FROM tids UNION SELECT pid, canon FROM src
),
events AS (
    SELECT n.pid, t.tournament_id FROM named n JOIN tournaments t ON t.tournament_id = n.tournament_id
    UNION SELECT n.pid, coalesce(t.event_id, t.tournament_id) FROM named n
        JOIN tournaments t ON t.tournament_id = n.tournament_id
),
h AS (
    SELECT me.pid, hash('p', p) AS h FROM me JOIN players p ON p.player_id = me.pid
    UNION ALL SELECT pid, hash('tp', mine) FROM mine
    UNION ALL SELECT pid, hash('tr', trs) FROM trs
    UNION ALL SELECT pid, hash('rl', rl) FROM rl
    UNION ALL SELECT pid, hash('g', gs) FROM gs
    UNION ALL SELECT pid, hash('src', g.game_id, s.game_id) FROM gs g
        JOIN game_sources s ON s.source_game_id = g.game_id
    UNION ALL SELECT pid, hash('un', un) FROM un
    UNION ALL SELECT pid, hash('s', src) FROM src
    UNION ALL SELECT e.pid, hash('t', t) FROM events e JOIN tournaments t ON t.tournament_id = e.tournament_id
    UNION ALL SELECT t.pid, hash('n', t.tournament_id, count(g.game_id)) FROM tids t
        LEFT JOIN games g ON g.tournament_id = t.tournament_id GROUP BY t.pid, t.tournament_id
)
SELECT pid, sum(h::HUGEINT)::VARCHAR, count(*) FROM h GROUP BY pid
"""


def player_digests(
    con: duckdb.DuckDBPyConnection, system: str, player_ids: list[int], chart: str = "svg"
) -> dict[int, str]:
    """{player_id: digest of the rows the player's page under `system` reads and of its `chart`
    format} (module docstring), for all of `player_ids` in one query."""
    if not player_ids:
        return {}
    rows = con.execute(_PLAYER_SQL, {"pids": sorted(set(player_ids)), "system": system}).fetchall()
    return _finish(f"player:{system}:{chart}", [(int(r[0]), str(r[1]), int(r[2])) for r in rows])


def list_digests(
    con: duckdb.DuckDBPyConnection, system: str, dates: list[dt.date], links: dict[int, str]
) -> dict[dt.date, str]:
    """{list_date: digest of the list's rows and of the player-page `links` of its players}
    (module docstring), for all of `dates` in one query."""
    if not dates:
        return {}
    rows = con.execute(
        """
        WITH l AS (
            SELECT r.list_date, r.player_id, hash('rl', r, p) AS h
            FROM rating_lists r JOIN players p USING (player_id)
            WHERE r.system = $system AND r.list_date IN (SELECT unnest($dates::DATE[]))
        ),
        links AS (SELECT unnest($pids::INTEGER[]) AS player_id, unnest($hrefs::VARCHAR[]) AS href)
        SELECT l.list_date, sum(hash(l.h, k.href)::HUGEINT)::VARCHAR, count(*)
        FROM l LEFT JOIN links k USING (player_id) GROUP BY l.list_date
        """,
        {"system": system, "dates": sorted(set(dates)), "pids": list(links), "hrefs": list(links.values())},
    ).fetchall()
    return _finish(f"list:{system}", [(r[0], str(r[1]), int(r[2])) for r in rows])


__all__ = ["code_fingerprint", "list_digests", "player_digests", "report_digests"]
