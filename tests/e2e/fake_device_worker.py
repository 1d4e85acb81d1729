#!/usr/bin/python3
"""A test double for the device phase without a GPU: wraps a real worker (argv[1:] up to
--threads), forwards every request, claims the cuda backend (prepared as cpu underneath)
and answers `device` from a timed `run` of the real worker with a synthetic result:
stream_ns = the run's host_ns; a probe adds per-call kernel records named after the
wrapped framework. FAKE_DEVICE_FAULT=probe makes every probe request fail;
FAKE_DEVICE_FAULT=nofloor answers `floor` like a worker that has no such request."""
import json, os, subprocess, sys

def main():
    args = sys.argv[1:]
    real = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    name = os.path.basename(args[1] if args[0].endswith("python3") else args[0])
    def ask(req):
        real.stdin.write(json.dumps(req) + "\n"); real.stdin.flush()
        return json.loads(real.stdout.readline())
    for line in sys.stdin:
        req = json.loads(line)
        cmd = req.get("cmd")
        if cmd == "hello":
            r = ask(req)
            r.setdefault("backends", {})["cuda"] = {"available": True, "info": {"name": "fake GPU"}}
            r["device_timing"] = {"available": True}
            r["worker"] = "fake-" + r.get("worker", "x")
        elif cmd == "probe_process":
            r = {"ok": True, "persistent": True, "probe_kind": req.get("probe_kind", "concurrent")}
        elif cmd == "floor" and os.environ.get("FAKE_DEVICE_FAULT") == "nofloor":
            r = {"ok": False, "error": "unknown cmd 'floor'"}
        elif cmd == "prepare":
            req["backend"] = "cpu"
            r = ask(req)
        elif cmd == "device":
            if req["scope"] == "probe" and os.environ.get("FAKE_DEVICE_FAULT") == "probe":
                r = {"ok": False, "error": "planted probe failure"}
            else:
                run = ask({"cmd": "run", "reps": req["reps"]})
                if not run["ok"]:
                    r = run
                else:
                    ns = run["host_ns"]; reps = req["reps"]
                    res = {"stream_ns": float(ns), "kernel_sum_ns": 0.0, "kernel_span_ns": 0.0,
                           "kernel_count": 0, "launch_count": 0, "dropped_records": 0,
                           "clock_offset_ns": 0.0, "clock_uncertainty_ns": 0.0}
                    if req["scope"] == "probe":
                        per = ns / reps
                        ks = [{"name": "k_" + name, "start_ns": int(i * per), "end_ns": int(i * per + 0.8 * per),
                               "grid": [1, 1, 1], "block": [128, 1, 1], "correlation_id": i, "stream_id": 7}
                              for i in range(reps)]
                        res.update(kernel_sum_ns=0.8 * ns, kernel_span_ns=0.8 * ns + (reps - 1) * 0.2 * per,
                                   kernel_count=reps, launch_count=reps, kernels=ks)
                    r = {"ok": True, "result": res}
        else:
            r = ask(req)
        sys.stdout.write(json.dumps(r) + "\n"); sys.stdout.flush()
        if cmd == "quit":
            break

if __name__ == "__main__":
    main()
