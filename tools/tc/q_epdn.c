// SPDX-License-Identifier: GPL-2.0
/*
 * q_epdn.so: tc plugin for the "epdn" qdisc (sch_epdn/).
 *
 * tc dlopen()s q_<kind>.so from its library directory (TC_LIB_DIR
 * overrides it) and looks up "<kind>_qdisc_util".  iproute2 ships no
 * development headers, so the few declarations the plugin needs are
 * written out here, matching iproute2 6.1 (Debian 12): struct qdisc_util
 * (tc/tc_util.h), the libnetlink helpers and the json_print functions
 * that tc exports (nm -D /usr/sbin/tc).
 */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <satnet/epdn_uapi.h>

#include "tc_abi.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* tc's own request buffer is larger; 1024 is what its qdiscs pass. */
#define EPDN_MAXLEN	1024
#define FRAC_ONE	4294967296.0	/* 2^32: probabilities are u32 */

/* ---- parsing ---- */

static void explain(void)
{
	fprintf(stderr,
		"Usage: ... epdn [ limit PACKETS ] [ bytelimit BYTES ] [ mode v2|v3 ]\n"
		"                [ idle TIME ] [ flows NUMBER ] [ corrupt PERCENT ]\n"
		"                [ red min BYTES max BYTES probability P\n"
		"                      [ ewma LOG ] [ ecn ] [ harddrop ] | red off ]\n"
		"  limit     queue limit in packets, 1..%u (default %u)\n"
		"  bytelimit queue limit in bytes, 0 = none; suffixes b k kb m mb g gb\n"
		"  mode      v2: record every drop, corruption included;\n"
		"            v3: record congestion drops only (default)\n"
		"  idle      drop records idle longer than TIME (1ms..1h, default 2s);\n"
		"            units s ms us, a bare number is microseconds\n"
		"  flows     maximum number of drop records, %u..%u (default %u)\n"
		"  corrupt   emulated link-layer CRC failure rate at this hop, e.g. 0.1%%\n"
		"  red       RED on the queue: min/max thresholds in bytes,\n"
		"            probability 0..1, ewma weight 2^-LOG (default %u),\n"
		"            ecn marks ECN-capable packets instead of dropping,\n"
		"            harddrop drops even those above max\n",
		EPDN_LIMIT_MAX, EPDN_DEF_LIMIT, EPDN_FLOWS_MIN, EPDN_FLOWS_MAX,
		EPDN_DEF_FLOWS, EPDN_DEF_RED_EWMA);
}

static int bad(const char *what, const char *arg)
{
	if (arg)
		fprintf(stderr, "epdn: invalid %s \"%s\"\n", what, arg);
	else
		fprintf(stderr, "epdn: invalid %s\n", what);
	explain();
	return -1;
}

static int parse_u32(const char *s, unsigned long lo, unsigned long hi,
		     __u32 *out)
{
	unsigned long v;
	char *end;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = (__u32)v;
	return 0;
}

/* Bytes with tc's binary suffixes: 1500, 64k, 64kb, 1m, 1mb, 1g. */
static int parse_size(const char *s, __u32 *out)
{
	static const struct { const char *sfx; double mult; } units[] = {
		{ "", 1 }, { "b", 1 }, { "k", 1024 }, { "kb", 1024 },
		{ "m", 1048576 }, { "mb", 1048576 },
		{ "g", 1073741824 }, { "gb", 1073741824 },
	};
	char *end;
	double v;
	size_t i;

	if (!s || !*s || *s == '-')
		return -1;
	v = strtod(s, &end);
	if (end == s)
		return -1;
	for (i = 0; i < ARRAY_SIZE(units); i++) {
		if (strcasecmp(end, units[i].sfx) == 0) {
			v *= units[i].mult;
			if (v > UINT_MAX)
				return -1;
			*out = (__u32)v;
			return 0;
		}
	}
	return -1;
}

