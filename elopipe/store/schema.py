"""The DuckDB schema of elopipe: every table, in one place.

`docs/schema.md` documents each table and column, generated from here and from the words of
`schema_docs` (`python -m elopipe.store.schema_docs > docs/schema.md`); a test keeps the two in step.
Upgrades of a store made by an older version are in `schema_upgrade`.
`ensure_schema(con)` is idempotent: it creates what is missing and never drops.

Units: ratings are rating points (INTEGER); a game's score is points (DECIMAL(2,1));
exact sums that the regulations round are stored in hundredths (``*_x100``
BIGINT) or as DECIMAL with enough places that nothing is lost.  Sums over a
tournament (points, score, We, W - We) are DECIMAL(18, ·): a file is capped at
512 MB, so at most some 50 million rounds, and 18 digits hold any sum it can carry
(DuckDB stores DECIMAL(18, ·) in 8 bytes, like BIGINT).
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib

import duckdb

from elopipe.store import schema_upgrade, views

SEQUENCES = [
    "file_id_seq",
    "tournament_id_seq",
    "player_id_seq",
    "game_id_seq",
    "error_id_seq",
    "merge_id_seq",
    "run_id_seq",
]

TABLES: dict[str, str] = {
    # ---- ingest ledger -------------------------------------------------------
    "source_files": """
        file_id        INTEGER PRIMARY KEY,
        sha256         VARCHAR NOT NULL,
        path           VARCHAR NOT NULL,     -- as given on the command line, resolved
        member         VARCHAR,              -- member name inside a .zip/.gz/.bz2, else NULL; a zip's second entry of one name: 'NAME (member N)', N its 1-based place in the archive
        format         VARCHAR NOT NULL,     -- 'pgn' | 'trf' | 'unknown'
        bytes          BIGINT NOT NULL,
        encoding       VARCHAR,              -- 'utf-8-sig' | 'utf-8' | 'cp1252' | NULL if undecodable
        newline        VARCHAR,              -- 'LF' | 'CRLF' | 'CR' | 'mixed' | NULL
        ingested_at    TIMESTAMP NOT NULL,
        status         VARCHAR NOT NULL,     -- 'loaded' | 'partial' | 'rejected' | 'replaced' (by a corrected version) | 'duplicate' (same bytes as an earlier file, under another name; nothing loaded)
        n_tournaments  INTEGER DEFAULT 0,
        n_players      INTEGER DEFAULT 0,
        n_games        INTEGER DEFAULT 0,
        n_unplayed     INTEGER DEFAULT 0,
        n_errors       INTEGER DEFAULT 0,
        reason         VARCHAR,              -- why rejected / partial, one line
        replaced_by    INTEGER,              -- file_id of the correction that replaced it
        results_only   BOOLEAN               -- TRUE: a PGN results export (games, none showing a move: their moves are unknown, ply_count NULL, flag 'moves_unknown'); NULL in a store older than this column
    """,
    "ingest_errors": """
        error_id       BIGINT PRIMARY KEY,
        file_id        INTEGER NOT NULL,
        line           INTEGER,              -- 1-based line in the decoded file
        game_index     INTEGER,              -- 0-based game number in a PGN file
        severity       VARCHAR NOT NULL,     -- 'error' | 'warning' | 'info'
        code           VARCHAR NOT NULL,     -- short machine code, e.g. 'illegal_move'
        message        VARCHAR NOT NULL,
        raw            VARCHAR               -- excerpt of the offending text of a loaded file; NULL for a rejected file (its bytes never enter the store)
    """,
    # ---- tournaments, players, games ----------------------------------------
    "tournaments": """
        tournament_id  INTEGER PRIMARY KEY,
        file_id        INTEGER NOT NULL,
        source_format  VARCHAR NOT NULL,     -- 'pgn' | 'trf'
        name           VARCHAR,
        city           VARCHAR,
        federation     VARCHAR,
        start_date     DATE,
        end_date       DATE,
        rounds         INTEGER,
        time_control   VARCHAR,              -- as written (TRF 122/222, PGN TimeControl)
        rate_class     VARCHAR,              -- 'standard' | 'rapid' | 'blitz' | NULL (unknown)
        tournament_type VARCHAR,             -- TRF 092 or PGN EventType
        chief_arbiter  VARCHAR,
        is_team        BOOLEAN DEFAULT FALSE,
        extra          JSON,                 -- every other header record / tag
        event_key      VARCHAR,              -- identity.event_key(name): folded words, no numbers ('' when none); matches two sources of one event
        first_day      DATE,                 -- first day of play: start_date, else the first day-precise game date, else end_date (NULL: unknown)
        last_day       DATE,                 -- last day of play: end_date, else the last day-precise game date, else start_date
        event_id       INTEGER               -- the event this tournament is a part of, held in several files (elopipe.identity.events): its lowest tournament_id; NULL when it is no part of another. Rating and reports read the event
    """,
    "players": """
        player_id      INTEGER PRIMARY KEY,
        fide_id        BIGINT,               -- NULL when unknown (0/blank in files)
        national_id    VARCHAR,              -- e.g. FFE licence 'A12345'
        name           VARCHAR NOT NULL,     -- fullest spelling seen (identity: 'Carlsen, Magnus' over 'Carlsen,M')
        name_key       VARCHAR NOT NULL,     -- identity.name_key(name)
        federation     VARCHAR,
        sex            VARCHAR,              -- 'm' | 'w' | NULL
        birth_date     DATE,
        birth_year     INTEGER,
        title          VARCHAR,
        first_file_id  INTEGER,
        merged_into    INTEGER               -- merged into this player (officer or rule, see player_merges)
    """,
    "tournament_players": """
        tournament_id  INTEGER NOT NULL,
        player_id      INTEGER NOT NULL,
        start_rank     INTEGER,              -- TRF starting rank; PGN: NULL
        name_as_written VARCHAR,
        fide_id_in_file BIGINT,
        rating_in_file INTEGER,              -- FIDE rating written in the file; NULL = unrated
        national_rating INTEGER,             -- TRF-26 NRS / national rating when present
        national_rating_flag VARCHAR,        -- FFE 'F' | 'N' | 'E' when present
        federation     VARCHAR,
        title          VARCHAR,
        sex            VARCHAR,
        birth_date     DATE,
        birth_year     INTEGER,
        points_in_file DECIMAL(18,1),
        final_rank     INTEGER,
        team           VARCHAR,
        file_id        INTEGER NOT NULL,
        line           INTEGER,
        PRIMARY KEY (tournament_id, player_id)
    """,
    "games": """
        game_id        BIGINT PRIMARY KEY,
        tournament_id  INTEGER NOT NULL,
        file_id        INTEGER NOT NULL,
        line           INTEGER,              -- 1-based line where the game (PGN) or row (TRF) starts
        game_index     INTEGER,              -- 0-based order of the game inside its file
        round          INTEGER,              -- main round number, NULL if unknown
        round_label    VARCHAR,              -- as written ('3', '3.1', '?')
        board          INTEGER,
        game_date      DATE,
        date_precision VARCHAR,              -- 'day' | 'month' | 'year' | 'none'
        white_id       INTEGER,
        black_id       INTEGER,
        result         VARCHAR NOT NULL,     -- '1-0' | '0-1' | '1/2-1/2' | '*' | '0-0' (double forfeit)
        result_raw     VARCHAR,              -- as written, before normalisation
        result_marker  VARCHAR,              -- PGN: result marker ending the movetext, as written (NULL if none)
        white_score    DECIMAL(2,1),         -- NULL for '*'
        black_score    DECIMAL(2,1),
        played         BOOLEAN NOT NULL,     -- FALSE: forfeit / not played over the board
        unplayed_code  VARCHAR,              -- TRF code ('+', '-', '=' ...) or 'forfeit' for PGN
        white_rating_in_file INTEGER,
        black_rating_in_file INTEGER,
        movetext_hash  VARCHAR,              -- sha1 of normalised SAN movetext; NULL when no moves
        ply_count      INTEGER,
        eco            VARCHAR,
        time_control   VARCHAR,
        variant        VARCHAR,              -- NULL = standard chess
        fen            VARCHAR,              -- SetUp/FEN start position when given
        termination    VARCHAR,
        flags          VARCHAR[],            -- e.g. ['result_tag_mismatch', 'trf_sides_disagree']
        headers        JSON USING COMPRESSION zstd  -- every PGN tag (TRF: NULL); zstd: half the size, faster COMMIT
    """,
    "unplayed_rounds": """
        tournament_id  INTEGER NOT NULL,
        player_id      INTEGER NOT NULL,
        round          INTEGER NOT NULL,
        code           VARCHAR NOT NULL,     -- TRF result code: '+','-','H','F','U','Z','=',... or ' ' (not paired)
        score          DECIMAL(2,1),         -- points the code gives, when known
        opponent_id    INTEGER,              -- forfeits against a named opponent
        file_id        INTEGER NOT NULL,
        line           INTEGER
    """,
    "teams": """
        tournament_id  INTEGER NOT NULL,
        team_no        INTEGER,
        name           VARCHAR,
        record         VARCHAR,              -- '013' | '310'
        member_ranks   INTEGER[],            -- start ranks of the team's players
        points         DECIMAL(18,1),
        file_id        INTEGER NOT NULL,
        line           INTEGER
    """,
    # ---- identity (issue 7) --------------------------------------------------
    "player_aliases": """
        player_id      INTEGER NOT NULL,
        name_as_written VARCHAR NOT NULL,
        name_key       VARCHAR NOT NULL,
        fide_id        BIGINT,
        national_id    VARCHAR,
        federation     VARCHAR,
        birth_year     INTEGER,
        file_id        INTEGER,
        tournament_id  INTEGER,
        match_rule     VARCHAR,              -- 'fide_id' | 'national_id' | 'name_birth_year' | ...
        confidence     DOUBLE
    """,
    "player_merges": """
        merge_id       INTEGER PRIMARY KEY,
        kept_id        INTEGER NOT NULL,
        merged_id      INTEGER NOT NULL,
        action         VARCHAR NOT NULL,     -- 'merge' | 'split'
        decided_by     VARCHAR NOT NULL,     -- 'officer:<name>' | 'rule:<rule>'
        reason         VARCHAR,
        decided_at     TIMESTAMP NOT NULL,
        criteria       JSON                  -- split: which rows moved, e.g. {"name_key": ..., "event_key": ...}
    """,
    "game_sources": """
        game_id        BIGINT NOT NULL,      -- canonical game
        source_game_id BIGINT NOT NULL,      -- a row of games that is the same game
        file_id        INTEGER NOT NULL,
        match_rule     VARCHAR NOT NULL,     -- 'canonical', 'round_players[+hash[+event_date[+short]]|+plies|+broadcast]', 'hash_players' ...
        role           VARCHAR NOT NULL      -- 'canonical' | 'result' (canonical, no moves) | 'moves' (gives them) | 'duplicate'
    """,
    "official_lists": """
        system         VARCHAR NOT NULL,     -- 'fide' | 'fide-rapid' | 'fide-blitz' | 'ffe' ...
        list_date      DATE NOT NULL,
        fide_id        BIGINT,
        national_id    VARCHAR,
        name           VARCHAR,
        federation     VARCHAR,
        sex            VARCHAR,
        title          VARCHAR,
        w_title        VARCHAR,
        o_title        VARCHAR,
        foa_title      VARCHAR,
        rating         INTEGER,
        rating_flag    VARCHAR,              -- FFE 'F' | 'N' | 'E'
        games          INTEGER,
        k              INTEGER,              -- NULL when 0/blank (unknown)
        birth_year     INTEGER,
        flag           VARCHAR,              -- FIDE 'i', 'w', 'wi' ...
        player_id      INTEGER,
        source_file    VARCHAR,
        ever_2400      BOOLEAN,              -- rating >= 2400 or K = 10 on this list (FIDE 8.3.3); NULL = list cannot tell
        category       VARCHAR               -- FFE age category as listed ('Ppo' .. 'Vet'); FIDE: NULL
    """,
    "list_import_skips": """
        source_file    VARCHAR NOT NULL,
        list_date      DATE NOT NULL,
        line           BIGINT,               -- 1-based line of the list file; NULL when a quoted CSV field spans lines
        reason         VARCHAR NOT NULL,     -- 'no_id' | 'bad_id' | 'bad_rating' | 'misaligned'
        detail         VARCHAR,              -- the cell at fault, e.g. 'ID 15O3014', 'standard rating 28x0'
        raw            VARCHAR               -- the line as written (at most 500 characters)
    """,
    # ---- rating results (issues 3 and 4): the store contract -----------------
    "rating_runs": """
        run_id         INTEGER PRIMARY KEY,
        system         VARCHAR NOT NULL,
        started_at     TIMESTAMP NOT NULL,
        first_list     DATE,
        last_list      DATE,
        rules_forced   VARCHAR,
        params         JSON,
        games_hash     VARCHAR               -- digest of the canonical games rated
    """,
    "rating_lists": """
        system         VARCHAR NOT NULL,
        list_date      DATE NOT NULL,
        player_id      INTEGER NOT NULL,
        rating         INTEGER,              -- NULL = unrated (pooled games only)
        rating_exact   DECIMAL(18,1),         -- systems that keep a decimal (generic Elo)
        rd             DOUBLE,               -- Glicko-2 rating deviation
        volatility     DOUBLE,               -- Glicko-2 volatility
        games          INTEGER NOT NULL,     -- rated games in the period
        total_games    INTEGER,              -- rated games to date (K rule 'fewer than 30')
        k              INTEGER,              -- K used in this period (on its games); NULL: no game in the period, a new or an unrated player (a list's CSV `k`)
        k_next         INTEGER,              -- FIDE systems: the rated player's K for the next period, the K column of FIDE's lists (B.02 8.3.3, before the 700 cap); NULL: unrated, another system, or a list computed before the column existed
        change         INTEGER,              -- rounded change applied this period (FIDE: K-based only, no adjustment)
        flags          VARCHAR,              -- 'i' inactive, 'new', 'w', FFE 'F'/'N'/'E', FIDE 'pool', 'delisted', 'adj2024:+N' (1 Mar 2024 adjustment added N), ...
        ever_2400      BOOLEAN,
        birth_year     INTEGER,
        source         VARCHAR,              -- where the row comes from: 'computed' (the engine, from the store's games) | 'imported' (an official list, `lists import`) | 'bootstrap' (computed, on the first list of a player the store had never rated: his rating before the period's change is the one the organiser's file gave, his Ro's source 'file'; FIDE systems only, the next lists say 'computed')
        change_exact   DECIMAL(18,1),        -- systems that keep a decimal (generic Elo): the period's change as kept, one decimal; NULL when idle or rated before this column
        PRIMARY KEY (system, list_date, player_id)
    """,
    "rating_changes": """
        system         VARCHAR NOT NULL,
        list_date      DATE NOT NULL,
        tournament_id  INTEGER NOT NULL,
        game_id        BIGINT NOT NULL,
        player_id      INTEGER NOT NULL,
        opponent_id    INTEGER,
        ro             INTEGER,              -- player's rating in force
        ro_source      VARCHAR,              -- where Ro came from: 'official' (imported list), 'computed' (the store's list), 'file' (the organiser's file), 'standard' (R&B 7.2.1); NULL: no Ro, or rated before it was recorded, or none at the event: no list in force nor the event's file rates the player, who plays at the rating another event's file of the period gave him (B.02 8.2.4; his opponents take him as unrated)
        rc             INTEGER,              -- opponent's rating in force
        d_raw          INTEGER,              -- ro - rc
        d_used         INTEGER,              -- after the 400-point rule
        pd             DECIMAL(4,2),         -- expected score from table 8.1.2
        score          DECIMAL(2,1),
        w_minus_pd     DECIMAL(4,2),
        k              INTEGER,
        counted        BOOLEAN NOT NULL,     -- TRUE: counted in the rating change (K x sum of W - PD); FALSE: kept for the explanation only (pd and w_minus_pd are then what the engine computed, never used; v_change_explained shows them NULL)
        reason         VARCHAR,              -- why not counted in the change: 'forfeit', 'unrated_opponent', 'incompatible', 'pooled_unrated' (an unrated player's game against a rated one: it counts toward his first rating, B.02 8.2, not a change), ...
        tc_assumed     BOOLEAN               -- TRUE: time control unknown, rate class assumed (default standard)
    """,
    "tournament_ratings": """
        system         VARCHAR NOT NULL,
        list_date      DATE NOT NULL,
        tournament_id  INTEGER NOT NULL,
        player_id      INTEGER NOT NULL,
        rules_version  VARCHAR,              -- 'V2009' | 'V2011' | 'V2012' | 'V2014' | 'V2017' | 'V2022' | 'V2024' | 'V2024A' (2025-10 amendment): elopipe.rating.fide.b02
        ro             INTEGER,              -- NULL for an unrated player
        ro_source      VARCHAR,              -- where Ro came from, as rating_changes.ro_source
        file_rating    INTEGER,              -- the rating the organiser's file gives the player (TRF 001, else the lowest PGN Elo tag); a report marks a Ro 50 or more points from it
        n              INTEGER NOT NULL,     -- games rated in this tournament
        score          DECIMAL(18,1),
        ra             INTEGER,              -- average rating of the opponents, rounded
        we             DECIMAL(18,2),        -- sum of PD
        w_we           DECIMAL(18,2),        -- W - We
        k              INTEGER,
        change_x100    BIGINT,               -- K x (W - We) in hundredths, unrounded
        rp             INTEGER,              -- Ra + dp(p), no cap
        unrated        BOOLEAN DEFAULT FALSE,
        ru_provisional INTEGER               -- unrated: provisional initial rating so far
    """,
    "rating_period_digests": """
        system         VARCHAR NOT NULL,
        list_date      DATE NOT NULL,
        digest         VARCHAR NOT NULL,     -- sha1 of the period's inputs (games, events, official list, params)
        run_id         INTEGER,              -- rating_runs.run_id that computed the period
        PRIMARY KEY (system, list_date)
    """,
    "rating_checkpoints": """
        system         VARCHAR NOT NULL,     -- as rating_lists.system (FIDE systems and their scenarios)
        list_date      DATE NOT NULL,        -- a rating period: a list computed, or a period whose events are not rated (before rating_from)
        inputs         VARCHAR NOT NULL,     -- sha1 of what the period's events give the engine (games, entries, event rows, their players' facts) and of what every period reads (options, code, official lists): elopipe.rating.fide.checkpoint
        list_hash      VARCHAR,              -- count and hash sums of the list's (player_id, rating) rows as written; NULL: no list computed for the period
        run_id         INTEGER,              -- rating_runs.run_id that wrote it
        shared_inputs  VARCHAR,              -- JSON {part: sha1} of what every period reads (options, code, official lists, dates, undated events), digested into inputs: rate names the part that changed; NULL: a store rated by an older version
        PRIMARY KEY (system, list_date)
    """,
    "rating_checkpoint_rows": """
        system         VARCHAR NOT NULL,     -- as rating_lists.system
        list_date      DATE NOT NULL,        -- the period after which the row holds
        part           VARCHAR NOT NULL,     -- 'state': the player's state after the period, when it changed in it; 'pool': a game the unrated player pooled in the period (B.02 7.1.4); 'boot': the player started from his file's rating in the period
        player_id      BIGINT NOT NULL,
        rating         BIGINT,               -- state: rating after the period (NULL: unrated)
        total_games    BIGINT,               -- state: rated games since first on a list (NULL: unknown, counts as 30 or more)
        ever_2400      BOOLEAN,              -- state: reached 2400 (K 10, B.02 8.3.3)
        ever_2300      BOOLEAN,              -- state: reached 2300 (no junior K 40, B.02 8.3.3)
        birth_year     BIGINT,               -- state: birth year the engine holds
        last_active    DATE,                 -- state: last list on which the player had a rated game (inactivity, B.02 7.2.2)
        pool_from      DATE,                 -- state: games pooled from this date (after a fall below the floor, B.02 7.2.1)
        k_official     BIGINT,               -- state: K of an imported official list, until the next period
        first_rated    DATE,                 -- state: first list with a rating
        tournament_id  BIGINT,               -- pool: the event of the game
        eff_start      DATE,                 -- pool: the event's start
        rc             BIGINT,               -- pool: the opponent's rating
        score_x100     BIGINT,               -- pool: the score, hundredths
        boot_date      DATE,                 -- boot: the list in force the file's rating stands for
        boot_rating    BIGINT                -- boot: the file's rating
    """,
    "rating_inputs": """
        system         VARCHAR PRIMARY KEY,  -- as rating_lists.system
        inputs         VARCHAR NOT NULL,     -- sha1 of what the last full run read: every input table's count and row hashes, the companion system's lists, the options, the code (elopipe.rating.inputs)
        outputs        VARCHAR NOT NULL,     -- sha1 of the system's period digests, lists and changes as that run left them
        summary        VARCHAR NOT NULL,     -- that run's summary (JSON), printed again by a run that finds nothing changed
        run_id         INTEGER,              -- rating_runs.run_id of that run (NULL: it wrote nothing)
        saved_at       TIMESTAMP NOT NULL    -- when they were kept (UTC)
    """,
    "rating_skips": """
        system         VARCHAR NOT NULL,
        tournament_id  INTEGER NOT NULL,
        reason         VARCHAR NOT NULL,     -- e.g. 'no_dates', 'not_this_rate_class', 'variant', FIDE 'online:<platform>' (online play is not rated), 'not_rated:<kind>' (simul, blindfold, exhibition, odds, armageddon, chess960, variant: bughouse ...), 'rate_class:<class>' (another list's; 'fast': rapid or blitz, not known which): rate_of_play says why; 'before_rating_from' (before the system's first list), 'in_progress: round 2 of 3 ...' (an event still in progress)
        n_games        INTEGER,              -- games of the event left unrated for that reason
        run_id         INTEGER
    """,
    "rate_of_play": """
        system         VARCHAR NOT NULL,
        tournament_id  INTEGER NOT NULL,     -- the event (its lowest tournament_id when held in several files)
        rate_class     VARCHAR,              -- 'standard' | 'rapid' | 'blitz' | 'bullet' | 'correspondence' | 'fast' (rapid or blitz, not known which); NULL: never rated whatever its rate (online, simul, blindfold, exhibition, odds, Chess960)
        source         VARCHAR NOT NULL,     -- where it came from: 'time_control' | 'name' | 'site' | 'rounds_per_day' | 'assumed' (nothing said: --unknown-tc, default standard); elopipe.read.rate_evidence
        evidence       VARCHAR,              -- what was read, e.g. 'TimeControl "180+2"', 'name "World Blitz 2019": blitz', 'site "chess.com INT"', '12 games among 6 players on 2019-12-28'
        n_games        INTEGER,              -- games of the event with this class and source
        run_id         INTEGER
    """,
    "rating_discrepancies": """
        system         VARCHAR NOT NULL,
        list_date      DATE NOT NULL,        -- list in force at the tournament's start
        tournament_id  INTEGER NOT NULL,
        player_id      INTEGER NOT NULL,
        file_rating    INTEGER,
        list_rating    INTEGER,
        file_id        INTEGER
    """,
    "scenarios": """
        system         VARCHAR PRIMARY KEY,  -- 'BASE@NAME': the key of the scenario's rows in every table keyed by system
        name           VARCHAR NOT NULL,     -- the scenario's name, lower-case [a-z0-9][a-z0-9_-]{0,31}
        base_system    VARCHAR NOT NULL,     -- the system whose rules it runs: 'fide', 'ffe', ...
        rules          VARCHAR,              -- --rules of its last run; NULL = the base's rules by date
        params         JSON,                 -- --param options of its last run
        through        DATE,                 -- --through of its last run; NULL = every list
        created_at     TIMESTAMP NOT NULL,   -- first run under this key (UTC)
        rated_at       TIMESTAMP NOT NULL    -- last run (UTC)
    """,
    "title_norms": """
        system         VARCHAR NOT NULL,     -- 'fide' (norms are for standard chess only)
        list_date      DATE NOT NULL,        -- the list the event was rated on
        tournament_id  INTEGER NOT NULL,
        player_id      INTEGER NOT NULL,     -- the applicant
        norm           VARCHAR NOT NULL,     -- 'GM' | 'IM' | 'WGM' | 'WIM'
        era            VARCHAR,              -- Title Regulations in force at the event's start: '2017' | '2022' | '2024'; NULL when refused or unknown
        decision       VARCHAR NOT NULL,     -- 'norm' | 'missed' | 'unknown' (a fact is missing, see reason) | 'refused' (event before 1 July 2017) | 'not_eligible' (a women's norm for a man)
        clause         VARCHAR,              -- the first B.01 clause that fails ('1.4.5'), or that decides ('1.4.1c'); NULL for a plain norm
        reason         VARCHAR,              -- the decision in words: '1.4.5: 2 GMs among the opponents, 3 needed' / 'unknown: the title of 1 opponent(s) (1.4.5)'
        hint           VARCHAR,              -- what would have made the norm: 'half a point more', '1 more foreign opponent in place of IRL ones'
        failed         VARCHAR[],            -- every clause that fails, in order
        single_miss    BOOLEAN,              -- missed by a single clause
        half_point     BOOLEAN,              -- missed, and half a point more on the same games makes the norm
        holds_title    BOOLEAN,              -- the player holds the norm's title or a higher one (needs no norm)
        games          INTEGER,              -- games counted (after 1.4.2 exclusions and 1.4.1e/f drops)
        points_x2      INTEGER,              -- points scored in them, in half points
        ra             INTEGER,              -- Ra: opponents' average after the floor raise, rounded half up (1.4.7)
        p              INTEGER,              -- score in whole percent, rounded half up (1.4.9)
        dp             INTEGER,              -- dp of p (table 1.4.9 = B.02 8.1.1)
        rp             INTEGER,              -- Rp = Ra + dp (1.4.8)
        raised_id      INTEGER,              -- players.player_id of the opponent raised to the norm's rating floor (1.4.6b-c)
        raised_from    INTEGER,              -- his rating before the raise; NULL: unrated
        title_holders  INTEGER,              -- opponents holding GM, IM, FM, WGM, WIM, WFM (1.4.5a)
        norm_titles    INTEGER,              -- opponents holding the norm's title or higher (1.4.5b-e)
        feds           INTEGER,              -- federations among the opponents besides the applicant's (1.4.3; FID is none)
        own_fed        INTEGER,              -- opponents from the applicant's federation (1.4.4)
        top_fed        VARCHAR,              -- the federation with most opponents
        top_count      INTEGER,              -- its opponents (1.4.4: at most 2/3)
        dropped        INTEGER[],            -- rounds left out under 1.4.1e/f to make the norm
        exemption      VARCHAR,              -- '1.4.3d' when the Swiss exemption waives 1.4.3 and 1.4.4
        code           VARCHAR               -- fingerprint of the norm rules' code that decided the row (other code: decided again on the next run)
    """,
    "title_norm_inputs": """
        system         VARCHAR NOT NULL,     -- 'fide'
        list_date      DATE NOT NULL,        -- the list the event was rated on
        tournament_id  INTEGER NOT NULL,
        inputs         VARCHAR NOT NULL      -- digest of what the event's norms were decided from (its games, entries, byes and facts, the rules' code), '/', digest of its title_norms rows as written
    """,
    "ffe_details": """
        system         VARCHAR NOT NULL,     -- 'ffe' | 'ffe-rapid'
        list_date      DATE NOT NULL,
        player_id      INTEGER NOT NULL,
        r_old          INTEGER,
        n_compatible   INTEGER,
        n_incompatible INTEGER,
        x              DECIMAL(7,2),         -- mean rating of compatible opponents
        p              DECIMAL(6,4),         -- score fraction
        z              DECIMAL(7,2),         -- dp from table 8.1.1, clamped to +-470
        perf           DECIMAL(7,2),         -- P = X + Z (>= 1000)
        young          BOOLEAN,
        method         VARCHAR,              -- 'down' | 'up_full' | 'up_brake' | 'equal' | 'none' (no compatible game) | 'first' | 'first_combined' (with the archive) | 'archived'
        r_new          INTEGER,
        r_source       VARCHAR,              -- where r_old came from: 'F' FIDE rating in the file | 'N' this system's previous list | 'N-file' national rating in the file | 'standard' (rapid: standard rating credited, E02) | 'below_floor' (unrated: the file's value is under the floor, spec A.4)
        category       VARCHAR,              -- FFE age category of the season ('Ppo'..'Vet'), NULL without birth year
        archive_n      INTEGER,              -- unrated: compatible games archived after this period (spec A.6)
        archive_perf   DECIMAL(7,2),         -- unrated: archived performance Pa (weighted mean)
        passes         INTEGER,              -- unrated: passes of the compatibility loop until stable (or until a set came back: cycled)
        cycled         BOOLEAN               -- unrated: the compatibility loop cycled between sets (spec A.6 silent): only the games in every set of the cycle count [C]; NULL for a rated player or a store rated before this column
    """,
    # ---- the schema itself ------------------------------------------------------
    "store_schema": """
        fingerprint    VARCHAR NOT NULL,     -- sha1 of the sequences, tables and views elopipe last made sure of (schema.fingerprint): an open that finds it current skips the checks
        applied_at     TIMESTAMP NOT NULL    -- when (UTC)
    """,
}


@functools.cache
def fingerprint() -> str:
    """SHA-1 of every sequence, table and view definition (`SEQUENCES`, `TABLES`, `views.VIEWS`)."""
    h = hashlib.sha1()
    for part in (SEQUENCES, TABLES, views.VIEWS):
        h.update(repr(part).encode())
    return h.hexdigest()


def _is_current(con: duckdb.DuckDBPyConnection) -> bool:
    """True when `store_schema` holds this code's `fingerprint`: the last writer of this schema made
    sure of every table, column and view, and a store is never altered but through here."""
    try:
        rows = con.execute("SELECT fingerprint FROM store_schema").fetchall()
    except duckdb.CatalogException:  # a store made before the table existed
        return False
    return rows == [(fingerprint(),)]


def ensure_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Create every sequence and table that does not exist yet (never drops), widen
    the DECIMAL columns of an older store, fill the columns it lacks and add the others
    (`schema_upgrade`) and (re)create the views; then record
    the schema's `fingerprint` in `store_schema`. A store that already records it is left as it
    is: about 0.3 CPU-s an open saved (the checks read the catalogue and recreate every view)."""
    if _is_current(con):
        return
    for seq in SEQUENCES:
        con.execute(f"CREATE SEQUENCE IF NOT EXISTS {seq} START 1")
    for name, cols in TABLES.items():
        con.execute(f"CREATE TABLE IF NOT EXISTS {name} ({cols})")
    schema_upgrade.widen_decimals(con, TABLES)
    schema_upgrade.tournament_spans(con)
    schema_upgrade.add_columns(con, TABLES)
    # after the tables: views may reference every table
    views.ensure_views(con)
    con.execute("DELETE FROM store_schema")
    con.execute("INSERT INTO store_schema VALUES (?, ?)", [fingerprint(), dt.datetime.now(dt.UTC).replace(tzinfo=None)])
