// SPDX-License-Identifier: GPL-2.0
/*
 * Instructions per operation of the EPDN core (sch_epdn/epdn_core.c).
 *
 * tools/epdn-cost runs this program under
 *
 *	valgrind --tool=callgrind --instr-atstart=no --collect-atstart=no \
 *		--toggle-collect='cost_op_*' --combine-dumps=yes
 *
 * so that only the instructions run inside the cost_op_*() wrappers are
 * counted.  Each case fills or prepares a table with callgrind's
 * instrumentation off, runs its operations with it on, and ends with a
 * dump named after the case ("epdn-cost core=... op=... ops=N units=U"),
 * which the script divides by N (or U).  Run natively, the same cases
 * are a self-test: every case checks that its operations did what the
 * case says (hits hit, evictions evicted, colliding keys share a set).
 *
 * Built twice from this file: against the current core, and with
 * -DEPDN_OLD against the open-addressing core of commit 27b3919, which
 * tools/epdn-cost extracts into a build directory placed first on the
 * include path.  The adapters below cover the API differences.
 *
 * Usage: epdn_cost [-n OPS] [-f FLOWS]...   (default 20000; 1 10000 1048576)
 */
#include "tests/unit/unit.h"
#include "sch_epdn/epdn_core.c"
#include <satnet/hdr.h>

#include <arpa/inet.h>
#include <assert.h>
#include <unistd.h>

#ifdef __has_include
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#endif
#endif
#ifndef CALLGRIND_DUMP_STATS_AT
#define CALLGRIND_DUMP_STATS_AT(desc)		do { } while (0)
#define CALLGRIND_START_INSTRUMENTATION		do { } while (0)
#define CALLGRIND_STOP_INSTRUMENTATION		do { } while (0)
#endif

/* One out-of-line wrapper per measured call: callgrind counts inside it. */
#if defined(__has_attribute) && __has_attribute(noipa)
#define COST_OP		__attribute__((noinline, noipa))
#else
#define COST_OP		__attribute__((noinline))
#endif

#define IDLE		(1U << 24)	/* ticks: only the expiry cases expire */
#define T0		1000U		/* the first tick */
#define SEG		1448U		/* bytes per dropped segment */
#define MAX_FLOWS	(1U << 20)
#define SWEEP_SETS	128U		/* EPDN_SWEEP_SETS of the qdisc */

/* ---- the two cores ---- */

#ifdef EPDN_OLD
#ifndef EPDN_VICTIMS
#error "EPDN_OLD needs the old core first on the include path"
#endif
#define CORE		"old"
#define COLLIDE_KEYS	64	/* keys on one home slot, and as many misses */

static void tbl_init(struct epdn_table *t, struct epdn_rec *slot, u32 flows)
{
	epdn_table_init(t, slot, flows, 0x5eed1234);
}

/* The table's bytes: its slots. */
static u64 tbl_memory(u32 flows)
{
	return (u64)epdn_table_slots(flows) * sizeof(struct epdn_rec);
}

/* The most live records: flows (the slots keep a spare eighth). */
static u32 tbl_full(const struct epdn_table *t)
{
	return t->flows;
}

static struct epdn_rec *tbl_find(struct epdn_table *t,
				 const struct epdn_key *key, u32 now)
{
	(void)now;
	return epdn_table_find(t, key);
}

static u32 tbl_sweep(struct epdn_table *t, u32 now, u32 budget)
{
	return epdn_table_age(t, now, IDLE, budget);
}

/* The old qdisc aged DIV_ROUND_UP(cap, EPDN_AGE_STEPS = 8) slots a run. */
static u32 tbl_sweep_budget(const struct epdn_table *t)
{
	return (t->cap + 7) / 8;
}

/* What the sweep walks: slots. */
static u32 tbl_buckets(const struct epdn_table *t)
{
	return t->cap;
}

static u32 tbl_bucket(const struct epdn_table *t, const struct epdn_key *k)
{
	return epdn_home(t, k);
}

static bool tbl_bucket_full(const struct epdn_table *t,
			    const struct epdn_key *k)
{
	(void)t;
	(void)k;
	return false;
}

static u64 tbl_hash(const struct epdn_table *t, const struct epdn_key *k)
{
	return epdn_hash(k, t->seed);
}

/* The old core's parsers; their codes are those of include/satnet/hdr.h. */
static_assert(EPDN_OK == SAT_OK && EPDN_ENOENT == SAT_ENOENT &&
	      EPDN_EBADMSG == SAT_EBADMSG, "return codes");

struct pkt_hdrs {
	struct epdn_ip ip;
	struct epdn_tcp tcp;
	int opt_off;
};

