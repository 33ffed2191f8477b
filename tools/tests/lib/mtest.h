/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * mtest - the helpers the mroce verbs test programs share (libibverbs only,
 * any RDMA device): the programs in tools/tests/src, pd_smoke, dp_smoke and
 * ring_test in tools/libmroce/tests, and tools/mroce-verify.  Each program
 * compiles mtest.c in.
 *
 *   reporting   mtest_init() names the program for its output lines;
 *               mtest_check() prints "ok   - ..." or "FAIL - ..." and
 *               counts, mtest_fail() prints "FAIL <who>: ..." and counts,
 *               mtest_die() ends the program, mtest_say() is a progress
 *               line, mtest_summary() the "<who>: N passed, N failed" line
 *   time        mtest_now(), mtest_sleep_us(), mtest_watchdog()
 *   objects     device by name, page-aligned buffers, MRs, RC QPs
 *   QP states   RESET -> INIT -> RTR -> RTS with a GRH, from one struct
 *               mtest_path; mtest_qp_state() and its name; new PSNs
 *   WRs         one-SGE post_send / post_recv, polling with a timeout
 *   control     a TCP connection carrying text lines, for programs whose
 *               two sides exchange QP numbers, PSNs, GIDs and rkeys
 *
 * Functions that return an int return 0 or the errno value (as verbs do,
 * and errno is set to it too); those that cannot fail return nothing and
 * end the program through mtest_die() instead.
 */
#ifndef MTEST_H
#define MTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#define MTEST_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------ reporting */

/* mtest_init() flags */
#define MTEST_STAMP	0x1	/* say and fail lines end with " [t=S]" */

extern const char *mtest_who;		/* in every line; default "mtest" */
extern unsigned int mtest_passed;	/* mtest_check() that passed */
extern unsigned int mtest_failed;	/* failed checks + mtest_fail() */

void mtest_init(const char *who, unsigned int flags);
/*
 * Called with the message instead of the default report of mtest_die()
 * ("FAIL <who>: MSG", "<who>: giving up" on stdout); mtest_die() exits
 * with status 1 if the hook returns.
 */
void mtest_set_die_hook(void (*hook)(const char *msg));
void mtest_die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
void mtest_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void mtest_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
bool mtest_check(bool ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "<who>: N passed, N failed"; returns the exit status, 1 if any failed */
int mtest_summary(void);
/* strerror() of a verbs return value (errno value, or negated) */
const char *mtest_verr(int rc);

/* ----------------------------------------------------------------- time */

double mtest_now(void);			/* CLOCK_MONOTONIC, seconds */
void mtest_sleep_us(long us);
/* End the program (FAIL line, exit 1) if it is still running in @secs. */
void mtest_watchdog(unsigned int secs);

/* -------------------------------------------------------------- objects */

/* Open the device called @name; NULL (errno set) if there is none. */
struct ibv_context *mtest_find_device(const char *name);
/* The same, but dies naming the devices libibverbs sees. */
struct ibv_context *mtest_open_device(const char *name);
void *mtest_alloc(size_t len);		/* page aligned, zeroed; dies */
struct ibv_mr *mtest_reg_mr(struct ibv_pd *pd, void *addr, size_t len,
			    int access, const char *what);	/* dies */
/* An RC QP; @cap in: what to ask for, out: what the QP got.  NULL, errno. */
struct ibv_qp *mtest_create_rc_qp(struct ibv_pd *pd, struct ibv_cq *scq,
				  struct ibv_cq *rcq, struct ibv_qp_cap *cap);
/* GID as IPv6 text (inet_ntop) into @buf, and back: 0, or -1 */
const char *mtest_gid_str(const union ibv_gid *gid, char *buf, size_t len);
int mtest_gid_parse(const char *s, union ibv_gid *gid);
/* port 1's first RoCE v2 GID ::ffff:a.b.c.d: its index (*gid set), or -1 */
int mtest_find_ipv4_gid(struct ibv_context *ctx, union ibv_gid *gid);

/* ------------------------------------------------------------ QP states */

/* Where a QP sends to and how; mtest_qp_rtr() and mtest_qp_rts() use it. */
struct mtest_path {
	uint32_t dest_qpn;
	uint32_t rq_psn;		/* the peer's sq_psn */
	uint32_t sq_psn;
	union ibv_gid dgid;
	uint8_t sgid_index;
	uint8_t port;
	enum ibv_mtu mtu;
	uint8_t rd_atomic;		/* max_rd_atomic and max_dest_rd_atomic */
	uint8_t timeout;		/* local ACK timeout exponent */
	uint8_t retry_cnt;
};

/* min_rnr_timer and rnr_retry of every QP the programs connect */
#define MTEST_MIN_RNR_TIMER	12	/* 0.64 ms */
#define MTEST_RNR_RETRY		7	/* retry forever */

/* "RESET" ... "ERR"; "?" for a state that is none of them */
const char *mtest_qp_state_name(int state);
/* The QP's state, or -1 if ibv_query_qp fails */
int mtest_qp_state(struct ibv_qp *qp);
/* RESET -> INIT on @port with @access; RTR and RTS from @p */
int mtest_qp_init(struct ibv_qp *qp, uint8_t port, int access);
int mtest_qp_rtr(struct ibv_qp *qp, const struct mtest_path *p);
int mtest_qp_rts(struct ibv_qp *qp, const struct mtest_path *p);
/* ibv_modify_qp or die, naming @what (the target state) */
void mtest_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
		     const char *what);
