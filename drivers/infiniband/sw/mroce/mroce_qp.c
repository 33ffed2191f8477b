// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce queue pairs: creation, the IB state machine (modify_qp), the
 * kernel consumers' post_send/post_recv.
 *
 * A QP owns two rings (SQ, RQ).  User QPs share them with the process;
 * kernel QPs fill them from post_send/post_recv.  Either way the data
 * path reads them the same way (mroce_req.c, mroce_resp.c).
 */

#include <linux/jhash.h>
#include <rdma/uverbs_ioctl.h>

#include "mroce.h"
#include "mroce_psn.h"
#include "mroce_trace.h"

struct mroce_qp *mroce_qp_get(struct mroce_dev *mdev, u32 qpn)
{
	struct mroce_pool_elem *e = mroce_pool_get(&mdev->pool[MROCE_POOL_QP],
						   qpn);

	return e ? container_of(e, struct mroce_qp_ref, elem)->qp : NULL;
}

void mroce_qp_put(struct mroce_qp *qp)
{
	if (refcount_dec_and_test(&qp->ref->elem.ref))
		complete(&qp->released);
}

static int mroce_check_cap(struct ib_qp_cap *cap)
{
	if (cap->max_send_wr > MROCE_MAX_QP_WR ||
	    cap->max_recv_wr > MROCE_MAX_QP_WR ||
	    cap->max_send_sge > MROCE_MAX_SGE ||
	    cap->max_recv_sge > MROCE_MAX_SGE ||
	    cap->max_inline_data > MROCE_MAX_INLINE)
		return -EINVAL;
	return 0;
}

static int mroce_qp_alloc_queues(struct mroce_qp *qp,
				 struct ib_qp_init_attr *init,
				 struct ib_ucontext *uctx,
				 struct mroce_create_qp_resp *resp)
{
	struct ib_qp_cap *cap = &init->cap;
	u32 sq_slots = roundup_pow_of_two(max(cap->max_send_wr, 1U));
	/* with an SRQ: a ring of one slot nobody fills, and no cap */
	u32 rq_slots = init->srq ? 1 :
		       roundup_pow_of_two(max(cap->max_recv_wr, 1U));
	u32 sq_room = max_t(u32, max(cap->max_send_sge, 1U) *
			    sizeof(struct mroce_sge), cap->max_inline_data);
	u32 sq_stride = ALIGN(sizeof(struct mroce_send_wqe) + sq_room, 64);
	u32 rq_stride = sizeof(struct mroce_recv_wqe) +
			max(cap->max_recv_sge, 1U) * sizeof(struct mroce_sge);
	int err;

	qp->sq.max_sge = max(cap->max_send_sge, 1U);
	qp->sq.max_inline = min_t(u32, sq_stride - sizeof(struct mroce_send_wqe),
				  MROCE_MAX_INLINE);
	qp->rq.max_sge = init->srq ? 0 : max(cap->max_recv_sge, 1U);

	err = mroce_ring_alloc(&qp->sq.ring, sq_slots, sq_stride, uctx,
			       &resp->sq);
	if (err)
		return err;
	err = mroce_ring_alloc(&qp->rq.ring, rq_slots, rq_stride,
			       init->srq ? NULL : uctx, &resp->rq);
	if (err)
		return err;
	qp->rq.wqe_mask = init->srq ? MROCE_WINDOW - 1 : rq_slots - 1;
	/* charged to the caller's memory cgroup, like its rings */
	qp->sq.wqe = kvcalloc(sq_slots, sizeof(*qp->sq.wqe), GFP_KERNEL_ACCOUNT);
	qp->sq.inline_buf = kvcalloc(sq_slots, qp->sq.max_inline,
				     GFP_KERNEL_ACCOUNT);
	qp->rq.wqe = kvcalloc(qp->rq.wqe_mask + 1, sizeof(*qp->rq.wqe),
			      GFP_KERNEL_ACCOUNT);
	qp->sq.slot_wqe = kvcalloc(MROCE_WINDOW, sizeof(*qp->sq.slot_wqe),
				   GFP_KERNEL_ACCOUNT);
	qp->sq.read_seen = kvcalloc(MROCE_WINDOW, sizeof(*qp->sq.read_seen),
				    GFP_KERNEL_ACCOUNT);
	qp->rq.slot = kvcalloc(MROCE_WINDOW, sizeof(*qp->rq.slot),
			       GFP_KERNEL_ACCOUNT);
	if (!qp->sq.wqe || !qp->sq.inline_buf || !qp->rq.wqe ||
	    !qp->sq.slot_wqe || !qp->sq.read_seen || !qp->rq.slot)
		return -ENOMEM;

