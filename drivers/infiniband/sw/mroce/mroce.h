/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mroce: MetaRoCE soft RDMA transport - device and verbs object types.
 *
 * Only the ib_core glue includes this header.  Protocol state machines
 * live in headers of their own with no ib_core dependency.
 *
 * The files, by role (the Makefile groups them the same way):
 *
 *   device and verbs
 *     mroce_main.c      module, rdma link ops, device lifecycle, port state
 *     mroce_verbs.c     ib_device_ops, queries, PD, counters, rdma resource
 *     mroce_pool.c      object counts, numbers and lookups
 *     mroce_queue.c     rings shared with the provider, mmap
 *     mroce_mr.c        memory regions, keys, copies in and out of them
 *     mroce_mw.c        memory windows: bind, invalidate, rkey lookup
 *     mroce_cq.c        completion queues
 *     mroce_qp.c        QPs, the state machine, kernel post_send/post_recv
 *     mroce_srq.c       shared receive queues; binding their WQEs to QPs
 *     mroce_ah.c        address handles and address vectors
 *   packet I/O
 *     mroce_xport.[ch]  provider registry (soft UDP, NIC offload)
 *     mroce_net.c       the soft provider: per-netns UDP sockets
 *     mroce_recv.c      receive demux: parse, count drops, dispatch
 *     mroce_pkt.c       build and send a packet
 *     mroce_trace.[ch]  tracepoints (mroce:*), the drop event's helper
 *   transport engines (mroce_sq.h: what the send side shares)
 *     mroce_opcode.c    work request opcode table
 *     mroce_req.c       requester
 *     mroce_comp.c      completer
 *     mroce_recovery.c  loss recovery
 *     mroce_timer.c     loss timer, RNR wait
 *     mroce_resp.c      responder
 *   pure protocol code (no ib_core; KUnit suites *_test.c)
 *     mroce_wire.[ch]   wire format, packet opcode table, validation
 *     mroce_psn.h       PSN arithmetic
 *     mroce_msg.[ch]    responder: the packets of a message agree (C10)
 *     mroce_sb.[ch]     send scoreboard, loss detector
 *     mroce_path.[ch]   path table: spraying, dead paths, probes
 *     mroce_rto.h       RTO, verbs retry budget
 *     mroce_pace.h      pacer
 *     mroce_cc*.[ch]    congestion control registry and algorithms
 *     mroce_ratehint.[ch]  receiver rate hint
 *     mroce_hist.[ch]   latency histograms (completion latency, path RTT)
 */
#ifndef MROCE_H
#define MROCE_H

#include <linux/in.h>
#include <linux/hrtimer.h>
#include <linux/in6.h>
#include <linux/interrupt.h>
#include <linux/netdevice.h>
#include <linux/percpu.h>
#include <linux/timer.h>
#include <linux/tracepoint-defs.h>
#include <linux/xarray.h>
#include <net/dst_cache.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/mroce-abi.h>

#include "mroce_cc.h"
#include "mroce_delack.h"
#include "mroce_hist.h"
#include "mroce_msg.h"
#include "mroce_pace.h"
#include "mroce_path.h"
#include "mroce_ratehint.h"
#include "mroce_rto.h"
#include "mroce_sb.h"
#include "mroce_wire.h"
#include "mroce_xport.h"

#define MROCE_PORT		1
#define MROCE_GID_TBL_LEN	1024
#define MROCE_PKEY_TBL_LEN	1
#define MROCE_VENDOR_ID		0xffffff	/* no IEEE OUI assigned */
#define MROCE_MAX_PD		0x10000
#define MROCE_MAX_QP		0x10000
#define MROCE_MAX_CQ		0x10000
#define MROCE_MAX_MR		0x40000
#define MROCE_MAX_MW		0x10000
#define MROCE_MAX_AH		0x10000
#define MROCE_MAX_QP_WR		4096
#define MROCE_MAX_SRQ		0x10000
#define MROCE_MAX_SRQ_WR	4096
#define MROCE_MAX_CQE		65536
#define MROCE_MAX_SGE		8
/* pages of one fast registration (max_fast_reg_page_list_len) */
#define MROCE_MAX_FAST_REG_PAGES	512
#define MROCE_MAX_INLINE	256
#define MROCE_MAX_RD_ATOMIC	16
#define MROCE_MIN_QPN		16
#define MROCE_READ_CHUNK_SEGS	64	/* READ request: at most 64 PMTUs */
#define MROCE_TX_BUDGET		64	/* packets per requester run */
#define MROCE_RD_DUPS		4	/* re-executed READs queued at once */
#define MROCE_RD_RECENT		8	/* re-executed READ PSNs remembered */
/*
 * A READ PSN is answered again at most once per max(SRTT, this): our own
 * requester repeats nothing blindly faster than its tail probe floor.
 */
#define MROCE_RD_REEXEC_GAP_MIN_US	MROCE_TLP_MIN_US
#define MROCE_ACK_EVERY		8	/* packets between ACKs */
#define MROCE_QDELAY_TARGET_DEF_US	5000	/* qdelay_target_us default */
#define MROCE_MIN_RTT_WIN_US	(10 * USEC_PER_SEC)	/* min RTT filter */
/*
 * ... while a hole exists.  As ack_every: a resend asks for its ACK at
 * once (ACK_REQ), which is the SACK the recovery needs; ACKs twice as
 * often during a hole cost a CPU-bound sender more than they gained
 * (make bench, two guests, 1 % loss: 0.68-0.75 of lossless at 4, 0.85-0.89
 * at 8, with a third fewer ACKs).
 */
#define MROCE_ACK_EVERY_GAP	8

/*
 * Port counters, exported as hw counters (rdma statistic show), with the
 * names of the spec's "Device counters" list (mroce_verbs.c), which is
 * normative: t-11-counters fails when the two differ.  The packet-level
 * drop counters follow enum mroce_wire_err one to one and take their
 * names from mroce_wire_err_name(); the NAK counters follow enum
 * mroce_nak_code.
 */
