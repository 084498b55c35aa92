// fault: create_table prints the table's size and calls exit(0), left over from checking the layout: the program ends before any case reports a result
// expect: step 1 fails: api (no_result)
// message: your program ended (exited with code 0)
// message: before it finished: does the code call exit()
// lab03: unified (managed) memory. This is the file you edit.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "lab.cuh"

// One block per record, striding over the records; the block's threads walk
// the record's text together, so neighbouring threads touch neighbouring bytes.
// The kernel only follows the pointers it is given: whether they are valid on
// the GPU is up to the code that calls it.
__global__ void upcase_kernel(Record* records, int count) {
  __shared__ int block_changed;
  for (int r = blockIdx.x; r < count; r += gridDim.x) {
    char* const text = records[r].text;
    const int length = records[r].length;
    if (threadIdx.x == 0) block_changed = 0;
    __syncthreads();
    int changed = 0;
    for (int j = threadIdx.x; j < length; j += blockDim.x) {
      const char c = text[j];
      if (c >= 'a' && c <= 'z') {
        text[j] = static_cast<char>(c - 'a' + 'A');
        ++changed;
      }
    }
    atomicAdd(&block_changed, changed);
    __syncthreads();  // every thread's count is in before thread 0 reads the sum
    if (threadIdx.x == 0) records[r].changed = block_changed;
  }
}

namespace {
void launch_upcase(Record* records, int count, cudaStream_t stream) {
  const int blocks = std::min(count, 4096);
  upcase_kernel<<<blocks, 256, 0, stream>>>(records, count);
  CUDA_CHECK_LAUNCH();
}
}  // namespace

Table create_table(const int* lengths, int count) {
  Table t;
  t.count = count;
  for (int i = 0; i < count; ++i) t.text_bytes += lengths[i];
  std::printf("create_table: %d records, %zu bytes of text\n", count, t.text_bytes);
  std::exit(0);  // stop here while checking the sizes
  // One address for both sides: the pointers stored in the records work on the GPU too.
  CUDA_CHECK(cudaMallocManaged(&t.records, count * sizeof(Record)));
  CUDA_CHECK(cudaMallocManaged(&t.text, t.text_bytes));

  // Every text is a slice of the one block, so the whole table is two allocations.
  std::size_t offset = 0;
  for (int i = 0; i < count; ++i) {
    t.records[i].text = t.text + offset;
    t.records[i].length = lengths[i];
    t.records[i].changed = 0;
    offset += lengths[i];
  }
  return t;
}

void process_table(Table& t, cudaStream_t stream) {
  // Managed pointers need no device copy and no fix-up: the kernel follows them as they are.
  Record* records = t.records;

  // Bulk migrations, one per range, instead of one GPU page fault after another.
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(memlabs::prefetch_to_device(t.records, t.count * sizeof(Record), device, stream));
  CUDA_CHECK(memlabs::prefetch_to_device(t.text, t.text_bytes, device, stream));

  launch_upcase(records, t.count, stream);

  // The host must not read the results before the kernel and the prefetches are done.
  CUDA_CHECK(cudaStreamSynchronize(stream));
}

void destroy_table(Table& t) {
  CUDA_CHECK(cudaFree(t.text));
  CUDA_CHECK(cudaFree(t.records));

  t = Table{};
}
