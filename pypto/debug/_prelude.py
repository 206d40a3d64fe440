"""Helper functions pasted at the top of every ``torch_codegen`` output, so the source runs with torch alone.

Semantics follow the simulator's tile ISA: loads copy the valid region into a zero tile, stores write the
region that fits, ``rem`` is floor modulo, float -> int casts round by mode and saturate, part ops cover the
union of the operands' valid regions, and an SPMD launch runs every block in turn (sub-block index 0).
"""

PRELUDE = '''\
import math

import torch


def _sl(offsets, shape):
    return tuple(slice(int(o), int(o) + int(s)) for o, s in zip(offsets, shape))


def _fit(offsets, shape, bounds):
    return [max(0, min(int(s), int(b) - int(o))) for o, s, b in zip(offsets, shape, bounds)]


def _mark_valid(tile, valid):
    """Remember a valid region smaller than the tile (the IR keeps it on the op, not on the type)."""
    if valid is not None and [int(v) for v in valid] != list(tile.shape):
        tile.pypto_valid = [int(v) for v in valid]
    return tile


def _valid_of(x, valid):
    return valid if valid is not None else getattr(x, "pypto_valid", None)


def _load(t, offsets, shape, valid=None):
    tile = torch.zeros([int(s) for s in shape], dtype=t.dtype)
    region = _fit(offsets, valid if valid is not None else shape, t.shape)
    tile[_sl([0] * len(region), region)] = t[_sl(offsets, region)]
    return _mark_valid(tile, valid)


def _store(tile, offsets, out, valid=None, add=False):
    valid = _valid_of(tile, valid)
    region = _fit(offsets, valid if valid is not None else tile.shape, out.shape)
    region = [min(r, int(s)) for r, s in zip(region, tile.shape)]
    _put(out, _sl(offsets, region), tile[_sl([0] * len(region), region)], add)
    return out


def _put(out, window, value, add):
    """``out[window] = value`` in ``out``'s dtype; ``add``: plus the window's value (an atomic-add store:
    the value is converted to ``out``'s dtype first, then added in f32 for floats and rounded once)."""
    value = value.to(out.dtype)
    if add:
        cur = out[window]
        value = (cur.float() + value.float()).to(out.dtype) if out.dtype.is_floating_point else cur + value
    out[window] = value


def _slice(x, shape, offsets, valid=None):
    shape = [int(s) for s in shape]
    region = _fit(offsets, shape, x.shape)
    if region == shape and valid is None:
        return x[_sl(offsets, shape)]
    out = torch.zeros(shape, dtype=x.dtype)
    region = _fit(offsets, valid if valid is not None else shape, x.shape)
    out[_sl([0] * len(region), region)] = x[_sl(offsets, region)]
    return _mark_valid(out, valid)


def _assemble(target, source, offsets, add=False):
    region = _fit(offsets, source.shape, target.shape)
    _put(target, _sl(offsets, region), source[_sl([0] * len(region), region)], add)
    return target


def _write(dst, offsets, value):
    dst[tuple(int(o) for o in offsets)] = value
    return dst


def _read(src, offsets):
    index = tuple(int(o) for o in offsets) if isinstance(offsets, (list, tuple)) else (int(offsets),)
    return src[index].item()


def _same(x, y):
    return y.to(x.dtype) if isinstance(y, torch.Tensor) else torch.as_tensor(y).to(x.dtype)


def _div(a, b):
    if a.dtype.is_floating_point:
        return _same(a, a / b)
    return _same(a, torch.div(a, b, rounding_mode="trunc"))


def _rem(a, b):
    return _same(a, torch.remainder(a, b))


def _not(x):
    return torch.logical_not(x) if x.dtype == torch.bool else torch.bitwise_not(x)


def _reduce(x, kind, dim):
    if kind == "sum":
        r = x.sum(dim=dim, keepdim=True)
    elif kind == "max":
        r = x.amax(dim=dim, keepdim=True)
    elif kind == "min":
        r = x.amin(dim=dim, keepdim=True)
    elif kind in ("argmax", "argmin"):  # torch picks the first extremum, as the kernels do
        fn = torch.argmax if kind == "argmax" else torch.argmin
        return fn(x, dim=dim, keepdim=True).to(torch.int32)
    else:
        r = x.prod(dim=dim, keepdim=True)
    return r.to(x.dtype)


_EXPAND = {
    "": lambda a, b: b.expand_as(a),
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "max": torch.maximum,
    "min": torch.minimum,
    "expdif": lambda a, b: torch.exp(a - b),
}


def _expand(kind, a, b):
    if a.dim() == 2 and b.dim() == 2 and b.shape[-1] > 1 and b.shape[-1] != a.shape[-1]:
        b = b.repeat(1, a.shape[-1] // b.shape[-1])  # a packed row vector: its lanes repeat across the row
    return _same(a, _EXPAND[kind](a, b.to(a.dtype)))


def _cast(x, dtype, mode):
    if x.dtype.is_floating_point and not dtype.is_floating_point and dtype != torch.bool:
        d = x.double()
        if mode == "round":
            d = torch.sign(d) * torch.floor(torch.abs(d) + 0.5)
        elif mode == "floor":
            d = torch.floor(d)
        elif mode == "ceil":
            d = torch.ceil(d)
        elif mode == "trunc":
            d = torch.trunc(d)
        else:
            d = torch.round(d)
        info = torch.iinfo(dtype)
        return torch.nan_to_num(d, nan=0.0).clamp(info.min, info.max).to(dtype)
    return x.to(dtype)


def _matmul(a, b, out_dtype, a_trans=False, b_trans=False):
    if a_trans:
        a = a.transpose(-2, -1)
    if b_trans:
        b = b.transpose(-2, -1)
    if out_dtype.is_floating_point:
        return torch.matmul(a.float(), b.float()).to(out_dtype)
    return torch.matmul(a.long(), b.long()).to(out_dtype)


def _fillpad(x, valid, pad):
    valid = _valid_of(x, valid)
    if valid is None:
        return x.clone()
    out = x.clone()
    if pad == "max":
        value = torch.finfo(x.dtype).max if x.dtype.is_floating_point else torch.iinfo(x.dtype).max
    elif pad == "min":
        value = torch.finfo(x.dtype).min if x.dtype.is_floating_point else torch.iinfo(x.dtype).min
    else:
        value = 0
    mask = torch.ones(out.shape, dtype=torch.bool)
    mask[_sl([0] * len(valid), valid)] = False
    out[mask] = value
    return out


_BLOCK = {"idx": 0, "num": 1, "sub": 0}  # the running block of an SPMD launch (one vector lane per block)


def _blocks(n):
    """Run the body once per block of an SPMD launch, in block order; get_block_idx reads the index."""
    saved = dict(_BLOCK)
    try:
        for b in range(int(n)):
            _BLOCK.update(idx=b, num=int(n), sub=0)
            yield b
    finally:
        _BLOCK.update(saved)


def _spmd(n, launch):
    result = None
    for _ in _blocks(n):
        result = launch()
    return result


_PIPES = {}  # (direction, pipe id) -> tiles pushed and not yet popped, oldest first


def _pipe_push(direction, pipe_id, tile):
    _PIPES.setdefault((direction, pipe_id), []).append(tile.clone())


def _pipe_pop(direction, pipe_id):
    queue = _PIPES.get((direction, pipe_id))
    if not queue:
        raise RuntimeError(f"cross-core pipe {direction} id={pipe_id}: pop before any push; the torch rendering "
                           "runs a Group's kernels in the order it calls them (compiling submits the producer "
                           "first and turns pipes into GM slots): call the producer first, or render the "
                           "compiled program")
    return queue.pop(0)


def _fillpad_expand(x, valid, shape, pad):
    # the source's valid region at the top-left of a `shape` tensor; +-inf (float) or the integer max/min
    if pad == "zero":
        value = 0
    elif x.dtype.is_floating_point:
        value = float("inf") if pad == "max" else float("-inf")
    else:
        value = torch.iinfo(x.dtype).max if pad == "max" else torch.iinfo(x.dtype).min
    out = torch.full([int(d) for d in shape], value, dtype=x.dtype)
    region = _sl([0] * x.dim(), _valid_of(x, valid) or list(x.shape))
    out[region] = x[region]
    return out


def _unsupported(message):
    raise NotImplementedError(f"{message} (the program was defined, but this function cannot run)")


def _syncall():
    if _BLOCK["num"] > 1:
        raise NotImplementedError(
            "pl.system.syncall across the blocks of an SPMD launch: the torch rendering runs the blocks one after "
            "another, so a barrier between them cannot be honoured; run the program on a2a3sim or a5sim")


def _array_set(arr, index, value):
    """In place, like the one C++ array the orchestration codegen makes of an update chain."""
    arr[int(index)] = value
    return arr


def _ci(start, shape, dtype, descending):
    shape = [int(s) for s in shape]
    step = -1 if descending else 1
    row = int(start) + step * torch.arange(shape[-1], dtype=torch.int64)
    return row.reshape(shape).to(dtype)


def _random(seeds, shape, valid, dtype, rounds):
    """Philox-4x32 words in TRANDOM's element order (see pypto.passes._random), on int64 (products wrap)."""
    m = 0xFFFFFFFF
    rows, cols = (int(s) for s in shape)
    vcols = int(valid[1]) if valid else cols
    r, c = torch.arange(rows).reshape(-1, 1), torch.arange(cols).reshape(1, -1)
    carry = (c & 63) + (r * -(-vcols // 256) + (c >> 8)) * (cols // 4)
    x = []
    for w in seeds[2:]:
        total = carry + (int(w) & m)
        x.append(total & m)
        carry = total >> 32
    k0, k1 = int(seeds[0]) & m, int(seeds[1]) & m
    for _ in range(int(rounds)):
        p0, p1 = x[0] * 0xD2511F53, x[2] * 0xCD9E8D57
        x = [((p1 >> 32) & m) ^ x[1] ^ k0, p1 & m, ((p0 >> 32) & m) ^ x[3] ^ k1, p0 & m]
        k0, k1 = (k0 + 0x9E3779B9) & m, (k1 + 0xBB67AE85) & m
    q = (c >> 6) & 3
    out = torch.where(q == 0, x[0], torch.where(q == 1, x[1], torch.where(q == 2, x[2], x[3])))
    out = (out - ((out >> 31) << 32)).to(torch.int32)
    return _mark_valid(out if dtype == torch.int32 else out.view(dtype), valid)


def _part(a, b, kind):
    """Where both operands are valid apply the op, where one is valid copy it; the result covers both."""
    va = _valid_of(a, None) or list(a.shape)
    vb = _valid_of(b, None) or list(b.shape)
    ina = torch.zeros(a.shape, dtype=torch.bool)
    ina[_sl([0] * len(va), va)] = True
    inb = torch.zeros(b.shape, dtype=torch.bool)
    inb[_sl([0] * len(vb), vb)] = True
    if kind == "add":
        both = a + b
    elif kind == "max":
        both = torch.where(a > b, a, b)
    else:
        both = torch.where(a < b, a, b)
    out = torch.where(ina & inb, _same(a, both), torch.where(ina, a, torch.where(inb, b, torch.zeros_like(a))))
    return _mark_valid(out, [max(int(x), int(y)) for x, y in zip(va, vb)])


def _extract(src, row, col, shape):
    rows, cols = int(shape[0]), int(shape[1])
    vr, vc = _valid_of(src, None) or list(src.shape)
    if row < 0 or col < 0 or row + rows > vr or col + cols > vc:
        raise IndexError(f"tile.extract window ({row}, {col}) + ({rows}, {cols}) exceeds the source valid "
                         f"region ({vr}, {vc})")
    return src[int(row):int(row) + rows, int(col):int(col) + cols].clone()


def _prelu(x, slope):
    return _same(x, torch.where(x > 0, x, x * slope))


def _xors(a, s):
    return torch.bitwise_xor(a, torch.tensor(int(s)).to(a.dtype))


def _check(name, x, shape, dtype):
    assert tuple(x.shape) == tuple(shape), f"{name}: shape {tuple(x.shape)} != IR shape {tuple(shape)}"
    assert x.dtype == dtype, f"{name}: dtype {x.dtype} != IR dtype {dtype}"

# -- comm.* (distributed chip programs): the rendering models a world of one rank --------------------
_COMM = {"rank": 0, "nranks": 1}
_COMM_ATOMIC = {1: torch.add, 2: torch.maximum, 3: torch.minimum, 4: torch.mul}  # pto_comm_api.h CommAtomic


def _comm_peer(rank, what):
    """Only this rank exists: a peer must be it (or -1, local). Several ranks need the distributed sim."""
    r = int(rank)
    if r not in (-1, _COMM["rank"]):
        raise NotImplementedError(f"{what} addresses rank {r}: this torch rendering models one rank; run the "
                                  "program on a2a3sim/a5sim (DistributedCompiledProgram) for several ranks")


def _comm_cell(offsets):
    return tuple(int(o) for o in offsets)


def _comm_notify(signal, peer, offsets, value, op):
    _comm_peer(peer, "comm.notify")
    cell = _comm_cell(offsets)
    signal[cell] = value if op == 0 else signal[cell] + value  # 0 Set, 1 AtomicAdd
    return signal


def _comm_wait(signal, offsets, expected, cmp):
    have = int(signal[_comm_cell(offsets)])
    if not (have == int(expected) if cmp == 0 else have >= int(expected)):  # 0 Eq, 1 Ge
        raise RuntimeError(f"comm.wait on cell {list(_comm_cell(offsets))}: {have} is not "
                           f"{'==' if cmp == 0 else '>='} {int(expected)}, and no other rank exists to change it")
    return signal


def _comm_copy(dst, dst_rank, src, src_rank, atomic):
    _comm_peer(dst_rank, "comm.copy")
    _comm_peer(src_rank, "comm.copy")
    value = src.reshape(dst.shape).to(dst.dtype)
    dst.copy_(value if atomic == 0 else _COMM_ATOMIC[atomic](dst, value))
    return dst


def _sort32(src, idx):
    """Each 32-column block sorted descending (ties: lower index first) into (value, index bits) pairs."""
    rows, cols = src.shape
    vals = src.float().reshape(rows, cols // 32, 32)
    order = torch.sort(vals, dim=-1, descending=True, stable=True).indices
    out = torch.empty(rows, cols // 32, 64, dtype=torch.float32)
    out[..., 0::2] = torch.gather(vals, -1, order)
    bits = idx.to(torch.int32).reshape(rows, cols // 32, 32).view(torch.float32)
    out[..., 1::2] = torch.gather(bits.expand(rows, -1, -1), -1, order)
    return out.reshape(rows, 2 * cols)


def _mrgsort(src, block_len):
    """Every 4 runs of block_len slots of the row merged into one run, descending (earlier run first on ties)."""
    rows, cols = src.shape
    group = 4 * int(block_len)
    pairs = src.reshape(rows, cols // group, group // 2, 2)
    order = torch.sort(pairs[..., 0], dim=-1, descending=True, stable=True).indices
    return torch.gather(pairs, 2, order.unsqueeze(-1).expand(-1, -1, -1, 2)).reshape(rows, cols)


def _mrgsort_lists(*lists):
    """Sorted (value, index) rows of L slots merged into one of k * L, descending (earlier list first on ties)."""
    width, k = lists[0].shape[1], len(lists)
    filler = torch.full((1, (4 - k) * width), -3.4028234663852886e38)  # the runs no list fills
    return _mrgsort(torch.cat([*lists, filler], dim=1), width)[:, :k * width]


def _gather_mask(src, stride, phase, cols, dtype):
    """Column c of the first ``cols`` columns is kept when c % stride == phase; the bits read as ``dtype``."""
    out = src[:, int(phase):int(cols):int(stride)].contiguous()
    return out if dtype is None or dtype == out.dtype else out.view(dtype)


def _gather_dim(src, index, dim, src_shape=None, index_shape=None, col0=0):
    """torch.gather along ``dim``; a 2-D tile pair made of N-D tensors is viewed at their N-D shapes."""
    if src_shape is None:
        return torch.gather(src, int(dim), index.long())
    src = src[..., int(col0):int(col0) + int(src_shape[-1])].reshape(tuple(src_shape))
    out = torch.gather(src, int(dim), index.reshape(tuple(index_shape)).long())
    return out.reshape(index.shape)


_CMP = {"eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le, "gt": torch.gt, "ge": torch.ge}


def _gather_compare(src, kvalue, mode, cols, offset, count_dtype):
    """Per row, the first ``cols`` columns (+ offset) where ``src mode kvalue`` holds, and their count."""
    mode = mode if isinstance(mode, str) else list(_CMP)[int(mode)]
    hits = _CMP[mode](src, kvalue)
    dst = torch.zeros((src.shape[0], int(cols)), dtype=torch.int32)
    for r in range(src.shape[0]):
        found = torch.nonzero(hits[r]).flatten()[:int(cols)] + int(offset)
        dst[r, :found.numel()] = found.to(torch.int32)
    return dst, hits.sum(dim=1).reshape(1, -1).to(count_dtype)


def _scatter(base, index, src):
    """torch.scatter along the last axis (the index may cover fewer rows than ``base``)."""
    return base.clone().scatter_(1, index.long(), src)


def _scatter_mask(dst, x, stride, phase):
    """Row r of ``x`` into the columns of ``dst`` with c % stride == phase."""
    out = dst.clone()
    out[:, int(phase)::int(stride)] = x
    return out


def _scatter_update(base, index, src):
    """Whole rows: out[index.flat[k], :] = src[k, :]."""
    out = base.clone()
    out[index.reshape(-1).long()] = src
    return out


def _gather_row(acc, src, dst, off, shapes, valid=None):
    """The ``valid`` (default ``shapes``) window of ``src`` at ``off`` written into ``acc`` at ``dst``."""
    r, c = (int(v) for v in (valid if valid is not None else shapes))
    out = acc.clone()
    d0, d1, s0, s1 = (int(v) for v in (*dst, *off))
    out[d0:d0 + r, d1:d1 + c] = src[s0:s0 + r, s1:s1 + c]
    return out


def _paged_gather(src, indices, table, block_size, size, rows, col_off=0):
    """Row i = src[table[l // block_size] * block_size + l % block_size, col_off:col_off + size], l = indices[i]."""
    out = torch.zeros(rows, size, dtype=src.dtype)
    flat, pages = indices.reshape(-1).long(), table.reshape(-1).long()
    for i in range(min(rows, flat.numel())):
        logical = int(flat[i])
        phys = int(pages[logical // block_size]) * block_size + logical % block_size
        out[i] = src[phys, col_off:col_off + size]
    return out


def _mscatter(out, src, idx):
    """out.flat[idx[r, c]] = src[r, c], in place (a store into GM)."""
    out.view(-1)[idx.reshape(-1).long()] = src.reshape(-1).to(out.dtype)
    return out
'''
