#!/usr/bin/env bats
# Confirmation: a match found by a few fingerprints is confirmed on the
# whole text (--confirm) before a record is called a duplicate, by every
# method and in every index; --min-match holds when most sentences are
# common; an exact copy is always found. The texts are generated look-alikes
# of what the shared corpora hold: stories that share background
# sentences, replies that quote one post, copies with a block of
# boilerplate added or a paragraph dropped.

load helpers

@test "two stories that share background sentences are not duplicates" {
	record a "$(prose 1 12) $BACKGROUND" > in.jsonl
	record b "$(prose 2 12) $BACKGROUND" >> in.jsonl
	run_nsd --explain in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$(groups_of "$output")" "a a
b b"
	# Unconfirmed, the shared sentences make b a copy of a.
	run_nsd --confirm 0 --explain --only-dups in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$(groups_of "$output")" "b a"
	[[ "$output" == *'"matched":4,'* ]]
	[[ "$output" =~ \"confirm\":\{\"containment\":0(\.[0-9]+)?, ]]
	# --stats counts the match turned down.
	run_nsd --stats -d in.jsonl
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	[[ "$stderr" == *$'\nnsdedup: duplicates  0\nnsdedup: unconfirmed 1 matches (--confirm)\n'* ]]
}

@test "two replies quoting one post are not duplicates of each other" {
	local quote
	quote=$(printf '> %s\n' "$BACKGROUND" | fold -w 70 -s | sed '2,$s/^/> /')
	record r1 "In article <1@example.org>, someone writes:\n$(printf '%s' "$quote" | sed 's/$/\\n/' | tr -d '\n')\n$(prose 3 10)" > in.jsonl
	record r2 "In article <1@example.org>, someone writes:\n$(printf '%s' "$quote" | sed 's/$/\\n/' | tr -d '\n')\n$(prose 4 10)" >> in.jsonl
	run_nsd in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$(groups_of "$output")" "r1 r1
r2 r2"
}

@test "a copy with a block of boilerplate larger than itself is found" {
	local script
	# A leaked ad script, as JSON string content: 40 slots, 2.5 KB.
	script=$(awk 'BEGIN { for (i = 1; i <= 40; i++)
		printf "var slot%d={size:[300,250],unit:\\\"ad-%d\\\"};", i, i }')
	record a "$(prose 5 8)" > in.jsonl
	record copy "$(prose 5 8) $script" >> in.jsonl
	run_nsd --explain --only-dups in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$(groups_of "$output")" "copy a"
	[[ "$output" == *'"confirm":{"containment":1,'* ]]
}

# For each method of $1: run_nsd -m METHOD ${@:3} in.jsonl, with status 0,
# no message, and the groups $2.
groups_by_method() {
	local m methods=$1 want=$2
	shift 2
	for m in $methods; do
		run_nsd -m "$m" "$@" in.jsonl
		[ "$status" -eq 0 ]
		[ -z "$stderr" ]
		expect_eq "$(groups_of "$output")" "$want"
	done
}

@test "a copy with a paragraph dropped or added is found, by nshash and minhash" {
	record a "$(prose 6 8) $(prose 7 8) $(prose 8 8)" > in.jsonl
	record dropped "$(prose 6 8) $(prose 8 8)" >> in.jsonl
	record added "$(prose 9 8) $(prose 6 8) $(prose 7 8) $(prose 8 8)" >> in.jsonl
	# SimHash's 64 bits move too far for --distance 3 (bench/QUALITY.md).
	groups_by_method "nshash minhash" "dropped a
added a" --only-dups
}

# A company's results announced from a template: $1 the company, $2 the
# day, $3 its chief executive, $4 the hour, $5 to $8 the figures.
results() {
	printf '%s will publish its third quarter results on %s November 2018 before the market opens, and its chief executive %s will host a call for analysts at %s. The company reported revenue of %s million dollars in the second quarter, up %s percent, and expects %s to %s million dollars for the third.' "$@"
}

@test "a story made from another's template, names and figures changed, is no copy" {
	record q3 "$(prose 10 6) $(results Northwind 14 'Mary Olsen' 09:30 412 12 430 450)" > in.jsonl
	record q3b "$(prose 10 6) $(results Eastgate 21 'Paul Brandt' 10:00 97 3 95 101)" >> in.jsonl
	groups_by_method "nshash simhash minhash" "q3 q3
q3b q3b"
	# Half their text is shared, and enough for --confirm 0.5: their
	# numbers are not (one in eight).
	groups_by_method nshash "q3 q3
q3b q3b" --confirm 0.5
	groups_by_method "nshash minhash" "q3 q3
q3b q3" --confirm 0
	run_nsd --confirm 0 --explain --only-dups in.jsonl
	[[ "$output" =~ \"containment\":0\.[56][0-9]*,.*,\"numbers\":0\.[0-2][0-9]*\}\}\}$ ]]
}

@test "--explain shows the confirmation's figures with every method" {
	local m
	record a "$(prose 14 30)" > in.jsonl
	record b "$(prose 14 30) Reposted." >> in.jsonl
	for m in nshash simhash; do
		run_nsd -m "$m" --explain --only-dups in.jsonl
		[ "$status" -eq 0 ]
		[ -z "$stderr" ]
		[[ "$output" =~ ,\"confirm\":\{\"containment\":1,\"jaccard\":(1|0\.9[0-9]*),\"sample\":(1[0-9]|2[0-9]|3[01])\}\}\}$ ]]
	done
	# MinHash's sketch keeps only the numbers, which these texts lack.
	run_nsd -m minhash --explain --only-dups in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ "$output" == *',"bands":[0,1,2,3,4,5,6,7],"confirm":{}}}' ]]
	record c "$(results Northwind 14 'Mary Olsen' 09:30 412 12 430 450)" > in.jsonl
	record d "$(results Northwind 14 'Mary Olsen' 09:30 412 12 430 450) Reposted." >> in.jsonl
	run_nsd -m minhash --explain --only-dups in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ "$output" =~ ,\"bands\":\[[0-9,]+\],\"confirm\":\{\"numbers\":1\}\}\}$ ]]
}

@test "--confirm takes a share from 0 to 1" {
	run_nsd --confirm 1.5 /dev/null
	usage_error "invalid value '1.5' for --confirm (a fraction from 0 to 1, with at most 4 decimals)"
	run_nsd --confirm x /dev/null
	usage_error "invalid value 'x' for --confirm (a fraction from 0 to 1, with at most 4 decimals)"
	printf '' > empty.jsonl
	run_nsd --confirm 0.95 empty.jsonl
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ -z "$stderr" ]
}

# Three stories of one site that repeat $BACKGROUND, and confirm as no
# copies of each other: it becomes common (--common 3), in day1.jsonl.
site_stories() {
	local i
	for i in 1 2 3; do
		record "s$i" "$BACKGROUND $(prose "$((20 + i))" 20)" >> day1.jsonl
	done
}

@test "--min-match holds when most of a record's sentences are common" {
	site_stories
	"$NSDEDUP" --db x.nsd day1.jsonl > /dev/null
	# a and b share one sentence of their own and the common ones.
	record a "$BACKGROUND The mayor opened the new harbour bridge on Saturday morning in front of several thousand people. $(prose 30 20)" > day2.jsonl
	record b "$BACKGROUND The mayor opened the new harbour bridge on Saturday morning in front of several thousand people. $(prose 31 20)" >> day2.jsonl
	run_nsd --db x.nsd --no-update --confirm 0 --explain day2.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$(groups_of "$output")" "a a
b b"
	# One of its own is enough only when --min-match says so.
	run_nsd --db x.nsd --no-update --confirm 0 --min-match 1 --explain \
	    --only-dups day2.jsonl
	[ "$status" -eq 0 ]
	[[ "$output" == *'"id":"b",'*'"similar_id":"a","is_dup":true,"explain":{"method":"nshash","matched":1,"fingerprints":5,"common":4,'* ]]
}

@test "an exact copy is found when all its sentences became common, on every run" {
	site_stories
	record e "$BACKGROUND" >> day1.jsonl
	record e2 "$BACKGROUND" >> day1.jsonl
	cp day1.jsonl day2.jsonl
	run_nsd --db x.nsd --explain --only-dups day1.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ "$output" == *'"id":"e2",'*'"similar_id":"e","is_dup":true,'*'"exact":true}}' ]]
	# The next run finds every record again, e and e2 by their whole text.
	run_nsd --db x.nsd --explain day2.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$(printf '%s\n' "$output" | grep -c '"is_dup":true')" -eq 5 ]
	[[ "${lines[3]}" == *'"id":"e",'*'"similar_id":"e","is_dup":true,'*'"exact":true}}' ]]
	[[ "${lines[4]}" == *'"id":"e2",'*'"similar_id":"e","is_dup":true,'*'"exact":true}}' ]]
}

@test "matches are confirmed against a file index, by sketches kept with each group" {
	record a "$(prose 1 12) $BACKGROUND" > day1.jsonl
	record b "$(prose 2 12) $BACKGROUND" > day2.jsonl
	record c "$(prose 1 12) $BACKGROUND" >> day2.jsonl
	"$NSDEDUP" --db x.nsd day1.jsonl > /dev/null
	run_nsd --db x.nsd --no-update day2.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$(groups_of "$output")" "b b
c a"
	run_nsd --db x.nsd --db-info
	[ "$status" -eq 0 ]
	[[ "$output" == *$'\nsketches:      192 bytes a group (matches are confirmed)\n'* ]]
}

@test "a MinHash index keeps only the numbers of a sketch, which confirm its matches" {
	record q3 "$(prose 10 6) $(results Northwind 14 'Mary Olsen' 09:30 412 12 430 450)" > day1.jsonl
	record q3b "$(prose 10 6) $(results Eastgate 21 'Paul Brandt' 10:00 97 3 95 101)" > day2.jsonl
	record q3c "$(prose 10 6) $(results Northwind 14 'Mary Olsen' 09:30 412 12 430 450) Reposted." >> day2.jsonl
	"$NSDEDUP" -m minhash --db x.nsd day1.jsonl > /dev/null
	run_nsd --db x.nsd --db-info
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ "$output" == *$'\nsketches:      64 bytes a group (matches are confirmed)\n'* ]]
	expect_eq "$(od -A n -t u4 -j 392 -N 4 x.nsd | tr -d ' ')" 64
	# The template's other numbers turn its match down; the copy's hold.
	run_nsd -m minhash --db x.nsd --no-update --explain day2.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$(groups_of "$output")" "q3b q3b
