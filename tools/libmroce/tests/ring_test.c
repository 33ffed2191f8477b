// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * ring_test - host-only unit tests of libmroce's data path, no kernel
 * needed: rings are plain memory, QPs and CQs are built by hand and the
 * provider's own functions (mroce_post_send, mroce_post_recv,
 * mroce_poll_cq, ...) are called on them.  The doorbells go to a pipe
 * standing in for the uverbs command fd, so the test sees exactly which
 * write() commands post_send and post_recv make (and that they make none
 * while the kernel has not set MROCE_RING_F_NEED_KICK).
 *
 *   ring_test [STRESS_COUNT]   (default 200000; 0 skips the thread test)
 *
 * Prints one line per check and "N passed, N failed"; exit 0 only if all
 * passed.  Meant to run under valgrind as well (make check does).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mroce.h"
#include "mtest.h"

/* ------------------------------------------------------------------------
 * Fake objects.
 */

struct fake_ring {
	void *mem;
	size_t size;
	struct mroce_ring_info info;
};

static void fake_ring_init(struct fake_ring *fr, uint32_t slots,
			   uint32_t stride)
{
	fr->size = MROCE_RING_DATA_OFFSET + (size_t)slots * stride;
	if (posix_memalign(&fr->mem, 4096, fr->size)) {
		perror("posix_memalign");
		exit(2);
	}
	/* Garbage everywhere: encoders must write every byte they own. */
	memset(fr->mem, 0xa5, fr->size);
	memset(fr->mem, 0, sizeof(struct mroce_ring_hdr));
	fr->info = (struct mroce_ring_info){
		.mmap_offset = 0,
		.mmap_size = fr->size,
		.num_slots = slots,
		.stride = stride,
	};
}

static struct mroce_ring_hdr *fr_hdr(struct fake_ring *fr)
{
	return fr->mem;
}

static void *fr_slot(struct fake_ring *fr, uint32_t idx)
{
	return (uint8_t *)fr->mem + MROCE_RING_DATA_OFFSET +
	       (size_t)(idx & (fr->info.num_slots - 1)) * fr->info.stride;
}

#define SQ_SLOTS 16
#define SQ_SGE 4
#define SQ_INLINE 64
#define SQ_STRIDE (64 + SQ_SGE * 16)	/* 128 >= 64 + SQ_INLINE */
#define RQ_SLOTS 8
#define RQ_SGE 2
#define RQ_STRIDE (16 + RQ_SGE * 16)
#define CQ_SLOTS 8

struct fake_qp {
	struct ibv_context ctx;
	struct mroce_qp qp;
	struct fake_ring sq, rq;
	int pipe_rd;		/* what the provider wrote to "cmd_fd" */
};

static struct fake_qp *fake_qp_new(enum ibv_qp_type type)
{
	struct fake_qp *f = calloc(1, sizeof(*f));
	int fds[2];

	if (!f || pipe2(fds, O_NONBLOCK)) {
		perror("fake_qp_new");
		exit(2);
	}
	f->pipe_rd = fds[0];
	f->ctx.cmd_fd = fds[1];
	f->ctx.async_fd = -1;

	fake_ring_init(&f->sq, SQ_SLOTS, SQ_STRIDE);
	fake_ring_init(&f->rq, RQ_SLOTS, RQ_STRIDE);
	mroce_ring_attach(&f->qp.sq.ring, f->sq.mem, f->sq.size, &f->sq.info);
	mroce_ring_attach(&f->qp.rq.ring, f->rq.mem, f->rq.size, &f->rq.info);
	pthread_spin_init(&f->qp.sq.lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&f->qp.rq.lock, PTHREAD_PROCESS_PRIVATE);
	f->qp.sq.max_sge = SQ_SGE;
	f->qp.sq.max_inline = SQ_INLINE;
	f->qp.rq.max_sge = RQ_SGE;

	f->qp.vqp.qp.context = &f->ctx;
	f->qp.vqp.qp.handle = 0x1234;
	f->qp.vqp.qp.qp_num = 0x11;
	f->qp.vqp.qp.qp_type = type;
	f->qp.vqp.qp.state = IBV_QPS_RTS;
	return f;
}

static void fake_qp_free(struct fake_qp *f)
{
	close(f->pipe_rd);
	close(f->ctx.cmd_fd);
	pthread_spin_destroy(&f->qp.sq.lock);
	pthread_spin_destroy(&f->qp.rq.lock);
	free(f->sq.mem);
	free(f->rq.mem);
	free(f);
}

static struct ibv_qp *fq(struct fake_qp *f)
{
	return &f->qp.vqp.qp;
}

/*
 * Number of doorbell commands waiting in the pipe.  *well_formed: each of
 * them is a complete 'command' (IB_USER_VERBS_CMD_POST_SEND or _POST_RECV)
 * with no WRs, for this QP, with a response buffer and the wqe_size the
 * kernel insists on.
 */
static int doorbells(struct fake_qp *f, uint32_t command, bool *well_formed)
{
	union {
		struct {
			struct ib_uverbs_cmd_hdr hdr;
			struct ib_uverbs_post_send cmd;
		} sq;
		struct {
			struct ib_uverbs_cmd_hdr hdr;
			struct ib_uverbs_post_recv cmd;
		} rq;
	} db;
	size_t wqe_size, out_words;
	int n = 0;
	ssize_t r;

	_Static_assert(sizeof(db.sq) == sizeof(db.rq), "doorbell sizes");
	if (command == IB_USER_VERBS_CMD_POST_SEND) {
		wqe_size = sizeof(struct ib_uverbs_send_wr);
		out_words = sizeof(struct ib_uverbs_post_send_resp) / 4;
	} else {
		wqe_size = sizeof(struct ib_uverbs_recv_wr);
		out_words = sizeof(struct ib_uverbs_post_recv_resp) / 4;
	}

	*well_formed = true;
	while ((r = read(f->pipe_rd, &db, sizeof(db))) > 0) {
		n++;
		if (r != sizeof(db) || db.sq.hdr.command != command ||
		    db.sq.hdr.in_words != sizeof(db) / 4 ||
		    db.sq.hdr.out_words != out_words)
			*well_formed = false;
		else if (command == IB_USER_VERBS_CMD_POST_SEND &&
			 (!db.sq.cmd.response || db.sq.cmd.qp_handle != 0x1234 ||
			  db.sq.cmd.wr_count || db.sq.cmd.sge_count ||
			  db.sq.cmd.wqe_size != wqe_size))
			*well_formed = false;
		else if (command == IB_USER_VERBS_CMD_POST_RECV &&
			 (!db.rq.cmd.response || db.rq.cmd.qp_handle != 0x1234 ||
			  db.rq.cmd.wr_count || db.rq.cmd.sge_count ||
			  db.rq.cmd.wqe_size != wqe_size))
			*well_formed = false;
	}
	return n;
}

/* Doorbells of either kind waiting in the pipe (drains it). */
static int syscalls(struct fake_qp *f)
{
	bool ok;

	return doorbells(f, IB_USER_VERBS_CMD_POST_SEND, &ok);
}

static bool bytes_are(const void *p, size_t n, uint8_t v)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i] != v)
			return false;
	return true;
}

