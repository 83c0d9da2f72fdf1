"""When the Supervisor starts a dead browser again (supervisor/runner.py), without a
browser: the launch is replaced by a counter."""

from __future__ import annotations

import asyncio

from trustbridge.supervisor import runner
from trustbridge.supervisor.runner import RESTART_LIMIT, Supervisor


class _Context:
    def on(self, *_a: object) -> None:
        pass


def _supervisor(**kwargs: object) -> tuple[Supervisor, list[int]]:
    sup = Supervisor("ws://127.0.0.1:9", "tok", "dev", trusted_input=False, **kwargs)
    launches: list[int] = []

    async def open_browser() -> None:
        launches.append(1)
        sup.context = _Context()  # type: ignore[assignment]

    sup._open_browser = open_browser  # type: ignore[method-assign]
    return sup, launches


async def test_a_dead_headless_browser_is_started_again_up_to_the_limit() -> None:
    """RESTART_LIMIT deaths within the window are restarted (counted, told); the next
    one gives up and sets ``gone``."""
    sup, launches = _supervisor()
    told: list[int] = []
    sup.on_restart = told.append
    for _ in range(RESTART_LIMIT):
        sup.context = _Context()  # type: ignore[assignment]
        sup._browser_closed(sup.context)
        await sup._restart_task
    assert (len(launches), sup.restarts, told) == (RESTART_LIMIT, RESTART_LIMIT,
                                                   list(range(1, RESTART_LIMIT + 1)))
    assert not sup.gone.is_set()
    sup._browser_closed(sup.context)
    await sup._restart_task
    assert sup.gone.is_set() and len(launches) == RESTART_LIMIT


async def test_deaths_outside_the_window_do_not_count(monkeypatch) -> None:
    """Deaths further apart than RESTART_WINDOW_S are each restarted."""
    monkeypatch.setattr(runner, "RESTART_WINDOW_S", 0.0)
    sup, launches = _supervisor()
    sup.context = _Context()  # type: ignore[assignment]
    for _ in range(RESTART_LIMIT + 2):
        sup._browser_closed(sup.context)
        await sup._restart_task
        await asyncio.sleep(0.001)
    assert len(launches) == RESTART_LIMIT + 2 and not sup.gone.is_set()


async def test_a_headed_browser_that_closes_is_not_started_again() -> None:
    """Headed (its user may have closed it): gone at once, no launch."""
    sup, launches = _supervisor(headless=False)
    sup.context = _Context()  # type: ignore[assignment]
    sup._browser_closed(sup.context)
    assert sup.gone.is_set() and launches == [] and sup._restart_task is None


async def test_a_close_during_stop_is_not_a_death() -> None:
    """stop() closes the context itself: no restart, not gone."""
    sup, launches = _supervisor()
    sup.context = _Context()  # type: ignore[assignment]
    sup._stopping = True
    sup._browser_closed(sup.context)
    assert launches == [] and not sup.gone.is_set() and sup._restart_task is None
