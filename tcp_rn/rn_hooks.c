// SPDX-License-Identifier: GPL-2.0
/*
 * rn_host: the host hooks of RN-TCP with EPDN.
 *
 * A. Sathiaseelan, T. Radzik, "RN-TCP with EPDN" (seed 001).
 *
 * Two features, each switched per network namespace by a sysctl:
 *
 * net.rn.receiver (§IV, §IV-A): the RN-TCP receiver.  Incoming TCP/IPv4
 *	data (LOCAL_IN) updates its flow's drop list and reorder list from the
 *	EPDN option it carries.  Outgoing ACKs (LOCAL_OUT) carry the
 *	drop-negative bit (include/satnet/rn_wire.h) when the first missing
 *	byte, the ACK number, is in the reorder list.
 * net.rn.epdn_origin (§III-D): outgoing TCP/IPv4 data gets an empty EPDN
 *	option whose EPDN-TTL starts at the packet's TTL, so that EPDN-TTL ==
 *	TTL at the receiver proves that every router ran EPDN.
 *
 * The lists and the case analysis live in rn_recv_core.c, plain C shared
 * with the unit test.  This file holds the per-netns flow table, packet
 * access and mangling, the counters (/proc/net/rn_host), the sysctls and
 * teardown.  docs/rn-tcp.md describes the interface.
 *
 * Who may switch them on: the host's root, in a namespace that the
 * initial user namespace owns (the initial one, or one from ip netns add).
 * Anyone can make a network namespace inside a user namespace of their
 * own (unshare -Urn) and be root there; the hooks parse hostile options
 * in softirq and keep up to max_flows entries per namespace, allocated
 * GFP_ATOMIC and charged to no memory cgroup.  Such a namespace gets no
 * net.rn sysctls, as with net.core and xfrm, and so neither hooks nor
 * flow table: only /proc/net/rn_host, all zeros.
 *
 * Locking: one spinlock per netns guards its flow table, both LRU lists
 * and the timer arming.  Hooks run in softirq (LOCAL_IN) and in process
 * context (LOCAL_OUT), so every taker disables BHs.  Flows are allocated
 * with GFP_ATOMIC and capped by max_flows; packets are changed only after
 * the lock is dropped.
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/types.h>
#include <linux/skbuff.h>
#include <linux/ip.h>
#include <linux/tcp.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/jhash.h>
#include <linux/random.h>
#include <linux/jiffies.h>
#include <linux/timer.h>
#include <linux/percpu.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/sysctl.h>
#include <linux/netfilter.h>
#include <linux/netfilter_ipv4.h>
#include <net/ip.h>
#include <net/checksum.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>

#include <satnet/compat.h>
#include <satnet/epdn_wire.h>
#include <satnet/hdr.h>
#include <satnet/rn_wire.h>
#include <satnet/rn_recv_core.h>
#include <satnet/tcp_csum.h>

#define RN_FLOWS_MAX		BIT(20)
#define RN_IDLE_MIN_MS		100
#define RN_IDLE_MAX_MS		(3600U * 1000)
#define RN_EVICT_BATCH		64	/* evictions per new flow, at most */
#define RN_GC_BUDGET		1024	/* flows aged per timer run, at most */
#define RN_BUCKETS_MIN		64
#define RN_BUCKETS_MAX		65536

static unsigned int max_flows = 4096;
module_param(max_flows, uint, 0644);
MODULE_PARM_DESC(max_flows,
		 "Receiver flows per network namespace; beyond it the oldest is evicted (default 4096)");

static unsigned int flow_idle_ms = 30000;
module_param(flow_idle_ms, uint, 0644);
MODULE_PARM_DESC(flow_idle_ms,
		 "Free a receiver flow idle for this long, ms (default 30000)");

/* Counters, per netns and per CPU; /proc/net/rn_host prints them. */
enum rn_stat {
	RN_ST_DATA,
	RN_ST_UNTRACKED,
	RN_ST_OUTSIDE,
	RN_ST_CSUM,
	RN_ST_OPT_ABSENT,
	RN_ST_OPT_TRUSTED,
	RN_ST_OPT_TTL,
	RN_ST_OPT_NOHOST,
	RN_ST_OPT_MALFORMED,
	RN_ST_OPT_WIDE,
	RN_ST_OPT_UNKNOWN,
	RN_ST_HDR_MALFORMED,
	RN_ST_FRAGMENTS,
	RN_ST_FLOWS_CREATED,
	RN_ST_FLOWS_EVICTED,
	RN_ST_FLOWS_FIN,
	RN_ST_FLOWS_RST,
	RN_ST_RST_IGNORED,
	RN_ST_FLOWS_RESTART,
	RN_ST_FLOWS_AGED,
	RN_ST_FLOWS_NOMEM,
	RN_ST_RANGE_OVERFLOWS,
	RN_ST_PAWS,
	RN_ST_ACK_MARKED,
	RN_ST_ACK_UNMARKED,
	RN_ST_ACK_UNCLASSIFIED,
	RN_ST_ACK_INORDER,
	RN_ST_ACK_NOMEM,
	RN_ST_ORIGIN_STAMPED,
	RN_ST_ORIGIN_SKIP_MTU,
	RN_ST_ORIGIN_SKIP_OPTS,
	RN_ST_ORIGIN_NOMEM,
	RN_ST_MAX
};

