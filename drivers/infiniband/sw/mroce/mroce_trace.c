// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce tracepoints (mroce_trace.h): defined here, and the out-of-line
 * half of the drop tracepoint that mroce_count() calls when it is
 * enabled.
 */

#include "mroce.h"

#define CREATE_TRACE_POINTS
#include "mroce_trace.h"

DEFINE_PER_CPU(const struct mroce_pkt_info *, mroce_rx_pkt);

/*
 * The packet is known when the drop is counted inside mroce_xport_rcv()
 * on this CPU with bottom halves off: nothing else that counts drops
 * runs on this CPU until it returns and clears mroce_rx_pkt.
 */
void mroce_trace_drop(struct mroce_dev *mdev, enum mroce_counter c)
{
	const struct mroce_pkt_info *pi = NULL;

	if (in_softirq())
		pi = this_cpu_read(mroce_rx_pkt);
	trace_mroce_drop(mdev, c, pi);
}
