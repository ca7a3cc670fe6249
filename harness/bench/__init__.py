"""harness.bench."""
