"""The embedded default (design.md §7): bridge + supervisor + headless browser, one process tree.

The bridge runs in this process; the supervisor runs as a child process
(``python -m supervisor``), so the two meet only on the wire, and stopping this process
stops the browser too.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import time
import typing
from collections.abc import AsyncIterator, Callable, Mapping

from . import config
from .protocol import errors as E
from .routing import ENV_REQUIRE_TRUSTED_INPUT, RoutingPolicy, parse_device_list
from .server import BridgeServer, TlsListener

if typing.TYPE_CHECKING:
    from .protocol.origins import OriginPolicy

log = logging.getLogger("trustbridge.embedded")

READY_TIMEOUT_S = 60.0
START_FAILED_LINE = b"supervisor: could not start "
"""Start of the stderr line the supervisor says when its browser cannot be launched
(supervisor/__main__.py); its rest goes into the error the agent reads."""
SUPERVISOR_RESTART_WAIT_S = 20
"""What a request during a supervisor restart is told to expect, s: a headless launch
takes 2-10 s on the 2-core dev machine under load (scripts/restart_times.py)."""
RESTARTED_LINE = b"supervisor: browser restarted:"
"""The stderr line the supervisor says after starting a dead browser again
(``RESTARTED_LINE`` of supervisor/__main__.py; counted in :attr:`Embedded.restarts`)."""


class Embedded:
    """A running bridge with one supervised browser.

    Args:
        port: bridge port (0: any free port).
        host: address the bridge binds: 127.0.0.1 unless explicitly told otherwise
            (any other address exposes it beyond this machine; every peer still needs
            the token; see docs/security.md for TLS through a reverse proxy).
        device: device id of the browser.
        browser: browser name passed to the supervisor.
        headless: no window.
        trusted_input: run the input driver (otherwise input is synthetic, labelled so).
        progress: called with short human progress lines while starting.
        allow_file_urls: agents may load ``file:`` URLs (default: $TRUSTBRIDGE_ALLOW_FILE_URLS
            == "1"; bridge/urls.py).
        viewport: ``{width, height}`` of the top-level viewport in CSS px (None: the
            supervisor's 1280x720).
        user_data_dir: a profile kept across runs (None: a fresh temp profile per launch).
        executable_path: the browser binary (None: the installed one).
        origins: which origins the pages may request (bridge/protocol/origins.py): the
            supervisor enforces them on every request and the bridge refuses an agent's
            navigation to a blocked origin before it is sent.
        output_dir: where the browser's produced files are saved (None: its default).
        tls: the bridge's ``wss://`` listener for remote devices
            (:class:`~bridge.server.TlsListener`, docs/deploy.md); None: loopback only.
        local_browser: start a supervised browser here (False: the bridge alone, for
            remote devices; ``device`` and ``browser`` are then unused).
        humanize: the driver gives clicks and typing a person's rhythm
            (``python -m supervisor --humanize``; supervisor/humanize.py).
    """

    def __init__(self, port: int = config.DEFAULT_PORT, device: str = "chromium", *,
                 browser: str = "chromium", headless: bool = True, trusted_input: bool = True,
                 progress: Callable[[str], None] | None = None,
                 host: str = config.DEFAULT_HOST, allow_file_urls: bool | None = None,
                 viewport: Mapping[str, int] | None = None, user_data_dir: str | None = None,
                 executable_path: str | None = None, origins: OriginPolicy | None = None,
                 output_dir: str | None = None, tls: TlsListener | None = None,
                 local_browser: bool = True, humanize: bool = False) -> None:
        self.device = device
        self.local_browser = local_browser
        self.humanize = humanize
        self.browser = browser
        self.headless = headless
        self.trusted_input = trusted_input
        self.progress = progress or (lambda _msg: None)
        self.viewport = dict(viewport) if viewport else None
        self.user_data_dir = user_data_dir
        self.executable_path = executable_path
        self.origins = origins
        self.output_dir = output_dir
        self.token = config.load_or_create_token()
        seeded = parse_device_list(os.environ.get(ENV_REQUIRE_TRUSTED_INPUT))
        self.server = BridgeServer(self.token, host=host, port=port, policy=RoutingPolicy(seeded),
                                   allow_file_urls=allow_file_urls, origins=origins,
                                   operator_token=config.load_or_create_operator_token(),
                                   tls=tls)
        self.child: asyncio.subprocess.Process | None = None
        self.restarts = 0
        """How many times the supervisor said it started its dead browser again."""
        self._stderr_task: asyncio.Task[None] | None = None
        self._start_failure: str | None = None
        self._keeper: asyncio.Task[None] | None = None
        """The supervisor's "could not start" line, for the error an agent reads."""

    @property
    def url(self) -> str:
        """``ws://`` URL local peers (supervisor, CLI, SDK) use: loopback for a wildcard bind."""
        return config.connect_url(self.server.host, self.server.port)

    async def start(self) -> None:
        """Start the bridge, then the supervisor, and wait until the device is ready.

        Raises:
            DeviceNotConnected: the browser did not come up within 60 s (its stderr is
                in the message).
            BadRequest: another live bridge already uses this state directory (its
                endpoint file would be overwritten and CLI/MCP would reach the wrong one).
        """
        other = config.live_endpoint()
        if other is not None:
            raise E.BadRequest(
                f"A bridge is already running at {other.get('url')} (pid {other.get('pid')}) "
                f"with the state directory {config.state_dir()}. Use it, stop it, or give this "
                "one its own TRUSTBRIDGE_HOME.", {"url": other.get("url"), "pid": other.get("pid")})
        await self.server.start()
        # Until the browser is up, a client that joins (another MCP server found the
        # endpoint) is told it is starting, not that no browser exists (issue 32).
        self.server.policy.recovering[self.device] = {
            "part": "browser", "action": "the bridge's owner is starting it",
            "expectedWaitS": SUPERVISOR_RESTART_WAIT_S, "since": time.monotonic(),
            "needsDriver": self.trusted_input}
        config.write_endpoint(self.url)
        self.progress(f"bridge listening on {self.url}")
        if self.server.remote_url is not None:
            self.progress(f"bridge listening for remote devices on {self.server.remote_url} "
                          "(TLS; device credentials: trustbridge device-token)")
        if not self.local_browser:  # the bridge alone, for remote devices
            self.server.policy.recovering.pop(self.device, None)
            return
        try:
            await self._spawn_supervisor()
            await self._wait_ready()
        finally:
            self.server.policy.recovered(self.device)
            if self.child is None or self.child.returncode is not None:
                self.server.policy.recovering.pop(self.device, None)

    def keep_supervisor(self, limit: int = 3, window_s: float = 300.0) -> None:
        """Start a dead supervisor again by itself, on the same bridge (so the other
        clients' sessions stay), at most ``limit`` times within ``window_s`` s; after
        that it stays dead and :attr:`child` says so. Used by ``trustbridge mcp``;
        ``trustbridge up`` runs its own loop (bridge/cli.py)."""
        if self._keeper is None or self._keeper.done():
            self._keeper = asyncio.create_task(self._keep(limit, window_s))

    async def _keep(self, limit: int, window_s: float) -> None:
        deaths: list[float] = []
        while self.child is not None:
            await self.child.wait()
            now = time.monotonic()
            deaths = [t for t in deaths if now - t < window_s] + [now]
            if len(deaths) > limit:
                log.error("the supervisor died %d times within %.0f s; not starting it "
                          "again", len(deaths), window_s)
                return
            self.progress("the browser's supervisor exited; starting it again")
            try:
                await self.restart_supervisor()
            except E.TrustbridgeError as err:
                self.progress(str(err))

    async def restart_supervisor(self) -> None:
        """Start the supervisor again after it died (``trustbridge up``, issue 32 item 2),
        on the same bridge and device, and wait until the device is ready. While it
        starts, every request for the device answers that its supervisor is being
        restarted and how long that is expected to take (RoutingPolicy.recovering).

        Raises:
            DeviceNotConnected: the browser did not come up (as :meth:`start`).
        """
        policy = self.server.policy
        self.server.new_browser.add(self.device)  # its tab ids may repeat the old ones
        policy.recovering[self.device] = {
            "part": "supervisor", "action": "the bridge's owner is starting the supervisor "
            "and its browser again; the tabs and refs from before are gone",
            "expectedWaitS": SUPERVISOR_RESTART_WAIT_S, "since": time.monotonic(),
            "needsDriver": self.trusted_input}
        if self._stderr_task is not None:
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(self._stderr_task, 2)
        from trustbridge.supervisor.extension_copy import sweep_stale_copies

        sweep_stale_copies()  # the dead one's extension copy (with the token) and profile
        self._start_failure = None
        try:
            await self._spawn_supervisor()
            await self._wait_ready()
        finally:
            policy.recovered(self.device)
            if self.child is None or self.child.returncode is not None:
                policy.recovering.pop(self.device, None)
        self.restarts += 1  # its tabs and refs are gone, as after a browser restart

    async def _spawn_supervisor(self) -> None:
        # The token goes down a pipe, not the environment: a child's environment is
        # inherited by Playwright's driver, the browser and its crash handlers, and is
        # readable in /proc/<pid>/environ (issue 13 item 9).
        env = {k: v for k, v in os.environ.items() if k != "TRUSTBRIDGE_TOKEN"}
        self.progress(f"starting {self.browser} ({'headless' if self.headless else 'headed'})")
        self.child = await asyncio.create_subprocess_exec(
            *self.supervisor_args(), env=env, stdin=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            start_new_session=True)
        assert self.child.stdin is not None and self.child.stderr is not None
        self._stderr_task = asyncio.create_task(self._relay_stderr(self.child.stderr))
        self.child.stdin.write(self.token.encode() + b"\n")
        with contextlib.suppress(ConnectionError):
            await self.child.stdin.drain()
        # stdin stays open: its end-of-file, when this process ends in any way (SIGKILL
        # included), tells the supervisor to close its browser (supervisor/parent.py).

    def supervisor_args(self) -> list[str]:
        """The ``python -m supervisor`` command line of this launch (the token is not in
        it: it goes down stdin)."""
        args = [sys.executable, "-m", "trustbridge.supervisor", "--bridge-url", self.url,
                "--device", self.device, "--browser", self.browser, "--exit-with-parent",
                "--token-file", "-"]
        if not self.headless:
            args.append("--headed")
        if self.humanize:  # a person's rhythm for clicks and typing (supervisor/humanize.py)
            args.append("--humanize")
        if not self.trusted_input:
            args.append("--no-driver")
        if self.viewport:
            args += ["--viewport", f"{self.viewport['width']}x{self.viewport['height']}"]
        if self.user_data_dir:
            args += ["--user-data-dir", self.user_data_dir]
        if self.executable_path:
            args += ["--executable-path", self.executable_path]
        if self.output_dir:
            args += ["--output-dir", self.output_dir]
        if self.origins is not None:
            args += self.origins.to_args()
        return args

    async def _relay_stderr(self, stream: asyncio.StreamReader) -> None:
        """Pass the supervisor's stderr through to ours, counting its restart lines."""
        out = getattr(sys.stderr, "buffer", None)
        while line := await stream.readline():
            if line.startswith(START_FAILED_LINE):
                self._start_failure = line[len(START_FAILED_LINE):].decode(errors="replace")\
                    .strip()[:600]
            if line.startswith(RESTARTED_LINE):
                self.restarts += 1
                self.progress("the browser died and was started again; its tabs are gone")
            if out is not None:
                with contextlib.suppress(Exception):
                    out.write(line)
                    out.flush()

    async def _wait_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        announced: set[str] = set()
        policy = self.server.policy
        while time.monotonic() < deadline:
            if self.child is not None and self.child.returncode is not None:
                if self._stderr_task is not None:  # its last words name the cause
                    with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                        await asyncio.wait_for(asyncio.shield(self._stderr_task), 2)
                cause = f" It said: {self._start_failure}" if self._start_failure else \
                    " See its messages above."
                raise E.DeviceNotConnected(
                    f"The supervisor exited with code {self.child.returncode} before the "
                    f"browser was ready.{cause}", {"browser": self.browser},
                    next_step=f"Tell the user that {self.browser} could not be started and "
                    "why (above); once fixed, the next call starts it again.")
            ext = self.device in policy.extensions
            drv = self.device in policy.drivers
            if ext and "ext" not in announced:
                announced.add("ext")
                self.progress("extension connected")
            if drv and "drv" not in announced:
                announced.add("drv")
                self.progress("input driver online (trusted input)")
            if ext and (drv or not self.trusted_input):
                return
            await asyncio.sleep(0.05)
        # Its own next step: the generic one ("run `trustbridge up`") is for a bridge that
        # is not running, not for the browser this process was starting.
        raise E.DeviceNotConnected(
            f"The browser was not ready within {READY_TIMEOUT_S:.0f} s.", {"browser": self.browser},
            next_step=f"Tell the user that {self.browser} did not start in time (its messages "
            "are on this server's stderr); the next call tries to start it again.")

    async def stop(self) -> None:
        """Stop the supervisor (SIGTERM, then SIGKILL after 10 s) and the bridge, and
        remove what a killed supervisor left in the temp dir.

        The bridge first announces its shutdown (:meth:`BridgeServer.begin_shutdown`) and
        its endpoint file goes, so no client attaches to it while its browser is closed
        (issue 32 item 1)."""
        config.clear_endpoint()
        if self._keeper is not None and not self._keeper.done():
            self._keeper.cancel()
            with contextlib.suppress(BaseException):
                await self._keeper
        with contextlib.suppress(Exception):
            await self.server.begin_shutdown()
        if self.child is not None and self.child.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.child.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.child.wait(), 10)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.child.pid, signal.SIGKILL)
                await self.child.wait()
        if self.child is not None:
            # A supervisor killed before its own cleanup leaves its extension copy (with
            # the token) and profile in the temp dir; its owner is dead now.
            from trustbridge.supervisor.extension_copy import sweep_stale_copies

            sweep_stale_copies()
        if self._stderr_task is not None:
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(self._stderr_task, 2)
        await self.server.stop()
        config.clear_endpoint()

    async def wait_closed(self) -> int | None:
        """Wait until the supervisor exits; returns its exit code (without a local browser:
        never returns, the bridge runs until stopped)."""
        if not self.local_browser:
            await asyncio.Event().wait()
        if self.child is None:
            return None
        return await self.child.wait()


@contextlib.asynccontextmanager
async def embedded(**kwargs: object) -> AsyncIterator[Embedded]:
    """``async with embedded() as emb:`` start and always stop an :class:`Embedded`."""
    emb = Embedded(**kwargs)  # type: ignore[arg-type]
    try:
        await emb.start()
        yield emb
    finally:
        await emb.stop()
