// SPDX-License-Identifier: GPL-2.0
/*
 * sch_epdn: Explicit Packet Drop Notification gateway queue.
 *
 * A. Sathiaseelan, T. Radzik: "RN-TCP with EPDN" (seed 001, EPDNv2,
 * §II, §III A-D, §V) and "TCP-R with EPDN" (seed 000 §2.1, EPDNv3).
 *
 * A FIFO with packet and byte limits, tail drop and optional RED.  When it
 * drops a TCP/IPv4 segment it records the flow and the dropped sequence
 * range; the next data packet of that flow to leave carries the range in
 * an IPv4 option (docs/epdn.md).  mode v2 records every drop, including
 * emulated link-layer CRC failures ("corrupt"); mode v3 records only
 * congestion drops (overflow and RED).
 *
 * The record table, the option codec and the stamp decision live in
 * epdn_core.c, plain C shared with the unit tests.  Everything here runs
 * under the root qdisc lock: enqueue, dequeue, the ageing timer (which
 * takes that lock like sch_red's adaptive timer) and change.  Every
 * packet costs at most one set of the table (EPDN_WAYS records); the
 * timer runs only while records exist and visits EPDN_SWEEP_SETS sets.
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/types.h>
#include <linux/skbuff.h>
#include <linux/ip.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/jiffies.h>
#include <linux/timer.h>
#include <net/dst_metadata.h>
#include <net/ip.h>
#include <net/inet_ecn.h>
#include <net/netlink.h>
#include <net/pkt_sched.h>
#include <net/red.h>

#include <satnet/epdn_core.h>
#include <satnet/hdr.h>
#include <satnet/epdn_uapi.h>

#define EPDN_SWEEP_SETS	128	/* sets the ageing sweep visits per run */
#define EPDN_HOLD_MS	100	/* a record stays this long after its carrier */
#define EPDN_MIN_BYTES	64	/* smallest non-zero byte limit */

struct epdn_params {
	u32 limit;		/* packets */
	u32 byte_limit;		/* bytes, 0 = none */
	u32 idle_us;		/* record idle timeout */
	u32 flows;		/* table size, records */
	u32 corrupt;		/* CRC failure probability, / 2^32 */
	u32 red_min;		/* bytes */
	u32 red_max;		/* bytes */
	u32 red_prob;		/* max_P, / 2^32 */
	u8 mode;		/* EPDN_MODE_V2 or EPDN_MODE_V3 */
	u8 red;			/* RED on */
	u8 red_ewma;		/* Wlog */
	u8 red_ecn;
	u8 red_harddrop;
};

struct epdn_stats {
	u64 stamps;
	u64 merges;
	u64 mtu_deferred;
	u64 opt_deferred;
	u64 gso_deferred;
	u64 ttl_updates;
	u64 untouched;
	u64 not_tcp;
	u64 not_ipv4;
	u64 fragments;
	u64 malformed;
	u64 nomem;
	u64 unshared;
	u64 span_resets;
	u64 unknown_stamps;
	u64 overflow_drops;
	u64 corrupt_drops;
	u64 red_drops;
	u64 red_marks;
};

/* What RED needs to age its average while the queue is empty. */
struct epdn_red_clock {
	u64 idle_ns;		/* empty since then; 0: not known to be */
	u64 cycle_ns;		/* a service time sample began; 0: none */
	u64 service_ns;		/* time to send a packet; 0: not measured */
	u32 cycle_pkts;		/* dequeues since cycle_ns */
};

struct epdn_sched_data {
	struct epdn_params p;
	struct epdn_table table;
	struct red_parms red_parms;
	struct red_vars red_vars;
	struct epdn_red_clock red_clock;
	struct timer_list age_timer;
	struct Qdisc *sch;
	u32 idle_jiffies;
	struct epdn_stats st;
};

/* Why a packet is being dropped. */
enum epdn_drop_cause {
	EPDN_DROP_OVERFLOW,
	EPDN_DROP_RED,
	EPDN_DROP_CORRUPT,
};

/* What a packet is, as far as EPDN cares (docs/epdn.md, Other traffic). */
enum epdn_class {
	EPDN_C_TCP,
	EPDN_C_NOT_TCP,
	EPDN_C_FRAG,
	EPDN_C_NOT_IPV4,
	EPDN_C_MALFORMED,
};

struct epdn_pkt {
	struct sat_ip ip;
	struct sat_tcp tcp;
	struct epdn_opt opt;	/* valid when has_opt */
	u32 noff;		/* network header offset from skb->data */
	int opt_off;		/* EPDN option offset in the header, or < 0 */
	bool has_opt;
	bool gso;
};

/* ---- classification: safe reads with skb_header_pointer, as sch_cake ---- */

static int epdn_read_ipv4(const struct sk_buff *skb, struct epdn_pkt *pkt)
{
	u8 buf[EPDN_IPV4_HDR_MAX];
	int noff = skb_network_offset(skb);
	u32 avail, caplen;
	const u8 *hdr;

	if (noff < 0 || noff >= skb->len)
		return -EINVAL;
	avail = skb->len - noff;
	caplen = min_t(u32, avail, EPDN_IPV4_HDR_MAX);
	hdr = skb_header_pointer(skb, noff, caplen, buf);
	if (!hdr)
		return -EINVAL;
	pkt->noff = noff;
	pkt->gso = skb_is_gso(skb);
	if (sat_parse_ipv4(hdr, caplen, avail, pkt->gso, &pkt->ip))
		return -EINVAL;
	pkt->opt_off = epdn_ip_opt(hdr, &pkt->ip);
	if (pkt->opt_off == SAT_EBADMSG)
		return -EINVAL;
	pkt->has_opt = pkt->opt_off >= 0;
	if (pkt->has_opt)
		epdn_opt_decode(hdr + pkt->opt_off,
				pkt->ip.hdr_len - pkt->opt_off, &pkt->opt);
	return 0;
}

