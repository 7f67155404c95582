//===- tools/collc/BatchMalloc.h - Heap tuning for batch tools -*- C++ -*-===//
#ifndef COLLC_TOOLS_COLLC_BATCHMALLOC_H
#define COLLC_TOOLS_COLLC_BATCHMALLOC_H

namespace collc {

/// Tells glibc malloc to keep freed memory for reuse instead of returning it
/// to the system. A compile rebuilds its op table several times; with the
/// default settings each rebuild of a large table is a fresh mmap whose pages
/// are faulted in again, which on virtual machines costs more than the
/// passes themselves (a million-op compile: 7-8 s instead of 5). Only for
/// short-lived batch tools; no effect on other C libraries.
void tuneMallocForBatchWork();

} // namespace collc

#endif
