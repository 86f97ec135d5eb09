/* gfxep CUDA backend — graph capture and replay (cuda_graph.c), wired into the backend table. */
#ifndef GFXEP_BACKEND_CUDA_GRAPH_H
#define GFXEP_BACKEND_CUDA_GRAPH_H

#include "backend/cuda/cuda_internal.h"

gfx_status cuda_capture_begin(int device, void* stream);
gfx_status cuda_capture_end(int device, void* stream, void** graph);
gfx_status cuda_graph_launch(int device, void* graph, void* stream);
void cuda_graph_destroy(int device, void* graph);

#endif
