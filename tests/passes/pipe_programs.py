"""Programs for test_cross_core_pipes: explicit pipes between a Group's kernels, pl.spmd over a
mixed region and pl.system.syncall barriers (pypto's own small programs)."""

from __future__ import annotations

import pypto.language as pl

D = 16
R, C = 16, 16
B, RT, K, N = 3, 16, 32, 16
SB, SR, SC = 4, 8, 32  # syncall: blocks, rows per block, columns


@pl.program
class TwoPipes:
    """AIV pushes x*y (pipe 1, first) and x+y (pipe 0) to AIC, which multiplies them."""

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, x: pl.Tensor[[D, D], pl.FP32], y: pl.Tensor[[D, D], pl.FP32], o: pl.Out[pl.Tensor[[D, D], pl.FP32]]):
        peer = pl.import_peer_buffer(name="slots", peer_func="cube")
        pl.aiv_initialize_pipe(pl.const(0, pl.INT32), peer, dir_mask=2, slot_size=D * D * 4, id=0)
        xt: pl.Tile[[D, D], pl.FP32, pl.Mem.Vec] = pl.load(x, [0, 0], [D, D])
        yt: pl.Tile[[D, D], pl.FP32, pl.Mem.Vec] = pl.load(y, [0, 0], [D, D])
        prod = pl.mul(xt, yt)
        total = pl.add(xt, yt)
        pl.tpush_to_aic(prod, split=0, id=1)
        pl.system.tpush_to_aic(total, split=0, id=0)

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, x: pl.Tensor[[D, D], pl.FP32], y: pl.Tensor[[D, D], pl.FP32],
             o: pl.Out[pl.Tensor[[D, D], pl.FP32]]) -> pl.Tensor[[D, D], pl.FP32]:
        buf = pl.reserve_buffer(name="slots", size=8 * D * D * 4, base=pl.AUTO)
        pl.aic_initialize_pipe(pl.const(0, pl.INT32), buf, dir_mask=2, slot_size=D * D * 4, id=0)
        total: pl.Tile[[D, D], pl.FP32, pl.Mem.Mat] = pl.tpop_from_aiv(split=0, id=0)
        prod: pl.Tile[[D, D], pl.FP32, pl.Mem.Mat] = pl.tpop_from_aiv(split=0, id=1)
        acc: pl.Tile[[D, D], pl.FP32] = pl.matmul(pl.move(total, target_memory=pl.Mem.Left),
                                                  pl.move(prod, target_memory=pl.Mem.Right))
        pl.tfree_to_aiv(total, id=0)
        pl.system.tfree_to_aiv(prod, id=1)
        return pl.store(acc, [0, 0], o)

    @pl.function(type=pl.FunctionType.Group)
    def group(self, x: pl.Tensor[[D, D], pl.FP32], y: pl.Tensor[[D, D], pl.FP32],
              o: pl.Out[pl.Tensor[[D, D], pl.FP32]]) -> pl.Tensor[[D, D], pl.FP32]:
        r = self.cube(x, y, o)  # the consumer is called first: pypto submits the producer first
        self.vec(x, y, o)
        return r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[D, D], pl.FP32], y: pl.Tensor[[D, D], pl.FP32],
             o: pl.Out[pl.Tensor[[D, D], pl.FP32]]) -> pl.Tensor[[D, D], pl.FP32]:
        return self.group(x, y, o)


@pl.program
class NarrowedPush:
    """AIC narrows its accumulator to a run-time valid region and pushes it; AIV pops that region, adds 2."""

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, a: pl.Tensor[[R, C], pl.BF16], b: pl.Tensor[[R, C], pl.BF16], o: pl.Out[pl.Tensor[[R, C], pl.FP32]],
             vr: pl.Scalar[pl.INDEX], vc: pl.Scalar[pl.INDEX]):
        am: pl.Tile[[R, C], pl.BF16, pl.Mem.Mat] = pl.load(a, [0, 0], [R, C], target_memory=pl.Mem.Mat)
        bm: pl.Tile[[R, C], pl.BF16, pl.Mem.Mat] = pl.load(b, [0, 0], [R, C], target_memory=pl.Mem.Mat)
        acc: pl.Tile[[R, C], pl.FP32] = pl.matmul(pl.move(am, target_memory=pl.Mem.Left),
                                                  pl.move(bm, target_memory=pl.Mem.Right))
        part: pl.Tile[[R, C], pl.FP32, pl.Mem.Acc, pl.TileView(valid_shape=[vr, vc])] = pl.tile.set_validshape(
            acc, vr, vc)
        pl.tpush_to_aiv(part, split=1)

    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, a: pl.Tensor[[R, C], pl.BF16], b: pl.Tensor[[R, C], pl.BF16], o: pl.Out[pl.Tensor[[R, C], pl.FP32]],
            vr: pl.Scalar[pl.INDEX], vc: pl.Scalar[pl.INDEX]) -> pl.Tensor[[R, C], pl.FP32]:
        got: pl.Tile[[R, C], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[vr, vc])] = pl.tpop_from_aic(split=1)
        up: pl.Tile[[R, C], pl.FP32] = pl.add(got, 2.0)
        pl.tfree_to_aic(got)
        return pl.store(up, [0, 0], o)

    @pl.function(type=pl.FunctionType.Group)
    def group(self, a: pl.Tensor[[R, C], pl.BF16], b: pl.Tensor[[R, C], pl.BF16], o: pl.Out[pl.Tensor[[R, C], pl.FP32]],
              vr: pl.Scalar[pl.INDEX], vc: pl.Scalar[pl.INDEX]) -> pl.Tensor[[R, C], pl.FP32]:
        self.cube(a, b, o, vr, vc)
        return self.vec(a, b, o, vr, vc)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[R, C], pl.BF16], b: pl.Tensor[[R, C], pl.BF16], vs: pl.Tensor[[2], pl.INDEX],
             o: pl.Out[pl.Tensor[[R, C], pl.FP32]]) -> pl.Tensor[[R, C], pl.FP32]:
        vr: pl.Scalar[pl.INDEX] = pl.tensor.read(vs, [0])
        vc: pl.Scalar[pl.INDEX] = pl.tensor.read(vs, [1])
        return self.group(a, b, o, vr, vc)


