/*
 * index_overlay.c: a run that must leave an index as it found it
 * (--no-update), over any index: what the index holds is read from it,
 * and what the run itself claims, adds and opens goes into an index in
 * memory above it, so that the run still sees its own records. The index
 * below is opened as a reader (it takes no lease and writes nothing) and
 * is asked only to read; the rules of claiming are the same as for any
 * index (nsd_index_claim()).
 *
 * The run's groups get ids above every id the index below can have
 * (OVERLAY_BASE and up, so they are the newest, as a new group is), and
 * numbers after the last group the index below has numbered.
 */
#include "config.h"

#include <stdlib.h>

#include "index.h"
#include "util.h"

/*
 * The ids of the run's own groups: OVERLAY_BASE + the memory index's,
 * above any id of the index below and below the memory index's limit of
 * 2^60. The memory index's keys hold the run's ids as they are: its own
 * groups' and those of the index below that the run's records joined.
 */
#define OVERLAY_BASE	((uint64_t)1 << 59)

struct overlay_index {
	struct nsd_index	 base;		/* must be first */
	struct nsd_index	*under;		/* the index read */
	struct nsd_index	*mine;		/* the run's own, in memory */
	struct nsd_index_ops	 ops;		/* overlay_ops, shared or not
						   as under is */
	uint64_t		 numbered;	/* groups under has numbered; */
	int			 have_numbered;	/* asked when first wanted */
};

static void
overlay_prefetch(struct nsd_index *ix, uint64_t fp)
{
	struct overlay_index	*o = (struct overlay_index *)ix;

	nsd_index_prefetch(o->under, fp);
}

static int
overlay_lookup(struct nsd_index *ix, uint64_t fp, uint64_t *group,
    struct nsd_error *err)
{
	struct overlay_index	*o = (struct overlay_index *)ix;

	if (nsd_index_lookup(o->under, fp, group, err) == -1)
		return (-1);
	if (*group != 0)
		return (0);
	return (nsd_index_lookup(o->mine, fp, group, err));
}

static int
overlay_put(struct nsd_index *ix, uint64_t fp, uint64_t group,
    struct nsd_error *err)
{
	struct overlay_index	*o = (struct overlay_index *)ix;

	return (nsd_index_claim(o->mine, fp, group, NULL, err));
}

static int
overlay_near(struct nsd_index *ix, uint64_t fp, unsigned k,
    struct nsd_index_near *near, struct nsd_error *err)
{
	struct overlay_index	*o = (struct overlay_index *)ix;
	struct nsd_index_near	 mine;

	if (nsd_index_near(o->under, fp, k, near, err) == -1 ||
	    nsd_index_near(o->mine, fp, k, &mine, err) == -1)
		return (-1);
	nsd_index_near_merge(near, k, &mine);
	return (0);
}

static int
overlay_add(struct nsd_index *ix, uint64_t fp, uint64_t group,
    struct nsd_error *err)
{
	struct overlay_index	*o = (struct overlay_index *)ix;

	return (nsd_index_add(o->mine, fp, group, err));
}

static int
overlay_group_new(struct nsd_index *ix, const char *id, size_t len,
    const unsigned char *sig, uint64_t *group, struct nsd_error *err)
{
	struct overlay_index	*o = (struct overlay_index *)ix;

	if (nsd_index_group_new_signed(o->mine, id, len, sig, group,
	    err) == -1)
		return (-1);
	*group += OVERLAY_BASE;
	return (0);
}

static int
overlay_group_signature(struct nsd_index *ix, uint64_t group,
    const unsigned char **sig, struct nsd_error *err)
{
	struct overlay_index	*o = (struct overlay_index *)ix;

	if (group >= OVERLAY_BASE)
		return (nsd_index_group_signature(o->mine,
		    group - OVERLAY_BASE, sig, err));
	return (nsd_index_group_signature(o->under, group, sig, err));
}

static int
overlay_group_name(struct nsd_index *ix, uint64_t group,
    struct nsd_group_name *name, struct nsd_error *err)
{
	struct overlay_index	*o = (struct overlay_index *)ix;

