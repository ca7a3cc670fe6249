"""A provider that echoes the API key leaves it in no sink (issue 27, adversary round 3, item 5).

A loopback OpenAI-compatible server answers one task with a 401 whose message holds the key
("Incorrect API key provided: sk-..."), and another with a streamed reply whose ``model`` field is
the key and whose text carries the key split over two SSE chunks. ``harness run`` records both
with ``--otlp-endpoint`` (a loopback OTLP/HTTP collector) and ``--capture-content``; then the key
must be in none of: the DuckDB file and its shards (``results.calls`` included), the terminal, the
cassettes (neither half of the split key either; the replay still parses), what the collector
received, and the trace file and row shards of a run killed with SIGKILL mid-way.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import duckdb
import pytest
import yaml

#: Spawns processes, sandboxes, browsers, clusters or servers (the fast loop skips it).
pytestmark = pytest.mark.slow

KEY = "sk-leak-7Hq2vN9xRk4LmP0sT8wZ"
HALF = len(KEY) // 2
ENV_NAME = "LEAKY_API_KEY"

SUITE = """\
suite: leak
tasks:
  - id: denied
    prompt: "error please"
    expect: {kind: contains, value: x}
  - id: streamed
    prompt: "tell me"
    expect: {kind: contains, value: "REDACTED ok"}
"""

SLOW_SUITE = """\
suite: leak
tasks:
  - id: denied
    prompt: "error please"
    expect: {kind: contains, value: x}
  - id: slow
    prompt: "slow please"
    expect: {kind: contains, value: ok}
"""


# --- a provider that echoes the key, and an OTLP collector ---------------------------------


@dataclass
class Fake:
    """What the loopback servers saw: provider requests' prompts, OTLP request bodies."""

    prompts: list[str] = field(default_factory=list)
    otlp: list[bytes] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    event = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": KEY,  # the key in the response's model field
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(event).encode() + b"\n\n"


def _stream() -> bytes:
    """The reply "the key is <KEY> ok", the key split over two chunks."""
    usage = {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8}
    last = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": KEY, "choices": [],
            "usage": usage}  # fmt: skip
    return (
        _chunk({"role": "assistant", "content": f"the key is {KEY[:HALF]}"})
        + _chunk({"content": f"{KEY[HALF:]} ok"})
        + _chunk({}, "stop")
        + b"data: " + json.dumps(last).encode() + b"\n\n"
        + b"data: [DONE]\n\n"
    )  # fmt: skip


