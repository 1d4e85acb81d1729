#!/usr/bin/python3
"""A test double for the device phase without a GPU: wraps a real worker (argv[1:] up to
--threads), forwards every request, claims the cuda backend (prepared as cpu underneath)
and answers `device` from a timed `run` of the real worker with a synthetic result:
stream_ns = the run's host_ns; a probe adds per-call kernel records named after the
wrapped framework. FAKE_DEVICE_FAULT=probe makes every probe request fail;
FAKE_DEVICE_FAULT=nofloor answers `floor` like a worker that has no such request.
Held windows: a request with "hold": true is answered with "held": true (and a
hold_method), others with "held": false. A probe's stream_ns is the run's host_ns times
its kind's factor (FAKE_PROBE_FACTORS, default "concurrent=2.0,serialized=1.05": the
serialized kind perturbs less). FAKE_DEVICE_LOG=FILE appends one JSON line per device
request ({"pid", "scope", "hold", "probe_kind", "reps"}). The hello says the process's
CPU affinity (fake_cpus, a sorted list), so a test can check pinning. FAKE_CEILINGS=1
answers `ceilings` for cuda with fixed numbers, the held floors included, and
`flop_ceilings` (the native worker fp32 50 TFLOP/s, the PyTorch worker bf16 700 / fp16 650);
FAKE_DEVICE_NS=N makes every control region N ns per call (probes: times the factor),
so the pilot's ratios are exactly the factors. A probe with "decomp": true (the E2E
decomposition's sample) gets a result.decomp of synthetic timestamps on the host clock
around the run (launch 10-30%, kernel 40-80% of it, uncertainty 50 ns) and is logged with
"decomp": true; FAKE_DEVICE_FAULT=decomp answers it ok:false instead. Issue 13 (graph, cold cache): FAKE_L2_BYTES=N puts l2_bytes in
the hello's cuda info; scope "graph" is answered like a control region (with "graph": true),
or, when FAKE_GRAPH_UNAVAILABLE names the wrapped worker's file (e.g. dualtime_torch_worker.py),
with ok:true and "unavailable"; a "cache": "cold" request is echoed as result.cache (copies,
flush_bytes as asked) unless FAKE_CACHE_IGNORE=1. The log lines carry cache, copies and
flush_bytes too. FAKE_REQ_LOG=FILE appends one JSON line per request of any kind, written
once it is answered: {"pid", "cmd", "t_in", "t_out"} (time.time() when it arrived and when
it was answered), and a "start" line when the process starts, so a test can see which
processes worked at the same time."""
import json, os, subprocess, sys, time


def factors():
    f = {"concurrent": 2.0, "serialized": 1.05}
    for kv in os.environ.get("FAKE_PROBE_FACTORS", "").split(","):
        if "=" in kv:
            k, v = kv.split("=", 1)
            f[k] = float(v)
    return f