/* ------------------------------------------------------------------------
 * Ring descriptor checks.
 */

static void test_ring_check(void)
{
	struct mroce_ring_info good = {
		.mmap_offset = 0x10000,
		.mmap_size = 256 + 64 * 32,
		.num_slots = 64,
		.stride = 32,
	};
	struct mroce_ring_info bad;

	printf("# ring descriptors\n");
	mtest_check(mroce_ring_check(&good, 32, "test") == 0, "valid ring accepted");

	bad = good;
	bad.num_slots = 0;
	mtest_check(mroce_ring_check(&bad, 32, "test") == EPROTO, "0 slots refused");
	bad = good;
	bad.num_slots = 48;
	mtest_check(mroce_ring_check(&bad, 32, "test") == EPROTO,
		    "48 slots (not a power of two) refused");
	bad = good;
	bad.stride = 24;
	mtest_check(mroce_ring_check(&bad, 32, "test") == EPROTO,
		    "stride below minimum refused");
	bad = good;
	bad.stride = 36;
	bad.mmap_size = 256 + 64 * 36;
	mtest_check(mroce_ring_check(&bad, 32, "test") == EPROTO,
		    "stride not a multiple of 8 refused");
	bad = good;
	bad.mmap_size -= 1;
	mtest_check(mroce_ring_check(&bad, 32, "test") == EPROTO,
		    "mmap_size one byte short refused");
	bad = good;
	bad.num_slots = 1U << 31;
	bad.stride = 1U << 31;
	mtest_check(mroce_ring_check(&bad, 32, "test") == EPROTO,
		    "2^31 slots x 2^31 bytes (no overflow) refused");
}

static void test_qp_check_resp(void)
{
	struct ibv_qp_cap cap = {
		.max_send_wr = 16, .max_recv_wr = 8,
		.max_send_sge = 4, .max_recv_sge = 2,
	};
	struct mroce_create_qp_resp drv = {
		.sq = { .mmap_size = 256 + 16 * 128, .num_slots = 16, .stride = 128 },
		.rq = { .mmap_size = 256 + 8 * 48, .num_slots = 8, .stride = 48 },
		.max_inline = 64,
	};
	struct mroce_create_qp_resp d;
	struct ibv_qp_cap c;

	printf("# create_qp response checks\n");
	mtest_check(mroce_qp_check_resp(&cap, &drv, true) == 0,
		    "consistent SQ/RQ rings accepted");
	d = drv;
	d.max_inline = 65;
	mtest_check(mroce_qp_check_resp(&cap, &d, true) == EPROTO,
		    "max_inline larger than the SQ slot refused");
	c = cap;
	c.max_send_sge = 5;
	mtest_check(mroce_qp_check_resp(&c, &drv, true) == EPROTO,
		    "max_send_sge larger than the SQ slot refused");
	c = cap;
	c.max_send_wr = 17;
	mtest_check(mroce_qp_check_resp(&c, &drv, true) == EPROTO,
		    "max_send_wr above SQ num_slots refused");
	c = cap;
	c.max_recv_sge = 3;
	mtest_check(mroce_qp_check_resp(&c, &drv, true) == EPROTO,
		    "max_recv_sge larger than the RQ slot refused");
	d = drv;
	d.rq = (struct mroce_ring_info){};
	mtest_check(mroce_qp_check_resp(&cap, &d, true) == EPROTO,
		    "missing RQ ring refused for a QP without SRQ");
	mtest_check(mroce_qp_check_resp(&cap, &d, false) == 0,
		    "missing RQ ring fine when an SRQ is used");
}

/* ------------------------------------------------------------------------
 * CQ: CQE -> ibv_wc.
 */

static void put_cqe(struct fake_ring *fr, uint32_t idx,
		    const struct mroce_cqe *cqe)
{
	memcpy(fr_slot(fr, idx), cqe, sizeof(*cqe));
}

static void test_poll_cq(void)
{
	struct fake_ring fr;
	struct mroce_cq cq = {};
	struct ibv_wc wc[8];
	struct mroce_ring_hdr *hdr;
	const uint32_t base = 0xfffffffeU;	/* wraps during the test */
	int n;

	printf("# poll_cq\n");
	fake_ring_init(&fr, CQ_SLOTS, 32);
	hdr = fr_hdr(&fr);
	hdr->prod = base;
	hdr->cons = base;
	mroce_ring_attach(&cq.ring, fr.mem, fr.size, &fr.info);
	pthread_spin_init(&cq.lock, PTHREAD_PROCESS_PRIVATE);

	mtest_check(mroce_poll_cq(&cq.ibv_cq, 8, wc) == 0, "empty CQ polls 0");

	put_cqe(&fr, base + 0, &(struct mroce_cqe){
		.wr_id = 0x1111, .status = IBV_WC_SUCCESS,
		.opcode = IBV_WC_SEND, .byte_len = 100, .qp_num = 0x11,
		.imm_data = 0xdeadbeef /* not valid without the flag */ });
	put_cqe(&fr, base + 1, &(struct mroce_cqe){
		.wr_id = 0x2222, .status = IBV_WC_SUCCESS,
		.opcode = IBV_WC_RECV, .flags = MROCE_CQE_WITH_IMM,
		.byte_len = 4096, .imm_data = htonl(0x12345678),
		.qp_num = 0x11, .src_qp = 0x22 });
	put_cqe(&fr, base + 2, &(struct mroce_cqe){
		.wr_id = 0x3333, .status = IBV_WC_REM_ACCESS_ERR,
		.opcode = IBV_WC_RDMA_READ, .qp_num = 0x11,
		.vendor_err = 0x77 });
	put_cqe(&fr, base + 3, &(struct mroce_cqe){
		.wr_id = 0x4444, .status = IBV_WC_SUCCESS,
		.opcode = IBV_WC_RECV_RDMA_WITH_IMM,
		.flags = MROCE_CQE_WITH_IMM, .byte_len = 8,
		.imm_data = htonl(7), .qp_num = 0x11, .src_qp = 0x22 });
	put_cqe(&fr, base + 4, &(struct mroce_cqe){
		.wr_id = 0x5555, .status = IBV_WC_WR_FLUSH_ERR,
		.opcode = IBV_WC_FETCH_ADD, .qp_num = 0x11 });
	/* Not published yet: must stay invisible. */
	mtest_check(mroce_poll_cq(&cq.ibv_cq, 8, wc) == 0,
		    "CQEs are invisible until prod moves");

	__atomic_store_n(&hdr->prod, base + 5, __ATOMIC_RELEASE);
	memset(wc, 0xcc, sizeof(wc));
	n = mroce_poll_cq(&cq.ibv_cq, 2, wc);
	mtest_check(n == 2, "poll with ne=2 of 5 returns 2 (got %d)", n);
	mtest_check(hdr->cons == base + 2, "cons advanced by 2");
	mtest_check(wc[0].wr_id == 0x1111 && wc[0].status == IBV_WC_SUCCESS &&
		    wc[0].opcode == IBV_WC_SEND && wc[0].byte_len == 100 &&
		    wc[0].qp_num == 0x11 && wc[0].wc_flags == 0 &&
		    wc[0].imm_data == 0 && wc[0].vendor_err == 0 &&
		    wc[0].src_qp == 0 && wc[0].slid == 0 && wc[0].sl == 0 &&
		    wc[0].pkey_index == 0 && wc[0].dlid_path_bits == 0,
		    "SEND completion converted, imm_data ignored without flag");
	mtest_check(wc[1].wr_id == 0x2222 && wc[1].opcode == IBV_WC_RECV &&
		    wc[1].wc_flags == IBV_WC_WITH_IMM &&
		    wc[1].imm_data == htonl(0x12345678) &&
		    wc[1].byte_len == 4096 && wc[1].src_qp == 0x22,
		    "RECV with immediate: IBV_WC_WITH_IMM, imm_data in network order");

	memset(wc, 0xcc, sizeof(wc));
	n = mroce_poll_cq(&cq.ibv_cq, 8, wc);
	mtest_check(n == 3, "next poll returns the remaining 3 across the wrap (got %d)",
		    n);
	mtest_check(hdr->cons == base + 5 && hdr->cons == 3, "cons wrapped to 3");
	mtest_check(wc[0].wr_id == 0x3333 &&
		    wc[0].status == IBV_WC_REM_ACCESS_ERR &&
		    wc[0].opcode == IBV_WC_RDMA_READ &&
		    wc[0].vendor_err == 0x77,
		    "error status and vendor_err passed through");
	mtest_check(wc[1].opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
		    wc[1].imm_data == htonl(7) &&
		    wc[1].wc_flags == IBV_WC_WITH_IMM,
		    "RECV_RDMA_WITH_IMM (129) passed through");
	mtest_check(wc[2].status == IBV_WC_WR_FLUSH_ERR &&
		    wc[2].opcode == IBV_WC_FETCH_ADD, "flush error, FETCH_ADD");
	mtest_check(mroce_poll_cq(&cq.ibv_cq, 8, wc) == 0, "drained CQ polls 0");
	mtest_check(mroce_poll_cq(&cq.ibv_cq, 0, wc) == 0 &&
		    mroce_poll_cq(&cq.ibv_cq, -1, wc) == 0, "ne <= 0 polls 0");

	/* A full ring is fine ... */
	for (uint32_t i = 0; i < CQ_SLOTS; i++)
		put_cqe(&fr, 3 + i, &(struct mroce_cqe){ .wr_id = 100 + i });
	hdr->prod = 3 + CQ_SLOTS;
	n = mroce_poll_cq(&cq.ibv_cq, 8, wc);
	mtest_check(n == CQ_SLOTS && wc[0].wr_id == 100 && wc[7].wr_id == 107,
		    "a full ring (prod - cons == num_slots) is consumed whole");
	/* ... one more is a corrupt ring. */
	hdr->prod = hdr->cons + CQ_SLOTS + 1;
	n = mroce_poll_cq(&cq.ibv_cq, 8, wc);
	mtest_check(n == -EIO && hdr->cons == 3 + CQ_SLOTS,
		    "prod - cons > num_slots: -EIO, nothing consumed (got %d)",
		    n);

	/* A CQ left without ring by a failed resize. */
	cq.ring = (struct mroce_ring){};
	mtest_check(mroce_poll_cq(&cq.ibv_cq, 8, wc) == -EIO,
		    "CQ without a ring polls -EIO");

	pthread_spin_destroy(&cq.lock);
	free(fr.mem);
}

