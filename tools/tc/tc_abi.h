/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The part of iproute2 6.1's tc interface that q_epdn.so uses.  iproute2
 * ships no development headers, so these declarations are written out to
 * match tc/tc_util.h, include/utils.h, include/json_print.h,
 * include/color.h and include/libnetlink.h of iproute2 6.1 (Debian 12).
 * The functions are exported by /usr/sbin/tc (nm -D) and resolve when tc
 * dlopen()s the plugin.  struct qdisc_util must keep its exact layout: 8
 * pointers, as in Debian's own q_atm.so (64-byte atm_qdisc_util).
 */
#ifndef SATNET_TC_ABI_H
#define SATNET_TC_ABI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

struct qdisc_util {
	struct qdisc_util *next;
	const char *id;
	int (*parse_qopt)(struct qdisc_util *qu, int argc, char **argv,
			  struct nlmsghdr *n, const char *dev);
	int (*print_qopt)(struct qdisc_util *qu, FILE *f, struct rtattr *opt);
	int (*print_xstats)(struct qdisc_util *qu, FILE *f,
			    struct rtattr *xstats);
	int (*parse_copt)(struct qdisc_util *qu, int argc, char **argv,
			  struct nlmsghdr *n, const char *dev);
	int (*print_copt)(struct qdisc_util *qu, FILE *f, struct rtattr *opt);
	int (*has_block)(struct qdisc_util *qu, struct rtattr *opt,
			 __u32 block_idx, bool *p_has);
};

enum output_type {
	PRINT_FP = 1,
	PRINT_JSON = 2,
	PRINT_ANY = 4,
};

#define COLOR_NONE 0
#define SPRINT_BSIZE 64		/* the buffer sprint_size() and sprint_time() fill */

int addattr8(struct nlmsghdr *n, int maxlen, int type, __u8 data);
int addattr32(struct nlmsghdr *n, int maxlen, int type, __u32 data);
struct rtattr *addattr_nest(struct nlmsghdr *n, int maxlen, int type);
int addattr_nest_end(struct nlmsghdr *n, struct rtattr *nest);
int parse_rtattr_flags(struct rtattr *tb[], int max, struct rtattr *rta,
		       int len, unsigned short flags);
int get_u32(__u32 *val, const char *arg, int base);
int get_u8(__u8 *val, const char *arg, int base);
int get_size(unsigned int *size, const char *str);
int get_time(unsigned int *time, const char *str);
int parse_percent(double *val, const char *str);
char *sprint_size(__u32 size, char *buf);
char *sprint_time(__u32 time, char *buf);
void incomplete_command(void) __attribute__((noreturn));
int print_color_string(enum output_type t, int color, const char *key,
		       const char *fmt, const char *value);
int print_color_u64(enum output_type t, int color, const char *key,
		    const char *fmt, uint64_t value);
int print_color_bool(enum output_type t, int color, const char *key,
		     const char *fmt, bool value);
int print_color_float(enum output_type t, int color, const char *key,
		      const char *fmt, double value);

#endif /* SATNET_TC_ABI_H */
