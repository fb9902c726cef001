/* SPDX-License-Identifier: GPL-2.0 */
/*
 * EPDN gateway core: the drop record table, sequence-range merging, the
 * stamp decision and ageing (the option's codec is
 * include/satnet/epdn_opt.h).  Plain C with no kernel dependency: sch_epdn
 * links sch_epdn/epdn_core.c, and the userspace unit test includes the
 * same file.  The caller owns all memory and locking;
 * the core never allocates and never sleeps.
 *
 * Paper: A. Sathiaseelan, T. Radzik, "RN-TCP with EPDN" (seed 001), §III
 * A-D; EPDNv3 in "TCP-R with EPDN" (seed 000) §2.1.
 */
#ifndef SATNET_EPDN_CORE_H
#define SATNET_EPDN_CORE_H

#include <satnet/types.h>
#ifdef __KERNEL__
#include <linux/string.h>
#else
#include <string.h>
#endif

#include <satnet/epdn_wire.h>
#include <satnet/epdn_opt.h>
#include <satnet/epdn_uapi.h>
#include <satnet/hdr.h>
#include <satnet/seq.h>

/*
 * Flow key: the TCP/IPv4 5-tuple.  The protocol is always TCP and is not
 * stored.  Addresses and ports stay in network byte order, as read.
 */
struct epdn_key {
	u32 saddr;
	u32 daddr;
	u16 sport;
	u16 dport;
};

/* Inclusive range of TCP byte sequence numbers, host byte order. */
struct epdn_range {
	u32 min;
	u32 max;
};

/*
 * One record E = <flowid, timestamp, max, min> (seed 001 §III), and when
 * it first left in a packet: 28 bytes.  stamp == 0 marks a free slot; the
 * core never stores a zero stamp or a zero sent.
 */
struct epdn_rec {
	struct epdn_key key;
	u32 min;
	u32 max;
	u32 stamp;		/* caller's clock (jiffies), last drop */
	u32 sent;		/* first carrier since then, or 0: none yet */
};

/*
 * A packet starts a record's hold only when its sequence numbers lie
 * within this distance of the record's range: a blind forger has to
 * guess them (docs/epdn.md, Failing safe).
 */
#define EPDN_NEAR	0x1000000U	/* 16 MiB */

/* The 128-bit SipHash key of a table, random per table. */
struct epdn_hkey {
	u64 k0;
	u64 k1;
};

#define EPDN_WAYS	8	/* records per set */

/*
 * Set-associative table (after sch_cake's flow table): a flow's record
 * lives in one of the EPDN_WAYS slots of the set its keyed hash selects,
 * and each set keeps its records in its first ways.  Every operation on
 * one flow reads at most EPDN_WAYS slots; a full set gives up its oldest
 * record.  Records idle longer than @idle are ignored on lookup and freed
 * by it or by the incremental sweep.
 *
 * Stamping copies a record into the packet and leaves it: every data
 * packet of the flow carries it until @hold ticks after the first carrier
 * near its range left (a later drop starts that again), or until it has
 * been idle for @idle ticks.  A set that gives up a record still in force
 * (eviction, span restart) remembers when, in @lost, for @idle ticks, the
 * longest the record would have lived: the flows of that set are then
 * stamped UNKNOWN.  A resize that drops live records does the same for
 * every set (@lost_all).
 */
struct epdn_table {
	struct epdn_rec *slot;	/* nsets * EPDN_WAYS slots, zeroed */
	u32 *lost;		/* per set: last eviction of a live record */
	u32 nsets;
	u32 cap;		/* slots: the most records the table holds */
	u32 count;		/* live records (some may be expired) */
	u32 nlost;		/* sets with a lost stamp (some may be expired) */
	u32 lost_all;		/* live records flushed by a resize, or 0 */
	u32 idle;		/* ticks a record may stay idle */
	u32 hold;		/* ticks a record stays after its carrier */
	u32 cursor;		/* next set the sweep visits */
	struct epdn_hkey hkey;
	u64 recorded;		/* drops recorded (new + merged) */
	u64 rec_merged;		/* drops merged into a live record */
	u64 evicted;		/* live records given up by a full set */
	u64 aged;		/* records removed after idle */
	u64 released;		/* records removed after their hold */
	u64 flushed;		/* records dropped by a resize */
	u64 span_resets;	/* merges past EPDN_SPAN_MAX, restarted */
};

