// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: the RN-TCP sender core, tcp_rn/rn_sender_core.c, driven by
 * any sequence of the events tcp_rn.ko feeds it.
 *
 *   u16 c_permille, u16 dupthresh_max, u8 ece_rtts, u8 lt_ext: the
 *   parameters, within the bounds rn_params() of rn_cong.c applies; then
 *   operations, a byte and its arguments:
 *     WIRE    an incoming ACK's TCP header (built: ACK number near snd_una,
 *             the drop-negative bit, ECE, SACK and D-SACK blocks near the
 *             ACK, a timestamp; or raw bytes, cut anywhere) through
 *             rn_parse_ack() into rn_latch_update(), as the hook does
 *     ACK     the stack's view of an ACK (snd_una, sacked_out, packets_out,
 *             cwnd, rwnd, RTTs, clocks, ECE, D-SACK, state), with what
 *             the latch says (rn_ack_from_latch(), as rn_gather() does,
 *             or any counts): rn_on_ack(), then the RN-TCP-ES steps of
 *             rn_es_ack() and rn_rtt_sample()
 *     ENTER   Recovery (a fast retransmit of a hole near snd_una, and
 *             rn_es_start()) or Loss: rn_on_enter()
 *     UNDO    rn_on_undo()
 *     LTSTOP  rn_lt_stop()
 *     RTT     rn_rtt_sample() with any sample and rto_min
 *     PURE    rn_kval_update(), rn_dupthresh(), rn_lt_cap() and
 *             rn_acked_still_queued() on any arguments
 *
 * After every operation the sender, the latch and the RTT estimator keep
 * their invariants, and each verdict is the one the rules of §IV-B give.
 * What an ACK's options say is checked against a reference walk of them
 * (fuzz_ref_opt(), fuzz_ref_sack()), and every SACK option's blocks as
 * sat_sack_blocks() reads them.
 */
#include "tests/fuzz/fuzz.h"
#include "tcp_rn/rn_sender_core.c"

#define RN_C_PERMILLE_MAX	10000	/* rn_cong.c */
#define RN_ECE_RTTS_MAX		64
#define RTT_SCALED_MAX		(1u << 29)	/* srtt << 3 fits in 32 bits */

struct run {
	struct rn_params p;
	struct rn_sender s;
	struct rn_latch l;
	struct rn_rtt rtt;
	u32 una, now_ms, now_us;
	u32 dn_acks, bogus;	/* model of the latch's counters */
	u32 m_min, m_max;	/* samples the estimator took */
	bool m_wide;		/* one of them was >= RTT_SCALED_MAX */
};

/* A timestamp option, then SACK options of blocks near the ACK. */
static u32 build_opts(struct fuzz_in *in, u32 ack, u8 *o)
{
	u8 mode = fuzz_u8(in);
	u32 len = 0, n, i, k;

	if (mode & 1) {
		o[len++] = SAT_OPT_NOP;
		o[len++] = SAT_OPT_NOP;
		o[len++] = 8;
		o[len++] = 10;
		fuzz_fill(in, o + len, 8);
		len += 8;
	}
	for (k = 0; k < 1u + !!(mode & 2); k++) {
		n = 1 + fuzz_pick(in, SAT_SACK_MAX);
		if (len + 4 + 8 * n > 40)
			break;
		o[len++] = SAT_OPT_NOP;
		o[len++] = SAT_OPT_NOP;
		o[len++] = SAT_OPT_SACK;
		o[len++] = (u8)(2 + 8 * n);
		for (i = 0; i < n; i++) {
			u32 s = fuzz_near(in, ack);

			put32(o + len, s);
			put32(o + len + 4, s + fuzz_len(in, 0x80000000u));
			len += 8;
		}
	}
	return len;
}

/*
 * sat_sack_blocks() on an exact-size copy of the option at @o: the
 * blocks the reference reads, or SAT_EBADMSG when it reads none.
 */
static void check_sack_blocks(const u8 *o, u64 size)
{
	u32 left[SAT_SACK_MAX], right[SAT_SACK_MAX];
	int n = fuzz_ref_sack(o, size, left, right), i;
	struct sat_sack blk[SAT_SACK_MAX];
	u8 *opt = fuzz_dup(o, (u32)size);

	FUZZ_CHECK(sat_sack_blocks(opt, (u32)size, blk) ==
		   (n < 0 ? SAT_EBADMSG : n));
	for (i = 0; i < n; i++)
		FUZZ_CHECK(blk[i].start == left[i] && blk[i].end == right[i]);
	fuzz_free(opt, (u32)size);
}