static const char * const rn_stat_names[RN_ST_MAX] = {
	[RN_ST_DATA]		 = "data_segments",
	[RN_ST_UNTRACKED]	 = "data_untracked",
	[RN_ST_OUTSIDE]		 = "data_outside_window",
	[RN_ST_CSUM]		 = "data_bad_csum",
	[RN_ST_OPT_ABSENT]	 = "opt_absent",
	[RN_ST_OPT_TRUSTED]	 = "opt_trusted",
	[RN_ST_OPT_TTL]		 = "opt_distrusted",
	[RN_ST_OPT_NOHOST]	 = "opt_not_host",
	[RN_ST_OPT_MALFORMED]	 = "opt_malformed",
	[RN_ST_OPT_WIDE]	 = "opt_wide_range",
	[RN_ST_OPT_UNKNOWN]	 = "opt_unknown",
	[RN_ST_HDR_MALFORMED]	 = "hdr_malformed",
	[RN_ST_FRAGMENTS]	 = "fragments",
	[RN_ST_FLOWS_CREATED]	 = "flows_created",
	[RN_ST_FLOWS_EVICTED]	 = "flows_evicted",
	[RN_ST_FLOWS_FIN]	 = "flows_freed_fin",
	[RN_ST_FLOWS_RST]	 = "flows_freed_rst",
	[RN_ST_RST_IGNORED]	 = "rst_off_sequence",
	[RN_ST_FLOWS_RESTART]	 = "flows_restarted",
	[RN_ST_FLOWS_AGED]	 = "flows_aged",
	[RN_ST_FLOWS_NOMEM]	 = "flows_nomem",
	[RN_ST_RANGE_OVERFLOWS]	 = "range_overflows",
	[RN_ST_PAWS]		 = "data_paws_discarded",
	[RN_ST_ACK_MARKED]	 = "acks_marked",
	[RN_ST_ACK_UNMARKED]	 = "acks_unmarked",
	[RN_ST_ACK_UNCLASSIFIED] = "acks_unclassified",
	[RN_ST_ACK_INORDER]	 = "acks_inorder",
	[RN_ST_ACK_NOMEM]	 = "acks_nomem",
	[RN_ST_ORIGIN_STAMPED]	 = "origin_stamped",
	[RN_ST_ORIGIN_SKIP_MTU]	 = "origin_skip_mtu",
	[RN_ST_ORIGIN_SKIP_OPTS] = "origin_skip_opts",
	[RN_ST_ORIGIN_NOMEM]	 = "origin_nomem",
};

struct rn_stats {
	unsigned long c[RN_ST_MAX];
};

/* The data direction of a connection: peer (saddr) to us (daddr). */
struct rn_key {
	u32 saddr;		/* network byte order, as read */
	u32 daddr;
	u16 sport;
	u16 dport;
};

struct rn_flow {
	struct hlist_node node;
	struct list_head lru;		/* on rn_net.fresh or rn_net.live */
	struct rn_key key;
	unsigned long seen;		/* jiffies of the last packet */
	bool has_data;			/* moved from fresh to live */
	struct rn_recv st;
};

struct rn_net {
	int receiver;			/* sysctl net.rn.receiver */
	int epdn_origin;		/* sysctl net.rn.epdn_origin */
	int require_host;		/* sysctl net.rn.require_host */
	spinlock_t lock;		/* everything below */
	struct hlist_head *buckets;
	u32 hmask;
	u32 seed;
	u32 count;			/* live flows */
	bool dying;			/* netns exit: do not arm the timer */
	struct list_head fresh;		/* LRU of flows without data yet */
	struct list_head live;		/* LRU of flows that received data */
	struct timer_list gc;		/* frees idle flows */
	struct ctl_table_header *sysctl;
	struct rn_stats __percpu *stats;
};

/* One TCP/IPv4 packet, headers copied and checked. */
struct rn_pkt {
	u8 iph[EPDN_IPV4_HDR_MAX];
	u8 th[SAT_TCP_HDR_MAX];
	struct sat_ip ip;
	struct sat_tcp tcp;
	u32 thoff;			/* TCP header offset from skb->data */
};

enum rn_pkt_class {
	RN_PKT_TCP,
	RN_PKT_OTHER,
	RN_PKT_FRAG,
	RN_PKT_BAD,
};

static unsigned int rn_net_id __read_mostly;
static struct kmem_cache *rn_flow_cache __read_mostly;

static struct rn_net *rn_pernet(const struct net *net)
{
	return net_generic(net, rn_net_id);
}

static void rn_stat_add(struct rn_net *rn, enum rn_stat s, unsigned long n)
{
	this_cpu_add(rn->stats->c[s], n);
}

static void rn_stat_inc(struct rn_net *rn, enum rn_stat s)
{
	this_cpu_inc(rn->stats->c[s]);
}

static u32 rn_max_flows(void)
{
	return clamp_t(u32, READ_ONCE(max_flows), 1, RN_FLOWS_MAX);
}

static unsigned long rn_idle(void)
{
	return msecs_to_jiffies(clamp_t(u32, READ_ONCE(flow_idle_ms),
					RN_IDLE_MIN_MS, RN_IDLE_MAX_MS));
}

/* ---- the flow table ---- */

static u32 rn_hash(const struct rn_net *rn, const struct rn_key *k)
{
	return jhash_3words(k->saddr, k->daddr,
			    (u32)k->sport << 16 | k->dport, rn->seed) &
	       rn->hmask;
}

