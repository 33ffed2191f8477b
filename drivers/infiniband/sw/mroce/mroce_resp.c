// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce responder: the receive side of an RC connection.
 *
 * Every request packet is self-describing, so it is placed the moment it
 * arrives, in any order: WRITE payload at its address, SEND payload at its
 * offset in receive WQE rq_seq.  A 256-bit bitmap over [ePSN, ePSN + 256)
 * records what arrived; when ePSN advances, READ and ATOMIC requests are
 * executed and messages complete, both strictly in PSN order, so the
 * application sees RC semantics unchanged.  Errors found on arrival are
 * remembered and reported (NAK, QP to ERR) only when ePSN reaches them.
 *
 * Everything here runs under qp->rq.lock, in softirq context.
 */

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <rdma/ib_hdrs.h>

#include "mroce.h"
#include "mroce_psn.h"

/*
 * The port's fair share for this sender, for the ACK about to go out:
 * its arrivals since the last ACK are handed to the port's estimator
 * here, once per ACK rather than once per packet (one lock round trip).
 */
static u32 mroce_resp_rate_hint(struct mroce_qp *qp)
{
	struct mroce_dev *mdev = qp->mdev;
	u64 now = mroce_now_us64();
	u32 hint;

	spin_lock(&mdev->rh_lock);
	if (qp->rq.hint_bytes)
		hint = mroce_hint_rx(&mdev->rh, &qp->rq.rhc, qp->rq.hint_bytes,
				     qp->rq.ackc.ce, now);
	else
		hint = mroce_hint_current(&mdev->rh, now);
	spin_unlock(&mdev->rh_lock);
	qp->rq.hint_bytes = 0;
	return hint;
}

/* The echo an ACK answering @pi carries. */
static void mroce_ack_echo_of(struct mroce_ack_echo *e,
			      const struct mroce_pkt_info *pi, u32 now_us)
{
	*e = (struct mroce_ack_echo) {
		.ts_us = pi->ts_us,
		.path_seq = pi->path_seq,
		.psn = pi->psn,
		.path_id = pi->path_id,
		.ce = pi->rx_ce,
		.sport = pi->rx_sport,
		.at_us = now_us,
	};
}

/*
 * The acknowledgment of the receive state into @pi: its SACK, echoing @e
 * (if any), which arrived @delay_us ago (the ACK's ack_delay: the
 * requester takes it off its RTT sample), and the rate hint.  An ACK's
 * cumulative PSN is ePSN.  With @e it reports the arrivals since the
 * last report and starts the count towards the next ACK; without, it
 * reports none and leaves them to the next (mroce_ack_count_report()).
 */
static void mroce_resp_kh_fill(struct mroce_qp *qp, struct mroce_pkt_info *pi,
			       const struct mroce_ack_echo *e, u32 delay_us,
			       u8 echo_flags, bool hint)
{
	unsigned int b;

	/* SACK bit i is PSN epsn + i: walk the set bits only */
	for_each_set_bit(b, qp->rq.seen, MROCE_WINDOW) {
		u32 i = (b - qp->rq.epsn) % MROCE_WINDOW;

		if (i)
			mroce_wire_sack_set(pi->sack, i);
	}
	/* the hint takes the CE marks the report is about to pass on */
	if (hint) {
		pi->rate_hint_mbps = mroce_resp_rate_hint(qp);
		if (pi->rate_hint_mbps)
			mroce_qcount(qp, MROCE_CNT_TX_RATE_HINTS, 1);
	}
	mroce_ack_count_report(&qp->rq.ackc, !!e, &pi->rx_count,
			       &pi->ce_count);
	if (e) {
		pi->echo_ts = e->ts_us;
		pi->echo_path_seq = e->path_seq;
		pi->echo_psn = e->psn;
		pi->echo_path_id = e->path_id;
		pi->echo_flags = echo_flags | (e->ce ? MROCE_ECHO_CE : 0);
		/* the largest segment we take, with the agreement to them */
		if (echo_flags & MROCE_ECHO_SEG)
			pi->seg_max = clamp(mroce_port_seg(qp->mdev) /
					    MROCE_SEG_UNIT, 1U, (u32)U8_MAX);
		pi->ack_delay_us = min_t(u32, delay_us, U16_MAX);
	}
	WRITE_ONCE(qp->rq.unacked_last, false);
	WRITE_ONCE(qp->rq.pb_held, false);
}

/* Send an ACK or NAK of the receive state (mroce_resp_kh_fill()). */
static void mroce_resp_ack_send(struct mroce_qp *qp,
				const struct mroce_ack_echo *e, u32 delay_us,
				enum mroce_nak_code nak, u32 nak_psn,
				u8 rnr_timer, u8 echo_flags)
{
	struct mroce_pkt_info pi = {};
	struct sk_buff *skb;

	pi.opcode = nak ? MROCE_OP_NAK : MROCE_OP_ACK;
	pi.psn = qp->rq.epsn;
	mroce_resp_kh_fill(qp, &pi, e, delay_us, echo_flags, true);
	pi.nak_code = nak;
	pi.nak_psn = nak_psn;
	pi.rnr_timer = rnr_timer;

	skb = mroce_pkt_alloc(qp, 0);
	if (!skb)
		return;
	mroce_qcount(qp, nak ? mroce_nak_counter(nak, false) : MROCE_CNT_TX_ACKS,
		     1);
	/* back on the entropy the triggering packet came with */
	mroce_pkt_send_to(qp, &qp->av, qp->dest_qpn,
			  e && e->sport ? e->sport : qp->sport, skb, &pi);
}

/* An ACK or NAK at once, answering @trig (if any) as it arrives. */
static void mroce_resp_ack_flags(struct mroce_qp *qp,
				 const struct mroce_pkt_info *trig,
				 enum mroce_nak_code nak, u32 nak_psn,
				 u8 rnr_timer, u8 echo_flags)
{
	struct mroce_ack_echo e;

	if (trig)
		mroce_ack_echo_of(&e, trig, 0);
	mroce_resp_ack_send(qp, trig ? &e : NULL, 0, nak, nak_psn, rnr_timer,
			    echo_flags);
}

static void mroce_resp_ack(struct mroce_qp *qp, const struct mroce_pkt_info *trig,
			   enum mroce_nak_code nak, u32 nak_psn, u8 rnr_timer)
{
	mroce_resp_ack_flags(qp, trig, nak, nak_psn, rnr_timer, 0);
}

static ktime_t mroce_us_ktime(u32 us)
{
	return ns_to_ktime((u64)us * NSEC_PER_USEC);
}

/*
 * The delayed ACK (MR-36): a message's last packet that no ACK answered
 * at once is acknowledged within the deadline mroce_delack_us() sets
 * from the arrival rate (at most ack_delay_max).  A requester asks for
 * an ACK (ACK_REQ) only when it waits for one; otherwise this, or the
 * cadence, completes its messages: in a stream of small messages one ACK
 * answers several, and when the stream stops, the last of them waits
 * the deadline at most.  Packets inside a message need no timer: more of
 * the message follows, and if it does not, the requester's loss recovery
 * asks.  The newest unanswered last packet is remembered (the ACK echoes
 * it) and when the oldest came; the timer, armed by that one, fires once
 * per deadline at most, and sends nothing if an ACK went out meanwhile.
 */
static void mroce_resp_ack_hold(struct mroce_qp *qp,
				const struct mroce_pkt_info *pi, u32 now)
{
	if (!qp->rq.unacked_last) {
		WRITE_ONCE(qp->rq.unacked_last, true);
		qp->rq.unacked_since_us = now;
	}
	mroce_ack_echo_of(&qp->rq.unacked, pi, now);
}

