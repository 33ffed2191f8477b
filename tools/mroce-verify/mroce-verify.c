// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * mroce-verify: end-to-end data-integrity test of an RDMA device's RC
 * transport, through libibverbs only (works on mroce, rxe, any HCA).
 *
 * Two processes, a server and a client, each open a device and create RC
 * QPs that they connect by hand (RESET -> INIT -> RTR -> RTS with a GRH,
 * like ibv_rc_pingpong).  A TCP connection carries the setup (QPN, PSN,
 * GID, buffer addresses and rkeys) and sequences the test: both sides
 * derive the same plan (operations, sizes, SGE layouts, immediates) and the
 * same payload bytes from the seed, so every side can check every byte it
 * receives, and every byte around it (guard zones), against an expected
 * image of its whole buffer.  Phases:
 *
 *   basic      every opcode at the edge sizes (0, 1, MTU-1, MTU, MTU+1,
 *              max), 3 SGEs at odd offsets, the device's max SGEs, inline,
 *              zero-length WRITE_WITH_IMM into a receive with no SGEs, with
 *              an arbitrary address and rkey, 0- and 1-byte READs, RNR
 *   random     --iters messages, random opcodes/sizes/SGEs/flags, batched
 *   chain      NCCL's pattern: unsignaled RDMA_WRITEs ending in a signaled
 *              RDMA_WRITE_WITH_IMM (imm = byte count) consumed by a receive
 *              with no SGEs, then a 1-byte RDMA_READ flush of written data
 *   atomic     CMP_AND_SWP and FETCH_AND_ADD sequences on one 8-byte cell
 *              (returned original values and final memory)
 *   solicited  solicited-only CQ notification: no event for an unsolicited
 *              completion, an event for a solicited one (fresh QP pair)
 *   errors     remote access violations on fresh QP pairs: expected error
 *              status, remote (and local) memory unchanged, later WRs
 *              flushed, QP in ERR
 *
 * Data phases run in both directions.  Every wait has a timeout.  Exit
 * status 0 only if every check passed.  See --help.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "mtest.h"

#define ME "mroce-verify"
#define PROTO_VERSION 1

#define MAX_SGE		32	/* SGEs per WR we ever use */
#define MAX_BATCH	12	/* WRs per batch */
#define NSLOTS		MAX_BATCH /* buffer slots, one per WR of a batch */
#define SLOT_HEAD	4096	/* room before a slot's data for odd offsets */
#define QP_DEPTH	256
#define PAGE		4096u

enum { SIDE_CLIENT = 0, SIDE_SERVER = 1 };

/* ------------------------------------------------------------ options */

enum op {
	OP_SEND, OP_SEND_IMM, OP_WRITE, OP_WRITE_IMM, OP_READ, OP_CAS, OP_FAA,
	OP__N
};
static const char *const op_name[OP__N] = {
	"SEND", "SEND_WITH_IMM", "RDMA_WRITE", "RDMA_WRITE_WITH_IMM",
	"RDMA_READ", "ATOMIC_CMP_AND_SWP", "ATOMIC_FETCH_AND_ADD",
};

/* --ops names: the opcodes, then features/phases */
enum {
	F_SEND = 1 << OP_SEND, F_SEND_IMM = 1 << OP_SEND_IMM,
	F_WRITE = 1 << OP_WRITE, F_WRITE_IMM = 1 << OP_WRITE_IMM,
	F_READ = 1 << OP_READ, F_CAS = 1 << OP_CAS, F_FAA = 1 << OP_FAA,
	F_INLINE = 1 << 8, F_SGE = 1 << 9, F_CHAIN = 1 << 10,
	F_SOLICITED = 1 << 11, F_ERRORS = 1 << 12, F_RNR = 1 << 13,
	F_OPS = (1 << OP__N) - 1,
	F_ALL = F_OPS | F_INLINE | F_SGE | F_CHAIN | F_SOLICITED | F_ERRORS |
		F_RNR,
};
static const struct { const char *name; unsigned int bits; } op_words[] = {
	{ "send", F_SEND }, { "send_imm", F_SEND_IMM }, { "write", F_WRITE },
	{ "write_imm", F_WRITE_IMM }, { "read", F_READ }, { "cas", F_CAS },
	{ "faa", F_FAA }, { "atomic", F_CAS | F_FAA }, { "inline", F_INLINE },
	{ "sge", F_SGE }, { "chain", F_CHAIN }, { "solicited", F_SOLICITED },
	{ "errors", F_ERRORS }, { "rnr", F_RNR },
	{ "data", F_ALL & ~F_ERRORS }, { "all", F_ALL },
};

static struct {
	const char *dev;
	int gidx;
	int ib_port;
	bool server;
	const char *host;
	const char *port;
	unsigned int iters;
	uint64_t seed;
	uint32_t max_size;
	unsigned int ops;
	bool events;
	bool strict;		/* deviations from IBA/MetaRoCE are failures */
	bool reorder;		/* the network may reorder (local option) */
	unsigned int timeout;
	int verbose;
	unsigned int corrupt_batch;	/* self-test */
	/* which ones were given on the command line (server cross-check) */
	bool set_iters, set_seed, set_max, set_ops, set_events, set_timeout,
	     set_strict;
} opt = {
	.gidx = -1, .ib_port = 1, .port = "18710", .iters = 100,
	.max_size = 256 * 1024, .ops = F_ALL, .timeout = 30,
};

/* ------------------------------------------------------------ util */

static struct mtest_lines g_ctl = { .fd = -1 };	/* the TCP connection */
static int g_side;		/* SIDE_CLIENT or SIDE_SERVER */
static const char *g_doing = "starting";
static const char *const side_name[2] = { "client", "server" };

/*
 * mtest_die()'s report: on stderr, and to the peer (ABORT) so that it
 * stops at once with the reason
 */
static void die_report(const char *msg)
{
	char line[1100];
	int n;

	fprintf(stderr, ME ": %s: FAIL: %s\n", side_name[g_side], msg);
	fflush(stdout);
	if (g_ctl.fd < 0)
		return;
	n = snprintf(line, sizeof(line), "ABORT %s\n", msg);
	for (char *p = line + 6; *p && p < line + n - 1; p++)
		if (*p == '\n')
			*p = ' ';
	mtest_send_all(g_ctl.fd, line, strlen(line));
	close(g_ctl.fd);
}

#define vsay(lvl, ...) \
	do { if (opt.verbose >= (lvl)) mtest_say(__VA_ARGS__); } while (0)

/* Problems found (mismatches, bad completion fields), this side. */
static unsigned long g_problems;

static void __attribute__((format(printf, 1, 2))) problem(const char *fmt, ...)
{
	va_list ap;

	g_problems++;
	fprintf(stdout, ME ": %s: MISMATCH: ", side_name[g_side]);
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/*
 * Behaviour that differs from IBA/MetaRoCE but that a known implementation
 * shows (rxe): tolerated with a DEVIATION line, a failure with --strict.
 */
static unsigned long g_deviations;

static void __attribute__((format(printf, 1, 2))) deviation(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (opt.strict) {
		problem("%s (--strict)", msg);
		return;
	}
	g_deviations++;
	printf(ME ": %s: DEVIATION: %s (tolerated; --strict fails it)\n",
	       side_name[g_side], msg);
	fflush(stdout);
}

/* Last-resort watchdog: a verbs call stuck in the kernel. */
static unsigned int g_watchdog_s;

static void watchdog_fire(int sig)
{
	char msg[256];
	int n;

	(void)sig;
	n = snprintf(msg, sizeof(msg),
		     ME ": %s: FAIL: watchdog: no progress for %u s while %s\n",
		     side_name[g_side], g_watchdog_s, g_doing);
	if (n > 0 && write(2, msg, (size_t)n) < 0)
		_exit(1);
	_exit(1);
}

static void watchdog_kick(void)
{
	alarm(g_watchdog_s);
}

/* splitmix64: the one PRNG, for plans and payload */
static uint64_t sm64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rnd(uint64_t *s, uint64_t n)	/* 0 .. n-1 */
{
	return n ? sm64(s) % n : 0;
}

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t s = a ^ (b * 0xd1b54a32d192ed03ULL);

	return sm64(&s);
}

/* Payload of message @id: both sides generate the same bytes. */
static void gen_data(uint8_t *dst, uint32_t len, uint32_t id)
{
	uint64_t s = mix(opt.seed, 0xda7a0000ULL + id);
	uint32_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		uint64_t v = sm64(&s);

		memcpy(dst + i, &v, 8);
	}
	if (i < len) {
		uint64_t v = sm64(&s);

		memcpy(dst + i, &v, len - i);
	}
}

static const char *wc_status(enum ibv_wc_status st)
{
	return ibv_wc_status_str(st);
}

static const char *wc_opcode_name(enum ibv_wc_opcode o)
{
	switch (o) {
	case IBV_WC_SEND: return "SEND";
	case IBV_WC_RDMA_WRITE: return "RDMA_WRITE";
	case IBV_WC_RDMA_READ: return "RDMA_READ";
	case IBV_WC_COMP_SWAP: return "COMP_SWAP";
	case IBV_WC_FETCH_ADD: return "FETCH_ADD";
	case IBV_WC_BIND_MW: return "BIND_MW";
	case IBV_WC_RECV: return "RECV";
	case IBV_WC_RECV_RDMA_WITH_IMM: return "RECV_RDMA_WITH_IMM";
	default: return "?";
	}
}

/* ------------------------------------------------------------ TCP */

static void __attribute__((format(printf, 1, 2))) tx(const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= (int)sizeof(line) - 1)
		mtest_die("internal: TCP line too long");
	vsay(3, "tx: %s", line);
	line[n++] = '\n';
	if (mtest_send_all(g_ctl.fd, line, (size_t)n)) {
		int e = errno;

		close(g_ctl.fd);
		g_ctl.fd = -1;
		mtest_die("TCP send to the peer failed: %s", strerror(e));
	}
}

/* The peer closed the connection (or it failed) while we were @g_doing */
static void __attribute__((noreturn)) peer_gone(void)
{
	int e = errno;

	close(g_ctl.fd);
	g_ctl.fd = -1;
	mtest_die("the peer closed the TCP connection while %s%s%s", g_doing,
		  e ? ": " : "",
		  e ? strerror(e) : " (did it fail? see its output)");
}

/* Next line from the peer, waiting at most @timeout_s without data. */
static void rx_line(char *out, size_t sz, double timeout_s)
{
	switch (mtest_read_line(&g_ctl, out, sz, (int)(timeout_s * 1000))) {
	case 1:
		vsay(3, "rx: %s", out);
		return;
	case 0:
		close(g_ctl.fd);
		g_ctl.fd = -1;
		mtest_die("timeout: nothing from the peer for %.0f s while %s",
			  timeout_s, g_doing);
	case -2:
		mtest_die("protocol: line too long from the peer");
	default:
		peer_gone();
	}
}

/* Peer waits may include the peer's own completion timeouts. */
static double peer_timeout(void)
{
	return 2.0 * opt.timeout + 10;
}

/* Receive the line starting with keyword @kw; ABORT from the peer ends us. */
static void expect(const char *kw, char *out, size_t sz)
{
	char line[2048];
	size_t k = strlen(kw);

	rx_line(line, sizeof(line), peer_timeout());
	if (!strncmp(line, "ABORT", 5)) {
		fprintf(stderr, ME ": %s: FAIL: the peer (%s) failed: %s\n",
			side_name[g_side], side_name[!g_side],
			line[5] ? line + 6 : "?");
		close(g_ctl.fd);
		exit(1);
	}
	if (strncmp(line, kw, k) || (line[k] && line[k] != ' ')) {
		close(g_ctl.fd);
		g_ctl.fd = -1;
		mtest_die("protocol: expected %s from the peer while %s, got \"%.80s\"",
			  kw, g_doing, line);
	}
	if (out)
		snprintf(out, sz, "%s", line[k] ? line + k + 1 : "");
	watchdog_kick();
}

static void tcp_setup(void)
{
	if (opt.server) {
		int ls = mtest_tcp_listen(opt.port);

		mtest_say("server: listening on TCP port %s", opt.port);
		g_doing = "waiting for the client to connect";
		mtest_lines_init(&g_ctl, mtest_tcp_accept(ls, opt.timeout > 60 ?
							  opt.timeout : 60));
	} else {
		g_doing = "connecting to the server";
		mtest_lines_init(&g_ctl, mtest_tcp_connect(opt.host, opt.port,
							   opt.timeout));
	}
}

/* ------------------------------------------------------------ verbs */

struct caps {
	int send_sge, recv_sge, rd_sge, inl, mtu, rd_atom;
	bool atomic;
	uint32_t max_msg;
};

struct cqx {
	struct ibv_cq *cq;
	struct ibv_comp_channel *ch;
	const char *name;
};

struct conn {
	struct ibv_qp *qp;
	struct cqx scq, rcq;
	uint32_t psn;
	uint32_t rqpn, rpsn;
	int deny;	/* remote access left out of qp_access_flags */
};

static struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_device_attr dattr;
	struct ibv_port_attr pattr;
	union ibv_gid gid, rgid;
	/* main buffer: two MRs (slot halves), its expected image, guard */
	uint8_t *buf, *img, *guard;
	size_t buflen, half;
	uint32_t slot;
	struct ibv_mr *mr[2];
	/* error-phase buffer with special MRs */
	uint8_t *ebuf, *eimg;
	size_t eblen;
	struct ibv_mr *mr_small, *mr_noread, *mr_noatomic, *mr_ro;
	/* the peer's */
	uint64_t r_buf, r_ebuf;
	uint32_t r_rkey[2], r_small, r_noread, r_noatomic, r_ro;
	struct caps cap[2];	/* [SIDE_CLIENT], [SIDE_SERVER] */
	enum ibv_mtu mtu;
	int mtu_bytes;
	struct conn main;
	uint8_t *tmp, *tmp2;	/* payload scratch, max_size each */
	unsigned long events;	/* CQ events received */
} g;

