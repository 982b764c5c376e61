#!/usr/bin/env python3
"""`strata serve` answers as `strata run` does: concurrent clients, in any
arrival order and batched with each other (at most 4 running, 16 tokens
per step, so that prompts are chunked and wait in the queue), get for
each request exactly the text `strata run --prompt P --max-new-tokens N`
prints; streamed chunks add up to that text; stop strings, seeds, chat,
usage counts, the model list and the metrics' counts and format. The
server runs a plan file compiled here, under another model name."""
import concurrent.futures
import json
import os
import queue
import random
import subprocess
import threading
import time

from servelib import (TINY_TEXT, Failure, Server, arguments, check, check_eq,
                      histogram, run_tests, strata_run, stream_text,
                      token_count)

args = arguments(__doc__)
SRC = args.source
NAME = "served-tiny"
LONG = "the cat sat on the mat and the dog sat on the log " * 6

# (prompt, max tokens, sampling fields, the same for strata run)
GREEDY = [(p, 12, {"temperature": 0}, []) for p in
          ["the cat sat", "hello world", "in the beginning",
           "the dog sat on the log", "this is the end", "earth were there",
           "on the mat and", LONG]]
SAMPLED = [
    ("hello world", 16, {"temperature": 0.9, "seed": 11, "top_k": 40,
                         "top_p": 0.95},
     ["--temperature", "0.9", "--seed", "11", "--top-k", "40", "--top-p",
      "0.95"]),
    ("the cat sat", 16, {"temperature": 1.0, "seed": 3},
     ["--temperature", "1", "--seed", "3"]),
]
CASES = GREEDY + SAMPLED

plan = os.path.join(args.work, "tiny-text.splan")
subprocess.run([args.strata, "compile", TINY_TEXT, "-o", plan], cwd=SRC,
               check=True)


def reference(case):
    prompt, max_new, _, extra = case
    return strata_run(args.strata, SRC, TINY_TEXT, prompt, max_new, *extra)


with concurrent.futures.ThreadPoolExecutor(2) as pool:
    EXPECTED = list(pool.map(reference, CASES))
server = Server(args.strata, plan, "--model-name", NAME, "--max-running", "4",
                "--step-tokens", "16", cwd=SRC)

# Prompt lookup (--spec-lookup) needs the fused programs' verify step; its
# greedy texts are those of strata run on the fused programs.
fused = os.path.join(args.work, "tiny-text.fused.splan")
subprocess.run([args.strata, "compile", TINY_TEXT, "--emit=fused", "-o",
                fused], cwd=SRC, check=True)
with concurrent.futures.ThreadPoolExecutor(2) as pool:
    EXPECTED_FUSED = list(pool.map(
        lambda c: strata_run(args.strata, SRC, TINY_TEXT, c[0], c[1],
                             "--disable-pass="), GREEDY))
lookup_server = Server(args.strata, fused, "--model-name", NAME,
                       "--max-running", "4", "--step-tokens", "16",
                       "--spec-lookup", "--spec-tokens", "6", cwd=SRC)
# A draft model (--draft): the model itself, so every proposal is kept.
draft_server = Server(args.strata, fused, "--model-name", NAME,
                      "--max-running", "4", "--step-tokens", "16",
                      "--draft", fused, "--spec-tokens", "3", cwd=SRC)


def body(case, stream):
    prompt, max_new, sampling, _ = case
    b = {"model": NAME, "prompt": prompt, "max_tokens": max_new, **sampling}
    if stream:
        b["stream"] = True
    return b


def completion_text(case, stream):
    if stream:
        status, events, done = server.stream("/v1/completions",
                                             body(case, True))
        check_eq(status, 200, "stream status")
        check(done, "the stream ends with data: [DONE]")
        text, reasons = stream_text(events, chat=False)
        check_eq(reasons, ["length"], "a stream's finish reasons")
        return text
    status, resp = server.post("/v1/completions", body(case, False))
    check_eq(status, 200, f"status ({resp})")
    check_eq(resp["choices"][0]["finish_reason"], "length", "finish_reason")
    return resp["choices"][0]["text"]


