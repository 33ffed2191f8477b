// SPDX-License-Identifier: GPL-2.0-only
/*
 * qp_flush_race - work requests posted while the QP moves to ERR, and the
 * QP state at a fatal error completion.  Two RC QPs of one device, A -> B.
 *
 *   qp_flush_race DEV GID_INDEX [ROUNDS [FATAL_ROUNDS]]
 *
 * flush (ROUNDS, default 45): a second thread keeps 3840 WRs posted on A
 *   and polls their completions, in turn: signaled 16 KiB RDMA_WRITEs to
 *   a silent B (left in INIT: nothing completes, nothing schedules A's
 *   requester), receives nothing will consume, WRITEs to a live B.  The
 *   main thread moves A to ERR with ibv_modify_qp.  While the kernel is
 *   still flushing, the poster posts 8 more WRs as soon as it has seen a
 *   few of the flush completions, then nothing.  Every WR must complete
 *   exactly once and in order: WRITEs IBV_WC_SUCCESS, then
 *   IBV_WC_WR_FLUSH_ERR from some point on; receives IBV_WC_WR_FLUSH_ERR.
 *   A WR published after the kernel read the producer index of the ring
 *   it flushes, but before it asked for the doorbell
 *   (MROCE_RING_F_NEED_KICK), would never complete.
 * fatal (FATAL_ROUNDS, default 400): A WRITEs to B with a bad rkey
 *   (IBV_WC_REM_ACCESS_ERR at A), or SENDs more than B's receive holds
 *   (IBV_WC_LOC_LEN_ERR at B, IBV_WC_REM_INV_REQ_ERR at A).  A thread on
 *   CPU 0 posts (the kernel handles the whole exchange in softirq there);
 *   the main thread, on CPU 1, polls the error completions in a tight
 *   loop and asks ibv_query_qp at once: the QP must be in ERR already.
 * one (20 rounds): A posts 8 WRITEs at once; the first fails (a bad rkey,
 *   or B silent and a short retry budget), the second has a bad lkey, a
 *   local error the kernel finds before the first fails.  Exactly one
 *   error completion, the first WRITE's, then only IBV_WC_WR_FLUSH_ERR.
 * Both QPs go RESET -> RTS with new PSNs before every round.  Prints a
 * result line per part ("flush: ...", "fatal: ...", "one: ..."), "FAIL ..."
 * lines, and "qp_flush_race: ok" or "qp_flush_race: N failures".  Exit
 * status 0 only if nothing failed, 2 on usage errors.
 */
#define _GNU_SOURCE		/* pthread_*affinity_np */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mtest.h"

#define SLOTS		4096		/* SQ and RQ of A */
#define DEPTH		(SLOTS - 256)	/* WRs outstanding before the move */
#define EXTRA		8		/* posted while the kernel flushes */
#define WRITE_LEN	16384		/* 16 PSNs: most WRITEs not fetched */
#define BUF_SIZE	(4 * WRITE_LEN)
#define MAX_WR		(1 << 20)
#define WATCHDOG_S	600
#define ONE_ROUNDS	20		/* one error, then flushes */

struct ctx {
	struct ibv_context *dev;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *buf;
	union ibv_gid gid;
	int gidx;
	struct ibv_cq *a_scq, *a_rcq, *b_scq, *b_rcq;
	struct ibv_qp *a, *b;
	uint32_t a_psn, b_psn;
	uint8_t timeout, retry_cnt;	/* of A and B, at the next connect */
	unsigned int seed;
};

/* @qp RESET -> INIT -> RTR -> RTS, sending with @sq_psn to @peer */
static void qp_connect(struct ctx *c, struct ibv_qp *qp, uint32_t sq_psn,
		       struct ibv_qp *peer, uint32_t rq_psn)
{
	struct mtest_path p = {
		.dest_qpn = peer->qp_num, .rq_psn = rq_psn, .sq_psn = sq_psn,
		.dgid = c->gid, .sgid_index = (uint8_t)c->gidx, .port = 1,
		.mtu = IBV_MTU_1024, .rd_atomic = 1, .timeout = c->timeout,
		.retry_cnt = c->retry_cnt,
	};

