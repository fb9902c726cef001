// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the header code the cores share (include/satnet/hdr.h,
 * include/satnet/seq.h): big-endian reads, sequence order, the option
 * list step, the IPv4 option walk, the IPv4 and TCP header checks and the
 * SACK option's blocks, with the cases that the epdn and rn tests had for
 * their own copies of them.
 */
#include <arpa/inet.h>

#include "tests/unit/unit.h"
#include <satnet/hdr.h>
#include <satnet/seq.h>

static void test_be(void)
{
	static const u8 b[] = { 0x80, 0x01, 0xfe, 0xff, 0x7f };
	u8 out[4];

	CHECK_EQ(sat_get_be16(b), 0x8001);
	CHECK_EQ(sat_get_be16(b + 2), 0xfeff);
	CHECK_EQ(sat_get_be32(b), 0x8001feffu);
	CHECK_EQ(sat_get_be32(b + 1), 0x01feff7fu);
	sat_put_be32(out, 0xdeadbeefu);
	CHECK(out[0] == 0xde && out[1] == 0xad && out[2] == 0xbe &&
	      out[3] == 0xef);
	CHECK_EQ(sat_get_be32(out), 0xdeadbeefu);
}

static void test_seq(void)
{
	CHECK(sat_before(1, 2));
	CHECK(!sat_before(2, 1));
	CHECK(!sat_before(5, 5) && !sat_after(5, 5));
	CHECK(sat_before(0xfffffff0u, 0x10));		/* wraps */
	CHECK(sat_after(0x10, 0xfffffff0u));
	CHECK(sat_before(0, 0x7fffffffu));
	CHECK(sat_after(0, 0x80000001u));
	/* 2^31 apart: each is before the other, as in include/net/tcp.h. */
	CHECK(sat_before(0, 0x80000000u) && sat_before(0x80000000u, 0));
	CHECK_EQ(sat_seq_min(0xfffffff0u, 0x10), 0xfffffff0u);
	CHECK_EQ(sat_seq_max(0xfffffff0u, 0x10), 0x10);
	CHECK_EQ(sat_seq_min(7, 7), 7);
	CHECK_EQ(sat_seq_max(3, 9), 9);
}

/* The step both IPv4 and TCP option lists take. */
static void test_opt_len(void)
{
	/* MSS 1460, NOP, window scale 7, EOL */
	static const u8 o[] = { 2, 4, 0x05, 0xb4, 1, 3, 3, 7, 0, 9 };
	u8 b[4] = { 0 };

	CHECK_EQ(sat_opt_len(o, sizeof(o), 0), 4);
	CHECK_EQ(sat_opt_len(o, sizeof(o), 4), 1);
	CHECK_EQ(sat_opt_len(o, sizeof(o), 5), 3);
	CHECK_EQ(sat_opt_len(o, sizeof(o), 8), 0);
	CHECK_EQ(sat_opt_len(o, 8, 5), 3);		/* ends the list */
	CHECK_EQ(sat_opt_len(o, 7, 5), -1);		/* runs past it */
	CHECK_EQ(sat_opt_len(o, 5, 4), 1);		/* NOP, last byte */
	CHECK_EQ(sat_opt_len(o, 1, 0), -1);		/* no length byte */
	b[0] = 5;
	CHECK_EQ(sat_opt_len(b, 4, 0), -1);		/* length 0 */
	b[1] = 1;
	CHECK_EQ(sat_opt_len(b, 4, 0), -1);		/* length 1 */
	b[1] = 2;
	CHECK_EQ(sat_opt_len(b, 4, 0), 2);		/* kind and length */
	b[1] = 255;
	CHECK_EQ(sat_opt_len(b, 4, 0), -1);
}

static void mk_epdn(u8 *o, u8 version)
{
	memset(o, 0, EPDN_OPT_LEN);
	o[EPDN_OFF_TYPE] = EPDN_OPT_TYPE;
	o[EPDN_OFF_LEN] = EPDN_OPT_LEN;
	o[EPDN_OFF_TTL] = 64;
	o[EPDN_OFF_VERFLAGS] = version << EPDN_VER_SHIFT;
}

