"""The gateway's side of the channels (channels/base.py): it starts and stops them, and is their `Sink`.

An inbound message is checked by access control (channels/access.py), routed and resolved to a person
exactly as `/hooks/agent` does (routing.route, claims.inbound_identity), written to the channel's journal
(channels/journal.py) and then sent into the lanes with `core.send`, which journals it in the gateway's
inbox. The reply goes to `message.target`, the chat it came from, part by part, each part recorded as sent.

Exactly once across kill -9: the journal line is durable before `deliver` returns (so before a pulling
channel moves its offset); at start, an entry with a recorded reply sends its unsent parts, one whose turn
the core re-queued from its inbox waits for that turn, and one that never reached the inbox is sent again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from openclaw_cli.channels.access import AccessStore, dm_decision, group_allowed, pairing_reply
from openclaw_cli.channels.base import Channel, Inbound, PermanentSendError, Target
from openclaw_cli.channels.journal import ChannelJournal, account_dir
from openclaw_cli.channels.media import discard_media, record_owner
from openclaw_cli.core.errors import OpenclawError
from openclaw_cli.gateway.channel_host.recovery import find_stored
from openclaw_cli.gateway.channel_host.util import bounded_body, one_part, policy_of, reply_text
from openclaw_cli.gateway.lanes.queues import Message
from openclaw_cli.gateway.routing import Inbound as Routed
from openclaw_cli.gateway.routing import Peer, route
from openclaw_cli.identity import claims

if TYPE_CHECKING:
    from openclaw_cli.config.loading import Settings
    from openclaw_cli.gateway.core import GatewayCore
    from openclaw_cli.gateway.lanes.queues import Turn

log = logging.getLogger("openclaw.channels")
TYPING_EVERY = 4.0  # Telegram shows "typing" for 5 s
# A reply the channel gave up on is tried again while the gateway runs (and at its next start).
RETRY_FIRST, RETRY_MAX = 30.0, 600.0


class Hosted:
    """One running channel and its state files."""

    def __init__(self, channel: Channel, journal: ChannelJournal, access: AccessStore, section: Any) -> None:
        self.channel = channel
        self.journal = journal
        self.access = access
        self.section = section
        self.policy = policy_of(section)


class ChannelHost:
    def __init__(self, core: GatewayCore, tokens: Mapping[str, str | None]) -> None:
        self.core = core
        self.tokens = dict(tokens)  # from the environment (TELEGRAM_BOT_TOKEN...), passed in by serve()
        self.hosted: dict[str, Hosted] = {}
        # One journal per channel for the process's life: a reload restarts the platform client, while
        # replies of turns already running are still recorded in (and sent from) the same journal.
        self.journals: dict[str, ChannelJournal] = {}
        self.recovered: set[str] = set()
        self.claimed: set[str] = set()  # run ids whose reply one of the channels' messages sends
        self.typing_chats: set[tuple[str, str]] = set()
        self.start_errors: dict[str, str] = {}  # why an enabled channel is not running (channels status)
        self.tasks: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------------ life cycle

    def _names(self) -> tuple[str, ...]:
        """The built-in channels, then those plugins registered (plugins/, in load order)."""
        host = self.core.plugins
        return ("telegram", "slack", *(host.registered.channels if host is not None else ()))

    def _section(self, settings: Settings, name: str) -> Any:
        if name in ("telegram", "slack"):
            return getattr(settings.channels, name)
        from openclaw_cli.channels.settings import PluginChannelSettings

        return PluginChannelSettings.model_validate(settings.channels.plugin_section(name) or {})

    def _build(self, name: str, settings: Settings) -> Hosted | None:
        section = self._section(settings, name)
        if not section.enabled:
            return None
        if name not in ("telegram", "slack"):
            return self._build_plugin(name, settings, section)
        token = section.bot_token or self.tokens.get(name)
        if not token:
            self.start_errors[name] = f"channels.{name} is enabled but has no botToken; it is not started"
            log.error("%s", self.start_errors[name])
            return None
        directory = account_dir(self.core.home.root, name, "default")
        # As durable as the gateway's inbox journal: written before the offset moves (a kill -9 loses no
        # write), fsynced too under session.fsync "always" (against power loss).
        journal = self.journals.get(name) or ChannelJournal(
            directory, fsync=settings.session.fsync == "always"
        )
        self.journals[name] = journal
        retries = settings.channels.send_retries
        channel: Channel
        if name == "telegram":
            from openclaw_cli.channels.telegram.channel import TelegramChannel

            media_root = self.core.home.root / "media"
            channel = TelegramChannel(section, token, journal, media_root, settings, retries)
        else:
            from openclaw_cli.channels.slack.channel import SlackChannel

            channel = SlackChannel(section, token, retries)
        return Hosted(channel, journal, AccessStore(directory), section)

    def _build_plugin(self, name: str, settings: Settings, section: Any) -> Hosted:
        """A plugin's channel, built by its factory from its section, hosted as the built-in ones are."""
        assert self.core.plugins is not None
        definition = self.core.plugins.registered.channels[name]
        directory = account_dir(self.core.home.root, name, "default")
        journal = self.journals.get(name) or ChannelJournal(
            directory, fsync=settings.session.fsync == "always"
        )
        self.journals[name] = journal
        channel = definition.factory(section)
        if getattr(channel, "name", None) != name:
            raise OpenclawError(f"plugin {definition.plugin_id}'s channel says its name is not {name!r}")
        return Hosted(channel, journal, AccessStore(directory), section)

    def _plugin_failed(self, name: str, message: str) -> None:
        host = self.core.plugins
        definition = host.registered.channels.get(name) if host is not None else None
        if host is not None and definition is not None:
            host.records[definition.plugin_id].fail(f"channel {name}", message)

    async def start(self, settings: Settings) -> None:
        for name in self._names():
            await self._start_one(name, settings)

    async def _start_one(self, name: str, settings: Settings) -> None:
        try:
            self.start_errors.pop(name, None)
            hosted = self._build(name, settings)
            if hosted is None:
                return
            self.hosted[name] = hosted
            if name not in self.recovered:  # after a reload, what is unfinished is still on its way
                self.recovered.add(name)
                await self._recover(hosted)
            await hosted.channel.start(self)
            log.info("channel %s started", name)
        except OpenclawError as exc:
            self.start_errors[name] = f"channel {name} could not start: {exc.message}"
            log.error("%s", self.start_errors[name])
        except Exception as exc:  # noqa: BLE001 - a channel that fails must not stop the gateway
            self.start_errors[name] = f"channel {name} could not start: {type(exc).__name__}: {exc}"
            log.error("%s", self.start_errors[name])
            self._plugin_failed(name, f"could not start: {type(exc).__name__}: {exc}")

    async def stop(self) -> None:
        for hosted in list(self.hosted.values()):
            await self._stop_one(hosted)
        self.hosted.clear()
        for task in list(self.tasks):
            task.cancel()
        for journal in self.journals.values():
            journal.close()

    async def _stop_one(self, hosted: Hosted) -> None:
        try:
            await hosted.channel.stop()
        except Exception as exc:  # noqa: BLE001 - stopping the others matters more
            log.warning("channel %s did not stop cleanly: %s", hosted.channel.name, exc)

    async def reload(self, settings: Settings) -> None:
        """Restart the channels whose section changed; the others keep running."""
        for name in self._names():
            current = self.hosted.get(name)
            try:
                section = self._section(settings, name)
            except ValueError as exc:  # a plugin channel's section that does not validate
                self.start_errors[name] = f"channels.{name} is invalid: {exc}"
                continue
            if current is not None and current.section == section:
                continue
            if current is not None:
                await self._stop_one(current)
                del self.hosted[name]
            await self._start_one(name, settings)
            log.info("channels.%s changed: reloaded", name)

    def _spawn(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    # ------------------------------------------------------------------ inbound (the Sink)

    def _hosted(self, channel: Channel) -> Hosted:
        return self.hosted[channel.name]

    def seen(self, channel: Channel, event_id: str) -> bool:
        hosted = self.hosted.get(channel.name)
        return hosted is not None and hosted.journal.has(event_id)

    async def deliver(self, channel: Channel, message: Inbound) -> None:
        hosted = self._hosted(channel)
        if hosted.journal.has(message.event_id):
            return  # redelivered (an offset not saved before a crash, a platform retry): answered once
        if not self._admitted(hosted, message):
            discard_media(self.core.home.root / "media", [m.path for m in message.media if m.path])
            return
        settings = self.core.settings
        sender = message.sender if message.peer_kind != "direct" else None
        routed = Routed(
            channel=message.channel,
            text=message.prompt_text(),
            peer=Peer(message.peer_kind, message.peer_id),
            account_id=message.account_id,
            sender=sender,
        )
        try:  # who speaks and where, as `/hooks/agent` settles them (claims.py, routing.py)
            who = claims.inbound_identity(settings, routed.channel, routed.peer, sender)
            target = route(settings, routed)
        except OpenclawError as exc:
            log.warning("%s message %s not routed: %s", message.channel, message.event_id, exc.message)
            return
        if target.rerouted:  # a DM kept out of the owner's main session: doctor and gateway status say so
            await self.core.note_reroute(target.agent_id)
        names = [m.path for m in message.media if m.path]
        record_owner(
            self.core.home.root / "media", names, who.person or f"{message.channel}:{message.sender}"
        )
        record = {
            "agentId": target.agent_id,
            "sessionKey": target.session_key,
            "text": routed.text,
            "sender": sender,
            "person": who.person,
            "target": message.target.to_dict(),
        }
        hosted.journal.accept(message.event_id, record)
        turn = self.core.send(
            target.agent_id, target.session_key, routed.text, sender=sender, user_id=who.person
        )
        self._spawn(self._answer(channel.name, message.event_id, message.target, turn))

    def _admitted(self, hosted: Hosted, message: Inbound) -> bool:
        """Access control; a stranger's first DM is answered with a pairing code (and nothing else)."""
        policy, name = hosted.policy, message.channel
        if message.peer_kind != "direct":
            if not group_allowed(policy, message.peer_id):
                log.info("%s: message in group %s ignored (groupPolicy)", name, message.peer_id)
                return False
            return message.addressed or not self._requires_mention(hosted, message.peer_id)
        decision = dm_decision(policy, hosted.access, message.sender)
        if decision == "allow":
            return True
        if decision == "pair":
            ttl = policy.pairing_ttl_seconds
            code = hosted.access.request(message.sender, message.sender_name, ttl)
            if code is not None:
                log.info("%s: pairing code issued to an unknown sender", name)
                hosted.journal.accept(message.event_id, {"turn": False, "target": message.target.to_dict()})
                hosted.journal.reply(message.event_id, [pairing_reply(code, name)])
                self._spawn(self._send_parts(name, message.event_id, message.target))
            return False
        log.info("%s: DM from a sender not allowed (dmPolicy %s) ignored", name, policy.dm_policy)
        return False

    def _requires_mention(self, hosted: Hosted, group_id: str) -> bool:
        groups = getattr(hosted.section, "groups", None)
        if groups is not None and group_id in groups:
            return bool(groups[group_id].require_mention)
        return bool(getattr(hosted.section, "require_mention", True))

    # ------------------------------------------------------------------ outbound

    async def _typing(self, name: str, target: Target, turn: Turn) -> None:
        """One indicator per chat however many of its messages wait (a burst must not flood the API)."""
        chat = (name, target.chat_id)
        if chat in self.typing_chats:
            return
        self.typing_chats.add(chat)
        try:
            while not turn.done.done():
                hosted = self.hosted.get(name)
                if hosted is not None:
                    await hosted.channel.typing(target)
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(asyncio.shield(turn.done), TYPING_EVERY)
        finally:
            self.typing_chats.discard(chat)

    async def _answer(self, name: str, event_id: str, target: Target, turn: Turn) -> None:
        typing = asyncio.get_running_loop().create_task(self._typing(name, target, turn))
        try:
            result = await turn.done
        finally:
            typing.cancel()
        journal = self.journals[name]
        if turn.run_id in self.claimed:
            journal.reply(event_id, [])  # joined a turn whose reply another message sends
            return
        self.claimed.add(turn.run_id)
        hosted = self.hosted.get(name)
        limit_split = hosted.channel.split if hosted is not None else one_part
        journal.reply(event_id, limit_split(reply_text(result)))
        await self._send_parts(name, event_id, target)

    async def _send_later(self, name: str, event_id: str, target: Target, delay: float) -> None:
        await asyncio.sleep(delay)
        await self._send_parts(name, event_id, target, min(delay * 2, RETRY_MAX))

    async def _send_parts(self, name: str, event_id: str, target: Target, delay: float = RETRY_FIRST) -> None:
        hosted = self.hosted.get(name)
        if hosted is None:
            return  # the channel was turned off: its unsent parts go at its next start
        entry = hosted.journal.entries.get(event_id)
        if entry is None or entry.parts is None:
            return
        for index, part in enumerate(entry.parts):
            if index in entry.sent:
                continue
            try:
                await hosted.channel.send(target, part)
            except PermanentSendError as exc:
                log.error("%s: reply to %s dropped: %s", hosted.channel.name, event_id, exc)
                hosted.journal.failed(event_id, str(exc), final=True)
                return
            except Exception as exc:  # noqa: BLE001 - SendError, or a client closed by a reload: never a crash
                log.error("%s: reply to %s not sent (retried in %.0f s): %s", name, event_id, delay, exc)
                hosted.journal.failed(event_id, str(exc), final=False)
                self._spawn(self._send_later(name, event_id, target, delay))
                return
            hosted.journal.sent(event_id, index)

    # ------------------------------------------------------------------ recovery

    async def _recover(self, hosted: Hosted) -> None:
        """Finish what a stopped (or killed) process left: unsent parts, unanswered messages."""
        name = hosted.channel.name
        requeued = {(p.session_key, p.text): turn for p, turn in self.core.requeued}
        for entry in hosted.journal.pending():
            target = Target.from_dict(entry.record.get("target") or {"chat_id": ""})
            if entry.parts is not None or entry.record.get("turn") is False:
                self._spawn(self._send_parts(name, entry.id, target))
                continue
            record = entry.record
            key = (str(record.get("sessionKey")), str(record.get("text")))
            turn = requeued.pop(key, None)
            if turn is None:  # it never reached the inbox, or its turn ran (in part) before the process died
                stored = await asyncio.to_thread(find_stored, self.core.home, record)
                if stored.reply is not None:
                    hosted.journal.reply(entry.id, hosted.channel.split(stored.reply))
                    self._spawn(self._send_parts(name, entry.id, target))
                    continue
                turn = self._resubmit(record, stored.user_idx)
            self._spawn(self._answer(name, entry.id, target, turn))
        if hosted.journal.pending():
            log.info(
                "%s: resuming %d unfinished message(s)", hosted.channel.name, len(hosted.journal.pending())
            )

    def _resubmit(self, record: dict[str, Any], replay_idx: int | None) -> Turn:
        """The record's turn again: a replay of the stored question, or the message sent anew."""
        agent, key, text = str(record["agentId"]), str(record["sessionKey"]), str(record["text"])
        sender, person = record.get("sender"), record.get("person")
        if replay_idx is None:
            return self.core.send(agent, key, text, sender=sender, user_id=person)
        turn = self.core.lanes.submit(agent, key, Message(text, sender), "followup", user_id=person)
        turn.replay_idx = replay_idx  # set before the lane's worker first runs: it answers, stores nothing
        return turn

    # ------------------------------------------------------------------ pushed events

    async def http_event(self, request: Request) -> Response:
        """POST /channels/{channel}/events: a pushing platform's request, verified by the channel itself."""
        name = str(request.path_params.get("channel"))
        hosted = self.hosted.get(name)
        handler = getattr(hosted.channel, "http_event", None) if hosted is not None else None
        if handler is None:
            return JSONResponse({"error": f"channel {name} is not running"}, status_code=404)
        raw = await bounded_body(request, self.core.settings.gateway.max_message_bytes)
        if raw is None:
            log.warning("%s: event refused: larger than gateway.maxMessageBytes", name)
            return JSONResponse({"error": "too large"}, status_code=413)
        status, body, headers = await handler(raw, dict(request.headers))
        return Response(body, status_code=status, headers=headers)

    # ------------------------------------------------------------------ status

    def status(self) -> list[dict[str, Any]]:
        rows = []
        for name in self._names():
            try:
                enabled = bool(self._section(self.core.settings, name).enabled)
            except ValueError:
                enabled = False
            hosted = self.hosted.get(name)
            row: dict[str, Any] = {"channel": name, "account": "default", "enabled": enabled}
            if hosted is not None:
                row.update(hosted.channel.status())
                row["pendingSends"] = hosted.journal.pending_sends()
                row["failedSends"] = hosted.journal.failed_sends
                row["offset"] = hosted.journal.offset()
            else:
                row.update({"connected": False, "mode": None, "lastError": self.start_errors.get(name)})
            rows.append(row)
        return rows


def channel_tokens(env: Mapping[str, str]) -> dict[str, str | None]:
    """The tokens the environment gives when openclaw.json leaves them out (serve() passes its env)."""
    return {"telegram": env.get("TELEGRAM_BOT_TOKEN"), "slack": env.get("SLACK_BOT_TOKEN")}
