"""The facade's wiring, checked in fresh interpreters: untraced runs never load OpenTelemetry,
and a configured global provider is used when no tracer_provider is given."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

#: Spawns processes, sandboxes, browsers, clusters or servers (the fast loop skips it).
pytestmark = pytest.mark.slow


def _python(code: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    return out.stdout.strip()


def test_an_untraced_run_never_imports_opentelemetry() -> None:
    code = (
        "import sys, harness\n"
        "r = harness.run('q', provider='mock', provider_opts={'turns': [{'text': 'hi'}]})\n"
        "print(r.trace_id, any(m.startswith('opentelemetry') for m in sys.modules))\n"
    )
    assert _python(code) == "None False"


def test_the_global_provider_is_used_when_configured() -> None:
    code = (
        "import json, harness\n"
        "from opentelemetry import trace\n"
        "from opentelemetry.sdk.trace import TracerProvider\n"
        "from opentelemetry.sdk.trace.export import SimpleSpanProcessor\n"
        "from opentelemetry.sdk.trace.export.in_memory_span_exporter import "
        "InMemorySpanExporter\n"
        "mem = InMemorySpanExporter()\n"
        "p = TracerProvider(); p.add_span_processor(SimpleSpanProcessor(mem))\n"
        "trace.set_tracer_provider(p)\n"
        "r = harness.run('q', provider='mock', provider_opts={'turns': [{'text': 'hi'}]})\n"
        "spans = mem.get_finished_spans()\n"
        "print(json.dumps([r.trace_id, sorted(s.name for s in spans),\n"
        "    sorted({format(s.context.trace_id, '032x') for s in spans})]))\n"
    )
    trace_id, names, trace_ids = json.loads(_python(code))
    assert names == ["chat mock-model", "invoke_agent react", "iteration 0"]
    assert trace_ids == [trace_id]


def test_an_sdk_disabled_by_env_means_no_subscriber() -> None:
    code = (
        "import os; os.environ['OTEL_SDK_DISABLED'] = 'true'\n"
        "import harness\n"
        "from opentelemetry.sdk.trace import TracerProvider\n"
        "r = harness.run('q', provider='mock', provider_opts={'turns': [{'text': 'hi'}]},\n"
        "                tracer_provider=TracerProvider())\n"
        "print(r.trace_id)\n"
    )
    assert _python(code) == "None"


def test_the_genai_env_var_turns_content_capture_on() -> None:
    code = (
        "import os; os.environ['OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT'] = 'true'\n"
        "import harness\n"
        "from opentelemetry.sdk.trace import TracerProvider\n"
        "from opentelemetry.sdk.trace.export import SimpleSpanProcessor\n"
        "from opentelemetry.sdk.trace.export.in_memory_span_exporter import "
        "InMemorySpanExporter\n"
        "mem = InMemorySpanExporter()\n"
        "p = TracerProvider(); p.add_span_processor(SimpleSpanProcessor(mem))\n"
        "harness.run('say hi', provider='mock', provider_opts={'turns': [{'text': 'hi'}]},\n"
        "            tracer_provider=p)\n"
        "root = [s for s in mem.get_finished_spans() if s.parent is None][0]\n"
        "print(root.attributes.get('input.value'))\n"
    )
    assert _python(code) == "say hi"
