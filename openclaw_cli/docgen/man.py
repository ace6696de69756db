"""Man pages (roff, man macros) rendered from the command tree."""

from __future__ import annotations

from openclaw_cli.docgen.tree import GENERATED_NOTE, PROG, Node, usage

# --- man pages (roff, man macros) ------------------------------------------------------------------


def roff(text: str) -> str:
    """Escape text for roff: backslashes, hyphens (so options copy correctly), leading control chars."""
    escaped = text.replace("\\", "\\e").replace("-", "\\-")
    return "\n".join("\\&" + line if line.startswith((".", "'")) else line for line in escaped.split("\n"))


def _bold(text: str) -> str:
    return f"\\fB{roff(text)}\\fR"


def render_man(node: Node, version: str) -> str:
    out = [
        f'.\\" {GENERATED_NOTE}',
        f'.TH "{roff(node.page.upper())}" "1" "{PROG} {version}" "{PROG} {version}" "{PROG} manual"',
        ".SH NAME",
        f"{roff(node.page)} \\- {roff(node.short_help or node.command_path)}",
        ".SH SYNOPSIS",
        f"{_bold(node.command_path)} {roff(usage(node))}",
    ]
    if node.help:
        out.append(".SH DESCRIPTION")
        out += _paragraphs(node.help)
    if len(node.path) > 1:
        out += [
            ".PP",
            f"Global options such as {_bold('--home')} and {_bold('--agent')} go before the command; "
            f"see \\fB{PROG}\\fR(1).",
        ]
    out += _man_arguments(node) + _man_options(node) + _man_commands(node)
    out += _man_epilog(node.epilog)
    out += _man_see_also(node)
    return "\n".join(out) + "\n"


def _paragraphs(text: str) -> list[str]:
    lines: list[str] = []
    for paragraph in text.split("\n\n"):
        if paragraph.strip():
            lines += [".PP", roff(paragraph.strip())]
    return lines


def _man_arguments(node: Node) -> list[str]:
    if not node.arguments:
        return []
    lines = [".SH ARGUMENTS"]
    for arg in node.arguments:
        lines += [".TP", f"\\fI{roff(arg.name)}\\fR", roff(arg.help or "(no description)")]
    return lines


def _man_options(node: Node) -> list[str]:
    if not node.options:
        return []
    lines = [".SH OPTIONS"]
    for opt in node.options:
        names = ", ".join(_bold(name) for name in opt.names)
        if opt.takes_value:
            names += f" \\fI{roff(opt.metavar)}\\fR"
        text = opt.help or "(no description)"
        if opt.envvar:
            text += f" Environment variable: {opt.envvar}."
        lines += [".TP", names, roff(text)]
    return lines


def _man_commands(node: Node) -> list[str]:
    if not node.children:
        return []
    lines = [".SH COMMANDS"]
    for child in node.children:
        lines += [".TP", _bold(child.name), f"{roff(child.short_help)}. See \\fB{roff(child.page)}\\fR(1)."]
    return lines


def _man_epilog(epilog: str) -> list[str]:
    if not epilog:
        return []
    head, _, rest = epilog.partition("\n")
    if head.strip().rstrip(":").lower() != "examples":
        return [".SH NOTES", *_paragraphs(epilog)]
    examples = [line.strip() for line in rest.split("\n") if line.strip()]
    lines = [".SH EXAMPLES"]
    for example in examples:
        lines += [".PP", ".nf", f".RS 4\n{roff(example)}\n.RE", ".fi"]
    return lines


def _man_see_also(node: Node) -> list[str]:
    related = []
    if len(node.path) > 1:
        related.append("-".join(node.path[:-1]))
    related += [child.page for child in node.children]
    if not related:
        return []
    return [".SH SEE ALSO", ",\n".join(f"\\fB{roff(page)}\\fR(1)" for page in related)]
