// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the EPDN gateway core (sch_epdn/epdn_core.c): record,
 * merge with wraparound, collisions, deletion, eviction when full,
 * ageing, resize, the option codec, header parsing, the stamp decision
 * and EPDN-TTL along a path.
 */
#include "tests/unit/unit.h"
#include "sch_epdn/epdn_core.c"

#include <arpa/inet.h>

static struct epdn_rec *new_slots(u32 flows)
{
	struct epdn_rec *s = calloc(epdn_table_slots(flows), sizeof(*s));

	if (!s) {
		perror("calloc");
		exit(2);
	}
	return s;
}

static struct epdn_key key_n(u32 n)
{
	struct epdn_key k = {
		.saddr = htonl(0x0a000001),
		.daddr = htonl(0x0a000002 + (n >> 16)),
		.sport = htons((u16)n),
		.dport = htons(5001),
	};

	return k;
}

static struct epdn_range rng(u32 min, u32 max)
{
	struct epdn_range r = { .min = min, .max = max };

	return r;
}

/* Every live record is reachable by lookup, and count matches. */
static int table_consistent(struct epdn_table *t)
{
	u32 i, live = 0;

	for (i = 0; i < t->cap; i++) {
		struct epdn_rec *rec = &t->slot[i];

		if (rec->stamp == 0)
			continue;
		live++;
		if (epdn_table_find(t, &rec->key) != rec)
			return 0;
	}
	return live == t->count;
}

static void test_seq_wrap(void)
{
	struct epdn_range a = rng(0xfffffff0, 0xfffffffa);
	struct epdn_range b = rng(0x5, 0x20);

	CHECK(epdn_seq_before(0xfffffff0, 0x10));
	CHECK(!epdn_seq_before(0x10, 0xfffffff0));
	CHECK_EQ(epdn_seq_min(0xfffffff0, 0x10), 0xfffffff0);
	CHECK_EQ(epdn_seq_max(0xfffffff0, 0x10), 0x10);
	epdn_range_merge(&a, &b);
	CHECK_EQ(a.min, 0xfffffff0);
	CHECK_EQ(a.max, 0x20);
}

static void test_record_new_and_merge(void)
{
	struct epdn_rec *s = new_slots(64);
	struct epdn_table t;
	struct epdn_key k = key_n(1);
	struct epdn_range r;
	struct epdn_rec *rec;

	epdn_table_init(&t, s, 64, 0x1234);
	CHECK(!epdn_table_find(&t, &k));
	r = rng(1000, 2447);
	CHECK_EQ(epdn_table_record(&t, &k, &r, 10), EPDN_REC_NEW);
	rec = epdn_table_find(&t, &k);
	CHECK(rec);
	CHECK_EQ(rec->min, 1000);
	CHECK_EQ(rec->max, 2447);
	CHECK_EQ(rec->stamp, 10);

	/* A later drop: E:max = max(E:max, P:n); timestamp updated. */
	r = rng(5344, 6791);
	CHECK_EQ(epdn_table_record(&t, &k, &r, 20), EPDN_REC_MERGED);
	CHECK_EQ(rec->min, 1000);
	CHECK_EQ(rec->max, 6791);
	CHECK_EQ(rec->stamp, 20);

	/* A dropped packet with P:min below E:min: E:min = min(..). */
	r = rng(500, 999);
	epdn_table_record(&t, &k, &r, 30);
	CHECK_EQ(rec->min, 500);
	CHECK_EQ(rec->max, 6791);
	CHECK_EQ(t.count, 1);
	CHECK_EQ(t.recorded, 3);
	CHECK_EQ(t.rec_merged, 2);

	/* Stamp time 0 never makes a free slot. */
	k = key_n(2);
	epdn_table_record(&t, &k, &r, 0);
	CHECK(epdn_table_find(&t, &k));
	CHECK_EQ(t.count, 2);
	free(s);
}

