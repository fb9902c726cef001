# SPDX-License-Identifier: GPL-2.0
"""rtnetlink, raw: epdn qdisc requests that tc itself would never send,
and the kernel's ack with its extended message."""

import socket
import struct

from satnet.host import NLM_F_REQUEST, NLMSG_ERROR, TopologyError


# ---- rtnetlink, raw: what tc itself would never send ------------------------

RTM_NEWQDISC = 36
NLM_F_ACK, NLM_F_EXCL, NLM_F_CREATE = 4, 0x200, 0x400
NLM_F_CAPPED, NLM_F_ACK_TLVS = 0x100, 0x200
NLA_F_NESTED = 0x8000
SOL_NETLINK, NETLINK_EXT_ACK = 270, 11
NLMSGERR_ATTR_MSG, NLMSGERR_ATTR_OFFS = 1, 2
TCA_KIND, TCA_OPTIONS = 1, 2
TC_H_ROOT = 0xFFFFFFFF
(TCA_EPDN_LIMIT, TCA_EPDN_BYTE_LIMIT, TCA_EPDN_MODE, TCA_EPDN_IDLE,
 TCA_EPDN_FLOWS, TCA_EPDN_CORRUPT, TCA_EPDN_RED, TCA_EPDN_RED_MIN,
 TCA_EPDN_RED_MAX, TCA_EPDN_RED_PROB, TCA_EPDN_RED_EWMA, TCA_EPDN_RED_ECN,
 TCA_EPDN_RED_HARDDROP) = range(1, 14)
TCA_EPDN_U8 = {TCA_EPDN_MODE, TCA_EPDN_RED, TCA_EPDN_RED_EWMA,
               TCA_EPDN_RED_ECN, TCA_EPDN_RED_HARDDROP}
# Offset of the first attribute inside TCA_OPTIONS of an epdn request:
# nlmsghdr, tcmsg, TCA_KIND (12 bytes padded), the TCA_OPTIONS header.
EPDN_FIRST_OPT = 16 + 20 + 12 + 4


def nla(kind, data):
    return struct.pack("HH", 4 + len(data), kind) + data + \
        b"\0" * (-len(data) % 4)


def epdn_qdisc_msg(dev, attrs, flags=NLM_F_CREATE | NLM_F_EXCL,
                   handle=0x10000, parent=TC_H_ROOT):
    """RTM_NEWQDISC for an epdn qdisc with TCA_EPDN_* @attrs, (type,
    value) pairs: by default a new root 1: on @dev; flags 0 and the
    qdisc's handle and parent change an existing one."""
    opts = b"".join(nla(k, struct.pack("B" if k in TCA_EPDN_U8 else "I", v))
                    for k, v in attrs)
    body = struct.pack("BxxxiIII", socket.AF_UNSPEC,
                       socket.if_nametoindex(dev), handle, parent, 0) + \
        nla(TCA_KIND, b"epdn\0") + nla(TCA_OPTIONS | NLA_F_NESTED, opts)
    return struct.pack("IHHII", 16 + len(body), RTM_NEWQDISC,
                       NLM_F_REQUEST | NLM_F_ACK | flags, 1, 0) + body


def rtnl_socket(timeout=30):
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW,
                      socket.NETLINK_ROUTE)
    s.setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1)
    s.settimeout(timeout)
    return s


def rtnl_ack(s, msg):
    """Send one request on rtnetlink socket @s and read its ack: the
    error (0 or a positive errno; an error of the socket itself, such as
    ENOBUFS for an ack that could not be allocated, counts too), the
    extack message and the offset of the attribute the kernel blamed."""
    try:
        s.send(msg)
        reply = s.recv(65536)
    except OSError as e:
        return e.errno, "", 0
    _, kind, rflags, _, _ = struct.unpack_from("IHHII", reply)
    if kind != NLMSG_ERROR:
        raise TopologyError("rtnetlink answered %d, not an ack" % kind)
    (err,) = struct.unpack_from("i", reply, 16)
    pos = 20 + (16 if rflags & NLM_F_CAPPED else len(msg))
    text, offs = "", 0
    while rflags & NLM_F_ACK_TLVS and pos + 4 <= len(reply):
        alen, atype = struct.unpack_from("HH", reply, pos)
        if atype == NLMSGERR_ATTR_MSG:
            text = reply[pos + 4:pos + alen].rstrip(b"\0").decode()
        elif atype == NLMSGERR_ATTR_OFFS:
            (offs,) = struct.unpack_from("I", reply, pos + 4)
        pos += (alen + 3) & ~3
    return -err, text, offs
