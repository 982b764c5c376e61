#!/usr/bin/env python3
"""`strata bench-serve` and `strata-bench --serve` against `strata serve`
(the tiny text model, at most 2 running and 4 queued): the JSON report
counts every request and token the server's metrics count, its latencies
are positive and ordered; Poisson arrivals, a shared prefix that the
prefix cache finds, the markdown report; a burst beyond the server's queue
gets 429s (reported, exit 0) unless --max-concurrency holds it back; a
server that refuses every request, a silent server (--timeout), a URL
where nothing listens and lengths beyond the model's context end with one
message and their exit code."""
import http.server
import json
import socket
import subprocess
import threading
import time

from servelib import TINY_TEXT, Server, arguments, check, check_eq, run_tests

args = arguments(__doc__)
SRC = args.source
VOCAB = "320"  # tiny-text's vocabulary
RUNNING, QUEUE = 2, 4
server = Server(args.strata, TINY_TEXT, "--max-running", str(RUNNING),
                "--max-queue", str(QUEUE), cwd=SRC)
URL = f"http://127.0.0.1:{server.port}"


def run(command, timeout=120):
    """(exit code, stdout, stderr)."""
    out = subprocess.run(command, cwd=SRC, capture_output=True, text=True,
                         timeout=timeout)
    return out.returncode, out.stdout, out.stderr


def bench(*options, url=URL):
    return run([args.strata, "bench-serve", "--url", url, *options])


def bench_json(*options):
    code, out, err = bench("--vocab", VOCAB, "--json", *options)
    check_eq(code, 0, f"exit code (stderr {err!r})")
    return json.loads(out)


def check_latencies(report, requests, output_len):
    check_eq(report["completed"], requests, "completed")
    check_eq(report["failed"], 0, "failed")
    check_eq(report["first_error"], None, "first_error")
    check_eq(report["total_output_tokens"], requests * output_len,
             "output tokens")
    check(report["duration_s"] > 0, "duration")
    for key in ("request_throughput", "input_throughput",
                "output_throughput"):
        check(report[key] > 0, f"{key} {report[key]}")
    check(abs(report["request_throughput"] * report["duration_s"] -
              requests) < 1e-6, "request throughput is completed / duration")
    check(abs(report["output_throughput"] * report["duration_s"] -
              requests * output_len) < 1e-6,
          "output throughput is tokens / duration")
    for key, count in (("ttft_ms", requests), ("tpot_ms", requests),
                       ("e2el_ms", requests), ("itl_ms", None)):
        d = report[key]
        if count is not None:
            check_eq(d["count"], count, f"{key} count")
        check(d["count"] > 0, f"{key} has values")
        check(0 < d["median"] <= d["p99"], f"{key} median <= p99: {d}")
        check(d["mean"] > 0, f"{key} mean: {d}")
    # A request's first token comes before its end, and its TPOT spreads
    # the rest over output_len - 1 tokens.
    check(report["ttft_ms"]["mean"] <= report["e2el_ms"]["mean"],
          "TTFT <= E2E")
    check(report["tpot_ms"]["mean"] * (output_len - 1) <=
          report["e2el_ms"]["mean"] + 1e-6, "TPOT within E2E")


def metrics_delta(action):
    server.wait_metrics(lambda m: m["strata_requests_running"] == 0 and
                        m["strata_requests_waiting"] == 0, "the server is idle")
    before = server.metrics()
    result = action()
    after = server.metrics()
    return result, {k: after[k] - before[k] for k in after
                    if k != "__types__"}


def test_capped_run_counts_what_the_server_counts():
    report, delta = metrics_delta(lambda: bench_json(
        "--num-requests", "12", "--input-len", "16", "--output-len", "8",
        "--max-concurrency", "4"))
    check_latencies(report, 12, 8)
    check_eq(report["total_input_tokens"], 12 * 16, "input tokens")
    check_eq(report["tool"], "strata bench-serve", "tool")
    check_eq(report["model"], "tiny-text", "model")
    check_eq(report["url"], URL, "url")
    settings = report["settings"]
    check_eq((settings["num_requests"], settings["input_len"],
              settings["output_len"], settings["max_concurrency"],
              settings["request_rate"], settings["vocab"]),
             (12, 16, 8, 4, "inf", 320), "settings")
    check_eq(delta['strata_requests_finished_total{reason="length"}'], 12,
             "requests the server finished")
    check_eq(delta["strata_generation_tokens_total"], 96, "tokens generated")
    check_eq(delta["strata_prompt_tokens_total"], 192, "prompt tokens")


