// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce_kfrmr - fast-registration MRs as a kernel ULP uses them.
 *
 *   insmod mroce_kfrmr.ko dev=mroce1 gid_index=1
 *
 * NVMe-oF, NFS/RDMA, iSER and SRP register their I/O buffers with
 * ib_alloc_mr(IB_MR_TYPE_MEM_REG), ib_map_mr_sg() and an IB_WR_REG_MR,
 * hand the rkey to the peer, and take it back with IB_WR_LOCAL_INV or
 * let the peer's SEND_WITH_INV do it.  Two RC QPs of @dev, connected to
 * each other, play both sides: A registers four separate pages (at an
 * offset into the first, so the region is not page aligned), B reads,
 * writes and adds into them through the rkey, and the module checks what
 * the IB spec says of every step, refusals included: no access before a
 * registration, after an invalidation, with the key of an earlier
 * registration, or past the end; no registration over a valid one; a
 * SEND_WITH_INV reports the key it invalidated, and one of a key that
 * is not valid fails the connection.  First, the transports the device
 * does not offer (UC, XRC, raw packet) are refused with EOPNOTSUPP.
 *
 * Everything happens in module_init, with polled CQs: insmod succeeds
 * when every check passed and fails with -EIO otherwise (-ENODEV for no
 * such device).  Each check logs one line, and the last line counts them.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

static char *kf_dev;
module_param_named(dev, kf_dev, charp, 0444);
MODULE_PARM_DESC(dev, "ib device to run on (e.g. mroce1)");

static int kf_gid_index;
module_param_named(gid_index, kf_gid_index, int, 0444);
MODULE_PARM_DESC(gid_index, "GID table index both QPs use (default 0)");

#define KF_PORT		1
#define KF_PAGES	4
#define KF_OFFSET	100		/* of the region in its first page */
#define KF_LEN		(KF_PAGES * PAGE_SIZE - KF_OFFSET)
#define KF_XFER		(3 * PAGE_SIZE)	/* spans every page */
#define KF_BUF		(2 * KF_XFER)	/* B's: source, then READ sink */
#define KF_POLL_MS	5000
#define KF_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC)

struct kf_side {
	const char *name;
	struct ib_cq *cq;
	struct ib_qp *qp;
};

struct kf {
	struct ib_device *ibdev;
	struct ib_pd *pd;
	union ib_gid gid;
	struct kf_side a, b;
	/* A's region: KF_PAGES pages that are not contiguous */
	struct page *page[KF_PAGES];
	struct sg_table sgt;
	int nents;
	struct ib_mr *mr;
	u8 key;
	/* B's buffer and A's receive buffer, through local_dma_lkey */
	u8 *bbuf, *abuf;
	u64 bdma, adma;
	unsigned int passed, failed;
};

static void kf_check(struct kf *kf, bool ok, const char *what)
{
	if (ok) {
		kf->passed++;
		pr_info("ok: %s\n", what);
	} else {
		kf->failed++;
		pr_err("FAIL: %s\n", what);
	}
}

/* Byte @off of A's region, through the kernel mapping of its pages. */
static u8 *kf_byte(struct kf *kf, size_t off)
{
	off += KF_OFFSET;
	return (u8 *)page_address(kf->page[off / PAGE_SIZE]) + off % PAGE_SIZE;
}

static u8 kf_pattern(size_t i, u8 seed)
{
	return (u8)(i * 7 + seed + (i >> 8));
}

/* One completion of @s, or status -1 (as a wc) after KF_POLL_MS. */
static struct ib_wc kf_poll(struct kf_side *s)
{
	unsigned long end = jiffies + msecs_to_jiffies(KF_POLL_MS);
	struct ib_wc wc = {};

	while (time_before(jiffies, end)) {
		if (ib_poll_cq(s->cq, 1, &wc) > 0)
			return wc;
		usleep_range(50, 200);
	}
	pr_err("%s: no completion within %u ms\n", s->name, KF_POLL_MS);
	wc.status = (enum ib_wc_status)-1;
	return wc;
}

static int kf_post(struct kf_side *s, const struct ib_send_wr *wr)
{
	int err = ib_post_send(s->qp, wr, NULL);

	if (err)
		pr_err("%s: ib_post_send opcode %d: %d\n", s->name, wr->opcode,
		       err);
	return err;
}

