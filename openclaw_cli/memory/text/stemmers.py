"""One Snowball language's stemmer, imported alone.

`import snowballstemmer` imports the generated modules of all its ~37 languages (~50 ms on an idle core,
three times that under load), and importing one of them as `snowballstemmer.english_stemmer` runs that
package `__init__` first. A one-search process stems English only, so each language module is imported
from the package's directory under a private package name whose `__init__` never runs: the same
generated code, so the same stems, for a seventh of the import. It also keeps the stems independent of
whether PyStemmer happens to be installed (the package's `__init__` switches to it when it is).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
import threading
from collections.abc import Callable
from types import ModuleType

# Where the package's modules are registered (sys.modules), apart from the real `snowballstemmer`.
PRIVATE_PACKAGE = "openclaw_snowball_stemmers"
_lock = threading.Lock()


def stemmer(name: str) -> Callable[[str], str]:
    """The `stemWord` of Snowball's stemmer for `name` ("english", "french", ...)."""
    module = importlib.import_module(f"{_package().__name__}.{name}_stemmer")
    instance = getattr(module, f"{name.capitalize()}Stemmer")()
    return instance.stemWord  # type: ignore[no-any-return]


def _package() -> ModuleType:
    """An empty package over snowballstemmer's directory (found without importing it)."""
    with _lock:
        existing = sys.modules.get(PRIVATE_PACKAGE)
        if existing is not None:
            return existing
        spec = importlib.util.find_spec("snowballstemmer")
        if spec is None or not spec.submodule_search_locations:
            raise ModuleNotFoundError("snowballstemmer is not installed", name="snowballstemmer")
        package = ModuleType(PRIVATE_PACKAGE)
        package.__path__ = list(spec.submodule_search_locations)
        package.__spec__ = importlib.machinery.ModuleSpec(PRIVATE_PACKAGE, None, is_package=True)
        package.__spec__.submodule_search_locations = package.__path__
        sys.modules[PRIVATE_PACKAGE] = package
        return package
