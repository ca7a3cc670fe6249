"""Run options are declared once, each in one group of harness.kernel._options; RunConfig holds
them flat, the suite overrides take their bounds, and RunOptions (the TypedDict that types
``**options``) is generated from the groups by scripts/run_options.py."""

from __future__ import annotations

import importlib.util
import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType, ModuleType
from typing import Any

import pytest
from pydantic import ValidationError

from harness.errors import ConfigError
from harness.kernel import (
    ConversationOptions,
    LimitOptions,
    RunConfig,
    RunOptions,
    SamplingOptions,
    SetupOptions,
    ToolOptions,
    TracingOptions,
)
from harness.kernel._options import OPTION_GROUPS, parse_options
from harness.suites._suite import RUN_OPTION_KEYS, RunOverrides, Task

ROOT = Path(__file__).resolve().parents[2]

#: Every option's default, as it was when the options were grouped (issue 36): grouping moved
#: declarations and changed no default.
DEFAULTS: dict[str, Any] = {
    "provider": None, "model": None, "provider_opts": {}, "subagent_provider": None,
    "mode": "react", "cwd": None, "workspace_files": None, "session_id": None, "assigns": {},
    "temperature": None, "top_p": None, "seed": None, "max_tokens": None, "stop": None,
    "timeout_s": None, "tool_choice": None, "response_format": None, "examples": None,
    "metadata": {}, "system_prompt": None, "messages": None, "turns": None, "compact_at": 0.6,
    "context_window": None, "reactive_compact": True, "max_iterations": 25,
    "max_consecutive_mistakes": 3, "max_unproductive_iterations": 3, "progress_check": "mode",
    "max_budget_usd": None, "max_steps_per_turn": None, "max_reflections": 3,
    "max_agent_depth": 1, "tools": "all", "allowed_tools": None, "disallowed_tools": None,
    "can_use_tool": None, "hooks": None, "phase": "default", "tool_timeout_s": 60.0,
    "on_tool_timeout": "tell_model",
    "max_concurrency": 4, "until_tool": None, "until_tool_success": True,
    "interrupt_before": None, "on_event": None, "tracer_provider": None,
    "capture_content": None, "trace_attributes": None,
}  # fmt: skip


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "run_options", ROOT / "scripts" / "run_options.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_option_is_declared_in_one_group_and_run_config_declares_none() -> None:
    assert (
        SetupOptions,
        SamplingOptions,
        ConversationOptions,
        LimitOptions,
        ToolOptions,
        TracingOptions,
    ) == OPTION_GROUPS
    declared = [name for group in OPTION_GROUPS for name in vars(group)["__annotations__"]]
    assert len(declared) == len(set(declared)) == 49  # no option in two groups
    assert set(declared) == set(RunConfig.model_fields)  # and none outside a group
    assert "__annotations__" not in vars(RunConfig)
    assert not [
        (a, b) for a in OPTION_GROUPS for b in OPTION_GROUPS if a is not b and issubclass(a, b)
    ]


def test_no_default_changed() -> None:
    config = RunConfig()
    assert {name: getattr(config, name) for name in RunConfig.model_fields} == DEFAULTS


def test_run_options_is_generated_from_the_groups() -> None:
    generated = ROOT / "harness" / "kernel" / "_run_options.py"
    assert generated.read_text(encoding="utf-8") == _script().render(), (
        "run: python scripts/run_options.py"
    )
    assert RunOptions.__optional_keys__ == frozenset(RunConfig.model_fields)


def test_the_generator_names_itself_for_a_type_it_cannot_widen() -> None:
    accepted = _script().accepted
    assert accepted(list[str] | None) == "Sequence[str] | None"
    assert accepted(dict[str, Any]) == "Mapping[str, Any]"
    assert accepted(Path | None) == "str | Path | None"
    with pytest.raises(TypeError, match=r"scripts/run_options\.py"):
        accepted(set[int])


