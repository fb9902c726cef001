// SPDX-License-Identifier: GPL-2.0
/*
 * TCP RN: the RN-TCP sender, congestion control "rn".
 *
 * A. Sathiaseelan, T. Radzik, "Reorder Notifying TCP (RN-TCP) with
 * Explicit Packet Drop Notification (EPDN)" (seed 001) §IV-B, and the
 * enhanced RTT sampling RN-TCP-ES of A. Sathiaseelan, "TCP-R with EPDN"
 * (seed 000) §4.7.
 *
 * An RN-TCP receiver sets the drop-negative bit (include/satnet/rn_wire.h)
 * on ACKs whose first hole it believes reordered.  On a train of such
 * dupACKs (and no recent ECE) this sender waits for
 * dupthresh = max(4, swnd + swnd * kval) dupACKs, with
 * kval = max(ceil(srtt / min_rtt) * c, kval), before it retransmits, and
 * lets limited transmit send up to one more cwnd meanwhile.  Without the
 * bit it retransmits at 3 dupACKs.  kval doubles on every false fast
 * retransmit a D-SACK reveals; after a timeout kval is 0 and dupthresh 3
 * until the first D-SACK.  Otherwise it is Reno with SACK.  The rules
 * live in rn_sender_core.c; this file maps them onto the stack:
 *
 * Reading the bit.  A netfilter hook at LOCAL_IN (IPv4 and IPv6,
 * registered in every network namespace) parses each incoming ACK of a
 * socket whose congestion control is rn and counts it into the socket's
 * latch (struct rn_latch): per ACK number, how many hole ACKs had the bit
 * set and how many not, plus the last D-SACK block.  in_ack_event, which
 * in 6.1 runs after SACK processing and right before loss detection for
 * the same ACK, reads the latch for the hole at snd_una.  Races: the hook
 * runs in softirq without the socket lock, possibly while the owner
 * processes its backlog or switches congestion control, so the latch has
 * its own lock (hashed by socket), and the hook writes only while the
 * latch is READY: init() sets READY, release() clears it under the same
 * lock before the stack clears the private area for another algorithm.
 * Counting per ACK number instead of keeping "the last bit" makes the
 * result independent of how many ACKs wait in the backlog.
 *
 * dupthresh.  Classic loss detection (net.ipv4.tcp_recovery = 0) enters
 * recovery when sacked_out >= tp->reordering: in_ack_event writes the
 * rule into tp->reordering, exactly, while a hole waits, and gives the
 * stack its own value back otherwise (rn_reo_apply()).  RACK
 * (tcp_recovery & 1, the default) ignores tp->reordering once reordering
 * was seen; in_ack_event then holds RACK back on a reordered hole (clears
 * tp->rack.advanced, so this ACK marks nothing lost) until sacked_out
 * reaches dupthresh, and on that ACK, for either rule, lets RACK run with
 * a zero reordering window, which marks the hole lost (rn_rack_steer()),
 * on kernels where in_ack_event follows tcp_clean_rtx_queue() only
 * (ack_order_ok).
 * Recovery itself is the stack's SACK recovery (and RACK's, if on).
 *
 * Clients.  The hook serves any congestion control registered with
 * rn_latch_register() whose private area begins with a latch, and the
 * RACK steering is exported: TCP-R (tcp_r.ko) reads the same receiver's
 * bit through them (include/satnet/rn_latch_api.h).
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/hash.h>
#include <linux/percpu.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/netfilter.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6.h>
#include <linux/inet_diag.h>
#include <net/tcp.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/ip6_checksum.h>
#include <net/inet_hashtables.h>
#include <net/inet6_hashtables.h>
#include <net/netns/generic.h>

#include <satnet/compat.h>
#include <satnet/rn_wire.h>
#include <satnet/rn_sender_core.h>
#include <satnet/rn_latch_api.h>
#include <satnet/cc_info.h>
#include <satnet/grow.h>
#include <satnet/tcp_csum.h>

static unsigned int c_permille __read_mostly = RN_C_PERMILLE;
module_param(c_permille, uint, 0644);
MODULE_PARM_DESC(c_permille,
		 "c of kval = max(ceil(srtt/min_rtt) * c, kval), per-mille (default 100: c = 0.1, seed 001 §IV-B2)");

static bool es __read_mostly;
module_param(es, bool, 0644);
MODULE_PARM_DESC(es,
		 "RN-TCP-ES: RTT samples from D-SACK-paired transmissions (seed 000 §4.7; default 0: plain RN-TCP)");

static bool lt_ext __read_mostly = true;
module_param(lt_ext, bool, 0644);
MODULE_PARM_DESC(lt_ext,
		 "Extended limited transmit: at most one more cwnd while waiting for a reordered hole (default 1, seed 001 §IV-B1)");

static bool rack_steer __read_mostly = true;
module_param(rack_steer, bool, 0644);
MODULE_PARM_DESC(rack_steer,
		 "With RACK on (net.ipv4.tcp_recovery & 1), hold RACK back until dupthresh (default 1; 0 leaves RACK alone). Needs in_ack_event after tcp_clean_rtx_queue (v6.14+, 6.12.31+, 6.1.141+): ignored unless ack_order_ok is 1");

/*
 * The RACK steering edits RACK's per-ACK state in in_ack_event, which
 * must run after tcp_clean_rtx_queue() for that, or the queue cleaning
 * that follows would undo it (SAT_IN_ACK_EVENT_AFTER_CLEAN, compat.h).
 * Set at load time from the kernel built against (a module only loads on
 * that kernel), cleared for good by the first ACK that shows the old
 * order (rn_ack_order_check()).
 */
static bool ack_order_ok __read_mostly;

static int rn_ack_order_set(const char *val, const struct kernel_param *kp)
{
	bool v;
	int err = kstrtobool(val, &v);

	if (err)
		return err;
	if (v && !SAT_IN_ACK_EVENT_AFTER_CLEAN)
		return -EOPNOTSUPP;
	WRITE_ONCE(ack_order_ok, v);
	return 0;
}

