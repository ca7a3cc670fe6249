"""Provider calls made by modes and the kernel: request building, streaming, accounting.

Every call goes through :func:`call_provider`, so each one is counted in ``llm_calls``, recorded in
``Result.calls`` with its purpose, folded into the budget, and framed by ``CallStarted`` /
``CallFinished`` events (which telemetry turns into ``chat`` spans).
"""

from __future__ import annotations

import math
import numbers
import operator
import time
from dataclasses import fields
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, cast

from harness._plugins import shown_value
from harness.core._budget import CallPurpose, CallRecord
from harness.core._messages import INVALID_JSON_KEY, Message, TokenUsage, ToolCall
from harness.errors import HarnessError, ProviderError
from harness.events import CallFinished, CallStarted, Content, RunWarning, Thinking, Usage
from harness.kernel._isolated import awaiting, own, owned, ran
from harness.kernel._told import told
from harness.providers._base import Request, Response

if TYPE_CHECKING:
    from harness.kernel._state import State

__all__ = ["MAX_ARGUMENT_DEPTH", "MAX_CALL_COST_USD", "build_request", "call_provider"]

_ZERO = TokenUsage()


def build_request(
    state: State,
    messages: list[Message],
    *,
    purpose: CallPurpose = "main",
    with_tools: bool = True,
    system_prompt: str | None = None,
    max_tokens: int | None = None,
) -> Request:
    """A request from the run's options (the ``request_template`` of ExAthena). Main calls also
    carry the mode's ``state.system_suffix`` and, as a last user message that is never
    persisted, ``state.phase_note``."""
    cfg = state.config
    if system_prompt is None:
        system_prompt = cfg.system_prompt
        if state.system_suffix and purpose == "main":
            system_prompt = (system_prompt or "") + state.system_suffix
    if max_tokens is None:  # an escalated cap (thinking starvation) outlives the option
        max_tokens = state.max_tokens_override or cfg.max_tokens
    if state.phase_note and purpose == "main":
        messages = [*messages, Message.user(state.phase_note)]  # sent, never persisted
    return Request(
        messages=messages,
        model=state.model,
        system_prompt=system_prompt,
        tools=(state.tool_specs or None) if with_tools else None,
        tool_choice=cfg.tool_choice if with_tools else None,
        temperature=cfg.temperature,
        top_p=cfg.top_p,
        seed=cfg.seed,
        max_tokens=max_tokens
        if max_tokens is not None
        else state.max_tokens_override or cfg.max_tokens,
        stop=cfg.stop,
        timeout_s=cfg.timeout_s,
        response_format=cfg.response_format if purpose == "main" else None,
        examples=tuple(cfg.examples or ()) if with_tools else (),
        provider_opts=cfg.provider_opts,
        metadata=cfg.metadata,
        purpose=purpose,
    )


async def call_provider(state: State, request: Request) -> tuple[Response, bool]:
    """Make one provider call. Returns the response and whether its text was streamed as
    ``Content``/``Thinking`` events already (then the caller must not emit it again)."""
    provider = state.provider
    index = len(state.budget.calls)
    purpose = request.purpose
    streamed = False
    calling = True
    on_delta = None
    if state.subscribers and state.capabilities.streaming:

        def on_delta(kind: Literal["content", "thinking"], text: str) -> None:
            nonlocal streamed
            if not calling:  # kept by a plug-in past its call: its text came after the run's
                return  # Done, or as another call's (adversary round 21, part A)
            # A plug-in provider's delta of an int, None or bytes printed the tracer's
            # traceback and lost the run's spans (adversary round 17, part A): its own error.
            if kind not in ("content", "thinking") or not isinstance(text, str):
                raise TypeError(
                    "on_delta(kind, text) takes 'content' or 'thinking' and a str, not "
                    f"{shown_value(kind, 40)} and a {type(text).__name__}"
                )
            text = str.__str__(text)
            streamed = True
            state.emit(Content(text, purpose) if kind == "content" else Thinking(text, purpose))

    if state.subscribers:
        state.emit(CallStarted(index, purpose, request.model, state.provider_name))
    started = time.time_ns()
    t0 = time.perf_counter()
    try:
        try:
            response = await _answer(provider, request, on_delta)
        finally:
            calling = False
    except ProviderError as exc:
        _record(state, index, request, None, started, t0, error=str(exc), attempts=exc.attempts)
        raise
    except HarnessError as exc:  # e.g. a cassette miss: a clear failure, not a crash
        reason = f"{type(exc).__name__}: {exc}"
        _record(state, index, request, None, started, t0, error=reason)
        raise ProviderError("unknown", reason) from exc
    except Exception as exc:  # a provider bug must not escape as anything but a ProviderError
        crash = await told(exc, _crash)
        _record(state, index, request, None, started, t0, error=crash)
        raise ProviderError("unknown", f"provider crashed: {crash}") from exc
    read, taken = await ran(_misfit, response, owned(provider))  # its properties: its code
    if own(taken):
        taken = f"a Response that, read, {_OWN_CANCEL}"
    elif not read:  # what _misfit does not catch: a GeneratorExit of its own, say
        taken = f"a Response whose fields cannot be read: {await told(taken, _crash)}"
    if isinstance(taken, str):
        reason = f"the provider answered {taken}"
        _record(state, index, request, None, started, t0, error=reason)
        raise ProviderError("invalid_response", reason)
    _record(state, index, request, response, started, t0, error=None, taken=taken)
    if any(_deeper_than(c.arguments, MAX_ARGUMENT_DEPTH) for c in response.tool_calls):
        response.tool_calls = [_bounded(c) for c in response.tool_calls]
    return response, streamed


