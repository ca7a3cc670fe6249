"""A reply spelling a lone surrogate (JSON's ``\\ud800``, which Python's decoder keeps), echoed
back in the run's next request (issue 34, adversary round 21, part A).

A server's reply may hold ``"\\ud800"`` (a model's broken pair, a hostile server): its text,
its plan or its tool call's arguments then travel back in every later request, which httpx
writes as UTF-8: every later call of the run failed, ``provider crashed: UnicodeEncodeError:
'utf-8' codec can't encode character '\\ud800' ...`` (a streamed call: ``invalid_response:
unexpected stream shape (UnicodeEncodeError ...)``), and the cassette's matching key could not
be made either. Reproduced with the real CLI recording ``plan_and_solve`` against a loopback
server: 1 of 3 cells errored. Such a request is now written with JSON's escapes (as the server
spelt it; every other request as before), and the key made of it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import httpx
import pytest
from fault_server import Fault, FaultServer, chunked

import harness
from harness.cassettes._transport import CassetteTransport

_FIRST = {
    "content": '{"role":"assistant","content":"thinking \\ud800 more","tool_calls":[{"id":"c1",'
    '"type":"function","function":{"name":"calculator","arguments":"{\\"expression\\": '
    '\\"1+1\\"}"}}]}',
    "arguments": '{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function",'
    '"function":{"name":"calculator","arguments":"{\\"expression\\": \\"1+1\\\\ud800\\"}"}}]}',
}


class _Replies(httpx.AsyncBaseTransport):
    def __init__(self, first: str) -> None:
        self.first, self.bodies = first, []  # type: ignore[var-annotated]

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.bodies.append(await request.aread())
        message = self.first if len(self.bodies) == 1 else '{"role":"assistant","content":"done"}'
        raw = (
            '{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,'
            f'"message":{message},"finish_reason":"stop"}}]}}'
        )
        return httpx.Response(
            200, content=raw.encode(), headers={"content-type": "application/json"}
        )


@pytest.mark.parametrize("where", sorted(_FIRST))
def test_a_lone_surrogate_in_a_reply_goes_back_as_json_spells_it(
    where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-round21a-surrogate")
    replies = _Replies(_FIRST[where])
    result = harness.run(
        "hi",
        provider="openai:gpt-x",
        tools=["calculator"],
        provider_opts={"transport": replies, "stream": False, "base_url": "http://127.0.0.1:1/v1"},
    )
    # on 84cec7a: error_during_execution, "provider crashed: UnicodeEncodeError ..."
    assert (result.finish_reason, result.text) == ("stop", "done"), result.halted_reason
    assert b"\\ud800" in replies.bodies[1]  # the second request, ASCII JSON
    json.loads(replies.bodies[1])


@pytest.mark.timeout(120)
def test_a_streamed_plan_with_a_lone_surrogate_records_and_replays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-round21a-surrogate")
    head = b'{"id":"x","object":"chat.completion.chunk","model":"m","choices":[{"index":0,'
    first = head + b'"delta":{"role":"assistant","content":"4 \\ud800"},"finish_reason":null}]}'
    end = head + b'"delta":{},"finish_reason":"stop"}]}'
    reply = chunked("text/event-stream", b"data: " + first + b"\n\n",
                    b"data: " + end + b"\n\ndata: [DONE]\n\n")  # fmt: skip
    cassette = tmp_path / "c.yaml"
    results = []
    with FaultServer([Fault.raw(reply)], lifetime_s=60) as server:
        for mode in ("all", "none"):
            transport = CassetteTransport(cassette, record_mode=mode)
            result = harness.run(
                "hi",
                provider="openai",
                model="m",
                mode="plan_and_solve",
                on_event=lambda e: None,  # a listener: the calls stream
                provider_opts={
                    "base_url": server.url,
                    "max_retries": 0,
                    "stream": True,
                    "transport": transport,
                },
            )
            results.append((result.finish_reason, result.halted_reason, transport.drift))
    # on 84cec7a: "invalid_response: openai: unexpected stream shape (UnicodeEncodeError ...)"
    assert results == [("stop", None, 0), ("stop", None, 0)]
    assert os.path.getsize(cassette) > 0
