"""How a run ended, as functions of its finish reason: the path the design contract names
(``harness.kernel.terminations.category(reason)``, ``is_success``, ``is_error``, ``all()``).

This is the one public path of these four functions. The enums they take and return,
:class:`~harness.FinishReason` and :class:`~harness.Category`, are public in :mod:`harness`.
They are defined in the bottom layer (``harness/core/``), because the :class:`~harness.Result`
there needs them, and the kernel may import that layer.
"""

from __future__ import annotations

from harness.core._terminations import all, category, is_error, is_success

__all__ = ["all", "category", "is_error", "is_success"]
