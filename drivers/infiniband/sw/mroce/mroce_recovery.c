// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce loss recovery: which request packets to send again, and why.
 *
 * Four mechanisms, each resending single packets, never the window (no
 * go-back-N):
 *  - the loss detector (mroce_sb.c: path sequence gaps, RACK) declares
 *    packets lost from the SACK information of each ACK; each is resent
 *    once, on its path unless that path is dead (mroce_req_recover());
 *  - the tail probe: nothing heard for a probe timeout, the newest
 *    missing packet goes again with ACK_REQ, so that its ACK reveals what
 *    else is missing (mroce_req_tlp());
 *  - the RTO: no progress for a whole RTO, the oldest missing packet goes
 *    again and its path is declared dead; the verbs retry budget
 *    (timeout x retry_cnt) is spent here (mroce_req_rto());
 *  - NAK PSN_SEQ_ERR and the end of an RNR wait resend what is missing
 *    from a PSN on (mroce_req_retransmit()).
 * The timer that runs the probe and the RTO is mroce_timer.c's.
 *
 * Everything here runs under qp->sq.lock.
 */

#include <linux/jiffies.h>

#include "mroce_sq.h"
#include "mroce_trace.h"

/*
 * The first packet of @sw that may still be missing.  Packets of a SEND
 * or WRITE before the cumulative point have arrived: starting there keeps
 * the loss handling's work within the window, not proportional to the
 * message (a 2 GiB WRITE has half a million packets).  READ and ATOMIC
 * requests wait for their answers, whatever the cumulative point says.
 */
static u32 mroce_req_first_unacked(const struct mroce_qp *qp,
				   const struct mroce_swqe *sw)
{
	if (sw->op->mask & MROCE_WR_READ)
		return sw->read_base;
	if ((sw->op->mask & MROCE_WR_ATOMIC) ||
	    !mroce_psn_before(sw->first_psn, qp->sq.sb.una))
		return 0;
	return min(mroce_psn_fwd(sw->first_psn, qp->sq.sb.una), sw->sent);
}

/*
 * A loss-handling walk over the outstanding request packets examined @n
 * of them.  Counted so that the bound above can be seen from outside
 * (loss_scan_pkts / loss_scans stays within the window).
 */
static void mroce_req_scanned(struct mroce_qp *qp, u32 n)
{
	mroce_qcount(qp, MROCE_CNT_LOSS_SCANS, 1);
	mroce_qcount(qp, MROCE_CNT_LOSS_SCAN_PKTS, n);
}

/* Does request PSN @k of @sw still need to reach the peer? */
bool mroce_req_missing(struct mroce_qp *qp, struct mroce_swqe *sw, u32 k)
{
	u32 psn = mroce_psn_add(sw->first_psn, k);

	if (sw->op->mask & MROCE_WR_READ) {
		u32 segs;

		if (k < sw->read_base)	/* all in; its slot may be reused */
			return false;
		segs = mroce_segs(qp, mroce_read_chunk_len(qp, sw, k));

		return qp->sq.read_seen[psn % MROCE_WINDOW] !=
		       mroce_segs_mask(segs);
	}
	if (sw->op->mask & MROCE_WR_ATOMIC)
		return !sw->done;
	return !mroce_psn_before(psn, qp->sq.sb.una) &&
	       !(mroce_sb_slot(&qp->sq.sb, psn)->flags & MROCE_SB_SACKED);
}

/*
 * Resend, oldest first and at most @max of them, the request packets from
 * @from_psn on that the peer has neither acknowledged nor selectively
 * acknowledged (READs: whose responses are incomplete).  Never the window.
 */
void mroce_req_retransmit(struct mroce_qp *qp, u32 from_psn, u32 max)
{
	u32 idx, k, n = 0;

	for (idx = qp->sq.tail; idx != qp->sq.head; idx++) {
		struct mroce_swqe *sw = &qp->sq.wqe[idx & qp->sq.ring.mask];

		for (k = mroce_req_first_unacked(qp, sw); k < sw->sent; k++) {
			n++;
			if (mroce_psn_before(mroce_psn_add(sw->first_psn, k),
					     from_psn) ||
			    !mroce_req_missing(qp, sw, k))
				continue;
			if (!max)
				goto out;
			trace_mroce_retx(qp, mroce_psn_add(sw->first_psn, k), MROCE_RETX_RNR);
			mroce_req_xmit(qp, idx, k, true, -1);
			max--;
		}
	}
out:
	mroce_req_scanned(qp, n);
}

/* The scoreboard reports a PSN delivered or declared lost. */
void mroce_sb_event(void *ctx, u32 psn, const struct mroce_sb_slot *s,
		    enum mroce_sb_event ev)
{
	struct mroce_sb_ctx *c = ctx;
	struct mroce_qp *qp = c->qp;
	u64 now = c->now_us;