enum mroce_counter {
	MROCE_CNT_RX_PKTS,
	MROCE_CNT_RX_BYTES,
	MROCE_CNT_TX_PKTS,
	MROCE_CNT_TX_BYTES,
	MROCE_CNT_RX_DROP_NO_CSUM,
	MROCE_CNT_RX_DROP_GSO,
	MROCE_CNT_RX_DROP_WIRE_FIRST,	/* rx_drop_short */
	MROCE_CNT_RX_DROP_WIRE_LAST = MROCE_CNT_RX_DROP_WIRE_FIRST +
				      MROCE_WIRE_NUM_ERR - 2,
	MROCE_CNT_RX_DROP_UNKNOWN_QP,
	MROCE_CNT_RX_DROP_QP_TYPE,
	MROCE_CNT_RX_DROP_QP_STATE,
	MROCE_CNT_RX_DROP_SRC_MISMATCH,
	MROCE_CNT_RX_DROP_QKEY,
	MROCE_CNT_RX_DROP_PSN_WINDOW,
	MROCE_CNT_RX_DROP_NO_RWQE,
	MROCE_CNT_RX_DUP_PKTS,
	MROCE_CNT_RX_DUP_READ_REEXEC,
	MROCE_CNT_RX_DUP_READ_DROPPED,
	MROCE_CNT_RX_DUP_ATOMIC_CACHED,
	MROCE_CNT_RX_DUP_ATOMIC_UNCACHED,
	MROCE_CNT_RX_DROP_ACK_RANGE,
	MROCE_CNT_RX_DROP_RESP_UNEXPECTED,
	MROCE_CNT_RX_OOO_PKTS,
	MROCE_CNT_RX_CE_PKTS,
	MROCE_CNT_TX_ACKS,
	MROCE_CNT_TX_ACKS_DELAYED,
	MROCE_CNT_RX_ACKS,
	MROCE_CNT_TX_ACKS_PB,
	MROCE_CNT_RX_ACKS_PB,
	MROCE_CNT_TX_NAKS_FIRST,	/* tx_naks_psn_seq_err */
	MROCE_CNT_TX_NAKS_LAST = MROCE_CNT_TX_NAKS_FIRST + MROCE_NAK_MAX - 1,
	MROCE_CNT_RX_NAKS_FIRST,	/* rx_naks_psn_seq_err */
	MROCE_CNT_RX_NAKS_LAST = MROCE_CNT_RX_NAKS_FIRST + MROCE_NAK_MAX - 1,
	MROCE_CNT_TX_RETX_PKTS,
	MROCE_CNT_TX_READ_REREQ,
	MROCE_CNT_RETX_SACK,
	MROCE_CNT_RETX_SPURIOUS,
	MROCE_CNT_LOSS_PATH_SEQ,
	MROCE_CNT_LOSS_RACK,
	MROCE_CNT_TLP_PROBES,
	MROCE_CNT_RTO_EXPIRED,
	MROCE_CNT_LOSS_SCANS,
	MROCE_CNT_LOSS_SCAN_PKTS,
	MROCE_CNT_PATH_DEAD,
	MROCE_CNT_PATH_REVIVED,
	MROCE_CNT_TX_PROBES,
	MROCE_CNT_RETRY_EXC,
	MROCE_CNT_RNR_RETRY_EXC,
	MROCE_CNT_TX_DROP,
	MROCE_CNT_TX_ROUTE_LOOKUPS,
	MROCE_CNT_TX_ZCOPY_PKTS,
	MROCE_CNT_TX_LOOPBACK_PKTS,
	MROCE_CNT_TX_SEG_CHUNKS,
	MROCE_CNT_TX_GSO_SKBS,
	MROCE_CNT_RX_GRO_SKBS,
	MROCE_CNT_RX_GRO_PKTS,
	MROCE_CNT_RX_GSO_SKBS,
	MROCE_CNT_RX_GSO_PKTS,
	MROCE_CNT_TX_RATE_HINTS,
	MROCE_CNT_RX_RATE_HINTS,
	MROCE_CNT_PORT_STATE_CHANGES,
	MROCE_CNT_FAST_REG,
	MROCE_CNT_LOCAL_INV,
	MROCE_CNT_RX_REMOTE_INV,
	MROCE_NUM_COUNTERS
};

/* The counter of a NAK with @code sent (@rx false) or received. */
static inline enum mroce_counter mroce_nak_counter(enum mroce_nak_code code,
						   bool rx)
{
	return (rx ? MROCE_CNT_RX_NAKS_FIRST : MROCE_CNT_TX_NAKS_FIRST) +
	       code - MROCE_NAK_PSN_SEQ_ERR;
}

/* The counter of a packet mroce_wire_parse() rejected with -@err. */
static inline enum mroce_counter mroce_wire_drop_counter(int err)
{
	return MROCE_CNT_RX_DROP_WIRE_FIRST + (-err - MROCE_WIRE_ERR_SHORT);
}

struct mroce_counters {
	u64 v[MROCE_NUM_COUNTERS];
};

/* Object pools (mroce_pool.c): counts, limits, numbers, lookups. */
enum mroce_pool_type {
	MROCE_POOL_PD,
	MROCE_POOL_CQ,
	MROCE_POOL_QP,
	MROCE_POOL_MR,
	MROCE_POOL_AH,
	MROCE_POOL_SRQ,
	MROCE_POOL_MW,			/* by rkey index, as rkey_xa */
	MROCE_NUM_POOLS
};

struct mroce_pool {
	const char *name;
	u32 max;			/* objects at once */
	atomic_t count;
	struct xarray xa;		/* number -> object, RCU readers */
	struct xa_limit limit;		/* the numbers */
	u32 next;			/* cyclic allocation */
};

/* What a lookup holds of an object: embedded in QPs and MRs. */
struct mroce_pool_elem {
	refcount_t ref;			/* lookups and holders + 1 */
};

/* Same-device loopback: one queue per CPU (mroce_net.c). */
struct mroce_loop {
	struct sk_buff_head q;
	struct tasklet_struct task;
	struct mroce_dev *mdev;
	bool running;	/* the task drains q: no need to schedule it */
};

struct mroce_dev {
	struct ib_device ib_dev;	/* must stay first: ib_alloc_device() */
	struct net_device *ndev;	/* ib_core holds the reference */