	cap->max_send_wr = sq_slots;
	cap->max_recv_wr = init->srq ? 0 : rq_slots;
	cap->max_send_sge = qp->sq.max_sge;
	cap->max_recv_sge = qp->rq.max_sge;
	cap->max_inline_data = qp->sq.max_inline;
	resp->max_inline = qp->sq.max_inline;
	return 0;
}

static void mroce_qp_free_queues(struct mroce_qp *qp)
{
	struct mroce_hist *path_rtt;
	struct mroce_paths *paths;

	mroce_ring_free(&qp->sq.ring);
	mroce_ring_free(&qp->rq.ring);
	kvfree(qp->sq.wqe);
	kvfree(qp->sq.inline_buf);
	kvfree(qp->rq.wqe);
	kvfree(qp->sq.slot_wqe);
	kvfree(qp->sq.read_seen);
	kvfree(qp->rq.slot);
	kfree(qp->rq.atomic_res);
	dst_cache_destroy(&qp->route);	/* a no-op if never initialised */
	/*
	 * rdma resource show may be listing the QP right now (ib_core waits
	 * for it only after destroy returns): it looks at paths under
	 * sq.lock and finds none.
	 */
	spin_lock_bh(&qp->sq.lock);
	paths = qp->sq.paths;
	qp->sq.paths = NULL;
	path_rtt = qp->sq.path_rtt;
	qp->sq.path_rtt = NULL;
	spin_unlock_bh(&qp->sq.lock);
	kfree(paths);
	kvfree(path_rtt);
	if (qp->sq.cc_ops) {
		if (qp->sq.cc_ops->release)
			qp->sq.cc_ops->release(&qp->sq.cc);
		mroce_cc_put(qp->sq.cc_ops);
		qp->sq.cc_ops = NULL;
	}
}

/*
 * The congestion control of a new QP: the one the provider named
 * (struct mroce_create_qp_cmd, optional), else the device's default.
 */
static int mroce_qp_select_cc(struct mroce_qp *qp, struct ib_udata *udata)
{
	struct mroce_create_qp_cmd cmd = {};
	const char *name = qp->mdev->cc->name;
	int err;

	if (udata && udata->inlen) {
		err = ib_copy_from_udata(&cmd, udata,
					 min(udata->inlen, sizeof(cmd)));
		if (err)
			return err;
		/* a newer provider's fields we do not know must be unused */
		if (udata->inlen > sizeof(cmd) &&
		    !ib_is_udata_cleared(udata, sizeof(cmd),
					 udata->inlen - sizeof(cmd)))
			return -EOPNOTSUPP;
		if (cmd.flags || cmd.reserved)
			return -EINVAL;
		if (!memchr(cmd.cc_algo, 0, sizeof(cmd.cc_algo)))
			return -EINVAL;
		if (cmd.cc_algo[0])
			name = cmd.cc_algo;
	}
	qp->sq.cc_ops = mroce_cc_get(name);
	return qp->sq.cc_ops ? 0 : -ENOENT;
}

/* All paths fresh and active; the count is fixed at creation. */
static void mroce_qp_paths_init(struct mroce_qp *qp, u32 n)
{
	if (!qp->sq.paths)
		return;
	mroce_paths_init(qp->sq.paths, n ?: qp->sq.paths->n, MROCE_WINDOW,
			 qp->sq.cc_ops->path_windows,
			 mroce_now_us64());
	/* a software host's RTT jitter dwarfs any queueing-delay target */
	qp->sq.paths->qdelay_target_us = 0;
}

/* The tail latency histograms start over (create, RESET). */
static void mroce_sq_hist_reset(struct mroce_qp *qp)
{
	u32 id;

	mroce_hist_reset(&qp->sq.lat);
	if (!qp->sq.path_rtt)
		return;
	for (id = 0; id < qp->sq.paths->n; id++)
		mroce_hist_reset(&qp->sq.path_rtt[id]);
}

/*
 * The send side of a QP that never connected: what create_qp starts with
 * and what a move to RESET returns to.  Under sq.lock, or before the QP
 * is visible (create).
 */