	switch (ev) {
	case MROCE_SB_DELIVERED:
		/* a lost packet not resent yet is no longer in flight */
		mroce_paths_delivered(qp->sq.paths, s->path,
				      !(s->flags & MROCE_SB_LOST), now);
		return;
	case MROCE_SB_LOST_PATH_SEQ:
		mroce_qcount(qp, MROCE_CNT_LOSS_PATH_SEQ, 1);
		break;
	case MROCE_SB_LOST_RACK:
		mroce_qcount(qp, MROCE_CNT_LOSS_RACK, 1);
		break;
	}
	trace_mroce_loss(qp, psn, s, ev);
	/* the loss is charged to its path; enough of them and it dies */
	if (mroce_paths_lost(qp->sq.paths, s->path,
			     mroce_sb_passed(&qp->sq.sb, s), s->xmit_us, now)) {
		mroce_qcount(qp, MROCE_CNT_PATH_DEAD, 1);
		trace_mroce_path(qp, s->path, MROCE_PATH_EV_DEAD);
		mroce_timer_probe_restart(qp);
	}
}

/*
 * Run the loss detector and resend, once each, the packets it declares
 * lost; never the window.  Arms the reorder wait for packets that may
 * yet turn out lost.
 */
void mroce_req_recover(struct mroce_qp *qp, u64 now)
{
	const struct mroce_cc_ops *cc = qp->sq.cc_ops;
	struct mroce_sb *sb = &qp->sq.sb;
	struct mroce_sb_ctx ctx = { qp, div_u64(now, NSEC_PER_USEC) };
	struct mroce_sb_clock c = {
		.now_us = (u32)ctx.now_us,
		.srtt_us = qp->sq.rto.srtt_us,
		.rttvar_us = qp->sq.rto.rttvar_us,
		.min_rtt_us = qp->sq.min_rtt_us,
		.spread_us = mroce_paths_srtt_spread_us(qp->sq.paths),
	};
	u32 lost, wait, psn, k;

	lost = mroce_sb_detect(sb, &c, mroce_sb_event, &ctx, &wait);
	qp->sq.due[MROCE_DL_REORDER] = wait == U32_MAX ? 0 : now + (u64)wait * NSEC_PER_USEC;
	if (!lost)
		return;
	if (cc->on_loss)
		cc->on_loss(&qp->sq.cc, lost, false, div_u64(now, NSEC_PER_USEC),
			    0);
	trace_mroce_cc(qp, MROCE_CC_EV_LOSS, 0);
	psn = sb->una;
	while (mroce_sb_next_lost(sb, psn, &psn)) {
		struct mroce_swqe *sw = mroce_sq_find(qp, psn, &k);

		if (!sw || !mroce_req_missing(qp, sw, k)) {
			/* a READ/ATOMIC whose response settled it meanwhile */
			mroce_sb_slot(sb, psn)->flags &= ~MROCE_SB_LOST;
			continue;
		}
		mroce_qcount(qp, MROCE_CNT_RETX_SACK, 1);
		trace_mroce_retx(qp, psn, MROCE_RETX_LOSS);
		mroce_req_xmit(qp, qp->sq.slot_wqe[psn % MROCE_WINDOW], k, true, -1);
	}
}

/*
 * Tail probe: nothing was heard for a PTO although packets are out, so
 * the last ones (or their ACKs) may be lost with nothing behind them to
 * reveal it.  Resend the newest undelivered packet with ACK_REQ; its ACK
 * carries the bitmap that lets the detector find the rest.  False if
 * nothing is missing (every packet SACKed, the cumulative ACK lost): that
 * is the RTO's case.
 */
bool mroce_req_tlp(struct mroce_qp *qp)
{
	u32 idx = qp->sq.head, k, n = 0;
	bool sent = false;

	/* the newest request packet still missing, READ/ATOMIC answers too */
	while (idx != qp->sq.tail) {
		struct mroce_swqe *sw = &qp->sq.wqe[--idx & qp->sq.ring.mask];
		u32 first = mroce_req_first_unacked(qp, sw);

		for (k = sw->sent; k-- > first;) {
			n++;
			if (!mroce_req_missing(qp, sw, k))
				continue;
			mroce_qcount(qp, MROCE_CNT_TLP_PROBES, 1);
			trace_mroce_retx(qp, mroce_psn_add(sw->first_psn, k), MROCE_RETX_TLP);
			qp->sq.tlp_out = true;
			mroce_req_xmit(qp, idx, k, true, -1);
			sent = true;
			goto out;
		}
	}
out:
	mroce_req_scanned(qp, n);
	return sent;
}

/* The oldest request PSN still missing, READ/ATOMIC answers included. */
static bool mroce_req_oldest_missing(struct mroce_qp *qp, u32 *psn)
{
	u32 idx, k, n = 0;

	for (idx = qp->sq.tail; idx != qp->sq.head; idx++) {
		struct mroce_swqe *sw = &qp->sq.wqe[idx & qp->sq.ring.mask];

		for (k = mroce_req_first_unacked(qp, sw); k < sw->sent; k++) {
			n++;
			if (mroce_req_missing(qp, sw, k)) {
				*psn = mroce_psn_add(sw->first_psn, k);
				mroce_req_scanned(qp, n);
				return true;
			}
		}
	}
	mroce_req_scanned(qp, n);
	return false;
}

