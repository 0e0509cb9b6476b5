"""Reading FIDE's fixed-width TXT lists (``standard_*.txt``, ``rapid_*.txt``, ``blitz_*.txt`` and
the combined ``players_list_foa.txt``) with Polars' vectorised reader, never a Python loop per row.

Column boundaries are taken from the header line (``ID Number``, ``Name``, ``Fed``, ``Sex``,
``Tit``, ``WTit``, ``OTit``, ``FOA``, ``SRtng``/``RRtng``/``BRtng`` or a month code such as
``MAR24``, ``SGm``, ``SK``, ``B-day``, ``Flag``), so layout changes between years are absorbed.
Positions count characters: each line is read as UTF-8, or as CP1252/Latin-1 when that line is
not valid UTF-8 (older lists, a stray byte), with a warning naming it. Blank lines are ignored:
neither rows nor skips. `fide_long` turns the wide rows of a FIDE list (TXT or XML) into one row
per player and rate class, the `official_lists` columns (`list_import`'s docstring); the FIDE XML
reader shares it.
"""

from __future__ import annotations

import datetime as dt
import io
import re
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from elopipe.official.list_base import MONTH_CODE, MONTHS, ListFormatError, clip_raw, register, single_rate
from elopipe.official.list_faults import fide_checked, overflow_pattern
from elopipe.read.control_chars import escape_controls
from elopipe.read.textio import decode_single_byte
from elopipe.read.trf.codes import TITLES

_TXT_LABELS = {
    "id number": "id",
    "id": "id",
    "name": "name",
    "fed": "fed",
    "sex": "sex",
    "tit": "tit",
    "wtit": "wtit",
    "otit": "otit",
    "foa": "foa",
    "srtng": "s_rating",
    "sgm": "s_games",
    "sk": "s_k",
    "rrtng": "r_rating",
    "rgm": "r_games",
    "rk": "r_k",
    "brtng": "b_rating",
    "bgm": "b_games",
    "bk": "b_k",
    "gms": "x_games",  # per-type files since ~2015: '... FOA JAN23 Gms K  B-day Flag'
    "gm": "x_games",
    "k": "x_k",
    "b-day": "bday",
    "bday": "bday",
    "flag": "flag",
}


def txt_columns(header: str) -> list[tuple[str, int, int | None]]:
    """(field, 1-based start, width or None for the last) from the header line's labels."""
    found: list[tuple[str, int]] = []
    for m in re.finditer(r"ID Number|\S+", header):
        label = m.group(0).lower()
        if label in _TXT_LABELS:
            found.append((_TXT_LABELS[label], m.start()))
        elif MONTH_CODE.match(m.group(0)):  # old standard lists head the rating 'SEP15'
            found.append(("x_rating", m.start()))
        elif label.endswith("gm"):
            found.append(("x_games", m.start()))
        elif label.endswith("k") and len(label) == 2:
            found.append(("x_k", m.start()))
    out = []
    for i, (name, start) in enumerate(found):
        end = found[i + 1][1] if i + 1 < len(found) else None
        out.append((name, start + 1, None if end is None else end - start))
    return out


