// Work items of the regression: suite expansion, sharding, result records and the worker side
// that runs one item at a time.
#include "testbench/Regress.h"

#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "model/Validation.h"
#include "testbench/Backend.h"
#include "testbench/ModelFiles.h"
#include "testbench/ModelRun.h"
#include "testbench/RegressProtocol.h"
#include "testbench/RegressRandom.h"
#include "testbench/runtime/HostRuntime.h"

namespace nncosim {
namespace {

constexpr const char* kModelPrefix = "model:";
constexpr const char* kRandomCountPrefix = "random:";
constexpr const char* kRandomSeedPrefix = "random@";

bool startsWith(const std::string& s, const std::string& prefix) {
    return s.compare(0, prefix.size(), prefix) == 0;
}

Result<uint32_t> parseUint32(const std::string& text, const std::string& what) {
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno != 0 || v > 0xffffffffull || text[0] == '-')
        return invalidArgument(what, ": '", text, "' is not a number from 0 to 4294967295");
    return static_cast<uint32_t>(v);
}

std::string ctsId(const std::string& file, const std::string& test) {
    return file + "#" + test;
}
std::string modelId(const std::string& file, const std::string& test) {
    return kModelPrefix + ctsId(file, test);
}
std::string randomId(uint32_t seed, const std::string& target) {
    return kRandomSeedPrefix + std::to_string(seed) + (target.empty() ? "" : ":" + target);
}

bool isTflite(const std::string& path) {
    return std::filesystem::path(path).extension() == ".tflite";
}

/// Adds the items of every model file under `path`.
Status addFiles(const std::string& path, bool asModels, std::set<std::string>& ids) {
    auto files = findModelFiles({path});
    if (!files) return files.status();
    for (const std::string& file : *files) {
        if (isTflite(file)) {
            // loadModelFile names a .tflite's only test after the file.
            ids.insert(modelId(file, std::filesystem::path(file).stem().string()));
            continue;
        }
        auto cts = readCtsFile(file);
        if (!cts) return cts.status();
        std::set<std::string> names;
        for (const CtsTest& test : cts->tests) {
            // An item is FILE#TEST: a name must say which test it is, and only one.
            if (test.name.find('#') != std::string::npos)
                return invalidArgument(file, ": test '", test.name,
                                       "': a name with '#' cannot be a regression item");
            if (!names.insert(test.name).second)
                return invalidArgument(file, ": two tests are named '", test.name,
                                       "': a regression item must name one test");
            ids.insert(asModels ? modelId(file, test.name) : ctsId(file, test.name));
        }
    }
    return okStatus();
}

/// FNV-1a: a hash of the id that is the same on every machine (std::hash need not be).
uint32_t stableHash(const std::string& s) {
    uint32_t h = 2166136261u;
    for (unsigned char c : s) h = (h ^ c) * 16777619u;
    return h;
}

std::vector<std::string> operationNames(const Model& model) {
    std::vector<std::string> names;
    for (const Operation& op : model.main.operations) {
        const std::string name = nameOf(op.type);
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
    return names;
}

std::unique_ptr<Backend> makeBackendNamed(const std::string& name) {
    if (name == "npu") return makeNpuBackend();
    if (name == "auto") return makeAutoBackend();
    return makeGoldenBackend();
}

}  // namespace

const char* kindName(RegressKind kind) {
    switch (kind) {
        case RegressKind::kCts:
            return "cts";
        case RegressKind::kModel:
            return "model";
        case RegressKind::kRandom:
            return "random";
    }
    return "?";
}

Result<RegressItem> parseItemId(const std::string& id) {
    RegressItem item;
    item.id = id;
    if (startsWith(id, kRandomSeedPrefix)) {
        const std::string rest = id.substr(std::strlen(kRandomSeedPrefix));
        const size_t colon = rest.find(':');
        auto seed = parseUint32(rest.substr(0, colon), "random test seed");
        if (!seed) return seed.status();
        item.kind = RegressKind::kRandom;
        item.seed = *seed;
        if (colon != std::string::npos) {
            item.target = rest.substr(colon + 1);
            if (!isRandomTestTarget(item.target))
                return invalidArgument("'", id, "': '", item.target,
                                       "' is not a coverage point a random test can aim at");
        }
        return item;
    }
    std::string rest = id;
    if (startsWith(id, kModelPrefix)) {
        item.kind = RegressKind::kModel;
        rest = id.substr(std::strlen(kModelPrefix));
    }
    const size_t hash = rest.rfind('#');
    if (hash == std::string::npos || hash == 0 || hash + 1 == rest.size())
        return invalidArgument("'", id,
                               "' is not an item id (FILE#TEST, model:FILE#TEST or random@SEED)");
    item.file = rest.substr(0, hash);
    item.test = rest.substr(hash + 1);
    return item;
}

Result<std::vector<std::string>> expandSuite(const std::vector<std::string>& tokens, uint32_t seed,
                                             uint32_t randomCount,
                                             const std::vector<std::string>& targets) {
    std::set<std::string> ids;
    auto addRandom = [&](uint32_t count) {
        for (uint32_t i = 0; i < count; ++i)
            ids.insert(randomId(randomTestSeed(seed, i),
                                targets.empty() ? "" : targets[i % targets.size()]));
    };
    addRandom(randomCount);
    for (const std::string& token : tokens) {
        if (startsWith(token, kRandomCountPrefix)) {
            auto count =
                parseUint32(token.substr(std::strlen(kRandomCountPrefix)), "random test count");
            if (!count) return count.status();
            addRandom(*count);
            continue;
        }
        const bool asModels = startsWith(token, kModelPrefix);
        const std::string path = asModels ? token.substr(std::strlen(kModelPrefix)) : token;
        std::error_code ec;
        if (!startsWith(token, kRandomSeedPrefix) && std::filesystem::exists(path, ec)) {
            NN_RETURN_IF_ERROR(addFiles(path, asModels || isTflite(path), ids));
            continue;
        }
        auto item = parseItemId(token);
        if (!item)
            return invalidArgument("'", token,
                                   "': no such file or folder, and not an item id (FILE#TEST, "
                                   "model:FILE#TEST, random@SEED or random:N)");
        if (item->kind != RegressKind::kRandom) {
            // The test must exist: a typo must not pass as an empty run.
            auto file = loadModelFile(item->file);
            if (!file) return file.status();
            const bool found = std::any_of(file->tests.begin(), file->tests.end(),
                                           [&](const CtsTest& t) { return t.name == item->test; });
            if (!found) return invalidArgument(item->file, " has no test named '", item->test, "'");
            if (item->kind == RegressKind::kCts && isTflite(item->file))
                return invalidArgument("'", token,
                                       "': .tflite files hold models: use model:", token);
        }
        ids.insert(item->id);
    }
    return std::vector<std::string>(ids.begin(), ids.end());
}

std::vector<std::string> selectShard(std::vector<std::string> ids, uint32_t index, uint32_t count) {
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    std::vector<std::string> shard;
    for (size_t i = 0; i < ids.size(); ++i) {
        if (count != 0 && i % count == index) shard.push_back(ids[i]);
    }
    return shard;
}

nlohmann::json toJson(const ItemResult& r) {
    nlohmann::json layers = nlohmann::json::array();
    for (const LayerFigures& l : r.layers) {
        layers.push_back({{"operation", l.operation},
                          {"type", l.type},
                          {"cycles", l.cycles},
                          {"macs", l.macs},
                          {"dma_bytes", l.dmaBytes},
                          {"utilization", l.utilization}});
    }
    nlohmann::json j = {{"id", r.id},
                        {"kind", kindName(r.kind)},
                        {"verdict", verdictName(r.verdict)},
                        {"message", r.message},
                        {"seconds", r.seconds},
                        {"operations", r.operations},
                        {"description", r.description},
                        {"name", r.name},
                        {"layers", layers},
                        {"npu_cycles", r.npuCycles},
                        {"divergence", r.divergence},
                        {"waves", r.waves},
                        {"waves_save", r.wavesSave},
                        {"waves_picture", r.wavesPicture},
                        {"reproducer", r.reproducer},
                        {"log", r.log}};
    if (r.seed) j["seed"] = *r.seed;
    if (!r.shard.empty()) j["shard"] = r.shard;
    return j;
}

Result<ItemResult> itemResultFromJson(const nlohmann::json& j) {
    try {
        ItemResult r;
        r.id = j.at("id").get<std::string>();
        const std::string kind = j.at("kind").get<std::string>();
        r.kind = kind == "model"    ? RegressKind::kModel
                 : kind == "random" ? RegressKind::kRandom
                                    : RegressKind::kCts;
        r.verdict = verdictFromName(j.at("verdict").get<std::string>());
        r.message = j.at("message").get<std::string>();
        r.seconds = j.at("seconds").get<double>();
        r.operations = j.at("operations").get<std::vector<std::string>>();
        r.description = j.at("description").get<std::string>();
        r.name = j.at("name").get<std::string>();
        for (const auto& l : j.at("layers")) {
            r.layers.push_back({l.at("operation").get<uint32_t>(), l.at("type").get<std::string>(),
                                l.at("cycles").get<uint64_t>(), l.at("macs").get<uint64_t>(),
                                l.at("dma_bytes").get<uint64_t>(),
                                l.at("utilization").get<double>()});
        }
        r.npuCycles = j.at("npu_cycles").get<uint64_t>();
        r.divergence = j.at("divergence").get<std::string>();
        r.waves = j.at("waves").get<std::string>();
        r.wavesSave = j.at("waves_save").get<std::string>();
        r.wavesPicture = j.at("waves_picture").get<std::string>();
        r.reproducer = j.at("reproducer").get<std::string>();
        r.log = j.at("log").get<std::string>();
        if (j.contains("seed")) r.seed = j.at("seed").get<uint32_t>();
        if (j.contains("shard")) r.shard = j.at("shard").get<std::string>();
        return r;
    } catch (const nlohmann::json::exception& e) {
        return invalidArgument("malformed item result: ", e.what());
    }
}

struct ItemRunner::State {
    WorkerOptions options;
    std::unique_ptr<Backend> backend;
    std::optional<CtsFile> file;  // the last file read: items of one file arrive together
    Status setupError = okStatus();