static void mroce_sq_init_state(struct mroce_qp *qp)
{
	mroce_pacer_init(&qp->sq.pacer);
	qp->sq.head = 0;
	qp->sq.tail = 0;
	qp->sq.cur = 0;
	qp->sq.msn = 0;
	qp->sq.rq_seq = 0;
	qp->sq.rd_atomic = 0;
	qp->sq.rnr_wait = false;
	mroce_rto_init(&qp->sq.rto);
	qp->sq.rto.max_us = mroce_rto_max_for(qp->timeout, qp->retry_cnt);
	mroce_sb_init(&qp->sq.sb, qp->sq.psn);
	mroce_qp_paths_init(qp, 0);
	mroce_sq_hist_reset(qp);
	qp->sq.min_rtt_us = 0;
	qp->sq.min_rtt_at = 0;
	qp->sq.hint_mbps = 0;
	qp->sq.timer_at = 0;
	memset(qp->sq.due, 0, sizeof(qp->sq.due));
	qp->sq.tlp_out = false;
	qp->sq.peer_pb = false;
	qp->sq.peer_seg = 0;
	qp->sq.pb_queries = 0;
	qp->sq.ring.hdr->prod = 0;
	qp->sq.ring.hdr->cons = 0;
	/* the requester is idle: the first post must ring the doorbell */
	qp->sq.ring.hdr->flags = MROCE_RING_F_NEED_KICK;
	qp->sq.cc_ops->init(&qp->sq.cc);
	qp->sq.cc.pkt_bytes = mroce_wire_pkt_bytes(qp->pmtu);
}

/* The receive side, likewise.  Under rq.lock, or before the QP is visible. */
static void mroce_rq_init_state(struct mroce_qp *qp)
{
	qp->rq.rq_done = 0;
	mroce_ack_count_init(&qp->rq.ackc);
	qp->rq.unacked_last = false;
	qp->rq.pingpong = false;
	qp->rq.pb_held = false;
	qp->rq.ackreq_acked_us = 0;
	qp->rq.ackreq_cpu = -1;
	mroce_delack_init(&qp->rq.delack, MROCE_ACK_EVERY);
	qp->rq.hint_bytes = 0;
	mroce_hint_conn_init(&qp->rq.rhc);
	qp->rq.fatal_nak = 0;
	mroce_msg_track_init(&qp->rq.msg);
	bitmap_zero(qp->rq.rd_pending, MROCE_WINDOW);
	qp->rq.rd_ndup = 0;
	qp->rq.rd_busy = false;
	memset(qp->rq.rd_recent_psn, 0xff, sizeof(qp->rq.rd_recent_psn));
	qp->rq.seq_err_sent = false;
	bitmap_zero(qp->rq.seen, MROCE_WINDOW);
	qp->rq.ring.hdr->prod = 0;
	qp->rq.ring.hdr->cons = 0;
	qp->rq.ring.hdr->flags = 0;
	qp->rq.last_wqe_reported = false;
}

/* A fatal error found under the QP's locks: the QP fails from a work item. */
static void mroce_qp_err_work(struct work_struct *work)
{
	struct mroce_qp *qp = container_of(work, struct mroce_qp, err_work);
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = IB_EVENT_QP_FATAL,
	};
	enum ib_qp_state state = mroce_qp_state(qp);

	if (state == IB_QPS_ERR || state == IB_QPS_RESET)
		return;
	mroce_qp_error(qp);
	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/* What create_qp refuses: the QP types, features and sizes mroce lacks. */
static int mroce_qp_check_init(struct ib_qp_init_attr *init,
			       struct ib_udata *udata)
{
	if (init->qp_type != IB_QPT_RC && init->qp_type != IB_QPT_UD &&
	    init->qp_type != IB_QPT_GSI)
		return -EOPNOTSUPP;
	if (init->qp_type == IB_QPT_GSI && (udata || init->port_num != MROCE_PORT))
		return -EINVAL;
	/* an SRQ serves RC QPs (UD with an SRQ is not offered) */
	if (init->create_flags ||
	    (init->srq && init->qp_type != IB_QPT_RC))
		return -EOPNOTSUPP;
	if (!init->send_cq || !init->recv_cq)
		return -EINVAL;
	return mroce_check_cap(&init->cap);
}

