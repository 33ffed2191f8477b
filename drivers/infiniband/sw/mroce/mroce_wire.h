/* SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB */
/*
 * MetaRoCE v1 wire format: header layouts, opcodes, flags, NAK codes and
 * the packet parser/builder (mroce_wire.c).
 *
 * Normative reference: Documentation/metaroce-spec.rst.  Every struct
 * below is one header of that document, byte for byte; the section names
 * in the comments are the document's.
 *
 * Pure protocol code: no ib_core or rdma headers, so KUnit and a userspace
 * conformance suite can include it as is (with shims for <linux/types.h>,
 * <linux/bits.h>, <linux/build_bug.h> and mroce_compat.h's unaligned
 * accessors).
 *
 * All multi-byte fields are big-endian.  A "24-bit field" shares one
 * 32-bit word with an 8-bit field above it: the word is read as a
 * big-endian u32, the 8-bit field is bits 31..24, the 24-bit field is
 * bits 23..0.  The headers are a whole number of 8-byte words, but the
 * buffer they sit in need not be aligned: the code reads and writes them
 * with get/put_unaligned_be*().
 */
#ifndef MROCE_WIRE_H
#define MROCE_WIRE_H

#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/limits.h>
#include <linux/stddef.h>
#include <linux/types.h>
#include "mroce_compat.h"

#define MROCE_WIRE_VERSION		1
#define MROCE_WIRE_UDP_PORT		4792	/* RoCEv2 is 4791, UET 4793 */
#define MROCE_WIRE_SPORT_BASE		0xc000	/* 49152: IANA dynamic range */
#define MROCE_WIRE_SPORT_MASK		0x3fff	/* 16384 source ports */

#define MROCE_WIRE_MAX_PATHS		64	/* path ids 0 .. 63 */
#define MROCE_WIRE_DEF_PATHS		16
#define MROCE_WIRE_SACK_BITS		256	/* PSNs one SACK bitmap spans */
/*
 * The connection window: a requester sends no PSN 256 or more past
 * snd_una, and a responder takes none 256 or more past ePSN, so that one
 * SACK bitmap always describes everything in flight.
 */
#define MROCE_WINDOW			MROCE_WIRE_SACK_BITS
#define MROCE_WIRE_SACK_WORDS		(MROCE_WIRE_SACK_BITS / 64)
/*
 * The largest payload of any packet (P11): a SEND or WRITE segment on a
 * 9216-byte jumbo link (spec "Large segments"); the verbs path MTU stops
 * at 4096.
 */
#define MROCE_WIRE_MAX_PAYLOAD		9216
#define MROCE_WIRE_MAX_PMTU		4096	/* and a datagram's payload */
#define MROCE_WIRE_MAX_MSG_LEN		0x80000000U	/* 2^31, as IB */
#define MROCE_WIRE_MAX_RNR_TIMER	31

#define MROCE_WIRE_U24_MASK		GENMASK(23, 0)
#define MROCE_WIRE_QPN_GSI		1	/* datagram opcodes only */

/*
 * Base Header (BH), 32 bytes, first in every packet.
 *
 *  0: version  opcode  flags(16)
 *  4: hdr_words(8)  | dest QPN(24)
 *  8: path_id(8)    | src QPN(24)
 * 12: reserved(8)   | PSN(24)
 * 16: path sequence number(32)
 * 20: reserved(8)   | MSN(24)
 * 24: timestamp, microseconds(32)
 * 28: reserved(32)
 */
struct mroce_bh {
	u8	version;
	u8	opcode;
	__be16	flags;
	__be32	words_dqpn;	/* hdr_words:8 | dest_qpn:24 */
	__be32	path_sqpn;	/* path_id:8 | src_qpn:24 */
	__be32	psn;		/* reserved:8 | psn:24 */
	__be32	path_seq;
	__be32	msn;		/* reserved:8 | msn:24 */
	__be32	ts_us;
	__be32	reserved;
};

/*
 * Data Header (DH), 16 bytes: SEND*, WRITE*, READ_RESP.
 *
 *  0: offset of this payload in the message(32)
 *  4: message length(32)
 *  8: receive-queue sequence number(32)   (reserved unless consuming)
 * 12: immediate data(32)                  (reserved unless *_IMM)
 */
