/*
 * nsd-repost: make labelled near-copies of real documents, to measure how
 * well nsdedup finds reposts of real text.
 *
 * Input: NDJSON files (operands, "-" for standard input, or standard input
 * when there are none), one object a line with string members "id" and
 * "text" (the shared evaluation corpora, gunzipped by the caller).  A line
 * that is not a JSON object, has no string "text" or no string or number
 * "id", or whose id holds a tab or a line break, is skipped with a message
 * "nsd-repost: FILE:LINE: reason" on standard error.  So are, without a
 * message but counted by --verbose, texts of fewer than --min-length code
 * points and texts that, white space removed, are the same as an earlier
 * one's: the truth is then about the copies made here, not about the
 * corpora's own repeats.
 *
 * Output: --originals documents drawn from the eligible ones (all of them
 * by default) in a random order, each written as {"id":...,"text":...,
 * "lang":...}, lang being "en", "zh-Hans" or "zh-Hant" (Chinese when a
 * tenth of the code points are Han; Traditional when more characters of
 * the table below are in their traditional form than in their simplified
 * one).  Each original gets 0 to --max-copies copies, --copy-rate on
 * average.  A copy comes after its source, up to --max-gap originals
 * later, so copies of different sources interleave.  A copy's id is its
 * source's id followed by "#rN".  --truth FILE gets one line per copy:
 * copy id, source id and its edits, tab-separated, the edits joined by
 * commas in the order they were made.
 *
 * The edits.  A copy gets 1 to 3 different kinds, each what reposting
 * sites do, applied in this order:
 *
 *   drop-sentence  one sentence removed
 *   add-sentence   a sentence of a document that is no original (if there
 *                  is one in the input, else of another original) inserted
 *   reorder        two paragraphs swapped; with fewer than 3 paragraphs,
 *                  two blocks of consecutive sentences
 *   truncate       the tail cut at a sentence end, keeping 60% to 90%
 *   insert-ad      an advertising or navigation line between sentences
 *   char-edit      2 to 5 characters changed: typos in Latin words; in
 *                  Chinese, common characters swapped between their
 *                  simplified and traditional forms; sometimes an ASCII
 *                  letter or digit written full-width (or back)
 *   whitespace     line breaks and spaces changed: paragraphs spaced and
 *                  indented, paragraphs run together, lines hard-wrapped,
 *                  or spaces doubled
 *   source-prefix  a source line put first ("据新华社报道，", "(Reuters) - ")
 *   footer         an editor, copyright or original-title line appended
 *   html           wrapped in a <div class=...> of <p> paragraphs, or of
 *                  <br>-separated sentence blocks
 *
 * Touched copies.  With --touch SPEC[,SPEC...] each original gets exactly
 * one copy, changed by the touches named instead of by random edits, so
 * that every copy of a set is changed the same way and in every sentence.
 * --copy-rate and --max-copies are refused with it; --max-gap still places
 * the copies, and --boilerplate still adds the blocks.  The touches,
 * applied in this order whatever the order given:
 *
 *   words:P        in every sentence a share P of its words replaced, at
 *                  least one: in English a word (ASCII letters, with
 *                  apostrophes inside) by a word of another English text of
 *                  the input, cased as the one replaced; in Chinese a span
 *                  of two Han characters by two others that stand together
 *                  in a text of the same script
 *   chars:P        in every sentence a share P of its letters replaced, at
 *                  least one: in Chinese a Han character by another common
 *                  one of the text's script, in English an ASCII letter by
 *                  another of the same case; never white space, punctuation
 *                  or digits
 *   paragraphs     the paragraphs in a random order other than their own;
 *                  with fewer than 3 paragraphs, 2 to 5 blocks of
 *                  consecutive sentences (in English a paragraph ends at
 *                  a blank or indented line only, never inside a sentence
 *                  as a reorder's may)
 *
 * A share is rounded up or down at random, so that it holds on average
 * before the one per sentence, which raises it in short sentences.  A
 * sentence with no letter (or no word, or no two Han characters in a row)
 * is left as it is, and so is the order of a text of one sentence.  Words
 * go first so that a word replaced cannot undo a letter changed.  The
 * truth file gives the touches as the edits, in that order and with P as
 * %g prints it ("words:0.05,chars:0.02").  They draw from a PRNG of their
 * own: sets made with other touches and the same seed have the same
 * originals in the same order, and their copies at the same places.
 *
 * Sentences end at 。！？；, at . ! ? ; before white space, and at line
 * breaks (in English, where texts are often hard-wrapped, at the end of a
 * paragraph: a blank line or an indented line), with any closing quote and
 * the white space after them.  A paragraph of hard-wrapped text ends
 * there too, so a reorder moves paragraphs, not wrapped lines.
 *
 * Hard negatives.  With --boilerplate-rate R, each original is given with
 * probability R the block of one of three "sites" of its language, which
 * unrelated documents then share: with --boilerplate footer a disclaimer
 * of several long sentences appended, with --boilerplate script a leaked
 * snippet of minified JavaScript and CSS (one line of several hundred
 * characters, the same for every language) put first or last.  A copy
 * carries its source's block at the same place.  Which originals get a
 * block and from which site is drawn from a PRNG of its own, so a set made
 * with a block differs from the one made without only by the blocks.
 *
 * Look-alikes.  With --negatives, the originals are followed by
 * look-alikes in place of copies, as many and placed as copies are (0 to
 * --max-copies, --copy-rate on average, up to --max-gap originals later):
 * each is a different article that shares something with an earlier
 * original, so that a match of one is a false positive, a unique article
 * that --drop-dups would lose.  Each is made from a document of the input
 * of the same language (English or Chinese) that is no original and
 * goes to no other look-alike, so that no two records hold the same
 * text; its id is that document's followed by "#nN", and --truth FILE
 * gets "look-alike-id TAB original-id TAB kind" lines.  The originals are
 * those the same seed and --originals draw without --negatives (so it
 * wants fewer originals than eligible documents; a look-alike with no
 * document left is not made).  The kinds, one drawn for each:
 *
 *   background     2 to 4 consecutive sentences of the original inserted
 *                  as a paragraph between two sentences of the other
 *                  document, as news stories repeat background paragraphs
 *   quote          the other document preceded by a passage of the
 *                  original quoted as a Usenet or mail reply quotes it:
 *                  an attribution line ("In article <...>, NAME writes:",
 *                  or its Chinese form), the passage's 2 to 4 sentences
 *                  with "> " before each of their lines, a blank line
 *   template       the original itself with each run of ASCII digits
 *                  replaced by another random run of the same length and,
 *                  in English, each capitalised word that begins no
 *                  sentence (names, mostly) by one of the other
 *                  document's, the same word always by the same one: the
 *                  same template, about other people and other figures
 *
 * An original with no digit and no such name makes a background in
 * place of a template, which would be a copy.  A look-alike's lang is the
 * other document's, the original's for a template.  --touch and
 * --boilerplate-rate are refused with --negatives.
 *
 * The output depends only on the input, the seed and the options (the
 * PRNG is splitmix64).  Memory holds every eligible document.
 *
 * Exit status: 0 on success, 1 when some input lines were skipped as bad
 * (the output is complete otherwise), 2 on a usage error, 3 when an input
 * or the truth file cannot be opened or an output cannot be written.
 */

#include "config.h"

#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

#include "benchlib.h"
#include "json.h"
#include "utf8.h"
#include "util.h"

#define NELEMS(a)	(sizeof(a) / sizeof((a)[0]))
#define MAX_MESSAGES	20	/* bad-line messages before a count */
#define EXIT_BADLINES	1
#define EXIT_USAGE	2
#define EXIT_IO		3

enum lang {
	LANG_EN,
	LANG_HANS,
	LANG_HANT
};

static const char *const lang_names[] = { "en", "zh-Hans", "zh-Hant" };

/* The edit kinds, in the order they are applied. */
enum edit {
	E_DROP,
	E_ADD,
	E_REORDER,
	E_TRUNCATE,
	E_AD,
	E_CHAR,
	E_SPACE,
	E_PREFIX,
	E_FOOTER,
	E_HTML,
	E_COUNT
};

static const char *const edit_names[E_COUNT] = {
	"drop-sentence", "add-sentence", "reorder", "truncate", "insert-ad",
	"char-edit", "whitespace", "source-prefix", "footer", "html"
};

/* What each edit does, for --help. */
static const char *const edit_help[E_COUNT] = {
	"one sentence removed",
	"a sentence of another document inserted",
	"two paragraphs (or blocks of sentences) swapped",
	"the tail cut at a sentence end, 60% to 90% kept",
	"an advertising or navigation line inserted",
	"2 to 5 characters changed: Latin typos, simplified/\n"
	"                  traditional swaps, full-width/half-width swaps",
	"line breaks and spaces changed",
	"a source line put first",
	"an editor, copyright or original-title line appended",
	"wrapped in a <div> of <p> paragraphs or <br> blocks"
};

/* The touches of --touch, in the order they are applied. */
enum touch {
	T_WORDS,
	T_CHARS,
	T_PARAS,
	T_COUNT
};

static const char *const touch_names[T_COUNT] = {
	"words", "chars", "paragraphs"
};

/* What each touch does, for --help. */
static const char *const touch_help[T_COUNT] = {
	"in each sentence a share P of its words, at least one,\n"
	"                  replaced by words of other texts of the input (in\n"
	"                  Chinese: two Han characters in a row by two others)",
	"in each sentence a share P of its letters, at least one,\n"
	"                  replaced: Han characters in Chinese, ASCII letters\n"
	"                  in English (never spaces, punctuation or digits)",
	"the paragraphs in another order; with fewer than 3,\n"
	"                  blocks of consecutive sentences"
};

enum boilerplate {
	BP_NONE,
	BP_FOOTER,
	BP_SCRIPT
};

struct doc {
	char		*id;
	size_t		 idlen;
	char		*text;
	size_t		 len;
	enum lang	 lang;
	int		 chosen;	/* 1: an original, 2: a look-alike's */
	int		 site;		/* boilerplate block, or -1 */
};

/* A span [start, end) of a text. */
struct span {
	size_t	 start;
	size_t	 end;
};

struct spans {
	struct span	*v;
	size_t		 n;
	size_t		 cap;
};

/* A copy waiting for its place in the stream. */
struct pending {
	size_t		 due;		/* emitted after this original */
	char		*id;
	struct nsd_buf	 text;
	enum lang	 lang;
	char		 edits[160];
	unsigned	 mask;		/* 1 << enum edit, for each edit; */
					/* 1 << enum kind, a look-alike's */
	size_t		 src;
};

struct options {
	uint64_t	 seed;
	size_t		 originals;	/* 0: all */
	double		 copy_rate;
	unsigned	 max_copies;
	unsigned	 max_gap;
	size_t		 min_length;
	double		 bp_rate;
	enum boilerplate bp_kind;
	const char	*truth;
	int		 verbose;
	double		 touch[T_COUNT];	/* share P, 1 for paragraphs */
	int		 touched;	/* --touch given */
	int		 negatives;	/* --negatives */
	int		 rate_given;	/* --copy-rate or --max-copies */
	char		 touch_spec[96];	/* for the truth file */
};

/* What the touches changed, for --verbose. */
struct touch_stats {
	size_t	 sentences[T_COUNT];	/* with something to change */
	size_t	 units[T_COUNT];	/* words or letters in them */
	size_t	 changed[T_COUNT];	/* of them, replaced */
	size_t	 reordered;	/* copies whose units moved */
	size_t	 by_blocks;	/* of them, blocks of sentences */
};

static const char *progname = "nsd-repost";
static struct bench_rng rng;		/* the originals and the edits */
static struct bench_rng bp_rng;		/* boilerplate */
static struct bench_rng touch_rng;	/* the touches */

