// SPDX-License-Identifier: GPL-2.0-only
/*
 * mr-agent - the conformance suite's hands on the implementation under
 * test.  It runs on the host of the device being tested and does, through
 * plain libibverbs (so any verbs implementation will do), what the tester
 * (tools/conformance/mrconform.py) asks over a TCP control connection:
 * one JSON object per line in, one JSON object per line out.  Requests
 * are flat objects: {"op": NAME, KEY: VALUE, ...}, values numbers or
 * strings; answers {"ok": true, ...} or {"ok": false, "error": TEXT}.
 * See tools/conformance/README.md for every operation.
 *
 * Nothing here knows MetaRoCE: the agent only creates verbs objects and
 * reports what the device did (completions, memory, counters).
 *
 * usage: mr-agent [-a ADDR] [-p PORT] [-1]
 *   -a  address to listen on (default 0.0.0.0), -p  port (default 18515)
 *   -1  serve one control connection, then exit
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_OBJ 64
#define MAX_KV 40
#define LINE_MAX_LEN 65536

struct kv {
	char key[32];
	char val[LINE_MAX_LEN / 4];
};

struct req {
	int n;
	struct kv kv[MAX_KV];
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static char dev_name[64];
static int gid_index = -1;
static struct ibv_mr *mrs[MAX_OBJ];
static struct ibv_qp *qps[MAX_OBJ];
static struct ibv_cq *cqs[MAX_OBJ];

/* ------------------------------------------------------------ output */

static char out[4 * LINE_MAX_LEN];
static size_t outlen;

static void emit(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void emit(const char *fmt, ...)
{
	va_list ap;
	int n;

	if (outlen >= sizeof(out))
		return;
	va_start(ap, fmt);
	n = vsnprintf(out + outlen, sizeof(out) - outlen, fmt, ap);
	va_end(ap);
	if (n > 0)
		outlen += (size_t)n;
	if (outlen > sizeof(out) - 1)
		outlen = sizeof(out) - 1;
}

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	size_t i;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (i = 0; msg[i]; i++)
		if (msg[i] == '"' || msg[i] == '\\' || (unsigned char)msg[i] < 32)
			msg[i] = ' ';
	outlen = 0;
	emit("{\"ok\": false, \"error\": \"%s\"}", msg);
	return -1;
}

/* ------------------------------------------------------------ input */

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
		p++;
	return p;
}

/* a flat JSON object: string keys, string / number / true / false values */
static int parse_req(const char *line, struct req *r)
{
	const char *p = skip_ws(line);
	size_t n;

	r->n = 0;
	if (*p++ != '{')
		return -1;
	p = skip_ws(p);
	if (*p == '}')
		return 0;
	for (;;) {
		struct kv *kv;

		if (r->n == MAX_KV)
			return -1;
		kv = &r->kv[r->n++];
		p = skip_ws(p);
		if (*p++ != '"')
			return -1;
		for (n = 0; *p && *p != '"'; p++)
			if (n < sizeof(kv->key) - 1)
				kv->key[n++] = *p;
		kv->key[n] = 0;
		if (*p++ != '"')
			return -1;
		p = skip_ws(p);
		if (*p++ != ':')
			return -1;
		p = skip_ws(p);
		n = 0;
		if (*p == '"') {
			for (p++; *p && *p != '"'; p++) {
				if (*p == '\\' && p[1])
					p++;
				if (n < sizeof(kv->val) - 1)
					kv->val[n++] = *p;
			}
			if (*p++ != '"')
				return -1;
		} else {
			for (; *p && *p != ',' && *p != '}' && *p != ' '; p++)
				if (n < sizeof(kv->val) - 1)
					kv->val[n++] = *p;
		}
		kv->val[n] = 0;
		p = skip_ws(p);
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p == '}')
			return 0;
		return -1;
	}
}

static const char *get_s(const struct req *r, const char *key, const char *def)
{
	int i;

	for (i = 0; i < r->n; i++)
		if (!strcmp(r->kv[i].key, key))
			return r->kv[i].val;
	return def;
}

static uint64_t get_u(const struct req *r, const char *key, uint64_t def)
{
	const char *s = get_s(r, key, NULL);

	if (!s)
		return def;
	if (!strcmp(s, "true"))
		return 1;
	if (!strcmp(s, "false"))
		return 0;
	return strtoull(s, NULL, 0);
}

