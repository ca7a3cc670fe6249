"""harness.providers."""
