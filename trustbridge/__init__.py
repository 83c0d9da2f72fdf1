"""trustbridge: a browser runtime for AI agents — observe a real browser and act in it with
trusted input.

The public Python API (docs/sdk.md)::

    from trustbridge import Browser          # asyncio
    from trustbridge import SyncBrowser      # without asyncio
    from trustbridge import errors           # the protocol's error classes (E.RefNotFound, …)
    from trustbridge import models           # action and result models (ClickAction, …)

Everything the wheel installs lives under this package: ``trustbridge.bridge`` (the hub,
the CLI, the MCP server and the SDK) and ``trustbridge.supervisor`` (the browser launcher
and input driver), so nothing collides with another distribution's top-level ``bridge``
or ``supervisor`` (e.g. PyPI's ``supervisor``, the process control system). A clone keeps
its ``bridge/`` and ``supervisor/`` folders at the top: this package then adds the clone's
root to its ``__path__`` so they import as ``trustbridge.bridge`` and
``trustbridge.supervisor`` (an installed wheel has them inside this folder).

The names below are imported on first use (PEP 562), so ``import trustbridge.supervisor``
in the browser's supervisor process does not load the SDK.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
if not (_HERE / "bridge").is_dir():
    # A clone (or an editable install of one): bridge/ and supervisor/ sit beside this folder.
    __path__.append(str(_HERE.parent))  # noqa: F821 (the package's own __path__)

_SDK = ("ActResult", "ActionLike", "BatchItemLike", "Browser", "InputPath", "MouseButton",
        "NavigateResult", "SessionInfo", "SessionOpenResult", "SessionStopResult",
        "SessionStopped", "SessionTabsResult", "SnapshotResult", "Tab", "TabBusy", "TabClaimed",
        "TabInfo", "TabRef", "TabsResult", "WaitResult", "build_action", "wire_params")
"""bridge/sdk.py's ``__all__`` (tests/packaging/test_namespace.py checks they agree)."""
_SYNC = ("SyncBrowser", "SyncTab")
_MODULES = {"errors": "trustbridge.bridge.protocol.errors",
            "models": "trustbridge.bridge.protocol.models"}

__all__ = [*_SDK, *_SYNC, *_MODULES]


def __getattr__(name: str) -> Any:
    if name in _SDK:
        return getattr(importlib.import_module("trustbridge.bridge.sdk"), name)
    if name in _SYNC:
        return getattr(importlib.import_module("trustbridge.bridge.sync_sdk"), name)
    if name in _MODULES:
        return importlib.import_module(_MODULES[name])
    raise AttributeError(f"module 'trustbridge' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
