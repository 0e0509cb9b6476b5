"""Importing official rating lists (FIDE TXT/XML, FFE CSV) into `official_lists`.

An imported list is the list *in force* on its date for its system: the rating engines read it
in preference to ratings bootstrapped from tournament files (FIDE B.02 (2024) 8.3: a tournament
is rated with the ratings of the list in force at its start).

Formats read (all with DuckDB's or Polars' vectorised readers, never a Python loop per row), one
module each (`list_fide_txt`, `list_fide_xml`, `list_ffe_csv`); `list_store` stores what they read,
and this module chooses the reader and runs both steps:

* **FIDE fixed-width TXT** (``standard_*.txt``, ``rapid_*.txt``, ``blitz_*.txt`` and the combined
  ``players_list_foa.txt``). Column boundaries are taken from the header line (``ID Number``,
  ``Name``, ``Fed``, ``Sex``, ``Tit``, ``WTit``, ``OTit``, ``FOA``, ``SRtng``/``RRtng``/``BRtng`` or a
  month code such as ``MAR24``, ``SGm``, ``SK``, ``B-day``, ``Flag``), so layout changes between
  years are absorbed. Positions count characters: the file is read as UTF-8, or as Latin-1 when
  it is not valid UTF-8 (older lists). A UTF-8 BOM is dropped in every encoding (also in XML and
  CSV). Blank lines are ignored: neither rows nor skips.
* **FIDE XML** (``<playerslist><player><fideid>…``), standard-only or combined
  (``rapid_rating``/``blitz_rating`` tags); names are unescaped (the five entities and character
  references such as ``&#252;``: `list_fide_xml.xml_unescape`).
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
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import polars as pl

from elopipe.official.list_base import MONTHS, SKIP_REASONS, SKIP_SCHEMA, ListFormatError, ListRead
from elopipe.official.list_ffe_csv import read_ffe_csv
from elopipe.official.list_fide_txt import read_fide_txt
from elopipe.official.list_fide_xml import read_fide_xml, xml_cut_short
from elopipe.official.list_store import store_list
from elopipe.read.control_chars import CONTROL_RE
from elopipe.read.dates import check_list_date
from elopipe.runtime.words import plural

# the names the CLI, `list_compare` and the tests take from here
__all__ = [
    "SKIP_REASONS",
    "SKIP_SCHEMA",
    "ListFormatError",
    "ListImportResult",
    "ListRead",
    "import_list",
    "read_list",
]


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
    # system -> (rows, source file) of the list of that date stored before, now replaced
    replaced: dict[str, tuple[int, str]] = field(default_factory=dict)

    def skip_counts(self) -> dict[str, int]:
        """Skipped rows per reason (keys of `SKIP_REASONS`), most frequent first."""
        counts = self.skips.group_by("reason").len().sort(["len", "reason"], descending=[True, False])
        return dict(counts.iter_rows())


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
    stored = store_list(con, read, str(path))
    return ListImportResult(
        str(path),
        read.file_format,
        read.list_date,
        rows=stored.rows,
        players_linked=stored.players_linked,
        players_created=stored.players_created,
        skips=read.skips,
        unrated=read.unrated,
        warnings=read.warnings + ([read.other_month] if read.other_month else []),
        replaced=stored.replaced,
    )


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
                rel, skips = read_fide_xml(con, p, system)
                if xml_cut_short(p):
                    warnings.append(f"{p.name} ends before </playerslist>: the file is cut short, players may be lost")
            else:
                fmt = "fide-txt"
                rel, skips, unrated, date_hint, txt_warnings = read_fide_txt(con, p, head, system)
                warnings.extend(txt_warnings)
        else:
            fmt, date_hint = "ffe-csv", None
            rel, skips, unrated = read_ffe_csv(con, p, system)
    except (pl.exceptions.PolarsError, duckdb.Error):  # bytes that are no list (the reader's words are not ours)
        raise ListFormatError(f"{p}: not an official {family.upper()} list file: its text cannot be read") from None
    except ListFormatError as exc:  # every message names the file
        msg = str(exc)
        raise ListFormatError(msg if msg.startswith(str(p)) else f"{p}: {msg}") from None
    rel = _clean_names(rel, p, warnings)
    other_month = None if list_date is None else _other_month(p, date_hint, list_date)
    when = list_date or _file_date(p, date_hint)
    if when is None:
        raise ListFormatError(f"{p}: no list date in the file name or header; pass --list-date YYYY-MM-DD")
    try:
        check_list_date(when)
    except ValueError as exc:  # a date read from the file: the file is named, --list-date asked for
        raise ListFormatError(f"{p}: {exc}; pass --list-date YYYY-MM-DD") from None
    return ListRead(rel, fmt, when, skips, unrated, warnings, other_month)


def _clean_names(rel: duckdb.DuckDBPyRelation, p: Path, warnings: list[str]) -> duckdb.DuckDBPyRelation:
    """`rel` with the ANSI escape sequences and control characters removed from its names (a tab
    becomes a space), as the TRF and PGN readers remove them from a name (`control_chars.CONTROL_RE`):
    stored raw, a name with an escape code changed the terminal of whoever listed it. A warning
    counts the names cleaned."""
    pattern = CONTROL_RE.pattern.replace("'", "''")
    found = rel.filter(f"regexp_matches(name, '{pattern}')").aggregate("count(*)").fetchall()[0][0]
    if not found:
        return rel
    warnings.append(
        f"{p.name}: control characters or escape codes removed from {plural(found, 'name', thousands=True)}"
    )
    # a name of escape codes only is no name, as an empty one ('?' on its player)
    cleaned = f"NULLIF(trim(regexp_replace(replace(name, chr(9), ' '), '{pattern}', '', 'g')), '')"
    return rel.select(f"* REPLACE ({cleaned} AS name)")


def _head(p: Path) -> str:
    """The file's first 4 KB as Latin-1 (the header is ASCII), less a UTF-8 BOM: the body lines,
    read after the header, have none, so the header's column positions are theirs."""
    with open(p, "rb") as fh:
        return fh.read(4096).removeprefix(codecs.BOM_UTF8).decode("latin-1")


def _file_date(p: Path, header: dt.date | None) -> dt.date | None:
    """The list date the file gives: its name's, else its header's month code (a FIDE TXT). Raises
    ListFormatError when the two name other months: a renamed or mislabelled file would move
    the official list, and every Ro read from it, by months."""
    named = _date_from_name(p.name)
    if named is not None and header is not None and (named.year, named.month) != (header.year, header.month):
        raise ListFormatError(
            f"{p}: the file name says a list of {named:%Y-%m} and its header one of {header:%Y-%m}; "
            "pass --list-date YYYY-MM-DD"
        )
    return named or header


def _other_month(p: Path, header: dt.date | None, list_date: dt.date) -> str | None:
    """One line when the file's name and header name months (either, or both alike) and neither is
    `list_date`'s: a list of another month given for this one. None when they name none, or one of
    them is `list_date`'s month (a name and a header that disagree: --list-date chose)."""
    named = _date_from_name(p.name)
    stated = {(d.year, d.month) for d in (named, header) if d is not None}
    if not stated or (list_date.year, list_date.month) in stated:
        return None
    which = " and ".join(w for w, d in (("name", named), ("header", header)) if d is not None)
    months = " and ".join(f"{y:04d}-{m:02d}" for y, m in sorted(stated))
    verb = "say" if " and " in which else "says"
    return f"{p}: the file's {which} {verb} a list of {months}, not of --list-date {list_date}"


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
        return dt.date(2000 + int(m.group(2)), MONTHS[m.group(1)], 1)
    return None
