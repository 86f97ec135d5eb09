/* gfxep — vk_producer: a headless Vulkan producer for tests and demos (see vk_producer.h).
 *
 * How completion is tracked: every submission signals, besides the caller's semaphore, the next
 * value ("serial") of a private timeline semaphore that only this file's vkQueueSubmit calls signal.
 * The command-buffer ring, vkp_finish and vkp_destroy host-wait on that private timeline alone, so
 * the library never host-waits or queries a value that CUDA signals (the hazard in the header), and
 * needs no fences.
 *
 * Descriptor sets: each ring slot owns a small descriptor pool (one set of up to VKP_MAX_BINDINGS
 * storage buffers). A dispatch allocates its set from the pool of the slot it records into; the pool
 * is reset when the slot is taken again, which happens only after the slot's previous submission has
 * completed (the ring waits for that on the private timeline), so no set is ever freed or rewritten
 * under the GPU. This was chosen over VK_KHR_push_descriptor: it works on every Vulkan 1.2 device
 * with a single code path, and one vkAllocateDescriptorSets per submission costs next to nothing.
 */
#include "vk_producer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vulkan/vulkan.h>

/* SPIR-V of shaders/fill.comp, generated at build time by glslc -mfmt=c (a C initializer list;
 * see gfxep_vkp_shader in vkp.cmake) */
static const uint32_t fill_spirv[] =
#include "fill_spv.h"
    ;

#define VKP_DESTROY_WAIT_NS 5000000000ull
#define VKP_FILL_LOCAL_SIZE 256u
#define VKP_VALIDATION_LAYER "VK_LAYER_KHRONOS_validation"
#define VKP_MAX_PUSH_SIZE 128u /* the least maxPushConstantsSize a Vulkan device may have */
#define VKP_SPIRV_MAGIC 0x07230203u

typedef struct fill_push_constants { /* matches Params in fill.comp */
  uint32_t count;
  float base;
  float step;
  uint32_t offset_floats;
} fill_push_constants;

typedef struct ring_slot {
  VkCommandBuffer cmd;
  VkDescriptorPool descriptors; /* the sets of this slot's submission; reset only while the slot is idle */
  uint64_t serial;              /* private-timeline value its last submission signals; 0 = never used */
} ring_slot;

struct vkp_pipeline {
  vkp_ctx* ctx;
  VkDescriptorSetLayout set_layout; /* n_buffers storage buffers at set 0, bindings 0..n_buffers-1 */
  VkPipelineLayout layout;
  VkPipeline pipeline;
  uint32_t n_buffers;
  uint32_t push_size;
};

struct vkp_ctx {
  VkInstance instance;
  VkPhysicalDevice physical;
  VkDevice device;
  VkQueue queue;
  uint32_t queue_family;
  char device_name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
  uint8_t device_uuid[VKP_UUID_SIZE];
  int has_semaphore_fd;
  int has_buffer_device_address;
  char features[64]; /* what vkp_native reports as enabled beyond the required */
  VkPhysicalDeviceLimits limits;
  VkPhysicalDeviceMemoryProperties memory;
  uint32_t timestamp_valid_bits;
  PFN_vkGetMemoryFdKHR get_memory_fd;
  PFN_vkGetSemaphoreFdKHR get_semaphore_fd; /* NULL without VK_KHR_external_semaphore_fd */

  VkCommandPool command_pool;
  vkp_pipeline* fill; /* shaders/fill.comp, dispatched by vkp_submit_fill */
  VkQueryPool timestamps; /* VK_NULL_HANDLE when the queue has no timestamps */
  uint8_t timestamp_written[VKP_TIMESTAMP_SLOTS];

  VkSemaphore progress;     /* the private timeline: signalled by our submissions only */
  uint64_t last_serial;      /* value the latest submission signals on it */
  uint64_t completed_serial; /* a value it is known to have reached */
  uint64_t marker_serial;    /* serial of the latest empty marker submission (see quiesce) */
  ring_slot ring[VKP_RING_SIZE];
};

struct vkp_buffer {
  vkp_ctx* ctx;
  VkBuffer buffer;
  VkDeviceMemory memory;
  size_t size;
  VkDeviceSize allocation_size;
};

struct vkp_host_buffer {
  vkp_ctx* ctx;
  VkBuffer buffer;
  VkDeviceMemory memory;
  size_t size;
  void* mapped;
  int coherent;
};

struct vkp_sem {
  vkp_ctx* ctx;
  VkSemaphore semaphore;
  int exportable;
};

/* ---- errors ------------------------------------------------------------------------------------ */

static int fail(char* err, size_t n, const char* fmt, ...) {
  if (err && n > 0) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(err, n, fmt, args);
    va_end(args);
  }
  return -1;
}

static const char* vk_result_name(VkResult r) {
  switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_NOT_READY: return "VK_NOT_READY";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    case VK_INCOMPLETE: return "VK_INCOMPLETE";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_FORMAT_NOT_SUPPORTED: return "VK_ERROR_FORMAT_NOT_SUPPORTED";
    case VK_ERROR_FRAGMENTED_POOL: return "VK_ERROR_FRAGMENTED_POOL";
    case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
    case VK_ERROR_INVALID_EXTERNAL_HANDLE: return "VK_ERROR_INVALID_EXTERNAL_HANDLE";
    case VK_ERROR_FRAGMENTATION: return "VK_ERROR_FRAGMENTATION";
    default: return "unnamed VkResult";
  }
}

static int vk_fail(char* err, size_t n, const char* call, VkResult r) {
  return fail(err, n, "%s failed: %s (%d)", call, vk_result_name(r), (int)r);
}

/* appends to a NUL-terminated buffer of capacity cap, truncating quietly */
static void append(char* buf, size_t cap, const char* fmt, ...) {
  size_t used = strlen(buf);
  if (used + 1 >= cap) return;
  va_list args;
  va_start(args, fmt);
  vsnprintf(buf + used, cap - used, fmt, args);
  va_end(args);
}

static void format_uuid(const uint8_t* uuid, char out[37]) {
  size_t pos = 0;
  for (int i = 0; i < VKP_UUID_SIZE; i++) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out[pos++] = '-';
    snprintf(out + pos, 3, "%02x", uuid[i]);
    pos += 2;
  }
  out[pos] = '\0';
}

/* ---- instance and physical device --------------------------------------------------------------- */

static int validation_layer_present(void) {
  uint32_t count = 0;
  if (vkEnumerateInstanceLayerProperties(&count, NULL) != VK_SUCCESS || count == 0) return 0;
  VkLayerProperties* layers = calloc(count, sizeof *layers);
  if (!layers) return 0;
  int found = 0;
  if (vkEnumerateInstanceLayerProperties(&count, layers) == VK_SUCCESS)
    for (uint32_t i = 0; i < count && !found; i++) found = strcmp(layers[i].layerName, VKP_VALIDATION_LAYER) == 0;
  free(layers);
  return found;
}

static int create_instance(vkp_ctx* ctx, char* err, size_t n) {
  uint32_t loader_version = 0;
  VkResult r = vkEnumerateInstanceVersion(&loader_version);
  if (r != VK_SUCCESS) return vk_fail(err, n, "vkEnumerateInstanceVersion", r);
  if (loader_version < VK_API_VERSION_1_2)
    return fail(err, n, "the Vulkan loader offers API %u.%u; vk_producer needs 1.2", VK_API_VERSION_MAJOR(loader_version),
                VK_API_VERSION_MINOR(loader_version));

  const char* validate = getenv("VKP_VALIDATE");
  const char* layers[] = {VKP_VALIDATION_LAYER};
  int use_validation = validate && strcmp(validate, "1") == 0 && validation_layer_present();

  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                           .pApplicationName = "gfxep vk_producer",
                           .apiVersion = VK_API_VERSION_1_2};
  VkInstanceCreateInfo info = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                               .pApplicationInfo = &app,
                               .enabledLayerCount = use_validation ? 1u : 0u,
                               .ppEnabledLayerNames = layers};
  r = vkCreateInstance(&info, NULL, &ctx->instance);
  if (r != VK_SUCCESS) return vk_fail(err, n, "vkCreateInstance", r);
  return 0;
}

static void physical_device_identity(VkPhysicalDevice pd, VkPhysicalDeviceProperties* props, uint8_t uuid[VKP_UUID_SIZE]) {
  VkPhysicalDeviceIDProperties id = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
  VkPhysicalDeviceProperties2 props2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &id};
  vkGetPhysicalDeviceProperties2(pd, &props2);
  *props = props2.properties;
  memcpy(uuid, id.deviceUUID, VKP_UUID_SIZE);
}

static int no_matching_device(VkPhysicalDevice* devices, uint32_t count, const uint8_t* want_uuid, char* err, size_t n) {
  char wanted[37];
  char found[1024] = "";
  format_uuid(want_uuid, wanted);
  for (uint32_t i = 0; i < count; i++) {
    VkPhysicalDeviceProperties props;
    uint8_t uuid[VKP_UUID_SIZE];
    char text[37];
    physical_device_identity(devices[i], &props, uuid);
    format_uuid(uuid, text);
    append(found, sizeof found, "%s[%u] %s (UUID %s)", i ? ", " : "", i, props.deviceName, text);
  }
  return fail(err, n, "no Vulkan device has UUID %s; found %u: %s", wanted, count, found);
}