@pl.program
class SpmdMixed:
    """Per block: the vector half halves a row band, the cube multiplies it, the vector half adds relu + 1."""

    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[B * RT, K], pl.FP32], w: pl.Tensor[[K, N], pl.FP32],
             out: pl.Out[pl.Tensor[[B * RT, N], pl.FP32]]) -> pl.Tensor[[B * RT, N], pl.FP32]:
        for blk in pl.spmd(B, name_hint="mm_epi"):
            r0 = blk * RT
            half = pl.mul(pl.slice(x, [RT, K], [r0, 0]), 0.5)
            acc = pl.matmul(half, w)
            out = pl.assemble(out, pl.add(pl.relu(acc), 1.0), [r0, 0])
        return out


@pl.program
class Barrier:
    """Each block computes 3x of its band, waits for every block, then adds its input again."""

    @pl.function(type=pl.FunctionType.InCore)
    def step(self, x: pl.Tensor[[SB * SR, SC], pl.FP32],
             out: pl.Out[pl.Tensor[[SB * SR, SC], pl.FP32]]) -> pl.Tensor[[SB * SR, SC], pl.FP32]:
        r0 = pl.tile.get_block_idx() * SR
        xt = pl.load(x, [r0, 0], [SR, SC])
        tripled = pl.muls(xt, 3.0)
        pl.system.syncall(core_type="aiv_only")
        out = pl.store(pl.add(tripled, xt), [r0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[SB * SR, SC], pl.FP32],
             out: pl.Out[pl.Tensor[[SB * SR, SC], pl.FP32]]) -> pl.Tensor[[SB * SR, SC], pl.FP32]:
        with pl.spmd(SB):
            out = self.step(x, out)
        return out


@pl.program
class SpmdMixedTransposed:
    """Per block: ((x_band + 1) @ w + 1) transposed; the transpose is of a tile the kernel computed."""

    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[B * RT, K], pl.FP32], w: pl.Tensor[[K, RT], pl.FP32],
             out: pl.Out[pl.Tensor[[B * RT, RT], pl.FP32]]) -> pl.Tensor[[B * RT, RT], pl.FP32]:
        for blk in pl.spmd(B, name_hint="mm_t"):
            r0 = blk * RT
            acc = pl.matmul(pl.add(pl.slice(x, [RT, K], [r0, 0]), 1.0), w)
            out = pl.assemble(out, pl.transpose(pl.add(acc, 1.0), axis1=0, axis2=1), [r0, 0])
        return out


@pl.program
class SoftBarrierAiv:
    """An explicit AIV kernel with a soft barrier (GM workspace): each block doubles its band, then adds 1."""

    @pl.function(type=pl.FunctionType.AIV)
    def step(self, x: pl.Tensor[[SB * SR, SC], pl.FP32], ws: pl.Tensor[[16], pl.INT32],
             out: pl.Out[pl.Tensor[[SB * SR, SC], pl.FP32]]) -> pl.Tensor[[SB * SR, SC], pl.FP32]:
        r0 = pl.tile.get_block_idx() * SR
        doubled = pl.muls(pl.load(x, [r0, 0], [SR, SC]), 2.0)
        pl.system.syncall(mode="soft", core_type="aiv_only", gm_workspace=ws, used_cores=SB)
        out = pl.store(pl.adds(doubled, 1.0), [r0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[SB * SR, SC], pl.FP32], ws: pl.Tensor[[16], pl.INT32],
             out: pl.Out[pl.Tensor[[SB * SR, SC], pl.FP32]]) -> pl.Tensor[[SB * SR, SC], pl.FP32]:
        with pl.spmd(SB):
            out = self.step(x, ws, out)
        return out
