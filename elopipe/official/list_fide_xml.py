"""Reading FIDE's XML lists (``<playerslist><player><fideid>…``), standard-only or combined
(``rapid_rating``/``blitz_rating`` tags), in DuckDB: no Python loop per player. The rows are
those of the TXT reader (`list_fide_txt.fide_long`)."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import polars as pl

from elopipe.official.list_base import SKIP_SCHEMA, ListFormatError, register, single_rate
from elopipe.official.list_faults import fide_checked
from elopipe.official.list_fide_txt import fide_long

_XML_TAGS = {
    "fideid": "id",
    "name": "name",
    "country": "fed",
    "sex": "sex",
    "title": "tit",
    "w_title": "wtit",
    "o_title": "otit",
    "foa_title": "foa",
    "rating": "x_rating",
    "games": "x_games",
    "k": "x_k",
    "rapid_rating": "r_rating",
    "rapid_games": "r_games",
    "rapid_k": "r_k",
    "blitz_rating": "b_rating",
    "blitz_games": "b_games",
    "blitz_k": "b_k",
    "birthday": "bday",
    "flag": "flag",
}


def _xml_lines(p: Path) -> pl.DataFrame:
    """The XML file's lines as 'ln' (1-based line) and 'line' (NULL for a blank one), read by
    Polars from the path named (`glob=False`: DuckDB's `read_csv` would expand `*`, `?`, `[...]`
    in it and read other files)."""
    lines = pl.read_csv(
        p.absolute(), glob=False, has_header=False, separator="\x1f", quote_char=None, schema={"line": pl.Utf8}
    )
    return lines.with_row_index("ln", offset=1)


def _xml_pieces_sql() -> str:
    """The XML file's text (`_xml_lines`, registered as `_xml_lines`) cut at each <player>: (ln:
    the line the piece starts on, player_no: the <player> it belongs to, 0 before the first, piece)."""
    return """
        WITH raw AS (SELECT ln, line FROM _xml_lines),
        pieces AS (
            SELECT ln, unnest(string_split(replace(line, '<player>', chr(30) || '<player>'), chr(30))) AS piece
            FROM raw
        ),
        numbered AS (
            SELECT row_number() OVER (ORDER BY ln) AS pn, ln, piece FROM pieces
        )
        SELECT ln, sum(CASE WHEN contains(piece, '<player>') THEN 1 ELSE 0 END)
                   OVER (ORDER BY pn ROWS UNBOUNDED PRECEDING) AS player_no, pn, piece
        FROM numbered
    """


def xml_cut_short(p: Path) -> bool:
    """The XML list does not end with its closing tag (a download or copy cut short)."""
    with open(p, "rb") as fh:
        fh.seek(max(0, p.stat().st_size - 256))
        tail = fh.read().rstrip(b" \t\r\n\x00").lower()
    return not tail.endswith(b"</playerslist>")


# the five entities XML defines, and character references in decimal or hexadecimal
_ENTITY = re.compile(r"&(?:(amp|lt|gt|quot|apos)|#([0-9]{1,7})|#[xX]([0-9a-fA-F]{1,6}));")
_NAMED = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'"}


def _char(m: re.Match[str]) -> str:
    if m.group(1):
        return _NAMED[m.group(1)]
    code = int(m.group(2)) if m.group(2) else int(m.group(3), 16)
    # a reference to no character XML allows (NUL, a surrogate, beyond U+10FFFF) stays as written
    if code == 0 or 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
        return m.group(0)
    return chr(code)


def xml_unescape(text: str) -> str:
    """`text` with XML's escapes replaced in one pass (XML 1.0, 4.1 and 4.6): the five named
    entities and character references (`&#252;`, `&#xFC;` -> 'ü'), so that `&amp;#252;` is the
    text `&#252;`. A reference to a character XML does not allow is left as written; control
    characters it yields are removed later with the list's other escape codes
    (`list_import._clean_names`)."""
    return _ENTITY.sub(_char, text)


def read_fide_xml(con: duckdb.DuckDBPyConnection, p: Path, system: str) -> tuple[duckdb.DuckDBPyRelation, pl.DataFrame]:
    """FIDE XML as (rows, skipped rows): lines are split at each <player>, every <tag>value</tag>
    is extracted with a regular expression, and a running count of <player> opens groups them."""
    single = single_rate(p.name, system)
    register(con, "_xml_lines", _xml_lines(p))
    tags = con.sql(
        f"""
        WITH grouped AS ({_xml_pieces_sql()}),
        kv AS (
            SELECT player_no, ln,
                   unnest(regexp_extract_all(piece, '<([a-z_]+)>([^<]*)</[a-z_]+>', 1)) AS tag,
                   unnest(regexp_extract_all(piece, '<([a-z_]+)>([^<]*)</[a-z_]+>', 2)) AS val
            FROM grouped WHERE player_no > 0
        )
        SELECT player_no, ln, tag, NULLIF(trim(val), '') AS val FROM kv
        -- every <player>, even one with no whole tag (a cut file): its row is then a skip
        UNION ALL SELECT player_no, ln, '' AS tag, NULL AS val FROM grouped WHERE contains(piece, '<player>')
        """
    )
    register(con, "_xml_kv", tags)
    present_tags = {r[0] for r in con.execute("SELECT DISTINCT tag FROM _xml_kv").fetchall()}
    if "fideid" not in present_tags:
        raise ListFormatError(f"{p}: not a FIDE XML list (no <fideid> tags)")
    rename = dict(_XML_TAGS)
    rename.update({"rating": f"{single}_rating", "games": f"{single}_games", "k": f"{single}_k"})
    sel = ", ".join(f"max(val) FILTER (WHERE tag = '{t}') AS {rename[t]}" for t in sorted(present_tags) if t in rename)
    present = {rename[t] for t in present_tags if t in rename}
    # a <player> without a <fideid> tag still has its line: the rows are grouped by player
    wide_df = con.sql(
        f"SELECT player_no, min(ln) AS line_no, {sel} FROM _xml_kv GROUP BY player_no ORDER BY player_no"
    ).pl()
    con.unregister("_xml_kv")
    wide_df, faults = fide_checked(wide_df, present)
    skips = pl.DataFrame(schema=SKIP_SCHEMA)
    if faults.height:  # the text of the faulty <player> elements, read again (a fault is rare)
        register(con, "_xml_faults", faults.select("player_no", "line_no", "_reason", "_detail"))
        skips = con.sql(
            f"""
            WITH grouped AS ({_xml_pieces_sql()})
            SELECT CAST(f.line_no AS BIGINT) AS line, f._reason AS reason, f._detail AS detail,
                   left(trim(string_agg(g.piece, ' ' ORDER BY g.pn)), 500) AS raw
            FROM _xml_faults f JOIN grouped g USING (player_no)
            GROUP BY f.player_no, f.line_no, f._reason, f._detail ORDER BY line, f.player_no
            """
        ).pl()
        con.unregister("_xml_faults")
    con.unregister("_xml_lines")
    wide_df = wide_df.drop("player_no")
    # XML text is escaped (&amp;, &#252;); names are the only field where it shows
    if "name" in present:
        names = wide_df.get_column("name")
        distinct = names.filter(names.str.contains("&", literal=True)).unique().to_list()
        if distinct:
            wide_df = wide_df.with_columns(pl.col("name").replace({v: xml_unescape(v) for v in distinct}))
    return fide_long(con, wide_df, present), skips
