"""Whether the steps after a file could change whom a later file's players are linked to.

Loaded one by one, each file is followed by the officers' decisions, consolidation (merges of
namesakes and of abbreviated names within an event: `identity.consolidate`) and the refresh of
its players' facts (`identity.facts`); the next file is resolved against the store they leave.
A batch resolves its files in one pass (`resolve.resolve_batch`), carrying the store's state
from file to file in memory, and runs those steps once at its end. The two give the same store
when the steps would have changed nothing the next files' resolution reads:

* no merge: no touched player shares a spelling with another player, nor has a spelling
  abbreviation-compatible with another player's (`names_compatible`), among the players the
  batch's resolution knows (those of its name keys and identifiers, and of the events near its
  tournaments: every player consolidation could pair with a touched one). Players are only
  added and spellings only gained while a batch is resolved, so a pair absent at the end of a
  run of files was absent after each of its files;
* no fact that resolution compares changes: a written federation or birth year is the one the
  player already has, or the player had none (then the refresh gives the written one, as the
  resolution's own record does);
* no player's name key changes (a fuller spelling), and no player is created beside a namesake
  or linked by an abbreviated name (either may give consolidation a pair);
* no officer's split is stored (a split is re-applied to the files' rows by the decisions).

`Settling` records the last three while a file is resolved and checks the first on demand.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from elopipe.read.names import names_compatible


class _Known(Protocol):
    """A player as resolution knows it (`known.Known`)."""

    @property
    def player_id(self) -> int: ...
    @property
    def name_key(self) -> str: ...
    @property
    def federation(self) -> str | None: ...
    @property
    def birth_year(self) -> int | None: ...


class _Tokens(Protocol):
    def candidates(self, key: str) -> set[int]: ...


class _Index(Protocol):
    """Resolution's index of known players (`known.Index`)."""

    @property
    def by_pid(self) -> Mapping[int, Sequence[_Known]]: ...
    @property
    def by_key(self) -> Mapping[str, Sequence[_Known]]: ...
    @property
    def tokens(self) -> _Tokens: ...


class Settling:
    """The players a run of resolved files touched, and whether anything seen so far could give
    the steps after a file work that a later file's resolution would see (module docstring).
    Once unsettled, a run stays so."""

    def __init__(self, index: _Index) -> None:
        self.index = index
        self.unsettled = False
        self._pending: set[int] = set()  # touched players not yet checked for pairs

    def touch(self, player_ids: Iterable[int]) -> None:
        if not self.unsettled:
            self._pending.update(player_ids)

    def facts(self, known: _Known, federation: str | None, birth_year: int | None) -> None:
        """A written player linked to `known` (before its record is enriched): unsettled when it
        writes a federation or birth year other than one the player has."""
        for s in self.index.by_pid.get(known.player_id, [known]):
            if (federation and s.federation and federation != s.federation) or (
                birth_year and s.birth_year and birth_year != s.birth_year
            ):
                self.unsettled = True

    def settled(self) -> bool:
        """True when the steps after the files resolved so far would change nothing a later
        file's resolution reads (module docstring)."""
        if not self.unsettled:
            self.unsettled = any(self._paired(pid) for pid in self._pending)
            self._pending.clear()
        return not self.unsettled

    def _paired(self, pid: int) -> bool:
        """Whether player `pid` has a spelling another known player spells too, or one that is
        abbreviation-compatible with another's."""
        index = self.index
        for s in index.by_pid.get(pid, ()):
            if not s.name_key:
                continue
            if any(c.player_id != pid for c in index.by_key.get(s.name_key, ())):
                return True
            for other in index.tokens.candidates(s.name_key):
                if other != pid and any(names_compatible(s.name_key, c.name_key) for c in index.by_pid.get(other, ())):
                    return True
        return False
