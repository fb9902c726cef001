// SPDX-License-Identifier: GPL-2.0
/*
 * TCP ESACK: Enhanced Selective Acknowledgements.
 *
 * A.M. Abdelrahman, M.S. Abdalla, B.M. Ali, V. Prakash, R.K.Z. Sabudin,
 * "Improving the Performance of TCP in LEO Satellite Environment"
 * (seed 002).  ESACK assumes that losses in one window are corruption
 * and that losses in two consecutive windows are congestion (section
 * "Description of Enhanced Selective Acknowledgements"):
 *
 *   odd window   A1 cwnd < ssthresh: keep cwnd, then +1 segment per RTT
 *                A2 cwnd >= ssthresh: cwnd = 60 % of cwnd (first_factor)
 *                A3 RTO: the standard timeout
 *   even window  B1 cwnd < ssthresh: cwnd = 50 % of cwnd
 *                B2 cwnd >= ssthresh: cwnd = 50 % of the original ssthresh
 *                B3 RTO: the standard timeout
 *
 * Loss recovery itself is Linux's SACK recovery; the rules live in the
 * plain-C core (esack_core.c), this file maps them onto the hooks:
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
 * The seed's SSThresh, which A1/A2 and B1/B2 compare cwnd against and B2
 * halves, is kept apart from tp->snd_ssthresh (which after each event
 * holds the post-recovery cwnd): it starts at the connection's initial
 * ssthresh (e.g. a route's "ssthresh 70") and changes only on timeouts.
 * docs/esack.md has the details and the deviations from the seed.
 */

#include <linux/module.h>
#include <linux/inet_diag.h>
#include <net/tcp.h>
#include <satnet/esack_core.h>
#include <satnet/cc_info.h>

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

static int first_factor = ESACK_FIRST_DEFAULT;
static int window_span = ESACK_SPAN_DEFAULT;

static int esack_param_set(const char *val, const struct kernel_param *kp,
			   bool (*valid)(long))
{
	int v, err;

	err = kstrtoint(val, 0, &v);
	if (err)
		return err;
	if (!valid(v))
		return -EINVAL;
	WRITE_ONCE(*(int *)kp->arg, v);
	return 0;
}

static int esack_set_first(const char *val, const struct kernel_param *kp)
{
	return esack_param_set(val, kp, esack_first_valid);
}

static int esack_set_span(const char *val, const struct kernel_param *kp)
{
	return esack_param_set(val, kp, esack_span_valid);
}

static const struct kernel_param_ops esack_first_ops = {
	.set = esack_set_first,
	.get = param_get_int,
};

static const struct kernel_param_ops esack_span_ops = {
	.set = esack_set_span,
	.get = param_get_int,
};

module_param_cb(first_factor, &esack_first_ops, &first_factor, 0644);
MODULE_PARM_DESC(first_factor,
		 "rule A2: cwnd kept after an odd-window loss with cwnd >= ssthresh, percent (50-100, default 60)");
module_param_cb(window_span, &esack_span_ops, &window_span, 0644);
MODULE_PARM_DESC(window_span,
		 "next window: windows of data after a loss event's recovery point in which a loss is even (0 = no limit, the seed's alternation, default; 1-64)");

static void esack_params(struct esack_params *p)
{
	p->first_pct = READ_ONCE(first_factor);
	p->span = READ_ONCE(window_span);
}

static void esack_init(struct sock *sk)
{
	struct esack *ca = inet_csk_ca(sk);

	esack_core_init(&ca->core, tcp_sk(sk)->snd_ssthresh);
	ca->pending = ESACK_PEND_NONE;
	ca->recovering = 0;
	ca->ece = 0;
}

/* Fast recovery or RTO starts: classify the window, apply A1/A2/B1/B2. */
static u32 esack_ssthresh(struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct esack *ca = inet_csk_ca(sk);
	struct esack_params p;
	struct esack_event ev = {
		.una = tp->snd_una,
		.nxt = tp->snd_nxt,
		.cwnd = tcp_snd_cwnd(tp),
		.reno = tcp_reno_ssthresh(sk),
		.mss = tp->mss_cache,
	};

	esack_params(&p);
	ca->pending = ESACK_PEND_LOSS;
	return esack_loss(&ca->core, &ev, &p);
}

/* tcp_enter_loss: CA_EVENT_LOSS comes right after ssthresh(). */
static void esack_cwnd_event(struct sock *sk, enum tcp_ca_event event)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct esack *ca = inet_csk_ca(sk);
	u32 wnd;

	if (event != CA_EVENT_LOSS)
		return;
	wnd = esack_timeout(&ca->core, tp->snd_nxt);
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
	u32 wnd = esack_timeout(&ca->core, tp->snd_nxt);

	if (wnd)
		tp->snd_ssthresh = wnd;
}

/* CWR right after ssthresh() on an ACK with ECE: Reno's answer. */
static void esack_ecn(struct sock *sk)
{
	struct esack *ca = inet_csk_ca(sk);
	u32 wnd = esack_cancel(&ca->core);

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

	esack_undo(&ca->core);
	return tcp_reno_undo_cwnd(sk);
}

/* Every ACK, before loss detection: snd_una and the ECE flag. */
static void esack_in_ack_event(struct sock *sk, u32 flags)
{
	struct esack *ca = inet_csk_ca(sk);

	ca->ece = !!(flags & CA_ACK_ECE);
	esack_ack(&ca->core, tcp_sk(sk)->snd_una);
}

/*
 * ss -ti shows it as "dctcp:(ce_state:S,alpha:A1,ab_ecn:A2,ab_tot:B1)"
 * with S = SecWnd + 10 * B2 (docs/esack.md).
 */
static size_t esack_get_info(struct sock *sk, u32 ext, int *attr,
			     union tcp_cc_info *info)
{
	const struct esack_core *c = &((struct esack *)inet_csk_ca(sk))->core;

	return satnet_cc_info(ext, attr, info, esack_diag_state(c),
			      c->count[ESACK_A1], c->count[ESACK_A2],
			      c->count[ESACK_B1]);
}

static struct tcp_congestion_ops tcp_esack __read_mostly = {
	.init		= esack_init,
	.ssthresh	= esack_ssthresh,
	.cong_avoid	= tcp_reno_cong_avoid,
	.undo_cwnd	= esack_undo_cwnd,
	.set_state	= esack_set_state,
	.cwnd_event	= esack_cwnd_event,
	.in_ack_event	= esack_in_ack_event,
	.get_info	= esack_get_info,

	.owner		= THIS_MODULE,
	.name		= "esack",
};

static int __init esack_register(void)
{
	BUILD_BUG_ON(sizeof(struct esack) > ICSK_CA_PRIV_SIZE);
	return tcp_register_congestion_control(&tcp_esack);
}

static void __exit esack_unregister(void)
{
	tcp_unregister_congestion_control(&tcp_esack);
}

module_init(esack_register);
module_exit(esack_unregister);

MODULE_AUTHOR("satnet project");
MODULE_LICENSE("GPL");
MODULE_VERSION(SATNET_VERSION);
MODULE_DESCRIPTION("TCP ESACK: two-consecutive-window loss response (LEO satellites)");