def read_fide_txt(
    con: duckdb.DuckDBPyConnection, p: Path, head: str, system: str
) -> tuple[duckdb.DuckDBPyRelation, pl.DataFrame, int, dt.date | None, list[str]]:
    """(rows, skipped rows, unrated lines, the header's month code as a date, warnings: the
    lines not valid UTF-8, read as CP1252/Latin-1)."""
    header = head.splitlines()[0] if head else ""
    cols = txt_columns(header)
    names = {c[0] for c in cols}
    if "id" not in names or "name" not in names:
        shown = escape_controls(header[:80])
        raise ListFormatError(f"{p}: not a FIDE list (header lacks 'ID Number' and 'Name'): {shown}")
    date_hint = None
    m = next((MONTH_CODE.match(t) for t in header.split() if MONTH_CODE.match(t)), None)
    if m and m.group(1).lower() in MONTHS:
        date_hint = dt.date(2000 + int(m.group(2)), MONTHS[m.group(1).lower()], 1)
    single = single_rate(p.name, system)
    rename = {"x_rating": f"{single}_rating", "x_games": f"{single}_games", "x_k": f"{single}_k"}
    present = {rename.get(c[0], c[0]) for c in cols}
    lines, warnings = _read_lines(p)
    total = lines.height
    rated = [  # a rating of 0 is none (FIDE writes 0 for an unrated class)
        pl.col("line").str.slice(start - 1, width).str.strip_chars().str.strip_chars_start("0") != ""
        for name, start, width in cols
        if rename.get(name, name).endswith("_rating")
    ]
    # a line with a field that runs into the next column (its cells are not what they seem: a
    # rating pushed out of its column would make it look unrated) is found once, in the whole file
    overflow = overflow_pattern(cols)
    spills = (pl.col("line").str.contains(overflow) if overflow else pl.lit(False)).alias("_spills")
    if rated:
        # most of the combined list has no rating of any kind: drop those lines first, but keep
        # a line without a FIDE ID that is a number, or a spilling one (reported, never dropped)
        start, width = next((c[1], c[2]) for c in cols if c[0] == "id")
        fid = pl.col("line").str.slice(start - 1, width).str.strip_chars().cast(pl.Int64, strict=False)
        flags = lines.select("line").select(spills, (pl.any_horizontal(rated) | fid.is_null()).alias("_keep"))
        lines = lines.with_columns(flags["_spills"]).filter(flags["_keep"] | flags["_spills"])
    else:
        lines = lines.with_columns(spills)
    # the cells are cut from a frame of the one column: with line_no beside it, Polars takes
    # half as long again (measured on the 1.9M-line bench list)
    wide = (
        lines.select("line")
        .select(
            pl.col("line").str.slice(start - 1, width).str.strip_chars().replace("", None).alias(rename.get(n, n))
            for n, start, width in cols
        )
        .with_columns(lines["line_no"], lines["line"], lines["_spills"])
    )
    kept, faults = fide_checked(wide, present, pl.col("_spills"))
    skips = faults.select(
        pl.col("line_no").cast(pl.Int64).alias("line"), pl.col("_reason").alias("reason"),
        pl.col("_detail").alias("detail"), clip_raw(pl.col("line")).alias("raw"),
    )  # fmt: skip
    return fide_long(con, kept.drop("line", "_spills"), present), skips, total - lines.height, date_hint, warnings


def _read_lines(p: Path) -> tuple[pl.DataFrame, list[str]]:
    """(lines, warnings). The lines after the header, as 'line_no' UInt32 (1-based line of the
    file) and 'line' Utf8 (Polars' reader: several times less CPU than slicing in SQL); blank
    lines left out. Each line is decoded by itself: UTF-8 when it is valid UTF-8, else as
    CP1252/Latin-1 (`textio.decode_single_byte`; older lists, or one stray byte in a UTF-8 list),
    so a stray byte costs its own line's accents, never the whole file's columns; the warnings
    name the lines read so."""
    opts: dict[str, Any] = {
        "has_header": False,
        "separator": "\x1f",
        "quote_char": None,
        "skip_rows": 1,
        "schema": {"line": pl.Utf8},
    }
    warnings: list[str] = []
    try:
        df = pl.read_csv(p.absolute(), glob=False, **opts)  # the file named: never a pattern
    except (pl.exceptions.ComputeError, UnicodeDecodeError):
        df, warnings = _read_lines_mixed(p, opts)
    # a blank line is a null row: the row index is the line's place in the file
    df = df.with_row_index("line_no", offset=2)
    return df.filter(pl.col("line").str.strip_chars() != ""), warnings


def _read_lines_mixed(p: Path, opts: dict[str, Any]) -> tuple[pl.DataFrame, list[str]]:
    """`_read_lines` for a file that is not valid UTF-8 as a whole: read lossily (an invalid
    sequence becomes U+FFFD), then only the lines that hold U+FFFD are decoded again from their
    bytes, each by itself (a Python step per such line only, not per line of the file)."""
    data = p.read_bytes()
    df = pl.read_csv(io.BytesIO(data), encoding="utf8-lossy", **opts)
    bad = df.with_row_index("i").filter(pl.col("line").str.contains("\ufffd", literal=True))["i"].to_list()
    if not bad:
        return df, []
    line = pl.col("line")
    beyond_ascii = ~line.str.contains("\ufffd", literal=True) & (line.str.len_bytes() != line.str.len_chars())
    if not df.select(beyond_ascii.any()).item():  # single-byte text throughout (older lists): one decode
        text, enc = decode_single_byte(data)
        return pl.read_csv(io.BytesIO(text.encode("utf-8")), **opts), [_not_utf8(p, [i + 2 for i in bad], {enc})]
    raw = data.split(b"\n")  # raw[k] is line k + 1 of the file; df's row i is line i + 2
    fixed: list[str] = []
    relined: list[int] = []
    decoded_as: set[str] = set()
    for i in bad:
        line = raw[i + 1].removesuffix(b"\r")
        try:  # a U+FFFD that the file wrote itself, in a valid UTF-8 line
            fixed.append(line.decode("utf-8"))
        except UnicodeDecodeError:
            text, enc = decode_single_byte(line)
            fixed.append(text)
            relined.append(i + 2)
            decoded_as.add(enc)
    lines = df["line"].scatter(bad, fixed)
    return df.with_columns(lines), [_not_utf8(p, relined, decoded_as)] if relined else []