static void test_merge_wraparound(void)
{
	struct epdn_rec *s = new_slots(16);
	struct epdn_table t;
	struct epdn_key k = key_n(7);
	struct epdn_range r = rng(0xfffff000, 0xfffff5a7);
	struct epdn_rec *rec;

	epdn_table_init(&t, s, 16, 99);
	epdn_table_record(&t, &k, &r, 1);
	r = rng(0x100, 0x6a7);		/* after the wrap */
	epdn_table_record(&t, &k, &r, 2);
	rec = epdn_table_find(&t, &k);
	CHECK_EQ(rec->min, 0xfffff000);
	CHECK_EQ(rec->max, 0x6a7);
	r = rng(0xffffe000, 0xffffe5a7);	/* before the old min */
	epdn_table_record(&t, &k, &r, 3);
	CHECK_EQ(rec->min, 0xffffe000);
	CHECK_EQ(rec->max, 0x6a7);
	free(s);
}

/* Two keys with the same home slot stay two records. */
static void test_collision_never_merges(void)
{
	struct epdn_rec *s = new_slots(16);
	struct epdn_table t;
	struct epdn_key a = key_n(1), b;
	struct epdn_range ra = rng(100, 199), rb = rng(7000, 7099);
	u32 home_a, n;

	epdn_table_init(&t, s, 16, 42);
	home_a = epdn_home(&t, &a);
	for (n = 2; ; n++) {
		b = key_n(n);
		if (epdn_home(&t, &b) == home_a)
			break;
	}
	epdn_table_record(&t, &a, &ra, 1);
	epdn_table_record(&t, &b, &rb, 2);
	CHECK_EQ(t.count, 2);
	CHECK_EQ(epdn_table_find(&t, &a)->min, 100);
	CHECK_EQ(epdn_table_find(&t, &a)->max, 199);
	CHECK_EQ(epdn_table_find(&t, &b)->min, 7000);
	CHECK_EQ(epdn_table_find(&t, &b)->max, 7099);

	/* Removing the first of the cluster keeps the second reachable. */
	epdn_table_remove(&t, epdn_table_find(&t, &a));
	CHECK(!epdn_table_find(&t, &a));
	CHECK(epdn_table_find(&t, &b));
	CHECK_EQ(epdn_table_find(&t, &b)->min, 7000);
	CHECK(table_consistent(&t));
	free(s);
}

/* Random inserts and removals against a reference set. */
static void test_remove_random(void)
{
	enum { FLOWS = 256, KEYS = 400, STEPS = 20000 };
	struct epdn_rec *s = new_slots(FLOWS);
	static int present[KEYS];
	struct epdn_table t;
	u32 i, x = 12345, bad = 0;

	epdn_table_init(&t, s, FLOWS, 7);
	for (i = 0; i < STEPS; i++) {
		u32 n;
		struct epdn_key k;

		x = x * 1103515245 + 12345;
		n = (x >> 8) % KEYS;
		k = key_n(n);
		if (present[n]) {
			epdn_table_remove(&t, epdn_table_find(&t, &k));
			present[n] = 0;
		} else if (t.count < FLOWS) {
			struct epdn_range r = rng(n, n + 10);

			epdn_table_record(&t, &k, &r, i + 1);
			present[n] = 1;
		}
	}
	for (i = 0; i < KEYS; i++) {
		struct epdn_key k = key_n(i);
		struct epdn_rec *rec = epdn_table_find(&t, &k);

		if (!!rec != present[i] || (rec && rec->min != i))
			bad++;
	}
	CHECK_EQ(bad, 0);
	CHECK(table_consistent(&t));
	CHECK_EQ(t.evicted, 0);
	free(s);
}

/* Brute-force oldest live stamp. */
static u32 oldest_stamp(struct epdn_table *t)
{
	u32 i, best = 0;
	int found = 0;

	for (i = 0; i < t->cap; i++) {
		if (!t->slot[i].stamp)
			continue;
		if (!found || t->slot[i].stamp < best)
			best = t->slot[i].stamp;
		found = 1;
	}
	return best;
}