static struct rn_flow *rn_flow_find(struct rn_net *rn, const struct rn_key *k)
{
	struct rn_flow *f;

	hlist_for_each_entry(f, &rn->buckets[rn_hash(rn, k)], node)
		if (!memcmp(&f->key, k, sizeof(*k)))
			return f;
	return NULL;
}

static void rn_flow_free(struct rn_net *rn, struct rn_flow *f,
			 enum rn_stat why)
{
	hlist_del(&f->node);
	list_del(&f->lru);
	rn->count--;
	rn_stat_inc(rn, why);
	kmem_cache_free(rn_flow_cache, f);
}

/* Flows that never received data go first: a SYN flood evicts itself. */
static struct rn_flow *rn_flow_oldest(struct rn_net *rn)
{
	if (!list_empty(&rn->fresh))
		return list_first_entry(&rn->fresh, struct rn_flow, lru);
	return list_first_entry_or_null(&rn->live, struct rn_flow, lru);
}

/* Make room under the cap; false if a lowered cap needs more work. */
static bool rn_flow_make_room(struct rn_net *rn)
{
	u32 max = rn_max_flows(), n;

	for (n = 0; rn->count >= max && n < RN_EVICT_BATCH; n++)
		rn_flow_free(rn, rn_flow_oldest(rn), RN_ST_FLOWS_EVICTED);
	return rn->count < max;
}

static void rn_gc_arm(struct rn_net *rn)
{
	unsigned long every = clamp_t(unsigned long, rn_idle() / 4,
				      HZ / 10, 10 * HZ);

	if (!rn->dying && !timer_pending(&rn->gc))
		mod_timer(&rn->gc, jiffies + every);
}

static struct rn_flow *rn_flow_create(struct rn_net *rn,
				      const struct rn_key *k)
{
	struct rn_flow *f;

	if (!rn_flow_make_room(rn))
		return NULL;
	f = kmem_cache_alloc(rn_flow_cache, GFP_ATOMIC | __GFP_NOWARN);
	if (!f) {
		rn_stat_inc(rn, RN_ST_FLOWS_NOMEM);
		return NULL;
	}
	f->key = *k;
	f->seen = jiffies;
	f->has_data = false;
	hlist_add_head(&f->node, &rn->buckets[rn_hash(rn, k)]);
	list_add_tail(&f->lru, &rn->fresh);
	rn->count++;
	rn_stat_inc(rn, RN_ST_FLOWS_CREATED);
	rn_gc_arm(rn);
	return f;
}

static void rn_flow_touch(struct rn_net *rn, struct rn_flow *f)
{
	f->seen = jiffies;
	list_move_tail(&f->lru, f->has_data ? &rn->live : &rn->fresh);
}

static u32 rn_age_list(struct rn_net *rn, struct list_head *lru,
		       unsigned long idle, u32 budget)
{
	struct rn_flow *f, *tmp;
	u32 n = 0;

	list_for_each_entry_safe(f, tmp, lru, lru) {
		if (n == budget || time_before(jiffies, f->seen + idle))
			break;
		rn_flow_free(rn, f, RN_ST_FLOWS_AGED);
		n++;
	}
	return n;
}

/* Both lists are in LRU order: age from the head until a recent flow. */
static void rn_gc(struct timer_list *t)
{
	struct rn_net *rn = from_timer(rn, t, gc);
	unsigned long idle = rn_idle();
	u32 aged;

	spin_lock(&rn->lock);
	aged = rn_age_list(rn, &rn->fresh, idle, RN_GC_BUDGET);
	rn_age_list(rn, &rn->live, idle, RN_GC_BUDGET - aged);
	if (rn->count)
		rn_gc_arm(rn);
	spin_unlock(&rn->lock);
}

static void rn_flow_drop_key(struct rn_net *rn, const struct rn_key *k,
			     enum rn_stat why)
{
	struct rn_flow *f;

	spin_lock_bh(&rn->lock);
	f = rn_flow_find(rn, k);
	if (f)
		rn_flow_free(rn, f, why);
	spin_unlock_bh(&rn->lock);
}

static bool rn_flow_tracked(struct rn_net *rn, const struct rn_key *k)
{
	bool found;

	spin_lock_bh(&rn->lock);
	found = rn_flow_find(rn, k);
	spin_unlock_bh(&rn->lock);
	return found;
}

/*
 * An incoming reset ends the flow only at exactly its in-order point (RFC
 * 5961 §3.2); TCP answers any other one in the window with a challenge
 * ACK, and the flow goes on.
 */
static void rn_flow_reset(struct rn_net *rn, const struct rn_key *k, u32 seq)
{
	struct rn_flow *f;
	bool ok = false;

	spin_lock_bh(&rn->lock);
	f = rn_flow_find(rn, k);
	if (f) {
		ok = rn_recv_rst_ok(&f->st, seq);
		if (ok)
			rn_flow_free(rn, f, RN_ST_FLOWS_RST);
	}
	spin_unlock_bh(&rn->lock);
	if (f && !ok)
		rn_stat_inc(rn, RN_ST_RST_IGNORED);
}

/* ---- packet access ---- */

static enum rn_pkt_class rn_pkt_parse(struct sk_buff *skb, struct rn_pkt *p)
{
	u32 noff = skb_network_offset(skb), avail, cap, l4;
	const u8 *h;

