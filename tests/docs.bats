#!/usr/bin/env bats
# Docs that cannot drift: --help, the man page, the completions and the
# README name the same options; the man page is lint-clean; its examples
# and the README's usage examples run.

load helpers

# Long options as each source spells them, one per line, sorted.
help_options() {
	"$NSDEDUP" --help | grep -o -- '--[a-z][a-z-]*' | sort -u
}
man_options() {
	grep -o 'Fl \\\?-[a-z][a-z-]*' "$TOP_SRCDIR/man/nsdedup.1" |
	    sed 's/^Fl \\\?-/--/' | sort -u
}
shell_options() {
	grep -o -- '--[a-z][a-z-]*' "$1" | sort -u
}
fish_options() {
	grep -o -- '-l [a-z][a-z-]*' "$TOP_SRCDIR/completions/nsdedup.fish" |
	    sed 's/^-l /--/' | sort -u
}

@test "--help, the man page and the completions list the same long options" {
	help_options > help.txt
	[ "$(wc -l < help.txt)" -ge 20 ]
	man_options > man.txt
	shell_options "$TOP_SRCDIR/completions/nsdedup.bash" > bash.txt
	shell_options "$TOP_SRCDIR/completions/_nsdedup" > zsh.txt
	fish_options > fish.txt
	diff -u help.txt man.txt
	diff -u help.txt bash.txt
	diff -u help.txt zsh.txt
	diff -u help.txt fish.txt
}

@test "the README's option table lists the same long options" {
	sed -n '/^Options$/,/^Exit status$/p' "$TOP_SRCDIR/README" |
	    grep -o -- '--[a-z][a-z-]*' | sort -u > readme.txt
	help_options > help.txt
	diff -u help.txt readme.txt
}

@test "the synopsis of --help and of the man page agree" {
	need mandoc
	synopsis=$("$MANDOC" -Tascii "$TOP_SRCDIR/man/nsdedup.1" | sed 's/.\x08//g' |
	    sed -n '/^SYNOPSIS/{n;p;}' | sed 's/^ *//')
	[ "Usage: $synopsis" = "$("$NSDEDUP" --help | head -n 1)" ]
}

@test "the man pages are clean under mandoc -Tlint -Wwarning" {
	need mandoc
	for page in nsdedup.1 nsdedup-index.5; do
		run "$MANDOC" -Tlint -Wwarning "$TOP_SRCDIR/man/$page"
		[ "$status" -eq 0 ]
		[ -z "$output" ]
	done
}

@test "the man page, --help and README document every exit status" {
	statuses=$(sed -n 's/^.*NSD_EXIT_[A-Z]* = \([0-9]*\).*$/\1/p' \
	    "$TOP_SRCDIR/src/util.h")
	[ "$(echo "$statuses" | wc -l)" -ge 10 ]
	help=$("$NSDEDUP" --help | sed -n '/^Exit status/,$p' | tr '\n' ' ')
	for n in $statuses; do
		sed -n '/^\.Sh EXIT STATUS/,/^\.Sh /p' "$TOP_SRCDIR/man/nsdedup.1" |
		    grep -q "^\.It $n\$"
		[[ "$help" == *" $n "* ]]
		sed -n '/^Exit status$/,/^How it works$/p' "$TOP_SRCDIR/README" |
		    grep -q "^| $n |"
	done
}

# A scratch tree with the examples, and nsdedup (and jq, when configure
# found it) on PATH, for running docs.
doc_sandbox() {
	mkdir -p bin
	ln -s "$NSDEDUP" bin/nsdedup
	[ -z "${JQ-}" ] || ln -s "$JQ" bin/jq
	cp -R "$TOP_SRCDIR/examples" .
	chmod -R u+w examples
	PATH="$PWD/bin:$PATH"
}

