#include "file_watcher.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <thread>

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using grader::FileWatcher;

namespace {

void write(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

// Each case runs with inotify and with polling (short intervals keep it quick).
class FileWatcherTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '_');  // "SeesAnInPlaceWrite/Poll"
    dir = fs::temp_directory_path() / ("file_watcher_test-" + std::to_string(getpid()) + "-" + name);
    fs::remove_all(dir);
    fs::create_directories(dir);
    file = dir / "kernel.cu";
    write(file, "// skeleton\n");
  }
  void TearDown() override { fs::remove_all(dir); }

  FileWatcher watcher(std::chrono::milliseconds debounce = 100ms) {
    FileWatcher::Options o;
    o.debounce = debounce;
    o.poll_interval = 50ms;
    o.poll = GetParam();
    return FileWatcher(file, o);
  }
  // True when a change is reported within `limit`.
  static bool changed_within(FileWatcher& w, std::chrono::milliseconds limit) {
    const auto until = std::chrono::steady_clock::now() + limit;
    return w.wait([until] { return std::chrono::steady_clock::now() >= until; });
  }

  fs::path dir, file;
};

TEST_P(FileWatcherTest, SeesAnInPlaceWrite) {
  FileWatcher w = watcher();
  EXPECT_EQ(w.polling(), GetParam());
  EXPECT_EQ(w.fallback_reason(), "");
  write(file, "// step 1 done\n");
  EXPECT_TRUE(changed_within(w, 5s));
}

TEST_P(FileWatcherTest, SeesARenameOverTheFileAndKeepsWatchingTheNewOne) {
  FileWatcher w = watcher();
  // An atomic save, as vim, VS Code and JetBrains do it: the name gets a new inode.
  write(dir / ".kernel.cu.swp", "// saved atomically\n");
  fs::rename(dir / ".kernel.cu.swp", file);
  EXPECT_TRUE(changed_within(w, 5s));
  write(file, "// then saved in place\n");
  EXPECT_TRUE(changed_within(w, 5s));
}

TEST_P(FileWatcherTest, SeesASaveThatMovesTheOldFileAsideFirst) {
  FileWatcher w = watcher();
  // vim with a backup: the original is renamed away, then a new file is written.
  fs::rename(file, dir / "kernel.cu~");
  write(file, "// new inode, new content\n");
  EXPECT_TRUE(changed_within(w, 5s));
}

TEST_P(FileWatcherTest, ABurstOfSavesIsOneChange) {
  FileWatcher w = watcher(300ms);
  // Saves closer together than the debounce, while the watcher waits: one
  // change, reported only once they have stopped.
  std::atomic<int> saves{0};
  std::thread saver([&] {
    for (int i = 0; i < 10; ++i) {
      write(file, "// save " + std::to_string(i) + "\n");
      ++saves;
      std::this_thread::sleep_for(30ms);
    }
  });
  const bool changed = changed_within(w, 10s);
  const int seen = saves.load();
  saver.join();
  EXPECT_TRUE(changed);
  EXPECT_EQ(seen, 10) << "reported before the burst ended";
  EXPECT_FALSE(changed_within(w, 1s));
}

TEST_P(FileWatcherTest, IgnoresOtherFilesInTheFolder) {
  FileWatcher w = watcher();
  write(dir / "notes.txt", "other file\n");
  write(dir / "kernel.cu.bak", "// a backup\n");
  write(dir / ".tmp", "x");
  fs::rename(dir / ".tmp", dir / "driver.cu");
  EXPECT_FALSE(changed_within(w, 600ms));
}

TEST_P(FileWatcherTest, ARemovedFileCountsOnlyOnceItIsBack) {
  FileWatcher w = watcher();
  fs::remove(file);
  EXPECT_FALSE(changed_within(w, 600ms));
  write(file, "// back\n");
  EXPECT_TRUE(changed_within(w, 5s));
}

TEST_P(FileWatcherTest, StopEndsTheWaitAtOnce) {
  FileWatcher w = watcher();
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(w.wait([] { return true; }));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 200ms);
}

INSTANTIATE_TEST_SUITE_P(Modes, FileWatcherTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? std::string("Poll") : std::string("Inotify"); });

TEST(FileWatcherPoll, SeesNewContentOfTheSameSizeAndTime) {
  const fs::path dir = fs::temp_directory_path() / ("file_watcher_test-same-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / "kernel.cu";
  write(file, "// aaaa\n");
  const auto mtime = fs::last_write_time(file);
  FileWatcher::Options o;
  o.debounce = 100ms;
  o.poll_interval = 50ms;
  o.poll = true;
  FileWatcher w(file, o);
  // Same size, and the old mtime put back: only the content hash tells.
  write(file, "// bbbb\n");
  fs::last_write_time(file, mtime);
  const auto until = std::chrono::steady_clock::now() + 5s;
  EXPECT_TRUE(w.wait([until] { return std::chrono::steady_clock::now() >= until; }));
  fs::remove_all(dir);
}

TEST(FileWatcherFallback, PollsWhenTheFolderCannotBeWatched) {
  const fs::path missing = fs::temp_directory_path() / ("file_watcher_test-missing-" + std::to_string(getpid()));
  fs::remove_all(missing);
  FileWatcher w(missing / "kernel.cu", {});
  EXPECT_TRUE(w.polling());
  EXPECT_NE(w.fallback_reason().find(missing.string()), std::string::npos) << w.fallback_reason();
}

}  // namespace