q3c q3"
	[[ "${lines[1]}" == *',"confirm":{"numbers":1}}}' ]]
	# So does a group of a namespace on no file, in memory.
	cat day1.jsonl day2.jsonl > both.jsonl
	run_nsd -m minhash both.jsonl
	[ "$status" -eq 0 ]
	expect_eq "$(groups_of "$output")" "q3 q3
q3b q3b
q3c q3"
	# The other methods keep the whole sketch.
	for m in nshash simhash; do
		rm -f y.nsd*
		"$NSDEDUP" -m "$m" --db y.nsd day1.jsonl > /dev/null
		expect_eq "$(od -A n -t u4 -j 392 -N 4 y.nsd | tr -d ' ')" 192
	done
}

@test "at the defaults, short posts that quote one long sentence are copies, as CAVEATS says" {
	local quote='The committee will publish its final report on the harbour next spring.'
	record a "$quote Great news." > in.jsonl
	record b "$quote I doubt it, honestly." >> in.jsonl
	record c "$quote $(prose 7 4)" >> in.jsonl
	run_nsd --explain in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	# b has one fingerprint, so one match is enough, and is too short to
	# be judged by its share; c has more, and needs two (--min-match).
	expect_eq "$(groups_of "$output")" "$(printf 'a a\nb a\nc c')"
	[[ "${lines[1]}" == *'"explain":{"method":"nshash","matched":1,"fingerprints":1,'* ]]
}
