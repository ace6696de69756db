"""The package's import graph, read with `ast` (no module is imported).

An edge A -> B means module A imports module B anywhere in its text: at the top, inside a function (a lazy
import is still a dependency) or under `if TYPE_CHECKING:` (a type is a dependency too). `from P import x`
is an edge to the module P.x when x is a submodule, else to P itself. Importing a module runs every
package `__init__` above it first, so a module also has an edge to its own package: a package whose
`__init__` imports its own modules is a circle.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT_PACKAGE = "openclaw_cli"


@dataclass(frozen=True)
class PrivateImport:
    importer: str
    module: str
    name: str
    line: int


def module_files(package_dir: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file under the package."""
    modules = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _resolve_from(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = importer.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(name: str, path: Path, modules: dict[str, Path]) -> list[tuple[str, str | None, int]]:
    """(imported module, imported name or None, line) for every import in one file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    found: list[tuple[str, str | None, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, None, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve_from(name, is_package, node)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if sub in modules:
                    found.append((sub, None, node.lineno))
                else:
                    found.append((base, alias.name, node.lineno))
    return [item for item in found if item[0] == ROOT_PACKAGE or item[0].startswith(ROOT_PACKAGE + ".")]


def import_graph(package_dir: Path) -> dict[str, set[str]]:
    modules = module_files(package_dir)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for target, _, _ in _imports(name, path, modules):
            if target in modules and target != name:
                graph[name].add(target)
        parent = name.rpartition(".")[0]
        if parent in modules and path.name != "__init__.py":
            graph[name].add(parent)
    return graph


def private_imports(package_dir: Path) -> list[PrivateImport]:
    """Imports of a `_name` from another module (dunders such as __version__ are public)."""
    modules = module_files(package_dir)
    found = []
    for name, path in modules.items():
        for target, imported, line in _imports(name, path, modules):
            if imported and imported.startswith("_") and not imported.startswith("__") and target != name:
                found.append(PrivateImport(name, target, imported, line))
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0

    def visit(start: str) -> None:
        nonlocal counter
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(components)


def cycle_path(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """One concrete loop through a component, for a readable failure message."""
    members = set(component)
    start = component[0]
    path = [start]
    seen = {start}
    node = start
    while True:
        nxt = sorted(graph[node] & members)
        if start in nxt and len(path) > 1:
            return path + [start]
        choice = next((m for m in nxt if m not in seen), None)
        if choice is None:
            return path + [nxt[0]] if nxt else path
        path.append(choice)
        seen.add(choice)
        node = choice