/* Locks, timers and tasklets of a new QP: nothing runs yet. */
static void mroce_qp_init_engines(struct mroce_qp *qp)
{
	spin_lock_init(&qp->state_lock);
	spin_lock_init(&qp->sq.lock);
	spin_lock_init(&qp->rq.lock);
	init_completion(&qp->released);
	INIT_WORK(&qp->err_work, mroce_qp_err_work);
	spin_lock_init(&qp->mw_lock);
	INIT_LIST_HEAD(&qp->mw_list);
	hrtimer_init(&qp->sq.loss_timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
	qp->sq.loss_timer.function = mroce_timer_fire;
	hrtimer_init(&qp->sq.pace_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	qp->sq.pace_timer.function = mroce_req_pace_timer;
	hrtimer_init(&qp->rq.ack_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	qp->rq.ack_timer.function = mroce_resp_ack_timer;
	timer_setup(&qp->sq.rnr_timer, mroce_timer_rnr, 0);
	tasklet_setup(&qp->sq.task, mroce_req_task);
}

/* An RC QP's path table, with the number of paths the module says now. */
static int mroce_qp_alloc_paths(struct mroce_qp *qp, enum ib_qp_type type)
{
	u32 n = READ_ONCE(mroce_num_paths);

	if (type != IB_QPT_RC)
		return 0;
	qp->sq.paths = kzalloc(mroce_paths_size(n), GFP_KERNEL_ACCOUNT);
	if (!qp->sq.paths)
		return -ENOMEM;
	/* zeroed: the histograms start empty */
	qp->sq.path_rtt = kvcalloc(n, sizeof(*qp->sq.path_rtt),
				   GFP_KERNEL_ACCOUNT);
	if (!qp->sq.path_rtt)
		return -ENOMEM;
	mroce_qp_paths_init(qp, n);
	return 0;
}

/* The QP's number, and its entry in the lookup packets go through. */
static int mroce_qp_number(struct mroce_qp *qp, enum ib_qp_type type,
			   u32 *qpn)
{
	struct mroce_pool *pool = &qp->mdev->pool[MROCE_POOL_QP];

	if (type == IB_QPT_GSI) {
		/* QP1 by definition, below the pool's range; one per port */
		*qpn = MROCE_WIRE_QPN_GSI;
		return mroce_pool_insert(pool, *qpn, &qp->ref->elem);
	}
	return mroce_pool_index(pool, &qp->ref->elem, qpn, GFP_KERNEL);
}

int mroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata)
{
	struct mroce_dev *mdev = to_mdev(ibqp->device);
	struct mroce_ucontext *uc = rdma_udata_to_drv_context(udata,
				struct mroce_ucontext, ibuc);
	struct mroce_create_qp_resp resp = {};
	struct mroce_qp *qp = to_mqp(ibqp);
	u32 qpn;
	int err;

	err = mroce_qp_check_init(init, udata);
	if (err)
		return err;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	err = mroce_pool_add(&mdev->pool[MROCE_POOL_QP]);
	if (err)
		return err;
	qp->ref = kzalloc(sizeof(*qp->ref), GFP_KERNEL_ACCOUNT);
	if (!qp->ref) {
		mroce_pool_del(&mdev->pool[MROCE_POOL_QP]);
		return -ENOMEM;
	}
	refcount_set(&qp->ref->elem.ref, 1);
	qp->ref->qp = qp;

	qp->mdev = mdev;
	qp->is_user = !!udata;
	qp->state = IB_QPS_RESET;
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	mroce_qp_init_engines(qp);
	/* RC: path_mtu comes with RTR; UD: one packet per message, the port MTU */
	qp->pmtu = init->qp_type == IB_QPT_RC ?
		   ib_mtu_enum_to_int(IB_MTU_1024) :
		   ib_mtu_enum_to_int(mroce_port_mtu(mdev));
	err = mroce_qp_select_cc(qp, udata);
	if (!err)
		err = dst_cache_init(&qp->route, GFP_KERNEL_ACCOUNT);
	if (err)
		goto err_queues;

	err = mroce_qp_alloc_queues(qp, init, uc ? &uc->ibuc : NULL, &resp);
	if (!err)
		err = mroce_qp_alloc_paths(qp, init->qp_type);
	if (err)
		goto err_queues;
	mroce_sq_init_state(qp);
	mroce_rq_init_state(qp);

	err = mroce_qp_number(qp, init->qp_type, &qpn);
	if (err)
		goto err_queues;
	ibqp->qp_num = qpn;

	if (udata) {
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_xa;
	}
	return 0;

err_xa:
	/* a packet may have found it already: wait for its reference */
	mroce_pool_unindex(&mdev->pool[MROCE_POOL_QP], qpn);
	mroce_qp_put(qp);
	wait_for_completion(&qp->released);
err_queues:
	mroce_qp_free_queues(qp);
	kfree_rcu(qp->ref, rcu);
	mroce_pool_del(&mdev->pool[MROCE_POOL_QP]);
	return err;
}

/*
 * Stop every engine of a QP whose state no longer lets it send (RESET):
 * afterwards no timer, tasklet or pacer of it runs or is pending.  The
 * order matters, because each can start the next: a requester run that
 * began before the state changed may still arm the pacer (sq.lock
 * drains it), the RNR timer schedules the tasklet, and the tasklet and
 * the pacer arm nothing once they see the state.
 */
static void mroce_qp_quiesce(struct mroce_qp *qp)
{
	spin_lock_bh(&qp->sq.lock);	/* no requester run is half done */
	spin_unlock_bh(&qp->sq.lock);
	del_timer_sync(&qp->sq.rnr_timer);
	tasklet_kill(&qp->sq.task);
	hrtimer_cancel(&qp->sq.pace_timer);
	hrtimer_cancel(&qp->sq.loss_timer);
	/*
	 * A packet handled before the state changed may have armed the
	 * delayed ACK (rq.lock drains it); the timer arms nothing.
	 */
	spin_lock_bh(&qp->rq.lock);
	spin_unlock_bh(&qp->rq.lock);
	hrtimer_cancel(&qp->rq.ack_timer);
}

int mroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct mroce_qp *qp = to_mqp(ibqp);
	struct mroce_dev *mdev = qp->mdev;

	/*
	 * No new lookups; wait for the packets being processed, which hold
	 * references.  A lookup still racing with the erase touches only
	 * qp->ref, freed after a grace period.
	 */
	mroce_pool_unindex(&mdev->pool[MROCE_POOL_QP], ibqp->qp_num);
	mroce_qp_put(qp);
	wait_for_completion(&qp->released);

	spin_lock_bh(&qp->state_lock);
	if (qp->state != IB_QPS_RESET)
		trace_mroce_qp_state(qp, qp->state, IB_QPS_RESET);
	WRITE_ONCE(qp->state, IB_QPS_RESET);
	spin_unlock_bh(&qp->state_lock);
	mroce_resp_ack_flush(qp);
	mroce_qp_quiesce(qp);
	/*
	 * A failure work item may still be flushing (it read the state
	 * before RESET; its flush arms no timer, mroce_timer_arm()) or be
	 * queued by a flush that overflowed the CQ: done before the free.
	 */
	cancel_work_sync(&qp->err_work);
	/* its type 2 memory windows are free again */
	mroce_mw_qp_destroy(qp);

	mroce_sq_release(qp);
	mroce_rq_release(qp);
	mroce_qp_free_queues(qp);
	kfree_rcu(qp->ref, rcu);
	mroce_pool_del(&mdev->pool[MROCE_POOL_QP]);
	return 0;
}

/* Forget everything about the connection: RESET. */
static void mroce_qp_reset(struct mroce_qp *qp)
{
	mroce_resp_ack_flush(qp);
	mroce_qp_quiesce(qp);

	spin_lock_bh(&qp->sq.lock);
	mroce_sq_release(qp);
	mroce_sq_init_state(qp);
	spin_unlock_bh(&qp->sq.lock);

	spin_lock_bh(&qp->rq.lock);
	mroce_rq_release(qp);
	mroce_rq_init_state(qp);
	spin_unlock_bh(&qp->rq.lock);
	atomic_set(&qp->path_seq, 0);
}

/*
 * Check @attr's @mask fields and the transition they ask for, before
 * anything changes; under state_lock.  The new state is *@new, the new
 * address vector (IB_QP_AV) *@av.
 */
static int mroce_qp_check_attr(struct mroce_qp *qp,
			       const struct ib_qp_attr *attr, int mask,
			       enum ib_qp_state *new, struct mroce_av *av)
{
	enum ib_qp_state cur = qp->state;

	/* the consumer's idea of the current state must be the QP's */
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != cur)
		return -EINVAL;
	*new = mask & IB_QP_STATE ? attr->qp_state : cur;
	if (!ib_modify_qp_is_ok(cur, *new, qp->ibqp.qp_type, mask))
		return -EINVAL;
	if ((mask & IB_QP_PORT) && attr->port_num != MROCE_PORT)
		return -EINVAL;
	/* one P_Key, the default (query_port: pkey_tbl_len 1) */
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index >= MROCE_PKEY_TBL_LEN)
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > MROCE_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > MROCE_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) &&
	    (attr->dest_qp_num < MROCE_MIN_QPN ||
	     attr->dest_qp_num > MROCE_WIRE_U24_MASK))
		return -EINVAL;
	if (mask & IB_QP_AV)
		return mroce_av_from_ah_attr(av, &attr->ah_attr);
	return 0;
}

