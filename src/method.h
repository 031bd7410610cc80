/*
 * method.h: the fingerprint methods, each one table of operations in a
 * file of its own (method_nshash.c, method_simhash.c, method_minhash.c),
 * found through one registry (method.c). A method says everything that
 * differs between methods: its options and their defaults, the index its
 * keys are stored in and how --db-info describes it, how a text becomes
 * keys, how a record is decided against the index and claims its keys,
 * how two groups that met on a shared index are judged, and what
 * --explain says of a duplicate. The pipeline moves records through
 * these operations and never asks which method is running; an index
 * stores and fetches keys.
 *
 * Memory: the tables are static; a scanner is the method's, made and
 * freed through its operations. Errors: struct nsd_error, as everywhere.
 */
#ifndef NSD_METHOD_H
#define NSD_METHOD_H

#include <stddef.h>
#include <stdint.h>

#include "index.h"
#include "options.h"
#include "simhash.h"
#include "sketch.h"

struct nsd_stats;

/* The most keys a record is looked up by, of any method. */
#define NSD_METHOD_MAX_KEYS	128

/* The longest --explain evidence, its NUL included. */
#define NSD_EVIDENCE_MAX	(192 + 4 * NSD_METHOD_MAX_KEYS)

/* What the decision of a duplicate found, for --explain. */
struct nsd_evidence {
	unsigned	 evidence;	/* simhash: the distance; nshash: the
					   fingerprints that matched; minhash:
					   the bins that agree */
	unsigned	 usable;	/* the keys compared (nshash: those
					   not passed over) */
	unsigned	 common;	/* nshash: sentences passed over as
					   boilerplate */
	int		 exact;		/* nshash: matched by the whole text */
	uint64_t	 keys[2];	/* minhash: the bands whose keys the
					   group holds, a bit each */
	unsigned	 bins;		/* minhash: the signatures' bins */
	/* The confirmation on the whole text, when it was asked: */
	int		 confirmed;	/* 1: the figures below are set */
	struct nsd_resemblance resemblance;
};

/* One record, as the operations of its method see it. */
struct nsd_verdict {
	/* Made by scan: */
	uint64_t	*keys;		/* what it is looked up by */
	unsigned char	*code;		/* beside each key, whether its
					   part of the text looks like code
					   (nshash), else 0 */
	unsigned	 nkeys;		/* 0: nothing to compare */
	unsigned char	*sig;		/* what its group keeps of it, if
					   it opens one (the index's
					   sig_bytes), or NULL */
	unsigned char	*sketch;	/* the sketch of its whole text,
					   the end of sig, or NULL: the
					   index keeps none */
	int		 has_whole;	/* nshash: the key of the whole */
	uint64_t	 whole_key;	/* text */
	/* Made by decide: */
	struct nsd_evidence ev;
};

/* What a lookup leaves for the claims that follow it. */
struct nsd_held {
	uint64_t	 use[NSD_METHOD_MAX_KEYS];	/* the keys compared */
	uint64_t	 held[NSD_METHOD_MAX_KEYS];	/* the group that held
							   each, or 0 */
};

struct nsd_method_ops {
	const char	*name;		/* as --method and an index say it */
	const char	*const *options;/* the long options that are its own
					   (NULL-terminated) */
	int		 keys_repeat;	/* its index adds keys, which may
					   repeat, rather than claim them
					   once (nsd_index_params.repeats) */
	int		 whole_text;	/* its own rule measures the whole
					   texts (MinHash's Jaccard): its
					   matches are confirmed by their
					   numbers alone, and its groups
					   keep only the numbers part of a
					   sketch */
	/* Its defaults that differ from the other methods' (or NULL). */
	void		 (*defaults)(struct nsd_config *);
	/*
	 * Its part of the parameters of the index its keys are in (the
	 * method's name is set by the caller).
	 */
	void		 (*index_params)(const struct nsd_config *,
			    struct nsd_index_params *);
	/* An index's parameters as the options that made it, into buf. */
	void		 (*describe)(const struct nsd_index_report *, char *,
			    size_t);

	/*
	 * Scanning, on any thread. A scanner is one thread's state; the
	 * record's fields are joined by the character joiner() says.
	 * scan() fingerprints text[0..len) into v: keys (room for
	 * max_keys()), code, sig (when the index keeps sig_bytes; the
	 * method's own part), sketch (unless NULL), has_whole, whole_key
	 * and nkeys. No joiner: a line break.
	 */
	unsigned	 (*max_keys)(const struct nsd_config *);
	char		 (*joiner)(const struct nsd_config *,
			    const struct nsd_index_params *);
	void		*(*scanner_new)(const struct nsd_config *,
			    const struct nsd_index_params *,
			    struct nsd_error *);
	void		 (*scanner_free)(void *);
	void		 (*scan)(void *, const struct nsd_config *,
			    const char *, size_t, struct nsd_verdict *);

