// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce_kulp - a kernel ULP that posts from its completion handler.
 *
 *   insmod mroce_kulp.ko dev=mroce1 gid_index=1 iters=20000
 *
 * Two RC QPs of device @dev, connected to each other through the GID at
 * @gid_index, play ping-pong: each SEND carries a sequence number, and
 * the receiver's completion handler (a raw ib_create_cq() comp_handler,
 * the old-style ULP interface) polls its CQ, checks the message, reposts
 * the receive buffer and posts the next SEND, all from inside the
 * handler, then re-arms the CQ.  A driver that calls the handler with a
 * QP lock held deadlocks on the first post.
 *
 * Everything happens in module_init: insmod succeeds when all @iters
 * SENDs completed and every completion and payload was right, and fails
 * with -ENODEV (no such device), -ETIMEDOUT (no progress within
 * @timeout seconds), -EIO (bad completion status or data) or the error
 * of the verb that failed.  The module does nothing once loaded: rmmod
 * it after.  One line in the kernel log tells the result, also when the
 * stall is a handler deadlocked inside the driver: insmod then cannot
 * return, as that handler never gives its QP back.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

static char *kulp_dev;
module_param_named(dev, kulp_dev, charp, 0444);
MODULE_PARM_DESC(dev, "ib device to run on (e.g. mroce1)");

static int kulp_gid_index;
module_param_named(gid_index, kulp_gid_index, int, 0444);
MODULE_PARM_DESC(gid_index, "GID table index both QPs use (default 0)");

static unsigned int kulp_iters = 1000;
module_param_named(iters, kulp_iters, uint, 0444);
MODULE_PARM_DESC(iters, "SENDs in the ping-pong (default 1000)");

static unsigned int kulp_size = 64;
module_param_named(size, kulp_size, uint, 0444);
MODULE_PARM_DESC(size, "bytes per SEND, 16..4096 (default 64)");

static unsigned int kulp_timeout = 30;
module_param_named(timeout, kulp_timeout, uint, 0444);
MODULE_PARM_DESC(timeout, "seconds without progress before giving up (default 30)");

#define KULP_PORT	1
#define KULP_SQ_SLOTS	16	/* one SEND in flight per side, ACKs lag */
#define KULP_RQ_SLOTS	4
#define KULP_CQE	(2 * (KULP_SQ_SLOTS + KULP_RQ_SLOTS))
#define KULP_POLL	8
#define KULP_WR_SEND	BIT_ULL(63)	/* wr_id of a SEND, else a RQ slot */
#define KULP_MAGIC	0x6b756c70	/* "kulp" */
#define KULP_MAX_ITERS	100000000

/* What a SEND carries; the rest of the message is a pattern of @seq. */
struct kulp_msg {
	__le32 magic;
	__le32 seq;
	__le64 check;
};

struct kulp_run;

struct kulp_side {
	struct kulp_run *run;
	const char *name;
	struct ib_cq *cq;		/* send and receive completions */
	struct ib_qp *qp;
	u8 *buf;			/* KULP_SQ_SLOTS sends, then receives */
	u64 dma;
	size_t len;
	u32 sent;			/* SENDs posted */
	u32 next_rx;			/* sequence number expected next */
	/*
	 * Held by the handler while it runs: stopping under it means no
	 * handler touches the QP any more.
	 */
	spinlock_t lock;
	bool stopping;
};

struct kulp_run {
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct kulp_side side[2];
	atomic_t left;			/* completions still expected */
	atomic_t err;			/* first error, 0 if none */
	atomic_t progress;		/* bumped on every completion */
	struct completion done;
};

static u64 kulp_check(u32 seq)
{
	return (u64)seq * 0x9e3779b97f4a7c15ULL ^ KULP_MAGIC;
}

