// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * dp_smoke - data path between two mroce devices, in one process.
 *
 * usage: dp_smoke DEV_A DEV_B [COUNT [ud]]
 *
 * RDMA devices are visible from every network namespace, so one process
 * can open both ends (e.g. mroce1 on h1's veth1 and mroce2 on h2's veth2)
 * and connect an RC QP on each to the other: no out-of-band exchange.  The
 * GID used is the RoCE v2 IPv4-mapped one (::ffff:a.b.c.d) of each device.
 *
 * Checks SEND/RECV (SGE list, inline, immediate), RDMA WRITE (+IMM into a
 * receive with no SGE), READ, both atomics, CQ events, resize_cq with
 * completions pending, COUNT pipelined sends through the small rings, a
 * shared receive queue (two QPs, the limit event, a failing QP), UD
 * through address handles (GRH, Q_Keys, CAP_NET_RAW), extended CQs and
 * QPs (start/next/end_poll, the ibv_wr_* API), rereg_mr, an
 * access error and the flush that follows, and the verbs mroce refuses.
 * One line per check and "N passed, N failed"; exit 0 only if all passed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

#define BUF_SIZE (64 * 1024)
#define QP_WR 16		/* small: COUNT sends wrap the rings often */
#define CQ_SIZE 64
#define TIMEOUT_MS 5000

struct end {
	const char *name;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	union ibv_gid gid;
	int gid_index;
};

static bool setup_end(struct end *e)
{
	struct ibv_qp_cap cap = { .max_send_wr = QP_WR, .max_recv_wr = QP_WR,
				  .max_send_sge = 4, .max_recv_sge = 4,
				  .max_inline_data = 64 };
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
		     IBV_ACCESS_RELAXED_ORDERING;

	e->ctx = mtest_find_device(e->name);
	if (!mtest_check(e->ctx, "%s: open", e->name))
		return false;
	e->gid_index = mtest_find_ipv4_gid(e->ctx, &e->gid);
	if (!mtest_check(e->gid_index >= 0, "%s: RoCE v2 IPv4 GID at index %d",
			 e->name, e->gid_index))
		return false;
	e->pd = ibv_alloc_pd(e->ctx);
	e->ch = ibv_create_comp_channel(e->ctx);
	if (!mtest_check(e->pd && e->ch, "%s: PD and completion channel",
			 e->name))
		return false;
	e->cq = ibv_create_cq(e->ctx, CQ_SIZE, NULL, e->ch, 0);
	if (!mtest_check(e->cq, "%s: create_cq(%d): %s", e->name, CQ_SIZE,
			 e->cq ? "ok" : strerror(errno)))
		return false;
	mtest_check(e->cq->cqe >= CQ_SIZE, "%s: CQ has %d >= %d entries",
		    e->name, e->cq->cqe, CQ_SIZE);
	e->buf = mtest_alloc(BUF_SIZE);
	e->mr = ibv_reg_mr(e->pd, e->buf, BUF_SIZE, access);
	if (!mtest_check(e->mr, "%s: reg_mr 64 KiB with RELAXED_ORDERING: %s",
			 e->name, e->mr ? "ok" : strerror(errno)))
		return false;
	e->qp = mtest_create_rc_qp(e->pd, e->cq, e->cq, &cap);
	if (!mtest_check(e->qp, "%s: create_qp RC: %s", e->name,
			 e->qp ? "ok" : strerror(errno)))
		return false;
	mtest_check(cap.max_send_wr >= QP_WR && cap.max_recv_wr >= QP_WR &&
		    cap.max_send_sge >= 4 && cap.max_recv_sge >= 4 &&
		    cap.max_inline_data >= 64,
		    "%s: QP %#x caps wr %u/%u sge %u/%u inline %u", e->name,
		    e->qp->qp_num, cap.max_send_wr, cap.max_recv_wr,
		    cap.max_send_sge, cap.max_recv_sge, cap.max_inline_data);
	return true;
}