/* errbuf layout (pages): guard, small, guard, noread, guard, noatomic,
 * guard, read-only, guard */
enum { EB_SMALL = 1 * PAGE, EB_NOREAD = 3 * PAGE, EB_NOATOMIC = 5 * PAGE,
       EB_RO = 7 * PAGE, EB_LEN = 9 * PAGE };

static uint32_t lkey_of(uint32_t off)
{
	return g.mr[off >= g.half]->lkey;
}

static uint32_t rkey_of(uint32_t off)
{
	return g.r_rkey[off >= g.half];
}

static void cqx_create(struct cqx *c, const char *name, int cqe)
{
	c->name = name;
	c->ch = ibv_create_comp_channel(g.ctx);
	if (!c->ch)
		mtest_die("ibv_create_comp_channel: %s", strerror(errno));
	if (fcntl(c->ch->fd, F_SETFL, fcntl(c->ch->fd, F_GETFL) | O_NONBLOCK))
		mtest_die("fcntl O_NONBLOCK on the completion channel: %s",
			  strerror(errno));
	if (cqe > g.dattr.max_cqe)
		cqe = g.dattr.max_cqe;
	c->cq = ibv_create_cq(g.ctx, cqe, NULL, c->ch, 0);
	if (!c->cq)
		mtest_die("ibv_create_cq(%d entries) on %s: %s", cqe, opt.dev,
			  strerror(errno));
}

static void cqx_destroy(struct cqx *c)
{
	int rc;

	if (c->cq && (rc = ibv_destroy_cq(c->cq)))
		mtest_die("ibv_destroy_cq(%s): %s", c->name, mtest_verr(rc));
	if (c->ch && (rc = ibv_destroy_comp_channel(c->ch)))
		mtest_die("ibv_destroy_comp_channel: %s", mtest_verr(rc));
	c->cq = NULL;
	c->ch = NULL;
}

static void conn_create(struct conn *c, uint32_t psn)
{
	static const int inl_try[] = { 512, 256, 128, 64, 32, 0 };
	struct ibv_qp_init_attr ia;
	int depth = QP_DEPTH, sge = MAX_SGE;
	unsigned int i;

	memset(c, 0, sizeof(*c));
	if (depth > g.dattr.max_qp_wr)
		depth = g.dattr.max_qp_wr;
	if (sge > g.dattr.max_sge)
		sge = g.dattr.max_sge;
	g_doing = "creating CQs and a QP";
	cqx_create(&c->scq, "send CQ", depth + 16);
	cqx_create(&c->rcq, "recv CQ", depth + 16);
	for (i = 0; i < sizeof(inl_try) / sizeof(inl_try[0]); i++) {
		memset(&ia, 0, sizeof(ia));
		ia.send_cq = c->scq.cq;
		ia.recv_cq = c->rcq.cq;
		ia.qp_type = IBV_QPT_RC;
		ia.sq_sig_all = 0;
		ia.cap.max_send_wr = (uint32_t)depth;
		ia.cap.max_recv_wr = (uint32_t)depth;
		ia.cap.max_send_sge = (uint32_t)sge;
		ia.cap.max_recv_sge = (uint32_t)sge;
		ia.cap.max_inline_data = (uint32_t)inl_try[i];
		if (!(opt.ops & F_INLINE))
			ia.cap.max_inline_data = 0;
		c->qp = ibv_create_qp(g.pd, &ia);
		if (c->qp || !(opt.ops & F_INLINE))
			break;
	}
	if (!c->qp)
		mtest_die("ibv_create_qp(RC, %d WRs, %d SGEs) on %s failed: %s",
			  depth, sge, opt.dev, strerror(errno));
	c->psn = psn & 0xffffff;
	g.cap[g_side].send_sge = (int)ia.cap.max_send_sge;
	g.cap[g_side].recv_sge = (int)ia.cap.max_recv_sge;
	g.cap[g_side].inl = (int)ia.cap.max_inline_data;
	if (g.cap[g_side].send_sge > MAX_SGE)
		g.cap[g_side].send_sge = MAX_SGE;
	if (g.cap[g_side].recv_sge > MAX_SGE)
		g.cap[g_side].recv_sge = MAX_SGE;
}

static void conn_destroy(struct conn *c)
{
	int rc;

	g_doing = "destroying a QP";
	if (c->qp && (rc = ibv_destroy_qp(c->qp)))
		mtest_die("ibv_destroy_qp: %s", mtest_verr(rc));
	c->qp = NULL;
	cqx_destroy(&c->scq);
	cqx_destroy(&c->rcq);
}

/* Dies when the QP transition @step (of the QP pair @what) failed */
static void conn_step(int rc, const char *what, const char *step)
{
	if (rc)
		mtest_die("%s: ibv_modify_qp %s: %s", what, step,
			  mtest_verr(rc));
}

/* Exchange QPN/PSN, RESET -> INIT -> RTR -> RTS, wait for the peer's RTS. */
static void conn_connect(struct conn *c, const char *what)
{
	struct mtest_path p = {
		.dgid = g.rgid, .sgid_index = (uint8_t)opt.gidx,
		.port = (uint8_t)opt.ib_port, .mtu = g.mtu, .timeout = 14,
		.retry_cnt = 7,
	};
	char line[256];
	int rd;

	tx("QP %u %u", c->qp->qp_num, c->psn);
	expect("QP", line, sizeof(line));
	if (sscanf(line, "%u %u", &c->rqpn, &c->rpsn) != 2)
		mtest_die("protocol: bad QP line \"%s\"", line);

	rd = g.cap[0].rd_atom < g.cap[1].rd_atom ? g.cap[0].rd_atom
						  : g.cap[1].rd_atom;
	if (rd > 16)
		rd = 16;
	if (rd < 1)
		rd = 1;
	p.dest_qpn = c->rqpn;
	p.rq_psn = c->rpsn;
	p.sq_psn = c->psn;
	p.rd_atomic = (uint8_t)rd;

	g_doing = "moving the QP to INIT";
	conn_step(mtest_qp_init(c->qp, (uint8_t)opt.ib_port,
				(IBV_ACCESS_LOCAL_WRITE |
				 IBV_ACCESS_REMOTE_WRITE |
				 IBV_ACCESS_REMOTE_READ |
				 IBV_ACCESS_REMOTE_ATOMIC) & ~c->deny),
		  what, "RESET->INIT");
	g_doing = "moving the QP to RTR";
	conn_step(mtest_qp_rtr(c->qp, &p), what, "INIT->RTR");
	g_doing = "moving the QP to RTS";
	conn_step(mtest_qp_rts(c->qp, &p), what, "RTR->RTS");

	g_doing = "waiting for the peer's QP to reach RTS";
	tx("RTS");
	expect("RTS", NULL, 0);
	vsay(1, "%s: QP %#x (PSN %#x) <-> peer QP %#x (PSN %#x), %d outstanding READ/ATOMIC",
	     what, c->qp->qp_num, c->psn, c->rqpn, c->rpsn, rd);
}

/*
 * While waiting for completions, notice an ABORT from the peer at once.
 * A normal line (the peer is ahead of us) is left for expect(); *quiet
 * then stops the watch.
 */
static void peer_watch(bool *quiet)
{
	if (*quiet || g_ctl.fd < 0)
		return;
	if (!mtest_line_ready(&g_ctl)) {
		if (mtest_lines_fill(&g_ctl, 0) < 0)
			peer_gone();
		if (!mtest_line_ready(&g_ctl))
			return;
	}
	if (!strncmp(g_ctl.buf, "ABORT", 5))
		expect("ABORT", NULL, 0);	/* reports and exits */
	*quiet = true;
}

/*
 * Wait for @n completions on @c: busy polling, or (--events) CQ events.
 * Returns how many arrived; fewer means @timeout_s passed without one.
 */
static int cq_wait(struct cqx *c, struct ibv_wc *wc, int n, double timeout_s)
{
	double deadline = mtest_now() + timeout_s;
	unsigned int idle = 0;
	bool armed = false, quiet = false;
	int got = 0;

	while (got < n) {
		int r = ibv_poll_cq(c->cq, n - got, wc + got);

		if (r < 0)
			mtest_die("ibv_poll_cq(%s) returned %d", c->name, r);
		if (r > 0) {
			got += r;
			deadline = mtest_now() + timeout_s;
			idle = 0;
			armed = false;
			watchdog_kick();
			continue;
		}
		if (mtest_now() > deadline)
			break;
		if (!opt.events) {
			if (++idle > 200) {
				usleep(idle > 5000 ? 1000 : 50);
				if (!(idle & 15))
					peer_watch(&quiet);
			}
			continue;
		}
		if (!armed) {
			int rc = ibv_req_notify_cq(c->cq, 0);

			if (rc)
				mtest_die("ibv_req_notify_cq(%s): %s", c->name,
					  mtest_verr(rc));
			armed = true;
			continue;	/* poll again: closes the race */
		}
		struct pollfd pfd[2] = { { .fd = c->ch->fd, .events = POLLIN },
					 { .fd = g_ctl.fd, .events = POLLIN } };
		double left = deadline - mtest_now();
		int pr = poll(pfd, quiet || g_ctl.fd < 0 ? 1 : 2,
			      left > 0 ? (int)(left * 1000) + 1 : 0);

		if (pr < 0 && errno != EINTR)
			mtest_die("poll on the completion channel: %s",
				  strerror(errno));
		if (pr > 0 && (pfd[1].revents & (POLLIN | POLLHUP | POLLERR)))
			peer_watch(&quiet);
		if (pr <= 0 || !(pfd[0].revents & POLLIN))
			continue;
		struct ibv_cq *ev_cq;
		void *ev_ctx;

		if (ibv_get_cq_event(c->ch, &ev_cq, &ev_ctx)) {
			if (errno == EAGAIN)
				continue;
			mtest_die("ibv_get_cq_event(%s): %s", c->name,
				  strerror(errno));
		}
		if (ev_cq != c->cq)
			mtest_die("ibv_get_cq_event: event for an unknown CQ");
		ibv_ack_cq_events(ev_cq, 1);
		g.events++;
		armed = false;
	}
	return got;
}

/* Completions that nobody asked for (checked after each batch). */
static void cq_check_empty(struct cqx *c, const char *who)
{
	struct ibv_wc wc[4];
	int r = ibv_poll_cq(c->cq, 4, wc);

	for (int i = 0; i < r; i++)
		problem("%s: unexpected extra completion on the %s: wr_id %#" PRIx64
			" status %s opcode %s byte_len %u",
			who, c->name, wc[i].wr_id, wc_status(wc[i].status),
			wc_opcode_name(wc[i].opcode), wc[i].byte_len);
}

static void dev_open(void)
{
	int rc;

	g.ctx = mtest_open_device(opt.dev);

	if ((rc = ibv_query_device(g.ctx, &g.dattr)))
		mtest_die("ibv_query_device(%s): %s", opt.dev, mtest_verr(rc));
	if ((rc = ibv_query_port(g.ctx, (uint8_t)opt.ib_port, &g.pattr)))
		mtest_die("ibv_query_port(%s, %d): %s", opt.dev, opt.ib_port,
			  mtest_verr(rc));
	if (g.pattr.state != IBV_PORT_ACTIVE)
		mtest_die("%s port %d is not ACTIVE (state %d)", opt.dev,
			  opt.ib_port, g.pattr.state);
	if ((rc = ibv_query_gid(g.ctx, (uint8_t)opt.ib_port, opt.gidx, &g.gid)))
		mtest_die("ibv_query_gid(%s, port %d, index %d): %s", opt.dev,
			  opt.ib_port, opt.gidx, mtest_verr(rc));
	static const union ibv_gid zero;

	if (!memcmp(&g.gid, &zero, sizeof(zero)))
		mtest_die("%s GID index %d is empty", opt.dev, opt.gidx);
	g.pd = ibv_alloc_pd(g.ctx);
	if (!g.pd)
		mtest_die("ibv_alloc_pd(%s): %s", opt.dev, strerror(errno));

	struct caps *me = &g.cap[g_side];

	me->rd_sge = g.dattr.max_sge_rd ? g.dattr.max_sge_rd : g.dattr.max_sge;
	me->atomic = g.dattr.atomic_cap != IBV_ATOMIC_NONE;
	me->mtu = g.pattr.active_mtu;
	me->rd_atom = g.dattr.max_qp_rd_atom < g.dattr.max_qp_init_rd_atom ?
		      g.dattr.max_qp_rd_atom : g.dattr.max_qp_init_rd_atom;
	me->max_msg = g.pattr.max_msg_sz;
}

static void buffers_setup(void)
{
	const int all = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	uint64_t s = mix(opt.seed, 0x6a4d00 + (uint64_t)g_side);
	size_t i;

	g.slot = (uint32_t)((opt.max_size + SLOT_HEAD + 64u * (MAX_SGE + 2) +
			     PAGE - 1) & ~(PAGE - 1));
	g.half = (size_t)g.slot * (NSLOTS / 2);
	g.buflen = (size_t)g.slot * NSLOTS;
	g.buf = mtest_alloc(g.buflen);
	g.img = mtest_alloc(g.buflen);
	g.guard = mtest_alloc(g.buflen);
	for (i = 0; i + 8 <= g.buflen; i += 8) {
		uint64_t v = sm64(&s);

		memcpy(g.guard + i, &v, 8);
	}
	memcpy(g.buf, g.guard, g.buflen);
	g.tmp = mtest_alloc(opt.max_size + 8);
	g.tmp2 = mtest_alloc(opt.max_size + 8);
	g.mr[0] = mtest_reg_mr(g.pd, g.buf, g.half, all, "buffer, first half");
	g.mr[1] = mtest_reg_mr(g.pd, g.buf + g.half, g.buflen - g.half, all,
			       "buffer, second half");

	g.eblen = EB_LEN;
	g.ebuf = mtest_alloc(g.eblen);
	g.eimg = mtest_alloc(g.eblen);
	g.mr_small = mtest_reg_mr(g.pd, g.ebuf + EB_SMALL, PAGE, all,
				  "small MR");
	g.mr_noread = mtest_reg_mr(g.pd, g.ebuf + EB_NOREAD, PAGE,
				   IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_REMOTE_WRITE |
				   (g.cap[g_side].atomic ?
				    IBV_ACCESS_REMOTE_ATOMIC : 0),
				   "MR without REMOTE_READ");
	g.mr_noatomic = mtest_reg_mr(g.pd, g.ebuf + EB_NOATOMIC, PAGE,
				     IBV_ACCESS_LOCAL_WRITE |
				     IBV_ACCESS_REMOTE_WRITE |
				     IBV_ACCESS_REMOTE_READ,
				     "MR without REMOTE_ATOMIC");
	g.mr_ro = mtest_reg_mr(g.pd, g.ebuf + EB_RO, PAGE,
			       IBV_ACCESS_REMOTE_READ, "MR with REMOTE_READ only");
}