/* Post @wr on @s and return its completion's status (-1: none). */
static int kf_exec(struct kf_side *s, struct ib_send_wr *wr,
		   enum ib_wc_opcode *op)
{
	struct ib_wc wc;

	wr->send_flags |= IB_SEND_SIGNALED;
	if (kf_post(s, wr))
		return -1;
	wc = kf_poll(s);
	if (op)
		*op = wc.opcode;
	return wc.status;
}

static int kf_post_recv(struct kf *kf)
{
	struct ib_sge sge = {
		.addr = kf->adma, .length = PAGE_SIZE,
		.lkey = kf->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1 };

	return ib_post_recv(kf->a.qp, &wr, NULL);
}

/* A: IB_WR_REG_MR of the mapped pages with the next key byte. */
static int kf_reg(struct kf *kf, int access, enum ib_wc_opcode *op)
{
	struct ib_reg_wr wr = {
		.wr = { .opcode = IB_WR_REG_MR, .wr_id = 1 },
		.mr = kf->mr,
		.access = access,
	};

	ib_update_fast_reg_key(kf->mr, ++kf->key);
	wr.key = kf->mr->rkey;
	return kf_exec(&kf->a, &wr.wr, op);
}

static int kf_local_inv(struct kf *kf, u32 key, enum ib_wc_opcode *op)
{
	struct ib_send_wr wr = {
		.opcode = IB_WR_LOCAL_INV, .wr_id = 2,
		.ex.invalidate_rkey = key,
	};

	return kf_exec(&kf->a, &wr, op);
}

/* B: an RDMA READ or WRITE of @len bytes at @off of A's region, @rkey. */
static int kf_rdma(struct kf *kf, enum ib_wr_opcode opcode, size_t off,
		   u32 len, u32 rkey, size_t boff)
{
	struct ib_sge sge = {
		.addr = kf->bdma + boff, .length = len,
		.lkey = kf->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = { .opcode = opcode, .wr_id = 3, .sg_list = &sge,
			.num_sge = 1 },
		.remote_addr = kf->mr->iova + off,
		.rkey = rkey,
	};

	return kf_exec(&kf->b, &wr.wr, NULL);
}

