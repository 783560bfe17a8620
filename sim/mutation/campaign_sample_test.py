#!/usr/bin/env python3
"""ctest mutation_campaign_sample (the mutation build): a fixed sample of mutants through
`nncosim mutate --stage smoke`, so that the campaign's machinery cannot rot.

    campaign_sample_test.py NNCOSIM WORK_DIR

The sample (SAMPLE below, by key, so that it follows the RTL until a line moves): mutants of
every unit that the smoke checks kill, one that only the CI stage would reach, and one known
equivalent mutant that sim/mutation/waivers.json waives. The test fails when one of them ends
otherwise, when the JSON misses a field the user guide promises, or when the score disagrees
with killed / (mutants - equivalent - not reached).
"""

import json
import os
import subprocess
import sys

# key -> the verdict the smoke stage must give it.
SAMPLE = {
    # Killed by the smoke checks, one or more per unit.
    "npu_cmd.sv:299:34 logical ||": "killed",
    "npu_feeder.sv:356:35 relational <=": "killed",
    "npu_accum.sv:158:61 cond-true 1 ?": "killed",
    "npu_drain.sv:170:31 arithmetic -": "killed",
    "npu_requant.sv:100:40 constant 2": "killed",
    "npu_fifo.sv:61:26 arithmetic -": "killed",
    "npu_mem_arb.sv:137:52 logical ||": "killed",
    "npu_dma_store.sv:61:37 arithmetic -": "killed",
    "npu_eltwise.sv:116:41 logical ||": "killed",
    "npu_pool.sv:163:48 arithmetic -": "killed",
    # Known equivalent (waived): never killed, counted apart.
    "EQUIVALENT": "equivalent",
}


def run(cmd, **kw):
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    nncosim, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    listing = run([nncosim, "mutate", "--list"])
    if listing.returncode != 0:
        print(listing.stdout + listing.stderr)
        return 1
    ids = {}
    for line in listing.stdout.splitlines():
        parts = line.split("\t")
        if len(parts) >= 2:
            ids[parts[1]] = int(parts[0])
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "waivers.json")) as f:
        waived = [w["key"] for w in json.load(f)["waivers"]]
    sample = dict(SAMPLE)
    equivalent = sample.pop("EQUIVALENT")
    failures = []
    if not waived:
        failures.append("sim/mutation/waivers.json waives no mutant: no known equivalent")
    else:
        sample[waived[0]] = equivalent
    missing = [k for k in sample if k not in ids]
    if missing:
        print("keys of the sample no mutant has (the RTL moved? update SAMPLE):", missing)
        return 1
    out = os.path.join(work, "sample.json")
    cmd = [nncosim, "mutate", "--stage", "smoke", "-j", "2", "--json", out, "--work", work,
           "--markdown", os.path.join(work, "sample.md")]
    for key in sample:
        cmd += ["--mutant", str(ids[key])]
    r = run(cmd)
    print(r.stdout[-6000:] + r.stderr[-3000:])
    if r.returncode != 0:
        return 1
    with open(out) as f:
        j = json.load(f)
    for field in ("mutants", "killed", "survived", "equivalent", "not_reached", "score",
                  "by_file", "results"):
        if field not in j:
            failures.append(f"the JSON has no {field}")
    verdicts = {e["key"]: e for e in j["results"]}
    for key, want in sample.items():
        got = verdicts.get(key, {}).get("verdict")
        if got != want:
            failures.append(f"{key}: {got}, expected {want}")
        elif want == "killed" and not verdicts[key].get("detector"):
            failures.append(f"{key}: killed without a detector")
    counted = j["mutants"] - j["equivalent"] - j["not_reached"]
    if counted and abs(j["score"] - j["killed"] / counted) > 1e-3:
        failures.append(f"score {j['score']} is not killed / (mutants - equivalent - not "
                        f"reached)")
    if j["mutants"] != len(sample):
        failures.append(f"{j['mutants']} mutants in the JSON, {len(sample)} asked for")
    for f in failures:
        print("FAIL:", f)
    print("FAILED" if failures else "PASSED")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
