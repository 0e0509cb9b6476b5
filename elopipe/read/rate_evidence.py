"""The rate of play of every game, and whether it may be on a FIDE list at all, from all the
evidence a rating officer reads: the time control, the event's name, the site, the rounds
played on one day.

Rules and their sources:

* **Rate of play** (FIDE Laws of Chess (2023), Appendix A.1: *rapid*, more than 10 and less
  than 60 minutes per player, time + 60 × increment; Appendix B.1: *blitz*, 10 minutes or
  less; FIDE B.02 (2024) 1.1: *standard*, at least 60 minutes for 60 moves).  The minutes
  are read by `elopipe.read.rate_of_play` from the PGN ``TimeControl`` tag, the TRF 122/222
  lines and a reader's declared class; that evidence always comes first (source
  ``time_control``).
* **The event's name** says the rate where the file gives no time control: `NAME_RULES`, in
  the languages of the files (blitz, rapid, rapide, rápidas, Schnellschach, snelschaak,
  szachy szybkie, armageddon, bullet, speed, lightning, ...), each a whole word, and a time
  written in the name (``G/30``, ``5m+2spm``, ``5 Plus 0``).  Words that name both rapid and
  blitz, and a tie-break (``TB``), say only "faster than standard": class ``fast`` (rapid or
  blitz, which one not known), on no FIDE list.  `NOT_A_RATE` lists the phrases where such a
  word is no rate of play (``Rapid City``); a word inside another word never counts
  (``Blitzstein``).  Source ``name``.
* **Rounds per day.**  Standard play allows no more than three rounds a day and 12 hours of
  play (FIDE B.02 rate of play; the FRBE's transcription of B.02 says "no more than three rounds
  per day" — NOT VERIFIED against the 2024 wording, which keeps the 12 hours, spec
  fide-rating-rules.md 6.1; `elopipe.read.schedule_evidence`).  A day on which the event played
  `ROUNDS_PER_DAY_NOT_STANDARD`
  (5; real standard files show 4) rounds or more is therefore not standard, nor are a player's
  games on a day on which he played that many games of the event,
  nor are the games of two players who met `SAME_PAIR_PER_DAY_NOT_STANDARD` (3) times in a day
  (a rapid or blitz match: a standard match plays a game a day), nor, in a knockout event, the
  two games or more of one pair in one round on a day after that round's first (a match's
  tie-break): class ``fast``.  Counted per day and player, so the tie-break day of a knockout
  event does not move its classical days.
  A PGN event's game dates count only when they fall on two days or more (a file that writes
  the event's date on every game says nothing about its days); TRF dates (line 132) are the
  rounds' own.  Source ``rounds_per_day``.
* **Never on a FIDE list**, whatever the rate (FIDE B.02 (2024) 0.x/1.x: games of registered
  tournaments played over the board under the Laws of Chess; online play has its own rating;
  NOT VERIFIED against the primary text): online play (the site names a platform, a URL or ends
  in ``INT``: `ONLINE_SITES`, source ``site``; the name says ``online``/``internet``), and by the
  name: simultaneous exhibitions, blindfold games, exhibition and consultation games, odds
  games, Chess960/Freestyle (`NEVER_RATED_NAMES`, source ``name``).  Armageddon games too:
  FIDE B.02 (2024) Rapid and Blitz chapter, "games where the players have different times are
  not rated" (spec fide-rating-rules.md 11), and an armageddon gives White more time than Black,
  who has draw odds.  A simultaneous exhibition is known by its games too: one player against
  `SIMUL_OPPONENTS` (3) opponents or more in one round of the event on one day, each of whom plays
  no other game of that round (a round pairs each player once; a simul's boards are one round),
  where neither a time control nor the name says the rate (source ``rounds_per_day``; the Play
  Live Challenge 2016 of Carlsen.pgn, 11 boards in round 3).  Bullet (3 minutes or
  less) is a class of its own, on no list.  The ``Variant`` tag is read per game by the rating
  (`elopipe.rating.fide.prepare._unrated_reason`).
* **Assumed.**  An event with no such evidence takes the rate of `--unknown-tc` (default
  standard), and says so: source ``assumed``.

Every decision carries its evidence in words (``rate_evidence``), kept by the rating in the
store (``rate_of_play``) and shown in reports.
"""

