// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the RN-TCP receiver core (tcp_rn/rn_recv_core.c): every
 * worked example of seed 001 §II and §IV, the ACK marking of §IV-A, range
 * sets against a bitmap model, the caps, the window, wraparound, and the
 * header and option parsers.
 *
 * The seed numbers packets.  Here packet k is the byte range
 * [base + k * MSS, base + (k + 1) * MSS), and every example runs twice:
 * once with base = 1000 and once with the packets straddling 2^32.
 */
#include "tests/unit/unit.h"
#include "tcp_rn/rn_recv_core.c"
#include "tests/unit/rn_recv_check.h"

#define MSS	1000u

static u32 base;

static struct rn_range pk(u32 n)
{
	return rn_range_make(base + n * MSS, base + (n + 1) * MSS);
}

/* Packets lo..hi inclusive. */
static struct rn_range pks(u32 lo, u32 hi)
{
	return rn_range_make(pk(lo).start, pk(hi).end);
}

static u32 seq_of(u32 n)
{
	return pk(n).start;
}

static void print_set(const char *what, const struct rn_rset *s)
{
	u32 i;

	fprintf(stderr, "  %s:", what);
	for (i = 0; i < s->n; i++)
		fprintf(stderr, " [%d, %d)",
			(int)(s->r[i].start - base) / (int)MSS,
			(int)(s->r[i].end - base) / (int)MSS);
	fprintf(stderr, "\n");
}

/* Does @s hold exactly the packets listed in @pkts ("4 5 7")? */
static int set_is(const struct rn_rset *s, const char *pkts)
{
	struct rn_rset want;
	char *end;
	u32 i;

	rn_rset_init(&want, RN_OVF_COARSEN);
	for (;;) {
		long n = strtol(pkts, &end, 10);
		struct rn_range r;

		if (end == pkts)
			break;
		r = pk((u32)n);
		rn_rset_add(&want, &r);
		pkts = end;
	}
	if (want.n != s->n)
		goto differ;
	for (i = 0; i < s->n; i++)
		if (want.r[i].start != s->r[i].start ||
		    want.r[i].end != s->r[i].end)
			goto differ;
	return 1;
differ:
	print_set("have", s);
	print_set("want", &want);
	return 0;
}

static void add_pkts(struct rn_rset *s, const char *pkts)
{
	char *end;

	for (;;) {
		long n = strtol(pkts, &end, 10);
		struct rn_range r;

		if (end == pkts)
			break;
		r = pk((u32)n);
		rn_rset_add(s, &r);
		pkts = end;
	}
}

/*
 * A flow whose last received packet is Q:n = @q, on a proven EPDN path,
 * with everything from packet 0 on inside the window.
 */
static void flow_at(struct rn_recv *st, u32 q)
{
	rn_recv_init(st, seq_of(0), 64 * MSS, 0);
	st->q_start = pk(q).start;
	st->q_end = pk(q).end;
	st->flags |= RN_RF_PROVEN;
}

static struct rn_evidence ev_kind(enum rn_ev_kind kind)
{
	struct rn_evidence ev = { .kind = kind };

	return ev;
}

/* A trusted option with P:min = packet @lo, P:max = packet @hi. */
static struct rn_evidence ev_drops(u32 lo, u32 hi)
{
	struct rn_evidence ev = { .kind = RN_EV_DROPS, .drop = pks(lo, hi) };

	return ev;
}

static enum rn_data_result rx(struct rn_recv *st, u32 n,
			      struct rn_evidence ev)
{
	struct rn_range p = pk(n);

	return rn_recv_data(st, &p, &ev);
}

static void check_q(const struct rn_recv *st, u32 n)
{
	CHECK_EQ(st->q_start, pk(n).start);
	CHECK_EQ(st->q_end, pk(n).end);
}

/* ---- seed 001 §II ---- */

/* Q:n = 2, P = <7, max 5, min 4>: 3 and 6 reordered, 4 and 5 dropped. */
static void test_sec2_example(void)
{
	struct rn_recv st;

	flow_at(&st, 2);
	CHECK_EQ(rx(&st, 7, ev_drops(4, 5)), RN_DATA_CLASSIFIED);
	CHECK(set_is(&st.reorder, "3 6"));
	CHECK(set_is(&st.drop, "4 5"));
	check_q(&st, 7);
}

/* ---- §IV: P:min and P:max NULL ---- */

/* P:n = 6, Q:n = 2: 3, 4, 5 reordered (option empty, or absent). */
static void test_null_gap_reordered(void)
{
	struct rn_recv st;

	flow_at(&st, 2);
	rx(&st, 6, ev_kind(RN_EV_EMPTY));
	CHECK(set_is(&st.reorder, "3 4 5"));
	CHECK(set_is(&st.drop, ""));
	check_q(&st, 6);

	flow_at(&st, 2);
	rx(&st, 6, ev_kind(RN_EV_ABSENT));
	CHECK(set_is(&st.reorder, "3 4 5"));
}

/* The same gap with 3, 4, 5 in the drop list: assumed dropped. */
static void test_null_gap_in_drop_list(void)
{
	struct rn_recv st;

	flow_at(&st, 2);
	add_pkts(&st.drop, "3 4 5");
	rx(&st, 6, ev_kind(RN_EV_EMPTY));
	CHECK(set_is(&st.reorder, ""));
	CHECK(set_is(&st.drop, "3 4 5"));

	/* Only some of them dropped: the others are reordered. */
	flow_at(&st, 2);
	add_pkts(&st.drop, "4");
	rx(&st, 6, ev_kind(RN_EV_EMPTY));
	CHECK(set_is(&st.reorder, "3 5"));
	CHECK(set_is(&st.drop, "4"));
}

/*
 * P:n below Q:n without drops: P fills a hole.  It leaves the drop list at
 * once and the reorder list when the ACK passes it, so that an ACK TCP
 * built before it processed P still calls P's hole reordered.
 */
static void test_null_fills_hole(void)
{
	struct rn_recv st;

	flow_at(&st, 9);
	add_pkts(&st.reorder, "4 5 6");
	add_pkts(&st.drop, "7 8");
	rx(&st, 5, ev_kind(RN_EV_EMPTY));
	CHECK(set_is(&st.reorder, "4 5 6"));
	CHECK(set_is(&st.drop, "7 8"));
	check_q(&st, 9);
	CHECK_EQ(rn_recv_ack(&st, seq_of(5), 64 * MSS), RN_MARK_REORDER);
	CHECK(set_is(&st.reorder, "5 6"));
	rx(&st, 7, ev_kind(RN_EV_ABSENT));
	CHECK(set_is(&st.drop, "8"));
	CHECK_EQ(rn_recv_ack(&st, seq_of(7), 64 * MSS), RN_MARK_UNKNOWN);
	CHECK_EQ(rn_recv_ack(&st, seq_of(8), 64 * MSS), RN_MARK_DROP);
	CHECK_EQ(st.reorder.n, 0);
	check_q(&st, 9);
}

/* ---- §IV: P:min/P:max present, P:n > Q:n ---- */

/* P:min > Q:n and P:max < P:n: P = 6, Q = 2, min 4, max 5. */
static void test_above_min_above_q_max_below_p(void)
{
	struct rn_recv st;

	flow_at(&st, 2);
	add_pkts(&st.reorder, "4 5");	/* "if they are present, deleted" */
	rx(&st, 6, ev_drops(4, 5));
	CHECK(set_is(&st.reorder, "3"));
	CHECK(set_is(&st.drop, "4 5"));
	check_q(&st, 6);
}

/* P:min > Q:n, P:max > P:n, P:min < P:n: P = 6, Q = 2, min 4, max 7. */
static void test_above_p_inside_drops(void)
{
	struct rn_recv st;

	flow_at(&st, 2);
	add_pkts(&st.reorder, "4 5 7");
	rx(&st, 6, ev_drops(4, 7));
	CHECK(set_is(&st.reorder, "3"));
	CHECK(set_is(&st.drop, "4 5 7"));
	check_q(&st, 6);
}

/* P:min > Q:n, P:min > P:n: P = 6, Q = 2, min 7, max 9. */
static void test_above_drops_beyond_p(void)
{
	struct rn_recv st;

	flow_at(&st, 2);
	rx(&st, 6, ev_drops(7, 9));
	CHECK(set_is(&st.drop, "7 8 9"));
	CHECK(set_is(&st.reorder, "3 4 5"));
	check_q(&st, 6);
}

/* P:min < Q:n, P:max < P:n, P:max > Q:n: P = 6, Q = 2, min 1, max 4. */
static void test_above_drops_around_q(void)
{
	struct rn_recv st;

	flow_at(&st, 2);
	add_pkts(&st.reorder, "3 4");
	rx(&st, 6, ev_drops(1, 4));
	CHECK(set_is(&st.reorder, "5"));
	CHECK(set_is(&st.drop, "1 3 4"));
	check_q(&st, 6);
}

/* P:min < Q:n, P:max < P:n, P:max < Q:n: P = 6, Q = 4, min 1, max 3. */
static void test_above_drops_below_q(void)
{
	struct rn_recv st;

	flow_at(&st, 4);
	rx(&st, 6, ev_drops(1, 3));
	CHECK(set_is(&st.drop, "1 2 3"));
	CHECK(set_is(&st.reorder, "5"));
	check_q(&st, 6);
}

