// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the ESACK core (tcp_esack/esack_core.c): every rule of
 * seed 002 "Description of Enhanced Selective Acknowledgements" (A1, A2,
 * A3, B1, B2, B3), the consecutive-window classification (bounds, span,
 * wraparound, same window, expiry), undo, ECN, the parameters, the ss
 * report, the seed's Fig. 1 narrative and a long random run.
 */
#include "tests/unit/unit.h"
#include "tcp_esack/esack_core.c"
#include "tests/unit/esack_check.h"

#define MSS	460U
#define REF	70U			/* seed 002: "ssthresh is set to 70" */

/* Most tests bound the next window to one window of data (span 1). */
static const struct esack_params span1 = { ESACK_FIRST_DEFAULT, 1 };
static const struct esack_params dflt = {
	ESACK_FIRST_DEFAULT, ESACK_SPAN_DEFAULT
};

static u32 reno_of(u32 cwnd)
{
	return cwnd / 2 > 2 ? cwnd / 2 : 2;
}

/* A loss detected with snd_una = una, snd_nxt = nxt and cwnd segments. */
static u32 loss_p(struct esack_core *c, u32 una, u32 nxt, u32 cwnd,
		  const struct esack_params *p)
{
	struct esack_event ev = {
		.una = una, .nxt = nxt, .cwnd = cwnd, .reno = reno_of(cwnd),
		.mss = MSS,
	};

	return esack_loss(c, &ev, p);
}

static u32 loss(struct esack_core *c, u32 una, u32 nxt, u32 cwnd)
{
	return loss_p(c, una, nxt, cwnd, &span1);
}

static void test_pct_and_params(void)
{
	CHECK_EQ(esack_pct(88, 60), 52);		/* floor(52.8) */
	CHECK_EQ(esack_pct(100, 60), 60);
	CHECK_EQ(esack_pct(99, 50), 49);
	CHECK_EQ(esack_pct(0xffffffffU, 60), 2576980377U);
	CHECK_EQ(esack_pct(0xffffffffU, 100), 0xffffffffU);
	CHECK_EQ(esack_pct(80, 250), 80);		/* clamped to 100 % */
	CHECK(!esack_first_valid(49));
	CHECK(esack_first_valid(50));
	CHECK(esack_first_valid(60));
	CHECK(esack_first_valid(100));
	CHECK(!esack_first_valid(101));
	CHECK(!esack_first_valid(-60));
	CHECK(!esack_span_valid(-1));
	CHECK(esack_span_valid(0));
	CHECK(esack_span_valid(64));
	CHECK(!esack_span_valid(65));
}

static void test_initial_state(void)
{
	struct esack_core c;

	esack_core_init(&c, REF);
	CHECK_EQ(c.cur.secwnd, 1);		/* "Initially ... set to 1" */
	CHECK_EQ(c.cur.last, ESACK_NONE);
	CHECK_EQ(c.cur.ref, REF);
	CHECK(!esack_even(&c, 12345));
	CHECK_EQ(total(&c), 0);
	CHECK_EQ(esack_diag_state(&c), 1);
}

/* A1: odd window, cwnd < ssthresh: the same cwnd afterwards. */
static void test_rule_a1(void)
{
	struct esack_core c;

	esack_core_init(&c, REF);
	CHECK_EQ(loss(&c, 1000, 1000 + 40 * MSS, 40), 40);
	CHECK_EQ(c.cur.last, ESACK_A1);
	CHECK_EQ(c.count[ESACK_A1], 1);
	CHECK_EQ(c.cur.secwnd, 0);		/* "reset to 0" */
	CHECK_EQ(c.cur.ref, REF);		/* the seed's ssthresh stays */
	CHECK_EQ(c.cur.rp, 1000 + 40 * MSS);
	CHECK_EQ(c.cur.next_end, 1000 + 80 * MSS);
}

