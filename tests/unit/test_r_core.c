// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the TCP-R core (tcp_r/r_core.c): the paths of seed 000
 * §2.2.1 (bit on every dupACK and no recent ECE: modified fast recovery;
 * a dupACK without the bit: halve; ECE: halve; the same segment twice in
 * one RTT: halve), a modified recovery turning standard, a timeout inside
 * it (halves), one halving per window of data, PRR (RFC 6937), the pacing
 * rate, and clock and sequence wraparound.
 */
#include "tests/unit/unit.h"
#include "tcp_r/r_core.c"

static const struct r_params dflt = { R_ECE_RTTS };

/* A dupACK train for the hole at una: set/clear dupACKs with the bit. */
static struct r_ack hole(u32 una, u32 now, u16 set, u16 clear)
{
	return (struct r_ack){
		.snd_una = una, .srtt_ms = 100, .now_ms = now,
		.dn_set = set, .dn_clear = clear, .dn_known = 1,
	};
}

static void test_init(void)
{
	struct r_sender s;

	r_sender_init(&s);
	CHECK_EQ(s.flags, 0);
	CHECK_EQ(s.verdict, R_PATH_DROP);
	CHECK_EQ(s.paths[R_PATH_MODIFIED] + s.paths[R_PATH_DROP], 0);
}

static void test_halve(void)
{
	CHECK_EQ(r_halve(100), 50);
	CHECK_EQ(r_halve(5), 2);
	CHECK_EQ(r_halve(4), 2);
	CHECK_EQ(r_halve(1), 2);
	CHECK_EQ(r_halve(0), 2);
}

/* "If all the three duplicate ACKs ... have their drop-negative bit set". */
static void test_all_bits_modified(void)
{
	struct r_sender s;
	struct r_ack a = hole(1000, 5000, 3, 0);

	r_sender_init(&s);
	CHECK_EQ(r_classify(&s, &dflt, &a), R_PATH_MODIFIED);
	CHECK_EQ(r_on_ack(&s, &dflt, &a), R_ACT_NONE);
	CHECK_EQ(s.verdict, R_PATH_MODIFIED);
	CHECK(r_recovery_begins(&s, &a));
	CHECK_EQ(s.paths[R_PATH_MODIFIED], 1);
	CHECK(s.flags & R_F_MOD);
	CHECK_EQ(r_recovery_ends(&s, false, 40), 0);	/* nothing asked */
	CHECK(!(s.flags & R_F_MOD));
}

/* "If none of the three duplicate ACKs ... have their ... bit set". */
static void test_no_bit_drop(void)
{
	struct r_sender s;
	struct r_ack a = hole(1000, 5000, 0, 3);

	r_sender_init(&s);
	r_on_ack(&s, &dflt, &a);
	CHECK_EQ(s.verdict, R_PATH_DROP);
	CHECK(!r_recovery_begins(&s, &a));
	CHECK_EQ(s.paths[R_PATH_DROP], 1);
	CHECK_EQ(s.paths[R_PATH_MODIFIED], 0);
	CHECK(!(s.flags & R_F_MOD));
	CHECK_EQ(r_recovery_ends(&s, false, 40), 0);
}

/* Any dupACK without the bit makes it a drop: modified needs all three. */
static void test_mixed_is_drop(void)
{
	struct r_sender s;
	struct r_ack a = hole(1000, 5000, 2, 1);

	r_sender_init(&s);
	CHECK_EQ(r_classify(&s, &dflt, &a), R_PATH_DROP);
	a = hole(1000, 5000, 200, 1);
	CHECK_EQ(r_classify(&s, &dflt, &a), R_PATH_DROP);
}

/* No count for this hole (e.g. RACK's timer, or another ACK number). */
static void test_unknown_is_drop(void)
{
	struct r_sender s;
	struct r_ack a = hole(1000, 5000, 3, 0);

	r_sender_init(&s);
	a.dn_known = 0;
	CHECK_EQ(r_classify(&s, &dflt, &a), R_PATH_DROP);
	a = hole(1000, 5000, 0, 0);
	CHECK_EQ(r_classify(&s, &dflt, &a), R_PATH_DROP);
}