/*
 * The whole TCP header, options included, as sat_parse_tcp() checks it:
 * tot_len <= avail, so the segment's bytes are all in the skb.
 */
static int epdn_read_tcp(const struct sk_buff *skb, struct epdn_pkt *pkt)
{
	u8 buf[SAT_TCP_HDR_MAX];
	u32 l4_len = pkt->ip.tot_len - pkt->ip.hdr_len;
	u32 caplen = min_t(u32, l4_len, SAT_TCP_HDR_MAX);
	const u8 *th;

	th = skb_header_pointer(skb, pkt->noff + pkt->ip.hdr_len, caplen, buf);
	if (!th)
		return -EINVAL;
	return sat_parse_tcp(th, caplen, l4_len, &pkt->tcp) ? -EINVAL : 0;
}

/*
 * skb->protocol, not skb_protocol(skb, true): behind a VLAN tag carried
 * in the frame (not offloaded) the network header offset may point at the
 * tag, so such frames pass as not IPv4 rather than be parsed at a guess.
 */
static enum epdn_class epdn_classify(const struct sk_buff *skb,
				     struct epdn_pkt *pkt)
{
	pkt->has_opt = false;
	if (skb->protocol != htons(ETH_P_IP))
		return EPDN_C_NOT_IPV4;
	if (epdn_read_ipv4(skb, pkt))
		return EPDN_C_MALFORMED;
	if (pkt->ip.frag)
		return EPDN_C_FRAG;
	if (pkt->ip.proto != IPPROTO_TCP)
		return EPDN_C_NOT_TCP;
	if (epdn_read_tcp(skb, pkt))
		return EPDN_C_MALFORMED;
	return EPDN_C_TCP;
}

static void epdn_count_class(struct epdn_stats *st, enum epdn_class c)
{
	switch (c) {
	case EPDN_C_NOT_TCP:
		st->not_tcp++;
		break;
	case EPDN_C_FRAG:
		st->fragments++;
		break;
	case EPDN_C_NOT_IPV4:
		st->not_ipv4++;
		break;
	case EPDN_C_MALFORMED:
		st->malformed++;
		break;
	default:
		break;
	}
}

/* ---- recording drops (seed 001 §III-A) ---- */

/* The sweep's period: a record outlives idle by a few periods at most. */
static unsigned long epdn_age_period(const struct epdn_sched_data *q)
{
	return clamp_t(unsigned long, q->idle_jiffies / 8, 1, HZ / 20);
}

/* v2 records every drop at this gateway; v3 only congestion drops. */
static bool epdn_records(const struct epdn_sched_data *q,
			 enum epdn_drop_cause cause)
{
	return q->p.mode == EPDN_MODE_V2 || cause != EPDN_DROP_CORRUPT;
}

static void epdn_record_drop(struct epdn_sched_data *q, struct sk_buff *skb)
{
	struct epdn_range r, carried;
	bool lost = false;
	struct epdn_key key;
	struct epdn_pkt pkt;

	if (epdn_classify(skb, &pkt) != EPDN_C_TCP)
		return;
	if (!epdn_tcp_range(&pkt.tcp, &r))
		return;		/* a pure ACK loses no data */
	/* E:max = max(E:max, P:n, P:max), E:min likewise. */
	if (pkt.has_opt && epdn_opt_range(&pkt.opt, &carried) &&
	    !epdn_range_merge(&r, &carried)) {
		q->st.span_resets++;
		lost = true;
	}
	if (pkt.has_opt && (pkt.opt.flags & EPDN_F_UNKNOWN))
		lost = true;
	epdn_flow_key(&pkt.ip, &pkt.tcp, &key);
	epdn_table_record(&q->table, &key, &r, (u32)jiffies);
	/* What the packet carried and the table cannot keep. */
	if (lost)
		epdn_table_mark_lost(&q->table, &key, (u32)jiffies);
	if (!timer_pending(&q->age_timer))
		mod_timer(&q->age_timer, jiffies + epdn_age_period(q));
}

static void epdn_count_drop(struct epdn_stats *st, enum epdn_drop_cause cause)
{
	if (cause == EPDN_DROP_OVERFLOW)
		st->overflow_drops++;
	else if (cause == EPDN_DROP_RED)
		st->red_drops++;
	else
		st->corrupt_drops++;
}

static int epdn_drop(struct sk_buff *skb, struct Qdisc *sch,
		     enum epdn_drop_cause cause, struct sk_buff **to_free)
{
	struct epdn_sched_data *q = qdisc_priv(sch);

	epdn_count_drop(&q->st, cause);
	if (epdn_records(q, cause))
		epdn_record_drop(q, skb);
	qdisc_drop(skb, sch, to_free);
	/* A frame lost on the link is no local congestion signal. */
	if (cause == EPDN_DROP_CORRUPT)
		return NET_XMIT_SUCCESS | __NET_XMIT_BYPASS;
	return cause == EPDN_DROP_RED ? NET_XMIT_CN : NET_XMIT_DROP;
}

/* ---- enqueue ---- */

/* Emulates a link layer whose CRC check fails at this hop (option corrupt). */
static bool epdn_corrupted(const struct epdn_sched_data *q)
{
	return q->p.corrupt && get_random_u32() < q->p.corrupt;
}

