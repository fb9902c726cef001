/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RN-TCP's drop-negative bit (seed 001 §IV-A, §V): one reserved bit of the
 * TCP header, set by an RN-TCP receiver on ACKs whose first hole it
 * believes reordered (1) rather than dropped (0).
 *
 * Byte 12 of the TCP header is  DDDD RRRA : data offset, three reserved
 * bits, and AE (formerly NS, RFC 3540; AccECN).  We take the lowest
 * reserved bit that is not AE.  Linux ignores reserved bits on receipt,
 * so a peer that does not know RN-TCP is unaffected.
 */
#ifndef SATNET_RN_WIRE_H
#define SATNET_RN_WIRE_H

#define RN_DN_BYTE		12	/* offset in the TCP header */
#define RN_DN_MASK		0x02	/* in that byte */
/* The same bit in tcp_flag_word() (host order of the 32-bit word). */
#define RN_DN_FLAG_WORD		0x02000000

#endif /* SATNET_RN_WIRE_H */
