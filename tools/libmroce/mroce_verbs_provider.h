/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * mroce_verbs_provider.h - the slice of the libibverbs *provider* ABI that
 * libmroce uses.
 *
 * Why this file exists: the provider interface of libibverbs
 * (<infiniband/driver.h>, symbol version IBVERBS_PRIVATE_<N>) is private to
 * rdma-core and distributions do not ship its header.  libibverbs.so.1 does
 * export the symbols, so an out-of-tree provider only needs declarations
 * whose layout matches the library it is loaded into.
 *
 * ABI SERIES: these declarations match rdma-core v44.0 (tag v44.0, commit
 * 91392a91eb41affee3bd75dc7d03eb86b4854aea), provider ABI IBVERBS_PRIVATE_34.
 * The structures are unchanged through the PABI 34 series (member lists
 * identical in v36.0 .. v56.0; full layout comparison run against v44.0 and
 * v56.0).  rdma-core bumps the PABI number whenever any of these
 * structures changes, and libibverbs then refuses to load providers built
 * for another number (the registration symbol name carries it).  So: the
 * provider must be rebuilt - and this header re-checked against the new
 * rdma-core sources - for every provider ABI series.
 *
 * Only what libmroce calls or fills in is declared.  Structures that we only
 * pass around by pointer (struct verbs_sysfs_dev, struct verbs_xrcd) stay
 * incomplete on purpose, so that nothing here can silently rely on a layout
 * that was not checked.  Add declarations (and their layout asserts at the
 * bottom of this file) together with the code that needs them.
 *
 * Names follow rdma-core so that provider code reads like any other
 * provider; this header must never be combined with rdma-core's own
 * <infiniband/driver.h>.
 */
#ifndef MROCE_VERBS_PROVIDER_H
#define MROCE_VERBS_PROVIDER_H

#ifdef INFINIBAND_DRIVER_H
#error "mroce_verbs_provider.h replaces <infiniband/driver.h>; include only one"
#endif

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

/* Provider ABI number this header describes (IBVERBS_PRIVATE_34). */
#define MROCE_IBVERBS_PABI 34

/* The Makefile passes the PABI it names the library after; they must agree. */
#if defined(MROCE_BUILD_PABI) && MROCE_BUILD_PABI != MROCE_IBVERBS_PABI
#error "library name suffix (PABI) does not match mroce_verbs_provider.h"
#endif

#ifndef container_of
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#endif

/* ------------------------------------------------------------------------
 * Objects only handled by pointer.
 */
struct verbs_sysfs_dev;		/* libibverbs' view of one rdma device */
struct verbs_xrcd;		/* XRC domains: not supported by mroce */

/* ------------------------------------------------------------------------
 * Objects whose libibverbs part the provider embeds in its own structs.
 */
enum ibv_mr_type {
	IBV_MR_TYPE_MR,
	IBV_MR_TYPE_NULL_MR,
	IBV_MR_TYPE_IMPORTED_MR,
	IBV_MR_TYPE_DMABUF_MR,
};

/*
 * Every MR libibverbs sees is a verbs_mr: ibv_dereg_mr() reads mr_type and
 * access behind the ibv_mr, and ibv_cmd_reg_mr() fills them in.
 */
struct verbs_mr {
	struct ibv_mr ibv_mr;
	enum ibv_mr_type mr_type;
	int access;
};

static inline struct verbs_mr *verbs_get_mr(struct ibv_mr *mr)
{
	return container_of(mr, struct verbs_mr, ibv_mr);
}

/*
 * Every QP libibverbs sees is a verbs_qp: ibv_qp_to_qp_ex() reads
 * comp_mask behind the ibv_qp, and returns &qp_ex only when VERBS_QP_EX
 * is set (mroce: QPs made by create_qp_ex, whose ibv_wr_* ops are set).
 */
enum verbs_qp_mask {
	VERBS_QP_XRCD = 1 << 0,
	VERBS_QP_EX = 1 << 1,
};

struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;
	struct verbs_xrcd *xrcd;
};

/* ------------------------------------------------------------------------
 * Device matching.
 */
enum {
	VERBS_MATCH_SENTINEL = 0,
	VERBS_MATCH_PCI = 1,
	VERBS_MATCH_MODALIAS = 2,
	VERBS_MATCH_DRIVER_ID = 3,
};

struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;
};

