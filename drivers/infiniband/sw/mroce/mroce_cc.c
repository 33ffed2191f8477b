// SPDX-License-Identifier: GPL-2.0-only
/*
 * mroce congestion control registry and the "none" algorithm.
 *
 * "none" is what rxe does: a fixed window and no pacing.  It is the
 * baseline the MetaRoCE algorithms are measured against.  The others live
 * in mroce_cc_metaroce.c and mroce_cc_dcqcn.c and are registered here.
 */

#include <linux/limits.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/string.h>

#include "mroce_cc.h"

static LIST_HEAD(mroce_cc_list);
static DEFINE_MUTEX(mroce_cc_mutex);

static struct mroce_cc_ops *mroce_cc_find(const char *name)
{
	struct mroce_cc_ops *ops;

	list_for_each_entry(ops, &mroce_cc_list, list)
		if (!strcmp(ops->name, name))
			return ops;
	return NULL;
}

int mroce_cc_register(struct mroce_cc_ops *ops)
{
	int err = 0;

	if (!ops->init || !ops->name[0])
		return -EINVAL;

	mutex_lock(&mroce_cc_mutex);
	if (mroce_cc_find(ops->name))
		err = -EEXIST;
	else
		list_add_tail(&ops->list, &mroce_cc_list);
	mutex_unlock(&mroce_cc_mutex);
	return err;
}
EXPORT_SYMBOL_GPL(mroce_cc_register);

void mroce_cc_unregister(struct mroce_cc_ops *ops)
{
	mutex_lock(&mroce_cc_mutex);
	list_del(&ops->list);
	mutex_unlock(&mroce_cc_mutex);
}
EXPORT_SYMBOL_GPL(mroce_cc_unregister);

/*
 * Look up an algorithm by name and pin the module that provides it.
 * Our own algorithms are not pinned: that would keep rmmod from ever
 * unloading a module with devices present.
 */
const struct mroce_cc_ops *mroce_cc_get(const char *name)
{
	struct mroce_cc_ops *ops;

	mutex_lock(&mroce_cc_mutex);
	ops = mroce_cc_find(name);
	if (ops && ops->owner != THIS_MODULE && !try_module_get(ops->owner))
		ops = NULL;
	mutex_unlock(&mroce_cc_mutex);
	return ops;
}

void mroce_cc_put(const struct mroce_cc_ops *ops)
{
	if (ops->owner != THIS_MODULE)
		module_put(ops->owner);
}

static void mroce_cc_none_init(struct mroce_cc_state *cc)
{
	cc->cwnd_pkts = MROCE_CC_MAX_CWND;
	cc->rate_bps = 0;
}

struct mroce_cc_ops mroce_cc_none = {
	.name = "none",
	.owner = THIS_MODULE,
	.init = mroce_cc_none_init,
};

static struct mroce_cc_ops *const mroce_cc_builtin[] = {
	&mroce_cc_none,
	&mroce_cc_metaroce,
	&mroce_cc_dcqcn,
};

int mroce_cc_init(void)
{
	int i, err;

	for (i = 0; i < ARRAY_SIZE(mroce_cc_builtin); i++) {
		err = mroce_cc_register(mroce_cc_builtin[i]);
		if (err) {
			while (--i >= 0)
				mroce_cc_unregister(mroce_cc_builtin[i]);
			return err;
		}
	}
	return 0;
}

void mroce_cc_exit(void)
{
	int i;

	for (i = ARRAY_SIZE(mroce_cc_builtin) - 1; i >= 0; i--)
		mroce_cc_unregister(mroce_cc_builtin[i]);
}
