"""TRF team records (trf-format.md §6): TRF16 `013` (name, member start ranks) and TRF-2026 `310`
(team number, name, nickname, strength, match and game points, rank, members) -> `TeamRec`s,
and the team of each member once all `001` rows are read."""

from __future__ import annotations

from typing import Any

from elopipe.read.records import TeamRec
from elopipe.read.trf.blocks import TrfRow
from elopipe.read.trf.fields import TOURNAMENT_REF, column, decimal_or_none, digits, int_or_none
from elopipe.read.trf.issues import IssueLog, shown


class TeamRecords:
    """The teams of one file (`teams`, in file order) and the 310 fields `TeamRec` has no column
    for (`team_extra`, kept in `TournamentRec.extra["teams_310"]`)."""

    def __init__(self, issues: IssueLog) -> None:
        self.issues = issues
        self.teams: list[TeamRec] = []
        self.team_extra: list[dict[str, Any]] = []

    def record_013(self, no: int, line: str) -> None:
        name = column(line, 5, 36).strip() or None
        members = self._members(no, line, 37)
        self.teams.append(TeamRec(TOURNAMENT_REF, None, name, "013", members, None, no))

    def record_310(self, no: int, line: str) -> None:
        team_no = int_or_none(column(line, 5, 7))
        name = column(line, 9, 40).strip() or None
        mp = decimal_or_none(column(line, 55, 60))
        gp = decimal_or_none(column(line, 62, 67))
        members = self._members(no, line, 74)
        self.teams.append(TeamRec(TOURNAMENT_REF, team_no, name, "310", members, mp, no))
        self.team_extra.append(
            {
                "team_no": team_no,
                "name": name,
                "nickname": column(line, 42, 46).strip() or None,
                "strength": column(line, 48, 53).strip() or None,
                "match_points": str(mp) if mp is not None else None,
                "game_points": str(gp) if gp is not None else None,
                "rank": int_or_none(column(line, 69, 71)),
                "line": no,
            }
        )

    def _members(self, no: int, line: str, first_col: int) -> list[int]:
        members: list[int] = []
        col = first_col
        while col <= len(line):
            field = column(line, col, col + 3)
            if field.strip():
                if digits(field.strip()):
                    if int(field):
                        members.append(int(field))
                else:
                    self.issues.add(
                        "trf_bad_team_member",
                        f"team member number {shown(field.strip())} at col {col}",
                        no,
                        "warning",
                        line,
                    )
            col += 5
        return members

    def assign_members(self, rows: dict[int, TrfRow]) -> None:
        """Each listed member's `PlayerRec.team`; unknown start ranks and players in two teams are reported."""
        seen: dict[int, str] = {}
        for team in self.teams:
            for rank in team.member_ranks:
                row = rows.get(rank)
                label = team.name or f"team {team.team_no}"
                if row is None:
                    self.issues.add(
                        "trf_team_unknown_member", f"team {shown(label)} lists unknown start rank {rank}", team.line
                    )
                    continue
                if rank in seen and seen[rank] != label:
                    self.issues.add(
                        "trf_team_member_twice",
                        f"player {rank} listed in teams {shown(seen[rank])} and {shown(label)}",
                        team.line,
                    )
                    continue
                seen[rank] = label
                row.player.team = team.name