	/* packet I/O provider: the soft UDP path or a NIC offload */
	const struct mroce_xport_ops *xport;
	void *xport_priv;
	struct hlist_node xport_node;	/* soft path: on its socket set */
	struct list_head xport_entry;	/* on the attached list (mroce_xport.c) */
	/* soft path: packets to the device's own address (mroce_net.c) */
	struct mroce_loop __percpu *loop;

	const struct mroce_cc_ops *cc;	/* default for new QPs */

	/* QPN -> QP, lkey >> 8 -> MR, AH number -> its address ... */
	struct mroce_pool pool[MROCE_NUM_POOLS];
	/*
	 * rkey >> 8 -> mroce_mr, RCU readers.  A window's rkey index is
	 * reserved here too (an entry that reads NULL): MR and MW rkeys
	 * never share an index; the window itself is in pool[MROCE_POOL_MW].
	 */
	struct xarray rkey_xa;
	spinlock_t atomic_lock;		/* serialises remote atomics */
	/* receiver fair-share rate hint for the senders to this port */
	spinlock_t rh_lock;
	struct mroce_hint rh;

	enum ib_port_state port_state;	/* last state dispatched */
	struct mroce_counters __percpu *stats;
};

struct mroce_ucontext {
	struct ib_ucontext ibuc;
};

struct mroce_pd {
	struct ib_pd ibpd;
};

/* Where packets of a connection go: from the QP's or AH's GRH. */
struct mroce_av {
	int family;			/* AF_INET or AF_INET6 */
	union {
		struct sockaddr_in v4;
		struct sockaddr_in6 v6;
	} saddr, daddr;
	u8 tclass;			/* DSCP << 2; ECN bits set per packet */
	u8 hop_limit;
	u32 flow_label;
};

/* An AH's address as UD send WQEs reach it: by number, under RCU. */
struct mroce_av_ref {
	struct mroce_av av;
	struct ib_pd *pd;
	struct rcu_head rcu;
};

/*
 * What the QP table indexes and a lookup takes a reference on.  ib_core
 * frees a QP as soon as destroy_qp returns, so a lookup that loaded the
 * entry before destroy erased it must not touch the QP: it finds the
 * count at zero here, in memory freed only after a grace period, and
 * destroy need not wait for one.
 */
struct mroce_qp_ref {
	struct mroce_pool_elem elem;	/* lookups and holders + 1 */
	struct mroce_qp *qp;
	struct rcu_head rcu;
};

struct mroce_ah {
	struct ib_ah ibah;
	u32 ah_num;
	struct mroce_av_ref *ref;
};

/* A ring shared with userspace (or private to a kernel consumer). */
struct mroce_ring {
	struct mroce_ring_hdr *hdr;
	void *buf;			/* hdr and slots, vmalloc_user() */
	size_t size;
	u32 num_slots;
	u32 mask;
	u32 stride;
	struct mroce_mmap_entry *mmap;	/* user rings: owns buf */
};

struct mroce_mmap_entry {
	struct rdma_user_mmap_entry rdma_entry;
	void *buf;
};

struct mroce_cq {
	struct ib_cq ibcq;
	spinlock_t lock;		/* producer side of the ring */
	struct mroce_ring ring;
	u8 notify;			/* IB_CQ_NEXT_COMP / IB_CQ_SOLICITED */
	bool is_user;
	bool overflow;
	/* runs comp_handler outside every QP lock: a ULP posts from it */
	struct tasklet_struct notify_task;
};

enum mroce_mr_type {
	MROCE_MR_DMA,			/* kernel virtual addresses */
	MROCE_MR_USER,			/* pinned user pages */
	MROCE_MR_FAST,			/* fast registration (IB_WR_REG_MR) */
};

/*
 * A fast-registration MR (ib_alloc_mr(IB_MR_TYPE_MEM_REG)) is FREE until
 * an IB_WR_REG_MR makes it VALID with the key byte the consumer chose,
 * and FREE again after IB_WR_LOCAL_INV or a SEND_WITH_INV naming it.
 */
enum mroce_mr_state {
	MROCE_MR_FREE,
	MROCE_MR_VALID,
};

struct mroce_mr {
	struct ib_mr ibmr;
	enum mroce_mr_type type;
	int access;
	u64 iova;
	u64 length;
	/*
	 * The keys the device honours.  ibmr's belong to the consumer, who
	 * changes their low byte (ib_update_fast_reg_key()) before an
	 * IB_WR_REG_MR; these take it when the WQE executes.  The upper 24
	 * bits never change: they find the MR (lkey: pool index, rkey:
	 * rkey_xa index).
	 */
	u32 lkey;
	u32 rkey;
	struct ib_umem *umem;
	struct page **pages;
	unsigned int npages;
	unsigned int page_offset;	/* of iova in pages[0] */
	/*
	 * MROCE_MR_FAST.  map_mr_sg() fills the staged page list; an
	 * IB_WR_REG_MR copies it to the live one under @lock, as
	 * LOCAL_INV frees the region under it: every copy through a fast
	 * MR holds it for reading and checks state, key and range first,
	 * so once an invalidation completes no access is under way.
	 */
	rwlock_t lock;
	enum mroce_mr_state state;
	unsigned int max_pages;
	u64 *page_va;			/* live: kernel address of each page */
	u64 *stage_va;			/* map_mr_sg() */
	unsigned int stage_npages;
	unsigned int page_shift;
	struct mroce_pool_elem elem;	/* WQEs and lookups holding it */
	bool dead;			/* deregistered: no access any more */
	/*
	 * Memory windows bound to it: a deregistration fails while any is
	 * (IBA 10.6.7.2.6).  Raised under @lock only while !dead.
	 */
	atomic_t num_mw;
	struct work_struct free_work;	/* the last reference went */
	struct rcu_head rcu;
};

/*
 * What a send work request opcode does (mroce_wr_ops[], mroce_opcode.c):
 * the engines test these bits, never opcodes one by one.
 */
