"""Permissions: may this tool call run? (port of ``ExAthena.Permissions``)

Deny-first; the first decisive answer wins:

1. ``disallowed_tools`` - listed names are denied, in every phase;
2. ``allowed_tools`` - when given, any other name is denied;
3. the phase - ``plan`` allows read-only tools (and the session tools ``finish``, ``kv_set``,
   ``todo_write``) and denies the rest; ``default`` asks ``can_use_tool``; ``accept_edits`` asks
   it only for tools that are neither read-only nor edits; ``trusted`` and
   ``bypass_permissions`` never ask;
4. ``can_use_tool(name, args, ctx)`` - returns ``True``/``"allow"``, ``False``/``"deny"``,
   :class:`~harness.kernel._hooks.Deny`, :class:`~harness.kernel._hooks.HaltRun` or ``"halt"``;
   anything else (``None`` included) denies, so a callback that forgets to return fails closed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

from harness._plugins import shown_value
from harness.kernel._hooks import Deny, HaltRun
from harness.kernel._isolated import called, unawaited
from harness.kernel._told import told

__all__ = ["Denial", "Permissions", "Phase"]

DenialCode = Literal["phase_gated", "user_denied", "unknown"]

#: Tools whose effects stay inside the run: allowed in the plan phase.
SESSION_TOOLS = frozenset({"finish", "kv_set", "todo_write"})
#: Tools accept_edits lets through without asking.
EDIT_TOOLS = frozenset({"write_file", "edit_file", "kv_set", "todo_write"})


class Phase(StrEnum):
    PLAN = "plan"
    DEFAULT = "default"
    ACCEPT_EDITS = "accept_edits"
    TRUSTED = "trusted"
    BYPASS_PERMISSIONS = "bypass_permissions"


@dataclass(slots=True, frozen=True)
class Denial:
    reason: str
    code: DenialCode


CanUseTool = Callable[[str, dict[str, Any], Any], Any]


@dataclass(slots=True, frozen=True)
class Permissions:
    phase: Phase = Phase.DEFAULT
    allowed_tools: frozenset[str] | None = None
    disallowed_tools: frozenset[str] = frozenset()
    can_use_tool: CanUseTool | None = None

    async def check(
        self, name: str, args: dict[str, Any], read_only: bool, ctx: Any
    ) -> Denial | HaltRun | None:
        """``None`` to allow, a :class:`Denial`, or :class:`HaltRun` to stop the run."""
        if name in self.disallowed_tools:
            return Denial(f"permission denied: tool '{name}' is disallowed", "user_denied")
        if self.allowed_tools is not None and name not in self.allowed_tools:
            return Denial(
                f"permission denied: tool '{name}' is not in allowed_tools", "user_denied"
            )
        phase = self.phase
        if phase is Phase.PLAN:
            if read_only or name in SESSION_TOOLS:
                return None
            return Denial(
                f"permission denied: tool '{name}' is not available in the plan phase "
                "(read-only tools only)",
                "phase_gated",
            )
        if phase in (Phase.TRUSTED, Phase.BYPASS_PERMISSIONS) or self.can_use_tool is None:
            return None
        if phase is Phase.ACCEPT_EDITS and (read_only or name in EDIT_TOOLS):
            return None
        return await self._ask(name, args, ctx)

    async def _ask(self, name: str, args: dict[str, Any], ctx: Any) -> Denial | HaltRun | None:
        assert self.can_use_tool is not None
        done, answer = await called(self.can_use_tool, name, args, ctx)
        if not done:
            return HaltRun(f"can_use_tool crashed: {await told(answer)}")
        # Its answer is read in the run's task (``==``, a class pattern), as a plug-in's call:
        # an answer whose ``__eq__`` raised ended the run as a bare error, one that cancelled
        # the run's task left ``harness.run`` as ``CancelledError`` (adversary round 17, part
        # A), and one that cancelled it, then raised ``GeneratorExit`` too (round 19, part A).
        read, decision = await called(_decision, name, answer)
        if not read:
            why = await told(decision)
            return HaltRun(f"can_use_tool crashed: its answer cannot be read: {why}")
        return decision  # type: ignore[no-any-return]


def _decision(name: str, answer: Any) -> Denial | HaltRun | None:
    """What a ``can_use_tool`` answer decides."""
    match answer:  # a plug-in's: its __eq__ and class may be its own
        case True | "allow":
            return None
        case None:
            return Denial(
                "permission denied: can_use_tool returned None (return True/'allow' to "
                "allow; a callback that forgets to return must not allow everything)",
                "unknown",
            )
        case False | "deny":
            return Denial("permission denied: denied by callback", "user_denied")
        case Deny(reason=r):
            return Denial(f"permission denied: {r}", "user_denied")
        case HaltRun():
            return answer
        case "halt":
            return HaltRun(f"can_use_tool halted the run at tool '{name}'")
        case _ if unawaited(answer):  # an async callback's coroutine it did not await
            return Denial(
                "permission denied: can_use_tool returned a coroutine it did not await",
                "unknown",
            )
        case _:
            return Denial(
                "permission denied: can_use_tool returned an unsupported value "
                f"{shown_value(answer)}",
                "unknown",
            )