static const struct kernel_param_ops rn_ack_order_ops = {
	.set	= rn_ack_order_set,
	.get	= param_get_bool,
};

module_param_cb(ack_order_ok, &rn_ack_order_ops, &ack_order_ok, 0644);
MODULE_PARM_DESC(ack_order_ok,
		 "1: in_ack_event follows tcp_clean_rtx_queue (v6.14+, 6.12.31+, 6.1.141+), RACK steering works; 0: it does not, or was seen not to: rack_steer is ignored and RACK decides alone (0 can be written, 1 only on such kernels)");

static int rn_rtt0_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, SAT_RTT0_MS_MAX);
}

const struct kernel_param_ops rn_rtt0_ops = {
	.set	= rn_rtt0_set,
	.get	= param_get_uint,
};
EXPORT_SYMBOL_GPL(rn_rtt0_ops);

static unsigned int rtt0_ms __read_mostly;
module_param_cb(rtt0_ms, &rn_rtt0_ops, &rtt0_ms, 0644);
MODULE_PARM_DESC(rtt0_ms,
		 "Congestion avoidance compensated for the RTT as TCP Hybla's (rho^2/cwnd per segment, rho = min RTT / RTT0), with this RTT0 in ms, up to 5/4 of the last delivery rate * min RTT + 4 segments; slow start stays Reno's (0, the default: Reno's growth, the seed's; Hybla uses 25; at most 1000)");

static unsigned int ece_rtts __read_mostly = 1;
module_param(ece_rtts, uint, 0644);
MODULE_PARM_DESC(ece_rtts,
		 "An ECE is recent for this many srtt: no reordering is believed meanwhile (default 1, seed 001 §IV-B2)");

#define RN_C_PERMILLE_MAX	10000
#define RN_ECE_RTTS_MAX		64
#define RN_LOCK_BITS		6
#define RN_CLIENTS_MAX		4

/*
 * Private area: the latch the hook fills (first, as for every client of
 * rn_latch_register()), the core's state, our own.
 */
struct rn {
	struct rn_latch latch;	/* 24 bytes, under rn_lock(sk) */
	struct rn_sender core;	/* 68 bytes */
	u16 dsack_dups;		/* tp->dsack_dups at the last ACK (low bits) */
	u16 reo_stack;		/* tp->reordering as the stack keeps it */
	u16 reo_written;	/* tp->reordering as we last wrote it */
	u8 rack_steps;		/* RACK's reo_wnd_steps we replaced */
	u8 flags;		/* RN_M_* */
};

#define RN_M_STEPS		0x01	/* rack_steps holds a value to restore */
#define RN_M_INIT		0x02	/* init() ran: the area is ours */

/* Counters per network namespace: /proc/net/rn_sender. */
enum rn_mib_item {
	RN_MIB_ACKS,
	RN_MIB_DN_ACKS,
	RN_MIB_HOLE_ACKS,
	RN_MIB_HDR_BAD,
	RN_MIB_OPT_BAD,
	RN_MIB_OUTSIDE,
	RN_MIB_CSUM_BAD,
	RN_MIB_DISTRUST,
	RN_MIB_TRAIN_REORDER,
	RN_MIB_TRAIN_DROP,
	RN_MIB_REORDER_EXPIRED,
	RN_MIB_FAST_RETRANS,
	RN_MIB_FALSE_FR,
	RN_MIB_TIMEOUTS,
	RN_MIB_TIMEOUT_REORDER,
	RN_MIB_FALLBACK_END,
	RN_MIB_LT_CAPPED,
	RN_MIB_RACK_HELD,
	RN_MIB_RACK_TRIGGER,
	RN_MIB_ES_SAMPLES,
	RN_MIB_MAX
};

static const char * const rn_mib_names[RN_MIB_MAX] = {
	[RN_MIB_ACKS]		= "acks_read",
	[RN_MIB_DN_ACKS]	= "acks_dn",
	[RN_MIB_HOLE_ACKS]	= "acks_hole",
	[RN_MIB_HDR_BAD]	= "hdr_malformed",
	[RN_MIB_OPT_BAD]	= "opt_malformed",
	[RN_MIB_OUTSIDE]	= "acks_outside_window",
	[RN_MIB_CSUM_BAD]	= "acks_bad_csum",
	[RN_MIB_DISTRUST]	= "peers_distrusted",
	[RN_MIB_TRAIN_REORDER]	= "trains_reorder",
	[RN_MIB_TRAIN_DROP]	= "trains_drop",
	[RN_MIB_REORDER_EXPIRED] = "trains_reorder_expired",
	[RN_MIB_FAST_RETRANS]	= "fast_retransmits",
	[RN_MIB_FALSE_FR]	= "false_fast_retransmits",
	[RN_MIB_TIMEOUTS]	= "timeouts",
	[RN_MIB_TIMEOUT_REORDER] = "timeouts_waiting_reorder",
	[RN_MIB_FALLBACK_END]	= "fallbacks_ended",
	[RN_MIB_LT_CAPPED]	= "lt_capped_acks",
	[RN_MIB_RACK_HELD]	= "rack_held_acks",
	[RN_MIB_RACK_TRIGGER]	= "rack_triggered",
	[RN_MIB_ES_SAMPLES]	= "es_samples",
};

struct rn_mib {
	unsigned long v[RN_MIB_MAX];
};

struct rn_net {
	struct rn_mib __percpu *mib;
	atomic_t latches;	/* open latches: the hook idles at zero */
};

static unsigned int rn_net_id __read_mostly;
static spinlock_t rn_locks[1 << RN_LOCK_BITS];
static struct tcp_congestion_ops tcp_rn;
/* Other senders whose sockets the hook serves: see rn_latch_register(). */
static struct tcp_congestion_ops *rn_clients[RN_CLIENTS_MAX];
static DEFINE_MUTEX(rn_clients_mutex);

