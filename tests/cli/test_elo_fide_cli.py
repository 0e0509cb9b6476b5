"""`elopipe elo --fide`: FIDE's table and 400-point rule, next to the logistic default."""

from __future__ import annotations

from typer.testing import CliRunner

from elopipe.cli.main import app


def _run(*args: str):
    return CliRunner().invoke(app, ["elo", *args])


def test_logistic_stays_the_default_and_fide_reads_the_table() -> None:
    logistic = _run("1750", "--vs", "1810:1")
    assert logistic.exit_code == 0
    assert "change = +11.7" in logistic.output and "new rating: 1761.7" in logistic.output
    fide = _run("1750", "--vs", "1810:1", "--fide", "--date", "2024-06-01")
    assert fide.exit_code == 0, fide.output
    assert "D = -60  PD 0.42  W - PD +0.58  K x (W - PD) +11.60" in fide.output
    assert "K = 20 (--k;" in fide.output
    assert "change = K x sum(W - PD) = +11.60 -> +12" in fide.output
    assert fide.output.rstrip().endswith("new rating: 1762")


def test_fide_k_from_the_data_and_the_400_point_rule() -> None:
    res = _run("2600", "--vs", "2100:W", "--fide", "--date", "2018-06-01")
    assert res.exit_code == 0, res.output
    assert "D = 500 -> 400 (400-point rule)  PD 0.92" in res.output
    assert "FIDE V2017: K = 10 (FIDE's rules, B.02 8.3.3)" in res.output
    young = _run("1800", "--vs", "1800:W", "--fide", "--games", "10", "--k", "20", "--date", "2024-06-01")
    assert "K = 40 (FIDE's rules" in young.output and "new rating: 1820" in young.output


def test_fide_mode_refuses_bad_input_in_one_line() -> None:
    for args, words in (
        (["1500", "--vs", "1500:W", "--fide", "--rules", "V2030"], "unknown FIDE rules version V2030"),
        (["1500.5", "--vs", "1500:W", "--fide"], "1500.5: a FIDE rating is a whole number"),
        (["1500", "--vs", "1500:W", "--fide", "--k", "20,games<30:40"], "with --fide, K is a whole number"),
        (["1500", "--vs", "1500:W", "--fide", "--k", "0"], "--k 0: with --fide, K is a whole number from 1 to 1000"),
        (
            ["1500", "--vs", "1500:W", "--fide", "--date", "2024-06-01", "--born", "3000"],
            "--born 3000: a year of birth",
        ),
        (["1500", "--vs", "1500:W", "--fide", "--date", "2024-06-01", "--born", "-50"], "--born -50: a year of birth"),
        (["1500", "--vs", "1500:W", "--fide", "--date", "9999-12-31"], "--date 9999-12-31: a date up to 2100-12-31"),
        (["1500", "--vs", "1500:W", "--fide", "--k", "5000"], "K is a whole number from 1 to 1000"),
        (["1500", "--vs", "1500:W", "--born", "2000"], "go with --fide"),
    ):
        res = _run(*args)
        assert res.exit_code == 2, res.output
        assert words in res.output
        assert "Traceback" not in res.output and len(res.output.strip().splitlines()) == 1


def test_fide_version_printed_is_one_rules_accepts() -> None:
    # from 1 Oct 2025 the amended V2024 applies; it is named as --rules names it
    res = _run("1750", "--vs", "1810:1", "--fide", "--date", "2025-10-01")
    assert res.exit_code == 0, res.output
    assert "FIDE V2024 as amended from 1 Oct 2025: K = 20" in res.output and "V2024A" not in res.output
    forced = _run("1750", "--vs", "1810:1", "--fide", "--date", "2025-10-01", "--rules", "V2024")
    assert "FIDE V2024 as amended from 1 Oct 2025: K = 20" in forced.output
    assert "FIDE V2024: K = 20" in _run("1750", "--vs", "1810:1", "--fide", "--date", "2024-06-01").output
    older = _run("1750", "--vs", "1810:1", "--fide", "--date", "2012-03-01")
    assert "FIDE V2011 (by date; --rules takes V2017, V2022, V2024): K = 20" in older.output


def test_fide_date_before_confirmed_rules_or_not_a_date_is_one_line() -> None:
    for date, words in (
        ("2005-01-01", "--date 2005-01-01: FIDE's rules before 2009-07-01 cannot be confirmed"),
        ("notadate", "--date notadate: expected YYYY-MM-DD"),
        ("20240601", "--date 20240601: expected YYYY-MM-DD"),
        ("2024-02-30", "--date 2024-02-30: expected YYYY-MM-DD"),
    ):
        res = _run("1750", "--vs", "1810:1", "--fide", "--date", date)
        assert res.exit_code == 2, res.output
        assert words in res.output
        assert len(res.output.strip().splitlines()) == 1 and "isoformat" not in res.output
    forced = _run("1750", "--vs", "1810:1", "--fide", "--date", "2005-01-01", "--rules", "V2017")
    assert forced.exit_code == 0, forced.output
    assert "FIDE V2017: K = 20" in forced.output and forced.output.rstrip().endswith("new rating: 1762")