/* P:min < Q:n, P:max > P:n: P = 6, Q = 4, min 1, max 7. */
static void test_above_drops_around_both(void)
{
	struct rn_recv st;

	flow_at(&st, 4);
	add_pkts(&st.reorder, "1 2 3 5 7");
	rx(&st, 6, ev_drops(1, 7));
	CHECK(set_is(&st.reorder, ""));
	CHECK(set_is(&st.drop, "1 2 3 5 7"));
	check_q(&st, 6);
}

/* ---- §IV: P:min/P:max present, P:n < Q:n ---- */

/* P:min > Q:n: P = 5, Q = 9, min 11, max 12. */
static void test_below_drops_beyond_q(void)
{
	struct rn_recv st;

	flow_at(&st, 9);
	rx(&st, 5, ev_drops(11, 12));
	CHECK(set_is(&st.reorder, "10"));
	CHECK(set_is(&st.drop, "11 12"));
	check_q(&st, 9);
}

/* P:min < P:n, P:max > P:n, P:max > Q:n: P = 5, Q = 9, min 4, max 10. */
static void test_below_drops_around_both(void)
{
	struct rn_recv st;

	flow_at(&st, 9);
	add_pkts(&st.reorder, "4 6 7 8 10");
	rx(&st, 5, ev_drops(4, 10));
	CHECK(set_is(&st.reorder, ""));
	CHECK(set_is(&st.drop, "4 6 7 8 10"));
	check_q(&st, 9);
}

/* P:max < Q:n, P:max > P:n, P:min < P:n: P = 5, Q = 9, min 4, max 8. */
static void test_below_drops_around_p(void)
{
	struct rn_recv st;

	flow_at(&st, 9);
	add_pkts(&st.reorder, "4 6 7 8");
	rx(&st, 5, ev_drops(4, 8));
	CHECK(set_is(&st.reorder, ""));
	CHECK(set_is(&st.drop, "4 6 7 8"));
	check_q(&st, 9);
}

/* Q:n > P:max, P:min > P:n: P = 5, Q = 9, min 6, max 8. */
static void test_below_drops_between(void)
{
	struct rn_recv st;

	flow_at(&st, 9);
	rx(&st, 5, ev_drops(6, 8));
	CHECK(set_is(&st.drop, "6 7 8"));
	CHECK(set_is(&st.reorder, ""));
	check_q(&st, 9);
}

/* P:min < Q:n, P:max < P:n: P = 5, Q = 9, min 2, max 3. */
static void test_below_drops_below_p(void)
{
	struct rn_recv st;

	flow_at(&st, 9);
	add_pkts(&st.reorder, "2 3");
	rx(&st, 5, ev_drops(2, 3));
	CHECK(set_is(&st.reorder, "4"));
	CHECK(set_is(&st.drop, "2 3"));
	check_q(&st, 9);
}

/* ---- §IV-A: marking ACKs ---- */

static void test_mark_follows_first_hole(void)
{
	struct rn_recv st;

	/* §II: reorder 3 6, drop 4 5, Q = 7. */
	flow_at(&st, 2);
	rx(&st, 7, ev_drops(4, 5));
	CHECK_EQ(rn_recv_ack(&st, seq_of(3), 64 * MSS), RN_MARK_REORDER);
	/* 3 arrives: the first hole is 4, dropped. */
	rx(&st, 3, ev_kind(RN_EV_EMPTY));
	CHECK_EQ(rn_recv_ack(&st, seq_of(4), 64 * MSS), RN_MARK_DROP);
	CHECK(set_is(&st.drop, "4 5"));
	/* The retransmissions of 4 and 5 arrive: the first hole is 6. */
	rx(&st, 4, ev_kind(RN_EV_EMPTY));
	rx(&st, 5, ev_kind(RN_EV_EMPTY));
	CHECK_EQ(rn_recv_ack(&st, seq_of(6), 64 * MSS), RN_MARK_REORDER);
	CHECK(set_is(&st.drop, ""));
	CHECK(set_is(&st.reorder, "6"));
	/* 6 arrives: nothing missing. */
	rx(&st, 6, ev_kind(RN_EV_EMPTY));
	CHECK_EQ(rn_recv_ack(&st, seq_of(8), 64 * MSS), RN_MARK_INORDER);
	CHECK_EQ(st.reorder.n, 0);
}

/* First bullet: no out-of-order data left, Q:n + 1 in the reorder list. */
static void test_mark_after_gap_filled(void)
{
	struct rn_recv st;

	flow_at(&st, 9);
	rx(&st, 5, ev_drops(11, 12));	/* reorder 10, drop 11 12 */
	CHECK_EQ(rn_recv_ack(&st, seq_of(10), 64 * MSS), RN_MARK_REORDER);
	rx(&st, 10, ev_kind(RN_EV_EMPTY));
	CHECK_EQ(rn_recv_ack(&st, seq_of(11), 64 * MSS), RN_MARK_DROP);
}

/*
 * TCP's view, for the tests of rn_recv_sacked(): packets [0, @n) it holds,
 * and the ACK it sends after one arrived: the first hole, and the SACK
 * block around the packet that came (RFC 2018: the first block reports
 * the newest segment).
 */
struct tcp_view {
	bool got[8 * RN_RANGES_MAX + 64];
	u32 n;
};

static enum rn_mark tcp_acks(struct rn_recv *st, struct tcp_view *v, u32 pkt)
{
	struct rn_range blk;
	u32 ack = 0, lo = pkt, hi = pkt;
	enum rn_mark m;

	while (ack < v->n && v->got[ack])
		ack++;
	while (lo > ack && v->got[lo - 1])
		lo--;
	while (hi + 1 < v->n && v->got[hi + 1])
		hi++;
	m = rn_recv_ack(st, seq_of(ack), 1000 * MSS);
	blk = pks(lo, hi);
	if (lo > ack)
		rn_recv_sacked(st, &blk, 1);
	return m;
}

/* Packet @pkt arrives, TCP keeps it and acknowledges it. */
static enum rn_mark tcp_takes(struct rn_recv *st, struct tcp_view *v,
			      u32 pkt)
{
	rx(st, pkt, ev_kind(RN_EV_EMPTY));
	v->got[pkt] = true;
	return tcp_acks(st, v, pkt);
}

/*
 * Half the packets take a path @late packets longer, and packet 0 never
 * comes: every gap a late packet fills leaves the list once TCP's ACK
 * shows it, so 64 ranges hold the 10 that are open at a time.  Kept until
 * the ACK passed them, they would overflow the list.
 */
static void test_sacked_gaps_leave_the_reorder_list(void)
{
	static struct tcp_view v;
	struct rn_recv st;
	u32 i, late = 20, n = 8 * RN_RANGES_MAX;
	int sack;

	for (sack = 1; sack >= 0; sack--) {
		memset(&v, 0, sizeof(v));
		v.n = n;
		rn_recv_init(&st, seq_of(0), 1000 * MSS, 0);
		st.flags |= RN_RF_PROVEN;
		for (i = 1; i < n + late; i++) {
			if (i < n && (i & 1)) {
				rx(&st, i, ev_kind(RN_EV_EMPTY));
				v.got[i] = true;
				if (sack)
					tcp_acks(&st, &v, i);
			}
			if (i >= late + 2 && !((i - late) & 1) &&
			    i - late < n) {
				rx(&st, i - late, ev_kind(RN_EV_EMPTY));
				v.got[i - late] = true;
				if (sack)
					tcp_acks(&st, &v, i - late);
			}
		}
		if (!sack) {
			CHECK(st.reorder.overflows > 0);
			continue;
		}
		CHECK_EQ(st.reorder.overflows, 0);
		CHECK(set_is(&st.reorder, "0"));
		CHECK_EQ(rn_recv_ack(&st, seq_of(0), 1000 * MSS),
			 RN_MARK_REORDER);
		CHECK(recv_sane(&st));
	}
}

/*
 * A segment the hook saw and TCP threw away for a reason the hook cannot
 * see (pruned under memory pressure) is in no SACK block: its hole stays
 * reordered, and the ACK that names it is marked.  A PAWS discard the
 * hook predicts: test_paws_discard_is_dropped().
 */
static void test_discarded_segment_stays_reordered(void)
{
	static struct tcp_view v;
	struct rn_recv st;

	memset(&v, 0, sizeof(v));
	v.n = 8;
	flow_at(&st, 0);
	v.got[0] = true;
	CHECK_EQ(tcp_acks(&st, &v, 0), RN_MARK_INORDER);
	CHECK_EQ(tcp_takes(&st, &v, 2), RN_MARK_REORDER);
	CHECK_EQ(tcp_takes(&st, &v, 4), RN_MARK_REORDER);
	CHECK(set_is(&st.reorder, "1 3"));
	rx(&st, 3, ev_kind(RN_EV_EMPTY));	/* TCP discards it */
	CHECK_EQ(tcp_acks(&st, &v, 4), RN_MARK_REORDER);
	CHECK(set_is(&st.reorder, "1 3"));
	CHECK_EQ(tcp_takes(&st, &v, 1), RN_MARK_REORDER);
	CHECK_EQ(rn_recv_ack(&st, seq_of(3), 64 * MSS), RN_MARK_REORDER);
	CHECK(set_is(&st.reorder, "3"));
	/* The retransmission: TCP keeps this copy. */
	CHECK_EQ(tcp_takes(&st, &v, 3), RN_MARK_INORDER);
	CHECK_EQ(st.reorder.n, 0);
	CHECK(recv_sane(&st));
}

