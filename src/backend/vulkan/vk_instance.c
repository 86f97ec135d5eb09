/* gfxep Vulkan backend — the instance, the devices it offers, and their VkDevice.
 *
 * The instance (API 1.2) is created on the first device_count(); each physical device with Vulkan
 * >= 1.2, a compute queue, timelineSemaphore and bufferDeviceAddress becomes one gfx device, the
 * others are skipped with a log line naming what they lack. The VkDevice is created by device_get
 * and kept for the life of the process (until the module is unloaded), except while graphics interop
 * puts the device on the application's own VkDevice (vk_interop.c), which destroys it and makes a new
 * one at deinit. VK_KHR_external_memory_fd, VK_KHR_external_semaphore_fd and
 * VK_EXT_external_memory_host are enabled where present (imports).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/vulkan/vk_internal.h"
#include "core/log.h"

/* the table (vk_backend.c) that every gfx_dev of this backend points at */
extern const gfx_backend vk_backend_table;

static pthread_once_t enum_once = PTHREAD_ONCE_INIT;
static VkInstance instance;
static vk_device* devices[VK_MAX_DEVICES];
static int n_devices;

const char* vk_device_label(vk_device* d, char* buf, size_t size) {
  snprintf(buf, size, "device %d (%s)", d->index, d->info.name);
  return buf;
}

static int has_extension(const VkExtensionProperties* exts, uint32_t n, const char* name) {
  for (uint32_t i = 0; i < n; i++)
    if (strcmp(exts[i].extensionName, name) == 0) return 1;
  return 0;
}

/* Whether the device multiplies 16x16 by 16x16 float16 tiles into float32 on cooperative matrices at
 * subgroup scope (VK_NV_cooperative_matrix), as mm_coop.comp does. glslang writes such shaders for the
 * Vulkan memory model, so that feature is needed too; the shader's four subgroups per workgroup of 128
 * need subgroups of 32 (NVIDIA's). */
