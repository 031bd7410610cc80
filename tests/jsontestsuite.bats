#!/usr/bin/env bats
# JSONTestSuite through the whole program: each one-line file is wrapped as
# the value of a member of a record. y_ files must be annotated, n_ files
# passed through as bad records, i_ files must not crash it. (The scanner
# itself is checked on every file, multi-line ones too, by json_test.)

load helpers

# Wrap every one-line file of the given prefix into records.jsonl.
wrap() {
	local f
	: > records.jsonl
	: > names.txt
	for f in "$(suite_dir)"/"$1"_*.json; do
		# Files with line breaks or NULs cannot be one NDJSON line.
		if [ "$(tr -d '\n\r' < "$f" | wc -c)" -ne "$(wc -c < "$f")" ] ||
		    [ "$(tr -d '\0' < "$f" | wc -c)" -ne "$(wc -c < "$f")" ]; then
			continue
		fi
		{ printf '{"text":"x","v":'; cat "$f"; printf '}\n'; } >> records.jsonl
		basename "$f" >> names.txt
	done
}

@test "every one-line y_ file is accepted inside a record" {
	[ -d "$(suite_dir)" ] || skip "JSONTestSuite not found in NSD_SHARED_DATA"
	wrap y
	run_nsd records.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq "$(wc -l < names.txt)" ]
	[ "$(grep -c '"is_dup":' <<< "$output")" -eq "$(wc -l < names.txt)" ]
}

@test "every one-line n_ file is a bad record, passed through untouched" {
	[ -d "$(suite_dir)" ] || skip "JSONTestSuite not found in NSD_SHARED_DATA"
	wrap n
	run --separate-stderr bash -c '"$NSDEDUP" -q records.jsonl > out.jsonl'
	[ "$status" -eq 1 ]
	cmp records.jsonl out.jsonl
	run_nsd --stats -q records.jsonl
	[[ "$stderr" == *"nsdedup: bad         $(wc -l < names.txt)"* ]]
}

@test "no i_ file crashes it, and each comes out as one line" {
	[ -d "$(suite_dir)" ] || skip "JSONTestSuite not found in NSD_SHARED_DATA"
	wrap i
	run --separate-stderr bash -c '"$NSDEDUP" -q records.jsonl > out.jsonl'
	[ "$status" -le 1 ]
	[ "$(wc -l < out.jsonl)" -eq "$(wc -l < names.txt)" ]
}

@test "a top-level y_ object file is a record" {
	[ -d "$(suite_dir)" ] || skip "JSONTestSuite not found in NSD_SHARED_DATA"
	run_nsd -k asd "$(suite_dir)/y_object_basic.json"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "$output" = '{"asd":"sdf","similar_id":1,"is_dup":false}' ]
}