struct mroce_dh {
	__be32	offset;
	__be32	msg_len;
	__be32	rq_seq;
	__be32	imm;
};

/*
 * Memory Header (MH), 16 bytes: the receiver's memory the packet
 * addresses.  WRITE*, ATOMIC_*: the responder's; READ_REQ: the
 * responder's source; READ_RESP: the requester's sink.
 *
 *  0: virtual address(64) of byte 0 of the message
 *  8: rkey(32)
 * 12: reserved(32)
 */
struct mroce_mh {
	__be64	va;
	__be32	rkey;
	__be32	reserved;
};

/*
 * Read Header (RH), 24 bytes: READ_REQ.
 *
 *  0: sink virtual address(64)  (echoed in the responses' MH)
 *  8: sink key(32)
 * 12: message length(32)        (the whole READ)
 * 16: offset(32)                (of the range requested now)
 * 20: length(32)                (of the range requested now)
 */
struct mroce_rh {
	__be64	sink_va;
	__be32	sink_key;
	__be32	msg_len;
	__be32	offset;
	__be32	length;
};

/*
 * Atomic Header (ATH), 16 bytes: ATOMIC_CMP_SWP, ATOMIC_FETCH_ADD.
 *
 *  0: swap value (CMP_SWP) or addend (FETCH_ADD)(64)
 *  8: compare value (CMP_SWP; reserved for FETCH_ADD)(64)
 */
struct mroce_ath {
	__be64	swap_add;
	__be64	compare;
};

/* Atomic Result Header (ARH), 8 bytes: ATOMIC_RESP, the original value. */
struct mroce_arh {
	__be64	orig;
};

/*
 * ACK Header (KH), 56 bytes: ACK, NAK.
 *
 *  0: echo timestamp(32)
 *  4: echo path sequence number(32)
 *  8: echo path_id(8) | echo PSN(24)
 * 12: rx_count(16)    | ce_count(16)
 * 16: rate hint, Mbit/s(32), 0 = no hint
 * 20: ack_delay, microseconds(16) | echo_flags(8) | seg_max(8)
 * 24: SACK bitmap, 4 x 64-bit words: bit i (of 0 .. 255) is bit
 *     (i % 64) of word i / 64 and stands for PSN (BH.psn + i)
 */
struct mroce_kh {
	__be32	echo_ts;
	__be32	echo_path_seq;
	__be32	echo_path_psn;	/* echo_path_id:8 | echo_psn:24 */
	__be16	rx_count;
	__be16	ce_count;
	__be32	rate_hint;
	__be16	ack_delay;
	u8	echo_flags;
	u8	seg_max;	/* with ECHO_SEG: x MROCE_SEG_UNIT bytes */
	__be64	sack[MROCE_WIRE_SACK_WORDS];
};

/*
 * Piggyback Header (PBH), 8 bytes: a request packet with the PB_ACK flag
 * also acknowledges, as an ACK of cumulative PSN ack_psn with the KH that
 * follows the PBH would.  PBH and KH come after the opcode's headers.
 *
 *  0: reserved(8) | ack PSN(24)
 *  4: reserved(32)
 */
struct mroce_pbh {
	__be32	ack_psn;	/* reserved:8 | ack_psn:24 */
	__be32	reserved;
};

/*
 * NAK Header (NKH), 8 bytes: NAK.
 *
 *  0: code(8) | rnr_timer(8) | reserved(16)
 *  4: reserved(8) | NAK PSN(24)
 */
struct mroce_nkh {
	u8	code;
	u8	rnr_timer;
	__be16	reserved;
	__be32	psn;		/* reserved:8 | nak_psn:24 */
};

/*
 * Datagram Header (DGH), 8 bytes: UD_SEND, UD_SEND_IMM.
 *
 *  0: Q_Key(32)
 *  4: immediate data(32)  (reserved for UD_SEND)
 */
struct mroce_dgh {
	__be32	qkey;
	__be32	imm;
};

