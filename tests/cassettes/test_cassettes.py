"""Per-cell cassettes (harness.cassettes._transport): real HTTP on 127.0.0.1
(pytest-httpserver), real files in tmp_path, real harness runs through the OpenAI provider.

- record then replay, plain and streamed (same Result text, tool calls and Content deltas; the
  stream is replayed byte-for-byte, SSE and NDJSON), with the server stopped during replay;
- 20 cells at once, each cassette holding only its own cell's requests;
- a miss fails only its run, names the cassette and the re-record command, is not retried;
- a corrupt cassette fails only its cell; secrets never reach the file; record modes; a recorded
  429 -> 200 retry; compressed bodies; atomic saves; ignore_hosts; and a 600-interaction
  cassette matched with one body normalisation per stored request and per request sent.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import random
import re
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from pytest_httpserver import HTTPServer
from werkzeug import Request as WRequest
from werkzeug import Response as WResponse

import harness
from harness import ConfigError, FinishReason, Result
from harness.cassettes._lint import lint_cassettes
from harness.cassettes._store import PLACEHOLDER, normalise_body
from harness.cassettes._transport import (
    CassetteCorrupt,
    CassetteMiss,
    CassetteTransport,
    cassette_path,
    profile_secrets,
)
from harness.events import Content, Event

KEY = "sk-test-FAKE0123456789abcdefABCDEF0123"
PATH = "/v1/chat/completions"
HINT = "nox -s record -- --suites arithmetic --providers openai --modes react --tasks t{cell}"


# --- a fake OpenAI-compatible model on 127.0.0.1 -------------------------------------------------


def _completion(message: dict[str, Any], finish: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25},
    }


def _chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    choices = [{"index": 0, "delta": delta, "finish_reason": finish}] if delta or finish else []
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "gpt-4o-mini",
        "choices": choices,
        **extra,
    }


def _sse(message: dict[str, Any], finish: str) -> str:
    chunks = [_chunk({"role": "assistant", "content": ""})]
    if message.get("tool_calls"):
        call = message["tool_calls"][0]
        args = call["function"]["arguments"]
        start = {"index": 0, "id": call["id"], "type": "function"}
        start["function"] = {"name": "calculator", "arguments": ""}
        chunks.append(_chunk({"tool_calls": [start]}))
        for piece in (args[: len(args) // 2], args[len(args) // 2 :]):
            chunks.append(_chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}))
    else:
        words = message["content"].split(" ")
        pieces = [w + " " for w in words[:-1]] + [words[-1]]
        chunks += [_chunk({"content": piece}) for piece in pieces]
    chunks.append(_chunk({}, finish))
    usage = {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}
    chunks.append(_chunk({}, None, usage=usage))
    body = "".join(f"data: {json.dumps(c, separators=(',', ':'))}\n\n" for c in chunks)
    return body + "data: [DONE]\n\n"


class Model:
    """Answers a cell's prompt ("cell N: ...") with a calculator call, then with the result;
    streams (SSE) when asked. Keeps the bodies it sent and the requests it got."""

    def __init__(self, *, fail_first: int = 0, version: str = "") -> None:
        self.sent: list[bytes] = []
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.fail_first = fail_first
        self.version = version
        self._lock = threading.Lock()

    def __call__(self, request: WRequest) -> WResponse:
        body = json.loads(request.get_data())
        with self._lock:
            self.bodies.append(body)
            self.headers.append({k.lower(): v for k, v in request.headers.items()})
            if self.fail_first:
                self.fail_first -= 1
                error = {"error": {"message": "slow down", "type": "rate_limit_error"}}
                return WResponse(
                    json.dumps(error), status=429, mimetype="application/json",
                    headers={"retry-after": "0"},
                )  # fmt: skip
        prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
        match = re.search(r"cell (\d+)", prompt)
        cell = match.group(1) if match else "0"
        results = [m for m in body["messages"] if m["role"] == "tool"]
        if not results:
            args = json.dumps({"expression": f"{cell}*3+1"})
            call: dict[str, Any] = {"id": f"call_{cell}", "type": "function"}
            call["function"] = {"name": "calculator", "arguments": args}
            message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
            finish = "tool_calls"
        else:
            answer = f"Cell {cell}{self.version}: the answer is {results[-1]['content']}."
            message, finish = {"role": "assistant", "content": answer}, "stop"
        if body.get("stream"):
            payload, mimetype = _sse(message, finish).encode(), "text/event-stream"
        else:
            payload, mimetype = (
                json.dumps(_completion(message, finish)).encode(),
                "application/json",
            )
        with self._lock:
            self.sent.append(payload)
        return WResponse(payload, mimetype=mimetype, headers={"set-cookie": "session=abc123"})


@pytest.fixture(scope="module")
def _shared() -> Iterator[HTTPServer]:
    http = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    http.start()
    yield http
    http.stop()


@pytest.fixture
def server(_shared: HTTPServer) -> Iterator[HTTPServer]:
    """A live model server, cleared for each test."""
    _shared.clear()
    yield _shared
    _shared.clear()


@pytest.fixture
def own_server() -> Iterator[HTTPServer]:
    """A server of this test's own, which the test stops before replaying."""
    http = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    http.start()
    yield http
    if http.is_running():
        http.stop()


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)


