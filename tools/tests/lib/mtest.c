// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * mtest - helpers shared by the mroce verbs test programs (see mtest.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "mtest.h"

#define MTEST_PAGE	4096
#define MTEST_PSN_MASK	0xffffff
#define MTEST_PSN_GAP	4096	/* a new PSN is this far from the old one */
#define MTEST_HOP_LIMIT	64

const char *mtest_who = "mtest";
unsigned int mtest_passed, mtest_failed;

static unsigned int mtest_flags;
static double mtest_t0;
static void (*mtest_die_hook)(const char *msg);

/* ------------------------------------------------------------ reporting */

void mtest_init(const char *who, unsigned int flags)
{
	mtest_who = who;
	mtest_flags = flags;
	mtest_t0 = mtest_now();
}

void mtest_set_die_hook(void (*hook)(const char *msg))
{
	mtest_die_hook = hook;
}

/* The end of a say or fail line: the time stamp, if asked for */
static void mtest_eol(void)
{
	if (mtest_flags & MTEST_STAMP)
		printf(" [t=%.3f]", mtest_now() - mtest_t0);
	putchar('\n');
	fflush(stdout);
}

void mtest_die(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (mtest_die_hook) {
		mtest_die_hook(msg);
	} else {
		printf("FAIL %s: %s\n%s: giving up\n", mtest_who, msg,
		       mtest_who);
		fflush(stdout);
	}
	exit(1);
}

void mtest_fail(const char *fmt, ...)
{
	va_list ap;

	printf("FAIL %s: ", mtest_who);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	mtest_eol();
	mtest_failed++;
}

void mtest_say(const char *fmt, ...)
{
	va_list ap;

	printf("%s: ", mtest_who);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	mtest_eol();
}

bool mtest_check(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", ok ? "ok  " : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (ok)
		mtest_passed++;
	else
		mtest_failed++;
	return ok;
}

int mtest_summary(void)
{
	printf("%s: %u passed, %u failed\n", mtest_who, mtest_passed,
	       mtest_failed);
	fflush(stdout);
	return mtest_failed ? 1 : 0;
}

const char *mtest_verr(int rc)
{
	if (rc < 0)
		rc = -rc;
	return strerror(rc ? rc : errno);
}

/* ----------------------------------------------------------------- time */

double mtest_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

void mtest_sleep_us(long us)
{
	struct timespec t = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

static char mtest_watchdog_msg[160];
static size_t mtest_watchdog_len;

static void mtest_watchdog_fire(int sig)
{
	(void)sig;
	if (write(STDOUT_FILENO, mtest_watchdog_msg, mtest_watchdog_len) < 0)
		_exit(1);
	_exit(1);
}

void mtest_watchdog(unsigned int secs)
{
	int n = snprintf(mtest_watchdog_msg, sizeof(mtest_watchdog_msg),
			 "FAIL %s: watchdog: stuck for more than %u s (a verbs call or wait that never returned)\n",
			 mtest_who, secs);

	mtest_watchdog_len = n > 0 && (size_t)n < sizeof(mtest_watchdog_msg) ?
			     (size_t)n : sizeof(mtest_watchdog_msg) - 1;
	signal(SIGALRM, mtest_watchdog_fire);
	alarm(secs);
}

/* -------------------------------------------------------------- objects */

struct ibv_context *mtest_find_device(const char *name)
{
	struct ibv_context *ctx = NULL;
	struct ibv_device **list;
	int i, n, err = ENODEV;

	list = ibv_get_device_list(&n);
	if (!list)
		return NULL;
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name)) {
			ctx = ibv_open_device(list[i]);
			err = errno;
			break;
		}
	ibv_free_device_list(list);
	if (!ctx)
		errno = err;
	return ctx;
}

struct ibv_context *mtest_open_device(const char *name)
{
	struct ibv_context *ctx = mtest_find_device(name);
	struct ibv_device **list;
	char names[512] = "";
	int i, n, err = errno;

	if (ctx)
		return ctx;
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++) {
		strncat(names, " ", sizeof(names) - strlen(names) - 1);
		strncat(names, ibv_get_device_name(list[i]),
			sizeof(names) - strlen(names) - 1);
	}
	if (list)
		ibv_free_device_list(list);
	mtest_die("cannot open RDMA device %s: %s (libibverbs sees:%s; RDMAV_DRIVERS=%s)",
		  name, strerror(err), names[0] ? names : " none",
		  getenv("RDMAV_DRIVERS") ?: "unset");
}

