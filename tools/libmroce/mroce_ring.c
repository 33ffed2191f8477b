// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libmroce: the rings shared with the kernel (uapi/rdma/mroce-abi.h).
 *
 * The kernel describes each ring with a struct mroce_ring_info in a create
 * or resize response.  Nothing in it is used before it is checked: a ring
 * the provider would index outside of, or whose slots cannot hold what the
 * provider was told it may write, is refused with EPROTO and a message, so
 * an ABI mismatch with the kernel shows up at creation instead of as
 * memory corruption later.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/mman.h>

#include "mroce.h"

void mroce_abi_err(const char *fmt, ...)
{
	va_list ap;

	fputs("libmroce: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int mroce_ring_check(const struct mroce_ring_info *info, uint32_t min_stride,
		     const char *what)
{
	uint64_t need;

	if (!info->num_slots || (info->num_slots & (info->num_slots - 1))) {
		mroce_abi_err("kernel %s ring: num_slots %u is not a power of two",
			      what, info->num_slots);
		return EPROTO;
	}
	if (info->stride < min_stride || info->stride % 8) {
		mroce_abi_err("kernel %s ring: stride %u (need a multiple of 8, at least %u)",
			      what, info->stride, min_stride);
		return EPROTO;
	}
	/* Both factors are < 2^32, so this cannot overflow 64 bits. */
	need = MROCE_RING_DATA_OFFSET +
	       (uint64_t)info->num_slots * info->stride;
	if (info->mmap_size < need || info->mmap_size > SIZE_MAX) {
		mroce_abi_err("kernel %s ring: mmap_size %llu, %u slots of %u bytes need %llu",
			      what, (unsigned long long)info->mmap_size,
			      info->num_slots, info->stride,
			      (unsigned long long)need);
		return EPROTO;
	}
	return 0;
}

void mroce_ring_attach(struct mroce_ring *ring, void *map, size_t map_size,
		       const struct mroce_ring_info *info)
{
	ring->map = map;
	ring->map_size = map_size;
	ring->hdr = map;
	ring->slots = (uint8_t *)map + MROCE_RING_DATA_OFFSET;
	ring->num_slots = info->num_slots;
	ring->mask = info->num_slots - 1;
	ring->stride = info->stride;
}

int mroce_ring_map(struct mroce_ring *ring, int cmd_fd,
		   const struct mroce_ring_info *info, uint32_t min_stride,
		   const char *what)
{
	void *map;
	int ret;

	ret = mroce_ring_check(info, min_stride, what);
	if (ret)
		return ret;

	map = mmap(NULL, info->mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   cmd_fd, (off_t)info->mmap_offset);
	if (map == MAP_FAILED)
		return errno;

	mroce_ring_attach(ring, map, info->mmap_size, info);
	return 0;
}

void mroce_ring_unmap(struct mroce_ring *ring)
{
	if (ring->map)
		munmap(ring->map, ring->map_size);
	*ring = (struct mroce_ring){};
}
