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
 * 3. The delayed ACK: FENCE_ROUNDS times, in one post, a 32 KiB READ, a
 *    100-byte WRITE and a fenced 100-byte WRITE.  The first WRITE's last
 *    packet need not ask for an ACK (work is queued behind it), and the
 *    fenced one waits for the READ's responses: until then only the
 *    responder's delayed ACK answers the first WRITE.  All complete in
 *    order; the caller reads the device's tx_acks_delayed.
 * 4. A WQE that fails in the send queue stops it: STOP_ROUNDS times, on
 *    a fresh pair, one post of a 48 KiB WRITE, a SEND whose SGE has an
 *    lkey that does not exist and a valid SEND.  The WRITE completes,
 *    the bad SEND with LOC_PROT_ERR, the last one with WR_FLUSH_ERR; the
 *    last one never left (B's receives stay posted, B's memory holds no
 *    byte of it), although ACKs for the WRITE arrive while the bad WQE
 *    waits for the WRITE to complete.  Then BIG_STOP_ROUNDS more with a
 *    1 MiB WRITE, four times the 256-PSN window: the window's ACKs keep
 *    restarting the requester after it found the bad WQE, which is when
 *    an engine that fetched past a failed WQE sent the SEND behind it.
 * 5. A responder that goes away owes the ACK of what it delivered:
 *    ACK_ROUNDS times, on a fresh pair, one unsignaled SEND (its last
 *    packet asks for no ACK, so only the delayed ACK answers it); B
 *    polls the receive and at once destroys its QP (even rounds) or
 *    moves it to ERR (odd rounds).  A must see no completion (the SEND
 *    succeeded) and stay in RTS past its retry budget: before the
 *    pending ACK was sent at destroy, A resent into a QP that no longer
 *    answered and failed a delivered SEND with RETRY_EXC_ERR.
 *
 *   loopback_qp DEV GID_INDEX burst
 *
 * only: BURST_ROUNDS times, BURST_WRS 8-byte WRITEs from A to B posted as
 * one list, all signaled, complete in order; the caller reads the
 * device's tx_acks (coalesced: far fewer than one per WRITE).
 *
 *   loopback_qp DEV GID_INDEX paced
 *
 * only: PACED_WRS 8-byte WRITEs from A to B, each posted alone,
 * PACED_GAP_US apart (a busy wait), every 32nd and the last signaled;
 * their completions say all arrived.  No unsignaled WRITE asks for an
 * ACK (it has no completion to wait for), so the cadence and the
 * delayed ACK answer them; the caller reads the device's
 * tx_acks_delayed.  At this pace
 * ack_every (8) WRITEs take longer than the delayed ACK's floor (100
 * us): a receiver whose deadline follows the arrival rate lets the
 * cadence answer, one with a fixed 100 us fires every third WRITE.
 * Prints one line per check and "loopback_qp: N passed, N failed".
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mtest.h"

struct ctx {
	struct ibv_context *dev;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	unsigned char *buf;
	struct ibv_mr *big_mr;		/* BIG bytes, for section 4's 1 MiB WRITEs */
	unsigned char *big;
	union ibv_gid gid;
	int gidx;
};

#define BUF 65536
#define BIG (1 << 20)
#define FENCE_ROUNDS 16
#define BURST_WRS 48
#define BURST_ROUNDS 4
#define STOP_ROUNDS 8
#define BIG_STOP_ROUNDS 4
#define ACK_ROUNDS 16
#define PACED_WRS 160
#define PACED_GAP_US 30
#define ACCESS (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
		IBV_ACCESS_REMOTE_ATOMIC)

/* An RC QP in INIT */
static struct ibv_qp *make_qp(struct ctx *c)
{
	struct ibv_qp_cap cap = { .max_send_wr = 64, .max_recv_wr = 64,
				  .max_send_sge = 2, .max_recv_sge = 2 };
	struct ibv_qp *qp = mtest_create_rc_qp(c->pd, c->cq, c->cq, &cap);