static void kulp_fill(u8 *p, u32 seq)
{
	struct kulp_msg *m = (struct kulp_msg *)p;
	unsigned int i;

	m->magic = cpu_to_le32(KULP_MAGIC);
	m->seq = cpu_to_le32(seq);
	m->check = cpu_to_le64(kulp_check(seq));
	for (i = sizeof(*m); i < kulp_size; i++)
		p[i] = (u8)(seq + i);
}

/* Is @p the message with sequence number @seq? */
static bool kulp_good(const u8 *p, u32 seq)
{
	const struct kulp_msg *m = (const struct kulp_msg *)p;
	unsigned int i;

	if (le32_to_cpu(m->magic) != KULP_MAGIC ||
	    le32_to_cpu(m->seq) != seq ||
	    le64_to_cpu(m->check) != kulp_check(seq))
		return false;
	for (i = sizeof(*m); i < kulp_size; i++)
		if (p[i] != (u8)(seq + i))
			return false;
	return true;
}

static void kulp_fail(struct kulp_run *run, int err)
{
	if (atomic_cmpxchg(&run->err, 0, err) == 0)
		complete(&run->done);
}

static u64 kulp_rx_dma(struct kulp_side *s, unsigned int slot)
{
	return s->dma + (u64)(KULP_SQ_SLOTS + slot) * kulp_size;
}

static int kulp_post_recv(struct kulp_side *s, unsigned int slot)
{
	struct ib_sge sge = {
		.addr = kulp_rx_dma(s, slot),
		.length = kulp_size,
		.lkey = s->run->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_id = slot,
		.sg_list = &sge,
		.num_sge = 1,
	};

	ib_dma_sync_single_for_device(s->run->ibdev, sge.addr, kulp_size,
				      DMA_FROM_DEVICE);
	return ib_post_recv(s->qp, &wr, NULL);
}

