/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The EPDN option's codec (include/satnet/epdn_wire.h), one for every
 * reader and writer of it: the sch_epdn gateway, the tcp_rn receiver and
 * originating sender, their unit tests and fuzz targets.  Plain C.
 */
#ifndef SATNET_EPDN_OPT_H
#define SATNET_EPDN_OPT_H

#include <satnet/types.h>
#include <satnet/epdn_wire.h>
#include <satnet/hdr.h>

/* The EPDN option, decoded.  min/max are host byte order. */
struct epdn_opt {
	u8 ttl;
	u8 flags;		/* EPDN_F_*, within EPDN_FLAGS_MASK */
	u32 min;		/* first dropped byte */
	u32 max;		/* last dropped byte, inclusive */
};

/* EPDN_OPT_LEN bytes at @buf; flags outside EPDN_FLAGS_MASK are dropped. */
static inline void epdn_opt_encode(u8 *buf, const struct epdn_opt *o)
{
	buf[EPDN_OFF_TYPE] = EPDN_OPT_TYPE;
	buf[EPDN_OFF_LEN] = EPDN_OPT_LEN;
	buf[EPDN_OFF_TTL] = o->ttl;
	buf[EPDN_OFF_VERFLAGS] = EPDN_VERFLAGS(o->flags);
	sat_put_be32(buf + EPDN_OFF_MIN, o->min);
	sat_put_be32(buf + EPDN_OFF_MAX, o->max);
}

/*
 * The option at @buf, with @len bytes left in the header: SAT_EBADMSG
 * unless the whole option lies in them with EPDN's type, length and
 * version; @o is written only on SAT_OK.  Only the first EPDN_OPT_LEN
 * bytes are read.  Nothing more is checked: min may lie after max, which
 * each reader judges.
 */
static inline int epdn_opt_decode(const u8 *buf, u32 len, struct epdn_opt *o)
{
	if (len < EPDN_OPT_LEN || buf[EPDN_OFF_TYPE] != EPDN_OPT_TYPE ||
	    buf[EPDN_OFF_LEN] != EPDN_OPT_LEN ||
	    buf[EPDN_OFF_VERFLAGS] >> EPDN_VER_SHIFT != EPDN_VERSION)
		return SAT_EBADMSG;
	o->ttl = buf[EPDN_OFF_TTL];
	o->flags = buf[EPDN_OFF_VERFLAGS] & EPDN_FLAGS_MASK;
	o->min = sat_get_be32(buf + EPDN_OFF_MIN);
	o->max = sat_get_be32(buf + EPDN_OFF_MAX);
	return SAT_OK;
}

#endif /* SATNET_EPDN_OPT_H */
