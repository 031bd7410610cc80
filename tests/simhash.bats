#!/usr/bin/env bats
# -m simhash: near-copies within --distance bits are found and farther ones
# are not, --explain on both methods and both formats, the --min-features
# rule, the index (--db, --no-update, parameters, --db-verify), the options'
# usage errors, memcheck, and what a killed run of -m simhash --db leaves.
#
# The near-copies are one text with its first word replaced: each
# replacement below moves the SimHash by a known number of bits (with the
# default --ngram, --shingle and --min-features), which --explain shows.
# They change if the fingerprint definition changes, as the golden vectors
# of tests/unit/simhash_test.c do.

load helpers

: "${NSDEDUP_CRASHPOINTS:?run the tests through make check}"
: "${NSD_INDEX_DUMP:?run the tests through make check}"
: "${GENCORPUS:?run the tests through make check}"

REST='city council met on monday to discuss the new budget for schools roads and the public library in the old town'
BASE="the $REST"
# NEAR[d]: what replaces "the" to move the SimHash d bits from BASE's.
NEAR=('bank match' 'plan summer' city station river budget rain worker
    'river budget' 'river city')

# The near-copy of BASE at distance $1.
near() {
	printf '%s %s' "${NEAR[$1]}" "$REST"
}

# What nsdedup --explain writes for record $1 with text $2: an original
# (no $3), or a duplicate of group $3 at SimHash distance $4.
judged() {
	if [ $# -eq 2 ]; then
		printf '{"id":"%s","text":"%s","similar_id":"%s","is_dup":false}\n' \
		    "$1" "$2" "$1"
	else
		printf '{"id":"%s","text":"%s","similar_id":"%s","is_dup":true,"explain":{"method":"simhash","distance":%s}}\n' \
		    "$1" "$2" "$3" "$4"
	fi
}

# The committed state of an index, canonically.
dump() {
	"$NSD_INDEX_DUMP" "$@"
}

# One line of --db-info's output ($output), by its label.
info_field() {
	printf '%s\n' "$output" | sed -n "s/^$1: *//p"
}

# --- Distances ---

@test "near-copies within --distance are found, farther ones are not" {
	for k in 0 1 3 5 8; do
		for d in 0 1 2 3 4 5 6 7 8 9; do
			{ record a "$BASE"; record b "$(near "$d")"; } > in.jsonl
			run_nsd_evidence -m simhash --distance "$k" --explain in.jsonl
			[ "$status" -eq 0 ]
			[ -z "$stderr" ]
			if [ "$d" -le "$k" ]; then
				want=$(judged b "$(near "$d")" a "$d")
			else
				want=$(judged b "$(near "$d")")
			fi
			expect_eq "${lines[1]}" "$want"
			expect_eq "${lines[0]}" "$(judged a "$BASE")"
		done
	done
}

@test "the default distance is 3" {
	for d in 2 3 4; do
		{ record a "$BASE"; record b "$(near "$d")"; } > in.jsonl
		run_nsd -m simhash in.jsonl
		[ "$status" -eq 0 ]
		[ -z "$stderr" ]
		[ "${#lines[@]}" -eq 2 ]
		if [ "$d" -le 3 ]; then
			[[ "${lines[1]}" == *'"similar_id":"a","is_dup":true}' ]]
		else
			[[ "${lines[1]}" == *'"similar_id":"b","is_dup":false}' ]]
		fi
	done
}

@test "--distance 0 finds only equal SimHashes, of texts equal or not" {
	{
		record a "$BASE"
		record b "The City Council met on Monday, to discuss the new budget for schools, roads and the public library in the old town."
		record c "$(near 0)"
		record d "$(near 1)"
	} > in.jsonl
	run_nsd_evidence -m simhash --distance=0 --explain in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 4 ]
	[[ "${lines[1]}" == *'"similar_id":"a","is_dup":true,"explain":{"method":"simhash","distance":0}}' ]]
	expect_eq "${lines[2]}" "$(judged c "$(near 0)" a 0)"
	expect_eq "${lines[3]}" "$(judged d "$(near 1)")"
}

