#include "models/ModelFileOut.h"

#include <yaml-cpp/emittermanip.h>

#include <algorithm>
#include <stdexcept>

namespace strata::detail {

void ModelFileOut::begin(const std::string &headerComment) {
  out_ << YAML::Comment(headerComment) << YAML::BeginMap;
}

void ModelFileOut::record(JsonPos from) {
  if (from.line == 0)
    return;
  // yaml-cpp writes the line break before the next key, not after a
  // value, so the value just written is on the last line.
  const char *text = out_.c_str();
  size_t line = size_t(std::count(text, text + out_.size(), '\n'));
  if (sources_.size() <= line)
    sources_.resize(line + 1);
  sources_[line] = from;
}

void ModelFileOut::field(const std::string &key, const std::string &value,
                         JsonPos from) {
  out_ << YAML::Key << key << YAML::Value << value;
  record(from);
}

void ModelFileOut::flag(const std::string &key, bool value, JsonPos from) {
  out_ << YAML::Key << key << YAML::Value << YAML::TrueFalseBool << value;
  record(from);
}

void ModelFileOut::quotedField(const std::string &key,
                               const std::string &value) {
  out_ << YAML::Key << key << YAML::Value << YAML::DoubleQuoted << value;
}

void ModelFileOut::flowList(const std::string &key,
                            const std::vector<std::string> &items,
                            JsonPos from) {
  out_ << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (const std::string &item : items)
    out_ << item;
  out_ << YAML::EndSeq;
  record(from);
}

void ModelFileOut::flowMap(
    const std::string &key,
    const std::vector<std::pair<std::string, std::string>> &entries,
    JsonPos from) {
  out_ << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginMap;
  for (const auto &[k, v] : entries)
    out_ << YAML::Key << k << YAML::Value << v;
  out_ << YAML::EndMap;
  record(from);
}

void ModelFileOut::beginMap(const std::string &key) {
  out_ << YAML::Key << key << YAML::Value << YAML::BeginMap;
}

void ModelFileOut::endMap() { out_ << YAML::EndMap; }

void ModelFileOut::beginList(const std::string &key) {
  out_ << YAML::Key << key << YAML::Value << YAML::BeginSeq;
}

void ModelFileOut::flowListItem(const std::vector<std::string> &items,
                                const std::string &comment) {
  out_ << YAML::Flow << YAML::BeginSeq;
  for (const std::string &item : items)
    out_ << item;
  out_ << YAML::EndSeq << YAML::Comment(comment);
}

void ModelFileOut::endList() { out_ << YAML::EndSeq; }

void ModelFileOut::blankLine() {
  // The first ends the current line, the second leaves it empty.
  out_ << YAML::Newline << YAML::Newline;
}

std::string ModelFileOut::finish() {
  out_ << YAML::EndMap;
  if (!out_.good())
    throw std::logic_error("the model file could not be written: " +
                           out_.GetLastError());
  return std::string(out_.c_str(), out_.size()) + "\n";
}

JsonPos ModelFileOut::source(int line) const {
  if (line < 1 || size_t(line) > sources_.size())
    return {};
  return sources_[size_t(line) - 1];
}

} // namespace strata::detail
