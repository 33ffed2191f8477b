/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * libmroce - rdma-core (libibverbs) provider for the mroce soft RDMA device.
 *
 * Internal declarations shared by the provider's source files.  One source
 * file per object family:
 *
 *   mroce_provider.c  device matching, device and context life cycle,
 *                     query_device_ex / query_port, the context ops table
 *   mroce_pd.c        protection domains
 *   mroce_ring.c      mapping and checking the rings shared with the kernel
 *                     (struct mroce_ring_hdr + slots, uapi/rdma/mroce-abi.h)
 *   mroce_cq.c        completion queues: create / destroy / resize, poll_cq
 *                     (consumes CQEs from the ring, no system call),
 *                     req_notify_cq (a write() command)
 *   mroce_cq_ex.c     extended CQs: create_cq_ex, start / next / end_poll
 *                     and the ibv_wc_read_* accessors
 *   mroce_qp.c        RC and UD queue pairs: create / query / modify /
 *                     destroy, post_send (WQEs into the SQ ring, doorbell
 *                     write() only when the kernel asks for one through
 *                     MROCE_RING_F_NEED_KICK), post_recv (RQ ring; the
 *                     RQ doorbell only when the kernel sets NEED_KICK on
 *                     it, i.e. the QP is in ERR and must flush receives)
 *   mroce_qp_ex.c     extended QPs: create_qp_ex and the ibv_wr_* builders
 *   mroce_srq.c       shared receive queues: create / modify (limit) /
 *                     query / destroy, post_srq_recv
 *   mroce_mr.c        memory regions (reg_mr / rereg_mr / dereg_mr),
 *                     memory windows (alloc_mw / dealloc_mw / bind_mw)
 *   mroce_ah.c        address handles (create_ah / destroy_ah)
 *
 * Not offered (their verbs_context_ops members stay NULL, so libibverbs
 * fails those verbs with EOPNOTSUPP; UC QPs are refused by create_qp):
 * UC and XRC (Documentation/mroce.rst, "Verbs not offered"),
 * reg_dmabuf_mr, ECE, multicast, device memory.  When a family is added,
 * give it its own mroce_<family>.c, declare its ops below and fill them
 * into mroce_ctx_ops in mroce_provider.c.
 *
 * Locking: one pthread spinlock per queue (SQ, RQ, CQ).  A QP's SQ lock
 * covers post_send's ring writes, its RQ lock post_recv's; a CQ's lock
 * covers poll_cq and the ring swap in resize_cq.
 */
#ifndef MROCE_H
#define MROCE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "mroce_verbs_provider.h"
#include <rdma/mroce-abi.h>	/* uapi/rdma/mroce-abi.h of this repository */

struct mroce_device {
	struct verbs_device vdev;
};

struct mroce_context {
	struct verbs_context vctx;
	uint32_t kernel_abi_version;	/* from mroce_alloc_ucontext_resp */
};

struct mroce_pd {
	struct ibv_pd ibv_pd;
};

/*
 * The driver part of a response follows the core part directly: no
 * padding between them, none after.  For the {ibv_resp; drv} structs below.
 */
