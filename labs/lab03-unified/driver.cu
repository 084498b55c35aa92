// lab03 problem definition: cases, the host's side of the pipeline, the
// fault-driven managed baseline, the facts about the student's pointers, oracle.
//
// One run is the whole pipeline an application would have: the host writes
// every record, the GPU upper-cases them, the host reads every result. The
// student owns the middle (process_table) and the table's memory
// (create_table, destroy_table); the driver owns both ends, the same for the
// baseline and for the student.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "lab.cuh"
#include "lab_api.cuh"
#include "memory_type.cuh"

namespace {

using memlabs::memory_type;

// Texts are drawn from 64 characters, 26 of them lowercase, so about 40 % of
// the characters change.
constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .";
static_assert(sizeof(kAlphabet) == 65, "64 characters and the terminator");

// Record i's text is corpus[offset_i .. offset_i + length_i), with offset_i <
// kMaxOffset: the corpus is small enough to stay in the CPU's caches, so
// writing a text costs the host a store per byte and nothing more.
constexpr int kMaxOffset = 4096;
constexpr std::uint64_t kLengthSalt = 0x1e4917a5ull, kOffsetSalt = 0x0ff5e7ull,
                        kCorpusSalt = 0xc0a905ull;

// The biggest text block a case may have, and what must stay free beyond a
// table for everything else the process holds.
constexpr std::size_t kMaxTextBytes = std::size_t(256) << 20;
constexpr std::size_t kHeadroomBytes = std::size_t(256) << 20;

struct CaseSpec {
  const char* name;
  const char* description;
  int count;       // records
  int max_length;  // lengths are uniform in [1, max_length]
};

const CaseSpec kCases[] = {
    {"1x1", "one record of one character", 1, 1},
    {"3x1000", "3 records of 1 to 1000 characters", 3, 1000},
    {"1001x77", "1001 records of 1 to 77 characters: many records, most of them sharing a page", 1001, 77},
    {"33x9001", "33 records of 1 to 9001 characters: texts that cross page boundaries", 33, 9001},
    {"3800x131072", "3800 records of 1 to 131072 characters (about 240 MiB of text): the timing size", 3800,
     131072},
};

// The baseline: the same kernel as the skeleton's, launched on managed memory
// with no prefetch, so every page it touches arrives by a GPU page fault.
__global__ void upcase_baseline(Record* records, int count) {
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
    __syncthreads();
    if (threadIdx.x == 0) records[r].changed = block_changed;
  }
}

// Position-weighted, so a character changed anywhere changes the digest, and
// simple enough for the compiler to vectorise: the host's read of the results
// should cost memory bandwidth, not arithmetic.
std::uint32_t digest(const char* text, int length) {
  std::uint32_t sum = 0;
  for (int j = 0; j < length; ++j)
    sum += static_cast<std::uint32_t>(static_cast<unsigned char>(text[j])) * static_cast<std::uint32_t>(j + 1);
  return sum;
}

// The host's loops over the records run on several threads. On one thread,
// writing and reading a few hundred MiB takes longer than moving them over
// PCIe, and the timing would measure the CPU's loops instead of how the data
// migrates. Each thread takes a contiguous run of records.
template <class Work>
void for_records(int count, std::size_t bytes, const Work& work) {
  const std::size_t hardware = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t by_size = bytes / (std::size_t(1) << 20) + 1;  // 1 thread per MiB: small cases stay serial
  const int threads = static_cast<int>(std::min({std::size_t(8), hardware, by_size, std::size_t(count)}));
  if (threads <= 1) {
    work(0, count);
    return;
  }
  std::vector<std::thread> pool;
  for (int k = 0; k < threads; ++k) {
    const int begin = static_cast<int>(std::int64_t(count) * k / threads);
    const int end = static_cast<int>(std::int64_t(count) * (k + 1) / threads);
    pool.emplace_back([&work, begin, end] { work(begin, end); });
  }
  for (auto& t : pool) t.join();
}

