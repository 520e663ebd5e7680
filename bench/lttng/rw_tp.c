/* SPDX-License-Identifier: MIT */
/* The probe of bench/lttng/rw_tp.h, linked into requestwatch-lttng
 * (bench/sidebyside.sh). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "rw_tp.h"