/* A2: odd window, cwnd >= ssthresh: first_factor % of cwnd. */
static void test_rule_a2(void)
{
	struct esack_core c;
	struct esack_params p75 = { 75, 1 }, bad = { 10, 1 };

	esack_core_init(&c, REF);
	CHECK_EQ(loss(&c, 0, 88 * MSS, 88), 52);
	CHECK_EQ(c.cur.last, ESACK_A2);
	CHECK_EQ(c.count[ESACK_A2], 1);
	CHECK_EQ(c.cur.secwnd, 0);
	CHECK_EQ(c.cur.ref, REF);
	CHECK_EQ(c.reno, 44);

	esack_core_init(&c, REF);		/* cwnd == ssthresh is A2 */
	CHECK_EQ(loss(&c, 0, 70 * MSS, 70), 42);
	CHECK_EQ(c.cur.last, ESACK_A2);

	esack_core_init(&c, REF);
	CHECK_EQ(loss_p(&c, 0, 100 * MSS, 100, &p75), 75);

	esack_core_init(&c, REF);		/* out of range: default */
	CHECK_EQ(loss_p(&c, 0, 100 * MSS, 100, &bad), 60);
}

/* A3: an RTO in an odd window is Reno's timeout; ssthresh halves. */
static void test_rule_a3(void)
{
	struct esack_core c;

	esack_core_init(&c, REF);
	loss(&c, 0, 88 * MSS, 88);		/* ssthresh() first ... */
	CHECK_EQ(esack_timeout(&c, 88 * MSS), 44);	/* ... then LOSS */
	CHECK_EQ(c.cur.last, ESACK_A3);
	CHECK_EQ(c.count[ESACK_A3], 1);
	CHECK_EQ(c.count[ESACK_A2], 0);
	CHECK_EQ(total(&c), 1);
	CHECK_EQ(c.cur.secwnd, 0);
	CHECK_EQ(c.cur.ref, 44);		/* "the ssthresh is halved" */
	CHECK_EQ(c.cur.next_end, 88 * MSS + 44 * MSS);

	/* RTO during the recovery of an A1 event: converted, rp moves. */
	esack_core_init(&c, REF);
	loss(&c, 0, 40 * MSS, 40);
	CHECK_EQ(esack_timeout(&c, 55 * MSS), 20);
	CHECK_EQ(c.cur.last, ESACK_A3);
	CHECK_EQ(c.count[ESACK_A1], 0);
	CHECK_EQ(c.cur.rp, 55 * MSS);
	CHECK_EQ(c.cur.ref, 20);

	/* A second timeout of the same event changes nothing more. */
	CHECK_EQ(esack_timeout(&c, 55 * MSS), 20);
	CHECK_EQ(c.count[ESACK_A3], 1);
	CHECK_EQ(total(&c), 1);

	/* Without any event there is nothing to convert. */
	esack_core_init(&c, REF);
	CHECK_EQ(esack_timeout(&c, 5), 0);
	CHECK_EQ(total(&c), 0);
}

/* B1: loss in the next window, cwnd < ssthresh: half the cwnd. */
static void test_rule_b1(void)
{
	struct esack_core c;
	u32 rp = 88 * MSS;

	esack_core_init(&c, REF);
	CHECK_EQ(loss(&c, 0, rp, 88), 52);		/* A2 */
	CHECK(esack_even(&c, rp + 10 * MSS));
	CHECK_EQ(loss(&c, rp + 10 * MSS, rp + 60 * MSS, 53), 26);
	CHECK_EQ(c.cur.last, ESACK_B1);
	CHECK_EQ(c.count[ESACK_B1], 1);
	CHECK_EQ(c.cur.secwnd, 1);			/* "set to 1" */
	CHECK_EQ(c.cur.ref, REF);
}

