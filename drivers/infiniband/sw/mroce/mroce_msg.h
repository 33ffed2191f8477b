/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mroce responder's message check (spec: "Packet-level validation", C10,
 * across the packets of one message).
 *
 * A SEND or WRITE of n bytes is ceil(n / SEG) packets (one if n is 0)
 * with consecutive PSNs: FIRST at offset 0, full segments at consecutive
 * offsets, LAST where the message ends.  SEG, the message's segment size,
 * is the PMTU, or with large segments (spec "Large segments") anything
 * from the PMTU to MROCE_SEG_MAX: the first packet's payload says which,
 * unless it is the only packet.  Every packet repeats the message's
 * opcode, MSN and length and, as its opcode has them, the address and
 * rkey (WRITE), the receive WQE's rq_seq and the immediate data;
 * SOLICITED may mark only the last.  No other request (READ,
 * ATOMIC) comes between the first and the last.
 *
 * Packets arrive in any order and are placed on arrival, each under its
 * own checks (C10 to C14), so the responder runs this check in PSN order
 * as its expected PSN reaches each packet, against the message's first
 * packet.  A packet that fails it fails the message with NAK
 * INVALID_REQUEST: no requester could have sent it so.
 *
 * Pure code: no ib_core, no locks.  KUnit suite mroce_msg.
 */
#ifndef MROCE_MSG_H
#define MROCE_MSG_H

#include <linux/types.h>

/* What one request packet says about its message. */
struct mroce_msg_seg {
	u8 opcode;		/* MROCE_OP_* */
	u16 flags;		/* MROCE_F_* */
	u32 msn;
	u32 msg_len;
	u32 offset;
	u32 payload_len;
	u64 va;
	u32 rkey;
	u32 rq_seq;
	u32 imm;
};

/* The message the expected PSN is inside of. */
struct mroce_msg_track {
	bool open;		/* its first packet was checked, not its last */
	u32 first_psn;
	u32 seg;		/* its segment size */
	struct mroce_msg_seg first;
};

static inline void mroce_msg_track_init(struct mroce_msg_track *t)
{
	t->open = false;
}

/*
 * The request packet @seg at @psn, next in PSN order, with path MTU
 * @pmtu (the smallest segment size): true if it continues (or starts,
 * or is) a message as a requester sends it.  Updates @t.  After false,
 * @t is undefined: the caller fails the connection.
 */
bool mroce_msg_track_seg(struct mroce_msg_track *t,
			 const struct mroce_msg_seg *seg, u32 psn, u32 pmtu);

#endif /* MROCE_MSG_H */