def serve(server: HTTPServer, model: Model) -> Model:
    server.expect_request(PATH, method="POST").respond_with_handler(model)
    return model


def base_url(server: HTTPServer) -> str:
    return server.url_for("/v1")


async def run_cell(
    transport: CassetteTransport,
    url: str,
    cell: int,
    *,
    stream: bool = False,
    events: list[Event] | None = None,
    prompt: str | None = None,
) -> Result:
    sink: list[Event] = events if events is not None else []
    return await harness.arun(
        prompt or f"cell {cell}: what is {cell}*3+1?",
        provider="openai:gpt-4o-mini",
        provider_opts={
            "base_url": url,
            "transport": transport,
            "stream": stream,
            "max_retries": 3,
            "retry_initial_s": 0,
        },
        tools=["calculator"],
        max_iterations=4,
        on_event=sink.append,
    )


def transport(path: Path, mode: str = "none", cell: int = 0, **kw: Any) -> CassetteTransport:
    return CassetteTransport(
        path, record_mode=mode, rerecord_hint=HINT.format(cell=cell), secrets=[KEY], **kw
    )


def interactions(path: Path) -> list[dict[str, Any]]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: 10x faster on big files
    data: dict[str, Any] = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
    return list(data["interactions"])


def tool_calls(result: Result) -> list[tuple[str, str, dict[str, Any]]]:
    return [(c.id, c.name, c.arguments) for m in result.messages for c in m.tool_calls or []]


def deltas(events: list[Event]) -> list[str]:
    return [e.text for e in events if isinstance(e, Content)]


# --- record, then replay -------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
async def test_a_recorded_run_replays_offline_with_the_same_result(
    own_server: HTTPServer, tmp_path: Path, stream: bool
) -> None:
    model = serve(own_server, Model())
    file = cassette_path(tmp_path / "cassettes", "arithmetic", "openai", "react", "t7", 0)
    recording = transport(file, "once", 7)
    rec_events: list[Event] = []
    recorded = await run_cell(recording, base_url(own_server), 7, stream=stream, events=rec_events)
    assert recorded.finish_reason is FinishReason.STOP, recorded.halted_reason
    assert recorded.text == "Cell 7: the answer is 22."
    assert (recording.recorded, recording.played, recording.misses) == (2, 0, 0)
    assert len(own_server.log) == 2
    assert file.is_file()
    stored = interactions(file)
    assert len(stored) == 2
    # The stored bodies are exactly the bytes the server sent (one string, SSE included).
    assert [i["response"]["body"]["string"].encode() for i in stored] == model.sent

    own_server.clear()
    own_server.stop()  # replay must never reach the network
    replaying = transport(file, "none", 7)
    play_events: list[Event] = []
    replayed = await run_cell(replaying, base_url(own_server), 7, stream=stream, events=play_events)
    assert replayed.finish_reason is FinishReason.STOP, replayed.halted_reason
    assert replayed.text == recorded.text
    assert (
        tool_calls(replayed)
        == tool_calls(recorded)
        == [("call_7", "calculator", {"expression": "7*3+1"})]
    )
    assert deltas(play_events) == deltas(rec_events)
    if stream:
        assert deltas(rec_events)[:2] == ["Cell ", "7: "]  # real deltas, not one blob
    assert (replaying.played, replaying.recorded, replaying.misses) == (2, 0, 0)
    assert replaying.unplayed == []
    assert replayed.usage.input_tokens == recorded.usage.input_tokens == 40


