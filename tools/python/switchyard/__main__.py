"""python3 -m switchyard run MODEL ...: the `switchyard run` command over the Python API.

Same options, same output lines (inputs read, then each output's name,
dtype, shape, min/max/mean and the top-5 of a vector), same exit codes
(0 done, 1 failed, 2 usage).
"""
import argparse
import os
import sys

import numpy as np

import switchyard as sy
from switchyard import dtypes

USAGE = """usage: python3 -m switchyard run MODEL [--config INI] [--input-dir DIR | --input NAME=FILE ...]
                                    [--output-dir DIR] [--threads N] [--compiled FILE]
                                    [--requant onnx|gemmlowp|single_rounding]

Runs MODEL once and prints each output's name, dtype, shape and a summary
(top-5 for a vector), as `switchyard run` does (see its --help).
Inputs not given are filled with a deterministic pattern, and the tool says so."""


def usage_error(msg):
    sys.stderr.write("switchyard run: %s\n(see 'python3 -m switchyard run --help')\n" % msg)
    return 2


def fail(e, context=None):
    sys.stderr.write("switchyard: %s%s: %s\n" % (context + ": " if context else "", e.code_name, e.message))
    return 1


def dims_str(shape):
    return "[" + ",".join(str(d) for d in shape) + "]"


