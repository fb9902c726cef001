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

void epdn_range_merge(struct epdn_range *dst, const struct epdn_range *src)
{
	dst->min = epdn_seq_min(dst->min, src->min);
	dst->max = epdn_seq_max(dst->max, src->max);
}

/* ---- hashing: murmur3 over the three key words, random seed ---- */

static u32 epdn_rotl(u32 x, unsigned int r)
{
	return (x << r) | (x >> (32 - r));
}

static u32 epdn_mix(u32 h, u32 k)
{
	k *= 0xcc9e2d51;
	k = epdn_rotl(k, 15);
	k *= 0x1b873593;
	h ^= k;
	h = epdn_rotl(h, 13);
	return h * 5 + 0xe6546b64;
}

static u32 epdn_fmix(u32 h)
{
	h ^= h >> 16;
	h *= 0x85ebca6b;
	h ^= h >> 13;
	h *= 0xc2b2ae35;
	h ^= h >> 16;
	return h;
}

u32 epdn_hash(const struct epdn_key *key, u32 seed)
{
	u32 h = seed;

	h = epdn_mix(h, key->saddr);
	h = epdn_mix(h, key->daddr);
	h = epdn_mix(h, ((u32)key->sport << 16) | key->dport);
	return epdn_fmix(h ^ 12);
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

static u32 epdn_home(const struct epdn_table *t, const struct epdn_key *key)
{
	return (u32)(((u64)epdn_hash(key, t->seed) * t->cap) >> 32);
}

static u32 epdn_next(const struct epdn_table *t, u32 i)
{
	return i + 1 == t->cap ? 0 : i + 1;
}

/* Is x in the cyclic interval (lo, hi]? */
static bool epdn_cyclic_in(u32 lo, u32 x, u32 hi)
{
	if (lo <= hi)
		return lo < x && x <= hi;
	return lo < x || x <= hi;
}

/* ---- table ---- */

u32 epdn_table_slots(u32 flows)
{
	u32 spare = flows / 8;

	return flows + (spare ? spare : 1);
}

/* Table memory per record at capacity, rounded up: seed 001 §V. */
u32 epdn_record_bytes(u32 flows)
{
	u64 bytes = (u64)epdn_table_slots(flows) * sizeof(struct epdn_rec);

	return (u32)((bytes + flows - 1) / flows);
}

void epdn_table_init(struct epdn_table *t, struct epdn_rec *slot, u32 flows,
		     u32 seed)
{
	memset(t, 0, sizeof(*t));
	t->slot = slot;
	t->flows = flows ? flows : 1;
	t->cap = epdn_table_slots(t->flows);
	t->seed = seed;
}

struct epdn_rec *epdn_table_find(struct epdn_table *t,
				 const struct epdn_key *key)
{
	u32 i;

	if (!t->count)
		return NULL;
	/* count <= flows < cap: the probe meets a free slot. */
	for (i = epdn_home(t, key); ; i = epdn_next(t, i)) {
		struct epdn_rec *rec = &t->slot[i];

		if (epdn_slot_free(rec))
			return NULL;
		if (epdn_key_eq(&rec->key, key))
			return rec;
	}
}

/* Backward-shift deletion: pull later members of the cluster into the hole. */
void epdn_table_remove(struct epdn_table *t, struct epdn_rec *rec)
{
	u32 hole = (u32)(rec - t->slot);
	u32 j = hole;

	for (;;) {
		u32 home;

		j = epdn_next(t, j);
		if (epdn_slot_free(&t->slot[j]))
			break;
		home = epdn_home(t, &t->slot[j].key);
		if (epdn_cyclic_in(hole, home, j))
			continue;
		t->slot[hole] = t->slot[j];
		hole = j;
	}
	memset(&t->slot[hole], 0, sizeof(t->slot[hole]));
	t->count--;
}

static void epdn_table_put(struct epdn_table *t, const struct epdn_key *key,
			   u32 min, u32 max, u32 stamp)
{
	u32 i = epdn_home(t, key);

	while (!epdn_slot_free(&t->slot[i]))
		i = epdn_next(t, i);
	t->slot[i].key = *key;
	t->slot[i].min = min;
	t->slot[i].max = max;
	t->slot[i].stamp = stamp;
	t->count++;
}

/*
 * Eviction of the oldest record (docs/epdn.md) without an LRU list: a scan
 * caches the EPDN_VICTIMS oldest records, oldest first.  Every record
 * created or merged later carries a newer stamp, and every other record
 * was younger at scan time, so while one cached victim is still live and
 * unchanged (same key, same stamp) it is the oldest record in the table.
 * One scan thus serves up to EPDN_VICTIMS evictions.
 */
static void epdn_victims_add(struct epdn_table *t, const struct epdn_rec *rec,
			     u32 now)
{
	u32 age = epdn_age(now, rec->stamp);
	u32 n = t->nvict;
	u32 i;

	if (n == EPDN_VICTIMS) {
		if (age <= epdn_age(now, t->vict[n - 1].stamp))
			return;
		n--;
	}
	for (i = n; i > 0 && epdn_age(now, t->vict[i - 1].stamp) < age; i--)
		t->vict[i] = t->vict[i - 1];
	t->vict[i].key = rec->key;
	t->vict[i].stamp = rec->stamp;
	t->nvict = n + 1;
}

static void epdn_victims_refill(struct epdn_table *t, u32 now)
{
	u32 i;

	t->nvict = 0;
	t->vnext = 0;
	for (i = 0; i < t->cap; i++)
		if (!epdn_slot_free(&t->slot[i]))
			epdn_victims_add(t, &t->slot[i], now);
}

static bool epdn_victims_take(struct epdn_table *t)
{
	while (t->vnext < t->nvict) {
		const struct epdn_victim *v = &t->vict[t->vnext++];
		struct epdn_rec *rec = epdn_table_find(t, &v->key);

		if (rec && rec->stamp == v->stamp) {
			epdn_table_remove(t, rec);
			return true;
		}
	}
	return false;
}

static void epdn_evict_oldest(struct epdn_table *t, u32 now)
{
	if (!t->count)
		return;
	if (!epdn_victims_take(t)) {
		epdn_victims_refill(t, now);
		epdn_victims_take(t);
	}
	t->evicted++;
}

/*
 * Record a drop (seed 001 §III-A): merge into the flow's record,
 * E:max = max(E:max, P:n, P:max) and E:min likewise, or create one,
 * evicting the oldest record when the table holds @flows records (§III-C,
 * docs/epdn.md).  Either way the record's timestamp becomes @now.
 */
enum epdn_rec_result epdn_table_record(struct epdn_table *t,
				       const struct epdn_key *key,
				       const struct epdn_range *r, u32 now)
{
	struct epdn_rec *rec = epdn_table_find(t, key);

	t->recorded++;
	if (rec) {
		rec->min = epdn_seq_min(rec->min, r->min);
		rec->max = epdn_seq_max(rec->max, r->max);
		rec->stamp = epdn_stamp(now);
		t->rec_merged++;
		return EPDN_REC_MERGED;
	}
	if (t->count >= t->flows)
		epdn_evict_oldest(t, now);
	epdn_table_put(t, key, r->min, r->max, epdn_stamp(now));
	return EPDN_REC_NEW;
}

/*
 * Ageing (seed 001 §III-C): visit @budget slots from the cursor and remove
 * records idle longer than @idle ticks.  A removal pulls a later record
 * into the same slot, so the slot is examined again before moving on.
 */
u32 epdn_table_age(struct epdn_table *t, u32 now, u32 idle, u32 budget)
{
	u32 removed = 0;
	u32 i;

	if (budget > t->cap)
		budget = t->cap;
	i = t->cursor < t->cap ? t->cursor : 0;
	while (budget--) {
		struct epdn_rec *rec = &t->slot[i];

		while (!epdn_slot_free(rec) &&
		       epdn_age(now, rec->stamp) > idle) {
			epdn_table_remove(t, rec);
			removed++;
		}
		i = epdn_next(t, i);
	}
	t->cursor = i;
	t->aged += removed;
	return removed;
}

static u32 epdn_count_aged(const struct epdn_table *t, u32 now, u32 age)
{
	u32 n = 0;
	u32 i;

	for (i = 0; i < t->cap; i++)
		if (!epdn_slot_free(&t->slot[i]) &&
		    epdn_age(now, t->slot[i].stamp) >= age)
			n++;
	return n;
}

/* Remove up to @n records with age >= @age, scanning the whole table. */
static u32 epdn_evict_aged(struct epdn_table *t, u32 now, u32 age, u32 n)
{
	u32 done = 0;
	u32 i;

	for (i = 0; i < t->cap && done < n; i++) {
		struct epdn_rec *rec = &t->slot[i];

		while (done < n && !epdn_slot_free(rec) &&
		       epdn_age(now, rec->stamp) >= age) {
			epdn_table_remove(t, rec);
			done++;
		}
	}
	return done;
}

/*
 * Evict the oldest records until at most @target remain.  A binary search
 * finds the greatest age A with at least "excess" records aged >= A; all
 * records older than A go, then records of age A until the excess is met.
 * 32 counting passes: O(cap), whatever the excess.
 */
void epdn_table_trim(struct epdn_table *t, u32 target, u32 now)
{
	u32 excess, lo = 0, hi = ~0U, done;

	if (t->count <= target)
		return;
	excess = t->count - target;
	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2 + 1;

		if (epdn_count_aged(t, now, mid) >= excess)
			lo = mid;
		else
			hi = mid - 1;
	}
	done = lo < ~0U ? epdn_evict_aged(t, now, lo + 1, excess) : 0;
	done += epdn_evict_aged(t, now, lo, excess - done);
	t->evicted += done;
	t->nvict = 0;
	t->vnext = 0;
}

