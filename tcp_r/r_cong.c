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
 * The window is r's own.  With .cong_control set, as tcp_bbr.c does, the
 * stack calls r_cong_control() at the end of every ACK instead of its
 * reduction (PRR, tcp_cwnd_reduction()) and growth (cong_avoid), does not
 * set cwnd to ssthresh when a recovery ends (tcp_end_cwnd_reduction()
 * returns early, and sends no CA_EVENT_COMPLETE_CWR) and does not set the
 * pacing rate.  It still asks ssthresh() when a reduction begins, sets
 * cwnd on a timeout (tcp_enter_loss()) and asks undo_cwnd() on an undo.
 * r_cong_control() then does, by the state the stack is in:
 *   - a modified fast recovery: the window is kept and grows as outside
 *     one, in congestion avoidance (ssthresh is set to the window when it
 *     begins: slow start ends at the first recovery, modified or not);
 *     nothing else moves cwnd (undo_cwnd() returns it unchanged);
 *   - a standard recovery, or CWR: PRR (RFC 6937, r_prr_sndcnt()) toward
 *     ssthresh; set_state() sets cwnd to ssthresh when it ends, unless the
 *     stack undid it (then undo_cwnd(), Reno's: the window before);
 *   - otherwise Reno's growth (or Hybla's with rtt0_ms), when the ACK
 *     advanced snd_una (SACKed data too once the stack has seen
 *     reordering, as tcp_may_raise_cwnd()) and the flow is cwnd-limited;
 *     Hybla's stops at what the path holds (include/satnet/grow.h): the
 *     windowed max of the ACK's delivery rate samples times min RTT,
 *     plus the queue's share;
 * and sets sk_pacing_rate as tcp_update_pacing_rate() does.  With the
 * pacing parameter (default on) init() asks for TCP's internal pacing
 * when no fq qdisc paces the flow (SK_PACING_NEEDED, as bbr).
 *
 * dupthresh.  Fast retransmit after three dupACKs, whatever the path:
 * tp->reordering is held at 3 for classic loss detection, and with RACK
 * (net.ipv4.tcp_recovery & 1) the hole is marked lost at the third dupACK
 * by tcp_rn's RACK trigger, as RN-TCP does at its dupthresh; before it,
 * while every dupACK had the bit, RACK is held back.  With RACK the
 * stack keeps its own estimate in tp->reordering.
 *
 * Modified fast recovery.  The stack enters Recovery and asks ssthresh();
 * when the recovery begins on the modified path, set_state() sets
 * ssthresh to cwnd and withdraws the ECN CWR the stack queued: nothing is
 * reduced.  An ECE, a dupACK without the bit, or a second send of the
 * hole during the recovery turns it standard: ssthresh becomes half the
 * window before the loss (the larger of the cwnd before the recovery and
 * the window grown since), PRR starts from that window, and the CWR is
 * queued.  A timeout during it halves the same window.
 *
 * One halving per window of data.  After a halving, no further reduction
 * until snd_una passes the snd_nxt at that halving, whatever the signal (a
 * drop, an ECE, a lost retransmission): a recovery or CWR that begins
 * meanwhile keeps the window (ssthresh is the cwnd before it), and a
 * modified recovery that turns standard keeps it too.  A timeout is the
 * stack's (tcp_enter_loss() reduces once per window of its own).
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
		 "Congestion avoidance compensated for the RTT as TCP Hybla's (rho^2/cwnd per segment, rho = min RTT / RTT0), with this RTT0 in ms, also in a modified recovery, up to 5/4 of max delivery rate * min RTT + 4 segments; slow start stays Reno's (0, the default: Reno's growth, the seed's; Hybla uses 25; at most 1000)");

static bool pacing __read_mostly = true;
module_param(pacing, bool, 0644);
MODULE_PARM_DESC(pacing,
		 "Pace by TCP's own timer where no fq qdisc does (default 1): sk_pacing_rate, set on every ACK, is 200 % of cwnd * mss / srtt in slow start, 120 % after (net.ipv4.tcp_pacing_ss_ratio, _ca_ratio); read when a connection starts");

