/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RN-TCP receiver core: the drop list and the reorder list of one flow,
 * the case analysis of seed 001 §IV, the ACK decision of §IV-A, and the
 * parsers the host hooks need (IPv4 header, EPDN option, TCP header and
 * options).  Plain C with no kernel dependency: rn_host links
 * tcp_rn/rn_recv_core.c, and the userspace unit test includes the same
 * file.  The caller owns all memory and locking; the core never allocates.
 *
 * Paper: A. Sathiaseelan, T. Radzik, "RN-TCP with EPDN" (seed 001), §II,
 * §III-D, §IV, §IV-A.  docs/rn-tcp.md maps every case to this code.
 *
 * The seed numbers whole packets.  Here every list holds half-open ranges
 * of TCP byte sequence numbers, [start, end), and every comparison wraps
 * (before()/after() of include/net/tcp.h).  A flow's ranges all lie inside
 * the window the receiver advertised, at most 2^30 wide, so the order is
 * well defined; a range from a packet is clipped to it in offsets from
 * rcv_nxt, never compared with before()/after().
 */
#ifndef SATNET_RN_RECV_CORE_H
#define SATNET_RN_RECV_CORE_H

#include <satnet/types.h>
#ifdef __KERNEL__
#include <linux/string.h>
#else
#include <string.h>
#endif

#include <satnet/hdr.h>
#include <satnet/epdn_opt.h>
#include <satnet/seq.h>

/* Ranges per list; one more slot holds a split until the cap is applied. */
#define RN_RANGES_MAX		64
#define RN_WINDOW_MAX		0x40000000U	/* 2^30, RFC 7323: 65535 << 14 */
#define RN_WSCALE_MAX		14

/* Half-open range of TCP sequence numbers, host byte order. */
struct rn_range {
	u32 start;
	u32 end;
};

/*
 * What a full list gives up.  Both choices err towards "dropped", the
 * answer that makes the sender behave like plain TCP.
 *   RN_OVF_DROP_HIGH: forget the highest range (reorder list: that hole
 *	becomes unclassified, and an unclassified hole is not marked).
 *   RN_OVF_COARSEN: merge the two closest ranges (drop list: the bytes
 *	between them are then believed dropped too).
 */
enum rn_overflow {
	RN_OVF_DROP_HIGH,
	RN_OVF_COARSEN,
};

/* A sorted set of disjoint, non-adjacent ranges. */
struct rn_rset {
	u32 overflows;			/* times the cap was applied */
	u8 n;				/* ranges in use */
	u8 overflow;			/* enum rn_overflow */
	struct rn_range r[RN_RANGES_MAX + 1];
};

#define RN_RF_PROVEN		0x01	/* last option proved an EPDN path */
#define RN_RF_FIN		0x02	/* fin_end is valid */
#define RN_RF_UNKNOWN		0x04	/* unk_end is valid */
#define RN_RF_TSTAMPS		0x08	/* our ACKs carry timestamps: PAWS */
#define RN_RF_TS_RECENT		0x10	/* ts_recent is valid */

/* The receiver state of one flow (one direction of a connection). */
struct rn_recv {
	u32 rcv_nxt;		/* in-order point: ACK number last sent */
	u32 rcv_right;		/* right edge of the window advertised */
	u32 q_start;		/* Q: highest segment received, */
	u32 q_end;		/*    [q_start, q_end) */
	u32 fin_end;		/* sequence number after the peer's FIN */
	u32 unk_end;		/* no gap below it is ever called reordered */
	u32 ts_recent;		/* TS.Recent as TCP keeps it (RFC 7323 §4.3) */
	u8 wscale;		/* our receive window scale */
	u8 flags;		/* RN_RF_* */
	struct rn_rset drop;	/* believed dropped (EPDN said so) */
	struct rn_rset reorder;	/* believed reordered (gap, no drop) */
};

/* What a data packet's IP header says about drops upstream. */
enum rn_ev_kind {
	RN_EV_ABSENT,		/* no EPDN option */
	RN_EV_EMPTY,		/* trusted option, no drop recorded */
	RN_EV_DROPS,		/* trusted option, drop holds the range */
	RN_EV_UNTRUSTED,	/* option present but not proof */
};

struct rn_evidence {
	enum rn_ev_kind kind;
	struct rn_range drop;	/* RN_EV_DROPS: [min, max + 1) */
	bool unknown;		/* EPDN_F_UNKNOWN: drop records may be lost */
};

