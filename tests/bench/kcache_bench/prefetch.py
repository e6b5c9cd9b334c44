"""Prefetch throughput: a provider of many modules (1 GiB decompressed in the full run) read,
decoded, verified and published by kcached, against `zstd -d | xxhsum -H2` on the same files.

Each module is a real NVRTC cubin made unique by a trailer and `module_random` incompressible
bytes (a zstd ratio near real provider wheels'), packed with kcache-pack (zstd level 3). With
the files in the page cache each time it times:
  stream    cat *.zst | zstd -dc | xxhsum -H2     one decode+hash pipeline over every file
  per file  zstd -dc F | xxhsum -H2 per module    a digest per module, as verification needs
            (on a sample of `per_file_sample` modules: it is process start-up bound)
  verify    kcache-pack verify: kcache's reader — bounded decode, size, XXH3, ELF — no publish
  kcached   status.prefetch.busy_s, first prefetch job to last: the above plus staging (write,
            fsync) and publishing every module into objects/ with its index entry
"""
import glob
import os
import shutil
import subprocess
import time

from .common import Daemon, BenchError


def warm(files):
    for f in files:
        with open(f, 'rb') as fh:
            while fh.read(1 << 20):
                pass


def timed(cmd, **kw):
    t = time.monotonic()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, **kw)
    return time.monotonic() - t


def run(ctx):
    tools, cfg = ctx.tools, ctx.cfg
    w = f'{ctx.workdir}/prefetch'
    shutil.rmtree(w, ignore_errors=True)
    os.makedirs(w + '/bin')
    cubin = open(ctx.module_path('medium'), 'rb').read()
    module = len(cubin) + 16 + cfg['module_random']
    count = max(1, cfg['prefetch_bytes'] // module)
    inputs = []
    for i in range(count):
        path = f'{w}/bin/m{i:06d}.cubin'
        with open(path, 'wb') as f:
            f.write(cubin + b'kcache-bench-%08d' % i + os.urandom(cfg['module_random']))
        inputs.append(f'sm_90a={path}')
    list_file = f'{w}/inputs.txt'
    raw = sum(os.path.getsize(p) for p in glob.glob(w + '/bin/*.cubin'))
    # kcache-pack takes its inputs as arguments: pack in slices to stay under ARG_MAX.
    for start in range(0, count, 2000):
        subprocess.run([tools.pack, '--name', f'bench{start}', '--package', f'bench{start}',
                        '--version', '1.0', '--backend', 'cuda-13.0', '--out',
                        f'{w}/root/p{start:06d}'] + inputs[start:start + 2000],
                       check=True, stdout=subprocess.DEVNULL)
    shutil.rmtree(w + '/bin')
    zst = sorted(glob.glob(w + '/root/*/sm_90a/*.zst'))
    packed = sum(os.path.getsize(p) for p in zst)
    mb = raw / 1e6
    out = {'modules': count, 'decompressed_mb': mb, 'zstd_ratio': raw / packed}
    ctx.say(f'prefetch: {count} modules, {mb:.0f} MB decompressed, zstd ratio {raw / packed:.1f}')

    with open(list_file, 'w') as f:
        f.write('\n'.join(zst))
    warm(zst)
    out['stream_s'] = timed(f'xargs cat < {list_file} | zstd -dc | xxhsum -H2', shell=True)
    sample = zst[:cfg['per_file_sample']]
    warm(sample)
    t = time.monotonic()
    for f in sample:
        subprocess.run(f'zstd -dc {f} | xxhsum -H2', shell=True, check=True, stdout=subprocess.DEVNULL)
    out['per_file_mb_s'] = (mb * len(sample) / count) / (time.monotonic() - t)
    warm(zst)
    out['verify_s'] = sum(timed([tools.pack, 'verify', d]) for d in sorted(glob.glob(w + '/root/*')))
    warm(zst)
    daemon = Daemon(tools, w, 'prefetch', ['--provider-root', w + '/root', '--max-size', '100G'])
    daemon.start()
    try:
        deadline = time.monotonic() + 3600
        while True:
            p = daemon.status()['prefetch']
            if p['done'] + p['failed'] >= count:
                break
            if time.monotonic() > deadline:
                raise BenchError(f'prefetch did not finish: {p}')
            time.sleep(0.05)
        if p['failed']:
            raise BenchError(f'{p["failed"]} modules failed to prefetch; see {daemon.log}')
        out['kcached_s'] = p['busy_s']
        out['kcached_rss_kib'] = daemon.rss_kib()
    finally:
        daemon.stop()
    shutil.rmtree(w, ignore_errors=True)
    for key in ('stream', 'verify', 'kcached'):
        out[key + '_mb_s'] = mb / out[key + '_s']
    out['verify_vs_stream'] = out['verify_mb_s'] / out['stream_mb_s']
    out['kcached_vs_stream'] = out['kcached_mb_s'] / out['stream_mb_s']
    ctx.say(f'prefetch: zstd|xxhsum stream {out["stream_mb_s"]:.0f} MB/s, per file '
            f'{out["per_file_mb_s"]:.1f} MB/s, kcache-pack verify {out["verify_mb_s"]:.0f} MB/s, '
            f'kcached prefetch+publish {out["kcached_mb_s"]:.0f} MB/s')
    return out
