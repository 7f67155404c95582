//===- tests/property/ProgramGenerator.cpp - Random whole programs ---------===//

#include "ProgramGenerator.h"

#include <random>

namespace collc::property {

namespace {

/// A group the generator may declare, with predicates that select whole
/// subgroups of it (a collective under one is issued by every member of
/// each subgroup it runs on).
struct GroupKind {
  const char *Def;
  std::vector<const char *> Aligned;
};

const std::vector<GroupKind> &groupKinds() {
  static const std::vector<GroupKind> Kinds = {
      {"world", {"rank >= 0"}},
      {"split(rank % 2, rank)", {"rank % 2 == 0", "rank % 2 == 1"}},
      {"split(rank / 2, rank)", {"rank < 2", "rank >= 2"}},
      {"split(rank / 4, rank)", {"rank < 4", "rank >= 4"}},
      {"ranks [0, 1]", {"rank < 2"}},
      {"ranks [1, 0]", {"rank <= 1"}},
      // Ranks of color -1 (rank % 3 == 0) are in no subgroup.
      {"split((rank % 3) - 1, world - rank)", {"rank % 3 == 1", "rank % 3 != 1"}},
      {"split(0, world - rank)", {"rank >= 0"}},
  };
  return Kinds;
}

/// Predicates that ignore the groups: most deadlock or cannot pair.
const char *const ArbitraryPredicates[] = {"rank == 0", "rank != 1", "rank % 2 == 1",
                                           "rank < world / 2", "rank > 0"};

/// Mostly shapes every group size up to 8 divides (840 = lcm(1..8)).
const char *const Types[] = {"f32[840]", "bf16[840]", "i32[840, 2]", "f64[420]",
                             "f32[840]", "f16[8]",    "u8[840]"};

const char *const ReduceOps[] = {"sum", "max", "min", "avg", "sum"};

} // namespace

/// Builds one shape; the random choices are read in program order.
class ShapeBuilder {
public:
  explicit ShapeBuilder(uint64_t Seed) : Rng(Seed) { Shape.Seed = Seed; }
  ProgramShape build();

private:
  struct Source {
    std::string Name, Type;
  };
  struct Pending {
    std::string Name, Pred, Type;
    bool Reusable;
    bool Token = false; ///< a send's: waited for, never used
  };
  uint64_t pick(uint64_t N) { return Rng() % N; }
  bool chance(unsigned Percent) { return pick(100) < Percent; }
  std::string fresh(const char *Prefix) {
    std::string S = "%";
    return S.append(Prefix).append(std::to_string(N++));
  }
  static std::string when(const std::string &Pred) { return Pred.empty() ? "" : " when " + Pred; }
  void line(std::string L) { Shape.Lines.push_back("  " + std::move(L)); }

  void compute();
  void collective();
  void pointToPoint();
  void use();
  void flushWaits(bool All);
  std::string predicateFor(size_t Group);