/* Simplified and traditional forms of common characters, pair by pair. */
static const char st_pairs[] =
    "国國" "说說" "这這" "时時" "会會" "为為" "对對" "发發" "经經" "们們"
    "个個" "来來" "还還" "进進" "过過" "动動" "现現" "实實" "关關" "长長"
    "东東" "门門" "问問" "间間" "开開" "学學" "车車" "书書" "电電" "话話"
    "语語" "认認" "让讓" "记記" "业業" "员員" "场場" "报報" "网網" "华華"
    "体體" "万萬" "与與" "总總" "线線" "结結" "给給" "应應" "单單" "买買"
    "卖賣" "马馬" "见見" "观觀" "视視" "亲親" "历歷" "战戰" "机機" "从從"
    "众眾" "广廣" "产產" "区區" "医醫" "办辦" "务務" "条條" "级級" "组組"
    "织織" "统統" "续續" "转轉" "运運" "达達" "选選" "边邊" "岁歲" "乐樂"
    "们們" "将將" "没沒" "钱錢" "银銀" "读讀" "写寫" "听聽" "热熱" "飞飛";

/* Common characters for a Chinese typo where no pair applies. */
static const char han_common[] =
    "的一是在不了有和人中大上我以要他到作地于出就分成可主年同工也能下"
    "子产种面而方多定行法所民得十三之着等部度家力里如水化高自二理起小";

/*
 * Common characters written the same in both scripts: with the table
 * above's column of a text's script, what chars:P puts in its place.
 */
static const char han_shared[] =
    "的一是在不了有和人中大上我以要他到作地出就分成可主年同工也能下子"
    "面而方多定行法所民得十三之等部度家力如水化高自二理起小日月山天心"
    "手口目生用事公外本文今明正又已其此意";

static uint32_t *st_simp, *st_trad;
static size_t st_n;
static uint32_t *han_cps;
static size_t han_n;
static uint32_t *han_pool[2];	/* Simplified, Traditional */
static size_t han_pool_n[2];

/* Source lines to put first, by language. */
static const char *const prefixes[3][5] = {
	{ "(Reuters) - ", "By staff writers. ", "LONDON (AP) - ",
	  "From our correspondent.\n", "Reposted from the wire service.\n" },
	{ "据新华社报道，", "来源：人民网 ", "（中国新闻网讯）",
	  "新浪体育讯　", "本报讯\n" },
	{ "（中央社電）", "來源：明報 ", "【本報訊】", "據香港電台報道，",
	  "綜合報道\n" }
};

/* Footers, by language; %T is a piece of the text's start. */
static const char *const footers[3][5] = {
	{ "Copyright 2018 The Daily Courier. All rights reserved.",
	  "Reporting by John Smith; Editing by Jane Doe",
	  "This story was first published as \"%T\".",
	  "(c) 2018 Example News Service. May not be republished.",
	  "Additional reporting by our staff." },
	{ "责任编辑：张三", "（原标题：%T）", "本文来源：新华网　作者：李明",
	  "（编辑：王小明　校对：刘芳）", "【版权声明：转载请注明出处】" },
	{ "責任編輯：陳大文", "（原標題：%T）", "（本文獲授權轉載）",
	  "編輯：李小華", "【版權所有，未經授權不得轉載】" }
};

/* Advertising and navigation lines, by language. */
static const char *const ads[3][5] = {
	{ "Advertisement", "Click here to subscribe to our newsletter.",
	  "Related: Top stories of the week", "Continue reading below",
	  "Share this article on Facebook and Twitter" },
	{ "【扫码下载新浪新闻客户端，看更多精彩内容】", "相关阅读：",
	  "点击进入专题：2018年度热点回顾", "广告",
	  "更多精彩内容请关注公众号" },
	{ "【廣告】", "相關報道：", "按此訂閱電子報", "延伸閱讀",
	  "請支持獨立媒體，按此贊助" }
};

/* Site footers for --boilerplate footer: English, then Chinese. */
static const char *const bp_footers[2][3] = {
	{ "Disclaimer: the views and opinions expressed in this article "
	  "are those of the authors and do not necessarily reflect the "
	  "official policy or position of the publisher, its editors, its "
	  "advertisers or any of its affiliated companies and partners. "
	  "Any content provided by our contributors or syndication partners "
	  "is of their opinion and is not intended to malign any religion, "
	  "ethnic group, club, organization, company, individual or anyone "
	  "or anything at all. All material on this site is protected by "
	  "copyright and may not be reproduced, distributed, transmitted, "
	  "cached or otherwise used, except with the prior written "
	  "permission of the publisher and its licensors.",
	  "About this site: we publish news from around the world every day "
	  "of the year, and we rely on readers like you to keep our "
	  "independent journalism free of charge for everyone who needs it. "
	  "If you would like to support our newsroom, please consider "
	  "becoming a member today, which takes less than a minute and "
	  "helps us to keep reporting on the stories that matter most to "
	  "you and your community. Letters to the editor, corrections and "
	  "story tips can be sent to our newsroom by post or by electronic "
	  "mail, and every message is read by a member of our editorial "
	  "team before the end of the next working day.",
	  "Terms of use: by continuing to use this website you agree to the "
	  "collection and use of cookies and similar technologies by us and "
	  "our advertising partners for analytics, personalisation and the "
	  "measurement of advertising, as described in our privacy policy "
	  "and cookie statement. You may withdraw your consent at any time "
	  "by changing the settings of your browser or by visiting the "
	  "privacy centre linked at the bottom of every page, although some "
	  "parts of the website may then no longer work as intended for "
	  "you." },
	{ "免责声明：本网站所刊载的所有新闻、图片、音视频及其他信息，凡注明"
	  "来源为本网的，版权均归本网所有，未经书面授权任何单位和个人不得以"
	  "任何方式转载、摘编或以其他方式使用，违者本网将依法追究其法律责任"
	  "。凡本网注明来源为其他媒体的稿件，均为转载自其他媒体，转载目的在"
	  "于传递更多信息，并不代表本网赞同其观点和对其真实性负责，读者如需"
	  "使用请与原作者联系。如因作品内容、版权和其他问题需要同本网联系的"
	  "，请在作品发表之日起三十日内通过电子邮件与本网编辑部取得联系，逾"
	  "期本网将视为不再主张相关权利。",
	  "关于我们：本站致力于为广大读者提供及时、准确、全面的新闻资讯服务"
	  "，内容涵盖时政、财经、科技、体育、娱乐、教育、健康等多个领域，欢"
	  "迎各界朋友通过页面底部的联系方式与我们合作。本站违法和不良信息举"
	  "报电话与电子邮箱均在页面底部列出，欢迎广大读者和网友对本站的新闻"
	  "报道进行监督，我们将在核实之后的第一时间予以处理并及时反馈处理结"
	  "果。下载本站客户端可以随时随地阅读更多新闻资讯，参与话题讨论，并"
	  "可第一时间收到重大新闻的推送通知和每日精选内容。",
	  "版權聲明：本網站所有文章、圖片及影音內容之著作權均屬本網站或原作"
	  "者所有，除依著作權法之合理使用外，未經本網站書面同意，任何人不得"
	  "以任何形式重製、轉載、改作、散布或作其他任何利用。本網站所載之評"
	  "論文章僅代表作者個人意見，並不代表本網站立場，讀者如對內容有任何"
	  "意見或查詢，歡迎透過電郵與編輯部聯絡，我們會在五個工作天內盡快回"
	  "覆。如欲支持本網站繼續以獨立方式營運並免費提供新聞內容，歡迎按此"
	  "成為我們的定期贊助人，您的每一分支持都十分重要。" }
};

/* Leaked ad snippets for --boilerplate script, the same for every text. */
static const char *const bp_scripts[3] = {
	"(function(w,d){var a=d.createElement(\"script\");a.async=true;"
	"a.src=\"//cdn.adnet-example.com/tag/v3/loader.min.js?pid=48213&"
	"slot=article_inline_1&fmt=300x250\";var s=d.getElementsByTagName("
	"\"script\")[0];s.parentNode.insertBefore(a,s);w.__adq=w.__adq||[];"
	"w.__adq.push([\"init\",\"48213\"],[\"track\",\"pageview\"],"
	"[\"refresh\",30000]);})(window,document);.ad-slot-inline{display:"
	"block;margin:12px auto;width:300px;height:250px;background:#f4f4f4;"
	"border:1px solid #e0e0e0}.ad-slot-inline .ad-label{font-size:11px;"
	"color:#999;text-align:right}",
	"var _hmt=_hmt||[];(function(){var hm=document.createElement("
	"\"script\");hm.src=\"//stats.example.cn/hm.js?5f2c1e8a9b7d6c4e3f2a1b"
	"0c9d8e7f6a\";var s=document.getElementsByTagName(\"script\")[0];"
	"s.parentNode.insertBefore(hm,s);})();window.sinaads=window.sinaads||"
	"[];window.sinaads.push({element:document.getElementById(\"ad_"
	"46010\"),params:{sinaads_ad_width:640,sinaads_ad_height:90,"
	"sinaads_frequence:3}});#ad_46010{width:640px;height:90px;overflow:"
	"hidden;clear:both}#ad_46010 iframe{border:0;vertical-align:top}",
	"window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push("
	"arguments)}gtag(\"js\",new Date());gtag(\"config\",\"UA-1234567-8\","
	"{anonymize_ip:true});(function(){var e=document.querySelectorAll("
	"\".share-bar a\");for(var i=0;i<e.length;i++){e[i].addEventListener("
	"\"click\",function(ev){ev.preventDefault();window.open(this.href,"
	"\"share\",\"width=600,height=400\")})}})();.share-bar{position:"
	"sticky;top:0;z-index:99}.share-bar a{display:inline-block;padding:"
	"4px 8px;margin-right:6px;border-radius:3px;background:#3b5998;"
	"color:#fff}"
};

/* --- Randomness (benchlib.h) ------------------------------------------ */

static size_t
rng_below(size_t n)
{
	return ((size_t)bench_rng_below(&rng, n));
}

static double
rng_unit(void)
{
	return (bench_rng_unit(&rng));
}

/* The same two from the touches' own stream. */
static size_t
touch_below(size_t n)
{
	return ((size_t)bench_rng_below(&touch_rng, n));
}

static double
touch_unit(void)
{
	return (bench_rng_unit(&touch_rng));
}

/* --- UTF-8 and character classes --------------------------------------- */

/* The code point at p (valid UTF-8) and its length in *n. */
static uint32_t
cp_at(const char *s, size_t len, size_t i, size_t *n)
{
	const unsigned char *p = (const unsigned char *)s + i;
	size_t k = nsd_utf8_seqlen(p, len - i);

	if (k == 0) {
		*n = 1;
		return (0xFFFD);
	}
	*n = k;
	switch (k) {
	case 1:
		return (p[0]);
	case 2:
		return ((uint32_t)(p[0] & 0x1F) << 6 | (p[1] & 0x3F));
	case 3:
		return ((uint32_t)(p[0] & 0x0F) << 12 |
		    (uint32_t)(p[1] & 0x3F) << 6 | (p[2] & 0x3F));
	default:
		return ((uint32_t)(p[0] & 0x07) << 18 |
		    (uint32_t)(p[1] & 0x3F) << 12 |
		    (uint32_t)(p[2] & 0x3F) << 6 | (p[3] & 0x3F));
	}
}

/* Start of the character that holds byte i. */
static size_t
char_start(const char *s, size_t i)
{
	while (i > 0 && ((unsigned char)s[i] & 0xC0) == 0x80)
		i--;
	return (i);
}

