// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the EPDN gateway core (sch_epdn/epdn_core.c): the
 * set-associative record table against a model (record, merge with
 * wraparound and the span bound, collisions, per-set eviction, lazy expiry,
 * the sweep, resize), the keyed hash, the option codec, header parsing,
 * the stamp decision and EPDN-TTL along a path, and the fail-safe rules:
 * a record outlives its stamps, and a set that gave up a record in force
 * (or a resize that dropped records) makes its flows UNKNOWN for idle.
 */
#include "tests/unit/unit.h"
#include "sch_epdn/epdn_core.c"
#include "tests/unit/epdn_check.h"

#include <arpa/inet.h>
#include <math.h>

/* The table's whole block: slots and lost stamps. */
static struct epdn_rec *new_slots(u32 flows)
{
	return table_block(flows);
}

/* A segment far from every record here: it never starts a hold. */
static const struct epdn_range far_pkt = { 0xc0000000, 0xc00003e7 };

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

static struct epdn_hkey hkey_n(u64 n)
{
	struct epdn_hkey k = { .k0 = n * 0x9e3779b97f4a7c15ULL, .k1 = ~n };

	return k;
}

static void init(struct epdn_table *t, struct epdn_rec *s, u32 flows,
		 u32 idle, u64 seed)
{
	struct epdn_hkey k = hkey_n(seed);

	epdn_table_init(t, s, lost_of(s, flows), flows, idle, &k);
}

/* Keys 0.. that hash into set @set: fills @out with @n of them. */
static void keys_in_set(const struct epdn_table *t, u32 set, u32 n,
			struct epdn_key *out)
{
	u32 i, got = 0;

	for (i = 0; got < n; i++) {
		struct epdn_key k = key_n(i);

		if (set_of(t, &k) == set)
			out[got++] = k;
	}
}

static void test_seq_wrap(void)
{
	struct epdn_range a = rng(0xfffffff0, 0xfffffffa);
	struct epdn_range b = rng(0x5, 0x20);

	CHECK(sat_before(0xfffffff0, 0x10));
	CHECK(!sat_before(0x10, 0xfffffff0));
	CHECK_EQ(sat_seq_min(0xfffffff0, 0x10), 0xfffffff0);
	CHECK_EQ(sat_seq_max(0xfffffff0, 0x10), 0x10);
	CHECK(epdn_range_merge(&a, &b));
	CHECK_EQ(a.min, 0xfffffff0);
	CHECK_EQ(a.max, 0x20);
}

/* A union spanning EPDN_SPAN_MAX or more is refused, whatever the order. */
static void test_span_bound(void)
{
	struct epdn_range a = rng(0, 99), b = rng(EPDN_SPAN_MAX - 100,
						     EPDN_SPAN_MAX - 1);
	struct epdn_range far = rng(0x80000000u, 0x80000010u);
	struct epdn_range wide = rng(10, 10 + EPDN_SPAN_MAX);

	CHECK(epdn_range_merge(&a, &b));
	CHECK_EQ(a.max - a.min, EPDN_SPAN_MAX - 1);
	a = rng(0, 99);
	b = rng(EPDN_SPAN_MAX - 100, EPDN_SPAN_MAX);
	CHECK(!epdn_range_merge(&a, &b));
	CHECK_EQ(a.min, 0);
	CHECK_EQ(a.max, 99);
	CHECK(!epdn_range_merge(&a, &far));	/* 2^31 away: unordered */
	CHECK(!epdn_range_merge(&far, &a));
	CHECK(!epdn_range_valid(&wide));
	CHECK(!epdn_range_merge(&a, &wide));
	CHECK(!epdn_range_merge(&wide, &a));
	CHECK_EQ(a.max, 99);
}

static void test_record_new_and_merge(void)
{
	struct epdn_rec *s = new_slots(64);
	struct epdn_key k = key_n(1);
	struct epdn_range r;
	struct epdn_table t;
	struct epdn_rec *rec;

	init(&t, s, 64, 1000, 0x1234);
	CHECK_EQ(t.cap, 64);
	CHECK(!epdn_table_find(&t, &k, 0));
	r = rng(1000, 1447);
	CHECK_EQ(epdn_table_record(&t, &k, &r, 10), EPDN_REC_NEW);
	rec = epdn_table_find(&t, &k, 10);
	CHECK(rec);
	CHECK_EQ(rec->min, 1000);
	CHECK_EQ(rec->max, 1447);
	CHECK_EQ(rec->stamp, 10);

	/* E:max = max(E:max, P:max), E:min likewise; stamp refreshed. */
	r = rng(2000, 2447);
	CHECK_EQ(epdn_table_record(&t, &k, &r, 20), EPDN_REC_MERGED);
	CHECK_EQ(rec->min, 1000);
	CHECK_EQ(rec->max, 2447);
	CHECK_EQ(rec->stamp, 20);
	r = rng(500, 947);
	epdn_table_record(&t, &k, &r, 30);
	CHECK_EQ(rec->min, 500);
	CHECK_EQ(rec->max, 2447);
	CHECK_EQ(t.count, 1);
	CHECK_EQ(t.recorded, 3);
	CHECK_EQ(t.rec_merged, 2);

	/* Time 0 is a valid stamp: the record stays findable. */
	k = key_n(2);
	epdn_table_record(&t, &k, &r, 0);
	CHECK(epdn_table_find(&t, &k, 0));

	/* A merge past EPDN_SPAN_MAX restarts the record at the new drop. */
	k = key_n(1);
	r = rng(500 + EPDN_SPAN_MAX, 600 + EPDN_SPAN_MAX);
	epdn_table_record(&t, &k, &r, 40);
	rec = epdn_table_find(&t, &k, 40);
	CHECK_EQ(rec->min, 500 + EPDN_SPAN_MAX);
	CHECK_EQ(rec->max, 600 + EPDN_SPAN_MAX);
	CHECK_EQ(t.span_resets, 1);
	free(s);
}