@test "TSV: the same distances, and the explain column" {
	for d in 0 3 4; do
		printf 'id\ttext\n%s\t%s\n%s\t%s\n' a "$BASE" b "$(near "$d")" \
		    > in.tsv
		run_nsd_evidence -m simhash --explain in.tsv
		[ "$status" -eq 0 ]
		[ -z "$stderr" ]
		expect_eq "${lines[0]}" "$(printf 'id\ttext\tsimilar_id\tis_dup\texplain')"
		expect_eq "${lines[1]}" "$(printf 'a\t%s\ta\tfalse\t' "$BASE")"
		if [ "$d" -le 3 ]; then
			want=$(printf 'b\t%s\ta\ttrue\t{"method":"simhash","distance":%s}' \
			    "$(near "$d")" "$d")
		else
			want=$(printf 'b\t%s\tb\tfalse\t' "$(near "$d")")
		fi
		expect_eq "${lines[2]}" "$want"
	done
}

@test "a record that is near two groups joins the oldest, through a near-copy" {
	# y is 3 bits from x, which is 2 from a; y is 5 from a, and 3 from
	# b, a newer group 6 bits from a.
	x=$(near 2)
	y="$x school"
	b="$y river market"
	{ record a "$BASE"; record b "$b"; record x "$x"; record y "$y"; } \
	    > in.jsonl
	run_nsd_evidence -m simhash --explain in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "$(judged a "$BASE"; judged b "$b"; \
	    judged x "$x" a 2; judged y "$y" a 3)"
}

# --- --explain ---

@test "--explain, simhash, JSON: on duplicates only, after is_dup" {
	{
		record a "$BASE"
		record b "$(near 2)"
		printf '{"text":"%s","id":"c","similar_id":"old","n":1}\n' "$(near 3)"
		record d "too short to compare"
		record e "too short to compare"
	} > in.jsonl
	run_nsd_evidence -m simhash --explain in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	# c is 3 bits from a, but 1 from b: the distance is to the nearest
	# fingerprint of the group.
	expect_eq "$output" "$(judged a "$BASE"; judged b "$(near 2)" a 2
	    printf '{"text":"%s","id":"c","similar_id":"a","n":1,"is_dup":true,"explain":{"method":"simhash","distance":1}}\n' "$(near 3)"
	    judged d "too short to compare"; judged e "too short to compare")"
	# Review mode keeps it; --dup-field= leaves is_dup out, not explain.
	run_nsd_evidence -m simhash --explain -D --dup-field= in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "${lines[0]}" "{\"id\":\"b\",\"text\":\"$(near 2)\",\"similar_id\":\"a\",\"explain\":{\"method\":\"simhash\",\"distance\":2}}"
	[ "${#lines[@]}" -eq 2 ]
	# Drop mode writes originals as they were read.
	run_nsd_evidence -m simhash --explain -d in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "$(sed -n '1p;4,5p' in.jsonl)"
	# Without --explain, nothing is added.
	run_nsd -m simhash in.jsonl
	[ "$status" -eq 0 ]
	[[ "$output" != *explain* ]]
}

@test "--explain, simhash, TSV: a last column, empty for originals" {
	printf 'id\ttext\n' > in.tsv
	printf '%s\t%s\n' a "$BASE" b "$(near 1)" c short >> in.tsv
	run_nsd_evidence -m simhash --explain --field-name=dup_of in.tsv
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "$(printf '%s\n' \
	    'id	text	dup_of	is_dup	explain' \
	    "a	$BASE	a	false	" \
	    "b	$(near 1)	a	true	{\"method\":\"simhash\",\"distance\":1}" \
	    'c	short	c	false	')"
	tail -n +2 in.tsv > rows.tsv
	run_nsd_evidence -m simhash --explain -H -k 2 --id-field=1 rows.tsv
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "${lines[1]}" "b	$(near 1)	a	true	{\"method\":\"simhash\",\"distance\":1}"
	[ "${#lines[@]}" -eq 3 ]
}

