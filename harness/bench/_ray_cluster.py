"""Connecting the Ray executor's driver to a Ray cluster, or starting a local one for the run
(:func:`connect`), with one-line errors for a cluster that cannot be reached or started."""

from __future__ import annotations

import contextlib
import signal
import socket
import threading
from typing import Any

from harness.errors import ConfigError, HarnessError

__all__ = ["connect", "first_line"]


class _StoppedWhileStarting(Exception):
    """A SIGTERM arrived while Ray started: the run stops as interrupted."""


def connect(ray: Any, address: str | None) -> bool:
    """Connect to ``address``, or start a local cluster; True when this call started Ray (so
    the run stops it). An unreachable address is bad input (ConfigError naming it).

    ``ray.init`` replaces the process's SIGTERM handler with ``sys.exit``: a SIGTERM (``kill``,
    ``timeout``, ``docker stop``) then ended a Ray run as an executor crash (``the executor
    'ray' raised SystemExit: 15``, its cells errored, exit 3), not as Ctrl-C does (interrupted,
    exit 130, ``--resume``). The handler found is put back once Ray is up; a SIGTERM during
    the start itself (Ray's handler still in place) stops the run as interrupted."""
    if ray.is_initialized():
        return False
    main = threading.current_thread() is threading.main_thread()
    sigterm = signal.getsignal(signal.SIGTERM) if main else None
    try:
        _init(ray, address)
    except SystemExit as exc:
        if exc.code != signal.SIGTERM or not main:
            raise
        with contextlib.suppress(Exception):
            ray.shutdown()
        raise _StoppedWhileStarting from None
    finally:
        if main and sigterm is not None:
            with contextlib.suppress(ValueError, OSError):
                signal.signal(signal.SIGTERM, sigterm)
    return True


def _init(ray: Any, address: str | None) -> None:
    kwargs: dict[str, Any] = {
        "include_dashboard": False,
        "log_to_driver": False,
        "configure_logging": True,
        "logging_level": "warning",
    }
    try:
        if address is None:
            ray.init(address="local", **kwargs)
        else:
            _probe(address)
            ray.init(address=address, **kwargs)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = f"--ray-address {address}" if address else "--executor ray (local cluster)"
        raise ConfigError(
            f"{where}: cannot start or reach Ray: {first_line(exc)}; start a cluster with "
            "`ray start --head` and pass the address it prints"
        ) from None
    except Exception as exc:  # Ray raises a bare Exception when its node does not start in time
        where = f"--ray-address {address}" if address else "--executor ray (local cluster)"
        raise HarnessError(
            f"{where}: Ray did not start: {first_line(exc)} (a loaded machine can make its node "
            "miss Ray's start-up limit); run again, or start a cluster with `ray start --head` "
            "and pass the address it prints with --ray-address"
        ) from None


def _probe(address: str) -> None:
    """Fail fast (Ray retries for a minute) when nothing listens at a ``host:port`` address."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        return  # "auto" and other forms: Ray's own message
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
    except OSError as exc:
        raise ConfigError(
            f"--ray-address {address}: cannot start or reach Ray: nothing answers there "
            f"({exc.strerror or exc}); start a cluster with `ray start --head` and pass the "
            "address it prints"
        ) from None


def first_line(exc: BaseException) -> str:
    """The first line of ``exc``, and of its cause (Ray's ConnectionError hides the reason, an
    authentication error for instance, in ``__cause__``)."""

    def line(e: BaseException) -> str:
        text = str(e).strip()
        return text.splitlines()[0] if text else type(e).__name__

    cause = exc.__cause__
    return f"{line(exc)} ({line(cause)})" if cause is not None else line(exc)
