"""Player history: rating per list, games, K, change and tournaments, from `v_player_history`.

`history_frame` columns (Polars): list_date Date, kind String ('period' | 'adjustment': the
1 March 2024 adjustment), rating Int32 (null while unrated), games Int32, total_games Int32,
k Int32, change Int32 (rating points), flags String, tournaments List(String) (tournaments
rated for the player on that list).
`tournaments_frame` columns: tournament_id Int32, name String, start_date Date,
start_rank Int32, rating_in_file Int32, points_in_file Decimal(5,1), points Decimal: the points
the file declares, else (PGN) the player's score over the event's games and unplayed rounds, as
the report's crosstable counts it (`crosstable.crosstable`).
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import polars as pl

from elopipe.publish.atomic import write_bytes, write_text
from elopipe.publish.charts import ChartEvent, ChartStep, Series, render_series
from elopipe.publish.compare import side_label
from elopipe.publish.html import render, system_label
from elopipe.publish.reports import row_by_id, slug
from elopipe.read.names import ABBREV_MAX, name_key, name_key_sql
from elopipe.store.frames import to_polars

if TYPE_CHECKING:
    from elopipe.publish.history_compare import PlayerComparison

# (player_id, name) of the players `sql` selects, as offered: a player merged into another is that
# other one, and a player with no entry in any tournament and on no list (a spelling merged away,
# a ghost of an old identity) is never offered: it has nothing to show
_OFFERED = """
SELECT DISTINCT p.player_id, p.name
FROM players p0 JOIN players p ON p.player_id = COALESCE(p0.merged_into, p0.player_id)
WHERE p0.player_id IN ({sql})
  AND (EXISTS (SELECT 1 FROM tournament_players tp WHERE tp.player_id = p.player_id)
       OR EXISTS (SELECT 1 FROM rating_lists r WHERE r.player_id = p.player_id))
