/* SPDX-License-Identifier: GPL-2.0 */
/*
 * EPDN IPv4 option: the wire format shared by the sch_epdn gateway, the
 * receivers that read it and the senders that may originate it.
 *
 * EPDN (Explicit Packet Drop Notification, Sathiaseelan & Radzik: seed 001
 * §II-§III for EPDNv2, seed 000 §2.1 for EPDNv3) carries in a data packet
 * the lowest and highest TCP sequence number of the data a gateway dropped
 * for that flow, plus an EPDN-TTL that proves every router on the path ran
 * EPDN (seed 001 §III-D).  docs/epdn.md explains every field.
 *
 * The signal fails safe: a gateway stamps its record into every data
 * packet of the flow until the record ages out, so no single lost or
 * forged packet takes it away, and when it has had to give up a record
 * still in force it sets UNKNOWN on the packets of the flows that record
 * may have belonged to.  A receiver never calls a gap "reordered" on the
 * word of a packet with UNKNOWN set.
 *
 *   0        1        2        3
 *  +--------+--------+--------+--------+
 *  |  type  | length |EPDN-TTL|ver|flag|    type 0x9e, length 12
 *  +--------+--------+--------+--------+
 *  |      min: first dropped byte      |    TCP sequence number, big endian
 *  +--------+--------+--------+--------+
 *  |      max: last dropped byte       |    inclusive, big endian
 *  +--------+--------+--------+--------+
 */
#ifndef SATNET_EPDN_WIRE_H
#define SATNET_EPDN_WIRE_H

/*
 * RFC 4727 reserves option number 30 for experiments, as types 30, 94,
 * 158 and 222.  0x9e = 158: copied flag set (fragments keep it, so a
 * receiver sees it whichever fragment holds the TCP header), class 0
 * (control), number 30.
 */
#define EPDN_OPT_TYPE		0x9e
#define EPDN_OPT_LEN		12	/* bytes, a multiple of 4: ihl += 3 */
#define EPDN_OPT_WORDS		(EPDN_OPT_LEN / 4)

/* Byte offsets inside the option. */
#define EPDN_OFF_TYPE		0
#define EPDN_OFF_LEN		1
#define EPDN_OFF_TTL		2
#define EPDN_OFF_VERFLAGS	3
#define EPDN_OFF_MIN		4
#define EPDN_OFF_MAX		8

/* Version in the high nibble of byte 3, flags in the low nibble. */
#define EPDN_VERSION		1
#define EPDN_VER_SHIFT		4
#define EPDN_FLAGS_MASK		0x0f

/*
 * EMPTY: no drop information; min and max are zero and meaningless.  A
 *	sender originates the option with this flag (seed 001 §III-D: the
 *	sender starts EPDN-TTL equal to TTL); the first gateway that has a
 *	record fills min/max and clears it.
 * HOST:  EPDN-TTL was started by the sender, so EPDN-TTL == TTL at the
 *	receiver proves the whole path ran EPDN.  Clear when the first EPDN
 *	gateway created the option: then only the rest of the path is proven.
 * V2:    some gateway that filled min/max recorded every drop (EPDNv2, seed
 *	001 §II), corruption included; clear when all were EPDNv3 gateways
 *	that record congestion drops only (seed 000 §2.1).
 * UNKNOWN: drop information may be missing: some gateway gave up a record
 *	that may have been this flow's (its table was under pressure).  A
 *	gap this packet reveals is unknown, never "reordered".  Gateways
 *	only ever set it; it may come with EMPTY or with a range.
 */
#define EPDN_F_EMPTY		0x01
#define EPDN_F_HOST		0x02
#define EPDN_F_V2		0x04
#define EPDN_F_UNKNOWN		0x08

#define EPDN_VERFLAGS(flags)	((EPDN_VERSION << EPDN_VER_SHIFT) | \
				 ((flags) & EPDN_FLAGS_MASK))

/* IPv4 header limits the option code relies on. */
#define EPDN_IPV4_HDR_MIN	20
#define EPDN_IPV4_HDR_MAX	60

#endif /* SATNET_EPDN_WIRE_H */
