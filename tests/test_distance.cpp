#include <gtest/gtest.h>

#include <cmath>

#include "knn/error.hpp"
#include "knn/metric.hpp"

TEST(Distance, HandComputedValues) {
  const float a[] = {0.0f, 3.0f, 1.0f};
  const float b[] = {4.0f, 0.0f, 1.0f};
  EXPECT_EQ(knn::distance(a, b, 3, knn::Metric::l2), 5.0);
  EXPECT_EQ(knn::distance(a, b, 3, knn::Metric::l1), 7.0);
  // a.b = 1, |a| = sqrt(10), |b| = sqrt(17)
  EXPECT_DOUBLE_EQ(knn::distance(a, b, 3, knn::Metric::cosine), 1.0 - 1.0 / std::sqrt(170.0));
}

TEST(Distance, AccumulatesInDoubleFromFloatInputs) {
  // 0.1f is not 0.1: the distance is computed from the float values, exactly, in double.
  const float a[] = {0.1f};
  const float b[] = {0.0f};
  EXPECT_EQ(knn::distance(a, b, 1, knn::Metric::l2), static_cast<double>(0.1f));
  const float big[] = {3e38f, -3e38f};
  const float zero[] = {0.0f, 0.0f};
  EXPECT_TRUE(std::isfinite(knn::distance(big, zero, 2, knn::Metric::l2)));  // no float overflow
}

TEST(Distance, CosineOfAZeroRowIsOne) {
  const float z[] = {0.0f, 0.0f};
  const float a[] = {1.0f, 2.0f};
  EXPECT_EQ(knn::distance(z, a, 2, knn::Metric::cosine), 1.0);
  EXPECT_EQ(knn::distance(z, z, 2, knn::Metric::cosine), 1.0);
  EXPECT_NEAR(knn::distance(a, a, 2, knn::Metric::cosine), 0.0, 1e-15);
}

TEST(Distance, ParseNames) {
  EXPECT_EQ(knn::parse_metric("l2"), knn::Metric::l2);
  EXPECT_EQ(knn::parse_metric("manhattan"), knn::Metric::l1);
  EXPECT_EQ(knn::parse_metric("cosine"), knn::Metric::cosine);
  EXPECT_THROW(knn::parse_metric("l3"), knn::Error);
}

TEST(Error, QuoteEscapesAndCuts) {
  EXPECT_EQ(knn::quote("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\x01\"");
  EXPECT_EQ(knn::quote(std::string(45, 'x')), "\"" + std::string(40, 'x') + "...\"");
  EXPECT_EQ(knn::Error::at("f.csv", 3, 2, "bad").what(), std::string("f.csv:3:2: bad"));
  EXPECT_EQ(knn::Error::parameter("k", "bad").what(), std::string("parameter k: bad"));
}

TEST(Error, ProgramsSpellParametersAsOptions) {
  const knn::Error e = knn::Error::parameter("scaling", "conflicts with " + knn::param("metric") + " cosine");
  EXPECT_EQ(std::string(e.what()), "parameter scaling: conflicts with metric cosine");
  EXPECT_EQ(e.parameter_name(), "scaling");
  const auto flag = [](std::string_view p) { return "--" + std::string(p); };
  EXPECT_EQ(e.message(flag, [&](std::string_view p) { return "option " + flag(p); }),
            "option --scaling: conflicts with --metric cosine");
  // The detail and the name make the same error again (how ranks pass errors to each other).
  const knn::Error again = knn::Error::parameter(e.parameter_name(), e.detail());
  EXPECT_EQ(std::string(again.what()), std::string(e.what()));
  // A quoted value cannot hold a parameter's marks.
  const knn::Error q("value " + knn::quote("\x01k\x02"));
  EXPECT_EQ(q.message(flag, flag), std::string(q.what()));
}
