/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mroce congestion control: pluggable algorithms, in the spirit of
 * struct tcp_congestion_ops.
 *
 * An algorithm owns the sending window and rate of one connection (QP).
 * The transport calls it on every acknowledgment, loss and congestion
 * mark and asks it how many packets may be in flight and at which rate
 * the pacer may release them.  No ib_core dependency: KUnit and the
 * conformance suite drive algorithms directly.
 */
#ifndef MROCE_CC_H
#define MROCE_CC_H

#include <linux/list.h>
#include <linux/types.h>

struct module;

#define MROCE_CC_NAME_MAX	16
#define MROCE_CC_PRIV_SIZE	64	/* algorithm private state, u64 aligned */

/* What one acknowledgment told the sender. */
struct mroce_cc_ack {
	u32 acked_pkts;		/* newly acknowledged packets */
	u32 ecn_pkts;		/* of which arrived congestion-marked */
	u32 rtt_us;		/* RTT sample, 0 if none */
	u64 rate_hint_bps;	/* receiver fair-share hint, 0 if none */
};

/* Per-connection congestion state shared by the transport and the algorithm. */
struct mroce_cc_state {
	u32 cwnd_pkts;		/* packets allowed in flight */
	u64 rate_bps;		/* pacing rate; 0 = unpaced */
	u64 line_rate_bps;	/* link speed, upper bound of rate_bps */
	u64 priv[MROCE_CC_PRIV_SIZE / sizeof(u64)];
};

struct mroce_cc_ops {
	struct list_head list;
	char name[MROCE_CC_NAME_MAX];
	struct module *owner;

	/* required: set the initial window and rate */
	void (*init)(struct mroce_cc_state *cc);
	/* optional: an acknowledgment arrived */
	void (*on_ack)(struct mroce_cc_state *cc, const struct mroce_cc_ack *ack);
	/* optional: @lost_pkts were declared lost (SACK or timeout) */
	void (*on_loss)(struct mroce_cc_state *cc, u32 lost_pkts, bool timeout);
	/* the transport applies per-path windows (cwnd_p) for it */
	bool path_windows;
	/* optional: release private resources */
	void (*release)(struct mroce_cc_state *cc);
};

int mroce_cc_register(struct mroce_cc_ops *ops);
void mroce_cc_unregister(struct mroce_cc_ops *ops);
const struct mroce_cc_ops *mroce_cc_get(const char *name);
void mroce_cc_put(const struct mroce_cc_ops *ops);
int mroce_cc_init(void);
void mroce_cc_exit(void);

#endif /* MROCE_CC_H */