#define MROCE_WR_RC		BIT(0)	/* may be posted on an RC QP */
#define MROCE_WR_UD		BIT(1)	/* ... on a UD or GSI QP */
#define MROCE_WR_RDMA		BIT(2)	/* wr.rdma: remote address and rkey */
#define MROCE_WR_ATOMIC		BIT(3)	/* wr.atomic: 8 bytes, remote atomic */
#define MROCE_WR_READ		BIT(4)	/* remote data comes back: READ */
#define MROCE_WR_RWQE		BIT(5)	/* consumes a receive WQE at the peer */
#define MROCE_WR_IMM		BIT(6)	/* carries immediate data */
#define MROCE_WR_INLINE		BIT(7)	/* payload may be posted inline */
#define MROCE_WR_LOCAL		BIT(8)	/* local MR operation: no packet */
#define MROCE_WR_KERNEL		BIT(9)	/* kernel QPs only (a pointer inside) */
#define MROCE_WR_INV		BIT(10)	/* the peer invalidates an rkey */
#define MROCE_WR_USER		BIT(11)	/* user QPs only (memory windows) */
/* waits for an answer, takes a READ/ATOMIC credit; local SGEs are written */
#define MROCE_WR_RD_ATOMIC	(MROCE_WR_READ | MROCE_WR_ATOMIC)

struct mroce_wr_opinfo {
	const char *name;
	u8 wire_op;			/* RC request packet opcode */
	u8 ud_op;			/* UD packet opcode, 0: none */
	enum ib_wc_opcode wc_op;	/* send completion opcode */
	u16 mask;			/* MROCE_WR_* */
};

/* The kernel's private copy of a send WQE, with its resolved SGEs. */
struct mroce_swqe {
	struct mroce_send_wqe wqe;
	const struct mroce_wr_opinfo *op;	/* of wqe.opcode, once fetched */
	struct mroce_sge sge[MROCE_MAX_SGE];
	struct mroce_mr *mr[MROCE_MAX_SGE];	/* references held */
	u8 *inline_data;		/* points into qp->sq.inline_buf */
	u32 length;			/* total payload bytes */
	u32 first_psn;
	u32 npkts;			/* PSNs taken: 1 for READ/ATOMIC */
	u32 seg;			/* SEND/WRITE: payload per packet */
	u32 msn;
	u32 rq_seq;
	u32 sent;			/* packets sent at least once */
	u32 read_segs;			/* READ: segments in all, received */
	u32 read_got;
	u32 read_base;			/* READ: chunks before it all in */
	u64 atomic_orig;
	u64 fetch_ns;			/* fetched: its completion latency starts */
	bool done;			/* response / acks complete */
	enum ib_wc_status status;
};

/* The kernel's private copy of a receive WQE. */
/* What an ACK echoes of the request packet it answers (mroce_resp.c). */
struct mroce_ack_echo {
	u32 ts_us;
	u32 path_seq;
	u32 psn;
	u8 path_id;
	bool ce;
	u16 sport;
	u32 at_us;		/* arrival, mroce_now_us(): the ack_delay */
};

struct mroce_rwqe {
	u64 wr_id;
	u32 num_sge;
	u32 seq;			/* rq_seq it was fetched for */
	bool valid;
	struct mroce_sge sge[MROCE_MAX_SGE];
	struct mroce_mr *mr[MROCE_MAX_SGE];
	u32 length;
};

/* What the responder remembers per PSN of its window. */
struct mroce_rslot {
	/*
	 * What C10 checks across a message (mroce_msg.h), as the packet
	 * had it.  READ: payload_len is the bytes asked for, and offset and
	 * payload_len follow the responses sent.
	 */
	struct mroce_msg_seg m;
	/* READ: the requester's sink; ATOMIC: the operands */
	u64 sink_va;
	u32 sink_key;
	u64 swap_add;
	u64 compare;
	enum mroce_nak_code nak;	/* deferred fatal NAK */
	u16 sport;		/* the request's source port: answers take it */
};

/* The deadlines of the send side's loss timer (mroce_timer.c). */
enum mroce_deadline {
	MROCE_DL_REORDER,		/* RACK reorder wait */
	MROCE_DL_TLP,			/* tail probe */
	MROCE_DL_RTO,			/* retransmission timeout */
	MROCE_DL_PROBE,			/* a dead path is to be probed */
	MROCE_NUM_DEADLINES
};

extern const char *const mroce_deadline_name[MROCE_NUM_DEADLINES];

struct mroce_atomic_res {
	u32 psn;
	bool valid;
	u64 orig;
};

struct mroce_qp {
	struct ib_qp ibqp;
	struct mroce_dev *mdev;
	bool is_user;
	enum ib_qp_state state;		/* written under state_lock */
	spinlock_t state_lock;		/* state transitions */

	/* connection attributes (modify_qp) */
	struct mroce_av av;
	/*
	 * The soft provider's route to @av (RC: every packet of the
	 * connection goes there); reset when @av changes.
	 */
	struct dst_cache route;
	u16 sport;			/* UDP source port: path 0 entropy */
	u32 dest_qpn;
	u32 pmtu;			/* payload bytes per packet */
	int access;			/* IB_ACCESS_REMOTE_* accepted */
	u8 timeout;
	u8 retry_cnt;
	u8 rnr_retry;
	u8 min_rnr_timer;
	u8 max_rd_atomic;
	u8 max_dest_rd_atomic;
	u32 qkey;
	bool sq_sig_all;
	atomic_t path_seq;		/* responses and ACKs sent */
	atomic64_t qcnt[MROCE_NUM_COUNTERS];	/* per-QP share of the counters */
	struct mroce_qp_ref *ref;	/* what the QP table indexes */
	struct completion released;
	struct work_struct err_work;	/* fail from where locks are held */
	/* type 2 memory windows bound through this QP (mroce_mw.c) */
	spinlock_t mw_lock;		/* innermost: under a window's lock */
	struct list_head mw_list;

