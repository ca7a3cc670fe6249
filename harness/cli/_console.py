"""The rich console the CLI prints with: :class:`SafeConsole` shows every string it renders
(printed lines, table cells, log lines) with control characters escaped (``\\x1b``), as
:func:`harness.cli._common.echo` does for plain lines, while its own colours still reach the
terminal. A provider's error message ``bad \\x1b]0;PWNED\\x07`` is shown as that text; it does
not retitle the window.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from harness.cli._common import safe_text

__all__ = ["SafeConsole"]


class SafeConsole(Console):
    """A :class:`rich.console.Console` whose strings are escaped before markup is parsed (so
    the escapes cannot form markup either; newlines and tabs are kept)."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        return super().render_str(safe_text(text), **kwargs)