static_assert(sizeof(struct mroce_bh) == 32);
static_assert(offsetof(struct mroce_bh, flags) == 2);
static_assert(offsetof(struct mroce_bh, words_dqpn) == 4);
static_assert(offsetof(struct mroce_bh, path_sqpn) == 8);
static_assert(offsetof(struct mroce_bh, psn) == 12);
static_assert(offsetof(struct mroce_bh, path_seq) == 16);
static_assert(offsetof(struct mroce_bh, msn) == 20);
static_assert(offsetof(struct mroce_bh, ts_us) == 24);
static_assert(offsetof(struct mroce_bh, reserved) == 28);
static_assert(sizeof(struct mroce_dh) == 16);
static_assert(offsetof(struct mroce_dh, rq_seq) == 8);
static_assert(offsetof(struct mroce_dh, imm) == 12);
static_assert(sizeof(struct mroce_mh) == 16);
static_assert(offsetof(struct mroce_mh, rkey) == 8);
static_assert(sizeof(struct mroce_rh) == 24);
static_assert(offsetof(struct mroce_rh, sink_key) == 8);
static_assert(offsetof(struct mroce_rh, msg_len) == 12);
static_assert(offsetof(struct mroce_rh, length) == 20);
static_assert(sizeof(struct mroce_ath) == 16);
static_assert(offsetof(struct mroce_ath, compare) == 8);
static_assert(sizeof(struct mroce_arh) == 8);
static_assert(sizeof(struct mroce_kh) == 56);
static_assert(offsetof(struct mroce_kh, echo_path_psn) == 8);
static_assert(offsetof(struct mroce_kh, rx_count) == 12);
static_assert(offsetof(struct mroce_kh, ce_count) == 14);
static_assert(offsetof(struct mroce_kh, rate_hint) == 16);
static_assert(offsetof(struct mroce_kh, ack_delay) == 20);
static_assert(offsetof(struct mroce_kh, echo_flags) == 22);
static_assert(offsetof(struct mroce_kh, sack) == 24);
static_assert(sizeof(struct mroce_pbh) == 8);
static_assert(sizeof(struct mroce_nkh) == 8);
static_assert(offsetof(struct mroce_nkh, psn) == 4);
static_assert(sizeof(struct mroce_dgh) == 8);

/* Header lengths per opcode (BH + extension headers), bytes. */
#define MROCE_HLEN_SEND		(32 + 16)		/* BH DH */
#define MROCE_HLEN_WRITE	(32 + 16 + 16)		/* BH MH DH */
#define MROCE_HLEN_READ_REQ	(32 + 16 + 24)		/* BH MH RH */
#define MROCE_HLEN_ATOMIC	(32 + 16 + 16)		/* BH MH AH */
#define MROCE_HLEN_ATOMIC_RESP	(32 + 8)		/* BH ARH */
#define MROCE_HLEN_ACK		(32 + 56)		/* BH KH */
#define MROCE_HLEN_NAK		(32 + 56 + 8)		/* BH KH NKH */
#define MROCE_HLEN_PROBE	32			/* BH */
#define MROCE_HLEN_UD		(32 + 8)		/* BH DGH */
/* What the PB_ACK flag adds to a request's headers: PBH KH. */
#define MROCE_HLEN_PB_ACK	(8 + 56)
#define MROCE_HLEN_MAX		(MROCE_HLEN_READ_REQ + MROCE_HLEN_PB_ACK)
/* Largest header in front of a payload, without PB_ACK. */
#define MROCE_HLEN_MAX_DATA	MROCE_HLEN_WRITE
/* IP and UDP headers in front of a MetaRoCE header, worst case (IPv6). */
#define MROCE_WIRE_IP_UDP_MAX	(40 + 8)

/*
 * Bytes a data packet with @payload bytes of payload takes from the IP
 * header on, worst case: what rates, windows and the pacer count, and
 * what must fit in the netdev MTU.
 */
static inline u32 mroce_wire_pkt_bytes(u32 payload)
{
	return MROCE_WIRE_IP_UDP_MAX + MROCE_HLEN_MAX_DATA + payload;
}

static_assert(sizeof(struct mroce_bh) + sizeof(struct mroce_dh) ==
	      MROCE_HLEN_SEND);
static_assert(sizeof(struct mroce_bh) + sizeof(struct mroce_mh) +
	      sizeof(struct mroce_dh) == MROCE_HLEN_WRITE);
