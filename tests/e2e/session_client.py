"""A client in a process of its own, for tests/e2e/test_sessions.py: the test SIGKILLs it
to prove what the bridge does when a session's client dies without closing its connection.

It connects to the bridge named by the environment (``TB_URL``, ``TB_TOKEN``: the token
never goes on a command line), opens session ``--label`` (``--on-disconnect``,
``--lease-ms``), claims tab ``--tab`` with ``tabs.claim``, prints one line ``ready {json}``
(the claim's answer) and renews the session every RENEW_S until killed. Any error is
printed as ``error {json}`` and the process exits 1.

Usage: python tests/e2e/session_client.py --label A --tab 3 [--on-disconnect keep]
[--lease-ms 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository

from trustbridge.bridge.client import BridgeClient
from trustbridge.bridge.protocol.errors import TrustbridgeError

RENEW_S = 0.5
"""How often the client renews its session while it waits to be killed, s."""


async def main(args: argparse.Namespace) -> int:
    client = await BridgeClient.connect(os.environ["TB_URL"], os.environ["TB_TOKEN"])
    try:
        opened = await client.call("session.open", {
            "label": args.label, "onDisconnect": args.on_disconnect, "leaseMs": args.lease_ms})
        claimed = await client.call("tabs.claim", {"tabId": args.tab})
    except TrustbridgeError as err:
        print("error", json.dumps(err.to_payload().model_dump()), flush=True)
        return 1
    print("ready", json.dumps({"session": opened["label"], "tabs": claimed["tabs"]}),
          flush=True)
    while True:  # until SIGKILL; renewing, so the lease runs from (about) the kill
        await asyncio.sleep(RENEW_S)
        await client.call("session.renew", {})


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--label", required=True)
    parser.add_argument("--tab", type=int, required=True)
    parser.add_argument("--on-disconnect", choices=("stop", "keep"), default="stop")
    parser.add_argument("--lease-ms", type=int, default=120_000)
    sys.exit(asyncio.run(main(parser.parse_args())))
