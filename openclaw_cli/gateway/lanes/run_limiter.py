"""The global cap on concurrent runs across all lanes (`agents.maxConcurrent`), and the exclusive hold
that work which must not meet a turn (`memory.purge`) takes."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator


class RunLimiter:
    """A counting limit on concurrent runs whose size can change while runs hold it."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.active = 0
        self._held = False  # `exclusive` is held: no run starts
        self._changed = asyncio.Condition()

    async def acquire(self) -> None:
        async with self._changed:
            await self._changed.wait_for(lambda: self.active < self.limit and not self._held)
            self.active += 1

    @contextlib.asynccontextmanager
    async def exclusive(self) -> AsyncIterator[None]:
        """Entered once no run is going, and no run starts until it is left (messages still queue):
        for work that must not meet a turn, like `memory.purge`."""
        async with self._changed:
            await self._changed.wait_for(lambda: not self._held)
            self._held = True
        try:
            async with self._changed:
                await self._changed.wait_for(lambda: self.active == 0)
            yield
        finally:
            async with self._changed:
                self._held = False
                self._changed.notify_all()

    async def release(self) -> None:
        async with self._changed:
            self.active -= 1
            self._changed.notify_all()

    async def resize(self, limit: int) -> None:
        async with self._changed:
            self.limit = limit
            self._changed.notify_all()