/* Time in microseconds: 2s, 500ms, 100us; a bare number is microseconds. */
static int parse_time_us(const char *s, __u32 *out)
{
	static const struct { const char *sfx; double mult; } units[] = {
		{ "", 1 }, { "us", 1 }, { "usec", 1 },
		{ "ms", 1e3 }, { "msec", 1e3 }, { "s", 1e6 }, { "sec", 1e6 },
	};
	char *end;
	double v;
	size_t i;

	if (!s || !*s || *s == '-')
		return -1;
	v = strtod(s, &end);
	if (end == s)
		return -1;
	for (i = 0; i < ARRAY_SIZE(units); i++) {
		if (strcasecmp(end, units[i].sfx) == 0) {
			v *= units[i].mult;
			if (v > UINT_MAX)
				return -1;
			*out = (__u32)llround(v);
			return 0;
		}
	}
	return -1;
}

/* A fraction 0..1 as a u32 scaled by 2^32, saturating at ~0U. */
static __u32 frac_to_u32(double f)
{
	double v = f * FRAC_ONE;

	if (v >= FRAC_ONE - 1)
		return UINT_MAX;
	return (__u32)llround(v);
}

/* netem-style percentage: "0.1%" or "0.1" both mean 0.1 %. */
static int parse_percent(const char *s, __u32 *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -1;
	v = strtod(s, &end);
	if (end == s || (*end && strcmp(end, "%")) || v < 0 || v > 100)
		return -1;
	*out = frac_to_u32(v / 100);
	return 0;
}

static int parse_prob(const char *s, __u32 *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -1;
	v = strtod(s, &end);
	if (end == s || *end || v <= 0 || v > 1)
		return -1;
	*out = frac_to_u32(v);
	return 0;
}

struct epdn_args {
	__u32 limit, byte_limit, idle, flows, corrupt;
	__u32 red_min, red_max, red_prob;
	__u8 mode, red, red_ewma, red_ecn, red_harddrop;
	bool has_limit, has_byte_limit, has_idle, has_flows, has_corrupt;
	bool has_mode, has_red, has_red_min, has_red_max, has_red_prob;
	bool has_red_ewma;
};

/* "red off" or "red min A max B probability P [ewma N] [ecn] [harddrop]" */
static int parse_red(int *argcp, char ***argvp, struct epdn_args *a)
{
	int argc = *argcp;
	char **argv = *argvp;
	__u32 v;

	a->has_red = true;
	if (argc > 1 && strcmp(argv[1], "off") == 0) {
		a->red = 0;
		*argcp = argc - 1;
		*argvp = argv + 1;
		return 0;
	}
	a->red = 1;
	a->red_ecn = 0;
	a->red_harddrop = 0;
	while (argc > 1) {
		const char *kw = argv[1];

		if (strcmp(kw, "ecn") == 0) {
			a->red_ecn = 1;
		} else if (strcmp(kw, "harddrop") == 0) {
			a->red_harddrop = 1;
		} else if (argc > 2 && strcmp(kw, "min") == 0) {
			if (parse_size(argv[2], &a->red_min))
				return bad("RED min", argv[2]);
			a->has_red_min = true;
		} else if (argc > 2 && strcmp(kw, "max") == 0) {
			if (parse_size(argv[2], &a->red_max) || !a->red_max)
				return bad("RED max", argv[2]);
			a->has_red_max = true;
		} else if (argc > 2 && strcmp(kw, "probability") == 0) {
			if (parse_prob(argv[2], &a->red_prob))
				return bad("RED probability (0 < P <= 1)",
					   argv[2]);
			a->has_red_prob = true;
		} else if (argc > 2 && strcmp(kw, "ewma") == 0) {
			if (parse_u32(argv[2], 0, EPDN_RED_EWMA_MAX, &v))
				return bad("RED ewma (0..23)", argv[2]);
			a->red_ewma = (__u8)v;
			a->has_red_ewma = true;
		} else {
			break;
		}
		if (strcmp(kw, "ecn") && strcmp(kw, "harddrop")) {
			argc--;
			argv++;
		}
		argc--;
		argv++;
	}
	*argcp = argc;
	*argvp = argv;
	if (a->has_red_min && a->has_red_max && a->red_min >= a->red_max)
		return bad("RED thresholds: min must be below max", NULL);
	return 0;
}

