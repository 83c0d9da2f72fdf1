"""Building blocks of ``scripts/bench.py``: one module per benchmark (b1_form ... b5_tabs),
the shared stack (bridge + supervised Chromium + page server + MCP clients), statistics,
environment facts and the markdown report."""
