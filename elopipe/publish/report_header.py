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

from elopipe.publish.rules_legend import AppliedRules, applied_rules_of, rules_title

# A city written 'Madrid ESP' (PGN's Site tag: "City, Region" with the IOC code) or
# 'Frankfurt (Main) /GER' (a TRF 022 field) carries the federation: the header shows the city
# alone and that code as the federation, unless the file's federation (032, EventCountry) says
# another, when the city stays as written.
_CITY_FED = r"^(.+?)[\s,/]+([A-Z]{3})$"

# One row per report asked for (`rid`, in `$tids`: an event and its parts, PARTS), as the
# event's own query would give it
_HEADER_SQL = f"""
WITH given AS (
    SELECT *, coalesce(event_id, tournament_id) AS rid, nullif(trim(federation), '') AS fed_given,
           nullif(regexp_extract(trim(city), '{_CITY_FED}', 2), '') AS city_fed
    FROM tournaments WHERE coalesce(event_id, tournament_id) IN (SELECT unnest($tids::INTEGER[]))
),
parts AS (
    SELECT * REPLACE (
        CASE WHEN city_fed IS NOT NULL AND upper(COALESCE(fed_given, city_fed)) = city_fed
             THEN regexp_extract(trim(city), '{_CITY_FED}', 1) ELSE city END AS city,
        COALESCE(fed_given, city_fed) AS federation)
    FROM given
),
tc AS (  -- PGN: the time control most games carry
    SELECT p.rid, g.time_control AS tc_value FROM canonical_games g JOIN parts p USING (tournament_id)
    WHERE nullif(trim(g.time_control), '') IS NOT NULL
    GROUP BY 1, 2 QUALIFY row_number() OVER (PARTITION BY p.rid ORDER BY count(*) DESC, g.time_control) = 1
),
files AS (
    SELECT p.rid, string_agg(DISTINCT regexp_extract(f.path, '[^/\\\\]+$'), ', ') AS files
    FROM source_files f JOIN (SELECT DISTINCT rid, file_id FROM parts) p USING (file_id) GROUP BY 1
)
SELECT
    parts.rid,
    first(name ORDER BY tournament_id) AS name,
    string_agg(DISTINCT nullif(trim(city), ''), ' / ') AS city,
    string_agg(DISTINCT nullif(trim(federation), ''), ' / ') AS federation,
    min(COALESCE(start_date, first_day)) AS start_date,
    max(COALESCE(end_date, last_day)) AS end_date,
    max(COALESCE(rounds, (SELECT max(round) FROM canonical_games g WHERE g.tournament_id = parts.tournament_id)))
        AS rounds,
    COALESCE(any_value(nullif(trim(time_control), '')), any_value(tc.tc_value)) AS time_control,
    any_value(rate_class) AS rate_class,
    string_agg(DISTINCT nullif(trim(chief_arbiter), ''), ' / ') AS chief_arbiter,
    -- 112 may be given once or several times (a JSON text or list)
    string_agg(DISTINCT nullif(trim(CASE json_type(extra, '$.headers."112"')
        WHEN 'ARRAY' THEN array_to_string(json_extract_string(extra, '$.headers."112"[*]'), ', ')
        ELSE json_extract_string(extra, '$.headers."112"') END), ''), ' / ') AS deputy_arbiter,
    string_agg(DISTINCT nullif(trim(tournament_type), ''), ' / ') AS tournament_type,
    any_value(files.files) AS files
FROM parts LEFT JOIN tc USING (rid) LEFT JOIN files USING (rid)
GROUP BY parts.rid
"""

