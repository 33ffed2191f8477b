// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce verbs: device and port queries, user contexts, protection domains,
 * the device's hw counters and the per-QP driver attributes of "rdma
 * resource show qp -dd", and the ib_device_ops table.  Queue pairs,
 * completion queues, memory regions and address handles have files of
 * their own.
 */

#include <net/addrconf.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_netlink.h>
#include <rdma/restrack.h>
#include <rdma/uverbs_ioctl.h>

#include "mroce.h"

static int mroce_query_device(struct ib_device *ibdev,
			      struct ib_device_attr *attr,
			      struct ib_udata *udata)
{
	struct mroce_dev *mdev = to_mdev(ibdev);

	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;

	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = 0;
	attr->sys_image_guid = ibdev->node_guid;
	attr->max_mr_size = U64_MAX;
	attr->page_size_cap = PAGE_SIZE;
	attr->vendor_id = MROCE_VENDOR_ID;
	attr->vendor_part_id = 0;
	attr->hw_ver = 0;
	attr->max_pd = MROCE_MAX_PD;
	attr->max_qp = MROCE_MAX_QP;
	attr->max_qp_wr = MROCE_MAX_QP_WR;
	attr->max_send_sge = MROCE_MAX_SGE;
	attr->max_recv_sge = MROCE_MAX_SGE;
	attr->max_sge_rd = MROCE_MAX_SGE;
	attr->max_cq = MROCE_MAX_CQ;
	attr->max_cqe = MROCE_MAX_CQE;
	attr->max_mr = MROCE_MAX_MR;
	attr->max_mw = MROCE_MAX_MW;
	attr->max_ah = MROCE_MAX_AH;
	attr->max_srq = MROCE_MAX_SRQ;
	attr->max_srq_wr = MROCE_MAX_SRQ_WR;
	attr->max_srq_sge = MROCE_MAX_SGE;
	attr->max_qp_rd_atom = MROCE_MAX_RD_ATOMIC;
	attr->max_qp_init_rd_atom = MROCE_MAX_RD_ATOMIC;
	attr->max_res_rd_atom = MROCE_MAX_RD_ATOMIC * MROCE_MAX_QP;
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->max_pkeys = 1;
	attr->local_ca_ack_delay = 15;
	attr->device_cap_flags = IB_DEVICE_RC_RNR_NAK_GEN |
				 IB_DEVICE_SYS_IMAGE_GUID |
				 IB_DEVICE_CHANGE_PHY_PORT |
				 IB_DEVICE_MEM_MGT_EXTENSIONS |
				 /* memory windows: type 1 and type 2B */
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B;
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	/* fast registration, LOCAL_INV and SEND_WITH_INV: kernel ULPs */
	attr->max_fast_reg_page_list_len = MROCE_MAX_FAST_REG_PAGES;
	addrconf_addr_eui48((unsigned char *)&attr->sys_image_guid,
			    mdev->ndev->dev_addr);
	return 0;
}

static int mroce_query_port(struct ib_device *ibdev, u32 port,
			    struct ib_port_attr *attr)
{
	struct mroce_dev *mdev = to_mdev(ibdev);

	/* ib_query_port() has zeroed *attr and checked @port. */
	attr->state = mroce_port_state(mdev);
	attr->phys_state = attr->state == IB_PORT_ACTIVE ?
			   IB_PORT_PHYS_STATE_LINK_UP :
			   IB_PORT_PHYS_STATE_DISABLED;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = mroce_port_mtu(mdev);
	attr->gid_tbl_len = MROCE_GID_TBL_LEN;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->max_msg_sz = SZ_2G;
	attr->bad_pkey_cntr = 0;
	attr->qkey_viol_cntr = 0;
	attr->pkey_tbl_len = MROCE_PKEY_TBL_LEN;
	attr->max_vl_num = 1;
	attr->ip_gids = true;

