/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __NPUIPC_FDINFO_H__
#define __NPUIPC_FDINFO_H__

#include <linux/types.h>

struct file;
struct seq_file;

u64 npuipc_fdinfo_new_client_id(void);
void npuipc_show_fdinfo(struct seq_file *m, struct file *f);

#endif /* __NPUIPC_FDINFO_H__ */