/*
 * What the SACK options of @len option bytes tell the sender, by the
 * rules of rn_parse_opts(): the flags HOLE, DSACK and BADOPT, and the
 * D-SACK block in @w.
 */
static u32 ref_sack_flags(const u8 *o, u32 len, u32 ack, struct rn_wire *w)
{
	u32 left[SAT_SACK_MAX], right[SAT_SACK_MAX], flags = 0;
	int kind, n, i;
	u64 at, size;

	for (at = 0; (kind = fuzz_ref_opt(o, len, at, &size)) != -1;
	     at += size) {
		if (kind == -2)
			return flags | RN_W_BADOPT;
		if (kind != SAT_OPT_SACK)
			continue;
		check_sack_blocks(o + at, size);
		n = fuzz_ref_sack(o + at, size, left, right);
		if (n < 0 || (flags & (RN_W_HOLE | RN_W_DSACK)))
			return flags | RN_W_BADOPT;
		for (i = 0; i < n; i++) {
			if (!sat_before(left[i], right[i]))
				continue;
			if (i == 0 && (sat_before(left[0], ack) ||
				       (n > 1 && !sat_before(left[0], left[1]) &&
					!sat_after(right[0], right[1])))) {
				flags |= RN_W_DSACK;
				w->dsack_start = left[0];
				w->dsack_end = right[0];
			} else if (sat_after(right[i], ack)) {
				flags |= RN_W_HOLE;
			}
		}
	}
	return flags;
}

/* rn_parse_ack() reads what the header says, and nothing it may not. */
static void check_wire(const u8 *th, u32 len, enum rn_parse_result res,
		       const struct rn_wire *w)
{
	struct rn_wire ref = { 0 };
	u32 flags;

	u32 hlen = len >= SAT_TCP_HDR_MIN ? (th[12] >> 4) * 4u : 0;

	if (len < SAT_TCP_HDR_MIN || hlen < SAT_TCP_HDR_MIN || hlen > len) {
		FUZZ_CHECK(res == RN_PARSE_BAD);
		return;
	}
	if (!(th[13] & SAT_TCP_ACK) || (th[13] & (SAT_TCP_SYN | SAT_TCP_RST))) {
		FUZZ_CHECK(res == RN_PARSE_NOT_ACK);
		return;
	}
	FUZZ_CHECK(res == RN_PARSE_OK && w->hdr_len == hlen);
	FUZZ_CHECK(w->ack == sat_get_be32(th + 8) &&
		   w->seq == sat_get_be32(th + 4));
	FUZZ_CHECK(!!(w->flags & RN_W_DN) == !!(th[RN_DN_BYTE] & RN_DN_MASK));
	FUZZ_CHECK(!!(w->flags & RN_W_ECE) == !!(th[13] & SAT_TCP_ECE));
	FUZZ_CHECK(!(w->flags & ~(RN_W_DN | RN_W_HOLE | RN_W_DSACK |
				  RN_W_ECE | RN_W_BADOPT)));
	FUZZ_CHECK(!(w->flags & RN_W_DSACK) ||
		   sat_before(w->dsack_start, w->dsack_end));
	flags = ref_sack_flags(th + SAT_TCP_HDR_MIN, hlen - SAT_TCP_HDR_MIN,
			       w->ack, &ref);
	FUZZ_CHECK((w->flags & (RN_W_HOLE | RN_W_DSACK | RN_W_BADOPT)) ==
		   flags);
	FUZZ_CHECK(w->dsack_start == ref.dsack_start &&
		   w->dsack_end == ref.dsack_end);
}

