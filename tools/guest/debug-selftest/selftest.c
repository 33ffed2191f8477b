// SPDX-License-Identifier: GPL-2.0-only
/*
 * Self-test of the debug lane (tools/guest/check-debug.sh --selftest).
 *
 * NOT the driver: a module that is also called "mroce" and commits, once
 * at load, one bug of each kind the lane must catch, so that a lane which
 * silently stopped detecting (a checker missing from the kernel, a report
 * pattern that no longer matches, kmemleak attribution broken) fails:
 *   - KASAN: a read after kfree()
 *   - UBSAN: a shift by more than the type's width
 *   - lockdep: two locks taken in both orders (no deadlock, one thread)
 *   - kmemleak: objects allocated here and never freed, found after rmmod
 * Only ever loaded inside the debug-lane guest.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

static DEFINE_SPINLOCK(selftest_lock_a);
static DEFINE_SPINLOCK(selftest_lock_b);

/* READ_ONCE/WRITE_ONCE: the compiler must not see through the bugs below */
static void *selftest_sink;
static unsigned int selftest_shift = 40;

#define SELFTEST_LEAKS 8

static noinline void selftest_use_after_free(void)
{
	char *p = kmalloc(64, GFP_KERNEL);

	if (!p)
		return;
	WRITE_ONCE(selftest_sink, p);
	kfree(p);
	p = READ_ONCE(selftest_sink);
	pr_info("mroce selftest: use after free reads %d\n", READ_ONCE(p[8]));
}

static noinline void selftest_shift_overflow(void)
{
	u32 v = 1;

	pr_info("mroce selftest: shift gives %u\n", v << READ_ONCE(selftest_shift));
}

static noinline void selftest_lock_inversion(void)
{
	spin_lock(&selftest_lock_a);
	spin_lock(&selftest_lock_b);
	spin_unlock(&selftest_lock_b);
	spin_unlock(&selftest_lock_a);

	spin_lock(&selftest_lock_b);
	spin_lock(&selftest_lock_a);
	spin_unlock(&selftest_lock_a);
	spin_unlock(&selftest_lock_b);
}

static noinline void selftest_leak(void)
{
	int i;

	/* the last pointer to each object is overwritten right away */
	for (i = 0; i < SELFTEST_LEAKS; i++)
		WRITE_ONCE(selftest_sink, kmalloc(512, GFP_KERNEL));
	WRITE_ONCE(selftest_sink, NULL);
}

static int __init selftest_init(void)
{
	/* KASAN's report taints the kernel, which turns lockdep off: last */
	selftest_lock_inversion();
	selftest_shift_overflow();
	selftest_leak();
	selftest_use_after_free();
	return 0;
}

static void __exit selftest_exit(void)
{
}

module_init(selftest_init);
module_exit(selftest_exit);
MODULE_DESCRIPTION("debug lane self-test: one KASAN, UBSAN, lockdep and kmemleak report");
MODULE_LICENSE("GPL");
