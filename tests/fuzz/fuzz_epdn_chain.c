// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: a chain of hops between one TCP sender and the RN-TCP
 * receiver, with the real gateway core (sch_epdn/epdn_core.c) at every
 * EPDN hop and the real receiver core (tcp_rn/rn_recv_core.c) at the end.
 *
 * The property (docs/epdn.md, "What the receiver can rely on"): a
 * segment that a congestion drop took away is never reported to the
 * receiver core as reordering.  Every ACK the receiver sends names its
 * first missing segment; when a hop dropped that segment for congestion
 * (or an EPDN hop in mode v2 dropped it for any cause), the ACK's mark is
 * never RN_MARK_REORDER.  That holds for any chain, any table pressure,
 * any interleaving of the hops, any loss of the packets that carry the
 * drop information at a hop that can see it, and any forged segment whose
 * sequence numbers are not within EPDN_NEAR of the flow's (a blind
 * forger's), as long as nothing is lost where no EPDN hop can see it (a
 * plain bridge, a corrupted frame at a v3 hop: drops below IP) and the
 * whole run lies within the records' idle time.  Records are released
 * after a short hold (8 ticks), which the clock passes often.
 *
 *   u8 hops; per hop u8 kind, u8 flows (8 or 16), 16 bytes of hash key;
 *   u32 initial sequence number; then operations, a byte and arguments:
 *     SEND     the sender's next segment arrives at the first hop
 *     ADVANCE  u8 hop: the head of that hop's queue leaves it, stamped as
 *              the qdisc stamps it (epdn_table_info(), epdn_opt_add_info(),
 *              epdn_ttl_hop() on a routed hop), and arrives at the next
 *              hop, or at the receiver
 *     FLOOD    u8 hop, u8 n: n drops of other flows recorded at that hop
 *     FORGE    u8 hop, a sequence number, an option: a segment with the
 *              flow's 4-tuple and a bad TCP checksum arrives at that hop;
 *              the receiver discards it
 *     TICK     the clock moves on by 0..3
 *     RESIZE   u8 hop, u8 flows: a change of flows at that hop
 *     SWEEP    u8 hop, u8 budget: the ageing sweep
 *   A segment arriving at a hop reads one more byte: pass, a congestion
 *   drop (EPDN hops, legacy routers, EPDN bridge ports) or a corruption
 *   drop (EPDN hops: recorded in mode v2 only; legacy routers).
 *
 * Hops: EPDN routers in mode v3 or v2 (lower TTL, record, stamp, move
 * EPDN-TTL), legacy routers (lower TTL only), plain bridges (nothing), and
 * bridges with an epdn qdisc on the port (record and stamp, but leave
 * EPDN-TTL alone: TTL was not lowered there).  The sender originates the
 * option, EMPTY|HOST with EPDN-TTL = TTL = 64 (net.rn.epdn_origin), and
 * the receiver requires HOST, as by default.
 */
#include "tests/fuzz/fuzz.h"
#include "sch_epdn/epdn_core.c"
#include "tcp_rn/rn_recv_core.c"
#include "tests/unit/epdn_check.h"

#define HOPS_MAX	6
#define PKTS		24
#define FORGED_MAX	24
#define QLEN		(PKTS + FORGED_MAX)
#define MSS		1000
#define WND		(4 * PKTS * MSS)
#define IDLE		(1U << 24)	/* ticks: no record ages in a run */
#define HOLD		8		/* ticks a record stays after its carrier */
#define TTL0		64

enum hop_kind {
	HOP_EPDN_V3,
	HOP_EPDN_V2,
	HOP_LEGACY,
	HOP_BRIDGE,
	HOP_BRIDGE_EPDN,
	HOP_KINDS,
};

enum fate {
	FATE_FLIGHT,		/* in a queue, or not sent yet */
	FATE_GOT,		/* reached the receiver */
	FATE_DROP,		/* congestion drop, or recorded */
	FATE_UNREPORTED,	/* corruption at a v3 hop: not its business */
};

struct pkt {
	int idx;		/* the sender's segment number; -1: forged */
	u32 seq;
	u8 ttl;
	bool has_opt;
	struct epdn_opt opt;
};

struct hop {
	u8 kind;
	struct epdn_table t;
	struct pkt q[QLEN];
	u32 head, n;
};

struct run {
	struct hop hop[HOPS_MAX];
	u32 nhops;
	u32 now;
	u32 isn;
	u32 sent;
	u32 forged;
	u8 fate[PKTS];
	struct rn_recv rx;
};

static const struct epdn_key victim = {
	.saddr = 0x0101000a, .daddr = 0x0203000a, .sport = 0x3412,
	.dport = 0x5000,
};

static bool hop_epdn(const struct hop *h)
{
	return h->kind == HOP_EPDN_V3 || h->kind == HOP_EPDN_V2 ||
	       h->kind == HOP_BRIDGE_EPDN;
}

static bool hop_routed(const struct hop *h)
{
	return h->kind != HOP_BRIDGE && h->kind != HOP_BRIDGE_EPDN;
}