	if (skb->len <= noff)
		return RN_PKT_BAD;
	avail = skb->len - noff;
	cap = min_t(u32, avail, EPDN_IPV4_HDR_MAX);
	h = skb_header_pointer(skb, noff, cap, p->iph);
	if (!h || sat_parse_ipv4(h, cap, avail, false, &p->ip))
		return RN_PKT_BAD;
	if (p->ip.proto != IPPROTO_TCP)
		return RN_PKT_OTHER;
	if (p->ip.frag)
		return RN_PKT_FRAG;
	if (h != p->iph)
		memcpy(p->iph, h, p->ip.hdr_len);
	l4 = p->ip.tot_len - p->ip.hdr_len;
	p->thoff = noff + p->ip.hdr_len;
	cap = min_t(u32, l4, SAT_TCP_HDR_MAX);
	h = skb_header_pointer(skb, p->thoff, cap, p->th);
	if (!h || sat_parse_tcp(h, cap, l4, &p->tcp))
		return RN_PKT_BAD;
	if (h != p->th)
		memcpy(p->th, h, p->tcp.hdr_len);
	return RN_PKT_TCP;
}

/* A TCP/IPv4 packet with sane headers; the others are counted. */
static bool rn_pkt_tcp(struct rn_net *rn, struct sk_buff *skb,
		       struct rn_pkt *p)
{
	switch (rn_pkt_parse(skb, p)) {
	case RN_PKT_TCP:
		return true;
	case RN_PKT_FRAG:
		rn_stat_inc(rn, RN_ST_FRAGMENTS);
		return false;
	case RN_PKT_BAD:
		rn_stat_inc(rn, RN_ST_HDR_MALFORMED);
		return false;
	default:
		return false;
	}
}

/* The key of the data direction: incoming data as is, outgoing reversed. */
static void rn_key_of(const struct rn_pkt *p, bool outgoing, struct rn_key *k)
{
	if (outgoing) {
		k->saddr = p->ip.daddr;
		k->daddr = p->ip.saddr;
		k->sport = p->tcp.dport;
		k->dport = p->tcp.sport;
	} else {
		k->saddr = p->ip.saddr;
		k->daddr = p->ip.daddr;
		k->sport = p->tcp.sport;
		k->dport = p->tcp.dport;
	}
}

/* ---- receiver: incoming data (§IV) ---- */

static void rn_count_evidence(struct rn_net *rn, enum rn_ev_status s)
{
	static const enum rn_stat map[] = {
		[RN_EVS_ABSENT]		= RN_ST_OPT_ABSENT,
		[RN_EVS_TRUSTED]	= RN_ST_OPT_TRUSTED,
		[RN_EVS_TTL]		= RN_ST_OPT_TTL,
		[RN_EVS_NOHOST]		= RN_ST_OPT_NOHOST,
		[RN_EVS_MALFORMED]	= RN_ST_OPT_MALFORMED,
	};

	rn_stat_inc(rn, map[s]);
}

/*
 * Run one segment through its flow's lists; false if it has no flow.  Its
 * option's evidence counts even when TCP will discard the segment (PAWS);
 * its own bytes then count as dropped.
 */
static bool rn_data_apply(struct rn_net *rn, const struct rn_pkt *p,
			  const struct rn_tcpopts *o,
			  const struct rn_evidence *ev)
{
	struct rn_range seg = { .start = p->tcp.seq, .end = p->tcp.end_seq };
	enum rn_data_result res;
	struct rn_flow *f;
	struct rn_key k;
	bool paws;
	u32 ovf;

	rn_key_of(p, false, &k);
	spin_lock_bh(&rn->lock);
	f = rn_flow_find(rn, &k);
	if (!f) {
		spin_unlock_bh(&rn->lock);
		return false;
	}
	ovf = rn_recv_overflows(&f->st);
	paws = o->ts && rn_recv_paws(&f->st, &seg, o->tsval);
	res = rn_recv_data(&f->st, &seg, ev);
	if (paws)
		rn_recv_discarded(&f->st, &seg);
	if (res != RN_DATA_OUTSIDE) {
		if (p->tcp.flags & SAT_TCP_FIN)
			rn_recv_fin(&f->st, p->tcp.end_seq);
		f->has_data = true;
		rn_flow_touch(rn, f);
	}
	ovf = rn_recv_overflows(&f->st) - ovf;
	spin_unlock_bh(&rn->lock);
	if (paws)
		rn_stat_inc(rn, RN_ST_PAWS);
	if (res == RN_DATA_OUTSIDE)
		rn_stat_inc(rn, RN_ST_OUTSIDE);
	if (res == RN_DATA_WIDE)
		rn_stat_inc(rn, RN_ST_OPT_WIDE);
	if (ovf)
		rn_stat_add(rn, RN_ST_RANGE_OVERFLOWS, ovf);
	return true;
}

static void rn_data_segment(struct rn_net *rn, const struct rn_pkt *p)
{
	struct rn_evidence ev;
	struct rn_tcpopts o;
	enum rn_ev_status s;

	rn_stat_inc(rn, RN_ST_DATA);
	s = rn_epdn_evidence(p->iph, &p->ip, READ_ONCE(rn->require_host), &ev);
	rn_count_evidence(rn, s);
	if (s == RN_EVS_TRUSTED && ev.unknown)
		rn_stat_inc(rn, RN_ST_OPT_UNKNOWN);
	rn_parse_tcpopts(p->th + SAT_TCP_HDR_MIN,
			 p->tcp.hdr_len - SAT_TCP_HDR_MIN, p->tcp.ack, &o);
	if (!rn_data_apply(rn, p, &o, &ev))
		rn_stat_inc(rn, RN_ST_UNTRACKED);
}

