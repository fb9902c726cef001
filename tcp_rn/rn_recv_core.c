// SPDX-License-Identifier: GPL-2.0
/*
 * RN-TCP receiver core: the drop list, the reorder list and the ACK
 * decision of seed 001 §IV and §IV-A, and the header parsers of the host
 * hooks.  Plain C: include/satnet/rn_recv_core.h explains the types, and
 * docs/rn-tcp.md maps each case of §IV to rn_recv_data().
 */
#include <satnet/rn_recv_core.h>

/* ---- ranges ---- */

static struct rn_range rn_range_make(u32 start, u32 end)
{
	struct rn_range r = { .start = start, .end = end };

	return r;
}

/*
 * The part of @r inside [lo, hi), hi - lo < 2^31: empty when they do not
 * meet.  Worked in offsets from @lo, so a range that is nearly 2^31 wide,
 * or far from the window, cannot confuse before()/after().  A range 2^31
 * wide or wider runs backwards, and is empty.
 */
static struct rn_range rn_range_clip(const struct rn_range *r, u32 lo, u32 hi)
{
	u32 span = hi - lo, off = r->start - lo, len = r->end - r->start;
	struct rn_range c = rn_range_make(lo, lo);

	if (!len || len >= 0x80000000U)
		return c;
	if (off < span) {
		c.start = r->start;
		c.end = len < span - off ? r->end : hi;
	} else if (len > 0U - off) {	/* starts below @lo, reaches it */
		len -= 0U - off;
		c.end = len < span ? lo + len : hi;
	}
	return c;
}

/* ---- range sets: sorted, disjoint, non-adjacent ---- */

void rn_rset_init(struct rn_rset *s, enum rn_overflow overflow)
{
	memset(s, 0, sizeof(*s));
	s->overflow = (u8)overflow;
}

bool rn_rset_has(const struct rn_rset *s, u32 seq)
{
	u32 i;

	for (i = 0; i < s->n; i++)
		if (!sat_before(seq, s->r[i].start) &&
		    sat_before(seq, s->r[i].end))
			return true;
	return false;
}

/* Remove @count ranges from index @i on. */
static void rn_rset_cut(struct rn_rset *s, u32 i, u32 count)
{
	if (i > s->n || count > s->n - i)
		return;
	memmove(&s->r[i], &s->r[i + count],
		(s->n - i - count) * sizeof(s->r[0]));
	s->n -= count;
}

/*
 * Insert @r at index @i.  The array has one spare slot, for the one range
 * an add or a split brings before the cap applies; a put into a full
 * array is refused, so no input can write past it.
 */
static void rn_rset_put(struct rn_rset *s, u32 i, const struct rn_range *r)
{
	if (s->n > RN_RANGES_MAX || i > s->n) {
		s->overflows++;
		return;
	}
	memmove(&s->r[i + 1], &s->r[i], (s->n - i) * sizeof(s->r[0]));
	s->r[i] = *r;
	s->n++;
}

/* Does the gap after range @i hold a byte of one of the @nkeep ranges? */
static bool rn_rset_gap_keeps(const struct rn_rset *s, u32 i,
			      const struct rn_range *keep, u32 nkeep)
{
	u32 k;

	for (k = 0; k < nkeep; k++)
		if (!rn_range_empty(&keep[k]) &&
		    sat_before(keep[k].start, s->r[i + 1].start) &&
		    sat_after(keep[k].end, s->r[i].end))
			return true;
	return false;
}

/*
 * Index of the first of the two ranges with the smallest gap between,
 * among the gaps that hold no byte of @keep (the first if all do).
 */
static u32 rn_rset_closest(const struct rn_rset *s,
			   const struct rn_range *keep, u32 nkeep)
{
	u32 i, best = 0, best_gap = ~0U;

	for (i = 0; i + 1 < s->n; i++) {
		u32 gap = s->r[i + 1].start - s->r[i].end;

		if (gap < best_gap && !rn_rset_gap_keeps(s, i, keep, nkeep)) {
			best_gap = gap;
			best = i;
		}
	}
	return best;
}

