/* gfxep — parse and infer functions of the reduction, normalization and pooling ops (see ir/ops.def). */
#include <string.h>

#include "ir/ops_common.h"
#include "ir/shape.h"
