/* SPDX-License-Identifier: MIT */
/* locks.h - replaced by rec/lock_graph.h (the lock graph); kept for existing includes. */
#include "rec/lock_graph.h"
