// SPDX-License-Identifier: GPL-2.0
/*
 * sacred - the tracepoints' one instantiation: trace.h says what they are.
 */
#define CREATE_TRACE_POINTS
#include "trace.h"
