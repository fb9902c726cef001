// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the RN-TCP sender core (tcp_rn/rn_sender_core.c): the kval
 * and dupthresh rules, the ACK parser and its malformed inputs, the latch,
 * the classification of dupACK trains, ECE, the RTO fallback, false fast
 * retransmits and kval doubling, extended limited transmit, RN-TCP-ES
 * pairing and the RTT estimator.
 */
#include "tests/unit/unit.h"
#include "tcp_rn/rn_sender_core.c"

#include <string.h>

static const struct rn_params P = {
	.c_permille = RN_C_PERMILLE,
	.dupthresh_min = RN_DUPTHRESH_MIN,
	.dupthresh_drop = RN_DUPTHRESH_DROP,
	.dupthresh_max = 300,
	.ece_rtts = 1,
	.lt_ext = 1,
};

/* ---- kval and dupthresh (§IV-B2) ---- */

static void test_kval(void)
{
	/* ceil(110/100) = 2, times c = 0.1: 0.2 */
	CHECK_EQ(rn_kval_update(0, 110000, 100000, 100), 200);
	/* ceil(100/100) = 1: 0.1 */
	CHECK_EQ(rn_kval_update(0, 100000, 100000, 100), 100);
	/* ceil(250/100) = 3: 0.3 */
	CHECK_EQ(rn_kval_update(0, 250000, 100000, 100), 300);
	/* max(): the formula never lowers kval */
	CHECK_EQ(rn_kval_update(800, 100000, 100000, 100), 800);
	/* no RTT yet: the ratio is 1 */
	CHECK_EQ(rn_kval_update(0, 0, 0, 100), 100);
	CHECK_EQ(rn_kval_update(0, 5000, 0, 100), 100);
	/* c is a parameter */
	CHECK_EQ(rn_kval_update(0, 100000, 100000, 250), 250);
	CHECK_EQ(rn_kval_update(0, 100000, 100000, 0), 0);
	/* bounded */
	CHECK_EQ(rn_kval_update(0, 0xffffffff, 1, 1000), RN_KVAL_MAX);
}

static void test_dupthresh(void)
{
	/* max(4, swnd + swnd * kval) */
	CHECK_EQ(rn_dupthresh(50, 200, &P), 60);
	CHECK_EQ(rn_dupthresh(50, 0, &P), 50);
	CHECK_EQ(rn_dupthresh(2, 0, &P), 4);
	CHECK_EQ(rn_dupthresh(0, 0, &P), 4);
	CHECK_EQ(rn_dupthresh(3, 100, &P), 4);	/* 3 + 0.3 -> 4 */
	CHECK_EQ(rn_dupthresh(7, 100, &P), 8);	/* 7 + 0.7, rounded up */
	CHECK_EQ(rn_dupthresh(10, 1000, &P), 20);
	/* clamped to tcp_max_reordering */
	CHECK_EQ(rn_dupthresh(1000, 100, &P), 300);
	CHECK_EQ(rn_dupthresh(0xffffffff, RN_KVAL_MAX, &P), 300);
}

/* ---- the ACK parser ---- */

struct seg {
	u8 b[SAT_TCP_HDR_MAX];
	u32 len;
};

/* A TCP header with the given options (padded to 4 bytes with EOL). */
static struct seg mkseg(u32 seq, u32 ack, u8 flags, bool dn,
			const u8 *opt, u32 olen)
{
	struct seg s;
	u32 hl = SAT_TCP_HDR_MIN + ((olen + 3) & ~3u);

	memset(&s, 0, sizeof(s));
	s.b[0] = 0x13;
	s.b[1] = 0x89;
	put32(s.b + 4, seq);
	put32(s.b + 8, ack);
	s.b[12] = (hl / 4) << 4 | (dn ? RN_DN_MASK : 0);
	s.b[13] = flags;
	if (olen)
		memcpy(s.b + SAT_TCP_HDR_MIN, opt, olen);
	s.len = hl;
	return s;
}

/* NOP NOP SACK with n blocks. */
static u32 mksack(u8 *o, const u32 *blk, u32 n)
{
	u32 i;

	o[0] = SAT_OPT_NOP;
	o[1] = SAT_OPT_NOP;
	o[2] = SAT_OPT_SACK;
	o[3] = 2 + 8 * n;
	for (i = 0; i < 2 * n; i++)
		put32(o + 4 + 4 * i, blk[i]);
	return 4 + 8 * n;
}

static void test_parse_plain(void)
{
	struct rn_wire w;
	struct seg s = mkseg(7, 1000, SAT_TCP_ACK, false, NULL, 0);

	CHECK_EQ(rn_parse_ack(s.b, s.len, &w), RN_PARSE_OK);
	CHECK_EQ(w.ack, 1000);
	CHECK_EQ(w.seq, 7);
	CHECK_EQ(w.flags, 0);
	CHECK_EQ(w.hdr_len, 20);

	s = mkseg(7, 1000, SAT_TCP_ACK | SAT_TCP_ECE, true, NULL, 0);
	CHECK_EQ(rn_parse_ack(s.b, s.len, &w), RN_PARSE_OK);
	CHECK_EQ(w.flags, RN_W_DN | RN_W_ECE);

	/* AE (0x01) and the other reserved bits are not the DN bit */
	s = mkseg(7, 1000, SAT_TCP_ACK, false, NULL, 0);
	s.b[12] |= 0x0d;
	CHECK_EQ(rn_parse_ack(s.b, s.len, &w), RN_PARSE_OK);
	CHECK(!(w.flags & RN_W_DN));
}

