"""The words of docs/schema.md: what each table holds, what recurring columns mean, and the page
itself (`render_markdown`), generated with the tables of `elopipe.store.schema` and the views'
own paragraphs. Run `python -m elopipe.store.schema_docs > docs/schema.md` after a change; a test
checks that the page is current.
"""

from __future__ import annotations

from elopipe.store import views
from elopipe.store.schema import TABLES

TABLE_DOCS: dict[str, str] = {
    "title_norms": "FIDE title norms (GM, IM, WGM, WIM; B.01) of every player of every FIDE standard event rated: "
    "one row per list, event, player and norm type, written with the rating (elopipe.rating.fide.norms_store). Read it "
    "through v_norms.",
    "title_norm_inputs": "One row per event whose title norms were decided (elopipe.rating.fide.norms_store): while "
    "both digests still hold, a rating run keeps the event's title_norms rows instead of deciding them again.",
    "source_files": "The ingest ledger: one row per file (or archive member) ever seen, keyed by the sha256 of its bytes. "
    "The same bytes are never loaded twice; a changed file at the same path replaces the old one (status 'replaced') "
    "when it corrects it: the same event and most of its games, on days in common or, dates moved, every game with its "
    "result (elopipe.ingest.corrections); else both are kept.",
    "ingest_errors": "Everything that could not be read, with file, line, game and reason, and the raw text kept.",
    "tournaments": "One row per tournament (TRF file, or PGN event inside a file).",
    "players": "One row per person after identity resolution (elopipe.identity.resolve).",
    "tournament_players": "A player's entry in a tournament, as the file wrote it (start rank, rating, federation...).",
    "games": "One row per game as a source file wrote it. Unplayed pairings (forfeits) have played = FALSE and are "
    "never rated. Cross-source duplicates are linked in game_sources; engines read the canonical_games view.",
    "unplayed_rounds": "Byes, forfeits and absences per player and round, with the TRF code (H, F, U, Z, +, -, ...).",
    "teams": "Team records of team tournaments (TRF 013 / 310).",
    "player_aliases": "Every spelling of a player seen in a file, the rule that linked it to player_id, and its confidence.",
    "player_merges": "Merges and splits of players, decided by an officer or by a rule; re-applied after every ingest.",
    "game_sources": "Links one canonical game to every source row that is the same game (TRF result, PGN moves, ...).",
    "official_lists": "Imported official rating lists (FIDE TXT/XML, FFE CSV): the base that computed lists start from.",
    "list_import_skips": "Rows of an imported official list that were not stored, with the reason (the latest import"
    " of each file and list date).",
    "rating_runs": "One row per `elopipe rate` run: system, lists recomputed, parameters.",
    "rating_lists": "The computed rating list of each system and list date: one row per player on the list.",
    "rating_changes": "One row per game per player side considered by a rating period: every term of the change.",
    "tournament_ratings": "Per tournament and player: Ro, n, score, Ra, We, W-We, K, the exact change in hundredths, Rp.",
    "rate_of_play": "Per system and event, the rate of play its games were given and where it came from (time"
    " control, name, site, rounds per day, or assumed), with the evidence: elopipe.read.rate_evidence. One row per"
    " (event, class, source); written by the FIDE systems' runs.",
    "rating_checkpoints": "Per FIDE system and rating period, the digest of its inputs and of its stored list, so that "
    "`rate` after new data starts from the first period the data touches, from the engine's state kept in "
    "rating_checkpoint_rows (elopipe.rating.fide.checkpoint); written by every run that computes the lists from the first "
    "period, removed by a preview or a run that left events out.",
    "rating_checkpoint_rows": "What the FIDE engine carries from a period to the next, as it stood after each period: "
    "the players whose state changed in it, the games unrated players pooled in it, the players started from a file's "
    "rating in it (elopipe.rating.fide.checkpoint). The state before period t is each player's latest row before t.",
    "rating_discrepancies": "Ratings written in files that disagree with the list in force at the tournament's start.",
    "scenarios": "What-if scenarios (`elopipe rate --scenario NAME`): their rows are stored under the system "
    "'BASE@NAME' and never replace the plain system's lists (elopipe.rating.scenarios).",
    "ffe_details": "FFE per-period working: X, p, Z, P, compatible and incompatible game counts, method, new rating.",
}