static int probe_coopmat(vk_device* d, VkPhysicalDevice phys, int has_ext, int memory_model) {
  if (!has_ext || !memory_model || !d->has_f16 || !d->has_subgroup_ops || d->subgroup_size != 32) return 0;
  if (getenv("GFXEP_VULKAN_NO_COOPMAT")) return 0;
  VkPhysicalDeviceCooperativeMatrixFeaturesNV fnv = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &fnv};
  vkGetPhysicalDeviceFeatures2(phys, &f2);
  if (!fnv.cooperativeMatrix) return 0;
  PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV get_props =
      (PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV)vkGetInstanceProcAddr(
          instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV");
  if (!get_props) return 0;
  uint32_t n = 0;
  if (get_props(phys, &n, NULL) != VK_SUCCESS || n == 0) return 0;
  VkCooperativeMatrixPropertiesNV* props = calloc(n, sizeof *props);
  if (!props) return 0;
  for (uint32_t i = 0; i < n; i++) props[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV;
  int found = 0;
  if (get_props(phys, &n, props) == VK_SUCCESS)
    for (uint32_t i = 0; i < n && !found; i++) {
      const VkCooperativeMatrixPropertiesNV* p = &props[i];
      found = p->MSize == 16 && p->NSize == 16 && p->KSize == 16 && p->AType == VK_COMPONENT_TYPE_FLOAT16_NV &&
              p->BType == VK_COMPONENT_TYPE_FLOAT16_NV && p->CType == VK_COMPONENT_TYPE_FLOAT32_NV &&
              p->DType == VK_COMPONENT_TYPE_FLOAT32_NV && p->scope == VK_SCOPE_SUBGROUP_NV;
    }
  free(props);
  return found;
}

/* Fills d from the physical device; returns NULL when usable, else what it lacks (static text). */
static const char* probe(vk_device* d, VkPhysicalDevice phys) {
  d->phys = phys;
  vkGetPhysicalDeviceProperties(phys, &d->props);
  if (d->props.apiVersion < VK_API_VERSION_1_2) return "Vulkan 1.2";
  d->grid_groups = d->props.limits.maxComputeWorkGroupCount[0] < 65535 ? d->props.limits.maxComputeWorkGroupCount[0] : 65535;
  const char* grid_env = getenv("GFXEP_VULKAN_GRID_GROUPS");
  if (grid_env && atol(grid_env) > 0 && (uint32_t)atol(grid_env) < d->grid_groups) d->grid_groups = (uint32_t)atol(grid_env);
  /* the copy plans' row kernels (a workgroup per row, each first reading the plan): 1024 workgroups
   * that walk many rows each ran a reflect Pad and a crop of a 64-channel 1080p map 32% faster than
   * one workgroup per row up to 65535 on an H100 (2026-12-07), concatenation and the rest unchanged;
   * GFXEP_VULKAN_PLAN_ROW_GROUPS=N sets another cap, to measure */
  d->plan_row_groups = d->grid_groups < 1024 ? d->grid_groups : 1024;
  const char* rows_env = getenv("GFXEP_VULKAN_PLAN_ROW_GROUPS");
  if (rows_env && atol(rows_env) > 0)
    d->plan_row_groups = (uint32_t)atol(rows_env) < d->grid_groups ? (uint32_t)atol(rows_env) : d->grid_groups;

  /* host waits block at once by default; GFXEP_VULKAN_WAIT_SPIN_US=N polls the timeline for the first
   * N us, as the CUDA backend's waits do for 2 ms (vk_stream.c's wait_value); at most 1 s, so that a
   * wait stays bounded by about VK_WAIT_TIMEOUT_NS and the product cannot overflow */
  d->wait_spin_ns = 0;
  const char* spin_env = getenv("GFXEP_VULKAN_WAIT_SPIN_US");
  if (spin_env && spin_env[0] >= '0' && spin_env[0] <= '9') {
    const unsigned long long us = strtoull(spin_env, NULL, 10);
    d->wait_spin_ns = (uint64_t)(us < 1000000ull ? us : 1000000ull) * 1000;
  }

  uint32_t n_fam = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(phys, &n_fam, NULL);
  VkQueueFamilyProperties fams[32];
  if (n_fam > 32) n_fam = 32;
  vkGetPhysicalDeviceQueueFamilyProperties(phys, &n_fam, fams);
  int family = -1;
  for (uint32_t i = 0; i < n_fam && family < 0; i++)
    if ((fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && fams[i].queueCount > 0) family = (int)i;
  if (family < 0) return "a compute queue";
  d->queue_family = (uint32_t)family;

  VkPhysicalDeviceVulkan12Features f12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan11Features f11 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
                                          .pNext = &f12};
  VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f11};
  vkGetPhysicalDeviceFeatures2(phys, &f2);
  if (!f12.timelineSemaphore) return "the timelineSemaphore feature";
  if (!f12.bufferDeviceAddress) return "the bufferDeviceAddress feature";
  d->has_float16_arith = f12.shaderFloat16 != 0;
  d->has_16bit_storage = f11.storageBuffer16BitAccess != 0;
  d->has_f16 = d->has_float16_arith && d->has_16bit_storage;
  d->has_8bit_storage = f12.storageBuffer8BitAccess != 0;
  d->has_int64 = f2.features.shaderInt64 != 0;
  d->has_int16 = f2.features.shaderInt16 != 0;
  d->has_host_query_reset = f12.hostQueryReset != 0;

  uint32_t n_ext = 0;
  vkEnumerateDeviceExtensionProperties(phys, NULL, &n_ext, NULL);
  VkExtensionProperties* exts = calloc(n_ext ? n_ext : 1, sizeof *exts);
  if (!exts) return "memory to list its extensions";
  vkEnumerateDeviceExtensionProperties(phys, NULL, &n_ext, exts);
  int has_pci = has_extension(exts, n_ext, VK_EXT_PCI_BUS_INFO_EXTENSION_NAME);
  d->has_budget = has_extension(exts, n_ext, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
  d->has_ext_memory_fd = has_extension(exts, n_ext, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME);
  d->has_ext_semaphore_fd = has_extension(exts, n_ext, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME);
  d->has_ext_memory_host = has_extension(exts, n_ext, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
  const int has_coopmat_ext = has_extension(exts, n_ext, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  const char* stats_file = getenv("GFXEP_VULKAN_PIPELINE_STATS");
  d->pipeline_stats_file =
      stats_file && *stats_file && has_extension(exts, n_ext, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME)
          ? stats_file
          : NULL;
#ifdef _WIN32
  d->has_ext_memory_win32 = has_extension(exts, n_ext, "VK_KHR_external_memory_win32" /* vulkan_win32.h */);
  d->has_ext_semaphore_win32 = has_extension(exts, n_ext, "VK_KHR_external_semaphore_win32");
#endif
  free(exts);

  VkPhysicalDeviceExternalMemoryHostPropertiesEXT host = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT};
  VkPhysicalDevicePCIBusInfoPropertiesEXT pci = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT,
                                                 .pNext = d->has_ext_memory_host ? &host : NULL};
  VkPhysicalDeviceMaintenance3Properties m3 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES,
                                               .pNext = has_pci ? (void*)&pci : d->has_ext_memory_host ? (void*)&host : NULL};
  VkPhysicalDeviceDriverProperties drv = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES, .pNext = &m3};
  VkPhysicalDeviceSubgroupProperties sg = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES, .pNext = &drv};
  VkPhysicalDeviceIDProperties id = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES, .pNext = &sg};
  VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &id};
  vkGetPhysicalDeviceProperties2(phys, &p2);
  d->max_alloc = m3.maxMemoryAllocationSize;
  /* subgroup operations are core (Vulkan 1.1) and need no enabling: used where compute shaders have
   * them, with a subgroup size the reduction kernels' 256 invocations are a multiple of */
  const VkSubgroupFeatureFlags sg_need =
      VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_BIT;
  d->subgroup_size = sg.subgroupSize;
  d->has_subgroup_ops = (sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) && (sg.supportedOperations & sg_need) == sg_need &&
                        sg.subgroupSize >= 4 && sg.subgroupSize <= 128 && (sg.subgroupSize & (sg.subgroupSize - 1)) == 0;
  d->has_coopmat = probe_coopmat(d, phys, has_coopmat_ext, f12.vulkanMemoryModel);
  d->host_import_align = host.minImportedHostPointerAlignment;
  if (d->has_ext_memory_host && !d->host_import_align) d->has_ext_memory_host = 0;

  gfx_device_info* info = &d->info;
  memset(info, 0, sizeof *info);
  snprintf(info->name, sizeof info->name, "%.127s", d->props.deviceName);
  snprintf(info->driver, sizeof info->driver, "%.63s %.63s", drv.driverName, drv.driverInfo);
  memcpy(info->uuid, id.deviceUUID, 16);
  info->has_uuid = 1;
  if (id.deviceLUIDValid) {
    memcpy(info->luid, id.deviceLUID, 8);
    info->has_luid = 1;
  }
  if (has_pci)
    snprintf(info->pci_bus_id, sizeof info->pci_bus_id, "%04x:%02x:%02x.%x", pci.pciDomain, pci.pciBus, pci.pciDevice,
             pci.pciFunction);
  info->software = d->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU; /* lavapipe, SwiftShader */
  snprintf(info->features, sizeof info->features, "%s%s%s", d->has_f16 ? "float16," : "", d->has_int64 ? "int64," : "",
           d->has_8bit_storage ? "storage8," : "");
  if (d->has_subgroup_ops) {
    size_t used = strlen(info->features);
    snprintf(info->features + used, sizeof info->features - used, "subgroups%u,", d->subgroup_size);
  }
  if (d->has_coopmat) {
    size_t used = strlen(info->features);
    snprintf(info->features + used, sizeof info->features - used, "coopmat,");
  }
  size_t len = strlen(info->features);
  if (len) info->features[len - 1] = 0; /* the last comma */
  info->pci_vendor_id = d->props.vendorID;
  info->pci_device_id = d->props.deviceID;
  vkGetPhysicalDeviceMemoryProperties(phys, &d->mem_props);
  for (uint32_t h = 0; h < d->mem_props.memoryHeapCount; h++)
    if (d->mem_props.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      info->total_memory += (size_t)d->mem_props.memoryHeaps[h].size;
  return NULL;
}