std::string describe(const void* p) {
  if (p == nullptr) return "a null pointer";
  switch (memory_type(p)) {
    case cudaMemoryTypeManaged: return "managed memory";
    case cudaMemoryTypeDevice: return "device memory (cudaMalloc), which the host cannot read or write";
    case cudaMemoryTypeHost: return "pinned host memory (cudaMallocHost), not managed memory";
    default: return "ordinary host memory (new, malloc or the stack), not managed memory";
  }
}

// Still a CUDA allocation: what destroy_table should have freed.
bool still_allocated(const void* p) {
  const int t = memory_type(p);
  return t == cudaMemoryTypeManaged || t == cudaMemoryTypeDevice || t == cudaMemoryTypeHost;
}

// The host may write through `p` only if it is not device memory.
bool host_can_touch(const void* p) { return p != nullptr && memory_type(p) != cudaMemoryTypeDevice; }

struct CudaFree {
  void operator()(void* p) const { cudaFree(p); }
};
template <class T>
using Managed = std::unique_ptr<T, CudaFree>;

template <class T>
Managed<T> allocate_managed(std::size_t count) {
  T* p = nullptr;
  CUDA_CHECK(cudaMallocManaged(&p, count * sizeof(T)));
  return Managed<T>(p);
}

class Pipeline : public memlabs::Problem {
 public:
  explicit Pipeline(const CaseSpec& spec)
      : count_(spec.count), max_length_(spec.max_length), name_(spec.name), host_changed_(spec.count),
        host_digest_(spec.count),
        changed_("changed", spec.count, {spec.count}, memlabs::Tolerance{0, 0}),
        digest_("digest", spec.count, {spec.count}, memlabs::Tolerance{0, 0}) {}

  ~Pipeline() override { release_table(); }

  // Every input is host data (lengths and texts), made in each process from the seed.
  void fill(std::uint64_t, std::uint64_t host_seed) override { host_inputs(host_seed); }

  void host_inputs(std::uint64_t seed) override {
    lengths_.assign(count_, 0);
    offsets_.assign(count_, 0);
    corpus_.assign(std::size_t(max_length_) + kMaxOffset, 0);
    text_bytes_ = 0;
    for (int i = 0; i < count_; ++i) {
      lengths_[i] = 1 + static_cast<int>(memlabs::uint_at(seed ^ kLengthSalt, i) % std::uint32_t(max_length_));
      offsets_[i] = static_cast<int>(memlabs::uint_at(seed ^ kOffsetSalt, i) % kMaxOffset);
      text_bytes_ += lengths_[i];
    }
    for (std::size_t k = 0; k < corpus_.size(); ++k) corpus_[k] = kAlphabet[memlabs::uint_at(seed ^ kCorpusSalt, k) & 63];
    if (text_bytes_ > kMaxTextBytes) throw std::logic_error("case " + name_ + " has too much text");
    base_ready_ = false;  // the baseline's table is made again for the new lengths when it runs
    // The student's table, in the submission's program: made anew for the new lengths.
    CANDIDATE_ONLY(make_student_table());
  }

  // What is timed is the GPU side of the pipeline: getting the host's data to
  // the GPU and processing it. The host writing the inputs (prepare) and
  // reading the results (finish) happen outside the timed region, so the
  // numbers show the cost of moving the data, not of the host's loops.
  bool host_steps() const override { return true; }

  // Both processes' tables move by page faults, serviced by one driver: on an
  // H100 an honest program beside the baseline slowed it by up to 11 % and
  // put the A/A ratio at 0.93, where the other labs stay within 5 %. Past
  // 10 % the speedup is taken against the baseline alone, so a program that
  // slows the baseline gains no more here than in any other lab.
  double interference_limit() const override { return 1.25; }

  void prepare(memlabs::Variant v) override {
    if (v == memlabs::Variant::baseline) {
      make_base_table();
      write_records(base_records_.get());
    } else if (host_ok_) {
      write_records(table_.records);
    }
  }