/* One ACK through the hook: parse, then count into the latch. */
static void op_wire(struct fuzz_in *in, struct run *x)
{
	u8 b[SAT_TCP_HDR_MAX] = { 0 }, mode = fuzz_u8(in), *th;
	u32 ack = fuzz_near(in, x->una), len, olen;
	struct rn_latch was = x->l;
	enum rn_parse_result res;
	struct rn_wire w;

	if (mode & 1) {
		len = fuzz_pick(in, SAT_TCP_HDR_MAX + 1);
		fuzz_fill(in, b, len);
	} else {
		olen = build_opts(in, ack, b + SAT_TCP_HDR_MIN);
		len = SAT_TCP_HDR_MIN + ((olen + 3) & ~3u);
		put32(b + 4, fuzz_u32(in));
		put32(b + 8, ack);
		b[12] = (u8)(len / 4 << 4) | (fuzz_u8(in) & 0x0f);
		b[13] = SAT_TCP_ACK | (fuzz_u8(in) & SAT_TCP_ECE);
		if (mode & 2)
			b[13] = fuzz_u8(in);
		if (mode & 4)
			len -= fuzz_pick(in, len + 1);	/* cut short */
	}
	th = fuzz_dup(b, len);
	res = rn_parse_ack(th, len, &w);
	check_wire(th, len, res, &w);
	fuzz_free(th, len);
	if (res != RN_PARSE_OK)
		return;
	if (mode & 8)
		w.flags |= RN_W_ALLACKED;	/* the caller's: ACK == snd_nxt */
	rn_latch_update(&x->l, &w);

	x->dn_acks += !!(w.flags & RN_W_DN);
	if ((w.flags & RN_W_DN) && (w.flags & RN_W_ALLACKED) && x->bogus < 0xff)
		x->bogus++;
	FUZZ_CHECK(x->l.dn_acks == x->dn_acks && x->l.bogus == x->bogus);
	if (w.flags & RN_W_DSACK)
		FUZZ_CHECK((x->l.flags & RN_L_DSACK) &&
			   x->l.dsack_start == w.dsack_start &&
			   x->l.dsack_end == w.dsack_end);
	if (!(w.flags & RN_W_HOLE)) {
		FUZZ_CHECK(x->l.seq == was.seq && x->l.dn_set == was.dn_set &&
			   x->l.dn_clear == was.dn_clear);
		return;
	}
	if (!(was.flags & RN_L_VALID) || was.seq != w.ack)
		was.dn_set = was.dn_clear = 0;
	FUZZ_CHECK((x->l.flags & RN_L_VALID) && x->l.seq == w.ack);
	if (w.flags & RN_W_DN)
		FUZZ_CHECK(x->l.dn_set == rn_inc16(was.dn_set) &&
			   x->l.dn_clear == was.dn_clear);
	else
		FUZZ_CHECK(x->l.dn_clear == rn_inc16(was.dn_clear) &&
			   x->l.dn_set == was.dn_set);
}

/* The RN-TCP-ES steps of one ACK (rn_es_ack() of rn_cong.c). */
static void es_ack(struct fuzz_in *in, struct run *x, const struct rn_ack *a)
{
	struct rn_es *e = &x->s.es;
	u32 sample = 0;
	u8 mode = fuzz_u8(in);

	if (e->state == RN_ES_SENT && (mode & 1))
		rn_es_retransmitted(e, fuzz_near(in, x->now_us));
	x->now_us = fuzz_near(in, x->now_us);
	rn_es_acked(e, a->snd_una, x->now_us);
	if (a->dsack && a->dsack_known &&
	    rn_es_dsack(e, a->dsack_start, a->dsack_end, x->now_us,
			&sample)) {
		FUZZ_CHECK(sample > 0 && sample < 0x80000000u);
		FUZZ_CHECK(e->state == RN_ES_IDLE);
		rn_rtt_sample(&x->rtt, sample, fuzz_u32(in));
		x->m_min = x->m_min < sample ? x->m_min : sample;
		x->m_max = x->m_max > sample ? x->m_max : sample;
		x->m_wide |= sample >= RTT_SCALED_MAX;
	}
	rn_es_expire(e, x->now_us, fuzz_u32(in));
}

/* The stack's view of one ACK, as rn_gather() builds it. */
static void read_ack(struct fuzz_in *in, struct run *x, struct rn_ack *a)
{
	u8 bits = fuzz_u8(in);
	struct rn_latch l = x->l;

	x->una = fuzz_near(in, x->una);
	x->now_ms = fuzz_near(in, x->now_ms);
	*a = (struct rn_ack){
		.snd_una = x->una,
		.sacked_out = fuzz_len(in, 0),
		.packets_out = fuzz_len(in, 0),
		.cwnd = fuzz_len(in, 0),
		.rwnd = fuzz_len(in, 0),
		.srtt_us = fuzz_u32(in),
		.min_rtt_us = fuzz_u32(in),
		.now_ms = x->now_ms,
		.state = fuzz_pick(in, 3),
		.ece = bits & 1,
		.dsack = !!(bits & 2),
		.no_undo = !!(bits & 4),
	};
	if (a->dsack)
		x->l.flags &= ~RN_L_DSACK;	/* rn_latch_read() takes it */
	rn_ack_from_latch(a, &l);
	if (bits & 8) {		/* or whatever the latch could have said */
		a->dn_known = !!(bits & 16);
		a->dn_set = fuzz_u16(in);
		a->dn_clear = fuzz_u16(in);
		a->dsack_known = !!(bits & 32);
		a->dsack_start = fuzz_near(in, x->una);
		a->dsack_end = a->dsack_start + fuzz_len(in, 0x80000000u);
	}
}