/*
 * Apply the cap: forget the highest range, or merge the closest two
 * whose gap holds no byte of @keep (bytes known to have arrived).
 */
static void rn_rset_fit(struct rn_rset *s, const struct rn_range *keep,
			u32 nkeep)
{
	u32 i;

	while (s->n > RN_RANGES_MAX) {
		s->overflows++;
		if (s->overflow == RN_OVF_DROP_HIGH) {
			s->n--;
			continue;
		}
		i = rn_rset_closest(s, keep, nkeep);
		s->r[i].end = s->r[i + 1].end;
		rn_rset_cut(s, i + 1, 1);
	}
}

/* Add @r, merging every range it overlaps or touches; no cap yet. */
static void rn_rset_merge(struct rn_rset *s, const struct rn_range *r)
{
	struct rn_range m = *r;
	u32 i = 0, j;

	if (rn_range_empty(r))
		return;
	while (i < s->n && sat_before(s->r[i].end, m.start))
		i++;
	for (j = i; j < s->n && !sat_after(s->r[j].start, m.end); j++) {
		m.start = sat_seq_min(m.start, s->r[j].start);
		m.end = sat_seq_max(m.end, s->r[j].end);
	}
	rn_rset_cut(s, i, j - i);
	rn_rset_put(s, i, &m);
}

/* Remove @r; a range that strictly contains it splits in two; no cap yet. */
static void rn_rset_remove(struct rn_rset *s, const struct rn_range *r)
{
	u32 i = 0;

	if (rn_range_empty(r))
		return;
	while (i < s->n && sat_before(s->r[i].start, r->end)) {
		struct rn_range x = s->r[i], piece;

		if (!sat_after(x.end, r->start)) {
			i++;
			continue;
		}
		rn_rset_cut(s, i, 1);
		if (sat_before(x.start, r->start)) {
			piece = rn_range_make(x.start, r->start);
			rn_rset_put(s, i++, &piece);
		}
		if (sat_before(r->end, x.end)) {
			piece = rn_range_make(r->end, x.end);
			rn_rset_put(s, i++, &piece);
		}
	}
}

void rn_rset_add(struct rn_rset *s, const struct rn_range *r)
{
	rn_rset_merge(s, r);
	rn_rset_fit(s, NULL, 0);
}

void rn_rset_sub(struct rn_rset *s, const struct rn_range *r)
{
	rn_rset_remove(s, r);
	rn_rset_fit(s, NULL, 0);
}

/* Add the parts of @r that @except does not hold (@s != @except). */
void rn_rset_add_except(struct rn_rset *s, const struct rn_range *r,
			const struct rn_rset *except)
{
	struct rn_range cur = *r, piece;
	u32 i;

	for (i = 0; i < except->n && !rn_range_empty(&cur); i++) {
		const struct rn_range *x = &except->r[i];

		if (!sat_before(x->start, cur.end))
			break;
		if (!sat_after(x->end, cur.start))
			continue;
		piece = rn_range_make(cur.start, x->start);
		rn_rset_add(s, &piece);
		cur.start = sat_seq_max(cur.start, x->end);
	}
	rn_rset_add(s, &cur);
}

/* Forget everything before @seq. */
void rn_rset_prune(struct rn_rset *s, u32 seq)
{
	u32 i = 0;

	while (i < s->n && !sat_after(s->r[i].end, seq))
		i++;
	rn_rset_cut(s, 0, i);
	if (s->n && sat_before(s->r[0].start, seq))
		s->r[0].start = seq;
}

/* ---- the receiver (seed 001 §IV, §IV-A) ---- */

static u32 rn_wnd_clamp(u32 wnd)
{
	return wnd > RN_WINDOW_MAX ? RN_WINDOW_MAX : wnd;
}

/*
 * A flow starts at the ACK that created it: everything before @rcv_nxt
 * arrived, nothing above it is known yet (Q is empty at rcv_nxt).
 */
