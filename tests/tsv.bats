#!/usr/bin/env bats
# TSV input: header, columns by name or number, annotation columns.

load helpers

make_tsv() {
	{
		printf 'id\ttitle\ttext\n'
		printf 't1\tFirst\t%s\n' "$(sentence 1)"
		printf 't2\tSecond\t%s\n' "$(sentence 2)"
		printf 't3\tThird\tCopy: %s\n' "$(sentence 1)"
	} > in.tsv
}

@test "TSV is detected and annotated with two appended columns" {
	make_tsv
	run_nsd in.tsv
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "${lines[0]}" = "$(printf 'id\ttitle\ttext\tsimilar_id\tis_dup')" ]
	[ "${lines[1]}" = "$(printf 't1\tFirst\t%s\tt1\tfalse' "$(sentence 1)")" ]
	[ "${lines[3]}" = "$(printf 't3\tThird\tCopy: %s\tt1\ttrue' "$(sentence 1)")" ]
}

@test "columns by number, and --format=tsv" {
	make_tsv
	run_nsd --format=tsv -k 3 --id-field=2 in.tsv
	[ "$status" -eq 0 ]
	[[ "${lines[3]}" == *"$(printf '\tFirst\ttrue')" ]]
}

@test "--drop-dups keeps the header and the originals unchanged" {
	make_tsv
	run_nsd -d in.tsv
	[ "$status" -eq 0 ]
	expect_eq "$output" "$(head -n 3 in.tsv)"
}

@test "--only-dups writes the annotated header and the duplicates" {
	make_tsv
	run_nsd -D in.tsv
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	[ "${lines[0]}" = "$(printf 'id\ttitle\ttext\tsimilar_id\tis_dup')" ]
}

@test "an existing similar_id column is replaced, not added again" {
	make_tsv
	"$NSDEDUP" in.tsv > once.tsv
	run_nsd once.tsv
	[ "$status" -eq 0 ]
	expect_eq "$output" "$(cat once.tsv)"
}

@test "-H: no header, columns by number, group numbers without an id" {
	printf '%s\tx\n%s\ty\n' "$(sentence 1)" "$(sentence 1)" > in.tsv
	run_nsd -H -f tsv -k 1 in.tsv
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "$(printf '%s\tx\t1\tfalse' "$(sentence 1)")" ]
	[ "${lines[1]}" = "$(printf '%s\ty\t1\ttrue' "$(sentence 1)")" ]
}

@test "-H with a column name is a usage error" {
	printf 'a\tb\n' > in.tsv
	run_nsd -H -f tsv in.tsv
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[ "$stderr" = "nsdedup: in.tsv: with --no-header, columns are numbers, not 'text'" ]
}

@test "a text column missing from the header stops the run" {
	printf 'id\tbody\nx\ty\n' > in.tsv
	run_nsd in.tsv
	[ "$status" -eq 3 ]
	[ "$stderr" = "nsdedup: in.tsv:1: no column 'text' in the header; the header has: \"id\", \"body\"" ]
	run_nsd -k body --id-field=url in.tsv
	[ "$status" -eq 3 ]
	[ "$stderr" = "nsdedup: in.tsv:1: no column 'url' in the header; the header has: \"id\", \"body\"" ]
}

@test "a ragged row is a bad record, passed through" {
	make_tsv
	printf 'only\ttwo\n' >> in.tsv
	run_nsd in.tsv
	[ "$status" -eq 1 ]
	[ "${lines[4]}" = "$(printf 'only\ttwo')" ]
	[ "$stderr" = "nsdedup: in.tsv:5: row has 2 columns, the header has 3" ]
}

@test "backslash escapes in the text column are decoded" {
	# Decoded, a's text is b's first sentence, a tab for its space.
	printf 'id\ttext\na\tSentence with a\\ttab that is long enough to count.\\nmore\n' > esc.tsv
	printf 'b\tSentence with a tab that is long enough to count\n' >> esc.tsv
	run_nsd esc.tsv
	[ "$status" -eq 0 ]
	[[ "${lines[2]}" == *"$(printf '\ta\ttrue')" ]]
}