static void test_merge_wraparound(void)
{
	struct epdn_rec *s = new_slots(16);
	struct epdn_key k = key_n(7);
	struct epdn_range r = rng(0xffffff00, 0xffffffff);
	struct epdn_table t;
	struct epdn_rec *rec;

	init(&t, s, 16, 1000, 99);
	epdn_table_record(&t, &k, &r, 1);
	r = rng(0x100, 0x1ff);
	epdn_table_record(&t, &k, &r, 2);
	rec = epdn_table_find(&t, &k, 2);
	CHECK_EQ(rec->min, 0xffffff00);
	CHECK_EQ(rec->max, 0x1ff);
	r = rng(0xfffffe00, 0xfffffeff);
	epdn_table_record(&t, &k, &r, 3);
	CHECK_EQ(rec->min, 0xfffffe00);
	CHECK_EQ(rec->max, 0x1ff);
	free(s);
}

/* Keys of one set never merge: the whole 5-tuple is compared. */
static void test_collision_never_merges(void)
{
	struct epdn_rec *s = new_slots(16);
	struct epdn_key k[3];
	struct epdn_range r;
	struct epdn_table t;
	u32 i;

	init(&t, s, 16, 1000, 42);
	keys_in_set(&t, 1, 3, k);
	for (i = 0; i < 3; i++) {
		r = rng(1000 * i, 1000 * i + 99);
		CHECK_EQ(epdn_table_record(&t, &k[i], &r, 1 + i),
			 EPDN_REC_NEW);
	}
	for (i = 0; i < 3; i++)
		CHECK_EQ(epdn_table_find(&t, &k[i], 5)->min, 1000 * i);
	/* Removing the first keeps the others findable (no hole). */
	epdn_table_remove(&t, epdn_table_find(&t, &k[0], 5));
	CHECK(!epdn_table_find(&t, &k[0], 5));
	CHECK_EQ(epdn_table_find(&t, &k[1], 5)->min, 1000);
	CHECK_EQ(epdn_table_find(&t, &k[2], 5)->min, 2000);
	CHECK(table_consistent(&t));
	free(s);
}

/* A full set gives up its oldest record; the others stay. */
static void test_full_set_evicts_its_oldest(void)
{
	struct epdn_rec *s = new_slots(64);
	struct epdn_key k[EPDN_WAYS + 2];
	struct epdn_range r = rng(1, 2);
	struct epdn_table t;
	u32 i;

	init(&t, s, 64, 1000, 3);
	keys_in_set(&t, 5, EPDN_WAYS + 2, k);
	for (i = 0; i < EPDN_WAYS; i++)	/* stamps 100 107 106 ... 101 */
		epdn_table_record(&t, &k[i], &r, i ? 108 - i : 100);
	CHECK_EQ(t.count, EPDN_WAYS);
	CHECK_EQ(t.evicted, 0);
	epdn_table_record(&t, &k[EPDN_WAYS], &r, 200);
	CHECK_EQ(t.evicted, 1);
	CHECK_EQ(t.count, EPDN_WAYS);
	CHECK(!epdn_table_find(&t, &k[0], 200));
	for (i = 1; i <= EPDN_WAYS; i++)
		CHECK(epdn_table_find(&t, &k[i], 200));
	/* Next oldest: k[7] (stamp 101), unless a merge refreshes it. */
	epdn_table_record(&t, &k[7], &r, 201);
	epdn_table_record(&t, &k[EPDN_WAYS + 1], &r, 202);
	CHECK(epdn_table_find(&t, &k[7], 202));
	CHECK(!epdn_table_find(&t, &k[6], 202));
	CHECK_EQ(t.evicted, 2);
	CHECK(table_consistent(&t));

	/* An expired record goes first and counts as aged, not evicted. */
	epdn_table_record(&t, &k[0], &r, 1300);
	CHECK_EQ(t.evicted, 2);
	CHECK_EQ(t.aged, 1);
	free(s);
}

/*
 * Random operations against a model of each set (an array of records):
 * record, merge, remove, lookups of absent keys; after each step the
 * invariants hold and each set holds exactly the model's keys.
 */