/*
 * Move every record of @src into the empty table @dst (a resize), keeping
 * the newest dst->flows records.  Counters carry over; @src ends empty.
 */
void epdn_table_move(struct epdn_table *dst, struct epdn_table *src, u32 now)
{
	u32 i;

	epdn_table_trim(src, dst->flows, now);
	for (i = 0; i < src->cap; i++) {
		const struct epdn_rec *rec = &src->slot[i];

		if (!epdn_slot_free(rec))
			epdn_table_put(dst, &rec->key, rec->min, rec->max,
				       rec->stamp);
	}
	dst->recorded = src->recorded;
	dst->rec_merged = src->rec_merged;
	dst->evicted = src->evicted;
	dst->aged = src->aged;
	epdn_table_clear(src);
}

void epdn_table_clear(struct epdn_table *t)
{
	memset(t->slot, 0, (size_t)t->cap * sizeof(*t->slot));
	t->count = 0;
	t->cursor = 0;
	t->nvict = 0;
	t->vnext = 0;
}

/* ---- option codec (docs/epdn.md, include/satnet/epdn_wire.h) ---- */

static void epdn_put_be32(u8 *p, u32 v)
{
	p[0] = (u8)(v >> 24);
	p[1] = (u8)(v >> 16);
	p[2] = (u8)(v >> 8);
	p[3] = (u8)v;
}

