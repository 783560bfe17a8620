// The report of one `nncosim run` (ModelRun.h's RunReport) as text and as JSON: the verdict,
// each output's comparison, the first divergence, its waves, the co-simulation, and the NPU's
// figures per partition and operation.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "driver/NpuRegisters.h"
#include "testbench/ModelRun.h"

namespace nncosim {
namespace {

std::string percent(double v) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(1) << 100.0 * v << "%";
    return s.str();
}

std::string withCommas(uint64_t v) {
    std::string s = std::to_string(v);
    for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3)
        s.insert(static_cast<size_t>(i), ",");
    return s;
}

std::string number(double v) {
    std::ostringstream s;
    s << std::setprecision(6) << v;
    return s.str();
}

std::string statsText(const TensorStats& s) {
    return "min " + number(s.min) + " max " + number(s.max) + " mean " + number(s.mean);
}

// "0-29,31": operation lists as ranges.
std::string ranges(const std::vector<uint32_t>& v) {
    std::string s;
    for (size_t i = 0; i < v.size();) {
        size_t j = i;
        while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
        s += (s.empty() ? "" : ",") + std::to_string(v[i]) +
             (j > i ? "-" + std::to_string(v[j]) : "");
        i = j + 1;
    }
    return s;
}

void describeCheck(std::ostringstream& out, const TensorCheck& c, const std::string& indent) {
    out << indent << c.role << " (operand " << c.operand << ", " << nameOf(c.type) << " "
        << toString(c.shape) << ")";
    if (!c.origin.empty()) out << " from " << c.origin;
    if (c.compared) out << ": " << (c.ok() ? "match" : "MISMATCH");
    out << "\n";
    if (c.device) out << indent << "  device: " << statsText(*c.device) << "\n";
    if (!c.compared) return;
    if (c.golden) out << indent << "  golden: " << statsText(*c.golden) << "\n";
    if (c.shape != c.goldenShape) {
        out << indent << "  shape differs: golden " << toString(c.goldenShape) << "\n";
        return;
    }
    if (!c.comparison) return;
    const Comparison& cmp = *c.comparison;
    out << indent << "  ";
    if (cmp.ok()) {
        out << "all " << cmp.elements << " elements match";
    } else {
        out << cmp.mismatches << " of " << cmp.elements << " elements differ; first at "
            << cmp.firstMismatch << " " << coordinates(c.shape, cmp.firstMismatch) << ": golden "
            << number(cmp.firstExpected) << ", device " << number(cmp.firstActual);
    }
    out << "; max abs error " << number(cmp.maxAbsError);
    if (!isFloatType(c.type)) {
        out << "\n";
        return;
    }
    out << ", max rel error " << number(cmp.maxRelError) << ", max " << cmp.maxUlpError << " ULP\n";
    // How close the worst element came to failing the float rule.
    out << indent << "  tolerance " << number(cmp.tolerance.atol) << " + "
        << number(cmp.tolerance.rtol) << " x |golden|: ";
    if (cmp.worstToleranceFraction == 0.0) {
        out << "every element exact\n";
        return;
    }
    const double used = cmp.worstToleranceFraction;
    out << "worst element " << cmp.worstElement << " " << coordinates(c.shape, cmp.worstElement)
        << " used " << percent(used) << " of it";
    if (used <= 1.0) {
        out << " (margin " << percent(1.0 - used) << ")\n";
    } else {
        out << " (over by " << percent(used - 1.0) << ")\n";
    }
}

nlohmann::json statsJson(const std::optional<TensorStats>& s) {
    if (!s) return nullptr;
    return {{"elements", s->elements}, {"min", s->min}, {"max", s->max}, {"mean", s->mean}};
}

