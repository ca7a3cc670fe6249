"""One error tree: every exception of the package is a HarnessError importable from
``harness.errors``, drawn in its docstring, and pickles; no class shadows a builtin; the old
``Warning`` event name still imports, with a DeprecationWarning."""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import pickle
import pkgutil
import typing
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import harness
import harness.errors as errors
from harness.errors import HarnessError

PACKAGE = Path(harness.__file__).resolve().parent

# Instances for classes whose constructor takes more than a message. A new class with its own
# __init__ fails test_every_error_pickles until it gets a sample here.
SAMPLES: dict[str, Callable[[], BaseException]] = {
    "ProviderError": lambda: _attempted(
        errors.ProviderError("rate_limited", "slow down", status=429, retry_after_s=1.5)
    ),
    "YAMLSyntaxError": lambda: errors.YAMLSyntaxError("found a tab", 3, 7),
    "SuiteError": lambda: errors.SuiteError([f"s.yaml:{i}: bad" for i in range(25)]),
    "StoreLocked": lambda: errors.StoreLocked("held by another writer", pid=4242),
}


def _attempted(exc: errors.ProviderError) -> errors.ProviderError:
    exc.attempts = 3
    return exc


def _harness_modules() -> Iterator[str]:
    yield "harness"
    for info in pkgutil.walk_packages(harness.__path__, "harness."):
        yield info.name


def _package_exceptions() -> set[type[BaseException]]:
    """Every public exception class defined in a harness module (imports every module)."""
    found: set[type[BaseException]] = set()
    for name in _harness_modules():
        module = importlib.import_module(name)
        for obj in vars(module).values():
            if (
                inspect.isclass(obj)
                and issubclass(obj, BaseException)
                and obj.__module__.split(".")[0] == "harness"
                and not obj.__name__.startswith("_")
            ):
                found.add(obj)
    return found


def _subclasses(cls: type[HarnessError]) -> set[type[HarnessError]]:
    out: set[type[HarnessError]] = set()
    for sub in cls.__subclasses__():
        out |= {sub} | _subclasses(sub)
    return out


def _all_harness_errors() -> list[type[HarnessError]]:
    _package_exceptions()  # import every module, so every subclass is defined
    classes = {HarnessError} | _subclasses(HarnessError)
    return sorted(
        (c for c in classes if c.__module__.split(".")[0] == "harness"), key=lambda c: c.__name__
    )


def test_every_exception_of_the_package_is_in_the_tree() -> None:
    classes = _package_exceptions()
    assert len(classes) >= 15  # HarnessError and the 14 below it today
    for cls in classes:
        assert issubclass(cls, HarnessError), f"{cls.__module__}.{cls.__name__}"
        assert getattr(errors, cls.__name__, None) is cls, f"harness.errors lacks {cls.__name__}"
        assert cls.__name__ in errors.__all__


def test_the_docstring_draws_every_class() -> None:
    doc = errors.__doc__ or ""
    tree = doc[doc.index("HarnessError\n") :]
    for cls in _all_harness_errors():
        assert f" {cls.__name__}" in tree or cls is HarnessError, cls.__name__
        for base in cls.__bases__:
            if issubclass(base, HarnessError) and base is not HarnessError:
                # A subclass is drawn below its parent.
                assert tree.index(base.__name__) < tree.index(cls.__name__), cls.__name__


def test_old_import_paths_still_work() -> None:
    from harness.cassettes._store import CassetteCorrupt, CassetteError, CassetteMiss
    from harness.kernel._compaction import CompactionError
    from harness.modes._base import ContextOverflow
    from harness.report._tables import ReportInputError
    from harness.suites._suite import MAX_ERRORS, SuiteError
    from harness.suites._yaml_nodes import YAMLSyntaxError

    moved: tuple[type[Exception], ...]
    moved = (CassetteCorrupt, CassetteError, CassetteMiss, SuiteError, YAMLSyntaxError)
    moved += (CompactionError, ContextOverflow, ReportInputError)
    for cls in moved:
        assert getattr(errors, cls.__name__) is cls
    assert SuiteError.max_shown == MAX_ERRORS


