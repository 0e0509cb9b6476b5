"""What a publish found of the lists an output folder holds that the store no longer does
(`elopipe.publish.gone`), and the line that says it."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from elopipe.runtime.words import plural

SHOWN = 3  # list dates (and files kept) named in the line, the rest counted


@dataclass
class GoneLists:
    """The lists of `system` an output folder held that the store no longer holds: `dates`
    (newest first); `removed` False when the folder is shared with another store, so that no
    file was removed; `files` the files removed (relative to the folder), `left` those of the
    lists kept because they were not as elopipe wrote them."""

    system: str
    dates: list[dt.date] = field(default_factory=list)
    removed: bool = True
    files: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)

    def line(self, out: object) -> str:
        """One line for the user (`out`: the folder as the user named it); empty when no list is
        gone. `fide: 2 lists removed from out (2022-08-01, 2022-07-01): no game is rated on them
        any more`."""
        if not self.dates:
            return ""
        shown = ", ".join(d.isoformat() for d in self.dates[:SHOWN])
        more = f" and {len(self.dates) - SHOWN} more" if len(self.dates) > SHOWN else ""
        them = "it" if len(self.dates) == 1 else "them"
        lists = plural(len(self.dates), "list")
        if not self.removed:
            return (
                f"{self.system}: {lists} in {out} no longer in this store ({shown}{more}): not removed, as another"
                f" store publishes into {out} too; remove {them} by hand if no store holds {them}"
            )
        line = f"{self.system}: {lists} removed from {out} ({shown}{more}): no game is rated on {them} any more"
        if self.left:
            names = ", ".join(self.left[:SHOWN]) + (
                f" and {len(self.left) - SHOWN} more" if len(self.left) > SHOWN else ""
            )
            line += f"; {plural(len(self.left), 'file')} kept, not as elopipe wrote it: {names}"
        return line
