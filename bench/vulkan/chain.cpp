// The chain benchmark on Vulkan: a chain of 4 KiB copies, and one of tiny dispatches, alternating between
// two devices, each op reading what the previous op (on the other device) wrote. Four rows per chain:
//   (a)  rig        through librig: two rig devices opened on one Vulkan device; every op waits in its
//                   queue for the other device's previous op, found by rig from the memory's stamps
//   (b)  by hand    the same ordering written by hand: one VkDevice, a queue and a timeline semaphore per
//                   "device", each op a command buffer submitted with a wait on the other's semaphore value
//   (b2) by hand again, measured apart: b2/b is the noise, the floor under which no ratio means anything
//   (c)  host sync  by hand, waiting on the host after every op (what ordering costs without in-queue waits)
// Measured as bench/cuda is (bench/common/rounds.h): short passes, many rounds, every row once a round in
// a shuffled order; a pass is one stream of ops finished by one wait (wall time per op; its enqueueing apart).
// Each ratio is the median over rounds of the two rows' ratio in that round, with its 95% CI and quartiles.
// Issue 14's goal: rig at most 1.00x by hand (a/b); the output says whether the median meets it and whether
// the interval straddles 1.00.
//
// usage: bench_vulkan_chain [ops a pass >= 2, default 512] [rounds >= 1, default 101]
// Exits 0 when it ran, 77 with the reason where rig finds no Vulkan device, 1 on a usage or Vulkan error.
// The hand-written rows load libvulkan.so.1 (or $RIG_VULKAN_LIBRARY) with dlopen, as rig does.
#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES
#endif
#include <dlfcn.h>
#include <rig.h>
#include <vulkan/vulkan.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include "common/rounds.h"

namespace {

const uint32_t affine_spv[] =
#include "affine.spv.inc"
    ;

constexpr size_t kBytes = 4096;
constexpr uint32_t kWords = kBytes / 4;
constexpr uint32_t kBlock = 64;
constexpr size_t kRing = 64;  // command buffers per queue in the hand-written rows

[[noreturn]] void die(const char *what) {
  std::fprintf(stderr, "bench_vulkan_chain: %s\n", what);
  std::exit(1);
}

void check(rig_status s, const char *what) {
  if (s != RIG_OK) {
    std::fprintf(stderr, "bench_vulkan_chain: %s: %s: %s\n", what, rig_status_name(s), rig_last_error());
    std::exit(1);
  }
}

void vk_check(VkResult r, const char *what) {
  if (r != VK_SUCCESS) {
    std::fprintf(stderr, "bench_vulkan_chain: %s failed: VkResult %d\n", what, static_cast<int>(r));
    std::exit(1);
  }
}

struct Scalars {
  uint32_t a, b, n;
};

// ---- rig --------------------------------------------------------------------------------------------------

struct RigChain {
  rig_device dev[2]{};
  rig_buffer x[2]{};       // on device 0
  rig_buffer x_on_1[2]{};  // borrowed by device 1
  rig_module module[2]{};
  rig_submission sub_copy[2]{}, sub_kernel[2]{};
  rig_run copy[2]{}, kernel[2]{};