from __future__ import annotations

import functools
import re

import polars as pl

from elopipe.read.rate_of_play import RATE_CLASSES, classify_minutes, tag_minutes, text_minutes
from elopipe.read.schedule_evidence import fast_games, simul_games

#: Where a game's class came from, most trusted first.
SOURCES = ("time_control", "name", "site", "rounds_per_day", "assumed")

#: Faster than standard, rapid or blitz not known (a tie-break, a name saying both, rounds a day).
FAST = "fast"

# ---- the event's name -----------------------------------------------------------------------

#: (pattern, class) read in an event's name, lower case, each a whole word (no letter or digit
#: on either side). Extend here: one line a word.
NAME_RULES: tuple[tuple[str, str], ...] = (
    # bullet: 3 minutes or less, on no FIDE list
    (r"(?:hyper|ultra)?bullet", "bullet"),
    # blitz (Laws B.1)
    # German and Dutch compounds: 'Vereinsblitzturnier', 'Blitzschachmeisterschaften',
    # 'Kadettenblitz' (never 'Blitzstein': a name's other part is no such word)
    (r"\w*blitz(?:schach\w*|schaak\w*|turnier\w*|toernooi\w*|meisterschaft\w*|partien?)?", "blitz"),
    (r"armagedd?ons?", "blitz"),
    (r"lightning", "blitz"),
    (r"speed(?:\s?chess)?", "blitz"),
    (r"lampo", "blitz"),  # italian: torneo lampo
    (r"rel[áâa]mpago", "blitz"),  # spanish, portuguese
    (r"[ée]clair", "blitz"),  # french: tournoi éclair
    (r"bliksem(?:schaak)?", "blitz"),  # dutch
    (r"lyn(?:sjakk|skak)", "blitz"),  # norwegian, danish
    (r"blixt(?:schack)?", "blitz"),  # swedish
    (r"salamashakki", "blitz"),  # finnish
    (r"b[łl]yskawiczn\w*", "blitz"),  # polish: szachy błyskawiczne
    (r"bleskov(?:[ýéá]|ka|ém|ou)", "blitz"),  # czech: bleskový šach
    (r"vill[áa]m(?:sakk|verseny|torna)?", "blitz"),  # hungarian
    (r"блиц\w*", "blitz"),  # russian
    # rapid (Laws A.1)
    (r"rapid(?:play|schach|turnier)?", "rapid"),
    (r"rapides?", "rapid"),  # french
    (r"semi[- ]?rapides?", "rapid"),
    (r"r[áa]pid[oa]s?", "rapid"),  # spanish, portuguese, italian: partidas rápidas
    (r"r[àa]pides", "rapid"),  # catalan
    (r"semilampo", "rapid"),  # italian
    (r"quick\s?play", "rapid"),
    (r"\w*schnell(?:schach\w*|turnier\w*)", "rapid"),  # german: Schnellschachturnier
    (r"snel(?:schaak|schaken)", "rapid"),  # dutch
    (r"hurtig(?:sjakk|skak)", "rapid"),  # norwegian, danish
    (r"snabb(?:schack)?", "rapid"),  # swedish
    (r"pikashakki", "rapid"),  # finnish
    (r"szybki\w*", "rapid"),  # polish: szachy szybkie, w szachach szybkich
    (r"быстр\w*|рапид\w*", "rapid"),  # russian
    # a tie-break: rapid or blitz
    (r"tb|tie[- ]?breaks?|play[- ]?offs?|stichkampf|desempate", FAST),
    # correspondence chess: by post or server, on no FIDE list
    (r"correspond[ea]nc[ea]|correspondencia|fernschach\w*|iccf", "correspondence"),
    # standard, said in so many words
    (r"classical", "standard"),
)

