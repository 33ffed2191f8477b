// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_mrproto: drives libmrproto (the driver's pure protocol files,
 * compiled for userspace through tools/sim/shim) and checks behaviour,
 * not just that it links: KUnit stays the unit test of these files, this
 * proves the userspace build computes what the kernel build does.
 *
 * Prints one line per check, "ok N - what" or "not ok N - what" (TAP),
 * and exits non-zero if any check fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>

#include "mroce_cc.h"
#include "mroce_pace.h"
#include "mroce_path.h"
#include "mroce_psn.h"
#include "mroce_ratehint.h"
#include "mroce_rto.h"
#include "mroce_sb.h"
#include "mroce_wire.h"

static int n_checks, n_failed;

static void check(bool ok, const char *what)
{
	n_checks++;
	if (!ok)
		n_failed++;
	printf("%sok %d - %s\n", ok ? "" : "not ", n_checks, what);
}

/* A WRITE and an ACK with a SACK bitmap survive build and parse. */
static void test_wire(void)
{
	struct mroce_pkt_info in = { 0 }, out = { 0 };
	u8 buf[MROCE_HLEN_MAX];
	int len;

	in.opcode = MROCE_OP_WRITE;
	in.flags = MROCE_F_FIRST | MROCE_F_LAST | MROCE_F_ACK_REQ;
	in.path_id = 5;
	in.dest_qpn = 0x1234;
	in.src_qpn = 0x42;
	in.psn = 0xfffffe;
	in.path_seq = 77;
	in.msn = 3;
	in.ts_us = 123456;
	in.va = 0x1000;
	in.rkey = 0xabcd;
	in.msg_len = 1000;
	in.payload_len = 1000;
	len = mroce_wire_build(buf, sizeof(buf), &in);
	check(len == MROCE_HLEN_WRITE, "wire: WRITE header is BH + MH + DH");
	len = mroce_wire_parse(buf, len + 1000, &out);
	check(len == 0 && out.opcode == MROCE_OP_WRITE && out.psn == in.psn &&
	      out.path_id == 5 && out.path_seq == 77 && out.dest_qpn == 0x1234 &&
	      out.src_qpn == 0x42 && out.va == 0x1000 && out.rkey == 0xabcd &&
	      out.ts_us == 123456 && out.payload_len == 1000 &&
	      out.hdr_len == MROCE_HLEN_WRITE,
	      "wire: WRITE round-trips");
	buf[0] = 9;	/* an unknown version */
	check(mroce_wire_parse(buf, MROCE_HLEN_WRITE + 1000, &out) < 0,
	      "wire: an unknown version is refused");

	memset(&in, 0, sizeof(in));
	in.opcode = MROCE_OP_ACK;
	in.dest_qpn = 0x42;
	in.src_qpn = 0x1234;
	in.psn = 100;
	in.echo_ts = 99;
	in.echo_path_seq = 7;
	in.echo_path_id = 3;
	in.echo_psn = 104;
	in.echo_flags = MROCE_ECHO_CE;
	in.rx_count = 8;
	in.ce_count = 2;
	in.rate_hint_mbps = 25000;
	mroce_wire_sack_set(in.sack, 4);
	mroce_wire_sack_set(in.sack, 200);
	len = mroce_wire_build(buf, sizeof(buf), &in);
	check(len == MROCE_HLEN_ACK, "wire: ACK header is BH + KH");
	memset(&out, 0, sizeof(out));
	check(!mroce_wire_parse(buf, len, &out) && out.opcode == MROCE_OP_ACK &&
	      out.psn == 100 && out.echo_path_id == 3 && out.echo_path_seq == 7 &&
	      out.echo_flags == MROCE_ECHO_CE && out.rx_count == 8 &&
	      out.ce_count == 2 && out.rate_hint_mbps == 25000 &&
	      mroce_wire_sack_test(out.sack, 4) &&
	      mroce_wire_sack_test(out.sack, 200) &&
	      !mroce_wire_sack_test(out.sack, 5),
	      "wire: ACK with SACK, echo, CE count and rate hint round-trips");
	check(mroce_wire_sport(0x100, 1, 0) != mroce_wire_sport(0x100, 2, 0) &&
	      mroce_wire_sport(0x100, 1, 0) != mroce_wire_sport(0x100, 1, 1) &&
	      mroce_wire_sport(0x100, 1, 0) >= MROCE_WIRE_SPORT_BASE,
	      "wire: each path and generation has its own source port");
}

struct sb_log {
	u32 delivered, lost, last_lost;
};

static void sb_fn(void *ctx, u32 psn, const struct mroce_sb_slot *s,
		  enum mroce_sb_event ev)
{
	struct sb_log *l = ctx;

	(void)s;
	if (ev == MROCE_SB_DELIVERED) {
		l->delivered++;
	} else {
		l->lost++;
		l->last_lost = psn;
	}
}