nlohmann::json checkJson(const TensorCheck& c) {
    nlohmann::json j = {{"role", c.role},
                        {"operand", c.operand},
                        {"type", nameOf(c.type)},
                        {"shape", c.shape},
                        {"device", statsJson(c.device)}};
    if (!c.origin.empty()) j["origin"] = c.origin;
    if (!c.compared) return j;
    j["verdict"] = c.ok() ? "match" : "mismatch";
    j["golden"] = statsJson(c.golden);
    j["golden_shape"] = c.goldenShape;
    if (c.comparison) {
        const Comparison& cmp = *c.comparison;
        j["elements"] = cmp.elements;
        j["mismatches"] = cmp.mismatches;
        j["max_abs_error"] = cmp.maxAbsError;
        if (isFloatType(c.type)) {
            j["max_rel_error"] = cmp.maxRelError;
            j["max_ulp_error"] = c.maxUlpError;
            // The worst element against the float rule: fraction of its tolerance used (above 1:
            // it failed) and the margin left (negative: by how much it failed).
            j["tolerance"] = {{"atol", cmp.tolerance.atol},
                              {"rtol", cmp.tolerance.rtol},
                              {"worst_element", cmp.worstElement},
                              {"worst_coordinates", coordinates(c.shape, cmp.worstElement)},
                              {"worst_fraction_used", cmp.worstToleranceFraction},
                              {"margin", 1.0 - cmp.worstToleranceFraction}};
        }
        if (!cmp.ok()) {
            j["first_mismatch"] = {{"index", cmp.firstMismatch},
                                   {"coordinates", coordinates(c.shape, cmp.firstMismatch)},
                                   {"golden", cmp.firstExpected},
                                   {"device", cmp.firstActual}};
        }
    }
    return j;
}

nlohmann::json energyJson(const driver::Energy& e) {
    return {{"macs", e.macs * 1e-6},
            {"scratchpad", e.scratchpad * 1e-6},
            {"dram", e.dram * 1e-6},
            {"clock_and_leakage", e.clockAndLeakage * 1e-6}};
}

nlohmann::json countersJson(const NpuCounters& c, const RunReport& r) {
    const driver::Energy energy = c.energy(r.clockPeriodPs);
    nlohmann::json j = {
        {"cycles", c.cycles},
        {"macs", c.macs},
        {"utilization", c.utilization()},
        {"dram_utilization", c.dramUtilization(r.dramBytesPerCycle)},
        {"dma_bytes_read", c.dmaBytesRead},
        {"dma_bytes_written", c.dmaBytesWritten},
        {"scratchpad_reads", c.scratchpadReads},
        {"scratchpad_writes", c.scratchpadWrites},
        {"array_active_cycles", c.arrayActiveCycles},
        {"energy_uj", energy.microjoules()},
        {"energy_breakdown_uj", energyJson(energy)},
        {"average_mw", driver::averageMilliwatts(energy, c.cycles, r.clockPeriodPs)}};
    // Where the other cycles went: the RTL's stall counters (the functional model has none).
    if (!r.cyclesEstimated) {
        j["stall_cycles"] = {{"input", c.stallInputCycles},
                             {"weights", c.stallWeightCycles},
                             {"output", c.stallOutputCycles},
                             {"fetch", c.stallFetchCycles}};
    }
    return j;
}

/// Microjoules with three decimals.
std::string microjoules(double uj) {
    std::ostringstream out;
    out << std::fixed << std::setprecision(3) << uj;
    return out.str();
}

}  // namespace

