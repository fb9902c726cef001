/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ESACK's congestion-control hooks, shared by the module (esack_cong.c)
 * and the BPF struct_ops version (esack.bpf.c): how Linux's hooks map
 * onto the rules of the core (esack_core.c).
 *
 *   ssthresh()   called when fast recovery starts (tcp_init_cwnd_reduction)
 *                and when an RTO enters Loss (tcp_enter_loss).  Returns
 *                the rule's window: PRR then takes cwnd there by the end
 *                of recovery (tcp_end_cwnd_reduction), so returning X
 *                makes the post-recovery cwnd X.
 *   cwnd_event(CA_EVENT_LOSS)
 *                follows ssthresh() only in tcp_enter_loss: the event is
 *                an RTO (A3/B3), ssthresh becomes Reno's.
 *   set_state()  Loss entered from our own Recovery without a new
 *                ssthresh() call: an RTO during recovery, also A3/B3 --
 *                unless tcp_simple_retransmit() (PMTU) entered it.
 *                CWR right after ssthresh() on an ACK with ECE: explicit
 *                congestion, not a loss; Reno's response, no ESACK event.
 *                (Other CWRs are losses: tail-loss-probe repairs, local
 *                qdisc drops.)
 *   undo_cwnd()  the stack proved the loss spurious: forget the event.
 *   in_ack_event()  snd_una passing the recovery point / next window.
 *   cong_avoid   Reno's: slow start below ssthresh, +1 segment per RTT.
 *
 * The includer defines, before including this file, what the two differ
 * in:
 *   esack_params(p)        the tunables (module parameters; constants in
 *                          BPF);
 *   esack_edit(core, buf)  the core state a rule changes: @core itself in
 *                          the module; in BPF a copy in @buf on the stack,
 *                          since the verifier refuses a variable index
 *                          (count[rule]) into the socket;
 *   esack_commit(sk, core, c)  after esack_edit()'s @c was changed: copy
 *                          it back (BPF) and report;
 *   esack_report(sk, core) the counters changed: nothing in the module
 *                          (get_info reads them); BPF, whose get_info 6.1
 *                          refuses, stores them for userspace.
 * and the kernel's helpers the hooks call (tcp_sk, inet_csk, inet_csk_ca,
 * tcp_snd_cwnd, tcp_packets_in_flight, tcp_reno_ssthresh,
 * tcp_reno_undo_cwnd).
 */
#ifndef SATNET_ESACK_HOOKS_H
#define SATNET_ESACK_HOOKS_H

/* Per-socket state, in icsk_ca_priv. */
struct esack {
	struct esack_core core;
	u8 pending;		/* ESACK_PEND_*: set by ssthresh()/LOSS */
	u8 recovering;		/* this Recovery/CWR state is an ESACK event */
	u8 ece;			/* the ACK being processed echoed CE */
};

enum {
	ESACK_PEND_NONE,
	ESACK_PEND_LOSS,	/* ssthresh() classified a new event */
	ESACK_PEND_RTO,		/* ... and CA_EVENT_LOSS made it an RTO */
};

static void esack_init(struct sock *sk)
{
	struct esack *ca = inet_csk_ca(sk);

	esack_core_init(&ca->core, tcp_sk(sk)->snd_ssthresh);
	ca->pending = ESACK_PEND_NONE;
	ca->recovering = 0;
	ca->ece = 0;
	esack_report(sk, &ca->core);
}

/* Fast recovery or RTO starts: classify the window, apply A1/A2/B1/B2. */
static u32 esack_ssthresh(struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct esack *ca = inet_csk_ca(sk);
	struct esack_core buf, *c = esack_edit(&ca->core, &buf);
	struct esack_params p;
	struct esack_event ev = {
		.una = tp->snd_una,
		.nxt = tp->snd_nxt,
		.cwnd = tcp_snd_cwnd(tp),
		.reno = tcp_reno_ssthresh(sk),
		.mss = tp->mss_cache,
	};
	u32 wnd;

	esack_params(&p);
	ca->pending = ESACK_PEND_LOSS;
	wnd = esack_loss(c, &ev, &p);
	esack_commit(sk, &ca->core, c);
	return wnd;
}

