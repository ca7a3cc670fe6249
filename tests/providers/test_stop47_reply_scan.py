"""Reading tool calls out of a text reply is linear in the reply (issue 34; found by the lead in
stop 47, beside round 20 B's runs of backticks).

The fence pattern tried every fence length a run of tildes allows, and searched the rest of the
reply for each one's closing fence: 6,000 tildes took 235 s holding the GIL (the event loop,
every other cell, Ctrl-C). ``<tool_call>(?P<body>.*?)</tool_call>`` searched the rest of the
reply from every opening tag: 440 KB of them took 105 s. Each block was asked against every
``<think>`` span in turn: 40,000 ``<think></think>`` took 32 s. The fences are now a walk over
the runs of fence characters (``harness.providers._fences``), the tags a search for the next
closing tag, and the spans asked by bisection; the answers are the old patterns', checked on
seeded random replies (fences in ``test_round20_lead_fences.py``). Each reply below took
minutes on 532b252; the limits are only there to end a hang. The same for a proxy's HTML error
page: the title was ``<title>(.*?)</title>``, and 280 KB of opening tags took 68 s (a real
loopback server here)."""

from __future__ import annotations

import random
import re

import pytest
from fault_server import Fault, FaultServer, http_response

import harness
from harness.providers import _http, _text_tool_parse
from harness.providers._text_tool_parse import parse_reply

_OLD_XML = re.compile(r"<tool_call>(?P<body>.*?)</tool_call>", re.DOTALL | re.IGNORECASE)
_OLD_TITLE = re.compile(r"<title>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_PIECES = ["<tool_call>", "</tool_call>", "<TOOL_CALL>", "</Tool_Call>", "x", "\n", "<", ">", "/"]


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "reply",
    [
        "~" * 200_000,
        "~" * 200_000 + "\n",
        "~~~~~~\n" * 100_000,
        "<tool_call>" * 200_000,
        "<think></think>" * 200_000,
        "<think>\n```json\n{}\n```\n</think>" * 20_000,
    ],
    ids=["tildes", "tildes-line", "tilde-lines", "open-tags", "think-pairs", "fences-in-think"],
)
def test_a_hostile_reply_is_read_in_linear_time(reply: str) -> None:
    parsed = parse_reply(reply)
    assert parsed.calls == []


def test_an_unclosed_tag_after_hostile_runs_is_still_named() -> None:
    parsed = parse_reply("~" * 50_000 + "\n<tool_call>" * 1_000)
    assert parsed.error is not None
    assert "never closed" in parsed.error


@pytest.mark.parametrize("seed", range(3))
def test_the_tags_found_are_the_old_patterns(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(20_000):
        text = "".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 30)))
        old = [(m.span(), m["body"]) for m in _OLD_XML.finditer(text)]
        assert list(_text_tool_parse._xml_calls(text)) == old, repr(text)


@pytest.mark.parametrize("seed", range(3))
def test_a_position_is_inside_the_spans_as_before(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(5_000):
        spans = [(a, a + rng.randint(0, 6)) for a in (rng.randint(0, 40) for _ in range(5))]
        within = _text_tool_parse._Spans(spans)
        for pos in range(50):
            assert (pos in within) == any(s <= pos < e for s, e in spans), (spans, pos)


@pytest.mark.timeout(120)
def test_a_proxy_page_of_opening_title_tags_is_read_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    page = "<html>" + "<title>" * 400_000
    reply = http_response(502, page, content_type="text/html")
    with FaultServer([Fault.raw(reply)], lifetime_s=100) as server:
        result = harness.run(
            "hi",
            provider="openai",
            model="m",
            tools=None,
            provider_opts={"base_url": server.url, "max_retries": 0, "stream": False},
        )
    assert "HTML error page" in (result.halted_reason or ""), result.halted_reason


@pytest.mark.parametrize("seed", range(2))
def test_the_title_found_is_the_old_patterns(seed: int) -> None:
    rng = random.Random(seed)
    pieces = ["<title>", "</title>", "<TITLE>", "</Title>", "x", "\n", "<", "/", ">"]
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 20)))
        old = _OLD_TITLE.search(text)
        assert _http._title(text) == (old.group(1) if old else None), repr(text)
