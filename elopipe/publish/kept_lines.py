"""The lines that tell the user what a write through an output folder's manifest kept aside or
removed (`elopipe.publish.manifest`). Plain words only: the CLI imports this without the writers."""

from __future__ import annotations


def set_aside_line(pairs: list[tuple[str, str]], shown: int = 3) -> str:
    """One line for the user about the files kept under `.elopipe-kept` (`manifest.KEPT`) before
    elopipe wrote their names (`Manifest.set_aside`); empty when there are none."""
    if not pairs:
        return ""
    names = ", ".join(f"{rel} -> {kept}" for rel, kept in pairs[:shown])
    more = f" and {len(pairs) - shown} more" if len(pairs) > shown else ""
    many = (
        "file elopipe had not written (or one edited by hand) was"
        if len(pairs) == 1
        else "files elopipe had not written (or edited by hand) were"
    )
    over = "it" if len(pairs) == 1 else "them"
    return f"{len(pairs)} {many} kept before writing over {over}: {names}{more}"


def retired_line(rels: list[str], shown: int = 3) -> str:
    """One line for the user about the pages removed because the store no longer holds their
    event or player, or rates the event (`Manifest.retired`); empty when there are none."""
    if not rels:
        return ""
    names = ", ".join(rels[:shown]) + (f" and {len(rels) - shown} more" if len(rels) > shown else "")
    files = "file" if len(rels) == 1 else "files"
    return (
        f"{len(rels)} {files} removed, of pages whose event or player the store no longer holds or rates"
        f" (a corrected file replaced it, or its games count under the same event from another file): {names}"
    )