/* Packet @pkt arrives with TSval @ts, as the hook runs it. */
static bool rx_ts(struct rn_recv *st, u32 pkt, u32 ts)
{
	struct rn_range p = pk(pkt);
	struct rn_evidence ev = ev_kind(RN_EV_EMPTY);
	bool paws = rn_recv_paws(st, &p, ts);

	rn_recv_data(st, &p, &ev);
	if (paws)
		rn_recv_discarded(st, &p);
	return paws;
}

/*
 * The late original of a reordered packet, older than the retransmission
 * that last moved the window, fails PAWS (RFC 7323 §5.3): TCP throws it
 * away, so its hole is a loss the sender must repair, and the ACK that
 * names it is not marked.
 */
static void test_paws_discard_is_dropped(void)
{
	static struct tcp_view v;
	struct rn_recv st;

	memset(&v, 0, sizeof(v));
	v.n = 8;
	flow_at(&st, 0);
	rn_recv_tstamps(&st);
	v.got[0] = true;
	CHECK_EQ(tcp_acks(&st, &v, 0), RN_MARK_INORDER);
	CHECK(!rx_ts(&st, 2, 100));		/* 1 and 3 are late */
	v.got[2] = true;
	CHECK_EQ(tcp_acks(&st, &v, 2), RN_MARK_REORDER);
	CHECK(!rx_ts(&st, 4, 100));
	v.got[4] = true;
	CHECK_EQ(tcp_acks(&st, &v, 4), RN_MARK_REORDER);
	CHECK(!(st.flags & RN_RF_TS_RECENT));	/* nothing at the ACK yet */
	/* 1's retransmission moves the window, and TS.Recent with it. */
	CHECK(!rx_ts(&st, 1, 200));
	CHECK_EQ(st.ts_recent, 200);
	v.got[1] = true;
	CHECK_EQ(tcp_acks(&st, &v, 1), RN_MARK_REORDER);	/* 3 */
	/* 3's original, sent before that retransmission: discarded. */
	CHECK(rx_ts(&st, 3, 100));
	CHECK(set_is(&st.drop, "3"));
	CHECK_EQ(st.reorder.n, 0);
	CHECK_EQ(tcp_acks(&st, &v, 4), RN_MARK_DROP);
	CHECK_EQ(st.ts_recent, 200);
	/* One tick older still passes, as tcp_paws_check() lets it. */
	CHECK(!rx_ts(&st, 5, 199));
	/* The retransmission TCP keeps fills it. */
	CHECK(!rx_ts(&st, 3, 300));
	v.got[3] = true;
	v.got[5] = true;
	CHECK_EQ(tcp_acks(&st, &v, 3), RN_MARK_INORDER);
	CHECK_EQ(st.drop.n + st.reorder.n, 0);
	CHECK_EQ(st.ts_recent, 300);
	CHECK(recv_sane(&st));
}

/*
 * TS.Recent moves as TCP moves it: only from a segment that starts at or
 * before the ACK number last sent and ends at or after it, and never
 * back; out-of-order segments leave it alone; TSvals wrap.  Without
 * timestamps on our ACKs there is no PAWS, and nothing is discarded.
 */
static void test_paws_follows_tcp(void)
{
	struct rn_recv st;
	struct rn_range p;

	flow_at(&st, 0);
	CHECK(!rx_ts(&st, 0, 50));
	CHECK(!rx_ts(&st, 5, 10));		/* no timestamps: no PAWS */
	CHECK(!(st.flags & RN_RF_TS_RECENT));
	rn_recv_tstamps(&st);
	CHECK(!rx_ts(&st, 6, 10));		/* out of order: not kept */
	CHECK(!(st.flags & RN_RF_TS_RECENT));
	CHECK(!rx_ts(&st, 0, 0xfffffff0u));	/* at the ACK number */
	CHECK_EQ(st.ts_recent, 0xfffffff0u);
	CHECK(!rx_ts(&st, 0, 0xffffffefu));	/* 1 older: TS.Recent stays */
	CHECK_EQ(st.ts_recent, 0xfffffff0u);
	p = pk(0);
	CHECK(rn_recv_paws(&st, &p, 0xffffffe0u));
	CHECK(!rx_ts(&st, 0, 5));		/* wrapped: newer */
	CHECK_EQ(st.ts_recent, 5);
	CHECK(rx_ts(&st, 7, 0xfffffff0u));	/* now more than 1 older */
	/* Q, the highest seen, is in no list: its ACK is not marked. */
	check_q(&st, 7);
	CHECK_EQ(st.drop.n, 0);
	CHECK_EQ(rn_recv_ack(&st, seq_of(7), 64 * MSS), RN_MARK_UNKNOWN);
	CHECK(recv_sane(&st));
}

/* A SACK block reaching outside the window removes only what lies in it. */
static void test_sacked_clipped_to_window(void)
{
	struct rn_recv st;
	struct rn_range b[SAT_SACK_MAX];

	flow_at(&st, 9);
	rx(&st, 20, ev_kind(RN_EV_EMPTY));		/* reorder 10..19 */
	b[0] = rn_range_make(seq_of(0) - 0x40000000U, seq_of(12));
	b[1] = rn_range_make(seq_of(14), seq_of(15));
	b[2] = rn_range_make(seq_of(18), seq_of(18));	/* empty */
	b[3] = rn_range_make(seq_of(17), seq_of(16));	/* backwards */
	rn_recv_sacked(&st, b, SAT_SACK_MAX);
	CHECK(set_is(&st.reorder, "12 13 15 16 17 18 19"));
	/* More blocks than an option holds: the rest are not read. */
	b[0] = pk(16);
	rn_recv_sacked(&st, b, 1000);
	CHECK(set_is(&st.reorder, "12 13 15 17 18 19"));
	CHECK(recv_sane(&st));
}

/* A hole nobody classified (path not proven) is not marked. */
static void test_mark_unknown_hole(void)
{
	struct rn_recv st;

	rn_recv_init(&st, seq_of(0), 64 * MSS, 0);
	CHECK_EQ(rx(&st, 0, ev_kind(RN_EV_ABSENT)), RN_DATA_UNPROVEN);
	CHECK_EQ(rx(&st, 3, ev_kind(RN_EV_ABSENT)), RN_DATA_UNPROVEN);
	check_q(&st, 3);
	CHECK_EQ(st.reorder.n, 0);
	CHECK_EQ(rn_recv_ack(&st, seq_of(1), 64 * MSS), RN_MARK_UNKNOWN);
}

/* ---- UNKNOWN: a gateway may have lost drop records ---- */

static struct rn_evidence ev_unknown(struct rn_evidence ev)
{
	ev.unknown = true;
	return ev;
}

/* The gap an UNKNOWN packet reveals is never reordered. */
static void test_unknown_gap_not_reordered(void)
{
	struct rn_recv st;

	flow_at(&st, 2);
	CHECK_EQ(rx(&st, 6, ev_unknown(ev_kind(RN_EV_EMPTY))),
		 RN_DATA_CLASSIFIED);
	CHECK(set_is(&st.reorder, ""));
	CHECK(set_is(&st.drop, ""));
	check_q(&st, 6);
	CHECK_EQ(rn_recv_ack(&st, seq_of(3), 64 * MSS), RN_MARK_UNKNOWN);
	/* A later packet without the flag: only the gap above it counts. */
	rx(&st, 8, ev_kind(RN_EV_EMPTY));
	CHECK(set_is(&st.reorder, "7"));
	CHECK_EQ(rn_recv_ack(&st, seq_of(3), 64 * MSS), RN_MARK_UNKNOWN);
}

/* UNKNOWN takes back "reordered" from every hole below it. */
static void test_unknown_forgets_reordered_holes(void)
{
	struct rn_recv st;

	flow_at(&st, 2);
	rx(&st, 6, ev_kind(RN_EV_EMPTY));
	CHECK(set_is(&st.reorder, "3 4 5"));
	rx(&st, 4, ev_unknown(ev_kind(RN_EV_EMPTY)));	/* P below Q */
	CHECK(set_is(&st.reorder, ""));
	CHECK_EQ(rn_recv_ack(&st, seq_of(3), 64 * MSS), RN_MARK_UNKNOWN);
	check_q(&st, 6);
}