@pytest.mark.parametrize(
    ("mimetype", "body"),
    [
        (
            "text/event-stream",
            b'data: {"a":1}\n\ndata: {"b":2}\r\n\r\n: comment\n\ndata: [DONE]\n\n',
        ),
        ("application/x-ndjson", b'{"a":1}\n{"b":"\\u00e9t\xc3\xa9"}\n\n{"done":true}\n'),
    ],
    ids=["sse", "ndjson"],
)
async def test_a_stream_replays_byte_for_byte(
    server: HTTPServer, tmp_path: Path, mimetype: str, body: bytes
) -> None:
    server.expect_request("/stream", method="POST").respond_with_data(body, mimetype=mimetype)
    file = tmp_path / "s.yaml"

    async def read(t: CassetteTransport) -> bytes:
        async with (
            httpx.AsyncClient(transport=t) as client,
            client.stream("POST", server.url_for("/stream"), json={"q": 1}) as response,
        ):
            return b"".join([c async for c in response.aiter_raw()])

    assert await read(transport(file, "all")) == body
    assert await read(transport(file)) == body
    assert len(server.log) == 1  # the replay did not reach the server
    async with (
        httpx.AsyncClient(transport=transport(file)) as client,
        client.stream("POST", server.url_for("/stream"), json={"q": 1}) as response,
    ):
        lines = [line async for line in response.aiter_lines()]
    assert lines == body.decode().splitlines()


# --- isolation -----------------------------------------------------------------------------------


async def test_twenty_concurrent_cells_each_record_and_replay_only_their_own_requests(
    own_server: HTTPServer, tmp_path: Path
) -> None:
    serve(own_server, Model())
    root = tmp_path / "cassettes"
    cells = range(20)
    files = [cassette_path(root, "arithmetic", "openai", "react", f"t{i}", 0) for i in cells]
    recorders = [transport(files[i], "all", i) for i in cells]
    results = await asyncio.gather(
        *(run_cell(recorders[i], base_url(own_server), i, stream=i % 2 == 1) for i in cells)
    )
    assert [r.text for r in results] == [f"Cell {i}: the answer is {3 * i + 1}." for i in cells]
    assert len(own_server.log) == 40
    for i in cells:
        stored = interactions(files[i])
        assert len(stored) == 2, (i, len(stored))
        for item in stored:
            body = json.loads(item["request"]["body"])
            prompts = {m["content"] for m in body["messages"] if m["role"] == "user"}
            assert prompts == {f"cell {i}: what is {i}*3+1?"}
        first, final = (item["response"]["body"]["string"] for item in stored)
        assert f'"call_{i}"' in first
        assert (f'"content":"{i}: "' if i % 2 else f"Cell {i}: ") in final

    own_server.clear()
    own_server.stop()
    players = [transport(files[i], "none", i) for i in cells]
    replays = await asyncio.gather(
        *(run_cell(players[i], base_url(own_server), i, stream=i % 2 == 1) for i in cells)
    )
    assert [r.text for r in replays] == [r.text for r in results]
    assert all((p.played, p.misses, p.recorded) == (2, 0, 0) for p in players)


# --- misses and corrupt cassettes ----------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
async def test_a_miss_fails_only_its_run_names_the_cassette_and_is_not_retried(
    server: HTTPServer, tmp_path: Path, stream: bool
) -> None:
    serve(server, Model())
    files = [tmp_path / f"c{i}.yaml" for i in range(2)]
    for i in range(2):
        result = await run_cell(transport(files[i], "once", i), base_url(server), i, stream=stream)
        assert result.finish_reason is FinishReason.STOP
    sent = len(server.log)

    good, bad = transport(files[0], cell=0), transport(files[1], cell=1)
    ok, missed = await asyncio.gather(
        run_cell(good, base_url(server), 0, stream=stream),
        run_cell(bad, base_url(server), 1, stream=stream, prompt="cell 1: what is 1*3+2?"),
    )
    assert ok.finish_reason is FinishReason.STOP
    assert ok.text == "Cell 0: the answer is 1."
    assert missed.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    reason = missed.halted_reason or ""
    assert "CassetteMiss" in reason
    assert str(files[1]) in reason
    assert HINT.format(cell=1) in reason
    assert (
        "differs at $.messages[0].content" in reason
    )  # where the sent request differs from the recording
    assert bad.misses == 1  # not retried:
    assert missed.calls[0].attempts == 1
    assert len(server.log) == sent  # nothing reached the network


