/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What q_epdn.so takes from tc (tools/tc/tc_abi.h), for the fuzz target
 * fuzz_tc_epdn.c: the behaviour of iproute2 6.1 as Debian 12 builds it
 * (/usr/sbin/tc on x86-64), written out so the plugin links into a test.
 *
 *   get_size(), get_time(): strtod() and a unit.  tc then stores the double
 *	in an unsigned int, undefined in C outside [0, 2^32): gcc emits
 *	cvttsd2si to 64 bits and keeps the low 32, so the value wraps
 *	(tc_cvt_u32()).  get_size() then refuses a result that differs from
 *	floor() of the value; get_time() has no such check.  Either way such
 *	a call is recorded in tc_undefined: the plugin must check the range
 *	before it hands a value to tc.
 *   parse_percent(): 0 = ok, 1 = out of [0, 1], -1 = suffix not "%".
 *   get_u32(), get_u8(): strtoul() of the whole word, range-checked.
 *   incomplete_command(): tc prints and calls exit(-1); here it jumps back
 *	to the target (tc_exit), which counts that as a clean rejection.
 *   addattr*(): libnetlink, refusing to grow a message past maxlen.
 *   print_color_*(): json_print in text or JSON context, into tc_out.
 */
#ifndef SATNET_TC_SHIM_H
#define SATNET_TC_SHIM_H

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <strings.h>

#include "tools/tc/tc_abi.h"

static jmp_buf tc_exit;
static bool tc_undefined;	/* tc converted a value out of range */
static bool tc_overflow;	/* addattr*() refused an attribute */
static bool tc_json;		/* print in JSON context, not text */
static char tc_out[8192];	/* what the print functions wrote */
static size_t tc_out_len;

/* double -> unsigned int as Debian's tc does it on x86-64. */
static unsigned int tc_cvt_u32(double d)
{
	tc_undefined |= !(d > -1.0 && d < 0x1p32);
	if (!(d > -0x1p63 && d < 0x1p63))
		return 0;	/* cvttsd2si's "integer indefinite" */
	return (unsigned int)(u64)(s64)d;
}

struct tc_unit {
	const char *name;
	double scale;
};

static const struct tc_unit tc_size_units[] = {
	{ "kb", 1024 }, { "k", 1024 },
	{ "gb", 1024 * 1024 * 1024 }, { "g", 1024 * 1024 * 1024 },
	{ "gbit", 1024 * 1024 * 1024 / 8 },
	{ "mb", 1024 * 1024 }, { "m", 1024 * 1024 },
	{ "mbit", 1024 * 1024 / 8 }, { "kbit", 1024 / 8 }, { "b", 1 },
	{ NULL, 0 },
};

static const struct tc_unit tc_time_units[] = {
	{ "s", 1000000 }, { "sec", 1000000 }, { "secs", 1000000 },
	{ "ms", 1000 }, { "msec", 1000 }, { "msecs", 1000 },
	{ "us", 1 }, { "usec", 1 }, { "usecs", 1 },
	{ NULL, 0 },
};

/* strtod(), times the scale of the unit that follows (case ignored). */
static int tc_scaled(const char *str, const struct tc_unit *u, double *v)
{
	char *p;

	*v = strtod(str, &p);
	if (p == str)
		return -1;
	if (!*p)
		return 0;
	for (; u->name; u++) {
		if (!strcasecmp(p, u->name)) {
			*v *= u->scale;
			return 0;
		}
	}
	return -1;
}

int get_size(unsigned int *size, const char *str)
{
	double sz;

	if (tc_scaled(str, tc_size_units, &sz))
		return -1;
	*size = tc_cvt_u32(sz);
	return *size != floor(sz) ? -1 : 0;
}

int get_time(unsigned int *time, const char *str)
{
	double t;

	if (tc_scaled(str, tc_time_units, &t))
		return -1;
	*time = tc_cvt_u32(t);
	return 0;
}

int parse_percent(double *val, const char *str)
{
	char *p;

	*val = strtod(str, &p) / 100.;
	if (*val > 1.0 || *val < 0.0)
		return 1;
	return *p && strcmp(p, "%") ? -1 : 0;
}

static int tc_get_ul(unsigned long *val, const char *arg, int base,
		     unsigned long max)
{
	char *p;

	if (!arg || !*arg)
		return -1;
	*val = strtoul(arg, &p, base);
	if (p == arg || *p || (*val == ULONG_MAX && errno == ERANGE) ||
	    *val > max)
		return -1;
	return 0;
}

int get_u32(__u32 *val, const char *arg, int base)
{
	unsigned long v;

	if (tc_get_ul(&v, arg, base, 0xffffffffUL))
		return -1;
	*val = (__u32)v;
	return 0;
}

int get_u8(__u8 *val, const char *arg, int base)
{
	unsigned long v;

	if (tc_get_ul(&v, arg, base, 0xffUL))
		return -1;
	*val = (__u8)v;
	return 0;
}

char *sprint_size(__u32 sz, char *buf)
{
	double tmp = sz;

	if (sz >= 1024 * 1024 &&
	    fabs(1024 * 1024 * rint(tmp / (1024 * 1024)) - sz) < 1024)
		snprintf(buf, SPRINT_BSIZE - 1, "%gMb",
			 rint(tmp / (1024 * 1024)));
	else if (sz >= 1024 && fabs(1024 * rint(tmp / 1024) - sz) < 16)
		snprintf(buf, SPRINT_BSIZE - 1, "%gKb", rint(tmp / 1024));
	else
		snprintf(buf, SPRINT_BSIZE - 1, "%ub", sz);
	return buf;
}

