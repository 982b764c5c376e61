#include "tools/serve/OpenAiRequest.h"

#include "tools/common/ArgParser.h"
#include "json/JsonTree.h"

#include <algorithm>
#include <cstdint>

namespace strata::serve {

namespace {

// Stop strings a request may give; each one is searched in the text after
// every token.
constexpr size_t kMaxStops = 16;

class FieldReader {
public:
  explicit FieldReader(ApiError &error) : error_(error) {}

  bool fail(const std::string &param, const std::string &message,
            const char *code) {
    error_.status = 400;
    error_.type = "invalid_request_error";
    error_.param = param;
    error_.message = message;
    error_.code = code;
    return false;
  }
  bool wrongType(const std::string &field, const char *expected,
                 const JsonValue &v) {
    return fail(field,
                "'" + field + "' must be " + expected + ", got " + v.kindName(),
                "invalid_type");
  }
  bool unsupported(const std::string &field, const std::string &why) {
    return fail(field,
                "'" + field + "' is not supported by this server: " + why,
                "unsupported_field");
  }

  bool integer(const JsonValue &v, const std::string &field, int64_t lo,
               int64_t hi, int64_t &out) {
    if (!v.isNumber())
      return wrongType(field, "an integer", v);
    if (v.text.find_first_of(".eE") != std::string::npos)
      return fail(field, "'" + field + "' must be an integer, got " + v.text,
                  "invalid_type");
    if (!tools::parseInteger(v.text, lo, hi, out))
      return fail(field,
                  "'" + field + "' must be an integer in [" +
                      std::to_string(lo) + ", " + std::to_string(hi) +
                      "], got " + v.text,
                  "invalid_value");
    return true;
  }
  bool number(const JsonValue &v, const std::string &field, double &out) {
    if (!v.isNumber())
      return wrongType(field, "a number", v);
    if (!tools::parseNumber(v.text, out))
      return fail(field, "'" + field + "' is out of range: " + v.text,
                  "invalid_value");
    return true;
  }
  bool boolean(const JsonValue &v, const std::string &field, bool &out) {
    if (v.kind != JsonValue::Kind::Bool)
      return wrongType(field, "a boolean", v);
    out = v.boolean;
    return true;
  }
  bool string(const JsonValue &v, const std::string &field, std::string &out) {
    if (!v.isString())
      return wrongType(field, "a string", v);
    out = v.text;
    return true;
  }

private:
  ApiError &error_;
};

bool readPromptIds(FieldReader &r, const JsonValue &array,
                   std::vector<int64_t> &out) {
  if (array.array.empty())
    return r.fail("prompt", "'prompt' must not be empty", "invalid_value");
  for (const JsonValue &id : array.array) {
    int64_t value = 0;
    if (!r.integer(id, "prompt", 0, INT32_MAX, value))
      return false;
    out.push_back(value);
  }
  return true;
}

// A string, token ids, or a list of one of those (OpenAI's batch form,
// holding one prompt).
bool readPrompt(FieldReader &r, const JsonValue &v, ApiRequest &out) {
  if (v.isString()) {
    out.promptText = v.text;
    return true;
  }
  if (!v.isArray())
    return r.wrongType("prompt", "a string or an array of token ids", v);
  if (v.array.empty())
    return r.fail("prompt", "'prompt' must not be empty", "invalid_value");
  const JsonValue &first = v.array.front();
  if (first.isNumber()) {
    out.promptIsIds = true;
    return readPromptIds(r, v, out.promptIds);
  }
  if (v.array.size() > 1)
    return r.unsupported("prompt",
                         "one prompt per request (send a request for each "
                         "prompt)");
  if (first.isString()) {
    out.promptText = first.text;
    return true;
  }
  if (first.isArray()) {
    out.promptIsIds = true;
    return readPromptIds(r, first, out.promptIds);
  }
  return r.wrongType("prompt", "a string or an array of token ids", first);
}

bool readContent(FieldReader &r, const JsonValue &v, const std::string &field,
                 std::string &out) {
  if (v.isString()) {
    out = v.text;
    return true;
  }
  if (!v.isArray())
    return r.wrongType(field, "a string or an array of text parts", v);
  // Parts: [{"type": "text", "text": "..."}], joined as OpenAI joins them.
  for (size_t j = 0; j < v.array.size(); ++j) {
    const JsonValue &part = v.array[j];
    const std::string name = field + "[" + std::to_string(j) + "]";
    if (!part.isObject())
      return r.wrongType(name, "an object", part);
    std::string type, text;
    for (const JsonMember &m : part.object) {
      if (m.key == "type") {
        if (!r.string(m.value, name + ".type", type))
          return false;
      } else if (m.key == "text") {
        if (!r.string(m.value, name + ".text", text))
          return false;
      } else {
        return r.unsupported(name + "." + m.key, "only text parts are read");
      }
    }
    if (type != "text")
      return r.unsupported(name + ".type",
                           "only parts of type 'text' are read, got '" + type +
                               "'");
    out += text;
  }
  return true;
}

bool readMessages(FieldReader &r, const JsonValue &v,
                  std::vector<ChatMessage> &out) {
  if (!v.isArray())
    return r.wrongType("messages", "an array of messages", v);
  if (v.array.empty())
    return r.fail("messages", "'messages' must not be empty", "invalid_value");
  for (size_t i = 0; i < v.array.size(); ++i) {
    const JsonValue &m = v.array[i];
    const std::string name = "messages[" + std::to_string(i) + "]";
    if (!m.isObject())
      return r.wrongType(name, "an object", m);
    ChatMessage message;
    bool hasRole = false, hasContent = false;
    for (const JsonMember &f : m.object) {
      const std::string field = name + "." + f.key;
      if (f.key == "role") {
        if (!r.string(f.value, field, message.role))
          return false;
        hasRole = true;
      } else if (f.key == "content") {
        if (!readContent(r, f.value, field, message.content))
          return false;
        hasContent = true;
      } else if (f.key == "name") {
        // A participant's name: no chat format strata writes has a place
        // for it, and it does not change the conversation's text.
        std::string ignored;
        if (!r.string(f.value, field, ignored))
          return false;
      } else {
        return r.unsupported(field, "messages hold a role and a content");
      }
    }
    if (!hasRole)
      return r.fail(name + ".role", "'" + name + ".role' is required",
                    "missing_field");
    if (!hasContent)
      return r.fail(name + ".content", "'" + name + ".content' is required",
                    "missing_field");
    if (message.role == "developer")
      message.role = "system";
    if (message.role != "system" && message.role != "user" &&
        message.role != "assistant")
      return r.unsupported(name + ".role",
                           "roles are system, developer, user and assistant, "
                           "got '" +
                               message.role + "'");
    out.push_back(std::move(message));
  }
  return true;
}

bool readStop(FieldReader &r, const JsonValue &v,
              std::vector<std::string> &out) {
  if (v.isString()) {
    out.push_back(v.text);
    return true;
  }
  if (!v.isArray())
    return r.wrongType("stop", "a string or an array of strings", v);
  if (v.array.size() > kMaxStops)
    return r.fail("stop",
                  "'stop' holds at most " + std::to_string(kMaxStops) +
                      " strings, got " + std::to_string(v.array.size()),
                  "invalid_value");
  for (const JsonValue &s : v.array) {
    if (!s.isString())
      return r.wrongType("stop", "a string or an array of strings", s);
    out.push_back(s.text);
  }
  return true;
}

// A field that strata does not implement, accepted only with the value
// that means "off".
bool readOff(FieldReader &r, const std::string &key, const JsonValue &v,
             bool chat) {
  if (key == "n" || key == "best_of") {
    int64_t n = 0;
    if (!r.integer(v, key, 1, INT32_MAX, n))
      return false;
    return n == 1 || r.unsupported(key, "one choice per request (1)");
  }
  if (key == "echo") {
    bool echo = false;
    if (!r.boolean(v, key, echo))
      return false;
    return !echo || r.unsupported(key, "the prompt is not repeated (false)");
  }
  if (key == "suffix") {
    std::string suffix;
    if (!r.string(v, key, suffix))
      return false;
    return suffix.empty() || r.unsupported(key, "no insertion (null)");
  }
  if (key == "logprobs") {
    if (chat) {
      bool on = false;
      if (!r.boolean(v, key, on))
        return false;
      return !on || r.unsupported(key, "no log-probabilities (false)");
    }
    return r.unsupported(key, "no log-probabilities (null)");
  }
  if (key == "top_logprobs") {
    int64_t n = 0;
    if (!r.integer(v, key, 0, 20, n))
      return false;
    return n == 0 || r.unsupported(key, "no log-probabilities (0)");
  }
  if (key == "presence_penalty" || key == "frequency_penalty") {
    double penalty = 0;
    if (!r.number(v, key, penalty))
      return false;
    return penalty == 0.0 || r.unsupported(key, "no penalties (0)");
  }
  if (key == "logit_bias") {
    if (!v.isObject())
      return r.wrongType(key, "an object", v);
    return v.object.empty() || r.unsupported(key, "no logit bias ({})");
  }
  if (key == "tools" || key == "functions") {
    if (!v.isArray())
      return r.wrongType(key, "an array", v);
    return v.array.empty() || r.unsupported(key, "no tool calls ([])");
  }
  if (key == "tool_choice" || key == "function_call") {
    if (v.isString() && v.text == "none")
      return true;
    return r.unsupported(key, "no tool calls (\"none\")");
  }
  // response_format
  if (!v.isObject())
    return r.wrongType(key, "an object", v);
  const JsonValue *type = v.get("type");
  if (v.object.size() == 1 && type && type->isString() && type->text == "text")
    return true;
  return r.unsupported(key, "plain text only ({\"type\": \"text\"})");
}

bool isOffField(const std::string &key, bool chat) {
  for (const char *k :
       {"n", "logprobs", "presence_penalty", "frequency_penalty", "logit_bias"})
    if (key == k)
      return true;
  for (const char *k : {"best_of", "echo", "suffix"})
    if (!chat && key == k)
      return true;
  for (const char *k : {"top_logprobs", "tools", "tool_choice", "functions",
                        "function_call", "response_format"})
    if (chat && key == k)
      return true;
  return false;
}

// Fields that change nothing in the answer, read and dropped.
bool isIgnoredField(const std::string &key, bool chat) {
  if (key == "user")
    return true;
  for (const char *k :
       {"metadata", "store", "service_tier", "parallel_tool_calls"})
    if (chat && key == k)
      return true;
  return false;
}

} // namespace

bool parseApiRequest(Endpoint endpoint, std::string_view body, ApiRequest &out,
                     ApiError &error) {
  FieldReader r(error);
  JsonValue doc;
  JsonSyntaxError syntax;
  if (!parseStrictJson(body, doc, syntax))
    return r.fail("",
                  "the body is not valid JSON: line " +
                      std::to_string(syntax.pos.line) + ", column " +
                      std::to_string(syntax.pos.column) + ": " + syntax.message,
                  "invalid_json");
  if (!doc.isObject())
    return r.fail("",
                  std::string("the body must be a JSON object, got ") +
                      doc.kindName(),
                  "invalid_json");
  out = ApiRequest();
  out.endpoint = endpoint;
  const bool chat = endpoint == Endpoint::ChatCompletions;
  bool streamOptions = false;
  std::optional<int64_t> maxTokens, maxCompletionTokens;
  for (const JsonMember &m : doc.object) {
    const std::string &key = m.key;
    const JsonValue &v = m.value;
    // null is "not given" for every field, as in OpenAI's API.
    if (v.isNull())
      continue;
    int64_t integer = 0;
    if (key == "model") {
      if (!r.string(v, key, out.model))
        return false;
    } else if (key == "prompt" && !chat) {
      if (!readPrompt(r, v, out))
        return false;
    } else if (key == "messages" && chat) {
      if (!readMessages(r, v, out.messages))
        return false;
    } else if (key == "max_tokens" ||
               (key == "max_completion_tokens" && chat)) {
      if (!r.integer(v, key, 1, INT32_MAX, integer))
        return false;
      (key == "max_tokens" ? maxTokens : maxCompletionTokens) = integer;
    } else if (key == "temperature") {
      double &t = out.sampling.temperature;
      if (!r.number(v, key, t))
        return false;
      if (!(t >= 0.0))
        return r.fail(key,
                      "'temperature' must be a number >= 0 (0: greedy), got " +
                          v.text,
                      "invalid_value");
    } else if (key == "top_p") {
      double &p = out.sampling.topP;
      if (!r.number(v, key, p))
        return false;
      if (!(p > 0.0 && p <= 1.0))
        return r.fail(key, "'top_p' must be in (0, 1], got " + v.text,
                      "invalid_value");
    } else if (key == "top_k") {
      // -1 and 0 both turn the filter off (vLLM uses -1).
      if (!r.integer(v, key, -1, INT32_MAX, integer))
        return false;
      out.sampling.topK = std::max<int64_t>(integer, 0);
    } else if (key == "seed") {
      if (!r.integer(v, key, 0, INT64_MAX, integer))
        return false;
      out.sampling.seed = uint64_t(integer);
      out.seeded = true;
    } else if (key == "stop") {
      if (!readStop(r, v, out.stop))
        return false;
    } else if (key == "stream") {
      if (!r.boolean(v, key, out.stream))
        return false;
    } else if (key == "stream_options") {
      if (!v.isObject())
        return r.wrongType(key, "an object", v);
      for (const JsonMember &o : v.object) {
        if (o.key != "include_usage")
          return r.fail("stream_options." + o.key,
                        "unknown field 'stream_options." + o.key + "'",
                        "unknown_field");
        if (!o.value.isNull() &&
            !r.boolean(o.value, "stream_options.include_usage",
                       out.includeUsage))
          return false;
      }
      streamOptions = true;
    } else if (key == "ignore_eos") {
      if (!r.boolean(v, key, out.ignoreEos))
        return false;
    } else if (isOffField(key, chat)) {
      if (!readOff(r, key, v, chat))
        return false;
    } else if (!isIgnoredField(key, chat)) {
      return r.fail(key,
                    "unknown field '" + key +
                        "' (refused rather than ignored, since it may be "
                        "meant to change the answer)",
                    "unknown_field");
    }
  }
  const char *required = chat ? "messages" : "prompt";
  const JsonValue *prompt = doc.get(required);
  if (!prompt || prompt->isNull())
    return r.fail(required, std::string("'") + required + "' is required",
                  "missing_field");
  if (streamOptions && !out.stream)
    return r.fail("stream_options",
                  "'stream_options' applies to streamed requests only "
                  "(\"stream\": true)",
                  "invalid_value");
  if (maxTokens && maxCompletionTokens && *maxTokens != *maxCompletionTokens)
    return r.fail("max_completion_tokens",
                  "'max_tokens' and 'max_completion_tokens' disagree (" +
                      std::to_string(*maxTokens) + " and " +
                      std::to_string(*maxCompletionTokens) + ")",
                  "invalid_value");
  out.maxTokens = maxCompletionTokens ? maxCompletionTokens : maxTokens;
  if (maxCompletionTokens)
    out.maxTokensField = "max_completion_tokens";
  return true;
}

} // namespace strata::serve