void rn_recv_init(struct rn_recv *st, u32 rcv_nxt, u32 wnd, u8 wscale)
{
	memset(st, 0, sizeof(*st));
	st->rcv_nxt = rcv_nxt;
	st->rcv_right = rcv_nxt + rn_wnd_clamp(wnd);
	st->q_start = rcv_nxt;
	st->q_end = rcv_nxt;
	st->wscale = wscale > RN_WSCALE_MAX ? RN_WSCALE_MAX : wscale;
	rn_rset_init(&st->drop, RN_OVF_COARSEN);
	rn_rset_init(&st->reorder, RN_OVF_DROP_HIGH);
}

/*
 * Data above the in-order point arrived before the state existed (the
 * SACK blocks of the ACK that created it): Q starts at its top, and the
 * holes below stay unclassified.
 */
void rn_recv_set_high(struct rn_recv *st, u32 high)
{
	if (sat_after(high, st->q_end) && !sat_after(high, st->rcv_right)) {
		st->q_start = high;
		st->q_end = high;
	}
}

/*
 * Accept a segment that starts inside the window we advertised, or at most
 * one such window below it (an old duplicate still carries evidence); trim
 * what lies beyond it.  A forged segment must guess its sequence number
 * within two windows, not a quarter of the sequence space, to move Q.
 */
static bool rn_recv_window(const struct rn_recv *st, struct rn_range *p)
{
	u32 lo = st->rcv_nxt - (st->rcv_right - st->rcv_nxt);

	if (rn_range_empty(p) || p->start - lo >= st->rcv_right - lo)
		return false;
	if (sat_after(p->end, st->rcv_right))
		p->end = st->rcv_right;
	return true;
}

/* §III-D: a trusted option proves the path; an untrusted one disproves it. */
static void rn_recv_learn_path(struct rn_recv *st,
			       const struct rn_evidence *ev)
{
	if (ev->kind == RN_EV_EMPTY || ev->kind == RN_EV_DROPS)
		st->flags |= RN_RF_PROVEN;
	else if (ev->kind == RN_EV_UNTRUSTED)
		st->flags &= ~RN_RF_PROVEN;
}

/*
 * A dropped range wider than the window we advertise names bytes the
 * sender could not have had in flight: the option is not proof, and it
 * counts as an untrusted one (it must never make a gap "reordered").
 */
static enum rn_ev_kind rn_recv_ev_kind(const struct rn_recv *st,
				       const struct rn_evidence *ev)
{
	if (ev->kind == RN_EV_DROPS &&
	    ev->drop.end - ev->drop.start > st->rcv_right - st->rcv_nxt)
		return RN_EV_UNTRUSTED;
	return ev->kind;
}

/* The dropped range P:min..P:max, clipped to the window. */
static bool rn_recv_drops(const struct rn_recv *st,
			  const struct rn_evidence *ev, struct rn_range *d)
{
	if (ev->kind != RN_EV_DROPS)
		return false;
	*d = rn_range_clip(&ev->drop, st->rcv_nxt, st->rcv_right);
	return !rn_range_empty(d);
}

/*
 * Bytes that arrived (@keep: P and Q) leave the drop list, and a merge
 * that the cap forces never brings them back.
 */
static void rn_recv_undrop(struct rn_recv *st, const struct rn_range *r,
			   const struct rn_range *keep)
{
	rn_rset_remove(&st->drop, r);
	rn_rset_fit(&st->drop, keep, 2);
}

/*
 * A merge under the cap believes the bytes between two dropped ranges
 * dropped too: they leave the reorder list, so the lists never overlap.
 */
static void rn_recv_dropped_wins(struct rn_recv *st)
{
	u32 i;

	for (i = 0; i < st->drop.n; i++)
		rn_rset_sub(&st->reorder, &st->drop.r[i]);
}

/*
 * Every case of §IV with P:min/P:max: the dropped range leaves the reorder
 * list and enters the drop list, except the packets that did arrive (P:n
 * and Q:n: "P:min to P:n - 1 and P:n + 1 to P:max"); @keep holds P, Q.
 */
static void rn_recv_note_drops(struct rn_recv *st, const struct rn_range *d,
			       const struct rn_range *keep)
{
	rn_rset_sub(&st->reorder, d);
	rn_rset_merge(&st->drop, d);
	rn_rset_fit(&st->drop, keep, 2);
	rn_recv_undrop(st, &keep[0], keep);
	rn_recv_undrop(st, &keep[1], keep);
}