	mtest_qp_reset_init(qp, 1, IBV_ACCESS_REMOTE_WRITE);
	mtest_qp_rtr_rts(qp, &p);
}

/* Completions left on the four CQs, thrown away */
static int drain_all(struct ctx *c)
{
	return mtest_drain_cq(c->a_scq) + mtest_drain_cq(c->a_rcq) +
	       mtest_drain_cq(c->b_scq) + mtest_drain_cq(c->b_rcq);
}

/*
 * Both QPs back to RTS with new PSNs, no completion left anywhere.  With
 * @silent B stays in INIT: it drops A's packets and never answers.
 */
static void reconnect(struct ctx *c, const char *round, bool silent)
{
	int n;

	c->a_psn = mtest_new_psn(&c->seed, c->a_psn);
	c->b_psn = mtest_new_psn(&c->seed, c->b_psn);
	qp_connect(c, c->a, c->a_psn, c->b, c->b_psn);
	if (silent)
		mtest_qp_reset_init(c->b, 1, IBV_ACCESS_REMOTE_WRITE);
	else
		qp_connect(c, c->b, c->b_psn, c->a, c->a_psn);
	n = drain_all(c);
	if (n)
		mtest_fail("%s: %d stale completions after the reset", round,
			   n);
}

/* @op of @len bytes from the buffer's start to its third quarter */
static int post_write(struct ctx *c, struct ibv_qp *qp, enum ibv_wr_opcode op,
		      uint64_t wr_id, uint32_t len, uint32_t rkey)
{
	return mtest_post_send(qp, wr_id, op, c->buf, len, c->mr->lkey,
			       (uintptr_t)c->buf + 2 * WRITE_LEN, rkey, 0);
}

/* A receive of @len bytes into the buffer's second quarter */
static int post_recv(struct ctx *c, struct ibv_qp *qp, uint64_t wr_id,
		     uint32_t len)
{
	return mtest_post_recv(qp, wr_id, c->buf + WRITE_LEN, len,
			       c->mr->lkey);
}

/* ---------------------------------------------------------------- flush */

struct poster {
	struct ctx *c;
	bool recv;		/* receives on A, else WRITEs from A */
	/*
	 * The ring full (SLOTS outstanding), and one of the EXTRA posted
	 * right after each of the first flush completions: it must find the
	 * slot of that completion free (no ENOMEM)
	 */
	bool full;
	uint32_t depth;		/* WRs outstanding before the move */
	int trigger;		/* flush completions to see before EXTRA */
	atomic_bool moved;	/* ibv_modify_qp to ERR has returned */
	atomic_bool go;		/* the main thread may move A now */
	uint64_t posted, completed, ok, flushed, extra, refused;
	char why[256];		/* the first thing that went wrong */
};

