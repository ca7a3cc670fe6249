"""Access to the ``bfcl-eval`` package: its modules, its data folder, one clear error when missing.

``bfcl-eval`` is installed pinned and without its dependencies (``pip install --no-deps
bfcl-eval==2026.3.23 mpmath``): its own pins (numpy 1.26, dozens of model SDKs) cannot live beside
the harness. Its AST checker imports ``bfcl_eval.constants.model_config``, which imports every
model handler and their SDKs, only to read ``MODEL_CONFIG_MAPPING[name].underscore_to_dot``; a
stub module under that name (installed here before the first import, unless the real module is
already loaded) makes the checker stdlib-only. The harness passes BFCL's dotted function names to
the checker (mapped back from the renamed tools), so its entry says ``underscore_to_dot=False``.

``bfcl_eval`` ships no type information: everything from it is ``Any`` behind these helpers.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import sys
import threading
import types
from pathlib import Path
from typing import Any

from harness.errors import ConfigError

__all__ = [
    "BFCL_VERSION",
    "CHECKER_MODEL",
    "CLASS_MODULES",
    "INSTALL_COMMAND",
    "bfcl_available",
    "bfcl_module",
    "bfcl_version",
    "data_dir",
]

BFCL_VERSION = "2026.3.23"
INSTALL_COMMAND = f"pip install --no-deps bfcl-eval=={BFCL_VERSION} mpmath"
#: The model name the harness gives BFCL's checkers (its config entry is the stub's).
CHECKER_MODEL = "athena-harness"

#: BFCL's multi-turn classes and the modules that define them.
CLASS_MODULES = {
    name: "bfcl_eval.eval_checker.multi_turn_eval.func_source_code." + module
    for name, module in {
        "GorillaFileSystem": "gorilla_file_system", "MathAPI": "math_api",
        "MessageAPI": "message_api", "TwitterAPI": "posting_api", "TicketAPI": "ticket_api",
        "TradingBot": "trading_bot", "TravelAPI": "travel_booking",
        "VehicleControlAPI": "vehicle_control",
    }.items()
}  # fmt: skip
_MODEL_CONFIG = "bfcl_eval.constants.model_config"
_lock = threading.Lock()


def _missing(exc: ImportError) -> ConfigError:
    what = exc.name or "bfcl_eval"
    return ConfigError(
        f"the BFCL benchmark needs the bfcl-eval package ({what} cannot be imported); "
        f"install it with: {INSTALL_COMMAND}"
    )


def _checker_config() -> Any:
    return types.SimpleNamespace(underscore_to_dot=False)


def _install_model_config_stub() -> None:
    """Put a stub ``bfcl_eval.constants.model_config`` in ``sys.modules`` (unless loaded)."""
    module = sys.modules.get(_MODEL_CONFIG)
    if module is None:
        module = types.ModuleType(_MODEL_CONFIG)
        module.__doc__ = "Stub installed by harness: only MODEL_CONFIG_MAPPING, for the checker."
        module.MODEL_CONFIG_MAPPING = {}  # type: ignore[attr-defined]
        sys.modules[_MODEL_CONFIG] = module
    mapping = getattr(module, "MODEL_CONFIG_MAPPING", None)
    if isinstance(mapping, dict) and CHECKER_MODEL not in mapping:
        mapping[CHECKER_MODEL] = _checker_config()


@functools.cache
def _import(name: str) -> types.ModuleType:
    with _lock:
        try:
            importlib.import_module("bfcl_eval")
            importlib.import_module("mpmath")
        except ImportError as exc:
            raise _missing(exc) from None
        if name.startswith("bfcl_eval.eval_checker"):
            _install_model_config_stub()
        try:
            return importlib.import_module(name)
        except ImportError as exc:
            raise _missing(exc) from None


def bfcl_module(name: str) -> Any:
    """Import ``name`` (a ``bfcl_eval`` module) or raise a :class:`ConfigError` naming the install
    command. Checker modules are imported with the ``model_config`` stub in place."""
    return _import(name)


def bfcl_available() -> bool:
    """Whether ``bfcl_eval`` and ``mpmath`` can be imported (without importing the checkers)."""
    try:
        _import("bfcl_eval")
    except ConfigError:
        return False
    return True


def bfcl_version() -> str:
    """The installed ``bfcl-eval`` version (ConfigError when it is not installed)."""
    try:
        return importlib.metadata.version("bfcl-eval")
    except importlib.metadata.PackageNotFoundError:
        raise ConfigError(
            f"the BFCL benchmark needs the bfcl-eval package; install it with: {INSTALL_COMMAND}"
        ) from None


def data_dir() -> Path:
    """``bfcl_eval/data``: the questions, ``possible_answer/`` and ``multi_turn_func_doc/``."""
    package = _import("bfcl_eval")
    return Path(str(package.__file__)).resolve().parent / "data"