async def test_a_missing_cassette_in_replay_says_so(tmp_path: Path) -> None:
    t = transport(tmp_path / "nope" / "c.yaml", cell=3)
    result = await run_cell(t, "http://127.0.0.1:9/v1", 3)
    assert result.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert f"{tmp_path / 'nope' / 'c.yaml'} does not exist" in (result.halted_reason or "")
    assert HINT.format(cell=3) in (result.halted_reason or "")
    assert not (tmp_path / "nope").exists()  # none never writes


_CORRUPT = {
    "yaml": "interactions: [\n  - {request: ",
    "shape": "just a string\n",
    "no-status": yaml.safe_dump(
        {
            "version": 1,
            "interactions": [
                {
                    "request": {"method": "POST", "uri": "http://x/", "body": "", "headers": {}},
                    "response": {"headers": {}, "body": {"string": ""}},
                }
            ],
        }
    ),
}


@pytest.mark.parametrize("kind", [*_CORRUPT, "not-utf8"])
async def test_a_corrupt_cassette_fails_only_its_own_cell(
    server: HTTPServer, tmp_path: Path, kind: str
) -> None:
    serve(server, Model())
    files = [tmp_path / f"c{i}.yaml" for i in range(3)]
    for i in range(3):
        await run_cell(transport(files[i], "once", i), base_url(server), i)
    if kind == "not-utf8":
        files[1].write_bytes(b"interactions: \xff\xfe\n")
    else:
        files[1].write_text(_CORRUPT[kind], encoding="utf-8")

    async def cell(i: int) -> Result:
        return await run_cell(transport(files[i], cell=i), base_url(server), i)

    outcomes = await asyncio.gather(*(cell(i) for i in range(3)), return_exceptions=True)
    assert isinstance(outcomes[1], CassetteCorrupt)
    assert str(files[1]) in str(outcomes[1])
    for i in (0, 2):
        result = outcomes[i]
        assert isinstance(result, Result)
        assert result.finish_reason is FinishReason.STOP


# --- secrets, compression ------------------------------------------------------------------------


async def test_recorded_cassettes_hold_no_secret(server: HTTPServer, tmp_path: Path) -> None:
    model = serve(server, Model())
    file = tmp_path / "c.yaml"
    await run_cell(transport(file, "all"), base_url(server), 5, stream=True)
    assert model.headers[0]["authorization"] == f"Bearer {KEY}"  # the key was really sent
    raw = file.read_bytes()
    assert KEY.encode() not in raw
    assert b"sk-test" not in raw
    for item in interactions(file):
        assert item["request"]["headers"]["authorization"] == [PLACEHOLDER]
        assert "set-cookie" not in {h.lower() for h in item["response"]["headers"]}
    assert lint_cassettes(tmp_path) == []


async def test_api_key_queries_cookies_and_echoed_keys_are_scrubbed(
    server: HTTPServer, tmp_path: Path
) -> None:
    def echo(request: WRequest) -> WResponse:
        key = request.headers["x-api-key"]
        return WResponse(json.dumps({"seen": key}), headers={"x-echo": key, "set-cookie": "a=b"})

    server.expect_request("/v1/echo").respond_with_handler(echo)
    file = tmp_path / "c.yaml"
    headers = {"x-api-key": KEY, "cookie": "sid=1", "x-other": KEY}
    async with httpx.AsyncClient(transport=transport(file, "all"), headers=headers) as client:
        response = await client.post(server.url_for("/v1/echo?api-key=abc&q=1"), json={"k": KEY})
    assert response.json() == {"seen": KEY}  # the caller got the real answer
    text = file.read_text(encoding="utf-8")
    for secret in (KEY, "abc", "sid=1"):
        assert secret not in text
    (item,) = interactions(file)
    request, stored = item["request"], item["response"]
    assert request["uri"].endswith("/v1/echo?api-key=REDACTED&q=1")
    assert request["headers"]["x-api-key"] == request["headers"]["x-other"] == [PLACEHOLDER]
    assert "cookie" not in request["headers"]
    assert json.loads(request["body"]) == {"k": PLACEHOLDER}
    assert stored["headers"]["x-echo"] == [PLACEHOLDER]
    assert json.loads(stored["body"]["string"]) == {"seen": PLACEHOLDER}
    assert lint_cassettes(tmp_path) == []


