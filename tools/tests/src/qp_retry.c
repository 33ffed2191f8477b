// SPDX-License-Identifier: GPL-2.0-only
/*
 * qp_retry - an RC requester whose peer goes away: IBV_WC_RETRY_EXC_ERR
 * within the verbs retry budget, flushes, and reset and reuse of the QP.
 *
 *   qp_retry server DEV GIDX PORT
 *   qp_retry client DEV GIDX SERVER_IP PORT --mode MODE [options]
 *
 * The server answers one client, over a TCP control connection that
 * carries QPN, PSN, GID, buffer address and rkey, then the client's
 * commands (reset and reconnect, check the data that arrived, receive a
 * SEND and answer with an RDMA_WRITE_WITH_IMM, bye).  The client's MODE:
 *
 *   retry     stream signaled RDMA_WRITEs (--size bytes, --depth
 *             outstanding, in-order completions checked), print
 *             "qp_retry client: streaming"; the caller then takes the link
 *             down.  The oldest outstanding WR must complete
 *             IBV_WC_RETRY_EXC_ERR, every later one (and one posted
 *             afterwards, and the posted receive) IBV_WC_WR_FLUSH_ERR,
 *             the QP must be in ERR, already when the RETRY_EXC_ERR
 *             completion is polled.  When: with T = 4.096 us x 2^timeout
 *             and budget = T x (retry_cnt + 1), not earlier than budget -
 *             --tol-ms after the driver's last progress, and not later
 *             than budget + --rto-max-ms + --slack-ms after the last
 *             successful completion.  The driver's last progress is an
 *             ACK, later than the post of the last WRITE that completed:
 *             the time from that post ("upper_bound_ms") bounds the
 *             driver's time without progress from above, whatever the
 *             scheduling delays here; the time from the completion as
 *             this process saw it ("retry_exc_after_ms") is printed too.
 *             Then "qp_retry client: waiting for the link": it waits for
 *             the port to be ACTIVE again and resets and reuses the QP.
 *   idle      the same, but the QP is idle (nothing outstanding) for
 *             longer than T x (retry_cnt + 1) before it posts one WRITE
 *             into the dead link: prints "qp_retry client: idle" when the
 *             caller should take the link down; the budget runs from the
 *             post ("retry_exc_after_post_ms=...")
 *   infinite  timeout 0 (never give up): stream, the caller takes the link
 *             down for a while (at least --min-down-ms) and up again; no
 *             error completion at all, the WRITEs stalled by the outage
 *             complete after it and their data is verified, then a
 *             SEND/WRITE_WITH_IMM exchange ("stall_ms=... drained_after_up_ms=...")
 *   flush     no peer loss: a SEND the server has no receive for (RNR
 *             NAKed, retried forever), --depth WRITEs behind it and 4
 *             receives outstanding, the client moves its QP to ERR with
 *             ibv_modify_qp: all of them, and 4 WRITEs posted in ERR,
 *             complete IBV_WC_WR_FLUSH_ERR in order; then reset and reuse
 *
 * reuse: both sides RESET -> INIT -> RTR -> RTS with new PSNs (exchanged
 * over TCP), 48 RDMA_WRITEs whose data the server verifies, a
 * SEND_WITH_IMM the server verifies (length, immediate, bytes), and an
 * RDMA_WRITE_WITH_IMM from the server the client verifies.
 *
 * Options: --timeout T (local ACK timeout exponent, default 17 = 537 ms),
 * --retry R (retry_cnt, default 1), --depth N (outstanding WRITEs, 16),
 * --size B (bytes per WRITE, 1..65536, default 65536), --tol-ms M
 * (jiffies rounding below the budget, 10), --rto-max-ms M (200, RTO_max
 * in drivers/infiniband/sw/mroce/mroce_rto.h),
 * --slack-ms S (scheduling slack on top, 1000), --min-down-ms M (infinite:
 * minimum outage, 2500), --wait-s S (longest wait for the link to go
 * down, come back or a completion, 30).
 *
 * Every wait is bounded; a watchdog (SIGALRM, 150 s) ends a process stuck
 * anywhere.  Progress lines end with the time since the start, "[t=S]".
 * Lines starting "FAIL" name what went wrong; the last line is
 * "qp_retry <role>: <mode>: ok" or "...: N failures".  Exit 0 only if
 * nothing failed; 2 for usage errors.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mtest.h"

#define NSLOT		16			/* WRITE slots */
#define MSG		65536			/* bytes per WRITE */
#define RECV_OFF	(NSLOT * MSG)		/* SEND target (server), source (client) */
#define IMM_OFF		(RECV_OFF + MSG)	/* WRITE_WITH_IMM target (client), source (server) */
#define BUF_SIZE	(IMM_OFF + MSG)
#define SEND_LEN	5000
#define IMM_LEN		12345
#define KEY_SEND	0xfffff01u		/* pattern keys of the two messages */
#define KEY_IMM		0xfffff02u
#define WRID_EXTRA	0xe000000000000000ull	/* WRs that are not stream seqs */
#define WATCHDOG_S	150

/* 100 us between two polls of an empty CQ */
static void nap(void)
{
	mtest_sleep_us(100);
}

static void msleep(int ms)
{
	mtest_sleep_us(ms * 1000L);
}

/* ------------------------------------------------------------ payload */

static uint32_t mix(uint32_t a, uint32_t b)
{
	uint32_t x = a * 0x9e3779b1u ^ (b + 0x7f4a7c15u);

	x ^= x >> 15;
	x *= 0x2c1b3c6du;
	x ^= x >> 12;
	x *= 0x297a2d39u;
	x ^= x >> 15;
	return x;
}

static uint32_t pat_key(uint32_t gen, uint64_t seq)
{
	return mix(gen, (uint32_t)seq);
}

static void fill(uint8_t *p, size_t len, uint32_t key)
{
	size_t i;
	uint32_t w = 0;

	for (i = 0; i < len; i++) {
		if (i % 4 == 0)
			w = mix(key, (uint32_t)(i / 4));
		p[i] = (uint8_t)(w >> (8 * (i % 4)));
	}
}

