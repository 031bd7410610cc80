/*
 * index_memory.c: the in-memory index, an open-addressing hash table.
 *
 * Fingerprints are already uniformly distributed hashes, so a slot is
 * found from the fingerprint's top bits directly, with linear probing. A
 * slot whose group is 0 is empty (groups start at 1), which leaves every
 * fingerprint value usable as a key. The table doubles at 70% load.
 * Group ids live in one growing arena, referenced by offset; so do the
 * signatures MinHash keeps with its groups, each after its group's id.
 *
 * SimHash's block tables share the slots: an entry of table t is found
 * from (key & mask[t]) and carries t in the top bits of its group word;
 * entries with equal keys may repeat. nshash has one table with the whole
 * key, where this is the plain hash table above.
 *
 * The slots, the groups and the ids are regions (region.h): past a few
 * MiB each moves into a file in $TMPDIR, so that a run over any input
 * keeps its own memory bounded.
 */
#include "config.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "index.h"
#include "region.h"

struct slot {
	uint64_t	 fp;
	uint64_t	 group;		/* 0: empty; table in the top bits */
};

#define TABLE_SHIFT	60
#define GROUP_MASK	((1ULL << TABLE_SHIFT) - 1)

struct group {
	size_t		 id_off;
	size_t		 id_len;
};

struct memory_index {
	struct nsd_index	 base;		/* must be first */
	struct nsd_region	 slots_region;
	struct slot		*slots;		/* slots_region's base */
	size_t			 nslots;	/* a power of two */
	unsigned		 shift;		/* 64 - log2(nslots) */
	size_t			 used;
	struct slot		*missed;	/* where missed_fp, the last key
						   a lookup did not find, would
						   go (a put follows a lookup),
						   or NULL */
	uint64_t		 missed_fp;
	struct nsd_region	 groups_region;
	struct group		*groups;	/* groups_region's base */
	size_t			 ngroups;
	struct nsd_region	 ids;
	size_t			 ids_len;
	size_t			 peak;		/* most bytes held at once */
	/* Why a region stayed in memory, or "". */
	char			 spill_error[NSD_REGION_ERROR_MAX];
};

/*
 * Anonymous bytes held now; extra is what is held besides (a table being
 * left).
 */
static size_t
memory_bytes(const struct memory_index *m, size_t extra)
{
	return (nsd_region_anon(&m->slots_region) +
	    nsd_region_anon(&m->groups_region) + nsd_region_anon(&m->ids) +
	    extra);
}

static size_t
mapped_bytes(const struct memory_index *m)
{
	return (nsd_region_mapped(&m->slots_region) +
	    nsd_region_mapped(&m->groups_region) +
	    nsd_region_mapped(&m->ids));
}

/* Remembers the first reason a region could not move into a file. */
static void
note_spill(struct memory_index *m, const struct nsd_region *r)
{
	if (m->spill_error[0] == '\0' && r->spill_error[0] != '\0')
		memcpy(m->spill_error, r->spill_error, sizeof m->spill_error);
}

static void
note_peak(struct memory_index *m, size_t extra)
{
	size_t	 now = memory_bytes(m, extra);

	if (now > m->peak)
		m->peak = now;
}

static size_t
slot_of(const struct memory_index *m, uint64_t fp)
{
	/*
	 * Fibonacci hashing spreads keys even if fingerprints were not uniform.
	 */
	return ((size_t)((fp * 0x9E3779B97F4A7C15ULL) >> m->shift));
}

/* Where the search for an entry of table t with key starts. */
static size_t
home_of(const struct memory_index *m, unsigned t, uint64_t key)
{
	const struct nsd_index_params	*p = &m->base.params;

	/* One table with the whole key (nshash) is slot_of(m, key). */
	return (slot_of(m, (key & p->masks[t]) + t * 0xD6E8FEB86659FD93ULL));
}

static struct slot *
find(struct memory_index *m, uint64_t fp)
{
	size_t	 i = slot_of(m, fp), mask = m->nslots - 1;

	while (m->slots[i].group != 0 && m->slots[i].fp != fp)
		i = (i + 1) & mask;
	return (&m->slots[i]);
}

