"""Player identity: name normalisation and the rules that link a written player to a `player_id`.

Every reader's players go through this module (via `store.load_parsed`), so matching lives here only.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

import duckdb

from elopipe.model import PlayerRec

# Letters NFKD does not decompose into ASCII.
_FOLD = str.maketrans(
    {
        "ø": "o",
        "Ø": "o",
        "ß": "ss",
        "æ": "ae",
        "Æ": "ae",
        "œ": "oe",
        "Œ": "oe",
        "ł": "l",
        "Ł": "l",
        "đ": "d",
        "Đ": "d",
        "ð": "d",
        "Ð": "d",
        "þ": "th",
        "Þ": "th",
        "ı": "i",
        "ŀ": "l",
    }
)
_NON_ALNUM = re.compile(r"[^a-z0-9, ]+")
_SPACES = re.compile(r"\s+")


def fold(text: str) -> str:
    """Lower-case ASCII fold: accents stripped, ø→o, ß→ss; punctuation other than commas removed."""
    text = unicodedata.normalize("NFKD", text.translate(_FOLD))
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    text = text.replace("-", " ").replace(".", " ").replace("'", "")
    text = _NON_ALNUM.sub(" ", text)
    return _SPACES.sub(" ", text).strip()


def name_key(name: str) -> str:
    """Order-independent key of a person's name.

    'Carlsen, Magnus', 'Carlsen,Magnus', 'Magnus Carlsen' and 'CARLSEN Magnus' all give
    'carlsen magnus': the folded name parts, sorted. Initials stay as one letter.
    """
    parts = [p for p in fold(name).replace(",", " ").split(" ") if p]
    return " ".join(sorted(parts))


# ---- resolution -------------------------------------------------------------------------

# Rules in the order they are tried, with the confidence recorded for the link.
RULES: list[tuple[str, float]] = [
    ("fide_id", 1.0),
    ("national_id", 0.98),
    ("name_birth_year", 0.9),
    ("name_federation", 0.8),
    ("name", 0.6),
    ("new", 1.0),
]
_CONFIDENCE = dict(RULES)


@dataclass
class Resolution:
    player_id: int
    rule: str
    confidence: float


def resolve_players(
    con: duckdb.DuckDBPyConnection, players: list[PlayerRec], file_id: int
) -> dict[tuple[int, int], Resolution]:
    """Link every written player of one file to a `player_id`, creating players as needed.

    Match order: FIDE ID; national ID; name key + birth year; name key + federation; name key
    alone. A candidate with a different FIDE ID (or national ID, or birth year, when both sides
    have one) is never taken. Players already resolved earlier in the same file are candidates
    too, so one person written in several tournaments of a file gets one id.

    Returns {(tournament_ref, ref): Resolution}. Writes `players` rows for new people (inside the
    caller's transaction); `player_aliases` rows are written by the loader.
    """
    fids = sorted({p.fide_id for p in players if p.fide_id})
    nids = sorted({p.national_id for p in players if p.national_id})
    keys = sorted({name_key(p.name) for p in players if p.name})
    known: list[_Known] = []
    seen: set[int] = set()
    for col, values in (("fide_id", fids), ("national_id", nids), ("name_key", keys)):
        if not values:
            continue
        rows = con.execute(
            f"SELECT player_id, fide_id, national_id, name_key, federation, birth_year "
            f"FROM players WHERE {col} IN (SELECT UNNEST(?))",
            [values],
        ).fetchall()
        for r in rows:
            if r[0] not in seen:
                seen.add(r[0])
                known.append(_Known(*r))
    index = _Index(known)
    out: dict[tuple[int, int], Resolution] = {}
    for p in players:
        key = name_key(p.name) if p.name else ""
        hit = index.find(p, key)
        if hit is None:
            next_id = con.execute("SELECT nextval('player_id_seq')").fetchone()[0]
            con.execute(
                "INSERT INTO players (player_id, fide_id, national_id, name, name_key, federation,"
                " sex, birth_date, birth_year, title, first_file_id) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                [
                    next_id,
                    p.fide_id,
                    p.national_id,
                    p.name or "?",
                    key,
                    p.federation,
                    p.sex,
                    p.birth_date,
                    p.birth_year or (p.birth_date.year if p.birth_date else None),
                    p.title,
                    file_id,
                ],
            )
            k = _Known(
                next_id,
                p.fide_id,
                p.national_id,
                key,
                p.federation,
                p.birth_year or (p.birth_date.year if p.birth_date else None),
            )
            index.add(k)
            out[(p.tournament_ref, p.ref)] = Resolution(next_id, "new", _CONFIDENCE["new"])
        else:
            known_p, rule = hit
            index.enrich(known_p, p, con)
            out[(p.tournament_ref, p.ref)] = Resolution(known_p.player_id, rule, _CONFIDENCE[rule])
    return out


@dataclass
class _Known:
    player_id: int
    fide_id: int | None
    national_id: str | None
    name_key: str
    federation: str | None
    birth_year: int | None


class _Index:
    def __init__(self, known: list[_Known]) -> None:
        self.by_fid: dict[int, _Known] = {}
        self.by_nid: dict[str, _Known] = {}
        self.by_key: dict[str, list[_Known]] = {}
        for k in known:
            self.add(k)

    def add(self, k: _Known) -> None:
        if k.fide_id:
            self.by_fid.setdefault(k.fide_id, k)
        if k.national_id:
            self.by_nid.setdefault(k.national_id, k)
        self.by_key.setdefault(k.name_key, []).append(k)

    def find(self, p: PlayerRec, key: str) -> tuple[_Known, str] | None:
        if p.fide_id and p.fide_id in self.by_fid:
            return self.by_fid[p.fide_id], "fide_id"
        if p.national_id and p.national_id in self.by_nid:
            cand = self.by_nid[p.national_id]
            if not _conflicts(cand, p):
                return cand, "national_id"
        cands = [c for c in self.by_key.get(key, []) if not _conflicts(c, p)]
        if not cands:
            return None
        by = p.birth_year or (p.birth_date.year if p.birth_date else None)
        if by:
            same = [c for c in cands if c.birth_year == by]
            if len(same) == 1:
                return same[0], "name_birth_year"
        if p.federation:
            same = [c for c in cands if c.federation == p.federation]
            if len(same) == 1:
                return same[0], "name_federation"
        if len(cands) == 1:
            return cands[0], "name"
        return None

    def enrich(self, k: _Known, p: PlayerRec, con: duckdb.DuckDBPyConnection) -> None:
        """Fill identifiers the store lacked (a FIDE ID seen for the first time)."""
        updates = {}
        if p.fide_id and not k.fide_id:
            k.fide_id = p.fide_id
            self.by_fid.setdefault(p.fide_id, k)
            updates["fide_id"] = p.fide_id
        if p.national_id and not k.national_id:
            k.national_id = p.national_id
            self.by_nid.setdefault(p.national_id, k)
            updates["national_id"] = p.national_id
        by = p.birth_year or (p.birth_date.year if p.birth_date else None)
        if by and not k.birth_year:
            k.birth_year = by
            updates["birth_year"] = by
        if p.federation and not k.federation:
            k.federation = p.federation
            updates["federation"] = p.federation
        if updates:
            sets = ", ".join(f"{c} = ?" for c in updates)
            con.execute(
                f"UPDATE players SET {sets} WHERE player_id = ?", [*updates.values(), k.player_id]
            )


def _conflicts(k: _Known, p: PlayerRec) -> bool:
    """True when the two cannot be the same person: different FIDE IDs, national IDs or birth years."""
    if k.fide_id and p.fide_id and k.fide_id != p.fide_id:
        return True
    if k.national_id and p.national_id and k.national_id != p.national_id:
        return True
    by = p.birth_year or (p.birth_date.year if p.birth_date else None)
    return bool(k.birth_year and by and k.birth_year != by)