static void rn_count(const struct net *net, enum rn_mib_item i)
{
	struct rn_net *rn = net_generic(net, rn_net_id);

	this_cpu_inc(rn->mib->v[i]);
}

/* The latch lock of a socket. */
static spinlock_t *rn_lock(const struct sock *sk)
{
	return &rn_locks[hash_ptr(sk, RN_LOCK_BITS)];
}

static void rn_params(const struct sock *sk, struct rn_params *p)
{
	const struct net *net = sock_net(sk);

	p->c_permille = min_t(u32, READ_ONCE(c_permille), RN_C_PERMILLE_MAX);
	p->dupthresh_min = RN_DUPTHRESH_MIN;
	p->dupthresh_drop = RN_DUPTHRESH_DROP;
	p->dupthresh_max = clamp_t(int,
				   READ_ONCE(net->ipv4.sysctl_tcp_max_reordering),
				   RN_DUPTHRESH_MIN, U16_MAX);
	p->ece_rtts = clamp_t(u32, READ_ONCE(ece_rtts), 1, RN_ECE_RTTS_MAX);
	p->lt_ext = READ_ONCE(lt_ext);
}

void rn_grow_cwnd(struct sock *sk, u32 ack, u32 acked, u32 rho8, u32 bound)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u32 cwnd;

	if (!rho8) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}
	if (!tcp_is_cwnd_limited(sk))
		return;
	cwnd = sat_grow(&tp->snd_cwnd_cnt, tcp_snd_cwnd(tp),
			tp->snd_ssthresh, acked, rho8, bound);
	tcp_snd_cwnd_set(tp, min(cwnd, tp->snd_cwnd_clamp));
}
EXPORT_SYMBOL_GPL(rn_grow_cwnd);

bool rn_is_rack(const struct sock *sk)
{
	return READ_ONCE(sock_net(sk)->ipv4.sysctl_tcp_recovery) &
	       TCP_RACK_LOSS_DETECTION;
}
EXPORT_SYMBOL_GPL(rn_is_rack);

/* Does the hook serve sockets of this congestion control? */
static bool rn_served(const struct tcp_congestion_ops *ops)
{
	int i;

	if (ops == &tcp_rn)
		return true;
	for (i = 0; i < RN_CLIENTS_MAX; i++)
		if (ops && READ_ONCE(rn_clients[i]) == ops)
			return true;
	return false;
}

/* ---- the hook: reading the drop-negative bit ---- */

/*
 * Plausibility: an ACK the stack will take, not a blind injection.  Also
 * notes an ACK for everything sent (see RN_BOGUS_MAX).
 */
static bool rn_ack_in_window(const struct sock *sk, struct rn_wire *w,
			     u32 payload)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	u32 una = READ_ONCE(tp->snd_una), nxt = READ_ONCE(tp->snd_nxt);
	u32 wup = READ_ONCE(tp->rcv_wup), rnxt = READ_ONCE(tp->rcv_nxt);
	u32 wnd = READ_ONCE(tp->rcv_wnd);

	if (before(w->ack, una) || after(w->ack, nxt))
		return false;
	if (w->ack == nxt)
		w->flags |= RN_W_ALLACKED;
	return !before(w->seq + payload, wup) && !after(w->seq, rnxt + wnd);
}

static void rn_latch_ack(struct sock *sk, struct rn_wire *w,
			 u32 payload, struct net *net)
{
	struct rn_latch *l = inet_csk_ca(sk);
	spinlock_t *lock = rn_lock(sk);
	bool distrust = false, latched = false;

	if (!((1 << sk->sk_state) & (TCPF_ESTABLISHED | TCPF_FIN_WAIT1 |
				     TCPF_CLOSE_WAIT | TCPF_CLOSING |
				     TCPF_LAST_ACK)))
		return;
	if (!rn_ack_in_window(sk, w, payload)) {
		rn_count(net, RN_MIB_OUTSIDE);
		return;
	}
	spin_lock_bh(lock);
	if ((l->flags & RN_L_READY) &&
	    rn_served(READ_ONCE(inet_csk(sk)->icsk_ca_ops))) {
		u8 bogus = l->bogus;

		rn_latch_update(l, w);
		distrust = bogus < RN_BOGUS_MAX && l->bogus >= RN_BOGUS_MAX;
		latched = true;
	}
	spin_unlock_bh(lock);

	if (!latched)
		return;
	rn_count(net, RN_MIB_ACKS);
	if (w->flags & RN_W_DN)
		rn_count(net, RN_MIB_DN_ACKS);
	if (w->flags & RN_W_HOLE)
		rn_count(net, RN_MIB_HOLE_ACKS);
	if (w->flags & RN_W_BADOPT)
		rn_count(net, RN_MIB_OPT_BAD);
	if (distrust)
		rn_count(net, RN_MIB_DISTRUST);
}

/* The established socket of an incoming segment, with a reference. */
static struct sock *rn_lookup(struct sk_buff *skb, struct net *net, u8 pf,
			      const u8 *th, bool *ref)
{
	__be16 sport = *(const __be16 *)th, dport = *(const __be16 *)(th + 2);

	*ref = false;
	if (skb->sk)
		return skb->sk;		/* early demux took the reference */
	*ref = true;
	if (pf == NFPROTO_IPV4) {
		const struct iphdr *iph = ip_hdr(skb);

		return __inet_lookup_established(net,
						 net->ipv4.tcp_death_row.hashinfo,
						 iph->saddr, sport, iph->daddr,
						 ntohs(dport), inet_iif(skb),
						 inet_sdif(skb));
	}
#if IS_ENABLED(CONFIG_IPV6)
	return __inet6_lookup_established(net, net->ipv4.tcp_death_row.hashinfo,
					  &ipv6_hdr(skb)->saddr, sport,
					  &ipv6_hdr(skb)->daddr, ntohs(dport),
					  inet6_iif(skb), inet6_sdif(skb));
#else
	return NULL;
#endif
}