static int parse_mode(const char *s, __u8 *mode)
{
	if (!s)
		return -1;
	if (strcmp(s, "v2") == 0 || strcmp(s, "2") == 0)
		*mode = EPDN_MODE_V2;
	else if (strcmp(s, "v3") == 0 || strcmp(s, "3") == 0)
		*mode = EPDN_MODE_V3;
	else
		return -1;
	return 0;
}

/* One "keyword value" pair; returns values consumed or -1. */
static int parse_one(const char *kw, const char *val, struct epdn_args *a)
{
	if (strcmp(kw, "limit") == 0) {
		if (parse_u32(val, 1, EPDN_LIMIT_MAX, &a->limit))
			return bad("limit (1..1048576 packets)", val);
		a->has_limit = true;
	} else if (strcmp(kw, "bytelimit") == 0) {
		if (parse_size(val, &a->byte_limit) ||
		    (a->byte_limit && a->byte_limit < 64))
			return bad("bytelimit (0 or at least 64 bytes)", val);
		a->has_byte_limit = true;
	} else if (strcmp(kw, "mode") == 0) {
		if (parse_mode(val, &a->mode))
			return bad("mode (v2 or v3)", val);
		a->has_mode = true;
	} else if (strcmp(kw, "idle") == 0) {
		if (parse_time_us(val, &a->idle) ||
		    a->idle < EPDN_IDLE_MIN_US || a->idle > EPDN_IDLE_MAX_US)
			return bad("idle (1ms..1h)", val);
		a->has_idle = true;
	} else if (strcmp(kw, "flows") == 0) {
		if (parse_u32(val, EPDN_FLOWS_MIN, EPDN_FLOWS_MAX, &a->flows))
			return bad("flows (8..1048576)", val);
		a->has_flows = true;
	} else if (strcmp(kw, "corrupt") == 0) {
		if (parse_percent(val, &a->corrupt))
			return bad("corrupt (0..100%)", val);
		a->has_corrupt = true;
	} else {
		return bad("option", kw);
	}
	return 1;
}

static void put_args(struct nlmsghdr *n, const struct epdn_args *a)
{
	if (a->has_limit)
		addattr32(n, EPDN_MAXLEN, TCA_EPDN_LIMIT, a->limit);
	if (a->has_byte_limit)
		addattr32(n, EPDN_MAXLEN, TCA_EPDN_BYTE_LIMIT, a->byte_limit);
	if (a->has_mode)
		addattr8(n, EPDN_MAXLEN, TCA_EPDN_MODE, a->mode);
	if (a->has_idle)
		addattr32(n, EPDN_MAXLEN, TCA_EPDN_IDLE, a->idle);
	if (a->has_flows)
		addattr32(n, EPDN_MAXLEN, TCA_EPDN_FLOWS, a->flows);
	if (a->has_corrupt)
		addattr32(n, EPDN_MAXLEN, TCA_EPDN_CORRUPT, a->corrupt);
	if (!a->has_red)
		return;
	addattr8(n, EPDN_MAXLEN, TCA_EPDN_RED, a->red);
	if (!a->red)
		return;
	if (a->has_red_min)
		addattr32(n, EPDN_MAXLEN, TCA_EPDN_RED_MIN, a->red_min);
	if (a->has_red_max)
		addattr32(n, EPDN_MAXLEN, TCA_EPDN_RED_MAX, a->red_max);
	if (a->has_red_prob)
		addattr32(n, EPDN_MAXLEN, TCA_EPDN_RED_PROB, a->red_prob);
	if (a->has_red_ewma)
		addattr8(n, EPDN_MAXLEN, TCA_EPDN_RED_EWMA, a->red_ewma);
	addattr8(n, EPDN_MAXLEN, TCA_EPDN_RED_ECN, a->red_ecn);
	addattr8(n, EPDN_MAXLEN, TCA_EPDN_RED_HARDDROP, a->red_harddrop);
}