/* epdn_classify(): the IPv4 header, then 20 bytes of TCP. */
static int pkt_parse(const u8 *buf, u32 caplen, u32 len, struct pkt_hdrs *h)
{
	if (epdn_parse_ipv4(buf, caplen, len, false, &h->ip))
		return EPDN_EBADMSG;
	h->opt_off = h->ip.opt_off;
	return epdn_parse_tcp(buf + h->ip.hdr_len, 20,
			      h->ip.l3_len - h->ip.hdr_len, &h->tcp);
}

static int pkt_find_opt(const u8 *opts, u32 len)
{
	return epdn_opt_find(opts, len);
}
#else /* the current core */
#ifndef EPDN_WAYS
#error "the current core defines EPDN_WAYS"
#endif
#define CORE		"new"
#define COLLIDE_KEYS	16	/* keys in one set: twice its ways */

static void tbl_init(struct epdn_table *t, struct epdn_rec *slot, u32 flows)
{
	struct epdn_hkey hkey = {
		.k0 = 0x0123456789abcdefULL, .k1 = 0xfedcba9876543210ULL,
	};

	epdn_table_init(t, slot, (u32 *)(slot + epdn_table_slots(flows)),
			flows, IDLE, &hkey);
}

/* The table's bytes: its records and the sets' lost stamps after them. */
static u64 tbl_memory(u32 flows)
{
	return epdn_table_memory(flows);
}

static u32 tbl_full(const struct epdn_table *t)
{
	return t->cap;
}

static struct epdn_rec *tbl_find(struct epdn_table *t,
				 const struct epdn_key *key, u32 now)
{
	return epdn_table_find(t, key, now);
}

static u32 tbl_sweep(struct epdn_table *t, u32 now, u32 budget)
{
	return epdn_table_sweep(t, now, budget);
}

static u32 tbl_sweep_budget(const struct epdn_table *t)
{
	(void)t;
	return SWEEP_SETS;
}

/* What the sweep walks: sets. */
static u32 tbl_buckets(const struct epdn_table *t)
{
	return t->nsets;
}

static u32 tbl_bucket(const struct epdn_table *t, const struct epdn_key *k)
{
	return (u32)(epdn_set(t, k) - t->slot) / EPDN_WAYS;
}

static bool tbl_bucket_full(const struct epdn_table *t,
			    const struct epdn_key *k)
{
	return !epdn_slot_free(&epdn_set(t, k)[EPDN_WAYS - 1]);
}

static u64 tbl_hash(const struct epdn_table *t, const struct epdn_key *k)
{
	return epdn_hash(k, &t->hkey);
}

struct pkt_hdrs {
	struct sat_ip ip;
	struct sat_tcp tcp;
	int opt_off;
};

/* epdn_classify(): the IPv4 header and its option, then the TCP header. */
static int pkt_parse(const u8 *buf, u32 caplen, u32 len, struct pkt_hdrs *h)
{
	u32 l4;

	if (sat_parse_ipv4(buf, caplen, len, false, &h->ip))
		return SAT_EBADMSG;
	h->opt_off = epdn_ip_opt(buf, &h->ip);
	if (h->opt_off == SAT_EBADMSG)
		return SAT_EBADMSG;
	l4 = h->ip.tot_len - h->ip.hdr_len;
	return sat_parse_tcp(buf + h->ip.hdr_len,
			     l4 < SAT_TCP_HDR_MAX ? l4 : SAT_TCP_HDR_MAX, l4,
			     &h->tcp);
}

static int pkt_find_opt(const u8 *opts, u32 len)
{
	return sat_ipopt_find(opts, len);
}
#endif

/* ---- the measured calls ---- */

/* A packet as the qdisc sees it: the first bytes of the IP header on. */
struct cost_pkt {
	u8 buf[128];
	u32 len;		/* bytes from the IP header to the end */
};

COST_OP void cost_op_empty(void)
{
}

COST_OP struct epdn_rec *cost_op_find(struct epdn_table *t,
				      const struct epdn_key *key, u32 now)
{
	return tbl_find(t, key, now);
}

COST_OP enum epdn_rec_result cost_op_record(struct epdn_table *t,
					    const struct epdn_key *key,
					    const struct epdn_range *r,
					    u32 now)
{
	return epdn_table_record(t, key, r, now);
}

COST_OP void cost_op_remove(struct epdn_table *t, struct epdn_rec *rec)
{
	epdn_table_remove(t, rec);
}

COST_OP u64 cost_op_hash(const struct epdn_table *t,
			 const struct epdn_key *key)
{
	return tbl_hash(t, key);
}

COST_OP u32 cost_op_sweep(struct epdn_table *t, u32 now, u32 budget)
{
	return tbl_sweep(t, now, budget);
}

