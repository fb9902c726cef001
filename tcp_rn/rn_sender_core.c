// SPDX-License-Identifier: GPL-2.0
/*
 * RN-TCP sender core, plain C (see include/satnet/rn_sender_core.h).
 *
 * Seed 001 §IV-B: a hole whose dupACKs carry the drop-negative bit (and no
 * recent ECE) is believed reordered, and the sender waits for
 * dupthresh = max(4, swnd + swnd * kval) dupACKs before it retransmits;
 * a hole whose dupACKs do not all carry the bit is believed dropped, and
 * the sender retransmits at 3 dupACKs.  kval = max(ceil(srtt/min_rtt) * c,
 * kval) and doubles on every false fast retransmit a D-SACK reveals.  After
 * a timeout kval is 0 and dupthresh 3 until the first D-SACK (or undo).
 */
#include <satnet/rn_sender_core.h>

static u16 rn_inc16(u16 v)
{
	return v == 0xffff ? v : v + 1;
}

static u32 rn_min(u32 a, u32 b)
{
	return a < b ? a : b;
}

static u32 rn_max(u32 a, u32 b)
{
	return a > b ? a : b;
}

/* ---- the ACK as it arrives (the hook's half) ---- */

/*
 * The @n SACK blocks of an ACK.  RFC 2883: the first block reports a
 * duplicate when it lies below the ACK or inside the second block; every
 * other block above the ACK means the receiver holds data beyond a hole.
 */
static void rn_parse_sack(const struct sat_sack *b, int n, struct rn_wire *w)
{
	int i;

	for (i = 0; i < n; i++) {
		u32 s = b[i].start, e = b[i].end;
		bool dup = false;

		if (!sat_before(s, e))
			continue;	/* empty or inverted: not a block */
		if (i == 0) {
			dup = sat_before(s, w->ack);
			if (!dup && n > 1)
				dup = !sat_before(s, b[1].start) &&
				      !sat_after(e, b[1].end);
		}
		if (dup) {
			w->flags |= RN_W_DSACK;
			w->dsack_start = s;
			w->dsack_end = e;
		} else if (sat_after(e, w->ack)) {
			w->flags |= RN_W_HOLE;
		}
	}
}

/*
 * Walk the option list.  A malformed list (a length below 2, or one that
 * runs past the header, or a SACK option whose length is not 2 + 8n with
 * n <= 4) stops the walk: what was read before stays, the rest is
 * ignored, and RN_W_BADOPT tells the caller.
 */
static void rn_parse_opts(const u8 *o, u32 len, struct rn_wire *w)
{
	struct sat_sack blk[SAT_SACK_MAX];
	int olen, n;
	u32 i;

	for (i = 0; i < len; i += olen) {
		olen = sat_opt_len(o, len, i);
		if (!olen)
			return;
		if (olen < 0)
			goto bad;
		if (o[i] != SAT_OPT_SACK)
			continue;
		n = sat_sack_blocks(o + i, olen, blk);
		if (n < 0 || (w->flags & (RN_W_HOLE | RN_W_DSACK)))
			goto bad;	/* also: a second SACK option */
		rn_parse_sack(blk, n, w);
	}
	return;
bad:
	w->flags |= RN_W_BADOPT;
}

enum rn_parse_result rn_parse_ack(const u8 *th, u32 len, struct rn_wire *w)
{
	struct sat_tcp t;

	w->flags = 0;
	w->dsack_start = 0;
	w->dsack_end = 0;
	if (sat_parse_tcp(th, len, len, &t))
		return RN_PARSE_BAD;
	w->hdr_len = t.hdr_len;
	w->tcp_flags = t.flags;
	if (!(t.flags & SAT_TCP_ACK) || (t.flags & (SAT_TCP_SYN | SAT_TCP_RST)))
		return RN_PARSE_NOT_ACK;
	w->seq = t.seq;
	w->ack = t.ack;
	if (th[RN_DN_BYTE] & RN_DN_MASK)
		w->flags |= RN_W_DN;
	if (t.flags & SAT_TCP_ECE)
		w->flags |= RN_W_ECE;
	rn_parse_opts(th + SAT_TCP_HDR_MIN, t.hdr_len - SAT_TCP_HDR_MIN, w);
	return RN_PARSE_OK;
}