std::string formatReport(const RunReport& r) {
    const ExecutionRecord& rec = r.record;
    std::ostringstream out;
    size_t npuOps = 0;
    for (const auto& op : rec.operations) npuOps += op.npu;
    out << "model " << r.modelName << ": " << rec.operations.size() << " operations, backend "
        << r.backend << " (" << npuOps << " on the NPU, " << rec.operations.size() - npuOps
        << " on the CPU, " << rec.partitions.size()
        << (rec.partitions.size() == 1 ? " partition" : " partitions") << ")\n";
    if (r.cyclesEstimated) {
        out << "NPU: the functional model (--npu func): cycles, utilization and device time are "
               "the cost model's estimates, not measurements\n";
    }
    out << "\n";

    out << std::left << std::setw(5) << "  #" << std::setw(26) << "operation" << std::setw(9)
        << "device" << std::right << std::setw(13) << (r.cyclesEstimated ? "est. cycles" : "cycles")
        << std::setw(15) << "MACs" << std::setw(8) << "util" << std::setw(8) << "DRAM"
        << std::setw(13) << "DMA bytes" << std::setw(11)
        << (r.cyclesEstimated ? "est. uJ" : "energy uJ") << "\n";
    for (const OperationRecord& op : rec.operations) {
        out << std::left << "  " << std::setw(3) << op.index << std::setw(26) << nameOf(op.type)
            << std::setw(9)
            << (std::string(op.npu ? "NPU " : "CPU ") + std::to_string(op.partition)) << std::right;
        if (op.counters) {
            const NpuCounters& c = *op.counters;
            out << std::setw(13) << withCommas(c.cycles) << std::setw(15) << withCommas(c.macs)
                << std::setw(8) << percent(c.utilization()) << std::setw(8)
                << percent(c.dramUtilization(r.dramBytesPerCycle)) << std::setw(13)
                << withCommas(c.dmaBytesRead + c.dmaBytesWritten) << std::setw(11)
                << microjoules(c.energy(r.clockPeriodPs).microjoules());
        } else if (op.npu) {
            out << std::setw(13) << "-";
        } else {
            out << "  " << op.cpuReason;
        }
        if (op.fusedInto) out << "  fused with " << *op.fusedInto << ": counted there";
        out << "\n";
    }

    out << "\npartitions\n";
    const NpuCounters npuTotal = rec.npuTotal();
    for (size_t p = 0; p < rec.partitions.size(); ++p) {
        const PartitionRecord& pr = rec.partitions[p];
        out << "  " << p << " " << (pr.npu ? "NPU" : "CPU") << " operations "
            << ranges(pr.operations);
        if (pr.job) {
            const NpuCounters& c = pr.job->total;
            out << ": " << withCommas(c.cycles) << " cycles, " << withCommas(c.macs)
                << " MACs, utilization " << percent(c.utilization()) << ", DRAM busy "
                << percent(c.dramUtilization(r.dramBytesPerCycle)) << ", DMA read "
                << withCommas(c.dmaBytesRead) << " B, written " << withCommas(c.dmaBytesWritten)
                << " B, energy " << microjoules(c.energy(r.clockPeriodPs).microjoules()) << " uJ";
        }
        out << "; host " << std::fixed << std::setprecision(3) << pr.seconds << " s\n";
        out.unsetf(std::ios::fixed);
    }

    if (r.compared) {
        out << "\noutputs vs golden\n";
        for (const TensorCheck& c : r.outputs) describeCheck(out, c, "  ");
    }
    if (r.divergenceSearched) {
        out << "\nfirst divergence: ";
        if (r.divergence) {
            const Divergence& d = *r.divergence;
            out << "operation " << d.operation << " " << nameOf(d.type) << " on the "
                << (d.npu ? "NPU" : "CPU") << " (" << d.matchedBefore
                << " operations before it match the golden; " << d.method << ")\n";
            for (const TensorCheck& c : d.inputs) describeCheck(out, c, "  ");
            for (const TensorCheck& c : d.outputs) describeCheck(out, c, "  ");
        } else {
            out << "none found (" << r.divergenceNote << ")\n";
        }
        if (r.waves) {
            const WavesReport& w = *r.waves;
            if (!w.model.empty()) out << "  the operation alone: " << w.model << "\n";
            if (!w.error.empty()) {
                out << "  waves: " << w.error << "\n";
            } else {
                out << "  alone it " << (w.reproducesAlone ? "diverges too" : "matches the golden")
                    << "; its job: " << withCommas(w.jobCycles) << " cycles\n";
                out << "  waves: " << w.fst << " (" << withCommas(w.windowCycles);
                if (w.windowStart == 0) {
                    out << " cycles from the doorbell of the operation alone)\n";
                } else {
                    out << " cycles from cycle " << withCommas(w.windowStart)
                        << " of the run repeated: the operation inside its job)\n";
                }
                if (!w.gtkw.empty()) out << "  view:  gtkwave " << w.fst << " " << w.gtkw << "\n";
                if (!w.png.empty()) out << "  image: " << w.png << "\n";
                out << "  made by: " << w.command << "\n";
            }
        }
    }

    if (r.cosim) {
        const CosimReport& c = *r.cosim;
        const sim::CosimStats& st = c.stats;
        out << "\nco-simulation";
        if (c.rtlFrom) {
            out << ": operations before " << *c.rtlFrom << " on the functional model, the RTL from "
                << "there (" << st.modelJobs << " jobs on the model alone, " << st.splitJobs
                << " split, the last at descriptor " << st.lastSplitAt
                << "; cycles of the model's part are its estimates)";
        }
        if (c.lockstep) {
            out << (c.rtlFrom ? "; " : ": ") << "lockstep, " << st.comparedJobs << " jobs, "
                << withCommas(st.descriptors) << " descriptors and " << withCommas(st.bytes)
                << " bytes compared";
        }
        out << "\n";
        if (c.diverged) {
            out << "  FIRST DIVERGENCE (" << c.kind << ") in NPU partition " << c.partition;
            if (c.operation) out << ", operation " << *c.operation << " " << nameOf(c.type);
            out << "\n  descriptor " << c.descriptor << " " << c.opcode << " (flags " << c.flags
                << "), cycles " << withCommas(c.firstCycle) << " to " << withCommas(c.retireCycle)
                << " (its fetch to its retirement)\n";
            out << "  tile: " << c.tile << "\n";
            if (!c.element.empty()) {
                out << "  first differing element: " << c.element << ": RTL " << c.rtlValue
                    << ", functional model " << c.modelValue << "\n";
            }
            if (c.wrongWriteCycle)
                out << "  first wrong write: cycle " << withCommas(c.wrongWriteCycle) << "\n";
            if (!c.note.empty()) out << "  " << c.note << "\n";
            out << "  comparison stopped there; later jobs ran on the functional model\n";
            if (c.waves) {
                const WavesReport& w = *c.waves;
                if (!w.error.empty()) {
                    out << "  waves: " << w.error << "\n";
                } else {
                    out << "  waves: " << w.fst << " (cycles " << withCommas(w.windowStart)
                        << " to " << withCommas(w.windowStart + w.windowCycles) << ")\n";
                    if (!w.gtkw.empty())
                        out << "  view:  gtkwave " << w.fst << " " << w.gtkw << "\n";
                    if (!w.png.empty()) out << "  image: " << w.png << "\n";
                    out << "  made by: " << w.command << "\n";
                }
            }
        } else if (c.lockstep) {
            out << "  no divergence: the RTL and the functional model agree on every descriptor\n";
        }
    }

    out << "\ntotal: ";
    if (r.clockPeriodPs > 0) {
        out << withCommas(rec.npuCycles)
            << (r.cyclesEstimated ? " NPU cycles (estimated), device time "
                                  : " NPU cycles, device time ")
            << std::fixed << std::setprecision(3)
            << static_cast<double>(rec.npuCycles) * static_cast<double>(r.clockPeriodPs) * 1e-9
            << " ms at " << std::setprecision(0) << 1e6 / static_cast<double>(r.clockPeriodPs)
            << " MHz and " << r.dramBytesPerCycle << " B/cycle of DRAM, utilization "
            << percent(npuTotal.utilization()) << ", ";
    }
    out << std::fixed << std::setprecision(3) << "CPU partitions " << rec.cpuSeconds << " s, wall "
        << r.wallSeconds << " s\n";
    if (r.clockPeriodPs > 0 && npuTotal.cycles > 0) {
        const driver::Energy e = npuTotal.energy(r.clockPeriodPs);
        out << "NPU energy" << (r.cyclesEstimated ? " (estimated cycles)" : "") << ": "
            << microjoules(e.microjoules()) << " uJ, average " << std::setprecision(1)
            << driver::averageMilliwatts(e, npuTotal.cycles, r.clockPeriodPs)
            << " mW over the device time (MACs " << microjoules(e.macs * 1e-6) << ", scratchpad "
            << microjoules(e.scratchpad * 1e-6) << ", DRAM " << microjoules(e.dram * 1e-6)
            << ", clock and leakage " << microjoules(e.clockAndLeakage * 1e-6)
            << " uJ; docs/npu.md, Energy model)\n";
    }
    if (r.preference != kDefaultExecutionPreference)
        out << "preference: " << nameOf(r.preference) << "\n";
    out << "verdict: " << (!r.compared ? "not compared" : r.passed() ? "PASS" : "FAIL") << "\n";
    return out.str();
}