/* What epdn_classify() does. */
COST_OP int cost_op_parse(const struct cost_pkt *p, struct pkt_hdrs *h)
{
	u32 caplen = p->len < EPDN_IPV4_HDR_MAX ? p->len : EPDN_IPV4_HDR_MAX;

	return pkt_parse(p->buf, caplen, p->len, h);
}

COST_OP enum epdn_action cost_op_decide(u32 hdr_len, bool has_opt,
					u32 seg_len)
{
	return epdn_stamp_decide(hdr_len, has_opt, false, seg_len, 1500);
}

COST_OP void cost_op_encode(u8 *buf, const struct epdn_opt *o)
{
	epdn_opt_encode(buf, o);
}

COST_OP int cost_op_decode(const u8 *buf, struct epdn_opt *o)
{
	return epdn_opt_decode(buf, EPDN_OPT_LEN, o);
}

COST_OP int cost_op_find_opt(const u8 *opts, u32 len)
{
	return pkt_find_opt(opts, len);
}

/* ---- cases ---- */

struct bench {
	struct epdn_table t;
	struct epdn_rec *slot;
	u32 flows;
	u32 ops;		/* operations per case */
	u32 now;
	u32 next;		/* the next never-used key number */
	u64 rng;
	struct epdn_key *keys;	/* the live records' keys, in slot order */
	u32 nkeys;
};

/* Distinct keys for n < 2^32: one sender, port pairs from the number. */
static struct epdn_key key_of(u32 n)
{
	struct epdn_key k = {
		.saddr = htonl(0x0a010001),
		.daddr = htonl(0x0a020001),
		.sport = htons((u16)(n >> 16)),
		.dport = htons((u16)n),
	};

	return k;
}

static struct epdn_key fresh_key(struct bench *b)
{
	return key_of(b->next++);
}

static struct epdn_range seg_range(u32 i)
{
	struct epdn_range r = { .min = i * SEG, .max = i * SEG + SEG - 1 };

	return r;
}

/* xorshift64*: the same sample every run. */
static u32 rnd(struct bench *b, u32 bound)
{
	b->rng ^= b->rng >> 12;
	b->rng ^= b->rng << 25;
	b->rng ^= b->rng >> 27;
	return (u32)((b->rng * 0x2545f4914f6cdd1dULL) >> 32) % bound;
}

static bool key_eq(const struct epdn_key *a, const struct epdn_key *b)
{
	return !memcmp(a, b, sizeof(*a));
}

static void measure_begin(void)
{
	CALLGRIND_START_INSTRUMENTATION;
}

/*
 * End a case: the dump holds the instructions of its @ops operations;
 * @units is what a per-unit figure divides by (sets or slots for the
 * sweep, else @ops).  @flows 0: the operation does not use the table.
 */
static void measure_end(const char *op, const char *scenario, u32 flows,
			u32 ops, u32 units)
{
	char desc[200];

	CALLGRIND_STOP_INSTRUMENTATION;
	snprintf(desc, sizeof(desc),
		 "epdn-cost core=%s op=%s scenario=%s flows=%u ops=%u units=%u",
		 CORE, op, scenario, flows, ops, units);
	CALLGRIND_DUMP_STATS_AT(desc);
	printf("%s\n", desc);
	fflush(stdout);
}

/* The keys of the live records, from the slots. */
static void collect_keys(struct bench *b)
{
	u32 i;

	b->nkeys = 0;
	for (i = 0; i < b->t.cap; i++)
		if (!epdn_slot_free(&b->t.slot[i]))
			b->keys[b->nkeys++] = b->t.slot[i].key;
}

/*
 * A table of @flows at full load: every slot of the current core used,
 * flows records in the old one.  Stamps advance one tick per 64 records,
 * or all equal @tied.
 */
static void fill(struct bench *b, u32 flows, bool tied)
{
	struct epdn_table *t = &b->t;
	u32 full;

	free(b->slot);
	b->slot = unit_calloc(1, tbl_memory(flows));
	tbl_init(t, b->slot, flows);
	b->flows = flows;
	full = tbl_full(t);
	b->now = T0;
	while (t->count < full) {
		struct epdn_key k = fresh_key(b);
		struct epdn_range r = seg_range(t->count);

		if (tbl_bucket_full(t, &k))
			continue;
		if (!tied)
			b->now = T0 + t->count / 64;
		epdn_table_record(t, &k, &r, b->now);
	}
	free(b->keys);
	b->keys = unit_calloc(t->cap, sizeof(*b->keys));
	collect_keys(b);
	CHECK_EQ(b->nkeys, full);
	CHECK_EQ(t->evicted, 0);
}

static const struct epdn_key *sample_key(struct bench *b)
{
	return &b->keys[rnd(b, b->nkeys)];
}

