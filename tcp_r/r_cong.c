// SPDX-License-Identifier: GPL-2.0
/*
 * TCP R: TCP-R (Robust TCP), congestion control "r".
 *
 * A. Sathiaseelan, "TCP-R with EPDN: Handling Out of Order Packets in
 * Error Prone Satellite Networks" (seed 000) §2.2 and §2.2.1.
 *
 * The receiver is RN-TCP's (rn_host.ko, net.rn.receiver=1) behind EPDN
 * gateways in mode v3, which report congestion drops only: the
 * drop-negative bit on a dupACK then means "reordered or corrupted".  The
 * bit is read by tcp_rn.ko's hook into a latch at the start of our
 * private area (include/satnet/rn_latch_api.h).  The rules are in
 * r_core.c; this file maps them onto the stack:
 *
 * dupthresh.  Fast retransmit after three dupACKs, whatever the path:
 * tp->reordering is held at 3 for classic loss detection, and with RACK
 * (net.ipv4.tcp_recovery & 1) the hole is marked lost at the third dupACK
 * by tcp_rn's RACK trigger, as RN-TCP does at its dupthresh; before it,
 * while every dupACK had the bit, RACK is held back.  With RACK the
 * stack keeps its own estimate in tp->reordering: once it has seen
 * reordering, cwnd grows on SACKed data too (tcp_may_raise_cwnd()), and
 * on a path that delays every other segment most data is SACKed first.
 *
 * Modified fast recovery.  The stack enters Recovery with the ssthresh
 * this module returns and reduces cwnd toward it by PRR (RFC 6937).  When
 * the recovery begins on the modified path, set_state() replaces the
 * ssthresh by the cwnd before the loss, and every ACK of the recovery
 * raises it as Reno raises cwnd outside one (r_grow()).  PRR is given
 * the headroom to set cwnd to it on every ACK (r_follow_window()), and
 * the end of recovery sets cwnd to it.  Without that the window would
 * stand still for the whole recovery, or trail PRR's one segment more
 * than was delivered per ACK, and a path that corrupts a segment every
 * few RTTs is in recovery most of the time.  The stack leaves Recovery
 * (set_state) before it sets cwnd to ssthresh, so the ssthresh before
 * the loss is given back only after that, on CA_EVENT_COMPLETE_CWR.  The
 * stack queued an ECN CWR when the recovery began; a modified recovery
 * reduces nothing, so the CWR is withdrawn.  An ECE or a dupACK without
 * the bit during the recovery halves the window grown so far (at least
 * the old cwnd) and queues the CWR, and PRR carries out the standard
 * reduction from then on, its counts started over.
 *
 * Lost retransmissions.  RACK marks a retransmission lost when a segment
 * sent after it is delivered, inside the same recovery: no second cwnd
 * reduction follows a standard recovery.  In a modified one the hole may
 * go out once ("retransmitted only once in a RTT"); when it goes out a
 * second time, or the retransmission timer fires, the verdict is
 * withdrawn and ssthresh becomes half the cwnd before the recovery, as
 * in a standard one.
 *
 * Tail loss probes.  A probe goes out only in Open or CWR.  In Open no
 * dupACK is outstanding, so the receiver has marked nothing for the hole
 * the probe repairs, and the repair's halving (tcp_process_tlp_ack) is
 * the seed's drop path; in CWR an ECE is recent.  ssthresh() stays Reno's.
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/inet_diag.h>
#include <net/tcp.h>

#include <satnet/compat.h>
#include <satnet/rn_latch_api.h>
#include <satnet/r_core.h>
#include <satnet/grow.h>
#include <satnet/cc_info.h>

static unsigned int ece_rtts __read_mostly = R_ECE_RTTS;
module_param(ece_rtts, uint, 0644);
MODULE_PARM_DESC(ece_rtts,
		 "An ECE is recent for this many srtt: no modified fast recovery meanwhile (default 1, seed 000 §2.2.1)");

static bool rack_steer __read_mostly = true;
module_param(rack_steer, bool, 0644);
MODULE_PARM_DESC(rack_steer,
		 "With RACK on, retransmit at the third dupACK (default 1; 0 leaves the timing to RACK)");

static unsigned int rtt0_ms __read_mostly;
module_param_cb(rtt0_ms, &rn_rtt0_ops, &rtt0_ms, 0644);
MODULE_PARM_DESC(rtt0_ms,
		 "Congestion avoidance compensated for the RTT as TCP Hybla's (rho^2/cwnd per segment, rho = min RTT / RTT0), with this RTT0 in ms, also in a modified recovery; slow start stays Reno's (0, the default: Reno's growth, the seed's; Hybla uses 25; at most 1000)");

struct r {
	struct rn_latch latch;	/* first: tcp_rn's hook fills it */
	struct r_sender core;
	u32 ssthresh_before;	/* snd_ssthresh when ssthresh() was asked */
	u32 giveback;		/* ssthresh to give back at COMPLETE_CWR */
	u32 delivered;		/* tp->delivered at the last ACK */
	u32 pre_grow;		/* ssthresh before this ACK's growth */
	u32 hole_sent;		/* low bits of the hole's last send time */
	u8 hole_sends;		/* its sends seen since the recovery began */
	u8 rack_steps;		/* RACK's reo_wnd_steps we replaced */
	u8 flags;		/* R_M_* */
};

