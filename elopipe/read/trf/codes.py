"""TRF result codes, titles, sexes and federations: what each code written in a `001` row means.

Source: FIDE C.04 Annex 2 (TRF16) and TRF-2026, as summarised in
shared/specs/trf-format.md §4-5 (result-code table and "How situations are written").
Scores are on the 1 / ½ / 0 game scale (Decimal); tournament scoring systems (162, XXS,
BB?) change standings points, not the game result.
"""

from __future__ import annotations

from decimal import Decimal

ONE = Decimal("1")
HALF = Decimal("0.5")
ZERO = Decimal("0")

#: Codes of a game played over the board and rated (TRF16 §5: '1', '=', '0').
RATED_CODES = frozenset("1=0")
#: Played but not to be rated (W/D/L); stored as unrated, never as a rated game.
UNRATED_GAME_CODES = frozenset("WDL")
#: Forfeit win / forfeit loss.
FORFEIT_CODES = frozenset("+-")
#: Byes and absences without an opponent: half-point, full-point, pairing-allocated, zero.
BYE_CODES = frozenset("HFUZ")
#: Every result letter the spec defines (upper-cased); blank means 'Z' (§5).
ALL_CODES = RATED_CODES | UNRATED_GAME_CODES | FORFEIT_CODES | BYE_CODES

#: Value of each code on the 1/½/0 scale (TRF16 table "pts"); '*' = scheduled, not played.
CODE_SCORE: dict[str, Decimal | None] = {
    "1": ONE,
    "=": HALF,
    "0": ZERO,
    "W": ONE,
    "D": HALF,
    "L": ZERO,
    "+": ONE,
    "-": ZERO,
    "H": HALF,
    "F": ONE,
    "U": ONE,
    "Z": ZERO,
    "*": None,
}

#: What the opponent must have written for the two sides to agree (trf-format.md §8.2).
MIRROR = {"1": "0", "0": "1", "=": "=", "+": "-", "-": "+", "W": "L", "L": "W", "D": "D", "*": "*"}

#: Legacy codes written with opponent 0000 and their spec meaning (trf-format.md §5 table
#: "also seen"): '=' half-point bye, '+' full-point bye (or PAB in legacy files), '-' and
#: '0' absence. '1', 'W', 'D', 'L' without an opponent are not in the spec and are mapped
#: to the bye of the same value with a warning.
NO_OPPONENT_CODE = {
    "H": "H",
    "F": "F",
    "U": "U",
    "Z": "Z",
    "=": "H",
    "+": "F",
    "-": "Z",
    "0": "Z",
    "1": "F",
    "W": "F",
    "D": "H",
    "L": "Z",
}
#: No-opponent codes that are normal (spec or documented legacy) and need no warning.
NO_OPPONENT_EXPECTED = frozenset("HFUZ=+-0")

#: FIDE titles as TRF writes them (right-aligned in cols 11-13), plus the legacy one/two-letter
#: forms of pre-2016 files ('g', 'm', 'wg', ...) and a single upper-case 'F' (trf-format.md §4, §9).
TITLES = {
    "GM": "GM",
    "IM": "IM",
    "FM": "FM",
    "CM": "CM",
    "WGM": "WGM",
    "WIM": "WIM",
    "WFM": "WFM",
    "WCM": "WCM",
    "G": "GM",
    "M": "IM",
    "F": "FM",
    "C": "CM",
    "WG": "WGM",
    "WM": "WIM",
    "WF": "WFM",
    "WC": "WCM",
}

#: Sex column (col 10): spec 'm'/'w'; seen 'M', 'F', 'f', 'W' (mapped) and 'u' (unknown).
SEXES = {"m": "m", "w": "w", "M": "m", "W": "w", "f": "w", "F": "w"}


def result_from_scores(white: Decimal | None, black: Decimal | None) -> str:
    """Normalised result string for a pair of 1/½/0 scores ('*' when either is unknown)."""
    if white is None or black is None:
        return "*"
    if white == ONE and black == ZERO:
        return "1-0"
    if white == ZERO and black == ONE:
        return "0-1"
    if white == HALF and black == HALF:
        return "1/2-1/2"
    if white == ZERO and black == ZERO:
        return "0-0"
    return "*"


#: FIDE member federations (three-letter codes as used in FIDE rating lists), plus 'FID'
#: (FIDE flag players). A code outside this set in cols 54-56 is a club or region code
#: (Irish files write 'DUB', 'RAT', ...; trf-format.md §9).
FIDE_FEDERATIONS = frozenset(
    """
    AFG ALB ALG AND ANG ANT ARG ARM ARU AUS AUT AZE BAH BAN BAR BDI BEL BER BHU BIH BIZ BLR BOL BOT
    BRA BRN BRU BUL BUR CAF CAM CAN CAY CHA CHI CHN CIV CMR COD COL COM CPV CRC CRO CUB CYP CZE DEN
    DJI DMA DOM ECU EGY ENG ERI ESA ESP EST ETH FAI FID FIJ FIN FRA GAB GAM GCI GEO GEQ GER GHA GRE
    GRN GUA GUM GUY HAI HKG HON HUN INA IND IRI IRL IRQ ISL ISR ITA IVB JAM JCI JOR JPN KAZ KEN KGZ
    KOR KOS KSA KUW LAO LAT LBA LBN LBR LCA LES LIE LTU LUX MAC MAD MAR MAS MAW MDA MDV MEX MGL MKD
    MLI MLT MNC MNE MOZ MRI MTN MYA NAM NCA NED NEP NGR NIG NOR NRU NZL OMA PAK PAN PAR PER PHI PLE
    PLW PNG POL POR PUR QAT ROU RSA RUS RWA SCO SEN SEY SGP SKN SLE SLO SMR SOL SOM SRB SRI SSD STP
    SUD SUI SUR SVK SWE SWZ SYR TAN THA TJK TKM TLS TOG TPE TTO TUN TUR UAE UGA UKR URU USA UZB VAN
    VEN VIE VIN WLS YEM ZAM ZIM
    """.split()
)