/*
 * The hook runs before TCP checks the checksum: an ACK that TCP will
 * discard as corrupt must not move the latch either.
 */
static bool rn_csum_ok(struct sk_buff *skb, u8 pf, u32 thoff)
{
	u32 len = skb->len - thoff;
	__wsum pseudo;

	if (pf == NFPROTO_IPV4)
		pseudo = csum_tcpudp_nofold(ip_hdr(skb)->saddr,
					    ip_hdr(skb)->daddr, len,
					    IPPROTO_TCP, 0);
#if IS_ENABLED(CONFIG_IPV6)
	else
		pseudo = ~csum_unfold(csum_ipv6_magic(&ipv6_hdr(skb)->saddr,
						      &ipv6_hdr(skb)->daddr,
						      len, IPPROTO_TCP, 0));
#else
	else
		return false;
#endif
	return satnet_tcp_csum_ok(skb, thoff, len, pseudo);
}

/* A served socket's ACK, once its checksum holds, goes to the latch. */
static void rn_hook_served(struct sk_buff *skb, struct net *net, u8 pf,
			   u32 thoff, struct sock *sk, struct rn_wire *w)
{
	if (!rn_csum_ok(skb, pf, thoff)) {
		rn_count(net, RN_MIB_CSUM_BAD);
		return;
	}
	rn_latch_ack(sk, w, skb->len - thoff - w->hdr_len, net);
}

static void rn_hook_tcp(struct sk_buff *skb, struct net *net, u8 pf,
			u32 thoff)
{
	u8 buf[SAT_TCP_HDR_MAX];
	struct rn_wire w;
	const u8 *th;
	struct sock *sk;
	u32 len;
	bool ref;

	if (skb->len < thoff + SAT_TCP_HDR_MIN) {
		rn_count(net, RN_MIB_HDR_BAD);
		return;
	}
	len = min_t(u32, skb->len - thoff, SAT_TCP_HDR_MAX);
	th = skb_header_pointer(skb, thoff, len, buf);
	if (!th)
		return;
	switch (rn_parse_ack(th, len, &w)) {
	case RN_PARSE_OK:
		break;
	case RN_PARSE_BAD:
		rn_count(net, RN_MIB_HDR_BAD);
		return;
	default:
		return;
	}
	sk = rn_lookup(skb, net, pf, th, &ref);
	if (!sk)
		return;
	if (sk_fullsock(sk) && sk->sk_protocol == IPPROTO_TCP &&
	    rn_served(READ_ONCE(inet_csk(sk)->icsk_ca_ops)))
		rn_hook_served(skb, net, pf, thoff, sk, &w);
	if (ref)
		sock_gen_put(sk);
}

/*
 * Does any socket of this namespace have an open latch?  Without one no
 * segment is parsed or looked up.  A latch opening meanwhile misses at
 * most the ACKs that raced with its init(), as if they came before it.
 */
static bool rn_any_latch(const struct net *net)
{
	const struct rn_net *rn = net_generic(net, rn_net_id);

	return atomic_read(&rn->latches) > 0;
}

static unsigned int rn_hook_v4(void *priv, struct sk_buff *skb,
			       const struct nf_hook_state *state)
{
	const struct iphdr *iph = ip_hdr(skb);

	if (!rn_any_latch(state->net))
		return NF_ACCEPT;
	if (iph->protocol == IPPROTO_TCP && !ip_is_fragment(iph))
		rn_hook_tcp(skb, state->net, NFPROTO_IPV4,
			    skb_network_offset(skb) + iph->ihl * 4);
	return NF_ACCEPT;
}

#if IS_ENABLED(CONFIG_IPV6)
static unsigned int rn_hook_v6(void *priv, struct sk_buff *skb,
			       const struct nf_hook_state *state)
{
	u8 nexthdr = ipv6_hdr(skb)->nexthdr;
	__be16 frag_off = 0;
	int off;

	if (!rn_any_latch(state->net))
		return NF_ACCEPT;
	off = ipv6_skip_exthdr(skb, skb_network_offset(skb) +
			       sizeof(struct ipv6hdr), &nexthdr, &frag_off);
	if (off >= 0 && nexthdr == IPPROTO_TCP && !frag_off)
		rn_hook_tcp(skb, state->net, NFPROTO_IPV6, off);
	return NF_ACCEPT;
}
#endif

/* Last, so that filter and NAT see the packet as it came. */
static const struct nf_hook_ops rn_nf_ops[] = {
	{
		.hook		= rn_hook_v4,
		.pf		= NFPROTO_IPV4,
		.hooknum	= NF_INET_LOCAL_IN,
		.priority	= NF_IP_PRI_LAST,
	},
#if IS_ENABLED(CONFIG_IPV6)
	{
		.hook		= rn_hook_v6,
		.pf		= NFPROTO_IPV6,
		.hooknum	= NF_INET_LOCAL_IN,
		.priority	= NF_IP6_PRI_LAST,
	},
#endif
};

/* ---- the latch, for rn and for registered clients ---- */

/*
 * rn_net.latches counts the READY latches of the namespace, changed under
 * the latch lock as a latch turns READY or stops being so: a repeated
 * open or close cannot unbalance it, and a private area the stack clears
 * without release() could only leave it high, which costs lookups, never
 * ACKs.
 */
void rn_latch_open(struct sock *sk)
{
	struct rn_net *rn = net_generic(sock_net(sk), rn_net_id);
	struct rn_latch *l = inet_csk_ca(sk);
	spinlock_t *lock = rn_lock(sk);

	spin_lock_bh(lock);
	if (!(l->flags & RN_L_READY))
		atomic_inc(&rn->latches);
	*l = (struct rn_latch){ .flags = RN_L_READY };
	spin_unlock_bh(lock);
}
EXPORT_SYMBOL_GPL(rn_latch_open);