/* A peer that set the bit where no RN-TCP receiver can is not believed. */
static void test_distrust_is_drop(void)
{
	struct r_sender s;
	struct r_ack a = hole(1000, 5000, 3, 0);

	r_sender_init(&s);
	a.dn_distrust = 1;
	CHECK_EQ(r_classify(&s, &dflt, &a), R_PATH_DROP);
}

/* "... and the ECE bit is set to zero (i.e no ECN ... off lately)". */
static void test_ece_on_ack(void)
{
	struct r_sender s;
	struct r_ack a = hole(1000, 5000, 3, 0);

	r_sender_init(&s);
	a.ece = 1;
	CHECK_EQ(r_on_ack(&s, &dflt, &a), R_ACT_NONE);
	CHECK_EQ(s.verdict, R_PATH_ECE);
	CHECK(!r_recovery_begins(&s, &a));
	CHECK_EQ(s.paths[R_PATH_ECE], 1);
}

static void test_ece_recent_window(void)
{
	struct r_sender s;
	struct r_ack e = hole(1000, 5000, 0, 0);
	struct r_ack a;
	struct r_params three = { 3 };

	r_sender_init(&s);
	e.ece = 1;
	r_on_ack(&s, &dflt, &e);		/* ECE at 5000 ms, srtt 100 */
	a = hole(1000, 5099, 3, 0);
	CHECK_EQ(r_classify(&s, &dflt, &a), R_PATH_ECE);
	a.now_ms = 5100;
	CHECK_EQ(r_classify(&s, &dflt, &a), R_PATH_MODIFIED);
	CHECK_EQ(r_classify(&s, &three, &a), R_PATH_ECE);
	a.now_ms = 5300;
	CHECK_EQ(r_classify(&s, &three, &a), R_PATH_MODIFIED);
	/* before any sample, srtt counts as 1 ms */
	a = hole(1000, 5000, 3, 0);
	a.srtt_ms = 0;
	CHECK_EQ(r_classify(&s, &dflt, &a), R_PATH_ECE);
	a.now_ms = 5001;
	CHECK_EQ(r_classify(&s, &dflt, &a), R_PATH_MODIFIED);
}

/* "... retransmitted only once in a RTT". */
static void test_repeat_within_rtt(void)
{
	struct r_sender s;
	struct r_ack a = hole(1000, 5000, 3, 0);

	r_sender_init(&s);
	r_on_ack(&s, &dflt, &a);
	CHECK(r_recovery_begins(&s, &a));
	r_recovery_ends(&s, false, 40);
	a = hole(1000, 5099, 3, 0);
	r_on_ack(&s, &dflt, &a);
	CHECK_EQ(s.verdict, R_PATH_REPEAT);
	CHECK(!r_recovery_begins(&s, &a));
	CHECK_EQ(s.paths[R_PATH_REPEAT], 1);
	/* the first one's time is kept: one RTT after it, modified again */
	a = hole(1000, 5100, 3, 0);
	CHECK_EQ(r_classify(&s, &dflt, &a), R_PATH_MODIFIED);
	/* another segment is not a repeat */
	a = hole(2448, 5050, 3, 0);
	CHECK_EQ(r_classify(&s, &dflt, &a), R_PATH_MODIFIED);
}

/*
 * "Retransmitted only once in a RTT": the hole going out a second time
 * turns a modified recovery standard, counted under repeat.
 */
static void test_resent_turns_standard(void)
{
	struct r_sender s;
	struct r_ack a = hole(1000, 5000, 3, 0);

	r_sender_init(&s);
	r_on_ack(&s, &dflt, &a);
	CHECK(r_recovery_begins(&s, &a));
	a = hole(1000, 5100, 6, 0);
	CHECK_EQ(r_on_ack(&s, &dflt, &a), R_ACT_NONE);
	a.resent = 1;
	CHECK_EQ(r_on_ack(&s, &dflt, &a), R_ACT_HALVE);
	CHECK_EQ(s.paths[R_PATH_REPEAT], 1);
	CHECK_EQ(s.turned, 1);
	CHECK_EQ(r_on_ack(&s, &dflt, &a), R_ACT_NONE);	/* once */
	CHECK_EQ(r_recovery_ends(&s, false, 40), 0);
}

