/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ESACK core: the window classification and the A1-A3 / B1-B3 responses
 * of seed 002 (Abdelrahman et al., "Improving the Performance of TCP in
 * LEO Satellite Environment", section "Description of Enhanced Selective
 * Acknowledgements"), in segments.  Plain C with no kernel dependency:
 * tcp_esack links tcp_esack/esack_core.c, and the userspace unit test
 * includes the same file.  The caller serialises calls (the socket lock).
 *
 * Consecutive windows (docs/esack.md):
 *   - a loss event starts at snd_una when it is detected (the first
 *     unacknowledged byte is the first hole) and its recovery point is
 *     snd_nxt at that moment (Linux's high_seq);
 *   - the seed counts windows with losses: the actions "will be repeated
 *     alternatively in all windows with losses", A in odd ones, B in
 *     even ones, whatever lies between them.  That is the default
 *     (window_span 0): the loss after an odd-window event is even, the
 *     loss after an even-window event is odd again;
 *   - window_span N > 0 bounds the "next window" of an event to the data
 *     that follows its recovery point, [rp, rp + N * W * mss), W being
 *     the cwnd the response leaves behind (the ssthresh it returns): an
 *     odd event's loss after that starts over at the odd window;
 *   - a loss event that starts before the previous recovery point is in
 *     the previous event's window and keeps its parity.
 */
#ifndef SATNET_ESACK_CORE_H
#define SATNET_ESACK_CORE_H

#include <satnet/types.h>
#include <satnet/seq.h>

/* A2's reduction, percent of cwnd (seed 002, rule A2: 60 %). */
#define ESACK_FIRST_DEFAULT	60
#define ESACK_FIRST_MIN		50	/* Reno's halving */
#define ESACK_FIRST_MAX		100	/* no reduction */
/* B1 and B2 halve (seed 002, rules B1, B2). */
#define ESACK_SECOND_PCT	50
/* Next-window length in windows of data; 0 = unbounded (the seed's). */
#define ESACK_SPAN_DEFAULT	0
#define ESACK_SPAN_MAX		64
/* Smallest ssthresh any rule returns, as tcp_reno_ssthresh(). */
#define ESACK_MIN_WND		2U
/* Longest next window in bytes: before() needs distances below 2^31. */
#define ESACK_MAX_SPAN_BYTES	0x40000000U
/* B2 count saturates here in the ss report (u16 field, see diag). */
#define ESACK_DIAG_B2_MAX	6553U

enum esack_rule {
	ESACK_NONE,	/* no loss event yet */
	ESACK_A1,	/* odd window, cwnd < ssthresh: keep cwnd */
	ESACK_A2,	/* odd window, cwnd >= ssthresh: first_pct of cwnd */
	ESACK_A3,	/* odd window, RTO: the standard timeout */
	ESACK_B1,	/* even window, cwnd < ssthresh: half of cwnd */
	ESACK_B2,	/* even window, cwnd >= ssthresh: half the orig. ssthresh */
	ESACK_B3,	/* even window, RTO: the standard timeout */
	ESACK_RULES
};

/* Tunables, read once per event. */
struct esack_params {
	u32 first_pct;	/* A2 factor, percent */
	u32 span;	/* next window length, windows of data; 0 = no end */
};

/* What the congestion hooks know when a loss event is detected. */
struct esack_event {
	u32 una;	/* snd_una: where the event starts */
	u32 nxt;	/* snd_nxt: its recovery point */
	u32 cwnd;	/* segments, before any reduction */
	u32 reno;	/* what Reno's ssthresh() returns now, segments */
	u32 mss;	/* bytes */
};

/* The part of the state a loss event changes; an undo restores it. */
struct esack_win {
	u32 rp;		/* recovery point of the last event (seq) */
	u32 next_end;	/* end of its next window (seq), if bounded */
	u32 ref;	/* the seed's SSThresh, segments */
	u8 secwnd;	/* the seed's SecWnd: 1 = a loss now is odd */
	u8 last;	/* enum esack_rule of the last event */
	u8 past_rp;	/* snd_una has reached rp: no same-window loss left */
	u8 unbounded;	/* the next window has no end (span 0) */
};

struct esack_core {
	struct esack_win cur;
	struct esack_win saved;	/* cur before the last event */
	u32 reno;		/* Reno's ssthresh of the last event, segs */
	u32 mss;		/* mss of the last event, bytes */
	u32 span;		/* span of the last event, windows */
	u32 count[ESACK_RULES];	/* events by final response */
	u32 undone;		/* events undone (spurious) */
	u32 ecn;		/* reductions for ECN echoes, not losses */
	u8 can_undo;		/* saved holds the state before cur.last */
};

static inline bool esack_is_b(u8 rule)
{
	return rule >= ESACK_B1 && rule <= ESACK_B3;
}

bool esack_first_valid(long pct);
bool esack_span_valid(long span);
u32 esack_pct(u32 x, u32 pct);

void esack_core_init(struct esack_core *c, u32 ssthresh);
bool esack_even(const struct esack_core *c, u32 una);
enum esack_rule esack_rule_for(bool even, u32 cwnd, u32 ref);
u32 esack_target(enum esack_rule rule, u32 cwnd, u32 ref, u32 first_pct);

u32 esack_loss(struct esack_core *c, const struct esack_event *ev,
	       const struct esack_params *p);
u32 esack_timeout(struct esack_core *c, u32 nxt);
u32 esack_cancel(struct esack_core *c);
void esack_undo(struct esack_core *c);
void esack_ack(struct esack_core *c, u32 una);

u16 esack_diag_state(const struct esack_core *c);

#endif
