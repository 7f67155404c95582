//===- runtime/mpi/EagerLimit.cpp - How much one eager message carries ----===//

#include "runtime/mpi/EagerLimit.h"

#include <mpi.h>

#include <cstring>

namespace collc::rt::mpi {

namespace {

/// Room left in the eager limit for the transport's and the matching
/// layer's headers.
constexpr uint64_t HeaderMargin = 64;

/// Control variable \p Name as an unsigned number, or 0.
uint64_t readSize(const char *Name) {
  int Index = -1;
  if (MPI_T_cvar_get_index(Name, &Index) != MPI_SUCCESS)
    return 0;
  char Text[256], Desc[1024];
  int NameLen = sizeof(Text), DescLen = sizeof(Desc), Verbosity = 0, Bind = 0, Scope = 0;
  MPI_Datatype Type = MPI_DATATYPE_NULL;
  MPI_T_enum Enum;
  if (MPI_T_cvar_get_info(Index, Text, &NameLen, &Verbosity, &Type, &Enum, Desc, &DescLen, &Bind,
                          &Scope) != MPI_SUCCESS)
    return 0;
  MPI_T_cvar_handle Handle;
  int Count = 0;
  if (MPI_T_cvar_handle_alloc(Index, nullptr, &Handle, &Count) != MPI_SUCCESS)
    return 0;
  alignas(8) unsigned char Raw[64] = {};
  uint64_t Value = 0;
  if (Count == 1 && MPI_T_cvar_read(Handle, Raw) == MPI_SUCCESS) {
    if (Type == MPI_INT || Type == MPI_UNSIGNED) {
      unsigned V;
      std::memcpy(&V, Raw, sizeof(V));
      Value = Type == MPI_INT && int(V) < 0 ? 0 : V;
    } else if (Type == MPI_UNSIGNED_LONG || Type == MPI_UNSIGNED_LONG_LONG || Type == MPI_LONG ||
               Type == MPI_LONG_LONG) {
      int64_t V;
      std::memcpy(&V, Raw, sizeof(V));
      Value = V < 0 ? 0 : uint64_t(V);
    }
  }
  MPI_T_cvar_handle_free(&Handle);
  return Value;
}

uint64_t readEagerPayload() {
  // Open MPI's MPI_T_init_thread sets the process's thread level to the
  // one asked for (not only the tool interface's): ask for what MPI_Init gave.
  int Level = MPI_THREAD_SINGLE, Provided = 0;
  MPI_Query_thread(&Level);
  if (MPI_T_init_thread(Level, &Provided) != MPI_SUCCESS)
    return 0;
  uint64_t Limit = readSize("btl_vader_eager_limit");
  if (Limit == 0)
    Limit = readSize("btl_sm_eager_limit");
  MPI_T_finalize();
  return Limit > HeaderMargin ? Limit - HeaderMargin : 0;
}

} // namespace

uint64_t sharedMemoryEagerPayload() {
  static const uint64_t Payload = readEagerPayload();
  return Payload;
}

} // namespace collc::rt::mpi
