// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce-verbsfuzz - a verbs fuzzer for the mroce soft RDMA device, run by
 * an unprivileged-style user process (tools/tests/t-61-verbsfuzz.sh runs
 * it in the test guest).  What a local user can do to the driver:
 *
 *   - call the verbs with random valid and invalid arguments, in random
 *     orders (random, bad-args, cur-state*, wrap-*, edge-*);
 *   - write anything into the rings it has mapped: every field of a send
 *     and of a receive WQE, the producer indexes, the CQ's consumer
 *     index (ring-*);
 *   - destroy objects while traffic runs (destroy-race), get killed in
 *     the middle of a transfer (kill), deregister memory that a peer is
 *     writing into (dereg-*), let a CQ overflow (cq-overflow-*);
 *   - create many QPs (scale-*).
 *
 *   mroce-verbsfuzz --dev1 DEV --gid1 N [--dev2 DEV --gid2 N] [OPTIONS]
 *                   [CASE...]
 *
 * DEV1 and DEV2 are two mroce devices that reach each other (the guest
 * test puts them in two network namespaces); --gidN is the index of the
 * device's RoCE v2 GID to use.  Without --dev2 both sides use DEV1.
 *
 * CASE: a case name, a prefix with '*' ("ring-sq-*"), "safe" (every case
 * but the dangerous ones, the default), "danger" (the cases that make
 * today's driver corrupt kernel memory: run them last, one per process,
 * in a guest you can lose) or "all".  --list prints the cases.
 *
 * Options:
 *   --seed N         random seed (default: from the clock; printed)
 *   --seconds S      time budget of each time-bounded case (random,
 *                    destroy-race, kill, ring-sq-random*; default 10)
 *   --scale-qps N    QPs in scale-qps (default 4096)
 *   --scale-cycles N create/destroy cycles in scale-cycles (default 10000)
 *   --hang-ms MS     a verb that has not returned after MS is a hang
 *                    (default 5000)
 *   --verbose        more notes
 *
 * Output: TAP-like, one "ok N - CASE # ..." or "not ok N - CASE # why"
 * per case, its notes as "#   ..." lines before it (including every
 * kernel log line that looks like a report, read from /dev/kmsg while the
 * case ran), and at the end "# verbsfuzz: ..." totals (cases, failures,
 * verbs calls, errors, WRs posted, ring WQEs written, completions polled,
 * async events, kernel reports) and "1..N".  Each case also writes a
 * "mroce-verbsfuzz: case NAME" line into the kernel log (when /dev/kmsg
 * is writable), so a console capture shows which case crashed a kernel.
 *
 * A case fails when: a bad argument is accepted, or refused without an
 * errno; a valid call is refused; a verb does not return within
 * --hang-ms; a WR that cannot be right completes with IBV_WC_SUCCESS; a
 * completion does not come; the kernel logs a warning, BUG, oops, ...
 * while it runs.  Exit status: 0 all cases passed, 1 some failed, 2 usage,
 * 3 the watchdog gave up on a verb that never returned.
 *
 * The rings: the fuzzer reaches them through the provider's own structs
 * (tools/libmroce/mroce.h): an ibv_qp of an mroce device is the first
 * member of struct mroce_qp, which holds the mapping of its SQ and RQ
 * (uapi/rdma/mroce-abi.h describes the layout).  It takes the provider's
 * queue lock, writes a slot, publishes it with the producer index and
 * rings the doorbell (the POST_SEND / POST_RECV write() command with no
 * WRs) as the provider does.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mroce.h"	/* tools/libmroce: the provider's QP/CQ structs */

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
/* a byte the kernel writes behind our back (a receive buffer) */
#define READ_ONCE_U8(p)	__atomic_load_n((p), __ATOMIC_RELAXED)
#define U24_MASK	0xffffffu
#define PORT		1
#define NDEV		2

/* ------------------------------------------------------------------ options */

static struct {
	const char *dev[NDEV];
	int gidx[NDEV];
	uint64_t seed;
	int seconds;
	int scale_qps;
	int scale_cycles;
	int hang_ms;
	bool verbose;
} opt = {
	.gidx = { -1, -1 },
	.seconds = 10,
	.scale_qps = 4096,
	.scale_cycles = 10000,
	.hang_ms = 5000,
};

/* ------------------------------------------------------------------ basics */

static uint64_t now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000 + (uint64_t)t.tv_nsec / 1000;
}

static uint64_t now_ms(void)
{
	return now_us() / 1000;
}

static void sleep_us(long us)
{
	struct timespec t = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

static void sleep_ms(long ms)
{
	sleep_us(ms * 1000);
}

static const char *ename(int e)
{
	static __thread char b[24];
	const char *n;

	if (e < 0) {
		snprintf(b, sizeof(b), "ret %d", e);
		return b;
	}
	n = strerrorname_np(e);
	if (n)
		return n;
	snprintf(b, sizeof(b), "errno %d", e);
	return b;
}

static const char *wcs(int status)
{
	return ibv_wc_status_str((enum ibv_wc_status)status);
}

static const char *wr_op_name(int op)
{
	static const char *const n[] = { "WRITE", "WRITE_IMM", "SEND",
					 "SEND_IMM", "READ", "CMP_SWP",
					 "FETCH_ADD" };

	return op >= 0 && op < (int)ARRAY_SIZE(n) ? n[op] : "opcode?";
}

static const char *qps_name(int s)
{
	static const char *const n[] = { "RESET", "INIT", "RTR", "RTS", "SQD",
					 "SQE", "ERR" };

	return s >= 0 && s < (int)ARRAY_SIZE(n) ? n[s] : "?";
}

/* xorshift64*: the whole run follows from --seed. */
static uint64_t rng_s = 1;

static uint64_t rnd64(void)
{
	rng_s ^= rng_s >> 12;
	rng_s ^= rng_s << 25;
	rng_s ^= rng_s >> 27;
	return rng_s * 0x2545f4914f6cdd1dULL;
}

static uint32_t rnd(uint32_t n)
{
	return n ? (uint32_t)(rnd64() % n) : 0;
}

static bool chance(int pct)
{
	return (int)rnd(100) < pct;
}

/* A 32-bit value from the interesting ones, or a random one. */
static uint32_t rnd_u32_edge(void)
{
	static const uint32_t v[] = { 0, 1, 2, 3, 7, 8, 9, 15, 16, 63, 64, 255,
				      256, 257, 4095, 4096, 65535, 65536,
				      0x7fffffff, 0x80000000, 0xfffffffe,
				      0xffffffff };

	return chance(70) ? v[rnd(ARRAY_SIZE(v))] : (uint32_t)rnd64();
}

/* A 64-bit address: near 0, near 2^63, near 2^64, or random. */
static uint64_t rnd_addr_edge(void)
{
	switch (rnd(5)) {
	case 0:
		return rnd(4096);
	case 1:
		return (1ULL << 63) - rnd(4096);
	case 2:
		return 0 - (uint64_t)rnd(8192) - 1;
	case 3:
		return 0 - (uint64_t)rnd(1 << 20);
	default:
		return rnd64();
	}
}

/* ------------------------------------------------------------------ output */

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static void outv(const char *pfx, const char *fmt, va_list ap)
{
	pthread_mutex_lock(&out_lock);
	fputs(pfx, stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
}

static void outf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void outf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	outv("", fmt, ap);
	va_end(ap);
}

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	outv("#   ", fmt, ap);
	va_end(ap);
}

static void vnote(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void vnote(const char *fmt, ...)
{
	va_list ap;

	if (!opt.verbose)
		return;
	va_start(ap, fmt);
	outv("#   ", fmt, ap);
	va_end(ap);
}

/* The running case: its verdict and counters. */
struct stats {
	_Atomic uint64_t calls, errs, polls, wrs, ring, cqes, events, kreports;
};

static struct stats st, st_total;
static int case_no;		/* TAP number of the running case */

static struct {
	const char *name;
	_Atomic int fails;
	char why[320];
	void (*recover)(void);	/* watchdog: unstick a hung verb */
	_Atomic int err_hist[160];
} cs;

static void cfail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void cfail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pthread_mutex_lock(&out_lock);
	if (!cs.why[0]) {
		va_list aq;

		va_copy(aq, ap);
		vsnprintf(cs.why, sizeof(cs.why), fmt, aq);
		va_end(aq);
	}
	fputs("#   FAIL: ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
	va_end(ap);
	atomic_fetch_add(&cs.fails, 1);
}

/* A line in the kernel log (console), when /dev/kmsg is writable. */
static int kmsg_wfd = -1;

static void kmark(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void kmark(const char *fmt, ...)
{
	char b[200];
	va_list ap;
	int n;

	if (kmsg_wfd < 0)
		return;
	n = snprintf(b, sizeof(b), "<6>mroce-verbsfuzz: ");
	va_start(ap, fmt);
	n += vsnprintf(b + n, sizeof(b) - n, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(b) - 1)
		n = sizeof(b) - 1;
	if (write(kmsg_wfd, b, n) < 0)
		return;
}

/* ------------------------------------------------------ kernel log reports */

static int kmsg_fd = -1;

static const char *const trouble[] = {
	"Call Trace:", "BUG:", "WARNING:", "Oops", "general protection fault",
	"KASAN", "UBSAN:", "kernel BUG at", "soft lockup", "hung_task",
	"blocked for more than", "detected stall", "refcount_t:",
	"list_add corruption", "list_del corruption", "Kernel panic",
};

static void kmsg_open(void)
{
	kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (kmsg_fd >= 0)
		lseek(kmsg_fd, 0, SEEK_END);
	kmsg_wfd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
}

/*
 * Read what the kernel logged since the last call.  Every line that looks
 * like a report fails the case and is printed with the 30 lines after it
 * (where the WARN/BUG site and the call trace are); at most 150 lines per
 * call.  Returns the number of report lines.
 */
static int kmsg_scan(void)
{
	int hits = 0, ctx = 0, printed = 0;
	char rec[4096];

	if (kmsg_fd < 0)
		return 0;
	for (;;) {
		ssize_t n = read(kmsg_fd, rec, sizeof(rec) - 1);
		char *msg, *nl;
		bool bad = false;
		size_t i;

		if (n < 0) {
			if (errno == EPIPE)	/* overwritten: go on */
				continue;
			break;
		}
		rec[n] = 0;
		msg = strchr(rec, ';');
		msg = msg ? msg + 1 : rec;
		nl = strchr(msg, '\n');
		if (nl)
			*nl = 0;
		if (strstr(msg, "mroce-verbsfuzz: "))
			continue;
		for (i = 0; i < ARRAY_SIZE(trouble); i++)
			if (strstr(msg, trouble[i]))
				bad = true;
		if (bad) {
			if (!hits)
				cfail("kernel: %s", msg);
			hits++;
			ctx = 30;
		}
		if ((bad || ctx > 0) && printed < 150) {
			note("kernel| %s", msg);
			printed++;
		}
		if (!bad && ctx > 0)
			ctx--;
	}
	if (hits)
		atomic_fetch_add(&st.kreports, hits);
	return hits;
}

/* ------------------------------------------------------------------ watchdog */

/*
 * Every verb the fuzzer calls is bracketed by op_begin/op_end.  The
 * watchdog thread fails the case when one has not returned after
 * --hang-ms, prints the kernel stack of the thread, and calls the case's
 * recovery hook (e.g. move every QP to ERR, which drops the references a
 * hung dereg waits for).  After 4 x --hang-ms it gives up: exit 3.
 */
#define OW_SLOTS 64

struct opw {
	_Atomic uint64_t start;		/* ms, 0: no verb running */
	const char *_Atomic what;
	_Atomic pid_t tid;		/* 0: slot free */
	_Atomic int flagged;
};

static struct opw ow[OW_SLOTS];
static __thread int ow_me = -1;

static int ow_claim(void)
{
	pid_t me = gettid();
	int i;

	for (i = 0; i < OW_SLOTS; i++) {
		pid_t z = 0;

		if (atomic_compare_exchange_strong(&ow[i].tid, &z, me))
			return i;
	}
	return OW_SLOTS - 1;	/* shared, best effort */
}

static void ow_release(void)
{
	if (ow_me >= 0) {
		atomic_store(&ow[ow_me].start, 0);
		atomic_store(&ow[ow_me].tid, 0);
		ow_me = -1;
	}
}

static void op_begin(const char *what)
{
	if (ow_me < 0)
		ow_me = ow_claim();
	atomic_store(&ow[ow_me].what, what);
	atomic_store(&ow[ow_me].flagged, 0);
	atomic_store(&ow[ow_me].start, now_ms());
}

static void op_end(void)
{
	atomic_store(&ow[ow_me].start, 0);
}

static void print_kstack(pid_t tid)
{
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stack", (int)tid);
	f = fopen(path, "r");
	if (!f) {
		note("  (no kernel stack of thread %d: %s)", (int)tid,
		     strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		note("  stack| %s", line);
	}
	fclose(f);
}

static _Atomic bool wd_stop;

static void *watchdog_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&wd_stop)) {
		uint64_t t = now_ms();
		int i;

		sleep_ms(100);
		for (i = 0; i < OW_SLOTS; i++) {
			uint64_t s = atomic_load(&ow[i].start);
			const char *what = atomic_load(&ow[i].what);
			pid_t tid = atomic_load(&ow[i].tid);

			if (!s || t < s)
				continue;
			if (t - s >= (uint64_t)opt.hang_ms &&
			    atomic_load(&ow[i].flagged) == 0) {
				atomic_store(&ow[i].flagged, 1);
				cfail("hang: %s has not returned after %d ms",
				      what, opt.hang_ms);
				print_kstack(tid);
				if (cs.recover) {
					note("watchdog: trying to unstick it (%s)",
					     "every QP of the case to ERR");
					cs.recover();
				}
			} else if (t - s >= 4ULL * opt.hang_ms &&
				   atomic_load(&ow[i].flagged) == 1) {
				atomic_store(&ow[i].flagged, 2);
				note("watchdog: %s still stuck after %d ms",
				     what, 4 * opt.hang_ms);
				print_kstack(tid);
				kmsg_scan();
				outf("not ok %d - %s # hang: %s never returned",
				     case_no, cs.name ? cs.name : "?", what);
				outf("# verbsfuzz: giving up (a verb never returned)");
				_exit(3);
			}
		}
	}
	return NULL;
}

/* Counting and watching verbs calls. */
static void cnt_err(int e)
{
	atomic_fetch_add(&st.errs, 1);
	if (e > 0 && e < (int)ARRAY_SIZE(cs.err_hist))
		atomic_fetch_add(&cs.err_hist[e], 1);
}

static int cnt_ret(int r)
{
	atomic_fetch_add(&st.calls, 1);
	if (r)
		cnt_err(r);
	return r;
}

/* A verb that returns NULL on failure: errno must say why. */
static void cnt_ptr(const char *what, bool ok, int e)
{
	atomic_fetch_add(&st.calls, 1);
	if (ok)
		return;
	cnt_err(e);
	if (!e)
		cfail("%s failed without an errno", what);
}

/* int-returning verb (0 or a positive errno) */
#define VCALL(what, expr) ({					\
	int _r;							\
	op_begin(what);						\
	_r = (expr);						\
	op_end();						\
	cnt_ret(_r);						\
})

/* pointer-returning verb (NULL and errno on failure) */
#define VPTR(what, expr) ({					\
	__typeof__(expr) _p;					\
	int _e;							\
	op_begin(what);						\
	errno = 0;						\
	_p = (expr);						\
	_e = errno;						\
	op_end();						\
	cnt_ptr(what, !!_p, _e);				\
	errno = _e;						\
	_p;							\
})

/* ------------------------------------------------------------- devices */

struct fdev {
	const char *name;
	struct ibv_context *ctx;
	struct ibv_device_attr attr;
	struct ibv_port_attr port;
	union ibv_gid gid;
	int gidx;
	pthread_t async_thr;
};

static struct fdev devs[NDEV];

/* Async events, all devices: a ring of the most recent ones. */
#define EV_RING 512

struct evrec {
	int type;
	const void *obj;	/* the CQ or QP, if any */
};

static struct evrec evs[EV_RING];
static _Atomic unsigned int evs_n;
static _Atomic bool async_stop;

static void *async_main(void *arg)
{
	struct fdev *d = arg;
	int fl = fcntl(d->ctx->async_fd, F_GETFL);

	fcntl(d->ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
	while (!atomic_load(&async_stop)) {
		struct pollfd p = { .fd = d->ctx->async_fd, .events = POLLIN };
		struct ibv_async_event ev;
		unsigned int n;

		if (poll(&p, 1, 100) <= 0)
			continue;
		if (ibv_get_async_event(d->ctx, &ev))
			continue;
		n = atomic_load(&evs_n);
		evs[n % EV_RING].type = ev.event_type;
		switch (ev.event_type) {
		case IBV_EVENT_CQ_ERR:
			evs[n % EV_RING].obj = ev.element.cq;
			break;
		case IBV_EVENT_QP_FATAL:
		case IBV_EVENT_QP_REQ_ERR:
		case IBV_EVENT_QP_ACCESS_ERR:
		case IBV_EVENT_COMM_EST:
		case IBV_EVENT_SQ_DRAINED:
		case IBV_EVENT_PATH_MIG:
		case IBV_EVENT_PATH_MIG_ERR:
		case IBV_EVENT_QP_LAST_WQE_REACHED:
			evs[n % EV_RING].obj = ev.element.qp;
			break;
		default:
			evs[n % EV_RING].obj = NULL;
			break;
		}
		atomic_store(&evs_n, n + 1);
		atomic_fetch_add(&st.events, 1);
		vnote("async event on %s: %s", d->name,
		      ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
	}
	return NULL;
}

/* Has event @type on @obj (NULL: any) arrived since serial @since? */
static bool ev_seen(unsigned int since, int type, const void *obj)
{
	unsigned int n = atomic_load(&evs_n), i;

	if (n - since > EV_RING)
		since = n - EV_RING;
	for (i = since; i != n; i++)
		if (evs[i % EV_RING].type == type &&
		    (!obj || evs[i % EV_RING].obj == obj))
			return true;
	return false;
}

static void ev_list(unsigned int since, const char *what)
{
	unsigned int n = atomic_load(&evs_n), i;
	char b[400];
	int len = 0;

	b[0] = 0;
	if (n - since > EV_RING)
		since = n - EV_RING;
	for (i = since; i != n && len < (int)sizeof(b) - 40; i++)
		len += snprintf(b + len, sizeof(b) - len, "%s%s",
				len ? ", " : "",
				ibv_event_type_str(evs[i % EV_RING].type));
	note("%s: async events: %s", what, len ? b : "none");
}

static int dev_open(struct fdev *d, const char *name, int gidx)
{
	struct ibv_device **list;
	int n, i, err;

	d->name = name;
	d->gidx = gidx;
	list = ibv_get_device_list(&n);
	if (!list) {
		outf("# no RDMA devices: %s", strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			break;
	if (i == n) {
		outf("# device %s not found", name);
		ibv_free_device_list(list);
		return -1;
	}
	d->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!d->ctx) {
		outf("# ibv_open_device %s: %s", name, strerror(errno));
		return -1;
	}
	err = ibv_query_device(d->ctx, &d->attr);
	if (!err)
		err = ibv_query_port(d->ctx, PORT, &d->port);
	if (!err && ibv_query_gid(d->ctx, PORT, gidx, &d->gid))
		err = errno ? errno : EINVAL;
	if (err) {
		outf("# query %s: %s", name, strerror(err));
		return -1;
	}
	pthread_create(&d->async_thr, NULL, async_main, d);
	return 0;
}

/* The device other than @d (the peer side of a pair). */
static struct fdev *peer_dev(struct fdev *d)
{
	return d == &devs[0] ? &devs[1] : &devs[0];
}

/* ------------------------------------------------------- QP pairs */

struct qpcfg {
	uint32_t send_wr, recv_wr, send_sge, recv_sge, max_inline;
	int scqe, rcqe;
	uint8_t timeout, retry, rnr, min_rnr;
	enum ibv_mtu mtu;
	int mr_access;
	int qp_access;
};

#define ACC_ALL	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |	\
		 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

static const struct qpcfg cfg_def = {
	.send_wr = 64, .recv_wr = 64, .send_sge = 2, .recv_sge = 2,
	.max_inline = 64, .scqe = 256, .rcqe = 256,
	.timeout = 14, .retry = 7, .rnr = 3, .min_rnr = 1,
	.mtu = IBV_MTU_1024, .mr_access = ACC_ALL, .qp_access = ACC_ALL,
};

struct side {
	struct fdev *d;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t len;
	uint32_t psn;
	struct qpcfg cfg;
};

static void *buf_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static struct ibv_qp *qp_create(struct side *s)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = s->scq,
		.recv_cq = s->rcq,
		.cap = {
			.max_send_wr = s->cfg.send_wr,
			.max_recv_wr = s->cfg.recv_wr,
			.max_send_sge = s->cfg.send_sge,
			.max_recv_sge = s->cfg.recv_sge,
			.max_inline_data = s->cfg.max_inline,
		},
		.qp_type = IBV_QPT_RC,
	};

	return VPTR("ibv_create_qp", ibv_create_qp(s->pd, &ia));
}

/* PD, buffer + MR of @len, send and receive CQ, one RC QP (in RESET). */
static int side_init(struct side *s, struct fdev *d, size_t len,
		     const struct qpcfg *c)
{
	memset(s, 0, sizeof(*s));
	s->d = d;
	s->cfg = *c;
	s->len = len;
	s->pd = VPTR("ibv_alloc_pd", ibv_alloc_pd(d->ctx));
	if (!s->pd)
		goto fail;
	s->buf = buf_alloc(len);
	if (!s->buf)
		goto fail;
	s->mr = VPTR("ibv_reg_mr", ibv_reg_mr(s->pd, s->buf, len,
					      c->mr_access));
	if (!s->mr)
		goto fail;
	s->scq = VPTR("ibv_create_cq", ibv_create_cq(d->ctx, c->scqe, NULL,
						     NULL, 0));
	s->rcq = VPTR("ibv_create_cq", ibv_create_cq(d->ctx, c->rcqe, NULL,
						     NULL, 0));
	if (!s->scq || !s->rcq)
		goto fail;
	s->qp = qp_create(s);
	if (!s->qp)
		goto fail;
	return 0;
fail:
	cfail("setting up a QP on %s: %s", d->name, strerror(errno));
	return -1;
}

/* Destroy what is left of @s; every destroy must succeed. */
static void side_fini(struct side *s)
{
	int err;

	if (s->qp) {
		err = VCALL("ibv_destroy_qp", ibv_destroy_qp(s->qp));
		if (err)
			cfail("ibv_destroy_qp: %s", ename(err));
		s->qp = NULL;
	}
	if (s->mr) {
		err = VCALL("ibv_dereg_mr", ibv_dereg_mr(s->mr));
		if (err)
			cfail("ibv_dereg_mr: %s", ename(err));
		s->mr = NULL;
	}
	if (s->scq) {
		err = VCALL("ibv_destroy_cq", ibv_destroy_cq(s->scq));
		if (err)
			cfail("ibv_destroy_cq: %s", ename(err));
		s->scq = NULL;
	}
	if (s->rcq) {
		err = VCALL("ibv_destroy_cq", ibv_destroy_cq(s->rcq));
		if (err)
			cfail("ibv_destroy_cq: %s", ename(err));
		s->rcq = NULL;
	}
	if (s->pd) {
		err = VCALL("ibv_dealloc_pd", ibv_dealloc_pd(s->pd));
		if (err)
			cfail("ibv_dealloc_pd: %s", ename(err));
		s->pd = NULL;
	}
	if (s->buf)
		munmap(s->buf, s->len);
	s->buf = NULL;
}

static int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	if (VCALL("ibv_query_qp", ibv_query_qp(qp, &a, IBV_QP_STATE, &ia)))
		return -1;
	return a.qp_state;
}

static int qp_modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
	return VCALL("ibv_modify_qp", ibv_modify_qp(qp, a, mask));
}

static int qp_to(struct ibv_qp *qp, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = { .qp_state = s };

	return qp_modify(qp, &a, IBV_QP_STATE);
}

static int qp_init(struct side *s)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = PORT,
		.qp_access_flags = s->cfg.qp_access,
	};

	return qp_modify(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			 IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

static void ah_to(struct ibv_ah_attr *ah, const struct side *s,
		  const struct fdev *peer)
{
	memset(ah, 0, sizeof(*ah));
	ah->is_global = 1;
	ah->port_num = PORT;
	ah->grh.dgid = peer->gid;
	ah->grh.sgid_index = (uint8_t)s->d->gidx;
	ah->grh.hop_limit = 64;
}

static int qp_rtr(struct side *s, const struct side *peer)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = s->cfg.mtu,
		.dest_qp_num = peer->qp->qp_num,
		.rq_psn = peer->psn,
		.max_dest_rd_atomic = 16,
		.min_rnr_timer = s->cfg.min_rnr,
	};

	ah_to(&a.ah_attr, s, peer->d);
	return qp_modify(s->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			 IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
}

