// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the TCP-R core (tcp_r/r_core.c): the paths of seed 000
 * §2.2.1 (bit on every dupACK and no recent ECE: modified fast recovery;
 * a dupACK without the bit: halve; ECE: halve; the same segment twice in
 * one RTT: halve), a modified recovery turning standard, the ssthresh
 * given back at its end, a timeout inside it (halves), and clock and sequence
 * wraparound.
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
	CHECK(r_recovery_begins(&s, &a, 64));
	CHECK_EQ(s.paths[R_PATH_MODIFIED], 1);
	CHECK(s.flags & R_F_MOD);
	CHECK_EQ(s.saved_ssthresh, 64);
	CHECK_EQ(r_recovery_ends(&s, false, 40), 64);
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
	CHECK(!r_recovery_begins(&s, &a, 64));
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
	CHECK(!r_recovery_begins(&s, &a, 64));
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
	CHECK(r_recovery_begins(&s, &a, 64));
	r_recovery_ends(&s, false, 40);
	a = hole(1000, 5099, 3, 0);
	r_on_ack(&s, &dflt, &a);
	CHECK_EQ(s.verdict, R_PATH_REPEAT);
	CHECK(!r_recovery_begins(&s, &a, 64));
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
	CHECK(r_recovery_begins(&s, &a, 64));
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
	CHECK(r_recovery_begins(&s, &a, 64));
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
	CHECK(r_recovery_begins(&s, &a, 64));
	a = hole(1000, 5010, 3, 0);
	a.ece = 1;
	CHECK_EQ(r_on_ack(&s, &dflt, &a), R_ACT_HALVE);
	CHECK_EQ(s.paths[R_PATH_ECE], 1);
	CHECK_EQ(s.turned, 1);

	/* an ACK without a count for this hole changes nothing */
	r_sender_init(&s);
	a = hole(1000, 5000, 3, 0);
	r_on_ack(&s, &dflt, &a);
	CHECK(r_recovery_begins(&s, &a, 64));
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
	CHECK(r_recovery_begins(&s, &a, 0x7fffffff));
	CHECK_EQ(r_recovery_ends(&s, true, 40), 20);
	CHECK(!(s.flags & R_F_MOD));
	CHECK_EQ(s.paths[R_PATH_DROP], 1);
	CHECK_EQ(s.turned, 1);
	CHECK_EQ(r_recovery_ends(&s, true, 40), 0);	/* once */
	/* a small window still keeps two segments */
	r_on_ack(&s, &dflt, &a);
	a.now_ms = 6000;
	r_on_ack(&s, &dflt, &a);
	CHECK(r_recovery_begins(&s, &a, 64));
	CHECK_EQ(r_recovery_ends(&s, true, 3), 2);
	/* a timeout after a standard recovery is the stack's alone */
	a = hole(3000, 7000, 0, 3);
	r_on_ack(&s, &dflt, &a);
	CHECK(!r_recovery_begins(&s, &a, 64));
	CHECK_EQ(r_recovery_ends(&s, true, 40), 0);
}

/*
 * The ssthresh given back after cwnd is set: exactly the one before the
 * recovery, below or above the old cwnd, unless an undo restored more.
 */
static void test_giveback(void)
{
	CHECK_EQ(r_giveback(20, 40, false), 20);	/* avoidance */
	CHECK_EQ(r_giveback(60, 4, false), 60);		/* slow start */
	CHECK_EQ(r_giveback(20, 40, true), 40);		/* undone */
	CHECK_EQ(r_giveback(60, 40, true), 60);
}

/* The window of a modified recovery grows as Reno's outside one. */
static void test_grow_avoidance(void)
{
	struct r_sender s;
	struct r_ack a = hole(1000, 5000, 3, 0);
	u32 w = 40, i;

	r_sender_init(&s);
	r_on_ack(&s, &dflt, &a);
	CHECK(r_recovery_begins(&s, &a, 20));	/* cwnd 40 above ssthresh 20 */
	CHECK_EQ(r_grow(&s, w, 39, 0), 40);		/* one short of a window */
	CHECK_EQ(r_grow(&s, w, 1, 0), 41);
	CHECK_EQ(s.grow_cnt, 0);
	w = 41;
	for (i = 0; i < 41 + 42 + 43; i++)		/* three windows, ACK by ACK */
		w = r_grow(&s, w, 1, 0);
	CHECK_EQ(w, 44);
	CHECK_EQ(s.grow_cnt, 0);
	CHECK_EQ(r_grow(&s, 25, 55, 0), 27);		/* two steps at once */
	CHECK_EQ(s.grow_cnt, 5);
}

static void test_grow_slow_start(void)
{
	struct r_sender s;
	struct r_ack a = hole(1000, 5000, 3, 0);

	r_sender_init(&s);
	r_on_ack(&s, &dflt, &a);
	CHECK(r_recovery_begins(&s, &a, 64));	/* cwnd below ssthresh 64 */
	CHECK_EQ(r_grow(&s, 20, 10, 0), 30);		/* one per segment */
	CHECK_EQ(r_grow(&s, 60, 10, 0), 64);		/* up to 64, 6 left over */
	CHECK_EQ(s.grow_cnt, 6);
	CHECK_EQ(r_grow(&s, 64, 58, 0), 65);		/* then avoidance */
	CHECK_EQ(s.grow_cnt, 0);
	CHECK_EQ(r_grow(&s, 0, 0, 0), 1);		/* never a zero window */
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
	CHECK(r_recovery_begins(&s, &a, 10));
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
	CHECK(r_recovery_begins(&s, &a, 40));
	CHECK_EQ(r_recovery_ends(&s, false, 40), 40);
	a = hole(9000, 3000, 0, 3);		/* dropped: halve */
	r_on_ack(&s, &dflt, &a);
	CHECK(!r_recovery_begins(&s, &a, 40));
	r_recovery_ends(&s, false, 40);
	a = hole(20000, 4000, 3, 0);		/* corrupted again: no cut */
	r_on_ack(&s, &dflt, &a);
	CHECK(r_recovery_begins(&s, &a, 40));
	r_recovery_ends(&s, false, 40);
	a = hole(20000, 4050, 3, 0);		/* same segment, same RTT */
	r_on_ack(&s, &dflt, &a);
	CHECK(!r_recovery_begins(&s, &a, 40));
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
	RUN(test_giveback);
	RUN(test_grow_avoidance);
	RUN(test_grow_slow_start);
	RUN(test_wraparound);
	RUN(test_story);
	return unit_report("test_r_core");
}