  void run(memlabs::Variant v, cudaStream_t s) override {
    if (v == memlabs::Variant::baseline) {
      make_base_table();
      // Fault-driven: every page the kernel touches arrives by a GPU page fault.
      const int blocks = std::min(count_, 4096);
      upcase_baseline<<<blocks, 256, 0, s>>>(base_records_.get(), count_);
      CUDA_CHECK_LAUNCH();
      CUDA_CHECK(cudaStreamSynchronize(s));
    } else if (host_ok_) {
      // No synchronisation after it on purpose: process_table promises that the
      // results are ready when it returns.
      CANDIDATE_ONLY(process_table(table_, s));
    }
  }

  void finish(memlabs::Variant v, cudaStream_t s) override {
    if (v == memlabs::Variant::baseline) read_records(base_records_.get());
    else if (host_ok_) read_records(table_.records);
    else return;  // nothing computed: the outputs stay unwritten, the facts say why
    CUDA_CHECK(cudaMemcpyAsync(changed_.data(), host_changed_.data(), count_ * sizeof(std::int32_t),
                               cudaMemcpyHostToDevice, s));
    CUDA_CHECK(cudaMemcpyAsync(digest_.data(), host_digest_.data(), count_ * sizeof(std::uint32_t),
                               cudaMemcpyHostToDevice, s));
  }

  std::vector<memlabs::Output*> outputs() override { return {&changed_, &digest_}; }

  // The bytes that must cross the host link in the timed region: every record
  // and every text to the GPU.
  double bytes_moved() const override { return double(text_bytes_) + double(count_) * sizeof(Record); }

  std::vector<std::vector<double>> oracle() const override {
    std::vector<double> changed(count_), digests(count_);
    for (int i = 0; i < count_; ++i) {
      int lower = 0;
      std::uint32_t sum = 0;
      for (int j = 0; j < lengths_[i]; ++j) {
        char c = corpus_[std::size_t(offsets_[i]) + j];
        if (c >= 'a' && c <= 'z') {
          ++lower;
          c = static_cast<char>(c - 'a' + 'A');
        }
        sum += std::uint32_t(static_cast<unsigned char>(c)) * std::uint32_t(j + 1);
      }
      changed[i] = lower;
      digests[i] = sum;
    }
    return {changed, digests};
  }

  // Called once, after the candidate's run: checks the pointers, then calls
  // destroy_table and checks that it freed them.
  std::vector<memlabs::Fact> facts() override {
    std::vector<memlabs::Fact> f;
    const bool records_readable = host_can_touch(table_.records);

    memlabs::Fact records{"records_managed", memory_type(table_.records) == cudaMemoryTypeManaged, ""};
    records.detail = "the record array is " + describe(table_.records);
    f.push_back(records);

    memlabs::Fact texts{"texts_managed", false, ""};
    std::vector<const void*> pointers = {table_.records};
    if (!records_readable) {
      texts.detail = "the texts cannot be checked: the record array itself is not readable on the host";
    } else {
      int bad = 0, first_bad = -1;
      for (int i = 0; i < count_; ++i) {
        const char* p = table_.records[i].text;
        pointers.push_back(p);
        if (memory_type(p) != cudaMemoryTypeManaged && bad++ == 0) first_bad = i;
      }
      texts.ok = bad == 0;
      texts.detail = bad == 0 ? "all " + std::to_string(count_) + " texts are managed memory"
                              : std::to_string(bad) + " of " + std::to_string(count_) + " texts are not managed: record " +
                                    std::to_string(first_bad) + "'s text is " +
                                    describe(table_.records[first_bad].text);
    }
    f.push_back(texts);

    memlabs::Fact freed{"freed", false, ""};
    destroyed_ = true;
    try {
      CANDIDATE_ONLY(destroy_table(table_));
      int left = 0, first_left = -1;
      for (std::size_t k = 0; k < pointers.size(); ++k)
        if (still_allocated(pointers[k]) && left++ == 0) first_left = static_cast<int>(k);
      freed.ok = left == 0;
      freed.detail = left == 0 ? "destroy_table freed the records and every text"
                     : first_left == 0
                         ? "the record array is still allocated after destroy_table"
                         : std::to_string(left) + " of " + std::to_string(pointers.size() - 1) +
                               " texts are still allocated after destroy_table, record " +
                               std::to_string(first_left - 1) + "'s first";
    } catch (const std::exception& e) {
      freed.detail = std::string("destroy_table failed: ") + e.what();
    }
    f.push_back(freed);
    return f;
  }

