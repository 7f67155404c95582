//===- passes/Pass.cpp - Pass options -------------------------------------===//

#include "passes/Pass.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc {

Expected<uint64_t> parseByteSize(StringRef Text) {
  StringRef T = Text.trim();
  size_t Digits = T.find_first_not_of("0123456789");
  StringRef Number = T.take_front(Digits), Unit = T.drop_front(Number.size());
  uint64_t N;
  if (Number.empty() || Number.getAsInteger(10, N))
    return createStringError(inconvertibleErrorCode(),
                             "'%s' is not a byte size (such as 33554432, 32MiB or 25MB)",
                             Text.str().c_str());
  uint64_t Mul = StringSwitch<uint64_t>(Unit)
                     .Cases("", "B", 1)
                     .Case("KiB", 1ull << 10)
                     .Case("MiB", 1ull << 20)
                     .Case("GiB", 1ull << 30)
                     .Cases("KB", "kB", 1000ull)
                     .Case("MB", 1000ull * 1000)
                     .Case("GB", 1000ull * 1000 * 1000)
                     .Default(0);
  if (!Mul)
    return createStringError(inconvertibleErrorCode(),
                             "unknown unit '%s' in '%s'; expected B, KiB, MiB, GiB, KB, MB or GB",
                             Unit.str().c_str(), Text.str().c_str());
  if (N > UINT64_MAX / Mul)
    return createStringError(inconvertibleErrorCode(), "byte size '%s' is too large",
                             Text.str().c_str());
  return N * Mul;
}

Error PassOptions::badValue(StringRef Key, StringRef Expected) const {
  return createStringError(inconvertibleErrorCode(), "%s{%s=%s}: expected %s", PassName.c_str(),
                           Key.str().c_str(), Values.lookup(Key).c_str(), Expected.str().c_str());
}

const std::string *PassOptions::lookup(StringRef Key, StringRef Help) {
  Declared.push_back({Key.str(), Help.str()});
  auto It = Values.find(Key);
  return It == Values.end() ? nullptr : &It->second;
}

Expected<uint64_t> PassOptions::getUInt(StringRef Key, uint64_t Default, StringRef Help) {
  const std::string *V = lookup(Key, Help);
  if (!V)
    return Default;
  uint64_t N;
  if (StringRef(*V).getAsInteger(10, N))
    return badValue(Key, "a non-negative integer");
  return N;
}

Expected<uint64_t> PassOptions::getBytes(StringRef Key, uint64_t Default, StringRef Help) {
  const std::string *V = lookup(Key, Help);
  if (!V)
    return Default;
  Expected<uint64_t> N = parseByteSize(*V);
  if (!N) {
    consumeError(N.takeError());
    return badValue(Key, "a byte size such as 33554432 or 32MiB");
  }
  return N;
}

Expected<std::vector<uint64_t>> PassOptions::getBytesList(StringRef Key, ArrayRef<uint64_t> Default,
                                                          StringRef Help) {
  const std::string *V = lookup(Key, Help);
  if (!V)
    return std::vector<uint64_t>(Default.begin(), Default.end());
  SmallVector<StringRef, 4> Parts;
  StringRef(*V).split(Parts, ':');
  std::vector<uint64_t> Out;
  for (StringRef Part : Parts) {
    Expected<uint64_t> N = parseByteSize(Part);
    if (!N || *N == 0) {
      if (!N)
        consumeError(N.takeError());
      return badValue(Key, "a ':'-separated list of positive byte sizes such as 1MiB:25MiB");
    }
    Out.push_back(*N);
  }
  return Out;
}

Expected<bool> PassOptions::getBool(StringRef Key, bool Default, StringRef Help) {
  const std::string *V = lookup(Key, Help);
  if (!V)
    return Default;
  if (*V == "true" || *V == "1")
    return true;
  if (*V == "false" || *V == "0")
    return false;
  return badValue(Key, "true or false");
}

Expected<std::string> PassOptions::getString(StringRef Key, StringRef Default, StringRef Help) {
  const std::string *V = lookup(Key, Help);
  return V ? *V : Default.str();
}

Error PassOptions::finish() const {
  for (const auto &Entry : Values) {
    bool Known = false;
    for (const auto &D : Declared)
      Known |= D.first == Entry.first();
    if (Known)
      continue;
    std::string KnownList;
    for (const auto &D : Declared)
      KnownList += (KnownList.empty() ? "" : ", ") + D.first;
    return createStringError(
        inconvertibleErrorCode(), "pass '%s' has no option '%s'%s%s", PassName.c_str(),
        Entry.first().str().c_str(),
        KnownList.empty() ? " (it takes none)" : "; it takes: ", KnownList.c_str());
  }
  return Error::success();
}

} // namespace collc