static int
is_han(uint32_t c)
{
	return ((c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
	    (c >= 0xF900 && c <= 0xFAFF));
}

/* White space as the exact-duplicate test counts it. */
static int
is_space(uint32_t c)
{
	return (c == ' ' || (c >= '\t' && c <= '\r') || c == 0x85 ||
	    c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
	    c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
	    c == 0x3000);
}

/* ASCII white space, for byte-wise scans (0x85 and 0xA0 are no bytes). */
static int
is_blank(char c)
{
	return (c == ' ' || (c >= '\t' && c <= '\r'));
}

static int
is_alpha(uint32_t c)
{
	return ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
}

/* Decode a UTF-8 string into a fresh array of code points. */
static uint32_t *
cps_of(const char *s, size_t *n)
{
	size_t len = strlen(s), i, k;
	uint32_t *v = xreallocarray(NULL, len + 1, sizeof *v);

	for (i = 0, *n = 0; i < len; i += k)
		v[(*n)++] = cp_at(s, len, i, &k);
	return (v);
}

static void
tables_init(void)
{
	uint32_t *all;
	size_t n, i;

	all = cps_of(st_pairs, &n);
	st_n = n / 2;
	st_simp = xreallocarray(NULL, st_n, sizeof *st_simp);
	st_trad = xreallocarray(NULL, st_n, sizeof *st_trad);
	for (i = 0; i < st_n; i++) {
		st_simp[i] = all[2 * i];
		st_trad[i] = all[2 * i + 1];
	}
	free(all);
	han_cps = cps_of(han_common, &han_n);
	/* The shared characters, then the script's own column. */
	for (i = 0; i < 2; i++) {
		all = cps_of(han_shared, &n);
		han_pool[i] = xreallocarray(all, n + st_n, sizeof *all);
		memcpy(han_pool[i] + n, i == 0 ? st_simp : st_trad,
		    st_n * sizeof *all);
		han_pool_n[i] = n + st_n;
	}
}

/* Index of c in table v[0..n), or -1. */
static ssize_t
table_find(const uint32_t *v, size_t n, uint32_t c)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i] == c)
			return ((ssize_t)i);
	return (-1);
}

/* English, or Chinese in one of its two scripts, as the header says. */
static enum lang
detect_lang(const char *s, size_t len)
{
	size_t i, k, cps = 0, han = 0, simp = 0, trad = 0;
	uint32_t c;

	for (i = 0; i < len; i += k) {
		c = cp_at(s, len, i, &k);
		cps++;
		if (!is_han(c))
			continue;
		han++;
		if (table_find(st_simp, st_n, c) >= 0)
			simp++;
		else if (table_find(st_trad, st_n, c) >= 0)
			trad++;
	}
	if (han * 10 < cps)
		return (LANG_EN);
	return (trad > simp ? LANG_HANT : LANG_HANS);
}

/* --- Text pieces ------------------------------------------------------- */

static void
spans_add(struct spans *sp, size_t start, size_t end)
{
	if (sp->n == sp->cap) {
		sp->cap = sp->cap ? 2 * sp->cap : 64;
		sp->v = xreallocarray(sp->v, sp->cap, sizeof *sp->v);
	}
	sp->v[sp->n].start = start;
	sp->v[sp->n].end = end;
	sp->n++;
}

static int
is_close_quote(uint32_t c)
{
	return (c == '"' || c == '\'' || c == ')' || c == 0x201D ||
	    c == 0x2019 || c == 0x300D || c == 0x300F || c == 0xFF09);
}

/*
 * Whether the line break at s[i] ends a paragraph of hard-wrapped text:
 * a blank line follows, or a line indented by a tab or two spaces.
 */
static int
paragraph_break(const char *s, size_t len, size_t i)
{
	size_t	 j, indent = 0;

	for (j = i + 1; j < len; j++) {
		if (s[j] == '\n')
			return (1);
		if (s[j] == '\t')
			indent += 2;
		else if (s[j] == ' ')
			indent++;
		else if (s[j] != '\r')
			break;
	}
	return (j < len && indent >= 2);
}

/*
 * Split s into sentences that cover it: each ends after its end mark, any
 * closing quotes and the white space that follows.  A line break ends a
 * sentence in Chinese; in English only the end of a paragraph does (a
 * blank line, or an indented line).
 */
static void
split_sentences(const char *s, size_t len, enum lang lang, struct spans *sp)
{
	size_t i = 0, k, k2, start = 0;
	uint32_t c, next;
	int end;

	sp->n = 0;
	while (i < len) {
		c = cp_at(s, len, i, &k);
		end = 0;
		if (c == 0x3002 || c == 0xFF01 || c == 0xFF1F || c == 0xFF1B)
			end = 1;
		else if (c == '\n' && lang != LANG_EN)
			end = 1;
		else if (c == '\n')	/* English is often hard-wrapped */
			end = paragraph_break(s, len, i);
		else if (c == '.' || c == '!' || c == '?' || c == ';') {
			next = i + k < len ? cp_at(s, len, i + k, &k2) : ' ';
			end = is_space(next) || is_close_quote(next);
		}
		i += k;
		if (!end)
			continue;
		while (i < len) {
			c = cp_at(s, len, i, &k);
			if (!is_close_quote(c) && !is_space(c))
				break;
			i += k;
		}
		spans_add(sp, start, i);
		start = i;
	}
	if (start < len)
		spans_add(sp, start, len);
}

/*
 * Split s into paragraphs, each with the line breaks after it: at blank
 * lines and indented lines (hard-wrapped text: Reuters indents its
 * paragraphs, Usenet leaves a blank line) when there are at least 3 such
 * paragraphs, else, when lines is set, at line breaks.
 */
static void
split_paragraphs(const char *s, size_t len, struct spans *sp, int lines)
{
	size_t i, j, start;
	int pass;

	for (pass = 0; pass < (lines ? 2 : 1); pass++) {
		sp->n = 0;
		start = 0;
		for (i = 0; i < len; i = j) {
			j = i + 1;
			if (s[i] != '\n')
				continue;
			while (j < len && (s[j] == '\n' || s[j] == ' ' ||
			    s[j] == '\t' || s[j] == '\r'))
				j++;
			if (pass == 0 && !paragraph_break(s, len, i))
				continue;
			if (j < len) {
				spans_add(sp, start, j);
				start = j;
			}
		}
		if (start < len)
			spans_add(sp, start, len);
		if (sp->n >= 3)
			return;
	}
}

/* Replace bytes [a, b) of t with r[0..rlen). */
static void
splice(struct nsd_buf *t, size_t a, size_t b, const char *r, size_t rlen)
{
	if (rlen > b - a)
		nsd_buf_reserve(t, rlen - (b - a));
	memmove(t->data + a + rlen, t->data + b, t->len - b);
	memcpy(t->data + a, r, rlen);
	t->len = t->len - (b - a) + rlen;
}

static void
buf_puts(struct nsd_buf *b, const char *s)
{
	nsd_buf_append(b, s, strlen(s));
}

/* Code points of s[0..len). */
static size_t
count_cps(const char *s, size_t len)
{
	return (nsd_utf8_count(s, len));
}

/* Drop white space at the end of t. */
static void
trim_end(struct nsd_buf *t)
{
	size_t i, k;

	while (t->len > 0) {
		i = char_start(t->data, t->len - 1);
		if (!is_space(cp_at(t->data, t->len, i, &k)))
			break;
		t->len = i;
	}
}

/* --- The edits --------------------------------------------------------- */

/* Sentences of at least min code points, as indexes into sp. */
static size_t
pick_sentence(const char *s, const struct spans *sp, size_t min)
{
	size_t tries, i;

	for (tries = 0; tries < 20; tries++) {
		i = rng_below(sp->n);
		if (count_cps(s + sp->v[i].start, sp->v[i].end -
		    sp->v[i].start) >= min)
			return (i);
	}
	return (rng_below(sp->n));
}

/* Remove one sentence, keeping the line breaks after it. */
static void
edit_drop(struct nsd_buf *t, struct spans *sp, enum lang lang)
{
	size_t i, a, b;

	split_sentences(t->data, t->len, lang, sp);
	if (sp->n < 2) {
		/* One sentence: drop its second fifth. */
		a = char_start(t->data, t->len / 5);
		b = char_start(t->data, 2 * t->len / 5);
		splice(t, a, b, "", 0);
		return;
	}
	i = pick_sentence(t->data, sp, 10);
	a = sp->v[i].start;
	b = sp->v[i].end;
	if (memchr(t->data + a, '\n', b - a) != NULL)
		while (b > a && is_blank(t->data[b - 1]))
			b--;
	splice(t, a, b, "", 0);
}

/* Insert s[0..len) at a sentence boundary of t, as a line when asked. */
static void
insert_between(struct nsd_buf *t, struct spans *sp, const char *s,
    size_t len, int as_line, enum lang lang)
{
	struct nsd_buf ins = { NULL, 0, 0 };
	size_t at;

	split_sentences(t->data, t->len, lang, sp);
	at = sp->n > 1 ? sp->v[1 + rng_below(sp->n - 1)].start : t->len;
	if (as_line) {
		if (at > 0 && t->data[at - 1] != '\n')
			nsd_buf_putc(&ins, '\n');
		nsd_buf_append(&ins, s, len);
		nsd_buf_putc(&ins, '\n');
	} else {
		if (lang == LANG_EN && at > 0 &&
		    !is_blank(t->data[at - 1]))
			nsd_buf_putc(&ins, ' ');
		nsd_buf_append(&ins, s, len);
		if (lang == LANG_EN)
			nsd_buf_putc(&ins, ' ');
	}
	splice(t, at, at, ins.data, ins.len);
	nsd_buf_free(&ins);
}

/* Insert a sentence of other, white space trimmed. */
static void
edit_add(struct nsd_buf *t, struct spans *sp, const struct doc *other,
    enum lang lang)
{
	struct spans osp = { NULL, 0, 0 };
	size_t i, a, b;

	split_sentences(other->text, other->len, other->lang, &osp);
	if (osp.n == 0) {
		free(osp.v);
		return;
	}
	i = pick_sentence(other->text, &osp, 15);
	a = osp.v[i].start;
	b = osp.v[i].end;
	free(osp.v);
	while (b > a && is_blank(other->text[b - 1]))
		b--;
	while (a < b && is_blank(other->text[a]))
		a++;
	insert_between(t, sp, other->text + a, b - a, 0, lang);
}

/*
 * Merge the sentences of sp into at most nb blocks of consecutive ones
 * (0 < nb), each but the last of the same number of sentences.
 */
static void
merge_blocks(struct spans *sp, size_t nb)
{
	size_t i, k, per;

	if (nb > sp->n)
		nb = sp->n;
	per = (sp->n + nb - 1) / nb;
	for (i = 0, k = 0; i < sp->n; i += per, k++) {
		sp->v[k].start = sp->v[i].start;
		sp->v[k].end = sp->v[i + per < sp->n ? i + per - 1 :
		    sp->n - 1].end;
	}
	sp->n = k;
}

/*
 * Rewrite t, which the units of sp cover, as those units in the order
 * ord (paragraphs when paras is set, else blocks of sentences).
 */
static void
put_in_order(struct nsd_buf *t, const struct spans *sp, const size_t *ord,
    int paras, enum lang lang)
{
	struct nsd_buf out = { NULL, 0, 0 };
	size_t k;

	for (k = 0; k < sp->n; k++) {
		const struct span *s = &sp->v[ord[k]];

		nsd_buf_append(&out, t->data + s->start, s->end - s->start);
		/* A unit that did not end the text may have no separator. */
		if (k + 1 < sp->n && s->end == t->len && out.len > 0 &&
		    !is_blank(out.data[out.len - 1])) {
			if (paras)
				nsd_buf_putc(&out, '\n');
			else if (lang == LANG_EN)
				nsd_buf_putc(&out, ' ');
		}
	}
	t->len = 0;
	nsd_buf_append(t, out.data, out.len);
	trim_end(t);
	nsd_buf_free(&out);
}

/*
 * Swap two paragraphs, or with fewer than 3 two blocks of consecutive
 * sentences (2 to 4 blocks).
 */