/* Segments that occupy sequence space, and resets; the peer's SYN is not. */
static bool rn_in_wanted(const struct sat_tcp *t)
{
	if (t->flags & SAT_TCP_RST)
		return true;
	return !(t->flags & SAT_TCP_SYN) && t->end_seq != t->seq;
}

static bool rn_tcp_csum_ok(struct sk_buff *skb, const struct rn_pkt *p)
{
	u32 len = p->ip.tot_len - p->ip.hdr_len;

	return satnet_tcp_csum_ok(skb, p->thoff, len,
				  csum_tcpudp_nofold((__force __be32)p->ip.saddr,
						     (__force __be32)p->ip.daddr,
						     len, IPPROTO_TCP, 0));
}

/* A segment of a flow we do not track: counted, and not summed. */
static void rn_untracked_segment(struct rn_net *rn, const struct rn_pkt *p)
{
	struct rn_evidence ev;

	if (p->tcp.flags & SAT_TCP_RST)
		return;
	rn_stat_inc(rn, RN_ST_DATA);
	rn_count_evidence(rn, rn_epdn_evidence(p->iph, &p->ip,
					       READ_ONCE(rn->require_host),
					       &ev));
	rn_stat_inc(rn, RN_ST_UNTRACKED);
}

/*
 * LOCAL_IN: reassembled, routed to us, past the filter table.  Only
 * segments whose TCP checksum holds are used: a corrupted sequence number
 * must not open a gap.  The flow is looked up first, so that only the
 * segments of tracked flows are summed here.
 */
static unsigned int rn_in_hook(void *priv, struct sk_buff *skb,
			       const struct nf_hook_state *state)
{
	struct rn_net *rn = rn_pernet(state->net);
	struct rn_pkt p;
	struct rn_key k;

	if (!READ_ONCE(rn->receiver) || !rn_pkt_tcp(rn, skb, &p) ||
	    !rn_in_wanted(&p.tcp))
		return NF_ACCEPT;
	rn_key_of(&p, false, &k);
	if (!rn_flow_tracked(rn, &k)) {
		rn_untracked_segment(rn, &p);
		return NF_ACCEPT;
	}
	if (!rn_tcp_csum_ok(skb, &p)) {
		rn_stat_inc(rn, RN_ST_CSUM);
		return NF_ACCEPT;
	}
	if (p.tcp.flags & SAT_TCP_RST)
		rn_flow_reset(rn, &k, p.tcp.seq);
	else
		rn_data_segment(rn, &p);
	return NF_ACCEPT;
}

/* ---- receiver: outgoing ACKs (§IV-A) ---- */

/* A flow starts at our SYN-ACK, or mid-connection at a pure ACK. */
static bool rn_ack_may_create(const struct sat_tcp *t)
{
	if (t->flags & SAT_TCP_SYN)
		return true;
	return !t->payload && !(t->flags & (SAT_TCP_FIN | SAT_TCP_RST));
}

/* The window we advertise, in bytes; a SYN's window is never scaled. */
static u32 rn_ack_window(const struct sat_tcp *t, u8 wscale)
{
	if (t->flags & SAT_TCP_SYN)
		return t->win;
	return (u32)t->win << wscale;
}

static void rn_flow_start(struct rn_flow *f, const struct sat_tcp *t,
			  const struct rn_tcpopts *o)
{
	u8 wscale = RN_WSCALE_MAX;	/* unknown mid-connection: widest */

	if (t->flags & SAT_TCP_SYN)
		wscale = o->wscale < 0 ? 0 : o->wscale;
	rn_recv_init(&f->st, t->ack, rn_ack_window(t, wscale), wscale);
	if (o->sack)
		rn_recv_set_high(&f->st, o->sack_high);
}

/*
 * The entry an outgoing ACK uses.  Our SYN-ACK starts a connection, so it
 * starts the entry afresh even when one is left on the 4-tuple (a TIME-WAIT
 * ACK of an earlier connection creates one).
 */
static struct rn_flow *rn_ack_flow(struct rn_net *rn, const struct rn_key *k,
				   const struct sat_tcp *t,
				   const struct rn_tcpopts *o)
{
	struct rn_flow *f = rn_flow_find(rn, k);

	if (f && !(t->flags & SAT_TCP_SYN))
		return f;
	if (!f && !rn_ack_may_create(t))
		return NULL;
	if (f)
		rn_stat_inc(rn, RN_ST_FLOWS_RESTART);
	else
		f = rn_flow_create(rn, k);
	if (!f)
		return NULL;
	f->has_data = false;
	rn_flow_start(f, t, o);
	return f;
}

/* The §IV-A decision for one outgoing ACK, or -1 for an untracked flow. */
static int rn_ack_decide(struct rn_net *rn, const struct rn_pkt *p)
{
	const struct sat_tcp *t = &p->tcp;
	struct rn_tcpopts o;
	struct rn_flow *f;
	struct rn_key k;
	int mark;

	rn_key_of(p, true, &k);
	rn_parse_tcpopts(p->th + SAT_TCP_HDR_MIN, t->hdr_len - SAT_TCP_HDR_MIN,
			 t->ack, &o);
	spin_lock_bh(&rn->lock);
	f = rn_ack_flow(rn, &k, t, &o);
	if (!f) {
		spin_unlock_bh(&rn->lock);
		return -1;
	}
	if (o.ts)
		rn_recv_tstamps(&f->st);
	mark = rn_recv_ack(&f->st, t->ack, rn_ack_window(t, f->st.wscale));
	rn_recv_sacked(&f->st, o.blocks, o.nblocks);
	rn_flow_touch(rn, f);
	if (rn_recv_done(&f->st))
		rn_flow_free(rn, f, RN_ST_FLOWS_FIN);
	spin_unlock_bh(&rn->lock);
	return mark;
}

