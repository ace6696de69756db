"""Man pages and shell completion scripts generated from a command tree: tree.py reduces a Typer/click
command to plain nodes, completion.py and man.py render them, files.py lists every generated file. The
package depends on nothing in openclaw_cli.cli: callers pass the command in.
"""