/* Match on the driver id the kernel reports over netlink (preferred). */
#define VERBS_DRIVER_ID(_id) \
	{ .u.driver_id = (_id), .kind = VERBS_MATCH_DRIVER_ID }

/*
 * Fallback: match on the ib device name prefix.  libibverbs builds the
 * string "rdma_device:N<ibdev name>" and fnmatch()es it against the pattern.
 */
#define VERBS_NAME_MATCH(_name_prefix, _data)				\
	{ .driver_data = (_data),					\
	  .u.modalias = "rdma_device:*N" _name_prefix "*",		\
	  .kind = VERBS_MATCH_MODALIAS }

/* ------------------------------------------------------------------------
 * Device.
 */
struct verbs_context;
struct verbs_device;

struct verbs_device_ops {
	const char *name;

	/* Accepted range of the device's uverbs ABI (ops.uverbs_abi_ver). */
	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table;
	const struct verbs_device_ops **static_providers;

	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);

	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd, void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);

	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

/* Same layout as ccan's struct list_node; only libibverbs touches it. */
struct verbs_compat_list_node {
	struct verbs_compat_list_node *next;
	struct verbs_compat_list_node *prev;
};

/*
 * The provider allocates this (embedded first in its own device struct) in
 * alloc_device; libibverbs fills in everything after 'device'.
 */
struct verbs_device {
	struct ibv_device device;		/* must stay first */
	const struct verbs_device_ops *ops;
	atomic_int refcount;
	struct verbs_compat_list_node entry;
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;
};

static inline struct verbs_device *verbs_get_device(const struct ibv_device *dev)
{
	return container_of(dev, struct verbs_device, device);
}

/* ------------------------------------------------------------------------
 * Context operations.
 *
 * verbs_set_ops() copies every non-NULL member into the context; members
 * left NULL keep libibverbs' defaults, which fail with EOPNOTSUPP.  The
 * member list and its order are ABI: exactly the 76 entries of v44, sorted
 * by name as upstream keeps them.  Do not add, drop or reorder.
 */
struct verbs_context_ops {
	int (*advise_mr)(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			 uint32_t flags, struct ibv_sge *sg_list,
			 uint32_t num_sges);
	struct ibv_dm *(*alloc_dm)(struct ibv_context *context,
				   struct ibv_alloc_dm_attr *attr);
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	struct ibv_mr *(*alloc_null_mr)(struct ibv_pd *pd);
	struct ibv_pd *(*alloc_parent_domain)(struct ibv_context *context,
					      struct ibv_parent_domain_init_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	struct ibv_td *(*alloc_td)(struct ibv_context *context,
				   struct ibv_td_init_attr *init_attr);
	void (*async_event)(struct ibv_context *context,
			    struct ibv_async_event *event);
	int (*attach_counters_point_flow)(struct ibv_counters *counters,
					  struct ibv_counter_attach_attr *attr,
					  struct ibv_flow *flow);
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw,
		       struct ibv_mw_bind *mw_bind);
	int (*close_xrcd)(struct ibv_xrcd *xrcd);
	void (*cq_event)(struct ibv_cq *cq);
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd, struct ibv_ah_attr *attr);
	struct ibv_counters *(*create_counters)(struct ibv_context *context,
						struct ibv_counters_init_attr *init_attr);
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *context,
					  struct ibv_cq_init_attr_ex *init_attr);
	struct ibv_flow *(*create_flow)(struct ibv_qp *qp,
					struct ibv_flow_attr *flow_attr);
	struct ibv_flow_action *(*create_flow_action_esp)(struct ibv_context *context,
							  struct ibv_flow_action_esp_attr *attr);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *attr);
	struct ibv_rwq_ind_table *(*create_rwq_ind_table)(struct ibv_context *context,
							  struct ibv_rwq_ind_table_init_attr *attr);
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *attr);
	struct ibv_srq *(*create_srq_ex)(struct ibv_context *context,
					 struct ibv_srq_init_attr_ex *attr);
	struct ibv_wq *(*create_wq)(struct ibv_context *context,
				    struct ibv_wq_init_attr *attr);
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	int (*dealloc_td)(struct ibv_td *td);
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
	int (*destroy_counters)(struct ibv_counters *counters);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*destroy_flow)(struct ibv_flow *flow);
	int (*destroy_flow_action)(struct ibv_flow_action *action);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*destroy_rwq_ind_table)(struct ibv_rwq_ind_table *rwq_ind_table);
	int (*destroy_srq)(struct ibv_srq *srq);
	int (*destroy_wq)(struct ibv_wq *wq);
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	void (*free_context)(struct ibv_context *context);
	int (*free_dm)(struct ibv_dm *dm);
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	struct ibv_dm *(*import_dm)(struct ibv_context *context,
				    uint32_t dm_handle);
	struct ibv_mr *(*import_mr)(struct ibv_pd *pd, uint32_t mr_handle);
	struct ibv_pd *(*import_pd)(struct ibv_context *context,
				    uint32_t pd_handle);
	int (*modify_cq)(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);
	int (*modify_flow_action_esp)(struct ibv_flow_action *action,
				      struct ibv_flow_action_esp_attr *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	int (*modify_qp_rate_limit)(struct ibv_qp *qp,
				    struct ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
			  int srq_attr_mask);
	int (*modify_wq)(struct ibv_wq *wq, struct ibv_wq_attr *wq_attr);
	struct ibv_qp *(*open_qp)(struct ibv_context *context,
				  struct ibv_qp_open_attr *attr);
	struct ibv_xrcd *(*open_xrcd)(struct ibv_context *context,
				      struct ibv_xrcd_init_attr *attr);
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	int (*post_srq_ops)(struct ibv_srq *srq, struct ibv_ops_wr *op,
			    struct ibv_ops_wr **bad_op);
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *recv_wr,
			     struct ibv_recv_wr **bad_recv_wr);
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	int (*query_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(struct ibv_qp *qp, enum ibv_wr_opcode op,
				      uint32_t flags);
	int (*query_rt_values)(struct ibv_context *context,
			       struct ibv_values_ex *values);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr);
	int (*read_counters)(struct ibv_counters *counters,
			     uint64_t *counters_value, uint32_t ncounters,
			     uint32_t flags);
	struct ibv_mr *(*reg_dm_mr)(struct ibv_pd *pd, struct ibv_dm *dm,
				    uint64_t dm_offset, size_t length,
				    unsigned int access);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset,
					size_t length, uint64_t iova, int fd,
					int access);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			void *addr, size_t length, int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
	int (*set_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	void (*unimport_dm)(struct ibv_dm *dm);
	void (*unimport_mr)(struct ibv_mr *mr);
	void (*unimport_pd)(struct ibv_pd *pd);
};