static void mroce_resp_ack_later(struct mroce_qp *qp,
				 const struct mroce_pkt_info *pi, u32 now)
{
	if (!qp->rq.unacked_last &&
	    !hrtimer_is_queued(&qp->rq.ack_timer))
		hrtimer_start(&qp->rq.ack_timer,
			      mroce_us_ktime(mroce_delack_us(&qp->rq.delack)),
			      HRTIMER_MODE_REL_SOFT);
	mroce_resp_ack_hold(qp, pi, now);
}

enum hrtimer_restart mroce_resp_ack_timer(struct hrtimer *t)
{
	struct mroce_qp *qp = container_of(t, struct mroce_qp, rq.ack_timer);
	enum hrtimer_restart ret = HRTIMER_NORESTART;
	u32 now = mroce_now_us(), waited, delay;

	spin_lock(&qp->rq.lock);
	if (!qp->rq.unacked_last || !mroce_qp_receives(qp))
		goto out;
	waited = now - qp->rq.unacked_since_us;
	delay = mroce_delack_us(&qp->rq.delack);
	if (waited < delay) {
		/*
		 * An ACK went out since the timer was armed.  If a packet
		 * held a new one while this callback waited for the lock,
		 * mroce_resp_ack_later() found the timer running, not
		 * queued, and armed it again: that expiry is this hold's.
		 * Else wait the rest.
		 */
		if (hrtimer_is_queued(t))
			goto out;
		hrtimer_forward_now(t, mroce_us_ktime(delay - waited));
		ret = HRTIMER_RESTART;
		goto out;
	}
	mroce_qcount(qp, MROCE_CNT_TX_ACKS_DELAYED, 1);
	mroce_resp_ack_send(qp, &qp->rq.unacked, now - qp->rq.unacked.at_us,
			    0, 0, 0, 0);
	/* no request took it along: not (or no longer) a ping-pong */
	WRITE_ONCE(qp->rq.pingpong, false);
out:
	spin_unlock(&qp->rq.lock);
	return ret;
}

/*
 * Send the delayed ACK now, if one is pending.  A QP that stops
 * receiving (modify_qp to ERR or RESET, a fatal error, destroy) owes its
 * peer the ACK of what it delivered: its consumer may have polled those
 * completions and gone, and without the ACK the requester would resend
 * into a QP that no longer answers and fail messages that arrived.  Under
 * rq.lock, so a packet being handled either saw the old state and its
 * arrival is in this ACK, or sees the new one and is dropped unanswered.
 */
void mroce_resp_ack_flush(struct mroce_qp *qp)
{
	spin_lock_bh(&qp->rq.lock);
	if (qp->rq.unacked_last) {
		mroce_qcount(qp, MROCE_CNT_TX_ACKS_DELAYED, 1);
		mroce_resp_ack_send(qp, &qp->rq.unacked,
				    mroce_now_us() - qp->rq.unacked.at_us,
				    0, 0, 0, 0);
	}
	spin_unlock_bh(&qp->rq.lock);
}

/*
 * A request packet @pi of this QP is about to leave (the requester,
 * under sq.lock, @now_us): it carries the ACK the responder owes, if one
 * waits (PB_ACK; spec "Piggybacked acknowledgment").  Returns true if it
 * does.  Without one waiting, a request that leaves within ack_delay_max
 * of an ACK that answered an ACK_REQ at once could have carried that ACK:
 * the QP is in a ping-pong, and the next such ACK waits for the answer.
 */
bool mroce_resp_pb_ack(struct mroce_qp *qp, struct mroce_pkt_info *pi,
		       u32 now_us, bool retx)
{
	/*
	 * Holding pays only where the ACK and the answer share a CPU (one
	 * vCPU, or the receiving softirq on the consumer's CPU): there the
	 * ACK packet's cost delays the answer.  Where another CPU sends the
	 * ACK while the consumer works, holding would put the ACK's
	 * processing on the answer's path instead (veth with two vCPUs:
	 * write_lat 8 B 26-28 against 19 us).
	 */
	bool same_cpu = raw_smp_processor_id() == READ_ONCE(qp->rq.ackreq_cpu);

	/*
	 * A resend in a ping-pong carries the receive state even with no
	 * ACK owed (rx_count 0, no echo): the packet it repeats may have
	 * carried the ACK of the peer's last answer, and without it the
	 * peer would have to probe for that answer too.
	 */
	retx = retx && READ_ONCE(qp->rq.pingpong);
	if (!READ_ONCE(qp->rq.unacked_last) && !retx) {
		if (same_cpu && !READ_ONCE(qp->rq.pingpong) &&
		    now_us - READ_ONCE(qp->rq.ackreq_acked_us) <
		    MROCE_ACK_DELAY_MAX_US)
			WRITE_ONCE(qp->rq.pingpong, true);
		return false;
	}
	spin_lock(&qp->rq.lock);	/* sq.lock, then rq.lock */
	if (!mroce_qp_receives(qp)) {
		spin_unlock(&qp->rq.lock);
		return false;
	}
	if (qp->rq.unacked_last) {
		/* the consumer answers on another CPU now: hold no more */
		if (qp->rq.pb_held && !same_cpu)
			WRITE_ONCE(qp->rq.pingpong, false);
		/*
		 * No rate hint (0, "none"): the estimator's lock and
		 * arithmetic would sit on the answer's path; the arrivals
		 * it would have counted go into the next ACK packet's hint.
		 */
		mroce_resp_kh_fill(qp, pi, &qp->rq.unacked,
				   now_us - qp->rq.unacked.at_us, 0, false);
	} else if (retx) {
		mroce_resp_kh_fill(qp, pi, NULL, 0, 0, false);
	} else {
		spin_unlock(&qp->rq.lock);
		return false;
	}
	pi->ack_psn = qp->rq.epsn;
	pi->flags |= MROCE_F_PB_ACK;
	mroce_qcount(qp, MROCE_CNT_TX_ACKS_PB, 1);
	spin_unlock(&qp->rq.lock);
	return true;
}

/*
 * A request packet of this QP leaves that cannot carry an ACK (no room
 * under the MTU, a segmentation chunk): an ACK held for a piggyback
 * goes now, as an ACK packet, rather than wait for the peer's tail
 * probe.  The requester, under sq.lock.
 */
void mroce_resp_pb_flush(struct mroce_qp *qp)
{
	if (!READ_ONCE(qp->rq.pb_held))
		return;
	spin_lock(&qp->rq.lock);	/* sq.lock, then rq.lock */
	if (qp->rq.pb_held && qp->rq.unacked_last && mroce_qp_receives(qp))
		mroce_resp_ack_send(qp, &qp->rq.unacked,
				    mroce_now_us() - qp->rq.unacked.at_us,
				    0, 0, 0, 0);
	spin_unlock(&qp->rq.lock);
}

/*
 * With an SRQ: the WQE bound to @seq, or the SRQ's next one, bound now.
 * The binding table covers the window: a message takes at least one PSN.
 */
static struct mroce_rwqe *mroce_rq_srq_wqe(struct mroce_qp *qp,
					   struct mroce_rwqe *rw, u32 seq,
					   enum ib_wc_status *status)
{
	if (seq - qp->rq.rq_done > qp->rq.wqe_mask)
		return NULL;
	if (rw->valid && rw->seq == seq)
		return rw;
	if (rw->valid)
		mroce_sgl_release(rw->mr, rw->num_sge);
	rw->valid = false;
	if (!mroce_srq_take(to_msrq(qp->ibqp.srq), rw, status))
		return NULL;
	rw->seq = seq;
	rw->valid = true;
	return rw;
}

/*
 * Receive WQE @seq, copied out of the ring and resolved on first use.
 * NULL if the process has not posted it yet (receiver not ready).
 */
static struct mroce_rwqe *mroce_rq_wqe(struct mroce_qp *qp, u32 seq,
				       enum ib_wc_status *status)
{
	struct mroce_rwqe *rw = &qp->rq.wqe[seq & qp->rq.wqe_mask];
	const struct mroce_recv_wqe *w;
	u32 prod;