static void
edit_reorder(struct nsd_buf *t, struct spans *sp, enum lang lang)
{
	size_t *ord, n, i, j, k;
	int paras;

	split_paragraphs(t->data, t->len, sp, 1);
	paras = sp->n >= 3;
	if (!paras) {
		split_sentences(t->data, t->len, lang, sp);
		if (sp->n < 2)
			return;
		merge_blocks(sp, 2 + rng_below(3));
	}
	n = sp->n;
	if (n < 2)
		return;
	i = rng_below(n);
	do
		j = rng_below(n);
	while (j == i);
	ord = xreallocarray(NULL, n, sizeof *ord);
	for (k = 0; k < n; k++)
		ord[k] = k == i ? j : k == j ? i : k;
	put_in_order(t, sp, ord, paras, lang);
	free(ord);
}

/* Cut the tail at a sentence end, keeping 60% to 90% of the bytes. */
static void
edit_truncate(struct nsd_buf *t, struct spans *sp, enum lang lang)
{
	size_t keep, i, cut = 0;

	keep = (size_t)((double)t->len * (0.6 + 0.3 * rng_unit()));
	split_sentences(t->data, t->len, lang, sp);
	for (i = 0; i < sp->n; i++)
		if (sp->v[i].end >= keep) {
			cut = sp->v[i].end;
			break;
		}
	if (cut == 0 || cut >= t->len)
		cut = char_start(t->data, keep);
	t->len = cut;
	trim_end(t);
}

/*
 * Change one character at or after a random place: a typo in a Latin
 * word, a simplified/traditional swap, or an ASCII letter or digit
 * written full-width (or a full-width one written in ASCII).
 */
static void
char_change(struct nsd_buf *t, enum lang lang)
{
	char enc[8];
	size_t start, i, k, k2, n, len;
	uint32_t c, c2;
	ssize_t x;
	int mode, step;

	if (t->len == 0)
		return;
	start = char_start(t->data, rng_below(t->len));
	mode = rng_below(5) == 0 ? 2 : lang == LANG_EN ? 0 : 1;
	/* Try the mode chosen, then the others. */
	for (step = 0; step < 3; step++, mode = (mode + 1) % 3) {
		len = t->len;
		for (n = 0, i = start; n < len; n += k, i += k) {
			if (i >= len)
				i = 0;
			c = cp_at(t->data, len, i, &k);
			if (mode == 0 && is_alpha(c) && i > 0 && i + 1 < len &&
			    is_alpha((unsigned char)t->data[i - 1]) &&
			    is_alpha((unsigned char)t->data[i + 1])) {
				switch (rng_below(4)) {
				case 0:		/* swap with the next */
					enc[0] = t->data[i + 1];
					enc[1] = (char)c;
					splice(t, i, i + 2, enc, 2);
					break;
				case 1:		/* dropped */
					splice(t, i, i + 1, "", 0);
					break;
				case 2:		/* doubled */
					enc[0] = (char)c;
					splice(t, i, i, enc, 1);
					break;
				default:	/* another letter */
					enc[0] = (char)('a' + ((c | 0x20) -
					    'a' + 1 + rng_below(25)) % 26);
					if (c < 'a')
						enc[0] = (char)(enc[0] - 32);
					splice(t, i, i + 1, enc, 1);
					break;
				}
				return;
			}
			if (mode == 1 && is_han(c)) {
				if ((x = table_find(lang == LANG_HANT ?
				    st_trad : st_simp, st_n, c)) >= 0)
					c2 = lang == LANG_HANT ? st_simp[x] :
					    st_trad[x];
				else if (step < 2)
					continue;
				else
					c2 = han_cps[rng_below(han_n)];
				k2 = nsd_utf8_encode(c2, enc);
				splice(t, i, i + k, enc, k2);
				return;
			}
			if (mode == 2 && ((c < 0x7F && (is_alpha(c) ||
			    (c >= '0' && c <= '9'))) ||
			    (c >= 0xFF10 && c <= 0xFF5A))) {
				c2 = c < 0x7F ? c - 0x21 + 0xFF01 :
				    c - 0xFF01 + 0x21;
				k2 = nsd_utf8_encode(c2, enc);
				splice(t, i, i + k, enc, k2);
				return;
			}
		}
	}
}

static void
edit_char(struct nsd_buf *t, enum lang lang)
{
	size_t n = 2 + rng_below(4);

	while (n-- > 0)
		char_change(t, lang);
}

/* Change white space and line breaks, one of four ways. */
static void
edit_space(struct nsd_buf *t, enum lang lang)
{
	struct nsd_buf out = { NULL, 0, 0 };
	const char *indent = lang == LANG_EN ? "    " : "\u3000\u3000";
	size_t i, k, col = 0, width, last = 0;
	uint32_t c;

	switch (rng_below(4)) {
	case 0:		/* paragraphs spaced and indented */
		buf_puts(&out, indent);
		for (i = 0; i < t->len; i++) {
			if (t->data[i] != '\n') {
				nsd_buf_putc(&out, t->data[i]);
				continue;
			}
			while (i + 1 < t->len && t->data[i + 1] == '\n')
				i++;
			buf_puts(&out, " \n\n");
			buf_puts(&out, indent);
		}
		break;
	case 1:		/* paragraphs run together */
		for (i = 0; i < t->len; i++) {
			if (t->data[i] != '\n')
				nsd_buf_putc(&out, t->data[i]);
			else if (lang == LANG_EN && out.len > 0 &&
			    out.data[out.len - 1] != ' ')
				nsd_buf_putc(&out, ' ');
		}
		if (out.len == t->len)	/* nothing to join: wrap instead */
			goto wrap;
		break;
	case 2:
	wrap:		/* hard-wrapped lines */
		out.len = 0;
		width = lang == LANG_EN ? 60 + rng_below(16) :
		    30 + rng_below(10);
		for (i = 0; i < t->len; i += k) {
			c = cp_at(t->data, t->len, i, &k);
			if (c == '\n') {
				nsd_buf_putc(&out, ' ');
				col++;
				last = out.len - 1;
				continue;
			}
			nsd_buf_append(&out, t->data + i, k);
			col++;
			if (c == ' ')
				last = out.len - 1;
			if (col < width)
				continue;
			if (lang != LANG_EN) {
				nsd_buf_putc(&out, '\n');
				col = 0;
			} else if (last > 0 && out.data[last] == ' ') {
				out.data[last] = '\n';
				col = count_cps(out.data + last + 1,
				    out.len - last - 1);
			}
		}
		break;
	default:	/* spaces doubled, or after Chinese commas */
		for (i = 0; i < t->len; i += k) {
			c = cp_at(t->data, t->len, i, &k);
			nsd_buf_append(&out, t->data + i, k);
			if ((c == ' ' || c == 0xFF0C || c == 0x3002) &&
			    rng_below(3) == 0)
				nsd_buf_putc(&out, ' ');
		}
		break;
	}
	t->len = 0;
	nsd_buf_append(t, out.data, out.len);
	nsd_buf_free(&out);
}

/* Expand %T in fmt with the first words or characters of src. */
static void
put_line(struct nsd_buf *t, const char *fmt, const char *src, size_t len,
    enum lang lang)
{
	const char *p;
	size_t i, k, n = 0, words = 0;
	uint32_t c;

	for (p = fmt; *p != '\0'; p++) {
		if (p[0] != '%' || p[1] != 'T') {
			nsd_buf_putc(t, *p);
			continue;
		}
		p++;
		for (i = 0; i < len && i < 120 && n < 16; i += k) {
			c = cp_at(src, len, i, &k);
			if (c == '\n' || c == 0x3002 || c == 0xFF0C)
				break;
			if (lang == LANG_EN && c == ' ' && ++words >= 8)
				break;
			nsd_buf_append(t, src + i, k);
			n += lang != LANG_EN;
		}
	}
}

/* Wrap in a div of <p> paragraphs, or of <br>-separated sentence blocks. */
static void
edit_html(struct nsd_buf *t, struct spans *sp, enum lang lang)
{
	static const char *const classes[] = {
		"article-content", "post-body", "content clearfix"
	};
	struct nsd_buf out = { NULL, 0, 0 };
	const char *sep = rng_below(2) ? "\n" : "";
	size_t i, a, b;
	int paras;

	buf_puts(&out, "<div class=\"");
	buf_puts(&out, classes[rng_below(NELEMS(classes))]);
	buf_puts(&out, "\">");
	split_paragraphs(t->data, t->len, sp, 1);
	paras = sp->n >= 2;
	if (!paras)
		split_sentences(t->data, t->len, lang, sp);
	for (i = 0; i < sp->n; i++) {
		a = sp->v[i].start;
		b = sp->v[i].end;
		if (!paras) {
			if (i > 0 && i % 3 == 0)
				buf_puts(&out, "<br>");
			nsd_buf_append(&out, t->data + a, b - a);
			continue;
		}
		while (b > a && is_blank(t->data[b - 1]))
			b--;
		if (i > 0)
			buf_puts(&out, sep);
		buf_puts(&out, "<p>");
		nsd_buf_append(&out, t->data + a, b - a);
		buf_puts(&out, "</p>");
	}
	buf_puts(&out, "</div>");
	t->len = 0;
	nsd_buf_append(t, out.data, out.len);
	nsd_buf_free(&out);
}

/* --- Documents and the stream ------------------------------------------ */

static struct doc *docs;
static size_t ndocs, docs_cap;
static struct spans scratch;

/* The block of a document's site in t, where the site puts it. */
static void
put_block(struct nsd_buf *t, const struct doc *d, enum boilerplate kind)
{
	const char *b;

	if (d->site < 0 || kind == BP_NONE)
		return;
	if (kind == BP_FOOTER) {
		b = bp_footers[d->lang != LANG_EN][d->site];
		trim_end(t);
		buf_puts(t, "\n");
		buf_puts(t, b);
		return;
	}
	b = bp_scripts[d->site];
	if (d->site == 1) {
		trim_end(t);
		buf_puts(t, "\n");
		buf_puts(t, b);
	} else {
		splice(t, 0, 0, "\n", 1);
		splice(t, 0, 0, b, strlen(b));
	}
}

/* A document for add-sentence: no original, if there is one of lang. */
static const struct doc *
other_doc(size_t src)
{
	size_t tries, i;
	int zh = docs[src].lang != LANG_EN;

	for (tries = 0; tries < 200; tries++) {
		i = rng_below(ndocs);
		if (i != src && (docs[i].lang != LANG_EN) == zh &&
		    (!docs[i].chosen || tries >= 100))
			return (&docs[i]);
	}
	i = rng_below(ndocs);
	return (i == src ? &docs[(i + 1) % ndocs] : &docs[i]);
}

/* Make a copy of docs[src] into p: its edits, then the site's block. */
static void
make_copy(struct pending *p, size_t src, const struct options *o)
{
	const struct doc *d = &docs[src];
	struct nsd_buf *t = &p->text;
	int want[E_COUNT] = { 0 };
	size_t n, k, i, off = 0;
	enum lang lang = d->lang;

	n = 1 + rng_below(3);
	for (k = 0; k < n; k++) {
		do
			i = rng_below(E_COUNT);
		while (want[i]);
		want[i] = 1;
	}
	t->len = 0;
	nsd_buf_append(t, d->text, d->len);
	p->edits[0] = '\0';
	p->mask = 0;
	for (i = 0; i < E_COUNT; i++) {
		if (!want[i])
			continue;
		switch (i) {
		case E_DROP:
			edit_drop(t, &scratch, lang);
			break;
		case E_ADD:
			edit_add(t, &scratch, other_doc(src), lang);
			break;
		case E_REORDER:
			edit_reorder(t, &scratch, lang);
			break;
		case E_TRUNCATE:
			edit_truncate(t, &scratch, lang);
			break;
		case E_AD: {
			const char *ad = ads[lang][rng_below(5)];

			insert_between(t, &scratch, ad, strlen(ad), 1, lang);
			break;
		}
		case E_CHAR:
			edit_char(t, lang);
			break;
		case E_SPACE:
			edit_space(t, lang);
			break;
		case E_PREFIX: {
			struct nsd_buf pre = { NULL, 0, 0 };

			put_line(&pre, prefixes[lang][rng_below(5)], d->text,
			    d->len, lang);
			splice(t, 0, 0, pre.data, pre.len);
			nsd_buf_free(&pre);
			break;
		}
		case E_FOOTER:
			trim_end(t);
			nsd_buf_putc(t, '\n');
			put_line(t, footers[lang][rng_below(5)], d->text,
			    d->len, lang);
			break;
		case E_HTML:
			break;	/* after the block */
		}
		p->mask |= 1U << i;
		off += (size_t)snprintf(p->edits + off, sizeof p->edits - off,
		    "%s%s", off > 0 ? "," : "", edit_names[i]);
	}
	put_block(t, d, o->bp_kind);
	if (want[E_HTML])
		edit_html(t, &scratch, lang);
	p->lang = lang;
	p->src = src;
}

