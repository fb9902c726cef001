// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: the TCP-R sender core, tcp_r/r_core.c, driven by any
 * sequence of the events tcp_r.ko feeds it.
 *
 *   u8 ece_rtts (1..R_ECE_RTTS_MAX, as r_cong.c clamps it); then
 *   operations, a byte and its arguments:
 *     ACK     an ACK before loss detection (snd_una near the last, srtt as
 *             r_cong.c derives it from srtt_us, a clock near the last, the
 *             latch's counts, ECE, distrust, the hole sent twice): r_on_ack()
 *     BEGIN   a recovery begins on the last ACK: r_recovery_begins()
 *     END     it ends, normally or by a timeout: r_recovery_ends()
 *     PURE    r_halve() and r_giveback() on any arguments
 *     GROW    a modified recovery's window grows: r_grow() on any window
 *             and delivered count, rho from any RTT and rtt0_ms (0 to
 *             SAT_RTT0_MS_MAX, as the module parameter allows)
 *
 * GROW checks the growth: slow start up to the saved ssthresh, then at
 * most one segment per window delivered (Reno) or Hybla's rho^2/cwnd per
 * segment; never smaller, never past 2^32 - 1, what is owed carried in
 * less than one step.
 *
 * After every operation: the verdict is r_classify() of the last ACK, the
 * path counts add up (each recovery begun, each modified one turned
 * standard), and a modified recovery runs only after one began.
 */
#include "tests/fuzz/fuzz.h"
#include "tcp_r/r_core.c"

struct run {
	struct r_params p;
	struct r_sender s;
	struct r_ack a;		/* the last ACK */
	u32 begun;		/* r_recovery_begins() calls */
	u32 modified;		/* ... that began a modified recovery */
};

static u32 paths(const struct r_sender *s)
{
	u32 i, n = 0;

	for (i = 0; i < R_PATH_MAX; i++)
		n += s->paths[i];
	return n;
}

static void op_ack(struct fuzz_in *in, struct run *x)
{
	struct r_sender was = x->s;
	u8 bits = fuzz_u8(in);
	enum r_action act;

	x->a = (struct r_ack){
		.snd_una = fuzz_near(in, x->a.snd_una),
		/* (tp->srtt_us >> 3) / USEC_PER_MSEC */
		.srtt_ms = (fuzz_u32(in) >> 3) / 1000,
		.now_ms = fuzz_near(in, x->a.now_ms),
		.dn_set = fuzz_u16(in),
		.dn_clear = fuzz_u16(in),
		.dn_known = bits & 1,
		.dn_distrust = !!(bits & 2),
		.ece = !!(bits & 4),
		.resent = !!(bits & 8),
	};
	act = r_on_ack(&x->s, &x->p, &x->a);
	FUZZ_CHECK(x->s.verdict == r_classify(&x->s, &x->p, &x->a));
	FUZZ_CHECK(!x->a.ece || (x->s.verdict == R_PATH_ECE &&
				 x->s.last_ece_ms == x->a.now_ms));
	if (act == R_ACT_NONE) {
		FUZZ_CHECK(x->s.turned == was.turned);
		FUZZ_CHECK(!(was.flags & R_F_MOD) || (x->s.flags & R_F_MOD));
		return;
	}
	/* Turned standard: on ECE, a dupACK without the bit, a resend. */
	FUZZ_CHECK(act == R_ACT_HALVE && (was.flags & R_F_MOD) &&
		   !(x->s.flags & R_F_MOD));
	FUZZ_CHECK(x->a.ece || x->a.resent ||
		   (x->a.dn_known && (x->a.dn_clear || x->a.dn_distrust)));
	FUZZ_CHECK(x->s.turned == was.turned + 1);
}

static void op_begin(struct fuzz_in *in, struct run *x)
{
	u32 ssthresh = fuzz_u32(in);
	u8 verdict = x->s.verdict;
	bool mod = r_recovery_begins(&x->s, &x->a, ssthresh);

	x->begun++;
	x->modified += mod;
	FUZZ_CHECK(mod == (verdict == R_PATH_MODIFIED));
	if (mod)
		FUZZ_CHECK((x->s.flags & R_F_MOD) &&
			   x->s.saved_ssthresh == ssthresh &&
			   x->s.last_seq == x->a.snd_una &&
			   x->s.last_ms == x->a.now_ms);
}

static void op_end(struct fuzz_in *in, struct run *x)
{
	bool timeout = fuzz_u8(in) & 1, mod = x->s.flags & R_F_MOD;
	u32 prior = fuzz_u32(in), saved = x->s.saved_ssthresh;
	u32 ret = r_recovery_ends(&x->s, timeout, prior);

	FUZZ_CHECK(!(x->s.flags & R_F_MOD));
	FUZZ_CHECK(ret == (!mod ? 0 : timeout ? r_halve(prior) : saved));
}

static void op_pure(struct fuzz_in *in, struct run *x)
{
	u32 cwnd = fuzz_u32(in), saved = fuzz_u32(in), ss = fuzz_u32(in);
	bool undone = fuzz_u8(in) & 1;
	u32 h = r_halve(cwnd), g = r_giveback(saved, ss, undone);

	FUZZ_CHECK(h >= 2 && (h == 2 || h == cwnd / 2));
	(void)x;
	FUZZ_CHECK(g >= saved && (g == saved || (undone && g == ss)));
}

static void op_grow(struct fuzz_in *in, struct run *x)
{
	u32 wnd = fuzz_u32(in), acked = fuzz_u32(in), rtt_us = fuzz_u32(in);
	u32 rho8 = sat_rho8(rtt_us, fuzz_u16(in) % (SAT_RTT0_MS_MAX + 1));
	u32 ss = x->s.saved_ssthresh, from = wnd ? wnd : 1;
	u32 cnt = x->s.grow_cnt, got = r_grow(&x->s, wnd, acked, rho8);
	u32 ca = from, left = sat_slow_start(&ca, ss, acked);
	bool sat = got == 0xffffffffU;
	u64 most;

	FUZZ_CHECK(!rho8 || (rho8 >= SAT_RHO8_MIN && rho8 <= SAT_RHO8_MAX));
	FUZZ_CHECK(got >= ca && ca >= from);
	FUZZ_CHECK(ca == from + acked - left && (!left || ca >= ss));
	if (!rho8) {
		most = ((u64)cnt + left) / ca;
		sat |= (u64)cnt + left > 0xffffffffU;
		FUZZ_CHECK(x->s.grow_cnt < ca);
	} else {
		most = ((u64)left * sat_hybla_step(ca, rho8) + 127) >>
		       SAT_FRAC_SHIFT;
		FUZZ_CHECK(x->s.grow_cnt < 1U << SAT_FRAC_SHIFT);
	}
	FUZZ_CHECK(got - ca <= most);
	FUZZ_CHECK(sat || got - ca + (rho8 ? 1 : 0) >= most);
}

static void (*const ops[])(struct fuzz_in *in, struct run *x) = {
	op_ack, op_begin, op_end, op_pure, op_grow,
};

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct fuzz_in in = fuzz_start(data, size);
	struct run x = { 0 };

	x.p.ece_rtts = 1 + fuzz_pick(&in, R_ECE_RTTS_MAX);
	r_sender_init(&x.s);
	while (fuzz_more(&in)) {
		ops[fuzz_pick(&in, FUZZ_COUNT(ops))](&in, &x);
		FUZZ_CHECK(x.s.verdict < R_PATH_MAX);
		FUZZ_CHECK(!(x.s.flags & ~(R_F_ECE | R_F_MOD | R_F_LAST)));
		FUZZ_CHECK(!(x.s.flags & R_F_MOD) || (x.s.flags & R_F_LAST));
		FUZZ_CHECK(paths(&x.s) == x.begun + x.s.turned);
		FUZZ_CHECK(x.s.paths[R_PATH_MODIFIED] == x.modified);
		FUZZ_CHECK(x.s.turned <= x.modified);
	}
	return 0;
}
