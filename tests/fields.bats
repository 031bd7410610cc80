#!/usr/bin/env bats
# A field that no record has: a --key or --id-field that none of the first
# 1000 records of an input has is a mistaken name, which stops the run with
# status 3, rather than a file of bad records.

load helpers

# $1 JSON records with the members category, id, text and title, the
# category padded to $2 bytes (so that 1 MiB batches hold fewer records);
# records from number $3 on (none if 0) have a body too, and a "uid" member.
records() {
	awk -v n="$1" -v pad="${2:-1}" -v from="${3:-0}" 'BEGIN {
		p = "c"
		while (length(p) < pad)
			p = p p
		p = substr(p, 1, pad)
		for (i = 1; i <= n; i++) {
			extra = ""
			if (from > 0 && i >= from)
				extra = sprintf(",\"body\":\"Record %d has a " \
				    "body that is long enough for nshash.\"," \
				    "\"uid\":\"u%d\"", i, i)
			printf "{\"category\":\"%s\",\"id\":\"%d\",\"text\":" \
			    "\"Record %d is a sentence long enough for " \
			    "nshash to take it.\",\"title\":\"t%d\"%s}\n",
			    p, i, i, i, extra
		}
	}'
}

HAVE='the records have: "category", "id", "text", "title"'

@test "a --key that no record has stops the run, writing nothing" {
	records 20 > bbc.jsonl
	run_nsd --drop-dups -k body bbc.jsonl
	[ "$status" -eq 3 ]
	[ -z "$output" ]
	expect_eq "$stderr" "nsdedup: bbc.jsonl: no record has the field \"body\"; $HAVE"
}

@test "-q does not hide it" {
	records 20 > bbc.jsonl
	run_nsd -q -d -k body bbc.jsonl
	[ "$status" -eq 3 ]
	[ -z "$output" ]
	expect_eq "$stderr" "nsdedup: bbc.jsonl: no record has the field \"body\"; $HAVE"
}

@test "the judgement is made at the 1000th record" {
	records 1200 > in.jsonl
	run_nsd -k body in.jsonl
	[ "$status" -eq 3 ]
	[ -z "$output" ]
	expect_eq "$stderr" "nsdedup: in.jsonl: no record of the first 1000 has the field \"body\"; $HAVE"
}

@test "an --id-field that no record has stops the run" {
	records 20 > in.jsonl
	run_nsd --id-field=uid in.jsonl
	[ "$status" -eq 3 ]
	[ -z "$output" ]
	expect_eq "$stderr" "nsdedup: in.jsonl: no record has the field \"uid\"; $HAVE"
}

@test "the default id is not judged: records without it get numbers" {
	printf '{"text":"%s"}\n' "$(sentence 1)" > in.jsonl
	run_nsd in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ "$output" == *'"similar_id":1,"is_dup":false}' ]]
}

@test "a JSON Pointer that no record reaches stops the run" {
	records 20 > in.jsonl
	run_nsd -k /meta/body in.jsonl
	[ "$status" -eq 3 ]
	[ -z "$output" ]
	expect_eq "$stderr" "nsdedup: in.jsonl: no record has the field \"/meta/body\"; $HAVE"
	printf '{"meta":{"body":"%s"}}\n' "$(sentence 1)" >> in.jsonl
	run_nsd -k /meta/body in.jsonl
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 21 ]
}

@test "one --key of several that no record has is named" {
	records 20 > in.jsonl
	run_nsd -k title -k body -k text in.jsonl
	[ "$status" -eq 3 ]
	[ -z "$output" ]
	expect_eq "$stderr" "nsdedup: in.jsonl: no record has the field \"body\"; $HAVE"
}

@test "each --key is judged on its own: one record with each will do" {
	printf '{"a":"%s"}\n{"b":"%s"}\n' "$(sentence 1)" "$(sentence 2)" > in.jsonl
	run_nsd -k a -k b in.jsonl
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 2 ]
	[ "${stderr_lines[0]}" = 'nsdedup: in.jsonl:1: no text field "b"' ]
	[ "${stderr_lines[1]}" = 'nsdedup: in.jsonl:2: no text field "a"' ]
}