static void test_model_random(void)
{
	enum { FLOWS = 128, KEYS = 400, STEPS = 20000 };
	struct epdn_rec *s = new_slots(FLOWS);
	static u32 where[KEYS];		/* model: stamp of each key, 0 = absent */
	struct epdn_table t;
	u32 x = 12345, now = 1, i, step;

	init(&t, s, FLOWS, 1u << 30, 11);
	for (step = 0; step < STEPS; step++) {
		u32 n, op;
		struct epdn_key k;
		struct epdn_rec *rec;

		x = x * 1103515245 + 12345;
		n = (x >> 8) % KEYS;
		op = (x >> 20) % 4;
		k = key_n(n);
		now += (x >> 28) % 3;
		rec = epdn_table_find(&t, &k, now);
		CHECK_EQ(!!rec, !!where[n]);
		if (op == 0 && rec) {
			epdn_table_remove(&t, rec);
			where[n] = 0;
		} else if (op != 0) {
			struct epdn_range r = rng(n, n + 10);
			u32 set = set_of(&t, &k), used = 0, oldest = ~0u, m;

			for (m = 0; m < KEYS; m++) {
				struct epdn_key km = key_n(m);

				if (where[m] && set_of(&t, &km) == set) {
					used++;
					if (where[m] < oldest)
						oldest = where[m];
				}
			}
			epdn_table_record(&t, &k, &r, now);
			if (!where[n] && used == EPDN_WAYS) {
				/* the victim had the oldest stamp of its set */
				for (m = 0; m < KEYS; m++) {
					struct epdn_key km = key_n(m);

					if (where[m] && set_of(&t, &km) == set &&
					    !epdn_table_find(&t, &km, now)) {
						CHECK_EQ(where[m], oldest);
						where[m] = 0;
					}
				}
			}
			where[n] = now;
		}
		if (step % 97 == 0)
			CHECK(table_consistent(&t));
	}
	for (i = 0; i < KEYS; i++) {
		struct epdn_key k = key_n(i);

		CHECK_EQ(!!epdn_table_find(&t, &k, now), !!where[i]);
	}
	CHECK(t.evicted > 100);
	CHECK(table_consistent(&t));
	free(s);
}

/* Lookups ignore and free records idle longer than idle. */
static void test_lazy_expiry(void)
{
	struct epdn_rec *s = new_slots(16);
	struct epdn_key k = key_n(9);
	struct epdn_range r = rng(1, 2);
	struct epdn_table t;

	init(&t, s, 16, 500, 5);
	epdn_table_record(&t, &k, &r, 1000);
	CHECK(epdn_table_find(&t, &k, 1500));
	CHECK_EQ(t.aged, 0);
	CHECK(!epdn_table_find(&t, &k, 1501));
	CHECK_EQ(t.aged, 1);
	CHECK_EQ(t.count, 0);
	/* An expired record is not merged into: a drop starts afresh. */
	epdn_table_record(&t, &k, &r, 1000);
	r = rng(7, 8);
	CHECK_EQ(epdn_table_record(&t, &k, &r, 2000), EPDN_REC_NEW);
	CHECK_EQ(epdn_table_find(&t, &k, 2000)->min, 7);
	CHECK_EQ(t.aged, 2);
	/* Across the clock's wrap, and a stamp from the future is age 0. */
	epdn_table_record(&t, &k, &r, 0xffffff00);
	CHECK(epdn_table_find(&t, &k, 0xf4));
	CHECK(epdn_table_find(&t, &k, 0xfffffe00));
	CHECK(!epdn_table_find(&t, &k, 0x1f5));
	free(s);
}

/* The sweep visits at most @budget sets and frees what expired. */
static void test_sweep(void)
{
	enum { FLOWS = 1024 };
	struct epdn_rec *s = new_slots(FLOWS);
	struct epdn_table t;
	u32 i, removed = 0, rounds = 0;
	u64 aged;

	init(&t, s, FLOWS, 500, 5);
	for (i = 0; i < 600; i++) {
		struct epdn_key k = key_n(i);
		struct epdn_range r = rng(i, i);

		epdn_table_record(&t, &k, &r, i % 2 ? 900 : 100);
	}
	CHECK(t.count > 550);
	/* At 1000 the even keys (stamp 100) have expired, the odd not. */
	CHECK_EQ(epdn_table_sweep(&t, 1000, 0), 0);
	CHECK_EQ(t.cursor, 0);
	aged = t.aged;		/* full sets gave up expired records already */
	while (rounds * 16 < t.nsets) {
		u32 before = t.cursor;

		removed += epdn_table_sweep(&t, 1000, 16);
		CHECK_EQ(t.cursor, (before + 16) % t.nsets);
		rounds++;
	}
	CHECK_EQ(t.aged - aged, removed);
	for (i = 0; i < 600; i++) {
		struct epdn_key k = key_n(i);

		if (epdn_table_find(&t, &k, 1000))
			CHECK(i % 2);
	}
	CHECK(table_consistent(&t));
	CHECK_EQ(epdn_table_sweep(&t, 1400, t.nsets), 0);
	CHECK(epdn_table_sweep(&t, 1401, 10 * t.nsets) > 250);
	CHECK_EQ(t.count, 0);
	free(s);
}

/* A resize drops the records (counted) and keeps the counters. */
static void test_resize(void)
{
	struct epdn_rec *s1 = new_slots(128), *s2 = new_slots(16);
	struct epdn_hkey k2 = hkey_n(2);
	struct epdn_range r = rng(1, 2);
	struct epdn_table t;
	u32 i;

	init(&t, s1, 128, 1000, 1);
	for (i = 0; i < 100; i++) {
		struct epdn_key k = key_n(i);

		epdn_table_record(&t, &k, &r, 10);
	}
	i = t.count;
	epdn_table_resize(&t, s2, lost_of(s2, 16), 16, &k2, 30);
	CHECK_EQ(t.flushed, i);
	CHECK_EQ(t.count, 0);
	CHECK_EQ(t.cap, 16);
	CHECK_EQ(t.recorded, 100);
	CHECK_EQ(t.idle, 1000);
	for (i = 0; i < 40; i++) {
		struct epdn_key k = key_n(i);

		epdn_table_record(&t, &k, &r, 20);
	}
	CHECK(t.count <= 16);
	CHECK(table_consistent(&t));
	free(s1);
	free(s2);
}