#define MROCE_ASSERT_NO_PADDING(type)					\
	_Static_assert(offsetof(type, drv) ==				\
			       sizeof(((type *)0)->ibv_resp) &&		\
		       sizeof(type) == offsetof(type, drv) +		\
				       sizeof(((type *)0)->drv),	\
		       "padding around the driver part of " #type)

/*
 * GET_CONTEXT response as the kernel writes it: the core part followed
 * directly by the driver part (alloc_ucontext's udata output).
 */
struct mroce_get_context_resp {
	struct ib_uverbs_get_context_resp ibv_resp;
	struct mroce_alloc_ucontext_resp drv;
};

MROCE_ASSERT_NO_PADDING(struct mroce_get_context_resp);

/*
 * One ring shared with the kernel (uapi/rdma/mroce-abi.h): a struct
 * mroce_ring_hdr, then at MROCE_RING_DATA_OFFSET num_slots slots of stride
 * bytes.  prod and cons are free-running; slot of index i is i & mask.
 */
struct mroce_ring {
	void *map;			/* what mmap() returned; NULL: none */
	size_t map_size;
	struct mroce_ring_hdr *hdr;	/* == map */
	uint8_t *slots;			/* map + MROCE_RING_DATA_OFFSET */
	uint32_t num_slots;		/* power of two */
	uint32_t mask;			/* num_slots - 1 */
	uint32_t stride;		/* bytes per slot, multiple of 8 */
};

struct mroce_cq {
	union {
		struct ibv_cq ibv_cq;
		struct ibv_cq_ex cq_ex;	/* ibv_create_cq_ex (mroce_cq_ex.c) */
	};
	pthread_spinlock_t lock;	/* poll_cq, resize_cq, start..end_poll */
	struct mroce_ring ring;		/* kernel produces, we consume */
	struct ibv_wc cur;		/* extended polling: the current CQE */
};

/* A work queue: the process produces, the kernel consumes. */
struct mroce_wq {
	pthread_spinlock_t lock;
	struct mroce_ring ring;
	uint32_t max_sge;		/* SGEs a WQE may carry */
	uint32_t max_inline;		/* SQ: inline payload bytes */
};

struct mroce_qp {
	struct verbs_qp vqp;		/* libibverbs reads vqp.comp_mask */
	struct mroce_wq sq;
	struct mroce_wq rq;		/* ring.map NULL: the QP has none */
	bool sq_sig_all;		/* every send WQE is signaled */
	/*
	 * The ibv_wr_* builders (mroce_qp_ex.c), between wr_start and
	 * wr_complete/wr_abort, under sq.lock: WQEs are written into slots
	 * from wr_prod on and published together by wr_complete.
	 */
	uint32_t wr_prod;
	uint32_t wr_count;		/* WQEs begun */
	int wr_err;			/* the first builder error */
	struct mroce_send_wqe *wr_cur;	/* the WQE being built, or NULL */
};

/* A shared receive queue: the process produces, the kernel consumes. */
struct mroce_srq {
	struct ibv_srq ibv_srq;
	struct mroce_wq wq;
};

struct mroce_mr {
	struct verbs_mr vmr;
};

struct mroce_ah {
	struct ibv_ah ibv_ah;
	uint32_t ah_num;		/* what a UD send WQE names it by */
};

struct mroce_create_ah_full_resp {
	struct ib_uverbs_create_ah_resp ibv_resp;
	struct mroce_create_ah_resp drv;
};

/* create_qp's command: the core part, then the driver's (udata input) */
struct mroce_create_qp_full_cmd {
	struct ibv_create_qp ibv_cmd;
	struct mroce_create_qp_cmd drv;
};

/*
 * Create/resize responses as the kernel writes them: the core part
 * followed directly by the driver part (the verb's udata output).
 */
struct mroce_create_cq_full_resp {
	struct ib_uverbs_create_cq_resp ibv_resp;
	struct mroce_create_cq_resp drv;
};

struct mroce_resize_cq_full_resp {
	struct ib_uverbs_resize_cq_resp ibv_resp;
	struct mroce_resize_cq_resp drv;
};

struct mroce_create_qp_full_resp {
	struct ib_uverbs_create_qp_resp ibv_resp;
	struct mroce_create_qp_resp drv;
};

struct mroce_create_srq_full_resp {
	struct ib_uverbs_create_srq_resp ibv_resp;
	struct mroce_create_srq_resp drv;
};

MROCE_ASSERT_NO_PADDING(struct mroce_create_cq_full_resp);
MROCE_ASSERT_NO_PADDING(struct mroce_resize_cq_full_resp);
MROCE_ASSERT_NO_PADDING(struct mroce_create_qp_full_resp);
MROCE_ASSERT_NO_PADDING(struct mroce_create_srq_full_resp);
MROCE_ASSERT_NO_PADDING(struct mroce_create_ah_full_resp);
_Static_assert(offsetof(struct mroce_create_qp_full_cmd, drv) ==
	       sizeof(struct ibv_create_qp),
	       "the driver part must follow the core command directly");

/* The shapes the ring code relies on (uapi/rdma/mroce-abi.h). */
_Static_assert(sizeof(struct mroce_ring_hdr) <= MROCE_RING_DATA_OFFSET,
	       "ring header overlaps the slots");
_Static_assert(offsetof(struct mroce_ring_hdr, cons) == 64 &&
	       offsetof(struct mroce_ring_hdr, flags) == 128,
	       "prod, cons and flags are on separate cache lines");
_Static_assert(sizeof(struct mroce_sge) == 16, "struct mroce_sge");
_Static_assert(sizeof(struct mroce_send_wqe) == 64,
	       "send WQE header is 64 bytes");
_Static_assert(sizeof(((struct mroce_send_wqe *)0)->wr) == 32 &&
	       offsetof(struct mroce_send_wqe, wr) == 24 &&
	       offsetof(struct mroce_send_wqe, wr.bind.length) == 32 &&
	       offsetof(struct mroce_send_wqe, wr.bind.mr_lkey) == 40 &&
	       offsetof(struct mroce_send_wqe, wr.bind.access) == 52,
	       "the work request union, BIND_MW's fields");
_Static_assert(sizeof(struct mroce_recv_wqe) == 16,
	       "receive WQE header is 16 bytes");
_Static_assert(sizeof(struct mroce_cqe) == 32, "CQE is 32 bytes");

static inline struct mroce_device *to_mdev(struct ibv_device *ibdev)
{
	return container_of(verbs_get_device(ibdev), struct mroce_device, vdev);
}

static inline struct mroce_srq *to_msrq(struct ibv_srq *ibsrq)
{
	return container_of(ibsrq, struct mroce_srq, ibv_srq);
}

static inline struct mroce_context *to_mctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct mroce_context, vctx.context);
}

