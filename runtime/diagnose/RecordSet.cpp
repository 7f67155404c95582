//===- runtime/diagnose/RecordSet.cpp - The dumps of one run ---------------===//

#include "runtime/diagnose/RecordSet.h"

#include "runtime/diagnose/CollcRecordReader.h"
#include "runtime/diagnose/JsonFields.h"
#include "runtime/diagnose/TorchRecordReader.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>

using namespace llvm;

namespace collc::diag {

StringRef recordFormatName(RecordFormat F) {
  return F == RecordFormat::Collc ? "collc flight record" : "PyTorch Flight Recorder dump";
}

/// One text read as whichever dump it is.
static Expected<RankRecord> readOne(const NamedText &T) {
  // Pickle protocol 2 and later begin with 0x80.
  if (!T.Text.empty() && uint8_t(T.Text[0]) == 0x80)
    return createStringError(inconvertibleErrorCode(),
                             "%s: a pickle, not JSON (a Flight Recorder pickle dump: give its "
                             "JSON form, which dump_json writes)",
                             T.Name.c_str());
  Expected<json::Value> V = parseJson(T.Text, T.Name);
  if (!V)
    return V.takeError();
  const json::Object *Top = V->getAsObject();
  if (Top && isCollcRecord(*Top))
    return readCollcRecord(*Top, T.Name);
  if (Top && isTorchRecord(*Top))
    return readTorchRecord(*Top, T.Name);
  return createStringError(inconvertibleErrorCode(),
                           "%s: neither a collc flight record (\"format\": \"%s\") nor a "
                           "Flight Recorder dump (\"version\" and \"pg_config\")",
                           T.Name.c_str(), rt::FlightRecordFormat.data());
}

Expected<RecordSet> readRecords(ArrayRef<NamedText> Texts) {
  RecordSet S;
  std::vector<RankRecord> Read;
  for (const NamedText &T : Texts) {
    Expected<RankRecord> R = readOne(T);
    if (!R) {
      S.Problems.push_back(toString(R.takeError()));
      continue;
    }
    Read.push_back(std::move(*R));
  }
  if (Read.empty())
    return createStringError(inconvertibleErrorCode(),
                             Texts.empty() ? "no dumps to read"
                                           : "no dump could be read:\n  " +
                                                 join(S.Problems, "\n  "));
  S.Format = Read.front().Format;
  for (const RankRecord &R : Read) {
    if (R.Format != S.Format)
      return createStringError(inconvertibleErrorCode(),
                               "%s is a %s and %s a %s: one run leaves dumps of one kind",
                               Read.front().File.c_str(), recordFormatName(S.Format).data(),
                               R.File.c_str(), recordFormatName(R.Format).data());
    // A Flight Recorder dump knows only the groups it is in: the world is
    // what all of them span.
    if (S.Format == RecordFormat::Torch)
      S.World = std::max(S.World, R.World);
    else if (S.World && R.World != S.World)
      return createStringError(inconvertibleErrorCode(),
                               "%s is of a world of %lld ranks and %s of %lld: dumps of "
                               "different runs",
                               Read.front().File.c_str(), (long long)S.World, R.File.c_str(),
                               (long long)R.World);
    else
      S.World = R.World;
  }
  S.Ranks.resize(size_t(S.World));
  for (RankRecord &R : Read) {
    std::optional<RankRecord> &Slot = S.Ranks[R.Rank];
    if (Slot) {
      // Two dumps of one rank (copied from two places): the later one is
      // its last word.
      bool Later = R.DumpedNs > Slot->DumpedNs;
      S.Problems.push_back(formatv("{0} and {1} are both dumps of rank {2}: {3} is read",
                                   Slot->File, R.File, R.Rank, Later ? R.File : Slot->File)
                               .str());
      if (!Later)
        continue;
    }
    Slot = std::move(R);
  }
  return S;
}

Expected<std::vector<NamedText>> readDumpDirectory(StringRef Dir) {
  std::error_code EC;
  std::vector<std::string> Files;
  for (sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC; It.increment(EC)) {
    sys::fs::file_status St;
    if (sys::fs::status(It->path(), St) || !sys::fs::is_regular_file(St))
      continue;
    // The temporary files of a dump being written are not dumps yet.
    if (sys::path::filename(It->path()).contains(".tmp-"))
      continue;
    Files.push_back(It->path());
  }
  if (EC)
    return createStringError(EC, "cannot read directory '%s': %s", Dir.str().c_str(),
                             EC.message().c_str());
  llvm::sort(Files);
  std::vector<NamedText> Out;
  for (const std::string &F : Files) {
    uint64_t Size = 0;
    if (!sys::fs::file_size(F, Size) && Size > MaxDumpBytes)
      return createStringError(inconvertibleErrorCode(),
                               "%s: %llu bytes, more than the %zu a dump may have", F.c_str(),
                               (unsigned long long)Size, MaxDumpBytes);
    ErrorOr<std::unique_ptr<MemoryBuffer>> Buf = MemoryBuffer::getFile(F);
    if (!Buf)
      return createStringError(Buf.getError(), "cannot read '%s': %s", F.c_str(),
                               Buf.getError().message().c_str());
    Out.push_back({F, (*Buf)->getBuffer().str()});
  }
  return Out;
}

} // namespace collc::diag
