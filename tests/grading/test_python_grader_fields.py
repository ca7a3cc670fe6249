"""docs/suites.md lists the fields of the Result a python grader receives: the list is the
class's fields (no more, no fewer), and the one field left out is the one not serialised."""

from __future__ import annotations

import re
from pathlib import Path

from harness import Result
from harness.core._terminations import Category

DOC = Path(__file__).resolve().parents[2] / "docs" / "suites.md"


def _doc_table() -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index("<!-- result fields: start -->")
    end = text.index("<!-- result fields: end -->")
    return text[start:end]


def _documented() -> list[str]:
    return re.findall(r"^\| `([a-z_]+)` \|", _doc_table(), flags=re.M)


def _sent() -> set[str]:
    """The fields that reach the grader: the JSON the grader child rebuilds the Result from."""
    return {name for name, f in Result.model_fields.items() if not f.exclude}


def test_the_doc_lists_every_field_the_grader_gets_and_no_other() -> None:
    documented = _documented()
    assert len(documented) == len(set(documented)), "a field is listed twice"
    assert set(documented) == _sent()


def test_the_fields_left_out_are_the_ones_not_serialised() -> None:
    """What the doc says is not sent (resume_state) is indeed excluded from the JSON."""
    left_out = set(Result.model_fields) - _sent()
    text = DOC.read_text(encoding="utf-8")
    for name in left_out:
        assert f"`{name}` " in text, f"{name} is not sent to the grader: the doc should say so"
    done = Result(finish_reason="stop", category="success", text="42")
    assert set(left_out).isdisjoint(done.model_dump(mode="json"))


def test_the_categories_named_are_the_real_ones() -> None:
    row = next(line for line in _doc_table().splitlines() if line.startswith("| `category`"))
    named = set(re.findall(r"`([a-z]+)`", row.split("|")[3]))
    assert named == {c.value for c in Category}
