//===- tests/unit/OutputFileTest.cpp - A FIFO as an output ------------------===//
//
// plan/OutputFile.h writes a FIFO in place, once a process reads
// it, and says so after its wait when none does (it used to wait forever,
// as a shell's `>` does). The other outputs: tests/lit/tool/safe-outputs.test.
//
//===----------------------------------------------------------------------===//

#include "plan/OutputFile.h"

#include "llvm/Support/FileSystem.h"

#include "gtest/gtest.h"

#include <fstream>
#include <sys/stat.h>
#include <thread>

using namespace collc;
using namespace std::chrono;

namespace {

/// A FIFO in a directory of its own, removed after.
struct Fifo {
  llvm::SmallString<128> Dir, Path;
  Fifo() {
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("collc-fifo", Dir));
    Path = Dir;
    Path += "/out";
    EXPECT_EQ(mkfifo(Path.c_str(), 0600), 0);
  }
  ~Fifo() { llvm::sys::fs::remove_directories(Dir); }
};

TEST(OutputFile, AFifoNobodyReadsIsSaidSoAfterItsWait) {
  Fifo F;
  auto Start = steady_clock::now();
  llvm::Expected<std::unique_ptr<OutputFile>> Out =
      OutputFile::create(F.Path, {}, true, milliseconds(100));
  ASSERT_FALSE(bool(Out));
  EXPECT_EQ(llvm::toString(Out.takeError()),
            "cannot write '" + std::string(F.Path) +
                "': it is a FIFO that no process opened for reading within 100 ms (start its "
                "reader first)");
  EXPECT_GE(steady_clock::now() - Start, milliseconds(100));
  // The FIFO is left as it was.
  llvm::sys::fs::file_status St;
  ASSERT_FALSE(llvm::sys::fs::status(F.Path, St));
  EXPECT_EQ(St.type(), llvm::sys::fs::file_type::fifo_file);
}

TEST(OutputFile, AFifoIsWrittenOnceItsReaderComes) {
  Fifo F;
  std::string Read;
  std::thread Reader([&] {
    // Comes after the writer began to wait.
    std::this_thread::sleep_for(milliseconds(200));
    std::ifstream In(std::string(F.Path));
    Read.assign(std::istreambuf_iterator<char>(In), {});
  });
  llvm::Expected<std::unique_ptr<OutputFile>> Out =
      OutputFile::create(F.Path, {}, true, minutes(2));
  if (!Out) {
    ADD_FAILURE() << llvm::toString(Out.takeError());
    // Let the reader finish: open the FIFO for writing and close it.
    std::ofstream Unblock(std::string(F.Path));
  } else {
    (*Out)->os() << "plan text\n";
    EXPECT_FALSE(bool((*Out)->commit()));
    Out->reset();
  }
  Reader.join();
  EXPECT_EQ(Read, Out ? "plan text\n" : "");
}

} // namespace