/* ------------------------------------------------------------------------
 * SQ: ibv_send_wr -> mroce_send_wqe.
 */

static struct mroce_send_wqe *sq_wqe(struct fake_qp *f, uint32_t idx)
{
	return fr_slot(&f->sq, idx);
}

static struct mroce_sge *sq_sges(struct fake_qp *f, uint32_t idx)
{
	return (struct mroce_sge *)((uint8_t *)fr_slot(&f->sq, idx) + 64);
}

static bool wqe_reserved_zero(const struct mroce_send_wqe *w)
{
	return w->reserved == 0 && w->reserved2[0] == 0 &&
	       w->reserved2[1] == 0;
}

static void test_post_send_encoding(void)
{
	struct fake_qp *f = fake_qp_new(IBV_QPT_RC);
	struct mroce_ring_hdr *hdr = fr_hdr(&f->sq);
	struct ibv_sge sg[SQ_SGE + 1] = {
		{ .addr = 0x1000, .length = 100, .lkey = 0xa1 },
		{ .addr = 0x2000, .length = 200, .lkey = 0xa2 },
		{ .addr = 0x3000, .length = 300, .lkey = 0xa3 },
		{ .addr = 0x4000, .length = 400, .lkey = 0xa4 },
		{ .addr = 0x5000, .length = 500, .lkey = 0xa5 },
	};
	struct ibv_send_wr wr, *bad;
	struct mroce_send_wqe *w;
	struct mroce_sge *s;
	int ret;

	printf("# post_send encoding\n");

	wr = (struct ibv_send_wr){
		.wr_id = 0xabcdef0123456789ULL, .sg_list = sg, .num_sge = 2,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	bad = (void *)1;
	ret = mroce_post_send(fq(f), &wr, &bad);
	w = sq_wqe(f, 0);
	s = sq_sges(f, 0);
	mtest_check(ret == 0 && !bad && hdr->prod == 1,
		    "SEND posted, prod 1, *bad_wr NULL");
	mtest_check(w->wr_id == 0xabcdef0123456789ULL &&
		    w->opcode == IBV_WR_SEND &&
		    w->opcode == IB_UVERBS_WR_SEND && w->num_sge == 2 &&
		    w->flags == MROCE_WQE_SIGNALED && w->imm_data == 0 &&
		    w->inline_len == 0 && wqe_reserved_zero(w) &&
		    bytes_are(&w->wr, sizeof(w->wr), 0),
		    "SEND header: opcode 2, 2 SGEs, SIGNALED, everything else zero");
	mtest_check(s[0].addr == 0x1000 && s[0].length == 100 &&
		    s[0].lkey == 0xa1 && s[1].addr == 0x2000 &&
		    s[1].length == 200 && s[1].lkey == 0xa2,
		    "SEND SGEs follow the 64-byte header");
	mtest_check(syscalls(f) == 0, "no NEED_KICK: no system call");

	wr = (struct ibv_send_wr){
		.wr_id = 2, .sg_list = sg, .num_sge = 1,
		.opcode = IBV_WR_SEND_WITH_IMM, .imm_data = htonl(0xcafe),
		.send_flags = IBV_SEND_SOLICITED | IBV_SEND_FENCE,
	};
	ret = mroce_post_send(fq(f), &wr, &bad);
	w = sq_wqe(f, 1);
	mtest_check(ret == 0 && w->opcode == IB_UVERBS_WR_SEND_WITH_IMM &&
		    w->imm_data == htonl(0xcafe) &&
		    w->flags == (MROCE_WQE_SOLICITED | MROCE_WQE_FENCE) &&
		    wqe_reserved_zero(w) && bytes_are(&w->wr, sizeof(w->wr), 0),
		    "SEND_WITH_IMM: imm as given, SOLICITED|FENCE, unsignaled");

	wr = (struct ibv_send_wr){
		.wr_id = 3, .sg_list = sg, .num_sge = 4,
		.opcode = IBV_WR_RDMA_WRITE_WITH_IMM, .imm_data = htonl(9),
		.wr.rdma = { .remote_addr = 0x7f0000001000ULL, .rkey = 0x55 },
	};
	ret = mroce_post_send(fq(f), &wr, &bad);
	w = sq_wqe(f, 2);
	s = sq_sges(f, 2);
	mtest_check(ret == 0 && w->opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM &&
		    w->num_sge == 4 && w->imm_data == htonl(9) &&
		    w->wr.rdma.remote_addr == 0x7f0000001000ULL &&
		    w->wr.rdma.rkey == 0x55 && w->wr.rdma.reserved == 0 &&
		    w->wr.atomic.swap == 0 && wqe_reserved_zero(w) &&
		    s[3].addr == 0x4000 && s[3].lkey == 0xa4,
		    "RDMA_WRITE_WITH_IMM: rdma fields, 4 SGEs (max)");

	wr = (struct ibv_send_wr){
		.wr_id = 4, .sg_list = sg, .num_sge = 1,
		.opcode = IBV_WR_RDMA_READ, .imm_data = htonl(1),
		.wr.rdma = { .remote_addr = 0x9000, .rkey = 0x66 },
	};
	ret = mroce_post_send(fq(f), &wr, &bad);
	w = sq_wqe(f, 3);
	mtest_check(ret == 0 && w->opcode == IB_UVERBS_WR_RDMA_READ &&
		    w->imm_data == 0 && w->wr.rdma.remote_addr == 0x9000 &&
		    w->wr.rdma.rkey == 0x66,
		    "RDMA_READ: rdma fields, imm_data not copied");

	wr = (struct ibv_send_wr){
		.wr_id = 5, .sg_list = sg, .num_sge = 1,
		.opcode = IBV_WR_ATOMIC_CMP_AND_SWP,
		.wr.atomic = { .remote_addr = 0xa000, .compare_add = 1,
			       .swap = 2, .rkey = 0x77 },
	};
	ret = mroce_post_send(fq(f), &wr, &bad);
	w = sq_wqe(f, 4);
	mtest_check(ret == 0 && w->opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP &&
		    w->wr.atomic.remote_addr == 0xa000 &&
		    w->wr.atomic.compare_add == 1 && w->wr.atomic.swap == 2 &&
		    w->wr.atomic.rkey == 0x77 && w->wr.atomic.reserved == 0 &&
		    wqe_reserved_zero(w),
		    "ATOMIC_CMP_AND_SWP: atomic fields");

	wr.wr_id = 6;
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.wr.atomic.compare_add = 5;
	wr.wr.atomic.swap = 0;
	ret = mroce_post_send(fq(f), &wr, &bad);
	w = sq_wqe(f, 5);
	mtest_check(ret == 0 &&
		    w->opcode == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD &&
		    w->wr.atomic.compare_add == 5,
		    "ATOMIC_FETCH_AND_ADD: add value in compare_add");

	{
		char a[10], b[20];
		struct ibv_sge isg[2] = {
			{ .addr = (uintptr_t)a, .length = sizeof(a), .lkey = 0 },
			{ .addr = (uintptr_t)b, .length = sizeof(b), .lkey = 0 },
		};
		uint8_t *payload;

		memset(a, 'A', sizeof(a));
		memset(b, 'B', sizeof(b));
		wr = (struct ibv_send_wr){
			.wr_id = 7, .sg_list = isg, .num_sge = 2,
			.opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED,
		};
		ret = mroce_post_send(fq(f), &wr, &bad);
		w = sq_wqe(f, 6);
		payload = (uint8_t *)w + 64;
		mtest_check(ret == 0 &&
			    w->flags == (MROCE_WQE_INLINE | MROCE_WQE_SIGNALED) &&
			    w->inline_len == 30 && w->num_sge == 0 &&
			    bytes_are(payload, 10, 'A') &&
			    bytes_are(payload + 10, 20, 'B') &&
			    wqe_reserved_zero(w),
			    "inline SEND: 30 payload bytes after the header, num_sge 0");

		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = 0xb000;
		wr.wr.rdma.rkey = 0x88;
		wr.num_sge = 1;
		ret = mroce_post_send(fq(f), &wr, &bad);
		w = sq_wqe(f, 7);
		mtest_check(ret == 0 && (w->flags & MROCE_WQE_INLINE) &&
			    w->inline_len == 10 && w->wr.rdma.rkey == 0x88,
			    "inline RDMA_WRITE");
	}
	{
		static char big[SQ_INLINE + 1];
		struct ibv_sge isg = { .addr = (uintptr_t)big,
				       .length = SQ_INLINE };

		memset(big, 'C', sizeof(big));
		wr = (struct ibv_send_wr){
			.wr_id = 8, .sg_list = &isg, .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_INLINE,
		};
		ret = mroce_post_send(fq(f), &wr, &bad);
		w = sq_wqe(f, 8);
		mtest_check(ret == 0 && w->inline_len == SQ_INLINE &&
			    bytes_are((uint8_t *)w + 64, SQ_INLINE, 'C'),
			    "inline of exactly max_inline (%d) bytes",
			    SQ_INLINE);

		isg.length = SQ_INLINE + 1;
		ret = mroce_post_send(fq(f), &wr, &bad);
		mtest_check(ret == EINVAL && bad == &wr && hdr->prod == 9,
			    "inline of max_inline + 1 bytes: EINVAL, *bad_wr, not posted");
	}

	{
		struct ibv_sge isg = { .addr = 0x1000, .length = 8 };

		wr = (struct ibv_send_wr){
			.wr_id = 9, .sg_list = &isg, .num_sge = 1,
			.opcode = IBV_WR_RDMA_READ,
			.send_flags = IBV_SEND_INLINE,
		};
		ret = mroce_post_send(fq(f), &wr, &bad);
		mtest_check(ret == EINVAL && bad == &wr, "inline RDMA_READ: EINVAL");
		wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		ret = mroce_post_send(fq(f), &wr, &bad);
		mtest_check(ret == EINVAL && bad == &wr, "inline atomic: EINVAL");
	}

	mtest_check(hdr->prod == 9 && syscalls(f) == 0,
		    "9 WQEs posted, still no system call");
	fake_qp_free(f);
}

/* SEND_WITH_INV: the peer's rkey goes in imm_data, in host order. */
static void test_post_send_inv(void)
{
	struct fake_qp *f = fake_qp_new(IBV_QPT_RC);
	struct ibv_sge sg = { .addr = 0x1000, .length = 64, .lkey = 0xa1 };
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sg, .num_sge = 1,
		.opcode = IBV_WR_SEND_WITH_INV, .invalidate_rkey = 0x12345678,
	};
	struct ibv_send_wr *bad;
	struct mroce_send_wqe *w;
	int ret;

	printf("# post_send SEND_WITH_INV\n");
	ret = mroce_post_send(fq(f), &wr, &bad);
	w = sq_wqe(f, 0);
	mtest_check(ret == 0 && w->opcode == IB_UVERBS_WR_SEND_WITH_INV &&
		    w->imm_data == 0x12345678 && w->num_sge == 1 &&
		    wqe_reserved_zero(w) && bytes_are(&w->wr, sizeof(w->wr), 0),
		    "SEND_WITH_INV: opcode 9, invalidate_rkey in imm_data (host order)");
	fake_qp_free(f);
}

