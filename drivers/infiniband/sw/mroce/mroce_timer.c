// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce loss timer: one soft hrtimer per QP (softirq context, like the
 * requester) serves every deadline of the send side, kept in ns of
 * ktime_get_ns() in qp->sq.due[], 0 when unset:
 *
 *   reorder  RACK's reorder wait: a packet may yet turn out lost
 *   tlp      tail probe: packets are out and nothing was heard
 *   rto      retransmission timeout: no progress at all
 *   probe    a dead path is due for a PROBE
 *
 * It is programmed for the earliest; the handler sorts out which are due
 * and hands them to the loss recovery (mroce_recovery.c).  The RNR wait
 * has a timer of its own (a timer_list: its granularity is the peer's
 * min_rnr_timer, milliseconds).
 */

#include <linux/jiffies.h>

#include "mroce_sq.h"

const char *const mroce_deadline_name[MROCE_NUM_DEADLINES] = {
	[MROCE_DL_REORDER] = "reorder",
	[MROCE_DL_TLP] = "tlp",
	[MROCE_DL_RTO] = "rto",
	[MROCE_DL_PROBE] = "probe",
};

/*
 * Loss timer.  One soft hrtimer (softirq context, like the requester)
 * serves three deadlines, kept in ns of ktime_get_ns(), 0 when unset:
 * reo_at (RACK reorder wait), tlp_at (tail probe) and rto_at.  It is
 * programmed for the earliest; the handler sorts out which are due.
 */
void mroce_timer_arm(struct mroce_qp *qp)
{
	u64 at = U64_MAX;

	if (qp->sq.due[MROCE_DL_REORDER])
		at = min(at, qp->sq.due[MROCE_DL_REORDER]);
	if (qp->sq.due[MROCE_DL_TLP])
		at = min(at, qp->sq.due[MROCE_DL_TLP]);
	if (qp->sq.due[MROCE_DL_RTO])
		at = min(at, qp->sq.due[MROCE_DL_RTO]);
	if (qp->sq.due[MROCE_DL_PROBE])
		at = min(at, qp->sq.due[MROCE_DL_PROBE]);
	/*
	 * A QP that no longer sends has nothing to time: the flush of a QP
	 * failing while destroy quiesces it must not arm the timer again
	 * after hrtimer_cancel().
	 */
	if (!mroce_qp_sends(qp)) {
		qp->sq.timer_at = 0;
		hrtimer_try_to_cancel(&qp->sq.loss_timer);
		return;
	}
	/*
	 * Nothing due: the timer stays as it is.  Cancelling it now and
	 * starting it again with the next message costs two reprogrammings
	 * of the clock event device per message when messages go one at a
	 * time (a ping-pong), where the expiry, if it comes, finds nothing
	 * due and stops once; and a timer that stays queued takes the next
	 * message's deadlines with no reprogramming at all (below).
	 */
	if (at == U64_MAX)
		return;
	/* due later than programmed: the early expiry re-arms it */
	if (qp->sq.timer_at && qp->sq.timer_at <= at &&
	    hrtimer_is_queued(&qp->sq.loss_timer))
		return;
	qp->sq.timer_at = at;
	hrtimer_start(&qp->sq.loss_timer, ns_to_ktime(at), HRTIMER_MODE_ABS_SOFT);
}

void mroce_timer_rto_restart(struct mroce_qp *qp, u64 now)
{
	qp->sq.due[MROCE_DL_RTO] = now + (u64)mroce_rto_us(&qp->sq.rto) * NSEC_PER_USEC;
}

/* The tail probe's deadline: PTO from now, the RTO's if that is earlier. */
void mroce_timer_tlp_restart(struct mroce_qp *qp, u64 now)
{
	qp->sq.due[MROCE_DL_TLP] = qp->sq.tlp_out ? 0 :
		mroce_tlp_at(&qp->sq.rto, now, qp->sq.due[MROCE_DL_RTO]);
}

/* New data went out: make sure something will notice if it is lost. */
void mroce_timer_sent(struct mroce_qp *qp)
{
	u64 now = ktime_get_ns();

	if (!qp->sq.due[MROCE_DL_RTO])
		mroce_timer_rto_restart(qp, now);
	mroce_timer_tlp_restart(qp, now);
	mroce_timer_arm(qp);
}