@test "--explain, nshash: the fingerprints that matched, of how many" {
	s1=$(sentence 1)
	s2=$(sentence 2)
	s3=$(sentence 3)
	{
		record a "$s1. $s2."
		record b "$s1. $s2. $s3."
		record c "$s3. Tiny."
		record d "$s2! $s1?"
		record e "$s1.\\n  $s2."
	} > in.jsonl
	run_nsd_evidence --explain --min-match=1 in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "$(printf '%s\n' \
	    "{\"id\":\"a\",\"text\":\"$s1. $s2.\",\"similar_id\":\"a\",\"is_dup\":false}" \
	    "{\"id\":\"b\",\"text\":\"$s1. $s2. $s3.\",\"similar_id\":\"a\",\"is_dup\":true,\"explain\":{\"method\":\"nshash\",\"matched\":2,\"fingerprints\":3,\"common\":0,\"exact\":false}}" \
	    "{\"id\":\"c\",\"text\":\"$s3. Tiny.\",\"similar_id\":\"a\",\"is_dup\":true,\"explain\":{\"method\":\"nshash\",\"matched\":1,\"fingerprints\":1,\"common\":0,\"exact\":false}}" \
	    "{\"id\":\"d\",\"text\":\"$s2! $s1?\",\"similar_id\":\"a\",\"is_dup\":true,\"explain\":{\"method\":\"nshash\",\"matched\":2,\"fingerprints\":2,\"common\":0,\"exact\":false}}" \
	    "{\"id\":\"e\",\"text\":\"$s1.\\n  $s2.\",\"similar_id\":\"a\",\"is_dup\":true,\"explain\":{\"method\":\"nshash\",\"matched\":2,\"fingerprints\":2,\"common\":0,\"exact\":true}}")"
	printf 'id\ttext\n' > in.tsv
	printf '%s\t%s\n' a "$s1. $s2." b "$s3. $s1." c "short" >> in.tsv
	run_nsd_evidence --explain --min-match=1 in.tsv
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "$(printf '%s\n' \
	    'id	text	similar_id	is_dup	explain' \
	    "a	$s1. $s2.	a	false	" \
	    "b	$s3. $s1.	a	true	{\"method\":\"nshash\",\"matched\":1,\"fingerprints\":2,\"common\":0,\"exact\":false}" \
	    'c	short	c	false	')"
}

# --- --min-features ---

@test "a text of 30 letters and digits or fewer has nothing to compare" {
	# A site's slogan, all that two failed crawls kept: 9 bigrams pass
	# --min-features 8, but 10 letters are too few to compare.
	local slogan='精度知天下，新闻更悦己' long
	long="$slogan$slogan$slogan$slogan"
	{
		record a "$slogan"
		record b "$slogan"
		record c "$long"
		record d "$long"
	} >in.jsonl
	run_nsd -m simhash --stats in.jsonl
	[ "$status" -eq 0 ]
	[[ "${lines[1]}" == *'"similar_id":"b","is_dup":false}' ]]
	[[ "${lines[3]}" == *'"similar_id":"c","is_dup":true}' ]]
	[[ "$stderr" == *'originals   3 (2 with nothing to compare)'* ]]
}

@test "texts of fewer than --min-features features are never duplicates" {
	local han30 han31
	nine='alpha bravo charlie delta echo foxtrot golf hotel india'
	ten="$nine juliet"
	# 31 and 32 Han characters (other ones): 30 and 31 2-grams.
	han30='一二三四五六七八九十甲乙丙丁戊己庚辛壬癸子丑寅卯辰巳午未申酉戌'
	han31='春夏秋冬东南西北上下左右前后天地人和日月星辰山川河海风雨雷电金木'
	{
		record a "too short"; record b "too short"
		record c "$nine"; record d "$nine"
		record e "$ten"; record f "$ten"
		record g "$han30"; record h "$han30"
		record i "$han31"; record j "$han31"
	} > in.jsonl
	# 2 words: 1 feature; 9 words: 7 shingles; 10 words: 8.
	run_nsd -m simhash --stats in.jsonl
	[ "$status" -eq 0 ]
	expect_eq "$(printf '%s\n' "$output" | grep -o '"similar_id".*')" \
	    "$(printf '"similar_id":"%s","is_dup":%s}\n' a false b false \
	    c false d false e false e true g false g true i false i true)"
	[[ "$stderr" == *"originals   7 (4 with nothing to compare)"* ]]
	# Fewer features needed: now nine words are enough, and two are not.
	run_nsd -m simhash --min-features=7 in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$(printf '%s\n' "$output" | grep -o '"is_dup":[a-z]*' |
	    tr '\n' ' ')" \
	    '"is_dup":false "is_dup":false "is_dup":false "is_dup":true "is_dup":false "is_dup":true "is_dup":false "is_dup":true "is_dup":false "is_dup":true '
	# More needed: 30 2-grams are too few for 31, 31 are enough.
	run_nsd -m simhash --min-features=31 in.jsonl
	[ "$status" -eq 0 ]
	expect_eq "$(printf '%s\n' "$output" | grep -o '"is_dup":[a-z]*' |
	    tr '\n' ' ')" \
	    '"is_dup":false "is_dup":false "is_dup":false "is_dup":false "is_dup":false "is_dup":false "is_dup":false "is_dup":false "is_dup":false "is_dup":true '
}