/* A modified recovery turns standard on ECE or on a dupACK without bit. */
static void test_turn_standard(void)
{
	struct r_sender s;
	struct r_ack a = hole(1000, 5000, 3, 0);

	r_sender_init(&s);
	r_on_ack(&s, &dflt, &a);
	CHECK(r_recovery_begins(&s, &a));
	a = hole(2448, 5010, 4, 0);		/* next hole, bit set: stay */
	CHECK_EQ(r_on_ack(&s, &dflt, &a), R_ACT_NONE);
	CHECK(s.flags & R_F_MOD);
	a = hole(2448, 5020, 4, 1);		/* a dupACK without the bit */
	CHECK_EQ(r_on_ack(&s, &dflt, &a), R_ACT_HALVE);
	CHECK(!(s.flags & R_F_MOD));
	CHECK_EQ(s.paths[R_PATH_DROP], 1);
	CHECK_EQ(s.turned, 1);
	CHECK_EQ(r_on_ack(&s, &dflt, &a), R_ACT_NONE);	/* once */
	CHECK_EQ(r_recovery_ends(&s, false, 40), 0);	/* nothing to give */

	r_sender_init(&s);
	a = hole(1000, 5000, 3, 0);
	r_on_ack(&s, &dflt, &a);
	CHECK(r_recovery_begins(&s, &a));
	a = hole(1000, 5010, 3, 0);
	a.ece = 1;
	CHECK_EQ(r_on_ack(&s, &dflt, &a), R_ACT_HALVE);
	CHECK_EQ(s.paths[R_PATH_ECE], 1);
	CHECK_EQ(s.turned, 1);

	/* an ACK without a count for this hole changes nothing */
	r_sender_init(&s);
	a = hole(1000, 5000, 3, 0);
	r_on_ack(&s, &dflt, &a);
	CHECK(r_recovery_begins(&s, &a));
	a.dn_known = 0;
	a.dn_clear = 9;
	CHECK_EQ(r_on_ack(&s, &dflt, &a), R_ACT_NONE);
	/* no recovery running: never HALVE */
	r_sender_init(&s);
	a = hole(1000, 5000, 0, 3);
	a.ece = 1;
	CHECK_EQ(r_on_ack(&s, &dflt, &a), R_ACT_NONE);
}

/*
 * A timeout inside a modified recovery withdraws the verdict: half the
 * cwnd before the recovery, counted as turned standard under drop.
 */
static void test_timeout_halves(void)
{
	struct r_sender s;
	struct r_ack a = hole(1000, 5000, 3, 0);

	r_sender_init(&s);
	r_on_ack(&s, &dflt, &a);
	CHECK(r_recovery_begins(&s, &a));
	CHECK_EQ(r_recovery_ends(&s, true, 40), 20);
	CHECK(!(s.flags & R_F_MOD));
	CHECK_EQ(s.paths[R_PATH_DROP], 1);
	CHECK_EQ(s.turned, 1);
	CHECK_EQ(s.timeouts, 1);
	CHECK_EQ(r_recovery_ends(&s, true, 40), 0);	/* once */
	/* a small window still keeps two segments */
	r_on_ack(&s, &dflt, &a);
	a.now_ms = 6000;
	r_on_ack(&s, &dflt, &a);
	CHECK(r_recovery_begins(&s, &a));
	CHECK_EQ(r_recovery_ends(&s, true, 3), 2);
	/* a timeout after a standard recovery is the stack's alone */
	a = hole(3000, 7000, 0, 3);
	r_on_ack(&s, &dflt, &a);
	CHECK(!r_recovery_begins(&s, &a));
	CHECK_EQ(r_recovery_ends(&s, true, 40), 0);
}

/*
 * PRR (RFC 6937 §4's example): a window of 20 segments, one lost, ssthresh
 * 10, one segment delivered per ACK while more than ssthresh is in
 * flight: ceil(10 * delivered / 20) - out, one segment sent per two
 * delivered, the first one the fast retransmission.
 */
