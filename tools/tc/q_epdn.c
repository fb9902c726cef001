// SPDX-License-Identifier: GPL-2.0
/*
 * q_epdn.so: tc plugin for the "epdn" qdisc (sch_epdn/).
 *
 * tc dlopen()s q_<kind>.so from its library directory (TC_LIB_DIR
 * overrides it) and looks up "<kind>_qdisc_util".  iproute2 ships no
 * development headers, so the few declarations the plugin needs are
 * written out in tc_abi.h, matching iproute2 6.1 (Debian 12): struct
 * qdisc_util, and the parsers, printers, libnetlink helpers and json_print
 * functions that tc exports (nm -D /usr/sbin/tc).  Options are parsed and
 * printed with tc's own get_size(), get_time(), sprint_size() and so on,
 * so they take and show tc's units.
 */
#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
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
#define MIN(a, b)	((a) < (b) ? (a) : (b))

/* What a kernel from before memory_used sends; the rest reads as 0. */
#define EPDN_XSTATS_OLD_LEN	offsetof(struct tc_epdn_xstats, memory_used)

/* ---- parsing: tc's own parsers, and iproute2's wording for errors ---- */

static void explain(void)
{
	fprintf(stderr,
		"Usage: ... epdn [ limit PACKETS ] [ bytelimit BYTES ] [ mode v2|v3 ]\n"
		"                [ idle TIME ] [ flows NUMBER ] [ corrupt PERCENT ]\n"
		"                [ red min BYTES max BYTES probability P\n"
		"                      [ ewma LOG ] [ ecn ] [ harddrop ] | red off ]\n"
		"  limit     queue limit in packets, 1..%u (default %u)\n"
		"  bytelimit queue limit in bytes, 0 = none, else at least 64\n"
		"  mode      v2: record every drop, corruption included;\n"
		"            v3: record congestion drops only (default)\n"
		"  idle      drop records idle longer than TIME, 1ms..1h (default 2s)\n"
		"  flows     maximum number of drop records, %u..%u (default %u)\n"
		"  corrupt   emulated link-layer CRC failure rate at this hop,\n"
		"            0..100%%, e.g. 0.1%%\n"
		"  red       RED on the queue: min < max thresholds in bytes,\n"
		"            probability 0 < P <= 1, ewma weight 2^-LOG, 0..%u\n"
		"            (default %u), ecn marks ECN-capable packets instead\n"
		"            of dropping them, harddrop drops even those above max\n"
		"BYTES take tc's units (b, k or kb, m or mb, g or gb, kbit, mbit, gbit);\n"
		"TIME takes s, ms or us (a bare number is microseconds).\n",
		EPDN_LIMIT_MAX, EPDN_DEF_LIMIT, EPDN_FLOWS_MIN, EPDN_FLOWS_MAX,
		EPDN_DEF_FLOWS, EPDN_RED_EWMA_MAX, EPDN_DEF_RED_EWMA);
}

/* q_cake's wording, and what a valid value looks like */
static int illegal(const char *kw, const char *arg, const char *expect)
{
	fprintf(stderr, "Illegal value for \"%s\": \"%s\" (%s)\n", kw, arg,
		expect);
	return -1;
}

/*
 * tc's parsers take strtod()'s syntax and convert without checking the
 * sign or finiteness, so "-1" or "nan" would come out as some number.
 * strtod() skips any white space, "\n" too: the sign is the value's.
 */
static bool plain_number(const char *s, double *v, char **end)
{
	*v = strtod(s, end);
	return *end != s && isfinite(*v) && !signbit(*v);
}

/*
 * get_size() or get_time() (@get), after checking that the value fits in
 * 32 bits: both store it in an unsigned int, which is undefined outside
 * 0..2^32 - 1 (tc then wraps it; get_time() does not notice).  @get of
 * "1" and the unit gives the unit's scale; a unit has no digits ("1" and
 * "e9ms" would read as 10^9 ms).
 */
static int parse_scaled(const char *arg, __u32 *out, double *v,
			int (*get)(unsigned int *val, const char *s))
{
	char unit[16] = "1";
	unsigned int scale;
	char *end;

	if (!plain_number(arg, v, &end) || strpbrk(end, "0123456789"))
		return -1;
	strncat(unit, end, sizeof(unit) - 2);
	if (get(&scale, unit) || *v * scale >= (double)UINT_MAX + 1)
		return -1;
	return get(out, arg);
}

