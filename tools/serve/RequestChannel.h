// What the engine thread tells the HTTP handler of one request: the text
// as it is generated, then how the request ended. The engine thread
// pushes, the handler's thread pops (waiting with a timeout, so that a
// streaming handler can check its client in between).
#ifndef STRATA_TOOLS_SERVE_REQUESTCHANNEL_H
#define STRATA_TOOLS_SERVE_REQUESTCHANNEL_H

#include "runtime/Engine.h"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>

namespace strata::serve {

struct RequestEvent {
  enum class Kind : uint8_t {
    Text,     ///< new text (never empty)
    Finished, ///< the request ended; `finish` and the counts say how
    Failed,   ///< the request was cancelled or the engine failed
  };
  Kind kind = Kind::Text;
  /// Text: the new text. Failed: what happened, for the client.
  std::string text;
  FinishReason finish = FinishReason::Length;
  int64_t promptTokens = 0;
  int64_t completionTokens = 0;
  /// Failed: the HTTP status to answer with (500 engine failure, 503
  /// shutting down).
  int status = 500;

  bool terminal() const { return kind != Kind::Text; }
};

class RequestChannel {
public:
  void push(RequestEvent event) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      events_.push_back(std::move(event));
    }
    ready_.notify_one();
  }

  /// The next event, or nothing when none came within `timeout`.
  std::optional<RequestEvent> pop(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!ready_.wait_for(lock, timeout, [&] { return !events_.empty(); }))
      return std::nullopt;
    RequestEvent event = std::move(events_.front());
    events_.pop_front();
    return event;
  }

private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<RequestEvent> events_;
};

} // namespace strata::serve

#endif // STRATA_TOOLS_SERVE_REQUESTCHANNEL_H