/* Fill the error buffer with its guard (derived from the main guard). */
static void ebuf_reset(void)
{
	for (size_t i = 0; i < g.eblen; i++)
		g.ebuf[i] = g.guard[i] ^ 0x5c;
	memcpy(g.eimg, g.ebuf, g.eblen);
}

/* ------------------------------------------------------------ plans */

struct seg {
	uint32_t off, len;	/* offset in the owner's main buffer */
};

struct msg {
	int op;
	uint32_t id, len, imm;
	bool inl, signaled, solicited, fence, raw_remote;
	int nl;
	struct seg l[MAX_SGE];	/* requester's SGEs */
	bool recv;		/* consumes a receive WQE at the responder */
	int nr;
	struct seg r[MAX_SGE];	/* responder's receive SGEs */
	uint32_t roff;		/* responder buffer offset (WRITE/READ/atomic) */
	uint64_t cmp_add, swap, orig;	/* atomics; orig = expected result */
	int src;		/* READ of data written earlier in the batch */
	uint32_t src_off;
};

struct batch {
	const char *phase;
	unsigned int no;
	int dir;		/* side that is the requester */
	int n;
	struct msg m[MAX_BATCH];
	int ncell;
	struct { uint32_t off; uint64_t init, fin; } cell[MAX_BATCH];
	bool one_list;		/* post all WRs with one ibv_post_send */
	bool late_recv;		/* responder posts receives 200 ms late (RNR) */
};

/* what a region of the buffer holds, to explain mismatches */
struct region {
	uint32_t off, len;
	int msg;
	uint32_t moff;		/* offset within the message */
	const char *what;
};

static struct region g_reg[MAX_BATCH * (MAX_SGE + 2)];
static int g_nreg;

static void reg_add(uint32_t off, uint32_t len, int msg, uint32_t moff,
		    const char *what)
{
	if (g_nreg < (int)(sizeof(g_reg) / sizeof(g_reg[0])) && len)
		g_reg[g_nreg++] = (struct region){ off, len, msg, moff, what };
}

static uint32_t slot_base(int i)
{
	return (uint32_t)i * g.slot;
}

/* Split @len into @n pieces placed at odd offsets with gaps in slot @slot. */
static int place(uint64_t *s, struct seg *seg, int n, uint32_t len, int slot)
{
	uint32_t off = slot_base(slot) + 1 + 2 * (uint32_t)rnd(s, 64);
	uint32_t left = len;
	int i;

	if (!len)
		return 0;
	if ((uint32_t)n > len)
		n = (int)len;
	for (i = 0; i < n; i++) {
		uint32_t k = (uint32_t)(n - i), p;

		if (k == 1) {
			p = left;
		} else {
			uint32_t maxp = left - (k - 1);
			uint32_t avg = left / k;

			p = 1 + (uint32_t)rnd(s, 2ULL * avg + 1);
			if (p > maxp)
				p = maxp;
		}
		seg[i].off = off;
		seg[i].len = p;
		off += p + (n > 1 ? 1 + (uint32_t)rnd(s, 64) : 0);
		left -= p;
	}
	return n;
}

static uint32_t pick_size(uint64_t *s, uint32_t max)
{
	uint32_t mtu = (uint32_t)g.mtu_bytes;
	const uint32_t special[] = {
		0, 1, 2, 3, 7, 8, 9, 63, 64, 65, mtu - 1, mtu, mtu + 1,
		2 * mtu - 1, 2 * mtu, 2 * mtu + 1, 3 * mtu, 4 * mtu + 1,
		max ? max - 1 : 0, max,
	};
	uint64_t r = rnd(s, 100);
	uint32_t v;

	if (r < 20) {
		do
			v = special[rnd(s, sizeof(special) / sizeof(special[0]))];
		while (v > max);
		return v;
	}
	if (r < 45)
		return (uint32_t)rnd(s, (uint64_t)max + 1);
	unsigned int bits = 0;

	while ((1ULL << (bits + 1)) <= max)
		bits++;
	bits = (unsigned int)rnd(s, bits + 1);
	v = (uint32_t)((1ULL << bits) + rnd(s, 1ULL << bits));
	return v > max ? max : v;
}

static int pick_nsge(uint64_t *s, int max)
{
	uint64_t r = rnd(s, 100);

	if (!(opt.ops & F_SGE) || max <= 1)
		return 1;
	if (r < 45)
		return 1;
	if (r < 75)
		return 2 + (int)rnd(s, max < 4 ? (uint64_t)max - 1 : 3);
	if (r < 90)
		return 1 + (int)rnd(s, (uint64_t)max);
	return max;
}

struct want {			/* forced parameters for a message */
	int op;
	int64_t len;		/* -1: random */
	int nl, nr;		/* -1: random; nr -2: no receive SGEs */
	bool inl, raw_remote;
	int src;		/* READ of an earlier WRITE's data */
	uint32_t src_off;
};

/* a struct want with every field given (op, len, nl, nr, inline, raw) */
#define W(op, len, nl, nr, inl, raw) { op, len, nl, nr, inl, raw, -1, 0 }

static unsigned int g_msgid;

/* Append a message to @b (slot = its index) with the given wishes. */
static struct msg *add_msg(struct batch *b, uint64_t *s, const struct want *w)
{
	const struct caps *rq = &g.cap[b->dir], *rs = &g.cap[!b->dir];
	int i = b->n++;
	struct msg *m = &b->m[i];
	uint32_t max = opt.max_size;

	memset(m, 0, sizeof(*m));
	m->op = w->op;
	m->id = g_msgid++;
	m->signaled = true;
	m->src = -1;
	m->inl = w->inl;
	if (m->inl)
		max = (uint32_t)rq->inl;
	m->len = w->len >= 0 ? (uint32_t)w->len : pick_size(s, max);
	if (m->len > max)
		m->len = max;

	switch (m->op) {
	case OP_SEND:
	case OP_SEND_IMM: {
		int nl = w->nl >= 0 ? w->nl : pick_nsge(s, rq->send_sge);
		int nr = w->nr >= 0 ? w->nr : pick_nsge(s, rs->recv_sge);
		uint32_t cap = m->len;

		if (nl > rq->send_sge)
			nl = rq->send_sge;
		if (nr > rs->recv_sge)
			nr = rs->recv_sge;
		m->nl = place(s, m->l, nl, m->len, i);
		m->recv = true;
		if (w->nr != -2 && rnd(s, 2))
			cap += 1 + (uint32_t)rnd(s, 100);  /* receive larger */
		m->nr = w->nr == -2 ? 0 : place(s, m->r, nr, cap, i);
		if (m->op == OP_SEND_IMM)
			m->imm = (uint32_t)sm64(s);
		break;
	}
	case OP_WRITE:
	case OP_WRITE_IMM: {
		int nl = w->nl >= 0 ? w->nl : pick_nsge(s, rq->send_sge);

		if (nl > rq->send_sge)
			nl = rq->send_sge;
		m->nl = place(s, m->l, nl, m->len, i);
		m->roff = slot_base(i) + 1 + (uint32_t)rnd(s, SLOT_HEAD - 1);
		m->raw_remote = w->raw_remote && m->len == 0;
		if (m->op == OP_WRITE_IMM) {
			m->recv = true;
			m->imm = m->len;	/* NCCL: the byte count */
			/* usually no SGEs (NCCL); else SGEs that stay untouched */
			if (w->nr == -2 || (w->nr < 0 && rnd(s, 3)))
				m->nr = 0;
			else
				m->nr = place(s, m->r, 1 + (int)rnd(s, 2),
					      1 + (uint32_t)rnd(s, 256), i);
			/* receive SGEs after the target range: keep apart */
			for (int k = 0; k < m->nr; k++)
				m->r[k].off += SLOT_HEAD + opt.max_size;
		}
		break;
	}
	case OP_READ: {
		int nl = w->nl >= 0 ? w->nl : pick_nsge(s, rq->rd_sge < rq->send_sge ?
							   rq->rd_sge : rq->send_sge);
		if (nl > rq->send_sge)
			nl = rq->send_sge;
		if (nl > rq->rd_sge)
			nl = rq->rd_sge;
		m->nl = place(s, m->l, nl, m->len, i);
		m->roff = slot_base(i) + 1 + (uint32_t)rnd(s, SLOT_HEAD - 1);
		m->src = w->src;
		m->src_off = w->src_off;
		if (m->src >= 0)
			m->roff = b->m[m->src].roff + m->src_off;
		break;
	}
	case OP_CAS:
	case OP_FAA:
		m->len = 8;
		m->nl = 1;
		m->l[0].off = slot_base(i) + 8 * (uint32_t)rnd(s, SLOT_HEAD / 8);
		m->l[0].len = 8;
		m->roff = slot_base(i) + 8 * (uint32_t)rnd(s, SLOT_HEAD / 8);
		break;
	}
	return m;
}

/* Atomics: give @m's cell an initial value (first use) and its operands,
 * and simulate it: expected original value and the cell's final value. */
static void atomic_plan(struct batch *b, struct msg *m, uint64_t *s,
			int how)	/* CAS: 1 = compare equal, 0 = not */
{
	int c;

	for (c = 0; c < b->ncell; c++)
		if (b->cell[c].off == m->roff)
			break;
	if (c == b->ncell) {
		b->cell[c].off = m->roff;
		b->cell[c].init = b->cell[c].fin = sm64(s);
		b->ncell++;
	}
	m->orig = b->cell[c].fin;
	if (m->op == OP_CAS) {
		m->cmp_add = how ? m->orig : m->orig ^ (1ULL << rnd(s, 64));
		m->swap = sm64(s);
		if (m->cmp_add == m->orig)
			b->cell[c].fin = m->swap;
	} else {
		m->cmp_add = sm64(s) >> (int)rnd(s, 64);
		b->cell[c].fin = m->orig + m->cmp_add;
	}
}

/* ------------------------------------------------------------ engine */

static struct {
	unsigned long msgs, bytes, errors;
	unsigned long problems0;
} g_phase, g_total;

static const char *dir_str(int dir)
{
	return dir == SIDE_CLIENT ? "client->server" : "server->client";
}

static void describe_msg(const struct batch *b, int i, char *out, size_t n)
{
	const struct msg *m = &b->m[i];

	snprintf(out, n, "%s batch %u msg %d (%s %s%s len %u, %d SGE%s%s%s%s)",
		 b->phase, b->no, i, dir_str(b->dir), op_name[m->op],
		 m->inl ? " INLINE" : "", m->len, m->nl, m->nl == 1 ? "" : "s",
		 m->recv ? ", recv " : "",
		 m->recv ? (m->nr ? "with SGEs" : "without SGEs") : "",
		 m->signaled ? "" : ", unsignaled");
}

/* Compare @have with @want over @len bytes; report differing runs. */
static bool verify_mem(const uint8_t *have, const uint8_t *want, size_t len,
		       const struct batch *b, const char *which)
{
	size_t i = 0, ndiff = 0;
	int runs = 0;

	if (!memcmp(have, want, len))
		return true;
	while (i < len) {
		if (have[i] == want[i]) {
			i++;
			continue;
		}
		size_t j = i;

		while (j < len && have[j] != want[j])
			j++;
		ndiff += j - i;
		if (++runs <= 6) {
			char where[256] = "", mdesc[200];
			int r;

			for (r = 0; r < g_nreg; r++)
				if (i >= g_reg[r].off &&
				    i < (size_t)g_reg[r].off + g_reg[r].len)
					break;
			if (b && r < g_nreg) {
				describe_msg(b, g_reg[r].msg, mdesc, sizeof(mdesc));
				snprintf(where, sizeof(where), "%s byte %zu of %s",
					 g_reg[r].what,
					 g_reg[r].moff + (i - g_reg[r].off), mdesc);
			} else {
				snprintf(where, sizeof(where),
					 "guard zone (slot %zu offset %zu)",
					 i / g.slot, i % g.slot);
			}
			problem("%s: %zu byte(s) wrong at offset %#zx, %s: expected %02x got %02x%s",
				which, j - i, i, where, want[i], have[i],
				j - i > 1 ? " ..." : "");
		}
		i = j;
	}
	if (runs > 6)
		problem("%s: ... %d differing runs, %zu bytes in all", which,
			runs, ndiff);
	return false;
}

/* Scatter @len bytes of @src over @seg[0..n) of @dst (and report regions). */
static void scatter(uint8_t *dst, const struct seg *seg, int n,
		    const uint8_t *src, uint32_t len, int msg, const char *what)
{
	uint32_t done = 0;

	for (int k = 0; k < n && done < len; k++) {
		uint32_t c = seg[k].len < len - done ? seg[k].len : len - done;

		memcpy(dst + seg[k].off, src + done, c);
		reg_add(seg[k].off, c, msg, done, what);
		done += c;
	}
}

