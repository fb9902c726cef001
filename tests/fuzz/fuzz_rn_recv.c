// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: the RN-TCP receiver core, tcp_rn/rn_recv_core.c.
 *
 *   u32 rcv_nxt, window, u8 wscale, u8 setup (bit 0: require HOST, bit 1
 *   and 2: the overflow policy of the two free-standing range sets), u32
 *   base of those sets; then operations, a byte and its arguments:
 *     DATA     a segment and its evidence (UNKNOWN or not), as structs:
 *              rn_recv_data(); nothing below unk_end is ever reordered
 *     PACKET   an IPv4 header (options: none, an EPDN option built from
 *              the input, or raw bytes) and a TCP header, through
 *              sat_parse_ipv4(), sat_parse_tcp(), rn_epdn_evidence() and
 *              rn_parse_tcpopts() (its timestamp checked against a
 *              reference walk) into rn_recv_paws(), rn_recv_data() and,
 *              for a segment PAWS discards, rn_recv_discarded(), as the
 *              host hook does
 *     ACK      an ACK number and window: rn_recv_ack()
 *     ACKPKT   TCP options (raw, or SACK blocks and a window scale) through
 *              rn_parse_tcpopts(), its SACK blocks and edge checked against
 *              a reference walk (fuzz_ref_opt(), fuzz_ref_sack()), then
 *              rn_recv_tstamps() if it has a timestamp, rn_recv_ack() and
 *              rn_recv_sacked(); a SYN restarts the flow as the hook does
 *     INIT     rn_recv_init() and rn_recv_set_high()
 *     FIN      rn_recv_fin()
 *     RSET     add, sub, add_except, prune, has or init on one of two
 *              free-standing range sets
 *
 * A segment that starts outside [rcv_nxt - wnd, rcv_right), wnd the
 * window advertised, changes nothing; one inside is never ignored.
 *
 * Nothing is bounded: sequence numbers are anywhere in 2^32 (near
 * rcv_nxt, Q or the right edge, or any value), segments and dropped
 * ranges have any length (small, 16-bit, 32-bit, or within 2^8 of 2^31),
 * windows any size (the core clamps to 2^30).  The receiver state and the
 * range sets each sit alone in an allocation of their exact size, so that
 * AddressSanitizer sees a write past the last range, as KASAN would past
 * the slab object.  After every operation the invariants of
 * tests/unit/rn_recv_check.h hold; the range sets given ranges inside a
 * 4 KiB window are checked byte for byte against a model.
 */
#include "tests/fuzz/fuzz.h"
#include "tcp_rn/rn_recv_core.c"
#include "tests/unit/rn_recv_check.h"

#define MODEL		4096u
#define SPAN_2_31	0x80000000u

/* A free-standing range set and its model, while the model is exact. */
struct mset {
	struct rn_rset *s;
	u8 bits[MODEL];
	bool exact;
};

struct run {
	struct rn_recv *st;
	bool require_host;
	u32 base;		/* of the model sets */
	struct mset m[2];
};

/* A sequence number near one of the state's marks, or anywhere. */
static u32 read_seq(struct fuzz_in *in, const struct rn_recv *st)
{
	static const size_t mark[] = {
		offsetof(struct rn_recv, rcv_nxt),
		offsetof(struct rn_recv, q_start),
		offsetof(struct rn_recv, q_end),
		offsetof(struct rn_recv, rcv_right),
	};
	u32 base;

	memcpy(&base, (const u8 *)st + mark[fuzz_pick(in, 4)], sizeof(base));
	return fuzz_near(in, base);
}

static struct rn_range read_range(struct fuzz_in *in, const struct rn_recv *st)
{
	u32 start = read_seq(in, st);

	return rn_range_make(start, start + fuzz_len(in, SPAN_2_31));
}

/* Is every range of @now inside one range of @was? */
static bool rset_within(const struct rn_rset *now, const struct rn_rset *was,
			u32 origin)
{
	u32 i, j;

	for (i = 0; i < now->n; i++) {
		u32 s = now->r[i].start - origin, e = now->r[i].end - origin;

		for (j = 0; j < was->n; j++)
			if (was->r[j].start - origin <= s &&
			    e <= was->r[j].end - origin)
				break;
		if (j == was->n)
			return false;
	}
	return true;
}