# --- The index ---

@test "two runs with --db print what one run in memory prints" {
	"$GENCORPUS" --records 400 --seed 5 > corpus.jsonl
	# Near-copies across the halves: the first record of each half again,
	# its first word changed, at the end of the second half.
	head -n 200 corpus.jsonl > day1.jsonl
	{ tail -n +201 corpus.jsonl; record n1 "$(near 2)"; } > day2.jsonl
	sed -i "1i $(record n0 "$BASE")" day1.jsonl
	cat day1.jsonl day2.jsonl > all.jsonl
	"$NSDEDUP" -m simhash --explain all.jsonl > want.jsonl
	run_nsd -m simhash --explain --db x day1.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	printf '%s\n' "$output" > got.jsonl
	run_nsd -m simhash --explain --db x day2.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	printf '%s\n' "$output" >> got.jsonl
	cmp got.jsonl want.jsonl
	# Day 2 found near-copies of day 1, at distances above 0.
	unconfirmed "$(tail -n 1 got.jsonl)" |
	    grep -q '"similar_id":"n0","is_dup":true,"explain":{"method":"simhash","distance":2}}$'
	ids1=$(grep -o '^{"id":"[^"]*"' day1.jsonl | sed 's/^{"id"://' |
	    tr '\n' '|')
	printf '%s\n' "$output" |
	    grep -cE "\"similar_id\":(${ids1%|}),\"is_dup\":true,\"explain\":\{\"method\":\"simhash\",\"distance\":[1-9]" \
	    > cross.txt
	[ "$(cat cross.txt)" -ge 2 ]
	# Without ids, the group numbers carry over too.
	for f in all day1 day2; do
		sed 's/^{"id":"[^"]*",/{/' "$f.jsonl" > "$f-noid.jsonl"
	done
	[ "$(grep -c '"id"' all-noid.jsonl)" -eq 0 ]
	"$NSDEDUP" -m simhash all-noid.jsonl > want2.jsonl
	"$NSDEDUP" -m simhash --db y day1-noid.jsonl > got2.jsonl
	"$NSDEDUP" -m simhash --db y day2-noid.jsonl >> got2.jsonl
	cmp got2.jsonl want2.jsonl
}

@test "TSV with --db: two runs print what one run prints" {
	printf 'id\ttext\n' > d1.tsv
	printf 'id\ttext\n' > d2.tsv
	for d in 0 1 2 3 4 5; do
		printf 'r%s\t%s\n' "$d" "$(near "$d")" >> d2.tsv
	done
	printf 'base\t%s\n' "$BASE" >> d1.tsv
	{ cat d1.tsv; tail -n +2 d2.tsv; } > all.tsv
	"$NSDEDUP" -m simhash --explain all.tsv > want.tsv
	{
		"$NSDEDUP" -m simhash --explain --db x d1.tsv
		"$NSDEDUP" -m simhash --explain --db x d2.tsv | tail -n +2
	} > got.tsv
	cmp got.tsv want.tsv
	# Each is at most 3 bits from the nearest fingerprint of base's group
	# that came before it (r0 is not added: it equals base's).
	expect_eq "$(unconfirmed "$(cut -f 1,3- got.tsv | tail -n +2)" |
	    tr '\n\t' '  ')" \
	    'base base false  r0 base true {"method":"simhash","distance":0} r1 base true {"method":"simhash","distance":1} r2 base true {"method":"simhash","distance":2} r3 base true {"method":"simhash","distance":1} r4 base true {"method":"simhash","distance":2} r5 base true {"method":"simhash","distance":3} '
}

