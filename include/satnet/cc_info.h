/* SPDX-License-Identifier: GPL-2.0 */
/*
 * get_info for our congestion controls (kernel only).  They report four
 * counters through the DCTCP slot of struct tcp_cc_info, the only slot
 * iproute2's ss prints field by field:
 * "dctcp:(ce_state:A,alpha:B,ab_ecn:C,ab_tot:D)".  Each module's docs say
 * what A-D mean for it.  The slot is also filled when ss asks for Vegas
 * info, as tcp_dctcp.c does.
 */
#ifndef SATNET_CC_INFO_H
#define SATNET_CC_INFO_H

#include <linux/inet_diag.h>
#include <net/tcp.h>

static inline size_t satnet_cc_info(u32 ext, int *attr,
				    union tcp_cc_info *info, u32 a, u32 b,
				    u32 c, u32 d)
{
	if (!(ext & (1 << (INET_DIAG_DCTCPINFO - 1))) &&
	    !(ext & (1 << (INET_DIAG_VEGASINFO - 1))))
		return 0;
	memset(&info->dctcp, 0, sizeof(info->dctcp));
	info->dctcp.dctcp_enabled = 1;
	info->dctcp.dctcp_ce_state = min_t(u32, a, U16_MAX);
	info->dctcp.dctcp_alpha = b;
	info->dctcp.dctcp_ab_ecn = c;
	info->dctcp.dctcp_ab_tot = d;
	*attr = INET_DIAG_DCTCPINFO;
	return sizeof(info->dctcp);
}

#endif /* SATNET_CC_INFO_H */
