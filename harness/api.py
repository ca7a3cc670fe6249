"""The public entry points: :func:`run`, :func:`arun`, :func:`extract_structured`.

A thin facade: validate options (``ConfigError`` before anything runs), resolve the mode, the
tools and the provider and build the run's state (:func:`build_state`), wire the subscribers (the
trace subscriber when tracing is on, then the ``on_event`` callback), drive the kernel loop. The
resolution is here, above the kernel, so the kernel receives resolved objects and imports no mode
and no registry.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Coroutine, Mapping, Sequence
from typing import Any, Unpack

from harness._sync import run_sync
from harness.core._result import Result
from harness.core._terminations import FinishReason
from harness.errors import ConfigError
from harness.kernel._conversation import plan_turns
from harness.kernel._hitl import parse_decisions
from harness.kernel._loop import CANCELLED_RESULTS, release, resume_loop, run_loop
from harness.kernel._options import RunConfig, parse_options
from harness.kernel._run_options import RunOptions
from harness.kernel._setup import check_inputs, new_state
from harness.kernel._state import State, Subscriber
from harness.kernel._structured import StructuredMode
from harness.kernel._user_turns import UserTurn
from harness.modes._base import resolve_mode
from harness.providers._registry import resolve_provider
from harness.telemetry import tracing_subscriber
from harness.tools._base import Tool
from harness.tools._registry import resolve_tools

__all__ = [
    "adiscard",
    "aextract_structured",
    "aresume",
    "arun",
    "build_state",
    "discard",
    "extract_structured",
    "resume",
    "run",
    "warm_up",
]


async def arun(prompt: str | None = None, /, **options: Unpack[RunOptions]) -> Result:
    """Run the agent loop on ``prompt`` and return its :class:`~harness.Result`.

    Raises :class:`~harness.ConfigError` only for problems found before the loop starts; every
    ending after that (errors included) is a Result with a typed ``finish_reason``.
    """
    config = parse_options(options)
    subscribers: list[Subscriber] = [config.on_event] if config.on_event is not None else []
    state, owned = build_state(prompt, config, subscribers)
    tracer = tracing_subscriber(state)
    if tracer is not None:  # first, so result.trace_id is set before on_event sees Done
        state.subscribers = (tracer, *state.subscribers)
        state.meta["tracer"] = tracer
    return await run_loop(state, owns_provider=owned)


async def aresume(result: Result, /, *, decisions: Mapping[str, Any]) -> Result:
    """Continue an ``interrupted`` run (``interrupt_before``) with a decision per pending call:
    ``{call_id: "approve" | "deny" | {"edit": {...arguments}}}``. The same run goes on (session,
    messages, counters, budget); the new Result may be ``interrupted`` again. Raises ConfigError
    (and changes nothing) for a result that is not paused or for bad decisions."""
    state = _paused_state(result)
    parse_decisions(state.pending_calls or [], decisions)
    result.resume_state = None
    old = state.meta.pop("tracer", None)  # the paused part's trace is closed: start another
    subscribers = [s for s in state.subscribers if s is not old]
    tracer = tracing_subscriber(state) if old is not None else None
    if tracer is not None:
        subscribers.insert(0, tracer)
        state.meta["tracer"] = tracer
    state.subscribers = tuple(subscribers)
    return await resume_loop(state, decisions)


def resume(result: Result, /, *, decisions: Mapping[str, Any]) -> Result:
    """Synchronous :func:`aresume`."""
    return _synced(
        aresume(result, decisions=decisions),
        called="harness.resume()",
        instead="await harness.aresume(...)",
    )


async def adiscard(result: Result, /) -> None:
    """Give up a paused run: close its provider (when the run owns it) and remove its temporary
    workspace. Does nothing for a run that is not paused."""
    state = result.resume_state
    if state is None:
        return
    result.resume_state = None
    await release(state, bool(state.meta.get("owns_provider", False)))


def discard(result: Result, /) -> None:
    """Synchronous :func:`adiscard`."""
    run_sync(adiscard(result), called="harness.discard()", instead="await harness.adiscard(...)")


def _paused_state(result: Result) -> State:
    state = result.resume_state
    if result.finish_reason is not FinishReason.INTERRUPTED or state is None:
        raise ConfigError(
            f"resume: not a paused run (finish_reason {result.finish_reason.value!r}); only an "
            "interrupted Result resumes, and only once"
        )
    return state  # type: ignore[no-any-return]


def build_state(
    prompt: str | None, config: RunConfig, subscribers: Sequence[Subscriber] = ()
) -> tuple[State, bool]:
    """Resolve everything a run needs; raises ConfigError. Returns the state and whether the
    provider is owned by the run (and must be closed by it)."""
    mode = resolve_mode(config.mode)
    tools = resolve_tools(config.tools)
    turns = plan_turns(
        [(t.user, _turn_tools(t, i)) for i, t in enumerate(config.turns or ())],
        {t.name: t for t in tools},
        mode,
    )
    inputs = check_inputs(prompt, config, tools)
    provider, model, owned = resolve_provider(config.provider, config.model, config.provider_opts)
    state = new_state(
        config,
        inputs,
        mode=mode,
        provider=provider,
        model=model,
        subscribers=subscribers,
        turns=turns,
    )
    state.child_factory = _child_state
    return state, owned


def _turn_tools(turn: UserTurn, index: int) -> list[Tool]:
    """A follow-up turn's ``add_tools`` as tool objects (ConfigError naming the turn)."""
    try:
        return resolve_tools(list(turn.add_tools))
    except ConfigError as exc:
        raise ConfigError(f"turns[{index}].add_tools: {exc}") from None


