"""The one call `openclaw memory purge` makes: through the running gateway of this home when there is one
(gateway/rpc/purge.py: it owns the journal, the session writers and the warm memory connections, so it must
do the work itself), else in this process (everywhere.py).

A gateway runs when its pid file names a live process and that process answers /healthz
(gateway/client/pidfile.py), as the other commands that talk to it check.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openclaw_cli.core.errors import Conflict, NotFound, OpenclawError
from openclaw_cli.forget.everywhere import forget_person
from openclaw_cli.forget.report import ForgetReport, ForgetRequest
from openclaw_cli.gateway.client.pidfile import gateway_process, running_gateway

if TYPE_CHECKING:
    from openclaw_cli.config.loading import Settings
    from openclaw_cli.core.paths import Home

METHOD = "memory.purge"
TIMEOUT = 900.0  # the gateway first lets queued turns finish, then compacts every database


def purge(home: Home, settings: Settings, request: ForgetRequest, *, token: str | None) -> ForgetReport:
    """Forget `request.person`; `token` authenticates to a running gateway (None: its token file)."""
    endpoint = running_gateway(home)
    if endpoint is None:
        # Alive but not answering: purging here would leave the person in the gateway's caches.
        busy = gateway_process(home)
        if busy is not None:
            raise Conflict(
                f"the gateway of this home (pid {busy['pid']}) runs but does not answer, so it cannot forget "
                "what it holds in memory: nothing was purged",
                hint="try again in a moment, or stop it with `openclaw gateway stop` and purge then",
            )
        return forget_person(home, settings, request)
    from openclaw_cli.gateway.client.control import GatewayDown, call, client_token

    params = {
        "userId": request.person,
        "agentId": request.agent_id,
        "allAgents": request.all_agents,
        "sessions": request.sessions,
    }
    try:
        payload = call(*endpoint, client_token(home, None, token), METHOD, params, timeout=TIMEOUT)
    except GatewayDown:
        return forget_person(home, settings, request)  # it stopped meanwhile: nobody holds the files now
    except OpenclawError as exc:
        raise _unwrapped(exc) from exc
    return ForgetReport.from_dict(payload)


def _unwrapped(exc: OpenclawError) -> OpenclawError:
    """The gateway's error as this process would have raised it (control.call prefixes method and code)."""
    method, _, rest = exc.message.partition(": ")
    code, _, message = rest.partition(": ")
    if method != METHOD or not message:
        return exc
    kind = NotFound if code == "NOT_FOUND" else OpenclawError
    return kind(message, exc.hint)