static void enumerate(void) {
  uint32_t loader_version = VK_API_VERSION_1_0;
  if (vkEnumerateInstanceVersion(&loader_version) != VK_SUCCESS || loader_version < VK_API_VERSION_1_2) {
    gfx_log(GFX_LOG_WARNING, "vulkan backend: the Vulkan loader supports API %u.%u; 1.2 is needed, no devices",
            VK_API_VERSION_MAJOR(loader_version), VK_API_VERSION_MINOR(loader_version));
    return;
  }
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                           .pApplicationName = "gfxep",
                           .pEngineName = "gfxep",
                           .apiVersion = VK_API_VERSION_1_2};
  VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
  VkResult r = vkCreateInstance(&ici, NULL, &instance);
  if (r != VK_SUCCESS) {
    gfx_log(GFX_LOG_WARNING, "vulkan backend: vkCreateInstance: VkResult %d (%s); no devices", (int)r,
            vk_result_name(r));
    instance = VK_NULL_HANDLE;
    return;
  }
  uint32_t n = 0;
  r = vkEnumeratePhysicalDevices(instance, &n, NULL);
  if (r != VK_SUCCESS || n == 0) {
    gfx_log(GFX_LOG_WARNING, "vulkan backend: vkEnumeratePhysicalDevices: VkResult %d (%s), %u devices; no devices",
            (int)r, vk_result_name(r), n);
    return;
  }
  VkPhysicalDevice phys[VK_MAX_DEVICES];
  if (n > VK_MAX_DEVICES) n = VK_MAX_DEVICES;
  r = vkEnumeratePhysicalDevices(instance, &n, phys);
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
    gfx_log(GFX_LOG_WARNING, "vulkan backend: vkEnumeratePhysicalDevices: VkResult %d (%s); no devices", (int)r,
            vk_result_name(r));
    return;
  }
  for (uint32_t i = 0; i < n; i++) {
    vk_device* d = calloc(1, sizeof *d);
    if (!d) {
      gfx_log(GFX_LOG_WARNING, "vulkan backend: out of host memory enumerating devices");
      return;
    }
    const char* missing = probe(d, phys[i]);
    if (missing) {
      VkPhysicalDeviceProperties p;
      vkGetPhysicalDeviceProperties(phys[i], &p);
      gfx_log(GFX_LOG_INFO, "vulkan backend: skipping physical device %u (%s): it lacks %s", i, p.deviceName, missing);
      free(d);
      continue;
    }
    d->index = n_devices;
    d->dev.backend = &vk_backend_table;
    d->dev.index = n_devices;
    d->dev.impl = d;
    pthread_mutex_init(&d->init_lock, NULL);
    pthread_mutex_init(&d->queue_lock, NULL);
    pthread_mutex_init(&d->mem_lock, NULL);
    pthread_mutex_init(&d->pipe_lock, NULL);
    pthread_mutex_init(&d->streams_lock, NULL);
    devices[n_devices++] = d;
    gfx_log(GFX_LOG_INFO, "vulkan backend: device %d: %s (%s)%s%s%s%s%s", d->index, d->info.name, d->info.driver,
            d->has_f16 ? ", float16" : "", d->has_int64 ? ", int64" : "", d->has_8bit_storage ? ", 8-bit storage" : "",
            d->has_subgroup_ops ? ", subgroup operations" : "", d->has_coopmat ? ", cooperative matrices" : "");
  }
}

