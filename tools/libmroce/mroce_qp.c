// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libmroce: RC queue pairs and their data path.  UC is refused with
 * EOPNOTSUPP, as the kernel refuses it: MetaRoCE v1 has no UC transport.
 *
 * Each QP has a send ring and a receive ring shared with the kernel.
 * post_send writes struct mroce_send_wqe (+ SGEs or inline payload) into
 * the SQ ring and makes a system call only when the kernel has set
 * MROCE_RING_F_NEED_KICK: then it rings the doorbell, the legacy POST_SEND
 * write() command with no work requests.  post_recv writes struct
 * mroce_recv_wqe (+ SGEs) into the RQ ring; it makes a system call only
 * when the kernel has set MROCE_RING_F_NEED_KICK on the RQ, which it does
 * while the QP is in the error state: then the RQ doorbell, the POST_RECV
 * write() command with no work requests, has the kernel flush the new
 * receives with IBV_WC_WR_FLUSH_ERR.
 *
 * A QP created with an SRQ has no RQ ring (the kernel gives none; its
 * receives are posted to the SRQ, mroce_srq.c), and post_recv on it fails
 * with EINVAL.  UD QPs use the same rings: a send WQE names its address
 * handle by the number the kernel gave it (wr.ud.ah_num), and a receive
 * gets the 40-byte GRH the kernel builds from the IP header first.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mroce.h"

/*
 * The send WQE's opcode is enum ib_uverbs_wr_opcode, which has the same
 * numbers as enum ibv_wr_opcode: the provider copies it as it is.
 */
_Static_assert((int)IBV_WR_RDMA_WRITE == (int)IB_UVERBS_WR_RDMA_WRITE &&
	       (int)IBV_WR_RDMA_WRITE_WITH_IMM ==
		       (int)IB_UVERBS_WR_RDMA_WRITE_WITH_IMM &&
	       (int)IBV_WR_SEND == (int)IB_UVERBS_WR_SEND &&
	       (int)IBV_WR_SEND_WITH_IMM == (int)IB_UVERBS_WR_SEND_WITH_IMM &&
	       (int)IBV_WR_RDMA_READ == (int)IB_UVERBS_WR_RDMA_READ &&
	       (int)IBV_WR_ATOMIC_CMP_AND_SWP ==
		       (int)IB_UVERBS_WR_ATOMIC_CMP_AND_SWP &&
	       (int)IBV_WR_ATOMIC_FETCH_AND_ADD ==
		       (int)IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD,
	       "enum ibv_wr_opcode is enum ib_uverbs_wr_opcode");

#define MROCE_SEND_WQE_HDR	sizeof(struct mroce_send_wqe)
#define MROCE_RECV_WQE_HDR	sizeof(struct mroce_recv_wqe)

/* ------------------------------------------------------------------------
 * Creation: what the kernel granted must fit the rings it gave us.
 */

/* A work queue's ring (RQ, SQ, SRQ) must hold max_wr WQEs of slot_need. */
int mroce_check_wq(const struct mroce_ring_info *info, uint32_t max_wr,
		   uint64_t slot_need, const char *what)
{
	int ret;

	ret = mroce_ring_check(info, 8, what);
	if (ret)
		return ret;
	if (info->num_slots < max_wr) {
		mroce_abi_err("kernel %s ring: %u slots, but max_wr %u",
			      what, info->num_slots, max_wr);
		return EPROTO;
	}
	if (info->stride < slot_need) {
		mroce_abi_err("kernel %s ring: stride %u, but a WQE with the granted SGEs/inline data needs %llu bytes",
			      what, info->stride,
			      (unsigned long long)slot_need);
		return EPROTO;
	}
	return 0;
}

/*
 * cap: what the kernel granted (ibv_cmd_create_qp's attr->cap), with
 * max_inline_data taken from the driver response.  Returns 0 or EPROTO.
 */
