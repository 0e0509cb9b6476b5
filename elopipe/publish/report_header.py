"""The header of a tournament report: what the event's file says about it.

TRF header records (FIDE TRF16 / TRF-26, `../shared/specs/trf-format.md`): 012 name, 022 city,
032 federation, 042 / 052 start and end dates, 102 chief arbiter, 112 deputy chief arbiter(s),
122 time control, 142 / XXR rounds; PGN tags: Event, Site, EventDate, EventRounds, EventCountry,
TimeControl. The store keeps them in `tournaments` (112 in `extra.headers`, TimeControl on
each game). For an event held in several files, the parts' values are combined. A city that
ends with its federation's code ('Madrid ESP', PGN's Site convention) is shown without it, the
code as the federation when the file gives none (`_CITY_FED`).
"""

from __future__ import annotations

import duckdb

from elopipe.identity.events import PARTS

# A city written 'Madrid ESP' (PGN's Site tag: "City, Region" with the IOC code) or
# 'Frankfurt (Main) /GER' (a TRF 022 field) carries the federation: the header shows the city
# alone and that code as the federation, unless the file's federation (032, EventCountry) says
# another, when the city stays as written.
_CITY_FED = r"^(.+?)[\s,/]+([A-Z]{3})$"

_HEADER_SQL = f"""
WITH given AS (
    SELECT *, nullif(trim(federation), '') AS fed_given,
           nullif(regexp_extract(trim(city), '{_CITY_FED}', 2), '') AS city_fed
    FROM tournaments WHERE tournament_id IN {PARTS}
),
parts AS (
    SELECT * REPLACE (
        CASE WHEN city_fed IS NOT NULL AND upper(COALESCE(fed_given, city_fed)) = city_fed
             THEN regexp_extract(trim(city), '{_CITY_FED}', 1) ELSE city END AS city,
        COALESCE(fed_given, city_fed) AS federation)
    FROM given
),
tc AS (  -- PGN: the time control most games carry
    SELECT time_control FROM canonical_games
    WHERE tournament_id IN (SELECT tournament_id FROM parts) AND nullif(trim(time_control), '') IS NOT NULL
    GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1
)
SELECT
    (SELECT name FROM parts ORDER BY tournament_id LIMIT 1) AS name,
    string_agg(DISTINCT nullif(trim(city), ''), ' / ') AS city,
    string_agg(DISTINCT nullif(trim(federation), ''), ' / ') AS federation,
    min(COALESCE(start_date, first_day)) AS start_date,
    max(COALESCE(end_date, last_day)) AS end_date,
    max(COALESCE(rounds, (SELECT max(round) FROM canonical_games g WHERE g.tournament_id = parts.tournament_id)))
        AS rounds,
    COALESCE(any_value(nullif(trim(time_control), '')), (SELECT time_control FROM tc)) AS time_control,
    any_value(rate_class) AS rate_class,
    string_agg(DISTINCT nullif(trim(chief_arbiter), ''), ' / ') AS chief_arbiter,
    -- 112 may be given once or several times (a JSON text or list)
    string_agg(DISTINCT nullif(trim(CASE json_type(extra, '$.headers."112"')
        WHEN 'ARRAY' THEN array_to_string(json_extract_string(extra, '$.headers."112"[*]'), ', ')
        ELSE json_extract_string(extra, '$.headers."112"') END), ''), ' / ') AS deputy_arbiter,
    string_agg(DISTINCT nullif(trim(tournament_type), ''), ' / ') AS tournament_type,
    (SELECT string_agg(DISTINCT regexp_extract(f.path, '[^/\\\\]+$'), ', ') FROM source_files f
      WHERE f.file_id IN (SELECT file_id FROM parts)) AS files
FROM parts
"""

#: (key of `report_header`, label shown), in the order a report shows them
HEADER_FIELDS: list[tuple[str, str]] = [
    ("federation", "Federation"),
    ("city", "City"),
    ("dates", "Dates"),
    ("rounds", "Rounds"),
    ("time_control", "Time control"),
    ("rate_class", "Rate of play"),
    ("chief_arbiter", "Chief arbiter"),
    ("deputy_arbiter", "Deputy arbiter"),
    ("tournament_type", "Type"),
    ("files", "Source"),
]


_SOURCE_WORDS = {
    "time_control": "from the time control",
    "name": "from the event's name",
    "site": "from the site",
    "rounds_per_day": "from the rounds played in a day",
    "assumed": "assumed",
}


def _rate_of_play(con: duckdb.DuckDBPyConnection, tournament_id: int, system: str) -> str | None:
    """The rate of play the rating of `system` gave the event's games and where it came from
    (table ``rate_of_play``, `elopipe.read.rate_evidence`), the most games first, or None
    when that system recorded none (another system, or a store rated before the table)."""
    try:
        rows = con.execute(
            f"""SELECT rate_class, source, evidence, n_games FROM rate_of_play
                WHERE system = ? AND tournament_id IN {PARTS} ORDER BY n_games DESC, source""",
            [system, tournament_id],
        ).fetchall()
    except duckdb.CatalogException:  # a store older than the table, opened read-only
        return None
    parts = []
    for cls, source, evidence, n in rows:
        what = cls or "never rated"
        where = _SOURCE_WORDS.get(source, source)
        text = f"{what}, {where}" + (f" ({evidence})" if evidence and source != "assumed" else "")
        if source == "assumed":
            text += " (no time control in the files, and neither the name, the site nor the rounds a day say it)"
        parts.append(text + (f": {n} games" if len(rows) > 1 else ""))
    return "; ".join(parts) or None


def report_header(con: duckdb.DuckDBPyConnection, tournament_id: int, system: str | None = None) -> dict[str, str]:
    """{key: text} of the event's header, keys as `HEADER_FIELDS` plus 'name'; a field the files
    do not give is absent (never an empty or placeholder value). `dates` reads
    'YYYY-MM-DD – YYYY-MM-DD' (one date when the event lasted a day). With `system`, 'rate_class'
    says the rate of play that system's rating gave the games and where it came from (time
    control, name, site, rounds a day, or assumed: `_rate_of_play`)."""
    cur = con.execute(_HEADER_SQL, [tournament_id])
    rows = cur.fetchall()
    if not rows:
        return {}
    values = dict(zip([d[0] for d in cur.description], rows[0], strict=True))
    start, end = values.pop("start_date"), values.pop("end_date")
    if start or end:
        values["dates"] = str(start or end) if start == end or not (start and end) else f"{start} – {end}"
    if system is not None:
        values["rate_class"] = _rate_of_play(con, tournament_id, system) or values.get("rate_class")
    return {k: str(v) for k, v in values.items() if v is not None and str(v).strip()}