/* --- Touches (--touch) ------------------------------------------------- */

/*
 * How many of n things (n > 0) a share rate of them is: rate * n rounded
 * up or down at random, so that it is rate * n on average, but at least 1.
 */
static size_t
touch_count(double rate, size_t n)
{
	double x = rate * (double)n;
	size_t k = (size_t)x;

	if (touch_unit() < x - (double)k)
		k++;
	if (k < 1)
		k = 1;
	return (k < n ? k : n);
}

/*
 * Whether to take the next of n things left, k of them still wanted; if
 * so, one fewer is.  Asked of each thing in turn (Knuth's selection
 * sampling), it takes exactly k, any k as likely as any other.
 */
static int
touch_take(size_t *k, size_t n)
{
	if (touch_below(n) >= *k)
		return (0);
	(*k)--;
	return (1);
}

/* What chars:P replaces in a text of lang. */
static int
is_letter(uint32_t c, enum lang lang)
{
	return (lang == LANG_EN ? is_alpha(c) : is_han(c));
}

/* Whether c2 changes c: another character, and not c in its other script. */
static int
han_other(uint32_t c, uint32_t c2)
{
	ssize_t x;

	if (c2 == c)
		return (0);
	if ((x = table_find(st_simp, st_n, c)) >= 0 && st_trad[x] == c2)
		return (0);
	if ((x = table_find(st_trad, st_n, c)) >= 0 && st_simp[x] == c2)
		return (0);
	return (1);
}

/* A common Han character of lang's script in place of c. */
static uint32_t
han_instead(uint32_t c, enum lang lang)
{
	int s = lang == LANG_HANT;
	uint32_t c2;

	do
		c2 = han_pool[s][touch_below(han_pool_n[s])];
	while (!han_other(c, c2));
	return (c2);
}

/* Write Han character c at byte i of t, in place of one of as many bytes. */
static void
han_put(struct nsd_buf *t, size_t i, uint32_t c)
{
	char enc[8];
	size_t k;

	k = nsd_utf8_encode(c, enc);
	assert(k == 3 && i + k <= t->len);
	memcpy(t->data + i, enc, k);
}

/*
 * chars:P.  Letters are replaced by letters of as many bytes (ASCII, or
 * Han characters, which all take 3), so the sentences stay in place.
 */
static void
touch_chars(struct nsd_buf *t, struct spans *sp, enum lang lang,
    double rate, struct touch_stats *ts)
{
	size_t s, i, k, n, want;
	uint32_t c;

	split_sentences(t->data, t->len, lang, sp);
	for (s = 0; s < sp->n; s++) {
		const struct span *u = &sp->v[s];

		for (n = 0, i = u->start; i < u->end; i += k)
			n += is_letter(cp_at(t->data, t->len, i, &k), lang);
		if (n == 0)
			continue;
		want = touch_count(rate, n);
		ts->sentences[T_CHARS]++;
		ts->units[T_CHARS] += n;
		ts->changed[T_CHARS] += want;
		for (i = u->start; want > 0; i += k) {
			assert(i < u->end);
			c = cp_at(t->data, t->len, i, &k);
			if (!is_letter(c, lang) || !touch_take(&want, n--))
				continue;
			if (lang != LANG_EN) {
				han_put(t, i, han_instead(c, lang));
				continue;
			}
			c = 'a' + ((c | 0x20) - 'a' + 1 + touch_below(25)) % 26;
			t->data[i] = (char)(t->data[i] < 'a' ? c - 32 : c);
		}
	}
}

/* Whether s[i] is an apostrophe between two ASCII letters; its length. */
static size_t
inner_apostrophe(const char *s, size_t a, size_t b, size_t i)
{
	size_t k;

	if (s[i] == '\'')
		k = 1;
	else if (i + 3 <= b && memcmp(s + i, "\u2019", 3) == 0)
		k = 3;
	else
		return (0);
	if (i > a && is_alpha((unsigned char)s[i - 1]) && i + k < b &&
	    is_alpha((unsigned char)s[i + k]))
		return (k);
	return (0);
}

/*
 * The words of s[a..b) into w, for words:P: in English runs of ASCII
 * letters and the apostrophes between them; in Chinese, each run of Han
 * characters cut into twos from its start (an odd one left over).
 */
static void
find_words(const char *s, size_t a, size_t b, enum lang lang,
    struct spans *w)
{
	size_t i, j, k, k2;

	w->n = 0;
	for (i = a; i < b; ) {
		if (lang == LANG_EN) {
			if (!is_alpha((unsigned char)s[i])) {
				i++;
				continue;
			}
			for (j = i; j < b; j += k)
				if (is_alpha((unsigned char)s[j]))
					k = 1;
				else if ((k = inner_apostrophe(s, a, b, j)) ==
				    0)
					break;
			spans_add(w, i, j);
			i = j;
			continue;
		}
		if (is_han(cp_at(s, b, i, &k)) && i + k < b &&
		    is_han(cp_at(s, b, i + k, &k2))) {
			spans_add(w, i, i + k + k2);
			i += k + k2;
		} else
			i += k;
	}
}

/*
 * A word to put in place of w[0..wlen) of a text of lang into r, drawn
 * from a text of the same language (and script) other than docs[src]: in
 * English the first word after a random place, of at least two letters
 * and not w (in any case), lower-cased; in Chinese the first two Han
 * characters in a row after a random place, each changing the one at its
 * place in w.  Returns 0 when 200 draws found none.
 */
static int
vocab_word(size_t src, enum lang lang, const char *w, size_t wlen,
    struct nsd_buf *r)
{
	const struct doc *d;
	size_t tries, i, j, k, k2 = 0, n;
	uint32_t c1 = 0, c2 = 0, w1, w2;

	r->len = 0;
	for (tries = 0; tries < 200; tries++) {
		d = &docs[touch_below(ndocs)];
		if (d == &docs[src] || d->lang != lang || d->len == 0)
			continue;
		i = char_start(d->text, touch_below(d->len));
		if (lang != LANG_EN) {
			w1 = cp_at(w, wlen, 0, &k);
			w2 = cp_at(w, wlen, k, &k);
			for (n = 0; i < d->len && n < 64; i += k, n++) {
				c1 = cp_at(d->text, d->len, i, &k);
				if (!is_han(c1) || i + k >= d->len)
					continue;
				c2 = cp_at(d->text, d->len, i + k, &k2);
				if (is_han(c2))
					break;
			}
			if (i >= d->len || n == 64 || !han_other(w1, c1) ||
			    !han_other(w2, c2))
				continue;
			nsd_buf_append(r, d->text + i, k + k2);
			return (1);
		}
		/* Past the word that holds i, to the next one. */
		while (i < d->len && is_alpha((unsigned char)d->text[i]))
			i++;
		while (i < d->len && !is_alpha((unsigned char)d->text[i]))
			i++;
		for (j = i, k = 0; j < d->len; j += k)
			if (is_alpha((unsigned char)d->text[j]))
				k = 1;
			else if ((k = inner_apostrophe(d->text, i, d->len,
			    j)) == 0)
				break;
		if (j - i < 2 || (j - i == wlen &&
		    strncasecmp(d->text + i, w, wlen) == 0))
			continue;
		for (; i < j; i++)
			nsd_buf_putc(r, (char)(d->text[i] | (is_alpha(
			    (unsigned char)d->text[i]) ? 0x20 : 0)));
		return (1);
	}
	return (0);
}

/*
 * Case r (lower case) as w is cased: all capitals when w has two letters or
 * more and all are capitals, else a capital first when w has one.
 */
static void
case_as(struct nsd_buf *r, const char *w, size_t wlen)
{
	size_t i, upper = 0, letters = 0;

	for (i = 0; i < wlen; i++)
		if (is_alpha((unsigned char)w[i])) {
			letters++;
			upper += w[i] >= 'A' && w[i] <= 'Z';
		}
	if (letters >= 2 && upper == letters) {
		for (i = 0; i < r->len; i++)
			if (r->data[i] >= 'a' && r->data[i] <= 'z')
				r->data[i] = (char)(r->data[i] - 32);
	} else if (w[0] >= 'A' && w[0] <= 'Z' && r->len > 0)
		r->data[0] = (char)(r->data[0] - 32);
}

/*
 * In place of w[0..wlen) when no text has a word to give (an input of one
 * language's text alone): w with each letter, or Han character, replaced.
 */
static void
made_up(struct nsd_buf *r, const char *w, size_t wlen, enum lang lang)
{
	size_t i, k;
	uint32_t c;

	r->len = 0;
	for (i = 0; i < wlen; i += k) {
		c = cp_at(w, wlen, i, &k);
		if (lang != LANG_EN && is_han(c)) {
			nsd_buf_reserve(r, 8);
			r->len += nsd_utf8_encode(han_instead(c, lang),
			    r->data + r->len);
		} else if (lang == LANG_EN && is_alpha(c))
			nsd_buf_putc(r, (char)('a' + ((c | 0x20) - 'a' + 1 +
			    touch_below(25)) % 26));
		else
			nsd_buf_append(r, w + i, k);
	}
}

/* words:P, the text rewritten into a new buffer (words change lengths). */
static void
touch_words(struct nsd_buf *t, struct spans *sp, size_t src, enum lang lang,
    double rate, struct touch_stats *ts)
{
	struct nsd_buf out = { NULL, 0, 0 }, r = { NULL, 0, 0 };
	struct spans w = { NULL, 0, 0 };
	size_t s, j, k, n, want, at = 0;
	const char *p;

	split_sentences(t->data, t->len, lang, sp);
	for (s = 0; s < sp->n; s++) {
		find_words(t->data, sp->v[s].start, sp->v[s].end, lang, &w);
		if (w.n == 0)
			continue;
		n = w.n;
		want = touch_count(rate, n);
		ts->sentences[T_WORDS]++;
		ts->units[T_WORDS] += n;
		ts->changed[T_WORDS] += want;
		for (j = 0; j < w.n && want > 0; j++) {
			if (!touch_take(&want, n--))
				continue;
			p = t->data + w.v[j].start;
			k = w.v[j].end - w.v[j].start;
			if (!vocab_word(src, lang, p, k, &r))
				made_up(&r, p, k, lang);
			if (lang == LANG_EN)
				case_as(&r, p, k);
			nsd_buf_append(&out, t->data + at, w.v[j].start - at);
			nsd_buf_append(&out, r.data, r.len);
			at = w.v[j].end;
		}
	}
	nsd_buf_append(&out, t->data + at, t->len - at);
	t->len = 0;
	nsd_buf_append(t, out.data, out.len);
	nsd_buf_free(&out);
	nsd_buf_free(&r);
	free(w.v);
}

/*
 * paragraphs: the paragraphs of t in a random order other than their own,
 * or with fewer than 3 of them, 3 to 5 blocks of consecutive sentences
 * (2 at least when the sentences do not divide so).  Returns 2 when
 * paragraphs moved, 1 blocks, 0 nothing (one sentence).
 */
