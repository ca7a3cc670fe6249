"""Usage and cost accounting: a :class:`CallRecord` per provider call, summed in a
:class:`Budget`.

Unlike ExAthena, every call is folded in (plan, reflect, compaction summaries, structured output and
sub-agent runs), each tagged with its purpose so reports can split the cost.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from typing import Literal

from harness.core._messages import TokenUsage

__all__ = ["Budget", "CallPurpose", "CallRecord"]

CallPurpose = Literal["main", "plan", "reflect", "compact", "structured", "subagent"]


@dataclass(slots=True)
class CallRecord:
    """One provider call: what it was for, what it used and cost, how long it took."""

    index: int
    purpose: CallPurpose
    model: str | None
    usage: TokenUsage
    cost_usd: float | None
    latency_ms: float
    started_at_ns: int
    ended_at_ns: int
    response_id: str | None = None
    response_model: str | None = None
    finish_reason: str | None = None
    iteration: int | None = None
    error: str | None = None
    attempts: int = 1
    #: The sub-agent that made the call (``purpose == "subagent"``), None for the run's own.
    agent: str | None = None
    #: How the provider read a reply that was not in the expected form (None: as it came).
    repaired: str | None = None


@dataclass(slots=True)
class Budget:
    """Running totals. ``cost_usd`` stays ``None`` until some call reports a known cost."""

    usage: TokenUsage = field(default_factory=TokenUsage)
    cost_usd: float | None = None
    calls: list[CallRecord] = field(default_factory=list)

    def add(self, usage: TokenUsage | None, cost_usd: float | None) -> None:
        if usage is not None:
            self.usage.add(usage)
        # A NaN cost is unknown, as None is: summed, it made the run's cost NaN and the budget
        # never reached (a plug-in provider's, adversary round 16, part A).
        if cost_usd is not None and not math.isnan(cost_usd):
            total = (self.cost_usd or 0.0) + max(cost_usd, 0.0)
            # A sum past the largest float (two calls of $1e308) is kept at it: as inf it made
            # the run's row unstorable, the cell lost (adversary round 17, part A).
            self.cost_usd = min(total, sys.float_info.max)

    def record(self, call: CallRecord) -> None:
        """Add a call's usage and cost and keep its record."""
        self.calls.append(call)
        self.add(call.usage, call.cost_usd)

    def exceeded(self, cap: float | None) -> bool:
        """True iff a cap is set, the cost is known, and the cost has reached the cap."""
        return cap is not None and self.cost_usd is not None and self.cost_usd >= cap