  RigChain() {
    for (int d = 0; d < 2; ++d) check(rig_device_open("vulkan:0", &dev[d]), "rig_device_open vulkan:0");
    for (int i = 0; i < 2; ++i) {
      check(rig_buffer_create(dev[0], kBytes, RIG_MEMORY_DEVICE, &x[i]), "rig_buffer_create");
      check(rig_buffer_borrow(dev[1], x[i], &x_on_1[i]), "rig_buffer_borrow");
    }
    for (int d = 0; d < 2; ++d) {
      check(rig_module_load(dev[d], RIG_MODULE_SPIRV, affine_spv, sizeof affine_spv, &module[d]), "rig_module_load");
      rig_buffer *xs = d == 0 ? x : x_on_1;
      // copy: device 0 copies x0 -> x1, device 1 copies x1 -> x0
      rig_part p{};
      p.size = sizeof p;
      p.kind = RIG_PART_COPY;
      p.src_slot = 0;
      p.dst_slot = 1;
      p.length = RIG_WHOLE;
      rig_access ca[2] = {RIG_ACCESS_READ, RIG_ACCESS_WRITE};
      check(rig_submission_make(dev[d], &p, 1, ca, 2, &sub_copy[d]), "rig_submission_make copy");
      check(rig_run_take(sub_copy[d], &copy[d]), "rig_run_take");
      check(rig_run_set_buffer(copy[d], 0, xs[d]), "set_buffer");
      check(rig_run_set_buffer(copy[d], 1, xs[1 - d]), "set_buffer");
      // kernel: affine on x0, in place
      uint32_t slot = 0;
      rig_part k{};
      k.size = sizeof k;
      k.kind = RIG_PART_LAUNCH;
      k.module = module[d];
      k.function = "main";
      k.grid[0] = kWords / kBlock, k.grid[1] = 1, k.grid[2] = 1;
      k.block[0] = kBlock, k.block[1] = 1, k.block[2] = 1;
      k.slots = &slot;
      k.slot_count = 1;
      rig_access ka = RIG_ACCESS_READ_WRITE;
      check(rig_submission_make(dev[d], &k, 1, &ka, 1, &sub_kernel[d]), "rig_submission_make launch");
      check(rig_run_take(sub_kernel[d], &kernel[d]), "rig_run_take");
      check(rig_run_set_buffer(kernel[d], 0, xs[0]), "set_buffer");
      Scalars s{3, 1, kWords};
      check(rig_run_set_scalars(kernel[d], &s, sizeof s), "set_scalars");
    }
  }
  ~RigChain() {
    for (int d = 0; d < 2; ++d) {
      rig_run_release(copy[d]);
      rig_run_release(kernel[d]);
      rig_submission_release(sub_copy[d]);
      rig_submission_release(sub_kernel[d]);
      rig_module_release(module[d]);
    }
    for (int i = 0; i < 2; ++i) {
      rig_buffer_release(x_on_1[i]);
      rig_buffer_release(x[i]);
    }
    for (int d = 0; d < 2; ++d) rig_device_release(dev[d]);
  }

  // Op i of the chain, on device i % 2.
  void op(bool kernels, int i) {
    int d = i & 1;
    check(rig_submit(kernels ? kernel[d] : copy[d], nullptr, 0, nullptr), "rig_submit");
  }
  // Waits for everything submitted on both devices.
  void finish() {
    for (int d = 0; d < 2; ++d) {
      uint64_t v = 0;
      check(rig_device_submitted(dev[d], &v), "submitted");
      check(rig_device_wait(dev[d], v, UINT64_MAX), "rig_device_wait");
    }
  }
};

// ---- by hand ----------------------------------------------------------------------------------------------

#define HAND_GLOBAL(X) X(vkCreateInstance)
#define HAND_INSTANCE(X)                       \
  X(vkEnumeratePhysicalDevices)                \
  X(vkGetPhysicalDeviceQueueFamilyProperties)  \
  X(vkGetPhysicalDeviceMemoryProperties)       \
  X(vkCreateDevice)                            \
  X(vkGetDeviceProcAddr)
#define HAND_DEVICE(X)              \
  X(vkGetDeviceQueue)               \
  X(vkQueueSubmit)                  \
  X(vkCreateSemaphore)              \
  X(vkWaitSemaphores)               \
  X(vkCreateCommandPool)            \
  X(vkAllocateCommandBuffers)       \
  X(vkBeginCommandBuffer)           \
  X(vkEndCommandBuffer)             \
  X(vkCreateBuffer)                 \
  X(vkGetBufferMemoryRequirements)  \
  X(vkAllocateMemory)               \
  X(vkBindBufferMemory)             \
  X(vkCreateShaderModule)           \
  X(vkCreateComputePipelines)       \
  X(vkCreatePipelineLayout)         \
  X(vkCreateDescriptorSetLayout)    \
  X(vkCreateDescriptorPool)         \
  X(vkAllocateDescriptorSets)       \
  X(vkUpdateDescriptorSets)         \
  X(vkCmdPipelineBarrier)           \
  X(vkCmdCopyBuffer)                \
  X(vkCmdBindPipeline)              \
  X(vkCmdBindDescriptorSets)        \
  X(vkCmdPushConstants)             \
  X(vkCmdDispatch)                  \
  X(vkDeviceWaitIdle)
#define HAND_MEMBER(name) PFN_##name name = nullptr;

// The hand-written peer. Objects are left to process exit: the benchmark makes them once.
struct Hand {
  PFN_vkGetInstanceProcAddr gipa = nullptr;
  HAND_GLOBAL(HAND_MEMBER)
  HAND_INSTANCE(HAND_MEMBER)
  HAND_DEVICE(HAND_MEMBER)
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue[2]{};
  VkSemaphore timeline[2]{};
  uint64_t value[2]{};
  VkCommandPool pool[2]{};
  VkCommandBuffer commands[2][kRing]{};
  uint64_t commands_value[2][kRing]{};
  size_t next[2]{};
  VkBuffer x[2]{};
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkDescriptorSet set = VK_NULL_HANDLE;