static int select_physical_device(vkp_ctx* ctx, const uint8_t* want_uuid, char* err, size_t n) {
  uint32_t count = 0;
  VkResult r = vkEnumeratePhysicalDevices(ctx->instance, &count, NULL);
  if (r != VK_SUCCESS) return vk_fail(err, n, "vkEnumeratePhysicalDevices", r);
  if (count == 0) return fail(err, n, "no Vulkan physical device found (is an ICD installed? see VK_DRIVER_FILES)");
  VkPhysicalDevice* devices = calloc(count, sizeof *devices);
  if (!devices) return fail(err, n, "out of host memory listing %u Vulkan devices", count);
  r = vkEnumeratePhysicalDevices(ctx->instance, &count, devices);
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
    free(devices);
    return vk_fail(err, n, "vkEnumeratePhysicalDevices", r);
  }
  for (uint32_t i = 0; i < count && !ctx->physical; i++) {
    VkPhysicalDeviceProperties props;
    uint8_t uuid[VKP_UUID_SIZE];
    physical_device_identity(devices[i], &props, uuid);
    if (want_uuid && memcmp(uuid, want_uuid, VKP_UUID_SIZE) != 0) continue;
    ctx->physical = devices[i];
    memcpy(ctx->device_uuid, uuid, VKP_UUID_SIZE);
    memcpy(ctx->device_name, props.deviceName, sizeof ctx->device_name);
    ctx->device_name[sizeof ctx->device_name - 1] = '\0';
    ctx->limits = props.limits;
  }
  int rc = ctx->physical ? 0 : no_matching_device(devices, count, want_uuid, err, n);
  free(devices);
  return rc;
}

/* ---- device capabilities ------------------------------------------------------------------------ */

static int device_has_extension(VkPhysicalDevice pd, const char* name, int* has, char* err, size_t n) {
  uint32_t count = 0;
  VkResult r = vkEnumerateDeviceExtensionProperties(pd, NULL, &count, NULL);
  if (r != VK_SUCCESS) return vk_fail(err, n, "vkEnumerateDeviceExtensionProperties", r);
  VkExtensionProperties* exts = calloc(count ? count : 1, sizeof *exts);
  if (!exts) return fail(err, n, "out of host memory listing %u device extensions", count);
  r = vkEnumerateDeviceExtensionProperties(pd, NULL, &count, exts);
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
    free(exts);
    return vk_fail(err, n, "vkEnumerateDeviceExtensionProperties", r);
  }
  *has = 0;
  for (uint32_t i = 0; i < count && !*has; i++) *has = strcmp(exts[i].extensionName, name) == 0;
  free(exts);
  return 0;
}

static int require_api_1_2(vkp_ctx* ctx, char* err, size_t n) {
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(ctx->physical, &props);
  if (props.apiVersion >= VK_API_VERSION_1_2) return 0;
  return fail(err, n, "%s supports Vulkan %u.%u; vk_producer needs 1.2", ctx->device_name,
              VK_API_VERSION_MAJOR(props.apiVersion), VK_API_VERSION_MINOR(props.apiVersion));
}

static int require_timeline_feature(vkp_ctx* ctx, char* err, size_t n) {
  VkPhysicalDeviceTimelineSemaphoreFeatures timeline = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES};
  VkPhysicalDeviceFeatures2 features = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &timeline};
  vkGetPhysicalDeviceFeatures2(ctx->physical, &features);
  if (timeline.timelineSemaphore) return 0;
  return fail(err, n, "%s lacks the timelineSemaphore feature", ctx->device_name);
}

static const VkBufferUsageFlags exportable_usage =
    VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;

/* opaque-fd export of buffer memory, as a non-dedicated allocation (the way CUDA imports it) */
static int require_exportable_buffers(vkp_ctx* ctx, char* err, size_t n) {
  int has = 0;
  if (device_has_extension(ctx->physical, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME, &has, err, n) != 0) return -1;
  if (!has) return fail(err, n, "%s lacks %s", ctx->device_name, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME);
  VkPhysicalDeviceExternalBufferInfo info = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO,
                                             .usage = exportable_usage,
                                             .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
  VkExternalBufferProperties props = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES};
  vkGetPhysicalDeviceExternalBufferProperties(ctx->physical, &info, &props);
  VkExternalMemoryFeatureFlags features = props.externalMemoryProperties.externalMemoryFeatures;
  if (!(features & VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT))
    return fail(err, n, "%s cannot export storage buffers as opaque fds", ctx->device_name);
  if (features & VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT)
    return fail(err, n, "%s exports opaque-fd buffers only as dedicated allocations; vk_producer makes non-dedicated ones",
                ctx->device_name);
  return 0;
}

static int timeline_fd_exportable(VkPhysicalDevice pd) {
  VkSemaphoreTypeCreateInfo type = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                    .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
  VkPhysicalDeviceExternalSemaphoreInfo info = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_SEMAPHORE_INFO,
                                                .pNext = &type,
                                                .handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
  VkExternalSemaphoreProperties props = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_PROPERTIES};
  vkGetPhysicalDeviceExternalSemaphoreProperties(pd, &info, &props);
  return (props.externalSemaphoreFeatures & VK_EXTERNAL_SEMAPHORE_FEATURE_EXPORTABLE_BIT) != 0;
}

/* Sets ctx->has_semaphore_fd; fails only when it is needed and missing. */
static int probe_semaphore_fd(vkp_ctx* ctx, int need_semaphore_fd, char* err, size_t n) {
  int has = 0;
  if (device_has_extension(ctx->physical, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME, &has, err, n) != 0) return -1;
  if (!has && need_semaphore_fd)
    return fail(err, n, "%s lacks %s", ctx->device_name, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME);
  int exportable = has && timeline_fd_exportable(ctx->physical);
  if (has && !exportable && need_semaphore_fd)
    return fail(err, n, "%s has %s but cannot export timeline semaphores as opaque fds", ctx->device_name,
                VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME);
  ctx->has_semaphore_fd = exportable;
  return 0;
}

static int choose_queue_family(vkp_ctx* ctx, char* err, size_t n) {
  uint32_t count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(ctx->physical, &count, NULL);
  VkQueueFamilyProperties* families = calloc(count ? count : 1, sizeof *families);
  if (!families) return fail(err, n, "out of host memory listing %u queue families", count);
  vkGetPhysicalDeviceQueueFamilyProperties(ctx->physical, &count, families);
  int found = 0;
  for (uint32_t i = 0; i < count && !found; i++) {
    if (!(families[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
    ctx->queue_family = i;
    ctx->timestamp_valid_bits = families[i].timestampValidBits;
    found = 1;
  }
  free(families);
  return found ? 0 : fail(err, n, "%s has no compute-capable queue family", ctx->device_name);
}

static int check_device_support(vkp_ctx* ctx, int need_semaphore_fd, char* err, size_t n) {
  if (require_api_1_2(ctx, err, n) != 0) return -1;
  if (require_timeline_feature(ctx, err, n) != 0) return -1;
  if (require_exportable_buffers(ctx, err, n) != 0) return -1;
  if (probe_semaphore_fd(ctx, need_semaphore_fd, err, n) != 0) return -1;
  vkGetPhysicalDeviceMemoryProperties(ctx->physical, &ctx->memory);
  return choose_queue_family(ctx, err, n);
}

/* ---- logical device and its fixed objects --------------------------------------------------- */

static int create_device(vkp_ctx* ctx, char* err, size_t n) {
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                   .queueFamilyIndex = ctx->queue_family,
                                   .queueCount = 1,
                                   .pQueuePriorities = &priority};
  const char* extensions[3] = {VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME};
  uint32_t n_extensions = 1;
  if (ctx->has_semaphore_fd) extensions[n_extensions++] = VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME;
  /* Besides timeline semaphores, what a renderer enables when it hands its device to gfxep's Vulkan
   * backend (bufferDeviceAddress, and the 8/16-bit storage, float16 and int64 its kernels use, and the
   * cooperative matrices with the memory model their shaders declare, and the host query reset its
   * per-frame timings use), where the device has them;
   * vkp_native says which were enabled. */
  VkPhysicalDeviceVulkan12Features have12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan11Features have11 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
                                             .pNext = &have12};
  VkPhysicalDeviceFeatures2 have = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &have11};
  vkGetPhysicalDeviceFeatures2(ctx->physical, &have);
  VkPhysicalDeviceCooperativeMatrixFeaturesNV have_coop = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  int coop_ext = 0;
  if (device_has_extension(ctx->physical, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME, &coop_ext, err, n) != 0) return -1;
  if (coop_ext) {
    VkPhysicalDeviceFeatures2 query = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &have_coop};
    vkGetPhysicalDeviceFeatures2(ctx->physical, &query);
  }
  const int coop = coop_ext && have_coop.cooperativeMatrix && have12.vulkanMemoryModel;
  if (coop) extensions[n_extensions++] = VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME;
  VkPhysicalDeviceVulkan12Features want12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                             .timelineSemaphore = VK_TRUE,
                                             .bufferDeviceAddress = have12.bufferDeviceAddress,
                                             .storageBuffer8BitAccess = have12.storageBuffer8BitAccess,
                                             .shaderFloat16 = have12.shaderFloat16,
                                             .shaderInt8 = have12.shaderInt8,
                                             .vulkanMemoryModel = coop ? VK_TRUE : VK_FALSE,
                                             .hostQueryReset = have12.hostQueryReset};
  VkPhysicalDeviceCooperativeMatrixFeaturesNV want_coop = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV, .pNext = &want12, .cooperativeMatrix = VK_TRUE};
  VkPhysicalDeviceVulkan11Features want11 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
                                             .pNext = coop ? (void*)&want_coop : (void*)&want12,
                                             .storageBuffer16BitAccess = have11.storageBuffer16BitAccess};
  VkPhysicalDeviceFeatures2 want = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &want11};
  want.features.shaderInt64 = have.features.shaderInt64;
  want.features.shaderInt16 = have.features.shaderInt16;
  ctx->has_buffer_device_address = have12.bufferDeviceAddress;
  snprintf(ctx->features, sizeof ctx->features, "%s%s%s%s%s%s", have.features.shaderInt64 ? "int64," : "",
           have12.storageBuffer8BitAccess ? "storage8," : "", have11.storageBuffer16BitAccess ? "storage16," : "",
           have12.shaderFloat16 && have11.storageBuffer16BitAccess ? "float16," : "", coop ? "coopmat," : "",
           have12.hostQueryReset ? "host_query_reset," : "");
  if (ctx->features[0]) ctx->features[strlen(ctx->features) - 1] = 0;
  VkDeviceCreateInfo info = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                             .pNext = &want,
                             .queueCreateInfoCount = 1,
                             .pQueueCreateInfos = &queue,
                             .enabledExtensionCount = n_extensions,
                             .ppEnabledExtensionNames = extensions};
  VkResult r = vkCreateDevice(ctx->physical, &info, NULL, &ctx->device);
  if (r != VK_SUCCESS) return vk_fail(err, n, "vkCreateDevice", r);
  vkGetDeviceQueue(ctx->device, ctx->queue_family, 0, &ctx->queue);
  ctx->get_memory_fd = (PFN_vkGetMemoryFdKHR)vkGetDeviceProcAddr(ctx->device, "vkGetMemoryFdKHR");
  if (!ctx->get_memory_fd) return fail(err, n, "vkGetDeviceProcAddr(vkGetMemoryFdKHR) returned NULL");
  if (ctx->has_semaphore_fd) {
    ctx->get_semaphore_fd = (PFN_vkGetSemaphoreFdKHR)vkGetDeviceProcAddr(ctx->device, "vkGetSemaphoreFdKHR");
    if (!ctx->get_semaphore_fd) return fail(err, n, "vkGetDeviceProcAddr(vkGetSemaphoreFdKHR) returned NULL");
  }
  return 0;
}

