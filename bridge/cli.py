"""``trustbridge`` command line.

Commands:
    up        run the embedded default (bridge + supervisor + headless Chromium) until Ctrl-C
    demo      the main job in one go: bring everything up, act on a local page, print it all
    mcp       serve the browser_* MCP tools on stdio (--http PORT: streamable HTTP behind a
              bearer token); starts the embedded default when no bridge is running
              (docs/mcp.md); takes Playwright MCP's --browser, --headless, --viewport-size,
              --user-data-dir, --isolated, --caps, --config... (docs/cli.md)
    token     where the tokens are; --rotate writes a new one (restart the bridge after)
    doctor    what is connected: devices, extension, driver, trusted-input promise
    tabs      list tabs
    open URL  load URL in the active tab (or --tab)
    snapshot  print the accessibility-style outline with refs
    click REF [--double] | hover REF | press KEY [--ref REF]
    select REF VALUE... | check REF | uncheck REF
    dialog accept|dismiss [--text T]   answer the JavaScript dialog that blocks the page
    type REF TEXT [--submit]   type TEXT key by key (it does not clear the field)
    fill REF VALUE             replace the field's value with VALUE (select all, one edit)
    wait      --ms N or --text TEXT
    sessions [stop NAME | release]   the bridge's sessions; stop one; free your tabs
    cdp       print the device's loopback CDP URL (Chromium; docs/cdp.md)
    extension | pair | attach --cdp URL   your own browser: load, pair, trusted input
    device | device-token   browsers on other machines over wss:// (docs/deploy.md)
    exec FILE|- | repl   Python with `browser` and `tab` (bridge/cli_code.py, docs/code.md)

Every client command takes ``--json`` (print the raw result) and ``--device``/``--tab``;
``--session NAME`` makes its requests belong to session NAME, kept between invocations
(bridge/cli_sessions.py, docs/sessions.md). Each runs one call of the Python SDK
(``bridge.sdk.Browser`` / ``Tab``), so a verb means the same here as there. ``--bridge URL`` gets the token only when URL is loopback, or
``wss://`` with the token named by ``--token-file`` (refused otherwise, exit 2, before
connecting).

Exit codes: 0 success; 1 the bridge answered with an error (its code is printed);
2 bad usage; 3 no bridge reachable (start one with ``trustbridge up``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from . import cli_attach, cli_cdp, cli_code, cli_remote, cli_sessions, config
from .protocol import errors as E
from .sdk import Browser, Tab
from .server import TlsListener

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_NO_BRIDGE, EXIT_NOT_DELIVERED = 0, 1, 2, 3, 4
"""Exit codes; EXIT_NOT_DELIVERED: the bridge answered, but the action's result says it
did not reach its target (``delivered: false``, e.g. a click whose point another element
took): a script must not read it as success."""


def _progress(msg: str) -> None:
    print(f"trustbridge: {msg}", file=sys.stderr, flush=True)


def bind_warning(host: str) -> str | None:
    """The warning ``up --host`` prints for an address beyond loopback, else None."""
    if config.is_loopback_host(host):
        return None
    return (f"WARNING: binding {host}: the bridge is reachable beyond this machine, over "
            "plain ws:// (the token and everything else travel unencrypted). Every peer "
            "still needs the token. For other machines use the TLS listener instead "
            "(--tls-listen with --tls-cert/--tls-key, docs/deploy.md), or keep 127.0.0.1 "
            "behind a TLS reverse proxy (docs/security.md).")


def tls_listener(listen: str | None, cert: str | None, key: str | None) -> TlsListener | None:
    """``up --tls-listen ADDR:PORT --tls-cert --tls-key`` as a
    :class:`~bridge.server.TlsListener` (None without ``--tls-listen``).

    Raises:
        ValueError: a half-given set (a listener needs both files; files need a
            listener), a malformed ADDR:PORT, or an unreadable file.
    """
    if listen is None:
        if cert or key:
            raise ValueError("--tls-cert/--tls-key go with --tls-listen ADDR:PORT")
        return None
    if not cert or not key:
        raise ValueError("--tls-listen needs --tls-cert and --tls-key: the bridge listens "
                         "beyond this machine only over TLS (docs/deploy.md)")
    host, sep, port = listen.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--tls-listen takes ADDR:PORT (e.g. 0.0.0.0:17843), not {listen!r}")
    for path in (cert, key):
        if not os.access(path, os.R_OK):
            raise ValueError(f"cannot read {path}")
    return TlsListener(host.strip("[]") or "0.0.0.0", int(port), cert, key)


class _Refused(Exception):
    """A command line that must not run: the reason is printed, the exit code is 2."""


def _bridge_token(args: argparse.Namespace) -> str | None:
    """The token to present to ``args.bridge``: the one ``--token-file`` names, else None
    (the state directory's, which only a loopback URL gets).

    Raises:
        _Refused: the token file cannot be read, or the token may not go to that URL
            (:func:`bridge.config.token_refusal`); nothing was sent.
    """
    token = None
    if args.token_file is not None:
        try:
            token = config.read_token_file(Path(args.token_file))
        except ValueError as exc:
            raise _Refused(str(exc)) from exc
    if args.bridge is not None:
        reason = config.token_refusal(args.bridge, token_named=token is not None)
        if reason is not None:
            raise _Refused(f"not connecting to {args.bridge}: {reason}")
    return token


def _http_token(args: argparse.Namespace) -> tuple[str, Path, bool]:
    """``(token, file, own)`` of ``mcp --http``: the file ``--http-token-file`` names
    (``own`` False), else the server's own token file, created 0600 on first use.

    Raises:
        _Refused: the named file cannot be read or is empty.
    """
    if args.http_token_file is not None:
        path = Path(args.http_token_file)
        try:
            return config.read_token_file(path), path, False
        except ValueError as exc:
            raise _Refused(str(exc)) from exc
    path = config.mcp_http_token_path()
    return config.load_or_create_token(path), path, True


def http_client_config(url: str, authorization: str) -> str:
    """The client config snippet ``mcp --http`` prints (Cursor / Claude Desktop style)."""
    return json.dumps({"mcpServers": {"trustbridge": {
        "url": url, "headers": {"Authorization": authorization}}}}, indent=2)


SUPERVISOR_RESTARTS = 3
"""How many times ``trustbridge up`` starts a dead supervisor again within
:data:`SUPERVISOR_RESTART_WINDOW_S` before it gives up with an error."""
SUPERVISOR_RESTART_WINDOW_S = 300.0
"""Seconds over which supervisor deaths are counted against :data:`SUPERVISOR_RESTARTS`."""


async def _cmd_up(args: argparse.Namespace) -> int:
    from .embedded import Embedded

    if (warning := bind_warning(args.host)) is not None:
        if not args.plain_ws:
            _progress(f"error: not listening on {args.host} over plain ws://: the token and "
                      "everything else (typed text included) would cross the network "
                      "unencrypted. For other machines use --tls-listen ADDR:PORT with "
                      "--tls-cert/--tls-key (docs/deploy.md); on a network you trust as much "
                      "as this machine, add --plain-ws to accept it.")
            return EXIT_USAGE
        _progress(warning)
    try:
        tls = tls_listener(args.tls_listen, args.tls_cert, args.tls_key)
    except ValueError as exc:
        _progress(f"error: {exc}")
        return EXIT_USAGE
    if args.browser == "camoufox" and (missing := _camoufox_missing()) is not None:
        _progress(missing)  # before a bridge starts for a browser that cannot
        return EXIT_ERROR
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    # An explicit --port is that port or nothing; the default falls back to a free port
    # (a second `up` with its own TRUSTBRIDGE_HOME must not need one picked by hand).
    ports = [args.port] if args.port is not None else [config.DEFAULT_PORT, 0]
    for port in ports:
        emb = Embedded(port=port, host=args.host,
                       device=args.device or args.browser, browser=args.browser,
                       headless=not args.headed,
                       trusted_input=not args.no_driver, progress=_progress,
                       allow_file_urls=True if args.allow_file_urls else None,
                       tls=tls, local_browser=not args.no_browser,
                       humanize=args.humanize)
        try:
            await emb.start()
            break
        except E.TrustbridgeError as err:
            _progress(str(err))
            await emb.stop()
            return EXIT_ERROR
        except OSError as exc:
            await emb.stop()
            if port != ports[-1]:
                _progress(f"port {port} is taken ({exc.strerror or exc}); using a free port")
                continue
            _progress(f"cannot listen on port {port}: {exc} (another bridge running?)")
            return EXIT_ERROR
    if args.open:
        async with await Browser.connect(emb.url, emb.token) as browser:
            res = await (await browser.tab()).goto(args.open)
            _progress(f"opened {res.get('url')}")
    if args.no_browser:
        _progress(f"ready: bridge on {emb.url}, no local browser. Ctrl-C stops it.")
    else:
        _progress(f"ready: device {emb.device} on {emb.url}. Ctrl-C stops everything.")
    deaths: list[float] = []
    stopper = asyncio.create_task(stop.wait())
    while True:
        child_done = asyncio.create_task(emb.wait_closed())
        await asyncio.wait([child_done, stopper], return_when=asyncio.FIRST_COMPLETED)
        if stop.is_set():
            child_done.cancel()
            break
        # The supervisor died under us (killed, crashed): start it again, a bounded
        # number of times (issue 32 item 2); the bridge and its sessions stay up.
        now = time.monotonic()
        deaths = [t for t in deaths if now - t < SUPERVISOR_RESTART_WINDOW_S] + [now]
        if len(deaths) > SUPERVISOR_RESTARTS:
            _progress(f"error: the browser's supervisor exited {len(deaths)} times within "
                      f"{SUPERVISOR_RESTART_WINDOW_S:.0f} s (last code {child_done.result()}); "
                      "not starting it again. Its messages are above; stopping the bridge")
            stopper.cancel()
            await emb.stop()
            return EXIT_ERROR
        _progress(f"the browser's supervisor exited unexpectedly (code {child_done.result()}); "
                  f"starting it again (restart {len(deaths)} of at most "
                  f"{SUPERVISOR_RESTARTS} within {SUPERVISOR_RESTART_WINDOW_S:.0f} s)")
        restart = asyncio.create_task(emb.restart_supervisor())
        await asyncio.wait([restart, stopper], return_when=asyncio.FIRST_COMPLETED)
        if stop.is_set():
            restart.cancel()
            with contextlib.suppress(BaseException):
                await restart
            break
        if (err := restart.exception()) is not None:
            _progress(f"{err}")  # the next loop counts it against the bound
            continue
        _progress(f"ready again: device {emb.device} on {emb.url}")
    stopper.cancel()
    _progress("stopping")
    await emb.stop()
    return EXIT_OK


def _camoufox_missing() -> str | None:
    """Why ``--browser camoufox`` cannot start here for want of the ``camoufox`` extra
    (supervisor/discovery.py), with the command that adds it; None when it is installed."""
    from trustbridge.supervisor.discovery import camoufox_package_missing

    return camoufox_package_missing()


MCP_OPTION_FLAGS = ("browser", "headless", "viewport", "user_data_dir", "isolated",
                    "output_dir", "allowed_origins", "blocked_origins", "allowed_roots",
                    "unrestricted_file_access", "caps",
                    "executable_path", "config", "session_label", "code_timeout_max_s")
"""``mcp`` flags that bridge/mcp/options.py build_options reads (argparse dests)."""


def mcp_options(args: argparse.Namespace, env: dict[str, str] | None = None) -> Any:
    """The validated :class:`bridge.mcp.options.McpOptions` of ``trustbridge mcp``, and
    one stderr line per option that was accepted but has no effect.

    Raises:
        _Refused: a bad value (the message names the flag, variable or config key).
    """
    from .mcp.foreign_flags import FOREIGN_FLAGS, check_foreign
    from .mcp.options import OptionsError, build_options

    try:
        foreign = check_foreign({f.dest: getattr(args, f.dest, None) for f in FOREIGN_FLAGS})
        options = build_options({k: getattr(args, k) for k in MCP_OPTION_FLAGS}, env)
    except OptionsError as err:
        raise _Refused(str(err)) from err
    for warning in [*foreign, *options.warnings]:
        _progress(f"warning: {warning}")
    if options.launch_set:
        running = None if (args.bridge or args.no_embedded) else config.live_endpoint()
        if args.bridge or args.no_embedded or running:
            # They shape the browser this server starts; a running bridge has its own.
            where = args.bridge or (running or {}).get("url") or "the running bridge"
            _progress("warning: " + ", ".join(sorted(options.launch_set)).replace("_", "-")
                      + f" only apply to the browser `trustbridge mcp` starts; {where} "
                      "has its own (stop it, or give this server its own TRUSTBRIDGE_HOME)")
    return options


async def _cmd_mcp(args: argparse.Namespace) -> int:
    from .mcp.foreign_flags import http_port
    from .mcp.options import OptionsError

    try:
        options = mcp_options(args)
        try:  # Playwright MCP's --port / --host (loopback only) → --http
            args.http = http_port(args.http, args.pw_port, args.pw_host)
        except OptionsError as err:
            raise _Refused(str(err)) from err
        token = _bridge_token(args)
        http_token = _http_token(args) if args.http is not None else None
    except _Refused as err:
        _progress(f"error: {err}")
        return EXIT_USAGE
    from .mcp import Session, run_http, run_stdio

    if args.humanize:  # the embedded supervisor inherits it (supervisor/driver.py)
        os.environ["TRUSTBRIDGE_HUMANIZE"] = "1"

    session = Session(url=args.bridge, token=token, embedded=not args.no_embedded,
                      bridge_port=args.bridge_port, headless=options.headless,
                      snapshot_after_action=not args.no_page_state, progress=_progress,
                      options=options, ca_file=args.ca_file, device=args.bridge_device)
    if http_token is not None:  # uvicorn handles SIGINT/SIGTERM itself
        secret, path, own = http_token
        url = f"http://127.0.0.1:{args.http}/mcp"
        _progress(f"MCP over streamable HTTP at {url}; every request needs the header "
                  f"'Authorization: Bearer <token>' with the token in {path}")
        if own:  # the server's own token: shown once here, for the client's config
            _progress(f"bearer token: {secret}")
        _progress("client config (Cursor, Claude Desktop; docs/mcp.md for others):")
        print(http_client_config(url, f"Bearer {secret}" if own else f"Bearer <token in {path}>"),
              file=sys.stderr, flush=True)
        await run_http(session, args.http, secret)
        return EXIT_OK
    # stdio: stdout carries MCP only, so progress goes to stderr (as _progress does).
    # The client ends us by closing stdin (run_stdio returns) or by a signal; then the
    # thread blocked reading stdin cannot be interrupted, so stop the browser and exit.
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    serving = asyncio.create_task(run_stdio(session))
    stopper = asyncio.create_task(stop.wait())
    await asyncio.wait([serving, stopper], return_when=asyncio.FIRST_COMPLETED)
    if serving.done():
        stopper.cancel()
        serving.result()
        return EXIT_OK
    _progress("stopping")
    await session.close()
    sys.stderr.flush()
    os._exit(EXIT_OK)


async def _cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    try:
        return await run_demo(json_out=args.json, progress=_progress)
    except E.BadRequest as err:
        # Another bridge uses this state folder (a `trustbridge up`): one line, as `up`
        # says it, not a traceback (the newcomer's read of the README).
        _progress(err.message)
        return EXIT_ERROR


Run = Callable[[argparse.Namespace, Browser, Tab], Awaitable[Any]]
"""A client command: its parsed arguments, the connected browser and the tab it addresses
(``--tab``, else the active one) → the result it prints."""


async def _doctor(args: argparse.Namespace, browser: Browser, tab: Tab) -> dict[str, Any]:
    devices = await browser.devices()
    return {"devices": [d.model_dump(mode="json") for d in devices],
            "bridge": args.bridge or (config.read_endpoint() or {}).get("url"),
            "protocolVersion": browser.protocol_version,
            "browsers": await asyncio.to_thread(_browsers)}


def _browsers() -> list[dict[str, Any]]:
    """doctor's ``browsers``: the binaries this machine has (supervisor/discovery.py)."""
    from trustbridge.supervisor import discovery

    return discovery.report()


def package_version() -> str:
    """The installed trustbridge's version (pyproject.toml's, the one place it is set)."""
    import importlib.metadata

    try:
        return importlib.metadata.version("trustbridge")
    except importlib.metadata.PackageNotFoundError:  # a source tree never installed
        return "unknown (not installed)"


def _human(cmd: str, result: dict[str, Any]) -> str:
    if cmd == "snapshot":
        head = f"# {result.get('title', '')} — {result.get('url', '')}"
        return head + "\n" + str(result.get("snapshot", ""))
    if cmd == "tabs":
        return "\n".join(
            f"{'*' if t.get('active') else ' '} {t['tabId']}: {t.get('title', '')} — {t.get('url', '')}"
            for t in result.get("tabs", [])
        )
    if cmd == "doctor":
        lines = []
        if "bridge" in result:
            lines.append(f"bridge {result['bridge']}: protocol {result['protocolVersion']}")
        if "devices" in result and not result["devices"]:
            lines.append("no devices connected")
        for d in result.get("devices", []):
            path = ("trusted" if d["driver"] else "UNAVAILABLE (driver offline)") \
                if d["requiresTrustedInput"] else "synthetic (no driver ever connected)"
            lines.append(
                f"device {d['device']}: extension {'connected' if d['extension'] else 'MISSING'}, "
                f"driver {'online' if d['driver'] else 'offline'}, input {path}"
                + (f", browser {d['browser']}" if d.get("browser") else "")
                + (f", {'remote' if d.get('remote') else 'local'} host {d['host']}"
                   if d.get("host") else "")
                + (f", latency {d['latencyMs']:g} ms" if d.get("latencyMs") is not None
                   else (", latency unknown (no pong)" if d.get("host") else ""))
                + (", capabilities " + " ".join(
                    f"{k}={'yes' if v else 'no'}" for k, v in sorted(d["capabilities"].items()))
                   if d.get("capabilities") else ""))
        if "browsers" in result:
            from trustbridge.supervisor.discovery import report_lines

            lines.extend(report_lines(result["browsers"]))
        return "\n".join(lines)
    if cmd == "open":
        return f"opened {result.get('url')} (tab {result.get('tabId')}): {result.get('title', '')}"
    if "inputPath" in result:
        return "\n".join([f"{cmd} ok — inputPath={result['inputPath']} tab={result.get('tabId')}",
                          *_effects(result)])
    if cmd == "human":
        after = result.get("after") or {}
        counts = result.get("personInput") or {}
        return (f"hand-off {result.get('state')}: {result.get('before', {}).get('url')} -> "
                f"{after.get('url', '(tab gone)')} ({after.get('title', '')!r}); the person "
                f"sent {counts.get('clicks', 0)} clicks, {counts.get('keys', 0)} keys (not "
                f"shown), {counts.get('wheels', 0)} wheel turns")
    if cmd == "wait":
        return (f"text found after {result.get('waitedMs')} ms" if result.get("found")
                else f"waited {result.get('waitedMs')} ms")
    if cmd == "dialog":
        return (f"{'accepted' if result.get('accepted') else 'dismissed'} "
                f"{E.a_dialog(result.get('type')).split(' ', 1)[1]} "
                f"{str(result.get('message', ''))[:200]!r}"
                + (f" (tab {result['tabId']})" if result.get("tabId") is not None else ""))
    return json.dumps(result)


def _effects(result: dict[str, Any]) -> list[str]:
    """What an input result says beyond "ok", one line each: a click that reached something
    else, a dialog it opened, the tabs it opened (what ``--json`` shows in full)."""
    lines = []
    if result.get("delivered") is False:
        lines.append("warning: the target never got the click (whatever was at the point "
                     "may have got it; exit code 4); run `trustbridge snapshot`")
    elif isinstance(inner := result.get("pressedOn"), dict):
        lines.append(f"note: the press hit <{inner.get('tag')}> {inner.get('text', '')!r} "
                     "inside the target first (it may have acted); take a new snapshot")
    if dialog := result.get("dialog"):
        lines.append(f"dialog open: {dialog.get('type')} {str(dialog.get('message', ''))[:200]!r}"
                     " — answer it with `trustbridge dialog accept|dismiss`")
    for tab in result.get("newTabs") or []:
        lines.append(f"new tab {tab.get('tabId')}: {tab.get('title', '')} — {tab.get('url', '')}"
                     " (use --tab to act on it)")
    return lines


def _cmd_token(args: argparse.Namespace) -> int:
    """``trustbridge token``: where the tokens are; ``--rotate`` replaces one."""
    path = config.mcp_http_token_path() if args.mcp_http else config.state_dir() / "token"
    if not args.rotate:
        print(f"bridge token: {config.state_dir() / 'token'}")
        print(f"mcp --http token: {config.mcp_http_token_path()}")
        return EXIT_OK
    config.write_new_token(path)
    print(f"wrote a new token to {path} (mode 0600)")
    if args.mcp_http:
        print("a running `trustbridge mcp --http` keeps the old token until it is restarted; "
              "restart it and put the new token in your MCP clients' Authorization header")
        return EXIT_OK
    print("a running bridge keeps the old token until it is restarted (it reads the token "
          "once, at start, and hands it to its browser's extension and input driver); "
          "until then CLI, SDK and MCP clients, which read the new one, are refused")
    running = config.live_endpoint()
    if running:
        print(f"restart the bridge running now (pid {running['pid']}, {running['url']}): "
              "stop `trustbridge up` (or the `trustbridge mcp` that started it) and start it "
              "again")
    else:
        print("no bridge is running from this state directory: the next one started uses "
              "the new token")
    return EXIT_OK


CLI_NEXT_STEP: dict[str, str] = {
    "DIALOG_OPEN": "answer it with `trustbridge dialog accept` or `trustbridge dialog "
    "dismiss` (`--text T` answers a prompt), then retry.",
    "REF_NOT_FOUND": "run `trustbridge snapshot` and use a ref from that new snapshot (a "
    "ref of another tab needs --tab N).",
    "FRAME_TOKEN_UNKNOWN": "run `trustbridge snapshot` and retry with a ref from it.",
    "BROWSER_DOCUMENT_CHANGED": "the page changed since the snapshot: run `trustbridge "
    "snapshot` and use its refs.",
    "ELEMENT_TARGET_DETACHED": "the element left the page: run `trustbridge snapshot`.",
    "ELEMENT_TARGET_AMBIGUOUS": "run `trustbridge snapshot` and pick the exact element's "
    "new ref.",
    "ELEMENT_TARGET_DISABLED": "wait until it is enabled (`trustbridge wait --ms 1000`, "
    "then `trustbridge snapshot`), or choose another element.",
    "ELEMENT_NOT_EDITABLE": "choose an editable element (a textbox) from `trustbridge "
    "snapshot`.",
    "CLOSED_SHADOW_ROOT": "act on a control outside the closed root, or use the keyboard "
    "(`trustbridge press KEY`).",
    "BROWSER_TAB_CLOSED": "run `trustbridge tabs` and pick an open tab with --tab N.",
    "BROWSER_OPERATION_UNCERTAIN": "it may or may not have happened and was not repeated: "
    "run `trustbridge snapshot` to check before doing anything again.",
    "TIMEOUT": "run `trustbridge snapshot` to see the page; retry, or wait longer if it is "
    "loading (`trustbridge wait --text TEXT`).",
    "BAD_REQUEST": "check the command's arguments (`trustbridge COMMAND --help`).",
    "ELEMENT_VALUE_NOT_SET": "run `trustbridge snapshot` to see the control's value; the "
    "page changed or refused it. Try another verb (type key by key, select).",
    "BROWSER_CRASHED": "`trustbridge open URL` loads the tab again (a crashed renderer "
    "recovers on its next load); then `trustbridge snapshot`: every ref of the crashed "
    "page is gone.",
}
"""The next step of an error in this surface's words (the wire's default names protocol
methods, e.g. DIALOG_OPEN's ``page.dialog``); a step the raiser gave for this very error
is shown instead. The MCP server's own table: bridge/mcp/tool.py ``NEXT_STEP``."""


def error_text(err: E.TrustbridgeError) -> str:
    """How a client command prints a bridge error in plain mode (stderr): its wire code
    and message, then the next step in the CLI's words (:data:`CLI_NEXT_STEP`;
    ``--json`` prints the wire payload, ``nextStep`` in it)."""
    step = err.next_step or CLI_NEXT_STEP.get(err.code.value) or err.advice
    return f"error {err.code.value}: {err.message}\nnext step: {step}"


def print_error(err: E.TrustbridgeError, as_json: bool) -> None:
    """A bridge error of a client command: ``{"ok": false, "error": payload}`` on stdout
    with ``--json``, else :func:`error_text` on stderr."""
    if as_json:
        print(json.dumps({"ok": False, "error": err.to_payload().model_dump(mode="json")}))
    else:
        print(error_text(err), file=sys.stderr)


async def connect_or_exit(args: argparse.Namespace,
                          on_no_bridge: Callable[[], None] | None = None) -> Browser | int:
    """The SDK browser a client command acts through (``--bridge``, ``--token-file``,
    ``--session``, ``--device``), or, the reason printed on stderr, its exit code:
    EXIT_USAGE (a token that may not go there or cannot be read), EXIT_NO_BRIDGE (then
    ``on_no_bridge`` runs), EXIT_ERROR (the bridge refused: a session label in use...)."""
    try:
        token = _bridge_token(args)
    except _Refused as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_USAGE
    try:
        return await cli_sessions.connect(args, token)
    except E.DeviceNotConnected as err:
        print(f"error: {err.message}", file=sys.stderr)
        if on_no_bridge is not None:
            on_no_bridge()
        return EXIT_NO_BRIDGE
    except E.TrustbridgeError as err:
        print(error_text(err), file=sys.stderr)
        return EXIT_ERROR


async def _cmd_client(args: argparse.Namespace) -> int:
    def doctor_offline() -> None:  # which browsers could run needs no bridge
        found = {"browsers": _browsers()}
        print(json.dumps({"ok": False, **found}) if args.json else _human("doctor", found))

    browser = await connect_or_exit(args, doctor_offline if args.command == "doctor" else None)
    if isinstance(browser, int):
        return browser
    async with browser:
        try:
            run: Run = args.run
            result = dict(await run(args, browser, Tab(browser.client, browser.device, args.tab)))
        except E.TrustbridgeError as err:
            print_error(err, args.json)
            return EXIT_ERROR
    human = getattr(args, "human", None)  # a command's own formatter (set_defaults)
    print(json.dumps({"ok": True, "result": result}) if args.json
          else human(args, result) if human else _human(args.command, result))
    # An action that did not reach its target is no success, in either output form.
    return EXIT_NOT_DELIVERED if result.get("delivered") is False else EXIT_OK


TOKEN_FILE_HELP = ("file holding the bridge's token (default: the state directory's, sent "
                   "only to a loopback --bridge); needed for a wss:// bridge elsewhere")
CA_FILE_HELP = ("wss:// --bridge only: the PEM CA its certificate must chain to (default: the "
                "system's trust store; docs/deploy.md)")


def _add_mcp_options(mcp: argparse.ArgumentParser) -> None:
    """Playwright MCP's launch flags (their names; docs/cli.md has the table). Each is
    also ``PLAYWRIGHT_MCP_<NAME>`` / ``TRUSTBRIDGE_<NAME>`` and a ``--config`` key; the
    values are checked by bridge/mcp/options.py, so every default here is None."""
    g = mcp.add_argument_group(
        "browser options (Playwright MCP's; flag > TRUSTBRIDGE_*/PLAYWRIGHT_MCP_* > --config)")
    g.add_argument("--browser", metavar="NAME",
                   help="chromium (default), firefox (Debian firefox-esr) or camoufox")
    head = g.add_mutually_exclusive_group()
    head.add_argument("--headless", dest="headless", action="store_const", const=True,
                      default=None, help="no window (the default here)")
    head.add_argument("--headed", dest="headless", action="store_const", const=False,
                      help="show the browser window")
    g.add_argument("--viewport-size", dest="viewport", metavar="WxH",
                   help="top-level viewport in CSS px, e.g. 1280x800 (default 1280x720)")
    g.add_argument("--user-data-dir", metavar="DIR",
                   help="keep the profile (cookies, localStorage) in DIR across runs")
    g.add_argument("--isolated", action="store_const", const=True, default=None,
                   help="a fresh temporary profile, removed at exit (the default)")
    g.add_argument("--output-dir", metavar="DIR", help="where downloads and saved files go")
    g.add_argument("--allowed-origins", metavar="LIST",
                   help="semicolon-separated origins the pages may request; others fail")
    g.add_argument("--blocked-origins", metavar="LIST",
                   help="semicolon-separated origins whose requests fail (checked first)")
    g.add_argument("--allowed-roots", metavar="LIST",
                   help="semicolon-separated folders browser_file_upload may take files "
                   "from, besides the output directory (never the state directory)")
    g.add_argument("--allow-unrestricted-file-access", dest="unrestricted_file_access",
                   action="store_const", const=True, default=None,
                   help="uploads from any path (never the state directory) and, in the "
                   "browser this server starts, file: URLs (Playwright MCP's flag)")
    g.add_argument("--caps", metavar="LIST",
                   help="comma-separated extra tools: vision (coordinates), pdf, "
                   "code (browser_exec: local trusted Python, not a sandbox)")
    g.add_argument("--code-timeout-max", dest="code_timeout_max_s", metavar="SECONDS",
                   help="longest browser_exec timeout, s (default 300)")
    g.add_argument("--executable-path", metavar="PATH", help="the browser binary to run")
    g.add_argument("--session-label", metavar="NAME",
                   help="this server's session label on the bridge (docs/sessions.md)")
    g.add_argument("--config", metavar="FILE",
                   help="Playwright MCP JSON config (browser.browserName, launchOptions, "
                   "contextOptions.viewport, userDataDir, capabilities, outputDir, network)")
    from .mcp.foreign_flags import FOREIGN_FLAGS

    pw = mcp.add_argument_group(
        "other Playwright MCP flags", "--port N is --http N; --host takes loopback only "
        "(127.0.0.1, localhost, ::1). Taken and ignored with a warning: "
        + ", ".join(f.flag for f in FOREIGN_FLAGS if f.refuse is None) + ". Refused (exit 2, "
        "with the reason): " + ", ".join(f.flag for f in FOREIGN_FLAGS if f.refuse) + ".")
    pw.add_argument("--port", dest="pw_port", type=int, metavar="PORT", help=argparse.SUPPRESS)
    pw.add_argument("--host", dest="pw_host", metavar="HOST", help=argparse.SUPPRESS)
    for f in FOREIGN_FLAGS:
        if f.nargs == 0:
            pw.add_argument(f.flag, dest=f.dest, action="store_true", help=argparse.SUPPRESS)
        else:
            pw.add_argument(f.flag, dest=f.dest, nargs=f.nargs, help=argparse.SUPPRESS)


HELP_DESCRIPTION = """\
Drive a real browser with trusted input: clicks and keys reach the page through the
browser's own input pipeline (event.isTrusted is true).

Start the runtime in one terminal with `trustbridge up` (bridge + headless Chromium; Ctrl-C
stops it), then act from another: `trustbridge open URL`, `trustbridge snapshot`, then
`trustbridge click REF` with a ref from that snapshot. MCP clients run `trustbridge mcp`.
`trustbridge COMMAND --help` describes one command."""

HELP_EPILOG = """\
connection options (every command that talks to a bridge takes them; its own --help lists
only its other options):
  --json               print the raw JSON result ({"ok": ..., "result"|"error": ...})
  --device ID          the browser to act in (default: the only one connected)
  --tab N              the tab to act in (default: the active tab; `trustbridge tabs`)
  --bridge URL         the bridge (default: the one `trustbridge up` runs, found in the
                       state directory); the token goes only to a loopback URL, or to
                       wss:// with --token-file (refused otherwise, exit 2, nothing sent)
  --token-file PATH    file holding the bridge's token (default: the state directory's)
  --ca-file PEM        with a wss:// --bridge: the CA its certificate must chain to
                       (default: the system's trust store)
  --session NAME       work in session NAME, kept between commands (its tabs and current
                       tab); default: a session of this command only
  --session-lease-ms MS  with --session: how long it waits for the next command, ms
                       (default 120000)

The state directory is ~/.local/state/trustbridge, or $TRUSTBRIDGE_HOME.

exit codes: 0 done; 1 the bridge answered with an error (its code and the next step are
printed); 2 bad usage; 3 no bridge reachable (start one with `trustbridge up`); 4 the
action ran but did not reach its target (e.g. another element took the click).

Guides named in the help (docs/*.md) are in trustbridge's source repository; the installed
package has no copy."""

CONNECTION_DESTS = ("device", "tab", "bridge", "token_file", "ca_file", "session",
                    "session_lease_ms")
"""The connection options :data:`HELP_EPILOG` describes once (argparse dests)."""
_GENERIC_HELP = {"device": "device id (default: the only one)",
                 "tab": "tab id (default: the active tab)"}


def _connection_options_once(parser: argparse.ArgumentParser) -> None:
    """Hide a command's connection options from its --help (``trustbridge --help``
    describes them once) and say so in its epilog. A ``--device`` with a meaning of its
    own (pair's, attach's) stays."""
    hidden = []
    for action in parser._actions:
        generic = _GENERIC_HELP.get(action.dest)
        if action.dest in CONNECTION_DESTS and (generic is None or action.help == generic):
            action.help = argparse.SUPPRESS
            hidden.append(action.option_strings[0])
    if hidden:
        parser.epilog = ("connection options (see `trustbridge --help`): "
                         + " ".join(hidden) + ".")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="trustbridge", description=HELP_DESCRIPTION,
                                     epilog=HELP_EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-v", "--verbose", action="store_true", help="log to stderr")
    parser.add_argument("--version", action="version", version=f"trustbridge {package_version()}")
    cli_sessions.add_session_options(parser, top=True)
    for action in parser._actions:  # before the command as well: described in the epilog
        if action.dest in CONNECTION_DESTS:
            action.help = argparse.SUPPRESS
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                title="commands")

    up = sub.add_parser("up", help="run bridge + supervisor + headless browser")
    up.add_argument("--port", type=int, default=None,
                    help=f"port on 127.0.0.1 (default {config.DEFAULT_PORT}, or any free "
                    "port when that one is taken; clients find it in the state directory)")
    up.add_argument("--host", default=config.DEFAULT_HOST, metavar="ADDR",
                    help="address to bind (default 127.0.0.1). Anything else exposes the "
                    "bridge beyond this machine over plain ws:// and needs --plain-ws; "
                    "every peer still needs the token. For other machines prefer "
                    "--tls-listen (docs/deploy.md) or 127.0.0.1 behind a TLS reverse proxy "
                    "(docs/security.md)")
    up.add_argument("--plain-ws", action="store_true",
                    help="accept --host beyond loopback without TLS (a network you trust as "
                    "much as this machine)")
    up.add_argument("--browser", default="chromium", choices=("chromium", "firefox", "camoufox"),
                    help="chromium (default), firefox (Debian firefox-esr) or camoufox "
                    "(after `pip install 'trustbridge[camoufox]'` and `python -m camoufox "
                    "fetch`); see docs/browsers.md")
    up.add_argument("--device", default=None, help="device id (default: the browser name)")
    up.add_argument("--headed", action="store_true",
                    help="show the browser window (default: headless, no window)")
    up.add_argument("--no-driver", action="store_true", help="synthetic input only (labelled)")
    up.add_argument("--humanize", action="store_true",
                    help="a person's rhythm for clicks and typing on refs: eased pointer paths "
                    "to a jittered point, held buttons and keys (off by default; per action: "
                    "humanize in the SDK; docs/browsers.md)")
    up.add_argument("--open", metavar="URL", help="load URL once ready")
    up.add_argument("--allow-file-urls", action="store_true",
                    help="let agents load file: URLs (refused by default: docs/security.md)")
    up.add_argument("--tls-listen", metavar="ADDR:PORT",
                    help="also listen on ADDR:PORT over wss:// for devices and clients on "
                    "other machines (needs --tls-cert and --tls-key; devices join with "
                    "`trustbridge device` and a credential from `trustbridge device-token "
                    "issue`): docs/deploy.md")
    up.add_argument("--tls-cert", metavar="PEM", help="certificate chain for --tls-listen")
    up.add_argument("--tls-key", metavar="PEM", help="private key for --tls-listen")
    up.add_argument("--no-browser", action="store_true",
                    help="run the bridge alone, for remote devices (no local browser)")

    demo = sub.add_parser("demo", help="bring everything up and act on a local page")
    demo.add_argument("--json", action="store_true",
                      help="print the run as one JSON object instead of the readable report")

    mcp = sub.add_parser("mcp", help="serve the MCP tools (stdio, or --http PORT)")
    mcp.add_argument("--http", type=int, metavar="PORT",
                     help="serve streamable HTTP at http://127.0.0.1:PORT/mcp instead of stdio")
    mcp.add_argument("--http-token-file", metavar="PATH",
                     help="with --http: the bearer token clients must send is the one in "
                     "PATH (e.g. the bridge token) instead of the server's own")
    mcp.add_argument("--bridge", help="bridge URL (default: the running bridge's endpoint "
                     "file); never starts a browser of its own when given")
    mcp.add_argument("--token-file", metavar="PATH", help=TOKEN_FILE_HELP)
    mcp.add_argument("--ca-file", metavar="PEM", help=CA_FILE_HELP)
    mcp.add_argument("--bridge-device", metavar="NAME",
                     help="the device (browser) this server's session acts on when the "
                     "bridge has several, e.g. remote devices (docs/deploy.md); browser_tabs "
                     "select moves it. Playwright MCP's --device (emulation) is refused")
    mcp.add_argument("--no-embedded", action="store_true",
                     help="fail instead of starting bridge + browser when none is running")
    mcp.add_argument("--bridge-port", type=int, default=config.DEFAULT_PORT,
                     help="port of the embedded bridge (0: any free port; a taken port "
                     "falls back to a free one)")
    _add_mcp_options(mcp)
    mcp.add_argument("--humanize", action="store_true",
                     help="the embedded browser's driver gives clicks and typing a person's "
                     "rhythm (as `trustbridge up --humanize`; sets TRUSTBRIDGE_HUMANIZE=1 for it)")
    mcp.add_argument("--no-page-state", action="store_true",
                     help="do not append the page snapshot to the results of actions")

    def client(name: str, help_: str, run: Run) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_, description=help_)
        p.add_argument("--json", action="store_true", help="print the raw JSON result")
        p.add_argument("--device", help="device id (default: the only one)")
        p.add_argument("--tab", type=int, help="tab id (default: the active tab)")
        p.add_argument("--bridge", help="bridge URL (default: the running bridge's endpoint "
                       "file); the token goes only to loopback, or to wss:// with --token-file")
        p.add_argument("--token-file", metavar="PATH", help=TOKEN_FILE_HELP)
        p.add_argument("--ca-file", metavar="PEM", help=CA_FILE_HELP)
        cli_sessions.add_session_options(p)
        p.set_defaults(run=run)
        return p

    tok = sub.add_parser("token", help="where the tokens are; --rotate writes a new one")
    tok.add_argument("--rotate", action="store_true",
                     help="replace the token with a new random one (mode 0600); a running "
                     "bridge keeps the old one until restarted")
    tok.add_argument("--mcp-http", action="store_true",
                     help="the token of `trustbridge mcp --http` instead of the bridge's")

    client("doctor", "show devices and their input path", _doctor)
    client("tabs", "list tabs", lambda a, browser, t: browser.tabs_result())
    client("open", "load a URL and wait for its load event",
           lambda a, b, tab: tab.goto(a.url)).add_argument("url")
    snap = client("snapshot", "print the outline with refs",
                  lambda a, b, tab: tab.snapshot_result(mode=a.mode, max_chars=a.max_chars,
                                                        ref=a.ref, cursor=a.cursor))
    snap.add_argument("--mode", choices=["snapshot", "read", "diff"], default="snapshot",
                      help="snapshot (outline with refs), read (visible text) or diff "
                      "(changes since the previous complete snapshot of the tab)")
    snap.add_argument("--max-chars", type=int, help="budget in characters (default 50000)")
    snap.add_argument("--ref", help="only the subtree of this ref")
    snap.add_argument("--cursor", help="the next page of a truncated snapshot")
    c = client("click", "click a ref with the mouse",
               lambda a, b, tab: tab.dblclick(a.ref) if a.double else tab.click(a.ref))
    c.add_argument("ref")
    c.add_argument("--double", action="store_true", help="double click")
    client("hover", "move the mouse over a ref",
           lambda a, b, tab: tab.hover(a.ref)).add_argument("ref")
    t = client("type", "type TEXT into a ref key by key (trusted key events per "
               "character); it does not clear the field (fill replaces the value)",
               lambda a, b, tab: tab.type(a.ref, a.text, submit=a.submit))
    t.add_argument("ref")
    t.add_argument("text")
    t.add_argument("--submit", action="store_true", help="press Enter after")
    f = client("fill", "replace a field's value with VALUE: select all, then VALUE over "
               "it as one edit (Firefox types it key by key); use type for a key event per "
               "character",
               lambda a, b, tab: tab.fill(a.ref, a.value))
    f.add_argument("ref")
    f.add_argument("value")
    p = client("press", "press a key or chord (Enter, Control+A) in the focused element "
               "or --ref", lambda a, b, tab: tab.press(a.key, a.ref))
    p.add_argument("key")
    p.add_argument("--ref", help="focus this ref first (default: the focused element)")
    s = client("select", "choose options of a native <select> by value or label",
               lambda a, b, tab: tab.select(a.ref, a.values))
    s.add_argument("ref")
    s.add_argument("values", nargs="+")
    for name, checked in (("check", True), ("uncheck", False)):
        k = client(name, f"make a checkbox, radio or switch {name}ed (nothing happens if it "
                   "already is)", (lambda a, b, tab: tab.check(a.ref)) if checked
                   else (lambda a, b, tab: tab.uncheck(a.ref)))
        k.add_argument("ref")
    d = client("dialog", "answer the JavaScript dialog (alert, confirm, prompt) that blocks "
               "the page", lambda a, b, tab: tab.handle_dialog(a.answer == "accept", a.text))
    d.add_argument("answer", choices=("accept", "dismiss"))
    d.add_argument("--text", help="the text to answer a prompt() with")
    w = client("wait", "wait a time (--ms) or until a text shows on the page (--text)",
               lambda a, b, tab: tab.wait(ms=a.ms, text=a.text))
    w.add_argument("--ms", type=int, metavar="N", help="wait N milliseconds")
    w.add_argument("--text", metavar="TEXT",
                   help="wait until TEXT is shown on the page (up to 10 s)")
    h = client("human", "hand the tab to a person and wait until they hand it back (prints "
               "the live-view link for them on stderr at once)",
               lambda a, b, tab: tab.request_human(a.reason, timeout=a.timeout))
    h.add_argument("reason", help="what the person should do (shown in the live view)")
    h.add_argument("--timeout", type=float, default=300, metavar="S",
                   help="seconds the person has (default 300; 1-3600)")
    cli_sessions.add_commands(client)
    cli_cdp.add_commands(client)  # cdp: the device's loopback CDP URL (docs/cdp.md)
    cli_attach.add_commands(sub, client, TOKEN_FILE_HELP)  # extension, pair, attach
    cli_code.add_commands(sub, TOKEN_FILE_HELP)  # exec, repl
    cli_remote.add_commands(sub)  # device, device-token (docs/deploy.md)
    for name, command in sub.choices.items():
        if command.get_default("run") is not None or name in ("exec", "repl"):
            _connection_options_once(command)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if args.command == "up":
        return asyncio.run(_cmd_up(args))
    if args.command == "demo":
        return asyncio.run(_cmd_demo(args))
    if args.command == "mcp":
        return asyncio.run(_cmd_mcp(args))
    if args.command == "token":
        return _cmd_token(args)
    if getattr(args, "standalone", None) is not None:  # cli_attach.py's and cli_code.py's
        return args.standalone(args)
    try:
        return asyncio.run(_cmd_client(args))
    except BrokenPipeError:
        # `trustbridge snapshot | head`: the reader left; not an error of ours. Point
        # stdout at /dev/null so the interpreter's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
