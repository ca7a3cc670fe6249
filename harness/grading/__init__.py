"""harness.grading: how a cell is judged. One pydantic model per grader kind (:class:`Grader`
subclasses, registered in :data:`GRADERS`), the verdict (:class:`Grade`), :func:`agrade` (and
its synchronous :func:`grade`), and the worker processes that python graders run in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness._exports import lazy_exports

if TYPE_CHECKING:
    from harness.grading._answer import final_answer as final_answer
    from harness.grading._base import GRADERS as GRADERS
    from harness.grading._base import GradeContext as GradeContext
    from harness.grading._base import Grader as Grader
    from harness.grading._base import agrade as agrade
    from harness.grading._base import grade as grade
    from harness.grading._base import parse_grader as parse_grader
    from harness.grading._grade import PASS_THRESHOLD as PASS_THRESHOLD
    from harness.grading._grade import Grade as Grade

#: Each private module and the public names it exports here (``__all__`` derives from it).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "harness.grading._answer": ("final_answer",),
    "harness.grading._base": (
        "GRADERS",
        "GradeContext",
        "Grader",
        "agrade",
        "grade",
        "parse_grader",
    ),
    "harness.grading._grade": ("PASS_THRESHOLD", "Grade"),
}
__all__, __getattr__ = lazy_exports(__name__, _EXPORTS)