/* B2: loss in the next window, cwnd >= ssthresh: half the original. */
static void test_rule_b2(void)
{
	struct esack_core c;
	u32 rp = 120 * MSS;

	esack_core_init(&c, REF);
	CHECK_EQ(loss(&c, 0, rp, 120), 72);		/* A2 */
	CHECK_EQ(loss(&c, rp + MSS, rp + 80 * MSS, 80), 35);
	CHECK_EQ(c.cur.last, ESACK_B2);
	CHECK_EQ(c.count[ESACK_B2], 1);
	CHECK_EQ(c.cur.secwnd, 1);
	CHECK_EQ(esack_diag_state(&c), 11);		/* secwnd 1, B2 1 */

	/* B2 after an A1 (cwnd grew past ssthresh in between). */
	esack_core_init(&c, 60);
	CHECK_EQ(loss(&c, 0, 50 * MSS, 50), 50);	/* A1 */
	CHECK_EQ(loss(&c, 50 * MSS, 120 * MSS, 64), 30);
	CHECK_EQ(c.cur.last, ESACK_B2);
}

/* B3: an RTO in the even window is Reno's timeout too. */
static void test_rule_b3(void)
{
	struct esack_core c;
	u32 rp = 88 * MSS;

	esack_core_init(&c, REF);
	loss(&c, 0, rp, 88);
	loss(&c, rp + MSS, rp + 52 * MSS, 52);		/* B1, provisional */
	CHECK_EQ(esack_timeout(&c, rp + 52 * MSS), 26);
	CHECK_EQ(c.cur.last, ESACK_B3);
	CHECK_EQ(c.count[ESACK_B3], 1);
	CHECK_EQ(c.count[ESACK_B1], 0);
	CHECK_EQ(c.count[ESACK_A2], 1);
	CHECK_EQ(c.cur.secwnd, 1);
	CHECK_EQ(c.cur.ref, 26);
}

/* The next window is [rp, rp + W * mss), W the cwnd the rule left. */
static void test_next_window_bounds(void)
{
	struct esack_core c;
	u32 rp = 5000 + 88 * MSS, end = rp + 52 * MSS;

	esack_core_init(&c, REF);
	loss(&c, 5000, rp, 88);				/* A2 -> 52 */
	CHECK_EQ(c.cur.next_end, end);
	CHECK(esack_even(&c, rp));
	CHECK(esack_even(&c, end - 1));
	CHECK(!esack_even(&c, end));			/* later: odd again */
	CHECK(!esack_even(&c, end + 100000));

	loss(&c, end, end + 60 * MSS, 60);		/* starts over */
	CHECK_EQ(c.cur.last, ESACK_A1);
	CHECK_EQ(c.cur.secwnd, 0);
}

/*
 * The default is the seed's count of windows with losses ("repeated
 * alternatively in all windows with losses"): whatever the distance, the
 * loss after an odd-window event is even and the one after an even-window
 * event odd.  Classified at each boundary: the old window's last byte,
 * the recovery point, the end a span of 1 would have, far beyond.
 */
