"""Given names that are one name: a familiar form and the full name ('Tony' ~ 'Anthony', 'Bob' ~
'Robert', 'Misha' ~ 'Mikhail'), and the usual spellings of one name across transliterations
('Dmitry' ~ 'Dmitri', 'Aleksandr' ~ 'Alexander').

Two files of one event can write one player as 'Kosten, Tony' and 'Kosten, Anthony': without this
table he is two players and each of his games is counted twice. The table is used only where the
games themselves are the evidence (`elopipe.read.names.same_surname_initials`, for
`elopipe.identity.same_game`), never to merge two names on their own: 'Tony Fox' and 'Anthony Fox'
may be two people, whose games are then different games.

Names are folded (`elopipe.read.names.fold`: lower case, ASCII). A form in two groups ('ted':
Edward and Theodore; 'sasha': Alexander and Alexandra) agrees with both, but Edward and Theodore
do not agree with each other. A prefix every name of a group shares ('alex') is left out: the
rule of initials already makes it agree with each.
"""

from __future__ import annotations

import functools

_GROUPS: tuple[tuple[str, ...], ...] = (
    # English
    ("anthony", "antony", "tony"),
    ("robert", "bob", "bobby", "robbie"),
    ("william", "bill", "billy", "will", "willie", "willy"),
    ("james", "jim", "jimmy", "jamie"),
    ("michael", "mike", "mick", "mickey", "mikey"),
    ("richard", "rick", "ricky", "dick", "richie"),
    ("edward", "eddie", "ted", "teddy", "ned"),
    ("theodore", "theo", "ted", "teddy"),
    ("thomas", "tom", "tommy"),
    ("joseph", "joe", "joey"),
    ("john", "jack", "johnny"),
    ("charles", "charlie", "chuck"),
    ("daniel", "dan", "danny"),
    ("david", "dave", "davy"),
    ("stephen", "steven", "steve", "stevie"),
    ("nicholas", "nicolas", "nikolaus", "nick", "nicky"),
    ("christopher", "chris", "kit"),
    ("matthew", "matt"),
    ("andrew", "andy", "drew"),
    ("benjamin", "ben", "benny"),
    ("samuel", "sam", "sammy"),
    ("philip", "phillip", "phil"),
    ("raymond", "ray"),
    ("ronald", "ron", "ronnie"),
    ("donald", "don", "donnie"),
    ("douglas", "doug"),
    ("gregory", "greg"),
    ("jeffrey", "geoffrey", "jeff", "geoff"),
    ("lawrence", "laurence", "larry"),
    ("leonard", "len", "lenny"),
    ("kenneth", "ken", "kenny"),
    ("timothy", "tim", "timmy"),
    ("patrick", "pat", "paddy"),
    ("gerard", "gerald", "gerry", "jerry"),
    ("francis", "frank", "frankie"),
    ("frederick", "frederic", "fred", "freddie"),
    ("alfred", "alf", "alfie", "fred"),
    ("albert", "bert", "bertie"),
    ("henry", "harry", "hal"),
    ("walter", "walt", "wally"),
    ("peter", "pete"),
    ("margaret", "maggie", "meg", "peggy"),
    ("elizabeth", "liz", "lizzie", "beth", "betty", "eliza"),
    ("catherine", "katherine", "kathryn", "kate", "katie", "kathy", "cathy"),
    ("susan", "sue", "susie"),
    ("deborah", "debbie", "debra"),
    ("rebecca", "becky"),
    ("jennifer", "jenny"),
    ("patricia", "pat", "trish", "patty"),
    ("victoria", "vicky"),
    # Russian, Ukrainian and other Slavic names, with their transliterations
    (
        "alexander",
        "alexandr",
        "aleksandr",
        "aleksander",
        "alexandre",
        "alejandro",
        "alessandro",
        "oleksandr",
        "sasha",
        "sascha",
    ),
    ("alexandra", "aleksandra", "sasha"),
    ("mikhail", "michail", "misha"),
    ("dmitry", "dmitri", "dmitrii", "dmitriy", "dima"),
    ("vladimir", "volodymyr", "volodya", "vova"),
    ("evgeny", "evgeni", "evgenij", "evgenii", "yevgeny", "yevgeni", "zhenya"),
    ("konstantin", "constantin", "kostya"),
    ("nikolai", "nikolay", "mykola", "kolya"),
    ("ivan", "vanya"),
    ("pavel", "pasha"),
    ("yuri", "yury", "yuriy", "iurii", "yura"),
    ("boris", "borya"),
    ("sergey", "sergei", "serhiy", "seryozha"),
    ("aleksey", "alexei", "alexey", "oleksiy", "alyosha", "lyosha"),
    ("ekaterina", "yekaterina", "katya"),
    ("anastasia", "nastya"),
    ("tatiana", "tatyana", "tanya"),
    ("natalia", "natalya", "natasha"),
    ("maria", "mariya", "masha"),
    ("elena", "yelena", "lena"),
    ("olga", "olya"),
    # German, Spanish, Italian
    ("johannes", "johann", "hans"),
    ("friedrich", "fritz"),
    ("francisco", "paco", "pancho"),
    ("jose", "pepe"),
    ("giuseppe", "beppe", "peppe"),
)


@functools.cache
def _forms() -> dict[str, frozenset[str]]:
    forms: dict[str, set[str]] = {}
    for group in _GROUPS:
        for name in group:
            forms.setdefault(name, set()).update(group)
    return {name: frozenset(same) for name, same in forms.items()}


def forms_of(given: str) -> frozenset[str]:
    """The folded given name `given` and every name the table makes one with it ('tony' gives
    'tony', 'anthony', 'antony'); `given` alone when the table does not know it."""
    return _forms().get(given, frozenset((given,)))
