#!/usr/bin/env bash
# ctest regress_slurm_cluster: runs a small regression locally, then the same suite through a real
# single-node Slurm cluster (local-cluster beside this script) as a job array of 4 shards, and
# checks that the merged results, JUnit file and report equal the local run's, ignoring timings
# and which shard ran an item. Usage: regress_test.sh NNCOSIM SUITE_ARG...
# Exit status 77 (skipped) when this machine cannot host the cluster (local-cluster says so).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
nncosim=$1
shift
work=$(mktemp -d /tmp/nncosim-slurm-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"

start=$(date +%s%N)
"$nncosim" regress "$@" -j 2 --report local --junit local.xml >local.out 2>&1
local_ms=$((($(date +%s%N) - start) / 1000000))

set +e
start=$(date +%s%N)
"$here/local-cluster" "$nncosim" regress "$@" --slurm --tasks 4 --slurm-poll 0.5 \
  --slurm-wait 90 --report slurm --junit slurm.xml >slurm.out 2>&1
status=$?
slurm_ms=$((($(date +%s%N) - start) / 1000000))
set -e
cat slurm.out
if ((status == 77)); then exit 77; fi
if ((status != 0)); then
  echo "FAILED: the Slurm run exited with $status"
  exit 1
fi
echo "wall time: local ${local_ms} ms; Slurm ${slurm_ms} ms (cluster start, 4 array tasks, merge, stop)"

python3 - <<'PY'
import json, re, sys, xml.etree.ElementTree as ET

def results(d):
    r = json.load(open(d + "/results.json"))
    for item in r["items"]:
        for key in ("seconds", "shard"):
            item.pop(key, None)
    return {k: r[k] for k in ("backend", "seed", "total", "passed", "failed", "unsupported", "items")}

def junit(path):
    cases = []
    for case in ET.parse(path).getroot().iter("testcase"):
        outcome = [c.tag for c in case]
        cases.append((case.get("classname"), case.get("name"), tuple(outcome)))
    return sorted(cases)

def report(d):
    md = open(d + "/summary.md").read()
    # From the failures on: the head names the command line, the time and the shards.
    md = md[md.index("## Failures"):]
    return re.sub(r"re-run \(shard \d+/\d+\)", "re-run", md)

local, slurm = results("local"), results("slurm")
problems = []
if local != slurm:
    problems.append("results.json differ: local %s vs slurm %s" % (
        {k: v for k, v in local.items() if k != "items"}, {k: v for k, v in slurm.items() if k != "items"}))
    for a, b in zip(local["items"], slurm["items"]):
        if a != b:
            problems.append("first differing item: %s\n vs %s" % (a, b))
            break
if junit("local.xml") != junit("slurm.xml"):
    problems.append("JUnit files differ")
if report("local") != report("slurm"):
    problems.append("summary.md differ")
shards = [json.load(open("slurm/shards/shard-%d/results.json" % i))["shard"] for i in range(4)]
if shards != ["%d/4" % i for i in range(4)]:
    problems.append("shards ran as %s" % shards)
if local["total"] < 4:
    problems.append("only %d items: too few for 4 shards" % local["total"])
if problems:
    print("FAILED:\n" + "\n".join(problems))
    sys.exit(1)
print("merged Slurm run of %d items equals the local run" % local["total"])
PY