#define R_M_STEPS		0x01	/* rack_steps holds a value to restore */
#define R_M_GIVE		0x02	/* giveback is due on this ACK */

static struct tcp_congestion_ops tcp_r;

static void r_params(struct r_params *p)
{
	p->ece_rtts = clamp_t(u32, READ_ONCE(ece_rtts), 1, R_ECE_RTTS_MAX);
}

static void r_init(struct sock *sk)
{
	struct r *ca = inet_csk_ca(sk);

	r_sender_init(&ca->core);
	ca->ssthresh_before = tcp_sk(sk)->snd_ssthresh;
	ca->giveback = 0;
	ca->delivered = 0;
	ca->pre_grow = 0;
	ca->hole_sent = 0;
	ca->hole_sends = 0;
	ca->rack_steps = 0;
	ca->flags = 0;
	rn_latch_open(sk);
}

static void r_release(struct sock *sk)
{
	rn_latch_close(sk);
}

/* Reno's growth, or with rtt0_ms Hybla's. */
static void r_cong_avoid(struct sock *sk, u32 ack, u32 acked)
{
	rn_grow_cwnd(sk, ack, acked,
		     sat_rho8(tcp_min_rtt(tcp_sk(sk)), READ_ONCE(rtt0_ms)));
}

/*
 * Reno's; set_state() overrides it for a modified recovery.  Also the
 * halving of a tail loss probe's repair and of an ECE (tcp_enter_cwr).
 */
static u32 r_ssthresh(struct sock *sk)
{
	struct r *ca = inet_csk_ca(sk);

	ca->ssthresh_before = tcp_sk(sk)->snd_ssthresh;
	return tcp_reno_ssthresh(sk);
}

static void r_rack_giveback(struct sock *sk)
{
	struct r *ca = inet_csk_ca(sk);

	if (!(ca->flags & R_M_STEPS))
		return;
	ca->flags &= ~R_M_STEPS;
	rn_rack_restore(sk, ca->rack_steps);
}

/* The ECN CWR flag goes out only with a reduction (RFC 3168 §6.1.2). */
static void r_ecn_cwr(struct sock *sk, bool reduced)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (!(tp->ecn_flags & TCP_ECN_OK))
		return;
	if (reduced)
		tp->ecn_flags |= TCP_ECN_QUEUE_CWR;
	else
		tp->ecn_flags &= ~TCP_ECN_QUEUE_CWR;
}

/*
 * Has the hole of the running modified recovery gone out twice since it
 * began?  Each send sets the segment's skb_mstamp_ns; the ACK that begins
 * the recovery sees the original transmission.
 */
static bool r_hole_resent(struct sock *sk)
{
	struct r *ca = inet_csk_ca(sk);
	const struct sk_buff *skb = tcp_rtx_queue_head(sk);
	u32 sent;

	if (!(ca->core.flags & R_F_MOD) || !skb ||
	    TCP_SKB_CB(skb)->seq != ca->core.last_seq)
		return false;
	sent = (u32)skb->skb_mstamp_ns;
	if (sent != ca->hole_sent && ca->hole_sends < U8_MAX) {
		ca->hole_sent = sent;
		ca->hole_sends++;
	}
	return ca->hole_sends > 2;
}

static void r_gather(struct sock *sk, u32 flags, struct r_ack *a)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct rn_latch l;

	rn_latch_read(sk, false, &l);
	*a = (struct r_ack){
		.snd_una = tp->snd_una,
		.srtt_ms = (tp->srtt_us >> 3) / USEC_PER_MSEC,
		.now_ms = tcp_time_stamp_ms(tp),
		.ece = !!(flags & CA_ACK_ECE),
		.dn_distrust = l.bogus >= RN_BOGUS_MAX,
		.resent = r_hole_resent(sk),
	};
	if ((l.flags & RN_L_VALID) && l.seq == a->snd_una) {
		a->dn_known = 1;
		a->dn_set = l.dn_set;
		a->dn_clear = l.dn_clear;
	}
}