ORDER BY 1
"""


# SQL: every word of $key (the name asked for, `name_key`'s words) is a word of {words} (a
# player's name), or, of one or two letters, an initial of one of them ('Carlsen, M'); one
# word at least is whole, so a lone 'M' or a part of a word ('Nobody' in 'bboynobody') finds no one
_WORDS_MATCH = f"""(
    list_has_any({{words}}, $key)
    AND list_bool_and(list_transform($key, lambda t: list_contains({{words}}, t)
        OR (length(t) <= {ABBREV_MAX} AND list_bool_or(list_transform({{words}}, lambda w: starts_with(w, t))))))
)"""


def find_player(con: duckdb.DuckDBPyConnection, ref: str) -> int:
    """The player_id for `ref`: a FIDE ID, national ID or player_id, else a name.

    Digits are tried as FIDE ID first, then as player_id. A name matches, in this order:
    the player's name exactly (case-insensitive), a spelling seen in a source file
    (`player_aliases.name_as_written`, `tournament_players.name_as_written`), the same
    `identity.name_key` (order of the name parts, accents and case ignored), else whole words
    of the name or of a spelling (`_WORDS_MATCH`: 'Carlsen' or 'Magnus' finds 'Carlsen, Magnus',
    'Nobody' does not find 'bboynobody').
    A player merged into another is that other one; a player with no tournament entry and on no
    list is never offered (`_OFFERED`).
    Raises LookupError (listing candidates) when nothing or more than one player matches.
    """
    ref = ref.strip()
    if ref.isdigit():
        for sql in (
            "SELECT player_id FROM players WHERE fide_id = $ref",
            "SELECT player_id FROM players WHERE player_id = $ref",
        ):
            rows = con.execute(_OFFERED.format(sql=sql), {"ref": int(ref)}).fetchall()
            if len(rows) == 1:
                return int(rows[0][0])
    rows = con.execute(
        _OFFERED.format(sql="SELECT player_id FROM players WHERE national_id = $ref"), {"ref": ref}
    ).fetchall()
    if len(rows) == 1:
        return int(rows[0][0])
    key = name_key(ref)
    # players.name, then every spelling seen in a file (player_aliases, tournament_players),
    # then the order-independent name_key ('Ding, Liren' = 'Liren Ding'), then its words among
    # the name's words
    stages: list[tuple[str, dict[str, object]]] = [
        ("SELECT player_id FROM players WHERE lower(name) = lower($ref)", {"ref": ref}),
        (
            "SELECT player_id FROM player_aliases WHERE lower(name_as_written) = lower($ref)"
            " UNION SELECT player_id FROM tournament_players WHERE lower(name_as_written) = lower($ref)",
            {"ref": ref},
        ),
        (
            f"SELECT player_id FROM players WHERE name_key = $key OR {name_key_sql('name')} = $key"
            " UNION SELECT player_id FROM player_aliases WHERE name_key = $key",
            {"key": key},
        ),
        (
            "SELECT player_id FROM players WHERE "
            + _WORDS_MATCH.format(words=f"string_split(name_key, ' ') || string_split({name_key_sql('name')}, ' ')")
            + " UNION SELECT player_id FROM player_aliases WHERE "
            + _WORDS_MATCH.format(words="string_split(name_key, ' ')"),
            {"key": key.split(" ")},
        ),
    ]
    rows = []
    for sql, params in stages:
        if not key and "key" in params:
            continue
        rows = con.execute(_OFFERED.format(sql=sql), params).fetchall()
        if rows:
            break
    if len(rows) == 1:
        return int(rows[0][0])
    if not rows:
        raise LookupError(f"no player matches {ref!r}")
    listing = "; ".join(f"{pid}: {name}" for pid, name in rows[:20])
    if len(rows) > 20:
        listing += f"; and {len(rows) - 20} more (give more of the name)"
    raise LookupError(f"{len(rows)} players match {ref!r}, give the id: {listing}")


def player_info(con: duckdb.DuckDBPyConnection, player_id: int) -> dict[str, object]:
    """The `players` row as a dict; raises LookupError if absent."""
    return row_by_id(con, "players", "player_id", player_id)


_HISTORY_SQL = """
WITH h AS (
    SELECT list_date, rating, games, total_games, k, change, flags, tournaments,
           -- 'adj2024:+N': the 1 March 2024 adjustment added N (elopipe.rating.fide.close.close_list)
           TRY_CAST(regexp_extract(COALESCE(flags, ''), 'adj2024:\\+?(-?[0-9]+)', 1) AS INTEGER) AS adj,
           nullif(trim(regexp_replace(COALESCE(flags, ''), ',?adj2024:[^,]*', '', 'g'), ','), '') AS plain_flags
    FROM v_player_history WHERE player_id = $pid AND system = $system
),
rows AS (
    SELECT list_date, 'period' AS kind, rating - COALESCE(adj, 0) AS rating, games, total_games, k, change,
           plain_flags AS flags, tournaments,
           rating - COALESCE(adj, 0) IS DISTINCT FROM lag(rating) OVER (ORDER BY list_date)
             OR row_number() OVER (ORDER BY list_date) = 1 AS moved
    FROM h
    UNION ALL
    SELECT list_date, 'adjustment', rating, 0, total_games, NULL, adj, NULL, NULL, TRUE
    FROM h WHERE adj <> 0
)
SELECT list_date, kind, rating, games, total_games, k, change, flags, tournaments, games = 0 AND NOT moved AS idle
FROM rows ORDER BY list_date, kind = 'adjustment'
"""


def history_frame(
    con: duckdb.DuckDBPyConnection, player_id: int, system: str, all_months: bool = False
) -> pl.DataFrame:
    """Rating per list of `player_id` under `system`, oldest first (columns: module docstring).

    The 1 March 2024 adjustment (FIDE B.02 (2024), the one-off R + 0.4 × (2000 − R) for ratings
    under 2000; stored as the list flag 'adj2024:+N') is a row of its own, `kind`
    'adjustment', change = N and rating the published one, after the period's row (`kind`
    'period', rating before the adjustment). Without `all_months`, a list where the player had
    no rated game and the rating did not move is left out (the first list is always kept)."""
    return _shown(_full_history(con, player_id, system), all_months)


def _full_history(con: duckdb.DuckDBPyConnection, player_id: int, system: str) -> pl.DataFrame:
    """Every list of the player (`history_frame` with all months) plus `idle` Boolean: no rated
    game and the rating did not move."""
    frame: pl.DataFrame = to_polars(con.sql(_HISTORY_SQL, params={"pid": player_id, "system": system}))
    return frame


def _shown(full: pl.DataFrame, all_months: bool) -> pl.DataFrame:
    """The rows of `_full_history` a history table shows (all of them with `all_months`)."""
    return (full if all_months else full.filter(~pl.col("idle"))).drop("idle")


def tournaments_frame(con: duckdb.DuckDBPyConnection, player_id: int) -> pl.DataFrame:
    """Every event the player appears in, once, by start date (columns: module docstring).

    Two files of one event are one row: a duplicate export whose games are all another
    tournament's (`game_sources`, as `reports.canonical_event`) is that tournament, and the
    parts of an event held in several files (`tournaments.event_id`) are the event. The
    start rank, rating and points are the player's entry in the event itself when there is one;
    `points` adds up the games when the file declares no points (PGN)."""
    frame: pl.DataFrame = to_polars(
        con.sql(
            """
        WITH mine AS (
            SELECT tournament_id, start_rank, rating_in_file, points_in_file
            FROM tournament_players WHERE player_id = $pid
        ),
        dup AS (  -- every game of it is a source row of a game of one other tournament
            SELECT g.tournament_id, min(c.tournament_id) AS canon
            FROM games g
            JOIN game_sources s ON s.source_game_id = g.game_id AND s.game_id <> g.game_id
            JOIN games c ON c.game_id = s.game_id
            WHERE g.tournament_id IN (SELECT tournament_id FROM mine)
            GROUP BY g.tournament_id
            HAVING count(DISTINCT c.tournament_id) = 1
               AND NOT EXISTS (SELECT 1 FROM canonical_games k WHERE k.tournament_id = g.tournament_id)
        ),
        ev AS (
            SELECT m.*, COALESCE(t.event_id, t.tournament_id) AS event
            FROM mine m LEFT JOIN dup d USING (tournament_id)
            JOIN tournaments t ON t.tournament_id = COALESCE(d.canon, m.tournament_id)
        ),
        scored AS (  -- the player's score in each event, as the crosstable adds it up
            SELECT COALESCE(t.event_id, t.tournament_id) AS event, g.round, t.tournament_id,
                   CASE WHEN g.white_id = $pid THEN g.white_score ELSE g.black_score END AS score
            FROM canonical_games g JOIN tournaments t USING (tournament_id)
            WHERE $pid IN (g.white_id, g.black_id)
        ),
        points AS (
            SELECT event, sum(score) AS points FROM (
                SELECT event, score FROM scored
                UNION ALL
                SELECT COALESCE(t.event_id, t.tournament_id), u.score
                FROM unplayed_rounds u JOIN tournaments t USING (tournament_id)
                WHERE u.player_id = $pid
                  AND NOT EXISTS (SELECT 1 FROM scored s WHERE s.tournament_id = u.tournament_id AND s.round = u.round)
            ) GROUP BY event
        )
        SELECT CAST(ev.event AS INTEGER) AS tournament_id, any_value(t.name) AS name,
               any_value(COALESCE(t.start_date, t.first_day)) AS start_date,
               arg_min(ev.start_rank, ev.tournament_id <> ev.event) AS start_rank,
               arg_min(ev.rating_in_file, ev.tournament_id <> ev.event) AS rating_in_file,
               arg_min(ev.points_in_file, ev.tournament_id <> ev.event) AS points_in_file,
               COALESCE(arg_min(ev.points_in_file, ev.tournament_id <> ev.event), any_value(pt.points)) AS points
        FROM ev JOIN tournaments t ON t.tournament_id = ev.event
        LEFT JOIN points pt ON pt.event = ev.event
        GROUP BY ev.event
        ORDER BY start_date NULLS LAST, tournament_id
        """,
            params={"pid": player_id},
        )
    )
    return frame


def chart_marks(con: duckdb.DuckDBPyConnection, player_id: int, system: str) -> list[ChartEvent]:
    """A `ChartEvent` per tournament rated for the player under `system`: at its last day and the
    player's Ro there (Ru so far while unrated; none when neither is known), titled with the
    event's name, dates, Ro, games, score and change (`v_tournament_performance`)."""
    rows = con.execute(
        """
        SELECT t.name, COALESCE(t.end_date, t.last_day, v.list_date) AS day, COALESCE(t.start_date, t.first_day),
               COALESCE(v.ro, v.ru_provisional) AS y, v.ro, v.n, v.score, v.change_rounded, v.unrated
        FROM v_tournament_performance v JOIN tournaments t USING (tournament_id)
        WHERE v.player_id = ? AND v.system = ? AND COALESCE(v.ro, v.ru_provisional) IS NOT NULL
        ORDER BY day, t.tournament_id
        """,
        [player_id, system],
    ).fetchall()
    marks = []
    for name, day, first, y, ro, n, score, change, unrated in rows:
        dates = f"{first} – {day}" if first and first != day else str(day)
        parts = (
            [f"unrated, Ru {y} so far"]
            if unrated
            else [f"Ro {ro}" if ro is not None else "", f"change {change:+d}" if change is not None else ""]
        )
        parts += [f"{n} games" if n is not None else "", f"W {score}" if score is not None else ""]
        # a part the system does not give (FFE rates a period, not each event: no change) is left out
        marks.append(ChartEvent(day, int(y), f"{name} ({dates}): " + ", ".join(p for p in parts if p)))
    return marks