@test "TSV: invalid UTF-8 and NUL bytes are bad records" {
	printf 'id\ttext\na\tcaf\xe9\nb\tx\0y\n' > in.tsv
	run_nsd in.tsv
	[ "$status" -eq 1 ]
	[ "${stderr_lines[0]}" = "nsdedup: in.tsv:2: invalid UTF-8 at byte 6" ]
	[ "${stderr_lines[1]}" = "nsdedup: in.tsv:3: NUL byte at byte 4" ]
}

@test "TSV with CRLF keeps its line ends" {
	printf 'id\ttext\r\na\t%s\r\nb\t%s\r\n' "$(sentence 1)" "$(sentence 1)" > in.tsv
	"$NSDEDUP" in.tsv > out.tsv
	[ "$(tr -cd '\r' < out.tsv | wc -c)" -eq 3 ]
	grep -q "$(printf '\ta\ttrue\r')" out.tsv
}

@test "the example TSV is annotated as expected" {
	run_nsd "$TOP_SRCDIR/examples/news.tsv"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "$(cat "$TOP_SRCDIR/tests/data/news.annotated.tsv")"
}

@test "format is decided per file" {
	printf '{"id":"j","text":"%s"}\n' "$(sentence 1)" > a.jsonl
	printf 'id\ttext\nt\t%s\n' "$(sentence 1)" > b.tsv
	run_nsd a.jsonl b.tsv
	[ "$status" -eq 0 ]
	[ "${lines[2]}" = "$(printf 't\t%s\tj\ttrue' "$(sentence 1)")" ]
}

@test "an id from TSV is written into JSON as a JSON string" {
	printf 'id\ttext\nt"1\t%s\n' "$(sentence 1)" > a.tsv
	printf '{"id":"j","text":"%s"}\n' "$(sentence 1)" > b.jsonl
	run_nsd a.tsv b.jsonl
	[ "$status" -eq 0 ]
	[[ "${lines[2]}" == *'"similar_id":"t\"1","is_dup":true}' ]]
	need jq
	printf '%s\n' "${lines[2]}" | "$JQ" -e . > /dev/null
}

@test "a column number past the last column is refused, not read" {
	printf 'id\ttext\n1\thello\n' > in.tsv
	run_nsd -k 3 in.tsv
	[ "$status" -eq 3 ]
	[ -z "$output" ]
	[ "$stderr" = "nsdedup: in.tsv:1: no column 3: the header has 2 columns" ]
	run_nsd -k 100000 in.tsv
	[ "$status" -eq 3 ]
	run_nsd --id-field=9 in.tsv
	[ "$status" -eq 3 ]
	[ "$stderr" = "nsdedup: in.tsv:1: no column 9: the header has 2 columns" ]
	run_nsd -H -f tsv -k 3 in.tsv
	[ "$status" -eq 3 ]
	[ "$stderr" = "nsdedup: in.tsv:1: no column 3: the first row has 2 columns" ]
}

@test "annotation columns are found by name only, never by number" {
	printf 'id\ttext\n1\t%s\n' "$(sentence 1)" > in.tsv
	run_nsd --field-name=2 in.tsv
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "$(printf 'id\ttext\t2\tis_dup')" ]
	[ "${lines[1]}" = "$(printf '1\t%s\t1\tfalse' "$(sentence 1)")" ]
}

@test "a row of only tabs is a record, not a blank line" {
	printf 'id\ttext\n\t\n' > in.tsv
	run_nsd --stats in.tsv
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	[ "${lines[1]}" = "$(printf '\t\t1\tfalse')" ]
	[[ "$stderr" == *"nsdedup: blank       0"* ]]
}