@test "a field first at record 500 will do: the records before it are bad" {
	# Records of 3 KB: the first 500 take two batches of input.
	records 600 3000 500 > in.jsonl
	run_nsd -d -k body in.jsonl
	[ "$status" -eq 1 ]
	cmp <(printf '%s\n' "$output") in.jsonl
	[ "${#stderr_lines[@]}" -eq 11 ]
	[ "${stderr_lines[0]}" = 'nsdedup: in.jsonl:1: no text field "body"' ]
	[ "${stderr_lines[9]}" = 'nsdedup: in.jsonl:10: no text field "body"' ]
	[ "${stderr_lines[10]}" = 'nsdedup: 499 bad records (10 shown)' ]
	# And in annotate mode the records from the 500th on are judged.
	run_nsd -k body --id-field=uid in.jsonl
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 600 ]
	[ "${lines[498]}" = "$(sed -n 499p in.jsonl)" ]
	[[ "${lines[499]}" == *',"similar_id":"u500","is_dup":false}' ]]
}

@test "a field first at record 1200 of 1500 is too late" {
	# Records of 2 KB: the first 1000 take two batches of input.
	records 1500 2000 1200 > in.jsonl
	for jobs in 1 2; do
		run_nsd -j "$jobs" -k body in.jsonl
		[ "$status" -eq 3 ]
		[ -z "$output" ]
		expect_eq "$stderr" "nsdedup: in.jsonl: no record of the first 1000 has the field \"body\"; $HAVE"
	done
	run --separate-stderr bash -c '"$NSDEDUP" -k body < in.jsonl'
	[ "$status" -eq 3 ]
	[ -z "$output" ]
	expect_eq "$stderr" "nsdedup: (standard input): no record of the first 1000 has the field \"body\"; $HAVE"
}

@test "a later record without the field stays a bad record" {
	records 3 1 1 > in.jsonl
	records 2 >> in.jsonl
	run_nsd -k body in.jsonl
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 5 ]
	[ "${stderr_lines[0]}" = 'nsdedup: in.jsonl:4: no text field "body"' ]
}

@test "each input is judged on its own: the second one's mistake" {
	records 3 1 1 > a.jsonl
	records 20 > b.jsonl
	run_nsd -k body a.jsonl b.jsonl
	[ "$status" -eq 3 ]
	# The first input's records are written before the second is read.
	[ "${#lines[@]}" -eq 3 ]
	[[ "${lines[2]}" == *'"similar_id":"3","is_dup":false}' ]]
	expect_eq "$stderr" "nsdedup: b.jsonl: no record has the field \"body\"; $HAVE"
	# And one input that has the field does not vouch for another.
	run_nsd -k body b.jsonl a.jsonl
	[ "$status" -eq 3 ]
	[ -z "$output" ]
	expect_eq "$stderr" "nsdedup: b.jsonl: no record has the field \"body\"; $HAVE"
}

@test "a field of another type is there: its records are bad, as before" {
	records 5 | sed 's/"text":"[^"]*"/"text":42/' > in.jsonl
	run_nsd in.jsonl
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 5 ]
	[ "${stderr_lines[0]}" = 'nsdedup: in.jsonl:1: text field "text" is a number, not a string' ]
	records 5 | sed 's/"id":"[^"]*"/"id":null/' > in.jsonl
	run_nsd --id-field=id in.jsonl
	[ "$status" -eq 0 ]
	[[ "${lines[4]}" == *'"similar_id":5,"is_dup":false}' ]]
}

@test "lines that are not JSON objects say nothing of the fields" {
	printf 'not json\n[1,2]\n{"text":\n' > bad.jsonl
	run_nsd -k body bad.jsonl
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 3 ]
	[ "${#stderr_lines[@]}" -eq 3 ]
	[ "${stderr_lines[1]}" = 'nsdedup: bad.jsonl:2: not a JSON object but an array' ]
	# Among objects without it, they count towards the 1000 only.
	{ printf 'not json\n'; records 2; } > some.jsonl
	run_nsd -k body some.jsonl
	[ "$status" -eq 3 ]
	[ -z "$output" ]
	expect_eq "$stderr" "nsdedup: some.jsonl: no record has the field \"body\"; $HAVE"
}

@test "an empty input or one of blank lines is not judged" {
	: > empty.jsonl
	printf '\n  \n\r\n' > blank.jsonl
	run_nsd -k body --id-field=uid empty.jsonl blank.jsonl
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ -z "$stderr" ]
	run --separate-stderr bash -c '"$NSDEDUP" -k body < /dev/null'
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ -z "$stderr" ]
}

@test "records without members say so" {
	printf '{}\n{ }\n' > in.jsonl
	run_nsd in.jsonl
	[ "$status" -eq 3 ]
	[ -z "$output" ]
	expect_eq "$stderr" 'nsdedup: in.jsonl: no record has the field "text"; the records have no members'
}