static void test_evict_oldest_when_full(void)
{
	enum { FLOWS = 16 };
	struct epdn_rec *s = new_slots(FLOWS);
	struct epdn_table t;
	struct epdn_range r = rng(1, 2);
	struct epdn_key k;
	u32 i;

	epdn_table_init(&t, s, FLOWS, 3);
	for (i = 0; i < FLOWS; i++) {
		k = key_n(i);
		epdn_table_record(&t, &k, &r, 100 + i);
	}
	CHECK_EQ(t.count, FLOWS);
	CHECK_EQ(t.evicted, 0);

	/* Full: a new flow evicts the oldest record, key 0. */
	k = key_n(1000);
	epdn_table_record(&t, &k, &r, 200);
	CHECK_EQ(t.count, FLOWS);
	CHECK_EQ(t.evicted, 1);
	k = key_n(0);
	CHECK(!epdn_table_find(&t, &k));
	k = key_n(1000);
	CHECK(epdn_table_find(&t, &k));

	/* A merge refreshes key 1, so key 2 is the next victim. */
	k = key_n(1);
	epdn_table_record(&t, &k, &r, 201);
	k = key_n(1001);
	epdn_table_record(&t, &k, &r, 202);
	k = key_n(1);
	CHECK(epdn_table_find(&t, &k));
	k = key_n(2);
	CHECK(!epdn_table_find(&t, &k));
	CHECK_EQ(t.evicted, 2);
	CHECK(table_consistent(&t));
	free(s);
}

/* Many evictions (several victim refills) always take the true oldest. */
static void test_evict_matches_bruteforce(void)
{
	enum { FLOWS = 64, ROUNDS = 3000 };
	struct epdn_rec *s = new_slots(FLOWS);
	struct epdn_table t;
	struct epdn_range r = rng(1, 2);
	u32 i, x = 99, wrong = 0;

	epdn_table_init(&t, s, FLOWS, 11);
	for (i = 0; i < ROUNDS; i++) {
		struct epdn_key k;
		u32 now = 1000 + i;

		x = x * 1103515245 + 12345;
		/* Mix merges of live flows, removals and new flows. */
		if ((x >> 16) % 4 == 0 && t.count) {
			u32 j = (x >> 4) % t.cap;

			while (!t.slot[j].stamp)
				j = (j + 1) % t.cap;
			if ((x >> 20) & 1)
				epdn_table_record(&t, &t.slot[j].key, &r, now);
			else
				epdn_table_remove(&t, &t.slot[j]);
			continue;
		}
		k = key_n(10000 + i);
		if (t.count == FLOWS) {
			u32 want = oldest_stamp(&t);
			u64 ev = t.evicted;

			epdn_table_record(&t, &k, &r, now);
			/* The victim had the oldest stamp: none older is left. */
			if (t.evicted != ev + 1 || oldest_stamp(&t) < want)
				wrong++;
		} else {
			epdn_table_record(&t, &k, &r, now);
		}
	}
	CHECK_EQ(wrong, 0);
	CHECK(t.evicted > EPDN_VICTIMS * 3);
	CHECK(table_consistent(&t));
	free(s);
}

