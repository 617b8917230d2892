// Tokens to numbers, with the InputError messages shared by every reader.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <system_error>

#include "line_reader.hpp"

namespace schmp::io::internal {

namespace {

// A token as shown unquoted after a colon ("value is not finite: nan"), shortened so that a runaway
// token cannot flood the log, and with control characters escaped ("\x00", "\t") so that the message
// stays one line of text: a NUL byte would cut it short wherever it is printed as a C string.
std::string shown(std::string_view token) {
  constexpr std::size_t kMaxShown = 40;
  constexpr char kHex[] = "0123456789abcdef";
  std::string text;
  for (const char c : token.substr(0, kMaxShown)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte == '\t') {
      text.append("\\t");
    } else if (byte < 0x20 || byte == 0x7f) {
      text.append("\\x");
      text.push_back(kHex[byte >> 4]);
      text.push_back(kHex[byte & 0xf]);
    } else {
      text.push_back(c);
    }
  }
  if (token.size() > kMaxShown) text.append("...");
  return text;
}

}  // namespace

std::string quoted(std::string_view token) {
  // Built by appending: GCC 12 raises a false -Wrestrict on "'" + std::string(...).
  std::string text;
  text.reserve(token.size() + 2);
  text.push_back('\'');
  text.append(shown(token));
  text.push_back('\'');
  return text;
}

namespace {

// std::from_chars rejects a leading '+', which people write ("+1" labels); drop one, but keep "+-1"
// and a lone "+" malformed.
std::string_view without_plus(std::string_view token) {
  if (token.size() > 1 && token[0] == '+' && token[1] != '+' && token[1] != '-') token.remove_prefix(1);
  return token;
}

// A plain decimal (digits, perhaps a point between digits, an optional '-') of at most 15 digits: read
// several times faster than by the general parser, and as exactly. The digits make an integer m below
// 2^53 and the point a power of ten 10^k with k <= 15, both exact as doubles, so m / 10^k is the
// correctly rounded value (Clinger's fast path). Binary features, counts, ratings and tf-idf weights
// make up many files.
std::optional<double> short_decimal(std::string_view digits) {
  const bool negative = !digits.empty() && digits[0] == '-';
  if (negative) digits.remove_prefix(1);
  constexpr std::size_t kMostDigits = 15;
  constexpr double kPowersOfTen[kMostDigits + 1] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                                    1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
  const std::size_t point = digits.find('.');
  const bool has_point = point != std::string_view::npos;
  // "1." and ".5" are left to the general parser, which decides what they mean.
  if (has_point && (point == 0 || point + 1 == digits.size())) return std::nullopt;
  const std::size_t count = digits.size() - (has_point ? 1 : 0);
  if (count == 0 || count > kMostDigits) return std::nullopt;
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    const char c = digits[i];
    if (i == point) continue;
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
  }
  const double magnitude =
      static_cast<double>(value) / kPowersOfTen[has_point ? digits.size() - point - 1 : 0];
  return negative ? -magnitude : magnitude;
}

}  // namespace

bool is_number(std::string_view token) {
  const std::string_view digits = without_plus(token);
  double value = 0;
  const auto [end, error] =
      std::from_chars(digits.data(), digits.data() + digits.size(), value, std::chars_format::general);
  return !digits.empty() && error != std::errc::invalid_argument && end == digits.data() + digits.size();
}

double parse_finite(std::string_view token, std::string_view what, const Where& where) {
  if (token.empty()) where.fail("missing " + std::string(what));
  const std::string_view digits = without_plus(token);
  if (const auto decimal = short_decimal(digits)) return *decimal;
  double value = 0;
  const auto [end, error] =
      std::from_chars(digits.data(), digits.data() + digits.size(), value, std::chars_format::general);
  if (error == std::errc::invalid_argument || end != digits.data() + digits.size()) {
    where.fail("non-numeric " + std::string(what) + " " + quoted(token));
  }
  if (error == std::errc::result_out_of_range) {
    // Too small is not too large: a value below the smallest double reads as strtod and LIBSVM read
    // it, as zero (or the nearest subnormal), keeping its sign.
    const double nearest = std::strtod(std::string(digits).c_str(), nullptr);
    if (std::isinf(nearest)) where.fail(std::string(what) + " out of range: " + shown(token));
    return nearest;
  }
  if (!std::isfinite(value)) where.fail(std::string(what) + " is not finite: " + shown(token));
  // The apps square data values and add the squares up (column norms, residuals, Hessians): one value
  // past 1e154 makes an infinite sum, which reads later as a diverged or never-ending solve. Below 1e100
  // a sum overflows only past 1e108 squares at the limit, which no data comes near; 1e150 let 2e8 of them
  // overflow.
  if (std::fabs(value) > kLargestDataValue) {
    where.fail(std::string(what) + " " + shown(token) +
               " too large: the limit is 1e100 in magnitude, so that squares and their sums stay finite");
  }
  return value;
}

double parse_integer_value(std::string_view token, const Where& where) {
  if (token.empty()) where.fail("missing value");
  const std::string_view digits = without_plus(token);
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error == std::errc::invalid_argument || end != digits.data() + digits.size()) {
    where.fail("non-integer value " + quoted(token));
  }
  if (error == std::errc::result_out_of_range) where.fail("value out of range: " + shown(token));
  return static_cast<double>(value);
}

std::uint64_t parse_count(std::string_view token, std::string_view what, const Where& where) {
  if (token.empty()) where.fail("missing " + std::string(what));
  std::uint64_t value = 0;
  const bool negative = !token.empty() && token[0] == '-';
  const std::string_view digits = negative ? token.substr(1) : token;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error == std::errc::invalid_argument || end != digits.data() + digits.size()) {
    where.fail("non-numeric " + std::string(what) + " " + quoted(token));
  }
  if (negative) where.fail("negative " + std::string(what) + " " + shown(token));
  if (error == std::errc::result_out_of_range) {
    where.fail(std::string(what) + " " + shown(token) + " out of range");
  }
  return value;
}

}  // namespace schmp::io::internal
