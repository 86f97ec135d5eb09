/* host cost of query-pool operations on the first Vulkan device */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <time.h>
#include <vulkan/vulkan.h>
static double now_us(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }
int main(void) {
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_2};
  VkInstanceCreateInfo ii = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
  VkInstance inst; if (vkCreateInstance(&ii, NULL, &inst)) { puts("no instance"); return 1; }
  uint32_t n = 8; VkPhysicalDevice pd[8]; vkEnumeratePhysicalDevices(inst, &n, pd);
  VkPhysicalDeviceProperties p; vkGetPhysicalDeviceProperties(pd[0], &p); printf("device %s\n", p.deviceName);
  VkPhysicalDeviceVulkan12Features f12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, .hostQueryReset = 1, .timelineSemaphore = 1};
  float prio = 1; VkDeviceQueueCreateInfo q = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = 0, .queueCount = 1, .pQueuePriorities = &prio};
  VkDeviceCreateInfo di = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .pNext = &f12, .queueCreateInfoCount = 1, .pQueueCreateInfos = &q};
  VkDevice dev; if (vkCreateDevice(pd[0], &di, NULL, &dev)) { puts("no device"); return 1; }
  VkQueryPoolCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, .queryType = VK_QUERY_TYPE_TIMESTAMP, .queryCount = 320};
  VkQueryPool pool; vkCreateQueryPool(dev, &qi, NULL, &pool);
  VkCommandPoolCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, .queueFamilyIndex = 0};
  VkCommandPool cp; vkCreateCommandPool(dev, &ci, NULL, &cp);
  VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = cp, .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
  VkCommandBuffer cb; vkAllocateCommandBuffers(dev, &ai, &cb);
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  const int N = 2000;
  double t0 = now_us(); for (int i = 0; i < N; i++) vkResetQueryPool(dev, pool, i % 320, 1); double t1 = now_us();
  printf("vkResetQueryPool(1): %.3f us\n", (t1 - t0) / N);
  t0 = now_us(); for (int i = 0; i < N; i++) vkResetQueryPool(dev, pool, (i % 64) * 5, 5); t1 = now_us();
  printf("vkResetQueryPool(5): %.3f us\n", (t1 - t0) / N);
  vkBeginCommandBuffer(cb, &bi);
  t0 = now_us(); for (int i = 0; i < 300; i++) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, i); t1 = now_us();
  printf("vkCmdWriteTimestamp: %.3f us\n", (t1 - t0) / 300);
  t0 = now_us(); for (int i = 0; i < 300; i++) vkCmdResetQueryPool(cb, pool, i, 1); t1 = now_us();
  printf("vkCmdResetQueryPool: %.3f us\n", (t1 - t0) / 300);
  vkEndCommandBuffer(cb);
  uint64_t r[2];
  t0 = now_us(); for (int i = 0; i < N; i++) vkGetQueryPoolResults(dev, pool, i % 320, 1, sizeof r, r, sizeof r, VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT); t1 = now_us();
  printf("vkGetQueryPoolResults(avail): %.3f us\n", (t1 - t0) / N);
  VkSemaphoreTypeCreateInfo st = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
  VkSemaphoreCreateInfo si = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &st};
  VkSemaphore sem; vkCreateSemaphore(dev, &si, NULL, &sem);
  uint64_t v;
  t0 = now_us(); for (int i = 0; i < N; i++) vkGetSemaphoreCounterValue(dev, sem, &v); t1 = now_us();
  printf("vkGetSemaphoreCounterValue: %.3f us\n", (t1 - t0) / N);
  return 0;
}
