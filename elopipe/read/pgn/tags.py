"""The tag section of one game: `[Name "value"]` pairs, read on a fast path when every line is
one plain pair, else line by line with the tolerated faults (tabs, missing quotes, several tags on
one line) recorded as problems.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

TAG_FAST = re.compile(r'\[([A-Za-z0-9_]+) "([^"\\\n]*)"\]')


# One tag at a position, quoted value with escapes, or unquoted value.
_TAG_ONE = re.compile(r'[ \t]*\[[ \t]*([A-Za-z][A-Za-z0-9_]*)[ \t]*(?:"((?:[^"\\\n]|\\.)*)"|([^\]"\n]*?))[ \t]*\]')


_TAG_LOOSE = re.compile(r"[ \t]*\[[ \t]*([A-Za-z][A-Za-z0-9_]*)[ \t]*(.*)$")


_UNESCAPE = re.compile(r"\\([\"\\])")


# longest tag value kept (characters); longer ones are cut, with an error on the game
_MAX_TAG_VALUE = 10_000


@dataclass
class _TagProblems:
    issues: list[tuple[int, str, str, str]] = field(default_factory=list)  # (line offset, code, msg, raw)
    leftover: str = ""  # text after the last tag on a line: movetext


def _unescape(v: str) -> str:
    return _UNESCAPE.sub(r"\1", v) if "\\" in v else v


def _parse_tag_line(line: str, probs: _TagProblems, k: int) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while True:
        m = _TAG_ONE.match(line, pos)
        if m is None:
            break
        name, quoted, bare = m.groups()
        if quoted is None:
            bare = (bare or "").strip()
            probs.issues.append((k, "tag_unquoted", f"tag {name} has an unquoted value", line))
        out.append((name, _unescape(quoted) if quoted is not None else bare))
        pos = m.end()
    rest = line[pos:].strip()
    if not rest:
        if len(out) > 1:
            probs.issues.append((k, "tags_on_one_line", f"{len(out)} tags on one line", line))
        return out
    if out:
        if rest.startswith("["):
            out.extend(_parse_tag_line(rest, probs, k))
            return out
        probs.issues.append((k, "text_after_tag", "text after a tag on the same line read as movetext", line))
        probs.leftover += rest + "\n"
        return out
    m = _TAG_LOOSE.match(line)
    if m is None:  # pragma: no cover - the block regex only passes tag-like lines
        probs.issues.append((k, "tag_unreadable", "unreadable tag line", line))
        return out
    name, rest = m.group(1), m.group(2).rstrip()
    if rest.endswith("]"):
        rest = rest[:-1].rstrip()
    if rest.startswith('"'):
        last = rest.rfind('"')
        if last > 0:
            value = rest[1:last]
            if rest[last + 1 :].strip():
                probs.issues.append((k, "tag_unterminated", f"tag {name}: text after the closing quote", line))
            else:
                probs.issues.append((k, "tag_quotes", f"tag {name}: unescaped quote in value", line))
        else:
            value = rest[1:]
            probs.issues.append((k, "tag_unterminated", f"tag {name}: value without closing quote", line))
        value = _unescape(value)
        if value.endswith("\\"):
            value = value[:-1]
    else:
        value = rest
    out.append((name, value))
    return out


def parse_header(header: str) -> tuple[list[tuple[dict[str, str], int]], _TagProblems]:
    """Tag dicts with the line offset where each starts (several when a tag name repeats)."""
    probs = _TagProblems()
    if not header:
        return [({}, 0)], probs
    pairs = TAG_FAST.findall(header)
    n_lines = header.count("\n") + (0 if header.endswith("\n") else 1)
    if len(pairs) == n_lines == header.count("[") and len(header) <= _MAX_TAG_VALUE:
        tags = dict(pairs)
        if len(tags) == len(pairs):
            return [(tags, 0)], probs
    out: list[tuple[dict[str, str], int]] = []
    cur: dict[str, str] = {}
    cur_start = 0
    for k, line in enumerate(header.split("\n")):
        if not line.strip():
            continue
        long_line = len(line) > _MAX_TAG_VALUE
        if long_line:
            # the tag regexes keep state per character: a 10 MB line took 1.9 GB and 12 s
            probs.issues.append(
                (
                    k,
                    "tag_too_long",
                    f"tag line of {len(line):,} characters: values cut to {_MAX_TAG_VALUE:,} characters",
                    line[:500],
                )
            )
            line = line[: _MAX_TAG_VALUE + 64] + '"]'
        for name, value in _parse_tag_line(line, probs, k):
            if long_line:
                value = value[:_MAX_TAG_VALUE]
            if name in cur:
                out.append((cur, cur_start))
                cur, cur_start = {}, k
            cur[name] = value
    out.append((cur, cur_start))
    return out, probs
