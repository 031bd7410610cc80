#!/usr/bin/env bats
# compressed.bats: inputs compressed with gzip, zstd, bzip2 and xz, known
# by their first bytes whatever their names, read as the uncompressed
# input would be; truncated and corrupt streams are input errors that
# name the byte.

load helpers

# Skip unless this nsdedup decodes format $1 ("gzip", "zstd", "bzip2",
# "xz"), as --version lists them, and the program $2 that makes it is
# installed.
need_format() {
	local built

	built=$("$NSDEDUP" --version | sed -n 's/^compressed inputs: //p')
	case ", $built," in
	*", $1 "* | *", $1,"*) ;;
	*) skip "nsdedup is built without $1 (configure found no library for it)" ;;
	esac
	command -v "$2" > /dev/null ||
	    skip "$2 is not installed (it makes the test's $1 input)"
}

# Compress standard input with format $1's program onto standard output.
compress() {
	case $1 in
	gzip) gzip -c ;;
	zstd) zstd -q -c ;;
	bzip2) bzip2 -c ;;
	xz) xz -c ;;
	esac
}

program_of() {
	case $1 in
	xz) echo xz ;;
	*) echo "$1" ;;
	esac
}

# About 7 MB of records, so that the decoded input spans several of the
# decompressor's buffers and the reader's chunks: the example corpus, 200
# times, each copy with ids of its own (most records are duplicates).
corpus() {
	local i

	for i in $(seq 1 200); do
		sed "s/\"id\":\"/\"id\":\"$i-/" "$TOP_SRCDIR/examples/news.jsonl"
	done
}

# Check, for format $1, that a file and standard input give the output of
# the uncompressed corpus, byte for byte.
same_as_plain() {
	need_format "$1" "$(program_of "$1")"
	corpus > plain.jsonl
	compress "$1" < plain.jsonl > packed
	"$NSDEDUP" plain.jsonl > want
	run_nsd packed
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	cmp -s want <(printf '%s\n' "$output")
	run_nsd - < packed
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	cmp -s want <(printf '%s\n' "$output")
}

@test "a gzip input, file or standard input, gives the output of the uncompressed one" {
	same_as_plain gzip
}

@test "a zstd input gives the output of the uncompressed one" {
	same_as_plain zstd
}

@test "a bzip2 input gives the output of the uncompressed one" {
	same_as_plain bzip2
}

@test "an xz input gives the output of the uncompressed one" {
	same_as_plain xz
}

# Check that two streams of format $1 one after the other (as cat a.gz
# b.gz makes) are read as the two inputs together.
concatenated() {
	need_format "$1" "$(program_of "$1")"
	head -n 25 "$TOP_SRCDIR/examples/news.jsonl" > a.jsonl
	tail -n 15 "$TOP_SRCDIR/examples/news.jsonl" > b.jsonl
	{ compress "$1" < a.jsonl; compress "$1" < b.jsonl; } > both
	"$NSDEDUP" a.jsonl b.jsonl > want
	run_nsd both
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	cmp -s want <(printf '%s\n' "$output")
}

@test "gzip members one after the other are read as zcat reads them" {
	concatenated gzip
}

@test "zstd frames one after the other are all read" {
	concatenated zstd
}

@test "bzip2 streams one after the other are all read" {
	concatenated bzip2
}

@test "xz streams one after the other are all read" {
	concatenated xz
}

@test "a compressed input is known by its bytes, not its name, among plain ones" {
	need_format gzip gzip
	head -n 10 "$TOP_SRCDIR/examples/news.jsonl" > a.jsonl
	sed -n 11,30p "$TOP_SRCDIR/examples/news.jsonl" > b.jsonl
	tail -n 10 "$TOP_SRCDIR/examples/news.jsonl" > c.jsonl
	gzip -c b.jsonl > b.txt
	"$NSDEDUP" a.jsonl b.jsonl c.jsonl > want
	run_nsd a.jsonl b.txt c.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	cmp -s want <(printf '%s\n' "$output")
}