static void test_parse_not_ack_and_bad(void)
{
	struct rn_wire w;
	struct seg s = mkseg(1, 2, SAT_TCP_SYN | SAT_TCP_ACK, true, NULL, 0);

	CHECK_EQ(rn_parse_ack(s.b, s.len, &w), RN_PARSE_NOT_ACK);
	s = mkseg(1, 2, SAT_TCP_RST | SAT_TCP_ACK, true, NULL, 0);
	CHECK_EQ(rn_parse_ack(s.b, s.len, &w), RN_PARSE_NOT_ACK);
	s = mkseg(1, 2, 0, true, NULL, 0);
	CHECK_EQ(rn_parse_ack(s.b, s.len, &w), RN_PARSE_NOT_ACK);

	/* doff below 5, doff beyond the bytes we have, short header */
	s = mkseg(1, 2, SAT_TCP_ACK, false, NULL, 0);
	s.b[12] = 4 << 4;
	CHECK_EQ(rn_parse_ack(s.b, s.len, &w), RN_PARSE_BAD);
	s.b[12] = 15 << 4;
	CHECK_EQ(rn_parse_ack(s.b, 20, &w), RN_PARSE_BAD);
	CHECK_EQ(rn_parse_ack(s.b, 19, &w), RN_PARSE_BAD);
	CHECK_EQ(rn_parse_ack(s.b, 0, &w), RN_PARSE_BAD);
}

static void test_parse_sack(void)
{
	struct rn_wire w;
	u8 o[40];
	u32 blk[8];
	struct seg s;
	u32 n;

	/* one block above the ACK: a hole */
	blk[0] = 2000;
	blk[1] = 3000;
	n = mksack(o, blk, 1);
	s = mkseg(1, 1000, SAT_TCP_ACK, true, o, n);
	CHECK_EQ(rn_parse_ack(s.b, s.len, &w), RN_PARSE_OK);
	CHECK_EQ(w.flags, RN_W_DN | RN_W_HOLE);

	/* D-SACK below the ACK, no other block: no hole */
	blk[0] = 500;
	blk[1] = 600;
	n = mksack(o, blk, 1);
	s = mkseg(1, 1000, SAT_TCP_ACK, false, o, n);
	CHECK_EQ(rn_parse_ack(s.b, s.len, &w), RN_PARSE_OK);
	CHECK_EQ(w.flags, RN_W_DSACK);
	CHECK_EQ(w.dsack_start, 500);
	CHECK_EQ(w.dsack_end, 600);

	/* D-SACK inside the second block, which is a hole block */
	blk[0] = 2100;
	blk[1] = 2200;
	blk[2] = 2000;
	blk[3] = 3000;
	n = mksack(o, blk, 2);
	s = mkseg(1, 1000, SAT_TCP_ACK, false, o, n);
	CHECK_EQ(rn_parse_ack(s.b, s.len, &w), RN_PARSE_OK);
	CHECK_EQ(w.flags, RN_W_DSACK | RN_W_HOLE);
	CHECK_EQ(w.dsack_start, 2100);

	/* four blocks, wrapping sequence space */
	blk[0] = 0xfffffff0;
	blk[1] = 0x10;
	blk[2] = 0x100;
	blk[3] = 0x200;
	blk[4] = 0x300;
	blk[5] = 0x400;
	blk[6] = 0x500;
	blk[7] = 0x600;
	n = mksack(o, blk, 4);
	s = mkseg(1, 0xffffff00, SAT_TCP_ACK, true, o, n);
	CHECK_EQ(rn_parse_ack(s.b, s.len, &w), RN_PARSE_OK);
	CHECK_EQ(w.flags, RN_W_DN | RN_W_HOLE);

	/* empty and inverted blocks are no blocks */
	blk[0] = 2000;
	blk[1] = 2000;
	blk[2] = 3000;
	blk[3] = 2500;
	n = mksack(o, blk, 2);
	s = mkseg(1, 1000, SAT_TCP_ACK, true, o, n);
	CHECK_EQ(rn_parse_ack(s.b, s.len, &w), RN_PARSE_OK);
	CHECK_EQ(w.flags, RN_W_DN);

	/* timestamps first, then SACK */
	memset(o, 0, sizeof(o));
	o[0] = SAT_OPT_NOP;
	o[1] = SAT_OPT_NOP;
	o[2] = 8;
	o[3] = 10;
	blk[0] = 4000;
	blk[1] = 5000;
	n = 12 + mksack(o + 12, blk, 1);
	s = mkseg(1, 1000, SAT_TCP_ACK, false, o, n);
	CHECK_EQ(rn_parse_ack(s.b, s.len, &w), RN_PARSE_OK);
	CHECK_EQ(w.flags, RN_W_HOLE);
}