static bool connect_qp(struct end *e, struct end *peer)
{
	struct mtest_path p = {
		.dest_qpn = peer->qp->qp_num, .rq_psn = 0x100, .sq_psn = 0x100,
		.dgid = peer->gid, .sgid_index = (uint8_t)e->gid_index,
		.port = 1, .mtu = IBV_MTU_1024, .rd_atomic = 4, .timeout = 14,
		.retry_cnt = 7,
	};
	int ret;

	ret = mtest_qp_init(e->qp, 1, IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	if (!mtest_check(!ret, "%s: RESET->INIT: %s", e->name, strerror(ret)))
		return false;
	ret = mtest_qp_rtr(e->qp, &p);
	if (!mtest_check(!ret, "%s: INIT->RTR: %s", e->name, strerror(ret)))
		return false;
	ret = mtest_qp_rts(e->qp, &p);
	return mtest_check(!ret, "%s: RTR->RTS: %s", e->name, strerror(ret));
}

static void print_wc(const char *what, const struct ibv_wc *wc)
{
	printf("#   %s: wr_id %" PRIu64 " status %s opcode %d len %u", what,
	       wc->wr_id, ibv_wc_status_str(wc->status), wc->opcode,
	       wc->byte_len);
	printf(" qp %#x imm %#x flags %#x vendor_err %#x\n", wc->qp_num,
	       ntohl(wc->imm_data), wc->wc_flags, wc->vendor_err);
}

/* A receive of @len bytes at @off in @e's buffer (no SGE if @len is 0) */
static int post_recv(struct end *e, uint64_t id, uint32_t off, uint32_t len)
{
	return mtest_post_recv(e->qp, id, e->buf + off, len, e->mr->lkey);
}

static void fill(uint8_t *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

static void test_send(struct end *a, struct end *b)
{
	struct ibv_sge sg[3];
	struct ibv_send_wr wr;
	struct ibv_wc wc[2];
	int n;

	printf("# SEND / RECV\n");
	fill(a->buf, 6000, 1);
	memset(b->buf, 0, 8192);
	mtest_check(!post_recv(b, 10, 0, 8192), "B: post_recv 8 KiB");
	/* three SGEs: 1000 + 3000 + 2000 bytes */
	sg[0] = (struct ibv_sge){ (uintptr_t)a->buf, 1000, a->mr->lkey };
	sg[1] = (struct ibv_sge){ (uintptr_t)a->buf + 1000, 3000, a->mr->lkey };
	sg[2] = (struct ibv_sge){ (uintptr_t)a->buf + 4000, 2000, a->mr->lkey };
	wr = (struct ibv_send_wr){ .wr_id = 11, .sg_list = sg, .num_sge = 3,
				   .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED };
	mtest_check(!mtest_post_wr(a->qp, &wr), "A: SEND 6000 bytes in 3 SGEs");
	n = mtest_poll(a->cq, wc, 1, TIMEOUT_MS);
	if (mtest_check(n == 1 && wc[0].status == IBV_WC_SUCCESS &&
			wc[0].opcode == IBV_WC_SEND && wc[0].wr_id == 11,
			"A: SEND completion (got %d)", n) == false && n == 1)
		print_wc("A", &wc[0]);
	n = mtest_poll(b->cq, wc, 1, TIMEOUT_MS);
	if (!mtest_check(n == 1 && wc[0].status == IBV_WC_SUCCESS &&
			 wc[0].opcode == IBV_WC_RECV && wc[0].wr_id == 10 &&
			 wc[0].byte_len == 6000 &&
			 wc[0].qp_num == b->qp->qp_num &&
			 !(wc[0].wc_flags & IBV_WC_WITH_IMM),
			 "B: RECV completion, 6000 bytes (got %d)",
			 n) && n == 1)
		print_wc("B", &wc[0]);
	mtest_check(!memcmp(a->buf, b->buf, 6000), "B: payload intact");

	fill(a->buf + 100, 50, 9);
	mtest_check(!post_recv(b, 12, 8192, 1024), "B: post_recv");
	sg[0] = (struct ibv_sge){ (uintptr_t)a->buf + 100, 50, 0 };
	wr = (struct ibv_send_wr){ .wr_id = 13, .sg_list = sg, .num_sge = 1,
				   .opcode = IBV_WR_SEND_WITH_IMM,
				   .imm_data = htonl(0xfeedf00d),
				   .send_flags = IBV_SEND_SIGNALED |
						 IBV_SEND_INLINE };
	mtest_check(!mtest_post_wr(a->qp, &wr), "A: inline SEND_WITH_IMM, 50 bytes");
	memset(a->buf + 100, 0, 50);	/* inline: buffer reusable at once */
	n = mtest_poll(a->cq, wc, 1, TIMEOUT_MS);
	mtest_check(n == 1 && wc[0].status == IBV_WC_SUCCESS &&
		    wc[0].wr_id == 13, "A: completion");
	n = mtest_poll(b->cq, wc, 1, TIMEOUT_MS);
	if (!mtest_check(n == 1 && wc[0].status == IBV_WC_SUCCESS &&
			 wc[0].opcode == IBV_WC_RECV && wc[0].byte_len == 50 &&
			 (wc[0].wc_flags & IBV_WC_WITH_IMM) &&
			 wc[0].imm_data == htonl(0xfeedf00d),
			 "B: RECV with IMM 0xfeedf00d, 50 bytes") && n == 1)
		print_wc("B", &wc[0]);
	fill(a->buf + 100, 50, 9);
	mtest_check(!memcmp(a->buf + 100, b->buf + 8192, 50),
		    "B: inline payload intact");
}

static void test_rdma(struct end *a, struct end *b)
{
	struct ibv_sge sg;
	struct ibv_send_wr wr;
	struct ibv_wc wc[2];
	uint64_t *rem, *loc;
	int n;

	printf("# RDMA WRITE / READ / atomics\n");
	fill(a->buf, 8192, 3);
	memset(b->buf + 16384, 0, 8192);
	sg = (struct ibv_sge){ (uintptr_t)a->buf, 8192, a->mr->lkey };
	wr = (struct ibv_send_wr){ .wr_id = 20, .sg_list = &sg, .num_sge = 1,
				   .opcode = IBV_WR_RDMA_WRITE,
				   .send_flags = IBV_SEND_SIGNALED,
				   .wr.rdma = { (uintptr_t)b->buf + 16384,
						b->mr->rkey } };
	mtest_check(!mtest_post_wr(a->qp, &wr), "A: RDMA_WRITE 8 KiB");
	n = mtest_poll(a->cq, wc, 1, TIMEOUT_MS);
	if (!mtest_check(n == 1 && wc[0].status == IBV_WC_SUCCESS &&
			 wc[0].opcode == IBV_WC_RDMA_WRITE, "A: WRITE completion") &&
	    n == 1)
		print_wc("A", &wc[0]);
	mtest_check(!memcmp(a->buf, b->buf + 16384, 8192), "B: written data intact");

	/* WRITE_WITH_IMM consumes a receive; that one has no SGE. */
	mtest_check(!post_recv(b, 21, 0, 0), "B: post_recv with 0 SGEs");
	sg = (struct ibv_sge){ (uintptr_t)a->buf, 512, a->mr->lkey };
	wr.wr_id = 22;
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.imm_data = htonl(42);
	wr.wr.rdma.remote_addr = (uintptr_t)b->buf + 32768;
	mtest_check(!mtest_post_wr(a->qp, &wr), "A: RDMA_WRITE_WITH_IMM 512 bytes");
	n = mtest_poll(a->cq, wc, 1, TIMEOUT_MS);
	mtest_check(n == 1 && wc[0].status == IBV_WC_SUCCESS, "A: completion");
	n = mtest_poll(b->cq, wc, 1, TIMEOUT_MS);
	if (!mtest_check(n == 1 && wc[0].status == IBV_WC_SUCCESS &&
			 wc[0].opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
			 wc[0].wr_id == 21 && wc[0].imm_data == htonl(42) &&
			 (wc[0].wc_flags & IBV_WC_WITH_IMM),
			 "B: RECV_RDMA_WITH_IMM, imm 42") && n == 1)
		print_wc("B", &wc[0]);
	mtest_check(!memcmp(a->buf, b->buf + 32768, 512), "B: data intact");

	fill(b->buf + 40960, 4000, 5);
	memset(a->buf + 20000, 0, 4000);
	sg = (struct ibv_sge){ (uintptr_t)a->buf + 20000, 4000, a->mr->lkey };
	wr = (struct ibv_send_wr){ .wr_id = 23, .sg_list = &sg, .num_sge = 1,
				   .opcode = IBV_WR_RDMA_READ,
				   .send_flags = IBV_SEND_SIGNALED,
				   .wr.rdma = { (uintptr_t)b->buf + 40960,
						b->mr->rkey } };
	mtest_check(!mtest_post_wr(a->qp, &wr), "A: RDMA_READ 4000 bytes");
	n = mtest_poll(a->cq, wc, 1, TIMEOUT_MS);
	if (!mtest_check(n == 1 && wc[0].status == IBV_WC_SUCCESS &&
			 wc[0].opcode == IBV_WC_RDMA_READ &&
			 wc[0].byte_len == 4000,
			 "A: READ completion") && n == 1)
		print_wc("A", &wc[0]);
	mtest_check(!memcmp(a->buf + 20000, b->buf + 40960, 4000),
		    "A: read data intact");

	rem = (uint64_t *)(b->buf + 49152);
	loc = (uint64_t *)(a->buf + 24576);
	*rem = 100;
	*loc = 0;
	sg = (struct ibv_sge){ (uintptr_t)loc, 8, a->mr->lkey };
	wr = (struct ibv_send_wr){ .wr_id = 24, .sg_list = &sg, .num_sge = 1,
				   .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
				   .send_flags = IBV_SEND_SIGNALED,
				   .wr.atomic = { .remote_addr = (uintptr_t)rem,
						  .compare_add = 5,
						  .rkey = b->mr->rkey } };
	mtest_check(!mtest_post_wr(a->qp, &wr), "A: FETCH_AND_ADD 5");
	n = mtest_poll(a->cq, wc, 1, TIMEOUT_MS);
	if (!mtest_check(n == 1 && wc[0].status == IBV_WC_SUCCESS &&
			 wc[0].opcode == IBV_WC_FETCH_ADD && *loc == 100 &&
			 *rem == 105, "A: got 100, remote now 105 (%" PRIu64
			 ", %" PRIu64 ")", *loc, *rem) && n == 1)
		print_wc("A", &wc[0]);

	wr.wr_id = 25;
	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.compare_add = 105;
	wr.wr.atomic.swap = 7;
	mtest_check(!mtest_post_wr(a->qp, &wr), "A: CMP_AND_SWP 105 -> 7");
	n = mtest_poll(a->cq, wc, 1, TIMEOUT_MS);
	mtest_check(n == 1 && wc[0].status == IBV_WC_SUCCESS &&
		    wc[0].opcode == IBV_WC_COMP_SWAP && *loc == 105 &&
		    *rem == 7,
		    "A: got 105, remote now 7 (%" PRIu64 ", %" PRIu64 ")", *loc,
		    *rem);
}

static void test_events_resize(struct end *a, struct end *b)
{
	struct ibv_cq *ev_cq;
	struct ibv_send_wr wr;
	struct ibv_wc wc[4];
	struct pollfd pfd;
	void *ev_ctx;
	int n, ret;

	printf("# CQ events, resize_cq\n");
	mtest_check(!ibv_req_notify_cq(b->cq, 0), "B: req_notify_cq");
	mtest_check(!post_recv(b, 30, 0, 64), "B: post_recv");
	wr = (struct ibv_send_wr){ .wr_id = 31, .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED };
	mtest_check(!mtest_post_wr(a->qp, &wr), "A: 0-byte SEND");
	pfd = (struct pollfd){ .fd = b->ch->fd, .events = POLLIN };
	ret = poll(&pfd, 1, TIMEOUT_MS);
	mtest_check(ret == 1, "B: completion channel readable");
	if (ret == 1) {
		ret = ibv_get_cq_event(b->ch, &ev_cq, &ev_ctx);
		mtest_check(!ret && ev_cq == b->cq, "B: event for its CQ");
		if (!ret)
			ibv_ack_cq_events(ev_cq, 1);
	}
	n = mtest_poll(b->cq, wc, 1, TIMEOUT_MS);
	mtest_check(n == 1 && wc[0].byte_len == 0 && wc[0].wr_id == 30,
		    "B: 0-byte RECV completion");
	mtest_poll(a->cq, wc, 1, TIMEOUT_MS);

	/* Three completions pending across a resize. */
	for (int i = 0; i < 3; i++) {
		wr.wr_id = 40 + i;
		post_recv(b, 50 + i, 0, 64);
		mtest_post_wr(a->qp, &wr);
	}
	n = mtest_poll(b->cq, wc, 3, TIMEOUT_MS);
	mtest_check(n == 3, "B: 3 receives done");
	mtest_sleep_us(200 * 1000);	/* let A's 3 CQEs land */
	ret = ibv_resize_cq(a->cq, 4 * CQ_SIZE);
	mtest_check(!ret && a->cq->cqe >= 4 * CQ_SIZE,
		    "A: resize_cq to %d with completions pending: %s (cqe %d)",
		    4 * CQ_SIZE, strerror(ret), a->cq->cqe);
	n = mtest_poll(a->cq, wc, 3, TIMEOUT_MS);
	mtest_check(n == 3 && wc[0].wr_id == 40 && wc[1].wr_id == 41 &&
		    wc[2].wr_id == 42, "A: the 3 pending completions survive, in order");
}

static void test_stream(struct end *a, struct end *b, int count)
{
	struct ibv_sge sg = { (uintptr_t)a->buf, 64, a->mr->lkey };
	struct ibv_wc wc[16];
	int sent = 0, recvd = 0, acked = 0, rposted = 0, err = 0;
	double deadline = mtest_now() + 30;

	printf("# %d pipelined SENDs through %d-slot rings\n", count, QP_WR);
	while ((recvd < count || acked < count) && mtest_now() < deadline) {
		while (rposted < count && rposted - recvd < QP_WR &&
		       !post_recv(b, 1000 + rposted, 0, 64))
			rposted++;
		while (sent < count && sent - acked < QP_WR &&
		       sent < rposted) {
			struct ibv_send_wr wr = {
				.wr_id = sent, .sg_list = &sg, .num_sge = 1,
				.opcode = IBV_WR_SEND,
				.send_flags = IBV_SEND_SIGNALED |
					      IBV_SEND_INLINE,
			};
			*(uint32_t *)a->buf = sent;
			if (mtest_post_wr(a->qp, &wr))
				break;
			sent++;
		}
		int n = ibv_poll_cq(a->cq, 16, wc);

		for (int i = 0; i < n; i++, acked++)
			if (wc[i].status || wc[i].wr_id != (uint64_t)acked)
				err++;
		n = ibv_poll_cq(b->cq, 16, wc);
		for (int i = 0; i < n; i++, recvd++)
			if (wc[i].status ||
			    wc[i].wr_id != (uint64_t)(1000 + recvd))
				err++;
	}
	mtest_check(sent == count && acked == count && recvd == count && !err,
		    "sent %d, send completions %d, receives %d, errors %d",
		    sent,
		    acked, recvd, err);
}

static void test_errors(struct end *a, struct end *b)
{
	struct ibv_sge sg = { (uintptr_t)a->buf, 64, a->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 60, .sg_list = &sg, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED,
				  .wr.rdma = { (uintptr_t)b->buf,
					       b->mr->rkey ^ 0x5a5a00 } };
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	struct ibv_wc wc[2];
	int n;

	printf("# remote access error, flush\n");
	mtest_check(!mtest_post_wr(a->qp, &wr), "A: RDMA_WRITE with a bad rkey");
	n = mtest_poll(a->cq, wc, 1, TIMEOUT_MS);
	if (!mtest_check(n == 1 && wc[0].status == IBV_WC_REM_ACCESS_ERR,
			 "A: REM_ACCESS_ERR") && n == 1)
		print_wc("A", &wc[0]);
	memset(&qa, 0, sizeof(qa));
	n = ibv_query_qp(a->qp, &qa, IBV_QP_STATE, &qi);
	mtest_check(!n && qa.qp_state == IBV_QPS_ERR, "A: QP in ERR (state %d)",
		    qa.qp_state);
	wr.wr_id = 61;
	wr.wr.rdma.rkey = b->mr->rkey;
	mtest_check(!mtest_post_wr(a->qp, &wr), "A: post in ERR accepted");
	n = mtest_poll(a->cq, wc, 1, TIMEOUT_MS);
	mtest_check(n == 1 && wc[0].status == IBV_WC_WR_FLUSH_ERR &&
		    wc[0].wr_id == 61, "A: send flushed with WR_FLUSH_ERR");

	/*
	 * A receive posted in ERR must complete with a flush error too
	 * (IBA 10.3.1): the kernel has set NEED_KICK on the RQ, so post_recv
	 * rings the RQ doorbell and the kernel flushes the new WQE.
	 */
	mtest_check(!post_recv(a, 62, 0, 64), "A: post_recv in ERR accepted");
	n = mtest_poll(a->cq, wc, 1, TIMEOUT_MS);
	mtest_check(n == 1 && wc[0].status == IBV_WC_WR_FLUSH_ERR &&
		    wc[0].wr_id == 62,
		    "A: receive posted in ERR flushed with WR_FLUSH_ERR (got %d)",
		    n);
}

/* The next async event of @ctx within @ms, acknowledged; false if none. */
static bool next_async(struct ibv_context *ctx, int ms,
		       struct ibv_async_event *ev)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	int fl = fcntl(ctx->async_fd, F_GETFL);

	fcntl(ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
	if (poll(&pfd, 1, ms) != 1 || ibv_get_async_event(ctx, ev))
		return false;
	ibv_ack_async_event(ev);
	return true;
}

/* An RC QP of @e whose receives come from @srq (RESET) */
static struct ibv_qp *srq_qp(struct end *e, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = e->cq, .recv_cq = e->cq, .srq = srq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = QP_WR, .max_send_sge = 2 },
	};

	return ibv_create_qp(e->pd, &qa);
}