/* A range that comes with UNKNOWN still counts: its holes are drops. */
static void test_unknown_keeps_drops(void)
{
	struct rn_recv st;

	flow_at(&st, 2);
	rx(&st, 7, ev_unknown(ev_drops(4, 5)));
	CHECK(set_is(&st.drop, "4 5"));
	CHECK(set_is(&st.reorder, ""));
	CHECK_EQ(rn_recv_ack(&st, seq_of(3), 64 * MSS), RN_MARK_UNKNOWN);
	rx(&st, 3, ev_kind(RN_EV_EMPTY));
	CHECK_EQ(rn_recv_ack(&st, seq_of(4), 64 * MSS), RN_MARK_DROP);
}

/*
 * No later evidence makes a hole below the UNKNOWN packet reordered (a
 * drop range below P opens the gap P:max + 1 .. P:n - 1), until the ACK
 * passes the highest byte the UNKNOWN packet saw.
 */
static void test_unknown_floor_holds_until_acked(void)
{
	struct rn_recv st;

	flow_at(&st, 2);
	rx(&st, 9, ev_unknown(ev_kind(RN_EV_EMPTY)));
	rx(&st, 6, ev_drops(3, 3));
	CHECK(set_is(&st.drop, "3"));
	CHECK(set_is(&st.reorder, ""));
	CHECK(st.flags & RN_RF_UNKNOWN);
	rx(&st, 3, ev_kind(RN_EV_EMPTY));
	CHECK_EQ(rn_recv_ack(&st, seq_of(4), 64 * MSS), RN_MARK_UNKNOWN);
	CHECK_EQ(rn_recv_ack(&st, seq_of(10), 64 * MSS), RN_MARK_INORDER);
	CHECK(!(st.flags & RN_RF_UNKNOWN));
	rx(&st, 12, ev_kind(RN_EV_EMPTY));
	CHECK(set_is(&st.reorder, "10 11"));
}

/* ---- evidence and the path ---- */

/* A TTL mismatch disproves the path: gaps are no longer reordered. */
static void test_untrusted_stops_classification(void)
{
	struct rn_evidence ev;
	struct rn_recv st;

	flow_at(&st, 2);
	CHECK_EQ(rx(&st, 4, ev_kind(RN_EV_UNTRUSTED)), RN_DATA_UNPROVEN);
	CHECK_EQ(st.reorder.n, 0);
	CHECK(!(st.flags & RN_RF_PROVEN));
	check_q(&st, 4);
	/* Absent options keep the verdict; a trusted one restores it. */
	rx(&st, 6, ev_kind(RN_EV_ABSENT));
	CHECK_EQ(st.reorder.n, 0);
	rx(&st, 8, ev_kind(RN_EV_EMPTY));
	CHECK(set_is(&st.reorder, "7"));
	/* A trusted drop report proves the path again. */
	flow_at(&st, 2);
	st.flags &= ~RN_RF_PROVEN;
	rx(&st, 3, ev_drops(5, 6));
	CHECK(set_is(&st.drop, "5 6"));
	CHECK(st.flags & RN_RF_PROVEN);
	/* An untrusted option's range is ignored. */
	flow_at(&st, 2);
	ev = ev_drops(5, 6);
	ev.kind = RN_EV_UNTRUSTED;
	rx(&st, 4, ev);
	CHECK_EQ(st.drop.n, 0);
	CHECK_EQ(st.reorder.n, 0);
}

/* ---- the window ---- */

static void test_window_bounds_state(void)
{
	struct rn_recv st;
	struct rn_range p;
	struct rn_evidence ev;

	rn_recv_init(&st, seq_of(0), 10 * MSS, 0);
	st.flags |= RN_RF_PROVEN;
	/* A segment beyond the window is ignored: Q stays. */
	CHECK_EQ(rx(&st, 10, ev_kind(RN_EV_EMPTY)), RN_DATA_OUTSIDE);
	CHECK_EQ(rx(&st, 5000000, ev_kind(RN_EV_EMPTY)), RN_DATA_OUTSIDE);
	CHECK_EQ(st.q_end, seq_of(0));
	/* Half out: trimmed to the window. */
	p = pks(8, 12);
	ev = ev_kind(RN_EV_EMPTY);
	CHECK_EQ(rn_recv_data(&st, &p, &ev), RN_DATA_CLASSIFIED);
	CHECK_EQ(st.q_end, seq_of(10));
	CHECK(set_is(&st.reorder, "0 1 2 3 4 5 6 7"));
	/* A dropped range is clipped to the window, at either end. */
	rn_recv_init(&st, seq_of(4), 4 * MSS, 0);
	st.flags |= RN_RF_PROVEN;
	p = pk(4);
	ev = ev_drops(1, 4);
	rn_recv_data(&st, &p, &ev);
	CHECK(set_is(&st.drop, ""));
	ev = ev_drops(6, 9);
	rn_recv_data(&st, &p, &ev);
	CHECK(set_is(&st.drop, "6 7"));
	/* A range wider than the window is no proof: no gap is reordered. */
	CHECK(set_is(&st.reorder, "5"));
	p = pk(7);
	ev = ev_drops(0, 100);
	CHECK_EQ(rn_recv_data(&st, &p, &ev), RN_DATA_WIDE);
	CHECK(set_is(&st.drop, "6"));
	CHECK(set_is(&st.reorder, "5"));
	CHECK(!(st.flags & RN_RF_PROVEN));
	/* A duplicate below the window still carries evidence. */
	rn_recv_init(&st, seq_of(4), 8 * MSS, 0);
	st.flags |= RN_RF_PROVEN;
	st.q_start = seq_of(5);
	st.q_end = seq_of(6);
	CHECK_EQ(rx(&st, 1, ev_drops(8, 9)), RN_DATA_CLASSIFIED);
	CHECK(set_is(&st.drop, "8 9"));
	CHECK(set_is(&st.reorder, "6 7"));
	/* A zero window admits nothing. */
	rn_recv_init(&st, seq_of(0), 0, 0);
	CHECK_EQ(rx(&st, 0, ev_kind(RN_EV_EMPTY)), RN_DATA_OUTSIDE);
}

/*
 * Old duplicates count only within one advertised window below rcv_nxt:
 * [rcv_nxt - wnd, rcv_right), wnd = rcv_right - rcv_nxt, with both edges
 * exact.  The bases of run_examples() put the edges across 2^32 and 2^31.
 */
static void test_window_one_below(void)
{
	struct rn_recv st, was;
	struct rn_range p;
	struct rn_evidence ev = ev_drops(12, 13);

	rn_recv_init(&st, seq_of(10), 4 * MSS, 0);	/* [6, 14) accepted */
	st.flags |= RN_RF_PROVEN;
	st.q_start = seq_of(11);
	st.q_end = seq_of(12);
	was = st;
	/* One byte below the lower edge: nothing changes. */
	p = rn_range_make(seq_of(6) - 1, seq_of(6) + 100);
	CHECK_EQ(rn_recv_data(&st, &p, &ev), RN_DATA_OUTSIDE);
	CHECK(!memcmp(&st, &was, sizeof(st)));
	/* Far below, as the old 2^30 bound allowed: nothing changes. */
	p = rn_range_make(seq_of(10) - (RN_WINDOW_MAX >> 1), seq_of(10));
	CHECK_EQ(rn_recv_data(&st, &p, &ev), RN_DATA_OUTSIDE);
	p = rn_range_make(seq_of(10) - RN_WINDOW_MAX, seq_of(10));
	CHECK_EQ(rn_recv_data(&st, &p, &ev), RN_DATA_OUTSIDE);
	CHECK(!memcmp(&st, &was, sizeof(st)));
	/* At the right edge: outside too. */
	CHECK_EQ(rx(&st, 14, ev), RN_DATA_OUTSIDE);
	CHECK(!memcmp(&st, &was, sizeof(st)));
	/* Exactly one window below: a duplicate, its evidence counts. */
	CHECK_EQ(rx(&st, 6, ev), RN_DATA_CLASSIFIED);
	CHECK(set_is(&st.drop, "12 13"));
	/* The last byte below the right edge starts a segment too. */
	p = rn_range_make(seq_of(14) - 1, seq_of(14));
	ev = ev_kind(RN_EV_EMPTY);
	CHECK_EQ(rn_recv_data(&st, &p, &ev), RN_DATA_CLASSIFIED);
	CHECK_EQ(st.q_end, seq_of(14));
	/* The bound follows the window: wider after a wider ACK. */
	rn_recv_ack(&st, seq_of(10), 8 * MSS);
	CHECK_EQ(rx(&st, 2, ev_kind(RN_EV_EMPTY)), RN_DATA_CLASSIFIED);
	CHECK_EQ(rx(&st, 1, ev_kind(RN_EV_EMPTY)), RN_DATA_OUTSIDE);
	/* A zero window admits no duplicate either. */
	rn_recv_init(&st, seq_of(10), 0, 0);
	CHECK_EQ(rx(&st, 9, ev_kind(RN_EV_EMPTY)), RN_DATA_OUTSIDE);
	CHECK_EQ(rx(&st, 10, ev_kind(RN_EV_EMPTY)), RN_DATA_OUTSIDE);
}