/* get_size(), refusing a nonzero size that rounds down to 0 bytes */
static int parse_size(const char *arg, __u32 *out)
{
	double v;

	if (parse_scaled(arg, out, &v, get_size))
		return -1;
	return v > 0 && !*out ? -1 : 0;
}

/* get_time(), in microseconds */
static int parse_time(const char *arg, __u32 *out)
{
	double v;

	return parse_scaled(arg, out, &v, get_time);
}

/* A fraction 0..1 as a u32 of 2^32 (~0U for 1), never rounding to 0 */
static int frac_to_u32(double f, __u32 *out)
{
	double v = f * FRAC_ONE;

	*out = v >= FRAC_ONE - 1 ? UINT_MAX : (__u32)llround(v);
	return f > 0 && !*out ? -1 : 0;
}

/* netem style: "0.1%" or "0.1" both mean 0.1 % */
static int parse_corrupt(const char *arg, __u32 *out)
{
	char *end;
	double v;

	if (!plain_number(arg, &v, &end) || parse_percent(&v, arg))
		return -1;
	return frac_to_u32(v, out);
}

static int parse_prob(const char *arg, __u32 *out)
{
	char *end;
	double v;

	if (!plain_number(arg, &v, &end) || *end || v <= 0 || v > 1)
		return -1;
	return frac_to_u32(v, out);
}

static int parse_count(const char *kw, const char *arg, __u32 lo, __u32 hi,
		       const char *unit, __u32 *out)
{
	char expect[64];

	if (!get_u32(out, arg, 0) && *out >= lo && *out <= hi)
		return 0;
	snprintf(expect, sizeof(expect), "%u..%u %s", lo, hi, unit);
	return illegal(kw, arg, expect);
}

struct epdn_args {
	__u32 limit, byte_limit, idle, flows, corrupt;
	__u32 red_min, red_max, red_prob;
	__u8 mode, red, red_ewma, red_ecn, red_harddrop;
	bool has_limit, has_byte_limit, has_idle, has_flows, has_corrupt;
	bool has_mode, has_red, has_red_min, has_red_max, has_red_prob;
	bool has_red_ewma;
};

static const char *const red_values[] = { "min", "max", "probability", "ewma" };
static const char *const options[] = {
	"limit", "bytelimit", "mode", "idle", "flows", "corrupt",
};

static bool one_of(const char *kw, const char *const *list, size_t n)
{
	while (n--)
		if (strcmp(kw, list[n]) == 0)
			return true;
	return false;
}

/* One "keyword value" of red, kw one of red_values */
static int parse_red_value(const char *kw, const char *arg,
			   struct epdn_args *a)
{
	if (strcmp(kw, "min") == 0) {
		if (parse_size(arg, &a->red_min))
			return illegal(kw, arg, "bytes");
		a->has_red_min = true;
	} else if (strcmp(kw, "max") == 0) {
		if (parse_size(arg, &a->red_max) || !a->red_max)
			return illegal(kw, arg, "bytes, above 0");
		a->has_red_max = true;
	} else if (strcmp(kw, "probability") == 0) {
		if (parse_prob(arg, &a->red_prob))
			return illegal(kw, arg, "0 < P <= 1");
		a->has_red_prob = true;
	} else if (strcmp(kw, "ewma") == 0) {
		if (get_u8(&a->red_ewma, arg, 0) ||
		    a->red_ewma > EPDN_RED_EWMA_MAX)
			return illegal(kw, arg, "0..23");
		a->has_red_ewma = true;
	}
	return 0;
}

/*
 * "red off" or "red min A max B probability P [ewma N] [ecn] [harddrop]";
 * *argvp is at "red" and is left on the last word that red took.
 */