static void test_parse_malformed_options(void)
{
	struct rn_wire w;
	u8 o[40];
	struct seg s;

	/* option length 1 */
	memset(o, 0, sizeof(o));
	o[0] = 8;
	o[1] = 1;
	s = mkseg(1, 1000, SAT_TCP_ACK, true, o, 4);
	CHECK_EQ(rn_parse_ack(s.b, s.len, &w), RN_PARSE_OK);
	CHECK_EQ(w.flags, RN_W_DN | RN_W_BADOPT);

	/* option running past the header */
	o[0] = SAT_OPT_SACK;
	o[1] = 34;
	put32(o + 2, 2000);
	put32(o + 6, 3000);
	s = mkseg(1, 1000, SAT_TCP_ACK, true, o, 12);
	CHECK_EQ(rn_parse_ack(s.b, s.len, &w), RN_PARSE_OK);
	CHECK_EQ(w.flags, RN_W_DN | RN_W_BADOPT);

	/* SACK length not 2 + 8n */
	o[1] = 11;
	s = mkseg(1, 1000, SAT_TCP_ACK, true, o, 12);
	CHECK_EQ(rn_parse_ack(s.b, s.len, &w), RN_PARSE_OK);
	CHECK(w.flags & RN_W_BADOPT);
	CHECK(!(w.flags & RN_W_HOLE));

	/* SACK with no block */
	o[1] = 2;
	s = mkseg(1, 1000, SAT_TCP_ACK, true, o, 4);
	CHECK_EQ(rn_parse_ack(s.b, s.len, &w), RN_PARSE_OK);
	CHECK(w.flags & RN_W_BADOPT);

	/* kind with no room for its length byte */
	memset(o, SAT_OPT_NOP, sizeof(o));
	o[3] = 30;
	s = mkseg(1, 1000, SAT_TCP_ACK, false, o, 4);
	CHECK_EQ(rn_parse_ack(s.b, s.len, &w), RN_PARSE_OK);
	CHECK_EQ(w.flags, RN_W_BADOPT);

	/* two SACK options: the second is refused */
	{
		u32 blk[2] = { 2000, 3000 };
		u32 n = mksack(o, blk, 1);

		n += mksack(o + n, blk, 1);
		s = mkseg(1, 1000, SAT_TCP_ACK, false, o, n);
		CHECK_EQ(rn_parse_ack(s.b, s.len, &w), RN_PARSE_OK);
		CHECK_EQ(w.flags, RN_W_HOLE | RN_W_BADOPT);
	}

	/* EOL ends the list: garbage after it is not read */
	memset(o, 0xff, sizeof(o));
	o[0] = SAT_OPT_EOL;
	s = mkseg(1, 1000, SAT_TCP_ACK, false, o, 8);
	CHECK_EQ(rn_parse_ack(s.b, s.len, &w), RN_PARSE_OK);
	CHECK_EQ(w.flags, 0);
}

/* Every byte string of a header must parse without reading past it. */
static void test_parse_fuzz(void)
{
	u32 x = 12345, i, j;
	struct rn_wire w;
	u8 b[SAT_TCP_HDR_MAX], *p;

	for (i = 0; i < 200000; i++) {
		u32 len;

		for (j = 0; j < sizeof(b); j++) {
			x = x * 1103515245 + 12345;
			b[j] = x >> 16;
		}
		if (i & 1) {
			b[13] = SAT_TCP_ACK;
			b[20] = SAT_OPT_SACK;
		}
		len = (x >> 8) % (sizeof(b) + 1);
		/* exactly len bytes, so a sanitizer sees any overread */
		p = malloc(len ? len : 1);
		if (!p)
			exit(2);
		memcpy(p, b, len);
		rn_parse_ack(p, len, &w);
		free(p);
		if (w.flags & RN_W_DSACK)
			CHECK(sat_before(w.dsack_start, w.dsack_end));
	}
	CHECK(1);
}

/* ---- the latch ---- */

static struct rn_wire wire(u32 ack, u8 flags)
{
	struct rn_wire w = { .ack = ack, .flags = flags };

	return w;
}

static void test_latch(void)
{
	struct rn_latch l = { 0 };
	struct rn_wire w;
	u32 i;

	w = wire(1000, RN_W_HOLE | RN_W_DN);
	rn_latch_update(&l, &w);
	rn_latch_update(&l, &w);
	w = wire(1000, RN_W_HOLE);
	rn_latch_update(&l, &w);
	CHECK(l.flags & RN_L_VALID);
	CHECK_EQ(l.seq, 1000);
	CHECK_EQ(l.dn_set, 2);
	CHECK_EQ(l.dn_clear, 1);
	CHECK_EQ(l.dn_acks, 2);

	/* a new ACK number starts a new train */
	w = wire(2000, RN_W_HOLE | RN_W_DN);
	rn_latch_update(&l, &w);
	CHECK_EQ(l.seq, 2000);
	CHECK_EQ(l.dn_set, 1);
	CHECK_EQ(l.dn_clear, 0);

	/* ACKs without a hole do not touch the train, with or without bit */
	w = wire(3000, 0);
	rn_latch_update(&l, &w);
	w = wire(3000, RN_W_DN);
	rn_latch_update(&l, &w);
	CHECK_EQ(l.seq, 2000);
	CHECK_EQ(l.dn_set, 1);
	CHECK_EQ(l.bogus, 0);

	/* the bit on an ACK for everything sent is evidence against it */
	w = wire(3000, RN_W_DN | RN_W_ALLACKED);
	rn_latch_update(&l, &w);
	CHECK_EQ(l.bogus, 1);
	w = wire(3000, RN_W_ALLACKED);
	rn_latch_update(&l, &w);
	CHECK_EQ(l.bogus, 1);
	w = wire(3000, RN_W_DN | RN_W_ALLACKED);
	for (i = 0; i < 1000; i++)
		rn_latch_update(&l, &w);
	CHECK_EQ(l.bogus, 0xff);

	/* D-SACK ranges are latched */
	w = wire(3000, RN_W_DSACK | RN_W_DN);
	w.dsack_start = 10;
	w.dsack_end = 20;
	rn_latch_update(&l, &w);
	CHECK(l.flags & RN_L_DSACK);
	CHECK_EQ(l.dsack_start, 10);
	CHECK_EQ(l.dsack_end, 20);

	/* counts saturate */
	w = wire(4000, RN_W_HOLE | RN_W_DN);
	for (i = 0; i < 70000; i++)
		rn_latch_update(&l, &w);
	CHECK_EQ(l.dn_set, 0xffff);
}