    Result<const CtsTest*> findTest(const RegressItem& item) {
        if (!file || file->path != item.file) {
            file.reset();
            auto loaded = loadModelFile(item.file);
            if (!loaded) return loaded.status();
            file = std::move(*loaded);
            file->path = item.file;
        }
        return selectTest(*file, item.test);
    }

    /// The directory for the waves of item `id` (empty when none are asked for).
    std::string wavesDirFor(const std::string& id) const {
        if (options.wavesDir.empty()) return {};
        std::string name;
        for (char c : id.substr(id.find_last_of("/#") + 1))
            name += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' ? c : '_';
        if (startsWith(id, kRandomSeedPrefix)) {
            name = "random_" + id.substr(std::strlen(kRandomSeedPrefix));
            std::replace(name.begin(), name.end(), ':', '_');
        }
        return (std::filesystem::path(options.wavesDir) / name).string();
    }

    /// Runs `model` on the backend through the host runtime (which reports the NPU's figures)
    /// and compares every output with the golden: quantized outputs identical, floats by the
    /// float rule. On a mismatch, names the first diverging operation and dumps its waves when
    /// asked (ModelRun.h).
    void checkAgainstGolden(const std::string& name, const Model& model,
                            const std::vector<TensorData>& inputs, ItemResult& r) {
        r.operations = operationNames(model);
        if (auto level = validateModel(model); !level) {
            r.message = "invalid model: " + level.status().message;
            return;
        }
        RunOptions run = runOptions(r.id);
        if (options.backend == "npu") {
            auto supported = backend->supportsModel(model);
            if (!supported) {
                r.message = "the driver rejects the model: " + supported.status().message;
                return;
            }
            if (!*supported) {
                r.verdict = Verdict::UNSUPPORTED;
                r.message = "npu does not support every operation of the model";
                return;
            }
        }
        auto report = runModel(name, model, inputs, run);
        if (!report) {
            r.message = nameOf(report.status().code) + ": " + report.status().message;
            return;
        }
        collectLayers(model, report->record, r);
        if (report->passed()) {
            r.verdict = Verdict::PASSED;
            return;
        }
        for (const TensorCheck& c : report->outputs) {
            if (c.ok()) continue;
            r.message = c.role + (c.shape != c.goldenShape
                                      ? " has shape " + toString(c.shape) + ", the golden's is " +
                                            toString(c.goldenShape)
                                      : " differs from the golden: " + c.comparison->describe());
            break;
        }
        describeDivergence(*report, r);
    }

