#!/usr/bin/env python3
"""ONNX test folders (model.onnx, test_data_set_0/{input,output}_K.pb) for
the riscv_mcu rows that ONNX's node tests do not cover with constant
weights: Gemm with transA = 1, batched MatMul with a constant B, Conv
with a 5-D input, an LSTM with all three outputs and constant initial
states, GRUs bidirectional / reverse with either linear_before_reset, fp32 RNNs
over ONNX's eleven activations (clip, sequence_lens, initial_h), Einsum
(fp32, int8, int32: matmul, batched, transpose, diagonal, sums, three
inputs, implicit output, outer product; ONNX's test_einsum_transpose as
float32 when ONNX_NODE names the node tests' folder), Unique (fp32, int8,
sorted and first-occurrence order, with and without an axis), and
int8 QLinearConv / QLinearMatMul (ops-mcu.md Table B #4, #5, #2, #20, #82,
#106, #87; ONNX's QLinearConv node test is uint8, which the row declines).
The integer outputs follow ONNX's definition exactly as its reference
implementation evaluates it: the int32 sum, times the float32 multiplier
x_scale * w_scale / y_scale (in float64), rounded half to even, plus the
zero point, saturated. The expected outputs are
numpy's (float64 sums rounded to float32), an independent reference:
`switchyard conformance` compares riscv_mcu's results with them within its
float tolerance.

    onnx_nn_cases.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(out, name, node, inputs, inits, outputs, feeds, expected, opset=13):
    d = os.path.join(out, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    g = helper.make_graph(node if isinstance(node, list) else [node], name, inputs, outputs, [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    onnx.save(m, os.path.join(d, "model.onnx"))
    for i, v in enumerate(feeds):
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(v).SerializeToString())
    for i, v in enumerate(expected):
        with open(os.path.join(d, "test_data_set_0", "output_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(v).SerializeToString())


def sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def lstm_ref(x, w, r, b, h, c):
    """ONNX LSTM, forward, default activations, gates i, o, f, c in W / R / B"""
    hs = r.shape[-1]
    wb, rb = b[0, :4 * hs], b[0, 4 * hs:]
    ys = []
    for t in range(x.shape[0]):
        g = x[t] @ w[0].T + h @ r[0].T + wb + rb
        i, o, f, cc = (g[:, k * hs:(k + 1) * hs] for k in range(4))
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(cc)
        h = sigmoid(o) * np.tanh(c)
        ys.append(h)
    return np.stack(ys)[:, None], h[None], c[None]


def gru_ref(x, w, r, b, h0, lbr, direction):
    """ONNX GRU, layout 0, gates z, r, h in W / R / B; Y [T, D, B, H], Y_h [D, B, H]"""
    dirs = 2 if direction == "bidirectional" else 1
    hs = r.shape[-1]
    T = x.shape[0]
    y = np.zeros((T, dirs, x.shape[1], hs))
    yh = np.zeros((dirs, x.shape[1], hs))
    for d in range(dirs):
        rev = d == 1 or direction == "reverse"
        wz, wr, wh = (w[d][k * hs:(k + 1) * hs] for k in range(3))
        rz, rr, rh = (r[d][k * hs:(k + 1) * hs] for k in range(3))
        bz, br, bh, cz, cr, ch = (b[d][k * hs:(k + 1) * hs] for k in range(6))
        h = h0[d]
        for t in (range(T - 1, -1, -1) if rev else range(T)):
            z = sigmoid(x[t] @ wz.T + h @ rz.T + bz + cz)
            rg = sigmoid(x[t] @ wr.T + h @ rr.T + br + cr)
            if lbr:
                n = np.tanh(x[t] @ wh.T + rg * (h @ rh.T + ch) + bh)
            else:
                n = np.tanh(x[t] @ wh.T + (rg * h) @ rh.T + ch + bh)
            h = (1 - z) * n + z * h
            y[t, d] = h
        yh[d] = h
    return y, yh


def rnn_act(name, v, alpha, beta):
    """ONNX's recurrent activations (onnx.ai RNN), alpha/beta already defaulted"""
    return {"Tanh": lambda: np.tanh(v), "Relu": lambda: np.maximum(v, 0), "Sigmoid": lambda: sigmoid(v),
            "Affine": lambda: alpha * v + beta, "LeakyRelu": lambda: np.where(v >= 0, v, alpha * v),
            "ThresholdedRelu": lambda: np.where(v > alpha, v, 0), "ScaledTanh": lambda: alpha * np.tanh(beta * v),
            "HardSigmoid": lambda: np.clip(alpha * v + beta, 0, 1), "Elu": lambda: np.where(v >= 0, v, alpha * np.expm1(v)),
            "Softsign": lambda: v / (1 + np.abs(v)), "Softplus": lambda: np.log1p(np.exp(v))}[name]()