static u32 read_flows(struct fuzz_in *in)
{
	return fuzz_u8(in) & 1 ? 16 : 8;
}

static void table_new(struct run *x, struct hop *h, u32 flows,
		      const struct epdn_hkey *k)
{
	struct epdn_rec *old = h->t.slot, *b = table_block(flows);

	if (old)
		epdn_table_resize(&h->t, b, lost_of(b, flows), flows, k,
				  x->now);
	else
		epdn_table_init(&h->t, b, lost_of(b, flows), flows, IDLE, k);
	h->t.hold = HOLD;
	free(old);
}

static struct epdn_hkey read_hkey(struct fuzz_in *in)
{
	struct epdn_hkey k;

	k.k0 = fuzz_u64(in);
	k.k1 = fuzz_u64(in);
	return k;
}

/* ---- the receiver: the hook's parse, the core, and TCP's ACK ---- */

/* The IPv4 header the receiver's hook would see. */
static u32 build_ip(u8 *h, const struct pkt *p)
{
	u32 hl = p->has_opt ? 20 + EPDN_OPT_LEN : 20;
	u32 tot = hl + 20 + MSS;

	memset(h, 0, hl);
	h[0] = 0x40 | hl / 4;
	h[2] = tot >> 8;
	h[3] = tot & 0xff;
	h[8] = p->ttl;
	h[9] = 6;
	if (p->has_opt)
		epdn_opt_encode(h + 20, &p->opt);
	return hl;
}

static u32 seq_of(const struct run *x, u32 i)
{
	return x->isn + i * MSS;
}

/* The first segment the receiver misses: the ACK names it. */
static u32 first_missing(const struct run *x)
{
	u32 i;

	for (i = 0; i < PKTS; i++)
		if (x->fate[i] != FATE_GOT)
			return i;
	return PKTS;
}

static void deliver(struct run *x, const struct pkt *p)
{
	struct rn_range seg = { p->seq, p->seq + MSS };
	struct rn_evidence ev;
	enum rn_mark mark;
	struct sat_ip ip;
	u8 h[60];
	u32 hl, m;

	if (p->idx < 0)
		return;		/* bad TCP checksum: not used */
	hl = build_ip(h, p);
	FUZZ_CHECK(!sat_parse_ipv4(h, hl, hl + 20 + MSS, false, &ip));
	rn_epdn_evidence(h, &ip, true, &ev);
	rn_recv_data(&x->rx, &seg, &ev);
	x->fate[p->idx] = FATE_GOT;
	m = first_missing(x);
	mark = rn_recv_ack(&x->rx, seq_of(x, m), WND);
	if (m < PKTS && x->fate[m] == FATE_DROP)
		FUZZ_CHECK(mark != RN_MARK_REORDER);
}

/* ---- the hops ---- */

/* epdn_record_drop(): the segment's range with the range it carried. */
static void record_drop(struct run *x, struct hop *h, const struct pkt *p)
{
	struct epdn_range r = { p->seq, p->seq + MSS - 1 }, carried;
	bool lost = p->has_opt && (p->opt.flags & EPDN_F_UNKNOWN);

	if (p->has_opt && epdn_opt_range(&p->opt, &carried) &&
	    !epdn_range_merge(&r, &carried))
		lost = true;
	epdn_table_record(&h->t, &victim, &r, x->now);
	if (lost)
		epdn_table_mark_lost(&h->t, &victim, x->now);
}

/* A segment arrives at hop @i: forwarded, maybe dropped, else queued. */
static void arrive(struct fuzz_in *in, struct run *x, u32 i, struct pkt p)
{
	struct hop *h = &x->hop[i];
	u8 what = fuzz_u8(in) % 4;	/* 0, 1: pass; 2: congestion; 3: CRC */

	if (i == x->nhops) {
		deliver(x, &p);
		return;
	}
	if (hop_routed(h))
		p.ttl--;
	if (what == 3 && (h->kind == HOP_EPDN_V3 ||
			  h->kind == HOP_BRIDGE_EPDN))
		what = 0;	/* a lost frame nobody here reports */
	if (what >= 2 && h->kind != HOP_BRIDGE) {
		bool recorded = what == 2 || h->kind == HOP_EPDN_V2;

		if (hop_epdn(h) && recorded)
			record_drop(x, h, &p);
		if (p.idx >= 0)
			x->fate[p.idx] = what == 2 || h->kind == HOP_EPDN_V2 ||
					 h->kind == HOP_LEGACY ?
					 FATE_DROP : FATE_UNREPORTED;
		return;
	}
	FUZZ_CHECK(h->n < QLEN);
	h->q[(h->head + h->n++) % QLEN] = p;
}

/* epdn_process() on a packet that carries the sender's option. */
static void stamp(struct run *x, struct hop *h, struct pkt *p)
{
	u8 flags = h->kind == HOP_EPDN_V2 ? EPDN_F_V2 : 0;
	struct epdn_range r = { p->seq, p->seq + MSS - 1 };
	struct epdn_info info;

	if (!epdn_table_info(&h->t, &victim, &r, x->now, &info)) {
		if (p->has_opt && hop_routed(h))
			p->opt.ttl = epdn_ttl_hop(p->opt.ttl, p->ttl);
		return;
	}
	if (!p->has_opt) {
		epdn_opt_new_info(&p->opt, p->ttl, &info, flags);
		p->has_opt = true;
		return;
	}
	if (hop_routed(h))
		p->opt.ttl = epdn_ttl_hop(p->opt.ttl, p->ttl);
	if (!epdn_opt_add_info(&p->opt, &info, flags))
		epdn_table_mark_lost(&h->t, &victim, x->now);
}