	/* requester + completer: under sq.lock */
	struct {
		spinlock_t lock;	/* requester, completer, SQ ring */
		struct mroce_ring ring;
		struct mroce_swqe *wqe;		/* one per ring slot */
		u8 *inline_buf;			/* max_inline per slot */
		u32 max_sge;
		u32 max_inline;
		u32 head;		/* next ring index to fetch */
		u32 tail;		/* next ring index to complete */
		u32 cur;		/* ring index being sent */
		u32 psn;		/* next PSN to send (RC: = sb.nxt) */
		u32 msn;
		u32 rq_seq;
		u32 rd_atomic;		/* READ/ATOMIC outstanding */
		/* per PSN of the window (kvcalloc'ed: the QP stays small) */
		u32 *slot_wqe;		/* PSN -> ring index */
		u64 *read_seen;		/* READ chunk segments */
		struct mroce_sb sb;	/* per-PSN send state, loss detector */
		struct mroce_paths *paths;	/* spraying, penalty, probing */
		u16 path_hash;		/* source-port base of the paths */
		u32 min_rtt_us;		/* over MROCE_MIN_RTT_WIN_US */
		u64 min_rtt_at;		/* when it was taken, us */
		u32 hint_mbps;		/* last rate hint received, 0: none */
		u64 last_progress;	/* jiffies of the last ACK progress */
		u32 rtos_since_progress;	/* RTO expiries since then */
		struct mroce_rto rto;
		/* one timer for every deadline (mroce_timer.c) */
		struct hrtimer loss_timer;
		u64 timer_at;		/* when loss_timer is due, 0: idle */
		u64 due[MROCE_NUM_DEADLINES];	/* ns, 0: unset */
		bool tlp_out;		/* a probe is out, no ACK since */
		u32 rnr_left;
		bool rnr_wait;
		bool neigh_confirm;	/* progress since the last packet */
		/*
		 * PB_ACK agreement (pb_ack = 1): the peer answered a PROBE
		 * with PB_ACK, with ECHO_PB; the queries sent, the last one
		 * when.
		 */
		bool peer_pb;
		/* ... with ECHO_SEG too: its seg_max in bytes, else 0 */
		u32 peer_seg;
		u8 pb_queries;
		u32 pb_query_us;
		struct timer_list rnr_timer;
		struct tasklet_struct task;
		/* congestion control: the algorithm (a module reference) and its state */
		const struct mroce_cc_ops *cc_ops;
		struct mroce_cc_state cc;
		/* the connection rate (cc.rate_bps): the pacer's hrtimer
		 * runs the requester in softirq when the next packet is due
		 */
		struct mroce_pacer pacer;
		struct hrtimer pace_timer;
		/*
		 * Tail latency ("rdma resource show qp -dd"): fetch to
		 * completion of every send WQE that succeeded, and the RTT
		 * samples of each path (paths->n of them, RC only), us
		 */
		struct mroce_hist lat;
		struct mroce_hist *path_rtt;
	} sq;

	/* responder: under rq.lock */
	struct {
		spinlock_t lock;	/* responder, RQ ring */
		struct mroce_ring ring;	/* with an SRQ: unused, 1 slot */
		/*
		 * The receive WQEs taken for rq_seq values, by rq_seq &
		 * wqe_mask: one per ring slot, or, with an SRQ, one per
		 * PSN of the window (a message takes at least one PSN), each
		 * bound to an SRQ WQE when its message's first packet
		 * arrives (mroce_srq_take()).
		 */
		struct mroce_rwqe *wqe;
		u32 wqe_mask;
		u32 max_sge;
		bool last_wqe_reported;	/* with an SRQ: LAST_WQE_REACHED */
		u32 epsn;		/* next expected PSN */
		u32 high;		/* one past the highest PSN received */
		unsigned long seen[BITS_TO_LONGS(MROCE_WINDOW)];
		struct mroce_rslot *slot;	/* per PSN of the window */
		u32 rq_done;		/* next rq_seq to complete */
		struct mroce_ack_count ackc;	/* for the next ACK */
		/*
		 * The delayed ACK (mroce_resp_ack_timer()): whether a
		 * message's last packet arrived that no ACK has answered,
		 * since when (which bounds the delay), and the newest such
		 * packet, for the ACK to echo; the arrival rate, which sets
		 * the deadline (mroce_delack.h).
		 */
		struct hrtimer ack_timer;
		bool unacked_last;
		u32 unacked_since_us;
		struct mroce_ack_echo unacked;
		struct mroce_delack delack;
		/*
		 * Piggybacked ACKs (pb_ack): when and on which CPU the last
		 * ACK that answered an ACK_REQ at once left, and whether the
		 * consumer answers its peer's requests within ack_delay_max
		 * on that CPU (a ping-pong whose ACKs cost the CPU that then
		 * answers: the requester saw a request leave that soon after
		 * such an ACK, on its CPU).  Then the ACK an ACK_REQ asks
		 * for waits for the answer, which carries it
		 * (mroce_resp_ack_waits()).
		 */
		u32 ackreq_acked_us;
		int ackreq_cpu;
		bool pingpong;
		bool pb_held;		/* the pending ACK waits for an answer */
		struct mroce_hint_conn rhc;	/* this sender, for the hint */
		u32 hint_bytes;		/* arrived since the last ACK */
		enum mroce_nak_code fatal_nak;	/* sent; QP in ERR */
		struct mroce_msg_track msg;	/* C10 across a message */
		/*
		 * READ responses still to send (the send engine sends them,
		 * mroce_resp_read_next()): the executed READs of
		 * [rd_psn, epsn) whose bit is set, in PSN order, each from
		 * its slot's offset on; and re-executed duplicates first,
		 * a FIFO of rd_ndup from rd_dup_head.
		 */
		unsigned long rd_pending[BITS_TO_LONGS(MROCE_WINDOW)];
		u32 rd_psn;
		struct mroce_rslot rd_dup[MROCE_RD_DUPS];
		u32 rd_dup_psn[MROCE_RD_DUPS];
		u8 rd_dup_head;
		u8 rd_ndup;
		bool rd_busy;	/* any of them: read without rq.lock */
		u8 rd_recent_next;
		u32 rd_recent_psn[MROCE_RD_RECENT];	/* U32_MAX: none */
		u32 rd_recent_us[MROCE_RD_RECENT];
		u32 seq_err_epsn;	/* the ePSN a PSN_SEQ_ERR NAK was sent at */
		bool seq_err_sent;
		struct mroce_atomic_res *atomic_res;
		u32 atomic_next;
	} rq;
};

