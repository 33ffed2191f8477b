// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce responder's message check: see mroce_msg.h.
 */

#include "mroce_msg.h"
#include "mroce_psn.h"
#include "mroce_wire.h"

/* Do the fields a later packet repeats agree with the first packet's? */
static bool mroce_msg_same(const struct mroce_msg_seg *a,
			   const struct mroce_msg_seg *b, u16 props)
{
	if (a->opcode != b->opcode || a->msn != b->msn ||
	    a->msg_len != b->msg_len)
		return false;
	if ((props & MROCE_OPP_WRITE) && (a->va != b->va || a->rkey != b->rkey))
		return false;
	if ((props & MROCE_OPP_RWQE) && a->rq_seq != b->rq_seq)
		return false;
	return !(props & (MROCE_OPP_IMM | MROCE_OPP_INV)) || a->imm == b->imm;
}

bool mroce_msg_track_seg(struct mroce_msg_track *t,
			 const struct mroce_msg_seg *seg, u32 psn, u32 pmtu)
{
	const struct mroce_wire_opinfo *op = mroce_wire_opinfo(seg->opcode);
	u64 end;

	if (!op || !(op->props & MROCE_OPP_REQUEST))
		return false;
	/* READ and ATOMIC are one packet each, never inside a message */
	if (!(op->props & MROCE_OPP_MSG))
		return !t->open;
	if (seg->flags & MROCE_F_FIRST) {
		if (t->open)
			return false;	/* the previous message never ended */
		t->first = *seg;
		t->first_psn = psn;
		/*
		 * The message's segment size: its first packet's payload,
		 * unless that is all of it.  At least the PMTU, at most
		 * MROCE_SEG_MAX; the PMTU itself without large segments.
		 */
		t->seg = seg->payload_len;
		if (!(seg->flags & MROCE_F_LAST) &&
		    (t->seg < pmtu || t->seg > MROCE_SEG_MAX))
			return false;
	} else if (!t->open || !mroce_msg_same(&t->first, seg, op->props)) {
		return false;
	}
	if (seg->payload_len > MROCE_SEG_MAX)
		return false;
	/* the k-th packet carries the k-th segment */
	if (seg->offset != (u64)mroce_psn_fwd(t->first_psn, psn) * t->seg)
		return false;
	end = (u64)seg->offset + seg->payload_len;
	if (seg->flags & MROCE_F_LAST) {
		t->open = false;
		/* the rest of the message: one segment at most */
		return end == seg->msg_len &&
		       ((seg->flags & MROCE_F_FIRST) || seg->payload_len <= t->seg);
	}
	/* a full segment, with more of the message after it */
	t->open = true;
	return !(seg->flags & MROCE_F_SOLICITED) &&
	       seg->payload_len == t->seg && end < seg->msg_len;
}
