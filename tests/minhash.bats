#!/usr/bin/env bats
# -m minhash: copies with every part touched are found down to --threshold
# and not below, --explain in both formats, texts with nothing to compare,
# the index (--db, --no-update, -j, parameters refused, --db-info and
# --db-verify), the options' usage errors, and what a killed run of
# -m minhash --db leaves.
#
# The texts are made so that their Jaccard similarity is known: 300
# different words (or Han characters), every word bigram (or character
# trigram, the default shingles) once. Replacing a word changes the two
# bigrams it is in; replacing a character, the three trigrams.

load helpers

: "${NSDEDUP_CRASHPOINTS:?run the tests through make check}"
: "${NSD_INDEX_DUMP:?run the tests through make check}"
: "${GENCORPUS:?run the tests through make check}"

# 300 words w1 ... w300, every $1-th (if $1 > 0) replaced by x<number>.
words() {
	awk -v every="$1" 'BEGIN {
		for (i = 1; i <= 300; i++)
			printf "%s%s", (i > 1 ? " " : ""),
			    (every > 0 && i % every == 0 ? "x" i : "w" i)
	}'
}

# 300 Han characters from U+4E00 on, every $1-th replaced by one from
# U+8000 on, as UTF-8.
han() {
	awk -v every="$1" 'BEGIN {
		for (i = 0; i < 300; i++) {
			c = (every > 0 && i % every == every - 1 ? 32768 : \
			    19968) + i
			printf "%c%c%c", 224 + int(c / 4096),
			    128 + int(c / 64) % 64, 128 + c % 64
		}
	}' | LC_ALL=C tr -d '\n'
}

dump() {
	"$NSD_INDEX_DUMP" "$@"
}

# --- What is found ---

@test "a copy with 5% of its words replaced is found, one with a third is not" {
	# Jaccard of the bigram sets: 269 / 329 = 0.82 and 99 / 499 = 0.2.
	{ record a "$(words 0)"; record b "$(words 20)"; record c "$(words 3)"; } > in.jsonl
	run_nsd -m minhash in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$(groups_of "$output")" "a a
b a
c c"
	[[ "${lines[1]}" == *'"similar_id":"a","is_dup":true}' ]]
}

@test "a Chinese copy with 2% of its characters replaced is found" {
	# 6 characters replaced, 18 of 298 trigrams: Jaccard 280 / 316 = 0.89.
	{ record a "$(han 0)"; record b "$(han 50)"; record c "$(han 2)"; } > in.jsonl
	run_nsd -m minhash in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$(groups_of "$output")" "a a
b a
c c"
}

@test "--threshold decides: a copy of 0.82 (estimated 0.87) is found at 0.75, not at 0.9" {
	{ record a "$(words 0)"; record b "$(words 20)"; } > in.jsonl
	run_nsd -m minhash --threshold 0.75 in.jsonl
	[ "$status" -eq 0 ]
	expect_eq "$(groups_of "$output")" "a a
b a"
	run_nsd -m minhash --threshold .9 in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$(groups_of "$output")" "a a
b b"
}

@test "--explain gives the estimate and the bands that matched" {
	{ record a "$(words 0)"; record b "$(words 20)"; record c "$(words 0)"; } > in.jsonl
	run_nsd_evidence -m minhash --explain -D in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 2 ]
	# Pinned, as the golden vectors of tests/unit/minhash_test.c are.
	expect_eq "${lines[0]#*\"is_dup\":true,}" '"explain":{"method":"minhash","jaccard":0.875,"agree":56,"bands":[1,2,3,4,5]}}'
	# An exact repeat agrees on every bin, and holds all 8 bands.
	expect_eq "${lines[1]#*\"is_dup\":true,}" '"explain":{"method":"minhash","jaccard":1,"agree":64,"bands":[0,1,2,3,4,5,6,7]}}'
}

@test "--explain in TSV: the evidence column" {
	printf 'id\ttext\n' > in.tsv
	printf 'a\t%s\nb\t%s\n' "$(words 0)" "$(words 20)" >> in.tsv
	run_nsd_evidence -m minhash --explain in.tsv
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "${lines[0]}" "id	text	similar_id	is_dup	explain"
	[[ "${lines[2]}" == *'	a	true	{"method":"minhash","jaccard":0.875,"agree":56,"bands":[1,2,3,4,5]}' ]]
}