@test "ids cross between the formats: tab and newline escaped, other bytes kept" {
	printf 'id\ttext\nr\rc\t%s\nb\\x\t%s\n' "$(sentence 1)" "$(sentence 2)" > a.tsv
	printf '{"id":"r","text":"%s"}\n{"id":"b","text":"%s"}\n' "$(sentence 1)" "$(sentence 2)" > b.jsonl
	run_nsd a.tsv b.jsonl
	[ "$status" -eq 0 ]
	# Originals name themselves byte for byte, even with a raw CR or a backslash.
	[ "${lines[1]}" = "$(printf 'r\rc\t%s\tr\rc\tfalse' "$(sentence 1)")" ]
	[ "${lines[2]}" = "$(printf 'b\\x\t%s\tb\\x\tfalse' "$(sentence 2)")" ]
	[[ "${lines[3]}" == *'"similar_id":"r\rc","is_dup":true}' ]]
	[[ "${lines[4]}" == *'"similar_id":"b\\x","is_dup":true}' ]]
	printf '{"id":"t\\tab\\nnl","text":"%s"}\n' "$(sentence 3)" > c.jsonl
	printf 'id\ttext\nz\t%s\n' "$(sentence 3)" > d.tsv
	run_nsd c.jsonl d.tsv
	[ "${lines[2]}" = "$(printf 'z\t%s\tt\\tab\\nnl\ttrue' "$(sentence 3)")" ]
}

@test "an empty -k names no column" {
	printf 'id\ttext\n1\tx\n' > in.tsv
	run_nsd -k '' in.tsv
	[ "$status" -eq 3 ]
	[ "$stderr" = "nsdedup: in.tsv:1: no column '' in the header; the header has: \"id\", \"text\"" ]
}

@test "format auto: a first line of only tabs makes the input TSV, not blank" {
	printf '\t\na\tb\n' > in.tsv
	run_nsd -H -k 2 in.tsv
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	[ "${lines[0]}" = "$(printf '\t\t1\tfalse')" ]
}

# Three TSV files of one table, a.tsv, b.tsv and c.tsv, each with the
# header, and all.tsv, the same table in one file; b.tsv's first record
# copies a.tsv's, c.tsv's b.tsv's second.
make_parts() {
	printf 'id\ttitle\ttext\n' > header.tsv
	printf 't1\tFirst\t%s\nt2\tSecond\t%s\n' "$(sentence 1)" \
	    "$(sentence 2)" > rows-a
	printf 't3\tThird\tCopy: %s\nt4\tFourth\t%s\n' "$(sentence 1)" \
	    "$(sentence 3)" > rows-b
	printf 't5\tFifth\tAgain: %s\n' "$(sentence 3)" > rows-c
	for part in a b c; do
		cat header.tsv "rows-$part" > "$part.tsv"
	done
	cat header.tsv rows-a rows-b rows-c > all.tsv
}

@test "several TSV inputs with one header: one header out, and every record" {
	make_parts
	"$NSDEDUP" all.tsv > want
	[ "$(grep -c '^id' want)" -eq 1 ]
	[ "$(wc -l < want)" -eq 6 ]
	run_nsd a.tsv b.tsv c.tsv
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "$(cat want)"
	[ "${lines[0]}" = "$(printf 'id\ttitle\ttext\tsimilar_id\tis_dup')" ]
	[ "${lines[3]}" = "$(printf 't3\tThird\tCopy: %s\tt1\ttrue' "$(sentence 1)")" ]
	cat header.tsv rows-a rows-b > two.tsv
	run_nsd a.tsv b.tsv
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "$("$NSDEDUP" two.tsv)"
	[ "${#lines[@]}" -eq 5 ]
}

@test "several TSV inputs: --drop-dups and --only-dups write one header too" {
	make_parts
	run_nsd -d a.tsv b.tsv c.tsv
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "$(cat header.tsv rows-a; sed -n 2p rows-b)"
	run_nsd -D --explain a.tsv b.tsv c.tsv
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "$("$NSDEDUP" -D --explain all.tsv)"
	[ "${#lines[@]}" -eq 3 ]
	[ "${lines[0]}" = "$(printf 'id\ttitle\ttext\tsimilar_id\tis_dup\texplain')" ]
}

