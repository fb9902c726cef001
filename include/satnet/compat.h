/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel APIs that differ between the kernels the modules build for
 * (Debian's 6.1 and 6.12, dkms.conf), in one place (kernel only).
 *
 * Each entry gives an older kernel the newer kernel's interface, so the
 * modules call the current API and an entry is dropped when its oldest
 * kernel is; the last two say what the kernel built for does.  Found by
 * building every module with W=1 against both header trees (make
 * modules-6.12, README.md); everything else the modules use is the same
 * on both.  No module file tests a kernel version itself.
 */
#ifndef SATNET_COMPAT_H
#define SATNET_COMPAT_H

#include <linux/version.h>
#include <net/net_namespace.h>
#include <net/tcp.h>

/* The kernel built against is a.b.c or newer. */
#define SAT_KERNEL_AT_LEAST(a, b, c) \
	(KERNEL_VERSION(a, b, c) <= LINUX_VERSION_CODE)

/*
 * v6.6 ("sysctl: Add size to register_net_sysctl function") sizes the
 * table instead of reading to its empty sentinel; from v6.11 an entry
 * without a procname inside that size is refused.  The size passed
 * leaves the sentinel out, which 6.1 still needs at the end.
 */
#if !SAT_KERNEL_AT_LEAST(6, 6, 0)
#define register_net_sysctl_sz(net, path, table, size) \
	register_net_sysctl(net, path, table)
#endif

/*
 * v6.7 ("tcp: add tcp_time_stamp_ms() helper") names the millisecond
 * clock of tp->tcp_mstamp tcp_time_stamp_ms(); tcp_time_stamp() became
 * tcp_time_stamp_ts(), in TCP timestamp units, microseconds for sockets
 * that negotiate them.
 */
#if !SAT_KERNEL_AT_LEAST(6, 7, 0)
static inline u32 tcp_time_stamp_ms(const struct tcp_sock *tp)
{
	return tcp_time_stamp(tp);
}
#endif

/*
 * v6.10 (commit 57bfc7605ca5, "tcp: Add new args for cong_control in
 * tcp_congestion_ops") also passes cong_control() the ACK's number and
 * its FLAG_* bits.  A hook defined as fn(SAT_CONG_CONTROL_ARGS) takes
 * the arguments of the kernel built for, and uses only the two that both
 * pass: the socket @sk and the rate sample @rs.
 */
#if SAT_KERNEL_AT_LEAST(6, 10, 0)
#define SAT_CONG_CONTROL_ARGS \
	struct sock *sk, u32 sat_ack, int sat_flag, const struct rate_sample *rs
#else
#define SAT_CONG_CONTROL_ARGS struct sock *sk, const struct rate_sample *rs
#endif

/*
 * v6.14 (commit 149dfb31615e, "tcp: reorganize tcp_in_ack_event() and
 * tcp_count_delivered()") calls in_ack_event() after
 * tcp_clean_rtx_queue(), and so do the stable series from its backports
 * to 6.1.141 and 6.12.31 on; before, the queue cleaning follows the
 * event.  True on the kernels with the new order.
 */
#if SAT_KERNEL_AT_LEAST(6, 14, 0) || \
	(SAT_KERNEL_AT_LEAST(6, 12, 31) && \
	 !SAT_KERNEL_AT_LEAST(6, 13, 0)) || \
	(SAT_KERNEL_AT_LEAST(6, 1, 141) && \
	 !SAT_KERNEL_AT_LEAST(6, 2, 0))
#define SAT_IN_ACK_EVENT_AFTER_CLEAN	true
#else
#define SAT_IN_ACK_EVENT_AFTER_CLEAN	false
#endif

#endif /* SATNET_COMPAT_H */
