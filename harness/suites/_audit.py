"""``harness suites audit``: find tasks that a model passes without doing the work.

Every task is run (mode ``react``, the scripted mock provider) against four adversaries and
graded with the task's own grader:

- ``do-nothing``: one reply, "I don't know.", whatever it is asked;
- ``empty-args``: calls each of the task's tools once with empty arguments, then says
  "I don't know.";
- ``echo``: answers with the task's prompt, word for word;
- ``empty-args-echo``: the empty calls, then the prompt as its answer;
- ``one-empty-call``: one tool at a time (a run per tool), a single call with empty arguments,
  then the prompt as its answer (one call is what a scripted reviewer's decision can complete);
- the trick models of :mod:`harness.suites._tricks`: ``give-up-phrases`` (empty calls, then
  failure phrases), ``read-echo`` (reads the files the prompt names and answers with them),
  ``short-echo`` (the prompt in pieces under 12 characters), ``not-x`` ("It is not X; the
  answer is X+1", X from the mock script) and ``unit-swap`` (the answer's number in another
  unit). A trick that does not apply to a task (no file named, no short scripted answer, no
  unit in the prompt) is counted in ``AuditReport.skipped``.

The task's scripted reviewer (``approvals:``) answers the adversaries' paused calls as it would
a model's, so a reviewer's edit that does the work is caught too.

Graders run as in ``harness run`` (``command`` graders in the sandbox), except that a ``judge``
never reaches the network: it gets an empty replay-only cassette, so a judged task does not pass.

A task that either adversary passes measures something other than the model (a grader that
accepts a bare ending, a file that already holds the answer, the kernel's own loop guard). It is
listed, and the audit fails, unless the task says ``audit: {allow: true, reason: ...}``.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness._files import remove_tree
from harness.api import arun
from harness.cassettes._transport import CassetteTransport
from harness.grading import Grade, agrade
from harness.suites._approvals import apply_approvals
from harness.suites._suite import Suite, Task
from harness.suites._tricks import TRICKS, trick_turns

__all__ = ["ADVERSARIES", "AuditFinding", "AuditReport", "audit_suites"]

GIVE_UP = "I don't know."
ADVERSARIES = ("do-nothing", "empty-args", "echo", "empty-args-echo", "one-empty-call", *TRICKS)


@dataclass(frozen=True, slots=True)
class AuditFinding:
    """A task one adversary passed."""

    suite: str
    task_id: str
    adversary: str
    explanation: str
    allowed: bool
    reason: str | None = None


@dataclass
class AuditReport:
    tasks: int = 0
    #: adversary -> how many tasks it passed (allowed ones included).
    passed: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ADVERSARIES, 0))
    findings: list[AuditFinding] = field(default_factory=list)
    #: adversary -> how many tasks it does not apply to (a trick with nothing to try there).
    skipped: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ADVERSARIES, 0))

    @property
    def failing(self) -> list[AuditFinding]:
        """Findings not excused by ``audit: allow``: each one fails the audit."""
        return [f for f in self.findings if not f.allowed]

    @property
    def exit_code(self) -> int:
        return 1 if self.failing else 0


def _turns(adversary: str, tools: Sequence[str], prompt: str) -> list[dict[str, Any]]:
    answer = {"text": prompt if adversary.endswith(("echo", "call")) else GIVE_UP}
    if not adversary.startswith(("empty-args", "one-empty-call")):
        return [answer]
    ordered = sorted(tools, key=lambda t: t == "finish")  # finish (which ends the run) last
    calls = [{"name": t, "arguments": {}} for t in ordered]
    return [{"tool_calls": calls}, answer] if calls else [answer]


def _tool_names(task: Task) -> list[str]:
    from harness.tools._registry import resolve_tools

    tools = task.run_options().get("tools")
    if not tools:
        return []
    return [t.name for t in resolve_tools(tools)]


async def _attempt(
    task: Task, adversary: str, tools: Sequence[str], turns: list[dict[str, Any]] | None = None
) -> Grade:
    workspace = Path(tempfile.mkdtemp(prefix="harness-audit-"))
    try:
        options = task.run_options()
        options.pop("max_budget_usd", None)
        result = await arun(
            task.prompt,
            provider="mock",
            mode="react",
            cwd=workspace,
            provider_opts={
                "turns": turns if turns is not None else _turns(adversary, tools, task.prompt),
                "when_exhausted": "repeat_last",
            },
            **options,
        )
        result = await apply_approvals(task, result)
        # A judge never reaches the network here: an empty replay-only cassette answers it
        # with a miss, so a judged task does not pass (its grade is an error).
        offline = CassetteTransport(workspace / ".audit-judge.yaml", record_mode="none")
        return await agrade(
            task.expect,
            result,
            workspace,
            grade_on_error=task.grade_on_error,
            cassette=offline,
        )
    finally:
        remove_tree(workspace)


async def _against(task: Task, adversary: str, tools: Sequence[str]) -> tuple[Grade | None, str]:
    """The first passing grade of ``adversary`` on ``task`` (None: it passed nothing), and the
    adversary's label (``one-empty-call:TOOL`` names the tool). Raises LookupError when the
    adversary is a trick that does not apply to the task."""
    if adversary in TRICKS:
        turns = trick_turns(adversary, task, tools)
        if turns is None:
            raise LookupError(adversary)
        verdict = await _attempt(task, adversary, tools, turns)
        return (verdict if verdict.passed else None), adversary
    if adversary != "one-empty-call":
        verdict = await _attempt(task, adversary, tools)
        return (verdict if verdict.passed else None), adversary
    for tool in tools:
        verdict = await _attempt(task, adversary, [tool])
        if verdict.passed:
            return verdict, f"{adversary}:{tool}"
    return None, adversary


async def _audit(suites: Sequence[Suite]) -> AuditReport:
    report = AuditReport()
    for suite in suites:
        for task in suite.tasks:
            report.tasks += 1
            tools = _tool_names(task)
            for adversary in ADVERSARIES:
                try:
                    verdict, label = await _against(task, adversary, tools)
                except LookupError:
                    report.skipped[adversary] += 1
                    continue
                if verdict is None:
                    continue
                report.passed[adversary] += 1
                policy = task.audit
                excused = policy is not None and policy.allow and policy.excuses(adversary)
                report.findings.append(
                    AuditFinding(
                        suite.suite,
                        task.id,
                        label,
                        verdict.explanation,
                        allowed=excused,
                        reason=policy.reason if policy is not None else None,
                    )
                )
    return report


def audit_suites(suites: Sequence[Suite]) -> AuditReport:
    """Run every task of ``suites`` against every adversary (see the module docstring)."""
    return asyncio.run(_audit(suites))
