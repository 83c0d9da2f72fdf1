"""``python -m trustbridge``: the ``trustbridge`` command (docs/cli.md)."""

import sys

from trustbridge.bridge.cli import main

sys.exit(main())
