"""The viewer's listening socket, bound before anything heavy is imported, so that a port in use
is reported at once (not after the report stack has loaded)."""

from __future__ import annotations

import errno
import socket

__all__ = ["bind"]


def bind(host: str, port: int) -> socket.socket:
    """A socket listening on ``host:port`` (``port=0``: a free one); OSError when it cannot."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        try:
            sock.bind((host.strip("[]"), port))
        except (TypeError, ValueError) as exc:  # bytes not UTF-8, a label IDNA refuses: a
            raise OSError(  # TypeError traceback, exit 1 ("encoding of hostname failed")
                errno.EINVAL, f"not a host name or address ({exc})"
            ) from None
        sock.listen(128)
        sock.set_inheritable(True)
    except BaseException:
        sock.close()
        raise
    return sock
