"""The index page of an output folder, `index-<system>.html` (template `index.html.j2`).

What an officer looks for first comes first: a search box that finds any player of the latest
list and any tournament with a report, the latest list with its national lists (one link per
federation: the list page filtered to it, `#fed=XXX`), the tournament reports newest first, then
every list newest first, then the player pages. The index links what is in the folder, whichever
run wrote it, but only the report and player pages this store names so (id and slug of the name):
a folder shared by two stores holds pages of the same ids for other events. The search reads a
compact JSON block (names, federation, link) and renders at most a page of matches, so an index
of hundreds of lists and thousands of reports stays light; it works offline (inline script, no CDN).

The systems' indexes of one folder link to each other, and `index.html` is the folder's top page:
one entry per system index present, with its latest list (`write_top_index`). Writing one
system's index refreshes the others that do not link it yet and rewrites the top page, so the
pages agree whichever systems a run published, and a second run changes nothing.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import duckdb
import polars as pl

from elopipe.publish.atomic import write_text
from elopipe.publish.html import SYSTEM_LABELS, json_for_script, render, system_label
from elopipe.publish.reports import slug
from elopipe.store.frames import to_polars

FORMAT_ORDER = ("html", "csv", "txt", "parquet")
# reports shown on the page before "show all" (the rest are a click or a search away)
REPORTS_SHOWN = 50
_PAGE = re.compile(r"^(\d+)_")
_INDEX = re.compile(r"^index-(.+)\.html$")
TOP_INDEX = "index.html"


def write_index(con: duckdb.DuckDBPyConnection, system: str, out_dir: Path) -> Path:
    """Write `index-<system>.html` in `out_dir` and return its path. It links every list, report
    and player page of `system` present in the folder that this store would write (`_pages`:
    the id and the slug of its name in the store; another store's pages sharing the folder are
    left out), the other systems' indexes and the top page; names and dates come from the
    store. An index of another system that does not link this one yet is written again, and so
    is `index.html` (`write_top_index`). Raises OSError when a page cannot be written."""
    index = _write_system_index(con, system, out_dir)
    link = f'href="index-{system}.html"'
    for other in indexed_systems(out_dir):
        if other != system and link not in (out_dir / f"index-{other}.html").read_text(encoding="utf-8"):
            _write_system_index(con, other, out_dir)
    write_top_index(out_dir)
    return index


def indexed_systems(out_dir: Path) -> list[str]:
    """The systems with an `index-<system>.html` in `out_dir`, in `SYSTEM_LABELS` order, then
    the others (scenarios among them) by name."""
    found = [m.group(1) for f in out_dir.glob("index-*.html") if (m := _INDEX.match(f.name))]
    return sorted(found, key=_system_order)


def _system_order(system: str) -> tuple[int, str]:
    order = list(SYSTEM_LABELS)
    return (order.index(system) if system in order else len(order), system)


def write_top_index(out_dir: Path) -> Path:
    """Write `index.html` in `out_dir`: a link to each system's index present there
    (`indexed_systems`) with the date of its latest list in the folder; return its path.
    Raises OSError when it cannot be written."""
    systems = []
    for system in indexed_systems(out_dir):
        lists = _lists(out_dir, system)
        systems.append(
            {
                "label": system_label(system),
                "href": f"index-{system}.html",
                "latest": lists[0]["date"] if lists else None,
                "n_lists": len(lists),
            }
        )
    top = out_dir / TOP_INDEX
    write_text(top, render("top_index.html.j2", title="elopipe outputs", systems=systems))
    return top


def _write_system_index(con: duckdb.DuckDBPyConnection, system: str, out_dir: Path) -> Path:
    """`index-<system>.html` (see `write_index`), linking the systems indexed in the folder and
    this one."""
    lists = _lists(out_dir, system)
    reports = _pages(con, out_dir / "reports" / system, f"reports/{system}", "tournaments", "tournament_id")
    players = _pages(con, out_dir / "players" / system, f"players/{system}", "players", "player_id")
    latest = lists[0] if lists else None
    search_players, federations = _latest_players(con, system, latest, players)
    search = {
        "p": search_players,
        "t": [[r["name"], r["date"], r["href"]] for r in reports],
    }
    index = out_dir / f"index-{system}.html"
    write_text(
        index,
        render(
            "index.html.j2",
            title=f"elopipe outputs – {system_label(system)}",
            system=system_label(system),
            latest=latest,
            federations=federations,
            lists=lists,
            reports=reports[:REPORTS_SHOWN],
            n_reports=len(reports),
            players=players,
            systems=[
                {"label": system_label(x), "href": f"index-{x}.html", "current": x == system}
                for x in sorted({*indexed_systems(out_dir), system}, key=_system_order)
            ],
            top_index=TOP_INDEX,
            search_json=json_for_script(search),
        ),
    )
    return index


def _lists(out_dir: Path, system: str) -> list[dict[str, object]]:
    """[{date, files: [{fmt, href}], html}] of the lists in `out_dir/lists`, newest first."""
    by_date: dict[str, list[str]] = {}
    for f in (out_dir / "lists").glob(f"{system}_*.*"):
        day, _, fmt = f.name[len(system) + 1 :].partition(".")
        try:
            dt.date.fromisoformat(day)
        except ValueError:
            continue
        by_date.setdefault(day, []).append(fmt)
    order = {fmt: i for i, fmt in enumerate(FORMAT_ORDER)}
    out: list[dict[str, object]] = []
    for day in sorted(by_date, reverse=True):
        fmts = sorted(by_date[day], key=lambda x: (order.get(x, len(order)), x))
        files = [{"fmt": fmt, "href": f"lists/{system}_{day}.{fmt}"} for fmt in fmts]
        html = f"lists/{system}_{day}.html" if "html" in fmts else None
        out.append({"date": day, "files": files, "html": html})
    return out


def _pages(con: duckdb.DuckDBPyConnection, folder: Path, href: str, table: str, key: str) -> list[dict[str, object]]:
    """[{name, date, href}] of the `<id>_<slug>.html` pages of `folder` that this store would
    write: the id is in `table` and the slug is that of its name there (a page of another store
    sharing the folder, or of an id this store no longer has, is not linked). Names (and a
    tournament's start date) from `table` in one query; newest first for tournaments, by name
    for players."""
    pages = [(int(m.group(1)), f.name, f.stem) for f in folder.glob("*.html") if (m := _PAGE.match(f.name))]
    frame = pl.DataFrame(pages, schema={"id": pl.Int64, "file": pl.String, "stem": pl.String}, orient="row")
    date = "start_date" if table == "tournaments" else "NULL::DATE"
    # the ids as a parameter: a Polars frame scanned by name would import pyarrow
    known = to_polars(
        con.sql(
            f"SELECT {key}::BIGINT AS id, name, {date} AS date FROM {table}"
            f" WHERE {key} IN (SELECT unnest($ids::BIGINT[]))",
            params={"ids": [p[0] for p in pages]},
        )
    )
    # only the pages this store names so: another store's folder shares ids ('1_' of another
    # event), and its page must never be linked as this store's (a comparison page adds '-vs-<B>')
    fallback = "tournament" if table == "tournaments" else "player"
    own = known.with_columns(
        (pl.col.id.cast(pl.String) + "_" + pl.col.name.map_elements(lambda n: slug(n, fallback), pl.String)).alias(
            "own_stem"
        )
    )
    rows = (
        frame.join(own, on="id", how="inner")
        .filter((pl.col.stem == pl.col.own_stem) | pl.col.stem.str.starts_with(pl.col.own_stem + "-vs-"))
        .with_columns(
            pl.col.date.cast(pl.String).fill_null(""),
            (pl.lit(href + "/") + pl.col.file).alias("href"),
        )
        .sort(["date", "name", "id"], descending=[True, False, False])
    )
    if table == "players":
        rows = rows.sort(["name", "id"])
    return rows.select("name", "date", "href").to_dicts()


def _latest_players(
    con: duckdb.DuckDBPyConnection, system: str, latest: dict[str, object] | None, pages: list[dict[str, object]]
) -> tuple[list[list[object]], list[str]]:
    """The search rows [name, federation, href] of the latest list's players (a player's own page
    when there is one, else the list page searched for the name), and the list's federations."""
    if latest is None or latest["html"] is None:
        return [[p["name"], "", p["href"]] for p in pages], []
    day = dt.date.fromisoformat(str(latest["date"]))
    own = pl.DataFrame(
        {
            "id": [int(str(p["href"]).rsplit("/", 1)[1].split("_", 1)[0]) for p in pages],
            "page": [p["href"] for p in pages],
            "page_name": [p["name"] for p in pages],
        },
        schema={"id": pl.Int64, "page": pl.String, "page_name": pl.String},
    )
    frame = to_polars(
        con.sql(
            "SELECT player_id::BIGINT AS id, name, federation FROM v_rating_lists"
            " WHERE system = ? AND list_date = ? ORDER BY name",
            params=[system, day],
        )
    )
    rows = frame.join(own, on="id", how="full", coalesce=True, maintain_order="left").select(
        pl.coalesce(pl.col.name, pl.col.page_name).fill_null(""),
        pl.col.federation.fill_null(""),
        pl.col.page,
    )
    feds = sorted(f for f in frame["federation"].unique().to_list() if f)
    return [list(r) for r in rows.rows()], feds