static int get_obj(const struct req *r, const char *key, int max_is_qp)
{
	uint64_t id = get_u(r, key, (uint64_t)-1);

	if (id >= MAX_OBJ)
		return -1;
	if (max_is_qp ? !qps[id] : !mrs[id])
		return -1;
	return (int)id;
}

/* ------------------------------------------------------------ helpers */

static int access_flags(const char *s)
{
	int a = IBV_ACCESS_LOCAL_WRITE;

	if (strstr(s, "rw"))
		a |= IBV_ACCESS_REMOTE_WRITE;
	if (strstr(s, "rr"))
		a |= IBV_ACCESS_REMOTE_READ;
	if (strstr(s, "ra"))
		a |= IBV_ACCESS_REMOTE_ATOMIC;
	if (!strstr(s, "lw"))
		a &= ~IBV_ACCESS_LOCAL_WRITE;
	/* remote write/atomic need local write */
	if (a & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC))
		a |= IBV_ACCESS_LOCAL_WRITE;
	return a;
}

static int parse_gid(const char *s, union ibv_gid *gid)
{
	struct in_addr a4;

	memset(gid, 0, sizeof(*gid));
	if (inet_pton(AF_INET, s, &a4) == 1) {
		gid->raw[10] = 0xff;
		gid->raw[11] = 0xff;
		memcpy(&gid->raw[12], &a4, 4);
		return 0;
	}
	return inet_pton(AF_INET6, s, gid->raw) == 1 ? 0 : -1;
}

static enum ibv_mtu mtu_enum(unsigned int m)
{
	switch (m) {
	case 256: return IBV_MTU_256;
	case 512: return IBV_MTU_512;
	case 2048: return IBV_MTU_2048;
	case 4096: return IBV_MTU_4096;
	default: return IBV_MTU_1024;
	}
}

static const char *state_name(enum ibv_qp_state s)
{
	static const char * const n[] = { "reset", "init", "rtr", "rts", "sqd",
					  "sqe", "err" };

	return s <= IBV_QPS_ERR ? n[s] : "unknown";
}

static const char *wc_opcode_name(enum ibv_wc_opcode o)
{
	switch (o) {
	case IBV_WC_SEND: return "send";
	case IBV_WC_RDMA_WRITE: return "write";
	case IBV_WC_RDMA_READ: return "read";
	case IBV_WC_COMP_SWAP: return "cas";
	case IBV_WC_FETCH_ADD: return "faa";
	case IBV_WC_RECV: return "recv";
	case IBV_WC_RECV_RDMA_WITH_IMM: return "recv_rdma_imm";
	default: return "other";
	}
}

/* ------------------------------------------------------------ operations */

static int op_open(const struct req *r)
{
	struct ibv_device **list;
	const char *name = get_s(r, "dev", NULL);
	const char *addr = get_s(r, "addr", NULL);
	struct ibv_port_attr pa;
	union ibv_gid want, g;
	int i, n;

	if (!name || !addr || parse_gid(addr, &want))
		return fail("open needs dev and addr");
	if (ctx)
		return fail("already open");
	list = ibv_get_device_list(&n);
	if (!list)
		return fail("ibv_get_device_list: %s", strerror(errno));
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx)
		return fail("device %s not found or not opened", name);
	snprintf(dev_name, sizeof(dev_name), "%s", name);
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		return fail("ibv_alloc_pd failed");
	if (ibv_query_port(ctx, 1, &pa))
		return fail("ibv_query_port failed");
	for (i = 0; i < pa.gid_tbl_len; i++) {
		if (ibv_query_gid(ctx, 1, i, &g))
			continue;
		if (!memcmp(&g, &want, sizeof(g))) {
			gid_index = i;
			break;
		}
	}
	if (gid_index < 0)
		return fail("%s has no GID for %s", name, addr);
	emit(", \"gid_index\": %d, \"active_mtu\": %d, \"state\": %d",
	     gid_index, 128 << pa.active_mtu, pa.state);
	return 0;
}

