//===- passes/analysis/LinkFile.cpp - Calibrated links as JSON ------------===//
//
// Hand-checked rather than json::ObjectMapper: Path::report takes only
// literal messages, and an edited file deserves the value it had and the
// range it should be in.
//
//===----------------------------------------------------------------------===//

#include "passes/analysis/LinkFile.h"

#include "ir/InputFile.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>
#include <cstdio>

using namespace llvm;

namespace collc {

Expected<LinkClass> resolveLink(StringRef NameOrFile) {
  if (NameOrFile.contains('/') || NameOrFile.endswith(".json"))
    return readLinkFile(NameOrFile);
  return findLinkClass(NameOrFile);
}

namespace {

/// As the file would spell it: -3, 0.5, 1e+06.
std::string shortNumber(double D) {
  char Buf[32];
  snprintf(Buf, sizeof(Buf), "%g", D);
  return Buf;
}

/// Beyond any link: a message start of 10 s, a bus of 1 PB/s.
constexpr double MaxAlphaUs = 1e7, MaxBusGbps = 1e6;

/// Reads one object's fields, naming each by its path in the file.
class Reader {
public:
  Reader(StringRef File) : File(File) {}

  Error fail(const Twine &Where, const Twine &Msg) const {
    return createStringError(inconvertibleErrorCode(), "%s: %s: %s", File.c_str(),
                             Where.str().c_str(), Msg.str().c_str());
  }

  /// Every key of \p O must be one of \p Known: a misspelt field is an error,
  /// not a default.
  Error onlyFields(const json::Object &O, StringRef Where, ArrayRef<StringRef> Known) const {
    std::vector<std::string> Keys;
    for (const auto &KV : O)
      Keys.push_back(KV.first.str());
    llvm::sort(Keys); // the first unknown in name order, not hash order
    for (const std::string &K : Keys)
      if (!llvm::is_contained(Known, K))
        return fail(Where, "unknown field '" + K + "'; expected " + join(Known, ", "));
    return Error::success();
  }

  Expected<const json::Value *> get(const json::Object &O, StringRef Where, StringRef Key) const {
    const json::Value *V = O.get(Key);
    if (!V)
      return fail(Where.empty() ? "(root)" : Where, "missing field '" + Key + "'");
    return V;
  }

  /// A finite number above (\p Strict) or at least \p Min, and at most
  /// \p Max: a link's figures feed sums that must stay finite (an alpha of
  /// 1e308 made a step's exposed time infinite).
  Expected<double> number(const json::Object &O, StringRef Where, StringRef Key, double Min,
                          bool Strict, double Max = 1e12) const {
    Expected<const json::Value *> V = get(O, Where, Key);
    if (!V)
      return V.takeError();
    std::string At = (Where.empty() ? Key : Where + "." + Key).str();
    Optional<double> D = (*V)->getAsNumber();
    if (!D)
      return fail(At, "expected a number");
    if (!std::isfinite(*D) || (Strict ? *D <= Min : *D < Min) || *D > Max)
      return fail(At, formatv("{0} is out of range: expected {1} {2} and <= {3}", shortNumber(*D),
                              Strict ? ">" : ">=", shortNumber(Min), shortNumber(Max)));
    return *D;
  }

  Expected<int64_t> integer(const json::Object &O, StringRef Where, StringRef Key,
                            int64_t Min) const {
    Expected<const json::Value *> V = get(O, Where, Key);
    if (!V)
      return V.takeError();
    std::string At = (Where.empty() ? Key : Where + "." + Key).str();
    Optional<int64_t> I = (*V)->getAsInteger();
    if (!I)
      return fail(At, "expected an integer");
    if (*I < Min)
      return fail(At, formatv("{0} is out of range: expected >= {1}", *I, Min));
    return *I;
  }

  Expected<std::string> string(const json::Object &O, StringRef Where, StringRef Key) const {
    Expected<const json::Value *> V = get(O, Where, Key);
    if (!V)
      return V.takeError();
    Optional<StringRef> S = (*V)->getAsString();
    if (!S)
      return fail((Where.empty() ? Key : Where + "." + Key), "expected a string");
    return S->str();
  }

  Expected<LinkRange> range(const json::Value &V, StringRef Where) const {
    const json::Object *O = V.getAsObject();
    if (!O)
      return fail(Where, "expected an object with min_bytes, max_bytes, alpha_us and bus_gbps");
    if (Error E = onlyFields(*O, Where,
                             {"min_bytes", "max_bytes", "alpha_us", "bus_gbps", "points",
                              "median_rel_error"}))
      return E;
    LinkRange R;
    Expected<int64_t> Min = integer(*O, Where, "min_bytes", 0);
    if (!Min)
      return Min.takeError();
    Expected<int64_t> Max = integer(*O, Where, "max_bytes", *Min + 1);
    if (!Max)
      return Max.takeError();
    Expected<double> Alpha = number(*O, Where, "alpha_us", 0, /*Strict=*/false, MaxAlphaUs);
    if (!Alpha)
      return Alpha.takeError();
    Expected<double> Bw = number(*O, Where, "bus_gbps", 0, /*Strict=*/true, MaxBusGbps);
    if (!Bw)
      return Bw.takeError();
    R.MinBytes = uint64_t(*Min);
    R.MaxBytes = uint64_t(*Max);
    R.Fit = {*Alpha, *Bw};
    // What the fit stood on: informative, optional in an edited file.
    if (O->get("points")) {
      Expected<int64_t> N = integer(*O, Where, "points", 0);
      if (!N)
        return N.takeError();
      R.Points = unsigned(std::min<int64_t>(*N, UINT32_MAX));
    }
    if (O->get("median_rel_error")) {
      Expected<double> E = number(*O, Where, "median_rel_error", 0, /*Strict=*/false);
      if (!E)
        return E.takeError();
      R.MedianRelError = *E;
    }
    return R;
  }