static void test_ipopt_find(void)
{
	u8 o[40];

	memset(o, 0, sizeof(o));
	CHECK_EQ(sat_ipopt_find(o, 0), SAT_ENOENT);
	CHECK_EQ(sat_ipopt_find(o, 4), SAT_ENOENT);		/* EOL */
	mk_epdn(o, EPDN_VERSION);
	CHECK_EQ(sat_ipopt_find(o, 12), 0);
	/* The walker does not look at the version. */
	o[EPDN_OFF_VERFLAGS] = 0x20;
	CHECK_EQ(sat_ipopt_find(o, 12), 0);
	o[0] = 1;
	o[1] = 1;
	mk_epdn(o + 2, EPDN_VERSION);
	CHECK_EQ(sat_ipopt_find(o, 16), 2);			/* NOP NOP */
	/* Record route (type 7, length 7), NOP, then EPDN. */
	o[0] = 7;
	o[1] = 7;
	o[2] = 4;
	o[7] = 1;
	mk_epdn(o + 8, EPDN_VERSION);
	CHECK_EQ(sat_ipopt_find(o, 20), 8);
	CHECK_EQ(sat_ipopt_find(o, 8), SAT_ENOENT);		/* RR only */
	/* The EPDN option cut short by the list's end. */
	CHECK_EQ(sat_ipopt_find(o, 19), SAT_EBADMSG);
	CHECK_EQ(sat_ipopt_find(o, 9), SAT_EBADMSG);		/* type only */
	o[8] = 0;						/* EOL */
	CHECK_EQ(sat_ipopt_find(o, 20), SAT_ENOENT);
	mk_epdn(o + 8, EPDN_VERSION);
	o[9] = 8;						/* length 8 */
	CHECK_EQ(sat_ipopt_find(o, 20), SAT_EBADMSG);
	o[9] = EPDN_OPT_LEN;
	o[1] = 40;						/* past end */
	CHECK_EQ(sat_ipopt_find(o, 20), SAT_EBADMSG);
	o[1] = 1;						/* < 2 */
	CHECK_EQ(sat_ipopt_find(o, 20), SAT_EBADMSG);
	o[1] = 0;
	CHECK_EQ(sat_ipopt_find(o, 20), SAT_EBADMSG);
	o[0] = 0x44;						/* type, no len */
	CHECK_EQ(sat_ipopt_find(o, 1), SAT_EBADMSG);
	o[0] = 0;						/* EOL first */
	CHECK_EQ(sat_ipopt_find(o, 20), SAT_ENOENT);
	/* 40 NOPs; an EPDN option behind an EOL is not looked at. */
	memset(o, 1, sizeof(o));
	CHECK_EQ(sat_ipopt_find(o, 40), SAT_ENOENT);
	o[27] = 0;
	mk_epdn(o + 28, EPDN_VERSION);
	CHECK_EQ(sat_ipopt_find(o, 40), SAT_ENOENT);
	o[27] = 1;
	CHECK_EQ(sat_ipopt_find(o, 40), 28);
}

