/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Window growth for rn and r, as plain C shared by tcp_rn.ko, tcp_r.ko and
 * the unit tests: Reno's (tcp_reno_cong_avoid()), or, as an option, the
 * RTT-compensated growth of TCP Hybla (Caini and Firrincieli 2004; the
 * kernel's tcp_hybla.c).  With rho = RTT / RTT0, at least 1, each
 * delivered segment adds 2^rho - 1 segments in slow start and rho^2 / cwnd
 * in congestion avoidance: a flow with a long RTT grows per unit of time
 * as one with RTT0 does.
 *
 * rho is carried as rho << 3 (rho8; 0: Reno's growth).  Hybla's fractions
 * of a segment are kept in 1/128, and its slow start stops at ssthresh.
 */
#ifndef SATNET_GROW_H
#define SATNET_GROW_H

#include <satnet/types.h>

#define SAT_RHO8_MIN		8		/* rho = 1 */
#define SAT_RHO8_MAX		(64 << 3)	/* rho = 64 */
#define SAT_FRAC_SHIFT		7		/* Hybla's 1/128 of a segment */
#define SAT_RHO_SS_MAX		16		/* 2^rho capped at 2^16, as Hybla */
#define SAT_RTT0_MS_MAX		1000

/* rho << 3 for a smoothed RTT @srtt8_us (tcp_sock's srtt_us: us << 3). */
static inline u32 sat_rho8(u32 srtt8_us, u32 rtt0_ms)
{
	u32 rho8;

	if (!rtt0_ms)
		return 0;
	rho8 = srtt8_us / (rtt0_ms * 1000U);
	if (rho8 < SAT_RHO8_MIN)
		return SAT_RHO8_MIN;
	return rho8 < SAT_RHO8_MAX ? rho8 : SAT_RHO8_MAX;
}

/* 1/128 segments one delivered segment adds under Hybla's rules. */
static inline u32 sat_hybla_step(u32 cwnd, u32 ssthresh, u32 rho8)
{
	/* 128 * 2^(i/8) */
	static const u8 frac[8] = { 128, 139, 152, 165, 181, 197, 215, 234 };
	u32 rho = rho8 >> 3;

	if (cwnd < ssthresh) {
		if (rho > SAT_RHO_SS_MAX)
			rho = SAT_RHO_SS_MAX;
		return ((u32)frac[rho8 & 7] << rho) - (1U << SAT_FRAC_SHIFT);
	}
	return 2U * rho8 * rho8 / (cwnd ? cwnd : 1);
}

/* Reno: slow start up to @ssthresh, then one segment per window. */
static inline u32 sat_grow_reno(u32 *cnt, u32 cwnd, u32 ssthresh, u32 acked)
{
	u32 step;

	if (cwnd < ssthresh) {
		step = ssthresh - cwnd;
		step = acked < step ? acked : step;
		cwnd += step;
		acked -= step;
	}
	if (!cwnd)
		cwnd = 1;
	*cnt += acked;
	if (*cnt >= cwnd) {
		step = *cnt / cwnd;
		*cnt -= step * cwnd;
		cwnd += step;
	}
	return cwnd;
}

static inline u32 sat_grow_hybla(u32 *cnt, u32 cwnd, u32 ssthresh,
				 u32 acked, u32 rho8)
{
	u64 add = (u64)acked * sat_hybla_step(cwnd, ssthresh, rho8) +
		  (*cnt & ((1U << SAT_FRAC_SHIFT) - 1));
	u64 wnd = cwnd + (add >> SAT_FRAC_SHIFT);

	*cnt = add & ((1U << SAT_FRAC_SHIFT) - 1);
	if (cwnd < ssthresh && wnd > ssthresh) {
		wnd = ssthresh;
		*cnt = 0;
	}
	return wnd < 0xffffffffU ? (u32)wnd : 0xffffffffU;
}

/*
 * @cwnd after @acked more segments were delivered; @cnt carries what is
 * owed between calls.  The caller clamps the result (snd_cwnd_clamp).
 */
static inline u32 sat_grow(u32 *cnt, u32 cwnd, u32 ssthresh, u32 acked,
			   u32 rho8)
{
	if (!rho8)
		return sat_grow_reno(cnt, cwnd, ssthresh, acked);
	return sat_grow_hybla(cnt, cwnd, ssthresh, acked, rho8);
}

#endif /* SATNET_GROW_H */
