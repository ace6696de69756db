"""Shell completion scripts (bash, zsh, fish) rendered from the command tree."""

from __future__ import annotations

from openclaw_cli.docgen.tree import FILE_VALUE, GENERATED_NOTE, Node, Opt

# --- shell completions -----------------------------------------------------------------------------


def _value_kinds(node: Node) -> list[tuple[str, str]]:
    """(option name, what completes its value): FILE_VALUE, a space-separated choice list, or ''."""
    kinds = []
    for opt in node.options:
        if not opt.takes_value:
            continue
        kind = " ".join(opt.choices) if opt.choices else FILE_VALUE if opt.is_path else ""
        kinds += [(name, kind) for name in opt.names]
    return kinds


def _valued(node: Node) -> list[str]:
    return [name for opt in node.options if opt.takes_value for name in opt.names]


def _option_names(node: Node) -> list[str]:
    return [name for opt in node.options for name in opt.names]


def render_bash(tree: Node) -> str:
    words, kinds = [], []
    for node in tree.walk():
        path = node.command_path
        for kind, names in (
            ("commands", [c.name for c in node.children]),
            ("options", _option_names(node)),
            ("valued", _valued(node)),
        ):
            if names:
                words.append(f'        "{kind}:{path}") echo "{" ".join(names)}" ;;')
        kinds += [f'        "{path}|{name}") echo "{kind}" ;;' for name, kind in _value_kinds(node) if kind]
    return _BASH_TEMPLATE.format(
        note=GENERATED_NOTE, words="\n".join(words), kinds="\n".join(kinds) or "        *) ;;"
    )


_BASH_TEMPLATE = """\
# bash completion for openclaw. {note}
# Install: source this file, or copy it to /usr/share/bash-completion/completions/openclaw

# _openclaw_words KIND PATH: the sub-commands, options or value-taking options of one command path.
_openclaw_words() {{
    case "$1:$2" in
{words}
    esac
}}

# _openclaw_values PATH OPTION: "@file" for a path value, else the allowed values (may be empty).
_openclaw_values() {{
    case "$1|$2" in
{kinds}
    esac
}}

_openclaw_files() {{
    if type compopt >/dev/null 2>&1; then compopt -o filenames 2>/dev/null; fi
    mapfile -t COMPREPLY < <(compgen -f -- "$1")
}}

_openclaw() {{
    local cur word cmdpath="openclaw" skip=0 i values
    COMPREPLY=()
    cur="${{COMP_WORDS[COMP_CWORD]}}"
    for ((i = 1; i < COMP_CWORD; i++)); do
        word="${{COMP_WORDS[i]}}"
        if ((skip)); then
            skip=0
            continue
        fi
        case "$word" in
            -*)
                if [[ " $(_openclaw_words valued "$cmdpath") " == *" $word "* ]]; then skip=1; fi
                ;;
            *)
                if [[ " $(_openclaw_words commands "$cmdpath") " == *" $word "* ]]; then
                    cmdpath="$cmdpath $word"
                fi
                ;;
        esac
    done
    if ((skip)); then
        values="$(_openclaw_values "$cmdpath" "${{COMP_WORDS[COMP_CWORD - 1]}}")"
        if [[ "$values" == "@file" ]]; then
            _openclaw_files "$cur"
        elif [[ -n "$values" ]]; then
            mapfile -t COMPREPLY < <(compgen -W "$values" -- "$cur")
        fi
        return 0
    fi
    if [[ "$cur" == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$(_openclaw_words options "$cmdpath")" -- "$cur")
        return 0
    fi
    values="$(_openclaw_words commands "$cmdpath")"
    if [[ -n "$values" ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$values" -- "$cur")
    else
        _openclaw_files "$cur"
    fi
    return 0
}}

complete -F _openclaw openclaw
"""


def _sq(text: str) -> str:
    """Single-quote for zsh and fish alike (fish treats \\' and \\\\ as escapes inside quotes)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _zq(text: str) -> str:
    """Single-quote for zsh, where a quote cannot be escaped inside single quotes."""
    return "'" + text.replace("'", "'\\''") + "'"


def _zsh_item(name: str, description: str) -> str:
    return _zq(name.replace(":", "\\:") + ":" + description)


def render_zsh(tree: Node) -> str:
    commands, options, valued, kinds = [], [], [], []
    for node in tree.walk():
        key = _zq(node.command_path)
        if node.children:
            items = " ".join(_zsh_item(c.name, c.short_help) for c in node.children)
            commands.append(f"    ({key}) reply=({items}) ;;")
        if node.options:
            opts = " ".join(_zsh_item(name, opt.help) for opt in node.options for name in opt.names)
            options.append(f"    ({key}) reply=({opts}) ;;")
        if _valued(node):
            valued.append(f"    ({key}) reply=({' '.join(_zq(n) for n in _valued(node))}) ;;")
        for name, kind in _value_kinds(node):
            if kind:
                values = " ".join(map(_zq, kind.split()))
                kinds.append(f"    ({_zq(node.command_path + '|' + name)}) reply=({values}) ;;")
    return _ZSH_TEMPLATE.format(
        note=GENERATED_NOTE,
        commands="\n".join(commands),
        options="\n".join(options),
        valued="\n".join(valued),
        kinds="\n".join(kinds),
    )


_ZSH_TEMPLATE = """\
#compdef openclaw
# zsh completion for openclaw. {note}
# Install: copy this file as _openclaw into a directory on $fpath, then run compinit.

