/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __NPUIPC_VDEV_H__
#define __NPUIPC_VDEV_H__

int npuipc_vdev_create_all(unsigned int count, const unsigned int *mem_mib,
			   unsigned int mem_mib_count);
void npuipc_vdev_destroy_all(void);

#endif /* __NPUIPC_VDEV_H__ */