def _caller_values(hint: Any) -> list[Any]:
    """Values of the wider caller's types in ``hint`` (what RunOptions promises beyond what
    the option stores): a tuple for a Sequence, a read-only mapping for a Mapping, a str."""
    members = typing.get_args(hint) if typing.get_origin(hint) is types.UnionType else (hint,)
    values: list[Any] = []
    for member in members:
        origin = typing.get_origin(member)
        if origin is Sequence and typing.get_args(member) == (str,):
            values.append(("a", "b"))
        elif origin is Mapping and typing.get_args(member) == (str, str):
            values.append(MappingProxyType({"a.txt": "x"}))
        elif origin is Mapping:
            values.append(MappingProxyType({"k": 1}))
    return values


_HINTS = typing.get_type_hints(RunOptions)
_WIDE = {
    name: values
    for name, hint in _HINTS.items()
    if name != "hooks" and (values := _caller_values(hint))  # hooks' keys are hook events
}


@pytest.mark.parametrize("name", sorted(_WIDE))
def test_what_run_options_promises_the_options_accept(name: str) -> None:
    for value in _WIDE[name]:
        stored = getattr(parse_options({name: value}), name)
        assert stored == (list(value) if isinstance(value, tuple) else dict(value))


def test_a_path_option_takes_a_string(tmp_path: Path) -> None:
    assert _HINTS["cwd"] == str | Path | None
    assert parse_options({"cwd": str(tmp_path)}).cwd == tmp_path


@pytest.mark.parametrize("key", ["stop", "until_tool", "interrupt_before"])
def test_one_or_many_options_take_a_string(key: str) -> None:
    assert _HINTS[key] == str | Sequence[str] | None
    assert getattr(parse_options({key: "x"}), key) == ["x"]
    assert getattr(parse_options({key: ("x", "y")}), key) == ["x", "y"]


@pytest.mark.parametrize("key", ["provider_opts", "metadata", "assigns"])
def test_mapping_options_take_no_none(key: str) -> None:
    """RunOptions types these as a Mapping without None because the options refuse None."""
    with pytest.raises(ConfigError, match=key):
        parse_options({key: None})
    assert parse_options({key: {"k": 1}}).model_dump()[key] == {"k": 1}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_iterations": 0}, "invalid option max_iterations: Input should be greater than"),
        ({"temperature": 3}, "invalid option temperature: Input should be less than"),
        ({"stop": [1]}, "invalid option stop.0: Input should be a valid string"),
        ({"phase": "x"}, "invalid option phase: Value error, must be one of plan"),
        ({"max_iteration": 5}, "unknown option 'max_iteration'; did you mean 'max_iterations'?"),
    ],
)
def test_errors_name_the_flat_option(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match="^" + message.replace("?", r"\?")):
        parse_options(options)


def test_a_group_validates_its_options_alone() -> None:
    assert LimitOptions(max_iterations=5).max_iterations == 5
    with pytest.raises(ValidationError, match="max_iterations"):
        LimitOptions(max_iterations=0)
    with pytest.raises(ValidationError, match="extra"):
        LimitOptions.model_validate({"temperature": 0.5})  # a sampling option


def test_suite_overrides_take_the_bounds_of_the_options() -> None:
    """A suite field is unset unless given and bounded exactly as its option is: the bounds are
    declared once, in the option's group."""
    bounded = 0
    for name in [*RUN_OPTION_KEYS, "max_steps_per_turn"]:
        suite, option = Task.model_fields[name], RunConfig.model_fields[name]
        assert suite.default is None
        assert _bounds(suite) == _bounds(option), name
        bounded += bool(_bounds(option))
    assert bounded == 9
    assert RunOverrides.model_fields["temperature"].metadata == _bounds(
        Task.model_fields["temperature"]
    )


def _bounds(info: Any) -> list[Any]:
    return [m for m in info.metadata if type(m).__name__ in ("Ge", "Gt", "Le", "Lt")]
