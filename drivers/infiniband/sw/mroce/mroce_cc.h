/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mroce congestion control: pluggable algorithms, in the spirit of
 * struct tcp_congestion_ops, and what they share (as tcp_cong.c exports
 * tcp_slow_start() and the tcp_reno_*() steps).
 *
 * An algorithm owns the connection window and the pacing rate of one
 * connection (the send side of a QP).  The transport calls it on every
 * acknowledgment and loss and reads back how many packets may be in
 * flight (cwnd_pkts) and at which rate the pacer may release them
 * (rate_bps).  Per-path windows and weights are not the algorithm's
 * business: the path scheduler keeps them, and the transport sends at most
 * min(cwnd_pkts, sum of the path windows) packets.
 *
 * Life of a connection: init() when the QP is created or reset (nothing
 * is known about the peer yet); on_ack() and on_loss() as feedback
 * arrives; and before it sends new packets the transport calls
 * mroce_cc_tx(), which starts the connection again through
 * mroce_cc_init_conn() when it sends after an idle period longer than the
 * RTO, seeded from the last rate hint the receiver sent: what the
 * algorithm knew before the pause is stale, the receiver's last share is
 * the best guess of what it may send now.
 *
 * Context: every callback is made with the QP's send-queue lock held, in
 * softirq or process context with bottom halves disabled.  Callbacks must
 * not sleep, allocate or take other locks; they only do integer arithmetic
 * on struct mroce_cc_state.  Time is passed in (microseconds, any epoch,
 * monotonic): algorithms never read a clock and never arm a timer, so
 * KUnit and the conformance suite can drive them directly.
 *
 * Pure protocol code: no ib_core or rdma header, here or in mroce_cc*.c.
 */
#ifndef MROCE_CC_H
#define MROCE_CC_H

#include <linux/bits.h>
#include <linux/limits.h>
#include <linux/list.h>
#include <linux/types.h>

#include "mroce_wire.h"

struct module;

#define MROCE_CC_NAME_MAX	16
#define MROCE_CC_PRIV_SIZE	128	/* algorithm private state, u64 aligned */

/*
 * The congestion-control parameters of the spec that more than one file
 * uses (the algorithms, the path table, the rate hint), each defined once
 * here.  An algorithm's own tunables are static consts in its file.
 */

/* The largest window any algorithm may grant: the SACK bitmap span. */
#define MROCE_CC_MAX_CWND		MROCE_WIRE_SACK_BITS
/* The line rate assumed when the transport does not know the link's. */
#define MROCE_CC_DEFAULT_LINE_BPS	100000000000ULL	/* 100 Gbit/s */
/* The round trip assumed before the first RTT sample. */
#define MROCE_CC_DEFAULT_RTT_US		100
/*
 * target_qdelay: the standing queueing delay above which the delay
 * signal reports congestion, for hardware timestamps.  A software host
 * passes its own (struct mroce_cc_ack.qdelay_target_us).
 */
#define MROCE_CC_QDELAY_TARGET_US	25
/* Rate floor, min(this, line rate): a connection always gets through. */
#define MROCE_CC_MIN_RATE_BPS		10000000ULL	/* 10 Mbit/s */
/* ce_count is 16 bits on the wire: saturated, it means "all marked". */
#define MROCE_CC_CE_SATURATED		U16_MAX

/* Fixed point of the fractions the algorithms keep (alpha): ONE = 1.0. */
#define MROCE_CC_SHIFT			20
#define MROCE_CC_ONE			BIT(MROCE_CC_SHIFT)

/*
 * What one acknowledgment (ACK, or the KH part of a NAK) told the sender.
 * The transport fills in what it knows and leaves the rest zero; every
 * field has a "not known" value that algorithms must cope with.
 */
struct mroce_cc_ack {
	u64 now_us;		/* when the ACK is processed */
	u32 path;		/* echoed path id */
	u32 acked_pkts;		/* packets newly acknowledged (cumulative + SACK) */
	u32 inflight_pkts;	/* packets still outstanding after this ACK */
	/*
	 * Packets the receiver counted since its previous ACK (rx_count)
	 * and of those the CE-marked ones (ce_count), as on the wire.
	 * rx_count 0: an unsolicited ACK (rate-hint push) with no echo;
	 * ce_count MROCE_CC_CE_SATURATED: the sender treats it as fully
	 * marked.
	 */
	u32 rx_count;
	u32 ce_count;
	bool echo_ce;		/* the triggering packet arrived CE-marked */
	u32 rtt_us;		/* RTT sample (ack_delay subtracted), 0 if none */
	u32 srtt_us;		/* connection smoothed RTT, 0 if none yet */
	u32 min_rtt_us;		/* connection minimum RTT, 0 if none yet */
	/*
	 * The RTT to size the window from the rate (0: unknown, SRTT is
	 * used): the RTT without network queues, plus what the transport
	 * tolerates (min_rtt_us + qdelay_target_us for the soft one, whose
	 * RTT under load includes the hosts' own scheduling).  A transport
	 * without a delay signal passes this and leaves min_rtt_us 0.
	 */
	u32 base_rtt_us;
	/*
	 * Queueing delay (RTT - min_rtt) above which the delay signal
	 * reports congestion; 0: MROCE_CC_QDELAY_TARGET_US.  Software hosts
	 * pass more: their RTT includes scheduling.
	 */
	u32 qdelay_target_us;
	u64 rate_hint_bps;	/* receiver fair-share hint, 0 if none */
};

