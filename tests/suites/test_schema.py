"""`harness suites schema`: the JSON Schema accepts every built-in suite file and refuses what
the loader refuses (checked with jsonschema, not with the loader)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar, Literal

import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from harness.cli import main
from harness.grading import GRADERS, Grade, GradeContext, Grader

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    result = CliRunner().invoke(main, ["suites", "schema"])
    assert result.exit_code == 0, result.output
    schema = json.loads(result.output)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("path", sorted((ROOT / "suites").glob("*.yaml")), ids=lambda p: p.name)
def test_every_built_in_suite_validates(validator: Any, path: Path) -> None:
    errors = [e.message for e in validator.iter_errors(yaml.safe_load(path.read_text()))]
    assert errors == []


@pytest.mark.parametrize(
    "expect",
    [
        {"kind": "contains", "valeu": "x"},  # a misspelt field
        {"kind": "contians", "value": "x"},  # an unknown kind
        {"kind": "file_contains", "value": "x"},  # path missing
        {"kind": "command", "command": "true", "value": "y"},  # a field of another kind
    ],
)
def test_bad_graders_are_refused(validator: Any, expect: dict[str, Any]) -> None:
    suite = {"suite": "x", "tasks": [{"id": "a", "prompt": "p", "expect": expect}]}
    assert list(validator.iter_errors(suite))


class _Shout(Grader):
    kind: Literal["shout_schema_test"] = "shout_schema_test"
    reads_answer: ClassVar[bool] = True
    min_bangs: int

    def evaluate(self, result: Any, context: GradeContext) -> Grade:
        return Grade.of(True, "ok")


def test_a_registered_plugin_kind_is_in_the_schema() -> None:
    GRADERS.register("shout_schema_test", _Shout, replace=True)
    result = CliRunner().invoke(main, ["suites", "schema"])
    schema = json.loads(result.output)
    branch = schema["$defs"]["Grader_shout_schema_test"]
    assert branch["properties"]["kind"] == {"const": "shout_schema_test", "title": "Kind"}
    assert "min_bangs" in branch["required"]


def test_the_field_reference_in_docs_is_up_to_date() -> None:
    from harness.suites._reference import BEGIN, END, field_reference

    page = (ROOT / "docs" / "suites.md").read_text(encoding="utf-8")
    block = page.split(BEGIN, 1)[1].split(END, 1)[0]
    assert block.strip() == field_reference().strip(), "run: python scripts/suite_reference.py"


def test_the_complete_suite_at_the_top_of_the_docs_loads(tmp_path: Path) -> None:
    import re

    from harness.suites import load_suite

    page = (ROOT / "docs" / "suites.md").read_text(encoding="utf-8")
    first = re.search(r"```yaml\n(.*?)```", page, re.S)
    assert first is not None
    path = tmp_path / "first.yaml"
    path.write_text(first.group(1))
    suite = load_suite(path)
    assert [t.id for t in suite.tasks] == ["total", "note"]


def test_a_yaml_bomb_in_a_suite_is_bad_input_at_its_line(tmp_path: Path) -> None:
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for prev, name in zip("abcd", "bcde", strict=True):
        lines.append(f"{name}: &{name} [{','.join([f'*{prev}'] * 9)}]")
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join([*lines, "suite: x", ""]))
    result = CliRunner().invoke(main, ["suites", "validate", str(path)])
    assert result.exit_code == 2
    assert f"{path}:5:" in result.stderr
    assert "aliases expand to more than 10,000 nodes" in result.stderr