static void rn_count_mark(struct rn_net *rn, int mark)
{
	static const enum rn_stat map[] = {
		[RN_MARK_INORDER]	= RN_ST_ACK_INORDER,
		[RN_MARK_REORDER]	= RN_ST_ACK_MARKED,
		[RN_MARK_DROP]		= RN_ST_ACK_UNMARKED,
		[RN_MARK_UNKNOWN]	= RN_ST_ACK_UNCLASSIFIED,
	};

	rn_stat_inc(rn, map[mark]);
}

/*
 * Write the drop-negative bit: byte 12 of the TCP header, mask RN_DN_MASK.
 * The checksum follows incrementally; for CHECKSUM_PARTIAL the stack or
 * the device sums the header later, and inet_proto_csum_replace2 knows.
 * Both the bit and the checksum field must be in the writable head: a
 * large raw send can leave everything after the IP header in page frags.
 */
static void rn_ack_write(struct rn_net *rn, struct sk_buff *skb,
			 const struct rn_pkt *p, bool set)
{
	u32 need = p->thoff + offsetofend(struct tcphdr, check);
	u8 old = p->th[RN_DN_BYTE];
	u8 new = set ? old | RN_DN_MASK : old & ~RN_DN_MASK;
	__be16 *word, before;
	struct tcphdr *th;

	if (old == new)
		return;
	if (skb_ensure_writable(skb, need)) {
		rn_stat_inc(rn, RN_ST_ACK_NOMEM);
		return;
	}
	th = (struct tcphdr *)(skb->data + p->thoff);
	word = (__be16 *)((u8 *)th + RN_DN_BYTE);
	before = *word;
	((u8 *)th)[RN_DN_BYTE] = new;
	inet_proto_csum_replace2(&th->check, skb, before, *word, false);
}

/*
 * What the kernel's TCP sends, from a socket, a request or TIME-WAIT
 * minisock, its control socket (resets, TIME-WAIT ACKs) or none (a
 * SYN-ACK with a cookie): anything but a user's raw socket, whose packets
 * leave as built and say nothing about our receive state.
 */
static bool rn_tcp_sends(const struct sock *sk)
{
	return !sk || !sk_fullsock(sk) || sk->sk_type != SOCK_RAW ||
	       sk->sk_kern_sock;
}

static unsigned int rn_ack_hook(void *priv, struct sk_buff *skb,
				const struct nf_hook_state *state)
{
	struct rn_net *rn = rn_pernet(state->net);
	struct rn_pkt p;
	struct rn_key k;
	int mark;

	if (!READ_ONCE(rn->receiver) || !rn_tcp_sends(state->sk) ||
	    !rn_pkt_tcp(rn, skb, &p))
		return NF_ACCEPT;
	rn_key_of(&p, true, &k);
	if (p.tcp.flags & SAT_TCP_RST) {
		rn_flow_drop_key(rn, &k, RN_ST_FLOWS_RST);
		return NF_ACCEPT;
	}
	/* Our SYN opens a new connection: an old entry on the tuple goes. */
	if (!(p.tcp.flags & SAT_TCP_ACK)) {
		if (p.tcp.flags & SAT_TCP_SYN)
			rn_flow_drop_key(rn, &k, RN_ST_FLOWS_RESTART);
		return NF_ACCEPT;
	}
	mark = rn_ack_decide(rn, &p);
	if (mark < 0)
		return NF_ACCEPT;
	rn_count_mark(rn, mark);
	rn_ack_write(rn, skb, &p, mark == RN_MARK_REORDER);
	return NF_ACCEPT;
}

/* ---- EPDN origin (§III-D) ---- */

/* The MTU ip_finish_output will hold this packet to, and the device's. */
static u32 rn_out_mtu(struct sk_buff *skb, const struct nf_hook_state *state)
{
	u32 mtu = ip_skb_dst_mtu(state->sk, skb);

	if (state->out)
		mtu = min_t(u32, mtu, READ_ONCE(state->out->mtu));
	return mtu;
}

/* The largest IP packet this skb becomes: one GSO segment, or itself. */
static u32 rn_out_seg_len(const struct sk_buff *skb, const struct rn_pkt *p)
{
	if (skb_is_gso(skb))
		return p->ip.hdr_len + p->tcp.hdr_len +
		       skb_shinfo(skb)->gso_size;
	return p->ip.tot_len;
}

/*
 * Open EPDN_OPT_LEN bytes after the 20-byte IPv4 header: the IP header
 * moves into the headroom, the TCP header and payload stay, so the
 * CHECKSUM_PARTIAL offsets stay valid.  IP options are not part of the
 * TCP pseudo-header: only the IP checksum changes.
 */