static bool srq_connect(struct ibv_qp *qp, const struct end *e,
			const struct end *peer, uint32_t dqpn)
{
	struct mtest_path p = {
		.dest_qpn = dqpn, .rq_psn = 0x200, .sq_psn = 0x200,
		.dgid = peer->gid, .sgid_index = (uint8_t)e->gid_index,
		.port = 1, .mtu = IBV_MTU_1024, .rd_atomic = 4, .timeout = 14,
		.retry_cnt = 7,
	};

	return !mtest_qp_init(qp, 1, IBV_ACCESS_REMOTE_WRITE) &&
	       !mtest_qp_rtr(qp, &p) && !mtest_qp_rts(qp, &p);
}

#define SRQ_WRS 8
#define SRQ_LIMIT 4
#define SRQ_MSG 300		/* a message of 1 packet */
#define SRQ_BIG 3000		/* and one of 3 packets */

/*
 * Shared receive queue on B: two QPs attached, fed by two QPs of A.
 * Every message lands in some SRQ WQE whole; each B QP completes its
 * messages in the order A sent them; the limit event fires once when a
 * take leaves fewer WQEs than the limit; an attached QP that fails takes
 * nothing more and reports LAST_WQE_REACHED, and the other QP still finds
 * the WQEs it left; the SRQ cannot go while QPs use it.
 */
/*
 * An SRQ holds what it granted and no more: a list one WR longer fails
 * with ENOMEM at the WR that did not fit (bad_wr), the ones before it
 * posted; an SGE list longer than max_sge is EINVAL.
 */