/*
 * With RACK, the hole is lost at the third dupACK: RACK is fired there,
 * and held before it while every dupACK so far had the bit, so that the
 * modified path is never taken on fewer than three (RACK's timer would
 * otherwise mark the hole min_rtt/4 after the first).  A hole with an
 * unmarked dupACK is left to RACK: its early repair halves anyway.
 */
static void r_rack_steer(struct sock *sk, u8 state)
{
	struct r *ca = inet_csk_ca(sk);
	u32 sacked = tcp_sk(sk)->sacked_out;

	if (state >= TCP_CA_CWR || !sacked || !READ_ONCE(rack_steer))
		return;
	if (sacked < R_DUPTHRESH) {
		if (ca->core.verdict == R_PATH_MODIFIED)
			rn_rack_hold(sk);
		return;
	}
	ca->rack_steps = rn_rack_fire(sk);
	ca->flags |= R_M_STEPS;
}

/*
 * A modified recovery's window, in ssthresh, grows with what was delivered
 * since the last ACK (SACKed on this one, cumulatively ACKed on the last:
 * this hook runs in between).
 */
static void r_grow_window(struct sock *sk, u8 state)
{
	struct r *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	u32 acked = tp->delivered - ca->delivered;
	u32 rho8 = sat_rho8(tcp_min_rtt(tp), READ_ONCE(rtt0_ms));

	ca->delivered = tp->delivered;
	ca->pre_grow = tp->snd_ssthresh;
	if (!(ca->core.flags & R_F_MOD) || state != TCP_CA_Recovery ||
	    !tcp_is_cwnd_limited(sk))
		return;
	tp->snd_ssthresh = min(r_grow(&ca->core, tp->snd_ssthresh, acked, rho8),
			       tp->snd_cwnd_clamp);
}

/*
 * No reduction in a modified recovery: PRR (tcp_cwnd_reduction()) sends
 * up to ssthresh, the grown window, on this ACK rather than one segment
 * more than was delivered, so that cwnd is that window as it would be
 * outside a recovery.  The headroom is given only while no more than
 * ssthresh is in flight: nothing this ACK does adds to that, so PRR's
 * proportional reduction, which would spend the headroom, never runs.
 */
static void r_follow_window(struct sock *sk, u8 state)
{
	struct r *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	if (!(ca->core.flags & R_F_MOD) || state != TCP_CA_Recovery ||
	    tcp_packets_in_flight(tp) > tp->snd_ssthresh)
		return;
	tp->prr_delivered = max(tp->prr_delivered,
				tp->prr_out + tp->snd_ssthresh);
}

/*
 * The window a reduction halves: the cwnd before the recovery, or the
 * window a modified recovery has grown since, which ssthresh holds.
 */
static u32 r_window(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	return max(tp->prior_cwnd, tp->snd_ssthresh);
}

/* Runs after SACK processing and before loss detection of this ACK. */
static void r_in_ack_event(struct sock *sk, u32 flags)
{
	struct r *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	u8 state = inet_csk(sk)->icsk_ca_state;
	struct r_params p;
	struct r_ack a;

	r_rack_giveback(sk);
	ca->flags &= ~R_M_GIVE;
	r_params(&p);
	r_gather(sk, flags, &a);
	if (r_on_ack(&ca->core, &p, &a) == R_ACT_HALVE &&
	    state == TCP_CA_Recovery) {
		/* PRR's reduction starts here, without the headroom. */
		tp->snd_ssthresh = r_halve(r_window(sk));
		tp->prr_delivered = 0;
		tp->prr_out = 0;
		r_ecn_cwr(sk, true);
	}
	r_grow_window(sk, state);
	r_follow_window(sk, state);

	if (rn_is_rack(sk))
		r_rack_steer(sk, state);
	else
		tp->reordering = R_DUPTHRESH;
}

static void r_recovery_start(struct sock *sk)
{
	struct r *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	const struct sk_buff *head = tcp_rtx_queue_head(sk);
	struct r_ack a = {
		.snd_una = tp->snd_una,
		.now_ms = tcp_time_stamp_ms(tp),
	};

	/* From CWR the ECN reduction is already under way. */
	if (inet_csk(sk)->icsk_ca_state == TCP_CA_CWR)
		ca->core.verdict = R_PATH_ECE;
	if (!r_recovery_begins(&ca->core, &a, ca->ssthresh_before))
		return;
	tp->snd_ssthresh = max(tp->prior_cwnd, 2U);
	r_ecn_cwr(sk, false);
	ca->hole_sent = head ? (u32)head->skb_mstamp_ns : 0;
	ca->hole_sends = 1;
}