/* ---- the rules ---- */

static struct rn_ack ack0(u32 una, u32 sacked, u32 cwnd)
{
	struct rn_ack a = {
		.snd_una = una,
		.sacked_out = sacked,
		.packets_out = cwnd,
		.cwnd = cwnd,
		.rwnd = 10000,
		.srtt_us = 110000,
		.min_rtt_us = 100000,
		.now_ms = 1000,
		.state = RN_STATE_OPEN,
	};

	return a;
}

/* A dupACK of a train whose ACKs so far had set/clear bits. */
static struct rn_ack dup(u32 una, u32 sacked, u32 cwnd, u16 set, u16 clear)
{
	struct rn_ack a = ack0(una, sacked, cwnd);

	a.dn_known = 1;
	a.dn_set = set;
	a.dn_clear = clear;
	return a;
}

static struct rn_sender fresh(void)
{
	struct rn_sender s;

	rn_sender_init(&s, &P);
	return s;
}

static void test_reorder_train(void)
{
	struct rn_sender s = fresh();
	struct rn_verdict v;
	struct rn_ack a;
	u32 i;

	/* cwnd 50, srtt/min_rtt = 1.1: kval 0.2, dupthresh 60 */
	for (i = 1; i < 60; i++) {
		a = dup(1000, i, 50, i, 0);
		rn_on_ack(&s, &P, &a, &v);
		CHECK_EQ(v.cls, RN_CLS_REORDER);
		CHECK_EQ(v.dupthresh, 60);
		CHECK(!v.recover);
	}
	CHECK_EQ(s.kval, 200);
	a = dup(1000, 60, 50, 60, 0);
	rn_on_ack(&s, &P, &a, &v);
	CHECK(v.recover);

	/* the hole arrives: the train ends, the rule stays for ss */
	a = ack0(90000, 0, 50);
	rn_on_ack(&s, &P, &a, &v);
	CHECK_EQ(v.cls, RN_CLS_NONE);
	CHECK_EQ(v.dupthresh, 60);
	CHECK_EQ(s.applied, 60);
}

static void test_drop_train(void)
{
	struct rn_sender s = fresh();
	struct rn_verdict v;
	struct rn_ack a;

	a = dup(1000, 1, 50, 0, 1);
	rn_on_ack(&s, &P, &a, &v);
	CHECK_EQ(v.cls, RN_CLS_DROP);
	CHECK_EQ(v.new_train, RN_CLS_DROP);
	CHECK_EQ(v.dupthresh, 3);
	CHECK(!v.recover);
	a = dup(1000, 2, 50, 0, 2);
	rn_on_ack(&s, &P, &a, &v);
	CHECK(!v.recover);
	CHECK_EQ(v.new_train, RN_CLS_NONE);
	a = dup(1000, 3, 50, 0, 3);
	rn_on_ack(&s, &P, &a, &v);
	CHECK(v.recover);
	CHECK_EQ(s.kval, 0);	/* a drop train leaves kval alone */
}

/* §IV-B3: "if any of the three duplicate ACKs ... un-set" */
static void test_one_clear_bit_makes_a_drop(void)
{
	struct rn_sender s = fresh();
	struct rn_verdict v;
	struct rn_ack a;

	a = dup(1000, 1, 50, 1, 0);
	rn_on_ack(&s, &P, &a, &v);
	CHECK_EQ(v.cls, RN_CLS_REORDER);
	a = dup(1000, 2, 50, 1, 1);
	rn_on_ack(&s, &P, &a, &v);
	CHECK_EQ(v.cls, RN_CLS_DROP);
	CHECK_EQ(v.dupthresh, 3);
	/* a drop stays a drop for the train, whatever the latch says */
	a = dup(1000, 3, 50, 5, 0);
	rn_on_ack(&s, &P, &a, &v);
	CHECK_EQ(v.cls, RN_CLS_DROP);
	CHECK(v.recover);
}

static void test_unknown_bits(void)
{
	struct rn_sender s = fresh();
	struct rn_verdict v;
	struct rn_ack a;

	/* nothing latched for this hole: as if the bit were clear */
	a = ack0(1000, 1, 50);
	rn_on_ack(&s, &P, &a, &v);
	CHECK_EQ(v.cls, RN_CLS_DROP);

	/* a reordered train keeps its class over an ACK we could not read */
	s = fresh();
	a = dup(1000, 1, 50, 1, 0);
	rn_on_ack(&s, &P, &a, &v);
	a = ack0(1000, 2, 50);
	rn_on_ack(&s, &P, &a, &v);
	CHECK_EQ(v.cls, RN_CLS_REORDER);

	/* a peer that set the bit on ACKs without holes is not believed */
	s = fresh();
	a = dup(1000, 1, 50, 1, 0);
	a.dn_distrust = 1;
	rn_on_ack(&s, &P, &a, &v);
	CHECK_EQ(v.cls, RN_CLS_DROP);
}