/*
 * Memory windows: IBV_WR_BIND_MW names the window by its rkey, carries
 * the new rkey, the region's lkey, range and access; LOCAL_INV the rkey
 * in imm_data.  No SGE is written for either.  A type 1 window, a
 * window of another context or a length without a region is refused.
 */
static void test_post_send_mw(void)
{
	struct fake_qp *f = fake_qp_new(IBV_QPT_RC);
	struct ibv_context other = {};
	struct ibv_mr mr = { .lkey = 0xabcd01 };
	struct ibv_mw mw2 = { .context = &f->ctx, .rkey = 0x77665544,
			      .type = IBV_MW_TYPE_2 };
	struct ibv_mw mw1 = { .context = &f->ctx, .rkey = 0x11223344,
			      .type = IBV_MW_TYPE_1 };
	struct ibv_mw mwx = { .context = &other, .rkey = 0x1,
			      .type = IBV_MW_TYPE_2 };
	struct ibv_sge sg = { .addr = 0x1000, .length = 64, .lkey = 0xa1 };
	struct ibv_send_wr wr = {
		.wr_id = 7, .opcode = IBV_WR_BIND_MW, .send_flags =
		IBV_SEND_SIGNALED, .sg_list = &sg, .num_sge = 1,
		.bind_mw = { .mw = &mw2, .rkey = 0x77665545, .bind_info = {
			.mr = &mr, .addr = 0x5000, .length = 0x2000,
			.mw_access_flags = IBV_ACCESS_REMOTE_READ } },
	};
	struct ibv_send_wr *bad;
	struct mroce_send_wqe *w;
	int ret;

	printf("# post_send BIND_MW, LOCAL_INV\n");
	ret = mroce_post_send(fq(f), &wr, &bad);
	w = sq_wqe(f, 0);
	mtest_check(ret == 0 && w->opcode == IB_UVERBS_WR_BIND_MW &&
		    w->num_sge == 0 && (w->flags & MROCE_WQE_SIGNALED) &&
		    w->wr.bind.mw_rkey == 0x77665544 &&
		    w->wr.bind.rkey == 0x77665545 &&
		    w->wr.bind.mr_lkey == 0xabcd01 &&
		    w->wr.bind.addr == 0x5000 && w->wr.bind.length == 0x2000 &&
		    w->wr.bind.access == IBV_ACCESS_REMOTE_READ &&
		    wqe_reserved_zero(w),
		    "BIND_MW: opcode 8, window, rkey, lkey, range, access; no SGE");

	wr = (struct ibv_send_wr){ .wr_id = 8, .opcode = IBV_WR_LOCAL_INV,
				   .invalidate_rkey = 0x77665545,
				   .sg_list = &sg, .num_sge = 1 };
	ret = mroce_post_send(fq(f), &wr, &bad);
	w = sq_wqe(f, 1);
	mtest_check(ret == 0 && w->opcode == IB_UVERBS_WR_LOCAL_INV &&
		    w->imm_data == 0x77665545 && w->num_sge == 0 &&
		    wqe_reserved_zero(w) && bytes_are(&w->wr, sizeof(w->wr), 0),
		    "LOCAL_INV: opcode 7, the rkey in imm_data, no SGE");

	wr = (struct ibv_send_wr){ .opcode = IBV_WR_BIND_MW,
				   .bind_mw = { .mw = &mw1, .rkey = 0x11223345 } };
	ret = mroce_post_send(fq(f), &wr, &bad);
	mtest_check(ret == EINVAL && bad == &wr,
		    "BIND_MW of a type 1 window through post_send: EINVAL");
	wr.bind_mw.mw = &mwx;
	ret = mroce_post_send(fq(f), &wr, &bad);
	mtest_check(ret == EINVAL && bad == &wr,
		    "BIND_MW of another context's window: EINVAL");
	wr.bind_mw.mw = &mw2;
	wr.bind_mw.bind_info.length = 4096;
	ret = mroce_post_send(fq(f), &wr, &bad);
	mtest_check(ret == EINVAL && bad == &wr,
		    "BIND_MW of a range with no region: EINVAL");
	wr.bind_mw.bind_info.mr = &mr;
	wr.send_flags = IBV_SEND_INLINE;
	ret = mroce_post_send(fq(f), &wr, &bad);
	mtest_check(ret == EINVAL && bad == &wr, "BIND_MW inline: EINVAL");
	mtest_check(fr_hdr(&f->sq)->prod == 2, "2 WQEs posted");

	/* ibv_bind_mw() (type 1): the next key byte, set on the window */
	ret = mroce_bind_mw(fq(f), &mw1, &(struct ibv_mw_bind){
		.wr_id = 9, .bind_info = { .mr = &mr, .addr = 0x5000,
		.length = 16, .mw_access_flags = IBV_ACCESS_REMOTE_WRITE } });
	w = sq_wqe(f, 2);
	mtest_check(ret == 0 && mw1.rkey == 0x11223345 &&
		    w->opcode == IB_UVERBS_WR_BIND_MW && w->wr_id == 9 &&
		    w->wr.bind.mw_rkey == 0x11223344 &&
		    w->wr.bind.rkey == 0x11223345 && w->wr.bind.length == 16,
		    "ibv_bind_mw: BIND_MW WQE with the next rkey, mw->rkey set");
	ret = mroce_bind_mw(fq(f), &mw2, &(struct ibv_mw_bind){ .wr_id = 10 });
	mtest_check(ret == EINVAL && fr_hdr(&f->sq)->prod == 3,
		    "ibv_bind_mw of a type 2 window: EINVAL, nothing posted");
	fake_qp_free(f);
}

