"""Every span name, attribute key and span-event name the harness emits, in one place.

The OpenTelemetry GenAI semantic conventions (``gen_ai.*``) are still "development" status and
their names keep moving, so nothing else in the package spells an attribute: the subscriber, the
file exporter's readers and ``harness traces show`` all import the names from here. OpenInference
span kinds (``openinference.span.kind``) ride along so Phoenix renders the tree; project-specific
attributes live under ``harness.*``.

Importing this module imports nothing from OpenTelemetry.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "AGENT",
    "CHAIN",
    "ERROR_TYPE",
    "EVALUATION_NAME",
    "EVENT_CONTENT",
    "EVENT_EVALUATION_RESULT",
    "EVENT_MAX_TOKENS_ESCALATION",
    "EVENT_STRUCTURED_RETRY",
    "EVENT_SUBMITTED",
    "EVENT_THINKING",
    "EVENT_TOOL_UI",
    "EVENT_USAGE",
    "EVENT_WARNING",
    "GEN_AI_AGENT_ID",
    "GEN_AI_AGENT_NAME",
    "GEN_AI_CONVERSATION_ID",
    "GEN_AI_EVALUATION_EXPLANATION",
    "GEN_AI_EVALUATION_NAME",
    "GEN_AI_EVALUATION_SCORE_LABEL",
    "GEN_AI_EVALUATION_SCORE_VALUE",
    "GEN_AI_OPERATION_NAME",
    "GEN_AI_PROVIDER_NAME",
    "GEN_AI_REQUEST_MODEL",
    "GEN_AI_RESPONSE_FINISH_REASONS",
    "GEN_AI_RESPONSE_ID",
    "GEN_AI_RESPONSE_MODEL",
    "GEN_AI_TOOL_CALL_ARGUMENTS",
    "GEN_AI_TOOL_CALL_ID",
    "GEN_AI_TOOL_CALL_RESULT",
    "GEN_AI_TOOL_NAME",
    "GEN_AI_TOOL_TYPE",
    "GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS",
    "GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS",
    "GEN_AI_USAGE_INPUT_TOKENS",
    "GEN_AI_USAGE_OUTPUT_TOKENS",
    "HARNESS_BENCH_RUN_ID",
    "HARNESS_CALL_ATTEMPTS",
    "HARNESS_CALL_INDEX",
    "HARNESS_CALL_PURPOSE",
    "HARNESS_CELL_PASSED",
    "HARNESS_CELL_SCORE",
    "HARNESS_CELL_STATUS",
    "HARNESS_COMPACTION_AFTER_TOKENS",
    "HARNESS_COMPACTION_BEFORE_TOKENS",
    "HARNESS_COMPACTION_DROPPED",
    "HARNESS_COMPACTION_REASON",
    "HARNESS_COMPACTION_STAGES",
    "HARNESS_CONTENT_LENGTH",
    "HARNESS_CONTENT_PURPOSE",
    "HARNESS_CONTENT_TEXT",
    "HARNESS_CONTENT_TRUNCATED",
    "HARNESS_COST_USD",
    "HARNESS_DELIVERABLE",
    "HARNESS_ESCALATION_FROM",
    "HARNESS_ESCALATION_OUTPUT_TOKENS",
    "HARNESS_ESCALATION_REASONING_TOKENS",
    "HARNESS_ESCALATION_TO",
    "HARNESS_GIT_SHA",
    "HARNESS_GRADER_KIND",
    "HARNESS_ITERATION",
    "HARNESS_MODE",
    "HARNESS_REASONING_TOKENS",
    "HARNESS_RETRY_ATTEMPT",
    "HARNESS_RETRY_ERROR",
    "HARNESS_RUN_CATEGORY",
    "HARNESS_RUN_COST_USD",
    "HARNESS_RUN_FINISH_REASON",
    "HARNESS_RUN_HALTED_REASON",
    "HARNESS_RUN_ITERATIONS",
    "HARNESS_RUN_LLM_CALLS",
    "HARNESS_RUN_TOOL_CALLS",
    "HARNESS_SUBAGENT_FINISH_REASON",
    "HARNESS_SUBAGENT_ID",
    "HARNESS_TOOL_PARALLEL",
    "HARNESS_TOOL_UI_KIND",
    "HARNESS_TOOL_UI_PAYLOAD",
    "HARNESS_TURN_ADDED_TOOLS",
    "HARNESS_TURN_FINISH_REASON",
    "HARNESS_TURN_INDEX",
    "HARNESS_TURN_STEPS",
    "HARNESS_UNPRODUCTIVE_ITERATIONS",
    "HARNESS_USAGE_INPUT_TOKENS",
    "HARNESS_USAGE_OUTPUT_TOKENS",
    "HARNESS_WARNING_MESSAGE",
    "HARNESS_WARNING_SOURCE",
    "INPUT_VALUE",
    "LLM",
    "OPENINFERENCE_SPAN_KIND",
    "OP_CHAT",
    "OP_EXECUTE_TOOL",
    "OP_INVOKE_AGENT",
    "OP_PLAN",
    "OUTPUT_VALUE",
    "SCOPE_NAME",
    "SPAN_COMPACTION",
    "SPAN_SUBAGENT",
    "TOOL",
    "TOOL_TYPE_FUNCTION",
    "agent_span_name",
    "chat_span_name",
    "iteration_span_name",
    "plan_span_name",
    "run_attribute_key",
    "tool_span_name",
    "turn_span_name",
]

#: Instrumentation scope name of every harness span.
SCOPE_NAME: Final = "harness"

# --- span names ----------------------------------------------------------------------------------


def agent_span_name(mode: str, task: str | None = None) -> str:
    """The run's root span (GenAI: ``invoke_agent {gen_ai.agent.name}``; the agent is the mode),
    followed by the task when the bench runs one (``invoke_agent react arithmetic/add-2``), so
    that the span lists of Phoenix and Jaeger tell the runs apart."""
    return f"invoke_agent {mode} {task}" if task else f"invoke_agent {mode}"


def turn_span_name(index: int) -> str:
    """A user turn of a conversation (GenAI has no turn operation: a harness CHAIN span that
    carries ``gen_ai.conversation.id``)."""
    return f"turn {index}"


def iteration_span_name(n: int) -> str:
    return f"iteration {n}"


def chat_span_name(model: str | None) -> str:
    """A provider call: ``chat {gen_ai.request.model}`` (``chat`` when the model is unknown)."""
    return f"chat {model}" if model else "chat"


def plan_span_name(mode: str) -> str:
    return f"plan {mode}"


def tool_span_name(tool: str) -> str:
    return f"execute_tool {tool}"


SPAN_COMPACTION: Final = "compaction"
SPAN_SUBAGENT: Final = "invoke_agent subagent"

# --- GenAI semantic conventions (gen_ai.*) ------------------------------------------------------

GEN_AI_OPERATION_NAME: Final = "gen_ai.operation.name"
OP_INVOKE_AGENT: Final = "invoke_agent"
OP_CHAT: Final = "chat"
OP_EXECUTE_TOOL: Final = "execute_tool"
OP_PLAN: Final = "plan"

GEN_AI_AGENT_NAME: Final = "gen_ai.agent.name"
GEN_AI_AGENT_ID: Final = "gen_ai.agent.id"
GEN_AI_CONVERSATION_ID: Final = "gen_ai.conversation.id"
GEN_AI_PROVIDER_NAME: Final = "gen_ai.provider.name"
GEN_AI_REQUEST_MODEL: Final = "gen_ai.request.model"
GEN_AI_RESPONSE_MODEL: Final = "gen_ai.response.model"
GEN_AI_RESPONSE_ID: Final = "gen_ai.response.id"
GEN_AI_RESPONSE_FINISH_REASONS: Final = "gen_ai.response.finish_reasons"
GEN_AI_USAGE_INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS: Final = "gen_ai.usage.cache_read.input_tokens"
GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS: Final = "gen_ai.usage.cache_creation.input_tokens"
GEN_AI_TOOL_NAME: Final = "gen_ai.tool.name"
GEN_AI_TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
GEN_AI_TOOL_TYPE: Final = "gen_ai.tool.type"
TOOL_TYPE_FUNCTION: Final = "function"
#: Opt-in (capture_content): the tool call's JSON arguments and its result text, truncated.
GEN_AI_TOOL_CALL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"
GEN_AI_TOOL_CALL_RESULT: Final = "gen_ai.tool.call.result"
ERROR_TYPE: Final = "error.type"

#: A graded run (a bench cell): the ``gen_ai.evaluation.result`` event on its root span, with
#: these attributes (GenAI evaluation conventions), added when the grade is known
#: (:mod:`harness.telemetry._verdict`).
EVENT_EVALUATION_RESULT: Final = "gen_ai.evaluation.result"
GEN_AI_EVALUATION_NAME: Final = "gen_ai.evaluation.name"
GEN_AI_EVALUATION_SCORE_VALUE: Final = "gen_ai.evaluation.score.value"
GEN_AI_EVALUATION_SCORE_LABEL: Final = "gen_ai.evaluation.score.label"
GEN_AI_EVALUATION_EXPLANATION: Final = "gen_ai.evaluation.explanation"
#: The harness's evaluation name (its score label is the cell status: passed, failed, error).
EVALUATION_NAME: Final = "harness.verdict"

# --- OpenInference (Phoenix) --------------------------------------------------------------------

OPENINFERENCE_SPAN_KIND: Final = "openinference.span.kind"
AGENT: Final = "AGENT"
LLM: Final = "LLM"
TOOL: Final = "TOOL"
CHAIN: Final = "CHAIN"
#: Opt-in (capture_content), on the root span: the prompt and the final answer, truncated.
INPUT_VALUE: Final = "input.value"
OUTPUT_VALUE: Final = "output.value"

# --- harness.* -----------------------------------------------------------------------------------

HARNESS_MODE: Final = "harness.mode"
HARNESS_GIT_SHA: Final = "harness.git_sha"
HARNESS_RUN_FINISH_REASON: Final = "harness.run.finish_reason"
HARNESS_RUN_CATEGORY: Final = "harness.run.category"
HARNESS_RUN_ITERATIONS: Final = "harness.run.iterations"
HARNESS_RUN_COST_USD: Final = "harness.run.cost_usd"
HARNESS_RUN_LLM_CALLS: Final = "harness.run.llm_calls"
HARNESS_RUN_TOOL_CALLS: Final = "harness.run.tool_calls"
HARNESS_RUN_HALTED_REASON: Final = "harness.run.halted_reason"
HARNESS_ITERATION: Final = "harness.iteration"
HARNESS_UNPRODUCTIVE_ITERATIONS: Final = "harness.unproductive_iterations"
HARNESS_TURN_INDEX: Final = "harness.turn.index"
HARNESS_TURN_ADDED_TOOLS: Final = "harness.turn.added_tools"
HARNESS_TURN_STEPS: Final = "harness.turn.steps"
HARNESS_TURN_FINISH_REASON: Final = "harness.turn.finish_reason"
HARNESS_CALL_PURPOSE: Final = "harness.call.purpose"
HARNESS_CALL_INDEX: Final = "harness.call.index"
HARNESS_CALL_ATTEMPTS: Final = "harness.call.attempts"
HARNESS_COST_USD: Final = "harness.cost_usd"
HARNESS_REASONING_TOKENS: Final = "harness.usage.reasoning_tokens"
#: On a Usage span event that has no chat span to sit on (never on the run's root span).
HARNESS_USAGE_INPUT_TOKENS: Final = "harness.usage.input_tokens"
HARNESS_USAGE_OUTPUT_TOKENS: Final = "harness.usage.output_tokens"
HARNESS_TOOL_PARALLEL: Final = "harness.tool.parallel"
HARNESS_COMPACTION_BEFORE_TOKENS: Final = "harness.compaction.before_tokens"
HARNESS_COMPACTION_AFTER_TOKENS: Final = "harness.compaction.after_tokens"
HARNESS_COMPACTION_STAGES: Final = "harness.compaction.stages"
HARNESS_COMPACTION_REASON: Final = "harness.compaction.reason"
HARNESS_COMPACTION_DROPPED: Final = "harness.compaction.dropped_messages"
HARNESS_SUBAGENT_ID: Final = "harness.subagent.id"
HARNESS_SUBAGENT_FINISH_REASON: Final = "harness.subagent.finish_reason"
#: On a bench cell's root span (from the runner's ``trace_attributes``).
HARNESS_BENCH_RUN_ID: Final = "harness.bench.run_id"
#: A bench cell's verdict, flat on its root span for filtering.
HARNESS_CELL_STATUS: Final = "harness.cell.status"
HARNESS_CELL_PASSED: Final = "harness.cell.passed"
HARNESS_CELL_SCORE: Final = "harness.cell.score"
HARNESS_GRADER_KIND: Final = "harness.grader.kind"

# --- span events (point events of the kernel) ---------------------------------------------------

EVENT_CONTENT: Final = "harness.content"
EVENT_THINKING: Final = "harness.thinking"
EVENT_USAGE: Final = "harness.usage"
EVENT_WARNING: Final = "harness.warning"
EVENT_STRUCTURED_RETRY: Final = "harness.structured_retry"
EVENT_MAX_TOKENS_ESCALATION: Final = "harness.max_tokens_escalation"
HARNESS_ESCALATION_FROM: Final = "harness.max_tokens.from"
HARNESS_ESCALATION_TO: Final = "harness.max_tokens.to"
HARNESS_ESCALATION_OUTPUT_TOKENS: Final = "harness.max_tokens.output_tokens"
HARNESS_ESCALATION_REASONING_TOKENS: Final = "harness.max_tokens.reasoning_tokens"
EVENT_SUBMITTED: Final = "harness.submitted"
EVENT_TOOL_UI: Final = "harness.tool_ui"

HARNESS_CONTENT_PURPOSE: Final = "harness.content.purpose"
HARNESS_CONTENT_LENGTH: Final = "harness.content.length"
#: Opt-in (capture_content), truncated to the configured length.
HARNESS_CONTENT_TEXT: Final = "harness.content.text"
HARNESS_CONTENT_TRUNCATED: Final = "harness.content.truncated"
HARNESS_WARNING_MESSAGE: Final = "harness.warning.message"
HARNESS_WARNING_SOURCE: Final = "harness.warning.source"
HARNESS_RETRY_ATTEMPT: Final = "harness.structured.attempt"
HARNESS_RETRY_ERROR: Final = "harness.structured.error"
HARNESS_DELIVERABLE: Final = "harness.submitted.deliverable"
HARNESS_TOOL_UI_KIND: Final = "harness.tool_ui.kind"
HARNESS_TOOL_UI_PAYLOAD: Final = "harness.tool_ui.payload"


def run_attribute_key(key: str) -> str:
    """The root-span key of a bench-supplied trace attribute: ``suite`` -> ``harness.suite``
    (suite, task, mode, provider, epoch...). A key that already has a namespace is kept."""
    return key if "." in key else f"harness.{key}"