/* -1 if @p holds the pattern of @key, else the first bad offset */
static long differs(const uint8_t *p, size_t len, uint32_t key)
{
	size_t i;
	uint32_t w = 0;

	for (i = 0; i < len; i++) {
		if (i % 4 == 0)
			w = mix(key, (uint32_t)(i / 4));
		if (p[i] != (uint8_t)(w >> (8 * (i % 4))))
			return (long)i;
	}
	return -1;
}

/* ------------------------------------------------------------ control */

static void ctl_send(struct mtest_lines *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void ctl_send(struct mtest_lines *l, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	n = strlen(line);
	line[n++] = '\n';
	if (mtest_send_all(l->fd, line, n))
		mtest_die("control connection: send: %s", strerror(errno));
}

/* One line from the peer (no newline), within @ms; dies on EOF/timeout. */
static void ctl_recv(struct mtest_lines *l, char *line, size_t size, int ms)
{
	switch (mtest_read_line(l, line, size, ms)) {
	case 1:
		return;
	case 0:
		mtest_die("control connection: nothing from the peer for %d ms",
			  ms);
	case -2:
		mtest_die("control connection: a line longer than %zu bytes",
			  size - 1);
	default:
		mtest_die("control connection closed by the peer%s%s",
			  errno ? ": " : "", errno ? strerror(errno) : "");
	}
}

/* --------------------------------------------------------------- verbs */

struct peer {
	uint32_t qpn, psn, rkey;
	uint64_t addr;
	union ibv_gid gid;
};

struct ctx {
	struct ibv_context *dev;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	union ibv_gid gid;
	int gidx;
	struct mtest_lines ctl;	/* the TCP control connection */
	uint8_t timeout, retry;
	uint32_t psn;
	unsigned int seed;	/* of the PSNs */
	struct peer peer;
};

#define ACCESS (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

static void open_dev(struct ctx *c, const char *name, int gidx)
{
	struct ibv_qp_cap cap = { .max_send_wr = 64, .max_recv_wr = 16,
				  .max_send_sge = 1, .max_recv_sge = 1 };

	c->dev = mtest_open_device(name);
	c->gidx = gidx;
	if (ibv_query_gid(c->dev, 1, gidx, &c->gid))
		mtest_die("ibv_query_gid %s GID[%d]: %s", name, gidx,
			  strerror(errno));
	c->pd = ibv_alloc_pd(c->dev);
	c->scq = ibv_create_cq(c->dev, 128, NULL, NULL, 0);
	c->rcq = ibv_create_cq(c->dev, 32, NULL, NULL, 0);
	if (!c->pd || !c->scq || !c->rcq)
		mtest_die("alloc PD / create CQ: %s", strerror(errno));
	c->buf = mtest_alloc(BUF_SIZE);
	c->mr = mtest_reg_mr(c->pd, c->buf, BUF_SIZE,
			     IBV_ACCESS_LOCAL_WRITE | ACCESS, "buffer");
	c->qp = mtest_create_rc_qp(c->pd, c->scq, c->rcq, &cap);
	if (!c->qp)
		mtest_die("ibv_create_qp: %s", strerror(errno));
}

static int qp_state(struct ctx *c)
{
	return mtest_qp_state(c->qp);
}

static void qp_reset_init(struct ctx *c)
{
	mtest_qp_reset_init(c->qp, 1, ACCESS);
}

static void qp_rtr_rts(struct ctx *c)
{
	struct mtest_path p = {
		.dest_qpn = c->peer.qpn, .rq_psn = c->peer.psn,
		.sq_psn = c->psn, .dgid = c->peer.gid,
		.sgid_index = (uint8_t)c->gidx, .port = 1,
		.mtu = IBV_MTU_1024, .rd_atomic = 1, .timeout = c->timeout,
		.retry_cnt = c->retry,
	};

	mtest_qp_rtr_rts(c->qp, &p);
}

static void send_hello(struct ctx *c, const char *word)
{
	char g[64];

	ctl_send(&c->ctl, "%s %u %u %s %llu %u", word, c->qp->qp_num, c->psn,
		 mtest_gid_str(&c->gid, g, sizeof(g)),
		 (unsigned long long)(uintptr_t)c->buf, c->mr->rkey);
}

static int parse_hello(struct ctx *c, const char *line, const char *word)
{
	char w[16], g[64];
	unsigned long long addr;

	if (sscanf(line, "%15s %u %u %63s %llu %u", w, &c->peer.qpn,
		   &c->peer.psn, g, &addr, &c->peer.rkey) != 6 ||
	    strcmp(w, word) || mtest_gid_parse(g, &c->peer.gid))
		return -1;
	c->peer.addr = addr;
	return 0;
}

/* @op from @loff in our buffer to @roff in the peer's; the errno value */
static int post_write(struct ctx *c, enum ibv_wr_opcode op, uint64_t wr_id,
		      uint32_t loff, uint32_t len, uint64_t roff, uint32_t imm)
{
	return mtest_post_send(c->qp, wr_id, op, c->buf + loff, len,
			       c->mr->lkey, c->peer.addr + roff, c->peer.rkey,
			       imm);
}

static int post_recv(struct ctx *c, uint64_t wr_id, uint32_t off, uint32_t len)
{
	return mtest_post_recv(c->qp, wr_id, c->buf + off, len, c->mr->lkey);
}

/* Whatever is left on both CQs; returns how many completions. */
static int drain_cqs(struct ctx *c)
{
	return mtest_drain_cq(c->scq) + mtest_drain_cq(c->rcq);
}

static int port_state(struct ctx *c)
{
	struct ibv_port_attr pa;

	if (ibv_query_port(c->dev, 1, &pa))
		mtest_die("ibv_query_port: %s", strerror(errno));
	return pa.state;
}

static void wait_port(struct ctx *c, bool active, int secs)
{
	double end = mtest_now() + secs;

	while ((port_state(c) == IBV_PORT_ACTIVE) != active) {
		if (mtest_now() > end)
			mtest_die("the port did not go %s within %d s",
				  active ? "ACTIVE" : "DOWN", secs);
		msleep(20);
	}
}

/* ------------------------------------------------------------ streaming */

struct stream {
	uint32_t gen;
	uint32_t size;		/* bytes per WRITE */
	int depth;
	bool post_more;
	uint64_t posted, done;	/* WRITE sequence numbers = wr_ids */
	double t_last_ok;	/* time of the last successful completion */
	double t_last_ok_post;	/* when that WRITE was posted */
	double max_gap;		/* longest time between two of them */
	double t_post[NSLOT];	/* post time of the WRITE in each slot */
};

static void stream_post(struct ctx *c, struct stream *s)
{
	while (s->post_more && s->posted - s->done < (uint64_t)s->depth) {
		uint32_t slot = s->posted % NSLOT;
		int err;

		fill(c->buf + slot * MSG, s->size, pat_key(s->gen, s->posted));
		err = post_write(c, IBV_WR_RDMA_WRITE, s->posted, slot * MSG,
				 s->size, slot * MSG, 0);
		if (err)
			mtest_die("ibv_post_send of WRITE %llu: %s",
				  (unsigned long long)s->posted, strerror(err));
		s->t_post[slot] = mtest_now();
		s->posted++;
	}
}

/*
 * Post up to the depth, poll one completion (one at a time, so that an
 * error completion is seen in order).  Returns 0 if nothing completed, 1
 * if a WRITE completed successfully, -1 with the error completion in @err.
 */
static int stream_step(struct ctx *c, struct stream *s, struct ibv_wc *err)
{
	struct ibv_wc wc;
	int n;

	stream_post(c, s);
	n = ibv_poll_cq(c->scq, 1, &wc);
	if (n < 0)
		mtest_die("ibv_poll_cq: %d", n);
	if (!n)
		return 0;
	if (wc.status != IBV_WC_SUCCESS) {
		*err = wc;
		return -1;
	}
	if (wc.wr_id != s->done || wc.opcode != IBV_WC_RDMA_WRITE)
		mtest_fail("WRITE completion out of order or wrong: wr_id %llu opcode %d, expected wr_id %llu RDMA_WRITE",
			   (unsigned long long)wc.wr_id, wc.opcode,
			   (unsigned long long)s->done);
	if (s->t_last_ok && mtest_now() - s->t_last_ok > s->max_gap)
		s->max_gap = mtest_now() - s->t_last_ok;
	s->t_last_ok = mtest_now();
	s->t_last_ok_post = s->t_post[s->done % NSLOT];
	s->done++;
	return 1;
}

/* Stream until @count more WRITEs completed successfully, then drain. */
static void stream_n(struct ctx *c, struct stream *s, uint64_t count, int secs)
{
	uint64_t goal = s->done + count;
	double end = mtest_now() + secs;
	struct ibv_wc wc;

	s->post_more = true;
	while (s->done < goal) {
		if (s->posted >= goal)
			s->post_more = false;
		switch (stream_step(c, s, &wc)) {
		case -1:
			mtest_die("WRITE %llu completed with %s (%d), vendor_err %u",
				  (unsigned long long)wc.wr_id,
				  ibv_wc_status_str(wc.status), wc.status,
				  wc.vendor_err);
		case 0:
			if (mtest_now() > end)
				mtest_die("only %llu of %llu WRITEs completed within %d s",
					  (unsigned long long)(count - (goal - s->done)),
					  (unsigned long long)count, secs);
			nap();
			break;
		default:
			break;
		}
	}
	s->post_more = false;
}

/* Ask the server whether its slots hold the last WRITEs of @s. */
static void check_remote(struct ctx *c, struct stream *s, const char *what)
{
	uint64_t first = s->done > NSLOT ? s->done - NSLOT : 0;
	char line[512];

	ctl_send(&c->ctl, "CHECK %u %llu %llu %u", s->gen,
		 (unsigned long long)first,
		 (unsigned long long)(s->done - first), s->size);
	ctl_recv(&c->ctl, line, sizeof(line), 30000);
	if (strncmp(line, "OK", 2))
		mtest_fail("%s: the server's memory is wrong: %s", what, line);
	else
		mtest_say("%s: the server verified WRITEs %llu..%llu byte for byte",
			  what, (unsigned long long)first,
			  (unsigned long long)s->done - 1);
}

/*
 * SEND_WITH_IMM to the server, which checks it and answers with an
 * RDMA_WRITE_WITH_IMM that we check.  A receive must be posted.
 */
static void send_exchange(struct ctx *c, uint32_t gen, const char *what)
{
	uint32_t imm = 0x5e0d0000u | (gen & 0xffff);
	struct ibv_wc wc;
	char line[512];
	long off;
	int err;

	memset(c->buf + IMM_OFF, 0, MSG);
	fill(c->buf + RECV_OFF, SEND_LEN, pat_key(gen, KEY_SEND));
	err = post_write(c, IBV_WR_SEND_WITH_IMM, WRID_EXTRA | 1, RECV_OFF,
			 SEND_LEN, 0, imm);
	if (err)
		mtest_die("%s: ibv_post_send SEND_WITH_IMM: %s", what,
			  strerror(err));
	if (!mtest_wait_wc(c->scq, &wc, 10000))
		mtest_die("%s: no completion of the SEND_WITH_IMM within 10 s",
			  what);
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_SEND ||
	    wc.wr_id != (WRID_EXTRA | 1))
		mtest_die("%s: SEND_WITH_IMM completed %s, opcode %d, wr_id %#llx",
			  what, ibv_wc_status_str(wc.status), wc.opcode,
			  (unsigned long long)wc.wr_id);
	ctl_send(&c->ctl, "SENT %u %u %u", SEND_LEN, imm, gen);
	ctl_recv(&c->ctl, line, sizeof(line), 30000);
	if (strncmp(line, "OK", 2)) {
		mtest_fail("%s: the server: %s", what, line);
		return;
	}
	if (!mtest_wait_wc(c->rcq, &wc, 10000))
		mtest_die("%s: no receive completion for the server's WRITE_WITH_IMM within 10 s",
			  what);
	if (wc.status != IBV_WC_SUCCESS ||
	    wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM ||
	    !(wc.wc_flags & IBV_WC_WITH_IMM) || ntohl(wc.imm_data) != imm + 1 ||
	    wc.byte_len != IMM_LEN || wc.qp_num != c->qp->qp_num) {
		mtest_fail("%s: receive completion: status %s opcode %d flags %#x imm %#x (expected %#x) byte_len %u (expected %u) qp %u",
			   what, ibv_wc_status_str(wc.status), wc.opcode,
			   wc.wc_flags, ntohl(wc.imm_data), imm + 1,
			   wc.byte_len, IMM_LEN, wc.qp_num);
		return;
	}
	off = differs(c->buf + IMM_OFF, IMM_LEN, pat_key(gen, KEY_IMM));
	if (off >= 0 || c->buf[IMM_OFF + IMM_LEN] != 0) {
		mtest_fail("%s: WRITE_WITH_IMM data wrong at offset %ld", what,
			   off >= 0 ? off : IMM_LEN);
		return;
	}
	mtest_say("%s: SEND_WITH_IMM (%u bytes) verified by the server, its WRITE_WITH_IMM (%u bytes, imm %#x) verified here",
		  what, SEND_LEN, IMM_LEN, imm + 1);
}

