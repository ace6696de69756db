"""PluginHost: the loaded plugins of one process, what they registered, and the calls of their hooks.

Built once per process from settings (`load_plugins`): the gateway at its start, `openclaw chat` and the
CLI's reads when they need it. Code that calls hooks is given the host (AgentRuntime, GatewayCore); there is
no global one. With no plugin loaded every call below returns at its first line: the cost on a turn is a
few attribute reads (benchmarks/test_bench_plugins.py).

Load: discovery.py's candidates in order; `plugins.deny` wins over `plugins.allow`, then
`plugins.entries.<id>.enabled`; the plugin is imported, its config validated against its `config_model`
(a pydantic model, when it declares one) and registered with pluggy; then its registration hooks run
(isolation.py: an error there counts against it, and what that hook registered is dropped).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openclaw_cli.plugins.contexts import Block, Event, Rewrite
from openclaw_cli.plugins.isolation import PluginRecord, Runner
from openclaw_cli.plugins.registry import ID, Registered, Registrar
from openclaw_cli.plugins.specs import EVENT_HOOKS, REGISTRATION_HOOKS

if TYPE_CHECKING:
    from openclaw_cli.config.models import PluginsSettings
    from openclaw_cli.plugins.discovery import Candidate

log = logging.getLogger("openclaw.plugins")
INJECTION_POINTS = {
    "register_tools": "tools",
    "register_channels": "channels",
    "register_providers": "providers",
    "register_routes": "routes",
    "register_skills": "skills",
}
Impl = tuple[PluginRecord, Any]


class PluginHost:
    def __init__(self) -> None:
        self.records: dict[str, PluginRecord] = {}
        self.problems: list[str] = []  # load problems not tied to one plugin (a bad load path)
        self.registered = Registered()
        self.runner = Runner()
        self._impls: dict[str, list[Impl]] = {}
        self._pm: Any = None

    # ------------------------------------------------------------------ queries

    def implements(self, hook: str) -> bool:
        return hook in self._impls

    @property
    def loaded(self) -> list[PluginRecord]:
        return [r for r in self.records.values() if r.state == "loaded"]

    def skill_dirs(self) -> list[tuple[str, Path]]:
        """[(plugin id, folder)] of the skills the loaded plugins ship, in load order (skills/ reads it)."""
        return list(self.registered.skills)

    def status(self) -> dict[str, Any]:
        return {"plugins": [r.to_dict() for r in self.records.values()], "problems": list(self.problems)}

    # ------------------------------------------------------------------ events

    def _calls(self, hook: str, event: Event) -> list[tuple[PluginRecord, Any, bool]]:
        """(record, its answer, whether it succeeded) of each plugin implementing `hook`, in load order."""
        answers = []
        for record, fn in self._impls.get(hook, ()):
            seen = event if record.conversation_access else event.redacted()
            ok, value = self.runner.attempt(record, hook, fn, seen)
            answers.append((record, value if ok else None, ok))
        return answers

    def notify(self, hook: str, event: Event) -> None:
        if hook in self._impls:
            self._calls(hook, event)

    def rewrite(self, hook: str, event: Any) -> Rewrite:
        """message_received / message_sending: each plugin sees the text as the ones before it left it.
        A text from a plugin without conversation access is ignored; its cancel is not."""
        import dataclasses

        text: str | None = event.text
        for record, fn in self._impls.get(hook, ()):
            current = dataclasses.replace(event, text=text)
            seen = current if record.conversation_access else current.redacted()
            ok, answer = self.runner.attempt(record, hook, fn, seen)
            if not ok or answer is None:
                continue
            if isinstance(answer, str):
                answer = Rewrite(text=answer)
            if not isinstance(answer, Rewrite):
                record.fail(hook, f"returned {type(answer).__name__}, not a Rewrite, a str or None")
                continue
            if answer.cancel:
                return Rewrite(text=text, cancel=True)
            if answer.text is not None and record.conversation_access:
                text = answer.text
        return Rewrite(text=text)

    def collect(self, hook: str, event: Event) -> list[str]:
        """before_prompt_build: the system blocks the plugins add."""
        blocks = []
        for record, answer, ok in self._calls(hook, event):
            if ok and isinstance(answer, str) and answer.strip():
                blocks.append(answer.strip())
            elif ok and answer is not None and not isinstance(answer, str):
                record.fail(hook, f"returned {type(answer).__name__}, not a str or None")
        return blocks

    def check(self, hook: str, event: Event) -> str | None:
        """before_tool_call: the reason of the first plugin that blocks the call, else None."""
        for record, fn in self._impls.get(hook, ()):
            seen = event if record.conversation_access else event.redacted()
            ok, answer = self.runner.attempt(record, hook, fn, seen)
            if ok and isinstance(answer, Block):
                return f"{answer.reason} (blocked by plugin {record.id})"
            if ok and isinstance(answer, str) and answer:
                return f"{answer} (blocked by plugin {record.id})"
        return None

    async def anotify(self, hook: str, event: Event) -> None:
        """notify() from the event loop: the hooks run off it (a slow plugin never stalls the gateway)."""
        if hook in self._impls:
            import asyncio

            await asyncio.to_thread(self._calls, hook, event)

    # ------------------------------------------------------------------ load

    def load(self, settings: PluginsSettings, home_root: Path) -> None:
        from openclaw_cli.plugins import discovery

        if not settings.enabled:
            return
        candidates: list[Candidate] = []
        try:
            candidates.extend(discovery.entry_point_candidates())
        except Exception as exc:  # noqa: BLE001 - broken package metadata must not stop the process
            self.problems.append(f"installed plugins could not be listed: {exc}")
        paths = [_under(home_root, p) for p in settings.load.paths]
        for found in discovery.path_candidates(paths):
            if isinstance(found, Exception):
                self.problems.append(str(found))
            else:
                candidates.append(found)
        for candidate in candidates:
            self._load_one(candidate, settings)
        self._index_hooks()

    def _load_one(self, candidate: Candidate, settings: PluginsSettings) -> None:
        from openclaw_cli.config.models import PluginEntry

        pid = candidate.id
        if pid in self.records:
            self.problems.append(
                f"plugin {pid} from {candidate.where} is not loaded: {self.records[pid].where} has that id"
            )
            return
        entry = settings.entries.get(pid) or PluginEntry()
        record = PluginRecord(pid, candidate.source, candidate.where, candidate.version)
        record.conversation_access = entry.allow_conversation_access
        record.timeout = entry.hook_timeout_seconds or settings.hook_timeout_seconds
        self.records[pid] = record
        if not ID.match(pid):
            record.state, record.last_error = "error", f"plugin id {pid!r} is not 1-64 of a-z 0-9 _ -"
        elif pid in settings.deny:
            record.state = "denied"
        elif settings.allow is not None and pid not in settings.allow:
            record.state = "not-allowed"
        elif not entry.enabled:
            record.state = "disabled"
        if record.state != "loaded":
            return
        try:
            plugin = candidate.load()
        except BaseException as exc:  # noqa: BLE001 - a plugin that does not import stays unloaded
            if isinstance(exc, KeyboardInterrupt):
                raise
            record.fail("import", f"{type(exc).__name__}: {exc}")
            record.state = "error"
            return
        record.version = record.version or _text(getattr(plugin, "__version__", None))
        config = _validate_config(record, plugin, entry.config)
        if record.state != "loaded":
            return
        try:
            self._pluggy().register(plugin, name=pid)
        except Exception as exc:  # noqa: BLE001 - pluggy refuses a hook that is not in specs.py
            record.fail("register", f"{type(exc).__name__}: {exc}")
            record.state = "error"
            return
        self._register(record, plugin, config, candidate.base)

    def _register(self, record: PluginRecord, plugin: Any, config: Any, base: Path | None) -> None:
        pm = self._pluggy()
        for impl_hook in REGISTRATION_HOOKS:
            impls = [i for i in getattr(pm.hook, impl_hook).get_hookimpls() if i.plugin is plugin]
            for impl in impls:
                registrar = Registrar(INJECTION_POINTS[impl_hook], record.id, config, self.registered, base)
                ok, _ = self.runner.attempt(record, impl_hook, impl.function, registrar)
                if ok:
                    names = registrar.commit()
                    record.registered.setdefault(INJECTION_POINTS[impl_hook], []).extend(names)

    def _index_hooks(self) -> None:
        if self._pm is None:
            return
        order = {pid: index for index, pid in enumerate(self.records)}
        for hook in EVENT_HOOKS:
            impls = getattr(self._pm.hook, hook).get_hookimpls()
            found = [
                (self.records[i.plugin_name], i.function) for i in impls if i.plugin_name in self.records
            ]
            found.sort(key=lambda pair: order[pair[0].id])
            for record, _fn in found:
                record.hooks.append(hook)
            if found:
                self._impls[hook] = found

    def _pluggy(self) -> Any:
        if self._pm is None:
            import pluggy

            from openclaw_cli.plugins import PROJECT
            from openclaw_cli.plugins.specs import Specs

            self._pm = pluggy.PluginManager(PROJECT)
            self._pm.add_hookspecs(Specs)
        return self._pm


def _validate_config(record: PluginRecord, plugin: Any, raw: dict[str, Any]) -> Any:
    """The plugin's config as its `config_model` reads it; an invalid one leaves the plugin unloaded
    with a one-line error naming the plugin and the field."""
    model = getattr(plugin, "config_model", None)
    if model is None:
        return dict(raw)
    from pydantic import ValidationError

    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ())) or "config"
        message = f"invalid config: plugins.entries.{record.id}.config.{where}: {first.get('msg')}"
        record.state = "error"
        record.fail("config", message)
    except Exception as exc:  # noqa: BLE001 - a config_model that is not a pydantic model
        record.state = "error"
        record.fail("config", f"config_model cannot validate: {type(exc).__name__}: {exc}")
    return None


def _under(root: Path, given: str) -> Path:
    path = Path(given).expanduser()
    return path if path.is_absolute() else root / path


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def load_plugins(settings: PluginsSettings, home_root: Path) -> PluginHost:
    """The host of this process's plugins, loaded from settings."""
    host = PluginHost()
    host.load(settings, home_root)
    return host
