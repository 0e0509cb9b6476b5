"""The federation workload of ``bench/federation.py`` (issue 13): generated, seeded, cached.

A pool of players (200,000 at full scale) with FIDE IDs, names built from syllables (the
commonest surnames are shared by about a hundred players, and about 8 % of the players share
their full name with another, as real names collide), birth years, sexes, federations, titles,
a home region and a hidden true strength. Each month (January 2025 on) holds 750 Swiss TRF16
files at full scale, scaled to 125k played games, with about 28k distinct players: events of 8
to 300 players (many small, a few large), 5 to 11 rounds, within the month, lasting 1 to 9
days. A player is in one event at a time. A small event draws most of its players from its
region, so the same players meet again and again. A fifth of the events have generic names
("Weekend Open 3", "Club Championship 2025") and cluster on weekends, so same-key events
overlap in time; the others are "<Town> <Kind> <year>", unique over the data set. ``--scale``
shrinks the month, the pool and the number of regions alike.

Pairings are a simple Swiss (score groups, top half against bottom half, no repeat when it can
be avoided, colours balanced), not the FIDE Dutch system. Results are drawn from the Elo
expectation of the true strengths, with draws; a few half-point byes, pairing-allocated byes
and forfeits.

Ratings in the files: as Swiss-Manager, each file writes the FIDE rating of the list in force
at the event's start. Month 1 writes the base list (true strength plus noise; below the 1400
floor, or for one player in ten, unrated). For later months the lists come from elopipe's own
engine: after month m is written, it is ingested into a private bootstrap store
(``bootstrap.duckdb``), ``elopipe rate --system fide`` runs, and the list dated the 1st of month
m+1 is read back with ``elopipe sql`` (each player's latest list row on or before that date,
rating NULL = unrated); a player the store has never seen keeps the base rating.
elopipe is driven only through its CLI, in subprocesses, so the same code works on any checkout.

Everything is cached under ``bench/_data/federation/<key>/`` where the key holds the scale, the
seed and `GEN_VERSION` (bump it when the generator changes): ``mMM/`` (the month's files),
``mMM.json`` (its counts, written last), ``list_YYYY-MM.csv`` (fide_id, rating of the list in
force), ``bootstrap.json`` (the months already in the bootstrap store), ``extra_mMM/`` (one
100-player event dated after month MM). An interrupted run resumes where it stopped: a month
directory is renamed into place only when complete, and ingest skips files already loaded.
"""

from __future__ import annotations

import calendar
import csv
import datetime as dt
import io
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent / "_data" / "federation"
GEN_VERSION = 3
START = dt.date(2025, 1, 1)
POOL_FULL = 200_000
EVENTS_FULL = 750
GAMES_FULL = 125_000
GENERIC_SHARE = 0.2
# the same players meet again and again in a region's events (and so, now and then, in the same
# round of two events with the same colours and result: issue 13's coincidental pairing)
REGIONS_FULL = 200
EXTRA_PLAYERS = 100
HOME_FED = "NOR"
OTHER_FEDS = ["SWE", "DEN", "FIN", "ISL", "GER", "NED", "POL", "ENG", "SCO", "FRA", "ESP", "ITA"]
OTHER_FEDS += ["UKR", "IND", "USA", "LTU", "LAT", "EST", "CZE", "HUN"]
TIME_CONTROLS = ["90'/40+30'+30\"", "90'+30\"", "120'/40+30'", "90 min + 30 sec/move"]
FLOOR = 1400  # FIDE rating floor since March 2024: a weaker base-list player is unrated

# `python -c` rather than `-m elopipe`: the package has no __main__ on every checkout
CLI = "from elopipe.cli.main import main; main()"

