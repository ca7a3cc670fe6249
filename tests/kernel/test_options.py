"""RunConfig is the one source of the run options; RunOptions, the TypedDict that types
``**options``, must name the same keys and type each as the input RunConfig accepts. These tests
fail when one is edited without the other."""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from harness.errors import ConfigError
from harness.kernel._options import ONE_OR_MANY, RunConfig, RunOptions, parse_options


def _members(annotation: Any) -> set[Any]:
    """The members of a union (``X | None`` -> {X, NoneType}), or the annotation alone."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return set(typing.get_args(annotation))
    return {annotation}


def _inputs(field: str, member: Any) -> set[Any]:
    """What a caller may pass for one member of a RunConfig field's type (pydantic coerces a
    sequence into a list, a mapping into a dict, a string into a Path)."""
    accepted = {member}
    origin, args = typing.get_origin(member), typing.get_args(member)
    if origin is list:
        accepted.add(Sequence[args[0]])  # type: ignore[valid-type]
        if field in ONE_OR_MANY and args == (str,):
            accepted.add(str)
    elif origin is dict:
        accepted.add(Mapping[args[0], args[1]])  # type: ignore[valid-type]
    elif member is Path:
        accepted.add(str)
    return accepted


def disagreements(options: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    """Where a TypedDict's annotations (``options``) and a model's field annotations
    (``config``) disagree: a key in one only, a None allowed by one only, a typed-dict member
    that is not an input of any config member, a config member no typed-dict member accepts."""
    problems = [f"{k}: only in RunOptions" for k in options.keys() - config.keys()]
    problems += [f"{k}: only in RunConfig" for k in config.keys() - options.keys()]
    for key in sorted(options.keys() & config.keys()):
        given, declared = _members(options[key]), _members(config[key])
        if Any in given or Any in declared:
            if given != declared:
                problems.append(f"{key}: Any in one only ({options[key]} vs {config[key]})")
            continue
        if (types.NoneType in given) != (types.NoneType in declared):
            problems.append(f"{key}: None allowed by one only ({options[key]} vs {config[key]})")
        inputs = {m: _inputs(key, m) for m in declared}
        for member in given:
            if not any(member in accepted for accepted in inputs.values()):
                problems.append(f"{key}: RunOptions allows {member}, RunConfig has {config[key]}")
        for member, accepted in inputs.items():
            if not accepted & given:
                problems.append(f"{key}: RunConfig's {member} not in RunOptions {options[key]}")
    return problems


def test_run_options_and_run_config_agree() -> None:
    options = typing.get_type_hints(RunOptions)
    config = {name: f.annotation for name, f in RunConfig.model_fields.items()}
    assert disagreements(options, config) == []
    assert RunOptions.__optional_keys__ == frozenset(config)  # every option may be left out


def test_the_check_catches_drift() -> None:
    config = {"a": int, "b": list[str], "c": dict[str, Any], "d": Path | None, "e": Any}
    fine = {"a": int, "b": Sequence[str], "c": Mapping[str, Any], "d": str | Path | None, "e": Any}
    assert disagreements(fine, config) == []
    assert disagreements({**fine, "x": int}, config) == ["x: only in RunOptions"]
    assert disagreements({k: v for k, v in fine.items() if k != "a"}, config) == [
        "a: only in RunConfig"
    ]
    assert disagreements({**fine, "a": float}, config) == [
        "a: RunOptions allows <class 'float'>, RunConfig has <class 'int'>",
        "a: RunConfig's <class 'int'> not in RunOptions <class 'float'>",
    ]
    assert len(disagreements({**fine, "c": Mapping[str, Any] | None}, config)) == 2
    assert len(disagreements({**fine, "b": str | Sequence[str]}, config)) == 1  # not ONE_OR_MANY
    assert len(disagreements({**fine, "e": int}, config)) == 1


@pytest.mark.parametrize("key", ["provider_opts", "metadata", "assigns"])
def test_mapping_options_take_no_none(key: str) -> None:
    """RunOptions types these as a Mapping without None because RunConfig refuses None."""
    with pytest.raises(ConfigError, match=key):
        parse_options({key: None})
    assert parse_options({key: {"k": 1}}).model_dump()[key] == {"k": 1}


@pytest.mark.parametrize("key", ONE_OR_MANY)
def test_one_or_many_options_take_a_string(key: str) -> None:
    assert getattr(parse_options({key: "x"}), key) == ["x"]
    assert getattr(parse_options({key: ("x", "y")}), key) == ["x", "y"]