@test "bad records of a compressed input are named by their decoded line" {
	need_format gzip gzip
	{
		record a "$(sentence 1)"
		record b "$(sentence 2)"
		echo '{"id":"c","text":'
		record d "$(sentence 1)"
	} | gzip -c > in.gz
	run_nsd in.gz
	[ "$status" -eq 1 ]
	expect_eq "$stderr" 'nsdedup: in.gz:3: invalid JSON: unexpected end of line at byte 18'
	[ "${#lines[@]}" -eq 4 ]
	[ "${lines[2]}" = '{"id":"c","text":' ]
}

@test "text that begins like bzip2's magic is read as text" {
	printf 'BZh91AY\ttext\n1\t%s\n2\t%s\n' "$(sentence 1)" "$(sentence 1)" > in.tsv
	run_nsd -k text --id-field BZh91AY in.tsv
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "BZh91AY	text	similar_id	is_dup
1	$(sentence 1)	1	false
2	$(sentence 1)	1	true"
}

# Check, for format $1, that the input cut short is an input error naming
# the last byte, with nothing written for the records it could not read:
# what is written is whole records, the first ones of the full output.
truncated() {
	local size

	need_format "$1" "$(program_of "$1")"
	corpus > plain.jsonl
	compress "$1" < plain.jsonl > packed
	"$NSDEDUP" plain.jsonl > want
	size=$(($(wc -c < packed) * 6 / 10))
	head -c "$size" packed > cut.gz
	run_nsd cut.gz
	[ "$status" -eq 3 ]
	expect_eq "$stderr" "nsdedup: cut.gz: byte $size: truncated $1 data: the input ends inside a stream"
	printf '%s' "$output" > got
	[ "$(wc -l < got)" -lt "$(wc -l < want)" ]
	cmp -s got <(head -c "$(wc -c < got)" want)
	# With -o, nothing is written at all.
	run_nsd -o out.jsonl cut.gz
	[ "$status" -eq 3 ]
	[ -z "$output" ]
	[ ! -e out.jsonl ]
	[ -z "$(temp_files)" ]
}

@test "a truncated gzip input is an input error naming the byte" {
	truncated gzip
}

@test "a truncated zstd input is an input error naming the byte" {
	truncated zstd
}

@test "a truncated bzip2 input is an input error naming the byte" {
	truncated bzip2
}

@test "a truncated xz input is an input error naming the byte" {
	truncated xz
}

# Check that format $1's input with a byte in its middle changed is an
# input error that says it is corrupt, and commits nothing to an index.
corrupt() {
	local size

	need_format "$1" "$(program_of "$1")"
	compress "$1" < "$TOP_SRCDIR/examples/news.jsonl" > packed
	size=$(wc -c < packed)
	{
		head -c $((size / 2)) packed
		printf '\377'
		tail -c $((size - size / 2 - 1)) packed
	} > bad
	run_nsd --db idx bad
	[ "$status" -eq 3 ]
	# Records decoded before the damage was found may be bad records.
	[[ ${stderr##*$'\n'} =~ ^"nsdedup: bad: byte "[0-9]+": corrupt $1 data: "[^$'\n']+$ ]]
	# Nothing was committed: the corpus is as new to the index as to none.
	"$NSDEDUP" "$TOP_SRCDIR/examples/news.jsonl" > want
	run_nsd --db idx "$TOP_SRCDIR/examples/news.jsonl"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	cmp -s want <(printf '%s\n' "$output")
}

@test "a corrupt gzip input is an input error and commits nothing" {
	corrupt gzip
}

@test "a corrupt zstd input is an input error and commits nothing" {
	corrupt zstd
}

@test "a corrupt bzip2 input is an input error and commits nothing" {
	corrupt bzip2
}

@test "a corrupt xz input is an input error and commits nothing" {
	corrupt xz
}

@test "an input in a format that is not built in is refused by name" {
	local built

	built=$("$NSDEDUP" --version | sed -n 's/^compressed inputs: //p')
	[[ $built != *gzip* ]] ||
	    skip "nsdedup is built with gzip (configure --without-isal --without-zlib builds it without)"
	gzip -c "$TOP_SRCDIR/examples/news.jsonl" > in.gz
	run_nsd in.gz
	[ "$status" -eq 3 ]
	[ -z "$output" ]
	expect_eq "$stderr" "nsdedup: in.gz: compressed with gzip, which this nsdedup was built without (ISA-L or zlib): decompress it first"
}