	/* Fails while the netdev is being unregistered: report a port
	 * without speed rather than fail the cache update of a dying port.
	 */
	if (ib_get_eth_speed(ibdev, port, &attr->active_speed,
			     &attr->active_width)) {
		attr->active_speed = IB_SPEED_SDR;
		attr->active_width = IB_WIDTH_1X;
	}
	return 0;
}

static int mroce_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			    u16 *pkey)
{
	if (index)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

static int mroce_get_port_immutable(struct ib_device *ibdev, u32 port,
				    struct ib_port_immutable *immutable)
{
	immutable->pkey_tbl_len = MROCE_PKEY_TBL_LEN;
	immutable->gid_tbl_len = MROCE_GID_TBL_LEN;
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static enum rdma_link_layer mroce_get_link_layer(struct ib_device *ibdev,
						 u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

static int mroce_alloc_ucontext(struct ib_ucontext *ibuc,
				struct ib_udata *udata)
{
	struct mroce_alloc_ucontext_resp resp = {
		.abi_version = MROCE_UVERBS_ABI_VERSION,
	};

	/* Nothing is defined for the request yet: it must be empty. */
	if (udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	return ib_copy_to_udata(udata, &resp,
				min_t(size_t, udata->outlen, sizeof(resp)));
}

/*
 * The device goes away (netdev or namespace removal, rdma link delete,
 * rmmod) while a process still has it open.  Having this op at all is
 * what matters: ib_core then destroys the process's objects through the
 * ordinary destroy verbs and zaps its mmaps (our rings are rdma mmap
 * entries), instead of waiting for the process to close the device, which
 * would stall the unregistration and every later namespace teardown.
 * Nothing of ours outlives the objects, so there is nothing more to do.
 */
static void mroce_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

static void mroce_dealloc_ucontext(struct ib_ucontext *ibuc)
{
}

static int mroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct mroce_dev *mdev = to_mdev(ibpd->device);

	return mroce_pool_add(&mdev->pool[MROCE_POOL_PD]) ? -ENOSPC : 0;
}

static int mroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	mroce_pool_del(&to_mdev(ibpd->device)->pool[MROCE_POOL_PD]);
	return 0;
}

/*
 * The spec's "Device counters" list, in the order of enum mroce_counter.
 * mroce_counters_init() fills in the wire drop names (mroce_wire.c).
 */
#define MROCE_NAK_CNT(dir, code) \
	(MROCE_CNT_##dir##_NAKS_FIRST + MROCE_NAK_##code - MROCE_NAK_PSN_SEQ_ERR)
static struct rdma_stat_desc mroce_counter_descs[MROCE_NUM_COUNTERS] = {
	[MROCE_CNT_RX_PKTS].name = "rx_pkts",
	[MROCE_CNT_RX_BYTES].name = "rx_bytes",
	[MROCE_CNT_TX_PKTS].name = "tx_pkts",
	[MROCE_CNT_TX_BYTES].name = "tx_bytes",
	[MROCE_CNT_RX_DROP_NO_CSUM].name = "rx_drop_no_csum",
	[MROCE_CNT_RX_DROP_GSO].name = "rx_drop_gso",
	[MROCE_CNT_RX_DROP_UNKNOWN_QP].name = "rx_drop_unknown_qp",
	[MROCE_CNT_RX_DROP_QP_TYPE].name = "rx_drop_qp_type",
	[MROCE_CNT_RX_DROP_QP_STATE].name = "rx_drop_qp_state",
	[MROCE_CNT_RX_DROP_SRC_MISMATCH].name = "rx_drop_src_mismatch",
	[MROCE_CNT_RX_DROP_QKEY].name = "rx_drop_qkey",
	[MROCE_CNT_RX_DROP_PSN_WINDOW].name = "rx_drop_psn_window",
	[MROCE_CNT_RX_DROP_NO_RWQE].name = "rx_drop_no_rwqe",
	[MROCE_CNT_RX_DUP_PKTS].name = "rx_dup_pkts",
	[MROCE_CNT_RX_DUP_READ_REEXEC].name = "rx_dup_read_reexec",
	[MROCE_CNT_RX_DUP_READ_DROPPED].name = "rx_dup_read_dropped",
	[MROCE_CNT_RX_DUP_ATOMIC_CACHED].name = "rx_dup_atomic_cached",
	[MROCE_CNT_RX_DUP_ATOMIC_UNCACHED].name = "rx_dup_atomic_uncached",
	[MROCE_CNT_RX_DROP_ACK_RANGE].name = "rx_drop_ack_range",
	[MROCE_CNT_RX_DROP_RESP_UNEXPECTED].name = "rx_drop_resp_unexpected",
	[MROCE_CNT_RX_OOO_PKTS].name = "rx_ooo_pkts",
	[MROCE_CNT_RX_CE_PKTS].name = "rx_ce_pkts",
	[MROCE_CNT_TX_ACKS].name = "tx_acks",
	[MROCE_CNT_TX_ACKS_DELAYED].name = "tx_acks_delayed",
	[MROCE_CNT_RX_ACKS].name = "rx_acks",
	[MROCE_CNT_TX_ACKS_PB].name = "tx_acks_pb",
	[MROCE_CNT_RX_ACKS_PB].name = "rx_acks_pb",
	[MROCE_NAK_CNT(TX, PSN_SEQ_ERR)].name = "tx_naks_psn_seq_err",
	[MROCE_NAK_CNT(TX, RNR)].name = "tx_naks_rnr",
	[MROCE_NAK_CNT(TX, REM_ACCESS)].name = "tx_naks_rem_access",
	[MROCE_NAK_CNT(TX, REM_OP)].name = "tx_naks_rem_op",
	[MROCE_NAK_CNT(TX, INV_REQ)].name = "tx_naks_inv_req",
	[MROCE_NAK_CNT(RX, PSN_SEQ_ERR)].name = "rx_naks_psn_seq_err",
	[MROCE_NAK_CNT(RX, RNR)].name = "rx_naks_rnr",
	[MROCE_NAK_CNT(RX, REM_ACCESS)].name = "rx_naks_rem_access",
	[MROCE_NAK_CNT(RX, REM_OP)].name = "rx_naks_rem_op",
	[MROCE_NAK_CNT(RX, INV_REQ)].name = "rx_naks_inv_req",
	[MROCE_CNT_TX_RETX_PKTS].name = "tx_retx_pkts",
	[MROCE_CNT_TX_READ_REREQ].name = "tx_read_rereq",
	[MROCE_CNT_RETX_SACK].name = "retx_sack",
	[MROCE_CNT_RETX_SPURIOUS].name = "retx_spurious",
	[MROCE_CNT_LOSS_PATH_SEQ].name = "loss_path_seq",
	[MROCE_CNT_LOSS_RACK].name = "loss_rack",
	[MROCE_CNT_TLP_PROBES].name = "tlp_probes",
	[MROCE_CNT_RTO_EXPIRED].name = "rto_expired",
	[MROCE_CNT_LOSS_SCANS].name = "loss_scans",
	[MROCE_CNT_LOSS_SCAN_PKTS].name = "loss_scan_pkts",
	[MROCE_CNT_PATH_DEAD].name = "path_dead",
	[MROCE_CNT_PATH_REVIVED].name = "path_revived",
	[MROCE_CNT_TX_PROBES].name = "tx_probes",
	[MROCE_CNT_RETRY_EXC].name = "retry_exc",
	[MROCE_CNT_RNR_RETRY_EXC].name = "rnr_retry_exc",
	[MROCE_CNT_TX_DROP].name = "tx_drop",
	[MROCE_CNT_TX_ROUTE_LOOKUPS].name = "tx_route_lookups",
	[MROCE_CNT_TX_ZCOPY_PKTS].name = "tx_zcopy_pkts",
	[MROCE_CNT_TX_LOOPBACK_PKTS].name = "tx_loopback_pkts",
	[MROCE_CNT_TX_SEG_CHUNKS].name = "tx_seg_chunks",
	[MROCE_CNT_TX_GSO_SKBS].name = "tx_gso_skbs",
	[MROCE_CNT_RX_GRO_SKBS].name = "rx_gro_skbs",
	[MROCE_CNT_RX_GRO_PKTS].name = "rx_gro_pkts",
	[MROCE_CNT_RX_GSO_SKBS].name = "rx_gso_skbs",
	[MROCE_CNT_RX_GSO_PKTS].name = "rx_gso_pkts",
	[MROCE_CNT_TX_RATE_HINTS].name = "tx_rate_hints",
	[MROCE_CNT_RX_RATE_HINTS].name = "rx_rate_hints",
	[MROCE_CNT_PORT_STATE_CHANGES].name = "port_state_changes",
	[MROCE_CNT_FAST_REG].name = "fast_reg",
	[MROCE_CNT_LOCAL_INV].name = "local_inv",
	[MROCE_CNT_RX_REMOTE_INV].name = "rx_remote_inv",
};

void mroce_counters_init(void)
{
	int err;

	for (err = MROCE_WIRE_ERR_SHORT; err < MROCE_WIRE_NUM_ERR; err++)
		mroce_counter_descs[mroce_wire_drop_counter(-err)].name =
			mroce_wire_err_name(err);
}

const char *mroce_counter_name(enum mroce_counter c)
{
	return c < MROCE_NUM_COUNTERS && mroce_counter_descs[c].name ?
	       mroce_counter_descs[c].name : "unknown";
}

static struct rdma_hw_stats *mroce_alloc_hw_port_stats(struct ib_device *ibdev,
						       u32 port)
{
	return rdma_alloc_hw_stats_struct(mroce_counter_descs,
					  MROCE_NUM_COUNTERS,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

static int mroce_get_hw_stats(struct ib_device *ibdev,
			      struct rdma_hw_stats *stats, u32 port, int index)
{
	struct mroce_dev *mdev = to_mdev(ibdev);
	int cpu, i;

	for (i = 0; i < MROCE_NUM_COUNTERS; i++) {
		u64 sum = 0;

		for_each_possible_cpu(cpu)
			sum += per_cpu_ptr(mdev->stats, cpu)->v[i];
		stats->value[i] = sum;
	}
	return MROCE_NUM_COUNTERS;
}

/* Per-QP counters and transport state for "rdma resource show qp -dd". */
static const enum mroce_counter mroce_qp_counters[] = {
	MROCE_CNT_TX_PKTS, MROCE_CNT_TX_BYTES, MROCE_CNT_TX_RETX_PKTS,
	MROCE_CNT_TX_READ_REREQ, MROCE_CNT_RETX_SACK, MROCE_CNT_LOSS_PATH_SEQ,
	MROCE_CNT_LOSS_RACK, MROCE_CNT_TLP_PROBES, MROCE_CNT_RTO_EXPIRED,
	MROCE_CNT_LOSS_SCANS, MROCE_CNT_LOSS_SCAN_PKTS,
	MROCE_CNT_RETX_SPURIOUS, MROCE_CNT_RX_DUP_PKTS, MROCE_CNT_RX_OOO_PKTS,
	MROCE_NAK_CNT(RX, RNR), MROCE_CNT_RX_CE_PKTS, MROCE_CNT_PATH_DEAD,
	MROCE_CNT_PATH_REVIVED, MROCE_CNT_TX_RATE_HINTS, MROCE_CNT_RX_RATE_HINTS,
	MROCE_CNT_RX_DROP_ACK_RANGE, MROCE_CNT_RX_DROP_RESP_UNEXPECTED,
};

/* One path of an RC QP, as text: entropy, state, weight, window, counters. */
static int mroce_fill_res_path(struct sk_buff *msg, struct mroce_qp *qp,
			       u32 id)
{
	const struct mroce_path *p = &qp->sq.paths->path[id];
	char name[8], val[160];

	snprintf(name, sizeof(name), "path%u", id);
	snprintf(val, sizeof(val),
		 "sport %u %s w %u/16 cwnd %u inflight %u srtt %u tx %llu retx %llu lost %llu ce %llu dead %u revived %u",
		 mroce_wire_sport(qp->sq.path_hash, id, p->gen),
		 mroce_path_state_name(p), p->w, p->cwnd, p->inflight,
		 mroce_path_srtt_us(p), p->stats.tx_pkts, p->stats.retx_pkts,
		 p->stats.lost, p->stats.ce_echoes, p->stats.deaths,
		 p->stats.revivals);
	return rdma_nl_put_driver_string(msg, name, val);
}

/*
 * One percentile of every path's RTT samples, as one string: the value of
 * path 0, 1, ... separated by spaces, "-" for a path with no sample.  One
 * attribute rather than one per path: a QP's entry must fit in one dump
 * message (below).  Samples are below 1 s: at most 7 characters a path.
 */
static int mroce_fill_res_path_rtt(struct sk_buff *msg, struct mroce_qp *qp,
				   const char *name, u32 ppm)
{
	char val[MROCE_PATHS_MAX * 8];
	size_t len = 0;
	u32 id;

	for (id = 0; id < qp->sq.paths->n; id++) {
		const struct mroce_hist *h = &qp->sq.path_rtt[id];

		if (h->total)
			len += scnprintf(val + len, sizeof(val) - len, "%s%u",
					 id ? " " : "", mroce_hist_pct(h, ppm));
		else
			len += scnprintf(val + len, sizeof(val) - len, "%s-",
					 id ? " " : "");
	}
	return rdma_nl_put_driver_string(msg, name, val);
}

/*
 * Where a QP's driver attributes start when its entry is the first of a
 * dump message: after the message and device headers and the QP's
 * standard attributes, a few hundred bytes in.
 */
#define MROCE_RES_FIRST_ENTRY_MAX	512

/* The QP's send completion latency: count, p50, p99, p99.9, max (us). */
static int mroce_fill_res_lat(struct sk_buff *msg, struct mroce_qp *qp)
{
	u32 v[4];
	u64 n;

	spin_lock_bh(&qp->sq.lock);
	n = qp->sq.lat.total;
	v[0] = mroce_hist_pct(&qp->sq.lat, MROCE_HIST_P50);
	v[1] = mroce_hist_pct(&qp->sq.lat, MROCE_HIST_P99);
	v[2] = mroce_hist_pct(&qp->sq.lat, MROCE_HIST_P999);
	v[3] = qp->sq.lat.max;
	spin_unlock_bh(&qp->sq.lock);
	if (rdma_nl_put_driver_u64(msg, "lat_count", n) ||
	    rdma_nl_put_driver_u32(msg, "lat_p50_us", v[0]) ||
	    rdma_nl_put_driver_u32(msg, "lat_p99_us", v[1]) ||
	    rdma_nl_put_driver_u32(msg, "lat_p999_us", v[2]) ||
	    rdma_nl_put_driver_u32(msg, "lat_max_us", v[3]))
		return -EMSGSIZE;
	return 0;
}

static int mroce_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct mroce_qp *qp = to_mqp(ibqp);
	struct nlattr *nest;
	u32 v[18];
	int i;

	nest = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < ARRAY_SIZE(mroce_qp_counters); i++) {
		enum mroce_counter c = mroce_qp_counters[i];

		if (rdma_nl_put_driver_u64(msg, mroce_counter_descs[c].name,
					   atomic64_read(&qp->qcnt[c])))
			goto err;
	}
	if (mroce_fill_res_lat(msg, qp))
		goto err;
	if (ibqp->qp_type == IB_QPT_RC) {
		void *mark;
		u64 rate;
		u32 id;

		/*
		 * One snapshot under sq.lock, paths included: a concurrent
		 * destroy frees them (and clears the pointer) under it.
		 */
		spin_lock_bh(&qp->sq.lock);
		if (!qp->sq.paths) {
			spin_unlock_bh(&qp->sq.lock);
			goto done;
		}
		v[0] = qp->sq.rto.srtt_us;
		v[1] = qp->sq.rto.rttvar_us;
		v[2] = qp->sq.min_rtt_us;
		v[3] = mroce_rto_us(&qp->sq.rto);
		v[4] = qp->sq.sb.k;
		v[5] = qp->sq.cc.cwnd_pkts;
		v[6] = mroce_sb_outstanding(&qp->sq.sb);
		v[7] = qp->sq.cc.qdelay_us;
		v[8] = qp->sq.hint_mbps;
		v[9] = qp->sq.sb.una;
		v[10] = qp->sq.sb.nxt;
		v[11] = qp->sq.path_hash;
		v[12] = READ_ONCE(qp->rq.epsn);
		v[13] = READ_ONCE(qp->rq.rq_done);
		v[14] = mroce_delack_us(&qp->rq.delack);	/* a snapshot */
		v[15] = mroce_qp_pb_ok(qp);
		v[16] = mroce_req_seg(qp);
		v[17] = READ_ONCE(qp->sq.peer_seg);
		rate = qp->sq.cc.rate_bps;
		if (rdma_nl_put_driver_string(msg, "cc", qp->sq.cc_ops->name) ||
		    rdma_nl_put_driver_u32(msg, "snd_una", v[9]) ||
		    rdma_nl_put_driver_u32(msg, "snd_nxt", v[10]) ||
		    rdma_nl_put_driver_u32(msg, "epsn", v[12]) ||
		    rdma_nl_put_driver_u32(msg, "rq_seq_next", v[13]) ||
		    rdma_nl_put_driver_u32_hex(msg, "entropy_base", v[11]) ||
		    rdma_nl_put_driver_u32(msg, "srtt_us", v[0]) ||
		    rdma_nl_put_driver_u32(msg, "rttvar_us", v[1]) ||
		    rdma_nl_put_driver_u32(msg, "min_rtt_us", v[2]) ||
		    rdma_nl_put_driver_u32(msg, "qdelay_us", v[7]) ||
		    rdma_nl_put_driver_u32(msg, "rto_us", v[3]) ||
		    rdma_nl_put_driver_u32(msg, "ack_delay_us", v[14]) ||
		    rdma_nl_put_driver_u32(msg, "pb_ack", v[15]) ||
		    rdma_nl_put_driver_u32(msg, "seg", v[16]) ||
		    rdma_nl_put_driver_u32(msg, "peer_seg_max", v[17]) ||
		    rdma_nl_put_driver_u32(msg, "reorder_pkts", v[4]) ||
		    rdma_nl_put_driver_u32(msg, "cwnd_pkts", v[5]) ||
		    rdma_nl_put_driver_u32(msg, "outstanding_pkts", v[6]) ||
		    rdma_nl_put_driver_u64(msg, "rate_mbps",
					   div_u64(rate, 1000000)) ||
		    rdma_nl_put_driver_u32(msg, "rate_hint_mbps", v[8]) ||
		    rdma_nl_put_driver_u32(msg, "paths_active",
					   mroce_paths_nr_active(qp->sq.paths)))
			goto err_unlock;
		/*
		 * The paths: one line each, then their RTT percentiles.  An
		 * entry that does not fit in a message is retried in the next
		 * one, and ib_core retries one that does not fit in an empty
		 * message for ever ("rdma resource" hangs): with many paths,
		 * the first entry of a message leaves out what does not fit
		 * and says so (paths_shown).
		 */
		mark = nlmsg_get_pos(msg);
		for (id = 0; id < qp->sq.paths->n; id++)
			if (mroce_fill_res_path(msg, qp, id))
				break;
		if (id == qp->sq.paths->n && qp->sq.path_rtt &&
		    (mroce_fill_res_path_rtt(msg, qp, "path_rtt_p50_us",
					     MROCE_HIST_P50) ||
		     mroce_fill_res_path_rtt(msg, qp, "path_rtt_p99_us",
					     MROCE_HIST_P99)))
			id = 0;
		if (id < qp->sq.paths->n) {
			if ((unsigned char *)nest - msg->data >
			    MROCE_RES_FIRST_ENTRY_MAX)
				goto err_unlock;	/* the next message */
			nlmsg_trim(msg, mark);
			if (rdma_nl_put_driver_u32(msg, "paths_shown", 0))
				goto err_unlock;
		}
		spin_unlock_bh(&qp->sq.lock);
	}
done:
	nla_nest_end(msg, nest);
	return 0;
err_unlock:
	spin_unlock_bh(&qp->sq.lock);
err:
	nla_nest_cancel(msg, nest);
	return -EMSGSIZE;
}

const struct ib_device_ops mroce_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = MROCE_DRIVER_ID,
	.uverbs_abi_ver = MROCE_UVERBS_ABI_VERSION,

	.alloc_hw_port_stats = mroce_alloc_hw_port_stats,
	.alloc_mr = mroce_alloc_mr,
	.alloc_mw = mroce_alloc_mw,
	.alloc_pd = mroce_alloc_pd,
	.alloc_ucontext = mroce_alloc_ucontext,
	.create_ah = mroce_create_ah,
	.create_cq = mroce_compat_create_cq,
	.create_qp = mroce_create_qp,
	.create_srq = mroce_create_srq,
	.create_user_ah = mroce_create_ah,
	.dealloc_driver = mroce_dealloc_driver,
	.dealloc_mw = mroce_dealloc_mw,
	.dealloc_pd = mroce_dealloc_pd,
	.dealloc_ucontext = mroce_dealloc_ucontext,
	.dereg_mr = mroce_dereg_mr,
	.disassociate_ucontext = mroce_disassociate_ucontext,
	.destroy_ah = mroce_destroy_ah,
	.destroy_cq = mroce_destroy_cq,
	.destroy_qp = mroce_destroy_qp,
	.destroy_srq = mroce_destroy_srq,
	.get_dma_mr = mroce_get_dma_mr,
	.get_hw_stats = mroce_get_hw_stats,
	.get_link_layer = mroce_get_link_layer,
	.get_port_immutable = mroce_get_port_immutable,
	.map_mr_sg = mroce_map_mr_sg,
	.mmap = mroce_mmap,
	.mmap_free = mroce_mmap_free,
	.modify_qp = mroce_modify_qp,
	.modify_srq = mroce_modify_srq,
	.poll_cq = mroce_poll_cq,
	.post_recv = mroce_post_recv,
	.post_send = mroce_post_send,
	.post_srq_recv = mroce_post_srq_recv,
	.query_device = mroce_query_device,
	.query_pkey = mroce_query_pkey,
	.query_port = mroce_query_port,
	.query_qp = mroce_query_qp,
	.query_srq = mroce_query_srq,
	.fill_res_qp_entry = mroce_fill_res_qp_entry,
	.reg_user_mr = mroce_reg_user_mr,
	.rereg_user_mr = mroce_rereg_user_mr,
	.req_notify_cq = mroce_req_notify_cq,
	.resize_cq = mroce_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, mroce_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, mroce_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, mroce_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, mroce_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, mroce_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, mroce_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, mroce_ucontext, ibuc),
};