static void test_default_alternates_windows_with_losses(void)
{
	struct esack_core c;
	u32 rp = 5000 + 88 * MSS, end1 = rp + 52 * MSS, far = rp + 0x40000000U;

	CHECK_EQ(ESACK_SPAN_DEFAULT, 0);
	esack_core_init(&c, REF);
	CHECK_EQ(loss_p(&c, 5000, rp, 88, &dflt), 52);		/* A2 */
	CHECK(!esack_even(&c, rp - 1));		/* its own window: odd */
	CHECK(esack_even(&c, rp));
	CHECK(esack_even(&c, end1 - 1));
	CHECK(esack_even(&c, end1));		/* span 1 would say odd */
	esack_ack(&c, rp);
	esack_ack(&c, end1);
	esack_ack(&c, far);			/* ACKs never expire it */
	CHECK_EQ(c.cur.secwnd, 0);
	CHECK(esack_even(&c, far));
	/* 1-2 s later, below ssthresh: B1 halves (was A1, kept) */
	CHECK_EQ(loss_p(&c, far, far + 50 * MSS, 50, &dflt), 25);
	CHECK_EQ(c.cur.last, ESACK_B1);
	CHECK_EQ(c.cur.secwnd, 1);
	CHECK(esack_even(&c, far + 50 * MSS - 1));	/* B's own window */
	CHECK(!esack_even(&c, far + 50 * MSS));	/* after even: odd */
	CHECK_EQ(loss_p(&c, far + 80 * MSS, far + 110 * MSS, 30, &dflt), 30);
	CHECK_EQ(c.cur.last, ESACK_A1);
	CHECK_EQ(loss_p(&c, far + 900 * MSS, far + 950 * MSS, 40, &dflt), 20);
	CHECK_EQ(c.cur.last, ESACK_B1);
	CHECK_EQ(c.count[ESACK_A2], 1);
	CHECK_EQ(c.count[ESACK_A1], 1);
	CHECK_EQ(c.count[ESACK_B1], 2);
}

/* Windows with losses pair up: odd, even, then odd again. */
static void test_pairs_alternate(void)
{
	struct esack_core c;
	u32 r1 = 88 * MSS, r2 = r1 + 60 * MSS, r3 = r2 + 40 * MSS;

	esack_core_init(&c, REF);
	loss(&c, 0, r1, 88);				/* A2 */
	loss(&c, r1, r2, 60);				/* B1: 30 */
	CHECK_EQ(c.cur.last, ESACK_B1);
	CHECK(!esack_even(&c, r2));			/* after even: odd */
	loss(&c, r2, r3, 40);
	CHECK_EQ(c.cur.last, ESACK_A1);
	CHECK(esack_even(&c, r3));
	loss(&c, r3, r3 + 40 * MSS, 41);
	CHECK_EQ(c.cur.last, ESACK_B1);
}

/* A loss before the last recovery point is in that event's window. */
static void test_same_window(void)
{
	struct esack_core c;
	u32 rp = 100000;

	esack_core_init(&c, REF);
	loss(&c, 50000, rp, 88);			/* A2 */
	CHECK(!esack_even(&c, rp - 1));
	loss(&c, rp - 1, rp + 10 * MSS, 30);		/* same window: odd */
	CHECK_EQ(c.cur.last, ESACK_A1);
	CHECK_EQ(c.cur.secwnd, 0);

	esack_core_init(&c, REF);
	loss(&c, 0, rp, 88);
	loss(&c, rp, rp + 50000, 60);			/* B1 */
	CHECK(esack_even(&c, rp + 49999));		/* B's own window */
	loss(&c, rp + 40000, rp + 90000, 20);
	CHECK_EQ(c.cur.last, ESACK_B1);
	CHECK_EQ(c.cur.secwnd, 1);

	/* Once snd_una reached rp, no loss can be in the old window. */
	esack_core_init(&c, REF);
	loss(&c, 0, rp, 88);
	esack_ack(&c, rp);
	CHECK_EQ(c.cur.past_rp, 1);
	CHECK(esack_even(&c, rp + MSS));
}

/* ACKs past the next window start over at the odd window. */
static void test_ack_expiry(void)
{
	struct esack_core c;
	u32 rp = 88 * MSS, end = rp + 52 * MSS;

	esack_core_init(&c, REF);
	loss(&c, 0, rp, 88);
	esack_ack(&c, rp - MSS);
	CHECK_EQ(c.cur.past_rp, 0);
	esack_ack(&c, rp + MSS);
	CHECK_EQ(c.cur.past_rp, 1);
	CHECK_EQ(c.cur.secwnd, 0);
	esack_ack(&c, end - 1);
	CHECK_EQ(c.cur.secwnd, 0);
	esack_ack(&c, end);
	CHECK_EQ(c.cur.secwnd, 1);
	CHECK(!esack_even(&c, end));
	/* far later, past a 2^31 distance, still odd */
	esack_ack(&c, end + 0x40000000U);
	esack_ack(&c, end + 0x80000000U);
	esack_ack(&c, end + 0xc0000000U);
	CHECK(!esack_even(&c, rp + 10));
	CHECK_EQ(c.cur.last, ESACK_A2);		/* acks change no counts */
	CHECK_EQ(total(&c), 1);
}

