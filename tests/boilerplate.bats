#!/usr/bin/env bats
# Boilerplate and nshash: --min-match, --common (counted in the index, so
# across runs) and the rule that code-like sentences do not qualify. The
# stories below share nothing but what each test adds to them: a footer
# longer than any of their sentences, or a leaked script.

load helpers

FOOTER='This article is copyright of the Example News Network and may not be reproduced or distributed without written permission'

# Sentence $2 of story $1: long enough to be fingerprinted, and shorter
# than the footer, so the footer is always among a story's longest.
line() {
	printf 'Story %s, part %s, the council of town %s met about item %s.' \
	    "$1" "$2" "$1" "$2"
}

# The text of story $1: five sentences, then whatever $2 holds.
story() {
	local i
	for i in 1 2 3 4 5; do
		printf '%s ' "$(line "$1" "$i")"
	done
	printf '%s' "$2"
}

# Stories 1..$1 with the footer, as in.jsonl.
footed_stories() {
	local i
	: >in.jsonl
	for ((i = 1; i <= $1; i++)); do
		record "s$i" "$(story "$i" "$FOOTER")" >>in.jsonl
	done
}

@test "stories that share a long footer are not duplicates" {
	footed_stories 8
	run_nsd --explain in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 8 ]
	[[ "$output" != *'"is_dup":true'* ]]
	expect_eq "$(groups_of "$output" | awk '$1 != $2')" ""
}

@test "with the reference's rules a shared footer makes every story a copy" {
	footed_stories 4
	run_nsd --min-match=1 --common=0 --confirm=0 in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$(groups_of "$output")" "$(printf 's1 s1\ns2 s1\ns3 s1\ns4 s1')"
}

@test "a copy of a story with the footer is found, the footer passed over" {
	# s2 holds the footer (s1's) and its first four parts, of equal
	# length; c2 passes over the footer and takes all five parts.
	footed_stories 4
	record c2 "$(story 2 "$FOOTER")" >>in.jsonl
	run_nsd --explain --only-dups in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "$(record c2 "$(story 2 "$FOOTER")" |
	    sed 's/}$/,"similar_id":"s2","is_dup":true,"explain":{"method":"nshash","matched":4,"fingerprints":5,"common":1,"exact":true}}/')"
}

@test "--common=0: the footer is compared, and its one match is not enough" {
	footed_stories 4
	record c2 "$(story 2 "$FOOTER")" >>in.jsonl
	run_nsd --explain --only-dups --common=0 in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ "$output" == *'"similar_id":"s2"'*'"matched":4,"fingerprints":5,"common":0,"exact":true}}' ]]
	[ "${#lines[@]}" -eq 1 ]
}

@test "the footer becomes common at the --common-th group, not before" {
	# Records of the footer alone: one fingerprint, so --min-match needs
	# only it. Before the footer is common the first such record joins
	# s1; once it is common there is nothing left to compare, but for
	# the whole text: f2, the same text as f1, is its exact copy.
	footed_stories 2
	record f1 "$FOOTER" >>in.jsonl
	run_nsd --common=3 --stats in.jsonl
	[ "$status" -eq 0 ]
	expect_eq "$(groups_of "$output" | tail -n 1)" "f1 s1"
	[[ "$stderr" == *'duplicates  1'* ]]
	footed_stories 3
	record f1 "$FOOTER" >>in.jsonl
	record f2 "$FOOTER" >>in.jsonl
	run_nsd --common=3 --stats in.jsonl
	[ "$status" -eq 0 ]
	expect_eq "$(groups_of "$output" | tail -n 2)" "$(printf 'f1 f1\nf2 f1')"
	[[ "$stderr" == *'originals   4 (1 with nothing to compare)'* ]]
	[[ "$stderr" == *'duplicates  1'* ]]
}

@test "a group counts once towards --common, however many of its records present the footer" {
	# s2 presents s1's footer; so does c2, a copy of s2 that joins it
	# (its whole text another): still one group, not two, so the footer
	# is not common and f1, the footer alone, joins s1.
	footed_stories 2
	record c2 "Reposted. $(story 2 "$FOOTER")" >>in.jsonl
	record f1 "$FOOTER" >>in.jsonl
	run_nsd --common=3 in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$(groups_of "$output")" \
	    "$(printf 's1 s1\ns2 s2\nc2 s2\nf1 s1')"
}

@test "the counts of --common last in the index, and --no-update reads them" {
	footed_stories 3
	"$NSDEDUP" --db x.nsd in.jsonl >/dev/null
	record f1 "$FOOTER" >f.jsonl
	record c3 "$(story 3 "$FOOTER")" >>f.jsonl
	run_nsd --db x.nsd --no-update --explain f.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$(groups_of "$output")" "$(printf 'f1 f1\nc3 s3')"
	[[ "${lines[1]}" == *'"common":1,"exact":true}}' ]]
	# Without the index the footer is new again, and c3 shares only
	# the footer with f1.
	run_nsd f.jsonl
	[ "$status" -eq 0 ]
	expect_eq "$(groups_of "$output")" "$(printf 'f1 f1\nc3 c3')"
}