static int create_timeline_semaphore(VkDevice device, uint64_t initial, int exportable, VkSemaphore* out, char* err,
                                     size_t n) {
  VkExportSemaphoreCreateInfo export_info = {.sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO,
                                             .handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
  VkSemaphoreTypeCreateInfo type = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                    .pNext = exportable ? &export_info : NULL,
                                    .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE,
                                    .initialValue = initial};
  VkSemaphoreCreateInfo info = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &type};
  VkResult r = vkCreateSemaphore(device, &info, NULL, out);
  return r == VK_SUCCESS ? 0 : vk_fail(err, n, "vkCreateSemaphore", r);
}

static int create_command_ring(vkp_ctx* ctx, char* err, size_t n) {
  /* RESET_COMMAND_BUFFER: each slot is re-recorded (vkBeginCommandBuffer resets it) once idle */
  VkCommandPoolCreateInfo pool = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                  .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                  .queueFamilyIndex = ctx->queue_family};
  VkResult r = vkCreateCommandPool(ctx->device, &pool, NULL, &ctx->command_pool);
  if (r != VK_SUCCESS) return vk_fail(err, n, "vkCreateCommandPool", r);
  VkCommandBuffer cmds[VKP_RING_SIZE];
  VkCommandBufferAllocateInfo alloc = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = ctx->command_pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                       .commandBufferCount = VKP_RING_SIZE};
  r = vkAllocateCommandBuffers(ctx->device, &alloc, cmds);
  if (r != VK_SUCCESS) return vk_fail(err, n, "vkAllocateCommandBuffers", r);
  for (int i = 0; i < VKP_RING_SIZE; i++) ctx->ring[i].cmd = cmds[i];
  return 0;
}

/* One descriptor pool per ring slot, holding the single set a submission from that slot may use; a
 * pool is reset only when its slot is idle (see take_slot). */
static int create_slot_descriptor_pools(vkp_ctx* ctx, char* err, size_t n) {
  VkDescriptorPoolSize size = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .descriptorCount = VKP_MAX_BINDINGS};
  VkDescriptorPoolCreateInfo info = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                     .maxSets = 1,
                                     .poolSizeCount = 1,
                                     .pPoolSizes = &size};
  for (int i = 0; i < VKP_RING_SIZE; i++) {
    VkResult r = vkCreateDescriptorPool(ctx->device, &info, NULL, &ctx->ring[i].descriptors);
    if (r != VK_SUCCESS) return vk_fail(err, n, "vkCreateDescriptorPool", r);
  }
  return 0;
}

/* ---- compute pipelines (the fill's and the caller's) -------------------------------------------- */

/* Destroys whatever handles exist and frees p; the GPU must be done with it. */
static void release_pipeline(vkp_pipeline* p) {
  if (!p) return;
  VkDevice device = p->ctx->device;
  vkDestroyPipeline(device, p->pipeline, NULL);
  vkDestroyPipelineLayout(device, p->layout, NULL);
  vkDestroyDescriptorSetLayout(device, p->set_layout, NULL);
  free(p);
}

static int create_pipeline_layouts(vkp_pipeline* p, char* err, size_t n) {
  VkDevice device = p->ctx->device;
  VkDescriptorSetLayoutBinding bindings[VKP_MAX_BINDINGS];
  for (uint32_t i = 0; i < p->n_buffers; i++)
    bindings[i] = (VkDescriptorSetLayoutBinding){.binding = i,
                                                 .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                                 .descriptorCount = 1,
                                                 .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
  VkDescriptorSetLayoutCreateInfo set_info = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                              .bindingCount = p->n_buffers,
                                              .pBindings = bindings};
  VkResult r = vkCreateDescriptorSetLayout(device, &set_info, NULL, &p->set_layout);
  if (r != VK_SUCCESS) return vk_fail(err, n, "vkCreateDescriptorSetLayout", r);
  VkPushConstantRange push = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = p->push_size};
  VkPipelineLayoutCreateInfo layout_info = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                            .setLayoutCount = 1,
                                            .pSetLayouts = &p->set_layout,
                                            .pushConstantRangeCount = p->push_size ? 1u : 0u,
                                            .pPushConstantRanges = &push};
  r = vkCreatePipelineLayout(device, &layout_info, NULL, &p->layout);
  return r == VK_SUCCESS ? 0 : vk_fail(err, n, "vkCreatePipelineLayout", r);
}

static int create_pipeline_object(vkp_pipeline* p, const uint32_t* spirv, size_t spirv_bytes, char* err, size_t n) {
  VkDevice device = p->ctx->device;
  VkShaderModuleCreateInfo module_info = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                          .codeSize = spirv_bytes,
                                          .pCode = spirv};
  VkShaderModule module;
  VkResult r = vkCreateShaderModule(device, &module_info, NULL, &module);
  if (r != VK_SUCCESS) return vk_fail(err, n, "vkCreateShaderModule", r);
  VkComputePipelineCreateInfo info = {.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
                                      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                                                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                                                .module = module,
                                                .pName = "main"},
                                      .layout = p->layout};
  r = vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &info, NULL, &p->pipeline);
  vkDestroyShaderModule(device, module, NULL); /* the pipeline no longer needs it */
  return r == VK_SUCCESS ? 0 : vk_fail(err, n, "vkCreateComputePipelines", r);
}

/* Arguments already checked (see vkp_pipeline_create). */
static int build_pipeline(vkp_ctx* ctx, const uint32_t* spirv, size_t spirv_bytes, uint32_t n_buffers,
                          uint32_t push_size, vkp_pipeline** out, char* err, size_t n) {
  vkp_pipeline* p = calloc(1, sizeof *p);
  if (!p) return fail(err, n, "out of host memory creating a compute pipeline");
  p->ctx = ctx;
  p->n_buffers = n_buffers;
  p->push_size = push_size;
  if (create_pipeline_layouts(p, err, n) != 0 || create_pipeline_object(p, spirv, spirv_bytes, err, n) != 0) {
    release_pipeline(p); /* never used by a submission: safe to destroy at once */
    return -1;
  }
  *out = p;
  return 0;
}

static int create_timestamp_pool(vkp_ctx* ctx, char* err, size_t n) {
  if (ctx->timestamp_valid_bits == 0) return 0; /* the queue cannot write timestamps: leave them off */
  VkQueryPoolCreateInfo info = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                .queryCount = 2 * VKP_TIMESTAMP_SLOTS};
  VkResult r = vkCreateQueryPool(ctx->device, &info, NULL, &ctx->timestamps);
  return r == VK_SUCCESS ? 0 : vk_fail(err, n, "vkCreateQueryPool", r);
}

/* Destroys whatever exists; only valid once nothing is in flight. */
static void destroy_objects(vkp_ctx* ctx) {
  if (ctx->device) {
    vkDestroyQueryPool(ctx->device, ctx->timestamps, NULL);
    for (int i = 0; i < VKP_RING_SIZE; i++) vkDestroyDescriptorPool(ctx->device, ctx->ring[i].descriptors, NULL);
    release_pipeline(ctx->fill);
    vkDestroyCommandPool(ctx->device, ctx->command_pool, NULL);
    vkDestroySemaphore(ctx->device, ctx->progress, NULL);
    vkDestroyDevice(ctx->device, NULL);
  }
  if (ctx->instance) vkDestroyInstance(ctx->instance, NULL);
}