/* §IV-A: the mark names the list that holds the ACK number. */
static void check_mark(const struct rn_recv *st, u32 ack, enum rn_mark m)
{
	bool reo = rn_rset_has(&st->reorder, ack);
	bool drop = rn_rset_has(&st->drop, ack);

	FUZZ_CHECK(m == (reo ? RN_MARK_REORDER : drop ? RN_MARK_DROP :
			 !sat_before(ack, st->q_end) ? RN_MARK_INORDER :
			 RN_MARK_UNKNOWN));
}

/*
 * Does @seg start outside [rcv_nxt - wnd, rcv_right), wnd the window we
 * advertised (rcv_right - rcv_nxt), or hold no byte?
 */
static bool seg_outside(const struct rn_recv *st, const struct rn_range *seg)
{
	u32 win = st->rcv_right - st->rcv_nxt, lo = st->rcv_nxt - win;

	return rn_range_empty(seg) || seg->start - lo >= 2 * win;
}

/* Below unk_end nothing is reordered (EPDN_F_UNKNOWN). */
static bool unknown_floor_holds(const struct rn_recv *st)
{
	u32 i;

	if (!(st->flags & RN_RF_UNKNOWN))
		return true;
	for (i = 0; i < st->reorder.n; i++)
		if (sat_before(st->reorder.r[i].start, st->unk_end))
			return false;
	return true;
}

/* One data segment: what rn_recv_data() promises about the lists and Q. */
static void data(struct run *x, const struct rn_range *seg,
		 const struct rn_evidence *ev)
{
	struct rn_recv *st = x->st, was = *st;
	u32 win = st->rcv_right - st->rcv_nxt;
	enum rn_data_result res = rn_recv_data(st, seg, ev);
	struct rn_range p = *seg, q;

	/* RFC 5961 §3.2: a reset counts at exactly the in-order point. */
	FUZZ_CHECK(rn_recv_rst_ok(st, seg->start) ==
		   (seg->start == st->rcv_nxt));
	/* Exactly the segments outside are ignored, and change nothing. */
	FUZZ_CHECK((res == RN_DATA_OUTSIDE) == seg_outside(&was, seg));
	if (res == RN_DATA_OUTSIDE) {
		FUZZ_CHECK(!memcmp(&was, st, sizeof(was)));
		return;
	}
	FUZZ_CHECK((res == RN_DATA_WIDE) ==
		   (ev->kind == RN_EV_DROPS &&
		    ev->drop.end - ev->drop.start > win));
	FUZZ_CHECK(res != RN_DATA_CLASSIFIED || (st->flags & RN_RF_PROVEN));
	FUZZ_CHECK(unknown_floor_holds(st));
	if (res == RN_DATA_CLASSIFIED && ev->unknown)
		FUZZ_CHECK(st->flags & RN_RF_UNKNOWN);
	if (res != RN_DATA_CLASSIFIED)
		FUZZ_CHECK(rset_within(&st->reorder, &was.reorder,
				       st->rcv_nxt));
	/* P and Q arrived: never in the drop list. */
	if (sat_after(p.end, st->rcv_right))
		p.end = st->rcv_right;
	q = rn_range_make(st->q_start, st->q_end);
	FUZZ_CHECK(!rset_meets(&st->drop, &q));
	p = rn_range_clip(&p, st->rcv_nxt, st->rcv_right);
	FUZZ_CHECK(!rset_meets(&st->drop, &p));
	/* Q is the highest segment received. */
	p = *seg;
	if (sat_after(p.end, was.rcv_right))
		p.end = was.rcv_right;
	if (sat_after(p.end, was.q_end))
		FUZZ_CHECK(st->q_start == p.start && st->q_end == p.end);
	else
		FUZZ_CHECK(st->q_start == was.q_start &&
			   st->q_end == was.q_end);
}

static void op_data(struct fuzz_in *in, struct run *x)
{
	struct rn_range seg = read_range(in, x->st);
	struct rn_evidence ev = { .kind = fuzz_pick(in, 4) };

	ev.drop = read_range(in, x->st);
	ev.unknown = fuzz_u8(in) & 1;
	data(x, &seg, &ev);
}

/*
 * IPv4 options: none, an EPDN option (after NOPs or a record-route, with
 * EPDN-TTL equal to TTL or read, flags and version read, min and max near
 * the window or anywhere), the sender's empty option, or raw bytes.
 */
