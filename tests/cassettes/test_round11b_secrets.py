"""A fault found by adversary round 11, part B (issue 34): a secret that meets the placeholder
(``xREDACTEDy``) re-made layer after layer. Fails on the code before the round."""

from __future__ import annotations

import pytest

from harness.cassettes._secrets import Redactor

OTHER = "sk-other-secret-123"
MADE = "xREDACTEDy"


@pytest.mark.parametrize("layers", [17, 40, 2000])
def test_a_secret_remade_by_more_layers_than_the_passes_is_not_left(layers: int) -> None:
    """Before: each pass of the re-scrub peels one layer (``x``*k + another secret + ``y``*k
    becomes ``x``*(k-1) ``REDACTED`` ``y``*(k-1)), and after its 16 passes ``xREDACTEDy``, the
    secret's value, was left in the text (and in bytes). Now such a text is withheld whole."""
    redactor = Redactor([MADE, OTHER])
    text = "model said " + "x" * layers + OTHER + "y" * layers + " then"
    assert MADE not in redactor.text(text)
    assert MADE.encode() not in redactor.data(text.encode())


def test_a_few_layers_are_still_scrubbed_in_place() -> None:
    """Within the passes the text is kept, only the secrets replaced."""
    redactor = Redactor([MADE, OTHER])
    assert redactor.text("a " + "x" * 5 + OTHER + "y" * 5 + " b") == "a REDACTED b"