static void test_post_send_errors(void)
{
	struct fake_qp *f = fake_qp_new(IBV_QPT_RC);
	struct mroce_ring_hdr *hdr = fr_hdr(&f->sq);
	struct ibv_sge sg[SQ_SGE + 1] = {};
	struct ibv_send_wr wr[3], *bad;
	/* BIND_MW with no window is refused too */
	static const enum ibv_wr_opcode bad_ops[] = {
		IBV_WR_BIND_MW,
		IBV_WR_TSO, IBV_WR_DRIVER1, IBV_WR_ATOMIC_WRITE, 99,
	};
	int ret;

	printf("# post_send validation\n");

	for (size_t i = 0; i < MTEST_ARRAY_SIZE(bad_ops); i++) {
		wr[0] = (struct ibv_send_wr){ .opcode = bad_ops[i] };
		ret = mroce_post_send(fq(f), &wr[0], &bad);
		mtest_check(ret == EINVAL && bad == &wr[0] && hdr->prod == 0,
			    "opcode %d refused with EINVAL", bad_ops[i]);
	}

	wr[0] = (struct ibv_send_wr){ .opcode = IBV_WR_SEND, .sg_list = sg,
				      .num_sge = SQ_SGE + 1 };
	ret = mroce_post_send(fq(f), &wr[0], &bad);
	mtest_check(ret == EINVAL && bad == &wr[0], "num_sge > max_send_sge: EINVAL");
	wr[0].num_sge = -1;
	ret = mroce_post_send(fq(f), &wr[0], &bad);
	mtest_check(ret == EINVAL && bad == &wr[0], "num_sge < 0: EINVAL");
	wr[0].num_sge = 0;
	wr[0].send_flags = IBV_SEND_IP_CSUM;
	ret = mroce_post_send(fq(f), &wr[0], &bad);
	mtest_check(ret == EINVAL && bad == &wr[0], "IBV_SEND_IP_CSUM: EINVAL");

	/* A list with a bad WR in the middle. */
	wr[0] = (struct ibv_send_wr){ .wr_id = 1, .opcode = IBV_WR_SEND,
				      .next = &wr[1] };
	wr[1] = (struct ibv_send_wr){ .wr_id = 2, .opcode = IBV_WR_TSO,
				      .next = &wr[2] };
	wr[2] = (struct ibv_send_wr){ .wr_id = 3, .opcode = IBV_WR_SEND };
	ret = mroce_post_send(fq(f), &wr[0], &bad);
	mtest_check(ret == EINVAL && bad == &wr[1] && hdr->prod == 1 &&
		    sq_wqe(f, 0)->wr_id == 1,
		    "list: WRs before the bad one posted, *bad_wr = the bad one");

	/* Zero-length SEND. */
	wr[0] = (struct ibv_send_wr){ .wr_id = 4, .opcode = IBV_WR_SEND };
	ret = mroce_post_send(fq(f), &wr[0], &bad);
	mtest_check(ret == 0 && sq_wqe(f, 1)->num_sge == 0 && hdr->prod == 2,
		    "SEND with 0 SGEs posted");

	/* NULL list, NULL bad_wr. */
	mtest_check(mroce_post_send(fq(f), NULL, &bad) == 0 && !bad,
		    "empty list: 0");
	mtest_check(mroce_post_send(fq(f), &wr[0], NULL) == 0 && hdr->prod == 3,
		    "bad_wr NULL tolerated");

	/* Full ring: kernel consumed nothing. */
	while (hdr->prod - hdr->cons < SQ_SLOTS)
		mroce_post_send(fq(f), &wr[0], &bad);
	ret = mroce_post_send(fq(f), &wr[0], &bad);
	mtest_check(ret == ENOMEM && bad == &wr[0] && hdr->prod == SQ_SLOTS,
		    "full SQ (prod - cons == num_slots): ENOMEM");
	__atomic_store_n(&hdr->cons, 1, __ATOMIC_RELEASE);
	ret = mroce_post_send(fq(f), &wr[0], &bad);
	mtest_check(ret == 0 && hdr->prod == SQ_SLOTS + 1,
		    "one slot freed by the consumer: posting works again");

	/* sq_sig_all. */
	f->qp.sq_sig_all = true;
	wr[0] = (struct ibv_send_wr){ .wr_id = 5, .opcode = IBV_WR_SEND };
	__atomic_store_n(&hdr->cons, hdr->prod, __ATOMIC_RELEASE);
	ret = mroce_post_send(fq(f), &wr[0], &bad);
	mtest_check(ret == 0 &&
		    sq_wqe(f, hdr->prod - 1)->flags == MROCE_WQE_SIGNALED,
		    "sq_sig_all: unsignaled WR goes out SIGNALED");
	f->qp.sq_sig_all = false;

	/* QP state. */
	{
		static const enum ibv_qp_state no[] = {
			IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR };
		static const enum ibv_qp_state yes[] = {
			IBV_QPS_RTS, IBV_QPS_SQD, IBV_QPS_SQE, IBV_QPS_ERR };
		uint32_t prod;

		for (size_t i = 0; i < MTEST_ARRAY_SIZE(no); i++) {
			f->qp.vqp.qp.state = no[i];
			prod = hdr->prod;
			ret = mroce_post_send(fq(f), &wr[0], &bad);
			mtest_check(ret == EINVAL && bad == &wr[0] &&
				    hdr->prod == prod,
				    "post_send in state %d: EINVAL", no[i]);
		}
		for (size_t i = 0; i < MTEST_ARRAY_SIZE(yes); i++) {
			f->qp.vqp.qp.state = yes[i];
			prod = hdr->prod;
			ret = mroce_post_send(fq(f), &wr[0], &bad);
			mtest_check(ret == 0 && hdr->prod == prod + 1,
				    "post_send in state %d: posted", yes[i]);
		}
		f->qp.vqp.qp.state = IBV_QPS_RTS;
	}
	mtest_check(syscalls(f) == 0, "no system call in any of this");
	fake_qp_free(f);
}