/* The hash depends on every key byte and on the key: no fixed collisions. */
static void test_keyed_hash(void)
{
	struct epdn_hkey a = hkey_n(1), b = hkey_n(2);
	struct epdn_key k = key_n(1), j;
	u32 same = 0, i;

	for (i = 0; i < 12; i++) {
		j = k;
		((u8 *)&j)[i] ^= 1;
		CHECK(epdn_hash(&j, &a) != epdn_hash(&k, &a));
	}
	for (i = 0; i < 1000; i++) {
		struct epdn_key x = key_n(i), y = key_n(i + 1);

		same += (epdn_hash(&x, &a) == epdn_hash(&y, &a)) +
			(epdn_hash(&x, &a) == epdn_hash(&x, &b));
	}
	CHECK_EQ(same, 0);
}

static void test_bytes_per_record(void)
{
	CHECK_EQ(sizeof(struct epdn_rec), 28);
	CHECK(epdn_record_bytes(65536) <= 29);
	CHECK(epdn_record_bytes(16) <= 29);
	CHECK(epdn_record_bytes(1000003) <= 29);
	CHECK_EQ(epdn_table_slots(16), 16);
	CHECK_EQ(epdn_table_slots(17), 24);
	/* 28 bytes a record and a 4-byte lost stamp per set of 8. */
	CHECK_EQ(epdn_table_memory(65536), 65536 * 28 + 8192 * 4);
	CHECK_EQ(epdn_record_bytes(65536), 29);
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
	CHECK_EQ(epdn_opt_decode(buf, sizeof(buf), &d), SAT_OK);
	CHECK_EQ(d.ttl, 61);
	CHECK_EQ(d.flags, EPDN_F_HOST);
	CHECK_EQ(d.min, 0x01020304);
	CHECK_EQ(d.max, 0xa0b0c0d0);

	CHECK_EQ(epdn_opt_decode(buf, 11, &d), SAT_EBADMSG);
	buf[1] = 8;
	CHECK_EQ(epdn_opt_decode(buf, 12, &d), SAT_EBADMSG);
	buf[1] = 12;
	buf[3] = 0x22;		/* version 2 */
	CHECK_EQ(epdn_opt_decode(buf, 12, &d), SAT_EBADMSG);
	buf[3] = 0x12;
	buf[0] = 0x1e;		/* another experiment type */
	CHECK_EQ(epdn_opt_decode(buf, 12, &d), SAT_EBADMSG);
}

static void test_option_merge(void)
{
	struct epdn_opt o = { .ttl = 64, .flags = EPDN_F_EMPTY | EPDN_F_HOST };
	struct epdn_range r = rng(3000, 4447), got = rng(0, 0);

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
	CHECK(epdn_opt_add_range(&o, &r, EPDN_F_V2));
	CHECK_EQ(o.min, 0xfffff000);
	CHECK_EQ(o.max, 0x5b7);
	CHECK_EQ(o.flags, EPDN_F_HOST | EPDN_F_V2);

	/* A carried range past EPDN_SPAN_MAX gives way to the record's. */
	o.min = 0x10;
	o.max = 0x90000000;
	CHECK(!epdn_opt_add_range(&o, &r, 0));
	CHECK_EQ(o.min, 0x10);
	CHECK_EQ(o.max, 0x5b7);

	epdn_opt_new(&o, 57, &r, EPDN_F_EMPTY | EPDN_F_V2);
	CHECK_EQ(o.ttl, 57);
	CHECK_EQ(o.flags, EPDN_F_V2);
	CHECK_EQ(o.min, 0x10);

	/* A caller's EMPTY never makes a filled option empty. */
	epdn_opt_add_range(&o, &r, EPDN_F_EMPTY | EPDN_F_V2);
	CHECK_EQ(o.flags, EPDN_F_V2);
	CHECK(epdn_opt_range(&o, &got));
	o.flags = EPDN_F_EMPTY | EPDN_F_HOST;
	epdn_opt_add_range(&o, &r, EPDN_F_EMPTY);
	CHECK_EQ(o.flags, EPDN_F_HOST);
}

/*
 * UNKNOWN is only ever added: a new option with no record is EMPTY with
 * it, a carried option keeps its range and its EMPTY, and a later merge
 * of a range (at a gateway with a record) keeps the bit.
 */
static void test_option_unknown(void)
{
	struct epdn_info unk = { .unknown = true };
	struct epdn_info rec = { .r = { 1000, 1999 }, .has_range = true };
	struct epdn_info both = { .r = { 5000, 5999 }, .has_range = true,
				  .unknown = true };
	struct epdn_opt o = { .ttl = 64, .flags = EPDN_F_EMPTY | EPDN_F_HOST };
	struct epdn_range got;

	CHECK(epdn_opt_add_info(&o, &unk, EPDN_F_V2));
	CHECK_EQ(o.flags, EPDN_F_EMPTY | EPDN_F_HOST | EPDN_F_UNKNOWN);
	CHECK(!epdn_opt_range(&o, &got));
	CHECK(epdn_opt_add_info(&o, &rec, 0));
	CHECK_EQ(o.flags, EPDN_F_HOST | EPDN_F_UNKNOWN);
	CHECK_EQ(o.min, 1000);
	CHECK_EQ(o.max, 1999);
	CHECK(epdn_opt_add_info(&o, &rec, EPDN_F_V2));
	CHECK_EQ(o.flags, EPDN_F_HOST | EPDN_F_UNKNOWN | EPDN_F_V2);

	epdn_opt_new_info(&o, 61, &unk, EPDN_F_V2 | EPDN_F_HOST);
	CHECK_EQ(o.ttl, 61);
	CHECK_EQ(o.flags, EPDN_F_EMPTY | EPDN_F_HOST | EPDN_F_UNKNOWN);
	CHECK_EQ(o.min, 0);
	CHECK_EQ(o.max, 0);
	epdn_opt_new_info(&o, 61, &both, EPDN_F_V2);
	CHECK_EQ(o.flags, EPDN_F_V2 | EPDN_F_UNKNOWN);
	CHECK_EQ(o.min, 5000);
	epdn_opt_new_info(&o, 61, &rec, 0);
	CHECK_EQ(o.flags, 0);
	CHECK_EQ(o.max, 1999);
}

