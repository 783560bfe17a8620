// Running one model on its backends (the host runtime), comparing it with the golden, finding the
// first diverging operation and dumping its waves; the report itself is RunReport.cpp's.
#include "testbench/ModelRun.h"

#include <unistd.h>

#include <Eigen/Core>
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <limits>
#include <random>
#include <sstream>
#include <tuple>

#include "driver/NpuRegisters.h"
#include "golden/Executor.h"
#include "model/ModelJson.h"
#include "model/OutputFile.h"
#include "model/Validation.h"
#include "sim/ChildProcess.h"
#include "testbench/WaveScreenshot.h"

namespace nncosim {
namespace {

// Cycles dumped past the diverging operation's job, so that its interrupt is in the window.
constexpr uint64_t kWindowMarginCycles = 64;
// The re-run that dumps the waves repeats an RTL run (ResNet-18 takes about 30 s); a screenshot
// takes seconds. Past these the child is stuck (a Tcl error leaves GTKWave waiting, say).
constexpr double kWavesRunTimeoutSeconds = 3600;
constexpr double kScreenshotTimeoutSeconds = 120;

uint64_t countOf(OperandType type, const TensorData& t) {
    const uint32_t size = std::max<uint32_t>(1, elementSize(type));
    return std::min<uint64_t>(elementCount(t.dimensions), t.bytes.size() / size);
}

TensorStats statsOf(OperandType type, const TensorData& t) {
    TensorStats s;
    s.elements = countOf(type, t);
    if (s.elements == 0) return s;
    double sum = 0.0;
    s.min = std::numeric_limits<double>::infinity();
    s.max = -s.min;
    for (uint64_t i = 0; i < s.elements; ++i) {
        const double v = elementAsDouble(type, t.bytes.data(), i);
        s.min = std::min(s.min, v);
        s.max = std::max(s.max, v);
        sum += v;
    }
    s.mean = sum / static_cast<double>(s.elements);
    return s;
}

const char* placementName(Placement p) {
    switch (p) {
        case Placement::kGolden:
            return "golden";
        case Placement::kNpu:
            return "npu";
        case Placement::kAuto:
            return "auto";
    }
    return "?";
}

double secondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string quoted(const std::vector<std::string>& argv) {
    std::string s;
    for (const std::string& a : argv) {
        const bool plain = a.find_first_of(" '\"\\$") == std::string::npos && !a.empty();
        s += (s.empty() ? "" : " ") + (plain ? a : "'" + a + "'");
    }
    return s;
}

/// What each operation reads, named for reports, with the device's and the golden's values.
struct OperandSource {
    int writer = -1;        ///< operation writing it, if any
    uint32_t position = 0;  ///< which of the writer's outputs
};

class DivergenceFinder {
  public:
    DivergenceFinder(const Model& model, const std::vector<TensorData>& inputs,
                     const std::vector<std::vector<TensorData>>& goldenResults)
        : mModel(model),
          mInputs(inputs),
          mGolden(goldenResults),
          mRelaxed(isRelaxed(model)),
          mSources(model.main.operands.size()) {
        const auto& ops = model.main.operations;
        for (uint32_t i = 0; i < ops.size(); ++i) {
            for (uint32_t o = 0; o < ops[i].outputs.size(); ++o)
                mSources[ops[i].outputs[o]] = {static_cast<int>(i), o};
        }
    }

    /// Re-runs the model with its intermediates visible and compares them in execution order.
    std::optional<Divergence> find(const RuntimeOptions& base, std::string* note) {
        struct Method {
            const char* name;
            bool onePerOperation;
        };
        for (const Method& m : {Method{"same partitions, every result a partition output", false},
                                Method{"one operation per partition", true}}) {
            RuntimeOptions options = base;
            options.exposeIntermediates = !m.onePerOperation;
            options.onePartitionPerOperation = m.onePerOperation;
            options.profileSampleCycles = 0;
            auto runtime = HostRuntime::create(mModel, options);
            if (!runtime) {
                *note += std::string(m.name) + ": " + runtime.status().message + "; ";
                continue;
            }
            ExecutionRecord record;
            auto outputs = (*runtime)->execute(mInputs, &record);
            if (!outputs) {
                *note += std::string(m.name) + ": " + outputs.status().message + "; ";
                continue;
            }
            if (auto d = compare(record, m.name)) return d;
            *note += std::string(m.name) + ": every operation matched the golden; ";
        }
        *note += "the mismatch did not reproduce with the intermediates visible";
        return std::nullopt;
    }

    /// The device values of the last find() run's record, by operand.
    const std::vector<std::optional<TensorData>>& values() const { return mValues; }