@test "an equal SimHash adds nothing to the index; a near one is added" {
	record a "$BASE" > a.jsonl
	"$NSDEDUP" -m simhash --db x a.jsonl > /dev/null
	run_nsd --db x --db-info
	expect_eq "$(info_field entries)" "0 in the table, 0 in the stage, 10 in the log"
	{ record b "$BASE"; record c "$(near 0)"; } > b.jsonl
	run_nsd_evidence -m simhash --explain --db x b.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "$(judged b "$BASE" a 0; judged c "$(near 0)" a 0)"
	run_nsd --db x --db-info
	expect_eq "$(info_field entries)" "0 in the table, 0 in the stage, 10 in the log"
	expect_eq "$(info_field records)" 3
	record d "$(near 1)" > d.jsonl
	"$NSDEDUP" -m simhash --db x d.jsonl > /dev/null
	run_nsd --db x --db-info
	expect_eq "$(info_field entries)" "0 in the table, 0 in the stage, 20 in the log"
}

@test "--db-info describes a simhash index" {
	record a "$BASE" > a.jsonl
	"$NSDEDUP" -m simhash --distance 2 --db x a.jsonl > /dev/null
	run_nsd --db x --db-info
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$(info_field parameters)" \
	    '--method simhash --distance 2 --ngram 2 --shingle 3 --min-features 8 (6 block tables), normalization 3'
	"$NSDEDUP" -m simhash --ngram 3 --shingle 2 --min-features 5 --db y \
	    a.jsonl > /dev/null
	run_nsd --db y --db-info
	[ "$status" -eq 0 ]
	expect_eq "$(info_field parameters)" \
	    '--method simhash --distance 3 --ngram 3 --shingle 2 --min-features 5 (10 block tables), normalization 3'
}

@test "--no-update adds nothing, finds near-copies within the run, prints what a writer prints" {
	# b, c and e are more than 3 bits from a and from each other.
	{ record a "$BASE"; record b "$(near 9)"; } > day1.jsonl
	{
		record c "$(near 5)"; record d "$(near 3)"; record e "$(near 7)"
		record f "$(near 5)"
	} > day2.jsonl
	"$NSDEDUP" -m simhash --db x day1.jsonl > /dev/null
	cp x y
	cp x.ids y.ids
	cp x.log y.log
	dump x > before.txt
	cksum x x.ids x.log > before.sum
	run_nsd -m simhash --explain --db x --no-update day2.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	# f is a copy of c, which only this run has seen.
	[[ "$(unconfirmed "${lines[3]}")" == '{"id":"f",'*'"similar_id":"c","is_dup":true,"explain":{"method":"simhash","distance":0}}' ]]
	[[ "$(unconfirmed "${lines[1]}")" == '{"id":"d",'*'"similar_id":"a","is_dup":true,"explain":{"method":"simhash","distance":3}}' ]]
	dump x | cmp - before.txt
	cksum x x.ids x.log | cmp - before.sum
	expect_eq "$output" "$("$NSDEDUP" -m simhash --explain --db y day2.jsonl)"
	# Nothing was remembered: c is new again.
	run_nsd -m simhash --db x --no-update day2.jsonl
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == *'"similar_id":"c","is_dup":false}' ]]
	cksum x x.ids x.log | cmp - before.sum
}