static int parse_red(int *argcp, char ***argvp, struct epdn_args *a)
{
	int argc = *argcp;
	char **argv = *argvp;

	a->has_red = true;
	a->red_ecn = 0;
	a->red_harddrop = 0;
	if (argc > 1 && strcmp(argv[1], "off") == 0) {
		a->red = 0;
		(*argcp)--;
		(*argvp)++;
		return 0;
	}
	a->red = 1;
	while (argc > 1) {
		const char *kw = argv[1];

		if (strcmp(kw, "ecn") == 0) {
			a->red_ecn = 1;
		} else if (strcmp(kw, "harddrop") == 0) {
			a->red_harddrop = 1;
		} else if (one_of(kw, red_values, ARRAY_SIZE(red_values))) {
			if (argc < 3)
				incomplete_command();
			if (parse_red_value(kw, argv[2], a))
				return -1;
			argc--;
			argv++;
		} else {
			break;
		}
		argc--;
		argv++;
	}
	*argcp = argc;
	*argvp = argv;
	if (a->has_red_min && a->has_red_max && a->red_min >= a->red_max) {
		fprintf(stderr, "\"min\" is not smaller than \"max\"\n");
		return -1;
	}
	return 0;
}

static int parse_mode(const char *arg, struct epdn_args *a)
{
	if (strcmp(arg, "v2") == 0 || strcmp(arg, "2") == 0)
		a->mode = EPDN_MODE_V2;
	else if (strcmp(arg, "v3") == 0 || strcmp(arg, "3") == 0)
		a->mode = EPDN_MODE_V3;
	else
		return illegal("mode", arg, "v2 or v3");
	a->has_mode = true;
	return 0;
}

/* One "keyword value" pair, kw one of options */
static int parse_one(const char *kw, const char *arg, struct epdn_args *a)
{
	if (strcmp(kw, "limit") == 0) {
		a->has_limit = true;
		return parse_count(kw, arg, 1, EPDN_LIMIT_MAX, "packets",
				   &a->limit);
	} else if (strcmp(kw, "flows") == 0) {
		a->has_flows = true;
		return parse_count(kw, arg, EPDN_FLOWS_MIN, EPDN_FLOWS_MAX,
				   "records", &a->flows);
	} else if (strcmp(kw, "mode") == 0) {
		return parse_mode(arg, a);
	} else if (strcmp(kw, "bytelimit") == 0) {
		if (parse_size(arg, &a->byte_limit) ||
		    (a->byte_limit && a->byte_limit < 64))
			return illegal(kw, arg, "0 = none, or at least 64 bytes");
		a->has_byte_limit = true;
	} else if (strcmp(kw, "idle") == 0) {
		if (parse_time(arg, &a->idle) ||
		    a->idle < EPDN_IDLE_MIN_US || a->idle > EPDN_IDLE_MAX_US)
			return illegal(kw, arg, "1ms..1h");
		a->has_idle = true;
	} else if (strcmp(kw, "corrupt") == 0) {
		if (parse_corrupt(arg, &a->corrupt))
			return illegal(kw, arg, "0..100%");
		a->has_corrupt = true;
	}
	return 0;
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
	for (; argc > 0; argc--, argv++) {
		if (strcmp(*argv, "red") == 0) {
			if (parse_red(&argc, &argv, &a))
				return -1;
			continue;
		}
		if (strcmp(*argv, "help") == 0) {
			explain();
			return -1;
		}
		if (!one_of(*argv, options, ARRAY_SIZE(options))) {
			fprintf(stderr, "What is \"%s\"?\n", *argv);
			explain();
			return -1;
		}
		if (argc < 2)
			incomplete_command();
		if (parse_one(argv[0], argv[1], &a))
			return -1;
		argc--;
		argv++;
	}
	nest = addattr_nest(n, EPDN_MAXLEN, TCA_OPTIONS | NLA_F_NESTED);
	put_args(n, &a);
	addattr_nest_end(n, nest);
	return 0;
}

/* ---- printing: the same syntax the parser reads ---- */

static __u32 rta_u32(struct rtattr *tb[], int id)
{
	if (!tb[id] || RTA_PAYLOAD(tb[id]) < sizeof(__u32))
		return 0;
	return *(__u32 *)RTA_DATA(tb[id]);
}

static __u8 rta_u8(struct rtattr *tb[], int id)
{
	if (!tb[id] || RTA_PAYLOAD(tb[id]) < sizeof(__u8))
		return 0;
	return *(__u8 *)RTA_DATA(tb[id]);
}

static void print_text(const char *fmt, const char *s)
{
	print_color_string(PRINT_FP, COLOR_NONE, NULL, fmt, s);
}

static void print_num_text(const char *key, const char *text)
{
	char buf[96];

	snprintf(buf, sizeof(buf), "%s %s ", key, text);
	print_text("%s", buf);
}