static void test_doorbell(void)
{
	struct fake_qp *f = fake_qp_new(IBV_QPT_RC);
	struct mroce_ring_hdr *hdr = fr_hdr(&f->sq);
	struct ibv_send_wr wr[3], *bad;
	bool ok;
	int n, ret;

	printf("# SQ doorbell\n");
	wr[0] = (struct ibv_send_wr){ .wr_id = 1, .opcode = IBV_WR_SEND,
				      .next = &wr[1] };
	wr[1] = (struct ibv_send_wr){ .wr_id = 2, .opcode = IBV_WR_SEND,
				      .next = &wr[2] };
	wr[2] = (struct ibv_send_wr){ .wr_id = 3, .opcode = IBV_WR_SEND };

	hdr->flags = MROCE_RING_F_NEED_KICK;
	ret = mroce_post_send(fq(f), &wr[0], &bad);
	n = doorbells(f, IB_USER_VERBS_CMD_POST_SEND, &ok);
	mtest_check(ret == 0 && hdr->prod == 3 && n == 1 && ok,
		    "NEED_KICK: 3 WRs, exactly one well-formed POST_SEND doorbell (got %d)",
		    n);

	wr[0].opcode = IBV_WR_TSO;
	ret = mroce_post_send(fq(f), &wr[0], &bad);
	mtest_check(ret == EINVAL && syscalls(f) == 0,
		    "NEED_KICK but nothing posted: no doorbell");
	wr[0].opcode = IBV_WR_SEND;

	wr[1].opcode = IBV_WR_TSO;
	ret = mroce_post_send(fq(f), &wr[0], &bad);
	n = doorbells(f, IB_USER_VERBS_CMD_POST_SEND, &ok);
	mtest_check(ret == EINVAL && bad == &wr[1] && n == 1 && ok,
		    "NEED_KICK, error after one WR: that one is kicked, EINVAL returned");
	wr[1].opcode = IBV_WR_SEND;

	hdr->flags = 0;
	ret = mroce_post_send(fq(f), &wr[0], &bad);
	mtest_check(ret == 0 && syscalls(f) == 0, "flag cleared: no doorbell");

	/* The RQ's flag is not the SQ's. */
	fr_hdr(&f->rq)->flags = MROCE_RING_F_NEED_KICK;
	ret = mroce_post_send(fq(f), &wr[0], &bad);
	mtest_check(ret == 0 && syscalls(f) == 0,
		    "NEED_KICK on the RQ only: post_send rings nothing");
	fr_hdr(&f->rq)->flags = 0;

	/* The doorbell's write() error reaches the caller. */
	hdr->flags = MROCE_RING_F_NEED_KICK;
	close(f->ctx.cmd_fd);
	f->ctx.cmd_fd = -1;
	ret = mroce_post_send(fq(f), &wr[2], &bad);
	mtest_check(ret == EBADF && !bad,
		    "failed doorbell write(): its errno returned (got %d)",
		    ret);
	f->ctx.cmd_fd = open("/dev/null", O_WRONLY);
	mtest_check(mroce_sq_doorbell(fq(f)) == 0, "doorbell to a sink succeeds");
	/* The fd was replaced: no pipe to read any more. */
	fake_qp_free(f);
}