  Hand() {
    const char *path = std::getenv("RIG_VULKAN_LIBRARY");
    void *lib = dlopen(path && *path ? path : "libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) die("cannot load libvulkan.so.1");
    gipa = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib, "vkGetInstanceProcAddr"));
    if (!gipa) die("no vkGetInstanceProcAddr");
#define HAND_LOAD_G(name) name = reinterpret_cast<PFN_##name>(gipa(VK_NULL_HANDLE, #name));
    HAND_GLOBAL(HAND_LOAD_G)
    VkApplicationInfo app{};
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.apiVersion = VK_API_VERSION_1_2;
    VkInstanceCreateInfo ii{};
    ii.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    ii.pApplicationInfo = &app;
    vk_check(vkCreateInstance(&ii, nullptr, &instance), "vkCreateInstance");
#define HAND_LOAD_I(name) \
  if (!(name = reinterpret_cast<PFN_##name>(gipa(instance, #name)))) die(#name);
    HAND_INSTANCE(HAND_LOAD_I)
    // The same physical device rig calls vulkan:0: the first one with a compute queue.
    uint32_t n = 0;
    vkEnumeratePhysicalDevices(instance, &n, nullptr);
    std::vector<VkPhysicalDevice> pds(n);
    vkEnumeratePhysicalDevices(instance, &n, pds.data());
    uint32_t family = UINT32_MAX, count = 0;
    for (VkPhysicalDevice pd : pds) {
      uint32_t nf = 0;
      vkGetPhysicalDeviceQueueFamilyProperties(pd, &nf, nullptr);
      std::vector<VkQueueFamilyProperties> fams(nf);
      vkGetPhysicalDeviceQueueFamilyProperties(pd, &nf, fams.data());
      for (int pass = 0; pass < 2 && family == UINT32_MAX; ++pass)
        for (uint32_t f = 0; f < nf && family == UINT32_MAX; ++f)
          if ((fams[f].queueFlags & VK_QUEUE_COMPUTE_BIT) &&
              (pass == 1 || !(fams[f].queueFlags & VK_QUEUE_GRAPHICS_BIT)))
            family = f, count = fams[f].queueCount;
      if (family != UINT32_MAX) {
        physical = pd;
        break;
      }
    }
    if (!physical) die("no Vulkan device with a compute queue");
    uint32_t queues = std::min<uint32_t>(count, 2);
    float prio[2] = {1, 1};
    VkDeviceQueueCreateInfo qi{};
    qi.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    qi.queueFamilyIndex = family;
    qi.queueCount = queues;
    qi.pQueuePriorities = prio;
    VkPhysicalDeviceVulkan12Features f12{};
    f12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
    f12.timelineSemaphore = VK_TRUE;
    VkDeviceCreateInfo di{};
    di.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    di.pNext = &f12;
    di.queueCreateInfoCount = 1;
    di.pQueueCreateInfos = &qi;
    vk_check(vkCreateDevice(physical, &di, nullptr, &device), "vkCreateDevice");
#define HAND_LOAD_D(name) \
  if (!(name = reinterpret_cast<PFN_##name>(vkGetDeviceProcAddr(device, #name)))) die(#name);
    HAND_DEVICE(HAND_LOAD_D)
    // As rig does: device 0 on queue 0, device 1 on queue 1 where the family has two.
    for (int d = 0; d < 2; ++d) vkGetDeviceQueue(device, family, static_cast<uint32_t>(d) % queues, &queue[d]);

    for (int d = 0; d < 2; ++d) {
      VkSemaphoreTypeCreateInfo ti{};
      ti.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
      ti.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
      VkSemaphoreCreateInfo si{};
      si.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
      si.pNext = &ti;
      vk_check(vkCreateSemaphore(device, &si, nullptr, &timeline[d]), "vkCreateSemaphore");
      VkCommandPoolCreateInfo pi{};
      pi.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
      pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
      pi.queueFamilyIndex = family;
      vk_check(vkCreateCommandPool(device, &pi, nullptr, &pool[d]), "vkCreateCommandPool");
      VkCommandBufferAllocateInfo ai{};
      ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
      ai.commandPool = pool[d];
      ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
      ai.commandBufferCount = kRing;
      vk_check(vkAllocateCommandBuffers(device, &ai, commands[d]), "vkAllocateCommandBuffers");
    }

    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(physical, &mp);
    for (int i = 0; i < 2; ++i) {
      VkBufferCreateInfo bi{};
      bi.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
      bi.size = kBytes;
      bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                 VK_BUFFER_USAGE_TRANSFER_DST_BIT;
      vk_check(vkCreateBuffer(device, &bi, nullptr, &x[i]), "vkCreateBuffer");
      VkMemoryRequirements req;
      vkGetBufferMemoryRequirements(device, x[i], &req);
      uint32_t type = UINT32_MAX;
      for (uint32_t t = 0; t < mp.memoryTypeCount && type == UINT32_MAX; ++t)
        if ((req.memoryTypeBits & (1u << t)) && (mp.memoryTypes[t].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT))
          type = t;
      if (type == UINT32_MAX) die("no device-local memory type");
      VkMemoryAllocateInfo mai{};
      mai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
      mai.allocationSize = req.size;
      mai.memoryTypeIndex = type;
      VkDeviceMemory mem;
      vk_check(vkAllocateMemory(device, &mai, nullptr, &mem), "vkAllocateMemory");
      vk_check(vkBindBufferMemory(device, x[i], mem, 0), "vkBindBufferMemory");
    }

    VkShaderModuleCreateInfo smi{};

    smi.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
    smi.codeSize = sizeof affine_spv;
    smi.pCode = affine_spv;
    VkShaderModule shader;
    vk_check(vkCreateShaderModule(device, &smi, nullptr, &shader), "vkCreateShaderModule");
    VkDescriptorSetLayoutBinding b{0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    VkDescriptorSetLayoutCreateInfo dli{};
    dli.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
    dli.bindingCount = 1;
    dli.pBindings = &b;
    VkDescriptorSetLayout dsl;
    vk_check(vkCreateDescriptorSetLayout(device, &dli, nullptr, &dsl), "vkCreateDescriptorSetLayout");
    VkPushConstantRange pcr{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(Scalars)};
    VkPipelineLayoutCreateInfo pli{};
    pli.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
    pli.setLayoutCount = 1;
    pli.pSetLayouts = &dsl;
    pli.pushConstantRangeCount = 1;
    pli.pPushConstantRanges = &pcr;
    vk_check(vkCreatePipelineLayout(device, &pli, nullptr, &layout), "vkCreatePipelineLayout");
    VkSpecializationMapEntry me{0, 0, 4};
    uint32_t block = kBlock;
    VkSpecializationInfo spec{1, &me, 4, &block};
    VkComputePipelineCreateInfo cpi{};
    cpi.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
    cpi.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, nullptr, 0, VK_SHADER_STAGE_COMPUTE_BIT, shader,
                 "main", &spec};
    cpi.layout = layout;
    vk_check(vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &cpi, nullptr, &pipeline), "vkCreateComputePipelines");
    VkDescriptorPoolSize ps{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1};
    VkDescriptorPoolCreateInfo dpi{};
    dpi.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
    dpi.maxSets = 1;
    dpi.poolSizeCount = 1;
    dpi.pPoolSizes = &ps;
    VkDescriptorPool dpool;
    vk_check(vkCreateDescriptorPool(device, &dpi, nullptr, &dpool), "vkCreateDescriptorPool");
    VkDescriptorSetAllocateInfo dai{};
    dai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
    dai.descriptorPool = dpool;
    dai.descriptorSetCount = 1;
    dai.pSetLayouts = &dsl;
    vk_check(vkAllocateDescriptorSets(device, &dai, &set), "vkAllocateDescriptorSets");
    VkDescriptorBufferInfo dbi{x[0], 0, kBytes};
    VkWriteDescriptorSet w{};
    w.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    w.dstSet = set;
    w.descriptorCount = 1;
    w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    w.pBufferInfo = &dbi;
    vkUpdateDescriptorSets(device, 1, &w, 0, nullptr);
  }

  void wait_value(int d, uint64_t v) {
    VkSemaphoreWaitInfo wi{};
    wi.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO;
    wi.semaphoreCount = 1;
    wi.pSemaphores = &timeline[d];
    wi.pValues = &v;
    vk_check(vkWaitSemaphores(device, &wi, UINT64_MAX), "vkWaitSemaphores");
  }

  // One op on "device" d after the other device's last op: a command buffer with a barrier and the work,
  // submitted with a wait on the other device's timeline value and a signal of its own.
  void op(int d, bool kernel, bool host_sync) {
    size_t slot = next[d]++ % kRing;
    if (commands_value[d][slot]) wait_value(d, commands_value[d][slot]);  // reuse only a completed buffer
    VkCommandBuffer cb = commands[d][slot];
    VkCommandBufferBeginInfo bi{};
    bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vk_check(vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
    VkMemoryBarrier mb{};
    mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT |
                       VK_ACCESS_SHADER_WRITE_BIT;
    const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
    vkCmdPipelineBarrier(cb, stages, stages, 0, 1, &mb, 0, nullptr, 0, nullptr);
    if (kernel) {
      Scalars s{3, 1, kWords};
      vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
      vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0, nullptr);
      vkCmdPushConstants(cb, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof s, &s);
      vkCmdDispatch(cb, kWords / kBlock, 1, 1);
    } else {
      VkBufferCopy region{0, 0, kBytes};
      vkCmdCopyBuffer(cb, x[d], x[1 - d], 1, &region);
    }
    vk_check(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
    const int o = 1 - d;
    uint64_t wait_v = value[o], signal_v = ++value[d];
    VkTimelineSemaphoreSubmitInfo ti{};
    ti.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO;
    ti.waitSemaphoreValueCount = wait_v ? 1 : 0;
    ti.pWaitSemaphoreValues = &wait_v;
    ti.signalSemaphoreValueCount = 1;
    ti.pSignalSemaphoreValues = &signal_v;
    VkSubmitInfo si{};
    si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    si.pNext = &ti;
    si.waitSemaphoreCount = wait_v ? 1 : 0;
    si.pWaitSemaphores = &timeline[o];
    si.pWaitDstStageMask = &stages;
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    si.signalSemaphoreCount = 1;
    si.pSignalSemaphores = &timeline[d];
    vk_check(vkQueueSubmit(queue[d], 1, &si, VK_NULL_HANDLE), "vkQueueSubmit");
    commands_value[d][slot] = signal_v;
    if (host_sync) wait_value(d, signal_v);
  }

  // Waits for everything submitted on both "devices".
  void finish() {
    for (int d = 0; d < 2; ++d) wait_value(d, value[d]);
  }
};

// ---- rows, rounds, report ----------------------------------------------------------------------------------

int ops = 512;      // a pass: 4-15 ms on the H200, 6-35 ms on lavapipe (bench/README.md)
int repeats = 101;  // rounds

using Row = bench::Row<bench::Pass>;
void measure(Row &row) { row.rounds.push_back(bench::pass(ops, 0, row.op, row.finish)); }

// The Spread of rows x over y in one of a pass's times (wall_us, host_us), round by round.
std::optional<bench::Spread> ratio(const std::vector<Row> &rows, const char *x, const char *y,
                                   double bench::Pass::*time) {
  return bench::ratio(rows, x, y, [time](const bench::Pass &p, const bench::Pass &q) { return p.*time / q.*time; });
}

// Says in words whether issue 14's goal (a/b at most 1.00) is met by the median, and whether the median's
// interval straddles 1.00 (then this run does not settle it either way). Under 6 rounds the order
// statistics give no 95% interval: with 5, even min-max covers the median with 1 - 2 / 2^5 = 0.94.
void print_goal(const bench::Spread &s) {
  std::printf("  issue 14 (rig at most 1.00x by hand): %s by the median, %.3f; ", s.median <= 1.0 ? "met" : "missed",
              s.median);
  if (repeats < 6)
    std::printf("no 95%% CI: too few rounds (6 at least)\n");
  else
    std::printf("its 95%% CI %.3f-%.3f %s\n", s.lo, s.hi,
                s.hi < 1.0   ? "lies below 1.00: met with 95% confidence"
                : s.lo > 1.0 ? "lies above 1.00: missed with 95% confidence"
                             : "straddles 1.00: this run does not settle it");
}

void report(const char *what, const std::vector<Row> &rows) {
  std::printf("\n%s (%d ops a pass, %d rounds; rows in a shuffled order each round)\n", what, ops, repeats);
  // wall: the pass per op; q1, q3: its quartiles over rounds; enq: its enqueueing per op; tail: its final wait.
  std::printf("  %-36s %8s %8s %8s %8s %9s\n", "row (us per op)", "wall med", "wall q1", "wall q3", "enq med",
              "tail med");
  for (const Row &r : rows) {
    std::vector<double> w, e, t;
    for (const bench::Pass &p : r.rounds) {
      w.push_back(p.wall_us);
      e.push_back(p.host_us);
      t.push_back(p.tail_us);
    }
    std::printf("  %-36s %8.2f %8.2f %8.2f %8.2f %9.1f\n", r.name, bench::quantile(w, 0.5), bench::quantile(w, 0.25),
                bench::quantile(w, 0.75), bench::quantile(e, 0.5), bench::quantile(t, 0.5));
  }
  const struct {
    const char *label, *x, *y;
    double bench::Pass::*time;
    const char *note;
  } lines[] = {
      {"wall", "a", "b", &bench::Pass::wall_us, "   goal <= 1.00 (issue 14)"},
      {"wall", "b2", "b", &bench::Pass::wall_us, "   noise: the same row twice"},
      {"enq", "a", "b", &bench::Pass::host_us, "   enqueueing only"},
      {"wall", "c", "b", &bench::Pass::wall_us, "   a host wait per op over in-queue waits"},
  };
  for (const auto &l : lines)
    if (auto s = ratio(rows, l.x, l.y, l.time)) bench::print_ratio(l.label, l.x, l.y, *s, l.note);
  if (auto goal = ratio(rows, "a", "b", &bench::Pass::wall_us)) print_goal(*goal);
}

// A count argument: a whole decimal number in [min, INT_MAX], or -1.
int count_arg(const char *text, int min) {
  char *end = nullptr;
  long v = std::strtol(text, &end, 10);
  return end != text && *end == 0 && v >= min && v <= INT_MAX ? static_cast<int>(v) : -1;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc > 1) ops = count_arg(argv[1], 2);
  if (argc > 2) repeats = count_arg(argv[2], 1);
  if (ops < 0 || repeats < 0 || argc > 3)
    die("usage: bench_vulkan_chain [ops a pass >= 2, default 512] [rounds >= 1, default 101]");
  {
    // Where rig finds no Vulkan device there is nothing to compare: a skip with the reason, not a failure.
    rig_device probe = nullptr;
    rig_status s = rig_device_open("vulkan:0", &probe);
    if (s == RIG_NOT_FOUND) {
      std::printf("SKIP: no Vulkan device: %s\n", rig_last_error());
      return 77;
    }
    check(s, "rig_device_open vulkan:0");
    rig_device_release(probe);
  }

  RigChain rig;
  Hand hand;
  rig_device_info info{};
  info.size = sizeof info;
  check(rig_device_get_info(rig.dev[0], &info), "rig_device_get_info");
  std::printf("Vulkan chain benchmark on %s (%s), %d ops a pass, %d rounds\n", info.model,
              info.kind == RIG_DEVICE_CPU ? "CPU" : "GPU", ops, repeats);
  for (bool kernels : {false, true}) {
    std::vector<Row> rows = {
        {"a", "(a)  rig", [&](int i) { rig.op(kernels, i); }, [&] { rig.finish(); }},
        {"b", "(b)  by hand (timeline semaphores)", [&](int i) { hand.op(i & 1, kernels, false); },
         [&] { hand.finish(); }},
        {"b2", "(b2) (b) again, measured apart", [&](int i) { hand.op(i & 1, kernels, false); },
         [&] { hand.finish(); }},
        {"c", "(c)  host sync after each op", [&](int i) { hand.op(i & 1, kernels, true); }, [&] { hand.finish(); }},
    };
    // Every row once to warm up (pipelines, pools, command buffers), then the rounds.
    for (Row &r : rows) bench::pass(ops, 0, r.op, r.finish);
    bench::run_rounds(rows, repeats, measure);
    report(kernels ? "tiny dispatches (affine on 4 KiB, in place)" : "4 KiB copies", rows);
  }
  return 0;
}