static u32 build_ipopts(struct fuzz_in *in, const struct rn_recv *st,
			u8 ttl, u8 *o)
{
	u8 mode = fuzz_u8(in), at = 0;
	u32 lo, len;

	memset(o, 0, 40);
	switch (mode & 3) {
	case 0:
		return 0;
	case 1:
		if (mode & 4) {
			o[0] = 7;	/* record route, 7 bytes */
			o[1] = 7;
			o[2] = 4;
			at = 7;
		} else {
			at = fuzz_pick(in, 4);
			memset(o, SAT_OPT_NOP, at);
		}
		lo = read_seq(in, st);
		o[at] = EPDN_OPT_TYPE;
		o[at + 1] = EPDN_OPT_LEN;
		o[at + 2] = mode & 8 ? fuzz_u8(in) : ttl;
		o[at + 3] = mode & 16 ? fuzz_u8(in) :
			    EPDN_VERFLAGS(fuzz_u8(in));
		put32(o + at + 4, lo);
		put32(o + at + 8, lo + fuzz_len(in, SPAN_2_31) - 1);
		return (at + EPDN_OPT_LEN + 3) & ~3u;
	case 2:
		rn_epdn_encode_empty(o, ttl);
		return EPDN_OPT_LEN;
	default:
		len = fuzz_pick(in, 11) * 4;
		fuzz_fill(in, o, len);
		return len;
	}
}

/* What rn_epdn_evidence() returned is what the option says. */
static void check_evidence(enum rn_ev_status s, const struct rn_evidence *ev,
			   bool require_host)
{
	switch (s) {
	case RN_EVS_ABSENT:
		FUZZ_CHECK(ev->kind == RN_EV_ABSENT);
		break;
	case RN_EVS_TRUSTED:
		FUZZ_CHECK(ev->kind == RN_EV_EMPTY || ev->kind == RN_EV_DROPS);
		if (ev->kind == RN_EV_DROPS)
			FUZZ_CHECK(!rn_range_empty(&ev->drop) &&
				   ev->drop.end - ev->drop.start <= SPAN_2_31);
		break;
	default:
		FUZZ_CHECK(s <= RN_EVS_MALFORMED);
		FUZZ_CHECK(s != RN_EVS_NOHOST || require_host);
		FUZZ_CHECK(ev->kind == RN_EV_UNTRUSTED);
		break;
	}
}

/*
 * The timestamp option of @len option bytes, as a reference: the TSval of
 * the last one 10 bytes long before the walk ends (EOL, the end, or a
 * malformed option), as tcp_parse_options() reads it.
 */
static bool ref_ts(const u8 *o, u32 len, u32 *tsval)
{
	bool found = false;
	u64 at, size;
	int kind;

	for (at = 0; (kind = fuzz_ref_opt(o, len, at, &size)) >= 0;
	     at += size) {
		if (kind != SAT_OPT_TIMESTAMP || size != 10)
			continue;
		found = true;
		*tsval = (u32)o[at + 2] << 24 | (u32)o[at + 3] << 16 |
			 (u32)o[at + 4] << 8 | o[at + 5];
	}
	return found;
}

/* What rn_parse_tcpopts() says of a timestamp is what the options say. */
static void check_ts(const u8 *o, u32 len, const struct rn_tcpopts *to)
{
	u32 tsval = 0;
	bool ts = ref_ts(o, len, &tsval);

	FUZZ_CHECK(to->ts == ts && (!ts || to->tsval == tsval));
}

/*
 * RFC 7323 §5.3: with timestamps on, a TSval more than 1 older than
 * TS.Recent is discarded and changes nothing; otherwise TS.Recent only
 * moves forward, and only to a segment's TSval.
 */
