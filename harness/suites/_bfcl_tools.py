"""Harness tools for a BFCL entry; multi-turn tools execute BFCL's own classes.

:func:`build_tools` makes one :class:`BfclToolset` per cell: for a multi-turn entry, a fresh
:class:`BfclState` holds that cell's instances of the entry's classes (``Class()`` then
``_load_scenario(deepcopy(initial_config[Class]), long_context=...)``, as BFCL's executor does;
MathAPI has no scenario), so state persists across the cell's user turns and is never shared
with another cell (BFCL's own executor keeps instances in module globals). A call runs the
instance's method with the arguments as keywords; the result becomes text as in BFCL (dicts as
JSON, other values ``str()``; an exception as ``"Error during execution: ..."``).

The classes compute on the model's numbers (``power(3, 20000000)`` runs for seconds), so a call
runs in one of BFCL's killable worker processes (:mod:`harness.grading._bfcl_worker`), never on
the event loop: the instances travel there pickled and come back pickled with the call's
changes (the cell's state is those bytes). Past :data:`CALL_TIME_LIMIT_S` (or the run's
``tool_timeout_s``, whichever comes first) the worker is killed, the call is an error result
and the cell's state is as it was before the call. The same holds for a call that needs more
than the worker's memory (:data:`~harness.grading._bfcl_worker.MEMORY_LIMIT_BYTES`) or whose
result is longer than :data:`MAX_RESULT_CHARS` (``find`` over a folder tree the model's ``cp``
calls made to branch at every level lists billions of paths). MathAPI sets process-global
``mpmath`` and ``decimal`` precision: in the worker, which runs one call at a time, both are
restored after every call.

Single-turn (AST) entries are graded on the calls alone: their tools execute nothing and answer
:data:`AST_RESULT`.
"""

from __future__ import annotations

import asyncio
import copy
import decimal
import inspect
import json
import pickle
from dataclasses import dataclass, field
from typing import Any, ClassVar

from harness.errors import ToolError
from harness.grading._bfcl_env import CLASS_MODULES, bfcl_module
from harness.grading._bfcl_worker import (
    MEMORY_LIMIT_BYTES,
    WorkerDied,
    current,
    give_back_memory,
)
from harness.suites._bfcl_data import BfclEntry, tool_spec
from harness.tools._base import ToolContext

__all__ = [
    "AST_RESULT",
    "CALL_TIME_LIMIT_S",
    "MAX_RESULT_CHARS",
    "BfclState",
    "BfclTool",
    "BfclToolset",
    "build_tools",
]

AST_RESULT = "Call recorded. This task is graded on the calls you made; reply in text now."
_STATELESS = frozenset({"MathAPI"})
#: A BFCL call past this many seconds is stopped (its worker killed): an error result.
CALL_TIME_LIMIT_S = 10.0
#: A BFCL result longer than this many characters is not returned (the call is stopped).
MAX_RESULT_CHARS = 1_000_000


class _CallStopped(Exception):
    """A BFCL call stopped at a limit other than time (in the worker): its message says which."""


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


def _build(classes: tuple[str, ...], config: dict[str, Any], long_context: bool) -> list[Any]:
    """Fresh instances of ``classes`` as BFCL's executor makes them (in the worker)."""
    instances = []
    for cls_name in classes:
        module = bfcl_module(CLASS_MODULES[cls_name])
        instance = getattr(module, cls_name)()
        if cls_name not in _STATELESS:
            scenario = copy.deepcopy(config.get(cls_name, {}))
            instance._load_scenario(scenario, long_context=long_context)
        instances.append(instance)
    return instances


