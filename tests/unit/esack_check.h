/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ESACK core's invariants (include/satnet/esack_core.h), shared by the
 * unit test and the fuzz target of tcp_esack/esack_core.c.  Include the
 * core first.
 */
#ifndef SATNET_ESACK_CHECK_H
#define SATNET_ESACK_CHECK_H

/* Loss events counted under a rule: every event not undone or cancelled. */
static inline u32 total(const struct esack_core *c)
{
	u32 i, n = 0;

	for (i = ESACK_A1; i < ESACK_RULES; i++)
		n += c->count[i];
	return n;
}

static inline int esack_win_sane(const struct esack_win *w)
{
	return w->secwnd <= 1 && w->last < ESACK_RULES && w->past_rp <= 1 &&
	       w->unbounded <= 1 &&
	       w->next_end - w->rp <= ESACK_MAX_SPAN_BYTES;
}

/* After @losses calls of esack_loss(): the state is sane, counts balance. */
static inline int esack_sane(const struct esack_core *c, u32 losses)
{
	return esack_win_sane(&c->cur) && esack_win_sane(&c->saved) &&
	       c->can_undo <= 1 && !c->count[ESACK_NONE] &&
	       total(c) + c->undone + c->ecn == losses;
}

#endif /* SATNET_ESACK_CHECK_H */