	*status = IB_WC_SUCCESS;
	if (qp->ibqp.srq)
		return mroce_rq_srq_wqe(qp, rw, seq, status);
	/* pairs with the producer's release of prod */
	prod = smp_load_acquire(&qp->rq.ring.hdr->prod);
	if (seq - qp->rq.rq_done >= prod - qp->rq.rq_done ||
	    seq - qp->rq.rq_done >= qp->rq.ring.num_slots)
		return NULL;
	if (rw->valid && rw->seq == seq)
		return rw;
	if (rw->valid)
		mroce_sgl_release(rw->mr, rw->num_sge);

	w = mroce_ring_slot(&qp->rq.ring, seq);
	rw->wr_id = READ_ONCE(w->wr_id);
	rw->num_sge = READ_ONCE(w->num_sge);
	rw->seq = seq;
	rw->valid = true;
	rw->length = 0;
	if (rw->num_sge > qp->rq.max_sge) {
		rw->num_sge = 0;
		*status = IB_WC_LOC_LEN_ERR;
		return rw;
	}
	memcpy(rw->sge, w + 1, rw->num_sge * sizeof(rw->sge[0]));
	if (mroce_sgl_resolve(qp->mdev, qp->ibqp.pd, rw->sge, rw->mr,
			      rw->num_sge, IB_ACCESS_LOCAL_WRITE, &rw->length))
		*status = IB_WC_LOC_PROT_ERR;
	return rw;
}

/* The opcode properties of what a slot holds (a parsed, valid opcode). */
static u16 mroce_rslot_props(const struct mroce_rslot *s)
{
	const struct mroce_wire_opinfo *op = s ? mroce_wire_opinfo(s->m.opcode) :
						 NULL;

	return op ? op->props : 0;
}

static void mroce_rq_post_cqe(struct mroce_qp *qp, struct mroce_rwqe *rw,
			      const struct mroce_rslot *s,
			      enum ib_wc_status status)
{
	u16 props = mroce_rslot_props(s);
	struct mroce_cqe cqe = {
		.wr_id = rw->wr_id,
		.status = status,
		.opcode = props & MROCE_OPP_WRITE ? IB_WC_RECV_RDMA_WITH_IMM :
						    IB_WC_RECV,
		.byte_len = s ? s->m.msg_len : 0,
		.qp_num = qp->ibqp.qp_num,
		.src_qp = qp->dest_qpn,
	};

	if (props & MROCE_OPP_IMM) {
		cqe.flags = MROCE_CQE_WITH_IMM;
		cqe.imm_data = (__force u32)cpu_to_be32(s->m.imm);
	}
	if ((props & MROCE_OPP_INV) && status == IB_WC_SUCCESS) {
		cqe.flags = MROCE_CQE_WITH_INV;
		cqe.imm_data = s->m.imm;
	}
	if (!mroce_cq_post(to_mcq(qp->ibqp.recv_cq), &cqe,
			   s && (s->m.flags & MROCE_F_SOLICITED)))
		mroce_qp_fail_async(qp);	/* CQ overflow */
}

/* Receive WQE @rw (rq_done) is done with: drop its references, free its slot. */
static void mroce_rq_retire(struct mroce_qp *qp, struct mroce_rwqe *rw)
{
	if (rw->valid)
		mroce_sgl_release(rw->mr, rw->num_sge);
	rw->valid = false;
	qp->rq.rq_done++;
	if (!qp->ibqp.srq)
		mroce_ring_free_to(&qp->rq.ring, qp->rq.rq_done);
}

/* Complete receive WQE rq_done; the slot may be reused by the process. */
static void mroce_rq_complete(struct mroce_qp *qp, const struct mroce_rslot *s,
			      enum ib_wc_status status)
{
	struct mroce_rwqe *rw = &qp->rq.wqe[qp->rq.rq_done & qp->rq.wqe_mask];
	enum ib_wc_status st = IB_WC_SUCCESS;

	if (!rw->valid || rw->seq != qp->rq.rq_done)
		rw = mroce_rq_wqe(qp, qp->rq.rq_done, &st);
	if (!rw)
		return;
	/* the WQE's own failure (a bad lkey found when fetched) comes first */
	if (status == IB_WC_SUCCESS)
		status = st;
	mroce_rq_retire(qp, rw);
	mroce_rq_post_cqe(qp, rw, s, status);
}

/*
 * C12: @len bytes at @va under @rkey allow @access; a reference or NULL.
 * That the QP allows the operation (C9) was checked on arrival.
 */
static struct mroce_mr *mroce_resp_mr(struct mroce_qp *qp, u32 rkey, u64 va,
				      u64 len, int access)
{
	struct mroce_mr *mr;

	mr = mroce_mr_get_rkey(qp->mdev, rkey);
	if (!mr)	/* a memory window's? */
		return mroce_mw_resolve(qp, rkey, va, len, access);
	if (mroce_mr_check(mr, qp->ibqp.pd, va, len, access)) {
		mroce_mr_put(mr);
		mr = NULL;
	}
	return mr;
}

/*
 * C11: one READ request asks for at most MROCE_READ_CHUNK_SEGS PMTUs (a
 * requester splits longer READs), which bounds what one request makes
 * the responder send from softirq.
 */
static bool mroce_resp_read_len_ok(const struct mroce_qp *qp, u32 len)
{
	return len <= MROCE_READ_CHUNK_SEGS * qp->pmtu;
}

/* What a request packet leaves in its window slot until ePSN reaches it. */
static void mroce_rslot_fill(struct mroce_rslot *s,
			     const struct mroce_pkt_info *pi)
{
	*s = (struct mroce_rslot) {
		.m = {
			.opcode = pi->opcode,
			.flags = pi->flags,
			.msn = pi->msn,
			.msg_len = pi->msg_len,
			.offset = pi->offset,
			.payload_len = pi->opcode == MROCE_OP_READ_REQ ?
				       pi->rd_length : pi->payload_len,
			.va = pi->va,
			.rkey = pi->rkey,
			.rq_seq = pi->rq_seq,
			.imm = pi->imm,
		},
		.sink_va = pi->sink_va,
		.sink_key = pi->sink_key,
		.swap_add = pi->swap_add,
		.compare = pi->compare,
		.sport = pi->rx_sport,
	};
}

/*
 * READ responses leave from the send engine (mroce_req_do()), within its
 * budget per run and paced by the congestion controller like requests:
 * a READ request of up to 64 PMTUs, or 256 of them in the window, is no
 * licence to hold the CPU in softirq.  Executing a READ here validates it
 * and marks it pending; mroce_resp_read_next() sends one packet of the
 * oldest.  A pending READ's slot is not reused: a requester sends
 * nothing 256 PSNs past a READ whose responses it still waits for, so a
 * request that would land there is ahead of the window.
 */
static void mroce_resp_read_kick(struct mroce_qp *qp)
{
	WRITE_ONCE(qp->rq.rd_busy, true);
	/*
	 * Pairs with the tasklet's own test_and_clear of its SCHED bit
	 * before it runs: a run that peeked at rd_busy before this store
	 * is followed by one that sees it (mroce_resp_read_next()).
	 */
	smp_mb__before_atomic();
	tasklet_schedule(&qp->sq.task);
}

/* Execute the READ in @s at @psn: validate it and queue its responses. */
static enum mroce_nak_code mroce_resp_read(struct mroce_qp *qp,
					   const struct mroce_rslot *s, u32 psn)
{
	struct mroce_mr *mr;

	if (s->m.msg_len) {
		mr = mroce_resp_mr(qp, s->m.rkey, s->m.va, s->m.msg_len,
				   IB_ACCESS_REMOTE_READ);
		if (!mr)
			return MROCE_NAK_REM_ACCESS;
		mroce_mr_put(mr);
	}
	if (bitmap_empty(qp->rq.rd_pending, MROCE_WINDOW))
		qp->rq.rd_psn = psn;
	set_bit(psn % MROCE_WINDOW, qp->rq.rd_pending);
	mroce_resp_read_kick(qp);
	return 0;
}