/*
 * Stamping leaves the record: every later data packet of the flow picks
 * it up until it ages out, so a lost or forged carrier takes nothing
 * away.  A flow without a record in a set that lost nothing gets nothing.
 */
static void test_record_outlives_its_stamps(void)
{
	struct epdn_rec *s = new_slots(64);
	struct epdn_key k = key_n(1), other = key_n(2);
	struct epdn_range r = rng(7000, 7999);
	struct epdn_info info;
	struct epdn_table t;
	u32 now;

	init(&t, s, 64, 100, 8);
	CHECK(!epdn_table_busy(&t));
	CHECK(!epdn_table_info(&t, &k, &far_pkt, 5, &info));
	epdn_table_record(&t, &k, &r, 10);
	for (now = 10; now <= 110; now += 10) {
		CHECK(epdn_table_info(&t, &k, &far_pkt, now, &info));
		CHECK(info.has_range && !info.unknown);
		CHECK_EQ(info.r.min, 7000);
		CHECK_EQ(info.r.max, 7999);
	}
	CHECK_EQ(t.count, 1);
	CHECK(!epdn_table_info(&t, &other, &far_pkt, 50, &info));
	CHECK(!info.has_range && !info.unknown);
	/* Idle ageing still frees it: 100 ticks after its last drop. */
	CHECK(!epdn_table_info(&t, &k, &far_pkt, 111, &info));
	CHECK_EQ(t.count, 0);
	CHECK_EQ(t.aged, 1);
	free(s);
}

/*
 * The hold: the first carrier near the record starts it, and the record
 * goes hold ticks later (released).  A packet far from it (a blind
 * forger's) carries it but starts nothing; a new drop needs a carrier of
 * its own.  The sweep releases too.
 */
static void test_hold_after_the_first_near_carrier(void)
{
	struct epdn_rec *s = new_slots(64);
	struct epdn_key k = key_n(5);
	struct epdn_range drop = rng(5000, 5999), next = rng(7000, 7999);
	struct epdn_range near = rng(4000, 4999);
	struct epdn_range edge = rng(5000 - EPDN_NEAR, 5000 - EPDN_NEAR + 99);
	struct epdn_range past = rng(4999 - EPDN_NEAR, 5098 - EPDN_NEAR);
	struct epdn_info info;
	struct epdn_table t;

	init(&t, s, 64, 1000, 6);
	t.hold = 10;
	epdn_table_record(&t, &k, &drop, 10);
	CHECK(epdn_table_info(&t, &k, &far_pkt, 20, &info) && info.has_range);
	CHECK(epdn_table_info(&t, &k, &past, 25, &info) && info.has_range);
	CHECK(epdn_table_find(&t, &k, 25)->sent == 0);
	CHECK(epdn_table_info(&t, &k, &near, 30, &info) && info.has_range);
	CHECK_EQ(epdn_table_find(&t, &k, 30)->sent, 30);
	CHECK(epdn_table_info(&t, &k, &far_pkt, 40, &info) && info.has_range);
	CHECK(!epdn_table_info(&t, &k, &near, 41, &info));
	CHECK_EQ(t.released, 1);
	CHECK_EQ(t.count, 0);

	/* A drop during the hold: it waits for its own carrier. */
	epdn_table_record(&t, &k, &drop, 100);
	CHECK(epdn_table_info(&t, &k, &edge, 105, &info));
	CHECK_EQ(epdn_table_find(&t, &k, 105)->sent, 105);
	epdn_table_record(&t, &k, &next, 110);
	CHECK(epdn_table_info(&t, &k, &far_pkt, 200, &info));
	CHECK_EQ(info.r.min, 5000);
	CHECK_EQ(info.r.max, 7999);
	CHECK(epdn_table_info(&t, &k, &next, 200, &info));
	CHECK(epdn_table_info(&t, &k, &next, 210, &info));
	CHECK(!epdn_table_info(&t, &k, &next, 211, &info));
	CHECK_EQ(t.released, 2);

	/* The sweep releases a record past its hold. */
	epdn_table_record(&t, &k, &drop, 300);
	CHECK(epdn_table_info(&t, &k, &drop, 301, &info));
	CHECK_EQ(epdn_table_sweep(&t, 312, t.nsets), 0);
	CHECK_EQ(t.released, 3);
	CHECK_EQ(t.count, 0);
	CHECK_EQ(t.aged, 0);
	free(s);
}

/*
 * A full set that gives up a record in force marks itself lost: each of
 * its flows, with a record or not, is UNKNOWN for idle ticks; flows of
 * other sets are not.  An expired victim costs nothing.  The sweep
 * forgets a lost stamp once it is past idle.
 */