struct r {
	struct rn_latch latch;	/* first: tcp_rn's hook fills it */
	struct r_sender core;
	u32 wnd;		/* RecoverFS of the reduction; in a modified
				 * recovery the window kept
				 */
	u32 last_una;		/* snd_una at the last cong_control() */
	u32 hole_sent;		/* low bits of the hole's last send time */
	struct sat_bw bw;	/* delivery rate: what bounds Hybla's growth */
	u8 hole_sends;		/* its sends seen since the recovery began */
	u8 rack_steps;		/* RACK's reo_wnd_steps we replaced */
	u8 flags;		/* R_M_* */
};

#define R_M_STEPS		0x01	/* rack_steps holds a value to restore */
#define R_M_ASKED		0x02	/* ssthresh() asked: a reduction begins */

static struct tcp_congestion_ops tcp_r;

static void r_params(struct r_params *p)
{
	p->ece_rtts = clamp_t(u32, READ_ONCE(ece_rtts), 1, R_ECE_RTTS_MAX);
}

static void r_init(struct sock *sk)
{
	struct r *ca = inet_csk_ca(sk);
	const struct tcp_sock *tp = tcp_sk(sk);

	r_sender_init(&ca->core);
	ca->wnd = tcp_snd_cwnd(tp);
	ca->last_una = tp->snd_una;
	ca->hole_sent = 0;
	ca->bw = (struct sat_bw){};
	ca->hole_sends = 0;
	ca->rack_steps = 0;
	ca->flags = 0;
	if (READ_ONCE(pacing))
		cmpxchg(&sk->sk_pacing_status, SK_PACING_NONE,
			SK_PACING_NEEDED);
	rn_latch_open(sk);
}

static void r_release(struct sock *sk)
{
	rn_latch_close(sk);
}

/*
 * Reno's growth, or with rtt0_ms Hybla's up to what the path holds; only
 * while cwnd-limited.
 */
static void r_grow_cwnd(struct sock *sk, u32 acked)
{
	const struct r *ca = inet_csk_ca(sk);
	const struct tcp_sock *tp = tcp_sk(sk);
	u32 min_rtt = tcp_min_rtt(tp);
	u32 rho8 = sat_rho8(min_rtt, READ_ONCE(rtt0_ms));

	rn_grow_cwnd(sk, tp->snd_una, acked, rho8,
		     rho8 ? sat_bound(sat_bw_max(&ca->bw), min_rtt) :
			    SAT_NO_BOUND);
}

/*
 * The ACK's delivery rate sample, if valid, into the windowed max; only
 * Hybla's growth (rtt0_ms) reads it.
 */
static void r_bw_sample(struct sock *sk, const struct rate_sample *rs)
{
	struct r *ca = inet_csk_ca(sk);
	const struct tcp_sock *tp = tcp_sk(sk);
	u32 bw = 0;

	if (!READ_ONCE(rtt0_ms))
		return;
	if (rs->delivered > 0 && rs->interval_us > 0)
		bw = sat_bw_rate(rs->delivered,
				 min_t(u64, rs->interval_us, U32_MAX));
	sat_bw_update(&ca->bw, (u32)tp->tcp_mstamp, tcp_min_rtt(tp), bw,
		      rs->is_app_limited);
}

/*
 * Reno's.  set_state() decides what becomes of it: a modified recovery
 * keeps the window, and so does a reduction within the window of data of
 * the last halving.  Also the halving of a tail loss probe's repair and of
 * an ECE (tcp_enter_cwr), and of a timeout.
 */
static u32 r_ssthresh(struct sock *sk)
{
	struct r *ca = inet_csk_ca(sk);

	ca->flags |= R_M_ASKED;
	return tcp_reno_ssthresh(sk);
}

/*
 * Undo (the hole was reordered, not lost: timestamps, D-SACK, F-RTO): the
 * window the reduction began from, as Reno's undo gives back prior_cwnd,
 * and never less than cwnd.  In a modified recovery nothing was reduced:
 * cwnd stays.  The stack gives back the ssthresh from before itself.
 */