/*
 * Was READ @psn answered again less than an RTT ago?  A requester
 * re-requests a range once per loss it detects, which takes an RTT; a
 * peer that asks faster gets no more than that.  Else remember it.
 */
static bool mroce_resp_read_recent(struct mroce_qp *qp, u32 psn)
{
	u32 gap = max_t(u32, READ_ONCE(qp->sq.rto.srtt_us),
			MROCE_RD_REEXEC_GAP_MIN_US);
	u32 now = mroce_now_us(), i;

	for (i = 0; i < MROCE_RD_RECENT; i++)
		if (qp->rq.rd_recent_psn[i] == psn &&
		    now - qp->rq.rd_recent_us[i] < gap)
			return true;
	i = qp->rq.rd_recent_next++ % MROCE_RD_RECENT;
	qp->rq.rd_recent_psn[i] = psn;
	qp->rq.rd_recent_us[i] = now;
	return false;
}

/* A duplicate READ within the window: answer its range again. */
static void mroce_resp_read_dup(struct mroce_qp *qp,
				const struct mroce_pkt_info *pi)
{
	u32 i;

	/*
	 * Still answering its first execution (no other PSN of the window
	 * can hold that slot), answered again an RTT ago, or enough
	 * re-executions queued already: the requester asks again if it
	 * still misses something.
	 */
	if (test_bit(pi->psn % MROCE_WINDOW, qp->rq.rd_pending) ||
	    qp->rq.rd_ndup == MROCE_RD_DUPS ||
	    mroce_resp_read_recent(qp, pi->psn)) {
		mroce_qcount(qp, MROCE_CNT_RX_DUP_READ_DROPPED, 1);
		mroce_resp_read_kick(qp);
		return;
	}
	i = (qp->rq.rd_dup_head + qp->rq.rd_ndup) % MROCE_RD_DUPS;
	mroce_rslot_fill(&qp->rq.rd_dup[i], pi);
	qp->rq.rd_dup_psn[i] = pi->psn;
	qp->rq.rd_ndup++;
	mroce_qcount(qp, MROCE_CNT_RX_DUP_READ_REEXEC, 1);
	mroce_resp_read_kick(qp);
}

/*
 * The READ whose responses go next: a re-executed duplicate, else the
 * oldest pending one.  NULL if none.
 */
static struct mroce_rslot *mroce_resp_read_cur(struct mroce_qp *qp, u32 *psn,
					       bool *dup)
{
	*dup = qp->rq.rd_ndup;
	if (*dup) {
		*psn = qp->rq.rd_dup_psn[qp->rq.rd_dup_head];
		return &qp->rq.rd_dup[qp->rq.rd_dup_head];
	}
	if (bitmap_empty(qp->rq.rd_pending, MROCE_WINDOW))
		return NULL;
	*psn = qp->rq.rd_psn;
	return &qp->rq.slot[*psn % MROCE_WINDOW];
}

/* All of the current READ's responses are out: on to the next. */
static void mroce_resp_read_done(struct mroce_qp *qp, u32 psn, bool dup)
{
	if (dup) {
		qp->rq.rd_dup_head = (qp->rq.rd_dup_head + 1) % MROCE_RD_DUPS;
		qp->rq.rd_ndup--;
		return;
	}
	clear_bit(psn % MROCE_WINDOW, qp->rq.rd_pending);
	/* the next pending READ, in PSN order; all lie before ePSN */
	while (!bitmap_empty(qp->rq.rd_pending, MROCE_WINDOW)) {
		psn = mroce_psn_add(psn, 1);
		if (test_bit(psn % MROCE_WINDOW, qp->rq.rd_pending)) {
			qp->rq.rd_psn = psn;
			return;
		}
	}
}

/* Build the next response of READ @s at @psn; NULL if none can be now. */
void mroce_resp_read_end(struct mroce_rd_src *src)
{
	if (src->mr)
		mroce_mr_put(src->mr);
	src->mr = NULL;
}

/*
 * The region a READ response copies from, still good for the whole
 * request (access of the QP and of the region, range): the run's, if
 * the rkey is the same, or looked up again.  NULL if not.  Through a
 * memory window, looked up again for every packet: the window may have
 * been invalidated or bound elsewhere since the last.
 */
static struct mroce_mr *mroce_resp_read_src(struct mroce_qp *qp,
					    struct mroce_rd_src *src,
					    const struct mroce_rslot *s)
{
	if (!(qp->access & IB_ACCESS_REMOTE_READ))
		return NULL;
	if (!src->mr || src->rkey != s->m.rkey || src->mw) {
		mroce_resp_read_end(src);
		src->rkey = s->m.rkey;
		src->mw = false;
		src->mr = mroce_mr_get_rkey(qp->mdev, s->m.rkey);
		if (!src->mr) {
			src->mw = true;
			src->mr = mroce_mw_resolve(qp, s->m.rkey, s->m.va,
						   s->m.msg_len,
						   IB_ACCESS_REMOTE_READ);
			return src->mr;
		}
	}
	if (mroce_mr_check(src->mr, qp->ibqp.pd, s->m.va, s->m.msg_len,
			   IB_ACCESS_REMOTE_READ))
		return NULL;
	return src->mr;
}

static struct sk_buff *mroce_resp_read_pkt(struct mroce_qp *qp,
					   struct mroce_rd_src *src,
					   struct mroce_rslot *s, u32 psn,
					   struct mroce_pkt_info *pi, bool *gone)
{
	u32 end = s->m.offset + s->m.payload_len, len = min(qp->pmtu, end - s->m.offset);
	struct mroce_mr *mr = NULL;
	struct mroce_sge sge;
	struct sk_buff *skb;
	bool zcopy;
	int err = 0;

	*gone = false;
	if (s->m.msg_len) {
		/* deregistered since it was validated: nothing more to send */
		mr = mroce_resp_read_src(qp, src, s);
		if (!mr) {
			*gone = true;
			return NULL;
		}
	}
	/* the READ's source as an SGL of one entry: zero-copy if it can */
	sge.addr = s->m.va + s->m.offset;
	sge.length = len;
	sge.lkey = s->m.rkey;
	zcopy = mroce_pkt_frags_pay(qp) &&
		mroce_sgl_zcopy_ok(&sge, &mr, 1, 0, len);
	skb = mroce_pkt_alloc(qp, zcopy ? 0 : len);
	if (!skb)
		return NULL;
	pi->opcode = MROCE_OP_READ_RESP;
	pi->psn = psn;
	pi->msn = s->m.msn;
	pi->va = s->sink_va;
	pi->rkey = s->sink_key;
	pi->offset = s->m.offset;
	pi->msg_len = s->m.msg_len;
	if (s->m.offset == 0)
		pi->flags |= MROCE_F_FIRST;
	if (s->m.offset + len == s->m.msg_len)
		pi->flags |= MROCE_F_LAST;
	if (s->m.offset + len == end)
		pi->flags |= MROCE_F_ACK_REQ;
	if (zcopy)
		err = mroce_sgl_attach_skb(&sge, &mr, 1, 0, skb, len);
	else if (len)
		err = mroce_mr_copy(mr, s->m.rkey, sge.addr, skb_put(skb, len),
				    len, false);
	if (err) {
		kfree_skb(skb);
		*gone = true;
		return NULL;
	}
	if (zcopy)
		mroce_count(qp->mdev, MROCE_CNT_TX_ZCOPY_PKTS, 1);
	s->m.offset += len;
	s->m.payload_len -= len;
	return skb;
}

/*
 * Send one READ response of the oldest READ still answering.  From the
 * send engine, under sq.lock, which paces and budgets it; takes rq.lock
 * (sq.lock -> rq.lock).  Returns false when there is nothing to send now.
 */
