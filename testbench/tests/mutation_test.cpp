// The mutation campaign's bookkeeping (testbench/Mutation.h) without a mutation build: the
// sample, waivers, the score and its stages, the JSON and the merge of shards. The campaign
// itself runs in the mutation build (ctest mutation_campaign_sample).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "testbench/Mutation.h"

using namespace nncosim;
using namespace nncosim::mutation;

namespace {

std::vector<MutantInfo> manifest() {
    // 100 mutants in rtl/a.sv, 10 in rtl/b.sv, 2 in rtl/c.sv.
    std::vector<MutantInfo> out;
    auto add = [&](const char* file, int n) {
        for (int i = 0; i < n; ++i) {
            MutantInfo m;
            m.id = static_cast<uint32_t>(out.size() + 1);
            m.file = file;
            m.line = static_cast<uint32_t>(i + 1);
            m.column = 1;
            m.kind = i % 2 ? "constant" : "relational";
            m.key = std::string(file) + ":" + std::to_string(i + 1) + ":1 " + m.kind;
            m.change = "a < b  ->  a <= b";
            out.push_back(m);
        }
    };
    add("rtl/a.sv", 100);
    add("rtl/b.sv", 10);
    add("rtl/c.sv", 2);
    return out;
}

std::string writeFile(const std::string& name, const std::string& text) {
    const auto path = std::filesystem::temp_directory_path() / name;
    std::ofstream(path) << text;
    return path.string();
}

}  // namespace

TEST_CASE("mutation_sample_is_proportional_and_seeded") {
    const auto mutants = manifest();
    const auto sample = sampleMutants(mutants, 30, 7);
    CHECK(sample.size() == 30);
    CHECK(std::is_sorted(sample.begin(), sample.end()));
    std::map<std::string, int> perFile;
    for (uint32_t id : sample) ++perFile[mutants[id - 1].file];
    // 30 x 100/112, 30 x 10/112, and at least two of the smallest file.
    CHECK(perFile["rtl/a.sv"] >= 25);
    CHECK(perFile["rtl/b.sv"] >= 2);
    CHECK(perFile["rtl/c.sv"] == 2);
    CHECK(sampleMutants(mutants, 30, 7) == sample);  // deterministic by seed
    CHECK(sampleMutants(mutants, 30, 8) != sample);
    CHECK(sampleMutants(mutants, 0, 7).size() == mutants.size());  // 0: all of them
    CHECK(sampleMutants(mutants, 500, 7).size() == mutants.size());
}

TEST_CASE("mutation_waivers_need_a_key_and_a_reason") {
    auto good = loadWaivers(writeFile(
        "nncosim_waivers_good.json",
        R"({"waivers": [{"key": "a.sv:1:1 relational", "reason": "both sides never equal"}]})"));
    REQUIRE(good.ok());
    CHECK(good->size() == 1);
    CHECK(good->front().reason == "both sides never equal");
    auto noReason = loadWaivers(
        writeFile("nncosim_waivers_bad.json", R"({"waivers": [{"key": "a.sv:1:1 relational"}]})"));
    CHECK_FALSE(noReason.ok());
    CHECK(noReason.status().message.find("reason") != std::string::npos);
    CHECK_FALSE(loadWaivers(writeFile("nncosim_waivers_junk.json", "[1, 2]")).ok());
    CHECK_FALSE(loadWaivers("/nonexistent/waivers.json").ok());
}

TEST_CASE("mutation_score_excludes_equivalent_and_not_reached") {
    std::vector<MutantResult> results(10);
    for (uint32_t i = 0; i < results.size(); ++i) results[i].id = i + 1;
    // 6 killed (one by a timeout), 1 survived, 1 equivalent, 2 not reached.
    for (int i = 0; i < 6; ++i) {
        results[i].verdict = Verdict::kKilled;
        results[i].reachedAt = Stage::kSmoke;
    }
    results[5].timedOut = true;
    results[6].verdict = Verdict::kSurvived;
    results[6].reachedAt = Stage::kCi;
    results[7].verdict = Verdict::kEquivalent;
    results[8].verdict = Verdict::kNotReached;
    results[9].verdict = Verdict::kNotReached;
    const Tally t = tally(results);
    CHECK(t.mutants == 10);
    CHECK(t.killed == 6);
    CHECK(t.timedOut == 1);
    CHECK(t.survived == 1);
    CHECK(t.equivalent == 1);
    CHECK(t.notReached == 2);
    CHECK(t.score() == doctest::Approx(6.0 / 7.0));
    CHECK(Tally{}.score() == 1.0);
}

TEST_CASE("mutation_report_json_round_trip_stages_and_merge") {
    const auto mutants = manifest();
    Campaign c;
    c.stage = Stage::kNightly;
    c.seed = 3;
    c.sample = 4;
    c.total = static_cast<uint32_t>(mutants.size());
    c.results.resize(4);
    // Killed in smoke; killed in nightly (so surviving CI); survived (reached in CI);
    // reached only in nightly and surviving it.
    c.results[0] = {1, Verdict::kKilled, "smoke-conv", Stage::kSmoke, "comparison", "x"};
    c.results[0].reachedAt = Stage::kSmoke;
    c.results[1] = {2, Verdict::kKilled, "nightly-cts-V1_0-3", Stage::kNightly, "npu-error", "y"};
    c.results[1].reachedAt = Stage::kCi;
    c.results[2] = {105, Verdict::kSurvived};
    c.results[2].reachedAt = Stage::kCi;
    c.results[3] = {111, Verdict::kSurvived};
    c.results[3].reachedAt = Stage::kNightly;
    const nlohmann::json j = campaignJson(c, mutants);
    for (const char* field : {"mutants", "killed", "survived", "equivalent", "not_reached", "score",
                              "by_file", "stage_scores", "results"})
        CHECK(j.contains(field));
    CHECK(j["killed"] == 2);
    CHECK(j["score"] == doctest::Approx(0.5));
    // After CI: mutant 2 survived it, mutant 111 was not reached by it.
    CHECK(j["stage_scores"]["ci"]["killed"] == 1);
    CHECK(j["stage_scores"]["ci"]["survived"] == 2);
    CHECK(j["stage_scores"]["ci"]["not_reached"] == 1);
    CHECK(j["stage_scores"]["ci"]["score"] == doctest::Approx(1.0 / 3.0).epsilon(1e-3));
    CHECK(j["by_file"]["rtl/b.sv"]["survived"] == 1);

    auto back = campaignFromJson(j);
    REQUIRE(back.ok());
    CHECK(campaignJson(*back, mutants) == j);

    // Shards merge into one campaign in id order; a mutant in two shards is refused.
    Campaign s0 = *back, s1 = *back;
    s0.results = {c.results[2], c.results[0]};
    s1.results = {c.results[1], c.results[3]};
    auto merged = mergeCampaigns({s0, s1});
    REQUIRE(merged.ok());
    CHECK(merged->results.size() == 4);
    CHECK(merged->results.front().id == 1);
    CHECK(merged->results.back().id == 111);
    CHECK_FALSE(mergeCampaigns({s0, s0}).ok());

    const std::string md = campaignMarkdown(c, mutants);
    CHECK(md.find("## Score per RTL file") != std::string::npos);
    CHECK(md.find("rtl/b.sv:5:1") != std::string::npos);  // the survivor with file:line
    CHECK(md.find("after ci") != std::string::npos);
}
