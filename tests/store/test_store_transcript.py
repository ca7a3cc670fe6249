"""results.transcript: the messages, compressed and bounded, with a note where they were cut."""

from __future__ import annotations

from pathlib import Path

from harness.core import Message, ToolCall, ToolResult
from harness.store import Store, cell_detail, decode_transcript, encode_transcript
from harness.store._transcript import MAX_CONTENT_CHARS, MAX_MESSAGES


def test_round_trip_keeps_tool_calls_results_and_turn_marks() -> None:
    messages = [
        Message.user("what is 2+3?"),
        Message.assistant("Plan: add."),
        Message.assistant("", [ToolCall("c1", "calculator", {"expression": "2+3"})]),
        Message.tool(ToolResult("c1", "5")),
        Message.assistant("5"),
    ]
    doc = decode_transcript(encode_transcript(messages, {1: "plan"}))
    assert doc is not None
    assert doc["cut"] is None
    got = doc["messages"]
    assert [m["role"] for m in got] == ["user", "assistant", "assistant", "tool", "assistant"]
    assert got[1]["turn"] == "plan"
    assert got[4]["turn"] is None
    assert got[2]["tool_calls"] == [
        {"id": "c1", "name": "calculator", "arguments": {"expression": "2+3"}}
    ]
    assert got[3]["tool_result"] == {"tool_call_id": "c1", "content": "5", "is_error": False}


def test_long_contents_and_conversations_are_cut_with_a_note() -> None:
    big = "x" * (MAX_CONTENT_CHARS + 1234)
    messages = [Message.user(big)] + [Message.assistant(f"m{i}") for i in range(MAX_MESSAGES + 10)]
    blob = encode_transcript(messages)
    assert blob is not None
    assert len(blob) < 50_000
    doc = decode_transcript(blob)
    assert doc is not None
    first = doc["messages"][0]["content"]
    assert first.startswith("x" * 100)
    assert first.endswith("[... 1234 characters cut ...]")
    notes = [m for m in doc["messages"] if m["role"] == "note"]
    assert len(notes) == 1
    assert "11 messages cut" in notes[0]["content"]
    assert len(doc["messages"]) == MAX_MESSAGES + 1
    assert doc["messages"][-1]["content"] == f"m{MAX_MESSAGES + 9}"  # the end is kept
    assert "1234 characters cut" in doc["cut"]
    assert "of 411 cut" in doc["cut"]


def test_empty_or_unreadable() -> None:
    assert encode_transcript([]) is None
    assert decode_transcript(None) is None
    assert decode_transcript(b"not zlib") is None


def test_stored_and_read_back_through_the_store(tmp_path: Path) -> None:
    db = tmp_path / "h.duckdb"
    blob = encode_transcript([Message.user("hi"), Message.assistant("hello")])
    with Store.open(db) as store:
        run = store.begin_run()
        store.write_result(
            {"run_id": run, "suite": "s", "task_id": "t", "mode": "react", "provider": "mock",
             "epoch": 0, "passed": True, "transcript": blob}
        )  # fmt: skip
    with Store.open(db, read_only=True) as store:
        cell = cell_detail(store, run, "s/t/react/mock/e0")
    assert cell is not None
    assert [m["content"] for m in cell["transcript"]["messages"]] == ["hi", "hello"]


def test_a_tool_calls_huge_arguments_are_cut_with_a_note() -> None:
    """Adversary round 10 (part B), issue 34. Before: a tool call's arguments, name and id were
    stored whole (only contents were cut): a model's 20 MB of arguments made 40.6 MB of
    transcript in one result row. Now each is cut at MAX_CONTENT_CHARS, as contents are."""
    big = {"expression": "".join(chr(97 + (i * 7919) % 26) for i in range(2_000_000))}
    messages = [
        Message.user("go"),
        Message.assistant("", [ToolCall("c" * 50_000, "n" * 50_000, big)]),
        Message.assistant("", [ToolCall("c2", "calculator", {"expression": "2+3"})]),
    ]
    blob = encode_transcript(messages)
    assert blob is not None
    assert len(blob) < 200_000  # before: 1.3 MB
    doc = decode_transcript(blob)
    assert doc is not None
    call = doc["messages"][1]["tool_calls"][0]
    assert isinstance(call["arguments"], str)
    assert call["arguments"].startswith('{"expression": "apetixmb')
    assert call["arguments"].endswith("characters cut ...]")
    assert len(call["name"]) < MAX_CONTENT_CHARS + 100
    assert len(call["id"]) < MAX_CONTENT_CHARS + 100
    assert "message 1 (arguments)" in doc["cut"]
    assert doc["messages"][2]["tool_calls"][0]["arguments"] == {"expression": "2+3"}  # kept
