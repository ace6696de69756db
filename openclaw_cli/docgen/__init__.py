"""Man pages and shell completion scripts generated from a command tree: tree.py reduces a Typer/click
command to plain nodes, completion.py and man.py render them, files.py lists every generated file. The
package imports nothing from the rest of openclaw_cli (in particular nothing from cli/): callers pass
the command in, and `openclaw man`, `openclaw completion` and tools/gen_docs.py are its callers.

May import (in openclaw_cli/): nothing.
"""