static void test_eviction_makes_its_set_unknown(void)
{
	struct epdn_rec *s = new_slots(64);
	struct epdn_key k[EPDN_WAYS + 3], far;
	struct epdn_range r = rng(1, 2);
	struct epdn_info info;
	struct epdn_table t;
	u32 i;

	init(&t, s, 64, 100, 3);
	keys_in_set(&t, 5, EPDN_WAYS + 3, k);
	for (i = 0; ; i++) {
		far = key_n(1000 + i);
		if (set_of(&t, &far) != 5)
			break;
	}
	for (i = 0; i < EPDN_WAYS; i++)
		epdn_table_record(&t, &k[i], &r, 10 + i);
	CHECK(epdn_table_info(&t, &k[1], &far_pkt, 20, &info) && !info.unknown);
	/* An expired victim: aged, not lost. */
	epdn_table_record(&t, &k[EPDN_WAYS], &r, 111);
	CHECK_EQ(t.aged, 1);
	CHECK_EQ(t.nlost, 0);
	CHECK(epdn_table_info(&t, &k[1], &far_pkt, 111, &info) && !info.unknown);
	/* A live victim (k[1], stamp 11): the set is lost from now, 111. */
	epdn_table_record(&t, &k[EPDN_WAYS + 1], &r, 111);
	CHECK_EQ(t.evicted, 1);
	CHECK_EQ(t.nlost, 1);
	CHECK(epdn_table_info(&t, &k[1], &far_pkt, 111, &info));
	CHECK(info.unknown && !info.has_range);
	CHECK(epdn_table_info(&t, &k[2], &far_pkt, 111, &info));
	CHECK(info.unknown && info.has_range);
	CHECK(epdn_table_info(&t, &k[EPDN_WAYS + 2], &far_pkt, 211, &info));
	CHECK(info.unknown && !info.has_range);
	CHECK(!epdn_table_info(&t, &far, &far_pkt, 111, &info));
	/* Past idle the stamp is out of force, and the sweep forgets it. */
	CHECK(!epdn_table_info(&t, &k[1], &far_pkt, 212, &info));
	CHECK_EQ(epdn_table_sweep(&t, 212, t.nsets), EPDN_WAYS);
	CHECK_EQ(t.nlost, 0);
	CHECK_EQ(t.lost[5], 0);
	CHECK(!epdn_table_busy(&t));
	CHECK(table_consistent(&t));
	free(s);
}

/*
 * A drop too far from the record restarts it (span_resets): the drops it
 * forgets make the set UNKNOWN, as an eviction does.  A carried range
 * that gives way to the record's at stamp time sets UNKNOWN too.
 */
static void test_span_reset_makes_its_set_unknown(void)
{
	struct epdn_rec *s = new_slots(64);
	struct epdn_key k = key_n(4);
	struct epdn_range near = rng(1000, 1999), next = rng(2000, 2999);
	struct epdn_range far = rng(0x80001000, 0x80001fff);
	struct epdn_info info;
	struct epdn_opt o = { .ttl = 60, .flags = EPDN_F_HOST, .min = 10,
			      .max = 20 };
	struct epdn_table t;

	init(&t, s, 64, 100, 9);
	epdn_table_record(&t, &k, &near, 10);
	epdn_table_record(&t, &k, &next, 11);
	CHECK(epdn_table_info(&t, &k, &far_pkt, 11, &info) && !info.unknown);
	CHECK_EQ(t.nlost, 0);
	epdn_table_record(&t, &k, &far, 12);
	CHECK_EQ(t.span_resets, 1);
	CHECK_EQ(t.nlost, 1);
	CHECK(epdn_table_info(&t, &k, &far_pkt, 12, &info));
	CHECK(info.unknown && info.has_range);
	CHECK_EQ(info.r.min, 0x80001000);

	CHECK(!epdn_opt_add_info(&o, &info, 0));
	CHECK_EQ(o.flags, EPDN_F_HOST | EPDN_F_UNKNOWN);
	info.unknown = false;
	o.flags = EPDN_F_HOST;
	o.min = 10;
	o.max = 20;
	CHECK(!epdn_opt_add_info(&o, &info, 0));
	CHECK_EQ(o.flags, EPDN_F_HOST | EPDN_F_UNKNOWN);
	CHECK_EQ(o.min, 0x80001000);
	free(s);
}

/*
 * Drop information the table cannot keep (a dropped packet's UNKNOWN, a
 * carried range that gives way): the key's set is lost, with no record.
 */
static void test_mark_lost(void)
{
	struct epdn_rec *s = new_slots(64);
	struct epdn_key k = key_n(8);
	struct epdn_info info;
	struct epdn_table t;

	init(&t, s, 64, 100, 10);
	CHECK(!epdn_table_info(&t, &k, &far_pkt, 5, &info));
	epdn_table_mark_lost(&t, &k, 5);
	CHECK_EQ(t.nlost, 1);
	CHECK_EQ(t.count, 0);
	CHECK(epdn_table_busy(&t));
	CHECK(epdn_table_info(&t, &k, &far_pkt, 105, &info));
	CHECK(info.unknown && !info.has_range);
	CHECK(!epdn_table_info(&t, &k, &far_pkt, 106, &info));
	free(s);
}