def test_profile_secrets_reads_the_profiles_key_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert KEY in profile_secrets("openai:gpt-4o-mini")
    # Every *_KEY / *_TOKEN / *_SECRET value is a secret too, whatever the profile.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert KEY not in profile_secrets("ollama")
    monkeypatch.setenv("UNRELATED_TOKEN", "tok-123456789")
    assert "tok-123456789" in profile_secrets("ollama")


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br"])
async def test_compressed_bodies_are_stored_decoded(
    server: HTTPServer, tmp_path: Path, encoding: str
) -> None:
    payload = json.dumps({"text": "plain words " * 50, "key": KEY}).encode()
    if encoding == "gzip":
        data = gzip.compress(payload)
    elif encoding == "deflate":
        data = zlib.compress(payload)
    else:
        brotli = pytest.importorskip("brotli")
        data = brotli.compress(payload)
    server.expect_request("/z").respond_with_data(
        data, headers={"content-encoding": encoding}, mimetype="application/json"
    )
    file = tmp_path / "c.yaml"
    async with httpx.AsyncClient(transport=transport(file, "all")) as client:
        live = (await client.post(server.url_for("/z"), json={})).json()
    (item,) = interactions(file)
    headers = {k.lower(): v for k, v in item["response"]["headers"].items()}
    assert "content-encoding" not in headers
    assert json.loads(item["response"]["body"]["string"])["text"] == live["text"]
    assert KEY not in file.read_text(encoding="utf-8")  # scrubbed after decoding
    async with httpx.AsyncClient(transport=transport(file)) as client:
        replayed = (await client.post(server.url_for("/z"), json={})).json()
    assert replayed == {**live, "key": PLACEHOLDER}
    assert len(server.log) == 1


# --- record modes --------------------------------------------------------------------------------


async def _post(t: CassetteTransport, url: str, *bodies: dict[str, Any]) -> list[Any]:
    async with httpx.AsyncClient(transport=t) as client:
        out = []
        for body in bodies:
            try:
                out.append((await client.post(url, json=body)).json())
            except CassetteMiss as exc:
                out.append(exc)
        return out


def _counter(server: HTTPServer) -> list[int]:
    calls = [0]

    def answer(request: WRequest) -> WResponse:
        calls[0] += 1
        return WResponse(json.dumps({"q": request.get_json()["q"], "n": calls[0]}))

    server.expect_request("/q").respond_with_handler(answer)
    return calls


async def test_record_mode_once(server: HTTPServer, tmp_path: Path) -> None:
    calls, url, file = _counter(server), server.url_for("/q"), tmp_path / "c.yaml"
    first = await _post(transport(file, "once"), url, {"q": 1}, {"q": 1})
    assert first == [{"q": 1, "n": 1}, {"q": 1, "n": 2}]  # a new cassette records everything
    again = await _post(transport(file, "once"), url, {"q": 1}, {"q": 1}, {"q": 2})
    assert again[:2] == first  # then replays strictly
    assert isinstance(again[2], CassetteMiss)
    assert calls[0] == 2
    assert len(interactions(file)) == 2


async def test_record_mode_new_episodes(server: HTTPServer, tmp_path: Path) -> None:
    calls, url, file = _counter(server), server.url_for("/q"), tmp_path / "c.yaml"
    await _post(transport(file, "once"), url, {"q": 1})
    t = transport(file, "new_episodes")
    assert await _post(t, url, {"q": 1}, {"q": 2}) == [{"q": 1, "n": 1}, {"q": 2, "n": 2}]
    assert (t.played, t.recorded, calls[0]) == (1, 1, 2)
    assert [json.loads(i["request"]["body"])["q"] for i in interactions(file)] == [1, 2]