static int rn_origin_insert(struct sk_buff *skb, u8 ttl)
{
	u32 hlen = skb_network_offset(skb) + EPDN_IPV4_HDR_MIN;
	struct iphdr *iph;

	if (skb_ensure_writable(skb, hlen) || skb_cow_head(skb, EPDN_OPT_LEN))
		return -ENOMEM;
	__skb_push(skb, EPDN_OPT_LEN);
	memmove(skb->data, skb->data + EPDN_OPT_LEN, hlen);
	if (skb_mac_header_was_set(skb))
		skb->mac_header -= EPDN_OPT_LEN;
	skb->network_header -= EPDN_OPT_LEN;
	iph = ip_hdr(skb);
	rn_epdn_encode_empty((u8 *)iph + EPDN_IPV4_HDR_MIN, ttl);
	iph->ihl += EPDN_OPT_WORDS;
	be16_add_cpu(&iph->tot_len, EPDN_OPT_LEN);
	ip_send_check(iph);
	return 0;
}

/* Only what TCP itself sends: a packet from a raw socket stays as built. */
static bool rn_from_tcp(const struct sock *sk)
{
	return sk && sk_fullsock(sk) && sk->sk_type == SOCK_STREAM &&
	       sk->sk_protocol == IPPROTO_TCP;
}

/*
 * LOCAL_OUT: ip_queue_xmit set TTL and __ip_local_out set tot_len and the
 * checksum before this hook, so EPDN-TTL starts at the TTL the packet
 * leaves with.  The first EPDN router lowers both together.
 */
static unsigned int rn_origin_hook(void *priv, struct sk_buff *skb,
				   const struct nf_hook_state *state)
{
	struct rn_net *rn = rn_pernet(state->net);
	enum rn_origin_action act;
	struct rn_pkt p;

	if (!READ_ONCE(rn->epdn_origin) || !rn_from_tcp(state->sk) ||
	    !skb_dst(skb) || !rn_pkt_tcp(rn, skb, &p) || !p.tcp.payload)
		return NF_ACCEPT;
	act = rn_origin_decide(p.ip.hdr_len, rn_out_seg_len(skb, &p),
			       rn_out_mtu(skb, state));
	if (act == RN_ORIGIN_SKIP_OPTS)
		rn_stat_inc(rn, RN_ST_ORIGIN_SKIP_OPTS);
	else if (act == RN_ORIGIN_SKIP_MTU)
		rn_stat_inc(rn, RN_ST_ORIGIN_SKIP_MTU);
	else if (rn_origin_insert(skb, p.ip.ttl))
		rn_stat_inc(rn, RN_ST_ORIGIN_NOMEM);
	else
		rn_stat_inc(rn, RN_ST_ORIGIN_STAMPED);
	return NF_ACCEPT;
}

/* Last, so that filter and NAT see the packet as the stack made it. */
static const struct nf_hook_ops rn_nf_ops[] = {
	{
		.hook		= rn_in_hook,
		.pf		= NFPROTO_IPV4,
		.hooknum	= NF_INET_LOCAL_IN,
		.priority	= NF_IP_PRI_LAST,
	},
	{
		.hook		= rn_ack_hook,
		.pf		= NFPROTO_IPV4,
		.hooknum	= NF_INET_LOCAL_OUT,
		.priority	= NF_IP_PRI_LAST,
	},
	{
		.hook		= rn_origin_hook,
		.pf		= NFPROTO_IPV4,
		.hooknum	= NF_INET_LOCAL_OUT,
		.priority	= NF_IP_PRI_LAST,
	},
};

/* ---- /proc/net/rn_host ---- */

static void rn_stats_sum(struct rn_net *rn, unsigned long *sum)
{
	int cpu, i;

	memset(sum, 0, RN_ST_MAX * sizeof(*sum));
	for_each_possible_cpu(cpu) {
		const struct rn_stats *s = per_cpu_ptr(rn->stats, cpu);

		for (i = 0; i < RN_ST_MAX; i++)
			sum[i] += READ_ONCE(s->c[i]);
	}
}

static int rn_proc_show(struct seq_file *seq, void *v)
{
	struct rn_net *rn = rn_pernet(seq_file_single_net(seq));
	unsigned long sum[RN_ST_MAX];
	int i;

	rn_stats_sum(rn, sum);
	seq_printf(seq, "receiver %d\n", READ_ONCE(rn->receiver));
	seq_printf(seq, "epdn_origin %d\n", READ_ONCE(rn->epdn_origin));
	seq_printf(seq, "require_host %d\n", READ_ONCE(rn->require_host));
	seq_printf(seq, "max_flows %u\n", rn_max_flows());
	seq_printf(seq, "flows_live %u\n", READ_ONCE(rn->count));
	for (i = 0; i < RN_ST_MAX; i++)
		seq_printf(seq, "%s %lu\n", rn_stat_names[i], sum[i]);
	return 0;
}

/* ---- sysctls: net.rn.* ---- */

static struct ctl_table rn_sysctl_template[] = {
	{
		.procname	= "receiver",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ZERO,
		.extra2		= SYSCTL_ONE,
	},
	{
		.procname	= "epdn_origin",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ZERO,
		.extra2		= SYSCTL_ONE,
	},
	{
		.procname	= "require_host",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ZERO,
		.extra2		= SYSCTL_ONE,
	},
	{ }
};

