# SPDX-License-Identifier: GPL-3.0-or-later
# Bash completion for lbsim (installed as bash-completion/completions/lbsim;
# or: source cli/lbsim.bash). It completes the commands, each command's
# options as its own --help lists them, scenario and sweep names as `lbsim
# scenarios` lists them, and files by kind: scenarios (*.ini), results
# databases (*.db), traces.
_lbsim()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local prog=${COMP_WORDS[0]}
	local cmds="run keys scenarios sweep merge plot export views report predict calibrate whatif testbed validate help"
	local cmd="" w
	for w in "${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
		case " $cmds " in *" $w "*) cmd=$w; break ;; esac
	done
	COMPREPLY=()
	case $prev in
	-o | --output | --out | --calibrate)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	--format) COMPREPLY=($(compgen -W "table csv json png svg pdf" -- "$cur")); return ;;
	--detail) COMPREPLY=($(compgen -W "runs iterations workers" -- "$cur")); return ;;
	--worker) COMPREPLY=($(compgen -W "blas torch" -- "$cur")); return ;;
	--paper) COMPREPLY=($(compgen -W "single double" -- "$cur")); return ;;
	--meta) COMPREPLY=($(compgen -f -X '!*.yaml' -- "$cur") $(compgen -d -- "$cur")); return ;;
	esac
	if [[ $cur == -* ]]; then
		local opts
		# the options the command's --help lists, one per line of its Options
		opts=$("$prog" ${cmd:+"$cmd"} --help 2> /dev/null |
			sed -nE 's/^ +(-[a-zA-Z0-9], +)?(--[a-z][a-z0-9-]*).*/\2/p' | sort -u)
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		return
	fi
	local names
	case $cmd in
	help) COMPREPLY=($(compgen -W "$cmds" -- "$cur")) ;;
	merge | plot | export | views | report | predict)
		COMPREPLY=($(compgen -f -X '!*.db' -- "$cur") $(compgen -d -- "$cur")) ;;
	whatif)
		COMPREPLY=($(compgen -f -X '!*.@(csv|csv.gz|json|json.gz)' -- "$cur") $(compgen -d -- "$cur")) ;;
	keys | scenarios) ;;
	calibrate) COMPREPLY=($(compgen -f -- "$cur")) ;;
	*)
		# run (or no command), sweep, testbed, validate: a scenario file or name
		names=$("$prog" scenarios 2> /dev/null | awk '/^  / { print $1 }')
		COMPREPLY=($(compgen -W "$names" -- "$cur") $(compgen -f -X '!*.ini' -- "$cur") $(compgen -d -- "$cur"))
		[ -z "$cmd" ] && [ "$COMP_CWORD" -eq 1 ] && COMPREPLY+=($(compgen -W "$cmds" -- "$cur"))
		;;
	esac
}
shopt -s extglob
complete -F _lbsim lbsim