@test "--no-update: a near-copy that joined an old group leads to it" {
	# x joins a; y is near x and b (a newer group) but not a: a writer
	# puts y in a, the oldest, through x's entry.
	x=$(near 2)
	y="$x school"
	b="$y river market"
	{ record a "$BASE"; record b "$b"; } > day1.jsonl
	{ record x "$x"; record y "$y"; } > day2.jsonl
	"$NSDEDUP" -m simhash --db w day1.jsonl > /dev/null
	cp w w2
	cp w.ids w2.ids
	cp w.log w2.log
	want=$(judged x "$x" a 2; judged y "$y" a 3)
	expect_eq "$(unconfirmed "$("$NSDEDUP" -m simhash --explain --db w2 \
	    day2.jsonl)")" "$want"
	run_nsd_evidence -m simhash --explain --db w --no-update day2.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "$want"
}

@test "an index of another method or other SimHash parameters is refused" {
	record a "$BASE" > a.jsonl
	record b "$(near 1)" > b.jsonl
	"$NSDEDUP" --db ns a.jsonl > /dev/null
	"$NSDEDUP" -m simhash --db sh a.jsonl > /dev/null
	dump ns > ns.before
	dump sh > sh.before
	run_nsd -m simhash --db ns b.jsonl
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	expect_eq "$stderr" \
	    "nsdedup: ns: the index was made with --method nshash, not simhash"
	run_nsd --db sh b.jsonl
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	expect_eq "$stderr" \
	    "nsdedup: sh: the index was made with --method simhash, not nshash"
	run_nsd -m simhash --distance 4 --db sh b.jsonl
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	expect_eq "$stderr" \
	    "nsdedup: sh: the index was made with --distance 3, not 4"
	run_nsd -m simhash --ngram 3 --db sh --no-update b.jsonl
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	expect_eq "$stderr" \
	    "nsdedup: sh: the index was made with --ngram 2, not 3"
	run_nsd -m simhash --shingle=4 --db sh b.jsonl
	[ "$status" -eq 7 ]
	expect_eq "$stderr" \
	    "nsdedup: sh: the index was made with --shingle 3, not 4"
	run_nsd -m simhash --min-features=9 --db sh b.jsonl
	[ "$status" -eq 7 ]
	expect_eq "$stderr" \
	    "nsdedup: sh: the index was made with --min-features 8, not 9"
	dump ns | cmp - ns.before
	dump sh | cmp - sh.before
	# The same parameters spelled out are no difference.
	run_nsd -m simhash --distance=3 --ngram=2 --shingle=3 \
	    --min-features=8 --db sh b.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ "$output" == *'"similar_id":"a","is_dup":true}' ]]
}

@test "--db-verify passes a simhash index after it grew" {
	"$GENCORPUS" --records 1000 --seed 7 > corpus.jsonl
	head -n 300 corpus.jsonl > c1.jsonl
	tail -n +301 corpus.jsonl > c2.jsonl
	"$NSDEDUP" -m simhash --db x c1.jsonl > got.jsonl
	run_nsd --db x --db-info
	[[ "$(info_field load)" == *"of 4096 slots"* ]]
	"$NSDEDUP" -m simhash --db x c2.jsonl >> got.jsonl
	"$NSDEDUP" -m simhash corpus.jsonl | cmp - got.jsonl
	run_nsd --db x --db-verify
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	slots=$(info_field load | sed 's/.* of \([0-9]*\) slots.*/\1/')
	[ "$slots" -gt 4096 ]
	[ "${lines[-1]}" = "verified:      no problems found" ]
	[ "$(stat -c %s x)" -eq $((8192 + slots * 16)) ]
	[ ! -e x.new ]
}

