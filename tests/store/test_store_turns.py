"""``results.turns`` (schema v7): each user turn's steps (the calls as the model made them), its
reply and how it ended, read back from the DuckDB file as JSON."""

from __future__ import annotations

import json
from pathlib import Path

import harness
from harness.store import Store, crashed_row, result_row, results_df
from harness.store._rows import TURN_REPLY_CHARS, turns_json

SCRIPT = {
    "turns": [
        {
            "tool_calls": [
                {"name": "calculator", "arguments": {"expression": "17*23"}},
                {"name": "calculator", "arguments": {"expression": "2+2"}},
            ]
        },
        {"tool_calls": [{"name": "calculator", "arguments": {"expression": "1/0"}}]},
        {"text": "391"},
    ]
}


def test_the_calls_of_each_step_are_stored_per_turn(db_path: Path) -> None:
    result = harness.run(
        "What is 17*23?", provider="mock", tools=["calculator"], provider_opts=SCRIPT
    )
    with Store.open(db_path) as store:
        run = store.begin_run()
        store.write_result(result_row(result, run_id=run, suite="s", task_id="t", passed=True))
        crashed = crashed_row(
            run_id=run, suite="s", task_id="u", mode="react", provider="mock", epoch=0, error="x"
        )
        store.write_result(crashed)
        df = results_df(store, run, decode_json=True).set_index("task_id")
        raw = store.con.execute(
            "SELECT turns->>'$[0].steps[1][0][1].expression' FROM results WHERE task_id = 't'"
        ).fetchone()
    assert df.loc["t", "turns"] == [
        {
            "steps": [
                [["calculator", {"expression": "17*23"}], ["calculator", {"expression": "2+2"}]],
                [["calculator", {"expression": "1/0"}]],
            ],
            "reply": "391",
            "finish_reason": "stop",
        }
    ]
    assert raw == ("1/0",)  # plain JSON, queryable in SQL
    assert df.loc["u", "turns"] is None  # a crashed cell has no turns


def test_a_long_reply_is_cut_and_the_user_text_left_out() -> None:
    long = "x" * (TURN_REPLY_CHARS * 3)
    result = harness.run("q" * 5_000, provider="mock", provider_opts={"turns": [{"text": long}]})
    (turn,) = turns_json(result) or []
    assert turn["steps"] == []
    assert len(turn["reply"]) == TURN_REPLY_CHARS + 1
    assert "q" * 100 not in json.dumps(turn)