def as_float64(a, sy_dt):
    """Element values as the CLI reads them (bfloat16 bits widened to float)."""
    if sy_dt == dtypes.BFLOAT16:
        return (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return a.astype(np.float64)


def summary(label, name, a, sy_dt):
    line = "%s '%s' %s %s" % (label, name, dtypes.name(sy_dt), dims_str(a.shape))
    n = a.size
    if n == 0 or sy_dt not in dtypes._NUMPY and sy_dt != dtypes.BFLOAT16:
        return line + " (%d elements)\n" % n
    v = as_float64(a, sy_dt).ravel()
    ok = v[~np.isnan(v)]
    mn = ok.min() if ok.size else np.inf
    mx = ok.max() if ok.size else -np.inf
    total = np.cumsum(v)[-1]  # in element order, as the CLI adds them
    line += ": min %.6g max %.6g mean %.6g\n" % (mn, mx, total / n)
    if sum(d > 1 for d in a.shape) == 1 and n > 1:
        k = min(n, 5)
        top = np.argsort(-v, kind="stable")[:k]  # ties: the lower index first
        line += "  top-%d:%s\n" % (k, "".join(" [%d] %.6g" % (i, v[i]) for i in top))
    else:
        line += "  first:%s%s\n" % ("".join(" %.6g" % x for x in v[:6]), " ..." if n > 6 else "")
    return line


def _half_truncated(f32):
    """float32 -> float16 bits by truncation, as the CLI's pattern does (values in [-1, 1])."""
    x = f32.view(np.uint32)
    sign = (x >> 16) & 0x8000
    e = ((x >> 23) & 0xFF).astype(np.int64) - 127 + 15
    m = x & 0x7FFFFF
    bits = np.where(e <= 0, sign, sign | (np.clip(e, 0, 31).astype(np.uint32) << 10) | (m >> 13))
    return bits.astype(np.uint16).view(np.float16)


def pattern(vi):
    """The CLI's deterministic input: sin(0.1*i) scaled per dtype (tools/cli/common.c)."""
    shape = tuple(d if isinstance(d, int) else 1 for d in vi.shape)
    n = int(np.prod(shape, dtype=np.int64))
    i = np.arange(n, dtype=np.int64)
    v = np.sin(i.astype(np.float64) * 0.1).astype(np.float32)
    dt = vi.sy_dtype
    f100, f1000 = np.float32(100), np.float32(1000)
    table = {
        dtypes.FLOAT32: lambda: v,
        dtypes.FLOAT64: lambda: v.astype(np.float64),
        dtypes.FLOAT16: lambda: _half_truncated(v),
        dtypes.BFLOAT16: lambda: (v.view(np.uint32) >> 16).astype(np.uint16),
        dtypes.INT8: lambda: (v * f100).astype(np.int8),
        dtypes.UINT8: lambda: (np.float32(128) + v * f100).astype(np.uint8),
        dtypes.BOOL: lambda: (i & 1).astype(np.bool_),
        dtypes.INT16: lambda: (v * f1000).astype(np.int16),
        dtypes.UINT16: lambda: (i % 1000).astype(np.uint16),
        dtypes.INT32: lambda: (i % 7).astype(np.int32),
        dtypes.UINT32: lambda: (i % 7).astype(np.uint32),
        dtypes.INT64: lambda: i % 7,
        dtypes.UINT64: lambda: (i % 7).astype(np.uint64),
    }
    if dt not in table:
        raise sy.Error(sy.StatusCode.UNSUPPORTED, "cannot make a deterministic input for '%s' of dtype %s"
                       % (vi.name, vi.dtype_name))
    return table[dt]().reshape(shape)


def gather_inputs(model, input_dir, pairs, out):
    feeds = {}
    given = {}
    for p in pairs:
        name, eq, file = p.partition("=")
        if not eq:
            raise sy.Error(sy.StatusCode.INVALID_ARGUMENT, "--input '%s': expected NAME=FILE" % p)
        given[name] = file
    names = [vi.name for vi in model.inputs]
    for name in given:
        if name not in names:
            raise sy.Error(sy.StatusCode.NOT_FOUND, "--input %s=%s: the model has no input named '%s'"
                           % (name, given[name], name))
    for i, vi in enumerate(model.inputs):
        file = given.get(vi.name)
        if file is None and input_dir is not None:
            file = os.path.join(input_dir, "input_%d.pb" % i)
            if not os.path.exists(file):
                file = os.path.join(input_dir, "input_%d.npy" % i)
            if not os.path.exists(file):
                raise sy.Error(sy.StatusCode.NOT_FOUND, "%s/input_%d.pb (or .npy) not found for input %d '%s'"
                               % (input_dir, i, i, vi.name))
        if file is not None:
            a = sy.read_tensor(file)
            out.write("input %d '%s' %s %s from %s\n" % (i, vi.name, dtypes.name(dtypes.from_numpy(a.dtype)),
                                                       dims_str(a.shape), file))
        else:
            a = pattern(vi)
            out.write("input %d '%s' %s %s: no input given, using a deterministic pattern (sin(0.1*i))\n"
                      % (i, vi.name, vi.dtype_name, dims_str(a.shape)))
        feeds[vi.name] = a
    return feeds


def cmd_run(argv):
    ap = argparse.ArgumentParser(prog="python3 -m switchyard run", add_help=False)
    ap.add_argument("model", nargs="?")
    ap.add_argument("--config")
    ap.add_argument("--input-dir")
    ap.add_argument("--input", action="append", default=[])
    ap.add_argument("--output-dir")
    ap.add_argument("--threads")
    ap.add_argument("--compiled")
    ap.add_argument("--requant")
    ap.add_argument("-h", "--help", action="store_true")
    args, extra = ap.parse_known_args(argv)
    if args.help:
        print(USAGE)
        return 0
    if extra:
        return usage_error("unexpected argument '%s'" % extra[0])
    if not args.model:
        return usage_error("a MODEL path is required")
    if args.input_dir and args.input:
        return usage_error("--input-dir and --input cannot be combined")
    threads = 0
    if args.threads is not None:
        if not args.threads.isdigit() or not 1 <= int(args.threads) <= 256:
            return usage_error("--threads expects an integer from 1 to 256, got '%s'" % args.threads)
        threads = int(args.threads)
    if args.requant is not None and args.requant not in ("onnx", "gemmlowp", "single_rounding"):
        return usage_error("--requant expects onnx, gemmlowp or single_rounding, got '%s'" % args.requant)
    try:
        env = sy.Env(args.config)
    except sy.Error as e:
        return fail(e, args.config or "default configuration")
    try:
        model = sy.Model(args.model, env)
        session = sy.Session(env, model, threads=threads, requant=args.requant, compiled_cache=args.compiled)
    except sy.Error as e:
        return fail(e)
    try:
        feeds = gather_inputs(model, args.input_dir, args.input, sys.stdout)
    except sy.Error as e:
        return fail(e, args.model)
    try:
        outputs = session.run(feeds, copy=False)
    except sy.Error as e:
        return fail(e)
    if args.output_dir:
        try:
            os.makedirs(args.output_dir, exist_ok=True)
        except OSError as e:
            sys.stderr.write("switchyard: --output-dir %s: %s\n" % (args.output_dir, e.strerror))
            return 1
    for i, (vi, (name, a)) in enumerate(zip(session.outputs, outputs.items())):
        sys.stdout.write(summary("output %d" % i, name, a, vi.sy_dtype))
        if args.output_dir:
            file = "%s/output_%d.pb" % (args.output_dir, i)
            try:
                sy.write_tensor(file, a, name)
            except sy.Error as e:
                return fail(e)
            sys.stdout.write("  wrote %s\n" % file)
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if argv else 2
    if argv[0] == "run":
        return cmd_run(argv[1:])
    return usage_error("unknown command '%s' (this module has: run)" % argv[0])


if __name__ == "__main__":
    sys.exit(main())