static void op_ack(struct fuzz_in *in, struct run *x)
{
	const struct rn_params *p = &x->p;
	struct rn_sender *s = &x->s, was = x->s;
	struct rn_verdict v;
	struct rn_ack a;

	read_ack(in, x, &a);
	rn_on_ack(s, p, &a, &v);
	FUZZ_CHECK(v.dupthresh == s->applied);
	FUZZ_CHECK(!a.ece || (s->last_ece_ms == a.now_ms &&
			      (s->flags & RN_F_ECE)));
	FUZZ_CHECK(s->false_frs - was.false_frs == v.false_fr);
	FUZZ_CHECK(!v.false_fr || (a.dsack && a.dsack_known &&
				   (was.flags & RN_F_FR) &&
				   !(s->flags & RN_F_FR)));
	FUZZ_CHECK(!v.fallback_end || ((was.flags & RN_F_FALLBACK) &&
				       !(s->flags & RN_F_FALLBACK)));
	FUZZ_CHECK(v.new_train == RN_CLS_NONE || v.new_train == v.cls);
	if (a.state == RN_STATE_RECOVERY) {
		FUZZ_CHECK(!(s->flags & (RN_F_TRAIN | RN_F_LT)));
		FUZZ_CHECK(v.cls == RN_CLS_NONE && !v.cwnd && !v.recover);
		FUZZ_CHECK(s->applied == p->dupthresh_drop);
	} else if (!a.sacked_out) {
		FUZZ_CHECK(!(s->flags & (RN_F_TRAIN | RN_F_LT)));
		FUZZ_CHECK(v.cls == RN_CLS_NONE && s->applied == was.applied);
		FUZZ_CHECK(v.cwnd == ((was.flags & RN_F_LT) ? was.lt_cwnd : 0));
	} else {
		FUZZ_CHECK((s->flags & RN_F_TRAIN) && s->train_seq == a.snd_una);
		FUZZ_CHECK(v.cls == s->cls && v.cls != RN_CLS_NONE);
		FUZZ_CHECK(v.recover == (a.sacked_out >= s->applied));
		/* §IV-B2/3, B4: what makes a train a drop, and keeps it one. */
		if (a.ece || a.dn_distrust || (s->flags & RN_F_FALLBACK) ||
		    (a.dn_known && a.dn_clear) ||
		    ((was.flags & RN_F_TRAIN) && was.train_seq == a.snd_una &&
		     was.cls == RN_CLS_DROP))
			FUZZ_CHECK(s->cls == RN_CLS_DROP);
		if ((s->flags & RN_F_LT) && !v.recover)
			FUZZ_CHECK(v.cwnd == rn_lt_cap(s, a.sacked_out) &&
				   v.lt_capped == (v.cwnd < s->lt_cwnd));
	}
	es_ack(in, x, &a);
}

static void op_enter(struct fuzz_in *in, struct run *x)
{
	struct rn_sender *s = &x->s, was = x->s;
	u8 bits = fuzz_u8(in);
	u32 start = fuzz_near(in, x->una);
	u32 end = start + fuzz_len(in, 0x80000000u);

	rn_on_enter(s, &x->p, bits & 1 ? RN_ENTER_LOSS : RN_ENTER_RECOVERY,
		    start, end);
	FUZZ_CHECK(!(s->flags & (RN_F_TRAIN | RN_F_LT)) &&
		   s->cls == RN_CLS_NONE && s->applied == x->p.dupthresh_drop);
	if (bits & 1) {
		FUZZ_CHECK((s->flags & RN_F_FALLBACK) && !(s->flags & RN_F_FR));
		FUZZ_CHECK(!s->kval);
		return;
	}
	FUZZ_CHECK((s->flags & RN_F_FR) && s->fr_start == start &&
		   s->fr_end == end);
	FUZZ_CHECK(s->fast_rexmits == was.fast_rexmits + 1);
	/* rn_es_begin(): the head's first transmission. */
	if (bits & 2) {
		x->now_us = fuzz_near(in, x->now_us);
		rn_es_start(&s->es, start, end, x->now_us);
		FUZZ_CHECK(s->es.state == (sat_before(start, end) ?
					   RN_ES_SENT : RN_ES_IDLE));
	}
}

static void op_undo(struct fuzz_in *in, struct run *x)
{
	bool fallback = x->s.flags & RN_F_FALLBACK;

	(void)in;
	FUZZ_CHECK(rn_on_undo(&x->s) == fallback);
	FUZZ_CHECK(!(x->s.flags & RN_F_FALLBACK));
}