int vk_device_count(void) {
  pthread_once(&enum_once, enumerate);
  return n_devices;
}


gfx_status vk_device_objects_create(vk_device* d) {
  gfx_status s = vk_pipeline_init(d);
  if (!s) s = vk_memory_init(d);
  if (!s) s = vk_stream_new(d, &d->sync_stream);
  if (s) vk_device_objects_destroy(d);
  return s;
}

void vk_device_objects_destroy(vk_device* d) {
  if (d->sync_stream) vk_stream_delete(d->sync_stream);
  d->sync_stream = NULL;
  vk_memory_teardown(d);
  vk_pipeline_teardown(d);
}

gfx_status vk_device_create_own(vk_device* d) {
  char label[192];
  vk_device_label(d, label, sizeof label);
  const char* exts[10];
  uint32_t n_exts = 0;
  if (d->pipeline_stats_file) exts[n_exts++] = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
  if (d->has_budget) exts[n_exts++] = VK_EXT_MEMORY_BUDGET_EXTENSION_NAME;
  if (d->has_ext_memory_fd) exts[n_exts++] = VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME;
  if (d->has_ext_semaphore_fd) exts[n_exts++] = VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME;
  if (d->has_ext_memory_host) exts[n_exts++] = VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME;
  if (d->has_coopmat) exts[n_exts++] = VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME;
#ifdef _WIN32
  if (d->has_ext_memory_win32) exts[n_exts++] = "VK_KHR_external_memory_win32";
  if (d->has_ext_semaphore_win32) exts[n_exts++] = "VK_KHR_external_semaphore_win32";
#endif

  VkPhysicalDeviceVulkan12Features f12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                          .timelineSemaphore = VK_TRUE,
                                          .bufferDeviceAddress = VK_TRUE,
                                          .shaderFloat16 = d->has_float16_arith ? VK_TRUE : VK_FALSE,
                                          .storageBuffer8BitAccess = d->has_8bit_storage ? VK_TRUE : VK_FALSE,
                                          .vulkanMemoryModel = d->has_coopmat ? VK_TRUE : VK_FALSE,
                                          .hostQueryReset = d->has_host_query_reset ? VK_TRUE : VK_FALSE};
  VkPhysicalDeviceCooperativeMatrixFeaturesNV coop = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV,
                                                      .pNext = &f12,
                                                      .cooperativeMatrix = VK_TRUE};
  VkPhysicalDeviceVulkan11Features f11 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
                                          .pNext = d->has_coopmat ? (void*)&coop : (void*)&f12,
                                          .storageBuffer16BitAccess = d->has_16bit_storage ? VK_TRUE : VK_FALSE};
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pe = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR,
      .pNext = &f11,
      .pipelineExecutableInfo = VK_TRUE};
  VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                  .pNext = d->pipeline_stats_file ? (void*)&pe : (void*)&f11};
  f2.features.shaderInt64 = d->has_int64 ? VK_TRUE : VK_FALSE;
  f2.features.shaderInt16 = d->has_int16 ? VK_TRUE : VK_FALSE;
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                 .queueFamilyIndex = d->queue_family,
                                 .queueCount = 1,
                                 .pQueuePriorities = &priority};
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                            .pNext = &f2,
                            .queueCreateInfoCount = 1,
                            .pQueueCreateInfos = &qci,
                            .enabledExtensionCount = n_exts,
                            .ppEnabledExtensionNames = exts};
  GFX_TRY(vk_check(vkCreateDevice(d->phys, &dci, NULL, &d->device), "vkCreateDevice for %s", label));
  d->queue_index = 0;
  vkGetDeviceQueue(d->device, d->queue_family, d->queue_index, &d->queue);
  gfx_status s = vk_device_objects_create(d);
  if (s) {
    vkDestroyDevice(d->device, NULL);
    d->device = VK_NULL_HANDLE;
    d->queue = VK_NULL_HANDLE;
    return gfx_status_wrap(s, "creating %s", label);
  }
  return NULL;
}