static inline struct mroce_pd *to_mpd(struct ibv_pd *ibpd)
{
	return container_of(ibpd, struct mroce_pd, ibv_pd);
}

static inline struct mroce_cq *to_mcq(struct ibv_cq *ibcq)
{
	return container_of(ibcq, struct mroce_cq, ibv_cq);
}

static inline struct mroce_qp *to_mqp(struct ibv_qp *ibqp)
{
	return container_of(ibqp, struct mroce_qp, vqp.qp);
}

static inline struct mroce_mr *to_mmr(struct verbs_mr *vmr)
{
	return container_of(vmr, struct mroce_mr, vmr);
}

static inline struct mroce_ah *to_mah(struct ibv_ah *ibah)
{
	return container_of(ibah, struct mroce_ah, ibv_ah);
}

/*
 * Ring indexes.  The producer fills a slot, then publishes it with a
 * store-release of prod; the consumer load-acquires prod before reading
 * slots and store-releases cons once it is done with them.  Each side
 * reads its own index with a plain (relaxed) load: nobody else writes it.
 */
static inline uint32_t mroce_load_acquire(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline uint32_t mroce_load_relaxed(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline void mroce_store_release(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static inline void *mroce_ring_slot(const struct mroce_ring *ring,
				    uint32_t idx)
{
	return ring->slots + (size_t)(idx & ring->mask) * ring->stride;
}

/* Message for a kernel that breaks the ABI (stderr, like context init). */
void mroce_abi_err(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* mroce_pd.c */
struct ibv_pd *mroce_alloc_pd(struct ibv_context *ibctx);
int mroce_dealloc_pd(struct ibv_pd *ibpd);

/*
 * mroce_ring.c.  _check validates what the kernel sent (0 or EPROTO, with
 * a message naming 'what'); _attach points a ring at memory already mapped
 * (the unit tests use plain memory); _map does check + mmap + attach on
 * the context's command fd; _unmap is a no-op for a ring without a map.
 */
int mroce_ring_check(const struct mroce_ring_info *info, uint32_t min_stride,
		     const char *what);
void mroce_ring_attach(struct mroce_ring *ring, void *map, size_t map_size,
		       const struct mroce_ring_info *info);
int mroce_ring_map(struct mroce_ring *ring, int cmd_fd,
		   const struct mroce_ring_info *info, uint32_t min_stride,
		   const char *what);
void mroce_ring_unmap(struct mroce_ring *ring);

/* mroce_cq.c */
struct ibv_cq *mroce_create_cq(struct ibv_context *ibctx, int cqe,
			       struct ibv_comp_channel *channel,
			       int comp_vector);
int mroce_destroy_cq(struct ibv_cq *ibcq);
int mroce_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc);
int mroce_resize_cq(struct ibv_cq *ibcq, int cqe);
/* req_notify_cq is ibv_cmd_req_notify_cq itself. */
void mroce_cqe_to_wc(const struct mroce_cqe *cqe, struct ibv_wc *wc);
int mroce_cq_poll_ring(struct mroce_ring *ring, int ne, struct ibv_wc *wc);

/* The ibv_send_flags the rings carry (struct mroce_send_wqe.flags). */
#define MROCE_SEND_FLAGS_SUPPORTED					\
	(IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED |	\
	 IBV_SEND_INLINE)

/* The WQE flags of a WR's ibv_send_flags (inline is set by the writer). */
static inline uint16_t mroce_wqe_flags(unsigned int send_flags, bool sig_all)
{
	uint16_t f = 0;

	if (sig_all || (send_flags & IBV_SEND_SIGNALED))
		f |= MROCE_WQE_SIGNALED;
	if (send_flags & IBV_SEND_SOLICITED)
		f |= MROCE_WQE_SOLICITED;
	if (send_flags & IBV_SEND_FENCE)
		f |= MROCE_WQE_FENCE;
	return f;
}

/* mroce_cq_ex.c */
struct ibv_cq_ex *mroce_create_cq_ex(struct ibv_context *ibctx,
				     struct ibv_cq_init_attr_ex *attr);
int mroce_cq_take(struct mroce_ring *ring, struct ibv_wc *wc);

/* mroce_qp_ex.c */
struct ibv_qp *mroce_create_qp_ex(struct ibv_context *ibctx,
				  struct ibv_qp_init_attr_ex *attr);

/* mroce_qp.c */
struct ibv_qp *mroce_create_qp(struct ibv_pd *ibpd,
			       struct ibv_qp_init_attr *attr);
int mroce_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask, struct ibv_qp_init_attr *init_attr);
int mroce_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		    int attr_mask);
int mroce_destroy_qp(struct ibv_qp *ibqp);
int mroce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad_wr);
int mroce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr);
int mroce_check_wq(const struct mroce_ring_info *info, uint32_t max_wr,
		   uint64_t slot_need, const char *what);
