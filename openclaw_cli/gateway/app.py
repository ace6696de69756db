"""GatewayApp: what the HTTP and WebSocket handlers of one gateway process share (the core, the methods,
the auth failure limiter, the pending-connection limits, the config watcher and the pid file).

Its own module, below server.py (which builds and serves it) and http_api.py / websocket.py (which take
it), so that the handlers need not import the server that imports them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openclaw_cli.core.fsutil import atomic_write_json

if TYPE_CHECKING:
    from starlette.routing import BaseRoute

    from openclaw_cli.config.loading import Settings
    from openclaw_cli.gateway.auth import FailureLimiter
    from openclaw_cli.gateway.channel_host.host import ChannelHost
    from openclaw_cli.gateway.config_watch import ConfigWatcher
    from openclaw_cli.gateway.core import GatewayCore
    from openclaw_cli.gateway.http.limits import PendingConnections
    from openclaw_cli.gateway.rpc.methods import Methods
    from openclaw_cli.gateway.ui.sessions import UiSessions
    from openclaw_cli.scheduler.service import Scheduler


@dataclass
class GatewayApp:
    core: GatewayCore
    methods: Methods
    failures: FailureLimiter
    pending: PendingConnections
    watcher: ConfigWatcher | None = None
    pid_record: dict[str, Any] | None = None  # written to pid_path while serving
    pid_path: Path | None = None
    channels: ChannelHost | None = None
    scheduler: Scheduler | None = None
    # The Control UI (gateway/ui/): its routes under /ui/, and its sign-ins, which WebSockets accept too.
    ui_routes: list[BaseRoute] = field(default_factory=list)
    ui_sessions: UiSessions | None = None

    def write_pid(self) -> None:
        if self.pid_path is not None and self.pid_record is not None:
            atomic_write_json(self.pid_path, self.pid_record)

    def remove_pid(self) -> None:
        # uvicorn re-raises SIGTERM after its shutdown, so code after server.run() may never run: the
        # pid file goes here, at the end of the lifespan.
        with contextlib.suppress(OSError, ValueError):
            if self.pid_path is not None and json.loads(self.pid_path.read_bytes()).get("pid") == os.getpid():
                self.pid_path.unlink()

    def config_rejected(self, message: str) -> None:
        self.core.config_error = message

    async def apply(self, settings: Settings) -> None:
        await self.core.apply_settings(settings)
        await asyncio.to_thread(self.methods.close)  # memory services re-open with the new settings
        auth = settings.gateway.auth
        self.failures.max_failures, self.failures.window = auth.max_failures, auth.window_seconds
        # New deadlines use the new timeout; running ones keep theirs.
        self.pending.header_timeout = settings.gateway.header_timeout_seconds
        self.pending.max_pending = settings.gateway.max_pending_connections
        if self.channels is not None:
            await self.channels.reload(settings)
        if self.scheduler is not None:
            self.scheduler.update(settings.cron)
