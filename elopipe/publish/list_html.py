"""A rating list as one standalone HTML page (template `list.html.j2`).

The rows travel as JSON and the page's script renders, sorts, searches, pages and filters them,
so a list of 400,000 players stays one light file. Filters, as FIDE's top lists cut a list:
federation (with it the page is that federation's national list), women (`sex` 'F', as FIDE's
lists write it), juniors U20, seniors 50+ and 65+, title (in FIDE's order, `TITLE_ORDER`). Age counts by birth year
against the list's year, as FIDE's age categories do (a U20 junior on a 2025 list was born in
2005 or later, a 50+ senior in 1975 or earlier, a 65+ senior in 1960 or earlier); a player whose
files give no birth year is in no age filter, and the page says how many. Under a filter the Rank
column numbers the active players with the list's ID who pass it (equal ratings share a rank):
the national rank under a federation filter equals `fed_rank` of `lists.rating_list`. The name
search finds rows and never renumbers them. Players without the list's ID come after the ranked
section, under a heading, without a rank, counted in the note under the filters and the search.
The flags legend explains the flags of the list's own system (`flag_legend`). The filters can be
set by the URL: `#fed=IRL&sex=F&age=u20&title=WGM&q=name`
(`sex=w`, of the pages before, still works).
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
    ("k", "K used", True),
    ("k_next", "K next", True),
    ("change", "Change", True),
    ("flags", "Flags", False),
]

# FIDE's order of titles (Handbook B.01: open titles, then women's); others follow by name
TITLE_ORDER = ("GM", "IM", "FM", "CM", "WGM", "WIM", "WFM", "WCM")

# the flags every list may show, then those of one system's lists (`lists.display_flags`, the
# engines' `rating_lists.flags`: FIDE `rating.fide.close._list_plan`, FFE `rating.ffe.run`)
_COMMON_FLAGS = [
    (["i"], "inactive: no rated game in the last 12 months (FIDE B.02 7.2.2); the rating stays as it was"),
    (["w"], "woman"),
    (["new"], "first rating on this list"),
]
_FIDE_FLAGS = [
    (["pool"], "unrated, games pooled towards a first rating (B.02 7.1.4)"),
    (["delisted"], "fell below the rating floor (B.02 7.2.1)"),
    (["adj2024:+N"], "the FIDE 1 March 2024 adjustment added N rating points"),
]
_FFE_FLAGS = [
    (["F", "N", "E"], "rating from FIDE, national rating, estimate (not a rating)"),
    (["archived"], "unrated: fewer compatible games than a first rating needs, kept for later"),
]


def flag_legend(system: str) -> list[tuple[list[str], str]]:
    """(flags, meaning) pairs of the flags a list of `system` can show: the common ones, then
    FIDE's for a FIDE list ('fide', 'fide-rapid', 'fide-blitz', their scenarios), FFE's for an
    FFE list, and the flag of a player without the list's ID (`lists.no_id_flag`)."""
    own = _FIDE_FLAGS if system.startswith("fide") else _FFE_FLAGS if system.startswith("ffe") else []
    marker = no_id_flag(system)
    no_id = [([marker], f"{_NO_ID_LABEL[marker]}: rated from files that gave none; not ranked")] if marker else []
    return [*_COMMON_FLAGS, *own, *no_id]


def html_columns(system: str) -> list[tuple[str, str, bool]]:
    """`HTML_COLUMNS` of a list of `system`: the next period's K ('K next', `rating_lists.k_next`) is
    a FIDE list's alone, other systems have none."""
    return [c for c in HTML_COLUMNS if c[0] != "k_next" or system.startswith("fide")]


def title_order(titles: list[str]) -> list[str]:
    """`titles` (distinct, no empty one) in FIDE's order (`TITLE_ORDER`), other titles after
    them by name."""
    rank = {t: i for i, t in enumerate(TITLE_ORDER)}
    return sorted(titles, key=lambda t: (rank.get(t, len(rank)), t))


_NO_ID_LABEL = {"no-fide-id": "no FIDE ID", "no-licence": "no FFE licence"}

# JSON row: the HTML_COLUMNS values, then the player's page (or null), then 1 when the player
# can be ranked (active, with the list's ID), then 1 when the player lacks the list's ID.
_EXTRA = ["link", "rankable", "no_id"]


def list_html(df: pl.DataFrame, system: str, list_date: dt.date, player_links: dict[int, str] | None) -> str:
    """The page of the list `df` (columns of `lists.rating_list`, in its order: ranked section
    first) of `system` at `list_date`. `player_links` maps player_id to a relative href."""
    shown = html_columns(system)
    keys = [k for k, _, _ in shown]
    links = pl.DataFrame(
        {"player_id": list((player_links or {}).keys()), "link": list((player_links or {}).values())},
        schema={"player_id": pl.Int32, "link": pl.String},
    )
    rows = (
        # the generic Elo's one decimal (`lists.published`) as its text: '2590.0' stays so in the page
        # (a JSON number would show 2590), and the page's sort and ranks read numbers from text
        df.with_columns(pl.col.player_id.cast(pl.Int32), pl.col(pl.Decimal).cast(pl.String))
        .join(links, on="player_id", how="left", maintain_order="left")
        .select(
            *keys,
            "link",
            (~pl.col.inactive & ~pl.col.no_id).cast(pl.Int8).alias("rankable"),
            pl.col.no_id.cast(pl.Int8),
        )
        .rows()
    )
    columns = [{"key": k, "label": h, "num": n} for k, h, n in shown]
    marker = no_id_flag(system)
    return render(
        "list.html.j2",
        title=f"{system_label(system)} rating list {list_date}",
        system_label=system_label(system),
        list_date=list_date.isoformat(),
        list_year=list_date.year,
        n_players=df.height,
        n_unranked_id=int(df["no_id"].sum()),
        n_no_birth_year=int(df["birth_year"].null_count()),
        no_id_label=_NO_ID_LABEL.get(marker, ""),
        no_id_flag=marker,
        flag_legend=flag_legend(system),
        k_next="k_next" in keys,
        federations=sorted(f for f in df["federation"].unique().to_list() if f),
        titles=title_order([t for t in df["title"].unique().to_list() if t]),
        columns=columns,
        columns_json=json_for_script(columns),
        extra_json=json_for_script(_EXTRA),
        data_json=json_for_script(rows),
    )