/*
 * Count one ACK into the latch.  The counts follow the train of the ACK
 * number: a new ACK number starts a new train.  Only ACKs with a hole
 * (a SACK block above the ACK) belong to a train: an ACK without one has
 * no dupACK to classify, even when an RN-TCP receiver sets the bit on it
 * (§IV-A, first case).
 */
void rn_latch_update(struct rn_latch *l, const struct rn_wire *w)
{
	bool dn = w->flags & RN_W_DN;

	if (dn)
		l->dn_acks++;
	if (dn && (w->flags & RN_W_ALLACKED) && l->bogus < 0xff)
		l->bogus++;
	if (w->flags & RN_W_DSACK) {
		l->dsack_start = w->dsack_start;
		l->dsack_end = w->dsack_end;
		l->flags |= RN_L_DSACK;
	}
	if (!(w->flags & RN_W_HOLE))
		return;
	if (!(l->flags & RN_L_VALID) || l->seq != w->ack) {
		l->seq = w->ack;
		l->dn_set = 0;
		l->dn_clear = 0;
		l->flags |= RN_L_VALID;
	}
	if (dn)
		l->dn_set = rn_inc16(l->dn_set);
	else
		l->dn_clear = rn_inc16(l->dn_clear);
}

/* ---- the rules (the congestion module's half) ---- */

/*
 * What the latch says about this ACK: the counts, if they belong to the
 * train at snd_una; whether the peer is believed; and the D-SACK block,
 * when the stack took a D-SACK from this ACK (@a->dsack).
 */
void rn_ack_from_latch(struct rn_ack *a, const struct rn_latch *l)
{
	if ((l->flags & RN_L_VALID) && l->seq == a->snd_una) {
		a->dn_known = 1;
		a->dn_set = l->dn_set;
		a->dn_clear = l->dn_clear;
	}
	a->dn_distrust = l->bogus >= RN_BOGUS_MAX;
	if (a->dsack && (l->flags & RN_L_DSACK)) {
		a->dsack_known = 1;
		a->dsack_start = l->dsack_start;
		a->dsack_end = l->dsack_end;
	}
}

void rn_sender_init(struct rn_sender *s, const struct rn_params *p)
{
	*s = (struct rn_sender){ 0 };
	s->applied = p->dupthresh_drop;
	s->dupthresh = p->dupthresh_drop;
}

/* kval = max(ceil(srtt / min_rtt) * c, kval), per-mille, bounded. */
u32 rn_kval_update(u32 kval, u32 srtt_us, u32 min_rtt_us, u32 c_permille)
{
	u64 ratio, k;

	if (!min_rtt_us || !srtt_us)
		ratio = 1;
	else
		ratio = ((u64)srtt_us + min_rtt_us - 1) / min_rtt_us;
	k = ratio * c_permille;
	if (k > RN_KVAL_MAX)
		k = RN_KVAL_MAX;
	return rn_max(kval, (u32)k);
}

/* dupthresh = max(4, swnd + swnd * kval), rounded up, bounded. */
u32 rn_dupthresh(u32 swnd, u32 kval, const struct rn_params *p)
{
	u64 d = swnd + ((u64)swnd * kval + RN_KVAL_ONE - 1) / RN_KVAL_ONE;

	if (d < p->dupthresh_min)
		d = p->dupthresh_min;
	if (d > p->dupthresh_max)
		d = p->dupthresh_max;
	return (u32)d;
}

static bool rn_ece_recent(const struct rn_sender *s, const struct rn_params *p,
			  const struct rn_ack *a)
{
	u32 win = rn_max(a->srtt_us / 1000, 1) * p->ece_rtts;

	return (s->flags & RN_F_ECE) && a->now_ms - s->last_ece_ms < win;
}

/*
 * §IV-B2/3: the train is reordered only if its dupACKs carry the bit and
 * no ECN echo came recently; one dupACK without the bit makes it a drop,
 * and a drop stays a drop for the rest of the train.  What we cannot
 * read counts as "bit clear": the sender then acts as SACK does.
 */
