/* gfxep Vulkan backend — shader modules and compute pipelines.
 *
 * Shaders are compiled by glslc at build time and embedded (vk_shaders.c, generated). They take no
 * descriptor sets: one pipeline layout per device with a push-constant range of VK_PUSH_BYTES, and
 * every tensor is reached through its device address (GL_EXT_buffer_reference). A pipeline is one
 * shader with its specialization constants; it is made on first use, kept by the device for its
 * life and shared by every node that asks for the same (shader, constants). Creation goes through
 * one VkPipelineCache per device.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/vulkan/vk_internal.h"

gfx_status vk_pipeline_init(vk_device* d) {
  VkPushConstantRange range = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = VK_PUSH_BYTES};
  VkPipelineLayoutCreateInfo li = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                   .pushConstantRangeCount = 1,
                                   .pPushConstantRanges = &range};
  GFX_TRY(vk_check(vkCreatePipelineLayout(d->device, &li, NULL, &d->layout), "vkCreatePipelineLayout on device %d",
                   d->index));
  VkPipelineCacheCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  return vk_check(vkCreatePipelineCache(d->device, &ci, NULL, &d->cache), "vkCreatePipelineCache on device %d", d->index);
}

void vk_pipeline_teardown(vk_device* d) {
  if (!d->device) return;
  for (vk_pipe* p = d->pipes; p;) {
    vk_pipe* next = p->next;
    vkDestroyPipeline(d->device, p->pipeline, NULL);
    free(p);
    p = next;
  }
  d->pipes = NULL;
  for (int i = 0; i < VK_SHADER_COUNT; i++)
    if (d->modules[i]) vkDestroyShaderModule(d->device, d->modules[i], NULL);
  memset(d->modules, 0, sizeof d->modules);
  if (d->cache) vkDestroyPipelineCache(d->device, d->cache, NULL);
  if (d->layout) vkDestroyPipelineLayout(d->device, d->layout, NULL);
  d->cache = VK_NULL_HANDLE;
  d->layout = VK_NULL_HANDLE;
}

static const char* spec_str(const int32_t* spec, int n, char* buf, size_t size) {
  size_t used = 0;
  buf[0] = 0;
  for (int i = 0; i < n && used < size; i++)
    used += (size_t)snprintf(buf + used, size - used, "%s%d", i ? "," : "", (int)spec[i]);
  return buf;
}

/* Appends the compiler's statistics of pipeline p (made with them captured) to the stats file, one
 * line: the shader, its constants, then name=value for each statistic of each executable. A
 * diagnostic: what it cannot get or write is skipped. */
static void write_stats(vk_device* d, VkPipeline p, const char* shader, const char* constants) {
  PFN_vkGetPipelineExecutablePropertiesKHR props_fn =
      (PFN_vkGetPipelineExecutablePropertiesKHR)vkGetDeviceProcAddr(d->device, "vkGetPipelineExecutablePropertiesKHR");
  PFN_vkGetPipelineExecutableStatisticsKHR stats_fn =
      (PFN_vkGetPipelineExecutableStatisticsKHR)vkGetDeviceProcAddr(d->device, "vkGetPipelineExecutableStatisticsKHR");
  if (!props_fn || !stats_fn) return;
  VkPipelineInfoKHR pi = {.sType = VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR, .pipeline = p};
  uint32_t n_exec = 0;
  if (props_fn(d->device, &pi, &n_exec, NULL) != VK_SUCCESS || n_exec == 0) return;
  FILE* f = fopen(d->pipeline_stats_file, "a");
  if (!f) return;
  fprintf(f, "%s [%s]:", shader, constants);
  for (uint32_t e = 0; e < n_exec && e < 4; e++) {
    VkPipelineExecutableInfoKHR ei = {.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR, .pipeline = p,
                                      .executableIndex = e};
    VkPipelineExecutableStatisticKHR stats[32];
    uint32_t n = 32;
    for (uint32_t i = 0; i < n; i++) stats[i] = (VkPipelineExecutableStatisticKHR){.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR};
    VkResult r = stats_fn(d->device, &ei, &n, stats);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) continue;
    for (uint32_t i = 0; i < n; i++) {
      fprintf(f, " %s=", stats[i].name);
      switch (stats[i].format) {
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: fprintf(f, "%u", (unsigned)stats[i].value.b32); break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: fprintf(f, "%lld", (long long)stats[i].value.i64); break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: fprintf(f, "%llu", (unsigned long long)stats[i].value.u64); break;
        default: fprintf(f, "%g", stats[i].value.f64); break;
      }
    }
  }
  fprintf(f, "\n");
  fclose(f);
}