def _not_utf8(p: Path, relined: list[int], encodings: set[str]) -> str:
    """The warning naming the lines (1-based) read as CP1252/Latin-1, the first ten of them."""
    enc = " or ".join(sorted({"cp1252": "CP1252", "latin-1": "Latin-1"}[e] for e in encodings))
    if len(relined) == 1:
        return f"{p.name}: line {relined[0]} is not valid UTF-8, read as {enc}"
    more = f" and {len(relined) - 10} more" if len(relined) > 10 else ""
    shown = ", ".join(map(str, relined[:10]))
    return f"{p.name}: {len(relined)} lines are not valid UTF-8, read as {enc}: lines {shown}{more}"


_INT = "TRY_CAST({c} AS INTEGER)"  # cells are trimmed, '' already NULL


def fide_long(
    con: duckdb.DuckDBPyConnection, rel: duckdb.DuckDBPyRelation | pl.DataFrame, present: set[str]
) -> duckdb.DuckDBPyRelation:
    """One row per player and system from a wide FIDE relation or frame (columns as in _TXT_LABELS,
    and ``line_no``, the player's line in the file: the rows' ``line``).

    The file is read once into a temporary table (rows with some rating only: most of the
    combined list has none), then split per rate class."""
    ratings = [f"{x}_rating" for x in "srb" if f"{x}_rating" in present]
    register(con, "_fide_wide_rel", rel)
    keep = " OR ".join(f"{r} IS NOT NULL" for r in ratings) or "FALSE"
    con.execute(f"CREATE OR REPLACE TEMP TABLE _fide_wide AS SELECT * FROM _fide_wide_rel WHERE {keep}")
    con.unregister("_fide_wide_rel")

    def col(c: str) -> str:
        return c if c in present else "NULL"

    parts = []
    for prefix, system in (("s", "fide"), ("r", "fide-rapid"), ("b", "fide-blitz")):
        if f"{prefix}_rating" not in present:
            continue
        rating = f"NULLIF({_INT.format(c=f'{prefix}_rating')}, 0)"
        k = f"NULLIF({_INT.format(c=col(f'{prefix}_k'))}, 0)"
        if prefix == "s":
            ever = f"CASE WHEN {rating} >= 2400 OR {k} = 10 THEN TRUE WHEN {k} IN (20, 40) THEN FALSE END"
        else:
            ever = f"CASE WHEN {rating} >= 2400 THEN TRUE END"
        parts.append(
            f"SELECT '{system}' AS system, TRY_CAST({col('id')} AS BIGINT) AS fide_id,"
            f" NULL::VARCHAR AS national_id, {col('name')} AS name, upper({col('fed')}) AS federation,"
            f" CASE upper({col('sex')}) WHEN 'M' THEN 'm' WHEN 'F' THEN 'w' WHEN 'W' THEN 'w' END AS sex,"
            f" {_title_sql(col('tit'))} AS title, {_title_sql(col('wtit'))} AS w_title, {col('otit')} AS o_title,"
            f" {col('foa')} AS foa_title, {rating} AS rating, NULL::VARCHAR AS rating_flag,"
            f" {_INT.format(c=col(f'{prefix}_games'))} AS games, {k} AS k,"
            f" NULLIF({_INT.format(c=col('bday'))}, 0) AS birth_year, lower({col('flag')}) AS flag,"
            f" {ever} AS ever_2400, NULL::VARCHAR AS category, CAST(line_no AS BIGINT) AS line"
            f" FROM _fide_wide WHERE {rating} IS NOT NULL"
        )
    if not parts:
        raise ListFormatError("FIDE list without a rating column (SRtng, RRtng, BRtng or a month code)")
    return con.sql(" UNION ALL ".join(parts))


def _title_sql(column: str) -> str:
    """SQL for a FIDE title column as the list wrote it (`GM`, legacy `g m f c wg wm wf wc`, the
    XML's `WG WM WF WC`), as GM IM FM CM WGM WIM WFM WCM (`read.trf.codes.TITLES`, trf-format.md §4);
    any other value kept as written."""
    if column == "NULL":
        return column
    cases = " ".join(f"WHEN '{form}' THEN '{title}'" for form, title in TITLES.items())
    return f"CASE upper(trim({column})) {cases} ELSE {column} END"