static_assert(sizeof(struct mroce_bh) + sizeof(struct mroce_mh) +
	      sizeof(struct mroce_rh) == MROCE_HLEN_READ_REQ);
static_assert(sizeof(struct mroce_bh) + sizeof(struct mroce_mh) +
	      sizeof(struct mroce_ath) == MROCE_HLEN_ATOMIC);
static_assert(sizeof(struct mroce_bh) + sizeof(struct mroce_arh) ==
	      MROCE_HLEN_ATOMIC_RESP);
static_assert(sizeof(struct mroce_bh) + sizeof(struct mroce_kh) ==
	      MROCE_HLEN_ACK);
static_assert(sizeof(struct mroce_bh) + sizeof(struct mroce_kh) +
	      sizeof(struct mroce_nkh) == MROCE_HLEN_NAK);
static_assert(sizeof(struct mroce_bh) + sizeof(struct mroce_dgh) ==
	      MROCE_HLEN_UD);
static_assert(MROCE_HLEN_MAX_DATA <= 64);
static_assert(sizeof(struct mroce_pbh) + sizeof(struct mroce_kh) ==
	      MROCE_HLEN_PB_ACK);
/* the largest header: a READ request's with PBH and KH */
static_assert(sizeof(struct mroce_bh) + sizeof(struct mroce_mh) +
	      sizeof(struct mroce_rh) + sizeof(struct mroce_pbh) +
	      sizeof(struct mroce_kh) == MROCE_HLEN_MAX);

/*
 * Opcodes (BH.opcode).  0x00 is never valid: an all-zero header drops.
 * The spec spells them SEND_WITH_IMM, RDMA_WRITE, RDMA_WRITE_WITH_IMM,
 * RDMA_READ_REQ, RDMA_READ_RESP and UD_SEND_WITH_IMM; the opinfo names do.
 */
enum mroce_opcode {
	MROCE_OP_SEND			= 0x01,
	MROCE_OP_SEND_IMM		= 0x02,
	MROCE_OP_WRITE			= 0x03,
	MROCE_OP_WRITE_IMM		= 0x04,
	MROCE_OP_READ_REQ		= 0x05,
	MROCE_OP_READ_RESP		= 0x06,
	MROCE_OP_ATOMIC_CMP_SWP		= 0x07,
	MROCE_OP_ATOMIC_FETCH_ADD	= 0x08,
	MROCE_OP_ATOMIC_RESP		= 0x09,
	MROCE_OP_SEND_INV		= 0x0a,	/* SEND_WITH_INV, v1.1 */
	MROCE_OP_ACK			= 0x10,
	MROCE_OP_NAK			= 0x11,
	MROCE_OP_PROBE			= 0x12,
	MROCE_OP_UD_SEND		= 0x20,
	MROCE_OP_UD_SEND_IMM		= 0x21,
	/* 0xc0 .. 0xff: experimental, dropped unless negotiated */
	MROCE_OP_EXPERIMENTAL_FIRST	= 0xc0,
};

/* BH.flags */
#define MROCE_F_ACK_REQ		BIT(0)	/* answer with an ACK right away */
#define MROCE_F_SOLICITED	BIT(1)	/* solicited event on completion */
#define MROCE_F_FIRST		BIT(2)	/* payload starts the message */
#define MROCE_F_LAST		BIT(3)	/* payload ends the message */
#define MROCE_F_RETRANSMIT	BIT(4)	/* sent before; or a READ re-request */
#define MROCE_F_PB_ACK		BIT(5)	/* request: PBH and KH follow, an ACK;
					 * PROBE: do you accept them?
					 */
#define MROCE_F_DEFINED		GENMASK(5, 0)

/* KH.echo_flags */
#define MROCE_ECHO_CE		BIT(0)	/* triggering packet arrived CE */
#define MROCE_ECHO_DUP		BIT(1)	/* ... was a duplicate */
#define MROCE_ECHO_PB		BIT(2)	/* ... a PB_ACK PROBE: accepted */
#define MROCE_ECHO_SEG		BIT(3)	/* ... and large segments accepted */
#define MROCE_ECHO_DEFINED	(MROCE_ECHO_CE | MROCE_ECHO_DUP | MROCE_ECHO_PB | \
				 MROCE_ECHO_SEG)