/* Dead paths wait for probes: when is the next one due (ns)? */
void mroce_timer_probe_restart(struct mroce_qp *qp)
{
	u64 at = mroce_paths_next_probe_us(qp->sq.paths);

	qp->sq.due[MROCE_DL_PROBE] = at == U64_MAX ? 0 : at * NSEC_PER_USEC;
}

void mroce_timer_stop(struct mroce_qp *qp)
{
	qp->sq.due[MROCE_DL_REORDER] = 0;
	qp->sq.due[MROCE_DL_TLP] = 0;
	qp->sq.due[MROCE_DL_RTO] = 0;
	qp->sq.tlp_out = false;
	mroce_timer_arm(qp);
}

enum hrtimer_restart mroce_timer_fire(struct hrtimer *t)
{
	struct mroce_qp *qp = container_of(t, struct mroce_qp, sq.loss_timer);
	bool failed = false;
	u64 now;

	spin_lock(&qp->sq.lock);
	qp->sq.timer_at = 0;
	if (!mroce_qp_sends(qp))
		goto out;
	now = ktime_get_ns();
	/* probes run while the SQ is idle too: a path revives meanwhile */
	if (qp->sq.due[MROCE_DL_PROBE] && now >= qp->sq.due[MROCE_DL_PROBE]) {
		u32 seq;
		int id;

		while ((id = mroce_paths_probe_due(qp->sq.paths,
						   div_u64(now, NSEC_PER_USEC),
						   qp->sq.rto.srtt_us, &seq)) >= 0)
			mroce_req_probe(qp, id, seq);
		mroce_timer_probe_restart(qp);
	}
	if (qp->sq.tail == qp->sq.head) {
		mroce_timer_stop(qp);
		goto out;
	}
	if (qp->sq.due[MROCE_DL_REORDER] && now >= qp->sq.due[MROCE_DL_REORDER]) {
		qp->sq.due[MROCE_DL_REORDER] = 0;
		mroce_req_recover(qp, now);
	}
	if (qp->sq.rnr_wait) {
		/* the RNR timer owns the connection; the RTO waits */
		if (qp->sq.due[MROCE_DL_RTO] && now >= qp->sq.due[MROCE_DL_RTO])
			mroce_timer_rto_restart(qp, now);
		qp->sq.due[MROCE_DL_TLP] = 0;
	} else if (qp->sq.due[MROCE_DL_TLP] && now >= qp->sq.due[MROCE_DL_TLP]) {
		/*
		 * The probe first, even when the RTO is due as well (it took
		 * the RTO's place); then the RTO runs again from the probe
		 * (RFC 8985 7.3), and no second probe before an ACK.
		 */
		qp->sq.due[MROCE_DL_TLP] = 0;
		if (mroce_req_tlp(qp))
			mroce_timer_rto_restart(qp, now);
		else if (qp->sq.due[MROCE_DL_RTO] && now >= qp->sq.due[MROCE_DL_RTO])
			failed = mroce_req_rto(qp, now);	/* nothing to probe */
	} else if (qp->sq.due[MROCE_DL_RTO] && now >= qp->sq.due[MROCE_DL_RTO]) {
		qp->sq.due[MROCE_DL_TLP] = 0;
		failed = mroce_req_rto(qp, now);
	}
	/* a resend can fail its WQE (an MR deregistered under it) */
	if (!failed)
		failed = mroce_sq_complete(qp);
	if (!failed)
		mroce_timer_arm(qp);
out:
	spin_unlock(&qp->sq.lock);
	if (failed)
		mroce_qp_error(qp);
	return HRTIMER_NORESTART;
}

void mroce_timer_rnr(struct timer_list *t)
{
	struct mroce_qp *qp = from_timer(qp, t, sq.rnr_timer);

	bool resume = false;

	spin_lock_bh(&qp->sq.lock);
	if (qp->sq.rnr_wait && mroce_qp_state(qp) == IB_QPS_RTS) {
		qp->sq.rnr_wait = false;
		mroce_req_retransmit(qp, mroce_sq_win_base(qp), U32_MAX);
		mroce_timer_sent(qp);
		resume = true;
	}
	spin_unlock_bh(&qp->sq.lock);
	/* only a QP that still sends is kicked: destroy quiesces after us */
	if (resume)
		mroce_req_kick(qp);
}
