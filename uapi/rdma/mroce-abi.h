/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR Linux-OpenIB) */
/*
 * Kernel <-> rdma-core provider ABI of the mroce (MetaRoCE) soft RDMA driver.
 *
 * This header is shared verbatim by the kernel module and the userspace
 * provider (libmroce-rdmav34.so); keep it free of kernel-only types.
 */
#ifndef MROCE_ABI_USER_H
#define MROCE_ABI_USER_H

#include <linux/types.h>

/*
 * Private driver id carried in every uverbs ioctl and reported over
 * netlink so libibverbs can match our provider.  enum rdma_driver_id ends
 * at RDMA_DRIVER_ERDMA (19) in Linux 6.1; we stay far above it and never
 * use 0 (matches any provider) or RDMA_DRIVER_RXE (rxe would claim us).
 */
#define MROCE_DRIVER_ID			0x4d52	/* "MR" */

/* Bumped on any incompatible change of the structures below. */
#define MROCE_UVERBS_ABI_VERSION	1

/* Response to ibv_get_context(): what the provider may rely on. */
struct mroce_alloc_ucontext_resp {
	__u32 abi_version;	/* MROCE_UVERBS_ABI_VERSION */
	__u32 reserved;		/* must be zero */
};

/*
 * Shared rings.
 *
 * Every work queue and completion queue is a ring in kernel memory that
 * the process maps (mmap of the ucontext's cdev at the offset the create
 * response gives).  A ring is a struct mroce_ring_hdr followed, at
 * MROCE_RING_DATA_OFFSET, by 2^n slots of a fixed stride.  Indexes are
 * free-running u32 counters; the slot of index i is i & (num_slots - 1).
 *
 *   SQ: the process produces WQEs, the kernel consumes them.
 *   RQ: the process produces receive WQEs, the kernel consumes them.
 *   CQ: the kernel produces CQEs, the process consumes them.
 *
 * The producer writes a slot, then stores prod with release semantics;
 * the consumer loads prod with acquire semantics before it reads slots,
 * and stores cons (release) once it no longer needs them.  The kernel
 * copies every slot it consumes before it looks at it: ring contents are
 * never trusted.
 */
struct mroce_ring_hdr {
	__u32 prod;		/* written by the producer only */
	__u32 pad0[15];
	__u32 cons;		/* written by the consumer only */
	__u32 pad1[15];
	__u32 flags;		/* MROCE_RING_F_*, written by the kernel */
	__u32 pad2[15];
};

#define MROCE_RING_DATA_OFFSET	256

/*
 * SQ: the kernel found the ring empty and stopped; the process must
 * ring the doorbell (the POST_SEND write command with no WRs) after it
 * publishes new WQEs.  While the flag is clear the kernel is working on
 * the ring and will see them without a system call.
 */
#define MROCE_RING_F_NEED_KICK	(1U << 0)

/*
 * The same flag on an RQ: the QP is in the error state.  Receive WQEs
 * posted from now on are completed with IBV_WC_WR_FLUSH_ERR once the
 * process rings the RQ doorbell (the POST_RECV write command with no
 * WRs) after publishing them.
 */

/* Scatter/gather element, as in struct ibv_sge. */
struct mroce_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/* struct mroce_send_wqe.flags */
#define MROCE_WQE_SIGNALED	(1U << 0)
#define MROCE_WQE_SOLICITED	(1U << 1)
#define MROCE_WQE_INLINE	(1U << 2)	/* payload follows the header */
#define MROCE_WQE_FENCE		(1U << 3)

/*
 * Send WQE.  opcode is enum ib_uverbs_wr_opcode.  num_sge struct
 * mroce_sge follow the header, or with MROCE_WQE_INLINE inline_len bytes
 * of payload.  The slot stride is given at QP creation.
 */
