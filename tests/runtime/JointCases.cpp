//===- tests/runtime/JointCases.cpp - Rank-conditional collectives ---------===//
//
// The cases are generated: every collective kind, reduce ops, element
// types and the usual ways to split ranks (the root alone, parities, the
// last rank alone, three ways) at worlds 2 to 4, then the shapes that need
// a program of their own (subgroups, waits in different orders, send/recv
// beside them) and the mismatches MPI would hang or fail on.
//
//===----------------------------------------------------------------------===//

#include "tests/runtime/JointCases.h"

#include "llvm/Support/FormatVariadic.h"

#include <functional>

using llvm::formatv;

namespace collc::test {

namespace {

/// The ranks' `when`s, each rank in exactly one: how a program splits one
/// collective into rank-conditional ops.
struct Split {
  const char *Name;
  std::vector<std::string> Whens;
};

std::vector<Split> splitsFor(int64_t W) {
  std::vector<Split> S = {
      {"root-alone", {"rank == 0", "rank != 0"}},
      {"parity", {"rank % 2 == 0", "rank % 2 == 1"}},
      {"last-alone", {formatv("rank < {0}", W - 1), formatv("rank == {0}", W - 1)}},
  };
  if (W >= 3)
    S.push_back({"three-ways", {"rank == 0", "rank == 1", "rank >= 2"}});
  return S;
}

/// One collective of kind \p Op (its text after `%r = `, with `$IN` for
/// the operand) over \p InType -> its result, spelled as one op per `when`
/// of \p S, each side with a tensor of its own; every side's result is used
/// on its side.
std::string spelledAsSides(int64_t W, const Split &S, const std::string &Op,
                           const std::string &InType) {
  std::string P = formatv("program @joint world({0}) {{\n  group @dp = world\n", W);
  for (size_t K = 0; K != S.Whens.size(); ++K)
    P += formatv("  %x{0} = compute @make{0} : {1} when {2}\n", K, InType, S.Whens[K]);
  for (size_t K = 0; K != S.Whens.size(); ++K) {
    std::string Body = Op;
    size_t At = Body.find("$IN");
    if (At != std::string::npos)
      Body.replace(At, 3, "%x" + std::to_string(K));
    P += formatv("  %r{0} = {1} when {2}\n", K, Body, S.Whens[K]);
  }
  for (size_t K = 0; K != S.Whens.size(); ++K)
    P += formatv("  compute @use{0}(%r{0}) when {1}\n", K, S.Whens[K]);
  return P + "}\n";
}

/// The collectives of the generated matrix: kind, its op text, its input
/// type (each a function of the world), which element types it is tried on.
struct Kind {
  std::string Name;
  std::function<std::string(int64_t W)> Op, InType;
  std::vector<const char *> Elems;
};

std::string elemOf(const char *Elem, const std::string &Type) {
  return std::string(Elem) + Type;
}

void addMatrix(std::vector<JointCase> &Out) {
  std::vector<Kind> Kinds;
  for (const char *Reduce : {"sum", "prod", "min", "max"})
    Kinds.push_back({formatv("all_reduce-{0}", Reduce).str(),
                     [=](int64_t) { return formatv("all_reduce {0} $IN in @dp", Reduce).str(); },
                     [](int64_t) { return std::string("[16]"); },
                     {"f32", "i32", "bf16"}});
  // avg and premul_sum on floating types, as NCCL takes them.
  Kinds.push_back({"all_reduce-avg", [](int64_t) { return std::string("all_reduce avg $IN in @dp"); },
                   [](int64_t) { return std::string("[16]"); }, {"f32", "f64", "f16"}});
  Kinds.push_back({"all_reduce-premul_sum",
                   [](int64_t) { return std::string("all_reduce premul_sum(0.5) $IN in @dp"); },
                   [](int64_t) { return std::string("[16]"); }, {"f32", "f64"}});
  Kinds.push_back({"reduce_scatter-sum",
                   [](int64_t) { return std::string("reduce_scatter sum $IN in @dp"); },
                   [](int64_t W) { return formatv("[{0}]", 4 * W).str(); }, {"f32", "i64"}});
  Kinds.push_back({"reduce_scatter-max",
                   [](int64_t) { return std::string("reduce_scatter max $IN in @dp"); },
                   [](int64_t W) { return formatv("[{0}, 3]", 2 * W).str(); }, {"u8", "f16"}});
  Kinds.push_back({"all_gather", [](int64_t) { return std::string("all_gather $IN in @dp"); },
                   [](int64_t) { return std::string("[8]"); }, {"f32", "u8", "f8e5m2", "bf16"}});
  Kinds.push_back({"broadcast-root0",
                   [](int64_t) { return std::string("broadcast $IN root 0 in @dp"); },
                   [](int64_t) { return std::string("[16]"); }, {"f32", "i8"}});
  Kinds.push_back({"broadcast-last-root",
                   [](int64_t W) { return formatv("broadcast $IN root {0} in @dp", W - 1).str(); },
                   [](int64_t) { return std::string("[5, 3]"); }, {"f64", "u32"}});
  Kinds.push_back({"all_to_all", [](int64_t) { return std::string("all_to_all $IN in @dp"); },
                   [](int64_t W) { return formatv("[{0}]", 4 * W).str(); }, {"f32", "i32"}});
  Kinds.push_back({"all_to_all_v",
                   [](int64_t W) {
                     // Two rows from every rank to every rank.
                     std::string M = "[";
                     for (int64_t I = 0; I != W; ++I) {
                       M += I ? ", [" : "[";
                       for (int64_t J = 0; J != W; ++J)
                         M += J ? ", 2" : "2";
                       M += "]";
                     }
                     return formatv("all_to_all_v $IN in @dp splits {0}]", M).str();
                   },
                   [](int64_t W) { return formatv("[{0}, 3]", 2 * W).str(); }, {"f32", "u64"}});
  size_t Turn = 0;
  for (int64_t W = 2; W <= 4; ++W) {
    std::vector<Split> Splits = splitsFor(W);
    for (const Kind &K : Kinds) {
      // One case per kind and world: the element types and splits rotate.
      const Split &S = Splits[Turn % Splits.size()];
      const char *Elem = K.Elems[Turn % K.Elems.size()];
      ++Turn;
      std::string Op = K.Op(W);
      // all_to_all_v writes its result type: the receive capacity.
      if (K.Name == "all_to_all_v")
        Op += " : " + elemOf(Elem, K.InType(W));
      Out.push_back({formatv("{0}/{1}/{2}/world{3}", K.Name, Elem, S.Name, W), W,
                     spelledAsSides(W, S, Op, elemOf(Elem, K.InType(W))),
                     "runs: every rank calls the collective once, through its own buffer", true,
                     {}});
    }
    // A barrier: no tensors, every split.
    for (const Split &S : Splits) {
      std::string P = formatv("program @joint world({0}) {{\n  group @dp = world\n", W);
      for (const std::string &When : S.Whens)
        P += "  barrier in @dp when " + When + "\n";
      Out.push_back({formatv("barrier/{0}/world{1}", S.Name, W), W, P + "}\n",
                     "runs: every rank calls MPI_Barrier once", true, {}});
    }
  }
}

/// Programs of their own: what the matrix cannot say.
void addShapes(std::vector<JointCase> &Out) {
  for (int64_t W = 2; W <= 4; ++W) {
    // The same count in different shapes on the two sides.
    Out.push_back({formatv("shapes-differ/world{0}", W), W,
                   formatv(R"(program @shapes world({0}) {{
  group @dp = world
  %x = compute @flat : f32[16] when rank == 0
  %y = compute @square : f32[4, 4] when rank != 0
  %a = all_reduce sum %x in @dp when rank == 0
  %b = all_reduce sum %y in @dp when rank != 0
  compute @use(%a) when rank == 0
  compute @use2(%b) when rank != 0
}
)",
                           W),
                   "runs: MPI pairs buffers by count and type, not by shape", true, {}});
    // A joint collective whose result feeds an ordinary one, and an ordinary
    // one whose result feeds a joint one.
    Out.push_back({formatv("chained/world{0}", W), W,
                   formatv(R"(program @chained world({0}) {{
  group @dp = world
  %g = compute @grad : f32[32]
  %s = all_reduce sum %g in @dp
  %a = all_reduce max %s in @dp when rank == 0
  %h = compute @other(%s) : f32[32] when rank != 0
  %b = all_reduce max %h in @dp when rank != 0
  %ga = all_gather %a in @dp when rank == 0
  %gb = all_gather %b in @dp when rank != 0
  compute @use(%ga) when rank == 0
  compute @use2(%gb) when rank != 0
}
)",
                           W),
                   "runs: each rank's calls agree one by one", true, {}});
    // The launches agree; each rank waits in its own order.
    Out.push_back({formatv("async-waits-in-different-orders/world{0}", W), W,
                   formatv(R"(program @waits world({0}) {{
  group @dp = world
  %x = compute @x : f32[64]
  %y = compute @y : f32[64]
  %a = all_reduce async sum %x in @dp
  %b = all_gather async %y in @dp
  wait %a when rank == 0
  compute @early(%a) when rank == 0
  wait %b when rank == 0
  wait %b when rank != 0
  compute @early2(%b) when rank != 0
  wait %a when rank != 0
  compute @late(%a, %b)
}
)",
                           W),
                   "runs: MPI_Iallreduce and MPI_Iallgather start in one order everywhere; "
                   "MPI_Wait may complete them in any order",
                   true, {}});
    // Joint and async: each side waits where it needs its result.
    Out.push_back({formatv("joint-async-waits/world{0}", W), W,
                   formatv(R"(program @joint_async world({0}) {{
  group @dp = world
  %x = compute @x : f32[64] when rank == 0
  %y = compute @y : f32[64] when rank != 0
  %z = compute @z : f32[8]
  %a = all_reduce async sum %x in @dp when rank == 0
  %b = all_reduce async sum %y in @dp when rank != 0
  %c = all_gather async %z in @dp
  wait %c when rank == 0
  wait %a when rank == 0
  wait %b when rank != 0
  compute @mid(%b) when rank != 0
  wait %c when rank != 0
  compute @use(%a, %c) when rank == 0
  compute @use2(%b, %c) when rank != 0
}
)",
                           W),
                   "runs: the nonblocking calls start in one order on every rank", true, {}});
    // One side blocking, the other async.
    Out.push_back({formatv("blocking-and-async-sides/world{0}", W), W,
                   formatv(R"(program @mixed world({0}) {{
  group @dp = world
  %x = compute @x : f32[64] when rank % 2 == 0
  %y = compute @y : f32[64] when rank % 2 == 1
  %a = all_reduce sum %x in @dp when rank % 2 == 0
  %b = all_reduce async sum %y in @dp when rank % 2 == 1
  compute @busy when rank % 2 == 1
  wait %b when rank % 2 == 1
  compute @use(%a) when rank % 2 == 0
  compute @use2(%b) when rank % 2 == 1
}
)",
                           W),
                   "runs: MPI_Allreduce on some ranks matches MPI_Iallreduce on others", true,
                   {}});
    // Joint collectives between sends and recvs: a ring in a p2p block.
    Out.push_back({formatv("with-a-ring/world{0}", W), W,
                   formatv(R"(program @ring world({0}) {{
  group @dp = world
  %x = compute @x : f32[32] when rank == 0
  %y = compute @y : f32[32] when rank != 0
  %a = all_reduce sum %x in @dp when rank == 0
  %b = all_reduce sum %y in @dp when rank != 0
  %s = compute @s : f32[32]
  p2p {{
    send %s to ((rank + 1) % world)
    %p = recv from ((rank - 1) % world) : f32[32]
  }
  %c = all_gather %p in @dp when rank == 0
  %d = all_gather %p in @dp when rank != 0
  compute @use(%a, %c) when rank == 0
  compute @use2(%b, %d) when rank != 0
}
)",
                           W),
                   "runs: the ring's sends and recvs match; the collectives around it agree",
                   true, {}});
    // A pipeline hop between the two sides' collectives.
    Out.push_back({formatv("with-a-pipeline-hop/world{0}", W), W,
                   formatv(R"(program @hop world({0}) {{
  group @dp = world
  %x = compute @x : f32[16]
  send %x to (rank + 1) when rank < {1}
  %h = recv from (rank - 1) : f32[16] when rank > 0
  %a = all_reduce sum %x in @dp when rank == 0
  %b = all_reduce sum %h in @dp when rank > 0
  compute @use(%a) when rank == 0
  compute @use2(%b) when rank > 0
}
)",
                           W, W - 1),
                   "runs: each rank receives from the one before it, then all reduce", true,
                   {}});
  }
  // Two same-shape collectives that the ranks issue in swapped order: the
  // first of each rank meet, then the second.
  Out.push_back({"swapped-order/world2", 2, R"(program @swapped world(2) {
  group @dp = world
  %a = compute @x : f32[16]
  %b = compute @y : f32[16]
  %x0 = all_reduce sum %a in @dp when rank == 0
  %y0 = all_reduce sum %b in @dp when rank == 0
  %y1 = all_reduce sum %b in @dp when rank == 1
  %x1 = all_reduce sum %a in @dp when rank == 1
  compute @use(%x0, %y0) when rank == 0
  compute @use2(%y1, %x1) when rank == 1
}
)",
                 "runs: MPI pairs calls by position (x0 with y1, then y0 with x1)", true, {}});
  Out.push_back({"swapped-order-by-parity/world4", 4, R"(program @swapped world(4) {
  group @dp = world
  %a = compute @x : bf16[16]
  %b = compute @y : bf16[16]
  %x0 = all_reduce max %a in @dp when rank % 2 == 0
  %y0 = all_reduce max %b in @dp when rank % 2 == 0
  %y1 = all_reduce max %b in @dp when rank % 2 == 1
  %x1 = all_reduce max %a in @dp when rank % 2 == 1
  compute @use(%x0, %y0) when rank % 2 == 0
  compute @use2(%y1, %x1) when rank % 2 == 1
}
)",
                 "runs: MPI pairs calls by position", true, {}});
  // Subgroups: ranks pair within each subgroup; one subgroup may use one op.
  Out.push_back({"subgroups-parity/world4", 4, R"(program @pairs world(4) {
  group @pairs = split(rank / 2, rank)
  %x = compute @x : f32[16] when rank % 2 == 0
  %y = compute @y : f32[16] when rank % 2 == 1
  %a = all_reduce sum %x in @pairs when rank % 2 == 0
  %b = all_reduce sum %y in @pairs when rank % 2 == 1
  compute @use(%a) when rank % 2 == 0
  compute @use2(%b) when rank % 2 == 1
}
)",
                 "runs: in each pair, one rank calls through %x, the other through %y", true,
                 {}});
  Out.push_back({"subgroups-one-joint/world4", 4, R"(program @pairs world(4) {
  group @pairs = split(rank / 2, rank)
  %x = compute @x : f32[8] when rank < 3
  %y = compute @y : f32[8] when rank == 3
  %a = all_gather %x in @pairs when rank < 3
  %b = all_gather %y in @pairs when rank == 3
  compute @use(%a) when rank < 3
  compute @use2(%b) when rank == 3
}
)",
                 "runs: ranks 0 and 1 call with %x; rank 2 with %x and rank 3 with %y", true,
                 {}});
  Out.push_back({"subgroups-split-group/world4", 4, R"(program @tp world(4) {
  group @tp = split(rank % 2, rank)
  %x = compute @x : f32[8] when rank < 2
  %y = compute @y : f32[8] when rank >= 2
  %a = reduce_scatter sum %x in @tp when rank < 2
  %b = reduce_scatter sum %y in @tp when rank >= 2
  compute @use(%a) when rank < 2
  compute @use2(%b) when rank >= 2
}
)",
                 "runs: ranks 0 and 2 (and 1 and 3) each call once, through different buffers",
                 true, {}});
  // DDP-like: gradients on both sides, some joint, bucketed around them.
  for (int64_t W : {2, 4})
    Out.push_back({formatv("among-buckets/world{0}", W), W,
                   formatv(R"(program @ddp world({0}) {{
  group @dp = world
  %g0 = compute @g0 : f32[256]
  %g1 = compute @g1 : f32[256]
  %r0 = all_reduce avg %g0 in @dp
  %r1 = all_reduce avg %g1 in @dp
  %e = compute @emb : f32[128] when rank == 0
  %f = compute @emb2 : f32[128] when rank != 0
  %re = all_reduce avg %e in @dp when rank == 0
  %rf = all_reduce avg %f in @dp when rank != 0
  %g2 = compute @g2 : f32[256]
  %r2 = all_reduce avg %g2 in @dp
  compute @optimizer(%r0, %r1, %r2)
  compute @opt_e(%re) when rank == 0
  compute @opt_f(%rf) when rank != 0
}
)",
                           W),
                   "runs: every rank makes five MPI_Allreduce calls in one order", true, {}});
  // Fused ops on each side (two tensors each).
  for (int64_t W : {2, 3})
    Out.push_back({formatv("fused-sides/world{0}", W), W,
                   formatv(R"(program @fused world({0}) {{
  group @dp = world
  %x = compute @x : f32[16] when rank == 0
  %y = compute @y : f32[4] when rank == 0
  %z = compute @z : f32[16] when rank != 0
  %w = compute @w : f32[4] when rank != 0
  %a, %b = all_reduce sum %x, %y in @dp when rank == 0
  %c, %d = all_reduce sum %z, %w in @dp when rank != 0
  compute @use(%a, %b) when rank == 0
  compute @use2(%c, %d) when rank != 0
}
)",
                           W),
                   "runs: as two MPI_Allreduce calls on each rank, paired in order", true, {}});
}