static int epdn_parse_opt(struct qdisc_util *qu, int argc, char **argv,
			  struct nlmsghdr *n, const char *dev)
{
	struct epdn_args a = { 0 };
	struct rtattr *nest;

	(void)qu;
	(void)dev;
	while (argc > 0) {
		if (strcmp(*argv, "help") == 0) {
			explain();
			return -1;
		}
		if (strcmp(*argv, "red") == 0) {
			if (parse_red(&argc, &argv, &a))
				return -1;
			argc--;
			argv++;
			continue;
		}
		if (argc < 2)
			return bad("option without a value", *argv);
		if (parse_one(argv[0], argv[1], &a) < 0)
			return -1;
		argc -= 2;
		argv += 2;
	}
	nest = addattr_nest(n, EPDN_MAXLEN, TCA_OPTIONS | NLA_F_NESTED);
	put_args(n, &a);
	addattr_nest_end(n, nest);
	return 0;
}

/* ---- printing: the same syntax the parser reads ---- */

static __u32 get_u32(struct rtattr *tb[], int id, __u32 dflt)
{
	if (!tb[id] || RTA_PAYLOAD(tb[id]) < sizeof(__u32))
		return dflt;
	return *(__u32 *)RTA_DATA(tb[id]);
}

static __u8 get_u8(struct rtattr *tb[], int id, __u8 dflt)
{
	if (!tb[id] || RTA_PAYLOAD(tb[id]) < sizeof(__u8))
		return dflt;
	return *(__u8 *)RTA_DATA(tb[id]);
}

static void print_text(const char *fmt, const char *s)
{
	print_color_string(PRINT_FP, COLOR_NONE, NULL, fmt, s);
}

/* JSON gets the number, text output gets "name <formatted>" */
static void print_num(const char *key, const char *text, uint64_t v)
{
	char buf[96];

	print_color_u64(PRINT_JSON, COLOR_NONE, key, NULL, v);
	snprintf(buf, sizeof(buf), "%s %s ", key, text);
	print_text("%s", buf);
}

static void print_bytes(const char *key, __u32 v)
{
	char text[32];

	snprintf(text, sizeof(text), "%ub", v);
	print_num(key, text, v);
}

static void print_idle(__u32 us)
{
	char text[32];

	if (us % 1000000 == 0)
		snprintf(text, sizeof(text), "%us", us / 1000000);
	else if (us % 1000 == 0)
		snprintf(text, sizeof(text), "%ums", us / 1000);
	else
		snprintf(text, sizeof(text), "%uus", us);
	print_num("idle", text, us);
}

/* A u32 fraction of 2^32: JSON gets the scaled float, text "key 0.1%" */
static void print_frac(const char *key, __u32 v, double scale,
		       const char *unit)
{
	char buf[64];

	print_color_float(PRINT_JSON, COLOR_NONE, key, NULL,
			  v / FRAC_ONE * scale);
	snprintf(buf, sizeof(buf), "%s %g%s ", key, v / FRAC_ONE * scale,
		 unit);
	print_text("%s", buf);
}

static void print_flag(const char *key)
{
	print_color_bool(PRINT_JSON, COLOR_NONE, key, NULL, true);
	print_text("%s ", key);
}

static void print_red(struct rtattr *tb[])
{
	char text[16];

	print_flag("red");
	print_bytes("min", get_u32(tb, TCA_EPDN_RED_MIN, 0));
	print_bytes("max", get_u32(tb, TCA_EPDN_RED_MAX, 0));
	print_frac("probability", get_u32(tb, TCA_EPDN_RED_PROB, 0), 1, "");
	snprintf(text, sizeof(text), "%u", get_u8(tb, TCA_EPDN_RED_EWMA, 0));
	print_num("ewma", text, get_u8(tb, TCA_EPDN_RED_EWMA, 0));
	if (get_u8(tb, TCA_EPDN_RED_ECN, 0))
		print_flag("ecn");
	if (get_u8(tb, TCA_EPDN_RED_HARDDROP, 0))
		print_flag("harddrop");
}