/* A gap behind later deliveries on its own path is declared lost, once. */
static void test_sb(void)
{
	static struct mroce_sb sb;
	struct mroce_sb_clock c = {
		.srtt_us = 100, .rttvar_us = 10, .min_rtt_us = 100,
	};
	struct sb_log log = { 0 };
	u64 sack[MROCE_WIRE_SACK_WORDS] = { 0 };
	u32 psn, seq[2] = { 0, 0 }, lost;

	mroce_sb_init(&sb, 1000);
	/* PSNs 1000..1009 alternate between paths 0 and 1 */
	for (psn = 1000; psn < 1010; psn++)
		mroce_sb_sent(&sb, psn, psn % 2, seq[psn % 2]++, psn - 1000);
	check(mroce_sb_outstanding(&sb) == 10, "sb: ten outstanding");
	/* 1000 (path 0, seq 0) missing, everything else arrived */
	for (psn = 1001; psn < 1010; psn++) {
		const struct mroce_sb_slot *s = mroce_sb_slot(&sb, psn);

		mroce_sb_echo(&sb, s->path, s->path_seq, s->xmit_us);
		mroce_wire_sack_set(sack, psn - 1000);
	}
	check(mroce_sb_ack(&sb, 1000, sack, sb_fn, &log) == 9 &&
	      log.delivered == 9, "sb: nine SACKed");
	check(mroce_sb_outstanding(&sb) == 1, "sb: one outstanding after the SACK");
	c.now_us = 5;	/* too early: inside the reorder window */
	lost = mroce_sb_detect(&sb, &c, sb_fn, &log, NULL);
	check(lost == 0, "sb: nothing lost inside the reorder window");
	c.now_us = 1000;
	lost = mroce_sb_detect(&sb, &c, sb_fn, &log, NULL);
	check(lost == 1 && log.last_lost == 1000, "sb: the gap is declared lost");
	check(mroce_sb_next_lost(&sb, 1000, &psn) && psn == 1000,
	      "sb: the lost PSN is next to resend");
	check(mroce_sb_detect(&sb, &c, sb_fn, &log, NULL) == 0,
	      "sb: a loss is declared once");
	mroce_sb_sent(&sb, 1000, 1, seq[1]++, 1000);
	memset(sack, 0, sizeof(sack));
	log.delivered = 0;
	check(mroce_sb_ack(&sb, 1010, sack, sb_fn, &log) == 1 &&
	      sb.una == 1010 && mroce_sb_outstanding(&sb) == 0,
	      "sb: the resend's cumulative ACK closes the window");
	check(mroce_psn_before(0xffffff, 0) && mroce_psn_add(0xffffff, 1) == 0,
	      "psn: 24-bit wraparound orders correctly");
}

/* Run @acks ACKs of 8 packets, @marked of them CE, 10 us apart. */
static u64 cc_feed(const struct mroce_cc_ops *ops, struct mroce_cc_state *cc,
		   u64 *now, int acks, u32 marked)
{
	int i;

	for (i = 0; i < acks; i++) {
		struct mroce_cc_ack a = {
			.now_us = *now, .acked_pkts = 8, .inflight_pkts = 16,
			.rx_count = 8, .ce_count = marked, .echo_ce = marked > 0,
			.rtt_us = 20, .srtt_us = 20,
		};

		ops->on_ack(cc, &a);
		*now += 10;
	}
	return cc->rate_bps;
}

/* ECN marks cut metaroce's and dcqcn's rate; "none" does not pace. */
static void test_cc(void)
{
	static const char *const algos[] = { "metaroce", "dcqcn" };
	const struct mroce_cc_ops *ops;
	struct mroce_cc_state cc;
	unsigned int i;

	check(mroce_cc_init() == 0, "cc: the built-in algorithms register");
	for (i = 0; i < 2; i++) {
		char what[96];
		u64 now = 1000, start, clean, marked, recovered;

		ops = mroce_cc_get(algos[i]);
		snprintf(what, sizeof(what), "cc %s: found by name", algos[i]);
		check(ops, what);
		if (!ops)
			continue;
		memset(&cc, 0, sizeof(cc));
		cc.pkt_bytes = mroce_wire_pkt_bytes(4096);
		mroce_cc_init_conn(ops, &cc, 100000000000ULL, 0);
		start = cc.rate_bps;
		clean = cc_feed(ops, &cc, &now, 20, 0);
		marked = cc_feed(ops, &cc, &now, 20, 8);
		snprintf(what, sizeof(what),
			 "cc %s: all-CE ACKs cut the rate (%llu -> %llu Mbit/s)",
			 algos[i], (unsigned long long)clean / 1000000,
			 (unsigned long long)marked / 1000000);
		check(start > 0 && marked < clean / 2, what);
		snprintf(what, sizeof(what), "cc %s: never below the floor",
			 algos[i]);
		check(marked >= MROCE_CC_MIN_RATE_BPS && cc.cwnd_pkts >= 1, what);
		recovered = cc_feed(ops, &cc, &now, 2000, 0);
		snprintf(what, sizeof(what),
			 "cc %s: clean ACKs raise it again (%llu Mbit/s)",
			 algos[i], (unsigned long long)recovered / 1000000);
		check(recovered > marked, what);
	}
	ops = mroce_cc_get("none");
	check(ops && !mroce_cc_get("nosuch"), "cc: none found, unknown names not");
	if (ops) {
		memset(&cc, 0, sizeof(cc));
		mroce_cc_init_conn(ops, &cc, 0, 0);
		check(cc.rate_bps == 0 && cc.cwnd_pkts > 1,
		      "cc none: unpaced, a fixed window");
	}
}

