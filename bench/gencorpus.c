/*
 * nsd-gencorpus: write a synthetic, news-like NDJSON corpus to stdout for
 * benchmarking nsdedup.
 *
 * Each record is {"id":"g-000000123","title":"...","text":"..."}, in Simplified
 * Chinese or English (about half each).  A text is 1-6 KB of paragraphs joined
 * by "\n"; its sentences are put together from phrase pools with random
 * numbers, so two independently generated sentences are practically never the
 * same.  With probability --dup-rate a record is instead a repost of one of
 * the last RING_SIZE records, with a few of the edits a news aggregator makes:
 * a source line or an agency prefix, a footer, a dropped sentence, a few
 * characters changed, different white space.
 *
 * With --edit-rate F, that share of the reposts are instead "edited copies":
 * every sentence of the source is kept but has a typo, a punctuation mark
 * added, dropped or changed, and one digit of a number changed. No sentence
 * survives intact, so a method that matches whole sentences (nshash) misses
 * them; one that compares the bag of words (simhash) may not.  With --truth
 * FILE, each repost's id, its source's id and its kind ("light" or
 * "edited") are written to FILE, one tab-separated line per repost.
 *
 * The output depends only on the seed and the options: the generator has its
 * own PRNG (splitmix64), and a shorter run with the same seed writes a prefix
 * of a longer one.  --truth does not change it, and neither does
 * --edit-rate 0 (the default): the PRNG is drawn from only when the rate is
 * above 0.  Memory is bounded by the ring of recent documents.
 *
 * Build: cc -O2 -Wall -Wextra -o bench/nsd-gencorpus bench/gencorpus.c
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RING_SIZE	1024
#define OUT_FLUSH	(1 << 20)
#define TEXT_MIN	1024
#define TEXT_MAX	5900
#define MIN_BITS	20

enum lang {
	LANG_EN,
	LANG_ZH
};

/* A growable byte buffer. */
struct buf {
	char	*p;
	size_t	 len;
	size_t	 cap;
};

/*
 * A generated document: its sentences are stored back to back in text,
 * sentence i spanning off[i] to off[i + 1]; paraend[i] is set when a
 * paragraph ends after sentence i.
 */
struct doc {
	enum lang	 lang;
	int		 wide_space;	/* Double spaces or indents. */
	struct buf	 title;
	struct buf	 text;
	size_t		*off;
	unsigned char	*paraend;
	size_t		 n;
	size_t		 cap;
};

struct options {
	uint64_t	seed;
	uint64_t	size;
	uint64_t	records;
	double		dup_rate;
	double		edit_rate;
	const char	*truth;
	int		verbose;
};

static const char *progname = "nsd-gencorpus";
static uint64_t rng_state;

/*
 * Phrase pools.  Placeholders: "#" a number (usually 2-999, sometimes up
 * to 9999), "*" 2-99, "|" 1-9, "@" a year, "^" a month, "~" a day of the
 * month, "&" a weekday.
 */