  std::mt19937_64 Rng;
  ProgramShape Shape;
  unsigned N = 0;
  std::vector<size_t> Groups; ///< declared: index into groupKinds(), named @g<i>
  std::vector<Source> Pool;   ///< defined on every rank
  std::vector<std::string> Conditional; ///< defined on some ranks only
  std::vector<Pending> Waits;
};

void ShapeBuilder::compute() {
  std::string Name = fresh("t");
  std::string Type = Types[pick(std::size(Types))];
  line(Name + " = compute @c" + Name.substr(1) + " cost(" + std::to_string(1 + pick(20)) +
       "us) : " + Type);
  Pool.push_back({Name, Type});
}

std::string ShapeBuilder::predicateFor(size_t Group) {
  unsigned R = pick(100);
  if (R < 55)
    return "";
  const GroupKind &K = groupKinds()[Groups[Group]];
  if (R < 85)
    return K.Aligned[pick(K.Aligned.size())];
  return ArbitraryPredicates[pick(std::size(ArbitraryPredicates))];
}

void ShapeBuilder::collective() {
  size_t G = pick(Groups.size());
  std::string Group = " in @g" + std::to_string(G);
  const Source &S = Pool[pick(Pool.size())];
  std::string Pred = predicateFor(G);
  bool Async = chance(25);
  std::string A = Async ? " async" : "";
  unsigned Kind = unsigned(pick(8));
  if (Kind == 7) { // barrier
    line("barrier" + Group + when(Pred));
    return;
  }
  std::string Name = fresh("r");
  std::string Body, Type = S.Type;
  bool SameType = false;
  switch (Kind) {
  case 0:
  case 1:
    Body = "all_reduce" + A + " " + ReduceOps[pick(std::size(ReduceOps))] + " " + S.Name;
    SameType = true;
    break;
  case 2:
    Body = "all_gather" + A + " " + S.Name;
    break;
  case 3:
    Body = "reduce_scatter" + A + " " + ReduceOps[pick(std::size(ReduceOps))] + " " + S.Name;
    break;
  case 4: {
    const char *Roots[] = {"0", "0", "1", "(rank % 2)"};
    Body = "broadcast" + A + " " + S.Name + " root " + Roots[pick(std::size(Roots))];
    SameType = true;
    break;
  }
  case 5:
    Body = "all_to_all" + A + " " + S.Name;
    SameType = true;
    break;
  case 6: {
    // A dedicated input: W rows to each of W ranks fit 16 rows out, 8 in.
    std::string In = fresh("v");
    line(In + " = compute @c" + In.substr(1) + " : f32[16, 2]");
    Body = "all_to_all_v" + A + " " + In;
    Type = "f32[8, 2]";
    line(Name + " = " + Body + Group + " splits $M : " + Type + when(Pred));
    Body.clear();
    break;
  }
  }
  if (!Body.empty())
    line(Name + " = " + Body + Group + when(Pred));
  // Sometimes the same collective again under the complementary predicate:
  // one op written twice, which compile must refuse or run.
  if (!Pred.empty() && !Async && Kind != 6 && chance(30)) {
    std::string Twin = fresh("r");
    line(Twin + " = " + Body + Group + when("!(" + Pred + ")"));
    Conditional.push_back(Twin);
  }
  bool Reusable = SameType && Pred.empty();
  if (Async) {
    Waits.push_back({Name, Pred, Type, Reusable});
    return;
  }
  if (Reusable)
    Pool.push_back({Name, Type});
  else if (!Pred.empty())
    Conditional.push_back(Name);
}

void ShapeBuilder::pointToPoint() {
  // A copy: the cases below add to Pool.
  const Source S = Pool[pick(Pool.size())];
  std::string Got = chance(10) ? std::string("f32[420]") : S.Type; // sometimes the wrong size
  std::string P = fresh("p");
  // Cases 0-3 as before (their order of random reads is kept); 4-7 are
  // async sends and p2p blocks.
  uint64_t Case = pick(4);
  if (chance(50))
    Case = 4 + pick(chance(85) ? 3 : 4);
  switch (Case) {
  case 0: // a chain down the ranks
    line("send " + S.Name + " to (rank + 1) when rank < world - 1");
    line(P + " = recv from (rank - 1) : " + Got + " when rank > 0");
    Conditional.push_back(P);
    break;
  case 1: { // the same, the recv posted first, sometimes before the
            // collective that makes what is sent
    line(P + " = recv async from (rank - 1) : " + Got + " when rank > 0");
    std::string Sent = S.Name;
    if (chance(30)) {
      Sent = fresh("r");
      line(Sent + " = all_reduce sum " + S.Name + " in @g" + std::to_string(pick(Groups.size())));
    }
    line("send " + Sent + " to (rank + 1) when rank < world - 1");
    line("wait " + P + " when rank > 0");
    Conditional.push_back(P);
    break;
  }
  case 2: // even ranks to odd ones (an odd world leaves the last without a peer)
    line("send " + S.Name + " to (rank + 1) when rank % 2 == 0");
    line(P + " = recv from (rank - 1) : " + Got + " when rank % 2 == 1");
    Conditional.push_back(P);
    break;
  case 3: { // a ring shift, receives posted first
    line(P + " = recv async from ((rank - 1) % world) : " + Got);
    // Sometimes a compute or a collective between its halves: on NCCL the
    // recv is held across the compute, but not across the collective, where
    // the stream order refuses what the cross-rank check accepts.
    unsigned Between = unsigned(pick(4));
    if (Between == 2)
      compute();
    else if (Between == 3)
      collective();
    line("send " + S.Name + " to ((rank + 1) % world)");
    line("wait " + P);
    if (Got == S.Type)
      Pool.push_back({P, Got});
    break;
  }
  case 4: { // a ring shift, the send async; its token waited now or later
    std::string Tok = fresh("k");
    line(Tok + " = send async " + S.Name + " to ((rank + 1) % world)");
    line(P + " = recv from ((rank - 1) % world) : " + Got);
    if (chance(50))
      line("wait " + Tok);
    else
      Waits.push_back({Tok, "", "", false, true});
    if (Got == S.Type)
      Pool.push_back({P, Got});
    break;
  }
  case 5: { // a ring in one p2p block, either way round, sometimes both ways
    std::string Q = fresh("p");
    bool Both = chance(40), RecvFirst = chance(50);
    std::vector<std::string> Ops = {"send " + S.Name + " to ((rank + 1) % world)",
                                    P + " = recv from ((rank - 1) % world) : " + Got};
    if (Both) {
      Ops.push_back("send " + S.Name + " to ((rank - 1) % world)");
      Ops.push_back(Q + " = recv from ((rank + 1) % world) : " + S.Type);
    }
    if (RecvFirst)
      std::swap(Ops[0], Ops[1]);
    line("p2p {");
    for (const std::string &O : Ops)
      line("  " + O);
    line("}");
    if (Got == S.Type)
      Pool.push_back({P, Got});
    if (Both)
      Pool.push_back({Q, S.Type});
    break;
  }
  case 6: // pairs exchange in a block (an odd world leaves the last out)
    line("p2p {");
    line("  " + P + " = recv from (rank + 1 - 2 * (rank % 2)) : " + Got +
         " when rank < world - world % 2");
    line("  send " + S.Name + " to (rank + 1 - 2 * (rank % 2)) when rank < world - world % 2");
    line("}");
    Conditional.push_back(P);
    break;
  case 7: // a ring over two blocks: the first never completes, a deadlock
    line("p2p {");
    line("  send " + S.Name + " to ((rank + 1) % world)");
    line("}");
    line("p2p {");
    line("  " + P + " = recv from ((rank - 1) % world) : " + Got);
    line("}");
    break;
  }
}

void ShapeBuilder::use() {
  std::string Args;
  unsigned K = 1 + unsigned(pick(3));
  for (unsigned I = 0; I != K; ++I)
    Args += (I ? ", " : "") + Pool[pick(Pool.size())].Name;
  // Now and then a value that only some ranks define.
  if (!Conditional.empty() && chance(15))
    Args += ", " + Conditional[pick(Conditional.size())];
  line("compute @use" + std::to_string(N++) + "(" + Args + ") cost(5us)");
}

void ShapeBuilder::flushWaits(bool All) {
  std::vector<Pending> Keep;
  for (Pending &W : Waits) {
    if (!All && chance(50)) {
      Keep.push_back(std::move(W));
      continue;
    }
    line("wait " + W.Name + when(W.Pred));
    if (W.Token)
      continue;
    if (W.Reusable)
      Pool.push_back({W.Name, W.Type});
    else if (!W.Pred.empty())
      Conditional.push_back(W.Name);
  }
  Waits = std::move(Keep);
}

ProgramShape ShapeBuilder::build() {
  size_t NumGroups = 1 + pick(3);
  for (size_t I = 0; I != NumGroups; ++I) {
    // The first is the world half of the time, so most programs can run.
    size_t K = I == 0 && chance(50) ? 0 : pick(groupKinds().size());
    Groups.push_back(K);
    line("group @g" + std::to_string(I) + " = " + groupKinds()[K].Def);
  }
  compute();
  compute();
  unsigned Items = 2 + unsigned(pick(8));
  for (unsigned I = 0; I != Items; ++I) {
    unsigned R = unsigned(pick(100));
    if (R < 15)
      compute();
    else if (R < 70)
      collective();
    else if (R < 82)
      pointToPoint();
    else if (R < 92)
      use();
    else
      flushWaits(false);
  }
  flushWaits(true);
  return std::move(Shape);
}

ProgramShape ProgramShape::generate(uint64_t Seed) { return ShapeBuilder(Seed).build(); }

std::string ProgramShape::text(int64_t World) const {
  std::string Ones;
  for (int64_t I = 0; I != World; ++I) {
    Ones += I ? ", [" : "[";
    for (int64_t J = 0; J != World; ++J)
      Ones += J ? ", 1" : "1";
    Ones += "]";
  }
  std::string Matrix = "[" + Ones + "]";
  std::string Out =
      "program @prop" + std::to_string(Seed) + " world(" + std::to_string(World) + ") {\n";
  for (const std::string &L : Lines) {
    std::string S = L;
    if (size_t At = S.find("$M"); At != std::string::npos)
      S.replace(At, 2, Matrix);
    Out += S + "\n";
  }
  return Out + "}\n";
}

} // namespace collc::property
