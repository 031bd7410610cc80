#!/usr/bin/env bats
# Grouping and annotation: similar_id, is_dup, modes, fields.

load helpers

# Three records: 1 and 3 share a long sentence, 2 is unrelated.
make_three() {
	{
		printf '{"id":"a","text":"%s. Unique tail one."}\n' "$(sentence 1)"
		printf '{"id":"b","text":"%s."}\n' "$(sentence 2)"
		printf '{"id":"c","text":"Reposted: %s. Another tail."}\n' "$(sentence 1)"
	} > in.jsonl
}

@test "annotate: originals name themselves, duplicates the first of their group" {
	make_three
	run_nsd in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 3 ]
	[[ "${lines[0]}" == *'"similar_id":"a","is_dup":false}' ]]
	[[ "${lines[1]}" == *'"similar_id":"b","is_dup":false}' ]]
	[[ "${lines[2]}" == *'"similar_id":"a","is_dup":true}' ]]
}

@test "annotate keeps every input byte and only splices" {
	printf '{ "id" : 7 , "text" : "%s" , "n" : [1, {"x":2}] }\n' "$(sentence 1)" > in.jsonl
	run_nsd in.jsonl
	[ "$status" -eq 0 ]
	expect_eq "$output" "{ \"id\" : 7 , \"text\" : \"$(sentence 1)\" , \"n\" : [1, {\"x\":2}],\"similar_id\":7,\"is_dup\":false }"
}

@test "an empty object gets the members without a leading comma" {
	printf '{"text":"x"}\n{}\n' > in.jsonl
	run_nsd -k text in.jsonl
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = '{"text":"x","similar_id":1,"is_dup":false}' ]
	[ "${lines[1]}" = '{}' ]
}

@test "ids are copied as the same JSON token: numbers stay numbers" {
	printf '{"id":12.50,"text":"%s"}\n{"id":"x\\"y","text":"%s"}\n' "$(sentence 1)" "$(sentence 1)" > in.jsonl
	run_nsd in.jsonl
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == *'"similar_id":12.50,"is_dup":false}' ]]
	[[ "${lines[1]}" == *'"similar_id":12.50,"is_dup":true}' ]]
}

@test "without ids, groups get numbers that never repeat" {
	{
		printf '{"text":"%s"}\n' "$(sentence 1)"
		printf '{"text":"%s"}\n' "$(sentence 2)"
		printf '{"text":"%s"}\n' "$(sentence 1)"
		printf '{"text":"%s"}\n' "$(sentence 3)"
	} > in.jsonl
	run_nsd in.jsonl
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == *'"similar_id":1,"is_dup":false}' ]]
	[[ "${lines[1]}" == *'"similar_id":2,"is_dup":false}' ]]
	[[ "${lines[2]}" == *'"similar_id":1,"is_dup":true}' ]]
	[[ "${lines[3]}" == *'"similar_id":3,"is_dup":false}' ]]
}

@test "an id that is not a string or number counts as absent" {
	printf '{"id":null,"text":"%s"}\n{"id":[1],"text":"%s"}\n' "$(sentence 1)" "$(sentence 2)" > in.jsonl
	run_nsd in.jsonl
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == *'"similar_id":1,"is_dup":false}' ]]
	[[ "${lines[1]}" == *'"similar_id":2,"is_dup":false}' ]]
}

@test "a record matching several groups joins the oldest" {
	# One shared sentence makes a match here (--min-match=1, --common=0), so that
	# each record can lead to several groups.
	{
		printf '{"id":"old","text":"%s."}\n' "$(sentence 1)"
		printf '{"id":"new","text":"%s."}\n' "$(sentence 2)"
		printf '{"id":"both","text":"%s. %s."}\n' "$(sentence 2)" "$(sentence 1)"
		printf '{"id":"later","text":"%s. %s."}\n' "$(sentence 2)" "$(sentence 9)"
		printf '{"id":"nine","text":"%s."}\n' "$(sentence 9)"
	} > in.jsonl
	run_nsd --min-match=1 --common=0 in.jsonl
	[ "$status" -eq 0 ]
	[[ "${lines[2]}" == *'"similar_id":"old","is_dup":true}' ]]
	# sentence 9 was first claimed by "later", which is in group "new".
	[[ "${lines[3]}" == *'"similar_id":"new","is_dup":true}' ]]
	[[ "${lines[4]}" == *'"similar_id":"new","is_dup":true}' ]]
}