static void test_ageing(void)
{
	enum { FLOWS = 128 };
	struct epdn_rec *s = new_slots(FLOWS);
	struct epdn_table t;
	struct epdn_range r = rng(1, 2);
	u32 i, removed;

	epdn_table_init(&t, s, FLOWS, 5);
	for (i = 0; i < 100; i++) {
		struct epdn_key k = key_n(i);

		/* Even keys idle since 100, odd keys active at 900. */
		epdn_table_record(&t, &k, &r, i % 2 ? 900 : 100);
	}
	/* Idle 500 at now 1000: the even half is older than 500. */
	removed = epdn_table_age(&t, 1000, 500, t.cap);
	CHECK_EQ(removed, 50);
	CHECK_EQ(t.count, 50);
	CHECK_EQ(t.aged, 50);
	for (i = 0; i < 100; i++) {
		struct epdn_key k = key_n(i);

		CHECK_EQ(!!epdn_table_find(&t, &k), i % 2);
	}
	CHECK(table_consistent(&t));

	/* Exactly idle old is kept; one tick more goes. */
	CHECK_EQ(epdn_table_age(&t, 1400, 500, t.cap), 0);
	CHECK_EQ(epdn_table_age(&t, 1401, 500, t.cap), 50);
	CHECK_EQ(t.count, 0);

	/* Partial scans: budgets that add up to a full pass clean all. */
	for (i = 0; i < 100; i++) {
		struct epdn_key k = key_n(i);

		epdn_table_record(&t, &k, &r, 2000);
	}
	removed = 0;
	for (i = 0; i < 8; i++)
		removed += epdn_table_age(&t, 5000, 500, t.cap / 8 + 1);
	CHECK_EQ(removed, 100);
	CHECK_EQ(t.count, 0);
	/* Clock wrap: records stamped just before 2^32 age correctly. */
	{
		struct epdn_key k = key_n(1);

		epdn_table_record(&t, &k, &r, 0xfffffff0);
		CHECK_EQ(epdn_table_age(&t, 0x10, 0x40, t.cap), 0);
		CHECK_EQ(epdn_table_age(&t, 0x40, 0x40, t.cap), 1);
	}
	free(s);
}

static void test_trim_and_move(void)
{
	struct epdn_rec *s1 = new_slots(128), *s2 = new_slots(16);
	struct epdn_table a, b;
	struct epdn_range r = rng(1, 2);
	u32 i, kept = 0;

	epdn_table_init(&a, s1, 128, 1);
	epdn_table_init(&b, s2, 16, 2);
	for (i = 0; i < 100; i++) {
		struct epdn_key k = key_n(i);

		epdn_table_record(&a, &k, &r, 1000 + i * 3 / 2);
	}
	/* Shrink to 16: the 16 newest survive (keys 84..99). */
	epdn_table_move(&b, &a, 1200);
	CHECK_EQ(b.count, 16);
	CHECK_EQ(a.count, 0);
	CHECK_EQ(b.evicted, 84);
	CHECK_EQ(b.recorded, 100);
	for (i = 0; i < 100; i++) {
		struct epdn_key k = key_n(i);

		if (epdn_table_find(&b, &k)) {
			kept++;
			CHECK(i >= 84);
		}
	}
	CHECK_EQ(kept, 16);
	CHECK(table_consistent(&b));

	/* Growing moves everything. */
	epdn_table_init(&a, s1, 128, 9);
	epdn_table_move(&a, &b, 1200);
	CHECK_EQ(a.count, 16);
	CHECK_EQ(b.count, 0);
	CHECK(table_consistent(&a));

	/* Trim with equal stamps evicts exactly the excess. */
	epdn_table_clear(&a);
	for (i = 0; i < 40; i++) {
		struct epdn_key k = key_n(i);

		epdn_table_record(&a, &k, &r, 50);
	}
	epdn_table_trim(&a, 25, 60);
	CHECK_EQ(a.count, 25);
	CHECK(table_consistent(&a));
	free(s1);
	free(s2);
}

static void test_bytes_per_record(void)
{
	CHECK_EQ(sizeof(struct epdn_rec), 24);
	CHECK(epdn_record_bytes(65536) <= 28);
	CHECK(epdn_record_bytes(16) <= 28);
	CHECK(epdn_table_slots(16) > 16);
	CHECK(epdn_table_slots(1) > 1);
}

