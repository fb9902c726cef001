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
 *     PURE    r_halve(), r_pacing_rate() on any arguments
 *     CUT     a halving (r_cut()) or a signal that asks for one
 *             (r_may_cut()), snd_una near the last
 *     PRR     r_prr_sndcnt() on any arguments
 *
 * CUT checks once per window: no halving allowed before snd_una reaches
 * the snd_nxt of the last one, each refusal counted.  PRR checks that a
 * reduction never sends more than was delivered while more than ssthresh
 * is in flight, nor fills the flight past ssthresh after.
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
	u32 una;		/* snd_una of the last CUT */
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
	u8 verdict = x->s.verdict;
	bool mod = r_recovery_begins(&x->s, &x->a);

	(void)in;
	x->begun++;
	x->modified += mod;
	FUZZ_CHECK(mod == (verdict == R_PATH_MODIFIED));
	if (mod)
		FUZZ_CHECK((x->s.flags & R_F_MOD) &&
			   x->s.last_seq == x->a.snd_una &&
			   x->s.last_ms == x->a.now_ms);
}

static void op_end(struct fuzz_in *in, struct run *x)
{
	bool timeout = fuzz_u8(in) & 1, mod = x->s.flags & R_F_MOD;
	u32 prior = fuzz_u32(in), was = x->s.timeouts;
	u32 ret = r_recovery_ends(&x->s, timeout, prior);

	FUZZ_CHECK(!(x->s.flags & R_F_MOD));
	FUZZ_CHECK(ret == (mod && timeout ? r_halve(prior) : 0));
	FUZZ_CHECK(x->s.timeouts == was + (mod && timeout));
}

static void op_pure(struct fuzz_in *in, struct run *x)
{
	u32 cwnd = fuzz_u32(in) >> (fuzz_u8(in) & 31);
	u32 mss = fuzz_u16(in), out = fuzz_u32(in), ss = fuzz_u32(in);
	u32 srtt = fuzz_u32(in), sr = fuzz_u16(in), cr = fuzz_u16(in);
	u64 max = ((u64)fuzz_u32(in) << 32) | fuzz_u32(in);
	u32 h = r_halve(cwnd);
	u64 rate;

	(void)x;
	FUZZ_CHECK(h >= 2 && (h == 2 || h == cwnd / 2));
	cwnd &= 0xffff;
	out &= 0xffff;
	rate = r_pacing_rate(mss, cwnd, out, ss, srtt, sr, cr, max);
	FUZZ_CHECK(rate <= max);
	if (rate < max && srtt)
		FUZZ_CHECK(rate == (u64)mss * 80000 *
			   (cwnd < ss / 2 ? sr : cr) *
			   (cwnd > out ? cwnd : out) / srtt);
}

static void op_cut(struct fuzz_in *in, struct run *x)
{
	u32 una = fuzz_near(in, x->una), was = x->s.suppressed;
	bool cut = x->s.flags & R_F_CUT, passed;
	u32 seq = x->s.cut_seq;

	x->una = una;
	if (fuzz_u8(in) & 1) {
		r_cut(&x->s, una + (fuzz_u16(in) << 4));
		FUZZ_CHECK((x->s.flags & R_F_CUT) &&
			   (s32)(x->s.cut_seq - una) >= 0);
		return;
	}
	passed = !cut || (s32)(una - seq) >= 0;
	FUZZ_CHECK(r_may_cut(&x->s, una) == passed);
	FUZZ_CHECK(x->s.suppressed == was + !passed);
	FUZZ_CHECK(passed ? !(x->s.flags & R_F_CUT) :
		   (x->s.flags & R_F_CUT) && x->s.cut_seq == seq);
}

static void op_prr(struct fuzz_in *in, struct run *x)
{
	u32 ss = fuzz_u32(in) >> (fuzz_u8(in) & 31);
	u32 fs = fuzz_u32(in) >> (fuzz_u8(in) & 31);
	u32 del = fuzz_u32(in) >> (fuzz_u8(in) & 31);
	u32 out = fuzz_u32(in) >> (fuzz_u8(in) & 31);
	u32 pipe = fuzz_u32(in) >> (fuzz_u8(in) & 31);
	u32 now = fuzz_u16(in);
	bool bonus = fuzz_u8(in) & 1;
	u32 snd = r_prr_sndcnt(ss, fs, del, out, pipe, now, bonus);

	(void)x;
	if (!out && !snd)
		FUZZ_CHECK(0);		/* the fast retransmission */
	if (pipe > ss && out && snd)
		FUZZ_CHECK((u64)out + snd <= del);
	if (pipe <= ss && (out || snd > 1))
		FUZZ_CHECK((u64)pipe + snd <= ss);
}

static void (*const ops[])(struct fuzz_in *in, struct run *x) = {
	op_ack, op_begin, op_end, op_pure, op_cut, op_prr,
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
		FUZZ_CHECK(!(x.s.flags & ~(R_F_ECE | R_F_MOD | R_F_LAST |
					   R_F_CUT)));
		FUZZ_CHECK(!(x.s.flags & R_F_MOD) || (x.s.flags & R_F_LAST));
		FUZZ_CHECK(paths(&x.s) == x.begun + x.s.turned);
		FUZZ_CHECK(x.s.paths[R_PATH_MODIFIED] == x.modified);
		FUZZ_CHECK(x.s.turned <= x.modified);
		FUZZ_CHECK(x.s.timeouts <= x.s.turned);
	}
	return 0;
}
