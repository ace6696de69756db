"""What plugins register at load (tools, channels, providers, routes, skill folders), and the `register`
callables the registration hooks are given. A registration that is wrong (a bad name, a schema that is not
one, a name already taken) raises RegistrationError, which fails that plugin's registration hook."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openclaw_cli.core.errors import OpenclawError

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # what OpenAI-style APIs accept as a function name
ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"})
BUILTIN_CHANNELS = frozenset({"telegram", "slack", "send_retries", "sendRetries"})
BUILTIN_PROVIDERS = frozenset({"openai"})  # llm_openai.py's; every other prefix is litellm's, or a plugin's


class RegistrationError(OpenclawError):
    """A plugin registered something invalid."""


@dataclass(frozen=True)
class ToolDef:
    plugin_id: str
    name: str
    description: str
    parameters: dict[str, Any]
    fn: Callable[..., Any]
    validator: Any  # jsonschema validator of `parameters`

    def spec(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


@dataclass(frozen=True)
class ChannelDef:
    plugin_id: str
    id: str
    factory: Callable[[Any], Any]


@dataclass(frozen=True)
class ProviderDef:
    plugin_id: str
    name: str
    completion: Callable[..., Any]


@dataclass(frozen=True)
class RouteDef:
    plugin_id: str
    method: str
    path: str  # relative to /plugins/<plugin id>, starting with "/"
    handler: Callable[..., Any]
    public: bool


@dataclass
class Registered:
    """Everything loaded plugins registered, in load order."""

    tools: dict[str, ToolDef] = field(default_factory=dict)
    channels: dict[str, ChannelDef] = field(default_factory=dict)
    providers: dict[str, ProviderDef] = field(default_factory=dict)
    routes: list[RouteDef] = field(default_factory=list)
    skills: list[tuple[str, Path]] = field(default_factory=list)


class Registrar:
    """The `register` a registration hook is called with; what it collects is kept only if the hook returns
    without error (a plugin never leaves half its tools behind)."""

    def __init__(self, kind: str, plugin_id: str, config: Any, taken: Registered, base: Path | None) -> None:
        self.kind = kind
        self.plugin_id = plugin_id
        self.config = config  # the plugin's validated config (its pydantic model), or the raw dict
        self.taken = taken
        self.base = base  # the plugin's folder: a relative skills path is under it
        self.items: list[Any] = []

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        builder = getattr(self, f"_{self.kind}")
        self.items.append(builder(*args, **kwargs))

    def _tools(
        self, name: str, description: str, parameters: dict[str, Any], fn: Callable[..., Any]
    ) -> ToolDef:
        from jsonschema import Draft202012Validator
        from jsonschema.exceptions import SchemaError

        from openclaw_cli.agent.tools.builtin import TOOL_NAMES

        if not isinstance(name, str) or not NAME.match(name):
            raise RegistrationError(f"tool name {name!r} is not 1-64 letters, digits, _ or -")
        if name in TOOL_NAMES or name in self.taken.tools or any(t.name == name for t in self.items):
            raise RegistrationError(f"tool name {name!r} is already taken")
        if not callable(fn):
            raise RegistrationError(f"tool {name}: fn is not callable")
        if not isinstance(parameters, dict) or parameters.get("type", "object") != "object":
            raise RegistrationError(f"tool {name}: parameters must be a JSON schema of an object")
        try:
            Draft202012Validator.check_schema(parameters)
        except SchemaError as exc:
            raise RegistrationError(
                f"tool {name}: parameters is not a valid JSON schema ({exc.message})"
            ) from exc
        return ToolDef(
            self.plugin_id, name, str(description), parameters, fn, Draft202012Validator(parameters)
        )

    def _channels(self, id: str, factory: Callable[[Any], Any]) -> ChannelDef:  # noqa: A002 - the hook's word
        if not isinstance(id, str) or not ID.match(id) or id in BUILTIN_CHANNELS:
            raise RegistrationError(f"channel id {id!r} is not a lower-case name free for a plugin")
        if id in self.taken.channels:
            raise RegistrationError(
                f"channel {id!r} is already registered by {self.taken.channels[id].plugin_id}"
            )
        if not callable(factory):
            raise RegistrationError(f"channel {id}: factory is not callable")
        return ChannelDef(self.plugin_id, id, factory)

    def _providers(self, name: str, completion: Callable[..., Any]) -> ProviderDef:
        if not isinstance(name, str) or not ID.match(name) or name in BUILTIN_PROVIDERS:
            raise RegistrationError(f"provider name {name!r} is not a lower-case name free for a plugin")
        if name in self.taken.providers:
            raise RegistrationError(f"provider {name!r} is already registered")
        if not callable(completion):
            raise RegistrationError(f"provider {name}: completion is not callable")
        return ProviderDef(self.plugin_id, name, completion)

    def _routes(self, method: str, path: str, handler: Callable[..., Any], public: bool = False) -> RouteDef:
        verb = str(method).upper()
        if verb not in METHODS:
            raise RegistrationError(f"route method {method!r} is not an HTTP method")
        if not isinstance(path, str) or not path.startswith("/") or ".." in path:
            raise RegistrationError(f"route path {path!r} must start with / (it is under /plugins/<id>)")
        if not callable(handler):
            raise RegistrationError(f"route {verb} {path}: handler is not callable")
        return RouteDef(self.plugin_id, verb, path, handler, bool(public))

    def _skills(self, path: str | Path) -> tuple[str, Path]:
        folder = Path(path).expanduser()
        if not folder.is_absolute() and self.base is not None:
            folder = self.base / folder
        if not folder.is_dir():
            raise RegistrationError(f"skills folder {folder} does not exist")
        return (self.plugin_id, folder.resolve())

    def commit(self) -> list[str]:
        """Add what was collected to `taken`; the names, for `plugins list`."""
        names: list[str] = []
        for item in self.items:
            if isinstance(item, ToolDef):
                self.taken.tools[item.name] = item
                names.append(item.name)
            elif isinstance(item, ChannelDef):
                self.taken.channels[item.id] = item
                names.append(item.id)
            elif isinstance(item, ProviderDef):
                self.taken.providers[item.name] = item
                names.append(item.name)
            elif isinstance(item, RouteDef):
                self.taken.routes.append(item)
                names.append(f"{item.method} /plugins/{item.plugin_id}{item.path}")
            else:
                self.taken.skills.append(item)
                names.append(str(item[1]))
        return names