static void test_option_codec(void)
{
	struct epdn_opt o = { .ttl = 61, .flags = EPDN_F_HOST,
			      .min = 0x01020304, .max = 0xa0b0c0d0 };
	struct epdn_opt d;
	u8 buf[EPDN_OPT_LEN];
	static const u8 want[EPDN_OPT_LEN] = {
		0x9e, 12, 61, 0x12, 1, 2, 3, 4, 0xa0, 0xb0, 0xc0, 0xd0,
	};

	epdn_opt_encode(buf, &o);
	CHECK(memcmp(buf, want, sizeof(want)) == 0);
	CHECK_EQ(epdn_opt_decode(buf, sizeof(buf), &d), EPDN_OK);
	CHECK_EQ(d.ttl, 61);
	CHECK_EQ(d.flags, EPDN_F_HOST);
	CHECK_EQ(d.min, 0x01020304);
	CHECK_EQ(d.max, 0xa0b0c0d0);

	CHECK_EQ(epdn_opt_decode(buf, 11, &d), EPDN_EBADMSG);
	buf[1] = 8;
	CHECK_EQ(epdn_opt_decode(buf, 12, &d), EPDN_EBADMSG);
	buf[1] = 12;
	buf[3] = 0x22;		/* version 2 */
	CHECK_EQ(epdn_opt_decode(buf, 12, &d), EPDN_EBADMSG);
	buf[3] = 0x12;
	buf[0] = 0x1e;		/* another experiment type */
	CHECK_EQ(epdn_opt_decode(buf, 12, &d), EPDN_EBADMSG);
}

static void test_option_merge(void)
{
	struct epdn_opt o = { .ttl = 64, .flags = EPDN_F_EMPTY | EPDN_F_HOST };
	struct epdn_range r = rng(3000, 4447), got;

	CHECK(!epdn_opt_range(&o, &got));
	epdn_opt_add_range(&o, &r, 0);
	CHECK_EQ(o.flags, EPDN_F_HOST);
	CHECK_EQ(o.min, 3000);
	CHECK_EQ(o.max, 4447);
	CHECK(epdn_opt_range(&o, &got));
	CHECK_EQ(got.min, 3000);

	/* Min of mins, max of maxes, across the wrap. */
	o.min = 0xfffff000;
	o.max = 0xfffff5a7;
	r = rng(0x10, 0x5b7);
	epdn_opt_add_range(&o, &r, EPDN_F_V2);
	CHECK_EQ(o.min, 0xfffff000);
	CHECK_EQ(o.max, 0x5b7);
	CHECK_EQ(o.flags, EPDN_F_HOST | EPDN_F_V2);

	epdn_opt_new(&o, 57, &r, EPDN_F_EMPTY | EPDN_F_V2);
	CHECK_EQ(o.ttl, 57);
	CHECK_EQ(o.flags, EPDN_F_V2);
	CHECK_EQ(o.min, 0x10);
}

static void test_option_find(void)
{
	u8 opts[40];
	u8 epdn[EPDN_OPT_LEN];
	struct epdn_opt o = { .ttl = 1 };

	epdn_opt_encode(epdn, &o);
	memcpy(opts, epdn, sizeof(epdn));
	CHECK_EQ(epdn_opt_find(opts, 12), 0);

	/* NOP, record-route (type 7, length 7), then EPDN. */
	memset(opts, 0, sizeof(opts));
	opts[0] = 1;
	opts[1] = 7;
	opts[2] = 7;
	opts[3] = 4;
	memcpy(opts + 8, epdn, sizeof(epdn));
	CHECK_EQ(epdn_opt_find(opts, 20), 8);
	/* EOL before it ends the list. */
	opts[0] = 0;
	CHECK_EQ(epdn_opt_find(opts, 20), EPDN_ENOENT);
	/* Only a foreign option. */
	opts[0] = 1;
	CHECK_EQ(epdn_opt_find(opts, 8), EPDN_ENOENT);
	/* Length running past the end, zero length, lone type byte. */
	opts[2] = 30;
	CHECK_EQ(epdn_opt_find(opts, 20), EPDN_EBADMSG);
	opts[2] = 0;
	CHECK_EQ(epdn_opt_find(opts, 20), EPDN_EBADMSG);
	opts[0] = 7;
	CHECK_EQ(epdn_opt_find(opts, 1), EPDN_EBADMSG);
	/* An EPDN type with the wrong length is malformed. */
	memcpy(opts, epdn, sizeof(epdn));
	opts[1] = 8;
	CHECK_EQ(epdn_opt_find(opts, 12), EPDN_EBADMSG);
}