static void op_ltstop(struct fuzz_in *in, struct run *x)
{
	u32 want = x->s.flags & RN_F_LT ? x->s.lt_cwnd : 0;

	(void)in;
	FUZZ_CHECK(rn_lt_stop(&x->s) == want);
	FUZZ_CHECK(!(x->s.flags & RN_F_LT));
}

static void op_rtt(struct fuzz_in *in, struct run *x)
{
	u32 m = fuzz_len(in, RTT_SCALED_MAX);

	rn_rtt_sample(&x->rtt, m, fuzz_u32(in));
	m = m ? m : 1;
	x->m_min = x->m_min < m ? x->m_min : m;
	x->m_max = x->m_max > m ? x->m_max : m;
	x->m_wide |= m >= RTT_SCALED_MAX;
}

static void op_pure(struct fuzz_in *in, struct run *x)
{
	u32 kval = fuzz_u32(in), srtt = fuzz_u32(in), min_rtt = fuzz_u32(in);
	u32 k = rn_kval_update(kval, srtt, min_rtt, x->p.c_permille);
	u32 swnd = fuzz_u32(in), d = rn_dupthresh(swnd, kval, &x->p);
	u32 end = fuzz_u32(in), una = fuzz_near(in, end);

	FUZZ_CHECK(k >= kval && (k == kval || k <= RN_KVAL_MAX));
	FUZZ_CHECK(d >= x->p.dupthresh_min && d <= x->p.dupthresh_max);
	FUZZ_CHECK(d == x->p.dupthresh_max || d >= swnd);
	FUZZ_CHECK(rn_acked_still_queued(true, end, una) ==
		   !sat_after(end, una));
	FUZZ_CHECK(rn_lt_cap(&x->s, fuzz_u32(in)) <= x->s.lt_cwnd);
}

static void (*const ops[])(struct fuzz_in *in, struct run *x) = {
	op_wire, op_ack, op_enter, op_undo, op_ltstop, op_rtt, op_pure,
};

/* The invariants the sender, the latch and the estimator keep. */
static void check_state(const struct run *x)
{
	const struct rn_sender *s = &x->s;
	const struct rn_rtt *r = &x->rtt;

	FUZZ_CHECK(s->kval <= RN_KVAL_MAX && s->cls <= RN_CLS_DROP);
	FUZZ_CHECK(!(s->flags & ~(RN_F_TRAIN | RN_F_FALLBACK | RN_F_ECE |
				  RN_F_FR | RN_F_LT)));
	FUZZ_CHECK((s->flags & RN_F_TRAIN) || s->cls == RN_CLS_NONE);
	FUZZ_CHECK(!(s->flags & RN_F_LT) || s->cls == RN_CLS_REORDER);
	FUZZ_CHECK(s->applied == x->p.dupthresh_drop ||
		   s->applied == s->dupthresh);
	FUZZ_CHECK(s->dupthresh == x->p.dupthresh_drop ||
		   (s->dupthresh >= x->p.dupthresh_min &&
		    s->dupthresh <= x->p.dupthresh_max));
	FUZZ_CHECK(s->es.state <= RN_ES_ACKED);
	FUZZ_CHECK(!(x->l.flags & ~(RN_L_VALID | RN_L_DSACK | RN_L_READY)));
	FUZZ_CHECK((x->l.flags & RN_L_VALID) ||
		   (!x->l.dn_set && !x->l.dn_clear));
	if (!r->srtt8)
		return;
	FUZZ_CHECK(r->mdev4 <= r->mdev_max4 && r->mdev_max4 <= r->rttvar4);
	/* srtt stays between the smallest and the largest sample. */
	if (!x->m_wide)
		FUZZ_CHECK(r->srtt8 >= 8 * x->m_min &&
			   r->srtt8 <= 8 * x->m_max + 7);
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct fuzz_in in = fuzz_start(data, size);
	struct run x = {
		.p = {
			.c_permille = fuzz_u16(&in) % (RN_C_PERMILLE_MAX + 1),
			.dupthresh_min = RN_DUPTHRESH_MIN,
			.dupthresh_drop = RN_DUPTHRESH_DROP,
			.dupthresh_max = RN_DUPTHRESH_MIN + fuzz_u16(&in) %
					 (0xffff - RN_DUPTHRESH_MIN + 1),
			.ece_rtts = 1 + fuzz_pick(&in, RN_ECE_RTTS_MAX),
			.lt_ext = fuzz_u8(&in) & 1,
		},
		.m_min = ~0u,
	};

	rn_sender_init(&x.s, &x.p);
	x.l.flags = RN_L_READY;
	while (fuzz_more(&in)) {
		ops[fuzz_pick(&in, FUZZ_COUNT(ops))](&in, &x);
		check_state(&x);
	}
	return 0;
}