static int
touch_paragraphs(struct nsd_buf *t, struct spans *sp, enum lang lang)
{
	size_t *ord, n, i, j, k;
	int paras;

	/*
	 * English is often hard-wrapped, and its line breaks end no sentence:
	 * put in another order, its lines would cut sentences in two.
	 */
	split_paragraphs(t->data, t->len, sp, lang != LANG_EN);
	paras = sp->n >= 3;
	if (!paras) {
		split_sentences(t->data, t->len, lang, sp);
		if (sp->n < 2)
			return (0);
		merge_blocks(sp, 3 + touch_below(3));
	}
	n = sp->n;
	assert(n >= 2);
	ord = xreallocarray(NULL, n, sizeof *ord);
	do {
		for (i = 0; i < n; i++)
			ord[i] = i;
		for (i = n - 1; i > 0; i--) {
			j = touch_below(i + 1);
			k = ord[i];
			ord[i] = ord[j];
			ord[j] = k;
		}
		for (i = 0; i < n && ord[i] == i; i++)
			;
	} while (i == n);
	put_in_order(t, sp, ord, paras, lang);
	free(ord);
	return (paras ? 2 : 1);
}

/* Make the copy of docs[src] that --touch asks for into p. */
static void
make_touched(struct pending *p, size_t src, const struct options *o,
    struct touch_stats *ts)
{
	const struct doc *d = &docs[src];
	struct nsd_buf *t = &p->text;
	int moved;

	t->len = 0;
	nsd_buf_append(t, d->text, d->len);
	if (o->touch[T_WORDS] > 0)
		touch_words(t, &scratch, src, d->lang, o->touch[T_WORDS], ts);
	if (o->touch[T_CHARS] > 0)
		touch_chars(t, &scratch, d->lang, o->touch[T_CHARS], ts);
	if (o->touch[T_PARAS] > 0) {
		moved = touch_paragraphs(t, &scratch, d->lang);
		ts->reordered += moved > 0;
		ts->by_blocks += moved == 1;
	}
	put_block(t, d, o->bp_kind);
	(void)snprintf(p->edits, sizeof p->edits, "%s", o->touch_spec);
	p->mask = 0;
	p->lang = d->lang;
	p->src = src;
}

/* --- Look-alikes (--negatives) ----------------------------------------- */

enum kind {
	K_BACKGROUND,
	K_QUOTE,
	K_TEMPLATE,
	K_COUNT
};

static const char *const kind_names[K_COUNT] = {
	"background", "quote", "template"
};

/* Who a quote is from, for its attribution line. */
static const char *const quote_names[] = {
	"jsmith@cs.example.edu (John Smith)", "mary@world.example.com",
	"Dave Brown <dbrown@example.org>", "wilson@eng.example.com"
};

/*
 * A document for a look-alike of docs[src]: one of the same language
 * (English, or Chinese in either script) that is no original and was
 * given to no other look-alike, so that no two records share it.  The
 * others are order[norig..ndocs); the scan starts at a random one.
 * Returns NULL when none is left.
 */
static struct doc *
unused_doc(size_t src, const size_t *order, size_t norig)
{
	size_t n = ndocs - norig, start, k;
	struct doc *d;
	int zh = docs[src].lang != LANG_EN;

	if (n == 0)
		return (NULL);
	start = rng_below(n);
	for (k = 0; k < n; k++) {
		d = &docs[order[norig + (start + k) % n]];
		if (!d->chosen && (d->lang != LANG_EN) == zh) {
			d->chosen = 2;
			return (d);
		}
	}
	return (NULL);
}

/*
 * 2 to 4 consecutive sentences of d (all of them when it has fewer), as
 * the bytes [*a, *b) of its text, white space trimmed at both ends.
 */
static void
pick_passage(const struct doc *d, struct spans *sp, size_t *a, size_t *b)
{
	size_t n, first;

	split_sentences(d->text, d->len, d->lang, sp);
	n = 2 + rng_below(3);
	if (n > sp->n)
		n = sp->n;
	first = rng_below(sp->n - n + 1);
	*a = sp->v[first].start;
	*b = sp->v[first + n - 1].end;
	while (*b > *a && is_blank(d->text[*b - 1]))
		(*b)--;
	while (*a < *b && is_blank(d->text[*a]))
		(*a)++;
}

/*
 * Every run of ASCII digits of t replaced by another random run of the
 * same length (its last digit changed when the draw gave the same run).
 */
static void
renumber(struct nsd_buf *t)
{
	size_t i, j, k;
	int same;

	for (i = 0; i < t->len; i = j) {
		j = i + 1;
		if (t->data[i] < '0' || t->data[i] > '9')
			continue;
		while (j < t->len && t->data[j] >= '0' && t->data[j] <= '9')
			j++;
		for (k = i, same = 1; k < j; k++) {
			char c = (char)('0' + rng_below(10));

			same &= c == t->data[k];
			t->data[k] = c;
		}
		if (same)
			t->data[j - 1] = (char)('0' + (t->data[j - 1] - '0' +
			    1 + rng_below(9)) % 10);
	}
}

/*
 * The capitalised words of s that do not begin a sentence, into w: runs
 * of ASCII letters of two or more, a capital then a small letter (names,
 * mostly; not the acronyms of all capitals).
 */
static void
cap_words(const char *s, size_t len, enum lang lang, struct spans *w)
{
	struct spans sp = { NULL, 0, 0 };
	size_t k, i, j;
	int first;

	w->n = 0;
	split_sentences(s, len, lang, &sp);
	for (k = 0; k < sp.n; k++) {
		first = 1;
		for (i = sp.v[k].start; i < sp.v[k].end; i = j) {
			j = i + 1;
			if (!is_alpha((unsigned char)s[i]))
				continue;
			while (j < sp.v[k].end && is_alpha((unsigned char)s[j]))
				j++;
			if (!first && j - i >= 2 && s[i] >= 'A' &&
			    s[i] <= 'Z' && s[i + 1] >= 'a' && s[i + 1] <= 'z')
				spans_add(w, i, j);
			first = 0;
		}
	}
	free(sp.v);
}

/*
 * The capitalised words of t that begin no sentence replaced by those of
 * other, drawn at random: the same word each time by the same other one,
 * so that a name stays one name.
 */
static void
rename_words(struct nsd_buf *t, enum lang lang, const struct doc *other)
{
	struct spans w = { NULL, 0, 0 }, pool = { NULL, 0, 0 };
	struct nsd_buf out = { NULL, 0, 0 };
	size_t *to, i, j, at = 0;
	const struct span *p;

	cap_words(other->text, other->len, other->lang, &pool);
	cap_words(t->data, t->len, lang, &w);
	if (pool.n == 0 || w.n == 0) {
		free(pool.v);
		free(w.v);
		return;
	}
	to = xreallocarray(NULL, w.n, sizeof *to);
	for (i = 0; i < w.n; i++) {
		for (j = 0; j < i; j++)
			if (w.v[j].end - w.v[j].start == w.v[i].end -
			    w.v[i].start && memcmp(t->data + w.v[j].start,
			    t->data + w.v[i].start, w.v[i].end -
			    w.v[i].start) == 0)
				break;
		to[i] = j < i ? to[j] : rng_below(pool.n);
		p = &pool.v[to[i]];
		nsd_buf_append(&out, t->data + at, w.v[i].start - at);
		nsd_buf_append(&out, other->text + p->start, p->end - p->start);
		at = w.v[i].end;
	}
	nsd_buf_append(&out, t->data + at, t->len - at);
	t->len = 0;
	nsd_buf_append(t, out.data, out.len);
	nsd_buf_free(&out);
	free(to);
	free(pool.v);
	free(w.v);
}

/*
 * t, which holds other's text, preceded by s[0..len) quoted as a reply
 * quotes it: an attribution line, then each line "> "-prefixed (its
 * leading white space dropped), then a blank line.
 */
static void
quote_before(struct nsd_buf *t, const char *s, size_t len, enum lang lang)
{
	struct nsd_buf q = { NULL, 0, 0 };
	char line[160];
	size_t i = 0, j;

	if (lang == LANG_EN)
		snprintf(line, sizeof line, "In article <%zu@news.example.com>"
		    ", %s writes:\n", 1000 + rng_below(90000),
		    quote_names[rng_below(NELEMS(quote_names))]);
	else
		snprintf(line, sizeof line, lang == LANG_HANT ?
		    "引用網友 %zu 的發言：\n" : "引用网友 %zu 的发言：\n",
		    1000 + rng_below(90000));
	buf_puts(&q, line);
	while (i < len) {
		while (i < len && is_blank(s[i]))
			i++;
		if (i == len)
			break;
		for (j = i; j < len && s[j] != '\n'; j++)
			;
		buf_puts(&q, "> ");
		nsd_buf_append(&q, s + i, j - i);
		nsd_buf_putc(&q, '\n');
		i = j;
	}
	nsd_buf_putc(&q, '\n');
	splice(t, 0, 0, q.data, q.len);
	nsd_buf_free(&q);
}

/*
 * Make into p a look-alike of docs[src] of kind k from other, a document
 * no other record holds: other's text with a passage of docs[src] put in
 * it (background) or quoted before it (quote), or docs[src]'s text with
 * its numbers and names changed (template; a background when it has
 * neither).
 */
static void
make_lookalike(struct pending *p, size_t src, const struct doc *other,
    enum kind k)
{
	const struct doc *d = &docs[src];
	struct nsd_buf *t = &p->text;
	size_t a, b;

	t->len = 0;
	if (k == K_TEMPLATE) {
		nsd_buf_append(t, d->text, d->len);
		renumber(t);
		if (d->lang == LANG_EN)
			rename_words(t, d->lang, other);
		p->lang = d->lang;
		/* No digit and no name: that would be a copy. */
		if (t->len == d->len && memcmp(t->data, d->text, d->len) == 0) {
			k = K_BACKGROUND;
			t->len = 0;
		}
	}
	if (k != K_TEMPLATE) {
		pick_passage(d, &scratch, &a, &b);
		nsd_buf_append(t, other->text, other->len);
		if (k == K_BACKGROUND)
			insert_between(t, &scratch, d->text + a, b - a, 1,
			    other->lang);
		else
			quote_before(t, d->text + a, b - a, other->lang);
		p->lang = other->lang;
	}
	(void)snprintf(p->edits, sizeof p->edits, "%s", kind_names[k]);
	p->mask = 1U << k;
	p->src = src;
}

/* A hash of the text with its white space removed, for exact repeats. */
static uint64_t
text_key(const char *s, size_t len)
{
	uint64_t h = 0xCBF29CE484222325ULL;
	size_t i, k, j;

	for (i = 0; i < len; i += k) {
		if (is_space(cp_at(s, len, i, &k)))
			continue;
		for (j = 0; j < k; j++) {
			h ^= (unsigned char)s[i + j];
			h *= 0x100000001B3ULL;
		}
	}
	return (h);
}

/* An open-addressing set of text keys. */
struct keyset {
	uint64_t	*v;
	size_t		 cap;
	size_t		 n;
};

/* Add key; returns 1 when it was there already. */
static int
keyset_add(struct keyset *ks, uint64_t key)
{
	uint64_t *old = ks->v;
	size_t i, oldcap = ks->cap;

	if (key == 0)
		key = 1;
	if (2 * (ks->n + 1) > ks->cap) {
		ks->cap = ks->cap ? 2 * ks->cap : 1024;
		ks->v = xcalloc(ks->cap, sizeof *ks->v);
		ks->n = 0;
		for (i = 0; i < oldcap; i++)
			if (old[i] != 0)
				(void)keyset_add(ks, old[i]);
		free(old);
	}
	for (i = key & (ks->cap - 1); ks->v[i] != 0; i = (i + 1) &
	    (ks->cap - 1))
		if (ks->v[i] == key)
			return (1);
	ks->v[i] = key;
	ks->n++;
	return (0);
}