@test "the names listed are sorted, each once, shown as JSON strings, and bounded" {
	printf '{"z":1,"a\\u0022q":2,"m\\n":3}\n{"a\\"q":1,"b":2}\n' > in.jsonl
	run_nsd in.jsonl
	[ "$status" -eq 3 ]
	expect_eq "$stderr" 'nsdedup: in.jsonl: no record has the field "text"; the records have: "a\"q", "b", "m\n", "z"'
	awk 'BEGIN { for (i = 100; i < 200; i++) printf "\"member_%d\":%d,", i, i
	    print "\"last\":0" }' | sed 's/^/{/; s/$/}/' > many.jsonl
	run_nsd many.jsonl
	[ "$status" -eq 3 ]
	[[ "$stderr" == 'nsdedup: many.jsonl: no record has the field "text"; the records have: "last", "member_100", "member_101", '*', ...' ]]
	[ "${#stderr}" -lt 320 ]
}

@test "a failed run leaves no -o file and commits nothing to the index" {
	records 20 > in.jsonl
	printf 'before\n' > out.jsonl
	run_nsd -k body -o out.jsonl --db idx.nsd in.jsonl
	[ "$status" -eq 3 ]
	[ "$(cat out.jsonl)" = before ]
	[ -z "$(temp_files)" ]
	run_nsd --id-field=uid -o out.jsonl --db idx.nsd in.jsonl
	[ "$status" -eq 3 ]
	[ "$(cat out.jsonl)" = before ]
	# Nothing was claimed: every record is an original now.
	run_nsd -d --db idx.nsd in.jsonl
	[ "$status" -eq 0 ]
	cmp <(printf '%s\n' "$output") in.jsonl
}

@test "--on-error=fail stops at the first bad record, before any judgement" {
	records 20 > in.jsonl
	run_nsd --on-error=fail -k body in.jsonl
	[ "$status" -eq 5 ]
	[ -z "$output" ]
	[ "${stderr_lines[0]}" = 'nsdedup: in.jsonl:1: no text field "body"' ]
	[ "${stderr_lines[1]}" = 'nsdedup: in.jsonl:1: stopped at this bad record (--on-error=fail)' ]
}

@test "past 32 MiB of output held before the judgement, it is written" {
	# 1000 records of 36 KB: more than the output held back.
	records 1000 36000 > big.jsonl
	run --separate-stderr bash -c '"$NSDEDUP" -d -k body big.jsonl > out.jsonl'
	[ "$status" -eq 3 ]
	expect_eq "$stderr" "nsdedup: big.jsonl: no record of the first 1000 has the field \"body\"; $HAVE"
	# What was written is the input's first records, whole.
	[ "$(wc -c < out.jsonl)" -gt 33554432 ]
	cmp -n "$(wc -c < out.jsonl)" out.jsonl big.jsonl
	[ "$(tail -c 1 out.jsonl | od -An -c | tr -d ' ')" = '\n' ]
	# And a run that is fine loses nothing of it.
	head -n 999 big.jsonl > fine.jsonl
	records 1 1 1 >> fine.jsonl
	run --separate-stderr bash -c '"$NSDEDUP" -d -q -k body fine.jsonl > out.jsonl'
	[ "$status" -eq 1 ]
	cmp out.jsonl fine.jsonl
}

@test "TSV: a --key that is not a column lists the header's columns" {
	printf 'id\ttitle\ttext\n1\tt\t%s\n' "$(sentence 1)" > in.tsv
	run_nsd -k body in.tsv
	[ "$status" -eq 3 ]
	[ -z "$output" ]
	expect_eq "$stderr" "nsdedup: in.tsv:1: no column 'body' in the header; the header has: \"id\", \"title\", \"text\""
}

@test "TSV: an --id-field that is not a column lists the header's columns" {
	printf 'id\ttitle\ttext\n1\tt\t%s\n' "$(sentence 1)" > in.tsv
	run_nsd --id-field=url in.tsv
	[ "$status" -eq 3 ]
	[ -z "$output" ]
	expect_eq "$stderr" "nsdedup: in.tsv:1: no column 'url' in the header; the header has: \"id\", \"title\", \"text\""
}

@test "TSV: rows are not judged, only the header" {
	printf 'id\ttext\n' > in.tsv
	run_nsd in.tsv
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'id\ttext\tsimilar_id\tis_dup')" ]
	[ -z "$stderr" ]
}