/*
 * A timeout takes its ssthresh now (tcp_enter_loss() asked none in
 * Recovery); any other end waits until the stack has set cwnd.
 */
static void r_recovery_stop(struct sock *sk, bool timeout)
{
	struct r *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	u32 ssthresh = r_recovery_ends(&ca->core, timeout, r_window(sk));

	if (!ssthresh)
		return;
	if (timeout) {
		tp->snd_ssthresh = min(tp->snd_ssthresh, ssthresh);
		return;
	}
	/*
	 * Undone (tcp_undo_cwnd_reduction() cleared undo_marker): the stack
	 * sets no cwnd, and after a partial undo sends no COMPLETE_CWR.
	 */
	if (!tp->undo_marker) {
		tp->snd_ssthresh = r_giveback(ssthresh, tp->snd_ssthresh, true);
		return;
	}
	/* cong_avoid() counts what the ACK that ends the recovery delivered. */
	tp->snd_ssthresh = ca->pre_grow;
	ca->giveback = ssthresh;
	ca->flags |= R_M_GIVE;
}

static void r_set_state(struct sock *sk, u8 new_state)
{
	struct r *ca = inet_csk_ca(sk);
	u8 old = inet_csk(sk)->icsk_ca_state;

	r_rack_giveback(sk);
	ca->flags &= ~R_M_GIVE;
	if (new_state == TCP_CA_Recovery && old != TCP_CA_Recovery)
		r_recovery_start(sk);
	else if (old == TCP_CA_Recovery && new_state != TCP_CA_Recovery)
		r_recovery_stop(sk, new_state == TCP_CA_Loss);
}

/* After tcp_end_cwnd_reduction() has set cwnd to the old cwnd. */
static void r_cwnd_event(struct sock *sk, enum tcp_ca_event ev)
{
	struct r *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	if (ev != CA_EVENT_COMPLETE_CWR || !(ca->flags & R_M_GIVE))
		return;
	ca->flags &= ~R_M_GIVE;
	tp->snd_ssthresh = r_giveback(ca->giveback, tp->snd_ssthresh,
				      !tp->undo_marker);
}

/*
 * ss -ti: "dctcp:(ce_state:<modified>,alpha:<drop>,ab_ecn:<ece>,
 * ab_tot:<repeat>)", recoveries begun on each path; a modified recovery
 * that turned standard counts again under drop or ece.
 */
static size_t r_get_info(struct sock *sk, u32 ext, int *attr,
			 union tcp_cc_info *info)
{
	const u32 *n = ((struct r *)inet_csk_ca(sk))->core.paths;

	return satnet_cc_info(ext, attr, info, READ_ONCE(n[R_PATH_MODIFIED]),
			      READ_ONCE(n[R_PATH_DROP]),
			      READ_ONCE(n[R_PATH_ECE]),
			      READ_ONCE(n[R_PATH_REPEAT]));
}

static struct tcp_congestion_ops tcp_r __read_mostly = {
	.init		= r_init,
	.release	= r_release,
	.ssthresh	= r_ssthresh,
	.cong_avoid	= r_cong_avoid,
	.undo_cwnd	= tcp_reno_undo_cwnd,
	.set_state	= r_set_state,
	.cwnd_event	= r_cwnd_event,
	.in_ack_event	= r_in_ack_event,
	.get_info	= r_get_info,
	.owner		= THIS_MODULE,
	.name		= "r",
};

static int __init r_register(void)
{
	int err;

	BUILD_BUG_ON(sizeof(struct r) > ICSK_CA_PRIV_SIZE);
	BUILD_BUG_ON(offsetof(struct r, latch) != 0);
	err = rn_latch_register(&tcp_r);
	if (err)
		return err;
	err = tcp_register_congestion_control(&tcp_r);
	if (err)
		rn_latch_unregister(&tcp_r);
	return err;
}

/* No socket uses r any more: the module reference count saw to that. */
static void __exit r_unregister(void)
{
	tcp_unregister_congestion_control(&tcp_r);
	rn_latch_unregister(&tcp_r);
}

module_init(r_register);
module_exit(r_unregister);

MODULE_AUTHOR("satnet project");
MODULE_LICENSE("GPL");
MODULE_VERSION(SATNET_VERSION);
MODULE_DESCRIPTION("TCP-R: no cwnd cut for reordered or corrupted segments (drop-negative bit, ECN)");
MODULE_ALIAS("tcp-r");