def _provider(fake: Fake) -> type[BaseHTTPRequestHandler]:
    class Provider(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
            prompt = str(body["messages"][-1]["content"])
            fake.prompts.append(prompt)
            if "error" in prompt:
                error = {"message": f"Incorrect API key provided: {KEY}",
                         "type": "invalid_request_error", "code": "invalid_api_key"}  # fmt: skip
                self._send(401, "application/json", json.dumps({"error": error}).encode())
            elif body.get("stream"):
                if "slow" in prompt:
                    fake.release.wait(60)
                self._send(200, "text/event-stream", _stream())
            else:
                reply = {"id": "r1", "object": "chat.completion", "model": KEY,
                         "choices": [{"index": 0, "finish_reason": "stop",
                                      "message": {"role": "assistant", "content": "ok"}}],
                         "usage": {"prompt_tokens": 3, "completion_tokens": 1}}  # fmt: skip
                self._send(200, "application/json", json.dumps(reply).encode())

        def _send(self, status: int, ctype: str, data: bytes) -> None:
            self.send_response(status)
            self.send_header("content-type", ctype)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Provider


def _collector(fake: Fake) -> type[BaseHTTPRequestHandler]:
    class Collector(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            data = self.rfile.read(int(self.headers.get("content-length") or 0))
            if self.headers.get("content-encoding") == "gzip":
                data = gzip.decompress(data)
            fake.otlp.append(data)
            self.send_response(200)
            self.send_header("content-type", "application/x-protobuf")
            self.send_header("content-length", "0")
            self.end_headers()

    return Collector


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a killed client's broken pipe


def _serve(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    server = _Server(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@dataclass
class Project:
    root: Path
    fake: Fake
    collector: str

    def harness(self, *args: str, columns: int = 400, **kwargs: Any) -> Any:
        """``harness run ...`` in the project with the key set (a Popen when ``popen=True``)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
        env.update({ENV_NAME: KEY, "COLUMNS": str(columns)})
        cmd = [sys.executable, "-m", "harness.cli", "run", *args]
        if kwargs.pop("popen", False):
            return subprocess.Popen(
                cmd, cwd=self.root, env=env, start_new_session=True,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
        return subprocess.run(
            cmd, cwd=self.root, env=env, capture_output=True, text=True, timeout=180, check=False
        )


@contextmanager
def _project(root: Path) -> Iterator[Project]:
    fake = Fake()
    provider, collector = _serve(_provider(fake)), _serve(_collector(fake))
    (root / "harness.toml").write_text(
        "[providers.leaky]\n"
        'kind = "openai"\n'
        f'base_url = "http://127.0.0.1:{provider.server_address[1]}/v1"\n'
        f'api_key_env = "{ENV_NAME}"\n'
        'model = "m"\n'
        "max_retries = 0\n"
        "prices = {input_per_mtok = 0, output_per_mtok = 0}\n",
        encoding="utf-8",
    )
    (root / "leak.yaml").write_text(SUITE, encoding="utf-8")
    (root / "slow.yaml").write_text(SLOW_SUITE, encoding="utf-8")
    try:
        yield Project(root, fake, f"http://127.0.0.1:{collector.server_address[1]}")
    finally:
        fake.release.set()
        provider.shutdown()
        collector.shutdown()


@dataclass
class Recorded:
    project: Project
    run: subprocess.CompletedProcess[str]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Recorded]:
    """One recording run of both tasks, spans to a trace file and to the OTLP collector."""
    with _project(tmp_path_factory.mktemp("leak")) as project:
        run = project.harness(
            "leak.yaml", "--providers", "leaky", "--modes", "react", "--no-progress",
            "--record-mode", "all", "--cassettes", "cas", "--db", "db/h.duckdb",
            "--trace-file", "t.jsonl", "--otlp-endpoint", project.collector, "--capture-content",
            columns=20,  # narrower than the key: rich folds it over two lines unless scrubbed first
        )  # fmt: skip
        assert run.returncode == 3, run.stderr  # the 401 cell is an error cell
        assert "error please" in project.fake.prompts
        assert "tell me" in project.fake.prompts
        yield Recorded(project, run)


def _leaks(data: bytes | str) -> list[str]:
    """Which of the key and its halves ``data`` holds (whitespace ignored: a wrapped line)."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    flat = re.sub(r"\s+", "", text)
    return [part for part in (KEY, KEY[:HALF], KEY[HALF:]) if part in text or part in flat]


def _shards(root: Path) -> list[Path]:
    """The Parquet shards of the runs stored under ``root`` (not the schema files)."""
    return [f for f in root.glob("runs/*/*.parquet") if f.parent.name != "_schema"]


# --- one test per sink ---------------------------------------------------------------------


def test_the_store_keeps_no_key_in_any_column_or_file(recorded: Recorded) -> None:
    db = recorded.project.root / "db"
    con = duckdb.connect(str(db / "h.duckdb"), read_only=True)
    try:
        calls = [json.loads(c) for (c,) in con.execute("SELECT calls FROM results").fetchall()]
        tables = [t for (t,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()]
        rows = {t: con.execute(f'SELECT * FROM "{t}"').fetchall() for t in tables}
    finally:
        con.close()
    assert not _leaks(json.dumps(calls))
    flat = [call for cell in calls for call in cell]
    assert any(c["error"] and "Incorrect API key provided: REDACTED" in c["error"] for c in flat)
    assert any(c["response_model"] == "REDACTED" for c in flat)
    for table, values in rows.items():  # every column of every table, transcripts unpacked
        for row in values:
            for value in row:
                if isinstance(value, bytes):
                    with suppress(zlib.error):
                        value = zlib.decompress(value)
                assert KEY not in str(value), (table, value)
    for file in db.rglob("*"):  # the catalog, its WAL, shards: raw bytes
        if file.is_file():
            assert KEY.encode() not in file.read_bytes(), file
            if file.suffix == ".parquet":
                shard = duckdb.connect().execute(f"SELECT * FROM read_parquet('{file}')")
                assert KEY not in str(shard.fetchall()), file


def test_the_terminal_shows_no_key(recorded: Recorded) -> None:
    run = recorded.run
    assert not _leaks(run.stdout + run.stderr)
    assert "IncorrectAPIkeyprovided:REDACTED" in re.sub(r"\s+", "", run.stderr)


def test_the_cassettes_keep_neither_half_of_a_split_key_and_still_replay(
    recorded: Recorded,
) -> None:
    project = recorded.project
    files = sorted((project.root / "cas").rglob("*.yaml"))
    assert len(files) == 2
    for file in files:
        text = file.read_text(encoding="utf-8")
        assert not _leaks(text), file
        bodies = [i["response"]["body"]["string"] for i in yaml.safe_load(text)["interactions"]]
        assert not _leaks("".join(bodies)), file
    replay = project.harness(
        "leak.yaml", "--providers", "leaky", "--modes", "react", "--no-progress",
        "--cassettes", "cas", "--db", "replay.duckdb", "--trace-file", "replay.jsonl",
    )  # fmt: skip
    assert replay.returncode == 3, replay.stderr
    con = duckdb.connect(str(project.root / "replay.duckdb"), read_only=True)
    try:
        texts = dict(con.execute("SELECT task_id, text FROM results").fetchall())
    finally:
        con.close()
    assert texts["streamed"] == "the key is REDACTED ok"  # the scrubbed chunks still parse


def test_the_otlp_collector_receives_no_key(recorded: Recorded) -> None:
    bodies = recorded.project.fake.otlp
    assert bodies, "nothing exported"
    received = b"".join(bodies)
    assert not _leaks(received)
    assert b"the key is REDACTED ok" in received  # --capture-content: the reply went out
    assert b"Incorrect API key provided: REDACTED" in received


def test_the_trace_file_of_a_killed_run_holds_no_key(tmp_path: Path) -> None:
    with _project(tmp_path) as project:
        trace = project.root / "killed.jsonl"
        proc = project.harness(
            "slow.yaml", "--providers", "leaky", "--modes", "react", "--no-progress",
            "--record-mode", "all", "--cassettes", "cas", "--db", "k.duckdb",
            "--trace-file", str(trace), "--concurrency", "1", popen=True,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 120
            while not (
                "slow please" in project.fake.prompts
                and trace.is_file()
                and "Incorrect API key provided" in trace.read_text(encoding="utf-8")
                and _shards(project.root)
            ):  # the denied cell is done, its spans and row written; the slow cell is waiting
                assert proc.poll() is None, "the run ended before it was killed"
                assert time.monotonic() < deadline, "the denied cell's spans never came"
                time.sleep(0.1)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)
        assert proc.returncode == -signal.SIGKILL
        text = trace.read_text(encoding="utf-8")
        assert not _leaks(text)
        assert "Incorrect API key provided: REDACTED" in text
        # The killed run's shards (never compacted) hold the denied cell's row, calls included.
        shards = _shards(project.root)
        assert shards
        for file in shards:
            assert KEY.encode() not in file.read_bytes(), file
            rows = duckdb.connect().execute(f"SELECT * FROM read_parquet('{file}')").fetchall()
            assert not _leaks(str(rows)), file