_SYL = "ber sel ven lin nik vik dal holm gen stad mar ros kal tor by bru ley sund vag ham wick ton "
_SYL += "fjor lund mo rud strø al ar en ka li no ri sa te vo hei mun os ra ul ek il or ste tveit gard"
SYLLABLES = _SYL.split()
GIVEN_M = (
    "Anders Bjorn Carl David Erik Frode Geir Hans Ivar Jon Knut Lars Magnus Nils Ola Per Rune Sven "
    "Tor Ulf Vidar Aksel Emil Jonas Kristian Leon Martin Noah Oskar Petter Sander Tobias Viktor "
    "Andreas Daniel Elias Filip Henrik Isak Jakob Johan Karl Lukas Mats Olav Peder Sindre Stian Teodor"
).split()
GIVEN_W = (
    "Anna Berit Camilla Dina Eva Frida Guro Hanne Ida Julie Kari Lise Maria Nora Ola Pia Ragnhild "
    "Sara Tone Unni Vilde Astrid Emma Ingrid Karin Linnea Maja Sofie Thea Tuva Ylva Selma Mia Hedda"
).split()
GENERIC_NAMES = [
    "Open",
    "Weekend Open",
    "Club Championship",
    "City Championship",
    "Spring Open",
    "Summer Open",
    "Autumn Open",
    "Winter Open",
    "Grand Prix",
    "Rating Tournament",
]
UNIQUE_KINDS = ["Open", "Championship", "Festival", "Memorial", "Classic", "Cup", "Chess Days", "Invitational"]


def month_start(m: int) -> dt.date:
    """First day of month `m` (1 = January 2025)."""
    y, mo = divmod(START.month - 1 + m - 1, 12)
    return dt.date(START.year + y, mo + 1, 1)


@dataclass(frozen=True)
class Workload:
    """The parameters that key a cached data set."""

    scale: float = 1.0
    seed: int = 1

    @property
    def pool_size(self) -> int:
        return max(5_000, round(POOL_FULL * self.scale))

    @property
    def regions(self) -> int:
        return max(4, round(REGIONS_FULL * self.scale))

    @property
    def events_per_month(self) -> int:
        return max(8, round(EVENTS_FULL * self.scale))

    @property
    def root(self) -> Path:
        return DATA / f"scale{self.scale:g}_seed{self.seed}_v{GEN_VERSION}"

    def month_dir(self, m: int) -> Path:
        return self.root / f"m{m:02d}"

    def extra_dir(self, months: int) -> Path:
        return self.root / f"extra_m{months:02d}"

    def month_meta(self, m: int) -> dict | None:
        path = self.root / f"m{m:02d}.json"
        return json.loads(path.read_text()) if path.exists() else None


# ---- the player pool ----------------------------------------------------------------------


@dataclass
class Pool:
    fide_id: np.ndarray
    surname: list[str]
    given: list[str]
    sex: np.ndarray  # 'm' / 'w'
    birth_year: np.ndarray
    federation: list[str]
    title: list[str]
    strength: np.ndarray  # hidden true strength (Elo scale)
    base_rating: np.ndarray  # base list, 0 = unrated
    activity_cdf: np.ndarray  # for weighted draws of participants
    region: np.ndarray  # home region: most players of a small event live in its region
    region_members: list[np.ndarray]
    region_cdf: list[np.ndarray]


def _words(rng: np.random.Generator, n: int, lo: int, hi: int) -> list[str]:
    """`n` distinct capitalised words of `lo`..`hi` syllables."""
    out: dict[str, None] = {}
    while len(out) < n:
        k = int(rng.integers(lo, hi + 1))
        out.setdefault("".join(rng.choice(SYLLABLES, k)).capitalize(), None)
    return list(out)