/*
 * Large segments: the largest segment size of a SEND or WRITE message
 * (the PMTU, or with the peer's agreement anything up to this; spec
 * "Large segments"): the largest payload any packet may carry (P11).
 * KH.seg_max, sent with ECHO_SEG, gives the largest segment its sender
 * takes in units of MROCE_SEG_UNIT bytes: 32, fine enough that a
 * 1500-byte link's 1388 reads 1376 (a 4 KiB message still takes 3
 * packets), so one byte says at most 8160.
 */
#define MROCE_SEG_MAX		MROCE_WIRE_MAX_PAYLOAD
#define MROCE_SEG_UNIT		32

/* NKH.code */
enum mroce_nak_code {
	MROCE_NAK_PSN_SEQ_ERR	= 1,	/* PSN ahead of the receive window */
	MROCE_NAK_RNR		= 2,	/* receiver not ready: no recv WQE */
	MROCE_NAK_REM_ACCESS	= 3,	/* rkey, range or access violation */
	MROCE_NAK_REM_OP	= 4,	/* responder could not execute */
	MROCE_NAK_INV_REQ	= 5,	/* request the responder cannot accept */
	MROCE_NAK_MAX		= MROCE_NAK_INV_REQ,
};

/* Opcode properties (struct mroce_wire_opinfo.props). */
#define MROCE_OPP_PAYLOAD	BIT(0)	/* carries payload after the headers */
#define MROCE_OPP_RWQE		BIT(1)	/* consumes a receive WQE (RC: DH.rq_seq) */
#define MROCE_OPP_IMM		BIT(2)	/* carries immediate data */
#define MROCE_OPP_REQUEST	BIT(3)	/* requester -> responder, owns a PSN */
#define MROCE_OPP_RESPONSE	BIT(4)	/* responder -> requester, request PSN */
#define MROCE_OPP_ACKNOWLEDGE	BIT(5)	/* ACK or NAK */
#define MROCE_OPP_DATAGRAM	BIT(6)	/* UD, no reliability */
#define MROCE_OPP_MSG		BIT(7)	/* DH: offset/msg_len, FIRST/LAST */
#define MROCE_OPP_WRITE		BIT(8)	/* payload placed at MH's address */
#define MROCE_OPP_READ		BIT(9)	/* READ request: answered with data */
#define MROCE_OPP_ATOMIC	BIT(10)	/* ATOMIC request: executed once */
#define MROCE_OPP_INV		BIT(11)	/* DH.imm: an rkey the responder invalidates */

/* BH fields an opcode does not use: they are reserved, must be zero. */
#define MROCE_BHZ_PSN		BIT(0)
#define MROCE_BHZ_PATH_SEQ	BIT(1)
#define MROCE_BHZ_MSN		BIT(2)

/* Which extension headers an opcode carries, and where (0 = absent). */
struct mroce_wire_opinfo {
	const char *name;
	u8 hdr_len;		/* BH + extension headers, bytes */
	u8 off_dh;
	u8 off_mh;
	u8 off_rh;
	u8 off_ath;
	u8 off_arh;
	u8 off_kh;
	u8 off_nkh;
	u8 off_dgh;
	u8 bh_zero;		/* MROCE_BHZ_*: unused BH fields */
	u16 flags_ok;		/* BH.flags this opcode may carry */
	u16 props;		/* MROCE_OPP_* */
};

const struct mroce_wire_opinfo *mroce_wire_opinfo(unsigned int opcode);

/*
 * Header length of a packet of opcode @op with BH.flags @flags: the
 * opcode's, and PBH KH after them if @op is a request and @flags has
 * PB_ACK (on a PROBE the flag asks a question and adds nothing).
 */
static inline unsigned int
mroce_wire_hdr_len(const struct mroce_wire_opinfo *op, u16 flags)
{
	if ((op->props & MROCE_OPP_REQUEST) && (flags & MROCE_F_PB_ACK))
		return op->hdr_len + MROCE_HLEN_PB_ACK;
	return op->hdr_len;
}

/*
 * Why mroce_wire_parse() rejected a packet: one value per receive drop
 * counter of the spec, returned negated.  The order is the order of the
 * checks (spec "Packet-level validation").
 */