@test "--db-verify finds a SimHash that one block table holds for another group" {
	# A bulk load: the log fills, and the entries go into the table.
	"$GENCORPUS" --records 1000 --seed 7 > corpus.jsonl
	"$NSDEDUP" -m simhash --db x corpus.jsonl > /dev/null
	run_nsd --db x --db-verify
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "verified:      no problems found" ]
	# Two entries of block table 3 with different groups: swap their
	# slot words (generation, table, group; bits 0-55), keys and chains
	# untouched, each with a check that holds.
	local i=0 key meta a='' b='' ka ma kb mb fg
	while read -r key meta; do
		meta=$((meta & 0xffffffffffffff))
		if [ "$meta" -ne 0 ] && [ $(((meta >> 20) & 15)) -eq 3 ]; then
			if [ -z "$a" ]; then
				a=$i ka=$key ma=$meta fg=$((meta >> 24))
			elif [ $((meta >> 24)) -ne "$fg" ]; then
				b=$i kb=$key mb=$meta
				break
			fi
		fi
		i=$((i + 1))
	done < <(od -An -v -t u8 -j 8192 -w16 x)
	[ -n "$b" ]
	"$NSD_INDEX_DUMP" --put-slot x $((8192 + 16 * a)) "$ka" "$mb"
	"$NSD_INDEX_DUMP" --put-slot x $((8192 + 16 * b)) "$kb" "$ma"
	run_nsd --db x --db-verify
	[ "$status" -eq 7 ]
	[[ "$output" != *"verified:"* ]]
	[ "$(grep -c 'is not in block table 3$' <<< "$stderr")" -eq 2 ]
	[[ "$stderr" == *"nsdedup: x: damaged: 2 problems found" ]]
	[[ "$stderr" == "nsdedup: x: slot "*": SimHash "*" of group "*" is not in block table 3"* ]]
	[[ "$stderr" != *"cannot be found"* ]]
}

@test "memcheck: -m simhash in memory, with --db and with --no-update" {
	need_memcheck
	"$GENCORPUS" --records 60 --seed 9 > in.jsonl
	{ record a "$BASE"; record b "$(near 2)"; record c short; } >> in.jsonl
	for args in "--explain" "--explain --db x" "--db x --no-update -D"; do
		# shellcheck disable=SC2086
		run --separate-stderr "$VALGRIND" -q --leak-check=full \
		    --errors-for-leak-kinds=definite --error-exitcode=99 \
		    "$NSDEDUP" -m simhash $args in.jsonl
		[ "$status" -eq 0 ] || { printf '%s\n' "$stderr"; false; }
		[ -z "$stderr" ]
	done
	[[ "$output" == *'"id":"b",'*'"similar_id":"a","is_dup":true}' ]]
}

# --- Usage errors ---

@test "usage errors: the SimHash parameters' ranges, and --compat" {
	record a "$BASE" > a.jsonl
	run_nsd -m simhash --distance=9 a.jsonl
	usage_error "--distance must be between 0 and 8, not '9'"
	run_nsd --distance=-1 a.jsonl
	usage_error "invalid number '-1' for --distance"
	run_nsd -m simhash --ngram=0 a.jsonl
	usage_error "--ngram must be between 1 and 8, not '0'"
	run_nsd -m simhash --shingle=9 a.jsonl
	usage_error "--shingle must be between 1 and 8, not '9'"
	run_nsd -m simhash --min-features=0 a.jsonl
	usage_error "--min-features must be between 1 and 100000, not '0'"
	run_nsd -m simhash --compat=nshash a.jsonl
	usage_error "--compat is an option of --method nshash, not of simhash"
	run_nsd --compat=nshash --method=simhash a.jsonl
	usage_error "--compat is an option of --method nshash, not of simhash"
	run_nsd --method=bloom a.jsonl
	usage_error "invalid value 'bloom' for --method (valid: nshash, simhash, minhash)"
}

# --- A killed run of -m simhash --db ---

# Run 1 reads a.jsonl (100 records, about 960 entries: 10 per record);
# b.jsonl (1000 records) makes run 2 grow the table from 4096 slots, then
# go on as a bulk load.
setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	"$GENCORPUS" --records 100 --seed 1 > a.jsonl
	"$GENCORPUS" --records 1000 --seed 2 > b.jsonl
}

# Make the index db from a.jsonl (run 1) and learn, from an uninterrupted
# run 2 over b.jsonl on a copy, what it writes (want.out) and leaves
# (post.dump); pre.dump is the state before run 2.
prepare() {
	cp "$BATS_FILE_TMPDIR"/a.jsonl "$BATS_FILE_TMPDIR"/b.jsonl .
	run_nsd -m simhash --db db a.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	dump db > pre.dump
	mkdir ref
	copy_index db ref
	"$NSDEDUP" -m simhash --explain --db ref/db b.jsonl > want.out \
	    2> ref.err
	[ ! -s ref.err ]
	dump ref/db > post.dump
	! cmp -s pre.dump post.dump
}

