"""Watch openclaw.json (or openclaw.toml): a valid change applies to the running gateway, an invalid one is logged and the
running settings are kept (the error shows in `status`).

The file is polled (stat every `gateway.configPollMs`): editors replace files by rename, and a stat of
one file is cheaper and more predictable than an inotify watch that must follow renames.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from openclaw_cli.core.errors import ConfigError

if TYPE_CHECKING:
    from openclaw_cli.config.loading import Settings

log = logging.getLogger("openclaw.gateway")
Signature = tuple[int, int, int] | None
RESTART_KEYS = ("port", "bind")


def signature(path: Path) -> Signature:
    try:
        stat = path.stat()
    except OSError:
        return None
    return (stat.st_mtime_ns, stat.st_size, stat.st_ino)


class ConfigWatcher:
    def __init__(
        self,
        path: Path,
        env: Mapping[str, str],
        apply: Callable[[Settings], Awaitable[None]],
        reject: Callable[[str], None],
        current: Callable[[], Settings],
    ) -> None:
        self.path = path
        self.env = env
        self.apply = apply
        self.reject = reject
        self.current = current
        self.seen = self._signature()

    def _signature(self) -> tuple[Signature, ...]:
        # openclaw.json and openclaw.toml both: a user may move from one to the other, or add the second
        from openclaw_cli.config.toml_file import config_files

        return tuple(signature(path) for path in config_files(self.path))

    async def check(self) -> bool | None:
        """Reload if the file changed: True applied, False rejected, None unchanged."""
        from openclaw_cli.config.loading import load_settings
        from openclaw_cli.config.toml_file import current_config

        now = self._signature()
        if now == self.seen:
            return None
        self.seen = now
        self.path = current_config(self.path)
        try:
            settings = await asyncio.to_thread(load_settings, self.path, self.env)
        except ConfigError as exc:
            message = exc.message + (f" ({exc.hint})" if exc.hint else "")
            log.error("%s changed but is not valid; keeping the running config: %s", self.path.name, message)
            self.reject(message)
            return False
        old = self.current().gateway
        for key in RESTART_KEYS:
            if getattr(old, key) != getattr(settings.gateway, key):
                log.warning("gateway.%s changed: it applies at the next start of the gateway", key)
        await self.apply(settings)
        log.info("%s reloaded", self.path.name)
        return True

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.current().gateway.config_poll_ms / 1000)
            try:
                await self.check()
            except Exception:  # noqa: BLE001 - the watcher must outlive one bad reload
                log.exception("reloading %s failed", self.path.name)