static int qp_rts(struct side *s)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS,
		.sq_psn = s->psn,
		.timeout = s->cfg.timeout,
		.retry_cnt = s->cfg.retry,
		.rnr_retry = s->cfg.rnr,
		.max_rd_atomic = 16,
	};

	return qp_modify(s->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			 IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			 IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* Both QPs RESET -> INIT -> RTR -> RTS, connected, with new PSNs. */
static int pair_up(struct side *a, struct side *b)
{
	int err;

	a->psn = rnd(U24_MASK + 1);
	b->psn = rnd(U24_MASK + 1);
	err = qp_to(a->qp, IBV_QPS_RESET);
	err = err ?: qp_to(b->qp, IBV_QPS_RESET);
	err = err ?: qp_init(a);
	err = err ?: qp_init(b);
	err = err ?: qp_rtr(a, b);
	err = err ?: qp_rtr(b, a);
	err = err ?: qp_rts(a);
	err = err ?: qp_rts(b);
	if (err)
		cfail("connecting QP %u (%s) and QP %u (%s): %s",
		      a->qp->qp_num, a->d->name, b->qp->qp_num, b->d->name,
		      ename(err));
	return err;
}

/* Two sides (dev1 and dev2) with @c, connected. */
static int pair_init(struct side *a, struct side *b, size_t len,
		     const struct qpcfg *c)
{
	if (side_init(a, &devs[0], len, c) || side_init(b, &devs[1], len, c))
		return -1;
	return pair_up(a, b);
}

static void pair_fini(struct side *a, struct side *b)
{
	side_fini(a);
	side_fini(b);
}

/* ------------------------------------------------------- posting, polling */

static int post_wr(struct ibv_qp *qp, int opcode, uint64_t wr_id,
		   uint64_t laddr, uint32_t len, uint32_t lkey, uint64_t raddr,
		   uint32_t rkey, unsigned int flags)
{
	struct ibv_sge sge = { .addr = laddr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = (enum ibv_wr_opcode)opcode,
		.send_flags = flags,
	}, *bad;
	int err;

	if (opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	    opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
		wr.wr.atomic.swap = 2;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	if (opcode == IBV_WR_SEND_WITH_IMM ||
	    opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
		wr.imm_data = htobe32(0x1234);
	err = VCALL("ibv_post_send", ibv_post_send(qp, &wr, &bad));
	if (!err)
		atomic_fetch_add(&st.wrs, 1);
	return err;
}

static int post_recv(struct ibv_qp *qp, uint64_t wr_id, uint64_t addr,
		     uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { .addr = addr, .length = len, .lkey = lkey };
	struct ibv_recv_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
	}, *bad;
	int err;

	err = VCALL("ibv_post_recv", ibv_post_recv(qp, &wr, &bad));
	if (!err)
		atomic_fetch_add(&st.wrs, 1);
	return err;
}

static int cq_poll(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	int got;

	op_begin("ibv_poll_cq");
	got = ibv_poll_cq(cq, n, wc);
	op_end();
	atomic_fetch_add(&st.polls, 1);
	if (got < 0) {
		cnt_err(-got);
		return got;
	}
	atomic_fetch_add(&st.cqes, got);
	return got;
}

/*
 * Poll @cq for up to @ms for the completion of @wr_id: 1 found (in *out),
 * 0 timed out, -1 poll error.  Completions of other WRs are counted in
 * *others (may be NULL); if @keep is set they are copied there too (up to
 * @nkeep).
 */
static int wait_wr(struct ibv_cq *cq, uint64_t wr_id, int ms,
		   struct ibv_wc *out, int *others)
{
	uint64_t end = now_ms() + ms;

	do {
		struct ibv_wc wc[16];
		int n = cq_poll(cq, 16, wc), i, hit = -1;

		if (n < 0)
			return -1;
		for (i = 0; i < n; i++) {
			if (wc[i].wr_id == wr_id && hit < 0)
				hit = i;
			else if (others)
				(*others)++;
		}
		if (hit >= 0) {
			*out = wc[hit];
			return 1;
		}
		if (!n)
			sleep_us(200);
	} while (now_ms() < end);
	return 0;
}

/* Poll @cq for @ms (or until @want completions); returns the count. */
static int drain_cq(struct ibv_cq *cq, int ms, int want)
{
	uint64_t end = now_ms() + ms;
	int total = 0;

	do {
		struct ibv_wc wc[32];
		int n = cq_poll(cq, 32, wc);

		if (n < 0)
			break;
		total += n;
		if (want && total >= want)
			break;
		if (!n)
			sleep_us(500);
	} while (now_ms() < end);
	return total;
}

/* ------------------------------------------------------- rings */

static struct mroce_qp *mqp(struct ibv_qp *qp)
{
	return to_mqp(qp);
}

/*
 * Write @len bytes (the rest of the slot zero) into the next slot of the
 * work queue and publish it, as the provider does, with nothing checked.
 */
static int ring_put(struct mroce_wq *wq, const void *w, size_t len)
{
	struct mroce_ring *r = &wq->ring;
	uint32_t prod, cons;
	uint8_t *slot;

	if (!r->map)
		return EINVAL;
	pthread_spin_lock(&wq->lock);
	prod = mroce_load_relaxed(&r->hdr->prod);
	cons = mroce_load_acquire(&r->hdr->cons);
	if (prod - cons >= r->num_slots) {
		pthread_spin_unlock(&wq->lock);
		return ENOMEM;
	}
	slot = mroce_ring_slot(r, prod);
	memset(slot, 0, r->stride);
	memcpy(slot, w, len < r->stride ? len : r->stride);
	mroce_store_release(&r->hdr->prod, prod + 1);
	pthread_spin_unlock(&wq->lock);
	atomic_fetch_add(&st.ring, 1);
	return 0;
}

/* The doorbells: the legacy write() commands with no WRs. */
static int doorbell(struct ibv_qp *qp, bool sq)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		union {
			struct ib_uverbs_post_send s;
			struct ib_uverbs_post_recv r;
		};
	} cmd;
	struct ib_uverbs_post_send_resp resp;
	size_t len;
	ssize_t n;

	memset(&cmd, 0, sizeof(cmd));
	if (sq) {
		len = sizeof(cmd.hdr) + sizeof(cmd.s);
		cmd.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
		cmd.s.response = (uintptr_t)&resp;
		cmd.s.qp_handle = qp->handle;
		cmd.s.wqe_size = sizeof(struct ib_uverbs_send_wr);
	} else {
		len = sizeof(cmd.hdr) + sizeof(cmd.r);
		cmd.hdr.command = IB_USER_VERBS_CMD_POST_RECV;
		cmd.r.response = (uintptr_t)&resp;
		cmd.r.qp_handle = qp->handle;
		cmd.r.wqe_size = sizeof(struct ib_uverbs_recv_wr);
	}
	cmd.hdr.in_words = len / 4;
	cmd.hdr.out_words = sizeof(resp) / 4;
	op_begin(sq ? "SQ doorbell" : "RQ doorbell");
	n = write(qp->context->cmd_fd, &cmd, len);
	op_end();
	return cnt_ret(n < 0 ? errno : (size_t)n == len ? 0 : EIO);
}

/* A send WQE and its SGEs as they sit in a slot. */
struct raw_swqe {
	struct mroce_send_wqe h;
	union {
		struct mroce_sge sge[16];
		uint8_t inl[256];
	};
};

struct raw_rwqe {
	struct mroce_recv_wqe h;
	struct mroce_sge sge[16];
};

static _Atomic uint64_t serial = 1;

static uint64_t next_id(void)
{
	return atomic_fetch_add(&serial, 1);
}

/* ============================================================= cases */

/* ---- bad-args: every bad argument gets an errno */

static int nbad_ok;

static void bad_int(const char *desc, int r)
{
	if (r > 0) {
		nbad_ok++;
		vnote("refused: %s: %s", desc, ename(r));
	} else if (r < 0) {
		nbad_ok++;
		vnote("refused: %s (returned %d, errno %s)", desc, r,
		      ename(errno));
	} else {
		cfail("accepted: %s", desc);
	}
}

/* @p: what the verb returned; @destroy undoes an accepted call */
#define BAD_PTR(desc, expr, destroy) do {				\
	__typeof__(expr) _o = VPTR(desc, expr);				\
	if (_o) {							\
		cfail("accepted: %s", desc);				\
		destroy(_o);						\
	} else {							\
		nbad_ok++;						\
		vnote("refused: %s: %s", desc, ename(errno));		\
	}								\
} while (0)

static int post_bad(struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad = NULL;
	int err = VCALL("ibv_post_send", ibv_post_send(qp, wr, &bad));

	if (err && bad != wr) {
		cfail("ibv_post_send refused a WR (%s) but *bad_wr does not point at it",
		      ename(err));
	}
	return err;
}

static int recv_bad(struct ibv_qp *qp, struct ibv_recv_wr *wr)
{
	struct ibv_recv_wr *bad = NULL;

	return VCALL("ibv_post_recv", ibv_post_recv(qp, wr, &bad));
}

static void destroy_cq_v(struct ibv_cq *cq)
{
	ibv_destroy_cq(cq);
}

static void destroy_qp_v(struct ibv_qp *qp)
{
	ibv_destroy_qp(qp);
}

static void dereg_mr_v(struct ibv_mr *mr)
{
	ibv_dereg_mr(mr);
}

static void destroy_ah_v(struct ibv_ah *ah)
{
	ibv_destroy_ah(ah);
}

static void destroy_srq_v(struct ibv_srq *srq)
{
	ibv_destroy_srq(srq);
}

static void dealloc_mw_v(struct ibv_mw *mw)
{
	ibv_dealloc_mw(mw);
}

static void case_bad_args(int arg)
{
	struct fdev *d = &devs[0];
	struct ibv_context *ctx = d->ctx;
	struct ibv_device_attr *da = &d->attr;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	struct ibv_send_wr wr;
	struct ibv_recv_wr rwr;
	struct ibv_sge sge[16];
	struct ibv_ah_attr ah;
	struct ibv_port_attr pa;
	union ibv_gid gid;
	struct side s = { 0 }, p = { 0 };
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	uint8_t *hole;
	int i, base_mask;

	(void)arg;
	nbad_ok = 0;
	if (side_init(&s, d, 1 << 16, &cfg_def) ||
	    side_init(&p, peer_dev(d), 1 << 16, &cfg_def))
		goto out;

	/* CQs */
	BAD_PTR("ibv_create_cq cqe -1", ibv_create_cq(ctx, -1, NULL, NULL, 0),
		destroy_cq_v);
	BAD_PTR("ibv_create_cq cqe 0", ibv_create_cq(ctx, 0, NULL, NULL, 0),
		destroy_cq_v);
	BAD_PTR("ibv_create_cq cqe max_cqe + 1",
		ibv_create_cq(ctx, da->max_cqe + 1, NULL, NULL, 0),
		destroy_cq_v);
	BAD_PTR("ibv_create_cq cqe INT_MAX",
		ibv_create_cq(ctx, INT_MAX, NULL, NULL, 0), destroy_cq_v);
	BAD_PTR("ibv_create_cq comp_vector num_comp_vectors",
		ibv_create_cq(ctx, 16, NULL, NULL, ctx->num_comp_vectors),
		destroy_cq_v);
	BAD_PTR("ibv_create_cq comp_vector -1",
		ibv_create_cq(ctx, 16, NULL, NULL, -1), destroy_cq_v);
	bad_int("ibv_resize_cq -1", VCALL("ibv_resize_cq",
					  ibv_resize_cq(s.scq, -1)));
	bad_int("ibv_resize_cq max_cqe + 1",
		VCALL("ibv_resize_cq", ibv_resize_cq(s.scq, da->max_cqe + 1)));

	/* QPs */
#define QP_ATTR_RESET() do {						\
	memset(&ia, 0, sizeof(ia));					\
	ia.send_cq = s.scq;						\
	ia.recv_cq = s.rcq;						\
	ia.qp_type = IBV_QPT_RC;					\
	ia.cap.max_send_wr = 16;					\
	ia.cap.max_recv_wr = 16;					\
	ia.cap.max_send_sge = 1;					\
	ia.cap.max_recv_sge = 1;					\
} while (0)
	QP_ATTR_RESET();
	ia.cap.max_send_wr = da->max_qp_wr + 1;
	BAD_PTR("ibv_create_qp max_send_wr max_qp_wr + 1",
		ibv_create_qp(s.pd, &ia), destroy_qp_v);
	QP_ATTR_RESET();
	ia.cap.max_send_wr = UINT32_MAX;
	BAD_PTR("ibv_create_qp max_send_wr 2^32 - 1",
		ibv_create_qp(s.pd, &ia), destroy_qp_v);
	QP_ATTR_RESET();
	ia.cap.max_recv_wr = da->max_qp_wr + 1;
	BAD_PTR("ibv_create_qp max_recv_wr max_qp_wr + 1",
		ibv_create_qp(s.pd, &ia), destroy_qp_v);
	QP_ATTR_RESET();
	ia.cap.max_send_sge = da->max_sge + 1;
	BAD_PTR("ibv_create_qp max_send_sge max_sge + 1",
		ibv_create_qp(s.pd, &ia), destroy_qp_v);
	QP_ATTR_RESET();
	ia.cap.max_recv_sge = da->max_sge + 1;
	BAD_PTR("ibv_create_qp max_recv_sge max_sge + 1",
		ibv_create_qp(s.pd, &ia), destroy_qp_v);
	QP_ATTR_RESET();
	ia.cap.max_inline_data = 1 << 20;
	BAD_PTR("ibv_create_qp max_inline_data 1 MiB",
		ibv_create_qp(s.pd, &ia), destroy_qp_v);
	QP_ATTR_RESET();
	ia.qp_type = IBV_QPT_UC;
	BAD_PTR("ibv_create_qp UC (not offered)", ibv_create_qp(s.pd, &ia),
		destroy_qp_v);
	QP_ATTR_RESET();
	ia.qp_type = IBV_QPT_UD;
	ia.cap.max_send_sge = da->max_sge + 1;
	BAD_PTR("ibv_create_qp UD max_send_sge max_sge + 1",
		ibv_create_qp(s.pd, &ia), destroy_qp_v);
	QP_ATTR_RESET();
	ia.qp_type = (enum ibv_qp_type)99;
	BAD_PTR("ibv_create_qp qp_type 99", ibv_create_qp(s.pd, &ia),
		destroy_qp_v);
	sa.attr.max_wr = 0;
	BAD_PTR("ibv_create_srq max_wr 0", ibv_create_srq(s.pd, &sa),
		destroy_srq_v);
	sa.attr.max_wr = da->max_srq_wr + 1;
	BAD_PTR("ibv_create_srq max_wr max_srq_wr + 1",
		ibv_create_srq(s.pd, &sa), destroy_srq_v);
	sa.attr.max_wr = 16;
	sa.attr.max_sge = da->max_srq_sge + 1;
	BAD_PTR("ibv_create_srq max_sge max_srq_sge + 1",
		ibv_create_srq(s.pd, &sa), destroy_srq_v);
	sa.attr.max_sge = 1;
	sa.attr.srq_limit = 17;
	BAD_PTR("ibv_create_srq srq_limit above max_wr",
		ibv_create_srq(s.pd, &sa), destroy_srq_v);
	BAD_PTR("ibv_alloc_mw type 3", ibv_alloc_mw(s.pd, (enum ibv_mw_type)3),
		dealloc_mw_v);
	BAD_PTR("ibv_alloc_mw type 0", ibv_alloc_mw(s.pd, (enum ibv_mw_type)0),
		dealloc_mw_v);

	/* MRs */
	BAD_PTR("ibv_reg_mr NULL, 4096", ibv_reg_mr(s.pd, NULL, 4096,
						    IBV_ACCESS_LOCAL_WRITE),
		dereg_mr_v);
	hole = buf_alloc(1 << 20);
	if (hole) {
		munmap(hole + 4096, (1 << 20) - 4096);
		BAD_PTR("ibv_reg_mr of an unmapped range",
			ibv_reg_mr(s.pd, hole + 65536, 8192,
				   IBV_ACCESS_LOCAL_WRITE), dereg_mr_v);
		BAD_PTR("ibv_reg_mr running past the end of a mapping",
			ibv_reg_mr(s.pd, hole, 1 << 20,
				   IBV_ACCESS_LOCAL_WRITE), dereg_mr_v);
		munmap(hole, 4096);
	}
	BAD_PTR("ibv_reg_mr address + length wrapping 2^64",
		ibv_reg_mr(s.pd, (void *)(uintptr_t)(0 - 4096ULL), 8192,
			   IBV_ACCESS_LOCAL_WRITE), dereg_mr_v);
	BAD_PTR("ibv_reg_mr REMOTE_WRITE without LOCAL_WRITE",
		ibv_reg_mr(s.pd, s.buf, 4096, IBV_ACCESS_REMOTE_WRITE),
		dereg_mr_v);
	BAD_PTR("ibv_reg_mr REMOTE_ATOMIC without LOCAL_WRITE",
		ibv_reg_mr(s.pd, s.buf, 4096, IBV_ACCESS_REMOTE_ATOMIC),
		dereg_mr_v);
	BAD_PTR("ibv_reg_mr ON_DEMAND (no ODP)",
		ibv_reg_mr(s.pd, s.buf, 4096, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_ON_DEMAND), dereg_mr_v);
	BAD_PTR("ibv_reg_mr unknown access bit 1 << 10",
		ibv_reg_mr(s.pd, s.buf, 4096, IBV_ACCESS_LOCAL_WRITE | (1 << 10)),
		dereg_mr_v);

	/* objects in use */
	bad_int("ibv_dealloc_pd of a PD with an MR and a QP",
		VCALL("ibv_dealloc_pd", ibv_dealloc_pd(s.pd)));
	bad_int("ibv_destroy_cq of a CQ a QP uses",
		VCALL("ibv_destroy_cq", ibv_destroy_cq(s.scq)));

	/* modify_qp from RESET */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	bad_int("ibv_modify_qp RESET -> RTS",
		qp_modify(s.qp, &a, IBV_QP_STATE));
	a.qp_state = IBV_QPS_RTR;
	bad_int("ibv_modify_qp RESET -> RTR",
		qp_modify(s.qp, &a, IBV_QP_STATE));
	a.qp_state = (enum ibv_qp_state)7;
	bad_int("ibv_modify_qp to state 7",
		qp_modify(s.qp, &a, IBV_QP_STATE));
	a.qp_state = IBV_QPS_INIT;
	a.cur_qp_state = (enum ibv_qp_state)9;
	bad_int("ibv_modify_qp with cur_qp_state 9",
		qp_modify(s.qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE));
	base_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		    IBV_QP_ACCESS_FLAGS;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 0;
	bad_int("ibv_modify_qp INIT port 0", qp_modify(s.qp, &a, base_mask));
	a.port_num = 2;
	bad_int("ibv_modify_qp INIT port 2", qp_modify(s.qp, &a, base_mask));
	a.port_num = PORT;
	a.pkey_index = 5;
	bad_int("ibv_modify_qp INIT pkey_index 5 (table of 1)",
		qp_modify(s.qp, &a, base_mask));
	a.pkey_index = 0;
	bad_int("ibv_modify_qp with unknown attr_mask bit 1 << 30",
		qp_modify(s.qp, &a, base_mask | (1 << 30)));
	qp_to(s.qp, IBV_QPS_RESET);	/* in case one of them was accepted */
	bad_int("ibv_modify_qp INIT without the port",
		qp_modify(s.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_ACCESS_FLAGS));

	/* a valid INIT, then bad RTRs */
	s.psn = 1;
	p.psn = 2;
	if (qp_init(&s) || qp_init(&p) || qp_rtr(&p, &s)) {
		cfail("a valid INIT / RTR was refused");
		goto out;
	}
	base_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
#define RTR_ATTR_RESET() do {						\
	memset(&a, 0, sizeof(a));					\
	a.qp_state = IBV_QPS_RTR;					\
	a.path_mtu = IBV_MTU_1024;					\
	a.dest_qp_num = p.qp->qp_num;					\
	a.rq_psn = 2;							\
	a.max_dest_rd_atomic = 1;					\
	a.min_rnr_timer = 1;						\
	ah_to(&a.ah_attr, &s, p.d);					\
} while (0)
	RTR_ATTR_RESET();
	a.path_mtu = (enum ibv_mtu)0;
	bad_int("ibv_modify_qp RTR path_mtu 0", qp_modify(s.qp, &a, base_mask));
	a.path_mtu = (enum ibv_mtu)6;
	bad_int("ibv_modify_qp RTR path_mtu 6", qp_modify(s.qp, &a, base_mask));
	RTR_ATTR_RESET();
	a.dest_qp_num = 1 << 24;
	bad_int("ibv_modify_qp RTR dest_qp_num 2^24",
		qp_modify(s.qp, &a, base_mask));
	a.dest_qp_num = 0;
	bad_int("ibv_modify_qp RTR dest_qp_num 0",
		qp_modify(s.qp, &a, base_mask));
	RTR_ATTR_RESET();
	bad_int("ibv_modify_qp RTR without the address vector",
		qp_modify(s.qp, &a, base_mask & ~IBV_QP_AV));
	a.ah_attr.grh.sgid_index = 250;
	a.ah_attr.port_num = PORT;
	bad_int("ibv_modify_qp RTR sgid_index 250 (no such GID)",
		qp_modify(s.qp, &a, base_mask));
	RTR_ATTR_RESET();
	a.ah_attr.is_global = 0;
	bad_int("ibv_modify_qp RTR without a GRH",
		qp_modify(s.qp, &a, base_mask));
	RTR_ATTR_RESET();
	a.ah_attr.port_num = 2;
	bad_int("ibv_modify_qp RTR AV port 2", qp_modify(s.qp, &a, base_mask));
	RTR_ATTR_RESET();
	a.max_dest_rd_atomic = 255;
	bad_int("ibv_modify_qp RTR max_dest_rd_atomic 255",
		qp_modify(s.qp, &a, base_mask));
	RTR_ATTR_RESET();
	memset(a.ah_attr.grh.dgid.raw, 0, 16);
	a.ah_attr.grh.dgid.raw[0] = 0x20;	/* 2001:db8::99, an IPv4 sgid */
	a.ah_attr.grh.dgid.raw[1] = 0x01;
	a.ah_attr.grh.dgid.raw[2] = 0x0d;
	a.ah_attr.grh.dgid.raw[3] = 0xb8;
	a.ah_attr.grh.dgid.raw[15] = 0x99;
	bad_int("ibv_modify_qp RTR IPv6 destination from an IPv4 GID",
		qp_modify(s.qp, &a, base_mask));
	memset(&wr, 0, sizeof(wr));
	memset(sge, 0, sizeof(sge));
	sge[0].addr = (uintptr_t)s.buf;
	sge[0].length = 64;
	sge[0].lkey = s.mr->lkey;
	wr.sg_list = sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	bad_int("ibv_post_send on a QP in INIT", post_bad(s.qp, &wr));

	if (qp_rtr(&s, &p)) {
		cfail("a valid RTR was refused");
		goto out;
	}
	bad_int("ibv_post_send on a QP in RTR", post_bad(s.qp, &wr));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 1;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 255;
	base_mask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
		    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	bad_int("ibv_modify_qp RTS max_rd_atomic 255",
		qp_modify(s.qp, &a, base_mask));
	a.max_rd_atomic = 1;
	bad_int("ibv_modify_qp RTS without sq_psn",
		qp_modify(s.qp, &a, base_mask & ~IBV_QP_SQ_PSN));
	if (qp_rts(&s)) {
		cfail("a valid RTS was refused");
		goto out;
	}

	/* posting */
	wr.num_sge = s.cfg.send_sge + 1;
	for (i = 0; i < 16; i++)
		sge[i] = sge[0];
	bad_int("ibv_post_send num_sge max_send_sge + 1", post_bad(s.qp, &wr));
	wr.num_sge = -1;
	bad_int("ibv_post_send num_sge -1", post_bad(s.qp, &wr));
	wr.num_sge = 1;
	wr.opcode = (enum ibv_wr_opcode)99;
	bad_int("ibv_post_send opcode 99", post_bad(s.qp, &wr));
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = 1 << 20;
	bad_int("ibv_post_send send_flags 1 << 20", post_bad(s.qp, &wr));
	wr.send_flags = IBV_SEND_INLINE;
	sge[0].length = s.cfg.max_inline + 1;
	{
		struct ibv_qp_init_attr qia;
		struct ibv_qp_attr qa;

		if (!ibv_query_qp(s.qp, &qa, IBV_QP_CAP, &qia))
			sge[0].length = qa.cap.max_inline_data + 1;
	}
	bad_int("ibv_post_send inline max_inline_data + 1",
		post_bad(s.qp, &wr));
	sge[0].length = 8;
	wr.opcode = IBV_WR_RDMA_READ;
	bad_int("ibv_post_send RDMA_READ inline", post_bad(s.qp, &wr));
	wr.send_flags = 0;
	memset(&rwr, 0, sizeof(rwr));
	rwr.sg_list = sge;
	rwr.num_sge = s.cfg.recv_sge + 1;
	bad_int("ibv_post_recv num_sge max_recv_sge + 1",
		recv_bad(s.qp, &rwr));
	rwr.num_sge = -1;
	bad_int("ibv_post_recv num_sge -1", recv_bad(s.qp, &rwr));
	rwr.num_sge = 1;
	if (qp_to(p.qp, IBV_QPS_RESET)) {
		cfail("modify to RESET refused");
		goto out;
	}
	bad_int("ibv_post_recv on a QP in RESET", recv_bad(p.qp, &rwr));

	/* address handles */
	ah_to(&ah, &s, p.d);
	ah.port_num = 2;
	BAD_PTR("ibv_create_ah port 2", ibv_create_ah(s.pd, &ah), destroy_ah_v);
	ah_to(&ah, &s, p.d);
	ah.grh.sgid_index = 250;
	BAD_PTR("ibv_create_ah sgid_index 250", ibv_create_ah(s.pd, &ah),
		destroy_ah_v);
	ah_to(&ah, &s, p.d);
	ah.is_global = 0;
	BAD_PTR("ibv_create_ah without a GRH", ibv_create_ah(s.pd, &ah),
		destroy_ah_v);

	/* queries */
	bad_int("ibv_query_port port 0",
		VCALL("ibv_query_port", ibv_query_port(ctx, 0, &pa)));
	bad_int("ibv_query_port port 2",
		VCALL("ibv_query_port", ibv_query_port(ctx, 2, &pa)));
	bad_int("ibv_query_gid index 99999",
		VCALL("ibv_query_gid", ibv_query_gid(ctx, PORT, 99999, &gid)));
	note("%d bad arguments refused", nbad_ok);
out:
	side_fini(&s);
	side_fini(&p);
}

/* ---- cur-state: modify_qp must refuse a cur_qp_state that is not true */

/* Bring @s (connected to @p) to @state, the proper way. */
static int qp_goto(struct side *s, struct side *p, int state)
{
	int err = qp_to(s->qp, IBV_QPS_RESET);

	if (err || state == IBV_QPS_RESET)
		return err;
	err = qp_init(s);	/* RESET -> ERR is not a transition */
	if (!err && state == IBV_QPS_ERR)
		return qp_to(s->qp, IBV_QPS_ERR);
	if (err || state == IBV_QPS_INIT)
		return err;
	err = qp_rtr(s, p);
	if (err || state == IBV_QPS_RTR)
		return err;
	return qp_rts(s);
}

/* After an accepted lie: post a WRITE and see what the kernel does. */
static void lie_probe(struct side *s, struct side *p)
{
	struct ibv_wc wc;
	uint64_t id = next_id();
	int err, got;

	err = post_wr(s->qp, IBV_WR_RDMA_WRITE, id, (uintptr_t)s->buf, 4096,
		      s->mr->lkey, (uintptr_t)p->buf, p->mr->rkey,
		      IBV_SEND_SIGNALED);
	if (err) {
		note("  a WRITE after it: ibv_post_send %s", ename(err));
		return;
	}
	got = wait_wr(s->scq, id, 2000, &wc, NULL);
	note("  a WRITE after it: %s; QP now %s",
	     got == 1 ? wcs(wc.status) : "no completion in 2 s",
	     qps_name(qp_state(s->qp)));
}

static void case_cur_state(int arg)
{
	static const struct {
		int real, claim, next;
	} lies[] = {
		{ IBV_QPS_RESET, IBV_QPS_RTS, IBV_QPS_RTS },
		{ IBV_QPS_RESET, IBV_QPS_SQE, IBV_QPS_RTS },
		{ IBV_QPS_INIT, IBV_QPS_RTS, IBV_QPS_RTS },
		{ IBV_QPS_INIT, IBV_QPS_SQD, IBV_QPS_RTS },
		{ IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPS_RTS },
		{ IBV_QPS_RTR, IBV_QPS_SQE, IBV_QPS_RTS },
		{ IBV_QPS_ERR, IBV_QPS_SQE, IBV_QPS_RTS },
		{ IBV_QPS_ERR, IBV_QPS_RTS, IBV_QPS_RTS },
		{ IBV_QPS_RTS, IBV_QPS_SQE, IBV_QPS_RTS },
	};
	struct ibv_qp_attr a;
	struct side s = { 0 }, p = { 0 };
	size_t i;
	int err, refused = 0;

	(void)arg;
	if (pair_init(&s, &p, 1 << 16, &cfg_def))
		goto out;
	for (i = 0; i < ARRAY_SIZE(lies); i++) {
		err = qp_goto(&s, &p, lies[i].real);
		if (err) {
			cfail("could not bring the QP to %s: %s",
			      qps_name(lies[i].real), ename(err));
			break;
		}
		memset(&a, 0, sizeof(a));
		a.qp_state = lies[i].next;
		a.cur_qp_state = lies[i].claim;
		a.min_rnr_timer = 2;
		err = qp_modify(s.qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE |
				IBV_QP_MIN_RNR_TIMER);
		if (err) {
			refused++;
			vnote("refused: QP in %s claiming %s -> %s: %s",
			      qps_name(lies[i].real), qps_name(lies[i].claim),
			      qps_name(lies[i].next), ename(err));
			continue;
		}
		cfail("accepted: QP in %s claiming cur_qp_state %s -> %s; it now reads %s",
		      qps_name(lies[i].real), qps_name(lies[i].claim),
		      qps_name(lies[i].next), qps_name(qp_state(s.qp)));
		if (lies[i].real != IBV_QPS_RTS)
			lie_probe(&s, &p);
	}
	/* the truth is accepted */
	if (!qp_goto(&s, &p, IBV_QPS_RTS)) {
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTS;
		a.cur_qp_state = IBV_QPS_RTS;
		a.min_rnr_timer = 2;
		err = qp_modify(s.qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE |
				IBV_QP_MIN_RNR_TIMER);
		if (err)
			cfail("refused: RTS -> RTS with the true cur_qp_state RTS: %s",
			      ename(err));
	}
	note("%d of %zu lies refused", refused, ARRAY_SIZE(lies));
out:
	pair_fini(&s, &p);
}

