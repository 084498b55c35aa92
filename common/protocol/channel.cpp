#include "channel.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "string_literals.hpp"

namespace memlabs {

bool nests_deeper_than(const std::string& text, int max_depth) {
  int depth = 0;
  for (const char c : without_string_contents(text)) {
    if (c == '[' || c == '{') {
      if (++depth > max_depth) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

Channel::~Channel() {
  if (fd_ >= 0) ::close(fd_);
}

Channel& Channel::operator=(Channel&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

void Channel::send(const nlohmann::json& body, const std::vector<int>& fds) const {
  const std::string text = body.dump();
  if (text.size() > kMaxMessageBytes) throw ChannelError("message too large to send");
  if (fds.size() > kMaxMessageFds) throw ChannelError("too many descriptors in one message");
  msghdr m{};
  iovec io{const_cast<char*>(text.data()), text.size()};
  m.msg_iov = &io;
  m.msg_iovlen = 1;
  std::vector<char> control(CMSG_SPACE(sizeof(int) * std::max<std::size_t>(fds.size(), 1)));
  if (!fds.empty()) {
    m.msg_control = control.data();
    m.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  for (;;) {
    if (::sendmsg(fd_, &m, MSG_NOSIGNAL) >= 0) return;
    if (errno == EINTR) continue;
    if (errno == EPIPE || errno == ECONNRESET || errno == ENOTCONN) throw ChannelClosed("the other process is gone");
    throw ChannelError(std::string("cannot send: ") + std::strerror(errno));
  }
}

// Long (about 70 lines) on purpose: poll, recvmsg and the descriptors that
// arrive with a message are one sequence, and a descriptor must be closed on
// every path that does not hand it on.
bool Channel::has_message() const {
  pollfd p{fd_, POLLIN, 0};
  int r;
  do r = ::poll(&p, 1, 0);
  while (r < 0 && errno == EINTR);
  if (r <= 0 || !(p.revents & POLLIN)) return false;
  char byte;
  ssize_t n;
  do n = ::recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  while (n < 0 && errno == EINTR);
  return n > 0;  // 0: the other end closed, which is no message
}

namespace {

// Until `fd` has something to read (true) or `timeout_s` has passed (false);
// a negative timeout waits for ever.
bool wait_readable(int fd, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    int wait_ms = -1;
    if (timeout_s >= 0) {
      const auto left = std::chrono::duration<double, std::milli>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) return false;
      wait_ms = static_cast<int>(left) + 1;
    }
    pollfd p{fd, POLLIN, 0};
    const int r = ::poll(&p, 1, wait_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw ChannelError(std::string("cannot wait for a message: ") + std::strerror(errno));
    if (r > 0) return true;  // r == 0: the deadline check above decides
  }
}

// The descriptors a received message carried: kept when `accept`, else closed at once.
std::vector<int> descriptors_in(msghdr& m, bool accept) {
  std::vector<int> kept;
  for (cmsghdr* c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    std::vector<int> got(count);
    std::memcpy(got.data(), CMSG_DATA(c), sizeof(int) * count);
    for (int fd : got) {
      if (accept)
        kept.push_back(fd);
      else
        ::close(fd);
    }
  }
  return kept;
}

}  // namespace

std::optional<Message> Channel::receive(double timeout_s, bool accept_fds) const {
  if (!wait_readable(fd_, timeout_s)) return std::nullopt;
  std::string buffer(kMaxMessageBytes + 1, '\0');
  msghdr m{};
  iovec io{buffer.data(), buffer.size()};
  m.msg_iov = &io;
  m.msg_iovlen = 1;
  std::vector<char> control(CMSG_SPACE(sizeof(int) * kMaxMessageFds));
  m.msg_control = control.data();
  m.msg_controllen = control.size();
  ssize_t n;
  do n = ::recvmsg(fd_, &m, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  Message out;
  out.fds = descriptors_in(m, accept_fds);
  const auto close_fds = [&] {
    for (int fd : out.fds) ::close(fd);
    out.fds.clear();
  };
  if (n == 0) throw ChannelClosed("the other process closed its socket");
  if (n < 0) {
    close_fds();
    if (errno == ECONNRESET) throw ChannelClosed("the other process is gone");
    throw ChannelError(std::string("cannot receive: ") + std::strerror(errno));
  }
  if ((m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || static_cast<std::size_t>(n) > kMaxMessageBytes) {
    close_fds();
    throw ChannelError("a message was larger than the protocol allows");
  }
  buffer.resize(static_cast<std::size_t>(n));
  if (nests_deeper_than(buffer, kMaxMessageDepth)) {
    close_fds();
    throw ChannelError("a message nests deeper than the protocol allows");
  }
  try {
    out.body = nlohmann::json::parse(buffer);
  } catch (const std::exception&) {
    close_fds();
    throw ChannelError("a message was not JSON");
  }
  if (!out.body.is_object()) {
    close_fds();
    throw ChannelError("a message was not a JSON object");
  }
  return out;
}

std::pair<Channel, Channel> channel_pair() {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
    throw ChannelError(std::string("cannot create a socket pair: ") + std::strerror(errno));
  return {Channel(sv[0]), Channel(sv[1])};
}

}  // namespace memlabs