static void test_srq_overflow(struct end *b)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_recv_wr wr[SRQ_WRS + 1] = {}, *bad = NULL;
	struct ibv_sge sge[2] = {
		{ (uintptr_t)b->buf, 64, b->mr->lkey },
		{ (uintptr_t)b->buf + 64, 64, b->mr->lkey },
	};
	struct ibv_srq *srq = ibv_create_srq(b->pd, &sa);
	unsigned int i, n;
	int ret;

	if (!mtest_check(srq && sa.attr.max_wr >= 4 &&
			 sa.attr.max_wr <= SRQ_WRS,
			 "B: a small SRQ (4 WRs asked, %u granted): %s",
			 srq ? sa.attr.max_wr : 0,
			 srq ? "ok" : strerror(errno)))
		goto out;
	n = sa.attr.max_wr;
	for (i = 0; i <= n; i++) {
		wr[i].wr_id = 900 + i;
		wr[i].sg_list = sge;
		wr[i].num_sge = 1;
		wr[i].next = i < n ? &wr[i + 1] : NULL;
	}
	ret = ibv_post_srq_recv(srq, wr, &bad);
	mtest_check(ret == ENOMEM && bad == &wr[n],
		    "B: %u + 1 receives on an SRQ of %u: ENOMEM at the last (%s, bad_wr %ld)",
		    n, n, strerror(ret), bad ? (long)(bad - wr) : -1L);
	wr[0].next = NULL;
	bad = NULL;
	ret = ibv_post_srq_recv(srq, wr, &bad);
	mtest_check(ret == ENOMEM && bad == wr,
		    "B: one more on the full SRQ: ENOMEM (%s)", strerror(ret));
	ibv_destroy_srq(srq);
	srq = ibv_create_srq(b->pd, &sa);
	wr[0].num_sge = 2;
	bad = NULL;
	ret = srq ? ibv_post_srq_recv(srq, wr, &bad) : -1;
	mtest_check(ret == EINVAL && bad == wr,
		    "B: 2 SGEs on an SRQ of max_sge 1: EINVAL (%s)",
		    ret < 0 ? "no SRQ" : strerror(ret));
out:
	if (srq)
		ibv_destroy_srq(srq);
}

static void test_srq(struct end *a, struct end *b)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = SRQ_WRS,
						  .max_sge = 2 } };
	struct ibv_qp *qa[2] = {}, *qb[2] = {};
	unsigned int seen[SRQ_WRS] = {}, order_ok = 1, data_ok = 1;
	struct ibv_qp_attr qattr = { .qp_state = IBV_QPS_ERR };
	struct ibv_async_event ev;
	struct ibv_srq_attr at = {};
	struct ibv_wc wc[16];
	uint32_t last_imm[2] = { 0, 0 };
	struct ibv_srq *srq;
	int i, k, n, got, ret;

	printf("# shared receive queue\n");
	srq = ibv_create_srq(b->pd, &sa);
	if (!mtest_check(srq, "B: create_srq(%d WRs, 2 SGEs): %s", SRQ_WRS,
			 srq ? "ok" : strerror(errno)))
		return;
	mtest_check(sa.attr.max_wr >= SRQ_WRS && sa.attr.max_sge >= 2,
		    "B: SRQ granted %u WRs, %u SGEs", sa.attr.max_wr,
		    sa.attr.max_sge);
	/* queried first: the message's arguments are read before the call */
	ret = ibv_query_srq(srq, &at);
	mtest_check(!ret && at.max_wr == sa.attr.max_wr &&
		    at.max_sge == sa.attr.max_sge && at.srq_limit == 0,
		    "B: query_srq: max_wr %u max_sge %u limit %u", at.max_wr,
		    at.max_sge, at.srq_limit);
	at.max_wr = 2 * sa.attr.max_wr;
	ret = ibv_modify_srq(srq, &at, IBV_SRQ_MAX_WR);
	mtest_check(ret == EOPNOTSUPP, "B: resizing the SRQ: EOPNOTSUPP (%s)",
		    strerror(ret));
	at.srq_limit = sa.attr.max_wr + 1;
	ret = ibv_modify_srq(srq, &at, IBV_SRQ_LIMIT);
	mtest_check(ret == EINVAL, "B: a limit above max_wr: EINVAL (%s)",
		    strerror(ret));
	test_srq_overflow(b);

	for (i = 0; i < 2; i++) {
		struct ibv_qp_init_attr qi = {
			.send_cq = a->cq, .recv_cq = a->cq,
			.qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = QP_WR, .max_recv_wr = 1,
				 .max_send_sge = 2, .max_recv_sge = 1 },
		};

		qa[i] = ibv_create_qp(a->pd, &qi);
		qb[i] = srq_qp(b, srq);
	}
	if (!mtest_check(qa[0] && qa[1] && qb[0] && qb[1],
			 "two QP pairs, B's on the SRQ: %s",
			 qa[0] && qa[1] && qb[0] && qb[1] ? "ok" :
			 strerror(errno)))
		goto out;
	for (i = 0; i < 2; i++)
		if (!mtest_check(srq_connect(qa[i], a, b, qb[i]->qp_num) &&
				 srq_connect(qb[i], b, a, qa[i]->qp_num),
				 "pair %d connects", i))
			goto out;
	mtest_check(mtest_post_recv(qb[0], 1, b->buf, 64, b->mr->lkey) == EINVAL,
		    "B: post_recv on a QP with an SRQ: EINVAL");

	/* receives [32 KiB + i * 4 KiB), wr_id 100 + i */
	memset(b->buf + 32768, 0, SRQ_WRS * 4096);
	for (i = 0; i < SRQ_WRS; i++) {
		struct ibv_sge sg = { (uintptr_t)b->buf + 32768 + i * 4096,
				      4096, b->mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 100 + i, .sg_list = &sg,
					  .num_sge = 1 };
		struct ibv_recv_wr *bad;

		if (ibv_post_srq_recv(srq, &wr, &bad))
			break;
	}
	mtest_check(i == SRQ_WRS, "B: %d receives posted to the SRQ", i);
	at.srq_limit = SRQ_LIMIT;
	mtest_check(!ibv_modify_srq(srq, &at, IBV_SRQ_LIMIT),
		    "B: SRQ limit armed at %d", SRQ_LIMIT);

	/* A: 3 messages on pair 0, 2 on pair 1, immediate = pair << 8 | k */
	for (k = 0; k < 3; k++) {
		for (i = 0; i < 2; i++) {
			uint32_t len = k == 1 ? SRQ_BIG : SRQ_MSG;
			uint32_t imm = (uint32_t)i << 8 | (uint32_t)k;

			if (i == 1 && k == 2)
				continue;
			/* each message from its own 4 KiB of A's buffer */
			fill(a->buf + (i * 3 + k) * 4096, len, imm);
			ret = mtest_post_send(qa[i], imm, IBV_WR_SEND_WITH_IMM,
					      a->buf + (i * 3 + k) * 4096, len,
					      a->mr->lkey, 0, 0, imm);
			if (ret)
				mtest_fail("A: post_send %#x: %s", imm,
					   strerror(ret));
		}
	}
	got = 0;
	for (n = 0; n < 20 && got < 10; n++) {
		int m = mtest_poll(b->cq, wc, 1, TIMEOUT_MS);

		if (m != 1)
			break;
		got++;
		k = (int)wc[0].wr_id - 100;
		if (k < 0 || k >= SRQ_WRS || seen[k]++ ||
		    wc[0].status != IBV_WC_SUCCESS) {
			print_wc("unexpected", &wc[0]);
			data_ok = 0;
			continue;
		}
		i = wc[0].qp_num == qb[1]->qp_num;
		{
			uint32_t imm = ntohl(wc[0].imm_data);
			uint32_t len = (imm & 0xff) == 1 ? SRQ_BIG : SRQ_MSG;
			uint8_t want[SRQ_BIG];

			fill(want, len, imm);
			if (imm >> 8 != (uint32_t)i || wc[0].byte_len != len ||
			    memcmp(b->buf + 32768 + k * 4096, want, len))
				data_ok = 0;
			if ((imm & 0xff) != last_imm[i]++)
				order_ok = 0;
		}
		if (got == 5)
			break;
	}
	mtest_check(got == 5 && data_ok,
		    "B: 5 messages of 2 QPs in 5 distinct SRQ WQEs, each whole (%d)",
		    got);
	mtest_check(order_ok, "B: each QP completes its messages in order");
	n = mtest_poll(a->cq, wc, 5, TIMEOUT_MS);
	mtest_check(n == 5, "A: 5 sends completed (%d)", n);
	mtest_check(next_async(b->ctx, TIMEOUT_MS, &ev) &&
		    ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED &&
		    ev.element.srq == srq,
		    "B: SRQ_LIMIT_REACHED once 3 < %d WQEs are left", SRQ_LIMIT);
	ret = ibv_query_srq(srq, &at);
	mtest_check(!ret && at.srq_limit == 0,
		    "B: the limit is disarmed (%u)", at.srq_limit);

	/* QP 0 of B fails: it had bound nothing, so nothing is flushed */
	mtest_check(!ibv_modify_qp(qb[0], &qattr, IBV_QP_STATE),
		    "B: QP 0 to ERR");
	mtest_check(next_async(b->ctx, TIMEOUT_MS, &ev) &&
		    ev.event_type == IBV_EVENT_QP_LAST_WQE_REACHED &&
		    ev.element.qp == qb[0],
		    "B: QP 0 reports LAST_WQE_REACHED");
	n = mtest_poll(b->cq, wc, 1, 200);
	mtest_check(n == 0, "B: QP 0 flushed no SRQ WQE (%d)", n);
	/* the 3 WQEs left serve QP 1 */
	for (k = 0; k < 3; k++)
		mtest_post_send(qa[1], 50 + k, IBV_WR_SEND, a->buf, 64,
				a->mr->lkey, 0, 0, 0);
	n = mtest_poll(b->cq, wc, 3, TIMEOUT_MS);
	for (i = 0, ret = 0; i < n; i++)
		ret += wc[i].status == IBV_WC_SUCCESS &&
		       wc[i].qp_num == qb[1]->qp_num &&
		       wc[i].wr_id >= 100 && wc[i].wr_id < 100 + SRQ_WRS &&
		       !seen[wc[i].wr_id - 100]++;
	mtest_check(ret == 3, "B: QP 1 takes the 3 WQEs QP 0 left (%d)", ret);
	mtest_poll(a->cq, wc, 3, TIMEOUT_MS);

	errno = 0;
	ret = ibv_destroy_srq(srq);
	mtest_check(ret == EBUSY, "B: destroy_srq with QPs attached: EBUSY (%s)",
		    strerror(ret));
