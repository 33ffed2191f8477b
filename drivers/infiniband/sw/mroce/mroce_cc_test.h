/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the congestion-control KUnit suites share: mroce_cc (mroce_cc_test.c)
 * and the suites of the algorithms' private steps, which their files
 * include (mroce_cc_metaroce_test.c, mroce_cc_dcqcn_test.c).
 */
#ifndef MROCE_CC_TEST_H
#define MROCE_CC_TEST_H

#include "mroce_cc.h"

#define GBPS		1000000000ULL
#define MBPS		1000000ULL

/* An ACK at @now for @rx packets, @ce of them marked, RTT @srtt. */
static inline struct mroce_cc_ack cc_ack(u64 now, u32 rx, u32 ce, u32 srtt)
{
	struct mroce_cc_ack a = {
		.now_us = now,
		.acked_pkts = rx,
		.rx_count = rx,
		.ce_count = ce,
		.echo_ce = ce > 0,
		.rtt_us = srtt,
		.srtt_us = srtt,
		.min_rtt_us = srtt,
	};

	return a;
}

static inline void cc_ack_at(const struct mroce_cc_ops *ops,
			     struct mroce_cc_state *cc, u64 now, u32 rx,
			     u32 ce, u32 srtt)
{
	struct mroce_cc_ack a = cc_ack(now, rx, ce, srtt);

	ops->on_ack(cc, &a);
}

#endif /* MROCE_CC_TEST_H */