static void test_prr_proportional(void)
{
	static const u32 want[] = { 1, 0, 1, 0, 1, 0, 1, 0, 1, 0 };
	u32 k, out = 0, sndcnt;

	for (k = 0; k < 10; k++) {
		sndcnt = r_prr_sndcnt(10, 20, k + 1, out, 19 - k / 2, 1,
				      false);
		CHECK_EQ(sndcnt, want[k]);
		out += sndcnt;
	}
	CHECK_EQ(out, 5);
	/* a stretch ACK for 6 segments: ceil(10 * 16 / 20) - 5 */
	CHECK_EQ(r_prr_sndcnt(10, 20, 16, 5, 14, 6, false), 3);
	/* more sent than the ratio allows: nothing, never negative */
	CHECK_EQ(r_prr_sndcnt(10, 20, 2, 5, 15, 1, false), 0);
	/* the first ACK sends the fast retransmission, whatever the ratio */
	CHECK_EQ(r_prr_sndcnt(2, 100, 1, 0, 50, 1, false), 1);
	CHECK_EQ(r_prr_sndcnt(10, 20, 0, 0, 19, 0, false), 1);
}

/*
 * At or below ssthresh in flight: what was delivered and not yet sent, or
 * at least this ACK's delivery, plus one when snd_una advanced without a
 * new loss (PRR-SSRB), up to ssthresh.
 */
static void test_prr_bound(void)
{
	CHECK_EQ(r_prr_sndcnt(10, 20, 12, 5, 8, 2, true), 2);	/* to 10 */
	CHECK_EQ(r_prr_sndcnt(10, 20, 12, 5, 4, 2, true), 6);
	CHECK_EQ(r_prr_sndcnt(10, 20, 12, 5, 0, 2, true), 8);	/* 7 + 1 */
	CHECK_EQ(r_prr_sndcnt(10, 20, 12, 5, 0, 2, false), 7);
	CHECK_EQ(r_prr_sndcnt(10, 20, 6, 5, 4, 2, false), 2);	/* delivered */
	CHECK_EQ(r_prr_sndcnt(10, 20, 6, 5, 4, 2, true), 3);
	CHECK_EQ(r_prr_sndcnt(10, 20, 30, 5, 10, 2, true), 0);	/* at it */
}

/*
 * The runaway: ssthresh above RecoverFS (a window grown in a modified
 * recovery, halved, against the cwnd before the loss: 34 against 10).
 * PRR's ratio is capped at 1: never more sent than delivered while more
 * than ssthresh is in flight.  From the kept window (69) it is 34/69.
 */
static void test_prr_never_more_than_delivered(void)
{
	u32 k, out = 0;

	for (k = 1; k <= 40; k++) {
		out += r_prr_sndcnt(34, 10, k, out, 69, 1, true);
		CHECK(out <= k);
	}
	CHECK_EQ(out, 40);
	out = 0;
	for (k = 1; k <= 69; k++) {
		out += r_prr_sndcnt(34, 69, k, out, 60, 1, true);
		CHECK(out <= (34 * k + 68) / 69);
	}
	CHECK_EQ(out, 34);
}

/* One halving per window of data (RFC 6582 §3.2, RFC 6675 §5). */
static void test_once_per_window(void)
{
	struct r_sender s;

	r_sender_init(&s);
	CHECK(r_may_cut(&s, 1000));		/* nothing cut yet */
	r_cut(&s, 50000);			/* halved with 50000 sent */
	CHECK(!r_may_cut(&s, 1000));
	CHECK(!r_may_cut(&s, 49999));
	CHECK_EQ(s.suppressed, 2);
	CHECK(r_may_cut(&s, 50000));		/* all of it acknowledged */
	CHECK(r_may_cut(&s, 1000));		/* and forgotten */
	CHECK_EQ(s.suppressed, 2);
	/* across 2^32 */
	r_cut(&s, 0x100);
	CHECK(!r_may_cut(&s, 0xffffff00));
	CHECK(r_may_cut(&s, 0x100));
	CHECK_EQ(s.suppressed, 3);
}

/*
 * tcp_update_pacing_rate(): 200 % of cwnd * mss / srtt while cwnd is below
 * half of ssthresh, 120 % after; cwnd at least packets_out; at most the
 * maximum.  srtt_us is << 3.
 */