static void test_parse_ipv4(void)
{
	struct sat_ip ip;
	u8 h[60];

	unit_ipv4(h, 1500, 63, 0);
	CHECK_EQ(sat_parse_ipv4(h, 20, 1500, false, &ip), SAT_OK);
	CHECK_EQ(ip.hdr_len, 20);
	CHECK_EQ(ip.tot_len, 1500);
	CHECK_EQ(ip.proto, 6);
	CHECK_EQ(ip.ttl, 63);
	CHECK(!ip.frag);
	CHECK_EQ(ip.saddr, htonl(0x0a000001));
	CHECK_EQ(ip.daddr, htonl(0x0a000002));
	/* A packet longer than tot_len (padding) is fine. */
	CHECK_EQ(sat_parse_ipv4(h, 20, 1600, false, &ip), SAT_OK);
	CHECK_EQ(ip.tot_len, 1500);
	/* Truncated: tot_len beyond the packet; header cut short. */
	CHECK_EQ(sat_parse_ipv4(h, 20, 1499, false, &ip), SAT_EBADMSG);
	CHECK_EQ(sat_parse_ipv4(h, 19, 1500, false, &ip), SAT_EBADMSG);
	/* GSO: the length is the packet's, even when tot_len is 0. */
	unit_ipv4(h, 0, 63, 0);
	CHECK_EQ(sat_parse_ipv4(h, 20, 64000, true, &ip), SAT_OK);
	CHECK_EQ(ip.tot_len, 64000);
	CHECK_EQ(sat_parse_ipv4(h, 20, 64000, false, &ip), SAT_EBADMSG);
	/* Version 6, ihl 4, tot_len below ihl; a bare header is fine. */
	unit_ipv4(h, 1500, 63, 0);
	h[0] = 0x65;
	CHECK_EQ(sat_parse_ipv4(h, 20, 1500, false, &ip), SAT_EBADMSG);
	h[0] = 0x44;
	CHECK_EQ(sat_parse_ipv4(h, 20, 1500, false, &ip), SAT_EBADMSG);
	unit_ipv4(h, 19, 63, 0);
	CHECK_EQ(sat_parse_ipv4(h, 20, 1500, false, &ip), SAT_EBADMSG);
	unit_ipv4(h, 20, 63, 0);
	CHECK_EQ(sat_parse_ipv4(h, 20, 20, false, &ip), SAT_OK);
	/* Fragments: MF, or an offset; DF alone is not one. */
	unit_ipv4(h, 1500, 63, 0);
	h[6] = 0x20;
	CHECK_EQ(sat_parse_ipv4(h, 20, 1500, false, &ip), SAT_OK);
	CHECK(ip.frag);
	h[6] = 0x40;
	CHECK_EQ(sat_parse_ipv4(h, 20, 1500, false, &ip), SAT_OK);
	CHECK(!ip.frag);
	h[7] = 1;
	CHECK_EQ(sat_parse_ipv4(h, 20, 1500, false, &ip), SAT_OK);
	CHECK(ip.frag);
	/* Options: the whole header must have been copied. */
	unit_ipv4(h, 1512, 63, 12);
	CHECK_EQ(sat_parse_ipv4(h, 32, 1512, false, &ip), SAT_OK);
	CHECK_EQ(ip.hdr_len, 32);
	CHECK_EQ(sat_parse_ipv4(h, 31, 1512, false, &ip), SAT_EBADMSG);
	CHECK_EQ(sat_parse_ipv4(h, 20, 1512, false, &ip), SAT_EBADMSG);
	/* A GSO packet shorter than its own header. */
	CHECK_EQ(sat_parse_ipv4(h, 32, 24, true, &ip), SAT_EBADMSG);
	CHECK_EQ(sat_parse_ipv4(h, 32, 32, true, &ip), SAT_OK);
	/* ihl 15: 60 bytes. */
	h[0] = 0x4f;
	CHECK_EQ(sat_parse_ipv4(h, 60, 1512, false, &ip), SAT_OK);
	CHECK_EQ(ip.hdr_len, 60);
}

static void mk_tcp(u8 *th, u8 doff, u8 flags)
{
	memset(th, 0, SAT_TCP_HDR_MAX);
	th[0] = 0x13;
	th[1] = 0x89;		/* sport 5001 */
	th[3] = 0x50;		/* dport 80 */
	put32(th + 4, 0xffffff00u);
	put32(th + 8, 77);
	th[12] = doff << 4;
	th[13] = flags;
	th[14] = 0x01;
	th[15] = 0xf4;		/* window 500 */
}