/* With pipe_lock held. */
static gfx_status create(vk_device* d, vk_shader_id shader, const int32_t* spec, int n_spec, VkPipeline* out) {
  const vk_shader_blob* blob = &vk_shaders[shader];
  if (!d->modules[shader]) {
    VkShaderModuleCreateInfo mi = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                   .codeSize = blob->bytes,
                                   .pCode = blob->code};
    GFX_TRY(vk_check(vkCreateShaderModule(d->device, &mi, NULL, &d->modules[shader]),
                     "vkCreateShaderModule(%s) on device %d", blob->name, d->index));
  }
  VkSpecializationMapEntry entries[VK_MAX_SPEC];
  for (int i = 0; i < n_spec; i++)
    entries[i] = (VkSpecializationMapEntry){.constantID = (uint32_t)i, .offset = (uint32_t)(4 * i), .size = 4};
  VkSpecializationInfo si = {.mapEntryCount = (uint32_t)n_spec,
                             .pMapEntries = entries,
                             .dataSize = (size_t)(4 * n_spec),
                             .pData = spec};
  VkComputePipelineCreateInfo ci = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = d->modules[shader],
                .pName = "main",
                .pSpecializationInfo = n_spec ? &si : NULL},
      .layout = d->layout};
  /* only on gfxep's own VkDevice, which enabled pipelineExecutableInfo for it; an application's device
   * (graphics interop) may not have it, and the flag needs it */
  const int stats = d->pipeline_stats_file && !d->app_device;
  if (stats) ci.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  char buf[96];
  gfx_status st = vk_check(vkCreateComputePipelines(d->device, d->cache, 1, &ci, NULL, out),
                           "vkCreateComputePipelines(%s, constants [%s]) on device %d", blob->name,
                           spec_str(spec, n_spec, buf, sizeof buf), d->index);
  if (!st && stats) write_stats(d, *out, blob->name, buf);
  return st;
}

gfx_status vk_pipeline_get(vk_device* d, vk_shader_id shader, const int32_t* spec, int n_spec, vk_pipe** out) {
  *out = NULL;
  static const int32_t no_spec[1] = {0};
  if (!spec) spec = no_spec; /* a shader without constants: memcmp/memcpy below get a valid pointer */
  if ((int)shader < 0 || shader >= VK_SHADER_COUNT || n_spec < 0 || n_spec > VK_MAX_SPEC || (spec == no_spec && n_spec))
    return gfx_error(GFX_ERR_INTERNAL, "vulkan backend: pipeline of shader %d with %d constants", (int)shader, n_spec);
  pthread_mutex_lock(&d->pipe_lock);
  vk_pipe* p = d->pipes;
  for (; p; p = p->next)
    if (p->shader == shader && p->n_spec == n_spec && memcmp(p->spec, spec, sizeof(int32_t) * (size_t)n_spec) == 0)
      break;
  gfx_status st = NULL;
  if (!p) {
    p = calloc(1, sizeof *p);
    if (!p) {
      st = gfx_error(GFX_ERR_OUT_OF_MEMORY, "vulkan backend: out of host memory for a pipeline");
    } else {
      p->shader = shader;
      p->n_spec = n_spec;
      memcpy(p->spec, spec, sizeof(int32_t) * (size_t)n_spec);
      st = create(d, shader, spec, n_spec, &p->pipeline);
      if (st) {
        free(p);
        p = NULL;
      } else {
        p->next = d->pipes;
        d->pipes = p;
      }
    }
  }
  pthread_mutex_unlock(&d->pipe_lock);
  *out = p;
  return st;
}

void vk_pipe_slot_init(vk_pipe_slot* slot) {
  pthread_mutex_init(&slot->lock, NULL);
  slot->key = -1;
  slot->pipe = NULL;
}

void vk_pipe_slot_destroy(vk_pipe_slot* slot) { pthread_mutex_destroy(&slot->lock); }

vk_pipe* vk_pipe_slot_find(vk_pipe_slot* slot, int key) {
  pthread_mutex_lock(&slot->lock);
  vk_pipe* pipe = slot->key == key ? slot->pipe : NULL;
  pthread_mutex_unlock(&slot->lock);
  return pipe;
}

void vk_pipe_slot_keep(vk_pipe_slot* slot, int key, vk_pipe* pipe) {
  pthread_mutex_lock(&slot->lock);
  slot->key = key;
  slot->pipe = pipe;
  pthread_mutex_unlock(&slot->lock);
}

gfx_status vk_pipe_slot_get(vk_device* d, vk_pipe_slot* slot, int key, vk_shader_id shader, const int32_t* spec,
                            int n_spec, vk_pipe** out) {
  vk_pipe* pipe = vk_pipe_slot_find(slot, key);
  if (!pipe) {
    GFX_TRY(vk_pipeline_get(d, shader, spec, n_spec, &pipe));
    vk_pipe_slot_keep(slot, key, pipe);
  }
  *out = pipe;
  return NULL;
}
