"""The suite file's JSON Schema (``harness suites schema``), for editors that validate YAML.

Pydantic writes the schema of the models; the ``expect:`` of a task, which is validated as the
class its ``kind`` names, is written as a ``oneOf`` of every registered grader kind's schema
(built-ins and plug-ins alike), each with its ``kind`` as a constant.
"""

from __future__ import annotations

from typing import Any

from harness.errors import ConfigError
from harness.grading._base import GRADERS
from harness.suites._suite import Suite

__all__ = ["suite_json_schema"]

_REF = "#/$defs/"
_SCALAR = {"type": ["string", "number"]}
_ONE_OR_MANY = {"anyOf": [_SCALAR, {"type": "array", "items": _SCALAR}]}


def suite_json_schema() -> dict[str, Any]:
    """The JSON Schema of a suite file, with one branch per registered grader kind."""
    schema = Suite.model_json_schema(by_alias=True)
    defs: dict[str, Any] = schema.setdefault("$defs", {})
    branches = []
    for kind in GRADERS.names():
        try:
            cls = GRADERS.get(kind)
        except ConfigError:
            continue  # a plug-in that does not load is left out (harness plugins --check says why)
        sub = cls.model_json_schema(by_alias=True, ref_template=_REF + "{model}")
        for name, definition in sub.pop("$defs", {}).items():
            defs.setdefault(name, definition)
        name = f"Grader_{kind}"
        properties = sub.setdefault("properties", {})
        properties["kind"] = {"const": kind, "title": "Kind"}
        if "value" in properties:  # one accepted value or a list; YAML numbers are read as text
            properties["value"] = _ONE_OR_MANY
        sub.setdefault("required", [])
        if "kind" not in sub["required"]:
            sub["required"].insert(0, "kind")
        defs[name] = sub
        branches.append({"$ref": _REF + name})
    defs["Grader"] = {
        "title": "Grader",
        "description": "How a task's run is judged: one of the registered grader kinds.",
        "oneOf": branches,
    }
    for model in ("RunOverrides", "Task"):  # tools: calculator  ==  tools: [calculator]
        for key in ("tools", "until_tool", "interrupt_before"):
            field = defs.get(model, {}).get("properties", {}).get(key)
            if field is not None:
                field["anyOf"] = [{"type": "string"}, *field.get("anyOf", [])]
    # A suite may take its tasks from a task source instead of listing them (bfcl, plug-ins).
    schema.setdefault("properties", {})["source"] = {
        "title": "Source",
        "description": "Tasks from a task source: {kind: NAME, ...the source's options}.",
        "type": "object",
        "properties": {"kind": {"type": "string"}},
        "required": ["kind"],
    }
    schema["required"] = [r for r in schema.get("required", []) if r != "tasks"]
    schema["anyOf"] = [{"required": ["tasks"]}, {"required": ["source"]}]
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "harness suite"
    return schema
