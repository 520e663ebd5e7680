/* SPDX-License-Identifier: MIT */
/* stacks.h - replaced by rec/stack_agg.h (stack aggregation); kept for existing includes. */
#include "rec/stack_agg.h"
