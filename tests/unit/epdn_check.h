/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The record table's invariants (include/satnet/epdn_core.h), shared by
 * the unit test and the fuzz target of sch_epdn/epdn_core.c.  Include the
 * core first.
 */
#ifndef SATNET_EPDN_CHECK_H
#define SATNET_EPDN_CHECK_H

#include <string.h>

/*
 * One zeroed block for a table of @flows: the slots, then the lost
 * stamps (lost_of()).  free() the slots frees both.
 */
static inline struct epdn_rec *table_block(u32 flows)
{
	return unit_calloc(1, epdn_table_memory(flows));
}

static inline u32 *lost_of(struct epdn_rec *block, u32 flows)
{
	return (u32 *)(block + epdn_table_slots(flows));
}

/* The set a key's record lives in. */
static inline u32 set_of(const struct epdn_table *t,
			 const struct epdn_key *key)
{
	u32 h = (u32)epdn_hash(key, &t->hkey);

	return (u32)(((u64)h * t->nsets) >> 32);
}

/*
 * The table's invariants: each set keeps its records in its first ways,
 * every record lies in its key's set, no key twice, count matches, and a
 * lookup (at a time when nothing has expired) finds each record.
 */
static inline int table_consistent(struct epdn_table *t)
{
	u32 i, j, live = 0;

	for (i = 0; i < t->cap; i++) {
		struct epdn_rec *rec = &t->slot[i];

		if (rec->stamp == 0) {
			if (i % EPDN_WAYS + 1 < EPDN_WAYS &&
			    t->slot[i + 1].stamp != 0)
				return 0;	/* a hole inside a set */
			continue;
		}
		live++;
		if (set_of(t, &rec->key) != i / EPDN_WAYS)
			return 0;
		for (j = i + 1; j < i - i % EPDN_WAYS + EPDN_WAYS; j++)
			if (t->slot[j].stamp &&
			    !memcmp(&t->slot[j].key, &rec->key, sizeof(rec->key)))
				return 0;
		if (epdn_table_find(t, &rec->key, rec->stamp) != rec)
			return 0;
	}
	return live == t->count;
}

/*
 * epdn_range_merge() against the smallest arc of sequence space that holds
 * both ranges: it succeeds, with that arc, when both ranges are valid and
 * the arc spans less than EPDN_SPAN_MAX, and otherwise leaves @a; either
 * order gives the same.
 */
static inline int merge_consistent(const struct epdn_range *a,
				   const struct epdn_range *b)
{
	u64 la = a->max - a->min, lb = b->max - b->min;
	u64 ab = (u32)(b->min - a->min), ba = (u32)(a->min - b->min);
	u64 from_a = ab + lb > la ? ab + lb : la;
	u64 from_b = ba + la > lb ? ba + la : lb;
	u64 arc = from_a < from_b ? from_a : from_b;
	struct epdn_range x = *a, y = *b;
	bool ok = epdn_range_merge(&x, b);

	if (epdn_range_merge(&y, a) != ok)
		return 0;
	if (!epdn_range_valid(a) || !epdn_range_valid(b) ||
	    arc >= EPDN_SPAN_MAX)
		return !ok && x.min == a->min && x.max == a->max;
	return ok && x.min == y.min && x.max == y.max &&
	       x.max - x.min == arc &&
	       x.min == (from_a <= from_b ? a->min : b->min);
}

#endif /* SATNET_EPDN_CHECK_H */
