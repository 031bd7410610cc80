# bash completion for nsdedup(1)

# Print the words of the list given as the second argument that begin with
# the first argument, one a line, each preceded by the third argument.
_nsdedup_match()
{
	local word
	for word in $2; do
		[[ $word == "$1"* ]] && printf '%s\n' "$3$word"
	done
}

# Complete the value of option $1; $2 is the part already typed and $3 a
# prefix to put before each candidate.
_nsdedup_value()
{
	local values
	case $1 in
	-f | --format)
		values='auto jsonl tsv' ;;
	-m | --method)
		values='nshash simhash minhash' ;;
	--compat)
		values='nshash' ;;
	--on-error)
		values='pass skip fail' ;;
	--progress)
		values='auto always never' ;;
	--stats)
		values='text json' ;;
	-o | --output | --db)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -f -- "$2")
		COMPREPLY=("${COMPREPLY[@]/#/$3}")
		return 0 ;;
	-k | --key | -n | --sentences | --distance | --dup-field | \
	--field-name | --id-field | --max-line | --min-features | \
	--min-length | --min-match | --common | --ngram | --shingle | --wait | \
	--threshold | --confirm | --ttl | -j | --jobs)
		COMPREPLY=()
		return 0 ;;
	*)
		return 1 ;;
	esac
	mapfile -t COMPREPLY < <(_nsdedup_match "$2" "$values" "$3")
	return 0
}

_nsdedup()
{
	local cur prev prevprev opts
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=
	prevprev=
	if ((COMP_CWORD > 0)); then
		prev=${COMP_WORDS[COMP_CWORD - 1]}
	fi
	if ((COMP_CWORD > 1)); then
		prevprev=${COMP_WORDS[COMP_CWORD - 2]}
	fi
	COMPREPLY=()

	# The value of a long option, after "=" (split off by COMP_WORDBREAKS
	# or not), or in the next word.
	if [[ $cur == = ]]; then
		_nsdedup_value "$prev" "" "" && return 0
	elif [[ $prev == = ]]; then
		_nsdedup_value "$prevprev" "$cur" "" && return 0
	elif [[ $cur == -?*=* ]]; then
		_nsdedup_value "${cur%%=*}" "${cur#*=}" "${cur%%=*}="
		return 0
	elif [[ $prev == -* && $prev != --stats ]]; then
		# --stats takes its value only after "=": the next word is not it.
		_nsdedup_value "$prev" "$cur" "" && return 0
	fi

	if [[ $cur == -* ]]; then
		opts='-a -d -D -f -H -h -j -k -m -n -o -q -V
		    --annotate --common= --compat= --confirm= --db= --db-info
		    --db-undo --db-verify --distance=
		    --drop-dups --dup-field= --explain --field-name= --format=
		    --help --id-field= --jobs= --key= --max-line= --method=
		    --min-features= --min-length= --min-match= --ngram=
		    --no-header
		    --no-update --no-wait --on-error= --only-dups --output=
		    --progress= --quiet --sentences= --shingle= --stats
		    --threshold= --ttl= --version --wait='
		mapfile -t COMPREPLY < <(_nsdedup_match "$cur" "$opts" "")
		if [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *= ]]; then
			compopt -o nospace 2>/dev/null || true
		fi
		return 0
	fi

	compopt -o filenames 2>/dev/null
	mapfile -t COMPREPLY < <(compgen -f -- "$cur")
	return 0
} &&
	complete -F _nsdedup nsdedup
