// attack: the right, padded transpose, timed dishonestly: it interposes recvmsg and sendmsg (defined here, they come
// attack: before libc's) to read each request's id, waits for half of a timed request's launches, answers the request
// attack: itself with the right id while the other half still runs, and swallows the reply the program sends after
// attack: its own wait; every timed request then ends about halfway through its work
// expect: step 2 fails: speedup (early_reply)
// message: answered before its GPU work was done
#include <dlfcn.h>
#include <sys/socket.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "lab.cuh"

// Each block covers one TILE_DIM x TILE_DIM tile of `in` with TILE_DIM x BLOCK_ROWS
// threads; each thread handles TILE_DIM / BLOCK_ROWS elements, BLOCK_ROWS rows apart.
__global__ void transpose_kernel(float* out, const float* in, int rows, int cols) {
  // One extra column shifts each row by one bank, so tile[0..31][c] are in 32 different banks.
  __shared__ float tile[TILE_DIM][TILE_DIM + 1];
  // Load: consecutive threadIdx.x read consecutive columns of one row of `in`.
  int col = blockIdx.x * TILE_DIM + threadIdx.x;
  int row = blockIdx.y * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    if (row + j < rows && col < cols)
      tile[threadIdx.y + j][threadIdx.x] = in[static_cast<size_t>(row + j) * cols + col];
  __syncthreads();  // the whole tile must be loaded before anyone reads a column of it
  // Store: the tile goes to the mirrored block position; consecutive threadIdx.x
  // write consecutive columns of one row of `out`, reading a column of `tile`.
  col = blockIdx.y * TILE_DIM + threadIdx.x;
  row = blockIdx.x * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    if (row + j < cols && col < rows)
      out[static_cast<size_t>(row + j) * rows + col] = tile[threadIdx.x][threadIdx.y + j];
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
  const dim3 block(TILE_DIM, BLOCK_ROWS);
  const dim3 grid((cols + TILE_DIM - 1) / TILE_DIM, (rows + TILE_DIM - 1) / TILE_DIM);
  transpose_kernel<<<grid, block, 0, stream>>>(out, in, rows, cols);
  const bool timed = static_cast<long long>(rows) * cols >= (64ll << 20);
  if (!timed || last_request.find("\"op\":\"run\"") == std::string::npos) return;
  const int sets = sets_in_request(), launch = ++launches_in_request;
  if (launch == (sets + 1) / 2) cudaStreamSynchronize(stream);  // half the work done, honestly
  if (launch == sets && sets > 1) {                              // the rest still running: answer now
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
}