_openclaw_commands() {{
  case $1 in
{commands}
    (*) reply=() ;;
  esac
}}

_openclaw_options() {{
  case $1 in
{options}
    (*) reply=() ;;
  esac
}}

_openclaw_valued() {{
  case $1 in
{valued}
    (*) reply=() ;;
  esac
}}

_openclaw_values() {{
  case $1 in
{kinds}
    (*) reply=() ;;
  esac
}}

_openclaw() {{
  local cmdpath=openclaw word skip=0 i
  local -a reply _openclaw_items
  for (( i = 2; i < CURRENT; i++ )); do
    word=${{words[i]}}
    if (( skip )); then
      skip=0
      continue
    fi
    if [[ $word == -* ]]; then
      _openclaw_valued "$cmdpath"
      (( ${{reply[(Ie)$word]}} )) && skip=1
    else
      _openclaw_commands "$cmdpath"
      (( ${{reply[(I)${{(b)word}}:*]}} )) && cmdpath="$cmdpath $word"
    fi
  done
  if (( skip )); then
    _openclaw_values "$cmdpath|${{words[CURRENT-1]}}"
    if [[ ${{reply[1]}} == @file ]]; then
      _files
    elif (( ${{#reply}} )); then
      compadd -a reply
    else
      _message 'value'
    fi
    return
  fi
  if [[ $PREFIX == -* ]]; then
    _openclaw_options "$cmdpath"
    _openclaw_items=("${{reply[@]}}")
    _describe -t options option _openclaw_items
    return
  fi
  _openclaw_commands "$cmdpath"
  if (( ${{#reply}} )); then
    _openclaw_items=("${{reply[@]}}")
    _describe -t commands command _openclaw_items
  else
    _files
  fi
}}

_openclaw "$@"
"""


def render_fish(tree: Node) -> str:
    commands, valued, completions = [], [], []
    for node in tree.walk():
        key = _sq(node.command_path)
        if node.children:
            names = " ".join(c.name for c in node.children)
            commands.append(f"        case {key}\n            printf '%s\\n' {names}")
        if _valued(node):
            flags = " ".join(_sq(n) for n in _valued(node))
            valued.append(f"        case {key}\n            printf '%s\\n' {flags}")
        condition = f'-n "__openclaw_at {key}"'
        for child in node.children:
            completions.append(f"complete -c openclaw {condition} -a {child.name} -d {_sq(child.short_help)}")
        for opt in node.options:
            completions.append(f"complete -c openclaw {condition} {_fish_option(opt)}")
        if not node.children and node.arguments:
            completions.append(f"complete -c openclaw {condition} -F")
    return _FISH_TEMPLATE.format(
        note=GENERATED_NOTE,
        commands="\n".join(commands),
        valued="\n".join(valued),
        completions="\n".join(completions),
    )


def _fish_option(opt: Opt) -> str:
    parts = []
    for name in opt.names:
        if name.startswith("--"):
            parts.append(f"-l {name[2:]}")
        elif len(name) == 2:
            parts.append(f"-s {name[1:]}")
        else:
            parts.append(f"-o {name[1:]}")
    if opt.takes_value:
        if opt.choices:
            parts.append(f"-x -a {_sq(' '.join(opt.choices))}")
        elif opt.is_path:
            parts.append("-r -F")
        else:
            parts.append("-x")
    parts.append(f"-d {_sq(opt.help)}")
    return " ".join(parts)


_FISH_TEMPLATE = """\
# fish completion for openclaw. {note}
# Install: copy this file to ~/.config/fish/completions/openclaw.fish

function __openclaw_commands --argument-names cmdpath
    switch $cmdpath
{commands}
    end
end

function __openclaw_valued --argument-names cmdpath
    switch $cmdpath
{valued}
    end
end

# The command path typed so far ("openclaw config"), skipping options and their values.
function __openclaw_path
    set -l tokens (commandline -opc)
    set -l cmdpath openclaw
    set -l skip 0
    for word in $tokens[2..-1]
        if test $skip -eq 1
            set skip 0
            continue
        end
        if string match -q -- '-*' $word
            if contains -- $word (__openclaw_valued $cmdpath)
                set skip 1
            end
        else if contains -- $word (__openclaw_commands $cmdpath)
            set cmdpath "$cmdpath $word"
        end
    end
    echo $cmdpath
end

function __openclaw_at --argument-names expected
    test (__openclaw_path) = $expected
end

complete -c openclaw -f
{completions}
"""