#: (pattern, kind) of events never on a FIDE list, read in the name as `NAME_RULES` are.
NEVER_RATED_NAMES: tuple[tuple[str, str], ...] = (
    # and compounds: 'Uhrensimultan' (a clock simul), 'Blindsimultan'
    (r"\w*simul\w*|\w*simult[áa]n\w*|symultan\w*|сеанс\w*", "simul"),
    # blindfold play; never 'blind' alone: events of blind players are rated chess
    (r"blindfold\w*|blindschach|blindschaak|(?:à|a) l'aveugle|a ciegas|alla cieca", "blindfold"),
    (r"exhibition|exhibici[óo]n|exibi[çc][ãa]o|schaukampf|show\s?match|consultation|beratungspartien?", "exhibition"),
    (r"vs\.? the world", "exhibition"),
    # different times for the two players (and draw odds for Black): FIDE B.02 (2024) R&B; before
    # `odds`: draw odds are the armageddon rule
    (r"armagedd?ons?|draw[- ]odds", "armageddon"),
    (r"odds", "odds"),
    (r"chess\s?960|schach\s?960|[ée]checs\s?960|ajedrez\s?960|960|fischer\s?random|fischerandom|freestyle", "chess960"),
    (r"online|on-line|internet", "online"),
    # other games than chess under the Laws (FIDE B.02 rates chess only)
    (r"bughouse|crazyhouse|tandem(?:schach)?|atomic|antichess|three[- ]check|king of the hill", "variant"),
)

#: Phrases in which a word of the rules above is no rate of play nor kind (removed first).
NOT_A_RATE: tuple[str, ...] = (
    r"rapid city",  # South Dakota
    r"(?:sk |sc )?rapid wien",  # a Vienna club
    r"against all odds",
)

_WORD = r"(?<![^\W_])(?:{})(?![^\W_])"
# a rate word may run into a number ('Blitz2023', 'Rapid3'); the kinds never rated may not
# ('9600' is no Chess960)
_RATE_WORD = r"(?<![^\W_])(?:{})(?![^\W\d_])"
_NAME_RES = tuple((re.compile(_RATE_WORD.format(p)), c) for p, c in NAME_RULES)
_NEVER_RES = tuple((re.compile(_WORD.format(p)), k) for p, k in NEVER_RATED_NAMES)
_NOT_A_RATE = re.compile("|".join(_WORD.format(p) for p in NOT_A_RATE))
# a time written in the name: 'G/30', 'G5' (game in N minutes); '5m+2spm', '3+2', '5 Plus 0'
_G_MINUTES = re.compile(r"(?<![^\W_])G\s?/?\s?(\d{1,3})(?![^\W_])(?!:)")
_NAME_TC = re.compile(
    r"(?<![^\W_])(?<!:)(\d{1,3})\s?(?:m|min|')?\s?(?:\+|\s(?:plus|\+)\s)\s?(\d{1,2})\s?(?:s|spm|sec|\")?(?![^\W_])",
    re.IGNORECASE,
)


def _clean(name: str) -> str:
    return _NOT_A_RATE.sub(" ", name.lower())


@functools.lru_cache(maxsize=8192)
def name_rate(name: str | None) -> tuple[str, str] | None:
    """(class, what the name says) for an event's name, or None when it says no rate.

    A time written in the name wins (``G/30``: 30 minutes, rapid; ``3m+2spm``: 5 minutes,
    blitz); else its words (`name_words`).  Pure text; never raises.
    """
    if not name:
        return None
    for rx, minutes in ((_G_MINUTES, lambda m: float(m.group(1))), (_NAME_TC, _base_plus_increment)):
        m = rx.search(name)
        cls = classify_minutes(minutes(m)) if m else None
        if m and cls:
            return cls, m.group(0)
    return name_words(name)


def _base_plus_increment(m: re.Match[str]) -> float:
    return float(m.group(1)) + float(m.group(2))