/* RESET -> INIT -> RTR -> RTS, connected to QP @dqpn. */
static int kf_connect(struct kf *kf, struct kf_side *s, u32 dqpn)
{
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_INIT,
		.port_num = KF_PORT,
		.qp_access_flags = IB_ACCESS_REMOTE_WRITE |
				   IB_ACCESS_REMOTE_READ |
				   IB_ACCESS_REMOTE_ATOMIC,
	};
	int err;

	err = ib_modify_qp(s->qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (err)
		goto out;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = IB_MTU_1024;
	a.dest_qp_num = dqpn;
	a.rq_psn = 200;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.type = rdma_ah_find_type(kf->ibdev, KF_PORT);
	rdma_ah_set_port_num(&a.ah_attr, KF_PORT);
	rdma_ah_set_grh(&a.ah_attr, &kf->gid, 0, kf_gid_index, 64, 0);
	err = ib_modify_qp(s->qp, &a, IB_QP_STATE | IB_QP_AV |
			   IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (err)
		goto out;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.sq_psn = 200;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	err = ib_modify_qp(s->qp, &a, IB_QP_STATE | IB_QP_SQ_PSN |
			   IB_QP_TIMEOUT | IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
			   IB_QP_MAX_QP_RD_ATOMIC);
out:
	if (err)
		pr_err("%s: connect: %d\n", s->name, err);
	return err;
}

/*
 * After a fatal error: both QPs to ERR, their flushed completions
 * drained, then RESET and connected again, A's receive posted.
 */
static int kf_reconnect(struct kf *kf)
{
	struct ib_qp_attr a = { .qp_state = IB_QPS_ERR };
	struct kf_side *s[2] = { &kf->a, &kf->b };
	struct ib_wc wc;
	int i, err;

	for (i = 0; i < 2; i++)
		ib_modify_qp(s[i]->qp, &a, IB_QP_STATE);
	msleep(20);
	for (i = 0; i < 2; i++)
		while (ib_poll_cq(s[i]->cq, 1, &wc) > 0)
			;
	a.qp_state = IB_QPS_RESET;
	for (i = 0; i < 2; i++) {
		err = ib_modify_qp(s[i]->qp, &a, IB_QP_STATE);
		if (err)
			return err;
	}
	err = kf_connect(kf, &kf->a, kf->b.qp->qp_num);
	if (!err)
		err = kf_connect(kf, &kf->b, kf->a.qp->qp_num);
	if (!err)
		err = kf_post_recv(kf);
	return err;
}

static int kf_map(struct kf *kf, struct ib_mr *mr)
{
	unsigned int off = KF_OFFSET;

	return ib_map_mr_sg(mr, kf->sgt.sgl, kf->nents, &off, PAGE_SIZE);
}

/* B writes @seed's pattern over [@off, @off + @len) of A's region. */
static int kf_write(struct kf *kf, size_t off, u32 len, u32 rkey, u8 seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		kf->bbuf[i] = kf_pattern(i, seed);
	return kf_rdma(kf, IB_WR_RDMA_WRITE, off, len, rkey, 0);
}

/* Does A's region hold @seed's pattern at [@off, @off + @len)? */
static bool kf_holds(struct kf *kf, size_t off, u32 len, u8 seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (*kf_byte(kf, off + i) != kf_pattern(i, seed))
			return false;
	return true;
}

/* Is [@off, @off + @len) of A's region the same as @p? */
static bool kf_same(struct kf *kf, size_t off, const u8 *p, u32 len)
{
	u32 i;

	for (i = 0; i < len; i++)
		if (*kf_byte(kf, off + i) != p[i])
			return false;
	return true;
}

static void kf_fill(struct kf *kf, u8 v)
{
	int i;

	for (i = 0; i < KF_PAGES; i++)
		memset(page_address(kf->page[i]), v, PAGE_SIZE);
}

static bool kf_all(struct kf *kf, u8 v)
{
	size_t i;

	for (i = 0; i < KF_LEN; i++)
		if (*kf_byte(kf, i) != v)
			return false;
	return true;
}

/*
 * UC and XRC are not offered (Documentation/mroce.rst, "Verbs not
 * offered"): create_qp refuses them with EOPNOTSUPP, the device has no
 * XRC domain, and its capabilities say so.
 */
static void kf_refused(struct kf *kf)
{
	static const struct {
		enum ib_qp_type type;
		const char *what;
	} t[] = {
		{ IB_QPT_UC, "create_qp(UC) is refused with EOPNOTSUPP" },
		{ IB_QPT_XRC_INI, "create_qp(XRC_INI) is refused with EOPNOTSUPP" },
		{ IB_QPT_RAW_PACKET, "create_qp(RAW_PACKET) is refused with EOPNOTSUPP" },
	};
	struct ib_qp_init_attr qa = {
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.send_cq = kf->a.cq, .recv_cq = kf->a.cq,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
	};
	struct ib_xrcd *xrcd;
	struct ib_qp *qp;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		qa.qp_type = t[i].type;
		qp = ib_create_qp(kf->pd, &qa);
		kf_check(kf, PTR_ERR_OR_ZERO(qp) == -EOPNOTSUPP, t[i].what);
		if (!IS_ERR(qp))
			ib_destroy_qp(qp);
	}
	xrcd = ib_alloc_xrcd_user(kf->ibdev, NULL, NULL);
	kf_check(kf, PTR_ERR_OR_ZERO(xrcd) == -EOPNOTSUPP,
		 "alloc_xrcd is refused with EOPNOTSUPP");
	if (!IS_ERR(xrcd))
		ib_dealloc_xrcd_user(xrcd, NULL);
	kf_check(kf, !(kf->ibdev->attrs.device_cap_flags & IB_DEVICE_XRC),
		 "the device claims no XRC");
}

