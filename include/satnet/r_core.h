/* SPDX-License-Identifier: GPL-2.0 */
/*
 * TCP-R sender core: the rules of seed 000 §2.2 and §2.2.1, as plain C
 * with no kernel dependency.  tcp_r.ko links tcp_r/r_core.c and the
 * userspace unit test includes the same file.  The caller owns memory and
 * locking.
 *
 * Paper: A. Sathiaseelan, "TCP-R with EPDN: Handling Out of Order Packets
 * in Error Prone Satellite Networks" (seed 000) §2.2, §2.2.1.
 *
 * The receiver is RN-TCP's (tcp_rn/rn_host.ko) behind EPDNv3 gateways,
 * which record congestion drops only.  A corrupted segment is therefore
 * "not dropped" and its dupACKs carry the drop-negative bit.  When a loss
 * recovery begins, the sender picks one of these paths:
 *
 *   MODIFIED  every dupACK for the hole had the bit and ECN was silent:
 *             retransmit, keep ssthresh and cwnd (modified fast recovery);
 *   DROP      a dupACK without the bit, or no bit seen: halve (Reno/SACK);
 *   ECE       an ECE within ece_rtts smoothed RTTs: halve;
 *   REPEAT    the same segment took the modified path less than one RTT
 *             ago: halve ("retransmitted only once in a RTT").
 *
 * During a modified recovery the window is kept and goes on growing as
 * Reno's does outside one, in congestion avoidance: slow start ends at the
 * first recovery, modified or not, with ssthresh the window when it began.
 *
 * A modified recovery turns standard (halves) as soon as an ECE or a
 * dupACK without the bit arrives before it ends, the hole has to be
 * retransmitted a second time, or the retransmission timer fires.  A
 * standard recovery reduces cwnd by PRR (RFC 6937, r_prr_sndcnt()) toward
 * ssthresh.
 *
 * One halving per window of data (RFC 6582, RFC 6675): after a halving, no
 * further reduction until snd_una passes the snd_nxt recorded at that
 * halving (r_cut(), r_may_cut()), whatever the signal.
 *
 * Units: sequence numbers are TCP byte sequence numbers (comparisons
 * wrap); windows count segments; times are milliseconds (u32, wrapping).
 */
#ifndef SATNET_R_CORE_H
#define SATNET_R_CORE_H

#include <satnet/types.h>

#define R_DUPTHRESH		3	/* retransmit after three dupACKs */
#define R_ECE_RTTS		1	/* default of the ece_rtts parameter */
#define R_ECE_RTTS_MAX		64

enum r_path {
	R_PATH_MODIFIED,
	R_PATH_DROP,
	R_PATH_ECE,
	R_PATH_REPEAT,
	R_PATH_MAX
};

struct r_params {
	u32 ece_rtts;		/* ECE is "recent" for this many srtt */
};

/* One ACK, as the caller saw it before loss detection. */
struct r_ack {
	u32 snd_una;
	u32 srtt_ms;		/* 0: no sample yet */
	u32 now_ms;
	u16 dn_set;		/* dn_known: dupACKs for snd_una with the bit */
	u16 dn_clear;		/* dn_known: dupACKs for snd_una without it */
	u8 dn_known;		/* the counts belong to snd_una */
	u8 dn_distrust;		/* the peer set the bit where it cannot */
	u8 ece;			/* this ACK carried ECE */
	u8 resent;		/* the hole went out twice in this recovery */
};

#define R_F_ECE			0x01	/* last_ece_ms is valid */
#define R_F_MOD			0x02	/* a modified recovery is running */
#define R_F_LAST		0x04	/* last_seq/last_ms are valid */
#define R_F_CUT			0x08	/* cut_seq is valid */

/* Per connection: 48 bytes. */
struct r_sender {
	u32 last_ece_ms;
	u32 last_seq;		/* hole of the last modified recovery */
	u32 last_ms;
	u32 cut_seq;		/* snd_nxt at the last halving */
	u32 paths[R_PATH_MAX];	/* recoveries begun on each path */
	u32 turned;		/* modified recoveries that turned standard */
	u32 timeouts;		/* ... of them by a timeout */
	u32 suppressed;		/* halvings not made: once per window */
	u8 verdict;		/* enum r_path if a recovery began now */
	u8 flags;		/* R_F_* */
};

/* What r_on_ack() asks of the caller. */
enum r_action {
	R_ACT_NONE,
	R_ACT_HALVE,		/* modified recovery turned standard: halve */
};

void r_sender_init(struct r_sender *s);
bool r_ece_recent(const struct r_sender *s, const struct r_params *p,
		  const struct r_ack *a);
enum r_path r_classify(const struct r_sender *s, const struct r_params *p,
		       const struct r_ack *a);
enum r_action r_on_ack(struct r_sender *s, const struct r_params *p,
		       const struct r_ack *a);
bool r_recovery_begins(struct r_sender *s, const struct r_ack *a);
u32 r_recovery_ends(struct r_sender *s, bool timeout, u32 wnd);
u32 r_halve(u32 cwnd);
bool r_may_cut(struct r_sender *s, u32 snd_una);
void r_cut(struct r_sender *s, u32 snd_nxt);
u32 r_prr_sndcnt(u32 ssthresh, u32 recover_fs, u32 prr_delivered,
		 u32 prr_out, u32 pipe, u32 delivered, bool bonus);
u64 r_pacing_rate(u32 mss, u32 cwnd, u32 packets_out, u32 ssthresh,
		  u32 srtt_us, u32 ss_ratio, u32 ca_ratio, u64 max_rate);

#endif /* SATNET_R_CORE_H */