/* Number of members of struct verbs_context_ops in rdma-core v44. */
#define MROCE_V44_CONTEXT_OPS_COUNT 76

/* ------------------------------------------------------------------------
 * Registration, context life cycle.
 */
#define MROCE_PABI_CAT2(a, b) a##b
#define MROCE_PABI_CAT(a, b) MROCE_PABI_CAT2(a, b)
/*
 * The registration entry point carries the PABI number in its name, so a
 * provider built for another series fails to load instead of misbehaving.
 */
#define verbs_register_driver \
	MROCE_PABI_CAT(verbs_register_driver_, MROCE_IBVERBS_PABI)

void verbs_register_driver(const struct verbs_device_ops *ops);

/*
 * Register 'drv_ops' when the library is dlopen()ed by libibverbs.  (Unlike
 * rdma-core's PROVIDER_DRIVER this emits no alias for static linking; an
 * out-of-tree provider is only ever loaded as a plugin.)
 */
#define PROVIDER_DRIVER(provider_name, drv_ops)				\
	static void __attribute__((constructor))			\
	provider_name##_register_driver(void)				\
	{								\
		verbs_register_driver(&(drv_ops));			\
	}

/*
 * Allocate 'alloc_size' zeroed bytes holding a verbs_context at byte offset
 * (uintptr_t)context_offset, and initialise it for cmd_fd with the given
 * kernel driver id (sent with every ioctl).  Closes cmd_fd on failure.
 */
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);

/* Typed front ends: the wrapper struct given as a type ... */
#define verbs_init_and_alloc_context_type(ibdev, cmd_fd, type, ctx_memb,	\
					  driver_id)				\
	((type *)_verbs_init_and_alloc_context((ibdev), (cmd_fd), sizeof(type), \
		(struct verbs_context *)offsetof(type, ctx_memb), (driver_id)))