/* Sequence numbers wrap: windows that straddle 2^32. */
static void test_wrap(void)
{
	struct esack_core c;
	u32 una = 0xfffff000U, rp = una + 20 * MSS;	/* rp wrapped */
	u32 end = rp + 52 * MSS;

	CHECK(rp < una);
	esack_core_init(&c, REF);
	loss(&c, una, rp, 88);
	CHECK(!esack_even(&c, rp - 1));		/* before rp: same window */
	CHECK(esack_even(&c, rp));
	CHECK(esack_even(&c, end - 1));
	CHECK(!esack_even(&c, end));

	esack_core_init(&c, REF);
	una = 0xffff0000U;
	rp = 0xffffff00U;				/* next window wraps */
	end = rp + 52 * MSS;
	loss(&c, una, rp, 88);
	CHECK(end < rp);
	CHECK(esack_even(&c, 0x10));
	CHECK(esack_even(&c, end - 1));
	CHECK(!esack_even(&c, end));
	esack_ack(&c, 0x10);
	CHECK_EQ(c.cur.past_rp, 1);
	CHECK_EQ(c.cur.secwnd, 0);
	esack_ack(&c, end);
	CHECK_EQ(c.cur.secwnd, 1);
}

/* window_span: 0 = no end (the seed's Fig. 1 alternation), 2 = double. */
static void test_span(void)
{
	struct esack_core c;
	struct esack_params s0 = { 60, 0 }, s2 = { 60, 2 }, bad = { 60, 99 };
	u32 rp = 88 * MSS;

	esack_core_init(&c, REF);
	loss_p(&c, 0, rp, 88, &s0);
	CHECK_EQ(c.cur.unbounded, 1);
	esack_ack(&c, rp + 0x7fff0000U);		/* far, no expiry */
	CHECK_EQ(c.cur.secwnd, 0);
	CHECK(esack_even(&c, rp + 0x7fff0000U));

	esack_core_init(&c, REF);
	loss_p(&c, 0, rp, 88, &s2);
	CHECK_EQ(c.cur.next_end, rp + 2 * 52 * MSS);
	CHECK(esack_even(&c, rp + 2 * 52 * MSS - 1));
	CHECK(!esack_even(&c, rp + 2 * 52 * MSS));

	esack_core_init(&c, REF);			/* invalid: default 0 */
	loss_p(&c, 0, rp, 88, &bad);
	CHECK_EQ(c.cur.unbounded, 1);
	CHECK(esack_even(&c, rp + 52 * MSS));

	/* A huge window is capped so that before() stays meaningful. */
	esack_core_init(&c, 0x7fffffffU);
	loss_p(&c, 0, 1000, 0x0ffffffU, &s2);		/* A1, 16M segments */
	CHECK_EQ(c.cur.next_end, 1000 + ESACK_MAX_SPAN_BYTES);
	CHECK(esack_even(&c, 1000 + ESACK_MAX_SPAN_BYTES - 1));
	CHECK(!esack_even(&c, 1000 + ESACK_MAX_SPAN_BYTES));
}

