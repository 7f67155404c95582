//===- runtime/gloo/ExternalProbedStore.cpp - A group's join in the program's store ===//

#include "runtime/gloo/ExternalProbedStore.h"

#include "runtime/launch/ExternalStore.h"

#include "llvm/Support/FormatVariadic.h"

#include <gloo/common/error.h>

#include <thread>

using namespace llvm;

namespace collc::rt::gloo {

namespace {

/// How often a wait asks the store again.
constexpr std::chrono::milliseconds PollEvery(5);

class ExternalProbedStore final : public ProbedStore {
public:
  explicit ExternalProbedStore(std::string Name) : Name(std::move(Name)) {}

  void set(const std::string &Key, const std::vector<char> &Data) override {
    if (Error E = store()->set(Key, Data))
      throw StoreWriteFailed(failed("set", Key, std::move(E)));
  }

  std::vector<char> get(const std::string &Key) override {
    Expected<std::vector<char>> V = store()->get(Key);
    if (!V)
      throw ::gloo::IoException(failed("get", Key, V.takeError()));
    return std::move(*V);
  }

  void wait(const std::vector<std::string> &Keys) override { wait(Keys, Timeout); }

  void wait(const std::vector<std::string> &Keys, const std::chrono::milliseconds &T) override {
    auto Deadline = std::chrono::steady_clock::now() + T;
    while (!has(Keys)) {
      if (std::chrono::steady_clock::now() >= Deadline)
        throw ::gloo::IoException(formatv("Wait timeout for key(s): {0} in store:{1}",
                                          join(Keys.begin(), Keys.end(), ", "), Name)
                                      .str());
      std::this_thread::sleep_for(PollEvery);
    }
  }

  bool has(const std::vector<std::string> &Keys) override {
    Expected<bool> Has = store()->check(Keys);
    if (!Has)
      throw ::gloo::IoException(
          failed("check", join(Keys.begin(), Keys.end(), ", "), Has.takeError()));
    return *Has;
  }

  Claim claim(const std::string &Key, const std::string &Value) override {
    Expected<int64_t> Claims = store()->add(Key + "/collc.claims", 1);
    if (!Claims)
      throw StoreWriteFailed(failed("add", Key + "/collc.claims", Claims.takeError()));
    if (*Claims == 1) {
      set(Key, std::vector<char>(Value.begin(), Value.end()));
      return {true, Value};
    }
    // Another process holds it and sets it right after its add.
    auto Deadline = std::chrono::steady_clock::now() + Timeout;
    for (;;) {
      if (std::optional<std::string> Held = claimed(Key))
        return {false, *Held};
      if (std::chrono::steady_clock::now() >= Deadline)
        return {false, formatv("a claim whose holder did not write it within {0} ms (it "
                               "stopped after its add?)",
                               Timeout.count())
                           .str()};
      std::this_thread::sleep_for(PollEvery);
    }
  }

  std::optional<std::string> claimed(const std::string &Key) override {
    if (!has({Key}))
      return std::nullopt;
    std::vector<char> Held = get(Key);
    return std::string(Held.begin(), Held.end());
  }

  std::string where(const std::string &Key) const override {
    return formatv("key '{0}' of store:{1}", Key, Name).str();
  }

  void setTimeout(std::chrono::milliseconds T) override { Timeout = T; }

  const char *kind() const override { return "store"; }

private:
  /// The store registered now (a program may register another between two
  /// joins); none is an error the join reports.
  std::shared_ptr<ExternalStore> store() const {
    Expected<std::shared_ptr<ExternalStore>> S = externalStore(Name);
    if (!S)
      throw StoreWriteFailed(toString(S.takeError()));
    return *S;
  }

  std::string failed(StringRef Op, StringRef Key, Error E) const {
    return formatv("store:{0}: {1} of '{2}' failed: {3}", Name, Op, Key, toString(std::move(E)))
        .str();
  }

  std::string Name;
  /// Gloo's default, until a group sets its own.
  std::chrono::milliseconds Timeout{30000};
};

} // namespace

std::shared_ptr<ProbedStore> openExternalProbedStore(const std::string &Name) {
  return std::make_shared<ExternalProbedStore>(Name);
}

} // namespace collc::rt::gloo