static void test_ece(void)
{
	struct rn_sender s = fresh();
	struct rn_verdict v;
	struct rn_ack a;

	/* ECE on an ACK before the train: recent for one srtt (110 ms) */
	a = ack0(500, 0, 50);
	a.ece = 1;
	a.now_ms = 1000;
	rn_on_ack(&s, &P, &a, &v);
	a = dup(1000, 1, 50, 1, 0);
	a.now_ms = 1100;
	rn_on_ack(&s, &P, &a, &v);
	CHECK_EQ(v.cls, RN_CLS_DROP);

	/* long after: the bit is believed again */
	s.flags &= ~RN_F_TRAIN;
	a = dup(2000, 1, 50, 1, 0);
	a.now_ms = 1111;
	rn_on_ack(&s, &P, &a, &v);
	CHECK_EQ(v.cls, RN_CLS_REORDER);

	/* ECE on the dupACK itself */
	s = fresh();
	a = dup(1000, 1, 50, 1, 0);
	a.ece = 1;
	rn_on_ack(&s, &P, &a, &v);
	CHECK_EQ(v.cls, RN_CLS_DROP);

	/* ms clock wraps */
	s = fresh();
	a = ack0(500, 0, 50);
	a.ece = 1;
	a.now_ms = 0xfffffff0;
	rn_on_ack(&s, &P, &a, &v);
	a = dup(1000, 1, 50, 1, 0);
	a.now_ms = 20;
	rn_on_ack(&s, &P, &a, &v);
	CHECK_EQ(v.cls, RN_CLS_DROP);
}

static void test_rto_fallback(void)
{
	struct rn_sender s = fresh();
	struct rn_verdict v;
	struct rn_ack a;

	a = dup(1000, 1, 50, 1, 0);
	rn_on_ack(&s, &P, &a, &v);
	CHECK_EQ(s.kval, 200);

	rn_on_rto(&s, &P);
	CHECK_EQ(s.kval, 0);
	CHECK(s.flags & RN_F_FALLBACK);

	/* Loss state: dupthresh 3 */
	a = dup(1000, 5, 1, 5, 0);
	a.state = RN_STATE_RECOVERY;
	rn_on_ack(&s, &P, &a, &v);
	CHECK_EQ(v.dupthresh, 3);

	/* back in Open: the bit is ignored until a D-SACK */
	a = dup(5000, 1, 10, 1, 0);
	rn_on_ack(&s, &P, &a, &v);
	CHECK_EQ(v.cls, RN_CLS_DROP);
	a = dup(5000, 3, 10, 3, 0);
	rn_on_ack(&s, &P, &a, &v);
	CHECK(v.recover);

	/* the first D-SACK ends the fallback */
	a = dup(8000, 1, 10, 1, 0);
	a.dsack = 1;
	rn_on_ack(&s, &P, &a, &v);
	CHECK(v.fallback_end);
	CHECK(!(s.flags & RN_F_FALLBACK));
	CHECK_EQ(v.cls, RN_CLS_REORDER);
	CHECK_EQ(v.dupthresh, 12);	/* 10 + 10 * 0.2, kval from 0 */
	CHECK_EQ(s.kval, 200);
}

/*
 * §IV-B4: a timeout in the middle of a fast recovery is a timeout too:
 * kval 0 and dupthresh 3 for marked trains until the first D-SACK.
 */
static void test_rto_during_recovery(void)
{
	struct rn_sender s = fresh();
	struct rn_verdict v;
	struct rn_ack a;

	a = dup(1000, 1, 50, 1, 0);
	rn_on_ack(&s, &P, &a, &v);
	CHECK_EQ(v.dupthresh, 60);
	rn_on_enter(&s, &P, RN_ENTER_RECOVERY, 1000, 2000);
	CHECK_EQ(s.fast_rexmits, 1);
	CHECK(!(s.flags & RN_F_FALLBACK));
	a = dup(1000, 61, 50, 61, 0);
	a.state = RN_STATE_RECOVERY;
	rn_on_ack(&s, &P, &a, &v);

	rn_on_enter(&s, &P, RN_ENTER_LOSS, 0, 0);	/* RTO in Recovery */
	CHECK(s.flags & RN_F_FALLBACK);
	CHECK_EQ(s.kval, 0);
	CHECK(!(s.flags & RN_F_FR));	/* its D-SACK is ambiguous now */

	a = dup(70000, 3, 10, 3, 0);	/* Open, a marked train */
	rn_on_ack(&s, &P, &a, &v);
	CHECK_EQ(v.cls, RN_CLS_DROP);
	CHECK_EQ(v.dupthresh, 3);
	CHECK(v.recover);
	CHECK_EQ(s.false_frs, 0);

	a = dup(80000, 1, 10, 1, 0);
	a.dsack = 1;
	rn_on_ack(&s, &P, &a, &v);
	CHECK(v.fallback_end);
	CHECK_EQ(v.cls, RN_CLS_REORDER);
	CHECK_EQ(v.dupthresh, 12);
}

/* The probe of the stack's order: was the queue cleaned for this ACK? */
static void test_acked_still_queued(void)
{
	CHECK(!rn_acked_still_queued(false, 0, 1000));	/* empty queue */
	CHECK(rn_acked_still_queued(true, 1000, 1000));	/* fully acked */
	CHECK(rn_acked_still_queued(true, 500, 1000));
	CHECK(!rn_acked_still_queued(true, 1001, 1000)); /* partly, or not */
	CHECK(rn_acked_still_queued(true, 0xfffffff0u, 10));	/* wraps */
	CHECK(!rn_acked_still_queued(true, 20, 0xfffffff0u));
}