/* Undo (spurious loss) restores everything the event changed. */
static void test_undo(void)
{
	struct esack_core c;
	u32 rp = 88 * MSS;

	esack_core_init(&c, REF);
	loss(&c, 0, rp, 88);
	esack_undo(&c);
	CHECK_EQ(c.cur.last, ESACK_NONE);
	CHECK_EQ(c.cur.secwnd, 1);
	CHECK_EQ(c.count[ESACK_A2], 0);
	CHECK_EQ(c.undone, 1);
	esack_undo(&c);					/* only once */
	CHECK_EQ(c.undone, 1);

	/* undo of a timeout restores the seed's ssthresh */
	esack_core_init(&c, REF);
	loss(&c, 0, rp, 88);
	esack_timeout(&c, rp);
	CHECK_EQ(c.cur.ref, 44);
	esack_undo(&c);
	CHECK_EQ(c.cur.ref, REF);
	CHECK_EQ(c.count[ESACK_A3], 0);

	/* undo of the even event leaves the odd one in place */
	esack_core_init(&c, REF);
	loss(&c, 0, rp, 88);
	loss(&c, rp, rp + 52 * MSS, 52);
	esack_undo(&c);
	CHECK_EQ(c.cur.last, ESACK_A2);
	CHECK_EQ(c.cur.secwnd, 0);
	CHECK(esack_even(&c, rp));
	CHECK_EQ(total(&c), 1);
}

/* An ECN echo is no ESACK event: Reno's response. */
static void test_ecn(void)
{
	struct esack_core c;

	esack_core_init(&c, REF);
	loss(&c, 0, 40 * MSS, 40);			/* would be A1 */
	CHECK_EQ(esack_cancel(&c), 20);
	CHECK_EQ(c.cur.last, ESACK_NONE);
	CHECK_EQ(c.cur.secwnd, 1);
	CHECK_EQ(total(&c), 0);
	CHECK_EQ(c.ecn, 1);
	CHECK_EQ(esack_cancel(&c), 0);			/* nothing left */
	esack_undo(&c);					/* nothing left to undo */
	CHECK_EQ(c.undone, 0);
}

/* No rule returns less than 2 segments. */
static void test_min_window(void)
{
	struct esack_core c;

	CHECK_EQ(esack_target(ESACK_A1, 1, REF, 60), 2);
	CHECK_EQ(esack_target(ESACK_A2, 3, 0, 60), 2);
	CHECK_EQ(esack_target(ESACK_B1, 3, REF, 60), 2);
	CHECK_EQ(esack_target(ESACK_B2, 3, 1, 60), 2);
	esack_core_init(&c, 0);
	CHECK_EQ(loss(&c, 0, MSS, 1), 2);		/* A2 (1 >= 0) */
	CHECK_EQ(loss(&c, MSS, 3 * MSS, 1), 2);		/* B2 of ref 0 */
	CHECK_EQ(c.cur.last, ESACK_B2);
}

/* Linux's default ssthresh is "infinite": only A1 and B1 can happen. */
static void test_infinite_ssthresh(void)
{
	struct esack_core c;
	u32 rp = 500 * MSS;

	esack_core_init(&c, 0x7fffffffU);
	CHECK_EQ(loss(&c, 0, rp, 500), 500);
	CHECK_EQ(c.cur.last, ESACK_A1);
	CHECK_EQ(loss(&c, rp, rp + 500 * MSS, 510), 255);
	CHECK_EQ(c.cur.last, ESACK_B1);
}

static void test_diag_state(void)
{
	struct esack_core c;

	esack_core_init(&c, REF);
	c.count[ESACK_B2] = 7;
	CHECK_EQ(esack_diag_state(&c), 71);
	c.cur.secwnd = 0;
	CHECK_EQ(esack_diag_state(&c), 70);
	c.count[ESACK_B2] = 0xffffffffU;
	CHECK_EQ(esack_diag_state(&c), 65530);
	c.cur.secwnd = 1;
	CHECK_EQ(esack_diag_state(&c), 65531);
}

/*
 * Seed 002, Results and Discussion, Fig. 1: the first loss above
 * ssthresh (70) -> 60 % (~49); the second halves (~26); the third keeps
 * cwnd (below ssthresh); the fourth halves.  That is what the default
 * (window_span 0) gives; with span 1, isolated losses stay odd.
 */