/* Lookups of live records, uniform over the table. */
static void case_lookup_hit(struct bench *b, const char *scenario)
{
	u32 i, hits = 0;

	measure_begin();
	for (i = 0; i < b->ops; i++) {
		const struct epdn_key *k = sample_key(b);
		struct epdn_rec *rec = cost_op_find(&b->t, k, b->now);

		hits += rec && key_eq(&rec->key, k);
	}
	measure_end("lookup_hit", scenario, b->flows, b->ops, b->ops);
	CHECK_EQ(hits, b->ops);
}

/* Lookups of flows without a record, at full load. */
static void case_lookup_miss(struct bench *b, const char *scenario)
{
	u32 i, misses = 0, count = b->t.count;

	measure_begin();
	for (i = 0; i < b->ops; i++) {
		struct epdn_key k = fresh_key(b);

		misses += !cost_op_find(&b->t, &k, b->now);
	}
	measure_end("lookup_miss", scenario, b->flows, b->ops, b->ops);
	CHECK_EQ(misses, b->ops);
	CHECK_EQ(b->t.count, count);
}

static void case_record_merge(struct bench *b, const char *scenario)
{
	u32 i, merged = 0, count = b->t.count;

	measure_begin();
	for (i = 0; i < b->ops; i++) {
		struct epdn_range r = seg_range(i);

		merged += cost_op_record(&b->t, sample_key(b), &r, b->now) ==
			  EPDN_REC_MERGED;
	}
	measure_end("record_merge", scenario, b->flows, b->ops, b->ops);
	CHECK_EQ(merged, b->ops);
	CHECK_EQ(b->t.count, count);
}

/*
 * Remove a sampled record and record its flow anew, so the table ends as
 * it began: with @remove the removal is measured (a stamp delivered the
 * record), else the drop that creates the record again.
 */
static void case_churn(struct bench *b, const char *scenario, bool remove)
{
	u64 evicted = b->t.evicted;
	u32 i, done = 0, count = b->t.count;

	measure_begin();
	for (i = 0; i < b->ops; i++) {
		const struct epdn_key *k = sample_key(b);
		struct epdn_rec *rec = tbl_find(&b->t, k, b->now);
		struct epdn_range r = seg_range(i);

		if (remove) {
			cost_op_remove(&b->t, rec);
			done += b->t.count == count - 1;
			epdn_table_record(&b->t, k, &r, b->now);
		} else {
			epdn_table_remove(&b->t, rec);
			done += cost_op_record(&b->t, k, &r, b->now) ==
				EPDN_REC_NEW;
		}
	}
	measure_end(remove ? "remove" : "record_new", scenario, b->flows, b->ops,
		 b->ops);
	CHECK_EQ(done, b->ops);
	CHECK_EQ(b->t.evicted, evicted);
	CHECK_EQ(b->t.count, count);
}

/* New flows into a full table: each one evicts (or ages out) a record. */
static void case_record_evict(struct bench *b, const char *scenario, u32 ops)
{
	u64 gone = b->t.evicted + b->t.aged;
	u32 i, created = 0, count = b->t.count;

	measure_begin();
	for (i = 0; i < ops; i++) {
		struct epdn_key k = fresh_key(b);
		struct epdn_range r = seg_range(i);

		created += cost_op_record(&b->t, &k, &r, b->now) ==
			   EPDN_REC_NEW;
	}
	measure_end("record_evict", scenario, b->flows, ops, ops);
	CHECK_EQ(created, ops);
	CHECK_EQ(b->t.evicted + b->t.aged - gone, ops);
	CHECK_EQ(b->t.count, count);
	collect_keys(b);
}

/*
 * Sweep runs of the kernel's budget.  With @expired every visited record
 * has expired and goes, so each bucket is visited once at most (the
 * table is not refilled in between); otherwise runs repeat until about
 * b->ops buckets were visited.
 */
static void case_sweep(struct bench *b, const char *scenario, bool expired)
{
	u32 budget = tbl_sweep_budget(&b->t);
	u32 per_run = budget < tbl_buckets(&b->t) ? budget :
		      tbl_buckets(&b->t);
	u32 runs = (b->ops + per_run - 1) / per_run;
	u32 i, removed = 0, count = b->t.count;

	if (expired && runs > tbl_buckets(&b->t) / per_run)
		runs = tbl_buckets(&b->t) / per_run;
	measure_begin();
	for (i = 0; i < runs; i++)
		removed += cost_op_sweep(&b->t, b->now, budget);
	measure_end("sweep", scenario, b->flows, runs, runs * per_run);
	if (expired) {
		CHECK(removed > 0);
		CHECK_EQ(b->t.count, count - removed);
	} else {
		CHECK_EQ(removed, 0);
	}
}