def rnn_ref(x, w, r, b, h0, lens, direction, acts, clip):
    """ONNX RNN, layout 0: H_t = f(clip(X_t W^T + H_{t-1} R^T + Wb + Rb)); acts: one (name, alpha, beta) per
    direction. Steps past a row's sequence length give Y = 0 and a reverse direction starts at the row's own last
    step; a row of length 0 gives Y_h = 0 (ops-mcu.md Table B #114). Y [T, D, B, H], Y_h [D, B, H]"""
    dirs = 2 if direction == "bidirectional" else 1
    hs, T, Bn = r.shape[-1], x.shape[0], x.shape[1]
    y, yh = np.zeros((T, dirs, Bn, hs)), np.zeros((dirs, Bn, hs))
    for d in range(dirs):
        rev = d == 1 or direction == "reverse"
        for bn in range(Bn):
            n = T if lens is None else int(lens[bn])
            h = h0[d, bn]
            for t in (range(n - 1, -1, -1) if rev else range(n)):
                a = x[t, bn] @ w[d].T + h @ r[d].T + b[d, :hs] + b[d, hs:]
                if clip is not None:
                    a = np.clip(a, -clip, clip)
                h = rnn_act(acts[d][0], a, acts[d][1], acts[d][2])
                y[t, d, bn] = h
            yh[d, bn] = h if n else 0
    return y, yh


def requant(acc, xs, ws, ys, yz):
    m = (np.float32(xs) * ws.astype(np.float32)) / np.float32(ys)
    return np.clip(np.rint(acc.astype(np.float64) * m.astype(np.float64)) + yz, -128, 127).astype(np.int8)


def vt(name, a, dt):
    return helper.make_tensor_value_info(name, dt, list(a.shape))


def vi(name, a):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(a.shape))


