"""Reading the FFE's player list CSV (``;`` or ``,`` separated) with Polars, never a Python loop
per row: a licence column (``NrFFE``/``Licence``), the name (``Nom`` + ``Prenom`` or ``Nom``), the
category (``Cat``), and ``Elo``/``Rapide``/``Blitz`` with their flags (``Fide``/``RapideFide``/
``BlitzFide`` columns holding F/N/E, or a cell ``1683 F``). The text is UTF-8, else cp1252; a
UTF-8 BOM is dropped."""

from __future__ import annotations

import codecs
import io
import re
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from elopipe.official.list_base import SKIP_SCHEMA, ListFormatError, clip_raw, register
from elopipe.official.list_faults import RATING_MAX, first_rows, kept_lines, no_id, no_licence
from elopipe.read.control_chars import CONTROL_RE, escape_controls
from elopipe.read.names import fold

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


def read_ffe_csv(
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
        found = escape_controls(", ".join(c for c in df.columns if c not in ("_line", "_raw")))
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
    # escape codes and blanks are no part of a licence ('B 22222' is B22222); what is left may be none
    lic = c("licence").str.replace_all(CONTROL_RE.pattern, "").str.replace_all(r"\s", "").replace("", None)
    base = df.select(
        "_line",
        "_raw",
        pl.when(~no_licence(lic)).then(lic.str.to_uppercase()).alias("national_id"),
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
    base = _ffe_duplicates(base.with_columns(_ffe_fault(rates)), rates)
    skips = pl.concat(
        [
            misaligned,
            base.filter(pl.col("_reason").is_not_null()).select(
                pl.col("_line").alias("line"), pl.col("_reason").alias("reason"), pl.col("_detail").alias("detail"),
                clip_raw(pl.col("_raw")).alias("raw"),
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
                pl.col("_line").cast(pl.Int64).alias("line"),
            ).filter(pl.col("rating").is_not_null())
        )
    out = pl.concat(frames)
    register(con, "_ffe_long", out)
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


def _ffe_duplicates(base: pl.DataFrame, rates: list[str]) -> pl.DataFrame:
    """`base` with `_reason` 'duplicate_id' on a row whose licence, or else FIDE ID, another row
    stored gives (two rows would give one player two ratings on one date): of the rows of one ID
    the kept one is the first with a rating and no bad rating, else the first with no bad rating,
    else the first (a row with a bad rating or none came first and the rated row was lost);
    `_detail` names the ID and the line kept. Rows stay in file order."""
    worse = [pl.col("_reason").eq_missing("bad_rating"), ~pl.any_horizontal(_ffe_rated(x) for x in rates)]
    base = base.with_row_index("_order").sort([*worse, "_order"])  # the preferred row of an ID first
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
    return base.sort("_order").drop("_dup_lic", "_dup_fid", "_order")


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
        clip_raw(pl.col("_raw")).alias("raw"),
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
