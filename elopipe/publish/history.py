"""Player history: rating per list, games, K, change and tournaments, from `v_player_history`.

`history_frame` columns (Polars): list_date Date, rating Int32 (null while unrated),
games Int32, total_games Int32, k Int32, change Int32 (rating points), flags String,
tournaments List(String) (tournaments rated for the player on that list).
`tournaments_frame` columns: tournament_id Int32, name String, start_date Date,
start_rank Int32, rating_in_file Int32, points_in_file Decimal(5,1).
"""

from __future__ import annotations

import base64
from pathlib import Path

import duckdb
import polars as pl

from elopipe.publish.atomic import write_bytes, write_text
from elopipe.publish.charts import rating_history_chart
from elopipe.publish.html import render, system_label
from elopipe.publish.reports import row_by_id, slug
from elopipe.read.names import name_key, name_key_sql


def find_player(con: duckdb.DuckDBPyConnection, ref: str) -> int:
    """The player_id for `ref`: a FIDE ID, national ID or player_id, else a name.

    Digits are tried as FIDE ID first, then as player_id. A name matches, in this order:
    the player's name exactly (case-insensitive), a spelling seen in a source file
    (`player_aliases.name_as_written`, `tournament_players.name_as_written`), the same
    `identity.name_key` (order of the name parts, accents and case ignored), else a literal
    substring of the name or of a spelling (`%` and `_` match only themselves).
    Raises LookupError (listing candidates) when nothing or more than one player matches.
    """
    ref = ref.strip()
    if ref.isdigit():
        for sql in (
            "SELECT player_id FROM players WHERE fide_id = ?",
            "SELECT player_id FROM players WHERE player_id = ?",
        ):
            rows = con.execute(sql, [int(ref)]).fetchall()
            if len(rows) == 1:
                return int(rows[0][0])
    rows = con.execute("SELECT player_id FROM players WHERE national_id = ?", [ref]).fetchall()
    if len(rows) == 1:
        return int(rows[0][0])
    key = name_key(ref)
    # players.name, then every spelling seen in a file (player_aliases, tournament_players),
    # then the order-independent name_key ('Ding, Liren' = 'Liren Ding'), then a literal
    # substring ('%' and '_' in `ref` are characters, not LIKE wildcards)
    stages = [
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
            "SELECT player_id FROM players WHERE contains(lower(name), lower($ref))"
            " UNION SELECT player_id FROM player_aliases WHERE contains(lower(name_as_written), lower($ref))",
            {"ref": ref},
        ),
    ]
    rows = []
    for sql, params in stages:
        if not key and "key" in params:
            continue
        rows = con.execute(
            f"SELECT player_id, name FROM players WHERE player_id IN ({sql}) ORDER BY 1", params
        ).fetchall()
        if rows:
            break
    if len(rows) == 1:
        return int(rows[0][0])
    if not rows:
        raise LookupError(f"no player matches {ref!r}")
    listing = "; ".join(f"{pid}: {name}" for pid, name in rows[:20])
    raise LookupError(f"{len(rows)} players match {ref!r}, give the id: {listing}")


def player_info(con: duckdb.DuckDBPyConnection, player_id: int) -> dict[str, object]:
    """The `players` row as a dict; raises LookupError if absent."""
    return row_by_id(con, "players", "player_id", player_id)


def history_frame(con: duckdb.DuckDBPyConnection, player_id: int, system: str) -> pl.DataFrame:
    """Rating per list of `player_id` under `system`, oldest first (columns: module docstring)."""
    frame: pl.DataFrame = con.sql(
        """
        SELECT list_date, rating, games, total_games, k, change, flags, tournaments
        FROM v_player_history WHERE player_id = ? AND system = ? ORDER BY list_date
        """,
        params=[player_id, system],
    ).pl()
    return frame


def tournaments_frame(con: duckdb.DuckDBPyConnection, player_id: int) -> pl.DataFrame:
    """Every tournament the player appears in, by start date (columns: module docstring)."""
    frame: pl.DataFrame = con.sql(
        """
        SELECT t.tournament_id, t.name, t.start_date, tp.start_rank, tp.rating_in_file,
               tp.points_in_file
        FROM tournament_players tp JOIN tournaments t USING (tournament_id)
        WHERE tp.player_id = ? ORDER BY t.start_date NULLS LAST, t.tournament_id
        """,
        params=[player_id],
    ).pl()
    return frame


def write_player_page(
    con: duckdb.DuckDBPyConnection,
    player_id: int,
    system: str,
    out_dir: Path,
    chart_format: str = "png",
) -> list[Path]:
    """Write `<id>_<name>.<png|svg>` (rating chart) and `<id>_<name>.html` (history page with
    the chart embedded) into `out_dir`; return the paths. Raises LookupError for an unknown
    player."""
    info = player_info(con, player_id)
    hist = history_frame(con, player_id, system)
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"{player_id}_{slug(str(info['name']), 'player')}"
    title = f"{info['name']} – {system_label(system)}"
    png = rating_history_chart(list(hist["list_date"]), list(hist["rating"]), title, fmt="png")
    paths: list[Path] = []
    chart_path = out_dir / f"{stem}.{chart_format}"
    if chart_format == "png":
        write_bytes(chart_path, png)
    else:
        write_bytes(
            chart_path, rating_history_chart(list(hist["list_date"]), list(hist["rating"]), title, fmt=chart_format)
        )
    paths.append(chart_path)
    html = render(
        "player.html.j2",
        title=title,
        player=info,
        system=system_label(system),
        history=list(hist.iter_rows(named=True)),
        tournaments=list(tournaments_frame(con, player_id).iter_rows(named=True)),
        chart_png=base64.b64encode(png).decode("ascii"),
    )
    html_path = out_dir / f"{stem}.html"
    write_text(html_path, html)
    paths.append(html_path)
    return paths
