"""TRF issue codes are fixed names; what the file wrote goes in the message, quoted, its
control characters escaped, never as a Python repr (issue 17)."""

from __future__ import annotations

from elopipe.read.trf.issues import shown
from elopipe.read.trf.reader import read_trf
from tests.helpers.trf_build import row, trf


def test_a_garbage_line_gets_one_fixed_code_with_its_bytes_escaped_in_the_message() -> None:
    garbage = "\x01\x02Z line of garbage"
    p = read_trf(trf(row(1, "A"), garbage, "%%? more garbage", "%%? again"))
    unknown = [i for i in p.issues if i.code.startswith("trf_unknown_record")]
    assert {i.code for i in unknown} == {"trf_unknown_record"}
    by_message = {i.message: i for i in unknown}
    # the control bytes were blanked before dispatch; the record is named as written, escaped
    assert "unknown record '  Z' kept raw in tournament extra" in by_message
    # one issue per record type: the two '%%?' lines are grouped, with their lines
    grouped = by_message["unknown record '%%?' kept raw in tournament extra (2 lines: 8, 9)"]
    assert grouped.line == 8


def test_control_characters_are_escaped_not_repr() -> None:
    assert shown("A\x1b[31mB") == "'A\\x1b[31mB'"
    assert shown("O'Brien") == "'O'Brien'"  # a repr would switch to double quotes
    assert shown(1990) == "'1990'"


def test_an_odd_sex_letter_has_a_fixed_code() -> None:
    p = read_trf(trf(row(1, "A", sex="F"), row(2, "B", sex="q")))
    codes = {i.code: i.message for i in p.issues if i.code.startswith("trf_sex")}
    assert codes == {
        "trf_sex_mapped": "sex written 'F', read as 'w'",
        "trf_sex_unknown": "sex 'q' not understood; stored as unknown",
    }


def test_escape_controls_keeps_letters_of_any_script() -> None:
    from elopipe.read.control_chars import escape_controls

    assert escape_controls("Müller\tΔΙΑΣ\x1b[0m\n") == "Müller\\x09ΔΙΑΣ\\x1b[0m\\x0a"