struct counts {
	size_t	 lines;
	size_t	 bad;
	size_t	 shorter;
	size_t	 repeats;
};

static void
bad_line(struct counts *c, const char *file, size_t line, const char *why,
    size_t at)
{
	if (c->bad++ < MAX_MESSAGES) {
		if (at != (size_t)-1)
			fprintf(stderr, "%s: %s:%zu: %s (at byte %zu), "
			    "skipped\n", progname, file, line, why, at + 1);
		else
			fprintf(stderr, "%s: %s:%zu: %s, skipped\n", progname,
			    file, line, why);
	}
}

/* Read the eligible documents of one input. */
static int
read_input(const char *file, const struct options *o, struct counts *c,
    struct keyset *seen)
{
	static struct nsd_json_path paths[2];
	static struct nsd_json_query q[2];
	static struct nsd_json_scanner sc;
	static int init;
	struct nsd_buf text = { NULL, 0, 0 }, id = { NULL, 0, 0 };
	const struct nsd_json_span *sid, *stx;
	FILE *f;
	char *line = NULL;
	size_t cap = 0, lineno = 0, n;
	ssize_t got;
	struct doc *d;

	if (!init) {
		nsd_json_path_member(&paths[0], "id");
		nsd_json_path_member(&paths[1], "text");
		q[0].path = &paths[0];
		q[1].path = &paths[1];
		nsd_json_scanner_init(&sc, q, 2);
		init = 1;
	}
	if (strcmp(file, "-") == 0)
		f = stdin;
	else if ((f = fopen(file, "r")) == NULL) {
		fprintf(stderr, "%s: %s: %s\n", progname, file,
		    strerror(errno));
		return (-1);
	}
	while ((got = getline(&line, &cap, f)) > 0) {
		n = (size_t)got;
		lineno++;
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			n--;
		if (n == 0)
			continue;
		c->lines++;
		if (nsd_json_scan(&sc, line, n, 1) != 0) {
			bad_line(c, file, lineno, sc.error, sc.error_at);
			continue;
		}
		sid = &q[0].found;
		stx = &q[1].found;
		if (stx->type != NSD_JSON_STRING) {
			bad_line(c, file, lineno, stx->type == NSD_JSON_NONE ?
			    "no \"text\" member" : "\"text\" is no string",
			    (size_t)-1);
			continue;
		}
		id.len = 0;
		if (sid->type == NSD_JSON_STRING)
			nsd_json_decode_string(line + sid->start, sid->len,
			    &id);
		else if (sid->type == NSD_JSON_NUMBER)
			nsd_buf_append(&id, line + sid->start, sid->len);
		else {
			bad_line(c, file, lineno, sid->type == NSD_JSON_NONE ?
			    "no \"id\" member" :
			    "\"id\" is neither a string nor a number",
			    (size_t)-1);
			continue;
		}
		if (id.len == 0 || memchr(id.data, '\t', id.len) != NULL ||
		    memchr(id.data, '\n', id.len) != NULL ||
		    memchr(id.data, '\r', id.len) != NULL) {
			bad_line(c, file, lineno, "the id is empty or holds "
			    "a tab or a line break", (size_t)-1);
			continue;
		}
		text.len = 0;
		nsd_json_decode_string(line + stx->start, stx->len, &text);
		if (count_cps(text.data, text.len) < o->min_length) {
			c->shorter++;
			continue;
		}
		if (keyset_add(seen, text_key(text.data, text.len))) {
			c->repeats++;
			continue;
		}
		if (ndocs == docs_cap) {
			docs_cap = docs_cap ? 2 * docs_cap : 1024;
			docs = xreallocarray(docs, docs_cap, sizeof *docs);
		}
		d = &docs[ndocs++];
		d->id = xstrndup(id.data, id.len);
		d->idlen = id.len;
		d->text = xstrndup(text.data, text.len);
		d->len = text.len;
		d->lang = detect_lang(d->text, d->len);
		d->chosen = 0;
		d->site = -1;
	}
	if (ferror(f)) {
		fprintf(stderr, "%s: %s: %s\n", progname, file,
		    strerror(errno));
		if (f != stdin)
			fclose(f);
		free(line);
		return (-1);
	}
	if (f != stdin)
		fclose(f);
	free(line);
	nsd_buf_free(&text);
	nsd_buf_free(&id);
	return (0);
}

/* Write one record to out. */
static void
put_record(struct nsd_buf *out, const char *id, size_t idlen,
    const char *text, size_t len, enum lang lang)
{
	buf_puts(out, "{\"id\":");
	nsd_json_encode_string(id, idlen, out);
	buf_puts(out, ",\"text\":");
	nsd_json_encode_string(text, len, out);
	buf_puts(out, ",\"lang\":\"");
	buf_puts(out, lang_names[lang]);
	buf_puts(out, "\"}\n");
}

static int
flush_out(struct nsd_buf *out)
{
	if (out->len > 0 && fwrite(out->data, 1, out->len, stdout) !=
	    out->len) {
		fprintf(stderr, "%s: write error: %s\n", progname,
		    strerror(errno));
		return (-1);
	}
	out->len = 0;
	return (0);
}

/* The touches' counts, for --verbose, after "...N copies;". */
static void
touch_report(const struct options *o, const struct touch_stats *ts,
    size_t ncopies)
{
	const char *sep = " touches";
	int i;

	for (i = 0; i < T_COUNT; i++) {
		if (o->touch[i] == 0)
			continue;
		if (i == T_PARAS)
			fprintf(stderr, "%s paragraphs: %zu of %zu copies "
			    "reordered (%zu by blocks of sentences)", sep,
			    ts->reordered, ncopies, ts->by_blocks);
		else
			fprintf(stderr, "%s %s:%g: %zu of %zu %s changed "
			    "(%.1f%%) in %zu sentences", sep, touch_names[i],
			    o->touch[i], ts->changed[i], ts->units[i],
			    i == T_WORDS ? "words" : "letters",
			    ts->units[i] > 0 ? 100.0 * (double)ts->changed[i] /
			    (double)ts->units[i] : 0.0, ts->sentences[i]);
		sep = ";";
	}
}

static void
usage(int status)
{
	FILE *f = status == 0 ? stdout : stderr;
	size_t i;

	fprintf(f, "usage: %s [--seed N] [--originals N] [--copy-rate F] "
	    "[--max-copies N]\n"
	    "                  [--max-gap N] [--min-length N] "
	    "[--boilerplate footer|script]\n"
	    "                  [--boilerplate-rate F] [--touch SPEC[,SPEC...]]"
	    "\n"
	    "                  [--negatives] [--truth FILE] [--verbose] "
	    "[FILE]...\n",
	    progname);
	if (status != 0) {
		fprintf(f, "Try '%s --help'.\n", progname);
		exit(status);
	}
	fprintf(f, "\n"
	    "Write real documents and labelled near-copies of them as NDJSON\n"
	    "{\"id\",\"text\",\"lang\"} records to standard output.  FILEs "
	    "are\n"
	    "NDJSON with string \"id\" and \"text\" members (- or none: "
	    "standard\ninput); bad lines are skipped with a message, and so "
	    "are texts\nshorter than --min-length and exact repeats (white "
	    "space removed).\n\n"
	    "  --seed N          PRNG seed (default 1)\n"
	    "  --originals N     originals drawn from the input (default: "
	    "all)\n"
	    "  --copy-rate F     copies per original on average, 0 to "
	    "--max-copies\n"
	    "                    (default 1)\n"
	    "  --max-copies N    most copies of one original (default 2)\n"
	    "  --max-gap N       a copy comes at most N originals after its\n"
	    "                    source (default 20)\n"
	    "  --min-length N    skip texts of fewer code points (default "
	    "200)\n"
	    "  --boilerplate K   footer: a site's disclaimer of long "
	    "sentences\n"
	    "                    appended; script: a leaked JS/CSS ad snippet "
	    "put\n"
	    "                    first or last (default footer)\n"
	    "  --boilerplate-rate F\n"
	    "                    share of originals given their site's block,"
	    "\n"
	    "                    one of 3 sites per language (default 0)\n"
	    "  --touch SPEC[,SPEC...]\n"
	    "                    exactly one copy of each original, changed by "
	    "the\n"
	    "                    touches named instead of 1 to 3 edits (no "
	    "--copy-rate\n"
	    "                    or --max-copies then)\n"
	    "  --negatives       look-alikes in place of copies: other "
	    "documents that\n"
	    "                    share a passage or a template with an "
	    "original\n"
	    "                    (see below; no --touch or --boilerplate-rate"
	    ")\n"
	    "  --truth FILE      write \"copy-id TAB source-id TAB edits\" "
	    "lines\n"
	    "  --verbose         print counts to standard error\n"
	    "  --help            show this help\n\n"
	    "A copy's id is its source's followed by #rN.  Without --touch, "
	    "each copy\ngets 1 to 3 edits, applied in this order:\n\n");
	for (i = 0; i < E_COUNT; i++)
		fprintf(f, "  %-15s %s\n", edit_names[i], edit_help[i]);
	fprintf(f, "\nThe touches of --touch, applied in this order whatever "
	    "the order given\n(P: above 0, at most 1; the truth file gives "
	    "them as the edits):\n\n");
	for (i = 0; i < T_COUNT; i++)
		fprintf(f, "  %-15s %s\n", i == T_PARAS ? touch_names[i] :
		    i == T_WORDS ? "words:P" : "chars:P", touch_help[i]);
	fprintf(f, "\nWith --negatives, each original gets 0 to --max-copies "
	    "look-alikes\n(--copy-rate on average, up to --max-gap originals "
	    "later): each a\ndocument of the input that is no original and "
	    "is used once, its id\nfollowed by #nN, of one kind drawn at "
	    "random.  The truth file gets\n\"look-alike-id TAB original-id "
	    "TAB kind\" lines.  No look-alike is a\ncopy: a match of one is "
	    "a false positive.  The kinds:\n\n"
	    "  background      2 to 4 consecutive sentences of the original "
	    "put in\n"
	    "                  the other document as a paragraph\n"
	    "  quote           the other document after a quoted passage "
	    "of the\n"
	    "                  original: an attribution line, 2 to 4 "
	    "sentences\n"
	    "                  with \"> \" before each line, a blank line\n"
	    "  template        the original with every run of digits "
	    "replaced by\n"
	    "                  another of the same length and, in English, "
	    "its\n"
	    "                  capitalised words that begin no sentence by "
	    "those\n"
	    "                  of the other document (one name stays one "
	    "name)\n");
	fprintf(f, "\nExit status: 0, 1 when bad input lines were skipped, 2 "
	    "on a usage\nerror, 3 when a file cannot be read or written.\n");
	exit(0);
}

/* A usage error in --touch's value: what, and the piece it is about. */
static void
bad_touch(const char *what, const char *piece, size_t len)
{
	fprintf(stderr, "%s: invalid value for --touch: '%.*s' %s\n",
	    progname, (int)len, piece, what);
	usage(EXIT_USAGE);
}

/*
 * Parse --touch SPEC[,SPEC...] into o->touch, and write the touches into
 * o->touch_spec in the order they are applied.
 */
