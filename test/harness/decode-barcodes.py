# Reads every barcode and 2D code in a greyscale PGM image (pdftoppm -gray) with zxing-cpp, an
# independent reader from Debian (python3-zxing-cpp), and prints them as JSON lines
# {"format": ..., "text": ...}. The tests use it for the symbologies zbarimg cannot read
# (Data Matrix, PDF417, Aztec). Usage: /usr/bin/python3 decode-barcodes.py IMAGE.pgm FORMAT...
# (FORMAT: a zxing-cpp format name such as DataMatrix). One format at a time: Debian's build
# asserts when it compares a stacked code's result with another symbology's. Put one code on a
# page: the image is cut to it first.
import json
import sys

import numpy
import zxingcpp


def read_pgm(path):
    with open(path, 'rb') as f:
        data = f.read()
    fields = []
    i = 0
    while len(fields) < 4:
        while data[i:i + 1].isspace():
            i += 1
        if data[i:i + 1] == b'#':
            while data[i:i + 1] not in (b'\n', b''):
                i += 1
            continue
        start = i
        while not data[i:i + 1].isspace():
            i += 1
        fields.append(data[start:i])
    if fields[0] != b'P5' or int(fields[3]) > 255:
        raise SystemExit(f'{path}: not an 8-bit binary PGM')
    width, height = int(fields[1]), int(fields[2])
    pixels = data[i + 1:i + 1 + width * height]
    return numpy.frombuffer(pixels, dtype=numpy.uint8).reshape((height, width))


def around_the_ink(image):
    # zxing-cpp misses a small Data Matrix or Aztec code on a whole page it reads at once when
    # cut out: the image is cut to the dark pixels and a white margin (one code per page).
    ys, xs = numpy.nonzero(image < 128)
    if len(ys) == 0:
        return image
    margin = max(40, (ys.max() - ys.min()) // 4)
    top, left = max(0, ys.min() - margin), max(0, xs.min() - margin)
    return numpy.ascontiguousarray(image[top:ys.max() + margin, left:xs.max() + margin])


image = around_the_ink(read_pgm(sys.argv[1]))
for name in sys.argv[2:]:
    for result in zxingcpp.read_barcodes(image, formats=getattr(zxingcpp.BarcodeFormat, name)):
        print(json.dumps({'format': name, 'text': result.text}))