static u32 epdn_get_be32(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

static u16 epdn_get_be16(const u8 *p)
{
	return (u16)(p[0] << 8 | p[1]);
}

void epdn_opt_encode(u8 *buf, const struct epdn_opt *o)
{
	buf[EPDN_OFF_TYPE] = EPDN_OPT_TYPE;
	buf[EPDN_OFF_LEN] = EPDN_OPT_LEN;
	buf[EPDN_OFF_TTL] = o->ttl;
	buf[EPDN_OFF_VERFLAGS] = EPDN_VERFLAGS(o->flags);
	epdn_put_be32(buf + EPDN_OFF_MIN, o->min);
	epdn_put_be32(buf + EPDN_OFF_MAX, o->max);
}

int epdn_opt_decode(const u8 *buf, u32 len, struct epdn_opt *o)
{
	if (len < EPDN_OPT_LEN || buf[EPDN_OFF_TYPE] != EPDN_OPT_TYPE ||
	    buf[EPDN_OFF_LEN] != EPDN_OPT_LEN ||
	    buf[EPDN_OFF_VERFLAGS] >> EPDN_VER_SHIFT != EPDN_VERSION)
		return EPDN_EBADMSG;
	o->ttl = buf[EPDN_OFF_TTL];
	o->flags = buf[EPDN_OFF_VERFLAGS] & EPDN_FLAGS_MASK;
	o->min = epdn_get_be32(buf + EPDN_OFF_MIN);
	o->max = epdn_get_be32(buf + EPDN_OFF_MAX);
	return EPDN_OK;
}

/*
 * Walk an IPv4 option list (RFC 791): return the offset of the EPDN
 * option, EPDN_ENOENT, or EPDN_EBADMSG when a length is inconsistent.
 */
int epdn_opt_find(const u8 *opts, u32 len)
{
	u32 i = 0;

	while (i < len) {
		u8 type = opts[i];
		u8 olen;

		if (type == EPDN_IPOPT_EOL)
			return EPDN_ENOENT;
		if (type == EPDN_IPOPT_NOP) {
			i++;
			continue;
		}
		if (i + 1 >= len)
			return EPDN_EBADMSG;
		olen = opts[i + 1];
		if (olen < 2 || olen > len - i)
			return EPDN_EBADMSG;
		if (type == EPDN_OPT_TYPE)
			return olen == EPDN_OPT_LEN ? (int)i : EPDN_EBADMSG;
		i += olen;
	}
	return EPDN_ENOENT;
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
 * record, a filled one keeps the min of mins and the max of maxes.
 */
void epdn_opt_add_range(struct epdn_opt *o, const struct epdn_range *r,
			u8 flags)
{
	if (o->flags & EPDN_F_EMPTY) {
		o->min = r->min;
		o->max = r->max;
		o->flags &= ~EPDN_F_EMPTY;
	} else {
		o->min = epdn_seq_min(o->min, r->min);
		o->max = epdn_seq_max(o->max, r->max);
	}
	o->flags |= flags & EPDN_FLAGS_MASK;
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

/* One EPDN hop: EPDN-TTL falls with TTL (seed 001 §III-D), never wraps. */
u8 epdn_ttl_hop(u8 ettl)
{
	return ettl ? ettl - 1 : 0;
}

/* ---- header parsing ---- */

/*
 * Check an IPv4 header copied into @hdr (@caplen bytes, up to 60) from a
 * packet with @avail bytes from the IP header on.  A GSO packet's length
 * comes from @avail (tot_len may be 0 for BIG TCP).
 */
int epdn_parse_ipv4(const u8 *hdr, u32 caplen, u32 avail, bool gso,
		    struct epdn_ip *ip)
{
	u32 tot_len;
	int off;

	if (caplen < EPDN_IPV4_HDR_MIN || hdr[0] >> 4 != 4)
		return EPDN_EBADMSG;
	ip->hdr_len = (hdr[0] & 0x0f) * 4;
	if (ip->hdr_len < EPDN_IPV4_HDR_MIN || ip->hdr_len > caplen ||
	    ip->hdr_len > avail)
		return EPDN_EBADMSG;
	tot_len = epdn_get_be16(hdr + 2);
	if (gso)
		tot_len = avail;
	if (tot_len < ip->hdr_len || tot_len > avail)
		return EPDN_EBADMSG;
	ip->l3_len = tot_len;
	ip->frag = (epdn_get_be16(hdr + 6) & 0x3fff) != 0;
	ip->ttl = hdr[8];
	ip->proto = hdr[9];
	memcpy(&ip->saddr, hdr + 12, 4);
	memcpy(&ip->daddr, hdr + 16, 4);
	ip->opt_off = EPDN_ENOENT;
	if (ip->hdr_len == EPDN_IPV4_HDR_MIN)
		return EPDN_OK;
	off = epdn_opt_find(hdr + EPDN_IPV4_HDR_MIN,
			    ip->hdr_len - EPDN_IPV4_HDR_MIN);
	if (off == EPDN_EBADMSG)
		return EPDN_EBADMSG;
	if (off >= 0) {
		struct epdn_opt o;
		u32 at = EPDN_IPV4_HDR_MIN + (u32)off;

		/* An option of another version counts as a foreign option. */
		if (epdn_opt_decode(hdr + at, ip->hdr_len - at, &o) == EPDN_OK)
			ip->opt_off = (int)at;
	}
	return EPDN_OK;
}

/* Check a TCP header (@caplen bytes copied) of a segment of @l4_len bytes. */
int epdn_parse_tcp(const u8 *th, u32 caplen, u32 l4_len,
		   struct epdn_tcp *tcp)
{
	u8 flags;

	if (caplen < 20 || l4_len < 20)
		return EPDN_EBADMSG;
	tcp->hdr_len = (th[12] >> 4) * 4;
	if (tcp->hdr_len < 20 || tcp->hdr_len > l4_len)
		return EPDN_EBADMSG;
	memcpy(&tcp->sport, th, 2);
	memcpy(&tcp->dport, th + 2, 2);
	tcp->seq = epdn_get_be32(th + 4);
	flags = th[13];
	tcp->end_seq = tcp->seq + (l4_len - tcp->hdr_len) +
		       !!(flags & 0x02) + !!(flags & 0x01);
	return EPDN_OK;
}

void epdn_flow_key(const struct epdn_ip *ip, const struct epdn_tcp *tcp,
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
bool epdn_tcp_range(const struct epdn_tcp *tcp, struct epdn_range *r)
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
