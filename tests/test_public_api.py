"""The public surface: what `import harness` exports, and the README example."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import harness
from harness import events

ROOT = Path(__file__).resolve().parents[1]


def test_all_names_exist_and_are_exported() -> None:
    for name in harness.__all__:
        assert hasattr(harness, name), name
    public = {n for n in dir(harness) if not n.startswith("_")}
    # Subpackages are importable attributes, not API; everything else public must be in __all__.
    packages = {
        "api", "kernel", "modes", "providers", "tools", "errors", "bench", "cli", "telemetry",
        "report", "store", "core", "view", "suites", "grading", "cassettes",
    }  # fmt: skip
    assert public - set(harness.__all__) - packages == set()


def test_every_event_class_is_exported_from_harness_events() -> None:
    for cls in events.event_classes():
        assert getattr(events, cls.__name__) is cls
        assert cls.__dataclass_params__.frozen
        assert hasattr(cls, "__slots__")


def test_errors_form_one_hierarchy() -> None:
    for exc in (harness.ConfigError, harness.ProviderError, harness.ToolError):
        assert issubclass(exc, harness.HarnessError)


@pytest.mark.slow
def test_import_does_not_pull_heavy_dependencies() -> None:
    code = (
        "import sys, harness; "
        "heavy = ('pandas','duckdb','pyarrow','rich','click','jsonschema','httpx','yaml',"
        "'vcr','opentelemetry','ray'); "
        "print(','.join(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


@pytest.mark.slow
def test_readme_example_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, re.DOTALL)
    assert blocks, "the README lost its Python example"
    out = subprocess.run(
        [sys.executable, "-c", blocks[0]], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert "done: stop 2" in out.stdout
    assert "-> exchange_rate {'base': 'EUR', 'quote': 'USD'}" in out.stdout