@test "--drop-dups writes the originals unchanged" {
	make_three
	run_nsd --drop-dups in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "$(sed -n '1,2p' in.jsonl)"
	run_nsd -d in.jsonl
	expect_eq "$output" "$(sed -n '1,2p' in.jsonl)"
}

@test "--only-dups writes the duplicates, annotated" {
	make_three
	run_nsd --only-dups in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "${lines[0]}" == '{"id":"c",'*'"similar_id":"a","is_dup":true}' ]]
}

@test "an existing similar_id member is replaced in place, not added twice" {
	printf '{"similar_id":"stale","id":"a","is_dup":0,"text":"%s"}\n' "$(sentence 1)" > in.jsonl
	run_nsd in.jsonl
	[ "$status" -eq 0 ]
	expect_eq "$output" "{\"similar_id\":\"a\",\"id\":\"a\",\"is_dup\":false,\"text\":\"$(sentence 1)\"}"
}

@test "re-annotating annotated output changes nothing" {
	make_three
	"$NSDEDUP" in.jsonl > once.jsonl
	run_nsd once.jsonl
	[ "$status" -eq 0 ]
	expect_eq "$output" "$(cat once.jsonl)"
}

@test "--field-name and --dup-field rename the members; an empty --dup-field omits it" {
	make_three
	run_nsd --field-name=group --dup-field=copy in.jsonl
	[ "$status" -eq 0 ]
	[[ "${lines[2]}" == *'"group":"a","copy":true}' ]]
	run_nsd --dup-field= in.jsonl
	[ "$status" -eq 0 ]
	[[ "${lines[2]}" == *'"text":"Reposted: '*'","similar_id":"a"}' ]]
	run_nsd --field-name='we"ird' in.jsonl
	[[ "${lines[0]}" == *'"we\"ird":"a",'* ]]
}

@test "--id-field names the id, with a JSON Pointer too" {
	{
		printf '{"url":"u1","meta":{"n":5},"text":"%s"}\n' "$(sentence 1)"
		printf '{"url":"u2","meta":{"n":6},"text":"%s"}\n' "$(sentence 1)"
	} > in.jsonl
	run_nsd --id-field=url in.jsonl
	[ "$status" -eq 0 ]
	[[ "${lines[1]}" == *'"similar_id":"u1","is_dup":true}' ]]
	run_nsd --id-field=/meta/n in.jsonl
	[[ "${lines[1]}" == *'"similar_id":5,"is_dup":true}' ]]
}

@test "-k: a JSON Pointer, and several keys joined by a newline" {
	{
		printf '{"id":1,"body":{"parts":["x","%s"]}}\n' "$(sentence 1)"
		printf '{"id":2,"body":{"parts":["y","%s"]}}\n' "$(sentence 1)"
	} > in.jsonl
	run_nsd -k /body/parts/1 in.jsonl
	[ "$status" -eq 0 ]
	[[ "${lines[1]}" == *'"similar_id":1,"is_dup":true}' ]]
	{
		printf '{"id":1,"title":"%s","text":"short"}\n' "$(sentence 4)"
		printf '{"id":2,"title":"other","text":"%s"}\n' "$(sentence 4)"
	} > two.jsonl
	run_nsd -k title -k text two.jsonl
	[ "$status" -eq 0 ]
	[[ "${lines[1]}" == *'"similar_id":1,"is_dup":true}' ]]
	run_nsd two.jsonl
	[[ "${lines[1]}" == *'"similar_id":2,"is_dup":false}' ]]
}

