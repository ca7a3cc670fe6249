"""Harness tools for a BFCL entry; multi-turn tools execute BFCL's own classes.

:func:`build_tools` makes one :class:`BfclToolset` per cell: for a multi-turn entry, a fresh
:class:`BfclState` holds that cell's instances of the entry's classes (``Class()`` then
``_load_scenario(deepcopy(initial_config[Class]), long_context=...)``, as BFCL's executor does;
MathAPI has no scenario), so state persists across the cell's user turns and is never shared
with another cell (BFCL's own executor keeps instances in module globals). A call runs the
instance's method with the arguments as keywords; the result becomes text as in BFCL (dicts as
JSON, other values ``str()``; an exception as ``"Error during execution: ..."``). MathAPI sets
process-global ``mpmath`` and ``decimal`` precision: both are restored after every call.

Single-turn (AST) entries are graded on the calls alone: their tools execute nothing and answer
:data:`AST_RESULT`.
"""

from __future__ import annotations

import copy
import decimal
import inspect
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness.grading._bfcl_env import bfcl_module
from harness.suites._bfcl_data import BfclEntry, tool_spec
from harness.tools._base import ToolContext

__all__ = ["AST_RESULT", "BfclState", "BfclTool", "BfclToolset", "build_tools"]

AST_RESULT = "Call recorded. This task is graded on the calls you made; reply in text now."
_MODULES = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code."
_CLASS_MODULES = {
    "GorillaFileSystem": "gorilla_file_system", "MathAPI": "math_api",
    "MessageAPI": "message_api", "TwitterAPI": "posting_api", "TicketAPI": "ticket_api",
    "TradingBot": "trading_bot", "TravelAPI": "travel_booking",
    "VehicleControlAPI": "vehicle_control",
}  # fmt: skip
_STATELESS = frozenset({"MathAPI"})
_lock = threading.Lock()


def _as_text(value: Any) -> str:
    """BFCL's ``execute_multi_turn_func_call`` conversion of a result."""
    if type(value) is str:
        return value
    if type(value) is dict:
        try:
            return json.dumps(value)
        except (TypeError, ValueError):
            return str(value)
    return str(value)


class BfclState:
    """One cell's instances of BFCL's classes for a multi-turn entry (created on first use)."""

    def __init__(self, entry: BfclEntry) -> None:
        self.entry = entry
        self.instances: dict[str, Any] = {}
        self._methods: dict[str, Callable[..., Any]] | None = None

    def _build(self) -> dict[str, Callable[..., Any]]:
        methods: dict[str, Callable[..., Any]] = {}
        long_context = "long_context" in self.entry.category
        for cls_name in self.entry.involved_classes:
            module = bfcl_module(_MODULES + _CLASS_MODULES[cls_name])
            instance = getattr(module, cls_name)()
            if cls_name not in _STATELESS:
                config = copy.deepcopy(self.entry.initial_config.get(cls_name, {}))
                instance._load_scenario(config, long_context=long_context)
            self.instances[cls_name] = instance
            for name, method in inspect.getmembers(instance, predicate=inspect.ismethod):
                if not name.startswith("_"):
                    methods[name] = method  # a later class wins, as in BFCL's executor
        return methods

    def call(self, name: str, arguments: Any) -> str:
        """Run one call on this cell's instances and return BFCL's result text."""
        mpmath = bfcl_module("mpmath")
        with _lock:
            if self._methods is None:
                self._methods = self._build()
            method = self._methods.get(name)
            saved = (mpmath.mp.prec, decimal.getcontext().prec)
            try:
                if method is None:
                    raise NameError(f"name '{name}' is not defined")
                if not isinstance(arguments, dict):
                    raise TypeError(f"{name}() arguments must be an object")
                return _as_text(method(**arguments))
            except Exception as exc:
                return f"Error during execution: {exc}"
            finally:
                mpmath.mp.prec, decimal.getcontext().prec = saved


class BfclTool:
    """A BFCL function as a harness tool."""

    parallel_safe = False
    read_only = False

    def __init__(self, spec: dict[str, Any], state: BfclState | None, bfcl_name: str) -> None:
        self.name: str = spec["name"]
        self.description: str = spec["description"]
        self.parameters: dict[str, Any] = spec["parameters"]
        self.bfcl_name = bfcl_name
        self._state = state

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        if self._state is None:
            return AST_RESULT
        return self._state.call(self.bfcl_name, args)

    def __repr__(self) -> str:
        return f"BfclTool({self.name!r})"


@dataclass(slots=True)
class BfclToolset:
    """The tools of one cell: ``tools`` from the start, ``added`` by user turn (miss_func)."""

    tools: list[BfclTool]
    added: dict[int, list[BfclTool]] = field(default_factory=dict)
    state: BfclState | None = None


def build_tools(entry: BfclEntry) -> BfclToolset:
    """Fresh tools for one cell of ``entry`` (new instances of BFCL's classes for multi-turn)."""
    state = BfclState(entry) if entry.kind == "multi_turn" else None

    def make(doc: dict[str, Any]) -> BfclTool:
        return BfclTool(tool_spec(doc), state, doc["name"])

    return BfclToolset(
        [make(d) for d in entry.functions],
        {turn: [make(d) for d in docs] for turn, docs in entry.missed.items()},
        state,
    )