/*
 * cur-state-traffic: the lies on a QP with WRITEs in flight: RTS
 * claiming SQE -> RTS, and, after a real move to ERR while the WRITEs are
 * being flushed, ERR claiming SQE -> RTS, then more WRITEs.
 */
static void case_cur_state_traffic(int arg)
{
	struct qpcfg c = cfg_def;
	struct ibv_qp_attr a;
	struct side s = { 0 }, p = { 0 };
	int i, err, n, sent = 0;

	(void)arg;
	c.send_wr = 128;
	c.scqe = 1024;
	if (pair_init(&s, &p, 1 << 20, &c))
		goto out;
	for (i = 0; i < 64; i++)
		if (!post_wr(s.qp, IBV_WR_RDMA_WRITE, next_id(),
			     (uintptr_t)s.buf, 65536, s.mr->lkey,
			     (uintptr_t)p.buf + (i % 16) * 65536, p.mr->rkey,
			     IBV_SEND_SIGNALED))
			sent++;
	sleep_ms(2);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.cur_qp_state = IBV_QPS_SQE;
	err = qp_modify(s.qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE);
	if (!err)
		cfail("accepted: QP in RTS with WRITEs in flight claiming SQE -> RTS");
	if (qp_to(s.qp, IBV_QPS_ERR))
		cfail("modify to ERR refused");
	err = qp_modify(s.qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE);
	if (!err) {
		cfail("accepted: QP in ERR (flushing) claiming SQE -> RTS; it now reads %s",
		      qps_name(qp_state(s.qp)));
		for (i = 0; i < 32; i++)
			if (!post_wr(s.qp, IBV_WR_RDMA_WRITE, next_id(),
				     (uintptr_t)s.buf, 65536, s.mr->lkey,
				     (uintptr_t)p.buf, p.mr->rkey,
				     IBV_SEND_SIGNALED))
				sent++;
	}
	n = drain_cq(s.scq, 3000, sent);
	note("%d WRITEs posted, %d completions; QP now %s", sent, n,
	     qps_name(qp_state(s.qp)));
	if (n < sent)
		cfail("%d of %d signaled WRITEs never completed", sent - n, sent);
out:
	pair_fini(&s, &p);
}

/* ---- wrap-*, edge-*: remote and local addresses at the end of 2^64 */

enum { WHERE_TOP, WHERE_MR, WHERE_LOCAL_TOP };

static const struct wrapc {
	const char *name;
	int opcode;
	int where;		/* WHERE_TOP: remote address 2^64 - back */
	uint64_t back;
	uint32_t len;
	bool ok;		/* must succeed (the control) */
} wraps[] = {
	{ "wrap-write", IBV_WR_RDMA_WRITE, WHERE_TOP, 2048, 4096, false },
	{ "wrap-write-1", IBV_WR_RDMA_WRITE, WHERE_TOP, 1, 2, false },
	{ "wrap-write-multi", IBV_WR_RDMA_WRITE, WHERE_TOP, 32768, 65536, false },
	{ "wrap-write-imm", IBV_WR_RDMA_WRITE_WITH_IMM, WHERE_TOP, 100, 4096, false },
	{ "wrap-read", IBV_WR_RDMA_READ, WHERE_TOP, 2048, 4096, false },
	{ "wrap-read-multi", IBV_WR_RDMA_READ, WHERE_TOP, 4096, 1 << 20, false },
	{ "wrap-atomic", IBV_WR_ATOMIC_FETCH_AND_ADD, WHERE_TOP, 4, 8, false },
	{ "wrap-local-send", IBV_WR_SEND, WHERE_LOCAL_TOP, 2048, 4096, false },
	{ "wrap-local-read", IBV_WR_RDMA_READ, WHERE_LOCAL_TOP, 2048, 4096, false },
	{ "edge-write", IBV_WR_RDMA_WRITE, WHERE_TOP, 1, 1, false },
	{ "edge-read", IBV_WR_RDMA_READ, WHERE_TOP, 4096, 4096, false },
	{ "edge-atomic", IBV_WR_ATOMIC_CMP_AND_SWP, WHERE_TOP, 8, 8, false },
	{ "edge-write-mr-end", IBV_WR_RDMA_WRITE, WHERE_MR, 0, 8192, false },
	{ "wrap-control", IBV_WR_RDMA_WRITE, WHERE_MR, 4096, 4096, true },
};

static bool status_is_own_error(int st_)
{
	return st_ != IBV_WC_SUCCESS && st_ != IBV_WC_WR_FLUSH_ERR &&
	       st_ != IBV_WC_RETRY_EXC_ERR && st_ != IBV_WC_RNR_RETRY_EXC_ERR;
}

static void case_wrap(int arg)
{
	const struct wrapc *w = &wraps[arg];
	struct side s = { 0 }, p = { 0 };
	uint64_t laddr, raddr, id, t0;
	uint32_t len = w->len;
	struct ibv_wc wc;
	int err, got;

	if (pair_init(&s, &p, 2 << 20, &cfg_def))
		goto out;
	if (post_recv(p.qp, next_id(), (uintptr_t)p.buf, 4096, p.mr->lkey))
		cfail("post_recv refused");
	laddr = (uintptr_t)s.buf;
	raddr = 0 - w->back;
	if (w->where == WHERE_MR)	/* back: bytes before the MR's end */
		raddr = (uintptr_t)p.buf + p.len - w->back;
	if (w->where == WHERE_LOCAL_TOP) {
		laddr = 0 - w->back;
		raddr = (uintptr_t)p.buf;
	}
	id = next_id();
	t0 = now_ms();
	err = post_wr(s.qp, w->opcode, id, laddr, len, s.mr->lkey, raddr,
		      p.mr->rkey, IBV_SEND_SIGNALED);
	if (err) {
		if (w->ok)
			cfail("ibv_post_send refused a valid WR: %s", ename(err));
		else
			note("ibv_post_send refused it: %s", ename(err));
		goto out;
	}
	got = wait_wr(s.scq, id, opt.hang_ms, &wc, NULL);
	if (got != 1) {
		cfail("no completion within %d ms", opt.hang_ms);
		goto out;
	}
	note("%s len %u at %#" PRIx64 " (local %#" PRIx64 "): %s after %" PRIu64 " ms; QP %s",
	     wr_op_name(w->opcode), len, raddr, laddr, wcs(wc.status),
	     now_ms() - t0, qps_name(qp_state(s.qp)));
	if (w->ok && wc.status != IBV_WC_SUCCESS)
		cfail("the control WR failed: %s", wcs(wc.status));
	if (!w->ok && !status_is_own_error(wc.status))
		cfail("completed %s: expected its own error (a protection, length or access error)",
		      wcs(wc.status));
out:
	pair_fini(&s, &p);
}

/* ---- ring-sq-*, ring-rq-*: garbage in the mapped rings */

/* Extra keys on the local device, for the key fields. */
struct keys {
	struct ibv_pd *opd;		/* another PD of the same device */
	struct ibv_mr *other_pd;	/* an MR of it over the same buffer */
	struct ibv_mr *no_lw;		/* same PD, no LOCAL_WRITE */
};