def execute(
    classes: tuple[str, ...],
    config: dict[str, Any],
    long_context: bool,
    state: bytes | None,
    name: str,
    arguments: Any,
) -> tuple[str, bytes]:
    """One call, in a BFCL worker process: the cell's instances (``state``, pickled; ``None``
    before the first call), the method ``name`` of the last class that has it (as in BFCL's
    executor) run with ``arguments`` as keywords. Returns BFCL's result text and the instances
    after the call, pickled. BFCL's module globals are put back after it by
    the worker (:func:`~harness.grading._bfcl_worker.restore_globals`)."""
    mpmath = bfcl_module("mpmath")
    instances = _build(classes, config, long_context) if state is None else pickle.loads(state)
    methods: dict[str, Any] = {}
    for instance in instances:
        for member, bound in inspect.getmembers(instance, predicate=inspect.ismethod):
            if not member.startswith("_"):
                methods[member] = bound  # a later class wins, as in BFCL's executor
    method = methods.get(name)
    saved = (mpmath.mp.prec, decimal.getcontext().prec)
    text = ""
    out_of_memory = False
    try:
        if method is None:
            raise NameError(f"name '{name}' is not defined")
        if not isinstance(arguments, dict):
            raise TypeError(f"{name}() arguments must be an object")
        text = _as_text(method(**arguments))
    except MemoryError:  # raised below, once the traceback (and what its frames hold) is gone
        out_of_memory = True
    except Exception as exc:
        text = f"Error during execution: {exc}"
    finally:
        mpmath.mp.prec, decimal.getcontext().prec = saved
    if out_of_memory:
        give_back_memory()
        raise _CallStopped(_memory_stop(name))
    if len(text) > MAX_RESULT_CHARS:
        raise _CallStopped(
            f"{name}: BFCL's result is {len(text):,} characters, over the limit of "
            f"{MAX_RESULT_CHARS:,}; the call was stopped"
        )
    try:
        return text, pickle.dumps(instances, protocol=pickle.HIGHEST_PROTOCOL)
    except MemoryError:
        out_of_memory = True
    give_back_memory()
    raise _CallStopped(_memory_stop(name))


def _memory_stop(name: str) -> str:
    return (
        f"{name}: BFCL's call needed more than {MEMORY_LIMIT_BYTES // 2**20:,} MiB of memory "
        "and was stopped"
    )


class BfclState:
    """One cell's instances of BFCL's classes for a multi-turn entry: pickled, made in a worker
    by the first call; each call runs in a worker and brings back the instances it changed."""

    def __init__(self, entry: BfclEntry) -> None:
        self.entry = entry
        #: The instances after the last call that finished, pickled (None before the first).
        self.pickled: bytes | None = None
        self._lock = asyncio.Lock()  # one call of the cell at a time: each sees the last

    async def call(self, name: str, arguments: Any, timeout_s: float = CALL_TIME_LIMIT_S) -> str:
        """Run one call on this cell's instances and return BFCL's result text; a call past
        ``timeout_s`` raises :class:`~harness.tools._base.ToolError` (its worker killed, the
        instances as before it), as does one past the worker's memory or
        :data:`MAX_RESULT_CHARS`."""
        entry = self.entry
        async with self._lock:
            try:
                text, self.pickled = await current().call(
                    execute,
                    tuple(entry.involved_classes),
                    entry.initial_config if self.pickled is None else {},
                    "long_context" in entry.category,
                    self.pickled,
                    name,
                    arguments,
                    timeout_s=timeout_s,
                )
            except TimeoutError:
                raise ToolError(
                    f"{name}: BFCL's call took over {timeout_s:g} s and was stopped"
                ) from None
            except _CallStopped as exc:  # the instances stay as they were before the call
                raise ToolError(str(exc)) from None
            except (pickle.PicklingError, RecursionError):  # loky could not send the call
                raise ToolError(
                    f"{name}: the arguments are nested too deeply to hand to BFCL's worker "
                    "process; the call was not run"
                ) from None
            except WorkerDied:  # twice: out of memory where the call could not catch it
                raise ToolError(
                    f"{name}: BFCL's worker process died during the call, twice in two workers "
                    f"(past its memory limit of {MEMORY_LIMIT_BYTES // 2**20:,} MiB, or killed "
                    "from outside); the call was stopped"
                ) from None
            return text

    def instances(self) -> dict[str, Any]:
        """The instances after the last call, by class name (unpickled here: for tests)."""
        if self.pickled is None:
            return {}
        return dict(zip(self.entry.involved_classes, pickle.loads(self.pickled), strict=True))


class BfclTool:
    """A BFCL function as a harness tool."""

    #: The harness's own code: the kernel awaits ``run`` directly (kernel._isolated.owned).
    _harness_owned: ClassVar[bool] = True

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
        return await self._state.call(self.bfcl_name, args)

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
