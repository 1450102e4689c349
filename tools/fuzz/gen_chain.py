#!/usr/bin/env python3
"""Write an ONNX model that is a chain of N Relu nodes (v0 -> v1 -> ... -> vN),
float32 [16], with the protobuf wire format written by hand (no onnx package).
It measures what a huge graph costs to load and run:
    python3 tools/fuzz/gen_chain.py 1000000 chain.onnx
"""
import sys


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(num, payload):  # length-delimited
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def field_int(num, v):
    return varint(num << 3) + varint(v)


def value_info(name, dim):
    shape = field(1, field_int(1, dim))                   # TensorShapeProto.dim[0].dim_value
    tensor = field_int(1, 1) + field(2, shape)            # elem_type FLOAT, shape
    return field(1, name.encode()) + field(2, field(1, tensor))


def main():
    n, path = int(sys.argv[1]), sys.argv[2]
    with open(path, "wb") as f:
        nodes = bytearray()
        for i in range(n):
            node = field(1, b"v%d" % i) + field(2, b"v%d" % (i + 1)) + field(4, b"Relu")
            nodes += field(1, node)                      # GraphProto.node
        graph = bytes(nodes) + field(2, b"chain") + field(11, value_info("v0", 16)) + field(12, value_info("v%d" % n, 16))
        model = field_int(1, 8) + field(8, field(1, b"") + field_int(2, 13)) + field(7, graph)
        f.write(model)


if __name__ == "__main__":
    main()