/* Both sides RESET -> RTS with new PSNs, then WRITEs and SEND/IMM. */
static void reuse(struct ctx *c, uint32_t gen, const char *what)
{
	struct stream s = { .gen = gen, .size = MSG, .depth = NSLOT };
	uint32_t old = c->psn;
	char line[512];
	int n, st;

	qp_reset_init(c);
	st = qp_state(c);
	if (st != IBV_QPS_INIT)
		mtest_fail("%s: QP in %s after RESET -> INIT", what,
			   mtest_qp_state_name(st));
	n = drain_cqs(c);
	if (n)
		mtest_fail("%s: %d stale completions after the reset", what, n);
	if (post_recv(c, WRID_EXTRA | 2, 0, 0))
		mtest_die("%s: ibv_post_recv in INIT: %s", what,
			  strerror(errno));
	c->psn = mtest_new_psn(&c->seed, old);
	ctl_send(&c->ctl, "RESET %u", c->psn);
	ctl_recv(&c->ctl, line, sizeof(line), 30000);
	if (sscanf(line, "READY %u", &c->peer.psn) != 1)
		mtest_die("%s: server answered '%s' to RESET", what, line);
	qp_rtr_rts(c);
	mtest_say("%s: QP %u reset and reconnected, sq_psn %u (was %u), rq_psn %u",
		  what, c->qp->qp_num, c->psn, old, c->peer.psn);
	stream_n(c, &s, 48, 30);
	check_remote(c, &s, what);
	send_exchange(c, gen, what);
	st = qp_state(c);
	if (st != IBV_QPS_RTS)
		mtest_fail("%s: QP in %s after reuse", what,
			   mtest_qp_state_name(st));
}

