//===- runtime/diagnose/DiagnosisReport.h - A diagnosis, said -*- C++ -*-===//
//
// `collc diagnose`'s two forms. Text: the
// root cause in one paragraph first, then the culprit, where it shows, the
// evidence, what every rank was doing and what the dumps lack. JSON
// (format "collc-diagnosis", version 1): the same fields, for programs.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_DIAGNOSE_DIAGNOSISREPORT_H
#define COLLC_RUNTIME_DIAGNOSE_DIAGNOSISREPORT_H

#include "runtime/diagnose/Diagnosis.h"

#include "llvm/Support/raw_ostream.h"

namespace collc::diag {

void printDiagnosisText(const Diagnosis &D, llvm::raw_ostream &OS);
void printDiagnosisJson(const Diagnosis &D, llvm::raw_ostream &OS);

} // namespace collc::diag

#endif