def main():
    t_start = time.time()
    args = sys.argv[1:]
    fac = factors()
    log = os.environ.get("FAKE_DEVICE_LOG")
    real = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    name = os.path.basename(args[1] if args[0].endswith("python3") else args[0])
    def ask(req):
        real.stdin.write(json.dumps(req) + "\n"); real.stdin.flush()
        return json.loads(real.stdout.readline())
    reqlog = os.environ.get("FAKE_REQ_LOG")
    if reqlog:  # the process's start, before the wrapped worker is spawned
        with open(reqlog, "a") as fp:
            fp.write(json.dumps({"pid": os.getpid(), "cmd": "start", "t_in": t_start,
                                 "t_out": t_start}) + "\n")
    for line in sys.stdin:
        t_in = time.time()
        req = json.loads(line)
        cmd = req.get("cmd")
        if cmd == "hello":
            r = ask(req)
            r.setdefault("backends", {})["cuda"] = {"available": True, "info": {"name": "fake GPU"}}
            if os.environ.get("FAKE_L2_BYTES"):
                r["backends"]["cuda"]["info"]["l2_bytes"] = int(os.environ["FAKE_L2_BYTES"])
            r["device_timing"] = {"available": True}
            r["worker"] = "fake-" + r.get("worker", "x")
            r["fake_cpus"] = sorted(os.sched_getaffinity(0))
        elif cmd == "ceilings" and req.get("backend") == "cuda" and os.environ.get("FAKE_CEILINGS"):
            r = {"ok": True, "ceilings": {"copy_gbps": 3000.0, "copy_bytes": 1 << 20,
                 "launch_sync_floor_us": 8.0, "launch_queue_floor_us": 2.0,
                 "held_launch_floor_us": 3.2, "held_launch_batch_floor_us": 1.0,
                 "held_touch_floor_us": 4.1, "held_touch_batch_floor_us": 1.9,
                 "method": "fake ceilings"}}
        elif cmd == "flop_ceilings" and req.get("backend") == "cuda" and os.environ.get("FAKE_CEILINGS"):
            # like the real ones: the native worker FP32 FFMA, the PyTorch one bf16/fp16
            f = ({"fp32_tflops": 50.0, "method": "fake ffma"} if "native" in name else
                 {"bf16_tflops": 700.0, "fp16_tflops": 650.0, "method": "fake matmul"})
            r = {"ok": True, "flop_ceilings": f}
        elif cmd == "probe_process":
            r = {"ok": True, "persistent": True, "probe_kind": req.get("probe_kind", "concurrent")}
        elif cmd == "floor" and os.environ.get("FAKE_DEVICE_FAULT") == "nofloor":
            r = {"ok": False, "error": "unknown cmd 'floor'"}
        elif cmd == "prepare":
            req["backend"] = "cpu"
            r = ask(req)
        elif cmd == "device":
            hold = req.get("hold", False)
            if log:
                with open(log, "a") as fp:
                    fp.write(json.dumps({"pid": os.getpid(), "scope": req["scope"], "hold": hold,
                                         "probe_kind": req.get("probe_kind"),
                                         "reps": req["reps"], "cache": req.get("cache"),
                                         "copies": req.get("copies"),
                                         "flush_bytes": req.get("flush_bytes"),
                                         "decomp": req.get("decomp", False)}) + "\n")
            if req["scope"] == "graph" and os.environ.get("FAKE_GRAPH_UNAVAILABLE") == name:
                r = {"ok": True, "unavailable": "planted: %s cannot be captured" % name}
            elif req["scope"] == "probe" and os.environ.get("FAKE_DEVICE_FAULT") == "probe":
                r = {"ok": False, "error": "planted probe failure"}
            elif req.get("decomp") and os.environ.get("FAKE_DEVICE_FAULT") == "decomp":
                r = {"ok": False, "error": "device: decomp unavailable: planted"}
            else:
                run = ask({"cmd": "run", "reps": req["reps"]})
                if not run["ok"]:
                    r = run
                else:
                    ns = run["host_ns"]; reps = req["reps"]
                    if os.environ.get("FAKE_DEVICE_NS"):  # deterministic device times
                        ns = int(float(os.environ["FAKE_DEVICE_NS"]) * reps)
                    if req["scope"] == "probe":
                        ns = int(ns * fac.get(req.get("probe_kind", "concurrent"), 1.0))
                    res = {"stream_ns": float(ns), "kernel_sum_ns": 0.0, "kernel_span_ns": 0.0,
                           "kernel_count": 0, "launch_count": 0, "dropped_records": 0,
                           "clock_offset_ns": 0.0, "clock_uncertainty_ns": 0.0,
                           "held": bool(hold)}
                    if hold:
                        res.update(hold_method="wait_value", hold_timeout_ms=1000, hold_queue_ns=1000)
                    if req["scope"] == "graph":
                        res["graph"] = True
                    if req.get("cache") == "cold" and not os.environ.get("FAKE_CACHE_IGNORE"):
                        res["cache"] = {"state": "cold", "copies": req["copies"],
                                        "flush_bytes": req["flush_bytes"]}
                    if req["scope"] == "probe":
                        per = ns / reps
                        ks = [{"name": "k_" + name, "start_ns": int(i * per), "end_ns": int(i * per + 0.8 * per),
                               "grid": [1, 1, 1], "block": [128, 1, 1], "correlation_id": i, "stream_id": 7}
                              for i in range(reps)]
                        res.update(kernel_sum_ns=0.8 * ns, kernel_span_ns=0.8 * ns + (reps - 1) * 0.2 * per,
                                   kernel_count=reps, launch_count=reps, kernels=ks)
                    if req.get("decomp"):
                        t1 = time.monotonic_ns(); t0 = t1 - ns
                        at = lambda f: t0 + int(f * ns)
                        res["clock_uncertainty_ns"] = 50.0
                        res["kernels"] = [dict(ks[0], start_ns=at(0.4), end_ns=at(0.8))]
                        res["decomp"] = {"call_start_ns": t0, "sync_return_ns": t1,
                                         "host_call_ns": ns, "clock_source": 1,
                                         "launches": [{"enter_ns": at(0.1), "exit_ns": at(0.3),
                                                       "api": "cuLaunchKernel"}]}
                    r = {"ok": True, "result": res}
        else:
            r = ask(req)
        sys.stdout.write(json.dumps(r) + "\n"); sys.stdout.flush()
        if reqlog:
            with open(reqlog, "a") as fp:
                fp.write(json.dumps({"pid": os.getpid(), "cmd": cmd, "t_in": t_in,
                                     "t_out": time.time()}) + "\n")
        if cmd == "quit":
            break

if __name__ == "__main__":
    main()
