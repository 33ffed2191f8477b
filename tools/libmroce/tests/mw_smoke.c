// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * mw_smoke - memory windows between two mroce devices, in one process.
 *
 * usage: mw_smoke DEV_A DEV_B
 *
 * B owns the memory and the windows, A accesses them over RC (two
 * connections, A's QP n to B's QP n, both ends in one PD each; B's QPs
 * are extended QPs that may also bind with ibv_wr_bind_mw).  Checks:
 *
 *   - the device offers windows (max_mw, MEM_WINDOW, MEM_WINDOW_TYPE_2B);
 *   - type 1: ibv_bind_mw() completes IBV_WC_BIND_MW and gives a new
 *     rkey; WRITE and READ through it land in the window's bytes only;
 *     outside the window, a right it lacks, the region's own rkey (the
 *     region has no remote rights): IBV_WC_REM_ACCESS_ERR; a rebind gives
 *     a new rkey and the old one fails; a bind of length 0 unbinds;
 *     LOCAL_INV and SEND_WITH_INV of a type 1 rkey fail;
 *   - type 2: bound by IBV_WR_BIND_MW with the consumer's rkey, WRITE and
 *     ATOMIC through it; usable on the QP it was bound through only;
 *     bound again while bound: IBV_WC_MW_BIND_ERR; LOCAL_INV, after which
 *     it fails; ibv_wr_bind_mw, then SEND_WITH_INV (IBV_WC_WITH_INV, the
 *     invalidated rkey), after which it fails; SEND_WITH_INV on another
 *     QP fails;
 *   - every bind error is IBV_WC_MW_BIND_ERR: a region without MW_BIND,
 *     the window and the QP in different PDs (type 1 and 2), the region
 *     in another PD, a range outside the region, index bits of the rkey
 *     changed, remote write on a region without local write, length 0
 *     (type 2), a right that is no remote access right;
 *   - lifetime: dereg and rereg of a region with a bound window fail and
 *     the window still works, unbound they succeed; dealloc of a bound
 *     window (its rkey fails, the region is free); destroying the QP a
 *     type 2 window is bound through frees it.
 *
 * A failed access or bind leaves both QPs of the connection in ERR: they
 * are reset and connected again with new PSNs.  One line per check and
 * "N passed, N failed"; exit 0 only if all passed.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

#define BUF_SIZE (64 * 1024)
#define NCONN 2
#define TIMEOUT_MS 5000
#define QP_ACCESS (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
		   IBV_ACCESS_REMOTE_ATOMIC)

struct end {
	const char *name;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	uint8_t *buf;
	struct ibv_mr *mr;
	union ibv_gid gid;
	int gid_index;
};

struct conn {
	struct ibv_qp *qa;		/* on A */
	struct ibv_qp *qb;		/* on B: an extended QP */
	uint32_t psn_a, psn_b;
};

static struct end A = { .name = "A" }, B = { .name = "B" };
static struct conn C[NCONN];
static unsigned int seed = 1;
static uint64_t next_id = 1;

static void setup_end(struct end *e, const char *dev, int access)
{
	e->ctx = mtest_open_device(dev);
	e->gid_index = mtest_find_ipv4_gid(e->ctx, &e->gid);
	if (e->gid_index < 0)
		mtest_die("%s: no RoCE v2 IPv4 GID", dev);
	e->pd = ibv_alloc_pd(e->ctx);
	e->cq = ibv_create_cq(e->ctx, 256, NULL, NULL, 0);
	if (!e->pd || !e->cq)
		mtest_die("%s: PD, CQ: %s", dev, strerror(errno));
	e->buf = mtest_alloc(BUF_SIZE);
	e->mr = mtest_reg_mr(e->pd, e->buf, BUF_SIZE, access, e->name);
}

static struct ibv_qp *create_qp_b(struct ibv_pd *pd)
{
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = B.cq, .recv_cq = B.cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND |
				  IBV_QP_EX_WITH_BIND_MW |
				  IBV_QP_EX_WITH_LOCAL_INV,
	};

	return ibv_create_qp_ex(B.ctx, &ia);
}

