"""The ``judge`` grader: verdict parsing (mock judge), and a judge recorded from a real loopback
HTTP server into the cell's cassette, then replayed with the server stopped."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
import yaml
from pytest_httpserver import HTTPServer
from werkzeug import Request as WRequest
from werkzeug import Response as WResponse

import harness
from harness.bench._session import BenchRequest, run_bench
from harness.core._result import Result
from harness.grading import grade, parse_grader
from harness.grading._judge import JudgeGrader
from harness.suites._load import load_suite
from harness.suites._suite import SuiteError

KEY = "sk-judge-test-key-0123456789"


def answered(text: str = "Paris is the capital of France.") -> Result:
    return harness.run(
        "Capital of France?", provider="mock", provider_opts={"turns": [{"text": text}]}
    )


def mock_judge(reply: str, *, transcript: bool = False, cost: float = 0.0) -> JudgeGrader:
    judge = parse_grader(
        {
            "kind": "judge",
            "provider": "mock",
            "rubric": "Names Paris.",
            "transcript": transcript,
            "provider_opts": {"turns": [{"text": reply, "cost_usd": cost}]},
        }
    )
    assert isinstance(judge, JudgeGrader)
    return judge


@pytest.mark.parametrize(
    ("reply", "passed", "score", "explanation"),
    [
        ('{"passed": true, "score": 0.9, "explanation": "names Paris"}', True, 0.9, "names Paris"),
        ('Sure.\n```json\n{"passed": false, "explanation": "no"}\n```', False, 0.0, "no"),
        ('verdict: {"score": 0.7}', True, 0.7, "no explanation"),
        ('{"score": 0.2, "explanation": "weak"}', False, 0.2, "weak"),
    ],
)
def test_the_verdict_is_read_from_the_reply(
    reply: str, passed: bool, score: float, explanation: str
) -> None:
    verdict = grade(mock_judge(reply, cost=0.0125), answered())
    assert (verdict.passed, verdict.score, verdict.error) == (passed, score, False)
    assert verdict.explanation == f"judge mock: {explanation}"
    assert verdict.cost_usd == 0.0125


@pytest.mark.parametrize(
    "reply", ["I think it is fine.", '{"passed": true, "score": 7}', '{"verdict": "yes"}']
)
def test_a_reply_without_a_verdict_is_a_grader_error(reply: str) -> None:
    verdict = grade(mock_judge(reply, cost=0.01), answered())
    assert verdict.error
    assert "gave no verdict" in verdict.explanation
    assert verdict.cost_usd == 0.01  # the call was made and is counted


def test_the_judge_sees_rubric_answer_and_optionally_the_transcript() -> None:
    from harness.grading._judge import judge_prompt

    result = harness.run(
        "What is 2+3?",
        provider="mock",
        tools=["calculator"],
        provider_opts={"turns": [
            {"tool_calls": [{"name": "calculator", "arguments": {"expression": "2+3"}}]},
            {"text": "5"},
        ]},
    )  # fmt: skip
    plain = judge_prompt(mock_judge("{}"), result)
    assert plain == "TASK:\nWhat is 2+3?\n\nRUBRIC:\nNames Paris.\n\nANSWER:\n5"
    full = judge_prompt(mock_judge("{}", transcript=True), result)
    assert (
        'TRANSCRIPT:\nuser: What is 2+3?\nassistant: [calls] calculator({"expression": "2+3"})'
        in full
    )
    assert "\ntool: 5\nassistant: 5" in full


def test_all_and_any_add_up_grading_costs() -> None:
    both = parse_grader(
        {"kind": "all", "graders": [
            mock_judge('{"passed": true}', cost=0.25).model_dump(exclude_unset=True),
            mock_judge('{"passed": true}', cost=0.5).model_dump(exclude_unset=True),
        ]}
    )  # fmt: skip
    verdict = grade(both, answered())
    assert verdict.passed
    assert verdict.cost_usd == 0.75


@pytest.mark.parametrize(
    ("expect", "message"),
    [
        ("{kind: judge, provider: mock, rubric: ' '}", "expect.rubric: say what a good"),
        ("{kind: judge, provider: nosuch, rubric: R}", "unknown provider 'nosuch'"),
        ("{kind: judge, rubric: R}", "expect.provider: judge needs `provider`"),
        ("{kind: judge, provider: mock, rubric: R, provider_opts: {transport: x}}",
         "expect.provider_opts: `transport` is set by the harness"),
        # round 14 B: these passed `suites validate`, then every cell errored
        ("{kind: judge, provider: mock, rubric: R, provider_opts: {zzz: 1}}",
         "unknown keys for the mock provider: ['zzz']"),
        ("{kind: judge, provider: 'openai:gpt-4o-mini', rubric: R, provider_opts: {zzz: 1}}",
         "unknown keys for provider 'openai': ['zzz']"),
        ("{kind: judge, provider: 'openai:gpt-4o-mini', rubric: R, "
         "provider_opts: {timeout_s: soon}}", "timeout_s"),
    ],
)  # fmt: skip
def test_bad_judge_graders_are_named(tmp_path: Path, expect: str, message: str) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(f"suite: s\ntasks:\n  - id: judged\n    prompt: P\n    expect: {expect}\n")
    with pytest.raises(SuiteError) as info:
        load_suite(path)
    assert f"{path}:5: task 'judged': expect." in str(info.value)
    assert message in str(info.value)


# --- recorded from a real server, replayed offline ------------------------------------------


class Judge:
    """An OpenAI-compatible judge: passes answers that mention Paris; reports token usage."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: WRequest) -> WResponse:
        body = json.loads(request.get_data())
        self.bodies.append(body)
        prompt = body["messages"][-1]["content"]
        if "ANSWER:\n" not in prompt:  # the run's own call (a cell on this server): answer it
            content = "It is Paris."
        else:
            ok = "paris" in prompt.split("ANSWER:\n", 1)[1].lower()
            verdict = {"passed": ok, "score": 1.0 if ok else 0.0, "explanation": f"paris={ok}"}
            content = json.dumps(verdict)
        completion = {
            "id": "chatcmpl-judge",
            "object": "chat.completion",
            "created": 1,
            "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 200, "completion_tokens": 20, "total_tokens": 220},
        }  # fmt: skip
        if body.get("stream"):
            first = {
                "choices": [
                    {
                        "index": 0,
                        "delta": {"role": "assistant", "content": content},
                        "finish_reason": None,
                    }
                ]
            }
            last = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                    "usage": completion["usage"]}  # fmt: skip
            events = [json.dumps(first), json.dumps(last), "[DONE]"]
            sse = "".join(f"data: {e}\n\n" for e in events)
            return WResponse(sse, mimetype="text/event-stream")
        return WResponse(json.dumps(completion), mimetype="application/json")