void rn_latch_close(struct sock *sk)
{
	struct rn_net *rn = net_generic(sock_net(sk), rn_net_id);
	struct rn_latch *l = inet_csk_ca(sk);
	spinlock_t *lock = rn_lock(sk);

	spin_lock_bh(lock);
	if (l->flags & RN_L_READY)
		atomic_dec(&rn->latches);
	l->flags &= ~RN_L_READY;
	spin_unlock_bh(lock);
}
EXPORT_SYMBOL_GPL(rn_latch_close);

void rn_latch_read(struct sock *sk, bool take_dsack, struct rn_latch *out)
{
	struct rn_latch *l = inet_csk_ca(sk);
	spinlock_t *lock = rn_lock(sk);

	spin_lock_bh(lock);
	*out = *l;
	if (take_dsack)
		l->flags &= ~RN_L_DSACK;
	spin_unlock_bh(lock);
}
EXPORT_SYMBOL_GPL(rn_latch_read);

/*
 * A client's private area must begin with a struct rn_latch, opened in
 * its init() and closed in its release().  The hook only reads the slots
 * (under RCU, as netfilter hooks run): unregistering waits for it.
 */
int rn_latch_register(struct tcp_congestion_ops *ops)
{
	int i, err = -ENOSPC;

	mutex_lock(&rn_clients_mutex);
	for (i = 0; i < RN_CLIENTS_MAX; i++) {
		if (rn_clients[i] == ops) {
			err = -EEXIST;
			break;
		}
		if (!rn_clients[i] && err == -ENOSPC)
			err = i;
	}
	if (err >= 0) {
		WRITE_ONCE(rn_clients[err], ops);
		err = 0;
	}
	mutex_unlock(&rn_clients_mutex);
	return err;
}
EXPORT_SYMBOL_GPL(rn_latch_register);

void rn_latch_unregister(struct tcp_congestion_ops *ops)
{
	int i;

	mutex_lock(&rn_clients_mutex);
	for (i = 0; i < RN_CLIENTS_MAX; i++)
		if (rn_clients[i] == ops)
			WRITE_ONCE(rn_clients[i], NULL);
	mutex_unlock(&rn_clients_mutex);
	synchronize_net();
}
EXPORT_SYMBOL_GPL(rn_latch_unregister);

/* ---- RACK ---- */

/* From in_ack_event: trip for good if the queue was not cleaned yet. */
static void rn_ack_order_check(struct sock *sk)
{
	const struct sk_buff *head;

	if (!READ_ONCE(ack_order_ok))
		return;
	head = tcp_rtx_queue_head(sk);
	if (!rn_acked_still_queued(head, head ? TCP_SKB_CB(head)->end_seq : 0,
				   tcp_sk(sk)->snd_una))
		return;
	WRITE_ONCE(ack_order_ok, false);
	pr_warn("tcp_rn: in_ack_event runs before tcp_clean_rtx_queue on this kernel: RACK steering off\n");
}

/* May the RACK helpers touch RACK's state on this ACK? */
static bool rn_rack_usable(struct sock *sk)
{
	rn_ack_order_check(sk);
	return READ_ONCE(ack_order_ok);
}

bool rn_rack_hold(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (!rn_rack_usable(sk) || !tp->rack.advanced)
		return false;
	tp->rack.advanced = 0;
	return true;
}
EXPORT_SYMBOL_GPL(rn_rack_hold);

/*
 * Zero RACK's reordering window and present the head's age as RACK's RTT:
 * the head (sent before every younger segment) is then overdue and marked
 * lost on this ACK, while younger holes are left to RACK's own window in
 * recovery, as classic SACK leaves them to tp->reordering.  Both values
 * are RACK's per-ACK state: the next ACK sets rack.rtt_us afresh.
 */
u8 rn_rack_fire(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u8 steps = tp->rack.reo_wnd_steps;
	struct sk_buff *skb;
	u32 age;

	if (!rn_rack_usable(sk))
		return steps;		/* rn_rack_restore() is then a no-op */
	tp->rack.reo_wnd_steps = 0;
	if (!tp->rack.mstamp)
		return steps;		/* nothing delivered yet to compare */
	tp->rack.advanced = 1;
	skb = tcp_rtx_queue_head(sk);
	if (skb && !(TCP_SKB_CB(skb)->sacked & TCPCB_SACKED_ACKED)) {
		age = tcp_stamp_us_delta(tp->tcp_mstamp,
					 tcp_skb_timestamp_us(skb));
		if (age > tp->rack.rtt_us + 1)
			tp->rack.rtt_us = age - 1;
	}
	return steps;
}
EXPORT_SYMBOL_GPL(rn_rack_fire);

void rn_rack_restore(struct sock *sk, u8 steps)
{
	struct tcp_sock *tp = tcp_sk(sk);

	tp->rack.reo_wnd_steps = max(steps, tp->rack.reo_wnd_steps);
}
EXPORT_SYMBOL_GPL(rn_rack_restore);

/* Give RACK back the reordering window we zeroed for one ACK. */
static void rn_rack_giveback(struct sock *sk)
{
	struct rn *ca = inet_csk_ca(sk);

	if (!(ca->flags & RN_M_STEPS))
		return;
	ca->flags &= ~RN_M_STEPS;
	rn_rack_restore(sk, ca->rack_steps);
}

/*
 * RACK marks a segment lost once a later one was delivered and its
 * reordering window has passed, whatever tp->reordering says.  While a
 * reordered hole waits for dupthresh, hold RACK back on this ACK.  A
 * dropped hole is left to RACK, whose timer may retransmit it before the
 * third dupACK, never after: at dupthresh (either rule), fire RACK.
 */