# Run each command of file $1 in the sandbox, in order; with $2 set, each
# must also write something. Without jq, a command's "| jq ..." tail is
# cut off (so that the runs after it find the index it made), and the
# test skips at the end, saying so; so does a command that reads a gzip
# input when nsdedup is built without gzip, which is not run.
run_examples() {
	local cmd cut=0 nogzip=0

	while IFS= read -r cmd; do
		if [ -z "${JQ-}" ] && [[ $cmd == *"| jq "* ]]; then
			cmd=${cmd%%| jq *}
			cut=$((cut + 1))
		fi
		if [[ $cmd == *".gz"* ]] && ! "$NSDEDUP" --version |
		    grep -q '^compressed inputs: .*gzip'; then
			nogzip=$((nogzip + 1))
			continue
		fi
		run --separate-stderr bash -o pipefail -c "$cmd"
		[ "$status" -eq 0 ] || { echo "failed ($status): $cmd: $stderr"; false; }
		[ -z "$2" ] || [ -n "$output" ] || [ -s out.tsv ] ||
		    [ -s fresh.jsonl ] || { echo "no output: $cmd"; false; }
	done < "$1"
	[ "$cut" -eq 0 ] || skip "$cut examples ran without their jq filter: jq not found by configure (Debian package jq; or configured --without-jq)"
	[ "$nogzip" -eq 0 ] || skip "$nogzip examples of gzip input not run: nsdedup is built without gzip (configure found neither ISA-L nor zlib)"
}

@test "every example in the man page runs" {
	doc_sandbox
	sed -n '/^\.Sh EXAMPLES/,/^\.Sh /p' "$TOP_SRCDIR/man/nsdedup.1" |
	    awk '/^\.Bd -literal/ { getline; print }' > examples.txt
	[ "$(wc -l < examples.txt)" -ge 5 ]
	run_examples examples.txt with-output
}

@test "every usage example in the README runs" {
	doc_sandbox
	grep '^    \$ ' "$TOP_SRCDIR/README" | sed 's/^    \$ //' > examples.txt
	[ "$(wc -l < examples.txt)" -ge 4 ]
	run_examples examples.txt ""
}

# configure's optional dependencies, "NAME PACKAGE" a line, sorted.
configure_optional() {
	sed -n 's/^NSD_OPTIONAL_[A-Z]*(\[\([a-z0-9-]*\)\], \[\([^]]*\)\].*/\1 \2/p' \
	    "$TOP_SRCDIR/configure.ac" | sort
}

@test "configure offers --without-NAME for each optional dependency" {
	configure_optional > want
	[ "$(wc -l < want)" -ge 10 ]
	"$TOP_SRCDIR/configure" --help | grep -o -- '--without-[a-z0-9-]\+' |
	    sed 's/^--without-//' | sort > got
	cut -d ' ' -f 1 want | diff -u - got
}

@test "the README lists the optional dependencies, and which the set-up installs" {
	setup=$(grep '^    apt-get update' "$TOP_SRCDIR/README")
	[ -n "$setup" ]
	while read -r name package; do
		case " $setup " in
		*" $package "*) installed=yes ;;
		*) installed=no ;;
		esac
		printf '%s %s %s\n' "$name" "$package" "$installed"
	done < <(configure_optional) > want
	sed -n '/^| NAME | Debian package |/,/^$/p' "$TOP_SRCDIR/README" |
	    awk -F ' *[|] *' 'NR > 2 && NF > 4 { print $2, $3, $5 }' |
	    sort > got
	diff -u want got
}

@test "CI runs the README's test command" {
	cmd=$(awk '/^Run the whole test suite/ { found = 1 } found && /^    / { sub(/^    /, ""); print; exit }' "$TOP_SRCDIR/README")
	[ -n "$cmd" ]
	grep -qF -- "$cmd" "$TOP_SRCDIR/.ci/run"
}

@test "the bash completion is valid bash" {
	bash -n "$TOP_SRCDIR/completions/nsdedup.bash"
}

@test "the zsh completion is valid zsh" {
	need zsh
	"$ZSH" -n "$TOP_SRCDIR/completions/_nsdedup"
}

@test "the fish completion is valid fish" {
	need fish
	"$FISH" -n "$TOP_SRCDIR/completions/nsdedup.fish"
}

@test "bash completion offers the options and their values" {
	# shellcheck source=/dev/null # linted on its own by make lint
	source "$TOP_SRCDIR/completions/nsdedup.bash"
	COMP_WORDS=(nsdedup --on-e)
	COMP_CWORD=1
	COMP_LINE="nsdedup --on-e"
	COMP_POINT=${#COMP_LINE}
	_nsdedup
	[[ " ${COMPREPLY[*]} " == *"--on-error"* ]]
	COMP_WORDS=(nsdedup --format=j)
	COMP_LINE="nsdedup --format=j"
	COMP_POINT=${#COMP_LINE}
	_nsdedup
	[[ " ${COMPREPLY[*]} " == *"jsonl"* ]]
}
