// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * dp_smoke - data path between two mroce devices, in one process.
 *
 * usage: dp_smoke DEV_A DEV_B [COUNT]
 *
 * RDMA devices are visible from every network namespace, so one process
 * can open both ends (e.g. mroce1 on h1's veth1 and mroce2 on h2's veth2)
 * and connect an RC QP on each to the other: no out-of-band exchange.  The
 * GID used is the RoCE v2 IPv4-mapped one (::ffff:a.b.c.d) of each device.
 *
 * Checks SEND/RECV (SGE list, inline, immediate), RDMA WRITE (+IMM into a
 * receive with no SGE), READ, both atomics, CQ events, resize_cq with
 * completions pending, COUNT pipelined sends through the small rings, an
 * access error and the flush that follows, and the verbs mroce refuses.
 * One line per check and "N passed, N failed"; exit 0 only if all passed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#define BUF_SIZE (64 * 1024)
#define QP_WR 16		/* small: COUNT sends wrap the rings often */
#define CQ_SIZE 64
#define TIMEOUT_MS 5000
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static unsigned int passed, failed;

static bool check(bool ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static bool check(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", ok ? "ok  " : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (ok)
		passed++;
	else
		failed++;
	return ok;
}

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

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

/* Index of the RoCE v2 GID ::ffff:a.b.c.d, or -1. */
static int find_ipv4_gid(struct ibv_context *ctx, union ibv_gid *gid)
{
	struct ibv_port_attr pa;

	if (ibv_query_port(ctx, 1, &pa))
		return -1;
	for (int i = 0; i < pa.gid_tbl_len; i++) {
		struct ibv_gid_entry e;

		if (ibv_query_gid_ex(ctx, 1, i, &e, 0))
			continue;
		if (e.gid_type != IBV_GID_TYPE_ROCE_V2)
			continue;
		if (e.gid.global.subnet_prefix == 0 &&
		    (be64toh(e.gid.global.interface_id) >> 32) == 0xffff) {
			*gid = e.gid;
			return i;
		}
	}
	return -1;
}

static bool setup_end(struct end *e)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = QP_WR, .max_recv_wr = QP_WR,
			 .max_send_sge = 4, .max_recv_sge = 4,
			 .max_inline_data = 64 },
	};
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
		     IBV_ACCESS_RELAXED_ORDERING;

	e->ctx = open_dev(e->name);
	if (!check(e->ctx, "%s: open", e->name))
		return false;
	e->gid_index = find_ipv4_gid(e->ctx, &e->gid);
	if (!check(e->gid_index >= 0, "%s: RoCE v2 IPv4 GID at index %d",
		   e->name, e->gid_index))
		return false;
	e->pd = ibv_alloc_pd(e->ctx);
	e->ch = ibv_create_comp_channel(e->ctx);
	if (!check(e->pd && e->ch, "%s: PD and completion channel", e->name))
		return false;
	e->cq = ibv_create_cq(e->ctx, CQ_SIZE, NULL, e->ch, 0);
	if (!check(e->cq, "%s: create_cq(%d): %s", e->name, CQ_SIZE,
		   e->cq ? "ok" : strerror(errno)))
		return false;
	check(e->cq->cqe >= CQ_SIZE, "%s: CQ has %d >= %d entries", e->name,
	      e->cq->cqe, CQ_SIZE);
	e->buf = aligned_alloc(4096, BUF_SIZE);
	memset(e->buf, 0, BUF_SIZE);
	e->mr = ibv_reg_mr(e->pd, e->buf, BUF_SIZE, access);
	if (!check(e->mr, "%s: reg_mr 64 KiB with RELAXED_ORDERING: %s",
		   e->name, e->mr ? "ok" : strerror(errno)))
		return false;
	qa.send_cq = e->cq;
	qa.recv_cq = e->cq;
	e->qp = ibv_create_qp(e->pd, &qa);
	if (!check(e->qp, "%s: create_qp RC: %s", e->name,
		   e->qp ? "ok" : strerror(errno)))
		return false;
	check(qa.cap.max_send_wr >= QP_WR && qa.cap.max_recv_wr >= QP_WR &&
	      qa.cap.max_send_sge >= 4 && qa.cap.max_recv_sge >= 4 &&
	      qa.cap.max_inline_data >= 64,
	      "%s: QP %#x caps wr %u/%u sge %u/%u inline %u", e->name,
	      e->qp->qp_num, qa.cap.max_send_wr, qa.cap.max_recv_wr,
	      qa.cap.max_send_sge, qa.cap.max_recv_sge,
	      qa.cap.max_inline_data);
	return true;
}