@test "a failed run commits none of its counts" {
	footed_stories 2
	"$NSDEDUP" --db x.nsd --common=3 in.jsonl >/dev/null
	# The third story would make the footer common; the run then stops
	# at a bad record and commits nothing.
	record s3 "$(story 3 "$FOOTER")" >more.jsonl
	printf '{"id":\n' >>more.jsonl
	run_nsd --db x.nsd --common=3 --on-error=fail more.jsonl
	[ "$status" -eq 5 ]
	record f1 "$FOOTER" >f.jsonl
	run_nsd --db x.nsd --common=3 --no-update f.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$(groups_of "$output")" "f1 s1"
	# The same run without the bad record does commit it.
	head -n 1 more.jsonl >good.jsonl
	"$NSDEDUP" --db x.nsd --common=3 good.jsonl >/dev/null
	run_nsd --db x.nsd --common=3 --no-update f.jsonl
	[ "$status" -eq 0 ]
	expect_eq "$(groups_of "$output")" "f1 f1"
}

@test "--min-match: one shared sentence of five is not a copy, two are" {
	record a "$(story 1 '')" >in.jsonl
	record b "$(line 1 1) $(line 2 1) $(line 2 2) $(line 2 3) $(line 2 4)" >>in.jsonl
	record c "$(line 1 1) $(line 1 2) $(line 3 1) $(line 3 2) $(line 3 3)" >>in.jsonl
	# Unconfirmed: c shares two of its five sentences with a, no more.
	run_nsd --common=0 --min-match=2 --confirm=0 in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$(groups_of "$output")" "$(printf 'a a\nb b\nc a')"
	run_nsd --common=0 --min-match=1 --confirm=0 in.jsonl
	[ "$status" -eq 0 ]
	expect_eq "$(groups_of "$output")" "$(printf 'a a\nb a\nc a')"
	run_nsd --common=0 --min-match=3 --confirm=0 in.jsonl
	[ "$status" -eq 0 ]
	expect_eq "$(groups_of "$output")" "$(printf 'a a\nb b\nc c')"
}

@test "--min-match: a record with fewer fingerprints needs all of them" {
	record a "$(story 1 '')" >in.jsonl
	record one "$(line 1 3)" >>in.jsonl
	record two "$(line 1 4) $(line 9 9)" >>in.jsonl
	run_nsd --common=0 --explain in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$(groups_of "$output")" "$(printf 'a a\none a\ntwo two')"
	[[ "${lines[1]}" == *'"matched":1,"fingerprints":1,"common":0,"exact":false,'* ]]
}

@test "sentences that look like code are passed over" {
	local script i
	script=$(printf '%s\\n' \
	    "window.ad_slot_1=(window.ad_slot_1||[]).concat([{client='ca-1',slot='1001'}]);" \
	    "window.ad_slot_2=(window.ad_slot_2||[]).concat([{client='ca-1',slot='1002'}]);" \
	    "window.ad_slot_3=(window.ad_slot_3||[]).concat([{client='ca-1',slot='1003'}]);" \
	    "window.ad_slot_4=(window.ad_slot_4||[]).concat([{client='ca-1',slot='1004'}]);" \
	    "window.ad_slot_5=(window.ad_slot_5||[]).concat([{client='ca-1',slot='1005'}]);")
	: >in.jsonl
	for i in 1 2 3; do
		record "s$i" "$(story "$i" "\\n$script")" >>in.jsonl
	done
	# Even with the reference's rules: the script is not fingerprinted.
	run_nsd --min-match=1 --common=0 --explain in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$(groups_of "$output")" "$(printf 's1 s1\ns2 s2\ns3 s3')"
	# With --compat it is, as the reference does.
	run_nsd --compat=nshash in.jsonl
	[ "$status" -eq 0 ]
	expect_eq "$(groups_of "$output")" "$(printf 's1 s1\ns2 s1\ns3 s1')"
}

@test "a text of nothing but code-like lines is compared as it is" {
	local prog
	prog=$(printf 'var_%s=(y||[]).concat([{id_%s=%s}]);\\n' 1 1 1 2 2 2 \
	    3 3 3 4 4 4 5 5 5)
	record a "$prog" >in.jsonl
	record b "$(story 2 '')" >>in.jsonl
	record c "$prog" >>in.jsonl
	run_nsd --explain in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$(groups_of "$output")" "$(printf 'a a\nb b\nc a')"
	[[ "${lines[2]}" == *'"matched":5,"fingerprints":5,"common":0,"exact":true}}' ]]
}

@test "--compat=nshash turns --min-match and --common off unless given" {
	local i j text
	# The reference splits at newlines, not after a full stop.
	: >in.jsonl
	for i in 1 2 3; do
		text=
		for j in 1 2 3 4 5; do
			text="$text$(line "$i" "$j")\\n"
		done
		record "s$i" "$text$FOOTER" >>in.jsonl
	done
	run_nsd --compat=nshash in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$(groups_of "$output")" "$(printf 's1 s1\ns2 s1\ns3 s1')"
	run_nsd --compat=nshash --min-match=2 in.jsonl
	[ "$status" -eq 0 ]
	expect_eq "$(groups_of "$output")" "$(printf 's1 s1\ns2 s2\ns3 s3')"
}

@test "--min-match and --common reject values out of range" {
	local v
	for v in 0 65 x ''; do
		run_nsd --min-match="$v" /dev/null
		[ "$status" -eq 2 ]
		[ -z "$output" ]
		[[ "$stderr" == "nsdedup: "*"min-match"* ]]
	done
	run_nsd --common=1 /dev/null
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	expect_eq "${stderr%%$'\n'*}" \
	    'nsdedup: --common must be 0 (off) or from 2 to 64'
	run_nsd --common=65 /dev/null
	[ "$status" -eq 2 ]
	[[ "$stderr" == "nsdedup: "*"common"* ]]
}