static int keys_init(struct keys *k, struct side *s)
{
	memset(k, 0, sizeof(*k));
	k->opd = VPTR("ibv_alloc_pd", ibv_alloc_pd(s->d->ctx));
	if (k->opd)
		k->other_pd = VPTR("ibv_reg_mr", ibv_reg_mr(k->opd, s->buf,
							    s->len, ACC_ALL));
	k->no_lw = VPTR("ibv_reg_mr", ibv_reg_mr(s->pd, s->buf, s->len, 0));
	if (!k->other_pd || !k->no_lw) {
		cfail("registering the extra MRs: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static void keys_fini(struct keys *k)
{
	if (k->other_pd)
		VCALL("ibv_dereg_mr", ibv_dereg_mr(k->other_pd));
	if (k->no_lw)
		VCALL("ibv_dereg_mr", ibv_dereg_mr(k->no_lw));
	if (k->opd)
		VCALL("ibv_dealloc_pd", ibv_dealloc_pd(k->opd));
}

/* Symbolic values, resolved against the QP and its MRs. */
#define V_MAX_INLINE	(1ULL << 40)		/* the QP's max_inline */
#define V_MAX_INLINE_1	((1ULL << 40) + 1)	/* ... + 1 */
#define V_BUF_M1	(2ULL << 40)		/* buffer - 1 */
#define V_BUF_END_M1	(3ULL << 40)		/* buffer + len - 1 */
#define V_BUF_END_M100	(4ULL << 40)		/* buffer + len - 100 */
#define V_LEN_P1	(5ULL << 40)		/* MR length + 1 */
#define V_KEY_FLIP	(6ULL << 40)		/* key ^ 0xff */
#define V_KEY_NEXT	(7ULL << 40)		/* key + 0x100 */
#define V_KEY_OPD	(8ULL << 40)		/* other PD's MR */
#define V_KEY_NOLW	(9ULL << 40)		/* MR without LOCAL_WRITE */
#define V_RANDOM	(10ULL << 40)

enum {
	F_OPCODE, F_NSGE, F_FLAGS, F_INLINE, F_OP_INLINE, F_ATOMIC_LEN,
	F_LEN, F_LEN2, F_ADDR, F_LKEY, F_READ_LKEY, F_RKEY, F_RADDR,
	F_RESERVED, F_WRID, F_BADOP_NSGE, F_SGE_BEYOND, F_BIND,
};

struct mut {
	uint8_t field;
	bool must;		/* must complete with its own error */
	uint64_t v;
	const char *desc;
};

#define M(f, m, val, d) { .field = (f), .must = (m), .v = (val), .desc = (d) }

static const struct mut m_sq_opcode[] = {
	M(F_OPCODE, true, 7, "opcode 7 (LOCAL_INV of key 0)"),
	M(F_OPCODE, true, 8, "opcode 8 (BIND_MW of no window)"),
	M(F_OPCODE, true, 9, "opcode 9 (SEND_INV)"),
	M(F_OPCODE, true, 10, "opcode 10 (TSO)"),
	M(F_OPCODE, true, 11, "opcode 11"),
	M(F_OPCODE, true, 12, "opcode 12"),
	M(F_OPCODE, true, 0x20, "opcode 0x20"),
	M(F_OPCODE, true, 0x7f, "opcode 0x7f"),
	M(F_OPCODE, true, 0x80, "opcode 0x80"),
	M(F_OPCODE, true, 0xfe, "opcode 0xfe"),
	M(F_OPCODE, true, 0xff, "opcode 0xff"),
	M(F_OP_INLINE, true, IB_UVERBS_WR_RDMA_READ, "READ with INLINE"),
	M(F_OP_INLINE, true, IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD,
	  "FETCH_ADD with INLINE"),
	M(F_ATOMIC_LEN, true, 512, "FETCH_ADD of 512 bytes"),
	M(F_ATOMIC_LEN, true, 0, "CMP_SWP of 0 bytes"),
};

static const struct mut m_sq_nsge[] = {
	M(F_NSGE, false, 0, "num_sge 0"),
	M(F_NSGE, true, 3, "num_sge 3 (max_send_sge 2)"),
	M(F_NSGE, true, 4, "num_sge 4"),
	M(F_NSGE, true, 8, "num_sge 8 (MROCE_MAX_SGE)"),
};

static const struct mut m_sq_nsge9[] = {
	M(F_NSGE, true, 9, "num_sge 9 (one past the kernel's mr[8])") };
static const struct mut m_sq_nsge16[] = { M(F_NSGE, true, 16, "num_sge 16") };
static const struct mut m_sq_nsge64[] = { M(F_NSGE, true, 64, "num_sge 64") };
static const struct mut m_sq_nsge255[] = {
	M(F_NSGE, true, 255, "num_sge 255") };
static const struct mut m_sq_badop_nsge[] = {
	M(F_BADOP_NSGE, true, 255, "opcode 0xff and num_sge 255") };

static const struct mut m_sq_flags[] = {
	M(F_FLAGS, false, 0, "flags 0 (unsignaled)"),
	M(F_FLAGS, false, 0xffff, "flags 0xffff"),
	M(F_FLAGS, false, 1 << 4, "flags 1 << 4"),
	M(F_FLAGS, false, 1 << 15, "flags 1 << 15"),
	M(F_FLAGS, false, MROCE_WQE_SIGNALED | MROCE_WQE_SOLICITED |
	  MROCE_WQE_FENCE, "SIGNALED | SOLICITED | FENCE"),
};

static const struct mut m_sq_inline[] = {
	M(F_INLINE, false, 0, "inline_len 0"),
	M(F_INLINE, false, V_MAX_INLINE, "inline_len max_inline"),
	M(F_INLINE, true, V_MAX_INLINE_1, "inline_len max_inline + 1"),
	M(F_INLINE, true, 257, "inline_len 257"),
	M(F_INLINE, true, 65536, "inline_len 65536"),
	M(F_INLINE, true, 0x80000000, "inline_len 2^31"),
	M(F_INLINE, true, 0xffffffff, "inline_len 2^32 - 1"),
};

static const struct mut m_sq_len[] = {
	M(F_LEN, false, 0, "length 0"),
	M(F_LEN, false, 1, "length 1"),
	M(F_LEN, false, 4096, "length 4096"),
	M(F_LEN, true, V_LEN_P1, "length MR + 1"),
	M(F_LEN, true, 0x7fffffff, "length 2^31 - 1"),
	M(F_LEN, true, 0x80000000, "length 2^31"),
	M(F_LEN, true, 0xffffffff, "length 2^32 - 1"),
	M(F_LEN2, true, 0x80000000, "two SGEs of 2^31 (sum wraps to 0)"),
};

static const struct mut m_sq_addr[] = {
	M(F_ADDR, true, 0, "addr 0"),
	M(F_ADDR, true, V_BUF_M1, "addr MR - 1"),
	M(F_ADDR, true, V_BUF_END_M1, "addr MR end - 1, length 512"),
	M(F_ADDR, true, 0xffffffffffffffffULL, "addr 2^64 - 1"),
	M(F_ADDR, true, 1ULL << 63, "addr 2^63"),
	M(F_ADDR, true, V_RANDOM, "addr random"),
};

static const struct mut m_sq_lkey[] = {
	M(F_LKEY, true, 0, "lkey 0"),
	M(F_LKEY, true, 0xffffffff, "lkey 0xffffffff"),
	M(F_LKEY, true, V_KEY_FLIP, "lkey ^ 0xff"),
	M(F_LKEY, true, V_KEY_NEXT, "lkey + 0x100"),
	M(F_LKEY, true, V_KEY_OPD, "lkey of another PD's MR"),
	M(F_READ_LKEY, true, V_KEY_NOLW, "READ into an MR without LOCAL_WRITE"),
	M(F_SGE_BEYOND, false, 0, "garbage SGE after num_sge"),
};

/*
 * BIND_MW WQEs (opcode 8) with hostile fields, against the ring's own
 * windows (type 2: ringctx.mw2, type 1: mw1, both in the QP's PD) unless
 * said otherwise; F_BIND's value selects the case in sq_build_bind().
 * The last two are good binds.
 */
enum {
	B_NO_WINDOW, B_WRAP, B_HUGE, B_ACCESS, B_LKEY, B_INDEX, B_OPD_MR,
	B_NOLW_WRITE, B_ZERO_LEN2, B_PAST_END, B_OPD_WINDOW, B_T1_UNBIND,
	B_T2_GOOD,
};

static const struct mut m_sq_bind[] = {
	M(F_BIND, true, B_NO_WINDOW, "BIND_MW of a random window rkey"),
	M(F_BIND, true, B_WRAP, "BIND_MW addr 2^64 - 100, length 200"),
	M(F_BIND, true, B_HUGE, "BIND_MW length 2^64 - 1"),
	M(F_BIND, true, B_ACCESS, "BIND_MW access 0xffffffff"),
	M(F_BIND, true, B_LKEY, "BIND_MW mr_lkey 0xffffffff"),
	M(F_BIND, true, B_INDEX, "BIND_MW type 2, rkey index changed"),
	M(F_BIND, true, B_OPD_MR, "BIND_MW to another PD's MR"),
	M(F_BIND, true, B_NOLW_WRITE,
	  "BIND_MW remote write on an MR without LOCAL_WRITE"),
	M(F_BIND, true, B_ZERO_LEN2, "BIND_MW type 2 of length 0"),
	M(F_BIND, true, B_PAST_END, "BIND_MW past the MR's end"),
	M(F_BIND, true, B_OPD_WINDOW, "BIND_MW of another PD's window"),
	M(F_BIND, false, B_T1_UNBIND, "BIND_MW type 1 of length 0 (unbind)"),
	M(F_BIND, false, B_T2_GOOD, "BIND_MW type 2, a good one"),
};

static const struct mut m_sq_rkey[] = {
	M(F_RKEY, true, 0, "WRITE rkey 0"),
	M(F_RKEY, true, 0xffffffff, "WRITE rkey 0xffffffff"),
	M(F_RKEY, true, V_KEY_FLIP, "WRITE rkey ^ 0xff"),
	M(F_RKEY, true, V_KEY_NEXT, "WRITE rkey + 0x100"),
	M(F_RADDR, true, 0, "WRITE remote_addr 0"),
	M(F_RADDR, true, V_BUF_M1, "WRITE remote_addr MR - 1"),
	M(F_RADDR, true, V_BUF_END_M100, "WRITE of 512 at MR end - 100"),
};

static const struct mut m_sq_reserved[] = {
	M(F_RESERVED, false, 1, "reserved"),
	M(F_RESERVED, false, 2, "reserved2[0]"),
	M(F_RESERVED, false, 3, "wr.rdma.reserved of a WRITE"),
	M(F_WRID, false, 0, "wr_id and imm_data random"),
};

struct ringctx {
	struct side s, p;
	struct keys k;
	/* ring-sq-bind: windows, regions they may be bound to */
	struct ibv_mw *mw1, *mw2, *mw_opd;
	struct ibv_mr *bmr, *bmr_nolw;
	int nmut, nbad;
};

static uint64_t resolve(const struct ringctx *r, const struct side *x,
			uint64_t v, uint32_t key)
{
	switch (v) {
	case V_MAX_INLINE:
		return mqp(r->s.qp)->sq.max_inline;
	case V_MAX_INLINE_1:
		return mqp(r->s.qp)->sq.max_inline + 1;
	case V_BUF_M1:
		return (uintptr_t)x->buf - 1;
	case V_BUF_END_M1:
		return (uintptr_t)x->buf + x->len - 1;
	case V_BUF_END_M100:
		return (uintptr_t)x->buf + x->len - 100;
	case V_LEN_P1:
		return x->len + 1;
	case V_KEY_FLIP:
		return key ^ 0xff;
	case V_KEY_NEXT:
		return key + 0x100;
	case V_KEY_OPD:
		return r->k.other_pd->lkey;
	case V_KEY_NOLW:
		return r->k.no_lw->lkey;
	case V_RANDOM:
		return rnd64();
	default:
		return v;
	}
}

/* The receives the peer keeps posted for the SENDs (ring-sq-*). */
static void peer_recvs(struct side *p, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (post_recv(p->qp, next_id(), (uintptr_t)p->buf +
			      (i % 16) * 4096, 4096, p->mr->lkey))
			break;
}

static int ring_reconnect(struct ringctx *r, bool recvs)
{
	if (pair_up(&r->s, &r->p))
		return -1;
	drain_cq(r->s.scq, 0, 0);
	drain_cq(r->p.rcq, 0, 0);
	if (recvs)
		peer_recvs(&r->p, 32);
	return 0;
}

/* A BIND_MW WQE of case @v (m_sq_bind); the SGE stays, as garbage. */
static void sq_build_bind(struct ringctx *r, struct raw_swqe *w, uint64_t v)
{
	struct side *s = &r->s;
	struct ibv_mw *mw = v == B_T1_UNBIND ? r->mw1 : r->mw2;
	uint32_t rkey = mw ? mw->rkey : 0;

	w->h.opcode = IB_UVERBS_WR_BIND_MW;
	w->h.wr.bind.mw_rkey = rkey;
	w->h.wr.bind.rkey = (rkey & ~0xffU) | ((rkey + 1) & 0xff);
	w->h.wr.bind.mr_lkey = r->bmr->lkey;
	w->h.wr.bind.addr = (uintptr_t)s->buf;
	w->h.wr.bind.length = 4096;
	w->h.wr.bind.access = IBV_ACCESS_REMOTE_READ;
	switch (v) {
	case B_NO_WINDOW:
		w->h.wr.bind.mw_rkey = (uint32_t)rnd64();
		w->h.wr.bind.rkey = w->h.wr.bind.mw_rkey;
		break;
	case B_WRAP:
		w->h.wr.bind.addr = ~0ULL - 99;
		w->h.wr.bind.length = 200;
		break;
	case B_HUGE:
		w->h.wr.bind.length = ~0ULL;
		break;
	case B_ACCESS:
		w->h.wr.bind.access = 0xffffffff;
		break;
	case B_LKEY:
		w->h.wr.bind.mr_lkey = 0xffffffff;
		break;
	case B_INDEX:
		w->h.wr.bind.rkey ^= 0x100;
		break;
	case B_OPD_MR:
		w->h.wr.bind.mr_lkey = r->k.other_pd->lkey;
		break;
	case B_NOLW_WRITE:
		w->h.wr.bind.mr_lkey = r->bmr_nolw->lkey;
		w->h.wr.bind.access = IBV_ACCESS_REMOTE_WRITE;
		break;
	case B_ZERO_LEN2:
		w->h.wr.bind.length = 0;
		break;
	case B_PAST_END:
		w->h.wr.bind.addr = (uintptr_t)s->buf + s->len - 100;
		w->h.wr.bind.length = 200;
		break;
	case B_OPD_WINDOW:
		w->h.wr.bind.mw_rkey = r->mw_opd ? r->mw_opd->rkey : 0;
		w->h.wr.bind.rkey = w->h.wr.bind.mw_rkey;
		break;
	case B_T1_UNBIND:
		w->h.wr.bind.length = 0;
		w->h.wr.bind.mr_lkey = 0xffffffff;	/* not looked at */
		break;
	default:
		break;
	}
}

static void sq_build(struct ringctx *r, struct raw_swqe *w, uint64_t id,
		     const struct mut *m)
{
	struct side *s = &r->s, *p = &r->p;
	uint64_t v;

	memset(w, 0, sizeof(*w));
	w->h.wr_id = id;
	w->h.opcode = IB_UVERBS_WR_SEND;
	w->h.num_sge = 1;
	w->h.flags = MROCE_WQE_SIGNALED;
	w->sge[0].addr = (uintptr_t)s->buf;
	w->sge[0].length = 512;
	w->sge[0].lkey = s->mr->lkey;
	switch (m->field) {
	case F_OPCODE:
		w->h.opcode = (uint8_t)m->v;
		break;
	case F_BADOP_NSGE:
		w->h.opcode = 0xff;
		w->h.num_sge = (uint8_t)m->v;
		break;
	case F_NSGE:
		w->h.num_sge = (uint8_t)m->v;
		if (!m->v)
			w->sge[0].length = 0;
		break;
	case F_FLAGS:
		w->h.flags = (uint16_t)m->v;
		break;
	case F_INLINE:
		w->h.flags |= MROCE_WQE_INLINE;
		w->h.num_sge = 0;
		w->h.inline_len = (uint32_t)resolve(r, s, m->v, 0);
		memset(w->inl, 0x5a, sizeof(w->inl));
		break;
	case F_OP_INLINE:
		w->h.opcode = (uint8_t)m->v;
		w->h.flags |= MROCE_WQE_INLINE;
		w->h.inline_len = 8;
		w->h.wr.atomic.remote_addr = (uintptr_t)p->buf;
		w->h.wr.atomic.rkey = p->mr->rkey;
		break;
	case F_ATOMIC_LEN:
		w->h.opcode = m->v ? IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD :
				     IB_UVERBS_WR_ATOMIC_CMP_AND_SWP;
		w->sge[0].length = m->v;
		w->h.wr.atomic.remote_addr = (uintptr_t)p->buf;
		w->h.wr.atomic.rkey = p->mr->rkey;
		break;
	case F_LEN:
		w->sge[0].length = (uint32_t)resolve(r, s, m->v, 0);
		break;
	case F_LEN2:
		w->h.num_sge = 2;
		w->sge[0].length = (uint32_t)m->v;
		w->sge[1] = w->sge[0];
		break;
	case F_ADDR:
		w->sge[0].addr = resolve(r, s, m->v, 0);
		break;
	case F_LKEY:
		w->sge[0].lkey = (uint32_t)resolve(r, s, m->v, s->mr->lkey);
		break;
	case F_READ_LKEY:
		w->h.opcode = IB_UVERBS_WR_RDMA_READ;
		w->sge[0].lkey = (uint32_t)resolve(r, s, m->v, s->mr->lkey);
		w->h.wr.rdma.remote_addr = (uintptr_t)p->buf;
		w->h.wr.rdma.rkey = p->mr->rkey;
		break;
	case F_RKEY:
	case F_RADDR:
		w->h.opcode = IB_UVERBS_WR_RDMA_WRITE;
		w->h.wr.rdma.remote_addr = (uintptr_t)p->buf;
		w->h.wr.rdma.rkey = p->mr->rkey;
		v = resolve(r, p, m->v, p->mr->rkey);
		if (m->field == F_RKEY)
			w->h.wr.rdma.rkey = (uint32_t)v;
		else
			w->h.wr.rdma.remote_addr = v;
		break;
	case F_RESERVED:
		if (m->v == 1) {
			w->h.reserved = 0xffffffff;
		} else if (m->v == 2) {
			w->h.reserved2[0] = 1;
		} else {
			w->h.opcode = IB_UVERBS_WR_RDMA_WRITE;
			w->h.wr.rdma.remote_addr = (uintptr_t)p->buf;
			w->h.wr.rdma.rkey = p->mr->rkey;
			w->h.wr.rdma.reserved = 0xdeadbeef;
		}
		break;
	case F_WRID:
		w->h.imm_data = (uint32_t)rnd64();
		break;
	case F_SGE_BEYOND:
		w->sge[1].addr = rnd64();
		w->sge[1].length = 0xffffffff;
		w->sge[1].lkey = 0xffffffff;
		break;
	case F_BIND:
		sq_build_bind(r, w, m->v);
		break;
	}
}

/*
 * One garbage send WQE, then a valid signaled SEND (the sentinel) through
 * the provider.  Both must complete within --hang-ms (the sentinel with
 * IBV_WC_SUCCESS, or IBV_WC_WR_FLUSH_ERR after an error); a WQE that can
 * only be wrong must complete with its own error.
 */
static void sq_try(struct ringctx *r, const struct mut *m)
{
	struct side *s = &r->s;
	uint64_t gid_ = next_id(), sid = next_id(), end;
	struct ibv_wc gwc = { .status = -1 }, swc = { .status = -1 };
	bool got_g = false, got_s = false;
	struct raw_swqe w;
	int err;

	sq_build(r, &w, gid_, m);
	if (m->field == F_WRID) {
		/* the CQE must carry the WQE's own wr_id */
		gid_ = rnd64() | 1ULL << 63;
		w.h.wr_id = gid_;
	}
	r->nmut++;
	err = ring_put(&mqp(s->qp)->sq, &w, sizeof(w));
	if (err) {
		cfail("%s: the SQ ring is full", m->desc);
		return;
	}
	doorbell(s->qp, true);
	err = post_wr(s->qp, IBV_WR_SEND, sid, (uintptr_t)s->buf, 64,
		      s->mr->lkey, 0, 0, IBV_SEND_SIGNALED);
	if (err)
		note("%s: the sentinel SEND was refused: %s", m->desc,
		     ename(err));
	end = now_ms() + opt.hang_ms;
	while (now_ms() < end && !(got_s && (got_g || !m->must))) {
		struct ibv_wc wc[8];
		int n = cq_poll(s->scq, 8, wc), i;

		for (i = 0; i < n; i++) {
			if (wc[i].wr_id == gid_) {
				gwc = wc[i];
				got_g = true;
			} else if (wc[i].wr_id == sid) {
				swc = wc[i];
				got_s = true;
			}
		}
		if (!n)
			sleep_us(200);
	}
	if (got_s && !got_g && wait_wr(s->scq, gid_, 50, &gwc, NULL) == 1)
		got_g = true;	/* a late one */
	vnote("%s: WQE %s, sentinel %s", m->desc,
	      got_g ? wcs(gwc.status) : "no completion",
	      got_s ? wcs(swc.status) : "no completion");
	if (!got_s && !err)
		cfail("%s: the SQ stalled: the sentinel SEND did not complete in %d ms",
		      m->desc, opt.hang_ms);
	if (m->must) {
		if (!got_g)
			cfail("%s: no completion for the WQE", m->desc);
		else if (!status_is_own_error(gwc.status))
			cfail("%s: completed %s, expected its own error",
			      m->desc, wcs(gwc.status));
		else
			r->nbad++;
	}
	if (got_g && gwc.status == IBV_WC_SUCCESS && m->field == F_WRID &&
	    gwc.wr_id != gid_)
		cfail("%s: the CQE has wr_id %#" PRIx64 ", the WQE %#" PRIx64,
		      m->desc, gwc.wr_id, gid_);
	if (got_g || (got_s && swc.status != IBV_WC_SUCCESS) ||
	    qp_state(s->qp) != IBV_QPS_RTS)
		ring_reconnect(r, true);
	else
		peer_recvs(&r->p, drain_cq(r->p.rcq, 20, 0));
}

static int ring_setup(struct ringctx *r, const struct qpcfg *c)
{
	memset(r, 0, sizeof(*r));
	if (pair_init(&r->s, &r->p, 1 << 20, c) || keys_init(&r->k, &r->s))
		return -1;
	r->mw1 = VPTR("ibv_alloc_mw", ibv_alloc_mw(r->s.pd, IBV_MW_TYPE_1));
	r->mw2 = VPTR("ibv_alloc_mw", ibv_alloc_mw(r->s.pd, IBV_MW_TYPE_2));
	r->mw_opd = VPTR("ibv_alloc_mw", ibv_alloc_mw(r->k.opd, IBV_MW_TYPE_2));
	r->bmr = VPTR("ibv_reg_mr", ibv_reg_mr(r->s.pd, r->s.buf, r->s.len,
					       ACC_ALL | IBV_ACCESS_MW_BIND));
	r->bmr_nolw = VPTR("ibv_reg_mr", ibv_reg_mr(r->s.pd, r->s.buf,
						    r->s.len,
						    IBV_ACCESS_MW_BIND));
	if (!r->mw1 || !r->mw2 || !r->mw_opd || !r->bmr || !r->bmr_nolw) {
		cfail("alloc_mw, reg_mr with MW_BIND: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static void ring_teardown(struct ringctx *r)
{
	/* windows first: a region with a window bound does not deregister */
	if (r->mw1)
		VCALL("ibv_dealloc_mw", ibv_dealloc_mw(r->mw1));
	if (r->mw2)
		VCALL("ibv_dealloc_mw", ibv_dealloc_mw(r->mw2));
	if (r->mw_opd)
		VCALL("ibv_dealloc_mw", ibv_dealloc_mw(r->mw_opd));
	if (r->bmr)
		VCALL("ibv_dereg_mr", ibv_dereg_mr(r->bmr));
	if (r->bmr_nolw)
		VCALL("ibv_dereg_mr", ibv_dereg_mr(r->bmr_nolw));
	keys_fini(&r->k);
	pair_fini(&r->s, &r->p);
}

struct mutset {
	const struct mut *m;
	int n;
};

#define MS(a) { (a), (int)ARRAY_SIZE(a) }

static const struct mutset sq_sets[] = {
	MS(m_sq_opcode), MS(m_sq_nsge), MS(m_sq_flags), MS(m_sq_inline),
	MS(m_sq_len), MS(m_sq_addr), MS(m_sq_lkey), MS(m_sq_rkey),
	MS(m_sq_reserved), MS(m_sq_nsge9), MS(m_sq_nsge16), MS(m_sq_nsge64),
	MS(m_sq_nsge255), MS(m_sq_badop_nsge), MS(m_sq_bind),
};

static void case_ring_sq(int arg)
{
	const struct mutset *ms = &sq_sets[arg];
	struct ringctx r;
	int i;

	if (ring_setup(&r, &cfg_def) || ring_reconnect(&r, true))
		goto out;
	for (i = 0; i < ms->n; i++)
		sq_try(&r, &ms->m[i]);
	note("%d garbage WQEs, %d completed with their own error", r.nmut,
	     r.nbad);
out:
	ring_teardown(&r);
}

/*
 * ring-sq-prod: the producer index the process publishes is garbage: more
 * WQEs than slots, 2^31 ahead, one behind the consumer.  The doorbell
 * must return; the kernel must not take more than a ring of WQEs; the QP
 * must come back through RESET.
 */
static void case_ring_sq_prod(int arg)
{
	static const struct {
		uint32_t delta;
		const char *desc;
	} v[] = {
		{ 0, "prod = cons + slots + 1" },
		{ 0x80000000, "prod = cons + 2^31" },
		{ 0xffffffff, "prod = cons - 1" },
		{ 1, "cons (kernel-owned) = garbage" },
	};
	struct ringctx r;
	size_t i;

	(void)arg;
	if (ring_setup(&r, &cfg_def) || ring_reconnect(&r, true))
		goto out;
	for (i = 0; i < ARRAY_SIZE(v); i++) {
		struct mroce_ring *ring = &mqp(r.s.qp)->sq.ring;
		uint32_t cons = mroce_load_acquire(&ring->hdr->cons);
		uint64_t sid = next_id();
		struct ibv_wc wc;
		int n, got;

		if (i == 3) {
			int err;

			/* only the provider believes it: it sees a full ring */
			mroce_store_release(&ring->hdr->cons, cons + 12345);
			err = post_wr(r.s.qp, IBV_WR_SEND, sid,
				      (uintptr_t)r.s.buf, 64, r.s.mr->lkey, 0,
				      0, IBV_SEND_SIGNALED);
			got = err ? 0 : wait_wr(r.s.scq, sid, opt.hang_ms,
						&wc, NULL);
			note("%s: a SEND after it: %s", v[i].desc,
			     err ? ename(err) : got == 1 ? wcs(wc.status) :
			     "no completion");
			doorbell(r.s.qp, true);
		} else {
			uint32_t d = v[i].delta ? v[i].delta :
				     ring->num_slots + 1;

			mroce_store_release(&ring->hdr->prod, cons + d);
			doorbell(r.s.qp, true);
			n = drain_cq(r.s.scq, 1000, 0);
			note("%s: %d completions, QP %s", v[i].desc, n,
			     qps_name(qp_state(r.s.qp)));
			if (n > (int)ring->num_slots + 1)
				cfail("%s: %d completions from a ring of %u slots",
				      v[i].desc, n, ring->num_slots);
		}
		if (ring_reconnect(&r, true))
			break;
		/* the QP works again */
		sid = next_id();
		post_wr(r.s.qp, IBV_WR_SEND, sid, (uintptr_t)r.s.buf, 64,
			r.s.mr->lkey, 0, 0, IBV_SEND_SIGNALED);
		got = wait_wr(r.s.scq, sid, opt.hang_ms, &wc, NULL);
		if (got != 1 || wc.status != IBV_WC_SUCCESS)
			cfail("%s: after RESET -> RTS a SEND: %s", v[i].desc,
			      got == 1 ? wcs(wc.status) : "no completion");
		peer_recvs(&r.p, drain_cq(r.p.rcq, 20, 0));
	}
out:
	ring_teardown(&r);
}

/*
 * ring-sq-random[-safe]: whole slots of random bytes (opcode, flags,
 * lengths, keys, addresses), the sentinel after each.  -safe keeps
 * num_sge <= max_send_sge, so today's num_sge defect (issue 12 #1) is not
 * hit; the dangerous one does not.
 */
static void case_ring_sq_random(int safe)
{
	uint64_t end = now_ms() + (uint64_t)opt.seconds * 1000;
	struct ringctx r;
	int n = 0, hist[32] = { 0 }, i;
	char b[400];
	int len = 0;

	if (ring_setup(&r, &cfg_def) || ring_reconnect(&r, true))
		goto out;
	while (now_ms() < end && n < 100000) {
		uint64_t gid_ = next_id(), sid = next_id(), tend;
		struct raw_swqe w;
		bool got_s = false;
		uint8_t *p = (uint8_t *)&w;

		for (i = 0; i < (int)sizeof(w); i++)
			p[i] = (uint8_t)rnd64();
		w.h.wr_id = gid_;
		if (chance(60))
			w.h.opcode = rnd(7);
		if (chance(50))
			w.h.flags &= MROCE_WQE_SIGNALED | MROCE_WQE_INLINE |
				     MROCE_WQE_FENCE | MROCE_WQE_SOLICITED;
		if (chance(40)) {	/* point at our MRs */
			w.sge[0].addr = (uintptr_t)r.s.buf + rnd(r.s.len);
			w.sge[0].lkey = r.s.mr->lkey;
			w.sge[0].length = rnd(8192);
			w.h.wr.rdma.remote_addr = (uintptr_t)r.p.buf +
						  rnd(r.p.len);
			w.h.wr.rdma.rkey = r.p.mr->rkey;
		}
		if (chance(30))
			w.h.inline_len = rnd(300);
		if (safe)
			w.h.num_sge %= r.s.cfg.send_sge + 1;
		else if (chance(50))
			w.h.num_sge %= 12;
		n++;
		if (ring_put(&mqp(r.s.qp)->sq, &w, sizeof(w))) {
			ring_reconnect(&r, true);
			continue;
		}
		doorbell(r.s.qp, true);
		post_wr(r.s.qp, IBV_WR_SEND, sid, (uintptr_t)r.s.buf, 64,
			r.s.mr->lkey, 0, 0, IBV_SEND_SIGNALED);
		tend = now_ms() + opt.hang_ms;
		while (!got_s && now_ms() < tend) {
			struct ibv_wc wc[8];
			int k = cq_poll(r.s.scq, 8, wc);

			for (i = 0; i < k; i++) {
				if (wc[i].wr_id == gid_ && wc[i].status < 32)
					hist[wc[i].status]++;
				if (wc[i].wr_id == sid)
					got_s = true;
			}
			if (!k)
				sleep_us(200);
		}
		if (!got_s) {
			cfail("random WQE %d (opcode %u, num_sge %u, flags %#x): the sentinel did not complete in %d ms",
			      n, w.h.opcode, w.h.num_sge, w.h.flags,
			      opt.hang_ms);
			break;
		}
		if (qp_state(r.s.qp) != IBV_QPS_RTS || chance(5))
			ring_reconnect(&r, true);
		else
			peer_recvs(&r.p, drain_cq(r.p.rcq, 0, 0));
	}
	for (i = 0; i < 32; i++)
		if (hist[i])
			len += snprintf(b + len, sizeof(b) - len, " %s:%d",
					wcs(i), hist[i]);
	note("%d random WQEs; their completions:%s", n, len ? b : " none");
out:
	ring_teardown(&r);
}

/* ---- receive WQEs */

static const struct mut m_rq_nsge[] = {
	M(F_NSGE, true, 0, "num_sge 0 for a 512-byte SEND"),
	M(F_NSGE, true, 3, "num_sge 3 (max_recv_sge 2)"),
	M(F_NSGE, true, 8, "num_sge 8"),
	M(F_NSGE, true, 9, "num_sge 9"),
	M(F_NSGE, true, 255, "num_sge 255"),
	M(F_NSGE, true, 0x80000000, "num_sge 2^31"),
	M(F_NSGE, true, 0xffffffff, "num_sge 2^32 - 1"),
};

static const struct mut m_rq_sge[] = {
	M(F_LEN, true, 0, "length 0 for a 512-byte SEND"),
	M(F_LEN, true, 256, "length 256 for a 512-byte SEND"),
	M(F_LEN, false, 512, "length 512"),
	M(F_LEN, true, 0xffffffff, "length 2^32 - 1"),
	M(F_ADDR, true, 0, "addr 0"),
	M(F_ADDR, true, 0xfffffffffffffff0ULL, "addr 2^64 - 16"),
	M(F_ADDR, true, V_BUF_END_M100, "512 bytes at MR end - 100"),
	M(F_LKEY, true, 0, "lkey 0"),
	M(F_LKEY, true, 0xffffffff, "lkey 0xffffffff"),
	M(F_LKEY, true, V_KEY_FLIP, "lkey ^ 0xff"),
	M(F_LKEY, true, V_KEY_OPD, "lkey of another PD's MR"),
	M(F_LKEY, true, V_KEY_NOLW, "lkey of an MR without LOCAL_WRITE"),
};

static const struct mut m_rq_misc[] = {
	M(F_RESERVED, false, 1, "reserved"),
	M(F_WRID, false, 0, "wr_id random"),
	M(F_SGE_BEYOND, false, 0, "garbage SGE after num_sge"),
};

static void rq_build(struct ringctx *r, struct raw_rwqe *w, uint64_t id,
		     const struct mut *m)
{
	struct side *p = &r->p;	/* the receiver: its keys */

	memset(w, 0, sizeof(*w));
	w->h.wr_id = id;
	w->h.num_sge = 1;
	w->sge[0].addr = (uintptr_t)p->buf;
	w->sge[0].length = 4096;
	w->sge[0].lkey = p->mr->lkey;
	switch (m->field) {
	case F_NSGE:
		w->h.num_sge = (uint32_t)m->v;
		break;
	case F_LEN:
		w->sge[0].length = (uint32_t)m->v;
		break;
	case F_ADDR:
		w->sge[0].addr = resolve(r, p, m->v, 0);
		break;
	case F_LKEY:
		w->sge[0].lkey = (uint32_t)resolve(r, p, m->v, p->mr->lkey);
		break;
	case F_RESERVED:
		w->h.reserved = 0xffffffff;
		break;
	case F_SGE_BEYOND:
		w->sge[1].addr = rnd64();
		w->sge[1].length = 0xffffffff;
		w->sge[1].lkey = 0xffffffff;
		break;
	}
}

/*
 * One garbage receive WQE on the peer, one 512-byte SEND into it.  The
 * SEND must complete within --hang-ms; a receive that can only be wrong
 * must not complete IBV_WC_SUCCESS, nor the SEND; a SEND that succeeded
 * must show as a successful receive of 512 bytes.
 */
static void rq_try(struct ringctx *r, const struct mut *m)
{
	struct side *s = &r->s, *p = &r->p;
	uint64_t gid_ = next_id(), sid = next_id();
	struct ibv_wc gwc, swc;
	struct raw_rwqe w;
	int got_s, got_g;

	rq_build(r, &w, gid_, m);
	if (m->field == F_WRID) {
		gid_ = rnd64() | 1ULL << 63;
		w.h.wr_id = gid_;
	}
	r->nmut++;
	if (ring_put(&mqp(p->qp)->rq, &w, sizeof(w))) {
		cfail("%s: the RQ ring is full", m->desc);
		return;
	}
	post_wr(s->qp, IBV_WR_SEND, sid, (uintptr_t)s->buf, 512, s->mr->lkey,
		0, 0, IBV_SEND_SIGNALED);
	got_s = wait_wr(s->scq, sid, opt.hang_ms, &swc, NULL);
	got_g = wait_wr(p->rcq, gid_, got_s == 1 ? 300 : 50, &gwc, NULL);
	vnote("%s: SEND %s, receive %s", m->desc,
	      got_s == 1 ? wcs(swc.status) : "no completion",
	      got_g == 1 ? wcs(gwc.status) : "no completion");
	if (got_s != 1)
		cfail("%s: the SEND did not complete in %d ms", m->desc,
		      opt.hang_ms);
	if (m->must) {
		if (got_s == 1 && swc.status == IBV_WC_SUCCESS)
			cfail("%s: the SEND completed SUCCESS into a receive that cannot take it (receive: %s)",
			      m->desc,
			      got_g == 1 ? wcs(gwc.status) : "no completion");
		else if (got_g == 1 && gwc.status == IBV_WC_SUCCESS)
			cfail("%s: the receive completed SUCCESS", m->desc);
		else
			r->nbad++;
	} else if (got_s == 1 && swc.status == IBV_WC_SUCCESS &&
		   (got_g != 1 || gwc.status != IBV_WC_SUCCESS ||
		    gwc.byte_len != 512)) {
		cfail("%s: the SEND succeeded but the receive: %s, %u bytes",
		      m->desc, got_g == 1 ? wcs(gwc.status) : "no completion",
		      got_g == 1 ? gwc.byte_len : 0);
	}
	ring_reconnect(r, false);
}

static const struct mutset rq_sets[] = {
	MS(m_rq_nsge), MS(m_rq_sge), MS(m_rq_misc),
};

static void case_ring_rq(int arg)
{
	const struct mutset *ms = &rq_sets[arg];
	struct qpcfg c = cfg_def;
	struct ringctx r;
	int i;

	c.rnr = 1;		/* an empty RQ fails the SEND soon */
	if (ring_setup(&r, &c) || ring_reconnect(&r, false))
		goto out;
	/* the receiver's extra keys: on its own device */
	keys_fini(&r.k);
	memset(&r.k, 0, sizeof(r.k));
	if (keys_init(&r.k, &r.p))
		goto out;
	for (i = 0; i < ms->n; i++)
		rq_try(&r, &ms->m[i]);
	note("%d garbage receive WQEs, %d refused", r.nmut, r.nbad);
out:
	ring_teardown(&r);
}

/* ring-rq-prod: garbage producer index of a receive queue. */
static void case_ring_rq_prod(int arg)
{
	static const uint32_t deltas[] = { 0, 0x80000000, 0xffffffff };
	struct qpcfg c = cfg_def;
	struct ringctx r;
	size_t i;

	(void)arg;
	c.rnr = 1;
	if (ring_setup(&r, &c) || ring_reconnect(&r, false))
		goto out;
	for (i = 0; i < ARRAY_SIZE(deltas); i++) {
		struct mroce_ring *ring = &mqp(r.p.qp)->rq.ring;
		uint32_t cons = mroce_load_acquire(&ring->hdr->cons);
		uint32_t d = deltas[i] ? deltas[i] : ring->num_slots + 5;
		uint64_t sid = next_id();
		struct ibv_wc wc;
		int got, n;

		mroce_store_release(&ring->hdr->prod, cons + d);
		post_wr(r.s.qp, IBV_WR_SEND, sid, (uintptr_t)r.s.buf, 512,
			r.s.mr->lkey, 0, 0, IBV_SEND_SIGNALED);
		got = wait_wr(r.s.scq, sid, opt.hang_ms, &wc, NULL);
		n = drain_cq(r.p.rcq, 300, 0);
		note("RQ prod = cons + %#x: SEND %s, %d receive completions",
		     d, got == 1 ? wcs(wc.status) : "no completion", n);
		if (got != 1)
			cfail("RQ prod = cons + %#x: the SEND did not complete in %d ms",
			      d, opt.hang_ms);
		if (n > (int)ring->num_slots + 1)
			cfail("RQ prod = cons + %#x: %d receive completions from %u slots",
			      d, n, ring->num_slots);
		if (ring_reconnect(&r, false))
			break;
	}
out:
	ring_teardown(&r);
}

/*
 * ring-cq-cons: the consumer index of a CQ (written by the process) is
 * garbage: ahead of the producer, far behind it, 2^31 away.  The kernel
 * may call the CQ full (and report IBV_EVENT_CQ_ERR), nothing else.
 */
static void case_ring_cq_cons(int arg)
{
	static const int32_t deltas[] = { 5, -1000, INT32_MIN };
	size_t i;

	(void)arg;
	for (i = 0; i < ARRAY_SIZE(deltas); i++) {
		struct side s = { 0 }, p = { 0 };
		struct mroce_ring *ring;
		uint32_t prod;
		unsigned int ev0 = atomic_load(&evs_n);
		int k, sent = 0, n;

		if (pair_init(&s, &p, 1 << 16, &cfg_def)) {
			pair_fini(&s, &p);
			break;
		}
		peer_recvs(&p, 16);
		ring = &to_mcq(p.rcq)->ring;
		prod = mroce_load_acquire(&ring->hdr->prod);
		mroce_store_release(&ring->hdr->cons, prod + (uint32_t)deltas[i]);
		for (k = 0; k < 8; k++)
			if (!post_wr(s.qp, IBV_WR_SEND, next_id(),
				     (uintptr_t)s.buf, 64, s.mr->lkey, 0, 0,
				     IBV_SEND_SIGNALED))
				sent++;
		n = drain_cq(s.scq, opt.hang_ms, sent);
		sleep_ms(100);
		note("CQ cons = prod + %d: %d of %d SENDs completed, CQ_ERR %s, receiver QP %s",
		     deltas[i], n, sent,
		     ev_seen(ev0, IBV_EVENT_CQ_ERR, p.rcq) ? "seen" : "not seen",
		     qps_name(qp_state(p.qp)));
		if (n < sent)
			cfail("CQ cons = prod + %d: %d of %d SENDs never completed",
			      deltas[i], sent - n, sent);
		/* put it back, so that destroy sees a sane ring */
		mroce_store_release(&ring->hdr->cons,
				    mroce_load_acquire(&ring->hdr->prod));
		pair_fini(&s, &p);
	}
}

/* ---- destroy-race: destroy QPs, CQs, MRs while traffic runs */

/* A thread that keeps one side busy: WRITEs and SENDs to the peer. */
struct traffic {
	struct side *s;
	uint32_t lkey, rkey;	/* copies: the MRs may go away under us */
	uint64_t raddr;
	size_t rlen;
	_Atomic bool stop;
	_Atomic uint64_t dead_key_after;	/* its WRs >= this: dead lkey */
	_Atomic uint64_t dead_rkey_after;	/* its WRITEs >= this: dead rkey */
	uint64_t posted, done, errors, bad_success;
	pthread_t thr;
};

static void traffic_poll(struct traffic *t)
{
	struct ibv_wc wc[32];
	int n, i;

	n = cq_poll(t->s->scq, 32, wc);
	for (i = 0; i < n; i++) {
		uint64_t dk = atomic_load(&t->dead_key_after);
		uint64_t drk = atomic_load(&t->dead_rkey_after);

		t->done++;
		if (wc[i].status != IBV_WC_SUCCESS)
			t->errors++;
		else if ((dk && wc[i].wr_id >= dk) ||
			 (drk && wc[i].wr_id >= drk && wc[i].wr_id % 3))
			t->bad_success++;
	}
	n = cq_poll(t->s->rcq, 32, wc);
	for (i = 0; i < n; i++)
		if (wc[i].status == IBV_WC_SUCCESS)
			post_recv(t->s->qp, next_id(), (uintptr_t)t->s->buf,
				  16384, t->lkey);
}

static void *traffic_main(void *arg)
{
	struct traffic *t = arg;
	int i;

	for (i = 0; i < 96; i++)
		post_recv(t->s->qp, next_id(), (uintptr_t)t->s->buf, 16384,
			  t->lkey);
	while (!atomic_load(&t->stop)) {
		uint64_t id = next_id();
		int err;

		if (t->posted - t->done < 96) {
			if (id % 3)
				err = post_wr(t->s->qp, IBV_WR_RDMA_WRITE, id,
					      (uintptr_t)t->s->buf, 65536,
					      t->lkey, t->raddr +
					      rnd(16) * 65536, t->rkey,
					      IBV_SEND_SIGNALED);
			else
				err = post_wr(t->s->qp, IBV_WR_SEND, id,
					      (uintptr_t)t->s->buf + 65536,
					      16384, t->lkey, 0, 0,
					      IBV_SEND_SIGNALED);
			if (!err)
				t->posted++;
			else
				sleep_us(500);
		}
		traffic_poll(t);
	}
	ow_release();
	return NULL;
}

static void traffic_start(struct traffic *t, struct side *s,
			  const struct side *p)
{
	memset(t, 0, sizeof(*t));
	t->s = s;
	t->lkey = s->mr->lkey;
	t->rkey = p->mr->rkey;
	t->raddr = (uintptr_t)p->buf;
	t->rlen = p->len;
	pthread_create(&t->thr, NULL, traffic_main, t);
}

static void traffic_stop(struct traffic *t)
{
	if (!t->s)
		return;
	atomic_store(&t->stop, true);
	pthread_join(t->thr, NULL);
}

/* What is left outstanding on a side must complete, one way or another. */
static void traffic_finish(struct traffic *t, const char *who)
{
	uint64_t end = now_ms() + opt.hang_ms;

	if (!t->s || !t->s->qp)
		return;
	while (t->done < t->posted && now_ms() < end) {
		traffic_poll(t);
		sleep_us(500);
	}
	if (t->done < t->posted)
		cfail("%s: %" PRIu64 " of %" PRIu64 " WRs never completed",
		      who, t->posted - t->done, t->posted);
	if (t->bad_success)
		cfail("%s: %" PRIu64 " WRs posted after their MR was deregistered completed SUCCESS",
		      who, t->bad_success);
}

struct destroyer {
	struct ibv_qp *qp;
	int err;
	uint64_t ms;
	pthread_t thr;
};

static void *destroyer_main(void *arg)
{
	struct destroyer *x = arg;
	uint64_t t0 = now_ms();

	x->err = VCALL("ibv_destroy_qp (racing)", ibv_destroy_qp(x->qp));
	x->ms = now_ms() - t0;
	ow_release();
	return NULL;
}

static const char *const race_kinds[] = {
	"destroy the sender's QP",
	"destroy the receiver's QP",
	"dereg the sender's MR",
	"dereg the receiver's MR",
	"destroy a QP and its CQs at once",
	"destroy both QPs from two threads",
};

static void recover_none(void)
{
}

static void case_destroy_race(int arg)
{
	uint64_t end = now_ms() + (uint64_t)opt.seconds * 1000, worst = 0;
	struct qpcfg c = cfg_def;
	int round = 0, per_kind[ARRAY_SIZE(race_kinds)] = { 0 };

	(void)arg;
	cs.recover = recover_none;
	c.send_wr = 128;
	c.recv_wr = 128;
	c.scqe = 512;
	c.rcqe = 512;
	c.send_sge = 1;
	c.recv_sge = 1;
	c.rnr = 1;
	while (now_ms() < end || round < (int)ARRAY_SIZE(race_kinds)) {
		int kind = round % ARRAY_SIZE(race_kinds);
		struct traffic ta, tb;
		struct side a = { 0 }, b = { 0 };
		uint64_t t0, ms = 0;
		int err = 0;

		round++;
		memset(&ta, 0, sizeof(ta));
		memset(&tb, 0, sizeof(tb));
		if (pair_init(&a, &b, 2 << 20, &c)) {
			pair_fini(&a, &b);
			break;
		}
		traffic_start(&ta, &a, &b);
		traffic_start(&tb, &b, &a);
		sleep_us(1000 + rnd(30000));
		t0 = now_ms();
		switch (kind) {
		case 0:
		case 1: {
			struct traffic *t = kind ? &tb : &ta;
			struct side *v = kind ? &b : &a;

			traffic_stop(t);
			t0 = now_ms();
			err = VCALL("ibv_destroy_qp", ibv_destroy_qp(v->qp));
			ms = now_ms() - t0;
			v->qp = NULL;
			t->s = NULL;
			break;
		}
		case 2:
		case 3: {
			struct side *v = kind == 2 ? &a : &b;
			struct traffic *t = kind == 2 ? &ta : &tb;
			struct traffic *o = kind == 2 ? &tb : &ta;
			uint64_t after;

			err = VCALL("ibv_dereg_mr", ibv_dereg_mr(v->mr));
			ms = now_ms() - t0;
			v->mr = NULL;
			/*
			 * From now on the owner's WRs name a dead lkey, the
			 * peer's WRITEs a dead rkey: none may succeed.
			 */
			after = atomic_load(&serial);
			atomic_store(&t->dead_key_after, after);
			atomic_store(&o->dead_rkey_after, after);
			break;
		}
		case 4:
			traffic_stop(&ta);
			err = VCALL("ibv_destroy_qp", ibv_destroy_qp(a.qp));
			a.qp = NULL;
			err = err ?: VCALL("ibv_destroy_cq", ibv_destroy_cq(a.scq));
			a.scq = NULL;
			err = err ?: VCALL("ibv_destroy_cq", ibv_destroy_cq(a.rcq));
			a.rcq = NULL;
			ms = now_ms() - t0;
			ta.s = NULL;
			break;
		case 5: {
			struct destroyer x = { .qp = a.qp }, y = { .qp = b.qp };

			traffic_stop(&ta);
			traffic_stop(&tb);
			pthread_create(&x.thr, NULL, destroyer_main, &x);
			pthread_create(&y.thr, NULL, destroyer_main, &y);
			pthread_join(x.thr, NULL);
			pthread_join(y.thr, NULL);
			err = x.err ?: y.err;
			ms = x.ms > y.ms ? x.ms : y.ms;
			a.qp = NULL;
			b.qp = NULL;
			ta.s = NULL;
			tb.s = NULL;
			break;
		}
		}
		per_kind[kind]++;
		if (ms > worst)
			worst = ms;
		if (err)
			cfail("round %d (%s): %s", round, race_kinds[kind],
			      ename(err));
		if (ms > (uint64_t)opt.hang_ms / 2)
			note("round %d (%s) took %" PRIu64 " ms", round,
			     race_kinds[kind], ms);
		sleep_ms(20);
		traffic_stop(&ta);
		traffic_stop(&tb);
		traffic_finish(&ta, "the sender side");
		traffic_finish(&tb, "the receiver side");
		pair_fini(&a, &b);
		kmsg_scan();
		if (cs.fails)
			break;
	}
	note("%d rounds (%d per kind of destroy at least); slowest destroy %" PRIu64 " ms",
	     round, per_kind[ARRAY_SIZE(race_kinds) - 1], worst);
	cs.recover = NULL;
}

/*
 * destroy-many: 8 pairs, each sender's SQ full of 64 KiB WRITEs (the
 * requester, its pacing timer and its loss timer busy), then every
 * sender destroyed at once, then the receivers: many chances per round
 * for a timer or a tasklet to run on a destroyed QP (issue 12 #2).
 */
#define MANY 8

static void case_destroy_many(int arg)
{
	uint64_t end = now_ms() + (uint64_t)opt.seconds * 1000, worst = 0;
	struct qpcfg c = cfg_def;
	int round = 0, i, k;

	(void)arg;
	c.send_wr = 64;
	c.send_sge = 1;
	c.scqe = 128;
	c.rnr = 1;
	while (now_ms() < end || round < 2) {
		struct side a[MANY], b[MANY];
		uint64_t t0, ms;
		int ok = 1;

		round++;
		memset(a, 0, sizeof(a));
		memset(b, 0, sizeof(b));
		for (i = 0; i < MANY && ok; i++)
			ok = !pair_init(&a[i], &b[i], 1 << 20, &c);
		for (i = 0; i < MANY && ok; i++)
			for (k = 0; k < 64; k++)
				post_wr(a[i].qp, IBV_WR_RDMA_WRITE, next_id(),
					(uintptr_t)a[i].buf, 65536, a[i].mr->lkey,
					(uintptr_t)b[i].buf + (k % 16) * 65536,
					b[i].mr->rkey, k % 8 ? 0 : IBV_SEND_SIGNALED);
		if (ok) {
			sleep_us(rnd(5000));
			t0 = now_ms();
			for (i = 0; i < MANY; i++) {
				int err = VCALL("ibv_destroy_qp",
						ibv_destroy_qp(a[i].qp));

				if (err)
					cfail("destroy_qp of a busy sender: %s",
					      ename(err));
				a[i].qp = NULL;
			}
			ms = now_ms() - t0;
			if (ms > worst)
				worst = ms;
		}
		for (i = 0; i < MANY; i++)
			pair_fini(&a[i], &b[i]);
		kmsg_scan();
		if (!ok || cs.fails)
			break;
	}
	note("%d rounds of %d busy senders destroyed at once; slowest round %" PRIu64 " ms",
	     round, MANY, worst);
}

/* ---- kill: a process killed by SIGKILL in the middle of a transfer */

struct hello {
	uint32_t qpn, psn, rkey, pad;
	uint64_t addr;
};

static int read_full(int fd, void *b, size_t n)
{
	uint8_t *p = b;

	while (n) {
		ssize_t r = read(fd, p, n);

		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			return -1;
		}
		p += r;
		n -= r;
	}
	return 0;
}

static int write_full(int fd, const void *b, size_t n)
{
	return write(fd, b, n) == (ssize_t)n ? 0 : -1;
}

/*
 * The child: its own context on dev2, one QP connected to the parent's.
 * SENDER: streams WRITEs (256 KiB) and SENDs (64 KiB) at the parent.
 * RECEIVER: keeps 1 MiB receives posted for the parent's SENDs, and takes
 * its WRITEs through a type 2 memory window (a type 1 window bound too).
 * It tells the parent "S" at its first completion and runs until it is
 * killed.
 */
static void __attribute__((noreturn))
kill_child(bool sender, int rfd, int wfd)
{
	struct ibv_device **list;
	struct fdev d = devs[1];
	struct qpcfg c = cfg_def;
	struct side s = { 0 }, peer = { 0 };
	struct ibv_mw *mw1 = NULL, *mw2 = NULL;
	struct ibv_mr *bmr = NULL;
	struct hello me, him;
	struct ibv_qp peer_qp;
	bool told = false;
	int n, i;

	alarm(60);
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), d.name))
			break;
	if (!list || i == n)
		_exit(10);
	d.ctx = ibv_open_device(list[i]);
	if (!d.ctx)
		_exit(11);
	c.send_wr = 128;
	c.recv_wr = 128;
	c.send_sge = 1;
	c.recv_sge = 1;
	c.scqe = 1024;
	c.rcqe = 1024;
	if (side_init(&s, &d, 4 << 20, &c))
		_exit(12);
	s.psn = rnd(U24_MASK + 1);
	me = (struct hello){ .qpn = s.qp->qp_num, .psn = s.psn,
			     .rkey = s.mr->rkey, .addr = (uintptr_t)s.buf };
	/*
	 * A receiving child offers its buffer through a type 2 memory
	 * window (bound through its QP, on a region of its own), with a
	 * type 1 window bound too: the kill then finds windows bound to a
	 * QP and a region, and the parent's WRITEs looking them up.
	 */
	if (!sender) {
		bmr = ibv_reg_mr(s.pd, s.buf, 4 << 20,
				 ACC_ALL | IBV_ACCESS_MW_BIND);
		mw1 = ibv_alloc_mw(s.pd, IBV_MW_TYPE_1);
		mw2 = ibv_alloc_mw(s.pd, IBV_MW_TYPE_2);
		if (!bmr || !mw1 || !mw2)
			_exit(16);
		me.rkey = ibv_inc_rkey(mw2->rkey);
	}
	if (write_full(wfd, &me, sizeof(me)) || read_full(rfd, &him, sizeof(him)))
		_exit(13);
	memset(&peer, 0, sizeof(peer));
	peer.d = &devs[0];
	peer_qp.qp_num = him.qpn;
	peer.qp = &peer_qp;
	peer.psn = him.psn;
	if (qp_init(&s) || qp_rtr(&s, &peer) || qp_rts(&s))
		_exit(14);
	if (!sender) {
		struct ibv_send_wr bw = {
			.wr_id = next_id(), .opcode = IBV_WR_BIND_MW,
			.send_flags = IBV_SEND_SIGNALED,
			.bind_mw = { .mw = mw2, .rkey = me.rkey, .bind_info = {
				.mr = bmr, .addr = (uintptr_t)s.buf,
				.length = 4 << 20,
				.mw_access_flags = IBV_ACCESS_REMOTE_WRITE } },
		}, *bad;
		struct ibv_mw_bind b1 = {
			.wr_id = next_id(), .send_flags = IBV_SEND_SIGNALED,
			.bind_info = { .mr = bmr, .addr = (uintptr_t)s.buf,
				       .length = 4096,
				       .mw_access_flags = IBV_ACCESS_REMOTE_READ },
		};
		struct ibv_wc bwc;

		if (ibv_post_send(s.qp, &bw, &bad) ||
		    wait_wr(s.scq, bw.wr_id, 5000, &bwc, NULL) != 1 ||
		    bwc.status != IBV_WC_SUCCESS ||
		    ibv_bind_mw(s.qp, mw1, &b1) ||
		    wait_wr(s.scq, b1.wr_id, 5000, &bwc, NULL) != 1 ||
		    bwc.status != IBV_WC_SUCCESS)
			_exit(17);
	}
	if (write_full(wfd, "R", 1))
		_exit(15);
	if (!sender)
		for (i = 0; i < 4; i++)
			post_recv(s.qp, next_id(), (uintptr_t)s.buf + i * (1 << 20),
				  1 << 20, s.mr->lkey);
	for (;;) {
		struct ibv_wc wc[16];
		int k;

		if (sender) {
			for (i = 0; i < 8; i++)
				post_wr(s.qp, i % 2 ? IBV_WR_SEND :
					IBV_WR_RDMA_WRITE, next_id(),
					(uintptr_t)s.buf, i % 2 ? 65536 : 262144,
					s.mr->lkey, him.addr, him.rkey,
					IBV_SEND_SIGNALED);
		}
		k = ibv_poll_cq(sender ? s.scq : s.rcq, 16, wc);
		for (i = 0; i < k; i++)
			if (!sender)
				post_recv(s.qp, next_id(), wc[i].wr_id % 4 *
					  (1 << 20) + (uintptr_t)s.buf,
					  1 << 20, s.mr->lkey);
		if (k > 0 && !told)
			told = write_full(wfd, "S", 1) == 0;
		if (k <= 0)
			sleep_us(200);
	}
}

static void print_task_stacks(pid_t pid)
{
	char path[64];
	struct dirent *e;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return;
	while ((e = readdir(dir))) {
		char f[300], line[256];
		FILE *fp;

		if (e->d_name[0] == '.')
			continue;
		snprintf(f, sizeof(f), "/proc/%d/task/%s/stack", (int)pid,
			 e->d_name);
		fp = fopen(f, "r");
		if (!fp)
			continue;
		note("  task %s:", e->d_name);
		while (fgets(line, sizeof(line), fp)) {
			line[strcspn(line, "\n")] = 0;
			note("  stack| %s", line);
		}
		fclose(fp);
	}
	closedir(dir);
}

static void case_kill(int arg)
{
	uint64_t end = now_ms() + (uint64_t)opt.seconds * 1000, worst = 0;
	struct qpcfg c = cfg_def;
	int round = 0;

	(void)arg;
	c.send_wr = 128;
	c.recv_wr = 128;
	c.send_sge = 1;
	c.recv_sge = 1;
	c.scqe = 1024;
	c.rcqe = 1024;
	c.rnr = 3;
	while (now_ms() < end || round < 4) {
		bool child_sends = round % 2 == 0;
		int to_child[2], from_child[2], status, reaped = 0;
		uint64_t posted = 0, done = 0, t_kill, waited;
		struct hello me, him;
		struct side p = { 0 }, ch = { 0 };
		struct ibv_qp ch_qp;
		char ch_c = 0;
		pid_t pid;
		int i;

		round++;
		if (side_init(&p, &devs[0], 4 << 20, &c)) {
			side_fini(&p);
			break;
		}
		if (pipe(to_child) || pipe(from_child)) {
			cfail("pipe: %s", strerror(errno));
			side_fini(&p);
			break;
		}
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			close(to_child[1]);
			close(from_child[0]);
			rng_s ^= (uint64_t)getpid() << 17;
			kill_child(child_sends, to_child[0], from_child[1]);
		}
		close(to_child[0]);
		close(from_child[1]);
		p.psn = rnd(U24_MASK + 1);
		me = (struct hello){ .qpn = p.qp->qp_num, .psn = p.psn,
				     .rkey = p.mr->rkey,
				     .addr = (uintptr_t)p.buf };
		memset(&ch, 0, sizeof(ch));
		if (read_full(from_child[0], &him, sizeof(him)) ||
		    write_full(to_child[1], &me, sizeof(me))) {
			cfail("round %d: the child did not start", round);
			goto reap;
		}
		ch.d = &devs[1];
		ch_qp.qp_num = him.qpn;
		ch.qp = &ch_qp;
		ch.psn = him.psn;
		if (qp_init(&p) || qp_rtr(&p, &ch) || qp_rts(&p) ||
		    read_full(from_child[0], &ch_c, 1)) {
			cfail("round %d: could not connect to the child", round);
			goto reap;
		}
		if (child_sends) {
			for (i = 0; i < 128; i++)
				post_recv(p.qp, next_id(), (uintptr_t)p.buf +
					  (1 << 20), 65536, p.mr->lkey);
		}
		/* traffic until the child says it streams, then a bit more */
		{
			uint64_t t_end = now_ms() + 3000, t_kill_at = 0;
			struct pollfd pf = { .fd = from_child[0],
					     .events = POLLIN };

			while (now_ms() < t_end) {
				struct ibv_wc wc[16];
				int k;

				if (!child_sends && posted - done < 8) {
					if (!post_wr(p.qp, posted % 2 ?
						     IBV_WR_SEND :
						     IBV_WR_RDMA_WRITE,
						     next_id(), (uintptr_t)p.buf,
						     1 << 20, p.mr->lkey,
						     him.addr + (2 << 20),
						     him.rkey,
						     IBV_SEND_SIGNALED))
						posted++;
				}
				k = cq_poll(p.scq, 16, wc);
				if (k > 0)
					done += k;
				k = cq_poll(p.rcq, 16, wc);
				for (i = 0; i < k; i++)
					post_recv(p.qp, next_id(),
						  (uintptr_t)p.buf + (1 << 20),
						  65536, p.mr->lkey);
				if (!t_kill_at && poll(&pf, 1, 0) == 1 &&
				    read(from_child[0], &ch_c, 1) == 1)
					t_kill_at = now_ms() + rnd(40);
				if (t_kill_at && now_ms() >= t_kill_at)
					break;
				sleep_us(100);
			}
			if (!t_kill_at)
				note("round %d: no traffic seen in 3 s; killing anyway",
				     round);
		}
reap:
		kill(pid, SIGKILL);
		t_kill = now_ms();
		while (now_ms() - t_kill < (uint64_t)2 * opt.hang_ms) {
			struct ibv_wc wc[16];
			int k = p.scq ? cq_poll(p.scq, 16, wc) : 0;

			if (k > 0)
				done += k;
			if (waitpid(pid, &status, WNOHANG) == pid) {
				reaped = 1;
				break;
			}
			sleep_ms(2);
		}
		waited = now_ms() - t_kill;
		if (waited > worst)
			worst = waited;
		close(to_child[1]);
		close(from_child[0]);
		if (!reaped) {
			cfail("round %d (child %s): the child was not gone %" PRIu64 " ms after SIGKILL",
			      round, child_sends ? "sending" : "receiving",
			      waited);
			print_task_stacks(pid);
			side_fini(&p);
			break;
		}
		/* what the parent had outstanding completes, one way or another */
		{
			uint64_t t_end = now_ms() + opt.hang_ms;

			while (done < posted && now_ms() < t_end) {
				struct ibv_wc wc[16];
				int k = cq_poll(p.scq, 16, wc);

				if (k > 0)
					done += k;
				else
					sleep_ms(1);
			}
			if (done < posted)
				cfail("round %d: %" PRIu64 " of the parent's WRs never completed after its peer died",
				      round, posted - done);
		}
		side_fini(&p);
		kmsg_scan();
		if (cs.fails)
			break;
	}
	note("%d rounds, slowest reap after SIGKILL %" PRIu64 " ms", round,
	     worst);
}

/* ---- dereg-*: ibv_dereg_mr must return promptly */

struct dereger {
	struct ibv_mr *mr;
	_Atomic bool done;
	int err;
	uint64_t t_done;
	pthread_t thr;
};

static void *dereger_main(void *arg)
{
	struct dereger *x = arg;

	/* not watched: the case times it itself */
	x->err = cnt_ret(ibv_dereg_mr(x->mr));
	x->t_done = now_ms();
	atomic_store(&x->done, true);
	return NULL;
}

static bool wait_flag(_Atomic bool *f, int ms)
{
	uint64_t end = now_ms() + ms;

	while (!atomic_load(f) && now_ms() < end)
		sleep_ms(1);
	return atomic_load(f);
}

/*
 * Deregister @mr from a thread.  It must return within --hang-ms; if it
 * does not, @unstick (move a QP to ERR) is tried and the wait goes on for
 * --hang-ms more.  Returns true when it returned in time.
 */
static bool dereg_bounded(struct ibv_mr *mr, struct ibv_qp *unstick,
			  const char *what)
{
	struct dereger x = { .mr = mr };
	uint64_t t0 = now_ms();

	pthread_create(&x.thr, NULL, dereger_main, &x);
	if (wait_flag(&x.done, opt.hang_ms)) {
		pthread_join(x.thr, NULL);
		note("ibv_dereg_mr returned %s after %" PRIu64 " ms", ename(x.err),
		     x.t_done - t0);
		if (x.err)
			cfail("ibv_dereg_mr: %s", ename(x.err));
		return true;
	}
	cfail("ibv_dereg_mr of an MR %s did not return within %d ms",
	      what, opt.hang_ms);
	{
		char path[64];
		struct dirent *e;
		DIR *dir;

		/* the dereg thread's kernel stack */
		snprintf(path, sizeof(path), "/proc/self/task");
		dir = opendir(path);
		while (dir && (e = readdir(dir))) {
			char f[300], line[256];
			bool hit = false;
			FILE *fp;

			if (e->d_name[0] == '.')
				continue;
			snprintf(f, sizeof(f), "/proc/self/task/%s/stack",
				 e->d_name);
			fp = fopen(f, "r");
			if (!fp)
				continue;
			while (fgets(line, sizeof(line), fp)) {
				if (strstr(line, "dereg"))
					hit = true;
			}
			if (hit) {
				rewind(fp);
				while (fgets(line, sizeof(line), fp)) {
					line[strcspn(line, "\n")] = 0;
					note("  stack| %s", line);
				}
			}
			fclose(fp);
		}
		if (dir)
			closedir(dir);
	}
	if (unstick) {
		uint64_t t1 = now_ms();

		note("moving QP %u to ERR to unstick it", unstick->qp_num);
		qp_to(unstick, IBV_QPS_ERR);
		if (wait_flag(&x.done, opt.hang_ms)) {
			pthread_join(x.thr, NULL);
			note("ibv_dereg_mr returned %" PRIu64 " ms after that",
			     x.t_done - t1);
			return false;
		}
		cfail("ibv_dereg_mr still stuck %d ms after the QP moved to ERR",
		      opt.hang_ms);
	}
	pthread_detach(x.thr);
	return false;
}

/*
 * dereg-send-wqe: a SEND waits for a receive (RNR, retried forever); its
 * MR is deregistered.  Dereg must return; the SEND must then fail.
 */
static void case_dereg_send(int arg)
{
	struct qpcfg c = cfg_def;
	struct side a = { 0 }, b = { 0 };
	struct ibv_wc wc;
	uint64_t id = next_id();
	int got, others = 0;

	(void)arg;
	c.rnr = 7;		/* retry forever */
	c.min_rnr = 10;
	if (pair_init(&a, &b, 1 << 16, &c))
		goto out;
	post_wr(a.qp, IBV_WR_SEND, id, (uintptr_t)a.buf, 4096, a.mr->lkey,
		0, 0, IBV_SEND_SIGNALED);
	got = wait_wr(a.scq, id, 300, &wc, &others);
	if (got) {
		cfail("setup: the SEND completed (%s) before the peer posted a receive",
		      wcs(wc.status));
		goto out;
	}
	if (dereg_bounded(a.mr, a.qp, "held by a posted SEND (peer RNR)")) {
		a.mr = NULL;
		post_recv(b.qp, next_id(), (uintptr_t)b.buf, 8192, b.mr->lkey);
		got = wait_wr(a.scq, id, opt.hang_ms, &wc, NULL);
		note("the SEND, once the peer posted a receive: %s",
		     got == 1 ? wcs(wc.status) : "no completion");
		if (got != 1)
			cfail("the SEND of the deregistered MR never completed");
		else if (wc.status == IBV_WC_SUCCESS)
			cfail("the SEND completed SUCCESS from a deregistered MR");
	} else {
		a.mr = NULL;
	}
out:
	pair_fini(&a, &b);
}

/*
 * mr-keys (issue 12 #13): keys a peer learns must not open anything
 * else.  128 MRs of one PD: no lkey equals its rkey, no rkey repeats,
 * and the rkeys differ in at least 24 of their 32 bits (before the fix
 * lkey == rkey, an index with 8 random bits).  Then a WRITE with the
 * peer MR's rkey succeeds and one naming its lkey as the rkey fails
 * IBV_WC_REM_ACCESS_ERR and leaves the memory alone (lkeys are never
 * accepted from the wire).
 */
static void case_mr_keys(int arg)
{
	enum { NMR = 128, LEN = 64 };
	struct ibv_mr *mr[NMR] = { NULL };
	struct side a = { 0 }, b = { 0 };
	int i, j, n = 0, same = 0, dup = 0, bits;
	uint32_t vary = 0;
	struct ibv_wc wc;
	uint64_t id;
	int got;

	(void)arg;
	if (pair_init(&a, &b, 1 << 16, &cfg_def))
		goto out;
	for (i = 0; i < NMR; i++, n++) {
		mr[i] = VPTR("ibv_reg_mr",
			     ibv_reg_mr(b.pd, b.buf + 4096, 4096,
					IBV_ACCESS_LOCAL_WRITE |
					IBV_ACCESS_REMOTE_WRITE));
		if (!mr[i]) {
			cfail("setup: ibv_reg_mr %d: %s", i, strerror(errno));
			goto out;
		}
		same += mr[i]->lkey == mr[i]->rkey;
		for (j = 0; j < i; j++)
			dup += mr[j]->rkey == mr[i]->rkey;
		vary |= mr[i]->rkey ^ mr[0]->rkey;
	}
	same += b.mr->lkey == b.mr->rkey;
	bits = __builtin_popcount(vary);
	note("%d MRs: lkey == rkey for %d, %d repeated rkeys, the rkeys differ in %d of 32 bits",
	     NMR + 1, same, dup, bits);
	if (same)
		cfail("%d MRs have lkey == rkey: a READ's sink key opens the requester's memory",
		      same);
	if (dup)
		cfail("%d rkeys repeat among %d MRs", dup, NMR);
	if (bits < 24)
		cfail("the rkeys of %d MRs differ in only %d bits: guessable", NMR, bits);

	/* the control: the right rkey writes */
	memset(b.buf, 0x5a, LEN);
	memset(a.buf, 0xc3, LEN);
	id = next_id();
	post_wr(a.qp, IBV_WR_RDMA_WRITE, id, (uintptr_t)a.buf, LEN, a.mr->lkey,
		(uintptr_t)b.buf, b.mr->rkey, IBV_SEND_SIGNALED);
	got = wait_wr(a.scq, id, opt.hang_ms, &wc, NULL);
	if (got != 1 || wc.status != IBV_WC_SUCCESS || b.buf[LEN - 1] != 0xc3) {
		cfail("setup: a WRITE with the right rkey: %s",
		      got == 1 ? wcs(wc.status) : "no completion");
		goto out;
	}
	if (b.mr->lkey == b.mr->rkey)
		goto out;	/* failed above */
	memset(b.buf, 0x5a, LEN);
	memset(a.buf, 0x3c, LEN);
	id = next_id();
	post_wr(a.qp, IBV_WR_RDMA_WRITE, id, (uintptr_t)a.buf, LEN, a.mr->lkey,
		(uintptr_t)b.buf, b.mr->lkey, IBV_SEND_SIGNALED);
	got = wait_wr(a.scq, id, opt.hang_ms, &wc, NULL);
	note("a WRITE naming the peer's lkey as its rkey: %s",
	     got == 1 ? wcs(wc.status) : "no completion");
	if (got != 1)
		cfail("a WRITE naming the peer's lkey never completed");
	else if (wc.status != IBV_WC_REM_ACCESS_ERR)
		cfail("a WRITE naming the peer's lkey completed %s, not REM_ACCESS_ERR",
		      wcs(wc.status));
	for (i = 0; i < LEN; i++)
		if (b.buf[i] != 0x5a) {
			cfail("a WRITE naming the peer's lkey changed its memory (byte %d)",
			      i);
			break;
		}
out:
	for (i = 0; i < n; i++)
		if (mr[i])
			ibv_dereg_mr(mr[i]);
	pair_fini(&a, &b);
}

/*
 * dereg-half-recv: a 16 MiB SEND has started to land in the receiver's MR
 * when the sender goes to ERR: the receive WQE is half full, for ever.
 * The receiver's dereg_mr of that MR must return; the receive must not
 * complete SUCCESS.
 */
static void case_dereg_half(int arg)
{
	size_t len = 16 << 20;
	struct side a = { 0 }, b = { 0 };
	struct ibv_wc wc;
	uint64_t rid = next_id(), sid = next_id(), t0;
	const uint8_t *first, *last;
	int got, tries;

	(void)arg;
	for (tries = 0; tries < 3; tries++, len *= 2) {
		if (pair_init(&a, &b, len, &cfg_def))
			goto out;
		memset(a.buf, 0xa5, len);
		first = b.buf;
		last = b.buf + len - 1;
		post_recv(b.qp, rid, (uintptr_t)b.buf, len, b.mr->lkey);
		post_wr(a.qp, IBV_WR_SEND, sid, (uintptr_t)a.buf, len,
			a.mr->lkey, 0, 0, IBV_SEND_SIGNALED);
		t0 = now_ms();
		while (!READ_ONCE_U8(first) && now_ms() - t0 < 3000)
			sleep_us(20);
		qp_to(a.qp, IBV_QPS_ERR);	/* the sender stops */
		if (!READ_ONCE_U8(first)) {
			cfail("setup: nothing of the SEND arrived in 3 s");
			goto out;
		}
		sleep_ms(100);
		if (!READ_ONCE_U8(last) && !wait_wr(b.rcq, rid, 0, &wc, NULL))
			break;
		note("the whole %zu-byte message arrived before the sender stopped; again, larger",
		     len);
		pair_fini(&a, &b);
	}
	if (tries == 3) {
		cfail("setup: could not stop a SEND half way");
		return;
	}
	{
		size_t got_b = 0, i;

		for (i = 0; i < len; i += 4096)
			if (b.buf[i])
				got_b += 4096;
		note("%zu of %zu bytes of the SEND in the receive buffer",
		     got_b, len);
	}
	if (dereg_bounded(b.mr, b.qp, "a peer has half-written (receive WQE)")) {
		b.mr = NULL;
		qp_to(b.qp, IBV_QPS_ERR);
		got = wait_wr(b.rcq, rid, opt.hang_ms, &wc, NULL);
		note("the half-full receive, after the receiver moved to ERR: %s",
		     got == 1 ? wcs(wc.status) : "no completion");
		if (got == 1 && wc.status == IBV_WC_SUCCESS)
			cfail("the half-full receive completed SUCCESS");
	} else {
		b.mr = NULL;
	}
out:
	pair_fini(&a, &b);
}

/* ---- cq-overflow-*: more completions than a CQ holds */

static void case_cq_overflow(int recv_side)
{
	struct qpcfg c = cfg_def;
	struct side a = { 0 }, b = { 0 };
	struct ibv_cq *small;
	struct ibv_qp *victim;
	unsigned int ev0;
	int i, n, sent = 0, ok = 0, polled, cqe;
	uint64_t t0;

	c.rnr = 1;
	if (recv_side)
		c.rcqe = 4;
	else
		c.scqe = 4;
	if (side_init(&a, &devs[0], 1 << 16, recv_side ? &cfg_def : &c) ||
	    side_init(&b, &devs[1], 1 << 16, recv_side ? &c : &cfg_def) ||
	    pair_up(&a, &b))
		goto out;
	small = recv_side ? b.rcq : a.scq;
	victim = recv_side ? b.qp : a.qp;
	cqe = small->cqe;
	n = 4 * cqe + 4;
	if (n > 60)
		n = 60;
	ev0 = atomic_load(&evs_n);
	for (i = 0; i < n; i++)
		post_recv(b.qp, next_id(), (uintptr_t)b.buf + i * 64, 64,
			  b.mr->lkey);
	for (i = 0; i < n; i++)
		if (!post_wr(a.qp, recv_side ? IBV_WR_SEND : IBV_WR_RDMA_WRITE,
			     next_id(), (uintptr_t)a.buf, 64, a.mr->lkey,
			     (uintptr_t)b.buf + 8192, b.mr->rkey,
			     IBV_SEND_SIGNALED))
			sent++;
	if (recv_side) {	/* the sender's completions: all of them */
		uint64_t end = now_ms() + opt.hang_ms;
		int got = 0;

		while (got < sent && now_ms() < end) {
			struct ibv_wc wc[16];
			int k = cq_poll(a.scq, 16, wc), j;

			for (j = 0; j < k; j++)
				ok += wc[j].status == IBV_WC_SUCCESS;
			got += k > 0 ? k : 0;
			if (k <= 0)
				sleep_ms(1);
		}
	} else {
		sleep_ms(500);
	}
	t0 = now_ms();
	while (!ev_seen(ev0, IBV_EVENT_CQ_ERR, small) && now_ms() - t0 < 2000)
		sleep_ms(10);
	sleep_ms(100);
	polled = drain_cq(small, 200, 0);
	if (recv_side)
		note("CQ of %d entries: %d SENDs into as many receives posted, %d succeeded; %d completions polled from the small CQ",
		     cqe, sent, ok, polled);
	else
		note("CQ of %d entries: %d signaled WRITEs posted; %d completions polled from the small CQ",
		     cqe, sent, polled);
	ev_list(ev0, "small CQ");
	note("QP %u (the small CQ's) is %s", victim->qp_num,
	     qps_name(qp_state(victim)));
	if (!ev_seen(ev0, IBV_EVENT_CQ_ERR, small))
		cfail("no IBV_EVENT_CQ_ERR for the overflowing CQ");
	if (qp_state(victim) != IBV_QPS_ERR)
		cfail("the QP of the overflowed CQ is still %s: completions were dropped silently",
		      qps_name(qp_state(victim)));
out:
	pair_fini(&a, &b);
}

/* ---- scale-*: many QPs, many create/destroy cycles */

struct memsnap {
	long slab, sunreclaim, vmalloc, memfree, pagetables, percpu;
	long long memcg;	/* bytes, -1: no memory cgroup */
	long anon;		/* this process's RssAnon, kB */
};

static long meminfo_kb(const char *buf, const char *key)
{
	const char *p = strstr(buf, key);

	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

static char memcg_path[320];

static void memcg_find(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/cgroup", "r");

	memcg_path[0] = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "0::", 3) && strcmp(line + 3, "/")) {
			snprintf(memcg_path, sizeof(memcg_path),
				 "/sys/fs/cgroup%s/memory.current", line + 3);
			if (access(memcg_path, R_OK))
				memcg_path[0] = 0;
		}
	}
	fclose(f);
}