@functools.lru_cache(maxsize=8192)
def name_words(text: str | None) -> tuple[str, str] | None:
    """(class, the word) from the words of `NAME_RULES` in `text`: one class (a tie-break named
    with its rate is of that rate), or ``fast`` when they name several (rapid and blitz); None
    when no word says a rate."""
    if not text:
        return None
    low = _clean(text)
    found: dict[str, str] = {}
    for rx, cls in _NAME_RES:
        m = rx.search(low)
        if m and cls not in found:
            found[cls] = m.group(0)
    if not found:
        return None
    # a rate named beside 'classical' is the event's ('Classical and Rapid' is not standard);
    # a tie-break named with its rate ('Blitz Tie-Break', 'Rapid TB') is of that rate
    fast = {c: w for c, w in found.items() if c != "standard"} or found
    if len(fast) > 1:
        fast.pop(FAST, None)
    if len(fast) == 1:
        return next(iter(fast.items()))
    return FAST, " and ".join(fast.values())


@functools.lru_cache(maxsize=8192)
def name_never_rated(name: str | None) -> tuple[str, str] | None:
    """(kind, the word) when the name says the event is never rated (`NEVER_RATED_NAMES`:
    'simul', 'blindfold', 'exhibition', 'odds', 'armageddon', 'chess960', 'online', 'variant'),
    else None."""
    if not name:
        return None
    low = _clean(name)
    for rx, kind in _NEVER_RES:
        m = rx.search(low)
        if m:
            return kind, m.group(0)
    return None


# ---- the site -------------------------------------------------------------------------------

#: Online platforms recognised in a PGN Site tag / TRF city (lower case, whole words).
ONLINE_SITES = (
    "lichess.org",
    "lichess",
    "chess.com",
    "chess24.com",
    "chess24",
    "playchess.com",
    "playchess",
    "chessclub.com",
    "icc",
    "freechess.org",
    "fics",
    "tornelo",
    "internet",
    "online",
)
_ONLINE_RE = r"(?:^|[^a-z0-9.])(" + "|".join(s.replace(".", r"\.") for s in ONLINE_SITES) + r")(?:$|[^a-z0-9])"


def online_platform_expr(site: str = "site", platform: str = "platform") -> pl.Expr:
    """Why an event is online play, or null: FIDE rates over-the-board games only
    (B.02 (2024) 1.1: the regulations rate games played over the board in registered
    tournaments; online play has its own system, FIDE Online Arena — wording NOT VERIFIED
    against the primary text).  Documented choice: such events are skipped, never rated.

    Reads the Utf8 columns `platform` (``tournaments.extra.platform`` set by a reader, e.g.
    'lichess' for a lichess TRF export) and `site` (PGN Site / TRF 022 city).  Returns
    Utf8: the platform, else the online platform named in the site (one of
    `ONLINE_SITES`, e.g. 'lichess.org', 'chess.com'), 'url' for a web address, or 'INT'
    for a site ending in the code INT (ChessBase/FIDE convention for internet events,
    e.g. 'Nettavisen INT').
    """
    low = pl.col(site).str.to_lowercase()
    return (
        pl.when(pl.col(platform).is_not_null() & (pl.col(platform).str.strip_chars() != ""))
        .then(pl.col(platform).str.strip_chars().str.to_lowercase())
        .when(low.str.contains(_ONLINE_RE))
        .then(low.str.extract(_ONLINE_RE, 1))
        .when(low.str.contains(r"https?://|(?:^|\s)www\."))
        .then(pl.lit("url"))
        .when(pl.col(site).str.contains(r"(?:^|\s)INT$"))
        .then(pl.lit("INT"))
    )


# ---- rounds per day -------------------------------------------------------------------------