bool mroce_resp_read_next(struct mroce_qp *qp, struct mroce_rd_src *src)
{
	struct mroce_pkt_info pi = {};
	struct mroce_rslot *s;
	struct sk_buff *skb;
	bool dup, gone;
	u16 sport;
	u32 psn;

	/*
	 * Most runs have no READ to answer: peek without rq.lock, which the
	 * responder holds while it handles a packet, maybe on another CPU.
	 * A READ queued after this peek kicks another run.
	 */
	if (!READ_ONCE(qp->rq.rd_busy))
		return false;
	spin_lock(&qp->rq.lock);
	if (!mroce_qp_receives(qp)) {
		bitmap_zero(qp->rq.rd_pending, MROCE_WINDOW);
		qp->rq.rd_ndup = 0;
		WRITE_ONCE(qp->rq.rd_busy, false);
		spin_unlock(&qp->rq.lock);
		return false;
	}
	s = mroce_resp_read_cur(qp, &psn, &dup);
	if (!s) {
		/* nothing queued: later runs may skip the lock again */
		WRITE_ONCE(qp->rq.rd_busy, false);
		spin_unlock(&qp->rq.lock);
		return false;
	}
	skb = mroce_resp_read_pkt(qp, src, s, psn, &pi, &gone);
	sport = s->sport ?: qp->sport;
	if (gone || (skb && !s->m.payload_len))
		mroce_resp_read_done(qp, psn, dup);
	spin_unlock(&qp->rq.lock);
	if (!skb)
		return gone;	/* no memory: the next run tries again */
	mroce_pkt_send_to(qp, &qp->av, qp->dest_qpn, sport, skb, &pi);
	return true;
}

static void mroce_resp_atomic_reply(struct mroce_qp *qp, u32 psn, u32 msn,
				    u64 orig, bool retx, u16 sport)
{
	struct mroce_pkt_info pi = {
		.opcode = MROCE_OP_ATOMIC_RESP,
		.psn = psn,
		.msn = msn,
		.orig = orig,
		.flags = retx ? MROCE_F_RETRANSMIT : 0,
	};
	struct sk_buff *skb = mroce_pkt_alloc(qp, 0);

	if (skb)
		mroce_pkt_send_to(qp, &qp->av, qp->dest_qpn, sport ?: qp->sport,
				  skb, &pi);
}

/* Execute an ATOMIC exactly once and remember its result. */
static enum mroce_nak_code mroce_resp_atomic(struct mroce_qp *qp,
					     const struct mroce_rslot *s,
					     u32 psn)
{
	struct mroce_atomic_res *res;
	struct mroce_mr *mr;
	u64 orig = 0;
	u8 n_res;
	int err;

	if (s->m.va & 7)
		return MROCE_NAK_INV_REQ;
	/* once: modify_qp may change it under us, and it is a divisor */
	n_res = READ_ONCE(qp->max_dest_rd_atomic);
	if (!qp->rq.atomic_res || !n_res)
		return MROCE_NAK_INV_REQ;
	mr = mroce_resp_mr(qp, s->m.rkey, s->m.va, sizeof(u64),
			   IB_ACCESS_REMOTE_ATOMIC);
	if (!mr)
		return MROCE_NAK_REM_ACCESS;

	spin_lock(&qp->mdev->atomic_lock);
	err = mroce_mr_atomic(mr, s->m.rkey, s->m.va,
			      s->m.opcode == MROCE_OP_ATOMIC_CMP_SWP, s->compare,
			      s->swap_add, &orig);
	spin_unlock(&qp->mdev->atomic_lock);
	mroce_mr_put(mr);
	if (err)		/* invalidated since the check */
		return MROCE_NAK_REM_ACCESS;

	res = &qp->rq.atomic_res[qp->rq.atomic_next++ % n_res];
	res->psn = psn;
	res->orig = orig;
	res->valid = true;
	mroce_resp_atomic_reply(qp, psn, s->m.msn, orig, false, s->sport);
	return 0;
}

/* C10 across the packets of a message, in PSN order (mroce_msg.h). */
static bool mroce_resp_msg_ok(struct mroce_qp *qp,
			      const struct mroce_rslot *s, u32 psn)
{
	return mroce_msg_track_seg(&qp->rq.msg, &s->m, psn, qp->pmtu);
}

/*
 * ePSN reached a received PSN: execute or complete what it holds, in
 * order.  Returns true when a fatal error moved the QP to ERR.
 */
static bool mroce_resp_advance(struct mroce_qp *qp,
			       const struct mroce_pkt_info *trig)
{
	while (test_bit(qp->rq.epsn % MROCE_WINDOW, qp->rq.seen)) {
		u32 psn = qp->rq.epsn;
		struct mroce_rslot *s = &qp->rq.slot[psn % MROCE_WINDOW];
		enum mroce_nak_code nak = s->nak;
		u16 props = mroce_rslot_props(s);

		/*
		 * A message completes the receive WQE its data went to, and
		 * receives complete in order: its rq_seq must be the next.
		 */
		if (!nak && !mroce_resp_msg_ok(qp, s, psn))
			nak = MROCE_NAK_INV_REQ;
		if (!nak && (props & MROCE_OPP_RWQE) &&
		    (s->m.flags & MROCE_F_LAST) && s->m.rq_seq != qp->rq.rq_done)
			nak = MROCE_NAK_INV_REQ;
		/*
		 * C15: a SEND_WITH_INV invalidates when its message completes,
		 * in order; an rkey that is no valid fast-registration region
		 * of the QP's PD, nor a type 2 memory window bound through
		 * this QP, fails the connection.
		 */
		if (!nak && (props & MROCE_OPP_INV) &&
		    (s->m.flags & MROCE_F_LAST)) {
			if (mroce_mr_remote_inv(qp->mdev, qp->ibqp.pd, s->m.imm) &&
			    mroce_mw_remote_inv(qp, s->m.imm))
				nak = MROCE_NAK_INV_REQ;
			else
				mroce_qcount(qp, MROCE_CNT_RX_REMOTE_INV, 1);
		}
		if (!nak && (props & MROCE_OPP_READ))
			nak = mroce_resp_read(qp, s, psn);
		else if (!nak && (props & MROCE_OPP_ATOMIC))
			nak = mroce_resp_atomic(qp, s, psn);
		if (nak) {
			/*
			 * All before @psn arrived and completed: report it.
			 * The receive the message takes fails in
			 * mroce_rq_flush(), once the QP reads ERR.
			 */
			qp->rq.fatal_nak = nak;
			mroce_resp_ack(qp, trig, nak, psn, 0);
			return true;
		}
		if ((s->m.flags & MROCE_F_LAST) && (props & MROCE_OPP_RWQE))
			mroce_rq_complete(qp, s, IB_WC_SUCCESS);
		clear_bit(psn % MROCE_WINDOW, qp->rq.seen);
		qp->rq.epsn = mroce_psn_add(psn, 1);
	}
	return false;
}

