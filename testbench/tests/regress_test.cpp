// The regression runner: deterministic sharding, random tests rebuilt from their seeds, crashes
// and hangs contained in their worker processes, and the JUnit and report files.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "driver/Compiler.h"
#include "golden/Executor.h"
#include "model/Builder.h"
#include "model/ModelJson.h"
#include "model/Validation.h"
#include "testbench/Regress.h"
#include "testbench/RegressProtocol.h"
#include "testbench/RegressRandom.h"
#include "testbench/RegressReport.h"

using namespace nncosim;
namespace fs = std::filesystem;

namespace {

const std::string kCtsDir = NNCOSIM_CTS_DIR;
const std::string kAddFile = kCtsDir + "/V1_0/add.json";
// Float FLOOR: not an NPU operation.
const std::string kFloorFile = kCtsDir + "/V1_0/floor.json";

fs::path freshDir(const std::string& name) {
    const fs::path dir =
        fs::temp_directory_path() / ("nncosim_regress_" + name + "_" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

RegressOptions options(std::vector<std::string> suite, const std::string& backend = "golden") {
    RegressOptions o;
    o.suite = std::move(suite);
    o.jobs = 2;
    o.executable = NNCOSIM_BINARY;
    o.worker.backend = backend;
    return o;
}

std::string readText(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

const ItemResult& resultOf(const RegressRun& run, const std::string& id) {
    auto it = std::find_if(run.results.begin(), run.results.end(),
                           [&](const ItemResult& r) { return r.id == id; });
    REQUIRE(it != run.results.end());
    return *it;
}

std::string randomJson(const RandomTest& t) {
    CtsTest test;
    test.name = "random";
    test.model = t.model;
    test.inputs = t.inputs;
    auto json = toCtsJson(test);
    INFO(t.description);
    REQUIRE(json.ok());
    return *json;
}

/// A quant8 CONV_2D followed by a MAX_POOL_2D, with its inputs, as a model file.
fs::path writeTwoLayerModel(const fs::path& dir) {
    ModelBuilder b;
    const auto type = OperandType::TENSOR_QUANT8_ASYMM;
    const uint32_t in = b.addInput(type, {1, 8, 8, 4}, 0.05f, 128);
    std::vector<uint8_t> weights(8 * 3 * 3 * 4);
    for (size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<uint8_t>((i * 37) % 251);
    const uint32_t filter = b.addConstant(type, {8, 3, 3, 4}, weights, 0.01f, 120);
    const uint32_t bias =
        b.addConstant(OperandType::TENSOR_INT32, {8}, std::vector<int32_t>(8, 100), 0.0005f, 0);
    const uint32_t conv = b.addOperand(type, {1, 8, 8, 8}, 0.2f, 100);
    b.addOperation(OperationType::CONV_2D,
                   {in, filter, bias, b.addInt32(1), b.addInt32(1), b.addInt32(1), b.addInt32(1)},
                   {conv});
    const uint32_t out = b.addOutput(type, {1, 4, 4, 8}, 0.2f, 100);
    b.addOperation(OperationType::MAX_POOL_2D,
                   {conv, b.addInt32(2), b.addInt32(2), b.addInt32(2), b.addInt32(2), b.addInt32(2),
                    b.addInt32(0)},
                   {out});
    CtsTest test;
    test.name = "conv_pool";
    test.model = b.build();
    TensorData input;
    input.dimensions = {1, 8, 8, 4};
    for (int i = 0; i < 256; ++i) input.bytes.push_back(static_cast<uint8_t>(i * 13));
    test.inputs = {input};
    const fs::path path = dir / "conv_pool.json";
    REQUIRE(writeCtsFile(path.string(), test).ok());
    return path;
}

}  // namespace

TEST_CASE("regress_shard_partition") {
    auto ids = expandSuite({kCtsDir + "/V1_0", "random:40"}, 7);
    INFO(ids.status().message);
    REQUIRE(ids.ok());
    REQUIRE(ids->size() > 300);
    CHECK(std::is_sorted(ids->begin(), ids->end()));
    const std::set<std::string> all(ids->begin(), ids->end());
    CHECK(all.size() == ids->size());
    for (uint32_t count : {1u, 2u, 3u, 5u, 8u}) {
        std::set<std::string> seen;
        for (uint32_t index = 0; index < count; ++index) {
            const std::vector<std::string> shard = selectShard(*ids, index, count);
            // Balanced to one item, and disjoint from every other shard.
            CHECK(shard.size() >= ids->size() / count);
            CHECK(shard.size() <= ids->size() / count + 1);
            for (const std::string& id : shard)
                CHECK_MESSAGE(seen.insert(id).second, id, " in two shards");
        }
        CHECK(seen == all);
    }
    // Every machine computes the same shards, whatever order it listed the items in.
    std::vector<std::string> reversed(ids->rbegin(), ids->rend());
    CHECK(selectShard(reversed, 1, 3) == selectShard(*ids, 1, 3));
    auto again = expandSuite({"random:40", kCtsDir + "/V1_0"}, 7);
    REQUIRE(again.ok());
    CHECK(*again == *ids);
}

TEST_CASE("regress_item_ids") {
    auto cts = parseItemId(kAddFile + "#add");
    REQUIRE(cts.ok());
    CHECK(cts->kind == RegressKind::kCts);
    CHECK(cts->file == kAddFile);
    CHECK(cts->test == "add");
    auto model = parseItemId("model:" + kAddFile + "#add_all_inputs_as_internal");
    REQUIRE(model.ok());
    CHECK(model->kind == RegressKind::kModel);
    CHECK(model->test == "add_all_inputs_as_internal");
    auto random = parseItemId("random@4294967295");
    REQUIRE(random.ok());
    CHECK(random->kind == RegressKind::kRandom);
    CHECK(random->seed == 4294967295u);
    CHECK_FALSE(parseItemId("random@4294967296").ok());
    CHECK_FALSE(parseItemId("random@-1").ok());
    CHECK_FALSE(parseItemId("no-test-name").ok());

    // Ids are suite tokens; a file's tests and model: files expand to their kinds.
    auto one = expandSuite({kAddFile + "#add"}, 1);
    REQUIRE(one.ok());
    CHECK(*one == std::vector<std::string>{kAddFile + "#add"});
    auto file = expandSuite({kAddFile, "model:" + kAddFile}, 1);
    REQUIRE(file.ok());
    CHECK(*file == std::vector<std::string>{kAddFile + "#add",
                                            kAddFile + "#add_all_inputs_as_internal",
                                            "model:" + kAddFile + "#add",
                                            "model:" + kAddFile + "#add_all_inputs_as_internal"});
    CHECK_FALSE(expandSuite({kAddFile + "#no_such_test"}, 1).ok());
    CHECK_FALSE(expandSuite({"/no/such/path.json"}, 1).ok());
    CHECK_FALSE(expandSuite({"random:many"}, 1).ok());
}

TEST_CASE("regress_random_reproducible") {
    std::set<OperationType> operations;
    size_t chains = 0;
    std::set<OperandType> types;
    size_t varied = 0, perChannel = 0;
    constexpr uint32_t kTests = 150;
    for (uint32_t i = 0; i < kTests; ++i) {
        const uint32_t seed = randomTestSeed(11, i);
        CHECK(seed == randomTestSeed(11, i));
        const RandomTest a = makeRandomTest(seed);
        const RandomTest b = makeRandomTest(seed);
        INFO("seed ", seed, ": ", a.description);
        CHECK(a.seed == seed);
        CHECK(a.description == b.description);
        CHECK(randomJson(a) == randomJson(b));  // model, constants and inputs alike

        auto level = validateModel(a.model);
        INFO(level.status().message);
        REQUIRE(level.ok());
        auto outputs = golden::execute(a.model, a.inputs);
        INFO(outputs.status().message);
        REQUIRE(outputs.ok());
        const std::vector<uint8_t>& bytes = outputs->front().bytes;
        varied += std::set<uint8_t>(bytes.begin(), bytes.end()).size() > 1;
        operations.insert(a.operations.begin(), a.operations.end());
        chains += a.operations.size() > 1;
        types.insert(a.model.main.operands[a.model.main.inputIndexes[0]].type);
        perChannel += a.description.find("per-channel") != std::string::npos;
    }
    CHECK(operations.size() == 10);  // the seven, and LOGISTIC, TANH and HARD_SWISH
    CHECK(chains > kTests / 5);
    CHECK(types == std::set<OperandType>{OperandType::TENSOR_QUANT8_ASYMM,
                                         OperandType::TENSOR_QUANT8_ASYMM_SIGNED});
    CHECK(perChannel > 0);
    // Outputs that are not one saturated value: the tests check arithmetic, not clamping.
    CHECK(varied > kTests * 3 / 4);
    CHECK(randomTestSeed(11, 0) != randomTestSeed(12, 0));

    // The id carries the seed: running it again rebuilds the same test.
    const std::string id = "random@" + std::to_string(randomTestSeed(11, 3));
    ItemRunner runner(WorkerOptions{});
    const ItemResult first = runner.run(id);
    const ItemResult second = runner.run(id);
    CHECK(first.verdict == Verdict::PASSED);
    CHECK(first.description == makeRandomTest(randomTestSeed(11, 3)).description);
    CHECK(second.description == first.description);
    REQUIRE(first.seed.has_value());
    CHECK(*first.seed == randomTestSeed(11, 3));
}

namespace {

/// Whether a program's descriptors hit functional coverage point `point`: a C++ mirror of the
/// `cover property` conditions of rtl/npu_cmd.sv, so that this test needs no coverage build.
bool hitsPoint(const std::vector<npu::Descriptor>& ds, const std::string& point) {
    using npu::Opcode;
    static const std::map<std::string, Opcode> kOpcodes = {
        {"conv", Opcode::CONV},       {"dwconv", Opcode::DWCONV}, {"maxpool", Opcode::MAXPOOL},
        {"avgpool", Opcode::AVGPOOL}, {"add", Opcode::ADD},       {"mul", Opcode::MUL},
        {"lut", Opcode::LUT}};
    const auto has = [](const npu::Descriptor& d, npu::DescFlag f) {
        return (d.flags & static_cast<uint32_t>(f)) != 0;
    };
    const size_t sep = point.find('_');
    const Opcode op = kOpcodes.at(point.substr(0, sep));
    const std::string what = point.substr(sep + 1);
    for (size_t i = 0; i < ds.size(); ++i) {
        const npu::Descriptor& d = ds[i];
        if (what.rfind("then_", 0) == 0) {
            if (i > 0 && ds[i - 1].opcode == op && d.opcode == kOpcodes.at(what.substr(5)))
                return true;
            continue;
        }
        if (d.opcode != op) continue;
        const bool hit =
            what == "accepted" || (what == "unsigned" && !d.aSigned) ||
            (what == "signed" && d.aSigned) ||
            (what == "1x1" && d.kernelW == 1 && d.kernelH == 1) ||
            (what == "3x3" && d.kernelW == 3 && d.kernelH == 3) ||
            (what == "large_kernel" && d.kernelW > 3) || (what == "strided" && d.strideW > 1) ||
            (what == "dilated" && d.dilationW > 1) ||
            (what == "padded" && d.padTop != 0 && (op != Opcode::CONV || d.padLeft != 0)) ||
            (what == "chain_in" && has(d, npu::DescFlag::CHAIN_IN)) ||
            (what == "chain_out" && has(d, npu::DescFlag::CHAIN_OUT)) ||
            (what == "taps" && has(d, npu::DescFlag::TAPS)) ||
            (what == "diagonal" && !has(d, npu::DescFlag::TAPS)) ||
            (what == "broadcast" && d.b.stride1 == 0);
        if (hit) return true;
    }
    return false;
}

}  // namespace

// Coverage-directed random: a test aimed at a point is a valid model the driver runs on the NPU
// whole, and its program hits the point (for most seeds: the compiler keeps its own choices).
TEST_CASE("regress_random_aims_hit_their_coverage_points") {
    const std::vector<std::string> targets = randomTestTargets();
    CHECK(targets.size() == 7 * 3 + 7 * 7 + 17);
    constexpr uint32_t kSeeds = 6;
    for (const std::string& target : targets) {
        uint32_t hits = 0;
        for (uint32_t i = 0; i < kSeeds; ++i) {
            const RandomTest test = makeRandomTest(randomTestSeed(3, i), target);
            INFO(target, " seed ", test.seed, ": ", test.description);
            CHECK(test.target == target);
            auto level = validateModel(test.model);
            INFO(level.status().message);
            REQUIRE(level.ok());
            for (uint32_t op = 0; op < test.model.main.operations.size(); ++op) {
                const Status supported = driver::checkOperationSupported(test.model, op);
                INFO(supported.message);
                CHECK(supported.ok());
            }
            auto program = driver::compileModel(test.model, {});
            INFO(program.status().message);
            REQUIRE(program.ok());
            hits += hitsPoint(program->descriptors, target);
        }
        INFO(target, ": ", hits, " of ", kSeeds, " seeds hit it");
        CHECK(hits * 2 > kSeeds);
    }
    CHECK(isRandomTestTarget("maxpool_then_add"));
    CHECK_FALSE(isRandomTestTarget("add_then_nop"));  // the driver never emits NOP
    auto item = parseItemId("random@12:maxpool_then_add");
    REQUIRE(item.ok());
    CHECK(item->target == "maxpool_then_add");
    CHECK_FALSE(parseItemId("random@12:no_such_point").ok());
    auto ids = expandSuite({"random:4"}, 5, 0, {"conv_strided", "add_broadcast"});
    REQUIRE(ids.ok());
    CHECK(std::count_if(ids->begin(), ids->end(), [](const std::string& id) {
              return id.find(":conv_strided") != std::string::npos;
          }) == 2);
}

TEST_CASE("regress_worker_crash_contained") {
    auto ids = expandSuite({"random:4"}, 5);
    REQUIRE(ids.ok());
    RegressOptions o = options({kAddFile, "random:4"});
    o.worker.seed = 5;
    o.worker.crashOn = (*ids)[0];
    o.worker.hangOn = (*ids)[1];
    o.timeoutSeconds = 1.0;
    std::ostringstream out, progress;
    auto run = runRegression(o, out, progress);
    INFO(out.str());
    REQUIRE(run.ok());
    REQUIRE(run->results.size() == 6);
    CHECK(run->failed == 2);
    CHECK(run->passed == 4);
    CHECK_FALSE(run->ok());

    const ItemResult& crashed = resultOf(*run, (*ids)[0]);
    CHECK(crashed.verdict == Verdict::FAILED);
    CHECK(crashed.message.find("signal 6") != std::string::npos);
    CHECK_FALSE(crashed.description.empty());  // rebuilt from the seed by the parent
    const ItemResult& hung = resultOf(*run, (*ids)[1]);
    CHECK(hung.verdict == Verdict::FAILED);
    CHECK(hung.message.find("timed out") != std::string::npos);
    // The workers that replaced them ran the rest.
    CHECK(resultOf(*run, kAddFile + "#add").verdict == Verdict::PASSED);
    CHECK(resultOf(*run, (*ids)[3]).verdict == Verdict::PASSED);

    // Each failure is printed with its seed and the command that runs it alone.
    const std::string seed = (*ids)[0].substr(std::string("random@").size());
    CHECK(out.str().find("seed: " + seed) != std::string::npos);
    CHECK(out.str().find("re-run: nncosim regress --backend golden --seed 5 --timeout 1 " +
                         (*ids)[0]) != std::string::npos);
    // Ids with characters a shell may read are quoted.
    CHECK(rerunCommand(o, kAddFile + "#add") ==
          "nncosim regress --backend golden --seed 5 --timeout 1 '" + kAddFile + "#add'");
    CHECK(progress.str().find("6/6 100%") != std::string::npos);
}

TEST_CASE("regress_reports_written") {
    const fs::path dir = freshDir("report");
    const fs::path model = writeTwoLayerModel(dir);
    RegressOptions o = options({"model:" + model.string(), kFloorFile, "random:3"}, "npu");
    o.worker.crashOn = kFloorFile + "#floor";
    std::ostringstream out, progress;
    auto run = runRegression(o, out, progress);
    INFO(out.str());
    REQUIRE(run.ok());
    REQUIRE(run->results.size() == 6);
    CHECK(run->failed == 1);
    // floor.json's float FLOOR is not an NPU operation.
    CHECK(run->unsupported == 1);
    CHECK(resultOf(*run, kFloorFile + "#floor_all_inputs_as_internal").verdict ==
          Verdict::UNSUPPORTED);

    // The model ran on the NPU with figures for both layers.
    const ItemResult& twoLayers = resultOf(*run, "model:" + model.string() + "#conv_pool");
    INFO(twoLayers.message);
    CHECK(twoLayers.verdict == Verdict::PASSED);
    REQUIRE(twoLayers.layers.size() == 2);
    CHECK(twoLayers.layers[0].type == "CONV_2D");
    CHECK(twoLayers.layers[0].macs == 8u * 8 * 8 * 3 * 3 * 4);
    CHECK(twoLayers.layers[1].cycles > 0);
    CHECK(twoLayers.npuCycles >= twoLayers.layers[0].cycles + twoLayers.layers[1].cycles);

    const fs::path junit = dir / "junit.xml";
    REQUIRE(writeRegressJUnit(junit.string(), *run).ok());
    const std::string xml = readText(junit);
    CHECK(xml.find("tests=\"6\" failures=\"1\" errors=\"0\" skipped=\"1\"") != std::string::npos);
    CHECK(xml.find("classname=\"V1_0.floor\" name=\"floor\"") != std::string::npos);
    CHECK(xml.find("re-run: nncosim regress --backend npu --seed 1 &apos;" + kFloorFile +
                   "#floor&apos;") != std::string::npos);
    CHECK(xml.find("signal 6") != std::string::npos);

    const fs::path report = dir / "report";
    REQUIRE(writeRegressReport(report.string(), *run, "nncosim regress test").ok());
    const std::string md = readText(report / "summary.md");
    CHECK(md.find("**FAILED**: 6 items: 4 passed, 1 failed, 1 unsupported") != std::string::npos);
    CHECK(md.find("## Per operation") != std::string::npos);
    CHECK(md.find("| CONV_2D |") != std::string::npos);
    CHECK(md.find("re-run: `nncosim regress --backend npu --seed 1 '" + kFloorFile + "#floor'`") !=
          std::string::npos);
    CHECK(md.find("![per-layer cycles and utilization](layers-0.svg)") != std::string::npos);
    const std::string svg = readText(report / "layers-0.svg");
    CHECK(svg.find("<svg") == 0);
    CHECK(svg.find("operation 0 CONV_2D") != std::string::npos);
    CHECK(svg.find("<polyline") != std::string::npos);
    const std::string html = readText(report / "index.html");
    CHECK(html.find("<svg") != std::string::npos);  // self-contained: the chart is inline
    CHECK(html.find("signal 6") != std::string::npos);
    auto results = nlohmann::json::parse(readText(report / "results.json"));
    CHECK(results.at("total") == 6);
    CHECK(results.at("failed") == 1);
    CHECK(results.at("items").size() == 6);
    fs::remove_all(dir);
}

TEST_CASE("regress_fault_caught_with_waves") {
    // A stuck DRAM write-data bit: the random tests must fail, each naming its operation on the
    // NPU as the first divergence and linking the waves of that operation.
    const fs::path dir = freshDir("fault");
    RegressOptions o = options({"random:4"}, "npu");
    o.worker.fault = "write-bit:3";
    o.worker.wavesDir = (dir / "waves").string();
    std::ostringstream out, progress;
    auto run = runRegression(o, out, progress);
    INFO(out.str());
    REQUIRE(run.ok());
    REQUIRE(run->failed > 0);
    for (const ItemResult& r : run->results) {
        if (r.verdict != Verdict::FAILED) continue;
        INFO(r.id, ": ", r.message);
        CHECK(r.message.find("differs from the golden") != std::string::npos);
        CHECK(r.divergence == "operation 0 " + r.operations.at(0) + " on the NPU");
        CHECK(fs::file_size(r.waves) > 0);
        CHECK(fs::exists(r.wavesSave));
        CHECK(fs::exists(r.reproducer));
        // The re-run command keeps the fault, or the failure would not reproduce.
        CHECK(rerunCommand(o, r.id).find("--fault write-bit:3") != std::string::npos);
    }
    const fs::path report = dir / "report";
    REQUIRE(writeRegressReport(report.string(), *run, "nncosim regress test").ok());
    const std::string md = readText(report / "summary.md");
    CHECK(md.find("- first divergence: operation 0 ") != std::string::npos);
    CHECK(md.find("](../waves/random_") != std::string::npos);  // relative links to the waves
    fs::remove_all(dir);
}

// Shards' reports merge into the run an unsharded regression makes, each failure's re-run line
// naming its shard; merge refuses what is not one regression's disjoint shards.
TEST_CASE("regress_merge_shards") {
    const fs::path dir = freshDir("merge");
    RegressOptions o = options({"random:4", kAddFile}, "npu");
    o.worker.npu = "func";
    o.worker.seed = 7;
    o.worker.fault = "write-bit:0=1";  // failures in both shards
    std::ostringstream out, progress;
    auto whole = runRegression(o, out, progress);
    REQUIRE(whole.ok());
    std::vector<std::string> shardDirs;
    o.shardCount = 2;
    for (o.shardIndex = 0; o.shardIndex < 2; ++o.shardIndex) {
        auto shard = runRegression(o, out, progress);
        REQUIRE(shard.ok());
        shardDirs.push_back((dir / ("shard-" + std::to_string(o.shardIndex))).string());
        REQUIRE(writeRegressReport(shardDirs.back(), *shard, "nncosim regress ...").ok());
    }

    auto merged = mergeRegressReports(shardDirs);
    REQUIRE_MESSAGE(merged.ok(), merged.status().message);
    REQUIRE(merged->results.size() == whole->results.size());
    CHECK(merged->failed == whole->failed);
    CHECK(merged->passed == whole->passed);
    CHECK(whole->failed > 1);
    for (size_t i = 0; i < whole->results.size(); ++i) {
        CHECK(merged->results[i].id == whole->results[i].id);
        CHECK(merged->results[i].verdict == whole->results[i].verdict);
        CHECK(merged->results[i].message == whole->results[i].message);
        CHECK(merged->results[i].shard == std::to_string(i % 2) + "/2");
    }
    REQUIRE(writeRegressReport((dir / "merged").string(), *merged, "nncosim regress merge").ok());
    REQUIRE(writeRegressJUnit((dir / "merged.xml").string(), *merged).ok());
    const std::string md = readText(dir / "merged" / "summary.md");
    CHECK(md.find("- re-run (shard 1/2): `") != std::string::npos);
    CHECK(md.find("--seed 7 --npu func --fault write-bit:0=1 random@") != std::string::npos);
    CHECK(readText(dir / "merged.xml").find("re-run (shard 0/2): ") != std::string::npos);

    auto twice = mergeRegressReports({shardDirs[0], shardDirs[0]});
    REQUIRE_FALSE(twice.ok());
    CHECK(twice.status().message.find("is in another directory too") != std::string::npos);
    auto none = mergeRegressReports({(dir / "nothing").string()});
    REQUIRE_FALSE(none.ok());
    CHECK(none.status().message.find("no results.json") != std::string::npos);
    o.worker.seed = 8;
    o.shardIndex = 0;
    auto other = runRegression(o, out, progress);
    REQUIRE(other.ok());
    REQUIRE(writeRegressReport((dir / "seed8").string(), *other, "nncosim regress ...").ok());
    auto mixed = mergeRegressReports({shardDirs[1], (dir / "seed8").string()});
    REQUIRE_FALSE(mixed.ok());
    CHECK(mixed.status().message.find("not one regression") != std::string::npos);
    fs::remove_all(dir);
}

TEST_CASE("regress_hostile_test_names_cannot_hide_a_failure") {
    // A passing test, one named "a\n<file>#a" (once an extra passing item injected into the
    // worker protocol) and a failing one: every failure is counted and in the JUnit file.
    const fs::path dir = freshDir("names");
    nlohmann::json file = nlohmann::json::parse(readText(kAddFile));
    const nlohmann::json good = file["tests"][0];
    const fs::path path = dir / "names.json";
    nlohmann::json injected = good, failing = good;
    injected["name"] = "a\n" + path.string() + "#a";
    failing["name"] = "b";
    for (auto& operand : failing["model"]["main"]["operands"]) {
        if (operand["lifetime"] == "SUBGRAPH_OUTPUT") operand["data"][0] = 99.5;
    }
    nlohmann::json passing = good;
    passing["name"] = "a";
    file["tests"] = {passing, injected, failing};
    std::ofstream(path) << file.dump();

    RegressOptions o = options({path.string()});
    std::ostringstream out, progress;
    auto run = runRegression(o, out, progress);
    REQUIRE(run.ok());
    INFO(out.str());
    CHECK(run->results.size() == 3);
    CHECK(run->passed == 1);
    CHECK(run->failed == 2);
    CHECK(resultOf(*run, path.string() + "#b").verdict == Verdict::FAILED);
    const ItemResult& unreadable = resultOf(*run, path.string() + "#(test 1)");
    CHECK(unreadable.verdict == Verdict::FAILED);
    CHECK(unreadable.message.find("control character 10") != std::string::npos);
    REQUIRE(writeRegressJUnit((dir / "junit.xml").string(), *run).ok());
    const std::string junit = readText(dir / "junit.xml");
    CHECK(junit.find("name=\"b\"") != std::string::npos);
    CHECK(junit.find("failures=\"2\"") != std::string::npos);

    // Names that cannot be one item each are refused, not merged.
    file["tests"] = {passing, passing};
    std::ofstream(dir / "twice.json") << file.dump();
    auto twice = expandSuite({(dir / "twice.json").string()}, 1);
    REQUIRE_FALSE(twice.ok());
    CHECK(twice.status().message.find("two tests are named 'a'") != std::string::npos);
    passing["name"] = "x#y";
    file["tests"] = {passing};
    std::ofstream(dir / "hash.json") << file.dump();
    CHECK_FALSE(expandSuite({(dir / "hash.json").string()}, 1).ok());

    // The protocol carries any name as one line and back.
    for (const std::string& name :
         {std::string("a\nb#c"), std::string("q\"\\\r\t\x01"), std::string("plain")}) {
        const std::string line = encodeItemCommand(name);
        CHECK(std::count(line.begin(), line.end(), '\n') == 1);
        CHECK(decodeItemCommand(line.substr(0, line.size() - 1)) == name);
    }
    CHECK_FALSE(decodeItemCommand("not json").has_value());
    fs::remove_all(dir);
}

TEST_CASE("regress_report_markdown_is_escaped") {
    // A test name with backticks and HTML, a message with Markdown: summary.md shows them as
    // text (a backtick once ended the code span and left raw HTML in the page).
    const fs::path dir = freshDir("markdown");
    RegressRun run;
    run.options = options({"x.json"});
    ItemResult r;
    r.id = "x.json#a`<img src=x onerror=alert(1)>`b";
    r.verdict = Verdict::FAILED;
    r.message = "[click](http://evil) *bold* <b>html</b> | cell\nsecond line";
    r.log = "```\nnot the end of the block\n";
    run.results = {r};
    run.failed = 1;
    REQUIRE(writeRegressReport(dir.string(), run, "nncosim regress `x`").ok());
    const std::string md = readText(dir / "summary.md");
    CHECK(md.find("`` nncosim regress `x` ``") != std::string::npos);
    CHECK(md.find("### ``x.json#a`<img src=x onerror=alert(1)>`b``") != std::string::npos);
    CHECK(md.find("\\[click\\]\\(http://evil\\) \\*bold\\* &lt;b\\>html&lt;/b\\> \\| cell "
                  "second line") != std::string::npos);
    CHECK(md.find("````\n```\nnot the end of the block\n````") != std::string::npos);
    CHECK(md.find("<b>") == std::string::npos);
    fs::remove_all(dir);
}

TEST_CASE("regress_cts_items_report_device_time") {
    // CTS items on the NPU report their device cycles (every run of the test and its variants),
    // a test of one operation that operation as its layer.
    RegressOptions o = options({kCtsDir + "/V1_0/conv_quant8.json"}, "npu");
    o.worker.npu = "func";
    std::ostringstream out, progress;
    auto run = runRegression(o, out, progress);
    REQUIRE(run.ok());
    REQUIRE_FALSE(run->results.empty());
    for (const ItemResult& r : run->results) {
        CAPTURE(r.id);
        CHECK(r.verdict == Verdict::PASSED);
        CHECK(r.npuCycles > 0);
        if (r.id.find("all_inputs_as_internal") == std::string::npos) {
            REQUIRE(r.layers.size() == 1);
            CHECK(r.layers[0].type == "CONV_2D");
            CHECK(r.layers[0].cycles == r.npuCycles);
            CHECK(r.layers[0].macs > 0);
        }
    }
}
