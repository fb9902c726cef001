/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RN-TCP sender core: the rules of seed 001 §IV-B and the enhanced RTT
 * sampling of seed 000 §4.7 (RN-TCP-ES), as plain C with no kernel
 * dependency.  tcp_rn.ko links tcp_rn/rn_sender_core.c, and the userspace
 * unit test includes the same file.  The caller owns all memory and
 * locking; the core never allocates, never sleeps and keeps no pointers.
 *
 * Paper: A. Sathiaseelan, T. Radzik, "Reorder Notifying TCP (RN-TCP) with
 * Explicit Packet Drop Notification (EPDN)" (seed 001) §IV-B 1)-4);
 * A. Sathiaseelan, "TCP-R with EPDN" (seed 000) §4.7.
 *
 * Units.  Sequence numbers are TCP byte sequence numbers and every
 * comparison wraps.  Windows and thresholds count segments, as
 * tp->reordering does.  kval is fixed point in per-mille (1000 = 1.0).
 * Times are the caller's clocks: microseconds (u32, wrapping) for RTT
 * sampling, milliseconds (u32, wrapping) for the ECE memory.
 */
#ifndef SATNET_RN_SENDER_CORE_H
#define SATNET_RN_SENDER_CORE_H

#include <satnet/types.h>
#include <satnet/hdr.h>
#include <satnet/seq.h>

#include <satnet/rn_wire.h>

#define RN_KVAL_ONE		1000	/* kval fixed point: per-mille */

/* Paper defaults (seed 001 §IV-B). */
#define RN_C_PERMILLE		100	/* c = 0.1 */
#define RN_DUPTHRESH_MIN	4	/* dupthresh = max(4, ...) */
#define RN_DUPTHRESH_DROP	3	/* fast retransmit at 3 dupACKs */

/*
 * Bounds the paper leaves open.  kval doubles on every false fast
 * retransmit; past 64.0 it stops, because dupthresh is clamped to
 * dupthresh_max (tcp_max_reordering, 300 by default) long before.
 */
#define RN_KVAL_MAX		(64 * RN_KVAL_ONE)
/*
 * An RN-TCP receiver sets the bit only when its ACK number lies in its
 * reorder list: bytes it believes sent and still on their way.  An ACK for
 * everything the sender sent cannot have that; after this many such ACKs
 * with the bit, the peer is not believed for the rest of the connection.
 */
#define RN_BOGUS_MAX		3

/* Does [s1, e1) share a byte with [s2, e2)? */
static inline bool rn_overlap(u32 s1, u32 e1, u32 s2, u32 e2)
{
	return sat_before(s1, e2) && sat_before(s2, e1) &&
	       sat_before(s1, e1) && sat_before(s2, e2);
}

/* ---- one incoming ACK, as the netfilter hook sees it ---- */

#define RN_W_DN			0x01	/* drop-negative bit set */
#define RN_W_HOLE		0x02	/* a SACK block above the ACK */
#define RN_W_DSACK		0x04	/* first SACK block is a D-SACK */
#define RN_W_ECE		0x08
#define RN_W_BADOPT		0x10	/* option list malformed: SACK ignored */
#define RN_W_ALLACKED		0x20	/* caller: ACK == snd_nxt, none in flight */

struct rn_wire {
	u32 seq;
	u32 ack;
	u32 dsack_start;	/* RN_W_DSACK: the duplicate range */
	u32 dsack_end;
	u8 flags;		/* RN_W_* */
	u8 tcp_flags;		/* byte 13 */
	u8 hdr_len;		/* doff * 4 */
};

enum rn_parse_result {
	RN_PARSE_OK,
	RN_PARSE_NOT_ACK,	/* no ACK flag, or SYN/RST: not for us */
	RN_PARSE_BAD,		/* header inconsistent: ignore the segment */
};

enum rn_parse_result rn_parse_ack(const u8 *th, u32 len, struct rn_wire *w);

/*
 * The latch: what the hook saw on recent ACKs of one connection, read by
 * the congestion module when the stack processes those ACKs.  The counts
 * belong to the train of ACKs whose ACK number is seq ("hole ACKs", with
 * a SACK block above the ACK).  24 bytes.
 */
