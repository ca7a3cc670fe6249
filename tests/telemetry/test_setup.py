"""configure_tracing: resource, exporters, defaults, and a collector that is not there."""

from __future__ import annotations

import logging
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import harness
from harness import ConfigError, tool
from harness.telemetry import _conventions as c
from harness.telemetry import configure_tracing
from harness.telemetry._resolve import settings_for
from harness.telemetry._setup import git_sha

ROOT = Path(__file__).resolve().parents[2]
OTEL_ENV = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    "OTEL_EXPORTER_OTLP_TIMEOUT",
    "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
    "OTEL_SERVICE_NAME",
)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in OTEL_ENV:
        monkeypatch.delenv(name, raising=False)


# harness.tool(...) is annotated -> Any (harness/tools/_base.py): an untyped decorator to mypy
@tool(parallel_safe=True)
def lookup(k: int = 0) -> str:
    """Look something up."""
    return f"value {k}"


TURNS = {
    "turns": [
        {"tool_calls": [{"name": "lookup", "arguments": {"k": 1}}]},
        {"text": "done"},
    ]
}


def closed_port() -> int:
    """A port on 127.0.0.1 with nothing listening."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
def test_resource_names_the_service_version_and_commit() -> None:
    with configure_tracing(in_memory=True) as tracing:
        harness.run("q", provider="mock", provider_opts=TURNS, tools=[lookup],
                    tracer_provider=tracing.provider)  # fmt: skip
        spans = tracing.finished_spans()
    resource = dict(spans[0].resource.attributes)
    assert resource["service.name"] == "harness"
    assert resource["service.version"] == harness.__version__
    if shutil.which("git") and (ROOT / ".git").exists():
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False
        ).stdout.strip()
        if head:
            assert resource[c.HARNESS_GIT_SHA] == head
    assert all(s.instrumentation_scope and s.instrumentation_scope.name == "harness" for s in spans)


def test_git_sha_outside_a_checkout_is_none(tmp_path: Path) -> None:
    assert git_sha(tmp_path / "x.py") is None


def test_git_sha_follows_refs_and_packed_refs(tmp_path: Path) -> None:
    git = tmp_path / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "packed-refs").write_text("# pack-refs\n" + "a" * 40 + " refs/heads/main\n")
    assert git_sha(tmp_path / "pkg" / "m.py") == "a" * 40
    (git / "refs" / "heads" / "main").write_text("b" * 40 + "\n")
    assert git_sha(tmp_path / "pkg" / "n.py") == "b" * 40


def test_service_name_env_wins_over_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_SERVICE_NAME", "bench-ci")
    with configure_tracing(in_memory=True) as tracing:
        assert tracing.provider.resource.attributes["service.name"] == "bench-ci"
    with configure_tracing(in_memory=True, service_name="mine") as tracing:
        assert tracing.provider.resource.attributes["service.name"] == "mine"


def test_capture_content_defaults(tmp_path: Path) -> None:
    port = closed_port()
    cases: list[tuple[dict[str, Any], bool]] = [
        ({"file": tmp_path / "a.jsonl"}, True),  # a local file alone: on
        ({"in_memory": True}, False),
        ({"file": tmp_path / "b.jsonl", "otlp_endpoint": f"http://127.0.0.1:{port}"}, False),
        ({"file": tmp_path / "c.jsonl", "capture_content": False}, False),
        ({"in_memory": True, "capture_content": True}, True),
    ]
    for kwargs, expected in cases:
        handle = configure_tracing(**kwargs)
        try:
            assert handle.capture_content is expected, kwargs
            settings = settings_for(handle.provider)
            assert settings is not None
            assert settings.capture_content is expected
        finally:
            handle.shutdown(timeout_s=1)


def test_otlp_endpoint_resolution(monkeypatch: pytest.MonkeyPatch) -> None:
    port = closed_port()
    base = f"http://127.0.0.1:{port}"
    handle = configure_tracing(otlp_endpoint=base)
    assert handle.otlp_endpoint == base + "/v1/traces"  # a base URL, like the env variable
    handle.shutdown(timeout_s=1)
    handle = configure_tracing(otlp_endpoint=base + "/custom/path")
    assert handle.otlp_endpoint == base + "/custom/path"  # a full URL is kept
    handle.shutdown(timeout_s=1)
    assert configure_tracing(in_memory=True).otlp_endpoint is None  # nothing configured
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", base)
    handle = configure_tracing()
    assert handle.otlp_endpoint == base + "/v1/traces"
    handle.shutdown(timeout_s=1)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    handle = configure_tracing()
    assert handle.otlp_endpoint == base
    assert type(handle._exporters[0].inner).__module__.startswith(
        "opentelemetry.exporter.otlp.proto.grpc"
    )
    handle.shutdown(timeout_s=1)
    with pytest.raises(ConfigError, match="otlp_protocol"):
        configure_tracing(otlp_endpoint=base, otlp_protocol="http/json")  # type: ignore[arg-type]


@pytest.mark.parametrize("protocol", ["http/protobuf", "grpc"])
def test_a_dead_collector_never_fails_or_stalls_a_run(
    protocol: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    handle = configure_tracing(
        otlp_endpoint=f"http://127.0.0.1:{closed_port()}",
        otlp_protocol=protocol,  # type: ignore[arg-type]
    )
    # A stall would be a hang, which the test's timeout (pytest-timeout) turns into a failure.
    results = [
        harness.run(
            "q",
            provider="mock",
            provider_opts=TURNS,
            tools=[lookup],
            tracer_provider=handle.provider,
        )
        for _ in range(3)
    ]
    assert all(r.finish_reason.value == "stop" and r.trace_id for r in results)
    handle.shutdown()
    deadline = time.monotonic() + 5  # the failed export may report from the worker thread
    while time.monotonic() < deadline and not handle.export_failures:
        time.sleep(0.05)
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    ours = [r for r in warnings if r.name == "harness.telemetry"]
    assert len(ours) == 1, [r.getMessage() for r in warnings]
    assert "cannot export spans" in ours[0].getMessage()
    assert not [r for r in warnings if r.name.startswith("opentelemetry")]


def test_spans_reach_a_live_otlp_http_collector(httpserver: Any) -> None:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    httpserver.expect_request("/v1/traces", method="POST").respond_with_data(b"", status=200)
    with configure_tracing(otlp_endpoint=httpserver.url_for("/")) as tracing:
        r = harness.run("q", provider="mock", provider_opts=TURNS, tools=[lookup],
                        tracer_provider=tracing.provider)  # fmt: skip
    names = []
    for request, _ in httpserver.log:
        body = ExportTraceServiceRequest.FromString(request.get_data())
        for rs in body.resource_spans:
            for ss in rs.scope_spans:
                for span in ss.spans:
                    names.append(span.name)
                    assert span.trace_id.hex() == r.trace_id
    assert sorted(names) == sorted(
        ["invoke_agent react", "iteration 0", "iteration 1", "chat mock-model",
         "chat mock-model", "execute_tool lookup"]
    )  # fmt: skip
    assert tracing.export_failures == 0


def test_handle_shutdown_is_idempotent_and_flushes(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    handle = configure_tracing(file=path)
    harness.run("q", provider="mock", provider_opts=TURNS, tools=[lookup],
                tracer_provider=handle.provider)  # fmt: skip
    assert handle.force_flush()
    assert len(path.read_text().splitlines()) == 6
    handle.shutdown()
    handle.shutdown()
    assert handle.force_flush() is False


@pytest.mark.slow
def test_flush_at_exit_in_a_fresh_interpreter(tmp_path: Path) -> None:
    """No explicit shutdown: the atexit hook flushes the batch processor."""
    path = tmp_path / "exit.jsonl"
    code = (
        "import harness\n"
        "from harness.telemetry import configure_tracing\n"
        f"h = configure_tracing(file={str(path)!r})\n"
        "r = harness.run('q', provider='mock', provider_opts={'turns': [{'text': 'hi'}]},"
        " tracer_provider=h.provider)\n"
        "print(r.trace_id)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    trace_id = out.stdout.strip()
    lines = path.read_text().splitlines()
    assert len(lines) == 3
    assert all(trace_id in line for line in lines)


@pytest.mark.slow
def test_ctrl_c_still_flushes_the_span_file(tmp_path: Path) -> None:
    path = tmp_path / "ctrlc.jsonl"
    code = (
        "import harness\n"
        "from harness.telemetry import configure_tracing\n"
        f"with configure_tracing(file={str(path)!r}) as h:\n"
        "    harness.run('q', provider='mock', provider_opts={'turns': [{'text': 'hi'}]},"
        " tracer_provider=h.provider)\n"
        "    raise KeyboardInterrupt\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode != 0
    assert "KeyboardInterrupt" in out.stderr
    assert len(path.read_text().splitlines()) == 3
