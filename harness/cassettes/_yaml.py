"""The cassette serializer: vcrpy's YAML one, with alias expansion and nesting bounded first
(:mod:`harness._yaml`), so that a hostile cassette fails its own cell with a clear error instead
of taking gigabytes of memory."""

from __future__ import annotations

import os
from typing import Any

from vcr.serializers import yamlserializer  # type: ignore[import-untyped]

from harness._files import read_regular
from harness._yaml import check_yaml_bounds

__all__ = ["MAX_CASSETTE_BYTES", "deserialize", "read_cassette", "serialize"]

#: The largest cassette file read (one cell's recording; a reply is at most 64 MiB): a sparse
#: 3 GB file was read whole, 6.4 GB and 28 s to replay one cell, and by `cassettes lint` and
#: `cassettes coverage` too (adversary round 22, part B).
MAX_CASSETTE_BYTES = 256 << 20


def read_cassette(path: str | os.PathLike[str]) -> str:
    """The text of the cassette file ``path``: a regular file of at most
    :data:`MAX_CASSETTE_BYTES` (else an ``OSError`` saying so), UTF-8."""
    return read_regular(path, limit=MAX_CASSETTE_BYTES).decode("utf-8")


def deserialize(cassette_string: str, source: str = "cassette") -> Any:
    """The cassette's data; ``source`` (its file) is named in a bound's error."""
    check_yaml_bounds(cassette_string, source=source)
    return yamlserializer.deserialize(cassette_string)


def serialize(cassette_dict: dict[str, Any]) -> str:
    return str(yamlserializer.serialize(cassette_dict))