static int epdn_print_opt(struct qdisc_util *qu, FILE *f, struct rtattr *opt)
{
	struct rtattr *tb[TCA_EPDN_MAX + 1];
	char text[32];
	__u32 limit;
	__u8 mode;

	(void)qu;
	(void)f;
	if (!opt)
		return 0;
	parse_rtattr_flags(tb, TCA_EPDN_MAX, RTA_DATA(opt), RTA_PAYLOAD(opt),
			   NLA_F_NESTED);
	limit = get_u32(tb, TCA_EPDN_LIMIT, 0);
	snprintf(text, sizeof(text), "%u", limit);
	print_num("limit", text, limit);
	print_bytes("bytelimit", get_u32(tb, TCA_EPDN_BYTE_LIMIT, 0));
	mode = get_u8(tb, TCA_EPDN_MODE, 0);
	snprintf(text, sizeof(text), "v%u", mode);
	print_color_string(PRINT_ANY, COLOR_NONE, "mode", "mode %s ", text);
	print_idle(get_u32(tb, TCA_EPDN_IDLE, 0));
	snprintf(text, sizeof(text), "%u", get_u32(tb, TCA_EPDN_FLOWS, 0));
	print_num("flows", text, get_u32(tb, TCA_EPDN_FLOWS, 0));
	print_frac("corrupt", get_u32(tb, TCA_EPDN_CORRUPT, 0), 100, "%");
	if (get_u8(tb, TCA_EPDN_RED, 0))
		print_red(tb);
	return 0;
}

/* ---- tc -s: the counters ---- */

static void print_counter(const char *key, uint64_t v)
{
	char fmt[64];

	snprintf(fmt, sizeof(fmt), "%s %%llu ", key);
	print_color_u64(PRINT_ANY, COLOR_NONE, key, fmt, v);
}

static void print_line(void)
{
	print_text("%s", "\n  ");
}

static int epdn_print_xstats(struct qdisc_util *qu, FILE *f,
			     struct rtattr *xstats)
{
	struct tc_epdn_xstats x = { 0 };

	(void)qu;
	(void)f;
	if (!xstats)
		return 0;
	if (RTA_PAYLOAD(xstats) < sizeof(x))
		return -1;
	memcpy(&x, RTA_DATA(xstats), sizeof(x));
	print_text("%s", "  ");
	print_counter("recorded", x.recorded);
	print_counter("rec_merged", x.rec_merged);
	print_counter("records", x.records);
	print_counter("stamps", x.stamps);
	print_counter("merges", x.merges);
	print_line();
	print_counter("mtu_deferred", x.mtu_deferred);
	print_counter("opt_deferred", x.opt_deferred);
	print_counter("gso_deferred", x.gso_deferred);
	print_counter("evicted", x.evicted);
	print_counter("aged", x.aged);
	print_line();
	print_counter("untouched", x.untouched);
	print_counter("ttl_updates", x.ttl_updates);
	print_counter("not_tcp", x.not_tcp);
	print_counter("not_ipv4", x.not_ipv4);
	print_counter("fragments", x.fragments);
	print_counter("malformed", x.malformed);
	print_counter("nomem", x.nomem);
	print_line();
	print_counter("overflow_drops", x.overflow_drops);
	print_counter("corrupt_drops", x.corrupt_drops);
	print_counter("red_drops", x.red_drops);
	print_counter("red_marks", x.red_marks);
	print_counter("flows", x.flows);
	print_counter("record_bytes", x.record_bytes);
	return 0;
}

/* tc reads this symbol; its layout must be iproute2 6.1's (tc_abi.h). */
static_assert(sizeof(struct qdisc_util) == 8 * sizeof(void *),
	      "struct qdisc_util does not match iproute2 6.1");

struct qdisc_util epdn_qdisc_util = {
	.id		= "epdn",
	.parse_qopt	= epdn_parse_opt,
	.print_qopt	= epdn_print_opt,
	.print_xstats	= epdn_print_xstats,
};