_OWN_CANCEL = "cancelled its run's task"


def _crash(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


#: More tokens than a count of one call's can hold: a server's ``prompt_tokens`` of 10^29 made
#: the run's row unstorable (BIGINT), ended ``harness run`` with exit 2 and no row stored, the run
#: left ``running`` (adversary round 17, part A).
MAX_CALL_TOKENS = 10**12
#: More dollars than one call can cost: two cells of $1.7e308 summed to ``$inf`` in the run's
#: summary and ``harness report`` ended in an ``OverflowError`` traceback (round 18, part A).
MAX_CALL_COST_USD = 1e9


class _Taken(NamedTuple):
    """What the kernel takes from a provider's ``Response``, as plain values: a plug-in's
    ``int`` subclass whose comparisons lie passed the count checks (10^30 tokens: every cell's
    row refused, "never handed in its result"), a ``float`` subclass whose ``<`` raises, or
    ``retries`` of ``None``, ended the run blaming the harness's own ``TypeError`` (adversary
    round 18, part A)."""

    usage: TokenUsage | None
    cost: float | None
    retries: list[str]
    repairs: list[str]


async def _answer(provider: Any, request: Request, on_delta: Any) -> Any:
    """``provider.complete(request, on_delta)`` awaited. A plug-in's ``complete`` may be a
    plain function answering an awaitable: its own code runs in the run's task (through
    :func:`~harness.kernel._isolated.ran`), and cancelling that task left ``harness.run`` as a
    bare ``CancelledError`` (adversary round 17, part A)."""
    read, pending = await ran(provider.complete, request, on_delta)
    if not read:
        if own(pending):
            raise ProviderError("unknown", f"provider crashed: it {_OWN_CANCEL}")
        raise pending
    return await awaiting(provider, pending)


def _misfit(response: Any, owned: bool = True) -> _Taken | str:
    """What the kernel takes from a plug-in provider's answer (:class:`_Taken`), or what is
    wrong with it (see :func:`_misfits`); a ``Response`` whose fields raise when read is one
    too."""
    try:
        taken = _misfits(response)
        if not owned and not isinstance(taken, str):
            response.tool_calls = [_plain_call(c) for c in response.tool_calls]
        return taken
    except Exception as exc:
        return f"a Response whose fields cannot be read: {type(exc).__name__}: {exc}"


def _misfits(response: Any) -> _Taken | str:
    """A plug-in provider's answer taken, or what is wrong with it: a ``None``, a dict or a
    ``Response`` whose text is an ``int``, whose tool calls are dicts or a generator, whose
    usage is a ``str`` ended the run ``error_during_execution`` naming only an
    ``AttributeError`` or ``TypeError`` of the harness's (adversary round 16, part A)."""
    if not isinstance(response, Response):
        return f"{shown_value(response, 80)}, not a Response"
    response = cast(Any, response)  # a plug-in's: its fields may hold anything
    if not isinstance(response.text, str):
        return f"a Response whose text is a {type(response.text).__name__}, not a str"
    if type(response.text) is not str:  # a subclass's methods are its code (see below)
        response.text = str.__str__(response.text)
    calls = response.tool_calls
    if type(calls) is not list or any(
        not isinstance(c, ToolCall) or not isinstance(c.name, str) for c in calls
    ):
        return "a Response whose tool_calls are not a list of ToolCall with str names"
    if any(type(c) is not ToolCall or type(c.name) is not str for c in calls):
        # A subclass's fields (and a str subclass's methods) are its code, run again and again
        # in the run's task (a name cancelling that task on its third reading, a text whose
        # strip() did, left harness.run as CancelledError): the kernel keeps plain copies,
        # read once here (adversary round 18, part A).
        response.tool_calls = [ToolCall(c.id, str.__str__(c.name), c.arguments) for c in calls]
    cost = _dollars(response.cost_usd)
    if isinstance(cost, str):
        return f"a Response whose cost_usd is {cost}"
    usage = response.usage
    if usage is not None and not isinstance(usage, TokenUsage):
        return f"a Response whose usage is a {type(usage).__name__}, not a TokenUsage"
    counts: list[int] = []
    for field in fields(TokenUsage) if usage is not None else ():
        count = _count(getattr(usage, field.name))
        if isinstance(count, str):
            return f"a Response whose usage's {field.name} is {count}"
        counts.append(count)
    for name in _TEXT_FIELDS:  # kept in the Result, the transcript and the row as text
        value = getattr(response, name)
        if value is None:
            continue
        if not isinstance(value, str):
            return f"a Response whose {name} is a {type(value).__name__}, not a str"
        if type(value) is not str:
            setattr(response, name, str.__str__(value))
    notes = []
    for name in ("retries", "tool_call_repairs"):
        value = getattr(response, name)
        if type(value) not in (list, tuple) or not all(isinstance(v, str) for v in value):
            return f"a Response whose {name} are not a list of str"
        notes.append([str.__str__(v) for v in value])
    return _Taken(TokenUsage(*counts) if usage is not None else None, cost, *notes)


#: A plug-in provider's ``Response`` fields the kernel keeps as text (or None). An ``int``, or
#: an object whose ``str()`` raised, went into the Result's ``error_diagnostic``, its calls and
#: its transcript, which then could not be stored (stop 48).
_TEXT_FIELDS = ("thinking", "finish_reason", "model", "id", "repaired", "tool_call_error")

#: The most values a plug-in provider's tool-call arguments may hold.
MAX_ARGUMENT_VALUES = 1_000_000


def _plain_call(call: ToolCall) -> ToolCall:
    """``call`` with its arguments as plain JSON data (dicts, lists, ``str``, ``int``,
    ``float``, ``bool``, None), copied without recursion and without the values' own methods: a
    plug-in provider's arguments holding an object whose ``__deepcopy__`` cancelled the run's
    task (the kernel copies them for each tool and hook) left ``harness.run`` as
    ``CancelledError`` (adversary round 18, part A). Arguments nested deeper than
    :data:`MAX_ARGUMENT_DEPTH` are the model's error, as from any provider."""
    root: dict[str, Any] = {}
    stack: list[tuple[Any, Any, Any, int]] = [(call.arguments, root, "", 0)]
    count = 0
    while stack:
        value, parent, key, depth = stack.pop()
        count += 1
        kind = type(value)
        if depth > MAX_ARGUMENT_DEPTH:
            why = f"(arguments nested deeper than {MAX_ARGUMENT_DEPTH} levels)"
            return ToolCall(call.id, call.name, {INVALID_JSON_KEY: why})
        if count > MAX_ARGUMENT_VALUES:
            raise TypeError(f"tool call {call.name!r}: arguments of more than {count - 1:,} values")
        if issubclass(kind, dict):
            node: dict[str, Any] = {}
            parent[key] = node
            for k, v in dict.items(value):
                if not issubclass(type(k), str):
                    raise TypeError(f"tool call {call.name!r}: a key is a {type(k).__name__}")
                plain = str.__str__(k)
                node[plain] = None  # the model's order: the stack fills the values in reverse
                stack.append((v, node, plain, depth + 1))
        elif issubclass(kind, list | tuple):
            base: Any = list if issubclass(kind, list) else tuple
            parent[key] = items = [None] * base.__len__(value)
            at = base.__getitem__
            stack.extend((at(value, i), items, i, depth + 1) for i in range(len(items)))
        elif value is None or kind is bool:
            parent[key] = value
        elif issubclass(kind, str):
            parent[key] = str.__str__(value)
        elif issubclass(kind, int) and not issubclass(kind, bool):
            parent[key] = int.__index__(value)
        elif issubclass(kind, float):
            parent[key] = float.__float__(value)
        else:
            raise TypeError(f"tool call {call.name!r}: its arguments hold a {kind.__name__}")
    return ToolCall(call.id, call.name, root[""])


def _count(count: Any) -> int | str:
    """A token count as a plain ``int`` (a numpy one too), or what is wrong with it."""
    try:
        value = None if isinstance(count, bool) else int.__index__(operator.index(count))
    except TypeError:
        value = None
    if value is None or value < 0:
        return f"{shown_value(count, 40)}, not a count"
    if value > MAX_CALL_TOKENS:
        return f"{value:.3g}, past {MAX_CALL_TOKENS:.0e}"
    return value


def _dollars(cost: Any) -> float | str | None:
    """A cost as a plain ``float`` (NaN, an unknown cost, as None), or what is wrong with it:
    an ``int`` past a float's range raised ``OverflowError`` when summed, the harness's own
    ``error_during_execution`` (adversary round 17, part A)."""
    if cost is None:
        return None
    real = isinstance(cost, numbers.Real)  # a numpy float too
    if isinstance(cost, bool) or not real:
        return f"a {type(cost).__name__}, not a number"
    try:
        if isinstance(cost, int):
            value = float(int.__index__(cost))
        else:  # a float subclass's own __float__ is not asked; a numpy float's is
            value = float.__float__(cost if isinstance(cost, float) else float(cost))
    except OverflowError:
        value = math.inf
    if math.isnan(value):
        return None
    if not math.isfinite(value):
        return f"{shown_value(cost, 40)}, not a finite number"
    if value > MAX_CALL_COST_USD:
        return f"{value:.3g}, past ${MAX_CALL_COST_USD:.0e}"
    return value


#: Tool-call arguments nested deeper than this many levels are not taken as arguments: a model's
#: JSON 480 to 990 levels deep parses, then copying it (``copy.deepcopy``, before the tool and
#: for the turn's record) went past Python's recursion limit and ended the run as the harness's
#: ``internal error: RecursionError`` (adversary round 12, part C). Such a call is an error the
#: model is told, as arguments that are not JSON are.
MAX_ARGUMENT_DEPTH = 100


def _bounded(call: ToolCall) -> ToolCall:
    if not _deeper_than(call.arguments, MAX_ARGUMENT_DEPTH):
        return call
    why = f"(arguments nested deeper than {MAX_ARGUMENT_DEPTH} levels)"
    return ToolCall(call.id, call.name, {INVALID_JSON_KEY: why})


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests dicts and lists more than ``limit`` deep (an explicit stack)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list | tuple):
            children = node
        else:
            continue
        if depth >= limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def _record(
    state: State,
    index: int,
    request: Request,
    response: Response | None,
    started_ns: int,
    t0: float,
    *,
    error: str | None,
    attempts: int = 1,
    taken: _Taken | None = None,
) -> None:
    latency_ms = (time.perf_counter() - t0) * 1000.0
    usage = (taken.usage if taken is not None else None) or _ZERO
    cost = taken.cost if taken is not None else None
    retries = taken.retries if taken is not None else []
    record = CallRecord(
        index=index,
        purpose=request.purpose,
        model=request.model,
        usage=usage,
        cost_usd=cost,
        latency_ms=latency_ms,
        started_at_ns=started_ns,
        ended_at_ns=started_ns + int(latency_ms * 1e6),
        response_id=response.id if response is not None else None,
        response_model=response.model if response is not None else None,
        finish_reason=response.finish_reason if response is not None else None,
        iteration=state.iterations,
        error=error,
        attempts=1 + len(retries) if response is not None else attempts,
        repaired=response.repaired if response is not None else None,
    )
    state.budget.record(record)
    if state.subscribers:
        if retries:
            state.emit(
                RunWarning(
                    f"call {index} ({request.purpose}) succeeded after {len(retries)} "
                    f"retried attempt(s): {'; '.join(retries)}",
                    "provider",
                )
            )
        if taken is not None and taken.repairs:
            state.emit(
                RunWarning(
                    f"call {index} ({request.purpose}): the reply's tool calls were read after a "
                    f"repair: {'; '.join(taken.repairs)}",
                    "provider",
                )
            )
        if taken is not None and taken.usage is not None:
            state.emit(Usage(taken.usage, cost, request.purpose))
        state.emit(CallFinished(record, state.provider_name))
