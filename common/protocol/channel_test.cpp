#include "channel.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace memlabs {
namespace {

TEST(Channel, CarriesWholeMessagesAndDescriptors) {
  auto [a, b] = channel_pair();
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  a.send({{"op", "open"}, {"set", 3}}, {p[1]});
  ::close(p[1]);
  a.send({{"op", "run"}});
  auto m = b.receive(1.0);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->body["op"], "open");
  ASSERT_EQ(m->fds.size(), 1u);
  // The descriptor is the same pipe: what is written through it arrives at p[0].
  ASSERT_EQ(::write(m->fds[0], "x", 1), 1);
  char c = 0;
  ASSERT_EQ(::read(p[0], &c, 1), 1);
  EXPECT_EQ(c, 'x');
  ::close(m->fds[0]);
  ::close(p[0]);
  auto second = b.receive(1.0);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->body["op"], "run");
  EXPECT_TRUE(second->fds.empty());
}

TEST(Channel, SaysWhetherAMessageIsWaitingWithoutReadingIt) {
  auto [a, b] = channel_pair();
  EXPECT_FALSE(b.has_message());
  a.send({{"ok", true}});
  EXPECT_TRUE(b.has_message());
  EXPECT_TRUE(b.has_message());  // still there: only looked at
  ASSERT_TRUE(b.receive(1).has_value());
  EXPECT_FALSE(b.has_message());
}

TEST(Channel, AClosedPeerIsNoMessage) {
  auto [a, b] = channel_pair();
  { auto gone = std::move(a); }
  EXPECT_FALSE(b.has_message());
}

TEST(Channel, TimesOutWhenNothingComes) {
  auto [a, b] = channel_pair();
  EXPECT_FALSE(b.receive(0.05));
}

TEST(Channel, SaysWhenThePeerIsGone) {
  auto [a, b] = channel_pair();
  { Channel gone = std::move(a); }
  EXPECT_THROW(b.receive(1.0), ChannelClosed);
  EXPECT_THROW(b.send({{"op", "x"}}), ChannelClosed);
}

// What the submission's side can send is hostile data.
TEST(Channel, RefusesDescriptorsWhenTheyAreNotWanted) {
  auto [a, b] = channel_pair();
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  a.send({{"ok", true}}, {p[0], p[1]});
  auto m = b.receive(1.0, /*accept_fds=*/false);
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->fds.empty());
  ::close(p[0]);
  ::close(p[1]);
}

TEST(Channel, RejectsNonJsonTooDeepAndTooLarge) {
  auto [a, b] = channel_pair();
  const auto raw = [&](const std::string& text) { ASSERT_GE(::send(a.fd(), text.data(), text.size(), 0), 0); };
  raw("not json");
  EXPECT_THROW(b.receive(1.0), ChannelError);
  raw(std::string(100, '[') + std::string(100, ']'));
  EXPECT_THROW(b.receive(1.0), ChannelError);
  raw("[1, 2]");
  EXPECT_THROW(b.receive(1.0), ChannelError) << "a message is an object";
  int size = 1 << 20;
  ::setsockopt(a.fd(), SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
  raw("{\"a\": \"" + std::string(kMaxMessageBytes + 10, 'x') + "\"}");
  EXPECT_THROW(b.receive(1.0), ChannelError);
  raw("{\"ok\": true}");
  EXPECT_NO_THROW(b.receive(1.0)) << "the channel is still usable after a bad message";
}

TEST(Channel, DepthIsCountedOutsideStringsOnly) {
  EXPECT_FALSE(nests_deeper_than("{\"a\": \"[[[[[[[[[[[[[[[[[[[[\"}", 2));
  EXPECT_TRUE(nests_deeper_than("{\"a\": [[[1]]]}", 3));
  EXPECT_FALSE(nests_deeper_than("{\"a\": [[1]]}", 3));
  EXPECT_FALSE(nests_deeper_than("{\"a\": \"\\\"[[[[\"}", 2));
}

}  // namespace
}  // namespace memlabs
