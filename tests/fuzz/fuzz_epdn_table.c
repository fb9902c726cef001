// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: the record table of sch_epdn/epdn_core.c under a fuzzed
 * clock, and the range merge.
 *
 *   u16 flows, u32 idle, u32 clock, 16 bytes of hash key; then operations,
 *   each a byte (the operation) and its arguments:
 *     RECORD  key, range, clock step: epdn_table_record()
 *     FIND    key, clock step: epdn_table_find()
 *     STAMP   key, clock step: epdn_table_info(), which must agree with
 *	       find and the lost stamps, and leaves the record
 *     SWEEP   u16 budget, clock step: epdn_table_sweep()
 *     RESIZE  u16 flows, 16 bytes of key: epdn_table_resize()
 *     REMOVE  u16 slot: epdn_table_remove() of that slot, if live
 *     MERGE   two ranges, anywhere: epdn_range_merge()
 *
 * A key is one of 64 (so that sets collide and fill) or 12 bytes read as
 * is.  A clock step is 0, small, or any 32-bit jump (jiffies wrap).  A
 * recorded range is anywhere in 2^32 and of any span below
 * EPDN_SPAN_MAX, the bound every caller keeps (a dropped segment, or its
 * union with the option it carries).  After every operation the table's
 * invariants hold (tests/unit/epdn_check.h), the counters add up, and a
 * model of the touched flow agrees: a record evicted while in force makes
 * its flow UNKNOWN at once.
 */
#include "tests/fuzz/fuzz.h"
#include "sch_epdn/epdn_core.c"
#include "tests/unit/epdn_check.h"

#define FLOWS_MAX	256
#define KEYS		64

struct run {
	struct epdn_table t;
	u32 now;
	u64 news;		/* records created */
	u64 removes;		/* epdn_table_remove() calls */
	u64 records;		/* epdn_table_record() calls */
	u64 merged;		/* ... that merged */
};

static u32 read_flows(struct fuzz_in *in)
{
	return 1 + fuzz_u16(in) % FLOWS_MAX;
}

static struct epdn_hkey read_hkey(struct fuzz_in *in)
{
	struct epdn_hkey k;

	k.k0 = fuzz_u64(in);
	k.k1 = fuzz_u64(in);
	return k;
}

static struct epdn_key read_key(struct fuzz_in *in)
{
	u8 sel = fuzz_u8(in);
	struct epdn_key k = {
		.saddr = 0x0100000a,
		.daddr = 0x0200000a + ((sel >> 4) & 3),
		.sport = sel & 0x0f,
		.dport = 0x8913,
	};

	if (sel >= 4 * 16 * 3)	/* one byte in four: a raw key */
		fuzz_fill(in, &k, sizeof(k));
	return k;
}

/* Any span below EPDN_SPAN_MAX, starting anywhere. */
static struct epdn_range read_range(struct fuzz_in *in)
{
	struct epdn_range r;

	r.min = fuzz_u32(in);
	r.max = r.min + fuzz_len(in, EPDN_SPAN_MAX - 0x80) % EPDN_SPAN_MAX;
	return r;
}

static void step_clock(struct fuzz_in *in, struct run *x)
{
	x->now = fuzz_near(in, x->now);
}

static void check_table(struct run *x)
{
	struct epdn_table *t = &x->t;
	u32 i, lost;

	FUZZ_CHECK(t->cap == t->nsets * EPDN_WAYS && t->count <= t->cap);
	FUZZ_CHECK(t->cursor < t->nsets);
	FUZZ_CHECK(table_consistent(t));
	for (i = 0; i < t->cap; i++) {
		struct epdn_range r = { t->slot[i].min, t->slot[i].max };

		FUZZ_CHECK(!t->slot[i].stamp || epdn_range_valid(&r));
	}
	for (i = 0, lost = 0; i < t->nsets; i++)
		lost += !!t->lost[i];
	FUZZ_CHECK(lost == t->nlost);
	FUZZ_CHECK(t->recorded == x->records && t->rec_merged == x->merged);
	FUZZ_CHECK(t->count == x->news - x->removes - t->evicted - t->aged -
		   t->flushed - t->released);
}