async def test_record_mode_all_rerecords_and_keeps_or_drops_unused(
    server: HTTPServer, tmp_path: Path
) -> None:
    calls, url, file = _counter(server), server.url_for("/q"), tmp_path / "c.yaml"
    await _post(transport(file, "once"), url, {"q": 1}, {"q": 2})
    t = transport(file, "all")
    assert await _post(t, url, {"q": 1}) == [{"q": 1, "n": 3}]  # never replays
    assert (t.played, t.recorded) == (0, 1)
    stored = [json.loads(i["response"]["body"]["string"]) for i in interactions(file)]
    assert stored == [{"q": 2, "n": 2}, {"q": 1, "n": 3}]  # replaced q=1, kept the unused q=2
    await _post(transport(file, "all", drop_unused_requests=True), url, {"q": 1})
    stored = [json.loads(i["response"]["body"]["string"]) for i in interactions(file)]
    assert stored == [{"q": 1, "n": 4}]
    assert calls[0] == 4


async def test_record_mode_none_never_writes_and_bad_modes_are_refused(
    server: HTTPServer, tmp_path: Path
) -> None:
    _counter(server)
    url, file = server.url_for("/q"), tmp_path / "c.yaml"
    await _post(transport(file, "once"), url, {"q": 1})
    before = file.stat().st_mtime_ns, file.read_bytes()
    t = transport(file)
    (miss,) = await _post(t, url, {"q": 9})
    assert isinstance(miss, CassetteMiss)
    t.save()
    assert (file.stat().st_mtime_ns, file.read_bytes()) == before
    with pytest.raises(ConfigError, match="record_mode"):
        CassetteTransport(file, record_mode="any")


async def test_a_recorded_429_then_200_retry_replays_in_order(
    own_server: HTTPServer, tmp_path: Path
) -> None:
    serve(own_server, Model(fail_first=1))
    file = tmp_path / "c.yaml"
    recorded = await run_cell(transport(file, "once"), base_url(own_server), 4)
    assert recorded.finish_reason is FinishReason.STOP
    assert [c.attempts for c in recorded.calls] == [2, 1]
    assert [i["response"]["status"]["code"] for i in interactions(file)] == [429, 200, 200]
    own_server.clear()
    own_server.stop()
    t = transport(file)
    replayed = await run_cell(t, base_url(own_server), 4)
    assert replayed.text == recorded.text
    assert [c.attempts for c in replayed.calls] == [2, 1]
    assert (t.played, t.misses, t.unplayed) == (3, 0, [])


# --- matching ------------------------------------------------------------------------------------


async def test_matching_ignores_volatile_fields_key_order_host_and_port(
    server: HTTPServer, tmp_path: Path
) -> None:
    _counter(server)
    file = tmp_path / "c.yaml"
    recorded = {
        "q": 1,
        "stream": True,
        "user": "run-1",
        "stream_options": {"include_usage": True},
        "metadata": {"user_id": "u-1", "tag": "t"},
        "messages": [{"role": "user", "content": "hi"}],
    }
    await _post(transport(file, "once"), server.url_for("/q"), recorded)
    same = {
        "messages": [{"content": "hi", "role": "user"}],
        "metadata": {"tag": "t", "user_id": "u-2"},
        "user": "run-2",
        "stream": True,
        "q": 1,
    }
    other_host = "http://localhost:1/q"  # a different host and port: still the same request
    (answer,) = await _post(transport(file), other_host, same)
    assert answer == {"q": 1, "n": 1}
    for changed in ({"stream": False}, {"metadata": {"tag": "u"}}, {"q": 2}):
        (miss,) = await _post(transport(file), other_host, {**same, **changed})
        assert isinstance(miss, CassetteMiss), changed
    (miss,) = await _post(transport(file), "http://localhost:1/q?x=1", same)
    assert isinstance(miss, CassetteMiss)
    assert "method, path and query" in str(miss)


def test_normalise_body_is_canonical_json_or_the_raw_bytes() -> None:
    assert normalise_body(b'{"b": 1, "a": {"y": 2, "x": 1}, "user": "u"}') == (
        b'{"a":{"x":1,"y":2},"b":1}'
    )
    assert normalise_body(b"not json {") == b"not json {"
    assert normalise_body(None) == b""
    assert normalise_body(b'{"user": 1}', volatile=()) == b'{"user":1}'


