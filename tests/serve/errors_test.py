#!/usr/bin/env python3
"""Bad requests to `strata serve` get an OpenAI-style error object
{"error": {"message", "type", "param", "code"}} with the right status and
the field at fault: malformed JSON, wrong types and values, fields that
would change the answer and are not implemented, unknown fields, an
unknown model, prompts longer than the context or the KV pool, chats of
another shape, unknown routes; fields that change nothing are accepted.
The server keeps serving throughout, and SIGINT stops it with exit code
0."""
import json
import signal

from servelib import (TINY_TEXT, Server, arguments, check, check_eq,
                      raw_request, run_tests)

args = arguments(__doc__)
# A pool of 8 blocks of 16 tokens: 128 tokens per request, half the
# context of 256.
server = Server(args.strata, TINY_TEXT, "--kv-blocks", "8", cwd=args.source)

C, CHAT = "/v1/completions", "/v1/chat/completions"
P = {"prompt": "the cat sat", "max_tokens": 2, "temperature": 0}
M = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2,
     "temperature": 0}
LONG = "the cat sat on the mat and " * 60  # far beyond 256 tokens

# (route, body, status, param, code); a body given as bytes is sent as is.
BAD = [
    (C, b'{"prompt": "x",}', 400, None, "invalid_json"),
    (C, b'{"prompt": "x"', 400, None, "invalid_json"),
    (C, b'{"prompt": "x", "prompt": "y"}', 400, None, "invalid_json"),
    (C, b'', 400, None, "invalid_json"),
    (C, b'[1, 2]', 400, None, "invalid_json"),
    (C, b'{"prompt": "\xff"}', 400, None, "invalid_json"),
    (C, {"max_tokens": 2}, 400, "prompt", "missing_field"),
    (C, {"prompt": 5}, 400, "prompt", "invalid_type"),
    (C, {"prompt": []}, 400, "prompt", "invalid_value"),
    (C, {"prompt": ["a", "b"]}, 400, "prompt", "unsupported_field"),
    (C, {"prompt": [1, "a"]}, 400, "prompt", "invalid_type"),
    (C, {"prompt": [1, 99999]}, 400, "prompt", "invalid_value"),
    (C, {"prompt": [-1]}, 400, "prompt", "invalid_value"),
    (C, {**P, "max_tokens": "3"}, 400, "max_tokens", "invalid_type"),
    (C, {**P, "max_tokens": 1.5}, 400, "max_tokens", "invalid_type"),
    (C, {**P, "max_tokens": 0}, 400, "max_tokens", "invalid_value"),
    (C, {**P, "temperature": "hot"}, 400, "temperature", "invalid_type"),
    (C, {**P, "temperature": -1}, 400, "temperature", "invalid_value"),
    (C, {**P, "top_p": 0}, 400, "top_p", "invalid_value"),
    (C, {**P, "top_p": 1.5}, 400, "top_p", "invalid_value"),
    (C, {**P, "top_k": -2}, 400, "top_k", "invalid_value"),
    (C, {**P, "top_k": True}, 400, "top_k", "invalid_type"),
    (C, {**P, "seed": -1}, 400, "seed", "invalid_value"),
    (C, {**P, "seed": "1"}, 400, "seed", "invalid_type"),
    (C, {**P, "stream": "yes"}, 400, "stream", "invalid_type"),
    (C, {**P, "stop": 7}, 400, "stop", "invalid_type"),
    (C, {**P, "stop": ["a", 1]}, 400, "stop", "invalid_type"),
    (C, {**P, "stop": ["s"] * 17}, 400, "stop", "invalid_value"),
    (C, {**P, "stream_options": {"include_usage": True}}, 400,
     "stream_options", "invalid_value"),
    (C, {**P, "stream": True, "stream_options": {"x": 1}}, 400,
     "stream_options.x", "unknown_field"),
    (C, {**P, "n": 2}, 400, "n", "unsupported_field"),
    (C, {**P, "best_of": 3}, 400, "best_of", "unsupported_field"),
    (C, {**P, "logprobs": 1}, 400, "logprobs", "unsupported_field"),
    (C, {**P, "echo": True}, 400, "echo", "unsupported_field"),
    (C, {**P, "suffix": "end"}, 400, "suffix", "unsupported_field"),
    (C, {**P, "presence_penalty": 0.5}, 400, "presence_penalty",
     "unsupported_field"),
    (C, {**P, "frequency_penalty": 1}, 400, "frequency_penalty",
     "unsupported_field"),
    (C, {**P, "logit_bias": {"1": 5}}, 400, "logit_bias",
     "unsupported_field"),
    (C, {**P, "tools": []}, 400, "tools", "unknown_field"),
    (C, {**P, "messages": []}, 400, "messages", "unknown_field"),
    (C, {**P, "foo": 1}, 400, "foo", "unknown_field"),
    (C, {**P, "model": "gpt-4"}, 400, "model", "model_not_found"),
    (C, {**P, "model": 1}, 400, "model", "invalid_type"),
    (C, {"prompt": LONG}, 400, "prompt", "context_length_exceeded"),
    (C, {"prompt": "the cat " * 40}, 400, "prompt",
     "context_length_exceeded"),  # over the pool's 128, under 256
    (C, {**P, "max_tokens": 250}, 400, "max_tokens",
     "context_length_exceeded"),
    (C, {**P, "max_tokens": 125}, 400, "max_tokens",
     "context_length_exceeded"),  # over the pool, within the context
    (CHAT, {"max_tokens": 2}, 400, "messages", "missing_field"),
    (CHAT, {"messages": "hi"}, 400, "messages", "invalid_type"),
    (CHAT, {"messages": []}, 400, "messages", "invalid_value"),
    (CHAT, {"messages": [{"content": "hi"}]}, 400, "messages[0].role",
     "missing_field"),
    (CHAT, {"messages": [{"role": "user"}]}, 400, "messages[0].content",
     "missing_field"),
    (CHAT, {"messages": [{"role": "tool", "content": "x"}]}, 400,
     "messages[0].role", "unsupported_field"),
    (CHAT, {"messages": [{"role": "user", "content": "x",
                          "tool_calls": []}]}, 400,
     "messages[0].tool_calls", "unsupported_field"),
    (CHAT, {"messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "x"}}]}]}, 400,
     "messages[0].content[0].image_url", "unsupported_field"),
    (CHAT, {"messages": [{"role": "user", "content": 3}]}, 400,
     "messages[0].content", "invalid_type"),
    (CHAT, {"messages": [{"role": "user", "content": "a"},
                         {"role": "assistant", "content": "b"}]}, 400,
     "messages[1].role", "invalid_value"),
    (CHAT, {"messages": [{"role": "user", "content": "a"},
                         {"role": "user", "content": "b"}]}, 400,
     "messages[1].role", "invalid_value"),
    (CHAT, {"messages": [{"role": "user", "content": "a"},
                         {"role": "assistant", "content": "b"},
                         {"role": "system", "content": "c"}]}, 400,
     "messages[2].role", "invalid_value"),
    (CHAT, {"messages": [{"role": "system", "content": "a"}]}, 400,
     "messages[0].role", "invalid_value"),
    (CHAT, {**M, "tools": [{"type": "function"}]}, 400, "tools",
     "unsupported_field"),
    (CHAT, {**M, "tool_choice": "auto"}, 400, "tool_choice",
     "unsupported_field"),
    (CHAT, {**M, "response_format": {"type": "json_object"}}, 400,
     "response_format", "unsupported_field"),
    (CHAT, {**M, "logprobs": True}, 400, "logprobs", "unsupported_field"),
    (CHAT, {**M, "top_logprobs": 2}, 400, "top_logprobs",
     "unsupported_field"),
    (CHAT, {**M, "n": 3}, 400, "n", "unsupported_field"),
    (CHAT, {**M, "max_tokens": 2, "max_completion_tokens": 3}, 400,
     "max_completion_tokens", "invalid_value"),
    (CHAT, {"messages": M["messages"], "max_completion_tokens": 300}, 400,
     "max_completion_tokens",
     "context_length_exceeded"),
    (CHAT, {**M, "echo": True}, 400, "echo", "unknown_field"),
    (CHAT, {**M, "prompt": "x"}, 400, "prompt", "unknown_field"),
    (CHAT, {**M, "messages": [{"role": "user", "content": LONG}]}, 400,
     "messages", "context_length_exceeded"),
]

# Fields that change nothing, and "off" values of unsupported ones.
ACCEPTED = [
    (C, {**P, "user": "me"}),
    (C, {**P, "n": 1, "best_of": 1, "echo": False, "suffix": None,
         "logprobs": None, "presence_penalty": 0, "frequency_penalty": 0.0,
         "logit_bias": {}, "stop": None, "seed": None, "top_k": -1}),
    (C, {**P, "model": "tiny-text"}),
    (C, {**P, "prompt": ["the cat sat"]}),
    (C, {**P, "max_tokens": 120}),  # 7 + 120 tokens fit the pool's 128
    (CHAT, {**M, "user": "me", "metadata": {"a": "b"}, "store": False,
            "service_tier": "auto", "parallel_tool_calls": True,
            "logprobs": False, "top_logprobs": 0, "tools": [],
            "tool_choice": "none", "response_format": {"type": "text"}}),
    (CHAT, {"messages": [{"role": "developer", "content": "be brief",
                          "name": "ops"},
                         {"role": "user", "content": "hi", "name": "me"}],
            "max_completion_tokens": 2}),
]


def check_error(status, body, expected_status, param, code, what):
    check_eq(status, expected_status, f"{what}: status")
    check_eq(set(body), {"error"}, f"{what}: body keys")
    error = body["error"]
    check_eq(set(error), {"message", "type", "param", "code"},
             f"{what}: error keys")
    check(isinstance(error["message"], str) and error["message"],
          f"{what}: a message")
    check_eq(error["param"], param, f"{what}: param ({error['message']})")
    check_eq(error["code"], code, f"{what}: code ({error['message']})")
    return error


def test_bad_requests_get_error_objects():
    before = server.metrics()
    for route, body, status, param, code in BAD:
        got, _, data = server.request("POST", route, body)

        error = check_error(got, json.loads(data), status, param, code,
                            f"{route} {body!r:.80}")
        check_eq(error["type"], "invalid_request_error", "type")
        if param:
            check(param.split("[")[0].split(".")[0] in error["message"],
                  f"the message names the field: {error['message']}")
    after = server.metrics()
    check_eq(after['strata_requests_rejected_total{reason="invalid"}'] -
             before['strata_requests_rejected_total{reason="invalid"}'],
             len(BAD), "invalid requests counted")
    check_eq(after["strata_engine_steps_total"],
             before["strata_engine_steps_total"],
             "no bad request reached the engine")


def test_harmless_fields_are_accepted():
    for route, body in ACCEPTED:
        status, resp = server.post(route, body)
        check_eq(status, 200, f"{route} {body!r:.80}: {resp}")


def test_unknown_routes():
    for method, path in [("GET", "/v1/nothing"), ("POST", "/v1/models"),
                         ("GET", "/v1/completions"), ("GET", "/")]:
        status, ctype, data = server.request(method, path)

        error = check_error(status, json.loads(data), 404, None, "not_found",
                            f"{method} {path}")
        check(path in error["message"], "the message names the route")
        check(ctype.startswith("application/json"), "an error is JSON")


def test_garbage_on_the_socket():
    # Not HTTP at all: httplib answers 400 and the server goes on.
    check_eq(raw_request(server.port, b"HELLO\r\n\r\n"), 400, "not HTTP")
    status, resp = server.post(C, P)
    check_eq(status, 200, "the server still answers")


def test_sigint_stops_the_server():
    check_eq(server.terminate(sig=signal.SIGINT), 0, "exit code after SIGINT")
    check("strata serve: SIGINT: stopped; 0 requests cancelled" in
          server.stderr(), f"stderr: {server.stderr()!r}")


run_tests([test_bad_requests_get_error_objects,
           test_harmless_fields_are_accepted, test_unknown_routes,
           test_garbage_on_the_socket, test_sigint_stops_the_server],
          servers=[server])
