#!/usr/bin/env bats
# Han folding, normalization version 3: a Chinese story converted between
# Simplified and Traditional characters, or into the forms of Taiwan or
# Hong Kong, is a copy, by every method; an index made with version 2
# keeps that version, and does not fold. (hanfold_test pins the folding
# of single characters and sentences.)

load helpers

: "${NSD_INDEX_DUMP:?run the tests through make check}"

# One story, in Simplified characters and converted to Traditional (as
# OpenCC's s2t does), to Taiwan's forms (s2tw) and to Hong Kong's (s2hk).
SIMPLIFIED='这个软体的开发团队说，网路连线问题已经解决了，用户不需要重新安装。他们表示，为了这个问题，工程师在实验室里面工作了整整三个星期，几乎没有休息。下一个版本将在明年春天发布，届时还会加入更多的安全功能和说明文件。'
TRADITIONAL='這個軟體的開發團隊說，網路連線問題已經解決了，用戶不需要重新安裝。他們表示，爲了這個問題，工程師在實驗室裏面工作了整整三個星期，幾乎沒有休息。下一個版本將在明年春天發佈，屆時還會加入更多的安全功能和說明文件。'
TAIWAN='這個軟體的開發團隊說，網路連線問題已經解決了，用戶不需要重新安裝。他們表示，為了這個問題，工程師在實驗室裡面工作了整整三個星期，幾乎沒有休息。下一個版本將在明年春天發佈，屆時還會加入更多的安全功能和說明文件。'
HONG_KONG='這個軟體的開發團隊説，網路連線問題已經解決了，用户不需要重新安裝。他們表示，為了這個問題，工程師在實驗室裏面工作了整整三個星期，幾乎沒有休息。下一個版本將在明年春天發佈，屆時還會加入更多的安全功能和説明文件。'

# The four, and another story, which nothing copies.
stories() {
	record s "$SIMPLIFIED"
	record t "$TRADITIONAL"
	record tw "$TAIWAN"
	record hk "$HONG_KONG"
	record other "今年全国粮食总产量再创历史新高，达到一万三千亿斤以上，比上年增长百分之一点三。专家表示，这得益于良种推广和农业机械化水平的持续提高。"
}

@test "a story in Traditional, Taiwan's or Hong Kong's forms is a copy of it in Simplified, by every method" {
	local m
	stories >in.jsonl
	for m in nshash simhash minhash; do
		run_nsd -m "$m" in.jsonl
		[ "$status" -eq 0 ] || { echo "$m: $stderr"; false; }
		[ -z "$stderr" ]
		expect_eq "$(groups_of "$output")" "$(printf '%s\n' 's s' \
		    't s' 'tw s' 'hk s' 'other other')"
	done
}

@test "the Simplified copy of a Traditional original names the original" {
	{
		record t "$TRADITIONAL"
		record s "$SIMPLIFIED"
	} >in.jsonl
	run_nsd in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$(groups_of "$output")" "$(printf '%s\n' 't t' 's t')"
}

@test "--drop-dups keeps the first of the four scripts, and the other story, unchanged" {
	stories >in.jsonl
	run_nsd --drop-dups in.jsonl
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	expect_eq "$output" "$(sed -n '1p;5p' in.jsonl)"
}

@test "an index made with normalization version 2 keeps it, and does not fold" {
	record s "$SIMPLIFIED" >s.jsonl
	record t "$TRADITIONAL" >t.jsonl
	# Made new: version 3, and the Traditional copy is found.
	new_index_finds s.jsonl t.jsonl s
	# Version 2 (its header field at offset 68 set back), every method:
	# the copy is another story there, and the index stays at 2.
	for m in nshash simhash minhash; do
		rm -f old.nsd*
		index_at_version old.nsd 2 s.jsonl -m "$m"
		run_nsd -m "$m" --db old.nsd t.jsonl
		[ "$status" -eq 0 ]
		[ -z "$stderr" ]
		[[ "$output" == *'"similar_id":"t","is_dup":false}' ]] ||
			{ echo "$m: $output"; false; }
		run_nsd --db old.nsd --db-info
		[[ "$output" == *", normalization 2"* ]]
		# A repeat of s is found there.
		run_nsd -m "$m" --db old.nsd --no-update s.jsonl
		[[ "$output" == *'"similar_id":"s","is_dup":true}' ]]
	done
}

@test "--version names the folding table: its size and checksum" {
	run_nsd --version
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ "${lines[2]}" =~ ^Han\ folding:\ [0-9]+\ characters\ from\ OpenCC\'s\ dictionaries,\ checksum\ [0-9a-f]{16}$ ]] ||
		{ echo "${lines[2]}"; false; }
}