/*
 * The packet an RTO resends: the oldest request PSN still missing (READ
 * and ATOMIC answers included).  If every packet after the cumulative
 * point is SACKed, the ACK that would advance it was lost and nothing is
 * left to trigger another: then the one at the cumulative point (SACKs
 * are advisory; its duplicate makes the peer ACK at once).
 */
static bool mroce_req_rto_target(struct mroce_qp *qp, u32 *psn)
{
	if (mroce_req_oldest_missing(qp, psn))
		return true;
	*psn = qp->sq.sb.una;
	return mroce_psn_before(qp->sq.sb.una, qp->sq.sb.nxt);
}

/* Where a connection that gives up stood: the operator's loss point. */
static void mroce_req_report_stall(struct mroce_qp *qp)
{
	const struct mroce_swqe *sw = &qp->sq.wqe[qp->sq.tail & qp->sq.ring.mask];
	u32 psn = 0;
	bool missing = mroce_req_oldest_missing(qp, &psn);
	const struct mroce_sb_slot *s = mroce_sb_slot(&qp->sq.sb, psn);

	dev_info_ratelimited(&qp->mdev->ib_dev.dev,
			     "qp %u: retry budget spent: una %u nxt %u; oldest WQE op %u psn %u+%u sent %u; %s psn %u (path %u, %s, flags %x, resent %u); paths active %u/%u; rto %u us; rnr_wait %d\n",
			     qp->ibqp.qp_num, qp->sq.sb.una, qp->sq.sb.nxt,
			     sw->wqe.opcode, sw->first_psn, sw->npkts, sw->sent,
			     missing ? "oldest missing" : "nothing missing,",
			     psn, s->path,
			     mroce_path_state_name(&qp->sq.paths->path[s->path %
							qp->sq.paths->n]),
			     s->flags, s->nretx,
			     mroce_paths_nr_active(qp->sq.paths),
			     qp->sq.paths->n, mroce_rto_us(&qp->sq.rto),
			     qp->sq.rnr_wait);
}

/*
 * RTO: no progress for a whole RTO.  Resend only the oldest missing
 * request (READs: re-request); everything else waits for the ACK that
 * answers it.  Returns true if the verbs retry budget is spent and the QP
 * must fail.
 */
bool mroce_req_rto(struct mroce_qp *qp, u64 now)
{
	const struct mroce_cc_ops *cc = qp->sq.cc_ops;
	u32 psn, k;

	/*
	 * verbs: give up after timeout x (retry_cnt + 1) and retry_cnt + 1
	 * RTOs without progress
	 */
	qp->sq.rtos_since_progress++;
	if (qp->timeout) {
		u64 elapsed = jiffies64_to_nsecs(get_jiffies_64() -
						 qp->sq.last_progress);

		if (mroce_verbs_retry_spent(elapsed, qp->sq.rtos_since_progress,
					    qp->timeout, qp->retry_cnt)) {
			mroce_req_report_stall(qp);
			mroce_qcount(qp, MROCE_CNT_RETRY_EXC, 1);
			mroce_swqe_fail(&qp->sq.wqe[qp->sq.tail &
						    qp->sq.ring.mask],
					IB_WC_RETRY_EXC_ERR);
			if (qp->sq.cur == qp->sq.tail)
				qp->sq.cur++;
			return mroce_sq_complete(qp);
		}
	}
	mroce_qcount(qp, MROCE_CNT_RTO_EXPIRED, 1);
	if (cc->on_loss)
		cc->on_loss(&qp->sq.cc, 1, true, div_u64(now, NSEC_PER_USEC), 0);
	trace_mroce_cc(qp, MROCE_CC_EV_RTO, 0);
	/*
	 * The path that lost it (or its answer: a READ/ATOMIC response comes
	 * back with the request's entropy) is dead: new entropy, probed
	 * before reuse; the resend avoids it.  Its ACK tells the detector
	 * about everything else.
	 */
	if (mroce_req_rto_target(qp, &psn)) {
		struct mroce_swqe *sw = mroce_sq_find(qp, psn, &k);

		if (mroce_paths_kill(qp->sq.paths,
				     mroce_sb_slot(&qp->sq.sb, psn)->path,
				     div_u64(now, NSEC_PER_USEC))) {
			mroce_qcount(qp, MROCE_CNT_PATH_DEAD, 1);
			trace_mroce_path(qp, mroce_sb_slot(&qp->sq.sb, psn)->path,
					 MROCE_PATH_EV_DEAD);
			mroce_timer_probe_restart(qp);
		}
		trace_mroce_retx(qp, psn, MROCE_RETX_RTO);
		if (sw)
			mroce_req_xmit(qp, qp->sq.slot_wqe[psn % MROCE_WINDOW],
				       k, true, -1);
	}
	mroce_rto_expired(&qp->sq.rto);
	mroce_timer_rto_restart(qp, now);
	return false;
}
