"""Matrix expansion: suites x tasks x modes x providers x epochs -> cells.

A cell is one run. Its ``key`` (``suite/task/mode/provider/eN``) identifies it across runs, for
``--resume`` and for comparing a run with a baseline.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.cassettes._transport import cassette_path
from harness.errors import ConfigError
from harness.suites._suite import Suite, Task

__all__ = ["Cell", "expand", "is_mock_provider"]


def is_mock_provider(spec: str) -> bool:
    """Does ``spec`` (``NAME[:MODEL]``) name the in-process mock: ``mock`` itself or a profile
    of ``kind = "mock"`` (which gets the task's mock script too, never a cassette: such a
    profile failed every cell, given a cassette transport the mock does not take)?"""
    if spec.partition(":")[0] == "mock":
        return True
    from harness.providers._profiles import resolve_profile

    try:
        profile, _ = resolve_profile(spec)
    except ConfigError:
        return False
    return profile.kind == "mock"


@dataclass(frozen=True, slots=True)
class Cell:
    suite: Suite
    task: Task
    mode: str
    provider: str
    epoch: int

    @property
    def key(self) -> str:
        return f"{self.suite.suite}/{self.task.id}/{self.mode}/{self.provider}/e{self.epoch}"

    @property
    def is_mock(self) -> bool:
        """The in-process scripted provider: ``mock``, or a profile of ``kind = "mock"``."""
        return is_mock_provider(self.provider)

    def cassette(self, root: Path, *, judge: bool = False) -> Path | None:
        """This cell's cassette file (None for the in-process mock, which makes no HTTP, unless
        ``judge``: a judge grader's calls are recorded for mock cells too)."""
        if self.is_mock and not judge:
            return None
        return cassette_path(
            root, self.suite.suite, self.provider, self.mode, self.task.id, self.epoch
        )


def expand(
    suites: Sequence[Suite],
    modes: Sequence[str],
    providers: Sequence[str],
    epochs: int,
    *,
    tasks: Sequence[str] = (),
) -> list[Cell]:
    """Every cell, in a stable order (suite, task, provider, mode, epoch). ``tasks`` filters by
    task id (glob patterns allowed, e.g. ``mul-*``). A suite's ``extra_modes`` join ``modes``
    for that suite's tasks; its ``only_modes`` leave out the other modes of ``modes``."""
    if epochs < 1:
        raise ConfigError(f"--epochs: must be >= 1, got {epochs}")
    if not modes:
        raise ConfigError("--modes: give at least one mode")
    if not providers:
        raise ConfigError("--providers: give at least one provider")
    cells = [
        Cell(suite, task, mode, provider, epoch)
        for suite in suites
        for task in suite.tasks
        if not tasks or any(fnmatch.fnmatchcase(task.id, pattern) for pattern in tasks)
        for provider in providers
        for mode in suite.modes_for(list(modes))
        for epoch in range(epochs)
    ]
    if not cells:
        if not tasks:  # every suite leaves out every mode asked for (only_modes)
            raise ConfigError(
                f"--modes: no suite runs {', '.join(modes)} (see the suites' only_modes)"
            )
        raise ConfigError(f"--tasks: no task matches {', '.join(tasks)}")
    return cells