static struct mtest_path path_to(const struct end *e, const struct end *peer,
				 uint32_t dest_qpn, uint32_t my_psn,
				 uint32_t peer_psn)
{
	return (struct mtest_path){
		.dest_qpn = dest_qpn, .rq_psn = peer_psn, .sq_psn = my_psn,
		.dgid = peer->gid, .sgid_index = (uint8_t)e->gid_index,
		.port = 1, .mtu = IBV_MTU_1024, .rd_atomic = 4, .timeout = 14,
		.retry_cnt = 7,
	};
}

/* Both QPs of @c to RESET, then connected again with new PSNs. */
static void reconnect(struct conn *c)
{
	struct mtest_path pa, pb;

	c->psn_a = mtest_new_psn(&seed, c->psn_a);
	c->psn_b = mtest_new_psn(&seed, c->psn_b);
	mtest_qp_reset_init(c->qa, 1, QP_ACCESS);
	mtest_qp_reset_init(c->qb, 1, QP_ACCESS);
	pa = path_to(&A, &B, c->qb->qp_num, c->psn_a, c->psn_b);
	pb = path_to(&B, &A, c->qa->qp_num, c->psn_b, c->psn_a);
	mtest_qp_rtr_rts(c->qa, &pa);
	mtest_qp_rtr_rts(c->qb, &pb);
	mtest_drain_cq(A.cq);
	mtest_drain_cq(B.cq);
}

static void conn_create(struct conn *c)
{
	struct ibv_qp_cap cap = { .max_send_wr = 16, .max_recv_wr = 16,
				  .max_send_sge = 1, .max_recv_sge = 1 };

	c->qa = mtest_create_rc_qp(A.pd, A.cq, A.cq, &cap);
	c->qb = create_qp_b(B.pd);
	if (!c->qa || !c->qb)
		mtest_die("create QPs: %s", strerror(errno));
	reconnect(c);
}

/*
 * The completion of @id on @cq (others, such as flushes of a QP that
 * failed earlier, are skipped): its status, or -1 on timeout.
 */
static int wait_id(struct ibv_cq *cq, uint64_t id, struct ibv_wc *out)
{
	double end = mtest_now() + TIMEOUT_MS / 1000.0;
	struct ibv_wc wc;

	while (mtest_now() < end) {
		int n = ibv_poll_cq(cq, 1, &wc);

		if (n < 0)
			mtest_die("poll_cq: %d", n);
		if (!n) {
			mtest_sleep_us(100);
			continue;
		}
		if (wc.wr_id != id)
			continue;
		if (out)
			*out = wc;
		return wc.status;
	}
	mtest_say("no completion of wr_id %" PRIu64, id);
	return -1;
}

static const char *st(int status)
{
	return status < 0 ? "timeout" : ibv_wc_status_str(status);
}

/* ibv_bind_mw() of type 1 window @mw through @c: the completion's status. */
static int bind1(struct conn *c, struct ibv_mw *mw, struct ibv_mr *mr,
		 void *addr, uint64_t len, unsigned int access)
{
	struct ibv_mw_bind b = {
		.wr_id = next_id++, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = mr, .addr = (uintptr_t)addr,
			       .length = len, .mw_access_flags = access },
	};
	struct ibv_wc wc;
	int ret, s;

	ret = ibv_bind_mw(c->qb, mw, &b);
	if (ret) {
		mtest_say("ibv_bind_mw: %s", strerror(ret));
		return -2;
	}
	s = wait_id(B.cq, b.wr_id, &wc);
	if (s == IBV_WC_SUCCESS && wc.opcode != IBV_WC_BIND_MW)
		mtest_say("bind completion opcode %d", wc.opcode);
	return s;
}

/* IBV_WR_BIND_MW of type 2 window @mw with @rkey through @c. */
static int bind2(struct conn *c, struct ibv_mw *mw, uint32_t rkey,
		 struct ibv_mr *mr, void *addr, uint64_t len,
		 unsigned int access)
{
	struct ibv_send_wr wr = {
		.wr_id = next_id++, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_mw = { .mw = mw, .rkey = rkey, .bind_info = {
			.mr = mr, .addr = (uintptr_t)addr, .length = len,
			.mw_access_flags = access } },
	};
	int ret = mtest_post_wr(c->qb, &wr);

	if (ret) {
		mtest_say("post BIND_MW: %s", strerror(ret));
		return -2;
	}
	return wait_id(B.cq, wr.wr_id, NULL);
}

