/* SPDX-License-Identifier: GPL-2.0 */
/*
 * IPv4 and TCP header parsing for the plain-C cores: big-endian reads, the
 * step of an IPv4 or TCP option list, the IPv4 option walk that finds the
 * EPDN option, the checks of an IPv4 and a TCP header, and the blocks of a
 * TCP SACK option.  Shared by
 * sch_epdn, tcp_rn and their unit tests and fuzz targets.  Every length
 * read from a packet is checked against the bytes the caller copied
 * before anything behind it is read.
 */
#ifndef SATNET_HDR_H
#define SATNET_HDR_H

#include <satnet/types.h>
#ifdef __KERNEL__
#include <linux/string.h>
#else
#include <string.h>
#endif

#include <satnet/epdn_wire.h>

/* Return codes of the walker and the parsers. */
#define SAT_OK			0
#define SAT_ENOENT		(-1)	/* no EPDN option */
#define SAT_EBADMSG		(-2)	/* malformed or truncated */

#define SAT_TCP_HDR_MIN		20
#define SAT_TCP_HDR_MAX		60

/* Option kinds of both IPv4 and TCP. */
#define SAT_OPT_EOL		0
#define SAT_OPT_NOP		1
/* TCP's SACK option (RFC 2018): at most 4 blocks in 40 option bytes. */
#define SAT_OPT_SACK		5
#define SAT_SACK_MAX		4
/* TCP's timestamp option (RFC 7323): kind, length 10, TSval, TSecr. */
#define SAT_OPT_TIMESTAMP	8

/* TCP flags (byte 13 of the header). */
#define SAT_TCP_FIN		0x01
#define SAT_TCP_SYN		0x02
#define SAT_TCP_RST		0x04
#define SAT_TCP_ACK		0x10
#define SAT_TCP_ECE		0x40

static inline u16 sat_get_be16(const u8 *p)
{
	return (u16)(p[0] << 8 | p[1]);
}