/* ------------------------------------------------------------- server */

static int do_server(struct ctx *c, const char *port)
{
	char line[512];
	struct ibv_wc wc;
	int ls, st;

	ls = mtest_tcp_listen(port);
	mtest_say("listening on TCP port %s", port);
	mtest_lines_init(&c->ctl, mtest_tcp_accept(ls, 60));
	c->timeout = 14;
	c->retry = 7;
	c->psn = mtest_new_psn(&c->seed, 0);
	qp_reset_init(c);

	for (;;) {
		unsigned int gen, len, imm, size;
		unsigned long long first, count, i;

		/* the client may wait for a link to come back first */
		ctl_recv(&c->ctl, line, sizeof(line), 120000);
		if (!strncmp(line, "HELLO ", 6)) {
			if (parse_hello(c, line, "HELLO"))
				mtest_die("bad HELLO: %s", line);
			if (post_recv(c, 1, RECV_OFF, MSG))
				mtest_die("ibv_post_recv: %s", strerror(errno));
			qp_rtr_rts(c);
			send_hello(c, "HELLO");
			mtest_say("QP %u connected to QP %u", c->qp->qp_num,
				  c->peer.qpn);
		} else if (sscanf(line, "RESET %u", &c->peer.psn) == 1) {
			st = qp_state(c);
			qp_reset_init(c);
			drain_cqs(c);
			memset(c->buf, 0, BUF_SIZE);
			if (post_recv(c, 2, RECV_OFF, MSG))
				mtest_die("ibv_post_recv: %s", strerror(errno));
			c->psn = mtest_new_psn(&c->seed, c->psn);
			qp_rtr_rts(c);
			ctl_send(&c->ctl, "READY %u", c->psn);
			mtest_say("QP %u was in %s; reset and reconnected, sq_psn %u rq_psn %u",
				  c->qp->qp_num, mtest_qp_state_name(st),
				  c->psn, c->peer.psn);
		} else if (sscanf(line, "CHECK %u %llu %llu %u", &gen, &first,
				  &count, &size) == 4 && size <= MSG) {
			long off = -1;

			for (i = first; i < first + count && off < 0; i++)
				off = differs(c->buf + (i % NSLOT) * MSG, size,
					      pat_key(gen, i));
			if (off >= 0) {
				mtest_fail("WRITE %llu (gen %u, slot %llu): wrong data at offset %ld",
					   i - 1, gen, (i - 1) % NSLOT, off);
				ctl_send(&c->ctl, "FAIL WRITE %llu wrong at offset %ld",
					 i - 1, off);
			} else {
				ctl_send(&c->ctl, "OK");
			}
		} else if (sscanf(line, "SENT %u %u %u", &len, &imm, &gen) == 3) {
			char why[200] = "";
			long off;

			if (!mtest_wait_wc(c->rcq, &wc, 10000))
				snprintf(why, sizeof(why), "no receive completion within 10 s");
			else if (wc.status != IBV_WC_SUCCESS ||
				 wc.opcode != IBV_WC_RECV ||
				 !(wc.wc_flags & IBV_WC_WITH_IMM) ||
				 ntohl(wc.imm_data) != imm || wc.byte_len != len)
				snprintf(why, sizeof(why),
					 "receive completion: %s opcode %d flags %#x imm %#x (want %#x) byte_len %u (want %u)",
					 ibv_wc_status_str(wc.status), wc.opcode,
					 wc.wc_flags, ntohl(wc.imm_data), imm,
					 wc.byte_len, len);
			else if ((off = differs(c->buf + RECV_OFF, len,
						pat_key(gen, KEY_SEND))) >= 0)
				snprintf(why, sizeof(why), "SEND data wrong at offset %ld", off);
			if (!why[0]) {
				fill(c->buf + IMM_OFF, IMM_LEN, pat_key(gen, KEY_IMM));
				if (post_write(c, IBV_WR_RDMA_WRITE_WITH_IMM, 3,
					       IMM_OFF, IMM_LEN, IMM_OFF, imm + 1))
					snprintf(why, sizeof(why), "ibv_post_send WRITE_WITH_IMM: %s",
						 strerror(errno));
				else if (!mtest_wait_wc(c->scq, &wc, 10000))
					snprintf(why, sizeof(why), "WRITE_WITH_IMM: no completion within 10 s");
				else if (wc.status != IBV_WC_SUCCESS || wc.wr_id != 3)
					snprintf(why, sizeof(why), "WRITE_WITH_IMM completed %s",
						 ibv_wc_status_str(wc.status));
			}
			if (why[0]) {
				mtest_fail("%s", why);
				ctl_send(&c->ctl, "FAIL %s", why);
			} else {
				mtest_say("SEND_WITH_IMM %u bytes imm %#x verified; answered with WRITE_WITH_IMM",
					  len, imm);
				ctl_send(&c->ctl, "OK");
			}
		} else if (!strcmp(line, "BYE")) {
			ctl_send(&c->ctl, "BYE");
			break;
		} else {
			mtest_die("unknown command from the client: %s", line);
		}
	}
	return 0;
}

