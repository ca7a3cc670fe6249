"""The rich console the CLI prints with: :class:`SafeConsole` shows every string it renders
(printed lines, table cells, log lines) with control characters escaped (``\\x1b``), as
:func:`harness.cli._common.echo` does for plain lines, while its own colours still reach the
terminal. A provider's error message ``bad \\x1b]0;PWNED\\x07`` is shown as that text; it does
not retitle the window.

Strings longer than :data:`HIGHLIGHT_MAX_CHARS` are printed without rich's automatic
highlighting: its regular expressions take time quadratic in a line's length (16,000 zeros: 8.6
s; a provider's 400 whose message was 200 KB of digits held `harness run` at its summary for
more than two minutes after every cell was stored).
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from harness.cli._common import safe_text

__all__ = ["HIGHLIGHT_MAX_CHARS", "SafeConsole"]

#: Longer strings are printed without automatic highlighting (see the module docs).
HIGHLIGHT_MAX_CHARS = 1_000


class SafeConsole(Console):
    """A :class:`rich.console.Console` whose strings are escaped before markup is parsed (so
    the escapes cannot form markup either; newlines and tabs are kept), with rich's emoji codes
    off: a provider ``openai:m`` was printed ``openaiⓂ pre-flight failed`` (``:m:``), a
    ``--db h:fire:.duckdb`` as ``h🔥.duckdb`` (adversary round 14, part A)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("emoji", False)
        super().__init__(*args, **kwargs)

    def on_broken_pipe(self) -> None:
        """The reader is gone (``harness run ... 2>&1 | head``): the console goes quiet and
        the command goes on. Rich's own raised ``SystemExit(1)`` in whatever printed: in the
        progress bar, inside the executor, a run whose cells had all finished and were stored
        was stored ``failed`` (``the executor 'local' raised SystemExit: 1``); in the summary
        it made the exit code 1 (adversary round 17, part A)."""
        self.quiet = True

    def render_str(self, text: str, **kwargs: Any) -> Text:
        if len(text) > HIGHLIGHT_MAX_CHARS:
            kwargs["highlight"] = False
        return super().render_str(safe_text(text), **kwargs)