static void test_parse_tcp(void)
{
	u8 th[SAT_TCP_HDR_MAX];
	struct sat_tcp t;

	mk_tcp(th, 8, SAT_TCP_ACK);
	CHECK_EQ(sat_parse_tcp(th, 32, 32 + 1448, &t), SAT_OK);
	CHECK_EQ(t.hdr_len, 32);
	CHECK_EQ(t.sport, htons(5001));
	CHECK_EQ(t.dport, htons(80));
	CHECK_EQ(t.seq, 0xffffff00u);
	CHECK_EQ(t.ack, 77);
	CHECK_EQ(t.win, 500);
	CHECK_EQ(t.flags, SAT_TCP_ACK);
	CHECK_EQ(t.payload, 1448);
	CHECK_EQ(t.end_seq, (u32)(0xffffff00u + 1448));	/* wraps */
	/* Pure ACK; SYN and FIN count one each. */
	CHECK_EQ(sat_parse_tcp(th, 32, 32, &t), SAT_OK);
	CHECK_EQ(t.end_seq, t.seq);
	th[13] = SAT_TCP_SYN | SAT_TCP_FIN;
	CHECK_EQ(sat_parse_tcp(th, 60, 32, &t), SAT_OK);
	CHECK_EQ(t.end_seq - t.seq, 2);
	th[13] = SAT_TCP_ACK | SAT_TCP_FIN;
	CHECK_EQ(sat_parse_tcp(th, 32, 132, &t), SAT_OK);
	CHECK_EQ(t.end_seq - t.seq, 101);
	/* doff beyond the segment; options not copied; short copies. */
	CHECK_EQ(sat_parse_tcp(th, 32, 31, &t), SAT_EBADMSG);
	CHECK_EQ(sat_parse_tcp(th, 31, 132, &t), SAT_EBADMSG);
	CHECK_EQ(sat_parse_tcp(th, 20, 132, &t), SAT_EBADMSG);
	CHECK_EQ(sat_parse_tcp(th, 19, 132, &t), SAT_EBADMSG);
	CHECK_EQ(sat_parse_tcp(th, 60, 19, &t), SAT_EBADMSG);
	/* doff 4, doff 15, doff 5 in a 20-byte copy. */
	th[12] = 0x40;
	CHECK_EQ(sat_parse_tcp(th, 60, 132, &t), SAT_EBADMSG);
	th[12] = 0xf0;
	CHECK_EQ(sat_parse_tcp(th, 60, 60, &t), SAT_OK);
	CHECK_EQ(t.hdr_len, 60);
	CHECK_EQ(t.payload, 0);
	CHECK_EQ(sat_parse_tcp(th, 60, 59, &t), SAT_EBADMSG);
	th[12] = 0x50;
	CHECK_EQ(sat_parse_tcp(th, 20, 20, &t), SAT_OK);
	CHECK_EQ(t.hdr_len, 20);
}

/* The SACK option of the rn sender and receiver: 1 to 4 whole blocks. */
static void test_sack_blocks(void)
{
	struct sat_sack b[SAT_SACK_MAX];
	u8 o[40] = { SAT_OPT_SACK, 34 };
	u32 i;

	for (i = 0; i < 8; i++)
		put32(o + 2 + 4 * i, 0x80000000u + i);
	CHECK_EQ(sat_sack_blocks(o, 34, b), 4);
	CHECK_EQ(b[0].start, 0x80000000u);
	CHECK_EQ(b[0].end, 0x80000001u);
	CHECK_EQ(b[3].start, 0x80000006u);
	CHECK_EQ(b[3].end, 0x80000007u);
	CHECK_EQ(sat_sack_blocks(o, 10, b), 1);
	CHECK_EQ(sat_sack_blocks(o, 42, b), SAT_EBADMSG);	/* 5 blocks */
	CHECK_EQ(sat_sack_blocks(o, 2, b), SAT_EBADMSG);	/* none */
	CHECK_EQ(sat_sack_blocks(o, 14, b), SAT_EBADMSG);	/* half a block */
	CHECK_EQ(sat_sack_blocks(o, 9, b), SAT_EBADMSG);
	CHECK_EQ(sat_sack_blocks(o, 0, b), SAT_EBADMSG);
}

int main(void)
{
	RUN(test_be);
	RUN(test_seq);
	RUN(test_opt_len);
	RUN(test_ipopt_find);
	RUN(test_parse_ipv4);
	RUN(test_parse_tcp);
	RUN(test_sack_blocks);
	return unit_report("test_hdr");
}
