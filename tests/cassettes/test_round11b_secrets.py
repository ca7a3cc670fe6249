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


@pytest.mark.parametrize("layers", [17, 40])
def test_layers_split_over_streamed_chunks_leave_no_secret(layers: int) -> None:
    """Round 11 part B left it: the cross-chunk pass stopped after its 16 passes too, and 40
    layers in 7-character chunks left ``xxxxxxxREDACTEDyyyyyyy``. Now a stream still making
    secrets after the passes keeps none of its text (ids and roles stay)."""
    redactor = Redactor([MADE, OTHER])
    text = "model said " + "x" * layers + OTHER + "y" * layers + " then"
    chunks = [{"id": "c1", "choices": [{"index": 0, "delta": {"content": text[i : i + 7]}}]}
              for i in range(0, len(text), 7)]  # fmt: skip
    out = redactor.stream(chunks)
    joined = "".join(c["choices"][0]["delta"]["content"] for c in out)
    assert MADE not in joined, joined
    assert OTHER not in joined
    assert "REDACTED" in joined
    assert [c["id"] for c in out] == ["c1"] * len(chunks)


def test_a_few_layers_over_streamed_chunks_keep_the_text() -> None:
    redactor = Redactor([MADE, OTHER])
    text = "a " + "x" * 3 + OTHER + "y" * 3 + " b"
    chunks = [{"choices": [{"index": 0, "delta": {"content": text[i : i + 5]}}]}
              for i in range(0, len(text), 5)]  # fmt: skip
    joined = "".join(c["choices"][0]["delta"]["content"] for c in redactor.stream(chunks))
    assert joined == "a REDACTED b"
