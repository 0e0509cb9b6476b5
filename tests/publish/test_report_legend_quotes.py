"""The report's legend quotes the words its rows say: it said 'first rating N, published on the list
of DATE' where the rows read 'first rating 1435, published on the 2018-07-01 list (6 games pooled)'."""

from __future__ import annotations

import datetime as dt
import re

import polars as pl

from elopipe.publish.participants import ru_note
from elopipe.publish.rules_legend import ru_text


def _quoted_forms() -> list[re.Pattern[str]]:
    """The legend's quoted forms, N, K and DATE standing for a number and a date."""
    quoted = re.findall(r"'([^']*)'", ru_text(None))
    assert quoted
    forms = []
    for q in quoted:
        rx = re.escape(q).replace("DATE", r"\d{4}-\d{2}-\d{2}").replace("N", r"\d+").replace("K", r"\d+")
        forms.append(re.compile(rx))
    return forms


def test_the_legend_quotes_the_rows_words() -> None:
    rows = pl.DataFrame(
        {
            "unrated": [True, True],
            "score": [3.0, 2.0],
            "pooled_games": [6, 4],
            "ru_provisional": [None, 1450],
            "first_rating": [1435, None],
            "list_date": [dt.date(2018, 7, 1), dt.date(2018, 7, 1)],
            "no_rating_reason": [None, None],
            "rules_version": ["V2017", "V2017"],
        }
    )
    notes = rows.select(ru_note().alias("note")).get_column("note").to_list()
    assert notes == [
        "first rating 1435, published on the 2018-07-01 list (6 games pooled)",
        "Ru 1450 so far, 4 games pooled",
    ]
    forms = _quoted_forms()
    for note in notes:
        assert any(f.fullmatch(note) for f in forms), (note, [f.pattern for f in forms])