def _child_state(parent: State, prompt: str, overrides: dict[str, Any]) -> tuple[State, bool]:
    """A ``spawn_agent`` sub-agent's state: the parent's options with ``overrides`` (chosen by
    :mod:`harness.kernel._subagents`), traced under the spawning tool span when tracing is on
    (the child's root span takes the ambient context, which is the sub-agent span)."""
    options = {name: getattr(parent.config, name) for name in RunConfig.model_fields}
    options.update(overrides)
    options["turns"] = None  # the conversation is the parent's; a sub-agent answers one prompt
    config = parse_options(options)
    state, owned = build_state(prompt, config)
    tracer = tracing_subscriber(state)
    if tracer is not None:
        state.subscribers = (tracer,)
    return state, owned


def run(prompt: str | None = None, /, **options: Unpack[RunOptions]) -> Result:
    """Synchronous :func:`arun` (not for use inside a running event loop)."""
    return _synced(
        arun(prompt, **options), called="harness.run()", instead="await harness.arun(...)"
    )


def _synced(coro: Coroutine[Any, Any, Result], *, called: str, instead: str) -> Result:
    """:func:`~harness._sync.run_sync` of a run, but a ``CancelledError`` that ended the run
    (its ``Done`` emitted, ``error_halted``) gives the run's Result instead of a traceback: no
    caller of a synchronous entry point can have asked for that cancel (Ctrl-C is
    ``KeyboardInterrupt`` here), so a plug-in did, by a way no guard of the kernel's knows
    (each one found was a fault of its own: adversary rounds 14 to 19, part A). ``arun``
    still raises it: its caller may have asked."""
    box: list[Result] = []
    token = CANCELLED_RESULTS.set(box)
    try:
        return run_sync(_kept(coro, box), called=called, instead=instead)
    except asyncio.CancelledError:
        if not box:
            raise
        return box[-1]
    finally:
        CANCELLED_RESULTS.reset(token)
        if inspect.getcoroutinestate(coro) == inspect.CORO_CREATED:  # refused unstarted (a
            coro.close()  # running loop): closed, or Python warns "never awaited"


async def _kept(coro: Coroutine[Any, Any, Result], box: list[Result]) -> Result:
    """``await coro``, its Result also left in ``box``: a cancel of the run's task that a
    plug-in left pending where nothing awaits after it (an httpx transport's cancel of the
    task inside the provider's call) cancels the task as it returns, and asyncio drops the
    value; ``harness.run`` raised ``CancelledError`` for a finished run (adversary round 21,
    part A)."""
    result = await coro
    box.append(result)
    return result


async def aextract_structured(
    prompt: str,
    /,
    *,
    schema: Any,
    max_retries: int = 2,
    instructions: str | None = None,
    **options: Unpack[RunOptions],
) -> Result:
    """Ask for JSON conforming to ``schema`` with a repair loop; the value is in
    ``Result.deliverable``. See :mod:`harness.kernel._structured`."""
    mode = StructuredMode(schema, max_retries=max_retries, instructions=instructions)
    options = {**options, "tools": None, "mode": mode}
    # Each attempt is an iteration: never let the default turn cap cut the repairs short.
    options.setdefault("max_iterations", max(25, max_retries + 1))
    return await arun(prompt, **options)


def extract_structured(
    prompt: str,
    /,
    *,
    schema: Any,
    max_retries: int = 2,
    instructions: str | None = None,
    **options: Unpack[RunOptions],
) -> Result:
    """Synchronous :func:`aextract_structured`."""
    return _synced(
        aextract_structured(
            prompt, schema=schema, max_retries=max_retries, instructions=instructions, **options
        ),
        called="harness.extract_structured()",
        instead="await harness.aextract_structured(...)",
    )


def warm_up() -> None:
    """Load now what the first run of a process would load on its way: the provider profiles
    (``pyproject.toml`` / ``harness.toml``), the mock provider, the plug-in registries' entry
    points and the default mode. ``import harness`` defers them so that it stays cheap; call
    this where start-up time is free (a server starting, a test session) and the first
    :func:`arun` then costs about what the later ones do (docs/performance.md). Safe to call
    from any thread and more than once; a run never needs it."""
    from harness.modes._base import MODES
    from harness.providers._kinds import PROVIDER_KINDS
    from harness.providers._mock import MockProvider
    from harness.providers._profiles import resolve_profile
    from harness.tools._registry import TOOLS

    for registry in (MODES, PROVIDER_KINDS, TOOLS):
        registry.names()
    MODES.get("react")
    resolve_profile("mock")
    del MockProvider
