"""Unicode digits ('²', '¹') look like digits to str.isdigit() but int() refuses them."""

import pytest

from elopipe.read.trf.reader import read_trf


@pytest.mark.parametrize("text", [" ²", " ² ³", "001 ²", "012 x\n ¹²³", "²²2 header", "001    1 m    Doe, J²"])
def test_unicode_digits_never_crash_the_reader(text):
    parsed = read_trf(text)
    assert not any(i.code == "trf_reader_crash" for i in parsed.issues)