/* Apply what mroce_qp_check_attr() accepted; under state_lock. */
static void mroce_qp_apply_attr(struct mroce_qp *qp,
				const struct ib_qp_attr *attr, int mask,
				const struct mroce_av *av)
{
	if (mask & IB_QP_ACCESS_FLAGS)
		qp->access = attr->qp_access_flags;
	if (mask & IB_QP_QKEY)
		qp->qkey = attr->qkey;
	if (mask & IB_QP_AV) {
		/*
		 * The route cache follows.  IB_QP_AV comes with INIT to RTR,
		 * before the QP sends anything, so no transmit races this.
		 */
		qp->av = *av;
		dst_cache_reset(&qp->route);
	}
	if (mask & IB_QP_PATH_MTU)
		qp->pmtu = min(ib_mtu_enum_to_int(attr->path_mtu),
			       ib_mtu_enum_to_int(mroce_port_mtu(qp->mdev)));
	qp->sq.cc.pkt_bytes = mroce_wire_pkt_bytes(qp->pmtu);
	if (mask & IB_QP_TIMEOUT)
		qp->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		qp->retry_cnt = attr->retry_cnt;
	if (mask & (IB_QP_TIMEOUT | IB_QP_RETRY_CNT))
		qp->sq.rto.max_us = mroce_rto_max_for(qp->timeout,
						      qp->retry_cnt);
	if (mask & IB_QP_RNR_RETRY)
		qp->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_MIN_RNR_TIMER)
		qp->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		qp->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		qp->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_DEST_QPN)
		qp->dest_qpn = attr->dest_qp_num;
	if (mask & IB_QP_RQ_PSN) {
		spin_lock(&qp->rq.lock);
		qp->rq.epsn = mroce_psn_mask(attr->rq_psn);
		qp->rq.high = qp->rq.epsn;
		spin_unlock(&qp->rq.lock);
	}
	if (mask & IB_QP_SQ_PSN) {
		spin_lock(&qp->sq.lock);
		qp->sq.psn = mroce_psn_mask(attr->sq_psn);
		mroce_sb_init(&qp->sq.sb, qp->sq.psn);
		mroce_qp_paths_init(qp, 0);
		spin_unlock(&qp->sq.lock);
	}
	if (mask & (IB_QP_AV | IB_QP_DEST_QPN)) {
		/* path entropy: spread connections and their paths over ECMP */
		qp->sq.path_hash = jhash_2words(qp->ibqp.qp_num, qp->dest_qpn,
						0);
		qp->sport = mroce_wire_sport(qp->sq.path_hash, 0, 0);
	}
}