/* A duplicate request: answer it, never place or complete it again. */
static void mroce_resp_dup(struct mroce_qp *qp, const struct mroce_pkt_info *pi)
{
	u32 i;

	mroce_qcount(qp, MROCE_CNT_RX_DUP_PKTS, 1);
	/*
	 * The requester resent: a held ACK (mroce_resp_ack_waits()) came
	 * too late for its tail probe, or a packet was lost.  No ping-pong
	 * until the consumer answers in time again.
	 */
	WRITE_ONCE(qp->rq.pingpong, false);
	if (!mroce_psn_before(pi->psn, qp->rq.epsn)) {
		mroce_resp_ack_flags(qp, pi, 0, 0, 0, MROCE_ECHO_DUP);
		return;
	}
	switch (pi->opcode) {
	case MROCE_OP_READ_REQ:
		/*
		 * The responder keeps no READ state: it reads the range asked
		 * for again, but only for a request the window still covers
		 * and of a size its first execution accepted: an old PSN is
		 * no licence to read without end.
		 */
		if (mroce_psn_fwd(pi->psn, qp->rq.epsn) > MROCE_WINDOW ||
		    !mroce_resp_read_len_ok(qp, pi->msg_len))
			return;
		mroce_resp_read_dup(qp, pi);
		return;
	case MROCE_OP_ATOMIC_CMP_SWP:
	case MROCE_OP_ATOMIC_FETCH_ADD:
		for (i = 0; qp->rq.atomic_res && i < qp->max_dest_rd_atomic; i++) {
			struct mroce_atomic_res *r = &qp->rq.atomic_res[i];

			if (r->valid && r->psn == pi->psn) {
				mroce_qcount(qp, MROCE_CNT_RX_DUP_ATOMIC_CACHED, 1);
				mroce_resp_atomic_reply(qp, pi->psn, pi->msn,
							r->orig, true,
							pi->rx_sport);
				return;
			}
		}
		/* older than the cache: never executed twice, not answered */
		mroce_qcount(qp, MROCE_CNT_RX_DUP_ATOMIC_UNCACHED, 1);
		return;
	default:
		mroce_resp_ack_flags(qp, pi, 0, 0, 0, MROCE_ECHO_DUP);
	}
}

/*
 * Place a new SEND or WRITE packet.  Returns 0, a NAK code to report when
 * ePSN reaches the packet, or -EAGAIN when the receive WQE it needs is
 * not posted yet (RNR).
 */
static int mroce_resp_place(struct mroce_qp *qp, const struct mroce_pkt_info *pi,
			    struct sk_buff *skb)
{
	u16 props = mroce_wire_opinfo(pi->opcode)->props;
	enum ib_wc_status st = IB_WC_SUCCESS;
	struct mroce_rwqe *rw = NULL;
	struct mroce_mr *mr;

	/* WRITE_WITH_IMM needs its receive WQE only to complete */
	if ((props & MROCE_OPP_RWQE) &&
	    (!(props & MROCE_OPP_WRITE) || (pi->flags & MROCE_F_LAST))) {
		rw = mroce_rq_wqe(qp, pi->rq_seq, &st);
		if (!rw)
			return -EAGAIN;
		if (st != IB_WC_SUCCESS)
			return MROCE_NAK_REM_OP;
	}
	if (!(props & MROCE_OPP_WRITE)) {	/* SEND: into the receive WQE */
		if (pi->msg_len > rw->length)
			return MROCE_NAK_INV_REQ;
		if (pi->payload_len &&
		    mroce_sgl_copy_skb(rw->sge, rw->mr, rw->num_sge, pi->offset,
				       skb, pi->hdr_len, pi->payload_len))
			return MROCE_NAK_REM_OP;
		return 0;
	}
	/* a zero-length WRITE names no memory: no rkey to check (C12) */
	if (!pi->msg_len)
		return 0;
	mr = mroce_resp_mr(qp, pi->rkey, pi->va, pi->msg_len,
			   IB_ACCESS_REMOTE_WRITE);
	if (!mr)
		return MROCE_NAK_REM_ACCESS;
	if (pi->payload_len &&
	    mroce_mr_copy_skb(mr, pi->rkey, pi->va + pi->offset, skb, pi->hdr_len,
			      pi->payload_len)) {
		mroce_mr_put(mr);
		return MROCE_NAK_REM_OP;
	}
	mroce_mr_put(mr);
	return 0;
}

/*
 * C10, as far as one packet shows it: a SEND or WRITE packet is one
 * segment of its message, at most MROCE_SEG_MAX bytes (large segments:
 * the peer may use segments longer than the PMTU; the wire parser's P11
 * bounds it already), at least the PMTU unless it is the last, and at an
 * offset of at least the PMTU and its own length unless it is the first.
 * That the segments of a message are all the same size and each at its
 * place is checked in PSN order (mroce_resp_msg_ok()): a packet alone
 * does not tell its message's segment size.  Anything else the requester
 * could not have sent.
 */
static bool mroce_resp_segment_ok(const struct mroce_qp *qp,
				  const struct mroce_pkt_info *pi)
{
	/* not the last: a whole segment, at least the PMTU */
	if (!(pi->flags & MROCE_F_LAST) && pi->payload_len < qp->pmtu)
		return false;
	/*
	 * not the first: at k x SEG for some k >= 1, so at least the PMTU
	 * and at least its own payload (which is SEG at most)
	 */
	if (!(pi->flags & MROCE_F_FIRST) &&
	    (pi->offset < qp->pmtu || pi->offset < pi->payload_len))
		return false;
	return pi->payload_len <= MROCE_SEG_MAX;
}

/*
 * A PROBE of a path the peer declared dead: answer at once with an ACK
 * echoing it (and the current receive state).  Softirq.
 */
void mroce_resp_probe(struct mroce_qp *qp, const struct mroce_pkt_info *pi)
{
	spin_lock(&qp->rq.lock);
	if (!pi->rx_from_peer) {
		mroce_count(qp->mdev, MROCE_CNT_RX_DROP_SRC_MISMATCH, 1);
	} else if (mroce_qp_receives(qp)) {
		mroce_ack_count_arrival(&qp->rq.ackc, false);
		/*
		 * PB_ACK on a PROBE asks whether we accept them: we do, and
		 * large segments too, as large as our netdev takes
		 */
		mroce_resp_ack_flags(qp, pi, 0, 0, 0,
				     pi->flags & MROCE_F_PB_ACK ?
				     MROCE_ECHO_PB | MROCE_ECHO_SEG : 0);
	} else {
		mroce_count(qp->mdev, MROCE_CNT_RX_DROP_QP_STATE, 1);
	}
	spin_unlock(&qp->rq.lock);
}

/*
 * Where in the receive window request PSN @pi->psn falls (the spec's
 * "Receiver" rules): true if it is new and in the window; else it was
 * answered here (a duplicate, C8) or dropped (ahead of the window, C7).
 */
static bool mroce_resp_in_window(struct mroce_qp *qp,
				 const struct mroce_pkt_info *pi)
{
	u32 d = mroce_psn_fwd(qp->rq.epsn, pi->psn);

	if (d >= MROCE_PSN_HALF ||
	    (d < MROCE_WINDOW && test_bit(pi->psn % MROCE_WINDOW, qp->rq.seen))) {
		mroce_resp_dup(qp, pi);
		return false;
	}
	/*
	 * Its slot still answers the READ 256 PSNs before it, which the
	 * requester waits for: it may not send this yet (see
	 * mroce_resp_read()), so this is ahead of the window too.
	 */
	if (d < MROCE_WINDOW &&
	    test_bit(pi->psn % MROCE_WINDOW, qp->rq.rd_pending)) {
		mroce_count(qp->mdev, MROCE_CNT_RX_DROP_PSN_WINDOW, 1);
		return false;
	}
	if (d >= MROCE_WINDOW) {
		mroce_count(qp->mdev, MROCE_CNT_RX_DROP_PSN_WINDOW, 1);
		/* C7: at most one NAK per ePSN value, whatever arrives */
		if (!qp->rq.seq_err_sent || qp->rq.seq_err_epsn != qp->rq.epsn) {
			qp->rq.seq_err_sent = true;
			qp->rq.seq_err_epsn = qp->rq.epsn;
			mroce_resp_ack(qp, pi, MROCE_NAK_PSN_SEQ_ERR, pi->psn, 0);
		}
		return false;
	}
	if (d)
		mroce_qcount(qp, MROCE_CNT_RX_OOO_PKTS, 1);
	return true;
}

