//===- ir/Verifier.h - Program well-formedness -------------------*- C++ -*-===//
//
// The verifier checks one program as every rank sees it:
//  - types and shapes of every op (inferred result types match the written
//    ones; reduce_scatter and all_to_all split dimension 0 evenly; all_gather
//    multiplies it; all_to_all_v split sizes fit both sides);
//  - values are defined once, before their uses, and on every rank where
//    they are used (an op guarded by `when` defines nothing elsewhere);
//  - for rank = 0..world-1: predicates evaluate, roots and peers are in
//    their group, nobody sends to itself;
//  - async results are waited for exactly once and not used before; a
//    `send async` token only by `wait`;
//  - `p2p { }` blocks hold contiguous sends and recvs, none async, none
//    sending what the block receives.
// Cross-rank agreement (same collective sequence, matching send/recv) is
// the check-cross-rank pass's job, not the verifier's.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_IR_VERIFIER_H
#define COLLC_IR_VERIFIER_H

#include "ir/Diagnostics.h"
#include "ir/Program.h"

#include "llvm/Support/Error.h"

namespace collc {

/// Reports every violation to \p Diags and returns an error naming how many
/// there were, or success.
llvm::Error verifyProgram(const Program &P, DiagnosticEngine &Diags);

} // namespace collc

#endif // COLLC_IR_VERIFIER_H