static void
grow(struct memory_index *m)
{
	struct nsd_region	 old_region = m->slots_region;
	struct slot		*old = m->slots, *s;
	size_t			 n = m->nslots, i;

	m->nslots *= 2;
	m->shift--;
	nsd_region_init(&m->slots_region);
	nsd_region_resize(&m->slots_region, m->nslots * sizeof *m->slots);
	note_spill(m, &m->slots_region);
	m->slots = m->slots_region.base;
	m->missed = NULL;
	/* Both tables, while rehashing. */
	note_peak(m, nsd_region_anon(&old_region));
	for (i = 0; i < n; i++) {
		if (old[i].group == 0)
			continue;
		s = &m->slots[home_of(m, old[i].group >> TABLE_SHIFT,
		    old[i].fp)];
		while (s->group != 0)
			s = s + 1 == m->slots + m->nslots ? m->slots : s + 1;
		*s = old[i];
	}
	nsd_region_free(&old_region);
}

static void
memory_prefetch(struct nsd_index *ix, uint64_t fp)
{
	struct memory_index	*m = (struct memory_index *)ix;

	__builtin_prefetch(&m->slots[slot_of(m, fp)]);
}

static int
memory_lookup(struct nsd_index *ix, uint64_t fp, uint64_t *group,
    struct nsd_error *err)
{
	struct memory_index	*m = (struct memory_index *)ix;

	struct slot		*s = find(m, fp);

	(void)err;
	*group = s->group;
	m->missed = s->group == 0 ? s : NULL;
	m->missed_fp = fp;
	return (0);
}

static int
memory_put(struct nsd_index *ix, uint64_t fp, uint64_t group,
    struct nsd_error *err)
{
	struct memory_index	*m = (struct memory_index *)ix;
	struct slot		*s;

	(void)err;
	/*
	 * Still empty, the slot the lookup stopped at is where fp goes: a
	 * table only fills, so the slots before it on fp's run are full.
	 */
	s = m->missed != NULL && m->missed_fp == fp && m->missed->group == 0 ?
	    m->missed : find(m, fp);
	s->fp = fp;
	s->group = group;
	if (++m->used * 10 > m->nslots * 7)
		grow(m);
	return (0);
}

static int
memory_near(struct nsd_index *ix, uint64_t fp, unsigned k,
    struct nsd_index_near *near, struct nsd_error *err)
{
	struct memory_index		*m = (struct memory_index *)ix;
	const struct nsd_index_params	*p = &ix->params;
	size_t				 i, mask = m->nslots - 1;
	unsigned			 t;

	(void)err;
	memset(near, 0, sizeof *near);
	for (t = 0; t < p->ntables; t++)
		for (i = home_of(m, t, fp); m->slots[i].group != 0;
		    i = (i + 1) & mask) {
			if (m->slots[i].group >> TABLE_SHIFT != t ||
			    ((m->slots[i].fp ^ fp) & p->masks[t]) != 0)
				continue;
			near->candidates++;
			nsd_index_near_offer(near, k, m->slots[i].group &
			    GROUP_MASK, (unsigned)__builtin_popcountll(
			    m->slots[i].fp ^ fp));
		}
	return (0);
}

static int
memory_add(struct nsd_index *ix, uint64_t fp, uint64_t group,
    struct nsd_error *err)
{
	struct memory_index	*m = (struct memory_index *)ix;
	size_t			 i, mask;
	unsigned		 t;

	(void)err;
	assert(group != 0 && group <= GROUP_MASK);
	for (t = 0; t < ix->params.ntables; t++) {
		mask = m->nslots - 1;
		for (i = home_of(m, t, fp); m->slots[i].group != 0;
		    i = (i + 1) & mask)
			continue;
		m->slots[i].fp = fp;
		m->slots[i].group = group | (uint64_t)t << TABLE_SHIFT;
		if (++m->used * 10 > m->nslots * 7)
			grow(m);
	}
	return (0);
}