	if (!qp || mtest_qp_init(qp, 1, ACCESS))
		return NULL;
	return qp;
}

static int connect_qp_budget(struct ctx *c, struct ibv_qp *qp, uint32_t dqpn,
			     uint8_t timeout, uint8_t retry_cnt)
{
	struct mtest_path p = {
		.dest_qpn = dqpn, .rq_psn = 7, .sq_psn = 7, .dgid = c->gid,
		.sgid_index = (uint8_t)c->gidx, .port = 1, .mtu = IBV_MTU_1024,
		.rd_atomic = 4, .timeout = timeout, .retry_cnt = retry_cnt,
	};

	return mtest_qp_rtr(qp, &p) || mtest_qp_rts(qp, &p) ? -1 : 0;
}

static int connect_qp(struct ctx *c, struct ibv_qp *qp, uint32_t dqpn)
{
	return connect_qp_budget(c, qp, dqpn, 14, 7);
}

/* Two QPs of the device connected to each other; false if not. */
static bool connect_pair(struct ctx *c, struct ibv_qp **a, struct ibv_qp **b)
{
	*a = make_qp(c);
	*b = make_qp(c);
	return mtest_check(*a && *b && !connect_qp(c, *a, (*b)->qp_num) &&
			   !connect_qp(c, *b, (*a)->qp_num),
			   "two QPs of one device connect") && *a && *b;
}

/* Wait (10 s) for @n completions; returns how many were successful. */
static int wait_cqes(struct ctx *c, int n, struct ibv_wc *out)
{
	struct ibv_wc wc[BURST_WRS];
	int i, got, ok = 0;

	got = mtest_poll(c->cq, wc, n, 10000);
	for (i = 0; i < got; i++) {
		if (out)
			out[i] = wc[i];
		ok += wc[i].status == IBV_WC_SUCCESS;
	}
	return ok;
}

