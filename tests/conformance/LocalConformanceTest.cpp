//===- tests/conformance/LocalConformanceTest.cpp - The suite on `local` ---===//

#include "tests/conformance/ConformanceSuite.h"

using LocalHarness = collc::test::DriverHarness<collc::rt::local::LocalDriver>;
COLLC_CONFORMANCE_SUITE(LocalHarness, LocalConformance);