/* Per-connection congestion state shared by the transport and the algorithm. */
struct mroce_cc_state {
	u32 cwnd_pkts;		/* packets allowed in flight, 1..256 */
	/*
	 * Full packet size on the wire (IP header through UDP payload) at
	 * the current path MTU, used to turn rates into windows and byte
	 * counts.  Set by the transport; 0 if not known.
	 */
	u32 pkt_bytes;
	u64 rate_bps;		/* pacing rate; 0 = unpaced */
	u64 line_rate_bps;	/* link speed, upper bound of rate_bps */
	/*
	 * Standing queueing delay of the last round (us), for statistics;
	 * algorithms without a delay signal leave it 0.
	 */
	u32 qdelay_us;
	/*
	 * When the connection last sent a new packet (mroce_cc_tx()), 0:
	 * never.  The framework's; algorithms leave it alone.  init() keeps
	 * it, so the first packet after a QP reset may count as a restart:
	 * that changes nothing, the transport forgot the hint on reset too.
	 */
	u64 tx_us;
	u64 priv[MROCE_CC_PRIV_SIZE / sizeof(u64)];
};

struct mroce_cc_ops {
	struct list_head list;
	char name[MROCE_CC_NAME_MAX];
	struct module *owner;

	/*
	 * required: start a connection with the link speed already in
	 * cc->line_rate_bps (0: not known, the algorithm assumes
	 * MROCE_CC_DEFAULT_LINE_BPS) and no rate hint.  Called when a QP
	 * is created and when it is reset.  Must set every field it uses,
	 * priv included: cc may hold a previous connection's state.
	 */
	void (*init)(struct mroce_cc_state *cc);
	/*
	 * optional: the same with the link speed and the last rate hint
	 * received on the connection (0: none), which caps the start rate.
	 * Called by mroce_cc_tx() to restart a connection that sends after
	 * an idle period longer than the RTO.  Without it,
	 * mroce_cc_init_conn() stores the line rate and calls init().
	 */
	void (*init_conn)(struct mroce_cc_state *cc, u64 line_rate_bps,
			  u64 hint_bps);
	/* optional: an acknowledgment arrived; once per ACK, in order */
	void (*on_ack)(struct mroce_cc_state *cc, const struct mroce_cc_ack *ack);
	/*
	 * optional: @lost_pkts were declared lost on path @path at @now_us,
	 * by SACK/path-sequence detection (timeout false) or because the
	 * retransmission timer expired (timeout true).
	 */
	void (*on_loss)(struct mroce_cc_state *cc, u32 lost_pkts, bool timeout,
			u64 now_us, u32 path);
	/* the transport applies per-path windows (cwnd_p) for it */
	bool path_windows;
	/* optional: release private resources */
	void (*release)(struct mroce_cc_state *cc);
};

/* Registry (mroce_cc.c) */
int mroce_cc_register(struct mroce_cc_ops *ops);
void mroce_cc_unregister(struct mroce_cc_ops *ops);
const struct mroce_cc_ops *mroce_cc_get(const char *name);
void mroce_cc_put(const struct mroce_cc_ops *ops);
int mroce_cc_init(void);
void mroce_cc_exit(void);

/* What the transport calls besides the ops (mroce_cc.c) */
void mroce_cc_init_conn(const struct mroce_cc_ops *ops,
			struct mroce_cc_state *cc, u64 line_rate_bps,
			u64 hint_bps);
bool mroce_cc_tx(const struct mroce_cc_ops *ops, struct mroce_cc_state *cc,
		 bool in_flight, u64 now_us, u32 idle_us, u64 hint_bps);

/*
 * What the built-in algorithms track the same way from the ACKs: the
 * connection's SRTT and the receiver's latest rate hint.  An algorithm
 * embeds one in its private state and feeds it every ACK with
 * mroce_cc_track_ack().
 */
struct mroce_cc_track {
	u64 hint_bps;		/* latest rate hint H; 0: none yet */
	u64 hint_us;		/* when it arrived */
	u32 srtt_us;		/* latest connection SRTT; 0: none yet */
};

/* Shared arithmetic of the algorithms (mroce_cc.c) */
u64 mroce_cc_start(struct mroce_cc_state *cc, u64 line_rate_bps,
		   u64 hint_bps);
void mroce_cc_track_ack(struct mroce_cc_track *t,
			const struct mroce_cc_ack *ack);
u32 mroce_cc_round_us(const struct mroce_cc_track *t);
u64 mroce_cc_rate_cap(const struct mroce_cc_state *cc,
		      const struct mroce_cc_track *t, u64 now_us);
u64 mroce_cc_clamp_rate(const struct mroce_cc_state *cc, u64 rate_bps);

/* Microseconds from @then to @now; 0 if the clock seems to run backwards. */
static inline u64 mroce_cc_elapsed(u64 now, u64 then)
{
	return now > then ? now - then : 0;
}

/* The built-in algorithms (mroce_cc.c, mroce_cc_metaroce.c, mroce_cc_dcqcn.c) */
extern struct mroce_cc_ops mroce_cc_none;
extern struct mroce_cc_ops mroce_cc_metaroce;
extern struct mroce_cc_ops mroce_cc_dcqcn;

#endif /* MROCE_CC_H */
