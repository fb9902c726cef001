/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Window growth for rn and r, as plain C shared by tcp_rn.ko, tcp_r.ko and
 * the unit tests: Reno's (tcp_reno_cong_avoid()), or, as an option, the
 * RTT-compensated congestion avoidance of TCP Hybla (Caini and Firrincieli
 * 2004; the kernel's tcp_hybla.c).  With rho = RTT / RTT0, at least 1, and
 * the RTT the path's minimum, as Hybla's, each delivered segment adds
 * rho^2 / cwnd: a flow with a long RTT grows per unit of time as one with
 * RTT0 does.
 *
 * Slow start stays Reno's, one segment per segment delivered.  Hybla's
 * adds 2^rho - 1 (at most 2^16): at a GEO RTT that fills any window within
 * one RTT, and rn and r, which leave slow start on a congestion signal
 * only, then overflow the bottleneck by thousands of packets.
 *
 * rho is carried as rho << 3 (rho8; 0: Reno's growth).  Hybla's fractions
 * of a segment are kept in 1/128.
 *
 * Hybla's growth is bounded by what the path holds: congestion avoidance
 * does not take cwnd past
 *
 *	bound = bw_max * min_rtt * (1 + 1/4) + SAT_BOUND_EXTRA segments,
 *
 * bw_max the largest delivery rate of the last 5 to 10 min RTTs.  While
 * the path is not full, bw * min_rtt is about cwnd and the bound stays a
 * quarter ahead of it; once the bottleneck is saturated, bw_max is its
 * rate and cwnd stops near its BDP plus the queue's share.  rho^2 segments
 * per RTT (576 at a GEO RTT and RTT0 25 ms) would otherwise fill any
 * queue in a few RTTs and keep it full.  The price: until the rate has
 * shown the path full, avoidance grows by at most a quarter plus
 * SAT_BOUND_EXTRA per RTT where rho^2 is more.  The result of each ACK is
 * clamped, so a stretch ACK cannot carry cwnd past the bound; the bound
 * never lowers cwnd.  Reno's growth and slow start are not bounded, and
 * with Reno's growth (rho8 0) the callers neither sample the rate nor
 * compute the bound, which cost a 64-bit division per ACK.
 *
 * 64-bit divisions are div_u64()'s (include/satnet/types.h has it for
 * userspace), which a 32-bit kernel needs.
 */
#ifndef SATNET_GROW_H
#define SATNET_GROW_H

#include <satnet/types.h>

#define SAT_RHO8_MIN		8		/* rho = 1 */
#define SAT_RHO8_MAX		(64 << 3)	/* rho = 64 */
#define SAT_FRAC_SHIFT		7		/* Hybla's 1/128 of a segment */
#define SAT_RTT0_MS_MAX		1000

/*
 * The queue's share: the window may exceed the path's BDP by 1/4 of it
 * (BBR probes with a gain of 5/4), room for a rate that grows to be
 * measured and for RTTs a little above the minimum.
 */
#define SAT_QUEUE_SHARE_SHIFT	2
/* Segments on top: a window of a few segments still grows. */
#define SAT_BOUND_EXTRA		4
/* sat_bound() without a rate or an RTT, and the bound of Reno's growth. */
#define SAT_NO_BOUND		0xffffffffU
/* Delivery rates are segments per us << SAT_BW_SHIFT, as tcp_bbr.c's. */
#define SAT_BW_SHIFT		24
/* The max spans two periods of this many min RTTs. */
#define SAT_BW_PERIOD_RTTS	5

/* Windowed max of the delivery rate: this period's and the last one's. */
struct sat_bw {
	u32 max[2];
	u32 start;		/* clock (us, low 32 bits) of this period */
};

/* rho << 3 for the path's minimum RTT @rtt_us (~0U: none measured yet). */
static inline u32 sat_rho8(u32 rtt_us, u32 rtt0_ms)
{
	u64 rho8;

	if (!rtt0_ms)
		return 0;
	if (rtt_us == ~0U)
		return SAT_RHO8_MIN;
	rho8 = div_u64((u64)rtt_us << 3, rtt0_ms * 1000U);
	if (rho8 < SAT_RHO8_MIN)
		return SAT_RHO8_MIN;
	return rho8 < SAT_RHO8_MAX ? (u32)rho8 : SAT_RHO8_MAX;
}

/* 1/128 segments one delivered segment adds in Hybla's avoidance. */
static inline u32 sat_hybla_step(u32 cwnd, u32 rho8)
{
	return 2U * rho8 * rho8 / (cwnd ? cwnd : 1);
}

/* Slow start up to @ssthresh; returns the segments left over. */
static inline u32 sat_slow_start(u32 *cwnd, u32 ssthresh, u32 acked)
{
	u32 step;

	if (*cwnd >= ssthresh)
		return acked;
	step = ssthresh - *cwnd;
	step = acked < step ? acked : step;
	*cwnd += step;
	return acked - step;
}

/* Reno: one segment per window delivered, saturating at 2^32 - 1. */
static inline u32 sat_grow_reno(u32 *cnt, u32 cwnd, u32 acked)
{
	u32 step;

	*cnt += acked < 0xffffffffU - *cnt ? acked : 0xffffffffU - *cnt;
	if (*cnt < cwnd)
		return cwnd;
	step = *cnt / cwnd;
	*cnt -= step * cwnd;
	return step < 0xffffffffU - cwnd ? cwnd + step : 0xffffffffU;
}

static inline u32 sat_grow_hybla(u32 *cnt, u32 cwnd, u32 acked, u32 rho8)
{
	u64 add = (u64)acked * sat_hybla_step(cwnd, rho8) +
		  (*cnt & ((1U << SAT_FRAC_SHIFT) - 1));
	u64 wnd = cwnd + (add >> SAT_FRAC_SHIFT);

	*cnt = add & ((1U << SAT_FRAC_SHIFT) - 1);
	return wnd < 0xffffffffU ? (u32)wnd : 0xffffffffU;
}

/*
 * @cwnd after @acked more segments were delivered; @cnt carries what is
 * owed between calls.  Hybla's avoidance stops at @bound (sat_bound()),
 * which never lowers cwnd.  The caller clamps the result (snd_cwnd_clamp).
 */
static inline u32 sat_grow(u32 *cnt, u32 cwnd, u32 ssthresh, u32 acked,
			   u32 rho8, u32 bound)
{
	u32 wnd;

	if (!cwnd)
		cwnd = 1;
	acked = sat_slow_start(&cwnd, ssthresh, acked);
	if (!rho8)
		return sat_grow_reno(cnt, cwnd, acked);
	if (cwnd >= bound)
		return cwnd;
	wnd = sat_grow_hybla(cnt, cwnd, acked, rho8);
	return wnd < bound ? wnd : bound;
}

/* A delivery rate sample (SAT_BW_SHIFT); 0 if either is 0. */
static inline u32 sat_bw_rate(u32 delivered, u32 interval_us)
{
	u64 bw;

	if (!delivered || !interval_us)
		return 0;
	bw = div_u64((u64)delivered << SAT_BW_SHIFT, interval_us);
	return bw < 0xffffffffU ? (u32)bw : 0xffffffffU;
}

static inline u32 sat_bw_max(const struct sat_bw *b)
{
	return b->max[0] > b->max[1] ? b->max[0] : b->max[1];
}

/*
 * A rate sample @bw at @now_us.  A new period begins every
 * SAT_BW_PERIOD_RTTS min RTTs: the max then covers 5 to 10 of them.  An
 * app-limited sample counts only if it raises the max (as tcp_bbr.c's).
 */
static inline void sat_bw_update(struct sat_bw *b, u32 now_us,
				 u32 min_rtt_us, u32 bw, bool app_limited)
{
	u32 period = 0x3fffffffU, age = now_us - b->start;

	if (min_rtt_us < period / SAT_BW_PERIOD_RTTS)
		period = min_rtt_us * SAT_BW_PERIOD_RTTS;
	if (age >= period) {
		b->max[1] = age < 2 * period ? b->max[0] : 0;
		b->max[0] = 0;
		b->start = now_us;
	}
	if (!bw || (app_limited && bw <= sat_bw_max(b)))
		return;
	if (bw > b->max[0])
		b->max[0] = bw;
}

/*
 * Segments the path holds: @bw * @min_rtt_us, plus the queue's share,
 * plus SAT_BOUND_EXTRA.  SAT_NO_BOUND without a rate or an RTT.
 */
static inline u32 sat_bound(u32 bw, u32 min_rtt_us)
{
	u64 bdp;

	if (!bw || !min_rtt_us || min_rtt_us == ~0U)
		return SAT_NO_BOUND;
	bdp = ((u64)bw * min_rtt_us) >> SAT_BW_SHIFT;
	bdp += (bdp >> SAT_QUEUE_SHARE_SHIFT) + SAT_BOUND_EXTRA;
	return bdp < SAT_NO_BOUND ? (u32)bdp : SAT_NO_BOUND;
}

#endif /* SATNET_GROW_H */
