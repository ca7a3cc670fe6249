"""The verdict on one cell (:class:`Grade`): a leaf module every grader kind imports."""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["PASS_THRESHOLD", "Grade", "one_line", "show"]

#: A float score passes at or above this (python graders, judges that give only a score).
PASS_THRESHOLD = 0.5


@dataclass(frozen=True, slots=True)
class Grade:
    """The verdict on one run: passed, a score in [0, 1] and a one-line explanation."""

    passed: bool
    score: float
    explanation: str
    #: The grader itself failed (crashed, timed out, could not be imported): the cell cannot
    #: be scored, which is an ``error`` cell, not a failed one.
    error: bool = False
    #: What grading itself cost (LLM judges), USD: ``results.grading_cost_usd``.
    cost_usd: float = 0.0

    def __post_init__(self) -> None:
        # A plug-in's number is checked and kept as a plain float: a float subclass whose
        # comparisons lie (``__le__`` always true) passed the check and stored a score of 7.0.
        score = _plain(self.score)
        if not (isinstance(score, int | float) and 0.0 <= score <= 1.0):
            raise ValueError(f"score must be a number in [0, 1], got {score!r}")
        cost = _plain(self.cost_usd)
        if not (isinstance(cost, int | float) and 0.0 <= cost < math.inf):
            raise ValueError(
                f"cost_usd must be a finite number of dollars, 0 or more, got {cost!r}"
            )
        object.__setattr__(self, "score", float(score))
        object.__setattr__(self, "cost_usd", float(cost))
        passed: object = self.passed  # a plug-in's: typed bool, may be anything
        if isinstance(passed, str | bytes):  # bool("false") is True
            raise ValueError(f"passed must be True or False, got {passed[:40]!r}")
        object.__setattr__(self, "passed", bool(self.passed))
        object.__setattr__(self, "error", bool(self.error))
        object.__setattr__(self, "explanation", _kept(self.explanation))

    @classmethod
    def of(cls, passed: bool, explanation: str) -> Grade:
        return cls(passed, 1.0 if passed else 0.0, explanation)


def _plain(value: object) -> object:
    """An ``int`` or ``float`` (a subclass too) as a plain ``float``, through the base type's
    own methods; anything else as it is (refused by the caller)."""
    if isinstance(value, bool):
        return float(value)
    try:
        if isinstance(value, int):
            return float(int.__int__(value))
        if isinstance(value, float):
            return float.__float__(value)
    except OverflowError:  # an int past any float: out of every range checked
        return math.inf
    return value


#: The most characters of an explanation kept (its start and its end).
EXPLANATION_LIMIT = 300


def _kept(text: str) -> str:
    """``text`` on one line; past :data:`EXPLANATION_LIMIT`, its start and its end with an
    ellipsis between: the verdict often ends it (a command grader's ```cmd`: exit 1; output:
    ...`` lost its status and output after a command of 300 characters; adversary round 17,
    part B)."""
    flat = one_line(text, math.inf)
    if len(flat) <= EXPLANATION_LIMIT:
        return flat
    head = EXPLANATION_LIMIT // 3
    return f"{flat[:head]}…{flat[len(flat) - (EXPLANATION_LIMIT - head - 1) :]}"


def one_line(text: str, limit: float = 60) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    flat = " ".join((str.__str__(text) if isinstance(text, str) else str(text)).split())
    return flat if len(flat) <= limit else flat[: int(limit) - 1] + "…"


def show(text: str, limit: int = 60) -> str:
    """A short quoted excerpt (the end of a long text, where answers usually are)."""
    flat = " ".join(text.replace("\r", "").replace("\n", "\\n").split())
    if len(flat) > limit:
        flat = "…" + flat[-(limit - 1) :]
    return f"'{flat}'"
