"""The format-neutral pieces of a report: a section and its table."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Section", "Table"]


@dataclass
class Table:
    headers: list[str]
    rows: list[list[str]]
    align: str = ""


@dataclass
class Section:
    key: str
    title: str
    intro: list[str] = field(default_factory=list)
    bullets: list[str] = field(default_factory=list)
    #: Headed items: (a short line shown in bold, the full text beneath it).
    items: list[tuple[str, str]] = field(default_factory=list)
    table: Table | None = None
    outro: list[str] = field(default_factory=list)