def test_a_test_runners_duration_is_masked_for_matching_and_nothing_else() -> None:
    """A code task's tool result ends with pytest's time ("1 error in 0.85s"), different on
    every run: the next request must still match its recording."""

    def body(tool_result: str) -> bytes:
        message = {"role": "tool", "content": tool_result}
        return json.dumps({"messages": [message], "max_tokens": 512}).encode()

    recorded = body("exit code 2\n1 error in 0.85s\nRan 3 tests in 0.002s")
    assert normalise_body(recorded) == normalise_body(
        body("exit code 2\n1 error in 0.12s\nRan 3 tests in 0.010s")
    )
    assert normalise_body(recorded) != normalise_body(  # the exit code is not volatile
        body("exit code 0\n1 error in 0.85s\nRan 3 tests in 0.002s")
    )
    assert normalise_body(body("wait 5s")) != normalise_body(body("wait 6s"))
    assert normalise_body(body("done in 3 s")) != normalise_body(body("done in 4 s"))


@pytest.mark.slow  # 12 MB of cassette written, loaded and replayed
async def test_600_interactions_load_and_match_with_one_normalisation_each(
    tmp_path: Path,
) -> None:
    filler = "lorem ipsum dolor sit amet " * 740  # ~20 KB per request body

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"i": json.loads(request.content)["i"]})

    bodies = [
        {"i": i, "messages": [{"role": "user", "content": f"{i} {filler}"}], "user": "x"}
        for i in range(600)
    ]
    assert len(json.dumps(bodies[0])) > 20_000
    file = tmp_path / "big.yaml"
    recorder = transport(file, "all", real_transport=httpx.MockTransport(answer))
    await _post(recorder, "http://127.0.0.1:9/v1/chat/completions", *bodies)
    assert recorder.normalisations == 600
    assert len(interactions(file)) == 600

    player = transport(file)
    assert player.normalisations == 600  # once per stored request, at load
    random.Random(0).shuffle(bodies)
    answers = await _post(player, "http://127.0.0.1:9/v1/chat/completions", *bodies)
    assert answers == [{"i": b["i"]} for b in bodies]
    assert player.normalisations == 1200  # ...and once per request sent: no rescans
    assert (player.played, player.misses, player.unplayed) == (600, 0, [])


# --- storage -------------------------------------------------------------------------------------