/* ... or, as in rdma-core, as a pointer variable used only for its type. */
#define verbs_init_and_alloc_context(ibdev, cmd_fd, drv_ctx_ptr, ctx_memb,	\
				     driver_id)					\
	((__typeof__(drv_ctx_ptr))verbs_init_and_alloc_context_type(ibdev,	\
		cmd_fd, __typeof__(*(drv_ctx_ptr)), ctx_memb, driver_id))

/* Undo _verbs_init_and_alloc_context() except for freeing the memory. */
void verbs_uninit_context(struct verbs_context *context);

void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);

/* Debug log (VERBS_LOG_LEVEL / VERBS_LOG_FILE environment variables). */
enum {
	VERBS_LOG_LEVEL_NONE,
	VERBS_LOG_ERR,
	VERBS_LOG_WARN,
	VERBS_LOG_INFO,
	VERBS_LOG_DEBUG,
};

void __verbs_log(struct verbs_context *ctx, uint32_t level,
		 const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ------------------------------------------------------------------------
 * Legacy write() command buffers passed to the ibv_cmd_* helpers.
 *
 * Each is the uverbs command header followed by the kernel's request
 * struct; a provider appends its own request data after it (none so far).
 * libibverbs may send them through write() when the ioctl path is missing.
 */
struct ibv_get_context {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_get_context core_payload;
};

struct ibv_query_port {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_query_port core_payload;
};

struct ibv_alloc_pd {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_alloc_pd core_payload;
};

struct ibv_create_cq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_create_cq core_payload;
};

struct ibv_resize_cq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_resize_cq core_payload;
};

struct ibv_create_qp {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_create_qp core_payload;
};

struct ibv_query_qp {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_query_qp core_payload;
};

struct ibv_modify_qp {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_modify_qp core_payload;
};

struct ibv_rereg_mr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_rereg_mr core_payload;
};

struct ibv_create_srq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_create_srq core_payload;
};

struct ibv_modify_srq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_modify_srq core_payload;
};

struct ibv_query_srq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_query_srq core_payload;
};

struct ibv_reg_mr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_reg_mr core_payload;
};

struct ibv_alloc_mw {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_alloc_mw core_payload;
};

/* ------------------------------------------------------------------------
 * ibv_cmd_* helpers.  They return 0 or a positive errno value.
 */

/*
 * 'resp' may be followed by driver-specific output (resp_size covers both);
 * it is passed to the kernel's alloc_ucontext as udata.
 */
int ibv_cmd_get_context(struct verbs_context *context,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);

/* resp may be NULL; otherwise *resp_size is in/out. */
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size);

int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct ibv_query_port *cmd, size_t cmd_size);

/* Sets pd->handle and pd->context on success. */
int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd,
		     struct ibv_alloc_pd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);

int ibv_cmd_dealloc_pd(struct ibv_pd *pd);

/*
 * CQ.  ibv_cmd_create_cq sets cq->context, handle and cqe (the size the
 * kernel chose); libibverbs' ibv_create_cq() initialises the rest.  The
 * driver part of the response follows 'resp' (resp_size covers both), and
 * likewise the driver part of the request follows 'cmd'.
 */
int ibv_cmd_create_cq(struct ibv_context *context, int cqe,
		      struct ibv_comp_channel *channel, int comp_vector,
		      struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp,
		      size_t resp_size);
/* A write() command; usable directly as the req_notify_cq op. */
int ibv_cmd_req_notify_cq(struct ibv_cq *cq, int solicited_only);
/* Sets cq->cqe from the response on success. */
int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe,
		      struct ibv_resize_cq *cmd, size_t cmd_size,
		      struct ib_uverbs_resize_cq_resp *resp, size_t resp_size);
int ibv_cmd_destroy_cq(struct ibv_cq *cq);

/*
 * QP.  ibv_cmd_create_qp sets qp->context, handle, qp_num, qp_type, state
 * (RESET), the CQ/SRQ/PD pointers and the events machinery, and overwrites
 * attr->cap with what the kernel granted.
 */
int ibv_cmd_create_qp(struct ibv_pd *pd,
		      struct ibv_qp *qp, struct ibv_qp_init_attr *attr,
		      struct ibv_create_qp *cmd, size_t cmd_size,
		      struct ib_uverbs_create_qp_resp *resp, size_t resp_size);
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr,
		     int attr_mask, struct ibv_qp_init_attr *qp_init_attr,
		     struct ibv_query_qp *cmd, size_t cmd_size);
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibv_modify_qp *cmd,
		      size_t cmd_size);