out:
	for (i = 0; i < 2; i++) {
		if (qa[i])
			ibv_destroy_qp(qa[i]);
		if (qb[i])
			ibv_destroy_qp(qb[i]);
	}
	mtest_drain_cq(a->cq);
	mtest_drain_cq(b->cq);
	mtest_check(!ibv_destroy_srq(srq), "B: destroy_srq");
}

/* Up to @n completions of @cq through start/next/end_poll, within @ms */
static int poll_ex(struct ibv_cq_ex *cq, struct ibv_wc *wc, int n, int ms)
{
	struct ibv_poll_cq_attr pa = {};
	double end = mtest_now() + ms / 1000.0;
	int got = 0, ret;

	while (got < n && mtest_now() < end) {
		ret = ibv_start_poll(cq, &pa);
		if (ret == ENOENT)
			continue;
		if (ret)
			break;
		do {
			struct ibv_wc *w = &wc[got++];

			memset(w, 0, sizeof(*w));
			w->wr_id = cq->wr_id;
			w->status = cq->status;
			w->opcode = ibv_wc_read_opcode(cq);
			w->byte_len = ibv_wc_read_byte_len(cq);
			w->wc_flags = ibv_wc_read_wc_flags(cq);
			w->qp_num = ibv_wc_read_qp_num(cq);
			w->src_qp = ibv_wc_read_src_qp(cq);
			if (w->wc_flags & IBV_WC_WITH_IMM)
				w->imm_data = ibv_wc_read_imm_data(cq);
			if (w->wc_flags & IBV_WC_WITH_INV)
				w->invalidated_rkey =
					ibv_wc_read_invalidated_rkey(cq);
		} while (got < n && !ibv_next_poll(cq));
		ibv_end_poll(cq);
	}
	return got;
}

/*
 * Extended verbs: a CQ made by ibv_create_cq_ex read with start/next/end
 * poll and the ibv_wc_read_* accessors, a QP made by ibv_create_qp_ex
 * posting through ibv_wr_* (WRITE, SEND_WITH_IMM with inline data, READ,
 * FETCH_ADD in one batch), a batch that fails (too many SGEs, the SQ
 * overrun) or is aborted posting nothing, and the attributes refused.
 */
