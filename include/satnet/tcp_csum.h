/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The TCP checksum of an incoming segment, checked by a netfilter hook at
 * LOCAL_IN, before tcp_v4_rcv() or tcp_v6_rcv() check it (kernel only).
 * rn_host and tcp_rn read fields that TCP would discard with a bad sum.
 */
#ifndef SATNET_TCP_CSUM_H
#define SATNET_TCP_CSUM_H

#include <linux/skbuff.h>
#include <net/checksum.h>

/*
 * Is the TCP checksum of the @len bytes at @thoff (from skb->data, the
 * network header at LOCAL_IN, the skb trimmed to them) right, given the
 * unfolded pseudo-header sum @pseudo?  A device's verdict is taken as is,
 * and a complete sum is used with the bytes before @thoff taken out (they
 * may have changed since: ip_options_compile() advances Record Route and
 * Timestamp pointers), else the segment is summed in software.  A segment
 * verified here is marked, so that TCP does not sum it again.
 */
static inline bool satnet_tcp_csum_ok(struct sk_buff *skb, u32 thoff,
				      u32 len, __wsum pseudo)
{
	__wsum sum;

	if (skb_csum_unnecessary(skb))
		return true;
	if (skb->ip_summed == CHECKSUM_COMPLETE) {
		sum = csum_sub(skb->csum, skb_checksum(skb, 0, thoff, 0));
		if (!csum_fold(csum_add(sum, pseudo)))
			goto verified;
	}
	if (csum_fold(skb_checksum(skb, thoff, len, pseudo)))
		return false;
verified:
	skb->ip_summed = CHECKSUM_UNNECESSARY;
	return true;
}

#endif /* SATNET_TCP_CSUM_H */