    /// A failed CTS test run again against the golden on the same inputs: is the device at
    /// fault, and where does it diverge first?
    void diagnoseCts(const CtsTest& test, ItemResult& r) {
        if (options.backend == "golden" || test.expectFailure ||
            test.inputs.size() != test.model.main.inputIndexes.size())
            return;
        auto report = runModel(test.name, test.model, test.inputs, runOptions(r.id));
        if (!report) return;
        if (report->passed()) {
            r.message += " (the device matches the golden on these inputs)";
            return;
        }
        describeDivergence(*report, r);
    }

    /// The NPU's counters now; none on the golden backend.
    std::optional<driver::PerformanceCounters> deviceCounters() const {
        if (options.backend == "golden") return std::nullopt;
        auto npu = openNpu();
        if (!npu) return std::nullopt;
        return (*npu)->hardware->performanceCounters();
    }

    /// A CTS item's device time: the NPU's busy cycles over all its runs (the test and its
    /// variants), and, for a test of one operation, that operation as its one layer.
    void collectDeviceTime(const CtsTest& test, const driver::PerformanceCounters& before,
                           ItemResult& r) const {
        const auto after = deviceCounters();
        if (!after) return;
        NpuCounters used;
        used.cycles = after->busyCycles - before.busyCycles;
        used.macs = after->macs - before.macs;
        used.dmaBytesRead = after->dmaBytesRead - before.dmaBytesRead;
        used.dmaBytesWritten = after->dmaBytesWritten - before.dmaBytesWritten;
        r.npuCycles = used.cycles;
        const auto& operations = test.model.main.operations;
        if (operations.size() == 1 && used.cycles > 0)
            r.layers.push_back({0, nameOf(operations[0].type), used.cycles, used.macs,
                                used.dmaBytesRead + used.dmaBytesWritten, used.utilization()});
    }

