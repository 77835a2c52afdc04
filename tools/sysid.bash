# bash completion for sysid: commands, each command's flags and their fixed values (read from
# `sysid --help` and `sysid COMMAND --help` when completing, so they are the binary's own),
# and parameter names after --free, --free-only, --fix, --set and --bounds (from `sysid
# params ROBOT`, the robot given on the command line). Files everywhere else.

# The flag lines of a command's help: "  -c, --config SPEC.json  ..." -> "-c --config SPEC.json"
_sysid_flag_lines()
{
    "$1" "$2" --help 2>/dev/null | sed -n 's/^  \(-[a-zA-Z], \)\{0,1\}\(--[a-z][a-z-]*\)\( [^ ]*\)\{0,1\}.*/\1\2\3/p' |
        sed 's/, / /'
}

_sysid()
{
    local cur prev sysid cmd robot i w
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    sysid=${COMP_WORDS[0]}
    COMPREPLY=()
    # the command: the first word after sysid (or after `sysid help`)
    if [ "$COMP_CWORD" -eq 1 ] || { [ "$COMP_CWORD" -eq 2 ] && [ "${COMP_WORDS[1]}" = help ]; }; then
        local cmds
        cmds=$("$sysid" --help 2>/dev/null | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')
        [ "$COMP_CWORD" -eq 1 ] && cmds="$cmds help --help --version"
        COMPREPLY=($(compgen -W "$cmds" -- "$cur"))
        return 0
    fi
    cmd=${COMP_WORDS[1]}
    [ "$cmd" = help ] && return 0
    # the robot: the first operand after the command
    for ((i = 2; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        case $w in -*) continue ;; esac
        case ${COMP_WORDS[i-1]} in -o|--output|--report|--html|-c|--config|--validate|--into) continue ;; esac
        robot=$w
        break
    done
    local lines flags values
    lines=$(_sysid_flag_lines "$sysid" "$cmd")
    case $prev in
    --free|--free-only|--fix|--set|--bounds)
        if [ -n "$robot" ] && [ -r "$robot" ]; then
            local names
            names=$("$sysid" params "$robot" -q 2>/dev/null | sed -n '2,$s/ .*//p')
            COMPREPLY=($(compgen -W "$names" -- "$cur"))
            [ "$prev" = --set ] || [ "$prev" = --bounds ] && compopt -o nospace 2>/dev/null
        fi
        return 0
        ;;
    -*)
        # a flag whose help names its values ("--integrator euler|rk4|implicitfast") completes them
        values=$(printf '%s\n' "$lines" | awk -v f="$prev" '{ for (i = 1; i < NF; i++) if ($i == f) print $NF }' |
                 grep -E '^[a-z0-9-]+(\|[a-z0-9-]+)+$' | tr '|' ' ')
        if [ -n "$values" ]; then
            COMPREPLY=($(compgen -W "$values" -- "$cur"))
            return 0
        fi
        ;;
    esac
    if [[ $cur == -* ]]; then
        flags=$(printf '%s\n' "$lines" | tr ' ' '\n' | grep -E '^-')
        COMPREPLY=($(compgen -W "$flags" -- "$cur"))
        return 0
    fi
    COMPREPLY=($(compgen -f -- "$cur"))
    compopt -o filenames 2>/dev/null
    return 0
}
complete -F _sysid sysid
