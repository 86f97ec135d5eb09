/* gfxep — parse and infer functions of the resampling ops (see ir/ops.def). */
#include <string.h>

#include "ir/ops_common.h"
#include "ir/shape.h"
