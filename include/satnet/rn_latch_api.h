/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What tcp_rn.ko offers other congestion modules (kernel only).
 *
 * tcp_rn.ko reads the drop-negative bit of every incoming ACK in a
 * netfilter hook and counts it into a latch (struct rn_latch) kept in the
 * socket's congestion private area.  A module that registers its
 * tcp_congestion_ops here gets the same service for its sockets, provided
 * its private area begins with a struct rn_latch.  TCP-R (tcp_r.ko) uses
 * this, so that both senders read the one RN-TCP receiver's bit the same
 * way.  The symbol dependency keeps tcp_rn.ko loaded while a client is.
 *
 * The RACK helpers let a client impose a classic duplicate-ACK threshold
 * while RACK (net.ipv4.tcp_recovery & 1) does loss detection.  The growth
 * helpers give rn and r the same window growth: Reno's, or Hybla's
 * RTT-compensated one (include/satnet/grow.h) behind a module parameter
 * "rtt0_ms" of each.
 */
#ifndef SATNET_RN_LATCH_API_H
#define SATNET_RN_LATCH_API_H

#include <net/tcp.h>
#include <satnet/rn_sender_core.h>

int rn_latch_register(struct tcp_congestion_ops *ops);
void rn_latch_unregister(struct tcp_congestion_ops *ops);

/* From init(): the hook may fill the latch from now on. */
void rn_latch_open(struct sock *sk);
/* From release(): no more hook writes before the area is reused. */
void rn_latch_close(struct sock *sk);
/* A copy of the latch; with take_dsack, the D-SACK block is consumed. */
void rn_latch_read(struct sock *sk, bool take_dsack, struct rn_latch *out);

bool rn_is_rack(const struct sock *sk);
/* Keep RACK from marking anything lost on this ACK. */
bool rn_rack_hold(struct sock *sk);
/*
 * Let RACK mark the head lost on this ACK: returns RACK's reordering
 * window steps, which the caller gives back on the next ACK or state
 * change with rn_rack_restore().
 */
u8 rn_rack_fire(struct sock *sk);
void rn_rack_restore(struct sock *sk, u8 steps);

/* An rtt0_ms parameter: 0 (Reno's growth) to SAT_RTT0_MS_MAX. */
extern const struct kernel_param_ops rn_rtt0_ops;
/* cong_avoid(): Reno's (@rho8 0), or Hybla's growth up to @bound. */
void rn_grow_cwnd(struct sock *sk, u32 ack, u32 acked, u32 rho8, u32 bound);

#endif /* SATNET_RN_LATCH_API_H */
