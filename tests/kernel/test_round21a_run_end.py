"""A plug-in's code at a run's end: its provider's ``aclose``, an httpx transport given in
``provider_opts``, a plug-in provider's ``name`` read for the Result (issue 34, adversary
round 21, part A).

The run closes the provider it owns (a profile's: a built-in kind with a ``transport`` of
the user's, or a plug-in kind) in ``release``, which caught ``Exception`` only: an ``aclose``
raising ``GeneratorExit`` or ``CancelledError`` (or cancelling the run's task) lost the
finished run's Result: ``harness.run`` raised it, and a bench cell with a plug-in provider
kind was that error (2 of 2 cells errored, exit 3) where a ``ValueError`` there is a warning.
A transport's code ran in the run's task (the built-in provider is awaited directly): one
that cancelled the task left the cancel pending to the run's end, and asyncio dropped the
Result as the task returned (``harness.run`` raised ``CancelledError``); the same for a
plug-in provider whose ``name`` (read for the Result, after the last await) cancelled it:
round 20's ``_synced`` covered a cancel that ended the run, not one that came after it."""

from __future__ import annotations

import asyncio
import json
import textwrap
from pathlib import Path
from typing import Any

import httpx
import pytest

import harness
from harness.providers._base import Capabilities, Response
from tests.suite_files import invoke_in

_REPLY = {
    "id": "x",
    "object": "chat.completion",
    "model": "m",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "hello"},
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}


def _act(what: str) -> None:
    if "cancel" in what:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()
    if "genexit" in what:
        raise GeneratorExit("boom")
    if "cerr" in what:
        raise asyncio.CancelledError("boom")


class _Transport(httpx.AsyncBaseTransport):
    def __init__(self, on_request: str = "", on_close: str = "") -> None:
        self.on_request, self.on_close = on_request, on_close

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        _act(self.on_request)
        return httpx.Response(
            200, content=json.dumps(_REPLY).encode(), headers={"content-type": "application/json"}
        )

    async def aclose(self) -> None:
        _act(self.on_close)


def _run(transport: _Transport, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, list[Any]]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-round21a")
    events: list[Any] = []
    result = harness.run(
        "hi",
        provider="openai:gpt-x",
        provider_opts={
            "transport": transport,
            "base_url": "http://127.0.0.1:18001/v1",
            "stream": False,
        },
        on_event=events.append,
    )
    return result, events


@pytest.mark.parametrize("what", ["genexit", "cerr", "cancel", "cancel-genexit"])
def test_a_transport_whose_close_raises_or_cancels_keeps_the_result(
    what: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    result, events = _run(_Transport(on_close=what), monkeypatch)  # raised on 84cec7a
    assert (result.finish_reason, result.text) == ("stop", "hello"), result.halted_reason
    warnings = [e.message for e in events if isinstance(e, harness.events.RunWarning)]
    assert any(w.startswith("provider close failed: ") for w in warnings), warnings
    assert type(events[-1]).__name__ == "Done"


@pytest.mark.parametrize("what", ["cancel", "cancel-genexit"])
def test_a_transport_cancelling_the_run_in_its_request_is_the_providers_failure(
    what: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    result, events = _run(_Transport(on_request=what), monkeypatch)  # raised on 84cec7a
    # as a plug-in provider's complete cancelling its own task
    assert result.finish_reason == "error_during_execution"
    assert result.halted_reason == "CancelledError"
    assert type(events[-1]).__name__ == "Done"


class _NamedLate:
    """A plug-in provider whose ``name``, read once it has answered, cancels the run's task."""

    model = "m"
    capabilities = Capabilities()
    answered = False

    @property
    def name(self) -> str:
        if self.answered:
            _act("cancel")
        return "late"

    async def complete(self, request: Any, on_delta: Any = None) -> Response:
        self.answered = True
        return Response(text="hi")

    async def aclose(self) -> None:
        pass


def test_a_cancel_left_pending_after_the_runs_last_await_keeps_its_result() -> None:
    events: list[str] = []
    result = harness.run(  # raised CancelledError on 84cec7a, its Done emitted
        "hi", provider=_NamedLate(), on_event=lambda e: events.append(type(e).__name__)
    )
    assert (result.finish_reason, result.text) == ("stop", "hi")
    assert events[-1] == "Done"


_KIND = """
import asyncio
from harness.providers._base import Capabilities, Response


class Closing:
    capabilities = Capabilities()

    def __init__(self, profile, model, **opts):
        self.name, self.model = profile.name, model

    async def complete(self, request, on_delta=None):
        return Response(text="4")

    async def aclose(self):
        raise GeneratorExit("close boom")
"""


def test_a_plug_in_kind_whose_close_raises_generator_exit_keeps_its_cells(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = textwrap.dedent(
        """
        suite: s
        tasks:
          - id: a
            prompt: "2+2?"
            expect: {kind: contains, value: "4"}
        """
    )
    files = {
        "closing_kind.py": _KIND,
        "harness.toml": '[providers.pp]\nkind = "closing_kind:Closing"\nmodel = "m"\n',
        "s.yaml": suite,
    }
    db = tmp_path / "h.duckdb"
    args = ["run", "s.yaml", "--providers", "pp", "--modes", "react", "--db", str(db)]
    out = invoke_in(tmp_path, monkeypatch, files, args)
    # on 84cec7a: exit 3, "s/a/react/pp/e0: GeneratorExit: close boom"
    assert out.exit_code == 0, out.output
    assert "1/1 cells, 1 passed" in out.output


def test_discarding_a_paused_run_whose_transport_close_raises_is_quiet(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-round21a")
    call = {"id": "c1", "type": "function",
            "function": {"name": "calculator", "arguments": '{"expression": "1+1"}'}}  # fmt: skip
    reply = {**_REPLY, "choices": [{"index": 0, "finish_reason": "tool_calls",
             "message": {"role": "assistant", "content": None, "tool_calls": [call]}}]}  # fmt: skip

    class Calling(_Transport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            return httpx.Response(200, content=json.dumps(reply).encode(),
                                  headers={"content-type": "application/json"})  # fmt: skip

    paused = harness.run(
        "hi",
        provider="openai:gpt-x",
        tools=["calculator"],
        interrupt_before=["calculator"],
        provider_opts={
            "transport": Calling(on_close="genexit"),
            "stream": False,
            "base_url": "http://127.0.0.1:18001/v1",
        },
    )
    assert paused.finish_reason == "interrupted"
    harness.discard(paused)  # raised GeneratorExit on 84cec7a


def test_harness_run_refused_in_a_running_loop_leaves_no_unawaited_coroutine() -> None:
    """A guard of ``_kept``: the run's coroutine, refused unstarted, is closed."""
    import gc
    import warnings

    async def main() -> None:
        with pytest.raises(harness.HarnessError, match="inside a running event loop"):
            harness.run("hi", provider="mock", provider_opts={"turns": [{"text": "x"}]})

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        asyncio.run(main())
        gc.collect()
    assert [str(w.message) for w in seen if "never awaited" in str(w.message)] == []