static void rn_rack_steer(struct sock *sk, const struct rn_verdict *v)
{
	struct rn *ca = inet_csk_ca(sk);

	if (!tcp_sk(sk)->sacked_out)
		return;
	if (!v->recover) {
		if (v->cls == RN_CLS_REORDER && rn_rack_hold(sk))
			rn_count(sock_net(sk), RN_MIB_RACK_HELD);
		return;
	}
	ca->rack_steps = rn_rack_fire(sk);
	ca->flags |= RN_M_STEPS;
	rn_count(sock_net(sk), RN_MIB_RACK_TRIGGER);
}

/* ---- RN-TCP-ES ---- */

/* A retransmission of the head begins: track it if sent once before. */
static void rn_es_begin(struct sock *sk)
{
	struct rn *ca = inet_csk_ca(sk);
	const struct tcp_sock *tp = tcp_sk(sk);
	struct sk_buff *skb = tcp_rtx_queue_head(sk);

	ca->core.es.state = RN_ES_IDLE;
	if (!READ_ONCE(es) || !skb || tp->retrans_stamp ||
	    (TCP_SKB_CB(skb)->sacked & TCPCB_EVER_RETRANS))
		return;
	rn_es_start(&ca->core.es, TCP_SKB_CB(skb)->seq,
		    TCP_SKB_CB(skb)->end_seq, (u32)tcp_skb_timestamp_us(skb));
}

/* Feed one RN-TCP-ES sample to the RTO estimator. */
static void rn_es_feed(struct sock *sk, u32 sample_us)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct rn_rtt r = {
		.srtt8 = tp->srtt_us,
		.mdev4 = tp->mdev_us,
		.mdev_max4 = tp->mdev_max_us,
		.rttvar4 = tp->rttvar_us,
	};

	rn_rtt_sample(&r, sample_us, tcp_rto_min_us(sk));
	tp->srtt_us = r.srtt8;
	tp->mdev_us = r.mdev4;
	tp->mdev_max_us = r.mdev_max4;
	tp->rttvar_us = r.rttvar4;
	inet_csk(sk)->icsk_rto = __tcp_set_rto(tp);
	tcp_bound_rto(sk);
	rn_count(sock_net(sk), RN_MIB_ES_SAMPLES);
}

static void rn_es_ack(struct sock *sk, const struct rn_ack *a)
{
	struct rn *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	struct rn_es *e = &ca->core.es;
	u32 now = (u32)tp->tcp_mstamp, sample;

	if (e->state == RN_ES_IDLE)
		return;
	if (e->state == RN_ES_SENT) {
		struct sk_buff *skb = tcp_rtx_queue_head(sk);

		if (skb && TCP_SKB_CB(skb)->seq == e->start &&
		    (TCP_SKB_CB(skb)->sacked & TCPCB_RETRANS))
			rn_es_retransmitted(e, (u32)tcp_skb_timestamp_us(skb));
		else if (tp->retrans_stamp)
			rn_es_retransmitted(e, tp->retrans_stamp *
					    (USEC_PER_SEC / TCP_TS_HZ));
	}
	rn_es_acked(e, tp->snd_una, now);
	if (a->dsack && a->dsack_known &&
	    rn_es_dsack(e, a->dsack_start, a->dsack_end, now, &sample))
		rn_es_feed(sk, sample);
	rn_es_expire(e, now, 2 * jiffies_to_usecs(inet_csk(sk)->icsk_rto));
}

/* ---- congestion control ---- */

static void rn_init(struct sock *sk)
{
	struct rn *ca = inet_csk_ca(sk);
	struct rn_params p;

	rn_params(sk, &p);
	rn_sender_init(&ca->core, &p);
	ca->dsack_dups = tcp_sk(sk)->dsack_dups;
	ca->reo_stack = min_t(u32, tcp_sk(sk)->reordering, U16_MAX);
	ca->reo_written = ca->reo_stack;
	ca->rack_steps = 0;
	ca->flags = RN_M_INIT;
	rn_latch_open(sk);
}

/*
 * tp->reordering is the stack's estimate, which tcp_update_metrics()
 * saves per destination for every later connection: our dupthresh goes
 * there only while a hole waits (sacked_out, and data in flight), and
 * the stack's value is back as soon as none does.  A change we did not
 * write is the stack's own (it raised it on reordering deeper than the
 * value in force, or lowered it on a timeout): it becomes the stack's.
 */
static void rn_reo_track(struct sock *sk)
{
	struct rn *ca = inet_csk_ca(sk);
	u32 reo = tcp_sk(sk)->reordering;

	if (reo != ca->reo_written)
		ca->reo_stack = min_t(u32, reo, U16_MAX);
}

static void rn_reo_apply(struct sock *sk, u32 dupthresh)
{
	struct rn *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	bool waiting = tp->sacked_out && tp->snd_una != tp->snd_nxt;

	ca->reo_written = waiting ? dupthresh : ca->reo_stack;
	tp->reordering = ca->reo_written;
}

/*
 * Before the stack reuses the private area (another congestion control,
 * or the socket's end): no more hook writes, and the stack's reordering
 * back.
 */
static void rn_release(struct sock *sk)
{
	struct rn *ca = inet_csk_ca(sk);

	if (!(ca->flags & RN_M_INIT))
		return;
	rn_latch_close(sk);
	rn_reo_track(sk);
	tcp_sk(sk)->reordering = ca->reo_stack;
}

/* Reno's, from the cwnd the limited transmit cap may be holding back. */
static u32 rn_ssthresh(struct sock *sk)
{
	struct rn *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	u32 cwnd = rn_lt_stop(&ca->core);

	if (cwnd) {
		tcp_snd_cwnd_set(tp, cwnd);
		tp->prior_cwnd = cwnd;
	}
	return tcp_reno_ssthresh(sk);
}

/*
 * What bounds Hybla's growth (include/satnet/grow.h).  The private area
 * has no room left for a windowed max: the stack's saved delivery rate
 * sample, the last one not app-limited or a higher app-limited one, which
 * tcp_rate_gen() updated for this ACK before cong_avoid().
 */
