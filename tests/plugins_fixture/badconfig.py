"""A test plugin with a config model: `port` must be an integer."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from openclaw_cli.plugins import hookimpl


class Config(BaseModel):
    port: int
    label: str = "x"


config_model = Config


@hookimpl
def register_tools(register: Any) -> None:
    register(name="badconfig_tool", description="d", parameters={"type": "object"}, fn=lambda: {"ok": True})