    RunOptions runOptions(const std::string& id) const {
        RunOptions run;
        run.placement = options.backend == "golden" ? Placement::kGolden
                        : options.backend == "npu"  ? Placement::kNpu
                                                    : Placement::kAuto;
        run.sampleCycles = options.profileSampleCycles;
        run.wavesDir = wavesDirFor(id);
        if (!options.fault.empty()) run.childArgs = {"--fault", options.fault};
        return run;
    }

    static void describeDivergence(const RunReport& report, ItemResult& r) {
        if (!report.divergence) {
            if (!report.divergenceNote.empty())
                r.message += "; no first divergence found: " + report.divergenceNote;
            return;
        }
        const Divergence& d = *report.divergence;
        r.divergence = "operation " + std::to_string(d.operation) + " " + nameOf(d.type) +
                       " on the " + (d.npu ? "NPU" : "CPU");
        r.message += "; first divergence: " + r.divergence;
        if (!report.waves) return;
        if (!report.waves->error.empty()) {
            r.message += "; no waves: " + report.waves->error;
            return;
        }
        r.waves = report.waves->fst;
        r.wavesSave = report.waves->gtkw;
        r.wavesPicture = report.waves->png;
        r.reproducer = report.waves->model;
        r.message += "; waves: " + r.waves;
    }