enum mroce_wire_err {
	MROCE_WIRE_OK = 0,
	MROCE_WIRE_ERR_SHORT,		/* rx_drop_short */
	MROCE_WIRE_ERR_VERSION,		/* rx_drop_version */
	MROCE_WIRE_ERR_OPCODE,		/* rx_drop_opcode */
	MROCE_WIRE_ERR_HDR_LEN,		/* rx_drop_hdr_len */
	MROCE_WIRE_ERR_RESERVED,	/* rx_drop_reserved */
	MROCE_WIRE_ERR_FLAGS,		/* rx_drop_flags */
	MROCE_WIRE_ERR_QPN,		/* rx_drop_qpn */
	MROCE_WIRE_ERR_PATH,		/* rx_drop_path */
	MROCE_WIRE_ERR_FIELD,		/* rx_drop_field */
	MROCE_WIRE_ERR_LENGTH,		/* rx_drop_length */
	MROCE_WIRE_NUM_ERR
};

/* Counter name of an mroce_wire_err (either sign), "rx_drop_short"... */
const char *mroce_wire_err_name(int err);

/*
 * A parsed packet, host-endian.  Fields of headers the opcode does not
 * carry are zero.  READ_REQ reports RH.msg_len and RH.offset in msg_len
 * and offset, RH.length in rd_length; UD_SEND_IMM reports DGH.imm in imm.
 */
struct mroce_pkt_info {
	/* BH */
	u8 version;
	u8 opcode;
	u16 flags;
	u8 path_id;
	u32 dest_qpn;
	u32 src_qpn;
	u32 psn;
	u32 path_seq;
	u32 msn;
	u32 ts_us;
	/* layout */
	u32 hdr_len;		/* payload starts here */
	u32 payload_len;	/* packet length - hdr_len */
	/* DH, RH */
	u32 offset;
	u32 msg_len;
	u32 rq_seq;
	u32 imm;
	u32 rd_length;
	/* MH */
	u64 va;
	u32 rkey;
	/* RH */
	u64 sink_va;
	u32 sink_key;
	/* AH, ARH */
	u64 swap_add;
	u64 compare;
	u64 orig;
	/* PBH (PB_ACK): the cumulative PSN of the piggybacked ACK */
	u32 ack_psn;
	/* KH (ACK, NAK; a request with PB_ACK) */
	u32 echo_ts;
	u32 echo_path_seq;
	u32 echo_psn;
	u8 echo_path_id;
	u8 echo_flags;
	u8 seg_max;
	u16 rx_count;
	u16 ce_count;
	u16 ack_delay_us;
	u32 rate_hint_mbps;
	u64 sack[MROCE_WIRE_SACK_WORDS];
	/* receive metadata, not on the wire: the IP header said CE; the
	 * UDP source port (the sender's path entropy)
	 */
	bool rx_ce;
	u16 rx_sport;
	bool rx_from_peer;	/* RC: source QPN and addresses are the peer's */
	bool rx_more;		/* the next packet of its GRO batch goes to
				 * the same engine of the same QP
				 */
	/* NKH */
	u8 nak_code;
	u8 rnr_timer;
	u32 nak_psn;
	/* DGH */
	u32 qkey;
};

/*
 * Validate the MetaRoCE packet @buf of @len bytes (the UDP payload) and
 * describe it in @info.  Returns 0, or -enum mroce_wire_err; @info is then
 * only partly filled.  Reads nothing at or beyond @buf + @len, and of a
 * packet with payload only the headers.
 */
int mroce_wire_parse(const void *buf, unsigned int len,
		     struct mroce_pkt_info *info);

/*
 * Write the headers of the packet @info describes (version, hdr_len and
 * the fields of headers @info->opcode does not carry are ignored) to @buf,
 * @size bytes.  The caller appends @info->payload_len bytes of payload.
 * Returns the header length, or -enum mroce_wire_err if @size is too small
 * (SHORT), a value does not fit its field (FIELD) or the packet would not
 * pass mroce_wire_parse(): the builder never writes a packet a receiver
 * drops.
 */
int mroce_wire_build(void *buf, unsigned int size,
		     const struct mroce_pkt_info *info);