/* BURST_ROUNDS lists of BURST_WRS 8-byte WRITEs from @a to its peer */
static void bursts(struct ctx *c, struct ibv_qp *a, uint64_t base,
		   uint32_t lkey, uint32_t rkey)
{
	static struct ibv_send_wr wr[BURST_WRS];
	static struct ibv_sge sg[BURST_WRS];
	static struct ibv_wc wc[BURST_WRS];
	int i, k, ok = 1;

	for (i = 0; ok && i < BURST_ROUNDS; i++) {
		for (k = 0; k < BURST_WRS; k++) {
			sg[k] = (struct ibv_sge){ (uintptr_t)c->buf + 8 * k, 8,
						  lkey };
			wr[k] = (struct ibv_send_wr){
				.wr_id = (uint64_t)k, .sg_list = &sg[k],
				.num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				.send_flags = IBV_SEND_SIGNALED,
				.next = k + 1 < BURST_WRS ? &wr[k + 1] : NULL,
			};
			wr[k].wr.rdma.remote_addr = base + 32768 + 8 * k;
			wr[k].wr.rdma.rkey = rkey;
		}
		ok = !mtest_post_wr(a, wr) &&
		     wait_cqes(c, BURST_WRS, wc) == BURST_WRS;
		for (k = 0; ok && k < BURST_WRS; k++)
			ok = wc[k].wr_id == (uint64_t)k;
	}
	mtest_check(ok, "A->B: %d lists of %d 8-byte WRITEs complete in order",
		    BURST_ROUNDS, BURST_WRS);
	ok = !memcmp(c->buf, c->buf + 32768, 8 * BURST_WRS);
	mtest_check(ok, "A->B: the burst's data in place");
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* PACED_WRS + 1 WRITEs, @gap_us apart (see the header) */
static void paced_writes(struct ctx *c, struct ibv_qp *a, uint64_t base,
			 uint32_t lkey, uint32_t rkey, int gap_us)
{
	struct ibv_sge sg = { (uintptr_t)c->buf, 8, lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
	};
	uint64_t t = now_us(), t0 = t;
	int k, nsig = 0, ok = 1;

	wr.wr.rdma.remote_addr = base + 32768;
	wr.wr.rdma.rkey = rkey;
	for (k = 0; ok && k <= PACED_WRS; k++) {
		while (now_us() < t)
			;
		t += gap_us;
		wr.wr_id = (uint64_t)k;
		/* every 32nd signaled, so that the send queue drains */
		wr.send_flags = k == PACED_WRS || k % 32 == 31 ?
				IBV_SEND_SIGNALED : 0;
		nsig += !!wr.send_flags;
		ok = !mtest_post_wr(a, &wr);
	}
	ok = ok && wait_cqes(c, nsig, NULL) == nsig;
	mtest_check(ok, "A->B: %d WRITEs posted %d us apart complete",
		    PACED_WRS + 1, gap_us);
	printf("# paced: %d WRITEs in %llu us\n", PACED_WRS + 1,
	       (unsigned long long)(now_us() - t0));
}

/* Section 4: nothing after a failed WQE starts (see the header) */
static bool stop_round(struct ctx *c, uint64_t base, uint32_t lkey,
		       uint32_t rkey, bool big)
{
	struct ibv_sge sg[3] = {
		{ (uintptr_t)c->buf, 49152, lkey },
		{ (uintptr_t)c->buf + 100, 100, lkey ^ 0x5a5a00 },
		{ (uintptr_t)c->buf + 200, 300, lkey },
	};
	struct ibv_send_wr wr[3] = {};
	struct ibv_wc wc[8];
	struct ibv_qp *a, *b;
	int k, n, ok;

	if (!connect_pair(c, &a, &b))
		return false;
	/* B's receives land in [57344, 61440), which A's WRITE leaves alone */
	memset(c->buf + 57344, 0xee, 4096);
	ok = !mtest_post_recv(b, 11, c->buf + 57344, 2048, lkey) &&
	     !mtest_post_recv(b, 12, c->buf + 59392, 2048, lkey);
	for (k = 0; k < 3; k++) {
		wr[k].wr_id = (uint64_t)k + 1;
		wr[k].sg_list = &sg[k];
		wr[k].num_sge = 1;
		wr[k].send_flags = IBV_SEND_SIGNALED;
		wr[k].opcode = k ? IBV_WR_SEND : IBV_WR_RDMA_WRITE;
		wr[k].next = k < 2 ? &wr[k + 1] : NULL;
	}
	/* [0, 48 KiB) onto itself: B's view of A's memory is the same MR */
	wr[0].wr.rdma.remote_addr = base;
	wr[0].wr.rdma.rkey = rkey;
	if (big) {
		/* 1 MiB of the big MR onto itself */
		sg[0].addr = (uintptr_t)c->big;
		sg[0].length = BIG;
		sg[0].lkey = c->big_mr->lkey;
		wr[0].wr.rdma.remote_addr = (uintptr_t)c->big;
		wr[0].wr.rdma.rkey = c->big_mr->rkey;
	}
	ok = ok && !mtest_post_wr(a, wr);
	n = ok ? mtest_poll(c->cq, wc, 3, 10000) : 0;
	ok = n == 3 && wc[0].wr_id == 1 && wc[0].status == IBV_WC_SUCCESS &&
	     wc[1].wr_id == 2 && wc[1].status == IBV_WC_LOC_PROT_ERR &&
	     wc[2].wr_id == 3 && wc[2].status == IBV_WC_WR_FLUSH_ERR;
	if (!ok)
		mtest_say("completions: %d; %s", n,
			  n ? ibv_wc_status_str(wc[n - 1].status) : "-");
	/* anything that left A would have completed one of B's receives */
	mtest_sleep_us(200000);
	n = ibv_poll_cq(c->cq, 8, wc);
	if (n)
		mtest_say("late completion: wr_id %llu %s on QP %u",
			  (unsigned long long)wc[0].wr_id,
			  ibv_wc_status_str(wc[0].status), wc[0].qp_num);
	ok = ok && n == 0 && mtest_qp_state(b) == IBV_QPS_RTS;
	for (k = 0; ok && k < 4096; k++)
		ok = c->buf[57344 + k] == 0xee;
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	mtest_drain_cq(c->cq);
	return ok;
}

/* Section 5: the delayed ACK leaves before the responder goes (header) */
static bool ack_round(struct ctx *c, uint32_t lkey, int round)
{
	struct ibv_qp *a = make_qp(c), *b = make_qp(c);
	struct ibv_sge sge = { (uintptr_t)c->buf + 100, 64, lkey };
	struct ibv_send_wr wr = {
		.wr_id = 21, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND,	/* unsignaled: its ACK is delayed */
	};
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc;
	double t0;
	bool ok;
	int n;

	/*
	 * timeout 12 (16.8 ms), 3 retries: A gives up within about 70 ms
	 * of a lost ACK, long enough for a slow (debug, TCG) guest to get
	 * the SEND to B and B's ACK back
	 */
	ok = a && b && !connect_qp_budget(c, a, b->qp_num, 12, 3) &&
	     !connect_qp_budget(c, b, a->qp_num, 12, 3) &&
	     !mtest_post_recv(b, 22, c->buf + 57344, 2048, lkey) &&
	     !mtest_post_wr(a, &wr);
	/* B's receive, then at once B goes: nothing in between */
	t0 = mtest_now();
	do
		n = ok ? ibv_poll_cq(c->cq, 1, &wc) : -1;
	while (n == 0 && mtest_now() - t0 < 10);
	if (n == 1 && wc.wr_id == 22 && wc.status == IBV_WC_SUCCESS) {
		if (round & 1)
			ok = !ibv_modify_qp(b, &err, IBV_QP_STATE);
		else
			ok = !ibv_destroy_qp(b);
		if (!(round & 1))
			b = NULL;
	} else {
		mtest_say("round %d: B's receive: %d, wr_id %llu, %s", round,
			  n, n == 1 ? (unsigned long long)wc.wr_id : 0ULL,
			  n == 1 ? ibv_wc_status_str(wc.status) : "-");
		ok = false;
	}
	/* well past A's budget: a lost ACK shows as RETRY_EXC_ERR */
	n = ok ? mtest_poll(c->cq, &wc, 1, 500) : 0;
	if (n) {
		mtest_say("round %d: A's SEND completed with %s", round,
			  ibv_wc_status_str(wc.status));
		ok = false;
	}
	ok = ok && mtest_qp_state(a) == IBV_QPS_RTS;
	if (a)
		ibv_destroy_qp(a);
	if (b)
		ibv_destroy_qp(b);
	mtest_drain_cq(c->cq);
	return ok;
}

int main(int argc, char **argv)
{
	struct ibv_qp *self, *a, *b;
	struct ibv_wc wc[4] = {};
	struct ctx c = {};
	uint32_t lkey, rkey;
	uint64_t base;
	int i;

	if (argc != 3 && (argc != 4 || strcmp(argv[3], "burst")) &&
	    ((argc != 4 && argc != 5) || strcmp(argv[3], "paced"))) {
		fprintf(stderr, "usage: %s DEV GID_INDEX [burst|paced [GAP_US]]\n",
			argv[0]);
		return 2;
	}
	mtest_init("loopback_qp", 0);
	c.dev = mtest_find_device(argv[1]);
	if (!c.dev) {
		fprintf(stderr, "loopback_qp: no device %s\n", argv[1]);
		return 2;
	}
	c.gidx = atoi(argv[2]);
	c.pd = ibv_alloc_pd(c.dev);
	c.cq = ibv_create_cq(c.dev, 256, NULL, NULL, 0);
	c.buf = calloc(1, BUF);
	c.mr = ibv_reg_mr(c.pd, c.buf, BUF, IBV_ACCESS_LOCAL_WRITE | ACCESS);
	c.big = mtest_alloc(BIG);
	c.big_mr = ibv_reg_mr(c.pd, c.big, BIG, IBV_ACCESS_LOCAL_WRITE | ACCESS);
	mtest_check(c.pd && c.cq && c.buf && c.mr && c.big_mr,
		    "PD, CQ, 64 KiB and 1 MiB MRs");
	mtest_check(!ibv_query_gid(c.dev, 1, c.gidx, &c.gid), "GID");
	if (mtest_failed)
		return 1;
	base = (uintptr_t)c.buf;
	lkey = c.mr->lkey;
	rkey = c.mr->rkey;

	if (argc >= 4) {
		if (!connect_pair(&c, &a, &b))
			return 1;
		for (i = 0; i < 8 * BURST_WRS; i++)
			c.buf[i] = (unsigned char)(i * 3 + 1);
		if (!strcmp(argv[3], "burst"))
			bursts(&c, a, base, lkey, rkey);
		else
			paced_writes(&c, a, base, lkey, rkey,
				     argc == 5 ? atoi(argv[4]) : PACED_GAP_US);
		ibv_destroy_qp(a);
		ibv_destroy_qp(b);
		return mtest_summary();
	}

	/* 1. a QP connected to itself */
	self = make_qp(&c);
	mtest_check(self && !connect_qp(&c, self, self->qp_num),
		    "QP connected to itself reaches RTS");
	if (!self)
		return 1;
	for (i = 0; i < 8192; i++)
		c.buf[i] = (unsigned char)(i * 7 + 1);
	mtest_check(!mtest_post_send(self, 0, IBV_WR_RDMA_WRITE, c.buf, 8192,
				     lkey, base + 16384, rkey, 0) &&
		    wait_cqes(&c, 1, NULL) == 1 &&
		    !memcmp(c.buf, c.buf + 16384, 8192),
		    "self: 8 KiB RDMA_WRITE lands");
	c.buf[40000] = 0;
	mtest_check(!mtest_post_send(self, 0, IBV_WR_RDMA_READ, c.buf + 40000,
				     1, lkey, base + 16384 + 100, rkey, 0) &&
		    wait_cqes(&c, 1, NULL) == 1 && c.buf[40000] == c.buf[100],
		    "self: 1-byte RDMA_READ (NCCL flush) returns the written byte");
	mtest_check(!mtest_post_recv(self, 0, c.buf + 49152, 4096, lkey) &&
		    !mtest_post_send(self, 0, IBV_WR_SEND_WITH_IMM, c.buf, 3000,
				     lkey, 0, 0, 0x1234) &&
		    wait_cqes(&c, 2, wc) == 2 &&
		    !memcmp(c.buf, c.buf + 49152, 3000),
		    "self: SEND_WITH_IMM to its own receive queue");
	mtest_check((wc[0].opcode == IBV_WC_RECV && wc[0].byte_len == 3000 &&
		     ntohl(wc[0].imm_data) == 0x1234) ||
		    (wc[1].opcode == IBV_WC_RECV && wc[1].byte_len == 3000 &&
		     ntohl(wc[1].imm_data) == 0x1234),
		    "self: receive completion carries length and immediate");

	/* 2. two QPs of the same device */
	if (!connect_pair(&c, &a, &b))
		return 1;
	/* source [0, 20000), target [24576, 44576), read back [45056, ...) */
	for (i = 0; i < 20000; i++)
		c.buf[i] = (unsigned char)(i * 13 + 5);
	memset(c.buf + 24576, 0, 40960);
	mtest_check(!mtest_post_recv(b, 0, NULL, 0, 0) &&
		    !mtest_post_send(a, 0, IBV_WR_RDMA_WRITE_WITH_IMM, c.buf,
				     20000, lkey, base + 24576, rkey, 20000) &&
		    wait_cqes(&c, 2, wc) == 2,
		    "A->B: 20000-byte WRITE_WITH_IMM into a 0-SGE receive");
	mtest_check(!memcmp(c.buf, c.buf + 24576, 20000),
		    "A->B: data in place");
	mtest_check((wc[0].opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
		     ntohl(wc[0].imm_data) == 20000) ||
		    (wc[1].opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
		     ntohl(wc[1].imm_data) == 20000),
		    "B: RECV_RDMA_WITH_IMM with the immediate");
	mtest_check(!mtest_post_send(b, 0, IBV_WR_RDMA_READ, c.buf + 45056,
				     20000, lkey, base + 24576, rkey, 0) &&
		    wait_cqes(&c, 1, NULL) == 1 &&
		    !memcmp(c.buf, c.buf + 45056, 20000),
		    "B->A: 20000-byte RDMA_READ");

	/* 3. a WRITE between a READ and a fenced WRITE, as one post */
	for (i = 0; i < FENCE_ROUNDS; i++) {
		struct ibv_sge sg[3] = {
			{ (uintptr_t)c.buf + 32768, 32768, lkey },
			{ (uintptr_t)c.buf + 100, 100, lkey },
			{ (uintptr_t)c.buf + 200, 100, lkey },
		};
		struct ibv_send_wr wr[3] = {};
		int k, ok;

		for (k = 0; k < 3; k++) {
			wr[k].wr_id = (uint64_t)k + 1;
			wr[k].sg_list = &sg[k];
			wr[k].num_sge = 1;
			wr[k].send_flags = IBV_SEND_SIGNALED;
			wr[k].opcode = k ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
			wr[k].wr.rdma.remote_addr = base + (k ? 1024 * k : 0);
			wr[k].wr.rdma.rkey = rkey;
			wr[k].next = k < 2 ? &wr[k + 1] : NULL;
		}
		wr[2].send_flags |= IBV_SEND_FENCE;
		ok = !mtest_post_wr(a, wr) && wait_cqes(&c, 3, wc) == 3;
		for (k = 0; ok && k < 3; k++)
			ok = wc[k].wr_id == (uint64_t)k + 1;
		if (!ok) {
			mtest_check(0, "A->B: READ, WRITE, fenced WRITE (round %d) in order",
				    i);
			break;
		}
	}
	if (i == FENCE_ROUNDS)
		mtest_check(1, "A->B: %d x READ, WRITE, fenced WRITE complete in order",
			    FENCE_ROUNDS);

	/* 4. a failed WQE stops the send queue */
	for (i = 0; i < STOP_ROUNDS && stop_round(&c, base, lkey, rkey, false);
	     i++)
		;
	mtest_check(i == STOP_ROUNDS,
		    "A->B: WRITE, SEND with a bad lkey, SEND: success, LOC_PROT_ERR, flushed; nothing sent after the failure (%d of %d rounds)",
		    i, STOP_ROUNDS);
	for (i = 0;
	     i < BIG_STOP_ROUNDS && stop_round(&c, base, lkey, rkey, true); i++)
		;
	mtest_check(i == BIG_STOP_ROUNDS,
		    "A->B: 1 MiB WRITE (4 windows), SEND with a bad lkey, SEND: nothing sent after the failure (%d of %d rounds)",
		    i, BIG_STOP_ROUNDS);

	/* 5. the responder's pending ACK leaves before it goes */
	for (i = 0; i < ACK_ROUNDS && ack_round(&c, lkey, i); i++)
		;
	mtest_check(i == ACK_ROUNDS,
		    "A->B: unsignaled SEND, B destroyed or moved to ERR once it polled the receive: A's SEND succeeds, A stays in RTS (%d of %d rounds)",
		    i, ACK_ROUNDS);

	ibv_destroy_qp(self);
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_dereg_mr(c.mr);
	ibv_dereg_mr(c.big_mr);
	ibv_destroy_cq(c.cq);
	ibv_dealloc_pd(c.pd);
	ibv_close_device(c.dev);
	return mtest_summary();
}
