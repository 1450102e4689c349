#!/usr/bin/python3
# fashion_folders.py DATA OUT NTRAIN NTEST [IDXOUT]: the first NTRAIN training and
# NTEST test images of an IDX data folder (gzip or not) as the folder layout
# of `switchyard train --data`: OUT/train holds batches of 64 as .npy pairs
# (input_K float32 [64, 1, H, W] = pixel / 255, label_K int64 [64]); OUT/test
# one sample per pair as ONNX TensorProto .pb files (input_K float32
# [1, H, W], label_K an int32 scalar). IDXOUT, when given, receives the same
# samples as IDX files (uncompressed), so both layouts can be trained on and
# compared. Written by hand: no numpy or onnx.
import gzip, os, struct, sys

src, out, n_train, n_test = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
idx_out = sys.argv[5] if len(sys.argv) > 5 else None


def idx(name):
    p = '%s/%s' % (src, name)
    return gzip.open(p + '.gz').read() if os.path.exists(p + '.gz') else open(p, 'rb').read()


def npy(path, descr, shape, payload):
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, ''.join('%d, ' % d for d in shape))
    hdr += ' ' * (64 - (10 + len(hdr) + 1) % 64) + '\n'
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr.encode() + payload)


def varint(v):
    b = b''
    while True:
        c = v & 0x7f
        v >>= 7
        if v:
            b += bytes([c | 0x80])
        else:
            return b + bytes([c])


def pb(path, dims, data_type, raw):
    # TensorProto: dims = 1 (varint), data_type = 2 (varint), raw_data = 9 (bytes)
    m = b''.join(b'\x08' + varint(d) for d in dims) + b'\x10' + varint(data_type)
    m += b'\x4a' + varint(len(raw)) + raw
    with open(path, 'wb') as f:
        f.write(m)


for split, prefix, n in (('train', 'train', n_train), ('test', 't10k', n_test)):
    im, lb = idx(prefix + '-images-idx3-ubyte'), idx(prefix + '-labels-idx1-ubyte')
    if im[:4] != b'\x00\x00\x08\x03' or lb[:4] != b'\x00\x00\x08\x01':
        sys.exit('%s: not IDX files of uint8 images and labels' % src)
    h, w = struct.unpack('>II', im[8:16])
    if idx_out:
        os.makedirs(idx_out, exist_ok=True)
        with open('%s/%s-images-idx3-ubyte' % (idx_out, prefix), 'wb') as f:
            f.write(im[:4] + struct.pack('>III', n, h, w) + im[16:16 + n * h * w])
        with open('%s/%s-labels-idx1-ubyte' % (idx_out, prefix), 'wb') as f:
            f.write(lb[:4] + struct.pack('>I', n) + lb[8:8 + n])
    d = '%s/%s' % (out, split)
    os.makedirs(d, exist_ok=True)
    px = lambda k: struct.pack('<%df' % (h * w), *[p / 255.0 for p in im[16 + k * h * w:16 + (k + 1) * h * w]])
    if split == 'train':
        for b, at in enumerate(range(0, n, 64)):
            ks = range(at, min(at + 64, n))
            npy('%s/input_%d.npy' % (d, b), '<f4', (len(ks), 1, h, w), b''.join(px(k) for k in ks))
            npy('%s/label_%d.npy' % (d, b), '<i8', (len(ks),), struct.pack('<%dq' % len(ks), *[lb[8 + k] for k in ks]))
    else:
        for k in range(n):
            pb('%s/input_%d.pb' % (d, k), (1, h, w), 1, px(k))
            pb('%s/label_%d.pb' % (d, k), (), 6, struct.pack('<i', lb[8 + k]))
