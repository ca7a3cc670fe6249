"""extract_structured: parsing, validation, the repair loop and its limits."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import Recorder, error, mock, script, text
from pydantic import BaseModel

import harness
from harness import ConfigError, FinishReason, aextract_structured, extract_structured
from harness.events import CallStarted, Content, Done, StructuredRetry
from harness.kernel._structured import parse_json_reply

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
    "required": ["city", "population"],
    "additionalProperties": False,
}


def s(reply: str, **extra: Any) -> dict[str, Any]:
    """A turn that serves a structured call."""
    return text(reply, **{"for": "structured"}, **extra)


def test_success_on_first_try(events: Recorder) -> None:
    provider = mock(s('{"city": "Oslo", "population": 709000}'))
    r = extract_structured(
        "Largest city of Norway?", schema=SCHEMA, provider=provider, on_event=events
    )
    assert r.finish_reason is FinishReason.STOP
    assert r.deliverable == {"city": "Oslo", "population": 709000}
    assert r.llm_calls == 1
    assert [c.purpose for c in r.calls] == ["structured"]
    assert r.iterations == 0
    assert r.mode == "structured"
    assert events.of(StructuredRetry) == []
    assert [c.purpose for c in events.of(CallStarted)] == ["structured"]
    assert [c.purpose for c in events.of(Content)] == ["structured"]
    # the request: the schema and the prompt, no tools, JSON mode on (the mock supports it)
    req = provider.requests[0]
    assert req.purpose == "structured"
    assert req.tools is None
    assert req.response_format == {"type": "json_object"}
    prompt = req.messages[-1].content
    assert prompt.endswith("Largest city of Norway?")
    assert '"population"' in prompt


def test_instructions_are_prepended() -> None:
    provider = mock(s('{"city": "Oslo", "population": 1}'))
    extract_structured(
        "q?", schema=SCHEMA, instructions="You are a geography expert.", provider=provider
    )
    prompt = provider.requests[0].messages[-1].content
    assert prompt.startswith("You are a geography expert.")
    assert prompt.endswith("q?")


def test_fenced_json_block_is_accepted() -> None:
    reply = 'Sure, here it is:\n\n```json\n{"city": "Bergen", "population": 291000}\n```\nBye.'
    r = extract_structured("q", schema=SCHEMA, provider="mock", provider_opts=script(s(reply)))
    assert r.finish_reason is FinishReason.STOP
    assert r.deliverable == {"city": "Bergen", "population": 291000}
    assert r.text == reply


def test_tilde_fence_is_accepted() -> None:
    reply = '~~~json\n{"city": "Tromsø", "population": 77000}\n~~~'
    r = extract_structured("q", schema=SCHEMA, provider="mock", provider_opts=script(s(reply)))
    assert r.deliverable == {"city": "Tromsø", "population": 77000}


def test_repair_loop_invalid_then_valid(events: Recorder) -> None:
    provider = mock(
        s('{"city": "Oslo", "population": "lots"}'),
        s('{"city": "Oslo", "population": 709000}'),
    )
    r = extract_structured("q", schema=SCHEMA, provider=provider, on_event=events)
    assert r.finish_reason is FinishReason.STOP
    assert r.deliverable == {"city": "Oslo", "population": 709000}
    assert r.llm_calls == 2
    assert r.iterations == 1
    retries = events.of(StructuredRetry)
    assert [x.attempt for x in retries] == [1]
    assert retries[0].error == "population: 'lots' is not of type 'integer'"
    # the second request carries the bad reply and the validation error
    second = provider.requests[1].messages
    assert second[-2].role == "assistant"
    assert second[-2].content == '{"city": "Oslo", "population": "lots"}'
    assert second[-1].role == "user"
    assert "population: 'lots' is not of type 'integer'" in second[-1].content
    assert '"required"' in second[-1].content  # the schema again
    # the retry event comes between the two calls
    i_retry = events.first_index(StructuredRetry)
    call_starts = [i for i, e in enumerate(events) if isinstance(e, CallStarted)]
    assert call_starts[0] < i_retry < call_starts[1]


def test_repair_loop_parse_error_then_valid(events: Recorder) -> None:
    r = extract_structured(
        "q",
        schema=SCHEMA,
        provider="mock",
        on_event=events,
        provider_opts=script(s("I think it's Oslo"), s('{"city": "Oslo", "population": 5}')),
    )
    assert r.finish_reason is FinishReason.STOP
    retries = events.of(StructuredRetry)
    assert len(retries) == 1
    assert "not JSON" in retries[0].error


def test_exhaustion_after_max_retries(events: Recorder) -> None:
    replies = ["nope", '{"city": 1, "population": 2}', '{"city": "X"}', '{"city": "never used"}']
    r = extract_structured(
        "q",
        schema=SCHEMA,
        max_retries=2,
        provider="mock",
        on_event=events,
        provider_opts=script(*(s(x) for x in replies)),
    )
    assert r.finish_reason is FinishReason.ERROR_MAX_STRUCTURED_OUTPUT_RETRIES
    assert r.category.value == "capacity"
    assert r.llm_calls == 3
    assert [x.attempt for x in events.of(StructuredRetry)] == [1, 2]
    diag = r.error_diagnostic
    assert diag is not None
    assert diag["schema"] == SCHEMA
    assert diag["received"] == '{"city": "X"}'
    assert diag["violations"] == [{"reason": "(root): 'population' is a required property"}]
    assert r.halted_reason == "(root): 'population' is a required property"
    assert r.deliverable is None
    assert isinstance(events[-1], Done)


def test_max_retries_zero_means_one_attempt() -> None:
    r = extract_structured(
        "q",
        schema=SCHEMA,
        max_retries=0,
        provider="mock",
        provider_opts=script(s("nope"), s('{"city": "X", "population": 1}')),
    )
    assert r.finish_reason is FinishReason.ERROR_MAX_STRUCTURED_OUTPUT_RETRIES
    assert r.llm_calls == 1


def test_blank_replies_still_end_as_structured_retries() -> None:
    """Each attempt is bounded by max_retries, not by the loop's no-progress guard: five blank
    replies with max_retries=4 are five attempts and a structured-output ending."""
    r = extract_structured(
        "q",
        schema=SCHEMA,
        max_retries=4,
        provider="mock",
        provider_opts=script(*(s("") for _ in range(5))),
    )
    assert r.finish_reason is FinishReason.ERROR_MAX_STRUCTURED_OUTPUT_RETRIES
    assert r.llm_calls == 5


class City(BaseModel):
    city: str
    population: int


def test_pydantic_model_schema_gives_a_model_instance() -> None:
    provider = mock(s('{"city": "Oslo", "population": "709000"}'))
    r = extract_structured("q", schema=City, provider=provider)
    assert r.finish_reason is FinishReason.STOP
    assert isinstance(r.deliverable, City)
    assert r.deliverable == City(city="Oslo", population=709000)
    assert '"population"' in provider.requests[0].messages[-1].content


def test_pydantic_model_repair(events: Recorder) -> None:
    r = extract_structured(
        "q",
        schema=City,
        provider="mock",
        on_event=events,
        provider_opts=script(s('{"city": "Oslo"}'), s('{"city": "Oslo", "population": 3}')),
    )
    assert r.deliverable == City(city="Oslo", population=3)
    assert events.of(StructuredRetry)[0].error == "population: Field required"


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"type": "nonsense"}, r"schema: not a valid JSON Schema"),
        ({"properties": {"a": {"type": 5}}}, r"schema: not a valid JSON Schema"),
        (42, r"schema: pass a JSON Schema dict or a pydantic model class"),
        (dict, r"schema: pass a JSON Schema dict"),
    ],
)
def test_invalid_schema_is_a_config_error(schema: Any, message: str) -> None:
    recorded = Recorder()
    with pytest.raises(ConfigError, match=message):
        extract_structured("q", schema=schema, provider="mock", on_event=recorded)
    assert recorded == []


def test_negative_max_retries_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="max_retries"):
        extract_structured("q", schema=SCHEMA, max_retries=-1, provider="mock")


def test_provider_error_ends_without_retry(events: Recorder) -> None:
    r = extract_structured(
        "q",
        schema=SCHEMA,
        provider="mock",
        on_event=events,
        provider_opts=script(
            error(500, "overloaded", **{"for": "structured"}),
            s('{"city": "Oslo", "population": 1}'),
        ),
    )
    assert r.finish_reason is FinishReason.ERROR_DURING_EXECUTION
    assert r.llm_calls == 1
    assert r.halted_reason == "server_error (HTTP 500): overloaded"
    assert events.of(StructuredRetry) == []


def test_auth_error_in_structured() -> None:
    r = extract_structured(
        "q",
        schema=SCHEMA,
        provider="mock",
        provider_opts=script(error(401, "bad key", **{"for": "structured"})),
    )
    assert r.finish_reason is FinishReason.ERROR_PROVIDER_AUTH


def test_untagged_turns_do_not_serve_structured_calls() -> None:
    # an untagged turn is for main calls; the structured call gets the canned "{}" reply
    r = extract_structured(
        "q",
        schema={"type": "object"},
        provider="mock",
        provider_opts=script(text('{"a": 1}')),
    )
    assert r.finish_reason is FinishReason.STOP
    assert r.deliverable == {}


def test_tools_option_is_ignored_by_extract_structured() -> None:
    provider = mock(s('{"city": "Oslo", "population": 1}'))
    r = extract_structured("q", schema=SCHEMA, provider=provider, tools=["calculator"])
    assert r.finish_reason is FinishReason.STOP
    assert provider.requests[0].tools is None


async def test_async_variant() -> None:
    r = await aextract_structured(
        "q",
        schema=SCHEMA,
        provider="mock",
        provider_opts=script(s('{"city": "Oslo", "population": 1}')),
    )
    assert r.deliverable == {"city": "Oslo", "population": 1}


def test_structured_usage_is_accounted() -> None:
    r = extract_structured(
        "q",
        schema=SCHEMA,
        provider="mock",
        provider_opts=script(
            s("x", usage={"input_tokens": 30, "output_tokens": 2}, cost_usd=0.01),
            s(
                '{"city": "A", "population": 1}',
                usage={"input_tokens": 50, "output_tokens": 9},
                cost_usd=0.02,
            ),
        ),
    )
    assert r.usage.input_tokens == 80
    assert r.usage.output_tokens == 11
    assert r.cost_usd == pytest.approx(0.03)


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ('{"a": 1}', {"a": 1}),
        ("  \n[1, 2]\n ", [1, 2]),
        ('text before\n```json\n{"a": 2}\n```', {"a": 2}),
        ('```\n{"a": 3}\n```', {"a": 3}),
        ('~~~json\n{"a": 4}\n~~~', {"a": 4}),
    ],
)
def test_parse_json_reply(reply: str, value: Any) -> None:
    assert parse_json_reply(reply) == value


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("no json here", "has no fenced"),
        ('```json\n{"a": \n```', "fenced JSON block does not parse"),
    ],
)
def test_parse_json_reply_errors(reply: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_json_reply(reply)


def test_non_object_json_fails_an_object_schema(events: Recorder) -> None:
    r = harness.extract_structured(
        "q",
        schema=SCHEMA,
        max_retries=0,
        provider="mock",
        on_event=events,
        provider_opts=script(s("[1, 2, 3]")),
    )
    assert r.finish_reason is FinishReason.ERROR_MAX_STRUCTURED_OUTPUT_RETRIES
    assert r.error_diagnostic is not None
    assert "is not of type 'object'" in r.error_diagnostic["violations"][0]["reason"]
