//===- runtime/launch/RendezvousAddress.cpp - Where the processes of a run meet ===//

#include "runtime/launch/RendezvousAddress.h"

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc::rt {

std::string RendezvousAddress::text() const {
  switch (How) {
  case Kind::File:
    return "file:" + Directory;
  case Kind::Redis:
    // An IPv6 address in brackets, as it was given.
    if (StringRef(Host).contains(':'))
      return formatv("redis://[{0}]:{1}", Host, Port).str();
    return formatv("redis://{0}:{1}", Host, Port).str();
  case Kind::Mpi:
    return "mpi";
  }
  return "";
}

Expected<RendezvousAddress> parseRendezvous(StringRef Whole, StringRef Source) {
  StringRef Text = Whole; // consumed form by form; messages quote Whole
  auto Bad = [&](StringRef Why) {
    return createStringError(inconvertibleErrorCode(), formatv("{2} '{0}': {1}; expected file:DIR, "
                                                               "redis://HOST:PORT or mpi",
                                                               Whole, Why, Source));
  };
  RendezvousAddress A;
  A.Source = Source.str();
  if (Whole.empty())
    return Bad("it is empty");
  if (Text == "mpi") {
    A.How = RendezvousAddress::Kind::Mpi;
    return A;
  }
  if (Text.consume_front("file:")) {
    if (Text.empty())
      return Bad("the directory is empty");
    A.How = RendezvousAddress::Kind::File;
    A.Directory = Text.str();
    return A;
  }
  if (Text.consume_front("redis://")) {
    auto [Host, PortText] = Text.rsplit(':');
    unsigned Port;
    // "[::1]": the last ':' lies inside the brackets.
    if (Host.empty() || PortText.empty() || Host == Text || PortText.contains(']'))
      return Bad("expected a host and a port");
    if (PortText.getAsInteger(10, Port) || Port == 0 || Port > 65535)
      return Bad(formatv("port '{0}' is not in 1..65535", PortText).str());
    // An IPv6 address goes in brackets (hiredis takes it without them).
    bool Bracketed = Host.consume_front("[");
    if (Bracketed && !Host.consume_back("]"))
      return Bad(formatv("host '[{0}' has no closing bracket", Host).str());
    if (Host.empty())
      return Bad("expected a host and a port");
    // Neither a user, a password, a database number nor spaces: hiredis
    // would take them for part of the host's name.
    if (Host.find_first_of("@/?#[] \t") != StringRef::npos)
      return Bad(formatv("host '{0}' is not a host name or address (a user, a password or a "
                         "path is not taken)",
                         Host)
                     .str());
    if (!Bracketed && Host.contains(':'))
      return Bad(formatv("host '{0}' holds a ':': an IPv6 address goes in brackets "
                         "(redis://[ADDRESS]:PORT)",
                         Host)
                     .str());
    A.How = RendezvousAddress::Kind::Redis;
    A.Host = Host.str();
    A.Port = uint16_t(Port);
    return A;
  }
  return Bad("unknown form");
}

namespace {

/// How each process backend meets its peers: one table for collc run,
/// collc bench and the C API.
struct MeetingRule {
  const char *Backend;
  const char *Default; ///< its rendezvous when none is given ("": none)
  bool ThroughMpi;     ///< MPI_COMM_WORLD (under mpirun)
  bool ThroughStore;   ///< a store: file:DIR or redis://HOST:PORT
};
const MeetingRule Rules[] = {
    {"mpi", "mpi", true, false},
    {"gloo", "", false, true},
    // The unique ids of its communicators meet either way.
    {"nccl", "mpi", true, true},
};

const MeetingRule *ruleOf(StringRef Backend) {
  for (const MeetingRule &R : Rules)
    if (Backend == R.Backend)
      return &R;
  return nullptr;
}

} // namespace

StringRef defaultRendezvous(StringRef Backend) {
  const MeetingRule *R = ruleOf(Backend);
  return R ? R->Default : "";
}

std::optional<std::string> rendezvousMismatch(StringRef Backend, const RendezvousAddress &Where) {
  const MeetingRule *R = ruleOf(Backend);
  bool Mpi = Where.How == RendezvousAddress::Kind::Mpi;
  if (!R || (Mpi ? R->ThroughMpi : R->ThroughStore))
    return std::nullopt;
  if (Mpi)
    return formatv("the {0} backend meets through a store, not rendezvous 'mpi' (from {1}; give "
                   "file:DIR or redis://HOST:PORT)",
                   Backend, Where.Source)
        .str();
  return formatv("the {0} backend meets through MPI_COMM_WORLD, not rendezvous '{1}' (from "
                 "{2}; use 'mpi')",
                 Backend, Where.text(), Where.Source)
      .str();
}

} // namespace collc::rt
