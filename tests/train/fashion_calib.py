#!/usr/bin/python3
# fashion_calib.py DATA OUT N: the first N training images of an IDX data
# folder (gzip or not) as .npy files, float32 [1, 1, H, W] / 255 (the
# input `switchyard train` feeds), one sample each: the calibration set of
# `switchyard quantize`. Written by hand: no numpy needed.
import gzip, os, struct, sys

src, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
p = src + '/train-images-idx3-ubyte'
raw = gzip.open(p + '.gz').read() if os.path.exists(p + '.gz') else open(p, 'rb').read()
if raw[:4] != b'\x00\x00\x08\x03':
    sys.exit('%s: not an IDX file of uint8 images' % p)
h, w = struct.unpack('>II', raw[8:16])
os.makedirs(out, exist_ok=True)
for k in range(n):
    px = raw[16 + k * h * w: 16 + (k + 1) * h * w]
    hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, %d, %d), }" % (h, w)
    hdr += ' ' * (64 - (10 + len(hdr) + 1) % 64) + '\n'
    with open('%s/sample_%03d.npy' % (out, k), 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr.encode())
        f.write(struct.pack('<%df' % (h * w), *[p / 255.0 for p in px]))