	if (group < OVERLAY_BASE)
		return (nsd_index_group_name(o->under, group, name, err));
	if (!o->have_numbered) {
		if (o->under->ops->numbered(o->under, &o->numbered,
		    err) == -1)
			return (-1);
		o->have_numbered = 1;
	}
	if (nsd_index_group_name(o->mine, group - OVERLAY_BASE, name,
	    err) == -1)
		return (-1);
	name->number += o->numbered;
	return (0);
}

static int
overlay_numbered(struct nsd_index *ix, uint64_t *n, struct nsd_error *err)
{
	struct overlay_index	*o = (struct overlay_index *)ix;
	uint64_t		 mine;

	if (o->under->ops->numbered(o->under, n, err) == -1 ||
	    o->mine->ops->numbered(o->mine, &mine, err) == -1)
		return (-1);
	*n += mine;
	return (0);
}

/* Nothing to commit: the run leaves the index as it was. */
static int
overlay_commit(struct nsd_index *ix, uint64_t records, struct nsd_error *err)
{
	(void)ix;
	(void)records;
	(void)err;
	return (0);
}

static void
overlay_info(struct nsd_index *ix, struct nsd_index_info *info)
{
	struct overlay_index	*o = (struct overlay_index *)ix;
	struct nsd_index_info	 mine;

	nsd_index_info(o->under, info);
	nsd_index_info(o->mine, &mine);
	info->fingerprints += mine.fingerprints;
	info->groups += mine.groups;
	info->memory += mine.memory;
	info->peak += mine.peak;
}

static void
overlay_close(struct nsd_index *ix)
{
	struct overlay_index	*o = (struct overlay_index *)ix;

	nsd_index_close(o->under);
	nsd_index_close(o->mine);
	free(o);
}

/* A shared index below is still read a batch at a time. */
static void
overlay_begin_batch(struct nsd_index *ix)
{
	struct overlay_index	*o = (struct overlay_index *)ix;

	nsd_index_begin_batch(o->under);
}

static int
overlay_settle(struct nsd_index *ix, const struct nsd_index_conflict **c,
    size_t *n, struct nsd_error *err)
{
	struct overlay_index	*o = (struct overlay_index *)ix;

	return (nsd_index_settle(o->under, c, n, err));
}

/* The run's own groups were opened by this run, which has not failed. */
static int
overlay_group_adopt(struct nsd_index *ix, uint64_t group, int *yes,
    struct nsd_error *err)
{
	struct overlay_index	*o = (struct overlay_index *)ix;

	if (group >= OVERLAY_BASE)
		return (0);
	return (nsd_index_group_adopt(o->under, group, yes, err));
}

static const struct nsd_index_ops overlay_ops = {
	.prefetch = overlay_prefetch,
	.lookup = overlay_lookup,
	.put = overlay_put,
	.near = overlay_near,
	.add = overlay_add,
	.group_new = overlay_group_new,
	.group_signature = overlay_group_signature,
	.group_name = overlay_group_name,
	.commit = overlay_commit,
	.info = overlay_info,
	.close = overlay_close,
	.begin_batch = overlay_begin_batch,
	.settle = overlay_settle,
	.group_adopt = overlay_group_adopt,
	.numbered = overlay_numbered,
};

int
nsd_index_open_overlay(struct nsd_index **ixp, struct nsd_index *under,
    struct nsd_error *err)
{
	struct overlay_index	*o;

	*ixp = NULL;
	o = xcalloc(1, sizeof *o);
	o->ops = overlay_ops;
	if (!nsd_index_is_shared(under)) {
		/* A local index: no batches to begin or settle. */
		o->ops.begin_batch = NULL;
		o->ops.settle = NULL;
		o->ops.group_adopt = NULL;
	}
	o->base.ops = &o->ops;
	o->base.params = under->params;
	o->under = under;
	if (nsd_index_open_memory(&o->mine, &under->params, err) == -1) {
		nsd_index_close(under);
		free(o);
		return (-1);
	}
	*ixp = &o->base;
	return (0);
}
