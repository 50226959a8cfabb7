// perfcast's Oclgrind plugin: every global, constant and local memory access of every work-item, streamed to a
// binary file for the cache simulation (perfcast/profiles/traffic.py reads it; the format is described there).
//
// Loaded by `oclgrind --plugins THIS.so`. Configured by the environment:
//   PERFCAST_TRACE_FILE     where to write the trace (required; nothing is recorded without it)
//   PERFCAST_TRACE_WINDOW   work-groups recorded per window (0 or unset: every work-group)
//   PERFCAST_TRACE_STRIDE   a window starts every STRIDE work-groups of a launch (dispatch order)
//   PERFCAST_TRACE_MAX_MB   stop recording new work-groups of a launch past this many MB of records
//   PERFCAST_TRACE_TOTAL_MB stop recording new work-groups of any launch past this many MB in all
//
// Oclgrind runs work-groups on several worker threads, one group per thread at a time, and each work-item of a
// group up to its next barrier before the next work-item. Each thread therefore keeps its group's records and
// writes them as one chunk when the group completes; a record carries what a device's schedule needs to
// reorder them (the work-item's local index, its access ordinal, the barrier region).
//
// Beside the records, every access of every work-group (sampled or not) marks the 4 KiB pages of its global
// buffer it touches. A page no one touched before -- neither the host (a write, a fill, a copy, a map for
// writing, data given at the buffer's creation) nor an earlier launch -- is a page the operating system maps
// on that first access (a fault: a fresh frame, zeroed). Each launch's count of them, by whether a load or a
// store came first, closes the launch (chunk 5): the quantitative model prices them (docs/models.md, §3.7).

#include <oclgrind/Context.h>
#include <oclgrind/Kernel.h>
#include <oclgrind/KernelInvocation.h>
#include <oclgrind/Memory.h>
#include <oclgrind/Plugin.h>
#include <oclgrind/WorkGroup.h>
#include <oclgrind/WorkItem.h>

