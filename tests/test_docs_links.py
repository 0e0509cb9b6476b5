"""Every relative link of README.md and docs/*.md leads somewhere: the file exists and, when the link
names a heading (`file.md#anchor`, `#anchor`), the heading is there under the anchor GitHub gives it.

The command reference moved from README's table to docs/commands.md, which README links command by
command: a renamed heading would silently break those links. No network: links with a scheme
(`https:`, `mailto:`) are not followed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers.paths import REPO

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

FENCE = re.compile(r"^ *(`{3,}|~{3,}).*?^ *\1", re.S | re.M)
CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
# [text](target) and ![alt](target); the text may hold brackets of a code span, not nested links
LINK = re.compile(r"!?\[[^\]]*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$", re.M)


def _prose(text: str) -> str:
    """The text with code blocks removed and code spans blanked: links and headings inside code are
    not links and headings."""
    text = FENCE.sub("", text)
    return CODE_SPAN.sub(lambda m: "x" * len(m.group(2)), text)


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading: markup dropped, lower case, punctuation other than `-` and
    `_` removed, each space a hyphen."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.replace("`", "").replace("*", "")
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors of a markdown file's headings, a repeated one numbered `-1`, `-2`, ... as GitHub
    numbers them."""
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    out: set[str] = set()
    for m in HEADING.finditer(text):
        slug = _slug(m.group(2))
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def links(path: Path) -> list[str]:
    """The relative link targets of a markdown file (no scheme), in order."""
    targets = LINK.findall(_prose(path.read_text(encoding="utf-8")))
    return [t for t in targets if not re.match(r"^[a-z][a-z0-9+.-]*:", t, re.I)]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_relative_links_resolve(doc: Path) -> None:
    broken = []
    for target in links(doc):
        file_part, _, anchor = target.partition("#")
        dest = (doc.parent / file_part).resolve() if file_part else doc
        if not dest.exists():
            broken.append(f"{target}: no file {dest.relative_to(REPO) if dest.is_relative_to(REPO) else dest}")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading with anchor #{anchor} in {dest.relative_to(REPO)}")
    assert not broken, f"{doc.relative_to(REPO)}: broken links:\n" + "\n".join(broken)


def test_the_checker_sees_links_and_anchors(tmp_path: Path) -> None:
    """The checker itself: GitHub's anchors of headings with code and punctuation, numbered repeats,
    links in code left alone."""
    doc = tmp_path / "d.md"
    doc.write_text(
        "# Title\n\n## `elopipe ingest`\n\n## What the rating waits for, or refuses\n\n## Notes\n\n## Notes\n\n"
        "```bash\n# not a heading\n[no](link.md)\n```\n\n"
        "See [a](#elopipe-ingest), [b](other.md#x) and `[c](code.md)`.\n",
        encoding="utf-8",
    )
    assert anchors(doc) == {"title", "elopipe-ingest", "what-the-rating-waits-for-or-refuses", "notes", "notes-1"}
    assert links(doc) == ["#elopipe-ingest", "other.md#x"]


def test_readme_links_every_command_of_the_reference() -> None:
    """README's short command table links each `## elopipe ...` section of docs/commands.md."""
    commands = {a for a in anchors(REPO / "docs" / "commands.md") if a.startswith("elopipe-")}
    linked = {t.partition("#")[2] for t in links(REPO / "README.md") if t.startswith("docs/commands.md#")}
    assert commands, "docs/commands.md has no `## elopipe ...` section"
    assert commands <= linked, f"README does not link: {sorted(commands - linked)}"
