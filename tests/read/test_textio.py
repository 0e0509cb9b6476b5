from elopipe.read.textio import decode_bytes, detect_newline


def test_utf8_bom_is_stripped_and_named():
    d = decode_bytes('\ufeff[Event "Tata"]\n'.encode())
    assert d.text == '[Event "Tata"]\n'
    assert d.encoding == "utf-8-sig"


def test_strict_utf8_first():
    d = decode_bytes("Hüseyin Göl\n".encode())
    assert (d.text, d.encoding) == ("Hüseyin Göl\n", "utf-8")


def test_cp1252_fallback_keeps_accents_and_curly_quotes():
    d = decode_bytes("Mícheál ‘Ó’ Krämer\r\n".encode("cp1252"))
    assert d.encoding == "cp1252"
    assert d.text == "Mícheál ‘Ó’ Krämer\n"
    assert d.newline == "CRLF"


def test_bytes_undefined_in_cp1252_fall_back_to_latin1_without_loss():
    raw = b"abc\x81def\n"
    d = decode_bytes(raw)
    assert d.encoding == "latin-1"
    assert d.text.encode("latin-1") == raw


def test_cr_only_line_ends_become_lf():
    d = decode_bytes(b"012 Test\r001    1\r")
    assert d.text == "012 Test\n001    1\n"
    assert d.newline == "CR"


def test_newline_kinds():
    assert detect_newline("a\nb\n") == "LF"
    assert detect_newline("a\r\nb\n") == "mixed"
    assert detect_newline("ab") is None
