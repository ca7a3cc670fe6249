"""``extract_structured``'s repair message for a reply with very many schema violations (issue
34, adversary round 21, part A).

``StructuredMode`` sorted every ``jsonschema`` error of the reply to report the first five: a
model's reply of 300,000 wrong items (1.4 MB of JSON) held 1 GB of error objects on the event
loop (6 s), a reply of a few megabytes (a model running on, a hostile server; the reply cap is
64 MiB) more memory than the machine has. The first five are now kept as they come
(``heapq.nsmallest``: the same five, in the same order, as the sort gave)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from harness.kernel._structured import StructuredMode

_CHILD = textwrap.dedent(
    """
    import json, resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (1_500_000_000, 1_500_000_000))
    import harness
    from harness.providers import MockProvider

    reply = json.dumps({"a": ["x"] * 700_000})
    items = {"type": "array", "items": {"type": "integer"}}
    schema = {"type": "object", "properties": {"a": items}}
    result = harness.extract_structured(
        "numbers",
        schema=schema,
        max_retries=0,
        provider=MockProvider(turns=[{"text": reply, "for": "structured"}]),
    )
    print(result.finish_reason.value, result.halted_reason[:60])
    """
)


@pytest.mark.timeout(300)
def test_a_reply_of_many_violations_is_reported_within_memory(tmp_path: Path) -> None:
    script = tmp_path / "many.py"
    script.write_text(_CHILD, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=280
    )
    assert done.returncode == 0, done.stderr[-2000:]
    # on 84cec7a: error_during_execution, "internal error: MemoryError"
    assert done.stdout.startswith(
        "error_max_structured_output_retries a/0: 'x' is not of type 'integer'; a/1:"
    ), done.stdout


def _old_message(mode: StructuredMode, value: Any) -> str:
    errors = sorted(mode._validator.iter_errors(value), key=lambda e: list(e.path))
    return "; ".join(f"{'/'.join(map(str, e.path)) or '(root)'}: {e.message}" for e in errors[:5])


def test_the_five_reported_are_those_the_sort_gave() -> None:
    schema = {
        "type": "object",
        "required": ["z", "a"],
        "properties": {
            "a": {"type": "array", "items": {"type": "integer", "minimum": 3}},
            "b": {"type": "object", "additionalProperties": {"type": "string"}},
            "c": {"enum": [1, 2]},
        },
    }
    mode = StructuredMode(schema)
    rng = random.Random(21)
    pool: list[object] = [0, 5, "s", None, 1.5, [1], {"k": 1}, True]
    for _ in range(500):
        value = {
            "a": [rng.choice(pool) for _ in range(rng.randrange(12))],
            "b": {f"k{i}": rng.choice(pool) for i in range(rng.randrange(8))},
            "c": rng.choice(pool),
        }
        if rng.random() < 0.5:
            del value["a"]
        old = _old_message(mode, value)
        if not old:
            assert mode._check(json.dumps(value)) == value
            continue
        with pytest.raises(ValueError, match=r"\S") as caught:
            mode._check(json.dumps(value))
        assert str(caught.value) == old


@pytest.mark.timeout(60)
def test_a_remote_ref_in_the_schema_is_not_fetched() -> None:
    import socket

    import harness
    from harness.providers import MockProvider

    # A server that accepts and never answers: jsonschema's default registry fetched the $ref
    # with urlopen and no timeout at every attempt: the run held for ever (84cec7a).
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(5)
        port = server.getsockname()[1]
        schema = {
            "type": "object",
            "properties": {"a": {"$ref": f"http://127.0.0.1:{port}/a.json"}},
        }
        reply = {"text": json.dumps({"a": 1}), "for": "structured"}
        result = harness.extract_structured(
            "x", schema=schema, max_retries=0, provider=MockProvider(turns=[reply])
        )
    assert result.finish_reason == "error_during_execution"
    assert f"Unresolvable: http://127.0.0.1:{port}/a.json" in (result.halted_reason or "")
