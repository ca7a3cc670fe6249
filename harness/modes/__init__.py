"""harness.modes: the builtin strategies (ReAct, Plan-and-Solve, Reflexion) and ``resolve_mode``.

Subclass or wrap them to write a mode of your own (docs/extending.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness._exports import lazy_exports

if TYPE_CHECKING:
    from harness.modes._base import BUILTIN_MODES as BUILTIN_MODES
    from harness.modes._base import MODES as MODES
    from harness.modes._base import resolve_mode as resolve_mode
    from harness.modes._plan_and_solve import PlanAndSolve as PlanAndSolve
    from harness.modes._react import ReAct as ReAct
    from harness.modes._reflexion import Reflexion as Reflexion

#: Each private module and the public names it exports here (``__all__`` derives from it).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "harness.modes._base": ("BUILTIN_MODES", "MODES", "resolve_mode"),
    "harness.modes._plan_and_solve": ("PlanAndSolve",),
    "harness.modes._react": ("ReAct",),
    "harness.modes._reflexion": ("Reflexion",),
}
__all__, __getattr__ = lazy_exports(__name__, _EXPORTS)
