#include "tools/serve/HttpRoutes.h"

#include "tools/serve/OpenAiResponse.h"

#include <httplib.h>

#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <exception>
#include <memory>

namespace strata::serve {

namespace {

// How long a streaming handler waits for text before it writes an SSE
// comment: writing is how it finds out that its client went away.
constexpr std::chrono::milliseconds kStreamIdle{1000};

struct Context {
  const ServedModel &model;
  EngineLoop &loop;
  ServeMetrics &metrics;
  std::atomic<int64_t> &open;
};

/// Counts a completion as open for as long as it lives.
class OpenResponse {
public:
  explicit OpenResponse(std::atomic<int64_t> &open) : open_(open) { ++open_; }
  ~OpenResponse() { --open_; }
  OpenResponse(const OpenResponse &) = delete;
  OpenResponse &operator=(const OpenResponse &) = delete;

private:
  std::atomic<int64_t> &open_;
};

ApiError serverError(int status, std::string message, const char *code) {
  ApiError error;
  error.status = status;
  error.message = std::move(message);
  error.type = status == 429  ? "rate_limit_error"
               : status < 500 ? "invalid_request_error"
                              : "server_error";
  error.code = code;
  return error;
}

void sendError(httplib::Response &res, const ApiError &error) {
  res.status = error.status;
  res.set_content(errorJson(error), "application/json");
}

std::string responseId(Endpoint endpoint) {
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016" PRIx64, freshRandom());
  return (endpoint == Endpoint::ChatCompletions ? "chatcmpl-" : "cmpl-") +
         std::string(hex);
}

/// One streamed response: its request's channel and what has been sent.
struct Stream {
  std::shared_ptr<RequestChannel> channel;
  EngineLoop *loop = nullptr;
  uint64_t ticket = 0;
  ResponseMeta meta;
  bool includeUsage = false;
  bool roleSent = false;
  /// The last event has been taken: nothing is left to cancel.
  bool ended = false;
  std::unique_ptr<OpenResponse> open;
};

bool write(httplib::DataSink &sink, const std::string &data) {
  return sink.write(data.data(), data.size());
}

// The content provider of a stream: called by httplib until it calls
// sink.done() or returns false (a write failed: the client is gone, and
// the releaser cancels the request).
bool streamNext(Stream &s, httplib::DataSink &sink) {
  const bool usageNull = s.includeUsage;
  if (s.meta.endpoint == Endpoint::ChatCompletions && !s.roleSent) {
    s.roleSent = true;
    return write(sink, chunkEvent(s.meta, "", nullptr, true, usageNull));
  }
  std::optional<RequestEvent> event = s.channel->pop(kStreamIdle);
  if (!event)
    return write(sink, ": keep-alive\n\n");
  switch (event->kind) {
  case RequestEvent::Kind::Text:
    return write(sink,
                 chunkEvent(s.meta, event->text, nullptr, false, usageNull));
  case RequestEvent::Kind::Finished: {
    s.ended = true;
    std::string out = chunkEvent(s.meta, "", finishReasonName(event->finish),
                                 false, usageNull);
    if (s.includeUsage)
      out += usageEvent(s.meta, {event->promptTokens, event->completionTokens});
    out += kDoneEvent;
    if (!write(sink, out))
      return false;
    sink.done();
    return true;
  }
  case RequestEvent::Kind::Failed:
    s.ended = true;
    if (!write(sink, errorEvent(serverError(event->status, event->text,
                                            "request_failed")) +
                         kDoneEvent))
      return false;
    sink.done();
    return true;
  }
  return false;
}

void handleGeneration(Context &ctx, Endpoint endpoint,
                      const httplib::Request &req, httplib::Response &res) {
  const Clock::time_point arrival = Clock::now();
  auto open = std::make_unique<OpenResponse>(ctx.open);
  ApiRequest request;
  ApiError error;
  auto job = std::make_unique<ServeJob>();
  if (!parseApiRequest(endpoint, req.body, request, error) ||
      !buildJob(request, ctx.model, *job, error)) {
    ctx.metrics.rejected("invalid");
    return sendError(res, error);
  }
  job->arrival = arrival;
  auto channel = std::make_shared<RequestChannel>();
  job->channel = channel;
  uint64_t ticket = 0;
  switch (ctx.loop.enqueue(std::move(job), ticket)) {
  case EngineLoop::Admission::Queued:
    break;
  case EngineLoop::Admission::QueueFull:
    ctx.metrics.rejected("queue_full");
    return sendError(res, serverError(429,
                                      "the server's queue is full "
                                      "(--max-queue); retry later",
                                      "queue_full"));
  case EngineLoop::Admission::Closed:
    ctx.metrics.rejected("unavailable");
    return sendError(res, serverError(503,
                                      "the server is shutting down or its "
                                      "engine failed",
                                      "unavailable"));
  }
  ResponseMeta meta;
  meta.endpoint = endpoint;
  meta.id = responseId(endpoint);
  meta.created = int64_t(std::time(nullptr));
  meta.model = ctx.model.name;

  if (!request.stream) {
    // The engine loop ends every request it accepted with a Finished or
    // Failed event (shutdown included), so this wait ends.
    std::string text;
    while (true) {
      std::optional<RequestEvent> event = channel->pop(kStreamIdle);
      if (!event)
        continue;
      if (event->kind == RequestEvent::Kind::Text) {
        text += event->text;
        continue;
      }
      if (event->kind == RequestEvent::Kind::Failed)
        return sendError(
            res, serverError(event->status, event->text, "request_failed"));
      res.set_content(
          completionJson(meta, text, event->finish,
                         {event->promptTokens, event->completionTokens}),
          "application/json");
      return;
    }
  }
  auto stream = std::make_shared<Stream>();
  stream->channel = channel;
  stream->loop = &ctx.loop;
  stream->ticket = ticket;
  stream->meta = meta;
  stream->includeUsage = request.includeUsage;
  // The stream stays open until httplib drops the response.
  stream->open = std::move(open);
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream",
      [stream](size_t, httplib::DataSink &sink) {
        return streamNext(*stream, sink);
      },
      // Called when the response is dropped: a stream that did not reach
      // its end lost its client, whose request must free its blocks.
      [stream](bool) {
        if (!stream->ended)
          stream->loop->cancel(stream->ticket);
        stream->open.reset();
      });
}

} // namespace