static u32 build_ip(u8 *h, u32 tot_len, u8 ttl, u8 proto, u32 optlen)
{
	memset(h, 0, 60);
	h[0] = 0x40 | ((20 + optlen) / 4);
	h[2] = (u8)(tot_len >> 8);
	h[3] = (u8)tot_len;
	h[8] = ttl;
	h[9] = proto;
	h[12] = 10;
	h[15] = 1;
	h[16] = 10;
	h[19] = 2;
	return 20 + optlen;
}

static void test_parse_ipv4(void)
{
	u8 h[60];
	struct epdn_ip ip;
	struct epdn_opt o = { .ttl = 50, .min = 1, .max = 2 };

	build_ip(h, 1500, 63, 6, 0);
	CHECK_EQ(epdn_parse_ipv4(h, 20, 1500, false, &ip), EPDN_OK);
	CHECK_EQ(ip.hdr_len, 20);
	CHECK_EQ(ip.l3_len, 1500);
	CHECK_EQ(ip.proto, 6);
	CHECK_EQ(ip.ttl, 63);
	CHECK(!ip.frag);
	CHECK_EQ(ip.opt_off, EPDN_ENOENT);
	CHECK_EQ(ip.saddr, htonl(0x0a000001));

	/* Truncated: tot_len beyond the packet; header cut short. */
	CHECK_EQ(epdn_parse_ipv4(h, 20, 1400, false, &ip), EPDN_EBADMSG);
	CHECK_EQ(epdn_parse_ipv4(h, 19, 1500, false, &ip), EPDN_EBADMSG);
	/* GSO: length from the packet even when tot_len is 0. */
	build_ip(h, 0, 63, 6, 0);
	CHECK_EQ(epdn_parse_ipv4(h, 20, 64000, true, &ip), EPDN_OK);
	CHECK_EQ(ip.l3_len, 64000);
	CHECK_EQ(epdn_parse_ipv4(h, 20, 64000, false, &ip), EPDN_EBADMSG);
	/* Version 6, ihl 4, tot_len below ihl. */
	build_ip(h, 1500, 63, 6, 0);
	h[0] = 0x65;
	CHECK_EQ(epdn_parse_ipv4(h, 20, 1500, false, &ip), EPDN_EBADMSG);
	h[0] = 0x44;
	CHECK_EQ(epdn_parse_ipv4(h, 20, 1500, false, &ip), EPDN_EBADMSG);
	build_ip(h, 10, 63, 6, 0);
	CHECK_EQ(epdn_parse_ipv4(h, 20, 1500, false, &ip), EPDN_EBADMSG);
	/* Fragments: MF, or an offset. */
	build_ip(h, 1500, 63, 6, 0);
	h[6] = 0x20;
	CHECK_EQ(epdn_parse_ipv4(h, 20, 1500, false, &ip), EPDN_OK);
	CHECK(ip.frag);
	h[6] = 0x40;		/* DF alone is not a fragment */
	epdn_parse_ipv4(h, 20, 1500, false, &ip);
	CHECK(!ip.frag);
	h[6] = 0;
	h[7] = 1;
	epdn_parse_ipv4(h, 20, 1500, false, &ip);
	CHECK(ip.frag);

	/* Header with the EPDN option. */
	build_ip(h, 1512, 63, 6, 12);
	epdn_opt_encode(h + 20, &o);
	CHECK_EQ(epdn_parse_ipv4(h, 32, 1512, false, &ip), EPDN_OK);
	CHECK_EQ(ip.hdr_len, 32);
	CHECK_EQ(ip.opt_off, 20);
	/* ihl beyond what was copied. */
	CHECK_EQ(epdn_parse_ipv4(h, 24, 1512, false, &ip), EPDN_EBADMSG);
	/* A version-2 EPDN option is foreign: no offset, still OK. */
	h[23] = 0x20;
	CHECK_EQ(epdn_parse_ipv4(h, 32, 1512, false, &ip), EPDN_OK);
	CHECK_EQ(ip.opt_off, EPDN_ENOENT);
	/* Malformed option list. */
	h[21] = 40;
	CHECK_EQ(epdn_parse_ipv4(h, 32, 1512, false, &ip), EPDN_EBADMSG);
}

