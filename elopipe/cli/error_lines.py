"""The words of an error line, with nothing but `elopipe.read.control_chars` imported: `main`
says a bad setting with it before any command module is loaded, and loading them would read that
setting again (`sources` reads ELOPIPE_MAX_FILE_BYTES on import) and fail with a traceback."""

from __future__ import annotations

# the longest message an error line shows (an argument echoed in it can be any length)
MESSAGE_MAX = 2000


def error_line_of(command: str, message: str) -> str:
    """'elopipe rate: error: MESSAGE', the message cut at `MESSAGE_MAX` characters and its control
    characters but newlines written \\xNN (`escape_controls`): a message quoting a query, a name or
    an engine's words never carries an escape code to the terminal."""
    from elopipe.read.control_chars import escape_controls

    if len(message) > MESSAGE_MAX:  # a 100,000-character argument echoed whole made a 100 KB line
        message = f"{message[:MESSAGE_MAX]}... (cut: {len(message):,} characters)"
    return f"{command}: error: {escape_controls(message, keep_newlines=True)}"