static const char *const en_subj[] = {
	"the city council", "local officials",
	"the regional transport authority", "the company",
	"a spokesperson for the ministry",
	"researchers at the state university", "the harbour board",
	"union leaders", "residents of the old town",
	"the county health service", "farmers in the valley",
	"the energy regulator", "a group of small business owners",
	"the school board", "police", "the weather service", "investors",
	"the mayor", "the opposition party", "engineers working on the project",
	"the museum", "hospital managers", "the ferry operator",
	"the water company", "shopkeepers on the high street",
	"the planning committee", "a coalition of environmental groups",
	"the central bank", "the football club", "the library service",
	"volunteers", "the fire brigade", "the chamber of commerce",
	"the national rail operator", "tenants' associations",
	"the tourism office", "the airport operator",
	"a panel of independent experts", "the caf\xc3\xa9 owners' association",
	"teachers at # primary schools", "the port authority",
	"a local charity", "the provincial government",
	"the building contractor"
};
static const char *const en_verb[] = {
	"approved", "announced", "rejected", "criticised", "welcomed",
	"postponed", "unveiled", "published", "began reviewing", "delayed",
	"agreed to fund", "announced plans to expand", "moved to scrap",
	"agreed to consult on", "began work on", "signed", "questioned",
	"defended", "started preparing", "expected to complete", "called for",
	"completed", "said it would extend", "voted against",
	"asked for details of", "warned about", "praised",
	"set aside money for", "launched",
	"took \"a first step\" towards", "raised concerns over",
	"continued to negotiate", "quietly dropped", "promised to speed up"
};
static const char *const en_obj[] = {
	"a new bus network", "the annual budget",
	"a plan to build # affordable homes", "a $# million flood barrier",
	"the redevelopment of the old docks",
	"a pilot scheme for electric ferries", "changes to parking charges",
	"a review of school meals", "the sale of the municipal stadium",
	"a * percent rise in water bills", "new rules for short-term rentals",
	"a cycle lane along the river", "the closure of two rural clinics",
	"a study of air quality near schools",
	"the contract for street lighting", "a tax break for small farms",
	"plans for a second bridge", "the expansion of the airport",
	"a community solar project", "a ban on plastic packaging",
	"funding for # new teachers", "a programme of free swimming lessons",
	"repairs to the seawall", "the merger of two hospitals",
	"a digital archive of local newspapers",
	"a r\xc3\xa9sum\xc3\xa9 workshop for young job seekers",
	"the restoration of a #-year-old church",
	"new opening hours for the museum", "a fleet of # electric buses",
	"the widening of the coast road", "a night market in the old square",
	"a new wing for the children's hospital", "the town's first skate park",
	"a scheme to plant # trees", "the sale of # hectares of farmland"
};
static const char *const en_mod[] = {
	"on &", "last week", "earlier this month",
	"after months of negotiations", "despite strong opposition",
	"in the northern district", "for the first time since @",
	"by the end of next year", "in a statement", "at a public meeting",
	"following complaints from residents", "ahead of the winter season",
	"in a vote of # to #", "at a cost of about $# million",
	"over the next # years", "across the region", "in the coastal towns",
	"with support from the state government",
	"under pressure from local campaigners", "for the @ financial year",
	"at the request of # residents", "in the first quarter of @",
	"after a review that lasted # months", "on the eve of the election",
	"in a report of # pages", "at the harbour office"
};
static const char *const en_clause[] = {
	", although critics said the timetable was too tight",
	", while others warned that costs could rise by * percent",
	", and said further details would follow",
	"because demand has grown by * percent since @",
	", saying the decision was \"long overdue\"",
	", a move that surprised many observers",
	", which will affect about # households",
	", adding that no final decision had been made",
	", but gave no date for the start of work",
	", the third such decision since @",
	", according to a briefing seen by # councillors",
	"as long as the budget allows it",
	", and the first results are expected in @"
};
static const char *const weekdays[] = {
	"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday",
	"Sunday"
};
static const char *const en_prefix[] = {
	"(Reuters) - ", "(AP) - ", "PORT HALDEN (Harbor Wire) - "
};
static const char *const en_line[] = {
	"(Adds details in paragraph 3)", "(Corrects spelling of name)",
	"Updated at 14:05"
};
static const char *const en_footer[] = {
	"Copyright 2026 Reuters.",
	"Reporting by A. Writer; Editing by B. Editor", "(Reporting by staff)",
	"All rights reserved."
};

/* Chinese phrase pools. */
static const char *const zh_time[] = {
	"今年以来", "近日", "上周", "本月初", "截至^月底", "^月~日上午",
	"记者从有关部门获悉", "据了解", "近年来", "日前", "今年前三季度",
	"去年下半年以来", "昨天下午", "春节前夕", "国庆假期期间", "@年",
	"入秋以来", "进入汛期后"
};
static const char *const zh_subj[] = {
	"市政府", "相关部门", "该公司", "研究团队", "当地居民", "县农业农村局",
	"市交通运输局", "区教育局", "省生态环境厅", "不少市民", "企业负责人",
	"专家", "社区工作人员", "景区管理处", "市场监管部门", "市第一人民医院",
	"合作社", "志愿者", "派出所民警", "气象部门", "开发区管委会",
	"市图书馆", "海关", "港口集团", "文旅部门", "街道办事处", "供电公司",
	"消防救援支队"
};
static const char *const zh_act[] = {
	"启动了老旧小区改造工程", "发布了新的产业扶持政策",
	"完成了#公里道路的升级改造", "新建了#个公共充电站",
	"推出了一批便民服务措施", "开展了为期#天的专项检查", "投入资金#万元",
	"引进了#家科技型企业", "修复了#处历史建筑", "组织了#场招聘会",
	"加快推进轨道交通建设", "接待游客#万人次", "处理群众投诉#件",
	"建成了被称为“家门口的好去处”的口袋公园", "为#名老人送去了冬衣",
	"完成了#亩高标准农田建设", "开通了#条夜间公交线路", "更换了#盏节能路灯",
	"上线了“一网通办”服务平台", "对#家餐饮单位进行了抽检", "新增托育位#个",
	"清理河道#公里"
};
static const char *const zh_more[] = {
	"同比增长*.|%", "比去年同期提高了|个百分点", "惠及居民#余户",
	"预计明年年底前全部完工", "进一步提升了群众的获得感",
	"受到了社会各界的广泛关注", "带动就业#余人", "覆盖全市#个街道",
	"为下一步工作打下了坚实基础", "有效缓解了高峰时段的交通压力",
	"“1|分钟生活圈”初步形成", "累计投入#亿元", "总体满意度达到*.|%",
	"相关工作将持续推进", "部分项目已提前完成", "其中农村地区占|成以上",
	"群众反映的问题得到了及时解决", "目前已进入收尾阶段"
};
static const char *const zh_prefix[] = {
	"据新华社报道，", "本报讯 ", "新华社电 "
};
static const char *const zh_line[] = {
	"（来源：东沅日报）", "（来源：青岚发布）", "转自：云泽融媒"
};
static const char *const zh_footer[] = {
	"责任编辑：王某", "（完）", "来源：东沅日报 编辑：李某",
	"（责任编辑：张某）"
};
static const char *const zh_endp[] = {
	"。", "。", "。", "。", "！", "？", "；"
};
static const char *const zh_swap[] = {
	"的", "在", "和", "新", "大", "市", "区", "县", "人", "年"
};