/* Why a packet's option was or was not trusted (for the counters). */
enum rn_ev_status {
	RN_EVS_ABSENT,
	RN_EVS_TRUSTED,
	RN_EVS_TTL,		/* EPDN-TTL != TTL: a router without EPDN */
	RN_EVS_NOHOST,		/* HOST clear while the host requires it */
	RN_EVS_MALFORMED,	/* bad option list, length, version, range */
};

/* Result of a data segment. */
enum rn_data_result {
	RN_DATA_CLASSIFIED,	/* lists updated from the evidence */
	RN_DATA_UNPROVEN,	/* path not proven: only Q and removals */
	RN_DATA_WIDE,		/* drop range wider than the window: untrusted */
	RN_DATA_OUTSIDE,	/* starts outside [rcv_nxt - wnd, rcv_right) */
};

/* The ACK decision of §IV-A for the first missing byte (the ACK). */
enum rn_mark {
	RN_MARK_INORDER,	/* nothing missing: bit clear */
	RN_MARK_REORDER,	/* first hole in the reorder list: bit set */
	RN_MARK_DROP,		/* first hole in the drop list: bit clear */
	RN_MARK_UNKNOWN,	/* first hole unclassified: bit clear */
};

/* What the TCP options of a segment say. */
struct rn_tcpopts {
	int wscale;		/* window scale option, or -1 */
	bool ts;		/* a timestamp option, */
	u32 tsval;		/*    its TSval */
	bool sack;		/* a SACK block above the ACK */
	u32 sack_high;		/* highest right edge of those blocks */
	u32 nblocks;		/* SACK blocks, as sent: */
	struct rn_range blocks[SAT_SACK_MAX];
};

/* Why the origin hook leaves a data packet alone. */
enum rn_origin_action {
	RN_ORIGIN_STAMP,
	RN_ORIGIN_SKIP_OPTS,	/* already carries IP options */
	RN_ORIGIN_SKIP_MTU,	/* 12 more bytes would exceed the MTU */
};

static inline bool rn_range_empty(const struct rn_range *r)
{
	return !sat_before(r->start, r->end);
}

/* Range sets. */
void rn_rset_init(struct rn_rset *s, enum rn_overflow overflow);
bool rn_rset_has(const struct rn_rset *s, u32 seq);
void rn_rset_add(struct rn_rset *s, const struct rn_range *r);
void rn_rset_sub(struct rn_rset *s, const struct rn_range *r);
void rn_rset_add_except(struct rn_rset *s, const struct rn_range *r,
			const struct rn_rset *except);
void rn_rset_prune(struct rn_rset *s, u32 seq);

/* The receiver (§IV, §IV-A). */
void rn_recv_init(struct rn_recv *st, u32 rcv_nxt, u32 wnd, u8 wscale);
void rn_recv_set_high(struct rn_recv *st, u32 high);
enum rn_data_result rn_recv_data(struct rn_recv *st,
				 const struct rn_range *seg,
				 const struct rn_evidence *ev);
void rn_recv_fin(struct rn_recv *st, u32 fin_end);
bool rn_recv_paws(struct rn_recv *st, const struct rn_range *seg, u32 tsval);
void rn_recv_discarded(struct rn_recv *st, const struct rn_range *seg);
void rn_recv_tstamps(struct rn_recv *st);
enum rn_mark rn_recv_ack(struct rn_recv *st, u32 ack, u32 wnd);
void rn_recv_sacked(struct rn_recv *st, const struct rn_range *blocks,
		    u32 n);
bool rn_recv_rst_ok(const struct rn_recv *st, u32 seq);
bool rn_recv_done(const struct rn_recv *st);
u32 rn_recv_overflows(const struct rn_recv *st);

/*
 * TCP options and the EPDN option; the headers: include/satnet/hdr.h, the
 * option's codec: include/satnet/epdn_opt.h.
 */
void rn_parse_tcpopts(const u8 *opts, u32 len, u32 ack,
		      struct rn_tcpopts *o);
enum rn_ev_status rn_epdn_evidence(const u8 *hdr, const struct sat_ip *ip,
				   bool require_host,
				   struct rn_evidence *ev);
void rn_epdn_encode_empty(u8 *buf, u8 ttl);
enum rn_origin_action rn_origin_decide(u32 hdr_len, u32 seg_len, u32 mtu);

#endif /* SATNET_RN_RECV_CORE_H */