/* From any state to RESET, then INIT (as mtest_qp_init); dies */
void mtest_qp_reset_init(struct ibv_qp *qp, uint8_t port, int access);
/* INIT -> RTR -> RTS (as mtest_qp_rtr, mtest_qp_rts); dies */
void mtest_qp_rtr_rts(struct ibv_qp *qp, const struct mtest_path *p);
/* A random 24-bit PSN at least 4096 away from @old on both sides */
uint32_t mtest_new_psn(unsigned int *seed, uint32_t old);

/* ------------------------------------------------------------------ WRs */

/* One SGE (none when @len is 0), signaled; the errno value */
int mtest_post_send(struct ibv_qp *qp, uint64_t wr_id,
		    enum ibv_wr_opcode op, void *addr, uint32_t len,
		    uint32_t lkey, uint64_t raddr, uint32_t rkey, uint32_t imm);
int mtest_post_recv(struct ibv_qp *qp, uint64_t wr_id, void *addr,
		    uint32_t len, uint32_t lkey);
/* ibv_post_send of the list @wr; the errno value */
int mtest_post_wr(struct ibv_qp *qp, struct ibv_send_wr *wr);
/*
 * Up to @n completions into @wc, within @timeout_ms from the call;
 * returns how many came, or ibv_poll_cq's negative return value.
 */
int mtest_poll(struct ibv_cq *cq, struct ibv_wc *wc, int n, int timeout_ms);
/* One completion within @timeout_ms: true, false on timeout; dies on error */
bool mtest_wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, int timeout_ms);
/* Poll @cq empty; returns how many completions were thrown away */
int mtest_drain_cq(struct ibv_cq *cq);

/* -------------------------------------------------------------- control */

/* A listening TCP socket on @port, IPv6 and IPv4; dies */
int mtest_tcp_listen(const char *port);
/* The first client of @ls within @secs (then @ls is closed); dies */
int mtest_tcp_accept(int ls, unsigned int secs);
/* Connected to @host:@port, retrying for @secs; dies */
int mtest_tcp_connect(const char *host, const char *port, unsigned int secs);

/* Lines over a stream socket */
struct mtest_lines {
	int fd;
	size_t len;		/* bytes in buf */
	char buf[16384];
};

void mtest_lines_init(struct mtest_lines *l, int fd);
/* All of @len bytes of @buf to @fd: 0, or -1 with errno set */
int mtest_send_all(int fd, const void *buf, size_t len);
/* A line already in the buffer? */
bool mtest_line_ready(const struct mtest_lines *l);
/*
 * Read what the peer sent within @timeout_ms into the buffer: 1 data,
 * 0 nothing (or the buffer is full), -1 closed (errno 0) or an error
 */
int mtest_lines_fill(struct mtest_lines *l, int timeout_ms);
/*
 * The next line, without its newline, into @out within @timeout_ms:
 * 1 a line, 0 timeout, -1 closed (errno 0) or an error, -2 a line that
 * does not fit in @size or in the buffer
 */
int mtest_read_line(struct mtest_lines *l, char *out, size_t size,
		    int timeout_ms);

#endif /* MTEST_H */