#define NELEMS(a)	(sizeof(a) / sizeof((a)[0]))

static void
fatal(const char *msg)
{
	fprintf(stderr, "%s: %s\n", progname, msg);
	exit(1);
}

static void *
xrealloc(void *p, size_t n)
{
	if ((p = realloc(p, n)) == NULL)
		fatal("out of memory");
	return (p);
}

/* Splitmix64: small, fast and well distributed; the seed is the state. */
static uint64_t
rng_next(void)
{
	uint64_t z;

	z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return (z ^ (z >> 31));
}

/* A uniform integer in [0, n), n < 2^32. */
static uint32_t
rng_below(uint32_t n)
{
	return ((uint32_t)(((rng_next() >> 32) * (uint64_t)n) >> 32));
}

/* A uniform integer in [lo, hi]. */
static uint32_t
rng_range(uint32_t lo, uint32_t hi)
{
	return (lo + rng_below(hi - lo + 1));
}

static double
rng_unit(void)
{
	return ((double)(rng_next() >> 11) * (1.0 / 9007199254740992.0));
}

#define PICK(a)		((a)[rng_below(NELEMS(a))])

static void
buf_reserve(struct buf *b, size_t more)
{
	if (b->len + more <= b->cap)
		return;
	while (b->len + more > b->cap)
		b->cap = b->cap ? b->cap * 2 : 256;
	b->p = xrealloc(b->p, b->cap);
}

