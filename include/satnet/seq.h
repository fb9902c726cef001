/* SPDX-License-Identifier: GPL-2.0 */
/*
 * TCP sequence number order for the plain-C cores: before()/after() of
 * include/net/tcp.h, under names of our own, as the cores also build in
 * userspace and the modules include net/tcp.h.  Sequence numbers wrap:
 * a is before b when b - a, taken as a signed 32-bit number, is positive.
 * Two numbers 2^31 apart are each before the other; callers that take
 * them from a packet bound them first.
 */
#ifndef SATNET_SEQ_H
#define SATNET_SEQ_H

#include <satnet/types.h>

static inline bool sat_before(u32 a, u32 b)
{
	return (s32)(a - b) < 0;
}

static inline bool sat_after(u32 a, u32 b)
{
	return sat_before(b, a);
}

static inline u32 sat_seq_min(u32 a, u32 b)
{
	return sat_before(a, b) ? a : b;
}

static inline u32 sat_seq_max(u32 a, u32 b)
{
	return sat_before(a, b) ? b : a;
}

#endif /* SATNET_SEQ_H */