def test_poisson_arrivals():
    # 12 requests at 40 per second: the last leaves about 11/40 s after the
    # first (the gaps are fixed by the seed), so the run takes longer than
    # its requests' latencies alone.
    report = bench_json("--num-requests", "12", "--input-len", "16",
                        "--output-len", "8", "--request-rate", "40",
                        "--max-concurrency", "4")
    check_latencies(report, 12, 8)
    check_eq(report["settings"]["request_rate"], 40, "request_rate")
    check(report["duration_s"] > 0.1, f"duration {report['duration_s']}")
    # Random lengths: the counts come from each request's usage.
    report = bench_json("--num-requests", "10", "--input-len", "16",
                        "--output-len", "8", "--random-range-ratio", "0.5",
                        "--request-rate", "100", "--max-concurrency", "4",
                        "--seed", "3", "--warmup", "2")
    check_eq((report["completed"], report["failed"]), (10, 0), "completed")
    check(10 * 4 <= report["total_output_tokens"] <= 10 * 12,
          f"output tokens {report['total_output_tokens']} within 4 to 12 "
          "per request")
    check(10 * 8 <= report["total_input_tokens"] <= 10 * 24,
          f"input tokens {report['total_input_tokens']}")


def test_shared_prefix_is_found_in_the_prefix_cache():
    def hits(*extra):
        _, delta = metrics_delta(lambda: bench_json(
            "--num-requests", "8", "--input-len", "40", "--output-len", "4",
            "--max-concurrency", "2", *extra))
        return delta["strata_prefix_cache_hits_total"]

    # Random prompts share no 16-token block; with 32 shared tokens every
    # request that starts after another's prefill finds 2 blocks (two may
    # start together).
    check_eq(hits("--seed", "5"), 0, "prefix hits of random prompts")
    shared = hits("--seed", "6", "--shared-prefix-len", "32")
    check(shared >= 6 * 32, f"prefix hits {shared} with a shared prefix")


def test_markdown_report():
    code, out, err = bench("--vocab", VOCAB, "--num-requests", "4",
                           "--input-len", "8", "--output-len", "4")
    check_eq(code, 0, f"exit code ({err})")
    lines = out.splitlines()
    check(lines[0].startswith(f"server: {URL}, model tiny-text (strata "
                              "bench-serve "), f"first line {lines[0]!r}")
    for row in ("| completed ", "| failed ", "| requests/s ",
                "| output tokens/s ", "| TTFT ", "| TPOT ", "| ITL ",
                "| E2E "):
        check(any(line.startswith(row) for line in lines), f"row {row!r}")
    completed = [line for line in lines if line.startswith("| completed ")]
    check(completed[0].split("|")[2].strip() == "4", completed[0])


def test_strata_bench_serve_mode():
    code, out, err = run([args.strata_bench, "--serve", URL, "--vocab", VOCAB,
                          "--num-requests", "6", "--input-len", "8",
                          "--output-len", "4", "--max-concurrency", "3",
                          "--json"])
    check_eq(code, 0, f"exit code ({err})")
    report = json.loads(out)
    check_eq(report["tool"], "strata-bench", "tool")
    check_latencies(report, 6, 4)


def test_burst_beyond_the_queue():
    # 16 requests at once: the server holds 2 running and 4 queued and
    # refuses the rest with 429 while they last (each takes 64 steps).
    options = ["--vocab", VOCAB, "--num-requests", "16", "--input-len", "16",
               "--output-len", "64", "--json"]
    code, out, err = bench(*options)
    check_eq(code, 0, f"exit code with some requests failed ({err})")
    report = json.loads(out)
    check_eq(report["completed"] + report["failed"], 16, "requests")
    check(report["failed"] >= 1 and report["completed"] >= RUNNING + QUEUE,
          f"completed {report['completed']}, failed {report['failed']}")
    check(report["first_error"].startswith("HTTP 429: "),
          report["first_error"])
    check_eq(report["total_output_tokens"], report["completed"] * 64,
             "output tokens of the completed requests")
    check(f"warning: {report['failed']} of 16 requests failed; the first: "
          "HTTP 429" in err, err)
    # At most 4 in flight: never more than the server holds, even while
    # the places of requests that just ended are being freed.
    report = bench_json(*options[2:-1], "--max-concurrency", str(QUEUE))
    check_latencies(report, 16, 64)