static bool epdn_over_limit(struct Qdisc *sch, const struct sk_buff *skb)
{
	const struct epdn_sched_data *q = qdisc_priv(sch);

	if (sch->q.qlen >= q->p.limit)
		return true;
	return q->p.byte_limit &&
	       sch->qstats.backlog + qdisc_pkt_len(skb) > q->p.byte_limit;
}

/* CE-mark an ECN-capable packet when allowed; false means drop it. */
static bool epdn_red_mark(struct epdn_sched_data *q, struct sk_buff *skb,
			  bool hard)
{
	if (!q->p.red_ecn || (hard && q->p.red_harddrop))
		return false;
	if (!INET_ECN_set_ce(skb))
		return false;
	q->st.red_marks++;
	return true;
}

/*
 * An arrival at an empty queue first ages RED's average by the time the
 * queue has been empty.  sch_red does this from a table that tc computes
 * from the link's rate; under a shaper this qdisc cannot know the rate,
 * so it uses the service time it measured (epdn_red_dequeued()).
 */
static void epdn_red_wake(struct Qdisc *sch)
{
	struct epdn_sched_data *q = qdisc_priv(sch);
	struct epdn_red_clock *c = &q->red_clock;
	u64 now;

	if (sch->q.qlen || !c->idle_ns)
		return;
	now = ktime_get_ns();
	q->red_vars.qavg = epdn_red_idle_avg(q->red_vars.qavg,
					     now - c->idle_ns, c->service_ns,
					     q->p.red_ewma);
	c->idle_ns = now;
}

/*
 * After a dequeue: note when the queue empties, and time every
 * EPDN_SERVICE_PKTS dequeues that find it still backlogged.
 */
static void epdn_red_dequeued(struct epdn_sched_data *q, u32 qlen)
{
	struct epdn_red_clock *c = &q->red_clock;
	u64 now;

	if (!qlen) {
		c->idle_ns = ktime_get_ns();
		c->cycle_ns = 0;
		return;
	}
	if (!c->cycle_ns) {
		c->cycle_ns = ktime_get_ns();
		c->cycle_pkts = 0;
		return;
	}
	if (++c->cycle_pkts < EPDN_SERVICE_PKTS)
		return;
	now = ktime_get_ns();
	c->service_ns = epdn_service_avg(c->service_ns,
					 (now - c->cycle_ns) / EPDN_SERVICE_PKTS);
	c->cycle_ns = now;
	c->cycle_pkts = 0;
}

/* RED (sch_red): true when the packet must be dropped early. */
static bool epdn_red_drops(struct Qdisc *sch, struct sk_buff *skb)
{
	struct epdn_sched_data *q = qdisc_priv(sch);

	epdn_red_wake(sch);
	q->red_vars.qavg = red_calc_qavg_no_idle_time(&q->red_parms,
						      &q->red_vars,
						      sch->qstats.backlog);
	switch (red_action(&q->red_parms, &q->red_vars, q->red_vars.qavg)) {
	case RED_PROB_MARK:
		qdisc_qstats_overlimit(sch);
		return !epdn_red_mark(q, skb, false);
	case RED_HARD_MARK:
		qdisc_qstats_overlimit(sch);
		return !epdn_red_mark(q, skb, true);
	default:
		return false;
	}
}

static int epdn_enqueue(struct sk_buff *skb, struct Qdisc *sch,
			struct sk_buff **to_free)
{
	struct epdn_sched_data *q = qdisc_priv(sch);

	if (epdn_corrupted(q))
		return epdn_drop(skb, sch, EPDN_DROP_CORRUPT, to_free);
	if (q->p.red && epdn_red_drops(sch, skb))
		return epdn_drop(skb, sch, EPDN_DROP_RED, to_free);
	if (epdn_over_limit(sch, skb))
		return epdn_drop(skb, sch, EPDN_DROP_OVERFLOW, to_free);
	return qdisc_enqueue_tail(skb, sch);
}

/* ---- stamping on dequeue (seed 001 §III-B, §III-D) ---- */

/* A packet this host sends (no input device) proves the whole path. */
static bool epdn_local(const struct sk_buff *skb)
{
	return skb->skb_iif == 0;
}

static u8 epdn_stamp_flags(const struct epdn_sched_data *q)
{
	return q->p.mode == EPDN_MODE_V2 ? EPDN_F_V2 : 0;
}

/*
 * Someone else holds a reference to a shared skb (pktgen keeps what it
 * sends): write into a clone of our own, whose header skb_ensure_writable()
 * and skb_cow_head() then copy.  NULL, with @skb untouched, when that fails.
 */
static struct sk_buff *epdn_unshare(struct epdn_sched_data *q,
				    struct sk_buff *skb)
{
	struct sk_buff *nskb;

	if (!skb_shared(skb))
		return skb;
	nskb = skb_clone(skb, GFP_ATOMIC);
	if (!nskb)
		return NULL;
	consume_skb(skb);
	q->st.unshared++;
	return nskb;
}

/*
 * Make the whole IPv4 header linear and writable, not only the bytes to
 * be written: ip_send_check() sums all of it, and other options may
 * follow ours in a header whose tail is still in a page fragment.
 */
static int epdn_hdr_writable(struct sk_buff *skb, const struct epdn_pkt *pkt)
{
	return skb_ensure_writable(skb, pkt->noff + pkt->ip.hdr_len);
}

/* Rewrite the carried option in place and fix the header checksum. */
static int epdn_write_opt(struct sk_buff *skb, const struct epdn_pkt *pkt,
			  const struct epdn_opt *o)
{
	u32 off = pkt->noff + pkt->opt_off;

	if (epdn_hdr_writable(skb, pkt))
		return -ENOMEM;
	epdn_opt_encode(skb->data + off, o);
	ip_send_check(ip_hdr(skb));
	if (skb->ip_summed == CHECKSUM_COMPLETE)
		skb->ip_summed = CHECKSUM_NONE;
	return 0;
}