static void msg_payload(const struct batch *b, const struct msg *m, uint8_t *dst)
{
	if (m->op == OP_READ && m->src >= 0) {
		const struct msg *w = &b->m[m->src];

		gen_data(g.tmp2, w->len, w->id);
		memcpy(dst, g.tmp2 + m->src_off, m->len);
	} else {
		gen_data(dst, m->len, m->id);
	}
}

static void post_recvs(struct conn *c, const struct batch *b)
{
	struct ibv_recv_wr wr[MAX_BATCH], *bad;
	struct ibv_sge sge[MAX_BATCH][MAX_SGE];
	int n = 0;

	for (int i = 0; i < b->n; i++) {
		const struct msg *m = &b->m[i];

		if (!m->recv)
			continue;
		for (int k = 0; k < m->nr; k++)
			sge[n][k] = (struct ibv_sge){
				.addr = (uintptr_t)g.buf + m->r[k].off,
				.length = m->r[k].len, .lkey = lkey_of(m->r[k].off) };
		wr[n] = (struct ibv_recv_wr){
			.wr_id = ((uint64_t)b->no << 16) | (uint64_t)i,
			.sg_list = m->nr ? sge[n] : NULL, .num_sge = m->nr };
		if (n)
			wr[n - 1].next = &wr[n];
		n++;
	}
	int rc = n ? ibv_post_recv(c->qp, wr, &bad) : 0;

	if (rc)
		mtest_die("ibv_post_recv (%s batch %u, %d WRs, failed at %td): %s",
			  b->phase, b->no, n, bad ? bad - wr : -1,
			  mtest_verr(rc));
}

/* The main buffer and its expected image hold the guard, nothing else */
static void buf_reset(void)
{
	memcpy(g.buf, g.guard, g.buflen);
	memcpy(g.img, g.guard, g.buflen);
	g_nreg = 0;
}

static void responder_prepare(struct batch *b)
{
	buf_reset();
	for (int i = 0; i < b->n; i++) {
		struct msg *m = &b->m[i];

		switch (m->op) {
		case OP_SEND:
		case OP_SEND_IMM:
			gen_data(g.tmp, m->len, m->id);
			scatter(g.img, m->r, m->nr, g.tmp, m->len, i,
				"received data");
			for (int k = 0; k < m->nr; k++)
				reg_add(m->r[k].off, m->r[k].len, i, 0,
					"receive buffer (beyond the data)");
			break;
		case OP_WRITE:
		case OP_WRITE_IMM:
			if (!m->len || m->raw_remote)
				break;
			gen_data(g.tmp, m->len, m->id);
			memcpy(g.img + m->roff, g.tmp, m->len);
			reg_add(m->roff, m->len, i, 0, "written data");
			for (int k = 0; k < m->nr; k++)
				reg_add(m->r[k].off, m->r[k].len, i, 0,
					"receive SGE of a WRITE_WITH_IMM (must stay untouched)");
			break;
		case OP_READ:
			if (m->src >= 0 || !m->len)
				break;
			gen_data(g.tmp, m->len, m->id);
			memcpy(g.buf + m->roff, g.tmp, m->len);
			memcpy(g.img + m->roff, g.tmp, m->len);
			reg_add(m->roff, m->len, i, 0, "READ source");
			break;
		default:
			break;
		}
	}
	for (int c = 0; c < b->ncell; c++) {
		memcpy(g.buf + b->cell[c].off, &b->cell[c].init, 8);
		memcpy(g.img + b->cell[c].off, &b->cell[c].fin, 8);
		for (int i = 0; i < b->n; i++)
			if ((b->m[i].op == OP_CAS || b->m[i].op == OP_FAA) &&
			    b->m[i].roff == b->cell[c].off) {
				reg_add(b->cell[c].off, 8, i, 0,
					"atomic target (final value)");
				break;
			}
	}
}

static void requester_prepare(struct batch *b)
{
	buf_reset();
	for (int i = 0; i < b->n; i++) {
		struct msg *m = &b->m[i];

		switch (m->op) {
		case OP_SEND:
		case OP_SEND_IMM:
		case OP_WRITE:
		case OP_WRITE_IMM:
			gen_data(g.tmp, m->len, m->id);
			scatter(g.buf, m->l, m->nl, g.tmp, m->len, i, "source");
			scatter(g.img, m->l, m->nl, g.tmp, m->len, i,
				"source (must stay unchanged)");
			break;
		case OP_READ:
			msg_payload(b, m, g.tmp);
			scatter(g.img, m->l, m->nl, g.tmp, m->len, i,
				"data read");
			break;
		case OP_CAS:
		case OP_FAA:
			memcpy(g.img + m->l[0].off, &m->orig, 8);
			reg_add(m->l[0].off, 8, i, 0, "atomic original value");
			break;
		}
	}
}

static enum ibv_wr_opcode wr_opcode(int op)
{
	static const enum ibv_wr_opcode o[OP__N] = {
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
	};
	return o[op];
}

static enum ibv_wc_opcode wc_opcode_of(int op)
{
	static const enum ibv_wc_opcode o[OP__N] = {
		IBV_WC_SEND, IBV_WC_SEND, IBV_WC_RDMA_WRITE, IBV_WC_RDMA_WRITE,
		IBV_WC_RDMA_READ, IBV_WC_COMP_SWAP, IBV_WC_FETCH_ADD,
	};
	return o[op];
}

/* Build the send WR of @m (sge: its SGE array). */
static void build_wr(const struct batch *b, int i, struct ibv_send_wr *wr,
		     struct ibv_sge *sge)
{
	const struct msg *m = &b->m[i];

	memset(wr, 0, sizeof(*wr));
	for (int k = 0; k < m->nl; k++)
		sge[k] = (struct ibv_sge){ .addr = (uintptr_t)g.buf + m->l[k].off,
					   .length = m->l[k].len,
					   .lkey = lkey_of(m->l[k].off) };
	wr->wr_id = ((uint64_t)b->no << 16) | (uint64_t)i;
	wr->sg_list = m->nl ? sge : NULL;
	wr->num_sge = m->nl;
	wr->opcode = wr_opcode(m->op);
	wr->send_flags = (m->signaled ? IBV_SEND_SIGNALED : 0) |
			 (m->inl ? IBV_SEND_INLINE : 0) |
			 (m->solicited ? IBV_SEND_SOLICITED : 0) |
			 (m->fence ? IBV_SEND_FENCE : 0);
	if (m->op == OP_SEND_IMM || m->op == OP_WRITE_IMM)
		wr->imm_data = htonl(m->imm);
	switch (m->op) {
	case OP_WRITE:
	case OP_WRITE_IMM:
	case OP_READ:
		if (m->raw_remote) {
			wr->wr.rdma.remote_addr = 0xdead0000beefULL;
			wr->wr.rdma.rkey = 0x5eedf00d;
		} else {
			wr->wr.rdma.remote_addr = g.r_buf + m->roff;
			wr->wr.rdma.rkey = rkey_of(m->roff);
		}
		break;
	case OP_CAS:
	case OP_FAA:
		wr->wr.atomic.remote_addr = g.r_buf + m->roff;
		wr->wr.atomic.rkey = rkey_of(m->roff);
		wr->wr.atomic.compare_add = m->cmp_add;
		wr->wr.atomic.swap = m->swap;
		break;
	}
}

static void post_sends(struct conn *c, struct batch *b)
{
	struct ibv_send_wr wr[MAX_BATCH], *bad;
	static struct ibv_sge sge[MAX_BATCH][MAX_SGE];

	for (int i = 0; i < b->n; i++) {
		build_wr(b, i, &wr[i], sge[i]);
		if (b->one_list && i)
			wr[i - 1].next = &wr[i];
	}
	g_doing = "posting send WRs";
	if (b->one_list) {
		int rc = ibv_post_send(c->qp, wr, &bad);

		if (rc) {
			char d[200];

			describe_msg(b, (int)(bad - wr), d, sizeof(d));
			mtest_die("ibv_post_send failed at WR %td of %d (%s): %s",
				  bad - wr, b->n, d, mtest_verr(rc));
		}
	} else {
		for (int i = 0; i < b->n; i++) {
			int rc = ibv_post_send(c->qp, &wr[i], &bad);

			if (rc) {
				char d[200];

				describe_msg(b, i, d, sizeof(d));
				mtest_die("ibv_post_send(%s): %s", d,
					  mtest_verr(rc));
			}
		}
	}
	/* INLINE: the buffer may be reused as soon as post returns */
	for (int i = 0; i < b->n; i++) {
		struct msg *m = &b->m[i];

		if (!m->inl)
			continue;
		for (int k = 0; k < m->nl; k++)
			for (uint32_t j = 0; j < m->l[k].len; j++) {
				g.buf[m->l[k].off + j] ^= 0xff;
				g.img[m->l[k].off + j] ^= 0xff;
			}
	}
}

static void wc_fatal(const struct batch *b, const struct ibv_wc *wc,
		     const char *who)
{
	int i = (int)(wc->wr_id & 0xffff);
	char d[200] = "unknown WR";

	if ((wc->wr_id >> 16) == b->no && i < b->n)
		describe_msg(b, i, d, sizeof(d));
	mtest_die("%s completion with status %s (%d, vendor_err %#x) for %s",
		  who, wc_status(wc->status), wc->status, wc->vendor_err, d);
}

/*
 * The send (@recv false: of the signaled messages) or receive completions
 * (@recv: of the messages that consume a receive) of @b, into @wc, with
 * the index of their message in @want: dies unless all came, successful.
 * Returns how many.
 */
static int batch_wait(struct conn *c, const struct batch *b, bool recv,
		      int *want, struct ibv_wc *wc)
{
	const char *kind = recv ? "receive" : "send";
	int n = 0, got;

	for (int i = 0; i < b->n; i++)
		if (recv ? b->m[i].recv : b->m[i].signaled)
			want[n++] = i;
	g_doing = recv ? "waiting for receive completions" :
			 "waiting for send completions";
	got = cq_wait(recv ? &c->rcq : &c->scq, wc, n, opt.timeout);
	for (int k = 0; k < got; k++)
		if (wc[k].status != IBV_WC_SUCCESS)
			wc_fatal(b, &wc[k], recv ? "receive" : "requester");
	if (got < n) {
		char d[200];

		describe_msg(b, want[got], d, sizeof(d));
		mtest_die("timeout: %d of %d %s completions after %u s without progress%s; missing: %s",
			  got, n, kind, opt.timeout,
			  recv ? " (the requester's completed)" : "", d);
	}
	return n;
}

static void requester_complete(struct conn *c, struct batch *b)
{
	struct ibv_wc wc[MAX_BATCH];
	int want[MAX_BATCH], n;

	n = batch_wait(c, b, false, want, wc);
	for (int k = 0; k < n; k++) {
		const struct msg *m = &b->m[want[k]];
		uint64_t wr_id = ((uint64_t)b->no << 16) | (uint64_t)want[k];
		char d[200];

		describe_msg(b, want[k], d, sizeof(d));
		if (wc[k].wr_id != wr_id) {
			problem("send completion %d: wr_id %#" PRIx64 ", expected %#" PRIx64
				" (%s): completions out of order?", k,
				wc[k].wr_id, wr_id, d);
			continue;
		}
		if (wc[k].opcode != wc_opcode_of(m->op))
			problem("send completion of %s: opcode %s (%d), expected %s",
				d, wc_opcode_name(wc[k].opcode), wc[k].opcode,
				wc_opcode_name(wc_opcode_of(m->op)));
		if ((m->op == OP_READ || m->op == OP_CAS || m->op == OP_FAA) &&
		    wc[k].byte_len != m->len)
			problem("send completion of %s: byte_len %u, expected %u",
				d, wc[k].byte_len, m->len);
		if (wc[k].qp_num != c->qp->qp_num)
			problem("send completion of %s: qp_num %#x, expected %#x",
				d, wc[k].qp_num, c->qp->qp_num);
	}
	cq_check_empty(&c->scq, "requester");
}

static void responder_complete(struct conn *c, struct batch *b)
{
	struct ibv_wc wc[MAX_BATCH];
	int want[MAX_BATCH], n;

	n = batch_wait(c, b, true, want, wc);
	for (int k = 0; k < n; k++) {
		const struct msg *m = &b->m[want[k]];
		uint64_t wr_id = ((uint64_t)b->no << 16) | (uint64_t)want[k];
		bool imm = m->op == OP_SEND_IMM || m->op == OP_WRITE_IMM;
		enum ibv_wc_opcode op = m->op == OP_WRITE_IMM ?
					IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;
		char d[200];

		describe_msg(b, want[k], d, sizeof(d));
		if (wc[k].wr_id != wr_id) {
			problem("receive completion %d: wr_id %#" PRIx64 ", expected %#" PRIx64
				" (%s): receives consumed out of order?", k,
				wc[k].wr_id, wr_id, d);
			continue;
		}
		if (wc[k].opcode != op)
			problem("receive completion of %s: opcode %s (%d), expected %s",
				d, wc_opcode_name(wc[k].opcode), wc[k].opcode,
				wc_opcode_name(op));
		if (wc[k].byte_len != m->len)
			problem("receive completion of %s: byte_len %u, expected %u",
				d, wc[k].byte_len, m->len);
		if (!!(wc[k].wc_flags & IBV_WC_WITH_IMM) != imm)
			problem("receive completion of %s: IBV_WC_WITH_IMM %s",
				d, imm ? "missing" : "set without immediate");
		else if (imm && ntohl(wc[k].imm_data) != m->imm)
			problem("receive completion of %s: immediate %#x, expected %#x",
				d, ntohl(wc[k].imm_data), m->imm);
		if (wc[k].qp_num != c->qp->qp_num)
			problem("receive completion of %s: qp_num %#x, expected %#x",
				d, wc[k].qp_num, c->qp->qp_num);
	}
	cq_check_empty(&c->rcq, "responder");
}

static void batch_account(const struct batch *b)
{
	for (int i = 0; i < b->n; i++) {
		g_phase.msgs++;
		g_phase.bytes += b->m[i].len;
	}
}