 private:
  // The host produces the input: every record's length, a fresh `changed`
  // (so a kernel that never ran shows), and its text.
  void write_records(Record* records) {
    for_records(count_, text_bytes_, [&](int begin, int end) {
      for (int i = begin; i < end; ++i) {
        records[i].length = lengths_[i];
        records[i].changed = -1;
        std::memcpy(records[i].text, corpus_.data() + offsets_[i], std::size_t(lengths_[i]));
      }
    });
  }

  // The host consumes the output: every count, and every byte of every text.
  void read_records(const Record* records) {
    for_records(count_, text_bytes_, [&](int begin, int end) {
      for (int i = begin; i < end; ++i) {
        host_changed_[i] = records[i].changed;
        host_digest_[i] = digest(records[i].text, lengths_[i]);
      }
    });
  }

  // Managed memory can oversubscribe the GPU, but then it thrashes: a table
  // is made only when it fits, with room to spare for everything else.
  void check_room(const char* whose) const {
    const std::size_t table_bytes = text_bytes_ + count_ * sizeof(Record);
    std::size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (free_bytes < table_bytes + kHeadroomBytes)
      throw std::runtime_error("not enough free GPU memory for " + std::string(whose) + " of case " + name_ + ": " +
                               std::to_string((table_bytes + kHeadroomBytes) >> 20) + " MiB needed, " +
                               std::to_string(free_bytes >> 20) + " MiB free");
  }

  void make_student_table() {
    release_table();
    check_room("the table");
    CANDIDATE_ONLY(table_ = create_table(lengths_.data(), count_));
    created_ = true;
    destroyed_ = false;
    // The driver writes and reads the table from the host, so it must be
    // memory the host can touch; device memory is reported by the facts
    // instead of crashing the host.
    host_ok_ = host_can_touch(table_.records);
    for (int i = 0; host_ok_ && i < count_; ++i) host_ok_ = host_can_touch(table_.records[i].text);
  }

  void release_table() {
    if (!created_ || destroyed_) return;
    destroyed_ = true;
    try {  // a destructor must not throw; the facts report a failing destroy_table
      CANDIDATE_ONLY(destroy_table(table_));
    } catch (...) {
    }
  }

  // The baseline's own table, in the process that runs the baseline, for the current lengths.
  void make_base_table() {
    if (base_ready_) return;
    base_records_.reset();
    base_text_.reset();
    check_room("the baseline's table");
    base_records_ = allocate_managed<Record>(count_);
    base_text_ = allocate_managed<char>(text_bytes_);
    std::size_t offset = 0;
    for (int i = 0; i < count_; ++i) {
      base_records_.get()[i].text = base_text_.get() + offset;
      offset += lengths_[i];
    }
    base_ready_ = true;
  }

  int count_, max_length_;
  std::string name_;
  std::vector<int> lengths_, offsets_;
  std::vector<char> corpus_;
  std::size_t text_bytes_ = 0;
  std::vector<std::int32_t> host_changed_;
  std::vector<std::uint32_t> host_digest_;
  memlabs::OutputBuffer<std::int32_t> changed_;
  memlabs::OutputBuffer<std::uint32_t> digest_;
  Managed<Record> base_records_;
  Managed<char> base_text_;
  Table table_;
  bool host_ok_ = false, created_ = false, destroyed_ = false, base_ready_ = false;
};

std::unique_ptr<memlabs::Problem> make(const std::string& name) {
  for (const auto& c : kCases)
    if (name == c.name) return std::make_unique<Pipeline>(c);
  throw std::invalid_argument("unknown case " + name);
}

}  // namespace

memlabs::LabDefinition memlabs::define_lab() {
  memlabs::LabDefinition lab;
  for (const auto& c : kCases) lab.cases.push_back({c.name, c.description});
  lab.make = make;
  return lab;
}