async def test_saves_are_atomic_and_happen_on_aclose(
    server: HTTPServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _counter(server)
    url, file = server.url_for("/q"), tmp_path / "c.yaml"
    t = transport(file, "once")
    async with httpx.AsyncClient(transport=t, timeout=5) as client:
        await client.post(url, json={"q": 1})
        assert not file.exists()  # nothing written before the client closes
    assert len(interactions(file)) == 1
    before = file.read_bytes()

    def crash(src: Any, dst: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", crash)
    t = transport(file, "new_episodes")
    with pytest.raises(OSError, match="disk full"):  # the provider closing its client
        async with httpx.AsyncClient(transport=t) as client:
            await client.post(url, json={"q": 2})
    assert file.read_bytes() == before  # the old cassette is intact
    assert sorted(p.name for p in file.parent.glob("*")) == ["c.yaml"]  # no temporary left
    monkeypatch.undo()
    t.save()
    assert len(interactions(file)) == 2


async def test_hooks_are_idempotent_when_a_cassette_is_loaded_and_saved_again(
    server: HTTPServer, tmp_path: Path
) -> None:
    serve(server, Model())
    file = tmp_path / "c.yaml"
    await run_cell(transport(file, "once"), base_url(server), 2, stream=True)
    first = interactions(file)
    _counter(server)
    await _post(transport(file, "new_episodes"), server.url_for("/q"), {"q": 1})
    again = interactions(file)
    assert again[:2] == first
    assert len(again) == 3


async def test_ignored_hosts_pass_through_only_while_recording(
    server: HTTPServer, tmp_path: Path
) -> None:
    _counter(server)
    other = HTTPServer(host="127.0.0.1", port=0)
    other.expect_request("/v1/traces").respond_with_data("ok")
    other.start()
    try:
        file = tmp_path / "c.yaml"
        ignore = [f"127.0.0.1:{other.port}"]
        t = transport(file, "all", ignore_hosts=ignore)
        async with httpx.AsyncClient(transport=t) as client:
            assert (await client.post(other.url_for("/v1/traces"), content=b"x")).text == "ok"
            await client.post(server.url_for("/q"), json={"q": 1})
        assert (t.passed_through, t.recorded) == (1, 1)
        assert [i["request"]["uri"] for i in interactions(file)] == [server.url_for("/q")]
        # A replay never reaches the network, not even an ignored host: the model traffic
        # replays and the unrecorded request is a miss.
        t = transport(file, ignore_hosts=ignore)
        async with httpx.AsyncClient(transport=t) as client:
            assert (await client.post(server.url_for("/q"), json={"q": 1})).json()["n"] == 1
            with pytest.raises(CassetteMiss):
                await client.post(other.url_for("/v1/traces"), content=b"x")
        assert (t.passed_through, t.played) == (0, 1)
        assert len(other.log) == 1
    finally:
        other.stop()


async def test_replay_never_reaches_a_live_server_on_the_recorded_port(tmp_path: Path) -> None:
    """A live server listens where the cassette was recorded and the collector shares its host:
    a request missing from the cassette is a miss, and the server sees nothing."""
    from harness.bench._session import _collector_hosts

    live = HTTPServer(host="127.0.0.1", port=0)
    live.expect_request("/v1/chat/completions").respond_with_json({"live": True})
    live.start()
    try:
        file = tmp_path / "c.yaml"
        file.write_text("interactions: []\nversion: 1\n")
        ignore = _collector_hosts("http://127.0.0.1:4318")  # the docs' form: same host
        assert ignore == ("127.0.0.1:4318",)
        t = transport(file, "none", ignore_hosts=ignore)
        async with httpx.AsyncClient(transport=t) as client:
            with pytest.raises(CassetteMiss):
                await client.post(live.url_for("/v1/chat/completions"), json={"q": 1})
        assert live.log == []
    finally:
        live.stop()


def test_cassette_paths_follow_the_layout_and_keep_provider_names() -> None:
    path = cassette_path("cassettes", "arithmetic", "llamacpp-gemma", "react", "mul-add", 2)
    assert path == Path("cassettes/arithmetic/llamacpp-gemma/react/mul-add.e2.yaml")
    odd = cassette_path("c", "s", "openai:org/gpt-4o", "react", "a\\b", 0)
    assert odd == Path("c/s/openai:org%2Fgpt-4o/react/a%5Cb.e0.yaml")
    for bad in ("", ".", ".."):
        with pytest.raises(ConfigError, match="provider"):
            cassette_path("c", "s", bad, "react", "t", 0)
    with pytest.raises(ConfigError, match="epoch"):
        cassette_path("c", "s", "p", "react", "t", -1)


def test_a_cassette_yaml_bomb_fails_its_load_with_a_clear_error(tmp_path: Path) -> None:
    """A cassette whose aliases would expand past the bound is refused before it is built."""
    from harness.cassettes._yaml import deserialize
    from harness.errors import YAMLSyntaxError

    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for prev, name in zip("abcd", "bcde", strict=True):
        lines.append(f"{name}: &{name} [{','.join([f'*{prev}'] * 9)}]")
    with pytest.raises(YAMLSyntaxError, match=r"cassette:5: aliases expand to more than 10,000"):
        deserialize("\n".join([*lines, "interactions: []", ""]))


async def test_a_cell_cancelled_mid_conversation_writes_no_cassette(
    own_server: HTTPServer, tmp_path: Path
) -> None:
    """A stopped recording (Ctrl-C) used to save the conversation so far: the cassette of a
    cell cut short, whose replay then missed its later requests ("played already") and which a
    resumed recording skipped as done. Seen on 2026-11-27 with a multi-turn BFCL cell."""
    model = Model()
    second = threading.Event()
    release = threading.Event()

    def slow_second(request: WRequest) -> WResponse:
        body = json.loads(request.get_data())
        if any(m["role"] == "tool" for m in body["messages"]):
            second.set()
            release.wait(30)  # the answer comes only after the cancel
        return model(request)

    own_server.expect_request(PATH, method="POST").respond_with_handler(slow_second)
    path = tmp_path / "cut.yaml"
    cell = asyncio.create_task(run_cell(transport(path, "all"), base_url(own_server), 4))
    try:
        assert await asyncio.to_thread(second.wait, 30), "the second request never came"
        cell.cancel()
        with pytest.raises(asyncio.CancelledError):
            await cell
    finally:
        release.set()
    assert not path.exists()

    # The same cell left to finish is saved whole, and replays.
    whole = tmp_path / "whole.yaml"
    release.set()
    done = await run_cell(transport(whole, "all"), base_url(own_server), 4)
    assert done.text == "Cell 4: the answer is 13."
    assert len(interactions(whole)) == 2
