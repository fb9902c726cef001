// SPDX-License-Identifier: GPL-2.0
/*
 * EPDN gateway core, plain C (see include/satnet/epdn_core.h).
 *
 * The record table keeps one record per TCP/IPv4 flow that lost data at
 * this gateway: E = <flowid, timestamp, max, min> (seed 001 §III).  The
 * whole 5-tuple is stored, so a hash collision never merges two flows.
 */
#include <satnet/epdn_core.h>

/* ---- sequence ranges (seed 001 §III-A, §III-B) ---- */

/* A range spans less than EPDN_SPAN_MAX: its ends can be ordered. */
bool epdn_range_valid(const struct epdn_range *r)
{
	return r->max - r->min < EPDN_SPAN_MAX;
}

/* Does @u hold both ends of @r?  Offsets from u->min, so wrap is harmless. */
static bool epdn_range_covers(const struct epdn_range *u,
			      const struct epdn_range *r)
{
	u32 span = u->max - u->min;

	return r->min - u->min <= span && r->max - u->min <= span;
}

/*
 * Widen @dst to cover @src; false, leaving @dst, when the union would
 * span EPDN_SPAN_MAX or more (or the ends are 2^31 apart, where before()
 * cannot order them and the candidate union misses one of the ranges).
 */
bool epdn_range_merge(struct epdn_range *dst, const struct epdn_range *src)
{
	struct epdn_range u = {
		.min = sat_seq_min(dst->min, src->min),
		.max = sat_seq_max(dst->max, src->max),
	};

	if (!epdn_range_valid(dst) || !epdn_range_valid(src) ||
	    !epdn_range_valid(&u) || !epdn_range_covers(&u, dst) ||
	    !epdn_range_covers(&u, src))
		return false;
	*dst = u;
	return true;
}

/* ---- hashing: SipHash-1-3 of the 5-tuple under a random 128-bit key ---- */

static u64 epdn_rotl64(u64 x, unsigned int r)
{
	return (x << r) | (x >> (64 - r));
}

/* One SipRound on v0..v3, as lib/siphash.c's SIPROUND, kept in registers. */
#define EPDN_SIPROUND do {			\
	v0 += v1;				\
	v1 = epdn_rotl64(v1, 13) ^ v0;		\
	v0 = epdn_rotl64(v0, 32);		\
	v2 += v3;				\
	v3 = epdn_rotl64(v3, 16) ^ v2;		\
	v0 += v3;				\
	v3 = epdn_rotl64(v3, 21) ^ v0;		\
	v2 += v1;				\
	v1 = epdn_rotl64(v1, 17) ^ v2;		\
	v2 = epdn_rotl64(v2, 32);		\
} while (0)

