"""Whether a file's text ends where a finished file ends: a PGN after a game's result, a TRF
after a line break. A copy or download that stopped (or a copy still arriving) ends elsewhere:
`watch` waits for such a file (elopipe.ingest.watcher.arrival), and a version of a stored file
that ends so never replaces it when it lacks some of its games (elopipe.ingest.loader)."""

from __future__ import annotations

import re

# A PGN game's movetext ends with its result; a tag value or a comment ending in "1-0" is
# preceded by a quote or text, not by a space or a closing comment/variation. A bare "1/2" is no
# result: the file stopped inside "1/2-1/2".
PGN_END = re.compile(rb"(?:^|[\s})])(?:1-0|0-1|1/2-1/2|\*)\Z")

# the bytes of the end of a file that `unfinished` needs
TAIL_BYTES = 4096


def unfinished(tail: bytes, fmt: str) -> bool:
    """True when `tail`, the last bytes of a file of format `fmt` ('pgn' or 'trf'), ends where a
    finished file does not: a PGN not with a result marker, a TRF not with a line break (spaces
    or a DOS end-of-file mark may follow). NUL bytes are left out (UTF-16 text reads as ASCII).
    Another format is never unfinished."""
    tail = tail.replace(b"\0", b"")
    if fmt == "pgn":
        return PGN_END.search(tail.rstrip()) is None
    if fmt == "trf":
        return not tail.rstrip(b" \t\x1a").endswith((b"\n", b"\r"))
    return False