/* The common cases at full load, none expired; stamps spread. */
static void scenario_full(struct bench *b, u32 flows, u32 evict_ops)
{
	fill(b, flows, false);
	case_lookup_hit(b, "full");
	case_lookup_miss(b, "full");
	case_record_merge(b, "full");
	case_churn(b, "full", false);
	case_churn(b, "full", true);
	case_sweep(b, "full", false);
	case_record_evict(b, "full", evict_ops);
}

/*
 * Every record stamped in one tick: new flows in that tick evict among
 * equals; then, once the tick is idle long ago, every record has expired
 * at once, and the sweep frees all it visits.
 */
static void scenario_tied(struct bench *b, u32 flows, u32 evict_ops)
{
	fill(b, flows, true);
	case_record_evict(b, "tied", evict_ops);
	fill(b, flows, true);
	b->now = T0 + IDLE + 1;
	case_sweep(b, "tied-expired", true);
}

/* ---- the single packet that rescans (old core) ---- */

#ifdef EPDN_OLD
/*
 * The first new flow into a full table finds the victim cache empty and
 * scans every slot: the one packet of 32 that pays for the rescan.
 */
static void case_evict_rescan(struct bench *b, const char *scenario)
{
	struct epdn_key k = fresh_key(b);
	struct epdn_range r = seg_range(0);

	CHECK_EQ(b->t.nvict, 0);
	measure_begin();
	cost_op_record(&b->t, &k, &r, b->now);
	measure_end("record_evict_rescan", scenario, b->flows, 1, 1);
	CHECK_EQ(b->t.evicted, 1);
	/* The scan cached the oldest records and took the first. */
	CHECK_EQ(b->t.nvict, b->flows < EPDN_VICTIMS ? b->flows : EPDN_VICTIMS);
	CHECK_EQ(b->t.vnext, 1);
}

static void scenario_rescan(struct bench *b, u32 flows)
{
	fill(b, flows, true);
	case_evict_rescan(b, "tied");
}
#endif

/* ---- colliding keys, chosen with the hash key known ---- */

/* @n never-used keys in bucket @bucket (a set, or an old home slot). */
static void colliding_keys(struct bench *b, u32 bucket, struct epdn_key *out,
			   u32 n)
{
	u32 got = 0;

	while (got < n) {
		struct epdn_key k = fresh_key(b);

		if (tbl_bucket(&b->t, &k) == bucket)
			out[got++] = k;
	}
}

static void case_collide_miss(struct bench *b, const struct epdn_key *keys,
			      u32 nkeys)
{
	u32 i, misses = 0;

	measure_begin();
	for (i = 0; i < b->ops; i++)
		misses += !cost_op_find(&b->t, &keys[i % nkeys], b->now);
	measure_end("lookup_miss", "colliding", b->flows, b->ops, b->ops);
	CHECK_EQ(misses, b->ops);
}

#ifndef EPDN_OLD
/* The key stored in @way of the colliding keys' set. */
static struct epdn_rec *set_way(struct bench *b, const struct epdn_key *k,
				u32 way)
{
	return &epdn_set(&b->t, k)[way];
}

/*
 * Colliding flows in turn, one tick apart: the set keeps the last
 * EPDN_WAYS of them, so each finds the set full, without its record.
 */
static void case_collide_evict(struct bench *b, const struct epdn_key *keys)
{
	u64 evicted = b->t.evicted;
	u32 i;

	measure_begin();
	for (i = 0; i < b->ops; i++) {
		struct epdn_range r = seg_range(i);

		cost_op_record(&b->t, &keys[i % COLLIDE_KEYS], &r, ++b->now);
	}
	measure_end("record_evict", "colliding", b->flows, b->ops, b->ops);
	CHECK_EQ(b->t.evicted - evicted, b->ops);
}

/* The record in the set's last way: every way's key is compared. */
static void case_collide_hit_merge(struct bench *b, const struct epdn_key *k0)
{
	struct epdn_key last = set_way(b, k0, EPDN_WAYS - 1)->key;
	u32 i, hits = 0, merged = 0;

	measure_begin();
	for (i = 0; i < b->ops; i++)
		hits += cost_op_find(&b->t, &last, b->now) ==
			set_way(b, k0, EPDN_WAYS - 1);
	measure_end("lookup_hit", "colliding", b->flows, b->ops, b->ops);
	CHECK_EQ(hits, b->ops);
	measure_begin();
	for (i = 0; i < b->ops; i++) {
		struct epdn_range r = seg_range(i);

		merged += cost_op_record(&b->t, &last, &r, b->now) ==
			  EPDN_REC_MERGED;
	}
	measure_end("record_merge", "colliding", b->flows, b->ops, b->ops);
	CHECK_EQ(merged, b->ops);
}