/* --corrupt-batch self-test: damage received data and a guard byte */
static void self_corrupt(const struct batch *b)
{
	if (!opt.corrupt_batch || b->no != opt.corrupt_batch)
		return;
	if (g_nreg)
		g.buf[g_reg[0].off + g_reg[0].len / 2] ^= 0x01;
	g.buf[g.buflen - 1] ^= 0x80;
	mtest_say("self-test: corrupted batch %u on purpose", b->no);
}

/* Requester: our problems since @before to the responder; its problems */
static unsigned long req_verdict(unsigned int no, unsigned long before)
{
	char line[256];
	unsigned long peer;

	tx("DONE %u %lu", no, g_problems - before);
	expect("VERDICT", line, sizeof(line));
	if (sscanf(line, "%*u %lu", &peer) != 1)
		mtest_die("protocol: bad VERDICT line");
	return peer;
}

/* Responder: the requester's problems, from its DONE line */
static unsigned long resp_wait_done(void)
{
	char line[256];
	unsigned long peer;

	expect("DONE", line, sizeof(line));
	if (sscanf(line, "%*u %lu", &peer) != 1)
		mtest_die("protocol: bad DONE line");
	return peer;
}

static void run_batch(struct conn *c, struct batch *b)
{
	unsigned long before = g_problems, peer = 0;

	if (opt.verbose >= 2)
		for (int i = 0; i < b->n; i++) {
			char d[200];

			describe_msg(b, i, d, sizeof(d));
			mtest_say("  %s", d);
		}
	if (b->dir != g_side) {		/* responder */
		responder_prepare(b);
		if (!b->late_recv)
			post_recvs(c, b);
		tx("READY %u", b->no);
		if (b->late_recv) {	/* the requester meets RNR NAKs */
			usleep(200 * 1000);
			post_recvs(c, b);
		}
		responder_complete(c, b);
		g_doing = "waiting for the requester";
		peer = resp_wait_done();
		cq_check_empty(&c->rcq, "responder");
		self_corrupt(b);
		g_doing = "verifying memory";
		verify_mem(g.buf, g.img, g.buflen, b, "responder memory");
		tx("VERDICT %u %lu", b->no, g_problems - before);
	} else {			/* requester */
		requester_prepare(b);
		g_doing = "waiting for the responder";
		expect("READY", NULL, 0);
		post_sends(c, b);
		requester_complete(c, b);
		self_corrupt(b);
		g_doing = "verifying memory";
		verify_mem(g.buf, g.img, g.buflen, b, "requester memory");
		g_doing = "waiting for the responder's verdict";
		peer = req_verdict(b->no, before);
	}
	g_phase.errors += peer;	/* the peer's problems; ours: g_problems */
	batch_account(b);
	watchdog_kick();
}

/* ------------------------------------------------------------ phases */

static unsigned int g_bno;

static void batch_init(struct batch *b, const char *phase, int dir, uint64_t *s)
{
	memset(b, 0, sizeof(*b));
	b->phase = phase;
	b->no = ++g_bno & 0xffffff;
	b->dir = dir;
	b->one_list = rnd(s, 2);
}

static void phase_begin(void)
{
	memset(&g_phase, 0, sizeof(g_phase));
	g_phase.problems0 = g_problems;
}

static bool phase_end(const char *name, const char *extra)
{
	unsigned long mine = g_problems - g_phase.problems0;
	char line[128];
	unsigned long peer_total;

	/* agree on the counts: each side reports its own problems */
	g_doing = "exchanging the phase results";
	tx("PHASE %s %lu", name, mine);
	expect("PHASE", line, sizeof(line));
	if (sscanf(line, "%*s %lu", &peer_total) != 1)
		mtest_die("protocol: bad PHASE line");
	unsigned long all = mine + peer_total;

	if (g_phase.msgs)
		mtest_say("phase %s: %lu messages, %lu bytes verified%s%s: %s",
			  name, g_phase.msgs, g_phase.bytes,
			  extra ? ", " : "", extra ? extra : "",
			  all ? "FAILED" : "ok");
	else
		mtest_say("phase %s: %s: %s", name, extra ? extra : "nothing run",
			  all ? "FAILED" : "ok");
	if (all)
		mtest_say("phase %s: %lu problem(s) (%lu on the %s, %lu on the %s)",
			  name, all, mine, side_name[g_side], peer_total,
			  side_name[!g_side]);
	g_total.msgs += g_phase.msgs;
	g_total.bytes += g_phase.bytes;
	g_total.errors += all;
	return !all;
}

static bool op_ok(int op)
{
	if ((op == OP_CAS || op == OP_FAA) &&
	    !(g.cap[0].atomic && g.cap[1].atomic))
		return false;
	return opt.ops & (1u << op);
}

static void flush_batch(struct batch *b, uint64_t *s, const char *phase, int dir)
{
	if (b->n)
		run_batch(&g.main, b);
	batch_init(b, phase, dir, s);
}

static void phase_basic(void)
{
	uint64_t s = mix(opt.seed, 0xba51c);
	int64_t mtu = g.mtu_bytes, max = opt.max_size;
	static struct batch b;

	phase_begin();
	for (int dir = 0; dir < 2; dir++) {
		const struct caps *rq = &g.cap[dir], *rs = &g.cap[!dir];
		int rdsge = rq->rd_sge < rq->send_sge ? rq->rd_sge : rq->send_sge;
		const struct want list[] = {
			W(OP_SEND, 0, 1, -2, false, false), W(OP_SEND, 0, 1, 1, false, false),
			W(OP_SEND, 1, 1, 1, false, false), W(OP_SEND, mtu - 1, 1, 1, false, false),
			W(OP_SEND, mtu, 1, 1, false, false), W(OP_SEND, mtu + 1, 1, 1, false, false),
			W(OP_SEND, 2 * mtu + 1, 1, 1, false, false), W(OP_SEND, max, 1, 1, false, false),
			W(OP_SEND, 3 * mtu + 5, 3, 3, false, false),
			W(OP_SEND, 5 * mtu + 3, rq->send_sge, rs->recv_sge, false, false),
			W(OP_SEND_IMM, 0, 1, -2, false, false), W(OP_SEND_IMM, 1, 1, 1, false, false),
			W(OP_SEND_IMM, mtu + 1, 2, 3, false, false), W(OP_SEND_IMM, max, 3, 2, false, false),
			W(OP_WRITE, 0, 1, -1, false, false), W(OP_WRITE, 1, 1, -1, false, false),
			W(OP_WRITE, mtu, 1, -1, false, false), W(OP_WRITE, mtu + 1, 1, -1, false, false),
			W(OP_WRITE, max, 1, -1, false, false), W(OP_WRITE, 3 * mtu + 7, 3, -1, false, false),
			W(OP_WRITE, 4 * mtu + 1, rq->send_sge, -1, false, false),
			W(OP_WRITE_IMM, 0, 1, -2, false, false),
			W(OP_WRITE_IMM, 0, 1, -2, false, true),
			W(OP_WRITE_IMM, 0, 1, 1, false, false), W(OP_WRITE_IMM, 1, 1, -2, false, false),
			W(OP_WRITE_IMM, mtu + 1, 3, -2, false, false),
			W(OP_WRITE_IMM, max, 2, 2, false, false),
			W(OP_READ, 0, 1, -1, false, false), W(OP_READ, 1, 1, -1, false, false),
			W(OP_READ, 2, 1, -1, false, false), W(OP_READ, mtu - 1, 1, -1, false, false),
			W(OP_READ, mtu + 1, 1, -1, false, false), W(OP_READ, max, 1, -1, false, false),
			W(OP_READ, 3 * mtu + 3, 3, -1, false, false),
			W(OP_READ, 4 * mtu + 5, rdsge, -1, false, false),
			W(OP_CAS, 8, 1, -1, false, false), W(OP_FAA, 8, 1, -1, false, false),
			W(OP_SEND, 1, 1, 1, true, false), W(OP_SEND, 1000000, 3, 2, true, false),
			W(OP_SEND_IMM, 17, 2, 1, true, false),
			W(OP_WRITE, 1000000, 1, -1, true, false),
			W(OP_WRITE_IMM, 1000000, 3, -2, true, false),
		};

		batch_init(&b, "basic", dir, &s);
		for (size_t k = 0; k < sizeof(list) / sizeof(list[0]); k++) {
			struct want w = list[k];
			struct msg *m;

			if (!op_ok(w.op))
				continue;
			if (w.inl && (!(opt.ops & F_INLINE) || !rq->inl))
				continue;
			if (w.len > max)
				w.len = max;
			if ((w.nl > 3 || w.nr > 3) && !(opt.ops & F_SGE))
				continue;
			w.src = -1;
			if (b.n == 8)
				flush_batch(&b, &s, "basic", dir);
			m = add_msg(&b, &s, &w);
			if (m->op == OP_CAS || m->op == OP_FAA)
				atomic_plan(&b, m, &s, 1);
		}
		flush_batch(&b, &s, "basic", dir);

		/* RNR: the responder posts its receives 200 ms late */
		if ((opt.ops & F_RNR) && op_ok(OP_SEND)) {
			struct want w1 = { OP_SEND, 3000, 2, 2, .src = -1 };
			struct want w2 = { OP_WRITE_IMM, 100, 1, -2, .src = -1 };

			add_msg(&b, &s, &w1);
			if (op_ok(OP_WRITE_IMM))
				add_msg(&b, &s, &w2);
			b.late_recv = true;
			flush_batch(&b, &s, "basic", dir);
		}
	}
	phase_end("basic", "all opcodes at edge sizes, both directions");
}

static void phase_random(void)
{
	uint64_t s = mix(opt.seed, 0x7a9d);
	int ops[OP__N], nops = 0;
	unsigned int done = 0;
	static struct batch b;

	for (int op = 0; op < OP__N; op++)
		if (op_ok(op))
			ops[nops++] = op;
	phase_begin();
	if (!nops) {
		mtest_say("phase random: skipped (no opcode enabled)");
		return;
	}
	while (done < opt.iters) {
		int dir = (int)rnd(&s, 2);
		unsigned int n = 1 + (unsigned int)rnd(&s, 8);

		if (n > opt.iters - done)
			n = opt.iters - done;
		batch_init(&b, "random", dir, &s);
		for (unsigned int k = 0; k < n; k++) {
			struct want w = { .op = ops[rnd(&s, (uint64_t)nops)],
					  .len = -1, .nl = -1, .nr = -1, .src = -1 };
			struct msg *m;

			if (w.op <= OP_WRITE_IMM && (opt.ops & F_INLINE) &&
			    g.cap[dir].inl && !rnd(&s, 5))
				w.inl = true;
			if (w.op == OP_WRITE_IMM && !rnd(&s, 8))
				w.raw_remote = true;
			m = add_msg(&b, &s, &w);
			if (m->op == OP_CAS || m->op == OP_FAA)
				atomic_plan(&b, m, &s, (int)rnd(&s, 2));
			m->signaled = rnd(&s, 10) >= 3;
			m->solicited = m->recv && !rnd(&s, 8);
			m->fence = !rnd(&s, 10);
		}
		b.m[b.n - 1].signaled = true;
		run_batch(&g.main, &b);
		done += n;
	}
	phase_end("random", "random opcodes, sizes, SGEs and flags");
}

static void phase_chain(void)
{
	uint64_t s = mix(opt.seed, 0xc4a1);
	unsigned int nchain = opt.iters / 6;
	unsigned int reads = 0;
	static struct batch b;

	if (nchain < 4)
		nchain = 4;
	if (nchain > 32)
		nchain = 32;
	phase_begin();
	for (unsigned int c = 0; c < nchain; c++) {
		int dir = (int)(c & 1);
		int nw = 1 + (int)rnd(&s, 8);
		uint32_t total = 0;
		int last_nonempty = -1;
		struct msg *m;

		batch_init(&b, "chain", dir, &s);
		for (int k = 0; k < nw; k++) {
			struct want w = { OP_WRITE, -1, -1, -1, .src = -1 };

			m = add_msg(&b, &s, &w);
			m->signaled = false;	/* NCCL: unsignaled data writes */
			total += m->len;
			if (m->len)
				last_nonempty = b.n - 1;
		}
		/* the signaled WRITE_WITH_IMM: often zero-length, imm = bytes */
		struct want wi = { OP_WRITE_IMM, -1, -1, -2, .src = -1 };

		if (rnd(&s, 2))
			wi.len = 0;
		wi.raw_remote = rnd(&s, 2);

		m = add_msg(&b, &s, &wi);
		total += m->len;
		m->imm = total;
		m->signaled = true;
		if (m->len)
			last_nonempty = b.n - 1;
		/* NCCL's flush: a 1-byte READ of data the chain wrote */
		if (op_ok(OP_READ) && last_nonempty >= 0 && rnd(&s, 3)) {
			struct want wr = { OP_READ, 1, 1, -1,
					   .src = last_nonempty,
					   .src_off = b.m[last_nonempty].len - 1 };

			m = add_msg(&b, &s, &wr);
			reads++;
		}
		run_batch(&g.main, &b);
	}
	char extra[128];

	snprintf(extra, sizeof(extra),
		 "%u chains of unsignaled WRITEs + WRITE_WITH_IMM(imm = bytes), %u 1-byte READ flushes",
		 nchain, reads);
	phase_end("chain", extra);
}

