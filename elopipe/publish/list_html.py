"""A rating list as one standalone HTML page (template `list.html.j2`).

The rows travel as JSON and the page's script renders, sorts, searches, pages and filters them,
so a list of 400,000 players stays one light file. Filters, as FIDE's top lists cut a list:
federation (with it the page is that federation's national list), women (`sex` 'w'), juniors
U20, seniors 50+ and 65+, title. Age counts by birth year against the list's year, as FIDE's age
categories do (a U20 junior on a 2025 list was born in 2005 or later, a 50+ senior in 1975 or
earlier, a 65+ senior in 1960 or earlier). Under a filter the Rank column numbers the active
players with the list's ID who pass it (equal ratings share a rank): the national rank under a
federation filter equals `fed_rank` of `lists.rating_list`. The name search finds rows and never
renumbers them. Players without the list's ID come after the ranked section, under a heading,
without a rank. The filters can be set by the URL: `#fed=IRL&sex=w&age=u20&title=WGM&q=name`.
"""

from __future__ import annotations

import datetime as dt

import polars as pl

from elopipe.publish.html import json_for_script, render, system_label
from elopipe.publish.lists import no_id_flag

# (key, header, numeric) of the HTML list, in display order
HTML_COLUMNS = [
    ("rank", "Rank", True),
    ("fide_id", "FIDE ID", True),
    ("national_id", "National ID", False),
    ("name", "Name", False),
    ("federation", "Fed", False),
    ("sex", "Sex", False),
    ("title", "Title", False),
    ("birth_year", "B-year", True),
    ("rating", "Rating", True),
    ("games", "Gms", True),
    ("k", "K", True),
    ("change", "Change", True),
    ("flags", "Flags", False),
]

# JSON row: the HTML_COLUMNS values, then the player's page (or null), then 1 when the player
# can be ranked (active, with the list's ID), then 1 when the player lacks the list's ID.
_EXTRA = ["link", "rankable", "no_id"]


def list_html(df: pl.DataFrame, system: str, list_date: dt.date, player_links: dict[int, str] | None) -> str:
    """The page of the list `df` (columns of `lists.rating_list`, in its order: ranked section
    first) of `system` at `list_date`. `player_links` maps player_id to a relative href."""
    keys = [k for k, _, _ in HTML_COLUMNS]
    links = pl.DataFrame(
        {"player_id": list((player_links or {}).keys()), "link": list((player_links or {}).values())},
        schema={"player_id": pl.Int32, "link": pl.String},
    )
    rows = (
        df.with_columns(pl.col.player_id.cast(pl.Int32))
        .join(links, on="player_id", how="left", maintain_order="left")
        .select(
            *keys,
            "link",
            (~pl.col.inactive & ~pl.col.no_id).cast(pl.Int8).alias("rankable"),
            pl.col.no_id.cast(pl.Int8),
        )
        .rows()
    )
    columns = [{"key": k, "label": h, "num": n} for k, h, n in HTML_COLUMNS]
    marker = no_id_flag(system)
    return render(
        "list.html.j2",
        title=f"{system_label(system)} rating list {list_date}",
        system_label=system_label(system),
        list_date=list_date.isoformat(),
        list_year=list_date.year,
        n_players=df.height,
        n_unranked_id=int(df["no_id"].sum()),
        no_id_label={"no-fide-id": "no FIDE ID", "no-licence": "no FFE licence"}.get(marker, ""),
        no_id_flag=marker,
        federations=sorted(f for f in df["federation"].unique().to_list() if f),
        titles=sorted(t for t in df["title"].unique().to_list() if t),
        columns=columns,
        columns_json=json_for_script(columns),
        extra_json=json_for_script(_EXTRA),
        data_json=json_for_script(rows),
    )
