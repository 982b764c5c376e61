#!/usr/bin/env python3
"""The life of requests in `strata serve`: a client that disconnects
mid-stream (or while queued) cancels its request and frees its KV blocks;
with --max-queue 1 the requests beyond the running one and the queued one
get 429; a KV pool too small for the running requests preempts some of
them and every request still gets exactly `strata run`'s text; a step
that fails answers 500 and the server serves on; SIGTERM with requests in
flight ends them and exits 0; a model without a tokenizer is refused at
start.

The slow server runs tiny-llama (about 14 ms per token on the CPU) with
the CLI tests' tokenizer, so that a long request is still running when the
test acts on it."""
import concurrent.futures
import json
import os
import subprocess
import threading
import time

from servelib import (TINY_LLAMA, TINY_TEXT, TINY_TOKENIZER, Failure, Server,
                      arguments, check, check_eq, run_tests, sse_events,
                      strata_run, stream_text)

args = arguments(__doc__)
SRC = args.source
slow = Server(args.strata, TINY_LLAMA, "--tokenizer", TINY_TOKENIZER,
              "--max-running", "1", "--max-queue", "1", cwd=SRC)
# 6 blocks of 16 tokens: room for two of the requests below at a time.
small_pool = Server(args.strata, TINY_TEXT, "--kv-blocks", "6", cwd=SRC)

# Sampled: greedy tiny-llama repeats an id above the tokenizer's 320, which
# decodes to no text, and the stream would show nothing.
LONG = {"prompt": "the cat sat", "max_tokens": 1500, "temperature": 1.0,
        "seed": 1, "ignore_eos": True, "stream": True}
CANCELLED = 'strata_requests_finished_total{reason="cancelled"}'


def start_long_stream():
    """A long streamed request on the slow server, read until it runs."""
    conn, resp = slow.open_stream("/v1/completions", LONG)
    check_eq(resp.status, 200, "long stream status")
    events = sse_events(resp)
    for _ in range(3):
        next(events)
    return conn, resp


def idle(m):
    return (m["strata_requests_running"] == 0 and
            m["strata_requests_waiting"] == 0 and
            m["strata_kv_blocks_used"] == 0)


def test_model_without_tokenizer_is_refused():
    out = subprocess.run([args.strata, "serve", TINY_LLAMA, "--port", "0"],
                         cwd=SRC, capture_output=True, text=True, timeout=60)
    check_eq(out.returncode, 1, "exit code")
    check_eq(out.stdout, "", "stdout")
    check("serving needs a tokenizer" in out.stderr and
          "--tokenizer" in out.stderr, f"message: {out.stderr!r}")


def test_disconnect_cancels_the_request():
    before = slow.metrics()
    conn, resp = start_long_stream()
    m = slow.metrics()
    check_eq(m["strata_requests_running"], 1, "the request runs")
    check(m["strata_kv_blocks_used"] > 0, "it holds KV blocks")
    started = time.monotonic()
    resp.close()
    conn.close()
    m = slow.wait_metrics(idle, "the cancelled request was not freed")
    # 1500 tokens take about 20 s; the request ended long before.
    check(time.monotonic() - started < 5, "cancelled promptly")
    check_eq(m[CANCELLED] - before[CANCELLED], 1, "one request cancelled")
    check(m["strata_generation_tokens_total"] -
          before["strata_generation_tokens_total"] < 1500,
          "it did not run to its end")


def test_disconnect_while_queued_cancels_the_request():
    before = slow.metrics()
    conn, resp = start_long_stream()
    queued_conn, queued = slow.open_stream(
        "/v1/completions", {**LONG, "max_tokens": 4})
    check_eq(queued.status, 200, "the queued stream's status")
    slow.wait_metrics(lambda m: m["strata_requests_waiting"] == 1,
                      "the second request waits")
    queued.close()
    queued_conn.close()
    # A queued stream finds its client gone at its next keep-alive write.
    slow.wait_metrics(lambda m: m["strata_requests_waiting"] == 0 and
                      m["strata_requests_running"] == 1,
                      "the queued request was not dropped")
    resp.close()
    conn.close()
    m = slow.wait_metrics(idle, "the running request was not freed")
    check_eq(m[CANCELLED] - before[CANCELLED], 2, "two requests cancelled")