/*
 * Remove the first way's record (the last one moves into the hole), and
 * record into the last way after seven full compares; each is restored
 * unmeasured.
 */
static void case_collide_remove_new(struct bench *b, const struct epdn_key *k0)
{
	u32 i, created = 0, count = b->t.count;

	measure_begin();
	for (i = 0; i < b->ops; i++) {
		struct epdn_key k = set_way(b, k0, 0)->key;
		struct epdn_range r = seg_range(i);

		cost_op_remove(&b->t, set_way(b, k0, 0));
		epdn_table_record(&b->t, &k, &r, b->now);
	}
	measure_end("remove", "colliding", b->flows, b->ops, b->ops);
	CHECK_EQ(b->t.count, count);
	measure_begin();
	for (i = 0; i < b->ops; i++) {
		struct epdn_key k = set_way(b, k0, EPDN_WAYS - 1)->key;
		struct epdn_range r = seg_range(i);

		epdn_table_remove(&b->t, set_way(b, k0, EPDN_WAYS - 1));
		created += cost_op_record(&b->t, &k, &r, b->now) ==
			   EPDN_REC_NEW;
	}
	measure_end("record_new", "colliding", b->flows, b->ops, b->ops);
	CHECK_EQ(created, b->ops);
	CHECK_EQ(b->t.count, count);
}

/*
 * Records expired, still in their slots: a lookup frees the flow's record
 * on the way (lazy expiry); with @drop, a drop of that flow frees it and
 * takes the freed way.  Each record is put back, stamped in the old tick,
 * unmeasured.
 */
static void case_expired(struct bench *b, u32 tick, bool drop)
{
	u32 i, done = 0, count = b->t.count;
	u64 aged = b->t.aged;

	measure_begin();
	for (i = 0; i < b->ops; i++) {
		const struct epdn_key *k = sample_key(b);
		struct epdn_range r = seg_range(i);

		if (drop) {
			done += cost_op_record(&b->t, k, &r, b->now) ==
				EPDN_REC_NEW;
			epdn_table_remove(&b->t, tbl_find(&b->t, k, b->now));
		} else {
			done += !cost_op_find(&b->t, k, b->now);
		}
		epdn_table_record(&b->t, k, &r, tick);
	}
	measure_end(drop ? "record_new" : "lookup_miss", "tied-expired", b->flows,
		 b->ops, b->ops);
	CHECK_EQ(done, b->ops);
	CHECK_EQ(b->t.aged - aged, b->ops);
	CHECK_EQ(b->t.count, count);
}

static void scenario_expired(struct bench *b, u32 flows)
{
	fill(b, flows, true);
	b->now = T0 + IDLE + 1;
	case_expired(b, T0, false);
	case_expired(b, T0, true);
	case_record_evict(b, "tied-expired", b->ops);
}

/* A flood of new flows, the clock ticking every 8 drops: each evicts. */
static void scenario_flood(struct bench *b, u32 flows)
{
	u64 evicted;
	u32 i;

	fill(b, flows, false);
	evicted = b->t.evicted;
	measure_begin();
	for (i = 0; i < b->ops; i++) {
		struct epdn_key k = fresh_key(b);
		struct epdn_range r = seg_range(i);

		b->now += !(i % 8);
		cost_op_record(&b->t, &k, &r, b->now);
	}
	measure_end("record_evict", "flood", b->flows, b->ops, b->ops);
	CHECK_EQ(b->t.evicted - evicted, b->ops);
}

/* Colliding flows cycle through one set of a full table. */
static void scenario_colliding(struct bench *b, u32 flows)
{
	struct epdn_key keys[COLLIDE_KEYS], gone[COLLIDE_KEYS - EPDN_WAYS];
	u32 i, same = 0;

	fill(b, flows, false);
	colliding_keys(b, tbl_bucket(&b->t, &b->keys[0]), keys, COLLIDE_KEYS);
	for (i = 0; i < COLLIDE_KEYS; i++)
		same += tbl_bucket(&b->t, &keys[i]) ==
			tbl_bucket(&b->t, &keys[0]);
	CHECK_EQ(same, COLLIDE_KEYS);
	case_collide_evict(b, keys);
	/* The set holds the last EPDN_WAYS keys recorded: the rest miss. */
	for (i = 0; i < COLLIDE_KEYS - EPDN_WAYS; i++)
		gone[i] = keys[(b->ops + i) % COLLIDE_KEYS];
	case_collide_miss(b, gone, COLLIDE_KEYS - EPDN_WAYS);
	case_collide_hit_merge(b, &keys[0]);
	case_collide_remove_new(b, &keys[0]);
}
#else /* EPDN_OLD */
/*
 * COLLIDE_KEYS keys on one home slot in a table at full load: they and
 * the records around them form one probe run.  The cost grows with the
 * number of such keys, up to the table's flows.
 */
