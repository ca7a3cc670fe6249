"""harness.modes."""
