// The model file the Hugging Face converter writes, emitted by yaml-cpp's
// YAML::Emitter (which quotes and escapes what needs it), and the map from
// each output line back to the config.json field it came from: when the
// final import rejects a line, the message points at that field rather
// than at text the user never wrote. Private to models/.
#ifndef STRATA_MODELS_MODELFILEOUT_H
#define STRATA_MODELS_MODELFILEOUT_H

#include "json/JsonTree.h"

#include <yaml-cpp/emitter.h>

#include <string>
#include <utility>
#include <vector>

namespace strata::detail {

class ModelFileOut {
public:
  /// Starts the file: a comment, then the top-level mapping.
  void begin(const std::string &headerComment);

  /// `key: value`, the value written as given (a number as config.json
  /// wrote it, a keyword); `from` is the field it came from, if any.
  void field(const std::string &key, const std::string &value,
             JsonPos from = {});
  /// `key: true` or `key: false`.
  void flag(const std::string &key, bool value, JsonPos from = {});
  /// `key: "value"`, for free text such as a folder name or a path, which
  /// may hold anything.
  void quotedField(const std::string &key, const std::string &value);
  /// `key: [a, b, ...]` on one line.
  void flowList(const std::string &key, const std::vector<std::string> &items,
                JsonPos from = {});
  /// `key: {k: v, ...}` on one line.
  void flowMap(const std::string &key,
               const std::vector<std::pair<std::string, std::string>> &entries,
               JsonPos from = {});
  /// `key:` opening a nested mapping, closed by endMap.
  void beginMap(const std::string &key);
  void endMap();
  /// `key:` opening a block sequence, closed by endList.
  void beginList(const std::string &key);
  /// `- [a, b, ...]  # comment` in the open sequence.
  void flowListItem(const std::vector<std::string> &items,
                    const std::string &comment);
  void endList();
  /// An empty line between sections.
  void blankLine();

  /// Closes the top-level mapping and returns the file's text; throws
  /// ImportError if the emitter was left in an invalid state.
  std::string finish();
  /// The field 1-based output line `line` came from (no position when
  /// unknown).
  JsonPos source(int line) const;

private:
  /// The value just emitted ends the output so far: notes its line.
  void record(JsonPos from);

  YAML::Emitter out_;
  /// By 0-based output line.
  std::vector<JsonPos> sources_;
};

} // namespace strata::detail

#endif // STRATA_MODELS_MODELFILEOUT_H