/*
 * A gap "is probably reordered" unless the drop list holds it (§IV), or
 * it lies below unk_end, where drop records may have been lost.
 */
static void rn_recv_reordered(struct rn_recv *st, u32 start, u32 end)
{
	struct rn_range g = rn_range_make(start, end);

	g = rn_range_clip(&g, st->rcv_nxt, st->rcv_right);
	if ((st->flags & RN_RF_UNKNOWN) && sat_before(g.start, st->unk_end))
		g.start = sat_before(st->unk_end, g.end) ? st->unk_end : g.end;
	rn_rset_add_except(&st->reorder, &g, &st->drop);
}

/*
 * UNKNOWN (include/satnet/epdn_wire.h): a gateway gave up a drop record
 * that may have been this flow's.  Any hole up to the highest byte seen
 * may be one of its drops: none of them is reordered any more, and none
 * ever will be, until the in-order point passes them.
 */
static void rn_recv_unknown(struct rn_recv *st, const struct rn_range *p)
{
	u32 top = sat_after(p->end, st->q_end) ? p->end : st->q_end;
	struct rn_range below = rn_range_make(st->rcv_nxt, top);

	if (!(st->flags & RN_RF_UNKNOWN) || sat_after(top, st->unk_end))
		st->unk_end = top;
	st->flags |= RN_RF_UNKNOWN;
	rn_rset_sub(&st->reorder, &below);
}

/*
 * The gaps §IV adds to the reorder list; the dropped range @d (if any) is
 * already in the drop list and so is skipped:
 *   P:n > Q:n            the gap Q:n + 1 .. P:n - 1 (all six cases);
 *   P:n < Q:n, D above Q the gap Q:n + 1 .. P:min - 1;
 *   P:n < Q:n, D below P the gap P:max + 1 .. P:n - 1;
 *   P:n < Q:n otherwise  none: P filled a hole.
 */
static void rn_recv_gaps(struct rn_recv *st, const struct rn_range *p,
			 const struct rn_range *d)
{
	if (sat_after(p->end, st->q_end)) {
		rn_recv_reordered(st, st->q_end, p->start);
		return;
	}
	if (!d)
		return;
	if (!sat_before(d->start, st->q_end))
		rn_recv_reordered(st, st->q_end, d->start);
	else if (!sat_after(d->end, p->start))
		rn_recv_reordered(st, d->end, p->start);
}

/* Q is the highest segment received. */
static void rn_recv_advance(struct rn_recv *st, const struct rn_range *p)
{
	if (sat_after(p->end, st->q_end)) {
		st->q_start = p->start;
		st->q_end = p->end;
	}
}

/* §IV on a proven path: the dropped range, then the gaps it reveals. */
static void rn_recv_classify(struct rn_recv *st, const struct rn_range *p,
			     const struct rn_evidence *ev,
			     const struct rn_range *keep)
{
	struct rn_range d;
	bool drops = rn_recv_drops(st, ev, &d);

	if (drops)
		rn_recv_note_drops(st, &d, keep);
	if (ev->unknown)
		rn_recv_unknown(st, p);
	rn_recv_gaps(st, p, drops ? &d : NULL);
}

/*
 * One data segment @seg = [seq, end_seq) with its evidence (§IV).  On a
 * proven path the gaps it reveals go to the reorder list and its dropped
 * range to the drop list; on an unproven path only Q moves, and no gap is
 * called reordered.
 *
 * §IV first deletes P:n from both lists.  Its bytes leave the drop list
 * here, but stay in the reorder list until TCP's own ACK shows them
 * (rn_recv_sacked()) or passes them: the hook sees a segment before TCP
 * does, and TCP may yet discard it (PAWS, RFC 7323 §5) or build an ACK
 * before it processes P (socket backlog, another CPU); either ACK still
 * names P's hole, which the seed's receiver would call reordered.
 */
