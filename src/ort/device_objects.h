/* gfxep — the ORT objects made for one of gfxep's devices: allocators, streams, the data transfer,
 * the copy kernels and the external-resource importer. */
#ifndef GFXEP_ORT_DEVICE_OBJECTS_H
#define GFXEP_ORT_DEVICE_OBJECTS_H

#include "ort/device.h"

OrtStatus* gfx_allocator_create(gfx_device* dev, const OrtMemoryInfo* info, int caching, OrtAllocator** out);
void gfx_allocator_destroy(OrtAllocator* a);
/* shared: NULL for a stream of its own, else the stream wraps that one (and holds a reference). */
typedef struct gfx_shared_stream gfx_shared_stream;
OrtStatus* gfx_stream_create(gfx_device* dev, gfx_shared_stream* shared, OrtSyncStreamImpl** out);
OrtStatus* gfx_shared_stream_create(gfx_device* dev, gfx_shared_stream** out);
void gfx_shared_stream_release(gfx_shared_stream* ss);
void* gfx_shared_stream_native(const gfx_shared_stream* ss);
/* The device a stream of gfxep belongs to, or NULL when the stream is someone else's. */
gfx_device* gfx_stream_device(const OrtSyncStream* stream);
OrtStatus* gfx_data_transfer_create(gfx_device_set* set, OrtDataTransferImpl** out);
OrtStatus* gfx_memcpy_registry_create(OrtKernelRegistry** out);
/* control_flow.c: ORT's If kernel for gfxep's device, in each opset range it takes; whether a node is
 * an If of the ONNX domain. */
OrtStatus* gfx_if_kernels_add(OrtKernelRegistry* reg);
int gfx_node_is_if(const OrtNode* node);
/* importer.c: NULL importer (success) when the device's backend imports nothing. */
OrtStatus* gfx_importer_create(gfx_device* d, OrtExternalResourceImporterImpl** out);

#endif
