//===- tests/unit/InputFileTest.cpp - Reading an input, bounded --------------===//

#include "ir/InputFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include <csignal>
#include <string>
#include <thread>
#include <unistd.h>

using namespace collc;

namespace {

std::string errorOf(llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> B) {
  return B ? "no error" : llvm::toString(B.takeError());
}

/// An endless device is read up to the limit and refused, saying so (it
/// once grew memory until the system refused); so is a regular file over
/// the limit, before it is read.
TEST(InputFile, AnInputOverTheLimitIsRefused) {
  EXPECT_EQ(errorOf(readInputFile("/dev/zero", "plan", 1000)),
            "cannot read plan '/dev/zero': it holds more than 1000 bytes, the most collc reads "
            "(an endless device or pipe?)");
  llvm::SmallString<128> Path;
  int FD = -1;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("collc-input", "coll", FD, Path));
  {
    llvm::raw_fd_ostream OS(FD, /*shouldClose=*/true);
    OS << std::string(2000, 'x');
  }
  EXPECT_NE(errorOf(readInputFile(Path, "", 1000)).find("it holds more than 1000 bytes"),
            std::string::npos);
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> Whole = readInputFile(Path, "", 2000);
  ASSERT_TRUE(bool(Whole)) << llvm::toString(Whole.takeError());
  EXPECT_EQ((*Whole)->getBufferSize(), 2000u);
  llvm::sys::fs::remove(Path);
}

/// A device or pipe that ends is read whole, across the reader's chunks
/// (16 MiB each).
TEST(InputFile, AStreamIsReadWhole) {
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> Empty = readInputFile("/dev/null", "");
  ASSERT_TRUE(bool(Empty)) << llvm::toString(Empty.takeError());
  EXPECT_EQ((*Empty)->getBufferSize(), 0u);
  int Fds[2];
  ASSERT_EQ(pipe(Fds), 0);
  signal(SIGPIPE, SIG_IGN);
  constexpr size_t Bytes = (17 << 20) + 5;
  std::thread Writer([&] {
    std::string Text(Bytes, 'y');
    Text.back() = 'z';
    for (size_t Done = 0; Done < Text.size();) {
      ssize_t N = write(Fds[1], Text.data() + Done, Text.size() - Done);
      if (N <= 0)
        break;
      Done += size_t(N);
    }
    close(Fds[1]);
  });
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> Piped =
      readInputFile("/dev/fd/" + std::to_string(Fds[0]), "");
  // Closed before the join: should the read have stopped early, the writer
  // then fails (EPIPE, its signal ignored) instead of blocking for ever.
  close(Fds[0]);
  Writer.join();
  ASSERT_TRUE(bool(Piped)) << llvm::toString(Piped.takeError());
  ASSERT_EQ((*Piped)->getBufferSize(), Bytes);
  EXPECT_EQ((*Piped)->getBuffer().front(), 'y');
  EXPECT_EQ((*Piped)->getBuffer()[16 << 20], 'y');
  EXPECT_EQ((*Piped)->getBuffer().back(), 'z');
  EXPECT_EQ(errorOf(readInputFile("/no/such/input.coll", "")),
            "cannot read '/no/such/input.coll': No such file or directory");
}

} // namespace
