"""trustbridge supervisor: launches the browser, stamps frame tokens, runs the input driver."""

if __name__ in ("bridge", "supervisor"):
    # A clone's top-level folder imported by its old name: the packages are trustbridge.*
    # now (issue 34 item 2), and a second copy of these modules under the old name would
    # run beside the real one.
    raise ImportError(
        f"`{__name__}` is not importable by that name any more: trustbridge's packages "
        f"live under `trustbridge` (`from trustbridge import Browser`, was bridge.sdk; "
        f"`from trustbridge import SyncBrowser`, was bridge.sync_sdk; "
        f"`trustbridge.{__name__}.<module>` for the rest; the CLI is `trustbridge` or "
        f"`python -m trustbridge`)", name=__name__)
