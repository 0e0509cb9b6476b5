"""Issue log of one TRF file: problems become `IngestIssue`s, repeated quirks are merged.

A file with 100 rows that write sex 'M' gets one issue "(100 lines: 14, 15, ...)" instead of 100.
"""

from __future__ import annotations

from collections import defaultdict

from elopipe.read.control_chars import shown_value
from elopipe.read.records import IngestIssue


class IssueLog:
    """Issues of one file. `add` records one issue; `quirk` groups the hits of one code and
    message into one issue at `flush` (one code may carry several messages: the unknown records
    'ABC' and 'XYZ' are two issues of code trf_unknown_record)."""

    def __init__(self) -> None:
        self.items: list[IngestIssue] = []
        self._grouped: dict[tuple[str, str], list[tuple[int | None, str | None]]] = defaultdict(list)
        self._group_meta: dict[tuple[str, str], str] = {}

    def add(
        self, code: str, message: str, line: int | None = None, severity: str = "warning", raw: str | None = None
    ) -> None:
        self.items.append(IngestIssue(code=code, message=message, line=line, severity=severity, raw=excerpt(raw)))

    def quirk(
        self, code: str, message: str, line: int | None, raw: str | None = None, severity: str = "warning"
    ) -> None:
        self._grouped[code, message].append((line, raw))
        self._group_meta.setdefault((code, message), severity)

    def flush(self) -> list[IngestIssue]:
        for (code, message), hits in self._grouped.items():
            severity = self._group_meta[code, message]
            lines = [ln for ln, _ in hits if ln is not None]
            shown = ", ".join(str(n) for n in lines[:10]) + (", ..." if len(lines) > 10 else "")
            suffix = f" ({len(hits)} line{'s' if len(hits) != 1 else ''}: {shown})" if len(hits) > 1 else ""
            self.items.append(
                IngestIssue(
                    code=code,
                    message=message + suffix,
                    line=lines[0] if lines else None,
                    severity=severity,
                    raw=excerpt(hits[0][1]),
                )
            )
        self._grouped.clear()
        return self.items


def excerpt(raw: str | None) -> str | None:
    return None if raw is None else raw[:500]


def shown(value: object) -> str:
    """`value` from a file, quoted for a message (`control_chars.shown_value`)."""
    return shown_value(value)