static void test_ex(struct end *a, struct end *b)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 32, .wc_flags = IBV_WC_EX_WITH_BYTE_LEN |
			IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM |
			IBV_WC_EX_WITH_SRC_QP,
	};
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_RC, .pd = a->pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE |
			IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ |
			IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_SEND,
		.cap = { .max_send_wr = 8, .max_recv_wr = 4, .max_send_sge = 2,
			 .max_recv_sge = 1, .max_inline_data = 64 },
	};
	struct ibv_qp_cap bcap = { .max_send_wr = 4, .max_recv_wr = 8,
				   .max_send_sge = 1, .max_recv_sge = 1 };
	struct ibv_cq_ex *cqa = NULL, *cqb = NULL, *bad;
	struct ibv_qp *qpa = NULL, *qpb = NULL, *q2;
	struct ibv_sge sg[3];
	struct ibv_qp_ex *x;
	struct ibv_wc wc[12];
	uint64_t *word = (uint64_t *)(b->buf + 8192);
	uint8_t inl[64];
	int i, n, ret, ok;

	printf("# extended verbs\n");
	ca.wc_flags |= IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	errno = 0;
	bad = ibv_create_cq_ex(a->ctx, &ca);
	mtest_check(!bad && errno == EOPNOTSUPP,
		    "create_cq_ex with completion timestamps: EOPNOTSUPP (%s)",
		    strerror(errno));
	if (bad)
		ibv_destroy_cq(ibv_cq_ex_to_cq(bad));
	ca.wc_flags &= ~(uint64_t)IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	cqa = ibv_create_cq_ex(a->ctx, &ca);
	cqb = ibv_create_cq_ex(b->ctx, &ca);
	if (!mtest_check(cqa && cqb, "create_cq_ex on A and B: %s",
			 cqa && cqb ? "ok" : strerror(errno)))
		goto out;

	qa.send_cq = ibv_cq_ex_to_cq(cqa);
	qa.recv_cq = qa.send_cq;
	qa.send_ops_flags |= IBV_QP_EX_WITH_TSO;
	errno = 0;
	q2 = ibv_create_qp_ex(a->ctx, &qa);
	mtest_check(!q2 && errno == EOPNOTSUPP,
		    "create_qp_ex with TSO: EOPNOTSUPP (%s)", strerror(errno));
	if (q2)
		ibv_destroy_qp(q2);
	qa.send_ops_flags &= ~(uint64_t)IBV_QP_EX_WITH_TSO;
	qpa = ibv_create_qp_ex(a->ctx, &qa);
	qpb = mtest_create_rc_qp(b->pd, ibv_cq_ex_to_cq(cqb),
				 ibv_cq_ex_to_cq(cqb), &bcap);
	if (!mtest_check(qpa && qpb, "create_qp_ex on A: %s",
			 qpa && qpb ? "ok" : strerror(errno)))
		goto out;
	x = ibv_qp_to_qp_ex(qpa);
	mtest_check(x && !ibv_qp_to_qp_ex(qpb),
		    "ibv_qp_to_qp_ex: the extended QP has the wr ops, the other none");
	{
		struct mtest_path p = {
			.dest_qpn = qpb->qp_num, .rq_psn = 0x300, .sq_psn = 0x300,
			.dgid = b->gid, .sgid_index = (uint8_t)a->gid_index,
			.port = 1, .mtu = IBV_MTU_1024, .rd_atomic = 4,
			.timeout = 14, .retry_cnt = 7,
		};
		int acc = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC;

		ok = !mtest_qp_init(qpa, 1, acc) && !mtest_qp_rtr(qpa, &p) &&
		     !mtest_qp_rts(qpa, &p);
		p.dest_qpn = qpa->qp_num;
		p.dgid = a->gid;
		p.sgid_index = (uint8_t)b->gid_index;
		ok = ok && !mtest_qp_init(qpb, 1, acc) &&
		     !mtest_qp_rtr(qpb, &p) && !mtest_qp_rts(qpb, &p);
	}
	if (!mtest_check(ok && x, "the extended QP pair connects"))
		goto out;

	fill(a->buf, 4096, 0x21);
	fill(inl, sizeof(inl), 0x42);
	memset(b->buf, 0, 8192);
	*word = 1000;
	mtest_post_recv(qpb, 77, b->buf + 4096, 256, b->mr->lkey);
	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(x, b->mr->rkey, (uintptr_t)b->buf);
	sg[0] = (struct ibv_sge){ (uintptr_t)a->buf, 1500, a->mr->lkey };
	sg[1] = (struct ibv_sge){ (uintptr_t)a->buf + 1500, 2596, a->mr->lkey };
	ibv_wr_set_sge_list(x, 2, sg);
	x->wr_id = 2;
	ibv_wr_send_imm(x, htonl(0x5151));
	ibv_wr_set_inline_data(x, inl, sizeof(inl));
	x->wr_id = 3;
	ibv_wr_rdma_read(x, b->mr->rkey, (uintptr_t)b->buf);
	ibv_wr_set_sge(x, a->mr->lkey, (uintptr_t)a->buf + 16384, 4096);
	x->wr_id = 4;
	ibv_wr_atomic_fetch_add(x, b->mr->rkey, (uintptr_t)word, 5);
	ibv_wr_set_sge(x, a->mr->lkey, (uintptr_t)a->buf + 24576, 8);
	ret = ibv_wr_complete(x);
	mtest_check(!ret, "A: ibv_wr_complete of 4 WRs: %s", strerror(ret));
	n = poll_ex(cqa, wc, 4, TIMEOUT_MS);
	ok = n == 4;
	for (i = 0; ok && i < 4; i++)
		ok = wc[i].status == IBV_WC_SUCCESS &&
		     wc[i].wr_id == (uint64_t)i + 1 && wc[i].qp_num == qpa->qp_num;
	mtest_check(ok, "A: 4 completions, in order, through start/next/end_poll (%d)",
		    n);
	mtest_check(ok && wc[0].opcode == IBV_WC_RDMA_WRITE &&
		    wc[1].opcode == IBV_WC_SEND &&
		    wc[2].opcode == IBV_WC_RDMA_READ && wc[2].byte_len == 4096 &&
		    wc[3].opcode == IBV_WC_FETCH_ADD,
		    "A: opcodes WRITE, SEND, READ (4096 bytes), FETCH_ADD");
	mtest_check(!memcmp(b->buf, a->buf, 4096) &&
		    !memcmp(a->buf + 16384, a->buf, 4096),
		    "the WRITE's two SGEs landed, the READ brought them back");
	mtest_check(*word == 1005 && *(uint64_t *)(a->buf + 24576) == 1000,
		    "FETCH_ADD: remote 1000 -> 1005, the old value returned");
	n = poll_ex(cqb, wc, 1, TIMEOUT_MS);
	mtest_check(n == 1 && wc[0].status == IBV_WC_SUCCESS &&
		    wc[0].opcode == IBV_WC_RECV && wc[0].wr_id == 77 &&
		    wc[0].byte_len == sizeof(inl) &&
		    (wc[0].wc_flags & IBV_WC_WITH_IMM) &&
		    ntohl(wc[0].imm_data) == 0x5151 &&
		    wc[0].qp_num == qpb->qp_num &&
		    !memcmp(b->buf + 4096, inl, sizeof(inl)),
		    "B: the inline SEND_WITH_IMM, read through ibv_wc_read_*");

	/* a batch with one bad WR posts nothing; so does wr_abort */
	ibv_wr_start(x);
	x->wr_id = 10;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, a->mr->lkey, (uintptr_t)a->buf, 16);
	x->wr_id = 11;
	ibv_wr_send(x);
	sg[2] = sg[1];
	ibv_wr_set_sge_list(x, 3, sg);
	ret = ibv_wr_complete(x);
	mtest_check(ret == EINVAL, "A: a batch with 3 SGEs (of 2): EINVAL (%s)",
		    strerror(ret));
	ibv_wr_start(x);
	x->wr_id = 12;
	ibv_wr_send(x);
	ibv_wr_abort(x);
	ibv_wr_start(x);
	for (i = 0; i < 9; i++) {
		x->wr_id = 20 + i;
		ibv_wr_send(x);
	}
	ret = ibv_wr_complete(x);
	mtest_check(ret == ENOMEM, "A: 9 WRs into an SQ of 8: ENOMEM (%s)",
		    strerror(ret));
	n = poll_ex(cqa, wc, 1, 300);
	mtest_check(n == 0, "A: nothing of the failed or aborted batches was posted (%d)",
		    n);
	/* and the QP still works */
	ibv_wr_start(x);
	x->wr_id = 30;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, a->mr->lkey, (uintptr_t)a->buf, 16);
	ret = ibv_wr_complete(x);
	mtest_post_recv(qpb, 78, b->buf + 4096, 256, b->mr->lkey);
	n = poll_ex(cqa, wc, 1, TIMEOUT_MS);
	mtest_check(!ret && n == 1 && wc[0].wr_id == 30 &&
		    wc[0].status == IBV_WC_SUCCESS,
		    "A: a good batch after them completes");
	poll_ex(cqb, wc, 1, TIMEOUT_MS);
out:
	if (qpa)
		ibv_destroy_qp(qpa);
	if (qpb)
		ibv_destroy_qp(qpb);
	if (cqa)
		mtest_check(!ibv_destroy_cq(ibv_cq_ex_to_cq(cqa)),
			    "A: destroy the extended CQ");
	if (cqb)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cqb));
}

/*
 * ibv_rereg_mr on B's region: new access, then a new range; each time A's
 * WRITE through the new rkey lands where the region now is.  A region may
 * be registered with IBV_ACCESS_MW_BIND (windows: mw_smoke).
 */
static void test_rereg(struct end *a, struct end *b)
{
	uint8_t *buf = mtest_alloc(8192);
	struct ibv_wc wc;
	struct ibv_mr *mr;
	uint32_t rkey0, rkey1;
	int ret;

	printf("# rereg_mr, MW_BIND\n");
	mr = ibv_reg_mr(b->pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND);
	if (!mtest_check(mr, "B: reg_mr with IBV_ACCESS_MW_BIND: %s",
			 mr ? "ok" : strerror(errno))) {
		free(buf);
		return;
	}

	rkey0 = mr->rkey;
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	rkey1 = mr->rkey;
	mtest_check(!ret && rkey1 != rkey0,
		    "B: rereg_mr(CHANGE_ACCESS) to REMOTE_WRITE: %d, rkey %#x -> %#x",
		    ret, rkey0, rkey1);
	fill(a->buf, 200, 0x61);
	mtest_check(!mtest_post_send(a->qp, 401, IBV_WR_RDMA_WRITE, a->buf, 200,
				     a->mr->lkey, (uintptr_t)buf, mr->rkey, 0) &&
		    mtest_wait_wc(a->cq, &wc, TIMEOUT_MS) &&
		    wc.status == IBV_WC_SUCCESS && !memcmp(buf, a->buf, 200),
		    "A: a WRITE through the new rkey lands");

	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
			   buf + 4096, 4096, 0);
	mtest_check(!ret && mr->addr == buf + 4096 && mr->rkey != rkey1,
		    "B: rereg_mr(CHANGE_TRANSLATION) to the next page: %d", ret);
	fill(a->buf, 300, 0x62);
	mtest_check(!mtest_post_send(a->qp, 402, IBV_WR_RDMA_WRITE, a->buf, 300,
				     a->mr->lkey, (uintptr_t)buf + 4096,
				     mr->rkey, 0) &&
		    mtest_wait_wc(a->cq, &wc, TIMEOUT_MS) &&
		    wc.status == IBV_WC_SUCCESS &&
		    !memcmp(buf + 4096, a->buf, 300) && buf[0] == 0x61,
		    "A: a WRITE through the newest rkey lands in the new range");
	mtest_check(!ibv_dereg_mr(mr), "B: dereg the re-registered MR");
	free(buf);
}

/*
 * A peer that connects late: A reaches RTS and SENDs while B's QP is
 * still in INIT (its receive posted, as Gloo and NCCL post before they
 * connect); B's responder drops those packets.  B connects 300 ms later
 * and SENDs too: both SENDs must complete (A's through its
 * retransmissions), as on any RC transport.
 */