/* What a new state starts, outside state_lock. */
static void mroce_qp_enter(struct mroce_qp *qp, enum ib_qp_state new)
{
	switch (new) {
	case IB_QPS_RESET:
		mroce_qp_reset(qp);
		break;
	case IB_QPS_ERR:
		mroce_qp_error(qp);
		break;
	case IB_QPS_RTS:
		spin_lock_bh(&qp->sq.lock);
		mroce_sq_retry_restart(qp);
		spin_unlock_bh(&qp->sq.lock);
		mroce_req_kick(qp);	/* WQEs posted before RTS */
		break;
	default:
		break;
	}
}

int mroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata)
{
	struct mroce_qp *qp = to_mqp(ibqp);
	struct mroce_atomic_res *res = NULL;
	enum ib_qp_state cur, new;
	struct mroce_av av;
	int err;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	/*
	 * A controlled Q_Key (top bit set, IBA 10.2.5: the GSI's
	 * 0x80010000 among them) lets a UD QP send what only privileged
	 * consumers may: a process needs CAP_NET_RAW for one.
	 */
	if (udata && (mask & IB_QP_QKEY) && (attr->qkey & 0x80000000) &&
	    !capable(CAP_NET_RAW))
		return -EPERM;
	/* the responder's ATOMIC result cache, allocated where we may sleep */
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) && !READ_ONCE(qp->rq.atomic_res)) {
		res = kcalloc(MROCE_MAX_RD_ATOMIC, sizeof(*res),
			      GFP_KERNEL_ACCOUNT);
		if (!res)
			return -ENOMEM;
	}

	spin_lock_bh(&qp->state_lock);
	cur = qp->state;
	err = mroce_qp_check_attr(qp, attr, mask, &new, &av);
	if (err)
		goto out;
	if (res && !qp->rq.atomic_res) {
		qp->rq.atomic_res = res;
		res = NULL;
	}
	mroce_qp_apply_attr(qp, attr, mask, &av);
	if (new != cur) {
		WRITE_ONCE(qp->state, new);
		trace_mroce_qp_state(qp, cur, new);
	}
	spin_unlock_bh(&qp->state_lock);
	kfree(res);
	if (new != cur)
		mroce_qp_enter(qp, new);
	return 0;
