// perfcast's Oclgrind plugin of block counts: how many times each basic block of each kernel ran, with the source
// lines of its instructions. perfcast/profiles/incore.py gives each loop of the code a CPU runs (PoCL's, mapped to
// source lines by its debug line table) its iterations from them.
//
// Loaded by `oclgrind --plugins THIS.so`. PERFCAST_BLOCKS_FILE names the output (nothing is recorded without it),
// one line per (launch, block):
//   kernel \t function \t block \t executions \t instructions (phis and debug intrinsics aside) \t lines
//   (comma-separated, from the instructions' debug locations)
// A block's executions are those of its first instruction after the phis. Oclgrind runs work-groups on several
// threads: each keeps its own counts, summed when the launch ends.
#include <oclgrind/Context.h>
#include <oclgrind/Kernel.h>
#include <oclgrind/KernelInvocation.h>
#include <oclgrind/Plugin.h>
#include <oclgrind/WorkItem.h>

#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/DebugLoc.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Instruction.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>

namespace
{
thread_local std::unordered_map<const llvm::BasicBlock*, unsigned long long>* counts = nullptr;

class BlockPlugin : public oclgrind::Plugin
{
public:
  BlockPlugin(oclgrind::Context* context, FILE* out) : oclgrind::Plugin(context), m_out(out) {}
  ~BlockPlugin() override
  {
    std::fclose(m_out);
    for (auto* map : m_all)
      delete map;
  }
  bool isThreadSafe() const override { return true; }

  void instructionExecuted(const oclgrind::WorkItem*, const llvm::Instruction* instruction,
                           const oclgrind::TypedValue&) override
  {
    const llvm::BasicBlock* block = instruction->getParent();
    if (instruction != block->getFirstNonPHI())
      return;
    if (counts == nullptr)
    {
      counts = new std::unordered_map<const llvm::BasicBlock*, unsigned long long>();
      std::lock_guard<std::mutex> lock(m_mutex);
      m_all.insert(counts);
    }
    (*counts)[block]++;
  }

  void kernelBegin(const oclgrind::KernelInvocation* invocation) override
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_kernel = invocation->getKernel()->getName();
    for (auto* map : m_all)
      map->clear();
  }

  void kernelEnd(const oclgrind::KernelInvocation*) override
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    std::map<const llvm::BasicBlock*, unsigned long long> total;
    for (auto* map : m_all)
      for (auto& [block, n] : *map)
        total[block] += n;
    for (auto& [block, n] : total)
    {
      std::set<unsigned> lines;
      unsigned instructions = 0; // the block's instructions as Oclgrind counts them: phis and debug intrinsics aside
      for (const llvm::Instruction& instruction : *block)
      {
        if (const llvm::DebugLoc& location = instruction.getDebugLoc())
          if (location.getLine())
            lines.insert(location.getLine());
        if (!llvm::isa<llvm::PHINode>(instruction) && !llvm::isa<llvm::DbgInfoIntrinsic>(instruction))
          instructions++;
      }
      std::string text;
      for (unsigned line : lines)
        text += (text.empty() ? "" : ",") + std::to_string(line);
      // An unnamed block is named by its place in its function, so that two never share a name.
      std::string name = block->getName().str();
      if (name.empty())
      {
        unsigned index = 0;
        for (const llvm::BasicBlock& other : *block->getParent())
        {
          if (&other == block)
            break;
          index++;
        }
        name = "#" + std::to_string(index);
      }
      std::fprintf(m_out, "%s\t%s\t%s\t%llu\t%u\t%s\n", m_kernel.c_str(),
                   block->getParent()->getName().str().c_str(), name.c_str(), n, instructions, text.c_str());
    }
    std::fflush(m_out);
  }

private:
  FILE* m_out;
  std::mutex m_mutex;
  std::string m_kernel;
  std::set<std::unordered_map<const llvm::BasicBlock*, unsigned long long>*> m_all;
};
BlockPlugin* plugin = nullptr;
} // namespace

extern "C" bool initializePlugins(oclgrind::Context* context)
{
  const char* path = std::getenv("PERFCAST_BLOCKS_FILE");
  if (!path || !*path)
    return true; // loaded without a destination: record nothing
  FILE* out = std::fopen(path, "w");
  if (!out)
  {
    std::fprintf(stderr, "perfcast blocks: cannot write %s\n", path);
    return false;
  }
  plugin = new BlockPlugin(context, out);
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
