"""harness.kernel: the agent loop, and what a mode or a hook is written against.

The Mode protocol with ``Continue``/``Halt``/``ContextOverflow``, the run ``State``, the model
call (``build_request``, ``call_provider``: counted, priced, budgeted, traced), tool dispatch,
hooks, permissions, compaction and structured output (docs/kernel.md, docs/extending.md); the
run options, each declared once in a group (``SetupOptions``, ``SamplingOptions``,
``ConversationOptions``, ``LimitOptions``, ``ToolOptions``, ``TracingOptions``), held flat by
``RunConfig`` and typed for ``**options`` by ``RunOptions``. The modules are private but one:
``harness.kernel.terminations``, the functions of a finish reason (``category``, ``is_success``,
``is_error``, ``all``) at the path the design contract names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness._exports import lazy_exports

if TYPE_CHECKING:
    from harness.kernel._calls import build_request as build_request
    from harness.kernel._calls import call_provider as call_provider
    from harness.kernel._compaction import compact as compact
    from harness.kernel._dispatch import dispatch as dispatch
    from harness.kernel._hooks import Augment as Augment
    from harness.kernel._hooks import Deny as Deny
    from harness.kernel._hooks import HaltRun as HaltRun
    from harness.kernel._hooks import HookEvent as HookEvent
    from harness.kernel._hooks import HookMatcher as HookMatcher
    from harness.kernel._hooks import Inject as Inject
    from harness.kernel._hooks import Transform as Transform
    from harness.kernel._options import ConversationOptions as ConversationOptions
    from harness.kernel._options import LimitOptions as LimitOptions
    from harness.kernel._options import RunConfig as RunConfig
    from harness.kernel._options import SamplingOptions as SamplingOptions
    from harness.kernel._options import SetupOptions as SetupOptions
    from harness.kernel._options import ToolOptions as ToolOptions
    from harness.kernel._options import TracingOptions as TracingOptions
    from harness.kernel._permissions import Denial as Denial
    from harness.kernel._permissions import Permissions as Permissions
    from harness.kernel._permissions import Phase as Phase
    from harness.kernel._progress import ProgressSnapshot as ProgressSnapshot
    from harness.kernel._progress import normalise_output as normalise_output
    from harness.kernel._replies import emit_text as emit_text
    from harness.kernel._replies import handle_provider_error as handle_provider_error
    from harness.kernel._run_options import RunOptions as RunOptions
    from harness.kernel._state import ContextOverflow as ContextOverflow
    from harness.kernel._state import Continue as Continue
    from harness.kernel._state import Halt as Halt
    from harness.kernel._state import Mode as Mode
    from harness.kernel._state import State as State
    from harness.kernel._structured import parse_json_reply as parse_json_reply
    from harness.kernel._user_turns import UserTurn as UserTurn

#: Each private module and the public names it exports here (``__all__`` derives from it).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "harness.kernel._calls": ("build_request", "call_provider"),
    "harness.kernel._compaction": ("compact",),
    "harness.kernel._dispatch": ("dispatch",),
    "harness.kernel._hooks": (
        "Augment",
        "Deny",
        "HaltRun",
        "HookEvent",
        "HookMatcher",
        "Inject",
        "Transform",
    ),
    "harness.kernel._options": (
        "ConversationOptions",
        "LimitOptions",
        "RunConfig",
        "SamplingOptions",
        "SetupOptions",
        "ToolOptions",
        "TracingOptions",
    ),
    "harness.kernel._permissions": ("Denial", "Permissions", "Phase"),
    "harness.kernel._progress": ("ProgressSnapshot", "normalise_output"),
    "harness.kernel._replies": ("emit_text", "handle_provider_error"),
    "harness.kernel._run_options": ("RunOptions",),
    "harness.kernel._state": ("ContextOverflow", "Continue", "Halt", "Mode", "State"),
    "harness.kernel._structured": ("parse_json_reply",),
    "harness.kernel._user_turns": ("UserTurn",),
}
__all__, __getattr__ = lazy_exports(__name__, _EXPORTS)
