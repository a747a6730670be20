/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __NPUIPC_PCI_H__
#define __NPUIPC_PCI_H__

int npuipc_pci_register(unsigned int first_index);
void npuipc_pci_unregister(void);

#endif /* __NPUIPC_PCI_H__ */
