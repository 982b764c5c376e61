#include "tools/serve/EngineLoop.h"

#include <algorithm>
#include <cstdio>
#include <exception>

namespace strata::serve {

namespace {

double secondsSince(Clock::time_point start, Clock::time_point now) {
  return std::chrono::duration<double>(now - start).count();
}

RequestEvent failure(int status, std::string message) {
  RequestEvent event;
  event.kind = RequestEvent::Kind::Failed;
  event.status = status;
  event.text = std::move(message);
  return event;
}

// The status of a request its own client cancelled; nobody reads it.
constexpr int kClientGone = 499;

} // namespace

EngineLoop::EngineLoop(Engine &engine, const tok::Tokenizer &tokenizer,
                       ServeMetrics &metrics, const ServeOptions &options,
                       int64_t maxQueue)
    : engine_(engine), tokenizer_(tokenizer), metrics_(metrics),
      options_(options), maxQueue_(maxQueue) {
  if (options_.maxRunning <= 0)
    options_.maxRunning = engine_.plan().limits.maxBatch;
}

EngineLoop::~EngineLoop() { shutdown(); }

bool EngineLoop::start(std::string &error) {
  if (!engine_.startServing(options_, error))
    return false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    publishStats();
  }
  thread_ = std::thread(&EngineLoop::run, this);
  return true;
}

EngineLoop::Admission EngineLoop::enqueue(std::unique_ptr<ServeJob> job,
                                          uint64_t &ticket) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (stopping_ || broken_)
    return Admission::Closed;
  // Requests about to fill a free running place pass through the queue
  // too; they do not count against --max-queue.
  const int64_t freePlaces =
      std::max<int64_t>(0, options_.maxRunning - inEngine_);
  if (int64_t(queue_.size()) >= maxQueue_ + freePlaces)
    return Admission::QueueFull;
  ticket = nextTicket_++;
  queue_.push_back({ticket, std::move(job)});
  wake_.notify_one();
  return Admission::Queued;
}

void EngineLoop::cancel(uint64_t ticket) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = queue_.begin(); it != queue_.end(); ++it)
    if (it->ticket == ticket) {
      metrics_.finished("cancelled",
                        secondsSince(it->job->arrival, Clock::now()));
      it->job->channel->push(failure(kClientGone, "cancelled"));
      queue_.erase(it);
      return;
    }
  cancels_.push_back(ticket);
  wake_.notify_one();
}

int64_t EngineLoop::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable())
    thread_.join();
  return ended_;
}

bool EngineLoop::healthy() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return !broken_ && !stopping_;
}

EngineLoad EngineLoop::load() const {
  std::lock_guard<std::mutex> lock(mutex_);
  EngineLoad load;
  load.running = stats_.running;
  load.waiting = int64_t(queue_.size()) + stats_.waiting;
  load.kvBlocks = stats_.kvBlocks;
  load.freeKvBlocks = stats_.freeKvBlocks;
  load.steps = stats_.steps;
  load.preemptions = stats_.preemptions;
  load.promptTokensFed = stats_.promptTokens;
  load.prefixQueryTokens = stats_.prefixQueryTokens;
  load.prefixHitTokens = stats_.prefixHitTokens;
  load.verifySteps = stats_.verifySteps;
  load.specProposedTokens = stats_.proposedTokens;
  load.specAcceptedTokens = stats_.acceptedTokens;
  load.decodeSteps = counters_.decodeSteps;
  load.graphReplays = counters_.graphReplays;
  load.graphCaptures = counters_.graphCaptures;
  return load;
}

void EngineLoop::publishStats() {
  stats_ = engine_.serveStats();
  counters_ = engine_.backendCounters();
  inEngine_ = int64_t(active_.size());
}

void EngineLoop::submit(Queued q) {
  auto a = std::make_unique<Active>();
  a->ticket = q.ticket;
  a->job = std::move(q.job);
  a->text = std::make_unique<TextStream>(tokenizer_, a->job->stops);
  a->promptTokens = int64_t(a->job->request.prompt.size());
  GenerationRequest request = std::move(a->job->request);
  Active *raw = a.get();
  request.onToken = [this, raw](int32_t token) { return onToken(*raw, token); };
  uint64_t id = 0;
  std::string error;
  if (!engine_.submit(std::move(request), id, error)) {
    // The handlers check what the engine checks, so this is not expected.
    metrics_.rejected("invalid");
    a->job->channel->push(failure(400, error));
    return;
  }
  metrics_.admitted(a->promptTokens);
  engineIdOf_[a->ticket] = id;
  active_.emplace(id, std::move(a));
}

bool EngineLoop::onToken(Active &a, int32_t token) {
  const Clock::time_point now = Clock::now();
  const bool first = a.tokens == 0;
  metrics_.token(first,
                 secondsSince(first ? a.job->arrival : a.lastToken, now));
  a.lastToken = now;
  ++a.tokens;
  std::string text = a.text->push(token);
  if (!text.empty()) {
    RequestEvent event;
    event.text = std::move(text);
    a.job->channel->push(std::move(event));
  }
  return !a.text->stopped();
}