static void phase_atomic(void)
{
	uint64_t s = mix(opt.seed, 0xa70);
	static struct batch b;

	phase_begin();
	for (int dir = 0; dir < 2; dir++) {
		struct want wf = { OP_FAA, 8, 1, -1, .src = -1 };
		struct want wc = { OP_CAS, 8, 1, -1, .src = -1 };
		const int seq[] = { OP_FAA, OP_FAA, OP_CAS, OP_FAA, OP_CAS,
				    OP_CAS, OP_FAA, OP_CAS, OP_FAA, OP_CAS };
		const int how[] = { 0, 0, 1, 0, 0, 1, 0, 1, 0, 0 };
		uint32_t cell = 0;
		struct msg *m;

		/* ten atomics on one cell: each sees the previous one's result */
		batch_init(&b, "atomic", dir, &s);
		for (int k = 0; k < 10; k++) {
			if (!op_ok(seq[k]))
				continue;
			m = add_msg(&b, &s, seq[k] == OP_FAA ? &wf : &wc);
			if (b.n == 1)
				cell = m->roff;
			m->roff = cell;
			atomic_plan(&b, m, &s, how[k]);
			if (seq[k] == OP_FAA && k == 3)
				m->cmp_add = ~0ULL;	/* -1: wraps */
			if (seq[k] == OP_FAA) {	/* re-simulate exactly */
				b.cell[b.ncell - 1].fin = m->orig + m->cmp_add;
			}
		}
		if (b.n)
			run_batch(&g.main, &b);

		/* atomics on separate cells, mixed with RDMA traffic */
		batch_init(&b, "atomic", dir, &s);
		for (int k = 0; k < 6; k++) {
			int op = (k & 1) ? OP_CAS : OP_FAA;
			struct want w = { op, 8, 1, -1, .src = -1 };

			if (!op_ok(op))
				continue;
			m = add_msg(&b, &s, &w);
			atomic_plan(&b, m, &s, k % 3 != 2);
			if (op_ok(OP_WRITE) && k == 2) {
				struct want ww = { OP_WRITE, -1, -1, -1, .src = -1 };

				add_msg(&b, &s, &ww);
			}
		}
		if (b.n)
			run_batch(&g.main, &b);
	}
	phase_end("atomic", "CMP_AND_SWP/FETCH_AND_ADD results and final memory");
}

/*
 * Solicited events, on a fresh QP pair (its CQs were never armed): the
 * responder arms its receive CQ with solicited_only=1.
 */
static void phase_solicited(void)
{
	uint64_t s = mix(opt.seed, 0x5011c);
	static struct batch b;
	struct conn c;

	phase_begin();
	for (int dir = 0; dir < 2; dir++) {
		bool resp = dir != g_side;

		conn_create(&c, (uint32_t)sm64(&s));
		conn_connect(&c, "solicited QP pair");
		for (int step = 0; step < 3; step++) {
			const int ops[] = { OP_SEND, OP_SEND_IMM, OP_WRITE_IMM };
			struct want w = { ops[step], 100 + 1000 * step, 1, -1, .src = -1 };
			struct msg *m;
			bool solicited = step > 0;

			batch_init(&b, "solicited", dir, &s);
			m = add_msg(&b, &s, &w);
			m->solicited = solicited;
			if (!resp) {
				run_batch(&c, &b);
				continue;
			}
			/* responder: arm, then let the batch run; the
			 * completion wait below must see (or not see) an
			 * event before polling */
			int rc = ibv_req_notify_cq(c.rcq.cq, 1);

			if (rc)
				mtest_die("ibv_req_notify_cq(solicited_only=1): %s",
					  mtest_verr(rc));
			responder_prepare(&b);
			post_recvs(&c, &b);
			tx("READY %u", b.no);
			g_doing = "waiting for the requester";
			g_phase.errors += resp_wait_done();
			unsigned long before = g_problems;
			/* the requester's completion means our receive is
			 * done or about to be; an event must come only for a
			 * solicited message */
			struct pollfd pfd = { .fd = c.rcq.ch->fd, .events = POLLIN };
			int pr = poll(&pfd, 1, solicited ? (int)opt.timeout * 1000 : 500);

			if (pr < 0)
				mtest_die("poll on the completion channel: %s",
					  strerror(errno));
			if (pr > 0) {
				struct ibv_cq *ecq;
				void *ectx;

				if (ibv_get_cq_event(c.rcq.ch, &ecq, &ectx))
					mtest_die("ibv_get_cq_event: %s",
						  strerror(errno));
				ibv_ack_cq_events(ecq, 1);
				g.events++;
				if (!solicited)
					problem("solicited: a CQ event for an unsolicited %s (CQ armed with solicited_only=1)",
						op_name[m->op]);
			} else if (solicited) {
				problem("solicited: no CQ event within %u s for a solicited %s",
					opt.timeout, op_name[m->op]);
			}
			responder_complete(&c, &b);
			verify_mem(g.buf, g.img, g.buflen, &b, "responder memory");
			tx("VERDICT %u %lu", b.no, g_problems - before);
			batch_account(&b);
		}
		conn_destroy(&c);
	}
	phase_end("solicited", "no event for unsolicited, one for solicited SEND/SEND_WITH_IMM/WRITE_WITH_IMM");
}

/* ---- errors */

enum { EC_WRITE_RKEY, EC_WRITE_PAST, EC_READ_PAST, EC_READ_NOREAD,
	EC_WRITE_RO, EC_ATOMIC_NOATOMIC, EC_ATOMIC_MISALIGNED, EC_SEND_LONG,
	EC_QP_NOWRITE, EC_QP_NOWRITE_IMM0, EC_QP_NOREAD, EC_QP_NOREAD0,
	EC_QP_NOATOMIC, EC__N };

static const struct {
	const char *name;
	int op;
	enum ibv_wc_status want;
	const char *why;
	enum ibv_wc_status alt;	/* rxe's deviation, tolerated without --strict */
	int deny;		/* left out of both QPs' qp_access_flags */
} ecase[EC__N] = {
	[EC_WRITE_RKEY] = { "write-bad-rkey", OP_WRITE, IBV_WC_REM_ACCESS_ERR,
			    "RDMA_WRITE with an invalid rkey" },
	[EC_WRITE_PAST] = { "write-past-mr-end", OP_WRITE, IBV_WC_REM_ACCESS_ERR,
			    "RDMA_WRITE of 64 bytes across the end of a 4 KiB MR" },
	[EC_READ_PAST] = { "read-past-mr-end", OP_READ, IBV_WC_REM_ACCESS_ERR,
			   "RDMA_READ of 64 bytes across the end of a 4 KiB MR" },
	[EC_READ_NOREAD] = { "read-no-remote-read", OP_READ, IBV_WC_REM_ACCESS_ERR,
			     "RDMA_READ from an MR without IBV_ACCESS_REMOTE_READ" },
	[EC_WRITE_RO] = { "write-no-remote-write", OP_WRITE, IBV_WC_REM_ACCESS_ERR,
			  "RDMA_WRITE to an MR with IBV_ACCESS_REMOTE_READ only" },
	[EC_ATOMIC_NOATOMIC] = { "atomic-no-remote-atomic", OP_FAA,
				 IBV_WC_REM_ACCESS_ERR,
				 "FETCH_AND_ADD on an MR without IBV_ACCESS_REMOTE_ATOMIC" },
	/* IBA and MetaRoCE (C11): misaligned atomic = NAK Invalid Request */
	[EC_ATOMIC_MISALIGNED] = { "atomic-misaligned", OP_CAS,
				   IBV_WC_REM_INV_REQ_ERR,
				   "CMP_AND_SWP on an address that is not 8-byte aligned" },
	/* IBA and MetaRoCE (C14): NAK Invalid Request, receive LOC_LEN_ERR */
	[EC_SEND_LONG] = { "send-longer-than-recv", OP_SEND,
			   IBV_WC_REM_INV_REQ_ERR,
			   "SEND of 256 bytes into a 64-byte receive",
			   IBV_WC_REM_OP_ERR },
	/*
	 * IBA and MetaRoCE (C9): an operation the responder's QP does not
	 * enable is NAK Invalid Request, whatever its length: a zero-length
	 * WRITE_WITH_IMM would otherwise consume a receive, a zero-length
	 * READ be answered.
	 */
	[EC_QP_NOWRITE] = { "write-qp-no-remote-write", OP_WRITE,
			    IBV_WC_REM_INV_REQ_ERR,
			    "RDMA_WRITE of 64 bytes to a QP without IBV_ACCESS_REMOTE_WRITE",
			    .deny = IBV_ACCESS_REMOTE_WRITE },
	[EC_QP_NOWRITE_IMM0] = { "write-imm-0-qp-no-remote-write", OP_WRITE_IMM,
				 IBV_WC_REM_INV_REQ_ERR,
				 "zero-length RDMA_WRITE_WITH_IMM to a QP without IBV_ACCESS_REMOTE_WRITE",
				 .deny = IBV_ACCESS_REMOTE_WRITE },
	[EC_QP_NOREAD] = { "read-qp-no-remote-read", OP_READ,
			   IBV_WC_REM_INV_REQ_ERR,
			   "RDMA_READ of 64 bytes from a QP without IBV_ACCESS_REMOTE_READ",
			   .deny = IBV_ACCESS_REMOTE_READ },
	[EC_QP_NOREAD0] = { "read-0-qp-no-remote-read", OP_READ,
			    IBV_WC_REM_INV_REQ_ERR,
			    "zero-length RDMA_READ from a QP without IBV_ACCESS_REMOTE_READ",
			    .deny = IBV_ACCESS_REMOTE_READ },
	[EC_QP_NOATOMIC] = { "atomic-qp-no-remote-atomic", OP_FAA,
			     IBV_WC_REM_INV_REQ_ERR,
			     "FETCH_AND_ADD on a QP without IBV_ACCESS_REMOTE_ATOMIC",
			     .deny = IBV_ACCESS_REMOTE_ATOMIC },
};

static bool ecase_ok(int k)
{
	int op = ecase[k].op;

	return (op != OP_CAS && op != OP_FAA) ||
	       (g.cap[0].atomic && g.cap[1].atomic);
}

/*
 * Where an error case puts things in the main buffers: the requester's
 * source and sink of the failing request and the sources of the two
 * follow-up WRs (a WRITE and a SEND, both to be flushed); the responder's
 * two receives and the follow-up WRITE's target.
 */
struct eslots {
	uint32_t src, dst, fo_write, fo_send;	/* requester */
	uint32_t rcv, rcv2, fo_target;		/* responder */
};

static struct eslots error_slots(void)
{
	return (struct eslots){
		.src = slot_base(0) + 64, .dst = slot_base(1) + 128,
		.fo_write = slot_base(2) + 8, .fo_send = slot_base(3) + 16,
		.rcv = slot_base(4), .rcv2 = slot_base(5),
		.fo_target = slot_base(6),
	};
}

/* ---- errors: the responder */

/*
 * After the error nothing of ours may have changed: the main buffer (but
 * the oversized SEND's receive, undefined after the error) and the MRs
 * of the error buffer.
 */
static void eresp_verify_mem(int k, const struct eslots *o)
{
	if (k == EC_SEND_LONG)
		memcpy(g.img + o->rcv, g.buf + o->rcv, 64);
	/*
	 * Over a reordering network the follow-up WRITE and SEND may
	 * have been placed before the failing request was reported
	 * (MetaRoCE places on arrival, reports errors in PSN order):
	 * their 100-byte targets may hold either contents.
	 */
	if (opt.reorder) {
		memcpy(g.img + o->fo_target, g.buf + o->fo_target, 100);
		memcpy(g.img + o->rcv, g.buf + o->rcv, 100);
		memcpy(g.img + o->rcv2, g.buf + o->rcv2, 100);
	}
	verify_mem(g.buf, g.img, g.buflen, NULL,
		   "responder memory after a remote access violation");
	verify_mem(g.ebuf, g.eimg, g.eblen, NULL,
		   "responder's special MRs after a remote access violation");
}

/*
 * What became of our receives: informational (their statuses into
 * @seen), but none may have succeeded (the follow-up SEND must not be
 * delivered), and in EC_SEND_LONG the one too short completes
 * IBV_WC_LOC_LEN_ERR.  Returns how many completed.
 */
static int eresp_receives(int k, struct conn *c, char *seen, size_t size)
{
	struct ibv_wc wc[4];
	int got = cq_wait(&c->rcq, wc, 2, 1.0);
	const char *name = ecase[k].name;

	seen[0] = 0;
	for (int i = 0; i < got; i++) {
		snprintf(seen + strlen(seen), size - strlen(seen), "%s%s",
			 i ? ", " : "", wc_status(wc[i].status));
		if (wc[i].status == IBV_WC_SUCCESS)
			problem("%s: a receive completed successfully after the error (wr_id %#" PRIx64 ", byte_len %u)",
				name, wc[i].wr_id, wc[i].byte_len);
	}
	if (k != EC_SEND_LONG)
		return got;
	if (!got)
		problem("%s: the receive that was too short did not complete (want LOC_LEN_ERR)",
			name);
	else if (wc[0].status == IBV_WC_LOC_QP_OP_ERR)
		deviation("%s: the too-short receive completed with %s; IBA/MetaRoCE: %s",
			  name, wc_status(wc[0].status),
			  wc_status(IBV_WC_LOC_LEN_ERR));
	else if (wc[0].status != IBV_WC_LOC_LEN_ERR)
		problem("%s: the too-short receive completed with %s, expected %s",
			name, wc_status(wc[0].status),
			wc_status(IBV_WC_LOC_LEN_ERR));
	return got;
}

/* The responder's half of error case @k; returns the requester's problems */
static unsigned long error_responder(int k, struct conn *c,
				     const struct eslots *o)
{
	unsigned long before = g_problems, peer;
	char seen[256];
	int rc, got;

	/*
	 * two receives: the follow-up SEND's (never delivered) and the
	 * oversized SEND's target in EC_SEND_LONG
	 */
	rc = mtest_post_recv(c->qp, 0x100, g.buf + o->rcv,
			     k == EC_SEND_LONG ? 64 : 4096, lkey_of(o->rcv));
	if (!rc)
		rc = mtest_post_recv(c->qp, 0x101, g.buf + o->rcv2, 4096,
				     lkey_of(o->rcv2));
	if (rc)
		mtest_die("ibv_post_recv: %s", mtest_verr(rc));
	tx("READY 0");
	g_doing = "waiting for the requester (errors)";
	peer = resp_wait_done();
	eresp_verify_mem(k, o);
	got = eresp_receives(k, c, seen, sizeof(seen));
	vsay(1, "%s: responder QP %s, receives: %s", ecase[k].name,
	     mtest_qp_state_name(mtest_qp_state(c->qp)),
	     got ? seen : "none completed");
	tx("VERDICT 0 %lu", g_problems - before);
	return peer;
}