/*
 * Without D-SACK (a peer with net.ipv4.tcp_dsack = 0) the fallback ends
 * at the stack's first undo, the other proof of an unneeded
 * retransmission (timestamps); it never ends otherwise.
 */
static void test_undo_ends_fallback(void)
{
	struct rn_sender s = fresh();
	struct rn_verdict v;
	struct rn_ack a;
	int i;

	CHECK(!rn_on_undo(&s));		/* no fallback: nothing to end */
	rn_on_rto(&s, &P);
	for (i = 0; i < 5; i++) {	/* trains come and go: still SACK */
		a = dup(1000 + 2000 * i, 5, 20, 5, 0);
		rn_on_ack(&s, &P, &a, &v);
		CHECK_EQ(v.cls, RN_CLS_DROP);
		CHECK(v.recover);
	}
	CHECK(s.flags & RN_F_FALLBACK);
	CHECK(rn_on_undo(&s));
	CHECK(!(s.flags & RN_F_FALLBACK));
	CHECK(!rn_on_undo(&s));		/* counted once */
	a = dup(20000, 1, 20, 1, 0);
	rn_on_ack(&s, &P, &a, &v);
	CHECK_EQ(v.cls, RN_CLS_REORDER);
	CHECK_EQ(v.dupthresh, 24);	/* 20 + 20 * 0.2 */
	CHECK_EQ(s.kval, 200);		/* an undo does not double kval */
}

/*
 * Neither D-SACK nor timestamps (no_undo): nothing could ever end the
 * fallback, so it ends when the stack leaves Loss.
 */
static void test_fallback_without_evidence(void)
{
	struct rn_sender s = fresh();
	struct rn_verdict v;
	struct rn_ack a;

	rn_on_rto(&s, &P);
	a = dup(1000, 5, 20, 5, 0);
	a.state = RN_STATE_RECOVERY;	/* Loss */
	a.no_undo = 1;
	rn_on_ack(&s, &P, &a, &v);
	CHECK(!v.fallback_end);
	CHECK(s.flags & RN_F_FALLBACK);
	CHECK_EQ(v.dupthresh, 3);

	/* Open again, but an undo is still possible: the fallback stays */
	a = dup(9000, 1, 20, 1, 0);
	rn_on_ack(&s, &P, &a, &v);
	CHECK(!v.fallback_end);
	CHECK_EQ(v.cls, RN_CLS_DROP);

	/* ... and without any evidence it ends, at once */
	a = dup(11000, 1, 20, 1, 0);
	a.no_undo = 1;
	rn_on_ack(&s, &P, &a, &v);
	CHECK(v.fallback_end);
	CHECK(!(s.flags & RN_F_FALLBACK));
	CHECK_EQ(v.cls, RN_CLS_REORDER);
	CHECK_EQ(v.dupthresh, 24);
}

static void test_false_fast_retransmit(void)
{
	struct rn_sender s = fresh();
	struct rn_verdict v;
	struct rn_ack a;

	a = dup(1000, 1, 50, 1, 0);
	rn_on_ack(&s, &P, &a, &v);
	CHECK_EQ(s.kval, 200);
	rn_on_fast_retransmit(&s, &P, 1000, 2448);
	CHECK_EQ(s.fast_rexmits, 1);
	CHECK_EQ(s.applied, 3);

	/* a D-SACK for another segment, or one we could not read */
	a = ack0(9000, 0, 25);
	a.dsack = 1;
	a.dsack_known = 1;
	a.dsack_start = 5000;
	a.dsack_end = 6448;
	a.state = RN_STATE_RECOVERY;
	rn_on_ack(&s, &P, &a, &v);
	CHECK(!v.false_fr);
	a.dsack_known = 0;
	a.dsack_start = 1000;
	a.dsack_end = 2448;
	rn_on_ack(&s, &P, &a, &v);
	CHECK(!v.false_fr);

	/* the D-SACK for the retransmitted hole: kval doubles once */
	a.dsack_known = 1;
	rn_on_ack(&s, &P, &a, &v);
	CHECK(v.false_fr);
	CHECK_EQ(s.false_frs, 1);
	CHECK_EQ(s.kval, 400);
	rn_on_ack(&s, &P, &a, &v);
	CHECK(!v.false_fr);
	CHECK_EQ(s.kval, 400);

	/* each further false fast retransmit doubles it, up to the bound */
	while (s.kval < RN_KVAL_MAX) {
		u32 k = s.kval;

		rn_on_fast_retransmit(&s, &P, 1000, 2448);
		rn_on_ack(&s, &P, &a, &v);
		CHECK(v.false_fr);
		CHECK(s.kval == 2 * k || s.kval == RN_KVAL_MAX);
	}
	CHECK_EQ(s.kval, RN_KVAL_MAX);

	/* the next reordered train waits longer */
	a = dup(20000, 1, 10, 1, 0);
	rn_on_ack(&s, &P, &a, &v);
	CHECK_EQ(v.dupthresh, 300);

	/* a D-SACK after an RTO is ambiguous: no doubling */
	s = fresh();
	rn_on_fast_retransmit(&s, &P, 1000, 2448);
	rn_on_rto(&s, &P);
	a = ack0(9000, 0, 1);
	a.dsack = 1;
	a.dsack_known = 1;
	a.dsack_start = 1000;
	a.dsack_end = 2448;
	rn_on_ack(&s, &P, &a, &v);
	CHECK(!v.false_fr);
	CHECK(v.fallback_end);
	CHECK_EQ(s.kval, 0);
}