static void op_send(struct fuzz_in *in, struct run *x)
{
	struct pkt p = { .idx = (int)x->sent, .ttl = TTL0, .has_opt = true };

	if (x->sent == PKTS)
		return;
	p.seq = seq_of(x, x->sent++);
	p.opt.ttl = TTL0;
	p.opt.flags = EPDN_F_EMPTY | EPDN_F_HOST;
	arrive(in, x, 0, p);
}

static struct hop *read_hop(struct fuzz_in *in, struct run *x, u32 *i)
{
	*i = fuzz_u8(in) % x->nhops;
	return &x->hop[*i];
}

static void op_advance(struct fuzz_in *in, struct run *x)
{
	u32 i;
	struct hop *h = read_hop(in, x, &i);
	struct pkt p;

	if (!h->n)
		return;
	p = h->q[h->head];
	h->head = (h->head + 1) % QLEN;
	h->n--;
	if (hop_epdn(h))
		stamp(x, h, &p);
	arrive(in, x, i + 1, p);
}

static void op_flood(struct fuzz_in *in, struct run *x)
{
	u32 i, n;
	struct hop *h = read_hop(in, x, &i);

	n = fuzz_u8(in) % 32;
	while (hop_epdn(h) && n--) {
		struct epdn_key k = victim;
		struct epdn_range r;

		k.saddr = 0x0a000000 | fuzz_u16(in);
		r.min = fuzz_u32(in);
		r.max = r.min + MSS - 1;
		epdn_table_record(&h->t, &k, &r, x->now);
	}
}

/* A sequence number a blind forger might send: far from the flow's. */
static u32 read_blind(struct fuzz_in *in, const struct run *x)
{
	return x->isn + 0x80000000U + fuzz_u16(in);
}

/* Forged: a blind sequence number, the sender's option or any option. */
static void op_forge(struct fuzz_in *in, struct run *x)
{
	struct pkt p = { .idx = -1, .ttl = TTL0 };
	u32 i, k;
	u8 how;

	read_hop(in, x, &i);
	p.seq = read_blind(in, x);
	how = fuzz_u8(in);
	for (k = 0; k < i; k++)
		p.ttl -= hop_routed(&x->hop[k]);
	p.has_opt = how & 1;
	p.opt.ttl = p.ttl;
	p.opt.flags = how & 2 ? EPDN_F_HOST : EPDN_F_EMPTY | EPDN_F_HOST;
	p.opt.min = read_blind(in, x);
	p.opt.max = p.opt.min + fuzz_u16(in);
	if (x->forged == FORGED_MAX)
		return;
	x->forged++;
	if (hop_routed(&x->hop[i]))
		p.ttl++;	/* arrive() lowers it again */
	arrive(in, x, i, p);
}

static void op_tick(struct fuzz_in *in, struct run *x)
{
	x->now += fuzz_u8(in) % 4;
}

static void op_resize(struct fuzz_in *in, struct run *x)
{
	u32 i;
	struct hop *h = read_hop(in, x, &i);
	u32 flows = read_flows(in);
	struct epdn_hkey k = read_hkey(in);

	if (hop_epdn(h))
		table_new(x, h, flows, &k);
}

static void op_sweep(struct fuzz_in *in, struct run *x)
{
	u32 i;
	struct hop *h = read_hop(in, x, &i);
	u32 budget = fuzz_u8(in);

	if (hop_epdn(h))
		epdn_table_sweep(&h->t, x->now, budget);
}

static void (*const ops[])(struct fuzz_in *in, struct run *x) = {
	op_send, op_send, op_advance, op_advance, op_advance, op_flood,
	op_forge, op_tick, op_resize, op_sweep,
};

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct fuzz_in in = fuzz_start(data, size);
	struct run *x = unit_calloc(1, sizeof(*x));
	u32 i;

	x->nhops = 1 + fuzz_u8(&in) % HOPS_MAX;
	for (i = 0; i < x->nhops; i++) {
		struct hop *h = &x->hop[i];
		u32 flows;
		struct epdn_hkey k;

		h->kind = fuzz_u8(&in) % HOP_KINDS;
		flows = read_flows(&in);
		k = read_hkey(&in);
		table_new(x, h, flows, &k);
	}
	x->isn = fuzz_u32(&in);
	x->now = fuzz_u32(&in);
	rn_recv_init(&x->rx, x->isn, WND, 0);
	while (fuzz_more(&in))
		ops[fuzz_pick(&in, FUZZ_COUNT(ops))](&in, x);
	for (i = 0; i < x->nhops; i++)
		free(x->hop[i].t.slot);
	free(x);
	return 0;
}