static void scenario_colliding(struct bench *b, u32 flows)
{
	struct epdn_key keys[2 * COLLIDE_KEYS];
	u32 i, home, count;

	if (flows < 8 * COLLIDE_KEYS)
		return;
	fill(b, flows, false);
	home = tbl_bucket(&b->t, &b->keys[0]);
	for (i = 0; i < COLLIDE_KEYS; i++)
		epdn_table_remove(&b->t, tbl_find(&b->t, &b->keys[i], b->now));
	colliding_keys(b, home, keys, 2 * COLLIDE_KEYS);
	for (i = 0; i < COLLIDE_KEYS; i++) {
		struct epdn_range r = seg_range(i);

		epdn_table_record(&b->t, &keys[i], &r, b->now);
	}
	count = b->t.count;
	CHECK_EQ(count, tbl_full(&b->t));
	CHECK_EQ(b->t.evicted, 0);
	memcpy(b->keys, keys, sizeof(*keys) * COLLIDE_KEYS);
	b->nkeys = COLLIDE_KEYS;
	case_lookup_hit(b, "colliding");
	case_collide_miss(b, keys + COLLIDE_KEYS, COLLIDE_KEYS);
	case_record_merge(b, "colliding");
	case_churn(b, "colliding", false);
	case_churn(b, "colliding", true);
}
#endif

/* ---- operations that do not use the table ---- */

/* IPv4 (20 bytes + @optlen of options) and TCP (32 bytes) headers. */
static void build_pkt(struct cost_pkt *p, const u8 *opts, u32 optlen)
{
	u8 *ip = p->buf, *th;

	memset(p, 0, sizeof(*p));
	p->len = 1500;
	ip[0] = 0x40 | (u8)((EPDN_IPV4_HDR_MIN + optlen) / 4);
	ip[2] = (u8)(p->len >> 8);
	ip[3] = (u8)p->len;
	ip[6] = 0x40;			/* DF */
	ip[8] = 64;
	ip[9] = 6;			/* TCP */
	memcpy(ip + 12, "\x0a\x01\x00\x01\x0a\x02\x00\x01", 8);
	memcpy(ip + EPDN_IPV4_HDR_MIN, opts, optlen);
	th = ip + EPDN_IPV4_HDR_MIN + optlen;
	memcpy(th, "\x13\x89\x00\x50\x00\x01\x00\x00", 8);	/* ports, seq */
	th[12] = 8 << 4;		/* doff 8: timestamps */
	th[13] = 0x18;			/* PSH ACK */
	memcpy(th + 20, "\x01\x01\x08\x0a", 4);
}

/* Option lists: the EPDN option alone, or after @nops NOPs. */
static u32 opt_list(u8 *opts, u32 nops, bool epdn)
{
	struct epdn_opt o = { .ttl = 63, .flags = 0, .min = 1, .max = SEG };

	memset(opts, SAT_OPT_NOP, nops);
	if (!epdn)
		return nops;
	epdn_opt_encode(opts + nops, &o);
	return nops + EPDN_OPT_LEN;
}

static void case_parse(const char *scenario, u32 nops, bool epdn, u32 ops)
{
	u8 opts[40];
	u32 optlen = opt_list(opts, nops, epdn), i, ok = 0;
	struct pkt_hdrs h;
	struct cost_pkt p;

	build_pkt(&p, opts, optlen);
	measure_begin();
	for (i = 0; i < ops; i++)
		ok += cost_op_parse(&p, &h) == SAT_OK;
	measure_end("parse", scenario, 0, ops, ops);
	CHECK_EQ(ok, ops);
	CHECK_EQ(h.ip.hdr_len, EPDN_IPV4_HDR_MIN + optlen);
	CHECK_EQ(h.opt_off, epdn ? (int)(EPDN_IPV4_HDR_MIN + nops) :
				   SAT_ENOENT);
	CHECK_EQ(h.tcp.hdr_len, 32);
	CHECK_EQ(h.tcp.end_seq - h.tcp.seq, p.len - h.ip.hdr_len - 32);
}

static void case_find_opt(const char *scenario, u32 nops, bool epdn, u32 ops)
{
	u8 opts[40];
	u32 len = opt_list(opts, nops, epdn), i, right = 0;
	int want = epdn ? (int)nops : SAT_ENOENT;

	measure_begin();
	for (i = 0; i < ops; i++)
		right += cost_op_find_opt(opts, len) == want;
	measure_end("opt_find", scenario, 0, ops, ops);
	CHECK_EQ(right, ops);
}