def test_every_request_refused():
    # Ids up to 999 are outside tiny-text's vocabulary of 320: every
    # request gets 400, the report says so, and the exit code is 1.
    code, out, err = bench("--vocab", "1000", "--num-requests", "5",
                           "--input-len", "16", "--output-len", "4", "--json")
    check_eq(code, 1, f"exit code ({err})")
    report = json.loads(out)
    check_eq((report["completed"], report["failed"]), (0, 5), "counts")
    check(report["first_error"].startswith("HTTP 400: 'prompt': token id "),
          report["first_error"])
    check_eq(report["ttft_ms"], {"mean": None, "median": None, "p99": None,
                                 "count": 0}, "no TTFT")
    check(err.startswith("strata bench-serve: error: all 5 requests failed; "
                         "the first: HTTP 400: "), err)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_nothing_listens():
    port = free_port()
    start = time.monotonic()
    code, out, err = bench("--vocab", VOCAB, url=f"http://127.0.0.1:{port}")
    check_eq(code, 1, "exit code")
    check_eq(out, "", "stdout")
    check_eq(err, f"strata bench-serve: error: no answer from "
             f"http://127.0.0.1:{port} (GET /v1/models: could not connect; "
             "is a server listening there?)\n", "message")
    check(time.monotonic() - start < 10, "no hang")


class SilentServer(http.server.ThreadingHTTPServer):
    """Lists a model, then answers completions with the headers of a stream
    and nothing more (keep_alive: with SSE comments every 0.1 s)."""
    daemon_threads = True

    def __init__(self, keep_alive):
        self.keep_alive = keep_alive
        self.stop = threading.Event()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                body = json.dumps({"object": "list", "data": [
                    {"id": "silent", "object": "model",
                     "max_model_len": 1024}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):
                self.rfile.read(int(self.headers["Content-Length"]))
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                self.wfile.flush()
                try:
                    while not server.stop.wait(0.1):
                        if server.keep_alive:
                            self.wfile.write(b": keep-alive\n\n")
                            self.wfile.flush()
                except OSError:
                    pass  # the client gave up

        super().__init__(("127.0.0.1", 0), Handler)


def test_silent_server_times_out():
    for keep_alive in (False, True):
        fake = SilentServer(keep_alive)
        thread = threading.Thread(target=fake.serve_forever, daemon=True)
        thread.start()
        try:
            start = time.monotonic()
            code, out, err = bench(
                "--vocab", VOCAB, "--num-requests", "3", "--input-len", "4",
                "--output-len", "2", "--timeout", "0.5", "--json",
                url=f"http://127.0.0.1:{fake.server_address[1]}")
            elapsed = time.monotonic() - start
        finally:
            fake.stop.set()
            fake.shutdown()
            fake.server_close()
        check_eq(code, 1, f"exit code (keep-alive {keep_alive}; {err})")
        report = json.loads(out)
        check_eq((report["model"], report["failed"]), ("silent", 3),
                 "all failed")
        check_eq(report["first_error"], "timed out after 0.5 s (--timeout)",
                 "first error")
        check(elapsed < 10, f"took {elapsed:.1f} s")


def test_lengths_beyond_the_context():
    # The options' own errors are tests/lit/cli/bench-serve-options.test;
    # this one needs the served model's context (256 positions).
    code, out, err = bench("--vocab", VOCAB, "--input-len", "250",
                           "--output-len", "8")
    check_eq((code, out), (2, ""), f"exit code ({err})")
    check_eq(err, "strata bench-serve: error: prompts of up to 250 tokens "
             "and outputs of up to 8 (--input-len, --output-len) need 258 "
             "positions; the served model 'tiny-text' has 256 "
             "(max_model_len)\n", "context message")


run_tests([test_capped_run_counts_what_the_server_counts,
           test_poisson_arrivals,
           test_shared_prefix_is_found_in_the_prefix_cache,
           test_markdown_report, test_strata_bench_serve_mode,
           test_burst_beyond_the_queue, test_every_request_refused,
           test_nothing_listens, test_silent_server_times_out,
           test_lengths_beyond_the_context],
          servers=[server])