static void poster_bad(struct poster *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void poster_bad(struct poster *p, const char *fmt, ...)
{
	va_list ap;

	if (p->why[0])
		return;
	va_start(ap, fmt);
	vsnprintf(p->why, sizeof(p->why), fmt, ap);
	va_end(ap);
}

static bool poster_post(struct poster *p)
{
	struct ctx *c = p->c;
	int err;

	if (p->recv)
		err = post_recv(c, c->a, p->posted, 0);
	else
		err = post_write(c, c->a, IBV_WR_RDMA_WRITE, p->posted,
				 WRITE_LEN, c->mr->rkey);
	if (err == ENOMEM && p->full && p->flushed) {
		/* slots of polled completions are free: none may fail */
		p->refused++;
		poster_bad(p, "ibv_post_%s of wr_id %llu: ENOMEM with %llu of %u WRs outstanding, right after a flush completion",
			   p->recv ? "recv" : "send",
			   (unsigned long long)p->posted,
			   (unsigned long long)(p->posted - p->completed),
			   SLOTS);
		return false;
	}
	if (err == ENOMEM)	/* ring full until the kernel frees slots */
		return false;
	if (err) {
		poster_bad(p, "ibv_post_%s of wr_id %llu: %s",
			   p->recv ? "recv" : "send",
			   (unsigned long long)p->posted, strerror(err));
		return false;
	}
	p->posted++;
	return true;
}

static void *poster_run(void *arg)
{
	struct poster *p = arg;
	struct ibv_cq *cq = p->recv ? p->c->a_rcq : p->c->a_scq;
	bool extra_done = false;
	double end = 0;
	struct ibv_wc wc[16];
	int n, i;

	for (;;) {
		/* keep DEPTH outstanding until A fails, then only the EXTRA */
		if (!p->flushed) {
			while (p->posted - p->completed < p->depth &&
			       poster_post(p))
				;
			if (p->posted >= p->depth)
				atomic_store(&p->go, true);
		} else if (!extra_done && p->full) {
			/* one per flush completion polled, at once */
			while (p->extra < EXTRA && p->extra < p->flushed &&
			       poster_post(p))
				p->extra++;
			extra_done = p->extra == EXTRA || p->why[0];
		} else if (!extra_done && p->flushed >= (uint64_t)p->trigger) {
			while (p->extra < EXTRA && poster_post(p))
				p->extra++;
			extra_done = p->extra == EXTRA || p->why[0];
		}
		n = ibv_poll_cq(cq, 16, wc);
		if (n < 0) {
			poster_bad(p, "ibv_poll_cq: %d", n);
			break;
		}
		for (i = 0; i < n; i++) {
			bool flush = wc[i].status == IBV_WC_WR_FLUSH_ERR;

			if (wc[i].wr_id != p->completed)
				poster_bad(p, "completion for wr_id %llu, expected %llu (WRs completed in order, each once): %llu posted",
					   (unsigned long long)wc[i].wr_id,
					   (unsigned long long)p->completed,
					   (unsigned long long)p->posted);
			if (!flush && (wc[i].status != IBV_WC_SUCCESS ||
				       p->recv || p->flushed))
				poster_bad(p, "wr_id %llu completed %s after %llu flushed",
					   (unsigned long long)wc[i].wr_id,
					   ibv_wc_status_str(wc[i].status),
					   (unsigned long long)p->flushed);
			p->completed++;
			if (flush)
				p->flushed++;
			else
				p->ok++;
		}
		if (atomic_load(&p->moved)) {
			if (!end)
				end = mtest_now() + 5;
			/* the move is over: a posted WR must be flushed by now */
			if (extra_done && p->completed == p->posted)
				break;
			if (mtest_now() > end) {
				poster_bad(p, "%llu of %llu WRs never completed (%llu ok, %llu flushed, %llu posted during the flush after %d flush completions)",
					   (unsigned long long)(p->posted - p->completed),
					   (unsigned long long)p->posted,
					   (unsigned long long)p->ok,
					   (unsigned long long)p->flushed,
					   (unsigned long long)p->extra,
					   p->trigger);
				break;
			}
			/* the flush ended without reaching the trigger */
			if (!extra_done && p->completed == p->posted &&
			    p->flushed < (uint64_t)p->trigger)
				extra_done = true;
		}
		if (!n)
			sched_yield();
		if (p->posted >= MAX_WR - EXTRA - SLOTS) {
			poster_bad(p, "A did not fail after %llu WRs",
				   (unsigned long long)p->posted);
			break;
		}
	}
	return NULL;
}

enum flush_kind { SQ_SILENT, RQ, SQ_LIVE, SQ_FULL, RQ_FULL, NKINDS };

static const char *const kind_name[] = { "SQ, silent peer", "RQ",
					 "SQ, live peer", "SQ, full",
					 "RQ, full" };

static void flush_round(struct ctx *c, int round, enum flush_kind kind,
			uint64_t *lost_rounds, uint64_t *extra_total,
			uint64_t *refused_total)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	bool recv = kind == RQ || kind == RQ_FULL;
	bool full = kind == SQ_FULL || kind == RQ_FULL;
	struct poster p = { .c = c, .recv = recv, .full = full,
			    .depth = full ? SLOTS : DEPTH };
	pthread_attr_t attr;
	cpu_set_t cpus, old;
	bool pinned = false;
	char what[64];
	pthread_t t;
	double end;
	int err, st;

	snprintf(what, sizeof(what), "flush round %d (%s)", round,
		 kind_name[kind]);
	/*
	 * A silent peer: nothing completes, no ACK schedules the requester
	 * (it would flush whatever the flush missed), and 17 WRITEs are
	 * fetched (256 PSNs in flight), the others not.
	 */
	reconnect(c, what, kind == SQ_SILENT || kind == SQ_FULL);
	/*
	 * Early in the flush, so that the EXTRA posts land before its end;
	 * the kernel flushes the fetched WRITEs before it reads prod.
	 */
	p.trigger = full ? 1 :
		    kind == RQ ? 1 + rand_r(&c->seed) % 8 :
		    kind == SQ_SILENT ? 18 + rand_r(&c->seed) % 24 :
		    1 + rand_r(&c->seed) % 48;
	/*
	 * Full ring: the poster polls on CPU 1 while the kernel flushes on
	 * CPU 0, in the system call of the move to ERR
	 */
	pthread_attr_init(&attr);
	if (full && sysconf(_SC_NPROCESSORS_ONLN) >= 2) {
		CPU_ZERO(&cpus);
		CPU_SET(1, &cpus);
		pthread_attr_setaffinity_np(&attr, sizeof(cpus), &cpus);
		CPU_ZERO(&cpus);
		CPU_SET(0, &cpus);
		pinned = !pthread_getaffinity_np(pthread_self(), sizeof(old),
						 &old) &&
			 !pthread_setaffinity_np(pthread_self(), sizeof(cpus),
						 &cpus);
	}
	err = pthread_create(&t, &attr, poster_run, &p);
	pthread_attr_destroy(&attr);
	if (err)
		mtest_die("pthread_create: %s", strerror(err));
	end = mtest_now() + 30;
	while (!atomic_load(&p.go) && mtest_now() < end)
		mtest_sleep_us(1000);
	/* WRITEs: let some complete (or all be sent) first */
	if (kind == SQ_SILENT || kind == SQ_LIVE)
		mtest_sleep_us(1000 * (1 + rand_r(&c->seed) % 20));
	err = ibv_modify_qp(c->a, &a, IBV_QP_STATE);
	atomic_store(&p.moved, true);
	pthread_join(t, NULL);
	if (pinned)
		pthread_setaffinity_np(pthread_self(), sizeof(old), &old);
	if (err)
		mtest_die("%s: ibv_modify_qp to ERR: %s", what, strerror(err));
	st = mtest_qp_state(c->a);
	if (st != IBV_QPS_ERR)
		mtest_fail("%s: QP A in %s after the move to ERR", what,
			   mtest_qp_state_name(st));
	if (p.why[0]) {
		mtest_fail("%s: %s", what, p.why);
		++*lost_rounds;
	}
	*extra_total += p.extra;
	*refused_total += p.refused;
	if (!p.flushed)
		mtest_fail("%s: nothing was flushed (%llu completed ok)", what,
			   (unsigned long long)p.ok);
}

