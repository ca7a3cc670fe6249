"""``harness plugins``: every registered extension (modes, grader kinds, provider kinds,
executors, task sources, tools), each with where it came from: built in, an installed package's
entry point, or registered in code.

Exit codes: 0 success; 2 when ``--check`` finds an extension that does not load.
"""

from __future__ import annotations

from typing import Any

import click

from harness.cli._common import echo, fail, warn

__all__ = ["COMMANDS", "plugins"]


def registries() -> list[Any]:
    """Every registry, in the order ``harness plugins`` lists them."""
    from harness.bench._executors import EXECUTORS
    from harness.grading._base import GRADERS
    from harness.modes._base import MODES
    from harness.providers._kinds import PROVIDER_KINDS
    from harness.suites._sources import SOURCES
    from harness.tools._registry import TOOLS

    return [MODES, GRADERS, PROVIDER_KINDS, EXECUTORS, SOURCES, TOOLS]


@click.command("plugins")
@click.option("--check", is_flag=True, help="Import every extension; exit 2 if one fails.")
def plugins(check: bool) -> None:
    """List every registered mode, grader kind, provider kind, executor, task source and tool,
    with its target and where it came from. Plug-ins join by entry points (groups
    harness.modes, harness.graders, harness.providers, harness.executors, harness.sources,
    harness.tools); anything can also be named as package.module:attr."""
    from harness.errors import ConfigError

    problems = []
    for registry in registries():
        echo(f"{registry.kind}s ({registry.group}):")
        for info in registry.infos():
            status = ""
            if check:
                try:
                    registry.get(info.name)
                except ConfigError as exc:
                    status = "  [does not load]"
                    problems.append(f"{registry.kind} {info.name!r}: {exc}")
            echo(f"  {info.name:<18} {info.target:<52} {info.origin}{status}")
    if problems:  # one line each
        for problem in problems[:-1]:
            warn(problem)
        fail(problems[-1])


COMMANDS = [plugins]