/* ------------------------------------------------------------- client */

struct opts {
	const char *mode;
	int timeout, retry, depth, size;
	double tol_ms, rto_max_ms, slack_ms, min_down_ms;
	int wait_s;
};

static double t_ms(int timeout)
{
	return 4.096e-3 * (double)(1ull << timeout);
}

/*
 * After the first error completion @first: it must be RETRY_EXC_ERR for
 * the oldest outstanding WRITE, every later one flushed, the QP in ERR
 * (already when @first was polled), a WRITE posted now flushed too, and
 * the receive.
 */
static void check_failed(struct ctx *c, struct stream *s,
			 const struct ibv_wc *first)
{
	uint64_t seq, flushed = 0;
	struct ibv_wc wc;
	int st, st0 = qp_state(c);

	if (first->status != IBV_WC_RETRY_EXC_ERR)
		mtest_fail("first error completion: %s (%d), expected IBV_WC_RETRY_EXC_ERR",
			   ibv_wc_status_str(first->status), first->status);
	if (first->wr_id != s->done)
		mtest_fail("RETRY_EXC_ERR for wr_id %llu, expected the oldest outstanding WRITE %llu",
			   (unsigned long long)first->wr_id,
			   (unsigned long long)s->done);
	if (first->qp_num != c->qp->qp_num)
		mtest_fail("error completion names QP %u, not %u",
			   first->qp_num, c->qp->qp_num);
	for (seq = first->wr_id + 1; seq < s->posted; seq++) {
		if (!mtest_wait_wc(c->scq, &wc, 5000)) {
			mtest_fail("WRITE %llu: no completion within 5 s after the RETRY_EXC_ERR",
				   (unsigned long long)seq);
			break;
		}
		if (wc.status != IBV_WC_WR_FLUSH_ERR || wc.wr_id != seq)
			mtest_fail("after RETRY_EXC_ERR: wr_id %llu completed %s, expected WRITE %llu IBV_WC_WR_FLUSH_ERR",
				   (unsigned long long)wc.wr_id,
				   ibv_wc_status_str(wc.status),
				   (unsigned long long)seq);
		else
			flushed++;
	}
	/* asked as soon as the error completion was polled */
	if (st0 != IBV_QPS_ERR)
		mtest_fail("QP in %s when its RETRY_EXC_ERR completion was polled, expected ERR",
			   mtest_qp_state_name(st0));
	st = qp_state(c);
	if (st != IBV_QPS_ERR)
		mtest_fail("QP in %s after RETRY_EXC_ERR, expected ERR",
			   mtest_qp_state_name(st));
	/* a WR posted in ERR is flushed (C10-96) */
	if (post_write(c, IBV_WR_RDMA_WRITE, WRID_EXTRA | 7, 0, MSG, 0, 0))
		mtest_fail("ibv_post_send in ERR: %s", strerror(errno));
	else if (!mtest_wait_wc(c->scq, &wc, 5000))
		mtest_fail("a WRITE posted in ERR did not complete within 5 s");
	else if (wc.status != IBV_WC_WR_FLUSH_ERR || wc.wr_id != (WRID_EXTRA | 7))
		mtest_fail("a WRITE posted in ERR completed %s (wr_id %#llx), expected IBV_WC_WR_FLUSH_ERR",
			   ibv_wc_status_str(wc.status),
			   (unsigned long long)wc.wr_id);
	if (!mtest_wait_wc(c->rcq, &wc, 5000))
		mtest_fail("the posted receive was not flushed within 5 s");
	else if (wc.status != IBV_WC_WR_FLUSH_ERR || wc.wr_id != (WRID_EXTRA | 3))
		mtest_fail("the receive completed %s (wr_id %#llx), expected IBV_WC_WR_FLUSH_ERR",
			   ibv_wc_status_str(wc.status),
			   (unsigned long long)wc.wr_id);
	mtest_say("%llu WRITEs completed before the failure, 1 RETRY_EXC_ERR, %llu flushed, QP in %s (%s at the error completion)",
		  (unsigned long long)s->done, (unsigned long long)flushed,
		  mtest_qp_state_name(st), mtest_qp_state_name(st0));
}

