#include "tools/serve/BenchServeStream.h"

#include <nlohmann/json.hpp>

namespace strata::serve {

namespace {

using Json = nlohmann::json;

/// A few characters of what the server sent, for a message.
std::string excerpt(const std::string &text) {
  constexpr size_t kMax = 80;
  return text.size() <= kMax ? text : text.substr(0, kMax) + "...";
}

std::optional<int64_t> integerField(const Json &object, const char *key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer())
    return std::nullopt;
  return it->get<int64_t>();
}

} // namespace

void CompletionStream::feed(const char *data, size_t size, double seconds) {
  pending_.append(data, size);
  size_t start = 0;
  for (size_t end; (end = pending_.find('\n', start)) != std::string::npos;
       start = end + 1) {
    size_t length = end - start;
    if (length > 0 && pending_[end - 1] == '\r')
      --length;
    line(pending_.substr(start, length), seconds);
  }
  pending_.erase(0, start);
}

void CompletionStream::line(std::string text, double seconds) {
  // Whatever follows [DONE] or an error changes nothing in the outcome.
  if (done_ || failed())
    return;
  if (text.empty()) {
    if (hasData_)
      event(data_, seconds);
    data_.clear();
    hasData_ = false;
    return;
  }
  // A comment: the server's keep-alive.
  if (text[0] == ':')
    return;
  const size_t colon = text.find(':');
  if (text.compare(0, colon, "data") != 0)
    return; // event:, id:, retry: carry nothing a completion needs
  std::string value =
      colon == std::string::npos ? std::string() : text.substr(colon + 1);
  if (!value.empty() && value[0] == ' ')
    value.erase(0, 1);
  if (hasData_)
    data_ += '\n';
  data_ += value;
  hasData_ = true;
}

void CompletionStream::event(const std::string &data, double seconds) {
  if (data == "[DONE]") {
    done_ = true;
    doneTime_ = seconds;
    return;
  }
  const Json body = Json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.is_object()) {
    error_ =
        "the server sent an event that is not a JSON object: " + excerpt(data);
    return;
  }
  if (auto it = body.find("error"); it != body.end()) {
    const Json &message =
        it->is_object() && it->contains("message") ? (*it)["message"] : *it;
    error_ = "error event: " + (message.is_string() ? message.get<std::string>()
                                                    : excerpt(message.dump()));
    return;
  }
  if (auto choices = body.find("choices");
      choices != body.end() && choices->is_array() && !choices->empty() &&
      choices->front().is_object()) {
    const Json &choice = choices->front();
    auto text = choice.find("text");
    if (text != choice.end() && text->is_string() &&
        !text->get_ref<const std::string &>().empty())
      textTimes_.push_back(seconds);
    auto finish = choice.find("finish_reason");
    if (finish != choice.end() && !finish->is_null() && !finishTime_)
      finishTime_ = seconds;
  }
  if (auto usage = body.find("usage");
      usage != body.end() && usage->is_object()) {
    promptTokens_ = integerField(*usage, "prompt_tokens").value_or(-1);
    completionTokens_ = integerField(*usage, "completion_tokens").value_or(-1);
  }
}

RequestOutcome CompletionStream::finish() const {
  RequestOutcome out;
  if (failed()) {
    out.error = error_;
    return out;
  }
  if (!done_) {
    out.error = "the stream ended before data: [DONE]";
    return out;
  }
  if (completionTokens_ < 0 || promptTokens_ < 0) {
    out.error = "the stream had no usage chunk with prompt_tokens and "
                "completion_tokens (stream_options.include_usage)";
    return out;
  }
  if (textTimes_.empty() && !finishTime_) {
    out.error = "the stream ended without a completion chunk";
    return out;
  }
  out.ok = true;
  out.ttft = textTimes_.empty() ? *finishTime_ : textTimes_.front();
  for (size_t i = 1; i < textTimes_.size(); ++i)
    out.itl.push_back(textTimes_[i] - textTimes_[i - 1]);
  out.latency = doneTime_;
  out.promptTokens = promptTokens_;
  out.outputTokens = completionTokens_;
  return out;
}

} // namespace strata::serve