/* What a record of @key at @now must leave, against a model of the flow. */
static void op_record(struct fuzz_in *in, struct run *x)
{
	struct epdn_key key = read_key(in);
	struct epdn_range r = read_range(in), want = r;
	struct epdn_rec set[EPDN_WAYS], *rec;
	u64 resets = x->t.span_resets, gone, evicted;
	enum epdn_rec_result res;
	u32 s, i, full = 1, oldest = 0;
	bool reset = false;

	step_clock(in, x);
	/* A live record is merged into; find() ages one out as record() would. */
	rec = epdn_table_find(&x->t, &key, x->now);
	if (rec) {
		want.min = rec->min;
		want.max = rec->max;
		reset = !epdn_range_merge(&want, &r);
		if (reset)
			want = r;
	}
	s = set_of(&x->t, &key);
	memcpy(set, &x->t.slot[s * EPDN_WAYS], sizeof(set));
	for (i = 0; i < EPDN_WAYS; i++) {
		full &= !!set[i].stamp;
		if (set[i].stamp &&
		    epdn_age(x->now, set[i].stamp) > oldest)
			oldest = epdn_age(x->now, set[i].stamp);
	}
	gone = x->t.evicted + x->t.aged;
	evicted = x->t.evicted;
	res = epdn_table_record(&x->t, &key, &r, x->now);
	x->records++;
	FUZZ_CHECK(res == (rec ? EPDN_REC_MERGED : EPDN_REC_NEW));
	FUZZ_CHECK(x->t.span_resets - resets == reset);
	if (res == EPDN_REC_MERGED) {
		x->merged++;
	} else {
		x->news++;
		/* A full set gave up its oldest record, and only that one. */
		FUZZ_CHECK(x->t.evicted + x->t.aged - gone == (u64)full);
		for (i = 0; full && i < EPDN_WAYS; i++)
			if (!epdn_table_find(&x->t, &set[i].key,
					     set[i].stamp))
				FUZZ_CHECK(epdn_age(x->now, set[i].stamp) ==
					   oldest);
		/* One in force: its flow, and the new one, are UNKNOWN. */
		if (x->t.evicted != evicted) {
			struct epdn_info info;

			FUZZ_CHECK(x->t.lost[s]);
			FUZZ_CHECK(epdn_table_info(&x->t, &key, &r, x->now,
						   &info) && info.unknown);
		}
	}
	rec = epdn_table_find(&x->t, &key, x->now);
	FUZZ_CHECK(rec && rec->min == want.min && rec->max == want.max);
	FUZZ_CHECK(rec->stamp == (x->now ? x->now : 1));
}

static void op_find(struct fuzz_in *in, struct run *x)
{
	struct epdn_key key = read_key(in);
	struct epdn_rec *rec;

	step_clock(in, x);
	rec = epdn_table_find(&x->t, &key, x->now);
	if (!rec)
		return;
	FUZZ_CHECK(!memcmp(&rec->key, &key, sizeof(key)));
	FUZZ_CHECK((u32)(rec - x->t.slot) / EPDN_WAYS == set_of(&x->t, &key));
	FUZZ_CHECK(!epdn_expired(&x->t, rec, x->now));
}

/* What a data packet picks up: the record, kept, and the set's state. */
static void op_stamp(struct fuzz_in *in, struct run *x)
{
	struct epdn_key key = read_key(in);
	struct epdn_range pkt = read_range(in);
	u32 lost, s = set_of(&x->t, &key);
	struct epdn_rec *rec, copy;
	struct epdn_info info;
	bool unknown, any;

	step_clock(in, x);
	lost = x->t.lost[s];
	unknown = epdn_lost_live(&x->t, x->t.lost_all, x->now) ||
		  epdn_lost_live(&x->t, lost, x->now);
	any = epdn_table_info(&x->t, &key, &pkt, x->now, &info);
	FUZZ_CHECK(info.unknown == unknown);
	rec = epdn_table_find(&x->t, &key, x->now);
	FUZZ_CHECK(info.has_range == !!rec);
	FUZZ_CHECK(any == (info.has_range || info.unknown));
	if (!rec)
		return;
	FUZZ_CHECK(info.r.min == rec->min && info.r.max == rec->max);
	/* A packet near the record has started its hold, now or before. */
	FUZZ_CHECK(!epdn_near(rec, &pkt) || rec->sent);
	FUZZ_CHECK(!rec->sent || !epdn_released(&x->t, rec, x->now));
	copy = *rec;
	epdn_table_info(&x->t, &key, &pkt, x->now, &info);
	FUZZ_CHECK(!memcmp(rec, &copy, sizeof(copy)));
}