char *sprint_time(__u32 time, char *buf)
{
	double tmp = time;

	if (tmp >= 1000000)
		snprintf(buf, SPRINT_BSIZE - 1, "%.3gs", tmp / 1000000);
	else if (tmp >= 1000)
		snprintf(buf, SPRINT_BSIZE - 1, "%.3gms", tmp / 1000);
	else
		snprintf(buf, SPRINT_BSIZE - 1, "%uus", time);
	return buf;
}

void incomplete_command(void)
{
	fprintf(stderr, "Command line is not complete. Try option \"help\"\n");
	longjmp(tc_exit, 1);
}

/* ---- libnetlink ---- */

#define TC_TAIL(n) ((struct rtattr *)((char *)(n) + NLMSG_ALIGN((n)->nlmsg_len)))

static int tc_addattr_l(struct nlmsghdr *n, int maxlen, int type,
			const void *data, int alen)
{
	int len = RTA_LENGTH(alen);
	struct rtattr *rta;

	if (NLMSG_ALIGN(n->nlmsg_len) + RTA_ALIGN(len) > (unsigned int)maxlen) {
		fprintf(stderr, "addattr_l ERROR: message exceeded bound of %d\n",
			maxlen);
		tc_overflow = true;
		return -1;
	}
	rta = TC_TAIL(n);
	rta->rta_type = (unsigned short)type;
	rta->rta_len = (unsigned short)len;
	if (alen)
		memcpy(RTA_DATA(rta), data, alen);
	n->nlmsg_len = NLMSG_ALIGN(n->nlmsg_len) + RTA_ALIGN(len);
	return 0;
}

int addattr8(struct nlmsghdr *n, int maxlen, int type, __u8 data)
{
	return tc_addattr_l(n, maxlen, type, &data, sizeof(data));
}

int addattr32(struct nlmsghdr *n, int maxlen, int type, __u32 data)
{
	return tc_addattr_l(n, maxlen, type, &data, sizeof(data));
}

struct rtattr *addattr_nest(struct nlmsghdr *n, int maxlen, int type)
{
	struct rtattr *nest = TC_TAIL(n);

	tc_addattr_l(n, maxlen, type, NULL, 0);
	return nest;
}

int addattr_nest_end(struct nlmsghdr *n, struct rtattr *nest)
{
	nest->rta_len = (unsigned short)((char *)TC_TAIL(n) - (char *)nest);
	return n->nlmsg_len;
}

/* The first attribute of each type wins; tc reports a short tail. */
int parse_rtattr_flags(struct rtattr *tb[], int max, struct rtattr *rta,
		       int len, unsigned short flags)
{
	memset(tb, 0, sizeof(struct rtattr *) * (max + 1));
	while (RTA_OK(rta, len)) {
		unsigned short type = rta->rta_type & ~flags;

		if (type <= max && !tb[type])
			tb[type] = rta;
		rta = RTA_NEXT(rta, len);
	}
	return 0;
}

/* ---- json_print ---- */

static void tc_printf(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tc_out + tc_out_len, sizeof(tc_out) - tc_out_len, fmt,
		      ap);
	va_end(ap);
	if (n > 0)
		tc_out_len += (size_t)n;
	if (tc_out_len >= sizeof(tc_out))
		tc_out_len = sizeof(tc_out) - 1;
}

/*
 * Which context prints an item: JSON takes PRINT_JSON and PRINT_ANY by
 * key, text takes PRINT_FP and PRINT_ANY by format.  A JSON item needs a
 * key and a text item a format: tc would crash on NULL.
 */
enum { TC_SKIP, TC_TEXT, TC_JSON };

static int tc_ctx(enum output_type t, const char *key, const char *fmt)
{
	if (tc_json && (t & (PRINT_JSON | PRINT_ANY))) {
		FUZZ_CHECK(key);
		tc_printf("\"%s\":", key);
		return TC_JSON;
	}
	if (!tc_json && (t & (PRINT_FP | PRINT_ANY))) {
		FUZZ_CHECK(fmt);
		return TC_TEXT;
	}
	return TC_SKIP;
}

/* print_color_<name>(), as json_print's _PRINT_FUNC makes them. */
#define TC_PRINT_FUNC(name, type, json_fmt, shown)			\
int print_color_##name(enum output_type t, int color, const char *key,	\
		       const char *fmt, type value)			\
{									\
	int ctx = tc_ctx(t, key, fmt);					\
									\
	(void)color;							\
	if (ctx == TC_TEXT)						\
		tc_printf(fmt, shown);					\
	else if (ctx == TC_JSON)					\
		tc_printf(json_fmt, shown);				\
	return 0;							\
}

TC_PRINT_FUNC(string, const char *, "\"%s\",", value)
TC_PRINT_FUNC(u64, uint64_t, "%llu,", (unsigned long long)value)
TC_PRINT_FUNC(bool, bool, "%s,", value ? "true" : "false")
TC_PRINT_FUNC(float, double, "%g,", value)

#endif /* SATNET_TC_SHIM_H */