enum rn_data_result rn_recv_data(struct rn_recv *st,
				 const struct rn_range *seg,
				 const struct rn_evidence *ev)
{
	struct rn_evidence e = *ev;
	struct rn_range p = *seg, keep[2];
	u32 ovf = st->drop.overflows;
	bool proven;

	if (!rn_recv_window(st, &p))
		return RN_DATA_OUTSIDE;
	e.kind = rn_recv_ev_kind(st, ev);
	rn_recv_learn_path(st, &e);
	keep[0] = rn_range_clip(&p, st->rcv_nxt, st->rcv_right);
	keep[1] = rn_range_make(st->q_start, st->q_end);
	rn_recv_undrop(st, &keep[0], keep);
	proven = st->flags & RN_RF_PROVEN;
	if (proven)
		rn_recv_classify(st, &p, &e, keep);
	if (st->drop.overflows != ovf)
		rn_recv_dropped_wins(st);
	rn_recv_advance(st, &p);
	if (e.kind != ev->kind)
		return RN_DATA_WIDE;
	return proven ? RN_DATA_CLASSIFIED : RN_DATA_UNPROVEN;
}

/*
 * RFC 7323 §5.3 as tcp_paws_discard() applies it: with timestamps on, a
 * segment whose TSval is more than 1 older than TS.Recent will be thrown
 * away by TCP.  Otherwise TS.Recent follows TCP's tcp_replace_ts_recent():
 * a segment in the window that starts at or before the ACK number last
 * sent, and is not older than TS.Recent, sets it.  The 24-day rule never
 * applies: a flow that idle has long been freed.
 */
bool rn_recv_paws(struct rn_recv *st, const struct rn_range *seg, u32 tsval)
{
	bool known = st->flags & RN_RF_TS_RECENT;

	if (!(st->flags & RN_RF_TSTAMPS))
		return false;
	if (known && (s32)(st->ts_recent - tsval) > 1)
		return true;
	if (!sat_after(seg->start, st->rcv_nxt) &&
	    !sat_before(seg->end, st->rcv_nxt) &&
	    (!known || (s32)(tsval - st->ts_recent) >= 0)) {
		st->ts_recent = tsval;
		st->flags |= RN_RF_TS_RECENT;
	}
	return false;
}

/*
 * TCP threw the segment away after the hook saw it (it failed PAWS): its
 * bytes did not arrive, and the sender must send them again.  They leave
 * the reorder list, so no ACK that names them is marked, and enter the
 * drop list, so no later gap makes them reordered again; where the
 * segment is Q, the highest seen, Q's bytes stay out of the drop list and
 * an ACK that names them is unclassified.
 */
void rn_recv_discarded(struct rn_recv *st, const struct rn_range *seg)
{
	struct rn_range p = *seg, below, above;
	u32 ovf = st->drop.overflows;

	if (!rn_recv_window(st, &p))
		return;
	p = rn_range_clip(&p, st->rcv_nxt, st->rcv_right);
	if (rn_range_empty(&p))
		return;
	rn_rset_sub(&st->reorder, &p);
	below = rn_range_make(p.start, sat_seq_min(p.end, st->q_start));
	above = rn_range_make(sat_seq_max(p.start, st->q_end), p.end);
	rn_rset_add(&st->drop, &below);
	rn_rset_add(&st->drop, &above);
	if (st->drop.overflows != ovf)
		rn_recv_dropped_wins(st);
}

/* Our ACKs carry timestamps: TCP checks PAWS on this flow. */
void rn_recv_tstamps(struct rn_recv *st)
{
	st->flags |= RN_RF_TSTAMPS;
}

/* The peer's FIN arrived: the flow ends once it is acknowledged. */
void rn_recv_fin(struct rn_recv *st, u32 fin_end)
{
	st->flags |= RN_RF_FIN;
	st->fin_end = fin_end;
}

/* The in-order point moved: what lies before it is history. */
static void rn_recv_advance_ack(struct rn_recv *st, u32 ack)
{
	st->rcv_nxt = ack;
	if (st->rcv_right - ack > RN_WINDOW_MAX)	/* ACK past the edge */
		st->rcv_right = ack;
	rn_rset_prune(&st->drop, ack);
	rn_rset_prune(&st->reorder, ack);
	if ((st->flags & RN_RF_UNKNOWN) && !sat_before(ack, st->unk_end))
		st->flags &= ~RN_RF_UNKNOWN;
	if (sat_after(ack, st->q_end)) {
		st->q_start = ack;
		st->q_end = ack;
	}
}

