/*
 * nsd-gencorpus: write a synthetic, news-like NDJSON corpus to stdout for
 * benchmarking nsdedup.
 *
 * Each record is {"id":"g-000000123","title":"...","text":"..."}, in Simplified
 * Chinese or English (about half each).  A text is 1-6 KB of paragraphs joined
 * by "\n".
 *
 * The words.  A sentence is a frame from small phrase pools ("the mayor of
 * > approved a plan to build # _ homes") whose slots are filled with
 * random numbers and with words of two kinds:
 *
 *  - a fixed lexicon of 2^16 words per language, drawn by Zipf's law (the
 *    word of rank r about as often as 1/r).  English words are
 *    pronounceable strings of one to four syllables, the frequent ones
 *    shorter; Chinese words are one to three characters of a table of
 *    about 2000 common Han characters, written here in rough order of
 *    frequency and drawn with a bias to the common ones.  Word r depends
 *    on r alone, so every seed speaks the same language;
 *  - the document's topic: a few people, places and terms made up for it,
 *    which recur through its sentences, as names do in news.
 *
 * Why not frames alone: a SimHash bit of two texts differs with
 * probability theta / pi, theta the angle between their vectors of feature
 * counts (nsdedup weighs a feature by how often it occurs).  When unrelated
 * texts draw most of their features from one small pool, they are a small
 * angle apart and meet in the block tables far more often than chance: a
 * lookup meets a share of the whole corpus, not a handful of records.  Here
 * the frames are what all documents share, like function words; their
 * slots are placed so that runs of frame words stay short (a three-word
 * shingle or a Chinese bigram inside a frame is shared, one that takes in a
 * slot mostly is not), which leaves about three tenths of the features of
 * either language shared, spread over many distinct ones.  Unrelated
 * documents then meet in the block tables about as rarely as real news
 * does.
 *
 * Each sentence has at least one number, and numbers and lexicon words
 * worth MIN_BITS random bits, so that two independently generated
 * sentences are practically never the same.
 *
 * Reposts.  With probability --dup-rate a record is instead a repost of one
 * of the last RING_SIZE records, with a few of the edits a news aggregator
 * makes: a source line or an agency prefix, a footer, a dropped sentence,
 * a few characters of one sentence changed, different white space.  Its
 * kind is "light".
 *
 * Edited copies.  With --edit-rate F, that share of the reposts are instead
 * copies that keep every sentence, with characters changed in some of them;
 * --edit-strength says how many (kind "edited-STRENGTH"):
 *
 *   longest  one character in each sentence that nshash fingerprints (by
 *            default the 5 longest of more than 30 code points, not
 *            counting the end mark, ties going to the earlier), and nothing
 *            else: the least change that leaves a method matching whole
 *            sentences nothing to match on (the default);
 *   every    one character in every sentence;
 *   heavy    in every sentence a typo, a punctuation mark added, dropped or
 *            changed, and a digit changed; half of them get a footer.
 *
 * A changed character is a typo (a letter or a Han character replaced by
 * another), a digit of a number changed, or in Chinese a character
 * replaced by one that looks like it (未 as 末); none changes a sentence's
 * length.  Full-width and half-width forms are not swapped, and neither
 * are Simplified and Traditional ones (国 and 國): nsdedup's normalization
 * folds them, so such a swap would change nothing any method compares.
 *
 * With --truth FILE, each repost's id, its source's id and its kind are
 * written to FILE, one tab-separated line per repost.
 *
 * The output depends only on the seed and the options: the generator has its
 * own PRNG (splitmix64), and a shorter run with the same seed writes a prefix
 * of a longer one.  --truth does not change it, and neither does
 * --edit-rate 0 (the default) whatever --edit-strength says: the PRNG is
 * drawn from for edits only when the rate is above 0.  Memory is bounded by
 * the lexicons and the ring of recent documents.
 *
 * Build: cc -O2 -Wall -Wextra -o bench/nsd-gencorpus bench/gencorpus.c
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib.h"

#define RING_SIZE	1024
#define OUT_FLUSH	(1 << 20)
#define TEXT_MIN	1024
#define TEXT_MAX	5900
#define MIN_BITS	20		/* see phrase_bits() */
#define LEX_BITS	16		/* 2^16 words in each lexicon */
#define LEX_HEAD	4		/* the first 2^4 ranks: one octave */
#define NS_SENTENCES	5		/* nshash's defaults: the 5 longest */
#define NS_MIN_CPS	30		/* sentences of more than 30 cps */
#define TOPIC_PEOPLE	4
#define TOPIC_PLACES	3
#define TOPIC_TERMS	6
#define TOPIC_WORDS	(TOPIC_PEOPLE + TOPIC_PLACES + TOPIC_TERMS)

enum lang {
	LANG_EN,
	LANG_ZH
};

enum strength {
	EDIT_LONGEST,
	EDIT_EVERY,
	EDIT_HEAVY
};

/* --edit-strength's values, sorted, and the kinds they name in --truth. */
static const struct {
	const char	*name;
	enum strength	 strength;
	const char	*kind;
} strengths[] = {
	{ "every", EDIT_EVERY, "edited-every" },
	{ "heavy", EDIT_HEAVY, "edited-heavy" },
	{ "longest", EDIT_LONGEST, "edited-longest" }
};

/* A growable byte buffer. */
struct buf {
	char	*p;
	size_t	 len;
	size_t	 cap;
};

/*
 * A document's own words: people, places and terms made up for it.  Word i
 * spans off[i] to off[i + 1] of text; the people come first, then the
 * places, then the terms.
 */
struct topic {
	struct buf	 text;
	size_t		 off[TOPIC_WORDS + 1];
	size_t		 n;
};

/*
 * A generated document: its sentences are stored back to back in text,
 * sentence i spanning off[i] to off[i + 1]; paraend[i] is set when a
 * paragraph ends after sentence i.  A repost keeps its source's topic, for
 * a new title.
 */
struct doc {
	enum lang	 lang;
	int		 wide_space;	/* Double spaces or indents. */
	struct topic	 topic;
	struct buf	 title;
	struct buf	 text;
	size_t		*off;
	unsigned char	*paraend;
	size_t		 n;
	size_t		 cap;
};

/* A lexicon: word r spans off[r] to off[r + 1] of text. */
struct lexicon {
	struct buf	 text;
	uint32_t	 off[(1 << LEX_BITS) + 1];
};

struct options {
	uint64_t	 seed;
	uint64_t	 size;
	uint64_t	 records;
	double		 dup_rate;
	double		 edit_rate;
	size_t		 strength;	/* index into strengths[] */
	const char	*truth;
	int		 verbose;
};

static const char *progname = "nsd-gencorpus";
static struct bench_rng rng;	/* the corpus's one stream */
static struct lexicon lexicon[2];