/*
 * Open a gap of EPDN_OPT_LEN bytes after the 20-byte IPv4 header: push
 * the link and IP headers forward into the headroom.  The transport
 * header and payload do not move, so CHECKSUM_PARTIAL offsets stay valid.
 */
static int epdn_insert_opt(struct sk_buff *skb, const struct epdn_pkt *pkt,
			   const struct epdn_opt *o)
{
	u32 hlen = pkt->noff + EPDN_IPV4_HDR_MIN;
	bool mac_moves;
	struct iphdr *iph;

	if (skb_ensure_writable(skb, hlen) || skb_cow_head(skb, EPDN_OPT_LEN))
		return -ENOMEM;
	mac_moves = skb_mac_header_was_set(skb) && skb_mac_offset(skb) >= 0;
	__skb_push(skb, EPDN_OPT_LEN);
	memmove(skb->data, skb->data + EPDN_OPT_LEN, hlen);
	if (mac_moves)
		skb->mac_header -= EPDN_OPT_LEN;
	skb->network_header -= EPDN_OPT_LEN;

	iph = ip_hdr(skb);
	epdn_opt_encode((u8 *)iph + EPDN_IPV4_HDR_MIN, o);
	iph->ihl += EPDN_OPT_WORDS;
	be16_add_cpu(&iph->tot_len, EPDN_OPT_LEN);
	ip_send_check(iph);
	if (skb->ip_summed == CHECKSUM_COMPLETE)
		skb->ip_summed = CHECKSUM_NONE;
	return 0;
}

/*
 * A new option starts EPDN-TTL at the current TTL: this router is then the
 * first proven hop.  On the sending host itself the whole path is proven.
 */
static void epdn_opt_create(const struct epdn_sched_data *q,
			    const struct sk_buff *skb,
			    const struct epdn_pkt *pkt,
			    const struct epdn_info *info, struct epdn_opt *o)
{
	u8 flags = epdn_stamp_flags(q);

	if (epdn_local(skb))
		flags |= EPDN_F_HOST;
	epdn_opt_new_info(o, pkt->ip.ttl, info, flags);
}

/* Count why a record stays for a later packet: MTU, IP options, GSO. */
static void epdn_count_defer(struct epdn_stats *st, enum epdn_action act)
{
	if (act == EPDN_ACT_DEFER_MTU)
		st->mtu_deferred++;
	else if (act == EPDN_ACT_DEFER_OPTS)
		st->opt_deferred++;
	else
		st->gso_deferred++;
}

/*
 * The MTU the packet leaves with: the device's, or its route's if lower.
 * A metadata dst (tunnel_key set, bpf_skb_set_tunnel_key(), mirred from
 * a collect_md tunnel) is no route, and its mtu() would read a device it
 * does not have: the device the packet leaves by is then the only bound.
 */
static u32 epdn_mtu(struct Qdisc *sch, const struct sk_buff *skb)
{
	u32 mtu = READ_ONCE(qdisc_dev(sch)->mtu);

	return skb_valid_dst(skb) ? min(mtu, dst_mtu(skb_dst(skb))) : mtu;
}

/*
 * A bridge port, or an ifb fed from ingress, sees packets whose TTL no
 * router on this host has lowered yet.  A gap of one there is the last
 * router's, which may not run EPDN: closing it would hide that router.
 */
static bool epdn_routed(struct Qdisc *sch, const struct sk_buff *skb)
{
	if (netif_is_bridge_port(qdisc_dev(sch)))
		return false;
#ifdef CONFIG_NET_REDIRECT
	if (skb_is_redirected(skb) && skb->from_ingress)
		return false;
#endif
	return true;
}

/* EPDN-TTL after this hop (seed 001 §III-D): only a routed hop moves it. */
static u8 epdn_hop_ttl(struct Qdisc *sch, const struct sk_buff *skb,
		       const struct epdn_pkt *pkt)
{
	if (!epdn_routed(sch, skb))
		return pkt->opt.ttl;
	return epdn_ttl_hop(pkt->opt.ttl, pkt->ip.ttl);
}

/*
 * The carried option after this hop, built in a copy so that a failed
 * write leaves the packet's option as it was: EPDN-TTL follows TTL, the
 * record's range joins the carried one, and UNKNOWN is added if due.
 */
static void epdn_opt_merged(struct Qdisc *sch, const struct sk_buff *skb,
			    const struct epdn_pkt *pkt,
			    const struct epdn_info *info, struct epdn_opt *o)
{
	struct epdn_sched_data *q = qdisc_priv(sch);

	struct epdn_key key;

	*o = pkt->opt;
	o->ttl = epdn_hop_ttl(sch, skb, pkt);
	if (epdn_opt_add_info(o, info, epdn_stamp_flags(q)))
		return;
	/* The carried range gave way: the flow's later packets say so too. */
	q->st.span_resets++;
	epdn_flow_key(&pkt->ip, &pkt->tcp, &key);
	epdn_table_mark_lost(&q->table, &key, (u32)jiffies);
}

/* Write @o into the packet: a new option or over the carried one. */
static int epdn_put_opt(struct epdn_sched_data *q, struct sk_buff **pskb,
			const struct epdn_pkt *pkt, const struct epdn_opt *o)
{
	struct sk_buff *skb = epdn_unshare(q, *pskb);
	int err;

	if (!skb) {
		err = -ENOMEM;
	} else {
		*pskb = skb;
		err = pkt->has_opt ? epdn_write_opt(skb, pkt, o) :
				     epdn_insert_opt(skb, pkt, o);
	}
	if (err)
		q->st.nomem++;
	return err;
}

