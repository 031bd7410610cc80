#!/usr/bin/env bats
# nshash, normalization version 2: a copy whose line breaks, spacing or
# markup changed keeps its sentences; a text seen before is found in its
# group by the key of the whole text; an index keeps the version it was
# made with.

load helpers

: "${NSD_INDEX_DUMP:?run the tests through make check}"

# Two paragraphs of an English story, as one line of JSON string content
# with its line breaks where $1 (a JSON escape, or a space) says.
english() {
	local br=$1
	printf '%s' "The council of the town met on Monday to discuss the budget for${br}the roads and the bridges. It agreed to spend more on repairs this year${br}than it did in the last three years together.\\n"
	printf '%s' "Residents who came to the meeting asked for a new footbridge over the${br}river. The mayor said that the plans would be ready before the summer."
}

# A Chinese story; $1 goes inside its first and third sentences.
chinese() {
	printf '%s' "今年全国粮食总产量再创历史新高，达到一万三千亿斤$1以上，比上年增长百分之一点三。专家表示，这得益于良种推广和农业机械化水平的持续提高，以及各地的精心组织。据介绍，今年的秋粮收购工作已经全面展开，$1各地的收购进度明显快于往年同期。"
}

@test "a copy wrapped at other places, run together or indented is found" {
	{
		record a "$(english '\n')"
		record b "$(english ' ')"
		record c "$(english '\n    ' | sed 's/\\n/\\n\\n  /g')"
		record z "$(chinese '')"
		record y "$(chinese '\n')"
		record x "$(chinese '　')"
	} >in.jsonl
	run_nsd_evidence --explain in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$(groups_of "$output")" "$(printf '%s\n' 'a a' 'b a' 'c a' \
	    'z z' 'y z' 'x z')"
	[[ "${lines[1]}" == *'"matched":4,"fingerprints":4,"common":0,"exact":true}}' ]]
	# The reference splits at every line break: run together, no
	# sentence of the story is left.
	run_nsd --compat=nshash in.jsonl
	[ "$status" -eq 0 ]
	expect_eq "$(groups_of "$output" | head -n 2)" "$(printf '%s\n' \
	    'a a' 'b b')"
}

@test "a copy wrapped in HTML paragraphs or line breaks is found" {
	local html br
	html=$(english ' ' | sed 's/^/<div class=\\"post-body\\"><p>/;
	    s/\\n/<\/p>\\n<p>/; s/$/<\/p><\/div>/')
	br=$(chinese '' | sed 's/。/。<br>/g; s/^/<p>/')
	{
		record a "$(english '\n')"
		record h "$html"
		record z "$(chinese '')"
		record y "$br"
	} >in.jsonl
	run_nsd_evidence --explain in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$(groups_of "$output")" "$(printf '%s\n' 'a a' 'h a' 'z z' \
	    'y z')"
	[[ "${lines[1]}" == *'"exact":true}}' ]]
}

@test "a copy with one more sentence is found by its sentences, not as exact" {
	{
		record a "$(english '\n')"
		record b "$(english ' ') Thanks to all who came."
	} >in.jsonl
	run_nsd_evidence --explain in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ "${lines[1]}" == *'"similar_id":"a","is_dup":true,"explain":{"method":"nshash","matched":4,"fingerprints":4,"common":0,"exact":false}}' ]]
}

@test "a text seen before is found in its group when no group holds enough" {
	local s1 s2 s3
	s1=$(sentence 1)
	s2=$(sentence 2)
	s3=$(sentence 3)
	# x shares one sentence with a and one with b: with --min-match 2 it
	# joins neither and opens its own group, holding only its third.
	{
		record a "$s1. First story, the second sentence of it is long."
		record b "$s2. Second story, the second sentence of it is long."
		record x "$s1. $s2. $s3."
		record x2 "$s1.  $s2.\\n$s3."
	} >in.jsonl
	run_nsd_evidence --explain in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$(groups_of "$output")" "$(printf '%s\n' 'a a' 'b b' 'x x' \
	    'x2 x')"
	[[ "${lines[3]}" == *'"matched":1,"fingerprints":3,"common":0,"exact":true}}' ]]
	# The key of the whole text lasts in the index like a fingerprint.
	head -n 3 in.jsonl >day1.jsonl
	tail -n 1 in.jsonl >day2.jsonl
	"$NSDEDUP" --db x.nsd day1.jsonl >/dev/null
	run_nsd --db x.nsd --no-update day2.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$(groups_of "$output")" "x2 x"
}

@test "an index keeps the normalization version it was made with" {
	local a b
	a=$(english '\n')
	b=$(english ' ')
	record a "$a" >a.jsonl
	record b "$b" >b.jsonl
	# Made new: version 3, and the copy is found.
	new_index_finds a.jsonl b.jsonl a
	# An index of version 1 (its header field at offset 68 set back) is
	# fingerprinted by version 1 and stays at 1: the copy's line breaks
	# moved, so none of its sentences is the same.
	index_at_version old.nsd 1 a.jsonl
	run_nsd --db old.nsd b.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ "$output" == *'"similar_id":"b","is_dup":false}' ]]
	run_nsd --db old.nsd --db-info
	[[ "$output" == *", normalization 1"* ]]
	# A repeat of a is found there, by its version-1 sentences.
	run_nsd --db old.nsd --no-update a.jsonl
	[[ "$output" == *'"similar_id":"a","is_dup":true}' ]]
}

@test "an index of a newer normalization version is refused, saying so" {
	"$NSDEDUP" --db x.nsd </dev/null >/dev/null
	"$NSD_INDEX_DUMP" --set-u32 68 4 x.nsd
	cp x.nsd keep
	run_nsd --db x.nsd /dev/null
	[ "$status" -eq 7 ]
	[ -z "$output" ]
	expect_eq "$stderr" "nsdedup: x.nsd: the index was made with normalization version 4, newer than this nsdedup knows (3); use a newer nsdedup"
	cmp x.nsd keep
}