/* The same through the extended API (ibv_wr_bind_mw). */
static int bind2_ex(struct conn *c, struct ibv_mw *mw, uint32_t rkey,
		    struct ibv_mr *mr, void *addr, uint64_t len,
		    unsigned int access)
{
	struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(c->qb);
	struct ibv_mw_bind_info info = {
		.mr = mr, .addr = (uintptr_t)addr, .length = len,
		.mw_access_flags = access,
	};
	uint64_t id = next_id++;
	int ret;

	ibv_wr_start(qx);
	qx->wr_id = id;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(qx, mw, rkey, &info);
	ret = ibv_wr_complete(qx);
	if (ret) {
		mtest_say("ibv_wr_bind_mw: %s", strerror(ret));
		return -2;
	}
	return wait_id(B.cq, id, NULL);
}

/* LOCAL_INV of @rkey on B's QP of @c (the extended API if @ex). */
static int local_inv(struct conn *c, uint32_t rkey, bool ex,
		     struct ibv_wc *wc)
{
	struct ibv_send_wr wr = {
		.wr_id = next_id++, .opcode = IBV_WR_LOCAL_INV,
		.send_flags = IBV_SEND_SIGNALED, .invalidate_rkey = rkey,
	};
	int ret;

	if (ex) {
		struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(c->qb);

		ibv_wr_start(qx);
		qx->wr_id = wr.wr_id;
		qx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_local_inv(qx, rkey);
		ret = ibv_wr_complete(qx);
	} else {
		ret = mtest_post_wr(c->qb, &wr);
	}
	if (ret) {
		mtest_say("LOCAL_INV: %s", strerror(ret));
		return -2;
	}
	return wait_id(B.cq, wr.wr_id, wc);
}

/* A's @op of @len bytes at A.buf + @loff to/from @raddr under @rkey. */
static int rdma(struct conn *c, enum ibv_wr_opcode op, uint32_t loff,
		uint32_t len, void *raddr, uint32_t rkey)
{
	uint64_t id = next_id++;
	int ret;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		struct ibv_sge sge = { (uintptr_t)A.buf + loff, 8, A.mr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = id, .opcode = op, .sg_list = &sge,
			.num_sge = 1, .send_flags = IBV_SEND_SIGNALED,
			.wr.atomic = { .remote_addr = (uintptr_t)raddr,
				       .compare_add = 5, .rkey = rkey },
		};

		ret = mtest_post_wr(c->qa, &wr);
	} else {
		ret = mtest_post_send(c->qa, id, op, A.buf + loff, len,
				      A.mr->lkey, (uintptr_t)raddr, rkey, 0);
	}
	if (ret) {
		mtest_say("post: %s", strerror(ret));
		return -2;
	}
	return wait_id(A.cq, id, NULL);
}

/* An access that must fail with a remote access error; reconnects. */
static void rdma_fails(struct conn *c, enum ibv_wr_opcode op, uint32_t len,
		       void *raddr, uint32_t rkey, const char *what)
{
	int s = rdma(c, op, 0, len, raddr, rkey);

	mtest_check(s == IBV_WC_REM_ACCESS_ERR, "%s: REM_ACCESS_ERR (%s)",
		    what, st(s));
	reconnect(c);
}

/* A bind that must fail with IBV_WC_MW_BIND_ERR; reconnects. */
static void bind_fails(struct conn *c, int s, const char *what)
{
	mtest_check(s == IBV_WC_MW_BIND_ERR, "bind error: %s: MW_BIND_ERR (%s)",
		    what, st(s));
	reconnect(c);
}

static void fill(uint8_t *p, size_t n, unsigned int v)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(v + i * 7);
}

static void test_caps(void)
{
	struct ibv_device_attr da;

	printf("# device attributes\n");
	if (!mtest_check(!ibv_query_device(B.ctx, &da), "query_device"))
		return;
	mtest_check(da.max_mw > 0, "max_mw %d", da.max_mw);
	mtest_check(da.device_cap_flags & IBV_DEVICE_MEM_WINDOW,
		    "IBV_DEVICE_MEM_WINDOW");
	mtest_check(da.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B,
		    "IBV_DEVICE_MEM_WINDOW_TYPE_2B");
}