static void mode_retry(struct ctx *c, const struct opts *o, bool idle)
{
	struct stream s = { .gen = 1, .size = o->size, .depth = o->depth,
			    .post_more = true };
	double exp = t_ms(o->timeout) * (o->retry + 1);
	double lo = exp - o->tol_ms, hi = exp + o->rto_max_ms + o->slack_ms;
	double t0 = mtest_now(), t_down = 0, t_port = 0, t_err, t_post = 0;
	double ms, ms_down, ms_upper;
	bool announced = false;
	struct ibv_wc wc;
	int r;

	mtest_say("timeout %d (T = %.1f ms), retry_cnt %d: RETRY_EXC_ERR expected %.0f ms after the last progress (accepted: >= %.0f ms after it, <= %.0f ms after the last completion)",
		  o->timeout, t_ms(o->timeout), o->retry, exp, lo, hi);
	if (idle) {
		double idle_s = (exp + 300) / 1000;

		stream_n(c, &s, 32, 30);
		mtest_say("idle");	/* the caller takes the link down now */
		wait_port(c, false, o->wait_s);
		t_down = mtest_now();
		while (mtest_now() - s.t_last_ok < idle_s)
			msleep(10);
		mtest_say("idle for %.0f ms with the port down; posting one WRITE",
			  (mtest_now() - s.t_last_ok) * 1000);
		s.post_more = true;
		s.depth = 1;
		t_post = mtest_now();
	}
	for (;;) {
		r = stream_step(c, &s, &wc);
		if (r < 0)
			break;
		if (idle && r > 0)
			mtest_fail("the WRITE posted into the dead link completed successfully");
		if (!announced && s.done >= 32) {
			announced = true;
			mtest_say("streaming");	/* the caller takes the link down */
		}
		if (mtest_now() > t_port) {
			if (!t_down && port_state(c) != IBV_PORT_ACTIVE) {
				t_down = mtest_now();
				mtest_say("port down after %llu WRITEs completed",
					  (unsigned long long)s.done);
			}
			t_port = mtest_now() + 0.01;
		}
		if (mtest_now() - (t_down ? t_down : t0) > o->wait_s + hi / 1000)
			mtest_die("no error completion %s (%llu WRITEs completed)",
				  t_down ? "long after the port went down" :
					   "and the port never went down",
				  (unsigned long long)s.done);
		if (!r)
			nap();
	}
	t_err = mtest_now();
	ms = (t_err - (idle ? t_post : s.t_last_ok)) * 1000;
	/*
	 * The driver's last progress is an ACK for, so later than the post
	 * of, the last WRITE that completed: from that post on, the time is
	 * an upper bound of the driver's no-progress time, whatever the
	 * scheduling delays of this process.  (Idle: the post of the WRITE.)
	 */
	ms_upper = (t_err - (idle ? t_post : s.t_last_ok_post)) * 1000;
	ms_down = t_down ? (t_err - t_down) * 1000 : -1;
	check_failed(c, &s, &wc);
	printf("%s=%.0f upper_bound_ms=%.0f since_port_down_ms=%.0f expected_min_ms=%.0f expected_max_ms=%.0f budget_ms=%.0f timeout=%d retry_cnt=%d status=%s\n",
	       idle ? "retry_exc_after_post_ms" : "retry_exc_after_ms", ms,
	       ms_upper, ms_down, lo, hi, exp, o->timeout, o->retry,
	       ibv_wc_status_str(wc.status));
	fflush(stdout);
	/* jiffies: the driver may round down by a tick or two (HZ >= 250) */
	if (ms_upper < lo)
		mtest_fail("RETRY_EXC_ERR at most %.0f ms after the last progress: too early (T x (retry_cnt + 1) = %.0f ms)",
			   ms_upper, exp);
	else if (ms > hi)
		mtest_fail("RETRY_EXC_ERR %.0f ms after the last completion: too late (T x (retry_cnt + 1) + RTO_max + slack = %.0f ms)",
			   ms, hi);
	else
		mtest_say("RETRY_EXC_ERR %.0f ms after the last completion, at most %.0f ms after the last progress: within %.0f..%.0f ms",
			  ms, ms_upper, lo, hi);
	if (ms < exp * 0.9)
		mtest_say("note: %.0f ms from the last completion seen here, less than the budget: this process saw that completion %.0f ms after posting the WRITE (scheduling delays); the bound that counts is upper_bound_ms",
			  ms, ms_upper - ms);
	mtest_say("waiting for the link");	/* the caller brings it back */
	wait_port(c, true, o->wait_s);
	reuse(c, 2, "reuse after RETRY_EXC_ERR");
}