static int build_context(vkp_ctx* ctx, const uint8_t* want_uuid, int need_semaphore_fd, char* err, size_t n) {
  if (create_instance(ctx, err, n) != 0) return -1;
  if (select_physical_device(ctx, want_uuid, err, n) != 0) return -1;
  if (check_device_support(ctx, need_semaphore_fd, err, n) != 0) return -1;
  if (create_device(ctx, err, n) != 0) return -1;
  if (create_timeline_semaphore(ctx->device, 0, 0, &ctx->progress, err, n) != 0) return -1;
  if (create_command_ring(ctx, err, n) != 0) return -1;
  if (create_slot_descriptor_pools(ctx, err, n) != 0) return -1;
  if (build_pipeline(ctx, fill_spirv, sizeof fill_spirv, 1, sizeof(fill_push_constants), &ctx->fill, err, n) != 0)
    return -1;
  return create_timestamp_pool(ctx, err, n);
}

int vkp_create(const uint8_t* want_uuid, int need_semaphore_fd, vkp_ctx** out, char* err, size_t n) {
  if (!out) return fail(err, n, "vkp_create: out is NULL");
  *out = NULL;
  vkp_ctx* ctx = calloc(1, sizeof *ctx);
  if (!ctx) return fail(err, n, "vkp_create: out of host memory");
  if (build_context(ctx, want_uuid, need_semaphore_fd, err, n) != 0) {
    destroy_objects(ctx); /* nothing was submitted yet, so nothing can be in flight */
    free(ctx);
    return -1;
  }
  *out = ctx;
  return 0;
}

/* ---- the private timeline: the only thing this library host-waits on ----------------------- */

static int wait_progress(vkp_ctx* ctx, uint64_t serial, uint64_t timeout_ns, char* err, size_t n) {
  if (serial <= ctx->completed_serial) return 0;
  VkSemaphoreWaitInfo info = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                              .semaphoreCount = 1,
                              .pSemaphores = &ctx->progress,
                              .pValues = &serial};
  VkResult r = vkWaitSemaphores(ctx->device, &info, timeout_ns);
  if (r == VK_TIMEOUT)
    return fail(err, n,
                "submission %llu still in flight after %llu ns (does it wait on a value nobody has signalled?)",
                (unsigned long long)serial, (unsigned long long)timeout_ns);
  if (r != VK_SUCCESS) return vk_fail(err, n, "vkWaitSemaphores", r);
  ctx->completed_serial = serial;
  return 0;
}

/* An empty submission that only signals the next serial. Queues complete submissions in order, so
 * once it has signalled, the driver is done with everything submitted before it, its own
 * bookkeeping included (lavapipe's queue thread was seen touching a waited-on timeline after the
 * batch's signal had woken the host, a use-after-free if the host destroyed it right away). */
static int submit_marker(vkp_ctx* ctx, char* err, size_t n) {
  uint64_t serial = ctx->last_serial + 1;
  VkTimelineSemaphoreSubmitInfo values = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                          .signalSemaphoreValueCount = 1,
                                          .pSignalSemaphoreValues = &serial};
  VkSubmitInfo submit = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                         .pNext = &values,
                         .signalSemaphoreCount = 1,
                         .pSignalSemaphores = &ctx->progress};
  VkResult r = vkQueueSubmit(ctx->queue, 1, &submit, VK_NULL_HANDLE);
  if (r != VK_SUCCESS) return vk_fail(err, n, "vkQueueSubmit (marker)", r);
  ctx->last_serial = ctx->marker_serial = serial;
  return 0;
}

/* Waits until the queue has finished with everything submitted so far. */
static int quiesce(vkp_ctx* ctx, uint64_t timeout_ns, char* err, size_t n) {
  if (ctx->last_serial != ctx->marker_serial && submit_marker(ctx, err, n) != 0) return -1;
  return wait_progress(ctx, ctx->last_serial, timeout_ns, err, n);
}

int vkp_finish(vkp_ctx* ctx, uint64_t timeout_ns, char* err, size_t n) {
  if (!ctx) return fail(err, n, "vkp_finish: ctx is NULL");
  return quiesce(ctx, timeout_ns, err, n);
}

void vkp_destroy(vkp_ctx* ctx) {
  if (!ctx) return;
  if (quiesce(ctx, VKP_DESTROY_WAIT_NS, NULL, 0) != 0) {
    /* Work is still in flight (a GPU wait on a value that was never signalled, most likely):
     * destroying the device under it is undefined behaviour, so leak it instead. */
    free(ctx);
    return;
  }
  destroy_objects(ctx);
  free(ctx);
}

const char* vkp_device_name(const vkp_ctx* ctx) { return ctx ? ctx->device_name : ""; }
const uint8_t* vkp_device_uuid(const vkp_ctx* ctx) { return ctx ? ctx->device_uuid : NULL; }
int vkp_has_semaphore_fd(const vkp_ctx* ctx) { return ctx ? ctx->has_semaphore_fd : 0; }

void vkp_native(const vkp_ctx* ctx, vkp_native_handles* out) {
  memset(out, 0, sizeof *out);
  if (!ctx) return;
  out->instance = (void*)ctx->instance;
  out->physical_device = (void*)ctx->physical;
  out->device = (void*)ctx->device;
  out->queue = (void*)ctx->queue;
  out->queue_family = ctx->queue_family;
  out->queue_index = 0;
  out->get_instance_proc_addr = (void*)vkGetInstanceProcAddr;
  out->buffer_device_address = ctx->has_buffer_device_address;
  out->features = ctx->features;
}
int vkp_gfxep_options(const vkp_ctx* ctx, const char** keys, const char** values, char (*storage)[64]) {
  vkp_native_handles h;
  vkp_native(ctx, &h);
  int n = 0;
#define PUT(key, fmt, value)                                  \
  do {                                                        \
    snprintf(storage[n], sizeof storage[n], fmt, value);      \
    keys[n] = key;                                            \
    values[n] = storage[n];                                   \
    n++;                                                      \
  } while (0)
  PUT("gfxep.vk_instance", "0x%llx", (unsigned long long)(uintptr_t)h.instance);
  PUT("gfxep.vk_physical_device", "0x%llx", (unsigned long long)(uintptr_t)h.physical_device);
  PUT("gfxep.vk_device", "0x%llx", (unsigned long long)(uintptr_t)h.device);
  PUT("gfxep.vk_queue_family", "%u", h.queue_family);
  PUT("gfxep.vk_queue_index", "%u", h.queue_index);
  PUT("gfxep.vk_get_instance_proc_addr", "0x%llx", (unsigned long long)(uintptr_t)h.get_instance_proc_addr);
  PUT("gfxep.vk_features", "%s", h.features ? h.features : "");
#undef PUT
  return n;
}

int vkp_has_timestamps(const vkp_ctx* ctx) { return ctx && ctx->timestamps != VK_NULL_HANDLE; }

/* ---- memory ------------------------------------------------------------------------------------ */

typedef int (*memory_score_fn)(VkMemoryPropertyFlags flags); /* < 0: unusable; higher is better */

static int unusable_memory(VkMemoryPropertyFlags flags) {
  return (flags & (VK_MEMORY_PROPERTY_PROTECTED_BIT | VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT)) != 0;
}

/* exportable buffers: device-local, preferably not host-visible (real VRAM, not a BAR window) */
static int device_memory_score(VkMemoryPropertyFlags flags) {
  if (unusable_memory(flags)) return -1;
  int score = 0;
  if (flags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) score += 2;
  if (!(flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)) score += 1;
  return score;
}

/* readback/upload: host-visible; cached first (host reads of uncached memory are slow), then
 * coherent (no invalidate/flush needed), then not device-local (system memory, not a BAR window) */
static int host_memory_score(VkMemoryPropertyFlags flags) {
  if (unusable_memory(flags) || !(flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)) return -1;
  int score = 0;
  if (flags & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) score += 4;
  if (flags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) score += 2;
  if (!(flags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)) score += 1;
  return score;
}

static int choose_memory_type(const vkp_ctx* ctx, uint32_t allowed, memory_score_fn score_of) {
  int best = -1, best_score = -1;
  for (uint32_t i = 0; i < ctx->memory.memoryTypeCount; i++) {
    if (!(allowed & (1u << i))) continue;
    int score = score_of(ctx->memory.memoryTypes[i].propertyFlags);
    if (score > best_score) {
      best = (int)i;
      best_score = score;
    }
  }
  return best;
}

typedef struct bound_buffer {
  VkBuffer buffer;
  VkDeviceMemory memory;
  VkDeviceSize allocation_size;
  VkMemoryPropertyFlags flags;
} bound_buffer;

static void destroy_bound_buffer(VkDevice device, bound_buffer* b) {
  vkDestroyBuffer(device, b->buffer, NULL);
  vkFreeMemory(device, b->memory, NULL);
}

static int allocate_and_bind(vkp_ctx* ctx, int exportable, memory_score_fn score_of, bound_buffer* b, char* err,
                             size_t n) {
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(ctx->device, b->buffer, &req);
  int type = choose_memory_type(ctx, req.memoryTypeBits, score_of);
  if (type < 0) return fail(err, n, "no suitable memory type among 0x%x", req.memoryTypeBits);
  /* No VkMemoryDedicatedAllocateInfo on purpose: CUDA imports this memory as a non-dedicated
   * allocation, and a dedicated one would have to be imported with cudaExternalMemoryDedicated. */
  VkExportMemoryAllocateInfo export_info = {.sType = VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO,
                                            .handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
  VkMemoryAllocateInfo info = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                               .pNext = exportable ? &export_info : NULL,
                               .allocationSize = req.size,
                               .memoryTypeIndex = (uint32_t)type};
  VkResult r = vkAllocateMemory(ctx->device, &info, NULL, &b->memory);
  if (r != VK_SUCCESS) return vk_fail(err, n, "vkAllocateMemory", r);
  b->allocation_size = req.size;
  b->flags = ctx->memory.memoryTypes[type].propertyFlags;
  r = vkBindBufferMemory(ctx->device, b->buffer, b->memory, 0);
  return r == VK_SUCCESS ? 0 : vk_fail(err, n, "vkBindBufferMemory", r);
}