/* A resize that drops live records makes every flow UNKNOWN for idle. */
static void test_resize_makes_every_flow_unknown(void)
{
	struct epdn_rec *s1 = new_slots(64), *s2 = new_slots(64);
	struct epdn_rec *s3 = new_slots(16);
	struct epdn_hkey k2 = hkey_n(2);
	struct epdn_key k = key_n(1), j = key_n(77);
	struct epdn_range r = rng(1, 2);
	struct epdn_info info;
	struct epdn_table t;

	init(&t, s1, 64, 100, 1);
	epdn_table_resize(&t, s2, lost_of(s2, 64), 64, &k2, 5);	/* none */
	CHECK(!epdn_table_busy(&t));
	epdn_table_record(&t, &k, &r, 10);
	epdn_table_resize(&t, s3, lost_of(s3, 16), 16, &k2, 20);
	CHECK_EQ(t.flushed, 1);
	CHECK(epdn_table_busy(&t));
	CHECK(epdn_table_info(&t, &j, &far_pkt, 120, &info) && info.unknown);
	CHECK(epdn_table_info(&t, &k, &far_pkt, 120, &info));
	CHECK(info.unknown && !info.has_range);
	CHECK(!epdn_table_info(&t, &k, &far_pkt, 121, &info));
	epdn_table_sweep(&t, 121, 1);
	CHECK(!epdn_table_busy(&t));
	free(s1);
	free(s2);
	free(s3);
}

/* The gateway's EPDN option: ours, a foreign one, or a bad option list. */
static void test_ip_opt(void)
{
	u8 h[60];
	struct sat_ip ip;
	struct epdn_opt o = { .ttl = 50, .min = 1, .max = 2 };

	unit_ipv4(h, 1500, 63, 0);
	CHECK_EQ(sat_parse_ipv4(h, 20, 1500, false, &ip), SAT_OK);
	CHECK_EQ(epdn_ip_opt(h, &ip), SAT_ENOENT);
	unit_ipv4(h, 1512, 63, 12);
	epdn_opt_encode(h + 20, &o);
	CHECK_EQ(sat_parse_ipv4(h, 32, 1512, false, &ip), SAT_OK);
	CHECK_EQ(epdn_ip_opt(h, &ip), 20);
	/* Behind a NOP and a 3-byte option, in a 36-byte header. */
	unit_ipv4(h, 1516, 63, 16);
	h[20] = 1;
	h[21] = 0x44;
	h[22] = 3;
	h[23] = 5;
	epdn_opt_encode(h + 24, &o);
	CHECK_EQ(sat_parse_ipv4(h, 36, 1516, false, &ip), SAT_OK);
	CHECK_EQ(epdn_ip_opt(h, &ip), 24);
	/* A version-2 EPDN option is foreign: no offset, not malformed. */
	unit_ipv4(h, 1512, 63, 12);
	epdn_opt_encode(h + 20, &o);
	h[23] = 0x20;
	CHECK_EQ(sat_parse_ipv4(h, 32, 1512, false, &ip), SAT_OK);
	CHECK_EQ(epdn_ip_opt(h, &ip), SAT_ENOENT);
	/* Malformed option list; an EPDN option of the wrong length. */
	h[21] = 40;
	CHECK_EQ(epdn_ip_opt(h, &ip), SAT_EBADMSG);
	h[21] = 8;
	CHECK_EQ(epdn_ip_opt(h, &ip), SAT_EBADMSG);
}

static void test_tcp_range(void)
{
	u8 th[SAT_TCP_HDR_MAX] = { 0 };
	struct epdn_range r = { 0, 0 };
	struct sat_tcp tcp;
	struct sat_ip ip = { .saddr = 1, .daddr = 2 };
	struct epdn_key key;

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
	CHECK_EQ(sat_parse_tcp(th, 32, 32 + 1448, &tcp), SAT_OK);
	CHECK(epdn_tcp_range(&tcp, &r));
	CHECK_EQ(r.min, 0xffffff00);
	CHECK_EQ(r.max, (u32)(0xffffff00 + 1447));	/* wraps */
	epdn_flow_key(&ip, &tcp, &key);
	CHECK(key.saddr == 1 && key.daddr == 2);
	CHECK(key.sport == htons(5001) && key.dport == htons(80));

	/* Pure ACK: no sequence space, nothing to record. */
	CHECK_EQ(sat_parse_tcp(th, 32, 32, &tcp), SAT_OK);
	CHECK(!epdn_tcp_range(&tcp, &r));
	/* SYN and FIN count one each. */
	th[13] = 0x03;
	CHECK_EQ(sat_parse_tcp(th, 32, 32, &tcp), SAT_OK);
	CHECK(epdn_tcp_range(&tcp, &r));
	CHECK_EQ(r.max - r.min + 1, 2);
	/* A GSO packet: its whole payload. */
	th[13] = 0x10;
	CHECK_EQ(sat_parse_tcp(th, 32, 32 + 10 * 1448, &tcp), SAT_OK);
	CHECK(epdn_tcp_range(&tcp, &r));
	CHECK_EQ(r.max - r.min + 1, 10 * 1448);
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
			ettl = epdn_ttl_hop(ettl, ttl);
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
	/* Sent by this host, bridged, or a second qdisc: TTL not lowered. */
	CHECK_EQ(epdn_ttl_hop(64, 64), 64);
	/* Idempotent: the rule applied twice at one hop changes nothing. */
	CHECK_EQ(epdn_ttl_hop(epdn_ttl_hop(64, 63), 63), 63);
	CHECK_EQ(epdn_ttl_hop(1, 0), 0);
	CHECK_EQ(epdn_ttl_hop(0, 255), 0);
	CHECK_EQ(epdn_ttl_hop(255, 0), 255);
}