static int
memory_group_new(struct nsd_index *ix, const char *id, size_t len,
    const unsigned char *sig, uint64_t *group, struct nsd_error *err)
{
	struct memory_index	*m = (struct memory_index *)ix;
	size_t			 sig_bytes = ix->params.sig_bytes, need;

	(void)err;
	assert((sig != NULL) == (sig_bytes > 0));
	if ((m->ngroups + 1) * sizeof *m->groups > m->groups_region.size) {
		nsd_region_resize(&m->groups_region,
		    m->groups_region.size * 2);
		note_spill(m, &m->groups_region);
		m->groups = m->groups_region.base;
	}
	/* The id, then the signature (MinHash), in the arena. */
	if (len > SIZE_MAX / 2 - sig_bytes)
		nsd_out_of_memory();
	need = len + sig_bytes;
	if (need > m->ids.size - m->ids_len) {
		if (need > SIZE_MAX / 2 - m->ids_len)
			nsd_out_of_memory();
		nsd_region_resize(&m->ids, m->ids.size * 2 > m->ids_len + need ?
		    m->ids.size * 2 : m->ids_len + need);
		note_spill(m, &m->ids);
	}
	m->groups[m->ngroups].id_off = m->ids_len;
	m->groups[m->ngroups].id_len = len;
	if (len > 0)
		memcpy((char *)m->ids.base + m->ids_len, id, len);
	if (sig_bytes > 0)
		memcpy((char *)m->ids.base + m->ids_len + len, sig, sig_bytes);
	m->ids_len += need;
	note_peak(m, 0);
	*group = ++m->ngroups;
	return (0);
}

static int
memory_group_name(struct nsd_index *ix, uint64_t group,
    struct nsd_group_name *name, struct nsd_error *err)
{
	struct memory_index	*m = (struct memory_index *)ix;

	(void)err;
	assert(group >= 1 && group <= m->ngroups);
	name->id_len = m->groups[group - 1].id_len;
	name->id = name->id_len > 0 ?
	    (const char *)m->ids.base + m->groups[group - 1].id_off : NULL;
	name->number = group;
	return (0);
}

/* The signature kept after group's id. */
static int
memory_group_signature(struct nsd_index *ix, uint64_t group,
    const unsigned char **sig, struct nsd_error *err)
{
	struct memory_index	*m = (struct memory_index *)ix;
	const struct group	*g = &m->groups[group - 1];

	(void)err;
	assert(group >= 1 && group <= m->ngroups && ix->params.sig_bytes > 0);
	*sig = (const unsigned char *)m->ids.base + g->id_off + g->id_len;
	return (0);
}

static int
memory_commit(struct nsd_index *ix, uint64_t records, struct nsd_error *err)
{
	(void)ix;
	(void)records;
	(void)err;
	return (0);
}

static void
memory_info(struct nsd_index *ix, struct nsd_index_info *info)
{
	struct memory_index	*m = (struct memory_index *)ix;

	info->fingerprints = m->used;
	info->groups = m->ngroups;
	info->memory = memory_bytes(m, 0);
	info->peak = m->peak > info->memory ? m->peak : info->memory;
	info->mapped = mapped_bytes(m);
	info->spill_error = m->spill_error[0] != '\0' ? m->spill_error : NULL;
}

static void
memory_close(struct nsd_index *ix)
{
	struct memory_index	*m = (struct memory_index *)ix;

	nsd_region_free(&m->slots_region);
	nsd_region_free(&m->groups_region);
	nsd_region_free(&m->ids);
	free(m);
}

static int
memory_numbered(struct nsd_index *ix, uint64_t *n, struct nsd_error *err)
{
	(void)err;
	*n = ((struct memory_index *)ix)->ngroups;
	return (0);
}

static const struct nsd_index_ops memory_ops = {
	memory_prefetch, memory_lookup, memory_put, memory_near, memory_add,
	memory_group_new, memory_group_signature, memory_group_name,
	memory_commit, memory_info, memory_close, NULL, NULL, NULL, NULL,
	memory_numbered
};

int
nsd_index_open_memory(struct nsd_index **ixp, const struct nsd_index_params *p,
    struct nsd_error *err)
{
	struct memory_index	*m;

	(void)err;
	assert(p->ntables >= 1 && p->ntables <= 16);
	m = xcalloc(1, sizeof *m);
	m->base.ops = &memory_ops;
	m->base.params = *p;
	m->nslots = 1 << 16;
	m->shift = 64 - 16;
	nsd_region_init(&m->slots_region);
	nsd_region_resize(&m->slots_region, m->nslots * sizeof *m->slots);
	m->slots = m->slots_region.base;
	m->missed = NULL;
	nsd_region_init(&m->groups_region);
	nsd_region_resize(&m->groups_region, 1024 * sizeof *m->groups);
	m->groups = m->groups_region.base;
	nsd_region_init(&m->ids);
	nsd_region_resize(&m->ids, 16384);
	*ixp = &m->base;
	return (0);
}