static bool connect_qp(struct end *e, struct end *peer)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};
	int ret;

	ret = ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (!check(!ret, "%s: RESET->INIT: %s", e->name, strerror(ret)))
		return false;

	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = peer->qp->qp_num, .rq_psn = 0x100,
		.max_dest_rd_atomic = 4, .min_rnr_timer = 12,
		.ah_attr = {
			.is_global = 1, .port_num = 1,
			.grh = { .dgid = peer->gid, .sgid_index = e->gid_index,
				 .hop_limit = 64 },
		},
	};
	ret = ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_MIN_RNR_TIMER);
	if (!check(!ret, "%s: INIT->RTR: %s", e->name, strerror(ret)))
		return false;

	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7,
		.rnr_retry = 7, .sq_psn = 0x100, .max_rd_atomic = 4,
	};
	ret = ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			    IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	return check(!ret, "%s: RTR->RTS: %s", e->name, strerror(ret));
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 +
	       (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Poll exactly n completions (or time out); returns how many came. */
static int poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n)
{
	struct timespec t0;
	int got = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (got < n && ms_since(&t0) < TIMEOUT_MS) {
		int r = ibv_poll_cq(cq, n - got, wc + got);

		if (r < 0)
			return r;
		got += r;
	}
	return got;
}

static void print_wc(const char *what, const struct ibv_wc *wc)
{
	printf("#   %s: wr_id %" PRIu64 " status %s opcode %d len %u", what,
	       wc->wr_id, ibv_wc_status_str(wc->status), wc->opcode,
	       wc->byte_len);
	printf(" qp %#x imm %#x flags %#x vendor_err %#x\n", wc->qp_num,
	       ntohl(wc->imm_data), wc->wc_flags, wc->vendor_err);
}

static int post_recv(struct end *e, uint64_t id, uint32_t off, uint32_t len,
		     int nsge)
{
	struct ibv_sge sge = { .addr = (uintptr_t)e->buf + off, .length = len,
			       .lkey = e->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge,
				  .num_sge = nsge }, *bad;

	return ibv_post_recv(e->qp, &wr, &bad);
}