static void test_late_peer(struct end *a, struct end *b)
{
	struct ibv_qp_cap cap = { .max_send_wr = 4, .max_recv_wr = 4,
				  .max_send_sge = 1, .max_recv_sge = 1 };
	struct mtest_path pa = {
		.rq_psn = 0x8b4567, .sq_psn = 0x8b4567, .dgid = b->gid,
		.sgid_index = (uint8_t)a->gid_index, .port = 1,
		.mtu = IBV_MTU_1024, .rd_atomic = 1, .timeout = 14,
		.retry_cnt = 7,
	};
	struct mtest_path pb = pa;
	struct ibv_qp *qa, *qb;
	struct ibv_wc wc;
	bool oka, okb;

	printf("# a peer that connects late\n");
	qa = mtest_create_rc_qp(a->pd, a->cq, a->cq, &cap);
	qb = mtest_create_rc_qp(b->pd, b->cq, b->cq, &cap);
	if (!mtest_check(qa && qb, "two QPs"))
		return;
	pa.dest_qpn = qb->qp_num;
	pb.dest_qpn = qa->qp_num;
	pb.dgid = a->gid;
	pb.sgid_index = (uint8_t)b->gid_index;
	mtest_check(!mtest_qp_init(qa, 1, IBV_ACCESS_REMOTE_WRITE) &&
		    !mtest_qp_init(qb, 1, IBV_ACCESS_REMOTE_WRITE) &&
		    !mtest_post_recv(qa, 1, a->buf + 8192, 256, a->mr->lkey) &&
		    !mtest_post_recv(qb, 2, b->buf + 8192, 256, b->mr->lkey) &&
		    !mtest_qp_rtr(qa, &pa) && !mtest_qp_rts(qa, &pa),
		    "A in RTS, B in INIT, both with a receive posted");
	fill(a->buf, 64, 0x71);
	fill(b->buf, 64, 0x72);
	mtest_check(!mtest_post_send(qa, 11, IBV_WR_SEND_WITH_IMM, a->buf, 64,
				     a->mr->lkey, 0, 0, 7),
		    "A: SEND_WITH_IMM posted while B is in INIT");
	mtest_sleep_us(300000);
	mtest_check(!mtest_qp_rtr(qb, &pb) && !mtest_qp_rts(qb, &pb) &&
		    !mtest_post_send(qb, 12, IBV_WR_SEND_WITH_IMM, b->buf, 64,
				     b->mr->lkey, 0, 0, 8),
		    "B: connected 300 ms later, SEND_WITH_IMM posted");
	oka = false;
	okb = false;
	for (int i = 0; i < 2; i++) {
		if (mtest_wait_wc(a->cq, &wc, 5000)) {
			if (wc.status != IBV_WC_SUCCESS)
				print_wc("A", &wc);
			oka = oka || (wc.wr_id == 11 && !wc.status);
		}
	}
	for (int i = 0; i < 2; i++) {
		if (mtest_wait_wc(b->cq, &wc, 5000)) {
			if (wc.status != IBV_WC_SUCCESS)
				print_wc("B", &wc);
			okb = okb || (wc.wr_id == 12 && !wc.status);
		}
	}
	mtest_check(oka && okb, "both SENDs complete (A %d, B %d)", oka, okb);
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	mtest_drain_cq(a->cq);
	mtest_drain_cq(b->cq);
}

/* Does this process hold CAP_NET_RAW (bit 13 of CapEff)? */
static bool have_net_raw(void)
{
	unsigned long long eff = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	return eff & (1ULL << 13);
}

#define UD_QKEY 0x1234
#define UD_LEN 1000
#define UD_GRH 40

/* A UD QP of @e, in RTS, Q_Key UD_QKEY */
static struct ibv_qp *ud_qp(struct end *e)
{
	struct ibv_qp_init_attr qi = {
		.send_cq = e->cq, .recv_cq = e->cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				  .qkey = UD_QKEY };
	struct ibv_qp *qp = ibv_create_qp(e->pd, &qi);

	if (!qp)
		return NULL;
	if (ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		goto err;
	at.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &at, IBV_QP_STATE))
		goto err;
	at.qp_state = IBV_QPS_RTS;
	at.sq_psn = 0x77;
	if (ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_SQ_PSN))
		goto err;
	return qp;
err:
	ibv_destroy_qp(qp);
	return NULL;
}

/* Post a UD send of @len bytes from @a's buffer through @ah to @dqpn */
static int ud_send(struct end *a, struct ibv_qp *qp, struct ibv_ah *ah,
		   uint32_t dqpn, uint32_t qkey, uint32_t len, uint64_t id)
{
	struct ibv_sge sg = { (uintptr_t)a->buf, len, a->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sg, .num_sge = 1,
		.opcode = IBV_WR_SEND_WITH_IMM, .send_flags = IBV_SEND_SIGNALED,
		.imm_data = htonl(0xabc0 + (uint32_t)id),
	};
	struct ibv_send_wr *bad;

	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = dqpn;
	wr.wr.ud.remote_qkey = qkey;
	return ibv_post_send(qp, &wr, &bad);
}

/*
 * UD from userspace: datagrams through address handles created here,
 * received behind the 40-byte GRH, the Q_Key checked (a WR's Q_Key with
 * the top bit set means the QP's), an AH of another PD refused, and a
 * controlled Q_Key refused without CAP_NET_RAW.
 */
static void test_ud(struct end *a, struct end *b)
{
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = b->gid, .sgid_index = (uint8_t)a->gid_index,
			 .hop_limit = 64 },
	};
	struct ibv_qp_attr at = { .qkey = 0x80010000 };
	struct ibv_qp *qa = NULL, *qb = NULL;
	struct ibv_ah *ah = NULL, *ah2 = NULL;
	struct ibv_pd *pd2 = NULL;
	uint8_t *rbuf = b->buf + 40960;
	struct ibv_wc wc[2];
	bool cap = have_net_raw();
	int i, n, ret;

	printf("# UD from userspace\n");
	qa = ud_qp(a);
	qb = ud_qp(b);
	ah = ibv_create_ah(a->pd, &aa);
	if (!mtest_check(qa && qb && ah, "UD QPs in RTS and an AH to B: %s",
			 qa && qb && ah ? "ok" : strerror(errno)))
		goto out;
	for (i = 0; i < 3; i++)
		mtest_post_recv(qb, 200 + i, rbuf + i * 2048, UD_GRH + UD_LEN,
				b->mr->lkey);
	fill(a->buf, UD_LEN, 0x5d);
	memset(rbuf, 0, 3 * 2048);
	mtest_check(!ud_send(a, qa, ah, qb->qp_num, UD_QKEY, UD_LEN, 1),
		    "A: UD send posted");
	n = mtest_poll(a->cq, wc, 1, TIMEOUT_MS);
	mtest_check(n == 1 && wc[0].status == IBV_WC_SUCCESS && wc[0].wr_id == 1,
		    "A: UD send completed");
	n = mtest_poll(b->cq, wc, 1, TIMEOUT_MS);
	if (n == 1)
		print_wc("B's UD receive", &wc[0]);
	mtest_check(n == 1 && wc[0].status == IBV_WC_SUCCESS &&
		    wc[0].opcode == IBV_WC_RECV && wc[0].wr_id == 200 &&
		    wc[0].byte_len == UD_GRH + UD_LEN &&
		    (wc[0].wc_flags & IBV_WC_GRH) &&
		    (wc[0].wc_flags & IBV_WC_WITH_IMM) &&
		    ntohl(wc[0].imm_data) == 0xabc1 &&
		    wc[0].src_qp == qa->qp_num,
		    "B: RECV of %u bytes behind the GRH, immediate, source QP",
		    UD_LEN);
	mtest_check(!memcmp(rbuf + UD_GRH, a->buf, UD_LEN),
		    "B: the datagram's data after the GRH");
	mtest_check(n == 1 && !memcmp(rbuf + 20 + 12, &a->gid.raw[12], 4),
		    "B: the GRH holds A's IPv4 source address");

	/* a wrong Q_Key is dropped; a WR Q_Key with the top bit: the QP's */
	mtest_check(!ud_send(a, qa, ah, qb->qp_num, 0x9999, UD_LEN, 2),
		    "A: UD send with the wrong Q_Key posted");
	mtest_poll(a->cq, wc, 1, TIMEOUT_MS);
	n = mtest_poll(b->cq, wc, 1, 300);
	mtest_check(n == 0, "B: the datagram with the wrong Q_Key is dropped (%d)",
		    n);
	mtest_check(!ud_send(a, qa, ah, qb->qp_num, 0x80000000, UD_LEN, 3),
		    "A: UD send with Q_Key 0x80000000 (the QP's) posted");
	mtest_poll(a->cq, wc, 1, TIMEOUT_MS);
	n = mtest_poll(b->cq, wc, 1, TIMEOUT_MS);
	mtest_check(n == 1 && wc[0].status == IBV_WC_SUCCESS &&
		    ntohl(wc[0].imm_data) == 0xabc3,
		    "B: ... delivered with the sender QP's Q_Key");

	/* an AH of another PD */
	pd2 = ibv_alloc_pd(a->ctx);
	ah2 = pd2 ? ibv_create_ah(pd2, &aa) : NULL;
	if (ah2) {
		ret = ud_send(a, qa, ah2, qb->qp_num, UD_QKEY, UD_LEN, 4);
		mtest_check(ret == EINVAL, "A: UD send through another PD's AH: EINVAL (%s)",
			    strerror(ret));
	} else {
		mtest_fail("AH in a second PD: %s", strerror(errno));
	}

	/* a controlled Q_Key needs CAP_NET_RAW */
	ret = ibv_modify_qp(qa, &at, IBV_QP_QKEY);
	if (cap)
		mtest_check(!ret, "A: Q_Key 0x80010000 with CAP_NET_RAW (%s)",
			    strerror(ret));
	else
		mtest_check(ret == EPERM,
			    "A: Q_Key 0x80010000 without CAP_NET_RAW: EPERM (%s)",
			    strerror(ret));
