/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __NPUIPC_ENGINE_H__
#define __NPUIPC_ENGINE_H__

#include <linux/types.h>

struct npuipc_stream;

int npuipc_engine_init(void);
void npuipc_engine_fini(void);

void npuipc_engine_init_stream(struct npuipc_stream *stream);
void npuipc_engine_stop_stream(struct npuipc_stream *stream);
int npuipc_engine_abort_stream(struct npuipc_stream *stream);
void npuipc_engine_fini_stream(struct npuipc_stream *stream);

void npuipc_engine_kick(struct npuipc_stream *stream);
bool npuipc_engine_try_claim(struct npuipc_stream *stream);
bool npuipc_engine_stream_idle(struct npuipc_stream *stream);
void npuipc_engine_run_direct(struct npuipc_stream *stream);

#endif /* __NPUIPC_ENGINE_H__ */