  private:
    std::optional<Divergence> compare(ExecutionRecord& record, const std::string& method) {
        const Subgraph& g = mModel.main;
        uint32_t matched = 0;
        for (const PartitionRecord& p : record.partitions) {
            for (uint32_t i : p.operations) {
                const Operation& op = g.operations[i];
                Divergence d;
                bool diverges = false;
                for (uint32_t o = 0; o < op.outputs.size(); ++o) {
                    const uint32_t k = op.outputs[o];
                    if (!record.values[k]) continue;
                    const TensorData* golden = o < mGolden[i].size() ? &mGolden[i][o] : nullptr;
                    d.outputs.push_back(checkTensor("output " + std::to_string(o), k, g.operands[k],
                                                    mRelaxed, *record.values[k], golden));
                    diverges = diverges || !d.outputs.back().ok();
                }
                if (!diverges) {
                    ++matched;
                    continue;
                }
                d.operation = i;
                d.type = op.type;
                d.npu = p.npu;
                d.method = method;
                d.matchedBefore = matched;
                for (uint32_t n = 0; n < op.inputs.size(); ++n) {
                    auto check = inputCheck(record, op.inputs[n], n);
                    if (check) d.inputs.push_back(std::move(*check));
                }
                mValues = std::move(record.values);
                return d;
            }
        }
        return std::nullopt;
    }

    std::optional<TensorCheck> inputCheck(const ExecutionRecord& record, uint32_t k, uint32_t n) {
        const Operand& operand = mModel.main.operands[k];
        if (!isTensorType(operand.type) || operand.lifetime == OperandLifeTime::NO_VALUE)
            return std::nullopt;
        const std::string role = "input " + std::to_string(n);
        if (operand.lifetime == OperandLifeTime::CONSTANT_COPY ||
            operand.lifetime == OperandLifeTime::CONSTANT_REFERENCE) {
            TensorData t;
            t.dimensions = operand.dimensions;
            const uint8_t* data = constantData(mModel, operand);
            if (data) t.bytes.assign(data, data + operand.location.length);
            TensorCheck c = checkTensor(role, k, operand, mRelaxed, t, nullptr);
            c.origin = "constant";
            return c;
        }
        if (!record.values[k]) return std::nullopt;
        const TensorData* golden = nullptr;
        std::string origin;
        if (operand.lifetime == OperandLifeTime::SUBGRAPH_INPUT) {
            const auto& in = mModel.main.inputIndexes;
            const size_t pos = std::find(in.begin(), in.end(), k) - in.begin();
            golden = pos < mInputs.size() ? &mInputs[pos] : nullptr;
            origin = "model input " + std::to_string(pos);
        } else if (mSources[k].writer >= 0) {
            const auto& results = mGolden[mSources[k].writer];
            golden =
                mSources[k].position < results.size() ? &results[mSources[k].position] : nullptr;
            origin = "output " + std::to_string(mSources[k].position) + " of operation " +
                     std::to_string(mSources[k].writer) + " " +
                     nameOf(mModel.main.operations[mSources[k].writer].type);
        }
        TensorCheck c = checkTensor(role, k, operand, mRelaxed, *record.values[k], golden);
        c.origin = origin;
        return c;
    }