@test "texts with nothing to compare are never duplicates" {
	# Under 30 letters, or under --min-features features.
	{ record a 'Hello world'; record b 'Hello world'; record c ''; record d ''; } > in.jsonl
	run_nsd -m minhash --stats in.jsonl
	[ "$status" -eq 0 ]
	expect_eq "$(groups_of "$output")" "a a
b b
c c
d d"
	[[ "$stderr" == *"originals   4 (4 with nothing to compare)"* ]]
	{ record a "$(words 0)"; record b "$(words 0)"; } > in.jsonl
	run_nsd -m minhash --min-features 400 in.jsonl
	[ "$status" -eq 0 ]
	expect_eq "$(groups_of "$output")" "a a
b b"
}

# --- The index ---

@test "--db: two runs write what one run in memory writes, at every -j" {
	# Several batches of 1 MiB, so that the workers of -j2 and -j8 overlap.
	"$GENCORPUS" --size 5M --seed 3 > all.jsonl
	head -n 700 all.jsonl > day1.jsonl
	tail -n +701 all.jsonl > day2.jsonl
	run_nsd_evidence -m minhash --explain -j1 all.jsonl
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" > want.out
	grep -q '"method":"minhash"' want.out
	for j in 1 2 8; do
		rm -f db db.*
		run_nsd_evidence -m minhash --explain -j"$j" --db db day1.jsonl
		[ "$status" -eq 0 ]
		[ -z "$stderr" ]
		printf '%s\n' "$output" > got.out
		run_nsd_evidence -m minhash --explain -j"$j" --db db day2.jsonl
		[ "$status" -eq 0 ]
		[ -z "$stderr" ]
		printf '%s\n' "$output" >> got.out
		cmp got.out want.out
		run_nsd_evidence -m minhash --explain -j"$j" all.jsonl
		printf '%s\n' "$output" | cmp - want.out
	done
	run_nsd --db db --db-verify
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "${lines[-1]}" = "verified:      no problems found" ]
}

@test "--no-update compares against the index and adds nothing" {
	"$GENCORPUS" --records 300 --seed 4 > all.jsonl
	head -n 150 all.jsonl > day1.jsonl
	run_nsd -m minhash --db db day1.jsonl
	[ "$status" -eq 0 ]
	dump db > before.dump
	run_nsd_evidence -m minhash --no-update --explain --db db all.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	printf '%s\n' "$output" | tail -n 150 > got.out
	dump db | cmp - before.dump
	# What an updating run over the same state writes.
	run_nsd_evidence -m minhash --explain --db db all.jsonl
	printf '%s\n' "$output" | tail -n 150 | cmp - got.out
}

@test "--no-update: a copy of a group the run itself opened is confirmed" {
	{ record a "$(han 0)"; } > day1.jsonl
	run_nsd -m minhash --db db day1.jsonl
	[ "$status" -eq 0 ]
	# b is new: its group lives in the run's memory, with its signature.
	{ record b "$(words 0)"; record c "$(words 20)"; record d "$(han 50)"; } > day2.jsonl
	run_nsd_evidence -m minhash --no-update --explain --db db day2.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$(groups_of "$output")" "b b
c b
d a"
	[[ "${lines[1]}" == *'"explain":{"method":"minhash","jaccard":0.875,"agree":56,'* ]]
	run_nsd_evidence -m minhash --explain day2.jsonl
	[[ "${lines[1]}" == *'"explain":{"method":"minhash","jaccard":0.875,"agree":56,'* ]]
}

@test "an index made with other MinHash parameters is refused, untouched" {
	{ record a "$(words 0)"; record b "$(words 20)"; } > in.jsonl
	run_nsd -m minhash --db db in.jsonl
	[ "$status" -eq 0 ]
	dump db > before.dump
	run_nsd -m minhash --threshold 0.7 --db db in.jsonl
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	expect_eq "$stderr" "nsdedup: db: the index was made with --threshold 0.5, not 0.7"
	run_nsd -m minhash --ngram 2 --db db in.jsonl
	[ "$status" -eq 7 ]
	expect_eq "$stderr" "nsdedup: db: the index was made with --ngram 3, not 2"
	run_nsd -m minhash --shingle 3 --db db in.jsonl
	[ "$status" -eq 7 ]
	expect_eq "$stderr" "nsdedup: db: the index was made with --shingle 2, not 3"
	run_nsd -m simhash --db db in.jsonl
	[ "$status" -eq 7 ]
	expect_eq "$stderr" "nsdedup: db: the index was made with --method minhash, not simhash"
	run_nsd --db db in.jsonl
	[ "$status" -eq 7 ]
	expect_eq "$stderr" "nsdedup: db: the index was made with --method minhash, not nshash"
	dump db | cmp - before.dump
}