# Run 2 under the crash-point build, dying at step $1.
crash_at() {
	NSDEDUP_CRASH_AT=$1 run --separate-stderr "$NSDEDUP_CRASHPOINTS" \
	    -m simhash --explain --db db b.jsonl
	if [ "$status" -ne 137 ]; then
		echo "NSDEDUP_CRASH_AT=$1: status $status, not killed"
		return 1
	fi
	[ -z "$stderr" ]
}

# The index is as in $1.dump (pre or post) and verifies, and run 2 again
# writes what an uninterrupted run 2 over that state writes, and leaves
# what it leaves.
check_recovered() {
	local want=want.out after=post.dump

	dump db | cmp - "$1.dump"
	run_nsd --db db --db-verify
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "${lines[-1]}" = "verified:      no problems found" ]
	if [ "$1" = post ]; then
		mkdir again
		copy_index ref/db again
		"$NSDEDUP" -m simhash --explain --db again/db b.jsonl \
		    > again.out
		dump again/db > again.dump
		want=again.out
		after=again.dump
	fi
	run_nsd -m simhash --explain --db db b.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	printf '%s\n' "$output" | cmp - "$want"
	dump db | cmp - "$after"
	[ ! -e db.new ]
}

@test "simhash, killed after the pending header: the index is as before" {
	prepare
	crash_at begin
	check_recovered pre
}

@test "simhash, killed at the first insert, and again in the middle" {
	prepare
	crash_at insert:1
	dump db | cmp - pre.dump
	crash_at insert:150
	check_recovered pre
}

@test "simhash, killed around the growth of the table: as before" {
	prepare
	crash_at grow-started
	[ -e db.next ]
	dump db | cmp - pre.dump
	crash_at grown-built
	[ -e db.next ]
	[ "$(stat -c %s db)" -eq $((8192 + 4096 * 16)) ]
	crash_at grown-renamed
	[ "$(stat -c %s db)" -eq $((8192 + 8192 * 16)) ]
	dump db | cmp - pre.dump
	crash_at insert:500
	check_recovered pre
}

@test "simhash, killed around the rebuild of a bulk load: as before" {
	prepare
	crash_at rebuild-built
	[ -e db.new ]
	dump db | cmp - pre.dump
	crash_at rebuild-renamed
	dump db | cmp - pre.dump
	crash_at table-synced
	check_recovered pre
}

@test "simhash, killed after the log and the id file are synced" {
	prepare
	crash_at log-synced
	dump db | cmp - pre.dump
	crash_at ids-synced
	check_recovered pre
}

@test "simhash, killed after the commit header is written: as after" {
	prepare
	crash_at commit-written
	check_recovered post
}

@test "simhash, killed just after the commit: the index is as after the run" {
	prepare
	crash_at committed
	check_recovered post
}

@test "--explain replaces an explain member or column the input had" {
	s=$(sentence 1)
	printf '{"id":1,"text":"%s","explain":"old"}\n{"id":2,"explain":5,"text":"%s"}\n' "$s" "$s" > in.jsonl
	run_nsd_evidence --explain in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "$(printf '%s\n' \
	    "{\"id\":1,\"text\":\"$s\",\"explain\":null,\"similar_id\":1,\"is_dup\":false}" \
	    "{\"id\":2,\"explain\":{\"method\":\"nshash\",\"matched\":1,\"fingerprints\":1,\"common\":0,\"exact\":true},\"text\":\"$s\",\"similar_id\":1,\"is_dup\":true}")"
	printf 'id\ttext\texplain\n1\t%s\told\n2\t%s\told\n' "$s" "$s" > in.tsv
	run_nsd_evidence --explain -f tsv in.tsv
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "$(printf 'id\ttext\texplain\tsimilar_id\tis_dup\n1\t%s\t\t1\tfalse\n2\t%s\t{"method":"nshash","matched":1,"fingerprints":1,"common":0,"exact":true}\t1\ttrue' "$s" "$s")"
	run_nsd_evidence --explain --field-name explain in.jsonl
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--explain writes the member 'explain'"* ]]
}