@pytest.fixture
def judge_server() -> Iterator[tuple[HTTPServer, Judge]]:
    http = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    http.start()
    judge = Judge()
    http.expect_request("/v1/chat/completions", method="POST").respond_with_handler(judge)
    yield http, judge
    if http.is_running():
        http.stop()


def _suite(folder: Path, base_url: str) -> Path:
    path = folder / "judged.yaml"
    path.write_text(
        textwrap.dedent(
            f"""\
            suite: judged
            defaults: {{tools: []}}
            tasks:
              - id: capital
                prompt: What is the capital of France?
                expect:
                  kind: judge
                  provider: "openai:gpt-4o-mini"
                  rubric: The answer names Paris.
                  provider_opts: {{base_url: "{base_url}", max_retries: 0}}
                  response_format: {{type: json_object}}
                mock: {{turns: [{{text: "It is Paris."}}]}}
              - id: wrong
                prompt: What is the capital of France?
                expect:
                  kind: judge
                  provider: "openai:gpt-4o-mini"
                  rubric: The answer names Paris.
                  provider_opts: {{base_url: "{base_url}", max_retries: 0}}
                mock: {{turns: [{{text: "It is Lyon."}}]}}
            """
        )
    )
    return path


def _rows(db: Path) -> dict[str, tuple[Any, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(
            "SELECT task_id, status, score, grader_explanation, cost_usd, grading_cost_usd "
            "FROM results ORDER BY task_id"
        ).fetchall()
    finally:
        con.close()
    return {r[0]: r[1:] for r in rows}


def test_a_judge_is_recorded_in_the_cells_cassette_and_replays_offline(
    judge_server: tuple[HTTPServer, Judge], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    http, judge = judge_server
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    suite = _suite(tmp_path, http.url_for("/v1"))
    cassettes = tmp_path / "cassettes"
    recorded = run_bench(
        BenchRequest(suites=[str(suite)], cassettes=cassettes, record_mode="once",
                     db=tmp_path / "rec.duckdb", progress=False)
    )  # fmt: skip
    assert recorded.exit_code == 0
    assert len(judge.bodies) == 2
    assert judge.bodies[0]["temperature"] == 0.0
    assert "tools" not in judge.bodies[0]  # the judge is offered no tool: it only answers
    formats = {  # the grader's response_format goes with its judge's request, only there
        "ANSWER:\nIt is Paris." in b["messages"][-1]["content"]: b.get("response_format")
        for b in judge.bodies
    }
    assert formats == {True: {"type": "json_object"}, False: None}
    rows = _rows(tmp_path / "rec.duckdb")
    assert rows["capital"][:3] == ("passed", 1.0, "judge openai:gpt-4o-mini: paris=True")
    assert rows["wrong"][:3] == ("failed", 0.0, "judge openai:gpt-4o-mini: paris=False")
    cost = rows["capital"][4]
    assert cost is not None
    assert cost > 0  # gpt-4o-mini prices x the reported usage
    assert rows["capital"][3] == 0.0  # the run itself (the mock) cost nothing
    file = cassettes / "judged" / "mock" / "react" / "capital.e0.yaml"
    text = file.read_text()
    assert KEY not in text
    assert len(yaml.safe_load(text)["interactions"]) == 1

    http.stop()  # no server: the replay must not reach the network
    replayed = run_bench(
        BenchRequest(suites=[str(suite)], cassettes=cassettes, record_mode="none",
                     db=tmp_path / "replay.duckdb", progress=False)
    )  # fmt: skip
    assert replayed.exit_code == 0
    assert _rows(tmp_path / "replay.duckdb") == rows
    assert len(judge.bodies) == 2


def test_a_judge_without_a_recording_is_an_error_cell(
    judge_server: tuple[HTTPServer, Judge], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    http, judge = judge_server
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    suite = _suite(tmp_path, http.url_for("/v1"))
    report = run_bench(
        BenchRequest(suites=[str(suite)], cassettes=tmp_path / "none", record_mode="none",
                     db=tmp_path / "h.duckdb", progress=False)
    )  # fmt: skip
    assert report.exit_code == 3
    assert judge.bodies == []  # replay never reaches the network
    status, _, explanation, *_ = _rows(tmp_path / "h.duckdb")["capital"]
    assert status == "error"
    assert "cassette miss" in explanation


def test_recording_without_the_judges_key_is_bad_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.errors import ConfigError

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    suite = _suite(tmp_path, "http://127.0.0.1:9/v1")
    with pytest.raises(ConfigError, match=r"task 'capital': expect.provider: .*OPENAI_API_KEY"):
        run_bench(
            BenchRequest(suites=[str(suite)], cassettes=tmp_path / "c", record_mode="once",
                         db=tmp_path / "h.duckdb", progress=False)
        )  # fmt: skip
    assert not (tmp_path / "h.duckdb").exists()  # checked before any run row


def test_on_a_recorded_provider_the_run_and_its_judge_share_one_cassette(
    judge_server: tuple[HTTPServer, Judge], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    http, judge = judge_server
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", http.url_for("/v1"))  # the run's own provider
    suite = _suite(tmp_path, http.url_for("/v1"))
    cassettes = tmp_path / "cassettes"

    def bench(mode: str, db: str) -> int:
        request = BenchRequest(suites=[str(suite)], providers=["openai:gpt-4o-mini"],
                               tasks=["capital"], cassettes=cassettes, record_mode=mode,
                               db=tmp_path / db, progress=False)  # fmt: skip
        return run_bench(request).exit_code

    assert bench("once", "rec.duckdb") == 0
    assert len(judge.bodies) == 2  # the run's call, then the judge's
    file = cassettes / "judged" / "openai:gpt-4o-mini" / "react" / "capital.e0.yaml"
    assert len(yaml.safe_load(file.read_text())["interactions"]) == 2
    recorded = _rows(tmp_path / "rec.duckdb")
    assert recorded["capital"][0] == "passed"
    http.stop()
    assert bench("none", "replay.duckdb") == 0
    assert _rows(tmp_path / "replay.duckdb") == recorded