@test "--db-info shows the MinHash parameters and the bands" {
	{ record a "$(words 0)"; record b "$(words 20)"; } > in.jsonl
	run_nsd -m minhash --threshold 0.8 --db db in.jsonl
	[ "$status" -eq 0 ]
	run_nsd --db db --db-info
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "${lines[1]%% (*}" "format:        version 8"
	expect_eq "${lines[2]}" "parameters:    --method minhash --threshold 0.8 --ngram 3 --shingle 2 --min-features 8 (64 bins, 8 bands of 6), normalization 3"
	expect_eq "${lines[4]}" "groups:        1"
}

@test "an index made with 128 bins in 42 bands of 3 keeps them, and its answers" {
	local dir="$TOP_SRCDIR/tests/data/minhash-128" news="$TOP_SRCDIR/examples/news.jsonl"
	cp "$dir"/minhash.nsd* .
	run_nsd -m minhash --db minhash.nsd --no-update --explain "$news"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "$(cat "$dir/minhash.expected.jsonl")"
	# A run that writes keeps the index's layout, and the index is whole.
	run_nsd -m minhash --db minhash.nsd "$news"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	run_nsd --db minhash.nsd --db-info
	[ "$status" -eq 0 ]
	[[ "${lines[2]}" == *" (128 bins, 42 bands of 3), normalization 2" ]]
	expect_eq "${lines[3]}" "records:       60"
	run_nsd --db minhash.nsd --db-verify
	[ "$status" -eq 0 ]
	expect_eq "${lines[-1]}" "verified:      no problems found"
	# Another threshold is refused, as ever.
	run_nsd -m minhash --threshold 0.8 --db minhash.nsd "$news"
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	expect_eq "$stderr" "nsdedup: minhash.nsd: the index was made with --threshold 0.5, not 0.8"
}

@test "usage errors: --threshold's range and form, and --compat" {
	for bad in 0 0.001 1.5 1.0001 2 abc 0.12345 '' . 0,5 -0.5 +.5; do
		run_nsd -m minhash --threshold "$bad" a.jsonl
		usage_error "invalid value '$bad' for --threshold (a fraction from 0.01 to 1, with at most 4 decimals)"
	done
	run_nsd -m minhash --compat=nshash a.jsonl
	usage_error "--compat is an option of --method nshash, not of minhash"
	# The forms that are accepted, as --db-info writes them back.
	: > empty.jsonl
	for good in .5:0.5 0.50:0.5 1.0000:1 1.:1 0.0125:0.0125 0.01:0.01; do
		rm -f db db.*
		run_nsd -m minhash --threshold "${good%%:*}" --db db empty.jsonl
		[ "$status" -eq 0 ]
		run_nsd --db db --db-info
		[[ "${lines[2]}" == "parameters:    --method minhash --threshold ${good#*:} "* ]]
	done
}

@test "thresholds at the ends of the range work: 0.01 and 1" {
	{ record a "$(words 0)"; record b "$(words 20)"; record c "$(words 0)"; } > in.jsonl
	run_nsd -m minhash --threshold 1 in.jsonl
	[ "$status" -eq 0 ]
	expect_eq "$(groups_of "$output")" "a a
b b
c a"
	run_nsd -m minhash --threshold 0.01 --db db in.jsonl
	[ "$status" -eq 0 ]
	expect_eq "$(groups_of "$output")" "a a
b a
c a"
	run_nsd --db db --db-info
	[[ "${lines[2]}" == *"(64 bins, 64 bands of 1)"* ]]
}

# --- A killed run of -m minhash --db ---

@test "minhash, killed in the middle and after the id file's sync: as before" {
	"$GENCORPUS" --records 100 --seed 1 > a.jsonl
	"$GENCORPUS" --records 300 --seed 2 > b.jsonl
	run_nsd -m minhash --db db a.jsonl
	[ "$status" -eq 0 ]
	dump db > pre.dump
	mkdir ref
	copy_index db ref
	"$NSDEDUP" -m minhash --explain --db ref/db b.jsonl > want.out
	for at in insert:200 ids-synced; do
		NSDEDUP_CRASH_AT=$at run --separate-stderr \
		    "$NSDEDUP_CRASHPOINTS" -m minhash --explain --db db b.jsonl
		[ "$status" -eq 137 ]
		dump db | cmp - pre.dump
	done
	run_nsd --db db --db-verify
	[ "$status" -eq 0 ]
	run_nsd -m minhash --explain --db db b.jsonl
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" | cmp - want.out
}
