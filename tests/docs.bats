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
	command -v "$MANDOC" >/dev/null || skip "mandoc is not installed"
	synopsis=$("$MANDOC" -Tascii "$TOP_SRCDIR/man/nsdedup.1" | sed 's/.\x08//g' |
	    sed -n '/^SYNOPSIS/{n;p;}' | sed 's/^ *//')
	[ "Usage: $synopsis" = "$("$NSDEDUP" --help | head -n 1)" ]
}

@test "the man pages are clean under mandoc -Tlint -Wwarning" {
	command -v "$MANDOC" >/dev/null || skip "mandoc is not installed"
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

# A scratch tree with the examples and "nsdedup" on PATH, for running docs.
doc_sandbox() {
	mkdir -p bin
	ln -s "$NSDEDUP" bin/nsdedup
	cp -R "$TOP_SRCDIR/examples" .
	chmod -R u+w examples
	PATH="$PWD/bin:$PATH"
}

@test "every example in the man page runs" {
	doc_sandbox
	sed -n '/^\.Sh EXAMPLES/,/^\.Sh /p' "$TOP_SRCDIR/man/nsdedup.1" |
	    awk '/^\.Bd -literal/ { getline; print }' > examples.txt
	[ "$(wc -l < examples.txt)" -ge 5 ]
	while IFS= read -r cmd; do
		run --separate-stderr bash -o pipefail -c "$cmd"
		[ "$status" -eq 0 ] || { echo "failed ($status): $cmd: $stderr"; false; }
		[ -n "$output" ] || [ -s out.tsv ] || [ -s fresh.jsonl ] ||
		    { echo "no output: $cmd"; false; }
	done < examples.txt
}

@test "every usage example in the README runs" {
	doc_sandbox
	grep '^    \$ ' "$TOP_SRCDIR/README" | sed 's/^    \$ //' > examples.txt
	[ "$(wc -l < examples.txt)" -ge 4 ]
	while IFS= read -r cmd; do
		run --separate-stderr bash -o pipefail -c "$cmd"
		[ "$status" -eq 0 ] || { echo "failed ($status): $cmd: $stderr"; false; }
	done < examples.txt
}

@test "CI runs the README's test command" {
	cmd=$(awk '/^Run the whole test suite/ { found = 1 } found && /^    / { sub(/^    /, ""); print; exit }' "$TOP_SRCDIR/README")
	[ -n "$cmd" ]
	grep -qF -- "$cmd" "$TOP_SRCDIR/.ci/run"
}

@test "the completion files are valid for their shells" {
	bash -n "$TOP_SRCDIR/completions/nsdedup.bash"
	if command -v zsh >/dev/null; then zsh -n "$TOP_SRCDIR/completions/_nsdedup"; fi
	if command -v fish >/dev/null; then fish -n "$TOP_SRCDIR/completions/nsdedup.fish"; fi
}

@test "bash completion offers the options and their values" {
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