def _event_evidence(tournaments: pl.DataFrame) -> pl.DataFrame:
    """Per tournament: what its name says (``__name_cls``, ``__name_ev``) and why it is never
    rated (``never_rated``: 'online:<platform>' from the site, else 'online:name' or
    'not_rated:<kind>' from the name; ``__never_src`` 'site' | 'name'; ``__never_ev``)."""
    cols = {c: pl.col(c) if c in tournaments.columns else pl.lit(None, pl.Utf8) for c in ("name", "site", "platform")}
    t = tournaments.select(pl.col("tournament_id").cast(pl.Int64), *(e.alias(c) for c, e in cols.items()))
    names = t.get_column("name").unique().to_list()
    rows = []
    for n in names:
        rate = name_rate(n)
        never = name_never_rated(n)
        rows.append(
            (
                n,
                rate[0] if rate else None,
                f'name "{n}": {rate[1]}' if rate else None,
                None if never is None else ("online:name" if never[0] == "online" else f"not_rated:{never[0]}"),
                f'name "{n}": {never[1]}' if never else None,
            )
        )
    by_name = pl.DataFrame(
        rows,
        schema={"name": pl.Utf8, "__name_cls": pl.Utf8, "__name_ev": pl.Utf8, "__nn": pl.Utf8, "__nn_ev": pl.Utf8},
        orient="row",
    )
    online = online_platform_expr("site", "platform")
    return (
        t.join(by_name, on="name", how="left", nulls_equal=True)
        .with_columns(online.alias("__online"))
        .select(
            "tournament_id",
            "__name_cls",
            "__name_ev",
            pl.when(pl.col("__online").is_not_null())
            .then(pl.lit("online:") + pl.col("__online"))
            .otherwise(pl.col("__nn"))
            .alias("never_rated"),
            pl.when(pl.col("__online").is_not_null())
            .then(pl.lit("site"))
            .when(pl.col("__nn").is_not_null())
            .then(pl.lit("name"))
            .alias("__never_src"),
            pl.when(pl.col("__online").is_not_null())
            .then(pl.format('site "{}"', pl.coalesce("site", "platform")))
            .otherwise(pl.col("__nn_ev"))
            .alias("__never_ev"),
        )
    )


def _minutes_class(m: pl.Expr) -> pl.Expr:
    """`classify_minutes` as an expression."""
    return (
        pl.when(m.is_null() | (m <= 0))
        .then(None)
        .when(m > 1440)
        .then(pl.lit("correspondence"))
        .when(m >= 60)
        .then(pl.lit("standard"))
        .when(m > 10)
        .then(pl.lit("rapid"))
        .when(m > 3)
        .then(pl.lit("blitz"))
        .otherwise(pl.lit("bullet"))
    )


