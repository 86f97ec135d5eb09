/* gfxep — what the backends share of the logic, Mod, scan, generator and index ops (ir/ops_index.c):
 * the integer Mod every backend computes, and the geometry of each op for concrete shapes. */
#ifndef GFXEP_IR_OPS_INDEX_H
#define GFXEP_IR_OPS_INDEX_H

#include <stdint.h>

#include "ir/graph.h"

#endif
