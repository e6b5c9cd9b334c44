"""Compile overhead: a kcache miss end to end (request, worker compile, verify, fsync,
publish, reply) against in-process NVRTC on the same sources, and nvcc alone, through
ccache and through sccache (their misses)."""
from .common import median, run_json
from .peers import all_peers, running


def run(ctx):
    tools, daemon, cfg = ctx.tools, ctx.daemon, ctx.cfg
    out = {}
    k = cfg['compile_count']
    for kind in ('small', 'medium'):
        row = {}
        miss = run_json([tools.client, 'misses', '--socket', daemon.socket, '--kind', kind,
                         '--count', str(k), '--warmup', '2', '--nonce', str(ctx.fresh_nonce(k + 2))])
        floor = run_json([tools.nvrtc, '--kind', kind, '--count', str(k), '--warmup', '1',
                          '--nonce', str(ctx.fresh_nonce(k + 1))])
        row['kcache_ms'] = miss['median_ms']
        row['nvrtc_ms'] = floor['median_ms']
        row['nvrtc_load_ms'] = floor['load_ms']
        row['cubin_bytes'] = floor['cubin_bytes']
        row['overhead'] = miss['median_ms'] / floor['median_ms'] - 1
        for peer in all_peers(ctx.workdir):
            why = peer.available()
            if why:
                row[peer.name + '_ms'] = None
                continue
            with running(peer):
                times = []
                for _ in range(cfg['peer_misses']):
                    src = f'{ctx.workdir}/miss-{peer.name}-{kind}.cu'
                    with open(src, 'w') as f:
                        f.write(ctx.source(kind, ctx.fresh_nonce()))
                    times.append(peer.compile(src, src + '.cubin'))
            row[peer.name + '_ms'] = median(times) * 1e3
        out[kind] = row
        ctx.say(f'compile {kind}: kcache miss {row["kcache_ms"]:.1f} ms, in-process NVRTC '
                f'{row["nvrtc_ms"]:.1f} ms (overhead {row["overhead"] * 100:+.1f}%), '
                + ', '.join(f'{p} {row[p + "_ms"]:.0f} ms' for p in ('nvcc', 'ccache', 'sccache')
                            if row.get(p + '_ms') is not None))
    return out
