"""Importing official rating lists (FIDE TXT/XML, FFE CSV) into `official_lists`.

An imported list is the list *in force* on its date for its system: the rating engines read it
in preference to ratings bootstrapped from tournament files (FIDE B.02 (2024) 8.3: a tournament
is rated with the ratings of the list in force at its start).

Formats read (all with DuckDB's or Polars' vectorised readers, never a Python loop per row):

* **FIDE fixed-width TXT** (``standard_*.txt``, ``rapid_*.txt``, ``blitz_*.txt`` and the combined
  ``players_list_foa.txt``). Column boundaries are taken from the header line (``ID Number``,
  ``Name``, ``Fed``, ``Sex``, ``Tit``, ``WTit``, ``OTit``, ``FOA``, ``SRtng``/``RRtng``/``BRtng`` or a
  month code such as ``MAR24``, ``SGm``, ``SK``, ``B-day``, ``Flag``), so layout changes between
  years are absorbed. Positions count characters: the file is read as UTF-8, or as Latin-1 when
  it is not valid UTF-8 (older lists). A UTF-8 BOM is dropped in every encoding (also in XML and
  CSV). Blank lines are ignored: neither rows nor skips.
* **FIDE XML** (``<playerslist><player><fideid>…``), standard-only or combined
  (``rapid_rating``/``blitz_rating`` tags).
* **FFE player list CSV** (``;`` or ``,`` separated) with a licence column (``NrFFE``/``Licence``),
  name (``Nom`` + ``Prenom`` or ``Nom``), category (``Cat``), and ``Elo``/``Rapide``/``Blitz`` with
  their flags (``Fide``/``RapideFide``/``BlitzFide`` columns holding F/N/E, or a cell ``1683 F``).

Rows written to `official_lists` (one per player and system; only players with a rating):
``system`` VARCHAR ('fide' | 'fide-rapid' | 'fide-blitz' | 'ffe' | 'ffe-rapid' | 'ffe-blitz'),
``list_date`` DATE, ``fide_id`` BIGINT, ``national_id`` VARCHAR (FFE licence), ``rating`` INTEGER
(rating points), ``rating_flag`` VARCHAR (FFE F/N/E), ``games`` INTEGER, ``k`` INTEGER (NULL when
the list gives 0 or blank: unknown), ``birth_year`` INTEGER (NULL for 0/blank), ``flag`` VARCHAR
(FIDE i/w/wi), ``ever_2400`` BOOLEAN (standard: rating >= 2400 or K = 10, FIDE B.02 (2024) 8.3.3;
FALSE when K is 20/40 and rating < 2400; else NULL), ``player_id`` INTEGER (linked by FIDE ID,
then FFE licence; a player is created when neither is known; a placeholder ID such as ``0`` or
``99999999`` is no ID and links nobody), ``source_file`` VARCHAR.

Re-importing a (system, list_date) replaces its rows. Rows not stored for a fault (no ID or a
placeholder, an ID that is not a number, a rating not a number from 0 to 3500, a field spilling
over its column or a CSV line with too many or too few fields, an ID already given by an earlier
row: `list_faults`) are counted, returned and kept in `list_import_skips` with their line, reason
and text. An XML list that ends before ``</playerslist>`` is read and warned about
(`ListImportResult.warnings`). Errors: `ListFormatError` (ValueError) for an unrecognised file (in
our words, naming the file, and the line when known), a missing header column or an unknown list
date; `elopipe.read.dates.ListDateError` (exit 2) for a list date before 1971 or after 2100.
"""

from __future__ import annotations

import codecs
import datetime as dt
import io
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from elopipe.identity.decisions import refresh_display_names
from elopipe.identity.facts import refresh_player_facts
from elopipe.official.list_faults import RATING_MAX, fide_checked, first_rows, kept_lines, no_id, overflow_pattern
from elopipe.read.control_chars import escape_controls
from elopipe.read.dates import check_list_date
from elopipe.read.names import fold, name_key_sql
from elopipe.read.trf.codes import TITLES
from elopipe.runtime.errors import ElopipeError


class ListFormatError(ElopipeError, ValueError):
    """The file is not a list this module can read, or the list date cannot be known."""


# Why a row of a list file is not stored (`list_import_skips.reason`), as a user reads it.
SKIP_REASONS = {
    "no_id": "no FIDE ID nor national ID",
    "bad_id": "FIDE ID not a number",
    "bad_rating": f"rating not a number from 0 to {RATING_MAX}",
    "misaligned": "not aligned with the header",
    "duplicate_id": "ID already given on an earlier line",
}

