/* SPDX-License-Identifier: MIT */
/* The probe of bench/lttng/tp.h, linked into lttng_hot. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "tp.h"