/* Count a stamp: a new option or a merge, and what it changed. */
static void epdn_count_stamp(struct epdn_stats *st, enum epdn_action act,
			     const struct epdn_pkt *pkt,
			     const struct epdn_opt *o)
{
	if (act == EPDN_ACT_INSERT) {
		st->stamps++;
	} else {
		st->merges++;
		if (o->ttl != pkt->opt.ttl)
			st->ttl_updates++;
	}
	if ((o->flags & EPDN_F_UNKNOWN) &&
	    !(pkt->has_opt && (pkt->opt.flags & EPDN_F_UNKNOWN)))
		st->unknown_stamps++;
}

/*
 * Stamp what the flow picked up here into *@pskb: true when written.  The
 * record stays in the table for the flow's later packets, so that a lost
 * or forged carrier takes nothing away (docs/epdn.md).
 */
static bool epdn_stamp(struct Qdisc *sch, struct sk_buff **pskb,
		       const struct epdn_pkt *pkt,
		       const struct epdn_info *info)
{
	struct epdn_sched_data *q = qdisc_priv(sch);
	enum epdn_action act;
	struct epdn_opt o;

	act = epdn_stamp_decide(pkt->ip.hdr_len, pkt->has_opt, pkt->gso,
				pkt->ip.tot_len, epdn_mtu(sch, *pskb));
	if (act == EPDN_ACT_INSERT) {
		epdn_opt_create(q, *pskb, pkt, info, &o);
	} else if (act == EPDN_ACT_MERGE) {
		epdn_opt_merged(sch, *pskb, pkt, info, &o);
	} else {
		epdn_count_defer(&q->st, act);
		return false;
	}
	if (epdn_put_opt(q, pskb, pkt, &o))
		return false;
	epdn_count_stamp(&q->st, act, pkt, &o);
	return true;
}

/* What a data packet's flow picks up at this hop, if anything. */
static bool epdn_flow_info(struct epdn_sched_data *q,
			   const struct epdn_pkt *pkt, struct epdn_info *info)
{
	struct epdn_range r;
	struct epdn_key key;

	if (!epdn_table_busy(&q->table) || !epdn_tcp_range(&pkt->tcp, &r))
		return false;
	epdn_flow_key(&pkt->ip, &pkt->tcp, &key);
	return epdn_table_info(&q->table, &key, &r, (u32)jiffies, info);
}

/* Every packet carrying the option gets its EPDN-TTL updated (seed 001 §III-D). */
static bool epdn_update_ttl(struct Qdisc *sch, struct sk_buff **pskb,
			    const struct epdn_pkt *pkt)
{
	struct epdn_sched_data *q = qdisc_priv(sch);
	struct epdn_opt o = pkt->opt;

	o.ttl = epdn_hop_ttl(sch, *pskb, pkt);
	if (o.ttl == pkt->opt.ttl || epdn_put_opt(q, pskb, pkt, &o))
		return false;
	q->st.ttl_updates++;
	return true;
}

static struct sk_buff *epdn_process(struct Qdisc *sch, struct sk_buff *skb)
{
	struct epdn_sched_data *q = qdisc_priv(sch);
	struct epdn_info info;
	enum epdn_class c;
	struct epdn_pkt pkt;

	c = epdn_classify(skb, &pkt);
	epdn_count_class(&q->st, c);
	if (c == EPDN_C_TCP && epdn_flow_info(q, &pkt, &info) &&
	    epdn_stamp(sch, &skb, &pkt, &info))
		return skb;
	if (!pkt.has_opt || !epdn_update_ttl(sch, &skb, &pkt))
		q->st.untouched++;
	return skb;
}

static struct sk_buff *epdn_dequeue(struct Qdisc *sch)
{
	struct epdn_sched_data *q = qdisc_priv(sch);
	struct sk_buff *skb = __qdisc_dequeue_head(&sch->q);

	if (!skb)
		return NULL;
	qdisc_qstats_backlog_dec(sch, skb);
	if (q->p.red)
		epdn_red_dequeued(q, sch->q.qlen);
	skb = epdn_process(sch, skb);
	qdisc_bstats_update(sch, skb);
	return skb;
}

/* ---- ageing of inactive records (seed 001 §III-C) ---- */

static void epdn_age_timer(struct timer_list *t)
{
	struct epdn_sched_data *q = from_timer(q, t, age_timer);
	struct Qdisc *sch = q->sch;
	spinlock_t *root_lock;	/* serialises with enqueue/dequeue */

	rcu_read_lock();
	root_lock = qdisc_lock(qdisc_root_sleeping(sch));
	spin_lock(root_lock);
	epdn_table_sweep(&q->table, (u32)jiffies, EPDN_SWEEP_SETS);
	if (epdn_table_busy(&q->table))
		mod_timer(&q->age_timer, jiffies + epdn_age_period(q));
	spin_unlock(root_lock);
	rcu_read_unlock();
}

/* ---- reset ---- */

/*
 * Records outlive a reset: they describe drops already made, and reset
 * can run without the root lock (qdisc destroy) while the timer ages the
 * table, so only the queue and RED state are cleared here.
 */
static void epdn_reset(struct Qdisc *sch)
{
	struct epdn_sched_data *q = qdisc_priv(sch);

	qdisc_reset_queue(sch);
	red_restart(&q->red_vars);
	q->red_clock.idle_ns = 0;
	q->red_clock.cycle_ns = 0;
}

/* ---- netlink configuration ---- */

static struct netlink_range_validation epdn_limit_range = {
	.min = 1,
	.max = EPDN_LIMIT_MAX,
};

