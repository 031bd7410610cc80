#!/usr/bin/env bats
# The command line: help, version, usage errors, option values.

load helpers

@test "--help prints the usage to stdout and exits 0" {
	run_nsd --help
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "Usage: nsdedup [OPTION]... [FILE]..." ]
	[[ "$output" == *"--drop-dups"* ]]
	[ -z "$stderr" ]
}

@test "-h is --help" {
	run_nsd -h
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "Usage: nsdedup [OPTION]... [FILE]..." ]
	[ -z "$stderr" ]
}

@test "--version prints nsdedup and the version on its first line" {
	run_nsd --version
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" =~ ^nsdedup\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
	[ -z "$stderr" ]
}

@test "--version then names the methods and formats, the copyright, the licence, no warranty" {
	run_nsd --version
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 8 ]
	[ "${lines[0]}" = "nsdedup 0.2.0" ]
	[ "${lines[1]}" = "fingerprints: nshash, simhash, minhash; normalization version 3" ]
	[[ "${lines[2]}" == "Han folding: "* ]]
	[[ "${lines[3]}" == "compressed inputs: "* ]]
	[ "${lines[4]}" = "Copyright (C) 2026 The nsdedup authors." ]
	[ "${lines[5]}" = "License ISC: see the file COPYING that comes with the sources." ]
	[ "${lines[6]}" = "This is free software: you are free to change and redistribute it." ]
	[ "${lines[7]}" = "There is NO WARRANTY, to the extent permitted by law." ]
	# The licence it names is the one the sources hold.
	grep -qx 'Copyright (c) 2026 The nsdedup authors' "$TOP_SRCDIR/COPYING"
	grep -q '^Permission to use, copy, modify, and distribute this software for any$' \
	    "$TOP_SRCDIR/COPYING"
}

@test "--help ends by saying where bugs are to be reported" {
	run_nsd --help
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "${lines[-1]}" = "Reporting bugs: see REPORTING BUGS in nsdedup(1), or the README." ]
	grep -qx '\.Sh REPORTING BUGS' "$TOP_SRCDIR/man/nsdedup.1"
	grep -qx 'Reporting bugs' "$TOP_SRCDIR/README"
}

@test "an unknown option is a usage error on stderr, status 2" {
	run_nsd --no-such-option
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[[ "$stderr" == *"unknown or ambiguous option '--no-such-option'"* ]]
	[[ "$stderr" == *"Usage: nsdedup [OPTION]... [FILE]..."* ]]
	[[ "$stderr" == *"Try 'nsdedup --help' for more information."* ]]
}

@test "an unknown short option is named" {
	run_nsd -Z
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"unknown option '-Z'"* ]]
}

@test "a missing option value is a usage error" {
	run_nsd --key
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[[ "$stderr" == *"requires a value"* ]]
}

@test "a bad enum value lists the valid ones" {
	run_nsd --format=xml
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"invalid value 'xml' for --format (valid: auto, jsonl, tsv)"* ]]
	run_nsd --on-error=ignore
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"(valid: pass, skip, fail)"* ]]
	run_nsd --method=bloom
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"invalid value 'bloom' for --method (valid: nshash, simhash, minhash)"* ]]
	run_nsd --progress=sometimes
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"(valid: auto, always, never)"* ]]
	run_nsd --compat=simhash
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"(valid: nshash)"* ]]
}

@test "numbers are checked: range, junk, and size suffixes" {
	run_nsd -n 0
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--sentences must be between 1 and 64, not '0'"* ]]
	run_nsd --sentences=65
	[ "$status" -eq 2 ]
	run_nsd --min-length=12abc
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"invalid number '12abc' for --min-length"* ]]
	run_nsd --max-line=4X
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"invalid size '4X' for --max-line"* ]]
	run_nsd --max-line=99999999999999999999999
	[ "$status" -eq 2 ]
	printf '{"text":"x"}\n' > in.jsonl
	run_nsd --max-line=1K in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
}

@test "names of the added fields are checked" {
	run_nsd --field-name=
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--field-name must not be empty"* ]]
	run_nsd --field-name="$(printf 'a\tb')"
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"without tabs or line breaks"* ]]
	run_nsd --field-name=dup --dup-field=dup
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--field-name and --dup-field must differ"* ]]
}

@test "a bad JSON Pointer is a usage error" {
	printf '{"text":"x"}\n' > in.jsonl
	run_nsd -k '/a~2' in.jsonl
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[[ "$stderr" == *"invalid JSON Pointer '/a~2'"* ]]
}

@test "no operands and a terminal on stdin: usage instead of waiting" {
	command -v script >/dev/null || skip "script(1) is not installed"
	# script(1) gives the program a terminal on stdin.
	run script -qec "$NSDEDUP" /dev/null
	[ "$status" -eq 2 ]
	[[ "$output" == *"no input: give a FILE, or pipe records in"* ]]
	[[ "$output" == *"Usage: nsdedup"* ]]
}