static int post_send(struct end *e, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;

	return ibv_post_send(e->qp, wr, &bad);
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
	check(!post_recv(b, 10, 0, 8192, 1), "B: post_recv 8 KiB");
	/* three SGEs: 1000 + 3000 + 2000 bytes */
	sg[0] = (struct ibv_sge){ (uintptr_t)a->buf, 1000, a->mr->lkey };
	sg[1] = (struct ibv_sge){ (uintptr_t)a->buf + 1000, 3000, a->mr->lkey };
	sg[2] = (struct ibv_sge){ (uintptr_t)a->buf + 4000, 2000, a->mr->lkey };
	wr = (struct ibv_send_wr){ .wr_id = 11, .sg_list = sg, .num_sge = 3,
				   .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED };
	check(!post_send(a, &wr), "A: SEND 6000 bytes in 3 SGEs");
	n = poll_n(a->cq, wc, 1);
	if (check(n == 1 && wc[0].status == IBV_WC_SUCCESS &&
		  wc[0].opcode == IBV_WC_SEND && wc[0].wr_id == 11,
		  "A: SEND completion (got %d)", n) == false && n == 1)
		print_wc("A", &wc[0]);
	n = poll_n(b->cq, wc, 1);
	if (!check(n == 1 && wc[0].status == IBV_WC_SUCCESS &&
		   wc[0].opcode == IBV_WC_RECV && wc[0].wr_id == 10 &&
		   wc[0].byte_len == 6000 && wc[0].qp_num == b->qp->qp_num &&
		   !(wc[0].wc_flags & IBV_WC_WITH_IMM),
		   "B: RECV completion, 6000 bytes (got %d)", n) && n == 1)
		print_wc("B", &wc[0]);
	check(!memcmp(a->buf, b->buf, 6000), "B: payload intact");

	fill(a->buf + 100, 50, 9);
	check(!post_recv(b, 12, 8192, 1024, 1), "B: post_recv");
	sg[0] = (struct ibv_sge){ (uintptr_t)a->buf + 100, 50, 0 };
	wr = (struct ibv_send_wr){ .wr_id = 13, .sg_list = sg, .num_sge = 1,
				   .opcode = IBV_WR_SEND_WITH_IMM,
				   .imm_data = htonl(0xfeedf00d),
				   .send_flags = IBV_SEND_SIGNALED |
						 IBV_SEND_INLINE };
	check(!post_send(a, &wr), "A: inline SEND_WITH_IMM, 50 bytes");
	memset(a->buf + 100, 0, 50);	/* inline: buffer reusable at once */
	n = poll_n(a->cq, wc, 1);
	check(n == 1 && wc[0].status == IBV_WC_SUCCESS && wc[0].wr_id == 13,
	      "A: completion");
	n = poll_n(b->cq, wc, 1);
	if (!check(n == 1 && wc[0].status == IBV_WC_SUCCESS &&
		   wc[0].opcode == IBV_WC_RECV && wc[0].byte_len == 50 &&
		   (wc[0].wc_flags & IBV_WC_WITH_IMM) &&
		   wc[0].imm_data == htonl(0xfeedf00d),
		   "B: RECV with IMM 0xfeedf00d, 50 bytes") && n == 1)
		print_wc("B", &wc[0]);
	fill(a->buf + 100, 50, 9);
	check(!memcmp(a->buf + 100, b->buf + 8192, 50),
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
	check(!post_send(a, &wr), "A: RDMA_WRITE 8 KiB");
	n = poll_n(a->cq, wc, 1);
	if (!check(n == 1 && wc[0].status == IBV_WC_SUCCESS &&
		   wc[0].opcode == IBV_WC_RDMA_WRITE, "A: WRITE completion") &&
	    n == 1)
		print_wc("A", &wc[0]);
	check(!memcmp(a->buf, b->buf + 16384, 8192), "B: written data intact");

	/* WRITE_WITH_IMM consumes a receive; that one has no SGE. */
	check(!post_recv(b, 21, 0, 0, 0), "B: post_recv with 0 SGEs");
	sg = (struct ibv_sge){ (uintptr_t)a->buf, 512, a->mr->lkey };
	wr.wr_id = 22;
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.imm_data = htonl(42);
	wr.wr.rdma.remote_addr = (uintptr_t)b->buf + 32768;
	check(!post_send(a, &wr), "A: RDMA_WRITE_WITH_IMM 512 bytes");
	n = poll_n(a->cq, wc, 1);
	check(n == 1 && wc[0].status == IBV_WC_SUCCESS, "A: completion");
	n = poll_n(b->cq, wc, 1);
	if (!check(n == 1 && wc[0].status == IBV_WC_SUCCESS &&
		   wc[0].opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
		   wc[0].wr_id == 21 && wc[0].imm_data == htonl(42) &&
		   (wc[0].wc_flags & IBV_WC_WITH_IMM),
		   "B: RECV_RDMA_WITH_IMM, imm 42") && n == 1)
		print_wc("B", &wc[0]);
	check(!memcmp(a->buf, b->buf + 32768, 512), "B: data intact");

	fill(b->buf + 40960, 4000, 5);
	memset(a->buf + 20000, 0, 4000);
	sg = (struct ibv_sge){ (uintptr_t)a->buf + 20000, 4000, a->mr->lkey };
	wr = (struct ibv_send_wr){ .wr_id = 23, .sg_list = &sg, .num_sge = 1,
				   .opcode = IBV_WR_RDMA_READ,
				   .send_flags = IBV_SEND_SIGNALED,
				   .wr.rdma = { (uintptr_t)b->buf + 40960,
						b->mr->rkey } };
	check(!post_send(a, &wr), "A: RDMA_READ 4000 bytes");
	n = poll_n(a->cq, wc, 1);
	if (!check(n == 1 && wc[0].status == IBV_WC_SUCCESS &&
		   wc[0].opcode == IBV_WC_RDMA_READ && wc[0].byte_len == 4000,
		   "A: READ completion") && n == 1)
		print_wc("A", &wc[0]);
	check(!memcmp(a->buf + 20000, b->buf + 40960, 4000),
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
	check(!post_send(a, &wr), "A: FETCH_AND_ADD 5");
	n = poll_n(a->cq, wc, 1);
	if (!check(n == 1 && wc[0].status == IBV_WC_SUCCESS &&
		   wc[0].opcode == IBV_WC_FETCH_ADD && *loc == 100 &&
		   *rem == 105, "A: got 100, remote now 105 (%" PRIu64
		   ", %" PRIu64 ")", *loc, *rem) && n == 1)
		print_wc("A", &wc[0]);

	wr.wr_id = 25;
	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.compare_add = 105;
	wr.wr.atomic.swap = 7;
	check(!post_send(a, &wr), "A: CMP_AND_SWP 105 -> 7");
	n = poll_n(a->cq, wc, 1);
	check(n == 1 && wc[0].status == IBV_WC_SUCCESS &&
	      wc[0].opcode == IBV_WC_COMP_SWAP && *loc == 105 && *rem == 7,
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
	check(!ibv_req_notify_cq(b->cq, 0), "B: req_notify_cq");
	check(!post_recv(b, 30, 0, 64, 1), "B: post_recv");
	wr = (struct ibv_send_wr){ .wr_id = 31, .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED };
	check(!post_send(a, &wr), "A: 0-byte SEND");
	pfd = (struct pollfd){ .fd = b->ch->fd, .events = POLLIN };
	ret = poll(&pfd, 1, TIMEOUT_MS);
	check(ret == 1, "B: completion channel readable");
	if (ret == 1) {
		ret = ibv_get_cq_event(b->ch, &ev_cq, &ev_ctx);
		check(!ret && ev_cq == b->cq, "B: event for its CQ");
		if (!ret)
			ibv_ack_cq_events(ev_cq, 1);
	}
	n = poll_n(b->cq, wc, 1);
	check(n == 1 && wc[0].byte_len == 0 && wc[0].wr_id == 30,
	      "B: 0-byte RECV completion");
	poll_n(a->cq, wc, 1);

	/* Three completions pending across a resize. */
	for (int i = 0; i < 3; i++) {
		wr.wr_id = 40 + i;
		post_recv(b, 50 + i, 0, 64, 1);
		post_send(a, &wr);
	}
	n = poll_n(b->cq, wc, 3);
	check(n == 3, "B: 3 receives done");
	{
		struct timespec ts = { 0, 200 * 1000 * 1000 };

		nanosleep(&ts, NULL);	/* let A's 3 CQEs land */
	}
	ret = ibv_resize_cq(a->cq, 4 * CQ_SIZE);
	check(!ret && a->cq->cqe >= 4 * CQ_SIZE,
	      "A: resize_cq to %d with completions pending: %s (cqe %d)",
	      4 * CQ_SIZE, strerror(ret), a->cq->cqe);
	n = poll_n(a->cq, wc, 3);
	check(n == 3 && wc[0].wr_id == 40 && wc[1].wr_id == 41 &&
	      wc[2].wr_id == 42, "A: the 3 pending completions survive, in order");
}

static void test_stream(struct end *a, struct end *b, int count)
{
	struct ibv_sge sg = { (uintptr_t)a->buf, 64, a->mr->lkey };
	struct ibv_wc wc[16];
	int sent = 0, recvd = 0, acked = 0, rposted = 0, err = 0;
	struct timespec t0;

	printf("# %d pipelined SENDs through %d-slot rings\n", count, QP_WR);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((recvd < count || acked < count) && ms_since(&t0) < 30000) {
		while (rposted < count && rposted - recvd < QP_WR &&
		       !post_recv(b, 1000 + rposted, 0, 64, 1))
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
			if (post_send(a, &wr))
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
	check(sent == count && acked == count && recvd == count && !err,
	      "sent %d, send completions %d, receives %d, errors %d", sent,
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
	check(!post_send(a, &wr), "A: RDMA_WRITE with a bad rkey");
	n = poll_n(a->cq, wc, 1);
	if (!check(n == 1 && wc[0].status == IBV_WC_REM_ACCESS_ERR,
		   "A: REM_ACCESS_ERR") && n == 1)
		print_wc("A", &wc[0]);
	memset(&qa, 0, sizeof(qa));
	n = ibv_query_qp(a->qp, &qa, IBV_QP_STATE, &qi);
	check(!n && qa.qp_state == IBV_QPS_ERR, "A: QP in ERR (state %d)",
	      qa.qp_state);
	wr.wr_id = 61;
	wr.wr.rdma.rkey = b->mr->rkey;
	check(!post_send(a, &wr), "A: post in ERR accepted");
	n = poll_n(a->cq, wc, 1);
	check(n == 1 && wc[0].status == IBV_WC_WR_FLUSH_ERR &&
	      wc[0].wr_id == 61, "A: send flushed with WR_FLUSH_ERR");

	/*
	 * A receive posted in ERR must complete with a flush error too
	 * (IBA 10.3.1): the kernel has set NEED_KICK on the RQ, so post_recv
	 * rings the RQ doorbell and the kernel flushes the new WQE.
	 */
	check(!post_recv(a, 62, 0, 64, 1), "A: post_recv in ERR accepted");
	n = poll_n(a->cq, wc, 1);
	check(n == 1 && wc[0].status == IBV_WC_WR_FLUSH_ERR &&
	      wc[0].wr_id == 62,
	      "A: receive posted in ERR flushed with WR_FLUSH_ERR (got %d)", n);
}

static void test_refused(struct end *a)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = a->cq, .recv_cq = a->cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;

	printf("# refused verbs\n");
	errno = 0;
	qp = ibv_create_qp(a->pd, &qa);
	check(!qp && errno == EOPNOTSUPP, "UD QP: EOPNOTSUPP (%s)",
	      strerror(errno));
	srq = ibv_create_srq(a->pd, &sa);
	check(!srq && errno == EOPNOTSUPP, "create_srq: EOPNOTSUPP (%s)",
	      strerror(errno));
	errno = 0;
	mr = ibv_reg_dmabuf_mr(a->pd, 0, 4096, 0, 0, IBV_ACCESS_LOCAL_WRITE);
	check(!mr && errno == EOPNOTSUPP, "reg_dmabuf_mr: EOPNOTSUPP (%s)",
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
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *res;
		struct ibv_qp *qp;

		setenv("MROCE_CC", cases[i].name, 1);
		errno = 0;
		qp = ibv_create_qp(a->pd, &qa);
		res = qp ? "created" : strerror(errno);
		if (cases[i].err)
			check(!qp && errno == cases[i].err,
			      "MROCE_CC=\"%s\": create_qp fails with %s (%s)",
			      cases[i].name, strerror(cases[i].err), res);
		else
			check(qp, "MROCE_CC=\"%s\": create_qp (%s)",
			      cases[i].name, res);
		if (qp)
			ibv_destroy_qp(qp);
	}
	unsetenv("MROCE_CC");
}

static void teardown(struct end *e)
{
	if (e->qp)
		check(!ibv_destroy_qp(e->qp), "%s: destroy_qp", e->name);
	if (e->mr)
		check(!ibv_dereg_mr(e->mr), "%s: dereg_mr", e->name);
	if (e->cq)
		check(!ibv_destroy_cq(e->cq), "%s: destroy_cq", e->name);
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

	if (argc < 3) {
		fprintf(stderr, "usage: %s DEV_A DEV_B [COUNT]\n", argv[0]);
		return 2;
	}
	a.name = argv[1];
	b.name = argv[2];
	count = argc > 3 ? atoi(argv[3]) : 1000;

	if (setup_end(&a) && setup_end(&b) && connect_qp(&a, &b) &&
	    connect_qp(&b, &a)) {
		test_send(&a, &b);
		test_rdma(&a, &b);
		test_events_resize(&a, &b);
		test_stream(&a, &b, count);
		test_refused(&a);
		test_cc_choice(&a);
		test_errors(&a, &b);
	}
	teardown(&a);
	teardown(&b);
	printf("dp_smoke: %u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
