"""The cassette serializer: vcrpy's YAML one, with alias expansion and nesting bounded first
(:mod:`harness._yaml`), so that a hostile cassette fails its own cell with a clear error instead
of taking gigabytes of memory."""

from __future__ import annotations

from typing import Any

from vcr.serializers import yamlserializer  # type: ignore[import-untyped]

from harness._yaml import check_yaml_bounds

__all__ = ["deserialize", "serialize"]


def deserialize(cassette_string: str, source: str = "cassette") -> Any:
    """The cassette's data; ``source`` (its file) is named in a bound's error."""
    check_yaml_bounds(cassette_string, source=source)
    return yamlserializer.deserialize(cassette_string)


def serialize(cassette_dict: dict[str, Any]) -> str:
    return str(yamlserializer.serialize(cassette_dict))
