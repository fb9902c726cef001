// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the window growth shared by rn and r
 * (include/satnet/grow.h): Reno's rule, and Hybla's RTT-compensated
 * congestion avoidance checked against its closed form (rho^2 / cwnd per
 * segment), slow start Reno's whatever rho, rho from the minimum RTT, and
 * the bounds.
 */
#include "tests/unit/unit.h"
#include <satnet/grow.h>

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

	CHECK_EQ(sat_grow(&cnt, 10, 100, 5, 0), 15);	/* slow start */
	CHECK_EQ(sat_grow(&cnt, 98, 100, 10, 0), 100);	/* 8 owed */
	CHECK_EQ(cnt, 8);
	CHECK_EQ(sat_grow(&cnt, 100, 100, 92, 0), 101);
	CHECK_EQ(cnt, 0);
	CHECK_EQ(sat_grow(&cnt, 0, 0, 0, 0), 1);
	/* No wrap near 2^32, whatever is owed. */
	cnt = 0xfffffff0U;
	CHECK_EQ(sat_grow(&cnt, 0xfffffffeU, 0, 0xffffffffU, 0), 0xffffffffU);
	CHECK(cnt < 0xfffffffeU);
	cnt = 0;
	CHECK_EQ(sat_grow(&cnt, 1, 0, 0xffffffffU, 0), 0xffffffffU);
}

/* rho 1: Hybla is Reno. */
static void test_hybla_rho1(void)
{
	u32 cnt = 0, w = 10, i;

	CHECK_EQ(sat_grow(&cnt, w, 100, 5, SAT_RHO8_MIN), 15);
	w = 50;
	for (i = 0; i < 50; i++)
		w = sat_grow(&cnt, w, 20, 1, SAT_RHO8_MIN);
	CHECK(w == 50 || w == 51);	/* rounding of 128/cwnd */
	CHECK_EQ(sat_hybla_step(50, SAT_RHO8_MIN), 2 * 64 / 50);
}

/* Slow start is Reno's whatever rho: one segment per segment. */
static void test_slow_start_is_renos(void)
{
	u32 cnt = 0;

	CHECK_EQ(sat_grow(&cnt, 10, 1000, 2, 3 << 3), 12);
	CHECK_EQ(sat_grow(&cnt, 10, 1000, 5, 24 << 3), 15);
	CHECK_EQ(cnt, 0);
	/* It stops at ssthresh; the rest counts in avoidance: rho 4 at
	 * cwnd 75 adds 16 / 75 per segment, 10 segments 2.13.
	 */
	CHECK_EQ(sat_grow(&cnt, 70, 75, 15, 4 << 3), 75 + 10 * 27 / 128);
	CHECK_EQ(cnt, 10 * 27 % 128);
}

static void test_hybla_avoidance(void)
{
	u32 cnt = 0, w = 100, acked = 0;

	/* rho 4: rho^2 = 16 segments per window delivered. */
	CHECK_EQ(sat_hybla_step(100, 4 << 3), 2 * 32 * 32 / 100);
	while (acked < 100) {
		w = sat_grow(&cnt, w, 50, 1, 4 << 3);
		acked++;
	}
	CHECK(w >= 114 && w <= 116);	/* 16, less the step truncated */
	/* rho 24 at cwnd 75: 576 / 75 = 7.68 per segment. */
	cnt = 0;
	CHECK_EQ(sat_grow(&cnt, 75, 37, 75, 24 << 3), 75 + 75 * 983 / 128);
	CHECK(cnt < 128);
	/* No overflow: the largest rho, a huge acked count. */
	CHECK_EQ(sat_grow(&cnt, 1, 0, 0xffffffffU, SAT_RHO8_MAX),
		 0xffffffffU);
}

int main(void)
{
	RUN(test_rho8);
	RUN(test_reno);
	RUN(test_hybla_rho1);
	RUN(test_slow_start_is_renos);
	RUN(test_hybla_avoidance);
	return unit_report("test_grow");
}