    const Model& mModel;
    const std::vector<TensorData>& mInputs;
    const std::vector<std::vector<TensorData>>& mGolden;
    const bool mRelaxed;
    std::vector<OperandSource> mSources;
    std::vector<std::optional<TensorData>> mValues;
};

std::string fileStem(const std::string& name) {
    std::string s;
    for (char c : name)
        s += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' ? c : '_';
    return s.empty() ? "model" : s;
}

/// [start, start + cycles) of `operation` in its NPU job of `record`: the job's start plus the
/// shares of the operations before it, widened by `sampleCycles` each side within the job (the
/// whole job when the shares were not sampled).
std::optional<std::pair<uint64_t, uint64_t>> operationWindow(const ExecutionRecord& record,
                                                             uint32_t operation,
                                                             uint64_t sampleCycles) {
    // A fused operation runs inside the one it is fused with: that one's window.
    if (auto into = record.operations.at(operation).fusedInto) operation = *into;
    const OperationRecord& op = record.operations.at(operation);
    if (!op.npu || op.partition >= record.partitions.size()) return std::nullopt;
    const PartitionRecord& p = record.partitions[op.partition];
    if (!p.job) return std::nullopt;
    const uint64_t jobStart = p.job->startCycle,
                   jobEnd = jobStart + p.job->total.cycles + kWindowMarginCycles;
    if (!op.counters) return std::make_pair(jobStart, jobEnd - jobStart);
    uint64_t start = jobStart;
    for (uint32_t i : p.operations) {
        if (i == operation) break;
        if (record.operations[i].counters) start += record.operations[i].counters->cycles;
    }
    const uint64_t from = std::max(jobStart, start > sampleCycles ? start - sampleCycles : 0);
    const uint64_t to = std::min(jobEnd, start + op.counters->cycles + sampleCycles);
    return std::make_pair(from, to - from);
}

// This program's own path, for the child runs that dump waves.
std::string selfExecutable(const std::string& executable) {
    std::error_code ec;
    if (executable == "/proc/self/exe")
        return std::filesystem::read_symlink(executable, ec).string();
    return executable;
}

// Runs `argv` (a `run` that dumps waves to w.fst) as a child logging to `base`.log; false with
// w.error set when it failed, timed out or wrote no dump.
bool runWavesChild(const std::vector<std::string>& argv, const std::string& base, WavesReport& w) {
    std::error_code ec;
    w.command = quoted(argv);
    const std::string log = base + ".log";
    const sim::ChildExit rerun = sim::runChild(argv, log, kWavesRunTimeoutSeconds);
    // Exit status 1 is the mismatch the waves are about.
    if (rerun.timedOut) {
        w.error = "the waves run did not finish within " +
                  std::to_string(int(kWavesRunTimeoutSeconds)) + " s and was killed (see " + log +
                  ")";
        return false;
    }
    if (rerun.status != 0 && rerun.status != 1) {
        w.error = "the waves run failed (exit status " + std::to_string(rerun.status) + "; see " +
                  log + ")";
        return false;
    }
    if (!std::filesystem::exists(w.fst) || std::filesystem::file_size(w.fst, ec) == 0) {
        w.error = "the waves run wrote no dump (see " + log + ")";
        w.fst.clear();
        w.gtkw.clear();
        return false;
    }
    if (!std::filesystem::exists(w.gtkw)) w.gtkw.clear();
    return true;
}

/// The diverging operation alone, as a model file with the device's inputs and the golden's
/// outputs, measured here; its waves dumped by a process of its own, of the operation alone
/// when it diverges alone, else of its window in a repetition of the whole run.
WavesReport dumpWaves(const std::string& name, const Model& model, const Divergence& d,
                      const std::vector<std::optional<TensorData>>& values,
                      const std::vector<TensorData>& goldenResults,
                      const ExecutionRecord& mainRecord, const RunOptions& options) {
    WavesReport w;
    std::vector<bool> all(model.main.operands.size(), true);
    auto part = extractPartition(model, {d.operation}, all);
    if (!part) {
        w.error = part.status().message;
        return w;
    }
    CtsTest test;
    test.name = fileStem(name) + "_op" + std::to_string(d.operation) + "_" + nameOf(d.type);
    Subgraph& g = part->model.main;
    for (size_t n = 0; n < part->inputs.size(); ++n) {
        const uint32_t k = part->inputs[n];
        if (!values[k]) {
            w.error = "no device value for operand " + std::to_string(k);
            return w;
        }
        test.inputs.push_back(*values[k]);
        g.operands[g.inputIndexes[n]].dimensions = values[k]->dimensions;
    }
    for (size_t n = 0; n < part->outputs.size(); ++n) {
        const TensorData& expected = goldenResults.at(n);
        test.expectedOutputs.push_back(expected);
        g.operands[g.outputIndexes[n]].dimensions = expected.dimensions;
    }
    test.outputIgnored.assign(test.expectedOutputs.size(), false);
    test.model = part->model;
    auto level = validateModel(test.model);
    if (!level) {
        w.error = "the operation alone is not a valid model: " + level.status().message;
        return w;
    }
    test.minSupportedVersion = *level;
    std::error_code ec;
    std::filesystem::create_directories(options.wavesDir, ec);
    const std::string base = (std::filesystem::path(options.wavesDir) / test.name).string();
    w.model = base + ".json";
    if (Status st = writeCtsFile(w.model, test); !st.ok()) {
        w.error = st.message;
        return w;
    }

    // Its job alone, on this process's NPU (same hardware, same faults): the window's length.
    RuntimeOptions alone;
    alone.placement = Placement::kNpu;
    auto runtime = HostRuntime::create(test.model, alone);
    if (!runtime) {
        w.error = "the operation alone does not run on the NPU: " + runtime.status().message;
        return w;
    }
    ExecutionRecord record;
    auto outputs = (*runtime)->execute(test.inputs, &record);
    if (!outputs) {
        w.error = "the operation alone fails on the NPU: " + outputs.status().message;
        return w;
    }
    w.jobCycles = record.npuCycles;
    for (size_t n = 0; n < outputs->size(); ++n) {
        w.reproducesAlone =
            w.reproducesAlone || (*outputs)[n].bytes != test.expectedOutputs[n].bytes;
    }

    w.fst = base + ".fst";
    w.gtkw = w.fst + ".gtkw";
    std::filesystem::remove(w.fst, ec);
    std::filesystem::remove(w.gtkw, ec);
    std::vector<std::string> argv = {selfExecutable(options.executable), "run"};
    if (w.reproducesAlone || options.rerunArgs.empty()) {
        w.windowCycles = w.jobCycles + kWindowMarginCycles;
        argv.insert(argv.end(), {w.model, "--backend", "npu", "--trace", w.fst, "--trace-cycles",
                                 std::to_string(w.windowCycles)});
    } else {
        // Alone it behaves: what goes wrong needs what ran before it in its job.
        auto window = operationWindow(mainRecord, d.operation, options.sampleCycles);
        if (!window) {
            w.error = "no NPU job of the operation to take a window from";
            return w;
        }
        std::tie(w.windowStart, w.windowCycles) = *window;
        argv.insert(argv.end(), options.rerunArgs.begin(), options.rerunArgs.end());
        argv.insert(argv.end(), {"--trace", w.fst, "--trace-cycles", std::to_string(w.windowCycles),
                                 "--trace-start", std::to_string(w.windowStart)});
    }
    argv.insert(argv.end(), options.childArgs.begin(), options.childArgs.end());
    const std::string childReport = base + ".run.json";
    argv.insert(argv.end(), {"--json", childReport});
    if (!runWavesChild(argv, base, w)) return w;
    if (w.windowStart > 0) {
        // The repetition must have run the operation's job at the same cycle as this run.
        const PartitionRecord& p =
            mainRecord.partitions[mainRecord.operations[d.operation].partition];
        std::ifstream in(childReport);
        const nlohmann::json child = nlohmann::json::parse(in, nullptr, false);
        const auto& parts = child.is_object() ? child["partitions"] : nlohmann::json();
        const size_t index = mainRecord.operations[d.operation].partition;
        if (!parts.is_array() || index >= parts.size() || !parts[index].contains("npu") ||
            parts[index]["npu"]["start_cycle"] != p.job->startCycle) {
            w.error = "the repeated run did not start the operation's job at cycle " +
                      std::to_string(p.job->startCycle) + ": the waves may miss it (see " +
                      childReport + ")";
        }
    }

    // A screenshot of the window when GTKWave can run headless.
    if (!w.gtkw.empty() &&
        grabWaveScreenshot(w.fst, w.gtkw, "gtkwave::/Time/Zoom/Zoom_Full\n", base + ".png",
                           base + ".png.log", kScreenshotTimeoutSeconds))
        w.png = base + ".png";
    return w;
}

/// Coordinates of byte `offset` of a tensor of `dims` (8-bit elements), e.g. "[0,12,3,40]".
std::string coordinatesOf(const std::vector<uint32_t>& dims, uint64_t offset) {
    return coordinates(dims, offset);
}

/// The co-simulation's figures and first divergence, in NNAPI terms.
CosimReport cosimReport(const Model& model, const ExecutionRecord& record,
                        const sim::CosimPlatform& cosim, const RunOptions& options) {
    CosimReport c;
    c.lockstep = cosim.lockstep();
    c.rtlFrom = options.rtlFrom;
    c.stats = cosim.stats();
    const auto d = cosim.divergence();
    if (!d) return c;
    c.diverged = true;
    c.partition = d->label;
    c.descriptor = d->descriptor;
    c.opcode = npu::op::name(d->desc.opcode);
    c.flags = d->desc.flags;
    c.kind = d->kind;
    c.address = d->address;
    c.rtlValue = d->rtlValue;
    c.modelValue = d->modelValue;
    c.firstCycle = d->firstCycle;
    c.retireCycle = d->retireCycle;
    c.wrongWriteCycle = d->wrongWriteCycle;
    c.note = d->note;
    c.jobDescriptors = d->jobDescriptors;
    if (c.partition < record.partitions.size()) {
        const auto& ops = record.partitions[c.partition].operations;
        if (d->desc.tag < ops.size()) {
            c.operation = ops[d->desc.tag];
            c.type = model.main.operations[*c.operation].type;
        }
    }
    const npu::TensorDesc& out = d->desc.out;
    // The operation's output as NHWC 8-bit elements from the lowest address its descriptors
    // write: the tile's origin and the element's coordinates.
    std::vector<uint32_t> dims;
    if (c.operation) {
        const Operation& op = model.main.operations[*c.operation];
        if (!op.outputs.empty()) dims = model.main.operands[op.outputs[0]].dimensions;
    }
    const bool window = npu::op::isWindow(d->desc.opcode);
    std::ostringstream tile;
    if (window) {
        tile << out.count2 << " output rows x " << out.count1 << " columns x " << out.inner
             << " channels";
    } else {
        tile << out.count1 * out.count2 * out.count3 << " rows of " << out.inner << " bytes";
    }
    if (!dims.empty() && out.addr >= d->operationBase) {
        tile << " from element " << coordinatesOf(dims, out.addr - d->operationBase)
             << " of the operation's output " << toString(dims);
    }
    c.tile = tile.str();
    if (c.kind == "output" || c.kind == "stray write") {
        std::ostringstream e;
        if (c.kind == "output" && window) {
            const uint32_t oy = d->row.row / std::max<uint32_t>(out.count1, 1);
            const uint32_t ox = d->row.row % std::max<uint32_t>(out.count1, 1);
            e << "tile pixel (row " << oy << ", column " << ox << "), channel "
              << d->row.channel + d->byteInRow << " of the tile";
        } else if (c.kind == "output") {
            e << "byte " << d->byteInRow << " of row " << d->row.row << " of OUT";
        } else {
            e << "a byte outside the descriptor's output";
        }
        if (!dims.empty() && c.address >= d->operationBase &&
            c.address - d->operationBase < byteSize(OperandType::TENSOR_QUANT8_ASYMM, dims))
            e << ", element " << coordinatesOf(dims, c.address - d->operationBase)
              << " of the operation's output";
        e << " at DRAM 0x" << std::hex << c.address << std::dec;
        c.element = e.str();
    }
    return c;
}

/// The waves of the diverging descriptor: its cycle window (its fetch to its retirement) dumped
/// by a repetition of the run on the RTL in a process of its own (same arguments, same faults:
/// the same cycles), with a screenshot zoomed on the first wrong write and a marker there.
WavesReport dumpCosimWaves(const std::string& name, const CosimReport& c, const RunOptions& options,
                           uint64_t clockPeriodPs) {
    WavesReport w;
    if (options.rerunArgs.empty()) {
        w.error = "no arguments to repeat the run with";
        return w;
    }
    const std::string dir = options.wavesDir.empty() ? "waves" : options.wavesDir;
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    const std::string base = (std::filesystem::path(dir) /
                              (fileStem(name) + "_cosim_desc" + std::to_string(c.descriptor)))
                                 .string();
    w.fst = base + ".fst";
    w.gtkw = w.fst + ".gtkw";
    std::filesystem::remove(w.fst, ec);
    std::filesystem::remove(w.gtkw, ec);
    constexpr uint64_t kMargin = 16;
    w.windowStart = c.firstCycle > kMargin ? c.firstCycle - kMargin : 0;
    const uint64_t end = std::max(c.retireCycle, c.wrongWriteCycle) + kMargin;
    w.windowCycles = end - w.windowStart;
    w.jobCycles = c.retireCycle - c.firstCycle;
    std::vector<std::string> argv = {selfExecutable(options.executable), "run"};
    argv.insert(argv.end(), options.rerunArgs.begin(), options.rerunArgs.end());
    if (c.rtlFrom) argv.insert(argv.end(), {"--rtl-from", std::to_string(*c.rtlFrom)});
    argv.insert(argv.end(), {"--trace", w.fst, "--trace-start", std::to_string(w.windowStart),
                             "--trace-cycles", std::to_string(w.windowCycles)});
    argv.insert(argv.end(), options.childArgs.begin(), options.childArgs.end());
    if (!runWavesChild(argv, base, w)) return w;
    // The view opens on the wrong write: marker there, window around it.
    const uint64_t marker = c.wrongWriteCycle ? c.wrongWriteCycle : c.retireCycle;
    constexpr uint64_t kZoomCycles = 48;
    const uint64_t zoomFrom =
        std::max(w.windowStart, marker > kZoomCycles ? marker - kZoomCycles : 0);
    const uint64_t zoomTo = std::min(end, marker + kZoomCycles);
    // The dump's time unit is the picosecond; cycle k is at k x the clock period.
    const uint64_t period = clockPeriodPs ? clockPeriodPs : 1000;
    if (!w.gtkw.empty()) {
        std::ifstream in(w.gtkw);
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        in.close();
        // A zoom factor gtkwave reads as log2 of time units per pixel (about 1000 pixels).
        const double unitsPerPixel = static_cast<double>((zoomTo - zoomFrom) * period) / 1000.0;
        std::ostringstream head;
        head << "[timestart] " << zoomFrom * period << "\n*" << std::fixed << std::setprecision(6)
             << -std::log2(std::max(unitsPerPixel, 1.0)) << " " << marker * period;
        for (int i = 0; i < 26; ++i) head << " -1";
        head << "\n";
        const size_t after = text.find('\n', text.find("[dumpfile]"));
        text.insert(after == std::string::npos ? 0 : after + 1, head.str());
        if (!writeOutputFile(w.gtkw, text).ok()) w.gtkw.clear();
    }
    std::ostringstream view;
    view << "gtkwave::setZoomRangeTimes " << zoomFrom * period << " " << zoomTo * period << "\n"
         << "gtkwave::setMarker " << marker * period << "\n";
    if (!w.gtkw.empty() && grabWaveScreenshot(w.fst, w.gtkw, view.str(), base + ".png",
                                              base + ".png.log", kScreenshotTimeoutSeconds))
        w.png = base + ".png";
    return w;
}

}  // namespace

std::string coordinates(const std::vector<uint32_t>& dims, uint64_t flat) {
    std::vector<uint64_t> index(dims.size());
    for (size_t d = dims.size(); d-- > 0;) {
        const uint64_t extent = std::max<uint32_t>(dims[d], 1);
        index[d] = flat % extent;
        flat /= extent;
    }
    std::ostringstream s;
    s << "[";
    for (size_t d = 0; d < index.size(); ++d) s << (d ? "," : "") << index[d];
    s << "]";
    return s.str();
}

bool RunReport::passed() const {
    return std::all_of(outputs.begin(), outputs.end(),
                       [](const TensorCheck& c) { return c.ok(); }) &&
           !(cosim && cosim->diverged);
}

Result<std::vector<TensorData>> randomModelInputs(const Model& model, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<TensorData> inputs;
    for (uint32_t k : model.main.inputIndexes) {
        const Operand& operand = model.main.operands[k];
        if (hasUnknownDimensions(operand)) {
            return invalidArgument("input operand ", k, " has unknown dimensions ",
                                   toString(operand.dimensions),
                                   ": random inputs need a full shape");
        }
        TensorData t;
        t.dimensions = operand.dimensions;
        const uint64_t count = elementCount(operand.dimensions);
        t.bytes.resize(byteSize(operand.type, operand.dimensions));
        auto fill = [&](auto value) {
            for (uint64_t i = 0; i < count; ++i) {
                const auto v = value();
                std::memcpy(t.bytes.data() + i * sizeof(v), &v, sizeof(v));
            }
        };
        std::uniform_real_distribution<float> real(-1.0f, 1.0f);
        switch (operand.type) {
            case OperandType::TENSOR_FLOAT32:
            case OperandType::FLOAT32:
                fill([&] { return real(rng); });
                break;
            case OperandType::TENSOR_FLOAT16:
            case OperandType::FLOAT16:
                fill([&] {
                    const Eigen::half h(real(rng));
                    uint16_t bits;
                    std::memcpy(&bits, &h, sizeof(bits));
                    return bits;
                });
                break;
            case OperandType::TENSOR_INT32:
            case OperandType::INT32:
            case OperandType::UINT32:
                fill([&] { return static_cast<int32_t>(rng() % 4); });
                break;
            case OperandType::TENSOR_QUANT16_SYMM:
            case OperandType::TENSOR_QUANT16_ASYMM:
                fill([&] { return static_cast<uint16_t>(rng()); });
                break;
            case OperandType::TENSOR_BOOL8:
            case OperandType::BOOL:
                fill([&] { return static_cast<uint8_t>(rng() & 1); });
                break;
            default:  // 8-bit quantized types: every byte value
                fill([&] { return static_cast<uint8_t>(rng()); });
                break;
        }
        inputs.push_back(std::move(t));
    }
    return inputs;
}

TensorCheck checkTensor(const std::string& role, uint32_t index, const Operand& operand,
                        bool relaxed, const TensorData& device, const TensorData* golden) {
    TensorCheck c;
    c.role = role;
    c.operand = index;
    c.type = operand.type;
    c.shape = device.dimensions;
    c.device = statsOf(operand.type, device);
    if (!golden) return c;
    c.compared = true;
    c.goldenShape = golden->dimensions;
    c.golden = statsOf(operand.type, *golden);
    if (c.shape != c.goldenShape || device.bytes.size() != golden->bytes.size()) return c;
    const Tolerance tolerance =
        isFloatType(operand.type) ? ctsTolerance(operand.type, relaxed) : Tolerance{0.0, 0.0};
    const uint64_t count = countOf(operand.type, device);
    c.comparison =
        compareTensors(operand.type, golden->bytes.data(), device.bytes.data(), count, tolerance);
    c.maxUlpError = c.comparison->maxUlpError;
    return c;
}

Result<RunReport> runModel(const std::string& name, const Model& model,
                           const std::vector<TensorData>& inputs, const RunOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    RunReport report;
    report.modelName = name;
    report.backend = placementName(options.placement);
    RuntimeOptions runtimeOptions;
    runtimeOptions.placement = options.placement;
    runtimeOptions.preference = options.preference;
    report.preference = options.preference;
    runtimeOptions.profileSampleCycles = options.sampleCycles;
    std::shared_ptr<sim::CosimPlatform> cosim;
    if (options.cosim || options.rtlFrom) {
        if (options.placement == Placement::kGolden)
            return invalidArgument("--cosim and --rtl-from need the NPU (--backend npu or auto)");
        auto npu = openNpu();
        if (!npu) return npu.status();
        cosim = (*npu)->cosim;
        if (!cosim || (options.cosim && !cosim->lockstep()))
            return fail(ErrorStatus::GENERAL_FAILURE,
                        "the process's NPU was not opened for co-simulation");
        if (options.rtlFrom && *options.rtlFrom >= model.main.operations.size())
            return invalidArgument("--rtl-from: the model has no operation ", *options.rtlFrom);
        // Where each NPU partition's job runs: operations before rtlFrom on the model.
        runtimeOptions.beforeNpuPartition = [cosim, rtlFrom = options.rtlFrom](
                                                size_t s, const PartitionModel& part) {
            sim::JobPlan plan;
            plan.label = static_cast<uint32_t>(s);
            if (rtlFrom) {
                const auto& ops = part.operations;
                const auto at = std::find(ops.begin(), ops.end(), *rtlFrom);
                if (at != ops.end()) {
                    plan.mode = sim::JobPlan::Mode::kSplit;
                    plan.fromTag = static_cast<uint32_t>(at - ops.begin());
                } else if (*std::max_element(ops.begin(), ops.end()) < *rtlFrom) {
                    plan.mode = sim::JobPlan::Mode::kModel;
                }
            }
            cosim->planJobs(plan);
        };
    }
    auto runtime = HostRuntime::create(model, runtimeOptions);
    if (!runtime) return runtime.status();
    if (options.rtlFrom) {
        const std::string& why = (*runtime)->cpuReasons().at(*options.rtlFrom);
        if (!why.empty())
            return invalidArgument("--rtl-from: operation ", *options.rtlFrom, " (",
                                   nameOf(model.main.operations[*options.rtlFrom].type),
                                   ") runs on the CPU (", why, "): name an operation the NPU runs");
    }
    auto outputs = (*runtime)->execute(inputs, &report.record);
    if (cosim) cosim->planJobs({});
    if (!outputs) return outputs.status();
    report.outputValues = *outputs;
    if (cosim) report.cosim = cosimReport(model, report.record, *cosim, options);
    if (options.placement != Placement::kGolden) {
        auto npu = openNpu();
        if (npu) {
            report.clockPeriodPs = (*npu)->hardware->clockPeriodPs();
            report.npu = sim::nameOf((*npu)->implementation);
            report.cyclesEstimated = (*npu)->cyclesEstimated();
            report.dramBytesPerCycle = (*npu)->dramBytesPerCycle;
        }
    }
    if (options.compareGolden) {
        std::vector<std::vector<TensorData>> goldenResults(model.main.operations.size());
        golden::ExecuteOptions goldenOptions;
        goldenOptions.observer = [&](uint32_t i, const std::vector<TensorData>& results) {
            goldenResults[i] = results;
        };
        auto reference = golden::execute(model, inputs, goldenOptions);
        if (!reference)
            return fail(reference.status().code,
                        "the golden cannot run the model: ", reference.status().message);
        report.compared = true;
        report.goldenValues = *reference;
        const bool relaxed = isRelaxed(model);
        const Subgraph& g = model.main;
        for (size_t i = 0; i < outputs->size(); ++i) {
            const uint32_t k = g.outputIndexes[i];
            report.outputs.push_back(checkTensor("output " + std::to_string(i), k, g.operands[k],
                                                 relaxed, (*outputs)[i], &(*reference)[i]));
        }
        const bool cosimFound = report.cosim && report.cosim->diverged;
        if (!report.passed() && !cosimFound && options.findDivergence &&
            options.placement != Placement::kGolden) {
            report.divergenceSearched = true;
            DivergenceFinder finder(model, inputs, goldenResults);
            report.divergence = finder.find(runtimeOptions, &report.divergenceNote);
            if (report.divergence && !options.wavesDir.empty()) {
                if (report.divergence->npu) {
                    report.waves = dumpWaves(name, model, *report.divergence, finder.values(),
                                             goldenResults[report.divergence->operation],
                                             report.record, options);
                } else {
                    report.waves = WavesReport{};
                    report.waves->error = "the diverging operation ran on the CPU: no NPU waves";
                }
            }
        }
    }
    if (report.cosim && report.cosim->diverged) {
        report.cosim->waves = dumpCosimWaves(name, *report.cosim, options, report.clockPeriodPs);
    }
    report.wallSeconds = secondsSince(start);
    return report;
}

Result<uint32_t> resolveOperation(const Model& model, const std::string& spec) {
    const auto& ops = model.main.operations;
    const auto typesPresent = [&] {
        std::string list;
        for (const Operation& op : ops) {
            const std::string name = nameOf(op.type);
            if (list.find(name) == std::string::npos) list += (list.empty() ? "" : ", ") + name;
        }
        return list;
    };
    if (!spec.empty() && std::all_of(spec.begin(), spec.end(), ::isdigit)) {
        const unsigned long long index = std::strtoull(spec.c_str(), nullptr, 10);
        if (spec.size() > 9 || index >= ops.size())
            return invalidArgument("--rtl-from ", spec, ": the model has operations 0 to ",
                                   ops.size() - 1);
        return static_cast<uint32_t>(index);
    }
    const size_t colon = spec.find(':');
    const std::string type = spec.substr(0, colon);
    long long occurrence = 0;
    if (colon != std::string::npos) {
        const std::string n = spec.substr(colon + 1);
        char* end = nullptr;
        occurrence = std::strtoll(n.c_str(), &end, 10);
        if (n.empty() || *end != '\0')
            return invalidArgument("--rtl-from ", spec,
                                   ": expected an operation index, TYPE or TYPE:N (N-th of the "
                                   "type from 0, negative from the end)");
    }
    std::vector<uint32_t> matching;
    for (uint32_t i = 0; i < ops.size(); ++i)
        if (nameOf(ops[i].type) == type) matching.push_back(i);
    if (matching.empty())
        return invalidArgument("--rtl-from ", spec, ": the model has no ", type,
                               " operation (it has ", typesPresent(), "; or give an index 0 to ",
                               ops.size() - 1, ")");
    const long long count = static_cast<long long>(matching.size());
    const long long k = occurrence < 0 ? count + occurrence : occurrence;
    if (k < 0 || k >= count)
        return invalidArgument("--rtl-from ", spec, ": the model has ", count, " ", type,
                               count == 1 ? " operation" : " operations");
    return matching[static_cast<size_t>(k)];
}

Result<sim::FaultOptions> parseFaultSpec(const std::string& spec) {
    sim::FaultOptions fault;
    const size_t colon = spec.find(':');
    const std::string kind = spec.substr(0, colon);
    const std::string arg = colon == std::string::npos ? "" : spec.substr(colon + 1);
    // Plain decimal digits in range: no sign, no wrap-around, nothing after but "=0" or "=1".
    const auto number = [](const std::string& text, uint64_t max) -> std::optional<uint64_t> {
        uint64_t value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error != std::errc() || end != text.data() + text.size() || value > max)
            return std::nullopt;
        return value;
    };
    if (kind == "write-bit" || kind == "requant-bit") {
        fault.kind = kind == "write-bit" ? sim::FaultOptions::Kind::kStuckWriteBit
                                         : sim::FaultOptions::Kind::kStuckRequantBit;
        const size_t equals = arg.find('=');
        const std::string value = equals == std::string::npos ? "" : arg.substr(equals + 1);
        const auto bit = number(arg.substr(0, equals), 8 * npu::kDramBusBytes - 1);
        if (bit && (equals == std::string::npos || value == "0" || value == "1")) {
            fault.bit = static_cast<uint32_t>(*bit);
            if (equals != std::string::npos) fault.value = value == "1";
            return fault;
        }
    } else if (kind == "drop-write-beat") {
        fault.kind = sim::FaultOptions::Kind::kDropWriteBeat;
        if (const auto beat = number(arg, std::numeric_limits<uint64_t>::max())) {
            fault.beat = *beat;
            return fault;
        }
    }
    return invalidArgument("bad --fault '", spec,
                           "': expected write-bit:N[=0|1] or requant-bit:N[=0|1] (N < ",
                           8 * npu::kDramBusBytes, ") or drop-write-beat:N (N from 0)");
}

}  // namespace nncosim