/* tcp_enter_loss: CA_EVENT_LOSS comes right after ssthresh(). */
static void esack_cwnd_event(struct sock *sk, enum tcp_ca_event event)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct esack *ca = inet_csk_ca(sk);
	struct esack_core buf, *c;
	u32 wnd;

	if (event != CA_EVENT_LOSS)
		return;
	c = esack_edit(&ca->core, &buf);
	wnd = esack_timeout(c, tp->snd_nxt);
	esack_commit(sk, &ca->core, c);
	if (wnd)
		tp->snd_ssthresh = wnd;
	ca->pending = ESACK_PEND_RTO;
}

/*
 * Loss without ssthresh() comes from tcp_enter_loss() inside a recovery,
 * or from tcp_simple_retransmit() (a PMTU drop: no congestion).  Only
 * the first runs from the retransmission timer, which clears
 * icsk_pending before it, and sets cwnd to in flight + 1 just before
 * set_state(); the second keeps cwnd and runs with the timer armed.
 */
static bool esack_timer_loss(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	return !inet_csk(sk)->icsk_pending &&
	       tcp_snd_cwnd(tp) == tcp_packets_in_flight(tp) + 1;
}

/* An RTO hit the recovery of an ESACK event: A3/B3 after all. */
static void esack_rto_in_recovery(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct esack *ca = inet_csk_ca(sk);
	struct esack_core buf, *c = esack_edit(&ca->core, &buf);
	u32 wnd = esack_timeout(c, tp->snd_nxt);

	esack_commit(sk, &ca->core, c);
	if (wnd)
		tp->snd_ssthresh = wnd;
}

/* CWR right after ssthresh() on an ACK with ECE: Reno's answer. */
static void esack_ecn(struct sock *sk)
{
	struct esack *ca = inet_csk_ca(sk);
	struct esack_core buf, *c = esack_edit(&ca->core, &buf);
	u32 wnd = esack_cancel(c);

	esack_commit(sk, &ca->core, c);
	if (wnd)
		tcp_sk(sk)->snd_ssthresh = wnd;
}

/*
 * Called before icsk_ca_state takes @new_state.  After ssthresh():
 * Recovery is fast recovery; CWR is a loss repaired by a tail loss probe
 * (tcp_process_tlp_ack), a local qdisc drop, or ECN when this ACK has
 * ECE.  Loss from an ESACK event's Recovery/CWR without a new ssthresh()
 * is an RTO during that recovery, unless a PMTU drop caused it.
 */
static void esack_set_state(struct sock *sk, u8 new_state)
{
	struct esack *ca = inet_csk_ca(sk);
	u8 old_state = inet_csk(sk)->icsk_ca_state;
	bool event = ca->pending == ESACK_PEND_LOSS;

	switch (new_state) {
	case TCP_CA_CWR:
		if (event && ca->ece) {
			esack_ecn(sk);
			event = false;
		}
		break;
	case TCP_CA_Loss:
		if (ca->pending == ESACK_PEND_NONE && ca->recovering &&
		    (old_state == TCP_CA_Recovery || old_state == TCP_CA_CWR) &&
		    esack_timer_loss(sk))
			esack_rto_in_recovery(sk);
		break;
	}
	/* an event's reduction lasts through CWR -> Recovery */
	ca->recovering = (event || ca->recovering) &&
			 (new_state == TCP_CA_Recovery || new_state == TCP_CA_CWR);
	ca->pending = ESACK_PEND_NONE;
}

static u32 esack_undo_cwnd(struct sock *sk)
{
	struct esack *ca = inet_csk_ca(sk);
	struct esack_core buf, *c = esack_edit(&ca->core, &buf);

	esack_undo(c);
	esack_commit(sk, &ca->core, c);
	return tcp_reno_undo_cwnd(sk);
}

/* Every ACK, before loss detection: snd_una and the ECE flag. */
static void esack_in_ack_event(struct sock *sk, u32 flags)
{
	struct esack *ca = inet_csk_ca(sk);
	u8 secwnd = ca->core.cur.secwnd;

	ca->ece = !!(flags & CA_ACK_ECE);
	esack_ack(&ca->core, tcp_sk(sk)->snd_una);
	if (ca->core.cur.secwnd != secwnd)
		esack_report(sk, &ca->core);
}

#endif /* SATNET_ESACK_HOOKS_H */
