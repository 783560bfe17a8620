// Fuzz target: request validation and execution through the driver on the NPU's functional
// model. A fixed set of models from the CTS (NNCOSIM_CTS_DIR; the first test of each file, plus
// copies with unknown input or output shapes) is prepared once. Each input picks a model and an
// execution path, starts from the test's valid request (one shared-memory pool per argument),
// and applies a list of edits decoded from the input: argument lifetimes, pools, offsets,
// lengths and dimensions, extra or missing arguments and pools, driver-managed buffers (fresh
// per input, so a replay is deterministic) or foreign tokens as pools, POINTER arguments, pool
// contents, the timing flag (a POINTER argument's length stays within its memory: the HAL takes
// it on trust). Every path must answer without crashing; a successful execution must report one
// shape per output.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <variant>

#include "driver/IBuffer.h"
#include "driver/IBurst.h"
#include "driver/IExecution.h"
#include "fuzz/FuzzDevice.h"
#include "model/CtsReader.h"

using namespace nncosim;
using LifeTime = Request::Argument::LifeTime;

namespace {

struct Subject {
    Model model;
    driver::SharedPreparedModel prepared;
    std::vector<TensorData> inputs;
    std::vector<uint32_t> outputBytes;
};

// A copy of `test` whose inputs (or outputs) have every dimension unknown.
CtsTest withUnknownShapes(CtsTest test, bool inputs) {
    Subgraph& g = test.model.main;
    for (uint32_t k : inputs ? g.inputIndexes : g.outputIndexes)
        std::fill(g.operands[k].dimensions.begin(), g.operands[k].dimensions.end(), 0u);
    return test;
}

const std::vector<Subject>& subjects() {
    static const std::vector<Subject> all = [] {
        std::vector<CtsTest> tests;
        for (const char* name : {"V1_0/add_quant8.json", "V1_0/conv_quant8.json",
                                 "V1_0/avg_pool_quant8_1.json", "V1_0/fully_connected_quant8.json",
                                 "V1_0/concat_quant8_1.json", "V1_0/relu_quant8_1.json"}) {
            auto file = readCtsFile(std::string(NNCOSIM_CTS_DIR) + "/" + name);
            if (!file || file->tests.empty()) std::abort();
            tests.push_back(file->tests.front());
        }
        tests.push_back(withUnknownShapes(tests[0], true));
        tests.push_back(withUnknownShapes(tests[0], false));
        std::vector<Subject> out;
        for (CtsTest& test : tests) {
            auto prepared = driver::prepareModelBlocking(fuzz::functionalDevice(), test.model);
            if (!prepared) std::abort();
            std::vector<uint32_t> outputBytes;
            for (const TensorData& t : test.expectedOutputs)
                outputBytes.push_back(static_cast<uint32_t>(t.bytes.size()));
            out.push_back(
                {std::move(test.model), *prepared, std::move(test.inputs), std::move(outputBytes)});
        }
        return out;
    }();
    return all;
}

// Dimensions the edits choose from: small, unknown, and the extremes.
uint32_t dimension(uint8_t b) {
    static const uint32_t special[] = {0, 1,  2,     3,     4,          6,
                                       8, 16, 65535, 65536, 0x7fffffff, 0xffffffff};
    return special[b % (sizeof(special) / sizeof(special[0]))];
}

// Offsets and lengths: small, near the pool sizes, and the extremes.
uint32_t position(fuzz::ByteReader& in) {
    const uint8_t kind = in.u8();
    if (kind % 4 == 3) return 0xffffffffu - in.u8();
    if (kind % 4 == 2) return in.u32();
    return in.u16() % 4096;
}

struct Edited {
    Request request;
    std::vector<driver::SharedBuffer> buffers;  // alive during the execution
    std::vector<std::vector<uint8_t>> pointees;
    MeasureTiming measure = MeasureTiming::NO;
};

void edit(const Subject& subject, fuzz::ByteReader& in, Edited& e) {
    Request& r = e.request;
    auto argument = [&](uint8_t which) -> Request::Argument* {
        auto& list = which & 0x80 ? r.outputs : r.inputs;
        return list.empty() ? nullptr : &list[(which & 0x7f) % list.size()];
    };
    for (int edits = 0; edits < 16 && !in.empty(); ++edits) {
        const uint8_t op = in.u8();
        Request::Argument* arg = argument(in.u8());
        switch (op % 13) {
            case 0:
                if (arg) arg->lifetime = static_cast<LifeTime>(in.u8() % 4);  // 3: invalid
                break;
            case 1:
                if (arg) arg->location.poolIndex = in.u8() % 8;
                break;
            case 2:
                if (arg) arg->location.offset = position(in);
                break;
            case 3:
                if (arg) arg->location.length = position(in);
                break;
            case 4:
                if (arg) {
                    arg->dimensions.resize(in.u8() % 6);
                    for (uint32_t& d : arg->dimensions) d = dimension(in.u8());
                }
                break;
            case 5: {  // another shared-memory pool
                auto memory = Memory::create(1 + in.u16() % 8192, "fuzz-pool");
                if (memory) r.pools.push_back(*memory);
                break;
            }
            case 6:
                if (!r.pools.empty()) r.pools.pop_back();
                break;
            case 7: {  // a driver-managed buffer for one role (or two) as a pool
                const uint8_t role = in.u8();
                const bool isOutput = role & 0x80;
                const uint32_t count = static_cast<uint32_t>(
                    (isOutput ? subject.model.main.outputIndexes : subject.model.main.inputIndexes)
                        .size());
                const BufferRole one{0, (role & 0x7f) % std::max(count, 1u), 1.0f};
                BufferDesc desc;
                if (in.u8() & 1) {
                    desc.dimensions.resize(in.u8() % 5);
                    for (uint32_t& d : desc.dimensions) d = dimension(in.u8());
                }
                auto buffer = fuzz::functionalDevice().allocate(
                    desc, {subject.prepared},
                    isOutput ? std::vector<BufferRole>{} : std::vector{one},
                    isOutput ? std::vector{one} : std::vector<BufferRole>{});
                if (!buffer) break;
                if (in.u8() & 1) {  // initialized by copyFrom, with chosen dimensions
                    std::vector<uint32_t> dims(in.u8() % 5);
                    for (uint32_t& d : dims) d = dimension(in.u8());
                    auto memory = Memory::create(1 + in.u16() % 8192, "fuzz-copy");
                    if (memory) (void)(*buffer)->copyFrom(*memory, dims);
                }
                r.pools.push_back((*buffer)->getToken());
                e.buffers.push_back(*buffer);
                break;
            }
            case 8:  // a token this device never issued (or a freed one)
                r.pools.push_back(static_cast<MemoryDomainToken>(in.u32()));
                break;
            case 9:  // one argument more or fewer
                if (in.u8() & 1) {
                    (op & 0x80 ? r.outputs : r.inputs).push_back(arg ? *arg : Request::Argument{});
                } else if (!(op & 0x80 ? r.outputs : r.inputs).empty()) {
                    (op & 0x80 ? r.outputs : r.inputs).pop_back();
                }
                break;
            case 10:  // a POINTER argument into memory of its own
                if (arg) {
                    e.pointees.emplace_back(in.u16() % 8192);
                    arg->lifetime = LifeTime::POINTER;
                    arg->location.pointer = static_cast<void*>(e.pointees.back().data());
                    arg->location.length = static_cast<uint32_t>(e.pointees.back().size());
                    arg->location.offset = 0;
                }
                break;
            case 11: {  // pool contents
                const uint8_t pool = in.u8();
                if (r.pools.empty()) break;
                if (const auto* memory = std::get_if<SharedMemory>(&r.pools[pool % r.pools.size()]);
                    memory && *memory) {
                    const std::vector<uint8_t> bytes = in.bytes(in.u8());
                    if (!bytes.empty())
                        std::memcpy((*memory)->data(), bytes.data(),
                                    std::min(bytes.size(), (*memory)->size()));
                }
                break;
            }
            case 12:
                e.measure = static_cast<MeasureTiming>(in.u8() % 3);  // 2: invalid
                break;
        }
    }
    // A raw pointer carries no size: the HAL takes a POINTER argument's length on trust (the
    // caller's promise), so the edits keep it within the memory it points to.
    for (auto* list : {&r.inputs, &r.outputs}) {
        for (Request::Argument& a : *list) {
            if (a.lifetime != LifeTime::POINTER) continue;
            const void* p =
                std::visit([](auto* q) { return static_cast<const void*>(q); }, a.location.pointer);
            for (const std::vector<uint8_t>& pointee : e.pointees) {
                if (p == pointee.data())
                    a.location.length = std::min<uint32_t>(a.location.length,
                                                           static_cast<uint32_t>(pointee.size()));
            }
        }
    }
}

void checkResult(const Subject& subject, const driver::ExecutionResult& result) {
    if (result.ok() && result.outputShapes.size() != subject.model.main.outputIndexes.size())
        std::abort();
}

void execute(const Subject& subject, uint8_t path, const Edited& e) {
    const auto& prepared = *subject.prepared;
    const Duration loopTimeout = fuzz::kLoopTimeout;
    switch (path % 5) {
        case 0:
            checkResult(subject, prepared.execute(e.request, e.measure, {}, loopTimeout));
            break;
        case 1: {
            auto callback = std::make_shared<driver::ExecutionCallback>();
            if (prepared.executeAsynchronously(e.request, e.measure, {}, loopTimeout, callback)
                    .ok())
                checkResult(subject, callback->result());
            break;
        }
        case 2: {
            auto fenced = prepared.executeFenced(e.request, {}, e.measure, {}, loopTimeout, {});
            if (fenced) (void)fenced->callback->getExecutionInfo();
            break;
        }
        case 3: {
            auto burst = prepared.configureExecutionBurst();
            if (burst)
                checkResult(subject, (*burst)->execute(e.request, e.measure, {}, loopTimeout));
            break;
        }
        case 4: {
            auto execution = prepared.createReusableExecution(e.request, e.measure, loopTimeout);
            if (execution) checkResult(subject, (*execution)->compute({}));
            break;
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    fuzz::ByteReader in(data, size);
    const auto& all = subjects();
    const Subject& subject = all[in.u8() % all.size()];
    const uint8_t path = in.u8();
    auto request = fuzz::requestInSharedMemory(subject.inputs, subject.outputBytes);
    if (!request) std::abort();
    Edited e{std::move(*request), {}, {}};
    edit(subject, in, e);
    execute(subject, path, e);
    return 0;
}
