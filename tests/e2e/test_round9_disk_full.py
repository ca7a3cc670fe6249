"""A span file on a disk that stays full (adversary round 9, issue 34).

Before: the run said "the disk is full; spans wait in memory, tried again for up to 8s", but the
tracing's shutdown gave up after 4.5 s ("trace export did not finish within 5s"), so the lines
held back were dropped without a word of what was lost, and a disk freed within the promised
budget lost them too. Now the shutdown waits out the span file's back-off budget and then says
how many bytes of spans were not written. The disk is a real 64 KiB tmpfs made by ``bwrap``,
filled before the run; the database is elsewhere."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

SUITE = Path(__file__).resolve().parents[2] / "suites" / "arithmetic.yaml"


def _full_disk_prefix(folder: Path) -> list[str]:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        pytest.skip("no bwrap here")
    prefix = [bwrap, "--dev-bind", "/", "/", "--size", "65536", "--tmpfs", str(folder),
              "--die-with-parent", "--"]  # fmt: skip
    probe = subprocess.run([*prefix, "sh", "-c", f"test -w '{folder}'"], capture_output=True,
                           timeout=60)  # fmt: skip
    if probe.returncode != 0:
        pytest.skip("bwrap cannot make a tmpfs here")
    return prefix


def test_spans_on_a_disk_that_stays_full_are_waited_for_and_their_loss_said(
    tmp_path: Path,
) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    prefix = _full_disk_prefix(disk)
    fill = f"dd if=/dev/zero of='{disk}/fill' bs=1k count=100000 2>/dev/null; "
    run = (f"'{sys.executable}' -m harness.cli run '{SUITE}' --providers mock --db "
           f"'{tmp_path}/h.duckdb' --no-progress --trace-file '{disk}/spans.jsonl'")  # fmt: skip
    env = {**os.environ, "HARNESS_DISK_FULL_WAIT_S": "8"}
    done = subprocess.run([*prefix, "sh", "-c", fill + run], capture_output=True, text=True,
                          env=env, timeout=540, cwd=tmp_path)  # fmt: skip
    out = " ".join((done.stdout + done.stderr).split())
    assert done.returncode == 0, out  # the results are whole: every cell stored
    assert "93/93 cells" in out
    assert "the disk stayed full for 8.0s" in out, out
    assert "bytes of spans not written" in out
    assert "did not finish within" not in out


def _model() -> ThreadingHTTPServer:
    class Model(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
            message = {"role": "assistant", "content": "the answer is 4"}
            usage = {"prompt_tokens": 30, "completion_tokens": 5, "total_tokens": 35}
            if body.get("stream"):
                choice = {"index": 0, "delta": message, "finish_reason": "stop"}
                chunk = {"id": "c", "object": "chat.completion.chunk", "model": "m",
                         "usage": usage, "choices": [choice]}  # fmt: skip
                data, kind = (
                    f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode(),
                    "text/event-stream",
                )
            else:
                choice = {"index": 0, "message": message, "finish_reason": "stop"}
                reply = {"id": "r", "object": "chat.completion", "model": "m", "usage": usage,
                         "choices": [choice]}  # fmt: skip
                data, kind = json.dumps(reply).encode(), "application/json"
            self.send_response(200)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Model)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_a_recording_onto_a_full_disk_makes_error_cells_that_resume_records(
    tmp_path: Path,
) -> None:
    """Before: recording with ``--cassettes`` on a full disk exited 0, "3 passed", with no
    cassette written (each save's ENOSPC became a warning in the run's events), and
    ``--resume`` then ran nothing: the recordings were lost for good. Now each cell whose
    cassette could not be saved is an error cell naming it, exit 3, and ``--resume`` with
    room again records them."""
    disk = tmp_path / "disk"
    disk.mkdir()
    prefix = _full_disk_prefix(disk)
    server = _model()
    try:
        (tmp_path / "harness.toml").write_text(
            f'[providers.lb]\nkind = "openai"\nbase_url = "http://127.0.0.1:'
            f'{server.server_address[1]}/v1"\napi_key_env = "LB_API_KEY"\nmodel = "m"\n'
            "max_retries = 0\nprices = {input_per_mtok = 0, output_per_mtok = 0}\n"
        )
        (tmp_path / "s.yaml").write_text("suite: recs\ntasks:\n" + "".join(
            f"  - {{id: t{i}, prompt: 'what is {i}', expect: {{kind: contains, value: '4'}}}}\n"
            for i in range(3)))  # fmt: skip
        run = (f"'{sys.executable}' -m harness.cli run s.yaml --providers lb --modes react "
               f"--db h.duckdb --no-progress --label R --record-mode all "
               f"--cassettes '{disk}/cas'")  # fmt: skip
        fill = f"dd if=/dev/zero of='{disk}/fill' bs=1k count=100000 2>/dev/null; "
        env = {**os.environ, "LB_API_KEY": "sk-test-123456789", "HARNESS_LIVE_PREFLIGHT": "0"}
        script = (f"{fill}{run} >first.txt 2>&1; echo $? >first.rc; rm '{disk}/fill'; "
                  f"{run} --resume >second.txt 2>&1; echo $? >second.rc; "
                  f"find '{disk}/cas' -name '*.yaml' | wc -l >saved.txt")  # fmt: skip
        subprocess.run([*prefix, "sh", "-c", script], env=env, timeout=540, cwd=tmp_path,
                       check=True)  # fmt: skip
    finally:
        server.shutdown()
    first, second = (" ".join((tmp_path / f).read_text().split()) for f in
                     ("first.txt", "second.txt"))  # fmt: skip
    assert "Traceback" not in first + second
    assert (tmp_path / "first.rc").read_text().strip() == "3", first  # before: 0, "3 passed"
    assert first.count("cassette_not_saved") >= 3, first
    assert "the disk is full" in first
    assert (tmp_path / "second.rc").read_text().strip() == "0", second
    assert "3/3 cells, 3 passed" in second
    assert (tmp_path / "saved.txt").read_text().strip() == "3"  # recorded by the resume


def test_a_folder_at_the_cassettes_path_makes_an_error_cell_not_a_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same fault without a full disk: a folder where the cassette goes made the save
    fail with ``Is a directory``, and the cell was stored as passed, exit 0, nothing recorded.
    Now an error cell naming the cassette and the cause, exit 3."""
    from click.testing import CliRunner

    from harness.cli import main

    server = _model()
    try:
        monkeypatch.chdir(tmp_path)
        (tmp_path / "harness.toml").write_text(
            f'[providers.lb]\nkind = "openai"\nbase_url = "http://127.0.0.1:'
            f'{server.server_address[1]}/v1"\napi_key_env = "LB_API_KEY"\nmodel = "m"\n'
            "max_retries = 0\nprices = {input_per_mtok = 0, output_per_mtok = 0}\n"
        )
        (tmp_path / "s.yaml").write_text(
            "suite: recs\ntasks:\n  - {id: t1, prompt: 'what is 2', "
            "expect: {kind: contains, value: '4'}}\n"
        )
        (tmp_path / "cassettes/recs/lb/react/t1.e0.yaml").mkdir(parents=True)
        done = CliRunner().invoke(
            main,
            ["run", "s.yaml", "--providers", "lb", "--modes", "react", "--db", "h.duckdb",
             "--no-progress", "--record-mode", "all"],
            env={"LB_API_KEY": "sk-test-123456789", "HARNESS_LIVE_PREFLIGHT": "0"},
        )  # fmt: skip
    finally:
        server.shutdown()
    out = " ".join(done.output.split())
    assert done.exit_code == 3, out  # before: 0, "1 passed"
    assert "cassette_not_saved: cassettes/recs/lb/react/t1.e0.yaml" in out
    assert "Is a directory" in out
    assert "fix that and run it again" in out