static int op_mr(const struct req *r)
{
	size_t len = get_u(r, "len", 4096);
	int i, acc = access_flags(get_s(r, "access", "lw,rw,rr,ra"));
	void *buf;

	for (i = 0; i < MAX_OBJ && mrs[i]; i++)
		;
	if (i == MAX_OBJ || !pd)
		return fail("no room or not open");
	if (posix_memalign(&buf, 4096, len ? len : 1))
		return fail("no memory");
	memset(buf, (int)get_u(r, "fill", 0), len);
	mrs[i] = ibv_reg_mr(pd, buf, len, acc);
	if (!mrs[i]) {
		free(buf);
		return fail("ibv_reg_mr: %s", strerror(errno));
	}
	emit(", \"mr\": %d, \"addr\": %" PRIu64 ", \"rkey\": %u, \"lkey\": %u",
	     i, (uint64_t)(uintptr_t)buf, mrs[i]->rkey, mrs[i]->lkey);
	return 0;
}

static void mr_free(int i)
{
	void *buf = mrs[i]->addr;

	ibv_dereg_mr(mrs[i]);
	free(buf);
	mrs[i] = NULL;
}

static int op_qp(const struct req *r)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64,
			 .max_send_sge = 2, .max_recv_sge = 2 },
		.sq_sig_all = 0,
	};
	int i;

	ia.cap.max_inline_data = get_u(r, "max_inline", 0);
	for (i = 0; i < MAX_OBJ && qps[i]; i++)
		;
	if (i == MAX_OBJ || !pd)
		return fail("no room or not open");
	cqs[i] = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	if (!cqs[i])
		return fail("ibv_create_cq: %s", strerror(errno));
	ia.send_cq = cqs[i];
	ia.recv_cq = cqs[i];
	qps[i] = ibv_create_qp(pd, &ia);
	if (!qps[i]) {
		ibv_destroy_cq(cqs[i]);
		cqs[i] = NULL;
		return fail("ibv_create_qp: %s", strerror(errno));
	}
	emit(", \"qp\": %d, \"qpn\": %u", i, qps[i]->qp_num);
	return 0;
}

static void qp_free(int i)
{
	ibv_destroy_qp(qps[i]);
	ibv_destroy_cq(cqs[i]);
	qps[i] = NULL;
	cqs[i] = NULL;
}

