"""Hosts on one machine for remote-device tests and benchmarks: network namespaces joined
by veth pairs to a Linux bridge, a self-signed CA and the processes run inside.

Layout (``Lab``): a Linux bridge in the root namespace with the first address of a /24;
each namespace (the trustbridge bridge's, one per device) gets a veth pair, its end named
``eth0`` inside with the next address, ``lo`` up. Traffic never leaves the machine. The
root namespace is where the test (the agent) runs: it reaches the trustbridge bridge's
``wss://`` listener through the Linux bridge like any other host.

Faults: :meth:`Lab.cut` / :meth:`Lab.restore` set the root-side end of a namespace's veth
down / up (``ip link set``): a pulled cable, for both directions. (No ``tc netem`` delay:
this machine's kernel has no ``sch_netem``, ``tc qdisc add ... netem`` answers "Specified
qdisc kind is unknown"; scripts/remote_bench.py delays with a TCP proxy instead.)

Everything is removed in :meth:`Lab.close` (namespaces, links, processes it started).
Needs root and ``ip``; :func:`unavailable` says why not.
"""

from __future__ import annotations

import ipaddress
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from tests.tlsca import make_ca  # noqa: F401 - the lab's CA, re-exported for its users


def unavailable() -> str | None:
    """Why namespaces cannot be made here (None: they can)."""
    if os.geteuid() != 0:
        return "network namespaces need root (ip netns add)"
    if shutil.which("ip") is None:
        return "the ip command (iproute2) is not installed"
    probe = f"tbprobe{os.getpid() % 100000}"
    done = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if done.returncode != 0:
        return f"ip netns add fails here: {done.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


class Lab:
    """Namespaces on one Linux bridge. Use as a context manager.

    Args:
        names: one namespace per host, e.g. ``["bridge", "d1", "d2"]``.
    """

    def __init__(self, names: list[str]) -> None:
        tag = os.getpid() % 10000
        self.tag = f"t{tag}"
        self.net = ipaddress.ip_network(f"10.{200 + tag % 50}.{tag % 250}.0/24")
        hosts = self.net.hosts()
        self.gateway = str(next(hosts))
        self.br = f"{self.tag}br"
        self.ns: dict[str, str] = {}
        self.addr: dict[str, str] = {}
        self.host_if: dict[str, str] = {}
        self._procs: list[subprocess.Popen[bytes]] = []
        self._names = names
        self._hosts = hosts

    def __enter__(self) -> Lab:
        try:
            _ip("link", "add", self.br, "type", "bridge")
            _ip("addr", "add", f"{self.gateway}/24", "dev", self.br)
            _ip("link", "set", self.br, "up")
            for i, name in enumerate(self._names):
                ns, host_if = f"{self.tag}-{name}", f"{self.tag}v{i}"
                addr = str(next(self._hosts))
                _ip("netns", "add", ns)
                self.ns[name] = ns
                _ip("link", "add", host_if, "type", "veth", "peer", "name", "eth0",
                    "netns", ns)
                self.host_if[name] = host_if
                _ip("link", "set", host_if, "master", self.br)
                _ip("link", "set", host_if, "up")
                _ip("-n", ns, "addr", "add", f"{addr}/24", "dev", "eth0")
                _ip("-n", ns, "link", "set", "eth0", "up")
                _ip("-n", ns, "link", "set", "lo", "up")
                self.addr[name] = addr
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(self, name: str, argv: list[str], **kwargs: object) -> subprocess.Popen[bytes]:
        """Start ``argv`` inside namespace ``name`` (its own process group; stopped by
        :meth:`close` if still running)."""
        proc = subprocess.Popen(["ip", "netns", "exec", self.ns[name], *argv],
                                start_new_session=True, **kwargs)  # type: ignore[call-overload]
        self._procs.append(proc)
        return proc

    def cut(self, name: str) -> None:
        """Pull the cable of host ``name``: its veth's root-side end goes down."""
        _ip("link", "set", self.host_if[name], "down")

    def restore(self, name: str) -> None:
        _ip("link", "set", self.host_if[name], "up")

    @staticmethod
    def stop(proc: subprocess.Popen[bytes], timeout_s: float = 15.0) -> None:
        """SIGTERM ``proc``'s group, SIGKILL after ``timeout_s``."""
        if proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        except ProcessLookupError:
            pass

    def close(self) -> None:
        """Stop the processes, delete the namespaces and the Linux bridge (each step
        tolerates what is already gone)."""
        for proc in reversed(self._procs):
            self.stop(proc)
        for ns in self.ns.values():
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        for host_if in self.host_if.values():
            subprocess.run(["ip", "link", "del", host_if], capture_output=True)
        subprocess.run(["ip", "link", "del", self.br], capture_output=True)
        self.ns.clear()


def wait_for(predicate, timeout_s: float, step_s: float = 0.2):  # type: ignore[no-untyped-def]
    """Poll ``predicate()`` until it returns something truthy; return it (None on timeout)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step_s)
    return None
