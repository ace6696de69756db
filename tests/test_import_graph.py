"""The package's shape (issues 22 and 55): no import circles, no module reaching into another's private
names, every package saying in its `__init__` what lives there and which of its siblings it may import (and
held to it, at every level: the top-level packages as memory/'s subpackages), those declared layers in an
order, a top level of packages and an entry point only, and no folder of more than 15 modules.

A declaration is one sentence of the package's docstring: `May import (in PARENT/): a, b, c.` where PARENT
is the folder the package sits in (`openclaw_cli/` for a top-level package) and each name is a sibling in
that folder, a package or a module (`nothing` for none). A dotted name (`gateway.client.pidfile`) allows one
module of a sibling, not the whole sibling: the exceptions to the layer order, each with its reason in
parentheses. An import from a package's module to a module of another sibling subtree is allowed only when
the declaration of the package on the importer's side names it; loose modules of a folder
(memory/service.py) declare nothing and are free within their parent's rules.

"15 modules" counts every .py file of a folder, `__init__.py` included (as the issue counted memory/store/'s
27); subfolders are not counted.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.import_graph import cycle_path, cycles, import_graph, module_files, private_imports

PACKAGE = Path(__file__).resolve().parent.parent / "openclaw_cli"
ROOT = "openclaw_cli"
MAX_MODULES = 15
TOP_LEVEL_MODULES = {"__init__.py", "__main__.py", "entry.py"}
DECLARATION = re.compile(r"May import \(in ([\w/]+)/\):\s*(.*)", re.S)
SENTENCE_END = re.compile(r"\.(\s|$)")
# The new top-level packages of issue 55 that the gateway uses and that never import it.
BELOW_THE_GATEWAY = ("channels", "scheduler", "plugins", "skills", "security")


def _packages() -> dict[str, Path]:
    return {name: path for name, path in module_files(PACKAGE).items() if path.name == "__init__.py"}


def _declaration(name: str, path: Path) -> tuple[str, set[str]] | None:
    """(the folder it names, the siblings it allows) of one package's `May import` sentence."""
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    match = DECLARATION.search(docstring)
    if not match:
        return None
    text = match.group(2)
    while re.search(r"\([^()]*\)", text):
        text = re.sub(r"\([^()]*\)", "", text)  # reasons in parentheses, nested ones too
    end = SENTENCE_END.search(text)
    text = " ".join((text[: end.start()] if end else text).split())
    names = {item.strip() for item in text.split(",") if item.strip()}
    return match.group(1), (set() if names == {"nothing"} else names)


def _declared() -> dict[str, set[str]]:
    """Package (dotted) -> the siblings and sibling modules it may import."""
    declared = {}
    for name, path in _packages().items():
        if name == ROOT:
            continue
        found = _declaration(name, path)
        assert found, f"{path} must say what it may import: 'May import (in PARENT/): a, b.' (or nothing)"
        folder, names = found
        parent = name.rpartition(".")[0]
        expected = "/".join(parent.split(".")[1:]) or ROOT
        assert folder == expected, f"{path} says 'May import (in {folder}/)', but it sits in {expected}/"
        declared[name] = names
    return declared


def _sibling(parent: str, module: str) -> str:
    """The child of `parent` whose subtree holds `module` (its name only)."""
    return module[len(parent) + 1 :].split(".")[0]


def test_there_is_no_import_circle() -> None:
    graph = import_graph(PACKAGE)
    found = cycles(graph)
    loops = [" -> ".join(cycle_path(graph, component)) for component in found]
    assert not loops, "import circles:\n" + "\n".join(loops)


def test_no_module_imports_another_modules_private_names() -> None:
    found = [f"{p.importer}:{p.line} imports {p.name} from {p.module}" for p in private_imports(PACKAGE)]
    assert not found, "\n".join(found)


def test_every_declared_name_is_a_sibling() -> None:
    modules = module_files(PACKAGE)
    wrong = []
    for package, names in sorted(_declared().items()):
        parent = package.rpartition(".")[0]
        for name in sorted(names):
            if f"{parent}.{name}" not in modules:
                wrong.append(f"{package} may import {name}, but {parent}.{name} does not exist")
    assert not wrong, "\n".join(wrong)


def test_every_package_imports_only_what_its_init_allows() -> None:
    declared = _declared()
    graph = import_graph(PACKAGE)
    breaches = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            if module.startswith(target + ".") or target == ROOT:
                continue  # a module's own packages, which run first
            # the lowest common package, then the importer's side of it
            mine, theirs = module.split("."), target.split(".")
            depth = 0
            while depth < min(len(mine), len(theirs)) and mine[depth] == theirs[depth]:
                depth += 1
            parent = ".".join(mine[:depth])
            side = f"{parent}.{_sibling(parent, module)}"
            if side not in declared:
                continue  # a loose module of the folder: its parent's rules hold it
            allowed = declared[side]
            relative = target[len(parent) + 1 :]
            if _sibling(parent, target) in allowed or any(
                relative == name or relative.startswith(name + ".") for name in allowed if "." in name
            ):
                continue
            breaches.append(f"{module} imports {target}: {relative} is not in {side}'s May import")
    assert not breaches, "\n".join(breaches)


def test_the_declared_layers_have_an_order() -> None:
    """In each folder, the packages' whole-sibling declarations make no circle (a dotted exception, one
    module of a higher package, does not count: it is the documented way round the order)."""
    declared = _declared()
    by_parent: dict[str, dict[str, set[str]]] = {}
    for package, names in declared.items():
        parent, _, name = package.rpartition(".")
        by_parent.setdefault(parent, {})[name] = {n for n in names if "." not in n}
    for parent, layers in sorted(by_parent.items()):
        graph = {name: {d for d in deps if d in layers} for name, deps in layers.items()}
        assert not cycles(graph), f"{parent}: declared layers in a circle: {cycles(graph)}"
    top = by_parent[ROOT]
    assert top["core"] == set(), "core/ is the ground floor"
    assert by_parent[f"{ROOT}.memory"]["text"] == set()


def test_channels_and_the_scheduler_never_import_the_gateway() -> None:
    graph = import_graph(PACKAGE)
    found = [
        f"{module} imports {target}"
        for module, targets in sorted(graph.items())
        for target in sorted(targets)
        if module.split(".")[1] in BELOW_THE_GATEWAY and target.startswith(f"{ROOT}.gateway")
    ]
    assert not found, "\n".join(found)
    declared = _declared()
    assert all("gateway" not in declared[f"{ROOT}.{name}"] for name in BELOW_THE_GATEWAY)


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


def test_the_top_level_holds_packages_and_an_entry_point() -> None:
    loose = sorted(p.name for p in PACKAGE.glob("*.py") if p.name not in TOP_LEVEL_MODULES)
    assert not loose, f"loose modules at openclaw_cli/'s top (put each in a package): {loose}"


def test_no_folder_holds_more_than_15_modules() -> None:
    crowded = {
        str(folder.relative_to(PACKAGE.parent)): count
        for folder in [PACKAGE, *sorted(p for p in PACKAGE.rglob("*") if p.is_dir())]
        if (count := len(list(folder.glob("*.py")))) > MAX_MODULES
    }
    assert not crowded, f"folders over {MAX_MODULES} modules (split them by their seams): {crowded}"