# the columns of a list's skipped rows: `ListRead.skips`, `list_import_skips` (less file and date)
SKIP_SCHEMA = {"line": pl.Int64, "reason": pl.Utf8, "detail": pl.Utf8, "raw": pl.Utf8}


@dataclass
class ListRead:
    """One list file as read (`read_list`), nothing stored.

    `rel`: the `official_lists` columns except list_date/player_id/source_file, one row per
    player and system with a rating. `skips`: the rows that are not in `rel` for a fault (columns
    ``line`` Int64 (1-based line of the file; NULL when a CSV's quoted field spans lines),
    ``reason`` Utf8 (a key of `SKIP_REASONS`), ``detail`` Utf8 (the cell at fault), ``raw`` Utf8
    (the line as written, at most 500 characters)). `unrated`: lines with no rating of any kind
    (most of FIDE's combined list), which a list of ratings leaves out by design. `warnings`:
    faults of the file as a whole, as one line each (an XML list that ends before its closing tag)."""

    rel: duckdb.DuckDBPyRelation
    file_format: str  # 'fide-txt' | 'fide-xml' | 'ffe-csv'
    list_date: dt.date
    skips: pl.DataFrame
    unrated: int = 0
    warnings: list[str] = field(default_factory=list)


@dataclass
class ListImportResult:
    """What one import did. `rows` maps system -> rows written to official_lists; `skips` are
    the rows not stored (as `ListRead.skips`, also written to `list_import_skips`); `warnings`
    as `ListRead.warnings`."""

    path: str
    file_format: str  # 'fide-txt' | 'fide-xml' | 'ffe-csv'
    list_date: dt.date
    rows: dict[str, int] = field(default_factory=dict)
    players_linked: int = 0
    players_created: int = 0
    skips: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=SKIP_SCHEMA))
    unrated: int = 0
    warnings: list[str] = field(default_factory=list)

    def skip_counts(self) -> dict[str, int]:
        """Skipped rows per reason (keys of `SKIP_REASONS`), most frequent first."""
        counts = self.skips.group_by("reason").len().sort(["len", "reason"], descending=[True, False])
        return dict(counts.iter_rows())


_MONTHS = {m: i for i, m in enumerate(
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], start=1)}  # fmt: skip
_MONTH_CODE = re.compile(r"^([A-Za-z]{3})(\d{2})$")


def import_list(
    con: duckdb.DuckDBPyConnection,
    path: str | os.PathLike[str],
    system: str,
    list_date: dt.date | None = None,
) -> ListImportResult:
    """Import one official list file into `official_lists` (see module docstring).

    `system` is a family ('fide' or 'ffe': the rate classes come from the file) or one exact
    system ('fide-rapid', ...; for a single-rate file whose header does not tell). `list_date`
    defaults to a date read from the file name (``mar24``, ``2024-03``) or the header month code.
    The rows not stored (`SKIP_REASONS`: no ID, a bad ID or rating, a misaligned line, a repeated
    ID) replace the file's earlier skips in `list_import_skips` (source_file, list_date, line,
    reason, detail, raw) and are returned in `ListImportResult.skips`.
    Runs in the caller's connection; wraps its writes in one transaction.
    Raises ListFormatError (unknown format, missing columns, no list date) and OSError.
    """
    read = read_list(con, path, system, list_date)
    res = ListImportResult(
        str(path), read.file_format, read.list_date, skips=read.skips, unrated=read.unrated, warnings=read.warnings
    )
    con.execute("BEGIN TRANSACTION")
    try:
        _store(con, read.rel, read.list_date, str(path), res)
        _store_skips(con, read.skips, read.list_date, str(path))
        con.execute("COMMIT")
    except Exception:
        con.execute("ROLLBACK")
        raise
    return res