static void
buf_add(struct buf *b, const char *s, size_t n)
{
	buf_reserve(b, n);
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static void
buf_adds(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

static void
buf_add_uint(struct buf *b, uint32_t v)
{
	char tmp[16];
	size_t i = sizeof(tmp);

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	buf_add(b, tmp + i, sizeof(tmp) - i);
}

/*
 * Append a phrase, replacing each "#" by a random number and each "@" by a
 * year.  Returns the number of code points appended.
 */
static size_t
buf_add_phrase(struct buf *b, const char *s)
{
	size_t start = b->len, cps = 0, i;
	const char *p;

	for (p = s; *p != '\0'; p++) {
		switch (*p) {
		case '#':
			buf_add_uint(b, rng_below(4) ? rng_range(2, 999) :
			    rng_range(1000, 9999));
			break;
		case '*':
			buf_add_uint(b, rng_range(2, 99));
			break;
		case '|':
			buf_add_uint(b, rng_range(1, 9));
			break;
		case '@':
			buf_add_uint(b, rng_range(1950, 2026));
			break;
		case '^':
			buf_add_uint(b, rng_range(1, 12));
			break;
		case '~':
			buf_add_uint(b, rng_range(1, 28));
			break;
		case '&':
			buf_adds(b, PICK(weekdays));
			break;
		default:
			buf_add(b, p, 1);
			break;
		}
	}
	for (i = start; i < b->len; i++)
		if (((unsigned char)b->p[i] & 0xc0) != 0x80)
			cps++;
	return (cps);
}

/* The number of words in a phrase; a lone comma is not a word. */
static size_t
count_words(const char *s)
{
	size_t n = 0;
	int inword = 0;

	for (; *s != '\0'; s++) {
		if (*s == ' ' || *s == ',')
			inword = 0;
		else if (!inword) {
			inword = 1;
			n++;
		}
	}
	return (n);
}

static void
doc_clear(struct doc *d, enum lang lang)
{
	d->lang = lang;
	d->wide_space = 0;
	d->title.len = 0;
	d->text.len = 0;
	d->n = 0;
	if (d->off == NULL) {
		d->cap = 64;
		d->off = xrealloc(NULL, (d->cap + 1) * sizeof(*d->off));
		d->paraend = xrealloc(NULL, d->cap);
	}
	d->off[0] = 0;
}

/* Close the sentence that ends at the current end of d->text. */
static void
doc_end_sentence(struct doc *d, int paraend)
{
	if (d->n == d->cap) {
		d->cap *= 2;
		d->off = xrealloc(d->off, (d->cap + 1) * sizeof(*d->off));
		d->paraend = xrealloc(d->paraend, d->cap);
	}
	d->paraend[d->n] = (unsigned char)paraend;
	d->off[++d->n] = d->text.len;
}

/*
 * Pick an index below n (n <= 64) that is not yet set in *used, and set it,
 * so that no phrase repeats within a sentence.
 */
static size_t
pick_unused(size_t n, uint64_t *used)
{
	size_t i;

	i = rng_below((uint32_t)n);
	while (*used & (1ULL << i))
		i = (i + 1) % n;
	*used |= 1ULL << i;
	return (i);
}

/* About how many random bits the numbers of a phrase's placeholders add. */
static size_t
number_bits(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++) {
		switch (*s) {
		case '#': n += 10; break;
		case '*': case '@': n += 6; break;
		case '~': n += 4; break;
		case '^': case '|': n += 3; break;
		default: break;
		}
	}
	return (n);
}

/*
 * Like pick_unused, but only phrases with a number qualify; returns n when
 * none is left.  Sentences get numbers worth at least MIN_BITS random bits
 * this way, so that two independently generated ones practically never
 * coincide.
 */
static size_t
pick_numeric(const char *const *pool, size_t n, uint64_t *used)
{
	size_t i, k;

	i = rng_below((uint32_t)n);
	for (k = 0; k < n; k++, i = (i + 1) % n) {
		if ((*used & (1ULL << i)) == 0 && number_bits(pool[i]) > 0) {
			*used |= 1ULL << i;
			return (i);
		}
	}
	return (n);
}

/* An English sentence of 8 to 30 words ending with a full stop. */
static void
gen_en_sentence(struct buf *b)
{
	size_t start = b->len, words = 0, nums = 0, target, w, i;
	uint64_t used_mod = 0, used_clause = 0;
	const char *c;
	int tries;

	target = rng_range(8, 30);
	for (i = 0; i < 3; i++) {
		c = i == 0 ? PICK(en_subj) : i == 1 ? PICK(en_verb) :
		    PICK(en_obj);
		if (i > 0)
			buf_adds(b, " ");
		buf_add_phrase(b, c);
		words += count_words(c);
		nums += number_bits(c);
	}
	for (tries = 0; words < 30 && tries < 12; tries++) {
		if (nums < MIN_BITS) {
			i = pick_numeric(en_mod, NELEMS(en_mod), &used_mod);
			if (i == NELEMS(en_mod))
				break;
			c = en_mod[i];
		} else if (words >= target)
			break;
		else if (rng_below(4))
			c = en_mod[pick_unused(NELEMS(en_mod), &used_mod)];
		else
			c = en_clause[pick_unused(NELEMS(en_clause),
			    &used_clause)];
		w = count_words(c);
		if (words + w > 30)
			continue;
		if (c[0] != ',')
			buf_adds(b, " ");
		buf_add_phrase(b, c);
		words += w;
		nums += number_bits(c);
	}
	buf_adds(b, ".");
	if (b->p[start] >= 'a' && b->p[start] <= 'z')
		b->p[start] = (char)(b->p[start] - 'a' + 'A');
}

/*
 * Append "，" and a phrase to a Chinese sentence of *cps code points, unless
 * that makes it longer than 79; returns whether it was appended.
 */
static int
zh_add_clause(struct buf *b, const char *c, size_t *cps)
{
	size_t before = b->len, n;

	buf_adds(b, "，");
	n = 1 + buf_add_phrase(b, c);
	if (*cps + n > 79) {
		b->len = before;
		return (0);
	}
	*cps += n;
	return (1);
}

/* A Chinese sentence of 20 to 80 code points. */
static void
gen_zh_sentence(struct buf *b)
{
	size_t cps = 0, nums = 0, target, i;
	uint64_t used_act = 0, used_more = 0;
	const char *c;

	target = rng_range(20, 76);
	if (rng_below(2)) {
		c = PICK(zh_time);
		cps += buf_add_phrase(b, c) + 1;
		nums += number_bits(c);
		buf_adds(b, "，");
	}
	c = PICK(zh_subj);
	cps += buf_add_phrase(b, c);
	c = zh_act[pick_unused(NELEMS(zh_act), &used_act)];
	cps += buf_add_phrase(b, c);
	nums += number_bits(c);
	while (nums < MIN_BITS) {
		i = pick_numeric(zh_more, NELEMS(zh_more), &used_more);
		if (i == NELEMS(zh_more) || !zh_add_clause(b, zh_more[i], &cps))
			break;
		nums += number_bits(zh_more[i]);
	}
	while (cps < target) {
		if (rng_below(3))
			c = zh_more[pick_unused(NELEMS(zh_more), &used_more)];
		else
			c = zh_act[pick_unused(NELEMS(zh_act), &used_act)];
		if (!zh_add_clause(b, c, &cps))
			break;
	}
	buf_adds(b, PICK(zh_endp));
}

static void
gen_title(struct buf *b, enum lang lang)
{
	size_t start = b->len;

	if (lang == LANG_ZH) {
		buf_add_phrase(b, PICK(zh_subj));
		buf_add_phrase(b, PICK(zh_act));
		return;
	}
	buf_add_phrase(b, PICK(en_subj));
	buf_adds(b, " ");
	buf_add_phrase(b, PICK(en_verb));
	buf_adds(b, " ");
	buf_add_phrase(b, PICK(en_obj));
	if (b->p[start] >= 'a' && b->p[start] <= 'z')
		b->p[start] = (char)(b->p[start] - 'a' + 'A');
}

/* A new, original document of 1 to 6 KB. */
static void
gen_doc(struct doc *d)
{
	size_t target, left;

	doc_clear(d, rng_below(2) ? LANG_ZH : LANG_EN);
	gen_title(&d->title, d->lang);
	target = rng_range(TEXT_MIN, TEXT_MAX);
	while (d->text.len < target) {
		left = rng_range(2, 6);
		while (left-- > 0 && d->text.len < target) {
			if (d->lang == LANG_ZH)
				gen_zh_sentence(&d->text);
			else
				gen_en_sentence(&d->text);
			doc_end_sentence(d, 0);
		}
		d->paraend[d->n - 1] = 1;
	}
}

/* Change a few characters of sentence i, keeping the UTF-8 valid. */
static void
mutate_sentence(struct doc *d, size_t i)
{
	unsigned char *s = (unsigned char *)d->text.p + d->off[i];
	size_t len = d->off[i + 1] - d->off[i], k, j, edits;
	const char *rep;

	edits = rng_range(1, 3);
	while (edits-- > 0) {
		k = rng_below((uint32_t)len);
		for (j = 0; j < len; j++, k = (k + 1) % len) {
			if (d->lang == LANG_EN && s[k] >= 'a' && s[k] <= 'z') {
				s[k] = (unsigned char)('a' + rng_below(26));
				break;
			}
			/* A CJK ideograph: lead byte E4..E9, 3 bytes. */
			if (d->lang == LANG_ZH && s[k] >= 0xe4 &&
			    s[k] <= 0xe9 && k + 2 < len) {
				rep = PICK(zh_swap);
				memcpy(s + k, rep, 3);
				break;
			}
		}
	}
}

/*
 * A repost of src: the same sentences with some of the edits an aggregator
 * makes.  At least one edit is always made.
 */
static void
gen_repost(struct doc *d, const struct doc *src)
{
	int prefix, line, footer, drop, change, space;
	size_t i, dropped = SIZE_MAX, changed = SIZE_MAX, s0;

	doc_clear(d, src->lang);
	prefix = rng_below(3) == 0;
	line = !prefix && rng_below(4) == 0;
	footer = rng_below(2) != 0;
	drop = src->n > 2 && rng_below(2);
	change = rng_below(2) != 0;
	space = rng_below(5) == 0;
	if (!prefix && !line && !footer && !drop)
		change = 1;

	if (rng_below(3) == 0)
		gen_title(&d->title, d->lang);
	else {
		if (d->lang == LANG_EN && rng_below(2) &&
		    (src->title.len < 9 ||
		    memcmp(src->title.p, "UPDATE 1-", 9) != 0))
			buf_adds(&d->title, "UPDATE 1-");
		buf_add(&d->title, src->title.p, src->title.len);
	}
	if (drop)
		dropped = rng_below((uint32_t)src->n);
	if (change)
		changed = rng_below((uint32_t)src->n);
	d->wide_space = src->wide_space || space;

	if (line) {
		buf_adds(&d->text, d->lang == LANG_ZH ? PICK(zh_line) :
		    PICK(en_line));
		doc_end_sentence(d, 1);
	}
	for (i = 0; i < src->n; i++) {
		if (i == dropped) {
			/* Keep the paragraph break of a dropped sentence. */
			if (src->paraend[i] && d->n > 0)
				d->paraend[d->n - 1] = 1;
			continue;
		}
		s0 = d->text.len;
		if (prefix && d->n == 0) {
			buf_adds(&d->text, d->lang == LANG_ZH ?
			    PICK(zh_prefix) : PICK(en_prefix));
			prefix = 0;
		}
		buf_add(&d->text, src->text.p + src->off[i],
		    src->off[i + 1] - src->off[i]);
		doc_end_sentence(d, src->paraend[i]);
		if (i == changed && d->text.len > s0)
			mutate_sentence(d, d->n - 1);
	}
	if (footer) {
		if (d->n > 0)
			d->paraend[d->n - 1] = 1;
		buf_adds(&d->text, d->lang == LANG_ZH ? PICK(zh_footer) :
		    PICK(en_footer));
		doc_end_sentence(d, 1);
	}
}

/* Whether s[k] starts a CJK ideograph (lead byte E4..E9, 3 bytes). */
static int
is_han(const unsigned char *s, size_t len, size_t k)
{
	return (s[k] >= 0xe4 && s[k] <= 0xe9 && k + 2 < len);
}

/*
 * Change one digit of one number in b[from..), keeping it a number of as
 * many digits.  Returns 0 when there is no digit.
 */
static int
edit_number(struct buf *b, size_t from)
{
	size_t len = b->len - from, k, j, ndig = 0;
	unsigned char *s = (unsigned char *)b->p + from, d;

	for (k = 0; k < len; k++)
		ndig += s[k] >= '0' && s[k] <= '9';
	if (ndig == 0)
		return (0);
	j = rng_below((uint32_t)ndig);
	for (k = 0; k < len; k++)
		if (s[k] >= '0' && s[k] <= '9' && j-- == 0)
			break;
	d = (unsigned char)(s[k] - '0');
	/* A leading digit of a longer number stays nonzero. */
	if ((k == 0 || s[k - 1] < '0' || s[k - 1] > '9') && k + 1 < len &&
	    s[k + 1] >= '0' && s[k + 1] <= '9')
		d = (unsigned char)(1 + (d - 1 + 1 + rng_below(8)) % 9);
	else
		d = (unsigned char)((d + 1 + rng_below(9)) % 10);
	s[k] = (unsigned char)('0' + d);
	return (1);
}

/*
 * A typo in b[from..): an English letter or a Chinese character replaced by
 * another one.  Returns 0 when there is none to replace.
 */
static int
edit_typo(struct buf *b, size_t from, enum lang lang)
{
	size_t len = b->len - from, k, j;
	unsigned char *s = (unsigned char *)b->p + from;
	const char *rep;

	if (len == 0)
		return (0);
	k = rng_below((uint32_t)len);
	for (j = 0; j < len; j++, k = (k + 1) % len) {
		if (lang == LANG_EN && s[k] >= 'a' && s[k] <= 'z') {
			s[k] = (unsigned char)('a' +
			    (s[k] - 'a' + 1 + rng_below(25)) % 26);
			return (1);
		}
		if (lang == LANG_ZH && is_han(s, len, k)) {
			do
				rep = PICK(zh_swap);
			while (memcmp(s + k, rep, 3) == 0);
			memcpy(s + k, rep, 3);
			return (1);
		}
	}
	return (0);
}

/* Replace n bytes at b[at] by the string r. */
static void
buf_splice(struct buf *b, size_t at, size_t n, const char *r)
{
	size_t rl = strlen(r);

	buf_reserve(b, rl);
	memmove(b->p + at + rl, b->p + at + n, b->len - at - n);
	memcpy(b->p + at, r, rl);
	b->len = b->len - n + rl;
}

/*
 * Change the punctuation of the sentence b[from..): a comma (English) or
 * "，" (Chinese) dropped or, in Chinese, turned into "、"; or, when there is
 * none, one added.
 */
static void
edit_punct(struct buf *b, size_t from, enum lang lang)
{
	const char *comma = lang == LANG_ZH ? "，" : ",";
	size_t cl = strlen(comma), len = b->len - from, k, n = 0, j, sp = 0;
	const char *s = b->p + from;

	for (k = 0; k + cl <= len; k++)
		n += memcmp(s + k, comma, cl) == 0;
	if (n > 0) {
		j = rng_below((uint32_t)n);
		for (k = 0; k + cl <= len; k++)
			if (memcmp(s + k, comma, cl) == 0 && j-- == 0)
				break;
		buf_splice(b, from + k, cl, lang == LANG_ZH &&
		    rng_below(2) ? "、" : "");
		return;
	}
	if (lang == LANG_ZH) {
		/* Before the last character, the sentence's end mark. */
		k = len;
		while (k > 0 && ((unsigned char)s[k - 1] & 0xc0) == 0x80)
			k--;
		buf_splice(b, from + (k > 0 ? k - 1 : 0), 0, comma);
		return;
	}
	/* After a word: at one of the spaces. */
	for (k = 0; k < len; k++)
		sp += s[k] == ' ';
	if (sp == 0) {
		buf_splice(b, b->len > from ? b->len - 1 : from, 0, ",");
		return;
	}
	j = rng_below((uint32_t)sp);
	for (k = 0; k < len; k++)
		if (s[k] == ' ' && j-- == 0)
			break;
	buf_splice(b, from + k, 0, ",");
}

/*
 * An edited copy of src: every sentence kept, each with a number changed, a
 * typo and a punctuation change, and sometimes a footer added.
 */
static void
gen_edited(struct doc *d, const struct doc *src)
{
	size_t i, s0;

	doc_clear(d, src->lang);
	buf_add(&d->title, src->title.p, src->title.len);
	d->wide_space = src->wide_space;
	for (i = 0; i < src->n; i++) {
		s0 = d->text.len;
		buf_add(&d->text, src->text.p + src->off[i],
		    src->off[i + 1] - src->off[i]);
		edit_number(&d->text, s0);
		edit_typo(&d->text, s0, d->lang);
		edit_punct(&d->text, s0, d->lang);
		doc_end_sentence(d, src->paraend[i]);
	}
	if (rng_below(2)) {
		if (d->n > 0)
			d->paraend[d->n - 1] = 1;
		buf_adds(&d->text, d->lang == LANG_ZH ? PICK(zh_footer) :
		    PICK(en_footer));
		doc_end_sentence(d, 1);
	}
}

/*
 * Append s as the inside of a JSON string.  Newlines, quotes and backslashes
 * are escaped, and every U+00E9 is written as \u00e9 so that readers meet
 * \u escapes too.
 */
static void
json_add(struct buf *b, const char *s, size_t n)
{
	size_t i, run = 0;
	unsigned char c;

	buf_reserve(b, n * 2);
	for (i = 0; i < n; i++) {
		c = (unsigned char)s[i];
		if (c != '"' && c != '\\' && c != '\n' && c != 0xc3)
			continue;
		if (c == 0xc3 &&
		    (i + 1 == n || (unsigned char)s[i + 1] != 0xa9))
			continue;
		buf_add(b, s + run, i - run);
		if (c == '"')
			buf_add(b, "\\\"", 2);
		else if (c == '\\')
			buf_add(b, "\\\\", 2);
		else if (c == '\n')
			buf_add(b, "\\n", 2);
		else {
			buf_add(b, "\\u00e9", 6);
			i++;
		}
		run = i + 1;
	}
	buf_add(b, s + run, n - run);
}

/* Serialize one record as a line of NDJSON. */
static void
write_record(struct buf *out, struct buf *tmp, const struct doc *d,
    uint64_t id)
{
	char idbuf[32];
	size_t i;

	snprintf(idbuf, sizeof(idbuf), "g-%09llu", (unsigned long long)id);
	buf_adds(out, "{\"id\":\"");
	buf_adds(out, idbuf);
	buf_adds(out, "\",\"title\":\"");
	json_add(out, d->title.p, d->title.len);
	buf_adds(out, "\",\"text\":\"");

	tmp->len = 0;
	for (i = 0; i < d->n; i++) {
		if (i > 0 && d->paraend[i - 1]) {
			buf_adds(tmp, "\n");
			if (d->wide_space && d->lang == LANG_ZH)
				buf_adds(tmp, "\xe3\x80\x80\xe3\x80\x80");
		} else if (i > 0 && d->lang == LANG_EN)
			buf_adds(tmp, d->wide_space ? "  " : " ");
		buf_add(tmp, d->text.p + d->off[i], d->off[i + 1] - d->off[i]);
	}
	json_add(out, tmp->p, tmp->len);
	buf_adds(out, "\"}\n");
}

static void
flush_out(struct buf *out)
{
	if (out->len > 0 && fwrite(out->p, 1, out->len, stdout) != out->len) {
		fprintf(stderr, "%s: write error: %s\n", progname,
		    strerror(errno));
		exit(1);
	}
	out->len = 0;
}

static void
usage(int status)
{
	FILE *f = status == 0 ? stdout : stderr;

	fprintf(f, "usage: %s [--seed N] [--size BYTES] [--records N] "
	    "[--dup-rate F]\n"
	    "                     [--edit-rate F] [--truth FILE] [--verbose]\n",
	    progname);
	if (status != 0) {
		fprintf(f, "Try '%s --help'.\n", progname);
		exit(status);
	}
	fprintf(f, "\n"
	    "Write a synthetic news-like NDJSON corpus to standard output.\n\n"
	    "  --seed N       PRNG seed (default 1); the output depends only\n"
	    "                 on the seed and the options\n"
	    "  --size BYTES   stop before the output would exceed BYTES;\n"
	    "                 K, M, G suffixes are powers of 1024 (default\n"
	    "                 100M unless --records is given)\n"
	    "  --records N    stop after N records\n"
	    "  --dup-rate F   share of records that are near-copies of a\n"
	    "                 recent record, 0 to 1 (default 0.2)\n"
	    "  --edit-rate F  share of those near-copies that have every\n"
	    "                 sentence edited (a typo, a punctuation mark, a\n"
	    "                 digit), 0 to 1 (default 0)\n"
	    "  --truth FILE   write each near-copy's id, its source's id and\n"
	    "                 its kind (light or edited) to FILE, one\n"
	    "                 tab-separated line each\n"
	    "  --verbose      print record, repost and byte counts to stderr\n"
	    "  --help         show this help\n");
	exit(0);
}

/* Parse an unsigned number with an optional K/M/G suffix. */
static uint64_t
parse_size(const char *opt, const char *s, int suffixes)
{
	unsigned long long v;
	uint64_t mul = 1;
	char *end;

	errno = 0;
	if (*s < '0' || *s > '9')
		goto bad;
	v = strtoull(s, &end, 10);
	if (errno != 0)
		goto bad;
	if (suffixes && *end != '\0') {
		switch (*end) {
		case 'k': case 'K': mul = 1ULL << 10; break;
		case 'm': case 'M': mul = 1ULL << 20; break;
		case 'g': case 'G': mul = 1ULL << 30; break;
		default: goto bad;
		}
		end++;
	}
	if (*end != '\0' || v > UINT64_MAX / mul)
		goto bad;
	return ((uint64_t)v * mul);
bad:
	fprintf(stderr, "%s: invalid value for %s: '%s'\n", progname, opt, s);
	usage(2);
	return (0);
}

/* Match "--name VALUE" or "--name=VALUE"; returns the value or NULL. */
static const char *
opt_value(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);
	const char *a = argv[*i];

	if (strncmp(a, name, n) != 0)
		return (NULL);
	if (a[n] == '=')
		return (a + n + 1);
	if (a[n] != '\0')
		return (NULL);
	if (*i + 1 >= argc) {
		fprintf(stderr, "%s: option '%s' needs a value\n", progname,
		    name);
		usage(2);
	}
	return (argv[++*i]);
}

