#!/usr/bin/env python3
"""Rewrite a QDQ model's Gemm (transB = 1) as MatMul(A, Transpose(perm 1,0)
of its weight's DequantizeLinear), dropping its bias: seed 001 §4's QAS-INT8
"FullyConnected/Gemm/Matmul" row with B transposed, as a MatMul
(test_mcu_train_pool.sh). The weight codes, scales and every other node are
kept as they are.

    qdq_gemm_to_matmul.py IN.onnx OUT.onnx GEMM_NAME
"""
import sys

import onnx
from onnx import helper

m = onnx.load(sys.argv[1])
g = m.graph
nodes = list(g.node)
for i, n in enumerate(nodes):
    if n.op_type == "Gemm" and n.name == sys.argv[3]:
        assert any(a.name == "transB" and a.i == 1 for a in n.attribute)
        wt = n.input[1] + "__T"
        nodes[i:i + 1] = [helper.make_node("Transpose", [n.input[1]], [wt], name=n.name + "_BT", perm=[1, 0]),
                          helper.make_node("MatMul", [n.input[0], wt], list(n.output), name=n.name)]
        bias = n.input[2] if len(n.input) > 2 else None
        break
else:
    sys.exit("no Gemm named " + sys.argv[3])
if bias:  # its DequantizeLinear and initializers go with it
    dq = [n for n in nodes if bias in n.output]
    for d in dq:
        nodes.remove(d)
    used = {v for n in nodes for v in n.input}
    keep = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(keep)
del g.node[:]
g.node.extend(nodes)
onnx.checker.check_model(m)
onnx.save(m, sys.argv[2])
