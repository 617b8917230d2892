// Typed messages. A message is a plain struct that lists its fields once:
//
//   struct Commit {
//     std::vector<schmp::ParamIndex> params;
//     std::vector<double> delta;
//     SCHMP_FIELDS(params, delta)
//   };
//
// SCHMP_FIELDS(...) is short for `template <class Visitor> void visit(Visitor& v) { v(params, delta); }`,
// which a message may write out instead.
//
// The framework serialises such a struct for shipping (serialize / deserialize) and, for the messages
// that are summed across workers (a program's Setup, Stats and Partial), flattens its numbers into one
// buffer so that MPI can add them up. Fields may be arithmetic scalars, std::string, std::vector of
// those, or nested messages (and vectors of them, for shipped messages). No pointers travel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#define SCHMP_FIELDS(...)        \
  template <class Visitor>       \
  void visit(Visitor& visitor) { \
    visitor(__VA_ARGS__);        \
  }

namespace schmp {

using Bytes = std::vector<std::byte>;

// Raised when received bytes do not decode as the expected message: a bug, never bad user input.
class MessageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {

template <class T>
struct IsVector : std::false_type {};
template <class T, class A>
struct IsVector<std::vector<T, A>> : std::true_type {};

template <class T>
concept Arithmetic = std::is_arithmetic_v<T>;

// Copied as raw bytes when shipped.
template <class T>
concept Trivial = std::is_arithmetic_v<T> || std::is_enum_v<T> || std::is_same_v<T, std::byte>;

}  // namespace detail

// Appends the bytes of each field to a buffer.
class Writer {
 public:
  explicit Writer(Bytes& out) : out_(out) {}

  template <class... Fields>
  void operator()(const Fields&... fields) {
    (write(fields), ...);
  }

 private:
  template <detail::Trivial T>
  void write(const T& value) {
    append(&value, sizeof value);
  }
  void write(const std::string& s) {
    write(static_cast<std::uint64_t>(s.size()));
    append(s.data(), s.size());
  }
  template <class T, class A>
  void write(const std::vector<T, A>& v) {
    write(static_cast<std::uint64_t>(v.size()));
    if constexpr (detail::Trivial<T>) {
      append(v.data(), v.size() * sizeof(T));
    } else {
      for (const T& item : v) write(item);
    }
  }
  template <class M>
  requires(!detail::Trivial<M> && !detail::IsVector<M>::value) void write(const M& message) {
    // visit() only enumerates fields; the Writer reads them and never modifies the message.
    const_cast<M&>(message).visit(*this);
  }
  void append(const void* data, std::size_t size) {
    if (size == 0) return;
    const std::size_t offset = out_.size();
    out_.resize(offset + size);
    std::memcpy(out_.data() + offset, data, size);
  }

  Bytes& out_;
};

// Reads fields back, in the order a Writer wrote them.
class Reader {
 public:
  explicit Reader(std::span<const std::byte> in) : in_(in) {}

  template <class... Fields>
  void operator()(Fields&... fields) {
    (read(fields), ...);
  }
  bool done() const { return offset_ == in_.size(); }

 private:
  template <detail::Trivial T>
  void read(T& value) {
    take(&value, sizeof value);
  }
  void read(std::string& s) {
    s.resize(read_size(1));
    take(s.data(), s.size());
  }
  template <class T, class A>
  void read(std::vector<T, A>& v) {
    if constexpr (detail::Trivial<T>) {
      v.resize(read_size(sizeof(T)));
      take(v.data(), v.size() * sizeof(T));
    } else {
      v.resize(read_size(1));
      for (T& item : v) read(item);
    }
  }
  template <class M>
  requires(!detail::Trivial<M> && !detail::IsVector<M>::value) void read(M& message) { message.visit(*this); }
  std::size_t read_size(std::size_t min_element_bytes) {
    std::uint64_t n = 0;
    read(n);
    if (n > (in_.size() - offset_) / min_element_bytes) throw MessageError("message: length beyond buffer");
    return static_cast<std::size_t>(n);
  }
  void take(void* data, std::size_t size) {
    if (size > in_.size() - offset_) throw MessageError("message: truncated");
    if (size > 0) std::memcpy(data, in_.data() + offset_, size);
    offset_ += size;
  }

  std::span<const std::byte> in_;
  std::size_t offset_ = 0;
};

template <class M>
Bytes serialize(const M& message) {
  Bytes out;
  Writer writer(out);
  writer(message);
  return out;
}

template <class M>
M deserialize(std::span<const std::byte> bytes) {
  M message{};
  Reader reader(bytes);
  reader(message);
  if (!reader.done()) throw MessageError("message: trailing bytes");
  return message;
}

// A summed message as numbers: the lengths of its vector fields (the shape, not summed) and every
// number it holds, in field order (summed elementwise across workers).
struct Flat {
  std::vector<std::uint64_t> shape;
  std::vector<double> values;
  template <class Visitor>
  void visit(Visitor& v) {
    v(shape, values);
  }
};

namespace detail {

class Flattener {
 public:
  explicit Flattener(Flat& out) : out_(out) {}
  template <class... Fields>
  void operator()(const Fields&... fields) {
    (add(fields), ...);
  }

 private:
  template <Arithmetic T>
  void add(const T& value) {
    out_.values.push_back(static_cast<double>(value));
  }
  template <Arithmetic T, class A>
  void add(const std::vector<T, A>& v) {
    out_.shape.push_back(v.size());
    out_.values.insert(out_.values.end(), v.begin(), v.end());
  }
  template <class M>
  requires(!Arithmetic<M> && !IsVector<M>::value) void add(const M& message) {
    const_cast<M&>(message).visit(*this);
  }
  Flat& out_;
};

class Unflattener {
 public:
  explicit Unflattener(const Flat& in) : in_(in) {}
  template <class... Fields>
  void operator()(Fields&... fields) {
    (take(fields), ...);
  }
  bool done() const { return next_shape_ == in_.shape.size() && next_value_ == in_.values.size(); }

 private:
  template <Arithmetic T>
  void take(T& value) {
    if (next_value_ >= in_.values.size()) throw MessageError("flat message: too few values");
    value = static_cast<T>(in_.values[next_value_++]);
  }
  template <Arithmetic T, class A>
  void take(std::vector<T, A>& v) {
    if (next_shape_ >= in_.shape.size()) throw MessageError("flat message: shape too short");
    const std::uint64_t n = in_.shape[next_shape_++];
    if (n > in_.values.size() - next_value_) throw MessageError("flat message: too few values");
    const auto first = in_.values.begin() + static_cast<std::ptrdiff_t>(next_value_);
    v.assign(first, first + static_cast<std::ptrdiff_t>(n));
    next_value_ += n;
  }
  template <class M>
  requires(!Arithmetic<M> && !IsVector<M>::value) void take(M& message) { message.visit(*this); }
  const Flat& in_;
  std::size_t next_shape_ = 0;
  std::size_t next_value_ = 0;
};

}  // namespace detail

template <class M>
Flat flatten(const M& message) {
  Flat flat;
  detail::Flattener flattener(flat);
  flattener(message);
  return flat;
}

template <class M>
M unflatten(const Flat& flat) {
  M message{};
  detail::Unflattener unflattener(flat);
  unflattener(message);
  if (!unflattener.done()) throw MessageError("flat message: shape does not match the message type");
  return message;
}

}  // namespace schmp