def player_series(
    con: duckdb.DuckDBPyConnection,
    player_id: int,
    system: str,
    history: pl.DataFrame | None = None,
) -> Series | None:
    """The player's rating line under `system` (`charts.Series`, unlabelled): every list,
    each rated tournament marked (`chart_marks`) and the 1 March 2024 adjustment as its own step;
    None when the player has no rating and no rated tournament under `system` (nothing to draw).
    `history`: the player's `history_frame` with all months, when the caller has it already."""
    hist = history if history is not None else history_frame(con, player_id, system, all_months=True)
    events = chart_marks(con, player_id, system)
    if hist["rating"].null_count() == hist.height and not events:
        return None
    steps = [
        ChartStep(r["list_date"], r["before"], r["rating"], f"1 Mar 2024 adjustment {r['change']:+d}")
        for r in hist.with_columns(pl.col("rating").shift(1).alias("before"))
        .filter((pl.col("kind") == "adjustment") & pl.col("before").is_not_null())
        .iter_rows(named=True)
    ]
    return Series(list(hist["list_date"]), list(hist["rating"]), events, steps)


def write_player_page(
    con: duckdb.DuckDBPyConnection,
    player_id: int,
    system: str,
    out_dir: Path,
    chart_format: str = "png",
    all_months: bool = False,
    compare: PlayerComparison | None = None,
) -> list[Path]:
    """Write `<id>_<name>.<png|svg>` (rating chart, `player_series`, in `chart_format`) and
    `<id>_<name>.html` (history page with that chart embedded, its tournaments' markers titled)
    into `out_dir`; return the paths. No chart is written for a player with nothing rated under `system`.
    The history table skips lists without games unless `all_months` (`history_frame`).
    With `compare` (`history_compare.player_comparison` of this player, A = `system`) the files
    are `<id>_<name>-vs-<B>.*`: the chart draws both sides' lines, labelled with their side keys,
    and the page adds the table of both ratings, B − A and games on each side per list date.
    Raises LookupError for an unknown player."""
    info = player_info(con, player_id)
    full = _full_history(con, player_id, system)
    every_list = _shown(full, all_months=True)
    hist = _shown(full, all_months)
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"{player_id}_{slug(str(info['name']), 'player')}"
    title = chart_title = f"{info['name']} – {system_label(system)}"
    series_a = player_series(con, player_id, system, every_list)
    lines = [] if series_a is None else [series_a]
    if compare is not None:
        stem += f"-vs-{slug(compare.side_b, 'b')}"
        title = f"{info['name']} – {side_label(compare.side_a)} against {side_label(compare.side_b)}"
        # the sides in words would run off a 7-inch chart; its legend names the keys
        chart_title = f"{info['name']}: {compare.side_a} against {compare.side_b}"
        series_b = compare.official_series() if compare.official_b else player_series(con, player_id, compare.side_b)
        lines = compare.lines(series_a, series_b)
    chart = render_series(lines, chart_title, chart_format) if lines else None
    paths: list[Path] = []
    if chart is not None:
        chart_path = out_dir / f"{stem}.{chart_format}"
        write_bytes(chart_path, chart.data)
        paths.append(chart_path)
    mime = "image/png" if chart_format == "png" else "image/svg+xml"
    html = render(
        "player.html.j2",
        title=title,
        player=info,
        system=system_label(system),
        history=list(hist.iter_rows(named=True)),
        all_months=all_months,
        tournaments=list(tournaments_frame(con, player_id).iter_rows(named=True)),
        chart_src=f"data:{mime};base64,{base64.b64encode(chart.data).decode('ascii')}" if chart else None,
        hotspots=chart.hotspots if chart else [],
        compare=None
        if compare is None
        else {
            "side_a": compare.side_a,
            "side_b": compare.side_b,
            "label_b": side_label(compare.side_b),
            "rows": list(compare.shown(all_months).iter_rows(named=True)),
            "summary": compare.summary(all_months),
        },
    )
    html_path = out_dir / f"{stem}.html"
    write_text(html_path, html)
    paths.append(html_path)
    return paths