static int create_bound_buffer(vkp_ctx* ctx, size_t size, VkBufferUsageFlags usage, int exportable,
                               memory_score_fn score_of, bound_buffer* b, char* err, size_t n) {
  memset(b, 0, sizeof *b);
  VkExternalMemoryBufferCreateInfo external = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO,
                                               .handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
  VkBufferCreateInfo info = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                             .pNext = exportable ? &external : NULL,
                             .size = size,
                             .usage = usage,
                             .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  VkResult r = vkCreateBuffer(ctx->device, &info, NULL, &b->buffer);
  if (r != VK_SUCCESS) return vk_fail(err, n, "vkCreateBuffer", r);
  if (allocate_and_bind(ctx, exportable, score_of, b, err, n) != 0) {
    destroy_bound_buffer(ctx->device, b);
    return -1;
  }
  return 0;
}

/* ---- exportable device buffers ----------------------------------------------------------------- */

int vkp_buffer_create_exportable(vkp_ctx* ctx, size_t size, vkp_buffer** out, char* err, size_t n) {
  if (!ctx || !out) return fail(err, n, "vkp_buffer_create_exportable: ctx or out is NULL");
  *out = NULL;
  if (size == 0) return fail(err, n, "vkp_buffer_create_exportable: size is 0");
  vkp_buffer* buf = calloc(1, sizeof *buf);
  if (!buf) return fail(err, n, "vkp_buffer_create_exportable: out of host memory");
  bound_buffer b;
  if (create_bound_buffer(ctx, size, exportable_usage, 1, device_memory_score, &b, err, n) != 0) {
    free(buf);
    return -1;
  }
  buf->ctx = ctx;
  buf->buffer = b.buffer;
  buf->memory = b.memory;
  buf->size = size;
  buf->allocation_size = b.allocation_size;
  *out = buf;
  return 0;
}

int vkp_buffer_export_fd(vkp_buffer* buf, int* fd, size_t* allocation_size, char* err, size_t n) {
  if (!buf || !fd) return fail(err, n, "vkp_buffer_export_fd: buf or fd is NULL");
  *fd = -1;
  VkMemoryGetFdInfoKHR info = {.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR,
                               .memory = buf->memory,
                               .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
  VkResult r = buf->ctx->get_memory_fd(buf->ctx->device, &info, fd);
  if (r != VK_SUCCESS) {
    *fd = -1;
    return vk_fail(err, n, "vkGetMemoryFdKHR", r);
  }
  if (allocation_size) *allocation_size = (size_t)buf->allocation_size;
  return 0;
}

size_t vkp_buffer_size(const vkp_buffer* buf) { return buf ? buf->size : 0; }

void vkp_buffer_destroy(vkp_buffer* buf) {
  if (!buf) return;
  if (quiesce(buf->ctx, VKP_DESTROY_WAIT_NS, NULL, 0) != 0) { /* still in use: leak, never free under the GPU */
    free(buf);
    return;
  }
  vkDestroyBuffer(buf->ctx->device, buf->buffer, NULL);
  vkFreeMemory(buf->ctx->device, buf->memory, NULL);
  free(buf);
}

/* ---- host-visible buffers ------------------------------------------------------------------------ */

int vkp_host_buffer_create(vkp_ctx* ctx, size_t size, vkp_host_buffer** out, char* err, size_t n) {
  if (!ctx || !out) return fail(err, n, "vkp_host_buffer_create: ctx or out is NULL");
  *out = NULL;
  if (size == 0) return fail(err, n, "vkp_host_buffer_create: size is 0");
  vkp_host_buffer* hb = calloc(1, sizeof *hb);
  if (!hb) return fail(err, n, "vkp_host_buffer_create: out of host memory");
  bound_buffer b;
  /* storage too: a dispatch may read or write host buffers directly (vkp_binding::host) */
  VkBufferUsageFlags usage =
      VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  if (create_bound_buffer(ctx, size, usage, 0, host_memory_score, &b, err, n) != 0) {
    free(hb);
    return -1;
  }
  /* mapping the whole allocation keeps flush/invalidate ranges trivially aligned to nonCoherentAtomSize */
  VkResult r = vkMapMemory(ctx->device, b.memory, 0, VK_WHOLE_SIZE, 0, &hb->mapped);
  if (r != VK_SUCCESS) {
    destroy_bound_buffer(ctx->device, &b);
    free(hb);
    return vk_fail(err, n, "vkMapMemory", r);
  }
  hb->ctx = ctx;
  hb->buffer = b.buffer;
  hb->memory = b.memory;
  hb->size = size;
  hb->coherent = (b.flags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0;
  *out = hb;
  return 0;
}

static VkMappedMemoryRange whole_mapping(const vkp_host_buffer* hb) {
  VkMappedMemoryRange range = {.sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE,
                               .memory = hb->memory,
                               .offset = 0,
                               .size = VK_WHOLE_SIZE};
  return range;
}

int vkp_host_buffer_map(vkp_host_buffer* hb, void** ptr, char* err, size_t n) {
  if (!hb || !ptr) return fail(err, n, "vkp_host_buffer_map: hb or ptr is NULL");
  *ptr = NULL;
  if (!hb->coherent) {
    VkMappedMemoryRange range = whole_mapping(hb);
    VkResult r = vkInvalidateMappedMemoryRanges(hb->ctx->device, 1, &range);
    if (r != VK_SUCCESS) return vk_fail(err, n, "vkInvalidateMappedMemoryRanges", r);
  }
  *ptr = hb->mapped;
  return 0;
}

int vkp_host_buffer_flush(vkp_host_buffer* hb, char* err, size_t n) {
  if (!hb) return fail(err, n, "vkp_host_buffer_flush: hb is NULL");
  if (hb->coherent) return 0;
  VkMappedMemoryRange range = whole_mapping(hb);
  VkResult r = vkFlushMappedMemoryRanges(hb->ctx->device, 1, &range);
  return r == VK_SUCCESS ? 0 : vk_fail(err, n, "vkFlushMappedMemoryRanges", r);
}

size_t vkp_host_buffer_size(const vkp_host_buffer* hb) { return hb ? hb->size : 0; }

void vkp_host_buffer_destroy(vkp_host_buffer* hb) {
  if (!hb) return;
  if (quiesce(hb->ctx, VKP_DESTROY_WAIT_NS, NULL, 0) != 0) { /* still in use: leak, never free under the GPU */
    free(hb);
    return;
  }
  vkUnmapMemory(hb->ctx->device, hb->memory);
  vkDestroyBuffer(hb->ctx->device, hb->buffer, NULL);
  vkFreeMemory(hb->ctx->device, hb->memory, NULL);
  free(hb);
}

/* ---- timeline semaphores ------------------------------------------------------------------------ */

int vkp_timeline_create(vkp_ctx* ctx, uint64_t initial, int exportable, vkp_sem** out, char* err, size_t n) {
  if (!ctx || !out) return fail(err, n, "vkp_timeline_create: ctx or out is NULL");
  *out = NULL;
  if (exportable && !ctx->has_semaphore_fd)
    return fail(err, n, "exportable timeline semaphore: %s lacks %s (or cannot export timelines)", ctx->device_name,
                VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME);
  vkp_sem* sem = calloc(1, sizeof *sem);
  if (!sem) return fail(err, n, "vkp_timeline_create: out of host memory");
  if (create_timeline_semaphore(ctx->device, initial, exportable, &sem->semaphore, err, n) != 0) {
    free(sem);
    return -1;
  }
  sem->ctx = ctx;
  sem->exportable = exportable != 0;
  *out = sem;
  return 0;
}

int vkp_timeline_export_fd(vkp_sem* sem, int* fd, char* err, size_t n) {
  if (!sem || !fd) return fail(err, n, "vkp_timeline_export_fd: sem or fd is NULL");
  *fd = -1;
  if (!sem->exportable) return fail(err, n, "vkp_timeline_export_fd: the semaphore was not created exportable");
  VkSemaphoreGetFdInfoKHR info = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR,
                                  .semaphore = sem->semaphore,
                                  .handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
  VkResult r = sem->ctx->get_semaphore_fd(sem->ctx->device, &info, fd);
  if (r != VK_SUCCESS) {
    *fd = -1;
    return vk_fail(err, n, "vkGetSemaphoreFdKHR", r);
  }
  return 0;
}

int vkp_timeline_signal_host(vkp_sem* sem, uint64_t value, char* err, size_t n) {
  if (!sem) return fail(err, n, "vkp_timeline_signal_host: sem is NULL");
  VkSemaphoreSignalInfo info = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO,
                                .semaphore = sem->semaphore,
                                .value = value};
  VkResult r = vkSignalSemaphore(sem->ctx->device, &info);
  return r == VK_SUCCESS ? 0 : vk_fail(err, n, "vkSignalSemaphore", r);
}

int vkp_timeline_wait_host(vkp_sem* sem, uint64_t value, uint64_t timeout_ns, char* err, size_t n) {
  if (!sem) return fail(err, n, "vkp_timeline_wait_host: sem is NULL");
  /* Only for values Vulkan signals: see the hazard in vk_producer.h. */
  VkSemaphoreWaitInfo info = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                              .semaphoreCount = 1,
                              .pSemaphores = &sem->semaphore,
                              .pValues = &value};
  VkResult r = vkWaitSemaphores(sem->ctx->device, &info, timeout_ns);
  if (r == VK_TIMEOUT)
    return fail(err, n, "timed out after %llu ns waiting for timeline value %llu", (unsigned long long)timeout_ns,
                (unsigned long long)value);
  return r == VK_SUCCESS ? 0 : vk_fail(err, n, "vkWaitSemaphores", r);
}

