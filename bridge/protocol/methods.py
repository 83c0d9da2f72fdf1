"""Every wire method and its facts, in one table (docs/design.md §2, §10).

Each module that needs to know something about a method reads it here: the routing
policy (who serves it, whether it is input, whether it may run under a dialog), the
executor (whether it queues per tab), the server (which result model to validate), the
client (whether losing its answer is "uncertain"), and ``scripts/gen_schema.py``.

A method is served by one kind of peer:

- ``bridge``: answered by the bridge itself (``devices.list``, ``request.cancel``);
- ``extension``: the device's extension answers it;
- ``driver``: the device's input driver answers it (it holds the Playwright page);
- ``route``: a client method whose peers the routing policy picks per request
  (``page.act`` / ``page.batch`` go to the extension or, for trusted input, to the
  extension then the driver).

``client`` says whether an agent may send it (the other methods are the bridge's own
calls to its peers).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from . import models as M
from . import results as R

ServedBy = Literal["bridge", "extension", "driver", "route"]


@dataclass(frozen=True)
class MethodFacts:
    """What is true of one wire method.

    Attributes:
        params: the params model every request is validated against.
        result: the result model every answer is validated against, where it arrives
            (bridge/protocol/peer.py) and before the bridge sends it to a client
            (bridge/server.py). Result models allow fields they do not name
            (bridge/protocol/results.py).
        served_by: which peer answers it (see the module docstring).
        client: an agent may call it.
        input: it is input: after it was sent, a lost answer means the action may have
            reached the page (BROWSER_OPERATION_UNCERTAIN, design.md §2 rule 7), never
            "not connected", and it is never repeated.
        serialized: it runs one at a time per device and tab, in arrival order.
        under_dialog: it may still run while a JavaScript dialog blocks the tab it names.
        escapes_dialog: it runs even on a tab a dialog blocks, because it ends or avoids
            that tab's page (close it, load another document, open a new tab): an alert
            loop can always be escaped (bridge/dialogs.py).
        tabs_api_only: the extension's background serves it with the tabs API alone,
            never asking the page, so a dialog on the page cannot hold it up.
        driver_method: for a client method the driver serves, the driver's own method.
        waits_for_load: its answer waits for a page load, which a JavaScript dialog can
            block (the executor then answers early with the dialog).
        tab_effect: what its result's ``tabId`` is afterwards: ``"select"`` the device's
            active tab, ``"close"`` a tab that no longer exists.
        reports_late_tabs: its result carries ``newTabs`` for tabs the addressed tab
            opened after its last input action's result went out (bridge/events.py).
        frameless: a driver method that needs no frame of a tab (the executor asks the
            extension nothing; ``cdp.endpoint``).
    """

    params: type[BaseModel]
    result: type[BaseModel] | None = None
    served_by: ServedBy = "extension"
    client: bool = False
    input: bool = False
    serialized: bool = False
    under_dialog: bool = False
    escapes_dialog: bool = False
    tabs_api_only: bool = False
    driver_method: str | None = None
    waits_for_load: bool = False
    tab_effect: Literal["select", "close"] | None = None
    reports_late_tabs: bool = False
    frameless: bool = False


METHODS: dict[str, MethodFacts] = {
    # Client methods.
    "devices.list": MethodFacts(M.EmptyParams, R.DevicesResult, served_by="bridge",
                                client=True, under_dialog=True),
    "tabs.list": MethodFacts(M.DeviceParams, R.TabsListResult, client=True, under_dialog=True),
    "tabs.new": MethodFacts(M.TabNewParams, R.TabResult, client=True, tab_effect="select",
                            waits_for_load=True, escapes_dialog=True),
    "tabs.select": MethodFacts(M.TabIdParams, R.TabResult, client=True, tab_effect="select",
                               tabs_api_only=True, escapes_dialog=True),
    "tabs.close": MethodFacts(M.TabIdParams, R.TabClosedResult, client=True,
                              tab_effect="close", escapes_dialog=True, tabs_api_only=True),
    "page.navigate": MethodFacts(M.NavigateParams, R.NavigateResult, client=True,
                                 serialized=True, waits_for_load=True, escapes_dialog=True),
    "page.history": MethodFacts(M.HistoryParams, R.NavigateResult, client=True,
                                serialized=True, waits_for_load=True),
    "page.snapshot": MethodFacts(M.SnapshotParams, R.SnapshotResult, client=True,
                                 reports_late_tabs=True),
    "page.wait": MethodFacts(M.WaitParams, R.WaitResult, client=True,  # not input (rule 6)
                             reports_late_tabs=True),
    "page.find": MethodFacts(M.FindParams, R.FindResult, client=True, reports_late_tabs=True),
    "page.act": MethodFacts(M.ActParams, R.ActResult, served_by="route", client=True,
                            input=True, serialized=True),
    "page.batch": MethodFacts(M.BatchParams, R.BatchResult, served_by="route", client=True,
                              input=True, serialized=True),
    "page.dialog": MethodFacts(M.DialogParams, R.DialogResult, served_by="driver",
                               client=True, serialized=True, under_dialog=True,
                               driver_method="driver.dialog"),
    "page.screenshot": MethodFacts(M.ScreenshotParams, R.ScreenshotResult, served_by="driver",
                                   client=True, driver_method="driver.screenshot"),
    "page.evaluate": MethodFacts(M.EvaluateParams, R.EvaluateResult, served_by="driver",
                                 client=True, driver_method="driver.evaluate"),
    "page.console": MethodFacts(M.ConsoleParams, R.ConsoleResult, served_by="driver",
                                client=True, driver_method="driver.console"),
    "page.network": MethodFacts(M.NetworkParams, R.NetworkResult, served_by="driver",
                                client=True, driver_method="driver.network"),
    "page.resize": MethodFacts(M.ResizeParams, R.ResizeResult, served_by="driver",
                               client=True, serialized=True, driver_method="driver.resize"),
    "page.emulateMedia": MethodFacts(M.EmulateMediaParams, R.EmulateMediaResult,
                                     served_by="driver", client=True, serialized=True,
                                     driver_method="driver.emulateMedia"),
    "page.pdf": MethodFacts(M.PdfParams, R.PdfResult, served_by="driver",
                            client=True, driver_method="driver.pdf"),
    "page.tracing": MethodFacts(M.TracingParams, R.TracingResult, served_by="driver",
                                client=True, driver_method="driver.tracing"),
    # The CDP door (issue 19, docs/cdp.md): no page is read, so no frame is resolved.
    "cdp.endpoint": MethodFacts(M.CdpEndpointParams, R.CdpEndpointResult, served_by="driver",
                                client=True, under_dialog=True, frameless=True,
                                driver_method="driver.cdpEndpoint"),
    # Sessions (bridge/sessions.py, docs/sessions.md): answered by the bridge.
    "session.open": MethodFacts(M.SessionOpenParams, R.SessionOpenResult, served_by="bridge",
                                client=True, under_dialog=True),
    "session.renew": MethodFacts(M.EmptyParams, R.SessionRenewResult, served_by="bridge",
                                 client=True, under_dialog=True),
    "session.release": MethodFacts(M.SessionReleaseParams, R.SessionTabsResult,
                                   served_by="bridge", client=True, under_dialog=True),
    "session.handoff": MethodFacts(M.SessionHandoffParams, R.SessionTabsResult,
                                   served_by="bridge", client=True, under_dialog=True),
    "session.stop": MethodFacts(M.SessionStopParams, R.SessionStopResult, served_by="bridge",
                                client=True, under_dialog=True),
    "sessions.list": MethodFacts(M.EmptyParams, R.SessionsListResult, served_by="bridge",
                                 client=True, under_dialog=True),
    "tabs.claim": MethodFacts(M.TabClaimParams, R.SessionTabsResult, served_by="bridge",
                              client=True, under_dialog=True),
    # Pairing a person's own browser (bridge/pairing.py, docs/attach.md).
    "pairing.create": MethodFacts(M.PairingCreateParams, R.PairingCreateResult,
                                  served_by="bridge", client=True, under_dialog=True),
    # A person takes over a tab and hands it back (issue 37, bridge/handover.py).
    "human.request": MethodFacts(M.HumanRequestParams, R.HumanRequestResult,
                                 served_by="bridge", client=True),
    "human.wait": MethodFacts(M.HumanWaitParams, R.HumanWaitResult, served_by="bridge",
                              client=True, under_dialog=True),
    "human.end": MethodFacts(M.HumanEndParams, R.HumanEndResult, served_by="bridge",
                             client=True, under_dialog=True),
    "request.cancel": MethodFacts(M.CancelParams, R.CancelResult, served_by="bridge",
                                  under_dialog=True),
    # The bridge's calls to the extension.
    "page.resolveTarget": MethodFacts(M.ResolveTargetParams, M.ResolveTarget),
    "page.receipt": MethodFacts(M.ReceiptParams, R.ReceiptResult),
    "tabs.probe": MethodFacts(M.TabProbeParams, R.TabProbeResult, tabs_api_only=True,
                              under_dialog=True),
    # The bridge's calls to the driver.
    "driver.act": MethodFacts(M.DriverActParams, M.DriverActResult, served_by="driver",
                              input=True),
    "driver.dialog": MethodFacts(M.DriverDialogParams, R.DialogResult, served_by="driver"),
    "driver.screenshot": MethodFacts(M.DriverScreenshotParams, R.ScreenshotResult,
                                     served_by="driver"),
    "driver.evaluate": MethodFacts(M.DriverEvaluateParams, R.EvaluateResult,
                                   served_by="driver"),
    "driver.console": MethodFacts(M.DriverConsoleParams, R.ConsoleResult, served_by="driver"),
    "driver.network": MethodFacts(M.DriverNetworkParams, R.NetworkResult, served_by="driver"),
    "driver.resize": MethodFacts(M.DriverResizeParams, R.ResizeResult, served_by="driver"),
    "driver.emulateMedia": MethodFacts(M.DriverEmulateMediaParams, R.EmulateMediaResult,
                                       served_by="driver"),
    "driver.pdf": MethodFacts(M.DriverPdfParams, R.PdfResult, served_by="driver"),
    "driver.tracing": MethodFacts(M.DriverTracingParams, R.TracingResult, served_by="driver"),
    "driver.cdpEndpoint": MethodFacts(M.DriverCdpEndpointParams, R.CdpEndpointResult,
                                      served_by="driver"),
    "driver.cdpClose": MethodFacts(M.DriverCdpCloseParams, M.DriverCdpCloseResult,
                                   served_by="driver"),
    "driver.fileChooser": MethodFacts(M.DriverFileChooserParams, M.DriverFileChooserResult,
                                      served_by="driver"),
    "driver.download": MethodFacts(M.DriverDownloadParams, M.DriverDownloadResult,
                                   served_by="driver"),
    "driver.pointer": MethodFacts(M.DriverPointerParams, M.DriverPointerResult,
                                  served_by="driver"),
    "driver.blankPage": MethodFacts(M.DriverBlankPageParams, M.DriverBlankPageResult,
                                    served_by="driver"),
    "driver.axFacts": MethodFacts(M.DriverAxFactsParams, M.DriverAxFactsResult,
                                  served_by="driver"),
    "driver.liveStart": MethodFacts(M.DriverLiveStartParams, M.DriverLiveStartResult,
                                    served_by="driver"),
    "driver.liveInput": MethodFacts(M.DriverLiveInputParams, M.DriverLiveInputResult,
                                    served_by="driver"),
    "driver.liveStop": MethodFacts(M.DriverLiveStopParams, M.DriverLiveStopResult,
                                   served_by="driver"),
    "driver.navigation": MethodFacts(M.DriverNavigationParams, M.DriverNavigationResult,
                                     served_by="driver"),
}
"""Method name → its facts."""

METHOD_PARAMS: dict[str, type[BaseModel]] = {m: f.params for m, f in METHODS.items()}
"""Method name → params model."""
METHOD_RESULTS: dict[str, type[BaseModel]] = {
    m: f.result for m, f in METHODS.items() if f.result is not None}
"""Method name → result model."""
CLIENT_METHODS = frozenset(m for m, f in METHODS.items() if f.client)
"""Methods an agent may send (``request.cancel`` is a control message, not among them)."""
INPUT_METHODS = frozenset(m for m, f in METHODS.items() if f.input)
"""Input methods (client and driver): a lost answer is uncertain, never retried."""
CLIENT_INPUT_METHODS = INPUT_METHODS & CLIENT_METHODS
"""Client methods that are input (``page.act``, ``page.batch``)."""
DRIVER_METHODS = frozenset(m for m, f in METHODS.items() if f.client and f.served_by == "driver")
"""Client methods only the device's driver can serve."""
SERIALIZED_METHODS = frozenset(m for m, f in METHODS.items() if f.serialized)
"""Client methods that queue per device and tab."""
WAITS_FOR_LOAD = frozenset(m for m, f in METHODS.items() if f.waits_for_load)
"""Client methods whose answer waits for a page load."""
SELECTS_TAB = frozenset(m for m, f in METHODS.items() if f.tab_effect == "select")
"""Methods whose result's ``tabId`` is the device's active tab afterwards."""
CLOSES_TAB = frozenset(m for m, f in METHODS.items() if f.tab_effect == "close")
"""Methods whose result's ``tabId`` is a tab that no longer exists."""
REPORTS_LATE_TABS = frozenset(m for m, f in METHODS.items() if f.reports_late_tabs)
"""Client methods whose result reports tabs opened after the last input's result."""
ALLOWED_UNDER_DIALOG = frozenset(m for m, f in METHODS.items() if f.under_dialog)
"""Methods that may run while a JavaScript dialog blocks the device's page."""
ESCAPES_DIALOG = frozenset(m for m, f in METHODS.items() if f.escapes_dialog)
"""Methods that run even on the tab a JavaScript dialog blocks (they end or avoid it)."""
TABS_API_ONLY = frozenset(m for m, f in METHODS.items() if f.tabs_api_only)
"""Methods the extension serves with the tabs API alone (a blocked page cannot delay them)."""