def read_list(
    con: duckdb.DuckDBPyConnection,
    path: str | os.PathLike[str],
    system: str,
    list_date: dt.date | None = None,
) -> ListRead:
    """Read a list file without storing it (`ListRead`: the rows, the rows skipped, the file
    format, the list date). Same arguments and errors as `import_list`; writes nothing to the
    store."""
    p = Path(path)
    family = system.split("-")[0].lower()
    if family not in ("fide", "ffe"):
        raise ListFormatError(f"unknown list system {system}; use fide or ffe")
    if list_date is not None:
        check_list_date(list_date)
    if not p.is_file():  # a FIFO would hang the read, a device never end
        raise ListFormatError(f"{p} is not a regular file")
    head = _head(p)
    unrated = 0
    warnings = []
    try:
        if family == "fide":
            if head.lstrip().startswith("<"):
                fmt, date_hint = "fide-xml", None
                rel, skips = _read_fide_xml(con, p, system)
                if _xml_cut_short(p):
                    warnings.append(f"{p.name} ends before </playerslist>: the file is cut short, players may be lost")
            else:
                fmt = "fide-txt"
                rel, skips, unrated, date_hint = _read_fide_txt(con, p, head, system)
        else:
            fmt, date_hint = "ffe-csv", None
            rel, skips, unrated = _read_ffe_csv(con, p, system)
    except (pl.exceptions.PolarsError, duckdb.Error):  # bytes that are no list (the reader's words are not ours)
        raise ListFormatError(f"{p}: not an official {family.upper()} list file: its text cannot be read") from None
    except ListFormatError as exc:  # every message names the file
        msg = str(exc)
        raise ListFormatError(msg if msg.startswith(str(p)) else f"{p}: {msg}") from None
    when = list_date or _date_from_name(p.name) or date_hint
    if when is None:
        raise ListFormatError(f"{p}: no list date in the file name or header; pass --list-date YYYY-MM-DD")
    try:
        check_list_date(when)
    except ValueError as exc:  # a date read from the file: the file is named, --list-date asked for
        raise ListFormatError(f"{p}: {exc}; pass --list-date YYYY-MM-DD") from None
    return ListRead(rel, fmt, when, skips, unrated, warnings)


def _store_skips(con: duckdb.DuckDBPyConnection, skips: pl.DataFrame, when: dt.date, source: str) -> None:
    """The file's skipped rows replace those of its previous import for the same list date."""
    con.execute("DELETE FROM list_import_skips WHERE source_file = ? AND list_date = ?", [source, when])
    if skips.height:
        _register(con, "_ol_skips", skips)
        con.execute(
            "INSERT INTO list_import_skips BY NAME SELECT ? AS source_file, ?::DATE AS list_date,"
            " line, reason, detail, raw FROM _ol_skips",
            [source, when],
        )
        con.unregister("_ol_skips")


def _raw(expr: pl.Expr) -> pl.Expr:
    return expr.str.slice(0, 500)


# ---- FIDE fixed-width TXT --------------------------------------------------------------------

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


def _register(con: duckdb.DuckDBPyConnection, name: str, obj: object) -> None:
    """`con.register`, after completing any result the caller left open on `con` (DuckDB refuses
    to register while a statement's result is unfinished)."""
    con.execute("SELECT 1").fetchall()
    con.register(name, obj)


def _head(p: Path) -> str:
    """The file's first 4 KB as Latin-1 (the header is ASCII), less a UTF-8 BOM: the body lines,
    read after the header, have none, so the header's column positions are theirs."""
    with open(p, "rb") as fh:
        return fh.read(4096).removeprefix(codecs.BOM_UTF8).decode("latin-1")


def _txt_columns(header: str) -> list[tuple[str, int, int | None]]:
    """(field, 1-based start, width or None for the last) from the header line's labels."""
    found: list[tuple[str, int]] = []
    for m in re.finditer(r"ID Number|\S+", header):
        label = m.group(0).lower()
        if label in _TXT_LABELS:
            found.append((_TXT_LABELS[label], m.start()))
        elif _MONTH_CODE.match(m.group(0)):  # old standard lists head the rating 'SEP15'
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


def _read_fide_txt(
    con: duckdb.DuckDBPyConnection, p: Path, head: str, system: str
) -> tuple[duckdb.DuckDBPyRelation, pl.DataFrame, int, dt.date | None]:
    """(rows, skipped rows, unrated lines, the header's month code as a date)."""
    header = head.splitlines()[0] if head else ""
    cols = _txt_columns(header)
    names = {c[0] for c in cols}
    if "id" not in names or "name" not in names:
        shown = escape_controls(header[:80])
        raise ListFormatError(f"{p}: not a FIDE list (header lacks 'ID Number' and 'Name'): {shown}")
    date_hint = None
    m = next((_MONTH_CODE.match(t) for t in header.split() if _MONTH_CODE.match(t)), None)
    if m and m.group(1).lower() in _MONTHS:
        date_hint = dt.date(2000 + int(m.group(2)), _MONTHS[m.group(1).lower()], 1)
    single = _single_rate(p.name, system)
    rename = {"x_rating": f"{single}_rating", "x_games": f"{single}_games", "x_k": f"{single}_k"}
    present = {rename.get(c[0], c[0]) for c in cols}
    lines = _read_lines(p)
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
        pl.col("_detail").alias("detail"), _raw(pl.col("line")).alias("raw"),
    )  # fmt: skip
    return _fide_long(con, kept.drop("line", "line_no", "_spills"), present), skips, total - lines.height, date_hint


