#include "model.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "schmp/io.hpp"
#include "schmp/output.hpp"

namespace schmp::mf {

double Model::predict(std::uint64_t user, std::uint64_t item) const {
  if (user >= users || item >= items || !user_known[user] || !item_known[item]) return mean;
  const std::size_t k = static_cast<std::size_t>(rank);
  double sum = 0;
  for (std::size_t d = 0; d < k; ++d) sum += user_factors[user * k + d] * item_factors[item * k + d];
  return sum;
}

Model assemble(const std::vector<MatrixFactorization::Part>& parts, const kernels::RowLayout& layout,
               double mean, double scale, double offset) {
  Model model;
  model.rank = layout.width();
  model.mean = mean;
  model.users = parts.front().users;
  model.items = parts.front().items;
  const auto k = static_cast<std::size_t>(model.rank);
  const std::size_t workers = parts.size();
  const double factor_scale = std::sqrt(scale);
  model.user_factors.assign(model.users * k, 0.0);
  model.item_factors.assign(model.items * k, 0.0);
  model.user_known.assign(model.users, 0);
  model.item_known.assign(model.items, 0);
  for (std::size_t w = 0; w < workers; ++w) {
    const MatrixFactorization::Part& part = parts[w];
    // Ratings were solved for in units of `scale` about `offset`: each latent entry takes sqrt(scale),
    // so that their products take scale; a learned bias takes scale (the user's also the offset), and
    // the fixed 1s stay 1, so that the file holds (b_u + mu, 1) and (1, c_j).
    auto place = [&](const std::vector<double>& rows, const std::vector<std::uint8_t>& trained,
                     std::vector<double>& factors, std::vector<std::uint8_t>& known, int learned_bias,
                     int fixed_one, double shift) {
      for (std::size_t row = 0; row < trained.size(); ++row) {
        const std::size_t id = row * workers + w;
        known[id] = trained[row];
        if (!trained[row]) continue;
        for (std::size_t d = 0; d < k; ++d) factors[id * k + d] = rows[row * k + d] * factor_scale;
        if (!layout.biases) continue;
        const auto bias = static_cast<std::size_t>(learned_bias);
        factors[id * k + bias] = rows[row * k + bias] * scale + shift;
        factors[id * k + static_cast<std::size_t>(fixed_one)] = 1.0;
      }
    };
    place(part.user_factors, part.user_trained, model.user_factors, model.user_known, layout.user_bias(),
          layout.item_bias(), offset);
    place(part.item_factors, part.item_trained, model.item_factors, model.item_known, layout.item_bias(),
          layout.user_bias(), 0.0);
  }
  return model;
}

void write_model(const std::string& path, const Model& model) {
  io::write_file_atomically(path, [&](std::ostream& out) {
    // Shortest round-trip decimals (std::to_chars): exact when read back, and several times faster
    // than a stream at full precision.
    std::string line;
    auto append = [&](double value) {
      char digits[32];
      const auto written = std::to_chars(digits, digits + sizeof digits, value);
      line.append(digits, written.ptr);
    };
    line = "f " + std::to_string(model.loss) + "\nm " + std::to_string(model.users) + "\nn " +
           std::to_string(model.items) + "\nk " + std::to_string(model.rank) + "\nb ";
    append(model.mean);
    line += '\n';
    out << line;
    const std::size_t k = static_cast<std::size_t>(model.rank);
    auto rows = [&](char name, std::uint32_t count, const std::vector<double>& factors,
                    const std::vector<std::uint8_t>& known) {
      for (std::size_t id = 0; id < count; ++id) {
        line.assign(1, name);
        line += std::to_string(id);
        line += known[id] ? " T" : " F";
        for (std::size_t d = 0; d < k; ++d) {
          line += ' ';
          append(known[id] ? factors[id * k + d] : 0.0);
        }
        line += '\n';
        out << line;
      }
    };
    rows('p', model.users, model.user_factors, model.user_known);
    rows('q', model.items, model.item_factors, model.item_known);
  });
}

Model read_model(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw io::InputError(path, 0, "cannot open");
  Model model;
  std::string line;
  std::uint64_t number = 0;
  auto fail = [&](const std::string& message) { throw io::InputError(path, number, message); };
  auto header = [&](const char* key, auto& value) {
    ++number;
    std::string name;
    std::string extra;
    if (!io::read_whole_line(in, line, path, number))
      fail(std::string("missing '") + key + "' line: not a LIBMF model");
    std::istringstream fields(line);
    if (!(fields >> name >> value) || name != key || (fields >> extra))
      fail(std::string("expected '") + key + " <value>', got '" + line + "'");
  };
  header("f", model.loss);
  if (model.loss != kSquaredLoss && model.loss != kOneClassLoss) {
    fail("loss " + std::to_string(model.loss) +
         " is neither squared error (f 0) nor one-class squared error (f 12)");
  }
  // Read signed, so that a negative count is refused rather than wrapped round.
  std::int64_t users = 0, items = 0, rank = 0;
  const auto count = [&](const char* key, std::int64_t& value, std::int64_t least, std::int64_t most) {
    header(key, value);
    if (value < least || value > most)
      fail(std::string(key) + " must be between " + std::to_string(least) + " and " + std::to_string(most));
  };
  count("m", users, 0, kLargestCount);
  count("n", items, 0, kLargestCount);
  count("k", rank, 1, kLargestRank);
  header("b", model.mean);
  if (!std::isfinite(model.mean)) fail("the mean is not a finite number");
  // Every row takes a line of at least two bytes a factor: sizes the file cannot hold are refused
  // before their memory is asked for.
  const auto k = static_cast<std::size_t>(rank);
  if (std::filesystem::is_regular_file(path)) {
    const std::uintmax_t file_bytes = std::filesystem::file_size(path);
    if (static_cast<double>(users + items) * static_cast<double>(2 * k) > static_cast<double>(file_bytes))
      fail("the header's m, n and k ask for more rows than the file's " + std::to_string(file_bytes) +
           " bytes hold");
  }
  model.users = static_cast<std::uint32_t>(users);
  model.items = static_cast<std::uint32_t>(items);
  model.rank = static_cast<int>(rank);
  model.user_factors.assign(static_cast<std::size_t>(model.users) * k, 0.0);
  model.item_factors.assign(static_cast<std::size_t>(model.items) * k, 0.0);
  model.user_known.assign(model.users, 0);
  model.item_known.assign(model.items, 0);
  auto rows = [&](char name, std::uint32_t count, std::vector<double>& factors,
                  std::vector<std::uint8_t>& known) {
    for (std::size_t id = 0; id < count; ++id) {
      ++number;
      if (!io::read_whole_line(in, line, path, number))
        fail("missing the line of " + std::string(1, name) + std::to_string(id));
      std::istringstream fields(line);
      std::string label;
      std::string kind;
      fields >> label >> kind;
      if (label != name + std::to_string(id) || (kind != "T" && kind != "F"))
        fail("expected '" + std::string(1, name) + std::to_string(id) + " T|F values', got '" +
             line.substr(0, 40) + "'");
      known[id] = kind == "T";
      for (std::size_t d = 0; d < k; ++d) {
        double value = 0;
        // A stream reads no nan or inf, so every factor read is finite.
        if (!(fields >> value)) fail("expected " + std::to_string(k) + " values");
        factors[id * k + d] = known[id] ? value : 0.0;
      }
      std::string extra;
      if (fields >> extra) fail("more than " + std::to_string(k) + " values");
    }
  };
  rows('p', model.users, model.user_factors, model.user_known);
  rows('q', model.items, model.item_factors, model.item_known);
  while (io::read_whole_line(in, line, path, ++number)) {
    if (line.find_first_not_of(" \t\r") != std::string::npos)
      fail("text after the last item's row: the header's n counts fewer items than the file holds");
  }
  return model;
}

}  // namespace schmp::mf