static u32 r_undo_cwnd(struct sock *sk)
{
	const struct r *ca = inet_csk_ca(sk);
	u32 cwnd = tcp_snd_cwnd(tcp_sk(sk));

	if (ca->core.flags & R_F_MOD)
		return cwnd;
	return max(cwnd, ca->wnd);
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
 * A reduction (standard recovery, CWR, timeout) begins from the window
 * @wnd: half of it, or none within the window of data of the last
 * halving.  Returns the ssthresh.
 */
static u32 r_reduction(struct sock *sk, u32 wnd, u32 halved)
{
	struct r *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	ca->wnd = wnd;
	if (!r_may_cut(&ca->core, tp->snd_una))
		return max(wnd, 2U);
	r_cut(&ca->core, tp->snd_nxt);
	return halved;
}

/* A modified recovery turns standard: halve once, then PRR. */
static void r_turn_standard(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u32 wnd = max(tp->prior_cwnd, tcp_snd_cwnd(tp));

	tp->snd_ssthresh = r_reduction(sk, wnd, r_halve(wnd));
	r_ecn_cwr(sk, tp->snd_ssthresh < wnd);
	tp->prr_delivered = 0;
	tp->prr_out = 0;
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
	ca->flags &= ~R_M_ASKED;
	r_params(&p);
	r_gather(sk, flags, &a);
	if (r_on_ack(&ca->core, &p, &a) == R_ACT_HALVE &&
	    state == TCP_CA_Recovery)
		r_turn_standard(sk);

	if (rn_is_rack(sk))
		r_rack_steer(sk, state);
	else
		tp->reordering = R_DUPTHRESH;
}

/* PRR (RFC 6937) on an ACK that delivered @acked in a reduction. */
static void r_reduce(struct sock *sk, u32 acked, bool bonus)
{
	struct r *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	u32 pipe = tcp_packets_in_flight(tp);

	if (!acked)
		return;
	tp->prr_delivered += acked;
	pipe += r_prr_sndcnt(tp->snd_ssthresh, ca->wnd, tp->prr_delivered,
			     tp->prr_out, pipe, acked, bonus);
	tcp_snd_cwnd_set(tp, max(pipe, 1U));
}

static void r_pace(struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	const struct net *net = sock_net(sk);
	u64 rate;

	rate = r_pacing_rate(tp->mss_cache, tcp_snd_cwnd(tp), tp->packets_out,
			     tp->snd_ssthresh, tp->srtt_us,
			     READ_ONCE(net->ipv4.sysctl_tcp_pacing_ss_ratio),
			     READ_ONCE(net->ipv4.sysctl_tcp_pacing_ca_ratio),
			     READ_ONCE(sk->sk_max_pacing_rate));
	WRITE_ONCE(sk->sk_pacing_rate, rate);
}

/* The end of every ACK that took data off the queue: r's window. */
static void r_main(struct sock *sk, const struct rate_sample *rs)
{
	struct r *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	u8 state = inet_csk(sk)->icsk_ca_state;
	bool advanced = after(tp->snd_una, ca->last_una);
	u32 acked = rs->acked_sacked;

	ca->last_una = tp->snd_una;
	r_bw_sample(sk, rs);
	if (state == TCP_CA_Recovery && (ca->core.flags & R_F_MOD)) {
		if (acked)
			r_grow_cwnd(sk, acked);
		ca->wnd = tcp_snd_cwnd(tp);
	} else if (state == TCP_CA_Recovery || state == TCP_CA_CWR) {
		r_reduce(sk, acked, advanced && rs->losses <= 0);
	} else if (acked &&
		   (advanced || tp->reordering >
		    READ_ONCE(sock_net(sk)->ipv4.sysctl_tcp_reordering))) {
		r_grow_cwnd(sk, acked);
	}
	r_pace(sk);
}

/* (sk, rs); the ACK's number and flags, passed since 6.10, are not needed. */
static void r_cong_control(SAT_CONG_CONTROL_ARGS)
{
	r_main(sk, rs);
}

/*
 * A recovery begins; @asked: the stack asked ssthresh() for it (not when
 * it follows CWR, whose reduction goes on).
 */
static void r_recovery_start(struct sock *sk, bool asked)
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
	if (r_recovery_begins(&ca->core, &a)) {
		/* Nothing reduced; slow start is over. */
		ca->wnd = tcp_snd_cwnd(tp);
		tp->snd_ssthresh = max(ca->wnd, 2U);
		r_ecn_cwr(sk, false);
		ca->hole_sent = head ? (u32)head->skb_mstamp_ns : 0;
		ca->hole_sends = 1;
		return;
	}
	if (!asked)
		return;
	tp->snd_ssthresh = r_reduction(sk, tp->prior_cwnd, tp->snd_ssthresh);
	/*
	 * The fast retransmission alone until an ACK runs PRR: when RACK's
	 * timer begins the recovery, no cong_control() follows.
	 */
	tcp_snd_cwnd_set(tp, min(tcp_snd_cwnd(tp),
				 tcp_packets_in_flight(tp) + 1));
}

