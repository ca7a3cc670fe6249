"""harness.cassettes: recorded provider traffic. The cassette store, the replay transport
(one per cell), the linter and secret scrubbing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness._exports import lazy_exports

if TYPE_CHECKING:
    from harness.cassettes._lint import lint_cassettes as lint_cassettes
    from harness.cassettes._transport import CassetteTransport as CassetteTransport
    from harness.cassettes._transport import cassette_path as cassette_path

#: Each private module and the public names it exports here (``__all__`` derives from it).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "harness.cassettes._lint": ("lint_cassettes",),
    "harness.cassettes._transport": ("CassetteTransport", "cassette_path"),
}
__all__, __getattr__ = lazy_exports(__name__, _EXPORTS)