void vkp_timeline_destroy(vkp_sem* sem) {
  if (!sem) return;
  if (quiesce(sem->ctx, VKP_DESTROY_WAIT_NS, NULL, 0) != 0) { /* still in use: leak, never free under the GPU */
    free(sem);
    return;
  }
  vkDestroySemaphore(sem->ctx->device, sem->semaphore, NULL);
  free(sem);
}

/* ---- the caller's compute pipelines ---------------------------------------------------------------- */

static int check_pipeline_args(const uint32_t* spirv, size_t spirv_bytes, uint32_t n_buffers, uint32_t push_size,
                               char* err, size_t n) {
  if (!spirv || spirv_bytes == 0) return fail(err, n, "vkp_pipeline_create: no SPIR-V given");
  if (spirv_bytes % sizeof(uint32_t) != 0)
    return fail(err, n, "vkp_pipeline_create: spirv_bytes %zu is not a whole number of 32-bit words", spirv_bytes);
  if (spirv[0] != VKP_SPIRV_MAGIC)
    return fail(err, n, "vkp_pipeline_create: not SPIR-V (first word 0x%08x, want 0x%08x)", spirv[0],
                VKP_SPIRV_MAGIC);
  if (n_buffers == 0 || n_buffers > VKP_MAX_BINDINGS)
    return fail(err, n, "vkp_pipeline_create: n_buffers %u is outside 1..%d", n_buffers, VKP_MAX_BINDINGS);
  if (push_size > VKP_MAX_PUSH_SIZE || push_size % 4 != 0)
    return fail(err, n, "vkp_pipeline_create: push_size %u must be a multiple of 4 and at most %u", push_size,
                VKP_MAX_PUSH_SIZE);
  return 0;
}

int vkp_pipeline_create(vkp_ctx* ctx, const uint32_t* spirv, size_t spirv_bytes, uint32_t n_buffers,
                        uint32_t push_size, vkp_pipeline** out, char* err, size_t n) {
  if (!ctx || !out) return fail(err, n, "vkp_pipeline_create: ctx or out is NULL");
  *out = NULL;
  if (check_pipeline_args(spirv, spirv_bytes, n_buffers, push_size, err, n) != 0) return -1;
  return build_pipeline(ctx, spirv, spirv_bytes, n_buffers, push_size, out, err, n);
}

void vkp_pipeline_destroy(vkp_pipeline* pipeline) {
  if (!pipeline) return;
  if (quiesce(pipeline->ctx, VKP_DESTROY_WAIT_NS, NULL, 0) != 0) { /* still in use: leak, never free under the GPU */
    free(pipeline);
    return;
  }
  release_pipeline(pipeline);
}

/* ---- recording helpers ---------------------------------------------------------------------------- */

static const vkp_sync no_sync; /* all zero: no wait, no signal, no timestamps */

static int check_sync(const vkp_ctx* ctx, const vkp_sync* sync, char* err, size_t n) {
  if ((sync->wait_sem && sync->wait_sem->ctx != ctx) || (sync->signal_sem && sync->signal_sem->ctx != ctx))
    return fail(err, n, "a semaphore of another vkp_ctx was given");
  if (sync->flags & ~(VKP_ACQUIRE_FROM_EXTERNAL | VKP_RELEASE_TO_EXTERNAL))
    return fail(err, n, "unknown vkp_sync flags 0x%x", sync->flags);
  if (!sync->write_timestamps) return 0;
  if (!ctx->timestamps) return fail(err, n, "%s's queue cannot write timestamps", ctx->device_name);
  if (sync->timestamp_slot >= VKP_TIMESTAMP_SLOTS)
    return fail(err, n, "timestamp slot %u out of range (%d slots)", sync->timestamp_slot, VKP_TIMESTAMP_SLOTS);
  return 0;
}

static int range_fits(size_t offset, size_t bytes, size_t size) { return offset <= size && bytes <= size - offset; }

/* Takes the next ring slot: waits (on the private timeline) for its previous submission, then
 * resets its descriptor pool, which that submission no longer uses. Records nothing, so a failure
 * after it (before begin_recording) leaves the slot as good as before. */
static int take_slot(vkp_ctx* ctx, ring_slot** out, char* err, size_t n) {
  ring_slot* slot = &ctx->ring[(ctx->last_serial + 1) % VKP_RING_SIZE];
  if (wait_progress(ctx, slot->serial, VKP_RING_WAIT_TIMEOUT_NS, err, n) != 0) return -1;
  VkResult r = vkResetDescriptorPool(ctx->device, slot->descriptors, 0);
  if (r != VK_SUCCESS) return vk_fail(err, n, "vkResetDescriptorPool", r);
  *out = slot;
  return 0;
}

static int begin_recording(ring_slot* slot, char* err, size_t n) {
  VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                    .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  VkResult r = vkBeginCommandBuffer(slot->cmd, &begin);
  return r == VK_SUCCESS ? 0 : vk_fail(err, n, "vkBeginCommandBuffer", r);
}

/* take_slot + begin_recording, for submissions without descriptors */
static int begin_slot(vkp_ctx* ctx, ring_slot** out, char* err, size_t n) {
  if (take_slot(ctx, out, err, n) != 0) return -1;
  return begin_recording(*out, err, n);
}

static void record_begin_timestamp(const vkp_ctx* ctx, VkCommandBuffer cmd, const vkp_sync* sync) {
  if (!sync->write_timestamps) return;
  /* query commands on one queue execute in submission order, so the reset precedes the write */
  vkCmdResetQueryPool(cmd, ctx->timestamps, 2 * sync->timestamp_slot, 2);
  vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, ctx->timestamps, 2 * sync->timestamp_slot);
}

static void record_end_timestamp(const vkp_ctx* ctx, VkCommandBuffer cmd, const vkp_sync* sync) {
  if (!sync->write_timestamps) return;
  vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, ctx->timestamps, 2 * sync->timestamp_slot + 1);
}

typedef struct barrier_spec {
  VkBuffer buffer;
  VkDeviceSize offset, size;
  VkPipelineStageFlags src_stage, dst_stage;
  VkAccessFlags src_access, dst_access;
  uint32_t src_family, dst_family; /* VK_QUEUE_FAMILY_IGNORED unless ownership moves */
} barrier_spec;

static void record_barrier(VkCommandBuffer cmd, const barrier_spec* spec) {
  VkBufferMemoryBarrier barrier = {.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER,
                                   .srcAccessMask = spec->src_access,
                                   .dstAccessMask = spec->dst_access,
                                   .srcQueueFamilyIndex = spec->src_family,
                                   .dstQueueFamilyIndex = spec->dst_family,
                                   .buffer = spec->buffer,
                                   .offset = spec->offset,
                                   .size = spec->size};
  vkCmdPipelineBarrier(cmd, spec->src_stage, spec->dst_stage, 0, 0, NULL, 1, &barrier, 0, NULL);
}

/* Acquire of the whole device buffer from the external API (CUDA wrote it last). The ranges of an
 * acquire and a release are the whole buffer so that they always pair up. */
static void record_acquire(const vkp_ctx* ctx, VkCommandBuffer cmd, VkBuffer buffer, const vkp_sync* sync,
                           VkPipelineStageFlags dst_stage, VkAccessFlags dst_access) {
  if (!(sync->flags & VKP_ACQUIRE_FROM_EXTERNAL)) return;
  barrier_spec spec = {buffer, 0, VK_WHOLE_SIZE, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, dst_stage, 0, dst_access,
                       VK_QUEUE_FAMILY_EXTERNAL, ctx->queue_family};
  record_barrier(cmd, &spec);
}

/* Hands the whole device buffer to the external API; the semaphore signal then carries the
 * dependency. */
static void record_release(const vkp_ctx* ctx, VkCommandBuffer cmd, VkBuffer buffer, VkPipelineStageFlags src_stage,
                           VkAccessFlags src_access) {
  barrier_spec spec = {buffer, 0, VK_WHOLE_SIZE, src_stage, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, src_access, 0,
                       ctx->queue_family, VK_QUEUE_FAMILY_EXTERNAL};
  record_barrier(cmd, &spec);
}

/* After the device buffer was written (src_access != 0) or read: either release it to the external
 * API or make the writes available and visible to whatever later work on this queue touches it. */
static void record_release_or_publish(const vkp_ctx* ctx, VkCommandBuffer cmd, VkBuffer buffer, const vkp_sync* sync,
                                      VkPipelineStageFlags src_stage, VkAccessFlags src_access) {
  if (sync->flags & VKP_RELEASE_TO_EXTERNAL) {
    record_release(ctx, cmd, buffer, src_stage, src_access);
  } else if (src_access) {
    barrier_spec spec = {buffer, 0, VK_WHOLE_SIZE, src_stage, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, src_access,
                         VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT, VK_QUEUE_FAMILY_IGNORED,
                         VK_QUEUE_FAMILY_IGNORED};
    record_barrier(cmd, &spec);
  }
}

/* Shader writes (to any buffer) become visible to later transfers and shaders on this queue and, once
 * the host has waited on the submission's signal, to host reads. */