static void test_parse_tcp(void)
{
	u8 th[20] = { 0 };
	struct epdn_tcp tcp;
	struct epdn_range r = { 0, 0 };

	th[0] = 0x13;
	th[1] = 0x89;		/* sport 5001 */
	th[2] = 0x00;
	th[3] = 0x50;		/* dport 80 */
	th[4] = 0xff;
	th[5] = 0xff;
	th[6] = 0xff;
	th[7] = 0x00;		/* seq 0xffffff00 */
	th[12] = 0x80;		/* doff 8: 32-byte header */
	th[13] = 0x10;		/* ACK */
	CHECK_EQ(epdn_parse_tcp(th, 20, 32 + 1448, &tcp), EPDN_OK);
	CHECK_EQ(tcp.hdr_len, 32);
	CHECK_EQ(tcp.sport, htons(5001));
	CHECK_EQ(tcp.dport, htons(80));
	CHECK_EQ(tcp.seq, 0xffffff00);
	CHECK_EQ(tcp.end_seq, 0xffffff00 + 1448);
	CHECK(epdn_tcp_range(&tcp, &r));
	CHECK_EQ(r.min, 0xffffff00);
	CHECK_EQ(r.max, (u32)(0xffffff00 + 1447));	/* wraps */

	/* Pure ACK: no sequence space, nothing to record. */
	CHECK_EQ(epdn_parse_tcp(th, 20, 32, &tcp), EPDN_OK);
	CHECK(!epdn_tcp_range(&tcp, &r));
	/* SYN and FIN count one each. */
	th[13] = 0x03;
	epdn_parse_tcp(th, 20, 32, &tcp);
	CHECK_EQ(tcp.end_seq - tcp.seq, 2);
	/* A GSO packet: its whole payload. */
	th[13] = 0x10;
	epdn_parse_tcp(th, 20, 32 + 10 * 1448, &tcp);
	CHECK(epdn_tcp_range(&tcp, &r));
	CHECK_EQ(r.max - r.min + 1, 10 * 1448);
	/* doff below 5, doff beyond the segment, short copies. */
	th[12] = 0x40;
	CHECK_EQ(epdn_parse_tcp(th, 20, 100, &tcp), EPDN_EBADMSG);
	th[12] = 0xf0;
	CHECK_EQ(epdn_parse_tcp(th, 20, 40, &tcp), EPDN_EBADMSG);
	th[12] = 0x50;
	CHECK_EQ(epdn_parse_tcp(th, 19, 40, &tcp), EPDN_EBADMSG);
	CHECK_EQ(epdn_parse_tcp(th, 20, 19, &tcp), EPDN_EBADMSG);
}

static void test_stamp_decide(void)
{
	CHECK_EQ(epdn_stamp_decide(20, false, false, 1488, 1500),
		 EPDN_ACT_INSERT);
	CHECK_EQ(epdn_stamp_decide(20, false, false, 1489, 1500),
		 EPDN_ACT_DEFER_MTU);
	CHECK_EQ(epdn_stamp_decide(20, false, false, 1500, 1500),
		 EPDN_ACT_DEFER_MTU);
	/* A carried option merges in place, whatever the size. */
	CHECK_EQ(epdn_stamp_decide(32, true, false, 1500, 1500),
		 EPDN_ACT_MERGE);
	CHECK_EQ(epdn_stamp_decide(32, true, true, 64000, 1500),
		 EPDN_ACT_MERGE);
	CHECK_EQ(epdn_stamp_decide(24, false, false, 100, 1500),
		 EPDN_ACT_DEFER_OPTS);
	CHECK_EQ(epdn_stamp_decide(20, false, true, 64000, 1500),
		 EPDN_ACT_DEFER_GSO);
}

/*
 * EPDN-TTL along a path (docs/epdn.md): each router's ip_forward lowers
 * TTL before the qdisc; the epdn qdisc then lowers EPDN-TTL of forwarded
 * packets by one.
 */
