// `nncosim mutate [--sample N] [--seed S] [--stage smoke|ci|nightly] [-j N] [--slurm]
// [--json F] [--markdown F] [--mutant ID]...`: mutation analysis of the RTL from a mutation build
// (-DNNCOSIM_MUTATION=ON; testbench/Mutation.h): each mutant through the staged checks until one
// fails; the score per RTL file and every survivor.
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <set>

#include "sim/Mutation.h"
#include "testbench/Mutation.h"
#include "testbench/RegressSlurm.h"
#include "testbench/commands/Commands.h"

namespace nncosim::cli {
namespace {

namespace fs = std::filesystem;
using namespace nncosim::mutation;

struct MutateOptions {
    uint32_t sample = 0;
    uint32_t seed = 1;
    std::string stage = "ci";
    unsigned jobs = 1;
    std::vector<uint32_t> mutants;
    std::string jsonPath;
    std::string markdownPath;
    std::string waivers;
    std::string workDir;
    std::string ctsDir = NNCOSIM_CTS_DIR;
    std::string shard;
    std::string shardDir;  ///< Slurm task: write DIR/mutation.json
    double timeoutFactor = 3.0;
    double minScore = 0.0;
    bool verbose = false;
    bool list = false;
    bool slurm = false;
    SlurmOptions slurmOptions;
};

std::string ownCommand() {
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    std::string command;
    for (std::string arg; std::getline(in, arg, '\0');)
        command += (command.empty() ? "" : " ") + arg;
    return command;
}

std::vector<std::string> ownArgs() {
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    std::vector<std::string> args;
    for (std::string arg; std::getline(in, arg, '\0');) args.push_back(arg);
    return args;
}

bool writeFile(const std::string& path, const std::string& text) {
    if (path.empty()) return true;
    const fs::path parent = fs::path(path).parent_path();
    std::error_code ec;
    if (!parent.empty()) fs::create_directories(parent, ec);
    std::ofstream out(path);
    out << text;
    if (!out) {
        std::cerr << "nncosim mutate: cannot write " << path << "\n";
        return false;
    }
    return true;
}

void printSummary(const Campaign& campaign) {
    const Tally t = tally(campaign.results);
    std::cout << "mutate (" << stageName(campaign.stage) << "): " << t.mutants << " mutants, "
              << t.killed << " killed (" << t.timedOut << " timed out), " << t.survived
              << " survived, " << t.equivalent << " equivalent, " << t.notReached
              << " not reached; score " << std::fixed << std::setprecision(1) << 100.0 * t.score()
              << " % in " << std::setprecision(0) << campaign.seconds << " s\n"
              << std::defaultfloat;
}

int writeReports(Campaign& campaign, const std::vector<MutantInfo>& mutants,
                 const MutateOptions& o) {
    const nlohmann::json j = campaignJson(campaign, mutants);
    if (!writeFile(o.jsonPath, j.dump(1) + "\n")) return 2;
    if (!o.shardDir.empty() &&
        !writeFile((fs::path(o.shardDir) / "mutation.json").string(), j.dump(1) + "\n"))
        return 2;
    if (!writeFile(o.markdownPath, campaignMarkdown(campaign, mutants))) return 2;
    printSummary(campaign);
    if (!o.jsonPath.empty()) std::cout << "JSON: " << o.jsonPath << "\n";
    if (!o.markdownPath.empty()) std::cout << "report: " << o.markdownPath << "\n";
    const double score = tally(campaign.results).score();
    if (score < o.minScore) {
        std::cout << "score " << 100.0 * score << " % is below --min-score " << 100.0 * o.minScore
                  << " %\n";
        return 1;
    }
    return 0;
}

int runMutate(MutateOptions o) {
    if (!sim::mutation::isMutationBuild()) {
        std::cerr << "nncosim mutate: this nncosim is not a mutation build; configure one with "
                     "cmake -S . -B build-mut -DNNCOSIM_MUTATION=ON and run build-mut/bin/nncosim "
                     "mutate (docs/user-guide.md, 8c)\n";
        return 2;
    }
    auto mutants = loadManifest(sim::mutation::manifestPath());
    if (!mutants) {
        std::cerr << "nncosim mutate: " << mutants.status().message << "\n";
        return 2;
    }
    if (o.list) {
        for (const MutantInfo& m : *mutants)
            std::cout << m.id << "\t" << m.key << "\t" << m.change << "\n";
        return 0;
    }
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    CheckContext context;
    context.binDir = exe.parent_path().string();
    context.ctsDir = o.ctsDir;
    context.sourceDir = NNCOSIM_SOURCE_DIR;
    context.workDir = o.workDir.empty()
                          ? (exe.parent_path().parent_path() / "mutation-work").string()
                          : o.workDir;
    if (o.waivers.empty())
        o.waivers = std::string(NNCOSIM_SOURCE_DIR) + "/sim/mutation/waivers.json";
    auto waivers = loadWaivers(o.waivers);
    if (!waivers) {
        std::cerr << "nncosim mutate: " << waivers.status().message << "\n";
        return 2;
    }
    const auto stage = stageFromName(o.stage);
    if (!stage) {
        std::cerr << "nncosim mutate: --stage must be smoke, ci or nightly\n";
        return 2;
    }
    CampaignOptions options;
    options.stage = *stage;
    options.sample = o.sample;
    options.seed = o.seed;
    options.jobs = o.jobs;
    options.only = o.mutants;
    options.timeoutFactor = o.timeoutFactor;
    options.verbose = o.verbose || !o.mutants.empty();
    if (!o.shard.empty()) {
        const size_t slash = o.shard.find('/');
        try {
            options.shardIndex = static_cast<uint32_t>(std::stoul(o.shard.substr(0, slash)));
            options.shardCount = static_cast<uint32_t>(std::stoul(o.shard.substr(slash + 1)));
        } catch (const std::exception&) {
            options.shardCount = 0;
        }
        if (slash == std::string::npos || options.shardCount == 0 ||
            options.shardIndex >= options.shardCount) {
            std::cerr << "nncosim mutate: --shard I/N with 0 <= I < N\n";
            return 2;
        }
    }
    auto checks = campaignChecks(context, *stage, std::cout);
    if (!checks) {
        std::cerr << "nncosim mutate: " << checks.status().message << "\n";
        return 2;
    }
    std::cout << "mutate: " << mutants->size() << " mutants in this build, " << checks->size()
              << " checks up to " << stageName(*stage) << ", work folder " << context.workDir
              << "\n"
              << std::flush;

    if (o.slurm) {
        // The probe here (the tasks share its cache in the work folder), the mutants there.
        CampaignOptions probeOnly = options;
        probeOnly.probeOnly = true;
        auto probe = runCampaign(*mutants, *waivers, *checks, context, probeOnly, std::cout);
        if (!probe) {
            std::cerr << "nncosim mutate: " << probe.status().message << "\n";
            return 2;
        }
        std::vector<std::string> args;
        const std::vector<std::string> own = ownArgs();
        // The task's command: this one without the Slurm options and the reports.
        const std::set<std::string> dropWithValue = {"--json",       "--markdown",   "--tasks",
                                                     "--partition",  "--time",       "--slurm-dir",
                                                     "--slurm-wait", "--slurm-poll", "--min-score"};
        for (size_t i = 0; i < own.size(); ++i) {
            const std::string& a = own[i];
            const std::string name = a.substr(0, a.find('='));
            if (a == "--slurm" || a.rfind("--sbatch-arg", 0) == 0) continue;
            if (dropWithValue.count(name)) {
                if (name == a) ++i;  // the value is the next argument
                continue;
            }
            args.push_back(i == 0 ? exe.string() : a);
        }
        args.insert(args.end(), {"--work", context.workDir});
        SlurmOptions slurm = o.slurmOptions;
        if (slurm.dir.empty()) slurm.dir = (fs::path(context.workDir) / "slurm").string();
        SlurmArrayJob job;
        job.jobName = "nncosim-mutate";
        job.outputOption = "--shard-dir";
        job.resultFile = "mutation.json";
        job.script = "mutate.sbatch";
        const auto start = std::chrono::steady_clock::now();
        auto shards = runArrayOnSlurm(args, slurm, job, std::cout);
        if (!shards) {
            std::cerr << "nncosim mutate: " << shards.status().message << "\n";
            return 2;
        }
        std::vector<Campaign> parts;
        for (const std::string& dir : *shards) {
            std::ifstream in(fs::path(dir) / "mutation.json");
            auto part = campaignFromJson(nlohmann::json::parse(in, nullptr, false));
            if (!part) {
                std::cerr << "nncosim mutate: " << dir << ": " << part.status().message << "\n";
                return 2;
            }
            parts.push_back(std::move(*part));
        }
        auto merged = mergeCampaigns(parts);
        if (!merged) {
            std::cerr << "nncosim mutate: " << merged.status().message << "\n";
            return 2;
        }
        merged->command = ownCommand();
        merged->probeSeconds = probe->probeSeconds;
        merged->seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() +
            probe->seconds;
        return writeReports(*merged, *mutants, o);
    }

    auto campaign = runCampaign(*mutants, *waivers, *checks, context, options, std::cout);
    if (!campaign) {
        std::cerr << "nncosim mutate: " << campaign.status().message << "\n";
        return 2;
    }
    campaign->command = ownCommand();
    if (!o.mutants.empty()) {
        for (const MutantResult& r : campaign->results) {
            const MutantInfo& m = (*mutants)[r.id - 1];
            std::cout << "\nmutant " << r.id << ": " << m.file << ":" << m.line << ":" << m.column
                      << " (" << m.unit << ", " << m.kind << "): " << m.change << "\n  "
                      << verdictName(r.verdict) << "; " << r.checksActivating
                      << " checks activate it, " << r.checksRun << " ran\n";
            if (r.verdict == Verdict::kKilled)
                std::cout << "  by " << r.check << " (" << stageName(r.stage) << ", " << r.detector
                          << "): " << r.detail << "\n  the end of its output:\n"
                          << r.log << "\n";
            if (r.waived) std::cout << "  waived: " << r.waiver << "\n";
        }
    }
    return writeReports(*campaign, *mutants, o);
}

}  // namespace

void addMutateCommand(CLI::App& app) {
    auto o = std::make_shared<MutateOptions>();
    CLI::App* cmd = app.add_subcommand(
        "mutate",
        "Mutation analysis of the RTL (a mutation build): each mutant through the staged checks "
        "until one fails; the score per RTL file and every survivor");
    cmd->add_option("--sample", o->sample,
                    "Mutants to run, from every RTL file in proportion to its mutants (0: all)")
        ->capture_default_str();
    cmd->add_option("--seed", o->seed, "Seed of the sample")->capture_default_str();
    cmd->add_option("--stage", o->stage,
                    "Checks up to: smoke (a few CTS and random tests), ci (the ctest RTL tests), "
                    "nightly (the RTL CTS, zoo networks, random tests, descriptor chains, fault "
                    "campaigns)")
        ->check(CLI::IsMember({"smoke", "ci", "nightly"}))
        ->capture_default_str();
    cmd->add_option("-j,--jobs", o->jobs, "Checks run at once")
        ->check(CLI::Range(1u, 256u))
        ->capture_default_str();
    cmd->add_option("--mutant", o->mutants,
                    "Run these mutants only (repeat it), printing how each ended");
    cmd->add_option("--json", o->jsonPath, "Write the results as JSON");
    cmd->add_option("--markdown", o->markdownPath,
                    "Write the report (score per file and kind, survivors, not reached)");
    cmd->add_option("--waivers", o->waivers,
                    "Equivalent mutants (default: sim/mutation/waivers.json)");
    cmd->add_option("--work", o->workDir,
                    "Probe cache, zoo networks, scratch (default: BUILD/mutation-work)");
    cmd->add_option("--cts-dir", o->ctsDir, "The CTS vectors")->capture_default_str();
    cmd->add_option("--timeout-factor", o->timeoutFactor,
                    "A check's wall-clock limit: this times its probe run + 10 s (the "
                    "simulated-cycle limit is 4x "
                    "the probe's cycles + 200 k)")
        ->capture_default_str();
    cmd->add_option("--min-score", o->minScore,
                    "Exit status 1 when the score is below this (0 to 1, e.g. 0.85)")
        ->check(CLI::Range(0.0, 1.0));
    cmd->add_option("--shard", o->shard, "Run shard I/N of the chosen mutants");
    cmd->add_option("--shard-dir", o->shardDir, "Write DIR/mutation.json (Slurm tasks)")->group("");
    cmd->add_flag("--list", o->list, "List the build's mutants (id, key, change) and exit");
    cmd->add_flag("-v,--verbose", o->verbose, "A line for every mutant");
    SlurmOptions& slurm = o->slurmOptions;
    const char* slurmGroup = "Slurm (a job array of shards, merged)";
    cmd->add_flag("--slurm", o->slurm,
                  "Probe here, then run the mutants as a Slurm job array; wait and merge")
        ->group(slurmGroup);
    cmd->add_option("--tasks", slurm.tasks, "--slurm: array tasks")
        ->check(CLI::Range(1u, 10000u))
        ->capture_default_str()
        ->group(slurmGroup);
    cmd->add_option("--partition", slurm.partition, "--slurm: sbatch --partition")
        ->group(slurmGroup);
    cmd->add_option("--time", slurm.time, "--slurm: sbatch --time of each task")->group(slurmGroup);
    cmd->add_option("--sbatch-arg", slurm.sbatchArgs, "--slurm: one more sbatch option")
        ->group(slurmGroup);
    cmd->add_option("--slurm-dir", slurm.dir, "--slurm: task folders and logs (shared)")
        ->group(slurmGroup);
    cmd->add_option("--slurm-wait", slurm.waitSeconds, "--slurm: longest wait for the array")
        ->capture_default_str()
        ->group(slurmGroup);
    cmd->add_option("--slurm-poll", slurm.pollSeconds, "--slurm: squeue polling period")
        ->capture_default_str()
        ->group(slurmGroup);
    cmd->callback([o] { gExitStatus = runMutate(*o); });
}

}  // namespace nncosim::cli
