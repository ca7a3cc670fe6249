"""The documented way to serve a recorded model is the one the code runs (issue 35, item 1):
docs/providers.md and the README show `nox -s serve -- qwen`, the llama-server command line
scripts/serve_model.py starts (which scripts/record_qwen.py records with), and the first live
run it prints; the profiles it names point at the port it serves on."""

from __future__ import annotations

import ast
import importlib
import shlex
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from harness.cli._run import run_cmd
from harness.providers._profiles import resolve_profile

ROOT = Path(__file__).resolve().parent.parent
PROVIDERS_DOC = (ROOT / "docs" / "providers.md").read_text(encoding="utf-8")
README = (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def scripts() -> Any:
    sys.path.insert(0, str(ROOT / "scripts"))  # the scripts import each other by name
    try:
        yield tuple(
            importlib.import_module(m) for m in ("serve_model", "fetch_model", "record_qwen")
        )
    finally:
        sys.path.remove(str(ROOT / "scripts"))


def _code_lines(text: str) -> list[str]:
    """Every line inside a fenced code block of ``text``."""
    lines, inside = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            inside = not inside
        elif inside:
            lines.append(line)
    return lines


def test_the_documented_server_command_is_the_one_started(scripts: Any) -> None:
    serve_model, fetch_model, _ = scripts
    served = serve_model.MODELS["qwen"]
    gguf = Path(".cache/models") / fetch_model.MODELS[served.gguf].file
    command = serve_model.server_command(Path("llama-server"), gguf, port=served.port)
    documented = [line for line in _code_lines(PROVIDERS_DOC) if line.startswith("llama-server")]
    assert documented == [shlex.join(command)]
    assert "nox -s serve -- qwen" in _code_lines(PROVIDERS_DOC)


def test_record_qwen_records_with_the_same_command(scripts: Any) -> None:
    serve_model, _, record_qwen = scripts
    assert record_qwen.server_command is serve_model.server_command
    assert serve_model.MODELS["qwen"].port == record_qwen.PORT
    assert tuple(p for p, _ in serve_model.MODELS["qwen"].profiles) == record_qwen.PROFILES


def test_the_documented_live_run_is_the_one_printed_and_parses(scripts: Any) -> None:
    serve_model, _, _ = scripts
    served = serve_model.MODELS["qwen"]
    run = serve_model.next_steps("qwen", served.port)[-1]
    for doc in (PROVIDERS_DOC, README):
        assert run in _code_lines(doc)
    args = shlex.split(run)
    assert args[:2] == ["harness", "run"]
    ctx = run_cmd.make_context("run", args[2:])
    assert ctx.params["label"] == "live"
    moved = serve_model.next_steps("qwen", 9000)[-1]
    assert "--provider-opt llamaserver-qwen-chat.base_url=http://127.0.0.1:9000/v1" in moved


def test_the_profiles_it_names_use_its_port(scripts: Any) -> None:
    serve_model, _, _ = scripts
    served = serve_model.MODELS["qwen"]
    for name, _ in served.profiles:
        profile, _ = resolve_profile(name)
        assert urlsplit(profile.resolved_base_url()).port == served.port, name
        assert profile.max_tokens is not None, f"{name}: every request needs a cap"
        assert name in PROVIDERS_DOC


def test_nox_has_the_serve_session_running_the_script() -> None:
    tree = ast.parse((ROOT / "noxfile.py").read_text(encoding="utf-8"))
    (serve,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "serve"]
    assert "scripts/serve_model.py" in ast.unparse(serve)
    assert "nox -s serve -- qwen" in README
