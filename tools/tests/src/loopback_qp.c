// SPDX-License-Identifier: GPL-2.0-only
/*
 * loopback_qp - RC QPs whose peer is on the same device.
 *
 *   loopback_qp DEV GID_INDEX
 *
 * 1. One QP connected to itself (NCCL flushes GPU writes with a 1-byte
 *    RDMA READ on such a QP): WRITE, 1-byte READ, SEND to itself with a
 *    receive on the same QP.
 * 2. Two QPs of one device connected to each other: WRITE_WITH_IMM into
 *    a receive with no SGEs, READ back, compare.
 * Prints one line per check and "loopback_qp: N passed, N failed".
 */
#include <infiniband/verbs.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int passed, failed;

static void check(int ok, const char *what)
{
	printf("%s - %s\n", ok ? "ok" : "FAIL", what);
	if (ok)
		passed++;
	else
		failed++;
}

struct ctx {
	struct ibv_context *dev;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	unsigned char *buf;
	union ibv_gid gid;
	int gidx;
};

#define BUF 65536

static struct ibv_qp *make_qp(struct ctx *c)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = c->cq, .recv_cq = c->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64,
			 .max_send_sge = 2, .max_recv_sge = 2 },
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};
	struct ibv_qp *qp = ibv_create_qp(c->pd, &ia);

	if (!qp || ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				 IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return NULL;
	return qp;
}

static int connect_qp(struct ctx *c, struct ibv_qp *qp, uint32_t dqpn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = dqpn, .rq_psn = 7, .max_dest_rd_atomic = 4,
		.min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = c->gid, .sgid_index = c->gidx,
				      .hop_limit = 64 } },
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 7;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* Wait for @n completions; returns how many were successful. */
static int wait_cqes(struct ctx *c, int n, struct ibv_wc *out)
{
	struct timespec t0, t;
	int got = 0, ok = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (got < n) {
		struct ibv_wc wc;
		int r = ibv_poll_cq(c->cq, 1, &wc);

		if (r < 0)
			break;
		if (r == 1) {
			if (out)
				out[got] = wc;
			got++;
			ok += wc.status == IBV_WC_SUCCESS;
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 10)
			break;
	}
	return ok;
}

static int post(struct ibv_qp *qp, enum ibv_wr_opcode op, void *laddr,
		uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey,
		uint32_t imm)
{
	struct ibv_sge sge = { (uintptr_t)laddr, len, lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = len ? 1 : 0, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = htonl(imm),
		.wr.rdma = { raddr, rkey },
	}, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

static int post_recv(struct ibv_qp *qp, void *addr, uint32_t len,
		     uint32_t lkey)
{
	struct ibv_sge sge = { (uintptr_t)addr, len, lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = len ? 1 : 0 },
		*bad;

	return ibv_post_recv(qp, &wr, &bad);
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_qp *self, *a, *b;
	struct ibv_wc wc[4];
	struct ctx c = {};
	uint64_t base;
	int i, n;

	if (argc != 3) {
		fprintf(stderr, "usage: %s DEV GID_INDEX\n", argv[0]);
		return 2;
	}
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			c.dev = ibv_open_device(list[i]);
	if (!c.dev) {
		fprintf(stderr, "loopback_qp: no device %s\n", argv[1]);
		return 2;
	}
	c.gidx = atoi(argv[2]);
	c.pd = ibv_alloc_pd(c.dev);
	c.cq = ibv_create_cq(c.dev, 256, NULL, NULL, 0);
	c.buf = calloc(1, BUF);
	c.mr = ibv_reg_mr(c.pd, c.buf, BUF, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC);
	check(c.pd && c.cq && c.buf && c.mr, "PD, CQ, 64 KiB MR");
	check(!ibv_query_gid(c.dev, 1, c.gidx, &c.gid), "GID");
	if (failed)
		return 1;
	base = (uintptr_t)c.buf;

	/* 1. a QP connected to itself */
	self = make_qp(&c);
	check(self && !connect_qp(&c, self, self->qp_num),
	      "QP connected to itself reaches RTS");
	if (!self)
		return 1;
	for (i = 0; i < 8192; i++)
		c.buf[i] = (unsigned char)(i * 7 + 1);
	check(!post(self, IBV_WR_RDMA_WRITE, c.buf, 8192, c.mr->lkey,
		    base + 16384, c.mr->rkey, 0) &&
	      wait_cqes(&c, 1, NULL) == 1 &&
	      !memcmp(c.buf, c.buf + 16384, 8192),
	      "self: 8 KiB RDMA_WRITE lands");
	c.buf[40000] = 0;
	check(!post(self, IBV_WR_RDMA_READ, c.buf + 40000, 1, c.mr->lkey,
		    base + 16384 + 100, c.mr->rkey, 0) &&
	      wait_cqes(&c, 1, NULL) == 1 && c.buf[40000] == c.buf[100],
	      "self: 1-byte RDMA_READ (NCCL flush) returns the written byte");
	check(!post_recv(self, c.buf + 49152, 4096, c.mr->lkey) &&
	      !post(self, IBV_WR_SEND_WITH_IMM, c.buf, 3000, c.mr->lkey, 0, 0,
		    0x1234) &&
	      wait_cqes(&c, 2, wc) == 2 && !memcmp(c.buf, c.buf + 49152, 3000),
	      "self: SEND_WITH_IMM to its own receive queue");
	check((wc[0].opcode == IBV_WC_RECV && wc[0].byte_len == 3000 &&
	       ntohl(wc[0].imm_data) == 0x1234) ||
	      (wc[1].opcode == IBV_WC_RECV && wc[1].byte_len == 3000 &&
	       ntohl(wc[1].imm_data) == 0x1234),
	      "self: receive completion carries length and immediate");

	/* 2. two QPs of the same device */
	a = make_qp(&c);
	b = make_qp(&c);
	check(a && b && !connect_qp(&c, a, b->qp_num) &&
	      !connect_qp(&c, b, a->qp_num), "two QPs of one device connect");
	if (!a || !b)
		return 1;
	/* source [0, 20000), target [24576, 44576), read back [45056, ...) */
	for (i = 0; i < 20000; i++)
		c.buf[i] = (unsigned char)(i * 13 + 5);
	memset(c.buf + 24576, 0, 40960);
	check(!post_recv(b, NULL, 0, 0) &&
	      !post(a, IBV_WR_RDMA_WRITE_WITH_IMM, c.buf, 20000, c.mr->lkey,
		    base + 24576, c.mr->rkey, 20000) &&
	      wait_cqes(&c, 2, wc) == 2,
	      "A->B: 20000-byte WRITE_WITH_IMM into a 0-SGE receive");
	check(!memcmp(c.buf, c.buf + 24576, 20000), "A->B: data in place");
	check((wc[0].opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
	       ntohl(wc[0].imm_data) == 20000) ||
	      (wc[1].opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
	       ntohl(wc[1].imm_data) == 20000),
	      "B: RECV_RDMA_WITH_IMM with the immediate");
	check(!post(b, IBV_WR_RDMA_READ, c.buf + 45056, 20000, c.mr->lkey,
		    base + 24576, c.mr->rkey, 0) &&
	      wait_cqes(&c, 1, NULL) == 1 &&
	      !memcmp(c.buf, c.buf + 45056, 20000),
	      "B->A: 20000-byte RDMA_READ");

	ibv_destroy_qp(self);
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_dereg_mr(c.mr);
	ibv_destroy_cq(c.cq);
	ibv_dealloc_pd(c.pd);
	ibv_close_device(c.dev);
	ibv_free_device_list(list);
	printf("loopback_qp: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
