//===- runtime/shm/TeamLayout.h - What a team's segment holds, and where -*- C++ -*-===//
//
// A team is the processes of one group on one host; they meet in one
// segment: a header, a slot per member (its arrival and completion
// counters, what it brings to each collective, a mailbox line for tiny
// payloads, two inline buffers), a table of all_to_all_v counts per
// member, a channel per ordered pair of members for send/recv, and two
// staging buffers per member for operands outside shared memory.
//
// Every member computes the layout from the team's size and the agreed
// sizes; no size or offset is ever read from the segment, which any member
// can write (TeamHeader's fields are compared with the layout's when a
// member adopts the segment, to refuse a foreign or corrupt one, and never
// used).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_SHM_TEAMLAYOUT_H
#define COLLC_RUNTIME_SHM_TEAMLAYOUT_H

#include "runtime/local/Doorbell.h"

#include "llvm/Support/Error.h"

#include <atomic>
#include <cstdint>

namespace collc::rt::shm {

/// A team never has more members than this (a host's processes of a group).
constexpr uint32_t MaxTeamMembers = 1024;

/// Where one member's operand is: in the member's staging buffer for the
/// collective (Arena 0: where, every member computes from the layout), or
/// at Offset in the shared arena Arena (SharedArena.h), Bytes long.
struct OperandRef {
  uint64_t Arena = 0;
  uint64_t Offset = 0;
  uint64_t Bytes = 0;
};

/// What a member brings to one collective, as it lies in shared memory.
struct SharedPost {
  uint8_t Code = 0, Elem = 0, Op = 0;
  /// PostFlags.
  uint8_t Flags = 0;
  int32_t Root = -1;
  double Scale = 1.0;
  /// Elements as the op defines them; all_to_all_v: the elements it sends.
  uint64_t Count = 0;
  OperandRef Src, Dst;
};
enum PostFlags : uint8_t {
  /// It has a source (a broadcast's non-root and a barrier have none).
  HasSource = 1,
  /// Its operands are in its staging buffer (else in an arena).
  Staged = 2,
};

/// The latency path: what the op is and up to 32 bytes of it, in one line.
struct alignas(64) Mailbox {
  std::atomic<uint64_t> Seq{0};
  uint8_t Code = 0, Elem = 0, Op = 0, Pad = 0;
  int32_t Root = -1;
  uint64_t Count = 0;
  double Scale = 1.0;
  char Data[32];
};
static_assert(sizeof(Mailbox) == 64, "a mailbox is one cache line");

struct alignas(64) MemberSlot {
  std::atomic<uint64_t> Arrived{0};
  std::atomic<uint64_t> Done{0};
  alignas(64) SharedPost Posts[2];
  Mailbox Boxes[2];
  static constexpr uint64_t InlineBytes = 1024;
  alignas(64) char Inline[2][InlineBytes];
};

/// One direction between two members: the sender posts pieces of a
/// message, the receiver takes them.
struct alignas(64) ChannelHead {
  std::atomic<uint64_t> Posted{0}; ///< pieces posted (the sender's)
  std::atomic<uint64_t> Taken{0};  ///< pieces taken (the receiver's)
  uint64_t MessageBytes = 0;       ///< of the whole message (every piece says it)
  uint64_t PieceBytes = 0;         ///< in the data area now
  uint8_t Elem = 0;
  /// Set by the receiver with Taken: it refused the message (its size or
  /// type differ), wanting WantedBytes of WantedElem.
  uint8_t Refused = 0, WantedElem = 0;
  uint64_t WantedBytes = 0;
};

constexpr uint64_t TeamMagic = 0x31736d73636c6f63ull; // "collcsm1"
constexpr uint32_t TeamVersion = 1;

struct TeamHeader {
  uint64_t Magic = 0;
  uint32_t Version = 0;
  uint32_t Members = 0;
  uint64_t Nonce[2] = {0, 0};
  uint64_t Bytes = 0, StagingBytes = 0, ChannelBytes = 0;
  alignas(64) local::Doorbell Bell;
  /// The team's first failure: 0 none, 1 being written, 2 written.
  alignas(64) std::atomic<uint32_t> FailState{0};
  uint32_t FailKind = 0;
  int32_t FailRank = -1;
  char FailWhy[244] = {0};
};

struct TeamLayout {
  uint32_t Members = 0;
  uint64_t StagingBytes = 0; ///< per member and parity
  uint64_t ChannelBytes = 0; ///< of data, per ordered pair
  uint64_t Slots = 0, Counts = 0, Channels = 0, Staging = 0, Bytes = 0;

  /// The layout of a team of \p Members, with stagingBytes() and the
  /// channel size channelBytesFor(Members) unless given.
  static llvm::Expected<TeamLayout> of(uint32_t Members, uint64_t StagingBytes = 0,
                                       uint64_t ChannelBytes = 0);
  static constexpr uint64_t DefaultStagingBytes = uint64_t(4) << 20;
  /// COLLC_SHM_STAGING_BYTES (a multiple of 64 KiB, 64 KiB to 1 GiB: for
  /// tests of the staged rounds and for measuring), else
  /// DefaultStagingBytes; an error naming the variable when malformed. The
  /// members of a team must agree (a segment of another layout is refused).
  static llvm::Expected<uint64_t> stagingBytes();
  /// 64 KiB a channel, less where members are many (16 MiB of channels at most).
  static uint64_t channelBytesFor(uint32_t Members);

  uint64_t slot(uint32_t R) const { return Slots + uint64_t(R) * sizeof(MemberSlot); }
  /// Member R's all_to_all_v counts (its sends, then its receives: 2 x
  /// Members words) for collective \p Seq.
  uint64_t counts(uint32_t R, uint64_t Seq) const {
    return Counts + (uint64_t(R) * 2 + (Seq & 1)) * 2 * Members * sizeof(uint64_t);
  }
  uint64_t channel(uint32_t From, uint32_t To) const {
    return Channels + (uint64_t(From) * Members + To) * (sizeof(ChannelHead) + ChannelBytes);
  }
  uint64_t channelData(uint32_t From, uint32_t To) const {
    return channel(From, To) + sizeof(ChannelHead);
  }
  /// Member R's staging buffer for collective (or round) \p Seq.
  uint64_t staging(uint32_t R, uint64_t Seq) const {
    return Staging + (uint64_t(R) * 2 + (Seq & 1)) * StagingBytes;
  }
};

} // namespace collc::rt::shm

#endif