void *mtest_alloc(size_t len)
{
	void *p;

	if (posix_memalign(&p, MTEST_PAGE, len ? len : 1))
		mtest_die("out of memory (%zu bytes)", len);
	memset(p, 0, len);
	return p;
}

struct ibv_mr *mtest_reg_mr(struct ibv_pd *pd, void *addr, size_t len,
			    int access, const char *what)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, addr, len, access);

	if (!mr)
		mtest_die("ibv_reg_mr(%s, %zu bytes, access %#x): %s", what, len,
			  access, strerror(errno));
	return mr;
}

struct ibv_qp *mtest_create_rc_qp(struct ibv_pd *pd, struct ibv_cq *scq,
				  struct ibv_cq *rcq, struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = scq, .recv_cq = rcq, .qp_type = IBV_QPT_RC,
		.cap = *cap,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	if (qp)
		*cap = ia.cap;
	return qp;
}

const char *mtest_gid_str(const union ibv_gid *gid, char *buf, size_t len)
{
	if (!inet_ntop(AF_INET6, gid->raw, buf, (socklen_t)len))
		snprintf(buf, len, "?");
	return buf;
}

int mtest_find_ipv4_gid(struct ibv_context *ctx, union ibv_gid *gid)
{
	struct ibv_port_attr pa;

	if (ibv_query_port(ctx, 1, &pa))
		return -1;
	for (int i = 0; i < pa.gid_tbl_len; i++) {
		struct ibv_gid_entry e;

		if (ibv_query_gid_ex(ctx, 1, i, &e, 0) ||
		    e.gid_type != IBV_GID_TYPE_ROCE_V2)
			continue;
		if (e.gid.global.subnet_prefix == 0 &&
		    (be64toh(e.gid.global.interface_id) >> 32) == 0xffff) {
			*gid = e.gid;
			return i;
		}
	}
	return -1;
}

int mtest_gid_parse(const char *s, union ibv_gid *gid)
{
	return inet_pton(AF_INET6, s, gid->raw) == 1 ? 0 : -1;
}

/* ------------------------------------------------------------ QP states */

const char *mtest_qp_state_name(int state)
{
	static const char *const name[] = {
		[IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT",
		[IBV_QPS_RTR] = "RTR", [IBV_QPS_RTS] = "RTS",
		[IBV_QPS_SQD] = "SQD", [IBV_QPS_SQE] = "SQE",
		[IBV_QPS_ERR] = "ERR",
	};

	if (state < 0 || state >= (int)MTEST_ARRAY_SIZE(name) || !name[state])
		return "?";
	return name[state];
}

int mtest_qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return -1;
	return a.qp_state;
}

/* ibv_modify_qp's return value, also in errno */
static int mtest_modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
	int err = ibv_modify_qp(qp, a, mask);

	if (err)
		errno = err < 0 ? -err : err;
	return err;
}

int mtest_qp_init(struct ibv_qp *qp, uint8_t port, int access)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = port,
		.qp_access_flags = access,
	};

	return mtest_modify(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

int mtest_qp_rtr(struct ibv_qp *qp, const struct mtest_path *p)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = p->mtu,
		.dest_qp_num = p->dest_qpn, .rq_psn = p->rq_psn,
		.max_dest_rd_atomic = p->rd_atomic,
		.min_rnr_timer = MTEST_MIN_RNR_TIMER,
		.ah_attr = { .is_global = 1, .port_num = p->port,
			     .grh = { .dgid = p->dgid,
				      .sgid_index = p->sgid_index,
				      .hop_limit = MTEST_HOP_LIMIT } },
	};

	return mtest_modify(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_MIN_RNR_TIMER);
}