/* Waits for the QP's async events to be acknowledged, like destroy_cq. */
int ibv_cmd_destroy_qp(struct ibv_qp *qp);

/*
 * SRQ.  ibv_cmd_create_srq sets srq->context, handle and the events
 * machinery, and overwrites attr->attr.max_wr/max_sge with what the
 * kernel granted; destroy waits for the SRQ's async events.
 */
int ibv_cmd_create_srq(struct ibv_pd *pd,
		       struct ibv_srq *srq, struct ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp, size_t resp_size);
int ibv_cmd_modify_srq(struct ibv_srq *srq,
		       struct ibv_srq_attr *srq_attr,
		       int srq_attr_mask,
		       struct ibv_modify_srq *cmd, size_t cmd_size);
int ibv_cmd_query_srq(struct ibv_srq *srq,
		      struct ibv_srq_attr *srq_attr,
		      struct ibv_query_srq *cmd, size_t cmd_size);
int ibv_cmd_destroy_srq(struct ibv_srq *srq);

/*
 * MR.  Sets ibv_mr.handle/lkey/rkey/context, mr_type and access; the
 * generic ibv_reg_mr*() fill in pd, addr and length afterwards.
 */
int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access,
		   struct verbs_mr *vmr, struct ibv_reg_mr *cmd,
		   size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
int ibv_cmd_dereg_mr(struct verbs_mr *vmr);
/* Sets the new lkey and rkey in vmr; libibverbs updates pd, addr, length. */
int ibv_cmd_rereg_mr(struct verbs_mr *vmr, uint32_t flags, void *addr,
		     size_t length, uint64_t hca_va, int access,
		     struct ibv_pd *pd, struct ibv_rereg_mr *cmd,
		     size_t cmd_sz, struct ib_uverbs_rereg_mr_resp *resp,
		     size_t resp_sz);

/* MW.  Sets mw->context, pd, rkey, handle and type. */
int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type,
		     struct ibv_mw *mw, struct ibv_alloc_mw *cmd,
		     size_t cmd_size,
		     struct ib_uverbs_alloc_mw_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_mw(struct ibv_mw *mw);

/* AH.  Sets ah->handle and ah->context (the generic code also sets pd). */
int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah,
		      struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp,
		      size_t resp_size);
int ibv_cmd_destroy_ah(struct ibv_ah *ah);

/* ------------------------------------------------------------------------
 * Layout checks (LP64).  The expected numbers were obtained by compiling
 * rdma-core v44.0's own libibverbs/driver.h and kern-abi.h and printing
 * sizeof/offsetof (see tests/abi_layout_dump.c and README.md).
 */
#if defined(__LP64__)
#define MROCE_ASSERT_LAYOUT(expr) _Static_assert(expr, #expr)

MROCE_ASSERT_LAYOUT(sizeof(struct verbs_match_ent) == 24);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_match_ent, u) == 8);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_match_ent, vendor) == 16);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_match_ent, device) == 18);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_match_ent, kind) == 20);

MROCE_ASSERT_LAYOUT(sizeof(struct verbs_device_ops) == 72);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_device_ops, match_min_abi_version) == 8);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_device_ops, match_max_abi_version) == 12);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_device_ops, match_table) == 16);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_device_ops, static_providers) == 24);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_device_ops, match_device) == 32);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_device_ops, alloc_context) == 40);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_device_ops, import_context) == 48);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_device_ops, alloc_device) == 56);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_device_ops, uninit_device) == 64);

MROCE_ASSERT_LAYOUT(sizeof(struct ibv_device) == 664);
MROCE_ASSERT_LAYOUT(sizeof(struct verbs_device) == 712);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_device, device) == 0);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_device, ops) == 664);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_device, refcount) == 672);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_device, entry) == 680);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_device, sysfs) == 696);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_device, core_support) == 704);