def test_full_queue_answers_429():
    before = slow.metrics()
    conn, resp = start_long_stream()
    queued = {}

    def wait_in_queue():
        queued["answer"] = slow.post("/v1/completions",
                                     {"prompt": "hello world",
                                      "max_tokens": 4, "temperature": 0})

    waiter = threading.Thread(target=wait_in_queue)
    waiter.start()
    slow.wait_metrics(lambda m: m["strata_requests_waiting"] == 1,
                      "the second request waits")
    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(
            lambda _: slow.post("/v1/completions",
                                {"prompt": "hi", "max_tokens": 2}),
            range(6)))
    for status, body in answers:
        check_eq(status, 429, f"status ({body})")
        error = body["error"]
        check_eq((error["type"], error["code"], error["param"]),
                 ("rate_limit_error", "queue_full", None), "429 error")
        check("--max-queue" in error["message"], "the message says why")
    resp.close()
    conn.close()
    waiter.join(timeout=30)
    check(not waiter.is_alive(), "the queued request ended")
    status, body = queued["answer"]
    check_eq(status, 200, f"the queued request ({body})")
    check_eq(body["usage"]["completion_tokens"], 4, "its tokens")
    m = slow.wait_metrics(idle, "the server did not go idle")
    rejected = 'strata_requests_rejected_total{reason="queue_full"}'
    check_eq(m[rejected] - before[rejected], 6, "429s counted")


def test_a_finished_request_frees_its_place_before_its_answer():
    # One running place and no queue: each request sent once the previous
    # one's answer arrived must find the place free, never a 429.
    single = Server(args.strata, TINY_TEXT, "--max-running", "1",
                    "--max-queue", "0", cwd=SRC)
    try:
        for i in range(40):
            body = {"prompt": "the cat sat", "max_tokens": 2,
                    "temperature": 0}
            if i % 2:
                status, events, done = single.stream(
                    "/v1/completions", {**body, "stream": True})
                check(status == 200 and done, f"request {i}: {status} {events}")
            else:
                status, resp = single.post("/v1/completions", body)
                check_eq(status, 200, f"request {i} ({resp})")
    finally:
        check_eq(single.terminate(), 0, "exit code on SIGTERM")
        single.close()


def test_preemption_keeps_results_equal():
    prompts = ["the cat sat", "hello world", "in the beginning",
               "the dog sat on the log"]
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        expected = list(pool.map(
            lambda p: strata_run(args.strata, SRC, TINY_TEXT, p, 40), prompts))
    before = small_pool.metrics()
    jobs = [(i, stream) for i in range(len(prompts)) for stream in (0, 1)]

    def ask(job):
        i, stream = job
        body = {"prompt": prompts[i], "max_tokens": 40, "temperature": 0}
        if stream:
            status, events, done = small_pool.stream(
                "/v1/completions", {**body, "stream": True})
            check(status == 200 and done, f"stream {events}")
            return stream_text(events, chat=False)[0]
        status, resp = small_pool.post("/v1/completions", body)
        check_eq(status, 200, f"status ({resp})")
        return resp["choices"][0]["text"]

    with concurrent.futures.ThreadPoolExecutor(len(jobs)) as pool:
        texts = list(pool.map(ask, jobs))
    for (i, stream), text in zip(jobs, texts):
        check_eq(text, expected[i], f"text of {prompts[i]!r} (stream {stream})")
    m = small_pool.wait_metrics(idle, "the server did not go idle")
    check(m["strata_preemptions_total"] > before["strata_preemptions_total"],
          "the small pool preempted requests")
    check_eq(m["strata_kv_blocks_total"], 6, "pool size")


def test_kv_memory_and_no_prefix_cache():
    # tiny-text's KV block: K and V, 2 layers, 2 heads, 16 tokens, head dim
    # 32, bf16: 8 KiB, so 1 MiB holds 128 blocks.
    sized = Server(args.strata, TINY_TEXT, "--kv-memory", "1MiB",
                   "--no-prefix-cache", cwd=SRC)
    try:
        check_eq(sized.metrics()["strata_kv_blocks_total"], 128, "pool size")
        check("128 KV blocks of 16 tokens (1.00 MiB)" in sized.stderr(),
              f"stderr: {sized.stderr()!r}")
        prompt = "the cat sat on the mat and the dog sat on the log " * 3
        expected = strata_run(args.strata, SRC, TINY_TEXT, prompt, 12)
        for _ in range(2):
            status, resp = sized.post("/v1/completions", {
                "prompt": prompt, "max_tokens": 12, "temperature": 0})
            check_eq(status, 200, f"status ({resp})")
            check_eq(resp["choices"][0]["text"], expected, "text")
        check(resp["usage"]["prompt_tokens"] > 32,
              f"a prompt of several blocks ({resp['usage']})")
        m = sized.metrics()
        check_eq((m["strata_prefix_cache_queries_total"],
                  m["strata_prefix_cache_hits_total"]), (0, 0),
                 "prefix cache lookups with --no-prefix-cache")
    finally:
        check_eq(sized.terminate(), 0, "exit code on SIGTERM")
        sized.close()


