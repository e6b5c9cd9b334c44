"""Hit latency and throughput through libkcache with 1–128 worker processes, against the
floors measured in the same run: the Unix-socket round trip (same sizes, N clients, one
epoll thread), a bare stat()+open() of the module file, and ccache/sccache hits of the same
module compiled by nvcc."""
from .common import median, run_json
from .peers import running, wrappers


def run(ctx):
    tools, daemon, cfg = ctx.tools, ctx.daemon, ctx.cfg
    out = {'clients': []}
    path = None
    for n in cfg['hit_clients']:
        count = max(cfg['hit_min_count'], cfg['hit_total'] // n)
        r = run_json([tools.client, 'hits', '--socket', daemon.socket, '--clients', str(n),
                      '--count', str(count), '--kind', 'small', '--nonce', '1'])
        path = r.pop('path')
        out['clients'].append(r)
        ctx.say(f'hits, {n:3d} clients: p50 {r["kcache"]["p50_us"]:7.1f} us '
                f'(floor {r["floor"]["p50_us"]:6.1f}), p99 {r["kcache"]["p99_us"]:8.1f} us '
                f'(floor {r["floor"]["p99_us"]:7.1f}), {r["kcache"]["per_sec"]:8.0f} hits/s')
    s = run_json([tools.client, 'statopen', '--path', path, '--count', str(cfg['hit_total'])])
    out['statopen'] = s['floor']
    ctx.say(f'stat()+open() of the module: p50 {s["floor"]["p50_us"]:.1f} us')

    # The same module through nvcc, cached by each wrapper: one miss, then hits.
    src = f'{ctx.workdir}/hit-small.cu'
    with open(src, 'w') as f:
        f.write(ctx.source('small', 1))
    out['peers'] = {}
    for peer in wrappers(ctx.workdir, out['peers'], ctx.say):
        with running(peer):
            peer.compile(src, f'{ctx.workdir}/hit-{peer.name}-miss.cubin')
            times = [peer.compile(src, f'{ctx.workdir}/hit-{peer.name}-{i}.cubin')
                     for i in range(cfg['peer_hits'])]
        out['peers'][peer.name] = {'hit_ms': median(times) * 1e3, 'hits_ms': [t * 1e3 for t in times]}
        ctx.say(f'{peer.name} hit of the same module: {median(times) * 1e3:.1f} ms')
    return out