/* 76 function pointers, no padding; spot-check members we set. */
MROCE_ASSERT_LAYOUT(sizeof(struct verbs_context_ops) ==
		    MROCE_V44_CONTEXT_OPS_COUNT * sizeof(void (*)(void)));
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_context_ops, alloc_mw) == 2 * 8);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_context_ops, alloc_pd) == 5 * 8);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_context_ops, bind_mw) == 10 * 8);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_context_ops, dealloc_mw) == 25 * 8);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_context_ops, create_cq) == 15 * 8);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_context_ops, create_qp) == 19 * 8);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_context_ops, dealloc_pd) == 26 * 8);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_context_ops, destroy_cq) == 31 * 8);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_context_ops, destroy_qp) == 34 * 8);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_context_ops, free_context) == 39 * 8);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_context_ops, modify_qp) == 47 * 8);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_context_ops, poll_cq) == 53 * 8);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_context_ops, post_recv) == 54 * 8);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_context_ops, post_send) == 55 * 8);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_context_ops, query_device_ex) == 58 * 8);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_context_ops, query_port) == 60 * 8);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_context_ops, query_qp) == 61 * 8);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_context_ops, reg_mr) == 68 * 8);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_context_ops, req_notify_cq) == 69 * 8);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_context_ops, unimport_pd) == 75 * 8);

MROCE_ASSERT_LAYOUT(sizeof(struct ibv_get_context) == 16);
MROCE_ASSERT_LAYOUT(sizeof(struct ibv_query_port) == 24);
MROCE_ASSERT_LAYOUT(sizeof(struct ibv_alloc_pd) == 16);
MROCE_ASSERT_LAYOUT(sizeof(struct ib_uverbs_get_context_resp) == 8);
MROCE_ASSERT_LAYOUT(sizeof(struct ib_uverbs_alloc_pd_resp) == 4);

MROCE_ASSERT_LAYOUT(offsetof(struct verbs_context_ops, create_ah) == 13 * 8);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_context_ops, dereg_mr) == 28 * 8);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_context_ops, destroy_ah) == 29 * 8);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_context_ops, resize_cq) == 71 * 8);

MROCE_ASSERT_LAYOUT(sizeof(struct verbs_mr) == 56);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_mr, mr_type) == 48);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_mr, access) == 52);
MROCE_ASSERT_LAYOUT(IBV_MR_TYPE_DMABUF_MR == 3);
MROCE_ASSERT_LAYOUT(sizeof(struct verbs_qp) == 368);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_qp, comp_mask) == 352);
MROCE_ASSERT_LAYOUT(offsetof(struct verbs_qp, xrcd) == 360);

MROCE_ASSERT_LAYOUT(sizeof(struct ibv_create_cq) == 40);
MROCE_ASSERT_LAYOUT(sizeof(struct ibv_resize_cq) == 24);
MROCE_ASSERT_LAYOUT(sizeof(struct ibv_create_qp) == 64);
MROCE_ASSERT_LAYOUT(sizeof(struct ibv_query_qp) == 24);
MROCE_ASSERT_LAYOUT(sizeof(struct ibv_modify_qp) == 120);
MROCE_ASSERT_LAYOUT(sizeof(struct ibv_rereg_mr) == 56);
MROCE_ASSERT_LAYOUT(sizeof(struct ib_uverbs_rereg_mr_resp) == 8);
MROCE_ASSERT_LAYOUT(sizeof(struct ibv_create_srq) == 40);
MROCE_ASSERT_LAYOUT(sizeof(struct ibv_modify_srq) == 24);
MROCE_ASSERT_LAYOUT(sizeof(struct ibv_query_srq) == 24);
MROCE_ASSERT_LAYOUT(sizeof(struct ib_uverbs_create_srq_resp) == 16);
MROCE_ASSERT_LAYOUT(sizeof(struct ibv_reg_mr) == 48);
MROCE_ASSERT_LAYOUT(sizeof(struct ibv_alloc_mw) == 24);
MROCE_ASSERT_LAYOUT(sizeof(struct ib_uverbs_alloc_mw_resp) == 8);
MROCE_ASSERT_LAYOUT(offsetof(struct ibv_reg_mr, core_payload.access_flags) == 44);
MROCE_ASSERT_LAYOUT(sizeof(struct ib_uverbs_create_cq_resp) == 8);
MROCE_ASSERT_LAYOUT(sizeof(struct ib_uverbs_resize_cq_resp) == 8);
MROCE_ASSERT_LAYOUT(sizeof(struct ib_uverbs_create_qp_resp) == 32);
MROCE_ASSERT_LAYOUT(sizeof(struct ib_uverbs_reg_mr_resp) == 12);
MROCE_ASSERT_LAYOUT(sizeof(struct ib_uverbs_create_ah_resp) == 4);

#undef MROCE_ASSERT_LAYOUT
#endif /* __LP64__ */

#endif /* MROCE_VERBS_PROVIDER_H */
