/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Minimal unit-test harness for the plain-C algorithm cores.  Each test
 * binary prints one line per failed check and exits non-zero if any failed.
 */
#ifndef SATNET_UNIT_H
#define SATNET_UNIT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int unit_failed;
static int unit_checks;

#define CHECK(cond) do {						\
	unit_checks++;							\
	if (!(cond)) {							\
		unit_failed++;						\
		fprintf(stderr, "%s:%d: %s: CHECK(%s) failed\n",	\
			__FILE__, __LINE__, __func__, #cond);		\
	}								\
} while (0)

#define CHECK_EQ(a, b) do {						\
	long long _a = (long long)(a), _b = (long long)(b);		\
	unit_checks++;							\
	if (_a != _b) {							\
		unit_failed++;						\
		fprintf(stderr, "%s:%d: %s: %s == %lld, expected %s == %lld\n", \
			__FILE__, __LINE__, __func__, #a, _a, #b, _b);	\
	}								\
} while (0)

#define RUN(fn) do { fn(); } while (0)

/* calloc(), or exit: no test has a use for a failed allocation. */
static inline void *unit_calloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p) {
		perror("calloc");
		exit(2);
	}
	return p;
}

/* Big-endian (network order) stores, for building headers. */
static inline void put16(unsigned char *p, unsigned int v)
{
	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)v;
}

static inline void put32(unsigned char *p, unsigned int v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

/*
 * An IPv4 header of a TCP packet from 10.0.0.1 to 10.0.0.2 into @h (60
 * bytes), with @optlen bytes of zeroed options; returns its length.
 */
static inline unsigned int unit_ipv4(unsigned char *h, unsigned int tot_len,
				     unsigned char ttl, unsigned int optlen)
{
	memset(h, 0, 60);
	h[0] = (unsigned char)(0x40 | (20 + optlen) / 4);
	put16(h + 2, tot_len);
	h[8] = ttl;
	h[9] = 6;
	h[12] = 10;
	h[15] = 1;
	h[16] = 10;
	h[19] = 2;
	return 20 + optlen;
}

static inline int unit_report(const char *name)
{
	printf("%s: %d checks, %d failed\n", name, unit_checks, unit_failed);
	return unit_failed ? 1 : 0;
}

#endif
