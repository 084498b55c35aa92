// lab03: unified (managed) memory. This is the file you edit.
#include <algorithm>
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
  // TODO(step 1): allocate `t.records` and `t.text` with cudaMallocManaged instead of new (~2 lines)
  t.records = new Record[count];
  t.text = new char[t.text_bytes];

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
  // TODO(step 1): delete this copy-in: the kernel can use the managed `t.records` and their `text` pointers as they are (~1 line)
  // The deep copy by hand. The GPU cannot follow host pointers, so copy the
  // text block to the device, then give the device its own copy of the records
  // with every `text` moved to the same offset in the device's text block.
  char* d_text = nullptr;
  Record* d_records = nullptr;
  CUDA_CHECK(cudaMalloc(&d_text, t.text_bytes));
  CUDA_CHECK(cudaMalloc(&d_records, t.count * sizeof(Record)));
  std::vector<Record> staged(t.records, t.records + t.count);
  for (Record& r : staged) r.text = d_text + (r.text - t.text);
  CUDA_CHECK(cudaMemcpyAsync(d_text, t.text, t.text_bytes, cudaMemcpyHostToDevice, stream));
  CUDA_CHECK(cudaMemcpyAsync(d_records, staged.data(), staged.size() * sizeof(Record),
                             cudaMemcpyHostToDevice, stream));
  Record* records = d_records;

  // TODO(step 2): prefetch `t.records` and `t.text` to this GPU on `stream`, so that the kernel finds them resident (~4 lines)

  launch_upcase(records, t.count, stream);

  // TODO(step 1): replace this copy-back with a wait for `stream`: the host may read the results only once the GPU is done (~1 line)
  CUDA_CHECK(cudaMemcpyAsync(t.text, d_text, t.text_bytes, cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaMemcpyAsync(staged.data(), d_records, staged.size() * sizeof(Record),
                             cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  // Only the counts come back into the host records: their `text` must stay host pointers.
  for (int i = 0; i < t.count; ++i) t.records[i].changed = staged[i].changed;
  CUDA_CHECK(cudaFree(d_records));
  CUDA_CHECK(cudaFree(d_text));
}

void destroy_table(Table& t) {
  // TODO(step 1): free `t.text` and `t.records` with cudaFree (~2 lines)
  delete[] t.text;
  delete[] t.records;

  t = Table{};
}