/* ------------------------------------------------------------------------
 * RQ.
 */

static void test_post_recv(void)
{
	struct fake_qp *f = fake_qp_new(IBV_QPT_RC);
	struct mroce_ring_hdr *hdr = fr_hdr(&f->rq);
	struct ibv_sge sg[3] = {
		{ .addr = 0x1000, .length = 64, .lkey = 1 },
		{ .addr = 0x2000, .length = 128, .lkey = 2 },
		{ .addr = 0x3000, .length = 256, .lkey = 3 },
	};
	struct ibv_recv_wr wr[2], *bad;
	struct mroce_recv_wqe *w;
	struct mroce_sge *s;
	int ret;

	printf("# post_recv\n");
	/* The SQ asking for kicks does not concern receives. */
	fr_hdr(&f->sq)->flags = MROCE_RING_F_NEED_KICK;

	wr[0] = (struct ibv_recv_wr){ .wr_id = 0x77, .num_sge = 0 };
	ret = mroce_post_recv(fq(f), &wr[0], &bad);
	w = fr_slot(&f->rq, 0);
	mtest_check(ret == 0 && !bad && hdr->prod == 1 && w->wr_id == 0x77 &&
		    w->num_sge == 0 && w->reserved == 0,
		    "receive with 0 SGEs posted");

	wr[0] = (struct ibv_recv_wr){ .wr_id = 0x88, .sg_list = sg,
				      .num_sge = 2, .next = &wr[1] };
	wr[1] = (struct ibv_recv_wr){ .wr_id = 0x99, .sg_list = sg + 2,
				      .num_sge = 1 };
	ret = mroce_post_recv(fq(f), &wr[0], &bad);
	w = fr_slot(&f->rq, 1);
	s = (struct mroce_sge *)((uint8_t *)w + 16);
	mtest_check(ret == 0 && hdr->prod == 3 && w->wr_id == 0x88 &&
		    w->num_sge == 2 && w->reserved == 0 &&
		    s[0].addr == 0x1000 &&
		    s[0].length == 64 && s[0].lkey == 1 &&
		    s[1].addr == 0x2000 && s[1].lkey == 2,
		    "receive with 2 SGEs: 16-byte header, SGEs follow");
	w = fr_slot(&f->rq, 2);
	s = (struct mroce_sge *)((uint8_t *)w + 16);
	mtest_check(w->wr_id == 0x99 && w->num_sge == 1 && s[0].addr == 0x3000,
		    "second WR of the list");

	wr[0] = (struct ibv_recv_wr){ .wr_id = 1, .sg_list = sg, .num_sge = 3 };
	ret = mroce_post_recv(fq(f), &wr[0], &bad);
	mtest_check(ret == EINVAL && bad == &wr[0] && hdr->prod == 3,
		    "num_sge > max_recv_sge: EINVAL");

	wr[0] = (struct ibv_recv_wr){ .wr_id = 1 };
	while (hdr->prod - hdr->cons < RQ_SLOTS)
		mroce_post_recv(fq(f), &wr[0], &bad);
	ret = mroce_post_recv(fq(f), &wr[0], &bad);
	mtest_check(ret == ENOMEM && bad == &wr[0] && hdr->prod == RQ_SLOTS,
		    "full RQ: ENOMEM");

	__atomic_store_n(&hdr->cons, hdr->prod, __ATOMIC_RELEASE);
	f->qp.vqp.qp.state = IBV_QPS_RESET;
	ret = mroce_post_recv(fq(f), &wr[0], &bad);
	mtest_check(ret == EINVAL && bad == &wr[0], "RESET: EINVAL");
	f->qp.vqp.qp.state = IBV_QPS_INIT;
	ret = mroce_post_recv(fq(f), &wr[0], &bad);
	mtest_check(ret == 0, "INIT: receives may be posted");

	mtest_check(syscalls(f) == 0,
		    "no NEED_KICK on the RQ: post_recv made no system call");
	fake_qp_free(f);
}

static void test_rq_doorbell(void)
{
	struct fake_qp *f = fake_qp_new(IBV_QPT_RC);
	struct mroce_ring_hdr *hdr = fr_hdr(&f->rq);
	struct ibv_sge sg = { .addr = 0x1000, .length = 64, .lkey = 1 };
	struct ibv_recv_wr wr[3], *bad;
	bool ok;
	int n, ret;

	printf("# RQ doorbell (QP in ERR: the kernel flushes new receives)\n");
	f->qp.vqp.qp.state = IBV_QPS_ERR;
	wr[0] = (struct ibv_recv_wr){ .wr_id = 1, .sg_list = &sg,
				      .num_sge = 1, .next = &wr[1] };
	wr[1] = (struct ibv_recv_wr){ .wr_id = 2, .next = &wr[2] };
	wr[2] = (struct ibv_recv_wr){ .wr_id = 3, .sg_list = &sg,
				      .num_sge = 1 };

	ret = mroce_post_recv(fq(f), &wr[2], &bad);
	mtest_check(ret == 0 && hdr->prod == 1 && syscalls(f) == 0,
		    "ERR but no NEED_KICK yet: posted, no system call");

	hdr->flags = MROCE_RING_F_NEED_KICK;
	ret = mroce_post_recv(fq(f), &wr[0], &bad);
	n = doorbells(f, IB_USER_VERBS_CMD_POST_RECV, &ok);
	mtest_check(ret == 0 && !bad && hdr->prod == 4 && n == 1 && ok,
		    "NEED_KICK: 3 WRs published, then exactly one well-formed POST_RECV doorbell (got %d)",
		    n);
	mtest_check(((struct mroce_recv_wqe *)fr_slot(&f->rq, 3))->wr_id == 3,
		    "the WQEs are in the ring before the doorbell");

	wr[0].num_sge = RQ_SGE + 1;
	ret = mroce_post_recv(fq(f), &wr[0], &bad);
	mtest_check(ret == EINVAL && bad == &wr[0] && hdr->prod == 4 &&
		    syscalls(f) == 0, "NEED_KICK but nothing posted: no doorbell");
	wr[0].num_sge = 1;

	wr[1].num_sge = -1;
	ret = mroce_post_recv(fq(f), &wr[0], &bad);
	n = doorbells(f, IB_USER_VERBS_CMD_POST_RECV, &ok);
	mtest_check(ret == EINVAL && bad == &wr[1] && hdr->prod == 5 &&
		    n == 1 && ok,
		    "NEED_KICK, error after one WR: that one is kicked, EINVAL returned");
	wr[1].num_sge = 0;

	/* The kernel flushed everything; fill the ring, then one more. */
	__atomic_store_n(&hdr->cons, hdr->prod, __ATOMIC_RELEASE);
	wr[2].next = NULL;
	while (hdr->prod - hdr->cons < RQ_SLOTS)
		mroce_post_recv(fq(f), &wr[2], &bad);
	n = doorbells(f, IB_USER_VERBS_CMD_POST_RECV, &ok);
	mtest_check(n == RQ_SLOTS && ok, "one doorbell per post_recv call (%d)",
		    n);
	ret = mroce_post_recv(fq(f), &wr[2], &bad);
	mtest_check(ret == ENOMEM && bad == &wr[2] && syscalls(f) == 0,
		    "full RQ: ENOMEM, no doorbell");

	/* Back to RESET/INIT: the kernel clears the flag, no more calls. */
	__atomic_store_n(&hdr->cons, hdr->prod, __ATOMIC_RELEASE);
	hdr->flags = 0;
	f->qp.vqp.qp.state = IBV_QPS_INIT;
	ret = mroce_post_recv(fq(f), &wr[0], &bad);
	mtest_check(ret == 0 && syscalls(f) == 0, "flag cleared: no doorbell");

	/* The doorbell's write() error reaches the caller. */
	hdr->flags = MROCE_RING_F_NEED_KICK;
	close(f->ctx.cmd_fd);
	f->ctx.cmd_fd = -1;
	n = hdr->prod;
	ret = mroce_post_recv(fq(f), &wr[2], &bad);
	mtest_check(ret == EBADF && !bad && hdr->prod == (uint32_t)n + 1,
		    "failed doorbell write(): its errno returned, the WQE stays posted (got %d)",
		    ret);
	f->ctx.cmd_fd = open("/dev/null", O_WRONLY);
	mtest_check(mroce_rq_doorbell(fq(f)) == 0, "RQ doorbell to a sink succeeds");
	fake_qp_free(f);
}

