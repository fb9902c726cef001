// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: the ESACK core, tcp_esack/esack_core.c, driven by any
 * sequence of the events tcp_esack.ko feeds it.
 *
 *   u32 initial ssthresh, u32 snd_una; then operations, a byte and its
 *   arguments:
 *     LOSS     a loss event: snd_una and snd_nxt near the last snd_una,
 *              cwnd, Reno's ssthresh, mss (16 bits, as tp->mss_cache), and
 *              the parameters first_factor and window_span read as any
 *              value (the core must refuse what is out of range):
 *              esack_loss()
 *     TIMEOUT  the RTO: esack_timeout() with snd_nxt near snd_una
 *     CANCEL   an ECN echo, not a loss: esack_cancel()
 *     UNDO     esack_undo()
 *     ACK      snd_una moves (or not): esack_ack()
 *     PURE     esack_pct() and esack_target() on any arguments
 *
 * After every operation the invariants of tests/unit/esack_check.h hold,
 * and each returned ssthresh is one the rules allow.
 */
#include "tests/fuzz/fuzz.h"
#include "tcp_esack/esack_core.c"
#include "tests/unit/esack_check.h"

struct run {
	struct esack_core c;
	u32 una;
	u32 losses;
};

/* The next window of an event: the span of windows of data, or none. */
static void check_window(const struct esack_core *c, u32 wnd)
{
	u64 bytes = (u64)c->span * wnd * c->mss;

	FUZZ_CHECK(c->cur.unbounded == !c->span && !c->cur.past_rp);
	if (!c->cur.unbounded)
		FUZZ_CHECK(c->cur.next_end - c->cur.rp ==
			   (bytes > ESACK_MAX_SPAN_BYTES ?
			    ESACK_MAX_SPAN_BYTES : bytes));
}

static void op_loss(struct fuzz_in *in, struct run *x)
{
	struct esack_core *c = &x->c;
	struct esack_event ev;
	struct esack_params p;
	struct esack_win was = c->cur;
	bool even;
	u32 w;

	x->una = fuzz_near(in, x->una);
	ev.una = x->una;
	ev.nxt = fuzz_near(in, x->una);
	ev.cwnd = fuzz_len(in, 0);
	ev.reno = fuzz_len(in, 0);
	ev.mss = fuzz_u16(in);
	p.first_pct = fuzz_u32(in);
	p.span = fuzz_u32(in);
	even = esack_even(c, ev.una);
	w = esack_loss(c, &ev, &p);
	x->losses++;
	FUZZ_CHECK(w >= ESACK_MIN_WND);
	FUZZ_CHECK(c->cur.last == esack_rule_for(even, ev.cwnd, was.ref));
	FUZZ_CHECK(c->cur.secwnd == even && c->cur.ref == was.ref);
	FUZZ_CHECK(c->can_undo && !memcmp(&c->saved, &was, sizeof(was)));
	FUZZ_CHECK(c->reno >= ESACK_MIN_WND && c->mss == ev.mss);
	FUZZ_CHECK(c->span <= ESACK_SPAN_MAX && c->cur.rp == ev.nxt);
	/* A1 keeps cwnd; the others never raise it above cwnd or ssthresh. */
	if (c->cur.last == ESACK_A1)
		FUZZ_CHECK(w == (ev.cwnd > 2 ? ev.cwnd : 2));
	else if (ev.cwnd >= ESACK_MIN_WND)
		FUZZ_CHECK(w <= ev.cwnd);
	check_window(c, w);
}

static void op_timeout(struct fuzz_in *in, struct run *x)
{
	struct esack_core *c = &x->c;
	u8 last = c->cur.last;
	u32 nxt = fuzz_near(in, x->una), w = esack_timeout(c, nxt);

	if (last == ESACK_NONE) {
		FUZZ_CHECK(!w && c->cur.last == ESACK_NONE);
		return;
	}
	FUZZ_CHECK(w == c->reno && c->cur.ref == c->reno);
	FUZZ_CHECK(c->cur.last == (esack_is_b(last) ? ESACK_B3 : ESACK_A3));
	FUZZ_CHECK(c->cur.rp == nxt);
	check_window(c, w);
}

static void revert(struct run *x, bool ecn)
{
	struct esack_core *c = &x->c;
	struct esack_win saved = c->saved;
	bool could = c->can_undo;
	u32 ecns = c->ecn, undone = c->undone, w;

	if (ecn) {
		w = esack_cancel(c);
		FUZZ_CHECK(w == (could ? c->reno : 0));
	} else {
		esack_undo(c);
	}
	FUZZ_CHECK(!c->can_undo);
	FUZZ_CHECK(c->ecn - ecns == (ecn && could) &&
		   c->undone - undone == (!ecn && could));
	if (could)
		FUZZ_CHECK(!memcmp(&c->cur, &saved, sizeof(saved)));
}

static void op_cancel(struct fuzz_in *in, struct run *x)
{
	(void)in;
	revert(x, true);
}

static void op_undo(struct fuzz_in *in, struct run *x)
{
	(void)in;
	revert(x, false);
}

static void op_ack(struct fuzz_in *in, struct run *x)
{
	struct esack_core *c = &x->c;
	struct esack_win was = c->cur;

	x->una = fuzz_near(in, x->una);
	esack_ack(c, x->una);
	FUZZ_CHECK(c->cur.last == was.last && c->cur.rp == was.rp &&
		   c->cur.next_end == was.next_end && c->cur.ref == was.ref);
	FUZZ_CHECK(c->cur.past_rp >= was.past_rp &&
		   c->cur.secwnd >= was.secwnd);
	/* Past the end of a bounded next window, a loss is odd again. */
	if (was.last != ESACK_NONE && c->cur.past_rp && !c->cur.unbounded &&
	    !sat_before(x->una, c->cur.next_end))
		FUZZ_CHECK(c->cur.secwnd == 1);
}

static void op_pure(struct fuzz_in *in, struct run *x)
{
	u32 v = fuzz_u32(in), pct = fuzz_u32(in), ref = fuzz_u32(in);
	u32 r = esack_pct(v, pct);
	u8 rule = ESACK_A1 + fuzz_pick(in, ESACK_B3);
	u32 w = esack_target(rule, v, ref, pct);

	FUZZ_CHECK(r <= v);
	FUZZ_CHECK(r == (u32)((u64)v * (pct > 100 ? 100 : pct) / 100));
	(void)x;
	FUZZ_CHECK(w >= ESACK_MIN_WND);
}

static void (*const ops[])(struct fuzz_in *in, struct run *x) = {
	op_loss, op_timeout, op_cancel, op_undo, op_ack, op_pure,
};

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct fuzz_in in = fuzz_start(data, size);
	struct run x = { 0 };

	esack_core_init(&x.c, fuzz_u32(&in));
	x.una = fuzz_u32(&in);
	while (fuzz_more(&in)) {
		ops[fuzz_pick(&in, FUZZ_COUNT(ops))](&in, &x);
		FUZZ_CHECK(esack_sane(&x.c, x.losses));
		FUZZ_CHECK(esack_diag_state(&x.c) ==
			   x.c.cur.secwnd + 10 * (x.c.count[ESACK_B2] < 6553 ?
						  x.c.count[ESACK_B2] : 6553));
	}
	return 0;
}
