#include "ir/Types.h"

#include "gtest/gtest.h"

using namespace collc;

TEST(Types, NamesRoundTripForEveryElementType) {
  for (unsigned I = 0; I != NumElemTypes; ++I) {
    ElemType T = ElemType(I);
    llvm::Optional<ElemType> Back = parseElemType(elemTypeName(T));
    ASSERT_TRUE(Back.hasValue()) << elemTypeName(T).str();
    EXPECT_EQ(*Back, T);
  }
  EXPECT_FALSE(parseElemType("f33").hasValue());
  EXPECT_FALSE(parseElemType("").hasValue());
}

TEST(Types, ElementSizes) {
  EXPECT_EQ(elemTypeBytes(ElemType::F32), 4u);
  EXPECT_EQ(elemTypeBytes(ElemType::BF16), 2u);
  EXPECT_EQ(elemTypeBytes(ElemType::F64), 8u);
  EXPECT_EQ(elemTypeBytes(ElemType::F8E4M3), 1u);
  EXPECT_EQ(elemTypeBytes(ElemType::U64), 8u);
  EXPECT_TRUE(isFloatType(ElemType::F8E5M2));
  EXPECT_FALSE(isFloatType(ElemType::I32));
}

TEST(Types, TensorTypeSizesAndSpelling) {
  TensorType T(ElemType::BF16, {768, 3072});
  EXPECT_EQ(T.numElements(), 768 * 3072);
  EXPECT_EQ(T.bytes(), 768 * 3072 * 2);
  EXPECT_EQ(T.str(), "bf16[768, 3072]");
  TensorType Scalar(ElemType::F32, {});
  EXPECT_EQ(Scalar.numElements(), 1);
  EXPECT_EQ(Scalar.str(), "f32[]");
  TensorType Empty(ElemType::F32, {0, 4});
  EXPECT_EQ(Empty.bytes(), 0);
}

TEST(Types, ReduceOpNames) {
  for (ReduceOp Op : {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Min, ReduceOp::Max, ReduceOp::Avg,
                      ReduceOp::PremulSum})
    EXPECT_EQ(parseReduceOp(reduceOpName(Op)), Op);
  EXPECT_FALSE(parseReduceOp("mean").hasValue());
}

TEST(Types, ExactDoublesRoundTrip) {
  for (double V : {0.125, 1.0, 0.1, 1e-300, 123456789.0, -2.5}) {
    std::string S = formatExactDouble(V);
    double Back = 0;
    ASSERT_FALSE(llvm::StringRef(S).getAsDouble(Back)) << S;
    EXPECT_EQ(Back, V) << S;
  }
  EXPECT_EQ(formatExactDouble(1.0), "1.0");
  EXPECT_EQ(formatExactDouble(0.125), "0.125");
}
