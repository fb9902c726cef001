// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the window growth shared by rn and r
 * (include/satnet/grow.h): Reno's rule, and Hybla's RTT-compensated
 * congestion avoidance checked against its closed form (rho^2 / cwnd per
 * segment), slow start Reno's whatever rho, rho from the minimum RTT, and
 * the bounds; the bound on Hybla's growth by what the path holds (the
 * windowed max of the delivery rate, min RTT, the queue's share).
 */
#include "tests/unit/unit.h"
#include <satnet/grow.h>

/* Unbounded: Reno's, or Hybla's as it was without the bound. */
static u32 grow(u32 *cnt, u32 cwnd, u32 ssthresh, u32 acked, u32 rho8)
{
	return sat_grow(cnt, cwnd, ssthresh, acked, rho8, SAT_NO_BOUND);
}

static void test_rho8(void)
{
	CHECK_EQ(sat_rho8(600000, 0), 0);		/* off: Reno */
	CHECK_EQ(sat_rho8(600000, 25), 24 << 3);	/* GEO: rho 24 */
	CHECK_EQ(sat_rho8(30000, 25), 9);		/* rho 1.125 */
	CHECK_EQ(sat_rho8(1000, 25), SAT_RHO8_MIN);	/* short RTT */
	CHECK_EQ(sat_rho8(0xfffffffeU, 1), SAT_RHO8_MAX);
	CHECK_EQ(sat_rho8(~0U, 25), SAT_RHO8_MIN);	/* no sample yet */
	CHECK_EQ(sat_rho8(600000, SAT_RTT0_MS_MAX), SAT_RHO8_MIN);
}

static void test_reno(void)
{
	u32 cnt = 0;

	CHECK_EQ(grow(&cnt, 10, 100, 5, 0), 15);	/* slow start */
	CHECK_EQ(grow(&cnt, 98, 100, 10, 0), 100);	/* 8 owed */
	CHECK_EQ(cnt, 8);
	CHECK_EQ(grow(&cnt, 100, 100, 92, 0), 101);
	CHECK_EQ(cnt, 0);
	CHECK_EQ(grow(&cnt, 0, 0, 0, 0), 1);
	/* No wrap near 2^32, whatever is owed. */
	cnt = 0xfffffff0U;
	CHECK_EQ(grow(&cnt, 0xfffffffeU, 0, 0xffffffffU, 0), 0xffffffffU);
	CHECK(cnt < 0xfffffffeU);
	cnt = 0;
	CHECK_EQ(grow(&cnt, 1, 0, 0xffffffffU, 0), 0xffffffffU);
}

/* rho 1: Hybla is Reno. */
static void test_hybla_rho1(void)
{
	u32 cnt = 0, w = 10, i;

	CHECK_EQ(grow(&cnt, w, 100, 5, SAT_RHO8_MIN), 15);
	w = 50;
	for (i = 0; i < 50; i++)
		w = grow(&cnt, w, 20, 1, SAT_RHO8_MIN);
	CHECK(w == 50 || w == 51);	/* rounding of 128/cwnd */
	CHECK_EQ(sat_hybla_step(50, SAT_RHO8_MIN), 2 * 64 / 50);
}

/* Slow start is Reno's whatever rho: one segment per segment. */
static void test_slow_start_is_renos(void)
{
	u32 cnt = 0;

	CHECK_EQ(grow(&cnt, 10, 1000, 2, 3 << 3), 12);
	CHECK_EQ(grow(&cnt, 10, 1000, 5, 24 << 3), 15);
	CHECK_EQ(cnt, 0);
	/* It stops at ssthresh; the rest counts in avoidance: rho 4 at
	 * cwnd 75 adds 16 / 75 per segment, 10 segments 2.13.
	 */
	CHECK_EQ(grow(&cnt, 70, 75, 15, 4 << 3), 75 + 10 * 27 / 128);
	CHECK_EQ(cnt, 10 * 27 % 128);
}

static void test_hybla_avoidance(void)
{
	u32 cnt = 0, w = 100, acked = 0;

	/* rho 4: rho^2 = 16 segments per window delivered. */
	CHECK_EQ(sat_hybla_step(100, 4 << 3), 2 * 32 * 32 / 100);
	while (acked < 100) {
		w = grow(&cnt, w, 50, 1, 4 << 3);
		acked++;
	}
	CHECK(w >= 114 && w <= 116);	/* 16, less the step truncated */
	/* rho 24 at cwnd 75: 576 / 75 = 7.68 per segment. */
	cnt = 0;
	CHECK_EQ(grow(&cnt, 75, 37, 75, 24 << 3), 75 + 75 * 983 / 128);
	CHECK(cnt < 128);
	/* No overflow: the largest rho, a huge acked count. */
	CHECK_EQ(grow(&cnt, 1, 0, 0xffffffffU, SAT_RHO8_MAX),
		 0xffffffffU);
}