static u32 rn_bound(const struct tcp_sock *tp, u32 min_rtt)
{
	return sat_bound(sat_bw_rate(tp->rate_delivered, tp->rate_interval_us),
			 min_rtt);
}

/*
 * Reno, or with rtt0_ms Hybla's growth up to what the path holds; while
 * the cap holds cwnd down, the real cwnd grows.
 */
static void rn_cong_avoid(struct sock *sk, u32 ack, u32 acked)
{
	struct rn *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	u32 min_rtt = tcp_min_rtt(tp);
	u32 rho8 = sat_rho8(min_rtt, READ_ONCE(rtt0_ms));
	u32 bound = rho8 ? rn_bound(tp, min_rtt) : SAT_NO_BOUND;

	if (!(ca->core.flags & RN_F_LT)) {
		rn_grow_cwnd(sk, ack, acked, rho8, bound);
		return;
	}
	tcp_snd_cwnd_set(tp, ca->core.lt_cwnd);
	rn_grow_cwnd(sk, ack, acked, rho8, bound);
	ca->core.lt_cwnd = tcp_snd_cwnd(tp);
	tcp_snd_cwnd_set(tp, rn_lt_cap(&ca->core, tp->sacked_out));
}

/*
 * Reno's undo; under the cap, the undone cwnd is the one held back.  An
 * undo proves a retransmission unnecessary, which ends the timeout
 * fallback as a D-SACK does (rn_on_undo()).
 */
static u32 rn_undo_cwnd(struct sock *sk)
{
	struct rn *ca = inet_csk_ca(sk);
	const struct tcp_sock *tp = tcp_sk(sk);

	if (rn_on_undo(&ca->core))
		rn_count(sock_net(sk), RN_MIB_FALLBACK_END);
	if (!(ca->core.flags & RN_F_LT))
		return tcp_reno_undo_cwnd(sk);
	ca->core.lt_cwnd = max(ca->core.lt_cwnd, tp->prior_cwnd);
	return rn_lt_cap(&ca->core, tp->sacked_out);
}

/*
 * tcp_enter_loss() sets Loss on every timeout, but calls ssthresh() and
 * cwnd_event(CA_EVENT_LOSS) only outside an unfinished recovery: the
 * state change is where a timeout during Recovery is seen too.
 */
static void rn_timeout(struct sock *sk)
{
	struct rn *ca = inet_csk_ca(sk);
	struct rn_params p;

	rn_params(sk, &p);
	if ((ca->core.flags & RN_F_TRAIN) && ca->core.cls == RN_CLS_REORDER)
		rn_count(sock_net(sk), RN_MIB_TIMEOUT_REORDER);
	rn_on_enter(&ca->core, &p, RN_ENTER_LOSS, 0, 0);
	rn_count(sock_net(sk), RN_MIB_TIMEOUTS);
	rn_es_begin(sk);
}

static void rn_set_state(struct sock *sk, u8 new_state)
{
	struct rn *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	struct sk_buff *skb;
	struct rn_params p;
	u32 end;

	rn_rack_giveback(sk);
	if (new_state == TCP_CA_Loss) {
		rn_timeout(sk);
		return;
	}
	if (new_state != TCP_CA_Recovery ||
	    inet_csk(sk)->icsk_ca_state == TCP_CA_Recovery)
		return;
	rn_params(sk, &p);
	skb = tcp_rtx_queue_head(sk);
	end = skb ? TCP_SKB_CB(skb)->end_seq : tp->snd_una + tp->mss_cache;
	rn_on_enter(&ca->core, &p, RN_ENTER_RECOVERY, tp->snd_una, end);
	rn_count(sock_net(sk), RN_MIB_FAST_RETRANS);
	rn_es_begin(sk);
}

/* What this ACK says, from the stack's state and the latch. */
static void rn_gather(struct sock *sk, u32 flags, struct rn_ack *a)
{
	struct rn *ca = inet_csk_ca(sk);
	const struct tcp_sock *tp = tcp_sk(sk);
	u8 state = inet_csk(sk)->icsk_ca_state;
	u32 min_rtt = tcp_min_rtt(tp);
	struct rn_latch l;

	*a = (struct rn_ack){
		.snd_una = tp->snd_una,
		.sacked_out = tp->sacked_out,
		.packets_out = tp->packets_out,
		.cwnd = tcp_snd_cwnd(tp),
		.rwnd = tp->snd_wnd / max_t(u32, tp->mss_cache, 1),
		.srtt_us = tp->srtt_us >> 3,
		.min_rtt_us = min_rtt == ~0U ? 0 : min_rtt,
		.now_ms = tcp_time_stamp_ms(tp),
		.ece = !!(flags & CA_ACK_ECE),
		.dsack = (u16)tp->dsack_dups != ca->dsack_dups,
	};
	if (state >= TCP_CA_Recovery)
		a->state = RN_STATE_RECOVERY;
	else if (state == TCP_CA_CWR)
		a->state = RN_STATE_CWR;
	else
		a->state = RN_STATE_OPEN;
	ca->dsack_dups = tp->dsack_dups;

	rn_latch_read(sk, a->dsack, &l);
	rn_ack_from_latch(a, &l);
}

