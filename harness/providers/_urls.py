"""Web addresses without their secrets: :mod:`harness._urls` (a leaf below every layer, so the
telemetry's OTLP endpoint is shown masked too; adversary round 19, part B)."""

from __future__ import annotations

from harness._urls import MASK, masked_text, masked_url, without_password

__all__ = ["MASK", "masked_text", "masked_url", "without_password"]