int mtest_qp_rts(struct ibv_qp *qp, const struct mtest_path *p)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS, .sq_psn = p->sq_psn,
		.timeout = p->timeout, .retry_cnt = p->retry_cnt,
		.rnr_retry = MTEST_RNR_RETRY, .max_rd_atomic = p->rd_atomic,
	};

	return mtest_modify(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			    IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			    IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* Dies with what a failed move of @qp to @what returned */
static void mtest_must(struct ibv_qp *qp, int err, const char *what)
{
	if (err)
		mtest_die("ibv_modify_qp QP %u to %s: %s (QP in %s)",
			  qp->qp_num, what, mtest_verr(err),
			  mtest_qp_state_name(mtest_qp_state(qp)));
}

void mtest_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
		     const char *what)
{
	mtest_must(qp, mtest_modify(qp, attr, mask), what);
}

void mtest_qp_reset_init(struct ibv_qp *qp, uint8_t port, int access)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	mtest_modify_qp(qp, &a, IBV_QP_STATE, "RESET");
	mtest_must(qp, mtest_qp_init(qp, port, access), "INIT");
}

void mtest_qp_rtr_rts(struct ibv_qp *qp, const struct mtest_path *p)
{
	mtest_must(qp, mtest_qp_rtr(qp, p), "RTR");
	mtest_must(qp, mtest_qp_rts(qp, p), "RTS");
}

uint32_t mtest_new_psn(unsigned int *seed, uint32_t old)
{
	uint32_t p;

	do
		p = (uint32_t)rand_r(seed) & MTEST_PSN_MASK;
	while (((p - old) & MTEST_PSN_MASK) < MTEST_PSN_GAP ||
	       ((old - p) & MTEST_PSN_MASK) < MTEST_PSN_GAP);
	return p;
}

/* ------------------------------------------------------------------ WRs */

int mtest_post_wr(struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	int err = ibv_post_send(qp, wr, &bad);

	if (err)
		errno = err;
	return err;
}

int mtest_post_send(struct ibv_qp *qp, uint64_t wr_id,
		    enum ibv_wr_opcode op, void *addr, uint32_t len,
		    uint32_t lkey, uint64_t raddr, uint32_t rkey, uint32_t imm)
{
	struct ibv_sge sge = { (uintptr_t)addr, len, lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = len ? 1 : 0,
		.opcode = op, .send_flags = IBV_SEND_SIGNALED,
		.imm_data = htonl(imm), .wr.rdma = { raddr, rkey },
	};

	return mtest_post_wr(qp, &wr);
}

int mtest_post_recv(struct ibv_qp *qp, uint64_t wr_id, void *addr,
		    uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { (uintptr_t)addr, len, lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = len ? 1 : 0 }, *bad;
	int err = ibv_post_recv(qp, &wr, &bad);

	if (err)
		errno = err;
	return err;
}

int mtest_poll(struct ibv_cq *cq, struct ibv_wc *wc, int n, int timeout_ms)
{
	double end = mtest_now() + timeout_ms / 1000.0;
	int got = 0;

	while (got < n) {
		int r = ibv_poll_cq(cq, n - got, wc + got);

		if (r < 0)
			return r;
		got += r;
		if (!r && mtest_now() > end)
			break;
	}
	return got;
}

bool mtest_wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, int timeout_ms)
{
	double end = mtest_now() + timeout_ms / 1000.0;

	for (;;) {
		int r = ibv_poll_cq(cq, 1, wc);

		if (r < 0)
			mtest_die("ibv_poll_cq: %d", r);
		if (r)
			return true;
		if (mtest_now() > end)
			return false;
		mtest_sleep_us(100);
	}
}

int mtest_drain_cq(struct ibv_cq *cq)
{
	struct ibv_wc wc;
	int n = 0;

	while (ibv_poll_cq(cq, 1, &wc) > 0)
		n++;
	return n;
}

/* -------------------------------------------------------------- control */

static uint16_t mtest_port_num(const char *port)
{
	char *end;
	unsigned long p = strtoul(port, &end, 10);

	if (*end || !p || p > 65535)
		mtest_die("bad TCP port %s", port);
	return (uint16_t)p;
}

/* @fd bound to @sa, or closed and -1 */
static int mtest_bind(int fd, const void *sa, socklen_t len)
{
	int one = 1;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (!bind(fd, sa, len))
		return fd;
	close(fd);
	return -1;
}

