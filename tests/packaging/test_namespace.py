"""The ``trustbridge`` import namespace (issue 34 item 2): the public API imports as
``trustbridge``, a clone's top-level ``bridge``/``supervisor`` folders are reached only as
``trustbridge.bridge``/``trustbridge.supervisor``, and the old names fail with the new one
in the message. The wheel side (nothing installed outside ``trustbridge/``, PyPI's
``supervisor`` beside it) is tests/packaging/test_wheel.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import trustbridge
from trustbridge.bridge import sdk, sync_sdk

REPO = Path(__file__).resolve().parents[2]


def test_public_names_are_the_sdks() -> None:
    """``from trustbridge import X`` offers exactly the SDK's public names (bridge/sdk.py
    and bridge/sync_sdk.py ``__all__``), the same objects, plus ``errors`` and ``models``."""
    assert set(trustbridge._SDK) == set(sdk.__all__)
    for name in sdk.__all__:
        assert getattr(trustbridge, name) is getattr(sdk, name)
    assert trustbridge.SyncBrowser is sync_sdk.SyncBrowser
    assert trustbridge.errors.RefNotFound.__module__ == "trustbridge.bridge.protocol.errors"
    assert trustbridge.models.ClickAction.__name__ == "ClickAction"
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        trustbridge.nope  # noqa: B018


def python(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter run in ``cwd`` (a clone's root puts its top-level
    folders on sys.path, as a user who runs python there gets)."""
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True,
                          text=True, timeout=60, check=False)


@pytest.mark.loopback
@pytest.mark.parametrize("old", ["bridge.sdk", "bridge.sync_sdk", "supervisor.runner"])
def test_old_names_fail_with_the_new_one(old: str) -> None:
    """In a clone, ``import bridge.sdk`` (the name before issue 34) raises ImportError that
    names ``from trustbridge import Browser``; nothing imports a second copy."""
    done = python(f"import {old}", REPO)
    assert done.returncode == 1
    assert "ImportError" in done.stderr and "from trustbridge import Browser" in done.stderr


@pytest.mark.loopback
def test_supervisor_process_does_not_load_the_sdk() -> None:
    """The browser's supervisor process imports ``trustbridge.supervisor`` without pulling
    the SDK or the MCP server (the package's names are loaded on first use, PEP 562)."""
    done = python("import sys, trustbridge.supervisor.runner; "
                  "print(sorted(m for m in sys.modules if m.startswith(('trustbridge.bridge.sdk', "
                  "'trustbridge.bridge.mcp', 'mcp'))))", Path("/"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