int mroce_qp_check_resp(const struct ibv_qp_cap *cap,
			const struct mroce_create_qp_resp *drv, bool has_rq)
{
	uint64_t sq_need, rq_need;
	int ret;

	sq_need = MROCE_SEND_WQE_HDR +
		  (uint64_t)cap->max_send_sge * sizeof(struct mroce_sge);
	if (sq_need < MROCE_SEND_WQE_HDR + (uint64_t)drv->max_inline)
		sq_need = MROCE_SEND_WQE_HDR + (uint64_t)drv->max_inline;
	ret = mroce_check_wq(&drv->sq, cap->max_send_wr, sq_need, "SQ");
	if (ret)
		return ret;

	if (!has_rq)
		return 0;
	if (!drv->rq.num_slots) {
		mroce_abi_err("kernel gave no RQ ring to a QP without SRQ");
		return EPROTO;
	}
	rq_need = MROCE_RECV_WQE_HDR +
		  (uint64_t)cap->max_recv_sge * sizeof(struct mroce_sge);
	return mroce_check_wq(&drv->rq, cap->max_recv_wr, rq_need, "RQ");
}

/*
 * MROCE_CC in the environment names the congestion control of the QPs
 * this process creates (e.g. MROCE_CC=dcqcn); unset or empty: the
 * device's default.  Returns 0 or EINVAL (name too long).
 */
static int mroce_qp_cc_from_env(struct mroce_create_qp_cmd *drv)
{
	const char *name = getenv("MROCE_CC");
	size_t len;

	if (!name)
		return 0;
	len = strlen(name);
	if (len >= sizeof(drv->cc_algo))
		return EINVAL;
	memcpy(drv->cc_algo, name, len);
	return 0;
}

struct ibv_qp *mroce_create_qp(struct ibv_pd *ibpd,
			       struct ibv_qp_init_attr *attr)
{
	struct mroce_create_qp_full_resp resp = {};
	struct mroce_create_qp_full_cmd cmd = {};
	int cmd_fd = ibpd->context->cmd_fd;
	struct mroce_qp *qp;
	int ret;

	/* RC and UD (no UC, no XRC: Documentation/mroce.rst) */
	if (attr->qp_type != IBV_QPT_RC && attr->qp_type != IBV_QPT_UD) {
		errno = EOPNOTSUPP;
		return NULL;
	}

	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}

	ret = mroce_qp_cc_from_env(&cmd.drv);
	if (ret)
		goto err_free;
	ret = ibv_cmd_create_qp(ibpd, &qp->vqp.qp, attr, &cmd.ibv_cmd,
				sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;

	/* The driver response is authoritative for inline data. */
	attr->cap.max_inline_data = resp.drv.max_inline;

	ret = mroce_qp_check_resp(&attr->cap, &resp.drv, !attr->srq);
	if (ret)
		goto err_destroy;

	ret = mroce_ring_map(&qp->sq.ring, cmd_fd, &resp.drv.sq, 8, "SQ");
	if (ret)
		goto err_destroy;
	if (!attr->srq) {
		ret = mroce_ring_map(&qp->rq.ring, cmd_fd, &resp.drv.rq, 8,
				     "RQ");
		if (ret)
			goto err_unmap;
	}

	ret = pthread_spin_init(&qp->sq.lock, PTHREAD_PROCESS_PRIVATE);
	if (ret)
		goto err_unmap;
	ret = pthread_spin_init(&qp->rq.lock, PTHREAD_PROCESS_PRIVATE);
	if (ret) {
		pthread_spin_destroy(&qp->sq.lock);
		goto err_unmap;
	}

	qp->sq.max_sge = attr->cap.max_send_sge;
	qp->sq.max_inline = resp.drv.max_inline;
	qp->rq.max_sge = attr->cap.max_recv_sge;
	qp->sq_sig_all = attr->sq_sig_all;

	return &qp->vqp.qp;

err_unmap:
	mroce_ring_unmap(&qp->rq.ring);
	mroce_ring_unmap(&qp->sq.ring);
err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	free(qp);
	errno = ret;
	return NULL;
}

