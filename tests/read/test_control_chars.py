"""What a terminal is shown of a value: control characters, and the characters that reorder or
break a line, written as escapes (`elopipe.read.control_chars`)."""

from __future__ import annotations

from elopipe.read.control_chars import escape_controls, shown_value


def test_escape_codes_and_layout_characters_are_written_as_escapes() -> None:
    # U+202E (right-to-left override) turned 'txt.exe' around in a table of names; U+2028 broke its line
    assert escape_controls("a\u202eexe.txt\x1b[2J") == "a\\u202eexe.txt\\x1b[2J"
    assert escape_controls("one\u2028two\ttab") == "one\\u2028two\\x09tab"
    assert escape_controls("a\nb", keep_newlines=True) == "a\nb" and escape_controls("a\nb") == "a\\x0ab"


def test_letters_of_any_script_stay_as_they_are() -> None:
    for name in ("Müller, Jörg", "Карпов, Анатолий", "王皓", "Ünal, Çağrı", "Ōe"):
        assert escape_controls(name) == name
    assert shown_value(" ") == "' '" and shown_value("it's") == "'it's'"