static void record_shader_writes_visible(VkCommandBuffer cmd) {
  VkMemoryBarrier barrier = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                             .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                             .dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT |
                                              VK_ACCESS_HOST_READ_BIT};
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       VK_PIPELINE_STAGE_ALL_COMMANDS_BIT | VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier, 0, NULL, 0,
                       NULL);
}

/* Ends the slot's recording and submits it: waits (GPU-side, all stages, so the begin timestamp is
 * taken after the wait too) on the caller's value, signals the caller's value and the next serial. */
static int submit_slot(vkp_ctx* ctx, ring_slot* slot, const vkp_sync* sync, char* err, size_t n) {
  VkResult r = vkEndCommandBuffer(slot->cmd);
  if (r != VK_SUCCESS) return vk_fail(err, n, "vkEndCommandBuffer", r);
  uint64_t serial = ctx->last_serial + 1;
  int waits = sync->wait_sem && sync->wait_value > 0;
  VkSemaphore wait_sem = waits ? sync->wait_sem->semaphore : VK_NULL_HANDLE;
  VkPipelineStageFlags wait_stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
  VkSemaphore signal_sems[2] = {ctx->progress, sync->signal_sem ? sync->signal_sem->semaphore : VK_NULL_HANDLE};
  uint64_t signal_values[2] = {serial, sync->signal_value};
  uint32_t signal_count = sync->signal_sem ? 2u : 1u;
  VkTimelineSemaphoreSubmitInfo values = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                          .waitSemaphoreValueCount = waits ? 1u : 0u,
                                          .pWaitSemaphoreValues = &sync->wait_value,
                                          .signalSemaphoreValueCount = signal_count,
                                          .pSignalSemaphoreValues = signal_values};
  VkSubmitInfo submit = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                         .pNext = &values,
                         .waitSemaphoreCount = waits ? 1u : 0u,
                         .pWaitSemaphores = &wait_sem,
                         .pWaitDstStageMask = &wait_stage,
                         .commandBufferCount = 1,
                         .pCommandBuffers = &slot->cmd,
                         .signalSemaphoreCount = signal_count,
                         .pSignalSemaphores = signal_sems};
  r = vkQueueSubmit(ctx->queue, 1, &submit, VK_NULL_HANDLE); /* no fence: the private timeline tracks it */
  if (r != VK_SUCCESS) return vk_fail(err, n, "vkQueueSubmit", r);
  ctx->last_serial = serial;
  slot->serial = serial;
  if (sync->write_timestamps) ctx->timestamp_written[sync->timestamp_slot] = 1;
  return 0;
}

/* ---- dispatches: the fill and the caller's pipelines share one recording path ------------------ */

/* one storage-buffer binding as the descriptor sees it */
typedef struct bound_range {
  VkBuffer buffer;
  VkDeviceSize offset, range;
  int external; /* a vkp_buffer, which the vkp_sync ownership flags apply to (host buffers never move) */
} bound_range;

typedef struct dispatch_desc {
  const vkp_pipeline* pipeline;
  bound_range bindings[VKP_MAX_BINDINGS]; /* pipeline->n_buffers of them */
  const void* push;                       /* pipeline->push_size bytes */
  uint32_t groups[3];
} dispatch_desc;

/* Allocates the submission's set from the slot's pool (reset by take_slot) and points it at the
 * bindings. Before recording starts, so a failure leaves no half-recorded command buffer. */
static int write_descriptor_set(vkp_ctx* ctx, ring_slot* slot, const dispatch_desc* d, VkDescriptorSet* set,
                                char* err, size_t n) {
  VkDescriptorSetAllocateInfo alloc = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                       .descriptorPool = slot->descriptors,
                                       .descriptorSetCount = 1,
                                       .pSetLayouts = &d->pipeline->set_layout};
  VkResult r = vkAllocateDescriptorSets(ctx->device, &alloc, set);
  if (r != VK_SUCCESS) return vk_fail(err, n, "vkAllocateDescriptorSets", r);
  VkDescriptorBufferInfo infos[VKP_MAX_BINDINGS];
  VkWriteDescriptorSet writes[VKP_MAX_BINDINGS];
  for (uint32_t i = 0; i < d->pipeline->n_buffers; i++) {
    infos[i] = (VkDescriptorBufferInfo){.buffer = d->bindings[i].buffer,
                                        .offset = d->bindings[i].offset,
                                        .range = d->bindings[i].range};
    writes[i] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                       .dstSet = *set,
                                       .dstBinding = i,
                                       .descriptorCount = 1,
                                       .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                       .pBufferInfo = &infos[i]};
  }
  vkUpdateDescriptorSets(ctx->device, d->pipeline->n_buffers, writes, 0, NULL);
  return 0;
}

/* Ownership moves once per buffer, even when a buffer is bound twice: true when binding i is the
 * first binding of an external buffer. */
static int moves_ownership(const dispatch_desc* d, uint32_t i) {
  if (!d->bindings[i].external) return 0;
  for (uint32_t j = 0; j < i; j++)
    if (d->bindings[j].buffer == d->bindings[i].buffer) return 0;
  return 1;
}

static void record_dispatch(const vkp_ctx* ctx, VkCommandBuffer cmd, const dispatch_desc* d, VkDescriptorSet set,
                            const vkp_sync* sync) {
  const vkp_pipeline* p = d->pipeline;
  record_begin_timestamp(ctx, cmd, sync);
  for (uint32_t i = 0; i < p->n_buffers; i++)
    if (moves_ownership(d, i))
      record_acquire(ctx, cmd, d->bindings[i].buffer, sync, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                     VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p->pipeline);
  vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p->layout, 0, 1, &set, 0, NULL);
  if (p->push_size) vkCmdPushConstants(cmd, p->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, p->push_size, d->push);
  vkCmdDispatch(cmd, d->groups[0], d->groups[1], d->groups[2]);
  record_shader_writes_visible(cmd);
  if (sync->flags & VKP_RELEASE_TO_EXTERNAL)
    for (uint32_t i = 0; i < p->n_buffers; i++)
      if (moves_ownership(d, i))
        record_release(ctx, cmd, d->bindings[i].buffer, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       VK_ACCESS_SHADER_WRITE_BIT);
  record_end_timestamp(ctx, cmd, sync);
}

/* Arguments already checked. */
static int submit_dispatch(vkp_ctx* ctx, const dispatch_desc* d, const vkp_sync* sync, char* err, size_t n) {
  ring_slot* slot;
  VkDescriptorSet set;
  if (take_slot(ctx, &slot, err, n) != 0) return -1;
  if (write_descriptor_set(ctx, slot, d, &set, err, n) != 0) return -1;
  if (begin_recording(slot, err, n) != 0) return -1;
  record_dispatch(ctx, slot->cmd, d, set, sync);
  return submit_slot(ctx, slot, sync, err, n);
}

/* ---- the fill ------------------------------------------------------------------------------------ */

/* The descriptor window starts at offset rounded down to minStorageBufferOffsetAlignment; the rest of
 * the offset travels as offset_floats. The window must fit maxStorageBufferRange. */
static int plan_fill(const vkp_ctx* ctx, const vkp_buffer* buf, size_t offset, size_t count, float base, float step,
                     dispatch_desc* d, fill_push_constants* push, char* err, size_t n) {
  if (offset % sizeof(float) != 0) return fail(err, n, "vkp_submit_fill: offset %zu is not a multiple of 4", offset);
  if (count == 0) return fail(err, n, "vkp_submit_fill: count_floats is 0");
  if (count > buf->size / sizeof(float) || !range_fits(offset, count * sizeof(float), buf->size))
    return fail(err, n, "vkp_submit_fill: %zu floats at byte %zu overrun the %zu-byte buffer", count, offset, buf->size);
  VkDeviceSize align = ctx->limits.minStorageBufferOffsetAlignment ? ctx->limits.minStorageBufferOffsetAlignment : 1;
  bound_range* window = &d->bindings[0];
  window->buffer = buf->buffer;
  window->offset = offset - offset % align;
  window->range = offset + count * sizeof(float) - window->offset;
  window->external = 1;
  if (window->range > ctx->limits.maxStorageBufferRange)
    return fail(err, n, "vkp_submit_fill: %llu bytes exceed maxStorageBufferRange %u; split the fill",
                (unsigned long long)window->range, ctx->limits.maxStorageBufferRange);
  push->count = (uint32_t)count;
  push->base = base;
  push->step = step;
  push->offset_floats = (uint32_t)((offset - window->offset) / sizeof(float));
  /* the shader loops with a grid stride, so capping the group count only makes threads loop more */
  uint32_t groups = (push->count + VKP_FILL_LOCAL_SIZE - 1) / VKP_FILL_LOCAL_SIZE;
  if (groups > ctx->limits.maxComputeWorkGroupCount[0]) groups = ctx->limits.maxComputeWorkGroupCount[0];
  d->pipeline = ctx->fill;
  d->push = push;
  d->groups[0] = groups;
  d->groups[1] = d->groups[2] = 1;
  return 0;
}

int vkp_submit_fill(vkp_ctx* ctx, vkp_buffer* buf, size_t offset, size_t count_floats, float base, float step,
                    const vkp_sync* sync, char* err, size_t n) {
  if (!ctx || !buf) return fail(err, n, "vkp_submit_fill: ctx or buf is NULL");
  if (!sync) sync = &no_sync;
  dispatch_desc d = {0};
  fill_push_constants push;
  if (check_sync(ctx, sync, err, n) != 0) return -1;
  if (plan_fill(ctx, buf, offset, count_floats, base, step, &d, &push, err, n) != 0) return -1;
  return submit_dispatch(ctx, &d, sync, err, n);
}