static int rn_sysctl_register(struct net *net, struct rn_net *rn)
{
	struct ctl_table *tbl;

	tbl = kmemdup(rn_sysctl_template, sizeof(rn_sysctl_template),
		      GFP_KERNEL);
	if (!tbl)
		return -ENOMEM;
	tbl[0].data = &rn->receiver;
	tbl[1].data = &rn->epdn_origin;
	tbl[2].data = &rn->require_host;
	rn->sysctl = register_net_sysctl_sz(net, "net/rn", tbl,
					    ARRAY_SIZE(rn_sysctl_template) - 1);
	if (!rn->sysctl) {
		kfree(tbl);
		return -ENOMEM;
	}
	return 0;
}

static void rn_sysctl_unregister(struct rn_net *rn)
{
	const struct ctl_table *tbl = rn->sysctl->ctl_table_arg;

	unregister_net_sysctl_table(rn->sysctl);
	kfree(tbl);
}

/* ---- per-netns setup and teardown ---- */

static bool rn_net_may_enable(const struct net *net)
{
	return net->user_ns == &init_user_ns;
}

static int rn_table_alloc(struct rn_net *rn)
{
	u32 n = clamp_t(u32, rn_max_flows() / 2, RN_BUCKETS_MIN,
			RN_BUCKETS_MAX);

	n = roundup_pow_of_two(n);
	rn->buckets = kvcalloc(n, sizeof(*rn->buckets), GFP_KERNEL);
	if (!rn->buckets)
		return -ENOMEM;
	rn->hmask = n - 1;
	rn->seed = get_random_u32();
	return 0;
}

static void rn_table_free(struct rn_net *rn)
{
	struct rn_flow *f, *tmp;

	list_splice_init(&rn->fresh, &rn->live);
	list_for_each_entry_safe(f, tmp, &rn->live, lru)
		kmem_cache_free(rn_flow_cache, f);
	INIT_LIST_HEAD(&rn->live);
	rn->count = 0;
	kvfree(rn->buckets);
	rn->buckets = NULL;
}

/* The flow table, the sysctls and the hooks, where they may be on. */
static int rn_net_enable(struct net *net, struct rn_net *rn)
{
	int err;

	err = rn_table_alloc(rn);
	if (err)
		return err;
	err = rn_sysctl_register(net, rn);
	if (err)
		goto free_table;
	err = nf_register_net_hooks(net, rn_nf_ops, ARRAY_SIZE(rn_nf_ops));
	if (err)
		goto free_sysctl;
	return 0;

free_sysctl:
	rn_sysctl_unregister(rn);
free_table:
	rn_table_free(rn);
	return err;
}

static int __net_init rn_net_init(struct net *net)
{
	struct rn_net *rn = rn_pernet(net);
	int err;

	spin_lock_init(&rn->lock);
	INIT_LIST_HEAD(&rn->fresh);
	INIT_LIST_HEAD(&rn->live);
	timer_setup(&rn->gc, rn_gc, 0);
	rn->require_host = 1;
	rn->stats = alloc_percpu(struct rn_stats);
	if (!rn->stats)
		return -ENOMEM;
	err = -ENOMEM;
	if (!proc_create_net_single("rn_host", 0444, net->proc_net,
				    rn_proc_show, NULL))
		goto free_stats;
	if (!rn_net_may_enable(net))
		return 0;
	err = rn_net_enable(net, rn);
	if (err)
		goto free_proc;
	return 0;

free_proc:
	remove_proc_entry("rn_host", net->proc_net);
free_stats:
	free_percpu(rn->stats);
	return err;
}

/* Stop every way in: hooks, sysctls, /proc, the timer. */
static void __net_exit rn_net_exit(struct net *net)
{
	struct rn_net *rn = rn_pernet(net);

	if (rn_net_may_enable(net)) {
		nf_unregister_net_hooks(net, rn_nf_ops, ARRAY_SIZE(rn_nf_ops));
		rn_sysctl_unregister(rn);
	}
	remove_proc_entry("rn_host", net->proc_net);
	spin_lock_bh(&rn->lock);
	rn->dying = true;
	spin_unlock_bh(&rn->lock);
	del_timer_sync(&rn->gc);
}

/* Hooks already running finish before synchronize_net() returns. */
static void __net_exit rn_net_exit_batch(struct list_head *net_list)
{
	struct net *net;

	synchronize_net();
	list_for_each_entry(net, net_list, exit_list) {
		struct rn_net *rn = rn_pernet(net);

		rn_table_free(rn);
		free_percpu(rn->stats);
	}
}

static struct pernet_operations rn_net_ops = {
	.init		= rn_net_init,
	.exit		= rn_net_exit,
	.exit_batch	= rn_net_exit_batch,
	.id		= &rn_net_id,
	.size		= sizeof(struct rn_net),
};

static int __init rn_host_init(void)
{
	int err;

	rn_flow_cache = KMEM_CACHE(rn_flow, 0);
	if (!rn_flow_cache)
		return -ENOMEM;
	err = register_pernet_subsys(&rn_net_ops);
	if (err)
		kmem_cache_destroy(rn_flow_cache);
	return err;
}

static void __exit rn_host_exit(void)
{
	unregister_pernet_subsys(&rn_net_ops);
	kmem_cache_destroy(rn_flow_cache);
}

module_init(rn_host_init);
module_exit(rn_host_exit);
MODULE_AUTHOR("satnet project");
MODULE_DESCRIPTION("RN-TCP receiver and EPDN origin host hooks (seed 001)");
MODULE_LICENSE("GPL");
MODULE_VERSION(SATNET_VERSION);