/* SEND_WITH_INV of @rkey from A on @c; B's receive completion in @wc. */
static int send_inv(struct conn *c, uint32_t rkey, struct ibv_wc *wc)
{
	struct ibv_sge sge = { (uintptr_t)A.buf, 16, A.mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = next_id++, .opcode = IBV_WR_SEND_WITH_INV,
		.sg_list = &sge, .num_sge = 1,
		.send_flags = IBV_SEND_SIGNALED, .invalidate_rkey = rkey,
	};
	uint64_t rid = next_id++;
	int s;

	if (mtest_post_recv(c->qb, rid, B.buf + 60000, 64, B.mr->lkey) ||
	    mtest_post_wr(c->qa, &wr))
		return -2;
	s = wait_id(A.cq, wr.wr_id, NULL);
	if (s != IBV_WC_SUCCESS)
		return s;
	return wait_id(B.cq, rid, wc);
}

static void test_type1(struct ibv_mr *mr)
{
	uint8_t *win = B.buf + 4096, *win2 = B.buf + 8192;
	struct conn *c = &C[0];
	uint32_t rk0, rk1, rk2;
	struct ibv_mw *mw;
	struct ibv_wc wc;
	int s;

	printf("# type 1\n");
	mw = ibv_alloc_mw(B.pd, IBV_MW_TYPE_1);
	if (!mtest_check(mw, "alloc_mw type 1: %s", mw ? "ok" : strerror(errno)))
		return;
	rk0 = mw->rkey;
	mtest_check(rk0 != mr->rkey && (rk0 >> 8) != (mr->rkey >> 8),
		    "the window's rkey %#x is not the region's %#x", rk0,
		    mr->rkey);
	s = bind1(c, mw, mr, win, 4096, IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_READ);
	rk1 = mw->rkey;
	mtest_check(s == IBV_WC_SUCCESS && rk1 != rk0 &&
		    (rk1 >> 8) == (rk0 >> 8),
		    "ibv_bind_mw [4096, 8192) rw: %s, rkey %#x -> %#x", st(s),
		    rk0, rk1);

	memset(B.buf, 0, BUF_SIZE);
	fill(A.buf, 256, 0x11);
	s = rdma(c, IBV_WR_RDMA_WRITE, 0, 256, win + 100, rk1);
	mtest_check(s == IBV_WC_SUCCESS && !memcmp(win + 100, A.buf, 256) &&
		    !win[99] && !win[356],
		    "WRITE 256 bytes through the window lands there only: %s",
		    st(s));
	fill(win + 1000, 300, 0x22);
	memset(A.buf + 4096, 0, 300);
	s = rdma(c, IBV_WR_RDMA_READ, 4096, 300, win + 1000, rk1);
	mtest_check(s == IBV_WC_SUCCESS &&
		    !memcmp(A.buf + 4096, win + 1000, 300),
		    "READ 300 bytes through the window: %s", st(s));
	s = rdma(c, IBV_WR_RDMA_READ, 0, 4096, win, rk1);
	mtest_check(s == IBV_WC_SUCCESS, "READ the whole window: %s", st(s));

	rdma_fails(c, IBV_WR_RDMA_WRITE, 200, win + 4000, rk1,
		   "WRITE across the window's end");
	rdma_fails(c, IBV_WR_RDMA_READ, 16, win - 16, rk1,
		   "READ before the window");
	rdma_fails(c, IBV_WR_ATOMIC_FETCH_AND_ADD, 8, win, rk1,
		   "ATOMIC through a window without REMOTE_ATOMIC");
	rdma_fails(c, IBV_WR_RDMA_WRITE, 16, win, mr->rkey,
		   "WRITE through the region's own rkey (no remote rights)");

	/* rebind: read only, another range, a new key */
	s = bind1(c, mw, mr, win2, 4096, IBV_ACCESS_REMOTE_READ);
	rk2 = mw->rkey;
	mtest_check(s == IBV_WC_SUCCESS && rk2 != rk1,
		    "rebind [8192, 12288) read only: %s, rkey %#x -> %#x",
		    st(s), rk1, rk2);
	fill(win2, 64, 0x33);
	s = rdma(c, IBV_WR_RDMA_READ, 0, 64, win2, rk2);
	mtest_check(s == IBV_WC_SUCCESS && !memcmp(A.buf, win2, 64),
		    "READ through the new rkey: %s", st(s));
	rdma_fails(c, IBV_WR_RDMA_WRITE, 64, win2, rk2,
		   "WRITE through a read-only window");
	rdma_fails(c, IBV_WR_RDMA_READ, 64, win, rk1,
		   "READ through the rkey of the previous bind");

	/* neither kind of invalidation applies to a type 1 window */
	s = local_inv(c, rk2, false, &wc);
	mtest_check(s == IBV_WC_LOC_PROT_ERR,
		    "LOCAL_INV of a type 1 window: LOC_PROT_ERR (%s)", st(s));
	reconnect(c);
	s = send_inv(c, rk2, &wc);
	mtest_check(s == IBV_WC_REM_INV_REQ_ERR,
		    "SEND_WITH_INV of a type 1 window: REM_INV_REQ_ERR (%s)",
		    st(s));
	reconnect(c);
	s = rdma(c, IBV_WR_RDMA_READ, 0, 64, win2, rk2);
	mtest_check(s == IBV_WC_SUCCESS,
		    "the type 1 window still works after both: %s", st(s));

	/* a bind of length 0 unbinds */
	s = bind1(c, mw, NULL, NULL, 0, 0);
	mtest_check(s == IBV_WC_SUCCESS && mw->rkey != rk2,
		    "ibv_bind_mw length 0 (unbind): %s", st(s));
	rdma_fails(c, IBV_WR_RDMA_READ, 64, win2, mw->rkey,
		   "READ through an unbound type 1 window");
	mtest_check(!ibv_dealloc_mw(mw), "dealloc_mw type 1");
}