out:
	spin_unlock_bh(&qp->state_lock);
	kfree(res);
	return err;
}

int mroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init)
{
	struct mroce_qp *qp = to_mqp(ibqp);

	memset(attr, 0, sizeof(*attr));
	attr->qp_state = mroce_qp_state(qp);
	attr->cur_qp_state = attr->qp_state;
	attr->path_mtu = ib_mtu_int_to_enum(qp->pmtu);
	attr->qp_access_flags = qp->access;
	attr->qkey = qp->qkey;
	attr->rq_psn = qp->rq.epsn;
	attr->sq_psn = qp->sq.psn;
	attr->dest_qp_num = qp->dest_qpn;
	attr->timeout = qp->timeout;
	attr->retry_cnt = qp->retry_cnt;
	attr->rnr_retry = qp->rnr_retry;
	attr->min_rnr_timer = qp->min_rnr_timer;
	attr->max_rd_atomic = qp->max_rd_atomic;
	attr->max_dest_rd_atomic = qp->max_dest_rd_atomic;
	attr->port_num = MROCE_PORT;
	attr->cap.max_send_wr = qp->sq.ring.num_slots;
	attr->cap.max_recv_wr = ibqp->srq ? 0 : qp->rq.ring.num_slots;
	attr->cap.max_send_sge = qp->sq.max_sge;
	attr->cap.max_recv_sge = qp->rq.max_sge;
	attr->cap.max_inline_data = qp->sq.max_inline;

	memset(init, 0, sizeof(*init));
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->qp_type = ibqp->qp_type;
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR :
					     IB_SIGNAL_REQ_WR;
	return 0;
}

/*
 * The QP failed (or was moved to ERR): every outstanding and posted WQE
 * completes with IB_WC_WR_FLUSH_ERR, after the one whose error failed the
 * QP, if any: the flushes post that error completion, once the state reads
 * ERR.  Process context (modify_qp) or softirq (the requester's tasklet and
 * timers, packet receive), never hardirq and never under sq.lock or
 * rq.lock: state_lock is a _bh lock, as in mroce_modify_qp().
 */
void mroce_qp_fail_async(struct mroce_qp *qp)
{
	schedule_work(&qp->err_work);
}

void mroce_qp_error(struct mroce_qp *qp)
{
	spin_lock_bh(&qp->state_lock);
	/*
	 * An engine that failed while the QP was being reset or destroyed
	 * (mroce_qp_quiesce() waits for it) leaves it in RESET: the
	 * consumer's modify_qp(RESET) stands, and nothing is left to flush.
	 */
	if (qp->state == IB_QPS_RESET) {
		spin_unlock_bh(&qp->state_lock);
		return;
	}
	if (qp->state != IB_QPS_ERR)
		trace_mroce_qp_state(qp, qp->state, IB_QPS_ERR);
	WRITE_ONCE(qp->state, IB_QPS_ERR);
	spin_unlock_bh(&qp->state_lock);
	mroce_resp_ack_flush(qp);
	mroce_sq_flush(qp);
	mroce_rq_flush(qp);
}

/* --- kernel consumers ------------------------------------------------- */

static int mroce_wr_to_wqe(struct mroce_qp *qp, const struct ib_send_wr *wr,
			   struct mroce_send_wqe *w)
{
	const struct mroce_wr_opinfo *op = mroce_wr_opinfo(wr->opcode);
	struct mroce_sge *sge = (void *)(w + 1);
	bool rc = qp->ibqp.qp_type == IB_QPT_RC;
	u32 len = 0;
	int i;

