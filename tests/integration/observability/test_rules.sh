#!/usr/bin/env bash
# compose/observability/: the Prometheus config and the rules it loads pass
# `promtool check config` (which checks the rule files too) and `check
# rules`; every alert passes its `promtool test rules` cases (firing on the
# trouble it names, quiet on healthy series); every Grafana dashboard is a
# JSON object with a uid, a title and panels whose queries name a
# datasource; every alert has a runbook entry in docs/OPERATIONS.md.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
obs=$root/compose/observability
command -v promtool >/dev/null || { echo "SKIP: promtool missing (apt-get install prometheus)"; exit 77; }

promtool check config "$obs/prometheus.yml"
promtool check rules "$obs"/rules/recording.yml "$obs"/rules/alerts.yml
(cd "$obs/tests" && promtool test rules alerts_test.yml)

/usr/bin/python3 - "$obs" "$root/docs/OPERATIONS.md" <<'PY'
import glob, json, re, sys
obs, ops = sys.argv[1], open(sys.argv[2]).read()
for path in sorted(glob.glob(obs + "/grafana/dashboards/*.json")):
    d = json.load(open(path))
    assert d.get("uid") and d.get("title") and d.get("panels"), path
    for p in d["panels"]:
        assert p["datasource"]["uid"] == "prometheus", (path, p["title"])
        assert p["targets"] and all(t["expr"] for t in p["targets"]), (path, p["title"])
    print(f"ok - {path.rsplit('/', 1)[1]}: {len(d['panels'])} panels")
alerts = re.findall(r"^\s+- alert: (\w+)", open(obs + "/rules/alerts.yml").read(), re.M)
tests = open(obs + "/tests/alerts_test.yml").read()
for a in alerts:
    anchor = re.sub(r"(Fast|Slow)$", "", a)
    assert re.search(rf"^#### {anchor}$", ops, re.M), f"no runbook heading '#### {anchor}' in OPERATIONS.md"
    assert f"alertname: {a}\n" in tests, f"alert {a} has no promtool test"
print(f"ok - {len(alerts)} alerts, each with a runbook entry and a unit test")
PY