/* The 12 key bytes as two little-endian words, length in the top byte. */
u64 epdn_hash(const struct epdn_key *key, const struct epdn_hkey *k)
{
	u64 m0 = (u64)key->saddr | (u64)key->daddr << 32;
	u64 m1 = (u64)key->sport | (u64)key->dport << 16 | (u64)12 << 56;
	u64 v0 = k->k0 ^ 0x736f6d6570736575ULL;
	u64 v1 = k->k1 ^ 0x646f72616e646f6dULL;
	u64 v2 = k->k0 ^ 0x6c7967656e657261ULL;
	u64 v3 = k->k1 ^ 0x7465646279746573ULL;

	v3 ^= m0;
	EPDN_SIPROUND;
	v0 ^= m0;
	v3 ^= m1;
	EPDN_SIPROUND;
	v0 ^= m1;
	v2 ^= 0xff;
	EPDN_SIPROUND;
	EPDN_SIPROUND;
	EPDN_SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

/* ---- slots ---- */

static bool epdn_key_eq(const struct epdn_key *a, const struct epdn_key *b)
{
	return a->saddr == b->saddr && a->daddr == b->daddr &&
	       a->sport == b->sport && a->dport == b->dport;
}

static bool epdn_slot_free(const struct epdn_rec *rec)
{
	return rec->stamp == 0;
}

/* Zero marks a free slot, so a record stamped at time 0 says 1. */
static u32 epdn_stamp(u32 now)
{
	return now ? now : 1;
}

/* Age of a stamp in clock ticks; a stamp from the future is age 0. */
static u32 epdn_age(u32 now, u32 stamp)
{
	s32 age = (s32)(now - stamp);

	return age < 0 ? 0 : (u32)age;
}

static bool epdn_expired(const struct epdn_table *t,
			 const struct epdn_rec *rec, u32 now)
{
	return epdn_age(now, rec->stamp) > t->idle;
}

/* Its drops have been carried for the hold: the record is done. */
static bool epdn_released(const struct epdn_table *t,
			  const struct epdn_rec *rec, u32 now)
{
	return rec->sent && epdn_age(now, rec->sent) > t->hold;
}

/* The index of the key's set. */
static u32 epdn_set_index(const struct epdn_table *t,
			  const struct epdn_key *key)
{
	u32 h = (u32)epdn_hash(key, &t->hkey);

	return (u32)(((u64)h * t->nsets) >> 32);
}

/* The first slot of the key's set. */
static struct epdn_rec *epdn_set(const struct epdn_table *t,
				 const struct epdn_key *key)
{
	return &t->slot[epdn_set_index(t, key) * EPDN_WAYS];
}

/* A lost stamp (0: none) is in force for idle ticks, as a record is. */
static bool epdn_lost_live(const struct epdn_table *t, u32 lost, u32 now)
{
	return lost && epdn_age(now, lost) <= t->idle;
}

/* ---- table ---- */

u32 epdn_table_sets(u32 flows)
{
	return flows ? (flows - 1) / EPDN_WAYS + 1 : 1;
}

u32 epdn_table_slots(u32 flows)
{
	return epdn_table_sets(flows) * EPDN_WAYS;
}

/* One lost stamp per set. */
u64 epdn_table_lost_bytes(u32 flows)
{
	return (u64)epdn_table_sets(flows) * sizeof(u32);
}

/* The slots and the lost stamps. */
u64 epdn_table_memory(u32 flows)
{
	return (u64)epdn_table_slots(flows) * sizeof(struct epdn_rec) +
	       epdn_table_lost_bytes(flows);
}

/* Table memory per record at capacity, rounded up: seed 001 §V. */
u32 epdn_record_bytes(u32 flows)
{
	u32 slots = epdn_table_slots(flows);

	return (u32)((epdn_table_memory(flows) + slots - 1) / slots);
}

/*
 * @slot: epdn_table_slots(@flows) zeroed records; @lost:
 * epdn_table_lost_bytes(@flows) zeroed bytes; both owned by the caller.
 */
void epdn_table_init(struct epdn_table *t, struct epdn_rec *slot, u32 *lost,
		     u32 flows, u32 idle, const struct epdn_hkey *hkey)
{
	memset(t, 0, sizeof(*t));
	epdn_table_resize(t, slot, lost, flows, hkey, 0);
	t->idle = idle;
	t->hold = idle;
}

/*
 * Take new, zeroed slots and lost stamps for @flows records and a new hash
 * key: the live records are dropped (counted in flushed), not moved, so a
 * resize costs the same whatever the table holds.  Their flows may still
 * need them, and the sets' lost stamps go too: unless the table held
 * neither, every flow is stamped UNKNOWN for idle ticks from @now.  The
 * caller frees the old arrays.
 */
void epdn_table_resize(struct epdn_table *t, struct epdn_rec *slot,
		       u32 *lost, u32 flows, const struct epdn_hkey *hkey,
		       u32 now)
{
	t->flushed += t->count;
	if (t->count || t->nlost || t->lost_all)
		t->lost_all = epdn_stamp(now);	/* lost stamps go too */
	t->slot = slot;
	t->lost = lost;
	t->nsets = epdn_table_sets(flows);
	t->cap = t->nsets * EPDN_WAYS;
	t->hkey = *hkey;
	t->count = 0;
	t->nlost = 0;
	t->cursor = 0;
}

/* Records, or lost stamps, that the sweep still has to age out. */
bool epdn_table_busy(const struct epdn_table *t)
{
	return t->count || t->nlost || t->lost_all;
}

/*
 * Free a slot, keeping each set's records in its first ways: the last
 * record of the set moves into the hole, so a scan stops at a free slot.
 */
static void epdn_slot_release(struct epdn_table *t, struct epdn_rec *set,
			      struct epdn_rec *rec)
{
	struct epdn_rec *last = rec;

	while (last + 1 < set + EPDN_WAYS && !epdn_slot_free(last + 1))
		last++;
	*rec = *last;
	memset(last, 0, sizeof(*last));
	t->count--;
}

void epdn_table_remove(struct epdn_table *t, struct epdn_rec *rec)
{
	u32 i = (u32)(rec - t->slot);

	epdn_slot_release(t, &t->slot[i - i % EPDN_WAYS], rec);
}

/*
 * The key's live record in its set, freeing it if it has expired or its
 * hold is over.
 */
static struct epdn_rec *epdn_set_find(struct epdn_table *t,
				      struct epdn_rec *set,
				      const struct epdn_key *key, u32 now)
{
	struct epdn_rec *rec;

	for (rec = set; rec < set + EPDN_WAYS; rec++) {
		if (epdn_slot_free(rec))
			return NULL;
		if (!epdn_key_eq(&rec->key, key))
			continue;
		if (epdn_expired(t, rec, now))
			t->aged++;
		else if (epdn_released(t, rec, now))
			t->released++;
		else
			return rec;
		epdn_slot_release(t, set, rec);
		return NULL;
	}
	return NULL;
}

/*
 * The flow's live record, or NULL.  A record idle longer than t->idle is
 * gone (seed 001 §III-C) even before the sweep reaches it: it is freed here.
 */
struct epdn_rec *epdn_table_find(struct epdn_table *t,
				 const struct epdn_key *key, u32 now)
{
	if (!t->count)
		return NULL;
	return epdn_set_find(t, epdn_set(t, key), key, now);
}

/* Has the set, or the whole table, given up a record still in force? */
static bool epdn_set_lost(const struct epdn_table *t, u32 s, u32 now)
{
	return epdn_lost_live(t, t->lost_all, now) ||
	       (t->nlost && epdn_lost_live(t, t->lost[s], now));
}

/* The hold starts now, and never before the drop (should a clock step back). */
static void epdn_rec_sent(struct epdn_rec *rec, u32 now)
{
	rec->sent = sat_before(now, rec->stamp) ? rec->stamp : epdn_stamp(now);
}

/* Does the packet's range @p lie within EPDN_NEAR of the record's? */
static bool epdn_near(const struct epdn_rec *rec, const struct epdn_range *p)
{
	u32 lo = rec->min - EPDN_NEAR, span = rec->max - lo + EPDN_NEAR;

	return p->min - lo <= span && p->max - lo <= span;
}

/*
 * What a data packet of @key, sequence range @pkt, leaving now picks up
 * (seed 001 §III-B): the flow's record, which stays for the flow's later
 * packets, and UNKNOWN if the flow's set gave up a record in force within
 * idle.  The first packet near the record starts its hold.  One set
 * visited.  False when there is nothing to stamp.
 */
bool epdn_table_info(struct epdn_table *t, const struct epdn_key *key,
		     const struct epdn_range *pkt, u32 now,
		     struct epdn_info *info)
{
	u32 s = epdn_set_index(t, key);
	struct epdn_rec *rec = NULL;

	if (t->count)
		rec = epdn_set_find(t, &t->slot[s * EPDN_WAYS], key, now);
	info->has_range = !!rec;
	if (rec) {
		info->r.min = rec->min;
		info->r.max = rec->max;
		if (!rec->sent && epdn_near(rec, pkt))
			epdn_rec_sent(rec, now);
	}
	info->unknown = epdn_set_lost(t, s, now);
	return info->has_range || info->unknown;
}

/*
 * The set of slot @in gave up drop information still in force: its flows
 * are unknown for idle.
 */
static void epdn_set_mark_lost(struct epdn_table *t, struct epdn_rec *in,
			       u32 now)
{
	u32 s = (u32)(in - t->slot) / EPDN_WAYS;

	if (!t->lost[s])
		t->nlost++;
	t->lost[s] = epdn_stamp(now);
}

/*
 * The slot a new record takes in a full set: the oldest record, which has
 * expired (aged) or is evicted.  Ties go to the lowest way.
 */
static struct epdn_rec *epdn_set_victim(struct epdn_table *t,
					struct epdn_rec *set, u32 now)
{
	struct epdn_rec *victim = set, *rec;

	for (rec = set + 1; rec < set + EPDN_WAYS; rec++)
		if (epdn_age(now, rec->stamp) > epdn_age(now, victim->stamp))
			victim = rec;
	if (epdn_expired(t, victim, now)) {
		t->aged++;
	} else {
		t->evicted++;
		epdn_set_mark_lost(t, set, now);
	}
	return victim;
}

static void epdn_rec_set(struct epdn_rec *rec, const struct epdn_key *key,
			 const struct epdn_range *r, u32 now)
{
	rec->key = *key;
	rec->min = r->min;
	rec->max = r->max;
	rec->stamp = epdn_stamp(now);
	rec->sent = 0;
}

/*
 * A merge past EPDN_SPAN_MAX restarts the record at the newest drop.  The
 * drops it forgets are given up as an eviction's are: one segment with
 * the flow's 4-tuple and a far sequence number, dropped here, must not
 * wipe out the flow's record unseen.
 */
static void epdn_rec_merge(struct epdn_table *t, struct epdn_rec *rec,
			   const struct epdn_range *r, u32 now)
{
	struct epdn_range cur = { .min = rec->min, .max = rec->max };

	if (!epdn_range_merge(&cur, r)) {
		cur = *r;
		t->span_resets++;
		epdn_set_mark_lost(t, rec, now);
	}
	rec->min = cur.min;
	rec->max = cur.max;
	rec->stamp = epdn_stamp(now);
	rec->sent = 0;		/* the new drop needs a carrier of its own */
}

/*
 * Record a drop (seed 001 §III-A): merge into the flow's record,
 * E:max = max(E:max, P:n, P:max) and E:min likewise, or create one in the
 * flow's set, which, when full, gives up its oldest record (§III-C,
 * docs/epdn.md).  Either way the record's timestamp becomes @now.  At
 * most EPDN_WAYS slots are read, whatever the table holds.
 */
enum epdn_rec_result epdn_table_record(struct epdn_table *t,
				       const struct epdn_key *key,
				       const struct epdn_range *r, u32 now)
{
	struct epdn_rec *set = epdn_set(t, key);
	struct epdn_rec *rec = epdn_set_find(t, set, key, now);

	t->recorded++;
	if (rec) {
		epdn_rec_merge(t, rec, r, now);
		t->rec_merged++;
		return EPDN_REC_MERGED;
	}
	for (rec = set; rec < set + EPDN_WAYS; rec++)
		if (epdn_slot_free(rec))
			break;
	if (rec == set + EPDN_WAYS)
		rec = epdn_set_victim(t, set, now);
	else
		t->count++;
	epdn_rec_set(rec, key, r, now);
	return EPDN_REC_NEW;
}

/* Forget a set's lost stamp once it is older than idle. */
static void epdn_sweep_lost(struct epdn_table *t, u32 s, u32 now)
{
	if (t->lost[s] && !epdn_lost_live(t, t->lost[s], now)) {
		t->lost[s] = 0;
		t->nlost--;
	}
}

/*
 * Drop information about @key was given up here (a carried range that
 * could not be merged, or an UNKNOWN dropped with its packet): the key's
 * set is lost, as on an eviction.
 */
void epdn_table_mark_lost(struct epdn_table *t, const struct epdn_key *key,
			  u32 now)
{
	epdn_set_mark_lost(t, epdn_set(t, key), now);
}

/*
 * The ageing sweep (seed 001 §III-C): visit @budget sets from the cursor
 * and free the records idle longer than t->idle.  Lookups already ignore
 * such records; the sweep gives their slots back and keeps count honest.
 * It forgets lost stamps past idle the same way, before the clock wraps
 * and they would seem new again.
 */
u32 epdn_table_sweep(struct epdn_table *t, u32 now, u32 budget)
{
	u32 removed = 0;
	u32 i = t->cursor;

	if (t->lost_all && !epdn_lost_live(t, t->lost_all, now))
		t->lost_all = 0;
	if (budget > t->nsets)
		budget = t->nsets;
	while (budget--) {
		struct epdn_rec *set = &t->slot[i * EPDN_WAYS];
		struct epdn_rec *rec = set;

		epdn_sweep_lost(t, i, now);

		while (rec < set + EPDN_WAYS && !epdn_slot_free(rec)) {
			if (epdn_expired(t, rec, now)) {
				epdn_slot_release(t, set, rec);
				removed++;
			} else if (epdn_released(t, rec, now)) {
				epdn_slot_release(t, set, rec);
				t->released++;
			} else {
				rec++;
			}
		}
		i = i + 1 == t->nsets ? 0 : i + 1;
	}
	t->cursor = i;
	t->aged += removed;
	return removed;
}

/* ---- the option (docs/epdn.md, include/satnet/epdn_opt.h) ---- */

/*
 * The EPDN option of a checked IPv4 header: its offset in @hdr, SAT_ENOENT
 * (an option of another version counts as a foreign option), or
 * SAT_EBADMSG when the option list is malformed.
 */
int epdn_ip_opt(const u8 *hdr, const struct sat_ip *ip)
{
	struct epdn_opt o;
	int off;
	u32 at;

	off = sat_ipopt_find(hdr + EPDN_IPV4_HDR_MIN,
			     ip->hdr_len - EPDN_IPV4_HDR_MIN);
	if (off < 0)
		return off;
	at = EPDN_IPV4_HDR_MIN + (u32)off;
	if (epdn_opt_decode(hdr + at, ip->hdr_len - at, &o))
		return SAT_ENOENT;
	return (int)at;
}

bool epdn_opt_range(const struct epdn_opt *o, struct epdn_range *r)
{
	if (o->flags & EPDN_F_EMPTY)
		return false;
	r->min = o->min;
	r->max = o->max;
	return true;
}

/*
 * Stamp into a carried option (seed 001 §III-B): an empty one takes the
 * record, a filled one keeps the min of mins and the max of maxes.  A
 * union past EPDN_SPAN_MAX (or a carried range already past it) is
 * replaced by the record's range, and the result is false.
 */
bool epdn_opt_add_range(struct epdn_opt *o, const struct epdn_range *r,
			u8 flags)
{
	struct epdn_range cur = { .min = o->min, .max = o->max };
	bool merged = true;

	if (o->flags & EPDN_F_EMPTY) {
		cur = *r;
		o->flags &= ~EPDN_F_EMPTY;
	} else if (!epdn_range_merge(&cur, r)) {
		cur = *r;
		merged = false;
	}
	o->min = cur.min;
	o->max = cur.max;
	o->flags |= flags & EPDN_FLAGS_MASK & ~EPDN_F_EMPTY;
	return merged;
}

/*
 * A gateway creating the option starts EPDN-TTL at the packet's TTL, so
 * only the rest of the path is verified (docs/epdn.md, seed 001 §III-D).
 */
void epdn_opt_new(struct epdn_opt *o, u8 ttl, const struct epdn_range *r,
		  u8 flags)
{
	o->ttl = ttl;
	o->flags = flags & EPDN_FLAGS_MASK & ~EPDN_F_EMPTY;
	o->min = r->min;
	o->max = r->max;
}

/*
 * A carried option after this hop: the record's range joins it, and
 * UNKNOWN is set when the flow's information may be missing here, or when
 * the union would span too much and the carried range gives way (then the
 * result is false, as epdn_opt_add_range()).  Flags are only ever added.
 */
bool epdn_opt_add_info(struct epdn_opt *o, const struct epdn_info *info,
		       u8 flags)
{
	bool merged = true;

	if (info->has_range)
		merged = epdn_opt_add_range(o, &info->r, flags);
	if (info->unknown || !merged)
		o->flags |= EPDN_F_UNKNOWN;
	return merged;
}

/*
 * A new option from this hop: the record's range, or EMPTY with no
 * record, and UNKNOWN when the flow's information may be missing.
 */
void epdn_opt_new_info(struct epdn_opt *o, u8 ttl,
		       const struct epdn_info *info, u8 flags)
{
	static const struct epdn_range none;

	epdn_opt_new(o, ttl, info->has_range ? &info->r : &none, flags);
	if (!info->has_range)
		o->flags = EPDN_F_EMPTY | (o->flags & ~EPDN_F_V2);
	if (info->unknown)
		o->flags |= EPDN_F_UNKNOWN;
}

/*
 * EPDN-TTL after an EPDN hop (seed 001 §III-D): it follows TTL when the
 * packet is exactly one decrement behind it, which is this router's own.
 * After a legacy router the gap is wider and stays; a packet whose TTL
 * was not lowered here (sent by this host, bridged, or seen by a second
 * epdn qdisc on the same path through this host) keeps it.  Applying the
 * rule twice changes nothing, and no guess of "forwarded" is needed.
 */
u8 epdn_ttl_hop(u8 ettl, u8 ttl)
{
	return ettl == ttl + 1 ? ttl : ettl;
}

/* ---- flows ---- */

void epdn_flow_key(const struct sat_ip *ip, const struct sat_tcp *tcp,
		   struct epdn_key *key)
{
	key->saddr = ip->saddr;
	key->daddr = ip->daddr;
	key->sport = tcp->sport;
	key->dport = tcp->dport;
}

/*
 * The sequence space a segment occupies, as an inclusive range: a dropped
 * GSO packet contributes its whole range.  False for a pure ACK.
 */
bool epdn_tcp_range(const struct sat_tcp *tcp, struct epdn_range *r)
{
	if (tcp->end_seq == tcp->seq)
		return false;
	r->min = tcp->seq;
	r->max = tcp->end_seq - 1;
	return true;
}

/*
 * Stamp decision (seed 001 §III-B, docs/epdn.md): merge into a carried option
 * in place; insert a new one only into a plain 20-byte header of a
 * non-GSO packet that stays within the MTU; otherwise keep the record.
 */
enum epdn_action epdn_stamp_decide(u32 hdr_len, bool has_opt, bool gso,
				   u32 seg_len, u32 mtu)
{
	if (has_opt)
		return EPDN_ACT_MERGE;
	if (gso)
		return EPDN_ACT_DEFER_GSO;
	if (hdr_len != EPDN_IPV4_HDR_MIN)
		return EPDN_ACT_DEFER_OPTS;
	if (seg_len + EPDN_OPT_LEN > mtu)
		return EPDN_ACT_DEFER_MTU;
	return EPDN_ACT_INSERT;
}

/*
 * The time the link takes to send one packet, from samples taken while
 * the queue stayed backlogged (each the mean over EPDN_SERVICE_PKTS
 * dequeues, so that a shaper's bursts average out): a moving average of
 * weight 1/4.  Never 0 once a sample has been taken.
 */
u64 epdn_service_avg(u64 avg_ns, u64 sample_ns)
{
	if (!sample_ns)
		sample_ns = 1;
	if (!avg_ns)
		return sample_ns;
	return avg_ns - (avg_ns >> 2) + (sample_ns >> 2);
}

#define EPDN_LOG2E_16	94548ULL	/* log2(e) * 2^16 */
#define EPDN_IDLE_PKTS_LOG	40	/* beyond 2^40 packets nothing is left */

/*
 * RED's average @qavg (scaled by 2^@wlog, as red_vars keeps it) after the
 * queue has been empty for @idle_ns.  RED's rule (Floyd and Jacobson 1993)
 * treats the idle time as m = idle / @service_ns arrivals at an empty
 * queue: qavg (1 - W)^m with W = 2^-wlog.  With tc's -ln(1 - W) ~ W that
 * is 2^-x, x = m W log2(e): whole halvings, then the chord 1 - f/2 of 2^-f
 * for the fraction f, which keeps the result monotone in the idle time
 * and at most 9 % above the exact one.  Without a service time nothing
 * decays.  @wlog is at most EPDN_RED_EWMA_MAX.
 */
u64 epdn_red_idle_avg(u64 qavg, u64 idle_ns, u64 service_ns, u8 wlog)
{
	u64 m, x, f;

	if (!service_ns)
		return qavg;
	m = div64_u64(idle_ns, service_ns);
	if (m >> EPDN_IDLE_PKTS_LOG)
		return 0;
	x = (m * EPDN_LOG2E_16) >> wlog;
	if ((x >> 16) >= 64)
		return 0;
	qavg >>= x >> 16;
	f = x & 0xffff;
	return qavg - ((qavg >> 17) * f + (((qavg & 0x1ffff) * f) >> 17));
}
