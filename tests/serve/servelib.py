"""What the `strata serve` tests share (Python 3 standard library only): a
server process on 127.0.0.1 with a port it picks itself, HTTP calls
(whole, streamed, cut off), the Prometheus text parsed, `strata run` for
reference outputs, and a small runner that reports every failed check."""
import argparse
import http.client
import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback

TINY_TEXT = "tests/lit/cli/Inputs/tiny-text.yaml"
TINY_LLAMA = "models/tiny-llama.yaml"
TINY_TOKENIZER = "tests/lit/cli/Inputs/tiny-tokenizer"


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def check_eq(got, expected, what):
    if got != expected:
        raise Failure(f"{what}: got {got!r}, expected {expected!r}")


def arguments(description):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--strata", required=True, help="the strata binary")
    parser.add_argument("--source", required=True, help="the repository root")
    parser.add_argument("--work", required=True, help="a folder for files")
    parser.add_argument("--sanitized", action="store_true",
                        help="a sanitizer build (memory is not comparable)")
    parser.add_argument("--strata-bench", help="the strata-bench binary")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    return args


def run_tests(tests, servers=()):
    """Runs each test function in order, prints one line per test, then
    stops the servers (each must exit 0 on SIGTERM), and exits 1 when
    anything failed."""
    failed = 0
    for test in tests:
        start = time.monotonic()
        try:
            test()
            status = "ok"
        except Exception:  # every failure is reported, the rest still run
            failed += 1
            status = "FAILED"
            traceback.print_exc()
        print(f"{status:6} {test.__name__} ({time.monotonic() - start:.2f} s)",
              flush=True)
    print(f"{len(tests) - failed} of {len(tests)} passed", flush=True)
    for server in servers:
        code = server.terminate()
        if code != 0:
            failed += 1
            print(f"FAILED the server exited with {code} on SIGTERM:\n"
                  f"{server.stderr()}", flush=True)
        server.close()
    sys.exit(1 if failed else 0)