static void test_type2(struct ibv_mr *mr)
{
	uint8_t *win = B.buf + 16384;
	struct conn *c = &C[0];
	struct ibv_mw *mw;
	uint32_t rk, rk2, rk3;
	uint64_t *word = (uint64_t *)(win + 64);
	struct ibv_wc wc;
	int s;

	printf("# type 2\n");
	mw = ibv_alloc_mw(B.pd, IBV_MW_TYPE_2);
	if (!mtest_check(mw, "alloc_mw type 2: %s", mw ? "ok" : strerror(errno)))
		return;
	rk = ibv_inc_rkey(mw->rkey);
	s = bind2(c, mw, rk, mr, win, 4096, QP_ACCESS);
	mtest_check(s == IBV_WC_SUCCESS,
		    "IBV_WR_BIND_MW [16384, 20480) rwa, rkey %#x: %s", rk, st(s));
	fill(A.buf, 128, 0x44);
	s = rdma(c, IBV_WR_RDMA_WRITE, 0, 128, win + 2048, rk);
	mtest_check(s == IBV_WC_SUCCESS && !memcmp(win + 2048, A.buf, 128),
		    "WRITE through the type 2 window: %s", st(s));
	*word = 100;
	s = rdma(c, IBV_WR_ATOMIC_FETCH_AND_ADD, 512, 8, word, rk);
	mtest_check(s == IBV_WC_SUCCESS && *word == 105 &&
		    *(uint64_t *)(A.buf + 512) == 100,
		    "FETCH_AND_ADD through the window: %s, %" PRIu64, st(s),
		    *word);
	rdma_fails(&C[1], IBV_WR_RDMA_WRITE, 16, win, rk,
		   "WRITE through a type 2 window on another QP (2B)");
	s = bind2(c, mw, ibv_inc_rkey(rk), mr, win, 4096, QP_ACCESS);
	bind_fails(c, s, "a type 2 window bound already");
	s = rdma(c, IBV_WR_RDMA_READ, 0, 64, win, rk);
	mtest_check(s == IBV_WC_SUCCESS,
		    "the window kept its binding and rkey: %s", st(s));

	s = local_inv(c, rk, false, &wc);
	mtest_check(s == IBV_WC_SUCCESS && wc.opcode == IBV_WC_LOCAL_INV,
		    "LOCAL_INV of the window's rkey: %s", st(s));
	rdma_fails(c, IBV_WR_RDMA_WRITE, 16, win, rk,
		   "WRITE after LOCAL_INV");

	/* the extended API, then remote invalidation */
	rk2 = ibv_inc_rkey(rk);
	s = bind2_ex(c, mw, rk2, mr, win, 4096, IBV_ACCESS_REMOTE_WRITE);
	mtest_check(s == IBV_WC_SUCCESS, "ibv_wr_bind_mw, rkey %#x: %s", rk2,
		    st(s));
	s = rdma(c, IBV_WR_RDMA_WRITE, 0, 16, win, rk2);
	mtest_check(s == IBV_WC_SUCCESS, "WRITE through the new rkey: %s",
		    st(s));
	s = send_inv(&C[1], rk2, &wc);
	mtest_check(s == IBV_WC_REM_INV_REQ_ERR,
		    "SEND_WITH_INV on another QP than the window's: REM_INV_REQ_ERR (%s)",
		    st(s));
	reconnect(&C[1]);
	s = send_inv(c, rk2, &wc);
	mtest_check(s == IBV_WC_SUCCESS && (wc.wc_flags & IBV_WC_WITH_INV) &&
		    wc.invalidated_rkey == rk2,
		    "SEND_WITH_INV: %s, WITH_INV %d, invalidated rkey %#x",
		    st(s), !!(wc.wc_flags & IBV_WC_WITH_INV),
		    wc.invalidated_rkey);
	rdma_fails(c, IBV_WR_RDMA_WRITE, 16, win, rk2,
		   "WRITE after the remote invalidation");

	rk3 = ibv_inc_rkey(rk2);
	s = bind2(c, mw, rk3, mr, win, 4096, IBV_ACCESS_REMOTE_READ);
	mtest_check(s == IBV_WC_SUCCESS, "bound again after it: %s", st(s));
	s = local_inv(c, rk3, true, &wc);
	mtest_check(s == IBV_WC_SUCCESS, "ibv_wr_local_inv: %s", st(s));
	rdma_fails(c, IBV_WR_RDMA_READ, 16, win, rk3,
		   "READ after ibv_wr_local_inv");
	mtest_check(!ibv_dealloc_mw(mw), "dealloc_mw type 2");
}