static u8 run_path(u8 ttl0, const int *epdn, int hops, int host_origin,
		   u8 *ttl_out)
{
	u8 ttl = ttl0, ettl = ttl0;
	int have = host_origin, h;

	for (h = 0; h < hops; h++) {
		ttl--;				/* ip_forward */
		if (!epdn[h])
			continue;
		if (have) {
			ettl = epdn_ttl_hop(ettl);
		} else {
			/* First EPDN router to stamp: EPDN-TTL = TTL. */
			ettl = ttl;
			have = 1;
		}
	}
	*ttl_out = ttl;
	return ettl;
}

static void test_epdn_ttl_path(void)
{
	static const int all[4] = { 1, 1, 1, 1 };
	static const int one_legacy[4] = { 1, 0, 1, 1 };
	static const int legacy_first[4] = { 0, 1, 1, 1 };
	u8 ttl, ettl;

	ettl = run_path(64, all, 4, 1, &ttl);
	CHECK_EQ(ettl, ttl);
	ettl = run_path(64, one_legacy, 4, 1, &ttl);
	CHECK(ettl != ttl);
	/* Sender-originated: a legacy first hop is caught. */
	ettl = run_path(64, legacy_first, 4, 1, &ttl);
	CHECK(ettl != ttl);
	/* Router-originated: only the path after the stamper is proven. */
	ettl = run_path(64, legacy_first, 4, 0, &ttl);
	CHECK_EQ(ettl, ttl);
	ettl = run_path(64, one_legacy, 4, 0, &ttl);
	CHECK(ettl != ttl);
	CHECK_EQ(epdn_ttl_hop(0), 0);
	CHECK_EQ(epdn_ttl_hop(1), 0);
}

/* A gateway's life: drops of one flow, then the next packet is stamped. */
static void test_gateway_sequence(void)
{
	struct epdn_rec *s = new_slots(16);
	struct epdn_table t;
	struct epdn_key k = key_n(3);
	struct epdn_range r, pr;
	struct epdn_opt carried = { .ttl = 60, .min = 100, .max = 199 };
	struct epdn_opt o;
	struct epdn_rec *rec;

	epdn_table_init(&t, s, 16, 77);
	/* Packet 4 and 5 dropped; packet 5 carried a downstream option. */
	r = rng(4000, 4999);
	epdn_table_record(&t, &k, &r, 1);
	r = rng(5000, 5999);
	CHECK(epdn_opt_range(&carried, &pr));
	epdn_range_merge(&r, &pr);
	epdn_table_record(&t, &k, &r, 2);
	rec = epdn_table_find(&t, &k);
	CHECK_EQ(rec->min, 100);
	CHECK_EQ(rec->max, 5999);

	/* Packet 7 leaves: new option, record deleted. */
	CHECK_EQ(epdn_stamp_decide(20, false, false, 1040, 1500),
		 EPDN_ACT_INSERT);
	epdn_opt_new(&o, 63, &(struct epdn_range){ rec->min, rec->max }, 0);
	epdn_table_remove(&t, rec);
	CHECK_EQ(o.min, 100);
	CHECK_EQ(o.max, 5999);
	CHECK(!epdn_table_find(&t, &k));
	CHECK_EQ(t.count, 0);
	free(s);
}

int main(void)
{
	RUN(test_seq_wrap);
	RUN(test_record_new_and_merge);
	RUN(test_merge_wraparound);
	RUN(test_collision_never_merges);
	RUN(test_remove_random);
	RUN(test_evict_oldest_when_full);
	RUN(test_evict_matches_bruteforce);
	RUN(test_ageing);
	RUN(test_trim_and_move);
	RUN(test_bytes_per_record);
	RUN(test_option_codec);
	RUN(test_option_merge);
	RUN(test_option_find);
	RUN(test_parse_ipv4);
	RUN(test_parse_tcp);
	RUN(test_stamp_decide);
	RUN(test_epdn_ttl_path);
	RUN(test_gateway_sequence);
	return unit_report("test_epdn_core");
}
