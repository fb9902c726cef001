// SPDX-License-Identifier: GPL-2.0
/*
 * ESACK core, plain C (see include/satnet/esack_core.h).
 *
 * Seed 002, "Description of Enhanced Selective Acknowledgements": the
 * sender keeps a SecWnd flag, 1 at the start, reset to 0 by a loss in an
 * odd (first) window and set to 1 by a loss in the even (second) window;
 * odd-window losses get rules A1-A3, even-window losses B1-B3.  Window
 * lengths are in segments; sequence numbers are bytes and wrap.
 */
#if defined(__bpf__)
#define memset __builtin_memset	/* no libc: clang expands it inline */
#elif defined(__KERNEL__)
#include <linux/string.h>
#else
#include <string.h>
#endif
#include <satnet/esack_core.h>

/* ---- parameters ---- */

bool esack_first_valid(long pct)
{
	return pct >= ESACK_FIRST_MIN && pct <= ESACK_FIRST_MAX;
}

bool esack_span_valid(long span)
{
	return span >= 0 && span <= ESACK_SPAN_MAX;
}

/* floor(x * pct / 100) for pct <= 100, in u32 without overflow. */
u32 esack_pct(u32 x, u32 pct)
{
	if (pct > 100)
		pct = 100;
	return (x / 100) * pct + (x % 100) * pct / 100;
}

static u32 esack_max(u32 a, u32 b)
{
	return a > b ? a : b;
}

/* ---- window classification (seed 002: "two consecutive windows") ---- */

void esack_core_init(struct esack_core *c, u32 ssthresh)
{
	memset(c, 0, sizeof(*c));
	c->cur.ref = ssthresh;
	c->cur.secwnd = 1;	/* "Initially the secwnd is set ... to 1" */
	c->cur.last = ESACK_NONE;
}

/*
 * Is a loss event starting at @una in an even (second) window?  Only
 * when it falls in the next window of an odd-window event; a loss in the
 * window of the last event itself (before its recovery point) keeps
 * that event's parity.
 */
bool esack_even(const struct esack_core *c, u32 una)
{
	const struct esack_win *w = &c->cur;

	if (w->last == ESACK_NONE)
		return false;
	if (!w->past_rp && sat_before(una, w->rp))
		return esack_is_b(w->last);
	if (w->secwnd)
		return false;
	return w->unbounded || sat_before(una, w->next_end);
}

/* Rules A1/A2 (odd) and B1/B2 (even); @ref is the seed's SSThresh. */
enum esack_rule esack_rule_for(bool even, u32 cwnd, u32 ref)
{
	if (even)
		return cwnd < ref ? ESACK_B1 : ESACK_B2;
	return cwnd < ref ? ESACK_A1 : ESACK_A2;
}

/* The cwnd a rule leaves after recovery, segments (never below 2). */
u32 esack_target(enum esack_rule rule, u32 cwnd, u32 ref, u32 first_pct)
{
	u32 w;

	switch (rule) {
	case ESACK_A1:		/* "continues with the same cwnd size" */
		w = cwnd;
		break;
	case ESACK_A2:		/* "reduces the current cwnd to 60%" */
		w = esack_pct(cwnd, first_pct);
		break;
	case ESACK_B2:		/* "50% of the original value of the ssthresh" */
		w = esack_pct(ref, ESACK_SECOND_PCT);
		break;
	default:		/* B1: "the cwnd to 50% of its current value" */
		w = esack_pct(cwnd, ESACK_SECOND_PCT);
		break;
	}
	return esack_max(w, ESACK_MIN_WND);
}

/* The next window of the event whose recovery point is @nxt. */
static void esack_set_window(struct esack_core *c, u32 nxt, u32 wnd)
{
	u64 bytes = (u64)c->span * wnd * c->mss;

	if (bytes > ESACK_MAX_SPAN_BYTES)
		bytes = ESACK_MAX_SPAN_BYTES;
	c->cur.rp = nxt;
	c->cur.next_end = nxt + (u32)bytes;
	c->cur.past_rp = 0;
	c->cur.unbounded = c->span == 0;
}

/* ---- events ---- */

