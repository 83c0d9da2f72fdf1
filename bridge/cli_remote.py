"""``trustbridge device`` and ``trustbridge device-token``: browsers on other machines.

- ``trustbridge device --bridge wss://HOST:PORT --credential-file F --ca-file CA.pem
  --name NAME [--browser chromium|firefox|camoufox] [--headed] ...`` runs, on the
  device's machine, what ``trustbridge up`` runs beside the bridge: a supervisor, its
  browser and the extension. The driver and (through a loopback relay) the extension
  reach the bridge over TLS, checking its certificate against ``--ca-file``, and say hello
  with the device credential, never the bridge token (supervisor/remote.py).
- ``trustbridge device-token issue NAME | revoke NAME | list`` on the bridge's machine:
  the credentials (bridge/device_tokens.py). ``issue`` prints the new credential once, or
  writes it to ``--out FILE`` (mode 0600).

The bridge listens for them with ``trustbridge up --tls-listen ADDR:PORT --tls-cert
CERT.pem --tls-key KEY.pem`` (``--no-browser`` for a bridge without a local browser).
docs/deploy.md walks through it.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .device_tokens import DeviceTokens, check_name

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


def add_commands(sub: Any) -> None:
    """Register ``device`` and ``device-token`` with cli.py's subparsers (both set
    ``standalone``: they are no client calls)."""
    dev = sub.add_parser(
        "device", help="run a browser here for a bridge on another machine (wss://)",
        description="Run a supervisor, its browser and the extension on this machine for "
        "the bridge at --bridge (wss:// only), as device --name, with the credential "
        "`trustbridge device-token issue NAME` printed on the bridge's machine. Runs until "
        "Ctrl-C or SIGTERM; reconnects by itself when the network drops (docs/deploy.md).")
    dev.add_argument("--bridge", required=True, metavar="wss://HOST:PORT",
                     help="the bridge's TLS listener (trustbridge up --tls-listen)")
    dev.add_argument("--credential-file", required=True, metavar="PATH",
                     help="file holding this device's credential (not the bridge token)")
    dev.add_argument("--ca-file", metavar="PEM",
                     help="CA the bridge's certificate must chain to (default: the "
                     "system's trust store)")
    dev.add_argument("--name", required=True, help="the device name the credential was "
                     "issued for; agents choose this device with --device NAME")
    dev.add_argument("--browser", default="chromium", choices=("chromium", "firefox", "camoufox"),
                     help="chromium (default), firefox (Debian firefox-esr) or camoufox")
    dev.add_argument("--headed", action="store_true", help="show the browser window")
    dev.add_argument("--viewport", metavar="WxH", help="viewport in CSS px (default 1280x720)")
    dev.add_argument("--user-data-dir", metavar="DIR", help="a profile kept across runs")
    dev.add_argument("--executable-path", metavar="PATH", help="the browser binary")
    dev.set_defaults(standalone=_cmd_device)

    tok = sub.add_parser("device-token", help="issue, revoke or list remote devices' "
                         "credentials (on the bridge's machine)")
    tok_sub = tok.add_subparsers(dest="action", required=True, metavar="ACTION")
    issue = tok_sub.add_parser("issue", help="a new credential for device NAME (replaces "
                               "an earlier one); printed once, or written to --out")
    issue.add_argument("name")
    issue.add_argument("--out", metavar="PATH", help="write it to PATH (mode 0600) instead "
                       "of printing it")
    revoke = tok_sub.add_parser("revoke", help="revoke device NAME's credential: its open "
                                "connections close within 2 s and its hellos are refused")
    revoke.add_argument("name")
    tok_sub.add_parser("list", help="devices that hold a credential, and when it was issued")
    tok.set_defaults(standalone=_cmd_device_token)


def _cmd_device(args: argparse.Namespace) -> int:
    """Run ``python -m supervisor`` in this process with the device's arguments."""
    parts = urlsplit(args.bridge)
    if parts.scheme != "wss" or not parts.hostname:
        print(f"error: --bridge must be a wss:// URL (TLS), not {args.bridge!r}: a device "
              "sends its credential and every page's content over it", file=sys.stderr)
        return EXIT_USAGE
    try:
        check_name(args.name)
        Path(args.credential_file).read_text()
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    from trustbridge.supervisor.__main__ import main as supervisor_main

    argv = ["--bridge-url", args.bridge, "--token-file", args.credential_file,
            "--device", args.name, "--browser", args.browser]
    for flag, value in (("--ca-file", args.ca_file), ("--viewport", args.viewport),
                        ("--user-data-dir", args.user_data_dir),
                        ("--executable-path", args.executable_path)):
        if value:
            argv += [flag, value]
    if args.headed:
        argv.append("--headed")
    if args.verbose:
        argv.append("--verbose")
    return supervisor_main(argv)


def _cmd_device_token(args: argparse.Namespace) -> int:
    tokens = DeviceTokens()
    if args.action == "list":
        records = tokens.records()
        if not records:
            print(f"no device credentials ({tokens.path})")
        for name, rec in sorted(records.items()):
            print(f"{name}\tissued {rec.get('issuedAt')}")
        return EXIT_OK
    if args.action == "revoke":
        if not tokens.revoke(args.name):
            print(f"error: device {args.name!r} holds no credential", file=sys.stderr)
            return EXIT_ERROR
        print(f"revoked the credential of device {args.name!r}: a running bridge closes its "
              "connections within 2 s and refuses it from then on")
        return EXIT_OK
    try:
        credential = tokens.issue(args.name)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.out:
        fd = os.open(args.out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(credential + "\n")
        print(f"wrote the credential of device {args.name!r} to {args.out} (mode 0600); copy "
              "it to the device and pass it with --credential-file", file=sys.stderr)
    else:
        print(credential)
    return EXIT_OK