/* Parse a share from 0 to 1. */
static double
parse_rate(const char *opt, const char *s)
{
	double v;
	char *end;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(v >= 0.0 && v <= 1.0)) {
		fprintf(stderr, "%s: invalid value for %s: '%s' (0 to 1)\n",
		    progname, opt, s);
		usage(2);
	}
	return (v);
}

static void
parse_args(int argc, char **argv, struct options *o)
{
	const char *v;
	int i, have_size = 0, have_records = 0;

	o->seed = 1;
	o->size = UINT64_MAX;
	o->records = UINT64_MAX;
	o->dup_rate = 0.2;
	o->edit_rate = 0;
	o->truth = NULL;
	o->verbose = 0;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 ||
		    strcmp(argv[i], "-h") == 0)
			usage(0);
		else if (strcmp(argv[i], "--verbose") == 0 ||
		    strcmp(argv[i], "-v") == 0)
			o->verbose = 1;
		else if ((v = opt_value(argc, argv, &i, "--seed")) != NULL)
			o->seed = parse_size("--seed", v, 0);
		else if ((v = opt_value(argc, argv, &i, "--size")) != NULL) {
			o->size = parse_size("--size", v, 1);
			have_size = 1;
		} else if ((v = opt_value(argc, argv, &i, "--records")) !=
		    NULL) {
			o->records = parse_size("--records", v, 0);
			have_records = 1;
		} else if ((v = opt_value(argc, argv, &i, "--dup-rate")) !=
		    NULL)
			o->dup_rate = parse_rate("--dup-rate", v);
		else if ((v = opt_value(argc, argv, &i, "--edit-rate")) !=
		    NULL)
			o->edit_rate = parse_rate("--edit-rate", v);
		else if ((v = opt_value(argc, argv, &i, "--truth")) != NULL)
			o->truth = v;
		else {
			fprintf(stderr, "%s: unknown argument '%s'\n", progname,
			    argv[i]);
			usage(2);
		}
	}
	if (!have_size && !have_records)
		o->size = 100ULL << 20;
}

