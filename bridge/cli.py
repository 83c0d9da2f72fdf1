"""``trustbridge`` command line.

Commands:
    up        run the embedded default (bridge + supervisor + headless Chromium) until Ctrl-C
    demo      the main job in one go: bring everything up, act on a local page, print it all
    doctor    what is connected: devices, extension, driver, trusted-input promise
    tabs      list tabs
    open URL  load URL in the active tab (or --tab)
    snapshot  print the accessibility-style outline with refs
    click REF | hover REF | type REF TEXT [--submit] | press KEY [--ref REF]
    wait      --ms N or --text TEXT

Every client command takes ``--json`` (print the raw result) and ``--device``/``--tab``.

Exit codes: 0 success; 1 the bridge answered with an error (its code is printed);
2 bad usage; 3 no bridge reachable (start one with ``trustbridge up``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal
import sys
from typing import Any

from . import config
from .client import BridgeClient
from .protocol import errors as E

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_NO_BRIDGE = 0, 1, 2, 3


def _progress(msg: str) -> None:
    print(f"trustbridge: {msg}", file=sys.stderr, flush=True)


async def _cmd_up(args: argparse.Namespace) -> int:
    from .embedded import Embedded

    emb = Embedded(port=args.port, device=args.device or "chromium", headless=not args.headed,
                   trusted_input=not args.no_driver, progress=_progress)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await emb.start()
    except E.TrustbridgeError as err:
        _progress(str(err))
        await emb.stop()
        return EXIT_ERROR
    except OSError as exc:
        _progress(f"cannot listen on port {args.port}: {exc} (another bridge running?)")
        await emb.stop()
        return EXIT_ERROR
    if args.open:
        async with await BridgeClient.connect(emb.url, emb.token) as client:
            res = await client.call("page.navigate", {"url": args.open})
            _progress(f"opened {res.get('url')}")
    _progress(f"ready: device {emb.device} on {emb.url}. Ctrl-C stops everything.")
    child_done = asyncio.create_task(emb.wait_closed())
    stopper = asyncio.create_task(stop.wait())
    await asyncio.wait([child_done, stopper], return_when=asyncio.FIRST_COMPLETED)
    stopper.cancel()
    _progress("stopping")
    await emb.stop()
    return EXIT_OK


async def _cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    return await run_demo(json_out=args.json, progress=_progress)


def _client_request(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    base: dict[str, Any] = {"device": args.device, "tabId": args.tab}
    cmd = args.command
    if cmd == "doctor":
        return "devices.list", {}
    if cmd == "tabs":
        return "tabs.list", {"device": args.device}
    if cmd == "open":
        return "page.navigate", {**base, "url": args.url}
    if cmd == "snapshot":
        return "page.snapshot", base
    if cmd == "wait":
        return "page.wait", {**base, "ms": args.ms, "text": args.text}
    actions: dict[str, dict[str, Any]] = {
        "click": {"kind": "click", "clickCount": 2 if getattr(args, "double", False) else 1},
        "hover": {"kind": "hover"},
        "type": {"kind": "type", "text": getattr(args, "text", ""),
                 "submit": getattr(args, "submit", False)},
        "press": {"kind": "press", "key": getattr(args, "key", "")},
    }
    return "page.act", {**base, "ref": getattr(args, "ref", None), "action": actions[cmd]}


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
        for d in result.get("devices", []):
            path = ("trusted" if d["driver"] else "UNAVAILABLE (driver offline)") \
                if d["requiresTrustedInput"] else "synthetic (no driver ever connected)"
            lines.append(
                f"device {d['device']}: extension {'connected' if d['extension'] else 'MISSING'}, "
                f"driver {'online' if d['driver'] else 'offline'}, input {path}"
                + (f", browser {d['browser']}" if d.get("browser") else ""))
        return "\n".join(lines) or "no devices connected"
    if cmd == "open":
        return f"opened {result.get('url')} (tab {result.get('tabId')}): {result.get('title', '')}"
    if "inputPath" in result:
        return f"{cmd} ok — inputPath={result['inputPath']} tab={result.get('tabId')}"
    return json.dumps(result)


async def _cmd_client(args: argparse.Namespace) -> int:
    method, params = _client_request(args)
    try:
        client = await BridgeClient.connect(args.bridge)
    except E.DeviceNotConnected as err:
        print(f"error: {err.message}", file=sys.stderr)
        return EXIT_NO_BRIDGE
    except E.TrustbridgeError as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_ERROR
    async with client:
        try:
            result = await client.call(method, params)
        except E.TrustbridgeError as err:
            if args.json:
                print(json.dumps({"ok": False, "error": err.to_payload().model_dump(mode="json")}))
            else:
                print(f"error {err.code.value}: {err.message}", file=sys.stderr)
            return EXIT_ERROR
    print(json.dumps({"ok": True, "result": result}) if args.json else _human(args.command, result))
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="trustbridge", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-v", "--verbose", action="store_true", help="log to stderr")
    sub = parser.add_subparsers(dest="command", required=True)

    up = sub.add_parser("up", help="run bridge + supervisor + headless browser")
    up.add_argument("--port", type=int, default=config.DEFAULT_PORT)
    up.add_argument("--device", default="chromium")
    up.add_argument("--headed", action="store_true")
    up.add_argument("--no-driver", action="store_true", help="synthetic input only (labelled)")
    up.add_argument("--open", metavar="URL", help="load URL once ready")

    demo = sub.add_parser("demo", help="bring everything up and act on a local page")
    demo.add_argument("--json", action="store_true")

    def client(name: str, help_: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_)
        p.add_argument("--json", action="store_true", help="print the raw JSON result")
        p.add_argument("--device", help="device id (default: the only one)")
        p.add_argument("--tab", type=int, help="tab id (default: the active tab)")
        p.add_argument("--bridge", help="bridge URL (default: the running bridge's endpoint file)")
        return p

    client("doctor", "show devices and their input path")
    client("tabs", "list tabs")
    client("open", "load a URL").add_argument("url")
    client("snapshot", "print the outline with refs")
    c = client("click", "click a ref")
    c.add_argument("ref")
    c.add_argument("--double", action="store_true")
    client("hover", "hover a ref").add_argument("ref")
    t = client("type", "type text into a ref")
    t.add_argument("ref")
    t.add_argument("text")
    t.add_argument("--submit", action="store_true", help="press Enter after")
    p = client("press", "press a key")
    p.add_argument("key")
    p.add_argument("--ref")
    w = client("wait", "wait for time or text")
    w.add_argument("--ms", type=int)
    w.add_argument("--text")
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
    return asyncio.run(_cmd_client(args))


if __name__ == "__main__":
    sys.exit(main())
