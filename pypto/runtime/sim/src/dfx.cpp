// DFX recording (see dfx.h) and the JSON hand-over of one run's records to Python (extras library).
#include "dfx.h"

#include <cstring>
#include <sstream>

#include "sim_internal.h"

namespace ptosim {

Dfx::Dfx(int32_t flags, size_t num_cores)
    : level(flags & kDfxSwimlaneMask),
      deps(flags & kDfxDeps),
      args(flags & kDfxArgs),
      args_tagged(flags & kDfxArgsTagged),
      units((flags & kDfxTasks) || (flags & kDfxSwimlaneMask)),
      scopes(flags & kDfxScopes),
      t0(Clock::now()),
      core_seq(num_cores, 0) {}

Dfx* dfx_new(int32_t flags, size_t num_cores) { return new Dfx(flags, num_cores); }

void dfx_task_args(Run& r, Task& t, const uint8_t* kinds, uint32_t n, bool manual, uint32_t dump_mask) {
    (void)r;
    t.kinds.assign(kinds, kinds + n);
    t.manual = manual;
    t.dump_mask = dump_mask;
}

void dfx_edge(Run& r, uint32_t pred, uint32_t succ, int32_t arg, EdgeSource src, uint8_t overlap,
              const ChipTensor* producer) {
    if (!r.dfx->deps || pred == succ) return;
    DfxEdge e{pred, succ, arg, src, overlap, {}};
    if (producer) e.producer = *producer;
    r.dfx->edges.push_back(e);
}

namespace {

// Appends the logical (row-major, gap-free) bytes of a strided view.
void copy_logical(std::string& bin, const ChipTensor& t) {
    const size_t es = t.element_size();
    if (t.ndims == 0 || es == 0) return;
    const char* base = reinterpret_cast<const char*>(t.buffer.addr);
    uint32_t idx[MAX_TENSOR_DIMS] = {};
    const uint32_t last = t.ndims - 1;
    const uint64_t row = uint64_t(t.shapes[last]);
    if (t.numel() == 0) return;
    for (;;) {
        uint64_t off = t.start_offset;
        for (uint32_t d = 0; d < last; ++d) off += uint64_t(idx[d]) * t.strides[d];
        if (t.strides[last] == 1) {
            bin.append(base + off * es, row * es);
        } else {
            for (uint64_t k = 0; k < row; ++k) bin.append(base + (off + k * t.strides[last]) * es, es);
        }
        int d = int(last) - 1;
        while (d >= 0 && ++idx[d] == t.shapes[d]) idx[d--] = 0;
        if (d < 0) return;
    }
}

}  // namespace

void dfx_dump(Run& r, const Task& t, bool after) {
    if (!(r.dfx->args || r.dfx->args_tagged) || t.dummy) return;
    for (size_t i = 0; i < t.tensors.size() && i < t.kinds.size(); ++i) {
        if (!r.dfx->args && !(i < 32 && (t.dump_mask >> i) & 1u)) continue;  // level 1: marked slots only
        const auto k = static_cast<TensorArgType>(t.kinds[i]);
        const bool in = k == TensorArgType::INPUT || k == TensorArgType::INOUT;
        const bool out = k == TensorArgType::OUTPUT || k == TensorArgType::OUTPUT_EXISTING || k == TensorArgType::INOUT;
        if (after ? !out : !in) continue;
        const uint64_t off = r.dfx->bin.size();
        copy_logical(r.dfx->bin, t.tensors[i]);
        r.dfx->dumps.push_back(DfxDump{t.index, int(i), after, off, r.dfx->bin.size() - off});
    }
}

void dfx_unit(Run& r, const Core& c, const Job& j, int64_t start, int64_t end) {
    Dfx& d = *r.dfx;
    d.unit_log.push_back(DfxUnit{c.id, j.task, j.block, j.slot, d.core_seq[size_t(c.id)]++, j.dispatch_ns, start, end,
                                 d.ns(Clock::now())});
}

void dfx_scope(Run& r, bool begin, uint64_t tensormap_entries) {
    Dfx& d = *r.dfx;
    if (!d.scopes) return;
    const int depth = int(r.scopes.size()) - 1;  // begin: after the push; end: before the pop
    DfxScope s{begin ? d.site : std::string(), begin, depth, std::min(std::max(depth, 0), kMaxRings - 1),
               d.allocated, d.released, d.heap, tensormap_entries};
    if (!begin) {  // the end record names the site its begin had
        for (auto it = d.scope_log.rbegin(); it != d.scope_log.rend(); ++it)
            if (it->begin && it->depth == depth) {
                s.site = it->site;
                break;
            }
    }
    if (begin) d.site.clear();
    d.scope_log.push_back(std::move(s));
}

namespace {

void json_tensor(std::ostream& os, const ChipTensor& t) {
    os << "{\"addr\":" << t.buffer.addr << ",\"size\":" << t.buffer.size << ",\"version\":" << t.version
       << ",\"dtype\":" << int(t.dtype) << ",\"start_offset\":" << t.start_offset << ",\"contiguous\":"
       << int(t.is_contiguous) << ",\"shape\":[";
    for (uint32_t i = 0; i < t.ndims; ++i) os << (i ? "," : "") << t.shapes[i];
    os << "],\"strides\":[";
    for (uint32_t i = 0; i < t.ndims; ++i) os << (i ? "," : "") << t.strides[i];
    os << "]}";
}

void json_string(std::ostream& os, const std::string& s) {
    os << '"';
    for (char ch : s) {
        if (ch == '"' || ch == '\\') os << '\\' << ch;
        else if (static_cast<unsigned char>(ch) < 0x20) os << ' ';
        else os << ch;
    }
    os << '"';
}

void json_task(std::ostream& os, const Run& r, const Task& t) {
    const bool alloc = t.dummy && t.tensors.empty() && !t.created.empty();
    os << "{";
    if (t.comm) {
        os << "\"comm\":";
        json_string(os, comm_label(r, t));
        os << ",";
    }
    os << "\"index\":" << t.index << ",\"id\":" << t.id.raw << ",\"ring\":" << t.ring << ",\"kernels\":["
       << t.kernel[0] << "," << t.kernel[1] << "," << t.kernel[2] << "],\"dummy\":" << int(t.dummy)
       << ",\"alloc\":" << int(alloc) << ",\"block_num\":" << t.block_num << ",\"manual\":" << int(t.manual)
       << ",\"args\":[";
    const auto& list = alloc ? t.created : t.tensors;
    for (size_t i = 0; i < list.size(); ++i) {
        const int kind = alloc ? int(TensorArgType::OUTPUT) : (i < t.kinds.size() ? int(t.kinds[i]) : -1);
        os << (i ? "," : "") << "{\"kind\":" << kind << ",\"tensor\":";
        json_tensor(os, list[i]);
        os << "}";
    }
    os << "],\"scalars\":[";
    for (size_t i = 0; i < t.scalars.size(); ++i) os << (i ? "," : "") << t.scalars[i];
    os << "]}";
}

}  // namespace

std::string dfx_json(Run& r) {
    Dfx& d = *r.dfx;
    std::ostringstream os;
    os << "{\"level\":" << d.level << ",\"deps\":" << int(d.deps) << ",\"args\":" << int(d.args)
       << ",\"scopes_on\":" << int(d.scopes) << ",\"num_cores\":" << d.core_seq.size()
       << ",\"ring_task_window\":" << r.cfg.ring_task_window << ",\"failed\":" << int(r.failed)
       << ",\"end_ns\":" << d.ns(Clock::now()) << ",\"tasks\":[";
    for (size_t i = 0; i < r.tasks.size(); ++i) {
        if (i) os << ",";
        json_task(os, r, *r.tasks[i]);
    }
    os << "],\"units\":[";
    for (size_t i = 0; i < d.unit_log.size(); ++i) {
        const DfxUnit& u = d.unit_log[i];
        os << (i ? "," : "") << "[" << u.core << "," << u.task << "," << u.block << "," << u.slot << "," << u.seq
           << "," << u.dispatch << "," << u.start << "," << u.end << "," << u.finish << "]";
    }
    os << "],\"orch\":[";
    for (size_t i = 0; i < d.orch.size(); ++i) {
        const DfxOrch& o = d.orch[i];
        os << (i ? "," : "") << "[\"" << o.kind << "\"," << o.task << "," << o.start << "," << o.end << "]";
    }
    os << "],\"edges\":[";
    for (size_t i = 0; i < d.edges.size(); ++i) {
        const DfxEdge& e = d.edges[i];
        os << (i ? "," : "") << "{\"pred\":" << e.pred << ",\"succ\":" << e.succ << ",\"arg\":" << e.arg
           << ",\"source\":" << int(e.source) << ",\"overlap\":" << int(e.overlap) << ",\"producer\":";
        if (e.source == EdgeSource::TENSORMAP) json_tensor(os, e.producer);
        else os << "null";
        os << "}";
    }
    os << "],\"scopes\":[";
    for (size_t i = 0; i < d.scope_log.size(); ++i) {
        const DfxScope& s = d.scope_log[i];
        os << (i ? "," : "") << "{\"site\":";
        json_string(os, s.site);
        os << ",\"begin\":" << int(s.begin) << ",\"depth\":" << s.depth << ",\"ring\":" << s.ring << ",\"allocated\":["
           << s.allocated[0] << "," << s.allocated[1] << "," << s.allocated[2] << "," << s.allocated[3]
           << "],\"released\":[" << s.released[0] << "," << s.released[1] << "," << s.released[2] << ","
           << s.released[3] << "],\"heap\":" << s.heap << ",\"tensormap\":" << s.tensormap << "}";
    }
    os << "],\"dumps\":[";
    for (size_t i = 0; i < d.dumps.size(); ++i) {
        const DfxDump& x = d.dumps[i];
        os << (i ? "," : "") << "[" << x.task << "," << x.arg << "," << int(x.after) << "," << x.offset << ","
           << x.size << "]";
    }
    os << "]}";
    return os.str();
}

}  // namespace ptosim