nlohmann::json reportJson(const RunReport& r) {
    const ExecutionRecord& rec = r.record;
    nlohmann::json j;
    j["model"] = r.modelName;
    j["backend"] = r.backend;
    j["preference"] = nameOf(r.preference);
    if (!r.npu.empty()) j["npu"] = r.npu;
    j["verdict"] = !r.compared ? "not compared" : r.passed() ? "pass" : "fail";
    nlohmann::json ops = nlohmann::json::array();
    for (const OperationRecord& op : rec.operations) {
        nlohmann::json o = {{"index", op.index},
                            {"type", nameOf(op.type)},
                            {"device", op.npu ? "npu" : "cpu"},
                            {"partition", op.partition}};
        if (!op.npu) o["cpu_reason"] = op.cpuReason;
        if (op.counters) o["npu"] = countersJson(*op.counters, r);
        if (op.fusedInto) o["fused_into"] = *op.fusedInto;
        ops.push_back(std::move(o));
    }
    j["operations"] = std::move(ops);
    nlohmann::json parts = nlohmann::json::array();
    for (const PartitionRecord& pr : rec.partitions) {
        nlohmann::json p = {{"device", pr.npu ? "npu" : "cpu"},
                            {"operations", pr.operations},
                            {"host_seconds", pr.seconds}};
        if (pr.job) {
            p["npu"] = countersJson(pr.job->total, r);
            p["npu"]["start_cycle"] = pr.job->startCycle;
        }
        parts.push_back(std::move(p));
    }
    j["partitions"] = std::move(parts);
    nlohmann::json outs = nlohmann::json::array();
    for (const TensorCheck& c : r.outputs) outs.push_back(checkJson(c));
    j["outputs"] = std::move(outs);
    const NpuCounters npuTotal = rec.npuTotal();
    const driver::Energy totalEnergy = npuTotal.energy(r.clockPeriodPs);
    j["totals"] = {
        {"npu_cycles", rec.npuCycles},
        {"device_time_ns",
         static_cast<double>(rec.npuCycles) * static_cast<double>(r.clockPeriodPs) * 1e-3},
        {"clock_period_ps", r.clockPeriodPs},
        {"dram_bytes_per_cycle", r.dramBytesPerCycle},
        {"cycles_estimated", r.cyclesEstimated},
        {"macs", npuTotal.macs},
        {"utilization", npuTotal.utilization()},
        {"dma_bytes_read", npuTotal.dmaBytesRead},
        {"dma_bytes_written", npuTotal.dmaBytesWritten},
        {"scratchpad_reads", npuTotal.scratchpadReads},
        {"scratchpad_writes", npuTotal.scratchpadWrites},
        {"energy_uj", totalEnergy.microjoules()},
        {"energy_breakdown_uj", energyJson(totalEnergy)},
        {"average_mw", driver::averageMilliwatts(totalEnergy, npuTotal.cycles, r.clockPeriodPs)},
        {"cpu_seconds", rec.cpuSeconds},
        {"wall_seconds", r.wallSeconds}};
    if (r.divergence) {
        const Divergence& d = *r.divergence;
        nlohmann::json in = nlohmann::json::array(), out = nlohmann::json::array();
        for (const TensorCheck& c : d.inputs) in.push_back(checkJson(c));
        for (const TensorCheck& c : d.outputs) out.push_back(checkJson(c));
        j["first_divergence"] = {{"operation", d.operation},
                                 {"type", nameOf(d.type)},
                                 {"device", d.npu ? "npu" : "cpu"},
                                 {"method", d.method},
                                 {"matched_before", d.matchedBefore},
                                 {"inputs", in},
                                 {"outputs", out}};
    } else {
        j["first_divergence"] = nullptr;
        if (!r.divergenceNote.empty()) j["divergence_note"] = r.divergenceNote;
    }
    if (r.cosim) {
        const CosimReport& c = *r.cosim;
        const sim::CosimStats& st = c.stats;
        nlohmann::json cj = {
            {"lockstep", c.lockstep},           {"jobs", st.jobs},
            {"compared_jobs", st.comparedJobs}, {"descriptors_compared", st.descriptors},
            {"bytes_compared", st.bytes},       {"model_jobs", st.modelJobs},
            {"split_jobs", st.splitJobs},       {"diverged", c.diverged}};
        if (c.rtlFrom) {
            cj["rtl_from"] = *c.rtlFrom;
            cj["split_at_descriptor"] = st.lastSplitAt;
        }
        if (c.diverged) {
            nlohmann::json descriptors = nlohmann::json::array();
            for (const sim::CosimDescriptor& d : c.jobDescriptors) {
                descriptors.push_back({{"index", d.index},
                                       {"opcode", npu::op::name(d.opcode)},
                                       {"flags", d.flags},
                                       {"tag", d.tag},
                                       {"write_beats", d.writeBeats}});
            }
            cj["divergence"] = {{"kind", c.kind},
                                {"partition", c.partition},
                                {"operation", c.operation ? nlohmann::json(*c.operation) : nullptr},
                                {"type", c.operation ? nameOf(c.type) : ""},
                                {"descriptor", c.descriptor},
                                {"opcode", c.opcode},
                                {"flags", c.flags},
                                {"tile", c.tile},
                                {"element", c.element},
                                {"address", c.address},
                                {"rtl_value", c.rtlValue},
                                {"model_value", c.modelValue},
                                {"first_cycle", c.firstCycle},
                                {"retire_cycle", c.retireCycle},
                                {"wrong_write_cycle", c.wrongWriteCycle},
                                {"note", c.note},
                                {"job_descriptors", descriptors}};
            if (c.waves) {
                const WavesReport& w = *c.waves;
                cj["divergence"]["waves"] = {{"fst", w.fst},
                                             {"gtkw", w.gtkw},
                                             {"png", w.png},
                                             {"command", w.command},
                                             {"window_start", w.windowStart},
                                             {"window_cycles", w.windowCycles},
                                             {"error", w.error}};
            }
        }
        j["cosim"] = std::move(cj);
    }
    if (r.waves) {
        const WavesReport& w = *r.waves;
        j["waves"] = {{"model", w.model},
                      {"fst", w.fst},
                      {"gtkw", w.gtkw},
                      {"png", w.png},
                      {"command", w.command},
                      {"job_cycles", w.jobCycles},
                      {"window_start", w.windowStart},
                      {"window_cycles", w.windowCycles},
                      {"reproduces_alone", w.reproducesAlone},
                      {"error", w.error}};
    }
    return j;
}

}  // namespace nncosim