static bool paws(struct run *x, const struct rn_range *seg, u32 tsval)
{
	struct rn_recv *st = x->st, was = *st, now;
	bool discard = rn_recv_paws(st, seg, tsval);

	if (discard || !(was.flags & RN_RF_TSTAMPS)) {
		FUZZ_CHECK(!discard || ((was.flags & RN_RF_TS_RECENT) &&
					(s32)(was.ts_recent - tsval) > 1));
		FUZZ_CHECK(!memcmp(&was, st, sizeof(was)));
		return discard;
	}
	if (was.flags & RN_RF_TS_RECENT) {
		FUZZ_CHECK((s32)(was.ts_recent - tsval) <= 1);
		FUZZ_CHECK(st->ts_recent == was.ts_recent ||
			   (st->ts_recent == tsval &&
			    (s32)(tsval - was.ts_recent) > 0));
	} else if (st->flags & RN_RF_TS_RECENT) {
		FUZZ_CHECK(st->ts_recent == tsval);
	}
	/* Nothing else moves. */
	now = *st;
	now.ts_recent = was.ts_recent;
	now.flags = (now.flags & ~RN_RF_TS_RECENT) |
		    (was.flags & RN_RF_TS_RECENT);
	FUZZ_CHECK(!memcmp(&was, &now, sizeof(was)));
	return false;
}

/* Does a range of @s hold every byte of @r (not empty)? */
static bool rset_holds(const struct rn_rset *s, const struct rn_range *r)
{
	u32 i;

	for (i = 0; i < s->n; i++)
		if (!sat_after(s->r[i].start, r->start) &&
		    !sat_before(s->r[i].end, r->end))
			return true;
	return false;
}

/*
 * A segment TCP discards: its bytes inside the window leave the reorder
 * list, and those that are not Q's lie in the drop list; Q never does.
 */
static void discarded(struct run *x, const struct rn_range *seg)
{
	struct rn_recv *st = x->st;
	struct rn_range p = *seg, q, part;

	rn_recv_discarded(st, seg);
	q = rn_range_make(st->q_start, st->q_end);
	FUZZ_CHECK(!rset_meets(&st->drop, &q));
	if (seg_outside(st, seg))
		return;
	p = rn_range_clip(&p, st->rcv_nxt, st->rcv_right);
	if (rn_range_empty(&p))
		return;
	FUZZ_CHECK(!rset_meets(&st->reorder, &p));
	part = rn_range_make(p.start, sat_seq_min(p.end, q.start));
	FUZZ_CHECK(rn_range_empty(&part) || rset_holds(&st->drop, &part));
	part = rn_range_make(sat_seq_max(p.start, q.end), p.end);
	FUZZ_CHECK(rn_range_empty(&part) || rset_holds(&st->drop, &part));
}

