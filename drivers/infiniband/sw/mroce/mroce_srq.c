// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce shared receive queues: the verbs (create, modify, query,
 * destroy, the kernel consumers' post_srq_recv) and the one thing the
 * responder asks of an SRQ, mroce_srq_take().
 *
 * An SRQ is a ring of receive WQEs, as a QP's RQ is, shared with the
 * process for user SRQs.  What differs is who takes from it: the
 * responders of every RC QP attached, in softirq.  A QP's messages name
 * their receive WQE by rq_seq (spec, "rq_seq"), and an
 * attached QP binds an SRQ WQE to an rq_seq when the message's first
 * packet to arrive needs it, out of order or not; the WQE is copied out
 * of the ring under the SRQ's lock, so its slot is free for the
 * producer at once, and it completes, in rq_seq order, on the QP's
 * receive CQ.  When the QP fails, the WQEs it had bound are flushed
 * there; those it had not taken stay in the SRQ for the other QPs.
 *
 * The limit (IB_SRQ_LIMIT): armed by modify_srq, it fires once, when a
 * take leaves fewer WQEs than the limit, as IB_EVENT_SRQ_LIMIT_REACHED
 * from a work item (the consumer's handler runs with no lock of ours
 * held), and is disarmed until armed again.  Resizing (IB_SRQ_MAX_WR)
 * is not offered: the device does not claim IB_DEVICE_SRQ_RESIZE.
 */

#include <rdma/uverbs_ioctl.h>

#include "mroce.h"

static void mroce_srq_limit_work(struct work_struct *work)
{
	struct mroce_srq *srq = container_of(work, struct mroce_srq,
					     limit_work);
	struct ib_event ev = {
		.device = srq->ibsrq.device,
		.element.srq = &srq->ibsrq,
		.event = IB_EVENT_SRQ_LIMIT_REACHED,
	};

	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}

/* What create_srq refuses, before anything is allocated. */
static int mroce_srq_check_init(const struct ib_srq_init_attr *init)
{
	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;	/* XRC and tag matching */
	if (!init->attr.max_wr || init->attr.max_wr > MROCE_MAX_SRQ_WR ||
	    init->attr.max_sge > MROCE_MAX_SGE)
		return -EINVAL;
	if (init->attr.srq_limit > init->attr.max_wr)
		return -EINVAL;
	return 0;
}

int mroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata)
{
	struct mroce_dev *mdev = to_mdev(ibsrq->device);
	struct mroce_ucontext *uc = rdma_udata_to_drv_context(udata,
				struct mroce_ucontext, ibuc);
	struct mroce_srq *srq = to_msrq(ibsrq);
	struct mroce_create_srq_resp resp = {};
	u32 slots, stride;
	int err;

	err = mroce_srq_check_init(init);
	if (err)
		return err;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	err = mroce_pool_add(&mdev->pool[MROCE_POOL_SRQ]);
	if (err)
		return err;

	srq->mdev = mdev;
	spin_lock_init(&srq->lock);
	INIT_WORK(&srq->limit_work, mroce_srq_limit_work);
	srq->max_sge = max(init->attr.max_sge, 1U);
	srq->limit = init->attr.srq_limit;
	srq->cons = 0;
	slots = roundup_pow_of_two(init->attr.max_wr);
	stride = sizeof(struct mroce_recv_wqe) +
		 srq->max_sge * sizeof(struct mroce_sge);
	err = mroce_ring_alloc(&srq->ring, slots, stride, uc ? &uc->ibuc : NULL,
			       &resp.srq);
	if (err)
		goto err_pool;
	srq->ring.hdr->prod = 0;
	srq->ring.hdr->cons = 0;
	srq->ring.hdr->flags = 0;
	if (udata) {
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_ring;
	}
	init->attr.max_wr = slots;
	init->attr.max_sge = srq->max_sge;
	return 0;

err_ring:
	mroce_ring_free(&srq->ring);
err_pool:
	mroce_pool_del(&mdev->pool[MROCE_POOL_SRQ]);
	return err;
}

int mroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct mroce_srq *srq = to_msrq(ibsrq);

	if (udata && udata->inlen)
		return -EINVAL;
	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	if (mask & IB_SRQ_MAX_WR)
		return -EOPNOTSUPP;	/* no IB_DEVICE_SRQ_RESIZE */
	if (mask & IB_SRQ_LIMIT) {
		if (attr->srq_limit > srq->ring.num_slots)
			return -EINVAL;
		spin_lock_bh(&srq->lock);
		srq->limit = attr->srq_limit;
		spin_unlock_bh(&srq->lock);
	}
	return 0;
}

int mroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct mroce_srq *srq = to_msrq(ibsrq);

	attr->max_wr = srq->ring.num_slots;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = READ_ONCE(srq->limit);
	return 0;
}

/* ib_core refuses while QPs are attached: no responder can take. */
int mroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct mroce_srq *srq = to_msrq(ibsrq);

	cancel_work_sync(&srq->limit_work);
	mroce_ring_free(&srq->ring);
	mroce_pool_del(&srq->mdev->pool[MROCE_POOL_SRQ]);
	return 0;
}

/* Kernel consumers only: a user SRQ's ring is filled by the provider. */
int mroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr)
{
	struct mroce_srq *srq = to_msrq(ibsrq);
	unsigned long flags;
	int err;

	spin_lock_irqsave(&srq->lock, flags);
	err = mroce_ring_post_recv(&srq->ring, srq->cons, srq->max_sge, wr,
				   bad_wr);
	spin_unlock_irqrestore(&srq->lock, flags);
	return err;
}

/*
 * Take the next WQE of @srq into @rw (wr_id, SGEs resolved against the
 * SRQ's PD, length).  False if the SRQ is empty: the receiver is not
 * ready.  A WQE the producer got wrong (too many SGEs, a bad lkey) is
 * taken too, with *@status saying how it fails.  Under the QP's rq.lock,
 * softirq; the SRQ's lock is taken inside it.
 */
bool mroce_srq_take(struct mroce_srq *srq, struct mroce_rwqe *rw,
		    enum ib_wc_status *status)
{
	const struct mroce_recv_wqe *w;
	bool fire = false;
	u32 prod, nsge;

	*status = IB_WC_SUCCESS;
	spin_lock(&srq->lock);
	/* pairs with the producer's release of prod */
	prod = smp_load_acquire(&srq->ring.hdr->prod);
	/* a user producer can write anything: past a full ring is empty */
	if (prod == srq->cons || prod - srq->cons > srq->ring.num_slots) {
		spin_unlock(&srq->lock);
		return false;
	}
	w = mroce_ring_slot(&srq->ring, srq->cons);
	rw->wr_id = READ_ONCE(w->wr_id);
	nsge = READ_ONCE(w->num_sge);
	rw->length = 0;
	rw->num_sge = 0;
	if (nsge > srq->max_sge) {
		*status = IB_WC_LOC_LEN_ERR;
	} else {
		memcpy(rw->sge, w + 1, nsge * sizeof(rw->sge[0]));
		rw->num_sge = nsge;
	}
	srq->cons++;
	mroce_ring_free_to(&srq->ring, srq->cons);
	if (srq->limit && prod - srq->cons < srq->limit) {
		srq->limit = 0;
		fire = true;
	}
	spin_unlock(&srq->lock);
	if (fire)
		schedule_work(&srq->limit_work);

	if (*status == IB_WC_SUCCESS &&
	    mroce_sgl_resolve(srq->mdev, srq->ibsrq.pd, rw->sge, rw->mr,
			      rw->num_sge, IB_ACCESS_LOCAL_WRITE, &rw->length))
		*status = IB_WC_LOC_PROT_ERR;
	return true;
}