static void kf_run(struct kf *kf)
{
	enum ib_wc_opcode op = 0;
	struct ib_mr *mr2;
	struct ib_wc wc;
	u32 old_rkey;
	int st, n;

	kf_refused(kf);
	/* allocation and mapping */
	mr2 = ib_alloc_mr(kf->pd, IB_MR_TYPE_SG_GAPS, KF_PAGES);
	kf_check(kf, IS_ERR(mr2), "alloc_mr(IB_MR_TYPE_SG_GAPS) is refused");
	if (!IS_ERR(mr2))
		ib_dereg_mr(mr2);
	mr2 = ib_alloc_mr(kf->pd, IB_MR_TYPE_MEM_REG,
			  kf->ibdev->attrs.max_fast_reg_page_list_len + 1);
	kf_check(kf, IS_ERR(mr2),
		 "alloc_mr beyond max_fast_reg_page_list_len is refused");
	if (!IS_ERR(mr2))
		ib_dereg_mr(mr2);
	mr2 = ib_alloc_mr(kf->pd, IB_MR_TYPE_MEM_REG, 2);
	if (!IS_ERR(mr2)) {
		n = kf_map(kf, mr2);
		kf_check(kf, n >= 0 && n < kf->nents,
			 "map_mr_sg maps no more pages than max_num_sg");
		ib_dereg_mr(mr2);
	} else {
		kf_check(kf, false, "alloc_mr(MEM_REG, 2)");
	}
	kf->mr = ib_alloc_mr(kf->pd, IB_MR_TYPE_MEM_REG, KF_PAGES);
	if (IS_ERR(kf->mr)) {
		kf_check(kf, false, "alloc_mr(MEM_REG, 4)");
		kf->mr = NULL;
		return;
	}
	kf->key = kf->mr->rkey & 0xff;
	n = kf_map(kf, kf->mr);
	kf_check(kf, n == kf->nents && kf->mr->length == KF_LEN &&
		 kf->mr->iova == sg_dma_address(kf->sgt.sgl) + KF_OFFSET,
		 "map_mr_sg maps 4 separate pages from an offset");

	/* nothing before the registration */
	kf_fill(kf, 0x11);
	st = kf_write(kf, 0, 64, kf->mr->rkey, 1);
	kf_check(kf, st == IB_WC_REM_ACCESS_ERR && kf_all(kf, 0x11),
		 "a WRITE through the rkey of an unregistered MR fails (remote access error), nothing written");
	if (kf_reconnect(kf))
		return;

	st = kf_reg(kf, KF_ACCESS, &op);
	kf_check(kf, st == IB_WC_SUCCESS && op == IB_WC_REG_MR,
		 "IB_WR_REG_MR completes (IB_WC_REG_MR)");

	/* remote access through the region, across its pages */
	st = kf_write(kf, 50, KF_XFER, kf->mr->rkey, 2);
	kf_check(kf, st == IB_WC_SUCCESS && kf_holds(kf, 50, KF_XFER, 2) &&
		 *kf_byte(kf, 49) == 0x11 &&
		 *kf_byte(kf, 50 + KF_XFER) == 0x11,
		 "an RDMA WRITE of 3 pages lands exactly in the registered pages");
	memset(kf->bbuf + KF_XFER, 0, KF_XFER);
	st = kf_rdma(kf, IB_WR_RDMA_READ, 50, KF_XFER, kf->mr->rkey, KF_XFER);
	kf_check(kf, st == IB_WC_SUCCESS &&
		 !memcmp(kf->bbuf + KF_XFER, kf->bbuf, KF_XFER),
		 "an RDMA READ of them returns what was written");
	{
		u64 *word = (u64 *)kf_byte(kf, 4);	/* 8-byte aligned */
		struct ib_sge sge = {
			.addr = kf->bdma, .length = 8,
			.lkey = kf->pd->local_dma_lkey,
		};
		struct ib_atomic_wr wr = {
			.wr = { .opcode = IB_WR_ATOMIC_FETCH_AND_ADD,
				.wr_id = 4, .sg_list = &sge, .num_sge = 1 },
			.remote_addr = kf->mr->iova + 4,
			.compare_add = 5,
			.rkey = kf->mr->rkey,
		};

		*word = 1000;
		st = kf_exec(&kf->b, &wr.wr, NULL);
		kf_check(kf, st == IB_WC_SUCCESS && *word == 1005 &&
			 *(u64 *)kf->bbuf == 1000,
			 "an ATOMIC FETCH_ADD through the rkey adds and returns the old value");
	}
	st = kf_write(kf, KF_LEN - 8, 16, kf->mr->rkey, 3);
	kf_check(kf, st == IB_WC_REM_ACCESS_ERR,
		 "a WRITE past the end of the region fails (remote access error)");
	if (kf_reconnect(kf))
		return;

	/* no registration over a valid one */
	st = kf_reg(kf, KF_ACCESS, NULL);
	kf_check(kf, st == IB_WC_MW_BIND_ERR,
		 "IB_WR_REG_MR of a valid MR fails (IB_WC_MW_BIND_ERR)");
	/* the key byte did not take: back to the registered one */
	ib_update_fast_reg_key(kf->mr, --kf->key);
	if (kf_reconnect(kf))
		return;

	/* the lkey as a local SGE: A sends from the region */
	{
		struct ib_sge sge = {
			.addr = kf->mr->iova + 50, .length = 256,
			.lkey = kf->mr->lkey,
		};
		struct ib_sge rsge = {
			.addr = kf->bdma + KF_XFER, .length = PAGE_SIZE,
			.lkey = kf->pd->local_dma_lkey,
		};
		struct ib_recv_wr rwr = { .wr_id = 8, .sg_list = &rsge,
					  .num_sge = 1 };
		struct ib_send_wr wr = { .opcode = IB_WR_SEND, .wr_id = 5,
					 .sg_list = &sge, .num_sge = 1 };

		st = ib_post_recv(kf->b.qp, &rwr, NULL);
		if (!st)
			st = kf_exec(&kf->a, &wr, NULL);
		wc = kf_poll(&kf->b);
		kf_check(kf, st == IB_WC_SUCCESS && wc.status == IB_WC_SUCCESS &&
			 wc.byte_len == 256 && kf_same(kf, 50, kf->bbuf + KF_XFER, 256),
			 "a SEND from the region's lkey carries its bytes");
	}

	/* LOCAL_INV: no access afterwards, remote or local */
	old_rkey = kf->mr->rkey;
	st = kf_local_inv(kf, kf->mr->rkey, &op);
	kf_check(kf, st == IB_WC_SUCCESS && op == IB_WC_LOCAL_INV,
		 "IB_WR_LOCAL_INV completes (IB_WC_LOCAL_INV)");
	kf_fill(kf, 0x22);
	st = kf_write(kf, 0, 64, old_rkey, 4);
	kf_check(kf, st == IB_WC_REM_ACCESS_ERR && kf_all(kf, 0x22),
		 "a WRITE after LOCAL_INV fails (remote access error), nothing written");
	if (kf_reconnect(kf))
		return;
	{
		struct ib_sge sge = {
			.addr = kf->mr->iova, .length = 64,
			.lkey = kf->mr->lkey,
		};
		struct ib_send_wr wr = { .opcode = IB_WR_SEND, .wr_id = 6,
					 .sg_list = &sge, .num_sge = 1 };

		st = kf_exec(&kf->a, &wr, NULL);
		kf_check(kf, st == IB_WC_LOC_PROT_ERR,
			 "a SEND from the lkey after LOCAL_INV fails (local protection error)");
	}
	if (kf_reconnect(kf))
		return;
	st = kf_local_inv(kf, kf->mr->rkey ^ 0x100, NULL);
	kf_check(kf, st == IB_WC_LOC_PROT_ERR,
		 "LOCAL_INV of a key that names no MR fails");
	if (kf_reconnect(kf))
		return;

	/* a new registration: a new key byte, the old key is refused */
	kf_map(kf, kf->mr);
	st = kf_reg(kf, KF_ACCESS, NULL);
	kf_check(kf, st == IB_WC_SUCCESS && kf->mr->rkey != old_rkey,
		 "IB_WR_REG_MR again, with a new key byte");
	st = kf_write(kf, 0, 64, old_rkey, 5);
	kf_check(kf, st == IB_WC_REM_ACCESS_ERR && kf_all(kf, 0x22),
		 "the rkey of the earlier registration is refused");
	if (kf_reconnect(kf))
		return;
	st = kf_write(kf, 0, 64, kf->mr->rkey, 6);
	kf_check(kf, st == IB_WC_SUCCESS && kf_holds(kf, 0, 64, 6),
		 "the new rkey works");

	/* SEND_WITH_INV: the peer invalidates, and the completion says so */
	{
		struct ib_sge sge = {
			.addr = kf->bdma, .length = 32,
			.lkey = kf->pd->local_dma_lkey,
		};
		struct ib_send_wr wr = {
			.opcode = IB_WR_SEND_WITH_INV, .wr_id = 9,
			.sg_list = &sge, .num_sge = 1,
			.ex.invalidate_rkey = kf->mr->rkey,
		};

		st = kf_exec(&kf->b, &wr, NULL);
		wc = kf_poll(&kf->a);
		kf_check(kf, st == IB_WC_SUCCESS && wc.status == IB_WC_SUCCESS &&
			 wc.opcode == IB_WC_RECV &&
			 (wc.wc_flags & IB_WC_WITH_INVALIDATE) &&
			 wc.ex.invalidate_rkey == kf->mr->rkey,
			 "SEND_WITH_INV completes with IB_WC_WITH_INVALIDATE and the rkey");
		kf_fill(kf, 0x33);
		st = kf_write(kf, 0, 64, kf->mr->rkey, 7);
		kf_check(kf, st == IB_WC_REM_ACCESS_ERR && kf_all(kf, 0x33),
			 "a WRITE after the remote invalidation fails, nothing written");
		if (kf_reconnect(kf))
			return;
		/* the region is FREE now: its rkey is no valid one to invalidate */
		st = kf_exec(&kf->b, &wr, NULL);
		kf_check(kf, st == IB_WC_REM_INV_REQ_ERR,
			 "SEND_WITH_INV of an rkey that is not valid fails the connection (remote invalid request)");
		if (kf_reconnect(kf))
			return;
	}
	kf_map(kf, kf->mr);
	st = kf_reg(kf, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ, NULL);
	kf_check(kf, st == IB_WC_SUCCESS,
		 "IB_WR_REG_MR after the remote invalidation, read-only for the peer");
	st = kf_write(kf, 0, 64, kf->mr->rkey, 8);
	kf_check(kf, st == IB_WC_REM_ACCESS_ERR && kf_all(kf, 0x33),
		 "a WRITE into a region registered without remote write fails");
	if (kf_reconnect(kf))
		return;
	st = kf_rdma(kf, IB_WR_RDMA_READ, 0, 64, kf->mr->rkey, 0);
	kf_check(kf, st == IB_WC_SUCCESS && kf->bbuf[0] == 0x33 &&
		 kf->bbuf[63] == 0x33, "... and a READ of it works");
}

