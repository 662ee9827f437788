#!/usr/bin/env python3
"""dashboard_check.py DASHBOARD PROM_PORT PIDS - run every panel's PromQL of a
Grafana dashboard against a real Prometheus and check the answers.

Each target's expr is evaluated with Grafana's variables set: $pid to the
regex PIDS ("4242|4243"), $__rate_interval to 10s. A panel passes when each
of its targets returns at least one series, every series carries every label
its legendFormat names ({{label}}) with a non-empty value, and a series of
each pid in PIDS is among them. The template variables' queries
(label_values(SELECTOR, LABEL)) run too, as the selector with every variable
at its "All" value (.*): the pid variable must offer each pid in PIDS, and
the chained namespace and pod variables must select series (a JVM outside a
pod has neither label, which .* matches). Prints one line per target; exit
1 if any fails (the caller retries while series are still arriving).
"""
import json
import re
import sys
import urllib.parse
import urllib.request


def query(port, expr):
    url = "http://127.0.0.1:%s/api/v1/query?%s" % (port, urllib.parse.urlencode({"query": expr}))
    with urllib.request.urlopen(url, timeout=5) as r:
        body = json.load(r)
    if body.get("status") != "success":
        raise RuntimeError(body)
    return body["data"]["result"]


def main():
    dash = json.load(open(sys.argv[1]))
    port, pids = sys.argv[2], sys.argv[3].split("|")
    ok = True
    for v in dash.get("templating", {}).get("list", []):
        m = re.match(r"label_values\((.*),\s*(\w+)\)$", v.get("definition", ""))
        if v.get("type") != "query" or not m:
            continue
        sel = re.sub(r"\$\w+", ".*", m.group(1))
        try:
            res = query(port, sel)
        except Exception as e:
            print(f"FAIL  variable {v['name']}: {e}")
            ok = False
            continue
        offered = {r["metric"].get(m.group(2)) for r in res}
        good = bool(res) and (v["name"] != "pid" or all(x in offered for x in pids))
        ok &= good
        print(f"{'ok  ' if good else 'FAIL'}  variable {v['name']}: {len(res)} series, "
              f"{m.group(2)} values {sorted(x for x in offered if x)[:5]}")
    for p in dash["panels"]:
        for t in p["targets"]:
            expr = t["expr"].replace("$pid", "|".join(pids)).replace("$__rate_interval", "10s")
            want = re.findall(r"\{\{\s*(\w+)\s*\}\}", t.get("legendFormat", ""))
            try:
                res = query(port, expr)
            except Exception as e:  # a query Prometheus refuses is a broken panel
                print(f"FAIL  {p['title']!r} {t['refId']}: {e}")
                ok = False
                continue
            bad = [r["metric"] for r in res if any(not r["metric"].get(k) for k in want)]
            seen = {r["metric"].get("pid") for r in res}
            missing = [x for x in pids if x not in seen]
            good = res and not bad and not missing
            ok &= bool(good)
            print(f"{'ok  ' if good else 'FAIL'}  {p['title']!r} {t['refId']}: {len(res)} series"
                  f"{'' if not bad else f', without labels {want}: {bad[:2]}'}"
                  f"{'' if not missing else f', no series of pid {missing}'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