#define RN_L_VALID		0x01	/* seq and the counts are meaningful */
#define RN_L_DSACK		0x02	/* dsack_start/end hold a fresh block */
#define RN_L_READY		0x04	/* owner initialised: hook may write */

struct rn_latch {
	u32 seq;		/* ACK number of the counted train */
	u16 dn_set;		/* hole ACKs for seq with the bit set */
	u16 dn_clear;		/* hole ACKs for seq with the bit clear */
	u32 dsack_start;	/* last D-SACK block seen */
	u32 dsack_end;
	u32 dn_acks;		/* all ACKs with the bit set (for ss) */
	u8 bogus;		/* bit set on RN_W_ALLACKED ACKs (capped) */
	u8 flags;		/* RN_L_* */
};

void rn_latch_update(struct rn_latch *l, const struct rn_wire *w);

/* ---- the sender rules ---- */

/* Tunables, read per ACK from the module parameters and sysctls. */
struct rn_params {
	u32 c_permille;		/* c of the kval rule, per-mille */
	u32 dupthresh_min;	/* 4 */
	u32 dupthresh_drop;	/* 3 */
	u32 dupthresh_max;	/* tcp_max_reordering */
	u32 ece_rtts;		/* "recent ECE": within this many srtt */
	u8 lt_ext;		/* extended limited transmit (§IV-B1) */
};

/* Connection state around one ACK, gathered by the caller. */
#define RN_STATE_OPEN		0	/* Open or Disorder: rule applies */
#define RN_STATE_RECOVERY	1	/* Recovery or Loss: SACK recovery */
#define RN_STATE_CWR		2	/* CWR: rule applies, no LT cap */

struct rn_ack {
	u32 snd_una;		/* ACK number, after this ACK */
	u32 sacked_out;		/* segments SACKed above snd_una */
	u32 packets_out;	/* segments in flight incl. SACKed */
	u32 cwnd;		/* segments */
	u32 rwnd;		/* peer's window, segments (0: unknown) */
	u32 srtt_us;
	u32 min_rtt_us;
	u32 now_ms;
	u32 dsack_start;	/* dsack_known: the D-SACK block */
	u32 dsack_end;
	u16 dn_set;		/* dn_known: hole ACKs for snd_una */
	u16 dn_clear;
	u8 state;		/* RN_STATE_* */
	u8 ece;			/* this ACK carried ECE */
	u8 dsack;		/* the stack took a D-SACK from this ACK */
	u8 dsack_known;
	u8 dn_known;		/* the latch counts belong to snd_una */
	u8 dn_distrust;		/* the peer is not believed */
	u8 no_undo;		/* nothing can prove a retransmission
				 * unneeded: no timestamps, no D-SACK yet
				 */
};

/* Classification of the train of dupACKs for the hole at snd_una. */
enum rn_class {
	RN_CLS_NONE,		/* no hole */
	RN_CLS_REORDER,		/* bit set, no recent ECE: dupthresh rule */
	RN_CLS_DROP,		/* bit clear (or unknown): 3 dupACKs */
};

/* What the caller applies after rn_on_ack(). */
struct rn_verdict {
	u32 dupthresh;		/* rule in force: tp->reordering */
	u32 cwnd;		/* nonzero: set cwnd (limited transmit) */
	u8 cls;			/* enum rn_class of the current train */
	u8 recover;		/* sacked_out reached dupthresh */
	u8 new_train;		/* enum rn_class: a train was classified */
	u8 false_fr;		/* this D-SACK revealed a false fast rexmit */
	u8 fallback_end;	/* this D-SACK ended the RTO fallback */
	u8 lt_capped;		/* limited transmit is holding cwnd back */
};

/* RN-TCP-ES pairing of one retransmitted segment (seed 000 §4.7). */
enum rn_es_state {
	RN_ES_IDLE,
	RN_ES_SENT,		/* t1 = first transmission */
	RN_ES_RETX,		/* tx2 = retransmission known */
	RN_ES_ACKED,		/* t1 = RTT of the first ACK */
};