/*
 * A timeout.  In a modified recovery the stack asked no ssthresh
 * (tcp_enter_loss() reduces once per window, and the recovery's began
 * there): half the window before the loss, which cwnd no longer holds.
 */
static void r_timeout(struct sock *sk, u8 old, bool asked)
{
	struct r *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	u32 wnd = max(tp->prior_cwnd, ca->wnd);

	if (old == TCP_CA_Recovery && (ca->core.flags & R_F_MOD)) {
		tp->snd_ssthresh = r_recovery_ends(&ca->core, true, wnd);
		ca->wnd = wnd;
		r_cut(&ca->core, tp->snd_nxt);
		return;
	}
	if (asked) {
		ca->wnd = tp->prior_cwnd;
		r_cut(&ca->core, tp->snd_nxt);
	}
}

/*
 * A reduction (CWR, standard recovery) ends: cwnd is ssthresh, as
 * tcp_end_cwnd_reduction() would set it, unless the stack undid the
 * recovery (undo_marker cleared; undo_cwnd() set cwnd).  A modified
 * recovery keeps its window.
 */
static void r_reduction_ends(struct sock *sk, u8 old)
{
	struct r *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	if (old == TCP_CA_Recovery && (ca->core.flags & R_F_MOD)) {
		r_recovery_ends(&ca->core, false, 0);
		return;
	}
	if (tp->snd_ssthresh < TCP_INFINITE_SSTHRESH &&
	    (old == TCP_CA_CWR || tp->undo_marker)) {
		tcp_snd_cwnd_set(tp, tp->snd_ssthresh);
		tp->snd_cwnd_stamp = tcp_jiffies32;
	}
}

static void r_set_state(struct sock *sk, u8 new_state)
{
	struct r *ca = inet_csk_ca(sk);
	u8 old = inet_csk(sk)->icsk_ca_state;
	bool asked = ca->flags & R_M_ASKED;

	r_rack_giveback(sk);
	ca->flags &= ~R_M_ASKED;
	if (new_state == TCP_CA_Recovery && old != TCP_CA_Recovery) {
		r_recovery_start(sk, asked);
	} else if (new_state == TCP_CA_CWR && asked) {
		tcp_sk(sk)->snd_ssthresh =
			r_reduction(sk, tcp_sk(sk)->prior_cwnd,
				    tcp_sk(sk)->snd_ssthresh);
	} else if (new_state == TCP_CA_Loss) {
		r_timeout(sk, old, asked);
	} else if (new_state <= TCP_CA_Disorder &&
		   (old == TCP_CA_CWR || old == TCP_CA_Recovery)) {
		r_reduction_ends(sk, old);
	}
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
	.cong_control	= r_cong_control,
	.undo_cwnd	= r_undo_cwnd,
	.set_state	= r_set_state,
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