enum rn_class rn_classify(const struct rn_sender *s, const struct rn_params *p,
			  const struct rn_ack *a)
{
	bool same = (s->flags & RN_F_TRAIN) && s->train_seq == a->snd_una;

	if (s->flags & RN_F_FALLBACK)
		return RN_CLS_DROP;		/* §IV-B4 */
	if (a->ece || rn_ece_recent(s, p, a) || a->dn_distrust)
		return RN_CLS_DROP;
	if (same && s->cls == RN_CLS_DROP)
		return RN_CLS_DROP;
	if (a->dn_known && (a->dn_set || a->dn_clear))
		return a->dn_clear ? RN_CLS_DROP : RN_CLS_REORDER;
	if (same && s->cls == RN_CLS_REORDER)
		return RN_CLS_REORDER;
	return RN_CLS_DROP;
}

/*
 * §IV-B1: while the sender waits for a reordered hole it may send up to
 * dupthresh - 1 segments beyond cwnd, but never more than one more cwnd.
 * Linux sends one new segment per SACKed one (the pipe); the cap holds
 * packets_out at lt_limit by lowering cwnd as segments are SACKed.
 */
u32 rn_lt_cap(const struct rn_sender *s, u32 sacked_out)
{
	u32 cap = 1;

	if (s->lt_limit > sacked_out)
		cap = rn_max(s->lt_limit - sacked_out, 1);
	return rn_min(s->lt_cwnd, cap);
}

static void rn_lt_start(struct rn_sender *s, const struct rn_ack *a, u32 cwnd)
{
	u32 extra = s->dupthresh > cwnd ? cwnd : s->dupthresh - 1;

	s->lt_cwnd = cwnd;
	s->lt_limit = a->packets_out + extra;
	s->flags |= RN_F_LT;
}

/* Stop the cap; returns the cwnd to restore, or 0 if none was held. */
u32 rn_lt_stop(struct rn_sender *s)
{
	if (!(s->flags & RN_F_LT))
		return 0;
	s->flags &= ~RN_F_LT;
	return s->lt_cwnd;
}

/* End the train; with restore, hand the held-back cwnd to the caller. */
static void rn_end_train(struct rn_sender *s, struct rn_verdict *v,
			 bool restore)
{
	u32 cwnd = rn_lt_stop(s);

	if (cwnd && restore)
		v->cwnd = cwnd;
	s->flags &= ~RN_F_TRAIN;
	s->cls = RN_CLS_NONE;
}

/* A D-SACK arrived: §IV-B2 (kval doubles) and §IV-B4 (fallback ends). */
static void rn_on_dsack(struct rn_sender *s, const struct rn_params *p,
			const struct rn_ack *a, struct rn_verdict *v)
{
	if (s->flags & RN_F_FALLBACK) {
		s->flags &= ~RN_F_FALLBACK;
		v->fallback_end = 1;
	}
	if (!(s->flags & RN_F_FR) || !a->dsack_known ||
	    !rn_overlap(a->dsack_start, a->dsack_end, s->fr_start, s->fr_end))
		return;
	s->flags &= ~RN_F_FR;
	s->false_frs++;
	v->false_fr = 1;
	s->kval = rn_kval_update(s->kval, a->srtt_us, a->min_rtt_us,
				 p->c_permille);
	s->kval = rn_min(s->kval * 2, RN_KVAL_MAX);
}