/// What MPI would hang or fail on: refused, naming ranks and ops.
void addMismatches(std::vector<JointCase> &Out) {
  for (int64_t W = 3; W <= 4; ++W)
    Out.push_back({formatv("a-rank-issues-neither/world{0}", W), W,
                   formatv(R"(program @neither world({0}) {{
  group @dp = world
  %x = compute @x : f32[16]
  %a = all_reduce sum %x in @dp when rank == 0
  %b = all_reduce sum %x in @dp when rank == 1
}
)",
                           W),
                   "hangs: rank 2 never calls MPI_Allreduce; ranks 0 and 1 wait for it", false,
                   {"rank 0 waits in all_reduce sum %x", "rank 2 finishes its program without "
                                                         "issuing this collective"}});
  for (int64_t W = 2; W <= 4; ++W)
    Out.push_back({formatv("a-rank-issues-both/world{0}", W), W,
                   formatv(R"(program @both world({0}) {{
  group @dp = world
  %x = compute @x : f32[16]
  %a = all_reduce sum %x in @dp when rank == 0
  %b = all_reduce sum %x in @dp when rank <= {1}
}
)",
                           W, W - 1),
                   "hangs: rank 0 calls MPI_Allreduce twice, the others once", false,
                   {"rank 0 waits in all_reduce sum %x", "finishes its program without issuing "
                                                         "this collective"}});
  struct Differ {
    const char *What, *A, *B, *Mention, *Mpi;
  };
  const Differ Differs[] = {
      {"counts", "%a = all_reduce sum %x in @dp when rank == 0",
       "%b = all_reduce sum %y in @dp when rank != 0", "element count",
       "fails: the ranks pass different counts to MPI_Allreduce (truncation or a hang)"},
      {"dtypes", "%a = all_reduce sum %x in @dp when rank == 0",
       "%b = all_reduce sum %h in @dp when rank != 0", "element type",
       "fails: the ranks pass different datatypes to MPI_Allreduce"},
      {"reduce-ops", "%a = all_reduce sum %x in @dp when rank == 0",
       "%b = all_reduce max %z in @dp when rank != 0", "reduce op",
       "fails: MPI_Allreduce with different ops is erroneous (mixed results)"},
      {"kinds", "%a = all_reduce sum %x in @dp when rank == 0",
       "%b = all_gather %z in @dp when rank != 0", "kind",
       "hangs: MPI_Allreduce on one rank meets MPI_Allgather on the others"},
      {"premul-scales", "%a = all_reduce premul_sum(0.5) %x in @dp when rank == 0",
       "%b = all_reduce premul_sum(2.0) %z in @dp when rank != 0", "reduce op",
       "fails: the ranks scale by different factors (NCCL's premul_sum)"},
  };
  for (const Differ &D : Differs)
    for (int64_t W = 2; W <= 4; ++W)
      Out.push_back({formatv("{0}-differ/world{1}", D.What, W), W,
                     formatv(R"(program @differ world({0}) {{
  group @dp = world
  %x = compute @x : f32[16]
  %y = compute @y : f32[8]
  %h = compute @h : f16[16]
  %z = compute @z : f32[16]
  {1}
  {2}
}
)",
                             W, D.A, D.B),
                     D.Mpi, false, {"ranks 0 and 1 of @dp disagree on the", D.Mention}});
  for (int64_t W = 3; W <= 4; ++W)
    Out.push_back({formatv("roots-differ/world{0}", W), W,
                   formatv(R"(program @roots world({0}) {{
  group @dp = world
  %x = compute @x : f32[16]
  %a = broadcast %x root 0 in @dp when rank == 0
  %b = broadcast %x root 1 in @dp when rank != 0
}
)",
                           W),
                   "fails: MPI_Bcast with different roots is erroneous (a hang or garbage)",
                   false, {"ranks 0 and 1 of @dp disagree on the root (0 on rank 0, 1 on rank 1)"}});
  for (int64_t W = 2; W <= 4; W += 2)
    Out.push_back({formatv("groups-differ/world{0}", W), W,
                   formatv(R"(program @groups world({0}) {{
  group @dp = world
  group @all = world
  %x = compute @x : f32[16]
  %a = all_reduce sum %x in @dp when rank == 0
  %b = all_reduce sum %x in @all when rank != 0
}
)",
                           W),
                   "hangs: the ranks call MPI_Allreduce on different communicators", false,
                   {"deadlock: ranks wait for each other in a cycle 0 -> 1 -> 0",
                    "rank 0 waits in all_reduce sum %x : f32[16] in @dp",
                    "rank 1 waits in all_reduce sum %x : f32[16] in @all"}});
  // One op of rank 0 would meet two different ops of rank 1: MPI runs it
  // (it pairs calls by position), a plan cannot (a comm is issued once per
  // rank), so collc refuses it and says why.
  Out.push_back({"one-op-meets-two/world2", 2, R"(program @chain world(2) {
  group @dp = world
  %x = compute @x : f32[16]
  %a = all_reduce sum %x in @dp when rank == 0
  %b = all_reduce sum %x in @dp
  %c = all_reduce sum %x in @dp when rank == 1
}
)",
                 "runs: MPI pairs %a with %b, then %b with %c; collc refuses it, since %b "
                 "would be one rank's part of two collectives (write %b twice, once per "
                 "pairing)",
                 false, {"rank 0 issues both %a = all_reduce sum %x", "%b = all_reduce sum %x"}});
  // Waits: each rank waits once for what it launched, before it uses it.
  Out.push_back({"a-rank-never-waits/world2", 2, R"(program @nowait world(2) {
  group @dp = world
  %x = compute @x : f32[16]
  %a = all_reduce async sum %x in @dp
  wait %a when rank == 0
}
)",
                 "fails: rank 1's request is never completed (MPI_Finalize with a pending "
                 "request is erroneous)",
                 false, {"%a is the result of an async all_reduce that rank 1 never waits for"}});
  Out.push_back({"a-rank-waits-twice/world2", 2, R"(program @twice world(2) {
  group @dp = world
  %x = compute @x : f32[16]
  %a = all_reduce async sum %x in @dp
  wait %a
  wait %a when rank == 1
}
)",
                 "fails: MPI_Wait on a freed request is erroneous", false,
                 {"%a is waited for twice"}});
  Out.push_back({"a-rank-uses-before-its-wait/world3", 3, R"(program @early world(3) {
  group @dp = world
  %x = compute @x : f32[16]
  %a = all_reduce async sum %x in @dp
  wait %a when rank == 0
  compute @use(%a)
  wait %a when rank != 0
}
)",
                 "fails: ranks 1 and 2 read the buffer before MPI_Wait (a data race)", false,
                 {"%a is used before its `wait` on rank 1"}});
  Out.push_back({"waits-in-a-cycle-with-sends/world2", 2, R"(program @cycle world(2) {
  group @dp = world
  %x = compute @x : f32[16]
  %a = all_reduce sum %x in @dp when rank == 0
  send %x to 1 when rank == 0
  %y = recv from 0 : f32[16] when rank == 1
  %b = all_reduce sum %x in @dp when rank == 1
}
)",
                 "hangs: rank 0 sits in MPI_Allreduce while rank 1 sits in MPI_Recv", false,
                 {"deadlock: ranks wait for each other in a cycle 0 -> 1 -> 0"}});
}

} // namespace

std::vector<JointCase> jointCases() {
  std::vector<JointCase> Out;
  addMatrix(Out);
  addShapes(Out);
  addMismatches(Out);
  return Out;
}

} // namespace collc::test