/*
 * What a data packet of a flow picks up at a hop: the flow's record, and
 * whether its set has given up a record in force (UNKNOWN).
 */
struct epdn_info {
	struct epdn_range r;	/* the record's range, when has_range */
	bool has_range;
	bool unknown;
};

enum epdn_rec_result {
	EPDN_REC_NEW,
	EPDN_REC_MERGED,
};

enum epdn_action {
	EPDN_ACT_INSERT,	/* add a new option to the header */
	EPDN_ACT_MERGE,		/* merge into the option it carries */
	EPDN_ACT_DEFER_MTU,	/* would exceed the MTU: keep the record */
	EPDN_ACT_DEFER_OPTS,	/* other IP options: keep the record */
	EPDN_ACT_DEFER_GSO,	/* GSO packet: keep the record */
};

bool epdn_range_valid(const struct epdn_range *r);
bool epdn_range_merge(struct epdn_range *dst, const struct epdn_range *src);

/* Record table. */
u32 epdn_table_sets(u32 flows);
u32 epdn_table_slots(u32 flows);
u64 epdn_table_memory(u32 flows);
u32 epdn_record_bytes(u32 flows);
u64 epdn_table_lost_bytes(u32 flows);
void epdn_table_init(struct epdn_table *t, struct epdn_rec *slot, u32 *lost,
		     u32 flows, u32 idle, const struct epdn_hkey *hkey);
void epdn_table_resize(struct epdn_table *t, struct epdn_rec *slot,
		       u32 *lost, u32 flows, const struct epdn_hkey *hkey,
		       u32 now);
u64 epdn_hash(const struct epdn_key *key, const struct epdn_hkey *k);
struct epdn_rec *epdn_table_find(struct epdn_table *t,
				 const struct epdn_key *key, u32 now);
bool epdn_table_info(struct epdn_table *t, const struct epdn_key *key,
		     const struct epdn_range *pkt, u32 now,
		     struct epdn_info *info);
bool epdn_table_busy(const struct epdn_table *t);
void epdn_table_mark_lost(struct epdn_table *t, const struct epdn_key *key,
			  u32 now);
void epdn_table_remove(struct epdn_table *t, struct epdn_rec *rec);
enum epdn_rec_result epdn_table_record(struct epdn_table *t,
				       const struct epdn_key *key,
				       const struct epdn_range *r, u32 now);
u32 epdn_table_sweep(struct epdn_table *t, u32 now, u32 budget);

/* Option codec. */
int epdn_ip_opt(const u8 *hdr, const struct sat_ip *ip);
bool epdn_opt_range(const struct epdn_opt *o, struct epdn_range *r);
bool epdn_opt_add_range(struct epdn_opt *o, const struct epdn_range *r,
			u8 flags);
void epdn_opt_new(struct epdn_opt *o, u8 ttl, const struct epdn_range *r,
		  u8 flags);
bool epdn_opt_add_info(struct epdn_opt *o, const struct epdn_info *info,
		       u8 flags);
void epdn_opt_new_info(struct epdn_opt *o, u8 ttl,
		       const struct epdn_info *info, u8 flags);
u8 epdn_ttl_hop(u8 ettl, u8 ttl);

/* The flow of a parsed packet (include/satnet/hdr.h), the stamp decision. */
void epdn_flow_key(const struct sat_ip *ip, const struct sat_tcp *tcp,
		   struct epdn_key *key);
bool epdn_tcp_range(const struct sat_tcp *tcp, struct epdn_range *r);
enum epdn_action epdn_stamp_decide(u32 hdr_len, bool has_opt, bool gso,
				   u32 seg_len, u32 mtu);

/* RED's average over an idle queue. */
#define EPDN_SERVICE_PKTS	16	/* packets per service time sample */
u64 epdn_service_avg(u64 avg_ns, u64 sample_ns);
u64 epdn_red_idle_avg(u64 qavg, u64 idle_ns, u64 service_ns, u8 wlog);

#endif /* SATNET_EPDN_CORE_H */