/*
 * C9: the QP's access flags enable the operation of opcode @props, for
 * any length: a zero-length WRITE_WITH_IMM or READ names no memory, but
 * a QP that forbids WRITEs must not complete one (consuming a receive
 * WQE), nor one that forbids READs answer one.  Checked once, on
 * arrival, so the answer does not depend on what the request carries.
 */
static bool mroce_resp_op_enabled(const struct mroce_qp *qp, u16 props)
{
	int need = (props & MROCE_OPP_WRITE ? IB_ACCESS_REMOTE_WRITE : 0) |
		   (props & MROCE_OPP_READ ? IB_ACCESS_REMOTE_READ : 0) |
		   (props & MROCE_OPP_ATOMIC ? IB_ACCESS_REMOTE_ATOMIC : 0);

	return (READ_ONCE(qp->access) & need) == need;
}

/*
 * Record a new request in its window slot: placed at once (SEND, WRITE)
 * or kept for execution in order (READ, ATOMIC), with the NAK code of an
 * error found now, reported when ePSN reaches it.  Returns -EAGAIN when
 * the receive WQE it needs is not posted (RNR: not placed, not marked).
 */
static int mroce_resp_record(struct mroce_qp *qp,
			     const struct mroce_pkt_info *pi,
			     struct sk_buff *skb)
{
	struct mroce_rslot *s = &qp->rq.slot[pi->psn % MROCE_WINDOW];
	int nak;

	mroce_rslot_fill(s, pi);
	if (!mroce_resp_op_enabled(qp, mroce_rslot_props(s))) {
		s->nak = MROCE_NAK_INV_REQ;		/* C9 */
		goto seen;
	}
	switch (pi->opcode) {
	case MROCE_OP_READ_REQ:
		if (!qp->max_dest_rd_atomic ||
		    !mroce_resp_read_len_ok(qp, pi->msg_len))
			s->nak = MROCE_NAK_INV_REQ;	/* C11 */
		break;
	case MROCE_OP_ATOMIC_CMP_SWP:
	case MROCE_OP_ATOMIC_FETCH_ADD:
		break;	/* executed when ePSN reaches it */
	default:
		if (!mroce_resp_segment_ok(qp, pi)) {
			s->nak = MROCE_NAK_INV_REQ;	/* C10 */
			break;
		}
		nak = mroce_resp_place(qp, pi, skb);
		if (nak == -EAGAIN)
			return nak;
		s->nak = nak;
		break;
	}
seen:
	set_bit(pi->psn % MROCE_WINDOW, qp->rq.seen);
	return 0;
}

/*
 * ACK when asked to, every few packets (more often while a hole exists,
 * so the sender's loss detector sees fresh SACKs), and whenever ePSN
 * moved past more than this packet (from @epsn): the requester only knows
 * the later PSNs as SACKed and cannot complete them until told.  The
 * count waits for the end of a GRO batch's run of this QP's requests
 * (rx_more): they arrived together, and one ACK after the last of them
 * tells the requester what one every MROCE_ACK_EVERY would have.
 */
static bool mroce_resp_ack_due(const struct mroce_qp *qp,
			       const struct mroce_pkt_info *pi, u32 epsn)
{
	return (pi->flags & MROCE_F_ACK_REQ) || pi->rx_ce ||
	       (!pi->rx_more &&
		qp->rq.ackc.rx >= (qp->rq.high != qp->rq.epsn ?
				   MROCE_ACK_EVERY_GAP : MROCE_ACK_EVERY)) ||
	       mroce_psn_fwd(epsn, qp->rq.epsn) > 1;
}

/*
 * In a ping-pong (pb_ack), the ACK an in-order message's last packet
 * asks for (ACK_REQ, and nothing else makes it due: no CE mark, no hole,
 * no resend, the cadence not reached) is held for the consumer's answer,
 * which carries it (mroce_resp_pb_ack()).  It gets no timer of its own:
 * one per message costs more than the ACK it saves (an hrtimer start and
 * expiry per round trip doubled a TCG guest's write_lat).  If no answer
 * comes, the requester's tail probe (PTO) resends the packet, and the
 * duplicate is ACKed at once and ends the ping-pong (mroce_resp_dup());
 * a delayed-ACK timer already queued, the cadence, or a QP that stops
 * receiving (mroce_resp_ack_flush()) send it earlier.
 */
static bool mroce_resp_ack_waits(const struct mroce_qp *qp,
				 const struct mroce_pkt_info *pi, u32 epsn)
{
	return READ_ONCE(qp->rq.pingpong) && mroce_qp_pb_ok(qp) &&
	       READ_ONCE(qp->sq.rto.srtt_us) <= MROCE_PB_HOLD_MAX_SRTT_US &&
	       (pi->flags & MROCE_F_LAST) &&
	       !(pi->flags & MROCE_F_RETRANSMIT) && !pi->rx_ce &&
	       mroce_psn_fwd(epsn, qp->rq.epsn) == 1 &&
	       qp->rq.high == qp->rq.epsn &&
	       qp->rq.ackc.rx < MROCE_ACK_EVERY;
}

/* A request packet for this QP.  Softirq. */
void mroce_resp_rcv(struct mroce_qp *qp, const struct mroce_pkt_info *pi,
		    struct sk_buff *skb)
{
	bool failed = false;
	u32 epsn, now;

	spin_lock(&qp->rq.lock);
	if (!mroce_qp_receives(qp)) {
		mroce_count(qp->mdev, MROCE_CNT_RX_DROP_QP_STATE, 1);
		/* the fatal NAK may have been lost: the requester resends */
		if (mroce_qp_state(qp) == IB_QPS_ERR && qp->rq.fatal_nak &&
		    pi->rx_from_peer)
			mroce_resp_ack(qp, pi, qp->rq.fatal_nak, qp->rq.epsn, 0);
		goto out;
	}
	if (!pi->rx_from_peer) {
		mroce_count(qp->mdev, MROCE_CNT_RX_DROP_SRC_MISMATCH, 1);
		goto out;
	}
	now = mroce_now_us();
	mroce_delack_arrival(&qp->rq.delack, now);
	mroce_ack_count_arrival(&qp->rq.ackc, pi->rx_ce);
	if (pi->rx_ce)
		mroce_qcount(qp, MROCE_CNT_RX_CE_PKTS, 1);
	/* this sender's arrivals since the last ACK, for the rate hint */
	qp->rq.hint_bytes += pi->hdr_len + pi->payload_len;
	if (!mroce_resp_in_window(qp, pi))
		goto out;
	if (mroce_resp_record(qp, pi, skb) == -EAGAIN) {
		mroce_resp_ack(qp, pi, MROCE_NAK_RNR, pi->psn,
			       qp->min_rnr_timer);
		goto out;
	}
	epsn = qp->rq.epsn;
	failed = mroce_resp_advance(qp, pi);
	if (failed)
		goto out;
	if (!mroce_psn_before(pi->psn, qp->rq.high))
		qp->rq.high = mroce_psn_add(pi->psn, 1);
	if (mroce_psn_before(qp->rq.high, qp->rq.epsn))
		qp->rq.high = qp->rq.epsn;
	if (!mroce_resp_ack_due(qp, pi, epsn)) {
		if (pi->flags & MROCE_F_LAST)
			mroce_resp_ack_later(qp, pi, now);
	} else if (mroce_resp_ack_waits(qp, pi, epsn)) {
		mroce_resp_ack_hold(qp, pi, now);
		WRITE_ONCE(qp->rq.pb_held, true);
		WRITE_ONCE(qp->rq.ackreq_cpu, raw_smp_processor_id());
	} else {
		mroce_resp_ack(qp, pi, 0, 0, 0);
		if (pi->flags & MROCE_F_ACK_REQ) {
			WRITE_ONCE(qp->rq.ackreq_acked_us, now);
			WRITE_ONCE(qp->rq.ackreq_cpu, raw_smp_processor_id());
		}
	}
out:
	spin_unlock(&qp->rq.lock);
	if (failed)
		mroce_qp_error(qp);
}

