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
 */
#ifndef SATNET_GROW_H
#define SATNET_GROW_H

#include <satnet/types.h>

#define SAT_RHO8_MIN		8		/* rho = 1 */
#define SAT_RHO8_MAX		(64 << 3)	/* rho = 64 */
#define SAT_FRAC_SHIFT		7		/* Hybla's 1/128 of a segment */
#define SAT_RTT0_MS_MAX		1000

/* rho << 3 for the path's minimum RTT @rtt_us (~0U: none measured yet). */
static inline u32 sat_rho8(u32 rtt_us, u32 rtt0_ms)
{
	u64 rho8;

	if (!rtt0_ms)
		return 0;
	if (rtt_us == ~0U)
		return SAT_RHO8_MIN;
	rho8 = ((u64)rtt_us << 3) / (rtt0_ms * 1000U);
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
 * owed between calls.  The caller clamps the result (snd_cwnd_clamp).
 */
static inline u32 sat_grow(u32 *cnt, u32 cwnd, u32 ssthresh, u32 acked,
			   u32 rho8)
{
	if (!cwnd)
		cwnd = 1;
	acked = sat_slow_start(&cwnd, ssthresh, acked);
	if (!rho8)
		return sat_grow_reno(cnt, cwnd, acked);
	return sat_grow_hybla(cnt, cwnd, acked, rho8);
}

#endif /* SATNET_GROW_H */
