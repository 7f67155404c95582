//===- compiler/dump/JSONWriter.cpp - Streaming JSON output -------------===//

#include "compiler/dump/JSONWriter.h"

#include "llvm/Support/Format.h"

#include <charconv>
#include <cmath>

namespace collc {

void JSONWriter::newline() {
  if (!Indent)
    return;
  OS << '\n';
  OS.indent(unsigned(Stack.size()) * Indent);
}

void JSONWriter::beforeValue() {
  if (AfterKey) {
    AfterKey = false;
    return;
  }
  if (!Stack.empty()) {
    if (!Stack.back().Empty)
      OS << ',';
    Stack.back().Empty = false;
    newline();
  }
}

void JSONWriter::open(char C, bool Object) {
  beforeValue();
  OS << C;
  Stack.push_back({Object});
}

void JSONWriter::close(char C) {
  bool Empty = Stack.back().Empty;
  Stack.pop_back();
  if (!Empty)
    newline();
  OS << C;
}

void JSONWriter::attributeBegin(llvm::StringRef Key) {
  beforeValue();
  writeString(Key);
  OS << (Indent ? ": " : ":");
  AfterKey = true;
}

void JSONWriter::value(double D) {
  if (!std::isfinite(D))
    return scalar("null");
  char Buf[64];
  auto [End, Ec] = std::to_chars(Buf, Buf + sizeof(Buf), D); // shortest round trip
  scalar(llvm::StringRef(Buf, size_t(End - Buf)));
}

void JSONWriter::value(llvm::StringRef S) {
  beforeValue();
  writeString(S);
}

// JSON's escaping (RFC 8259: \uXXXX for control characters), deliberately
// apart from ir/Quoting.h, which spells collc's own text formats.
void JSONWriter::writeString(llvm::StringRef S) {
  OS << '"';
  for (unsigned char C : S) {
    switch (C) {
    case '"':
      OS << "\\\"";
      break;
    case '\\':
      OS << "\\\\";
      break;
    case '\n':
      OS << "\\n";
      break;
    case '\t':
      OS << "\\t";
      break;
    case '\r':
      OS << "\\r";
      break;
    default:
      if (C < 0x20)
        OS << llvm::format("\\u%04x", C);
      else
        OS << C;
    }
  }
  OS << '"';
}

} // namespace collc