/* ---------------------------------------------------------------- fatal */

struct fatal_post {
	struct ctx *c;
	bool send;		/* a SEND too long for B's receive */
	int err;
};

/*
 * On another CPU than the poller: the packets this post sends, B's NAK
 * and the error completions are all handled on this CPU, in softirq at
 * the end of the post's system call, while the poller watches.
 */
static void *fatal_post_run(void *arg)
{
	struct fatal_post *fp = arg;
	struct ctx *c = fp->c;

	if (fp->send)
		fp->err = post_write(c, c->a, IBV_WR_SEND, 3, 64, 0);
	else
		fp->err = post_write(c, c->a, IBV_WR_RDMA_WRITE, 1, 64,
				     c->mr->rkey ^ 0x5a5a00);
	return NULL;
}

static void fatal_round(struct ctx *c, int round, int post_cpu,
			uint64_t *not_err)
{
	struct fatal_post fp = { .c = c, .send = round % 2 };
	struct {
		struct ibv_cq *cq;
		struct ibv_qp *qp;
		enum ibv_wc_status want;
		uint64_t wr_id;
		bool seen;
	} w[2] = {
		{ c->a_scq, c->a, fp.send ? IBV_WC_REM_INV_REQ_ERR :
					    IBV_WC_REM_ACCESS_ERR,
		  fp.send ? 3 : 1, false },
		{ c->b_rcq, c->b, IBV_WC_LOC_LEN_ERR, 2, false },
	};
	int i, n, st, left = fp.send ? 2 : 1;
	double end = mtest_now() + 10;
	pthread_attr_t attr;
	struct ibv_wc wc;
	char what[64];
	pthread_t t;

	snprintf(what, sizeof(what), "fatal round %d (%s)", round,
		 fp.send ? "SEND too long" : "bad rkey");
	reconnect(c, what, false);
	if (fp.send && post_recv(c, c->b, 2, 16))
		mtest_die("%s: ibv_post_recv: %s", what, strerror(errno));
	pthread_attr_init(&attr);
	if (post_cpu >= 0) {
		cpu_set_t cpus;

		CPU_ZERO(&cpus);
		CPU_SET(post_cpu, &cpus);
		pthread_attr_setaffinity_np(&attr, sizeof(cpus), &cpus);
	}
	n = pthread_create(&t, &attr, fatal_post_run, &fp);
	pthread_attr_destroy(&attr);
	if (n)
		mtest_die("pthread_create: %s", strerror(n));
	/* each error completion: the state of its QP, asked at once */
	while (left) {
		for (i = 0; i < (fp.send ? 2 : 1); i++) {
			if (w[i].seen)
				continue;
			n = ibv_poll_cq(w[i].cq, 1, &wc);
			if (n < 0)
				mtest_die("%s: ibv_poll_cq: %d", what, n);
			if (!n)
				continue;
			st = mtest_qp_state(w[i].qp);
			w[i].seen = true;
			left--;
			if (wc.status != w[i].want || wc.wr_id != w[i].wr_id)
				mtest_fail("%s: completion %s wr_id %llu, expected %s wr_id %llu",
					   what, ibv_wc_status_str(wc.status),
					   (unsigned long long)wc.wr_id,
					   ibv_wc_status_str(w[i].want),
					   (unsigned long long)w[i].wr_id);
			if (st != IBV_QPS_ERR) {
				mtest_fail("%s: QP %u in %s when its %s completion was polled, expected ERR",
					   what, w[i].qp->qp_num,
					   mtest_qp_state_name(st),
					   ibv_wc_status_str(wc.status));
				++*not_err;
			}
		}
		if (left && mtest_now() > end)
			mtest_die("%s: %d error completions missing after 10 s",
				  what, left);
	}
	pthread_join(t, NULL);
	if (fp.err)
		mtest_fail("%s: ibv_post_send: %s", what, strerror(fp.err));
	mtest_sleep_us(2000);
	n = drain_all(c);
	if (n)
		mtest_fail("%s: %d extra completions", what, n);
}