/* ------------------------------------------------------------------------
 * Threads: application poster and poller against a fake kernel that
 * consumes the SQ and produces one CQE per WQE.  Checks the index protocol
 * (no lost, duplicated or torn entries) with real concurrency.
 */

struct stress {
	struct fake_qp *f;
	struct mroce_cq cq;
	struct fake_ring cqr;
	uint32_t count;
	bool bad_order;
	bool bad_wqe;
	bool bad_wc;
};

static void *stress_kernel(void *arg)
{
	struct stress *st = arg;
	struct mroce_ring_hdr *sq = fr_hdr(&st->f->sq);
	struct mroce_ring_hdr *cq = fr_hdr(&st->cqr);
	uint32_t done = 0, expect = 0;

	while (done < st->count) {
		uint32_t cons = sq->cons;
		uint32_t prod = __atomic_load_n(&sq->prod, __ATOMIC_ACQUIRE);

		for (; cons != prod; cons++) {
			struct mroce_send_wqe w;
			uint32_t cprod = cq->prod;

			memcpy(&w, fr_slot(&st->f->sq, cons), sizeof(w));
			if (w.wr_id != expect || w.opcode != IBV_WR_SEND ||
			    w.num_sge != 1 ||
			    sq_sges(st->f, cons)->length != (uint32_t)w.wr_id)
				st->bad_wqe = true;
			expect++;
			__atomic_store_n(&sq->cons, cons + 1, __ATOMIC_RELEASE);

			while (cprod - __atomic_load_n(&cq->cons, __ATOMIC_ACQUIRE) >=
			       CQ_SLOTS)
				sched_yield();
			put_cqe(&st->cqr, cprod, &(struct mroce_cqe){
				.wr_id = w.wr_id, .opcode = IBV_WC_SEND,
				.byte_len = (uint32_t)w.wr_id });
			__atomic_store_n(&cq->prod, cprod + 1, __ATOMIC_RELEASE);
			done++;
		}
		if (cons == prod)
			sched_yield();
	}
	return NULL;
}

static void *stress_poller(void *arg)
{
	struct stress *st = arg;
	struct ibv_wc wc[4];
	uint32_t got = 0;

	while (got < st->count) {
		int n = mroce_poll_cq(&st->cq.ibv_cq, 4, wc);

		if (n < 0) {
			st->bad_wc = true;
			break;
		}
		for (int i = 0; i < n; i++, got++)
			if (wc[i].wr_id != got || wc[i].byte_len != got ||
			    wc[i].status != IBV_WC_SUCCESS)
				st->bad_order = true;
		if (!n)
			sched_yield();
	}
	return NULL;
}

static void test_stress(uint32_t count)
{
	struct stress st = { .count = count };
	pthread_t kern, poll;
	struct ibv_sge sge = { .addr = 0x1000, .lkey = 1 };
	struct ibv_send_wr wr[3], *bad;
	uint32_t next = 0;
	unsigned int full = 0;

	printf("# threads: %u sends through a fake kernel\n", count);
	st.f = fake_qp_new(IBV_QPT_RC);
	fake_ring_init(&st.cqr, CQ_SLOTS, 32);
	mroce_ring_attach(&st.cq.ring, st.cqr.mem, st.cqr.size, &st.cqr.info);
	pthread_spin_init(&st.cq.lock, PTHREAD_PROCESS_PRIVATE);

	pthread_create(&kern, NULL, stress_kernel, &st);
	pthread_create(&poll, NULL, stress_poller, &st);

	while (next < count) {
		struct ibv_sge sg[3];
		int n = count - next < 3 ? count - next : 3;

		for (int i = 0; i < n; i++) {
			sg[i] = sge;
			sg[i].length = next + i;
			wr[i] = (struct ibv_send_wr){
				.wr_id = next + i, .sg_list = &sg[i],
				.num_sge = 1, .opcode = IBV_WR_SEND,
				.send_flags = IBV_SEND_SIGNALED,
				.next = i + 1 < n ? &wr[i + 1] : NULL,
			};
		}
		if (mroce_post_send(fq(st.f), &wr[0], &bad) == ENOMEM) {
			next = bad->wr_id;
			full++;
			sched_yield();
		} else {
			next += n;
		}
	}
	pthread_join(kern, NULL);
	pthread_join(poll, NULL);

	mtest_check(!st.bad_wqe, "fake kernel read every WQE whole and in order");
	mtest_check(!st.bad_order && !st.bad_wc,
		    "poller got every completion once, in order");
	mtest_check(fr_hdr(&st.f->sq)->prod == count &&
		    fr_hdr(&st.cqr)->cons == count,
		    "indexes end at %u (SQ full %u times)", count, full);

	pthread_spin_destroy(&st.cq.lock);
	free(st.cqr.mem);
	fake_qp_free(st.f);
}

int main(int argc, char **argv)
{
	uint32_t stress = argc > 1 ? strtoul(argv[1], NULL, 0) : 200000;

	mtest_init("ring_test", 0);
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_ring_check();
	test_qp_check_resp();
	test_poll_cq();
	test_post_send_encoding();
	test_post_send_inv();
	test_post_send_mw();
	test_post_send_errors();
	test_doorbell();
	test_post_recv();
	test_rq_doorbell();
	if (stress)
		test_stress(stress);

	return mtest_summary();
}