int
main(int argc, char **argv)
{
	static struct doc ring[RING_SIZE];
	static uint64_t ring_id[RING_SIZE];
	struct options o;
	struct buf out = { NULL, 0, 0 }, tmp = { NULL, 0, 0 };
	uint64_t id, total = 0, reposts = 0, edited = 0, src_id = 0;
	size_t filled = 0, slot, src, mark;
	int repost, edit = 0;
	FILE *truth = NULL;

	parse_args(argc, argv, &o);
	if (o.truth != NULL && (truth = fopen(o.truth, "w")) == NULL) {
		fprintf(stderr, "%s: %s: %s\n", progname, o.truth,
		    strerror(errno));
		return (1);
	}
	rng_state = o.seed;
	/* Every document is written to the ring slot it replaces. */
	for (id = 1; id <= o.records; id++) {
		slot = (size_t)((id - 1) % RING_SIZE);
		repost = filled > 1 && rng_unit() < o.dup_rate;
		if (repost) {
			do
				src = rng_below((uint32_t)filled);
			while (src == slot);
			src_id = ring_id[src];
			/* No draw at rate 0: the default output stays put. */
			edit = o.edit_rate > 0 && rng_unit() < o.edit_rate;
			if (edit)
				gen_edited(&ring[slot], &ring[src]);
			else
				gen_repost(&ring[slot], &ring[src]);
		} else
			gen_doc(&ring[slot]);
		ring_id[slot] = id;
		if (filled < RING_SIZE)
			filled++;

		mark = out.len;
		write_record(&out, &tmp, &ring[slot], id);
		if (out.len - mark > o.size - total) {
			out.len = mark;
			break;
		}
		total += out.len - mark;
		if (repost) {
			reposts++;
			edited += edit;
		}
		if (repost && truth != NULL)
			fprintf(truth, "g-%09llu\tg-%09llu\t%s\n",
			    (unsigned long long)id, (unsigned long long)src_id,
			    edit ? "edited" : "light");
		if (out.len >= OUT_FLUSH)
			flush_out(&out);
	}
	flush_out(&out);
	free(out.p);
	free(tmp.p);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "%s: write error: %s\n", progname,
		    strerror(errno));
		return (1);
	}
	if (truth != NULL && (fflush(truth) != 0 || ferror(truth) ||
	    fclose(truth) != 0)) {
		fprintf(stderr, "%s: %s: write error: %s\n", progname, o.truth,
		    strerror(errno));
		return (1);
	}
	if (o.verbose && o.edit_rate > 0)
		fprintf(stderr, "%s: %llu records, %llu reposts, %llu bytes, "
		    "%llu of the reposts edited\n", progname,
		    (unsigned long long)(id - 1), (unsigned long long)reposts,
		    (unsigned long long)total, (unsigned long long)edited);
	else if (o.verbose)
		fprintf(stderr, "%s: %llu records, %llu reposts, %llu bytes\n",
		    progname, (unsigned long long)(id - 1),
		    (unsigned long long)reposts, (unsigned long long)total);
	return (0);
}