static void test_fig1_narrative(void)
{
	struct esack_core c;
	u32 r1 = 82 * MSS, r2 = r1 + 600 * MSS, r3 = r2 + 600 * MSS;
	u32 r4 = r3 + 600 * MSS;

	esack_core_init(&c, REF);
	CHECK_EQ(loss_p(&c, 0, r1, 82, &dflt), 49);
	CHECK_EQ(loss_p(&c, r1 + 300 * MSS, r2, 52, &dflt), 26);
	CHECK_EQ(loss_p(&c, r2 + 300 * MSS, r3, 30, &dflt), 30);
	CHECK_EQ(loss_p(&c, r3 + 300 * MSS, r4, 34, &dflt), 17);
	CHECK_EQ(c.count[ESACK_A2], 1);
	CHECK_EQ(c.count[ESACK_B1], 2);
	CHECK_EQ(c.count[ESACK_A1], 1);

	esack_core_init(&c, REF);
	CHECK_EQ(loss(&c, 0, r1, 82), 49);
	esack_ack(&c, r1 + 300 * MSS);
	CHECK_EQ(loss(&c, r1 + 300 * MSS, r2, 52), 52);	/* A1: isolated */
	CHECK_EQ(c.count[ESACK_A1], 1);
}

/* xorshift32: a fixed sequence of random operations. */
static u32 rnd_state = 2463534242U;

static u32 rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 17;
	rnd_state ^= rnd_state << 5;
	return rnd_state;
}

/* Any order of hooks keeps the state sane and the counts balanced. */
static void test_random_sequences(void)
{
	struct esack_core c;
	struct esack_params p = { 60, 1 };
	u32 i, una = 0xffff0000U, losses = 0, bad = 0;

	esack_core_init(&c, REF);
	for (i = 0; i < 2000000; i++) {
		u32 op = rnd() % 16, cwnd = rnd() % 300, w;

		una += rnd() % (64 * MSS);
		if (op == 0) {
			p.first_pct = rnd() % 120;
			p.span = rnd() % 70;
		} else if (op <= 3) {
			w = loss_p(&c, una, una + cwnd * MSS, cwnd, &p);
			losses++;
			if (w < 2 || (w > cwnd && cwnd >= 2))
				bad++;
		} else if (op == 4) {
			esack_timeout(&c, una + cwnd * MSS);
		} else if (op == 5) {
			w = esack_cancel(&c);
			if (w == 1)
				bad++;
		} else if (op == 6) {
			esack_undo(&c);
		} else {
			esack_ack(&c, una);
		}
		if (!esack_sane(&c, losses))
			bad++;
	}
	CHECK_EQ(bad, 0);
	CHECK(losses > 300000);
	CHECK(c.count[ESACK_A1] && c.count[ESACK_A2] && c.count[ESACK_A3]);
	CHECK(c.count[ESACK_B1] && c.count[ESACK_B2] && c.count[ESACK_B3]);
}

int main(void)
{
	RUN(test_pct_and_params);
	RUN(test_initial_state);
	RUN(test_rule_a1);
	RUN(test_rule_a2);
	RUN(test_rule_a3);
	RUN(test_rule_b1);
	RUN(test_rule_b2);
	RUN(test_rule_b3);
	RUN(test_next_window_bounds);
	RUN(test_default_alternates_windows_with_losses);
	RUN(test_pairs_alternate);
	RUN(test_same_window);
	RUN(test_ack_expiry);
	RUN(test_wrap);
	RUN(test_span);
	RUN(test_undo);
	RUN(test_ecn);
	RUN(test_min_window);
	RUN(test_infinite_ssthresh);
	RUN(test_diag_state);
	RUN(test_fig1_narrative);
	RUN(test_random_sequences);
	return unit_report("test_esack_core");
}
