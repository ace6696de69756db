"""The package's shape: no import circles, no module reaching into another's private names, and memory/'s
subpackages importing only the layers below them, as each `__init__` says (issue 22)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.import_graph import cycle_path, cycles, import_graph, module_files, private_imports

PACKAGE = Path(__file__).resolve().parent.parent / "openclaw_cli"
MEMORY = "openclaw_cli.memory"
MAY_IMPORT = re.compile(r"^May import \(in memory/\): (.+?)\.?$", re.M)


def test_there_is_no_import_circle() -> None:
    graph = import_graph(PACKAGE)
    found = cycles(graph)
    loops = [" -> ".join(cycle_path(graph, component)) for component in found]
    assert not loops, "import circles:\n" + "\n".join(loops)


def test_no_module_imports_another_modules_private_names() -> None:
    found = [f"{p.importer}:{p.line} imports {p.name} from {p.module}" for p in private_imports(PACKAGE)]
    assert not found, "\n".join(found)


def _layer(module: str) -> str | None:
    """The memory/ subpackage (or top-level memory module) a module belongs to."""
    if not module.startswith(MEMORY + "."):
        return None
    return module[len(MEMORY) + 1 :].split(".")[0]


def _declared_layers() -> dict[str, set[str]]:
    declared = {}
    for init in sorted((PACKAGE / "memory").glob("*/__init__.py")):
        docstring = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        match = MAY_IMPORT.search(docstring)
        assert match, f"{init} must say what it may import: 'May import (in memory/): a, b.'"
        names = match.group(1).split("(")[0]
        declared[init.parent.name] = (
            set()
            if names.strip() == "nothing"
            else {name.strip() for name in names.split(",") if name.strip()}
        )
    return declared


def test_memory_subpackages_import_only_what_their_init_allows() -> None:
    declared = _declared_layers()
    graph = import_graph(PACKAGE)
    breaches = []
    for module, targets in sorted(graph.items()):
        layer = _layer(module)
        if layer not in declared:
            continue
        for target in sorted(targets):
            other = _layer(target)
            if other and other != layer and other not in declared[layer]:
                breaches.append(f"{module} imports {target} ({other} is not in {layer}'s May import)")
    assert not breaches, "\n".join(breaches)


def test_the_declared_layers_have_an_order() -> None:
    declared = _declared_layers()
    graph = {layer: {d for d in deps if d in declared} for layer, deps in declared.items()}
    assert not cycles(graph), cycles(graph)
    assert declared["text"] == set()


def test_every_package_says_what_lives_there_and_imports_nothing_of_its_own() -> None:
    for name, path in module_files(PACKAGE).items():
        if path.name != "__init__.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstring = ast.get_docstring(tree) or ""
        assert len(docstring.split()) >= 12, f"{path}: its docstring must say in a paragraph what lives there"
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(name + "."):
                raise AssertionError(
                    f"{path} imports {node.module}: a package must not import its own modules"
                )