static void
parse_touch(const char *v, struct options *o)
{
	const char *p = v, *e, *colon;
	char num[32], *end;
	size_t n, namelen, off = 0;
	double rate;
	int i;

	memset(o->touch, 0, sizeof o->touch);
	for (;;) {
		if ((e = strchr(p, ',')) == NULL)
			e = p + strlen(p);
		n = (size_t)(e - p);
		colon = memchr(p, ':', n);
		namelen = colon != NULL ? (size_t)(colon - p) : n;
		for (i = 0; i < T_COUNT; i++)
			if (strlen(touch_names[i]) == namelen &&
			    strncmp(p, touch_names[i], namelen) == 0)
				break;
		if (i == T_COUNT || (i == T_PARAS) != (colon == NULL))
			bad_touch("(valid: chars:P, words:P, paragraphs, "
			    "joined by commas; P above 0, at most 1)", p, n);
		rate = 1;
		if (colon != NULL) {
			n = (size_t)(e - colon - 1);
			if (n == 0 || n >= sizeof num)
				bad_touch("(P: a share above 0, at most 1)",
				    p, (size_t)(e - p));
			memcpy(num, colon + 1, n);
			num[n] = '\0';
			errno = 0;
			rate = strtod(num, &end);
			if (errno != 0 || *end != '\0' || !(rate > 0 &&
			    rate <= 1) || (num[0] != '.' &&
			    (num[0] < '0' || num[0] > '9')))
				bad_touch("(P: a share above 0, at most 1)",
				    p, (size_t)(e - p));
		}
		if (o->touch[i] > 0)
			bad_touch("(given twice)", p, namelen);
		o->touch[i] = rate;
		if (*e == '\0')
			break;
		p = e + 1;
	}
	for (i = 0; i < T_COUNT; i++) {
		if (o->touch[i] == 0)
			continue;
		off += (size_t)snprintf(o->touch_spec + off,
		    sizeof o->touch_spec - off, i == T_PARAS ? "%s%s" :
		    "%s%s:%g", off > 0 ? "," : "", touch_names[i],
		    o->touch[i]);
		assert(off < sizeof o->touch_spec);
	}
	o->touched = 1;
}

/* Parse the options; returns the index of the first operand. */
static int
parse_args(int argc, char **argv, struct options *o)
{
	struct bench_args a;
	const char *v, *arg;

	memset(o, 0, sizeof *o);
	o->seed = 1;
	o->copy_rate = 1;
	o->max_copies = 2;
	o->max_gap = 20;
	o->min_length = 200;
	o->bp_kind = BP_FOOTER;
	bench_args_init(&a, progname, usage, argc, argv);
	while ((arg = bench_args_peek(&a)) != NULL) {
		if (strcmp(arg, "--") == 0)
			return (a.i + 1);
		if (arg[0] != '-' || arg[1] == '\0')
			break;
		if (bench_args_flag(&a, "--help", "-h"))
			usage(0);
		else if (bench_args_flag(&a, "--negatives", NULL))
			o->negatives = 1;
		else if (bench_args_flag(&a, "--verbose", "-v"))
			o->verbose = 1;
		else if ((v = bench_args_value(&a, "--seed", NULL)) != NULL)
			o->seed = (uint64_t)bench_parse_number(&a, "--seed", v,
			    0, 1e15, 1);
		else if ((v = bench_args_value(&a, "--originals", NULL)) !=
		    NULL)
			o->originals = (size_t)bench_parse_number(&a,
			    "--originals", v, 1, 1e12, 1);
		else if ((v = bench_args_value(&a, "--copy-rate", NULL)) !=
		    NULL) {
			o->copy_rate = bench_parse_number(&a, "--copy-rate", v,
			    0, 100, 0);
			o->rate_given = 1;
		} else if ((v = bench_args_value(&a, "--max-copies", NULL)) !=
		    NULL) {
			o->max_copies = (unsigned)bench_parse_number(&a,
			    "--max-copies", v, 1, 100, 1);
			o->rate_given = 1;
		} else if ((v = bench_args_value(&a, "--max-gap", NULL)) !=
		    NULL)
			o->max_gap = (unsigned)bench_parse_number(&a,
			    "--max-gap", v, 0, 1e6, 1);
		else if ((v = bench_args_value(&a, "--min-length", NULL)) !=
		    NULL)
			o->min_length = (size_t)bench_parse_number(&a,
			    "--min-length", v, 0, 1e9, 1);
		else if ((v = bench_args_value(&a, "--boilerplate-rate",
		    NULL)) != NULL)
			o->bp_rate = bench_parse_number(&a,
			    "--boilerplate-rate", v, 0, 1, 0);
		else if ((v = bench_args_value(&a, "--boilerplate", NULL)) !=
		    NULL) {
			if (strcmp(v, "footer") == 0)
				o->bp_kind = BP_FOOTER;
			else if (strcmp(v, "script") == 0)
				o->bp_kind = BP_SCRIPT;
			else
				bench_args_fail(&a, "invalid value for "
				    "--boilerplate: '%s' (valid: footer, "
				    "script)", v);
		} else if ((v = bench_args_value(&a, "--touch", NULL)) != NULL)
			parse_touch(v, o);
		else if ((v = bench_args_value(&a, "--truth", NULL)) != NULL)
			o->truth = v;
		else
			bench_args_fail(&a, "unknown argument '%s'", arg);
	}
	if (o->touched && o->rate_given)
		bench_args_fail(&a, "--touch makes one copy of each original: "
		    "no --copy-rate or --max-copies with it");
	if (o->negatives && (o->touched || o->bp_rate > 0))
		bench_args_fail(&a, "--negatives makes look-alikes, not "
		    "copies: no --touch or --boilerplate-rate with it");
	if (o->copy_rate > o->max_copies)
		bench_args_fail(&a, "--copy-rate is above --max-copies");
	return (a.i);
}

int
main(int argc, char **argv)
{
	struct options o;
	struct counts c = { 0, 0, 0, 0 };
	struct keyset seen = { NULL, 0, 0 };
	struct nsd_buf out = { NULL, 0, 0 };
	struct pending *pend = NULL;
	size_t npend = 0, pend_cap = 0, *order = NULL, norig, i, j, k, m;
	size_t ncopies = 0;
	size_t per_edit[E_COUNT] = { 0 }, with_block = 0; /* or per kind */
	struct touch_stats ts;
	FILE *truth = NULL;
	int first, status = 0;
	double p;

	first = parse_args(argc, argv, &o);
	tables_init();
	if (o.truth != NULL && (truth = fopen(o.truth, "w")) == NULL) {
		fprintf(stderr, "%s: %s: %s\n", progname, o.truth,
		    strerror(errno));
		status = EXIT_IO;
		goto done;
	}
	if (first >= argc) {
		if (read_input("-", &o, &c, &seen) != 0) {
			status = EXIT_IO;
			goto done;
		}
	}
	for (i = (size_t)first; i < (size_t)argc; i++)
		if (read_input(argv[i], &o, &c, &seen) != 0) {
			status = EXIT_IO;
			goto done;
		}
	if (c.bad > MAX_MESSAGES)
		fprintf(stderr, "%s: %zu bad lines in all, skipped\n",
		    progname, c.bad);

	/* Draw the originals: a partial Fisher-Yates shuffle. */
	rng.state = o.seed;
	bp_rng.state = o.seed ^ 0x5DEECE66DULL;
	touch_rng.state = o.seed ^ 0x2545F4914F6CDD1DULL;
	memset(&ts, 0, sizeof ts);
	norig = o.originals == 0 || o.originals > ndocs ? ndocs : o.originals;
	order = xreallocarray(NULL, ndocs + 1, sizeof *order);
	for (i = 0; i < ndocs; i++)
		order[i] = i;
	for (i = 0; i < norig; i++) {
		j = i + rng_below(ndocs - i);
		k = order[i];
		order[i] = order[j];
		order[j] = k;
		docs[order[i]].chosen = 1;
	}
	/* The blocks, from their own PRNG: the same for both kinds. */
	for (i = 0; i < norig; i++) {
		p = bench_rng_unit(&bp_rng);
		m = (size_t)bench_rng_below(&bp_rng, 3);
		if (o.bp_rate > 0 && p < o.bp_rate) {
			docs[order[i]].site = (int)m;
			with_block++;
		}
	}

	for (i = 0; i < norig; i++) {
		const struct doc *d = &docs[order[i]];
		struct nsd_buf t = { NULL, 0, 0 };

		nsd_buf_append(&t, d->text, d->len);
		put_block(&t, d, o.bp_kind);
		put_record(&out, d->id, d->idlen, t.data, t.len, d->lang);
		nsd_buf_free(&t);
		/* Binomial(max-copies, rate / max-copies) copies. */
		for (m = 0, k = 0; k < o.max_copies && !o.touched; k++)
			m += rng_unit() < o.copy_rate / o.max_copies;
		if (o.touched)
			m = 1;
		for (k = 1; k <= m; k++) {
			struct pending *pe;
			struct doc *other = NULL;
			size_t idcap;

			if (o.negatives && (other = unused_doc(order[i], order,
			    norig)) == NULL)
				break;
			if (npend == pend_cap) {
				pend_cap = pend_cap ? 2 * pend_cap : 64;
				pend = xreallocarray(pend, pend_cap,
				    sizeof *pend);
			}
			pe = &pend[npend++];
			memset(pe, 0, sizeof *pe);
			pe->due = i + rng_below(o.max_gap + 1);
			if (o.negatives) {
				idcap = other->idlen + 24;
				pe->id = xmalloc(idcap);
				snprintf(pe->id, idcap, "%s#n%zu", other->id,
				    k);
				make_lookalike(pe, order[i], other,
				    (enum kind)rng_below(K_COUNT));
				continue;
			}
			idcap = d->idlen + 24;
			pe->id = xmalloc(idcap);
			snprintf(pe->id, idcap, "%s#r%zu", d->id, k);
			if (o.touched)
				make_touched(pe, order[i], &o, &ts);
			else
				make_copy(pe, order[i], &o);
		}
		/* The copies due now, in the order they were made. */
		for (j = 0, k = 0; j < npend; j++) {
			struct pending *pe = &pend[j];

			if (pe->due > i && i + 1 < norig) {
				pend[k++] = *pe;
				continue;
			}
			put_record(&out, pe->id, strlen(pe->id), pe->text.data,
			    pe->text.len, pe->lang);
			if (truth != NULL)
				fprintf(truth, "%s\t%s\t%s\n", pe->id,
				    docs[pe->src].id, pe->edits);
			for (m = 0; m < E_COUNT; m++)
				if (pe->mask & 1U << m)
					per_edit[m]++;
			ncopies++;
			free(pe->id);
			nsd_buf_free(&pe->text);
		}
		npend = k;
		if (out.len >= (1 << 20) && flush_out(&out) != 0) {
			status = EXIT_IO;
			goto done;
		}
	}
	if (flush_out(&out) != 0) {
		status = EXIT_IO;
		goto done;
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "%s: write error: %s\n", progname,
		    strerror(errno));
		status = EXIT_IO;
		goto done;
	}
	if (truth != NULL && (fflush(truth) != 0 || ferror(truth) ||
	    fclose(truth) != 0)) {
		fprintf(stderr, "%s: %s: write error: %s\n", progname, o.truth,
		    strerror(errno));
		status = EXIT_IO;
		goto done;
	}
	if (o.verbose) {
		fprintf(stderr, "%s: %zu lines, %zu bad, %zu short, %zu exact "
		    "repeats, %zu eligible; %zu originals (%zu with a block), "
		    "%zu %s;", progname, c.lines, c.bad, c.shorter,
		    c.repeats, ndocs, norig, with_block, ncopies,
		    o.negatives ? "look-alikes" : "copies");
		if (o.negatives) {
			fprintf(stderr, " kinds:");
			for (m = 0; m < K_COUNT; m++)
				fprintf(stderr, " %s %zu", kind_names[m],
				    per_edit[m]);
		} else if (o.touched)
			touch_report(&o, &ts, ncopies);
		else {
			fprintf(stderr, " edits:");
			for (m = 0; m < E_COUNT; m++)
				fprintf(stderr, " %s %zu", edit_names[m],
				    per_edit[m]);
		}
		fprintf(stderr, "\n");
	}
	if (c.bad > 0)
		status = EXIT_BADLINES;
done:
	free(order);
	free(pend);
	free(seen.v);
	nsd_buf_free(&out);
	return (status);
}
