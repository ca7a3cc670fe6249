"""Which text fields of a streamed body are one reply (used by
:meth:`harness.cassettes._secrets.Redactor.stream` to cut a key split between a reply's
reasoning and its answer)."""

from __future__ import annotations

from harness.cassettes._scrubparts import Place

__all__ = ["OneReply"]


class OneReply:
    """A text field's parent place with the event's own ``index`` left out: an Anthropic event
    (``content_block_delta``) names its content block by an ``index`` at its top, so a
    message's thinking block and its text block were two replies, and a key begun in one and
    ended in the other was left in halves in the cassette. OpenAI's choices keep their index
    (below the top: each is a reply of its own). A whole message's ``content`` blocks (a reply
    not streamed) are one reply too (adversary round 22, part A). Each place is rewritten once
    (memoised by the place, whose parents are shared): linear in the chunks, at any depth."""

    __slots__ = ("_done",)

    def __init__(self) -> None:
        self._done: dict[int, tuple[Place, Place]] = {}  # id(place) -> (place, rewritten)

    def __call__(self, place: Place) -> Place:
        chain: list[Place] = []
        node = place
        while node and id(node) not in self._done:
            chain.append(node)
            node = node[0]
        top: Place = self._done[id(node)][1] if node else ()
        for level in reversed(chain):
            outer, key = level
            event_index = not outer and type(key) is str and key.startswith("#")
            block = type(key) is int and bool(outer) and outer[1] == "content"  # a message's
            if event_index or block:
                key = "#"
            top = (top, key)
            self._done[id(level)] = (level, top)  # the place kept: its id stays its own
        return top
