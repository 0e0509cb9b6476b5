"""Name keys: the folded, order-free forms by which the store matches people and events.

Pure text functions, used where files are read (tournament event keys), where rows are built for
the store (`players.name_key`), in the store's SQL (`name_key_sql`) and by identity resolution.

* `fold`: case, accents, ø→o, ß→ss, punctuation.
* `name_key`: order-free ('Carlsen, Magnus' = 'Magnus Carlsen' = 'CARLSEN Magnus').
* `names_compatible`: initials ('Carlsen,M' ~ 'Carlsen, Magnus').
* `name_key_sql`: the same key in DuckDB SQL, for bulk list imports.
* `event_key`: a tournament name without years, editions and filler words.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from elopipe.read.given_names import forms_of

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
# Letters and digits of every script stay (Cyrillic, CJK, Hebrew, Arabic names must not fold to
# nothing); everything else but the comma becomes a space.
_NON_ALNUM = re.compile(r"[^\w, ]+|_+")
_SPACES = re.compile(r"\s+")
# lower-case ASCII words, one blank (or a comma and a blank) between them: already folded
_FOLDED = re.compile(r"[a-z]+(?:,? [a-z]+)*")


def fold(text: str) -> str:
    """Lower-case fold: Latin accents stripped, ø→o, ß→ss; punctuation other than commas removed.
    Letters of other scripts are kept as they are (lower-cased where the script has case)."""
    if text.isascii():  # nothing to decompose or strip: the same result, without the loop per character
        text = text.lower()
        if _FOLDED.fullmatch(text):  # 'smith, john': nothing below would change it
            return text
    else:
        text = unicodedata.normalize("NFKD", text.translate(_FOLD))
        text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    text = text.replace("-", " ").replace(".", " ").replace("'", "")
    text = _NON_ALNUM.sub(" ", text)
    return _SPACES.sub(" ", text).strip()


@functools.lru_cache(maxsize=1 << 16)
def name_key(name: str) -> str:
    """Order-independent key of a person's name.

    'Carlsen, Magnus', 'Carlsen,Magnus', 'Magnus Carlsen' and 'CARLSEN Magnus' all give
    'carlsen magnus': the folded name parts, sorted. Initials stay as one letter.
    """
    # cached: a file's resolution keys each written name several times, and names repeat
    parts = [p for p in fold(name).replace(",", " ").split(" ") if p]
    return " ".join(sorted(parts))


def name_key_sql(expr: str) -> str:
    """SQL (DuckDB) expression computing `name_key` of the VARCHAR expression `expr`, for bulk loads
    (official lists). Same result as `name_key` for Latin-script names."""
    multi = [("ß", "ss"), ("æ", "ae"), ("Æ", "ae"), ("œ", "oe"), ("Œ", "oe"), ("þ", "th"), ("Þ", "th")]
    single_from = "øØłŁđĐðÐıŀ"
    single_to = "oollddddil"
    inner = f"translate({expr}, '{single_from}', '{single_to}')"
    for a, b in multi:
        inner = f"replace({inner}, '{a}', '{b}')"
    inner = f"replace(lower(strip_accents({inner})), '''', '')"
    inner = f"regexp_replace({inner}, '[^a-z0-9]+', ' ', 'g')"
    return f"array_to_string(list_sort(list_filter(string_split({inner}, ' '), lambda t: t <> '')), ' ')"


# An abbreviated given name: 'M' (Carlsen,M), 'Hi' (Nakamura,Hi), 'J K' (Duda, J.-K.)
ABBREV_MAX = 2


def _covers(short: list[str], long: list[str]) -> bool:
    """True when every token of `short` is a token of `long` or an abbreviation (prefix of at most
    two letters) of a distinct token of `long`, with at least one full token in common and at
    least one abbreviation used or one token of `long` left over."""
    if len(short) < 2:
        return False
    rest = list(long)
    exact = 0
    abbrevs = []
    for t in short:
        if t in rest:
            rest.remove(t)
            if len(t) > ABBREV_MAX:
                exact += 1
        else:
            abbrevs.append(t)
    if exact == 0:
        return False
    for t in sorted(abbrevs, key=len, reverse=True):
        if len(t) > ABBREV_MAX:
            return False
        hit = next((u for u in rest if u.startswith(t) and len(u) > len(t)), None)
        if hit is None:
            return False
        rest.remove(hit)
    return bool(abbrevs) or bool(rest)


def names_compatible(a: str, b: str) -> bool:
    """True when two name keys can be the same person by abbreviation: 'carlsen m' ~ 'carlsen
    magnus', 'duda j' ~ 'duda jan krzysztof', 'hi nakamura' ~ 'hikaru nakamura'. Equal keys are
    not 'compatible' here (that is the exact-name rule)."""
    if a == b or not a or not b:
        return False
    ta, tb = a.split(" "), b.split(" ")
    return _covers(ta, tb) or _covers(tb, ta)


_EVENT_STOP = {"the", "of", "de", "del", "la", "le", "du", "der", "im", "in", "and", "et", "chess"}


def event_key(name: str | None) -> str:
    """Key of a tournament name for matching two sources of the same event: folded words, without
    numbers (years, editions) or filler words, sorted. '' when nothing is left."""
    if not name:
        return ""
    return _event_key(name)


def _event_key(name: str) -> str:
    parts = {p for p in fold(name).replace(",", " ").split(" ") if p and not p.isdigit()}
    return " ".join(sorted(parts - _EVENT_STOP))


@functools.lru_cache(maxsize=1 << 16)
def _surname_splits(written: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The (surname without spaces, given-name tokens) readings of a written name, folded: the
    part before the comma of 'So, Wesley' / 'So,W'; without a comma, the last word or the first
    ('Wesley So', 'So Wesley'). Hyphens and dots separate given names ('Duda, J.-K.' gives 'j',
    'k'). Cached: `same_game` compares the spellings of one day's games, the same names many times."""
    if "," in written:
        sur, _, given = written.partition(",")
        readings = [(fold(sur), fold(given).replace(",", " ").split())]
    else:
        words = fold(written).split()
        if len(words) < 2:
            return ()
        readings = [(words[-1], words[:-1]), (" ".join(words[1:]), words[:1]), (words[0], words[1:])]
    return tuple((s.replace(" ", ""), tuple(g)) for s, g in readings if s and g)


