// One socket between the referee and a process it serves with: whole JSON
// messages (SOCK_SEQPACKET keeps their boundaries) that may carry file
// descriptors (SCM_RIGHTS), which is how device buffers are handed over.
//
// The referee reads what a submission's process sends as hostile data: every
// message is size- and depth-limited before it is parsed, and descriptors that
// arrive from that side are closed unread. Host-only: unit-tested on the CPU.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace memlabs {

inline constexpr std::size_t kMaxMessageBytes = 64 * 1024;
inline constexpr int kMaxMessageDepth = 16;
inline constexpr std::size_t kMaxMessageFds = 64;

// The other end has gone (exited, crashed, or closed its socket).
class ChannelClosed : public std::runtime_error {
  using std::runtime_error::runtime_error;
};
// A message that is not what the protocol allows: too large, too deep, not JSON.
class ChannelError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Message {
  nlohmann::json body;
  std::vector<int> fds;  // owned by the receiver
};

// Whether `text` nests arrays and objects deeper than max_depth (outside strings).
bool nests_deeper_than(const std::string& text, int max_depth);

class Channel {
 public:
  Channel() = default;
  explicit Channel(int fd) : fd_(fd) {}  // takes ownership
  ~Channel();
  Channel(Channel&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Channel& operator=(Channel&& other) noexcept;
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  int fd() const { return fd_; }
  // Throws ChannelClosed when the peer is gone.
  void send(const nlohmann::json& body, const std::vector<int>& fds = {}) const;
  // Waits up to timeout_s (< 0: no limit); nullopt when it passed. With
  // accept_fds false, descriptors that come along are closed.
  std::optional<Message> receive(double timeout_s, bool accept_fds = true) const;
  // Whether a message is waiting to be read now (without reading it, or waiting).
  bool has_message() const;

 private:
  int fd_ = -1;
};

// A connected pair (close-on-exec on both ends).
std::pair<Channel, Channel> channel_pair();

}  // namespace memlabs