/* The sets it visited hold no record idle longer than idle. */
static void op_sweep(struct fuzz_in *in, struct run *x)
{
	struct epdn_table *t = &x->t;
	u32 budget = fuzz_u16(in), first = t->cursor, before = t->count, i, w;
	u64 aged = t->aged, released = t->released;
	u32 removed;

	step_clock(in, x);
	removed = epdn_table_sweep(t, x->now, budget);
	FUZZ_CHECK(before - t->count == removed + t->released - released &&
		   t->aged - aged == removed);
	if (budget > t->nsets)
		budget = t->nsets;
	FUZZ_CHECK(t->cursor == (first + budget) % t->nsets);
	for (i = 0; i < budget; i++) {
		struct epdn_rec *set = &t->slot[(first + i) % t->nsets *
						 EPDN_WAYS];

		for (w = 0; w < EPDN_WAYS && set[w].stamp; w++)
			FUZZ_CHECK(!epdn_expired(t, &set[w], x->now) &&
				   !epdn_released(t, &set[w], x->now));
	}
}

static void op_resize(struct fuzz_in *in, struct run *x)
{
	u32 flows = read_flows(in), before = x->t.count;
	struct epdn_hkey k = read_hkey(in);
	struct epdn_rec *old = x->t.slot, *b = table_block(flows);
	u64 flushed = x->t.flushed;
	bool lost_before = x->t.nlost || x->t.lost_all;

	epdn_table_resize(&x->t, b, lost_of(b, flows), flows, &k, x->now);
	free(old);
	FUZZ_CHECK(x->t.cap >= flows && x->t.cap < flows + EPDN_WAYS);
	FUZZ_CHECK(epdn_table_memory(flows) ==
		   (u64)x->t.cap * sizeof(struct epdn_rec) +
		   (u64)x->t.nsets * sizeof(u32) &&
		   epdn_record_bytes(flows) == sizeof(struct epdn_rec) + 1);
	FUZZ_CHECK(!x->t.count && x->t.flushed - flushed == before);
	FUZZ_CHECK(!x->t.nlost && (!before || x->t.lost_all));
	FUZZ_CHECK(!lost_before || x->t.lost_all);
}

static void op_remove(struct fuzz_in *in, struct run *x)
{
	u32 i = fuzz_u16(in) % x->t.cap;
	struct epdn_key key = x->t.slot[i].key;

	if (!x->t.slot[i].stamp)
		return;
	epdn_table_remove(&x->t, &x->t.slot[i]);
	x->removes++;
	FUZZ_CHECK(!epdn_table_find(&x->t, &key, x->now));
}

/* Two ranges anywhere, of any span, near each other or not. */
static void op_merge(struct fuzz_in *in, struct run *x)
{
	struct epdn_range a, b;

	(void)x;
	a.min = fuzz_u32(in);
	a.max = a.min + fuzz_len(in, EPDN_SPAN_MAX);
	b.min = fuzz_near(in, a.min);
	b.max = b.min + fuzz_len(in, EPDN_SPAN_MAX);
	FUZZ_CHECK(merge_consistent(&a, &b));
}

static void (*const ops[])(struct fuzz_in *in, struct run *x) = {
	op_record, op_find, op_stamp, op_sweep, op_resize, op_remove, op_merge,
};

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct fuzz_in in = fuzz_start(data, size);
	u32 flows = read_flows(&in), idle = fuzz_u32(&in);
	struct epdn_hkey k;
	struct run x = { 0 };
	struct epdn_rec *b;

	x.now = fuzz_u32(&in);
	k = read_hkey(&in);
	b = table_block(flows);
	epdn_table_init(&x.t, b, lost_of(b, flows), flows, idle, &k);
	x.t.hold = idle >> (idle & 3);
	check_table(&x);
	while (fuzz_more(&in)) {
		ops[fuzz_pick(&in, FUZZ_COUNT(ops))](&in, &x);
		check_table(&x);
	}
	free(x.t.slot);
	return 0;
}