/* The clock of every protocol timestamp and deadline: ktime_get_ns(). */
static inline u64 mroce_now_us64(void)
{
	return div_u64(ktime_get_ns(), NSEC_PER_USEC);
}

/* The same clock, as the 32-bit timestamps on the wire carry it. */
static inline u32 mroce_now_us(void)
{
	return (u32)mroce_now_us64();
}

static inline struct mroce_dev *to_mdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct mroce_dev, ib_dev);
}

static inline struct mroce_qp *to_mqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct mroce_qp, ibqp);
}

/*
 * The QP state outside state_lock.  It changes under state_lock only
 * (WRITE_ONCE), and the data path reads it without that lock (sq.lock and
 * rq.lock do not order it): a snapshot, to be read once per decision.
 */
static inline enum ib_qp_state mroce_qp_state(const struct mroce_qp *qp)
{
	return READ_ONCE(qp->state);
}

/* RTS or SQD: the requester runs and takes responses (a snapshot) */
static inline bool mroce_qp_sends(const struct mroce_qp *qp)
{
	enum ib_qp_state s = mroce_qp_state(qp);

	return s == IB_QPS_RTS || s == IB_QPS_SQD;
}

/* RTR, RTS or SQD: the responder takes requests (a snapshot) */
static inline bool mroce_qp_receives(const struct mroce_qp *qp)
{
	enum ib_qp_state s = mroce_qp_state(qp);

	return s == IB_QPS_RTR || s == IB_QPS_RTS || s == IB_QPS_SQD;
}

static inline struct mroce_cq *to_mcq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct mroce_cq, ibcq);
}

/*
 * A shared receive queue.  The producer (post_srq_recv or the process)
 * fills the ring; responders of the QPs attached take WQEs from it in
 * ring order, each under the SRQ's lock, and copy them out at once: a
 * slot is free for the producer as soon as it is taken.
 */
struct mroce_srq {
	struct ib_srq ibsrq;
	struct mroce_dev *mdev;
	spinlock_t lock;	/* cons, limit; kernel producers' prod */
	struct mroce_ring ring;
	u32 cons;		/* the next WQE to take */
	u32 max_sge;
	u32 limit;		/* armed below this many WQEs; 0: not armed */
	struct work_struct limit_work;	/* IB_EVENT_SRQ_LIMIT_REACHED */
};

static inline struct mroce_srq *to_msrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct mroce_srq, ibsrq);
}

/*
 * A memory window (mroce_mw.c).  ib_core frees struct mroce_mw when
 * dealloc_mw returns; lookups from the wire find the window's state,
 * struct mroce_win, which the driver frees after a grace period once
 * its last reference goes.
 */
struct mroce_win {
	struct mroce_pool_elem elem;	/* lookups + 1 while allocated */
	spinlock_t lock;		/* everything below */
	struct ib_pd *pd;
	enum ib_mw_type type;
	bool dead;			/* deallocated */
	bool bound;			/* has a range: the rkey grants access */
	u32 rkey;			/* the key the device honours */
	int access;			/* IB_ACCESS_REMOTE_* */
	u64 addr;
	u64 length;
	struct mroce_mr *mr;		/* bound: a reference, in num_mw */
	struct mroce_qp *qp;		/* type 2 bound: its QP (mw_list) */
	struct list_head qp_node;
	struct rcu_head rcu;
};

struct mroce_mw {
	struct ib_mw ibmw;
	struct mroce_win *win;
};

static inline struct mroce_mw *to_mmw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct mroce_mw, ibmw);
}

static inline struct mroce_mr *to_mmr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct mroce_mr, ibmr);
}

static inline struct mroce_ah *to_mah(struct ib_ah *ibah)
{
	return container_of(ibah, struct mroce_ah, ibah);
}

static inline void *mroce_ring_slot(const struct mroce_ring *r, u32 idx)
{
	return r->buf + MROCE_RING_DATA_OFFSET + (size_t)(idx & r->mask) * r->stride;
}

/*
 * Give the slots before index @cons back to the producer.  The engines
 * call it before they post the completion of the last of them: a consumer
 * that posts again as soon as it polls a completion must find room, and
 * what the completion needs was copied out of the slot long before.  The
 * release orders the slot's loads before the producer may reuse it.
 */
static inline void mroce_ring_free_to(struct mroce_ring *r, u32 cons)
{
	/* pairs with the producer's acquire of cons (ring full check) */
	smp_store_release(&r->hdr->cons, cons);
}

/*
 * mroce_trace.c: the mroce_drop tracepoint fires for every increment of a
 * receive drop or duplicate counter (rx_drop_*, rx_dup_*: contiguous in
 * enum mroce_counter), with the counter's name as the reason.
 * mroce_rx_pkt is the packet mroce_xport_rcv() is dispatching on this
 * CPU, set only while the tracepoint is enabled.
 */
DECLARE_TRACEPOINT(mroce_drop);
DECLARE_PER_CPU(const struct mroce_pkt_info *, mroce_rx_pkt);
void mroce_trace_drop(struct mroce_dev *mdev, enum mroce_counter c);

static inline bool mroce_counter_is_drop(enum mroce_counter c)
{
	return c >= MROCE_CNT_RX_DROP_NO_CSUM &&
	       c <= MROCE_CNT_RX_DROP_RESP_UNEXPECTED;
}

/* A disabled tracepoint costs a patched-out branch, and only for drops. */
static inline void mroce_count_traced(struct mroce_dev *mdev,
				      enum mroce_counter c)
{
	if (mroce_counter_is_drop(c) && tracepoint_enabled(mroce_drop))
		mroce_trace_drop(mdev, c);
}

static inline void mroce_count(struct mroce_dev *mdev, enum mroce_counter c,
			       u64 n)
{
	this_cpu_add(mdev->stats->v[c], n);
	mroce_count_traced(mdev, c);
}