@test "texts with nothing to compare are originals that match nothing" {
	printf '{"id":%d,"text":"%s"}\n' 1 "" 2 "" 3 "图片" 4 "图片" 5 "   " 6 "。。。！" > in.jsonl
	run_nsd --stats in.jsonl
	[ "$status" -eq 0 ]
	[ "$(grep -c '"is_dup":false' <<< "$output")" -eq 6 ]
	[[ "$stderr" == *"originals   6 (6 with nothing to compare)"* ]]
}

@test "escapes in the text are decoded before fingerprinting" {
	printf '{"id":1,"text":"caf\\u00e9 \\"quoted\\" sentence that is long enough to count"}\n' > in.jsonl
	printf '{"id":2,"text":"café \\"quoted\\" sentence that is long enough to count"}\n' >> in.jsonl
	run_nsd in.jsonl
	[ "$status" -eq 0 ]
	[[ "${lines[1]}" == *'"similar_id":1,"is_dup":true}' ]]
}

@test "normalization: full-width forms and white space do not matter" {
	printf '{"id":1,"text":"今年全国粮食总产量再创历史新高，达到一万三千亿斤以上，比上年增长。"}\n' > in.jsonl
	printf '{"id":2,"text":"转载：  今年全国粮食总产量再创历史新高,达到一万三千亿斤以上,比上年增长。\\r\\n"}\n' >> in.jsonl
	run_nsd in.jsonl
	[ "$status" -eq 0 ]
	[[ "${lines[1]}" == *'"similar_id":1,"is_dup":true}' ]]
}

@test "-n and --min-length change what is fingerprinted" {
	printf '{"id":1,"text":"A short line here. %s"}\n' "$(sentence 1)" > in.jsonl
	printf '{"id":2,"text":"A short line here. %s"}\n' "$(sentence 2)" >> in.jsonl
	run_nsd in.jsonl
	[[ "${lines[1]}" == *'"similar_id":2,"is_dup":false}' ]]
	run_nsd --min-length=10 -n 2 --min-match=1 in.jsonl
	[[ "${lines[1]}" == *'"similar_id":1,"is_dup":true}' ]]
}

@test "--stats reports the counts on stderr" {
	make_three
	printf '\n   \nnot json\n' >> in.jsonl
	run_nsd --stats in.jsonl
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"nsdedup: records     4"* ]]
	[[ "$stderr" == *"nsdedup: bytes       $(wc -c < in.jsonl)"* ]]
	[[ "$stderr" == *"nsdedup: originals   2 (0 with nothing to compare)"* ]]
	[[ "$stderr" == *"nsdedup: duplicates  1"* ]]
	[[ "$stderr" == *"nsdedup: bad         1"* ]]
	[[ "$stderr" == *"nsdedup: blank       2"* ]]
	[[ "$stderr" == *"nsdedup: throughput  "*" MB/s"* ]]
	# 2 fingerprints, and the keys of the 3 whole texts
	[[ "$stderr" == *"nsdedup: index       5 entries, 2 groups, "*" MiB of memory"* ]]
	[ "${#lines[@]}" -eq 4 ]
}

@test "the example corpus is annotated as expected" {
	run_nsd "$TOP_SRCDIR/examples/news.jsonl"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "$(cat "$TOP_SRCDIR/tests/data/news.annotated.jsonl")"
}

@test "groups continue across input files" {
	printf '{"id":"f1","text":"%s"}\n' "$(sentence 1)" > one.jsonl
	printf '{"id":"f2","text":"%s"}\n' "$(sentence 1)" > two.jsonl
	run_nsd one.jsonl two.jsonl
	[ "$status" -eq 0 ]
	[[ "${lines[1]}" == *'"similar_id":"f1","is_dup":true}' ]]
}