int mroce_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd = {};
	int ret;

	ret = ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
			       sizeof(cmd));
	if (ret)
		return ret;

	/* Report the same inline limit create_qp did. */
	attr->cap.max_inline_data = to_mqp(ibqp)->sq.max_inline;
	if (init_attr)
		init_attr->cap.max_inline_data = to_mqp(ibqp)->sq.max_inline;
	return 0;
}

int mroce_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		    int attr_mask)
{
	struct ibv_modify_qp cmd = {};

	return ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
}

int mroce_destroy_qp(struct ibv_qp *ibqp)
{
	struct mroce_qp *qp = to_mqp(ibqp);
	int ret;

	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;

	mroce_ring_unmap(&qp->rq.ring);
	mroce_ring_unmap(&qp->sq.ring);
	pthread_spin_destroy(&qp->rq.lock);
	pthread_spin_destroy(&qp->sq.lock);
	free(qp);
	return 0;
}

/* ------------------------------------------------------------------------
 * Send queue.
 */

/*
 * A BIND_MW WR: a window of this context (type 2 from post_send, type 1
 * from ibv_bind_mw(), @bind_type1), a region unless the length is 0.
 * What the kernel checks when it executes the bind (PDs, range, access,
 * key) fails the WQE with IBV_WC_MW_BIND_ERR instead.
 */
static int mroce_check_bind_wr(const struct mroce_qp *qp,
			       const struct ibv_send_wr *wr, bool bind_type1)
{
	const struct ibv_mw *mw = wr->bind_mw.mw;

	if (!mw || mw->context != qp->vqp.qp.context ||
	    mw->type != (bind_type1 ? IBV_MW_TYPE_1 : IBV_MW_TYPE_2))
		return EINVAL;
	if (wr->bind_mw.bind_info.length && !wr->bind_mw.bind_info.mr)
		return EINVAL;
	return 0;
}

/* Validate one send WR; on success *inline_len is its inline byte count. */
static int mroce_check_send_wr(const struct mroce_qp *qp,
			       const struct ibv_send_wr *wr,
			       uint32_t *inline_len, bool bind_type1)
{
	uint64_t len = 0;
	int i;

	/* UD: datagrams only, each to the address handle it names */
	if (qp->vqp.qp.qp_type == IBV_QPT_UD &&
	    ((wr->opcode != IBV_WR_SEND && wr->opcode != IBV_WR_SEND_WITH_IMM) ||
	     !wr->wr.ud.ah || wr->wr.ud.ah->pd != qp->vqp.qp.pd))
		return EINVAL;

	switch (wr->opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		break;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		/* the data goes the other way: no inline */
		if (wr->send_flags & IBV_SEND_INLINE)
			return EINVAL;
		break;
	case IBV_WR_BIND_MW:
	case IBV_WR_LOCAL_INV:
		/* local operations: no payload, the SGEs are not looked at */
		if ((wr->send_flags & (IBV_SEND_INLINE | IBV_SEND_SOLICITED |
				       ~MROCE_SEND_FLAGS_SUPPORTED)) ||
		    (wr->opcode == IBV_WR_BIND_MW &&
		     mroce_check_bind_wr(qp, wr, bind_type1)))
			return EINVAL;
		*inline_len = 0;
		return 0;
	default:
		return EINVAL;
	}
	if (bind_type1)
		return EINVAL;

	if (wr->send_flags & ~MROCE_SEND_FLAGS_SUPPORTED)
		return EINVAL;
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->sq.max_sge)
		return EINVAL;

	if (wr->send_flags & IBV_SEND_INLINE) {
		for (i = 0; i < wr->num_sge; i++)
			len += wr->sg_list[i].length;
		if (len > qp->sq.max_inline)
			return EINVAL;
	}
	*inline_len = len;
	return 0;
}