/* RFC 5961 §3.2: only a reset at exactly rcv_nxt ends the flow. */
static void test_rst_exact(void)
{
	struct rn_recv st;

	rn_recv_init(&st, seq_of(4), 8 * MSS, 0);
	st.q_start = seq_of(6);
	st.q_end = seq_of(7);
	CHECK(rn_recv_rst_ok(&st, seq_of(4)));
	CHECK(!rn_recv_rst_ok(&st, seq_of(4) + 1));
	CHECK(!rn_recv_rst_ok(&st, seq_of(4) - 1));
	CHECK(!rn_recv_rst_ok(&st, seq_of(7)));		/* Q's end */
	CHECK(!rn_recv_rst_ok(&st, seq_of(12) - 1));	/* in the window */
	CHECK(!rn_recv_rst_ok(&st, seq_of(4) + 0x80000000u));
	/* It follows the in-order point; an old ACK does not move it. */
	rn_recv_ack(&st, seq_of(6), 8 * MSS);
	CHECK(!rn_recv_rst_ok(&st, seq_of(4)));
	CHECK(rn_recv_rst_ok(&st, seq_of(6)));
	rn_recv_ack(&st, seq_of(5), 8 * MSS);
	CHECK(rn_recv_rst_ok(&st, seq_of(6)));
	/* Across 2^32 and 2^31: 0 and 0x80000000 are not wrap-equal. */
	rn_recv_init(&st, 0, 8 * MSS, 0);
	CHECK(rn_recv_rst_ok(&st, 0));
	CHECK(!rn_recv_rst_ok(&st, 0xffffffffu));
	CHECK(!rn_recv_rst_ok(&st, 0x80000000u));
	rn_recv_ack(&st, 0x7fffffffu, 8 * MSS);	/* 2^31 - 1 ahead */
	CHECK(rn_recv_rst_ok(&st, 0x7fffffffu));
}

/* ACKs move the in-order point and the right edge, and prune the lists. */
static void test_ack_prunes_and_slides(void)
{
	struct rn_recv st;

	flow_at(&st, 2);
	rx(&st, 7, ev_drops(4, 5));		/* reorder 3 6, drop 4 5 */
	rn_recv_ack(&st, seq_of(3) + 500, 64 * MSS);
	CHECK_EQ(st.reorder.r[0].start, seq_of(3) + 500);
	rn_recv_ack(&st, seq_of(5), 64 * MSS);
	CHECK(set_is(&st.drop, "5"));
	CHECK(set_is(&st.reorder, "6"));
	/* An old ACK changes nothing. */
	rn_recv_ack(&st, seq_of(1), 0);
	CHECK_EQ(st.rcv_nxt, seq_of(5));
	CHECK_EQ(st.rcv_right, seq_of(5) + 64 * MSS);
	/* The right edge never moves back; past Q the ACK drags Q along. */
	rn_recv_ack(&st, seq_of(20), 10 * MSS);
	CHECK_EQ(st.rcv_right, seq_of(5) + 64 * MSS);
	CHECK_EQ(st.q_end, seq_of(20));
	CHECK_EQ(st.drop.n + st.reorder.n, 0);
	rn_recv_ack(&st, seq_of(60), 10 * MSS);
	CHECK_EQ(st.rcv_right, seq_of(70));
	/* Windows beyond RFC 7323's limit are clamped. */
	rn_recv_ack(&st, seq_of(60), 0xffffffffu);
	CHECK_EQ(st.rcv_right, seq_of(60) + RN_WINDOW_MAX);
}

static void test_fin_ends_flow(void)
{
	struct rn_recv st;

	flow_at(&st, 2);
	rn_recv_fin(&st, seq_of(5) + 1);
	CHECK(!rn_recv_done(&st));
	rn_recv_ack(&st, seq_of(5), 64 * MSS);
	CHECK(!rn_recv_done(&st));
	rn_recv_ack(&st, seq_of(5) + 1, 64 * MSS);
	CHECK(rn_recv_done(&st));
}

/* SACK blocks of the ACK that created a flow set Q. */
static void test_set_high(void)
{
	struct rn_recv st;

	rn_recv_init(&st, seq_of(0), 64 * MSS, 0);
	rn_recv_set_high(&st, seq_of(9));
	CHECK_EQ(st.q_end, seq_of(9));
	rn_recv_set_high(&st, seq_of(200));	/* beyond the window */
	CHECK_EQ(st.q_end, seq_of(9));
	st.flags |= RN_RF_PROVEN;
	rx(&st, 11, ev_kind(RN_EV_EMPTY));
	CHECK(set_is(&st.reorder, "9 10"));
	CHECK_EQ(rn_recv_ack(&st, seq_of(0), 64 * MSS), RN_MARK_UNKNOWN);
}

/* ---- caps ---- */

static void test_reorder_cap_forgets_highest(void)
{
	struct rn_recv st;
	u32 i;

	rn_recv_init(&st, seq_of(0), 1000 * MSS, 0);
	st.flags |= RN_RF_PROVEN;
	for (i = 0; i < 2 * RN_RANGES_MAX; i++)
		rx(&st, 2 * i + 1, ev_kind(RN_EV_EMPTY));
	CHECK_EQ(st.reorder.n, RN_RANGES_MAX);
	CHECK_EQ(st.reorder.overflows, RN_RANGES_MAX);
	CHECK(rn_rset_has(&st.reorder, seq_of(0)));
	CHECK(rn_rset_has(&st.reorder, seq_of(2 * RN_RANGES_MAX - 2)));
	CHECK(!rn_rset_has(&st.reorder, seq_of(2 * RN_RANGES_MAX)));
	/* A forgotten hole is not marked. */
	CHECK_EQ(rn_recv_mark(&st, seq_of(2 * RN_RANGES_MAX)), RN_MARK_UNKNOWN);
	CHECK_EQ(rn_recv_overflows(&st), RN_RANGES_MAX);
}

static void test_drop_cap_coarsens(void)
{
	struct rn_rset s;
	struct rn_range r;
	u32 i;

	rn_rset_init(&s, RN_OVF_COARSEN);
	for (i = 0; i < 3 * RN_RANGES_MAX; i++) {
		r = rn_range_make(seq_of(3 * i), seq_of(3 * i) + 10 + i);
		rn_rset_add(&s, &r);
	}
	CHECK_EQ(s.n, RN_RANGES_MAX);
	CHECK(s.overflows > 0);
	/* Every dropped byte is still in the list. */
	for (i = 0; i < 3 * RN_RANGES_MAX; i++) {
		CHECK(rn_rset_has(&s, seq_of(3 * i)));
		CHECK(rn_rset_has(&s, seq_of(3 * i) + 9 + i));
	}
}

/* ---- range sets against a bitmap model ---- */

#define MODEL_BYTES	4096u

static u32 rnd_state = 12345;

static u32 rnd(void)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return rnd_state >> 8;
}

static void test_rset_model(void)
{
	static u8 model[MODEL_BYTES];
	struct rn_rset s, ex;
	u32 op, i, bad = 0;

	rn_rset_init(&s, RN_OVF_DROP_HIGH);
	rn_rset_init(&ex, RN_OVF_DROP_HIGH);
	memset(model, 0, sizeof(model));
	for (op = 0; op < 20000; op++) {
		u32 a = rnd() % MODEL_BYTES, len = rnd() % 200;
		struct rn_range r;

		if (a + len > MODEL_BYTES)
			len = MODEL_BYTES - a;
		r = rn_range_make(base + a, base + a + len);
		switch (rnd() % 5) {
		case 0:
		case 1:
			rn_rset_add(&s, &r);
			memset(model + a, 1, len);
			break;
		case 2:
			rn_rset_sub(&s, &r);
			memset(model + a, 0, len);
			break;
		case 3:
			rn_rset_init(&ex, RN_OVF_DROP_HIGH);
			r.end = r.start + len / 2;
			rn_rset_add(&ex, &r);
			r = rn_range_make(base + a, base + a + len);
			rn_rset_add_except(&s, &r, &ex);
			for (i = a + len / 2; i < a + len; i++)
				model[i] = 1;
			break;
		default:
			rn_rset_prune(&s, base + a);
			memset(model, 0, a);
			break;
		}
		if (!rset_sane(&s))
			bad++;
		/* Without overflow the set equals the model; resync after. */
		if (s.overflows) {
			memset(model, 0, sizeof(model));
			for (i = 0; i < MODEL_BYTES; i++)
				model[i] = rn_rset_has(&s, base + i);
			s.overflows = 0;
			continue;
		}
		for (i = 0; i < MODEL_BYTES; i += 7)
			if (model[i] != rn_rset_has(&s, base + i))
				bad++;
	}
	CHECK_EQ(bad, 0);
}