@test "stdin is read when there are no operands, and for -" {
	printf '{"id":1,"text":"%s"}\n' "$(sentence 1)" > in.jsonl
	run_nsd < in.jsonl
	[ "$status" -eq 0 ]
	expect_eq "$output" "{\"id\":1,\"text\":\"$(sentence 1)\",\"similar_id\":1,\"is_dup\":false}"
	[ -z "$stderr" ]
	run_nsd - < in.jsonl
	[ "$status" -eq 0 ]
	[[ "$output" == *'"similar_id":1,"is_dup":false}' ]]
}

@test "the mode options: the last one given wins" {
	printf '{"id":1,"text":"%s"}\n{"id":2,"text":"%s"}\n' "$(sentence 1)" "$(sentence 1)" > in.jsonl
	run_nsd -D -d in.jsonl
	[ "$status" -eq 0 ]
	expect_eq "$output" "{\"id\":1,\"text\":\"$(sentence 1)\"}"
	run_nsd -d -D in.jsonl
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == '{"id":2,'* ]]
}

@test "a value given to an option that takes none is named as such" {
	run_nsd --annotate=x
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[[ "$stderr" == "nsdedup: option '--annotate' takes no value"* ]]
}

@test "options may follow the file operands, and -- ends them" {
	printf '{"id":1,"text":"%s"}\n' "$(sentence 1)" > in.jsonl
	run_nsd in.jsonl -o out.jsonl --stats
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[[ "$stderr" == *"nsdedup: records     1"* ]]
	[ -s out.jsonl ]
	cp in.jsonl ./-d
	run_nsd -- -d
	[ "$status" -eq 0 ]
	[[ "$output" == *'"is_dup":false}' ]]
}

@test "an unknown short option in a cluster is the one named" {
	run_nsd --stats -xq in.jsonl
	[ "$status" -eq 2 ]
	[[ "$stderr" == "nsdedup: unknown option '-x'"* ]]
	run_nsd -qk
	[ "$status" -eq 2 ]
	[[ "$stderr" == "nsdedup: option '-k' requires a value"* ]]
}

# Run nsdedup with the arguments given, its standard output $1 (a file, or
# - for closed), stdout and stderr captured apart as run_nsd does.
run_stdout() {
	local to=$1

	shift
	if [ "$to" = - ]; then
		# shellcheck disable=SC2016
		run --separate-stderr bash -c '"$NSDEDUP" "$@" >&-' nsd "$@"
	else
		# shellcheck disable=SC2016
		run --separate-stderr bash -c '"$NSDEDUP" "$@" > "$0"' "$to" "$@"
	fi
}

@test "--help, --version, --db-info and --db-verify report a failed standard output: status 4" {
	[ -w /dev/full ] || skip "no /dev/full"
	printf '{"id":1,"text":"%s"}\n' "$(sentence 1)" > in.jsonl
	"$NSDEDUP" --db db in.jsonl > /dev/null
	for args in --help -h --version "--db db --db-info" "--db db --db-verify"; do
		echo "$args"
		# shellcheck disable=SC2086
		run_stdout /dev/full $args
		expect_eq "$status" 4
		expect_eq "$output" ""
		expect_eq "$stderr" \
		    "nsdedup: standard output: write error: No space left on device"
		# shellcheck disable=SC2086
		run_stdout - $args
		expect_eq "$status" 4
		expect_eq "$output" ""
		expect_eq "$stderr" \
		    "nsdedup: standard output: write error: Bad file descriptor"
		# shellcheck disable=SC2086
		run_stdout out.txt $args
		expect_eq "$status" 0
		expect_eq "$stderr" ""
		[ -s out.txt ]
	done
}

@test "an option of another method than the one chosen is a usage error that says so" {
	printf '{"id":1,"text":"%s"}\n' "$(sentence 1)" > in.jsonl
	# option=value, then the methods it belongs to.
	for spec in "sentences=3 nshash" "min-length=10 nshash" \
	    "min-match=1 nshash" "common=0 nshash" "compat=nshash nshash" \
	    "distance=2 simhash" "threshold=0.8 minhash" \
	    "ngram=2 simhash minhash" "shingle=2 simhash minhash" \
	    "min-features=4 simhash minhash"; do
		read -r option own other <<< "$spec"
		case "$own${other:+ and $other}" in
		nshash) others="simhash minhash" ;;
		simhash) others="nshash minhash" ;;
		minhash) others="nshash simhash" ;;
		*) others="nshash" ;;
		esac
		for m in $others; do
			echo "--$option with $m"
			run_nsd -m "$m" "--$option" in.jsonl
			usage_error "--${option%%=*} is an option of --method $own${other:+ and $other}, not of $m"
		done
		# Given to its own method(s), it runs.
		for m in $own $other; do
			run_nsd -m "$m" "--$option" in.jsonl
			expect_eq "$status" 0
			expect_eq "$stderr" ""
			expect_eq "$(printf '%s\n' "$output" | wc -l)" 1
		done
	done
	# The default method is nshash; -n is --sentences.
	run_nsd -n 3 -m simhash in.jsonl
	usage_error "--sentences is an option of --method nshash, not of simhash"
	run_nsd --threshold 0.8 in.jsonl
	usage_error "--threshold is an option of --method minhash, not of nshash"
}