#: (key of `report_header`, label shown), in the order a report shows them
HEADER_FIELDS: list[tuple[str, str]] = [
    ("federation", "Federation"),
    ("city", "City"),
    ("dates", "Dates"),
    ("rounds", "Rounds"),
    ("time_control", "Time control"),
    ("rate_class", "Rate of play"),
    ("rules", "Rating rules"),
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


def _rates_of_play(con: duckdb.DuckDBPyConnection, tournament_ids: list[int], system: str) -> dict[int, str]:
    """{tournament_id: the rate of play the rating of `system` gave the event's games and where it
    came from} (table ``rate_of_play``, `elopipe.read.rate_evidence`), the most games first; an
    event that system recorded none for (another system, or a store rated before the table) is
    absent."""
    try:
        rows = con.execute(
            """SELECT e.rid, r.rate_class, r.source, r.evidence, r.n_games FROM rate_of_play r
               JOIN (SELECT coalesce(event_id, tournament_id) AS rid, tournament_id FROM tournaments) e
                 USING (tournament_id)
               WHERE r.system = ? AND e.rid IN (SELECT unnest(?::INTEGER[]))
               ORDER BY e.rid, r.n_games DESC, r.source""",
            [system, sorted(set(tournament_ids))],
        ).fetchall()
    except duckdb.CatalogException:  # a store older than the table, opened read-only
        return {}
    by_event: dict[int, list[tuple[str | None, str, str | None, int]]] = {}
    for rid, *row in rows:
        by_event.setdefault(int(rid), []).append((row[0], row[1], row[2], row[3]))
    out: dict[int, str] = {}
    for rid, event_rows in by_event.items():
        parts = []
        for cls, source, evidence, n in event_rows:
            what = cls or "never rated"
            where = _SOURCE_WORDS.get(source, source)
            text = f"{what}, {where}" + (f" ({evidence})" if evidence and source != "assumed" else "")
            if source == "assumed":
                text += " (no time control in the files, and neither the name, the site nor the rounds a day say it)"
            parts.append(text + (f": {n} games" if len(event_rows) > 1 else ""))
        if parts:
            out[rid] = "; ".join(parts)
    return out


def report_header(con: duckdb.DuckDBPyConnection, tournament_id: int, system: str | None = None) -> dict[str, str]:
    """{key: text} of the event's header, keys as `HEADER_FIELDS` plus 'name'; a field the files
    do not give is absent (never an empty or placeholder value). `dates` reads
    'YYYY-MM-DD – YYYY-MM-DD' (one date when the event lasted a day). With `system`, 'rate_class'
    says the rate of play that system's rating gave the games and where it came from (time
    control, name, site, rounds a day, or assumed: `_rates_of_play`) and, for a FIDE system,
    'rules' names the regulations its rating applied (`rules_legend.rules_title`)."""
    return report_headers(con, [tournament_id], system).get(tournament_id, {})


def report_headers(
    con: duckdb.DuckDBPyConnection,
    tournament_ids: list[int],
    system: str | None = None,
    rules: dict[int, AppliedRules] | None = None,
) -> dict[int, dict[str, str]]:
    """`report_header` of each of `tournament_ids`, in three queries: {tournament_id: header}; an
    event with no part is absent. `rules`: the rules applied to each (`applied_rules_of`; None:
    read them when `system` is given)."""
    tids = sorted(set(tournament_ids))
    cur = con.execute(_HEADER_SQL, {"tids": tids})
    names = [d[0] for d in cur.description]
    rows = cur.fetchall()  # before the next query: `execute` returns the connection itself
    rates = _rates_of_play(con, tids, system) if system is not None else {}
    if rules is None:
        rules = applied_rules_of(con, tids, system) if system is not None else {}
    out: dict[int, dict[str, str]] = {}
    for row in rows:
        values = dict(zip(names, row, strict=True))
        rid = int(values.pop("rid"))
        start, end = values.pop("start_date"), values.pop("end_date")
        if start or end:
            values["dates"] = str(start or end) if start == end or not (start and end) else f"{start} – {end}"
        if system is not None:
            values["rate_class"] = rates.get(rid) or values.get("rate_class")
            values["rules"] = rules_title(rules[rid]) if rid in rules else None
        out[rid] = {k: str(v) for k, v in values.items() if v is not None and str(v).strip()}
    return out