int mroce_qp_check_resp(const struct ibv_qp_cap *cap,
			const struct mroce_create_qp_resp *drv, bool has_rq);
int mroce_sq_doorbell(struct ibv_qp *ibqp);
bool mroce_ring_need_kick(const struct mroce_ring *ring);
int mroce_rq_doorbell(struct ibv_qp *ibqp);

/* mroce_srq.c */
struct ibv_srq *mroce_create_srq(struct ibv_pd *ibpd,
				 struct ibv_srq_init_attr *attr);
int mroce_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		     int attr_mask);
int mroce_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr);
int mroce_destroy_srq(struct ibv_srq *ibsrq);
int mroce_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr);
int mroce_wq_post_recv(struct mroce_wq *wq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr, unsigned int *posted);

/* mroce_mr.c */
struct ibv_mr *mroce_reg_mr(struct ibv_pd *ibpd, void *addr, size_t length,
			    uint64_t hca_va, int access);
int mroce_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
		   void *addr, size_t length, int access);
int mroce_dereg_mr(struct verbs_mr *vmr);
int mroce_post_send_wrs(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			struct ibv_send_wr **bad_wr, bool bind_type1);
struct ibv_mw *mroce_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int mroce_dealloc_mw(struct ibv_mw *mw);
int mroce_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		  struct ibv_mw_bind *mw_bind);

/* mroce_ah.c */
struct ibv_ah *mroce_create_ah(struct ibv_pd *ibpd, struct ibv_ah_attr *attr);
int mroce_destroy_ah(struct ibv_ah *ibah);

#endif /* MROCE_H */
