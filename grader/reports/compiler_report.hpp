// The compiler's own evidence about a student's kernels: ptxas' per-kernel
// resource report (-Xptxas -v, on stderr) and the PTX nvcc keeps (--keep).
// Static checks read these instead of timing anything, so they run without a GPU
// and can say precisely why a step fails ("transpose_kernel has no bar.sync").
#pragma once

#include <map>
#include <string>
#include <vector>

namespace grader {

struct KernelResources {
  std::string mangled, name;
  int registers = 0, stack_frame = 0, spill_stores = 0, spill_loads = 0, shared_bytes = 0, barriers = 0;
  std::map<int, int> cmem;  // constant bank -> bytes, when ptxas reports it (older toolkits do)
};

// Keyed by the kernel's plain name (see demangle_kernel_name). Only entry
// functions count: a device function ptxas reports is not a kernel. Several
// entries with one plain name (template instantiations, overloads) merge into
// one, each number the largest of them, so a limit holds for all of them.
std::map<std::string, KernelResources> parse_ptxas_report(const std::string& text);

// One instruction as written: "ld.global.f32" and "%f1, [%rd4+8]".
struct PtxStatement {
  std::string opcode, operands;
};

// Where an instruction came from, as the PTX's .loc directives say (nvcc -lineinfo):
// a file of the module's .file table and a line in it, and for code inlined from
// another function, the line it was inlined at. 0: not known.
struct PtxLocation {
  int file = 0, line = 0;
  int inlined_at_file = 0, inlined_at_line = 0;
};

struct PtxKernel {
  std::string mangled, name;
  // Opcodes with their modifiers, e.g. "ld.shared.f32", "bar.sync",
  // "tex.2d.v4.f32.f32": the entry's own body, then those of the device
  // functions it calls that were not inlined, so that a __noinline__ helper
  // cannot hide a load from a check.
  std::vector<std::string> instructions;
  std::vector<PtxLocation> locations;  // one for each instruction
  // Each instruction's operands as written ("1" for cp.async.wait_group 1): a
  // class such as partial_wait depends on them. May be shorter than
  // `instructions` (a kernel made by hand in a test): missing ones read "".
  std::vector<std::string> operands;
  // Module-scope variables it (or a function it calls) names, as in PtxModule.
  std::vector<std::string> variables;
  // Module-scope .global arrays (__device__ arrays) it loads from or stores
  // to through an address made from the array's own: what it really reads or
  // writes there, not a name it only mentions, a counter it bumps with an
  // atomic, or a pointer kept in a __device__ variable.
  std::vector<std::string> accessed_global_variables;
  // Loads and stores (not shared, local, constant or parameter) whose address
  // comes from a pointer the kernel was handed or read from memory: with
  // accessed_global_variables, whether its data lives in __device__ arrays only.
  int pointer_accesses = 0;
  std::vector<PtxLocation> pointer_access_locations;  // where each came from
  bool uses_extern_shared = false;
};

struct PtxModule {
  std::map<std::string, PtxKernel> kernels;   // entries, by plain name (merged like ptxas')
  std::vector<std::string> entries;           // every entry's mangled name: what ncu calls a launch of it
  std::vector<std::string> global_variables;  // module-scope .global (a __device__ array)
  std::vector<std::string> const_variables;   // module-scope .const (__constant__)
  std::vector<std::string> extern_shared;     // .extern .shared declarations
  std::map<int, std::string> files;           // the .file table: index -> path as nvcc saw it
};

PtxModule parse_ptx(const std::string& text);

// Instruction classes a manifest may name: "ld.shared", "st.shared", "bar.sync",
// "ld.global.nc", "ld.const", "ld.local", "st.local", "tex" (the texture path:
// fetches, gathers and surface reads), "ld.global",
// "st.global", "atom", "red", "shfl", "ld.generic" and "st.generic" (through a
// generic pointer: the space is decided at run time, so a must-not list that
// forbids a space forbids these too), "shared" (any instruction that names
// shared memory, or an extern shared array), "pointer_access" (a load or store
// through a pointer the kernel was handed or read from memory), "cp.async" (an
// asynchronous copy of 4, 8 or 16 bytes from global into shared memory, the
// sm_80 kind), "cp.async.bulk" (a bulk copy from global into shared memory by
// the tensor memory accelerator, sm_90, the tensor form included), "mbarrier"
// (any mbarrier instruction), "partial_wait" (a wait for asynchronous copies
// that can leave the newest in flight), and the pseudo-class "extern_shared".
const std::vector<std::string>& known_instruction_classes();

// A class matches an opcode equal to it or extending it by '.' or '::'
// ("ld.shared" matches "ld.shared::cta.f32"), and any instruction that does the
// same to memory: "st.shared" an asynchronous copy into shared memory (cp.async,
// cp.async.bulk, cp.async.bulk.tensor), "ld.global" such a copy and an atomic on
// global memory, "ld.generic" an atomic through a generic pointer, "ld.shared"
// ldmatrix; ldu counts as ld. "ld.global" does not match
// ld.global.nc: the read-only path is the very thing lab05 asks for, so it is a
// class of its own. "bar.sync" also matches barrier.sync, the .cta forms and bar.red
// (__syncthreads_count, _and, _or), not bar.arrive. "cp.async" and "cp.async.bulk"
// are the copies alone, not the commits, waits and arrivals that share their
// prefix. "partial_wait" is cp.async.wait_group N with N >= 1 (every group but the
// N newest) or an mbarrier wait (mbarrier.test_wait, mbarrier.try_wait: one
// barrier's copies, as cuda::pipeline and bulk copies wait); cp.async.wait_all and
// cp.async.wait_group 0 wait for every copy.
// "extern_shared" is true when the kernel uses an .extern .shared array.
bool has_instruction(const PtxKernel& kernel, const std::string& instruction_class);
int count_instruction(const PtxKernel& kernel, const std::string& instruction_class);
// The lines of the file named `file_name` (its last path component: "kernel.cu")
// that instructions of the class came from ("pointer_access" too), ascending, each once: the line
// itself, or for code inlined from another file (a header's helper), the line
// of that file it was inlined at. Empty without -lineinfo's .loc directives.
std::vector<int> source_lines_of(const PtxModule& module, const PtxKernel& kernel, const std::string& instruction_class,
                                 const std::string& file_name);
// Every line of that file any of the kernel's instructions came from: where the
// kernel is, for a check that has no instruction of a class to point at (an empty
// kernel, a missing barrier with no shared memory either, a spill: ptxas' choice).
std::vector<int> kernel_lines_of(const PtxModule& module, const PtxKernel& kernel, const std::string& file_name);

// "_Z16transpose_kernelPfPKfi" -> "transpose_kernel"; namespaces stay
// ("ns::k"), template arguments go ("tile<32>" -> "tile"). Names that are not
// mangled (extern "C") come back unchanged.
std::string demangle_kernel_name(const std::string& mangled);

}  // namespace grader
