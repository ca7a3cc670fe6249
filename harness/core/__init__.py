"""harness.core: the bottom layer, the data every other package shares.

Messages (:mod:`~harness.core._messages`), the event stream (:mod:`~harness.events`), how a
run ends (:mod:`~harness.core._terminations`), call records and the budget
(:mod:`~harness.core._budget`), the :class:`~harness.core._result.Result`, and the halt signal
(:mod:`~harness.core._halt`). These modules import nothing from harness but each other and
:mod:`harness.errors`, so providers, tools, telemetry, the kernel and everything above can use
them without import cycles (:mod:`harness.events`, the event classes, sits beside core and
imports it; core never imports events). The public names are in ``__all__`` below, and the
everyday ones in :mod:`harness`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness._exports import lazy_exports

if TYPE_CHECKING:
    from harness.core._budget import CallRecord as CallRecord
    from harness.core._halt import HaltRun as HaltRun
    from harness.core._messages import Message as Message
    from harness.core._messages import TokenUsage as TokenUsage
    from harness.core._messages import ToolCall as ToolCall
    from harness.core._messages import ToolResult as ToolResult
    from harness.core._messages import UIPayload as UIPayload
    from harness.core._result import Result as Result
    from harness.core._result import TurnRecord as TurnRecord
    from harness.core._result import UsageTotals as UsageTotals
    from harness.core._terminations import Category as Category
    from harness.core._terminations import FinishReason as FinishReason

#: Each private module and the public names it exports here (``__all__`` derives from it).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "harness.core._budget": ("CallRecord",),
    "harness.core._halt": ("HaltRun",),
    "harness.core._messages": ("Message", "TokenUsage", "ToolCall", "ToolResult", "UIPayload"),
    "harness.core._result": ("Result", "TurnRecord", "UsageTotals"),
    "harness.core._terminations": ("Category", "FinishReason"),
}
__all__, __getattr__ = lazy_exports(__name__, _EXPORTS)