#include <llvm/IR/Instruction.h>
#include <llvm/IR/Instructions.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace
{
const char MAGIC[8] = {'P', 'C', 'T', 'R', 'A', 'C', 'E', '1'};
const uint32_t CHUNK_KERNEL = 1, CHUNK_GROUP = 2, CHUNK_END = 3, CHUNK_BUFFER = 4, CHUNK_PAGES = 5;
const uint8_t SPACE_GLOBAL = 1, SPACE_CONSTANT = 2, SPACE_LOCAL = 3;
const uint8_t FLAG_STORE = 1, FLAG_ATOMIC = 2;
// A load whose address depends on a value loaded from global, constant or local memory (a gather through an
// index array, a pointer chase): its line is known only once the load before it returns.
const uint8_t FLAG_INDIRECT = 4;
const size_t INDIRECT_WALK = 512; // values a walk back from an address visits at most (a kernel's dataflow)
const uint32_t GROUP_LEVEL = 0xffffffffu; // an access made by the whole work-group (async copies)
const size_t PAGE = 4096;

#pragma pack(push, 1)
struct Record
{
  uint64_t address; // buffer placed at its own page-aligned base: see placeBuffer
  uint32_t size;
  uint32_t lane;    // local linear index of the work-item
  uint32_t ordinal; // the work-item's accesses counted from 0
  uint16_t region;  // barriers the work-group has passed
  uint8_t space;
  uint8_t flags;
};
#pragma pack(pop)
static_assert(sizeof(Record) == 24, "the trace format fixes a 24-byte record");

struct GroupState
{
  bool recording = false;
  uint64_t index = 0;
  uint16_t region = 0;
  size_t localX = 1, localY = 1;
  std::vector<uint32_t> ordinals;
  std::vector<Record> records;
};

thread_local GroupState group;

// Whether a value depends on a load from global, constant or local memory, walking back through the instructions
// that compute it (address arithmetic, casts, phis). Oclgrind runs optimised IR, so an index held in a variable
// is a register, not a private store: a load from private memory ends the walk as a constant would.
bool loadedValue(const llvm::Value* start)
{
  std::vector<const llvm::Value*> work{start};
  std::unordered_set<const llvm::Value*> seen;
  while (!work.empty() && seen.size() < INDIRECT_WALK)
  {
    const llvm::Value* value = work.back();
    work.pop_back();
    if (!seen.insert(value).second)
      continue;
    if (const auto* load = llvm::dyn_cast<llvm::LoadInst>(value))
    {
      if (load->getPointerAddressSpace() != 0)
        return true;
      continue;
    }
    if (const auto* call = llvm::dyn_cast<llvm::CallInst>(value))
    {
      // A builtin that reads memory (vloadN, an atomic) returns a loaded value where a pointer argument of it
      // points outside private memory; get_global_id and the like read none.
      if (call->mayReadFromMemory())
        for (const llvm::Use& argument : call->args())
          if (const auto* pointer = llvm::dyn_cast<llvm::PointerType>(argument->getType()))
            if (pointer->getAddressSpace() != 0)
              return true;
    }
    if (const auto* instruction = llvm::dyn_cast<llvm::Instruction>(value))
      for (const llvm::Use& operand : instruction->operands())
        work.push_back(operand.get());
  }
  return false;
}

// Each worker thread's verdict per load instruction (Oclgrind's workers live for one launch, its program longer).
thread_local std::unordered_map<const llvm::Instruction*, bool> indirectLoads;

// Whether the load a work-item is executing takes its address from a loaded value (`loadedValue` of its address).
bool indirectLoad(const oclgrind::WorkItem* item)
{
  const llvm::Instruction* instruction = item->getCurrentInstruction();
  if (!instruction)
    return false;
  auto found = indirectLoads.find(instruction);
  if (found != indirectLoads.end())
    return found->second;
  bool indirect = false;
  if (const auto* load = llvm::dyn_cast<llvm::LoadInst>(instruction))
    indirect = loadedValue(load->getPointerOperand());
  else if (const auto* call = llvm::dyn_cast<llvm::CallInst>(instruction)) // vloadN: a pointer and an offset
    for (const llvm::Use& argument : call->args())
      indirect = indirect || loadedValue(argument.get());
  indirectLoads.emplace(instruction, indirect);
  return indirect;
}

// One flag per 4 KiB page of a global buffer: set once anything touched the page. Flags are set by the worker
// threads of a launch at once, so each is an atomic byte; a buffer's map lives as long as any thread holds it.
struct PageMap
{
  explicit PageMap(size_t bytes, bool touched)
    : count((bytes + PAGE - 1) / PAGE), flags(new std::atomic<uint8_t>[count])
  {
    for (size_t i = 0; i < count; i++)
      flags[i].store(touched ? 1 : 0, std::memory_order_relaxed);
  }
  size_t count;
  std::unique_ptr<std::atomic<uint8_t>[]> flags;
};

// Every access of a launch looks its buffer's pages up: each worker thread keeps the maps it has looked up, so
// that a kernel reading several buffers in turn does not take the plugin's lock at every access. A buffer
// allocated or freed anywhere bumps the generation (process-wide: a second context's plugin counts too), which
// empties every thread's maps at its next access, so a buffer number reused for a new allocation is looked up
// again.
std::atomic<uint64_t> pageGeneration{0};

struct PageCache
{
  uint64_t generation = ~0ull;
  std::unordered_map<size_t, std::shared_ptr<PageMap>> maps;
};

thread_local PageCache pageCache;

size_t envSize(const char* name, size_t fallback)
{
  const char* text = std::getenv(name);
  return text && *text ? std::strtoull(text, nullptr, 10) : fallback;
}

class TracePlugin : public oclgrind::Plugin
{
public:
  TracePlugin(const oclgrind::Context* context, FILE* out)
    : oclgrind::Plugin(context), m_out(out), m_window(envSize("PERFCAST_TRACE_WINDOW", 0)),
      m_stride(envSize("PERFCAST_TRACE_STRIDE", 0)), m_maxBytes(envSize("PERFCAST_TRACE_MAX_MB", 512) << 20),
      m_totalBytes(envSize("PERFCAST_TRACE_TOTAL_MB", 4096) << 20)
  {
    std::fwrite(MAGIC, 1, sizeof MAGIC, m_out);
  }

  ~TracePlugin() override { std::fclose(m_out); }

  bool isThreadSafe() const override { return true; }

  void memoryAllocated(const oclgrind::Memory* memory, size_t address, size_t size, cl_mem_flags,
                       const uint8_t* initData) override
  {
    if (memory->getAddressSpace() != oclgrind::AddrSpaceGlobal)
      return;
    std::lock_guard<std::mutex> lock(m_mutex);
    size_t buffer = memory->extractBuffer(address);
    placeBufferLocked(buffer, size);
    // Data given at creation (COPY_HOST_PTR, USE_HOST_PTR) was written by the host: no page is fresh.
    m_pages[buffer] = std::make_shared<PageMap>(size, initData != nullptr);
    pageGeneration++;
  }

  void memoryDeallocated(const oclgrind::Memory* memory, size_t address) override
  {
    if (memory->getAddressSpace() != oclgrind::AddrSpaceGlobal)
      return;
    std::lock_guard<std::mutex> lock(m_mutex);
    m_pages.erase(memory->extractBuffer(address));
    pageGeneration++;
  }

  // The host's writes (clEnqueueWriteBuffer[Rect], fills, copies between buffers) touch their pages.
  void hostMemoryStore(const oclgrind::Memory* memory, size_t address, size_t size, const uint8_t*) override
  {
    if (memory->getAddressSpace() == oclgrind::AddrSpaceGlobal)
      markTouched(memory, memory->extractBuffer(address), memory->extractOffset(address), size);
  }

  // A buffer mapped for writing is written by the host through the pointer it gets.
  void memoryMap(const oclgrind::Memory* memory, size_t address, size_t offset, size_t size,
                 cl_map_flags flags) override
  {
    if (memory->getAddressSpace() == oclgrind::AddrSpaceGlobal &&
        (flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)))
      markTouched(memory, memory->extractBuffer(address), memory->extractOffset(address) + offset, size);
  }

  void kernelBegin(const oclgrind::KernelInvocation* invocation) override
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    const std::string& name = invocation->getKernel()->getName();
    uint32_t header[2] = {CHUNK_KERNEL, static_cast<uint32_t>(name.size())};
    uint64_t sizes[9];
    for (unsigned d = 0; d < 3; d++)
    {
      sizes[d] = invocation->getGlobalSize()[d];
      sizes[3 + d] = invocation->getLocalSize()[d];
      sizes[6 + d] = invocation->getGlobalOffset()[d];
    }
    std::fwrite(header, sizeof header, 1, m_out);
    std::fwrite(sizes, sizeof sizes, 1, m_out);
    std::fwrite(name.data(), 1, name.size(), m_out);
    m_numGroups = invocation->getNumGroups();
    m_groupsSeen = 0;
    m_groupsRecorded = 0;
    m_bytesWritten = 0;
    m_groupsDropped = 0;
    m_firstStores = 0;
    m_firstLoads = 0;
  }

  void kernelEnd(const oclgrind::KernelInvocation*) override
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    uint32_t pagesHeader[2] = {CHUNK_PAGES, 0};
    uint64_t pages[2] = {m_firstStores.load(), m_firstLoads.load()};
    std::fwrite(pagesHeader, sizeof pagesHeader, 1, m_out);
    std::fwrite(pages, sizeof pages, 1, m_out);
    uint32_t header[2] = {CHUNK_END, 0};
    uint64_t counts[3] = {m_groupsSeen, m_groupsRecorded, m_groupsDropped};
    std::fwrite(header, sizeof header, 1, m_out);
    std::fwrite(counts, sizeof counts, 1, m_out);
    std::fflush(m_out);
  }

  void workGroupBegin(const oclgrind::WorkGroup* workGroup) override
  {
    // The dispatch order's linear index, x fastest (WorkGroup::getGroupIndex is not unique in 2D and 3D).
    oclgrind::Size3 id = workGroup->getGroupID();
    group.index = id.x + m_numGroups.x * (id.y + m_numGroups.y * id.z);
    group.region = 0;
    group.records.clear();
    oclgrind::Size3 local = workGroup->getGroupSize();
    group.localX = local.x;
    group.localY = local.y;
    group.ordinals.assign(local.x * local.y * local.z, 0);
    bool inWindow = m_window == 0 || m_stride == 0 || group.index % m_stride < m_window;
    std::lock_guard<std::mutex> lock(m_mutex);
    m_groupsSeen++;
    group.recording = inWindow && m_bytesWritten < m_maxBytes && m_totalWritten < m_totalBytes;
    if (inWindow && !group.recording)
      m_groupsDropped++;
  }

  // Oclgrind reports a barrier once, when every work-item of the group has reached it.
  void workGroupBarrier(const oclgrind::WorkGroup*, uint32_t) override { group.region++; }

  void workGroupComplete(const oclgrind::WorkGroup*) override
  {
    if (!group.recording)
      return;
    std::lock_guard<std::mutex> lock(m_mutex);
    uint32_t header[2] = {CHUNK_GROUP, 0};
    uint64_t counts[2] = {group.index, group.records.size()};
    std::fwrite(header, sizeof header, 1, m_out);
    std::fwrite(counts, sizeof counts, 1, m_out);
    std::fwrite(group.records.data(), sizeof(Record), group.records.size(), m_out);
    m_bytesWritten += group.records.size() * sizeof(Record);
    m_totalWritten += group.records.size() * sizeof(Record);
    m_groupsRecorded++;
    group.recording = false;
  }

  void memoryLoad(const oclgrind::Memory* memory, const oclgrind::WorkItem* item, size_t address,
                  size_t size) override
  {
    bool global = memory->getAddressSpace() == oclgrind::AddrSpaceGlobal;
    record(memory, item, address, size, group.recording && global && indirectLoad(item) ? FLAG_INDIRECT : 0);
  }

  void memoryStore(const oclgrind::Memory* memory, const oclgrind::WorkItem* item, size_t address, size_t size,
                   const uint8_t*) override
  {
    record(memory, item, address, size, FLAG_STORE);
  }

  void memoryAtomicLoad(const oclgrind::Memory* memory, const oclgrind::WorkItem* item, oclgrind::AtomicOp,
                        size_t address, size_t size) override
  {
    record(memory, item, address, size, FLAG_ATOMIC);
  }

  void memoryAtomicStore(const oclgrind::Memory* memory, const oclgrind::WorkItem* item, oclgrind::AtomicOp,
                         size_t address, size_t size) override
  {
    record(memory, item, address, size, FLAG_ATOMIC | FLAG_STORE);
  }

  void memoryLoad(const oclgrind::Memory* memory, const oclgrind::WorkGroup*, size_t address,
                  size_t size) override
  {
    record(memory, nullptr, address, size, 0);
  }

  void memoryStore(const oclgrind::Memory* memory, const oclgrind::WorkGroup*, size_t address, size_t size,
                   const uint8_t*) override
  {
    record(memory, nullptr, address, size, FLAG_STORE);
  }

