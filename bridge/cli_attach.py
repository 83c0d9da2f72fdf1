"""The CLI of a person's own browser (docs/attach.md, issue 17 item 3).

Commands:
    extension   the folder to load unpacked (Chromium) or as a temporary add-on (Firefox)
    pair        a one-time code for the extension's options page (``pairing.create``)
    attach      trusted input in that browser: an input driver attached over CDP

``pair`` is a client command (``--bridge``, ``--token-file``, ``--json`` as every other);
its ``--device`` is the name the paired browser gets. ``attach`` stays in the foreground
until Ctrl-C or until the browser closes; while it runs the device's input is trusted,
and once it is gone that input fails TRUSTED_INPUT_UNAVAILABLE (never synthetic).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from . import config
from .protocol import errors as E

__all__ = ["add_commands"]

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_NO_BRIDGE = 0, 1, 2, 3


def _say(msg: str) -> None:
    print(f"trustbridge: {msg}", file=sys.stderr, flush=True)


# -- extension --------------------------------------------------------------------------


def extension_steps(folder: str) -> str:
    """What ``trustbridge extension`` prints: the folder and how each browser loads it."""
    return f"""The trustbridge extension (built) is in:

  {folder}

Chromium / Chrome for Testing:
  1. open chrome://extensions and switch on "Developer mode" (top right);
  2. "Load unpacked" and choose the folder above;
  3. trustbridge → "Details" → "Extension options", and pair it (run `trustbridge pair`).
  Or start it with the extension: chromium --user-data-dir=DIR --load-extension={folder}
  (Google Chrome 137 and later ignores --load-extension: use "Load unpacked" there.)

Firefox:
  1. open about:debugging#/runtime/this-firefox;
  2. "Load Temporary Add-on…" and choose {folder}/manifest.json
     (a temporary add-on is removed when Firefox quits: load it again after a restart);
  3. about:addons → trustbridge → "Preferences"/"Options", and pair it.

Unpaired, the extension connects to nothing. Trusted input needs a Chromium started
with --remote-debugging-port and `trustbridge attach --cdp` (docs/attach.md)."""


def _cmd_extension(args: argparse.Namespace) -> int:
    from trustbridge.supervisor.extension_copy import extension_source

    try:
        folder = extension_source()
    except E.TrustbridgeError as err:
        print(f"error: {err.message}", file=sys.stderr)
        return EXIT_ERROR
    print(str(folder) if args.path_only else extension_steps(str(folder)))
    return EXIT_OK


# -- pair -------------------------------------------------------------------------------


async def _pair(args: argparse.Namespace, browser: Any, _tab: Any) -> dict[str, Any]:
    params = {"device": args.device} if args.device else {}
    return await browser.client.call("pairing.create", params)


def pair_human(args: argparse.Namespace, result: dict[str, Any]) -> str:
    """The human output of ``trustbridge pair`` (``--json`` prints ``result``)."""
    url = args.bridge or (config.read_endpoint() or {}).get("url") \
        or config.connect_url(config.DEFAULT_HOST, config.DEFAULT_PORT)
    minutes = round(int(result.get("expiresInMs", 0)) / 60000)
    return (f"pairing code: {result.get('code')}\n"
            f"device: {result.get('device')} (valid {minutes} min, once)\n"
            f"In the browser: the trustbridge extension's options page (chrome://extensions → "
            f"trustbridge → Details → Extension options; Firefox: about:addons → trustbridge "
            f"→ Options). Bridge URL: {url}  Code: {result.get('code')}")


# -- attach -----------------------------------------------------------------------------


def cdp_warning(cdp: str) -> str | None:
    """The warning ``attach`` prints for a DevTools endpoint beyond loopback, else None."""
    host = urlsplit(cdp).hostname or ""
    if config.is_loopback_host(host):
        return None
    return (f"WARNING: {host} is not this machine: a DevTools endpoint has no password, "
            "and whoever reaches it drives that browser (docs/attach.md).")


async def _attach(args: argparse.Namespace) -> int:
    from trustbridge.supervisor.attach import Attached

    from .cli import _bridge_token, _Refused, error_text

    try:
        from .client import resolve_endpoint

        url, token = resolve_endpoint(args.bridge, _bridge_token(args))
    except _Refused as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except E.DeviceNotConnected as err:
        print(f"error: {err.message}", file=sys.stderr)
        return EXIT_NO_BRIDGE
    except E.TrustbridgeError as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_ERROR
    if (warning := cdp_warning(args.cdp)) is not None:
        _say(warning)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    attached = Attached(args.cdp, url, token, args.device)
    try:
        await attached.start()
    except E.TrustbridgeError as err:
        await attached.stop()
        print(error_text(err), file=sys.stderr)
        return EXIT_ERROR
    _say(f"attached: device {attached.device} takes trusted input through {args.cdp} "
         f"(bridge {url}). Ctrl-C detaches; the browser stays open, and its input then "
         "fails TRUSTED_INPUT_UNAVAILABLE until you attach again.")
    waiters = [asyncio.create_task(stop.wait()), asyncio.create_task(attached.gone.wait())]
    await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    for waiter in waiters:
        waiter.cancel()
    gone = attached.gone.is_set() and not stop.is_set()
    with contextlib.suppress(Exception):
        await attached.stop()
    if gone:
        _say("the browser closed (or its DevTools connection dropped); detached")
        return EXIT_ERROR
    _say("detached; the browser stays open")
    return EXIT_OK


def _cmd_attach(args: argparse.Namespace) -> int:
    return asyncio.run(_attach(args))


# -- registration -----------------------------------------------------------------------


def add_commands(sub: Any, client: Callable[[str, str, Any], argparse.ArgumentParser],
                 token_file_help: str) -> None:
    """Register ``extension``, ``pair`` and ``attach`` with cli.py's subparsers and its
    client-command helper. ``extension`` and ``attach`` set ``standalone`` (the function
    cli.py's ``main`` runs instead of a client call)."""
    ext = sub.add_parser("extension", help="where the built extension is, and how to load "
                         "it into your own Chromium or Firefox")
    ext.add_argument("--path", dest="path_only", action="store_true",
                     help="print only the folder")
    ext.set_defaults(standalone=_cmd_extension)

    pair = client("pair", "a one-time code (8 characters, 5 minutes, single use) that pairs "
                  "the extension in your own browser with this bridge; --device NAME is the "
                  "name it gets (default browser-N; pairing a name again replaces it)", _pair)
    pair.set_defaults(human=pair_human)

    att = sub.add_parser(
        "attach", help="trusted input in your own Chromium: an input driver over CDP",
        description="Attach an input driver to a Chromium you started with "
        "--remote-debugging-port (and a non-default --user-data-dir) with the paired "
        "trustbridge extension loaded. Nothing is launched; Ctrl-C detaches and leaves the "
        "browser open. Anyone who can reach that port drives the browser: docs/attach.md.")
    att.add_argument("--cdp", required=True, metavar="URL",
                     help="the browser's DevTools endpoint, e.g. http://127.0.0.1:9222")
    att.add_argument("--device", help="the paired device (default: the one the extension "
                     "in that browser is paired as)")
    att.add_argument("--bridge", help="bridge URL (default: the running bridge's endpoint file)")
    att.add_argument("--token-file", metavar="PATH", help=token_file_help)
    att.set_defaults(standalone=_cmd_attach)