/*
 * Hand parked slab memory back before a snapshot.  A KASAN kernel keeps
 * freed objects in its quarantine (up to 1/32 of RAM, so the growth of a
 * create/destroy loop is whatever the quarantine happens to hold) and
 * gives a cache's objects back only when that cache is shrunk; SLUB keeps
 * empty slabs on partial lists.  Shrinking every cache releases both
 * (root only: /sys/kernel/slab/CACHE/shrink), so what two snapshots differ
 * by is memory still allocated.  Best effort: a cache that refuses is
 * left as it is.
 */
static void mem_settle(void)
{
	DIR *d = opendir("/sys/kernel/slab");
	struct dirent *e;
	char path[PATH_MAX];
	int fd;

	if (!d)
		return;
	while ((e = readdir(d))) {
		/* aliases are symbolic links to a cache listed once anyway */
		if (e->d_name[0] == '.' || e->d_type == DT_LNK)
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink",
			 e->d_name);
		fd = open(path, O_WRONLY);
		if (fd < 0)
			continue;
		if (write(fd, "1", 1) < 0)
			vnote("shrinking slab cache %s: %s", e->d_name,
			      strerror(errno));
		close(fd);
	}
	closedir(d);
}

static void mem_snap(struct memsnap *m)
{
	char buf[8192];
	ssize_t n;
	int fd;

	mem_settle();
	memset(m, 0, sizeof(*m));
	fd = open("/proc/meminfo", O_RDONLY);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
	m->slab = meminfo_kb(buf, "\nSlab:");
	m->sunreclaim = meminfo_kb(buf, "\nSUnreclaim:");
	m->vmalloc = meminfo_kb(buf, "\nVmallocUsed:");
	m->memfree = meminfo_kb(buf, "MemFree:");
	m->pagetables = meminfo_kb(buf, "\nPageTables:");
	m->percpu = meminfo_kb(buf, "\nPercpu:");
	fd = open("/proc/self/status", O_RDONLY);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
	m->anon = meminfo_kb(buf, "RssAnon:");
	m->memcg = -1;
	if (memcg_path[0]) {
		FILE *f = fopen(memcg_path, "r");

		if (f) {
			if (fscanf(f, "%lld", &m->memcg) != 1)
				m->memcg = -1;
			fclose(f);
		}
	}
}