/* bw * min_rtt * 5/4 + 4: the GEO path, 125 segments/s, 600 ms. */
static void test_bound(void)
{
	u32 bw = sat_bw_rate(125, 1000000);
	u32 bdp = (u32)(((u64)bw * 600000) >> SAT_BW_SHIFT);

	CHECK_EQ(bw, (125ULL << SAT_BW_SHIFT) / 1000000);
	CHECK_EQ(bdp, 74);			/* 75, less the truncated rate */
	CHECK_EQ(sat_bound(bw, 600000), 74 + 74 / 4 + SAT_BOUND_EXTRA);
	/* No rate, no RTT: no bound. */
	CHECK_EQ(sat_bound(0, 600000), SAT_NO_BOUND);
	CHECK_EQ(sat_bound(bw, 0), SAT_NO_BOUND);
	CHECK_EQ(sat_bound(bw, ~0U), SAT_NO_BOUND);
	CHECK_EQ(sat_bw_rate(0, 1000), 0);
	CHECK_EQ(sat_bw_rate(10, 0), 0);
	/* A tiny rate: the extra segments alone. */
	CHECK_EQ(sat_bound(1, 1000), SAT_BOUND_EXTRA);
	/* Overflow: rate and product saturate, no wrap. */
	CHECK_EQ(sat_bw_rate(0xffffffffU, 1), 0xffffffffU);
	CHECK_EQ(sat_bound(0xffffffffU, 0xfffffffeU), SAT_NO_BOUND);
	CHECK_EQ(sat_bound(1U << SAT_BW_SHIFT, 0xfffffffeU), SAT_NO_BOUND);
	CHECK_EQ(sat_bound(1U << SAT_BW_SHIFT, 0x7fffffffU),
		 0x7fffffffU + 0x7fffffffU / 4 + SAT_BOUND_EXTRA);
}

/* The max over 5 to 10 min RTTs; app-limited samples only raise it. */
static void test_bw_max(void)
{
	struct sat_bw b = { { 0, 0 }, 0 };
	u32 rtt = 100000, t = 0xfffffff0U;	/* the clock wraps */

	sat_bw_update(&b, t, rtt, 0, false);	/* invalid sample */
	CHECK_EQ(sat_bw_max(&b), 0);
	sat_bw_update(&b, t, rtt, 1000, false);
	sat_bw_update(&b, t + 1, rtt, 400, true);	/* app-limited, lower */
	CHECK_EQ(sat_bw_max(&b), 1000);
	sat_bw_update(&b, t + 2, rtt, 1500, true);	/* raises it */
	CHECK_EQ(sat_bw_max(&b), 1500);
	/* One period (5 RTTs) on: the last period's max still counts. */
	t += 5 * rtt + 10;
	sat_bw_update(&b, t, rtt, 500, false);
	CHECK_EQ(sat_bw_max(&b), 1500);
	/* Two: forgotten; 500 is the max. */
	t += 5 * rtt;
	sat_bw_update(&b, t, rtt, 300, false);
	CHECK_EQ(sat_bw_max(&b), 500);
	/* Silence for more than two periods: nothing is left. */
	t += 10 * rtt;
	sat_bw_update(&b, t, rtt, 0, false);
	CHECK_EQ(sat_bw_max(&b), 0);
	/* No RTT measured yet: one long period, no overflow. */
	sat_bw_update(&b, t + 1, ~0U, 700, false);
	CHECK_EQ(sat_bw_max(&b), 700);
	sat_bw_update(&b, t + 0x3ffffffeU, ~0U, 100, false);
	CHECK_EQ(sat_bw_max(&b), 700);
}

/* Hybla's avoidance stops at the bound; slow start and Reno do not. */
static void test_grow_bounded(void)
{
	u32 cnt = 0;

	/* rho 24 at cwnd 90 would add 6.4 per segment: 96 at most. */
	CHECK_EQ(sat_grow(&cnt, 90, 50, 10, 24 << 3, 96), 96);
	CHECK_EQ(sat_grow(&cnt, 96, 50, 10, 24 << 3, 96), 96);
	/* Above the bound: kept, not lowered. */
	CHECK_EQ(sat_grow(&cnt, 120, 50, 10, 24 << 3, 96), 120);
	/* Below it by more than the step: Hybla's, unchanged. */
	cnt = 0;
	CHECK_EQ(sat_grow(&cnt, 75, 37, 75, 24 << 3, 1000),
		 75 + 75 * 983 / 128);
	/* Slow start is not bounded, Reno's growth neither. */
	CHECK_EQ(sat_grow(&cnt, 10, 1000, 200, 24 << 3, 50), 210);
	cnt = 0;
	CHECK_EQ(sat_grow(&cnt, 100, 50, 100, 0, 50), 101);
}

/*
 * A saturated GEO bottleneck, one RTT a step: 125 segments/s, min RTT
 * 600 ms, queueing above the BDP (75).  Each 600 ms delivers
 * min(cwnd, 75) segments, one ACK each; a queue makes the RTT longer.
 * Bounded, cwnd stops at 74 * 5/4 + 4 = 96; unbounded, it passes 500.
 */
static u32 geo_run(bool bounded)
{
	struct sat_bw b = { { 0, 0 }, 0 };
	u32 cwnd = 40, cnt = 0, now = 0, n, i, out;

	for (n = 0; n < 40; n++) {
		out = cwnd < 75 ? cwnd : 75;
		sat_bw_update(&b, now, 600000, sat_bw_rate(out, 600000),
			      false);
		for (i = 0; i < out; i++)
			cwnd = sat_grow(&cnt, cwnd, 40, 1, 24 << 3,
					bounded ? sat_bound(sat_bw_max(&b),
							    600000) :
					SAT_NO_BOUND);
		now += (u32)((u64)600000 * (cwnd > 75 ? cwnd : 75) / 75);
	}
	return cwnd;
}

static void test_geo_saturated(void)
{
	CHECK_EQ(geo_run(true), 96);
	CHECK(geo_run(false) > 500);
}

int main(void)
{
	RUN(test_rho8);
	RUN(test_reno);
	RUN(test_hybla_rho1);
	RUN(test_slow_start_is_renos);
	RUN(test_hybla_avoidance);
	RUN(test_bound);
	RUN(test_bw_max);
	RUN(test_grow_bounded);
	RUN(test_geo_saturated);
	return unit_report("test_grow");
}
