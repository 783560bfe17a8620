// The regression runner behind `nncosim regress`: expands suites (CTS files, model files,
// random constrained tests) into work items with stable ids, shards them across machines, runs
// them in worker processes (one crash or hang fails one item, not the run) and gathers results
// for the JUnit file and the report (RegressReport.h).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/Status.h"
#include "testbench/Coverage.h"
#include "testbench/CtsRunner.h"

namespace nncosim {

enum class RegressKind {
    kCts,     ///< a CTS test, judged by its expected outputs (runCtsTest)
    kModel,   ///< a model run on the backend and compared with the golden
    kRandom,  ///< a random constrained test (RegressRandom.h), compared with the golden
};
const char* kindName(RegressKind kind);

/// A work item. Its id is also a suite token that selects exactly this item:
/// "FILE#TEST" (kCts), "model:FILE#TEST" (kModel) or "random@SEED" (kRandom; a test aimed at
/// a coverage point is "random@SEED:TARGET").
struct RegressItem {
    std::string id;
    RegressKind kind = RegressKind::kCts;
    std::string file;
    std::string test;
    uint32_t seed = 0;   ///< kRandom
    std::string target;  ///< kRandom: the coverage point aimed at (RegressRandom.h), or empty
};

/// Parses an item id; fails with INVALID_ARGUMENT naming it when malformed.
Result<RegressItem> parseItemId(const std::string& id);

/// The item ids of suite tokens, sorted and without duplicates. A token is a CTS JSON file or a
/// folder of them (every test is a kCts item; `.tflite` files found are kModel items),
/// "model:PATH" (every test of the `.json`/`.tflite` files at PATH is a kModel item),
/// "random:N" (N random tests seeded from `seed`), or an item id. `randomCount` adds that many
/// random tests, as "random:N" does. With `targets` (coverage points, randomTestTargets()), the
/// random tests aim at them in turn. Fails naming a token that is neither.
Result<std::vector<std::string>> expandSuite(const std::vector<std::string>& tokens, uint32_t seed,
                                             uint32_t randomCount = 0,
                                             const std::vector<std::string>& targets = {});

/// The ids of shard `index` of `count` (0 <= index < count): position i of the sorted ids when
/// i % count == index, so shards are disjoint, cover every id and agree across machines.
std::vector<std::string> selectShard(std::vector<std::string> ids, uint32_t index, uint32_t count);

/// What the NPU did for one operation of a model or random item.
struct LayerFigures {
    uint32_t operation = 0;  ///< main-graph operation index
    std::string type;        ///< its OperationType name
    uint64_t cycles = 0;
    uint64_t macs = 0;
    uint64_t dmaBytes = 0;  ///< read and written
    double utilization = 0.0;
};

struct ItemResult {
    std::string id;
    RegressKind kind = RegressKind::kCts;
    Verdict verdict = Verdict::FAILED;
    std::string message;  ///< why it failed or is unsupported
    double seconds = 0.0;
    std::vector<std::string> operations;  ///< operation types it exercises
    std::optional<uint32_t>
        seed;                 ///< random tests: their seed; models: the inputs' seed when drawn
    std::string description;  ///< random tests: what was drawn
    std::string name;         ///< kModel: the test (model) name
    std::vector<LayerFigures> layers;  ///< operations that ran on the NPU, when it reported them
    uint64_t npuCycles = 0;            ///< every NPU job of the item
    std::string divergence;            ///< failures: the first diverging operation, when found
    std::string waves;                 ///< failures: the waves of that operation (FST), when dumped
    std::string wavesSave;             ///< their GTKWave save file
    std::string wavesPicture;          ///< a PNG of the window, when GTKWave could render it
    std::string reproducer;            ///< the diverging operation alone as a model file
    std::string log;                   ///< failed items: the end of the worker's output
    std::string shard;                 ///< "I/N" of the shard that ran it, when sharded
};

nlohmann::json toJson(const ItemResult& result);
Result<ItemResult> itemResultFromJson(const nlohmann::json& json);

/// How a worker process runs items.
struct WorkerOptions {
    std::string backend = "golden";  ///< golden, npu or auto
    std::string npu = "rtl";         ///< rtl or func: what implements the NPU (--npu)
    uint32_t seed = 1;               ///< the run's seed (model items draw missing inputs from it)
    /// NPU sampling period for per-operation figures (NpuProfiler); 0: per job only.
    uint64_t profileSampleCycles = 256;
    std::string
        fault;  ///< an NPU fault to inject (ModelRun.h's parseFaultSpec), for proving the flow
    std::string wavesDir;  ///< where failures dump the waves of their first diverging operation
    std::string crashOn;   ///< test hook: abort() when asked to run this id
    std::string hangOn;    ///< test hook: never return from this id
};

/// Runs items one after another in this process (the worker side; keeps the last file read).
class ItemRunner {
  public:
    explicit ItemRunner(WorkerOptions options);
    ~ItemRunner();
    ItemResult run(const std::string& id);

  private:
    struct State;
    std::unique_ptr<State> mState;
};

/// The worker loop: reads one item id per line from `inFd`, writes one JSON result per line to
/// `resultFd`; returns 0 at end of input, 1 when the result pipe breaks.
int runRegressWorker(const WorkerOptions& options, int inFd, int resultFd);

/// The worker subcommand the parent spawns (hidden from the CLI's help), and the descriptor it
/// writes results to (its stdout and stderr are the item's log).
inline constexpr const char* kRegressWorkerCommand = "regress-worker";
inline constexpr int kRegressResultFd = 3;

struct RegressOptions {
    std::vector<std::string> suite;
    unsigned jobs = 1;
    uint32_t shardIndex = 0;
    uint32_t shardCount = 1;
    WorkerOptions worker;
    uint32_t random = 0;                     ///< extra random tests (--random N)
    std::vector<std::string> randomTargets;  ///< coverage points the random tests aim at
    double timeoutSeconds = 900;             ///< per item; 0: none
    std::string executable;                  ///< the nncosim binary the workers run
    std::string program = "nncosim";         ///< how re-run commands name the binary
    bool progressBar = false;  ///< redraw one progress line (a terminal); else plain lines
};

struct RegressRun {
    RegressOptions options;
    std::vector<ItemResult> results;  ///< in item id order
    double seconds = 0.0;
    unsigned workers = 0;  ///< worker processes used (at most one per item)
    size_t passed = 0, failed = 0, unsupported = 0;
    /// RTL coverage merged from the run's workers (regress --coverage), for the report.
    std::optional<CoverageSummary> coverage;
    bool ok() const { return failed == 0; }
};

/// Expands and shards the suite, then runs every item in `options.jobs` worker processes. A
/// worker that crashes or exceeds the timeout fails its item (with the signal or exit status
/// and the end of its output) and is replaced. Prints each failure with its re-run command as
/// it happens to `out`, and progress to `progress`. Fails only when the suite cannot be
/// expanded or no worker can be started.
Result<RegressRun> runRegression(const RegressOptions& options, std::ostream& out,
                                 std::ostream& progress);

/// `word` as one shell word: unchanged when it holds only safe characters, else single-quoted.
std::string shellQuote(const std::string& word);

/// The command line that runs item `id` alone with the same backend, seed and timeout.
std::string rerunCommand(const RegressOptions& options, const std::string& id);

}  // namespace nncosim