int mtest_tcp_listen(const char *port)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6,
				   .sin6_addr = IN6ADDR_ANY_INIT };
	struct sockaddr_in a4 = { .sin_family = AF_INET };
	int ls, zero = 0;

	a6.sin6_port = htons(mtest_port_num(port));
	a4.sin_port = a6.sin6_port;
	ls = socket(AF_INET6, SOCK_STREAM, 0);
	if (ls >= 0)
		setsockopt(ls, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	ls = mtest_bind(ls, &a6, sizeof(a6));
	if (ls < 0)	/* no IPv6: IPv4 only */
		ls = mtest_bind(socket(AF_INET, SOCK_STREAM, 0), &a4,
				sizeof(a4));
	if (ls < 0)
		mtest_die("bind TCP port %s: %s", port, strerror(errno));
	if (listen(ls, 1))
		mtest_die("listen on TCP port %s: %s", port, strerror(errno));
	return ls;
}

static void mtest_nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

int mtest_tcp_accept(int ls, unsigned int secs)
{
	struct pollfd pfd = { .fd = ls, .events = POLLIN };
	int r, fd;

	do
		r = poll(&pfd, 1, (int)secs * 1000);
	while (r < 0 && errno == EINTR);
	if (r <= 0)
		mtest_die("timeout: no client connected within %u s", secs);
	fd = accept(ls, NULL, NULL);
	if (fd < 0)
		mtest_die("accept: %s", strerror(errno));
	close(ls);
	mtest_nodelay(fd);
	return fd;
}

/* A socket connected to one of @res, or -1 with errno of the last try */
static int mtest_connect_any(const struct addrinfo *res)
{
	const struct addrinfo *ai;
	int fd, err = ECONNREFUSED;

	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
		if (fd < 0)
			continue;
		if (!connect(fd, ai->ai_addr, ai->ai_addrlen))
			return fd;
		err = errno;
		close(fd);
	}
	errno = err;
	return -1;
}

int mtest_tcp_connect(const char *host, const char *port, unsigned int secs)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM }, *res;
	double end = mtest_now() + secs;
	int fd, r;

	r = getaddrinfo(host, port, &hints, &res);
	if (r)
		mtest_die("cannot resolve %s port %s: %s", host, port,
			  gai_strerror(r));
	while ((fd = mtest_connect_any(res)) < 0) {
		if (mtest_now() > end)
			mtest_die("timeout: cannot connect to %s port %s for %u s: %s",
				  host, port, secs, strerror(errno));
		mtest_sleep_us(100 * 1000);
	}
	freeaddrinfo(res);
	mtest_nodelay(fd);
	return fd;
}

void mtest_lines_init(struct mtest_lines *l, int fd)
{
	l->fd = fd;
	l->len = 0;
}

int mtest_send_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t r = send(fd, p, len, MSG_NOSIGNAL);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (!r)
				errno = EPIPE;
			return -1;
		}
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

bool mtest_line_ready(const struct mtest_lines *l)
{
	return memchr(l->buf, '\n', l->len);
}

int mtest_lines_fill(struct mtest_lines *l, int timeout_ms)
{
	struct pollfd pfd = { .fd = l->fd, .events = POLLIN };
	ssize_t got;
	int r;

	if (l->len == sizeof(l->buf))
		return 0;
	r = poll(&pfd, 1, timeout_ms);
	if (r < 0)
		return errno == EINTR ? 0 : -1;
	if (!r)
		return 0;
	got = recv(l->fd, l->buf + l->len, sizeof(l->buf) - l->len, 0);
	if (got < 0 && errno == EINTR)
		return 0;
	if (got <= 0) {
		if (!got)
			errno = 0;
		return -1;
	}
	l->len += (size_t)got;
	return 1;
}

int mtest_read_line(struct mtest_lines *l, char *out, size_t size,
		    int timeout_ms)
{
	double end = mtest_now() + timeout_ms / 1000.0;

	for (;;) {
		char *nl = memchr(l->buf, '\n', l->len);
		int left, r;

		if (nl) {
			size_t n = (size_t)(nl - l->buf);

			if (n >= size)
				return -2;
			memcpy(out, l->buf, n);
			out[n] = 0;
			l->len -= n + 1;
			memmove(l->buf, nl + 1, l->len);
			return 1;
		}
		if (l->len == sizeof(l->buf))
			return -2;
		left = (int)((end - mtest_now()) * 1000);
		if (left <= 0)
			return 0;
		r = mtest_lines_fill(l, left + 1);
		if (r < 0)
			return r;
	}
}