static int kf_side_create(struct kf *kf, struct kf_side *s, const char *name)
{
	struct ib_qp_init_attr qa = {
		.cap = { .max_send_wr = 16, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};

	s->name = name;
	s->cq = ib_alloc_cq(kf->ibdev, NULL, 64, 0, IB_POLL_DIRECT);
	if (IS_ERR(s->cq)) {
		pr_err("%s: ib_alloc_cq: %ld\n", name, PTR_ERR(s->cq));
		return PTR_ERR(s->cq);
	}
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	s->qp = ib_create_qp(kf->pd, &qa);
	if (IS_ERR(s->qp)) {
		pr_err("%s: ib_create_qp: %ld\n", name, PTR_ERR(s->qp));
		ib_free_cq(s->cq);
		s->cq = NULL;
		return PTR_ERR(s->qp);
	}
	return 0;
}

static void kf_side_destroy(struct kf_side *s)
{
	if (!s->cq)
		return;
	ib_destroy_qp(s->qp);
	ib_free_cq(s->cq);
}

static int kf_buffers(struct kf *kf)
{
	struct scatterlist *sg;
	int i, err;

	err = sg_alloc_table(&kf->sgt, KF_PAGES, GFP_KERNEL);
	if (err)
		return err;
	/* four pages allocated one by one: one sg entry each */
	for_each_sg(kf->sgt.sgl, sg, KF_PAGES, i) {
		kf->page[i] = alloc_page(GFP_KERNEL);
		if (!kf->page[i])
			return -ENOMEM;
		sg_set_page(sg, kf->page[i], PAGE_SIZE, 0);
	}
	kf->nents = ib_dma_map_sg(kf->ibdev, kf->sgt.sgl, KF_PAGES,
				  DMA_BIDIRECTIONAL);
	if (kf->nents <= 0)
		return -ENOMEM;
	kf->bbuf = kzalloc(KF_BUF, GFP_KERNEL);
	kf->abuf = kzalloc(PAGE_SIZE, GFP_KERNEL);
	if (!kf->bbuf || !kf->abuf)
		return -ENOMEM;
	kf->bdma = ib_dma_map_single(kf->ibdev, kf->bbuf, KF_BUF,
				     DMA_BIDIRECTIONAL);
	kf->adma = ib_dma_map_single(kf->ibdev, kf->abuf, PAGE_SIZE,
				     DMA_BIDIRECTIONAL);
	return 0;
}

static void kf_free_buffers(struct kf *kf)
{
	int i;

	if (kf->bdma)
		ib_dma_unmap_single(kf->ibdev, kf->bdma, KF_BUF,
				    DMA_BIDIRECTIONAL);
	if (kf->adma)
		ib_dma_unmap_single(kf->ibdev, kf->adma, PAGE_SIZE,
				    DMA_BIDIRECTIONAL);
	kfree(kf->bbuf);
	kfree(kf->abuf);
	if (kf->nents > 0)
		ib_dma_unmap_sg(kf->ibdev, kf->sgt.sgl, KF_PAGES,
				DMA_BIDIRECTIONAL);
	for (i = 0; i < KF_PAGES; i++)
		if (kf->page[i])
			__free_page(kf->page[i]);
	sg_free_table(&kf->sgt);
}

static int __init kf_init(void)
{
	struct kf *kf;
	int err;

	if (!kf_dev || !*kf_dev || kf_gid_index < 0) {
		pr_err("dev= names no ib device\n");
		return -EINVAL;
	}
	kf = kzalloc(sizeof(*kf), GFP_KERNEL);
	if (!kf)
		return -ENOMEM;
	kf->ibdev = ib_device_get_by_name(kf_dev, RDMA_DRIVER_UNKNOWN);
	if (!kf->ibdev) {
		pr_err("no ib device %s\n", kf_dev);
		err = -ENODEV;
		goto out_free;
	}
	err = rdma_query_gid(kf->ibdev, KF_PORT, kf_gid_index, &kf->gid);
	if (err)
		goto out_put;
	if (!(kf->ibdev->attrs.device_cap_flags &
	      IB_DEVICE_MEM_MGT_EXTENSIONS)) {
		pr_err("%s: no IB_DEVICE_MEM_MGT_EXTENSIONS\n", kf_dev);
		err = -EOPNOTSUPP;
		goto out_put;
	}
	kf->pd = ib_alloc_pd(kf->ibdev, 0);
	if (IS_ERR(kf->pd)) {
		err = PTR_ERR(kf->pd);
		goto out_put;
	}
	err = kf_buffers(kf);
	if (err)
		goto out_buf;
	err = kf_side_create(kf, &kf->a, "A");
	if (err)
		goto out_buf;
	err = kf_side_create(kf, &kf->b, "B");
	if (err)
		goto out_sides;
	err = kf_connect(kf, &kf->a, kf->b.qp->qp_num);
	if (!err)
		err = kf_connect(kf, &kf->b, kf->a.qp->qp_num);
	if (!err)
		err = kf_post_recv(kf);
	if (err)
		goto out_sides;

	kf_run(kf);
	if (kf->failed || !kf->passed)
		err = -EIO;
	pr_info("%s: %u of %u fast-registration checks passed\n", kf_dev,
		kf->passed, kf->passed + kf->failed);

out_sides:
	kf_side_destroy(&kf->b);
	kf_side_destroy(&kf->a);
	if (kf->mr)
		ib_dereg_mr(kf->mr);
out_buf:
	kf_free_buffers(kf);
	ib_dealloc_pd(kf->pd);
out_put:
	ib_device_put(kf->ibdev);
out_free:
	kfree(kf);
	return err;
}

static void __exit kf_exit(void)
{
}

module_init(kf_init);
module_exit(kf_exit);

MODULE_DESCRIPTION("mroce: fast-registration MRs as kernel ULPs use them");
MODULE_LICENSE("GPL");