def make_pool(work: Workload) -> Pool:
    """The player pool of `work` (deterministic in its seed and size)."""
    rng = np.random.default_rng([work.seed, 0])
    n = work.pool_size
    fide_id = 10_000_000 + np.sort(rng.choice(20_000_000, n, replace=False))
    surnames = _words(rng, max(2_000, n // 4), 2, 3)
    # a long-tailed surname frequency: the commonest is shared by ~0.05 % of the pool (100 players)
    w = 1.0 / (np.arange(len(surnames)) + 500.0)
    surname_ix = rng.choice(len(surnames), n, p=w / w.sum())
    sex = np.where(rng.random(n) < 0.16, "w", "m")
    # one given name, or two ('Ola Martin'): full names still collide within common surnames
    two = rng.random(n) < 0.4
    given = [" ".join(rng.choice(GIVEN_W if s == "w" else GIVEN_M, 1 + t)) for s, t in zip(sex, two, strict=True)]
    junior = rng.random(n) < 0.3
    birth_year = np.where(junior, rng.integers(2006, 2019, n), rng.integers(1942, 2006, n))
    strength = rng.normal(1650, 300, n) - np.where(junior, (birth_year - 2005) * 25, 0)
    strength = np.clip(strength, 800, 2820)
    home = rng.random(n) < 0.75
    federation = [HOME_FED if h else str(rng.choice(OTHER_FEDS)) for h in home]
    noisy = np.rint(strength + rng.normal(0, 60, n)).astype(np.int64)
    base = np.where((noisy >= FLOOR) & (rng.random(n) >= 0.1), noisy, 0)
    title = [_title(s, r, x) for s, r, x in zip(sex, base, rng.random(n), strict=True)]
    activity = rng.lognormal(0.0, 0.5, n)
    cdf = np.cumsum(activity)
    region = rng.integers(work.regions, size=n)
    members = [np.flatnonzero(region == r) for r in range(work.regions)]
    region_cdf = [np.cumsum(activity[ix]) / activity[ix].sum() for ix in members]
    return Pool(
        fide_id=fide_id,
        surname=[surnames[i] for i in surname_ix],
        given=given,
        sex=sex,
        birth_year=birth_year,
        federation=federation,
        title=title,
        strength=strength,
        base_rating=base,
        activity_cdf=cdf / cdf[-1],
        region=region,
        region_members=members,
        region_cdf=region_cdf,
    )


def _title(sex: str, rating: int, u: float) -> str:
    for floor, t in ((2500, "GM"), (2400, "IM"), (2300, "FM"), (2200, "CM")):
        if rating >= floor and u < 0.8:
            return t
    if sex == "w":
        for floor, t in ((2300, "WGM"), (2200, "WIM"), (2100, "WFM"), (2000, "WCM")):
            if rating >= floor and u < 0.8:
                return t
    return ""


def unique_names(work: Workload) -> list[str]:
    """'<Town> <Kind>' pairs, shuffled once: month m takes its own slice (no name repeats)."""
    rng = np.random.default_rng([work.seed, 1])
    towns = _words(rng, 4_000, 2, 3)
    pairs = [f"{t} {k}" for t in towns for k in UNIQUE_KINDS]
    rng.shuffle(pairs)
    return pairs


# ---- events of a month --------------------------------------------------------------------


@dataclass
class Event:
    index: int
    name: str
    city: str
    start: dt.date
    end: dt.date
    rounds: int
    size: int
    generic: bool
    region: int = 0
    local_share: float = 0.0  # share of the players drawn from the event's region
    players: np.ndarray | None = None  # pool indices


def event_sizes(n: int, games: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Players and rounds of `n` events: sizes skewed (median ~29, 8..300), more rounds in larger
    events (5..11), scaled so that the month holds about `games` played games (months of one size,
    so that their ingest costs compare)."""
    raw = rng.lognormal(np.log(29), 0.85, n)
    noise = rng.normal(0, 0.8, n)
    factor = 1.0
    for _ in range(4):
        sizes = np.clip(np.rint(raw * factor), 8, 300).astype(np.int64)
        rounds = np.clip(5 + np.rint(np.log2(sizes / 8) * 1.3 + noise), 5, 11).astype(np.int64)
        rounds = np.minimum(rounds, sizes // 2 + 1)
        # byes, absences and forfeits take about 2 % of the pairings
        factor *= games / (0.98 * float((sizes // 2 * rounds).sum()))
    return sizes, rounds


def plan_month(work: Workload, m: int, rng: np.random.Generator) -> list[Event]:
    """Names, dates, sizes and rounds of month `m`'s events, sorted by start date."""
    first = month_start(m)
    days = calendar.monthrange(first.year, first.month)[1]
    names = unique_names(work)
    n = work.events_per_month
    cap = 2 * EVENTS_FULL  # a month's share of the unique names (more than it can use)
    sizes, rounds_of = event_sizes(n, GAMES_FULL * work.scale, rng)
    events = []
    for i in range(n):
        size, rounds = int(sizes[i]), int(rounds_of[i])
        generic = rng.random() < GENERIC_SHARE
        if generic or rounds <= 5:
            span = int(rng.integers(1, 4))  # a weekend, Friday to Sunday at most
        elif rounds <= 7:
            span = int(rng.integers(2, 6))
        else:
            span = int(rng.integers(6, 10))
        span = min(span, rounds)
        if generic:
            # same-key events overlap: they cluster on Fridays and Saturdays
            fridays = [d for d in range(1, days - span + 2) if dt.date(first.year, first.month, d).weekday() in (4, 5)]
            day = int(rng.choice(fridays))
            base = str(rng.choice(GENERIC_NAMES))
            suffixes = [f" {first.year}", f" {int(rng.integers(1, 13))}", f" {calendar.month_name[first.month]}"]
            suffix = str(rng.choice(suffixes))
            name, city = base + suffix, names[int(rng.integers(len(names)))].split()[0]
        else:
            day = int(rng.integers(1, days - span + 2))
            town_kind = names[((m - 1) * cap + i) % len(names)]
            name, city = f"{town_kind} {first.year}", town_kind.split()[0]
        start = first.replace(day=day)
        ev = Event(i, name, city, start, start + dt.timedelta(days=span - 1), rounds, size, generic)
        ev.region, ev.local_share = int(rng.integers(work.regions)), 0.85 if size <= 60 else 0.5
        events.append(ev)
    events.sort(key=lambda e: (e.start, e.index))
    return events


def assign_players(events: list[Event], pool: Pool, rng: np.random.Generator) -> None:
    """Participants by activity-weighted draws, from the event's region or the whole pool;
    nobody is in two events at once."""
    busy_until = np.full(len(pool.fide_id), -1, dtype=np.int64)
    for ev in events:
        start, end = ev.start.toordinal(), ev.end.toordinal()
        members, cdf = pool.region_members[ev.region], pool.region_cdf[ev.region]
        chosen: list[int] = []
        taken: set[int] = set()
        while len(chosen) < ev.size:
            k = 2 * (ev.size - len(chosen)) + 16
            u, local = rng.random(k), rng.random(k) < ev.local_share
            draw = np.where(local, members[np.searchsorted(cdf, u)], np.searchsorted(pool.activity_cdf, u))
            for ix in draw.tolist():
                if busy_until[ix] < start and ix not in taken:
                    taken.add(ix)
                    chosen.append(ix)
                    if len(chosen) == ev.size:
                        break
        ev.players = np.array(chosen, dtype=np.int64)
        busy_until[ev.players] = end


# ---- one Swiss event ----------------------------------------------------------------------


@dataclass
class Played:
    """The round blocks of one event: blocks[p][r] = (opponent start rank or 0, colour, code)."""

    blocks: list[list[tuple[int, str, str]]]
    points: list[float]
    games: int = 0
    forfeits: int = 0
    byes: int = 0


def _pair(active: list[int], score: list[float], met: list[set[int]]) -> list[tuple[int, int]]:
    """Score groups from the top, top half against bottom half, avoiding repeats; the ones left
    float down to the next group (the last ones are paired in order, a repeat if need be)."""
    order = sorted(active, key=lambda p: (-score[p], p))
    groups: list[list[int]] = []
    for p in order:
        if groups and score[groups[-1][0]] == score[p]:
            groups[-1].append(p)
        else:
            groups.append([p])
    pairs: list[tuple[int, int]] = []
    carry: list[int] = []
    for g in groups:
        cur = carry + g
        carry = [cur.pop()] if len(cur) % 2 else []
        half = len(cur) // 2
        s2 = cur[half:]
        for a in cur[:half]:
            b = next((x for x in s2 if x not in met[a]), None)
            if b is None:
                carry.insert(0, a)
            else:
                s2.remove(b)
                pairs.append((a, b))
        carry = s2 + carry
        carry.sort(key=lambda p: (-score[p], p))
    while carry:
        a = carry.pop(0)
        b = next((x for x in carry if x not in met[a]), carry[0])
        carry.remove(b)
        pairs.append((a, b))
    return pairs


def _colours(a: int, b: int, hist: list[list[str]], board: int, coin: bool) -> tuple[int, int]:
    """(white, black): the one with fewer whites so far, else the one due to alternate."""
    ba = hist[a].count("w") - hist[a].count("b")
    bb = hist[b].count("w") - hist[b].count("b")
    if ba != bb:
        return (a, b) if ba < bb else (b, a)
    la, lb = (hist[a] or ["-"])[-1], (hist[b] or ["-"])[-1]
    if la != lb and "-" not in (la, lb):
        return (a, b) if la == "b" else (b, a)
    if la != "-":
        return (a, b) if la == "b" else (b, a)
    return (a, b) if (board % 2 == 0) == coin else (b, a)


def _result(sw: float, sb: float, rng: np.random.Generator) -> str:
    """'1' (white wins), '=' or '0' from the Elo expectation of the true strengths."""
    e = 1.0 / (1.0 + 10.0 ** ((sb - sw - 30.0) / 400.0))
    level = min(max(((sw + sb) / 2 - 1200.0) / 1400.0, 0.0), 1.0)
    draw = (0.12 + 0.3 * level) * np.exp(-(((sw - sb) / 500.0) ** 2))
    win, loss = max(e - draw / 2, 0.0), max(1.0 - e - draw / 2, 0.0)
    u = rng.random() * (win + draw + loss)
    return "1" if u < win else "=" if u < win + draw else "0"


def play_swiss(strength: list[float], rounds: int, rng: np.random.Generator) -> Played:
    """Pair and play `rounds` rounds among players 0..n-1 (start rank = index + 1)."""
    n = len(strength)
    out = Played(blocks=[[] for _ in range(n)], points=[0.0] * n)
    score, met = out.points, [set() for _ in range(n)]
    hist: list[list[str]] = [[] for _ in range(n)]
    had_pab = [False] * n
    # a few players withdraw after some round; absences then read '0000 - Z'
    leaves = [int(rng.integers(1, rounds)) if rng.random() < 0.01 else rounds for _ in range(n)]
    coin = bool(rng.random() < 0.5)
    mirror = {"1": "0", "0": "1", "=": "=", "+": "-", "-": "+"}
    for r in range(rounds):
        active = []
        for p in range(n):
            if r >= leaves[p]:
                out.blocks[p].append((0, "-", "Z"))
            elif r < rounds - 1 and rng.random() < 0.012:
                out.blocks[p].append((0, "-", "H"))
                score[p] += 0.5
            else:
                active.append(p)
        if len(active) % 2:
            bye = min((p for p in active if not had_pab[p]), key=lambda p: (score[p], -p), default=active[-1])
            active.remove(bye)
            had_pab[bye] = True
            out.blocks[bye].append((0, "-", "U"))
            score[bye] += 1.0
            out.byes += 1
        for board, (a, b) in enumerate(_pair(active, score, met)):
            w, bl = _colours(a, b, hist, board, coin)
            if rng.random() < 0.004:
                res = "+" if rng.random() < 0.5 else "-"
                out.forfeits += 1
            else:
                res = _result(strength[w], strength[bl], rng)
                out.games += 1
            met[w].add(bl)
            met[bl].add(w)
            hist[w].append("w")
            hist[bl].append("b")
            out.blocks[w].append((bl + 1, "w", res))
            out.blocks[bl].append((w + 1, "b", mirror[res]))
            score[w] += {"1": 1.0, "=": 0.5, "+": 1.0}.get(res, 0.0)
            score[bl] += {"0": 1.0, "=": 0.5, "-": 1.0}.get(res, 0.0)
    return out


def render_event(ev: Event, pool: Pool, ratings: np.ndarray, rng: np.random.Generator) -> tuple[str, Played]:
    """The TRF16 text of `ev` (CRLF, as Swiss-Manager writes) and its play."""
    assert ev.players is not None
    # start ranks as Swiss-Manager: rated by rating, then the unrated, each by name
    order = sorted(
        ev.players.tolist(),
        key=lambda i: (-int(ratings[i]) if ratings[i] else 1, pool.surname[i], pool.given[i], int(pool.fide_id[i])),
    )
    played = play_swiss([float(pool.strength[i]) for i in order], ev.rounds, rng)
    pts = played.points
    opp_pts = [sum(pts[o - 1] for o, _, _ in played.blocks[p] if o) for p in range(len(order))]
    place = {p: k + 1 for k, p in enumerate(sorted(range(len(order)), key=lambda p: (-pts[p], -opp_pts[p], p)))}
    span = (ev.end - ev.start).days + 1
    round_days = [ev.start + dt.timedelta(days=r * span // ev.rounds) for r in range(ev.rounds)]
    arbiter = int(rng.integers(len(pool.fide_id)))
    lines = [
        f"012 {ev.name}",
        f"022 {ev.city}",
        f"032 {HOME_FED}",
        f"042 {ev.start:%Y/%m/%d}",
        f"052 {ev.end:%Y/%m/%d}",
        f"062 {len(order)}",
        f"072 {sum(1 for i in order if ratings[i])}",
        "092 Individual: Swiss-System",
        f"102 IA {pool.surname[arbiter]}, {pool.given[arbiter]} ({pool.fide_id[arbiter]})",
        f"122 {TIME_CONTROLS[ev.index % len(TIME_CONTROLS)]}",
        "132" + " " * 88 + "".join(f"{d:%y/%m/%d}  " for d in round_days).rstrip(),
    ]
    for p, i in enumerate(order):
        name = f"{pool.surname[i]}, {pool.given[i]}"[:33]
        rating = str(int(ratings[i])) if ratings[i] else ""
        head = (
            f"001 {p + 1:4d} {pool.sex[i]}{pool.title[i]:>3} {name:<33} {rating:>4} {pool.federation[i]:<3} "
            f"{int(pool.fide_id[i]):>11} {int(pool.birth_year[i])}/00/00 {pts[p]:4.1f} {place[p]:4d}"
        )
        blocks = "".join(f"  {o:4d} {c} {res}" if o else f"  0000 {c} {res}" for o, c, res in played.blocks[p])
        lines.append(head + blocks)
    return "\r\n".join(lines) + "\r\n", played


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in name.lower()).strip("-")


def write_month(work: Workload, m: int, pool: Pool, ratings: np.ndarray) -> dict:
    """Write month `m`'s files into ``mMM/`` (renamed into place when complete) and ``mMM.json``."""
    rng = np.random.default_rng([work.seed, 100 + m])
    events = plan_month(work, m, rng)
    assign_players(events, pool, rng)
    tmp = work.root / f".m{m:02d}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    meta = {"month": month_start(m).isoformat(), "files": 0, "games": 0, "forfeits": 0, "byes": 0}
    meta |= {"generic_events": 0, "bytes": 0}
    players: set[int] = set()
    for ev in events:
        text, played = render_event(ev, pool, ratings, rng)
        data = text.encode("utf-8")
        (tmp / f"{ev.index:04d}_{_slug(ev.name)}.trf").write_bytes(data)
        meta["files"] += 1
        meta["games"] += played.games
        meta["forfeits"] += played.forfeits
        meta["byes"] += played.byes
        meta["generic_events"] += ev.generic
        meta["bytes"] += len(data)
        players.update(ev.players.tolist() if ev.players is not None else [])
    meta["players"] = len(players)
    meta["rated_in_files"] = int(sum(1 for i in players if ratings[i]))
    shutil.rmtree(work.month_dir(m), ignore_errors=True)
    tmp.rename(work.month_dir(m))
    (work.root / f"m{m:02d}.json").write_text(json.dumps(meta, indent=1))
    return meta


def write_extra(work: Workload, months: int, pool: Pool, ratings: np.ndarray) -> Path:
    """One new 100-player event dated in the month after `months`, in ``extra_mMM/``."""
    rng = np.random.default_rng([work.seed, 10_000 + months])
    first = month_start(months + 1)
    start = first + dt.timedelta(days=2)
    ev = Event(0, f"Bench Extra Open {first:%Y-%m}", "Extravik", start, start + dt.timedelta(days=4), 7, 100, False)
    ev.players = np.unique(np.searchsorted(pool.activity_cdf, rng.random(400)))[:EXTRA_PLAYERS]
    rng.shuffle(ev.players)
    text, _ = render_event(ev, pool, ratings, rng)
    out = work.extra_dir(months)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"bench-extra-open-{first:%Y-%m}.trf"
    path.write_bytes(text.encode("utf-8"))
    return path


# ---- the bootstrap: ratings of the list in force, from elopipe's own engine ----------------


def elopipe(python: str, *args: str) -> subprocess.CompletedProcess:
    """Run the elopipe CLI of `python`'s environment; output captured."""
    return subprocess.run([python, "-c", CLI, *args], capture_output=True, text=True)


def _check(proc: subprocess.CompletedProcess, what: str, ok: tuple[int, ...] = (0,)) -> str:
    out = (proc.stdout + proc.stderr).strip()
    if proc.returncode not in ok:
        sys.exit(f"{what} failed (exit {proc.returncode}):\n{out[-3000:]}")
    return out


def ratings_in_force(work: Workload, m: int, pool: Pool) -> np.ndarray:
    """Rating of each pool player on the list in force in month `m` (0 = unrated): the base list,
    overridden by the bootstrap store's computed list for the players it has seen."""
    ratings = pool.base_rating.copy()
    if m == 1:
        return ratings
    path = work.root / f"list_{month_start(m):%Y-%m}.csv"
    with path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    ids = np.array([int(r["fide_id"]) for r in rows], dtype=np.int64)
    values = np.array([int(r["rating"] or 0) for r in rows], dtype=np.int64)
    ix = np.searchsorted(pool.fide_id, ids)
    known = (ix < len(pool.fide_id)) & (pool.fide_id[np.minimum(ix, len(pool.fide_id) - 1)] == ids)
    ratings[ix[known]] = values[known]
    return ratings


def bootstrap_month(work: Workload, m: int, python: str, say: Callable[[str], None]) -> None:
    """Ingest month `m` into the bootstrap store, rate it, save the list in force in month m+1."""
    db = str(work.root / "bootstrap.duckdb")
    t0 = time.perf_counter()
    out = _check(elopipe(python, "ingest", "--quiet", str(work.month_dir(m)), "--db", db), "bootstrap ingest", (0, 1))
    say(f"  bootstrap ingest of month {m}: {time.perf_counter() - t0:.0f} s wall; {out.splitlines()[-1]}")
    t0 = time.perf_counter()
    _check(elopipe(python, "rate", "--system", "fide", "--db", db), "bootstrap rate")
    say(f"  bootstrap rate: {time.perf_counter() - t0:.0f} s wall")
    nxt = month_start(m + 1)
    # each player's latest row on or before the date: a list holds every rated player, but a
    # player who became unrated (below the floor) has no row on the later lists
    query = (
        "SELECT p.fide_id, r.rating FROM rating_lists r JOIN players p ON p.player_id = r.player_id "
        f"WHERE r.system = 'fide' AND r.list_date <= DATE '{nxt.isoformat()}' AND p.fide_id IS NOT NULL "
        "QUALIFY row_number() OVER (PARTITION BY r.player_id ORDER BY r.list_date DESC) = 1 ORDER BY p.fide_id"
    )
    text = _check(elopipe(python, "sql", "--db", db, "--format", "csv", query), "reading the list")
    # on a loaded machine DuckDB draws its progress bar into the CSV (stdout): not a row
    rows = [r for r in csv.DictReader(io.StringIO(text)) if (r["fide_id"] or "").isdigit()]
    ids = [r["fide_id"] for r in rows]
    if len(set(ids)) != len(ids):
        say(f"  note: {len(ids) - len(set(ids))} FIDE IDs appear twice on the {nxt:%Y-%m} list (first kept)")
    path = work.root / f"list_{nxt:%Y-%m}.csv"
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["fide_id", "rating"])
        seen: set[str] = set()
        for r in rows:
            if r["fide_id"] not in seen:
                seen.add(r["fide_id"])
                writer.writerow([r["fide_id"], r["rating"]])
    tmp.rename(path)
    rated = sum(1 for r in rows if r["rating"])
    # a self-check: the files' ratings should be the engine's lists in force
    query = "SELECT count(*) AS n FROM rating_discrepancies WHERE system = 'fide'"
    text = _check(elopipe(python, "sql", "--db", db, "--format", "csv", query), "reading the discrepancies")
    odd = [x for x in text.strip().splitlines() if x.strip().isdigit()][-1:] or ["?"]
    odd = odd[0]
    say(f"  list {nxt:%Y-%m}: {len(rows):,} players, {rated:,} rated; file ratings unlike the list in force: {odd}")


def ensure(work: Workload, months: int, python: str, say: Callable[[str], None] = print) -> Path:
    """Generate (or find cached) months 1..`months` and the extra event; its path."""
    work.root.mkdir(parents=True, exist_ok=True)
    state_path = work.root / "bootstrap.json"
    state = json.loads(state_path.read_text()) if state_path.exists() else {"months": 0}
    pool: Pool | None = None
    for m in range(1, months + 1):
        if work.month_meta(m) is None or not work.month_dir(m).is_dir():
            pool = pool or make_pool(work)
            t0 = time.perf_counter()
            meta = write_month(work, m, pool, ratings_in_force(work, m, pool))
            say(
                f"month {m} ({meta['month'][:7]}): wrote {meta['files']} files, {meta['games']:,} games, "
                f"{meta['players']:,} players in {time.perf_counter() - t0:.0f} s"
            )
        if state["months"] < m:
            t0 = time.perf_counter()
            bootstrap_month(work, m, python, say)
            state["months"] = m
            state_path.write_text(json.dumps(state))
            say(f"  bootstrap of month {m}: {time.perf_counter() - t0:.0f} s wall")
    extra = work.extra_dir(months)
    found = sorted(extra.glob("*.trf")) if extra.is_dir() else []
    if found:
        return found[0]
    pool = pool or make_pool(work)
    return write_extra(work, months, pool, ratings_in_force(work, months + 1, pool))