/* Random segments, evidence and ACKs: state stays bounded and sane. */
static void test_receiver_fuzz(void)
{
	struct rn_recv st;
	u32 op, bad = 0, ack = seq_of(0);

	rn_recv_init(&st, ack, 200 * MSS, 7);
	for (op = 0; op < 50000; op++) {
		struct rn_range p;
		struct rn_evidence ev = { .kind = rnd() % 4 };
		u32 k;

		if (rnd() % 4 == 0) {
			ack += rnd() % (3 * MSS);
			rn_recv_ack(&st, ack, rnd() % (400 * MSS));
			continue;
		}
		k = rnd() % 300;
		p = rn_range_make(ack + k * 500 - 20000,
				  ack + k * 500 - 20000 + rnd() % 3000);
		if (rnd() % 50 == 0)
			p.start = rnd() << 8;	/* forged */
		ev.drop.start = ack + (rnd() % 400) * 500 - 40000;
		ev.drop.end = ev.drop.start + rnd() % 20000;
		rn_recv_data(&st, &p, &ev);
		if (!rset_sane(&st.drop) || !rset_sane(&st.reorder))
			bad++;
		if (st.drop.n && (sat_before(st.drop.r[0].start, st.rcv_nxt) ||
				  sat_after(st.drop.r[st.drop.n - 1].end,
					    st.rcv_right)))
			bad++;
		if (st.reorder.n &&
		    (sat_before(st.reorder.r[0].start, st.rcv_nxt) ||
		     sat_after(st.reorder.r[st.reorder.n - 1].end,
			       st.rcv_right)))
			bad++;
		if (sat_after(st.q_end, st.rcv_right) ||
		    st.rcv_right - st.rcv_nxt > RN_WINDOW_MAX)
			bad++;
	}
	CHECK_EQ(bad, 0);
}

/* ---- range set edges ---- */

static void test_rset_edges(void)
{
	struct rn_rset s;
	struct rn_range r;

	rn_rset_init(&s, RN_OVF_DROP_HIGH);
	add_pkts(&s, "1 2 3 5");
	CHECK(set_is(&s, "1 2 3 5"));
	CHECK_EQ(s.n, 2);
	add_pkts(&s, "4");		/* touching ranges merge */
	CHECK_EQ(s.n, 1);
	r = pk(3);
	rn_rset_sub(&s, &r);		/* split */
	CHECK(set_is(&s, "1 2 4 5"));
	r = pks(0, 1);
	rn_rset_sub(&s, &r);		/* trim the left edge */
	CHECK(set_is(&s, "2 4 5"));
	r = rn_range_make(seq_of(5), seq_of(5));
	rn_rset_add(&s, &r);		/* empty: no-op */
	rn_rset_sub(&s, &r);
	CHECK(set_is(&s, "2 4 5"));
	CHECK(!rn_rset_has(&s, seq_of(6)));
	CHECK(rn_rset_has(&s, seq_of(6) - 1));
	rn_rset_prune(&s, seq_of(4) + 1);
	CHECK_EQ(s.n, 1);
	CHECK_EQ(s.r[0].start, seq_of(4) + 1);
}

/* ---- parsers ---- */

/* An IPv4 header with @opts (padded by the caller to a multiple of 4). */
static u32 mk_ip(u8 *h, u8 ttl, const u8 *opts, u32 optlen, u32 payload)
{
	u32 hl = unit_ipv4(h, 20 + optlen + payload, ttl, optlen);

	memcpy(h + 20, opts, optlen);
	return hl;
}

static void mk_epdn(u8 *o, u8 ettl, u8 flags, u32 lo, u32 hi)
{
	o[0] = EPDN_OPT_TYPE;
	o[1] = EPDN_OPT_LEN;
	o[2] = ettl;
	o[3] = EPDN_VERFLAGS(flags);
	put32(o + 4, lo);
	put32(o + 8, hi);
}

static enum rn_ev_status evidence_of(const u8 *opts, u32 optlen, u8 ttl,
				     bool require_host, struct rn_evidence *ev)
{
	u8 h[60];
	struct sat_ip ip;
	u32 hl = mk_ip(h, ttl, opts, optlen, 100);

	if (sat_parse_ipv4(h, hl, hl + 100, false, &ip))
		return 99;
	return rn_epdn_evidence(h, &ip, require_host, ev);
}

static void test_evidence(void)
{
	struct rn_evidence ev;
	u8 o[40];

	memset(o, 0, sizeof(o));
	CHECK_EQ(evidence_of(o, 0, 64, true, &ev), RN_EVS_ABSENT);
	CHECK_EQ(ev.kind, RN_EV_ABSENT);
	mk_epdn(o, 61, EPDN_F_EMPTY | EPDN_F_HOST, 0, 0);
	CHECK_EQ(evidence_of(o, 12, 61, true, &ev), RN_EVS_TRUSTED);
	CHECK_EQ(ev.kind, RN_EV_EMPTY);
	CHECK_EQ(evidence_of(o, 12, 60, true, &ev), RN_EVS_TTL);
	CHECK_EQ(ev.kind, RN_EV_UNTRUSTED);
	mk_epdn(o, 61, EPDN_F_HOST | EPDN_F_V2, 5000, 7999);
	CHECK_EQ(evidence_of(o, 12, 61, true, &ev), RN_EVS_TRUSTED);
	CHECK_EQ(ev.kind, RN_EV_DROPS);
	CHECK_EQ(ev.drop.start, 5000);
	CHECK_EQ(ev.drop.end, 8000);
	/* Router-originated (HOST clear): trusted only when not required. */
	mk_epdn(o, 61, 0, 5000, 7999);
	CHECK_EQ(evidence_of(o, 12, 61, true, &ev), RN_EVS_NOHOST);
	CHECK_EQ(ev.kind, RN_EV_UNTRUSTED);
	CHECK_EQ(evidence_of(o, 12, 61, false, &ev), RN_EVS_TRUSTED);
	/* Backwards range, wrong version, wrong length. */
	mk_epdn(o, 61, EPDN_F_HOST, 8000, 5000);
	CHECK_EQ(evidence_of(o, 12, 61, true, &ev), RN_EVS_MALFORMED);
	CHECK_EQ(ev.kind, RN_EV_UNTRUSTED);
	mk_epdn(o, 61, EPDN_F_HOST, 1, 2);
	o[3] = 0x21;
	CHECK_EQ(evidence_of(o, 12, 61, true, &ev), RN_EVS_MALFORMED);
	mk_epdn(o, 61, EPDN_F_HOST, 1, 2);
	o[1] = 8;
	CHECK_EQ(evidence_of(o, 12, 61, true, &ev), RN_EVS_MALFORMED);
	/* A range ending at 2^32 - 1 wraps to an end of 0. */
	mk_epdn(o, 61, EPDN_F_HOST, 0xfffff000u, 0xffffffffu);
	CHECK_EQ(evidence_of(o, 12, 61, true, &ev), RN_EVS_TRUSTED);
	CHECK_EQ(ev.drop.end, 0);
	CHECK(!rn_range_empty(&ev.drop));
	CHECK(!ev.unknown);
	/* UNKNOWN, with no range or with one; never on an absent option. */
	mk_epdn(o, 61, EPDN_F_EMPTY | EPDN_F_HOST | EPDN_F_UNKNOWN, 0, 0);
	CHECK_EQ(evidence_of(o, 12, 61, true, &ev), RN_EVS_TRUSTED);
	CHECK_EQ(ev.kind, RN_EV_EMPTY);
	CHECK(ev.unknown);
	mk_epdn(o, 61, EPDN_F_HOST | EPDN_F_UNKNOWN, 5000, 7999);
	CHECK_EQ(evidence_of(o, 12, 61, true, &ev), RN_EVS_TRUSTED);
	CHECK_EQ(ev.kind, RN_EV_DROPS);
	CHECK(ev.unknown);
	CHECK_EQ(evidence_of(o, 0, 61, true, &ev), RN_EVS_ABSENT);
	CHECK(!ev.unknown);
	/* Behind another option. */
	memset(o, 0, sizeof(o));
	o[0] = 7;
	o[1] = 7;
	o[2] = 4;
	o[7] = 1;
	mk_epdn(o + 8, 61, EPDN_F_EMPTY | EPDN_F_HOST, 0, 0);
	CHECK_EQ(evidence_of(o, 20, 61, true, &ev), RN_EVS_TRUSTED);
	/* Only other options. */
	o[8] = 1;
	o[9] = 0;
	CHECK_EQ(evidence_of(o, 20, 61, true, &ev), RN_EVS_ABSENT);
}