void rn_on_ack(struct rn_sender *s, const struct rn_params *p,
	       const struct rn_ack *a, struct rn_verdict *v)
{
	enum rn_class cls;
	u32 cwnd;

	*v = (struct rn_verdict){ 0 };
	if (a->ece) {
		s->last_ece_ms = a->now_ms;
		s->flags |= RN_F_ECE;
	}
	if (a->dsack)
		rn_on_dsack(s, p, a, v);
	/*
	 * §IV-B4's fallback lasts until the first D-SACK.  On a connection
	 * where neither a D-SACK nor the timestamps can ever show that a
	 * retransmission was unneeded (rn_on_undo()), it would last for
	 * good; there it ends when the recovery from the timeout is over.
	 */
	if ((s->flags & RN_F_FALLBACK) && a->no_undo &&
	    a->state != RN_STATE_RECOVERY) {
		s->flags &= ~RN_F_FALLBACK;
		v->fallback_end = 1;
	}

	if (a->state == RN_STATE_RECOVERY) {
		/*
		 * Recovery and Loss: plain SACK recovery with dupthresh 3.
		 * The stack owns cwnd here (ssthresh() gave back any cwnd
		 * the limited transmit cap held), so nothing is restored.
		 */
		rn_end_train(s, v, false);
		s->applied = p->dupthresh_drop;
		v->dupthresh = s->applied;
		return;
	}
	if (!a->sacked_out) {
		/* No hole: the last rule stays until the next train. */
		rn_end_train(s, v, true);
		v->dupthresh = s->applied;
		return;
	}
	if (!(s->flags & RN_F_TRAIN) || s->train_seq != a->snd_una) {
		rn_end_train(s, v, true);	/* partial progress: new hole */
		s->flags |= RN_F_TRAIN;
		s->train_seq = a->snd_una;
	}
	cwnd = v->cwnd ? v->cwnd : (s->flags & RN_F_LT) ? s->lt_cwnd : a->cwnd;
	cls = rn_classify(s, p, a);
	if (cls != s->cls) {
		if (cls == RN_CLS_REORDER) {
			u32 swnd = cwnd;

			if (a->rwnd && a->rwnd < swnd)
				swnd = a->rwnd;
			s->kval = rn_kval_update(s->kval, a->srtt_us,
						 a->min_rtt_us, p->c_permille);
			s->dupthresh = rn_dupthresh(swnd, s->kval, p);
			/* In CWR the stack is already reducing cwnd. */
			if (p->lt_ext && a->state == RN_STATE_OPEN)
				rn_lt_start(s, a, cwnd);
		} else {
			cwnd = rn_lt_stop(s);
			if (cwnd)
				v->cwnd = cwnd;
		}
		s->cls = cls;
		v->new_train = cls;
	}
	s->applied = cls == RN_CLS_REORDER ? s->dupthresh : p->dupthresh_drop;
	v->cls = cls;
	v->dupthresh = s->applied;
	v->recover = a->sacked_out >= s->applied;
	if ((s->flags & RN_F_LT) && !v->recover) {
		v->cwnd = rn_lt_cap(s, a->sacked_out);
		v->lt_capped = v->cwnd < s->lt_cwnd;
	}
}

/* The stack entered Recovery: a fast retransmit of [start, end). */
void rn_on_fast_retransmit(struct rn_sender *s, const struct rn_params *p,
			   u32 hole_start, u32 hole_end)
{
	rn_end_train(s, NULL, false);
	s->applied = p->dupthresh_drop;
	s->fr_start = hole_start;
	s->fr_end = hole_end;
	s->flags |= RN_F_FR;
	s->fast_rexmits++;
}

/* §IV-B4: a retransmission timeout. */
void rn_on_rto(struct rn_sender *s, const struct rn_params *p)
{
	rn_end_train(s, NULL, false);
	s->kval = 0;
	s->applied = p->dupthresh_drop;
	s->flags |= RN_F_FALLBACK;
	s->flags &= ~RN_F_FR;	/* its D-SACK would now be ambiguous */
}

/*
 * §IV-B4 speaks of "a timeout", whatever the sender was doing: a timeout
 * in the middle of a fast recovery starts the fallback as well.
 */
void rn_on_enter(struct rn_sender *s, const struct rn_params *p,
		 enum rn_enter e, u32 hole_start, u32 hole_end)
{
	if (e == RN_ENTER_LOSS)
		rn_on_rto(s, p);
	else
		rn_on_fast_retransmit(s, p, hole_start, hole_end);
}

/*
 * The stack undid a cwnd reduction: a D-SACK or the timestamps (Eifel,
 * RFC 3522) proved a retransmission unnecessary.  §IV-B4 ends the timeout
 * fallback at "the first DSACK information", the first evidence that a
 * retransmission was not needed.  An undo is the same evidence, and it is
 * the only one a peer that sends no D-SACK (net.ipv4.tcp_dsack = 0) ever
 * gives: without it the fallback would never end there.  Returns whether
 * a fallback ended.
 */
bool rn_on_undo(struct rn_sender *s)
{
	if (!(s->flags & RN_F_FALLBACK))
		return false;
	s->flags &= ~RN_F_FALLBACK;
	return true;
}

/* ---- RN-TCP-ES: seed 000 §4.7 ---- */

/*
 * A segment was (fast or timeout) retransmitted.  Only a segment sent
 * exactly once before is tracked: with more copies in flight the pairing
 * of ACKs to transmissions is ambiguous (Karn).
 */