static int kulp_post_send(struct kulp_side *s, u32 seq)
{
	unsigned int slot = s->sent % KULP_SQ_SLOTS;
	struct ib_sge sge = {
		.addr = s->dma + (u64)slot * kulp_size,
		.length = kulp_size,
		.lkey = s->run->pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.wr_id = KULP_WR_SEND | seq,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	int err;

	kulp_fill(s->buf + (size_t)slot * kulp_size, seq);
	ib_dma_sync_single_for_device(s->run->ibdev, sge.addr, kulp_size,
				      DMA_TO_DEVICE);
	err = ib_post_send(s->qp, &wr, NULL);
	if (!err)
		s->sent++;
	return err;
}

/* One completion of side @s; returns 0 or the error that ends the run. */
static int kulp_one(struct kulp_side *s, const struct ib_wc *wc)
{
	unsigned int slot = wc->wr_id;
	const struct kulp_msg *msg;
	u64 dma;
	u32 seq;
	int err;

	if (wc->status != IB_WC_SUCCESS) {
		pr_err("%s: %s completion %s (wr_id %#llx, vendor_err %u)\n",
		       s->name, wc->wr_id & KULP_WR_SEND ? "send" : "recv",
		       ib_wc_status_msg(wc->status), wc->wr_id,
		       wc->vendor_err);
		return -EIO;
	}
	if (wc->wr_id & KULP_WR_SEND) {
		if (wc->opcode != IB_WC_SEND) {
			pr_err("%s: send completion with opcode %d\n",
			       s->name, wc->opcode);
			return -EIO;
		}
		return 0;
	}

	seq = s->next_rx;
	if (wc->opcode != IB_WC_RECV || wc->byte_len != kulp_size ||
	    slot >= KULP_RQ_SLOTS) {
		pr_err("%s: recv completion opcode %d, %u bytes, wr_id %#llx (seq %u expected)\n",
		       s->name, wc->opcode, wc->byte_len, wc->wr_id, seq);
		return -EIO;
	}
	dma = kulp_rx_dma(s, slot);
	ib_dma_sync_single_for_cpu(s->run->ibdev, dma, kulp_size,
				   DMA_FROM_DEVICE);
	msg = (const struct kulp_msg *)(s->buf + (dma - s->dma));
	if (!kulp_good((const u8 *)msg, seq)) {
		pr_err("%s: message %u: wrong data (seq field %u)\n", s->name,
		       seq, le32_to_cpu(msg->seq));
		return -EIO;
	}
	s->next_rx = seq + 2;

	/* the point of this module: post again from the handler */
	err = kulp_post_recv(s, slot);
	if (err) {
		pr_err("%s: ib_post_recv from the handler: %d\n", s->name, err);
		return err;
	}
	if (seq + 1 < kulp_iters) {
		err = kulp_post_send(s, seq + 1);
		if (err) {
			pr_err("%s: ib_post_send from the handler: %d\n",
			       s->name, err);
			return err;
		}
	}
	return 0;
}

static void kulp_comp_handler(struct ib_cq *cq, void *ctx)
{
	struct kulp_side *s = ctx;
	struct kulp_run *run = s->run;
	struct ib_wc wc[KULP_POLL];
	int n, i, err;

	/*
	 * _bh, not _irq: the posts below may enable bottom halves again,
	 * which must not happen with interrupts off.
	 */
	spin_lock_bh(&s->lock);
	if (s->stopping)
		goto out;
	do {
		while ((n = ib_poll_cq(cq, KULP_POLL, wc)) > 0) {
			for (i = 0; i < n; i++) {
				err = kulp_one(s, &wc[i]);
				if (err) {
					s->stopping = true;
					kulp_fail(run, err);
					goto out;
				}
				atomic_inc(&run->progress);
				if (atomic_dec_and_test(&run->left))
					complete(&run->done);
			}
		}
	} while (ib_req_notify_cq(cq, IB_CQ_NEXT_COMP |
				  IB_CQ_REPORT_MISSED_EVENTS) > 0);
out:
	spin_unlock_bh(&s->lock);
}

static void kulp_cq_event(struct ib_event *ev, void *ctx)
{
	struct kulp_side *s = ctx;

	pr_err("%s: CQ event %s\n", s->name, ib_event_msg(ev->event));
	kulp_fail(s->run, -EIO);
}

static void kulp_qp_event(struct ib_event *ev, void *ctx)
{
	struct kulp_side *s = ctx;

	pr_err("%s: QP event %s\n", s->name, ib_event_msg(ev->event));
	kulp_fail(s->run, -EIO);
}

static int kulp_side_create(struct kulp_run *run, struct kulp_side *s,
			    const char *name)
{
	struct ib_cq_init_attr cq_attr = { .cqe = KULP_CQE };
	struct ib_qp_init_attr qp_attr = {
		.event_handler = kulp_qp_event,
		.qp_context = s,
		.cap = {
			.max_send_wr = KULP_SQ_SLOTS,
			.max_recv_wr = KULP_RQ_SLOTS,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_RC,
	};
	int err;

	s->run = run;
	s->name = name;
	spin_lock_init(&s->lock);
	s->len = (size_t)(KULP_SQ_SLOTS + KULP_RQ_SLOTS) * kulp_size;
	s->buf = kzalloc(s->len, GFP_KERNEL);
	if (!s->buf)
		return -ENOMEM;
	s->dma = ib_dma_map_single(run->ibdev, s->buf, s->len,
				   DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(run->ibdev, s->dma)) {
		err = -ENOMEM;
		goto err_buf;
	}

	s->cq = ib_create_cq(run->ibdev, kulp_comp_handler, kulp_cq_event, s,
			     &cq_attr);
	if (IS_ERR(s->cq)) {
		err = PTR_ERR(s->cq);
		pr_err("%s: ib_create_cq: %d\n", name, err);
		goto err_map;
	}
	qp_attr.send_cq = s->cq;
	qp_attr.recv_cq = s->cq;
	s->qp = ib_create_qp(run->pd, &qp_attr);
	if (IS_ERR(s->qp)) {
		err = PTR_ERR(s->qp);
		pr_err("%s: ib_create_qp: %d\n", name, err);
		goto err_cq;
	}
	return 0;

err_cq:
	ib_destroy_cq(s->cq);
err_map:
	ib_dma_unmap_single(run->ibdev, s->dma, s->len, DMA_BIDIRECTIONAL);
err_buf:
	kfree(s->buf);
	s->buf = NULL;
	return err;
}

/* No handler runs or starts touching @s's QP after this. */
static void kulp_side_stop(struct kulp_side *s)
{
	spin_lock_bh(&s->lock);
	s->stopping = true;
	spin_unlock_bh(&s->lock);
}

static void kulp_side_destroy(struct kulp_side *s)
{
	struct ib_device *ibdev = s->run->ibdev;

	if (!s->buf)
		return;
	ib_destroy_qp(s->qp);
	ib_destroy_cq(s->cq);	/* waits for a handler still scheduled */
	ib_dma_unmap_single(ibdev, s->dma, s->len, DMA_BIDIRECTIONAL);
	kfree(s->buf);
	s->buf = NULL;
}

/* RESET -> INIT -> RTR -> RTS, connected to QP @dqpn through @gid. */
static int kulp_connect(struct kulp_side *s, u32 dqpn, union ib_gid *gid)
{
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_INIT,
		.pkey_index = 0,
		.port_num = KULP_PORT,
		.qp_access_flags = 0,
	};
	int err;

	err = ib_modify_qp(s->qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (err) {
		pr_err("%s: modify to INIT: %d\n", s->name, err);
		return err;
	}

	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = IB_MTU_1024;
	a.dest_qp_num = dqpn;
	a.rq_psn = 100;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;		/* 0.64 ms */
	a.ah_attr.type = rdma_ah_find_type(s->run->ibdev, KULP_PORT);
	rdma_ah_set_port_num(&a.ah_attr, KULP_PORT);
	rdma_ah_set_grh(&a.ah_attr, gid, 0, kulp_gid_index, 64, 0);
	err = ib_modify_qp(s->qp, &a, IB_QP_STATE | IB_QP_AV |
			   IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (err) {
		pr_err("%s: modify to RTR (gid_index %d): %d\n", s->name,
		       kulp_gid_index, err);
		return err;
	}

	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.sq_psn = 100;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;		/* forever */
	a.max_rd_atomic = 1;
	err = ib_modify_qp(s->qp, &a, IB_QP_STATE | IB_QP_SQ_PSN |
			   IB_QP_TIMEOUT | IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
			   IB_QP_MAX_QP_RD_ATOMIC);
	if (err)
		pr_err("%s: modify to RTS: %d\n", s->name, err);
	return err;
}

/* Wait for the run to end; -ETIMEDOUT after timeout= s without progress. */
static int kulp_wait(struct kulp_run *run)
{
	int seen = atomic_read(&run->progress);

	for (;;) {
		if (wait_for_completion_timeout(&run->done,
						(unsigned long)kulp_timeout * HZ))
			return atomic_read(&run->err);
		if (atomic_read(&run->progress) == seen)
			return -ETIMEDOUT;
		seen = atomic_read(&run->progress);
	}
}

static int kulp_run(struct kulp_run *run, union ib_gid *gid)
{
	struct kulp_side *a = &run->side[0], *b = &run->side[1];
	unsigned int i, j;
	int err;

	err = kulp_connect(a, b->qp->qp_num, gid);
	if (!err)
		err = kulp_connect(b, a->qp->qp_num, gid);
	if (err)
		return err;

	for (i = 0; i < 2; i++) {
		run->side[i].next_rx = i ? 0 : 1;	/* A sends 0, B 1 */
		for (j = 0; j < KULP_RQ_SLOTS; j++) {
			err = kulp_post_recv(&run->side[i], j);
			if (err) {
				pr_err("%s: ib_post_recv: %d\n",
				       run->side[i].name, err);
				return err;
			}
		}
		err = ib_req_notify_cq(run->side[i].cq, IB_CQ_NEXT_COMP);
		if (err)
			return err;
	}

	/* every SEND completes twice: on the sender and on the receiver */
	atomic_set(&run->left, 2 * kulp_iters);
	spin_lock_bh(&a->lock);
	err = kulp_post_send(a, 0);
	spin_unlock_bh(&a->lock);
	if (err) {
		pr_err("%s: first ib_post_send: %d\n", a->name, err);
		return err;
	}
	return kulp_wait(run);
}

static int __init kulp_init(void)
{
	struct kulp_run *run;
	union ib_gid gid;
	ktime_t start;
	s64 us;
	int err;

	if (!kulp_dev || !*kulp_dev) {
		pr_err("dev= names no ib device\n");
		return -EINVAL;
	}
	if (!kulp_iters || kulp_iters > KULP_MAX_ITERS ||
	    kulp_size < sizeof(struct kulp_msg) || kulp_size > 4096 ||
	    !kulp_timeout || kulp_gid_index < 0) {
		pr_err("bad parameters: iters %u, size %u, timeout %u, gid_index %d\n",
		       kulp_iters, kulp_size, kulp_timeout, kulp_gid_index);
		return -EINVAL;
	}

	run = kzalloc(sizeof(*run), GFP_KERNEL);
	if (!run)
		return -ENOMEM;
	init_completion(&run->done);

	run->ibdev = ib_device_get_by_name(kulp_dev, RDMA_DRIVER_UNKNOWN);
	if (!run->ibdev) {
		pr_err("no ib device %s\n", kulp_dev);
		err = -ENODEV;
		goto out_free;
	}
	err = rdma_query_gid(run->ibdev, KULP_PORT, kulp_gid_index, &gid);
	if (err) {
		pr_err("%s: no GID at index %d: %d\n", kulp_dev,
		       kulp_gid_index, err);
		goto out_put;
	}
	run->pd = ib_alloc_pd(run->ibdev, 0);
	if (IS_ERR(run->pd)) {
		err = PTR_ERR(run->pd);
		pr_err("%s: ib_alloc_pd: %d\n", kulp_dev, err);
		goto out_put;
	}
	err = kulp_side_create(run, &run->side[0], "A");
	if (err)
		goto out_pd;
	err = kulp_side_create(run, &run->side[1], "B");
	if (err)
		goto out_sides;

	start = ktime_get();
	err = kulp_run(run, &gid);
	us = ktime_us_delta(ktime_get(), start);

	/*
	 * The verdict first: a handler stuck in the driver (a deadlock) keeps
	 * its side's lock, and stopping that side never returns.
	 */
	if (!err)
		pr_info("%s: %u of %u SENDs of %u bytes posted from the completion handler and verified, %lld.%03lld s, %lld ns per SEND\n",
			kulp_dev, kulp_iters, kulp_iters, kulp_size, us / USEC_PER_SEC,
			us % USEC_PER_SEC / USEC_PER_MSEC,
			us * NSEC_PER_USEC / kulp_iters);
	else
		pr_err("%s: FAILED after %d of %u completions: %d\n", kulp_dev,
		       atomic_read(&run->progress), 2 * kulp_iters, err);
	kulp_side_stop(&run->side[0]);
	kulp_side_stop(&run->side[1]);
out_sides:
	kulp_side_destroy(&run->side[1]);
	kulp_side_destroy(&run->side[0]);
out_pd:
	ib_dealloc_pd(run->pd);
out_put:
	ib_device_put(run->ibdev);
out_free:
	kfree(run);
	return err;
}

static void __exit kulp_exit(void)
{
}

module_init(kulp_init);
module_exit(kulp_exit);

MODULE_DESCRIPTION("mroce: a kernel ULP that posts from its completion handler");
MODULE_LICENSE("GPL");