/* JSON gets the number, text output gets "name <formatted>" */
static void print_num(const char *key, const char *text, uint64_t v)
{
	print_color_u64(PRINT_JSON, COLOR_NONE, key, NULL, v);
	print_num_text(key, text);
}

static void print_u32(const char *key, __u32 v)
{
	char text[16];

	snprintf(text, sizeof(text), "%u", v);
	print_num(key, text, v);
}

/*
 * tc's format (450Kb, 250ms), or the exact value in @unit where tc's
 * format would not read back the same (tc prints 1030 bytes as "1Kb").
 */
static void print_exact(const char *key, __u32 v,
			char *(*sprint)(__u32 v, char *buf),
			int (*get)(unsigned int *v, const char *s),
			const char *unit)
{
	char buf[SPRINT_BSIZE];
	unsigned int back;
	double unused;

	/* "4096Mb" (2^32 bytes) is one tc would print and not read back. */
	if (parse_scaled(sprint(v, buf), &back, &unused, get) || back != v)
		snprintf(buf, sizeof(buf), "%u%s", v, unit);
	print_num(key, buf, v);
}

static void print_size(const char *key, __u32 bytes)
{
	print_exact(key, bytes, sprint_size, get_size, "b");
}

static void print_time(const char *key, __u32 us)
{
	print_exact(key, us, sprint_time, get_time, "us");
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
	print_flag("red");
	print_size("min", rta_u32(tb, TCA_EPDN_RED_MIN));
	print_size("max", rta_u32(tb, TCA_EPDN_RED_MAX));
	print_frac("probability", rta_u32(tb, TCA_EPDN_RED_PROB), 1, "");
	print_u32("ewma", rta_u8(tb, TCA_EPDN_RED_EWMA));
	if (rta_u8(tb, TCA_EPDN_RED_ECN))
		print_flag("ecn");
	if (rta_u8(tb, TCA_EPDN_RED_HARDDROP))
		print_flag("harddrop");
}

static int epdn_print_opt(struct qdisc_util *qu, FILE *f, struct rtattr *opt)
{
	struct rtattr *tb[TCA_EPDN_MAX + 1];
	char text[8];

	(void)qu;
	(void)f;
	if (!opt)
		return 0;
	parse_rtattr_flags(tb, TCA_EPDN_MAX, RTA_DATA(opt), RTA_PAYLOAD(opt),
			   NLA_F_NESTED);
	print_u32("limit", rta_u32(tb, TCA_EPDN_LIMIT));
	print_size("bytelimit", rta_u32(tb, TCA_EPDN_BYTE_LIMIT));
	snprintf(text, sizeof(text), "v%u", rta_u8(tb, TCA_EPDN_MODE));
	print_color_string(PRINT_ANY, COLOR_NONE, "mode", "mode %s ", text);
	print_time("idle", rta_u32(tb, TCA_EPDN_IDLE));
	print_u32("flows", rta_u32(tb, TCA_EPDN_FLOWS));
	print_frac("corrupt", rta_u32(tb, TCA_EPDN_CORRUPT), 100, "%");
	if (rta_u8(tb, TCA_EPDN_RED))
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

/* fq_codel's memory_used: bytes in JSON, tc's size format in text */
static void print_memory(const char *key, uint64_t v)
{
	char buf[SPRINT_BSIZE];

	print_color_u64(PRINT_JSON, COLOR_NONE, key, NULL, v);
	if (v <= UINT_MAX)
		sprint_size(v, buf);
	else
		snprintf(buf, sizeof(buf), "%llub", (unsigned long long)v);
	print_num_text(key, buf);
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
	if (RTA_PAYLOAD(xstats) < EPDN_XSTATS_OLD_LEN)
		return -1;
	memcpy(&x, RTA_DATA(xstats), MIN(RTA_PAYLOAD(xstats), sizeof(x)));
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
	print_line();
	print_counter("flows", x.flows);
	print_counter("record_bytes", x.record_bytes);
	print_memory("memory_used", x.memory_used);
	print_counter("flushed", x.flushed);
	print_counter("span_resets", x.span_resets);
	print_counter("unshared", x.unshared);
	print_counter("unknown_stamps", x.unknown_stamps);
	print_counter("released", x.released);
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
