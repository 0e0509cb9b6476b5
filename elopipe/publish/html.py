"""Standalone HTML pages (Jinja2 templates in `elopipe/publish/templates/`).

Every page is one file with its CSS and JavaScript inline and images embedded as data URIs,
so it opens offline and can be mailed or put on any web server. Tables with the class
`sortable` sort on a header click; a search box filters rows by player name and a counter
shows how many are visible.
"""

from __future__ import annotations

import json
from typing import Any

import jinja2

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("elopipe.publish", "templates"),
    autoescape=jinja2.select_autoescape(["html", "j2"]),
    trim_blocks=True,
    lstrip_blocks=True,
    undefined=jinja2.StrictUndefined,
)


def signed(value: int | None) -> str:
    """A change as printed on lists: '+5', '-3', '0' (no sign on zero), '' for NULL."""
    if value is None:
        return ""
    return f"{value:+d}" if value else "0"


_ENV.filters["signed"] = signed

SYSTEM_LABELS = {
    "fide": "FIDE standard",
    "fide-rapid": "FIDE rapid",
    "fide-blitz": "FIDE blitz",
    "ffe": "FFE",
    "ffe-rapid": "FFE rapid",
}


def system_label(system: str) -> str:
    """Human name of a rating system id ('fide' -> 'FIDE standard'; a scenario 'fide@v2017' ->
    'FIDE standard, scenario v2017', `elopipe.rating.scenarios`); unknown ids unchanged."""
    base, _, scenario = system.partition("@")
    label = SYSTEM_LABELS.get(base, base)
    return f"{label}, scenario {scenario}" if scenario else label


def render(template: str, **context: Any) -> str:
    """Render one template of the package with `context`; raises jinja2 errors on a bad template."""
    return _ENV.get_template(template).render(**context)


# Inside <script> the HTML parser reacts to "</script", and also to "<!--" and "<script", which
# enter the script-data escape states where the closing tag is swallowed and the page blanks. JSON
# may spell these characters as \u escapes (the same string once parsed), so none of those
# sequences can appear; U+2028/U+2029 are escaped too, as a JavaScript literal (`cols`) predating
# ES2019 would end a line there.
# Five `str.replace` passes, not `str.translate`: on a list page's 5 MB of JSON they take some
# 10 ms where a translation table takes 300, under Python's interpreter lock
_SCRIPT_SAFE = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))


def json_for_script(value: object) -> str:
    """`value` as JSON text safe to embed in an HTML <script> element (data block or JavaScript
    literal): no '<', '>' or '&' appears in it, nor U+2028/U+2029; JSON.parse gives `value` back."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for char, escaped in _SCRIPT_SAFE:
        text = text.replace(char, escaped)
    return text