/*
 * Phrase pools.  Placeholders: "#" a number (usually 2-999, sometimes up
 * to 9999), "*" 2-99, "|" 1-9, "@" a year, "^" a month, "~" a day of the
 * month, "&" a weekday; "_" a word of the lexicon, "=" one of the
 * document's terms, "<" one of its people, ">" one of its places.  No
 * phrase may hold what nshash splits sentences at (": ; ? !" or a full
 * stop before a space), so that our sentences are its sentences.
 */
static const char *const en_subj[] = {
	"the _ council", "officials in >", "the > transport authority",
	"the _ company", "<", "<, a spokesperson for the _ ministry",
	"researchers at the University of >", "the > harbour board",
	"_ union leaders", "residents of >", "the > health service",
	"farmers in the _ valley", "the _ regulator",
	"a group of _ business owners", "the school board in >",
	"police in >", "the _ weather service", "_ investors",
	"the mayor of >", "<, the mayor of >", "the opposition leader <",
	"engineers working on the = project", "the > museum",
	"_ hospital managers", "the _ operator", "the > water company",
	"shopkeepers on _ Street", "the _ planning committee",
	"a coalition of _ groups", "the _ central bank", "the > football club",
	"the _ library service", "volunteers from >", "the > fire brigade",
	"the > chamber of commerce", "the _ rail operator",
	"tenants' associations in >", "the > tourism office",
	"the _ airport operator", "a panel of _ experts",
	"the caf\xc3\xa9 owners' association of >",
	"teachers at # _ schools", "the port authority of >",
	"a local = charity", "the _ provincial government",
	"the building contractor <", "the = committee",
	"<, who chairs the = board", "# _ families", "the _ = group",
	"_ and _ officials", "<, the = director"
};
static const char *const en_verb[] = {
	"approved", "announced", "rejected", "criticised", "welcomed",
	"postponed", "unveiled", "published", "delayed", "signed",
	"questioned", "defended", "completed", "praised", "launched",
	"backed", "opposed", "reviewed", "outlined", "challenged", "funded",
	"blocked", "endorsed", "proposed", "scrapped", "extended",
	"suspended", "revised", "drafted", "cancelled", "confirmed",
	"disputed", "expanded", "finalised", "halted", "renewed", "studied",
	"supported", "tested", "upheld", "began reviewing", "agreed to fund",
	"moved to scrap", "began work on", "started preparing", "called for",
	"voted against", "warned about", "set aside money for",
	"took \"a first step\" towards", "raised concerns over",
	"quietly dropped", "promised to speed up", "asked for details of",
	"said it would extend", "expected to complete",
	"continued to negotiate", "announced plans to expand",
	"agreed to consult on"
};
static const char *const en_obj[] = {
	"a new = network", "the annual = budget",
	"a plan to build # _ homes in >", "a $# million _ barrier",
	"the redevelopment of the old > docks", "a _ scheme for _ ferries",
	"changes to = charges", "a review of _ meals",
	"the sale of the > stadium", "a * percent rise in = bills",
	"new rules for _ rentals", "a _ lane along the > river",
	"the closure of # _ clinics", "a study of _ near # schools",
	"the contract for = lighting", "a tax break for _ farms",
	"plans for a _ bridge at >", "the expansion of > airport",
	"a community = project", "a ban on _ packaging",
	"funding for # new = teachers", "a programme of free _ lessons",
	"repairs to the > seawall", "the merger of # _ hospitals",
	"a digital archive of _ newspapers",
	"a r\xc3\xa9sum\xc3\xa9 workshop for _ job seekers",
	"the restoration of a #-year-old _ church",
	"new opening hours for the = museum", "a fleet of # _ buses",
	"the widening of the > road", "a _ market in >",
	"a new wing for the = hospital", "the town's first _ park",
	"a scheme to plant # _ trees", "the sale of # hectares of _ farmland",
	"the = report by <", "a proposal from < on _ =",
	"the _ = programme", "a #-page plan for _ and =", "the = _ fund",
	"# _ contracts", "the _ of =", "a _ _ for >", "the = _ rules"
};
static const char *const en_mod[] = {
	"on &", "last week", "earlier this month",
	"after months of _ negotiations", "despite _ opposition from <",
	"in the northern district of >", "for the _ time since @",
	"by the end of next year", "in a _ statement",
	"at a public meeting in >", "following complaints from _ residents",
	"ahead of the = season", "in a _ vote of # to #",
	"at a _ cost of $# million", "within # _ years",
	"across the > region", "in the _ towns near >",
	"with support from the > government",
	"under pressure from _ campaigners", "for the @ _ year",
	"at the _ request of # residents", "in the _ quarter of @",
	"after a _ review of # months",
	"on the eve of the = election", "in a _ report of # pages",
	"at the > office", "together with <", "near the _ = site",
	"as part of the = plan", "since @", "with # _ votes",
	"for # _", "after # days of _ talks", "by # percent",
	"on # _ sites", "at $# a _", "from # to # _", "within # months",
	"in @ and @", "with about # _ workers"
};
static const char *const en_clause[] = {
	", although critics said the = timetable was too tight",
	", while < warned that costs could rise by * percent",
	", and said further details on the = would follow",
	"because demand for _ has grown by * percent since @",
	", saying the decision was \"long overdue\"",
	", a move that surprised many _ observers",
	", which will affect about # households in >",
	", adding that no final decision on the = had been made",
	", but gave no date for the start of _ work",
	", the third such decision since @",
	", according to a _ briefing seen by # councillors",
	"as long as the = budget allows it",
	", and the first _ results are expected in @",
	", < told reporters", ", a source close to the = talks said"
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

/* Syllables of English words, the common parts listed more than once. */
static const char *const en_onset[] = {
	"", "", "b", "c", "d", "f", "g", "h", "k", "l", "l", "m", "m", "n",
	"n", "p", "r", "r", "s", "s", "t", "t", "v", "w", "br", "ch", "cl",
	"dr", "fr", "gr", "pl", "pr", "sh", "st", "th", "tr"
};
static const char *const en_vowel[] = {
	"a", "a", "e", "e", "e", "i", "i", "o", "o", "u", "ai", "ea", "ee",
	"io", "oa", "ou"
};
static const char *const en_coda[] = {
	"", "", "", "", "", "", "n", "n", "r", "l", "s", "m", "t", "nd",
	"nt", "rd", "st", "ck", "ng", "x"
};
static const char *const en_place_end[] = {
	"ton", "ford", "field", "mouth", "burg", "vale"
};

/* Chinese phrase pools. */
static const char *const zh_time[] = {
	"今年以来", "近日", "上周", "本月初", "截至^月底", "^月~日上午",
	"记者从>获悉", "据了解", "近年来", "日前", "今年前三季度",
	"去年下半年以来", "昨天下午", "春节前夕", "国庆假期期间", "@年",
	"入秋以来", "进入汛期后", "据<介绍", "在>"
};
static const char *const zh_subj[] = {
	">市政府", "_部门", "_公司", ">研究团队", ">居民", ">农业局",
	">交通局", ">教育局", "省_厅", "不少_市民", "_企业负责人<", "<", "<",
	"专家<", ">社区_", "=景区", "_监管部门", ">人民医院", "_合作社",
	"_志愿者", ">民警", "_气象台", ">开发区", ">图书馆", "_海关",
	">港口_", "文旅_", ">街道", "_供电所", ">消防_", "=项目组", "<和<",
	"_协会", "=_中心", ">_", "_委员会", ">_集团", "<团队", "_学校",
	">_站", "<所在的_", "_村民", ">_工作组", "_联合会", "_研究院",
	">_馆", "_与_", "=_办公室"
};
static const char *const zh_act[] = {
	"启动了=_工程", "发布了_政策", "完成了#公里_改造", "新建了#个_",
	"推出_措施", "开展了#天的=检查", "投入#万元用于_", "引进#家_企业",
	"修复#处_", "组织#场_", "推进=建设", "接待_#万人次", "处理_投诉#件",
	"建成“_”", "为#名_送去_", "完成#亩_", "开通#条_", "更换#盏_",
	"上线“=”_", "对#家_抽检", "新增_#个", "清理_#公里", "与<就=达成_",
	"在>举办_", "围绕=开展_", "将_纳入=", "把_作为_", "对_和_作出调整",
	"_了=", "_了#个_", "_了_的_", "在>_了_", "为_提供_", "已_了#项_",
	"正在_=", "向>_了_", "_和_的=", "与>的_", "_=的_", "#次_了_",
	"_#家_", "同_签署_", "_出_#台", "让__", "从>_到>", "以_为_", "由<_",
	"按_的_", "_到#_", "被_为_", "在_中_", "经_的_", "_上_#_",
	"_下的=", "_着_", "_过#次_", "对>_", "_给_", "_与_的_", "_已_"
};
static const char *const zh_more[] = {
	"同比增长*.|%", "比去年提高了|个百分点", "惠及>#余户",
	"预计@年完工", "提升了_的_", "受到_关注", "带动_#余人",
	"覆盖>#个_", "为=打下基础", "缓解了_压力", "“1|分钟_圈”初步形成",
	"累计投入#亿元", "满意度*.|%", "=将持续推进", "部分_已完成",
	"其中>占|成", "_问题已解决", "_进入收尾阶段", "<说_是关键",
	"_和_同步推进", "=的_明显改善", "<认为_还需加强", "_与=逐步完善",
	"这是>首次_", "_达到#个", "共有#名_参加", "_增加了*.|%",
	"_的_超过#万", "涉及_#项", "_将在@年_", "<表示将_", "_约#吨",
	"_的=达#万元", "并_了_", "同时_=", "还_了#个_", "_#万_",
	"_下降*.|%", "_共#人", "_#%", "_第#_", "#个_中_", "_#元", "_有#_",
	"_约#", "_#天", "<等#人_", "_占*%", "_#_#_", "_增至#", "_为#_",
	"#年来_", "_已有#_", "_约#公里", "_#余_", "_涨了*.|%", "_平均#",
	"不到#_", "_近#_", "_的#倍"
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

/*
 * Common Han characters (all of U+4E00..9FFF, three bytes each), roughly
 * the most frequent first: the Chinese lexicon's words and people are made
 * of them, and typos draw from them.
 */
static const char zh_common[] =
	"的一是不了在人有我他这个们中来上大为和国地到以说时要就出会可也你对生"
	"能而子那得于着下自之年过发后作里用道行所然家种事成方多经么去法学如都"
	"同现当没动面起看定天分还进好小部其些主样理心她本前开但因只从想实日军"
	"者意无力它与长把机十民第公此已工使情明性知全三又关点正业外将两高间由"
	"问很最重并物手应战向头文体政美相见被利什二等产或新己制身果加西斯月话"
	"合回特代内信表化老给世位次度门任常先海通教儿原东声提立及比员解水名真"
	"论处走义各入几口认条平系气题活尔更别打女变四神总何电数安少报才结反受"
	"目太量再感建务做接必场件计管期市直德资命山金指克许统区保至队形社便空"
	"决治展马科司五基眼书非则听白却界达光放强即像难且权思王象完设式色路记"
	"南品住告类求据程北边死张该交规万取拉格望觉术领共确传师观清今切院让识"
	"候带导争运笑飞风步改收根干造言联持组每济车亲极林服快办议往元英士证近"
	"失转夫令准布始怎呢存未远叫台单影具罗字爱击流备兵连调深商算质团集百需"
	"价花党华城石级整府离况亚请技际约示复病息究线似官火断精满支视消越器容"
	"照须九增研写称企八功吗包片史委乎查轻易早曾除农找装广显吧阿李标谈吃图"
	"念六引历首医局突专费号尽另周较注语仅考落青随选列武红响虽推势参希古众"
	"构房半节土投某案黑维革划敌致陈律足态护七兴派孩验责营星够章音跟志底站"
	"严巴例防族供效续施留讲型料终答紧黄绝奇察母京段依批群项故按河米围江织"
	"害斗双境客纪采举杀攻父苏密低朝友诉止细愿千值仍男钱破网热助倒育属坐帝"
	"限船脸职速刻乐否刚威毛状率甚独球般普怕弹校苦创假久错承印晚兰试股拿脑"
	"预谁益阳若哪微尼继送急血惊伤素药适波夜省初喜卫源食险待述陆习置居劳财"
	"环排福纳欢雷警获模充负云停木游龙树疑层冷洲冲射略范竟句室异激汉村哈策"
	"演简卡罪判担州静退既衣您宗积余痛检差富灵协角占配征修皮挥胜降阶审沉坚"
	"善妈刘读啊超免压银买皇养伊怀执副乱抗犯追帮宣佛岁航优怪香著田铁控税左"
	"右份穿艺背阵草脚概恶块顿敢守酒岛托央户烈洋哥索胡款靠评版宝座释景顾弟"
	"登货互付伯慢欧换闻危忙核暗姐介坏讨丽良序升监临亮露永呼味野架域沙掉括"
	"舰鱼杂误湾吉减编楚肯测败屋跑梦散温困剑渐封救贵枪缺楼县尚毫移娘朋画班"
	"智亦耳恩短掌恐遗固席松秘谢鲁遇康虑幸均销钟诗藏赶剧票损忽巨炮旧端探湖"
	"录叶春乡附吸予礼港雨呀板庭妇归睛饭额含顺输摇招婚脱补谓督毒油疗旅泽材"
	"灭逐莫笔亡鲜词圣择寻厂睡博勒烟授诺伦岸奥唐卖俄炸载洛健堂旁宫喝借君禁"
	"阴园谋宋避抓荣姑孙逃牙束跳顶玉镇雪午练迫爷篇肉嘴馆遍凡础洞卷坦牛宁纸"
	"诸训私庄祖丝翻暴森塔默握戏隐熟骨访弱蒙歌店鬼软典欲萨伙遭盘爸扩盖弄雄"
	"稳忘亿刺拥徒姆杨齐赛趣曲刀床迎冰虚玩析窗醒妻透购替塞努休虎扬途侵刑绿"
	"兄迅套贸毕唯谷轮库迹尤竞街促延震弃甲伟麻川申缓潜闪售灯针哲络抵朱埃抱"
	"鼓植纯夏忍页杰筑折郑贝尊吴秀混臣雅振染盛怒舞圆搞狂措姓残秋培迷诚宽宇"
	"猛摆梅毁伸摩盟末乃悲拍丁赵硬麦蒋操耶阻订彩抽赞魔纷沿喊违妹浪汇币丰蓝"
	"殊献桌啦瓦莱援译夺汽烧距裁偏符勇触课敬哭懂墙袭召罚侠厅拜巧侧韩冒债曼"
	"融惯享戴童犹乘挂奖绍厚纵障讯涉彻刊丈爆乌役描洗玛患妙镜唱烦签仙彼弗症"
	"仿倾牌陷鸟轰咱菜闭奋庆撤泪茶疾缘播朗杜奶季丹狗尾仪偷奔珠虫驻孔宜艾桥"
	"淡翼恨繁寒伴叹旦愈潮粮缩罢聚径恰挑袋灰捕徐珍幕映裂泰隔启尖忠累炎暂估"
	"泛荒偿横拒瑞忆孤鼻闹羊呆厉衡胞零穷舍码赫婆魂灾洪腿胆津俗辩胸晓劲贫仁"
	"偶辑邦恢赖圈摸仰润堆碰艇稍迟辆废净凶署壁御奉旋冬矿抬蛋晨伏吹鸡倍糊秦"
	"盾杯租骑乏隆诊奴摄丧污渡旗甘耐凭扎抢绪粗肩梁幻菲皆碎宙叔岩荡综爬荷悉"
	"蒂返井壮薄悄扫敏碍殖详迪矛霍允幅撒剩凯颗骂赏液番箱贴漫酸郎腰舒眉忧浮"
	"辛恋餐吓挺励辞艘键伍峰尺昨黎辈贯侦滑券崇扰宪绕趋慈乔阅汗枝拖墨胁插箭"
	"腊粉泥氏彭拔骗凤慧媒佩愤扑龄驱惜豪掩兼跃尸肃帕驶堡届欣惠册储飘桑闲惨"
	"洁踪勃宾频仇磨递邪撞拟滚奏巡颜剂绩贡疯坡瞧截燃焦殿伪柳锁逼颇昏劝呈搜"
	"勤戒驾漂饮曹朵仔柔俩孟腐幼践籍牧凉牲佳娜浓芳稿竹腹跌逻垂遵脉貌柏狱猜"
	"怜惑陶兽帐饰贷昌叙躺钢沟寄扶铺邓寿惧询汤盗肥尝匆辉奈扣廷澳嘛董迁凝慰"
	"厌脏腾幽怨鞋丢埋泉涌辖躲晋紫艰魏吾慌祝邮吐狠鉴械咬邻赤挤弯椅陪割揭韦"
	"悟聪雾锋梯猫祥阔誉筹丛牵鸣沈阁穆屈旨袖猎臂蛇贺柱抛鼠瑟戈牢逊迈欺吨琴"
	"衰瓶恼燕仲诱狼池疼卢仗冠粒遥吕玄尘冯抚浅敦纠钻晶岂峡苍喷耗凌敲菌赔涂"
	"粹扁亏寂煤熊恭湿循暖糖赋抑秩帽哀宿踏烂袁侯抖夹昆肝擦猪炼恒慎搬纽纹玻"
	"渔磁铜齿跨押怖漠疲叛遣兹祭醉拳弥斜档稀捷肤疫肿豆削岗晃吞宏癌肚隶履涨"
	"耀扭坛拨沃绘伐堪仆郭牺歼墓雇廉契拼惩捉覆刷劫嫌瓜歇雕闷乳串娃缴唤赢莲"
	"霸桃妥瘦搭赴岳嘉舱俊址庞耕锐缝悔邀玲惟斥宅添挖呵讼氧浩羽斤酷掠妖祸侍"
	"乙妨贪挣汪尿莉悬唇翰仓轨枚盐览傅帅庙芬屏寺胖璃愚滴疏萧姿颤丑劣柯寸扔"
	"盯辱匹俱辨饿蜂哦腔郁溃谨糟葛苗肠忌溜鸿爵鹏鹰笼丘桂滋聊挡纲肌茨壳痕碗"
	"穴膀卓贤卧膜毅锦欠哩函茫昂薛皱夸豫胃舌剥傲拾窝睁携陵哼棉晴铃填饲渴吻"
	"扮逆脆喘罩卜炉柴愉绳胎蓄眠竭喂傻慕浑奸扇柜悦拦诞饱乾泡贼亭夕爹酬儒姻"
	"卵氛泄杆挨僧蜜吟猩遂狭肖甜霉滩讽聘瞬稻蔬虾蟹饼粥锅筷罐桶篮筐凳灶帘砖"
	"廊隧坝堤渠礁岭涧溪潭塘沼坪圃缆阀泵囱炭铝锌铅锡镍钛硅硫磷氮氢碳钙钾钠"
	"镁锰铬钴钨钼郊芯畜灌溉卉蹈";
static const char zh_surnames[] =
	"王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾"
	"萧田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏"
	"韦方白邹孟熊秦邱江尹薛段雷侯龙史陶黎贺顾毛郝龚邵万钱严武戴莫孔向";
static const char zh_place_end[] = "市县镇区村港湾州";

/*
 * Characters that are mistaken for others that look like them, in pairs:
 * an edit may write the first of a pair as the second. No two of a pair
 * are forms of one character that Han folding would make the same.
 */
static const char zh_lookalike[] =
	"人入大太日曰己已未末王玉白百千干午牛土士田由木本见贝今令候侯拔拨"
	"准淮折拆问间运远体休名各石右才寸万方儿几主王自白目且由甲另叧拿拳"
	"坐座晴睛请情清青线钱话活象像须需带滞做作以已";

#define NELEMS(a)	(sizeof(a) / sizeof((a)[0]))
/* The number of characters in a table of three-byte characters. */
#define NHAN(a)		((sizeof(a) - 1) / 3)

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

static uint64_t
rng_next(void)
{
	return (bench_rng_next(&rng));
}

/* A uniform integer in [0, n), n < 2^32. */
static uint32_t
rng_below(uint32_t n)
{
	return ((uint32_t)bench_rng_below(&rng, n));
}

/* A uniform integer in [lo, hi]. */
static uint32_t
rng_range(uint32_t lo, uint32_t hi)
{
	return ((uint32_t)bench_rng_range(&rng, lo, hi));
}

static double
rng_unit(void)
{
	return (bench_rng_unit(&rng));
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
	if (n == 0)
		return;
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

/* The number of code points in s[0..n). */
static size_t
count_cps(const char *s, size_t n)
{
	size_t i, cps = 0;

	for (i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			cps++;
	return (cps);
}

/*
 * Append n syllables of an English word made from the bits of *state,
 * capitalized if cap is set.
 */
static void
en_syllables(struct buf *b, struct bench_rng *state, unsigned n, int cap)
{
	size_t start = b->len;
	const char *onset;
	uint64_t h;
	unsigned i;

	for (i = 0; i < n; i++) {
		h = bench_rng_next(state);
		onset = en_onset[h % NELEMS(en_onset)];
		h /= NELEMS(en_onset);
		/* No vowel meets a vowel inside a word. */
		if (i > 0 && *onset == '\0')
			onset = h & 1 ? "n" : "l";
		h >>= 1;
		buf_adds(b, onset);
		buf_adds(b, en_vowel[h % NELEMS(en_vowel)]);
		h /= NELEMS(en_vowel);
		buf_adds(b, en_coda[h % NELEMS(en_coda)]);
	}
	if (cap && b->len > start)
		b->p[start] = (char)(b->p[start] - 'a' + 'A');
}

/*
 * The character of zh_common that h chooses: a uniform index a, then a
 * uniform index up to a, so that character i of N comes about as often as
 * the logarithm of N / i.
 */
static const char *
zh_pick(uint64_t h)
{
	uint32_t a, i;

	a = (uint32_t)((h & 0xffffffff) % NHAN(zh_common));
	i = (uint32_t)((h >> 32) % (a + 1));
	return (zh_common + 3 * i);
}

static void
zh_char(struct buf *b, uint64_t h)
{
	buf_add(b, zh_pick(h), 3);
}

/* Whether every character of the table s of n bytes is a three-byte Han. */
static int
han_table_ok(const char *s, size_t n)
{
	size_t i;

	if (n % 3 != 0)
		return (0);
	for (i = 0; i < n; i += 3)
		if ((unsigned char)s[i] < 0xe4 || (unsigned char)s[i] > 0xe9 ||
		    ((unsigned char)s[i + 1] & 0xc0) != 0x80 ||
		    ((unsigned char)s[i + 2] & 0xc0) != 0x80)
			return (0);
	return (1);
}

/*
 * Build both lexicons.  Word r comes from a PRNG seeded with r: frequent
 * words are short (English: one syllable for the first 64 ranks, mostly
 * two up to rank 2048, two to four beyond; Chinese: one or two characters
 * for the first 64, then mostly two, sometimes one or three).
 */
static void
lexicon_build(void)
{
	struct lexicon *en = &lexicon[LANG_EN], *zh = &lexicon[LANG_ZH];
	struct bench_rng state;
	uint64_t h;
	uint32_t r;
	unsigned n, i;

	if (!han_table_ok(zh_common, sizeof(zh_common) - 1) ||
	    !han_table_ok(zh_surnames, sizeof(zh_surnames) - 1) ||
	    !han_table_ok(zh_place_end, sizeof(zh_place_end) - 1) ||
	    !han_table_ok(zh_lookalike, sizeof(zh_lookalike) - 1))
		fatal("a character table holds more than Han characters");
	for (r = 0; r < 1U << LEX_BITS; r++) {
		state.state = 0x5eed1e8100000000ULL + r;
		h = bench_rng_next(&state);
		if (r < 64)
			n = 1;
		else if (r < 2048)
			n = h % 4 == 0 ? 1 : 2;
		else
			n = 2 + (h % 10 >= 5) + (h % 10 == 9);
		en->off[r] = (uint32_t)en->text.len;
		en_syllables(&en->text, &state, n, 0);

		h = bench_rng_next(&state);
		if (r < 64)
			n = 1 + (unsigned)(h & 1);
		else
			n = h % 20 < 2 ? 1 : h % 20 < 17 ? 2 : 3;
		zh->off[r] = (uint32_t)zh->text.len;
		for (i = 0; i < n; i++)
			zh_char(&zh->text, bench_rng_next(&state));
	}
	en->off[r] = (uint32_t)en->text.len;
	zh->off[r] = (uint32_t)zh->text.len;
}

/*
 * A rank of the lexicon drawn by Zipf's law with exponent 1: an octave
 * [2^k, 2^(k+1)) uniformly, then a rank in it uniformly, so rank r comes
 * about as often as 1 / r.  The first 2^LEX_HEAD ranks share the first
 * octave: the frames already hold the function words, and a lexicon word as
 * frequent as "the" would be one more.  Octaves below from are left out.
 */
static uint32_t
lex_rank(unsigned from)
{
	uint32_t lo, hi;
	unsigned o;

	o = from + rng_below(LEX_BITS - LEX_HEAD + 1 - from);
	lo = o == 0 ? 0 : 1U << (LEX_HEAD + o - 1);
	hi = 1U << (LEX_HEAD + o);
	return (lo + rng_below(hi - lo));
}

static void
lex_add(struct buf *b, enum lang lang, uint32_t r)
{
	const struct lexicon *l = &lexicon[lang];

	buf_add(b, l->text.p + l->off[r], l->off[r + 1] - l->off[r]);
}

static void
topic_end_word(struct topic *t)
{
	t->off[++t->n] = t->text.len;
}

/*
 * Make up a document's topic: people (English: a given name and a surname;
 * Chinese: a surname and one or two characters), places (a made-up name,
 * sometimes with an ending such as "ford" or 市) and terms (words of the
 * lexicon past its most frequent 128, two characters at least in Chinese).
 */
static void
topic_make(struct topic *t, enum lang lang)
{
	struct bench_rng state;
	size_t i, start;

	t->text.len = 0;
	t->n = 0;
	t->off[0] = 0;
	for (i = 0; i < TOPIC_PEOPLE; i++) {
		state.state = rng_next();
		if (lang == LANG_EN) {
			en_syllables(&t->text, &state,
			    1 + (bench_rng_next(&state) % 3 != 0), 1);
			buf_adds(&t->text, " ");
			en_syllables(&t->text, &state,
			    2 + (bench_rng_next(&state) % 3 == 0), 1);
		} else {
			buf_add(&t->text, zh_surnames + 3 *
			    (bench_rng_next(&state) % NHAN(zh_surnames)), 3);
			zh_char(&t->text, bench_rng_next(&state));
			if (bench_rng_next(&state) % 4 != 0)
				zh_char(&t->text, bench_rng_next(&state));
		}
		topic_end_word(t);
	}
	for (i = 0; i < TOPIC_PLACES; i++) {
		state.state = rng_next();
		if (lang == LANG_EN) {
			en_syllables(&t->text, &state,
			    2 + (bench_rng_next(&state) % 4 == 0), 1);
			if (bench_rng_next(&state) % 10 < 3)
				buf_adds(&t->text, en_place_end[bench_rng_next(
				    &state) % NELEMS(en_place_end)]);
		} else {
			zh_char(&t->text, bench_rng_next(&state));
			zh_char(&t->text, bench_rng_next(&state));
			buf_add(&t->text, zh_place_end + 3 *
			    (bench_rng_next(&state) % NHAN(zh_place_end)), 3);
		}
		topic_end_word(t);
	}
	for (i = 0; i < TOPIC_TERMS; i++) {
		start = t->text.len;
		do
			lex_add(&t->text, lang, lex_rank(4));
		while (lang == LANG_ZH && t->text.len - start < 6);
		topic_end_word(t);
	}
}

/*
 * Append one of the n topic words from first on, the earlier ones more
 * often (the first about half the time when n is 4).  With surname set,
 * only the last word of a person's name.
 */
static void
topic_add(struct buf *b, const struct topic *t, size_t first, size_t n,
    int surname)
{
	size_t i, from, to;

	i = first + rng_below(rng_below((uint32_t)n) + 1);
	from = t->off[i];
	to = t->off[i + 1];
	if (surname)
		for (i = to; i > from; i--)
			if (t->text.p[i - 1] == ' ') {
				from = i;
				break;
			}
	buf_add(b, t->text.p + from, to - from);
}

static void
topic_copy(struct topic *dst, const struct topic *src)
{
	dst->text.len = 0;
	buf_add(&dst->text, src->text.p, src->text.len);
	memcpy(dst->off, src->off, sizeof(dst->off));
	dst->n = src->n;
}

/*
 * Append a phrase, filling its placeholders (see the phrase pools) with
 * numbers and words in language lang, the topic's for "=", "<" and ">".
 * Returns the number of code points appended.
 */
static size_t
buf_add_phrase(struct buf *b, const char *s, enum lang lang,
    const struct topic *t)
{
	size_t start = b->len;
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
		case '_':
			lex_add(b, lang, lex_rank(0));
			break;
		case '=':
			topic_add(b, t, TOPIC_PEOPLE + TOPIC_PLACES,
			    TOPIC_TERMS, 0);
			break;
		case '<':
			topic_add(b, t, 0, TOPIC_PEOPLE,
			    lang == LANG_EN && rng_below(2));
			break;
		case '>':
			topic_add(b, t, TOPIC_PEOPLE, TOPIC_PLACES, 0);
			break;
		default:
			buf_add(b, p, 1);
			break;
		}
	}
	return (count_cps(b->p + start, b->len - start));
}

/* The number of words in s[0..n); a lone comma is not a word. */
static size_t
count_words(const char *s, size_t n)
{
	size_t i, words = 0;
	int inword = 0;

	for (i = 0; i < n; i++) {
		if (s[i] == ' ' || s[i] == ',')
			inword = 0;
		else if (!inword) {
			inword = 1;
			words++;
		}
	}
	return (words);
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

/*
 * About how many random bits a phrase's numbers add, and when words is set,
 * its lexicon words too (a Zipf draw of 2^16 words carries about 12).
 */
static size_t
phrase_bits(const char *s, int words)
{
	size_t n = 0;

	for (; *s != '\0'; s++) {
		switch (*s) {
		case '#': n += 10; break;
		case '*': case '@': n += 6; break;
		case '~': n += 4; break;
		case '^': case '|': n += 3; break;
		case '_': n += words ? 10 : 0; break;
		default: break;
		}
	}
	return (n);
}

/*
 * Like pick_unused, but only phrases with a number qualify, all alike;
 * returns n when none is left.
 */
static size_t
pick_numeric(const char *const *pool, size_t n, uint64_t *used)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		k += (*used & (1ULL << i)) == 0 && phrase_bits(pool[i], 0) > 0;
	if (k == 0)
		return (n);
	k = rng_below((uint32_t)k);
	for (i = 0; i < n; i++)
		if ((*used & (1ULL << i)) == 0 && phrase_bits(pool[i], 0) > 0 &&
		    k-- == 0)
			break;
	*used |= 1ULL << i;
	return (i);
}

/* An English sentence of 8 to about 30 words ending with a full stop. */
static void
gen_en_sentence(struct buf *b, const struct topic *t)
{
	size_t start = b->len, words = 0, bits = 0, nums = 0, target, w, i;
	size_t mark;
	uint64_t used_mod = 0, used_clause = 0;
	const char *c;
	int tries;

	target = rng_range(8, 30);
	for (i = 0; i < 3; i++) {
		c = i == 0 ? PICK(en_subj) : i == 1 ? PICK(en_verb) :
		    PICK(en_obj);
		if (i > 0)
			buf_adds(b, " ");
		mark = b->len;
		buf_add_phrase(b, c, LANG_EN, t);
		words += count_words(b->p + mark, b->len - mark);
		bits += phrase_bits(c, 1);
		nums += phrase_bits(c, 0);
	}
	for (tries = 0; words < 30 && tries < 12; tries++) {
		if (bits < MIN_BITS || nums == 0) {
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
		mark = b->len;
		if (c[0] != ',')
			buf_adds(b, " ");
		buf_add_phrase(b, c, LANG_EN, t);
		w = count_words(b->p + mark, b->len - mark);
		if (words + w > 30) {
			b->len = mark;
			continue;
		}
		words += w;
		bits += phrase_bits(c, 1);
		nums += phrase_bits(c, 0);
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
zh_add_clause(struct buf *b, const char *c, const struct topic *t,
    size_t *cps)
{
	size_t before = b->len, n;

	buf_adds(b, "，");
	n = 1 + buf_add_phrase(b, c, LANG_ZH, t);
	if (*cps + n > 79) {
		b->len = before;
		return (0);
	}
	*cps += n;
	return (1);
}

/* A Chinese sentence of 20 to 80 code points. */
static void
gen_zh_sentence(struct buf *b, const struct topic *t)
{
	size_t cps = 0, bits = 0, nums = 0, target, i;
	uint64_t used_act = 0, used_more = 0;
	const char *c;

	target = rng_range(20, 76);
	if (rng_below(2)) {
		c = PICK(zh_time);
		cps += buf_add_phrase(b, c, LANG_ZH, t) + 1;
		bits += phrase_bits(c, 1);
		nums += phrase_bits(c, 0);
		buf_adds(b, "，");
	}
	c = PICK(zh_subj);
	cps += buf_add_phrase(b, c, LANG_ZH, t);
	bits += phrase_bits(c, 1);
	c = zh_act[pick_unused(NELEMS(zh_act), &used_act)];
	cps += buf_add_phrase(b, c, LANG_ZH, t);
	bits += phrase_bits(c, 1);
	nums += phrase_bits(c, 0);
	while (bits < MIN_BITS || nums == 0) {
		i = pick_numeric(zh_more, NELEMS(zh_more), &used_more);
		if (i == NELEMS(zh_more) ||
		    !zh_add_clause(b, zh_more[i], t, &cps))
			break;
		bits += phrase_bits(zh_more[i], 1);
		nums += phrase_bits(zh_more[i], 0);
	}
	while (cps < target) {
		if (rng_below(3))
			c = zh_more[pick_unused(NELEMS(zh_more), &used_more)];
		else
			c = zh_act[pick_unused(NELEMS(zh_act), &used_act)];
		if (!zh_add_clause(b, c, t, &cps))
			break;
	}
	buf_adds(b, PICK(zh_endp));
}

static void
gen_title(struct buf *b, enum lang lang, const struct topic *t)
{
	size_t start = b->len;

	if (lang == LANG_ZH) {
		buf_add_phrase(b, PICK(zh_subj), lang, t);
		buf_add_phrase(b, PICK(zh_act), lang, t);
		return;
	}
	buf_add_phrase(b, PICK(en_subj), lang, t);
	buf_adds(b, " ");
	buf_add_phrase(b, PICK(en_verb), lang, t);
	buf_adds(b, " ");
	buf_add_phrase(b, PICK(en_obj), lang, t);
	if (b->p[start] >= 'a' && b->p[start] <= 'z')
		b->p[start] = (char)(b->p[start] - 'a' + 'A');
}

/* A new, original document of 1 to 6 KB, with a topic of its own. */
static void
gen_doc(struct doc *d)
{
	size_t target, left;

	doc_clear(d, rng_below(2) ? LANG_ZH : LANG_EN);
	topic_make(&d->topic, d->lang);
	gen_title(&d->title, d->lang, &d->topic);
	target = rng_range(TEXT_MIN, TEXT_MAX);
	while (d->text.len < target) {
		left = rng_range(2, 6);
		while (left-- > 0 && d->text.len < target) {
			if (d->lang == LANG_ZH)
				gen_zh_sentence(&d->text, &d->topic);
			else
				gen_en_sentence(&d->text, &d->topic);
			doc_end_sentence(d, 0);
		}
		d->paraend[d->n - 1] = 1;
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
 * A typo in b[from..): an English lower-case letter or a Chinese character
 * replaced by another one.  Returns 0 when there is none to replace.
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
				rep = zh_pick(rng_next());
			while (memcmp(s + k, rep, 3) == 0);
			memcpy(s + k, rep, 3);
			return (1);
		}
	}
	return (0);
}

/*
 * Write one character of b[from..) that has a look-alike as its
 * look-alike.  Returns 0 when there is none.
 */
static int
edit_lookalike(struct buf *b, size_t from)
{
	size_t len = b->len - from, k, j, n = 0, pick = 0;
	unsigned char *s = (unsigned char *)b->p + from;
	const char *hit = NULL;

	for (k = 0; k + 2 < len; k++) {
		if (!is_han(s, len, k))
			continue;
		for (j = 0; j < sizeof(zh_lookalike) - 1; j += 6)
			if (memcmp(s + k, zh_lookalike + j, 3) == 0)
				break;
		if (j >= sizeof(zh_lookalike) - 1)
			continue;
		/* Reservoir sampling: the n-th of them replaces with 1/n. */
		if (rng_below((uint32_t)++n) == 0) {
			pick = k;
			hit = zh_lookalike + j + 3;
		}
	}
	if (hit == NULL)
		return (0);
	memcpy(s + pick, hit, 3);
	return (1);
}

/*
 * Change one character of the sentence b[from..), keeping its length: a
 * digit of a number, a typo, or in Chinese a look-alike, each about
 * a third of the time when the sentence has one to change.
 */
static void
edit_char(struct buf *b, size_t from, enum lang lang)
{
	switch (rng_below(3)) {
	case 0:
		if (edit_number(b, from))
			return;
		break;
	case 1:
		if (lang == LANG_ZH && edit_lookalike(b, from))
			return;
		break;
	default:
		break;
	}
	if (!edit_typo(b, from, lang))
		(void)edit_number(b, from);
}

/*
 * A repost of src: the same sentences with some of the edits an aggregator
 * makes.  At least one edit is always made.
 */
static void
gen_repost(struct doc *d, const struct doc *src)
{
	int prefix, line, footer, drop, change, space;
	size_t i, dropped = SIZE_MAX, changed = SIZE_MAX, s0, edits;

	doc_clear(d, src->lang);
	topic_copy(&d->topic, &src->topic);
	prefix = rng_below(3) == 0;
	line = !prefix && rng_below(4) == 0;
	footer = rng_below(2) != 0;
	drop = src->n > 2 && rng_below(2);
	change = rng_below(2) != 0;
	space = rng_below(5) == 0;
	if (!prefix && !line && !footer && !drop)
		change = 1;

	if (rng_below(3) == 0)
		gen_title(&d->title, d->lang, &d->topic);
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
		if (i == changed)
			for (edits = rng_range(1, 3); edits > 0; edits--)
				(void)edit_typo(&d->text, s0, d->lang);
		doc_end_sentence(d, src->paraend[i]);
	}
	if (footer) {
		if (d->n > 0)
			d->paraend[d->n - 1] = 1;
		buf_adds(&d->text, d->lang == LANG_ZH ? PICK(zh_footer) :
		    PICK(en_footer));
		doc_end_sentence(d, 1);
	}
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

/* The code points of s[0..n) that are not white space. */
static size_t
count_cps_unspaced(const char *s, size_t n)
{
	size_t i, cps = 0;

	for (i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80 && s[i] != ' ' &&
		    s[i] != '\n' && s[i] != '\t')
			cps++;
	return (cps);
}

/*
 * Set sel[i] for the sentences of d that nshash fingerprints with its
 * defaults, the NS_SENTENCES longest of more than NS_MIN_CPS code points
 * (white space not counted, as in its version 2), ties going to the
 * earlier one, in the same way as nshash.c picks them.
 * Our sentences are its sentences with their end mark (a full stop, "。",
 * "！", "？" or "；"), which it drops.  When none is that long, nshash
 * hashes the whole text, and the first sentence is set.
 */
static void
select_longest(const struct doc *d, unsigned char *sel)
{
	size_t best[NS_SENTENCES], cps[NS_SENTENCES], nbest = 0, i, j, c;

	memset(sel, 0, d->n);
	for (i = 0; i < d->n; i++) {
		c = count_cps_unspaced(d->text.p + d->off[i],
		    d->off[i + 1] - d->off[i]);
		c = c > 0 ? c - 1 : 0;
		if (c <= NS_MIN_CPS ||
		    (nbest == NS_SENTENCES && c <= cps[nbest - 1]))
			continue;
		if (nbest < NS_SENTENCES)
			nbest++;
		for (j = nbest - 1; j > 0 && cps[j - 1] < c; j--) {
			best[j] = best[j - 1];
			cps[j] = cps[j - 1];
		}
		best[j] = i;
		cps[j] = c;
	}
	for (i = 0; i < nbest; i++)
		sel[best[i]] = 1;
	if (nbest == 0 && d->n > 0)
		sel[0] = 1;
}

/*
 * An edited copy of src at the given strength (see the top of this file):
 * every sentence kept, characters changed in some or all of them.
 */
static void
gen_edited(struct doc *d, const struct doc *src, enum strength strength)
{
	static unsigned char *sel;
	static size_t selcap;
	size_t i, s0;

	doc_clear(d, src->lang);
	topic_copy(&d->topic, &src->topic);
	buf_add(&d->title, src->title.p, src->title.len);
	d->wide_space = src->wide_space;
	if (selcap < src->n) {
		selcap = src->n;
		sel = xrealloc(sel, selcap);
	}
	if (strength == EDIT_LONGEST)
		select_longest(src, sel);
	for (i = 0; i < src->n; i++) {
		s0 = d->text.len;
		buf_add(&d->text, src->text.p + src->off[i],
		    src->off[i + 1] - src->off[i]);
		if (strength == EDIT_HEAVY) {
			edit_number(&d->text, s0);
			edit_typo(&d->text, s0, d->lang);
			edit_punct(&d->text, s0, d->lang);
		} else if (strength == EDIT_EVERY || sel[i])
			edit_char(&d->text, s0, d->lang);
		doc_end_sentence(d, src->paraend[i]);
	}
	if (strength == EDIT_HEAVY && rng_below(2)) {
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
	    "                     [--edit-rate F] "
	    "[--edit-strength longest|every|heavy]\n"
	    "                     [--truth FILE] [--verbose]\n", progname);
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
	    "  --edit-rate F  share of those near-copies that keep every\n"
	    "                 sentence with characters changed, as\n"
	    "                 --edit-strength says, 0 to 1 (default 0)\n"
	    "  --edit-strength S\n"
	    "                 longest: one character changed in each sentence\n"
	    "                 that nshash fingerprints (the 5 longest of more\n"
	    "                 than 30 code points), nothing else (default);\n"
	    "                 every: one character in every sentence;\n"
	    "                 heavy: in every sentence a typo, a punctuation\n"
	    "                 mark and a digit, and sometimes a footer.\n"
	    "                 A character change is a typo, a digit, or in\n"
	    "                 Chinese a look-alike (未 as 末)\n"
	    "  --truth FILE   write each near-copy's id, its source's id and\n"
	    "                 its kind (light, edited-longest, edited-every\n"
	    "                 or edited-heavy) to FILE, one tab-separated\n"
	    "                 line each\n"
	    "  --verbose      print record, repost and byte counts to stderr\n"
	    "  --help         show this help\n");
	exit(0);
}

/* Parse --edit-strength: an index into strengths[]. */
static size_t
parse_strength(const char *s)
{
	size_t i;

	for (i = 0; i < NELEMS(strengths); i++)
		if (strcmp(s, strengths[i].name) == 0)
			return (i);
	fprintf(stderr, "%s: invalid value for --edit-strength: '%s' (valid:",
	    progname, s);
	for (i = 0; i < NELEMS(strengths); i++)
		fprintf(stderr, "%s %s", i > 0 ? "," : "", strengths[i].name);
	fprintf(stderr, ")\n");
	usage(2);
	return (0);
}

static void
parse_args(int argc, char **argv, struct options *o)
{
	struct bench_args a;
	const char *v;
	int have_size = 0, have_records = 0;

	o->seed = 1;
	o->size = UINT64_MAX;
	o->records = UINT64_MAX;
	o->dup_rate = 0.2;
	o->edit_rate = 0;
	o->strength = parse_strength("longest");
	o->truth = NULL;
	o->verbose = 0;
	bench_args_init(&a, progname, usage, argc, argv);
	while (bench_args_peek(&a) != NULL) {
		if (bench_args_flag(&a, "--help", "-h"))
			usage(0);
		else if (bench_args_flag(&a, "--verbose", "-v"))
			o->verbose = 1;
		else if ((v = bench_args_value(&a, "--seed", NULL)) != NULL)
			o->seed = bench_parse_size(&a, "--seed", v,
			    BENCH_SUFFIX_NONE, 0, UINT64_MAX);
		else if ((v = bench_args_value(&a, "--size", NULL)) != NULL) {
			o->size = bench_parse_size(&a, "--size", v,
			    BENCH_SUFFIX_BINARY, 0, UINT64_MAX);
			have_size = 1;
		} else if ((v = bench_args_value(&a, "--records", NULL)) !=
		    NULL) {
			o->records = bench_parse_size(&a, "--records", v,
			    BENCH_SUFFIX_NONE, 0, UINT64_MAX);
			have_records = 1;
		} else if ((v = bench_args_value(&a, "--dup-rate", NULL)) !=
		    NULL)
			o->dup_rate = bench_parse_number(&a, "--dup-rate", v,
			    0, 1, 0);
		else if ((v = bench_args_value(&a, "--edit-rate", NULL)) !=
		    NULL)
			o->edit_rate = bench_parse_number(&a, "--edit-rate", v,
			    0, 1, 0);
		else if ((v = bench_args_value(&a, "--edit-strength",
		    NULL)) != NULL)
			o->strength = parse_strength(v);
		else if ((v = bench_args_value(&a, "--truth", NULL)) != NULL)
			o->truth = v;
		else
			bench_args_fail(&a, "unknown argument '%s'",
			    bench_args_peek(&a));
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
	lexicon_build();
	rng.state = o.seed;
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
				gen_edited(&ring[slot], &ring[src],
				    strengths[o.strength].strength);
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
			    edit ? strengths[o.strength].kind : "light");
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
		    "%llu of the reposts %s\n", progname,
		    (unsigned long long)(id - 1), (unsigned long long)reposts,
		    (unsigned long long)total, (unsigned long long)edited,
		    strengths[o.strength].kind);
	else if (o.verbose)
		fprintf(stderr, "%s: %llu records, %llu reposts, %llu bytes\n",
		    progname, (unsigned long long)(id - 1),
		    (unsigned long long)reposts, (unsigned long long)total);
	return (0);
}