/* A gateway's life: drops of one flow, then its next packets are stamped. */
static void test_gateway_sequence(void)
{
	struct epdn_rec *s = new_slots(16);
	struct epdn_table t;
	struct epdn_key k = key_n(3);
	struct epdn_range r, pr;
	struct epdn_opt carried = { .ttl = 60, .min = 100, .max = 199 };
	struct epdn_info info;
	struct epdn_opt o;
	struct epdn_rec *rec;

	init(&t, s, 16, 1000, 77);
	/* Packet 4 and 5 dropped; packet 5 carried a downstream option. */
	r = rng(4000, 4999);
	epdn_table_record(&t, &k, &r, 1);
	r = rng(5000, 5999);
	CHECK(epdn_opt_range(&carried, &pr));
	epdn_range_merge(&r, &pr);
	epdn_table_record(&t, &k, &r, 2);
	rec = epdn_table_find(&t, &k, 2);
	CHECK_EQ(rec->min, 100);
	CHECK_EQ(rec->max, 5999);

	/* Packets 7 and 8 leave: each gets a new option, the record stays. */
	CHECK_EQ(epdn_stamp_decide(20, false, false, 1040, 1500),
		 EPDN_ACT_INSERT);
	CHECK(epdn_table_info(&t, &k, &far_pkt, 3, &info));
	epdn_opt_new_info(&o, 63, &info, 0);
	CHECK_EQ(o.min, 100);
	CHECK_EQ(o.max, 5999);
	CHECK_EQ(o.flags, 0);
	CHECK(epdn_table_info(&t, &k, &far_pkt, 4, &info));
	epdn_opt_new_info(&o, 63, &info, 0);
	CHECK_EQ(o.min, 100);
	CHECK(epdn_table_find(&t, &k, 4));
	CHECK_EQ(t.count, 1);
	free(s);
}

/* The service time: the first sample as it is, then weight 1/4, never 0. */
static void test_service_avg(void)
{
	u64 avg = 0;
	int i;

	CHECK_EQ(epdn_service_avg(0, 0), 1);
	CHECK_EQ(epdn_service_avg(0, 3000), 3000);
	CHECK_EQ(epdn_service_avg(4000, 8000), 5000);
	CHECK_EQ(epdn_service_avg(1, 0), 1);
	for (i = 0; i < 64; i++)
		avg = epdn_service_avg(avg, 2000000);
	CHECK_EQ(avg, 2000000);
	for (i = 0; i < 64; i++)
		avg = epdn_service_avg(avg, 0);
	CHECK(avg >= 1 && avg < 8);
}

/*
 * RED's average over an idle queue against qavg e^(-m W), m = idle /
 * service: never below it, at most 9 % above (the chord), never rising
 * with the idle time, 0 once nothing can be left, and no overflow for an
 * average as large as red_vars can hold.
 */
static void test_red_idle_avg(void)
{
	static const u8 wlogs[] = { 0, 1, 3, 9, 15, 23 };
	const u64 big = (1ULL << 56) - 1;
	u64 prev, got, idle, m;
	double want, w;
	unsigned int i;

	CHECK_EQ(epdn_red_idle_avg(big, 1000000000, 0, 9), big);
	CHECK_EQ(epdn_red_idle_avg(big, 0, 1000, 9), big);
	CHECK_EQ(epdn_red_idle_avg(big, 999, 1000, 9), big);
	CHECK_EQ(epdn_red_idle_avg(big, ~0ULL, 1, 0), 0);
	CHECK_EQ(epdn_red_idle_avg(big, ~0ULL, 1, 23), 0);
	CHECK_EQ(epdn_red_idle_avg(0, 5000000, 1000, 9), 0);
	for (i = 0; i < sizeof(wlogs); i++) {
		w = ldexp(1, -wlogs[i]);
		prev = big;
		for (m = 0; m < (400ULL << wlogs[i]); m += 1 + (m >> 4)) {
			idle = m * 3000 + 2999;
			got = epdn_red_idle_avg(big, idle, 3000, wlogs[i]);
			CHECK(got <= prev);
			prev = got;
			want = (double)big * exp(-(double)m * w);
			if (want < 1e6) {
				CHECK(got <= want * 1.09 + 1e6);
				continue;
			}
			CHECK(got >= want * (1 - 1e-4));
			CHECK(got <= want * 1.087);
		}
		CHECK_EQ(prev, 0);
	}
}

int main(void)
{
	RUN(test_seq_wrap);
	RUN(test_span_bound);
	RUN(test_record_new_and_merge);
	RUN(test_merge_wraparound);
	RUN(test_collision_never_merges);
	RUN(test_full_set_evicts_its_oldest);
	RUN(test_model_random);
	RUN(test_lazy_expiry);
	RUN(test_sweep);
	RUN(test_resize);
	RUN(test_keyed_hash);
	RUN(test_bytes_per_record);
	RUN(test_option_codec);
	RUN(test_option_merge);
	RUN(test_option_unknown);
	RUN(test_record_outlives_its_stamps);
	RUN(test_hold_after_the_first_near_carrier);
	RUN(test_eviction_makes_its_set_unknown);
	RUN(test_resize_makes_every_flow_unknown);
	RUN(test_span_reset_makes_its_set_unknown);
	RUN(test_mark_lost);
	RUN(test_ip_opt);
	RUN(test_tcp_range);
	RUN(test_stamp_decide);
	RUN(test_epdn_ttl_path);
	RUN(test_gateway_sequence);
	RUN(test_service_avg);
	RUN(test_red_idle_avg);
	return unit_report("test_epdn_core");
}
