/* gfxep CUDA backend — graph capture and replay (cuda_graph.c), wired into the backend table. */
#ifndef GFXEP_BACKEND_CUDA_GRAPH_H
#define GFXEP_BACKEND_CUDA_GRAPH_H

#include "backend/cuda/cuda_internal.h"

gfx_status cuda_capture_begin(gfx_dev* dev, void* stream);
gfx_status cuda_capture_end(gfx_dev* dev, void* stream, void** graph);
gfx_status cuda_graph_launch(gfx_dev* dev, void* graph, void* stream);
void cuda_graph_destroy(gfx_dev* dev, void* graph);

#endif
