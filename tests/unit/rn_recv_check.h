/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The receiver's invariants (include/satnet/rn_recv_core.h, docs/rn-tcp.md),
 * shared by the unit test and the fuzz target of tcp_rn/rn_recv_core.c.
 * Include the core first.
 */
#ifndef SATNET_RN_RECV_CHECK_H
#define SATNET_RN_RECV_CHECK_H

/* Sorted, disjoint, non-adjacent, non-empty, and within the cap. */
static inline int rset_sane(const struct rn_rset *s)
{
	u32 i;

	if (s->n > RN_RANGES_MAX)
		return 0;
	for (i = 0; i < s->n; i++) {
		if (rn_range_empty(&s->r[i]))
			return 0;
		if (i && !sat_after(s->r[i].start, s->r[i - 1].end))
			return 0;
	}
	return 1;
}

static inline int ranges_meet(const struct rn_range *a,
			      const struct rn_range *b)
{
	return !rn_range_empty(a) && !rn_range_empty(b) &&
	       sat_before(a->start, b->end) && sat_before(b->start, a->end);
}

static inline int rset_meets(const struct rn_rset *s, const struct rn_range *r)
{
	u32 i;

	for (i = 0; i < s->n && i <= RN_RANGES_MAX; i++)
		if (ranges_meet(&s->r[i], r))
			return 1;
	return 0;
}

/* Every range lies in [rcv_nxt, rcv_right), measured as offsets. */
static inline int rset_in_window(const struct rn_rset *s,
				 const struct rn_recv *st)
{
	u32 span = st->rcv_right - st->rcv_nxt, i;

	for (i = 0; i < s->n && i <= RN_RANGES_MAX; i++)
		if (s->r[i].start - st->rcv_nxt >= span ||
		    s->r[i].end - st->rcv_nxt > span)
			return 0;
	return 1;
}

/*
 * Both lists sane and inside the window, the window at most 2^30, the
 * lists apart, and Q ending inside the window.
 */
static inline int recv_sane(const struct rn_recv *st)
{
	u32 span = st->rcv_right - st->rcv_nxt, i;

	if (!rset_sane(&st->drop) || !rset_sane(&st->reorder) ||
	    !rset_in_window(&st->drop, st) || !rset_in_window(&st->reorder, st) ||
	    span > RN_WINDOW_MAX || st->q_end - st->rcv_nxt > span ||
	    sat_after(st->q_start, st->q_end))
		return 0;
	for (i = 0; i < st->drop.n; i++)
		if (rset_meets(&st->reorder, &st->drop.r[i]))
			return 0;
	return 1;
}

#endif /* SATNET_RN_RECV_CHECK_H */
