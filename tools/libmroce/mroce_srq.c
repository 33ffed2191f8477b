// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libmroce: shared receive queues.
 *
 * An SRQ is a ring of struct mroce_recv_wqe shared with the kernel, as a
 * QP's RQ is: post_srq_recv writes WQEs and publishes them with prod, and
 * the responders of the RC QPs attached take them (the kernel advances
 * cons).  No system call on the data path; the ring is never in an error
 * state (a failing QP flushes only the WQEs it had taken).  The limit
 * event (ibv_modify_srq with IBV_SRQ_LIMIT) comes as an async event.
 */
#include <errno.h>
#include <stdlib.h>

#include "mroce.h"

struct ibv_srq *mroce_create_srq(struct ibv_pd *ibpd,
				 struct ibv_srq_init_attr *attr)
{
	struct mroce_create_srq_full_resp resp = {};
	struct ibv_create_srq cmd = {};
	struct mroce_srq *srq;
	uint64_t need;
	int ret;

	srq = calloc(1, sizeof(*srq));
	if (!srq) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_create_srq(ibpd, &srq->ibv_srq, attr, &cmd, sizeof(cmd),
				 &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;

	/* every field of the ring description is checked before use */
	need = sizeof(struct mroce_recv_wqe) +
	       (uint64_t)attr->attr.max_sge * sizeof(struct mroce_sge);
	ret = mroce_check_wq(&resp.drv.srq, attr->attr.max_wr, need, "SRQ");
	if (!ret)
		ret = mroce_ring_map(&srq->wq.ring, ibpd->context->cmd_fd,
				     &resp.drv.srq, 8, "SRQ");
	if (ret)
		goto err_destroy;
	ret = pthread_spin_init(&srq->wq.lock, PTHREAD_PROCESS_PRIVATE);
	if (ret)
		goto err_unmap;
	srq->wq.max_sge = attr->attr.max_sge;
	return &srq->ibv_srq;

err_unmap:
	mroce_ring_unmap(&srq->wq.ring);
err_destroy:
	ibv_cmd_destroy_srq(&srq->ibv_srq);
err_free:
	free(srq);
	errno = ret;
	return NULL;
}

int mroce_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		     int attr_mask)
{
	struct ibv_modify_srq cmd = {};

	return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd, sizeof(cmd));
}

int mroce_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd = {};

	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

int mroce_destroy_srq(struct ibv_srq *ibsrq)
{
	struct mroce_srq *srq = to_msrq(ibsrq);
	int ret;

	ret = ibv_cmd_destroy_srq(ibsrq);
	if (ret)
		return ret;	/* e.g. EBUSY: QPs still attached */
	mroce_ring_unmap(&srq->wq.ring);
	pthread_spin_destroy(&srq->wq.lock);
	free(srq);
	return 0;
}

int mroce_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr)
{
	struct ibv_recv_wr *dummy;
	unsigned int posted;

	if (!bad_wr)
		bad_wr = &dummy;
	*bad_wr = NULL;
	if (!wr)
		return 0;
	return mroce_wq_post_recv(&to_msrq(ibsrq)->wq, wr, bad_wr, &posted);
}