/* ---- errors: the requester */

/* Sources hold data, sinks the guard: what must stay as it is */
static void ereq_fill(int k, const struct eslots *o)
{
	const uint32_t off[3] = { o->src, o->fo_write, o->fo_send };

	for (int i = 0; i < 3; i++) {
		gen_data(g.buf + off[i], 4096,
			 0xe0000000u + 0x1000000u * (uint32_t)i + (uint32_t)k);
		memcpy(g.img + off[i], g.buf + off[i], 4096);
	}
}

/* The failing request of case @k: where it goes, and how long it is */
static void ereq_target(int k, const struct eslots *o, uint64_t *raddr,
			uint32_t *rkey, uint32_t *len)
{
	*raddr = 0;
	*rkey = 0;
	*len = 64;
	switch (k) {
	case EC_WRITE_RKEY:
		*raddr = g.r_buf + o->dst;
		*rkey = rkey_of(o->dst) ^ 0x5a5a5a00;
		break;
	case EC_WRITE_PAST:
	case EC_READ_PAST:
		*raddr = g.r_ebuf + EB_SMALL + PAGE - 32;
		*rkey = g.r_small;
		break;
	case EC_READ_NOREAD:
		*raddr = g.r_ebuf + EB_NOREAD + 256;
		*rkey = g.r_noread;
		break;
	case EC_WRITE_RO:
		*raddr = g.r_ebuf + EB_RO + 256;
		*rkey = g.r_ro;
		break;
	case EC_ATOMIC_NOATOMIC:
		*raddr = g.r_ebuf + EB_NOATOMIC + 256;
		*rkey = g.r_noatomic;
		*len = 8;
		break;
	case EC_ATOMIC_MISALIGNED:
		*raddr = g.r_buf + o->dst + 4;
		*rkey = rkey_of(o->dst);
		*len = 8;
		break;
	case EC_SEND_LONG:
		*len = 256;
		break;
	case EC_QP_NOWRITE:
	case EC_QP_NOWRITE_IMM0:
	case EC_QP_NOREAD:
	case EC_QP_NOREAD0:
	case EC_QP_NOATOMIC:
		/* a valid target: only the QP forbids the operation */
		*raddr = g.r_buf + o->dst;
		*rkey = rkey_of(o->dst);
		*len = k == EC_QP_NOATOMIC ? 8 :
		       k == EC_QP_NOWRITE_IMM0 || k == EC_QP_NOREAD0 ? 0 : 64;
		break;
	}
}

/*
 * The WR list of case @k: the failing request (wr_id 1), then a valid
 * WRITE (2) and SEND (3) that must be flushed
 */
static void ereq_build(int k, const struct eslots *o, struct ibv_send_wr *wr,
		       struct ibv_sge *sg)
{
	int op = ecase[k].op;
	uint32_t rkey, len, loc;
	uint64_t raddr;

	ereq_target(k, o, &raddr, &rkey, &len);
	memset(wr, 0, 3 * sizeof(*wr));
	loc = op == OP_WRITE || op == OP_WRITE_IMM || op == OP_SEND ?
	      o->src : o->dst;
	sg[0] = (struct ibv_sge){ (uintptr_t)g.buf + loc, len, lkey_of(loc) };
	wr[0].wr_id = 1;
	wr[0].opcode = wr_opcode(op);
	wr[0].sg_list = &sg[0];
	wr[0].num_sge = len ? 1 : 0;
	if (op == OP_WRITE_IMM)
		wr[0].imm_data = htobe32(0xe0e0e000u + (uint32_t)k);
	wr[0].send_flags = IBV_SEND_SIGNALED;
	wr[0].next = &wr[1];
	if (op == OP_CAS || op == OP_FAA) {
		wr[0].wr.atomic.remote_addr = raddr;
		wr[0].wr.atomic.rkey = rkey;
		wr[0].wr.atomic.compare_add = 1;
		wr[0].wr.atomic.swap = 2;
	} else {
		wr[0].wr.rdma.remote_addr = raddr;
		wr[0].wr.rdma.rkey = rkey;
	}
	sg[1] = (struct ibv_sge){ (uintptr_t)g.buf + o->fo_write, 100,
				  lkey_of(o->fo_write) };
	wr[1] = (struct ibv_send_wr){ .wr_id = 2, .sg_list = &sg[1],
		.num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED, .next = &wr[2] };
	wr[1].wr.rdma.remote_addr = g.r_buf + o->fo_target;
	wr[1].wr.rdma.rkey = rkey_of(o->fo_target);
	sg[2] = (struct ibv_sge){ (uintptr_t)g.buf + o->fo_send, 100,
				  lkey_of(o->fo_send) };
	wr[2] = (struct ibv_send_wr){ .wr_id = 3, .sg_list = &sg[2],
		.num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED };
}

/*
 * The completions of the WR list: the failing request's with the status
 * of case @k (or its tolerated deviation), then both follow-ups flushed.
 * Returns true when so.
 */
static bool ereq_completions(int k, struct conn *c)
{
	struct ibv_wc wc[4];
	bool ok = true;
	int got;

	g_doing = "waiting for the error completion";
	got = cq_wait(&c->scq, wc, 3, opt.timeout);
	if (got < 1) {
		problem("%s: no completion within %u s (expected %s)",
			ecase[k].name, opt.timeout, wc_status(ecase[k].want));
		ok = false;
	} else if (wc[0].wr_id == 1 && wc[0].status != ecase[k].want &&
		   ecase[k].alt && wc[0].status == ecase[k].alt) {
		deviation("%s (%s): the requester completed with %s; IBA/MetaRoCE: %s",
			  ecase[k].name, ecase[k].why,
			  wc_status(wc[0].status), wc_status(ecase[k].want));
	} else if (wc[0].wr_id != 1 || wc[0].status != ecase[k].want) {
		problem("%s (%s): first completion wr_id %" PRIu64 " status %s (%d), expected wr_id 1 status %s",
			ecase[k].name, ecase[k].why, wc[0].wr_id,
			wc_status(wc[0].status), wc[0].status,
			wc_status(ecase[k].want));
		ok = false;
	}
	for (int i = 1; i < got; i++)
		if (wc[i].wr_id != (uint64_t)i + 1 ||
		    wc[i].status != IBV_WC_WR_FLUSH_ERR) {
			problem("%s: follow-up WR: wr_id %" PRIu64 " status %s, expected wr_id %d %s",
				ecase[k].name, wc[i].wr_id,
				wc_status(wc[i].status), i + 1,
				wc_status(IBV_WC_WR_FLUSH_ERR));
			ok = false;
		}
	if (got >= 1 && got < 3) {
		problem("%s: %d of 2 follow-up WRs completed (want both %s)",
			ecase[k].name, got - 1, wc_status(IBV_WC_WR_FLUSH_ERR));
		ok = false;
	}
	return ok;
}

/*
 * After the error: the QP in ERR, and a WR posted to it then (a copy of
 * the follow-up WRITE, wr_id 4) flushed too.  Returns true when so.
 */
static bool ereq_after(int k, struct conn *c, const struct eslots *o)
{
	int st = mtest_qp_state(c->qp), rc;
	struct ibv_wc wc;
	bool ok = true;

	if (st != IBV_QPS_ERR) {
		problem("%s: requester QP in state %s after the error, expected ERR",
			ecase[k].name, mtest_qp_state_name(st));
		ok = false;
	}
	rc = mtest_post_send(c->qp, 4, IBV_WR_RDMA_WRITE, g.buf + o->fo_write,
			     100, lkey_of(o->fo_write), g.r_buf + o->fo_target,
			     rkey_of(o->fo_target), 0);
	if (rc) {
		mtest_say("note: %s: ibv_post_send on a QP in ERR returned %s",
			  ecase[k].name, mtest_verr(rc));
	} else if (cq_wait(&c->scq, &wc, 1, opt.timeout) != 1) {
		problem("%s: a WR posted after the error did not complete within %u s",
			ecase[k].name, opt.timeout);
		ok = false;
	} else if (wc.wr_id != 4 || wc.status != IBV_WC_WR_FLUSH_ERR) {
		problem("%s: a WR posted after the error completed with wr_id %" PRIu64 " status %s, expected %s",
			ecase[k].name, wc.wr_id, wc_status(wc.status),
			wc_status(IBV_WC_WR_FLUSH_ERR));
		ok = false;
	}
	return ok;
}

/* The requester's half of error case @k; returns the responder's problems */
static unsigned long error_requester(int k, struct conn *c,
				     const struct eslots *o, bool *rejected)
{
	unsigned long before = g_problems, peer;
	struct ibv_send_wr wr[3], *bad;
	struct ibv_sge sg[3];
	bool ok;
	int rc;

	ereq_fill(k, o);
	ereq_build(k, o, wr, sg);
	g_doing = "waiting for the responder (errors)";
	expect("READY", NULL, 0);
	rc = ibv_post_send(c->qp, wr, &bad);
	if (rc) {
		if (bad != &wr[0] || k != EC_ATOMIC_MISALIGNED)
			mtest_die("%s: ibv_post_send: %s", ecase[k].name,
				  mtest_verr(rc));
		/*
		 * a provider may refuse it locally (rxe does): nothing
		 * reaches the wire, the QP stays usable
		 */
		deviation("%s: the provider refuses it in ibv_post_send (%s): nothing sent, no completion (IBA/MetaRoCE C11: responder NAKs, %s)",
			  ecase[k].name, mtest_verr(rc),
			  wc_status(ecase[k].want));
		*rejected = true;
		return req_verdict(0, before);
	}
	ok = ereq_completions(k, c);
	ok = ereq_after(k, c, o) && ok;
	cq_check_empty(&c->scq, "requester");
	if (!verify_mem(g.buf, g.img, g.buflen, NULL,
			"requester memory after the error"))
		ok = false;
	peer = req_verdict(0, before);
	if (ok)
		vsay(1, "%s: %s -> %s, follow-ups flushed, QP ERR",
		     ecase[k].name, ecase[k].why, wc_status(ecase[k].want));
	return peer;
}

/* One error case, on a fresh QP pair; returns true when as expected. */
static bool error_case(int k, int dir, uint64_t *s, bool *rejected)
{
	const struct eslots o = error_slots();
	unsigned long before = g_problems, peer;
	int pk, pok, prej;
	struct conn c;
	char line[256];

	conn_create(&c, (uint32_t)sm64(s));
	c.deny = ecase[k].deny;
	conn_connect(&c, ecase[k].name);
	buf_reset();
	ebuf_reset();
	if (dir == g_side)
		peer = error_requester(k, &c, &o, rejected);
	else
		peer = error_responder(k, &c, &o);
	g_phase.errors += peer;
	conn_destroy(&c);
	tx("CASE %d %d %d", k, g_problems == before && !peer, *rejected);
	expect("CASE", line, sizeof(line));
	if (sscanf(line, "%d %d %d", &pk, &pok, &prej) != 3 || pk != k)
		mtest_die("protocol: bad CASE line");
	*rejected = *rejected || prej;
	return g_problems == before && !peer && pok;
}

static unsigned long g_provoked;

static void phase_errors(void)
{
	uint64_t s = mix(opt.seed, 0xe77);
	unsigned int n = 0, good = 0, rej = 0;
	char extra[200];

	phase_begin();
	for (int dir = 0; dir < 2; dir++)
		for (int k = 0; k < EC__N; k++) {
			bool rejected = false, ok;

			if (!ecase_ok(k))
				continue;
			n++;
			ok = error_case(k, dir, &s, &rejected);
			if (ok && rejected) {
				rej++;
			} else if (ok) {
				good++;
			} else {
				mtest_say("phase errors: case %s (%s) failed",
					  ecase[k].name, dir_str(dir));
			}
		}
	g_provoked = good;
	snprintf(extra, sizeof(extra),
		 "%u of %u errors provoked as expected (%u cases x 2 directions)%s",
		 good, n - rej, n / 2,
		 rej ? ", misaligned atomic refused by ibv_post_send (not sent)" : "");
	phase_end("errors", extra);
}

/* ------------------------------------------------------------ main */