def classify_games(games: pl.DataFrame, tournaments: pl.DataFrame, default: str = "standard") -> pl.DataFrame:
    """Add the rate of play of every game and where it came from (see the module docstring).

    `games` needs game_id, tournament_id, time_control (and, for rounds per day, game_day
    Date (null unless the date is day-precise), white_id, black_id, played); `tournaments`
    needs tournament_id, time_control, rate_class (and name, site, platform, source_format
    when known).  Returns `games` with:

    * ``rate_class`` Utf8, never null: 'standard' | 'rapid' | 'blitz' | 'bullet' |
      'correspondence' | 'fast' (rapid or blitz, not known which); `default` when nothing
      says;
    * ``tc_minutes`` Float64: minutes for 60 moves, null when no time control;
    * ``rate_source`` Utf8: 'time_control' | 'name' | 'rounds_per_day' | 'assumed', or 'site' /
      'name' for an event never rated; ``rate_evidence`` Utf8: what was read, in words;
    * ``tc_assumed`` Boolean: True when `default` was used (source 'assumed');
    * ``never_rated`` Utf8: null, or why the event is on no FIDE list whatever its rate:
      'online:<platform>' (site; 'online:name' from the name), 'not_rated:<kind>' (simul,
      blindfold, exhibition, odds, chess960).

    Text is mapped on distinct values only (time controls, names).  Never raises on content.
    """
    g_tc = games.select(pl.col("time_control").unique()).get_column("time_control").to_list()
    g_map = pl.DataFrame(
        {"time_control": g_tc, "__g_min": [tag_minutes(v) for v in g_tc]},
        schema={"time_control": pl.Utf8, "__g_min": pl.Float64},
    )
    t = tournaments.select(
        pl.col("tournament_id").cast(pl.Int64),
        pl.col("time_control").alias("__t_text"),
        pl.col("rate_class").alias("__t_class"),
    )
    t_text = t.get_column("__t_text").unique().to_list()
    t_map = pl.DataFrame(
        {"__t_text": t_text, "__t_min": [text_minutes(v) for v in t_text]},
        schema={"__t_text": pl.Utf8, "__t_min": pl.Float64},
    )
    # per tournament (a few thousand rows): its declared class, else its time control's
    known_class = pl.col("__t_class").str.to_lowercase()
    known_class = pl.when(known_class.is_in(list(RATE_CLASSES))).then(known_class)
    t = (
        t.join(t_map, on="__t_text", how="left", nulls_equal=True)
        .with_columns(pl.coalesce(known_class, _minutes_class(pl.col("__t_min"))).alias("__t_res"))
        .with_columns(
            pl.when(pl.col("__t_text").is_not_null())
            .then(pl.format('time control "{}"', pl.col("__t_text")))
            .otherwise(pl.format("declared {}", pl.col("__t_res")))
            .alias("__t_ev")
        )
        .select("tournament_id", "__t_min", "__t_res", "__t_ev")
        .join(_event_evidence(tournaments), on="tournament_id", how="left")
    )
    out = games.with_columns(pl.col("tournament_id").cast(pl.Int64).alias("__tid"))
    if g_map.get_column("time_control").drop_nulls().len():
        out = out.join(g_map, on="time_control", how="left", nulls_equal=True)
        g_min = pl.col("__g_min")
    else:
        # no game carries a time control (TRF files): nothing to look up per game
        g_min = pl.lit(None, pl.Float64)
    out = out.join(t.rename({"tournament_id": "__tid"}), on="__tid", how="left")
    days = fast_games(games, tournaments)
    if days.height:
        out = out.join(days, on="game_id", how="left")
        day_ev = pl.col("__day_ev")
    else:
        day_ev = pl.lit(None, pl.Utf8)
    g_cls = _minutes_class(g_min)
    simul = simul_games(games)
    if simul.height:
        said = g_cls.is_not_null() | pl.col("__t_res").is_not_null() | pl.col("__name_cls").is_not_null()
        is_simul = pl.col("never_rated").is_null() & pl.col("__simul_ev").is_not_null() & ~said
        out = out.join(simul, on="game_id", how="left").with_columns(
            pl.when(is_simul).then(pl.lit("not_rated:simul")).otherwise(pl.col("never_rated")).alias("never_rated"),
            pl.when(is_simul).then(pl.lit("rounds_per_day")).otherwise(pl.col("__never_src")).alias("__never_src"),
            pl.when(is_simul).then(pl.col("__simul_ev")).otherwise(pl.col("__never_ev")).alias("__never_ev"),
        )
    source = (
        pl.when(pl.col("never_rated").is_not_null())
        .then(pl.col("__never_src"))
        .when(g_cls.is_not_null() | pl.col("__t_res").is_not_null())
        .then(pl.lit("time_control"))
        .when(pl.col("__name_cls").is_not_null())
        .then(pl.lit("name"))
        .when(day_ev.is_not_null())
        .then(pl.lit("rounds_per_day"))
        .otherwise(pl.lit("assumed"))
    )
    evidence = (
        pl.when(pl.col("never_rated").is_not_null())
        .then(pl.col("__never_ev"))
        .when(g_cls.is_not_null())
        .then(pl.format('TimeControl "{}"', pl.col("time_control")))
        .when(pl.col("__t_res").is_not_null())
        .then(pl.col("__t_ev"))
        .when(pl.col("__name_cls").is_not_null())
        .then(pl.col("__name_ev"))
        .when(day_ev.is_not_null())
        .then(day_ev)
        .otherwise(pl.lit(f"no time control, nor a name, site or day that says: {default} assumed (--unknown-tc)"))
    )
    resolved = pl.coalesce(
        g_cls, pl.col("__t_res"), pl.col("__name_cls"), pl.when(day_ev.is_not_null()).then(pl.lit(FAST))
    )
    return out.with_columns(
        pl.coalesce(g_min, pl.col("__t_min")).alias("tc_minutes"),
        (source == "assumed").alias("tc_assumed"),
        pl.coalesce(resolved, pl.lit(default)).alias("rate_class"),
        source.alias("rate_source"),
        evidence.alias("rate_evidence"),
    ).drop(
        "__tid", "__g_min", "__t_min", "__t_res", "__t_ev", "__name_cls", "__name_ev", "__never_src", "__never_ev",
        "__day_ev", "__simul_ev", strict=False,
    )  # fmt: skip
