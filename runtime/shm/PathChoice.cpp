//===- runtime/shm/PathChoice.cpp - Which path carries a group's bytes ------===//

#include "runtime/shm/PathChoice.h"

#include "runtime/exec/RuntimeError.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace llvm;

namespace collc::rt::shm {

StringRef dataPathName(DataPath P) {
  switch (P) {
  case DataPath::Engine:
    return "engine";
  case DataPath::Shm:
    return "shm";
  case DataPath::Hierarchical:
    return "hierarchical";
  }
  return "?";
}

Expected<PathChoice> choosePath(const GroupHosts &H, StringRef Engine) {
  auto Engined = [&](const Twine &Why) -> Expected<PathChoice> {
    if (H.Mode == Transport::Shm)
      return makeError(ErrorKind::InvalidArgument,
                       formatv("--transport shm ({0}=shm): shared memory cannot carry this "
                               "group: {1}",
                               TransportVariable, Why.str()));
    return PathChoice{DataPath::Engine, Why.str()};
  };
  if (H.Mode == Transport::Engine)
    return PathChoice{DataPath::Engine,
                      formatv("the transport asked is engine (--transport or {0})",
                              TransportVariable)};
  if (H.Size == 1)
    return Engined("a group of one process");
  if (H.Hosts == 1)
    return PathChoice{DataPath::Shm, formatv("its {0} processes share memory on host {1}",
                                             H.Size, H.HostName)};
  uint32_t PerHost = H.membersPerHost();
  if (PerHost == 1)
    return Engined(formatv("each of its {0} processes is on a host of its own", H.Size));
  if (PerHost == 0) {
    SmallVector<uint32_t, 8> Count(H.Hosts, 0);
    for (uint32_t Host : H.HostOf)
      ++Count[Host];
    auto [Least, Most] = std::minmax_element(Count.begin(), Count.end());
    return Engined(formatv("its {0} hosts hold {1} to {2} of its processes (the hierarchical "
                           "path takes as many on each)",
                           H.Hosts, *Least, *Most));
  }
  return PathChoice{DataPath::Hierarchical,
                    formatv("{0} hosts x {1} processes: an all_reduce is reduced in shared memory "
                            "within each host and by {2} across hosts, one slice per process; "
                            "other collectives on {2}",
                            H.Hosts, PerHost, Engine)};
}

std::string describePath(StringRef Group, int Size, const PathChoice &C) {
  return formatv("group '{0}' ({1} processes): {2}: {3}", Group, Size, dataPathName(C.Path),
                 C.Why);
}

} // namespace collc::rt::shm