	/*
	 * Deciding, in input order on one thread. prefetch() announces
	 * the reads of the records v[0..n) of a batch before they are
	 * decided. lookup() finds the oldest group v is a near copy of,
	 * confirmed by nsd_method_confirm() (*best; 0: none), and its
	 * evidence; claim() then gives v's keys
	 * to group, the one v joined or opened (dup: joined), where no
	 * other group holds them already.
	 */
	int		 (*prefetch)(const struct nsd_config *,
			    struct nsd_index *, const struct nsd_verdict *,
			    size_t, struct nsd_error *);
	int		 (*lookup)(const struct nsd_config *,
			    struct nsd_index *, struct nsd_verdict *,
			    struct nsd_held *, uint64_t *, struct nsd_stats *,
			    struct nsd_error *);
	int		 (*claim)(const struct nsd_config *,
			    struct nsd_index *, const struct nsd_verdict *,
			    const struct nsd_held *, uint64_t, int,
			    struct nsd_error *);
	/*
	 * Whether conflict c of a shared index (all[0..n), see
	 * nsd_index_settle()) makes v, the record that opened c->ours, a
	 * near copy of c->theirs, by the rule that would have judged v had
	 * c->theirs been there first; returns 1 or 0 (-1: error), with
	 * *evidence as a lookup would have said it.
	 */
	int		 (*near)(const struct nsd_config *, struct nsd_index *,
			    const struct nsd_verdict *,
			    const struct nsd_index_conflict *, size_t,
			    const struct nsd_index_conflict *, unsigned *,
			    struct nsd_error *);
	/* The evidence of a duplicate, a JSON object, into buf[size]. */
	void		 (*explain)(const struct nsd_evidence *, char *,
			    size_t);
};

extern const struct nsd_method_ops nsd_method_nshash;
extern const struct nsd_method_ops nsd_method_simhash;
extern const struct nsd_method_ops nsd_method_minhash;

/* The operations of method m. */
const struct nsd_method_ops *nsd_method_of(enum nsd_method);

/*
 * The method called name, and its number into *m (either may be NULL);
 * NULL if there is none.
 */
const struct nsd_method_ops *nsd_method_named(const char *,
	    enum nsd_method *);

/* Method i's operations, i from 0 on, then NULL: every method in turn. */
const struct nsd_method_ops *nsd_method_at(size_t);

/*
 * What the methods share.
 *
 * The index parameters of the features SimHash and MinHash are both made
 * of (--ngram, --shingle, --min-features), for their index_params.
 */
void	 nsd_method_feature_params(const struct nsd_config *,
	    struct nsd_index_params *);

/*
 * The scanner of the methods made of features (SimHash, MinHash): their
 * features, and what tells whether a text has enough to compare. The
 * index's normalization version decides whether Han characters fold.
 */
struct nsd_method_features {
	struct nsd_simhash	 simhash;
	struct nsd_text		*text;
};

int	 nsd_method_features_init(struct nsd_method_features *,
	    const struct nsd_config *, const struct nsd_index_params *,
	    struct nsd_error *);
void	 nsd_method_features_free(struct nsd_method_features *);

/*
 * Whether a text, of n feature occurrences, has something to compare by
 * its features (SimHash, MinHash): at least --min-features of them, and
 * enough letters and digits.
 */
int	 nsd_method_comparable(const struct nsd_config *,
	    const struct nsd_method_features *, const char *, size_t, size_t);

/*
 * Whether v's whole text confirms it a near copy of group (sketch.c): 1
 * when it does, or when there is nothing to confirm by (--confirm 0, an
 * index made before sketches, or a text too short to sample); 0 when it
 * does not; -1 with err. The
 * figures go to v->ev, under --confirm 0 too when --explain asks; a match
 * turned down is counted in st.
 */
int	 nsd_method_confirm(const struct nsd_config *, struct nsd_index *,
	    struct nsd_verdict *, uint64_t, struct nsd_stats *,
	    struct nsd_error *);

/*
 * The evidence of a duplicate as --explain writes it, a JSON object, into
 * buf[size]: the method's, and the confirmation's figures.
 */
void	 nsd_method_explain(const struct nsd_method_ops *,
	    const struct nsd_evidence *, char *, size_t);

/* Announce the first limit keys (at most) of each of v[0..n). */
void	 nsd_method_prefetch_keys(struct nsd_index *,
	    const struct nsd_verdict *, size_t, unsigned);

#endif /* NSD_METHOD_H */
