// Typed messages: shipping round trips, flattening for sums, and rejection of damaged bytes.
#include "schmp/message.hpp"

#include <gtest/gtest.h>

#include "schmp/program.hpp"

namespace schmp {
namespace {

struct Inner {
  std::string name;
  std::vector<std::int32_t> ids;
  template <class V>
  void visit(V& v) {
    v(name, ids);
  }
};

struct Outer {
  std::uint8_t flag = 0;
  double value = 0;
  std::vector<double> values;
  std::vector<Inner> inners;
  Bytes raw;
  template <class V>
  void visit(V& v) {
    v(flag, value, values, inners, raw);
  }
};

struct Summed {
  double scalar = 0;
  std::vector<double> vector;
  std::int64_t count = 0;
  template <class V>
  void visit(V& v) {
    v(scalar, vector, count);
  }
};

TEST(Message, RoundTrip) {
  Outer out{3, -2.5, {1, 2, 3}, {{"a", {1, -2}}, {"", {}}}, {std::byte{7}, std::byte{0}}};
  const Bytes bytes = serialize(out);
  const Outer back = deserialize<Outer>(bytes);
  EXPECT_EQ(back.flag, 3);
  EXPECT_EQ(back.value, -2.5);
  EXPECT_EQ(back.values, out.values);
  ASSERT_EQ(back.inners.size(), 2u);
  EXPECT_EQ(back.inners[0].name, "a");
  EXPECT_EQ(back.inners[0].ids, (std::vector<std::int32_t>{1, -2}));
  EXPECT_EQ(back.raw, out.raw);
  const Schedule schedule = deserialize<Schedule>(serialize(Schedule{9, {4, 5}}));
  EXPECT_EQ(schedule.round, 9u);
  EXPECT_EQ(schedule.params, (std::vector<ParamIndex>{4, 5}));
}

TEST(Message, DamagedBytesAreRejected) {
  Bytes bytes = serialize(Outer{1, 1, {1, 2}, {}, {}});
  Bytes truncated(bytes.begin(), bytes.end() - 3);
  EXPECT_THROW(deserialize<Outer>(truncated), MessageError);
  bytes.push_back(std::byte{0});
  EXPECT_THROW(deserialize<Outer>(bytes), MessageError);
}

TEST(Message, FlattenKeepsShapeAndNumbers) {
  const Flat flat = flatten(Summed{1.5, {2, 3}, 4});
  EXPECT_EQ(flat.shape, (std::vector<std::uint64_t>{2}));
  EXPECT_EQ(flat.values, (std::vector<double>{1.5, 2, 3, 4}));
  Flat doubled = flat;
  for (double& v : doubled.values) v *= 2;  // what a sum over two equal workers gives
  const Summed back = unflatten<Summed>(doubled);
  EXPECT_EQ(back.scalar, 3.0);
  EXPECT_EQ(back.vector, (std::vector<double>{4, 6}));
  EXPECT_EQ(back.count, 8);
  Flat wrong = flat;
  wrong.values.push_back(1);
  EXPECT_THROW(unflatten<Summed>(wrong), MessageError);
}

}  // namespace
}  // namespace schmp