/* Weighted round-robin over every path; a dead path gets nothing. */
static void test_path(void)
{
	struct mroce_paths *ps = calloc(1, mroce_paths_size(4));
	u32 count[4] = { 0 };
	int i, id;
	bool ok = true;

	if (!ps) {
		check(false, "path: allocate");
		return;
	}
	check(mroce_paths_init(ps, 4, 64, false, 0) == 0 &&
	      mroce_paths_nr_active(ps) == 4, "path: four active paths");
	for (i = 0; i < 400; i++) {
		id = mroce_paths_pick(ps);
		if (id < 0 || id >= 4) {
			ok = false;
			break;
		}
		count[id]++;
		mroce_paths_sent(ps, id, false);
	}
	check(ok && count[0] == 100 && count[1] == 100 && count[2] == 100 &&
	      count[3] == 100, "path: equal weights, equal shares");
	check(mroce_paths_kill(ps, 2, 10) && !mroce_paths_active(ps, 2) &&
	      mroce_paths_nr_active(ps) == 3, "path: a killed path is dead");
	for (i = 0; i < 300; i++) {
		id = mroce_paths_pick(ps);
		if (id == 2 || id < 0)
			ok = false;
		else
			mroce_paths_sent(ps, id, false);
	}
	check(ok, "path: the dead path is not picked");
	id = mroce_paths_pick_retx(ps, 2);
	check(id >= 0 && id != 2 && mroce_paths_pick_retx(ps, 1) == 1,
	      "path: a resend stays on a live path, leaves a dead one");
	free(ps);
}

/* Two heavy senders get about half the line each, four a quarter. */
static u32 hint_run(u32 senders)
{
	static struct mroce_hint rh;
	struct mroce_hint_conn c[4];
	u64 now;
	u32 i, hint = 0;

	mroce_hint_init(&rh, 10000, MROCE_HINT_EPOCH_US);	/* 10 Gbit/s */
	for (i = 0; i < 4; i++)
		mroce_hint_conn_init(&c[i]);
	/* the link full: 10 Gbit/s is 1250 bytes per microsecond */
	for (now = 1; now < 5000; now += 4)
		for (i = 0; i < senders; i++)
			hint = mroce_hint_rx(&rh, &c[i], 5000 / senders, false,
					     now);
	return hint;
}

static void test_ratehint(void)
{
	u32 one = hint_run(1), two = hint_run(2), four = hint_run(4);
	char what[96];

	check(one == 0, "ratehint: a single sender gets no hint");
	snprintf(what, sizeof(what),
		 "ratehint: 2 senders %u Mbit/s each, 4 senders %u Mbit/s each",
		 two, four);
	check(two >= 4000 && two <= 6250 && four * 10 >= two * 4 &&
	      four * 10 <= two * 6, what);
}

static void test_rto_pace(void)
{
	struct mroce_rto r;
	struct mroce_pacer p;
	u64 wait;

	mroce_rto_init(&r);
	check(mroce_rto_us(&r) == MROCE_RTO_INIT_US, "rto: initial value");
	mroce_rto_sample(&r, 100000);
	check(mroce_rto_us(&r) == 100000 + 4 * 50000 ||
	      mroce_rto_us(&r) == MROCE_RTO_MAX_US,
	      "rto: SRTT + 4 RTTVAR after one sample");
	mroce_rto_expired(&r);
	check(mroce_rto_us(&r) == MROCE_RTO_MAX_US, "rto: backs off to the cap");

	/* 1 Gbit/s, 1250-byte packets: one every 10 us after the burst */
	mroce_pacer_init(&p);
	mroce_pacer_sent(&p, 1000000000ULL, 1250, 1250, 100);
	mroce_pacer_sent(&p, 1000000000ULL, 1250, 1250, 100);
	wait = mroce_pacer_next_us(&p, 1000000000ULL, 1250, 100);
	check(wait >= 9 && wait <= 11, "pace: 10 us between packets at 1 Gbit/s");
	check(mroce_pacer_next_us(&p, 1000000000ULL, 1250, 100 + wait) == 0,
	      "pace: due after the wait");
}

int main(void)
{
	test_wire();
	test_sb();
	test_cc();
	test_path();
	test_ratehint();
	test_rto_pace();
	printf("1..%d\n# %d passed, %d failed\n", n_checks,
	       n_checks - n_failed, n_failed);
	return n_failed ? 1 : 0;
}