static void test_bind_errors(struct ibv_mr *mr)
{
	struct conn *c = &C[0];
	struct ibv_mr *nobind, *noloc, *mr2;
	struct ibv_mw *mw, *mw1, *mwp2, *mwp2t1;
	struct ibv_pd *pd2;
	uint8_t *buf2 = mtest_alloc(8192);
	uint32_t rk;
	int s;

	printf("# bind errors\n");
	pd2 = ibv_alloc_pd(B.ctx);
	mw = ibv_alloc_mw(B.pd, IBV_MW_TYPE_2);
	mw1 = ibv_alloc_mw(B.pd, IBV_MW_TYPE_1);
	mwp2 = pd2 ? ibv_alloc_mw(pd2, IBV_MW_TYPE_2) : NULL;
	mwp2t1 = pd2 ? ibv_alloc_mw(pd2, IBV_MW_TYPE_1) : NULL;
	nobind = ibv_reg_mr(B.pd, B.buf + 32768, 4096, IBV_ACCESS_LOCAL_WRITE |
			    IBV_ACCESS_REMOTE_READ);
	noloc = ibv_reg_mr(B.pd, B.buf + 36864, 4096, IBV_ACCESS_MW_BIND);
	mr2 = pd2 ? ibv_reg_mr(pd2, buf2, 8192, IBV_ACCESS_LOCAL_WRITE |
			       IBV_ACCESS_MW_BIND) : NULL;
	if (!mtest_check(pd2 && mw && mw1 && mwp2 && mwp2t1 && nobind &&
			 noloc && mr2, "objects for the bind errors"))
		goto out;
	rk = ibv_inc_rkey(mw->rkey);

	s = bind2(c, mw, rk, nobind, B.buf + 32768, 4096,
		  IBV_ACCESS_REMOTE_READ);
	bind_fails(c, s, "a region without MW_BIND");
	s = bind2(c, mwp2, ibv_inc_rkey(mwp2->rkey), mr2, buf2, 4096,
		  IBV_ACCESS_REMOTE_READ);
	bind_fails(c, s, "type 2 window and QP in different PDs");
	s = bind1(c, mwp2t1, mr2, buf2, 4096, IBV_ACCESS_REMOTE_READ);
	bind_fails(c, s, "type 1 window and QP in different PDs");
	s = bind2(c, mw, rk, mr2, buf2, 4096, IBV_ACCESS_REMOTE_READ);
	bind_fails(c, s, "the region in another PD than the window");
	s = bind2(c, mw, rk, mr, B.buf + BUF_SIZE - 100, 200,
		  IBV_ACCESS_REMOTE_READ);
	bind_fails(c, s, "a range past the region's end");
	s = bind2(c, mw, rk, mr, B.buf - 4096, 4096, IBV_ACCESS_REMOTE_READ);
	bind_fails(c, s, "a range before the region");
	s = bind1(c, mw1, mr, B.buf + BUF_SIZE - 100, 200,
		  IBV_ACCESS_REMOTE_READ);
	bind_fails(c, s, "type 1: a range past the region's end");
	s = bind2(c, mw, rk ^ 0x100, mr, B.buf, 4096, IBV_ACCESS_REMOTE_READ);
	bind_fails(c, s, "a type 2 rkey whose index bits changed");
	s = bind2(c, mw, rk, noloc, B.buf + 36864, 4096,
		  IBV_ACCESS_REMOTE_WRITE);
	bind_fails(c, s, "remote write on a region without local write");
	s = bind2(c, mw, rk, noloc, B.buf + 36864, 4096,
		  IBV_ACCESS_REMOTE_ATOMIC);
	bind_fails(c, s, "remote atomic on a region without local write");
	s = bind2(c, mw, rk, mr, B.buf, 0, IBV_ACCESS_REMOTE_READ);
	bind_fails(c, s, "type 2 of length 0");
	s = bind2(c, mw, rk, mr, B.buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	bind_fails(c, s, "an access right that is no remote right");

	s = bind2(c, mw, rk, noloc, B.buf + 36864, 4096,
		  IBV_ACCESS_REMOTE_READ);
	mtest_check(s == IBV_WC_SUCCESS,
		    "remote read on a region without local write binds: %s",
		    st(s));
	s = rdma(c, IBV_WR_RDMA_READ, 0, 32, B.buf + 36864, rk);
	mtest_check(s == IBV_WC_SUCCESS, "and reads: %s", st(s));
out:
	if (mw)
		mtest_check(!ibv_dealloc_mw(mw), "dealloc bound type 2 window");
	if (mw1)
		ibv_dealloc_mw(mw1);
	if (mwp2)
		ibv_dealloc_mw(mwp2);
	if (mwp2t1)
		ibv_dealloc_mw(mwp2t1);
	if (noloc)
		mtest_check(!ibv_dereg_mr(noloc),
			    "its region deregisters once the window is gone");
	if (nobind)
		ibv_dereg_mr(nobind);
	if (mr2)
		ibv_dereg_mr(mr2);
	if (pd2)
		ibv_dealloc_pd(pd2);
	free(buf2);
}

static void test_lifetime(void)
{
	uint8_t *buf = mtest_alloc(8192);
	struct conn *c = &C[0], q = {};
	struct ibv_mr *mr;
	struct ibv_mw *mw, *mw2;
	uint32_t rk;
	int s, ret;

	printf("# lifetime\n");
	mr = mtest_reg_mr(B.pd, buf, 8192, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_MW_BIND, "B lifetime");
	mw = ibv_alloc_mw(B.pd, IBV_MW_TYPE_1);
	mw2 = ibv_alloc_mw(B.pd, IBV_MW_TYPE_2);
	if (!mtest_check(mw && mw2, "alloc_mw"))
		return;
	s = bind1(c, mw, mr, buf, 8192, IBV_ACCESS_REMOTE_WRITE);
	mtest_check(s == IBV_WC_SUCCESS, "bind a type 1 window: %s", st(s));
	ret = ibv_dereg_mr(mr);
	mtest_check(ret == EBUSY, "dereg_mr of a region with a bound window: EBUSY (%s)",
		    strerror(ret));
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND |
			   IBV_ACCESS_REMOTE_READ);
	mtest_check(ret != 0, "rereg_mr of a region with a bound window fails (%d)",
		    ret);
	fill(A.buf, 32, 0x55);
	s = rdma(c, IBV_WR_RDMA_WRITE, 0, 32, buf + 100, mw->rkey);
	mtest_check(s == IBV_WC_SUCCESS && !memcmp(buf + 100, A.buf, 32),
		    "the window still works: %s", st(s));
	s = bind1(c, mw, NULL, NULL, 0, 0);
	mtest_check(s == IBV_WC_SUCCESS, "unbind: %s", st(s));

	/* dealloc of a bound window */
	rk = ibv_inc_rkey(mw2->rkey);
	s = bind2(c, mw2, rk, mr, buf, 4096, IBV_ACCESS_REMOTE_WRITE);
	mtest_check(s == IBV_WC_SUCCESS, "bind a type 2 window: %s", st(s));
	mtest_check(ibv_dereg_mr(mr) == EBUSY, "dereg_mr: EBUSY again");
	mtest_check(!ibv_dealloc_mw(mw2), "dealloc_mw of the bound window");
	rdma_fails(c, IBV_WR_RDMA_WRITE, 16, buf, rk,
		   "WRITE through a deallocated window's rkey");

	/* destroying the QP a type 2 window is bound through frees it */
	mw2 = ibv_alloc_mw(B.pd, IBV_MW_TYPE_2);
	q.qa = NULL;
	conn_create(&q);
	rk = ibv_inc_rkey(mw2->rkey);
	s = bind2(&q, mw2, rk, mr, buf, 4096, IBV_ACCESS_REMOTE_WRITE);
	mtest_check(s == IBV_WC_SUCCESS, "bind through a third QP: %s", st(s));
	mtest_check(ibv_dereg_mr(mr) == EBUSY, "dereg_mr: EBUSY");
	mtest_check(!ibv_destroy_qp(q.qb) && !ibv_destroy_qp(q.qa),
		    "destroy that QP pair");
	rk = ibv_inc_rkey(rk);
	s = bind2(c, mw2, rk, mr, buf, 4096, IBV_ACCESS_REMOTE_WRITE);
	mtest_check(s == IBV_WC_SUCCESS,
		    "the window is free again: bound through another QP: %s",
		    st(s));
	s = local_inv(c, rk, false, NULL);
	mtest_check(s == IBV_WC_SUCCESS, "LOCAL_INV: %s", st(s));
	mtest_check(!ibv_dereg_mr(mr),
		    "dereg_mr once no window is bound (one still allocated)");
	mtest_check(!ibv_dealloc_mw(mw2) && !ibv_dealloc_mw(mw),
		    "dealloc both windows");
	free(buf);
}

