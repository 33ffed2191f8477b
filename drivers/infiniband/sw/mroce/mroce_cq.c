// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce completion queues: a ring of struct mroce_cqe the kernel fills
 * and the consumer (the process through mmap, or a kernel ULP through
 * poll_cq) drains.  The consumer index of a user CQ is written by the
 * process and therefore only trusted to decide whether the ring is full.
 */

#include <rdma/uverbs_ioctl.h>

#include "mroce.h"

static u32 mroce_cq_slots(int cqe)
{
	/* One slot stays free so "full" never looks like "empty". */
	return roundup_pow_of_two((u32)cqe + 1);
}

/* The consumer's completion handler, from a tasklet. */
static void mroce_cq_notify(struct tasklet_struct *t)
{
	struct mroce_cq *cq = from_tasklet(cq, t, notify_task);

	if (cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

int mroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct ib_udata *udata)
{
	struct mroce_dev *mdev = to_mdev(ibcq->device);
	struct mroce_create_cq_resp resp = {};
	struct mroce_ucontext *uc = rdma_udata_to_drv_context(udata,
				struct mroce_ucontext, ibuc);
	struct mroce_cq *cq = to_mcq(ibcq);
	int err;

	if (attr->flags || attr->cqe < 1 || attr->cqe > MROCE_MAX_CQE)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	err = mroce_pool_add(&mdev->pool[MROCE_POOL_CQ]);
	if (err)
		return err;

	spin_lock_init(&cq->lock);
	tasklet_setup(&cq->notify_task, mroce_cq_notify);
	cq->is_user = !!udata;
	err = mroce_ring_alloc(&cq->ring, mroce_cq_slots(attr->cqe),
			       sizeof(struct mroce_cqe),
			       uc ? &uc->ibuc : NULL, &resp.cq);
	if (err)
		goto err_count;
	ibcq->cqe = cq->ring.num_slots - 1;

	if (udata) {
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_ring;
	}
	return 0;

err_ring:
	mroce_ring_free(&cq->ring);
err_count:
	mroce_pool_del(&mdev->pool[MROCE_POOL_CQ]);
	return err;
}

int mroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct mroce_cq *cq = to_mcq(ibcq);

	/* its QPs are gone (ib_core): nothing schedules it any more */
	tasklet_kill(&cq->notify_task);
	mroce_ring_free(&cq->ring);
	mroce_pool_del(&to_mdev(ibcq->device)->pool[MROCE_POOL_CQ]);
	return 0;
}

int mroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct mroce_ucontext *uc = rdma_udata_to_drv_context(udata,
				struct mroce_ucontext, ibuc);
	struct mroce_cq *cq = to_mcq(ibcq);
	struct mroce_resize_cq_resp resp = {};
	struct mroce_ring new, old;
	u32 prod, cons, n;
	int err;

	if (cqe < 1 || cqe > MROCE_MAX_CQE)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	err = mroce_ring_alloc(&new, mroce_cq_slots(cqe),
			       sizeof(struct mroce_cqe),
			       uc ? &uc->ibuc : NULL, &resp.cq);
	if (err)
		return err;

	/* Tell the process first: if that fails it keeps the old ring. */
	if (udata) {
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err) {
			mroce_ring_free(&new);
			return err;
		}
	}

	spin_lock_bh(&cq->lock);
	prod = cq->ring.hdr->prod;
	cons = READ_ONCE(cq->ring.hdr->cons);
	n = prod - cons;
	if (n > cq->ring.num_slots || n >= new.num_slots) {
		spin_unlock_bh(&cq->lock);
		mroce_ring_free(&new);
		return -EINVAL;	/* would not hold what is pending */
	}
	for (; cons != prod; cons++)
		memcpy(mroce_ring_slot(&new, cons),
		       mroce_ring_slot(&cq->ring, cons),
		       sizeof(struct mroce_cqe));
	new.hdr->prod = prod;
	new.hdr->cons = cons - n;
	old = cq->ring;
	cq->ring = new;
	ibcq->cqe = new.num_slots - 1;
	spin_unlock_bh(&cq->lock);
	mroce_ring_free(&old);
	return 0;
}

