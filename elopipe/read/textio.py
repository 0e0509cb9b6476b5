"""Decoding the bytes of a dropped file into text.

Order, as files in the wild need it: a UTF-8 BOM (or a UTF-16/UTF-32 BOM, which some
Windows tools write), then strict UTF-8, then CP1252 (which maps every byte but five; those
five fall back to Latin-1 so nothing is lost).
Line ends CRLF, CR and LF are all turned into LF; which one the file used is reported.
"""

from __future__ import annotations

from dataclasses import dataclass

CP1252_HOLES = {0x81, 0x8D, 0x8F, 0x90, 0x9D}


@dataclass(frozen=True)
class DecodedText:
    text: str  # LF line ends only
    encoding: str  # 'utf-8-sig' | 'utf-8' | 'cp1252' | 'latin-1'
    newline: str | None  # 'LF' | 'CRLF' | 'CR' | 'mixed' | None (no line end at all)


_WIDE_BOMS = [
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
]


def wide_bom(data: bytes) -> str | None:
    """The UTF-16/UTF-32 encoding a byte-order mark announces, else None."""
    for bom, enc in _WIDE_BOMS:
        if data.startswith(bom):
            return enc
    return None


def decode_bytes(data: bytes) -> DecodedText:
    """Decode `data` (never raises). See the module docstring for the order tried."""
    wide = wide_bom(data)
    if wide is not None:
        bom_len = 4 if wide.startswith("utf-32") else 2
        text, enc = data[bom_len:].decode(wide, errors="replace"), wide
    elif data.startswith(b"\xef\xbb\xbf"):
        try:
            text, enc = data[3:].decode("utf-8"), "utf-8-sig"
        except UnicodeDecodeError:
            text, enc = decode_single_byte(data[3:])
    else:
        try:
            text, enc = data.decode("utf-8"), "utf-8"
        except UnicodeDecodeError:
            text, enc = decode_single_byte(data)
    newline = detect_newline(text)
    if newline != "LF" and newline is not None:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return DecodedText(text=text, encoding=enc, newline=newline)


def decode_single_byte(data: bytes) -> tuple[str, str]:
    """(text, 'cp1252' | 'latin-1'): bytes that are not UTF-8, as CP1252, or as Latin-1 when
    one of CP1252's five unmapped bytes occurs (never raises; one character per byte)."""
    if any(bytes((hole,)) in data for hole in CP1252_HOLES):  # five scans in C, not a step per byte
        return data.decode("latin-1"), "latin-1"
    return data.decode("cp1252"), "cp1252"


def detect_newline(text: str) -> str | None:
    """Which line end a text uses: 'LF', 'CRLF', 'CR', 'mixed' or None."""
    if "\r" not in text:  # one scan instead of three for the usual file
        return "LF" if "\n" in text else None
    crlf = text.count("\r\n")
    cr = text.count("\r") - crlf
    lf = text.count("\n") - crlf
    kinds = [k for k, n in (("CRLF", crlf), ("CR", cr), ("LF", lf)) if n]
    if not kinds:
        return None
    return kinds[0] if len(kinds) == 1 else "mixed"
