// attack: a padded transpose one element a thread (32 x 32 threads), honest but short of step 4 (about 0.59 of
// attack: memcpy on an H100, where 0.7 is asked), timed dishonestly: it interposes recvmsg and sendmsg (defined
// attack: here, they come before libc's) to read each request's id; in a timed request it waits for every launch but
// attack: the last, measuring how long one takes, then answers the request itself 60 % into the last launch and
// attack: swallows the reply the program sends after its own wait. Each timed request then ends early by 40 % of a
// attack: launch: about 1.25x the speed it has, over 0.7 of memcpy and still under the copy's bandwidth. The slot
// attack: must end where the referee sees the outputs written: either its probe waits for the last launch (the
// attack: honest time, short of 0.7) or it finds poison left (early_reply)
// expect: step 4 fails: fraction_of_peak
// message: 8192x8192
#include <dlfcn.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "lab.cuh"

// Each block covers one 32 x 32 tile with 32 x 32 threads, one element each.
__global__ void transpose_kernel(float* out, const float* in, int rows, int cols) {
  // One extra column shifts each row by one bank: no conflicts when a column is read.
  __shared__ float tile[TILE_DIM][TILE_DIM + 1];
  int col = blockIdx.x * TILE_DIM + threadIdx.x;
  int row = blockIdx.y * TILE_DIM + threadIdx.y;
  if (row < rows && col < cols) tile[threadIdx.y][threadIdx.x] = in[static_cast<size_t>(row) * cols + col];
  __syncthreads();
  col = blockIdx.y * TILE_DIM + threadIdx.x;
  row = blockIdx.x * TILE_DIM + threadIdx.y;
  if (row < cols && col < rows) out[static_cast<size_t>(row) * rows + col] = tile[threadIdx.x][threadIdx.y];
}

namespace {

std::string last_request;      // the text of the request being served
int launches_in_request = 0;   // launches so far in it
bool swallow_next_reply = false;

// The number after "key": in the request's JSON (ids are 64-bit unsigned), or 0.
unsigned long long number_after(const std::string& key) {
  const auto at = last_request.find("\"" + key + "\":");
  if (at == std::string::npos) return 0;
  return std::strtoull(last_request.c_str() + at + key.size() + 3, nullptr, 10);
}

int sets_in_request() {
  const auto at = last_request.find("\"sets\":[");
  if (at == std::string::npos) return 0;
  const auto end = last_request.find(']', at);
  int n = 1;
  for (auto k = at; k < end; ++k) n += last_request[k] == ',';
  return n;
}

}  // namespace

extern "C" ssize_t recvmsg(int fd, struct msghdr* m, int flags) {
  using Real = ssize_t (*)(int, struct msghdr*, int);
  static const Real real = reinterpret_cast<Real>(dlsym(RTLD_NEXT, "recvmsg"));
  const ssize_t n = real(fd, m, flags);
  if (fd == 3 && n > 0 && m->msg_iovlen > 0) {
    last_request.assign(static_cast<const char*>(m->msg_iov[0].iov_base), static_cast<size_t>(n));
    launches_in_request = 0;
  }
  return n;
}

extern "C" ssize_t sendmsg(int fd, const struct msghdr* m, int flags) {
  using Real = ssize_t (*)(int, const struct msghdr*, int);
  static const Real real = reinterpret_cast<Real>(dlsym(RTLD_NEXT, "sendmsg"));
  if (fd == 3 && swallow_next_reply) {  // the program's own reply, after its wait: already answered
    swallow_next_reply = false;
    size_t bytes = 0;
    for (size_t i = 0; i < m->msg_iovlen; ++i) bytes += m->msg_iov[i].iov_len;
    return static_cast<ssize_t>(bytes);
  }
  return real(fd, m, flags);
}

void launch_transpose(float* out, const float* in, int rows, int cols, cudaStream_t stream) {
  const dim3 block(TILE_DIM, TILE_DIM);
  const dim3 grid((cols + TILE_DIM - 1) / TILE_DIM, (rows + TILE_DIM - 1) / TILE_DIM);
  const auto start = std::chrono::steady_clock::now();
  transpose_kernel<<<grid, block, 0, stream>>>(out, in, rows, cols);
  const bool timed = static_cast<long long>(rows) * cols >= (64ll << 20);
  if (!timed || last_request.find("\"op\":\"run\"") == std::string::npos) return;
  const int sets = sets_in_request(), launch = ++launches_in_request;
  static double one_launch_s = 0;  // measured on every launch but the last
  if (launch < sets) {
    cudaStreamSynchronize(stream);
    one_launch_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return;
  }
  if (one_launch_s <= 0) return;
  std::this_thread::sleep_for(std::chrono::duration<double>(0.6 * one_launch_s));  // 40 % of the last one left
  const std::string reply = "{\"id\":" + std::to_string(number_after("id")) + ",\"ok\":true}";
  using Real = ssize_t (*)(int, const struct msghdr*, int);
  static const Real real = reinterpret_cast<Real>(dlsym(RTLD_NEXT, "sendmsg"));
  iovec io{const_cast<char*>(reply.data()), reply.size()};
  msghdr msg{};
  msg.msg_iov = &io;
  msg.msg_iovlen = 1;
  real(3, &msg, MSG_NOSIGNAL);
  swallow_next_reply = true;
}