void rn_es_start(struct rn_es *e, u32 start, u32 end, u32 tx1_us)
{
	e->start = start;
	e->end = end;
	e->t1 = tx1_us;
	e->tx2 = 0;
	e->state = sat_before(start, end) ? RN_ES_SENT : RN_ES_IDLE;
}

void rn_es_retransmitted(struct rn_es *e, u32 tx2_us)
{
	if (e->state != RN_ES_SENT || (s32)(tx2_us - e->t1) <= 0)
		return;
	e->tx2 = tx2_us;
	e->state = RN_ES_RETX;
}

/*
 * The first ACK that covers the segment: pair it with the first
 * transmission.  If the segment was acknowledged before its copy left,
 * there is nothing to pair.
 */
void rn_es_acked(struct rn_es *e, u32 snd_una, u32 now_us)
{
	if (e->state == RN_ES_SENT && !sat_before(snd_una, e->end)) {
		e->state = RN_ES_IDLE;
		return;
	}
	if (e->state != RN_ES_RETX || sat_before(snd_una, e->end))
		return;
	if ((s32)(now_us - e->t1) <= 0) {
		e->state = RN_ES_IDLE;
		return;
	}
	e->t1 = now_us - e->t1;		/* rtt1 */
	e->state = RN_ES_ACKED;
}

/*
 * The D-SACK that reports the second copy: pair it with the
 * retransmission, and the mean of the two is one RTT sample.
 */
bool rn_es_dsack(struct rn_es *e, u32 dstart, u32 dend, u32 now_us,
		 u32 *sample_us)
{
	u32 rtt2;

	if (e->state != RN_ES_ACKED ||
	    !rn_overlap(dstart, dend, e->start, e->end))
		return false;
	e->state = RN_ES_IDLE;
	if ((s32)(now_us - e->tx2) <= 0)
		return false;
	rtt2 = now_us - e->tx2;
	*sample_us = (u32)(((u64)e->t1 + rtt2) / 2);
	return *sample_us > 0;
}

/*
 * No D-SACK within limit_us of the retransmission (or no retransmission
 * within limit_us of the first send): one copy was lost or never left,
 * so the pairing is unknown and no sample is taken (Karn's rule).
 */
void rn_es_expire(struct rn_es *e, u32 now_us, u32 limit_us)
{
	u32 since;

	if (e->state == RN_ES_IDLE)
		return;
	since = e->state == RN_ES_SENT ? e->t1 : e->tx2;
	if ((s32)(now_us - since) > (s32)limit_us)
		e->state = RN_ES_IDLE;
}

/*
 * Jacobson/Karels (RFC 6298) on struct tcp_sock's scaled fields: srtt
 * gains 1/8 of the error and mdev 1/4 of the error's excess.  As in Linux,
 * a sample below srtt moves mdev with a gain of 1/32 only, and rttvar
 * keeps the largest mdev of the current round (the stack decays it once
 * per RTT when it takes its own next sample).
 */
void rn_rtt_sample(struct rn_rtt *r, u32 m_us, u32 rto_min_us)
{
	s64 err, dev;

	if (!m_us)
		m_us = 1;
	if (!r->srtt8) {
		r->srtt8 = m_us << 3;
		r->mdev4 = m_us << 1;
		r->rttvar4 = rn_max(r->mdev4, rto_min_us);
		r->mdev_max4 = r->rttvar4;
		return;
	}
	err = (s64)m_us - (r->srtt8 >> 3);
	r->srtt8 = (u32)((s64)r->srtt8 + err);	/* srtt += err / 8 */
	if (!r->srtt8)
		r->srtt8 = 1;
	dev = err < 0 ? -err : err;
	dev -= r->mdev4 >> 2;
	if (err < 0 && dev > 0)
		dev >>= 3;
	r->mdev4 = (u32)((s64)r->mdev4 + dev);
	if (r->mdev4 > r->mdev_max4) {
		r->mdev_max4 = r->mdev4;
		if (r->mdev_max4 > r->rttvar4)
			r->rttvar4 = r->mdev_max4;
	}
}

bool rn_acked_still_queued(bool has_head, u32 head_end_seq, u32 snd_una)
{
	return has_head && !sat_after(head_end_seq, snd_una);
}