static struct netlink_range_validation epdn_idle_range = {
	.min = EPDN_IDLE_MIN_US,
	.max = EPDN_IDLE_MAX_US,
};

static struct netlink_range_validation epdn_flows_range = {
	.min = EPDN_FLOWS_MIN,
	.max = EPDN_FLOWS_MAX,
};

static const struct nla_policy epdn_policy[TCA_EPDN_MAX + 1] = {
	[TCA_EPDN_LIMIT]	= NLA_POLICY_FULL_RANGE(NLA_U32, &epdn_limit_range),
	[TCA_EPDN_BYTE_LIMIT]	= { .type = NLA_U32 },
	[TCA_EPDN_MODE]		= NLA_POLICY_RANGE(NLA_U8, EPDN_MODE_V2,
						   EPDN_MODE_V3),
	[TCA_EPDN_IDLE]		= NLA_POLICY_FULL_RANGE(NLA_U32, &epdn_idle_range),
	[TCA_EPDN_FLOWS]	= NLA_POLICY_FULL_RANGE(NLA_U32, &epdn_flows_range),
	[TCA_EPDN_CORRUPT]	= { .type = NLA_U32 },
	[TCA_EPDN_RED]		= NLA_POLICY_MAX(NLA_U8, 1),
	[TCA_EPDN_RED_MIN]	= { .type = NLA_U32 },
	[TCA_EPDN_RED_MAX]	= NLA_POLICY_MIN(NLA_U32, 1),
	[TCA_EPDN_RED_PROB]	= NLA_POLICY_MIN(NLA_U32, 1),
	[TCA_EPDN_RED_EWMA]	= NLA_POLICY_MAX(NLA_U8, EPDN_RED_EWMA_MAX),
	[TCA_EPDN_RED_ECN]	= NLA_POLICY_MAX(NLA_U8, 1),
	[TCA_EPDN_RED_HARDDROP]	= NLA_POLICY_MAX(NLA_U8, 1),
};

static void epdn_params_default(struct epdn_params *p)
{
	memset(p, 0, sizeof(*p));
	p->limit = EPDN_DEF_LIMIT;
	p->mode = EPDN_DEF_MODE;
	p->idle_us = EPDN_DEF_IDLE_US;
	p->flows = EPDN_DEF_FLOWS;
	p->red_ewma = EPDN_DEF_RED_EWMA;
}

/* The policy has checked each attribute's range: copy those present. */
static void epdn_get_u32(const struct nlattr *attr, u32 *dst)
{
	if (attr)
		*dst = nla_get_u32(attr);
}

static void epdn_get_u8(const struct nlattr *attr, u8 *dst)
{
	if (attr)
		*dst = nla_get_u8(attr);
}

static int epdn_parse_queue(struct epdn_params *p, struct nlattr **tb,
			    struct netlink_ext_ack *extack)
{
	epdn_get_u32(tb[TCA_EPDN_LIMIT], &p->limit);
	epdn_get_u32(tb[TCA_EPDN_BYTE_LIMIT], &p->byte_limit);
	epdn_get_u32(tb[TCA_EPDN_CORRUPT], &p->corrupt);
	if (p->byte_limit && p->byte_limit < EPDN_MIN_BYTES) {
		NL_SET_ERR_MSG_ATTR(extack, tb[TCA_EPDN_BYTE_LIMIT],
				    "epdn: bytelimit must be 0 (none) or at least 64 bytes");
		return -EINVAL;
	}
	return 0;
}

static void epdn_parse_records(struct epdn_params *p, struct nlattr **tb)
{
	epdn_get_u8(tb[TCA_EPDN_MODE], &p->mode);
	epdn_get_u32(tb[TCA_EPDN_IDLE], &p->idle_us);
	epdn_get_u32(tb[TCA_EPDN_FLOWS], &p->flows);
}

static void epdn_parse_red(struct epdn_params *p, struct nlattr **tb)
{
	epdn_get_u8(tb[TCA_EPDN_RED], &p->red);
	epdn_get_u32(tb[TCA_EPDN_RED_MIN], &p->red_min);
	epdn_get_u32(tb[TCA_EPDN_RED_MAX], &p->red_max);
	epdn_get_u32(tb[TCA_EPDN_RED_PROB], &p->red_prob);
	epdn_get_u8(tb[TCA_EPDN_RED_EWMA], &p->red_ewma);
	epdn_get_u8(tb[TCA_EPDN_RED_ECN], &p->red_ecn);
	epdn_get_u8(tb[TCA_EPDN_RED_HARDDROP], &p->red_harddrop);
}

/*
 * The RED parameters as a whole, once RED is on.  An attribute left out
 * keeps its old value, so the culprit may be one that was not sent.
 */
static int epdn_check_red(const struct epdn_params *p, struct nlattr **tb,
			  struct netlink_ext_ack *extack)
{
	if (!p->red)
		return 0;
	if (!p->red_max || !p->red_prob) {
		NL_SET_ERR_MSG_ATTR(extack, tb[TCA_EPDN_RED],
				    "epdn: red needs min, max and probability");
		return -EINVAL;
	}
	if (p->red_min >= p->red_max) {
		NL_SET_ERR_MSG_ATTR(extack,
				    tb[TCA_EPDN_RED_MIN] ?: tb[TCA_EPDN_RED_MAX],
				    "epdn: RED min must be below max");
		return -EINVAL;
	}
	if (!red_check_params(p->red_min, p->red_max, p->red_ewma, 0, NULL)) {
		NL_SET_ERR_MSG_ATTR(extack,
				    tb[TCA_EPDN_RED_EWMA] ?: tb[TCA_EPDN_RED_MAX],
				    "epdn: RED thresholds too large for this ewma");
		return -EINVAL;
	}
	return 0;
}