class Server:
    """`strata serve MODEL --port 0 ARGS...`, started and waited for."""

    def __init__(self, strata, model, *args, cwd=None):
        self.log = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(
            [strata, "serve", model, "--host", "127.0.0.1", "--port", "0",
             *args],
            stdout=subprocess.PIPE, stderr=self.log, text=True, cwd=cwd)
        line = self._read_line(timeout=60)
        match = re.fullmatch(r"listening on http://127\.0\.0\.1:(\d+)\n", line)
        if not match:
            self.proc.kill()
            self.proc.wait()
            raise Failure(f"the server did not start: stdout {line!r}, "
                          f"stderr {self.stderr()!r}")
        self.port = int(match.group(1))

    def _read_line(self, timeout):
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        return self.proc.stdout.readline() if ready else ""

    def stderr(self):
        self.log.seek(0)
        return self.log.read()

    def connection(self, timeout=60):
        return http.client.HTTPConnection("127.0.0.1", self.port,
                                          timeout=timeout)

    def request(self, method, path, body=None, headers=None):
        """(status, content type, body bytes)."""
        conn = self.connection()
        try:
            if isinstance(body, (dict, list)):
                body = json.dumps(body).encode()
            conn.request(method, path, body=body,
                         headers={"Content-Type": "application/json",
                                  **(headers or {})})
            resp = conn.getresponse()
            return resp.status, resp.getheader("Content-Type"), resp.read()
        finally:
            conn.close()

    def post(self, path, body):
        """(status, parsed JSON)."""
        status, _, data = self.request("POST", path, body)
        return status, json.loads(data)

    def get_json(self, path):
        status, _, data = self.request("GET", path)
        return status, json.loads(data)

    def stream(self, path, body):
        """A streamed request: (status, [parsed data events], saw [DONE]).
        Comment lines (keep-alives) are skipped."""
        conn = self.connection()
        try:
            conn.request("POST", path, body=json.dumps(body).encode(),
                         headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            if resp.status != 200:
                return resp.status, [json.loads(resp.read())], False
            check(resp.getheader("Content-Type", "").startswith(
                "text/event-stream"), "a stream is text/event-stream")
            events, done = [], False
            for event in sse_events(resp):
                if event == "[DONE]":
                    done = True
                    continue
                check(not done, "nothing may follow data: [DONE]")
                events.append(json.loads(event))
            return resp.status, events, done
        finally:
            conn.close()

    def open_stream(self, path, body):
        """Starts a streamed request and returns (connection, response) to
        read from and to close early."""
        conn = self.connection()
        conn.request("POST", path, body=json.dumps(body).encode(),
                     headers={"Content-Type": "application/json"})
        return conn, conn.getresponse()

    def metrics(self):
        status, ctype, data = self.request("GET", "/metrics")
        check_eq(status, 200, "GET /metrics status")
        check(ctype.startswith("text/plain"), f"/metrics type {ctype}")
        return parse_prometheus(data.decode())

    def wait_metrics(self, predicate, what, timeout=15):
        deadline = time.monotonic() + timeout
        while True:
            m = self.metrics()
            if predicate(m):
                return m
            if time.monotonic() > deadline:
                raise Failure(f"{what} (metrics: running "
                              f"{m['strata_requests_running']}, waiting "
                              f"{m['strata_requests_waiting']}, KV used "
                              f"{m['strata_kv_blocks_used']})")
            time.sleep(0.02)

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise Failure("no VmRSS")

    def terminate(self, timeout=20, sig=signal.SIGTERM):
        """Sends `sig` (SIGTERM); returns the exit code."""
        self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise Failure(f"the server did not exit {timeout} s after "
                          "SIGTERM")

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()
        self.log.close()


def sse_events(resp):
    """The data of each Server-Sent Event of a response, as it arrives."""
    data = []
    while True:
        line = resp.readline()
        if not line:
            return
        line = line.decode().rstrip("\r\n")
        if line == "":
            if data:
                yield "\n".join(data)
                data = []
        elif line.startswith(":"):
            continue
        elif line.startswith("data: "):
            data.append(line[len("data: "):])
        else:
            raise Failure(f"unexpected stream line {line!r}")


def stream_text(events, chat):
    """The text of a stream's chunks, and the finish reasons seen."""
    text, reasons = "", []
    for e in events:
        for choice in e["choices"]:
            if chat:
                text += choice["delta"].get("content", "")
            else:
                text += choice["text"]
            if choice["finish_reason"] is not None:
                reasons.append(choice["finish_reason"])
    return text, reasons


_SAMPLE = re.compile(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)')


def parse_prometheus(text):
    """{name or name{labels}: value}; checks the text format on the way:
    HELP and TYPE before each family's samples, values that are numbers."""
    values, types = {}, {}
    for line in text.splitlines():
        if line.startswith("# HELP "):
            continue
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ", 3)
            check(kind in ("counter", "gauge", "histogram"),
                  f"metric type {kind}")
            types[name] = kind
            continue
        match = _SAMPLE.fullmatch(line)
        check(match is not None, f"malformed metrics line {line!r}")
        name, labels, value = match.groups()
        family = re.sub(r"_(bucket|sum|count)$", "", name)
        check(name in types or family in types,
              f"sample {name} without a # TYPE line")
        values[name + (labels or "")] = float(value)
    values["__types__"] = types
    return values


def histogram(metrics, name):
    """[(le, cumulative count)], sum, count of a histogram."""
    buckets = []
    for key, value in metrics.items():
        m = re.fullmatch(re.escape(name) + r'_bucket\{le="([^"]+)"\}', key)
        if m:
            le = float("inf") if m.group(1) == "+Inf" else float(m.group(1))
            buckets.append((le, value))
    buckets.sort()
    return buckets, metrics[name + "_sum"], metrics[name + "_count"]


def strata_run(strata, cwd, model, prompt, max_new, *extra):
    """The text `strata run MODEL --prompt P --max-new-tokens N` prints
    (its stdout without the newline it ends with)."""
    out = subprocess.run(
        [strata, "run", model, "--prompt", prompt, "--max-new-tokens",
         str(max_new), *extra],
        cwd=cwd, capture_output=True, check=False)
    if out.returncode != 0:
        raise Failure(f"strata run failed: {out.stderr.decode()}")
    text = out.stdout.decode()
    check(text.endswith("\n"), "strata run ends its text with a newline")
    return text[:-1]


def token_count(strata, cwd, model, text):
    """How many ids `strata tokenize` gives TEXT with the special tokens."""
    out = subprocess.run([strata, "tokenize", model, "--text", text,
                          "--special"], cwd=cwd, capture_output=True,
                         check=True)
    return len(out.stdout.split())


def raw_request(port, data, timeout=10):
    """Sends bytes as they are and returns the status line's code."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        reply = b""
        while b"\r\n" not in reply:
            chunk = s.recv(4096)
            if not chunk:
                break
            reply += chunk
    return int(reply.split(b" ", 2)[1]) if reply else None
