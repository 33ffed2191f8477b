/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mroce: MetaRoCE soft RDMA transport - device and verbs object types.
 *
 * Only the ib_core glue includes this header.  Protocol state machines
 * live in headers of their own with no ib_core dependency.
 */
#ifndef MROCE_H
#define MROCE_H

#include <linux/netdevice.h>
#include <linux/percpu.h>
#include <rdma/ib_verbs.h>
#include <rdma/mroce-abi.h>

#include "mroce_cc.h"
#include "mroce_wire.h"
#include "mroce_xport.h"

#define MROCE_PORT		1
#define MROCE_GID_TBL_LEN	1024
#define MROCE_VENDOR_ID		0xffffff	/* no IEEE OUI assigned */
#define MROCE_MAX_PD		0x10000

/*
 * Bytes a MetaRoCE packet needs around its payload, worst case: IPv6 + UDP
 * + the largest transport header.  The active IB MTU reported to verbs
 * users is the largest IB MTU that still fits in the netdev MTU.
 */
#define MROCE_MAX_WIRE_OVERHEAD	(40 + 8 + 64)

/*
 * Port counters, exported as hw counters (rdma statistic show).  The
 * packet-level drop counters follow enum mroce_wire_err one to one and
 * take their names from mroce_wire_err_name().
 */
enum mroce_counter {
	MROCE_CNT_RX_PKTS,
	MROCE_CNT_RX_BYTES,
	MROCE_CNT_RX_DROP_NO_CSUM,
	MROCE_CNT_RX_DROP_WIRE_FIRST,	/* rx_drop_short */
	MROCE_CNT_RX_DROP_WIRE_LAST = MROCE_CNT_RX_DROP_WIRE_FIRST +
				      MROCE_WIRE_NUM_ERR - 2,
	MROCE_CNT_RX_DROP_UNSUPPORTED,
	MROCE_CNT_TX_PKTS,
	MROCE_CNT_TX_BYTES,
	MROCE_CNT_PORT_STATE_CHANGES,
	MROCE_NUM_COUNTERS
};

/* The counter of a packet mroce_wire_parse() rejected with -@err. */
static inline enum mroce_counter mroce_wire_drop_counter(int err)
{
	return MROCE_CNT_RX_DROP_WIRE_FIRST + (-err - MROCE_WIRE_ERR_SHORT);
}

struct mroce_counters {
	u64 v[MROCE_NUM_COUNTERS];
};

struct mroce_dev {
	struct ib_device ib_dev;	/* must stay first: ib_alloc_device() */
	struct net_device *ndev;	/* ib_core holds the reference */
	struct list_head list;		/* on mroce_dev_list */

	/* packet I/O provider: the soft UDP path or a NIC offload */
	const struct mroce_xport_ops *xport;
	void *xport_priv;
	struct hlist_node xport_node;	/* soft path: on its socket set */

	const struct mroce_cc_ops *cc;	/* default for new QPs */

	atomic_t num_pds;
	enum ib_port_state port_state;	/* last state dispatched */
	struct mroce_counters __percpu *stats;
};

struct mroce_ucontext {
	struct ib_ucontext ibuc;
};

struct mroce_pd {
	struct ib_pd ibpd;
};

static inline struct mroce_dev *to_mdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct mroce_dev, ib_dev);
}

static inline void mroce_count(struct mroce_dev *mdev, enum mroce_counter c,
			       u64 n)
{
	this_cpu_add(mdev->stats->v[c], n);
}

/* mroce_main.c */
void mroce_port_update(struct mroce_dev *mdev);
enum ib_port_state mroce_port_state(const struct mroce_dev *mdev);
enum ib_mtu mroce_port_mtu(const struct mroce_dev *mdev);
void mroce_dealloc_driver(struct ib_device *ibdev);

/* mroce_verbs.c */
extern const struct ib_device_ops mroce_dev_ops;
void mroce_counters_init(void);

#endif /* MROCE_H */