/* A data packet through the parsers, as rn_pkt_parse() reads it. */
static void op_packet(struct fuzz_in *in, struct run *x)
{
	u8 iph[EPDN_IPV4_HDR_MAX + 40], th[SAT_TCP_HDR_MAX], flags;
	u32 ttl = fuzz_u8(in), hl, payload, avail, cap, l4, doff;
	struct rn_evidence ev;
	enum rn_ev_status s;
	struct rn_tcpopts to;
	struct sat_tcp tcp;
	struct sat_ip ip;
	struct rn_range seg;
	bool discard;
	u8 *h, *t;
	int ret;

	memset(iph, 0, sizeof(iph));
	hl = EPDN_IPV4_HDR_MIN + build_ipopts(in, x->st, (u8)ttl, iph + 20);
	flags = fuzz_u8(in);
	payload = fuzz_u16(in);
	iph[0] = 0x40 | (u8)(hl / 4);
	if (flags & 0x80)
		iph[0] = fuzz_u8(in);	/* any version and ihl */
	put16(iph + 2, hl + payload);
	iph[6] = flags & 0x60;		/* DF, MF */
	iph[8] = (u8)ttl;
	iph[9] = 6;
	avail = (flags & 1) ? fuzz_u32(in) : hl + payload + (flags & 0x1e);
	cap = avail < EPDN_IPV4_HDR_MAX ? avail : EPDN_IPV4_HDR_MAX;
	h = fuzz_dup(iph, cap);
	ret = sat_parse_ipv4(h, cap, avail, false, &ip);
	if (ret == SAT_OK) {
		FUZZ_CHECK(ip.hdr_len >= EPDN_IPV4_HDR_MIN &&
			   ip.hdr_len <= cap && ip.tot_len >= ip.hdr_len &&
			   ip.tot_len <= avail && ip.ttl == h[8]);
		FUZZ_CHECK(ip.frag == !!(h[6] & 0x3f || h[7]));
	}
	if (ret != SAT_OK || ip.frag) {
		fuzz_free(h, cap);
		return;
	}
	s = rn_epdn_evidence(h, &ip, x->require_host, &ev);
	check_evidence(s, &ev, x->require_host);
	/* The sender's origin hook, on the same header, at a 1500-byte MTU. */
	FUZZ_CHECK(rn_origin_decide(ip.hdr_len, ip.tot_len, 1500) ==
		   (ip.hdr_len != EPDN_IPV4_HDR_MIN ? RN_ORIGIN_SKIP_OPTS :
		    ip.tot_len + EPDN_OPT_LEN > 1500 ? RN_ORIGIN_SKIP_MTU :
		    RN_ORIGIN_STAMP));
	fuzz_free(h, cap);

	memset(th, 0, sizeof(th));
	put32(th + 4, read_seq(in, x->st));
	doff = 5 + fuzz_pick(in, 11);
	th[12] = (u8)(doff << 4);
	th[13] = fuzz_u8(in);
	fuzz_fill(in, th + 20, (doff - 5) * 4);
	l4 = ip.tot_len - ip.hdr_len;
	cap = l4 < SAT_TCP_HDR_MAX ? l4 : SAT_TCP_HDR_MAX;
	t = fuzz_dup(th, cap);
	ret = sat_parse_tcp(t, cap, l4, &tcp);
	if (ret != SAT_OK) {
		fuzz_free(t, cap);
		FUZZ_CHECK(cap < 20 || l4 < doff * 4 || cap < doff * 4);
		return;
	}
	/* The options as the hook reads them: the header's own bytes. */
	rn_parse_tcpopts(t + SAT_TCP_HDR_MIN, tcp.hdr_len - SAT_TCP_HDR_MIN,
			 tcp.ack, &to);
	fuzz_free(t, cap);
	check_ts(th + SAT_TCP_HDR_MIN, tcp.hdr_len - SAT_TCP_HDR_MIN, &to);
	FUZZ_CHECK(tcp.hdr_len == doff * 4 && tcp.payload == l4 - doff * 4);
	FUZZ_CHECK(tcp.end_seq - tcp.seq == tcp.payload +
		   !!(tcp.flags & SAT_TCP_SYN) + !!(tcp.flags & SAT_TCP_FIN));
	seg = rn_range_make(tcp.seq, tcp.end_seq);
	discard = to.ts && paws(x, &seg, to.tsval);
	data(x, &seg, &ev);
	if (discard)
		discarded(x, &seg);
	if (tcp.flags & SAT_TCP_FIN)
		rn_recv_fin(x->st, tcp.end_seq);
}

static void ack(struct run *x, u32 ack, u32 wnd)
{
	struct rn_recv *st = x->st;
	u32 was_nxt = st->rcv_nxt;

	check_mark(st, ack, rn_recv_ack(st, ack, wnd));
	FUZZ_CHECK(st->rcv_nxt == (sat_after(ack, was_nxt) ? ack :
				   was_nxt));
}

static void op_ack(struct fuzz_in *in, struct run *x)
{
	u32 a = read_seq(in, x->st);

	ack(x, a, fuzz_len(in, RN_WINDOW_MAX));
}

/* SACK blocks near the ACK, a window scale option, around NOPs. */
static u32 build_tcpopts(struct fuzz_in *in, u32 a, u8 *o)
{
	u32 n = fuzz_pick(in, 5), i, len = 0;

	memset(o, 0, 40);
	if (fuzz_u8(in) & 1) {
		o[len++] = SAT_OPT_NOP;
		o[len++] = 3;
		o[len++] = 3;
		o[len++] = fuzz_u8(in);
	}
	if (n) {
		o[len++] = SAT_OPT_NOP;
		o[len++] = SAT_OPT_NOP;
		o[len++] = 5;
		o[len++] = (u8)(2 + 8 * n);
		for (i = 0; i < n; i++) {
			u32 s = fuzz_near(in, a);

			put32(o + len, s);
			put32(o + len + 4, s + fuzz_len(in, SPAN_2_31));
			len += 8;
		}
	}
	return len;
}

/*
 * The SACK options of @len option bytes, as a reference: the first
 * SAT_SACK_MAX blocks into @blk (their count returned) and the highest
 * right edge above @a; the walk stops at EOL or a malformed option, and a
 * SACK option of any length but that of 1 to 4 blocks is ignored.
 */
