"""The harness error hierarchy.

Every error the library raises on purpose derives from :class:`HarnessError`:

- :class:`ConfigError`: bad input detected *before* a run starts (unknown provider, mode or tool,
  an option out of range). ``harness.run`` raises only these; every termination after the loop has
  started is reported in the :class:`~harness.Result` instead.
- :class:`ProviderError`: a provider call failed; ``kind`` says how (see :data:`ErrorKind`).
- :class:`ToolError`: raised by a tool to report a failure to the model as an error result.
"""

from __future__ import annotations

from typing import Literal

__all__ = [
    "ConfigError",
    "ErrorKind",
    "HarnessError",
    "ProviderError",
    "ToolError",
]

ErrorKind = Literal[
    "unauthorized",
    "not_found",
    "rate_limited",
    "timeout",
    "context_length_exceeded",
    "bad_request",
    "server_error",
    "transport",
    "invalid_response",
    "unknown",
]


class HarnessError(Exception):
    """Base class of every error raised by harness."""


class ConfigError(HarnessError, ValueError):
    """Bad configuration, detected before anything ran. The message names the option and the fix."""


class ProviderError(HarnessError):
    """A provider call failed.

    ``kind`` is one of :data:`ErrorKind`; ``status`` is the HTTP status when there was one.
    """

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        status: int | None = None,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.message = message
        self.status = status
        self.retry_after_s = retry_after_s
        #: How many times the call was tried before this error was raised (retries included).
        self.attempts = 1

    @classmethod
    def from_status(cls, status: int, message: str) -> ProviderError:
        """Map an HTTP status (and, for 400s, a context-length message) to an error kind."""
        return cls(kind_from_status(status, message), message, status=status)

    def __str__(self) -> str:
        where = f" (HTTP {self.status})" if self.status is not None else ""
        return f"{self.kind}{where}: {self.message}"

    def __repr__(self) -> str:
        return (
            f"ProviderError(kind={self.kind!r}, status={self.status!r}, message={self.message!r})"
        )


_CONTEXT_MARKERS = (
    "context length",
    "context_length",
    "maximum context",
    "too many tokens",
    "prompt is too long",
    "context window",
    "exceeds the context",
)


def kind_from_status(status: int, message: str = "") -> ErrorKind:
    """HTTP status -> error kind, as DESIGN.md section 3 fixes it."""
    lowered = message.lower()
    if status in (401, 403):
        return "unauthorized"
    if status == 413 or (status in (400, 500) and any(m in lowered for m in _CONTEXT_MARKERS)):
        return "context_length_exceeded"
    if status == 404:
        return "not_found"
    if status == 408:
        return "timeout"
    if status == 429:
        return "rate_limited"
    if 400 <= status < 500:
        return "bad_request"
    if status >= 500:
        return "server_error"
    return "unknown"


class ToolError(HarnessError):
    """Raise inside a tool to return an error result (``is_error=True``) to the model."""