static void test_parse_tcpopts(void)
{
	u8 th[60];
	struct rn_tcpopts o;

	/* NOP NOP SACK(2 blocks), wscale 9 */
	memset(th, 0, sizeof(th));
	th[0] = 1;
	th[1] = 1;
	th[2] = 5;
	th[3] = 18;
	put32(th + 4, 3000);
	put32(th + 8, 4000);
	put32(th + 12, 6000);
	put32(th + 16, 9000);
	th[20] = 3;
	th[21] = 3;
	th[22] = 9;
	rn_parse_tcpopts(th, 24, 2000, &o);
	CHECK(o.sack);
	CHECK_EQ(o.sack_high, 9000);
	CHECK_EQ(o.wscale, 9);
	CHECK_EQ(o.nblocks, 2);
	CHECK(o.blocks[0].start == 3000 && o.blocks[0].end == 4000);
	CHECK(o.blocks[1].start == 6000 && o.blocks[1].end == 9000);
	CHECK(!o.ts);
	/*
	 * Blocks at or below the ACK (DSACK) do not count for the edge;
	 * they are kept as sent (rn_recv_sacked() clips them).
	 */
	rn_parse_tcpopts(th, 24, 9000, &o);
	CHECK(!o.sack);
	CHECK_EQ(o.nblocks, 2);
	/*
	 * Each block's edge after() the last, the second more than 2^31
	 * above the ACK: it wraps below the ACK and does not count.
	 */
	put32(th + 8, 2000 + 0x7fffff00u);
	put32(th + 16, 2000 + 0xfffffe00u);
	rn_parse_tcpopts(th, 24, 2000, &o);
	CHECK(o.sack);
	CHECK_EQ(o.sack_high, 2000 + 0x7fffff00u);
	put32(th + 8, 4000);
	put32(th + 16, 9000);
	/* wscale is clamped to 14; a bad length ends the walk. */
	th[22] = 200;
	rn_parse_tcpopts(th, 24, 2000, &o);
	CHECK_EQ(o.wscale, RN_WSCALE_MAX);
	th[3] = 60;
	rn_parse_tcpopts(th, 24, 2000, &o);
	CHECK(!o.sack);
	CHECK_EQ(o.wscale, -1);
	th[3] = 0;
	rn_parse_tcpopts(th, 24, 2000, &o);
	CHECK_EQ(o.wscale, -1);
	th[0] = 3;					/* kind, no length */
	rn_parse_tcpopts(th, 1, 2000, &o);
	CHECK_EQ(o.wscale, -1);
	/*
	 * A SACK option of one block and half of another is ignored, as
	 * tcp_parse_options() does; the window scale after it still counts.
	 */
	th[0] = 1;
	th[3] = 14;
	th[16] = 1;
	th[17] = 1;
	th[18] = 3;
	th[19] = 3;
	th[20] = 9;
	th[21] = 0;
	rn_parse_tcpopts(th, 24, 2000, &o);
	CHECK(!o.sack);
	CHECK_EQ(o.sack_high, 2000);
	CHECK_EQ(o.wscale, 9);
	/*
	 * NOP NOP TS, the layout TCP sends; the last of two counts, and one
	 * of another length is ignored, as tcp_parse_options() does.
	 */
	memset(th, 0, sizeof(th));
	th[0] = 1;
	th[1] = 1;
	th[2] = SAT_OPT_TIMESTAMP;
	th[3] = 10;
	put32(th + 4, 0xdeadbeefu);
	put32(th + 8, 7);
	rn_parse_tcpopts(th, 12, 2000, &o);
	CHECK(o.ts);
	CHECK_EQ(o.tsval, 0xdeadbeefu);
	th[12] = SAT_OPT_TIMESTAMP;
	th[13] = 10;
	put32(th + 14, 42);
	rn_parse_tcpopts(th, 24, 2000, &o);
	CHECK_EQ(o.tsval, 42);
	th[13] = 9;
	rn_parse_tcpopts(th, 24, 2000, &o);
	CHECK(o.ts);
	CHECK_EQ(o.tsval, 0xdeadbeefu);
	th[3] = 11;				/* not a timestamp */
	th[13] = 10;
	rn_parse_tcpopts(th, 24, 2000, &o);
	CHECK(!o.ts);
	th[3] = 10;
	rn_parse_tcpopts(th, 11, 2000, &o);	/* cut short: none */
	CHECK(!o.ts);
}

static void test_origin(void)
{
	u8 buf[EPDN_OPT_LEN];
	struct epdn_opt o;

	rn_epdn_encode_empty(buf, 64);
	CHECK_EQ(epdn_opt_decode(buf, sizeof(buf), &o), SAT_OK);
	CHECK_EQ(buf[0], 0x9e);
	CHECK_EQ(buf[1], 12);
	CHECK_EQ(o.ttl, 64);
	CHECK_EQ(o.flags, EPDN_F_EMPTY | EPDN_F_HOST);
	CHECK_EQ(o.min, 0);
	CHECK_EQ(o.max, 0);
	CHECK_EQ(epdn_opt_decode(buf, 11, &o), SAT_EBADMSG);
	CHECK_EQ(rn_origin_decide(20, 1488, 1500), RN_ORIGIN_STAMP);
	CHECK_EQ(rn_origin_decide(20, 1489, 1500), RN_ORIGIN_SKIP_MTU);
	CHECK_EQ(rn_origin_decide(24, 100, 1500), RN_ORIGIN_SKIP_OPTS);
	CHECK_EQ(rn_origin_decide(32, 100, 1500), RN_ORIGIN_SKIP_OPTS);
}

/* ---- hostile ranges: the lists stay bounded, sorted and in the window ---- */

/*
 * The hostile segment: checksum-valid data whose EPDN option (EPDN-TTL =
 * TTL, HOST) names max - min = 0x7fffffff.  Before the fix it was stored
 * outside the window, the lists lost their order, splits ran past the 16
 * slots and memmove() past the flow.
 */
static void test_hostile_2_31_range(void)
{
	static const u32 at[] = { 0, 100, 64 * MSS, 0x7fffff00u, 0x7fffff9cu,
				  0x80000000u, 0x80000064u, 0xffffff00u };
	struct rn_evidence ev;
	struct rn_recv st;
	u8 o[12];
	u32 i, k;

	for (i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		rn_recv_init(&st, seq_of(0), 64 * MSS, 7);
		mk_epdn(o, 64, EPDN_F_HOST, seq_of(0) + at[i],
			seq_of(0) + at[i] + 0x7fffffffu);
		CHECK_EQ(evidence_of(o, 12, 64, true, &ev), RN_EVS_TRUSTED);
		CHECK_EQ(ev.kind, RN_EV_DROPS);
		for (k = 0; k < 64; k += 2) {
			struct rn_range p = pk(k);

			CHECK_EQ(rn_recv_data(&st, &p, &ev), RN_DATA_WIDE);
			CHECK(recv_sane(&st));
		}
		CHECK_EQ(st.drop.n, 0);
		CHECK_EQ(st.reorder.n, 0);
		CHECK_EQ(rn_recv_ack(&st, seq_of(1), 64 * MSS), RN_MARK_UNKNOWN);
	}
}

/* A range a little wider than the window, just under 2^31 above it. */
static void test_window_wide_range_near_2_31(void)
{
	u32 w = 64 * MSS, lo = seq_of(0);
	struct rn_range r = rn_range_make(lo + 0x7ffffe00u,
					  lo + 0x7ffffe00u + w + 0x200);
	struct rn_range c = rn_range_clip(&r, lo, lo + w);
	struct rn_evidence ev = { .kind = RN_EV_DROPS, .drop = r };
	struct rn_recv st;
	struct rn_range p = pk(3);

	CHECK(rn_range_empty(&c));
	/* Clipping works in offsets: a range reaching in from below. */
	r = rn_range_make(lo - 0x7ffffff0u, lo + 5);
	c = rn_range_clip(&r, lo, lo + w);
	CHECK_EQ(c.start, lo);
	CHECK_EQ(c.end, lo + 5);
	r = rn_range_make(lo + 10, lo + 10 + 0x7fffffffu);
	c = rn_range_clip(&r, lo, lo + w);
	CHECK_EQ(c.start, lo + 10);
	CHECK_EQ(c.end, lo + w);
	r = rn_range_make(lo + 10, lo + 10 + 0x80000000u);	/* backwards */
	c = rn_range_clip(&r, lo, lo + w);
	CHECK(rn_range_empty(&c));
	/* Through the receiver: no proof, nothing stored. */
	rn_recv_init(&st, lo, w, 0);
	st.flags |= RN_RF_PROVEN;
	CHECK_EQ(rn_recv_data(&st, &p, &ev), RN_DATA_WIDE);
	CHECK_EQ(st.drop.n, 0);
	CHECK_EQ(st.reorder.n, 0);
	CHECK(recv_sane(&st));
	/* One window wide is accepted, and clipped into the window. */
	ev.drop = rn_range_make(lo + 0x7ffffe00u, lo + 0x7ffffe00u + w);
	CHECK_EQ(rn_recv_data(&st, &p, &ev), RN_DATA_CLASSIFIED);
	CHECK_EQ(st.drop.n, 0);
	p = pk(4);
	ev.kind = RN_EV_EMPTY;
	CHECK_EQ(rn_recv_data(&st, &p, &ev), RN_DATA_CLASSIFIED);
	ev = ev_drops(40, 40 + 63);
	p = pk(5);
	rn_recv_data(&st, &p, &ev);
	CHECK(set_is(&st.drop, "40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 "
			       "55 56 57 58 59 60 61 62 63"));
	CHECK(recv_sane(&st));
}

/* Anywhere in the 2^32 space, with any width; or about as wide as it. */
static struct rn_range hostile_range(u32 rcv_nxt, u32 span)
{
	u32 w, at;

	switch (rnd() % 3) {
	case 0:
		at = rnd() << 8 ^ rnd();
		w = rnd() << 8 ^ rnd();
		break;
	case 1:
		at = rcv_nxt + 0x80000000u - span + rnd() % (2 * span + 2);
		w = span - 0x400 + rnd() % 0x800;
		break;
	default:
		at = rcv_nxt - 0x400 + rnd() % 0x800;
		w = 0x7fffff00u + rnd() % 0x200;
		break;
	}
	return rn_range_make(at, at + w);
}