def _read_lines(p: Path) -> pl.DataFrame:
    """The lines after the header, as 'line_no' UInt32 (1-based line of the file) and 'line'
    Utf8 (Polars' reader: several times less CPU than slicing in SQL); blank lines left out.
    UTF-8, or Latin-1 when the file is not valid UTF-8."""
    opts: dict[str, Any] = {
        "has_header": False,
        "separator": "\x1f",
        "quote_char": None,
        "skip_rows": 1,
        "schema": {"line": pl.Utf8},
    }
    try:
        df = pl.read_csv(p.absolute(), glob=False, **opts)  # the file named: never a pattern
    except (pl.exceptions.ComputeError, UnicodeDecodeError):
        df = pl.read_csv(io.BytesIO(p.read_bytes().decode("latin-1").encode("utf-8")), **opts)
    # a blank line is a null row: the row index is the line's place in the file
    df = df.with_row_index("line_no", offset=2)
    return df.filter(pl.col("line").str.strip_chars() != "")


def _single_rate(filename: str, system: str) -> str:
    """Rate prefix ('s', 'r', 'b') of a single-rate file whose header does not say it."""
    s = system.lower()
    low = filename.lower()
    if s.endswith("rapid") or "rapid" in low:
        return "r"
    if s.endswith("blitz") or "blitz" in low:
        return "b"
    return "s"


_INT = "TRY_CAST({c} AS INTEGER)"  # cells are trimmed, '' already NULL


def _fide_long(
    con: duckdb.DuckDBPyConnection, rel: duckdb.DuckDBPyRelation | pl.DataFrame, present: set[str]
) -> duckdb.DuckDBPyRelation:
    """One row per player and system from a wide FIDE relation or frame (columns as in _TXT_LABELS).

    The file is read once into a temporary table (rows with some rating only: most of the
    combined list has none), then split per rate class."""
    ratings = [f"{x}_rating" for x in "srb" if f"{x}_rating" in present]
    _register(con, "_fide_wide_rel", rel)
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
            f" {ever} AS ever_2400, NULL::VARCHAR AS category"
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


# ---- FIDE XML ----------------------------------------------------------------------------------

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


def _xml_cut_short(p: Path) -> bool:
    """The XML list does not end with its closing tag (a download or copy cut short)."""
    with open(p, "rb") as fh:
        fh.seek(max(0, p.stat().st_size - 256))
        tail = fh.read().rstrip(b" \t\r\n\x00").lower()
    return not tail.endswith(b"</playerslist>")


def _read_fide_xml(
    con: duckdb.DuckDBPyConnection, p: Path, system: str
) -> tuple[duckdb.DuckDBPyRelation, pl.DataFrame]:
    """FIDE XML as (rows, skipped rows): lines are split at each <player>, every <tag>value</tag>
    is extracted with a regular expression, and a running count of <player> opens groups them."""
    single = _single_rate(p.name, system)
    _register(con, "_xml_lines", _xml_lines(p))
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
    _register(con, "_xml_kv", tags)
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
        _register(con, "_xml_faults", faults.select("player_no", "line_no", "_reason", "_detail"))
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
    wide_df = wide_df.drop("player_no", "line_no")
    # XML text is escaped (&amp;, &apos;); names are the only field where it shows
    if "name" in present:
        wide_df = wide_df.with_columns(
            pl.col("name")
            .str.replace_all("&apos;", "'", literal=True)
            .str.replace_all("&quot;", '"', literal=True)
            .str.replace_all("&lt;", "<", literal=True)
            .str.replace_all("&gt;", ">", literal=True)
            .str.replace_all("&amp;", "&", literal=True)
        )
    return _fide_long(con, wide_df, present), skips


# ---- FFE CSV -----------------------------------------------------------------------------------

_FFE_COLS = {
    "licence": ("nrffe", "nr ffe", "licence", "license", "n licence", "no licence", "numero licence", "ref ffe"),
    "name": ("nom prenom", "name", "nom complet", "joueur"),
    "last": ("nom",),
    "first": ("prenom",),
    "category": ("cat", "categorie", "category"),
    "fide_id": ("fidecode", "fide code", "code fide", "fide id", "fideid", "fide_id", "id fide"),
    "sex": ("sexe", "sex"),
    "federation": ("federation", "fed", "nationalite"),
    "birth": ("nele", "ne le", "naissance", "date naissance", "birth date", "birthdate", "birth year", "annee"),
    "elo": ("elo", "elo standard", "elo lent", "standard"),
    "elo_flag": ("fide", "elo flag", "flag elo", "eloflag", "elo fide", "type elo"),
    "rapide": ("rapide", "elo rapide", "rapid"),
    "rapide_flag": ("rapidefide", "rapide fide", "rapide flag", "flag rapide", "rapid flag"),
    "blitz": ("blitz", "elo blitz"),
    "blitz_flag": ("blitzfide", "blitz fide", "blitz flag", "flag blitz"),
}


