//===- runtime/local/MailboxFill.h - A post's head into a mailbox -*- C++ -*-===//
//
// The local backend's threads and the shared-memory team's processes both
// mirror each post into a one-line mailbox (MeetingPoint.h, TeamLayout.h):
// a peer that took the other path (their sizes differ) still sees the
// arrival and reports the mismatch instead of timing out. The two mailboxes
// are laid out for their own homes; this fills either.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_LOCAL_MAILBOXFILL_H
#define COLLC_RUNTIME_LOCAL_MAILBOXFILL_H

#include <atomic>
#include <cstdint>
#include <cstring>

namespace collc::rt::local {

/// Writes the head of \p P and \p Bytes of \p Data into \p B, then marks it
/// collective \p Seq's (release: a reader that sees \p Seq sees the rest).
template <typename Box, typename PostT>
void fillMailbox(Box &B, const PostT &P, const char *Data, uint64_t Bytes, uint64_t Seq) {
  B.Code = uint8_t(P.Code);
  B.Elem = uint8_t(P.Elem);
  B.Op = uint8_t(P.Op);
  B.Root = int32_t(P.Root);
  B.Count = P.Count;
  B.Scale = P.Scale;
  if (Bytes)
    std::memcpy(B.Data, Data, Bytes);
  B.Seq.store(Seq, std::memory_order_release);
}

} // namespace collc::rt::local

#endif
