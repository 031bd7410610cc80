#!/usr/bin/env bats
# nsd-gencorpus, the benchmark's corpus generator: what the benchmarks rely
# on. Its output depends only on the seed and the options, a shorter run is
# a prefix of a longer one, and its near-copies are what --truth says they
# are: light reposts keep sentences that nshash matches, and an
# --edit-strength longest copy changes one character in each sentence
# nshash fingerprints, so that nshash cannot match it to its source.

load helpers

: "${GENCORPUS:?run the tests through make check}"

# Print "id<TAB>similar_id" for each record that nsdedup, with the
# arguments given, judges a duplicate of another.
dups() {
	"$NSDEDUP" "$@" --only-dups | "$JQ" -r '[.id, .similar_id] | @tsv'
}

@test "a shorter run with the same seed is a prefix of a longer one" {
	need jq
	"$GENCORPUS" --seed 4 --records 300 > short.jsonl
	"$GENCORPUS" --seed 4 --size 2M > long.jsonl
	[ "$(wc -l < short.jsonl)" -eq 300 ]
	[ "$(wc -c < long.jsonl)" -le $((2 << 20)) ]
	head -n 300 long.jsonl | cmp - short.jsonl
	"$GENCORPUS" --seed 4 --records 200 --edit-rate 0.5 \
	    --edit-strength every > a.jsonl
	"$GENCORPUS" --seed 4 --records 400 --edit-rate 0.5 \
	    --edit-strength every > b.jsonl
	head -n 200 b.jsonl | cmp - a.jsonl
	# Another seed, another corpus; every record is valid JSON.
	"$GENCORPUS" --seed 5 --records 300 > other.jsonl
	run cmp -s other.jsonl short.jsonl
	[ "$status" -eq 1 ]
	"$JQ" -e .text long.jsonl > /dev/null
}

@test "at --edit-rate 0, --edit-strength and --truth change nothing" {
	"$GENCORPUS" --seed 6 --records 500 > want.jsonl
	for s in longest every heavy; do
		"$GENCORPUS" --seed 6 --records 500 --edit-strength "$s" \
		    --truth truth | cmp - want.jsonl
	done
	# The reposts are all light.
	[ -s truth ]
	[ "$(cut -f 3 truth | sort -u)" = light ]
}

@test "nshash finds every light repost and no longest-edited copy's source" {
	need jq
	"$GENCORPUS" --seed 7 --records 2000 --edit-rate 0.5 \
	    --edit-strength longest --truth truth > c.jsonl
	dups c.jsonl > dups
	awk -F '\t' '$3 == "light" { print $1 }' truth | sort > light
	awk -F '\t' '$3 == "edited-longest" { print $1 "\t" $2 }' truth |
	    sort > edited
	[ "$(wc -l < light)" -gt 100 ]
	[ "$(wc -l < edited)" -gt 100 ]
	[ "$(cut -f 3 truth | sort -u | tr '\n' ' ')" = \
	    "edited-longest light " ]
	# Every light repost is a duplicate.
	cut -f 1 dups | sort | comm -13 - light > missed
	[ ! -s missed ]
	# No edited copy is a duplicate of the record it was copied from.
	sort dups | comm -12 - edited > found
	[ ! -s found ]
	# simhash, which compares the bag of words, finds some of them.
	dups -m simhash c.jsonl | sort | comm -12 - edited > found
	[ -s found ]
}

@test "a longest-edited copy changes up to 5 characters and keeps its length" {
	need jq
	"$GENCORPUS" --seed 8 --records 600 --edit-rate 1 \
	    --edit-strength longest --truth truth > c.jsonl
	# Each copy beside its source: the number of code points that differ,
	# or -1 when the texts differ in length or the titles differ.
	"$JQ" -c '{(.id): .}' c.jsonl | "$JQ" -s add > byid.json
	cut -f 1,2 truth | "$JQ" -R -r --slurpfile r byid.json '
	    split("\t") as [$c, $s] | $r[0][$c] as $x | $r[0][$s] as $y |
	    ($x.text | explode) as $a | ($y.text | explode) as $b |
	    if ($a | length) != ($b | length) or $x.title != $y.title then -1
	    else [range($a | length) | select($a[.] != $b[.])] | length
	    end' > changed
	[ "$(wc -l < changed)" -gt 50 ]
	[ "$(sort -nu changed | head -n 1)" -ge 1 ]
	[ "$(sort -nu changed | tail -n 1)" -le 5 ]
	# Most documents have 5 sentences long enough.
	[ "$(grep -c '^5$' changed)" -gt $(($(wc -l < changed) / 2)) ]
}

@test "--edit-strength every changes every sentence; heavy, more" {
	need jq
	for s in every heavy; do
		"$GENCORPUS" --seed 9 --records 800 --edit-rate 1 \
		    --edit-strength "$s" --truth "truth.$s" > "$s.jsonl"
		[ "$(cut -f 3 "truth.$s" | sort -u)" = "edited-$s" ]
		dups "$s.jsonl" | sort > "dups.$s"
		cut -f 1,2 "truth.$s" | sort | comm -12 - "dups.$s" > found
		[ ! -s found ]
	done
	# Same seed, same sources: the heavy copies are further from them.
	"$NSDEDUP" -m simhash --distance 8 --only-dups every.jsonl |
	    grep -c . > n.every
	"$NSDEDUP" -m simhash --distance 8 --only-dups heavy.jsonl |
	    grep -c . > n.heavy
	[ "$(cat n.heavy)" -lt "$(cat n.every)" ]
}

@test "--edit-strength takes longest, every or heavy" {
	run --separate-stderr "$GENCORPUS" --edit-strength light --records 1
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	msg="invalid value for --edit-strength: 'light'"
	expect_eq "${stderr%%$'\n'*}" \
	    "nsd-gencorpus: $msg (valid: every, heavy, longest)"
	[[ "$stderr" == *"Try 'nsd-gencorpus --help'." ]]
	run --separate-stderr "$GENCORPUS" --help
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ "$output" == *"--edit-strength S"* ]]
	for s in longest every heavy; do
		[[ "$output" == *"$s:"* ]]
	done
}
