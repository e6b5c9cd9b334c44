"""Concurrent-miss deduplication: N workers ask at the same instant for one module nobody
has compiled. kcache: N processes through libkcache, compiles counted by the daemon;
ccache and sccache: N `nvcc -c -cubin` processes started together on the same new source,
compiles counted by each wrapper's miss statistics."""
import subprocess
import time

from .common import run_json
from .peers import running, wrappers


def run_peer(ctx, peer, n, nonce):
    src = f'{ctx.workdir}/dedup-{peer.name}-{n}.cu'
    with open(src, 'w') as f:
        f.write(ctx.source('medium', nonce))
    before = peer.compiles()
    t = time.monotonic()
    procs = [subprocess.Popen(peer.command(src, f'{ctx.workdir}/dedup-{peer.name}-{n}-{i}.cubin'),
                              env=peer.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
             for i in range(n)]
    failed = sum(p.wait() != 0 for p in procs)
    wall = time.monotonic() - t
    if failed:
        raise RuntimeError(f'{peer.name}: {failed} of {n} compiles failed')
    return {'clients': n, 'compiles': peer.compiles() - before, 'wall_ms': wall * 1e3}


def run(ctx):
    tools, daemon, cfg = ctx.tools, ctx.daemon, ctx.cfg
    out = {'kcache': [], 'peers': {}}
    for n in cfg['dedup_clients']:
        nonce = ctx.fresh_nonce()
        before = daemon.compiles()
        r = run_json([tools.client, 'dedup', '--socket', daemon.socket, '--clients', str(n),
                      '--kind', 'medium', '--nonce', str(nonce)])
        r['compiles'] = daemon.compiles() - before
        out['kcache'].append(r)
        ctx.say(f'dedup kcache, N={n:2d}: {r["compiles"]} compile(s), wall {r["wall_ms"]:.0f} ms, '
                f'origins {r["origins"]}')
    for peer in wrappers(ctx.workdir, out['peers'], ctx.say):
        with running(peer):
            rows = []
            for n in cfg['dedup_clients']:
                rows.append(run_peer(ctx, peer, n, ctx.fresh_nonce()))
                ctx.say(f'dedup {peer.name}, N={n:2d}: {rows[-1]["compiles"]} compile(s), '
                        f'wall {rows[-1]["wall_ms"]:.0f} ms')
            out['peers'][peer.name] = rows
    return out
