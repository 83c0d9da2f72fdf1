"""The refusal of the names trustbridge's packages had before the ``trustbridge``
namespace (issue 34 item 2): a clone's top-level ``bridge/`` or ``supervisor/`` imported
by its old name would run as a second copy beside ``trustbridge.bridge`` /
``trustbridge.supervisor``."""


def refuse_old_name(name: str) -> None:
    """Raise ImportError naming the new import for ``name`` (``bridge`` or ``supervisor``).

    Raises:
        ImportError: always.
    """
    raise ImportError(
        f"`{name}` is not importable by that name any more: trustbridge's packages live "
        "under `trustbridge` (`from trustbridge import Browser`, was bridge.sdk; "
        "`from trustbridge import SyncBrowser`, was bridge.sync_sdk; "
        f"`trustbridge.{name}.<module>` for the rest; the CLI is `trustbridge` or "
        "`python -m trustbridge`)", name=name)