struct mroce_send_wqe {
	__aligned_u64 wr_id;
	__u8 opcode;
	__u8 num_sge;
	__u16 flags;
	__u32 imm_data;		/* network byte order, as ibv_send_wr */
	__u32 inline_len;
	__u32 reserved;		/* must be zero */
	union {
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 reserved;
		} rdma;
		struct {
			__aligned_u64 remote_addr;
			__aligned_u64 compare_add;
			__aligned_u64 swap;
			__u32 rkey;
			__u32 reserved;
		} atomic;
		struct {
			__u32 ah_num;	/* struct mroce_create_ah_resp */
			__u32 remote_qpn;
			__u32 remote_qkey;
			__u32 reserved;
		} ud;
		/*
		 * IB_WR_REG_MR, kernel QPs only (a user ring's is refused):
		 * the MR by its lkey's index, the key it takes, access.
		 */
		struct {
			__u32 mr_lkey;
			__u32 key;
			__u32 access;
			__u32 reserved;
		} reg;
		/*
		 * IBV_WR_BIND_MW (ibv_bind_mw() for type 1 windows, post_send
		 * for type 2; user QPs only): the window by the index bits
		 * (upper 24) of mw_rkey, the rkey it takes (only the low 8
		 * bits may differ from the window's), the region by its lkey,
		 * the range [addr, addr + length) of that region and the
		 * IB_ACCESS_REMOTE_* rights.  length 0 unbinds a type 1
		 * window (mr_lkey is not looked at).
		 */
		struct {
			__aligned_u64 addr;
			__aligned_u64 length;
			__u32 mr_lkey;
			__u32 mw_rkey;
			__u32 rkey;
			__u32 access;
		} bind;
	} wr;
	__u32 reserved2[2];	/* must be zero; the header is 64 bytes */
};

/* Receive WQE: num_sge struct mroce_sge follow. */
struct mroce_recv_wqe {
	__aligned_u64 wr_id;
	__u32 num_sge;
	__u32 reserved;		/* must be zero */
};

/* struct mroce_cqe.flags */
#define MROCE_CQE_WITH_IMM	(1U << 0)	/* imm_data is valid */
#define MROCE_CQE_GRH		(1U << 1)	/* UD: a 40-byte GRH precedes the data */
#define MROCE_CQE_NET_IPV6	(1U << 2)	/* UD: ... built from an IPv6 header */
/* imm_data holds the rkey a SEND_WITH_INV invalidated (host order) */
#define MROCE_CQE_WITH_INV	(1U << 3)

/* Completion queue entry. */
struct mroce_cqe {
	__aligned_u64 wr_id;
	__u8 status;		/* enum ib_wc_status */
	__u8 opcode;		/* enum ib_uverbs_wc_opcode */
	__u16 flags;		/* MROCE_CQE_* */
	__u32 byte_len;
	__u32 imm_data;		/* network byte order */
	__u32 qp_num;
	__u32 src_qp;
	__u32 vendor_err;
};

/* Where a ring is and how it is shaped (create responses). */
struct mroce_ring_info {
	__aligned_u64 mmap_offset;	/* mmap() offset of the ring */
	__aligned_u64 mmap_size;	/* bytes to map */
	__u32 num_slots;		/* power of two */
	__u32 stride;			/* bytes per slot */
};

struct mroce_create_cq_resp {
	struct mroce_ring_info cq;
};

/* ibv_create_ah(): the number UD send WQEs name the AH by. */
struct mroce_create_ah_resp {
	__u32 ah_num;
	__u32 reserved;
};

/* ibv_resize_cq(): the CQ moves to a new ring; unmap the old one. */
struct mroce_resize_cq_resp {
	struct mroce_ring_info cq;
};

/* Longest congestion control name, NUL included (MROCE_CC_NAME_MAX). */
#define MROCE_CC_NAME_LEN		16

/*
 * ibv_create_qp() input, optional (an older provider sends none).
 * cc_algo: the congestion control of this QP's send side, a
 * NUL-terminated name ("metaroce", "dcqcn", "none", or one a module
 * registered); all zero: the device's default.  Unknown names fail the
 * create with ENOENT.  reserved must be zero.
 */
struct mroce_create_qp_cmd {
	char cc_algo[MROCE_CC_NAME_LEN];
	__u32 flags;			/* none defined: must be zero */
	__u32 reserved;
};

struct mroce_create_qp_resp {
	struct mroce_ring_info sq;
	struct mroce_ring_info rq;	/* num_slots 0: the QP uses an SRQ */
	__u32 max_inline;		/* inline bytes a send WQE can carry */
	__u32 reserved;
};

/*
 * create_srq response: the SRQ's ring of struct mroce_recv_wqe, filled
 * by the process (prod) and emptied by the kernel (cons).
 */
struct mroce_create_srq_resp {
	struct mroce_ring_info srq;
};

#endif /* MROCE_ABI_USER_H */