void EngineLoop::finish(ServeResult &ended) {
  auto it = active_.find(ended.id);
  if (it == active_.end())
    return;
  const std::unique_ptr<Active> owned = std::move(it->second);
  Active &a = *owned;
  engineIdOf_.erase(a.ticket);
  active_.erase(it);
  // Its running place is free before its client hears of the end: a client
  // that sends its next request at once must not find the place taken (a
  // 429 with --max-queue 0).
  {
    std::lock_guard<std::mutex> lock(mutex_);
    inEngine_ = int64_t(active_.size());
  }
  const double seconds = secondsSince(a.job->arrival, Clock::now());
  // Counted before the client hears of the end, so that the /metrics it
  // reads afterwards include its request.
  if (ended.cancelled) {
    metrics_.finished("cancelled", seconds);
    a.job->channel->push(failure(kClientGone, "cancelled"));
  } else {
    // What the stop-string check held back is final now.
    if (std::string rest = a.text->finish(); !rest.empty()) {
      RequestEvent text;
      text.text = std::move(rest);
      a.job->channel->push(std::move(text));
    }
    RequestEvent done;
    done.kind = RequestEvent::Kind::Finished;
    done.finish = ended.result.finish;
    done.promptTokens = a.promptTokens;
    done.completionTokens = int64_t(ended.result.tokens.size());
    metrics_.finished(ended.result.finish == FinishReason::Length ? "length"
                                                                  : "stop",
                      seconds);
    a.job->channel->push(std::move(done));
  }
}

void EngineLoop::failActive(int status, const std::string &message,
                            const std::string &reason) {
  const Clock::time_point now = Clock::now();
  for (auto &[id, a] : active_) {
    metrics_.finished(reason, secondsSince(a->job->arrival, now));
    a->job->channel->push(failure(status, message));
  }
  active_.clear();
  engineIdOf_.clear();
}

void EngineLoop::run() {
  std::vector<ServeResult> ended;
  while (true) {
    std::vector<Queued> incoming;
    std::vector<uint64_t> cancels;
    bool stopping = false;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] {
        return stopping_ || !cancels_.empty() || !queue_.empty() ||
               !active_.empty();
      });
      stopping = stopping_;
      cancels.swap(cancels_);
      while (!stopping && !queue_.empty() &&
             int64_t(active_.size() + incoming.size()) < options_.maxRunning) {
        incoming.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      inEngine_ = int64_t(active_.size() + incoming.size());
    }
    if (stopping) {
      std::deque<Queued> left;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        left.swap(queue_);
      }
      const Clock::time_point now = Clock::now();
      ended_ = int64_t(left.size() + active_.size());
      for (Queued &q : left) {
        metrics_.finished("cancelled", secondsSince(q.job->arrival, now));
        q.job->channel->push(failure(503, "the server is shutting down"));
      }
      engine_.stopServing();
      failActive(503,
                 "the server is shutting down; the request was "
                 "cancelled",
                 "cancelled");
      std::lock_guard<std::mutex> lock(mutex_);
      publishStats();
      return;
    }
    // Submitted before the cancellations, so that a request cancelled
    // while it was being moved out of the queue is found.
    for (Queued &q : incoming)
      submit(std::move(q));
    for (uint64_t ticket : cancels)
      if (auto it = engineIdOf_.find(ticket); it != engineIdOf_.end())
        engine_.cancel(it->second);

    bool idle = true;
    if (!active_.empty()) {
      ended.clear();
      std::string error;
      const int64_t stepsBefore = engine_.serveStats().steps;
      bool ok = false;
      try {
        ok = engine_.serveStep(ended, error);
      } catch (const std::exception &e) {
        // A step that throws (out of memory) leaves the loop in an unknown
        // state, like one that fails.
        error = e.what();
      }
      idle = ended.empty() && engine_.serveStats().steps == stepsBefore;
      bool serving = true;
      if (!ok) {
        // The failed step left the cache in an unknown state and the
        // engine dropped its requests: a fresh serving loop takes the next.
        std::fprintf(stderr, "strata serve: error: %s\n", error.c_str());
        engine_.stopServing();
        std::string again;
        serving = engine_.startServing(options_, again);
        if (!serving)
          std::fprintf(stderr,
                       "strata serve: error: the engine cannot serve again: "
                       "%s\n",
                       again.c_str());
      }
      // The blocks of the requests that ended are free: /metrics says so
      // before their clients hear of the end.
      {
        std::lock_guard<std::mutex> lock(mutex_);
        publishStats();
      }
      for (ServeResult &r : ended)
        finish(r);
      if (!ok)
        failActive(500, "the engine failed: " + error, "error");
      if (!serving) {
        std::lock_guard<std::mutex> lock(mutex_);
        broken_ = true;
        for (Queued &q : queue_)
          q.job->channel->push(failure(503, "the engine failed: " + error));
        queue_.clear();
      }
    }
    std::unique_lock<std::mutex> lock(mutex_);
    publishStats();
    // A step that could do nothing (every running sequence waits for
    // blocks that a cancellation will free) must not spin.
    if (idle && !active_.empty() && cancels_.empty())
      wake_.wait_for(lock, std::chrono::milliseconds(1));
  }
}

} // namespace strata::serve
