"""What measuring an evaluate's value in the page costs (issue 32 item 3), as a ratio.

The driver runs a main-world ``driver.evaluate`` through a small wrapper
(supervisor/driver.py ``_MAIN_EVAL_NO_ELEMENT_JS``) that measures the value's JSON in the
page, so one over the 1 MB cap never leaves it. This script times, in one headless
Chromium and in the same run, Playwright's plain ``page.evaluate(expression)`` (the
baseline, what the driver did before) against the wrapper, interleaved round by round so
the machine's load hits both alike, for a small value and one just under the cap, and
prints the median of each and their ratio. Not a test (no timing asserts in tests).

    python scripts/bench_evaluate_cap.py [--rounds 200]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from playwright.async_api import async_playwright

from trustbridge.bridge.protocol.limits import RESULT_CAP_BYTES
from trustbridge.supervisor.driver import _MAIN_EVAL_NO_ELEMENT_JS, _normalised


async def main(rounds: int, executable: str) -> None:
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=executable)
        try:
            page = await browser.new_page()
            await page.set_content("<p>bench</p>")
            for label, size in (("small value (10 chars)", 10),
                                ("value near the cap (900 kB)", 900_000)):
                expression = f"() => 'y'.repeat({size})"
                source = _normalised(expression)
                plain: list[float] = []
                wrapped: list[float] = []
                for _ in range(rounds):
                    started = time.perf_counter()
                    await page.evaluate(expression)
                    plain.append(time.perf_counter() - started)
                    started = time.perf_counter()
                    await page.evaluate(_MAIN_EVAL_NO_ELEMENT_JS,
                                        [source, RESULT_CAP_BYTES, "bench"])
                    wrapped.append(time.perf_counter() - started)
                base, ours = statistics.median(plain), statistics.median(wrapped)
                print(f"{label}: plain {base * 1000:.2f} ms, measured {ours * 1000:.2f} ms, "
                      f"ratio {ours / base:.2f}")
        finally:
            await browser.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--executable", default="/usr/bin/chromium")
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.executable))
