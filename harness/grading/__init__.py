"""harness.grading: how a cell is judged. One pydantic model per grader kind, the verdict
(:class:`Grade`) and the worker processes that python graders run in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness._exports import lazy_exports

if TYPE_CHECKING:
    from harness.grading._graders import Grade as Grade
    from harness.grading._graders import Grader as Grader
    from harness.grading._graders import grade as grade

#: Each private module and the public names it exports here (``__all__`` derives from it).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "harness.grading._graders": ("Grade", "Grader", "grade"),
}
__all__, __getattr__ = lazy_exports(__name__, _EXPORTS)