static void mode_infinite(struct ctx *c, const struct opts *o)
{
	struct stream s = { .gen = 1, .size = o->size, .depth = o->depth,
			    .post_more = true };
	double t0 = mtest_now(), t_down = 0, t_up = 0, t_port = 0;
	double t_resumed = 0, t_drained = 0;
	bool announced = false;
	struct ibv_wc wc;
	uint64_t stalled = 0;
	int r;

	mtest_say("timeout 0: the QP must wait for the peer forever");
	for (;;) {
		r = stream_step(c, &s, &wc);
		if (r < 0)
			mtest_die("WRITE %llu completed with %s (%d) %.0f ms after the port went down: timeout 0 must never give up",
				  (unsigned long long)wc.wr_id,
				  ibv_wc_status_str(wc.status), wc.status,
				  t_down ? (mtest_now() - t_down) * 1e3 : -1.0);
		if (r > 0 && t_up && !t_resumed)
			t_resumed = mtest_now();
		if (!announced && s.done >= 32) {
			announced = true;
			mtest_say("streaming");
		}
		if (mtest_now() > t_port) {
			int active = port_state(c) == IBV_PORT_ACTIVE;

			if (!t_down && !active) {
				t_down = mtest_now();
				stalled = s.posted - s.done;
				s.post_more = false;
				mtest_say("port down, %llu WRITEs outstanding",
					  (unsigned long long)stalled);
			} else if (t_down && !t_up && active) {
				t_up = mtest_now();
				mtest_say("port up again after %.0f ms",
					  (t_up - t_down) * 1000);
			}
			t_port = mtest_now() + 0.01;
		}
		if (t_up && s.done == s.posted) {
			t_drained = mtest_now();
			break;
		}
		if (!t_down && mtest_now() - t0 > o->wait_s)
			mtest_die("the port did not go down within %d s",
				  o->wait_s);
		if (t_down && !t_up && mtest_now() - t_down > o->wait_s)
			mtest_die("the port did not come back within %d s",
				  o->wait_s);
		if (t_up && mtest_now() - t_up > o->wait_s)
			mtest_die("%llu WRITEs still outstanding %d s after the link came back",
				  (unsigned long long)(s.posted - s.done),
				  o->wait_s);
		if (!r)
			nap();
	}
	printf("stall_ms=%.0f port_down_ms=%.0f resumed_after_up_ms=%.0f drained_after_up_ms=%.0f stalled_writes=%llu size=%u min_down_ms=%.0f\n",
	       s.max_gap * 1000, (t_up - t_down) * 1000,
	       t_resumed ? (t_resumed - t_up) * 1000 : -1.0,
	       (t_drained - t_up) * 1000, (unsigned long long)stalled,
	       s.size, o->min_down_ms);
	fflush(stdout);
	if ((t_up - t_down) * 1000 < o->min_down_ms)
		mtest_fail("the link was down for %.0f ms only, less than %.0f ms: nothing proven",
			   (t_up - t_down) * 1000, o->min_down_ms);
	if (s.max_gap * 1000 < o->min_down_ms)
		mtest_fail("completions stalled for %.0f ms only (< %.0f ms)?",
			   s.max_gap * 1000, o->min_down_ms);
	if (!stalled)
		mtest_fail("no WRITE was outstanding while the link was down");
	if (qp_state(c) != IBV_QPS_RTS)
		mtest_fail("QP in %s after the outage, expected RTS",
			   mtest_qp_state_name(qp_state(c)));
	check_remote(c, &s, "after the outage");
	stream_n(c, &s, 32, 30);
	check_remote(c, &s, "resumed");
	/* the receive posted at connect time takes the WRITE_WITH_IMM */
	send_exchange(c, 1, "resumed");
}

static void mode_flush(struct ctx *c, const struct opts *o)
{
	struct stream s = { .gen = 1, .size = o->size, .depth = o->depth,
			    .post_more = true };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	uint64_t want, flushed = 0;
	struct ibv_wc wc;
	int i, st, recvs = 0;

	/*
	 * Keep WRs outstanding without touching the link: the first SEND
	 * takes the server's only receive, the second is RNR NAKed for as
	 * long as it is retried (rnr_retry 7), and the WRITEs behind it
	 * cannot complete before it.
	 */
	if (post_write(c, IBV_WR_SEND, WRID_EXTRA | 8, RECV_OFF, 100, 0, 0))
		mtest_die("ibv_post_send SEND: %s", strerror(errno));
	if (!mtest_wait_wc(c->scq, &wc, 10000))
		mtest_die("no completion of the first SEND within 10 s");
	if (wc.status != IBV_WC_SUCCESS || wc.wr_id != (WRID_EXTRA | 8))
		mtest_die("the first SEND completed %s, wr_id %#llx",
			  ibv_wc_status_str(wc.status),
			  (unsigned long long)wc.wr_id);
	if (post_write(c, IBV_WR_SEND, WRID_EXTRA | 9, RECV_OFF, 100, 0, 0))
		mtest_die("ibv_post_send SEND: %s", strerror(errno));
	stream_post(c, &s);
	/* the connect-time receive plus 3 more, never consumed */
	for (i = 4; i < 7; i++)
		if (post_recv(c, WRID_EXTRA | i, IMM_OFF, MSG))
			mtest_die("ibv_post_recv: %s", strerror(errno));
	msleep(200);
	if (ibv_poll_cq(c->scq, 1, &wc))
		mtest_die("a WR completed (%s, wr_id %#llx) although a SEND before it waits for a receive (RNR)",
			  ibv_wc_status_str(wc.status),
			  (unsigned long long)wc.wr_id);
	mtest_modify_qp(c->qp, &a, IBV_QP_STATE, "ERR");
	st = qp_state(c);
	if (st != IBV_QPS_ERR)
		mtest_fail("QP in %s after modify to ERR",
			   mtest_qp_state_name(st));
	for (i = 0; i < 4; i++)
		if (post_write(c, IBV_WR_RDMA_WRITE, WRID_EXTRA | (16 + i), 0,
			       MSG, 0, 0))
			mtest_fail("ibv_post_send in ERR: %s", strerror(errno));
	/* the SEND, the WRITEs, the WRs posted in ERR: flushed, in order */
	for (i = -1; i < (int)s.posted + 4; i++) {
		want = i < 0 ? WRID_EXTRA | 9 : i < (int)s.posted ?
			(uint64_t)i : WRID_EXTRA | (16 + i - s.posted);
		if (!mtest_wait_wc(c->scq, &wc, 5000)) {
			mtest_fail("wr_id %#llx: no completion within 5 s of the move to ERR",
				   (unsigned long long)want);
			break;
		}
		if (wc.status != IBV_WC_WR_FLUSH_ERR || wc.wr_id != want)
			mtest_fail("completion %s wr_id %#llx, expected IBV_WC_WR_FLUSH_ERR for wr_id %#llx",
				   ibv_wc_status_str(wc.status),
				   (unsigned long long)wc.wr_id,
				   (unsigned long long)want);
		else
			flushed++;
	}
	for (i = 0; i < 4; i++) {
		want = WRID_EXTRA | (3 + i);
		if (!mtest_wait_wc(c->rcq, &wc, 5000)) {
			mtest_fail("receive %d of 4 not flushed within 5 s",
				   i + 1);
			break;
		}
		if (wc.status != IBV_WC_WR_FLUSH_ERR || wc.wr_id != want)
			mtest_fail("receive: %s wr_id %#llx, expected IBV_WC_WR_FLUSH_ERR wr_id %#llx",
				   ibv_wc_status_str(wc.status),
				   (unsigned long long)wc.wr_id,
				   (unsigned long long)want);
		else
			recvs++;
	}
	if (ibv_poll_cq(c->scq, 1, &wc) || ibv_poll_cq(c->rcq, 1, &wc))
		mtest_fail("an extra completion: %s wr_id %#llx",
			   ibv_wc_status_str(wc.status),
			   (unsigned long long)wc.wr_id);
	printf("flush_flushed_sends=%llu of %llu flush_recvs=%d of 4\n",
	       (unsigned long long)flushed,
	       (unsigned long long)s.posted + 5, recvs);
	mtest_say("modify to ERR: the RNR-blocked SEND, %llu WRITEs behind it and 4 WRITEs posted in ERR flushed in order (%llu of %llu), %d receives flushed",
		  (unsigned long long)s.posted, (unsigned long long)flushed,
		  (unsigned long long)s.posted + 5, recvs);
	reuse(c, 2, "reuse after modify to ERR");
}