  Expected<LinkClass> link(const json::Value &Root) const {
    const json::Object *O = Root.getAsObject();
    if (!O)
      return fail("(root)", "expected an object");
    if (Error E = onlyFields(*O, "(root)",
                             {"collc_link", "name", "description", "backend", "world",
                              "alpha_us", "bus_gbps", "ops"}))
      return E;
    Expected<int64_t> Version = integer(*O, "", "collc_link", 0);
    if (!Version)
      return Version.takeError();
    if (*Version != LinkFileVersion)
      return fail("collc_link", formatv("version {0} is not supported: expected {1}", *Version,
                                        LinkFileVersion));
    auto Fit = std::make_shared<LinkFit>();
    Expected<std::string> Name = string(*O, "", "name");
    if (!Name)
      return Name.takeError();
    if (Name->empty())
      return fail("name", "expected a non-empty name");
    Fit->Name = *Name;
    if (O->get("description")) {
      Expected<std::string> D = string(*O, "", "description");
      if (!D)
        return D.takeError();
      Fit->Description = *D;
    }
    Expected<std::string> Backend = string(*O, "", "backend");
    if (!Backend)
      return Backend.takeError();
    Fit->Backend = *Backend;
    Expected<int64_t> World = integer(*O, "", "world", 2);
    if (!World)
      return World.takeError();
    Fit->World = *World;
    Expected<double> Alpha = number(*O, "", "alpha_us", 0, /*Strict=*/false, MaxAlphaUs);
    if (!Alpha)
      return Alpha.takeError();
    Expected<double> Bw = number(*O, "", "bus_gbps", 0, /*Strict=*/true, MaxBusGbps);
    if (!Bw)
      return Bw.takeError();
    Expected<const json::Value *> OpsV = get(*O, "(root)", "ops");
    if (!OpsV)
      return OpsV.takeError();
    const json::Object *Ops = (*OpsV)->getAsObject();
    if (!Ops)
      return fail("ops", "expected an object from op kind to its ranges");
    std::vector<std::string> Kinds;
    for (const auto &KV : *Ops)
      Kinds.push_back(KV.first.str());
    llvm::sort(Kinds); // errors in name order, not the object's hash order
    for (const std::string &Kind : Kinds) {
      std::string Where = "ops." + Kind;
      Optional<OpKind> K = parseOpKind(Kind);
      if (!K || !isCommunication(*K))
        return fail(Where, "unknown op kind '" + Kind + "'; expected a communication op: " +
                               allOpKindNames());
      const json::Array *Rs = Ops->get(Kind)->getAsArray();
      if (!Rs || Rs->empty())
        return fail(Where, "expected a non-empty array of size ranges");
      std::vector<LinkRange> &Out = Fit->Ranges[unsigned(*K)];
      for (size_t I = 0; I != Rs->size(); ++I) {
        std::string At = formatv("{0}[{1}]", Where, I);
        Expected<LinkRange> R = range((*Rs)[I], At);
        if (!R)
          return R.takeError();
        if (!Out.empty() && R->MinBytes < Out.back().MaxBytes)
          return fail(At, formatv("range [{0}, {1}) overlaps {2}[{3}], [{4}, {5}): expected "
                                  "ranges in ascending order, each from where the one before "
                                  "ends or later",
                                  R->MinBytes, R->MaxBytes, Where, I - 1, Out.back().MinBytes,
                                  Out.back().MaxBytes));
        Out.push_back(*R);
      }
    }
    LinkClass L{Fit->Name, *Alpha, *Bw, Fit->Description, nullptr};
    L.Fit = std::move(Fit);
    return L;
  }

private:
  std::string File;
};

} // namespace

Expected<LinkClass> parseLinkFile(StringRef Text, StringRef Name) {
  Reader R(Name);
  Expected<json::Value> V = json::parse(Text);
  if (!V)
    return R.fail("(file)", "not JSON: " + toString(V.takeError()));
  return R.link(*V);
}

Expected<LinkClass> readLinkFile(StringRef Path) {
  Expected<std::unique_ptr<MemoryBuffer>> Buf = readInputFile(Path, "link file");
  if (!Buf)
    return Buf.takeError();
  return parseLinkFile((*Buf)->getBuffer(), Path);
}

void writeLinkFile(const LinkFit &Fit, AlphaBeta Overall, raw_ostream &OS) {
  json::OStream J(OS, 2);
  J.object([&] {
    J.attribute("collc_link", LinkFileVersion);
    J.attribute("name", Fit.Name);
    J.attribute("description", Fit.Description);
    J.attribute("backend", Fit.Backend);
    J.attribute("world", Fit.World);
    J.attribute("alpha_us", Overall.AlphaUs);
    J.attribute("bus_gbps", Overall.BusGBps);
    J.attributeObject("ops", [&] {
      for (unsigned K = 0; K != NumOpKinds; ++K) // the vocabulary's order
        if (!Fit.Ranges[K].empty())
          J.attributeArray(opKindName(OpKind(K)), [&] {
            for (const LinkRange &R : Fit.Ranges[K])
              J.object([&] {
                J.attribute("min_bytes", int64_t(R.MinBytes));
                J.attribute("max_bytes", int64_t(R.MaxBytes));
                J.attribute("alpha_us", R.Fit.AlphaUs);
                J.attribute("bus_gbps", R.Fit.BusGBps);
                J.attribute("points", int64_t(R.Points));
                J.attribute("median_rel_error", R.MedianRelError);
              });
          });
    });
  });
  OS << '\n';
}

} // namespace collc
