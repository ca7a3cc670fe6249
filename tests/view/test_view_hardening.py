"""The viewer against DNS rebinding and odd URLs: only allowed Host names are served, out-of-range
page numbers are clamped (never a 500), `harness view --port 0` prints the port it listens on and
warns loudly when bound beyond loopback. A real uvicorn server, real processes, a real DuckDB."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from harness.view._hosts import host_name, is_loopback


@pytest.mark.parametrize(
    ("header", "name"),
    [("127.0.0.1:8765", "127.0.0.1"), ("LOCALHOST", "localhost"), ("[::1]:80", "[::1]"),
     ("evil.example:8765", "evil.example"), ("", "")],
)  # fmt: skip
def test_host_name(header: str, name: str) -> None:
    assert host_name(header) == name


def test_is_loopback() -> None:
    assert all(map(is_loopback, ["127.0.0.1", "127.5.5.5", "localhost", "::1", "[::1]"]))
    assert not any(map(is_loopback, ["0.0.0.0", "::", "192.168.1.4", "example.org"]))


@pytest.mark.slow
def test_foreign_host_headers_are_refused(server: str) -> None:
    port = server.rsplit(":", 1)[1]
    for good in (f"127.0.0.1:{port}", f"localhost:{port}", "localhost", f"[::1]:{port}"):
        assert httpx.get(server + "/", headers={"Host": good}).status_code == 200, good
    for bad in ("evil.example", f"evil.example:{port}", f"127.0.0.1.evil.example:{port}",
                f"localhost.:{port}", ""):  # fmt: skip
        page = httpx.get(server + "/", headers={"Host": bad})
        assert page.status_code == 400, bad
        assert "not allowed" in page.text


@pytest.mark.slow
@pytest.mark.parametrize(
    "query", ["page=922337203685477580", "page=-5", "page=abc", "page=1e9",
              "page=99999999999999999999999", "sort=zzz", "status=zzz&page=3"],
)  # fmt: skip
def test_out_of_range_page_parameters_never_500(
    server: str, bench_db: tuple[Path, str, str], query: str
) -> None:
    page = httpx.get(f"{server}/runs/{bench_db[1]}?{query}")
    assert page.status_code < 500, page.text[:500]


def _start(*args: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "view", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stderr is not None
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if "harness view: http" in line:
            return proc, "".join(lines)
    proc.wait(10)
    raise AssertionError("".join(lines))


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    proc.wait(10)


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_port_0_prints_the_real_port(bench_db: tuple[Path, str, str]) -> None:
    proc, err = _start("--db", str(bench_db[0]), "--port", "0")
    try:
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", err)
        assert match, err
        port = int(match.group(1))
        assert port != 0
        assert "WARNING" not in err
        deadline = time.monotonic() + 30
        while True:
            try:
                page = httpx.get(f"http://127.0.0.1:{port}/", timeout=5)
                break
            except httpx.ConnectError:
                assert time.monotonic() < deadline, "not listening on the printed port"
                time.sleep(0.1)
        assert page.status_code == 200
        assert bench_db[1] in page.text
    finally:
        _stop(proc)


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_binding_beyond_loopback_warns_and_allow_host_adds_names(
    bench_db: tuple[Path, str, str],
) -> None:
    proc, err = _start("--db", str(bench_db[0]), "--host", "0.0.0.0", "--port", "0",
                       "--allow-host", "viewer.lan")  # fmt: skip
    try:
        assert "WARNING: --host 0.0.0.0 serves the viewer beyond this machine" in err
        match = re.search(r"http://0\.0\.0\.0:(\d+)/", err)
        assert match, err
        url = f"http://127.0.0.1:{match.group(1)}/"
        deadline = time.monotonic() + 30
        while True:
            try:
                ok = httpx.get(url, headers={"Host": f"viewer.lan:{match.group(1)}"}, timeout=5)
                break
            except httpx.ConnectError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        assert ok.status_code == 200
        assert httpx.get(url, headers={"Host": "other.lan"}, timeout=5).status_code == 400
    finally:
        _stop(proc)
