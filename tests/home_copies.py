"""Homes built once per module and copied for each test.

Filling a home through the real CLI costs a process per `memory add` (~0.7 s of CPU each, most of it the
embedding models' start). Tests that only need the filled home as their starting point get their own
copy of one built once for the module: each test still starts from exactly what the CLI wrote, and what
a test writes is in its copy alone, so no test's result depends on which ran first."""

from __future__ import annotations

import shutil
from pathlib import Path


def copy_home(template: Path, destination: Path) -> Path:
    """A copy of `template` (files, modes, the SQLite WAL as it was left) at `destination`, not there yet."""
    shutil.copytree(template, destination, symlinks=True)
    return destination
