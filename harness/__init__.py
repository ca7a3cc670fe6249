"""harness: an observability-first evaluation and benchmarking harness for LLM agent loops.

import harness
result = harness.run("What is 17*23?", provider="mock", tools=["calculator"])
print(result.finish_reason, result.text)
"""

from harness import events
from harness._version import __version__
from harness.api import (
    adiscard,
    aextract_structured,
    aresume,
    arun,
    discard,
    extract_structured,
    resume,
    run,
    warm_up,
)
from harness.core._budget import CallRecord
from harness.core._messages import Message, TokenUsage, ToolCall, ToolResult, UIPayload
from harness.core._result import Result, TurnRecord, UsageTotals
from harness.core._terminations import Category, FinishReason
from harness.errors import ConfigError, HarnessError, ProviderError, ToolError
from harness.kernel._hooks import Augment, Deny, HaltRun, HookEvent, HookMatcher, Inject, Transform
from harness.kernel._permissions import Phase
from harness.kernel._state import Continue, Halt, Mode, State
from harness.kernel._user_turns import UserTurn
from harness.providers._base import Capabilities, Provider, Request, Response
from harness.tools._base import Submit, Tool, ToolContext, ToolOutput, tool

__all__ = [
    "Augment",
    "CallRecord",
    "Capabilities",
    "Category",
    "ConfigError",
    "Continue",
    "Deny",
    "FinishReason",
    "Halt",
    "HaltRun",
    "HarnessError",
    "HookEvent",
    "HookMatcher",
    "Inject",
    "Message",
    "Mode",
    "Phase",
    "Provider",
    "ProviderError",
    "Request",
    "Response",
    "Result",
    "State",
    "Submit",
    "TokenUsage",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolError",
    "ToolOutput",
    "ToolResult",
    "Transform",
    "TurnRecord",
    "UIPayload",
    "UsageTotals",
    "UserTurn",
    "__version__",
    "adiscard",
    "aextract_structured",
    "aresume",
    "arun",
    "discard",
    "events",
    "extract_structured",
    "resume",
    "run",
    "tool",
    "warm_up",
]