/*
 * §IV-A: the first missing byte after the in-order point is the ACK
 * number.  Reordered: set the drop-negative bit.  Dropped or unknown:
 * leave it clear.  Both bullets of §IV-A reduce to this test; the first
 * one (no out-of-order data left) is the case ack == Q:n + 1.
 */
static enum rn_mark rn_recv_mark(const struct rn_recv *st, u32 ack)
{
	if (rn_rset_has(&st->reorder, ack))
		return RN_MARK_REORDER;
	if (rn_rset_has(&st->drop, ack))
		return RN_MARK_DROP;
	if (!sat_before(ack, st->q_end))
		return RN_MARK_INORDER;
	return RN_MARK_UNKNOWN;
}

/*
 * The right edge never moves left, and never more than 2^30 above the
 * in-order point (an old ACK far below it cannot stretch the window).
 */
static void rn_recv_widen(struct rn_recv *st, u32 right)
{
	u32 want = right - st->rcv_nxt;

	if (want <= RN_WINDOW_MAX && want > st->rcv_right - st->rcv_nxt)
		st->rcv_right = right;
}

/* An ACK we send: @ack and the window @wnd in bytes (already scaled). */
enum rn_mark rn_recv_ack(struct rn_recv *st, u32 ack, u32 wnd)
{
	u32 right = ack + rn_wnd_clamp(wnd);

	if (sat_after(ack, st->rcv_nxt))
		rn_recv_advance_ack(st, ack);
	rn_recv_widen(st, right);
	return rn_recv_mark(st, ack);
}

/*
 * The SACK blocks of an ACK we send are bytes TCP holds: no hole there is
 * left to classify, and its reorder range goes (a hole filled in part
 * splits).  Without this, a gap filled while a segment below it waits an
 * RTT for its retransmission would hold a range until the ACK passed it.
 */
void rn_recv_sacked(struct rn_recv *st, const struct rn_range *blocks,
		    u32 n)
{
	struct rn_range r;
	u32 i;

	for (i = 0; i < n && i < SAT_SACK_MAX; i++) {
		r = rn_range_clip(&blocks[i], st->rcv_nxt, st->rcv_right);
		rn_rset_sub(&st->reorder, &r);
	}
}

/*
 * RFC 5961 §3.2: a reset ends the flow only at exactly the in-order point,
 * the next byte we expect; a blind attacker must guess all 32 bits.
 */
bool rn_recv_rst_ok(const struct rn_recv *st, u32 seq)
{
	return seq == st->rcv_nxt;
}

/* Everything up to and including the peer's FIN was acknowledged. */
bool rn_recv_done(const struct rn_recv *st)
{
	return (st->flags & RN_RF_FIN) &&
	       !sat_before(st->rcv_nxt, st->fin_end);
}

u32 rn_recv_overflows(const struct rn_recv *st)
{
	return st->drop.overflows + st->reorder.overflows;
}

/* ---- parsers ---- */

/*
 * A SACK option (RFC 2018) of @olen bytes: keep its blocks, the first
 * SAT_SACK_MAX of a packet, and the highest right edge above the ACK.  One
 * whose length is not that of 1 to 4 blocks is ignored, as the stack's
 * parser does.  Edges are compared as offsets from the ACK: a chain of
 * blocks, each after() the last, can run more than 2^31 past it and wrap
 * below it.
 */
static void rn_parse_sack(const u8 *opt, u32 olen, u32 ack,
			  struct rn_tcpopts *o)
{
	struct sat_sack b[SAT_SACK_MAX];
	int i, n = sat_sack_blocks(opt, olen, b);

	for (i = 0; i < n; i++) {
		u32 right = b[i].end;

		if (o->nblocks < SAT_SACK_MAX)
			o->blocks[o->nblocks++] = rn_range_make(b[i].start,
								right);
		if (sat_after(right, ack) &&
		    right - ack > o->sack_high - ack) {
			o->sack_high = right;
			o->sack = true;
		}
	}
}