static int epdn_parse(struct epdn_params *p, struct nlattr **tb,
		      struct netlink_ext_ack *extack)
{
	int err;

	err = epdn_parse_queue(p, tb, extack);
	if (err)
		return err;
	epdn_parse_records(p, tb);
	epdn_parse_red(p, tb);
	return epdn_check_red(p, tb, extack);
}

/* Drop from the head until the queue fits new limits; parents follow. */
static void epdn_trim_queue(struct Qdisc *sch)
{
	struct epdn_sched_data *q = qdisc_priv(sch);
	unsigned int pkts = 0, bytes = 0;
	struct sk_buff *skb;

	while (sch->q.qlen > q->p.limit ||
	       (q->p.byte_limit && sch->qstats.backlog > q->p.byte_limit)) {
		skb = qdisc_dequeue_internal(sch, true);
		if (!skb)
			break;
		pkts++;
		bytes += qdisc_pkt_len(skb);
		q->st.overflow_drops++;
		epdn_record_drop(q, skb);
		rtnl_qdisc_drop(skb, sch);
	}
	qdisc_tree_reduce_backlog(sch, pkts, bytes);
}

/*
 * The table's two arrays, allocated apart: the records (a multiple of
 * 192 bytes, so that a large table fills its huge pages) and one lost
 * stamp per set.
 */
struct epdn_mem {
	struct epdn_rec *slot;
	u32 *lost;
};

static void epdn_mem_free(struct epdn_mem *m)
{
	kvfree(m->slot);
	kvfree(m->lost);
}

static int epdn_mem_alloc(struct epdn_mem *m, u32 flows)
{
	m->slot = kvcalloc(epdn_table_slots(flows), sizeof(*m->slot),
			   GFP_KERNEL_ACCOUNT);
	m->lost = kvcalloc(epdn_table_sets(flows), sizeof(*m->lost),
			   GFP_KERNEL_ACCOUNT);
	if (m->slot && m->lost)
		return 0;
	epdn_mem_free(m);
	return -ENOMEM;
}

/*
 * Install a new table of p->flows records.  The live records are dropped
 * (counted in flushed), not moved: a resize under traffic costs the same
 * whatever the table holds.  The old arrays come back in @m, for the
 * caller to free.
 */
static void epdn_swap_table(struct epdn_sched_data *q, struct epdn_mem *m,
			    u32 flows)
{
	struct epdn_mem old = { q->table.slot, q->table.lost };
	struct epdn_hkey hkey;

	get_random_bytes(&hkey, sizeof(hkey));
	if (old.slot)
		epdn_table_resize(&q->table, m->slot, m->lost, flows, &hkey,
				  (u32)jiffies);
	else
		epdn_table_init(&q->table, m->slot, m->lost, flows, 0, &hkey);
	*m = old;
}

static void epdn_apply_red(struct epdn_sched_data *q)
{
	if (!q->p.red)
		return;
	red_set_parms(&q->red_parms, q->p.red_min, q->p.red_max,
		      q->p.red_ewma, 0, 0, NULL, q->p.red_prob);
	red_set_vars(&q->red_vars);
}

/*
 * Under the tree lock: the new parameters take effect at once.  A new
 * table in @m is swapped in, and @m gets the old one.
 */
static void epdn_apply(struct Qdisc *sch, const struct epdn_params *p,
		       struct epdn_mem *m)
{
	struct epdn_sched_data *q = qdisc_priv(sch);

	q->p = *p;
	q->idle_jiffies = max_t(u32, usecs_to_jiffies(p->idle_us), 1);
	if (m->slot)
		epdn_swap_table(q, m, p->flows);
	q->table.idle = q->idle_jiffies;
	q->table.hold = min_t(u32, q->idle_jiffies,
			      max_t(u32, msecs_to_jiffies(EPDN_HOLD_MS), 1));
	epdn_apply_red(q);
	epdn_trim_queue(sch);
	if (epdn_table_busy(&q->table))
		mod_timer(&q->age_timer, jiffies + epdn_age_period(q));
}

/*
 * Parse, validate and allocate before taking the lock; then apply.  A new
 * flows value allocates a new table outside the lock, charged to the
 * caller's memory cgroup.
 */
static int epdn_configure(struct Qdisc *sch, struct nlattr **tb,
			  struct netlink_ext_ack *extack)
{
	struct epdn_sched_data *q = qdisc_priv(sch);
	struct epdn_mem m = { NULL, NULL };
	struct epdn_params p = q->p;
	int err;

	err = epdn_parse(&p, tb, extack);
	if (err)
		return err;
	if ((!q->table.slot || p.flows != q->p.flows) &&
	    epdn_mem_alloc(&m, p.flows)) {
		NL_SET_ERR_MSG(extack, "epdn: cannot allocate the flow table");
		return -ENOMEM;
	}
	sch_tree_lock(sch);
	epdn_apply(sch, &p, &m);
	sch_tree_unlock(sch);
	epdn_mem_free(&m);
	return 0;
}

static int epdn_change(struct Qdisc *sch, struct nlattr *opt,
		       struct netlink_ext_ack *extack)
{
	struct nlattr *tb[TCA_EPDN_MAX + 1] = { NULL };
	int err;

	if (opt) {
		err = nla_parse_nested(tb, TCA_EPDN_MAX, opt, epdn_policy,
				       extack);
		if (err < 0)
			return err;
	}
	return epdn_configure(sch, tb, extack);
}

static int epdn_init(struct Qdisc *sch, struct nlattr *opt,
		     struct netlink_ext_ack *extack)
{
	struct epdn_sched_data *q = qdisc_priv(sch);

