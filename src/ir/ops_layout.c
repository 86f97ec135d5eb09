/* gfxep — parse and infer functions of the layout and data movement ops (see ir/ops.def). */
#include <string.h>

#include "ir/ops_common.h"
#include "ir/shape.h"
