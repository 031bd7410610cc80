#!/usr/bin/env bats
# --compat=nshash against an independent implementation of the reference
# rule (tests/nshash_oracle.py): on a small fixture always, and on the Sina
# news corpus when ../shared/data is there.

load helpers

# id <TAB> similar_id for every record of nsdedup's JSON output.
ids_of() {
	"$PYTHON3" -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    print(r["id"], r["similar_id"], sep="\t")'
}

compare_with_oracle() {
	"$NSDEDUP" --compat=nshash "$1" | ids_of > ours.txt
	"$PYTHON3" "$TOP_SRCDIR/tests/nshash_oracle.py" "$1" > oracle.txt
	[ "$(wc -l < oracle.txt)" -gt 0 ]
	diff -u oracle.txt ours.txt
}

@test "compat mode matches the reference rule on the fixture" {
	need python3
	compare_with_oracle "$TOP_SRCDIR/tests/data/compat.jsonl"
}

@test "compat mode keeps the reference's defects that the default fixes" {
	f="$TOP_SRCDIR/tests/data/compat.jsonl"
	run_nsd --compat=nshash -D "$f"
	[ "$status" -eq 0 ]
	# Two short, unrelated texts fall into one group under the reference...
	[[ "$output" == *'"id":"short-2"'*'"similar_id":"short-1"'* ]]
	run_nsd -D "$f"
	[ "$status" -eq 0 ]
	# ...but never by default.
	[[ "$output" != *'"id":"short-2"'* ]]
	# English sentence ends split only by default: en-2 shares one
	# sentence with en-1, which is a match when one is enough.
	run_nsd -D --min-match=1 "$f"
	[ "$status" -eq 0 ]
	[[ "$output" == *'"id":"en-2"'*'"similar_id":"en-1"'* ]]
}

@test "compat mode groups the Sina corpus exactly as the reference rule" {
	f="$NSD_SHARED_DATA/zh_sina_news_2018.jsonl.gz"
	[ -f "$f" ] || skip "zh_sina_news_2018.jsonl.gz not found in NSD_SHARED_DATA"
	need python3
	gzip -dc "$f" > sina.jsonl
	compare_with_oracle sina.jsonl
	# Not a vacuous match: the corpus has reposts in it.
	[ "$(awk -F'\t' '$1 != $2' ours.txt | wc -l)" -gt 100 ]
}