static u32 ref_sack(const u8 *o, u32 len, u32 a, u32 *high,
		    struct rn_range *blk)
{
	u32 left[SAT_SACK_MAX], right[SAT_SACK_MAX], nblk = 0;
	int kind, n, i;
	u64 at, size;

	*high = a;
	for (at = 0; (kind = fuzz_ref_opt(o, len, at, &size)) >= 0;
	     at += size) {
		if (kind != SAT_OPT_SACK)
			continue;
		n = fuzz_ref_sack(o + at, size, left, right);
		for (i = 0; i < n; i++) {
			if (nblk < SAT_SACK_MAX)
				blk[nblk++] = rn_range_make(left[i], right[i]);
			if (sat_after(right[i], a) &&
			    right[i] - a > *high - a)
				*high = right[i];
		}
	}
	return nblk;
}

/*
 * Our ACK's SACK blocks: no byte of them is left in the reorder list, the
 * list only shrinks, and the drop list does not move.
 */
static void sacked(struct run *x, const struct rn_range *blk, u32 n)
{
	struct rn_recv *st = x->st, was = *st;
	struct rn_range r;
	u32 i;

	rn_recv_sacked(st, blk, n);
	FUZZ_CHECK(rset_within(&st->reorder, &was.reorder, st->rcv_nxt));
	FUZZ_CHECK(!memcmp(&st->drop, &was.drop, sizeof(was.drop)));
	for (i = 0; i < n; i++) {
		r = rn_range_clip(&blk[i], st->rcv_nxt, st->rcv_right);
		FUZZ_CHECK(!rset_meets(&st->reorder, &r));
	}
}

/* An outgoing ACK, as rn_ack_decide() handles it. */
static void op_ackpkt(struct fuzz_in *in, struct run *x)
{
	u8 mode = fuzz_u8(in), raw[40], *o;
	u32 a = read_seq(in, x->st), win = fuzz_u16(in), len;
	struct rn_range blk[SAT_SACK_MAX];
	struct rn_tcpopts to;
	u32 high, nblk;

	if (mode & 1) {
		len = fuzz_pick(in, 41);
		fuzz_fill(in, raw, len);
	} else {
		len = build_tcpopts(in, a, raw);
	}
	o = fuzz_dup(raw, len);
	rn_parse_tcpopts(o, len, a, &to);
	fuzz_free(o, len);
	nblk = ref_sack(raw, len, a, &high, blk);
	FUZZ_CHECK(to.sack == (high != a) && to.sack_high == high);
	FUZZ_CHECK(to.nblocks == nblk &&
		   !memcmp(to.blocks, blk, nblk * sizeof(blk[0])));
	FUZZ_CHECK(to.wscale >= -1 && to.wscale <= RN_WSCALE_MAX);
	FUZZ_CHECK(to.sack ? sat_after(to.sack_high, a) :
		   to.sack_high == a);
	check_ts(raw, len, &to);
	if (mode & 2) {		/* SYN: the flow starts (rn_flow_start()) */
		rn_recv_init(x->st, a, win, to.wscale < 0 ? 0 : to.wscale);
		if (to.sack)
			rn_recv_set_high(x->st, to.sack_high);
	}
	if (to.ts)
		rn_recv_tstamps(x->st);
	if (mode & 2)
		return;
	ack(x, a, win << x->st->wscale);
	sacked(x, to.blocks, to.nblocks);
}

static void op_init(struct fuzz_in *in, struct run *x)
{
	struct rn_recv *st = x->st;
	u32 nxt = read_seq(in, st), wnd = fuzz_len(in, RN_WINDOW_MAX);
	u8 wscale = fuzz_u8(in);

	rn_recv_init(st, nxt, wnd, wscale);
	FUZZ_CHECK(st->wscale <= RN_WSCALE_MAX && !st->drop.n &&
		   !st->reorder.n && st->q_end == nxt);
	if (fuzz_u8(in) & 1)
		rn_recv_set_high(st, read_seq(in, st));
}

static void op_fin(struct fuzz_in *in, struct run *x)
{
	struct rn_recv *st = x->st;

	rn_recv_fin(st, read_seq(in, st));
	FUZZ_CHECK(rn_recv_done(st) == !sat_before(st->rcv_nxt, st->fin_end));
}

/* ---- the free-standing range sets ---- */

