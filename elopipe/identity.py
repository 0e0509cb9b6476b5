"""Player identity: name normalisation and the rules that link a written player to a `player_id`.

Every reader's players go through this module (via `store.load_parsed`), so matching lives here only.
"""

from __future__ import annotations

import re
import unicodedata

# Letters NFKD does not decompose into ASCII.
_FOLD = str.maketrans(
    {
        "ø": "o", "Ø": "o", "ß": "ss", "æ": "ae", "Æ": "ae", "œ": "oe", "Œ": "oe",
        "ł": "l", "Ł": "l", "đ": "d", "Đ": "d", "ð": "d", "Ð": "d", "þ": "th", "Þ": "th",
        "ı": "i", "ŀ": "l",
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