	q->sch = sch;
	timer_setup(&q->age_timer, epdn_age_timer, 0);
	netif_keep_dst(qdisc_dev(sch));	/* for the route's MTU */
	epdn_params_default(&q->p);
	return epdn_change(sch, opt, extack);
}

static void epdn_destroy(struct Qdisc *sch)
{
	struct epdn_sched_data *q = qdisc_priv(sch);

	del_timer_sync(&q->age_timer);
	kvfree(q->table.slot);
	kvfree(q->table.lost);
	q->table.slot = NULL;
	q->table.lost = NULL;
}

/* ---- dump: mirrors every attribute of change ---- */

static int epdn_dump_params(struct sk_buff *skb, const struct epdn_params *p)
{
	if (nla_put_u32(skb, TCA_EPDN_LIMIT, p->limit) ||
	    nla_put_u32(skb, TCA_EPDN_BYTE_LIMIT, p->byte_limit) ||
	    nla_put_u8(skb, TCA_EPDN_MODE, p->mode) ||
	    nla_put_u32(skb, TCA_EPDN_IDLE, p->idle_us) ||
	    nla_put_u32(skb, TCA_EPDN_FLOWS, p->flows) ||
	    nla_put_u32(skb, TCA_EPDN_CORRUPT, p->corrupt) ||
	    nla_put_u8(skb, TCA_EPDN_RED, p->red) ||
	    nla_put_u32(skb, TCA_EPDN_RED_MIN, p->red_min) ||
	    nla_put_u32(skb, TCA_EPDN_RED_MAX, p->red_max) ||
	    nla_put_u32(skb, TCA_EPDN_RED_PROB, p->red_prob) ||
	    nla_put_u8(skb, TCA_EPDN_RED_EWMA, p->red_ewma) ||
	    nla_put_u8(skb, TCA_EPDN_RED_ECN, p->red_ecn) ||
	    nla_put_u8(skb, TCA_EPDN_RED_HARDDROP, p->red_harddrop))
		return -EMSGSIZE;
	return 0;
}

static int epdn_dump(struct Qdisc *sch, struct sk_buff *skb)
{
	struct epdn_sched_data *q = qdisc_priv(sch);
	struct nlattr *opts;

	opts = nla_nest_start(skb, TCA_OPTIONS);
	if (!opts || epdn_dump_params(skb, &q->p)) {
		nla_nest_cancel(skb, opts);
		return -EMSGSIZE;
	}
	return nla_nest_end(skb, opts);
}

static void epdn_fill_xstats(const struct epdn_sched_data *q,
			     struct tc_epdn_xstats *x)
{
	const struct epdn_stats *st = &q->st;

	x->recorded = q->table.recorded;
	x->rec_merged = q->table.rec_merged;
	x->records = q->table.count;
	x->evicted = q->table.evicted;
	x->aged = q->table.aged;
	x->flows = q->table.cap;
	x->record_bytes = epdn_record_bytes(q->p.flows);
	x->memory_used = epdn_table_memory(q->p.flows);
	x->flushed = q->table.flushed;
	x->span_resets = q->table.span_resets + st->span_resets;
	x->unshared = st->unshared;
	x->unknown_stamps = st->unknown_stamps;
	x->released = q->table.released;
	x->stamps = st->stamps;
	x->merges = st->merges;
	x->mtu_deferred = st->mtu_deferred;
	x->opt_deferred = st->opt_deferred;
	x->gso_deferred = st->gso_deferred;
	x->ttl_updates = st->ttl_updates;
	x->untouched = st->untouched;
	x->not_tcp = st->not_tcp;
	x->not_ipv4 = st->not_ipv4;
	x->fragments = st->fragments;
	x->malformed = st->malformed;
	x->nomem = st->nomem;
	x->overflow_drops = st->overflow_drops;
	x->corrupt_drops = st->corrupt_drops;
	x->red_drops = st->red_drops;
	x->red_marks = st->red_marks;
}

static int epdn_dump_stats(struct Qdisc *sch, struct gnet_dump *d)
{
	struct epdn_sched_data *q = qdisc_priv(sch);
	struct tc_epdn_xstats x = { 0 };

	sch_tree_lock(sch);
	epdn_fill_xstats(q, &x);
	sch_tree_unlock(sch);
	return gnet_stats_copy_app(d, &x, sizeof(x));
}

static struct Qdisc_ops epdn_qdisc_ops __read_mostly = {
	.id		= "epdn",
	.priv_size	= sizeof(struct epdn_sched_data),
	.enqueue	= epdn_enqueue,
	.dequeue	= epdn_dequeue,
	.peek		= qdisc_peek_dequeued,
	.init		= epdn_init,
	.reset		= epdn_reset,
	.destroy	= epdn_destroy,
	.change		= epdn_change,
	.dump		= epdn_dump,
	.dump_stats	= epdn_dump_stats,
	.owner		= THIS_MODULE,
};

static int __init epdn_module_init(void)
{
	BUILD_BUG_ON(sizeof(struct epdn_rec) != 28);
	return register_qdisc(&epdn_qdisc_ops);
}

static void __exit epdn_module_exit(void)
{
	unregister_qdisc(&epdn_qdisc_ops);
}

module_init(epdn_module_init);
module_exit(epdn_module_exit);
MODULE_AUTHOR("satnet project");
MODULE_LICENSE("GPL");
MODULE_VERSION(SATNET_VERSION);
MODULE_DESCRIPTION("EPDN: Explicit Packet Drop Notification gateway queue");
/* Newer kernels autoload a qdisc as "net-sch-<kind>", not "sch_<kind>". */
MODULE_ALIAS("net-sch-epdn");