out:
	if (ah2)
		ibv_destroy_ah(ah2);
	if (pd2)
		ibv_dealloc_pd(pd2);
	if (ah)
		ibv_destroy_ah(ah);
	if (qa)
		ibv_destroy_qp(qa);
	if (qb)
		ibv_destroy_qp(qb);
	mtest_drain_cq(a->cq);
	mtest_drain_cq(b->cq);
}

static void test_refused(struct end *a)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = a->cq, .recv_cq = a->cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1, .oflags = O_CREAT,
	};
	struct ibv_device_attr da;
	struct ibv_xrcd *xrcd;
	struct ibv_srq *srq;
	struct ibv_qp *qp, *qp2;
	struct ibv_mr *mr;
	int i;

	printf("# refused verbs\n");
	errno = 0;
	qa.qp_type = IBV_QPT_RAW_PACKET;
	qp = ibv_create_qp(a->pd, &qa);
	mtest_check(!qp && errno == EOPNOTSUPP, "RAW_PACKET QP: EOPNOTSUPP (%s)",
		    strerror(errno));
	qa.qp_type = IBV_QPT_UD;
	/* not offered: Documentation/mroce.rst, "Verbs not offered" */
	for (i = 0; i < 2; i++) {
		struct ibv_qp_init_attr q2 = qa;

		q2.qp_type = i ? IBV_QPT_XRC_SEND : IBV_QPT_UC;
		errno = 0;
		qp2 = ibv_create_qp(a->pd, &q2);
		mtest_check(!qp2 && errno == EOPNOTSUPP, "%s QP: EOPNOTSUPP (%s)",
			    i ? "XRC_SEND" : "UC", strerror(errno));
		if (qp2)
			ibv_destroy_qp(qp2);
	}
	errno = 0;
	xrcd = ibv_open_xrcd(a->pd->context, &xa);
	mtest_check(!xrcd && errno == EOPNOTSUPP, "open_xrcd: EOPNOTSUPP (%s)",
		    strerror(errno));
	if (xrcd)
		ibv_close_xrcd(xrcd);
	mtest_check(!ibv_query_device(a->pd->context, &da) &&
		    !(da.device_cap_flags & IBV_DEVICE_XRC),
		    "the device claims no XRC");
	errno = 0;
	sa.attr.max_wr = 0;
	srq = ibv_create_srq(a->pd, &sa);
	mtest_check(!srq && errno == EINVAL, "create_srq with max_wr 0: EINVAL (%s)",
		    strerror(errno));
	if (srq)
		ibv_destroy_srq(srq);
	sa.attr.max_wr = 4;
	sa.attr.max_sge = 9;
	errno = 0;
	srq = ibv_create_srq(a->pd, &sa);
	mtest_check(!srq && errno == EINVAL, "create_srq with 9 SGEs: EINVAL (%s)",
		    strerror(errno));
	if (srq)
		ibv_destroy_srq(srq);
	errno = 0;
	mr = ibv_reg_dmabuf_mr(a->pd, 0, 4096, 0, 0, IBV_ACCESS_LOCAL_WRITE);
	mtest_check(!mr && errno == EOPNOTSUPP, "reg_dmabuf_mr: EOPNOTSUPP (%s)",
		    strerror(errno));
	if (qp)
		ibv_destroy_qp(qp);
	if (mr)
		ibv_dereg_mr(mr);
}

/* MROCE_CC names the congestion control of the QPs created afterwards. */
static void test_cc_choice(struct end *a)
{
	static const struct {
		const char *name;
		int err;	/* 0: the QP is created */
	} cases[] = {
		{ "dcqcn", 0 },
		{ "none", 0 },
		{ "metaroce", 0 },
		{ "", 0 },			/* the device's default */
		{ "bogus", ENOENT },
		{ "0123456789abcdef", EINVAL },	/* 16 characters: too long */
	};
	struct ibv_qp_init_attr qa = {
		.send_cq = a->cq, .recv_cq = a->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	unsigned int i;

	printf("# congestion control per QP (MROCE_CC)\n");
	for (i = 0; i < MTEST_ARRAY_SIZE(cases); i++) {
		const char *res;
		struct ibv_qp *qp;

		setenv("MROCE_CC", cases[i].name, 1);
		errno = 0;
		qp = ibv_create_qp(a->pd, &qa);
		res = qp ? "created" : strerror(errno);
		if (cases[i].err)
			mtest_check(!qp && errno == cases[i].err,
				    "MROCE_CC=\"%s\": create_qp fails with %s (%s)",
				    cases[i].name, strerror(cases[i].err), res);
		else
			mtest_check(qp, "MROCE_CC=\"%s\": create_qp (%s)",
				    cases[i].name, res);
		if (qp)
			ibv_destroy_qp(qp);
	}
	unsetenv("MROCE_CC");
}

static void teardown(struct end *e)
{
	if (e->qp)
		mtest_check(!ibv_destroy_qp(e->qp), "%s: destroy_qp", e->name);
	if (e->mr)
		mtest_check(!ibv_dereg_mr(e->mr), "%s: dereg_mr", e->name);
	if (e->cq)
		mtest_check(!ibv_destroy_cq(e->cq), "%s: destroy_cq", e->name);
	if (e->ch)
		ibv_destroy_comp_channel(e->ch);
	if (e->pd)
		ibv_dealloc_pd(e->pd);
	if (e->ctx)
		ibv_close_device(e->ctx);
	free(e->buf);
}

int main(int argc, char **argv)
{
	struct end a = {}, b = {};
	int count;

	mtest_init("dp_smoke", 0);
	if (argc < 3) {
		fprintf(stderr, "usage: %s DEV_A DEV_B [COUNT [ud]]\n", argv[0]);
		return 2;
	}
	a.name = argv[1];
	b.name = argv[2];
	count = argc > 3 ? atoi(argv[3]) : 1000;

	/* "ud": only the UD section (t-15 runs it without CAP_NET_RAW too) */
	if (argc > 4 && !strcmp(argv[4], "ud")) {
		if (setup_end(&a) && setup_end(&b))
			test_ud(&a, &b);
	} else if (setup_end(&a) && setup_end(&b) && connect_qp(&a, &b) &&
		   connect_qp(&b, &a)) {
		test_late_peer(&a, &b);
		test_ud(&a, &b);
		test_ex(&a, &b);
		test_send(&a, &b);
		test_rdma(&a, &b);
		test_rereg(&a, &b);
		test_events_resize(&a, &b);
		test_stream(&a, &b, count);
		test_srq(&a, &b);
		test_refused(&a);
		test_cc_choice(&a);
		test_errors(&a, &b);
	}
	teardown(&a);
	teardown(&b);
	return mtest_summary();
}
