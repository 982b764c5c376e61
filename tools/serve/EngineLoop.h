// The engine thread of `strata serve`: the only thread that touches the
// Engine. HTTP handler threads hand it requests through a bounded queue
// (enqueue) and take back each request's text and end through that
// request's channel; they cancel a request whose client went away
// (cancel). The thread moves queued requests into the engine's serving
// loop (Engine::submit) while fewer than --max-running are in it, so that
// the queue, not the engine, is where requests wait; between steps it
// applies cancellations.
#ifndef STRATA_TOOLS_SERVE_ENGINELOOP_H
#define STRATA_TOOLS_SERVE_ENGINELOOP_H

#include "runtime/Engine.h"
#include "runtime/TextStream.h"
#include "runtime/tokenizer/Tokenizer.h"
#include "tools/serve/RequestChannel.h"
#include "tools/serve/ServeMetrics.h"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace strata::serve {

using Clock = std::chrono::steady_clock;

/// One request as the engine thread takes it.
struct ServeJob {
  /// The prompt ids, token budget, sampling and stop tokens; onToken is
  /// set by the loop.
  GenerationRequest request;
  /// Stop strings: the text ends before the first one.
  std::vector<std::string> stops;
  /// When the request arrived, for the time to its first token.
  Clock::time_point arrival = Clock::now();
  std::shared_ptr<RequestChannel> channel;
};

class EngineLoop {
public:
  /// `engine` and `tokenizer` must outlive the loop. `maxQueue` bounds the
  /// requests waiting to enter the engine.
  EngineLoop(Engine &engine, const tok::Tokenizer &tokenizer,
             ServeMetrics &metrics, const ServeOptions &options,
             int64_t maxQueue);
  ~EngineLoop();
  EngineLoop(const EngineLoop &) = delete;
  EngineLoop &operator=(const EngineLoop &) = delete;

  /// Starts the engine's serving loop and the thread.
  bool start(std::string &error);

  enum class Admission { Queued, QueueFull, Closed };
  /// Queues `job` unless the queue is full or the loop is shutting down
  /// (or broken); `ticket` names it for cancel().
  Admission enqueue(std::unique_ptr<ServeJob> job, uint64_t &ticket);
  /// Ends the request `ticket` (queued or in the engine), freeing its KV
  /// blocks at the next step; its channel gets a Failed event. Nothing
  /// when it has ended already.
  void cancel(uint64_t ticket);
  /// Refuses new requests, ends every queued and running one (their
  /// channels get a Failed event with status 503) and joins the thread.
  /// Returns how many requests it ended.
  int64_t shutdown();

  /// False once the engine failed and could not start serving again.
  bool healthy() const;
  EngineLoad load() const;

private:
  /// A request in the engine, by the engine's id.
  struct Active {
    uint64_t ticket = 0;
    std::unique_ptr<ServeJob> job;
    std::unique_ptr<TextStream> text;
    int64_t promptTokens = 0;
    int64_t tokens = 0; ///< generated so far
    Clock::time_point lastToken;
  };
  struct Queued {
    uint64_t ticket = 0;
    std::unique_ptr<ServeJob> job;
  };

  void run();
  /// Submits `q` to the engine; an error (which the handlers' checks make
  /// unlikely) fails the request with 400.
  void submit(Queued q);
  /// onToken of every request: the text so far goes to its channel; false
  /// once a stop string appeared.
  bool onToken(Active &a, int32_t token);
  /// Reports a request the engine ended and forgets it.
  void finish(ServeResult &ended);
  /// Fails every request in the engine with `status` and `message`
  /// (counted as `reason`) and forgets them.
  void failActive(int status, const std::string &message,
                  const std::string &reason);
  /// Publishes the engine's counters for load(); under mutex_.
  void publishStats();

  Engine &engine_;
  const tok::Tokenizer &tokenizer_;
  ServeMetrics &metrics_;
  ServeOptions options_;
  int64_t maxQueue_;

  // Shared with the handler threads, under mutex_.
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Queued> queue_;
  std::vector<uint64_t> cancels_;
  uint64_t nextTicket_ = 1;
  bool stopping_ = false, broken_ = false;
  ServeStats stats_;
  BackendCounters counters_;
  int64_t inEngine_ = 0;

  // The engine thread's own.
  std::unordered_map<uint64_t, std::unique_ptr<Active>> active_;
  std::unordered_map<uint64_t, uint64_t> engineIdOf_; // ticket -> engine id
  std::thread thread_;
  int64_t ended_ = 0; // requests shutdown() ended
};

} // namespace strata::serve

#endif // STRATA_TOOLS_SERVE_ENGINELOOP_H