int main(int argc, char **argv)
{
	struct ibv_mr *mr;

	mtest_init("mw_smoke", 0);
	if (argc < 3) {
		fprintf(stderr, "usage: %s DEV_A DEV_B\n", argv[0]);
		return 2;
	}
	mtest_watchdog(600);
	setup_end(&A, argv[1], IBV_ACCESS_LOCAL_WRITE);
	/* B's windows grant the remote rights; its regions need none */
	setup_end(&B, argv[2], IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	mr = B.mr;
	for (int i = 0; i < NCONN; i++)
		conn_create(&C[i]);

	test_caps();
	test_type1(mr);
	test_type2(mr);
	test_bind_errors(mr);
	test_lifetime();

	for (int i = 0; i < NCONN; i++) {
		ibv_destroy_qp(C[i].qa);
		ibv_destroy_qp(C[i].qb);
	}
	mtest_check(!ibv_dereg_mr(A.mr) && !ibv_dereg_mr(B.mr),
		    "dereg the regions");
	ibv_destroy_cq(A.cq);
	ibv_destroy_cq(B.cq);
	ibv_dealloc_pd(A.pd);
	ibv_dealloc_pd(B.pd);
	ibv_close_device(A.ctx);
	ibv_close_device(B.ctx);
	return mtest_summary();
}