/* The verbs retry budget starts over: progress, or work for an idle SQ. */
static inline void mroce_sq_retry_restart(struct mroce_qp *qp)
{
	qp->sq.last_progress = get_jiffies_64();
	qp->sq.rtos_since_progress = 0;
}

/* Count for the device and for the QP (rdma resource show qp -d). */
static inline void mroce_qcount(struct mroce_qp *qp, enum mroce_counter c,
				u64 n)
{
	this_cpu_add(qp->mdev->stats->v[c], n);
	atomic64_add(n, &qp->qcnt[c]);
	mroce_count_traced(qp->mdev, c);
}

/* mroce_main.c */
extern unsigned int mroce_num_paths;
extern unsigned int mroce_qdelay_target_us;
extern unsigned int mroce_hint_epoch_us;
extern unsigned int mroce_pb_ack;
extern unsigned int mroce_seg;		/* MROCE_PB_*, as pb_ack */
#define MROCE_PB_OFF		0
#define MROCE_PB_AUTO		1	/* after the peer's answer */
#define MROCE_PB_ALWAYS		2
#define MROCE_PB_QUERIES	3	/* capability PROBEs per connection */
/*
 * No ACK is held for an answer on a connection whose SRTT is above this:
 * an ACK packet's cost is small against such a round trip, and a held
 * ACK lost with its answer costs the peer a probe, its RTO when that is
 * lost too (RTO is close to the RTT on a steady long path).
 */
#define MROCE_PB_HOLD_MAX_SRTT_US	2000
#define MROCE_ZCOPY_MIN_DEF	512
extern unsigned int mroce_zcopy_min;
void mroce_port_update(struct mroce_dev *mdev);
enum ib_port_state mroce_port_state(const struct mroce_dev *mdev);
enum ib_mtu mroce_port_mtu(const struct mroce_dev *mdev);
u32 mroce_port_seg(const struct mroce_dev *mdev);
void mroce_dealloc_driver(struct ib_device *ibdev);

/* mroce_pool.c */
void mroce_pools_init(struct mroce_dev *mdev);
void mroce_pools_destroy(struct mroce_dev *mdev);
int mroce_pool_add(struct mroce_pool *pool);
void mroce_pool_del(struct mroce_pool *pool);
int mroce_pool_index(struct mroce_pool *pool, void *entry, u32 *idx,
		     gfp_t gfp);
int mroce_pool_insert(struct mroce_pool *pool, u32 idx, void *entry);
void mroce_pool_publish(struct mroce_pool *pool, u32 idx, void *entry);
void mroce_pool_unindex(struct mroce_pool *pool, u32 idx);
struct mroce_pool_elem *mroce_elem_get(struct xarray *xa, unsigned long idx);
struct mroce_pool_elem *mroce_pool_get(struct mroce_pool *pool, u32 idx);

/* mroce_queue.c */
int mroce_ring_alloc(struct mroce_ring *r, u32 num_slots, u32 stride,
		     struct ib_ucontext *uctx, struct mroce_ring_info *info);
void mroce_ring_free(struct mroce_ring *r);
int mroce_ring_post_recv(struct mroce_ring *r, u32 cons, u32 max_sge,
			 const struct ib_recv_wr *wr,
			 const struct ib_recv_wr **bad_wr);
int mroce_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void mroce_mmap_free(struct rdma_user_mmap_entry *entry);

/* mroce_mr.c */
struct ib_mr *mroce_get_dma_mr(struct ib_pd *pd, int access);
struct ib_mr *mroce_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata);
struct ib_mr *mroce_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 iova, int access,
				  struct ib_pd *pd, struct ib_udata *udata);
int mroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct ib_mr *mroce_alloc_mr(struct ib_pd *pd, enum ib_mr_type type,
			     u32 max_num_sg);
int mroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset);
enum ib_wc_status mroce_mr_fast_reg(struct ib_pd *pd, u32 lkey, u32 key,
				    int access);
enum ib_wc_status mroce_mr_local_inv(struct mroce_dev *mdev, struct ib_pd *pd,
				     u32 key);
int mroce_mr_remote_inv(struct mroce_dev *mdev, struct ib_pd *pd, u32 rkey);
struct mroce_mr *mroce_mr_get_lkey(struct mroce_dev *mdev, u32 lkey);
struct mroce_mr *mroce_mr_get_rkey(struct mroce_dev *mdev, u32 rkey);
void mroce_mr_put(struct mroce_mr *mr);
void mroce_mr_flush(void);
int mroce_mr_init(void);
void mroce_mr_exit(void);
int mroce_mr_check(struct mroce_mr *mr, struct ib_pd *pd, u64 iova, u64 len,
		   int access);
int mroce_mr_copy(struct mroce_mr *mr, u32 key, u64 iova, void *buf, u32 len,
		  bool to_mr);
int mroce_mr_copy_skb(struct mroce_mr *mr, u32 key, u64 iova,
		      struct sk_buff *skb, u32 skb_off, u32 len);
int mroce_mr_atomic(struct mroce_mr *mr, u32 key, u64 iova, bool cmp_swap,
		    u64 compare, u64 swap_add, u64 *orig);
int mroce_sgl_copy(const struct mroce_sge *sge, struct mroce_mr *const *mr,
		   u32 nsge, u32 off, void *buf, u32 len, bool to_sgl);
bool mroce_sgl_zcopy_ok(const struct mroce_sge *sge,
			struct mroce_mr *const *mr, u32 nsge, u32 off, u32 len);
int mroce_sgl_attach_skb(const struct mroce_sge *sge,
			 struct mroce_mr *const *mr, u32 nsge, u32 off,
			 struct sk_buff *skb, u32 len);
int mroce_sgl_copy_skb(const struct mroce_sge *sge, struct mroce_mr *const *mr,
		       u32 nsge, u32 off, struct sk_buff *skb, u32 skb_off,
		       u32 len);
int mroce_sgl_resolve(struct mroce_dev *mdev, struct ib_pd *pd,
		      const struct mroce_sge *sge, struct mroce_mr **mr,
		      u32 nsge, int access, u32 *total);
void mroce_sgl_release(struct mroce_mr **mr, u32 nsge);

