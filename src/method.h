/*
 * method.h: the fingerprint methods, each one table of operations in a
 * file of its own (method_nshash.c, method_simhash.c, method_minhash.c),
 * found through one registry (method.c): what the index of a method's
 * fingerprints is made with, and what --explain says of a duplicate.
 *
 * Memory: the tables are static. Errors: none.
 */
#ifndef NSD_METHOD_H
#define NSD_METHOD_H

#include <stddef.h>
#include <stdint.h>

#include "index.h"
#include "options.h"

/* The longest --explain evidence, its NUL included. */
#define NSD_EVIDENCE_MAX	(128 + 4 * 128)

/* What the decision of a duplicate found, for --explain. */
struct nsd_evidence {
	unsigned	 evidence;	/* simhash: the distance; nshash: the
					   fingerprints that matched; minhash:
					   the bins that agree */
	unsigned	 usable;	/* nshash: fingerprints compared */
	unsigned	 common;	/* nshash: sentences passed over as
					   boilerplate */
	int		 exact;		/* nshash: matched by the whole text */
	const uint64_t	*bands;		/* minhash: the bands whose keys
					   the group holds, a bit each */
};

struct nsd_method_ops {
	const char	*name;		/* as --method and an index say it */
	/*
	 * Its part of the parameters of the index its fingerprints are in
	 * (the method's name is set by the caller).
	 */
	void		 (*index_params)(const struct nsd_config *,
			    struct nsd_index_params *);
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
 * The index parameters of the features SimHash and MinHash are both made
 * of (--ngram, --shingle, --min-features), for their index_params.
 */
void	 nsd_method_feature_params(const struct nsd_config *,
	    struct nsd_index_params *);

#endif /* NSD_METHOD_H */