gfx_status vk_device_get(int index, gfx_dev** out) {
  *out = NULL;
  int n = vk_device_count();
  if (index < 0 || index >= n)
    return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: device index %d; %d devices are present", index, n);
  vk_device* d = devices[index];
  pthread_mutex_lock(&d->init_lock);
  gfx_status s = NULL;
  if (!d->created) {
    s = vk_device_create_own(d);
    if (!s) d->created = 1;
  }
  pthread_mutex_unlock(&d->init_lock);
  if (s) return s;
  *out = &d->dev;
  return NULL;
}

gfx_status vk_device_info(gfx_dev* dev, gfx_device_info* out) {
  if (!dev || !out) return gfx_error(GFX_ERR_INVALID_ARGUMENT, "vulkan backend: device_info: NULL %s", dev ? "out" : "device");
  *out = vk_dev(dev)->info;
  return NULL;
}

/* Streams still alive belong to callers that never destroyed them; they are deleted here with the
 * device. Memory left in the tables is freed. */
void vk_teardown(void) {
  for (int i = 0; i < n_devices; i++) {
    vk_device* d = devices[i];
    if (d->created && d->device) {
      while (d->n_streams > 0) vk_stream_delete(d->streams[d->n_streams - 1]);
      vk_device_objects_destroy(d);
      if (!d->app_device) vkDestroyDevice(d->device, NULL); /* the application's is the application's */
    }
    free(d->interop);
    free(d->streams);
    pthread_mutex_destroy(&d->init_lock);
    pthread_mutex_destroy(&d->queue_lock);
    pthread_mutex_destroy(&d->mem_lock);
    pthread_mutex_destroy(&d->pipe_lock);
    pthread_mutex_destroy(&d->streams_lock);
    free(d);
    devices[i] = NULL;
  }
  n_devices = 0;
  if (instance) vkDestroyInstance(instance, NULL);
  instance = VK_NULL_HANDLE;
}