static void usage(FILE *f)
{
	fprintf(f,
"Usage: " ME " -d DEV -g GIDX --server [OPTIONS]\n"
"       " ME " -d DEV -g GIDX --client SERVER_IP [OPTIONS]\n"
"\n"
"RC data-integrity test between two processes (libibverbs).  The TCP\n"
"connection carries the setup and the sequencing; every byte of every\n"
"destination, the guard zones around them, every completion (status,\n"
"opcode, byte_len, immediate) and every atomic result is checked.\n"
"\n"
"  -d, --dev DEV          RDMA device (e.g. mroce1, rxe0)\n"
"  -g, --gid-idx N        local GID index (RoCE v2: the IPv4-mapped GID)\n"
"  -i, --ib-port N        device port (default 1)\n"
"      --server           wait for the client\n"
"      --client HOST      connect to the server at HOST\n"
"  -p, --port PORT        TCP port (default %s)\n"
"  -n, --iters N          messages in the random phase (default %u); the\n"
"                         chain phase runs N/6 chains (4..32)\n"
"      --seed S           PRNG seed (default: time); same seed, same run\n"
"      --max-size BYTES   largest message (default 256K; K/M suffixes)\n"
"      --ops LIST         comma list of: send send_imm write write_imm\n"
"                         read cas faa atomic inline sge chain solicited\n"
"                         errors rnr data all (default all); \"-x\" removes x\n"
"  -e, --events           wait with CQ events (ibv_req_notify_cq +\n"
"                         ibv_get_cq_event) instead of busy polling\n"
"  -t, --timeout SEC      fail after SEC s without progress (default 30)\n"
"      --reorder          the network reorders: in the errors phase, the\n"
"                         follow-up WRITE/SEND targets may have been written\n"
"                         before the error was reported (local option)\n"
"      --strict           fail on known deviations from IBA/MetaRoCE that\n"
"                         are otherwise tolerated and printed as DEVIATION\n"
"                         (rxe: SEND longer than the receive completes\n"
"                         REM_OP_ERR/LOC_QP_OP_ERR instead of\n"
"                         REM_INV_REQ_ERR/LOC_LEN_ERR; misaligned atomics\n"
"                         refused by ibv_post_send instead of NAKed)\n"
"  -v, --verbose          more output (repeat for more)\n"
"      --corrupt-batch N  self-test of the checker: flip a data byte and a\n"
"                         guard byte after batch N (give it to both sides;\n"
"                         the run must then fail with MISMATCH lines)\n"
"\n"
"The client's --seed/--iters/--max-size/--ops/--events/--timeout/--strict\n"
"apply to both sides; the server fails if its own differ.  Last line on success:\n"
"  " ME ": N messages, B bytes verified, E errors provoked as expected\n"
"Exit status: 0 all checks passed, 1 failure, 2 usage.\n",
		opt.port, opt.iters);
}

static uint64_t parse_size(const char *s, const char *what)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);

	if (end == s)
		goto bad;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (*end == 'i' || *end == 'B')
		end++;
	if (!*end)
		return v;
bad:
	fprintf(stderr, ME ": bad %s: %s\n", what, s);
	exit(2);
}

static unsigned int parse_ops(const char *list)
{
	char *dup = strdup(list), *save = NULL, *w;
	unsigned int bits = 0;
	bool first = true;

	for (w = strtok_r(dup, ", ", &save); w; w = strtok_r(NULL, ", ", &save)) {
		bool neg = *w == '-';
		size_t i;

		if (neg)
			w++;
		if (neg && first)
			bits = F_ALL;
		first = false;
		for (i = 0; i < sizeof(op_words) / sizeof(op_words[0]); i++)
			if (!strcmp(w, op_words[i].name))
				break;
		if (i == sizeof(op_words) / sizeof(op_words[0])) {
			fprintf(stderr, ME ": unknown --ops word \"%s\"\n", w);
			exit(2);
		}
		if (neg)
			bits &= ~op_words[i].bits;
		else
			bits |= op_words[i].bits;
	}
	free(dup);
	return bits;
}

static void parse_args(int argc, char **argv)
{
	enum { O_SERVER = 256, O_CLIENT, O_SEED, O_MAX, O_OPS, O_CORRUPT,
	       O_STRICT, O_REORDER };
	static const struct option lo[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "ib-dev", required_argument, NULL, 'd' },
		{ "gid-idx", required_argument, NULL, 'g' },
		{ "ib-port", required_argument, NULL, 'i' },
		{ "server", no_argument, NULL, O_SERVER },
		{ "client", required_argument, NULL, O_CLIENT },
		{ "port", required_argument, NULL, 'p' },
		{ "iters", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, O_SEED },
		{ "max-size", required_argument, NULL, O_MAX },
		{ "ops", required_argument, NULL, O_OPS },
		{ "events", no_argument, NULL, 'e' },
		{ "timeout", required_argument, NULL, 't' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "corrupt-batch", required_argument, NULL, O_CORRUPT },
		{ "strict", no_argument, NULL, O_STRICT },
		{ "reorder", no_argument, NULL, O_REORDER },
		{ 0 }
	};
	int c;
	bool role = false;

	while ((c = getopt_long(argc, argv, "d:g:i:p:n:et:vh", lo, NULL)) != -1) {
		switch (c) {
		case 'd': opt.dev = optarg; break;
		case 'g': opt.gidx = (int)parse_size(optarg, "--gid-idx"); break;
		case 'i': opt.ib_port = (int)parse_size(optarg, "--ib-port"); break;
		case O_SERVER: opt.server = true; role = true; break;
		case O_CLIENT: opt.host = optarg; role = true; break;
		case 'p': opt.port = optarg; break;
		case 'n':
			opt.iters = (unsigned int)parse_size(optarg, "--iters");
			opt.set_iters = true;
			break;
		case O_SEED:
			opt.seed = parse_size(optarg, "--seed");
			opt.set_seed = true;
			break;
		case O_MAX: {
			uint64_t v = parse_size(optarg, "--max-size");

			if (v < 1 || v > (1u << 30)) {
				fprintf(stderr, ME ": --max-size must be 1..1G\n");
				exit(2);
			}
			opt.max_size = (uint32_t)v;
			opt.set_max = true;
			break;
		}
		case O_OPS: opt.ops = parse_ops(optarg); opt.set_ops = true; break;
		case 'e': opt.events = true; opt.set_events = true; break;
		case O_STRICT: opt.strict = true; opt.set_strict = true; break;
		case O_REORDER: opt.reorder = true; break;
		case 't':
			opt.timeout = (unsigned int)parse_size(optarg, "--timeout");
			opt.set_timeout = true;
			break;
		case 'v': opt.verbose++; break;
		case O_CORRUPT:
			opt.corrupt_batch = (unsigned int)parse_size(optarg,
								     "--corrupt-batch");
			break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (optind != argc || !opt.dev || opt.gidx < 0 || !role ||
	    (opt.server && opt.host) || !opt.timeout) {
		fprintf(stderr, ME ": need -d DEV, -g GIDX and one of --server or --client HOST\n");
		usage(stderr);
		exit(2);
	}
	if (!opt.set_seed)
		opt.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 16);
}

static void hello(void)
{
	char line[1024], gs[64];
	struct caps *me = &g.cap[g_side], *pe = &g.cap[!g_side];
	int atomic;

	mtest_gid_str(&g.gid, gs, sizeof(gs));
	tx("HELLO %d %s %d %d %d %d %d %d %d %u %#" PRIx64 " %#x %#x %#" PRIx64
	   " %#x %#x %#x %#x", PROTO_VERSION, gs, me->mtu, me->send_sge,
	   me->recv_sge, me->rd_sge, me->inl, me->atomic, me->rd_atom,
	   me->max_msg, (uint64_t)(uintptr_t)g.buf, g.mr[0]->rkey,
	   g.mr[1]->rkey, (uint64_t)(uintptr_t)g.ebuf, g.mr_small->rkey,
	   g.mr_noread->rkey, g.mr_noatomic->rkey, g.mr_ro->rkey);
	expect("HELLO", line, sizeof(line));
	int ver;

	if (sscanf(line, "%d %63s %d %d %d %d %d %d %d %u %" SCNx64 " %x %x %" SCNx64
		   " %x %x %x %x", &ver, gs, &pe->mtu, &pe->send_sge,
		   &pe->recv_sge, &pe->rd_sge, &pe->inl, &atomic, &pe->rd_atom,
		   &pe->max_msg, &g.r_buf, &g.r_rkey[0], &g.r_rkey[1], &g.r_ebuf,
		   &g.r_small, &g.r_noread, &g.r_noatomic, &g.r_ro) != 18 ||
	    ver != PROTO_VERSION || mtest_gid_parse(gs, &g.rgid))
		mtest_die("protocol: bad HELLO from the peer: \"%s\"", line);
	pe->atomic = atomic;
	if (pe->send_sge > MAX_SGE)
		pe->send_sge = MAX_SGE;
	if (pe->recv_sge > MAX_SGE)
		pe->recv_sge = MAX_SGE;
	if (pe->rd_sge > MAX_SGE)
		pe->rd_sge = MAX_SGE;
	if (me->rd_sge > MAX_SGE)
		me->rd_sge = MAX_SGE;
	g.mtu = (enum ibv_mtu)(me->mtu < pe->mtu ? me->mtu : pe->mtu);
	g.mtu_bytes = 128 << g.mtu;
}

/* Client: send the run's parameters; server: adopt them. */
static void params(void)
{
	char line[256];

	if (!opt.server) {
		tx("PARAMS %" PRIu64 " %u %u %#x %d %u %d", opt.seed, opt.iters,
		   opt.max_size, opt.ops, opt.events, opt.timeout, opt.strict);
		return;
	}
	uint64_t seed;
	unsigned int iters, max, ops, tmo;
	int ev, strict;

	expect("PARAMS", line, sizeof(line));
	if (sscanf(line, "%" SCNu64 " %u %u %x %d %u %d", &seed, &iters, &max,
		   &ops, &ev, &tmo, &strict) != 7)
		mtest_die("protocol: bad PARAMS line \"%s\"", line);
#define ADOPT(field, set, val, name)						\
	do {									\
		if (opt.set && opt.field != (val))				\
			mtest_die("the client's " name " differs from the server's"	\
				  " (give it to the client only)");			\
		opt.field = (val);						\
	} while (0)
	ADOPT(seed, set_seed, seed, "--seed");
	ADOPT(iters, set_iters, iters, "--iters");
	ADOPT(max_size, set_max, max, "--max-size");
	ADOPT(ops, set_ops, ops, "--ops");
	ADOPT(events, set_events, (ev != 0), "--events");
	ADOPT(timeout, set_timeout, tmo, "--timeout");
	ADOPT(strict, set_strict, (strict != 0), "--strict");
#undef ADOPT
}

/* The run's setup, as both sides agreed on it */
static void say_setup(void)
{
	const struct caps *cc = &g.cap[SIDE_CLIENT], *sc = &g.cap[SIDE_SERVER];
	char gs[64], rgs[64];

	mtest_say("%s %s port %d GID[%d] %s <-> %s",
		  side_name[g_side], opt.dev, opt.ib_port, opt.gidx,
		  mtest_gid_str(&g.gid, gs, sizeof(gs)),
		  mtest_gid_str(&g.rgid, rgs, sizeof(rgs)));
	mtest_say("path MTU %d, SGEs send/recv/read client %d/%d/%d server %d/%d/%d, inline client %d server %d, atomics %s",
		  g.mtu_bytes, cc->send_sge, cc->recv_sge, cc->rd_sge,
		  sc->send_sge, sc->recv_sge, sc->rd_sge, cc->inl, sc->inl,
		  cc->atomic && sc->atomic ? "yes" :
		  "no (atomic_cap NONE: skipped)");
	mtest_say("seed %" PRIu64 ", %u random messages, max size %u, %s, timeout %u s",
		  opt.seed, opt.iters, opt.max_size,
		  opt.events ? "CQ events (--events)" : "busy polling",
		  opt.timeout);
}

int main(int argc, char **argv)
{
	char line[64];
	double t0 = mtest_now();
	bool ok;

	setvbuf(stdout, NULL, _IOLBF, 0);
	mtest_init(ME, 0);
	mtest_set_die_hook(die_report);
	parse_args(argc, argv);
	g_side = opt.server ? SIDE_SERVER : SIDE_CLIENT;
	g_watchdog_s = 3 * opt.timeout + 30;
	signal(SIGALRM, watchdog_fire);
	signal(SIGPIPE, SIG_IGN);
	watchdog_kick();

	dev_open();
	tcp_setup();
	params();
	g_watchdog_s = 3 * opt.timeout + 30;
	watchdog_kick();
	if (opt.max_size > g.cap[g_side].max_msg && g.cap[g_side].max_msg) {
		mtest_say("note: --max-size %u above %s's max_msg_sz %u: using %u",
			  opt.max_size, opt.dev, g.cap[g_side].max_msg,
			  g.cap[g_side].max_msg);
		opt.max_size = g.cap[g_side].max_msg;
	}
	buffers_setup();
	conn_create(&g.main, 0xffffff - (uint32_t)rnd(&(uint64_t){ opt.seed ^ (uint64_t)g_side }, 48));
	hello();
	/* both sides must agree on max_size after clamping */
	tx("SIZE %u", opt.max_size);
	expect("SIZE", line, sizeof(line));
	if ((uint32_t)strtoul(line, NULL, 10) != opt.max_size)
		mtest_die("the two devices' max_msg_sz differ: use --max-size %s",
			  line);

	say_setup();

	conn_connect(&g.main, "main QP pair");

	if (opt.ops & F_OPS)
		phase_basic();
	if (opt.ops & F_OPS)
		phase_random();
	if ((opt.ops & F_CHAIN) && op_ok(OP_WRITE) && op_ok(OP_WRITE_IMM))
		phase_chain();
	if (op_ok(OP_CAS) || op_ok(OP_FAA))
		phase_atomic();
	else if (opt.ops & (F_CAS | F_FAA))
		mtest_say("phase atomic: skipped (atomic_cap is IBV_ATOMIC_NONE)");
	conn_destroy(&g.main);
	if ((opt.ops & F_SOLICITED) && op_ok(OP_SEND) && op_ok(OP_SEND_IMM) &&
	    op_ok(OP_WRITE_IMM))
		phase_solicited();
	if (opt.ops & F_ERRORS)
		phase_errors();

	tx("BYE %lu", g_deviations);
	expect("BYE", line, sizeof(line));
	unsigned long pdev = strtoul(line, NULL, 10);

	close(g_ctl.fd);
	g_ctl.fd = -1;
	if (g_deviations + pdev)
		mtest_say("%lu deviation(s) from IBA/MetaRoCE tolerated (DEVIATION lines; --strict fails them)",
			  g_deviations + pdev);

	ok = !g_total.errors;
	if (opt.events)
		mtest_say("%lu CQ events", g.events);
	mtest_say("%lu messages, %lu bytes verified, %lu errors provoked as expected (%.1f s)",
		  g_total.msgs, g_total.bytes, g_provoked, mtest_now() - t0);
	if (!ok) {
		mtest_say("FAILED: %lu problem(s), see the MISMATCH lines (of both sides)",
			  g_total.errors);
		return 1;
	}
	return 0;
}
