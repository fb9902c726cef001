/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the libFuzzer targets tests/fuzz/fuzz_*.c.  Each target
 * #includes the core .c file it drives, as the unit tests do, so that it
 * compiles the same C the module does, and reads its input as a stream of
 * operations through the helpers below.  Every read past the end of the
 * input is 0, so any byte string is a valid input.  FUZZ_CHECK() aborts
 * on a broken invariant: libFuzzer then keeps the input as a crash.
 */
#ifndef SATNET_FUZZ_H
#define SATNET_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <satnet/types.h>
#include "tests/unit/unit.h"

struct fuzz_in {
	const u8 *p;
	size_t n;
};

static inline struct fuzz_in fuzz_start(const u8 *data, size_t size)
{
	struct fuzz_in in = { .p = data, .n = size };

	return in;
}

static inline bool fuzz_more(const struct fuzz_in *in)
{
	return in->n > 0;
}

static inline u8 fuzz_u8(struct fuzz_in *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

static inline u16 fuzz_u16(struct fuzz_in *in)
{
	u16 lo = fuzz_u8(in);

	return lo | (u16)fuzz_u8(in) << 8;
}

static inline u32 fuzz_u32(struct fuzz_in *in)
{
	u32 lo = fuzz_u16(in);

	return lo | (u32)fuzz_u16(in) << 16;
}

static inline u64 fuzz_u64(struct fuzz_in *in)
{
	u64 lo = fuzz_u32(in);

	return lo | (u64)fuzz_u32(in) << 32;
}

/* The number of operations in a target's table of them. */
#define FUZZ_COUNT(ops)	((u32)(sizeof(ops) / sizeof((ops)[0])))

/* 0 .. n - 1 (n <= 256), from one byte. */
static inline u32 fuzz_pick(struct fuzz_in *in, u32 n)
{
	return fuzz_u8(in) % n;
}

/* @n bytes of the input into @buf (zeros once it runs out). */
static inline void fuzz_fill(struct fuzz_in *in, void *buf, size_t n)
{
	u8 *b = buf;

	while (n--)
		*b++ = fuzz_u8(in);
}

/*
 * A 32-bit quantity (a sequence number, a clock) near @base or anywhere:
 * the selector byte's low two bits choose base + a signed 8-bit, 16-bit
 * or 32-bit offset, or a value read as is.
 */
static inline u32 fuzz_near(struct fuzz_in *in, u32 base)
{
	switch (fuzz_u8(in) & 3) {
	case 0:
		return base + (u32)(s32)(int8_t)fuzz_u8(in);
	case 1:
		return base + (u32)(s32)(int16_t)fuzz_u16(in);
	case 2:
		return base + fuzz_u32(in);
	default:
		return fuzz_u32(in);
	}
}

/*
 * A length: small (8 bits), medium (16 bits), any 32-bit value, or one
 * within 2^8 of @wide (a window, 2^31): the sizes where a wrapped
 * comparison or a clip may go wrong.
 */
static inline u32 fuzz_len(struct fuzz_in *in, u32 wide)
{
	switch (fuzz_u8(in) & 3) {
	case 0:
		return fuzz_u8(in);
	case 1:
		return fuzz_u16(in);
	case 2:
		return fuzz_u32(in);
	default:
		return wide + (u32)(s32)(int8_t)fuzz_u8(in);
	}
}

/*
 * A copy of @len bytes in a buffer that ends where its allocation ends, so
 * that AddressSanitizer reports a parser reading even one byte past what
 * it was given (for no bytes, a pointer just past a 1-byte allocation).
 * Free it with fuzz_free().
 */
static inline u8 *fuzz_dup(const void *src, u32 len)
{
	u8 *p = unit_calloc(len ? len : 1, 1);

	memcpy(p, src, len);
	return p + !len;
}

/* Up to @max bytes of the input (fewer when it runs out), by fuzz_dup(). */
static inline u8 *fuzz_bytes(struct fuzz_in *in, size_t max, u32 *len)
{
	size_t n = max < in->n ? max : in->n;
	u8 *p = fuzz_dup(in->p, (u32)n);

	in->p += n;
	in->n -= n;
	*len = (u32)n;
	return p;
}

static inline void fuzz_free(u8 *p, u32 len)
{
	free(p - !len);
}

static inline void __attribute__((noreturn))
fuzz_fail(const char *file, int line, const char *what)
{
	/* To fd 2 itself: a target may point stderr at /dev/null. */
	dprintf(2, "%s:%d: invariant broken: %s\n", file, line, what);
	abort();
}

#define FUZZ_CHECK(cond) do {						\
	if (!(cond))							\
		fuzz_fail(__FILE__, __LINE__, #cond);			\
} while (0)

/*
 * A TCP option list as a reference, from RFC 9293: the kind of the
 * option at @at of a list of @len bytes, and its size in @size (1 for
 * NOP); -1 at EOL or the end, -2 when the option is malformed (its length
 * byte missing, below 2 or past the list).  Positions in 64 bits:
 * nothing can wrap.
 */
static inline int fuzz_ref_opt(const u8 *o, u32 len, u64 at, u64 *size)
{
	*size = 0;
	if (at >= len || o[at] == 0)
		return -1;
	if (o[at] == 1) {
		*size = 1;
		return 1;
	}
	if (at + 1 >= len || o[at + 1] < 2 || at + o[at + 1] > len)
		return -2;
	*size = o[at + 1];
	return o[at];
}

/*
 * A SACK option (RFC 2018) of @size bytes at @o as a reference: kind,
 * length, then 1 to 4 blocks of a left and a right edge, each 4 bytes
 * big endian.  Their number, or -1 for any other length.
 */
static inline int fuzz_ref_sack(const u8 *o, u64 size, u32 *left, u32 *right)
{
	int n = 0;
	u64 at;

	if (size < 10 || size > 34 || (size - 2) % 8)
		return -1;
	for (at = 2; at < size; at += 8, n++) {
		left[n] = (u32)o[at] << 24 | (u32)o[at + 1] << 16 |
			  (u32)o[at + 2] << 8 | o[at + 3];
		right[n] = (u32)o[at + 4] << 24 | (u32)o[at + 5] << 16 |
			   (u32)o[at + 6] << 8 | o[at + 7];
	}
	return n;
}

#endif /* SATNET_FUZZ_H */