/* Kernel memory: slab + vmalloc + page tables + percpu, kB. */
static long mem_kernel(const struct memsnap *m)
{
	return m->slab + m->vmalloc + m->pagetables + m->percpu;
}

struct slabent {
	char name[48];
	long long bytes;
	long objs, objsize;
};

#define SLAB_MAX 400

static int slab_read(struct slabent *v)
{
	char line[512];
	FILE *f = fopen("/proc/slabinfo", "r");
	int n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f) && n < SLAB_MAX) {
		long act, num, sz;

		if (line[0] == '#' || !strncmp(line, "slabinfo", 8))
			continue;
		if (sscanf(line, "%47s %ld %ld %ld", v[n].name, &act, &num,
			   &sz) != 4)
			continue;
		v[n].objs = act;
		v[n].objsize = sz;
		v[n].bytes = (long long)num * sz;
		n++;
	}
	fclose(f);
	return n;
}

/*
 * Print the slab caches that grew most between @a and @b, per QP; return
 * the growth of all of them in KiB (kmalloc() of more than 8 KiB goes to
 * the page allocator: counted in Slab of /proc/meminfo, not here).
 */
static long slab_diff(const struct slabent *a, int na, const struct slabent *b,
		      int nb, int nqp)
{
	long long sum = 0;
	struct { const char *name; long long d; long dobj, sz; } top[6];
	char buf[600];
	int i, j, k, ntop = 0, len = 0;

	for (i = 0; i < nb; i++) {
		long long d = b[i].bytes;
		long dobj = b[i].objs;

		for (j = 0; j < na; j++)
			if (!strcmp(a[j].name, b[i].name)) {
				d -= a[j].bytes;
				dobj -= a[j].objs;
				break;
			}
		sum += d;
		if (d <= 0)
			continue;
		for (k = ntop; k > 0 && top[k - 1].d < d; k--)
			if (k < 6)
				top[k] = top[k - 1];
		if (k < 6) {
			top[k].name = b[i].name;
			top[k].d = d;
			top[k].dobj = dobj;
			top[k].sz = b[i].objsize;
			if (ntop < 6)
				ntop++;
		}
	}
	for (i = 0; i < ntop; i++)
		len += snprintf(buf + len, sizeof(buf) - len,
				"%s %s +%ld x %ld B (%.1f KiB/QP)", i ? ";" : "",
				top[i].name, top[i].dobj, top[i].sz,
				top[i].d / 1024.0 / nqp);
	note("slab caches that grew most:%s", ntop ? buf : " none");
	return (long)(sum / 1024);
}

static void mem_report(const char *what, const struct memsnap *a,
		       const struct memsnap *b, int nqp)
{
	long dk = mem_kernel(b) - mem_kernel(a);

	note("%s: kernel memory %+ld KiB (slab %+ld, vmalloc %+ld, page tables %+ld, percpu %+ld), MemFree %+ld KiB: %.1f KiB per QP",
	     what, dk, b->slab - a->slab, b->vmalloc - a->vmalloc,
	     b->pagetables - a->pagetables, b->percpu - a->percpu,
	     b->memfree - a->memfree, nqp ? (double)dk / nqp : 0.0);
}

static double scale_kib_per_qp = -1;

static void case_scale_qps(int arg)
{
	int nqp = opt.scale_qps & ~1, npair = nqp / 2, i, ncreated = 0, ok;
	static struct slabent sa[SLAB_MAX], sb[SLAB_MAX];
	struct memsnap m0, m1, m2, m3;
	struct qpcfg c = cfg_def;
	struct side base[NDEV];
	struct ibv_qp **qa, **qb;
	uint64_t t0, t_create, t_conn = 0, t_data, t_destroy;
	int nsa, nsb, d;

	(void)arg;
	memset(base, 0, sizeof(base));
	c.send_wr = 4;
	c.recv_wr = 4;
	c.send_sge = 1;
	c.recv_sge = 1;
	c.max_inline = 0;
	c.scqe = npair + 16;
	c.rcqe = 16;
	qa = calloc(npair, sizeof(*qa));
	qb = calloc(npair, sizeof(*qb));
	if (!qa || !qb)
		goto out;
	for (d = 0; d < NDEV; d++)
		if (side_init(&base[d], &devs[d], (size_t)npair * 4096, &c))
			goto out;
	/* the QPs above come from side_init; remove them from the count */
	for (d = 0; d < NDEV; d++) {
		VCALL("ibv_destroy_qp", ibv_destroy_qp(base[d].qp));
		base[d].qp = NULL;
	}
	sleep_ms(200);
	mem_snap(&m0);
	nsa = slab_read(sa);
	t0 = now_us();
	for (i = 0; i < npair; i++) {
		qa[i] = qp_create(&base[0]);
		qb[i] = qp_create(&base[1]);
		if (!qa[i] || !qb[i]) {
			cfail("creating QP %d of %d: %s", ncreated + 1, nqp,
			      strerror(errno));
			break;
		}
		ncreated += 2;
	}
	t_create = now_us() - t0;
	mem_snap(&m1);
	nsb = slab_read(sb);
	note("%d QPs created in %.2f s (%.0f us each)", ncreated,
	     t_create / 1e6, ncreated ? (double)t_create / ncreated : 0.0);
	mem_report("after creating them", &m0, &m1, ncreated);
	{
		long cached = slab_diff(sa, nsa, sb, nsb,
					ncreated ? ncreated : 1);

		note("kmalloc > 8 KiB (page allocator, in Slab only): %+ld KiB, %.1f KiB per QP",
		     m1.slab - m0.slab - cached, ncreated ?
		     (double)(m1.slab - m0.slab - cached) / ncreated : 0.0);
	}
	if (ncreated)
		scale_kib_per_qp = (double)(mem_kernel(&m1) - mem_kernel(&m0)) /
				   ncreated;
	if (ncreated < nqp)
		goto destroy;

	/* connect the pairs, one 4 KiB WRITE each, verified */
	t0 = now_us();
	for (i = 0; i < npair; i++) {
		struct side x = base[0], y = base[1];

		x.qp = qa[i];
		y.qp = qb[i];
		x.psn = rnd(U24_MASK + 1);
		y.psn = rnd(U24_MASK + 1);
		if (qp_init(&x) || qp_init(&y) || qp_rtr(&x, &y) ||
		    qp_rtr(&y, &x) || qp_rts(&x) || qp_rts(&y)) {
			cfail("connecting pair %d of %d", i + 1, npair);
			goto destroy;
		}
	}
	t_conn = now_us() - t0;
	mem_snap(&m2);
	note("%d pairs connected in %.2f s", npair, t_conn / 1e6);
	mem_report("after connecting them", &m0, &m2, ncreated);
	for (i = 0; i < npair; i++)
		memset(base[0].buf + (size_t)i * 4096, (i * 7 + 1) & 0xff, 4096);
	t0 = now_us();
	ok = 0;
	for (i = 0; i < npair; i++)
		if (post_wr(qa[i], IBV_WR_RDMA_WRITE, i,
			    (uintptr_t)base[0].buf + (size_t)i * 4096, 4096,
			    base[0].mr->lkey,
			    (uintptr_t)base[1].buf + (size_t)i * 4096,
			    base[1].mr->rkey, IBV_SEND_SIGNALED))
			cfail("posting the WRITE of pair %d", i);
	{
		uint64_t end = now_ms() + 60000;
		int got = 0;

		while (got < npair && now_ms() < end) {
			struct ibv_wc wc[64];
			int k = cq_poll(base[0].scq, 64, wc), j;

			for (j = 0; j < k; j++)
				ok += wc[j].status == IBV_WC_SUCCESS;
			got += k > 0 ? k : 0;
			if (k <= 0)
				sleep_ms(1);
		}
		t_data = now_us() - t0;
		for (i = 0; i < npair; i++) {
			uint8_t want = (i * 7 + 1) & 0xff;
			const uint8_t *p = base[1].buf + (size_t)i * 4096;

			if (p[0] != want || p[4095] != want ||
			    memcmp(p, p + 1, 4095))
				break;
		}
		note("%d WRITEs over %d connections: %d completed, %d SUCCESS, data %s, in %.2f s",
		     npair, npair, got, ok, i == npair ? "verified" : "WRONG",
		     t_data / 1e6);
		if (ok != npair)
			cfail("%d of %d WRITEs did not succeed", npair - ok, npair);
		if (i != npair)
			cfail("the data of pair %d is wrong", i);
	}
destroy:
	t0 = now_us();
	for (i = 0; i < npair; i++) {
		if (qa[i] && VCALL("ibv_destroy_qp", ibv_destroy_qp(qa[i])))
			cfail("destroying a QP");
		if (qb[i] && VCALL("ibv_destroy_qp", ibv_destroy_qp(qb[i])))
			cfail("destroying a QP");
	}
	t_destroy = now_us() - t0;
	sleep_ms(500);
	mem_snap(&m3);
	note("%d QPs destroyed in %.2f s", ncreated, t_destroy / 1e6);
	mem_report("left after destroying them", &m0, &m3, 0);
	outf("# RESULT scale-qps qps=%d create_us_per_qp=%.0f kernel_kib_per_qp=%.1f connect_s=%.2f destroy_s=%.2f",
	     ncreated, ncreated ? (double)t_create / ncreated : 0.0,
	     scale_kib_per_qp, t_conn / 1e6, t_destroy / 1e6);
out:
	free(qa);
	free(qb);
	for (d = 0; d < NDEV; d++)
		side_fini(&base[d]);
}

static void case_scale_cycles(int arg)
{
	struct qpcfg c = cfg_def;
	struct memsnap m0, m1;
	struct side base = { 0 };
	uint64_t t0, t;
	int i, n = opt.scale_cycles;
	long leak;

	(void)arg;
	c.send_wr = 16;
	c.recv_wr = 16;
	if (side_init(&base, &devs[0], 1 << 16, &c))
		goto out;
	VCALL("ibv_destroy_qp", ibv_destroy_qp(base.qp));
	base.qp = NULL;
	/* warm up the caches, then measure */
	for (i = 0; i < 50; i++) {
		struct ibv_qp *qp = qp_create(&base);

		if (qp)
			VCALL("ibv_destroy_qp", ibv_destroy_qp(qp));
	}
	sleep_ms(200);
	mem_snap(&m0);
	t0 = now_us();
	for (i = 0; i < n; i++) {
		struct ibv_qp *qp = qp_create(&base);
		struct side x = base;

		if (!qp) {
			cfail("cycle %d: ibv_create_qp: %s", i, strerror(errno));
			break;
		}
		x.qp = qp;
		if (i % 2 && qp_init(&x))
			cfail("cycle %d: modify to INIT", i);
		if (VCALL("ibv_destroy_qp", ibv_destroy_qp(qp))) {
			cfail("cycle %d: ibv_destroy_qp", i);
			break;
		}
		if (i && i % 2000 == 0)
			vnote("%d cycles, %.0f us each", i,
			      (double)(now_us() - t0) / i);
	}
	t = now_us() - t0;
	sleep_ms(500);
	mem_snap(&m1);
	leak = mem_kernel(&m1) - mem_kernel(&m0);
	note("%d create/destroy cycles in %.2f s (%.0f us each); kernel memory %+ld KiB after them (slab %+ld, vmalloc %+ld)",
	     i, t / 1e6, i ? (double)t / i : 0.0, leak, m1.slab - m0.slab,
	     m1.vmalloc - m0.vmalloc);
	outf("# RESULT scale-cycles cycles=%d us_per_cycle=%.0f kernel_kib_delta=%ld",
	     i, i ? (double)t / i : 0.0, leak);
	/* more than 200 bytes per cycle and 2 MiB in all: a leak */
	if (leak > 2048 && leak * 1024 > 200L * i)
		cfail("kernel memory grew by %ld KiB over %d cycles", leak, i);
out:
	side_fini(&base);
}

/*
 * scale-memcg: kernel memory of QPs is charged to the creator's memory
 * cgroup (issue 12 #9: accounted allocations).  1024 QPs; compare the
 * cgroup's growth (less the process's own anonymous memory) with the
 * kernel's.
 */
static void case_scale_memcg(int arg)
{
	int n = opt.scale_qps < 1024 ? opt.scale_qps : 1024, i, made = 0;
	struct qpcfg c = cfg_def;
	struct memsnap m0, m1;
	struct ibv_qp **q;
	struct side base = { 0 };
	long dk;
	long long dcg;

	(void)arg;
	memcg_find();
	if (!memcg_path[0]) {
		cfail("not in a memory cgroup of its own (run it in one: the test does)");
		return;
	}
	c.send_wr = 4;
	c.recv_wr = 4;
	c.send_sge = 1;
	c.recv_sge = 1;
	q = calloc(n, sizeof(*q));
	if (!q || side_init(&base, &devs[0], 1 << 16, &c))
		goto out;
	sleep_ms(100);
	mem_snap(&m0);
	for (i = 0; i < n; i++) {
		q[i] = qp_create(&base);
		if (!q[i])
			break;
		made++;
	}
	mem_snap(&m1);
	dk = mem_kernel(&m1) - mem_kernel(&m0);
	dcg = m1.memcg - m0.memcg - (long long)(m1.anon - m0.anon) * 1024;
	note("%d QPs: kernel memory %+ld KiB, memory cgroup %+lld KiB (%.1f of %.1f KiB per QP charged)",
	     made, dk, dcg / 1024, made ? dcg / 1024.0 / made : 0.0,
	     made ? (double)dk / made : 0.0);
	outf("# RESULT scale-memcg qps=%d kernel_kib_per_qp=%.1f charged_kib_per_qp=%.1f",
	     made, made ? (double)dk / made : 0.0,
	     made ? dcg / 1024.0 / made : 0.0);
	if (made < n)
		cfail("created only %d of %d QPs", made, n);
	if (dk > 0 && dcg / 1024 < dk / 2)
		cfail("only %lld of %ld KiB of the QPs' kernel memory charged to the creator's memory cgroup",
		      dcg / 1024, dk);
	for (i = 0; i < made; i++)
		VCALL("ibv_destroy_qp", ibv_destroy_qp(q[i]));
out:
	free(q);
	side_fini(&base);
}

/* ---- random: random valid and invalid verb sequences */

#define R_PD	6
#define R_CQ	8
#define R_MR	12
#define R_QP	12
#define R_AH	6
#define ARENA	(16 << 20)
#define WR_SLOTS (1 << 18)

struct rpd { struct ibv_pd *pd; int dev, users; };
struct rcq { struct ibv_cq *cq; int dev, users; };
struct rmr { struct ibv_mr *mr; int dev, pd, access; uint8_t *addr; size_t len; };
struct rah { struct ibv_ah *ah; int dev, pd; };
struct rqp {
	struct ibv_qp *qp;
	int dev, pd, scq, rcq, type;
	int peer;		/* pool index of the connected QP, -1 */
	int access;		/* qp_access_flags it was connected with */
	bool tainted;		/* attributes changed since: no expectations */
	uint32_t send_sge, recv_sge, max_inline;
};

static struct {
	struct rpd pd[R_PD];
	struct rcq cq[R_CQ];
	struct rmr mr[R_MR];
	struct rqp qp[R_QP];
	struct rah ah[R_AH];
	uint8_t *arena;
	/* posted WRs: wr_id = serial; a slot per serial */
	uint64_t wr_id[WR_SLOTS];
	uint8_t wr_must_fail[WR_SLOTS];	/* why it cannot succeed, 0: may */
	uint8_t wr_live[WR_SLOTS];
	uint64_t nops[32], nerr[32];
	uint64_t bad_success, unknown, dup;
	pthread_mutex_t lock;
} R = { .lock = PTHREAD_MUTEX_INITIALIZER };

enum {
	WHY_NONE, WHY_LKEY, WHY_RKEY, WHY_WRAP, WHY_SINK, WHY_ATOMIC_LEN,
	WHY_ACCESS, WHY_OPCODE, WHY_INV,
};

static const char *const why_s[] = {
	"-", "its local SGE names no MR of the QP's PD (or lies outside it)",
	"its rkey/range names no MR of the peer's PD",
	"its remote range wraps past 2^64",
	"its READ/atomic sink MR has no LOCAL_WRITE",
	"its atomic is not 8 bytes", "the peer QP does not allow it",
	"its opcode is not valid on the QP",
	"its SEND_WITH_INV or LOCAL_INV names nothing to invalidate",
};

enum {
	OP_ALLOC_PD, OP_DEALLOC_PD, OP_CREATE_CQ, OP_DESTROY_CQ, OP_RESIZE_CQ,
	OP_NOTIFY, OP_POLL, OP_REG_MR, OP_DEREG_MR, OP_CREATE_QP,
	OP_DESTROY_QP, OP_MODIFY, OP_CONNECT, OP_QUERY_QP, OP_POST_SEND,
	OP_POST_RECV, OP_CREATE_AH, OP_DESTROY_AH, OP_QUERY, OP_RING,
	OP_N
};

static const char *const op_s[OP_N] = {
	"alloc_pd", "dealloc_pd", "create_cq", "destroy_cq", "resize_cq",
	"req_notify_cq", "poll_cq", "reg_mr", "dereg_mr", "create_qp",
	"destroy_qp", "modify_qp", "connect", "query_qp", "post_send",
	"post_recv", "create_ah", "destroy_ah", "query_*", "ring garbage",
};

static const int op_w[OP_N] = {
	3, 2, 4, 2, 2, 2, 12, 5, 3, 5, 2, 10, 6, 3, 20, 10, 2, 2, 2, 2,
};

static int pick_free(const void *base, size_t stride, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!*(void *const *)((const uint8_t *)base + i * stride))
			return i;
	return -1;
}

static int pick_live(const void *base, size_t stride, size_t devoff, int n,
		     int dev)
{
	int i, c = 0, r = -1;

	for (i = 0; i < n; i++) {
		const uint8_t *e = (const uint8_t *)base + i * stride;

		if (!*(void *const *)e)
			continue;
		if (dev >= 0 && *(const int *)(e + devoff) != dev)
			continue;
		if (rnd(++c) == 0)
			r = i;
	}
	return r;
}

#define LIVE(arr, n, on) pick_live((arr), sizeof((arr)[0]),		\
				   offsetof(__typeof__((arr)[0]), dev), n, on)
#define FREE(arr, n) pick_free((arr), sizeof((arr)[0]), n)

static void r_count(int op, int err)
{
	R.nops[op]++;
	if (err)
		R.nerr[op]++;
}

/* The watchdog's way out of a hung dereg: every QP to ERR. */
static void r_recover(void)
{
	int i;

	pthread_mutex_lock(&R.lock);
	for (i = 0; i < R_QP; i++)
		if (R.qp[i].qp) {
			struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

			ibv_modify_qp(R.qp[i].qp, &a, IBV_QP_STATE);
		}
	pthread_mutex_unlock(&R.lock);
}

/* Is [addr, addr + len) inside a live MR of device @dev and PD @pd with
 * @access, whose key is @key?
 */