static int do_client(struct ctx *c, const char *ip, const char *port,
		     const struct opts *o)
{
	char line[512];

	mtest_lines_init(&c->ctl, mtest_tcp_connect(ip, port, 20));
	c->timeout = (uint8_t)o->timeout;
	c->retry = (uint8_t)o->retry;
	c->psn = mtest_new_psn(&c->seed, 0);
	qp_reset_init(c);
	if (post_recv(c, WRID_EXTRA | 3, 0, 0))
		mtest_die("ibv_post_recv: %s", strerror(errno));
	send_hello(c, "HELLO");
	ctl_recv(&c->ctl, line, sizeof(line), 30000);
	if (parse_hello(c, line, "HELLO"))
		mtest_die("bad HELLO from the server: %s", line);
	qp_rtr_rts(c);
	mtest_say("QP %u connected to QP %u, timeout %d retry_cnt %d, sq_psn %u rq_psn %u",
		  c->qp->qp_num, c->peer.qpn, o->timeout, o->retry, c->psn,
		  c->peer.psn);

	if (!strcmp(o->mode, "retry"))
		mode_retry(c, o, false);
	else if (!strcmp(o->mode, "idle"))
		mode_retry(c, o, true);
	else if (!strcmp(o->mode, "infinite"))
		mode_infinite(c, o);
	else
		mode_flush(c, o);

	ctl_send(&c->ctl, "BYE");
	ctl_recv(&c->ctl, line, sizeof(line), 30000);
	return 0;
}

/* --NAME VALUE into @o; -1 for an unknown NAME */
static int parse_opt(struct opts *o, const char *name, const char *v)
{
	const struct { const char *name; int *i; double *d; } num[] = {
		{ "--timeout", .i = &o->timeout },
		{ "--retry", .i = &o->retry },
		{ "--depth", .i = &o->depth },
		{ "--size", .i = &o->size },
		{ "--wait-s", .i = &o->wait_s },
		{ "--tol-ms", .d = &o->tol_ms },
		{ "--rto-max-ms", .d = &o->rto_max_ms },
		{ "--slack-ms", .d = &o->slack_ms },
		{ "--min-down-ms", .d = &o->min_down_ms },
	};
	size_t k;

	if (!strcmp(name, "--mode")) {
		o->mode = v;
		return 0;
	}
	for (k = 0; k < MTEST_ARRAY_SIZE(num); k++) {
		if (strcmp(name, num[k].name))
			continue;
		if (num[k].i)
			*num[k].i = atoi(v);
		else
			*num[k].d = atof(v);
		return 0;
	}
	return -1;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: qp_retry server DEV GIDX PORT\n"
		"       qp_retry client DEV GIDX SERVER_IP PORT --mode retry|idle|infinite|flush\n"
		"                [--timeout T] [--retry R] [--depth N] [--size B] [--tol-ms M]\n"
		"                [--rto-max-ms M] [--slack-ms S] [--min-down-ms M] [--wait-s S]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct opts o = { .mode = "retry", .timeout = 17, .retry = 1,
			  .depth = NSLOT, .size = MSG, .tol_ms = 10, .rto_max_ms = 200,
			  .slack_ms = 1000, .min_down_ms = 2500, .wait_s = 30 };
	struct ctx c = {};
	bool server;
	int i;

	if (argc < 5)
		usage();
	server = !strcmp(argv[1], "server");
	if (!server && (strcmp(argv[1], "client") || argc < 6))
		usage();
	for (i = server ? 5 : 6; i < argc; i += 2)
		if (i + 1 == argc || parse_opt(&o, argv[i], argv[i + 1]))
			usage();
	if (strcmp(o.mode, "retry") && strcmp(o.mode, "idle") &&
	    strcmp(o.mode, "infinite") && strcmp(o.mode, "flush"))
		usage();
	if (!strcmp(o.mode, "infinite"))
		o.timeout = 0;
	if (o.timeout < 0 || o.timeout > 31 || o.retry < 0 || o.retry > 7 ||
	    o.depth < 1 || o.depth > NSLOT || o.wait_s < 1 ||
	    o.size < 1 || o.size > MSG ||
	    (!o.timeout && (!strcmp(o.mode, "retry") || !strcmp(o.mode, "idle"))))
		usage();

	mtest_init(server ? "qp_retry server" : "qp_retry client",
		   MTEST_STAMP);
	mtest_watchdog(WATCHDOG_S);
	setvbuf(stdout, NULL, _IOLBF, 0);
	c.seed = (unsigned int)getpid() ^ (unsigned int)(mtest_now() * 1e6);
	open_dev(&c, argv[2], atoi(argv[3]));
	if (server)
		do_server(&c, argv[4]);
	else
		do_client(&c, argv[4], argv[5], &o);
	ibv_destroy_qp(c.qp);
	ibv_dereg_mr(c.mr);
	ibv_destroy_cq(c.scq);
	ibv_destroy_cq(c.rcq);
	ibv_dealloc_pd(c.pd);
	ibv_close_device(c.dev);
	if (mtest_failed)
		mtest_say("%s: %u failures", server ? "server" : o.mode,
			  mtest_failed);
	else
		mtest_say("%s: ok", server ? "server" : o.mode);
	return mtest_failed ? 1 : 0;
}