/* ------------------------------------------------------------------ one */

#define ONE_WRS		8

/*
 * One error completion, then only flushes.  A posts ONE_WRS signaled
 * WRITEs with one ibv_post_send: wr_id 0 fails (a bad rkey: B NAKs it,
 * IBV_WC_REM_ACCESS_ERR; or, with @silent, B never answers and A's retry
 * budget runs out: IBV_WC_RETRY_EXC_ERR), wr_id 1 has a bad lkey (a local
 * error the kernel finds when it fetches it, right after sending wr_id 0,
 * before wr_id 0 can have failed), the rest are fine.  wr_id 0 must
 * complete with its error, every other one IBV_WC_WR_FLUSH_ERR, in order.
 * Returns true if the round went wrong.
 */
static bool one_round(struct ctx *c, int round, bool silent)
{
	enum ibv_wc_status want = silent ? IBV_WC_RETRY_EXC_ERR :
					   IBV_WC_REM_ACCESS_ERR;
	struct ibv_send_wr wr[ONE_WRS], *bad_wr;
	struct ibv_sge sge[ONE_WRS];
	int i, n, got = 0, err;
	double end = mtest_now() + 10;
	bool wrong = false;
	struct ibv_wc wc;
	char what[64];

	snprintf(what, sizeof(what), "one round %d (%s)", round,
		 silent ? "retry budget" : "bad rkey");
	/* silent: 4.2 ms x 2, RTO at most an eighth of it */
	c->timeout = silent ? 10 : 16;
	c->retry_cnt = silent ? 1 : 7;
	reconnect(c, what, silent);
	c->timeout = 16;
	c->retry_cnt = 7;
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < ONE_WRS; i++) {
		sge[i] = (struct ibv_sge){ (uintptr_t)c->buf, 64, c->mr->lkey };
		wr[i].wr_id = i;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_RDMA_WRITE;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].wr.rdma.remote_addr = (uintptr_t)c->buf + 2 * WRITE_LEN;
		wr[i].wr.rdma.rkey = c->mr->rkey;
		wr[i].next = i + 1 < ONE_WRS ? &wr[i + 1] : NULL;
	}
	if (!silent)
		wr[0].wr.rdma.rkey ^= 0x5a5a00;
	sge[1].lkey ^= 0x5a5a00;
	err = ibv_post_send(c->a, wr, &bad_wr);
	if (err)
		mtest_die("%s: ibv_post_send: %s", what, strerror(err));
	while (got < ONE_WRS) {
		n = ibv_poll_cq(c->a_scq, 1, &wc);
		if (n < 0)
			mtest_die("%s: ibv_poll_cq: %d", what, n);
		if (!n) {
			if (mtest_now() > end)
				mtest_die("%s: %d of %d completions missing after 10 s",
					  what, ONE_WRS - got, ONE_WRS);
			sched_yield();
			continue;
		}
		if (wc.wr_id != (uint64_t)got ||
		    wc.status != (got ? IBV_WC_WR_FLUSH_ERR : want)) {
			mtest_fail("%s: completion %d: wr_id %llu %s, expected wr_id %d %s",
				   what, got, (unsigned long long)wc.wr_id,
				   ibv_wc_status_str(wc.status), got,
				   ibv_wc_status_str(got ? IBV_WC_WR_FLUSH_ERR : want));
			wrong = true;
		}
		got++;
	}
	mtest_sleep_us(2000);
	n = drain_all(c);
	if (n) {
		mtest_fail("%s: %d extra completions", what, n);
		wrong = true;
	}
	return wrong;
}