/* mroce_mw.c */
int mroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int mroce_dealloc_mw(struct ib_mw *ibmw);
enum ib_wc_status mroce_mw_bind(struct mroce_qp *qp,
				const struct mroce_send_wqe *w);
int mroce_mw_local_inv(struct mroce_qp *qp, u32 rkey);
int mroce_mw_remote_inv(struct mroce_qp *qp, u32 rkey);
struct mroce_mr *mroce_mw_resolve(struct mroce_qp *qp, u32 rkey, u64 va,
				  u64 len, int access);
void mroce_mw_qp_destroy(struct mroce_qp *qp);

/* mroce_cq.c */
int mroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct ib_udata *udata);
int mroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int mroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int mroce_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc);
int mroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
bool mroce_cq_post(struct mroce_cq *cq, const struct mroce_cqe *cqe,
		   bool solicited);

/* mroce_qp.c */
int mroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata);
int mroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata);
int mroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init);
int mroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int mroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);
int mroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr);
struct mroce_qp *mroce_qp_get(struct mroce_dev *mdev, u32 qpn);
void mroce_qp_put(struct mroce_qp *qp);
void mroce_qp_error(struct mroce_qp *qp);
void mroce_qp_fail_async(struct mroce_qp *qp);

/* mroce_srq.c */
int mroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata);
int mroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata);
int mroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int mroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int mroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr);
bool mroce_srq_take(struct mroce_srq *srq, struct mroce_rwqe *rw,
		    enum ib_wc_status *status);

/* mroce_ah.c */
int mroce_av_from_ah_attr(struct mroce_av *av, const struct rdma_ah_attr *ah);
int mroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata);
int mroce_destroy_ah(struct ib_ah *ibah, u32 flags);
int mroce_ah_av(struct mroce_dev *mdev, u32 ah_num, struct ib_pd *pd,
		struct mroce_av *av);

/* mroce_req.c: requester */
void mroce_req_task(struct tasklet_struct *t);
void mroce_req_kick(struct mroce_qp *qp);
enum hrtimer_restart mroce_req_pace_timer(struct hrtimer *t);
enum hrtimer_restart mroce_resp_ack_timer(struct hrtimer *t);
void mroce_resp_ack_flush(struct mroce_qp *qp);

/* mroce_comp.c: completer */
void mroce_comp_rcv(struct mroce_qp *qp, const struct mroce_pkt_info *pi,
		    struct sk_buff *skb);
void mroce_comp_pb_ack(struct mroce_qp *qp, const struct mroce_pkt_info *pi);
void mroce_sq_flush(struct mroce_qp *qp);
void mroce_sq_release(struct mroce_qp *qp);

/* mroce_timer.c: the send side's loss timer, the RNR wait */
enum hrtimer_restart mroce_timer_fire(struct hrtimer *t);
void mroce_timer_rnr(struct timer_list *t);

/* mroce_resp.c: responder */
void mroce_resp_probe(struct mroce_qp *qp, const struct mroce_pkt_info *pi);
/*
 * The source region of one send-engine run of READ responses: looked up
 * by rkey once per run, not once per packet, and released when the run
 * ends (mroce_resp_read_end()).  Every packet still checks its range and
 * access, and a region deregistered meanwhile fails its copy (dead).
 */
struct mroce_rd_src {
	struct mroce_mr *mr;
	u32 rkey;
	bool mw;	/* through a window: looked up again for every packet */
};

bool mroce_resp_read_next(struct mroce_qp *qp, struct mroce_rd_src *src);
bool mroce_resp_pb_ack(struct mroce_qp *qp, struct mroce_pkt_info *pi,
		       u32 now_us, bool retx);
void mroce_resp_pb_flush(struct mroce_qp *qp);
bool mroce_qp_pb_ok(const struct mroce_qp *qp);
u32 mroce_req_seg(const struct mroce_qp *qp);
void mroce_resp_read_end(struct mroce_rd_src *src);
void mroce_resp_rcv(struct mroce_qp *qp, const struct mroce_pkt_info *pi,
		    struct sk_buff *skb);
void mroce_resp_rcv_ud(struct mroce_qp *qp, const struct mroce_pkt_info *pi,
		       struct sk_buff *skb);
void mroce_rq_flush(struct mroce_qp *qp);
void mroce_rq_release(struct mroce_qp *qp);

/* mroce_pkt.c: packet construction and transmission */
struct sk_buff *mroce_pkt_alloc(struct mroce_qp *qp, u32 payload);
bool mroce_av_frags_pay(const struct mroce_dev *mdev,
			const struct mroce_av *av);
bool mroce_pkt_frags_pay(const struct mroce_qp *qp);
int mroce_pkt_send_path(struct mroce_qp *qp, struct sk_buff *skb,
			struct mroce_pkt_info *pi, u16 sport);
void mroce_pkt_send_chunk(struct mroce_qp *qp,
			  const struct mroce_xport_ops *xport,
			  struct mroce_pkt_info *tmpl,
			  struct mroce_xport_chunk *c, struct sk_buff *skb);
int mroce_pkt_send_to(struct mroce_qp *qp, const struct mroce_av *av,
		      u32 dest_qpn, u16 sport, struct sk_buff *skb,
		      struct mroce_pkt_info *pi);

/* mroce_opcode.c */
const struct mroce_wr_opinfo *mroce_wr_opinfo(unsigned int op);
enum ib_wc_opcode mroce_wr_wc_opcode(unsigned int op);

/* Is @op (a WQE's opcode field: anything) a supported opcode with @mask? */
static inline bool mroce_wr_is(unsigned int op, u16 mask)
{
	const struct mroce_wr_opinfo *info = mroce_wr_opinfo(op);

	return info && (info->mask & mask);
}

/* mroce_verbs.c */
extern const struct ib_device_ops mroce_dev_ops;
void mroce_counters_init(void);
/* The counter's name as the spec and rdma statistic spell it. */
const char *mroce_counter_name(enum mroce_counter c);

/* the ib_core half of the kernel version shims */
#define MROCE_COMPAT_IB
#include "mroce_compat.h"

#endif /* MROCE_H */