static void test_pacing_rate(void)
{
	const u64 max = ~0ULL;
	const u32 srtt = 100000 << 3;		/* 100 ms */

	CHECK_EQ(r_pacing_rate(1000, 10, 8, 0x7fffffff, srtt, 200, 120, max),
		 200000);
	CHECK_EQ(r_pacing_rate(1000, 10, 8, 10, srtt, 200, 120, max), 120000);
	CHECK_EQ(r_pacing_rate(1000, 10, 8, 21, srtt, 200, 120, max), 120000);
	CHECK_EQ(r_pacing_rate(1000, 10, 8, 22, srtt, 200, 120, max), 200000);
	CHECK_EQ(r_pacing_rate(1000, 10, 20, 10, srtt, 200, 120, max), 240000);
	CHECK_EQ(r_pacing_rate(1448, 10, 8, 10, srtt + 7, 200, 120, max),
		 1448ULL * 80000 * 120 * 10 / (srtt + 7));
	CHECK_EQ(r_pacing_rate(1000, 10, 8, 10, srtt, 200, 120, 50000), 50000);
	CHECK_EQ(r_pacing_rate(1000, 10, 8, 10, 0, 200, 120, max),
		 1000ULL * 80000 * 120 * 10);
}

static void test_wraparound(void)
{
	struct r_sender s;
	struct r_ack a = hole(0xfffffc00, 0xffffffc0, 3, 0);
	struct r_ack e;

	r_sender_init(&s);
	e = a;
	e.ece = 1;
	r_on_ack(&s, &dflt, &e);
	a.now_ms = 0x20;			/* 96 ms later, across 2^32 */
	CHECK_EQ(r_classify(&s, &dflt, &a), R_PATH_ECE);
	a.now_ms = 0x24;			/* 100 ms later */
	CHECK_EQ(r_classify(&s, &dflt, &a), R_PATH_MODIFIED);
	r_on_ack(&s, &dflt, &a);
	CHECK(r_recovery_begins(&s, &a));
	r_recovery_ends(&s, false, 40);
	a.now_ms = 0x24 + 99;
	CHECK_EQ(r_classify(&s, &dflt, &a), R_PATH_REPEAT);
}

/*
 * Seed 000 §2.2: a corruption, then a congestion drop, then a corruption
 * of the same segment's retransmission inside one RTT.
 */
static void test_story(void)
{
	struct r_sender s;
	struct r_ack a;

	r_sender_init(&s);
	a = hole(1000, 1000, 3, 0);		/* corrupted: no cut */
	r_on_ack(&s, &dflt, &a);
	CHECK(r_recovery_begins(&s, &a));
	CHECK_EQ(r_recovery_ends(&s, false, 40), 0);
	a = hole(9000, 3000, 0, 3);		/* dropped: halve */
	r_on_ack(&s, &dflt, &a);
	CHECK(!r_recovery_begins(&s, &a));
	r_recovery_ends(&s, false, 40);
	a = hole(20000, 4000, 3, 0);		/* corrupted again: no cut */
	r_on_ack(&s, &dflt, &a);
	CHECK(r_recovery_begins(&s, &a));
	r_recovery_ends(&s, false, 40);
	a = hole(20000, 4050, 3, 0);		/* same segment, same RTT */
	r_on_ack(&s, &dflt, &a);
	CHECK(!r_recovery_begins(&s, &a));
	CHECK_EQ(s.paths[R_PATH_MODIFIED], 2);
	CHECK_EQ(s.paths[R_PATH_DROP], 1);
	CHECK_EQ(s.paths[R_PATH_REPEAT], 1);
	CHECK_EQ(s.paths[R_PATH_ECE], 0);
}

int main(void)
{
	RUN(test_init);
	RUN(test_halve);
	RUN(test_all_bits_modified);
	RUN(test_no_bit_drop);
	RUN(test_mixed_is_drop);
	RUN(test_unknown_is_drop);
	RUN(test_distrust_is_drop);
	RUN(test_ece_on_ack);
	RUN(test_ece_recent_window);
	RUN(test_repeat_within_rtt);
	RUN(test_turn_standard);
	RUN(test_resent_turns_standard);
	RUN(test_timeout_halves);
	RUN(test_prr_proportional);
	RUN(test_prr_bound);
	RUN(test_prr_never_more_than_delivered);
	RUN(test_once_per_window);
	RUN(test_pacing_rate);
	RUN(test_wraparound);
	RUN(test_story);
	return unit_report("test_r_core");
}
