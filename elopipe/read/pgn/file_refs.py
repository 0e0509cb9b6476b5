"""The tournaments and players of one PGN file as the reader meets them (`FileRefs`): their refs
in file order, made from a game's tags on first sight, and what later games add (a rating, the
event's dates, time controls and rounds).

The game builder (`elopipe.read.pgn.builder.GameBuilder`) and the column path
(`elopipe.read.pgn.chunk_refs`) both give games their refs here, so both number them alike.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from elopipe.read.dates import parse_pgn_date
from elopipe.read.field_bounds import BIRTH_YEAR_MAX, BIRTH_YEAR_MIN, ROUND_MAX
from elopipe.read.ids import is_placeholder_id, is_too_long_id, too_long_id_message
from elopipe.read.pgn.results import rate_class
from elopipe.read.pgn.values import PLACEHOLDERS, clean, elo_rule, fide_id_rule
from elopipe.read.records import IngestIssue, ParsedFile, PlayerRec, TournamentRec
from elopipe.read.trf.codes import TITLES

_FED_AT_END = re.compile(r"\s([A-Z]{3})$")


def _title(raw: str | None) -> str | None:
    """A WhiteTitle/BlackTitle as GM IM FM CM WGM WIM WFM WCM where it is one of their forms
    (any case; FIDE's XML two-letter `WG WM WF WC`: trf_codes.TITLES); anything else upper-cased
    as written (`BOT`, `LM`). The one-letter TRF forms (`g`, `m`) are not read as titles here: a
    PGN `M` is as likely a national master."""
    if not raw:
        return None
    upper = raw.upper()
    return TITLES.get(upper, upper) if len(upper) > 1 else upper


def _same_year(a: Any, b: Any) -> bool:
    """Two tournament keys' dates (an EventDate, a year, or None) do not contradict one year."""
    if a is None or b is None:
        return True
    return (a if isinstance(a, int) else a.year) == (b if isinstance(b, int) else b.year)


class FileRefs:
    """Refs of the tournaments and players of one file (0-based, in the order games name them),
    and the issues their tags raise (appended to `out.issues`)."""

    def __init__(self, out: ParsedFile) -> None:
        self.out = out
        self.t_refs: dict[tuple[Any, ...], int] = {}
        self.t_dates: dict[int, list[dt.date]] = defaultdict(list)  # game dates given to the day
        self.t_rough: dict[int, list[dt.date]] = defaultdict(list)  # the others (`2024.??.??`)
        self.t_tc: dict[int, set[str]] = {}
        self.t_rounds: dict[int, int] = {}
        self.p_refs: dict[tuple[Any, ...], int] = {}
        self._players: dict[int, PlayerRec] = {}
        self._elo_cache: dict[str, int | None] = {}
        self._prev_tref: int | None = None  # the tournament of the game before (`_tournament`)
        self._t_keys: dict[int, tuple[Any, ...]] = {}  # ref -> its key in `t_refs`
        self._t_cache: dict[tuple[Any, ...], int] = {}
        self._p_cache: dict[tuple[Any, ...], int] = {}

    def issue(
        self, code: str, msg: str, line: int | None, gi: int | None, sev: str = "warning", raw: str | None = None
    ) -> None:
        self.out.issues.append(IngestIssue(code, msg, line, gi, sev, raw[:500] if raw else None))

    def _elo(self, raw: str | None, line: int, gi: int, tag: str, report: bool = True) -> int | None:
        """A WhiteElo/BlackElo value in RATING_MIN..RATING_MAX (field_bounds), else None with a
        'rating_invalid' warning when `report` (the game reports it once; its players do not)."""
        if raw is None:
            return None
        hit = self._elo_cache.get(raw, -1)
        if hit != -1:
            return hit
        val, warns = elo_rule(raw)
        if warns:
            # not cached: every game that writes it reports it
            if report:
                self.issue("rating_invalid", f"{tag} {raw!r} is not a rating: stored as unrated", line, gi)
            return val
        self._elo_cache[raw] = val
        return val

    def _fide_id(self, raw: str | None, line: int, gi: int, tag: str) -> int | None:
        if raw is None:
            return None
        fid, warns = fide_id_rule(raw)
        if warns and is_placeholder_id(raw):
            why = f"{tag} {raw.strip()} is a placeholder, not a FIDE ID: the player has no FIDE ID"
            self.issue("fide_id_placeholder", why, line, gi, raw=raw)
        elif warns and is_too_long_id(raw):
            self.issue("fide_id_too_long", f"{tag} {too_long_id_message(raw)}", line, gi, raw=raw)
        elif warns:
            self.issue("fide_id_invalid", f"{tag} {raw!r} is not a FIDE ID: ignored", line, gi)
        return fid

    def _tournament(self, tags: dict[str, str], gdate: dt.date | None, edate: dt.date | None, eprec: str) -> int:
        """The ref of the game's tournament, made on first sight. A game without an Event tag at all
        (not `?`: absent), at the site and in the year of the game before it, is of that game's
        event: results exports write the tag on an event's first game only."""
        event = clean(tags.get("Event"))
        site = clean(tags.get("Site"))
        # Site used as a game number ("01", "02": kasparov-deep-blue-1997.pgn) is not a place
        site_key = None if site is not None and site.isdigit() else site
        when: Any = edate if edate is not None else (gdate.year if gdate is not None else None)
        key = (event, site_key, when)
        prev = self._prev_tref
        prev_key = self._t_keys.get(prev) if prev is not None and "Event" not in tags else None
        if prev_key is not None and prev_key[1] == site_key and _same_year(prev_key[2], when):
            return prev  # type: ignore[return-value]
        ref = self.t_refs.get(key)
        if ref is not None:
            return ref
        ref = len(self.t_refs)
        self.t_refs[key] = ref
        self._t_keys[ref] = key
        fed = None
        country = clean(tags.get("EventCountry"))
        if country and len(country) == 3 and country.isalpha():
            fed = country.upper()
        elif site_key:
            m = _FED_AT_END.search(site_key)
            if m and m.group(1) not in ("INT", "UTC"):
                fed = m.group(1)
        etype = clean(tags.get("EventType"))
        if event and "armageddon" in event.lower():
            etype = "armageddon"
        rounds = clean(tags.get("EventRounds"))
        extra: dict[str, Any] = {}
        for k in ("EventType", "EventCategory", "EventRounds", "EventCountry", "Site", "EventDate"):
            if k in tags:
                extra[k] = tags[k]
        t = TournamentRec(
            ref=ref,
            name=event,
            city=site_key,
            federation=fed,
            start_date=edate if edate is not None and eprec == "day" else None,
            rounds=int(rounds)
            if rounds and rounds.isascii() and rounds.isdigit() and 0 < int(rounds) <= ROUND_MAX
            else None,
            tournament_type=etype,
            extra=extra,
        )
        self.out.tournaments.append(t)
        return ref

    def _player(
        self,
        tref: int,
        side: str,
        name: str,
        fid_raw: str | None,
        elo_raw: str | None,
        tags_of: Callable[[], dict[str, str]],
        line: int,
        gi: int,
    ) -> int:
        """The ref of the player `name` (with these FideId and Elo values as written) of tournament
        `tref`: a player met before gets a rating a later game writes if it had none; a new one is
        made from the game's tags (`tags_of()`, built only then)."""
        ckey = (tref, name, fid_raw)
        ref = self._p_cache.get(ckey)
        if ref is not None:
            p = self._players[ref]
            if p.rating is None and elo_raw:
                p.rating = self._elo(elo_raw, line, gi, side + "Elo", report=False)
            if fid_raw is not None and p.fide_id is None and fid_raw.strip() not in PLACEHOLDERS:
                self._fide_id(fid_raw, line, gi, side + "FideId")  # report every invalid FIDE ID
            return ref
        ref = self._p_cache[ckey] = self._new_player(tref, side, name, fid_raw, tags_of(), line, gi)
        return ref

    def _new_player(
        self, tref: int, side: str, name: str, fid_raw: str | None, tags: dict[str, str], line: int, gi: int
    ) -> int:
        name = name.strip()
        fid = self._fide_id(fid_raw, line, gi, side + "FideId")
        key = (tref, fid) if fid is not None else (tref, name)
        ref = self.p_refs.get(key)
        if ref is not None:
            p = self._players[ref]
            if p.rating is None:
                p.rating = self._elo(tags.get(side + "Elo"), line, gi, side + "Elo", report=False)
            return ref
        ref = len(self.p_refs)
        self.p_refs[key] = ref
        title = clean(tags.get(side + "Title"))
        fed = clean(tags.get(side + "Fed") or tags.get(side + "Federation") or tags.get(side + "Country"))
        birth_date, birth_year = None, None
        braw = clean(tags.get(side + "BirthDate") or tags.get(side + "Birthday") or tags.get(side + "BirthYear"))
        if braw:
            d, prec = parse_pgn_date(braw)
            if d is not None and BIRTH_YEAR_MIN <= d.year <= BIRTH_YEAR_MAX:
                birth_year = d.year
                birth_date = d if prec == "day" else None
        sex = clean(tags.get(side + "Sex") or tags.get(side + "Gender"))
        sex = {"m": "m", "f": "w", "w": "w"}.get(sex[0].lower()) if sex else None
        self._players[ref] = PlayerRec(
            ref=ref,
            tournament_ref=tref,
            name=name,
            fide_id=fid,
            federation=fed.upper() if fed and len(fed) == 3 else fed,
            sex=sex,
            birth_date=birth_date,
            birth_year=birth_year,
            title=_title(title),
            rating=self._elo(tags.get(side + "Elo"), line, gi, side + "Elo", report=False)
            if tags.get(side + "Elo")
            else None,
            team=clean(tags.get(side + "Team")),
            line=line,
        )
        return ref

    def _finish_tournaments(self) -> None:
        for t in self.out.tournaments:
            dates = self.t_dates.get(t.ref) or self.t_rough.get(t.ref)
            if dates:
                t.end_date = max(dates)
                if t.start_date is None:
                    t.start_date = min(dates)
            tcs = self.t_tc.get(t.ref)
            if tcs and len(tcs) == 1:
                t.time_control = next(iter(tcs))
            if tcs:
                classes = {rate_class(tc) for tc in tcs}
                if len(classes) == 1:
                    t.rate_class = classes.pop()
            if t.rounds is None and t.ref in self.t_rounds:
                t.rounds = self.t_rounds[t.ref]

    def _game_tournament(
        self,
        tags: dict[str, str],
        gdate: dt.date | None,
        prec: str,
        edate: dt.date | None,
        eprec: str,
        edate_raw: str | None,
    ) -> tuple[int, str | None]:
        """(the game's tournament ref, its TimeControl cleaned): games of one Event, Site,
        EventDate and year share a tournament; the event's dates and time controls grow, by the
        game dates given to the day (`prec` 'day') when it has any: one game of a June event dated
        `2024.??.??` (read as 2024-01-01) made the event start in January, its Ro the January
        list's and its rules those in force then. An event whose games give no day takes the
        dates they give."""
        get = tags.get
        year = gdate.year if gdate is not None else None
        # a game without an Event tag may continue the event of the game before it (`_tournament`)
        tkey = (get("Event"), get("Site"), edate_raw, year, None if "Event" in tags else self._prev_tref)
        tref = self._t_cache.get(tkey)
        if tref is None:
            tref = self._t_cache[tkey] = self._tournament(tags, gdate, edate, eprec)
        self._prev_tref = tref
        if gdate is not None:
            (self.t_dates if prec == "day" else self.t_rough)[tref].append(gdate)
        tc = get("TimeControl")
        if tc is not None:
            tc = clean(tc)
            if tc:
                self.t_tc.setdefault(tref, set()).add(tc)
        return tref, tc
