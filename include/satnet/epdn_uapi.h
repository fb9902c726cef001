/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Netlink interface of the "epdn" qdisc: the attributes nested in
 * TCA_OPTIONS and the TCA_STATS_APP block, shared by sch_epdn and the tc
 * plugin q_epdn.so.  Every attribute is optional on change: an absent
 * attribute keeps its value.  Dump always sends every attribute.
 */
#ifndef SATNET_EPDN_UAPI_H
#define SATNET_EPDN_UAPI_H

#include <linux/types.h>

enum {
	TCA_EPDN_UNSPEC,
	TCA_EPDN_LIMIT,		/* u32: queue limit, packets */
	TCA_EPDN_BYTE_LIMIT,	/* u32: queue limit, bytes; 0 = none */
	TCA_EPDN_MODE,		/* u8: 2 (EPDNv2) or 3 (EPDNv3) */
	TCA_EPDN_IDLE,		/* u32: record idle timeout, microseconds */
	TCA_EPDN_FLOWS,		/* u32: maximum number of records */
	TCA_EPDN_CORRUPT,	/* u32: frame error probability, 0..~0U */
	TCA_EPDN_RED,		/* u8: 1 = RED on, 0 = plain tail drop */
	TCA_EPDN_RED_MIN,	/* u32: RED min threshold, bytes */
	TCA_EPDN_RED_MAX,	/* u32: RED max threshold, bytes */
	TCA_EPDN_RED_PROB,	/* u32: RED max probability, 0..~0U */
	TCA_EPDN_RED_EWMA,	/* u8: RED Wlog, average weight 2^-Wlog */
	TCA_EPDN_RED_ECN,	/* u8: 1 = mark ECT packets instead of drop */
	TCA_EPDN_RED_HARDDROP,	/* u8: 1 = drop even ECT above max */
	__TCA_EPDN_MAX
};

#define TCA_EPDN_MAX	(__TCA_EPDN_MAX - 1)

#define EPDN_MODE_V2	2
#define EPDN_MODE_V3	3

/* Bounds the kernel enforces (the plugin checks them too). */
#define EPDN_LIMIT_MAX		0x100000	/* packets */
#define EPDN_FLOWS_MIN		8		/* one set of the table */
#define EPDN_FLOWS_MAX		0x100000
#define EPDN_IDLE_MIN_US	1000U		/* 1 ms */
#define EPDN_IDLE_MAX_US	3600000000U	/* 1 hour */
#define EPDN_RED_EWMA_MAX	23

/* Defaults. */
#define EPDN_DEF_LIMIT		1000
#define EPDN_DEF_MODE		EPDN_MODE_V3
#define EPDN_DEF_IDLE_US	2000000U	/* 2 s */
#define EPDN_DEF_FLOWS		65536
#define EPDN_DEF_RED_EWMA	9

/* tc -s qdisc show: the counters of one epdn qdisc. */
struct tc_epdn_xstats {
	__u64	recorded;	/* drops written into the table */
	__u64	rec_merged;	/* ... of which merged into a live record */
	__u64	records;	/* live records now */
	__u64	stamps;		/* options inserted into packets */
	__u64	merges;		/* records merged into a carried option */
	__u64	mtu_deferred;	/* record kept: option would exceed MTU */
	__u64	opt_deferred;	/* record kept: other IP options present */
	__u64	gso_deferred;	/* record kept: GSO packet */
	__u64	evicted;	/* records evicted because the table was full */
	__u64	aged;		/* records removed after idle timeout */
	__u64	ttl_updates;	/* carried options whose EPDN-TTL we updated */
	__u64	untouched;	/* packets passed through unchanged */
	__u64	not_tcp;	/* IPv4 packets that are not TCP */
	__u64	not_ipv4;	/* IPv6 and other protocols */
	__u64	fragments;	/* IPv4 fragments */
	__u64	malformed;	/* truncated or inconsistent headers */
	__u64	nomem;		/* header could not be made writable */
	__u64	overflow_drops;	/* tail drops: limit or byte limit */
	__u64	corrupt_drops;	/* emulated CRC failures */
	__u64	red_drops;	/* RED early and forced drops */
	__u64	red_marks;	/* RED CE marks */
	__u32	flows;		/* table capacity in records */
	__u32	record_bytes;	/* table memory per record, bytes */
	__u64	memory_used;	/* table memory, bytes (memcg-accounted) */
	__u64	flushed;	/* records dropped by a change of flows */
	__u64	span_resets;	/* merges past EPDN_SPAN_MAX: restarted */
	__u64	unshared;	/* shared packets copied before stamping */
	__u64	unknown_stamps;	/* packets this hop marked UNKNOWN */
	__u64	released;	/* records removed after their hold */
};

/*
 * A record or option never spans more sequence space than this: beyond
 * 2^31 bytes the ends can no longer be ordered, and no TCP window (at
 * most 2^30 bytes) holds more.
 */
#define EPDN_SPAN_MAX		0x40000000U

#endif /* SATNET_EPDN_UAPI_H */