def _given_agree(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Given names agree: in order, of each two tokens one begins the other ('w' ~ 'wesley',
    'hi' ~ 'hikaru', 'geo' ~ 'georg', 'j k' ~ 'jan krzysztof'), also through a familiar form
    ('tony' ~ 'anthony', 'a' ~ 'tony': `elopipe.read.given_names`); the longer list's extra names
    are unknown to the other source, not a contradiction."""
    return all(_token_agree(t, u) for t, u in zip(a, b, strict=False))


def _token_agree(t: str, u: str) -> bool:
    if t.startswith(u) or u.startswith(t):
        return True
    # one step only: a form of one name, or its initials, is the other name ('ted' ~ 'edward',
    # 'ted' ~ 'theodore'), but two names that share a form are not one ('edward' / 'theodore')
    return any(x.startswith(u) for x in forms_of(t)) or any(y.startswith(t) for y in forms_of(u))


def same_surname_initials(a: str, b: str) -> bool:
    """True when two written names can be one person as two sources of one game write him: the
    same surname, and given names or initials that agree ('So,W' ~ 'So, Wesley', 'Nakamura,Hi' ~
    'Nakamura, Hikaru', 'Meier,Geo' ~ 'Meier, Georg'), or equal name keys. Looser than
    `names_compatible` (a two-letter surname, an initial of three letters): it is used only with
    the evidence of a game both sources hold (`elopipe.identity.same_game`), never alone.
    'So,W' and 'Sokolov,W', 'Wang,Hao' and 'Wang,Hua' do not agree; a surname alone ('So') agrees
    with nothing but itself. A familiar form agrees with the full name ('Kosten, Tony' ~
    'Kosten, Anthony')."""
    if name_key(a) == name_key(b):
        return bool(name_key(a))
    return any(sa == sb and _given_agree(ga, gb) for sa, ga in _surname_splits(a) for sb, gb in _surname_splits(b))
