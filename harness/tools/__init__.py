"""harness.tools."""