/*
 * Add a completion.  Softirq or process context, under the posting QP's
 * locks: so the completion handler runs later, from a tasklet, where a
 * ULP may post again.  On overflow the CQ is broken for good, as on
 * hardware: its consumers get IB_EVENT_CQ_ERR, and false tells the
 * caller to fail its QP (the completion is lost).
 */
bool mroce_cq_post(struct mroce_cq *cq, const struct mroce_cqe *cqe,
		   bool solicited)
{
	struct ib_event ev;
	bool notify = false;
	unsigned long flags;
	u32 prod;

	spin_lock_irqsave(&cq->lock, flags);
	prod = cq->ring.hdr->prod;
	if (prod - READ_ONCE(cq->ring.hdr->cons) >= cq->ring.mask) {
		bool first = !cq->overflow;

		cq->overflow = true;
		spin_unlock_irqrestore(&cq->lock, flags);
		if (first && cq->ibcq.event_handler) {
			ev.device = cq->ibcq.device;
			ev.element.cq = &cq->ibcq;
			ev.event = IB_EVENT_CQ_ERR;
			cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
		}
		return false;
	}
	memcpy(mroce_ring_slot(&cq->ring, prod), cqe, sizeof(*cqe));
	/* the CQE is visible before the index that publishes it */
	smp_store_release(&cq->ring.hdr->prod, prod + 1);
	if (cq->notify == IB_CQ_NEXT_COMP ||
	    (cq->notify == IB_CQ_SOLICITED && solicited)) {
		cq->notify = 0;
		notify = true;
	}
	spin_unlock_irqrestore(&cq->lock, flags);

	if (notify)
		tasklet_schedule(&cq->notify_task);
	return true;
}

/* each CQE flag is a bit of its own: a UD IPv6 receive is no WITH_INV */
static_assert(hweight32(MROCE_CQE_WITH_IMM | MROCE_CQE_GRH |
			MROCE_CQE_NET_IPV6 | MROCE_CQE_WITH_INV) == 4);

static void mroce_cqe_to_wc(const struct mroce_cqe *cqe, struct ib_wc *wc,
			    struct ib_qp *qp)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	wc->opcode = cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	wc->qp = qp;
	wc->src_qp = cqe->src_qp;
	if (cqe->flags & MROCE_CQE_WITH_IMM) {
		wc->ex.imm_data = (__force __be32)cqe->imm_data;
		wc->wc_flags |= IB_WC_WITH_IMM;
	}
	if (cqe->flags & MROCE_CQE_WITH_INV) {
		wc->ex.invalidate_rkey = cqe->imm_data;
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
	}
	if (cqe->flags & MROCE_CQE_GRH) {
		wc->wc_flags |= IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE;
		wc->network_hdr_type = cqe->flags & MROCE_CQE_NET_IPV6 ?
				       RDMA_NETWORK_IPV6 : RDMA_NETWORK_IPV4;
	}
	wc->port_num = MROCE_PORT;
}

/* Kernel consumers only: user CQs are polled through the mapping. */
int mroce_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc)
{
	struct mroce_cq *cq = to_mcq(ibcq);
	struct mroce_dev *mdev = to_mdev(ibcq->device);
	struct mroce_cqe cqe;
	unsigned long flags;
	u32 cons, prod;
	int n = 0;

	spin_lock_irqsave(&cq->lock, flags);
	cons = cq->ring.hdr->cons;
	prod = cq->ring.hdr->prod;
	while (n < num && cons != prod) {
		struct mroce_qp *qp;

		memcpy(&cqe, mroce_ring_slot(&cq->ring, cons), sizeof(cqe));
		qp = mroce_qp_get(mdev, cqe.qp_num);
		mroce_cqe_to_wc(&cqe, &wc[n++], qp ? &qp->ibqp : NULL);
		if (qp)
			mroce_qp_put(qp);
		cons++;
	}
	/* slots are read before they are handed back */
	smp_store_release(&cq->ring.hdr->cons, cons);
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

int mroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct mroce_cq *cq = to_mcq(ibcq);
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	/* A pending NEXT_COMP request is not weakened to SOLICITED. */
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    cq->ring.hdr->prod != READ_ONCE(cq->ring.hdr->cons))
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}