def test_engine_failure_answers_500_and_serving_goes_on():
    # f16 activations overflow with weights of std 100 (as in
    # tests/lit/cli/non-finite.test): every step fails.
    with open(os.path.join(SRC, TINY_TEXT)) as f:
        text = f.read()
    tokenizer = os.path.abspath(
        os.path.join(SRC, os.path.dirname(TINY_TEXT), "tiny-tokenizer"))
    text = (text.replace("init_std: 0.02", "init_std: 100")
            .replace("dtype: bf16", "dtype: f16")
            .replace("path: tiny-tokenizer", "path: " + tokenizer))
    model = os.path.join(args.work, "overflow.yaml")
    with open(model, "w") as f:
        f.write(text)
    broken = Server(args.strata, model, cwd=SRC)
    try:
        for stream in (False, True):
            body = {"prompt": "the cat sat", "max_tokens": 4}
            if stream:
                status, events, done = broken.stream(
                    "/v1/completions", {**body, "stream": True})
                check(status == 200 and done, "the stream ends")
                error = events[-1]["error"]
                check_eq(events[:-1], [], "no text before the error")
            else:
                status, resp = broken.post("/v1/completions", body)
                check_eq(status, 500, f"status ({resp})")
                error = resp["error"]
            check_eq((error["type"], error["code"]),
                     ("server_error", "request_failed"), "error")
            check("the engine failed" in error["message"] and
                  "NaN" in error["message"], f"message {error['message']}")
            # The engine serves again: the server stays up.
            status, resp = broken.get_json("/health")
            check_eq(status, 200, "/health after a failed step")
        m = broken.metrics()
        check_eq(m['strata_requests_finished_total{reason="error"}'], 2,
                 "requests ended by the engine's failure")
        check_eq(m["strata_kv_blocks_used"], 0, "KV blocks in use")
        check_eq(broken.terminate(), 0, "exit code")
    finally:
        broken.close()


def test_sigterm_ends_requests_in_flight():
    conn, resp = start_long_stream()
    queued = {}

    def wait_in_queue():
        queued["answer"] = slow.post("/v1/completions",
                                     {"prompt": "hello", "max_tokens": 4})

    waiter = threading.Thread(target=wait_in_queue)
    waiter.start()
    slow.wait_metrics(lambda m: m["strata_requests_waiting"] == 1,
                      "the second request waits")
    code = slow.terminate()
    check_eq(code, 0, "exit code after SIGTERM")
    waiter.join(timeout=10)
    status, body = queued["answer"]
    check_eq(status, 503, f"the queued request ({body})")
    check_eq(body["error"]["type"], "server_error", "error type")
    # The running stream ends with an error event and [DONE].
    rest = list(sse_events(resp))
    check_eq(rest[-1], "[DONE]", "the stream's last event")
    error = json.loads(rest[-2])["error"]
    check_eq((error["type"], error["code"]), ("server_error", "request_failed"),
             "the stream's error event")
    check("shutting down" in error["message"], f"message {error}")
    conn.close()
    check("SIGTERM: stopped; 2 requests cancelled" in slow.stderr(),
          f"stderr: {slow.stderr()!r}")
    try:
        slow.request("GET", "/health")
        raise Failure("the server still accepts connections")
    except OSError:
        pass


run_tests([test_model_without_tokenizer_is_refused,
           test_disconnect_cancels_the_request,
           test_disconnect_while_queued_cancels_the_request,
           test_full_queue_answers_429,
           test_a_finished_request_frees_its_place_before_its_answer,
           test_preemption_keeps_results_equal,
           test_kv_memory_and_no_prefix_cache,
           test_engine_failure_answers_500_and_serving_goes_on,
           test_sigterm_ends_requests_in_flight], servers=[small_pool, slow])
