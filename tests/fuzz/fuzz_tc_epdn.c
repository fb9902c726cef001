// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: the tc plugin's option parser, tools/tc/q_epdn.c, linked
 * against a model of what it takes from tc (tests/fuzz/tc_shim.h).
 *
 * Input: one mode byte, then the words of the command after "epdn",
 * separated by NUL bytes (each word its own exact-size allocation, as in
 * argv).  The parser must either reject the words cleanly (return -1, or
 * incomplete_command(), where tc exits: the shim jumps back instead),
 * leaving the request as it was, or accept them and append one nested
 * TCA_OPTIONS of well-formed attributes that sch_epdn's netlink policy
 * accepts.  Either way it must not have handed tc's get_size() or
 * get_time() a value they cannot store (tc_undefined).
 *
 * What is accepted then goes round the loop tc users see: the kernel's
 * state after the change (sch_epdn's defaults and checks, modelled here)
 * is dumped, printed by epdn_print_opt() as "tc qdisc show" prints it,
 * and the printed words parsed again: they must give the same state (the
 * two fractions, printed with %g, within 1e-5).  The dump is printed in
 * JSON as well.
 *
 * Mode 0xff instead hands the rest of the input to epdn_print_opt() and
 * epdn_print_xstats() as the payload of an attribute from the kernel.
 */
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/tc_shim.h"
#include "tools/tc/q_epdn.c"

#define WORDS_MAX	48
#define MODE_PRINT	0xff

/* sch_epdn's parameters, as its epdn_params holds them. */
struct kparams {
	u32 limit, byte_limit, idle, flows, corrupt;
	u32 red_min, red_max, red_prob;
	u8 mode, red, red_ewma, red_ecn, red_harddrop;
};

/* sch_epdn's netlink policy, attribute by attribute. */
static const struct attr_rule {
	size_t off;
	u8 size;
	u32 min, max;
} rules[TCA_EPDN_MAX + 1] = {
#define R(a, f, sz, lo, hi) [a] = { offsetof(struct kparams, f), sz, lo, hi }
	R(TCA_EPDN_LIMIT, limit, 4, 1, EPDN_LIMIT_MAX),
	R(TCA_EPDN_BYTE_LIMIT, byte_limit, 4, 0, UINT_MAX),
	R(TCA_EPDN_MODE, mode, 1, EPDN_MODE_V2, EPDN_MODE_V3),
	R(TCA_EPDN_IDLE, idle, 4, EPDN_IDLE_MIN_US, EPDN_IDLE_MAX_US),
	R(TCA_EPDN_FLOWS, flows, 4, EPDN_FLOWS_MIN, EPDN_FLOWS_MAX),
	R(TCA_EPDN_CORRUPT, corrupt, 4, 0, UINT_MAX),
	R(TCA_EPDN_RED, red, 1, 0, 1),
	R(TCA_EPDN_RED_MIN, red_min, 4, 0, UINT_MAX),
	R(TCA_EPDN_RED_MAX, red_max, 4, 1, UINT_MAX),
	R(TCA_EPDN_RED_PROB, red_prob, 4, 1, UINT_MAX),
	R(TCA_EPDN_RED_EWMA, red_ewma, 1, 0, EPDN_RED_EWMA_MAX),
	R(TCA_EPDN_RED_ECN, red_ecn, 1, 0, 1),
	R(TCA_EPDN_RED_HARDDROP, red_harddrop, 1, 0, 1),
#undef R
};

struct words {
	int argc;
	char *argv[WORDS_MAX + 1];
};

static void words_free(struct words *w)
{
	int i;

	for (i = 0; i < w->argc; i++)
		free(w->argv[i]);
	w->argc = 0;
}

/* Words of @len bytes at @p split on any byte in @sep, each its own copy. */
static void words_split(struct words *w, const char *p, size_t len,
			const char *sep, size_t nsep)
{
	size_t i = 0, j;

	w->argc = 0;
	while (i <= len && w->argc < WORDS_MAX) {
		for (j = i; j < len && !memchr(sep, p[j], nsep); j++)
			;
		if (j > i || nsep == 1) {
			w->argv[w->argc] = unit_calloc(j - i + 1, 1);
			memcpy(w->argv[w->argc++], p + i, j - i);
		}
		i = j + 1;
	}
	w->argv[w->argc] = NULL;
}

/* The request tc builds before it calls the plugin. */
static struct nlmsghdr *request(void)
{
	struct nlmsghdr *n = unit_calloc(EPDN_MAXLEN, 1);

	n->nlmsg_len = NLMSG_LENGTH(sizeof(struct tcmsg));
	tc_addattr_l(n, EPDN_MAXLEN, TCA_KIND, "epdn", sizeof("epdn"));
	return n;
}

/* tc exits in incomplete_command(): the shim comes back here, -2. */
static int parse(struct words *w, struct nlmsghdr *n)
{
	if (setjmp(tc_exit))
		return -2;
	return epdn_parse_opt(&epdn_qdisc_util, w->argc, w->argv, n, "eth0");
}

/* sch_epdn's state before any change (padding zero: memcmp() works). */
static const struct kparams kdefaults = {
	.limit = EPDN_DEF_LIMIT, .mode = EPDN_DEF_MODE,
	.idle = EPDN_DEF_IDLE_US, .flows = EPDN_DEF_FLOWS,
	.red_ewma = EPDN_DEF_RED_EWMA,
};

/*
 * The plugin's nested options, the last attribute of @n from @from on:
 * every attribute well-formed, once, within the policy, and applied to @k.
 */
static void check_nest(const struct nlmsghdr *n, u32 from, struct kparams *k)
{
	const struct rtattr *nest = (const void *)((const char *)n + from);
	const struct rtattr *a;
	bool seen[TCA_EPDN_MAX + 1] = { false };
	int left;

	FUZZ_CHECK(n->nlmsg_len <= EPDN_MAXLEN && !tc_overflow);
	FUZZ_CHECK(nest->rta_type == (TCA_OPTIONS | NLA_F_NESTED));
	FUZZ_CHECK(from + nest->rta_len == n->nlmsg_len);
	left = RTA_PAYLOAD(nest);
	for (a = RTA_DATA(nest); RTA_OK(a, left); a = RTA_NEXT(a, left)) {
		const struct attr_rule *r;
		u32 v = 0;

		FUZZ_CHECK(a->rta_type >= 1 && a->rta_type <= TCA_EPDN_MAX);
		r = &rules[a->rta_type];
		FUZZ_CHECK(!seen[a->rta_type] && RTA_PAYLOAD(a) == r->size);
		seen[a->rta_type] = true;
		memcpy(&v, RTA_DATA(a), r->size);
		FUZZ_CHECK(v >= r->min && v <= r->max);
		memcpy((char *)k + r->off, &v, r->size);
	}
	FUZZ_CHECK(left == 0);
	FUZZ_CHECK(!k->byte_limit || k->byte_limit >= 64);
	if (!seen[TCA_EPDN_RED])
		FUZZ_CHECK(!seen[TCA_EPDN_RED_MIN] && !seen[TCA_EPDN_RED_MAX] &&
			   !seen[TCA_EPDN_RED_PROB] && !seen[TCA_EPDN_RED_EWMA]);
	else if (!k->red)
		FUZZ_CHECK(!seen[TCA_EPDN_RED_MIN] && !seen[TCA_EPDN_RED_MAX] &&
			   !seen[TCA_EPDN_RED_PROB] &&
			   !seen[TCA_EPDN_RED_EWMA] && !seen[TCA_EPDN_RED_ECN]);
	else
		FUZZ_CHECK(seen[TCA_EPDN_RED_ECN] &&
			   seen[TCA_EPDN_RED_HARDDROP]);
	if (seen[TCA_EPDN_RED_MIN] && seen[TCA_EPDN_RED_MAX])
		FUZZ_CHECK(k->red_min < k->red_max);
}

static int fls32(u32 x)
{
	return x ? 32 - __builtin_clz(x) : 0;
}

/* sch_epdn's checks after the policy: bytelimit, RED as a whole. */
static bool kernel_accepts(const struct kparams *k)
{
	if (k->byte_limit && k->byte_limit < 64)
		return false;
	if (!k->red)
		return true;
	return k->red_max && k->red_prob && k->red_min < k->red_max &&
	       fls32(k->red_min) + k->red_ewma < 32 &&
	       fls32(k->red_max) + k->red_ewma < 32;
}

/* What "tc qdisc show" prints for the state @k (epdn_dump()). */
static void show(const struct kparams *k, bool json)
{
	struct nlmsghdr *n = request();
	struct rtattr *nest = addattr_nest(n, EPDN_MAXLEN, TCA_OPTIONS);
	u32 type, v;

	for (type = 1; type <= TCA_EPDN_MAX; type++) {
		v = 0;
		memcpy(&v, (const char *)k + rules[type].off, rules[type].size);
		if (rules[type].size == 1)
			addattr8(n, EPDN_MAXLEN, type, (u8)v);
		else
			addattr32(n, EPDN_MAXLEN, type, v);
	}
	addattr_nest_end(n, nest);
	tc_json = json;
	tc_out_len = 0;
	tc_out[0] = 0;
	FUZZ_CHECK(!epdn_print_opt(&epdn_qdisc_util, NULL, nest));
	free(n);
}

static bool close_frac(u32 a, u32 b)
{
	u32 d = a > b ? a - b : b - a;

	return d <= (a > b ? a : b) / 100000 + 1;
}

/* The printed state parses back into the same state. */
static void round_trip(const struct kparams *k)
{
	struct nlmsghdr *n = request();
	u32 from = n->nlmsg_len;
	struct kparams back;
	struct words w;

	show(k, true);
	show(k, false);
	words_split(&w, tc_out, tc_out_len, " \n", 2);
	FUZZ_CHECK(parse(&w, n) == 0 && !tc_undefined);
	memcpy(&back, &kdefaults, sizeof(back));
	check_nest(n, from, &back);
	FUZZ_CHECK(close_frac(back.corrupt, k->corrupt) &&
		   close_frac(back.red_prob, k->red_prob));
	back.corrupt = k->corrupt;
	back.red_prob = k->red_prob;
	FUZZ_CHECK(!memcmp(&back, k, sizeof(back)));
	words_free(&w);
	free(n);
}

/* An attribute from the kernel, any payload: print it as tc would. */
static void print_raw(const u8 *p, size_t len)
{
	size_t alen = RTA_LENGTH(len);
	struct rtattr *a = unit_calloc(alen, 1);

	a->rta_type = TCA_OPTIONS;
	a->rta_len = (unsigned short)alen;
	memcpy(RTA_DATA(a), p, len);
	tc_json = len & 1;
	tc_out_len = 0;
	FUZZ_CHECK(!epdn_print_opt(&epdn_qdisc_util, NULL, a));
	FUZZ_CHECK(epdn_print_xstats(&epdn_qdisc_util, NULL, a) ==
		   (len < EPDN_XSTATS_OLD_LEN ? -1 : 0));
	free(a);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* The plugin's messages; crash reports go to fd 2 regardless. */
	if (!getenv("FUZZ_VERBOSE"))
		stderr = fopen("/dev/null", "w");
	return 0;
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct nlmsghdr *n;
	struct kparams k;
	struct words w;
	u32 from;
	int ret;

	if (size > 4096)
		return 0;
	if (size && data[0] == MODE_PRINT) {
		print_raw(data + 1, size - 1);
		return 0;
	}
	words_split(&w, (const char *)data + !!size, size - !!size, "", 1);
	if (size == 1)
		words_free(&w);		/* no words at all */
	n = request();
	from = n->nlmsg_len;
	tc_undefined = false;
	tc_overflow = false;
	ret = parse(&w, n);
	FUZZ_CHECK(!tc_undefined);
	if (ret) {
		FUZZ_CHECK(ret == -1 || ret == -2);
		FUZZ_CHECK(n->nlmsg_len == from);
	} else {
		memcpy(&k, &kdefaults, sizeof(k));
		check_nest(n, from, &k);
		if (kernel_accepts(&k))
			round_trip(&k);
	}
	words_free(&w);
	free(n);
	return 0;
}