	memset(w, 0, sizeof(*w));
	/* BIND_MW: memory windows are for userspace consumers only */
	if (!op || !(op->mask & (rc ? MROCE_WR_RC : MROCE_WR_UD)) ||
	    (op->mask & MROCE_WR_USER))
		return -EINVAL;
	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;
	if (wr->send_flags & IB_SEND_SIGNALED)
		w->flags |= MROCE_WQE_SIGNALED;
	if (wr->send_flags & IB_SEND_FENCE)
		w->flags |= MROCE_WQE_FENCE;
	if (wr->opcode == IB_WR_REG_MR) {
		if (!reg_wr(wr)->mr || reg_wr(wr)->mr->device != qp->ibqp.device)
			return -EINVAL;
		w->wr.reg.mr_lkey = reg_wr(wr)->mr->lkey;
		w->wr.reg.key = reg_wr(wr)->key;
		w->wr.reg.access = reg_wr(wr)->access;
		return 0;
	}
	if (op->mask & (MROCE_WR_LOCAL | MROCE_WR_INV)) {
		/* the key to invalidate, in the imm_data slot */
		w->imm_data = wr->ex.invalidate_rkey;
		if (op->mask & MROCE_WR_LOCAL)
			return 0;
	}
	if (wr->num_sge < 0 || wr->num_sge > qp->sq.max_sge)
		return -EINVAL;
	if (op->mask & MROCE_WR_RDMA) {
		w->wr.rdma.remote_addr = rdma_wr(wr)->remote_addr;
		w->wr.rdma.rkey = rdma_wr(wr)->rkey;
	} else if (op->mask & MROCE_WR_ATOMIC) {
		w->wr.atomic.remote_addr = atomic_wr(wr)->remote_addr;
		w->wr.atomic.compare_add = atomic_wr(wr)->compare_add;
		w->wr.atomic.swap = atomic_wr(wr)->swap;
		w->wr.atomic.rkey = atomic_wr(wr)->rkey;
	}
	if (!rc) {
		w->wr.ud.ah_num = to_mah(ud_wr(wr)->ah)->ah_num;
		w->wr.ud.remote_qpn = ud_wr(wr)->remote_qpn;
		w->wr.ud.remote_qkey = ud_wr(wr)->remote_qkey;
	}
	if (op->mask & MROCE_WR_IMM)
		w->imm_data = (__force u32)wr->ex.imm_data;
	if (wr->send_flags & IB_SEND_SOLICITED)
		w->flags |= MROCE_WQE_SOLICITED;

	if (wr->send_flags & IB_SEND_INLINE) {
		for (i = 0; i < wr->num_sge; i++)
			len += wr->sg_list[i].length;
		if (len > qp->sq.max_inline)
			return -EINVAL;
		w->flags |= MROCE_WQE_INLINE;
		w->inline_len = len;
		len = 0;
		for (i = 0; i < wr->num_sge; i++) {
			/* kernel SGEs carry kernel virtual addresses */
			memcpy((u8 *)sge + len,
			       (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			len += wr->sg_list[i].length;
		}
		return 0;
	}
	w->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = wr->sg_list[i].addr;
		sge[i].length = wr->sg_list[i].length;
		sge[i].lkey = wr->sg_list[i].lkey;
	}
	return 0;
}

int mroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr)
{
	struct mroce_qp *qp = to_mqp(ibqp);
	struct mroce_ring *r = &qp->sq.ring;
	unsigned long flags;
	int err = 0;
	u32 prod;

	/* User QPs: this is the doorbell (POST_SEND with no WRs). */
	if (qp->is_user) {
		mroce_req_kick(qp);
		return 0;
	}
	if (mroce_qp_state(qp) < IB_QPS_RTS) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->sq.lock, flags);
	prod = r->hdr->prod;
	for (; wr; wr = wr->next) {
		if (prod - qp->sq.tail >= r->num_slots) {
			err = -ENOMEM;
			break;
		}
		err = mroce_wr_to_wqe(qp, wr, mroce_ring_slot(r, prod));
		if (err)
			break;
		prod++;
	}
	/* WQEs are written before the index that publishes them */
	smp_store_release(&r->hdr->prod, prod);
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	if (err)
		*bad_wr = wr;
	mroce_req_kick(qp);
	return err;
}

int mroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr)
{
	struct mroce_qp *qp = to_mqp(ibqp);
	unsigned long flags;
	int err;

	/*
	 * User QPs: the RQ doorbell, rung only in ERR (MROCE_RING_F_NEED_KICK);
	 * mroce_rq_flush() looks at the state under the RQ lock.
	 */
	if (qp->is_user) {
		mroce_rq_flush(qp);
		return 0;
	}
	if (ibqp->srq) {	/* receives go to the SRQ */
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->rq.lock, flags);
	err = mroce_ring_post_recv(&qp->rq.ring, qp->rq.rq_done, qp->rq.max_sge,
				   wr, bad_wr);
	spin_unlock_irqrestore(&qp->rq.lock, flags);
	if (mroce_qp_state(qp) == IB_QPS_ERR)
		mroce_rq_flush(qp);
	return err;
}
