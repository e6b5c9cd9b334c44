"""Scale: kcached's start-up time and resident memory with 10k, 100k and 1M index entries,
hit latency as the index grows, and a full garbage collection of 100k entries.

Caches are written by kcache-synth-cache (the daemon's own Store and Index code): N index
rows over min(N, `scale_objects`) distinct 4,000-byte objects (rows beyond that share
objects, as identical modules under different keys do). Start-up is measured twice: until
the daemon answers `status` (index loaded, serving) and until its start-up reconcile of
objects/ against the index is done. The GC run uses N distinct objects.
"""
import os
import shutil
import subprocess
import time

from .common import Daemon, run_json


def synth(ctx, directory, entries, objects):
    shutil.rmtree(directory, ignore_errors=True)
    t = time.monotonic()
    subprocess.run([ctx.tools.synth, '--cache-dir', directory, '--entries', str(entries),
                    '--objects', str(objects)], check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - t


def run(ctx):
    cfg = ctx.cfg
    out = {'startup': []}
    for n in cfg['scale_entries']:
        w = f'{ctx.workdir}/scale-{n}'
        os.makedirs(w, exist_ok=True)
        daemon = Daemon(ctx.tools, w, 'scale', ['--max-size', '1T', '--scrub-rate', '0'])
        synth(ctx, daemon.cache_dir, n, min(n, cfg['scale_objects']))
        subprocess.run(['sync'])
        answered, reconciled = daemon.start()
        try:
            row = {'entries': n, 'answered_s': answered, 'reconciled_s': reconciled,
                   'rss_mib': daemon.rss_kib() / 1024,
                   'index_mib': os.path.getsize(daemon.cache_dir + '/index.sqlite') / 2**20}
            hits = run_json([ctx.tools.client, 'hits', '--socket', daemon.socket, '--clients', '1',
                             '--count', str(cfg['hit_total']), '--kind', 'small', '--nonce', '1'])
            row['hit_p50_us'] = hits['kcache']['p50_us']
            row['hit_p99_us'] = hits['kcache']['p99_us']
            row['floor_p50_us'] = hits['floor']['p50_us']
        finally:
            daemon.stop()
        out['startup'].append(row)
        ctx.say(f'scale {n:8d} entries: serving after {answered:.2f} s, reconciled after '
                f'{reconciled:.2f} s, RSS {row["rss_mib"]:.0f} MiB, hit p50 {row["hit_p50_us"]:.1f} us '
                f'p99 {row["hit_p99_us"]:.1f} us')
        shutil.rmtree(w, ignore_errors=True)

    n = cfg['gc_entries']
    w = f'{ctx.workdir}/gc-{n}'
    os.makedirs(w, exist_ok=True)
    daemon = Daemon(ctx.tools, w, 'gc', ['--max-size', '1T', '--scrub-rate', '0'])
    synth(ctx, daemon.cache_dir, n, n)
    daemon.start()
    try:
        t = time.monotonic()
        report = daemon.ctl('gc', '--max-size', '0')
        out['gc'] = {'entries': n, 'wall_s': time.monotonic() - t, 'report': report}
    finally:
        daemon.stop()
    shutil.rmtree(w, ignore_errors=True)
    ctx.say(f'gc of {n} entries: {out["gc"]["wall_s"]:.2f} s')
    return out