def f32(rng, *shape):
    return rng.uniform(-1, 1, size=shape).astype(np.float32)


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(14)
    # Gemm transA = 1 (and transB = 1), C a row vector: Y = A^T B^T + C
    a, b, c = f32(rng, 5, 3), f32(rng, 4, 5), f32(rng, 4)
    y = (a.astype(np.float64).T @ b.astype(np.float64).T + c).astype(np.float32)
    save(out, "mcu_gemm_transA_transB", helper.make_node("Gemm", ["a", "b", "c"], ["y"], transA=1, transB=1),
         [vi("a", a)], {"b": b, "c": c}, [vi("y", y)], [a], [y])
    a, b = f32(rng, 6, 2), f32(rng, 6, 3)
    y = (a.astype(np.float64).T @ b.astype(np.float64)).astype(np.float32)
    save(out, "mcu_gemm_transA", helper.make_node("Gemm", ["a", "b"], ["y"], transA=1), [vi("a", a)], {"b": b},
         [vi("y", y)], [a], [y])
    # batched MatMul, B a constant of the same batch dims
    a, b = f32(rng, 2, 3, 4), f32(rng, 2, 4, 5)
    y = np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
    save(out, "mcu_matmul_3d_const_b", helper.make_node("MatMul", ["a", "b"], ["y"]), [vi("a", a)], {"b": b},
         [vi("y", y)], [a], [y])
    # Conv with a 5-D input: NCDHW, asymmetric pads, strides 1 and 2
    x, w, bias = f32(rng, 1, 2, 4, 5, 5), f32(rng, 3, 2, 2, 3, 3), f32(rng, 3)
    pads, strides = [1, 0, 1, 0, 1, 2], [1, 2, 2]
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(pads[i], pads[i + 3]) for i in range(3)])
    od = [(xp.shape[2 + i] - w.shape[2 + i]) // strides[i] + 1 for i in range(3)]
    y = np.zeros((1, 3, *od))
    for o in range(3):
        for d in range(od[0]):
            for h in range(od[1]):
                for q in range(od[2]):
                    z, r, s = d * strides[0], h * strides[1], q * strides[2]
                    win = xp[0, :, z:z + w.shape[2], r:r + w.shape[3], s:s + w.shape[4]]
                    y[0, o, d, h, q] = np.sum(win * w[o]) + bias[o]
    y = y.astype(np.float32)
    # LSTM: Y, Y_h, Y_c; B and the initial states constants
    T, Bn, I, Hs = 4, 2, 3, 5
    lx, lw, lr = f32(rng, T, Bn, I), f32(rng, 1, 4 * Hs, I), f32(rng, 1, 4 * Hs, Hs)
    lb, h0, c0 = f32(rng, 1, 8 * Hs), f32(rng, 1, Bn, Hs), f32(rng, 1, Bn, Hs)
    ys = [v.astype(np.float32) for v in lstm_ref(*(v.astype(np.float64) for v in (lx, lw, lr, lb, h0[0], c0[0])))]
    node = helper.make_node("LSTM", ["x", "w", "r", "b", "", "h0", "c0"], ["y", "y_h", "y_c"], hidden_size=Hs)
    save(out, "mcu_lstm_y_yh_yc", node, [vi("x", lx)], {"w": lw, "r": lr, "b": lb, "h0": h0, "c0": c0},
         [vi("y", ys[0]), vi("y_h", ys[1]), vi("y_c", ys[2])], [lx], ys, opset=14)
    # GRU: bidirectional with linear_before_reset and a runtime initial_h; reverse, Y_h only
    for name, direction, lbr, want_y in (("mcu_gru_bidir_lbr", "bidirectional", 1, True),
                                         ("mcu_gru_reverse", "reverse", 0, False)):
        D = 2 if direction == "bidirectional" else 1
        T, Bn, I, Hs = 3, 2, 4, 3
        gx, gw, gr = f32(rng, T, Bn, I), f32(rng, D, 3 * Hs, I), f32(rng, D, 3 * Hs, Hs)
        gb, gh = f32(rng, D, 6 * Hs), f32(rng, D, Bn, Hs)
        y64, yh64 = gru_ref(*(v.astype(np.float64) for v in (gx, gw, gr, gb, gh)), lbr, direction)
        y32, yh32 = y64.astype(np.float32), yh64.astype(np.float32)
        node = helper.make_node("GRU", ["x", "w", "r", "b", "", "h0"], ["y" if want_y else "", "y_h"], hidden_size=Hs,
                                direction=direction, linear_before_reset=lbr)
        outs = ([vi("y", y32)] if want_y else []) + [vi("y_h", yh32)]
        save(out, name, node, [vi("x", gx), vi("h0", gh)], {"w": gw, "r": gr, "b": gb}, outs, [gx, gh],
             ([y32] if want_y else []) + [yh32], opset=14)
    # RNN (fp32): Y and Y_h both outputs (rule 33); the eleven activations over the cases, alpha/beta given or
    # ONNX's defaults, clip, runtime initial_h and int32 sequence_lens (one row of length 0)
    defaults = {"Affine": (1.0, 0.0), "LeakyRelu": (0.01, 0), "ThresholdedRelu": (1.0, 0), "ScaledTanh": (1.0, 1.0),
                "HardSigmoid": (0.2, 0.5), "Elu": (1.0, 0)}
    for name, direction, acts, alphas, betas, clip, lens in (
            ("mcu_rnn_forward", "forward", None, None, None, None, None),
            ("mcu_rnn_bidir_relu_leaky_clip", "bidirectional", ["Relu", "LeakyRelu"], [0.2], None, 0.9, None),
            ("mcu_rnn_reverse_seq_lens", "reverse", ["Sigmoid"], None, None, None, [3, 0, 2]),
            ("mcu_rnn_bidir_affine_scaledtanh", "bidirectional", ["Affine", "ScaledTanh"], [0.5, 1.5, 0.7],
             [0.25, 0.8], None, [2, 3, 1]),
            ("mcu_rnn_bidir_hardsigmoid_elu", "bidirectional", ["HardSigmoid", "Elu"], None, None, None, None),
            ("mcu_rnn_bidir_softsign_softplus", "bidirectional", ["Softsign", "Softplus"], None, None, 2.5, None),
            ("mcu_rnn_thresholdedrelu", "forward", ["ThresholdedRelu"], [0.1], None, None, None)):
        D = 2 if direction == "bidirectional" else 1
        T, Bn, I, Hs = 3, 3, 4, 5
        rx, rw, rr = f32(rng, T, Bn, I), f32(rng, D, Hs, I), f32(rng, D, Hs, Hs)
        rb, rh = f32(rng, D, 2 * Hs), f32(rng, D, Bn, Hs)
        ia, ib, per = 0, 0, []
        for a in (acts or ["Tanh"] * D):
            al, be = defaults.get(a, (0.0, 0.0))
            if a in defaults and alphas and ia < len(alphas):
                al, ia = alphas[ia], ia + 1
            if a in ("Affine", "ScaledTanh", "HardSigmoid") and betas and ib < len(betas):
                be, ib = betas[ib], ib + 1
            per.append((a, np.float64(np.float32(al)), np.float64(np.float32(be))))
        sl = None if lens is None else np.array(lens, np.int32)
        y64, yh64 = rnn_ref(*(v.astype(np.float64) for v in (rx, rw, rr, rb, rh)), sl, direction, per,
                            None if clip is None else np.float64(np.float32(clip)))
        y32, yh32 = y64.astype(np.float32), yh64.astype(np.float32)
        attrs = {"hidden_size": Hs, "direction": direction}
        if acts:
            attrs["activations"] = acts
        if alphas:
            attrs["activation_alpha"] = alphas
        if betas:
            attrs["activation_beta"] = betas
        if clip is not None:
            attrs["clip"] = clip
        node = helper.make_node("RNN", ["x", "w", "r", "b", "sl" if sl is not None else "", "h0"], ["y", "y_h"],
                                **attrs)
        ins, feeds = [vi("x", rx)], [rx]
        if sl is not None:
            ins.append(vt("sl", sl, TensorProto.INT32))
            feeds.append(sl)
        ins.append(vi("h0", rh))
        feeds.append(rh)
        save(out, name, node, ins, {"w": rw, "r": rr, "b": rb}, [vi("y", y32), vi("y_h", yh32)], feeds, [y32, yh32],
             opset=14)
    # Einsum (Table B #60): inputs and output 2-4D, no ellipsis; numpy's einsum in float64 (rounded to float32)
    # and in int64 keeping the output's low bits (int8 and int32 wrap); ONNX's test_einsum_transpose as float32
    # (a permutation: its float64 values convert exactly on both sides)
    for name, eq, shapes, dt in (
            ("mcu_einsum_matmul", "ij,jk->ik", [(3, 4), (4, 5)], np.float32),
            ("mcu_einsum_batch_matmul", "bij,bjk->bik", [(2, 3, 4), (2, 4, 3)], np.float32),
            ("mcu_einsum_transpose_4d", "abcd->dbca", [(2, 3, 4, 5)], np.float32),
            ("mcu_einsum_diagonal", "bii->bi", [(3, 4, 4)], np.float32),
            ("mcu_einsum_reduce", "ijk->ik", [(3, 4, 5)], np.float32),
            ("mcu_einsum_three_inputs", "ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)], np.float32),
            ("mcu_einsum_implicit", "kj,ji", [(3, 4), (4, 2)], np.float32),
            ("mcu_einsum_outer", "ij,kl->ikjl", [(2, 3), (2, 2)], np.float32),
            ("mcu_einsum_int8_matmul", "ij,kj->ik", [(3, 6), (4, 6)], np.int8),
            ("mcu_einsum_int8_diagonal_sum", "bij,bjj->bi", [(2, 3, 4), (2, 4, 4)], np.int8),
            ("mcu_einsum_int32_batch", "bhij,bhjk->bhik", [(2, 2, 3, 4), (2, 2, 4, 2)], np.int32),
            ("mcu_einsum_uint8_matmul", "ij,jk->ik", [(2, 5), (5, 3)], np.uint8)):
        if dt == np.float32:
            xs = [f32(rng, *sh) for sh in shapes]
            ey = np.einsum(eq, *(v.astype(np.float64) for v in xs)).astype(np.float32)
        else:
            lo, hi = {np.int8: (-128, 128), np.uint8: (0, 256), np.int32: (-(1 << 20), 1 << 20)}[dt]
            xs = [rng.integers(lo, hi, size=sh).astype(dt) for sh in shapes]
            wide = np.einsum(eq, *(v.astype(np.int64) for v in xs))
            ey = (wide & (0xffffffff if dt == np.int32 else 0xff)).astype(np.uint32 if dt == np.int32 else np.uint8)
            ey = ey.view(dt)
        et = {np.float32: TensorProto.FLOAT, np.int8: TensorProto.INT8, np.int32: TensorProto.INT32,
              np.uint8: TensorProto.UINT8}[dt]
        names = ["x%d" % k for k in range(len(xs))]
        save(out, name, helper.make_node("Einsum", names, ["y"], equation=eq),
             [vt(nm, v, et) for nm, v in zip(names, xs)], {}, [vt("y", ey, et)], xs, [ey], opset=12)
    src = os.path.join(os.environ.get("ONNX_NODE", ""), "test_einsum_transpose")
    if os.path.isdir(src):
        def pb(p):
            t = onnx.TensorProto()
            with open(p, "rb") as f:
                t.ParseFromString(f.read())
            return numpy_helper.to_array(t)
        tx, ty = pb(src + "/test_data_set_0/input_0.pb"), pb(src + "/test_data_set_0/output_0.pb")
        tx32, ty32 = tx.astype(np.float32), ty.astype(np.float32)
        if not np.array_equal(tx32.T, ty32):
            sys.exit("test_einsum_transpose: the float32 copy is not a transpose")
        save(out, "test_einsum_transpose_f32", helper.make_node("Einsum", ["x"], ["y"], equation="ij->ji"),
             [vi("x", tx32)], {}, [vi("y", ty32)], [tx32], [ty32], opset=12)
    # Unique (Table B #109): ONNX's definition in numpy (np.unique, sorted = 1; sorted = 0 reorders the unique
    # values by their first occurrence), int64 indices; fp32 and int8, 1D and with an axis (the output length
    # depends on the data: planned at its bound, see docs/mcu.md)
    def unique_ref(x, axis, srt):
        y, idx, inv, cnt = np.unique(x, axis=axis, return_index=True, return_inverse=True, return_counts=True)
        inv = inv.reshape(-1)
        if not srt:
            order = np.argsort(idx, kind="stable")
            rank = np.empty_like(order)
            rank[order] = np.arange(len(order))
            y = np.take(y, order, axis=0 if axis is None else axis)
            idx, cnt, inv = idx[order], cnt[order], rank[inv]
        return [y, idx.astype(np.int64), inv.astype(np.int64), cnt.astype(np.int64)]
    for name, ux, axis, srt in (
            ("mcu_unique_f32_unsorted", np.array([2.5, -1, 2.5, 7, -1, 0.5, 7, 7], np.float32), None, 0),
            ("mcu_unique_f32_axis_unsorted", rng.integers(0, 2, size=(2, 3, 4)).astype(np.float32), -1, 0),
            ("mcu_unique_int8_sorted_axis", np.array([[3, -7, 3], [3, -7, 3], [-128, 127, 0], [3, -7, 3]], np.int8), 0, 1),
            ("mcu_unique_int8_unsorted", np.array([5, -3, 5, 100, -128, -3, 0, 5], np.int8), None, 0),
            ("mcu_unique_uint8_sorted", np.array([200, 3, 255, 3, 0, 200], np.uint8), None, 1),
            ("mcu_unique_int32_unsorted", np.array([70000, -5, 70000, 2147483647, -5], np.int32), None, 0)):
        outs = unique_ref(ux, axis, srt)
        et = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int8): TensorProto.INT8,
              np.dtype(np.uint8): TensorProto.UINT8, np.dtype(np.int32): TensorProto.INT32}[ux.dtype]
        attrs = {"sorted": srt}
        if axis is not None:
            attrs["axis"] = axis
        node = helper.make_node("Unique", ["x"], ["y", "indices", "inverse_indices", "counts"], **attrs)
        ovi = [vt("y", outs[0], et)] + [vt(k, v, TensorProto.INT64) for k, v in
                                        zip(("indices", "inverse_indices", "counts"), outs[1:])]
        save(out, name, node, [vt("x", ux, et)], {}, ovi, [ux], outs, opset=11)
    # a Unique whose Y another node reads (Neg): a package cannot hold it (codegen refuses, quoting the seed's
    # "must be terminal graph outputs"); the host run infers Neg's shape with the data in hand
    ux = np.array([2.5, -1, 2.5, 7], np.float32)
    uy, uidx = unique_ref(ux, None, 1)[:2]
    save(out, "mcu_unique_then_neg", [helper.make_node("Unique", ["x"], ["y", "indices"]),
                                      helper.make_node("Neg", ["y"], ["z"])],
         [vt("x", ux, TensorProto.FLOAT)], {}, [vt("z", uy, TensorProto.FLOAT), vt("indices", uidx, TensorProto.INT64)],
         [ux], [-uy, uidx], opset=11)
    # QLinearConv int8: per-channel w_scale, int32 B, asymmetric pads, strides (2, 1)
    qx = rng.integers(-128, 128, size=(1, 3, 5, 6)).astype(np.int8)
    qw = rng.integers(-127, 128, size=(4, 3, 3, 3)).astype(np.int8)
    qb = rng.integers(-3000, 3000, size=4).astype(np.int32)
    xs, xz, ys, yz = np.float32(0.05), np.int8(3), np.float32(0.4), np.int8(-5)
    ws, wz = (rng.uniform(0.002, 0.02, size=4)).astype(np.float32), np.zeros(4, np.int8)
    qpads, qstr = [1, 0, 0, 2], [2, 1]
    xp = np.pad(qx.astype(np.int64) - xz, [(0, 0), (0, 0), (qpads[0], qpads[2]), (qpads[1], qpads[3])])
    oh, ow = (xp.shape[2] - 3) // qstr[0] + 1, (xp.shape[3] - 3) // qstr[1] + 1
    acc = np.zeros((1, 4, oh, ow), np.int64)
    for o in range(4):
        for i in range(oh):
            for j in range(ow):
                win = xp[0, :, i * qstr[0]:i * qstr[0] + 3, j * qstr[1]:j * qstr[1] + 3]
                acc[0, o, i, j] = np.sum(win * (qw[o].astype(np.int64) - wz[o])) + qb[o]
    qy = requant(acc, xs, ws.reshape(1, 4, 1, 1), ys, yz)
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["y"], pads=qpads,
                            strides=qstr)
    save(out, "mcu_qlinearconv_int8", node, [vt("x", qx, TensorProto.INT8)],
         {"xs": np.array(xs), "xz": np.array(xz), "w": qw, "ws": ws, "wz": wz, "ys": np.array(ys), "yz": np.array(yz),
          "b": qb}, [vt("y", qy, TensorProto.INT8)], [qx], [qy])
    # QLinearMatMul int8, 3-D: one B per batch, per-column b_scale
    qa = rng.integers(-128, 128, size=(2, 3, 4)).astype(np.int8)
    qbm = rng.integers(-128, 128, size=(2, 4, 5)).astype(np.int8)
    az, bzv, bsv = np.int8(-2), np.full(5, 1, np.int8), rng.uniform(0.01, 0.05, size=5).astype(np.float32)
    acc = np.matmul(qa.astype(np.int64) - az, qbm.astype(np.int64) - bzv.astype(np.int64))
    qy = requant(acc, np.float32(0.03), bsv, np.float32(0.05), np.int8(7))
    node = helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"])
    save(out, "mcu_qlinearmatmul_3d_int8", node, [vt("a", qa, TensorProto.INT8)],
         {"as": np.array(np.float32(0.03)), "az": np.array(az), "b": qbm, "bs": bsv, "bz": bzv,
          "ys": np.array(np.float32(0.05)), "yz": np.array(np.int8(7))}, [vt("y", qy, TensorProto.INT8)], [qa], [qy])
    save(out, "mcu_conv3d_pads_strides", helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=pads, strides=strides),
         [vi("x", x)], {"w": w, "b": bias}, [vi("y", y)], [x], [y])


if __name__ == "__main__":
    main()