/* RESET -> INIT -> RTR [-> RTS] toward the tester's address and QPN */
static int op_connect(const struct req *r)
{
	int q = get_obj(r, "qp", 1);
	struct ibv_qp_attr a;
	const char *to = get_s(r, "state", "rts");
	union ibv_gid dgid;

	if (q < 0 || parse_gid(get_s(r, "dgid", ""), &dgid))
		return fail("connect needs qp and dgid");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = 1;
	a.qp_access_flags = access_flags(get_s(r, "access", "lw,rw,rr,ra")) &
			    ~IBV_ACCESS_LOCAL_WRITE;
	if (ibv_modify_qp(qps[q], &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return fail("to INIT: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu_enum(get_u(r, "mtu", 1024));
	a.dest_qp_num = get_u(r, "dqpn", 0);
	a.rq_psn = get_u(r, "rq_psn", 0) & 0xffffff;
	a.max_dest_rd_atomic = get_u(r, "max_dest_rd_atomic", 4);
	a.min_rnr_timer = get_u(r, "min_rnr_timer", 12);
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = dgid;
	a.ah_attr.grh.sgid_index = gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.grh.traffic_class = get_u(r, "tclass", 0);
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qps[q], &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return fail("to RTR: %s", strerror(errno));
	if (!strcmp(to, "rtr"))
		return 0;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = get_u(r, "sq_psn", 0) & 0xffffff;
	a.timeout = get_u(r, "timeout", 14);
	a.retry_cnt = get_u(r, "retry_cnt", 7);
	a.rnr_retry = get_u(r, "rnr_retry", 7);
	a.max_rd_atomic = get_u(r, "max_rd_atomic", 4);
	if (ibv_modify_qp(qps[q], &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			  IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		return fail("to RTS: %s", strerror(errno));
	return 0;
}

static int op_modify(const struct req *r)
{
	int q = get_obj(r, "qp", 1);
	const char *s = get_s(r, "state", "");
	struct ibv_qp_attr a = { 0 };

	if (q < 0)
		return fail("no such qp");
	if (!strcmp(s, "err"))
		a.qp_state = IBV_QPS_ERR;
	else if (!strcmp(s, "reset"))
		a.qp_state = IBV_QPS_RESET;
	else if (!strcmp(s, "sqd"))
		a.qp_state = IBV_QPS_SQD;
	else
		return fail("state must be err, reset or sqd");
	if (ibv_modify_qp(qps[q], &a, IBV_QP_STATE))
		return fail("ibv_modify_qp: %s", strerror(errno));
	return 0;
}

static int op_query_qp(const struct req *r)
{
	int q = get_obj(r, "qp", 1);
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (q < 0)
		return fail("no such qp");
	if (ibv_query_qp(qps[q], &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			 IBV_QP_RQ_PSN, &ia))
		return fail("ibv_query_qp: %s", strerror(errno));
	emit(", \"state\": \"%s\", \"sq_psn\": %u, \"rq_psn\": %u",
	     state_name(a.qp_state), a.sq_psn, a.rq_psn);
	return 0;
}

static int op_post_recv(const struct req *r)
{
	int q = get_obj(r, "qp", 1), m;
	struct ibv_sge sge;
	struct ibv_recv_wr wr = { 0 }, *bad;
	int err;

	if (q < 0)
		return fail("no such qp");
	wr.wr_id = get_u(r, "wr_id", 0);
	if (get_u(r, "nsge", 1)) {
		m = get_obj(r, "mr", 0);
		if (m < 0)
			return fail("no such mr");
		sge.addr = (uintptr_t)mrs[m]->addr + get_u(r, "offset", 0);
		sge.length = get_u(r, "len", mrs[m]->length);
		sge.lkey = mrs[m]->lkey;
		wr.sg_list = &sge;
		wr.num_sge = 1;
	}
	err = ibv_post_recv(qps[q], &wr, &bad);
	if (err)
		return fail("ibv_post_recv: %s", strerror(err));
	return 0;
}

static int op_post_send(const struct req *r)
{
	int q = get_obj(r, "qp", 1), m;
	const char *op = get_s(r, "opcode", "send");
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_sge sge;
	size_t len = get_u(r, "len", 0);
	int err;

	if (q < 0)
		return fail("no such qp");
	wr.wr_id = get_u(r, "wr_id", 0);
	if (get_u(r, "signaled", 1))
		wr.send_flags |= IBV_SEND_SIGNALED;
	if (get_u(r, "solicited", 0))
		wr.send_flags |= IBV_SEND_SOLICITED;
	if (len || !strcmp(op, "cas") || !strcmp(op, "faa")) {
		m = get_obj(r, "mr", 0);
		if (m < 0)
			return fail("no such mr");
		sge.addr = (uintptr_t)mrs[m]->addr + get_u(r, "offset", 0);
		sge.length = len ? len : 8;
		sge.lkey = mrs[m]->lkey;
		wr.sg_list = &sge;
		wr.num_sge = 1;
	}
	wr.wr.rdma.remote_addr = get_u(r, "raddr", 0);
	wr.wr.rdma.rkey = get_u(r, "rkey", 0);
	wr.imm_data = htonl((uint32_t)get_u(r, "imm", 0));
	if (!strcmp(op, "send")) {
		wr.opcode = IBV_WR_SEND;
	} else if (!strcmp(op, "send_imm")) {
		wr.opcode = IBV_WR_SEND_WITH_IMM;
	} else if (!strcmp(op, "write")) {
		wr.opcode = IBV_WR_RDMA_WRITE;
	} else if (!strcmp(op, "write_imm")) {
		wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	} else if (!strcmp(op, "read")) {
		wr.opcode = IBV_WR_RDMA_READ;
	} else if (!strcmp(op, "cas") || !strcmp(op, "faa")) {
		wr.opcode = !strcmp(op, "cas") ? IBV_WR_ATOMIC_CMP_AND_SWP :
						 IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr.wr.atomic.remote_addr = get_u(r, "raddr", 0);
		wr.wr.atomic.rkey = get_u(r, "rkey", 0);
		wr.wr.atomic.compare_add = get_u(r, !strcmp(op, "cas") ?
						 "compare" : "add", 0);
		wr.wr.atomic.swap = get_u(r, "swap", 0);
	} else {
		return fail("unknown opcode %s", op);
	}
	err = ibv_post_send(qps[q], &wr, &bad);
	if (err)
		return fail("ibv_post_send: %s", strerror(err));
	return 0;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* completions: wait up to timeout_ms for at least min of them */
static int op_poll(const struct req *r)
{
	int q = get_obj(r, "qp", 1);
	unsigned int min = get_u(r, "min", 1), max = get_u(r, "max", 32), got = 0;
	double end = now_ms() + (double)get_u(r, "timeout_ms", 1000);
	struct ibv_wc wc;

	if (q < 0)
		return fail("no such qp");
	emit(", \"wcs\": [");
	while (got < max) {
		int n = ibv_poll_cq(cqs[q], 1, &wc);

		if (n < 0)
			return fail("ibv_poll_cq failed");
		if (n == 0) {
			if (got >= min || now_ms() > end)
				break;
			usleep(200);
			continue;
		}
		emit("%s{\"wr_id\": %" PRIu64 ", \"status\": \"%s\", \"status_code\": %d, \"opcode\": \"%s\", \"byte_len\": %u, \"imm\": %u, \"with_imm\": %s, \"src_qp\": %u}",
		     got ? ", " : "", wc.wr_id, ibv_wc_status_str(wc.status),
		     wc.status, wc.status == IBV_WC_SUCCESS ?
		     wc_opcode_name(wc.opcode) : "unknown", wc.byte_len,
		     ntohl(wc.imm_data),
		     (wc.wc_flags & IBV_WC_WITH_IMM) ? "true" : "false",
		     wc.src_qp);
		got++;
	}
	emit("]");
	return 0;
}

static int op_mr_read(const struct req *r)
{
	int m = get_obj(r, "mr", 0);
	size_t off = get_u(r, "offset", 0), len = get_u(r, "len", 0), i;
	const uint8_t *p;

	if (m < 0 || off > mrs[m]->length || len > mrs[m]->length - off ||
	    len > 8192)
		return fail("bad mr or range");
	p = (const uint8_t *)mrs[m]->addr + off;
	emit(", \"hex\": \"");
	for (i = 0; i < len; i++)
		emit("%02x", p[i]);
	emit("\"");
	return 0;
}

static int op_mr_write(const struct req *r)
{
	int m = get_obj(r, "mr", 0);
	size_t off = get_u(r, "offset", 0), i, len;
	const char *hex = get_s(r, "hex", "");
	uint8_t *p;

	len = strlen(hex) / 2;
	if (m < 0 || off > mrs[m]->length || len > mrs[m]->length - off)
		return fail("bad mr or range");
	p = (uint8_t *)mrs[m]->addr + off;
	for (i = 0; i < len; i++) {
		unsigned int b;

		if (sscanf(hex + 2 * i, "%2x", &b) != 1)
			return fail("bad hex");
		p[i] = (uint8_t)b;
	}
	return 0;
}

/*
 * The port counters through rdma netlink (iproute2's `rdma statistic`):
 * "link DEV/1 name value name value ...".  Used where sysfs does not show
 * the device's port counters, as in a network namespace whose sysfs shows
 * ib_core's compat device only.
 */
static int counters_netlink(void)
{
	char cmd[256], tok[128], name[128];
	int n = 0, i = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "rdma statistic show link %s/1 2>/dev/null",
		 dev_name);
	p = popen(cmd, "r");
	if (!p)
		return fail("rdma statistic: %s", strerror(errno));
	emit(", \"counters\": {");
	while (fscanf(p, "%127s", tok) == 1) {
		if (i++ < 2)	/* "link", "DEV/1" */
			continue;
		if (i % 2) {	/* a name */
			snprintf(name, sizeof(name), "%s", tok);
			continue;
		}
		emit("%s\"%s\": %" PRIu64, n++ ? ", " : "", name,
		     (uint64_t)strtoull(tok, NULL, 10));
	}
	emit("}");
	if (pclose(p) != 0 || !n)
		return fail("rdma statistic show link %s/1 failed", dev_name);
	return 0;
}

static int op_counters(void)
{
	char path[512], val[64];
	struct dirent *de;
	FILE *f;
	DIR *d;
	int n = 0;

	if (!ctx)
		return fail("not open");
	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/hw_counters", dev_name);
	d = opendir(path);
	if (!d)
		return counters_netlink();
	emit(", \"counters\": {");
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "lifespan"))
			continue;
		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/ports/1/hw_counters/%s",
			 dev_name, de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(val, sizeof(val), f))
			emit("%s\"%s\": %" PRIu64, n++ ? ", " : "", de->d_name,
			     (uint64_t)strtoull(val, NULL, 10));
		fclose(f);
	}
	closedir(d);
	emit("}");
	return 0;
}

/* destroy every QP and MR (between cases) */
static int op_reset(void)
{
	int i;

	for (i = 0; i < MAX_OBJ; i++)
		if (qps[i])
			qp_free(i);
	for (i = 0; i < MAX_OBJ; i++)
		if (mrs[i])
			mr_free(i);
	return 0;
}

static int op_destroy(const struct req *r)
{
	int q = get_obj(r, "qp", 1), m = get_obj(r, "mr", 0);

	if (get_s(r, "qp", NULL)) {
		if (q < 0)
			return fail("no such qp");
		qp_free(q);
	}
	if (get_s(r, "mr", NULL)) {
		if (m < 0)
			return fail("no such mr");
		mr_free(m);
	}
	return 0;
}

static void handle(const char *line)
{
	struct req *r = calloc(1, sizeof(*r));
	const char *op;
	int rc;

	outlen = 0;
	emit("{\"ok\": true");
	if (!r || parse_req(line, r)) {
		fail("malformed request");
		goto out;
	}
	op = get_s(r, "op", "");
	if (!strcmp(op, "hello"))
		rc = (emit(", \"agent\": \"mr-agent\", \"version\": 1"), 0);
	else if (!strcmp(op, "open"))
		rc = op_open(r);
	else if (!strcmp(op, "mr"))
		rc = op_mr(r);
	else if (!strcmp(op, "qp"))
		rc = op_qp(r);
	else if (!strcmp(op, "connect"))
		rc = op_connect(r);
	else if (!strcmp(op, "modify"))
		rc = op_modify(r);
	else if (!strcmp(op, "query_qp"))
		rc = op_query_qp(r);
	else if (!strcmp(op, "post_recv"))
		rc = op_post_recv(r);
	else if (!strcmp(op, "post_send"))
		rc = op_post_send(r);
	else if (!strcmp(op, "poll"))
		rc = op_poll(r);
	else if (!strcmp(op, "mr_read"))
		rc = op_mr_read(r);
	else if (!strcmp(op, "mr_write"))
		rc = op_mr_write(r);
	else if (!strcmp(op, "counters"))
		rc = op_counters();
	else if (!strcmp(op, "destroy"))
		rc = op_destroy(r);
	else if (!strcmp(op, "reset"))
		rc = op_reset();
	else
		rc = fail("unknown op '%s'", op);
	if (!rc)
		emit("}");
out:
	free(r);
}

static void serve(int fd)
{
	static char buf[LINE_MAX_LEN];
	size_t have = 0;

	for (;;) {
		char *nl;
		ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);

		if (n <= 0)
			return;
		have += (size_t)n;
		buf[have] = 0;
		while ((nl = memchr(buf, '\n', have))) {
			*nl = 0;
			handle(buf);
			out[outlen++] = '\n';
			if (write(fd, out, outlen) != (ssize_t)outlen)
				return;
			have -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, have);
		}
		if (have == sizeof(buf) - 1)
			return;		/* a line too long */
	}
}

int main(int argc, char **argv)
{
	const char *addr = "0.0.0.0";
	int port = 18515, once = 0, c, ls, fd, one = 1;
	struct sockaddr_in sa = { .sin_family = AF_INET };

	while ((c = getopt(argc, argv, "a:p:1")) != -1) {
		switch (c) {
		case 'a':
			addr = optarg;
			break;
		case 'p':
			port = atoi(optarg);
			break;
		case '1':
			once = 1;
			break;
		default:
			fprintf(stderr, "usage: %s [-a ADDR] [-p PORT] [-1]\n",
				argv[0]);
			return 2;
		}
	}
	sa.sin_port = htons(port);
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		fprintf(stderr, "mr-agent: bad address %s\n", addr);
		return 2;
	}
	ls = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(ls, 1)) {
		perror("mr-agent: listen");
		return 1;
	}
	printf("mr-agent: listening on %s:%d\n", addr, port);
	fflush(stdout);
	do {
		fd = accept(ls, NULL, NULL);
		if (fd < 0)
			continue;
		serve(fd);
		close(fd);
		op_reset();
	} while (!once);
	if (pd)
		ibv_dealloc_pd(pd);
	if (ctx)
		ibv_close_device(ctx);
	return 0;
}