    /// Per-operation NPU figures: sampled shares, or a whole job when it held one operation.
    /// Operations fused on the device are one layer, named by their types joined with '+'.
    static void collectLayers(const Model& model, const ExecutionRecord& record, ItemResult& r) {
        r.npuCycles = record.npuCycles;
        std::map<uint32_t, std::string> fusedNames;
        std::map<uint32_t, NpuCounters> fusedShares;  // e.g. weight copies tagged with the first
        for (const OperationRecord& op : record.operations) {
            if (!op.fusedInto) continue;
            fusedNames[*op.fusedInto] += std::string(nameOf(op.type)) + "+";
            if (op.counters) fusedShares[*op.fusedInto].add(*op.counters);
        }
        for (const OperationRecord& op : record.operations) {
            if (!op.npu || op.fusedInto) continue;
            std::optional<NpuCounters> counters = op.counters;
            const PartitionRecord& partition = record.partitions.at(op.partition);
            if (!counters && partition.job) {
                // A job of one operation is all its own; a sampled job gave this operation no
                // share when it ran between two samples.
                if (partition.operations.size() == 1)
                    counters = partition.job->total;
                else if (!partition.job->byTag.empty())
                    counters = NpuCounters{};
            }
            if (!counters) continue;
            if (auto it = fusedShares.find(op.index); it != fusedShares.end())
                counters->add(it->second);
            r.layers.push_back(
                {op.index, fusedNames[op.index] + nameOf(model.main.operations[op.index].type),
                 counters->cycles, counters->macs,
                 counters->dmaBytesRead + counters->dmaBytesWritten, counters->utilization()});
        }
    }
};

ItemRunner::ItemRunner(WorkerOptions options) : mState(std::make_unique<State>()) {
    mState->options = std::move(options);
    mState->backend = makeBackendNamed(mState->options.backend);
    if (mState->options.backend != "golden") {
        // The process's platform takes its implementation and fault when it is created, before
        // any item opens it.
        sim::PlatformConfig platform;
        platform.npu = sim::npuImplementationFromName(mState->options.npu)
                           .value_or(sim::NpuImplementation::kRtl);
        if (!mState->options.fault.empty()) {
            auto fault = parseFaultSpec(mState->options.fault);
            if (!fault) {
                mState->setupError = fault.status();
                return;
            }
            platform.fault = *fault;
        }
        if (auto npu = openNpu(platform); !npu) mState->setupError = npu.status();
    }
}

ItemRunner::~ItemRunner() = default;

ItemResult ItemRunner::run(const std::string& id) {
    const auto start = std::chrono::steady_clock::now();
    ItemResult r;
    r.id = id;
    if (id == mState->options.crashOn) std::abort();
    if (id == mState->options.hangOn) {
        for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
    }
    auto item = parseItemId(id);
    if (!item) {
        r.message = item.status().message;
        return r;
    }
    r.kind = item->kind;
    if (!mState->setupError.ok()) {
        r.message = "cannot set up the NPU: " + mState->setupError.message;
        return r;
    }
    try {
        if (item->kind == RegressKind::kRandom) {
            RandomTest test = makeRandomTest(item->seed, item->target);
            r.seed = item->seed;
            r.description = test.description;
            mState->checkAgainstGolden("random_" + std::to_string(item->seed), test.model,
                                       test.inputs, r);
        } else if (auto test = mState->findTest(*item); !test) {
            r.message = test.status().message;
        } else if (item->kind == RegressKind::kCts) {
            const std::optional<driver::PerformanceCounters> before = mState->deviceCounters();
            CtsTestResult cts = runCtsTest(*mState->backend, **test, item->file);
            r.verdict = cts.verdict;
            r.message = cts.message;
            for (OperationType op : cts.operations) r.operations.push_back(nameOf(op));
            if (before) mState->collectDeviceTime(**test, *before, r);
            if (r.verdict == Verdict::FAILED) mState->diagnoseCts(**test, r);
        } else {
            const CtsTest& model = **test;
            r.name = model.name;
            std::vector<TensorData> inputs = model.inputs;
            if (inputs.size() != model.model.main.inputIndexes.size()) {
                // Models without input values (every .tflite) run on inputs drawn from the
                // run's seed and the id, so a re-run with the same --seed sees the same values.
                r.seed = mState->options.seed ^ stableHash(id);
                auto drawn = randomModelInputs(model.model, *r.seed);
                if (!drawn) {
                    r.message = drawn.status().message;
                    r.seconds =
                        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                            .count();
                    return r;
                }
                inputs = std::move(*drawn);
            }
            mState->checkAgainstGolden(model.name, model.model, inputs, r);
        }
    } catch (const std::exception& e) {
        r.verdict = Verdict::FAILED;
        r.message = std::string("exception: ") + e.what();
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
}

int runRegressWorker(const WorkerOptions& options, int inFd, int resultFd) {
    // Do not outlive the parent that reads the results; SIGTERM so that this process ends its
    // own children first (sim::endChildrenOnTermination).
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    ItemRunner runner(options);
    std::string pending;
    char buffer[4096];
    for (;;) {
        const size_t newline = pending.find('\n');
        if (newline == std::string::npos) {
            const ssize_t n = ::read(inFd, buffer, sizeof(buffer));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return 0;
            pending.append(buffer, static_cast<size_t>(n));
            continue;
        }
        const std::optional<std::string> id = decodeItemCommand(pending.substr(0, newline));
        pending.erase(0, newline + 1);
        if (!id) return 1;  // not the parent's protocol: the parent fails the item
        // Logs may hold bytes that are not UTF-8: replaced, never a throw.
        const std::string line =
            toJson(runner.run(*id)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
            "\n";
        for (size_t written = 0; written < line.size();) {
            const ssize_t n = ::write(resultFd, line.data() + written, line.size() - written);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return 1;
            written += static_cast<size_t>(n);
        }
    }
}

}  // namespace nncosim