/* Encode a validated WR into a slot (at least header + payload bytes). */
static void mroce_write_send_wqe(void *slot, const struct ibv_send_wr *wr,
				 bool sig_all, bool ud, uint32_t inline_len)
{
	uint8_t *payload = (uint8_t *)slot + MROCE_SEND_WQE_HDR;
	struct mroce_send_wqe wqe;
	int i;

	/* Every reserved field and unused union byte goes out as zero. */
	memset(&wqe, 0, sizeof(wqe));
	wqe.wr_id = wr->wr_id;
	wqe.opcode = wr->opcode;
	wqe.flags = mroce_wqe_flags(wr->send_flags, sig_all);

	switch (wr->opcode) {
	case IBV_WR_SEND_WITH_IMM:
		wqe.imm_data = wr->imm_data;	/* already big endian */
		break;
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_LOCAL_INV:
		wqe.imm_data = wr->invalidate_rkey;	/* host order */
		break;
	case IBV_WR_BIND_MW:
		/* the kernel finds the window by its rkey's index bits */
		wqe.wr.bind.mw_rkey = wr->bind_mw.mw->rkey;
		wqe.wr.bind.rkey = wr->bind_mw.rkey;
		wqe.wr.bind.addr = wr->bind_mw.bind_info.addr;
		wqe.wr.bind.length = wr->bind_mw.bind_info.length;
		wqe.wr.bind.mr_lkey = wr->bind_mw.bind_info.mr ?
				      wr->bind_mw.bind_info.mr->lkey : 0;
		wqe.wr.bind.access = wr->bind_mw.bind_info.mw_access_flags;
		break;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		wqe.imm_data = wr->imm_data;
		/* fall through */
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_READ:
		wqe.wr.rdma.remote_addr = wr->wr.rdma.remote_addr;
		wqe.wr.rdma.rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		wqe.wr.atomic.remote_addr = wr->wr.atomic.remote_addr;
		wqe.wr.atomic.compare_add = wr->wr.atomic.compare_add;
		wqe.wr.atomic.swap = wr->wr.atomic.swap;
		wqe.wr.atomic.rkey = wr->wr.atomic.rkey;
		break;
	default:
		break;
	}
	if (ud) {
		/* the kernel finds the AH by number, in the QP's PD */
		wqe.wr.ud.ah_num = to_mah(wr->wr.ud.ah)->ah_num;
		wqe.wr.ud.remote_qpn = wr->wr.ud.remote_qpn;
		wqe.wr.ud.remote_qkey = wr->wr.ud.remote_qkey;
	}

	if (wr->opcode == IBV_WR_BIND_MW || wr->opcode == IBV_WR_LOCAL_INV) {
		/* no payload, no SGEs */
	} else if (wr->send_flags & IBV_SEND_INLINE) {
		/* The payload replaces the SGEs: num_sge stays 0. */
		wqe.flags |= MROCE_WQE_INLINE;
		wqe.inline_len = inline_len;
		for (i = 0; i < wr->num_sge; i++) {
			memcpy(payload,
			       (const void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			payload += wr->sg_list[i].length;
		}
	} else {
		struct mroce_sge *sge = (struct mroce_sge *)payload;

		wqe.num_sge = wr->num_sge;
		for (i = 0; i < wr->num_sge; i++)
			sge[i] = (struct mroce_sge){
				.addr = wr->sg_list[i].addr,
				.length = wr->sg_list[i].length,
				.lkey = wr->sg_list[i].lkey,
			};
	}

	memcpy(slot, &wqe, sizeof(wqe));
}

/* ------------------------------------------------------------------------
 * Doorbells: the legacy POST_SEND / POST_RECV write() commands with no
 * work requests.  For POST_SEND the kernel (mroce's post_send with an
 * empty list) restarts processing of the SQ ring; for POST_RECV (rung only
 * while the QP is in the error state) it flushes every receive WQE
 * published so far.  Both commands carry wqe_size = the size of one legacy
 * WR, which the kernel requires even when wr_count is 0.
 */
struct mroce_sq_doorbell_cmd {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_post_send core_payload;
};

struct mroce_rq_doorbell_cmd {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_post_recv core_payload;
};

_Static_assert(sizeof(struct mroce_sq_doorbell_cmd) % 4 == 0 &&
	       sizeof(struct ib_uverbs_post_send_resp) % 4 == 0 &&
	       sizeof(struct mroce_rq_doorbell_cmd) % 4 == 0 &&
	       sizeof(struct ib_uverbs_post_recv_resp) % 4 == 0,
	       "write() commands count 32-bit words");

/* One write() command on the context's command fd: 0 or an errno. */
static int mroce_write_cmd(struct ibv_qp *ibqp, const void *cmd, size_t len)
{
	ssize_t n;

	n = write(ibqp->context->cmd_fd, cmd, len);
	if (n < 0)
		return errno;
	return (size_t)n == len ? 0 : EIO;
}

int mroce_sq_doorbell(struct ibv_qp *ibqp)
{
	struct ib_uverbs_post_send_resp resp = {};
	struct mroce_sq_doorbell_cmd cmd = {
		.hdr = {
			.command = IB_USER_VERBS_CMD_POST_SEND,
			.in_words = sizeof(cmd) / 4,
			.out_words = sizeof(resp) / 4,
		},
		.core_payload = {
			.response = (uintptr_t)&resp,
			.qp_handle = ibqp->handle,
			.wr_count = 0,
			.sge_count = 0,
			.wqe_size = sizeof(struct ib_uverbs_send_wr),
		},
	};

	return mroce_write_cmd(ibqp, &cmd, sizeof(cmd));
}

int mroce_rq_doorbell(struct ibv_qp *ibqp)
{
	struct ib_uverbs_post_recv_resp resp = {};
	struct mroce_rq_doorbell_cmd cmd = {
		.hdr = {
			.command = IB_USER_VERBS_CMD_POST_RECV,
			.in_words = sizeof(cmd) / 4,
			.out_words = sizeof(resp) / 4,
		},
		.core_payload = {
			.response = (uintptr_t)&resp,
			.qp_handle = ibqp->handle,
			.wr_count = 0,
			.sge_count = 0,
			.wqe_size = sizeof(struct ib_uverbs_recv_wr),
		},
	};

	return mroce_write_cmd(ibqp, &cmd, sizeof(cmd));
}

/*
 * After publishing WQEs: does the kernel want the doorbell?  The fence
 * orders the caller's store-release of prod before the load of flags.
 * The kernel must set NEED_KICK, full-fence, then re-read prod; then
 * either it sees the new WQEs or we see its flag (a Dekker-style
 * handshake).
 */
bool mroce_ring_need_kick(const struct mroce_ring *ring)
{
	atomic_thread_fence(memory_order_seq_cst);
	return mroce_load_relaxed(&ring->hdr->flags) & MROCE_RING_F_NEED_KICK;
}

/*
 * post_send, and ibv_bind_mw()'s BIND_MW WQE (@bind_type1: the one WR
 * must bind a type 1 window; post_send binds type 2 windows only).
 */
int mroce_post_send_wrs(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			struct ibv_send_wr **bad_wr, bool bind_type1)
{
	struct mroce_qp *qp = to_mqp(ibqp);
	struct mroce_ring *ring = &qp->sq.ring;
	struct ibv_send_wr *dummy;
	uint32_t prod, cons, inline_len;
	unsigned int posted = 0;
	int ret = 0;

	if (!bad_wr)
		bad_wr = &dummy;
	*bad_wr = NULL;

	/* Posting before RTS is an immediate error (IBA 10.3.1). */
	switch (ibqp->state) {
	case IBV_QPS_RESET:
	case IBV_QPS_INIT:
	case IBV_QPS_RTR:
		if (wr) {
			*bad_wr = wr;
			return EINVAL;
		}
		return 0;
	default:
		break;
	}

	pthread_spin_lock(&qp->sq.lock);
	prod = mroce_load_relaxed(&ring->hdr->prod);
	for (; wr; wr = wr->next) {
		ret = mroce_check_send_wr(qp, wr, &inline_len, bind_type1);
		if (ret)
			break;
		cons = mroce_load_acquire(&ring->hdr->cons);
		if (prod - cons >= ring->num_slots) {
			ret = ENOMEM;
			break;
		}
		mroce_write_send_wqe(mroce_ring_slot(ring, prod), wr,
				     qp->sq_sig_all,
				     ibqp->qp_type == IBV_QPT_UD, inline_len);
		/* Publish each WQE: the kernel may already be working. */
		mroce_store_release(&ring->hdr->prod, ++prod);
		posted++;
	}
	pthread_spin_unlock(&qp->sq.lock);
	if (ret)
		*bad_wr = wr;

	/* A failing doorbell leaves the WQEs posted: *bad_wr stays NULL. */
	if (posted && mroce_ring_need_kick(ring)) {
		int err = mroce_sq_doorbell(ibqp);

		if (!ret)
			ret = err;
	}
	return ret;
}

int mroce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad_wr)
{
	return mroce_post_send_wrs(ibqp, wr, bad_wr, false);
}

/* ------------------------------------------------------------------------
 * Receive queue.
 */

/*
 * Write the receive WRs of @wr into @wq's ring, each published on its own
 * (the kernel may take it at once); stops at the first that does not fit
 * or is wrong, and returns 0, EINVAL or ENOMEM with *@bad_wr set.  Shared
 * by a QP's RQ and an SRQ, whose rings have the same slots.
 */
int mroce_wq_post_recv(struct mroce_wq *wq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr, unsigned int *posted)
{
	struct mroce_ring *ring = &wq->ring;
	uint32_t prod, cons;
	int ret = 0;
	int i;

	*posted = 0;
	pthread_spin_lock(&wq->lock);
	prod = mroce_load_relaxed(&ring->hdr->prod);
	for (; wr; wr = wr->next) {
		struct mroce_recv_wqe wqe = {};
		struct mroce_sge *sge;
		uint8_t *slot;

		/* Zero SGEs is fine: a receive that takes no payload. */
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > wq->max_sge) {
			ret = EINVAL;
			break;
		}
		cons = mroce_load_acquire(&ring->hdr->cons);
		if (prod - cons >= ring->num_slots) {
			ret = ENOMEM;
			break;
		}

		slot = mroce_ring_slot(ring, prod);
		wqe.wr_id = wr->wr_id;
		wqe.num_sge = wr->num_sge;
		memcpy(slot, &wqe, sizeof(wqe));
		sge = (struct mroce_sge *)(slot + MROCE_RECV_WQE_HDR);
		for (i = 0; i < wr->num_sge; i++)
			sge[i] = (struct mroce_sge){
				.addr = wr->sg_list[i].addr,
				.length = wr->sg_list[i].length,
				.lkey = wr->sg_list[i].lkey,
			};

		mroce_store_release(&ring->hdr->prod, ++prod);
		(*posted)++;
	}
	pthread_spin_unlock(&wq->lock);
	if (ret)
		*bad_wr = wr;
	return ret;
}

int mroce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr)
{
	struct mroce_qp *qp = to_mqp(ibqp);
	struct ibv_recv_wr *dummy;
	unsigned int posted;
	int ret;

	if (!bad_wr)
		bad_wr = &dummy;
	*bad_wr = NULL;
	if (!wr)
		return 0;

	/*
	 * Receives may be posted from INIT on, not in RESET (C10-97.2.1);
	 * a QP with an SRQ has no RQ (its receives go to the SRQ).
	 */
	if (ibqp->state == IBV_QPS_RESET || !qp->rq.ring.map) {
		*bad_wr = wr;
		return EINVAL;
	}

	ret = mroce_wq_post_recv(&qp->rq, wr, bad_wr, &posted);

	/*
	 * Normally no system call: the kernel takes receive WQEs from the
	 * ring when a message arrives.  In the error state it sets NEED_KICK
	 * on the RQ and the doorbell makes it flush what we just posted.
	 */
	if (posted && mroce_ring_need_kick(&qp->rq.ring)) {
		int err = mroce_rq_doorbell(ibqp);

		if (!ret)
			ret = err;
	}
	return ret;
}