def _read_ffe_csv(
    con: duckdb.DuckDBPyConnection, p: Path, system: str
) -> tuple[duckdb.DuckDBPyRelation, pl.DataFrame, int]:
    """An FFE CSV as (rows, skipped rows, rows with no rating of any kind)."""
    data = p.read_bytes().removeprefix(codecs.BOM_UTF8)  # a BOM would survive a cp1252 decoding
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("cp1252", errors="replace")
    first = text.splitlines()[0] if text else ""
    sep = max((";", ",", "\t"), key=first.count)
    try:
        df = pl.read_csv(
            io.StringIO(text), separator=sep, infer_schema=False, truncate_ragged_lines=True, quote_char='"'
        )
    except pl.exceptions.PolarsError:
        raise ListFormatError(f"{p}: not an FFE list: {_csv_trouble(text)}") from None
    df, misaligned = _ffe_lines(df, text, sep)
    by_folded = {fold(c).replace(",", " ").replace("_", " ").strip(): c for c in df.columns}
    pick: dict[str, str] = {}
    for field_name, aliases in _FFE_COLS.items():
        for a in aliases:
            if a in by_folded:
                pick[field_name] = by_folded[a]
                break
    if "licence" not in pick or not ({"name", "last"} & pick.keys()):
        found = ", ".join(c for c in df.columns if c not in ("_line", "_raw"))
        raise ListFormatError(f"{p}: an FFE list needs a licence and a name column; its columns: {found}")

    def c(name: str) -> pl.Expr:
        if name in pick:
            return pl.col(pick[name]).str.strip_chars().replace("", None)
        return pl.lit(None, dtype=pl.Utf8)

    if "name" in pick:
        name = c("name")
    else:
        name = (
            pl.when(c("first").is_null())
            .then(c("last"))
            .otherwise(pl.concat_str([c("last"), c("first")], separator=" "))
        )
    birth = c("birth").str.extract(r"((?:19|20)\d\d)", 1).cast(pl.Int32, strict=False)
    # '1 503 014' is an ID; '-5' (read signed) and the placeholders are none
    fid = c("fide_id").str.replace_all(r"\D", "").cast(pl.Int64, strict=False)
    fid = pl.when(~no_id(c("fide_id"), c("fide_id").cast(pl.Int64, strict=False))).then(fid)
    base = df.select(
        "_line",
        "_raw",
        c("licence").str.to_uppercase().alias("national_id"),
        name.alias("name"),
        c("category").alias("category"),
        pl.when(fid > 0).then(fid).alias("fide_id"),
        c("sex")
        .str.to_uppercase()
        .replace_strict({"M": "m", "F": "w", "W": "w"}, default=None, return_dtype=pl.Utf8)
        .alias("sex"),
        c("federation").str.to_uppercase().alias("federation"),
        birth.alias("birth_year"),
        *[c(k).alias(k) for k in ("elo", "elo_flag", "rapide", "rapide_flag", "blitz", "blitz_flag")],
    )
    rates: list[str] = [x for x in ("elo", "rapide", "blitz") if x in pick]
    if not rates:
        raise ListFormatError(f"{p}: no Elo, Rapide or Blitz column")
    base = _ffe_duplicates(base.with_columns(_ffe_fault(rates)))
    skips = pl.concat(
        [
            misaligned,
            base.filter(pl.col("_reason").is_not_null()).select(
                pl.col("_line").alias("line"), pl.col("_reason").alias("reason"), pl.col("_detail").alias("detail"),
                _raw(pl.col("_raw")).alias("raw"),
            ),
        ]
    ).sort("line")  # fmt: skip
    base = base.filter(pl.col("_reason").ne_missing("duplicate_id"))
    frames = []
    for col, sysname in (("elo", "ffe"), ("rapide", "ffe-rapid"), ("blitz", "ffe-blitz")):
        if col not in rates:
            continue
        cell = pl.col(col)
        rating = pl.when(_ffe_rated(col)).then(_ffe_number(col))
        flag = pl.coalesce(pl.col(f"{col}_flag").str.extract(r"^([A-Za-z])", 1), cell.str.extract(r"([A-Za-z])\s*$", 1))
        frames.append(
            base.select(
                pl.lit(sysname).alias("system"),
                "fide_id",
                "national_id",
                "name",
                "federation",
                "sex",
                pl.lit(None, dtype=pl.Utf8).alias("title"),
                pl.lit(None, dtype=pl.Utf8).alias("w_title"),
                pl.lit(None, dtype=pl.Utf8).alias("o_title"),
                pl.lit(None, dtype=pl.Utf8).alias("foa_title"),
                pl.when(rating > 0).then(rating).alias("rating"),
                flag.str.to_uppercase().alias("rating_flag"),
                pl.lit(None, dtype=pl.Int32).alias("games"),
                pl.lit(None, dtype=pl.Int32).alias("k"),
                "birth_year",
                pl.lit(None, dtype=pl.Utf8).alias("flag"),
                pl.lit(None, dtype=pl.Boolean).alias("ever_2400"),
                "category",
            ).filter(pl.col("rating").is_not_null())
        )
    out = pl.concat(frames)
    _register(con, "_ffe_long", out)
    unrated = base.filter(pl.col("_reason").is_null() & ~pl.any_horizontal(_ffe_rated(x) for x in rates)).height
    return con.sql("SELECT * FROM _ffe_long"), skips, unrated