static inline u32 sat_get_be32(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

static inline void sat_put_be32(u8 *p, u32 v)
{
	p[0] = (u8)(v >> 24);
	p[1] = (u8)(v >> 16);
	p[2] = (u8)(v >> 8);
	p[3] = (u8)v;
}

/*
 * IPv4 (RFC 791) and TCP (RFC 9293) options share one layout: EOL (0)
 * ends the list, NOP (1) is one byte, any other option is kind, length
 * (at least 2, the two included) and data.  The length of the option at
 * @i < @len of a list of @len bytes: 1 for NOP, 0 at EOL, or -1 when its
 * length byte is missing or out of bounds.  A length returned lies within
 * the list.
 */
static inline int sat_opt_len(const u8 *opts, u32 len, u32 i)
{
	if (opts[i] == SAT_OPT_EOL)
		return 0;
	if (opts[i] == SAT_OPT_NOP)
		return 1;
	if (i + 1 >= len || opts[i + 1] < 2 || opts[i + 1] > len - i)
		return -1;
	return opts[i + 1];
}

/*
 * Walk an IPv4 option list of @len bytes: the offset of the EPDN option,
 * SAT_ENOENT, or SAT_EBADMSG when a length is inconsistent or the EPDN
 * option is not EPDN_OPT_LEN long.  An option found lies wholly inside
 * the list.
 */
static inline int sat_ipopt_find(const u8 *opts, u32 len)
{
	u32 i;
	int olen;

	for (i = 0; i < len; i += olen) {
		olen = sat_opt_len(opts, len, i);
		if (olen <= 0)
			return olen ? SAT_EBADMSG : SAT_ENOENT;
		if (opts[i] == EPDN_OPT_TYPE)
			return olen == EPDN_OPT_LEN ? (int)i : SAT_EBADMSG;
	}
	return SAT_ENOENT;
}

/* An IPv4 header, checked. */
struct sat_ip {
	u32 saddr;		/* network byte order */
	u32 daddr;		/* network byte order */
	u32 tot_len;		/* bytes from the IP header on */
	u16 hdr_len;		/* ihl * 4 */
	u8 ttl;
	u8 proto;
	bool frag;		/* MF set or a fragment offset */
};

/*
 * Check an IPv4 header copied into @hdr (@caplen bytes, up to 60) of a
 * packet with @avail bytes from the IP header on.  The whole header lies
 * in @caplen, and tot_len in [hdr_len, avail].  A GSO packet's length is
 * @avail (its tot_len may be 0 for BIG TCP).  Options are not looked at.
 */
static inline int sat_parse_ipv4(const u8 *hdr, u32 caplen, u32 avail,
				 bool gso, struct sat_ip *ip)
{
	if (caplen < EPDN_IPV4_HDR_MIN || hdr[0] >> 4 != 4)
		return SAT_EBADMSG;
	ip->hdr_len = (hdr[0] & 0x0f) * 4;
	if (ip->hdr_len < EPDN_IPV4_HDR_MIN || ip->hdr_len > caplen ||
	    ip->hdr_len > avail)
		return SAT_EBADMSG;
	ip->tot_len = gso ? avail : sat_get_be16(hdr + 2);
	if (ip->tot_len < ip->hdr_len || ip->tot_len > avail)
		return SAT_EBADMSG;
	ip->frag = (sat_get_be16(hdr + 6) & 0x3fff) != 0;
	ip->ttl = hdr[8];
	ip->proto = hdr[9];
	memcpy(&ip->saddr, hdr + 12, 4);
	memcpy(&ip->daddr, hdr + 16, 4);
	return SAT_OK;
}

/* A TCP header, checked. */
struct sat_tcp {
	u16 sport;		/* network byte order */
	u16 dport;		/* network byte order */
	u32 seq;
	u32 ack;
	u32 end_seq;		/* seq + payload + SYN + FIN */
	u32 payload;		/* bytes of data */
	u16 hdr_len;		/* doff * 4 */
	u16 win;		/* raw window field */
	u8 flags;		/* byte 13 */
};

/*
 * Check a TCP header copied into @th (@caplen bytes) of a segment of
 * @l4_len bytes: the whole header, options included, lies in both.
 */
static inline int sat_parse_tcp(const u8 *th, u32 caplen, u32 l4_len,
				struct sat_tcp *t)
{
	if (caplen < SAT_TCP_HDR_MIN || l4_len < SAT_TCP_HDR_MIN)
		return SAT_EBADMSG;
	t->hdr_len = (th[12] >> 4) * 4;
	if (t->hdr_len < SAT_TCP_HDR_MIN || t->hdr_len > l4_len ||
	    t->hdr_len > caplen)
		return SAT_EBADMSG;
	memcpy(&t->sport, th, 2);
	memcpy(&t->dport, th + 2, 2);
	t->seq = sat_get_be32(th + 4);
	t->ack = sat_get_be32(th + 8);
	t->flags = th[13];
	t->win = sat_get_be16(th + 14);
	t->payload = l4_len - t->hdr_len;
	t->end_seq = t->seq + t->payload + !!(t->flags & SAT_TCP_SYN) +
		     !!(t->flags & SAT_TCP_FIN);
	return SAT_OK;
}

/* A SACK block, [start, end) as sent: not checked for order. */
struct sat_sack {
	u32 start;
	u32 end;
};

/*
 * The blocks of the SACK option at @opt, its length @olen as
 * sat_opt_len() returned it (kind and length bytes included), into @blk
 * (room for SAT_SACK_MAX): how many, or SAT_EBADMSG unless @olen is
 * 2 + 8n with 1 <= n <= SAT_SACK_MAX, as tcp_parse_options() ignores
 * such an option.
 */
static inline int sat_sack_blocks(const u8 *opt, u32 olen,
				  struct sat_sack *blk)
{
	u32 i, n;

	if (olen < 2 + 8 || (olen - 2) % 8 || (olen - 2) / 8 > SAT_SACK_MAX)
		return SAT_EBADMSG;
	n = (olen - 2) / 8;
	for (i = 0; i < n; i++) {
		blk[i].start = sat_get_be32(opt + 2 + 8 * i);
		blk[i].end = sat_get_be32(opt + 6 + 8 * i);
	}
	return (int)n;
}

#endif /* SATNET_HDR_H */
