/* SPDX-License-Identifier: GPL-2.0-only */
/* mroce-sim shim: no modules in userspace: exports and module references are no-ops */
#ifndef SIM_LINUX_MODULE_H
#define SIM_LINUX_MODULE_H

/* as the kernel's, through its includes */
#include <linux/errno.h>
#include <linux/stddef.h>

struct module;

#define THIS_MODULE		((struct module *)0)
#define EXPORT_SYMBOL(sym)	extern int sim_export_unused_
#define EXPORT_SYMBOL_GPL(sym)	extern int sim_export_unused_
#define MODULE_LICENSE(x)	extern int sim_export_unused_
#define MODULE_DESCRIPTION(x)	extern int sim_export_unused_
#define MODULE_AUTHOR(x)	extern int sim_export_unused_

static inline bool try_module_get(struct module *m)
{
	(void)m;
	return true;
}

static inline void module_put(struct module *m)
{
	(void)m;
}
#endif