static bool r_key_ok(int dev, int pd, uint32_t key, bool remote,
		     uint64_t addr, uint64_t len, int access)
{
	int i;

	for (i = 0; i < R_MR; i++) {
		const struct rmr *m = &R.mr[i];

		if (!m->mr || m->dev != dev || m->pd != pd)
			continue;
		if ((remote ? m->mr->rkey : m->mr->lkey) != key)
			continue;
		if ((m->access & access) != access)
			return false;
		if (addr + len < addr)
			return false;
		return addr >= (uintptr_t)m->addr &&
		       addr + len <= (uintptr_t)m->addr + m->len;
	}
	return false;
}

/* A random SGE: mostly inside a live MR of the QP's device and PD. */
static void r_sge(const struct rqp *q, struct ibv_sge *sge)
{
	int m = LIVE(R.mr, R_MR, q->dev);

	if (m >= 0 && R.mr[m].pd == q->pd && chance(85)) {
		const struct rmr *r = &R.mr[m];
		size_t off = rnd(r->len);

		sge->addr = (uintptr_t)r->addr + off;
		sge->length = rnd(r->len - off < 8192 ? r->len - off : 8192) + 1;
		sge->lkey = r->mr->lkey;
		if (chance(5))
			sge->length = rnd_u32_edge();
	} else if (m >= 0 && chance(50)) {
		sge->addr = (uintptr_t)R.mr[m].addr;
		sge->length = rnd(4096);
		sge->lkey = chance(50) ? R.mr[m].mr->lkey : (uint32_t)rnd64();
	} else {
		sge->addr = chance(50) ? rnd_addr_edge() :
			    (uintptr_t)R.arena + rnd(ARENA);
		sge->length = rnd_u32_edge();
		sge->lkey = (uint32_t)rnd64();
	}
}

static void r_track(uint64_t id, int why)
{
	R.wr_id[id % WR_SLOTS] = id;
	R.wr_must_fail[id % WR_SLOTS] = (uint8_t)why;
	R.wr_live[id % WR_SLOTS] = 1;
}

static void r_complete(const struct ibv_wc *wc)
{
	uint64_t id = wc->wr_id, k = id % WR_SLOTS;

	if (R.wr_id[k] != id) {
		R.unknown++;
		if (R.unknown <= 3)
			cfail("a completion for wr_id %#" PRIx64 " that was never posted (%s)",
			      id, wcs(wc->status));
		return;
	}
	if (!R.wr_live[k]) {
		R.dup++;
		if (R.dup <= 3)
			cfail("WR %" PRIu64 " completed twice (%s)", id,
			      wcs(wc->status));
		return;
	}
	R.wr_live[k] = 0;
	if (wc->status == IBV_WC_SUCCESS && R.wr_must_fail[k]) {
		R.bad_success++;
		if (R.bad_success <= 5)
			cfail("WR %" PRIu64 " completed SUCCESS although %s", id,
			      why_s[R.wr_must_fail[k]]);
	}
}

static void r_poll(int c)
{
	struct ibv_wc wc[64];
	int n, i;

	n = cq_poll(R.cq[c].cq, 1 + rnd(64), wc);
	r_count(OP_POLL, n < 0);
	for (i = 0; i < n; i++)
		r_complete(&wc[i]);
}

/* Allowed transitions of the IB state machine (RC/UC), as a bitmask. */
static const int next_ok[7] = {
	[IBV_QPS_RESET] = 1 << IBV_QPS_RESET | 1 << IBV_QPS_INIT |
			  1 << IBV_QPS_ERR,
	[IBV_QPS_INIT] = 1 << IBV_QPS_RESET | 1 << IBV_QPS_INIT |
			 1 << IBV_QPS_RTR | 1 << IBV_QPS_ERR,
	[IBV_QPS_RTR] = 1 << IBV_QPS_RESET | 1 << IBV_QPS_RTS |
			1 << IBV_QPS_ERR,
	[IBV_QPS_RTS] = 1 << IBV_QPS_RESET | 1 << IBV_QPS_RTS |
			1 << IBV_QPS_SQD | 1 << IBV_QPS_ERR,
	[IBV_QPS_SQD] = 1 << IBV_QPS_RESET | 1 << IBV_QPS_RTS |
			1 << IBV_QPS_SQD | 1 << IBV_QPS_ERR,
	[IBV_QPS_SQE] = 1 << IBV_QPS_RESET | 1 << IBV_QPS_RTS |
			1 << IBV_QPS_ERR,
	[IBV_QPS_ERR] = 1 << IBV_QPS_RESET | 1 << IBV_QPS_ERR,
};

/* The attributes a transition needs (and, some of the time, may take). */
static int trans_mask(int cur, int next)
{
	int m = 0;

	if (cur == IBV_QPS_RESET && next == IBV_QPS_INIT)
		m = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
	else if (cur == IBV_QPS_INIT && next == IBV_QPS_INIT)
		m = chance(50) ? IBV_QP_ACCESS_FLAGS : IBV_QP_PKEY_INDEX;
	else if (cur == IBV_QPS_INIT && next == IBV_QPS_RTR)
		m = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
		    IBV_QP_MIN_RNR_TIMER |
		    (chance(30) ? IBV_QP_ACCESS_FLAGS : 0);
	else if (cur == IBV_QPS_RTR && next == IBV_QPS_RTS)
		m = IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		    IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC |
		    (chance(30) ? IBV_QP_MIN_RNR_TIMER : 0);
	else if ((cur == IBV_QPS_RTS || cur == IBV_QPS_SQD) &&
		 next == IBV_QPS_RTS)
		m = (chance(50) ? IBV_QP_ACCESS_FLAGS : 0) |
		    (chance(50) ? IBV_QP_MIN_RNR_TIMER : 0) |
		    (chance(20) ? IBV_QP_CUR_STATE : 0);
	return m;
}

static void r_modify(int i)
{
	static const int bits[] = {
		IBV_QP_CUR_STATE, IBV_QP_EN_SQD_ASYNC_NOTIFY,
		IBV_QP_ACCESS_FLAGS, IBV_QP_PKEY_INDEX, IBV_QP_PORT,
		IBV_QP_QKEY, IBV_QP_AV, IBV_QP_PATH_MTU, IBV_QP_TIMEOUT,
		IBV_QP_RETRY_CNT, IBV_QP_RNR_RETRY, IBV_QP_RQ_PSN,
		IBV_QP_MAX_QP_RD_ATOMIC, IBV_QP_ALT_PATH,
		IBV_QP_MIN_RNR_TIMER, IBV_QP_SQ_PSN, IBV_QP_MAX_DEST_RD_ATOMIC,
		IBV_QP_PATH_MIG_STATE, IBV_QP_CAP, IBV_QP_DEST_QPN,
	};
	struct rqp *q = &R.qp[i];
	struct ibv_qp_attr a;
	int mask = IBV_QP_STATE, cur, err, now, b;
	bool lie = false;
	size_t k;

	cur = qp_state(q->qp);
	memset(&a, 0, sizeof(a));
	a.qp_state = chance(2) ? 7 + rnd(3) : rnd(7);
	for (k = 0; k < ARRAY_SIZE(bits); k++)
		if (chance(25))
			mask |= bits[k];
	if (!chance(10))
		mask &= ~(IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE | IBV_QP_CAP |
			  IBV_QP_EN_SQD_ASYNC_NOTIFY);
	if (cur >= 0 && cur < 7 && chance(60)) {
		/* a transition the state machine has, with its attributes */
		do
			a.qp_state = rnd(7);
		while (!(next_ok[cur] & 1 << a.qp_state));
		mask = IBV_QP_STATE | trans_mask(cur, a.qp_state);
		if (chance(10))
			mask |= bits[rnd(ARRAY_SIZE(bits))];
	}
	a.cur_qp_state = rnd(7);
	a.qp_access_flags = rnd(16) | (chance(5) ? rnd64() : 0);
	a.pkey_index = chance(90) ? 0 : rnd(4);
	a.port_num = chance(90) ? PORT : rnd(3);
	a.qkey = (uint32_t)rnd64();
	a.path_mtu = chance(90) ? 1 + rnd(5) : rnd(8);
	a.timeout = rnd(32);
	a.retry_cnt = rnd(8);
	a.rnr_retry = rnd(8);
	a.rq_psn = (uint32_t)rnd64();
	a.sq_psn = (uint32_t)rnd64();
	a.max_rd_atomic = chance(90) ? rnd(17) : rnd(256);
	a.max_dest_rd_atomic = chance(90) ? rnd(17) : rnd(256);
	a.min_rnr_timer = rnd(32);
	b = LIVE(R.qp, R_QP, -1);
	a.dest_qp_num = b >= 0 && chance(80) ? R.qp[b].qp->qp_num :
			rnd_u32_edge();
	ah_to(&a.ah_attr, &(struct side){ .d = &devs[q->dev] },
	      &devs[chance(50)]);
	if (chance(10))
		a.ah_attr.grh.sgid_index = rnd(256);
	if (chance(5))
		a.ah_attr.is_global = 0;
	if (chance(5))
		a.ah_attr.port_num = rnd(3);
	err = qp_modify(q->qp, &a, mask);
	r_count(OP_MODIFY, err);
	/* (a claim of ERR may have come true meanwhile: not counted) */
	if ((mask & IBV_QP_CUR_STATE) && cur >= 0 &&
	    (int)a.cur_qp_state != cur && a.cur_qp_state != IBV_QPS_ERR)
		lie = true;
	if (!err && lie)
		cfail("modify_qp QP %u: accepted cur_qp_state %s while it is %s (-> %s, mask %#x)",
		      q->qp->qp_num, qps_name(a.cur_qp_state), qps_name(cur),
		      qps_name(a.qp_state), mask);
	if (!err && cur >= 0 && a.qp_state < 7 && !lie &&
	    !(next_ok[cur] & 1 << a.qp_state))
		cfail("modify_qp QP %u: accepted %s -> %s", q->qp->qp_num,
		      qps_name(cur), qps_name(a.qp_state));
	if (!err && a.qp_state >= 7)
		cfail("modify_qp QP %u: accepted state %d", q->qp->qp_num,
		      a.qp_state);
	if (!err) {
		now = qp_state(q->qp);
		if (now != (int)a.qp_state && now != IBV_QPS_ERR)
			cfail("modify_qp QP %u to %s succeeded, it reads %s",
			      q->qp->qp_num, qps_name(a.qp_state),
			      qps_name(now));
		q->tainted = true;
		if (a.qp_state == IBV_QPS_RESET)
			q->peer = -1;
	}
}

static void r_connect(int i, int j)
{
	struct rqp *x = &R.qp[i], *y = &R.qp[j];
	struct side sx = { .d = &devs[x->dev], .qp = x->qp },
		    sy = { .d = &devs[y->dev], .qp = y->qp };
	int err;

	sx.cfg = cfg_def;
	sy.cfg = cfg_def;
	sx.cfg.mtu = 1 + rnd(5);
	sy.cfg.mtu = sx.cfg.mtu;
	sx.cfg.timeout = 10 + rnd(5);
	sy.cfg.timeout = sx.cfg.timeout;
	sx.cfg.retry = rnd(8);
	sx.cfg.rnr = rnd(7);
	sy.cfg.rnr = rnd(7);
	sx.cfg.qp_access = chance(80) ? ACC_ALL : rnd(16);
	sy.cfg.qp_access = chance(80) ? ACC_ALL : rnd(16);
	sx.psn = rnd(U24_MASK + 1);
	sy.psn = rnd(U24_MASK + 1);
	err = qp_to(x->qp, IBV_QPS_RESET);
	err = err ?: qp_to(y->qp, IBV_QPS_RESET);
	err = err ?: qp_init(&sx);
	err = err ?: qp_init(&sy);
	err = err ?: qp_rtr(&sx, &sy);
	err = err ?: qp_rtr(&sy, &sx);
	if (x->type == IBV_QPT_RC) {
		err = err ?: qp_rts(&sx);
	} else {
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS,
					 .sq_psn = sx.psn };

		err = err ?: qp_modify(x->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	}
	if (y->type == IBV_QPT_RC) {
		err = err ?: qp_rts(&sy);
	} else {
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS,
					 .sq_psn = sy.psn };

		err = err ?: qp_modify(y->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	}
	r_count(OP_CONNECT, err);
	if (err) {
		/* UC refuses the RC-only attributes of RTR: not a failure */
		if (x->type == IBV_QPT_RC && y->type == IBV_QPT_RC)
			cfail("connecting QP %u and QP %u: %s", x->qp->qp_num,
			      y->qp->qp_num, ename(err));
		x->peer = -1;
		y->peer = -1;
		x->tainted = true;
		y->tainted = true;
		return;
	}
	x->peer = j;
	y->peer = i;
	x->access = sx.cfg.qp_access;
	y->access = sy.cfg.qp_access;
	x->tainted = false;
	y->tainted = false;
}

static void r_post_send(int i)
{
	static const int ops[] = {
		IBV_WR_SEND, IBV_WR_SEND, IBV_WR_SEND_WITH_IMM,
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM,
		IBV_WR_RDMA_READ, IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP,
		IBV_WR_ATOMIC_FETCH_AND_ADD,
	};
	struct rqp *q = &R.qp[i];
	struct ibv_send_wr wr[4], *bad = NULL;
	struct ibv_sge sge[4][10];
	int n = 1 + rnd(4), k, s, err, first_bad = -1, state;
	int why[4];
	struct rqp *peer = q->peer >= 0 && !q->tainted &&
			   !R.qp[q->peer].tainted ? &R.qp[q->peer] : NULL;

	/*
	 * RC only: a UD WR names an address handle by pointer, which the
	 * provider follows (the process's own memory); random WRs would
	 * hand it garbage.  UD is exercised by dp_smoke and ibv_ud_pingpong.
	 */
	if (q->type != IBV_QPT_RC)
		return;
	state = q->qp->state;	/* what the provider goes by */
	memset(wr, 0, sizeof(wr));
	for (k = 0; k < n; k++) {
		uint64_t len = 0;
		bool inl, rd_at, refuse = false;
		int op;

		wr[k].wr_id = next_id();
		op = chance(3) ? 7 + (int)rnd(20) : ops[rnd(ARRAY_SIZE(ops))];
		wr[k].opcode = (enum ibv_wr_opcode)op;
		wr[k].send_flags = (chance(70) ? IBV_SEND_SIGNALED : 0) |
				   (chance(10) ? IBV_SEND_SOLICITED : 0) |
				   (chance(5) ? IBV_SEND_FENCE : 0) |
				   (chance(15) ? IBV_SEND_INLINE : 0) |
				   (chance(2) ? 1u << (5 + rnd(20)) : 0);
		wr[k].num_sge = chance(90) ? 1 + rnd(q->send_sge) :
			       rnd(q->send_sge + 3);
		wr[k].sg_list = sge[k];
		for (s = 0; s < wr[k].num_sge && s < 10; s++) {
			r_sge(q, &sge[k][s]);
			if (wr[k].send_flags & IBV_SEND_INLINE) {
				/* the provider copies it: our own memory */
				sge[k][s].length %= 128;
				sge[k][s].addr = (uintptr_t)R.arena +
						 rnd(ARENA - 128);
			}
			len += sge[k][s].length;
		}
		rd_at = op == IBV_WR_RDMA_READ ||
			op == IBV_WR_ATOMIC_CMP_AND_SWP ||
			op == IBV_WR_ATOMIC_FETCH_AND_ADD;
		if (op == IBV_WR_ATOMIC_CMP_AND_SWP ||
		    op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			if (chance(80) && wr[k].num_sge) {
				wr[k].num_sge = 1;
				sge[k][0].length = 8;
				sge[k][0].addr &= ~7ULL;
				len = 8;
			}
		}
		/* the remote side */
		if (peer && chance(85)) {
			int m = LIVE(R.mr, R_MR, peer->dev);

			if (m >= 0) {
				const struct rmr *r = &R.mr[m];
				uint64_t off = rnd(r->len);

				wr[k].wr.rdma.remote_addr = (uintptr_t)r->addr + off;
				wr[k].wr.rdma.rkey = r->mr->rkey;
				if (rd_at && op != IBV_WR_RDMA_READ)
					wr[k].wr.rdma.remote_addr &= ~7ULL;
			}
		} else {
			wr[k].wr.rdma.remote_addr = rnd_addr_edge();
			wr[k].wr.rdma.rkey = (uint32_t)rnd64();
		}
		if (rd_at && op != IBV_WR_RDMA_READ) {
			uint64_t ra = wr[k].wr.rdma.remote_addr;
			uint32_t rk = wr[k].wr.rdma.rkey;

			wr[k].wr.atomic.remote_addr = ra;
			wr[k].wr.atomic.rkey = rk;
			wr[k].wr.atomic.compare_add = rnd64();
			wr[k].wr.atomic.swap = rnd64();
		}
		inl = wr[k].send_flags & IBV_SEND_INLINE;
		/*
		 * what the provider must refuse (mroce_post_send); BIND_MW
		 * has no window here (bind_mw.mw is NULL), LOCAL_INV is a
		 * local operation (no SGE looked at, no inline, no solicited
		 * event)
		 */
		if (op > IBV_WR_ATOMIC_FETCH_AND_ADD &&
		    op != IBV_WR_SEND_WITH_INV && op != IBV_WR_LOCAL_INV)
			refuse = true;
		if (op == IBV_WR_LOCAL_INV &&
		    (wr[k].send_flags & (IBV_SEND_INLINE | IBV_SEND_SOLICITED)))
			refuse = true;
		if (rd_at && (q->type != IBV_QPT_RC || inl))
			refuse = true;
		if (wr[k].send_flags & ~(IBV_SEND_FENCE | IBV_SEND_SIGNALED |
					 IBV_SEND_SOLICITED | IBV_SEND_INLINE))
			refuse = true;
		if ((uint32_t)wr[k].num_sge > q->send_sge &&
		    op != IBV_WR_LOCAL_INV)
			refuse = true;
		if (inl && len > q->max_inline && op != IBV_WR_LOCAL_INV)
			refuse = true;
		if (refuse && first_bad < 0)
			first_bad = k;
		/* what cannot complete SUCCESS */
		why[k] = WHY_NONE;
		if (!inl) {
			int acc = rd_at ? IBV_ACCESS_LOCAL_WRITE : 0;

			for (s = 0; s < wr[k].num_sge && s < 10; s++)
				if (sge[k][s].length &&
				    !r_key_ok(q->dev, q->pd, sge[k][s].lkey,
					      false, sge[k][s].addr,
					      sge[k][s].length, acc))
					why[k] = rd_at &&
						 r_key_ok(q->dev, q->pd,
							  sge[k][s].lkey, false,
							  sge[k][s].addr,
							  sge[k][s].length, 0) ?
						 WHY_SINK : WHY_LKEY;
		}
		if ((op == IBV_WR_ATOMIC_CMP_AND_SWP ||
		     op == IBV_WR_ATOMIC_FETCH_AND_ADD) && len != 8)
			why[k] = WHY_ATOMIC_LEN;
		/*
		 * userspace has no fast-registration MR to invalidate, and
		 * this case no memory window: invalidate_rkey is 0
		 */
		if (op == IBV_WR_LOCAL_INV)
			why[k] = WHY_INV;
		if (op == IBV_WR_SEND_WITH_INV && why[k] == WHY_NONE)
			why[k] = WHY_INV;
		if (op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_WRITE_WITH_IMM ||
		    rd_at) {
			uint64_t ra = rd_at && op != IBV_WR_RDMA_READ ?
				      wr[k].wr.atomic.remote_addr :
				      wr[k].wr.rdma.remote_addr;
			uint32_t rk = rd_at && op != IBV_WR_RDMA_READ ?
				      wr[k].wr.atomic.rkey : wr[k].wr.rdma.rkey;
			uint64_t rl = op == IBV_WR_RDMA_READ ||
				      op == IBV_WR_RDMA_WRITE ||
				      op == IBV_WR_RDMA_WRITE_WITH_IMM ? len : 8;
			int need = op == IBV_WR_RDMA_READ ?
				   IBV_ACCESS_REMOTE_READ :
				   rd_at ? IBV_ACCESS_REMOTE_ATOMIC :
				   IBV_ACCESS_REMOTE_WRITE;

			if (rl && ra + rl < ra)
				why[k] = WHY_WRAP;
			else if (peer && rl &&
				 !r_key_ok(peer->dev, peer->pd, rk, true, ra,
					   rl, need))
				why[k] = WHY_RKEY;
			else if (peer && !(peer->access & need))
				why[k] = WHY_ACCESS;
		}
	}
	for (k = 0; k < n - 1; k++)
		wr[k].next = &wr[k + 1];
	if (state == IBV_QPS_RESET || state == IBV_QPS_INIT ||
	    state == IBV_QPS_RTR)
		first_bad = 0;
	err = VCALL("ibv_post_send", ibv_post_send(q->qp, wr, &bad));
	r_count(OP_POST_SEND, err);
	if (first_bad >= 0 && !err)
		cfail("post_send QP %u: accepted WR %d (opcode %d, flags %#x, num_sge %d) that it must refuse",
		      q->qp->qp_num, first_bad, wr[first_bad].opcode,
		      wr[first_bad].send_flags, wr[first_bad].num_sge);
	if (first_bad >= 0 && err && bad != &wr[first_bad] && err != ENOMEM)
		cfail("post_send QP %u: %s with *bad_wr at WR %d, not %d",
		      q->qp->qp_num, ename(err), bad ? (int)(bad - wr) : -1,
		      first_bad);
	if (first_bad < 0 && err && err != ENOMEM)
		cfail("post_send QP %u (%s): refused valid WRs: %s",
		      q->qp->qp_num, qps_name(state), ename(err));
	for (k = 0; k < n; k++) {
		if (err && bad && &wr[k] >= bad)
			break;
		atomic_fetch_add(&st.wrs, 1);
		r_track(wr[k].wr_id, why[k]);
	}
}

static void r_post_recv(int i)
{
	struct rqp *q = &R.qp[i];
	struct ibv_recv_wr wr[4], *bad = NULL;
	struct ibv_sge sge[4][10];
	int n = 1 + rnd(4), k, s, err, first_bad = -1;

	memset(wr, 0, sizeof(wr));
	for (k = 0; k < n; k++) {
		wr[k].wr_id = next_id();
		wr[k].num_sge = chance(90) ? 1 + rnd(q->recv_sge) :
			       rnd(q->recv_sge + 3);
		wr[k].sg_list = sge[k];
		for (s = 0; s < wr[k].num_sge && s < 10; s++)
			r_sge(q, &sge[k][s]);
		if ((uint32_t)wr[k].num_sge > q->recv_sge && first_bad < 0)
			first_bad = k;
		if (k)
			wr[k - 1].next = &wr[k];
	}
	if (q->qp->state == IBV_QPS_RESET)
		first_bad = 0;
	err = VCALL("ibv_post_recv", ibv_post_recv(q->qp, wr, &bad));
	r_count(OP_POST_RECV, err);
	if (first_bad >= 0 && !err)
		cfail("post_recv QP %u: accepted WR %d (num_sge %d) that it must refuse",
		      q->qp->qp_num, first_bad, wr[first_bad].num_sge);
	if (first_bad < 0 && err && err != ENOMEM)
		cfail("post_recv QP %u: refused valid WRs: %s", q->qp->qp_num,
		      ename(err));
	for (k = 0; k < n; k++) {
		if (err && bad && &wr[k] >= bad)
			break;
		atomic_fetch_add(&st.wrs, 1);
		/* a receive may complete in error for a peer's reasons */
		r_track(wr[k].wr_id, WHY_NONE);
	}
}

static void r_create_qp(void)
{
	static const uint32_t wrs[] = { 0, 1, 2, 16, 64, 4096, 4097,
					UINT32_MAX };
	static const uint32_t sges[] = { 0, 1, 2, 8, 9 };
	static const uint32_t inl[] = { 0, 1, 64, 256, 257, 4096 };
	int i = FREE(R.qp, R_QP), pd, sc, rc;
	struct ibv_qp_init_attr ia;
	struct ibv_qp *qp;
	int dev = rnd(NDEV);
	bool must_fail = false;

	if (i < 0)
		return;
	pd = LIVE(R.pd, R_PD, dev);
	sc = LIVE(R.cq, R_CQ, dev);
	rc = chance(70) ? sc : LIVE(R.cq, R_CQ, dev);
	if (pd < 0 || sc < 0 || rc < 0)
		return;
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = R.cq[sc].cq;
	ia.recv_cq = R.cq[rc].cq;
	ia.qp_type = chance(80) ? IBV_QPT_RC : chance(80) ? IBV_QPT_UC :
		     chance(50) ? IBV_QPT_UD : (enum ibv_qp_type)rnd(64);
	ia.sq_sig_all = chance(20);
	ia.cap.max_send_wr = chance(85) ? 1 + rnd(256) : wrs[rnd(ARRAY_SIZE(wrs))];
	ia.cap.max_recv_wr = chance(85) ? 1 + rnd(256) : wrs[rnd(ARRAY_SIZE(wrs))];
	ia.cap.max_send_sge = chance(85) ? 1 + rnd(4) : sges[rnd(ARRAY_SIZE(sges))];
	ia.cap.max_recv_sge = chance(85) ? 1 + rnd(4) : sges[rnd(ARRAY_SIZE(sges))];
	ia.cap.max_inline_data = inl[rnd(ARRAY_SIZE(inl))];
	if (ia.cap.max_send_wr > (uint32_t)devs[dev].attr.max_qp_wr ||
	    ia.cap.max_recv_wr > (uint32_t)devs[dev].attr.max_qp_wr ||
	    ia.cap.max_send_sge > (uint32_t)devs[dev].attr.max_sge ||
	    ia.cap.max_recv_sge > (uint32_t)devs[dev].attr.max_sge ||
	    ia.cap.max_inline_data > 256 ||
	    (ia.qp_type != IBV_QPT_RC && ia.qp_type != IBV_QPT_UD))
		must_fail = true;	/* RC and UD only: no UC, no XRC */
	qp = VPTR("ibv_create_qp", ibv_create_qp(R.pd[pd].pd, &ia));
	r_count(OP_CREATE_QP, !qp);
	if (qp && must_fail) {
		cfail("create_qp accepted type %d, caps %u/%u/%u/%u/%u",
		      ia.qp_type, ia.cap.max_send_wr, ia.cap.max_recv_wr,
		      ia.cap.max_send_sge, ia.cap.max_recv_sge,
		      ia.cap.max_inline_data);
	}
	if (!qp && !must_fail && errno != ENOMEM)
		cfail("create_qp refused type %d, valid caps %u/%u/%u/%u/%u: %s",
		      ia.qp_type, ia.cap.max_send_wr, ia.cap.max_recv_wr,
		      ia.cap.max_send_sge, ia.cap.max_recv_sge,
		      ia.cap.max_inline_data, ename(errno));
	if (!qp)
		return;
	pthread_mutex_lock(&R.lock);
	R.qp[i] = (struct rqp){
		.qp = qp, .dev = dev, .pd = pd, .scq = sc, .rcq = rc,
		.type = ia.qp_type, .peer = -1, .tainted = true,
		.send_sge = ia.cap.max_send_sge,
		.recv_sge = ia.cap.max_recv_sge,
		.max_inline = ia.cap.max_inline_data,
	};
	pthread_mutex_unlock(&R.lock);
	R.pd[pd].users++;
	R.cq[sc].users++;
	R.cq[rc].users++;
}