void addRoutes(httplib::Server &server, const ServedModel &model,
               EngineLoop &loop, ServeMetrics &metrics,
               std::atomic<int64_t> &open) {
  auto ctx = std::make_shared<Context>(Context{model, loop, metrics, open});
  server.Post("/v1/completions",
              [ctx](const httplib::Request &req, httplib::Response &res) {
                handleGeneration(*ctx, Endpoint::Completions, req, res);
              });
  server.Post("/v1/chat/completions",
              [ctx](const httplib::Request &req, httplib::Response &res) {
                handleGeneration(*ctx, Endpoint::ChatCompletions, req, res);
              });
  server.Get(
      "/v1/models", [ctx](const httplib::Request &, httplib::Response &res) {
        const ServedModel &m = ctx->model;
        res.set_content(modelJson(m.name, m.created, m.contextLength, false),
                        "application/json");
      });
  server.Get(R"(/v1/models/(.+))", [ctx](const httplib::Request &req,
                                         httplib::Response &res) {
    const ServedModel &m = ctx->model;
    if (req.matches[1] != m.name) {
      ApiError error;
      error.status = 404;
      error.message = "the model '" + req.matches[1].str() +
                      "' does not exist; this server serves '" + m.name + "'";
      error.code = "model_not_found";
      return sendError(res, error);
    }
    res.set_content(modelJson(m.name, m.created, m.contextLength, true),
                    "application/json");
  });
  server.Get(
      "/health", [ctx](const httplib::Request &, httplib::Response &res) {
        if (ctx->loop.healthy())
          return res.set_content("{\"status\":\"ok\"}", "application/json");
        sendError(res, serverError(503,
                                   "the server is shutting down or "
                                   "its engine failed",
                                   "unavailable"));
      });
  server.Get("/metrics",
             [ctx](const httplib::Request &, httplib::Response &res) {
               res.set_content(ctx->metrics.prometheus(ctx->loop.load()),
                               "text/plain; version=0.0.4; charset=utf-8");
             });
  // Statuses httplib sets itself (404 no route, 413 body too large, 400
  // unreadable request) get an error object too; the handlers' own errors
  // have their body already.
  server.set_error_handler(
      [](const httplib::Request &req, httplib::Response &res) {
        if (!res.body.empty())
          return;
        ApiError error;
        error.status = res.status;
        if (res.status == 404) {
          error.message = "no route " + req.method + " " + req.path;
          error.code = "not_found";
        } else if (res.status == 413) {
          error.message = "the request body is larger than " +
                          std::to_string(kMaxBodyBytes >> 20) + " MiB";
          error.code = "body_too_large";
        } else {
          error.message = "HTTP status " + std::to_string(res.status);
        }
        res.set_content(errorJson(error), "application/json");
      });
  server.set_exception_handler([](const httplib::Request &,
                                  httplib::Response &res,
                                  std::exception_ptr thrown) {
    std::string what = "unknown error";
    try {
      std::rethrow_exception(thrown);
    } catch (const std::exception &e) {
      what = e.what();
    } catch (...) {
    }
    sendError(res, serverError(500, "internal error: " + what, "internal"));
  });
}

} // namespace strata::serve