/* The model from the set, when the set lies inside the model window. */
static void mset_sync(struct mset *m, u32 base)
{
	u32 i;

	memset(m->bits, 0, sizeof(m->bits));
	m->exact = rset_sane(m->s);
	for (i = 0; m->exact && i < m->s->n; i++) {
		u32 s = m->s->r[i].start - base, e = m->s->r[i].end - base;

		m->exact = s < e && e <= MODEL;
		if (m->exact)
			memset(m->bits + s, 1, e - s);
	}
	m->s->overflows = 0;
}

/* The set holds exactly the model's runs of bytes, in order. */
static void mset_check(const struct mset *m, u32 base)
{
	u32 i = 0, k = 0, j;

	while (i < MODEL) {
		if (!m->bits[i]) {
			i++;
			continue;
		}
		for (j = i; j < MODEL && m->bits[j]; j++)
			;
		FUZZ_CHECK(k < m->s->n && m->s->r[k].start == base + i &&
			   m->s->r[k].end == base + j);
		k++;
		i = j;
	}
	FUZZ_CHECK(k == m->s->n);
}

static void op_rset(struct fuzz_in *in, struct run *x)
{
	u8 sel = fuzz_u8(in);
	struct mset *m = &x->m[sel & 1], *other = &x->m[!(sel & 1)];
	bool hostile = sel & 2;
	u32 off = fuzz_u16(in) % MODEL, len = fuzz_u8(in), i;
	struct rn_range r;

	if (off + len > MODEL)
		len = MODEL - off;
	r = rn_range_make(x->base + off, x->base + off + len);
	if (hostile) {
		r.start = fuzz_near(in, x->base);
		r.end = r.start + fuzz_len(in, SPAN_2_31);
		m->exact = false;
	}
	switch ((sel >> 2) % 6) {
	case 0:
		rn_rset_add(m->s, &r);
		memset(m->bits + off, 1, len);
		break;
	case 1:
		rn_rset_sub(m->s, &r);
		memset(m->bits + off, 0, len);
		break;
	case 2:
		rn_rset_add_except(m->s, &r, other->s);
		for (i = off; i < off + len; i++)
			m->bits[i] |= !other->bits[i];
		m->exact &= other->exact;
		break;
	case 3:
		rn_rset_prune(m->s, r.start);
		memset(m->bits, 0, off);
		break;
	case 4:
		FUZZ_CHECK(!m->exact ||
			   rn_rset_has(m->s, r.start) == m->bits[off]);
		break;
	default:
		rn_rset_init(m->s, sel >> 7);
		mset_sync(m, x->base);
		break;
	}
	FUZZ_CHECK(m->s->n <= RN_RANGES_MAX);
	if (!m->exact)
		return;
	FUZZ_CHECK(rset_sane(m->s));
	if (m->s->overflows)
		mset_sync(m, x->base);
	else
		mset_check(m, x->base);
}

static void (*const ops[])(struct fuzz_in *in, struct run *x) = {
	op_data, op_packet, op_ack, op_ackpkt, op_init, op_fin, op_rset,
};

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct fuzz_in in = fuzz_start(data, size);
	u32 nxt = fuzz_u32(&in), wnd = fuzz_len(&in, RN_WINDOW_MAX), i;
	u8 wscale = fuzz_u8(&in), setup = fuzz_u8(&in);
	struct run *x = unit_calloc(1, sizeof(*x));

	x->st = unit_calloc(1, sizeof(*x->st));
	x->require_host = setup & 1;
	x->base = fuzz_u32(&in);
	rn_recv_init(x->st, nxt, wnd, wscale);
	for (i = 0; i < 2; i++) {
		x->m[i].s = unit_calloc(1, sizeof(struct rn_rset));
		rn_rset_init(x->m[i].s, (setup >> (1 + i)) & 1);
		x->m[i].exact = true;
	}
	while (fuzz_more(&in)) {
		ops[fuzz_pick(&in, FUZZ_COUNT(ops))](&in, x);
		FUZZ_CHECK(recv_sane(x->st));
		FUZZ_CHECK(rn_recv_overflows(x->st) ==
			   x->st->drop.overflows + x->st->reorder.overflows);
	}
	for (i = 0; i < 2; i++)
		free(x->m[i].s);
	free(x->st);
	free(x);
	return 0;
}