static void r_destroy_qp(int i)
{
	struct rqp q = R.qp[i];
	int err, k;

	pthread_mutex_lock(&R.lock);
	R.qp[i].qp = NULL;
	pthread_mutex_unlock(&R.lock);
	err = VCALL("ibv_destroy_qp", ibv_destroy_qp(q.qp));
	r_count(OP_DESTROY_QP, err);
	if (err) {
		cfail("destroy_qp: %s", ename(err));
		return;
	}
	R.pd[q.pd].users--;
	R.cq[q.scq].users--;
	R.cq[q.rcq].users--;
	for (k = 0; k < R_QP; k++)
		if (R.qp[k].qp && R.qp[k].peer == i)
			R.qp[k].peer = -1;
}

static void r_step(void)
{
	int total = 0, w, op, i, j, dev = rnd(NDEV), err;

	for (op = 0; op < OP_N; op++)
		total += op_w[op];
	w = rnd(total);
	for (op = 0; op < OP_N && w >= op_w[op]; op++)
		w -= op_w[op];
	switch (op) {
	case OP_ALLOC_PD:
		i = FREE(R.pd, R_PD);
		if (i >= 0) {
			R.pd[i].pd = VPTR("ibv_alloc_pd",
					  ibv_alloc_pd(devs[dev].ctx));
			R.pd[i].dev = dev;
			R.pd[i].users = 0;
			r_count(op, !R.pd[i].pd);
			if (!R.pd[i].pd)
				cfail("alloc_pd: %s", ename(errno));
		}
		break;
	case OP_DEALLOC_PD:
		i = LIVE(R.pd, R_PD, -1);
		if (i < 0)
			break;
		err = VCALL("ibv_dealloc_pd", ibv_dealloc_pd(R.pd[i].pd));
		r_count(op, err);
		if (R.pd[i].users && !err)
			cfail("dealloc_pd of a PD with %d objects succeeded",
			      R.pd[i].users);
		if (!R.pd[i].users && err)
			cfail("dealloc_pd of an unused PD: %s", ename(err));
		if (!err)
			R.pd[i].pd = NULL;
		break;
	case OP_CREATE_CQ: {
		static const int sz[] = { -1, 0, 1, 2, 3, 16, 255, 4096,
					  65536, 65537, INT_MAX };
		int cqe = chance(70) ? 1 + (int)rnd(300) : sz[rnd(ARRAY_SIZE(sz))];

		i = FREE(R.cq, R_CQ);
		if (i < 0)
			break;
		R.cq[i].cq = VPTR("ibv_create_cq",
				  ibv_create_cq(devs[dev].ctx, cqe, NULL, NULL,
						chance(95) ? 0 : 1 + rnd(9)));
		R.cq[i].dev = dev;
		R.cq[i].users = 0;
		r_count(op, !R.cq[i].cq);
		if (R.cq[i].cq && (cqe < 1 || cqe > devs[dev].attr.max_cqe))
			cfail("create_cq accepted cqe %d", cqe);
		break;
	}
	case OP_DESTROY_CQ:
		i = LIVE(R.cq, R_CQ, -1);
		if (i < 0)
			break;
		err = VCALL("ibv_destroy_cq", ibv_destroy_cq(R.cq[i].cq));
		r_count(op, err);
		if (R.cq[i].users && !err)
			cfail("destroy_cq of a CQ %d QPs use succeeded",
			      R.cq[i].users);
		if (!R.cq[i].users && err)
			cfail("destroy_cq of an unused CQ: %s", ename(err));
		if (!err)
			R.cq[i].cq = NULL;
		break;
	case OP_RESIZE_CQ: {
		int cqe = chance(80) ? 1 + (int)rnd(600) : (int)rnd_u32_edge();

		i = LIVE(R.cq, R_CQ, -1);
		if (i < 0)
			break;
		err = VCALL("ibv_resize_cq", ibv_resize_cq(R.cq[i].cq, cqe));
		r_count(op, err);
		if (!err && (cqe < 1 || cqe > devs[R.cq[i].dev].attr.max_cqe))
			cfail("resize_cq accepted cqe %d", cqe);
		break;
	}
	case OP_NOTIFY:
		i = LIVE(R.cq, R_CQ, -1);
		if (i >= 0)
			r_count(op, VCALL("ibv_req_notify_cq",
					  ibv_req_notify_cq(R.cq[i].cq,
							    rnd(2))));
		break;
	case OP_POLL:
		i = LIVE(R.cq, R_CQ, -1);
		if (i >= 0)
			r_poll(i);
		break;
	case OP_REG_MR: {
		static const int accs[] = {
			0, IBV_ACCESS_LOCAL_WRITE, ACC_ALL,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ,
			IBV_ACCESS_REMOTE_READ, IBV_ACCESS_REMOTE_WRITE,
			ACC_ALL | IBV_ACCESS_MW_BIND, 1 << 10,
		};
		size_t off = rnd(ARENA), len;
		uint8_t *addr;
		int pd, acc;
		bool must_fail = false, must_ok;

		i = FREE(R.mr, R_MR);
		pd = LIVE(R.pd, R_PD, dev);
		if (i < 0 || pd < 0)
			break;
		len = chance(80) ? 1 + rnd(1 << 20) : rnd_u32_edge();
		acc = chance(70) ? ACC_ALL : accs[rnd(ARRAY_SIZE(accs))];
		addr = R.arena + off;
		if (chance(5))
			addr = NULL;
		if (!addr || off + len > ARENA + (size_t)(1 << 20))
			must_fail = true;	/* the guard after the arena */
		if ((acc & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
		    !(acc & IBV_ACCESS_LOCAL_WRITE))
			must_fail = true;
		if (acc & (1 << 10))
			must_fail = true;
		must_ok = !must_fail && len && off + len <= ARENA;
		R.mr[i].mr = VPTR("ibv_reg_mr", ibv_reg_mr(R.pd[pd].pd, addr,
							   len, acc));
		r_count(op, !R.mr[i].mr);
		if (R.mr[i].mr && must_fail)
			cfail("reg_mr accepted %p + %zu access %#x", addr, len,
			      acc);
		if (!R.mr[i].mr && must_ok && errno != ENOMEM)
			cfail("reg_mr refused %p + %zu access %#x: %s", addr,
			      len, acc, ename(errno));
		if (R.mr[i].mr) {
			R.mr[i].dev = dev;
			R.mr[i].pd = pd;
			R.mr[i].access = acc;
			R.mr[i].addr = addr;
			R.mr[i].len = len;
			R.pd[pd].users++;
		}
		break;
	}
	case OP_DEREG_MR:
		i = LIVE(R.mr, R_MR, -1);
		if (i < 0)
			break;
		err = VCALL("ibv_dereg_mr", ibv_dereg_mr(R.mr[i].mr));
		r_count(op, err);
		if (err) {
			cfail("dereg_mr: %s", ename(err));
		} else {
			R.pd[R.mr[i].pd].users--;
			R.mr[i].mr = NULL;
		}
		break;
	case OP_CREATE_QP:
		r_create_qp();
		break;
	case OP_DESTROY_QP:
		i = LIVE(R.qp, R_QP, -1);
		if (i >= 0)
			r_destroy_qp(i);
		break;
	case OP_MODIFY:
		i = LIVE(R.qp, R_QP, -1);
		if (i >= 0)
			r_modify(i);
		break;
	case OP_CONNECT:
		i = LIVE(R.qp, R_QP, -1);
		j = LIVE(R.qp, R_QP, -1);
		if (i >= 0 && j >= 0 && i != j)
			r_connect(i, j);
		break;
	case OP_QUERY_QP: {
		struct ibv_qp_init_attr ia;
		struct ibv_qp_attr a;

		i = LIVE(R.qp, R_QP, -1);
		if (i >= 0)
			r_count(op, VCALL("ibv_query_qp",
					  ibv_query_qp(R.qp[i].qp, &a,
						       chance(80) ?
						       (int)rnd(1 << 21) :
						       (int)rnd64(), &ia)));
		break;
	}
	case OP_POST_SEND:
		i = LIVE(R.qp, R_QP, -1);
		if (i >= 0)
			r_post_send(i);
		break;
	case OP_POST_RECV:
		i = LIVE(R.qp, R_QP, -1);
		if (i >= 0)
			r_post_recv(i);
		break;
	case OP_CREATE_AH: {
		struct ibv_ah_attr ah;
		int pd;

		i = FREE(R.ah, R_AH);
		pd = LIVE(R.pd, R_PD, dev);
		if (i < 0 || pd < 0)
			break;
		ah_to(&ah, &(struct side){ .d = &devs[dev] }, &devs[rnd(NDEV)]);
		if (chance(20))
			ah.grh.sgid_index = rnd(256);
		if (chance(10))
			ah.port_num = rnd(3);
		if (chance(10))
			ah.is_global = 0;
		R.ah[i].ah = VPTR("ibv_create_ah", ibv_create_ah(R.pd[pd].pd,
								 &ah));
		r_count(op, !R.ah[i].ah);
		if (R.ah[i].ah) {
			R.ah[i].dev = dev;
			R.ah[i].pd = pd;
			R.pd[pd].users++;
		}
		break;
	}
	case OP_DESTROY_AH:
		i = LIVE(R.ah, R_AH, -1);
		if (i < 0)
			break;
		err = VCALL("ibv_destroy_ah", ibv_destroy_ah(R.ah[i].ah));
		r_count(op, err);
		if (err) {
			cfail("destroy_ah: %s", ename(err));
		} else {
			R.pd[R.ah[i].pd].users--;
			R.ah[i].ah = NULL;
		}
		break;
	case OP_QUERY: {
		struct ibv_device_attr da;
		struct ibv_port_attr pa;
		union ibv_gid g;
		uint16_t pkey;

		r_count(op, VCALL("ibv_query_device",
				  ibv_query_device(devs[dev].ctx, &da)));
		r_count(op, VCALL("ibv_query_port",
				  ibv_query_port(devs[dev].ctx, rnd(3), &pa)));
		op_begin("ibv_query_gid");
		err = ibv_query_gid(devs[dev].ctx, PORT, rnd(2048), &g);
		op_end();
		r_count(op, cnt_ret(err ? EINVAL : 0));
		op_begin("ibv_query_pkey");
		err = ibv_query_pkey(devs[dev].ctx, PORT, rnd(4), &pkey);
		op_end();
		r_count(op, cnt_ret(err ? EINVAL : 0));
		break;
	}
	case OP_RING: {
		struct raw_swqe g;
		uint8_t *p = (uint8_t *)&g;
		size_t k;

		i = LIVE(R.qp, R_QP, -1);
		if (i < 0 || R.qp[i].qp->state != IBV_QPS_RTS)
			break;
		for (k = 0; k < sizeof(g); k++)
			p[k] = (uint8_t)rnd64();
		g.h.wr_id = next_id();
		/* keep clear of issue 12 #1 here: ring-sq-nsge-* has it */
		g.h.num_sge %= R.qp[i].send_sge + 1;
		if (!ring_put(&mqp(R.qp[i].qp)->sq, &g, sizeof(g))) {
			r_track(g.h.wr_id, WHY_NONE);
			r_count(op, cnt_ret(doorbell(R.qp[i].qp, true)));
		}
		break;
	}
	}
}

static void case_random(int arg)
{
	uint64_t end = now_ms() + (uint64_t)opt.seconds * 1000, steps = 0;
	char b[1200];
	int i, len = 0;

	(void)arg;
	memset(R.nops, 0, sizeof(R.nops));
	memset(R.nerr, 0, sizeof(R.nerr));
	R.bad_success = 0;
	R.unknown = 0;
	R.dup = 0;
	R.arena = mmap(NULL, ARENA + (2 << 20), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (R.arena == MAP_FAILED) {
		cfail("mmap: %s", strerror(errno));
		return;
	}
	/* 1 MiB of guard after the arena: registering it must fail */
	munmap(R.arena + ARENA, 2 << 20);
	memset(R.arena, 0x3c, ARENA);
	cs.recover = r_recover;
	for (i = 0; i < NDEV; i++) {	/* something to start from */
		R.pd[i].pd = VPTR("ibv_alloc_pd", ibv_alloc_pd(devs[i].ctx));
		R.pd[i].dev = i;
		R.cq[i].cq = VPTR("ibv_create_cq",
				  ibv_create_cq(devs[i].ctx, 512, NULL, NULL, 0));
		R.cq[i].dev = i;
	}
	while (now_ms() < end) {
		r_step();
		steps++;
		if (steps % 64 == 0)
			kmsg_scan();
	}
	/* tear everything down: every destroy must work */
	for (i = 0; i < R_QP; i++)
		if (R.qp[i].qp)
			r_destroy_qp(i);
	for (i = 0; i < R_AH; i++)
		if (R.ah[i].ah &&
		    VCALL("ibv_destroy_ah", ibv_destroy_ah(R.ah[i].ah)))
			cfail("destroy_ah at the end");
	for (i = 0; i < R_MR; i++)
		if (R.mr[i].mr && VCALL("ibv_dereg_mr", ibv_dereg_mr(R.mr[i].mr)))
			cfail("dereg_mr at the end");
	for (i = 0; i < R_CQ; i++) {
		if (R.cq[i].cq) {
			r_poll(i);
			if (VCALL("ibv_destroy_cq", ibv_destroy_cq(R.cq[i].cq)))
				cfail("destroy_cq at the end");
		}
	}
	for (i = 0; i < R_PD; i++)
		if (R.pd[i].pd && VCALL("ibv_dealloc_pd",
					ibv_dealloc_pd(R.pd[i].pd)))
			cfail("dealloc_pd at the end");
	memset(&R.pd, 0, sizeof(R.pd));
	memset(&R.cq, 0, sizeof(R.cq));
	memset(&R.mr, 0, sizeof(R.mr));
	memset(&R.qp, 0, sizeof(R.qp));
	memset(&R.ah, 0, sizeof(R.ah));
	munmap(R.arena, ARENA);
	cs.recover = NULL;
	for (i = 0; i < OP_N; i++)
		if (R.nops[i])
			len += snprintf(b + len, sizeof(b) - len, "%s %s %" PRIu64 "/%" PRIu64,
					len ? "," : "", op_s[i], R.nops[i],
					R.nerr[i]);
	note("%" PRIu64 " random steps (seed %#" PRIx64 "); calls/refused:%s",
	     steps, opt.seed, b);
	note("%" PRIu64 " completions that should have failed succeeded, %" PRIu64 " unknown, %" PRIu64 " twice",
	     R.bad_success, R.unknown, R.dup);
}

/* ============================================================= the cases */

#define C_DANGER	1	/* corrupts today's kernel heap (issue 12 #1) */

struct fcase {
	const char *name;
	void (*fn)(int arg);
	int arg;
	unsigned int flags;
	const char *desc;
};

static const struct fcase cases[] = {
	{ "bad-args", case_bad_args, 0, 0,
	  "invalid arguments to every verb: each refused with an errno" },
	{ "cur-state", case_cur_state, 0, 0,
	  "modify_qp with a cur_qp_state that is not the QP's (issue 12 #8, #14)" },
	{ "cur-state-traffic", case_cur_state_traffic, 0, 0,
	  "cur_qp_state lies on a QP with WRITEs in flight and being flushed" },
#define WRAP(i) { wraps[i].name, case_wrap, i, 0,			\
		  "a WR at the end of the 64-bit address space (issue 12 #8)" }
	WRAP(0), WRAP(1), WRAP(2), WRAP(3), WRAP(4), WRAP(5), WRAP(6),
	WRAP(7), WRAP(8), WRAP(9), WRAP(10), WRAP(11), WRAP(12), WRAP(13),
	{ "ring-sq-opcode", case_ring_sq, 0, 0,
	  "send WQEs with invalid opcodes, inline READ/atomic, atomic lengths" },
	{ "ring-sq-nsge", case_ring_sq, 1, 0,
	  "send WQEs with num_sge 0 and max_send_sge < num_sge <= 8" },
	{ "ring-sq-flags", case_ring_sq, 2, 0, "send WQE flags" },
	{ "ring-sq-inline", case_ring_sq, 3, 0, "send WQE inline_len" },
	{ "ring-sq-length", case_ring_sq, 4, 0, "send WQE SGE lengths" },
	{ "ring-sq-addr", case_ring_sq, 5, 0, "send WQE SGE addresses" },
	{ "ring-sq-lkey", case_ring_sq, 6, 0, "send WQE SGE keys" },
	{ "ring-sq-rkey", case_ring_sq, 7, 0,
	  "send WQE remote keys and addresses" },
	{ "ring-sq-reserved", case_ring_sq, 8, 0,
	  "send WQE reserved fields, wr_id, imm_data" },
	{ "ring-sq-bind", case_ring_sq, 14, 0,
	  "BIND_MW WQEs: hostile windows, regions, ranges, keys, access" },
	{ "ring-sq-prod", case_ring_sq_prod, 0, 0,
	  "garbage SQ producer and consumer indexes" },
	{ "ring-sq-random-safe", case_ring_sq_random, 1, 0,
	  "random send WQEs, num_sge <= max_send_sge" },
	{ "ring-rq-nsge", case_ring_rq, 0, 0, "receive WQE num_sge" },
	{ "ring-rq-sge", case_ring_rq, 1, 0,
	  "receive WQE SGE lengths, addresses, keys" },
	{ "ring-rq-misc", case_ring_rq, 2, 0, "receive WQE reserved, wr_id" },
	{ "ring-rq-prod", case_ring_rq_prod, 0, 0,
	  "garbage RQ producer index" },
	{ "ring-cq-cons", case_ring_cq_cons, 0, 0,
	  "garbage CQ consumer index" },
	{ "random", case_random, 0, 0,
	  "random valid and invalid verb sequences" },
	{ "destroy-race", case_destroy_race, 0, 0,
	  "destroy QPs, CQs, MRs while traffic runs (issue 12 #2)" },
	{ "destroy-many", case_destroy_many, 0, 0,
	  "8 busy senders destroyed at once (issue 12 #2)" },
	{ "kill", case_kill, 0, 0,
	  "SIGKILL of a process in the middle of a transfer" },
	{ "cq-overflow-recv", case_cq_overflow, 1, 0,
	  "a receive CQ overflows (issue 12 #12)" },
	{ "cq-overflow-send", case_cq_overflow, 0, 0,
	  "a send CQ overflows (issue 12 #12)" },
	{ "dereg-send-wqe", case_dereg_send, 0, 0,
	  "dereg_mr of an MR a posted SEND holds (issue 12 #5)" },
	{ "dereg-half-recv", case_dereg_half, 0, 0,
	  "dereg_mr of an MR a peer has half written (issue 12 #5)" },
	{ "mr-keys", case_mr_keys, 0, 0,
	  "lkeys differ from rkeys, rkeys hard to guess, lkeys refused from the wire (issue 12 #13)" },
	{ "scale-qps", case_scale_qps, 0, 0,
	  "many QPs connected, memory per QP (issue 12 #9)" },
	{ "scale-cycles", case_scale_cycles, 0, 0,
	  "QP create/destroy cycles (issue 12 #9)" },
	{ "scale-memcg", case_scale_memcg, 0, 0,
	  "QP memory charged to the creator's memory cgroup (issue 12 #9)" },
	{ "ring-sq-nsge-9", case_ring_sq, 9, C_DANGER,
	  "a send WQE with num_sge 9 (issue 12 #1)" },
	{ "ring-sq-nsge-16", case_ring_sq, 10, C_DANGER,
	  "a send WQE with num_sge 16 (issue 12 #1)" },
	{ "ring-sq-nsge-64", case_ring_sq, 11, C_DANGER,
	  "a send WQE with num_sge 64 (issue 12 #1)" },
	{ "ring-sq-nsge-255", case_ring_sq, 12, C_DANGER,
	  "a send WQE with num_sge 255 (issue 12 #1)" },
	{ "ring-sq-badop-nsge", case_ring_sq, 13, C_DANGER,
	  "a send WQE with a bad opcode and num_sge 255 (issue 12 #1)" },
	{ "ring-sq-random", case_ring_sq_random, 0, C_DANGER,
	  "random send WQEs, any num_sge (issue 12 #1)" },
};

static int sel_match(const char *pat, const struct fcase *c)
{
	size_t n = strlen(pat);

	if (!strcmp(pat, "all"))
		return 1;
	if (!strcmp(pat, "safe"))
		return !(c->flags & C_DANGER);
	if (!strcmp(pat, "danger"))
		return !!(c->flags & C_DANGER);
	if (n && pat[n - 1] == '*')
		return !strncmp(pat, c->name, n - 1);
	return !strcmp(pat, c->name);
}

/* Returns 2, the exit status of a usage error. */
static int usage(FILE *f)
{
	fprintf(f,
		"usage: mroce-verbsfuzz --dev1 DEV --gid1 N [--dev2 DEV --gid2 N]\n"
		"       [--seed N] [--seconds S] [--scale-qps N] [--scale-cycles N]\n"
		"       [--hang-ms MS] [--verbose] [--list] [CASE|safe|danger|all|PREFIX*...]\n");
	return 2;
}

static void print_hist(char *b, size_t n)
{
	size_t len = 0;
	int e;

	b[0] = 0;
	for (e = 1; e < (int)ARRAY_SIZE(cs.err_hist); e++) {
		int k = atomic_load(&cs.err_hist[e]);

		if (k && len < n - 32)
			len += snprintf(b + len, n - len, "%s%s:%d",
					len ? " " : "", ename(e), k);
	}
}

#define ADD_STAT(f) atomic_fetch_add(&st_total.f, atomic_load(&st.f))

int main(int argc, char **argv)
{
	bool sel[ARRAY_SIZE(cases)] = { false }, any = false;
	int i, k, ncase = 0, nfail = 0;
	pthread_t wd;
	size_t c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	opt.seed = now_us() ^ (uint64_t)getpid() << 32;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--list")) {
			for (c = 0; c < ARRAY_SIZE(cases); c++)
				printf("%-22s %s%s\n", cases[c].name,
				       cases[c].flags & C_DANGER ?
				       "[danger] " : "", cases[c].desc);
			return 0;
		} else if (!strcmp(a, "--verbose")) {
			opt.verbose = true;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (a[0] == '-' && a[1] == '-') {
			if (!v)
				return usage(stderr);
			i++;
			if (!strcmp(a, "--dev1"))
				opt.dev[0] = v;
			else if (!strcmp(a, "--dev2"))
				opt.dev[1] = v;
			else if (!strcmp(a, "--gid1"))
				opt.gidx[0] = atoi(v);
			else if (!strcmp(a, "--gid2"))
				opt.gidx[1] = atoi(v);
			else if (!strcmp(a, "--seed"))
				opt.seed = strtoull(v, NULL, 0);
			else if (!strcmp(a, "--seconds"))
				opt.seconds = atoi(v);
			else if (!strcmp(a, "--scale-qps"))
				opt.scale_qps = atoi(v);
			else if (!strcmp(a, "--scale-cycles"))
				opt.scale_cycles = atoi(v);
			else if (!strcmp(a, "--hang-ms"))
				opt.hang_ms = atoi(v);
			else
				return usage(stderr);
		} else {
			bool hit = false;

			for (c = 0; c < ARRAY_SIZE(cases); c++) {
				if (!sel_match(a, &cases[c]))
					continue;
				sel[c] = true;
				hit = true;
			}
			any = true;
			if (!hit) {
				fprintf(stderr, "mroce-verbsfuzz: no case %s (--list)\n",
					a);
				return 2;
			}
		}
	}
	if (!opt.dev[0] || opt.gidx[0] < 0 || opt.seconds < 1 ||
	    opt.hang_ms < 100 || opt.scale_qps < 2)
		return usage(stderr);
	if (!opt.dev[1]) {
		opt.dev[1] = opt.dev[0];
		opt.gidx[1] = opt.gidx[0];
	}
	if (!any)
		for (c = 0; c < ARRAY_SIZE(cases); c++)
			sel[c] = !(cases[c].flags & C_DANGER);
	rng_s = opt.seed ? opt.seed : 1;
	signal(SIGPIPE, SIG_IGN);
	kmsg_open();
	memcg_find();
	for (k = 0; k < NDEV; k++)
		if (dev_open(&devs[k], opt.dev[k], opt.gidx[k]))
			return 1;
	pthread_create(&wd, NULL, watchdog_main, NULL);
	outf("TAP version 13");
	outf("# mroce-verbsfuzz: seed %#" PRIx64 ", %s (GID %d) <-> %s (GID %d), %d s per time-bounded case, hang after %d ms",
	     opt.seed, opt.dev[0], opt.gidx[0], opt.dev[1], opt.gidx[1],
	     opt.seconds, opt.hang_ms);
	for (c = 0; c < ARRAY_SIZE(cases); c++) {
		uint64_t t0;
		char hist[300];

		if (!sel[c])
			continue;
		case_no = ++ncase;
		memset(&cs, 0, sizeof(cs));
		memset(&st, 0, sizeof(st));
		cs.name = cases[c].name;
		outf("# case %s: %s", cases[c].name, cases[c].desc);
		kmark("case %s", cases[c].name);
		kmsg_scan();	/* what came before is not ours */
		memset(&st, 0, sizeof(st));
		cs.fails = 0;
		cs.why[0] = 0;
		t0 = now_ms();
		cases[c].fn(cases[c].arg);
		sleep_ms(300);	/* timers of what was just destroyed */
		kmsg_scan();
		print_hist(hist, sizeof(hist));
		if (cs.fails) {
			nfail++;
			outf("not ok %d - %s # %s", ncase, cases[c].name, cs.why);
		} else {
			outf("ok %d - %s", ncase, cases[c].name);
		}
		outf("#   %.1f s; calls %" PRIu64 ", refused %" PRIu64 "%s%s%s, polls %" PRIu64 ", WRs %" PRIu64 ", ring WQEs %" PRIu64 ", completions %" PRIu64 ", async events %" PRIu64 ", kernel reports %" PRIu64,
		     (now_ms() - t0) / 1000.0, (uint64_t)st.calls,
		     (uint64_t)st.errs, hist[0] ? " (" : "", hist,
		     hist[0] ? ")" : "", (uint64_t)st.polls,
		     (uint64_t)st.wrs, (uint64_t)st.ring,
		     (uint64_t)st.cqes, (uint64_t)st.events,
		     (uint64_t)st.kreports);
		ADD_STAT(calls);
		ADD_STAT(errs);
		ADD_STAT(polls);
		ADD_STAT(wrs);
		ADD_STAT(ring);
		ADD_STAT(cqes);
		ADD_STAT(events);
		ADD_STAT(kreports);
	}
	outf("1..%d", ncase);
	outf("# verbsfuzz: %d cases, %d failed; calls %" PRIu64 ", refused %" PRIu64 ", polls %" PRIu64 ", WRs %" PRIu64 ", ring WQEs %" PRIu64 ", completions %" PRIu64 ", async events %" PRIu64 ", kernel reports %" PRIu64,
	     ncase, nfail, (uint64_t)st_total.calls, (uint64_t)st_total.errs,
	     (uint64_t)st_total.polls,
	     (uint64_t)st_total.wrs, (uint64_t)st_total.ring,
	     (uint64_t)st_total.cqes, (uint64_t)st_total.events,
	     (uint64_t)st_total.kreports);
	atomic_store(&wd_stop, true);
	atomic_store(&async_stop, true);
	pthread_join(wd, NULL);
	for (k = 0; k < NDEV; k++) {
		pthread_join(devs[k].async_thr, NULL);
		if (k == 0 || devs[k].ctx != devs[0].ctx)
			ibv_close_device(devs[k].ctx);
	}
	return nfail ? 1 : 0;
}
