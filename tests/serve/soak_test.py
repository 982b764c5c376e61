#!/usr/bin/env python3
"""A short soak of `strata serve`: a few hundred small requests from 8
threads (completions and chats, whole and streamed, greedy and sampled,
some clients leaving mid-stream) get no error, the server ends idle with
every KV block free, and its resident memory (VmRSS) does not grow from
after a warm-up of the same traffic to the end, beyond a small slack.
Not compared in a sanitizer build, whose quarantine holds freed memory."""
import random
import threading

from servelib import (TINY_TEXT, Server, arguments, check, check_eq,
                      run_tests, sse_events)

args = arguments(__doc__)
# 8 running and 8 queued: 24 HTTP threads, every one of which the warm-up
# uses (a thread's stack pages become resident when it first serves).
server = Server(args.strata, TINY_TEXT, "--max-running", "8", "--max-queue",
                "8", cwd=args.source)
PROMPTS = ["the cat sat", "hello world", "in the beginning of the end",
           "the dog sat on the log and the cat sat on the mat"]
WARM_UP, MEASURED = 200, 900
# Measured on the development machine: the resident size moves by 80 to
# 260 KiB over such a run (allocator pages), while keeping each request's
# state (its job, text stream and channel) grows it by 1.1 to 1.2 MiB.
SLACK_KIB = 768


def one_request(rng, index):
    """Sends request `index`; returns an error text or None."""
    chat = rng.random() < 0.3
    body = {"max_tokens": rng.randint(1, 8)}
    if rng.random() < 0.5:
        body["temperature"] = 0
    else:
        body.update(temperature=0.8, seed=rng.randint(0, 1000))
    prompt = rng.choice(PROMPTS)
    if chat:
        body["messages"] = [{"role": "user", "content": prompt}]
        path = "/v1/chat/completions"
    else:
        body["prompt"] = prompt
        path = "/v1/completions"
    kind = rng.random()
    if kind < 0.05:
        # A client that leaves after the first event.
        conn, resp = server.open_stream(path, {**body, "stream": True})
        if resp.status != 200:
            return f"status {resp.status}"
        next(sse_events(resp), None)
        resp.close()
        conn.close()
        return None
    if kind < 0.5:
        status, events, done = server.stream(path, {**body, "stream": True})
        if status != 200 or not done:
            return f"stream status {status}, done {done}: {events[-1:]}"
        return None
    status, resp = server.post(path, body)
    if status != 200:
        return f"status {status}: {resp}"
    if resp["usage"]["completion_tokens"] > body["max_tokens"]:
        return f"more tokens than asked: {resp['usage']}"
    return None


def traffic(count, seed):
    errors, lock = [], threading.Lock()
    counter = iter(range(count))

    def client(t):
        rng = random.Random(seed * 100 + t)
        for index in counter:
            try:
                error = one_request(rng, index)
            except Exception as e:  # counted as an error
                error = repr(e)
            if error:
                with lock:
                    errors.append(error)

    threads = [threading.Thread(target=client, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def idle(m):
    return (m["strata_requests_running"] == 0 and
            m["strata_requests_waiting"] == 0 and
            m["strata_kv_blocks_used"] == 0)


def test_soak_without_errors_or_growth():
    check_eq(traffic(WARM_UP, 1), [], "errors during the warm-up")
    server.wait_metrics(idle, "idle after the warm-up")
    before = server.rss_kib()
    check_eq(traffic(MEASURED, 2), [], "errors")
    m = server.wait_metrics(idle, "idle after the soak")
    after = server.rss_kib()
    print(f"VmRSS {before} KiB after the warm-up, {after} KiB after "
          f"{MEASURED} more requests ({after - before:+d} KiB)")
    finished = sum(v for k, v in m.items()
                   if k.startswith("strata_requests_finished_total"))
    check_eq(finished, WARM_UP + MEASURED, "requests that ended")
    check_eq(m['strata_requests_finished_total{reason="error"}'], 0,
             "engine errors")
    if args.sanitized:
        # AddressSanitizer keeps freed memory in quarantine: the resident
        # size measures that, not the server.
        print("memory not compared: sanitizer build")
        return
    check(after - before <= SLACK_KIB,
          f"VmRSS grew by {after - before} KiB (slack {SLACK_KIB} KiB)")


run_tests([test_soak_without_errors_or_growth], servers=[server])