def test_concurrent_clients_get_strata_run_text():
    # Every case streamed and not, in two shuffled orders, from 8 threads
    # that start at slightly different times.
    for order in range(2):
        jobs = [(i, s) for i in range(len(CASES)) for s in (False, True)]
        random.Random(order).shuffle(jobs)
        work = queue.Queue()
        for job in jobs:
            work.put(job)
        results, errors = {}, []

        def client(seed):
            rng = random.Random(seed)
            while True:
                try:
                    i, stream = work.get_nowait()
                except queue.Empty:
                    return
                time.sleep(rng.uniform(0, 0.02))
                try:
                    results[(i, stream)] = completion_text(CASES[i], stream)
                except Exception as e:  # reported below
                    errors.append(repr(e))

        threads = [threading.Thread(target=client, args=(order * 8 + t,))
                   for t in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        check(not errors, f"client errors: {errors}")
        for (i, stream), text in sorted(results.items()):
            check_eq(text, EXPECTED[i],
                     f"text of {CASES[i][0][:20]!r} (stream {stream})")
        check_eq(len(results), len(jobs), "answers")


def test_stream_chunks_add_up_to_the_whole_text():
    for case in CASES[:3]:
        status, events, done = server.stream("/v1/completions",
                                             body(case, True))
        check(done and status == 200, "stream ends with [DONE]")
        check(len(events) >= 3, "a text streams in several chunks")
        ids = {e["id"] for e in events}
        check_eq(len(ids), 1, "one id per stream")
        for e in events:
            check_eq(e["object"], "text_completion", "chunk object")
            check_eq(e["model"], NAME, "chunk model")
        # The finish reason comes in the last chunk only.
        check(all(c["finish_reason"] is None for e in events[:-1]
                  for c in e["choices"]), "finish_reason before the end")
        text, _ = stream_text(events, chat=False)
        check_eq(text, completion_text(case, False), "streamed text")


def test_stop_strings():
    prompt = "hello world"
    full = strata_run(args.strata, SRC, TINY_TEXT, prompt, 12)
    stop = "ld wo"
    check(full.find(stop) > 0, f"the stop string occurs in {full!r}")
    expected = strata_run(args.strata, SRC, TINY_TEXT, prompt, 12, "--stop",
                          stop)
    check_eq(expected, full[:full.find(stop)], "strata run --stop")
    for stops in (stop, ["never there", stop]):
        b = {"prompt": prompt, "max_tokens": 12, "temperature": 0,
             "stop": stops}
        status, resp = server.post("/v1/completions", b)
        check_eq(status, 200, "status")
        check_eq(resp["choices"][0]["text"], expected, "text before the stop")
        check_eq(resp["choices"][0]["finish_reason"], "stop", "finish_reason")
        check(resp["usage"]["completion_tokens"] < 12,
              "generation ended at the stop string")
        status, events, _ = server.stream("/v1/completions",
                                          {**b, "stream": True})
        text, reasons = stream_text(events, chat=False)
        check_eq(text, expected, "streamed text before the stop")
        check_eq(reasons, ["stop"], "streamed finish_reason")
    # A stop string that never occurs changes nothing.
    status, resp = server.post("/v1/completions",
                               {"prompt": prompt, "max_tokens": 12,
                                "temperature": 0, "stop": ["zzz"]})
    check_eq(resp["choices"][0]["text"], full, "text without a match")
    check_eq(resp["choices"][0]["finish_reason"], "length", "finish_reason")


def test_usage_counts():
    for prompt in ("the cat sat", LONG):
        n = token_count(args.strata, SRC, TINY_TEXT, prompt)
        status, resp = server.post("/v1/completions",
                                   {"prompt": prompt, "max_tokens": 5,
                                    "temperature": 0})
        check_eq(resp["usage"], {"prompt_tokens": n, "completion_tokens": 5,
                                 "total_tokens": n + 5}, "usage")
        status, events, done = server.stream(
            "/v1/completions",
            {"prompt": prompt, "max_tokens": 5, "temperature": 0,
             "stream": True, "stream_options": {"include_usage": True}})
        check(done, "[DONE]")
        check_eq(events[-1]["choices"], [], "the usage chunk has no choices")
        check_eq(events[-1]["usage"], resp["usage"], "streamed usage")
        check(all(e["usage"] is None for e in events[:-1]),
              "other chunks carry usage: null")
    # Without max_tokens a completion gets OpenAI's default of 16 tokens.
    status, resp = server.post("/v1/completions",
                               {"prompt": "hello world", "temperature": 0})
    check_eq(resp["usage"]["completion_tokens"], 16, "default max_tokens")


def test_prompt_as_token_ids():
    ids = subprocess.run([args.strata, "tokenize", TINY_TEXT, "--text",
                          "hello world", "--special"], cwd=SRC,
                         capture_output=True, check=True).stdout.split()
    ids = [int(i) for i in ids]
    i = [c[0] for c in CASES].index("hello world")
    for prompt in (ids, [ids]):
        status, resp = server.post("/v1/completions",
                                   {"prompt": prompt, "max_tokens": 12,
                                    "temperature": 0})
        check_eq(status, 200, f"status ({resp})")
        check_eq(resp["choices"][0]["text"], EXPECTED[i], "text of the ids")
        check_eq(resp["usage"]["prompt_tokens"], len(ids), "prompt_tokens")


def test_seeds():
    # With a seed a sampled request is reproducible (checked against
    # strata run above); without one, each request draws its own.
    case = SAMPLED[0]
    texts = [completion_text(case, False) for _ in range(2)]
    check_eq(texts, [EXPECTED[len(GREEDY)]] * 2, "seeded texts")
    unseeded = set()
    for _ in range(4):
        status, resp = server.post("/v1/completions",
                                   {"prompt": "hello world", "max_tokens": 16,
                                    "temperature": 1.0})
        unseeded.add(resp["choices"][0]["text"])
    check(len(unseeded) > 1, f"unseeded requests all gave {unseeded}")


def test_chat_completions():
    expected = strata_run(args.strata, SRC, TINY_TEXT, "hello world", 10,
                          "--chat", "--system", "be brief")
    messages = [{"role": "system", "content": "be brief"},
                {"role": "user", "content": "hello world"}]
    b = {"model": NAME, "messages": messages, "max_tokens": 10,
         "temperature": 0}
    status, resp = server.post("/v1/chat/completions", b)
    check_eq(status, 200, f"status ({resp})")
    check_eq(resp["object"], "chat.completion", "object")
    check(resp["id"].startswith("chatcmpl-"), "id")
    message = resp["choices"][0]["message"]
    check_eq(message, {"role": "assistant", "content": expected}, "message")
    chat_text = ("<|im_start|>system\nbe brief<|im_end|>\n<|im_start|>user\n"
                 "hello world<|im_end|>\n<|im_start|>assistant\n")
    n = len(subprocess.run([args.strata, "tokenize", TINY_TEXT, "--text",
                            chat_text], cwd=SRC, capture_output=True,
                           check=True).stdout.split())
    check_eq(resp["usage"]["prompt_tokens"], n, "chat prompt_tokens")
    # Text parts are joined; the stream starts with the assistant's role.
    parts = [{"role": "system", "content": "be brief"},
             {"role": "user", "content": [{"type": "text", "text": "hello "},
                                          {"type": "text", "text": "world"}]}]
    status, events, done = server.stream(
        "/v1/chat/completions", {**b, "messages": parts, "stream": True})
    check(done and status == 200, "chat stream")
    check_eq(events[0]["choices"][0]["delta"],
             {"role": "assistant", "content": ""}, "first delta")
    check(all(e["object"] == "chat.completion.chunk" for e in events),
          "chunk objects")
    text, reasons = stream_text(events, chat=True)
    check_eq(text, expected, "streamed chat text")
    check_eq(reasons, ["length"], "finish reasons")
    # A conversation: earlier turns are written into the prompt.
    turns = [{"role": "user", "content": "hi"},
             {"role": "assistant", "content": "hello"},
             {"role": "user", "content": "the cat"}]
    status, resp = server.post("/v1/chat/completions",
                               {"messages": turns, "max_tokens": 4})
    check_eq(status, 200, f"conversation ({resp})")
    text = ("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\nhello"
            "<|im_end|>\n<|im_start|>user\nthe cat<|im_end|>\n"
            "<|im_start|>assistant\n")
    n = len(subprocess.run([args.strata, "tokenize", TINY_TEXT, "--text",
                            text], cwd=SRC, capture_output=True,
                           check=True).stdout.split())
    check_eq(resp["usage"]["prompt_tokens"], n, "conversation prompt_tokens")
    # Chat without max_tokens may run to the end of the context (256).
    status, resp = server.post("/v1/chat/completions",
                               {"messages": messages, "temperature": 0,
                                "ignore_eos": True})
    usage = resp["usage"]
    check_eq(usage["total_tokens"], 256, "a chat runs to the context's end")


def test_models_and_health():
    status, resp = server.get_json("/health")
    check_eq((status, resp), (200, {"status": "ok"}), "/health")
    status, resp = server.get_json("/v1/models")
    check_eq(status, 200, "/v1/models")
    check_eq(resp["object"], "list", "list object")
    check_eq([m["id"] for m in resp["data"]], [NAME], "model ids")
    check_eq(resp["data"][0]["max_model_len"], 256, "max_model_len")
    status, resp = server.get_json("/v1/models/" + NAME)
    check_eq((status, resp["id"]), (200, NAME), "/v1/models/NAME")
    status, resp = server.get_json("/v1/models/tiny-text")
    check_eq(status, 404, "another model's page")
    check_eq(resp["error"]["code"], "model_not_found", "error code")


def test_metrics_counts_and_format():
    before = server.wait_metrics(
        lambda m: m["strata_requests_running"] == 0 and
        m["strata_requests_waiting"] == 0, "the server is idle")
    usages = []
    for case in GREEDY[:4]:
        status, resp = server.post("/v1/completions", body(case, False))
        usages.append(resp["usage"])
    after = server.metrics()

    def delta(name):
        return after[name] - before[name]

    generated = sum(u["completion_tokens"] for u in usages)
    check_eq(delta("strata_generation_tokens_total"), generated,
             "generation tokens")
    check_eq(delta("strata_prompt_tokens_total"),
             sum(u["prompt_tokens"] for u in usages), "prompt tokens")
    check_eq(delta("strata_time_to_first_token_seconds_count"), 4,
             "first tokens timed")
    check_eq(delta("strata_inter_token_latency_seconds_count"),
             generated - 4, "inter-token gaps timed")
    check_eq(delta('strata_requests_finished_total{reason="length"}'), 4,
             "requests finished by length")
    check_eq(after["strata_kv_blocks_used"], 0, "KV blocks in use")
    check_eq(after["strata_kv_blocks_total"], 256 * 4 // 16,
             "the default pool: 4 running at 256 positions")
    # The CPU backend has no CUDA graphs: the counters are there, at 0.
    for name in ("strata_decode_graph_steps_total",
                 "strata_decode_graph_replays_total",
                 "strata_decode_graph_captures_total"):
        check_eq(after[name], 0, f"{name} on the CPU")
    types = after["__types__"]
    for name, kind in [("strata_requests_running", "gauge"),
                       ("strata_decode_graph_replays_total", "counter"),
                       ("strata_requests_waiting", "gauge"),
                       ("strata_kv_blocks_used", "gauge"),
                       ("strata_kv_blocks_total", "gauge"),
                       ("strata_prompt_tokens_total", "counter"),
                       ("strata_generation_tokens_total", "counter"),
                       ("strata_requests_finished_total", "counter"),
                       ("strata_requests_rejected_total", "counter"),
                       ("strata_time_to_first_token_seconds", "histogram"),
                       ("strata_inter_token_latency_seconds", "histogram")]:
        check_eq(types.get(name), kind, f"type of {name}")
    for name in ("strata_time_to_first_token_seconds",
                 "strata_inter_token_latency_seconds",
                 "strata_request_latency_seconds"):
        buckets, total, count = histogram(after, name)
        counts = [c for _, c in buckets]
        check(counts == sorted(counts), f"{name} buckets are cumulative")
        check_eq(buckets[-1], (float("inf"), count), f"{name} +Inf bucket")
        check(total > 0, f"{name} sum")


def test_prefix_cache_reuses_a_prompt():
    i = [c[0] for c in CASES].index(LONG)
    before = server.wait_metrics(
        lambda m: m["strata_requests_running"] == 0, "the server is idle")
    for _ in range(2):
        status, resp = server.post("/v1/completions", body(CASES[i], False))
        check_eq(status, 200, f"status ({resp})")
        check_eq(resp["choices"][0]["text"], EXPECTED[i], "text")
    after = server.metrics()
    prompt = resp["usage"]["prompt_tokens"]
    queried = (after["strata_prefix_cache_queries_total"] -
               before["strata_prefix_cache_queries_total"])
    hits = (after["strata_prefix_cache_hits_total"] -
            before["strata_prefix_cache_hits_total"])
    check_eq(queried, 2 * prompt, "prompt tokens looked up")
    # The second request finds at least every full block of the first's
    # prompt but the one holding its last token.
    check(hits >= (prompt - 1) // 16 * 16 > 0,
          f"prefix-cache hits {hits} for a prompt of {prompt} tokens")


def test_speculation_gives_the_text_of_plain_decoding():
    for name, spec in (("prompt lookup", lookup_server),
                       ("a draft model", draft_server)):
        def text(case):
            status, resp = spec.post(
                "/v1/completions",
                {"model": NAME, "prompt": case[0], "max_tokens": case[1],
                 "temperature": 0})
            check_eq(status, 200, f"status ({resp})")
            return resp["choices"][0]["text"]

        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            texts = list(pool.map(text, GREEDY))
        for case, got, want in zip(GREEDY, texts, EXPECTED_FUSED):
            check_eq(got, want, f"text of {case[0][:20]!r} with {name}")
        m = spec.metrics()
        check(m["strata_spec_verify_steps_total"] > 0,
              f"verify steps ran with {name}")
        check(m["strata_spec_proposed_tokens_total"] >=
              m["strata_spec_accepted_tokens_total"],
              f"accepted <= proposed with {name}")


run_tests([test_models_and_health, test_concurrent_clients_get_strata_run_text,
           test_stream_chunks_add_up_to_the_whole_text, test_stop_strings,
           test_usage_counts, test_prompt_as_token_ids, test_seeds,
           test_chat_completions, test_metrics_counts_and_format,
           test_prefix_cache_reuses_a_prompt,
           test_speculation_gives_the_text_of_plain_decoding],
          servers=[server, lookup_server, draft_server])
