"""The `elopipe compare` HTML page in a real browser (Debian's chromium, headless): it fits a
1400 px window, however long the names (walkthrough item 20). Skips when chromium is not installed."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from elopipe.publish.compare import compare, write_outputs
from elopipe.rating.run import rate
from tests.helpers import chromium
from tests.helpers.chromium import CHROMIUM, SKIP_REASON
from tests.helpers.fide import Scenario

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason=SKIP_REASON)

NOV, DEC = dt.date(2025, 11, 1), dt.date(2025, 12, 1)
# reports the page's width once laid out: the DOM dump carries it
_MEASURE = (
    "<script>window.addEventListener('load', function () {"
    " document.body.setAttribute('data-scroll-width', document.documentElement.scrollWidth);"
    " document.body.setAttribute('data-client-width', document.documentElement.clientWidth); });</script>"
)


def test_the_page_does_not_scroll_sideways_at_1400_px(tmp_path: Path) -> None:
    s = Scenario()
    for pid in range(1, 6):
        s.player(pid, fide_id=10_000_000 + pid)
        s.official(NOV, pid, 2000 + 10 * pid, k=20)
    s.event(dt.date(2025, 11, 10), dt.date(2025, 11, 14), [(1, 2, "W"), (3, 4, "D"), (5, 1, "L"), (2, 3, "W")])
    s.con.execute("UPDATE players SET name = 'Albornoz Cabrera de la Fuente, Carlos Daniel Maximiliano ' || player_id")
    rate(s.con, "fide")
    # an official December list with every player one point off: every row differs, 'Matched on' is shown
    s.con.execute(
        "INSERT INTO official_lists (system, list_date, fide_id, name, rating, games, k, player_id) "
        "SELECT 'fide', list_date, 10000000 + player_id, 'x', rating + 1, games, k, player_id "
        "FROM rating_lists WHERE list_date = ?",
        [DEC],
    )
    written = write_outputs(compare(s.con, "fide", "official", DEC), tmp_path)
    html = next(p for p in written.paths if p.suffix == ".html")
    html.write_text(html.read_text(encoding="utf-8").replace("</body>", _MEASURE + "</body>"), encoding="utf-8")
    res = chromium.run(tmp_path, html.as_uri(), "--dump-dom", "--window-size=1400,1000")
    assert res.returncode == 0, res.stderr[-2000:]
    scroll = int(re.search(r'data-scroll-width="(\d+)"', res.stdout).group(1))  # type: ignore[union-attr]
    client = int(re.search(r'data-client-width="(\d+)"', res.stdout).group(1))  # type: ignore[union-attr]
    assert 1300 <= client <= 1400 and scroll <= client
    assert "Matched on" in res.stdout and "Maximiliano 1" in res.stdout