/* Poll on CPU 1, post on CPU 0; -1 (no pinning) on a single CPU. */
static int fatal_cpus(void)
{
	cpu_set_t cpus;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return -1;
	CPU_ZERO(&cpus);
	CPU_SET(1, &cpus);
	if (pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus))
		return -1;
	return 0;
}

/* ----------------------------------------------------------------- main */

static struct ibv_qp *make_qp(struct ctx *c, struct ibv_cq *scq,
			      struct ibv_cq *rcq)
{
	struct ibv_qp_cap cap = { .max_send_wr = SLOTS, .max_recv_wr = SLOTS,
				  .max_send_sge = 1, .max_recv_sge = 1 };
	struct ibv_qp *qp = mtest_create_rc_qp(c->pd, scq, rcq, &cap);

	if (!qp)
		mtest_die("ibv_create_qp: %s", strerror(errno));
	if (cap.max_send_wr != SLOTS || cap.max_recv_wr != SLOTS)
		mtest_die("QP with %u/%u slots, wanted %u", cap.max_send_wr,
			  cap.max_recv_wr, SLOTS);
	return qp;
}

int main(int argc, char **argv)
{
	uint64_t lost[NKINDS] = {}, extra = 0, not_err = 0, one_wrong = 0;
	uint64_t refused = 0;
	struct ctx c = {};
	int i, rounds, fatal_rounds, cpu;
	double t;

	if (argc < 3 || argc > 5) {
		fprintf(stderr, "usage: qp_flush_race DEV GID_INDEX [ROUNDS [FATAL_ROUNDS]]\n");
		return 2;
	}
	rounds = argc > 3 ? atoi(argv[3]) : 45;
	fatal_rounds = argc > 4 ? atoi(argv[4]) : 400;
	if (rounds < 0 || fatal_rounds < 0)
		return 2;
	mtest_init("qp_flush_race", MTEST_STAMP);
	mtest_watchdog(WATCHDOG_S);
	setvbuf(stdout, NULL, _IOLBF, 0);
	c.seed = (unsigned int)getpid() ^ (unsigned int)(mtest_now() * 1e6);
	c.timeout = 16;		/* 268 ms x 8: longer than a round */
	c.retry_cnt = 7;
	printf("qp_flush_race: seed %u, %d flush rounds, %d fatal rounds\n",
	       c.seed, rounds, fatal_rounds);

	c.dev = mtest_open_device(argv[1]);
	c.gidx = atoi(argv[2]);
	if (ibv_query_gid(c.dev, 1, c.gidx, &c.gid))
		mtest_die("ibv_query_gid GID[%d]: %s", c.gidx, strerror(errno));
	c.pd = ibv_alloc_pd(c.dev);
	c.buf = mtest_alloc(BUF_SIZE);
	c.a_scq = ibv_create_cq(c.dev, 2 * SLOTS, NULL, NULL, 0);
	c.a_rcq = ibv_create_cq(c.dev, 2 * SLOTS, NULL, NULL, 0);
	c.b_scq = ibv_create_cq(c.dev, 64, NULL, NULL, 0);
	c.b_rcq = ibv_create_cq(c.dev, 64, NULL, NULL, 0);
	if (!c.pd || !c.a_scq || !c.a_rcq || !c.b_scq || !c.b_rcq)
		mtest_die("alloc PD / CQs: %s", strerror(errno));
	memset(c.buf, 0x5a, BUF_SIZE);
	c.mr = mtest_reg_mr(c.pd, c.buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
			    IBV_ACCESS_REMOTE_WRITE, "buffer");
	c.a = make_qp(&c, c.a_scq, c.a_rcq);
	c.b = make_qp(&c, c.b_scq, c.b_rcq);

	t = mtest_now();
	for (i = 0; i < rounds; i++)
		flush_round(&c, i, i % NKINDS, &lost[i % NKINDS], &extra,
			    &refused);
	printf("flush: %d rounds, with a WR lost or wrong: %llu (SQ, silent peer) %llu (RQ) %llu (SQ, live peer) %llu (SQ, full) %llu (RQ, full); %llu WRs posted while the kernel flushed; %llu refused (ENOMEM) right after a flush completion; %.1f s\n",
	       rounds, (unsigned long long)lost[SQ_SILENT],
	       (unsigned long long)lost[RQ], (unsigned long long)lost[SQ_LIVE],
	       (unsigned long long)lost[SQ_FULL],
	       (unsigned long long)lost[RQ_FULL],
	       (unsigned long long)extra, (unsigned long long)refused,
	       mtest_now() - t);
	t = mtest_now();
	cpu = fatal_cpus();
	for (i = 0; i < fatal_rounds; i++)
		fatal_round(&c, i, cpu, &not_err);
	printf("fatal: %d rounds, %llu error completions polled before the QP read ERR (%s); %.1f s\n",
	       fatal_rounds, (unsigned long long)not_err,
	       cpu < 0 ? "one CPU" : "posted on CPU 0, polled on CPU 1",
	       mtest_now() - t);

	t = mtest_now();
	for (i = 0; i < ONE_ROUNDS; i++)
		one_wrong += one_round(&c, i, i % 2);
	printf("one: %d rounds, %llu with another completion than one error and then only flushes; %.1f s\n",
	       ONE_ROUNDS, (unsigned long long)one_wrong, mtest_now() - t);

	ibv_destroy_qp(c.a);
	ibv_destroy_qp(c.b);
	ibv_dereg_mr(c.mr);
	ibv_destroy_cq(c.a_scq);
	ibv_destroy_cq(c.a_rcq);
	ibv_destroy_cq(c.b_scq);
	ibv_destroy_cq(c.b_rcq);
	ibv_dealloc_pd(c.pd);
	ibv_close_device(c.dev);
	if (mtest_failed)
		printf("qp_flush_race: %u failures\n", mtest_failed);
	else
		printf("qp_flush_race: ok\n");
	return mtest_failed ? 1 : 0;
}
