// Where device buffers come from. The referee (trusted) owns every input and
// output a submission touches; the submission's process (the worker) only maps
// the ones it is handed, each as a file descriptor sent over its socket. An fd
// is a capability: the worker can reach exactly the allocations it received,
// in any pid or user namespace, and nothing else of the referee's.
//
// DeviceBuffer asks this module for memory, so a driver's Problem is written
// once and works in all three roles:
//   local      plain cudaMalloc (tools' standalone runs, unit tests)
//   exporting  the referee: each allocation is exportable and remembered, in order
//   importing  a server: each allocation maps the next descriptor it was sent
#pragma once

#include <cstddef>
#include <exception>
#include <vector>

namespace memlabs {

enum class MemoryRole { local, exporting, importing };

// One exported allocation: the descriptor to send and the size the importer must ask for.
struct SharedAllocation {
  int fd = -1;
  std::size_t bytes = 0;
};

// Thrown when an importing process asks for memory it was not sent, or of
// another size: the two processes built different problems.
class SharedMemoryMismatch : public std::exception {
 public:
  explicit SharedMemoryMismatch(const char* what) : what_(what) {}
  const char* what() const noexcept override { return what_; }

 private:
  const char* what_;
};

MemoryRole memory_role();

// While alive, allocations are exported; take() hands over their descriptors
// in allocation order (the caller closes them once sent).
class ExportScope {
 public:
  ExportScope();
  ~ExportScope();
  ExportScope(const ExportScope&) = delete;
  ExportScope& operator=(const ExportScope&) = delete;
  std::vector<SharedAllocation> take();

 private:
  MemoryRole previous_;
};

// While alive, allocations map `allocations` in order; done() says whether
// every one was used (a problem built differently uses fewer or more).
class ImportScope {
 public:
  explicit ImportScope(std::vector<SharedAllocation> allocations);
  ~ImportScope();  // closes descriptors left unused
  ImportScope(const ImportScope&) = delete;
  ImportScope& operator=(const ImportScope&) = delete;
  bool done() const;

 private:
  MemoryRole previous_;
};

// Used by DeviceBuffer: memory for `bytes` in the current role, and its release.
// An exported or imported buffer lies between two guard zones filled with 0xFF
// bytes (NaN as float or double); a cudaMalloc'd one has none.
void* device_allocate(std::size_t bytes);
void device_release(void* p) noexcept;

// False when something wrote into the guard zone before or after the exported
// or imported buffer that starts at `data`; true for any other pointer.
bool guard_zones_intact(const void* data);

}  // namespace memlabs