def test_yaml_syntax_error_is_still_a_value_error() -> None:
    from harness.suites._yaml_nodes import parse_yaml

    with pytest.raises(ValueError, match="found character") as info:
        parse_yaml("a:\n\tb: 1\n")
    assert isinstance(info.value, errors.ConfigError)
    assert (info.value.line, info.value.column) == (2, 1)  # type: ignore[attr-defined]


def _sample(cls: type[HarnessError]) -> BaseException:
    if cls.__name__ in SAMPLES:
        return SAMPLES[cls.__name__]()
    try:
        return cls("something went wrong")
    except TypeError:
        pytest.fail(f"{cls.__name__} takes other arguments: add a sample to SAMPLES")


def _looks(exc: BaseException) -> tuple[Any, ...]:
    return type(exc), exc.args, str(exc), repr(exc), vars(exc)


@pytest.mark.parametrize("cls", _all_harness_errors(), ids=lambda c: c.__name__)
def test_every_error_pickles(cls: type[HarnessError]) -> None:
    exc = _sample(cls)
    assert type(exc) is cls
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        back = pickle.loads(pickle.dumps(exc, protocol=protocol))
        assert _looks(back) == _looks(exc)


def test_pickled_errors_keep_their_details() -> None:
    e = pickle.loads(pickle.dumps(SAMPLES["ProviderError"]()))
    assert (e.kind, e.status, e.retry_after_s, e.attempts, e.message) == (
        "rate_limited",
        429,
        1.5,
        3,
        "slow down",
    )
    assert str(e) == "rate_limited (HTTP 429): slow down"
    s = pickle.loads(pickle.dumps(SAMPLES["SuiteError"]()))
    assert len(s.issues) == 25
    assert str(s).endswith("... and 5 more errors")
    with pytest.raises(errors.ConfigError):
        raise pickle.loads(pickle.dumps(errors.ConfigError("bad")))


def test_no_class_shadows_a_builtin() -> None:
    names = set(dir(builtins))
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name in names:
                bad.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {node.name}")
    assert bad == []


@pytest.mark.parametrize("module", ["harness.events"])
def test_warning_event_is_a_deprecated_alias_of_run_warning(module: str) -> None:
    mod = importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match="use RunWarning"):
        alias = mod.Warning
    assert alias is mod.RunWarning
    assert "Warning" not in mod.__all__
    with pytest.raises(AttributeError):
        _ = mod.NoSuchEvent
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exec(f"from {module} import RunWarning", {})  # the new name does not warn


def test_warning_alias_works_as_a_from_import() -> None:
    with pytest.warns(DeprecationWarning, match="harness.events.Warning is deprecated") as seen:
        from harness.events import Warning as Old
    from harness.events import RunWarning

    assert Old is RunWarning
    assert seen[0].filename == __file__  # the warning points at the importing line
    assert RunWarning("careful").source == "kernel"


def test_every_http_status_maps_to_a_declared_error_kind() -> None:
    """``kind_from_status`` answers only kinds of ``ErrorKind`` (what code matching on
    ``ProviderError.kind`` can rely on), and ``ProviderError.from_status`` keeps the status."""
    kinds = set(typing.get_args(errors.ErrorKind))
    seen = {errors.kind_from_status(status, "") for status in range(100, 600)}
    seen.add(errors.kind_from_status(400, "maximum context length exceeded"))
    assert seen <= kinds
    assert {"unauthorized", "not_found", "timeout", "rate_limited", "bad_request"} <= seen
    assert {"server_error", "context_length_exceeded", "unknown"} <= seen
    err = errors.ProviderError.from_status(429, "slow down")
    assert (err.kind, err.status) == ("rate_limited", 429)