# Meanings of columns that recur across tables, used where a column has no comment of its own.
COLUMN_DOCS: dict[str, str] = {
    "tournament_id": "tournaments.tournament_id",
    "player_id": "players.player_id (after identity resolution and merges)",
    "file_id": "source_files.file_id of the file the row came from",
    "system": "rating system: 'fide', 'fide-rapid', 'fide-blitz', 'ffe', 'ffe-rapid', 'elo', 'glicko2'; "
    "a scenario's rows: 'BASE@NAME' (e.g. 'fide@v2017')",
    "list_date": "date of the rating list (1st of the month for FIDE)",
    "federation": "three-letter federation code (FIDE), NULL when unknown or a club code",
    "birth_year": "year of birth",
    "birth_date": "full date of birth when the source gives it",
    "title": "FIDE title (GM, IM, FM, CM, WGM, WIM, WFM, WCM)",
    "name": "name as written by the source",
    "line": "1-based line in the decoded source file",
    "sex": "'m' or 'w'",
    "score": "points scored (1, 0.5, 0)",
    "run_id": "rating_runs.run_id",
    "national_id": "national federation ID, e.g. FFE licence 'A12345'",
    "name_as_written": "the player's name exactly as the file wrote it",
    "k": "development coefficient K",
    "game_id": "games.game_id",
    "fide_id": "FIDE ID; NULL when unknown",
    "young": "FFE: player is in a young category (U8..U20) for the season",
    "white_rating_in_file": "White's rating as the file wrote it (PGN WhiteElo); NULL = unrated/blank",
    "black_rating_in_file": "Black's rating as the file wrote it (PGN BlackElo); NULL = unrated/blank",
    "white_id": "players.player_id of White",
    "black_id": "players.player_id of Black",
    "black_score": "Black's points; NULL for '*'",
    "w_title": "women's title (WGM, WIM, ...)",
    "o_title": "other titles (IA, FA, IO, ...)",
    "foa_title": "FIDE Online Arena title",
    "w_minus_pd": "W - PD for this game (score minus expected score)",
    "unrated": "the player had no rating in force",
    "time_control": "time control as written",
    "termination": "PGN Termination tag",
    "team_no": "team number in the file",
    "team": "team name",
    "started_at": "when the run started",
    "start_date": "first day of the tournament",
    "end_date": "last day of the tournament",
    "source_file": "path of the imported list file",
    "sha256": "SHA-256 of the file's bytes (decompressed member for archives); '' when unreadable",
    "rules_forced": "rule version forced with --rules, else NULL",
    "rounds": "number of rounds",
    "round": "round number",
    "reason": "reason, in words",
    "rating": "rating in rating points",
    "r_old": "rating before the period",
    "r_new": "rating after the period",
    "points_in_file": "total points the file declares",
    "points": "points",
    "ply_count": "half-moves in the main line",
    "params": "engine parameters used (JSON)",
    "opponent_id": "players.player_id of the opponent",
    "name_key": "identity.name_key(name): folded, order-independent",
    "n_unplayed": "unplayed rounds loaded from the file",
    "n_tournaments": "tournaments loaded from the file",
    "n_players": "distinct players in the file",
    "n_games": "games loaded from the file",
    "n_errors": "error-severity problems found in the file",
    "n_compatible": "FFE compatible games in the period",
    "n_incompatible": "FFE incompatible games in the period (see rating_changes.reason)",
    "message": "what is wrong, in words",
    "merged_id": "player_id that was merged away (merge) or split off (split)",
    "merge_id": "merge decision id",
    "kept_id": "player_id that remains",
    "match_rule": "identity or dedup rule that made the link",
    "list_rating": "rating on the list in force",
    "file_rating": "rating written in the file",
    "last_list": "last list date computed by the run",
    "first_list": "first list date computed by the run",
    "is_team": "the tournament is a team event",
    "ingested_at": "when the file was loaded",
    "games": "rated games",
    "game_date": "date of the game (first possible day when partial; see date_precision)",
    "first_file_id": "file in which the player was first seen",
    "final_rank": "final rank the file declares",
    "fide_id_in_file": "FIDE ID as the file wrote it",
    "ever_2400": "player has reached 2400 (K = 10 for ever, FIDE 8.3.3)",
    "error_id": "error row id",
    "eco": "ECO opening code",
    "decided_at": "when the decision was recorded",
    "confidence": "confidence of the link, 0..1",
    "city": "city or site",
    "chief_arbiter": "chief arbiter (TRF 102)",
    "bytes": "size in bytes (decompressed; of a .gz or .bz2 that could not be read, on disk)",
    "board": "board number",
}


def render_markdown() -> str:
    """docs/schema.md, generated from TABLES and TABLE_DOCS (and the views' own comments)."""
    out = [
        "# The elopipe store (DuckDB)",
        "",
        "Generated by `python -m elopipe.store.schema_docs > docs/schema.md` from `elopipe/store/schema.py`, the one place",
        "the schema lives; a test checks that this file is current. Ratings are in rating points; scores in",
        "points; `*_x100` columns hold exact values in hundredths.",
        "",
        'Open it read-only: `elopipe sql "SELECT ..."`, or `duckdb -readonly elopipe.duckdb`. DuckDB lets one',
        "process write the file or several read it, not both: `elopipe sql` waits for a writer (`--wait`).",
        "",
        "## Tables",
        "",
    ]
    for name, cols in TABLES.items():
        out += [f"### `{name}`", "", TABLE_DOCS.get(name, ""), "", "| column | type | meaning |", "|---|---|---|"]
        for line in cols.strip().splitlines():
            body, _, comment = line.partition("--")
            body = body.strip().rstrip(",")
            if not body or body.upper().startswith("PRIMARY KEY"):
                if body:
                    out.append(f"| *{body}* | | |")
                continue
            col, _, typ = body.partition(" ")
            meaning = comment.strip() or COLUMN_DOCS.get(col, "")
            out.append(f"| `{col}` | {typ.strip()} | {meaning.replace('|', '/')} |")
        out.append("")
    out += ["## Views", ""]
    docs = getattr(views, "VIEW_DOCS", {})
    for name in views.VIEWS:
        out += [f"### `{name}`", "", docs.get(name, ""), ""]
    return "\n".join(out).rstrip() + "\n"


if __name__ == "__main__":
    print(render_markdown(), end="")
