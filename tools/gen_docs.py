"""Generate shell completions and man pages from openclaw's command tree.

    python tools/gen_docs.py            # (re)write completions/* and man/*
    python tools/gen_docs.py --check    # exit 1 and list the files that are out of date

The renderers live in the package (openclaw_cli/docgen/), so `openclaw completion SHELL` and `openclaw man`
give the same text after a pip install; this script writes it into the repository.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from openclaw_cli.cli.main import app  # noqa: E402  (after the checkout is on the path)
from openclaw_cli.docgen.files import generate  # noqa: E402
from openclaw_cli.docgen.tree import PROG, app_tree  # noqa: E402

# --- writing and checking --------------------------------------------------------------------------


def _leftovers(out: Path, files: dict[str, str]) -> list[str]:
    """Generated files of commands that no longer exist (man pages are one per command)."""
    man = out / "man"
    found = sorted(p.relative_to(out).as_posix() for p in man.glob(f"{PROG}*.1")) if man.is_dir() else []
    return [path for path in found if path not in files]


def stale_files(out: Path, files: dict[str, str]) -> list[str]:
    stale = []
    for rel, content in sorted(files.items()):
        target = out / rel
        if not target.is_file() or target.read_text(encoding="utf-8") != content:
            stale.append(rel)
    return sorted(stale + _leftovers(out, files))


def write_files(out: Path, files: dict[str, str]) -> list[str]:
    """Write what changed and remove leftovers; the relative paths that were touched."""
    touched = stale_files(out, files)
    for rel in _leftovers(out, files):
        (out / rel).unlink()
    for rel, content in sorted(files.items()):
        if rel in touched:
            target = out / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
    return touched


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Generate openclaw completions and man pages.")
    parser.add_argument("--check", action="store_true", help="list out-of-date files and exit 1 if any")
    parser.add_argument("--out", type=Path, default=ROOT, help="directory holding completions/ and man/")
    args = parser.parse_args(argv)
    tree = app_tree(app)
    from openclaw_cli import __version__

    files = generate(tree, __version__)
    if args.check:
        stale = stale_files(args.out, files)
        for rel in stale:
            print(f"stale: {rel}", file=sys.stderr)
        if stale:
            print("run `python tools/gen_docs.py` and commit the result", file=sys.stderr)
        return 1 if stale else 0
    for rel in write_files(args.out, files):
        print(f"wrote {rel}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