/* ---- the caller's dispatches --------------------------------------------------------------------- */

/* Checks binding i and describes it as the whole buffer. */
static int bind_whole_buffer(const vkp_ctx* ctx, const vkp_binding* b, uint32_t i, bound_range* out, char* err,
                             size_t n) {
  if ((b->buffer == NULL) == (b->host == NULL))
    return fail(err, n, "vkp_submit_dispatch: binding %u must name exactly one of buffer and host", i);
  const vkp_ctx* owner = b->buffer ? b->buffer->ctx : b->host->ctx;
  if (owner != ctx) return fail(err, n, "vkp_submit_dispatch: binding %u is a buffer of another vkp_ctx", i);
  size_t size = b->buffer ? b->buffer->size : b->host->size;
  if (size > ctx->limits.maxStorageBufferRange)
    return fail(err, n, "vkp_submit_dispatch: binding %u: %zu bytes exceed maxStorageBufferRange %u", i, size,
                ctx->limits.maxStorageBufferRange);
  out->buffer = b->buffer ? b->buffer->buffer : b->host->buffer;
  out->offset = 0;
  out->range = size;
  out->external = b->buffer != NULL;
  return 0;
}

static int check_groups(const vkp_ctx* ctx, const uint32_t groups[3], char* err, size_t n) {
  for (int axis = 0; axis < 3; axis++) {
    uint32_t most = ctx->limits.maxComputeWorkGroupCount[axis];
    if (groups[axis] == 0 || groups[axis] > most)
      return fail(err, n, "vkp_submit_dispatch: %u groups along %c; this device allows 1..%u", groups[axis],
                  "xyz"[axis], most);
  }
  return 0;
}

static int plan_dispatch(const vkp_ctx* ctx, const vkp_pipeline* pipeline, const vkp_binding* bindings,
                         uint32_t n_bindings, const void* push, uint32_t push_size, dispatch_desc* d, char* err,
                         size_t n) {
  if (pipeline->ctx != ctx) return fail(err, n, "vkp_submit_dispatch: the pipeline belongs to another vkp_ctx");
  if (n_bindings != pipeline->n_buffers || !bindings)
    return fail(err, n, "vkp_submit_dispatch: %u bindings given%s; the pipeline has %u", n_bindings,
                bindings ? "" : " (NULL)", pipeline->n_buffers);
  if (push_size != pipeline->push_size || (push_size && !push))
    return fail(err, n, "vkp_submit_dispatch: %u push-constant bytes given%s; the pipeline takes %u", push_size,
                push || !push_size ? "" : " (NULL)", pipeline->push_size);
  for (uint32_t i = 0; i < n_bindings; i++)
    if (bind_whole_buffer(ctx, &bindings[i], i, &d->bindings[i], err, n) != 0) return -1;
  d->pipeline = pipeline;
  d->push = push;
  return check_groups(ctx, d->groups, err, n);
}

int vkp_submit_dispatch(vkp_ctx* ctx, vkp_pipeline* pipeline, const vkp_binding* bindings, uint32_t n_bindings,
                        const void* push, uint32_t push_size, uint32_t groups_x, uint32_t groups_y, uint32_t groups_z,
                        const vkp_sync* sync, char* err, size_t n) {
  if (!ctx || !pipeline) return fail(err, n, "vkp_submit_dispatch: ctx or pipeline is NULL");
  if (!sync) sync = &no_sync;
  dispatch_desc d = {.groups = {groups_x, groups_y, groups_z}};
  if (check_sync(ctx, sync, err, n) != 0) return -1;
  if (plan_dispatch(ctx, pipeline, bindings, n_bindings, push, push_size, &d, err, n) != 0) return -1;
  return submit_dispatch(ctx, &d, sync, err, n);
}

/* ---- transfers ----------------------------------------------------------------------------------- */

static int check_transfer(const char* what, const vkp_buffer* device, size_t device_offset, const vkp_host_buffer* host,
                          size_t host_offset, size_t bytes, char* err, size_t n) {
  if (bytes == 0) return fail(err, n, "%s: bytes is 0", what);
  if (!range_fits(device_offset, bytes, device->size))
    return fail(err, n, "%s: %zu bytes at %zu overrun the %zu-byte device buffer", what, bytes, device_offset,
                device->size);
  if (!range_fits(host_offset, bytes, host->size))
    return fail(err, n, "%s: %zu bytes at %zu overrun the %zu-byte host buffer", what, bytes, host_offset, host->size);
  return 0;
}

int vkp_submit_copy(vkp_ctx* ctx, vkp_buffer* src, size_t src_offset, vkp_host_buffer* dst, size_t dst_offset,
                    size_t bytes, const vkp_sync* sync, char* err, size_t n) {
  if (!ctx || !src || !dst) return fail(err, n, "vkp_submit_copy: ctx, src or dst is NULL");
  if (!sync) sync = &no_sync;
  if (check_sync(ctx, sync, err, n) != 0) return -1;
  if (check_transfer("vkp_submit_copy", src, src_offset, dst, dst_offset, bytes, err, n) != 0) return -1;
  ring_slot* slot;
  if (begin_slot(ctx, &slot, err, n) != 0) return -1;
  record_begin_timestamp(ctx, slot->cmd, sync);
  record_acquire(ctx, slot->cmd, src->buffer, sync, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
  VkBufferCopy region = {.srcOffset = src_offset, .dstOffset = dst_offset, .size = bytes};
  vkCmdCopyBuffer(slot->cmd, src->buffer, dst->buffer, 1, &region);
  /* the host reads the copy after waiting on the signal: make the transfer writes visible to it */
  barrier_spec to_host = {dst->buffer, dst_offset, bytes, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                          VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_HOST_READ_BIT, VK_QUEUE_FAMILY_IGNORED,
                          VK_QUEUE_FAMILY_IGNORED};
  record_barrier(slot->cmd, &to_host);
  record_release_or_publish(ctx, slot->cmd, src->buffer, sync, VK_PIPELINE_STAGE_TRANSFER_BIT, 0);
  record_end_timestamp(ctx, slot->cmd, sync);
  return submit_slot(ctx, slot, sync, err, n);
}

int vkp_submit_upload(vkp_ctx* ctx, vkp_host_buffer* src, size_t src_offset, vkp_buffer* dst, size_t dst_offset,
                      size_t bytes, const vkp_sync* sync, char* err, size_t n) {
  if (!ctx || !src || !dst) return fail(err, n, "vkp_submit_upload: ctx, src or dst is NULL");
  if (!sync) sync = &no_sync;
  if (check_sync(ctx, sync, err, n) != 0) return -1;
  if (check_transfer("vkp_submit_upload", dst, dst_offset, src, src_offset, bytes, err, n) != 0) return -1;
  ring_slot* slot;
  if (begin_slot(ctx, &slot, err, n) != 0) return -1;
  /* host writes made before vkQueueSubmit are visible to the device without a barrier */
  record_begin_timestamp(ctx, slot->cmd, sync);
  record_acquire(ctx, slot->cmd, dst->buffer, sync, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
  VkBufferCopy region = {.srcOffset = src_offset, .dstOffset = dst_offset, .size = bytes};
  vkCmdCopyBuffer(slot->cmd, src->buffer, dst->buffer, 1, &region);
  record_release_or_publish(ctx, slot->cmd, dst->buffer, sync, VK_PIPELINE_STAGE_TRANSFER_BIT,
                            VK_ACCESS_TRANSFER_WRITE_BIT);
  record_end_timestamp(ctx, slot->cmd, sync);
  return submit_slot(ctx, slot, sync, err, n);
}

/* ---- timestamps -------------------------------------------------------------------------------- */

static uint64_t ticks_to_ns(const vkp_ctx* ctx, uint64_t ticks) {
  if (ctx->timestamp_valid_bits < 64) ticks &= (1ull << ctx->timestamp_valid_bits) - 1;
  return (uint64_t)((double)ticks * (double)ctx->limits.timestampPeriod);
}

int vkp_read_timestamps(vkp_ctx* ctx, uint32_t slot, uint64_t* begin_ns, uint64_t* end_ns, char* err, size_t n) {
  if (!ctx || !begin_ns || !end_ns) return fail(err, n, "vkp_read_timestamps: ctx, begin_ns or end_ns is NULL");
  if (!ctx->timestamps) return fail(err, n, "%s's queue cannot write timestamps", ctx->device_name);
  if (slot >= VKP_TIMESTAMP_SLOTS) return fail(err, n, "timestamp slot %u out of range (%d slots)", slot, VKP_TIMESTAMP_SLOTS);
  if (!ctx->timestamp_written[slot]) return fail(err, n, "timestamp slot %u was never written", slot);
  /* no VK_QUERY_RESULT_WAIT_BIT: a host wait here could be a wait on a foreign signal in disguise */
  uint64_t results[4]; /* per query: value, availability */
  VkResult r = vkGetQueryPoolResults(ctx->device, ctx->timestamps, 2 * slot, 2, sizeof results, results,
                                     2 * sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
  if (r != VK_SUCCESS && r != VK_NOT_READY) return vk_fail(err, n, "vkGetQueryPoolResults", r);
  if (!results[1] || !results[3])
    return fail(err, n, "timestamps of slot %u are not available yet (wait for the submission first)", slot);
  *begin_ns = ticks_to_ns(ctx, results[0]);
  *end_ns = ticks_to_ns(ctx, results[2]);
  return 0;
}