/* The insert path: every test of the decision runs. */
static void case_decide(u32 ops)
{
	u32 i, inserts = 0;

	measure_begin();
	for (i = 0; i < ops; i++)
		inserts += cost_op_decide(EPDN_IPV4_HDR_MIN, false, 1488) ==
			   EPDN_ACT_INSERT;
	measure_end("stamp_decide", "insert", 0, ops, ops);
	CHECK_EQ(inserts, ops);
}

static void case_codec(u32 ops)
{
	struct epdn_opt o = { .ttl = 62, .flags = EPDN_F_HOST, .min = 7,
			      .max = 7 + SEG }, d;
	u8 buf[EPDN_OPT_LEN];
	u32 i, ok = 0;

	measure_begin();
	for (i = 0; i < ops; i++)
		cost_op_encode(buf, &o);
	measure_end("opt_encode", "plain", 0, ops, ops);
	measure_begin();
	for (i = 0; i < ops; i++)
		ok += cost_op_decode(buf, &d) == SAT_OK;
	measure_end("opt_decode", "plain", 0, ops, ops);
	CHECK_EQ(ok, ops);
	CHECK(d.ttl == o.ttl && d.flags == o.flags && d.min == o.min &&
	      d.max == o.max);
}

/* The flow key's hash under the table's key (new) or seed (old). */
static void case_hash(u32 ops)
{
	struct epdn_rec slot[16] = { 0 };
	struct epdn_table t;
	u64 prev = 0;
	u32 i, differ = 0;

	tbl_init(&t, slot, 1);
	measure_begin();
	for (i = 0; i < ops; i++) {
		struct epdn_key k = key_of(i);
		u64 h = cost_op_hash(&t, &k);

		differ += h != prev;
		prev = h;
	}
	measure_end("hash", "plain", 0, ops, ops);
	CHECK_EQ(differ, ops);
}

/* The wrapper alone: what every figure carries besides the core's work. */
static void case_empty(u32 ops)
{
	u32 i;

	measure_begin();
	for (i = 0; i < ops; i++)
		cost_op_empty();
	measure_end("empty", "plain", 0, ops, ops);
}

static void packet_cases(u32 ops)
{
	case_empty(ops);
	case_hash(ops);
	case_parse("plain", 0, false, ops);
	case_parse("epdn-option", 0, true, ops);
	case_parse("28-nops-epdn", 28, true, ops);
	case_parse("40-nops", 40, false, ops);
	case_decide(ops);
	case_codec(ops);
	case_find_opt("epdn-option", 0, true, ops);
	case_find_opt("28-nops-epdn", 28, true, ops);
	case_find_opt("40-nops", 40, false, ops);
}

/* ---- main ---- */

/*
 * The old core rescans its whole table once per 32 evictions: its
 * eviction cases run a multiple of 32 operations, fewer of them, so that
 * callgrind gets through the large table in reasonable time.
 */
static u32 evict_ops(u32 ops)
{
#ifdef EPDN_OLD
	u32 n = ops / 16 / EPDN_VICTIMS * EPDN_VICTIMS;

	return n ? n : EPDN_VICTIMS;
#else
	return ops;
#endif
}

static void table_cases(struct bench *b, u32 flows)
{
	scenario_full(b, flows, evict_ops(b->ops));
	scenario_tied(b, flows, evict_ops(b->ops));
	scenario_colliding(b, flows);
#ifdef EPDN_OLD
	scenario_rescan(b, flows);
#else
	scenario_expired(b, flows);
	scenario_flood(b, flows);
#endif
}

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s [-n OPS] [-f FLOWS]...\n", prog);
	exit(2);
}

int main(int argc, char **argv)
{
	static const u32 default_flows[] = { 1, 10000, MAX_FLOWS };
	struct bench b = { .ops = 20000, .rng = 0x9e3779b97f4a7c15ULL };
	u32 flows[16], nflows = 0, i;
	int c;

	while ((c = getopt(argc, argv, "n:f:")) != -1) {
		if (c == 'n' && atoi(optarg) > 0)
			b.ops = (u32)atoi(optarg);
		else if (c == 'f' && nflows < 16 && atoi(optarg) > 0 &&
			 (u32)atoi(optarg) <= MAX_FLOWS)
			flows[nflows++] = (u32)atoi(optarg);
		else
			usage(argv[0]);
	}
	if (optind != argc)
		usage(argv[0]);
	if (!nflows) {
		memcpy(flows, default_flows, sizeof(default_flows));
		nflows = 3;
	}
	packet_cases(b.ops);
	for (i = 0; i < nflows; i++)
		table_cases(&b, flows[i]);
	free(b.slot);
	free(b.keys);
	return unit_report("epdn_cost " CORE);
}
