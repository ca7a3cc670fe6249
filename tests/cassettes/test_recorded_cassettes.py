"""The shipped real-model cassettes: the model saw its tools and their results in every mode,
both wire formats are there, and the model really acted (tool calls, critiques)."""

from __future__ import annotations

import functools
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.suites._load import load_suites

ROOT = Path(__file__).resolve().parents[2]
CASSETTES = ROOT / "cassettes"
PROVIDERS = {"llamacpp-gemma": "/v1/chat/completions", "llamaserver-gemma": "/v1/messages"}
MODES = ("react", "plan_and_solve", "reflexion")
TOOL_SUITES = ("arithmetic", "files", "lookup")


#: libyaml's loader when PyYAML has it: 1,300 cassette files (24 MB) parse ten times faster.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.cache
def interactions(path: Path) -> list[dict[str, Any]]:
    """A cassette's interactions, parsed once per session (several tests read every file)."""
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)
    return list(data["interactions"])


def request_text(interaction: dict[str, Any]) -> str:
    body = json.loads(interaction["request"]["body"])
    parts = [str(body.get("system", ""))]
    parts += [m["content"] if isinstance(m["content"], str) else json.dumps(m["content"])
              for m in body["messages"]]  # fmt: skip
    return "\n".join(parts)


def reply_text(interaction: dict[str, Any]) -> str:
    data = json.loads(interaction["response"]["body"]["string"])
    if "choices" in data:
        return str(data["choices"][0]["message"].get("content") or "")
    return "".join(b.get("text", "") for b in data.get("content", []))


def cassettes(provider: str, suite: str = "*", mode: str = "*") -> list[Path]:
    return sorted(CASSETTES.glob(f"{suite}/{provider}/{mode}/*.yaml"))


@pytest.fixture(scope="module")
def task_tools() -> dict[tuple[str, str], list[str]]:
    suites = load_suites([str(ROOT / "suites")])
    out = {}
    for suite in suites:
        for task in suite.tasks:
            tools = task.run_options().get("tools", suite.defaults.run_options().get("tools"))
            # names: a source's task (BFCL) makes its tool objects per run
            out[(suite.suite, task.id)] = [getattr(t, "name", t) for t in tools or []]
    return out


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_tool_and_the_previous_result_reach_the_model(
    provider: str, mode: str, task_tools: dict[tuple[str, str], list[str]]
) -> None:
    checked = 0
    for path in cassettes(provider, "*", mode):
        suite, task = path.parts[-4], path.name.split(".e")[0]
        recorded = interactions(path)
        for before, after in itertools.pairwise(recorded):
            call = reply_text(before)
            if "<tool_call>" not in call or "tools" in json.loads(after["request"]["body"]):
                continue
            text = request_text(after)
            # Main requests list every tool; a critique or plan request shows the history.
            if "You can call tools" in text:
                for tool in task_tools[(suite, task)]:
                    assert f"- {tool}(" in text, f"{path}: tool {tool} missing from the request"
            assert "Result of tool call" in text, f"{path}: no tool result in the next request"
            checked += 1
    assert checked >= 5, f"only {checked} recorded requests follow a tool call"


@pytest.mark.parametrize(("provider", "path"), PROVIDERS.items())
def test_both_wire_formats_were_recorded(provider: str, path: str) -> None:
    files = cassettes(provider)
    assert len(files) >= 100
    uris = {i["request"]["uri"] for f in files[:20] for i in interactions(f)}
    assert all(u.endswith(path) for u in uris), uris


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_model_calls_tools_in_most_tool_suite_cells(provider: str) -> None:
    files = [f for s in TOOL_SUITES for f in cassettes(provider, s)]
    calling = sum(any("<tool_call>" in reply_text(i) for i in interactions(f)) for f in files)
    assert calling / len(files) >= 0.5, f"{calling} of {len(files)} cells made a tool call"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_reflexion_critiques_run(provider: str) -> None:
    files = cassettes(provider, "*", "reflexion")
    critiqued = sum(
        any("Pause and review" in request_text(i) for i in interactions(f)) for f in files
    )
    assert critiqued / len(files) >= 0.3, f"{critiqued} of {len(files)} reflexion cells"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_cassettes_say_how_seeds_were_treated(provider: str) -> None:
    data = yaml.safe_load(cassettes(provider, "arithmetic", "react")[0].read_text("utf-8"))
    meta = data["metadata"]["harness"]
    assert meta["provider"] == provider
    assert meta["seeds"] in ("honoured", "ignored")