@test "several TSV inputs: the standard input among them, with its header" {
	make_parts
	run_nsd a.tsv - c.tsv < b.tsv
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "$("$NSDEDUP" all.tsv)"
	run_nsd -d - b.tsv < a.tsv
	[ "$status" -eq 0 ]
	expect_eq "$output" "$(cat header.tsv rows-a rows-b | sed 4d)"
}

@test "several TSV inputs: a header with a BOM or CRLF is the same header" {
	make_parts
	{ printf '\xef\xbb\xbfid\ttitle\ttext\r\n'; cat rows-b; } > b.tsv
	run_nsd a.tsv b.tsv
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(grep -c '^id' <<< "$output")" -eq 1 ]
	[ "${#lines[@]}" -eq 5 ]
}

@test "a later TSV input whose header differs stops the run: status 3" {
	make_parts
	{ printf 'id\theadline\ttext\n'; cat rows-b; } > b.tsv
	for mode in -a -d -D; do
		run_nsd "$mode" a.tsv b.tsv c.tsv
		[ "$status" -eq 3 ]
		[ "$stderr" = "nsdedup: b.tsv:1: header differs from the header of a.tsv: column 2 is 'headline', not 'title'" ]
		# Nothing of b.tsv, nor of what comes after it, is written.
		[[ "$output" != *t3* && "$output" != *t4* && "$output" != *t5* ]]
		[[ "$output" != *headline* ]]
	done
	{ printf 'id\ttitle\ttext\turl\n'; printf 't6\tSixth\tx\tu\n'; } > d.tsv
	run_nsd a.tsv d.tsv
	[ "$status" -eq 3 ]
	[ "$stderr" = "nsdedup: d.tsv:1: header differs from the header of a.tsv: 4 columns, not 3" ]
	[[ "$output" != *t6* ]]
	printf 'id\ttext\n' > e.tsv
	run_nsd a.tsv e.tsv
	[ "$status" -eq 3 ]
	[ "$stderr" = "nsdedup: e.tsv:1: header differs from the header of a.tsv: 2 columns, not 3" ]
}

@test "a differing TSV header on the standard input is named so, and the first one too" {
	make_parts
	{ printf 'id\ttitle\tbody\n'; cat rows-b; } > b.tsv
	run_nsd a.tsv - < b.tsv
	[ "$status" -eq 3 ]
	[ "$stderr" = "nsdedup: (standard input):1: header differs from the header of a.tsv: column 3 is 'body', not 'text'" ]
	run_nsd -d - b.tsv < a.tsv
	[ "$status" -eq 3 ]
	[ "$stderr" = "nsdedup: b.tsv:1: header differs from the header of (standard input): column 3 is 'body', not 'text'" ]
}

@test "-H: with no header, the first rows of several inputs are records, whatever their width" {
	printf '%s\tx\n' "$(sentence 1)" > a.tsv
	printf '%s\ty\tz\n' "$(sentence 1)" > b.tsv
	run_nsd -H -f tsv -k 1 a.tsv b.tsv
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "${lines[0]}" = "$(printf '%s\tx\t1\tfalse' "$(sentence 1)")" ]
	[ "${lines[1]}" = "$(printf '%s\ty\tz\t1\ttrue' "$(sentence 1)")" ]
}

@test "-H with --id-field N: similar_id is the id in that column, not a number" {
	printf 'a1\t%s\nb2\t%s\n' "$(sentence 1)" "$(sentence 1)" > in.tsv
	run_nsd -H -k 2 --id-field 1 in.tsv
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "${lines[0]}" = "$(printf 'a1\t%s\ta1\tfalse' "$(sentence 1)")" ]
	[ "${lines[1]}" = "$(printf 'b2\t%s\ta1\ttrue' "$(sentence 1)")" ]
}