/* A hostile range one time in @one_in, else a plausible one. */
static struct rn_range stress_range(const struct rn_recv *st, u32 one_in,
				    u32 max_len)
{
	u32 span = st->rcv_right - st->rcv_nxt, at;

	if (rnd() % one_in == 0)
		return hostile_range(st->rcv_nxt, span);
	at = st->rcv_nxt + rnd() % (span + 1) - 3000;
	return rn_range_make(at, at + 1 + rnd() % max_len);
}

/*
 * Seeded random data and ACKs, hostile and plausible: the invariants hold
 * after every step, and neither P nor Q is ever in the drop list.
 */
static void test_hostile_stress(void)
{
	u32 op, bad = 0, p_dropped = 0, full = 0;
	struct rn_recv st;

	rnd_state = 20261123;
	rn_recv_init(&st, base, 1000 * MSS, 7);
	for (op = 0; op < 200000; op++) {
		struct rn_evidence ev = { .kind = rnd() % 4 };
		struct rn_range p, q;

		if (rnd() % 16 == 0) {
			u32 ack = st.rcv_nxt + (rnd() % 64 ? rnd() % 3000 :
						rnd() << 8);

			rn_recv_ack(&st, ack, rnd() % 64 ? 1000 * MSS :
				    rnd() << 8);
		} else {
			ev.drop = stress_range(&st, 4, 6000);
			p = stress_range(&st, 32, 1500);
			if (rn_recv_data(&st, &p, &ev) != RN_DATA_OUTSIDE) {
				p = rn_range_clip(&p, st.rcv_nxt, st.rcv_right);
				q = rn_range_make(st.q_start, st.q_end);
				p_dropped += rset_meets(&st.drop, &p) ||
					     rset_meets(&st.drop, &q);
			}
		}
		full += st.drop.n == RN_RANGES_MAX;
		if (!recv_sane(&st)) {
			fprintf(stderr, "  step %u: nxt %x right %x\n", op,
				st.rcv_nxt, st.rcv_right);
			print_set("drop", &st.drop);
			print_set("reorder", &st.reorder);
			bad++;
			break;
		}
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(p_dropped, 0);
	/* The caps were exercised, often. */
	CHECK(full > 1000);
	CHECK(st.drop.overflows > 1000);
	CHECK(st.reorder.overflows > 100);
}

/* A full drop list (RN_RANGES_MAX ranges), 1 packet each, every third packet from @from. */
static void fill_drops(struct rn_recv *st, u32 from)
{
	u32 i;

	for (i = 0; i < RN_RANGES_MAX; i++) {
		struct rn_range r = pk(from + 3 * i);

		rn_rset_add(&st->drop, &r);
	}
}

/* Q above a full drop list filled by fill_drops(st, 10) */
#define Q_ABOVE		(3 * RN_RANGES_MAX + 40)

/*
 * The drop list's cap merges two ranges: the bytes between are believed
 * dropped, so they leave the reorder list ("dropped" wins, the lists never
 * overlap); and a merge never covers P or Q, which did arrive.
 */
static void test_coarsen_keeps_lists_apart(void)
{
	struct rn_range r;
	struct rn_recv st;
	u32 i;

	rn_recv_init(&st, seq_of(0), (Q_ABOVE + 100) * MSS, 0);
	st.flags |= RN_RF_PROVEN;
	st.q_start = seq_of(Q_ABOVE);
	st.q_end = seq_of(Q_ABOVE + 1);
	fill_drops(&st, 10);			/* 10 13 ... 3 * MAX + 7 */
	r = pks(11, 12);
	rn_rset_add(&st.reorder, &r);			/* between 10 and 13 */
	rx(&st, 2, ev_drops(3 * RN_RANGES_MAX + 10,
			    3 * RN_RANGES_MAX + 10));	/* one range more */
	CHECK_EQ(st.drop.n, RN_RANGES_MAX);
	CHECK(st.drop.overflows > 0);
	CHECK(recv_sane(&st));
	CHECK(rn_rset_has(&st.drop, seq_of(11)));
	CHECK(!rn_rset_has(&st.reorder, seq_of(11)));
	/* P (one byte) splits a dropped range: its gap is the closest. */
	rn_recv_init(&st, seq_of(0), (Q_ABOVE + 100) * MSS, 0);
	st.flags |= RN_RF_PROVEN;
	st.q_start = seq_of(Q_ABOVE);
	st.q_end = seq_of(Q_ABOVE + 1);
	fill_drops(&st, 10);
	r = rn_range_make(seq_of(10), seq_of(12));
	rn_rset_add(&st.drop, &r);
	r = rn_range_make(seq_of(10) + 500, seq_of(10) + 501);
	rn_recv_data(&st, &r, &(struct rn_evidence){ .kind = RN_EV_EMPTY });
	CHECK(!rn_rset_has(&st.drop, seq_of(10) + 500));
	CHECK(recv_sane(&st));
	/* The same with a drop range that covers P and Q. */
	for (i = 0; i < 2; i++) {
		rn_recv_init(&st, seq_of(0), (Q_ABOVE + 100) * MSS, 0);
		st.flags |= RN_RF_PROVEN;
		st.q_start = seq_of(8) + 700;
		st.q_end = seq_of(8) + 701;
		fill_drops(&st, 10);
		r = rn_range_make(seq_of(8) + 300, seq_of(8) + 301);
		rn_recv_data(&st, &r, &(struct rn_evidence){
			.kind = RN_EV_DROPS, .drop = pks(7 - i, 9) });
		CHECK(!rn_rset_has(&st.drop, seq_of(8) + 300));
		CHECK(!rn_rset_has(&st.drop, seq_of(8) + 700));
		CHECK(rn_rset_has(&st.drop, seq_of(8) + 299));
		CHECK(recv_sane(&st));
	}
}

/* No sequence of set operations writes past the array. */
static void test_rset_put_refuses_when_full(void)
{
	struct rn_rset s;
	struct rn_range r;
	u32 i;

	rn_rset_init(&s, RN_OVF_COARSEN);
	for (i = 0; i <= RN_RANGES_MAX; i++) {
		r = pk(2 * i);
		rn_rset_put(&s, s.n, &r);
	}
	CHECK_EQ(s.n, RN_RANGES_MAX + 1);
	r = pk(100);
	rn_rset_put(&s, s.n, &r);
	CHECK_EQ(s.n, RN_RANGES_MAX + 1);
	rn_rset_remove(&s, &r);
	r = rn_range_make(seq_of(0) + 10, seq_of(0) + 20);
	rn_rset_remove(&s, &r);				/* a split, refused */
	CHECK_EQ(s.n, RN_RANGES_MAX + 1);
	rn_rset_fit(&s, NULL, 0);
	CHECK_EQ(s.n, RN_RANGES_MAX);
}

static void run_examples(u32 at)
{
	base = at;
	RUN(test_sec2_example);
	RUN(test_null_gap_reordered);
	RUN(test_null_gap_in_drop_list);
	RUN(test_null_fills_hole);
	RUN(test_above_min_above_q_max_below_p);
	RUN(test_above_p_inside_drops);
	RUN(test_above_drops_beyond_p);
	RUN(test_above_drops_around_q);
	RUN(test_above_drops_below_q);
	RUN(test_above_drops_around_both);
	RUN(test_below_drops_beyond_q);
	RUN(test_below_drops_around_both);
	RUN(test_below_drops_around_p);
	RUN(test_below_drops_between);
	RUN(test_below_drops_below_p);
	RUN(test_mark_follows_first_hole);
	RUN(test_mark_after_gap_filled);
	RUN(test_sacked_gaps_leave_the_reorder_list);
	RUN(test_discarded_segment_stays_reordered);
	RUN(test_paws_discard_is_dropped);
	RUN(test_paws_follows_tcp);
	RUN(test_sacked_clipped_to_window);
	RUN(test_mark_unknown_hole);
	RUN(test_unknown_gap_not_reordered);
	RUN(test_unknown_forgets_reordered_holes);
	RUN(test_unknown_keeps_drops);
	RUN(test_unknown_floor_holds_until_acked);
	RUN(test_untrusted_stops_classification);
	RUN(test_window_bounds_state);
	RUN(test_window_one_below);
	RUN(test_rst_exact);
	RUN(test_ack_prunes_and_slides);
	RUN(test_fin_ends_flow);
	RUN(test_set_high);
	RUN(test_reorder_cap_forgets_highest);
	RUN(test_drop_cap_coarsens);
	RUN(test_rset_edges);
	RUN(test_rset_model);
	RUN(test_receiver_fuzz);
	RUN(test_hostile_2_31_range);
	RUN(test_window_wide_range_near_2_31);
	RUN(test_hostile_stress);
	RUN(test_coarsen_keeps_lists_apart);
	RUN(test_rset_put_refuses_when_full);
}

int main(void)
{
	run_examples(1000);
	run_examples(0xffffffffu - 3500);	/* packets 3 and 4 straddle 2^32 */
	run_examples(0x7fffff00u);		/* the sign boundary */
	RUN(test_evidence);
	RUN(test_parse_tcpopts);
	RUN(test_origin);
	return unit_report("test_rn_recv_core");
}
