"""Checks of a TRF file's paired rounds (trf-format.md §6 and §8), run by `RoundResolver.resolve`
once every block is a game or an unplayed round: byes written only in TRF-2026 240 records, the
declared points (cols 81-84) against the blocks, one pairing-allocated bye per round.
Each adds issues; only `check_240` changes the rounds (it adds the byes found only in 240)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from decimal import Decimal

from elopipe.read.records import TournamentRec, UnplayedRec
from elopipe.read.trf import game_rows as G
from elopipe.read.trf.blocks import TrfRow
from elopipe.read.trf.codes import ZERO
from elopipe.read.trf.fields import TOURNAMENT_REF
from elopipe.read.trf.issues import IssueLog, shown


def check_240(
    unplayed: list[UnplayedRec],
    byes_240: list[tuple[int, str]],
    rows: dict[int, TrfRow],
    issues: IssueLog,
    bye_score: Callable[[str], Decimal | None],
) -> None:
    """TRF-2026 240 byes are repeated in the 001 rows; a bye only in 240 is added to `unplayed`
    (valued by `bye_score`), which is then sorted by round and player. Not for team files."""
    by_key = {(u.player_ref, u.round): u for u in unplayed}
    for no, entry in byes_240:
        kind, rnd_txt, rank_txt = entry.split(":")
        rnd, rank = int(rnd_txt), int(rank_txt)
        if rank not in rows:
            issues.add("trf_240_unknown_player", f"240 bye for unknown start rank {rank}", no)
            continue
        u = by_key.get((rank, rnd))
        if u is None or u.code == " ":
            if u is not None:
                unplayed.remove(u)
            new = UnplayedRec(TOURNAMENT_REF, rank, rnd, kind, bye_score(kind), None, no)
            unplayed.append(new)
            issues.add(
                "trf_240_only", f"round {rnd}: {kind} bye of player {rank} only in record 240; added", no, "info"
            )
        elif u.code != kind:
            issues.add(
                "trf_240_disagree",
                f"round {rnd}: record 240 says {kind} for player {rank}, the 001 row says {shown(u.code)}",
                no,
            )
    unplayed.sort(key=lambda u: (u.round, u.player_ref))


def check_points(
    unplayed: list[UnplayedRec],
    games: list[list[object]],
    rows: dict[int, TrfRow],
    tour: TournamentRec,
    issues: IssueLog,
) -> None:
    """Declared points (cols 81-84) against the round blocks under 1/½/0 (§8.4); informational.
    The number of players who differ goes to `tour.extra["points_mismatch_players"]`."""
    if "scoring" in tour.extra:
        return  # non-default scoring: standings points are on another scale
    computed: dict[int, Decimal] = defaultdict(lambda: ZERO)
    unknown: dict[int, int] = defaultdict(int)
    for g in games:  # rows of `game_rows.COLUMNS`
        if g[G.PLAYED]:
            computed[g[G.WHITE_REF] or 0] += g[G.WHITE_SCORE] or ZERO  # type: ignore[index, operator]
            computed[g[G.BLACK_REF] or 0] += g[G.BLACK_SCORE] or ZERO  # type: ignore[index, operator]
    for u in unplayed:
        if u.score is None:
            if u.code != "*":
                unknown[u.player_ref] += 1
        else:
            computed[u.player_ref] += u.score
    declared = {r: row.player.points for r, row in rows.items() if row.player.points is not None}
    if not declared:
        return
    has_results = any(computed.values())
    if has_results and all(v == 0 for v in declared.values()):
        issues.add(
            "trf_points_all_zero",
            "declared points are 0.0 for every player although the rounds have results",
            None,
            "warning",
        )
        return
    mismatches = 0
    for rank, pts in sorted(declared.items()):
        calc = computed[rank]
        if pts != calc:
            mismatches += 1
            note = f" ({unknown[rank]} round(s) of unknown value)" if unknown[rank] else ""
            issues.add(
                "trf_points_mismatch",
                f"player {rank}: declared points {pts}, round blocks give {calc}{note}",
                rows[rank].line,
                "info",
            )
    if mismatches:
        tour.extra["points_mismatch_players"] = mismatches


def check_one_pab_per_round(unplayed: list[UnplayedRec], rows: dict[int, TrfRow], issues: IssueLog) -> None:
    """At most one pairing-allocated bye per round (§8.3); not for team files, which give one per board."""
    per_round: dict[int, list[int]] = defaultdict(list)
    for u in unplayed:
        if u.code == "U":
            per_round[u.round].append(u.player_ref)
    for rnd, players in sorted(per_round.items()):
        if len(players) > 1:
            issues.add(
                "trf_several_pab",
                f"round {rnd}: {len(players)} pairing-allocated byes (U) for players {players}",
                rows[players[0]].line,
                "info",
            )