/*
 * Segmentation, what a NIC with MROCE_XPORT_CAP_SEG does for a message as
 * TSO does for a TCP stream (Documentation/metaroce-spec.rst, "Segmentation
 * offload").  A chunk is the headers of packet k of a message (the
 * template) followed by the payload of packets k .. k + n - 1, each @mss
 * bytes but the last.  Segment i (0 .. n - 1) is the template with:
 *
 *   BH.psn                  template PSN + i, modulo 2^24
 *   DH.offset               template offset + i * mss
 *   BH.flags, BH.path_id,   the segment's own (struct mroce_wire_seg):
 *   BH.path_seq             the host decides them per packet, as it does
 *                           for packets it builds itself
 *   payload                 chunk bytes [i * mss, min((i + 1) * mss, len))
 *
 * and every other header field copied.  Only message opcodes
 * (MROCE_OPP_MSG: SEND*, WRITE*, READ_RESP) are segmented.
 */
struct mroce_wire_seg {
	u32 path_seq;
	u16 flags;		/* MROCE_F_*: FIRST, LAST, ACK_REQ, ... */
	u16 sport;		/* UDP source port: the path's entropy */
	u8 path_id;
};

/*
 * The segmentation rule on a parsed template: turn @pi, the template's
 * description, into segment @i's (@i below DIV_ROUND_UP(@chunk_len, @mss)).
 */
void mroce_wire_seg_info(struct mroce_pkt_info *pi, u32 mss, u32 chunk_len,
			 u32 i, const struct mroce_wire_seg *seg);

/*
 * Write the headers of segment @i of the chunk whose template headers are
 * the first @tmpl_len bytes of @tmpl, @chunk_len payload bytes after them
 * cut in @mss-byte pieces, to @buf (@size bytes).  Returns the header
 * length (the template's), or -enum mroce_wire_err if the template is not
 * a valid message packet, @i is past the chunk, or the segment would not
 * pass mroce_wire_parse().  @payload_len gets segment @i's payload bytes.
 */
int mroce_wire_seg_build(void *buf, unsigned int size, const void *tmpl,
			 unsigned int tmpl_len, u32 mss, u32 chunk_len, u32 i,
			 const struct mroce_wire_seg *seg, u32 *payload_len);

/* Timer of an RNR NAK (verbs min_rnr_timer encoding) in microseconds. */
u32 mroce_wire_rnr_timer_us(unsigned int code);

/* 24-bit field of a BH/KH/NKH word, kept as a big-endian u32 in memory. */
static inline u32 mroce_wire_get24(const __be32 *word)
{
	return get_unaligned_be32(word) & MROCE_WIRE_U24_MASK;
}

/* The 8-bit field above a 24-bit field. */
static inline u8 mroce_wire_get8hi(const __be32 *word)
{
	return get_unaligned_be32(word) >> 24;
}

/* Store @hi:8 | @lo:24 in @word; bits of @lo above bit 23 are dropped. */
static inline void mroce_wire_put8_24(__be32 *word, u8 hi, u32 lo)
{
	put_unaligned_be32((u32)hi << 24 | (lo & MROCE_WIRE_U24_MASK), word);
}

/* SACK bitmap, host form: bit i stands for PSN (ack PSN + i). */
static inline bool mroce_wire_sack_test(const u64 *sack, unsigned int i)
{
	return i < MROCE_WIRE_SACK_BITS && (sack[i / 64] >> (i % 64)) & 1;
}

static inline void mroce_wire_sack_set(u64 *sack, unsigned int i)
{
	if (i < MROCE_WIRE_SACK_BITS)
		sack[i / 64] |= BIT_ULL(i % 64);
}

/*
 * UDP source port of path @path_id in entropy generation @gen of a
 * connection whose base is @base (spec "UDP", source port):
 * 49152 + ((base + path_id + 64 * gen) mod 16384).
 */
static inline u16 mroce_wire_sport(u16 base, u8 path_id, u8 gen)
{
	return MROCE_WIRE_SPORT_BASE |
	       ((base + path_id + MROCE_WIRE_MAX_PATHS * gen) &
		MROCE_WIRE_SPORT_MASK);
}

#endif /* MROCE_WIRE_H */