/* §IV-B1: up to one more cwnd while waiting, or dupthresh - 1 */
static void test_limited_transmit(void)
{
	struct rn_sender s = fresh();
	struct rn_verdict v;
	struct rn_ack a;
	u32 i;

	/* cwnd 10, dupthresh 12 > cwnd: 10 extra segments at most */
	for (i = 1; i < 12; i++) {
		a = dup(1000, i, i <= 10 ? 10 : 20 - i, i, 0);
		/* one new segment per SACKed one, sent after each ACK */
		a.packets_out = 10 + (i - 1 < 10 ? i - 1 : 10);
		rn_on_ack(&s, &P, &a, &v);
		CHECK_EQ(v.dupthresh, 12);
		/* packets_out + cwnd cap keeps in flight at 20 - sacked */
		CHECK_EQ(v.cwnd, i <= 10 ? 10 : 20 - i);
		CHECK_EQ(v.lt_capped, i > 10);
	}
	a = dup(1000, 12, 8, 12, 0);
	a.packets_out = 20;
	rn_on_ack(&s, &P, &a, &v);
	CHECK(v.recover);
	CHECK_EQ(v.cwnd, 0);	/* the stack enters recovery */
	CHECK_EQ(rn_lt_stop(&s), 10);	/* ssthresh() restores this */
	CHECK_EQ(rn_lt_stop(&s), 0);

	/* dupthresh below cwnd (rwnd-limited swnd): dupthresh - 1 extra */
	s = fresh();
	a = dup(1000, 1, 40, 1, 0);
	a.rwnd = 5;
	a.packets_out = 40;
	rn_on_ack(&s, &P, &a, &v);
	CHECK_EQ(v.dupthresh, 6);
	CHECK_EQ(s.lt_limit, 45);
	CHECK_EQ(rn_lt_cap(&s, 1), 40);
	CHECK_EQ(rn_lt_cap(&s, 44), 1);
	CHECK_EQ(rn_lt_cap(&s, 100), 1);

	/* the hole arrives: the held-back cwnd comes back */
	s = fresh();
	a = dup(1000, 1, 10, 1, 0);
	rn_on_ack(&s, &P, &a, &v);
	s.lt_cwnd = 13;		/* cong_avoid grew it meanwhile */
	a = ack0(30000, 0, 2);
	rn_on_ack(&s, &P, &a, &v);
	CHECK_EQ(v.cwnd, 13);
	CHECK(!(s.flags & RN_F_LT));

	/* partial progress to a new reordered hole: restore, restart */
	s = fresh();
	a = dup(1000, 5, 10, 5, 0);
	a.packets_out = 15;
	rn_on_ack(&s, &P, &a, &v);
	a = dup(3000, 3, 7, 1, 0);
	a.packets_out = 12;
	rn_on_ack(&s, &P, &a, &v);
	CHECK_EQ(v.new_train, RN_CLS_REORDER);
	CHECK_EQ(s.lt_cwnd, 10);	/* restored value, not the cap */
	CHECK_EQ(v.cwnd, 10);

	/* the train turns into a drop: restore */
	a = dup(3000, 4, 9, 1, 1);
	rn_on_ack(&s, &P, &a, &v);
	CHECK_EQ(v.cls, RN_CLS_DROP);
	CHECK_EQ(v.cwnd, 10);

	/* no cap in CWR, and none when the parameter is off */
	s = fresh();
	a = dup(1000, 1, 10, 1, 0);
	a.state = RN_STATE_CWR;
	rn_on_ack(&s, &P, &a, &v);
	CHECK_EQ(v.cls, RN_CLS_REORDER);
	CHECK_EQ(v.cwnd, 0);
	{
		struct rn_params q = P;

		q.lt_ext = 0;
		s = fresh();
		a = dup(1000, 1, 10, 1, 0);
		rn_on_ack(&s, &q, &a, &v);
		CHECK_EQ(v.cwnd, 0);
	}

	/* entering Recovery drops the cap without touching cwnd */
	s = fresh();
	a = dup(1000, 1, 10, 1, 0);
	rn_on_ack(&s, &P, &a, &v);
	a.state = RN_STATE_RECOVERY;
	rn_on_ack(&s, &P, &a, &v);
	CHECK_EQ(v.cwnd, 0);
	CHECK(!(s.flags & RN_F_LT));
}

/* A reordering event shorter than dupthresh never retransmits. */
static void test_reordering_sequence(void)
{
	struct rn_sender s = fresh();
	struct rn_verdict v;
	struct rn_ack a;
	u32 una = 0, ev, i, frs = 0;

	for (ev = 0; ev < 100; ev++) {
		u32 dist = 1 + ev % 30;	/* reordering distance */

		for (i = 1; i <= dist; i++) {
			a = dup(una, i, 40, i, 0);
			a.packets_out = 40 + i;
			rn_on_ack(&s, &P, &a, &v);
			frs += v.recover;
		}
		una += 1448 * (dist + 1);
		a = ack0(una, 0, 40);
		rn_on_ack(&s, &P, &a, &v);
	}
	CHECK_EQ(frs, 0);
	CHECK_EQ(s.dupthresh, 48);	/* 40 + 40 * 0.2 */
}

/* ---- RN-TCP-ES (seed 000 §4.7) ---- */