def _csv_trouble(text: str) -> str:
    """Where a CSV text the reader refused goes wrong, in words: the first line with an unclosed
    quote (what makes a CSV reader run fields across lines), else the file as a whole."""
    quotes = pl.Series(text.split("\n")).str.count_matches('"')
    odd = (quotes % 2 == 1).arg_true()
    if odd.len():
        return f"line {odd[0] + 1} opens a quote it does not close, so its fields cannot be told apart"
    return "its lines cannot be split into fields"


def _ffe_duplicates(base: pl.DataFrame) -> pl.DataFrame:
    """`base` with `_reason` 'duplicate_id' on a row whose licence, or else FIDE ID, an earlier
    row stored gives (two rows would give one player two ratings on one date): the first row is
    kept; `_detail` names the ID and the line kept."""
    stored = pl.col("_reason").is_null() | (pl.col("_reason") == "bad_rating")
    base = base.with_columns(_dup_lic=~first_rows(pl.when(stored).then(pl.col("national_id"))))
    base = base.with_columns(_dup_fid=~first_rows(pl.when(stored & ~pl.col("_dup_lic")).then(pl.col("fide_id"))))
    dup_lic, dup_fid = pl.col("_dup_lic"), pl.col("_dup_fid")
    if base.select(dup_lic.any() | dup_fid.any()).item():
        keep = stored & ~dup_lic & ~dup_fid
        for key, flag, label in (("national_id", dup_lic, "licence"), ("fide_id", dup_fid, "FIDE ID")):
            firsts = kept_lines(base, keep, base.filter(flag), key, "_line")
            base = base.join(firsts, on=key, how="left", maintain_order="left").with_columns(
                pl.when(flag).then(pl.lit("duplicate_id")).otherwise(pl.col("_reason")).alias("_reason"),
                pl.when(flag)
                .then(pl.coalesce(pl.format(f"{label} {{}} as on line {{}}", pl.col(key), pl.col("_first")),
                                  pl.format(f"{label} {{}}", pl.col(key))))
                .otherwise(pl.col("_detail"))
                .alias("_detail"),
            ).drop("_first")  # fmt: skip
    return base.drop("_dup_lic", "_dup_fid")


def _ffe_number(col: str) -> pl.Expr:
    """The number an FFE rating cell starts with ('1683 F', '-50'), Int32; null when none."""
    return pl.col(col).str.extract(r"(-?\d+)", 1).cast(pl.Int32, strict=False)


def _ffe_rated(col: str) -> pl.Expr:
    """An FFE rating cell holds a rating: a number of 3 or 4 digits (100 up), at most `RATING_MAX`."""
    return _ffe_number(col).is_between(100, RATING_MAX).fill_null(False)