/* Runs after SACK processing and before loss detection of this ACK. */
static void rn_in_ack_event(struct sock *sk, u32 flags)
{
	struct rn *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	struct net *net = sock_net(sk);
	struct rn_verdict v;
	struct rn_params p;
	struct rn_ack a;

	if (!(ca->flags & RN_M_INIT))
		return;		/* the SYN-ACK, before init() */
	rn_rack_giveback(sk);
	rn_ack_order_check(sk);
	rn_reo_track(sk);
	rn_params(sk, &p);
	rn_gather(sk, flags, &a);
	a.no_undo = !tp->rx_opt.tstamp_ok && !tp->dsack_dups;
	rn_on_ack(&ca->core, &p, &a, &v);

	rn_reo_apply(sk, v.dupthresh);
	if (v.cwnd)
		tcp_snd_cwnd_set(tp, v.cwnd);
	if (a.state != RN_STATE_RECOVERY && rn_is_rack(sk) &&
	    READ_ONCE(rack_steer) && READ_ONCE(ack_order_ok))
		rn_rack_steer(sk, &v);
	rn_es_ack(sk, &a);

	if (v.new_train == RN_CLS_REORDER)
		rn_count(net, RN_MIB_TRAIN_REORDER);
	else if (v.new_train == RN_CLS_DROP)
		rn_count(net, RN_MIB_TRAIN_DROP);
	if (v.recover && v.cls == RN_CLS_REORDER &&
	    inet_csk(sk)->icsk_ca_state < TCP_CA_Recovery)
		rn_count(net, RN_MIB_REORDER_EXPIRED);
	if (v.false_fr)
		rn_count(net, RN_MIB_FALSE_FR);
	if (v.fallback_end)
		rn_count(net, RN_MIB_FALLBACK_END);
	if (v.lt_capped)
		rn_count(net, RN_MIB_LT_CAPPED);
}

/*
 * ss -ti: "dctcp:(ce_state:<false fast retransmits>,alpha:<dupthresh>,
 * ab_ecn:<kval per-mille>,ab_tot:<drop-negative ACKs>)".
 */
static size_t rn_get_info(struct sock *sk, u32 ext, int *attr,
			  union tcp_cc_info *info)
{
	const struct rn *ca = inet_csk_ca(sk);

	return satnet_cc_info(ext, attr, info, READ_ONCE(ca->core.false_frs),
			      READ_ONCE(ca->core.applied),
			      READ_ONCE(ca->core.kval),
			      READ_ONCE(ca->latch.dn_acks));
}

static struct tcp_congestion_ops tcp_rn __read_mostly = {
	.init		= rn_init,
	.release	= rn_release,
	.ssthresh	= rn_ssthresh,
	.cong_avoid	= rn_cong_avoid,
	.set_state	= rn_set_state,
	.in_ack_event	= rn_in_ack_event,
	.undo_cwnd	= rn_undo_cwnd,
	.get_info	= rn_get_info,
	.owner		= THIS_MODULE,
	.name		= "rn",
};

/* ---- /proc/net/rn_sender and the per-netns hooks ---- */

static int rn_proc_show(struct seq_file *seq, void *v)
{
	struct rn_net *rn = net_generic(seq_file_single_net(seq), rn_net_id);
	unsigned long sum[RN_MIB_MAX] = { 0 };
	int cpu, i;

	for_each_possible_cpu(cpu) {
		const struct rn_mib *m = per_cpu_ptr(rn->mib, cpu);

		for (i = 0; i < RN_MIB_MAX; i++)
			sum[i] += READ_ONCE(m->v[i]);
	}
	for (i = 0; i < RN_MIB_MAX; i++)
		seq_printf(seq, "%s %lu\n", rn_mib_names[i], sum[i]);
	return 0;
}

static int __net_init rn_net_init(struct net *net)
{
	struct rn_net *rn = net_generic(net, rn_net_id);
	int err;

	rn->mib = alloc_percpu(struct rn_mib);
	if (!rn->mib)
		return -ENOMEM;
	err = -ENOMEM;
	if (!proc_create_net_single("rn_sender", 0444, net->proc_net,
				    rn_proc_show, NULL))
		goto free_mib;
	err = nf_register_net_hooks(net, rn_nf_ops, ARRAY_SIZE(rn_nf_ops));
	if (err)
		goto free_proc;
	return 0;

free_proc:
	remove_proc_entry("rn_sender", net->proc_net);
free_mib:
	free_percpu(rn->mib);
	return err;
}

static void __net_exit rn_net_exit(struct net *net)
{
	nf_unregister_net_hooks(net, rn_nf_ops, ARRAY_SIZE(rn_nf_ops));
	remove_proc_entry("rn_sender", net->proc_net);
}

/* Hooks still running finish before synchronize_net() returns. */
static void __net_exit rn_net_exit_batch(struct list_head *net_list)
{
	struct net *net;

	synchronize_net();
	list_for_each_entry(net, net_list, exit_list)
		free_percpu(((struct rn_net *)net_generic(net, rn_net_id))->mib);
}

static struct pernet_operations rn_net_ops = {
	.init		= rn_net_init,
	.exit		= rn_net_exit,
	.exit_batch	= rn_net_exit_batch,
	.id		= &rn_net_id,
	.size		= sizeof(struct rn_net),
};

static int __init rn_register(void)
{
	int err, i;

	BUILD_BUG_ON(sizeof(struct rn) > ICSK_CA_PRIV_SIZE);
	BUILD_BUG_ON(offsetof(struct rn, latch) != 0);
	for (i = 0; i < ARRAY_SIZE(rn_locks); i++)
		spin_lock_init(&rn_locks[i]);
	ack_order_ok = SAT_IN_ACK_EVENT_AFTER_CLEAN;
	if (!ack_order_ok)
		pr_info("tcp_rn: in_ack_event may run before tcp_clean_rtx_queue on this kernel: RACK steering off\n");
	err = register_pernet_subsys(&rn_net_ops);
	if (err)
		return err;
	err = tcp_register_congestion_control(&tcp_rn);
	if (err)
		unregister_pernet_subsys(&rn_net_ops);
	return err;
}

static void __exit rn_unregister(void)
{
	tcp_unregister_congestion_control(&tcp_rn);
	unregister_pernet_subsys(&rn_net_ops);
}

module_init(rn_register);
module_exit(rn_unregister);

MODULE_AUTHOR("satnet project");
MODULE_LICENSE("GPL");
MODULE_VERSION(SATNET_VERSION);
MODULE_DESCRIPTION("RN-TCP sender: drop-negative dupthresh, kval, RN-TCP-ES");
MODULE_ALIAS("tcp-rn");
