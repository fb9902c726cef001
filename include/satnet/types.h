/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's integer types for the plain-C algorithm cores, so that the
 * same core file compiles into a module, into a userspace unit test and
 * into a BPF program (clang -target bpf, whose vmlinux.h has them all).
 */
#ifndef SATNET_TYPES_H
#define SATNET_TYPES_H

#if defined(__bpf__)
/* vmlinux.h, included first, has the types */
#elif defined(__KERNEL__)
#include <linux/types.h>
#include <linux/math64.h>
#else
#include <stdbool.h>
#include <linux/types.h>
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s32 s32;
typedef __s64 s64;

/* include/linux/math64.h's, which a 64-bit kernel defines so too. */
static inline u64 div_u64(u64 dividend, u32 divisor)
{
	return dividend / divisor;
}

static inline u64 div64_u64(u64 dividend, u64 divisor)
{
	return dividend / divisor;
}
#endif

#endif /* SATNET_TYPES_H */