def _ffe_lines(df: pl.DataFrame, text: str, sep: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """`df` (the CSV's rows, blank lines as all-null rows) with `_line` (1-based line of the
    file) and `_raw` (the line), less its blank and misaligned rows (not as many separators as
    the header, quoted text aside: the reader would cut or pad them into the wrong columns); and
    the misaligned rows as skips. A quoted field over two lines leaves `_line` unknown (NULL)."""
    lines = pl.DataFrame({"_raw": text.split("\n")}).with_columns(pl.col("_raw").str.strip_suffix("\r"))
    lines = lines.with_columns(pl.col("_raw").str.replace_all('"[^"]*"', "").str.count_matches(sep).alias("_seps"))
    body = lines.slice(1).with_row_index("_line", offset=2).with_columns(pl.col("_line").cast(pl.Int64))
    body = body.filter(pl.col("_raw").str.replace_all(f'[\\s"{re.escape(sep)}]', "") != "")
    df = df.filter(~pl.all_horizontal(pl.all().is_null()))
    if not lines.height or body.height != df.height:
        none = {"_line": pl.lit(None, pl.Int64), "_raw": pl.lit(None, pl.Utf8)}
        return df.with_columns(**none), pl.DataFrame(schema=SKIP_SCHEMA)
    wanted = int(lines["_seps"][0])
    df = df.with_columns(body["_line"], body["_raw"], body["_seps"])
    bad = pl.col("_seps") != wanted
    misaligned = df.filter(bad).select(
        pl.col("_line").alias("line"),
        pl.lit("misaligned").alias("reason"),
        pl.when(pl.col("_seps") == 0)
        .then(pl.lit(f"1 field, the header has {wanted + 1}"))
        .otherwise(pl.format("{} fields, the header has {}", pl.col("_seps") + 1, pl.lit(wanted + 1)))
        .alias("detail"),
        _raw(pl.col("_raw")).alias("raw"),
    )
    return df.filter(~bad).drop("_seps"), misaligned


def _ffe_fault(rates: list[str]) -> list[pl.Expr]:
    """`_reason` and `_detail` of an FFE row not stored whole: neither a licence nor a FIDE ID,
    or a rating cell with digits that are no rating (a bad rating loses that rating only)."""
    no_id = pl.col("national_id").is_null() & pl.col("fide_id").is_null()
    # one when/then chain per column (Polars types the chain's first link apart from the rest)
    reason: Any = pl.when(no_id).then(pl.lit("no_id"))
    detail: Any = pl.when(no_id).then(pl.lit(None, dtype=pl.Utf8))
    for x in rates:
        cell = pl.col(x)
        cond = cell.str.contains(r"\d") & ~_ffe_rated(x)
        reason = reason.when(cond).then(pl.lit("bad_rating"))
        detail = detail.when(cond).then(pl.format(f"{x} {{}}", cell))
    return [reason.otherwise(None).alias("_reason"), detail.otherwise(None).alias("_detail")]


# ---- storing and linking -----------------------------------------------------------------------


def _date_from_name(name: str) -> dt.date | None:
    low = name.lower()
    m = re.search(r"(19|20)(\d\d)[-_]?(0[1-9]|1[0-2])(?:[-_]?(0[1-9]|[12]\d|3[01]))?", low)
    if m:
        try:
            return dt.date(int(m.group(1) + m.group(2)), int(m.group(3)), int(m.group(4) or 1))
        except ValueError:  # "2023-02-30": not a date; the file name names no list date
            return None
    m = re.search(r"(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)(\d\d)(?!\d)", low)
    if m:
        return dt.date(2000 + int(m.group(2)), _MONTHS[m.group(1)], 1)
    return None


def _store(
    con: duckdb.DuckDBPyConnection, rel: duckdb.DuckDBPyRelation, when: dt.date, source: str, res: ListImportResult
) -> None:
    con.execute("DROP TABLE IF EXISTS _ol_new")
    _register(con, "_ol_rel", rel)
    # link by FIDE ID, else by national ID (merged players resolve to the player kept)
    con.execute(
        """
        CREATE TEMP TABLE _ol_new AS
        SELECT r.*, CAST(COALESCE(pf.pid, pn.pid) AS INTEGER) AS player_id,
               COALESCE(CAST(r.fide_id AS VARCHAR), 'L' || r.national_id) AS person
        FROM _ol_rel r
        LEFT JOIN (SELECT fide_id, min(COALESCE(merged_into, player_id)) AS pid FROM players
                   WHERE fide_id IS NOT NULL GROUP BY fide_id) pf ON pf.fide_id = r.fide_id
        LEFT JOIN (SELECT national_id, min(COALESCE(merged_into, player_id)) AS pid FROM players
                   WHERE national_id IS NOT NULL GROUP BY national_id) pn
               ON pf.pid IS NULL AND pn.national_id = r.national_id
        WHERE r.fide_id IS NOT NULL OR r.national_id IS NOT NULL
        """
    )
    con.unregister("_ol_rel")
    res.players_linked = con.execute(
        "SELECT count(DISTINCT player_id) FROM _ol_new WHERE player_id IS NOT NULL"
    ).fetchall()[0][0]
    # one new player per person absent from the store (the person key: FIDE ID, else licence)
    con.execute("DROP TABLE IF EXISTS _ol_people")
    con.execute(
        """
        CREATE TEMP TABLE _ol_people AS
        SELECT CAST(nextval('player_id_seq') AS INTEGER) AS player_id, * FROM (
            SELECT person, any_value(fide_id) AS fide_id, any_value(national_id) AS national_id,
                   any_value(name) AS name, any_value(federation) AS federation, any_value(sex) AS sex,
                   any_value(birth_year) AS birth_year, any_value(title) AS title
            FROM _ol_new WHERE player_id IS NULL GROUP BY 1 ORDER BY 1)
        """
    )
    res.players_created = con.execute("SELECT count(*) FROM _ol_people").fetchall()[0][0]
    key = name_key_sql("COALESCE(name, '?')")
    con.execute(
        f"INSERT INTO players (player_id, fide_id, national_id, name, name_key, federation, sex, birth_year, title)"
        f" SELECT player_id, fide_id, national_id, COALESCE(name, '?'), {key}, federation, sex, birth_year, title"
        f" FROM _ol_people"
    )
    # the list is the official record of birth year, federation, sex and identifiers where a
    # linked player had none (only the few players that lack something are touched)
    con.execute(
        """
        UPDATE players SET birth_year = COALESCE(players.birth_year, s.birth_year),
                           federation = COALESCE(players.federation, s.federation),
                           sex = COALESCE(players.sex, s.sex),
                           fide_id = COALESCE(players.fide_id, s.fide_id),
                           national_id = COALESCE(players.national_id, s.national_id)
        FROM (SELECT o.player_id, any_value(o.birth_year) AS birth_year, any_value(o.federation) AS federation,
                     any_value(o.sex) AS sex, any_value(o.fide_id) AS fide_id, any_value(o.national_id) AS national_id
              FROM _ol_new o JOIN players p ON p.player_id = o.player_id
              WHERE (p.birth_year IS NULL AND o.birth_year IS NOT NULL)
                 OR (p.federation IS NULL AND o.federation IS NOT NULL)
                 OR (p.sex IS NULL AND o.sex IS NOT NULL)
                 OR (p.fide_id IS NULL AND o.fide_id IS NOT NULL)
                 OR (p.national_id IS NULL AND o.national_id IS NOT NULL)
              GROUP BY o.player_id) s
        WHERE s.player_id = players.player_id
        """
    )
    systems = [r[0] for r in con.execute("SELECT DISTINCT system FROM _ol_new ORDER BY 1").fetchall()]
    replaced_names = [
        r[0]
        for r in con.execute(
            "SELECT DISTINCT o.player_id FROM official_lists o JOIN players p ON p.player_id = o.player_id"
            " WHERE o.list_date = ? AND o.system IN (SELECT UNNEST(?)) AND o.name = p.name",
            [when, systems],
        ).fetchall()
    ]
    con.execute("DELETE FROM official_lists WHERE list_date = ? AND system IN (SELECT UNNEST(?))", [when, systems])
    con.execute(
        "INSERT INTO official_lists BY NAME SELECT o.system, ?::DATE AS list_date, o.fide_id, o.national_id, o.name,"
        " o.federation, o.sex, o.title, o.w_title, o.o_title, o.foa_title, o.rating, o.rating_flag, o.games, o.k,"
        " o.birth_year, o.flag, COALESCE(o.player_id, n.player_id) AS player_id, ? AS source_file, o.ever_2400,"
        " o.category FROM _ol_new o LEFT JOIN _ol_people n ON o.player_id IS NULL AND n.person = o.person",
        [when, source],
    )
    # the official spelling becomes the name shown for the store's players on this list (only
    # a spelling other than the name shown can change it: a monthly list touches few players),
    # and a name only the replaced list gave is no longer shown
    linked = con.execute(
        "SELECT DISTINCT o.player_id FROM _ol_new o JOIN players p ON p.player_id = o.player_id"
        " WHERE o.name IS DISTINCT FROM p.name"
    ).fetchall()
    refresh_display_names(con, [r[0] for r in linked] + replaced_names)
    # a fact the player's entries do not give (a title won since) comes from the latest list; only
    # players with entries can differ from the row this import wrote (identity.facts)
    with_entries = con.execute(
        "SELECT DISTINCT o.player_id FROM _ol_new o JOIN tournament_players tp ON tp.player_id = o.player_id"
    ).fetchall()
    refresh_player_facts(con, [r[0] for r in with_entries] + replaced_names)
    res.rows = dict(con.execute("SELECT system, count(*) FROM _ol_new GROUP BY 1 ORDER BY 1").fetchall())
    con.execute("DROP TABLE _ol_new")
    con.execute("DROP TABLE _ol_people")
