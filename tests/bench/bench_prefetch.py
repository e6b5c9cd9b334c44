#!/usr/bin/env python3
"""Prefetch throughput of kcached against `zstd -d | xxhsum -H2` on the same files.

Builds a provider of COUNT modules from one cubin (each made unique by a trailer after the ELF
image, optionally with incompressible bytes to lower the compression ratio), packs it with
kcache-pack, then times, with the files in the page cache each time:
  stream    cat *.zst | zstd -dc | xxhsum -H2          (one decompress+hash pipeline)
  per-file  zstd -dc F | xxhsum -H2, for each module    (a digest per module, as verify needs)
  verify    kcache-pack verify DIR: the daemon's code reading, decoding and checking every
            module (bounded zstd decode, size and XXH3 check, ELF inspection), no publishing
  kcached   status.prefetch.busy_s once prefetch.done == COUNT (first job start to last job end):
            read, bounded zstd decode, size and XXH3 check, ELF inspection, stage (hash, write,
            fsync) and publish into objects/.
Usage: bench_prefetch.py BUILD_DIR CUBIN COUNT [--random-bytes N] [--workdir DIR]
"""
import argparse, glob, json, os, shutil, subprocess, sys, time


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def warm(files):
    for f in files:
        with open(f, 'rb') as fh:
            while fh.read(1 << 20):
                pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('build'), ap.add_argument('cubin'), ap.add_argument('count', type=int)
    ap.add_argument('--random-bytes', type=int, default=0)
    ap.add_argument('--workdir', default='/tmp/kcache-bench-prefetch')
    a = ap.parse_args()
    w = a.workdir
    shutil.rmtree(w, ignore_errors=True)
    os.makedirs(w + '/bin')
    base = open(a.cubin, 'rb').read()
    inputs = []
    for i in range(a.count):
        path = f'{w}/bin/m{i:05d}.cubin'
        with open(path, 'wb') as f:
            f.write(base + b'kcache-bench-%08d' % i + os.urandom(a.random_bytes))
        inputs.append(f'sm_90a={path}')
    run([a.build + '/tools/kcache-pack/kcache-pack', '--name', 'bench', '--package', 'bench',
         '--version', '1.0', '--backend', 'cuda-13.0', '--out', w + '/root/p'] + inputs,
        stdout=subprocess.DEVNULL)
    zst = sorted(glob.glob(w + '/root/p/sm_90a/*.zst'))
    raw = sum(os.path.getsize(p) for p in glob.glob(w + '/bin/*.cubin'))
    packed = sum(os.path.getsize(p) for p in zst)
    mb = raw / 1e6
    print(f'{a.count} modules, {mb:.1f} MB decompressed, {packed / 1e6:.1f} MB zstd '
          f'(ratio {raw / packed:.1f})')

    warm(zst)
    t = time.monotonic()
    run('cat ' + ' '.join(zst) + ' | zstd -dc | xxhsum -H2', shell=True, stdout=subprocess.DEVNULL)
    stream = time.monotonic() - t
    warm(zst)
    t = time.monotonic()
    for f in zst:
        run(f'zstd -dc {f} | xxhsum -H2', shell=True, stdout=subprocess.DEVNULL)
    per_file = time.monotonic() - t

    warm(zst)
    t = time.monotonic()
    run([a.build + '/tools/kcache-pack/kcache-pack', 'verify', w + '/root/p'],
        stdout=subprocess.DEVNULL)
    verify = time.monotonic() - t

    warm(zst)
    sock = w + '/kc.sock'
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS='unix:path=/nonexistent')
    t = time.monotonic()
    daemon = subprocess.Popen([a.build + '/daemon/kcached', '--cache-dir', w + '/cache', '--socket',
                               sock, '--devices', '9.0', '--provider-root', w + '/root',
                               '--log-level', 'warn'], env=env)
    try:
        while True:
            r = subprocess.run([a.build + '/tools/kcachectl/kcachectl', '--socket', sock, 'status',
                                '--json'], capture_output=True, text=True)
            if r.returncode == 0:
                p = json.loads(r.stdout)['prefetch']
                if p['done'] + p['failed'] >= a.count:
                    break
            time.sleep(0.01)
        # The daemon's own clock: from the first prefetch job to the last (start-up excluded).
        daemon_s = p['busy_s']
        assert p['failed'] == 0, p
    finally:
        daemon.terminate()
        daemon.wait()
    for name, s in (('zstd -dc | xxhsum -H2 (stream)', stream),
                    ('zstd -dc | xxhsum -H2 (per file)', per_file),
                    ('kcache-pack verify (no publish)', verify),
                    ('kcached prefetch (publish incl.)', daemon_s)):
        print(f'{name:36s} {s:7.2f} s  {mb / s:8.1f} MB/s')


if __name__ == '__main__':
    sys.exit(main())