/* A timestamp option (RFC 7323 §3): the last one of a segment counts. */
static void rn_parse_ts(const u8 *opt, struct rn_tcpopts *o)
{
	o->ts = true;
	o->tsval = sat_get_be32(opt + 2);
}

/* Walk TCP options (@len bytes after the fixed header) of a segment. */
void rn_parse_tcpopts(const u8 *opts, u32 len, u32 ack, struct rn_tcpopts *o)
{
	u32 i;
	int olen;

	o->wscale = -1;
	o->ts = false;
	o->tsval = 0;
	o->sack = false;
	o->sack_high = ack;
	o->nblocks = 0;
	for (i = 0; i < len; i += olen) {
		olen = sat_opt_len(opts, len, i);
		if (olen <= 0)
			break;
		if (opts[i] == 3 && olen == 3)
			o->wscale = opts[i + 2] > RN_WSCALE_MAX ?
				    RN_WSCALE_MAX : opts[i + 2];
		else if (opts[i] == SAT_OPT_TIMESTAMP && olen == 10)
			rn_parse_ts(opts + i, o);
		else if (opts[i] == SAT_OPT_SACK)
			rn_parse_sack(opts + i, olen, ack, o);
	}
}

/*
 * What a data packet's header (@hdr, checked into @ip) tells the receiver
 * (§III-D): the option is proof only when EPDN-TTL == TTL, and, when the
 * host requires it, when the sender started it (HOST).  EMPTY: no drop;
 * otherwise min..max, inclusive, which must not run backwards.  UNKNOWN
 * (ev->unknown) says drop records may be missing.
 */
enum rn_ev_status rn_epdn_evidence(const u8 *hdr, const struct sat_ip *ip,
				   bool require_host, struct rn_evidence *ev)
{
	u32 optlen = ip->hdr_len - EPDN_IPV4_HDR_MIN;
	struct epdn_opt o;
	int off;

	ev->kind = RN_EV_ABSENT;
	ev->unknown = false;
	off = sat_ipopt_find(hdr + EPDN_IPV4_HDR_MIN, optlen);
	if (off == SAT_ENOENT)
		return RN_EVS_ABSENT;
	ev->kind = RN_EV_UNTRUSTED;
	if (off < 0 || epdn_opt_decode(hdr + EPDN_IPV4_HDR_MIN + off,
				       optlen - (u32)off, &o))
		return RN_EVS_MALFORMED;
	if (o.ttl != ip->ttl)
		return RN_EVS_TTL;
	if (require_host && !(o.flags & EPDN_F_HOST))
		return RN_EVS_NOHOST;
	ev->unknown = o.flags & EPDN_F_UNKNOWN;
	if (o.flags & EPDN_F_EMPTY) {
		ev->kind = RN_EV_EMPTY;
		return RN_EVS_TRUSTED;
	}
	if (sat_before(o.max, o.min))
		return RN_EVS_MALFORMED;
	ev->kind = RN_EV_DROPS;
	ev->drop = rn_range_make(o.min, o.max + 1);
	return RN_EVS_TRUSTED;
}

/* The option a sender originates (§III-D): EPDN-TTL = TTL, no drops. */
void rn_epdn_encode_empty(u8 *buf, u8 ttl)
{
	struct epdn_opt o = {
		.ttl = ttl,
		.flags = EPDN_F_EMPTY | EPDN_F_HOST,
	};

	epdn_opt_encode(buf, &o);
}

/*
 * The origin stamps only a plain 20-byte header, and only when the
 * largest segment (@seg_len, network layer) still fits the MTU.
 */
enum rn_origin_action rn_origin_decide(u32 hdr_len, u32 seg_len, u32 mtu)
{
	if (hdr_len != EPDN_IPV4_HDR_MIN)
		return RN_ORIGIN_SKIP_OPTS;
	if (seg_len + EPDN_OPT_LEN > mtu)
		return RN_ORIGIN_SKIP_MTU;
	return RN_ORIGIN_STAMP;
}
