// SPDX-License-Identifier: GPL-2.0-only
/*
 * lat_qp - RC WRITEs of known latency, for the driver's latency histogram.
 *
 *   lat_qp DEV GID_INDEX N DONE_FILE
 *
 * Two RC QPs of one device connected to each other; QP A posts N signaled
 * 64-byte WRITEs to B one at a time, each after the previous one's
 * completion, and times each from just before ibv_post_send() to the poll
 * that returns its completion.  Then it prints
 *
 *   lat_qp: qpn=Q n=N p50_us=.. p99_us=.. p999_us=.. max_us=.. min_us=..
 *
 * (Q: A's QP number; percentiles as the sample of rank ceil(N x p), in
 * whole microseconds rounded up), and keeps both QPs until DONE_FILE
 * exists, so that the caller can look at them with "rdma resource".
 * The driver times each WRITE from the fetch of the WQE to its CQE, a
 * part of the same interval: its percentiles can only be lower, up to
 * its histogram's bucket width.  Exits 0 if every WRITE completed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mtest.h"

#define MSG 64
#define ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)

static struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_cap cap = { .max_send_wr = 16, .max_recv_wr = 16,
				  .max_send_sge = 1, .max_recv_sge = 1 };
	struct ibv_qp *qp = mtest_create_rc_qp(pd, cq, cq, &cap);

	if (!qp || mtest_qp_init(qp, 1, ACCESS))
		return NULL;
	return qp;
}

static int connect_qp(struct ibv_qp *qp, uint32_t dqpn,
		      const union ibv_gid *gid, int gidx)
{
	struct mtest_path p = {
		.dest_qpn = dqpn, .rq_psn = 11, .sq_psn = 11, .dgid = *gid,
		.sgid_index = (uint8_t)gidx, .port = 1, .mtu = IBV_MTU_1024,
		.rd_atomic = 1, .timeout = 14, .retry_cnt = 7,
	};

	return mtest_qp_rtr(qp, &p) || mtest_qp_rts(qp, &p) ? -1 : 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The sample of rank ceil(n x ppm / 10^6), in whole us rounded up. */
static unsigned long pct(const double *s, int n, unsigned long ppm)
{
	unsigned long long rank = ((unsigned long long)n * ppm + 999999) / 1000000;

	if (rank < 1)
		rank = 1;
	return (unsigned long)(s[rank - 1] + 0.999999);
}

int main(int argc, char **argv)
{
	struct ibv_context *dev;
	struct ibv_qp *a, *b;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	union ibv_gid gid;
	unsigned char *buf;
	double *us;
	int gidx, n, i;

	n = argc == 5 ? atoi(argv[3]) : 0;
	if (n < 1) {
		fprintf(stderr, "usage: %s DEV GID_INDEX N DONE_FILE\n", argv[0]);
		return 2;
	}
	mtest_init("lat_qp", 0);
	dev = mtest_open_device(argv[1]);
	gidx = atoi(argv[2]);
	pd = ibv_alloc_pd(dev);
	cq = ibv_create_cq(dev, 64, NULL, NULL, 0);
	buf = mtest_alloc(2 * MSG);
	us = calloc(n, sizeof(*us));
	if (!pd || !cq || !us)
		mtest_die("PD, CQ or memory");
	mr = mtest_reg_mr(pd, buf, 2 * MSG, ACCESS, "buffer");
	if (ibv_query_gid(dev, 1, gidx, &gid))
		mtest_die("GID %d", gidx);
	a = make_qp(pd, cq);
	b = make_qp(pd, cq);
	if (!a || !b || connect_qp(a, b->qp_num, &gid, gidx) ||
	    connect_qp(b, a->qp_num, &gid, gidx))
		mtest_die("two QPs of one device connect");
	mtest_watchdog(600);
	for (i = 0; i < n; i++) {
		struct ibv_wc wc;
		double t0;
		int rc;

		buf[0] = (unsigned char)i;
		t0 = mtest_now();
		rc = mtest_post_send(a, i, IBV_WR_RDMA_WRITE, buf, MSG, mr->lkey,
				     (uintptr_t)buf + MSG, mr->rkey, 0);
		if (rc)
			mtest_die("WRITE %d: post: %s", i, mtest_verr(rc));
		if (!mtest_wait_wc(cq, &wc, 10000))
			mtest_die("WRITE %d: no completion in 10 s", i);
		us[i] = (mtest_now() - t0) * 1e6;
		if (wc.status != IBV_WC_SUCCESS || wc.wr_id != (uint64_t)i)
			mtest_die("WRITE %d: status %s, wr_id %llu", i,
				  ibv_wc_status_str(wc.status),
				  (unsigned long long)wc.wr_id);
	}
	qsort(us, n, sizeof(*us), cmp_double);
	printf("lat_qp: qpn=%u n=%d p50_us=%lu p99_us=%lu p999_us=%lu max_us=%lu min_us=%lu\n",
	       a->qp_num, n, pct(us, n, 500000), pct(us, n, 990000),
	       pct(us, n, 999000), pct(us, n, 1000000),
	       (unsigned long)us[0]);
	fflush(stdout);
	/* the QPs stay until the caller is done looking (or the watchdog) */
	while (access(argv[4], F_OK))
		mtest_sleep_us(50000);
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	return 0;
}
