"""``python -m supervisor``: run one supervised browser against a running bridge.

The bridge token is read from ``--token-file`` (``-``: the first line of stdin, which is
how ``bridge/embedded.py`` hands it over) or ``$TRUSTBRIDGE_TOKEN``; it is never taken
from the command line, where other local users could read it. Once read, it is removed
from this process's environment, so neither Playwright's driver nor the browser and its
crash handlers inherit it: the extension gets it from its private config file only.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys

from .origins import OriginPolicy, parse_origin_list
from .parent import (
    STOP_BOUND_S,
    descendants,
    kill_descendants,
    reparented,
    stdin_closed,
    stdin_is_pipe,
)
from .runner import BROWSERS, Supervisor


def _token(path: str | None) -> str:
    env_token = os.environ.pop("TRUSTBRIDGE_TOKEN", None)
    if path == "-":
        token = sys.stdin.readline().strip()
    elif path:
        with open(path) as fh:
            token = fh.read().strip()
    else:
        token = env_token or ""
    if not token:
        raise SystemExit("supervisor: pass --token-file (or set TRUSTBRIDGE_TOKEN)")
    return token


async def _run(args: argparse.Namespace) -> int:
    sup = Supervisor(args.bridge_url, _token(args.token_file), args.device, browser=args.browser,
                     headless=not args.headed, trusted_input=not args.no_driver,
                     humanize=args.humanize, keep_ublock=args.keep_ublock,
                     viewport=args.viewport, user_data_dir=args.user_data_dir,
                     executable_path=args.executable_path,
                     origins=OriginPolicy(args.allowed_origins, args.blocked_origins),
                     output_dir=args.output_dir, ca_file=args.ca_file)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    # Watched from before the launch: a parent that dies (or a SIGTERM that comes) while
    # the browser starts ends the start too (issue 32 item 6).
    waiters = [asyncio.create_task(stop.wait()), asyncio.create_task(sup.gone.wait())]
    if args.exit_with_parent:
        waiters.append(asyncio.create_task(_parent_gone(args.token_file == "-")))
    starting = asyncio.create_task(sup.start())
    await asyncio.wait([starting, *waiters], return_when=asyncio.FIRST_COMPLETED)
    if not starting.done():
        starting.cancel()
        with contextlib.suppress(BaseException):
            await starting
        for w in waiters:
            w.cancel()
        await _stop(sup)
        return 0 if stop.is_set() else 2
    if (exc := starting.exception()) is not None:
        print(f"supervisor: could not start {args.browser}: {exc}", file=sys.stderr)
        for w in waiters:
            w.cancel()
        await _stop(sup)
        return 1
    print(f"supervisor: {args.browser} up for device {args.device}", file=sys.stderr, flush=True)
    sup.on_restart = lambda n: print(f"{RESTARTED_LINE} {args.browser} for device {args.device} "
                                     f"(restart {n}); its tabs and refs are gone",
                                     file=sys.stderr, flush=True)
    # A browser that dies is started again by the Supervisor; `gone` means it gave up.
    await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    for w in waiters:
        w.cancel()
    await _stop(sup)
    return 0 if stop.is_set() else 2


async def _stop(sup: Supervisor) -> None:
    """Stop in order within STOP_BOUND_S, else kill everything this process started (a
    browser whose close hangs must not keep a SIGTERMed supervisor alive)."""
    try:
        await asyncio.wait_for(sup.stop(), STOP_BOUND_S)
    except BaseException as exc:  # noqa: BLE001 - a timeout or a failed close alike
        killed = kill_descendants()
        print(f"supervisor: orderly stop did not finish ({type(exc).__name__}); killed "
              f"{len(killed)} processes it started", file=sys.stderr, flush=True)
    if left := descendants():  # e.g. a browser helper Playwright did not wait for
        kill_descendants()
        print(f"supervisor: killed {len(left)} processes left after the stop",
              file=sys.stderr, flush=True)


RESTARTED_LINE = "supervisor: browser restarted:"
"""Start of the stderr line said after each browser restart; bridge/embedded.py counts it."""

PARENT_PID = os.getppid()


async def _parent_gone(stdin_is_parents: bool) -> None:
    """Return once the process that started us is gone: its pipe on our stdin reached
    end-of-file (``--token-file -``: supervisor/parent.py), else our parent id changed.
    A SIGKILLed ``trustbridge up`` / ``mcp`` must not leave its browser behind."""
    if stdin_is_parents and stdin_is_pipe():
        await stdin_closed()
    else:  # a file or terminal on stdin carries no sign of the parent's end
        await reparented(PARENT_PID)
    print("supervisor: parent process gone; closing the browser", file=sys.stderr, flush=True)


def _humanize(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--humanize takes seconds, not {value!r}") from None
    if seconds <= 0:
        raise argparse.ArgumentTypeError("--humanize takes a positive number of seconds")
    return seconds


def _viewport(value: str) -> dict[str, int]:
    width, sep, height = value.partition("x")
    if not sep or not width.isdigit() or not height.isdigit() \
            or not 0 < int(width) <= MAX_VIEWPORT_PX or not 0 < int(height) <= MAX_VIEWPORT_PX:
        raise argparse.ArgumentTypeError(
            f"--viewport takes WIDTHxHEIGHT in CSS px (1 to {MAX_VIEWPORT_PX}), not {value!r}")
    return {"width": int(width), "height": int(height)}


MAX_VIEWPORT_PX = 10000
"""Largest viewport side accepted, CSS px (bridge/mcp/options.py checks the same bound)."""


def _origins(value: str) -> tuple:
    try:
        return parse_origin_list(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _url_refusal(url: str, ca_file: str | None) -> str | None:
    """Why the supervisor must not connect to ``url`` (None: it may). Its token (or device
    credential) would cross the network in plain text over ``ws://`` to another machine;
    ``--ca-file`` means nothing without TLS."""
    from urllib.parse import urlsplit

    from trustbridge.bridge.config import is_loopback_host

    parts = urlsplit(url)
    if parts.scheme not in ("ws", "wss") or not parts.hostname:
        return f"--bridge-url must be ws://HOST:PORT or wss://HOST:PORT, not {url!r}"
    if parts.scheme == "ws" and not is_loopback_host(parts.hostname):
        return (f"not connecting to {url}: {parts.hostname} is not this machine and ws:// is "
                "not encrypted; use the bridge's wss:// listener (docs/deploy.md)")
    if parts.scheme == "ws" and ca_file:
        return "--ca-file is for a wss:// bridge URL"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m supervisor", description=__doc__)
    parser.add_argument("--bridge-url", required=True,
                        help="ws://127.0.0.1:PORT, or wss://HOST:PORT for a bridge on another "
                        "machine (docs/deploy.md)")
    parser.add_argument("--ca-file", metavar="PEM",
                        help="wss:// only: the CA the bridge's certificate must chain to "
                        "(default: the system's trust store)")
    parser.add_argument("--token-file",
                        help="file holding the bridge token (-: read it from stdin)")
    parser.add_argument("--device", default="chromium", help="device id (default: chromium)")
    parser.add_argument("--browser", default="chromium", choices=BROWSERS,
                        help="chromium, firefox (Debian firefox-esr) or camoufox")
    parser.add_argument("--humanize", nargs="?", const=True, default=None, type=_humanize,
                        metavar="SECONDS",
                        help="a person's rhythm for clicks and typing on refs, on every "
                        "browser (supervisor/humanize.py; also TRUSTBRIDGE_HUMANIZE=1); "
                        "camoufox also gets its own human-like cursor, optionally its longest "
                        "duration in seconds")
    parser.add_argument("--keep-ublock", action="store_true",
                        help="camoufox: keep its default uBlock Origin addon (excluded by default)")
    parser.add_argument("--headed", action="store_true", help="show a window")
    parser.add_argument("--exit-with-parent", action="store_true",
                        help="close the browser and exit when the starting process dies "
                        "(used by trustbridge up / mcp); with --token-file -, the parent keeps "
                        "stdin open and its end-of-file is the sign")
    parser.add_argument("--no-driver", action="store_true",
                        help="no input driver: the device's input stays synthetic")
    parser.add_argument("--viewport", type=_viewport, metavar="WxH",
                        help="top-level viewport in CSS px (default 1280x720)")
    parser.add_argument("--user-data-dir", metavar="DIR",
                        help="a profile that persists (default: a fresh temp profile per launch)")
    parser.add_argument("--executable-path", metavar="PATH", help="the browser binary")
    parser.add_argument("--allowed-origins", type=_origins, default=(), metavar="LIST",
                        help="semicolon-separated origins the pages may request (others fail)")
    parser.add_argument("--blocked-origins", type=_origins, default=(), metavar="LIST",
                        help="semicolon-separated origins whose requests fail")
    parser.add_argument("--output-dir", metavar="DIR", help="where produced files are saved")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    if (refusal := _url_refusal(args.bridge_url, args.ca_file)) is not None:
        parser.error(refusal)
    if args.ca_file:
        from .remote import client_ssl_context

        try:
            client_ssl_context(args.ca_file)
        except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError
            parser.error(f"--ca-file {args.ca_file}: not a readable PEM CA file ({exc})")
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    return asyncio.run(_run(args))


if __name__ == "__main__":
    sys.exit(main())
