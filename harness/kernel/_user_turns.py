"""Follow-up user turns as data: a ``turns=`` item (:class:`UserTurn`, parsed by
:func:`parse_turn` when the options are validated), a turn whose tools the facade resolved
(:class:`PendingTurn`), and a run's per-turn records (:class:`TurnLog`, held by the State,
frozen into ``Result.turns``). How the kernel plays the turns is
:mod:`harness.kernel._conversation`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.core._result import StepCall, TurnRecord
from harness.core._terminations import FinishReason

if TYPE_CHECKING:
    from harness.tools._base import Tool

__all__ = ["PendingTurn", "TurnLog", "UserTurn", "parse_turn"]


@dataclass(slots=True, frozen=True)
class UserTurn:
    """A follow-up user turn: the message, and the tools it adds (tool objects or builtin
    names). ``turns=`` also takes a plain string or a mapping ``{"user": ..., "add_tools":
    [...]}``."""

    user: str
    add_tools: tuple[Any, ...] = ()


def parse_turn(item: Any, where: str) -> UserTurn:
    """One ``turns=`` item as a :class:`UserTurn`; ValueError naming ``where`` otherwise."""
    if isinstance(item, UserTurn):
        return item
    if isinstance(item, str):
        return UserTurn(item)
    if isinstance(item, Mapping):
        unknown = sorted(str(k) for k in item if k not in ("user", "add_tools"))
        if unknown:
            raise ValueError(f"{where}: unknown key {unknown[0]!r} (a turn has user, add_tools)")
        user, tools = item.get("user"), item.get("add_tools")
    elif hasattr(item, "user"):
        user, tools = item.user, getattr(item, "add_tools", None)
    else:
        raise ValueError(
            f"{where}: expected a string or {{user: str, add_tools: [...]}}, got "
            f"{type(item).__name__}"
        )
    if not isinstance(user, str):
        raise ValueError(f"{where}.user: expected a string, got {type(user).__name__}")
    if tools is None:
        return UserTurn(user)
    if isinstance(tools, str | bytes) or not isinstance(tools, Sequence):
        raise ValueError(f"{where}.add_tools: expected a list of tools or tool names")
    return UserTurn(user, tuple(tools))


@dataclass(slots=True, frozen=True)
class PendingTurn:
    """A follow-up turn with its added tools resolved (by the facade) and checked."""

    user: str
    tools: tuple[Tool, ...] = ()


@dataclass(slots=True, eq=False)
class _Open:
    """The mutable record of a turn while it runs."""

    index: int
    user: str
    added_tools: tuple[str, ...] = ()
    steps: list[list[StepCall]] = field(default_factory=list)
    reply: str | None = None
    finish_reason: FinishReason | None = None

    def freeze(self) -> TurnRecord:
        return TurnRecord.model_construct(
            index=self.index,
            user=self.user,
            added_tools=list(self.added_tools),
            steps=[list(s) for s in self.steps],
            reply=self.reply,
            finish_reason=self.finish_reason,
        )


@dataclass(slots=True, eq=False)
class TurnLog:
    """A run's user turns: those to come and the records of those started."""

    pending: list[PendingTurn] = field(default_factory=list)
    records: list[_Open] = field(default_factory=list)
    #: True when the run has follow-up turns: then turns are framed by events.
    conversation: bool = False

    def start(self, user: str, added: tuple[str, ...] = ()) -> _Open:
        record = _Open(len(self.records), user, added)
        self.records.append(record)
        return record

    @property
    def current(self) -> _Open | None:
        return self.records[-1] if self.records else None

    @property
    def steps_in_turn(self) -> int:
        return len(self.records[-1].steps) if self.records else 0

    def frozen(self) -> list[TurnRecord]:
        return [r.freeze() for r in self.records]