private:
  FILE* m_out;
  std::mutex m_mutex;
  size_t m_window, m_stride, m_maxBytes, m_totalBytes;
  uint64_t m_groupsSeen = 0, m_groupsRecorded = 0, m_groupsDropped = 0, m_bytesWritten = 0, m_totalWritten = 0;
  std::map<size_t, uint64_t> m_base; // buffer number -> its base address in the trace
  std::map<size_t, std::shared_ptr<PageMap>> m_pages; // buffer number -> its pages touched so far
  std::atomic<uint64_t> m_firstStores{0}, m_firstLoads{0}; // of the launch under way
  oclgrind::Size3 m_numGroups;         // of the launch under way (Oclgrind runs one kernel at a time)
  uint64_t m_next = PAGE;

  // Buffers are placed one after another on page boundaries, in the order they were allocated, as an
  // allocator would: Oclgrind's own addresses put every buffer at offset 0 of a huge aligned slot, which
  // would map the start of every array to the same cache set.
  uint64_t placeBufferLocked(size_t buffer, size_t size)
  {
    auto found = m_base.find(buffer);
    if (found != m_base.end() && size == 0)
      return found->second;
    uint64_t base = m_next;
    m_base[buffer] = base;
    m_next = base + ((size + PAGE - 1) / PAGE + 1) * PAGE;
    uint32_t header[2] = {CHUNK_BUFFER, 0};
    uint64_t placed[2] = {base, size};
    std::fwrite(header, sizeof header, 1, m_out);
    std::fwrite(placed, sizeof placed, 1, m_out);
    return base;
  }

  // Return the page map of `buffer` (of global memory), null if none is known.
  PageMap* pagesOf(size_t buffer)
  {
    uint64_t generation = pageGeneration.load(std::memory_order_acquire);
    if (pageCache.generation != generation)
    {
      pageCache.maps.clear();
      pageCache.generation = generation;
    }
    auto cached = pageCache.maps.find(buffer);
    if (cached != pageCache.maps.end())
      return cached->second.get();
    std::shared_ptr<PageMap> pages;
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      auto found = m_pages.find(buffer);
      if (found != m_pages.end())
        pages = found->second;
    }
    pageCache.maps.emplace(buffer, pages);
    return pages.get();
  }

  void markTouched(const oclgrind::Memory*, size_t buffer, size_t offset, size_t size)
  {
    PageMap* pages = pagesOf(buffer);
    if (!pages || size == 0)
      return;
    for (size_t page = offset / PAGE; page <= (offset + size - 1) / PAGE && page < pages->count; page++)
      pages->flags[page].store(1, std::memory_order_relaxed);
  }

  // Count the pages this kernel access touches first (every work-group's, recorded or not).
  void touch(const oclgrind::Memory* memory, size_t address, size_t size, uint8_t flags)
  {
    if (memory->getAddressSpace() != oclgrind::AddrSpaceGlobal || size == 0)
      return;
    PageMap* pages = pagesOf(memory->extractBuffer(address));
    if (!pages)
      return; // a buffer allocated before the plugin was loaded: taken as written
    size_t offset = memory->extractOffset(address);
    for (size_t page = offset / PAGE; page <= (offset + size - 1) / PAGE && page < pages->count; page++)
    {
      std::atomic<uint8_t>& flag = pages->flags[page];
      if (flag.load(std::memory_order_relaxed) || flag.exchange(1, std::memory_order_relaxed))
        continue;
      // An atomic read-modify-write is reported as its load, then its store: its page faults as a write.
      (flags & (FLAG_STORE | FLAG_ATOMIC) ? m_firstStores : m_firstLoads).fetch_add(1, std::memory_order_relaxed);
    }
  }

  void record(const oclgrind::Memory* memory, const oclgrind::WorkItem* item, size_t address, size_t size,
              uint8_t flags)
  {
    touch(memory, address, size, flags);
    if (!group.recording)
      return;
    unsigned space = memory->getAddressSpace();
    uint8_t kind;
    uint64_t traced;
    if (space == oclgrind::AddrSpaceLocal)
    {
      kind = SPACE_LOCAL;
      // Local memory is the group's own: its addresses need only be distinct, and small.
      traced = (static_cast<uint64_t>(memory->extractBuffer(address)) << 24) | memory->extractOffset(address);
    }
    else if (space == oclgrind::AddrSpaceGlobal || space == oclgrind::AddrSpaceConstant)
    {
      kind = space == oclgrind::AddrSpaceGlobal ? SPACE_GLOBAL : SPACE_CONSTANT;
      size_t buffer = memory->extractBuffer(address);
      uint64_t base;
      {
        std::lock_guard<std::mutex> lock(m_mutex);
        auto found = m_base.find(buffer);
        if (found != m_base.end())
          base = found->second;
        else
        {
          const oclgrind::Memory::Buffer* info = memory->getBuffer(address);
          base = placeBufferLocked(buffer, info ? info->size : PAGE);
        }
      }
      traced = base + memory->extractOffset(address);
    }
    else
      return; // private memory: registers and the stack, not the memory hierarchy
    Record r;
    r.address = traced;
    r.size = static_cast<uint32_t>(size);
    r.space = kind;
    r.flags = flags;
    r.region = group.region;
    if (item)
    {
      oclgrind::Size3 lid = item->getLocalID();
      uint32_t lane = static_cast<uint32_t>(lid.x + group.localX * (lid.y + group.localY * lid.z));
      r.lane = lane;
      r.ordinal = lane < group.ordinals.size() ? group.ordinals[lane]++ : 0;
    }
    else
    {
      r.lane = GROUP_LEVEL;
      r.ordinal = 0;
    }
    group.records.push_back(r);
  }
};

TracePlugin* plugin = nullptr;
} // namespace

extern "C" bool initializePlugins(oclgrind::Context* context)
{
  const char* path = std::getenv("PERFCAST_TRACE_FILE");
  if (!path || !*path)
    return true; // loaded without a destination: record nothing
  FILE* out = std::fopen(path, "wb");
  if (!out)
  {
    std::fprintf(stderr, "perfcast trace: cannot write %s\n", path);
    return false;
  }
  plugin = new TracePlugin(context, out);
  context->registerPlugin(plugin);
  return true;
}

extern "C" void releasePlugins(oclgrind::Context* context)
{
  if (plugin)
  {
    context->unregisterPlugin(plugin);
    delete plugin;
    plugin = nullptr;
  }
}