/*
 * Take back one event counted as @rule.  @rule is always a rule, but the
 * BPF verifier (tcp_esack/esack.bpf.c) must see the index bounded.
 */
static void esack_uncount(struct esack_core *c, u8 rule)
{
	if (rule < ESACK_RULES && c->count[rule])
		c->count[rule]--;
}

/*
 * A loss event detected by fast retransmit (rules A1, A2, B1, B2).
 * Returns the ssthresh, i.e. the cwnd after recovery, in segments.  An
 * RTO calls esack_timeout() right after this to turn it into A3/B3.
 */
u32 esack_loss(struct esack_core *c, const struct esack_event *ev,
	       const struct esack_params *p)
{
	bool even = esack_even(c, ev->una);
	enum esack_rule rule = esack_rule_for(even, ev->cwnd, c->cur.ref);
	u32 first = p->first_pct;
	u32 wnd;

	if (!esack_first_valid(first))
		first = ESACK_FIRST_DEFAULT;
	wnd = esack_target(rule, ev->cwnd, c->cur.ref, first);

	c->saved = c->cur;
	c->can_undo = 1;
	c->reno = esack_max(ev->reno, ESACK_MIN_WND);
	c->mss = ev->mss;
	c->span = esack_span_valid(p->span) ? p->span : ESACK_SPAN_DEFAULT;
	/* "reset and set by losses in odd and even windows, respectively" */
	c->cur.secwnd = even;
	c->cur.last = rule;
	esack_set_window(c, ev->nxt, wnd);
	c->count[rule]++;
	return wnd;
}

/*
 * The retransmission timer expired (rules A3, B3): the last event, or
 * the recovery it started, becomes a standard timeout.  Its parity
 * stays; ssthresh and the seed's SSThresh take Reno's value.  Returns
 * that ssthresh, or 0 when there is no event to convert.
 */
u32 esack_timeout(struct esack_core *c, u32 nxt)
{
	u8 last = c->cur.last;
	u8 rule = esack_is_b(last) ? ESACK_B3 : ESACK_A3;

	if (last == ESACK_NONE)
		return 0;
	if (last != rule) {
		esack_uncount(c, last);
		c->count[rule]++;
		c->cur.last = rule;
	}
	c->cur.ref = c->reno;
	esack_set_window(c, nxt, c->reno);
	return c->reno;
}

/* Forget the last event and restore the state before it. */
static bool esack_revert(struct esack_core *c)
{
	u8 last = c->cur.last;

	if (!c->can_undo)
		return false;
	esack_uncount(c, last);
	c->cur = c->saved;
	c->can_undo = 0;
	return true;
}

/*
 * The reduction just requested answers an ECN echo, not a loss:
 * congestion is explicit, so it gets Reno's response and is no ESACK
 * event.  Returns Reno's ssthresh, or 0 with nothing to cancel.
 */
u32 esack_cancel(struct esack_core *c)
{
	if (!esack_revert(c))
		return 0;
	c->ecn++;
	return c->reno;
}

/* The stack undid the last reduction: the loss was spurious. */
void esack_undo(struct esack_core *c)
{
	if (esack_revert(c))
		c->undone++;
}

/*
 * Every ACK: once snd_una reaches the recovery point no loss of the
 * event's own window is left, and once it passes the end of the next
 * window a new loss starts over at the odd window (SecWnd back to 1).
 */
void esack_ack(struct esack_core *c, u32 una)
{
	struct esack_win *w = &c->cur;

	if (w->last == ESACK_NONE)
		return;
	if (!w->past_rp) {
		if (sat_before(una, w->rp))
			return;
		w->past_rp = 1;
	}
	if (!w->secwnd && !w->unbounded && !sat_before(una, w->next_end))
		w->secwnd = 1;
}

/* ss's dctcp ce_state field: SecWnd + 10 * B2 count (docs/esack.md). */
u16 esack_diag_state(const struct esack_core *c)
{
	u32 b2 = c->count[ESACK_B2];

	if (b2 > ESACK_DIAG_B2_MAX)
		b2 = ESACK_DIAG_B2_MAX;
	return (u16)(c->cur.secwnd + 10 * b2);
}