/*
 * A datagram for a UD QP (QP1 carries RDMA CM and other MADs).  It takes
 * the next receive WQE: a 40-byte GRH built from the IP header, as RoCE v2
 * does, then the payload.  No acknowledgment, no RNR: without a posted
 * WQE the datagram is dropped.
 */
void mroce_resp_rcv_ud(struct mroce_qp *qp, const struct mroce_pkt_info *pi,
		       struct sk_buff *skb)
{
	struct mroce_cqe cqe = {
		.opcode = IB_WC_RECV,
		.qp_num = qp->ibqp.qp_num,
		.src_qp = pi->src_qpn,
		.flags = MROCE_CQE_GRH,
		.byte_len = sizeof(struct ib_grh) + pi->payload_len,
	};
	enum ib_wc_status st;
	struct mroce_rwqe *rw;
	u8 grh[sizeof(struct ib_grh)] = {};

	spin_lock(&qp->rq.lock);
	if (!mroce_qp_receives(qp)) {
		mroce_count(qp->mdev, MROCE_CNT_RX_DROP_QP_STATE, 1);
		goto out;
	}
	if (pi->qkey != qp->qkey) {
		mroce_count(qp->mdev, MROCE_CNT_RX_DROP_QKEY, 1);
		goto out;
	}
	rw = mroce_rq_wqe(qp, qp->rq.rq_done, &st);
	if (!rw) {
		mroce_count(qp->mdev, MROCE_CNT_RX_DROP_NO_RWQE, 1);
		goto out;
	}
	if (st == IB_WC_SUCCESS && cqe.byte_len > rw->length)
		st = IB_WC_LOC_LEN_ERR;
	if (st == IB_WC_SUCCESS) {
		if (ip_hdr(skb)->version == 4) {
			/* RoCE v2: the IPv4 header in the GRH's last 20 bytes */
			memcpy(grh + 20, skb_network_header(skb),
			       sizeof(struct iphdr));
		} else {
			memcpy(grh, skb_network_header(skb),
			       sizeof(struct ipv6hdr));
			cqe.flags |= MROCE_CQE_NET_IPV6;
		}
		if (mroce_sgl_copy(rw->sge, rw->mr, rw->num_sge, 0, grh,
				   sizeof(grh), true))
			st = IB_WC_LOC_PROT_ERR;
		else if (pi->payload_len &&
			 mroce_sgl_copy_skb(rw->sge, rw->mr, rw->num_sge,
					    sizeof(grh), skb, pi->hdr_len,
					    pi->payload_len))
			st = IB_WC_LOC_PROT_ERR;
	}
	if (mroce_wire_opinfo(pi->opcode)->props & MROCE_OPP_IMM) {
		cqe.flags |= MROCE_CQE_WITH_IMM;
		cqe.imm_data = (__force u32)cpu_to_be32(pi->imm);
	}
	cqe.wr_id = rw->wr_id;
	cqe.status = st;
	mroce_rq_retire(qp, rw);
	if (!mroce_cq_post(to_mcq(qp->ibqp.recv_cq), &cqe, false))
		mroce_qp_fail_async(qp);	/* CQ overflow */
out:
	spin_unlock(&qp->rq.lock);
}

/*
 * With an SRQ: flush the WQEs this QP bound, in rq_seq order (those it
 * did not take stay in the SRQ), and say whether LAST_WQE_REACHED is
 * due: once per entry into ERR, after the last of them.
 */
static bool mroce_rq_flush_srq(struct mroce_qp *qp)
{
	u32 end = qp->rq.rq_done + qp->rq.wqe_mask + 1;
	u32 seq;

	for (seq = qp->rq.rq_done; seq != end; seq++) {
		struct mroce_rwqe *rw = &qp->rq.wqe[seq & qp->rq.wqe_mask];

		if (!rw->valid || rw->seq != seq)
			continue;
		mroce_sgl_release(rw->mr, rw->num_sge);
		rw->valid = false;
		mroce_rq_post_cqe(qp, rw, NULL, IB_WC_WR_FLUSH_ERR);
	}
	qp->rq.rq_done = end;
	if (qp->rq.last_wqe_reported)
		return false;
	qp->rq.last_wqe_reported = true;
	return true;
}

/*
 * The QP is in ERR: every posted receive WQE completes flushed, after the
 * one a fatal error failed.  Also the RQ doorbell of user QPs, which does
 * nothing unless the QP is in ERR.
 */
void mroce_rq_flush(struct mroce_qp *qp)
{
	bool last_wqe = false;
	struct mroce_rslot *s;
	unsigned long flags;
	u32 prod;

	spin_lock_irqsave(&qp->rq.lock, flags);
	/*
	 * The state under rq.lock: a doorbell that does not find ERR here
	 * ran before the flush that follows the move to ERR, and that flush
	 * sees its receives.
	 */
	if (mroce_qp_state(qp) != IB_QPS_ERR)
		goto out;
	/*
	 * Ask for the doorbell before reading prod: a receive published from
	 * now on is either seen below or announced by a doorbell, which
	 * flushes it.  The producer publishes prod, then reads the flag.
	 */
	WRITE_ONCE(qp->rq.ring.hdr->flags, MROCE_RING_F_NEED_KICK);
	smp_mb();	/* flag store before the prod load */
	/*
	 * A fatal error at ePSN (mroce_resp_advance()) fails the receive its
	 * SEND or WRITE_WITH_IMM takes, ahead of the flushed ones; once.
	 */
	s = &qp->rq.slot[qp->rq.epsn % MROCE_WINDOW];
	if (qp->rq.fatal_nak &&
	    test_and_clear_bit(qp->rq.epsn % MROCE_WINDOW, qp->rq.seen) &&
	    (mroce_rslot_props(s) & MROCE_OPP_RWQE))
		mroce_rq_complete(qp, s, qp->rq.fatal_nak == MROCE_NAK_INV_REQ ?
				  IB_WC_LOC_LEN_ERR : IB_WC_LOC_PROT_ERR);
	if (qp->ibqp.srq) {
		last_wqe = mroce_rq_flush_srq(qp);
		goto out;
	}
	/* pairs with the producer's release of prod */
	prod = smp_load_acquire(&qp->rq.ring.hdr->prod);
	if (prod - qp->rq.rq_done > qp->rq.ring.num_slots)
		prod = qp->rq.rq_done + qp->rq.ring.num_slots;
	while (qp->rq.rq_done != prod) {
		struct mroce_rwqe *rw = &qp->rq.wqe[qp->rq.rq_done &
						    qp->rq.wqe_mask];
		const struct mroce_recv_wqe *w =
			mroce_ring_slot(&qp->rq.ring, qp->rq.rq_done);

		rw->wr_id = READ_ONCE(w->wr_id);
		/*
		 * A receive posted into the freed slot lies beyond prod and
		 * is flushed by its doorbell, after this flush.
		 */
		mroce_rq_retire(qp, rw);
		mroce_rq_post_cqe(qp, rw, NULL, IB_WC_WR_FLUSH_ERR);
	}
out:
	spin_unlock_irqrestore(&qp->rq.lock, flags);
	if (last_wqe && qp->ibqp.event_handler) {
		struct ib_event ev = {
			.device = qp->ibqp.device,
			.element.qp = &qp->ibqp,
			.event = IB_EVENT_QP_LAST_WQE_REACHED,
		};

		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
	}
}

/* Destroy or reset: drop the references of resolved receive WQEs. */
void mroce_rq_release(struct mroce_qp *qp)
{
	u32 i;

	if (!qp->rq.wqe)
		return;
	for (i = 0; i <= qp->rq.wqe_mask; i++) {
		struct mroce_rwqe *rw = &qp->rq.wqe[i];

		if (rw->valid)
			mroce_sgl_release(rw->mr, rw->num_sge);
		rw->valid = false;
	}
}