static void test_es_pairing(void)
{
	struct rn_es e = { 0 };
	u32 sample = 0;

	/* sent at 0, retransmitted at 100 ms, original ACKed at 130 ms,
	 * D-SACK for the copy at 210 ms: (130 + 110) / 2 = 120 ms
	 */
	rn_es_start(&e, 1000, 2448, 0);
	rn_es_retransmitted(&e, 100000);
	rn_es_acked(&e, 500, 120000);		/* not covered yet */
	CHECK_EQ(e.state, RN_ES_RETX);
	rn_es_acked(&e, 2448, 130000);
	CHECK_EQ(e.state, RN_ES_ACKED);
	CHECK(!rn_es_dsack(&e, 5000, 6000, 200000, &sample));
	CHECK(rn_es_dsack(&e, 1000, 2448, 210000, &sample));
	CHECK_EQ(sample, 120000);
	CHECK_EQ(e.state, RN_ES_IDLE);
	CHECK(!rn_es_dsack(&e, 1000, 2448, 220000, &sample));

	/* clock wrap */
	rn_es_start(&e, 1000, 2448, 0xfffff000);
	rn_es_retransmitted(&e, 0xfffff000 + 50000);
	rn_es_acked(&e, 3000, 0xfffff000 + 80000);
	CHECK(rn_es_dsack(&e, 1000, 2000, 0xfffff000 + 150000, &sample));
	CHECK_EQ(sample, (80000 + 100000) / 2);
}

static void test_es_karn(void)
{
	struct rn_es e = { 0 };
	u32 sample = 0;

	/* ACKed before the copy left: nothing to pair */
	rn_es_start(&e, 1000, 2448, 0);
	rn_es_acked(&e, 2448, 50000);
	CHECK_EQ(e.state, RN_ES_IDLE);
	rn_es_retransmitted(&e, 60000);
	CHECK_EQ(e.state, RN_ES_IDLE);

	/* no D-SACK: one copy was lost, no sample */
	rn_es_start(&e, 1000, 2448, 0);
	rn_es_retransmitted(&e, 100000);
	rn_es_acked(&e, 2448, 150000);
	rn_es_expire(&e, 200000, 500000);
	CHECK_EQ(e.state, RN_ES_ACKED);
	rn_es_expire(&e, 700000, 500000);
	CHECK_EQ(e.state, RN_ES_IDLE);
	CHECK(!rn_es_dsack(&e, 1000, 2448, 710000, &sample));

	/* never retransmitted: expires from the first send */
	rn_es_start(&e, 1000, 2448, 0);
	rn_es_expire(&e, 600000, 500000);
	CHECK_EQ(e.state, RN_ES_IDLE);

	/* inconsistent times are refused */
	rn_es_start(&e, 1000, 2448, 100000);
	rn_es_retransmitted(&e, 90000);
	CHECK_EQ(e.state, RN_ES_SENT);
	rn_es_start(&e, 1000, 1000, 0);
	CHECK_EQ(e.state, RN_ES_IDLE);
}

static void test_rtt_estimator(void)
{
	struct rn_rtt r = { 0 };

	rn_rtt_sample(&r, 100000, 200000);
	CHECK_EQ(r.srtt8, 800000);
	CHECK_EQ(r.mdev4, 200000);
	CHECK_EQ(r.rttvar4, 200000);

	/* +80 ms: srtt gains 10 ms, mdev 1/4 of (80 - 50) */
	rn_rtt_sample(&r, 180000, 200000);
	CHECK_EQ(r.srtt8, 880000);
	CHECK_EQ(r.mdev4, 230000);
	CHECK_EQ(r.mdev_max4, 230000);
	CHECK_EQ(r.rttvar4, 230000);

	/* a smaller sample: mdev gain 1/32 */
	rn_rtt_sample(&r, 10000, 200000);
	CHECK_EQ(r.srtt8, 880000 - 100000);
	CHECK_EQ(r.mdev4, 230000 + (100000 - 57500) / 8);
	CHECK_EQ(r.rttvar4, 235312);

	/* converges */
	{
		int i;

		for (i = 0; i < 200; i++)
			rn_rtt_sample(&r, 120000, 200000);
		CHECK((r.srtt8 >> 3) >= 119990 && (r.srtt8 >> 3) <= 120010);
	}
	/* zero sample counts as 1 us */
	r = (struct rn_rtt){ 0 };
	rn_rtt_sample(&r, 0, 0);
	CHECK_EQ(r.srtt8, 8);
}

int main(void)
{
	RUN(test_kval);
	RUN(test_dupthresh);
	RUN(test_parse_plain);
	RUN(test_parse_not_ack_and_bad);
	RUN(test_parse_sack);
	RUN(test_parse_malformed_options);
	RUN(test_parse_fuzz);
	RUN(test_latch);
	RUN(test_reorder_train);
	RUN(test_drop_train);
	RUN(test_one_clear_bit_makes_a_drop);
	RUN(test_unknown_bits);
	RUN(test_ece);
	RUN(test_rto_fallback);
	RUN(test_rto_during_recovery);
	RUN(test_acked_still_queued);
	RUN(test_undo_ends_fallback);
	RUN(test_fallback_without_evidence);
	RUN(test_false_fast_retransmit);
	RUN(test_limited_transmit);
	RUN(test_reordering_sequence);
	RUN(test_es_pairing);
	RUN(test_es_karn);
	RUN(test_rtt_estimator);
	return unit_report("test_rn_sender_core");
}