struct rn_es {
	u32 start;		/* the segment, [start, end) */
	u32 end;
	u32 t1;			/* SENT/RETX: first send (us); ACKED: rtt1 */
	u32 tx2;		/* retransmission (us) */
	u8 state;		/* enum rn_es_state */
};

#define RN_F_TRAIN		0x01	/* a train is being classified */
#define RN_F_FALLBACK		0x02	/* after RTO, until the first D-SACK */
#define RN_F_ECE		0x04	/* last_ece_ms is valid */
#define RN_F_FR		0x08	/* fr_start/fr_end: last fast rexmit */
#define RN_F_LT			0x10	/* limited transmit cap active */

/* The per-connection sender state: 64 bytes. */
struct rn_sender {
	u32 kval;		/* per-mille */
	u32 dupthresh;		/* of the last reordered train, segments */
	u32 applied;		/* rule last given to the stack, segments */
	u32 train_seq;		/* snd_una of the current train */
	u32 last_ece_ms;
	u32 fr_start;		/* hole of the last fast retransmit */
	u32 fr_end;
	u32 lt_cwnd;		/* cwnd the cap holds back, segments */
	u32 lt_limit;		/* packets_out allowed during the train */
	u32 false_frs;		/* false fast retransmits (D-SACK) */
	u32 fast_rexmits;	/* fast retransmits (Recovery entries) */
	u8 cls;			/* enum rn_class of the current train */
	u8 flags;		/* RN_F_* */
	struct rn_es es;
};

void rn_ack_from_latch(struct rn_ack *a, const struct rn_latch *l);
void rn_sender_init(struct rn_sender *s, const struct rn_params *p);
u32 rn_kval_update(u32 kval, u32 srtt_us, u32 min_rtt_us, u32 c_permille);
u32 rn_dupthresh(u32 swnd, u32 kval, const struct rn_params *p);
enum rn_class rn_classify(const struct rn_sender *s, const struct rn_params *p,
			  const struct rn_ack *a);
void rn_on_ack(struct rn_sender *s, const struct rn_params *p,
	       const struct rn_ack *a, struct rn_verdict *v);
void rn_on_fast_retransmit(struct rn_sender *s, const struct rn_params *p,
			   u32 hole_start, u32 hole_end);
void rn_on_rto(struct rn_sender *s, const struct rn_params *p);

/* The stack entered a loss state: Recovery from Open/Disorder/CWR, or Loss. */
enum rn_enter {
	RN_ENTER_RECOVERY,	/* a fast retransmit */
	RN_ENTER_LOSS,		/* a retransmission timeout, from any state */
};

void rn_on_enter(struct rn_sender *s, const struct rn_params *p,
		 enum rn_enter e, u32 hole_start, u32 hole_end);
bool rn_on_undo(struct rn_sender *s);
u32 rn_lt_stop(struct rn_sender *s);
u32 rn_lt_cap(const struct rn_sender *s, u32 sacked_out);

/* RN-TCP-ES */
void rn_es_start(struct rn_es *e, u32 start, u32 end, u32 tx1_us);
void rn_es_retransmitted(struct rn_es *e, u32 tx2_us);
void rn_es_acked(struct rn_es *e, u32 snd_una, u32 now_us);
bool rn_es_dsack(struct rn_es *e, u32 dstart, u32 dend, u32 now_us,
		 u32 *sample_us);
void rn_es_expire(struct rn_es *e, u32 now_us, u32 limit_us);

/*
 * The RTO estimator's state in the scaling of struct tcp_sock:
 * srtt << 3, mdev << 2, mdev_max << 2, rttvar << 2, all in microseconds.
 */
struct rn_rtt {
	u32 srtt8;
	u32 mdev4;
	u32 mdev_max4;
	u32 rttvar4;
};

void rn_rtt_sample(struct rn_rtt *r, u32 m_us, u32 rto_min_us);

/*
 * Is a segment the ACK covers entirely still first in the retransmission
 * queue?  Then the stack has not cleaned the queue for this ACK yet.
 */
bool rn_acked_still_queued(bool has_head, u32 head_end_seq, u32 snd_una);

#endif /* SATNET_RN_SENDER_CORE_H */
